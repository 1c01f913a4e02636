//! The adjudication and calibration tables: adjudicators' decisions on disputed (response,
//! criterion) pairs (append-only; the latest per pair counts), the lead's calibration keys, the
//! experts' calibration answers and the lead's overrides.

use super::{Store, StoreResult, StudyTx};
use crate::base::clock::Millis;
use rusqlite::{params, OptionalExtension};
use std::collections::HashMap;

/// An adjudicator's decision on one pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub response_id: i64,
    pub criterion_id: i64,
    /// The consensus value; `None` when the pair was marked unratable.
    pub value: Option<i64>,
    pub reason: String,
    pub adjudicator: String,
    pub decided_at: Millis,
}

/// A calibration key: the expected value of one criterion of a gold item, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationKey {
    pub response_id: i64,
    pub criterion_id: i64,
    pub value: i64,
    pub explanation: String,
}

/// An expert's answer on a calibration item.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationAnswer {
    pub response_id: i64,
    pub criterion_id: i64,
    pub value: i64,
}

/// A lead's override of the calibration gate.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationOverride {
    pub lead: String,
    pub reason: String,
    pub decided_at: Millis,
}

/// A consensus decision with the names exports use.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsensusRow {
    pub conversation: String,
    pub response: String,
    pub source: String,
    pub rubric: String,
    pub criterion: String,
    pub decision: Decision,
}

impl StudyTx<'_> {
    /// Record a decision (a new row; earlier decisions on the pair stay).
    pub fn add_decision(
        &mut self,
        response_id: i64,
        criterion_id: i64,
        value: Option<i64>,
        reason: &str,
        adjudicator: &str,
    ) -> StoreResult<i64> {
        self.tx.execute(
            "INSERT INTO adjudication(response_id, criterion_id, value, unratable, reason,
                 adjudicator, decided_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                response_id,
                criterion_id,
                value,
                value.is_none() as i64,
                reason,
                adjudicator,
                self.now
            ],
        )?;
        Ok(self.tx.last_insert_rowid())
    }

    /// Set (or replace) the key of one criterion of a calibration item.
    pub fn set_calibration_key(&mut self, key: &CalibrationKey) -> StoreResult<()> {
        self.tx.execute(
            "INSERT INTO calibration_key(response_id, criterion_id, value, explanation)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(response_id, criterion_id) DO UPDATE SET value = excluded.value,
                 explanation = excluded.explanation",
            params![
                key.response_id,
                key.criterion_id,
                key.value,
                key.explanation
            ],
        )?;
        Ok(())
    }

    /// Record an expert's calibration answer (the first answer stands: calibration is not a
    /// quiz to retake item by item).
    pub fn add_calibration_answer(
        &mut self,
        rater_id: i64,
        answer: &CalibrationAnswer,
    ) -> StoreResult<bool> {
        let n = self.tx.execute(
            "INSERT OR IGNORE INTO calibration_answer(rater_id, response_id, criterion_id, value,
                 answered_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                rater_id,
                answer.response_id,
                answer.criterion_id,
                answer.value,
                self.now
            ],
        )?;
        Ok(n == 1)
    }

    /// Record the lead's override of an expert's calibration gate.
    pub fn set_calibration_override(
        &mut self,
        rater_id: i64,
        lead: &str,
        reason: &str,
    ) -> StoreResult<()> {
        self.tx.execute(
            "INSERT INTO calibration_override(rater_id, lead, reason, decided_at)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(rater_id) DO UPDATE SET lead = excluded.lead, reason = excluded.reason,
                 decided_at = excluded.decided_at",
            params![rater_id, lead, reason, self.now],
        )?;
        Ok(())
    }
}

impl Store {
    /// The latest decision on every decided pair, keyed by (response, criterion).
    pub fn latest_decisions(&self) -> StoreResult<HashMap<(i64, i64), Decision>> {
        let mut stmt = self.conn().prepare(
            "SELECT response_id, criterion_id, value, reason, adjudicator, decided_at
             FROM adjudication ORDER BY id",
        )?;
        let mut rows = stmt.query([])?;
        let mut out = HashMap::new();
        while let Some(r) = rows.next()? {
            let d = Decision {
                response_id: r.get(0)?,
                criterion_id: r.get(1)?,
                value: r.get(2)?,
                reason: r.get(3)?,
                adjudicator: r.get(4)?,
                decided_at: r.get(5)?,
            };
            out.insert((d.response_id, d.criterion_id), d);
        }
        Ok(out)
    }

    /// Every decision on one pair, oldest first.
    pub fn decision_history(
        &self,
        response_id: i64,
        criterion_id: i64,
    ) -> StoreResult<Vec<Decision>> {
        let mut stmt = self.conn().prepare(
            "SELECT response_id, criterion_id, value, reason, adjudicator, decided_at
             FROM adjudication WHERE response_id = ?1 AND criterion_id = ?2 ORDER BY id",
        )?;
        let rows = stmt.query_map(params![response_id, criterion_id], |r| {
            Ok(Decision {
                response_id: r.get(0)?,
                criterion_id: r.get(1)?,
                value: r.get(2)?,
                reason: r.get(3)?,
                adjudicator: r.get(4)?,
                decided_at: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every calibration key.
    pub fn calibration_keys(&self) -> StoreResult<Vec<CalibrationKey>> {
        let mut stmt = self.conn().prepare(
            "SELECT response_id, criterion_id, value, explanation FROM calibration_key
             ORDER BY response_id, criterion_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(CalibrationKey {
                response_id: r.get(0)?,
                criterion_id: r.get(1)?,
                value: r.get(2)?,
                explanation: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One expert's calibration answers.
    pub fn calibration_answers(&self, rater_id: i64) -> StoreResult<Vec<CalibrationAnswer>> {
        let mut stmt = self.conn().prepare(
            "SELECT response_id, criterion_id, value FROM calibration_answer WHERE rater_id = ?1
             ORDER BY answered_at, response_id, criterion_id",
        )?;
        let rows = stmt.query_map([rater_id], |r| {
            Ok(CalibrationAnswer {
                response_id: r.get(0)?,
                criterion_id: r.get(1)?,
                value: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The lead's override for one expert, if any.
    pub fn calibration_override(&self, rater_id: i64) -> StoreResult<Option<CalibrationOverride>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT lead, reason, decided_at FROM calibration_override WHERE rater_id = ?1",
                [rater_id],
                |r| {
                    Ok(CalibrationOverride {
                        lead: r.get(0)?,
                        reason: r.get(1)?,
                        decided_at: r.get(2)?,
                    })
                },
            )
            .optional()?)
    }

    /// The latest decision on every decided pair with its names, in export order (conversation,
    /// source, response, rubric, criterion position).
    pub fn consensus_rows(&self) -> StoreResult<Vec<ConsensusRow>> {
        let mut stmt = self.conn().prepare(
            "SELECT v.external_id, COALESCE(p.external_id, CAST(p.id AS TEXT)), s.key, r.key, c.key,
                    a.response_id, a.criterion_id, a.value, a.reason, a.adjudicator, a.decided_at
             FROM adjudication a
             JOIN response p ON p.id = a.response_id
             JOIN conversation v ON v.id = p.conversation_id
             JOIN source s ON s.id = p.source_id
             JOIN criterion c ON c.id = a.criterion_id
             JOIN rubric r ON r.id = c.rubric_id
             WHERE a.id = (SELECT MAX(b.id) FROM adjudication b
                           WHERE b.response_id = a.response_id AND b.criterion_id = a.criterion_id)
             ORDER BY v.external_id, s.key, a.response_id, r.id, c.position",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ConsensusRow {
                conversation: r.get(0)?,
                response: r.get(1)?,
                source: r.get(2)?,
                rubric: r.get(3)?,
                criterion: r.get(4)?,
                decision: Decision {
                    response_id: r.get(5)?,
                    criterion_id: r.get(6)?,
                    value: r.get(7)?,
                    reason: r.get(8)?,
                    adjudicator: r.get(9)?,
                    decided_at: r.get(10)?,
                },
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
