//! The `rater` table (clinical experts and LLM judges, each with the seed of their own queue
//! order) and `rater_session`, where each rater last stood on the rating screen.

use super::{Store, StoreError, StoreResult, StudyTx};
use crate::base::clock::Millis;
use crate::base::text::quoted;
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

/// A rater's row id and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedRater {
    pub id: i64,
    pub name: String,
}

/// Reads a `(id, name)` row as a [`NamedRater`].
pub(super) fn named_rater(r: &rusqlite::Row<'_>) -> rusqlite::Result<NamedRater> {
    Ok(NamedRater {
        id: r.get(0)?,
        name: r.get(1)?,
    })
}

/// Is a rater a clinical expert or an LLM judge?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum RaterKind {
    Expert,
    Judge,
}

impl RaterKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RaterKind::Expert => "expert",
            RaterKind::Judge => "judge",
        }
    }
    pub fn parse(s: &str) -> Option<RaterKind> {
        match s {
            "expert" => Some(RaterKind::Expert),
            "judge" => Some(RaterKind::Judge),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRater<'a> {
    pub kind: RaterKind,
    pub name: &'a str,
    pub model_id: Option<&'a str>,
    pub family: Option<&'a str>,
    /// Seed of this rater's randomised queue order (passed in so studies are reproducible).
    pub queue_seed: i64,
}

/// A rater as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaterRecord {
    pub id: i64,
    pub name: String,
    /// The stored kind text (`expert` or `judge`).
    pub kind: String,
    pub model_id: Option<String>,
    pub family: Option<String>,
    pub queue_seed: i64,
}

impl RaterRecord {
    pub fn is_expert(&self) -> bool {
        self.kind == RaterKind::Expert.as_str()
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RaterSummary {
    pub id: i64,
    pub name: String,
    pub kind: RaterKind,
    pub model_id: Option<String>,
    pub family: Option<String>,
    pub ratings: i64,
    pub responses_rated: i64,
    /// Items assigned to the rater (0 for an imported rater nobody has assigned work to).
    pub assigned: i64,
}

const RATER_COLUMNS: &str = "id, name, kind, model_id, family, queue_seed";

fn rater_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<RaterRecord> {
    Ok(RaterRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        kind: r.get(2)?,
        model_id: r.get(3)?,
        family: r.get(4)?,
        queue_seed: r.get(5)?,
    })
}

/// The item a rater last stood at on the rating screen.
fn session_item(c: &Connection, rater_id: i64) -> StoreResult<Option<i64>> {
    Ok(c.query_row(
        "SELECT item FROM rater_session WHERE rater_id = ?1",
        [rater_id],
        |r| r.get(0),
    )
    .optional()?)
}

impl Store {
    /// Every rater with their counts of first-occasion ratings (kept, see `rating_count`),
    /// experts first, by name.
    pub fn raters(&self) -> StoreResult<Vec<RaterSummary>> {
        let mut stmt = self.conn().prepare(
            "SELECT r.id, r.name, r.kind, r.model_id, r.family, COALESCE(k.ratings, 0),
                    COALESCE(k.responses, 0),
                    (SELECT COUNT(*) FROM assignment a WHERE a.rater_id = r.id)
             FROM rater r LEFT JOIN rating_count k ON k.rater_id = r.id
             ORDER BY r.kind, r.name",
        )?;
        let rows = stmt.query_map([], |r| {
            let kind: String = r.get(2)?;
            Ok(RaterSummary {
                id: r.get(0)?,
                name: r.get(1)?,
                kind: RaterKind::parse(&kind).unwrap_or(RaterKind::Expert),
                model_id: r.get(3)?,
                family: r.get(4)?,
                ratings: r.get(5)?,
                responses_rated: r.get(6)?,
                assigned: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One rater by id.
    pub fn rater(&self, id: i64) -> StoreResult<Option<RaterRecord>> {
        Ok(self
            .conn()
            .prepare_cached(&format!("SELECT {RATER_COLUMNS} FROM rater WHERE id = ?1"))?
            .query_row([id], rater_record)
            .optional()?)
    }

    /// One rater by name.
    pub fn rater_named(&self, name: &str) -> StoreResult<Option<RaterRecord>> {
        Ok(self
            .conn()
            .prepare_cached(&format!(
                "SELECT {RATER_COLUMNS} FROM rater WHERE name = ?1"
            ))?
            .query_row([name], rater_record)
            .optional()?)
    }

    /// Every rater, by name.
    pub fn rater_records(&self) -> StoreResult<Vec<RaterRecord>> {
        let mut stmt = self
            .conn()
            .prepare(&format!("SELECT {RATER_COLUMNS} FROM rater ORDER BY name"))?;
        let rows = stmt.query_map([], rater_record)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The judges holding a rating on some criterion of the rubric stored under `rubric_key`,
    /// by name (each judge is looked up through the rating index by criterion and rater, so a
    /// study of millions of ratings answers at once).
    pub fn judges_rating_rubric(&self, rubric_key: &str) -> StoreResult<Vec<RaterRecord>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {RATER_COLUMNS} FROM rater r0 WHERE r0.kind = 'judge' AND EXISTS (
                 SELECT 1 FROM criterion c JOIN rubric b ON b.id = c.rubric_id
                 JOIN rating g ON g.criterion_id = c.id AND g.rater_id = r0.id
                 WHERE b.key = ?1)
             ORDER BY r0.name"
        ))?;
        let rows = stmt.query_map([rubric_key], rater_record)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl StudyTx<'_> {
    /// Insert a rater, or return the id of the rater already stored under the same name and kind.
    pub fn upsert_rater(&mut self, r: &NewRater<'_>) -> StoreResult<i64> {
        let existing: Option<(i64, String)> = self
            .conn()
            .query_row(
                "SELECT id, kind FROM rater WHERE name = ?1",
                [r.name],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        if let Some((id, kind)) = existing {
            if kind != r.kind.as_str() {
                return Err(StoreError::Invalid(format!(
                    "a rater named {} already exists as {kind}",
                    quoted(&r.name)
                )));
            }
            return Ok(id);
        }
        self.conn().execute(
            "INSERT INTO rater(kind, name, model_id, family, queue_seed, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                r.kind.as_str(),
                r.name,
                r.model_id,
                r.family,
                r.queue_seed,
                self.now
            ],
        )?;
        Ok(self.conn().last_insert_rowid())
    }

    /// The id of the rater named `name`, if any.
    pub fn rater_id(&self, name: &str) -> StoreResult<Option<i64>> {
        Ok(self
            .conn()
            .query_row("SELECT id FROM rater WHERE name = ?1", [name], |r| r.get(0))
            .optional()?)
    }

    /// Rater `rater_id`'s time on task is counted up to now (`only_if_unset`: only when it was
    /// never counted, so the clock starts).
    pub fn count_time_until_now(&mut self, rater_id: i64, only_if_unset: bool) -> StoreResult<()> {
        let sql = if only_if_unset {
            "INSERT INTO time_counted(rater_id, until) VALUES (?1, ?2) ON CONFLICT DO NOTHING"
        } else {
            "INSERT INTO time_counted(rater_id, until) VALUES (?1, ?2)
             ON CONFLICT(rater_id) DO UPDATE SET until = MAX(until, excluded.until)"
        };
        self.conn()
            .prepare_cached(sql)?
            .execute(params![rater_id, self.now])?;
        Ok(())
    }

    /// Record where a rater now stands on the rating screen.
    pub fn set_session_item(&mut self, rater_id: i64, item: i64) -> StoreResult<()> {
        self.conn().execute(
            "INSERT INTO rater_session(rater_id, item, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(rater_id) DO UPDATE SET item = excluded.item, updated_at = excluded.updated_at",
            params![rater_id, item, self.now],
        )?;
        Ok(())
    }
}

/// Reads a store and a write transaction share (through their [`StudyRead`](super::StudyRead)).
impl super::StudyRead<'_> {
    /// The moment up to which rater `rater_id`'s time on task has been counted, if it has.
    pub fn time_counted_until(&self, rater_id: i64) -> StoreResult<Option<Millis>> {
        Ok(self
            .conn()
            .prepare_cached("SELECT until FROM time_counted WHERE rater_id = ?1")?
            .query_row([rater_id], |r| r.get(0))
            .optional()?)
    }

    /// The item a rater last stood at on the rating screen.
    pub fn session_item(&self, rater_id: i64) -> StoreResult<Option<i64>> {
        session_item(self.conn(), rater_id)
    }
}
