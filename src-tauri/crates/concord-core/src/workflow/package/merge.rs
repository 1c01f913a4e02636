//! Merging a returned rater package into the study it was written from. Every rating of the
//! package's expert is compared three ways — the base, the package's value and the study's value
//! (value, raw value and rationale together). The base is the value the study and this package
//! last agreed on: the value at issue, or the one an earlier return of the same package merged
//! (kept in `package_merged`), so a second return revises what the first brought:
//!
//! | package vs base | study vs base | outcome |
//! |---|---|---|
//! | same | any | nothing to merge |
//! | changed | same | merged: inserted, or updated with the package's revisions in the history |
//! | changed | changed to the package's value | already merged, nothing to do |
//! | changed | changed to another value | conflict: reported, the study keeps its value |
//!
//! A merged value that revises one an earlier return merged is counted in
//! `revised_after_return`; one that goes back to the value at issue in `changed_back` (both are
//! also `updated` or `retest_updated`).
//!
//! Before any of this the package's seal is checked (see [`check_seal`]) and every value in it is
//! validated against what the study knows (see `returned`); a package that fails either is
//! refused and the study is not touched.
//!
//! The expert's verdicts on pairs merge by the same table, per pair and criterion against
//! `package_pair_base` / `package_pair_merged`, with their own counts and conflicts.
//!
//! The expert's evidence spans merge by the same table, each named by its item, code and bounds
//! (see `spans`), with origin `package`.
//!
//! History rows are merged by content, so a second merge of the same package adds nothing, and
//! nothing at all is written when there is nothing to merge. Progress (first shown, completed,
//! time spent) and the expert's flags come back too.

use super::returned::{merged_scope, PackageOrigin, PackageWork};
use super::spans::{PackageSpans, SpanMergeCounts};
use super::{PackageError, META_PACKAGE_ID, META_PACKAGE_RATER};
use crate::base::clock::Millis;
use crate::files::table::display_name;
use crate::store::seal::{differing_tables, PackageSealRecord, SealState};
use crate::store::{
    BaseKey, CopiedRating, FlagRecord, HistoryRow, Occasion, PairBaseKey, PairContent,
    PairFlagRecord, PairHistoryRow, PairVerdictFull, PairWorkRecord, Passphrase, RatingContent,
    SignedValue, Store, StoreError, StoredRating, StudyTx, Winner,
};
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;

/// A rating changed both in the package and in the study since the export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MergeConflict {
    /// The conversation's external id.
    pub conversation: String,
    /// The response's source key (the study's name, not the package's code).
    pub source: String,
    /// The reply's turn in a transcript, where one source answers at several turns (`None`: a
    /// single-turn answer or a session item).
    pub turn: Option<i64>,
    pub criterion: String,
    pub occasion: Occasion,
    pub base: Option<i64>,
    /// The value the study keeps.
    pub study: Option<i64>,
    /// The package's value, not merged.
    pub package: Option<i64>,
    pub study_rationale: Option<String>,
    pub package_rationale: Option<String>,
}

/// A verdict on a pair changed both in the package and in the study since the export (winners
/// in the pair's own terms: `left` is the answer of source `left`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairMergeConflict {
    pub conversation: String,
    /// The study's source keys of the pair's left and right answers.
    pub left: String,
    pub right: String,
    pub criterion: String,
    pub base: Option<Winner>,
    /// The verdict the study keeps.
    pub study: Option<Winner>,
    /// The package's verdict, not merged.
    pub package: Option<Winner>,
}

/// What [`merge_package`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MergeReport {
    pub package_id: String,
    pub rater: String,
    pub inserted: usize,
    pub updated: usize,
    pub unchanged: usize,
    pub history_added: usize,
    pub retest_inserted: usize,
    pub retest_updated: usize,
    pub progress_updated: usize,
    pub flags_added: usize,
    /// Signatures the expert made in the package, recorded in the study.
    pub signatures_added: usize,
    pub conflicts: Vec<MergeConflict>,
    /// Of the merged revisions (`updated`, `retest_updated`), those that revise a value an
    /// earlier return of this package merged.
    pub revised_after_return: usize,
    /// Of the merged revisions, those that change a rating back to its value at issue (value and
    /// raw value; the rationale may differ).
    pub changed_back: usize,
    /// Verdicts on pairs new to the study, and changed in it.
    pub pairs_inserted: usize,
    pub pairs_updated: usize,
    /// Pairs whose progress (first shown, finished, time, rationale) came back.
    pub pair_progress_updated: usize,
    pub pair_flags_added: usize,
    pub pair_conflicts: Vec<PairMergeConflict>,
    /// The expert's evidence spans: added, changed, removed, already present, in conflict.
    pub spans: SpanMergeCounts,
}

impl MergeReport {
    /// Whether the merge wrote anything.
    pub fn changed(&self) -> bool {
        self.inserted
            + self.updated
            + self.history_added
            + self.retest_inserted
            + self.retest_updated
            + self.progress_updated
            + self.flags_added
            + self.signatures_added
            + self.pairs_inserted
            + self.pairs_updated
            + self.pair_progress_updated
            + self.pair_flags_added
            > 0
            || self.spans.wrote()
    }
}

/// Check a returned package's seal against what this study issued and merged, in this order:
/// issued by this study (its id and the package id), its items as issued, its state as its seal
/// vouches (before any save in Concord: as issued), and not older than a return already merged.
pub fn check_seal(store: &Store, pkg: &Store, file: &str) -> Result<SealState, PackageError> {
    let file = file.to_string();
    let seal = pkg
        .package_seal()?
        .ok_or_else(|| PackageError::NotSealed { file: file.clone() })?;
    let not_issued = |detail: String| PackageError::NotIssuedHere {
        file: file.clone(),
        detail,
    };
    let ours = store.study_id()?;
    if ours.as_deref() != Some(seal.study.as_str()) {
        return Err(not_issued(format!(
            "it names study {} as its issuer",
            seal.study
        )));
    }
    let record = store
        .package_seal_record(&seal.package)?
        .ok_or_else(|| not_issued(format!("this study never issued package {}", seal.package)))?;
    // The study's record of its packages (issue time, digests, returns merged) is sealed by the
    // audit chain: edited outside Concord — an issue time moved back to allow more time on
    // task — it no longer matches, and nothing it says is trusted.
    if !store.table_matches_seal("package")? {
        return Err(PackageError::RecordChanged {
            file,
            id: seal.package.clone(),
            detail: "the study's record of its packages no longer matches the audit chain's seal (an issue time, digest or return was edited outside Concord)".to_string(),
        });
    }
    let (Some(issue), Some(issue_state)) = (record.issue.as_deref(), record.issue_state.as_deref())
    else {
        return Err(not_issued(format!(
            "package {} was issued without a seal",
            seal.package
        )));
    };
    check_lead_signatures(store, &seal, &record, &file)?;
    if pkg.meta(META_PACKAGE_ID)?.as_deref() != Some(seal.package.as_str()) {
        return Err(PackageError::AlteredAfterIssue {
            file,
            detail: "its package id no longer matches its seal".to_string(),
        });
    }
    if seal.issue_now != issue || !seal.issue_matches {
        return Err(PackageError::AlteredAfterIssue {
            file,
            detail: issue_changed(store, &seal, issue)?,
        });
    }
    if seal.seq == 0 {
        if !seal.mac_valid || !seal.state_matches || seal.state != issue_state {
            return Err(PackageError::AlteredAfterIssue {
                file,
                detail: "its ratings or progress were changed before any save in Concord"
                    .to_string(),
            });
        }
    } else if !seal.mac_valid || !seal.state_matches {
        return Err(PackageError::AlteredAfterReturn {
            file,
            seq: seal.seq,
        });
    }
    if let Some(merged) = record.merged_seq {
        if seal.seq < merged {
            let rater = pkg.meta(META_PACKAGE_RATER)?.unwrap_or_default();
            return Err(PackageError::Replayed {
                file,
                id: seal.package.clone(),
                rater,
                seq: seal.seq,
                merged,
            });
        }
        if seal.seq == merged && record.merged_state.as_deref() != Some(seal.state.as_str()) {
            return Err(PackageError::Forked {
                file,
                id: seal.package.clone(),
                seq: seal.seq,
            });
        }
    }
    Ok(seal)
}

/// What differs in a package whose items no longer digest to what was issued: the tables whose
/// rows changed, named from the digests the study recorded at issue; in general terms for a
/// package issued before those were recorded, or when only the seal's own record was changed.
fn issue_changed(store: &Store, seal: &SealState, issue: &str) -> Result<String, PackageError> {
    if seal.issue_now == issue {
        return Ok("the seal's record of what was issued was changed".to_string());
    }
    Ok(changed_tables(store, seal)?.unwrap_or_else(|| {
        "its conversations, turns, responses or rubric differ from what was issued".to_string()
    }))
}

/// "the rows of table … differ from what was issued": the issued tables of the package whose
/// rows differ from the digests this study recorded when it issued a package under that id;
/// `None` when it recorded none or none differs.
fn changed_tables(store: &Store, seal: &SealState) -> Result<Option<String>, PackageError> {
    let tables = store
        .issued_tables(&seal.package)?
        .map(|at_issue| differing_tables(&at_issue, &seal.issue_tables_now))
        .unwrap_or_default();
    Ok(match tables.as_slice() {
        [] => None,
        [table] => Some(format!(
            "the rows of table {table} differ from what was issued"
        )),
        _ => Some(format!(
            "the rows of tables {} differ from what was issued",
            tables.join(", ")
        )),
    })
}

/// The lead key's part of the check, in a study that has one: its key is here (a merge re-signs
/// the record), the record of the package's returns carries the lead's signature and agrees with
/// the returns the audit chain records, and the package carries the lead's signature over what
/// was issued — this study, this package, these items, this expert — when it was issued signed.
fn check_lead_signatures(
    store: &Store,
    seal: &SealState,
    record: &PackageSealRecord,
    file: &str,
) -> Result<(), PackageError> {
    let lead = store.lead_signatures(seal, record)?;
    let file = file.to_string();
    if !lead.keyed {
        // The study names no key; where this machine holds one for it, the key was removed.
        if let Some(reason) = store.key_records_refused() {
            return Err(PackageError::KeyRecordsChanged { file, reason });
        }
        return Ok(());
    }
    if store.lead_key().is_none() {
        return Err(PackageError::LeadKeyNeeded { file });
    }
    let changed = |detail: String| PackageError::RecordChanged {
        file: file.clone(),
        id: seal.package.clone(),
        detail,
    };
    if let Some(entry) = lead.unanchored_return {
        return Err(changed(format!(
            "the audit chain records a return of it at entry {entry}, which no checkpoint signed by the lead key anchors: it was written outside Concord"
        )));
    }
    if !lead.record_signed {
        return Err(changed(
            "it no longer carries the lead key's signature over its issue and returns merged"
                .to_string(),
        ));
    }
    if let Some(chain) = lead.chain_seq {
        if record.merged_seq.is_none_or(|m| m < chain) {
            return Err(changed(format!(
                "the audit chain records return {chain} as merged, the record {}",
                record
                    .merged_seq
                    .map_or("none".to_string(), |m| format!("only return {m}"))
            )));
        }
    }
    let not_issued = |detail: &str| PackageError::NotIssuedHere {
        file: file.clone(),
        detail: detail.to_string(),
    };
    match (lead.issuer, &record.issuer_signature) {
        (Some(true), _) => Ok(()),
        (Some(false), _) => {
            let why = "its issuer signature is not this study's lead key's over this study, this package, these items and this expert";
            // Items edited after issue break the signature too: say which.
            Err(match changed_tables(store, seal)? {
                Some(tables) => not_issued(&format!("{why}: {tables}")),
                None => not_issued(why),
            })
        }
        (None, Some(_)) => Err(not_issued(
            "it carries no issuer signature, but this study signed the package it issued under that id",
        )),
        (None, None) => Ok(()),
    }
}

/// A raw SQLite error met while reading the package `file` (a page that does not decode or
/// authenticate) as the package's damage, named; any other error as it is.
fn damage_named(e: PackageError, file: &str) -> PackageError {
    match e {
        PackageError::Store(e) if e.is_damage() => PackageError::Damaged {
            file: file.to_string(),
            detail: match e {
                StoreError::Sqlite(e) => e.to_string(),
                _ => "a page is missing or fails its authentication".to_string(),
            },
        },
        other => other,
    }
}

/// Merge the package at `path`, opened with `passphrase`, into `store` (see the module
/// documentation).
pub fn merge_package(
    store: &mut Store,
    path: &Path,
    passphrase: &Passphrase,
) -> Result<MergeReport, PackageError> {
    let file = display_name(path);
    let damaged = |e: PackageError| damage_named(e, &file);
    let pkg =
        Store::open_with(path, store.clock(), Some(passphrase)).map_err(|e| damaged(e.into()))?;
    // Every page is checked before a row is read: a damaged page must not pass for a value.
    let problems = pkg.page_problems().map_err(|e| damaged(e.into()))?;
    if let Some(first) = problems.first() {
        return Err(PackageError::Damaged {
            file,
            detail: first.clone(),
        });
    }
    let seal = check_seal(store, &pkg, &file).map_err(damaged)?;
    let origin = PackageOrigin::check(store, &pkg, file.clone()).map_err(damaged)?;
    let work = PackageWork::read(store, &pkg, &origin).map_err(damaged)?;
    let spans = PackageSpans::read(store, &pkg, work.pkg_rater, &origin, &work.responses)
        .map_err(damaged)?;
    drop(pkg);
    work.validate(store, &origin)?;

    let mut report = MergeReport {
        package_id: origin.package_id.clone(),
        rater: origin.rater_name.clone(),
        ..MergeReport::default()
    };
    store.write(|tx| -> Result<(), PackageError> {
        let base = Bases {
            issued: tx.read().package_base(&origin.package_id)?,
            merged: tx.read().package_merged(&origin.package_id)?,
        };
        for r in &work.ratings {
            merge_rating(tx, &origin, &work, &base, r, &mut report)?;
        }
        merge_progress(tx, &origin, &work, &mut report)?;
        merge_flags(tx, &origin, &work, &mut report)?;
        merge_signatures(tx, &origin, &work, &mut report)?;
        let pair_bases = PairBases {
            issued: tx.read().package_pair_base(&origin.package_id)?,
            merged: tx.read().package_pair_merged(&origin.package_id)?,
        };
        for v in &work.pair_verdicts {
            merge_pair_verdict(tx, &origin, &work, &pair_bases, v, &mut report)?;
        }
        merge_pair_progress(tx, &origin, &work, &mut report)?;
        merge_pair_flags(tx, &origin, &work, &mut report)?;
        report.spans = spans.merge(tx, &origin, &work.responses)?;
        if report.changed() {
            tx.mark_package_merged(&origin.package_id)?;
        }
        tx.record_package_return(&origin.package_id, seal.seq, &seal.state)?;
        if report.changed() {
            tx.audit(
                "lead",
                "package_merged",
                &serde_json::json!({
                    "package": origin.package_id,
                    "rater": origin.rater_name,
                    "inserted": report.inserted,
                    "updated": report.updated,
                    "revised_after_return": report.revised_after_return,
                    "changed_back": report.changed_back,
                    "conflicts": report.conflicts.len(),
                    "pairs_inserted": report.pairs_inserted,
                    "pairs_updated": report.pairs_updated,
                    "pair_conflicts": report.pair_conflicts.len(),
                    "spans_added": report.spans.added,
                    "spans_changed": report.spans.changed,
                    "spans_removed": report.spans.removed,
                    "span_conflicts": report.spans.conflicts.len(),
                }),
            )?;
        }
        Ok(())
    })?;
    Ok(report)
}

/// The bases of a package's ratings: the values at issue and those earlier returns merged.
struct Bases {
    issued: HashMap<BaseKey, RatingContent>,
    merged: HashMap<BaseKey, RatingContent>,
}

/// Compare one package rating with its base and the study's value, and merge, skip or report
/// it (see the module documentation's table).
fn merge_rating(
    tx: &mut StudyTx<'_>,
    origin: &PackageOrigin,
    work: &PackageWork,
    base: &Bases,
    r: &StoredRating,
    report: &mut MergeReport,
) -> Result<(), PackageError> {
    let response = &work.responses[&r.response_id];
    let criterion = &work.criteria[&r.criterion_id];
    let content = r.content();
    let key: BaseKey = (r.occasion, response.id, criterion.id);
    let issued = base.issued.get(&key);
    let earlier = base.merged.get(&key);
    let b = earlier.or(issued);
    if b == Some(&content) {
        report.unchanged += 1;
        return Ok(());
    }
    let main = tx
        .read()
        .stored_rating(origin.rater_id, response.id, criterion.id, r.occasion)?;
    let main_content = main.as_ref().map(StoredRating::content);
    if main_content.as_ref() == Some(&content) {
        // Already the study's value: the package and the study agree on it from now on.
        tx.set_package_merged(&origin.package_id, key, &content)?;
        report.unchanged += 1;
        return Ok(());
    }
    if main_content.as_ref() != b {
        report.conflicts.push(MergeConflict {
            conversation: response.conversation.clone(),
            source: response.source.clone(),
            turn: response.turn,
            criterion: criterion.key.clone(),
            occasion: r.occasion,
            base: b.and_then(|v| v.value),
            study: main_content.as_ref().and_then(|v| v.value),
            package: content.value,
            study_rationale: main_content.and_then(|v| v.rationale),
            package_rationale: content.rationale.clone(),
        });
        return Ok(());
    }
    let history = work.history.get(&r.id);
    let retest = r.occasion == Occasion::Retest;
    match main {
        None => {
            let id = tx.copy_rating(&CopiedRating {
                rater_id: origin.rater_id,
                response_id: response.id,
                criterion_id: criterion.id,
                occasion: r.occasion,
                content: &content,
                origin: &r.origin,
                created_at: r.created_at,
                updated_at: r.updated_at,
            })?;
            report.history_added += add_history(tx, id, history)?;
            if retest {
                report.retest_inserted += 1;
            } else {
                report.inserted += 1;
            }
        }
        Some(m) => {
            report.history_added += add_history(tx, m.id, history)?;
            // The study's current value must stay in the history even if the package's
            // history does not carry it.
            if tx.keep_current_in_history(&m, r.updated_at.max(m.updated_at))? {
                report.history_added += 1;
            }
            tx.revise_rating(&m, &content, &r.origin, r.updated_at)?;
            if retest {
                report.retest_updated += 1;
            } else {
                report.updated += 1;
            }
            if earlier.is_some() {
                report.revised_after_return += 1;
            }
            // Back to the value it had at issue (the rationale may say why it went back).
            if issued
                .is_some_and(|i| (&i.value, &i.raw_value) == (&content.value, &content.raw_value))
            {
                report.changed_back += 1;
            }
        }
    }
    tx.set_package_merged(&origin.package_id, key, &content)?;
    Ok(())
}

/// Insert the package's history rows of one rating that the study does not have yet.
fn add_history(
    tx: &mut StudyTx<'_>,
    rating_id: i64,
    rows: Option<&Vec<HistoryRow>>,
) -> Result<usize, PackageError> {
    let mut added = 0;
    for h in rows.into_iter().flatten() {
        if tx.merge_history_row(rating_id, h)? {
            added += 1;
        }
    }
    Ok(added)
}

/// Progress: earliest first showing, any completion, the longest time spent.
fn merge_progress(
    tx: &mut StudyTx<'_>,
    origin: &PackageOrigin,
    work: &PackageWork,
    report: &mut MergeReport,
) -> Result<(), PackageError> {
    for a in &work.assignments {
        let Some(response) = work.responses.get(&a.response_id) else {
            continue;
        };
        let Some(m) = tx.assignment_for(origin.rater_id, response.id, a.purpose)? else {
            continue;
        };
        let shown = earliest(m.first_shown_at, a.first_shown_at);
        let completed = m.completed_at.or(a.completed_at);
        let seconds = m.seconds_spent.max(a.seconds_spent);
        if (shown, completed) != (m.first_shown_at, m.completed_at) || seconds > m.seconds_spent {
            tx.set_item_progress(m.id, shown, completed, seconds)?;
            report.progress_updated += 1;
        }
    }
    Ok(())
}

fn earliest(a: Option<Millis>, b: Option<Millis>) -> Option<Millis> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The expert's flags the study does not have yet.
/// Signatures travel with the ratings: each is recorded against the study's ratings with the hash
/// of the values the expert signed, so the study shows whether it still holds them. One the
/// package itself no longer matched keeps the package's hash (and so shows as changed after
/// signature here too).
fn merge_signatures(
    tx: &mut StudyTx<'_>,
    origin: &PackageOrigin,
    work: &PackageWork,
    report: &mut MergeReport,
) -> Result<(), PackageError> {
    for sig in &work.signatures {
        let (status, values) = (&sig.status, &sig.values);
        let s = &status.signature;
        let scope = merged_scope(&origin.package_id, &s.scope);
        if tx.has_signature(origin.rater_id, s.signed_at, &scope)? {
            continue;
        }
        let mut mapped = Vec::with_capacity(values.len());
        for v in values {
            let (Some(response), Some(criterion)) = (
                work.responses.get(&v.response_id),
                work.criteria.get(&v.criterion_id),
            ) else {
                continue;
            };
            let Some(rating_id) = tx.rating_id(origin.rater_id, response.id, criterion.id)? else {
                continue;
            };
            mapped.push(SignedValue {
                rating_id,
                response_id: response.id,
                criterion_id: criterion.id,
                value: v.value,
                raw_value: v.raw_value.clone(),
                rationale: v.rationale.clone(),
            });
        }
        mapped.sort_by_key(|v| (v.response_id, v.criterion_id));
        let sha = if status.matches {
            crate::workflow::signoff::values_sha256(&mapped)
        } else {
            s.ratings_sha256.clone()
        };
        let id = tx.add_signature_at(
            origin.rater_id,
            &s.signer,
            &s.meaning,
            &scope,
            s.signed_at,
            s.ratings,
            &mapped,
            &sha,
            // The package's proof covers the signature as made there (its scope and hash);
            // the audit entry below records both, so it can be checked again from the chain.
            sig.proof.as_deref(),
        )?;
        tx.audit(
            &origin.rater_name,
            "signoff.merge",
            &serde_json::json!({
                "rater_id": origin.rater_id,
                "signature": id,
                "package": origin.package_id,
                "signer": s.signer,
                "meaning": s.meaning,
                "signed_at": s.signed_at,
                "ratings": s.ratings,
                "package_ratings_sha256": s.ratings_sha256,
                "ratings_sha256": sha,
                "package_scope": s.scope,
                "proof": sig.proof,
                "matched_in_package": status.matches,
            }),
        )?;
        report.signatures_added += 1;
    }
    Ok(())
}

fn merge_flags(
    tx: &mut StudyTx<'_>,
    origin: &PackageOrigin,
    work: &PackageWork,
    report: &mut MergeReport,
) -> Result<(), PackageError> {
    for f in &work.flags {
        let Some(response) = work.responses.get(&f.response_id) else {
            continue;
        };
        let flag = FlagRecord {
            response_id: response.id,
            ..f.clone()
        };
        if !tx.has_flag(origin.rater_id, &flag)? {
            tx.copy_flag(origin.rater_id, &flag)?;
            report.flags_added += 1;
        }
    }
    Ok(())
}

/// The bases of a package's pair verdicts: at issue, and as earlier returns merged them.
struct PairBases {
    issued: HashMap<PairBaseKey, PairContent>,
    merged: HashMap<PairBaseKey, PairContent>,
}

/// Compare one of the package's pair verdicts with its base and the study's verdict, and
/// merge, skip or report it (the module documentation's table).
fn merge_pair_verdict(
    tx: &mut StudyTx<'_>,
    origin: &PackageOrigin,
    work: &PackageWork,
    base: &PairBases,
    v: &PairVerdictFull,
    report: &mut MergeReport,
) -> Result<(), PackageError> {
    // Validated: every verdict maps onto the study's pair and criterion.
    let Some((key, content)) = work.study_verdict(v) else {
        return Ok(());
    };
    let pair = &work.pairs[&v.pair_id];
    let left_first = v.left_first != pair.swapped;
    let b = base.merged.get(&key).or(base.issued.get(&key));
    if b == Some(&content) {
        return Ok(());
    }
    let main = tx
        .read()
        .pair_verdict(origin.rater_id, key.0, key.1, left_first)?;
    let main_content = main.as_ref().map(|m| m.content.clone());
    if main_content.as_ref() == Some(&content) {
        tx.set_package_pair_merged(&origin.package_id, key, &content)?;
        return Ok(());
    }
    if main_content.as_ref() != b {
        report.pair_conflicts.push(PairMergeConflict {
            conversation: pair.conversation.clone(),
            left: pair.left.clone(),
            right: pair.right.clone(),
            criterion: work.criteria[&v.criterion_id].key.clone(),
            base: b.and_then(|c| c.winner),
            study: main_content.and_then(|c| c.winner),
            package: content.winner,
        });
        return Ok(());
    }
    let history = work.pair_history.get(&v.id);
    let id = match main {
        None => {
            let id = tx.copy_pair_verdict(&PairVerdictFull {
                rater_id: origin.rater_id,
                pair_id: key.0,
                criterion_id: key.1,
                left_first,
                content: content.clone(),
                ..v.clone()
            })?;
            report.pairs_inserted += 1;
            id
        }
        Some(m) => {
            tx.revise_pair_verdict(m.id, &content, &v.origin, v.updated_at.max(m.updated_at))?;
            report.pairs_updated += 1;
            m.id
        }
    };
    for h in history.into_iter().flatten() {
        let row = PairHistoryRow {
            content: super::swap_content(&h.content, pair.swapped),
            ..h.clone()
        };
        if tx.merge_pair_history_row(id, &row)? {
            report.history_added += 1;
        }
    }
    tx.set_package_pair_merged(&origin.package_id, key, &content)?;
    Ok(())
}

/// The pairs' progress: earliest first showing, any finish, the longest time, and the
/// package's rationale where it has one.
fn merge_pair_progress(
    tx: &mut StudyTx<'_>,
    origin: &PackageOrigin,
    work: &PackageWork,
    report: &mut MergeReport,
) -> Result<(), PackageError> {
    for w in &work.pair_work {
        let Some(pair) = work.pairs.get(&w.pair_id) else {
            continue;
        };
        let Some(m): Option<PairWorkRecord> = tx.read().pair_work(origin.rater_id, pair.id)? else {
            continue;
        };
        let shown = earliest(m.first_shown_at, w.first_shown_at);
        let completed = m.completed_at.or(w.completed_at);
        let seconds = m.seconds_spent.max(w.seconds_spent);
        let rationale = w.rationale.clone().or(m.rationale.clone());
        if (shown, completed, &rationale) != (m.first_shown_at, m.completed_at, &m.rationale)
            || seconds > m.seconds_spent
        {
            tx.set_pair_progress(m.id, shown, completed, seconds, rationale.as_deref())?;
            report.pair_progress_updated += 1;
        }
    }
    Ok(())
}

/// The expert's pair flags the study does not hold yet.
fn merge_pair_flags(
    tx: &mut StudyTx<'_>,
    origin: &PackageOrigin,
    work: &PackageWork,
    report: &mut MergeReport,
) -> Result<(), PackageError> {
    let held: std::collections::HashSet<PairFlagRecord> = tx
        .read()
        .pair_flags_of_rater(origin.rater_id)?
        .into_iter()
        .collect();
    for f in &work.pair_flags {
        let Some(pair) = work.pairs.get(&f.pair_id) else {
            continue;
        };
        let flag = PairFlagRecord {
            pair_id: pair.id,
            ..f.clone()
        };
        if !held.contains(&flag) {
            tx.copy_pair_flag(origin.rater_id, &flag)?;
            report.pair_flags_added += 1;
        }
    }
    Ok(())
}
