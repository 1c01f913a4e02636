//! The `flag` table: an item a rater flagged, with their reason, for the lead's attention; and
//! the limits every flag is held to wherever it is written (the window, a browser, a package's
//! return), an answer's or a pair's: at most [`MAX_FLAGS_PER_ITEM`] per rater and item, each
//! reason at most [`MAX_FLAG_REASON_BYTES`].

use super::{Store, StoreResult, StudyTx};
use crate::base::clock::Millis;
use rusqlite::{params, OptionalExtension};

/// The most flags one rater may raise on one item (an answer or a pair), open or resolved.
pub const MAX_FLAGS_PER_ITEM: usize = 20;

/// The longest flag reason, in bytes of UTF-8 (a note for the lead: some 16,000 Latin or 5,000
/// Chinese characters).
pub const MAX_FLAG_REASON_BYTES: usize = 16 * 1024;

/// A flag as stored (without its rater).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FlagRecord {
    pub response_id: i64,
    pub reason: String,
    pub created_at: Millis,
    pub resolved_at: Option<Millis>,
}

impl Store {
    /// Every flag a rater raised.
    pub fn flags_of_rater(&self, rater_id: i64) -> StoreResult<Vec<FlagRecord>> {
        let mut stmt = self.conn().prepare(
            "SELECT response_id, reason, created_at, resolved_at FROM flag WHERE rater_id = ?1",
        )?;
        let rows = stmt.query_map([rater_id], |r| {
            Ok(FlagRecord {
                response_id: r.get(0)?,
                reason: r.get(1)?,
                created_at: r.get(2)?,
                resolved_at: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The reason of the rater's latest open flag on a response, if any.
    pub fn open_flag_reason(&self, rater_id: i64, response_id: i64) -> StoreResult<Option<String>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT reason FROM flag WHERE rater_id = ?1 AND response_id = ?2
                 AND resolved_at IS NULL ORDER BY id DESC LIMIT 1",
                params![rater_id, response_id],
                |r| r.get(0),
            )
            .optional()?)
    }
}

impl StudyTx<'_> {
    /// How many flags (open or resolved) the rater raised on a response.
    pub fn flag_count(&self, rater_id: i64, response_id: i64) -> StoreResult<usize> {
        let n: i64 = self.conn().query_row(
            "SELECT COUNT(*) FROM flag WHERE rater_id = ?1 AND response_id = ?2",
            params![rater_id, response_id],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }

    /// How many flags (open or resolved) the rater raised on a pair.
    pub fn pair_flag_count(&self, rater_id: i64, pair_id: i64) -> StoreResult<usize> {
        let n: i64 = self.conn().query_row(
            "SELECT COUNT(*) FROM pair_flag WHERE rater_id = ?1 AND pair_id = ?2",
            params![rater_id, pair_id],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }

    /// Record a flag a rater raised on a response.
    pub fn add_flag(&mut self, rater_id: i64, response_id: i64, reason: &str) -> StoreResult<i64> {
        self.conn().execute(
            "INSERT INTO flag(rater_id, response_id, reason, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![rater_id, response_id, reason, self.now],
        )?;
        Ok(self.conn().last_insert_rowid())
    }

    /// Whether the rater already has this flag (same response, reason and time).
    pub fn has_flag(&self, rater_id: i64, flag: &FlagRecord) -> StoreResult<bool> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT 1 FROM flag WHERE rater_id = ?1 AND response_id = ?2 AND reason = ?3
                 AND created_at = ?4",
            )?
            .query_row(
                params![rater_id, flag.response_id, flag.reason, flag.created_at],
                |r| r.get::<_, i64>(0),
            )
            .optional()?
            .is_some())
    }

    /// Copy a flag from another study (a package), keeping its times.
    pub fn copy_flag(&mut self, rater_id: i64, flag: &FlagRecord) -> StoreResult<()> {
        self.conn()
            .prepare_cached(
                "INSERT INTO flag(rater_id, response_id, reason, created_at, resolved_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                rater_id,
                flag.response_id,
                flag.reason,
                flag.created_at,
                flag.resolved_at
            ])?;
        Ok(())
    }
}
