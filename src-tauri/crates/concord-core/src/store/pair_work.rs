//! An expert's own work on pairs, whole, as a rater package carries it and a merge brings it
//! back: the pair assignments with their progress and rationale (`pair_assignment`), every
//! verdict with its origin and times (`pair_judgement`) and its earlier versions
//! (`pair_judgement_history`), and the pairs the expert flagged (`pair_flag`); and, in the
//! issuing study, each package's pair verdicts at issue (`package_pair_base`) and as last agreed
//! at a merge (`package_pair_merged`).

use super::{StoreResult, StudyRead, StudyTx};
use crate::base::clock::Millis;
use crate::store::Winner;
use rusqlite::{params, OptionalExtension};
use std::collections::HashMap;

/// A pair given to a rater, with everything the rater's Concord writes on it.
#[derive(Debug, Clone, PartialEq)]
pub struct PairWorkRecord {
    pub id: i64,
    pub rater_id: i64,
    pub pair_id: i64,
    pub position: i64,
    pub left_first: bool,
    pub first_shown_at: Option<Millis>,
    pub completed_at: Option<Millis>,
    pub seconds_spent: f64,
    pub rationale: Option<String>,
}

/// What a verdict says: the preferred answer in the pair's own terms (none while unanswered)
/// and the rationale.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PairContent {
    pub winner: Option<Winner>,
    pub rationale: Option<String>,
}

/// One verdict row whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairVerdictFull {
    pub id: i64,
    pub rater_id: i64,
    pub pair_id: i64,
    pub criterion_id: i64,
    pub left_first: bool,
    pub content: PairContent,
    pub origin: String,
    pub created_at: Millis,
    pub updated_at: Millis,
}

/// An earlier version of a verdict.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PairHistoryRow {
    pub content: PairContent,
    pub origin: String,
    pub valid_from: Millis,
    pub replaced_at: Millis,
}

/// A pair a rater flagged.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PairFlagRecord {
    pub pair_id: i64,
    pub reason: String,
    pub created_at: Millis,
    pub resolved_at: Option<Millis>,
}

/// A verdict of the package's expert on a pair and criterion (the issuing study's ids).
pub type PairBaseKey = (i64, i64);

fn winner_of(text: Option<String>) -> Option<Winner> {
    text.as_deref().and_then(Winner::parse)
}

fn work_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PairWorkRecord> {
    Ok(PairWorkRecord {
        id: r.get(0)?,
        rater_id: r.get(1)?,
        pair_id: r.get(2)?,
        position: r.get(3)?,
        left_first: r.get::<_, i64>(4)? == 1,
        first_shown_at: r.get(5)?,
        completed_at: r.get(6)?,
        seconds_spent: r.get(7)?,
        rationale: r.get(8)?,
    })
}

const WORK_COLUMNS: &str = "id, rater_id, pair_id, position, left_first, first_shown_at,
     completed_at, seconds_spent, rationale FROM pair_assignment";

fn full_verdict_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PairVerdictFull> {
    Ok(PairVerdictFull {
        id: r.get(0)?,
        rater_id: r.get(1)?,
        pair_id: r.get(2)?,
        criterion_id: r.get(3)?,
        left_first: r.get::<_, i64>(4)? == 1,
        content: PairContent {
            winner: winner_of(r.get(5)?),
            rationale: r.get(6)?,
        },
        origin: r.get(7)?,
        created_at: r.get(8)?,
        updated_at: r.get(9)?,
    })
}

const FULL_VERDICT_COLUMNS: &str = "id, rater_id, pair_id, criterion_id, left_first, winner,
     rationale, origin, created_at, updated_at FROM pair_judgement";

impl StudyRead<'_> {
    /// Every pair given to a rater, on any pairwise rubric, in their order.
    pub fn pair_work_of_rater(&self, rater_id: i64) -> StoreResult<Vec<PairWorkRecord>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {WORK_COLUMNS} WHERE rater_id = ?1 ORDER BY position"
        ))?;
        let rows = stmt.query_map([rater_id], work_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One rater's assignment of one pair.
    pub fn pair_work(&self, rater_id: i64, pair_id: i64) -> StoreResult<Option<PairWorkRecord>> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {WORK_COLUMNS} WHERE rater_id = ?1 AND pair_id = ?2"),
                params![rater_id, pair_id],
                work_row,
            )
            .optional()?)
    }

    /// Every verdict row of a rater (answered or cleared), by pair and criterion.
    pub fn pair_verdicts_of_rater(&self, rater_id: i64) -> StoreResult<Vec<PairVerdictFull>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {FULL_VERDICT_COLUMNS} WHERE rater_id = ?1
             ORDER BY pair_id, criterion_id, left_first DESC"
        ))?;
        let rows = stmt.query_map([rater_id], full_verdict_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One verdict row.
    pub fn pair_verdict(
        &self,
        rater_id: i64,
        pair_id: i64,
        criterion_id: i64,
        left_first: bool,
    ) -> StoreResult<Option<PairVerdictFull>> {
        Ok(self
            .conn()
            .query_row(
                &format!(
                    "SELECT {FULL_VERDICT_COLUMNS} WHERE rater_id = ?1 AND pair_id = ?2
                     AND criterion_id = ?3 AND left_first = ?4"
                ),
                params![rater_id, pair_id, criterion_id, left_first as i64],
                full_verdict_row,
            )
            .optional()?)
    }

    /// Earlier versions of a rater's verdicts, by verdict id, oldest first.
    pub fn pair_history_of_rater(
        &self,
        rater_id: i64,
    ) -> StoreResult<HashMap<i64, Vec<PairHistoryRow>>> {
        let mut stmt = self.conn().prepare(
            "SELECT h.pair_judgement_id, h.winner, h.rationale, h.origin, h.valid_from,
                    h.replaced_at
             FROM pair_judgement_history h JOIN pair_judgement j ON j.id = h.pair_judgement_id
             WHERE j.rater_id = ?1 ORDER BY h.id",
        )?;
        let rows = stmt.query_map([rater_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                PairHistoryRow {
                    content: PairContent {
                        winner: winner_of(r.get(1)?),
                        rationale: r.get(2)?,
                    },
                    origin: r.get(3)?,
                    valid_from: r.get(4)?,
                    replaced_at: r.get(5)?,
                },
            ))
        })?;
        let mut out: HashMap<i64, Vec<PairHistoryRow>> = HashMap::new();
        for row in rows {
            let (id, h) = row?;
            out.entry(id).or_default().push(h);
        }
        Ok(out)
    }

    /// The pairs a rater flagged, oldest first.
    pub fn pair_flags_of_rater(&self, rater_id: i64) -> StoreResult<Vec<PairFlagRecord>> {
        let mut stmt = self.conn().prepare(
            "SELECT pair_id, reason, created_at, resolved_at FROM pair_flag WHERE rater_id = ?1
             ORDER BY id",
        )?;
        let rows = stmt.query_map([rater_id], |r| {
            Ok(PairFlagRecord {
                pair_id: r.get(0)?,
                reason: r.get(1)?,
                created_at: r.get(2)?,
                resolved_at: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The pair of a rubric made of two answers (in either order).
    pub fn pair_of_answers(
        &self,
        rubric_id: i64,
        one: i64,
        other: i64,
    ) -> StoreResult<Option<i64>> {
        let (left, right) = (one.min(other), one.max(other));
        Ok(self
            .conn()
            .query_row(
                "SELECT id FROM pair WHERE rubric_id = ?1 AND left_response_id = ?2
                 AND right_response_id = ?3",
                params![rubric_id, left, right],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Every pairwise rubric's id with a design in this study.
    pub fn designed_pair_rubrics(&self) -> StoreResult<Vec<i64>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT rubric_id FROM pair_design ORDER BY rubric_id")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The package's pair verdicts as they were when it was written.
    pub fn package_pair_base(
        &self,
        package_id: &str,
    ) -> StoreResult<HashMap<PairBaseKey, PairContent>> {
        self.pair_base_values(
            "SELECT pair_id, criterion_id, winner, rationale FROM package_pair_base
             WHERE package_id = ?1",
            package_id,
        )
    }

    /// The package's pair verdicts as an earlier merge left them agreed with the study.
    pub fn package_pair_merged(
        &self,
        package_id: &str,
    ) -> StoreResult<HashMap<PairBaseKey, PairContent>> {
        self.pair_base_values(
            "SELECT pair_id, criterion_id, winner, rationale FROM package_pair_merged
             WHERE package_id = ?1",
            package_id,
        )
    }

    fn pair_base_values(
        &self,
        sql: &'static str,
        package_id: &str,
    ) -> StoreResult<HashMap<PairBaseKey, PairContent>> {
        let mut stmt = self.conn().prepare(sql)?;
        let rows = stmt.query_map([package_id], |r| {
            Ok((
                (r.get::<_, i64>(0)?, r.get::<_, i64>(1)?),
                PairContent {
                    winner: winner_of(r.get(2)?),
                    rationale: r.get(3)?,
                },
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl StudyTx<'_> {
    /// Copy a rater's assignment of a pair with its progress (a package's copy, or nothing when
    /// the rater already has the pair).
    pub fn copy_pair_work(&mut self, w: &PairWorkRecord) -> StoreResult<bool> {
        let n = self.conn().execute(
            "INSERT OR IGNORE INTO pair_assignment(rater_id, pair_id, position, left_first,
                 first_shown_at, completed_at, seconds_spent, rationale)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                w.rater_id,
                w.pair_id,
                w.position,
                w.left_first as i64,
                w.first_shown_at,
                w.completed_at,
                w.seconds_spent,
                w.rationale
            ],
        )?;
        Ok(n > 0)
    }

    /// Set a rater's progress on a pair (what a merge brings back); the rationale too when
    /// given.
    pub fn set_pair_progress(
        &mut self,
        assignment_id: i64,
        first_shown_at: Option<Millis>,
        completed_at: Option<Millis>,
        seconds_spent: f64,
        rationale: Option<&str>,
    ) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE pair_assignment SET first_shown_at = ?2, completed_at = ?3,
                 seconds_spent = ?4, rationale = ?5 WHERE id = ?1",
            params![
                assignment_id,
                first_shown_at,
                completed_at,
                seconds_spent,
                rationale
            ],
        )?;
        Ok(())
    }

    /// Record that a rater was shown a pair now (if never before) and spent `seconds` more on it.
    pub fn note_pair_shown(
        &mut self,
        rater_id: i64,
        pair_id: i64,
        seconds: f64,
    ) -> StoreResult<()> {
        self.conn()
            .prepare_cached(
                "UPDATE pair_assignment SET first_shown_at = COALESCE(first_shown_at, ?3),
                     seconds_spent = seconds_spent + ?4 WHERE rater_id = ?1 AND pair_id = ?2",
            )?
            .execute(params![rater_id, pair_id, self.now, seconds])?;
        Ok(())
    }

    /// The rater's rationale for a pair: on the assignment and on each of their verdicts of it.
    pub fn set_pair_rationale(
        &mut self,
        rater_id: i64,
        pair_id: i64,
        rationale: Option<&str>,
        origin: &str,
    ) -> StoreResult<()> {
        let now = self.now;
        self.conn().execute(
            "UPDATE pair_assignment SET rationale = ?3 WHERE rater_id = ?1 AND pair_id = ?2",
            params![rater_id, pair_id, rationale],
        )?;
        self.conn().execute(
            "UPDATE pair_judgement SET rationale = ?3, origin = ?4, updated_at = ?5
             WHERE rater_id = ?1 AND pair_id = ?2 AND rationale IS NOT ?3",
            params![rater_id, pair_id, rationale, origin, now],
        )?;
        Ok(())
    }

    /// Copy a verdict with its own origin and times; returns its id.
    pub fn copy_pair_verdict(&mut self, v: &PairVerdictFull) -> StoreResult<i64> {
        self.conn().execute(
            "INSERT INTO pair_judgement(rater_id, pair_id, criterion_id, left_first, winner,
                 rationale, origin, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                v.rater_id,
                v.pair_id,
                v.criterion_id,
                v.left_first as i64,
                v.content.winner.map(Winner::as_str),
                v.content.rationale,
                v.origin,
                v.created_at,
                v.updated_at
            ],
        )?;
        Ok(self.conn().last_insert_rowid())
    }

    /// Change a verdict to what a merged package says (the trigger keeps the version replaced).
    pub fn revise_pair_verdict(
        &mut self,
        id: i64,
        content: &PairContent,
        origin: &str,
        updated_at: Millis,
    ) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE pair_judgement SET winner = ?2, rationale = ?3, origin = ?4, updated_at = ?5
             WHERE id = ?1",
            params![
                id,
                content.winner.map(Winner::as_str),
                content.rationale,
                origin,
                updated_at
            ],
        )?;
        Ok(())
    }

    /// Add an earlier version of a verdict unless the study holds one just like it.
    pub fn merge_pair_history_row(
        &mut self,
        verdict_id: i64,
        h: &PairHistoryRow,
    ) -> StoreResult<bool> {
        let winner = h.content.winner.map(Winner::as_str);
        let held: bool = self.conn().query_row(
            "SELECT EXISTS(SELECT 1 FROM pair_judgement_history WHERE pair_judgement_id = ?1
                 AND winner IS ?2 AND rationale IS ?3 AND origin = ?4 AND valid_from = ?5
                 AND replaced_at = ?6)",
            params![
                verdict_id,
                winner,
                h.content.rationale,
                h.origin,
                h.valid_from,
                h.replaced_at
            ],
            |r| r.get(0),
        )?;
        if held {
            return Ok(false);
        }
        self.conn().execute(
            "INSERT INTO pair_judgement_history(pair_judgement_id, winner, rationale, origin,
                 valid_from, replaced_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                verdict_id,
                winner,
                h.content.rationale,
                h.origin,
                h.valid_from,
                h.replaced_at
            ],
        )?;
        Ok(true)
    }

    /// Flag a pair now.
    pub fn add_pair_flag(&mut self, rater_id: i64, pair_id: i64, reason: &str) -> StoreResult<()> {
        let now = self.now;
        self.copy_pair_flag(
            rater_id,
            &PairFlagRecord {
                pair_id,
                reason: reason.to_string(),
                created_at: now,
                resolved_at: None,
            },
        )
    }

    /// Copy a flag as it is (a package's copy, or a merged one).
    pub fn copy_pair_flag(&mut self, rater_id: i64, f: &PairFlagRecord) -> StoreResult<()> {
        self.conn().execute(
            "INSERT INTO pair_flag(rater_id, pair_id, reason, created_at, resolved_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![rater_id, f.pair_id, f.reason, f.created_at, f.resolved_at],
        )?;
        Ok(())
    }

    /// Record the package expert's pair verdicts as they are when the package is written.
    pub fn record_pair_base(
        &mut self,
        package_id: &str,
        values: &[(PairBaseKey, PairContent)],
    ) -> StoreResult<()> {
        let mut insert = self.conn().prepare_cached(
            "INSERT INTO package_pair_base(package_id, pair_id, criterion_id, winner, rationale)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for ((pair, criterion), c) in values {
            insert.execute(params![
                package_id,
                pair,
                criterion,
                c.winner.map(Winner::as_str),
                c.rationale
            ])?;
        }
        Ok(())
    }

    /// Record a verdict the package and the study agree on after a merge.
    pub fn set_package_pair_merged(
        &mut self,
        package_id: &str,
        key: PairBaseKey,
        content: &PairContent,
    ) -> StoreResult<()> {
        self.conn()
            .prepare_cached(
                "INSERT INTO package_pair_merged(package_id, pair_id, criterion_id, winner,
                     rationale) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (package_id, pair_id, criterion_id) DO UPDATE SET
                     winner = excluded.winner, rationale = excluded.rationale",
            )?
            .execute(params![
                package_id,
                key.0,
                key.1,
                content.winner.map(Winner::as_str),
                content.rationale
            ])?;
        Ok(())
    }
}
