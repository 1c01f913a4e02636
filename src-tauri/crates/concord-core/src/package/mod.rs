//! Rater packages: a `.concord` file for one expert, itself a study written with the same
//! [`Store`] (so the app opens it as is), holding only that expert's assignment — the rubrics,
//! conversations and responses they need, their own ratings (with history), retest ratings and
//! flags. Nothing else leaves the study: no other rater's ratings, no judge, and no source names —
//! each source becomes an opaque code, shuffled per package, with the mapping kept in the main
//! study under the package's id.
//!
//! A package is sealed ([`crate::store::seal`]): it is an encrypted study, under a passphrase the
//! lead chooses at export and passes to the expert separately (by phone, not in the e-mail that
//! carries the file), and it carries a seal that every write through Concord renews. The merge
//! refuses a package not issued by this study, one altered outside Concord after issue or after
//! the expert's last save, and an older return replayed after a newer one was merged — each with
//! its own error, before anything is written to the study.
//!
//! [`merge_package`] brings a returned package back. It is idempotent (merging the same package
//! twice changes nothing) and never overwrites silently: for every rating it compares three
//! values — the base recorded when the package was written, the package's and the study's. A
//! rating changed only in the package is merged with its revision history; one changed in both
//! to different values is reported as a conflict and the study keeps its value.

mod merge;

pub use merge::{merge_package, MergeConflict, MergeReport, Occasion};

use crate::clock::Millis;
use crate::store::{
    NewConversation, NewRater, NewSource, Passphrase, RaterKind, SourceKind, Store, StoreError,
};
use rand::seq::SliceRandom;
use rand::Rng;
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// `study_meta` keys of a package file.
pub const META_PACKAGE_ID: &str = "package.id";
pub const META_PACKAGE_RATER: &str = "package.rater";

#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error("no rater named {0:?} in this study")]
    UnknownRater(String),
    #[error("{0:?} is an LLM judge; packages are for experts")]
    NotAnExpert(String),
    #[error("{0:?} has no assigned items; run the assignment first")]
    NothingAssigned(String),
    #[error("{file}: not a rater package (it has no package id)")]
    NotAPackage { file: String },
    #[error("{file}: package {id} was not written from this study")]
    UnknownPackage { file: String, id: String },
    #[error("{file}: not a sealed package (it is not encrypted or carries no seal: written by an earlier Concord or another program); nothing was merged. Export a new package for this expert")]
    NotSealed { file: String },
    #[error("{file}: this package was not issued by this study ({detail}); nothing was merged")]
    NotIssuedHere { file: String, detail: String },
    #[error("{file}: altered outside Concord after it was issued ({detail}); nothing was merged")]
    AlteredAfterIssue { file: String, detail: String },
    #[error("{file}: altered outside Concord after the expert's return (its content no longer matches the seal of return {seq}, the expert's last save in Concord); nothing was merged")]
    AlteredAfterReturn { file: String, seq: i64 },
    #[error("{file}: a replayed package: this is return {seq} of package {id}, but the newer return {merged} from {rater:?} was already merged; nothing was merged")]
    Replayed {
        file: String,
        id: String,
        rater: String,
        seq: i64,
        merged: i64,
    },
    #[error("{file}: return {seq} of package {id} differs from the return {seq} already merged (the package was copied and rated in two places); nothing was merged")]
    Forked { file: String, id: String, seq: i64 },
    #[error("{file}: package {id} belongs to {expected:?} but holds ratings of {found:?}")]
    WrongRater {
        file: String,
        id: String,
        expected: String,
        found: String,
    },
    #[error("{file}: {detail}")]
    Inconsistent { file: String, detail: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for PackageError {
    fn from(e: rusqlite::Error) -> Self {
        PackageError::Store(StoreError::Sqlite(e))
    }
}

/// What [`export_package`] wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PackageSummary {
    pub package_id: String,
    pub rater: String,
    pub file: String,
    pub conversations: usize,
    pub responses: usize,
    pub assignments: usize,
    pub ratings: usize,
    pub retest_ratings: usize,
    pub sources: usize,
}

/// A package written from this study.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PackageRecord {
    pub package_id: String,
    pub rater: String,
    pub file_name: String,
    pub exported_at: i64,
    pub merged_at: Option<i64>,
}

/// Every package written from the study, oldest first.
pub fn packages(store: &Store) -> Result<Vec<PackageRecord>, PackageError> {
    let mut stmt = store.conn().prepare(
        "SELECT p.id, r.name, p.file_name, p.exported_at, p.merged_at
         FROM package p JOIN rater r ON r.id = p.rater_id ORDER BY p.exported_at, p.id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(PackageRecord {
            package_id: r.get(0)?,
            rater: r.get(1)?,
            file_name: r.get(2)?,
            exported_at: r.get(3)?,
            merged_at: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

struct Assigned {
    response: i64,
    position: i64,
    purpose: String,
    first_shown_at: Option<Millis>,
    completed_at: Option<Millis>,
    seconds_spent: f64,
}

struct StoredRating {
    id: i64,
    response: i64,
    criterion: i64,
    value: Option<i64>,
    raw_value: Option<String>,
    rationale: Option<String>,
    origin: String,
    created_at: Millis,
    updated_at: Millis,
}

/// Find an expert by name.
pub(crate) fn expert_id(store: &Store, name: &str) -> Result<(i64, String, i64), PackageError> {
    let found: Option<(i64, String, String, i64)> = store
        .conn()
        .query_row(
            "SELECT id, name, kind, queue_seed FROM rater WHERE name = ?1",
            [name.trim()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let (id, name, kind, seed) =
        found.ok_or_else(|| PackageError::UnknownRater(name.to_string()))?;
    if kind != RaterKind::Expert.as_str() {
        return Err(PackageError::NotAnExpert(name));
    }
    Ok((id, name, seed))
}

/// Write the package of expert `rater` to `out` (which must not exist), encrypted with
/// `passphrase` and sealed. `seed` draws the package id and the shuffled source codes (passed in,
/// like all randomness).
pub fn export_package(
    store: &mut Store,
    rater: &str,
    out: &Path,
    seed: u64,
    passphrase: &Passphrase,
) -> Result<PackageSummary, PackageError> {
    passphrase.check_new()?;
    let (rater_id, rater_name, queue_seed) = expert_id(store, rater)?;
    let conn = store.conn();

    let assigned: Vec<Assigned> = conn
        .prepare(
            "SELECT response_id, position, purpose, first_shown_at, completed_at, seconds_spent
             FROM assignment WHERE rater_id = ?1 ORDER BY position",
        )?
        .query_map([rater_id], |r| {
            Ok(Assigned {
                response: r.get(0)?,
                position: r.get(1)?,
                purpose: r.get(2)?,
                first_shown_at: r.get(3)?,
                completed_at: r.get(4)?,
                seconds_spent: r.get(5)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    if assigned.is_empty() {
        return Err(PackageError::NothingAssigned(rater_name));
    }
    let response_ids: BTreeSet<i64> = assigned.iter().map(|a| a.response).collect();

    // Responses, their conversations and sources.
    let mut responses: Vec<(i64, i64, i64, Option<String>)> = Vec::new();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT conversation_id, source_id, text FROM response WHERE id = ?1",
        )?;
        for &id in &response_ids {
            let (c, s, t) = stmt.query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            responses.push((id, c, s, t));
        }
    }
    let conversation_ids: BTreeSet<i64> = responses.iter().map(|r| r.1).collect();
    let source_ids: BTreeSet<i64> = responses.iter().map(|r| r.2).collect();
    #[allow(clippy::type_complexity)]
    let mut conversations: Vec<(i64, String, i64, String, Option<String>, Option<String>)> =
        Vec::new();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT external_id, rubric_id, context, language, category FROM conversation WHERE id = ?1",
        )?;
        for &id in &conversation_ids {
            let (e, rb, ctx, l, cat) = stmt.query_row([id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?;
            conversations.push((id, e, rb, ctx, l, cat));
        }
    }
    let rubric_ids: BTreeSet<i64> = conversations.iter().map(|c| c.2).collect();
    let rubrics: Vec<(i64, crate::rubric::Rubric)> = store
        .rubrics()?
        .into_iter()
        .filter(|(id, _)| rubric_ids.contains(id))
        .collect();

    // The expert's own ratings on assigned responses (first and retest occasions), with history.
    let ratings = own_ratings(conn, "rating", rater_id, &response_ids)?;
    let retests = own_ratings(conn, "retest_rating", rater_id, &response_ids)?;
    let mut history: HashMap<i64, Vec<HistoryRow>> = HashMap::new();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT value, raw_value, rationale, origin, valid_from, replaced_at
             FROM rating_history WHERE rating_id = ?1 ORDER BY id",
        )?;
        for r in &ratings {
            let rows: Vec<HistoryRow> = stmt
                .query_map([r.id], HistoryRow::read)?
                .collect::<Result<_, _>>()?;
            if !rows.is_empty() {
                history.insert(r.id, rows);
            }
        }
    }
    #[allow(clippy::type_complexity)]
    let flags: Vec<(i64, String, Millis, Option<Millis>)> = conn
        .prepare(
            "SELECT response_id, reason, created_at, resolved_at FROM flag WHERE rater_id = ?1",
        )?
        .query_map([rater_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .filter(|f: &(i64, String, Millis, Option<Millis>)| response_ids.contains(&f.0))
        .collect();

    // Opaque codes and the package id.
    let mut rng = crate::assignment::seeded(seed, 0x7061_636b);
    let mut order: Vec<i64> = source_ids.iter().copied().collect();
    order.shuffle(&mut rng);
    let codes: BTreeMap<i64, String> = order
        .iter()
        .enumerate()
        .map(|(i, &s)| (s, format!("S{:02}", i + 1)))
        .collect();
    let title = store.title()?;
    // The id binds the package to this study's content as well as to the seed: with the seed
    // alone, two studies exporting with the same seed would hand out the same id, and a package
    // of one would be merged into the other.
    let study_tag = {
        let mut digest = Sha256::new();
        for part in [title.as_str(), rater_name.as_str()] {
            digest.update(part.as_bytes());
            digest.update([0]);
        }
        for c in &conversations {
            digest.update(c.1.as_bytes());
            digest.update([0]);
            digest.update(c.3.as_bytes());
            digest.update([0]);
        }
        for r in &responses {
            digest.update(r.3.as_deref().unwrap_or_default().as_bytes());
            digest.update([0]);
        }
        let d = digest.finalize();
        u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
    };
    let package_id = loop {
        let candidate = format!("{:016x}", rng.gen::<u64>() ^ study_tag);
        let taken: Option<i64> = conn
            .query_row("SELECT 1 FROM package WHERE id = ?1", [&candidate], |r| {
                r.get(0)
            })
            .optional()?;
        if taken.is_none() {
            break candidate;
        }
    };
    // The study's own id names the issuer in the seal; a new one mixes the seed with the study's
    // path and the time, so two studies never share one.
    let study_id = match store.study_id()? {
        Some(id) => id,
        None => {
            let mut h = Sha256::new();
            h.update(rng.gen::<u64>().to_le_bytes());
            h.update(store.now_ms().to_le_bytes());
            h.update(store.path_string().as_bytes());
            h.finalize()[..16]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        }
    };

    // Write the package study.
    let mut pkg = Store::create_with(out, store.clock(), Some(passphrase))?;
    let written = pkg.write(|tx| -> Result<(), PackageError> {
        tx.set_meta("title", &format!("{title} — {rater_name}"))?;
        tx.set_meta(META_PACKAGE_ID, &package_id)?;
        tx.set_meta(META_PACKAGE_RATER, &rater_name)?;
        let mut rubric_map = HashMap::new();
        for (id, rubric) in &rubrics {
            rubric_map.insert(*id, tx.add_rubric(rubric)?);
        }
        let mut source_map = HashMap::new();
        for (&sid, code) in &codes {
            let id = tx.upsert_source(&NewSource {
                key: code,
                name: code,
                family: None,
                // Blind: a human answer must not be told apart from a model's.
                kind: SourceKind::Llm,
            })?;
            source_map.insert(sid, id);
        }
        let mut conv_map = HashMap::new();
        for (id, ext, rubric, context, language, category) in &conversations {
            let new = tx.add_conversation(&NewConversation {
                external_id: ext,
                rubric_id: rubric_map[rubric],
                context,
                language: language.as_deref(),
                category: category.as_deref(),
            })?;
            conv_map.insert(*id, new);
        }
        let mut resp_map = HashMap::new();
        for (id, conv, source, text) in &responses {
            let new = tx.add_response(conv_map[conv], source_map[source], text.as_deref())?;
            resp_map.insert(*id, new);
        }
        let new_rater = tx.upsert_rater(&NewRater {
            kind: RaterKind::Expert,
            name: &rater_name,
            model_id: None,
            family: None,
            queue_seed,
        })?;
        // Criterion ids map by (rubric, key).
        let mut crit_map = HashMap::new();
        {
            let main_crit = criterion_keys(store.conn())?;
            let pkg_crit = criterion_keys(tx.conn())?;
            let by_key: HashMap<&(String, String), i64> =
                pkg_crit.iter().map(|(id, k)| (k, *id)).collect();
            for (id, key) in &main_crit {
                if let Some(new) = by_key.get(key) {
                    crit_map.insert(*id, *new);
                }
            }
        }
        let c = tx.conn();
        let mut insert = c.prepare(
            "INSERT INTO assignment(rater_id, response_id, position, purpose, first_shown_at,
                 completed_at, seconds_spent) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for a in &assigned {
            insert.execute(params![
                new_rater,
                resp_map[&a.response],
                a.position,
                a.purpose,
                a.first_shown_at,
                a.completed_at,
                a.seconds_spent
            ])?;
        }
        let mut rating = c.prepare(
            "INSERT INTO rating(rater_id, response_id, criterion_id, value, raw_value, rationale,
                 origin, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        let mut hist = c.prepare(
            "INSERT INTO rating_history(rating_id, value, raw_value, rationale, origin,
                 valid_from, replaced_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let criterion = |r: &StoredRating| -> Result<i64, PackageError> {
            crit_map.get(&r.criterion).copied().ok_or_else(|| {
                PackageError::Store(StoreError::NotFound {
                    what: "criterion",
                    key: r.criterion.to_string(),
                })
            })
        };
        for r in &ratings {
            rating.execute(params![
                new_rater,
                resp_map[&r.response],
                criterion(r)?,
                r.value,
                r.raw_value,
                r.rationale,
                r.origin,
                r.created_at,
                r.updated_at
            ])?;
            let new_id = c.last_insert_rowid();
            for h in history.get(&r.id).into_iter().flatten() {
                hist.execute(params![
                    new_id,
                    h.value,
                    h.raw_value,
                    h.rationale,
                    h.origin,
                    h.valid_from,
                    h.replaced_at
                ])?;
            }
        }
        let mut retest = c.prepare(
            "INSERT INTO retest_rating(rater_id, response_id, criterion_id, value, rationale,
                 origin, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        for r in &retests {
            retest.execute(params![
                new_rater,
                resp_map[&r.response],
                criterion(r)?,
                r.value,
                r.rationale,
                r.origin,
                r.created_at,
                r.updated_at
            ])?;
        }
        let mut flag = c.prepare(
            "INSERT INTO flag(rater_id, response_id, reason, created_at, resolved_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for (response, reason, created, resolved) in &flags {
            flag.execute(params![
                new_rater,
                resp_map[response],
                reason,
                created,
                resolved
            ])?;
        }
        Ok(())
    });
    let sealed = written.and_then(|()| Ok(pkg.seal_package(&study_id, &package_id)?));
    drop(pkg);
    let sealed = match sealed {
        Ok(s) => s,
        Err(e) => {
            remove_package_file(out);
            return Err(e);
        }
    };

    // Record the package, its codes and the base values in the study.
    let file_name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let recorded = store.write(|tx| -> Result<(), PackageError> {
        let c = tx.conn();
        c.execute(
            "INSERT INTO package(id, rater_id, file_name, exported_at) VALUES (?1, ?2, ?3, ?4)",
            params![package_id, rater_id, file_name, tx.now()],
        )?;
        let mut src = c.prepare(
            "INSERT INTO package_source(package_id, code, source_id) VALUES (?1, ?2, ?3)",
        )?;
        for (sid, code) in &codes {
            src.execute(params![package_id, code, sid])?;
        }
        let mut base = c.prepare(
            "INSERT INTO package_base(package_id, occasion, response_id, criterion_id, value,
                 raw_value, rationale) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for (occasion, rows) in [("first", &ratings), ("retest", &retests)] {
            for r in rows {
                base.execute(params![
                    package_id,
                    occasion,
                    r.response,
                    r.criterion,
                    r.value,
                    r.raw_value,
                    r.rationale
                ])?;
            }
        }
        drop(src);
        drop(base);
        tx.ensure_study_id(&study_id)?;
        tx.record_package_seal(&package_id, &sealed)?;
        tx.audit(
            "lead",
            "package_exported",
            &serde_json::json!({ "package": package_id, "rater": rater_name, "file": file_name }),
        )?;
        Ok(())
    });
    if let Err(e) = recorded {
        remove_package_file(out);
        return Err(e);
    }
    Ok(PackageSummary {
        package_id,
        rater: rater_name,
        file: file_name,
        conversations: conversations.len(),
        responses: responses.len(),
        assignments: assigned.len(),
        ratings: ratings.len(),
        retest_ratings: retests.len(),
        sources: codes.len(),
    })
}

fn remove_package_file(out: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = out.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(std::path::PathBuf::from(p));
    }
}

/// (rubric key, criterion key): how a criterion is matched across studies.
pub(crate) type CriterionKey = (String, String);

/// Criterion id → (rubric key, criterion key).
pub(crate) fn criterion_keys(
    conn: &rusqlite::Connection,
) -> Result<Vec<(i64, CriterionKey)>, PackageError> {
    let mut stmt = conn.prepare(
        "SELECT c.id, r.key, c.key FROM criterion c JOIN rubric r ON r.id = c.rubric_id",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn own_ratings(
    conn: &rusqlite::Connection,
    table: &str,
    rater: i64,
    responses: &BTreeSet<i64>,
) -> Result<Vec<StoredRating>, PackageError> {
    let raw = if table == "rating" {
        "raw_value"
    } else {
        "NULL"
    };
    let mut stmt = conn.prepare(&format!(
        "SELECT id, response_id, criterion_id, value, {raw}, rationale, origin, created_at,
             updated_at FROM {table} WHERE rater_id = ?1 ORDER BY id"
    ))?;
    let rows = stmt.query_map([rater], |r| {
        Ok(StoredRating {
            id: r.get(0)?,
            response: r.get(1)?,
            criterion: r.get(2)?,
            value: r.get(3)?,
            raw_value: r.get(4)?,
            rationale: r.get(5)?,
            origin: r.get(6)?,
            created_at: r.get(7)?,
            updated_at: r.get(8)?,
        })
    })?;
    let all: Vec<StoredRating> = rows.collect::<Result<_, _>>()?;
    Ok(all
        .into_iter()
        .filter(|r| responses.contains(&r.response))
        .collect())
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HistoryRow {
    pub value: Option<i64>,
    pub raw_value: Option<String>,
    pub rationale: Option<String>,
    pub origin: String,
    pub valid_from: Millis,
    pub replaced_at: Millis,
}

impl HistoryRow {
    pub(crate) fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<HistoryRow> {
        Ok(HistoryRow {
            value: r.get(0)?,
            raw_value: r.get(1)?,
            rationale: r.get(2)?,
            origin: r.get(3)?,
            valid_from: r.get(4)?,
            replaced_at: r.get(5)?,
        })
    }
}
