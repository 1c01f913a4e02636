//! The `assignment` table (which expert rates which response, in which position of their queue,
//! for which purpose, with what was recorded while they worked: first shown, time spent,
//! completion, the item's rationale) and `sample_item`, the conversations the last assignment
//! drew.

use super::{Store, StoreResult, StudyTx};
use crate::base::clock::Millis;
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

/// Why an item is in an expert's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Purpose {
    /// One of the k experts of this response.
    Regular,
    /// Rated by every expert, to align raters and measure agreement on a common set.
    Calibration,
    /// A blind second showing of an item the expert already rated, for intra-rater reliability.
    Retest,
}

impl Purpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Regular => "regular",
            Purpose::Calibration => "calibration",
            Purpose::Retest => "retest",
        }
    }
    pub fn parse(s: &str) -> Option<Purpose> {
        match s {
            "regular" => Some(Purpose::Regular),
            "calibration" => Some(Purpose::Calibration),
            "retest" => Some(Purpose::Retest),
            _ => None,
        }
    }
    /// Read a stored purpose (an unknown text reads as regular).
    fn stored(s: &str) -> Purpose {
        Purpose::parse(s).unwrap_or(Purpose::Regular)
    }
}

/// One item of an expert's list, in shown order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AssignedItem {
    pub position: i64,
    pub response_id: i64,
    /// The conversation's external id.
    pub conversation: String,
    pub purpose: Purpose,
}

/// An assignment row to write. Progress fields are set when copying an assignment (packages).
#[derive(Debug, Clone, PartialEq)]
pub struct NewAssignment {
    pub rater_id: i64,
    pub response_id: i64,
    pub position: i64,
    pub purpose: Purpose,
    pub first_shown_at: Option<Millis>,
    pub completed_at: Option<Millis>,
    pub seconds_spent: f64,
}

impl NewAssignment {
    /// A fresh item, never shown.
    pub fn fresh(rater_id: i64, response_id: i64, position: i64, purpose: Purpose) -> Self {
        NewAssignment {
            rater_id,
            response_id,
            position,
            purpose,
            first_shown_at: None,
            completed_at: None,
            seconds_spent: 0.0,
        }
    }
}

/// An assignment row as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct AssignmentRecord {
    pub id: i64,
    pub response_id: i64,
    pub position: i64,
    pub purpose: Purpose,
    pub first_shown_at: Option<Millis>,
    pub completed_at: Option<Millis>,
    pub seconds_spent: f64,
}

/// An expert with the size of their queue and how much of it is complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpertQueue {
    pub rater_id: i64,
    pub name: String,
    pub items: i64,
    pub completed: i64,
    /// First-occasion values the expert has, queued or not.
    pub ratings: i64,
}

/// A rater's queue size and completed items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueCounts {
    pub total: i64,
    pub completed: i64,
}

/// What the rating screen shows about an item beyond its text and values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemState {
    pub rationale: Option<String>,
    /// An unresolved flag of this rater is on the response.
    pub flagged: bool,
    pub counts: QueueCounts,
}

/// One assigned item of an expert for the progress table: how many of its rubric's criteria
/// have a value (on the item's occasion) and how many it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemProgressRow {
    pub expert: String,
    pub purpose: Purpose,
    pub rated: i64,
    pub needed: i64,
}

/// An assigned item with the texts a fill-in sheet shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignedText {
    pub position: i64,
    pub response_id: i64,
    pub purpose: Purpose,
    pub conversation: String,
    pub context: String,
    /// Empty when the response has no text.
    pub answer: String,
    pub rubric_id: i64,
}

/// An assigned item as a returned sheet names it: response, purpose, conversation, rubric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignedKey {
    /// The item's place in the expert's order (a sheet shows it as item number `position + 1`).
    pub position: i64,
    pub response_id: i64,
    pub purpose: Purpose,
    pub conversation: String,
    pub rubric: String,
}

fn queue_counts(c: &Connection, rater_id: i64) -> StoreResult<QueueCounts> {
    Ok(c.prepare_cached(
        "SELECT COUNT(*), COUNT(completed_at) FROM assignment WHERE rater_id = ?1",
    )?
    .query_row([rater_id], |r| {
        Ok(QueueCounts {
            total: r.get(0)?,
            completed: r.get(1)?,
        })
    })?)
}

fn expert_assignment_count(c: &Connection) -> StoreResult<i64> {
    Ok(c.query_row(
        "SELECT COUNT(*) FROM assignment a JOIN rater r ON r.id = a.rater_id
         WHERE r.kind = 'expert'",
        [],
        |r| r.get(0),
    )?)
}

fn assignment_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<AssignmentRecord> {
    Ok(AssignmentRecord {
        id: r.get(0)?,
        response_id: r.get(1)?,
        position: r.get(2)?,
        purpose: Purpose::stored(&r.get::<_, String>(3)?),
        first_shown_at: r.get(4)?,
        completed_at: r.get(5)?,
        seconds_spent: r.get(6)?,
    })
}

const ASSIGNMENT_COLUMNS: &str =
    "id, response_id, position, purpose, first_shown_at, completed_at, seconds_spent";

impl Store {
    /// Every expert (by name) with their queue size and completed items.
    pub fn expert_queues(&self) -> StoreResult<Vec<ExpertQueue>> {
        let mut stmt = self.conn().prepare(
            "SELECT r.id, r.name,
                (SELECT COUNT(*) FROM assignment a WHERE a.rater_id = r.id),
                (SELECT COUNT(*) FROM assignment a WHERE a.rater_id = r.id AND a.completed_at IS NOT NULL),
                (SELECT COUNT(*) FROM rating g
                  WHERE g.rater_id = r.id AND g.occasion = 0 AND g.value IS NOT NULL)
             FROM rater r WHERE r.kind = 'expert' ORDER BY r.name",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ExpertQueue {
                rater_id: r.get(0)?,
                name: r.get(1)?,
                items: r.get(2)?,
                completed: r.get(3)?,
                ratings: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Whether each item of a rater's queue is complete, in queue order.
    pub fn completion_flags(&self, rater_id: i64) -> StoreResult<Vec<bool>> {
        let mut stmt = self.conn().prepare(
            "SELECT completed_at IS NOT NULL FROM assignment WHERE rater_id = ?1 ORDER BY position",
        )?;
        let rows = stmt.query_map([rater_id], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The item at `index` (0-based) of a rater's queue.
    pub fn assignment_at(
        &self,
        rater_id: i64,
        index: i64,
    ) -> StoreResult<Option<AssignmentRecord>> {
        Ok(self
            .conn()
            .prepare_cached(&format!(
                "SELECT {ASSIGNMENT_COLUMNS} FROM assignment WHERE rater_id = ?1
                 ORDER BY position LIMIT 1 OFFSET ?2"
            ))?
            .query_row(params![rater_id, index], assignment_record)
            .optional()?)
    }

    /// A rater's queue, in order.
    pub fn assignments_of_rater(&self, rater_id: i64) -> StoreResult<Vec<AssignmentRecord>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {ASSIGNMENT_COLUMNS} FROM assignment WHERE rater_id = ?1 ORDER BY position"
        ))?;
        let rows = stmt.query_map([rater_id], assignment_record)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The rationale, flag and queue counts shown with an item.
    pub fn item_state(&self, assignment_id: i64) -> StoreResult<ItemState> {
        Ok(self.conn().prepare_cached(
            "SELECT a.rationale,
                EXISTS(SELECT 1 FROM flag f WHERE f.rater_id = a.rater_id AND f.response_id = a.response_id
                       AND f.resolved_at IS NULL),
                (SELECT COUNT(*) FROM assignment WHERE rater_id = a.rater_id),
                (SELECT COUNT(completed_at) FROM assignment WHERE rater_id = a.rater_id)
             FROM assignment a WHERE a.id = ?1",
        )?
        .query_row([assignment_id], |r| {
            Ok(ItemState {
                rationale: r.get(0)?,
                flagged: r.get(1)?,
                counts: QueueCounts {
                    total: r.get(2)?,
                    completed: r.get(3)?,
                },
            })
        })?)
    }

    /// An expert's assigned items in shown order.
    pub fn expert_items(&self, expert: &str) -> StoreResult<Vec<AssignedItem>> {
        let mut stmt = self.conn().prepare(
            "SELECT a.position, a.response_id, v.external_id, a.purpose
             FROM assignment a JOIN rater r ON r.id = a.rater_id
             JOIN response p ON p.id = a.response_id
             JOIN conversation v ON v.id = p.conversation_id
             WHERE r.name = ?1 ORDER BY a.position",
        )?;
        let rows = stmt.query_map([expert], |r| {
            Ok(AssignedItem {
                position: r.get(0)?,
                response_id: r.get(1)?,
                conversation: r.get(2)?,
                purpose: Purpose::stored(&r.get::<_, String>(3)?),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every expert's assigned item with how many criteria of its rubric have a value on the
    /// item's occasion (the retest value for a retest item).
    pub fn expert_item_progress(&self) -> StoreResult<Vec<ItemProgressRow>> {
        let mut stmt = self.conn().prepare(
            "SELECT r.name, a.purpose,
                (SELECT COUNT(*) FROM rating g JOIN criterion c ON c.id = g.criterion_id
                 WHERE g.rater_id = a.rater_id AND g.response_id = a.response_id
                   AND g.occasion = CASE WHEN a.purpose = 'retest' THEN 1 ELSE 0 END
                   AND g.value IS NOT NULL AND c.rubric_id = v.rubric_id),
                (SELECT COUNT(*) FROM criterion c WHERE c.rubric_id = v.rubric_id)
             FROM assignment a JOIN rater r ON r.id = a.rater_id
             JOIN response p ON p.id = a.response_id
             JOIN conversation v ON v.id = p.conversation_id
             WHERE r.kind = 'expert'",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ItemProgressRow {
                expert: r.get(0)?,
                purpose: Purpose::stored(&r.get::<_, String>(1)?),
                rated: r.get(2)?,
                needed: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Conversations drawn by the last assignment.
    pub fn sampled_conversations(&self) -> StoreResult<i64> {
        Ok(self
            .conn()
            .query_row("SELECT COUNT(*) FROM sample_item", [], |r| r.get(0))?)
    }

    /// A rater's assigned items with their texts, in queue order.
    pub fn assigned_texts(&self, rater_id: i64) -> StoreResult<Vec<AssignedText>> {
        let mut stmt = self.conn().prepare(
            "SELECT a.position, a.response_id, a.purpose, v.external_id, v.context,
                    COALESCE(p.text, ''), v.rubric_id
             FROM assignment a JOIN response p ON p.id = a.response_id
             JOIN conversation v ON v.id = p.conversation_id
             WHERE a.rater_id = ?1 ORDER BY a.position",
        )?;
        let rows = stmt.query_map([rater_id], |r| {
            Ok(AssignedText {
                position: r.get(0)?,
                response_id: r.get(1)?,
                purpose: Purpose::stored(&r.get::<_, String>(2)?),
                conversation: r.get(3)?,
                context: r.get(4)?,
                answer: r.get(5)?,
                rubric_id: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A rater's assigned items as returned sheets name them.
    pub fn assigned_keys(&self, rater_id: i64) -> StoreResult<Vec<AssignedKey>> {
        let mut stmt = self.conn().prepare(
            "SELECT a.response_id, a.purpose, v.external_id, b.key, a.position FROM assignment a
             JOIN response p ON p.id = a.response_id JOIN conversation v ON v.id = p.conversation_id
             JOIN rubric b ON b.id = v.rubric_id WHERE a.rater_id = ?1",
        )?;
        let rows = stmt.query_map([rater_id], |r| {
            Ok(AssignedKey {
                position: r.get(4)?,
                response_id: r.get(0)?,
                purpose: Purpose::stored(&r.get::<_, String>(1)?),
                conversation: r.get(2)?,
                rubric: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl StudyTx<'_> {
    /// First-occasion ratings experts entered on responses assigned to them.
    pub fn expert_ratings_on_assignments(&self) -> StoreResult<i64> {
        Ok(self.conn().query_row(
            "SELECT COUNT(*) FROM rating g JOIN rater r ON r.id = g.rater_id
             WHERE r.kind = 'expert' AND g.occasion = 0 AND EXISTS (SELECT 1 FROM assignment a
                 WHERE a.rater_id = g.rater_id AND a.response_id = g.response_id)",
            [],
            |r| r.get(0),
        )?)
    }

    /// Remove every expert's assignment (before a replacement is written).
    pub fn clear_expert_assignments(&mut self) -> StoreResult<()> {
        self.conn().execute(
            "DELETE FROM assignment WHERE rater_id IN (SELECT id FROM rater WHERE kind = 'expert')",
            [],
        )?;
        Ok(())
    }

    /// Replace the drawn sample: (conversation id, stratum) in draw order.
    pub fn replace_sample(&mut self, sample: &[(i64, Option<String>)]) -> StoreResult<()> {
        self.conn().execute("DELETE FROM sample_item", [])?;
        let mut insert = self.conn().prepare(
            "INSERT INTO sample_item(conversation_id, position, stratum) VALUES (?1, ?2, ?3)",
        )?;
        for (i, (id, stratum)) in sample.iter().enumerate() {
            insert.execute(params![id, i as i64, stratum])?;
        }
        Ok(())
    }

    /// Write assignment rows.
    pub fn add_assignments(&mut self, rows: &[NewAssignment]) -> StoreResult<()> {
        let mut insert = self.conn().prepare_cached(
            "INSERT INTO assignment(rater_id, response_id, position, purpose, first_shown_at,
                 completed_at, seconds_spent) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for a in rows {
            insert.execute(params![
                a.rater_id,
                a.response_id,
                a.position,
                a.purpose.as_str(),
                a.first_shown_at,
                a.completed_at,
                a.seconds_spent
            ])?;
        }
        Ok(())
    }

    /// When an item was first shown, if it was.
    pub fn first_shown_at(&self, assignment_id: i64) -> StoreResult<Option<Millis>> {
        Ok(self
            .conn()
            .prepare_cached("SELECT first_shown_at FROM assignment WHERE id = ?1")?
            .query_row([assignment_id], |r| r.get::<_, Option<Millis>>(0))
            .optional()?
            .flatten())
    }

    /// Record when an item was first shown (kept if it already was).
    pub fn mark_shown(&mut self, assignment_id: i64) -> StoreResult<()> {
        self.conn()
            .prepare_cached(
                "UPDATE assignment SET first_shown_at = ?2 WHERE id = ?1 AND first_shown_at IS NULL",
            )?
            .execute(params![assignment_id, self.now])?;
        Ok(())
    }

    /// Record that an item is complete (the first completion time is kept); true when this call
    /// completed it.
    pub fn mark_completed(&mut self, assignment_id: i64) -> StoreResult<bool> {
        let changed = self
            .conn()
            .prepare_cached(
                "UPDATE assignment SET completed_at = ?2 WHERE id = ?1 AND completed_at IS NULL",
            )?
            .execute(params![assignment_id, self.now])?;
        Ok(changed == 1)
    }

    /// Add time spent on an item.
    pub fn add_seconds(&mut self, assignment_id: i64, seconds: f64) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE assignment SET seconds_spent = seconds_spent + ?2 WHERE id = ?1",
            params![assignment_id, seconds],
        )?;
        Ok(())
    }

    /// The rationale kept with an item.
    pub fn item_rationale(&self, assignment_id: i64) -> StoreResult<Option<String>> {
        Ok(self
            .conn()
            .prepare_cached("SELECT rationale FROM assignment WHERE id = ?1")?
            .query_row([assignment_id], |r| r.get(0))?)
    }

    /// Set the rationale kept with an item.
    pub fn set_item_rationale(
        &mut self,
        assignment_id: i64,
        rationale: Option<&str>,
    ) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE assignment SET rationale = ?2 WHERE id = ?1",
            params![assignment_id, rationale],
        )?;
        Ok(())
    }

    /// A rater's item for one response and purpose.
    pub fn assignment_for(
        &self,
        rater_id: i64,
        response_id: i64,
        purpose: Purpose,
    ) -> StoreResult<Option<AssignmentRecord>> {
        Ok(self
            .conn()
            .prepare_cached(&format!(
                "SELECT {ASSIGNMENT_COLUMNS} FROM assignment
                 WHERE rater_id = ?1 AND response_id = ?2 AND purpose = ?3"
            ))?
            .query_row(
                params![rater_id, response_id, purpose.as_str()],
                assignment_record,
            )
            .optional()?)
    }

    /// Overwrite what was recorded while an item was worked on (first shown, completed, time).
    pub fn set_item_progress(
        &mut self,
        assignment_id: i64,
        first_shown_at: Option<Millis>,
        completed_at: Option<Millis>,
        seconds_spent: f64,
    ) -> StoreResult<()> {
        self.conn()
            .prepare_cached(
                "UPDATE assignment SET first_shown_at = ?2, completed_at = ?3,
                     seconds_spent = ?4 WHERE id = ?1",
            )?
            .execute(params![
                assignment_id,
                first_shown_at,
                completed_at,
                seconds_spent
            ])?;
        Ok(())
    }

    /// Give `response` to `rater` as a regular item at the end of their queue; returns its
    /// position.
    pub fn append_regular_assignment(
        &mut self,
        rater_id: i64,
        response_id: i64,
    ) -> StoreResult<i64> {
        let position: i64 = self.conn().query_row(
            "SELECT COALESCE(MAX(position), 0) + 1 FROM assignment WHERE rater_id = ?1",
            [rater_id],
            |r| r.get(0),
        )?;
        self.conn().execute(
            "INSERT INTO assignment(rater_id, response_id, position, purpose)
             VALUES (?1, ?2, ?3, 'regular')",
            params![rater_id, response_id, position],
        )?;
        Ok(position)
    }
}

/// Reads a store and a write transaction share (through their [`StudyRead`](super::StudyRead)).
impl super::StudyRead<'_> {
    /// Assignment rows of every expert together.
    pub fn expert_assignment_count(&self) -> StoreResult<i64> {
        expert_assignment_count(self.conn())
    }

    /// A rater's queue size and completed items.
    pub fn queue_counts(&self, rater_id: i64) -> StoreResult<QueueCounts> {
        queue_counts(self.conn(), rater_id)
    }
}
