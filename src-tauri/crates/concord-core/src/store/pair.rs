//! The pairwise tables: a pairwise rubric's design (`pair_design`), its pairs (`pair`, left the
//! answer with the lower response id), the pairs given to raters with the side each rater sees
//! first (`pair_assignment`), and every verdict (`pair_judgement`, winner in the pair's own
//! left/right terms beside the order it was shown in; earlier versions kept by a trigger in
//! `pair_judgement_history`); and an expert's pair work whole, as a rater package carries it and
//! a merge brings it back — assignments with progress and rationale, verdicts with origin and
//! times and their earlier versions, the pairs the expert flagged (`pair_flag`), and in the
//! issuing study each package's pair verdicts at issue (`package_pair_base`) and as last agreed
//! at a merge (`package_pair_merged`).

use super::{unique_violation, StoreResult, StudyRead, StudyTx};
use crate::base::clock::Millis;
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use std::collections::HashMap;

/// Which answer of a pair a verdict prefers, in the pair's canonical terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Winner {
    Left,
    Right,
    Tie,
}

impl Winner {
    pub fn as_str(self) -> &'static str {
        match self {
            Winner::Left => "left",
            Winner::Right => "right",
            Winner::Tie => "tie",
        }
    }
    /// The verdict in the pair's own terms from the side that was preferred as shown:
    /// `Some(true)` the answer shown first, `Some(false)` the one shown second, `None` neither.
    pub fn from_shown(first_preferred: Option<bool>, left_first: bool) -> Winner {
        match first_preferred {
            None => Winner::Tie,
            Some(first) if first == left_first => Winner::Left,
            Some(_) => Winner::Right,
        }
    }

    /// The side preferred as shown ([`Winner::from_shown`] read backwards).
    pub fn shown(self, left_first: bool) -> Option<bool> {
        match self {
            Winner::Tie => None,
            Winner::Left => Some(left_first),
            Winner::Right => Some(!left_first),
        }
    }

    /// The same verdict with the pair's sides named the other way round.
    pub fn swapped(self) -> Winner {
        match self {
            Winner::Left => Winner::Right,
            Winner::Right => Winner::Left,
            Winner::Tie => Winner::Tie,
        }
    }

    pub fn parse(s: &str) -> Option<Winner> {
        match s {
            "left" => Some(Winner::Left),
            "right" => Some(Winner::Right),
            "tie" => Some(Winner::Tie),
            _ => None,
        }
    }
}

/// How a pairwise rubric's pairs were drawn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairDesignRecord {
    pub rubric_id: i64,
    /// `all`, `per_conversation` or `balanced`.
    pub method: String,
    pub per_conversation: Option<i64>,
    pub seed: i64,
    pub created_at: Millis,
}

/// A pair to add to a design.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewPair {
    pub conversation_id: i64,
    pub left_response_id: i64,
    pub right_response_id: i64,
}

/// A pair as stored, with the sources of its two answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairRecord {
    pub id: i64,
    pub rubric_id: i64,
    pub conversation_id: i64,
    pub left_response_id: i64,
    pub right_response_id: i64,
    pub left_source_id: i64,
    pub right_source_id: i64,
    pub position: i64,
}

/// A pair given to a rater.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairAssignmentRecord {
    pub rater_id: i64,
    pub pair_id: i64,
    pub position: i64,
    pub left_first: bool,
    pub completed_at: Option<Millis>,
}

/// One verdict to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairVerdictInput<'a> {
    pub rater_id: i64,
    pub pair_id: i64,
    pub criterion_id: i64,
    pub left_first: bool,
    pub winner: Option<Winner>,
    pub rationale: Option<&'a str>,
    pub origin: &'a str,
}

/// A verdict as stored, with what the analyses need beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairVerdictRecord {
    pub rater_id: i64,
    pub pair_id: i64,
    pub criterion_id: i64,
    pub left_first: bool,
    pub winner: Winner,
    pub rationale: Option<String>,
    pub updated_at: Millis,
}

/// A verdict with the names an export writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairVerdictRow {
    pub conversation: String,
    pub rater: String,
    pub rater_kind: String,
    pub rubric: String,
    pub criterion: String,
    /// Source keys of the pair's left and right answers.
    pub left: String,
    pub right: String,
    pub winner: Winner,
    pub left_first: bool,
    pub rationale: Option<String>,
    pub created_at: Millis,
    pub updated_at: Millis,
}

fn pair_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PairRecord> {
    Ok(PairRecord {
        id: r.get(0)?,
        conversation_id: r.get(1)?,
        left_response_id: r.get(2)?,
        right_response_id: r.get(3)?,
        left_source_id: r.get(4)?,
        right_source_id: r.get(5)?,
        position: r.get(6)?,
        rubric_id: r.get(7)?,
    })
}

fn assignment_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PairAssignmentRecord> {
    Ok(PairAssignmentRecord {
        rater_id: r.get(0)?,
        pair_id: r.get(1)?,
        position: r.get(2)?,
        left_first: r.get::<_, i64>(3)? == 1,
        completed_at: r.get(4)?,
    })
}

const VERDICT_COLUMNS: &str =
    "j.rater_id, j.pair_id, j.criterion_id, j.left_first, j.winner, j.rationale, j.updated_at";

fn verdict_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PairVerdictRecord> {
    let winner: String = r.get(4)?;
    Ok(PairVerdictRecord {
        rater_id: r.get(0)?,
        pair_id: r.get(1)?,
        criterion_id: r.get(2)?,
        left_first: r.get::<_, i64>(3)? == 1,
        // The column's CHECK admits only the three names.
        winner: Winner::parse(&winner).unwrap_or(Winner::Tie),
        rationale: r.get(5)?,
        updated_at: r.get(6)?,
    })
}

const PAIR_COLUMNS: &str = "p.id, p.conversation_id, p.left_response_id, p.right_response_id,
     l.source_id, r.source_id, p.position, p.rubric_id FROM pair p
     JOIN response l ON l.id = p.left_response_id JOIN response r ON r.id = p.right_response_id";

impl StudyRead<'_> {
    /// How the pairs of a pairwise rubric were drawn, if they were.
    pub fn pair_design(&self, rubric_id: i64) -> StoreResult<Option<PairDesignRecord>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT rubric_id, method, per_conversation, seed, created_at FROM pair_design
                 WHERE rubric_id = ?1",
                [rubric_id],
                |r| {
                    Ok(PairDesignRecord {
                        rubric_id: r.get(0)?,
                        method: r.get(1)?,
                        per_conversation: r.get(2)?,
                        seed: r.get(3)?,
                        created_at: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }

    /// Every pair of a pairwise rubric's design, in design order.
    pub fn pairs(&self, rubric_id: i64) -> StoreResult<Vec<PairRecord>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {PAIR_COLUMNS} WHERE p.rubric_id = ?1 ORDER BY p.position"
        ))?;
        let rows = stmt.query_map([rubric_id], pair_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One pair by id.
    pub fn pair(&self, pair_id: i64) -> StoreResult<Option<PairRecord>> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {PAIR_COLUMNS} WHERE p.id = ?1"),
                [pair_id],
                pair_row,
            )
            .optional()?)
    }

    /// Every assignment of a pairwise rubric's pairs, by rater then position.
    pub fn pair_assignments(&self, rubric_id: i64) -> StoreResult<Vec<PairAssignmentRecord>> {
        let mut stmt = self.conn().prepare(
            "SELECT a.rater_id, a.pair_id, a.position, a.left_first, a.completed_at
             FROM pair_assignment a JOIN pair p ON p.id = a.pair_id
             WHERE p.rubric_id = ?1 ORDER BY a.rater_id, a.position",
        )?;
        let rows = stmt.query_map([rubric_id], assignment_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One rater's assignments on a pairwise rubric, in their order (the pair screen's queue).
    pub fn pair_assignments_of(
        &self,
        rubric_id: i64,
        rater_id: i64,
    ) -> StoreResult<Vec<PairAssignmentRecord>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT a.rater_id, a.pair_id, a.position, a.left_first, a.completed_at
             FROM pair_assignment a JOIN pair p ON p.id = a.pair_id
             WHERE p.rubric_id = ?1 AND a.rater_id = ?2 ORDER BY a.position",
        )?;
        let rows = stmt.query_map(params![rubric_id, rater_id], assignment_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One rater's answered verdicts on one pair, by criterion.
    pub fn pair_verdicts_on(
        &self,
        rater_id: i64,
        pair_id: i64,
    ) -> StoreResult<Vec<PairVerdictRecord>> {
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT {VERDICT_COLUMNS} FROM pair_judgement j
             WHERE j.rater_id = ?1 AND j.pair_id = ?2 AND j.winner IS NOT NULL
             ORDER BY j.criterion_id, j.left_first DESC"
        ))?;
        let rows = stmt.query_map(params![rater_id, pair_id], verdict_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every answered verdict on a pairwise rubric's pairs.
    pub fn pair_verdicts(&self, rubric_id: i64) -> StoreResult<Vec<PairVerdictRecord>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {VERDICT_COLUMNS}
             FROM pair_judgement j JOIN pair p ON p.id = j.pair_id
             WHERE p.rubric_id = ?1 AND j.winner IS NOT NULL
             ORDER BY j.rater_id, p.position, j.criterion_id, j.left_first DESC"
        ))?;
        let rows = stmt.query_map([rubric_id], verdict_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl StudyRead<'_> {
    /// Whether any pair has been given to any rater.
    pub fn has_pair_assignments(&self) -> StoreResult<bool> {
        Ok(self
            .conn()
            .query_row("SELECT 1 FROM pair_assignment LIMIT 1", [], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Whether the study holds any answered pair verdict.
    pub fn has_pair_verdicts(&self) -> StoreResult<bool> {
        Ok(self
            .conn()
            .query_row(
                "SELECT 1 FROM pair_judgement WHERE winner IS NOT NULL LIMIT 1",
                [],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// Visit every answered verdict of the study with its names, by conversation, pair, rater,
    /// criterion and order (what the long CSV writes after the ratings), one row at a time.
    pub fn for_each_pair_verdict_row<E: From<super::StoreError>>(
        &self,
        mut f: impl FnMut(PairVerdictRow) -> Result<(), E>,
    ) -> Result<usize, E> {
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT v.external_id, t.name, t.kind, b.key, c.key, ls.key, rs.key, j.winner,
                    j.left_first, j.rationale, j.created_at, j.updated_at
             FROM pair_judgement j JOIN pair p ON p.id = j.pair_id
             JOIN conversation v ON v.id = p.conversation_id
             JOIN rater t ON t.id = j.rater_id JOIN rubric b ON b.id = p.rubric_id
             JOIN criterion c ON c.id = j.criterion_id
             JOIN response l ON l.id = p.left_response_id JOIN source ls ON ls.id = l.source_id
             JOIN response r ON r.id = p.right_response_id JOIN source rs ON rs.id = r.source_id
             WHERE j.winner IS NOT NULL
             ORDER BY v.external_id, p.position, t.name, c.position, j.left_first DESC",
            )
            .map_err(super::StoreError::from)?;
        let rows = stmt
            .query_map([], |r| {
                let winner: String = r.get(7)?;
                Ok(PairVerdictRow {
                    conversation: r.get(0)?,
                    rater: r.get(1)?,
                    rater_kind: r.get(2)?,
                    rubric: r.get(3)?,
                    criterion: r.get(4)?,
                    left: r.get(5)?,
                    right: r.get(6)?,
                    winner: Winner::parse(&winner).unwrap_or(Winner::Tie),
                    left_first: r.get::<_, i64>(8)? == 1,
                    rationale: r.get(9)?,
                    created_at: r.get(10)?,
                    updated_at: r.get(11)?,
                })
            })
            .map_err(super::StoreError::from)?;
        let mut n = 0usize;
        for row in rows {
            f(row.map_err(super::StoreError::from)?)?;
            n += 1;
        }
        Ok(n)
    }
}

impl StudyTx<'_> {
    /// Record how a rubric's pairs were drawn and add them in order; refused when the rubric
    /// already has a design (a design is drawn once, so assignments and verdicts keep meaning).
    pub fn add_pair_design(
        &mut self,
        design: &PairDesignRecord,
        pairs: &[NewPair],
    ) -> StoreResult<usize> {
        self.conn()
            .execute(
                "INSERT INTO pair_design(rubric_id, method, per_conversation, seed, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    design.rubric_id,
                    design.method,
                    design.per_conversation,
                    design.seed,
                    self.now
                ],
            )
            .map_err(|e| {
                unique_violation(e, || {
                    "this pairwise rubric already has its pair design; pairs are drawn once".into()
                })
            })?;
        let mut insert = self.conn().prepare_cached(
            "INSERT INTO pair(rubric_id, conversation_id, left_response_id, right_response_id,
                 position) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for (i, p) in pairs.iter().enumerate() {
            let (left, right) = if p.left_response_id < p.right_response_id {
                (p.left_response_id, p.right_response_id)
            } else {
                (p.right_response_id, p.left_response_id)
            };
            insert.execute(params![
                design.rubric_id,
                p.conversation_id,
                left,
                right,
                i as i64
            ])?;
        }
        Ok(pairs.len())
    }

    /// Give a rater pairs after their existing ones, each with the side shown first; a pair the
    /// rater already has is left as it is. Returns how many were added.
    pub fn add_pair_assignments(
        &mut self,
        rater_id: i64,
        pairs: &[(i64, bool)],
    ) -> StoreResult<usize> {
        let start: i64 = self.conn().query_row(
            "SELECT COALESCE(MAX(position) + 1, 0) FROM pair_assignment WHERE rater_id = ?1",
            [rater_id],
            |r| r.get(0),
        )?;
        let mut insert = self.conn().prepare_cached(
            "INSERT OR IGNORE INTO pair_assignment(rater_id, pair_id, position, left_first)
             VALUES (?1, ?2, ?3, ?4)",
        )?;
        let mut added = 0usize;
        for (pair_id, left_first) in pairs {
            added += insert.execute(params![
                rater_id,
                pair_id,
                start + added as i64,
                *left_first as i64
            ])?;
        }
        Ok(added)
    }

    /// Write (or change) one verdict; an unchanged verdict is not written again. The trigger
    /// keeps the version it replaces.
    pub fn set_pair_verdict(&mut self, v: &PairVerdictInput<'_>) -> StoreResult<bool> {
        let now = self.now;
        let changed = self
            .conn()
            .prepare_cached(
                "INSERT INTO pair_judgement(rater_id, pair_id, criterion_id, left_first, winner,
                     rationale, origin, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)
                 ON CONFLICT (rater_id, pair_id, criterion_id, left_first) DO UPDATE SET
                     winner = excluded.winner, rationale = excluded.rationale,
                     origin = excluded.origin, updated_at = excluded.updated_at
                 WHERE winner IS NOT excluded.winner OR rationale IS NOT excluded.rationale",
            )?
            .execute(params![
                v.rater_id,
                v.pair_id,
                v.criterion_id,
                v.left_first as i64,
                v.winner.map(Winner::as_str),
                v.rationale,
                v.origin,
                now
            ])?;
        Ok(changed > 0)
    }

    /// Mark a rater's pair finished (every criterion answered).
    pub fn complete_pair_assignment(&mut self, rater_id: i64, pair_id: i64) -> StoreResult<()> {
        self.conn()
            .prepare_cached(
                "UPDATE pair_assignment SET completed_at = COALESCE(completed_at, ?3)
                 WHERE rater_id = ?1 AND pair_id = ?2",
            )?
            .execute(params![rater_id, pair_id, self.now])?;
        Ok(())
    }
}

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
