//! The `rating` table and its append-only `rating_history`: one value per rater × response ×
//! criterion × [`Occasion`] (the first rating, the blind test–retest repeat, and room for
//! consensus and adjudicated values). Every value — from the rating screen, an import, a judge
//! run, a rating sheet — is written by [`StudyTx::set_rating`] (the bulk
//! [`StudyTx::import_ratings`] hands every rating that already exists to it); a merged package
//! copies ratings with their own times and history. Whatever changes a rating's value, raw value
//! or rationale, the database's `rating_keeps_history` trigger copies the version it replaces
//! into the history (migration 12). The bulk import ([`RatingImport`]) writes its rows a few
//! hundred to a statement and digests them for the audit chain itself instead of through the
//! chain's per-row trigger.

use super::rating_count;
use super::rubric::{scale, scales};
use super::{Store, StoreError, StoreResult, StudyTx};
use crate::base::clock::Millis;
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use std::collections::HashMap;

/// Which rating of an item a value is. Stored as a small integer (`occasion` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Occasion {
    /// The rater's rating of the item.
    First,
    /// The blind second rating of a test–retest item.
    Retest,
    /// A value the raters agreed on together.
    Consensus,
    /// A value decided by an adjudicator.
    Adjudicated,
}

impl Occasion {
    /// Every occasion, in export order.
    pub const ALL: [Occasion; 4] = [
        Occasion::First,
        Occasion::Retest,
        Occasion::Consensus,
        Occasion::Adjudicated,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Occasion::First => "first",
            Occasion::Retest => "retest",
            Occasion::Consensus => "consensus",
            Occasion::Adjudicated => "adjudicated",
        }
    }

    pub fn parse(s: &str) -> Option<Occasion> {
        Occasion::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// The stored code (see migration 12).
    fn code(self) -> i64 {
        match self {
            Occasion::First => 0,
            Occasion::Retest => 1,
            Occasion::Consensus => 2,
            Occasion::Adjudicated => 3,
        }
    }

    fn from_code(code: i64) -> rusqlite::Result<Occasion> {
        Occasion::ALL
            .into_iter()
            .find(|o| o.code() == code)
            .ok_or(rusqlite::Error::IntegralValueOutOfRange(4, code))
    }
}

/// One value entered for rater × response × criterion on one occasion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RatingInput<'a> {
    pub rater_id: i64,
    pub response_id: i64,
    pub criterion_id: i64,
    pub occasion: Occasion,
    /// `None` records "missing" explicitly (e.g. an out-of-scale value treated as missing).
    pub value: Option<i64>,
    /// The value as it appeared in a source file when it differs from `value`.
    pub raw_value: Option<&'a str>,
    pub rationale: Option<&'a str>,
    /// Where the value came from: `screen`, `import:<file>`, `judge:<run>`, `package:<id>`…
    pub origin: &'a str,
}

/// What a rating write did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum RatingOutcome {
    Inserted,
    Updated { previous: Option<i64> },
    Unchanged,
}

/// One value to import for rater × response × criterion (first occasion).
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

/// One earlier value of a rating.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RatingVersion {
    pub value: Option<i64>,
    pub rationale: Option<String>,
    pub origin: String,
    pub valid_from: i64,
    pub replaced_at: Option<i64>,
}

/// A rating row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRating {
    pub id: i64,
    pub rater_id: i64,
    pub response_id: i64,
    pub criterion_id: i64,
    pub occasion: Occasion,
    pub value: Option<i64>,
    pub raw_value: Option<String>,
    pub rationale: Option<String>,
    pub origin: String,
    pub created_at: Millis,
    pub updated_at: Millis,
}

/// A rating as the exports read it ([`Store::for_each_rating_signed`]): what they write, and
/// the time of the latest signature covering it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedRating {
    pub rater_id: i64,
    pub response_id: i64,
    pub criterion_id: i64,
    pub occasion: Occasion,
    pub value: Option<i64>,
    pub raw_value: Option<String>,
    pub rationale: Option<String>,
    pub created_at: Millis,
    pub updated_at: Millis,
    pub signed_at: Option<Millis>,
}

impl StoredRating {
    /// Value, raw value and rationale: what a revision changes.
    pub fn content(&self) -> RatingContent {
        RatingContent {
            value: self.value,
            raw_value: self.raw_value.clone(),
            rationale: self.rationale.clone(),
        }
    }
}

/// What a revision of a rating changes: value, raw value and rationale together.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RatingContent {
    pub value: Option<i64>,
    pub raw_value: Option<String>,
    pub rationale: Option<String>,
}

/// One earlier version of a rating, as `rating_history` keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryRow {
    pub value: Option<i64>,
    pub raw_value: Option<String>,
    pub rationale: Option<String>,
    pub origin: String,
    pub valid_from: Millis,
    pub replaced_at: Millis,
}

/// A rating copied from another study (a package) with its own times and history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopiedRating<'a> {
    pub rater_id: i64,
    pub response_id: i64,
    pub criterion_id: i64,
    pub occasion: Occasion,
    pub content: &'a RatingContent,
    pub origin: &'a str,
    pub created_at: Millis,
    pub updated_at: Millis,
}

const RATING_COLUMNS: &str = "id, rater_id, response_id, criterion_id, occasion, value, raw_value,
     rationale, origin, created_at, updated_at FROM rating";

fn stored(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredRating> {
    Ok(StoredRating {
        id: r.get(0)?,
        rater_id: r.get(1)?,
        response_id: r.get(2)?,
        criterion_id: r.get(3)?,
        occasion: Occasion::from_code(r.get(4)?)?,
        value: r.get(5)?,
        raw_value: r.get(6)?,
        rationale: r.get(7)?,
        origin: r.get(8)?,
        created_at: r.get(9)?,
        updated_at: r.get(10)?,
    })
}

fn find(
    c: &Connection,
    rater_id: i64,
    response_id: i64,
    criterion_id: i64,
    occasion: Occasion,
) -> StoreResult<Option<StoredRating>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {RATING_COLUMNS}
         WHERE rater_id = ?1 AND response_id = ?2 AND criterion_id = ?3 AND occasion = ?4"
    ))?
    .query_row(
        params![rater_id, response_id, criterion_id, occasion.code()],
        stored,
    )
    .optional()?)
}

/// Every rating (optionally of one rater, through its index), in no particular order.
fn scan(
    c: &Connection,
    rater_id: Option<i64>,
    f: &mut dyn FnMut(StoredRating) -> StoreResult<()>,
) -> StoreResult<()> {
    let mut stmt = c.prepare(&format!(
        "SELECT {RATING_COLUMNS} WHERE ?1 IS NULL OR rater_id = ?1"
    ))?;
    let mut rows = stmt.query([rater_id])?;
    while let Some(row) = rows.next()? {
        f(stored(row)?)?;
    }
    Ok(())
}

fn history(c: &Connection, rating_id: i64) -> StoreResult<Vec<HistoryRow>> {
    let mut stmt = c.prepare_cached(
        "SELECT value, raw_value, rationale, origin, valid_from, replaced_at
         FROM rating_history WHERE rating_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([rating_id], |r| {
        Ok(HistoryRow {
            value: r.get(0)?,
            raw_value: r.get(1)?,
            rationale: r.get(2)?,
            origin: r.get(3)?,
            valid_from: r.get(4)?,
            replaced_at: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl Store {
    /// The stored value and raw value of one first-occasion rating.
    pub fn rating_value(
        &self,
        rater_id: i64,
        response_id: i64,
        criterion_id: i64,
    ) -> StoreResult<Option<(Option<i64>, Option<String>)>> {
        Ok(find(
            self.conn(),
            rater_id,
            response_id,
            criterion_id,
            Occasion::First,
        )?
        .map(|r| (r.value, r.raw_value)))
    }

    /// The current value and every earlier value of one first-occasion rating, newest first.
    pub fn rating_versions(
        &self,
        rater_id: i64,
        response_id: i64,
        criterion_id: i64,
    ) -> StoreResult<Vec<RatingVersion>> {
        let Some(current) = find(
            self.conn(),
            rater_id,
            response_id,
            criterion_id,
            Occasion::First,
        )?
        else {
            return Ok(Vec::new());
        };
        let mut out = vec![RatingVersion {
            value: current.value,
            rationale: current.rationale,
            origin: current.origin,
            valid_from: current.updated_at,
            replaced_at: None,
        }];
        let mut stmt = self.conn().prepare(
            "SELECT value, rationale, origin, valid_from, replaced_at FROM rating_history
             WHERE rating_id = ?1 ORDER BY replaced_at DESC, id DESC",
        )?;
        let rows = stmt.query_map([current.id], |r| {
            Ok(RatingVersion {
                value: r.get(0)?,
                rationale: r.get(1)?,
                origin: r.get(2)?,
                valid_from: r.get(3)?,
                replaced_at: r.get(4)?,
            })
        })?;
        for row in rows {
            out.push(row?);
        }
        Ok(out)
    }

    /// A rater's values on one response and occasion, by criterion key.
    pub fn own_values(
        &self,
        rater_id: i64,
        response_id: i64,
        occasion: Occasion,
    ) -> StoreResult<Vec<(String, Option<i64>)>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT c.key, g.value FROM rating g JOIN criterion c ON c.id = g.criterion_id
             WHERE g.rater_id = ?1 AND g.response_id = ?2 AND g.occasion = ?3",
        )?;
        let rows = stmt.query_map(params![rater_id, response_id, occasion.code()], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Visit every rating of the study (or of one rater), every occasion; order unspecified.
    pub fn for_each_rating(
        &self,
        rater_id: Option<i64>,
        mut f: impl FnMut(StoredRating) -> StoreResult<()>,
    ) -> StoreResult<()> {
        scan(self.conn(), rater_id, &mut f)
    }

    /// Every rating of the study (or of one rater), every occasion, in no particular order, as
    /// the exports read it ([`ExportedRating`]: no id or origin), with the time of the latest
    /// signature that covers it (none when unsigned). One statement: each row looks its
    /// signatures up through the signature links' primary key, so memory stays flat; a study
    /// without signatures skips the lookups.
    pub fn for_each_rating_signed(
        &self,
        rater_id: Option<i64>,
        mut f: impl FnMut(ExportedRating) -> StoreResult<()>,
    ) -> StoreResult<()> {
        let signed_at = if self.has_signed_ratings()? {
            "(SELECT MAX(s.signed_at) FROM signed_rating l JOIN signature s ON s.id = l.signature_id
              WHERE l.rating_id = rating.id)"
        } else {
            "NULL"
        };
        // One rater's ratings through the unique index (it leads with the rater); the whole
        // table without a condition to test on each row.
        let only = if rater_id.is_some() {
            "WHERE rater_id = ?1"
        } else {
            ""
        };
        let mut stmt = self.conn().prepare(&format!(
            "SELECT rater_id, response_id, criterion_id, occasion, value, raw_value, rationale,
                 created_at, updated_at, {signed_at}
             FROM rating {only}"
        ))?;
        let mut rows = match rater_id {
            Some(id) => stmt.query([id])?,
            None => stmt.query([])?,
        };
        while let Some(r) = rows.next()? {
            f(ExportedRating {
                rater_id: r.get(0)?,
                response_id: r.get(1)?,
                criterion_id: r.get(2)?,
                occasion: Occasion::from_code(r.get(3)?)?,
                value: r.get(4)?,
                raw_value: r.get(5)?,
                rationale: r.get(6)?,
                created_at: r.get(7)?,
                updated_at: r.get(8)?,
                signed_at: r.get(9)?,
            })?;
        }
        Ok(())
    }

    /// A rater's ratings on every occasion, in the order they were first entered.
    pub fn ratings_of_rater(&self, rater_id: i64) -> StoreResult<Vec<StoredRating>> {
        let mut out = Vec::new();
        scan(self.conn(), Some(rater_id), &mut |r| {
            out.push(r);
            Ok(())
        })?;
        out.sort_by_key(|r| (r.occasion, r.id));
        Ok(out)
    }

    /// The earlier versions of one rating, oldest first.
    pub fn rating_history(&self, rating_id: i64) -> StoreResult<Vec<HistoryRow>> {
        history(self.conn(), rating_id)
    }

    /// The history of every rating of one rater: rating id → earlier versions,
    /// oldest first.
    pub fn history_of_rater(&self, rater_id: i64) -> StoreResult<HashMap<i64, Vec<HistoryRow>>> {
        let mut stmt = self.conn().prepare(
            "SELECT h.rating_id, h.value, h.raw_value, h.rationale, h.origin, h.valid_from,
                 h.replaced_at FROM rating_history h JOIN rating g ON g.id = h.rating_id
             WHERE g.rater_id = ?1 ORDER BY h.id",
        )?;
        let rows = stmt.query_map([rater_id], |r| {
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
        let mut out: HashMap<i64, Vec<HistoryRow>> = HashMap::new();
        for row in rows {
            let (id, h) = row?;
            out.entry(id).or_default().push(h);
        }
        Ok(out)
    }

    /// Visit every first-occasion value (not missing) on the criteria of one rubric:
    /// `f(rater, response, criterion, value)`.
    pub fn for_each_rubric_value(
        &self,
        rubric_id: i64,
        mut f: impl FnMut(i64, i64, i64, i64),
    ) -> StoreResult<()> {
        // One pass over the table in its own order (`+` keeps the planner off the criterion
        // index, whose rowid jumps made this read 3× slower on 2.9 million ratings).
        let mut stmt = self.conn().prepare(
            "SELECT g.rater_id, g.response_id, g.criterion_id, g.value FROM rating g
             WHERE +g.criterion_id IN (SELECT id FROM criterion WHERE rubric_id = ?1)
               AND g.value IS NOT NULL AND g.occasion = 0",
        )?;
        let mut rows = stmt.query(params![rubric_id])?;
        while let Some(row) = rows.next()? {
            f(row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
        }
        Ok(())
    }

    /// Visit the first-occasion values (not missing) of some raters on some criteria, one
    /// (criterion, rater) range of the `rating_by_criterion` index at a time, so reading the
    /// experts' values of a study never touches its judges' millions:
    /// `f(rater, response, criterion, value)`.
    pub fn for_each_value_of_raters(
        &self,
        criterion_ids: &[i64],
        rater_ids: &[i64],
        mut f: impl FnMut(i64, i64, i64, i64),
    ) -> StoreResult<()> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT g.response_id, g.value FROM rating g
             WHERE g.criterion_id = ?1 AND g.rater_id = ?2 AND g.value IS NOT NULL
               AND g.occasion = 0",
        )?;
        for &criterion in criterion_ids {
            for &rater in rater_ids {
                let mut rows = stmt.query(params![criterion, rater])?;
                while let Some(row) = rows.next()? {
                    f(rater, row.get(0)?, criterion, row.get(1)?);
                }
            }
        }
        Ok(())
    }

    /// Visit the first-occasion and retest values (not missing) of some raters on some criteria
    /// through the `rating_by_criterion` index, as [`Self::for_each_value_of_raters`] does:
    /// `f(rater, response, criterion, retest, value)`.
    pub fn for_each_first_and_retest_value(
        &self,
        criterion_ids: &[i64],
        rater_ids: &[i64],
        mut f: impl FnMut(i64, i64, i64, bool, i64),
    ) -> StoreResult<()> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT g.response_id, g.occasion, g.value FROM rating g
             WHERE g.criterion_id = ?1 AND g.rater_id = ?2 AND g.value IS NOT NULL
               AND g.occasion IN (?3, ?4)",
        )?;
        let (first, retest) = (Occasion::First.code(), Occasion::Retest.code());
        for &criterion in criterion_ids {
            for &rater in rater_ids {
                let mut rows = stmt.query(params![criterion, rater, first, retest])?;
                while let Some(row) = rows.next()? {
                    let occasion: i64 = row.get(1)?;
                    f(
                        rater,
                        row.get(0)?,
                        criterion,
                        occasion == retest,
                        row.get(2)?,
                    );
                }
            }
        }
        Ok(())
    }

    /// Visit every first-occasion value (not missing) of one response, through the
    /// `rating_by_response` index: `f(rater, criterion, value)`.
    pub fn for_each_value_of_response(
        &self,
        response_id: i64,
        mut f: impl FnMut(i64, i64, i64),
    ) -> StoreResult<()> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT g.rater_id, g.criterion_id, g.value FROM rating g
             WHERE g.response_id = ?1 AND g.value IS NOT NULL AND g.occasion = 0",
        )?;
        let mut rows = stmt.query(params![response_id])?;
        while let Some(row) = rows.next()? {
            f(row.get(0)?, row.get(1)?, row.get(2)?);
        }
        Ok(())
    }

    /// The kinds (`expert`, `judge`) of the raters with first-occasion ratings on a rubric.
    pub fn rater_kinds_of_rubric(&self, rubric_key: &str) -> StoreResult<Vec<String>> {
        let mut stmt = self.conn().prepare(
            "SELECT DISTINCT r.kind FROM rating g JOIN rater r ON r.id = g.rater_id
             JOIN criterion c ON c.id = g.criterion_id JOIN rubric b ON b.id = c.rubric_id
             WHERE b.key = ?1 AND g.occasion = 0",
        )?;
        let rows = stmt.query_map([rubric_key], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl StudyTx<'_> {
    /// Enter a rating value. A different earlier value (or rationale) is kept in the history (by
    /// the `rating_keeps_history` trigger) before it is replaced; an identical value changes
    /// nothing.
    pub fn set_rating(&mut self, input: &RatingInput<'_>) -> StoreResult<RatingOutcome> {
        self.check_scale(input)?;
        let existing = find(
            self.conn(),
            input.rater_id,
            input.response_id,
            input.criterion_id,
            input.occasion,
        )?;
        match existing {
            None => {
                self.conn()
                    .prepare_cached(
                        "INSERT INTO rating(rater_id, response_id, criterion_id, occasion, value,
                             raw_value, rationale, origin, created_at, updated_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
                    )?
                    .execute(params![
                        input.rater_id,
                        input.response_id,
                        input.criterion_id,
                        input.occasion.code(),
                        input.value,
                        input.raw_value,
                        input.rationale,
                        input.origin,
                        self.now
                    ])?;
                if input.occasion == Occasion::First {
                    let id = self.conn().last_insert_rowid();
                    count_new_rating(
                        self.conn(),
                        input.rater_id,
                        input.response_id,
                        id,
                        input.value,
                    )?;
                }
                self.record_rating_event(super::audit::Event::Rating {
                    rater_id: input.rater_id,
                    response_id: input.response_id,
                    criterion_id: input.criterion_id,
                    occasion: input.occasion,
                    from: None,
                    to: input.value,
                    origin: input.origin.to_string(),
                    reason: self.change_reason.clone(),
                    after_signature: None,
                });
                Ok(RatingOutcome::Inserted)
            }
            Some(old) => {
                if old.value == input.value
                    && old.raw_value.as_deref() == input.raw_value
                    && old.rationale.as_deref() == input.rationale
                {
                    return Ok(RatingOutcome::Unchanged);
                }
                let signed = self.rating_lock(old.id)?;
                if let (Some((signature, signer)), None) = (&signed, &self.change_reason) {
                    return Err(StoreError::SignedRating {
                        signer: signer.clone(),
                        signature: *signature,
                    });
                }
                self.conn()
                    .prepare_cached(
                        "UPDATE rating SET value = ?2, raw_value = ?3, rationale = ?4, origin = ?5,
                             updated_at = ?6 WHERE id = ?1",
                    )?
                    .execute(params![
                        old.id,
                        input.value,
                        input.raw_value,
                        input.rationale,
                        input.origin,
                        self.now
                    ])?;
                if input.occasion == Occasion::First {
                    count_changed_value(self.conn(), input.rater_id, old.value, input.value)?;
                }
                self.record_rating_event(super::audit::Event::Rating {
                    rater_id: input.rater_id,
                    response_id: input.response_id,
                    criterion_id: input.criterion_id,
                    occasion: input.occasion,
                    from: Some(old.value),
                    to: input.value,
                    origin: input.origin.to_string(),
                    reason: self.change_reason.clone(),
                    after_signature: signed.map(|(s, _)| s),
                });
                Ok(RatingOutcome::Updated {
                    previous: old.value,
                })
            }
        }
    }

    /// Change a rating with a reason — the only way to change one an expert has signed off. The
    /// reason and the signature it departs from are recorded in the audit chain.
    pub fn set_rating_with_reason(
        &mut self,
        input: &RatingInput<'_>,
        reason: &str,
    ) -> StoreResult<RatingOutcome> {
        if reason.trim().is_empty() {
            return Err(StoreError::Invalid(
                "a change to a signed rating needs a reason".into(),
            ));
        }
        self.change_reason = Some(reason.trim().to_string());
        let out = self.set_rating(input);
        self.change_reason = None;
        out
    }

    /// Values from the screen must lie on the criterion's scale; imported raw values that do not
    /// (kept as-is by the user's choice) carry their `raw_value` and origin and are allowed.
    fn check_scale(&self, input: &RatingInput<'_>) -> StoreResult<()> {
        let Some(value) = input.value else {
            return Ok(());
        };
        let s = scale(self.conn(), input.criterion_id)?;
        if (s.min..=s.max).contains(&value) || input.raw_value.is_some() {
            Ok(())
        } else {
            Err(StoreError::Invalid(format!(
                "{value} is outside the scale {}–{} of criterion {}",
                s.min, s.max, s.key
            )))
        }
    }

    /// A rater's (criterion id, value, origin) on one response and occasion.
    pub fn own_ratings(
        &self,
        rater_id: i64,
        response_id: i64,
        occasion: Occasion,
    ) -> StoreResult<Vec<(i64, Option<i64>, String)>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT criterion_id, value, origin FROM rating
             WHERE rater_id = ?1 AND response_id = ?2 AND occasion = ?3",
        )?;
        let rows = stmt.query_map(params![rater_id, response_id, occasion.code()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many criteria of a rubric a rater has given a value on one response and occasion.
    pub fn count_rated(
        &self,
        rater_id: i64,
        response_id: i64,
        rubric_id: i64,
        occasion: Occasion,
    ) -> StoreResult<i64> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT COUNT(*) FROM rating g JOIN criterion c ON c.id = g.criterion_id
                 WHERE g.rater_id = ?1 AND g.response_id = ?2 AND c.rubric_id = ?3
                   AND g.occasion = ?4 AND g.value IS NOT NULL",
            )?
            .query_row(
                params![rater_id, response_id, rubric_id, occasion.code()],
                |r| r.get(0),
            )?)
    }

    /// Copy a rating from another study (a package) with its own times; returns its new id.
    pub fn copy_rating(&mut self, r: &CopiedRating<'_>) -> StoreResult<i64> {
        self.conn()
            .prepare_cached(
                "INSERT INTO rating(rater_id, response_id, criterion_id, occasion, value,
                     raw_value, rationale, origin, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .execute(params![
                r.rater_id,
                r.response_id,
                r.criterion_id,
                r.occasion.code(),
                r.content.value,
                r.content.raw_value,
                r.content.rationale,
                r.origin,
                r.created_at,
                r.updated_at
            ])?;
        let id = self.conn().last_insert_rowid();
        if r.occasion == Occasion::First {
            count_new_rating(self.conn(), r.rater_id, r.response_id, id, r.content.value)?;
        }
        Ok(id)
    }

    /// Replace a rating's content with a revision made elsewhere (a package), keeping that
    /// revision's origin and time. The replaced version goes into the history (the trigger
    /// records it unless the caller already has, with its own times).
    pub fn revise_rating(
        &mut self,
        current: &StoredRating,
        content: &RatingContent,
        origin: &str,
        updated_at: Millis,
    ) -> StoreResult<()> {
        self.conn()
            .prepare_cached(
                "UPDATE rating SET value = ?2, raw_value = ?3, rationale = ?4,
                     origin = ?5, updated_at = ?6 WHERE id = ?1",
            )?
            .execute(params![
                current.id,
                content.value,
                content.raw_value,
                content.rationale,
                origin,
                updated_at
            ])?;
        if current.occasion == Occasion::First {
            count_changed_value(self.conn(), current.rater_id, current.value, content.value)?;
        }
        Ok(())
    }

    /// Add an earlier version to a rating's history unless that exact row is already there;
    /// returns whether it was added.
    pub fn merge_history_row(&mut self, rating_id: i64, h: &HistoryRow) -> StoreResult<bool> {
        let exists = self
            .conn()
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
                |r| r.get::<_, i64>(0),
            )
            .optional()?
            .is_some();
        if exists {
            return Ok(false);
        }
        self.add_history_row(rating_id, h)?;
        Ok(true)
    }

    /// Append an earlier version to a rating's history.
    pub fn add_history_row(&mut self, rating_id: i64, h: &HistoryRow) -> StoreResult<()> {
        self.conn()
            .prepare_cached(
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
        Ok(())
    }

    /// Put a rating's current version into its history (replaced at `replaced_at`) unless a
    /// version with its content and start time is there already; returns whether it was added.
    pub fn keep_current_in_history(
        &mut self,
        current: &StoredRating,
        replaced_at: Millis,
    ) -> StoreResult<bool> {
        let kept = self
            .conn()
            .prepare_cached(
                "SELECT 1 FROM rating_history WHERE rating_id = ?1
                 AND value IS ?2 AND raw_value IS ?3 AND rationale IS ?4 AND valid_from = ?5",
            )?
            .query_row(
                params![
                    current.id,
                    current.value,
                    current.raw_value,
                    current.rationale,
                    current.updated_at
                ],
                |r| r.get::<_, i64>(0),
            )
            .optional()?
            .is_some();
        if kept {
            return Ok(false);
        }
        self.add_history_row(
            current.id,
            &HistoryRow {
                value: current.value,
                raw_value: current.raw_value.clone(),
                rationale: current.rationale.clone(),
                origin: current.origin.clone(),
                valid_from: current.updated_at,
                replaced_at,
            },
        )?;
        Ok(true)
    }

    /// Write many imported ratings with one prepared statement; see [`RatingImport`].
    pub fn import_ratings(
        &mut self,
        ratings: impl IntoIterator<Item = ImportedRating>,
        origin: &str,
    ) -> StoreResult<BulkOutcome> {
        let mut import = self.begin_rating_import(origin)?;
        for r in ratings {
            self.import_rating(&mut import, r)?;
        }
        self.finish_rating_import(import)
    }

    /// Start a bulk rating import whose rows arrive one at a time (a file read as a stream).
    pub fn begin_rating_import(&mut self, origin: &str) -> StoreResult<RatingImport> {
        // Looked up for every row: foldhash, not the default SipHash.
        let scales = scales(self.conn())?.into_iter().collect();
        // A bulk import touches more pages than SQLite's default 2 MB cache holds; spilling them
        // to the WAL mid-transaction costs more than the import itself. Up to 64 MB are used only
        // as far as pages are actually touched.
        self.conn().execute_batch("PRAGMA cache_size = -65536")?;
        // New rows are digested for the audit chain here rather than by its per-row trigger
        // (see `write_pending`), when the table has exactly the columns that code hashes.
        let digest_here = super::audit::audited_columns(self.conn(), "rating")?
            .filter(|cols| cols.iter().map(String::as_str).eq(RATING_ROW_COLUMNS));
        Ok(RatingImport {
            scales,
            digest_here,
            trigger_aside: false,
            origin: origin.to_string(),
            pending: Vec::with_capacity(RATING_IMPORT_BATCH),
            insert_sql: chunk_insert_sql(INSERT_ROWS),
            outcome: BulkOutcome::default(),
            counts: Vec::new(),
        })
    }

    /// Write one imported rating. Ratings are gathered into batches of [`RATING_IMPORT_BATCH`]
    /// and each batch written with one prepared statement; one that already exists is updated
    /// through [`StudyTx::set_rating`] (so its earlier value is kept in the history). Memory
    /// stays bounded whatever the number of rows.
    pub fn import_rating(
        &mut self,
        import: &mut RatingImport,
        r: ImportedRating,
    ) -> StoreResult<()> {
        check_imported_scale(&import.scales, &r)?;
        import.pending.push(r);
        if import.pending.len() >= RATING_IMPORT_BATCH {
            self.write_pending(import)?;
        }
        Ok(())
    }

    /// Finish a bulk rating import: the last batch is written and the chain's insert trigger on
    /// `rating` put back.
    pub fn finish_rating_import(&mut self, mut import: RatingImport) -> StoreResult<BulkOutcome> {
        self.write_pending(&mut import)?;
        if import.trigger_aside {
            if let Some(at) = self.direct.iter().position(|d| d.table() == "rating") {
                let direct = self.direct.remove(at);
                super::audit::put_insert_trigger_back(self.conn(), &self.pending, direct)?;
            }
        }
        for (rater_id, counts) in import.counts {
            match counts.fresh {
                Some(_) => {
                    rating_count::add(self.conn(), rater_id, counts.ratings, counts.responses)?
                }
                None => rating_count::recount(self.conn(), rater_id)?,
            }
        }
        Ok(import.outcome)
    }

    fn write_pending(&mut self, import: &mut RatingImport) -> StoreResult<()> {
        if import.pending.is_empty() {
            return Ok(());
        }
        // With the chain's insert trigger in place every INSERT would run it, and a statement
        // with a trigger keeps a statement journal (a copy of each page it touches): most of a
        // bulk import's time. The trigger is set aside once for the whole import (dropping and
        // making it again for each batch would change the schema, and SQLite would compile the
        // INSERT anew) and each new row digested here from the values bound, in the table's
        // column order — the hash the trigger computes. It is put back by
        // `finish_rating_import`, or by the seal if the import never finishes; a rollback
        // restores it with the rest of the temporary schema.
        if import.digest_here.is_some() && !import.trigger_aside {
            self.digest_inserts_here(&["rating"])?;
            import.trigger_aside = true;
        }
        let pending = std::mem::take(&mut import.pending);
        // Every rater of the batch gets its entry in the counts before any of its rows is
        // written (the entry asks whether the rater had ratings before the import).
        for r in &pending {
            import_counts(self.conn(), &mut import.counts, r.rater_id)?;
        }
        // The largest id so far: a row SQLite inserts without an id gets the largest plus one.
        let mut last_id: i64 = self
            .conn()
            .prepare_cached("SELECT COALESCE(MAX(id), 0) FROM rating")?
            .query_row([], |r| r.get(0))?;
        let mut existing = Vec::new();
        let now = self.now;
        for chunk in pending.chunks(INSERT_ROWS) {
            let ids = self.insert_chunk(chunk, import, last_id)?;
            let mut direct = self.direct.iter_mut().find(|d| d.table() == "rating");
            for (r, id) in chunk.iter().zip(ids) {
                let Some(id) = id else {
                    existing.push(r.clone());
                    continue;
                };
                last_id = last_id.max(id);
                import.outcome.inserted += 1;
                if let Some((_, counts)) = import.counts.iter_mut().find(|(c, _)| *c == r.rater_id)
                {
                    counts.inserted(r.response_id, r.value);
                }
                if let Some(direct) = direct.as_mut() {
                    use rusqlite::types::ValueRef::{Integer, Null, Text};
                    direct.add(
                        [
                            Integer(id),
                            Integer(r.rater_id),
                            Integer(r.response_id),
                            Integer(r.criterion_id),
                            Integer(Occasion::First.code()),
                            r.value.map_or(Null, Integer),
                            optional_text(&r.raw_value),
                            optional_text(&r.rationale),
                            Text(import.origin.as_bytes()),
                            Integer(now),
                            Integer(now),
                        ]
                        .into_iter(),
                    );
                }
            }
        }
        // A rating that exists already is updated through `set_rating` (its earlier value goes
        // to the history); the chain's update trigger digests the change.
        for r in existing {
            match self.set_rating(&RatingInput {
                rater_id: r.rater_id,
                response_id: r.response_id,
                criterion_id: r.criterion_id,
                occasion: Occasion::First,
                value: r.value,
                raw_value: r.raw_value.as_deref(),
                rationale: r.rationale.as_deref(),
                origin: &import.origin,
            })? {
                RatingOutcome::Inserted => import.outcome.inserted += 1,
                RatingOutcome::Updated { .. } => import.outcome.updated += 1,
                RatingOutcome::Unchanged => import.outcome.unchanged += 1,
            }
        }
        Ok(())
    }

    /// Insert the ratings of `chunk` that do not exist yet with one statement, in order; the id
    /// each got, `None` for one that exists already (it is left as it is). `last_id` is the
    /// largest id in the table before: SQLite gives each new row the largest id plus one, so
    /// when every row is new their ids follow it in order. When some existed already, the new
    /// rows are read back by id to tell which.
    fn insert_chunk(
        &self,
        chunk: &[ImportedRating],
        import: &RatingImport,
        last_id: i64,
    ) -> StoreResult<Vec<Option<i64>>> {
        // The full-size statement is kept prepared; only an import's last, shorter chunk
        // prepares its own.
        let (mut kept, mut once);
        let insert: &mut rusqlite::Statement<'_> = if chunk.len() == INSERT_ROWS {
            kept = self.conn().prepare_cached(&import.insert_sql)?;
            &mut kept
        } else {
            once = self.conn().prepare(&chunk_insert_sql(chunk.len()))?;
            &mut once
        };
        insert.raw_bind_parameter(1, import.origin.as_str())?;
        insert.raw_bind_parameter(2, self.now)?;
        for (i, r) in chunk.iter().enumerate() {
            let at = 3 + i * 6;
            insert.raw_bind_parameter(at, r.rater_id)?;
            insert.raw_bind_parameter(at + 1, r.response_id)?;
            insert.raw_bind_parameter(at + 2, r.criterion_id)?;
            insert.raw_bind_parameter(at + 3, r.value)?;
            insert.raw_bind_parameter(at + 4, r.raw_value.as_deref())?;
            insert.raw_bind_parameter(at + 5, r.rationale.as_deref())?;
        }
        let changed = insert.raw_execute()?;
        let n = chunk.len() as i64;
        if changed == chunk.len() && self.conn().last_insert_rowid() == last_id + n {
            return Ok((1..=n).map(|i| Some(last_id + i)).collect());
        }
        // Some rows existed already: the new ones, in id order, are matched to the chunk's
        // rows in order (a row that existed has no new row of its own).
        let mut read = self.conn().prepare_cached(
            "SELECT id, rater_id, response_id, criterion_id FROM rating
             WHERE id > ?1 AND occasion = 0 ORDER BY id",
        )?;
        let new_rows = read
            .query_map([last_id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    (
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, i64>(3)?,
                    ),
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let mut next = new_rows.iter().peekable();
        let ids: Vec<Option<i64>> = chunk
            .iter()
            .map(|r| {
                next.next_if(|(_, key)| *key == (r.rater_id, r.response_id, r.criterion_id))
                    .map(|(id, _)| *id)
            })
            .collect();
        if next.next().is_some() || new_rows.len() != changed {
            return Err(StoreError::Invalid(format!(
                "a bulk rating insert wrote {changed} rows that could not be matched to the {} \
                 it was given",
                chunk.len()
            )));
        }
        Ok(ids)
    }
}

/// Ratings written by one INSERT statement of a bulk import (a batch is a multiple of this).
const INSERT_ROWS: usize = 256;

/// The INSERT of `rows` ratings: `?1` the origin, `?2` the time, then six parameters a row
/// (rater, response, criterion, value, raw value, rationale); a rating that exists is left as
/// it is.
fn chunk_insert_sql(rows: usize) -> String {
    let mut sql = String::from(
        "INSERT INTO rating(rater_id, response_id, criterion_id, occasion, value, raw_value,
             rationale, origin, created_at, updated_at) VALUES ",
    );
    for i in 0..rows {
        let at = 3 + i * 6;
        if i > 0 {
            sql.push(',');
        }
        sql.push_str(&format!(
            "(?{}, ?{}, ?{}, 0, ?{}, ?{}, ?{}, ?1, ?2, ?2)",
            at,
            at + 1,
            at + 2,
            at + 3,
            at + 4,
            at + 5
        ));
    }
    sql.push_str(" ON CONFLICT(rater_id, response_id, criterion_id, occasion) DO NOTHING");
    sql
}

/// Move the kept counts for a new first-occasion rating (row `id`).
fn count_new_rating(
    c: &Connection,
    rater_id: i64,
    response_id: i64,
    id: i64,
    value: Option<i64>,
) -> StoreResult<()> {
    let new_response = !rating_count::rated_response(c, rater_id, response_id, id)?;
    rating_count::add(
        c,
        rater_id,
        i64::from(value.is_some()),
        i64::from(new_response),
    )
}

/// Move the kept counts for a first-occasion rating whose value changed.
fn count_changed_value(
    c: &Connection,
    rater_id: i64,
    from: Option<i64>,
    to: Option<i64>,
) -> StoreResult<()> {
    rating_count::add(
        c,
        rater_id,
        i64::from(to.is_some()) - i64::from(from.is_some()),
        0,
    )
}

fn optional_text(t: &Option<String>) -> rusqlite::types::ValueRef<'_> {
    t.as_deref().map_or(rusqlite::types::ValueRef::Null, |t| {
        rusqlite::types::ValueRef::Text(t.as_bytes())
    })
}

/// The columns of `rating` in table order, as the bulk import digests a new row for the audit
/// chain.
pub(super) const RATING_ROW_COLUMNS: [&str; 11] = [
    "id",
    "rater_id",
    "response_id",
    "criterion_id",
    "occasion",
    "value",
    "raw_value",
    "rationale",
    "origin",
    "created_at",
    "updated_at",
];

/// Imported ratings are written this many at a time.
pub const RATING_IMPORT_BATCH: usize = 4096;

/// A bulk rating import in progress ([`StudyTx::begin_rating_import`]): values must lie on the
/// criterion's scale unless they carry their `raw_value` (an out-of-scale value kept by the
/// user's choice). Ratings are written `INSERT_ROWS` (256) to a statement, and from its first
/// batch until [`StudyTx::finish_rating_import`] the chain's insert trigger on `rating` is set
/// aside (the import digests its own rows): in between, the transaction writes ratings only
/// through [`StudyTx::import_rating`].
#[derive(Debug)]
pub struct RatingImport {
    scales: foldhash::HashMap<i64, (i64, i64)>,
    /// The `rating` columns when this import digests its new rows for the audit chain itself.
    digest_here: Option<Vec<String>>,
    /// Whether the chain's insert trigger on `rating` is set aside (from the first batch on).
    trigger_aside: bool,
    origin: String,
    pending: Vec<ImportedRating>,
    /// The INSERT of [`INSERT_ROWS`] ratings.
    insert_sql: String,
    outcome: BulkOutcome,
    /// What the import adds to each rater's kept counts (a few raters: searched in order).
    counts: Vec<(i64, ImportCounts)>,
}

/// What a bulk import adds to one rater's kept counts (applied once, when it finishes).
#[derive(Debug)]
struct ImportCounts {
    ratings: i64,
    responses: i64,
    /// The responses the import gave the rater a first-occasion rating of, one bit per response
    /// id; `None` when the rater had first-occasion ratings before the import, whose counts are
    /// then recounted when it finishes.
    fresh: Option<Vec<u64>>,
}

impl ImportCounts {
    fn inserted(&mut self, response_id: i64, value: Option<i64>) {
        let Some(seen) = self.fresh.as_mut() else {
            return;
        };
        self.ratings += i64::from(value.is_some());
        let bit = usize::try_from(response_id).unwrap_or(0);
        if seen.len() <= bit / 64 {
            seen.resize(bit / 64 + 1, 0);
        }
        let (word, mask) = (&mut seen[bit / 64], 1u64 << (bit % 64));
        if *word & mask == 0 {
            *word |= mask;
            self.responses += 1;
        }
    }
}

/// A rater's entry in an import's counts, made (asking whether the rater has first-occasion
/// ratings already) the first time the import writes for the rater.
fn import_counts<'a>(
    c: &Connection,
    counts: &'a mut Vec<(i64, ImportCounts)>,
    rater_id: i64,
) -> StoreResult<&'a mut ImportCounts> {
    let at = match counts.iter().position(|(id, _)| *id == rater_id) {
        Some(at) => at,
        None => {
            let fresh = !rating_count::has_ratings(c, rater_id)?;
            counts.push((
                rater_id,
                ImportCounts {
                    ratings: 0,
                    responses: 0,
                    fresh: fresh.then(Vec::new),
                },
            ));
            counts.len() - 1
        }
    };
    Ok(&mut counts[at].1)
}

fn check_imported_scale(
    scales: &foldhash::HashMap<i64, (i64, i64)>,
    r: &ImportedRating,
) -> StoreResult<()> {
    let (min, max) = *scales
        .get(&r.criterion_id)
        .ok_or_else(|| StoreError::NotFound {
            what: "criterion",
            key: r.criterion_id.to_string(),
        })?;
    match r.value {
        Some(v) if !(min..=max).contains(&v) && r.raw_value.is_none() => {
            Err(StoreError::Invalid(format!(
                "{v} is outside the scale {min}–{max} of criterion {}",
                r.criterion_id
            )))
        }
        _ => Ok(()),
    }
}

/// Reads a store and a write transaction share (through their [`StudyRead`](super::StudyRead)).
impl super::StudyRead<'_> {
    /// One rating, if it exists.
    pub fn stored_rating(
        &self,
        rater_id: i64,
        response_id: i64,
        criterion_id: i64,
        occasion: Occasion,
    ) -> StoreResult<Option<StoredRating>> {
        find(self.conn(), rater_id, response_id, criterion_id, occasion)
    }
}
