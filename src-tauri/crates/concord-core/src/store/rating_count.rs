//! The `rating_count` table: per rater, the first-occasion ratings with a value and the responses
//! with a first-occasion rating (with a value or missing), kept as the ratings are written so the
//! first screen and the rater list read them instead of counting 10⁶–10⁷ rows. Only
//! `store/rating.rs` changes ratings, and each of its writes moves these counts in the same
//! transaction: a single rating by one row's difference, a bulk import once for the whole import
//! (see [`super::RatingImport`]). The counts are derived: [`Store::kept_count_differences`]
//! recounts them from `rating` and names every rater where the two disagree.

use super::{Store, StoreResult};
use rusqlite::{params, Connection};
use serde::Serialize;
use std::collections::BTreeMap;

/// Add to a rater's kept counts (a rater without a row counts zero).
pub(super) fn add(c: &Connection, rater_id: i64, ratings: i64, responses: i64) -> StoreResult<()> {
    if ratings == 0 && responses == 0 {
        return Ok(());
    }
    c.prepare_cached(
        "INSERT INTO rating_count(rater_id, ratings, responses) VALUES (?1, ?2, ?3)
         ON CONFLICT(rater_id) DO UPDATE SET ratings = ratings + excluded.ratings,
             responses = responses + excluded.responses",
    )?
    .execute(params![rater_id, ratings, responses])?;
    Ok(())
}

/// Count one rater's ratings anew from `rating` and keep the result.
pub(super) fn recount(c: &Connection, rater_id: i64) -> StoreResult<()> {
    let (ratings, responses) = count_from_ratings(c, rater_id)?;
    c.prepare_cached(
        "INSERT INTO rating_count(rater_id, ratings, responses) VALUES (?1, ?2, ?3)
         ON CONFLICT(rater_id) DO UPDATE SET ratings = excluded.ratings,
             responses = excluded.responses",
    )?
    .execute(params![rater_id, ratings, responses])?;
    Ok(())
}

fn count_from_ratings(c: &Connection, rater_id: i64) -> StoreResult<(i64, i64)> {
    Ok(c.prepare_cached(
        "SELECT COUNT(value), COUNT(DISTINCT response_id) FROM rating
             WHERE rater_id = ?1 AND occasion = 0",
    )?
    .query_row([rater_id], |r| Ok((r.get(0)?, r.get(1)?)))?)
}

/// Whether a rater has a first-occasion rating of a response other than the row `except`.
pub(super) fn rated_response(
    c: &Connection,
    rater_id: i64,
    response_id: i64,
    except: i64,
) -> StoreResult<bool> {
    Ok(c.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM rating WHERE rater_id = ?1 AND response_id = ?2
                 AND occasion = 0 AND id <> ?3)",
    )?
    .query_row(params![rater_id, response_id, except], |r| r.get(0))?)
}

/// Whether a rater has any first-occasion rating.
pub(super) fn has_ratings(c: &Connection, rater_id: i64) -> StoreResult<bool> {
    Ok(c.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM rating WHERE rater_id = ?1 AND occasion = 0)",
    )?
    .query_row([rater_id], |r| r.get(0))?)
}

/// A rater's counts: first-occasion ratings with a value, responses with a first-occasion
/// rating.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RatingCounts {
    pub ratings: i64,
    pub responses: i64,
}

/// A rater whose kept counts differ from a recount.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeptCountDifference {
    pub rater_id: i64,
    pub kept: RatingCounts,
    pub recounted: RatingCounts,
}

impl Store {
    /// Every rater whose kept counts differ from a full recount of `rating` (empty when they all
    /// agree). Reads every rating: for tests and checks, not for screens.
    pub fn kept_count_differences(&self) -> StoreResult<Vec<KeptCountDifference>> {
        let c = self.conn();
        let read = |sql: &str| -> StoreResult<BTreeMap<i64, RatingCounts>> {
            let mut stmt = c.prepare(sql)?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get(0)?,
                    RatingCounts {
                        ratings: r.get(1)?,
                        responses: r.get(2)?,
                    },
                ))
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        };
        let kept = read("SELECT rater_id, ratings, responses FROM rating_count")?;
        let recounted = read(
            "SELECT rater_id, COUNT(value), COUNT(DISTINCT response_id) FROM rating
             WHERE occasion = 0 GROUP BY rater_id",
        )?;
        let mut raters: Vec<i64> = kept.keys().chain(recounted.keys()).copied().collect();
        raters.sort_unstable();
        raters.dedup();
        Ok(raters
            .into_iter()
            .filter_map(|rater_id| {
                let k = kept.get(&rater_id).copied().unwrap_or_default();
                let r = recounted.get(&rater_id).copied().unwrap_or_default();
                (k != r).then_some(KeptCountDifference {
                    rater_id,
                    kept: k,
                    recounted: r,
                })
            })
            .collect())
    }

    /// First-occasion ratings with a value, in the whole study (from the kept counts).
    pub fn rating_total(&self) -> StoreResult<i64> {
        Ok(self.conn().query_row(
            "SELECT COALESCE(SUM(ratings), 0) FROM rating_count",
            [],
            |r| r.get(0),
        )?)
    }
}
