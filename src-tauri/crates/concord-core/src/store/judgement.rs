//! The `judgement` table: what a rater said about a response as a whole beyond the
//! per-criterion values — a judge's explanation, extra fields such as MentalBench's `Overall`,
//! or a reply that could not be read as scores, kept verbatim.

use super::{Store, StoreResult, StudyTx};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;

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
}

impl StudyTx<'_> {
    /// Insert or replace a rater's remarks on a response.
    pub fn set_judgement(&mut self, j: &NewJudgement<'_>) -> StoreResult<()> {
        self.conn()
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
}
