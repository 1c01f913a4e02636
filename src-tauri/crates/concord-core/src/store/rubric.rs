//! The `rubric` and `criterion` tables: a rubric is stored as its rubric-file text (and parsed
//! back from it), with one `criterion` row per criterion carrying the scale that rating writes
//! are checked against.

use super::{Store, StoreError, StoreResult, StudyTx};
use crate::base::text::quoted;
use crate::rubric::{Rubric, RubricFormat};
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashMap;

/// A criterion named by its rubric's key and its own: how a criterion is matched across studies.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CriterionKey {
    pub rubric: String,
    pub criterion: String,
}

impl CriterionKey {
    pub fn new(rubric: &str, criterion: &str) -> Self {
        CriterionKey {
            rubric: rubric.to_string(),
            criterion: criterion.to_string(),
        }
    }
}

/// A criterion's row id beside its cross-study key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedCriterion {
    pub id: i64,
    pub key: CriterionKey,
}

/// A stored criterion named by its rubric, in rubric order then criterion position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CriterionRef {
    pub id: i64,
    pub rubric: String,
    pub key: String,
}

/// A criterion's scale as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StoredScale {
    pub min: i64,
    pub max: i64,
    pub key: String,
}

fn parse_stored(key: &str, text: &str) -> StoreResult<Rubric> {
    Rubric::parse(text, RubricFormat::Toml, &format!("stored rubric {key}"))
        .map_err(|e| StoreError::Invalid(e.to_string()))
}

fn rubric_id(c: &Connection, key: &str) -> StoreResult<Option<i64>> {
    Ok(
        c.query_row("SELECT id FROM rubric WHERE key = ?1", [key], |r| r.get(0))
            .optional()?,
    )
}

fn criterion_ids(c: &Connection, rubric_id: i64) -> StoreResult<HashMap<String, i64>> {
    let mut stmt = c.prepare_cached("SELECT key, id FROM criterion WHERE rubric_id = ?1")?;
    let rows = stmt.query_map([rubric_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn criterion_keys(c: &Connection) -> StoreResult<Vec<KeyedCriterion>> {
    let mut stmt = c.prepare(
        "SELECT c.id, r.key, c.key FROM criterion c JOIN rubric r ON r.id = c.rubric_id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(KeyedCriterion {
            id: r.get(0)?,
            key: CriterionKey {
                rubric: r.get(1)?,
                criterion: r.get(2)?,
            },
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The scale of one criterion.
pub(super) fn scale(c: &Connection, criterion_id: i64) -> StoreResult<StoredScale> {
    c.prepare_cached("SELECT scale_min, scale_max, key FROM criterion WHERE id = ?1")?
        .query_row([criterion_id], |r| {
            Ok(StoredScale {
                min: r.get(0)?,
                max: r.get(1)?,
                key: r.get(2)?,
            })
        })
        .optional()?
        .ok_or(StoreError::NotFound {
            what: "criterion",
            key: criterion_id.to_string(),
        })
}

/// Criterion id → (scale min, scale max) of every criterion.
pub(super) fn scales(c: &Connection) -> StoreResult<HashMap<i64, (i64, i64)>> {
    let mut stmt = c.prepare("SELECT id, scale_min, scale_max FROM criterion")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A criterion as stored: its row id and its key in the rubric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCriterion {
    pub id: i64,
    pub key: String,
}

/// A rubric as stored: its row id and the rubric.
#[derive(Debug, Clone)]
pub struct StoredRubric {
    pub id: i64,
    pub rubric: Rubric,
}

impl Store {
    /// Every rubric stored in the study, parsed back from its stored rubric-file text.
    pub fn rubrics(&self) -> StoreResult<Vec<StoredRubric>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT id, key, source_toml FROM rubric ORDER BY id")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, key, text) = row?;
            out.push(StoredRubric {
                id,
                rubric: parse_stored(&key, &text)?,
            });
        }
        Ok(out)
    }

    /// The rubric the conversation of a response is rated with.
    pub fn response_rubric(&self, response_id: i64) -> StoreResult<StoredRubric> {
        let (rubric_id, key, text): (i64, String, String) = self.conn().query_row(
            "SELECT b.id, b.key, b.source_toml FROM response p
             JOIN conversation c ON c.id = p.conversation_id JOIN rubric b ON b.id = c.rubric_id
             WHERE p.id = ?1",
            [response_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        Ok(StoredRubric {
            id: rubric_id,
            rubric: parse_stored(&key, &text)?,
        })
    }

    /// The rubrics the study's conversations use, by id.
    pub fn rubric_ids_in_use(&self) -> StoreResult<Vec<i64>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT DISTINCT rubric_id FROM conversation ORDER BY rubric_id")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The id of criterion `key` of rubric `rubric_key`.
    pub fn criterion_id(&self, rubric_key: &str, key: &str) -> StoreResult<i64> {
        self.conn()
            .query_row(
                "SELECT c.id FROM criterion c JOIN rubric r ON r.id = c.rubric_id
                 WHERE r.key = ?1 AND c.key = ?2",
                params![rubric_key, key],
                |r| r.get(0),
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound {
                what: "criterion",
                key: format!("{rubric_key}/{key}"),
            })
    }

    /// One rubric's criteria in their rubric order.
    pub fn criteria_in_order(&self, rubric_id: i64) -> StoreResult<Vec<StoredCriterion>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT id, key FROM criterion WHERE rubric_id = ?1 ORDER BY position")?;
        let rows = stmt.query_map([rubric_id], |r| {
            Ok(StoredCriterion {
                id: r.get(0)?,
                key: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every criterion with its rubric key, rubric by rubric in rubric order.
    pub fn criterion_refs(&self) -> StoreResult<Vec<CriterionRef>> {
        let mut stmt = self.conn().prepare(
            "SELECT c.id, r.key, c.key FROM criterion c JOIN rubric r ON r.id = c.rubric_id
             ORDER BY r.id, c.position",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(CriterionRef {
                id: r.get(0)?,
                rubric: r.get(1)?,
                key: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl StudyTx<'_> {
    /// Store a rubric and its criteria; returns the existing id when a rubric with the same id and
    /// identical definition is already present, and refuses a different definition under that id.
    pub fn add_rubric(&mut self, rubric: &Rubric) -> StoreResult<i64> {
        let text = rubric.to_toml();
        let existing: Option<(i64, String)> = self
            .conn()
            .query_row(
                "SELECT id, source_toml FROM rubric WHERE key = ?1",
                [&rubric.id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        if let Some((id, stored)) = existing {
            if stored == text {
                return Ok(id);
            }
            // A rubric stored by an earlier release has no span codes: the same rubric with codes
            // adds them (the row is sealed like any other change), and the same rubric without
            // codes keeps those stored.
            let stored_rubric = parse_stored(&rubric.id, &stored)?;
            if stored_rubric.without_codes() == rubric.without_codes() {
                if stored_rubric.codes.is_empty() {
                    self.conn().execute(
                        "UPDATE rubric SET source_toml = ?2 WHERE id = ?1",
                        params![id, text],
                    )?;
                    let keys: Vec<&str> = rubric.codes.iter().map(|c| c.key.as_str()).collect();
                    self.audit(
                        "concord",
                        "rubric.codes_added",
                        &serde_json::json!({"rubric": rubric.id, "codes": keys}),
                    )?;
                }
                if rubric.codes.is_empty() || stored_rubric.codes.is_empty() {
                    return Ok(id);
                }
            }
            return Err(StoreError::Invalid(format!(
                "the study already has a different rubric with id {}; give the new rubric another id",
                quoted(&rubric.id)
            )));
        }
        self.conn().execute(
            "INSERT INTO rubric(key, version, name_json, source_toml) VALUES (?1, ?2, ?3, ?4)",
            params![
                rubric.id,
                rubric.version,
                serde_json::to_string(&rubric.name).unwrap_or_default(),
                text
            ],
        )?;
        let rubric_id = self.conn().last_insert_rowid();
        let mut stmt = self.conn().prepare(
            "INSERT INTO criterion(rubric_id, key, position, group_key, scale_kind, scale_min,
                 scale_max, label_json, description_json, anchors_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        for (pos, c) in rubric.criteria.iter().enumerate() {
            stmt.execute(params![
                rubric_id,
                c.id,
                pos as i64,
                c.group,
                c.scale.kind_name(),
                c.scale.min(),
                c.scale.max(),
                serde_json::to_string(&c.label).unwrap_or_default(),
                serde_json::to_string(&c.description).unwrap_or_default(),
                serde_json::to_string(&c.anchors).unwrap_or_default(),
            ])?;
        }
        Ok(rubric_id)
    }
}

/// Reads a store and a write transaction share (through their [`StudyRead`](super::StudyRead)).
impl super::StudyRead<'_> {
    /// The id of the rubric stored under `key`, if any.
    pub fn rubric_id(&self, key: &str) -> StoreResult<Option<i64>> {
        rubric_id(self.conn(), key)
    }

    /// Criterion key → id for one stored rubric.
    pub fn criterion_ids(&self, rubric_id: i64) -> StoreResult<HashMap<String, i64>> {
        criterion_ids(self.conn(), rubric_id)
    }

    /// Every criterion's row id beside its rubric and criterion keys.
    pub fn criterion_keys(&self) -> StoreResult<Vec<KeyedCriterion>> {
        criterion_keys(self.conn())
    }
}
