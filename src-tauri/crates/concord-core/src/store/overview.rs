//! What the first screen shows: counts and summaries read across the dataset, rubric and
//! rater tables. Read-only; the rating counts are the ones the store keeps as it writes ratings
//! (`rating_count`), so the screen does not scan the ratings.

use super::{RaterSummary, Store, StoreResult};
use crate::rubric::{Group, LocalText};
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RubricSummary {
    pub key: String,
    pub name: LocalText,
    pub criteria: Vec<CriterionSummary>,
    /// The groups of criteria (CSS, ARS) with their names.
    pub groups: Vec<Group>,
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
    /// Responses the study holds no answer text for (filled by importing the MentalBench-100k file).
    pub responses_without_text: i64,
    pub sources: Vec<SourceCount>,
    pub raters: Vec<RaterSummary>,
    pub ratings: i64,
    /// The sample data the study holds (`demo`: the demo study, or one begun from it); absent for
    /// a study of one's own (and from the JSON, which then reads as an earlier release's).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub sample_data: Option<String>,
}

fn json_text(s: &str) -> LocalText {
    serde_json::from_str(s).unwrap_or_default()
}

impl Store {
    pub fn overview(&self) -> StoreResult<StudyOverview> {
        let conn = self.conn();
        let count = |sql: &str| -> StoreResult<i64> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };

        let mut rubrics = Vec::new();
        // Group names are only in the stored rubric text; one that cannot be read costs its
        // group names here, not the first screen (the rubric's own readers report it).
        let mut groups: std::collections::HashMap<String, Vec<Group>> = self
            .rubrics()
            .unwrap_or_default()
            .into_iter()
            .map(|r| (r.rubric.id, r.rubric.groups))
            .collect();
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
                    groups: groups.remove(&key).unwrap_or_default(),
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
            responses_without_text: count(&format!(
                "SELECT COUNT(*) FROM response WHERE text IS NULL AND NOT {}",
                super::dataset::session_item("response")
            ))?,
            sources,
            raters: self.raters()?,
            ratings: self.rating_total()?,
            sample_data: self.meta(super::meta::SAMPLE_DATA_META)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::SystemClock;
    use std::sync::Arc;

    #[test]
    fn a_rubric_summary_names_its_groups_in_each_language() {
        let mut store = Store::in_memory(Arc::new(SystemClock)).unwrap();
        crate::intake::demo::populate_demo(&mut store, 7).unwrap();
        let overview = store.overview().unwrap();
        let mentalbench = overview
            .rubrics
            .iter()
            .find(|r| r.key == "mentalbench")
            .expect("the demo has MentalBench");
        let groups: Vec<(&str, Option<&str>)> = mentalbench
            .groups
            .iter()
            .map(|g| (g.id.as_str(), g.label.get("zh").map(String::as_str)))
            .collect();
        assert_eq!(
            groups,
            [("CSS", Some("认知支持分")), ("ARS", Some("情感共鸣分"))],
            "the window can name the group rows of the agreement table in the interface language"
        );
        let psycrisis = overview
            .rubrics
            .iter()
            .find(|r| r.key == "psycrisis")
            .expect("the demo has PsyCrisis");
        assert!(
            psycrisis.groups.is_empty(),
            "a rubric without groups has none"
        );
    }
}
