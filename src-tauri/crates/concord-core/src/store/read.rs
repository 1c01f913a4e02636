//! Reads from a study: the overview shown on the first screen, the stored rubrics, raters and
//! rating histories. Everything here is derived from the database; nothing is cached.

use super::{Store, StoreError, StoreResult};
use crate::rubric::{LocalText, Rubric, RubricFormat};
use crate::store::RaterKind;
use rusqlite::{params, OptionalExtension};
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RubricSummary {
    pub key: String,
    pub name: LocalText,
    pub criteria: Vec<CriterionSummary>,
    pub conversations: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CriterionSummary {
    pub key: String,
    pub label: LocalText,
    pub group: Option<String>,
    pub scale: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SourceCount {
    pub key: String,
    pub name: String,
    pub family: Option<String>,
    pub kind: String,
    pub responses: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RaterSummary {
    pub id: i64,
    pub name: String,
    pub kind: RaterKind,
    pub model_id: Option<String>,
    pub family: Option<String>,
    pub ratings: i64,
    pub responses_rated: i64,
}

/// What the first screen shows: the open study, read from SQLite.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StudyOverview {
    pub path: String,
    pub title: String,
    pub schema_version: i64,
    pub rubrics: Vec<RubricSummary>,
    pub conversations: i64,
    pub responses: i64,
    pub sources: Vec<SourceCount>,
    pub raters: Vec<RaterSummary>,
    pub ratings: i64,
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

fn json_text(s: &str) -> LocalText {
    serde_json::from_str(s).unwrap_or_default()
}

impl Store {
    pub fn meta(&self, key: &str) -> StoreResult<Option<String>> {
        Ok(self
            .conn()
            .query_row("SELECT value FROM study_meta WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// The study's title (set when it was created; the file name otherwise).
    pub fn title(&self) -> StoreResult<String> {
        if let Some(t) = self.meta("title")? {
            return Ok(t);
        }
        Ok(self
            .path()
            .and_then(|p| p.file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "Untitled study".to_string()))
    }

    /// Every rubric stored in the study, parsed back from its stored rubric-file text.
    pub fn rubrics(&self) -> StoreResult<Vec<(i64, Rubric)>> {
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
            let rubric = Rubric::parse(&text, RubricFormat::Toml, &format!("stored rubric {key}"))
                .map_err(|e| StoreError::Invalid(e.to_string()))?;
            out.push((id, rubric));
        }
        Ok(out)
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

    pub fn raters(&self) -> StoreResult<Vec<RaterSummary>> {
        let mut stmt = self.conn().prepare(
            "SELECT r.id, r.name, r.kind, r.model_id, r.family,
                    (SELECT COUNT(*) FROM rating g WHERE g.rater_id = r.id AND g.value IS NOT NULL),
                    (SELECT COUNT(DISTINCT g.response_id) FROM rating g WHERE g.rater_id = r.id)
             FROM rater r ORDER BY r.kind, r.name",
        )?;
        let rows = stmt.query_map([], |r| {
            let kind: String = r.get(2)?;
            Ok(RaterSummary {
                id: r.get(0)?,
                name: r.get(1)?,
                kind: RaterKind::parse(&kind).unwrap_or(RaterKind::Expert),
                model_id: r.get(3)?,
                family: r.get(4)?,
                ratings: r.get(5)?,
                responses_rated: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn overview(&self) -> StoreResult<StudyOverview> {
        let conn = self.conn();
        let count = |sql: &str| -> StoreResult<i64> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };

        let mut rubrics = Vec::new();
        {
            let mut stmt = conn.prepare(
                "SELECT r.id, r.key, r.name_json,
                        (SELECT COUNT(*) FROM conversation c WHERE c.rubric_id = r.id)
                 FROM rubric r ORDER BY r.id",
            )?;
            let mut crit = conn.prepare(
                "SELECT key, label_json, group_key, scale_kind FROM criterion
                 WHERE rubric_id = ?1 ORDER BY position",
            )?;
            let rows: Vec<(i64, String, String, i64)> = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect::<Result<_, _>>()?;
            for (id, key, name, conversations) in rows {
                let criteria = crit
                    .query_map([id], |r| {
                        Ok(CriterionSummary {
                            key: r.get(0)?,
                            label: json_text(&r.get::<_, String>(1)?),
                            group: r.get(2)?,
                            scale: r.get(3)?,
                        })
                    })?
                    .collect::<Result<_, _>>()?;
                rubrics.push(RubricSummary {
                    key,
                    name: json_text(&name),
                    criteria,
                    conversations,
                });
            }
        }

        let sources = {
            let mut stmt = conn.prepare(
                "SELECT s.key, s.name, s.family, s.kind, COUNT(p.id)
                 FROM source s LEFT JOIN response p ON p.source_id = s.id
                 GROUP BY s.id ORDER BY s.kind, s.name",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(SourceCount {
                    key: r.get(0)?,
                    name: r.get(1)?,
                    family: r.get(2)?,
                    kind: r.get(3)?,
                    responses: r.get(4)?,
                })
            })?;
            rows.collect::<Result<Vec<_>, _>>()?
        };

        Ok(StudyOverview {
            path: self.path_string(),
            title: self.title()?,
            schema_version: count("PRAGMA user_version")?,
            rubrics,
            conversations: count("SELECT COUNT(*) FROM conversation")?,
            responses: count("SELECT COUNT(*) FROM response")?,
            sources,
            raters: self.raters()?,
            ratings: count("SELECT COUNT(*) FROM rating WHERE value IS NOT NULL")?,
        })
    }

    /// The current value and every earlier value of one rating, newest first.
    pub fn rating_versions(
        &self,
        rater_id: i64,
        response_id: i64,
        criterion_id: i64,
    ) -> StoreResult<Vec<RatingVersion>> {
        let conn = self.conn();
        let current: Option<(i64, RatingVersion)> = conn
            .query_row(
                "SELECT id, value, rationale, origin, updated_at FROM rating
                 WHERE rater_id = ?1 AND response_id = ?2 AND criterion_id = ?3",
                params![rater_id, response_id, criterion_id],
                |r| {
                    Ok((
                        r.get(0)?,
                        RatingVersion {
                            value: r.get(1)?,
                            rationale: r.get(2)?,
                            origin: r.get(3)?,
                            valid_from: r.get(4)?,
                            replaced_at: None,
                        },
                    ))
                },
            )
            .optional()?;
        let Some((id, current)) = current else {
            return Ok(Vec::new());
        };
        let mut out = vec![current];
        let mut stmt = conn.prepare(
            "SELECT value, rationale, origin, valid_from, replaced_at FROM rating_history
             WHERE rating_id = ?1 ORDER BY replaced_at DESC, id DESC",
        )?;
        let rows = stmt.query_map([id], |r| {
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
}
