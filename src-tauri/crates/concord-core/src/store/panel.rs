//! Reads of the expert panel as adjudication and rater quality see it: the criteria with their
//! scales, the experts, every expert's first-occasion and retest values with their time stamps,
//! open flags, time per item, and the names responses go by outside the study. Plain scans;
//! callers index them in memory.

use super::{Store, StoreResult};
use crate::base::clock::Millis;
use rusqlite::{params, OptionalExtension};

/// A criterion with its rubric and scale.
#[derive(Debug, Clone, PartialEq)]
pub struct PanelCriterion {
    pub id: i64,
    pub rubric_id: i64,
    pub key: String,
    pub binary: bool,
    pub min: i64,
    pub max: i64,
}

/// An expert rater.
#[derive(Debug, Clone, PartialEq)]
pub struct PanelExpert {
    pub id: i64,
    pub name: String,
}

/// One expert value.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpertValue {
    pub rater_id: i64,
    pub response_id: i64,
    pub criterion_id: i64,
    pub value: i64,
    pub rationale: Option<String>,
    /// When the value was first entered (the order a rater worked in).
    pub created_at: Millis,
}

/// A response as adjudication names it: its external id (or its number) and its rubric.
#[derive(Debug, Clone, PartialEq)]
pub struct PanelResponse {
    pub id: i64,
    pub item: String,
    pub rubric_id: i64,
}

/// Seconds a rater spent on one assigned response.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemTime {
    pub rater_id: i64,
    pub response_id: i64,
    pub seconds: f64,
}

/// Scan `sql` (rater, response, criterion, value, rationale, created_at) keeping the experts'
/// values. The rating table is scanned plainly and the raters filtered here: a join would look up
/// every row through an index, which is several times slower over hundreds of thousands of rows.
fn expert_values(store: &Store, sql: &str, with_rationale: bool) -> StoreResult<Vec<ExpertValue>> {
    let experts: std::collections::HashSet<i64> =
        store.panel_experts()?.into_iter().map(|e| e.id).collect();
    let mut stmt = store.conn().prepare(sql)?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let rater_id: i64 = r.get(0)?;
        if !experts.contains(&rater_id) {
            continue;
        }
        out.push(ExpertValue {
            rater_id,
            response_id: r.get(1)?,
            criterion_id: r.get(2)?,
            value: r.get(3)?,
            rationale: if with_rationale { r.get(4)? } else { None },
            created_at: r.get(5)?,
        });
    }
    Ok(out)
}

/// An expert's open flag on a response, with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenFlag {
    pub response_id: i64,
    pub reason: String,
}

/// A response's user message and, when the study holds it, its answer text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseTexts {
    pub context: String,
    pub text: Option<String>,
}

/// A rater assigned a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RaterResponse {
    pub rater_id: i64,
    pub response_id: i64,
}

impl Store {
    /// Every criterion of every rubric.
    pub fn panel_criteria(&self) -> StoreResult<Vec<PanelCriterion>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, rubric_id, key, scale_kind, scale_min, scale_max FROM criterion
             ORDER BY rubric_id, position",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(PanelCriterion {
                id: r.get(0)?,
                rubric_id: r.get(1)?,
                key: r.get(2)?,
                binary: r.get::<_, String>(3)? == "binary",
                min: r.get(4)?,
                max: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The expert raters, by name.
    pub fn panel_experts(&self) -> StoreResult<Vec<PanelExpert>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT id, name FROM rater WHERE kind = 'expert' ORDER BY name")?;
        let rows = stmt.query_map([], |r| {
            Ok(PanelExpert {
                id: r.get(0)?,
                name: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every expert's first-occasion values (rationales only when asked for).
    pub fn expert_values(&self, with_rationale: bool) -> StoreResult<Vec<ExpertValue>> {
        let sql = if with_rationale {
            "SELECT rater_id, response_id, criterion_id, value, rationale, created_at
             FROM rating WHERE occasion = 0 AND value IS NOT NULL"
        } else {
            "SELECT rater_id, response_id, criterion_id, value, NULL, created_at
             FROM rating WHERE occasion = 0 AND value IS NOT NULL"
        };
        expert_values(self, sql, with_rationale)
    }

    /// Every expert's retest values.
    pub fn expert_retest_values(&self) -> StoreResult<Vec<ExpertValue>> {
        expert_values(
            self,
            "SELECT rater_id, response_id, criterion_id, value, NULL, created_at
             FROM rating WHERE occasion = 1 AND value IS NOT NULL",
            false,
        )
    }

    /// Responses with an open flag from an expert, and the flags' reasons.
    pub fn open_expert_flags(&self) -> StoreResult<Vec<OpenFlag>> {
        let mut stmt = self.conn().prepare(
            "SELECT f.response_id, f.reason FROM flag f JOIN rater r ON r.id = f.rater_id
             WHERE r.kind = 'expert' AND f.resolved_at IS NULL ORDER BY f.id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(OpenFlag {
                response_id: r.get(0)?,
                reason: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Seconds each expert spent on each regular assigned response (0 when never recorded).
    pub fn expert_item_times(&self) -> StoreResult<Vec<ItemTime>> {
        let mut stmt = self.conn().prepare(
            "SELECT a.rater_id, a.response_id, a.seconds_spent FROM assignment a
             JOIN rater r ON r.id = a.rater_id
             WHERE r.kind = 'expert' AND a.purpose = 'regular'",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ItemTime {
                rater_id: r.get(0)?,
                response_id: r.get(1)?,
                seconds: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every response with the name it goes by (external id, else its number) and its rubric.
    pub fn panel_responses(&self) -> StoreResult<Vec<PanelResponse>> {
        let mut stmt = self.conn().prepare(
            "SELECT p.id, COALESCE(p.external_id, CAST(p.id AS TEXT)), c.rubric_id
             FROM response p JOIN conversation c ON c.id = p.conversation_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(PanelResponse {
                id: r.get(0)?,
                item: r.get(1)?,
                rubric_id: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The name item `response_id` goes by: its external id, else its number.
    pub fn item_name(&self, response_id: i64) -> StoreResult<String> {
        Ok(self.conn().query_row(
            "SELECT COALESCE(external_id, CAST(id AS TEXT)) FROM response WHERE id = ?1",
            [response_id],
            |r| r.get(0),
        )?)
    }

    /// The response an item name refers to: its external id, else its number.
    pub fn response_by_item(&self, item: &str) -> StoreResult<Option<PanelResponse>> {
        let by = |sql: &str, key: &dyn rusqlite::ToSql| {
            self.conn()
                .query_row(sql, params![key], |r| {
                    Ok(PanelResponse {
                        id: r.get(0)?,
                        item: r.get(1)?,
                        rubric_id: r.get(2)?,
                    })
                })
                .optional()
        };
        let select = "SELECT p.id, COALESCE(p.external_id, CAST(p.id AS TEXT)), c.rubric_id
             FROM response p JOIN conversation c ON c.id = p.conversation_id";
        if let Some(found) = by(&format!("{select} WHERE p.external_id = ?1"), &item)? {
            return Ok(Some(found));
        }
        match item.parse::<i64>() {
            Ok(id) => Ok(by(
                &format!("{select} WHERE p.id = ?1 AND p.external_id IS NULL"),
                &id,
            )?),
            Err(_) => Ok(None),
        }
    }

    /// The user's message and the answer's text of a response (what an adjudicator, a judge
    /// prompt and an export read).
    pub fn response_texts(&self, response_id: i64) -> StoreResult<ResponseTexts> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT c.context, p.text FROM response p
                 JOIN conversation c ON c.id = p.conversation_id WHERE p.id = ?1",
            )?
            .query_row([response_id], |r| {
                Ok(ResponseTexts {
                    context: r.get(0)?,
                    text: r.get(1)?,
                })
            })?)
    }

    /// Whether any expert has a value on the pair.
    pub fn pair_has_expert_value(&self, response_id: i64, criterion_id: i64) -> StoreResult<bool> {
        Ok(self.conn().query_row(
            "SELECT EXISTS(SELECT 1 FROM rating g JOIN rater r ON r.id = g.rater_id
             WHERE g.response_id = ?1 AND g.criterion_id = ?2 AND r.kind = 'expert'
               AND g.occasion = 0 AND g.value IS NOT NULL)",
            params![response_id, criterion_id],
            |r| r.get(0),
        )?)
    }

    /// Every expert's regular assignments.
    pub fn expert_assignments(&self) -> StoreResult<Vec<RaterResponse>> {
        let mut stmt = self.conn().prepare(
            "SELECT a.rater_id, a.response_id FROM assignment a JOIN rater r ON r.id = a.rater_id
             WHERE r.kind = 'expert' AND a.purpose = 'regular'",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(RaterResponse {
                rater_id: r.get(0)?,
                response_id: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
