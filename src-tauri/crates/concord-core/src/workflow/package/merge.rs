//! Merging a returned rater package into the study it was written from. Every rating of the
//! package's expert is compared three ways — the base recorded at export, the package's value
//! and the study's value (value, raw value and rationale together):
//!
//! | package vs base | study vs base | outcome |
//! |---|---|---|
//! | same | any | nothing to merge |
//! | changed | same | merged: inserted, or updated with the package's revisions in the history |
//! | changed | changed to the package's value | already merged, nothing to do |
//! | changed | changed to another value | conflict: reported, the study keeps its value |
//!
//! Before any of this the package's seal is checked (see [`check_seal`]); a package that fails is
//! refused and the study is not touched.
//!
//! History rows are merged by content, so a second merge of the same package adds nothing, and
//! nothing at all is written when there is nothing to merge. Progress (first shown, completed,
//! time spent) and the expert's flags come back too.

use super::{PackageError, META_PACKAGE_ID, META_PACKAGE_RATER};
use crate::base::clock::Millis;
use crate::base::text::quoted;
use crate::files::table::display_name;
use crate::store::seal::{PackageSealRecord, SealState};
use crate::store::{
    AssignmentRecord, BaseKey, CopiedRating, CriterionKey, FlagRecord, HistoryRow, KeyedCriterion,
    NamedRater, Occasion, Passphrase, RatingContent, SignedValue, Store, StoredRating, StudyTx,
};
use crate::workflow::signoff::SignatureStatus;
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
            > 0
    }
}

/// Which package a file is, and whose: checked against the study before anything is read.
struct PackageOrigin {
    file: String,
    package_id: String,
    rater_id: i64,
    rater_name: String,
}

/// A response of the package as the study knows it.
struct StudyResponse {
    id: i64,
    conversation: String,
    source: String,
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
            detail: "its conversations, responses or rubric differ from what was issued"
                .to_string(),
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
    if !lead.keyed {
        return Ok(());
    }
    let file = file.to_string();
    if store.lead_key().is_none() {
        return Err(PackageError::LeadKeyNeeded { file });
    }
    let changed = |detail: String| PackageError::RecordChanged {
        file: file.clone(),
        id: seal.package.clone(),
        detail,
    };
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
        (Some(false), _) => Err(not_issued(
            "its issuer signature is not this study's lead key's over this study, this package, these items and this expert",
        )),
        (None, Some(_)) => Err(not_issued(
            "it carries no issuer signature, but this study signed the package it issued under that id",
        )),
        (None, None) => Ok(()),
    }
}

/// A criterion of the package as the study knows it.
struct StudyCriterion {
    id: i64,
    key: String,
}

/// What the package's expert did, read from the package and mapped onto the study's ids.
struct PackageWork {
    /// Package response id → the study's response.
    responses: HashMap<i64, StudyResponse>,
    /// Package criterion id → the study's criterion.
    criteria: HashMap<i64, StudyCriterion>,
    /// The expert's ratings in the package, first occasion then retest, by package id.
    ratings: Vec<StoredRating>,
    /// Earlier versions of the package's ratings, by package rating id.
    history: HashMap<i64, Vec<HistoryRow>>,
    assignments: Vec<AssignmentRecord>,
    flags: Vec<FlagRecord>,
    /// The expert's signatures made in the package, each with its standing there and the
    /// ratings it covers (package ids).
    signatures: Vec<(SignatureStatus, Vec<SignedValue>)>,
}

impl PackageOrigin {
    fn check(store: &Store, pkg: &Store, file: String) -> Result<PackageOrigin, PackageError> {
        let package_id = pkg
            .meta(META_PACKAGE_ID)?
            .ok_or_else(|| PackageError::NotAPackage { file: file.clone() })?;
        let NamedRater {
            id: rater_id,
            name: rater_name,
        } = store
            .package_rater(&package_id)?
            .ok_or_else(|| PackageError::UnknownPackage {
                file: file.clone(),
                id: package_id.clone(),
            })?;
        let pkg_rater_name = pkg.meta(META_PACKAGE_RATER)?.unwrap_or_default();
        if pkg_rater_name != rater_name {
            return Err(PackageError::WrongRater {
                file,
                id: package_id,
                expected: rater_name,
                found: pkg_rater_name,
            });
        }
        Ok(PackageOrigin {
            file,
            package_id,
            rater_id,
            rater_name,
        })
    }

    fn inconsistent(&self, detail: String) -> PackageError {
        PackageError::Inconsistent {
            file: self.file.clone(),
            detail,
        }
    }
}

impl PackageWork {
    fn read(store: &Store, pkg: &Store, origin: &PackageOrigin) -> Result<Self, PackageError> {
        let pkg_rater = pkg
            .rater_named(&origin.rater_name)?
            .filter(|r| r.is_expert())
            .ok_or_else(|| {
                origin.inconsistent(format!(
                    "the package has no expert {}",
                    quoted(&origin.rater_name)
                ))
            })?
            .id;
        let responses = map_responses(store, pkg, origin)?;
        let criteria = map_criteria(store, pkg, origin)?;
        let ratings: Vec<StoredRating> = pkg
            .ratings_of_rater(pkg_rater)?
            .into_iter()
            .filter(|r| matches!(r.occasion, Occasion::First | Occasion::Retest))
            .collect();
        for r in &ratings {
            if !responses.contains_key(&r.response_id) || !criteria.contains_key(&r.criterion_id) {
                return Err(origin.inconsistent(format!(
                    "a rating refers to response {} / criterion {} that the package does not hold",
                    r.response_id, r.criterion_id
                )));
            }
        }
        let signatures = crate::workflow::signoff::signatures(pkg)
            .map_err(|e| origin.inconsistent(format!("its signatures cannot be read: {e}")))?
            .into_iter()
            .filter(|s| s.signature.rater_id == pkg_rater)
            .map(|s| {
                let values = pkg.signed_values(s.signature.id)?;
                Ok((s, values))
            })
            .collect::<Result<_, crate::store::StoreError>>()?;
        Ok(PackageWork {
            responses,
            criteria,
            ratings,
            history: pkg.history_of_rater(pkg_rater)?,
            assignments: pkg.assignments_of_rater(pkg_rater)?,
            flags: pkg.flags_of_rater(pkg_rater)?,
            signatures,
        })
    }
}

/// Package response id → study response, through conversation external ids and source codes.
fn map_responses(
    store: &Store,
    pkg: &Store,
    origin: &PackageOrigin,
) -> Result<HashMap<i64, StudyResponse>, PackageError> {
    let codes = store.package_sources(&origin.package_id)?;
    let mut out = HashMap::new();
    for label in pkg.response_labels()? {
        let code = label.source;
        let (source_id, source_key) = codes
            .get(&code)
            .cloned()
            .ok_or_else(|| origin.inconsistent(format!("unknown source code {}", quoted(&code))))?;
        let id = store
            .response_of_source(&label.conversation, source_id)?
            .ok_or_else(|| {
                origin.inconsistent(format!(
                    "conversation {} (source {code}) is not in this study",
                    quoted(&label.conversation)
                ))
            })?;
        out.insert(
            label.id,
            StudyResponse {
                id,
                conversation: label.conversation,
                source: source_key,
            },
        );
    }
    Ok(out)
}

/// Package criterion id → study criterion, by (rubric key, criterion key).
fn map_criteria(
    store: &Store,
    pkg: &Store,
    origin: &PackageOrigin,
) -> Result<HashMap<i64, StudyCriterion>, PackageError> {
    let main: HashMap<CriterionKey, i64> = store
        .read()
        .criterion_keys()?
        .into_iter()
        .map(|c| (c.key, c.id))
        .collect();
    let mut out = HashMap::new();
    for KeyedCriterion { id, key } in pkg.read().criterion_keys()? {
        let main_id = *main.get(&key).ok_or_else(|| {
            origin.inconsistent(format!(
                "criterion {}/{} is not in this study",
                key.rubric, key.criterion
            ))
        })?;
        out.insert(
            id,
            StudyCriterion {
                id: main_id,
                key: key.criterion,
            },
        );
    }
    Ok(out)
}

/// Merge the package at `path`, opened with `passphrase`, into `store` (see the module
/// documentation).
pub fn merge_package(
    store: &mut Store,
    path: &Path,
    passphrase: &Passphrase,
) -> Result<MergeReport, PackageError> {
    let file = display_name(path);
    let pkg = Store::open_with(path, store.clock(), Some(passphrase))?;
    let seal = check_seal(store, &pkg, &file)?;
    let origin = PackageOrigin::check(store, &pkg, file)?;
    let work = PackageWork::read(store, &pkg, &origin)?;
    drop(pkg);

    let mut report = MergeReport {
        package_id: origin.package_id.clone(),
        rater: origin.rater_name.clone(),
        ..MergeReport::default()
    };
    store.write(|tx| -> Result<(), PackageError> {
        let base = tx.package_base(&origin.package_id)?;
        for r in &work.ratings {
            merge_rating(tx, &origin, &work, &base, r, &mut report)?;
        }
        merge_progress(tx, &origin, &work, &mut report)?;
        merge_flags(tx, &origin, &work, &mut report)?;
        merge_signatures(tx, &origin, &work, &mut report)?;
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
                    "conflicts": report.conflicts.len(),
                }),
            )?;
        }
        Ok(())
    })?;
    Ok(report)
}

/// Compare one package rating with the base and the study's value, and merge, skip or report
/// it (see the module documentation's table).
fn merge_rating(
    tx: &mut StudyTx<'_>,
    origin: &PackageOrigin,
    work: &PackageWork,
    base: &HashMap<BaseKey, RatingContent>,
    r: &StoredRating,
    report: &mut MergeReport,
) -> Result<(), PackageError> {
    let response = &work.responses[&r.response_id];
    let criterion = &work.criteria[&r.criterion_id];
    let content = r.content();
    let b = base.get(&(r.occasion, response.id, criterion.id));
    if b == Some(&content) {
        report.unchanged += 1;
        return Ok(());
    }
    let main = tx
        .read()
        .stored_rating(origin.rater_id, response.id, criterion.id, r.occasion)?;
    let main_content = main.as_ref().map(StoredRating::content);
    if main_content.as_ref() == Some(&content) {
        report.unchanged += 1;
        return Ok(());
    }
    if main_content.as_ref() != b {
        report.conflicts.push(MergeConflict {
            conversation: response.conversation.clone(),
            source: response.source.clone(),
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
        }
    }
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
    for (status, values) in &work.signatures {
        let s = &status.signature;
        let scope = format!("package {}: {}", origin.package_id, s.scope);
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
