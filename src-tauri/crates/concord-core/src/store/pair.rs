//! The pairwise tables: a pairwise rubric's design (`pair_design`), its pairs (`pair`, left the
//! answer with the lower response id), the pairs given to raters with the side each rater sees
//! first (`pair_assignment`), and every verdict (`pair_judgement`, winner in the pair's own
//! left/right terms beside the order it was shown in; earlier versions kept by a trigger in
//! `pair_judgement_history`).

use super::{unique_violation, StoreResult, StudyRead, StudyTx};
use crate::base::clock::Millis;
use rusqlite::{params, OptionalExtension};
use serde::Serialize;

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
