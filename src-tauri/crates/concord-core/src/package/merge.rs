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

use super::{criterion_keys, HistoryRow, PackageError, META_PACKAGE_ID, META_PACKAGE_RATER};
use crate::clock::Millis;
use crate::import::table::display_name;
use crate::store::seal::SealState;
use crate::store::{Passphrase, SignedValue, Store};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;

/// Which rating of an item: the first, or the blind test–retest repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Occasion {
    First,
    Retest,
}

impl Occasion {
    fn as_str(self) -> &'static str {
        match self {
            Occasion::First => "first",
            Occasion::Retest => "retest",
        }
    }
    fn table(self) -> &'static str {
        match self {
            Occasion::First => "rating",
            Occasion::Retest => "retest_rating",
        }
    }
}

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

type Val = (Option<i64>, Option<String>, Option<String>);

struct PkgRating {
    id: i64,
    response: i64,
    criterion: i64,
    val: Val,
    origin: String,
    created_at: Millis,
    updated_at: Millis,
}

struct MainRating {
    id: i64,
    val: Val,
    updated_at: Millis,
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
    let package_id = pkg
        .meta(META_PACKAGE_ID)?
        .ok_or_else(|| PackageError::NotAPackage { file: file.clone() })?;
    let known: Option<(i64, String)> = store
        .conn()
        .query_row(
            "SELECT p.rater_id, r.name FROM package p JOIN rater r ON r.id = p.rater_id
             WHERE p.id = ?1",
            [&package_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let (rater_id, rater_name) = known.ok_or_else(|| PackageError::UnknownPackage {
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
    let inconsistent = |detail: String| PackageError::Inconsistent {
        file: file.clone(),
        detail,
    };
    let pc = pkg.conn();
    let pkg_rater: i64 = pc
        .query_row(
            "SELECT id FROM rater WHERE name = ?1 AND kind = 'expert'",
            [&rater_name],
            |r| r.get(0),
        )
        .optional()?
        .ok_or_else(|| inconsistent(format!("the package has no expert {rater_name:?}")))?;

    // Package response id → study response id, through conversation external ids and codes.
    let codes: HashMap<String, (i64, String)> = store
        .conn()
        .prepare(
            "SELECT ps.code, ps.source_id, s.key FROM package_source ps
             JOIN source s ON s.id = ps.source_id WHERE ps.package_id = ?1",
        )?
        .query_map([&package_id], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
        .collect::<Result<_, _>>()?;
    let mut responses: HashMap<i64, (i64, String, String)> = HashMap::new();
    {
        let mut stmt = pc.prepare(
            "SELECT p.id, c.external_id, s.key FROM response p
             JOIN conversation c ON c.id = p.conversation_id JOIN source s ON s.id = p.source_id",
        )?;
        let rows: Vec<(i64, String, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let mut find = store.conn().prepare(
            "SELECT p.id FROM response p JOIN conversation c ON c.id = p.conversation_id
             WHERE c.external_id = ?1 AND p.source_id = ?2",
        )?;
        for (id, conversation, code) in rows {
            let (source_id, source_key) = codes
                .get(&code)
                .cloned()
                .ok_or_else(|| inconsistent(format!("unknown source code {code:?}")))?;
            let main: i64 = find
                .query_row(params![conversation, source_id], |r| r.get(0))
                .optional()?
                .ok_or_else(|| {
                    inconsistent(format!(
                        "conversation {conversation:?} (source {code}) is not in this study"
                    ))
                })?;
            responses.insert(id, (main, conversation, source_key));
        }
    }
    let main_criteria: HashMap<(String, String), i64> = criterion_keys(store.conn())?
        .into_iter()
        .map(|(id, k)| (k, id))
        .collect();
    let mut criteria: HashMap<i64, (i64, String)> = HashMap::new();
    for (id, key) in criterion_keys(pc)? {
        let main = *main_criteria.get(&key).ok_or_else(|| {
            inconsistent(format!(
                "criterion {}/{} is not in this study",
                key.0, key.1
            ))
        })?;
        criteria.insert(id, (main, key.1));
    }

    let read_pkg = |occasion: Occasion| -> Result<Vec<PkgRating>, PackageError> {
        let raw = if occasion == Occasion::First {
            "raw_value"
        } else {
            "NULL"
        };
        let mut stmt = pc.prepare(&format!(
            "SELECT id, response_id, criterion_id, value, {raw}, rationale, origin, created_at,
                 updated_at FROM {} WHERE rater_id = ?1 ORDER BY id",
            occasion.table()
        ))?;
        let rows = stmt.query_map([pkg_rater], |r| {
            Ok(PkgRating {
                id: r.get(0)?,
                response: r.get(1)?,
                criterion: r.get(2)?,
                val: (r.get(3)?, r.get(4)?, r.get(5)?),
                origin: r.get(6)?,
                created_at: r.get(7)?,
                updated_at: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    };
    let first = read_pkg(Occasion::First)?;
    let retest = read_pkg(Occasion::Retest)?;
    let mut pkg_history: HashMap<i64, Vec<HistoryRow>> = HashMap::new();
    {
        let mut stmt = pc.prepare(
            "SELECT h.rating_id, h.value, h.raw_value, h.rationale, h.origin, h.valid_from,
                 h.replaced_at FROM rating_history h JOIN rating g ON g.id = h.rating_id
             WHERE g.rater_id = ?1 ORDER BY h.id",
        )?;
        let rows = stmt.query_map([pkg_rater], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                HistoryRow {
                    value: r.get(1)?,
                    raw_value: r.get(2)?,
                    rationale: r.get(3)?,
                    origin: r.get(4)?,
                    valid_from: r.get(5)?,
                    replaced_at: r.get(6)?,
                },
            ))
        })?;
        for row in rows {
            let (id, h) = row?;
            pkg_history.entry(id).or_default().push(h);
        }
    }
    #[allow(clippy::type_complexity)]
    let assignments: Vec<(i64, String, Option<Millis>, Option<Millis>, f64)> = pc
        .prepare(
            "SELECT response_id, purpose, first_shown_at, completed_at, seconds_spent
             FROM assignment WHERE rater_id = ?1",
        )?
        .query_map([pkg_rater], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<Result<_, _>>()?;
    #[allow(clippy::type_complexity)]
    let flags: Vec<(i64, String, Millis, Option<Millis>)> = pc
        .prepare(
            "SELECT response_id, reason, created_at, resolved_at FROM flag WHERE rater_id = ?1",
        )?
        .query_map([pkg_rater], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<Result<_, _>>()?;
    for r in first.iter().chain(retest.iter()) {
        if !responses.contains_key(&r.response) || !criteria.contains_key(&r.criterion) {
            return Err(inconsistent(format!(
                "a rating refers to response {} / criterion {} that the package does not hold",
                r.response, r.criterion
            )));
        }
    }
    // The expert's signatures made in the package, each with its standing there and the ratings
    // it covers (package ids, translated below).
    let pkg_signatures: Vec<(crate::signoff::SignatureStatus, Vec<SignedValue>)> =
        crate::signoff::signatures(&pkg)
            .map_err(|e| inconsistent(format!("its signatures cannot be read: {e}")))?
            .into_iter()
            .filter(|s| s.signature.rater_id == pkg_rater)
            .map(|s| {
                let values = pkg.signed_values(s.signature.id)?;
                Ok((s, values))
            })
            .collect::<Result<_, crate::store::StoreError>>()?;
    drop(pkg);

    let mut report = MergeReport {
        package_id: package_id.clone(),
        rater: rater_name.clone(),
        ..MergeReport::default()
    };
    store.write(|tx| -> Result<(), PackageError> {
        let now = tx.now();
        let c = tx.conn();
        let base: HashMap<(String, i64, i64), Val> = c
            .prepare(
                "SELECT occasion, response_id, criterion_id, value, raw_value, rationale
                 FROM package_base WHERE package_id = ?1",
            )?
            .query_map([&package_id], |r| {
                Ok((
                    (r.get(0)?, r.get(1)?, r.get(2)?),
                    (r.get(3)?, r.get(4)?, r.get(5)?),
                ))
            })?
            .collect::<Result<_, _>>()?;
        for (occasion, rows) in [(Occasion::First, &first), (Occasion::Retest, &retest)] {
            let raw = if occasion == Occasion::First {
                "raw_value"
            } else {
                "NULL"
            };
            let table = occasion.table();
            let mut current = c.prepare(&format!(
                "SELECT id, value, {raw}, rationale, updated_at FROM {table}
                 WHERE rater_id = ?1 AND response_id = ?2 AND criterion_id = ?3"
            ))?;
            for r in rows.iter() {
                let (response, conversation, source) = &responses[&r.response];
                let (criterion, criterion_key) = &criteria[&r.criterion];
                let b = base.get(&(occasion.as_str().to_string(), *response, *criterion));
                if b == Some(&r.val) {
                    report.unchanged += 1;
                    continue;
                }
                let main: Option<MainRating> = current
                    .query_row(params![rater_id, response, criterion], |row| {
                        Ok(MainRating {
                            id: row.get(0)?,
                            val: (row.get(1)?, row.get(2)?, row.get(3)?),
                            updated_at: row.get(4)?,
                        })
                    })
                    .optional()?;
                let main_val = main.as_ref().map(|m| &m.val);
                if main_val == Some(&r.val) {
                    report.unchanged += 1;
                    continue;
                }
                if main_val != b {
                    report.conflicts.push(MergeConflict {
                        conversation: conversation.clone(),
                        source: source.clone(),
                        criterion: criterion_key.clone(),
                        occasion,
                        base: b.and_then(|v| v.0),
                        study: main_val.and_then(|v| v.0),
                        package: r.val.0,
                        study_rationale: main_val.and_then(|v| v.2.clone()),
                        package_rationale: r.val.2.clone(),
                    });
                    continue;
                }
                match (occasion, main) {
                    (Occasion::First, None) => {
                        c.prepare_cached(
                            "INSERT INTO rating(rater_id, response_id, criterion_id, value,
                                 raw_value, rationale, origin, created_at, updated_at)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                        )?
                        .execute(params![
                            rater_id,
                            response,
                            criterion,
                            r.val.0,
                            r.val.1,
                            r.val.2,
                            r.origin,
                            r.created_at,
                            r.updated_at
                        ])?;
                        let id = c.last_insert_rowid();
                        report.history_added += add_history(c, id, pkg_history.get(&r.id))?;
                        report.inserted += 1;
                    }
                    (Occasion::First, Some(m)) => {
                        report.history_added += add_history(c, m.id, pkg_history.get(&r.id))?;
                        // The study's current value must stay in the history even if the
                        // package's history does not carry it.
                        let kept: Option<i64> = c
                            .prepare_cached(
                                "SELECT 1 FROM rating_history WHERE rating_id = ?1
                                 AND value IS ?2 AND raw_value IS ?3 AND rationale IS ?4
                                 AND valid_from = ?5",
                            )?
                            .query_row(
                                params![m.id, m.val.0, m.val.1, m.val.2, m.updated_at],
                                |row| row.get(0),
                            )
                            .optional()?;
                        if kept.is_none() {
                            c.prepare_cached(
                                "INSERT INTO rating_history(rating_id, value, raw_value, rationale,
                                     origin, valid_from, replaced_at)
                                 SELECT id, value, raw_value, rationale, origin, updated_at, ?2
                                 FROM rating WHERE id = ?1",
                            )?
                            .execute(params![m.id, r.updated_at.max(m.updated_at)])?;
                            report.history_added += 1;
                        }
                        c.prepare_cached(
                            "UPDATE rating SET value = ?2, raw_value = ?3, rationale = ?4,
                                 origin = ?5, updated_at = ?6 WHERE id = ?1",
                        )?
                        .execute(params![
                            m.id,
                            r.val.0,
                            r.val.1,
                            r.val.2,
                            r.origin,
                            r.updated_at
                        ])?;
                        report.updated += 1;
                    }
                    (Occasion::Retest, None) => {
                        c.prepare_cached(
                            "INSERT INTO retest_rating(rater_id, response_id, criterion_id, value,
                                 rationale, origin, created_at, updated_at)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                        )?
                        .execute(params![
                            rater_id,
                            response,
                            criterion,
                            r.val.0,
                            r.val.2,
                            r.origin,
                            r.created_at,
                            r.updated_at
                        ])?;
                        report.retest_inserted += 1;
                    }
                    (Occasion::Retest, Some(m)) => {
                        c.prepare_cached(
                            "UPDATE retest_rating SET value = ?2, rationale = ?3, origin = ?4,
                                 updated_at = ?5 WHERE id = ?1",
                        )?
                        .execute(params![
                            m.id,
                            r.val.0,
                            r.val.2,
                            r.origin,
                            r.updated_at
                        ])?;
                        report.retest_updated += 1;
                    }
                }
            }
        }

        // Progress: earliest first showing, any completion, the longest time spent.
        for (response, purpose, shown, completed, seconds) in &assignments {
            let Some((main_response, _, _)) = responses.get(response) else {
                continue;
            };
            let row: Option<(i64, Option<Millis>, Option<Millis>, f64)> = c
                .prepare_cached(
                    "SELECT id, first_shown_at, completed_at, seconds_spent FROM assignment
                     WHERE rater_id = ?1 AND response_id = ?2 AND purpose = ?3",
                )?
                .query_row(params![rater_id, main_response, purpose], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
                .optional()?;
            let Some((id, m_shown, m_completed, m_seconds)) = row else {
                continue;
            };
            let new_shown = match (m_shown, *shown) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let new_completed = m_completed.or(*completed);
            let new_seconds = m_seconds.max(*seconds);
            if (new_shown, new_completed) != (m_shown, m_completed) || new_seconds > m_seconds {
                c.prepare_cached(
                    "UPDATE assignment SET first_shown_at = ?2, completed_at = ?3,
                         seconds_spent = ?4 WHERE id = ?1",
                )?
                .execute(params![id, new_shown, new_completed, new_seconds])?;
                report.progress_updated += 1;
            }
        }
        for (response, reason, created, resolved) in &flags {
            let Some((main_response, _, _)) = responses.get(response) else {
                continue;
            };
            let exists: Option<i64> = c
                .prepare_cached(
                    "SELECT 1 FROM flag WHERE rater_id = ?1 AND response_id = ?2 AND reason = ?3
                     AND created_at = ?4",
                )?
                .query_row(params![rater_id, main_response, reason, created], |r| {
                    r.get(0)
                })
                .optional()?;
            if exists.is_none() {
                c.prepare_cached(
                    "INSERT INTO flag(rater_id, response_id, reason, created_at, resolved_at)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )?
                .execute(params![
                    rater_id,
                    main_response,
                    reason,
                    created,
                    resolved
                ])?;
                report.flags_added += 1;
            }
        }
        // Signatures travel with the ratings: each is recorded against the study's ratings with
        // the hash of the values the expert signed, so the study shows whether it still holds
        // them. One the package itself no longer matched keeps the package's hash (and so shows
        // as changed after signature here too).
        for (status, values) in &pkg_signatures {
            let s = &status.signature;
            let scope = format!("package {package_id}: {}", s.scope);
            if tx.has_signature(rater_id, s.signed_at, &scope)? {
                continue;
            }
            let mut mapped = Vec::with_capacity(values.len());
            for v in values {
                let (Some((response, _, _)), Some((criterion, _))) =
                    (responses.get(&v.response_id), criteria.get(&v.criterion_id))
                else {
                    continue;
                };
                let Some(rating_id) = tx.rating_id(rater_id, *response, *criterion)? else {
                    continue;
                };
                mapped.push(SignedValue {
                    rating_id,
                    response_id: *response,
                    criterion_id: *criterion,
                    value: v.value,
                    raw_value: v.raw_value.clone(),
                    rationale: v.rationale.clone(),
                });
            }
            mapped.sort_by_key(|v| (v.response_id, v.criterion_id));
            let sha = if status.matches {
                crate::signoff::values_sha256(&mapped)
            } else {
                s.ratings_sha256.clone()
            };
            let id = tx.add_signature_at(
                rater_id,
                &s.signer,
                &s.meaning,
                &scope,
                s.signed_at,
                s.ratings,
                &mapped,
                &sha,
            )?;
            tx.audit(
                &rater_name,
                "signoff.merge",
                &serde_json::json!({
                    "rater_id": rater_id,
                    "signature": id,
                    "package": package_id,
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
        if report.changed() {
            tx.conn().execute(
                "UPDATE package SET merged_at = ?2 WHERE id = ?1",
                params![package_id, now],
            )?;
        }
        tx.record_package_return(&package_id, seal.seq, &seal.state)?;
        if report.changed() {
            tx.audit(
                "lead",
                "package_merged",
                &serde_json::json!({
                    "package": package_id,
                    "rater": rater_name,
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

/// Insert the package's history rows of one rating that the study does not have yet.
fn add_history(
    c: &rusqlite::Connection,
    rating_id: i64,
    rows: Option<&Vec<HistoryRow>>,
) -> Result<usize, PackageError> {
    let mut added = 0;
    for h in rows.into_iter().flatten() {
        let exists: Option<i64> = c
            .prepare_cached(
                "SELECT 1 FROM rating_history WHERE rating_id = ?1 AND value IS ?2
                 AND raw_value IS ?3 AND rationale IS ?4 AND origin = ?5 AND valid_from = ?6
                 AND replaced_at = ?7",
            )?
            .query_row(
                params![
                    rating_id,
                    h.value,
                    h.raw_value,
                    h.rationale,
                    h.origin,
                    h.valid_from,
                    h.replaced_at
                ],
                |r| r.get(0),
            )
            .optional()?;
        if exists.is_none() {
            c.prepare_cached(
                "INSERT INTO rating_history(rating_id, value, raw_value, rationale, origin,
                     valid_from, replaced_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                rating_id,
                h.value,
                h.raw_value,
                h.rationale,
                h.origin,
                h.valid_from,
                h.replaced_at
            ])?;
            added += 1;
        }
    }
    Ok(added)
}
