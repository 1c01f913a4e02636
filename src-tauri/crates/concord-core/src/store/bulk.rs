//! Bulk writes and look-ups for importers: hundreds of thousands of ratings go in through one
//! prepared statement inside the import's single transaction, conversations and responses are
//! found through maps loaded once, and every imported file is recorded by its SHA-256 so a second
//! import of the same bytes is recognised. A rating that already exists is not overwritten
//! silently: it goes through [`StudyTx::set_rating`], which keeps the earlier value in the history.

use super::{RatingInput, RatingOutcome, Store, StoreError, StoreResult, StudyTx};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use std::collections::HashMap;

/// One value to import for rater × response × criterion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedRating {
    pub rater_id: i64,
    pub response_id: i64,
    pub criterion_id: i64,
    pub value: Option<i64>,
    /// The value as written in the file when it is not a plain on-scale value.
    pub raw_value: Option<String>,
    pub rationale: Option<String>,
}

/// What a bulk rating write did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BulkOutcome {
    pub inserted: usize,
    pub updated: usize,
    pub unchanged: usize,
}

/// A file recorded in the study by a previous import.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportRecord {
    pub sha256: String,
    pub format: String,
    pub file_name: String,
    pub imported_at: i64,
}

/// One rater's remarks on one response as a whole (see the `judgement` table).
#[derive(Debug, Clone, PartialEq)]
pub struct NewJudgement<'a> {
    pub rater_id: i64,
    pub response_id: i64,
    pub rationale: Option<&'a str>,
    /// A JSON object of extra fields (e.g. `{"Overall": 4.4}`).
    pub extra: &'a serde_json::Value,
    pub raw_reply: Option<&'a str>,
    pub origin: &'a str,
}

const IMPORT_BY_HASH: &str =
    "SELECT sha256, format, file_name, imported_at FROM import_record WHERE sha256 = ?1";

fn import_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<ImportRecord> {
    Ok(ImportRecord {
        sha256: r.get(0)?,
        format: r.get(1)?,
        file_name: r.get(2)?,
        imported_at: r.get(3)?,
    })
}

impl Store {
    /// The earlier import of a file with these bytes, if any.
    pub fn import_by_hash(&self, sha256: &str) -> StoreResult<Option<ImportRecord>> {
        Ok(self
            .conn()
            .query_row(IMPORT_BY_HASH, [sha256], import_record)
            .optional()?)
    }

    /// Every file imported into the study, oldest first.
    pub fn imports(&self) -> StoreResult<Vec<ImportRecord>> {
        let mut stmt = self.conn().prepare(
            "SELECT sha256, format, file_name, imported_at FROM import_record ORDER BY id",
        )?;
        let rows = stmt.query_map([], import_record)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// What a rater said about a response as a whole (see the `judgement` table).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Judgement {
    pub rationale: Option<String>,
    /// Extra fields as a JSON object (e.g. `{"Overall": 4.4}`).
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
    pub extra: serde_json::Value,
    pub raw_reply: Option<String>,
    pub origin: String,
}

impl Store {
    /// The response of source `source_key` to the conversation with external id `conversation`.
    pub fn response_id(&self, conversation: &str, source_key: &str) -> StoreResult<Option<i64>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT p.id FROM response p JOIN conversation c ON c.id = p.conversation_id
                 JOIN source s ON s.id = p.source_id WHERE c.external_id = ?1 AND s.key = ?2",
                params![conversation, source_key],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The text of a response (`None` when it has none yet).
    pub fn response_text(&self, response_id: i64) -> StoreResult<Option<String>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT text FROM response WHERE id = ?1",
                [response_id],
                |r| r.get(0),
            )
            .optional()?
            .flatten())
    }

    /// The context of the conversation with external id `conversation`.
    pub fn conversation_context(&self, conversation: &str) -> StoreResult<Option<String>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT context FROM conversation WHERE external_id = ?1",
                [conversation],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// A rater's remarks on a response, if any.
    pub fn judgement(&self, rater_id: i64, response_id: i64) -> StoreResult<Option<Judgement>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT rationale, extra_json, raw_reply, origin FROM judgement
                 WHERE rater_id = ?1 AND response_id = ?2",
                params![rater_id, response_id],
                |r| {
                    let extra: String = r.get(1)?;
                    Ok(Judgement {
                        rationale: r.get(0)?,
                        extra: serde_json::from_str(&extra).unwrap_or_default(),
                        raw_reply: r.get(2)?,
                        origin: r.get(3)?,
                    })
                },
            )
            .optional()?)
    }

    /// The stored value and raw value of one rating.
    pub fn rating_value(
        &self,
        rater_id: i64,
        response_id: i64,
        criterion_id: i64,
    ) -> StoreResult<Option<(Option<i64>, Option<String>)>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT value, raw_value FROM rating
                 WHERE rater_id = ?1 AND response_id = ?2 AND criterion_id = ?3",
                params![rater_id, response_id, criterion_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }
}

impl StudyTx<'_> {
    /// The earlier import of a file with these bytes, if any (checked again inside the import's
    /// transaction so two concurrent imports cannot both record it).
    pub fn import_by_hash(&self, sha256: &str) -> StoreResult<Option<ImportRecord>> {
        Ok(self
            .tx
            .query_row(IMPORT_BY_HASH, [sha256], import_record)
            .optional()?)
    }

    /// Record an imported file with the options used and a summary of what it wrote.
    pub fn record_import(
        &mut self,
        sha256: &str,
        format: &str,
        file_name: &str,
        options: &serde_json::Value,
        summary: &serde_json::Value,
    ) -> StoreResult<()> {
        self.tx
            .execute(
                "INSERT INTO import_record(sha256, format, file_name, imported_at, options_json,
                     summary_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    sha256,
                    format,
                    file_name,
                    self.now,
                    options.to_string(),
                    summary.to_string()
                ],
            )
            .map_err(|e| {
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) {
                    StoreError::Invalid(format!("{file_name} was already imported"))
                } else {
                    StoreError::Sqlite(e)
                }
            })?;
        Ok(())
    }

    /// External id → id of every conversation in the study.
    pub fn conversation_ids(&self) -> StoreResult<HashMap<String, i64>> {
        let mut stmt = self
            .tx
            .prepare("SELECT external_id, id FROM conversation")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// (conversation id, source id) → (response id, whether it has a text) for every response.
    pub fn response_ids(&self) -> StoreResult<HashMap<(i64, i64), (i64, bool)>> {
        let mut stmt = self
            .tx
            .prepare("SELECT conversation_id, source_id, id, text IS NOT NULL FROM response")?;
        let rows = stmt.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), (r.get(2)?, r.get(3)?))))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// External response id → response id, for responses imported with an id of their own.
    pub fn response_external_ids(&self) -> StoreResult<HashMap<String, i64>> {
        let mut stmt = self
            .tx
            .prepare("SELECT external_id, id FROM response WHERE external_id IS NOT NULL")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Give a response the id its file uses for it.
    pub fn set_response_external_id(
        &mut self,
        response_id: i64,
        external_id: &str,
    ) -> StoreResult<()> {
        self.tx
            .prepare_cached("UPDATE response SET external_id = ?2 WHERE id = ?1")?
            .execute(params![response_id, external_id])?;
        Ok(())
    }

    /// The context stored for a conversation.
    pub fn conversation_context(&self, conversation_id: i64) -> StoreResult<String> {
        Ok(self.tx.query_row(
            "SELECT context FROM conversation WHERE id = ?1",
            [conversation_id],
            |r| r.get(0),
        )?)
    }

    /// Criterion key → id for one stored rubric.
    pub fn criterion_ids(&self, rubric_id: i64) -> StoreResult<HashMap<String, i64>> {
        let mut stmt = self
            .tx
            .prepare("SELECT key, id FROM criterion WHERE rubric_id = ?1")?;
        let rows = stmt.query_map([rubric_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Give a response that has no text yet its text; a response that already has one keeps it.
    /// Returns whether the text was filled.
    pub fn fill_response_text(&mut self, response_id: i64, text: &str) -> StoreResult<bool> {
        let changed = self
            .tx
            .prepare_cached("UPDATE response SET text = ?2 WHERE id = ?1 AND text IS NULL")?
            .execute(params![response_id, text])?;
        Ok(changed == 1)
    }

    /// Insert or replace a rater's remarks on a response.
    pub fn set_judgement(&mut self, j: &NewJudgement<'_>) -> StoreResult<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO judgement(rater_id, response_id, rationale, extra_json, raw_reply,
                     origin, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT(rater_id, response_id) DO UPDATE SET rationale = excluded.rationale,
                     extra_json = excluded.extra_json, raw_reply = excluded.raw_reply,
                     origin = excluded.origin, created_at = excluded.created_at",
            )?
            .execute(params![
                j.rater_id,
                j.response_id,
                j.rationale,
                j.extra.to_string(),
                j.raw_reply,
                j.origin,
                self.now
            ])?;
        Ok(())
    }

    /// Write many imported ratings with one prepared statement. Values must lie on the criterion's
    /// scale unless they carry their `raw_value` (an out-of-scale value kept by the user's choice).
    /// A rating that already exists is updated through [`StudyTx::set_rating`] so its earlier
    /// value is kept in the history.
    pub fn import_ratings(
        &mut self,
        ratings: &[ImportedRating],
        origin: &str,
    ) -> StoreResult<BulkOutcome> {
        let scales: HashMap<i64, (i64, i64)> = {
            let mut stmt = self
                .tx
                .prepare("SELECT id, scale_min, scale_max FROM criterion")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
            rows.collect::<Result<_, _>>()?
        };
        // A bulk import touches more pages than SQLite's default 2 MB cache holds; spilling them
        // to the WAL mid-transaction costs more than the import itself. Up to 64 MB are used only
        // as far as pages are actually touched.
        self.tx.execute_batch("PRAGMA cache_size = -65536")?;
        let mut outcome = BulkOutcome::default();
        let mut conflicts = Vec::new();
        {
            let mut insert = self.tx.prepare(
                "INSERT INTO rating(rater_id, response_id, criterion_id, value, raw_value,
                     rationale, origin, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)
                 ON CONFLICT(rater_id, response_id, criterion_id) DO NOTHING",
            )?;
            for (index, r) in ratings.iter().enumerate() {
                let (min, max) =
                    *scales
                        .get(&r.criterion_id)
                        .ok_or_else(|| StoreError::NotFound {
                            what: "criterion",
                            key: r.criterion_id.to_string(),
                        })?;
                if let Some(v) = r.value {
                    if !(min..=max).contains(&v) && r.raw_value.is_none() {
                        return Err(StoreError::Invalid(format!(
                            "{v} is outside the scale {min}–{max} of criterion {}",
                            r.criterion_id
                        )));
                    }
                }
                let changed = insert.execute(params![
                    r.rater_id,
                    r.response_id,
                    r.criterion_id,
                    r.value,
                    r.raw_value,
                    r.rationale,
                    origin,
                    self.now
                ])?;
                if changed == 1 {
                    outcome.inserted += 1;
                } else {
                    conflicts.push(index);
                }
            }
        }
        for index in conflicts {
            let r = &ratings[index];
            match self.set_rating(&RatingInput {
                rater_id: r.rater_id,
                response_id: r.response_id,
                criterion_id: r.criterion_id,
                value: r.value,
                raw_value: r.raw_value.as_deref(),
                rationale: r.rationale.as_deref(),
                origin,
            })? {
                RatingOutcome::Inserted => outcome.inserted += 1,
                RatingOutcome::Updated { .. } => outcome.updated += 1,
                RatingOutcome::Unchanged => outcome.unchanged += 1,
            }
        }
        Ok(outcome)
    }
}
