//! The ratings of one rubric held in memory for agreement: per criterion one dense array of
//! raters × responses (`NaN` = no value), plus the sources, raters and groups they refer to. It is
//! loaded from the study once; after that a single new or changed rating is applied with
//! [`AgreementData::apply`] in O(1), so the desktop panel can recompute its report without going
//! back to SQLite.

use crate::rubric::{localized, Rubric, Scale};
use crate::store::{RaterKind, Store, StoreError, StoreResult};
use rusqlite::params;
use std::collections::HashMap;

/// A criterion as agreement sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct CriterionInfo {
    pub id: i64,
    pub key: String,
    /// English display name ("Guidance").
    pub label: String,
    pub group: Option<String>,
    pub scale: Scale,
}

/// A group of criteria (CSS, ARS): its members by position in [`AgreementData::criteria`].
#[derive(Debug, Clone, PartialEq)]
pub struct GroupInfo {
    pub id: String,
    pub label: String,
    pub members: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SourceInfo {
    pub id: i64,
    pub key: String,
    pub name: String,
    pub family: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RaterInfo {
    pub id: i64,
    pub name: String,
    pub kind: RaterKind,
    pub model_id: Option<String>,
    pub family: Option<String>,
}

/// One response: its source (position in [`AgreementData::sources`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResponseInfo {
    pub id: i64,
    pub source: usize,
}

/// What [`AgreementData::apply`] changed, so only the affected report cells are recomputed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Touched {
    pub rater: usize,
    pub criterion: usize,
}

/// Why a rating could not be applied in memory (the caller reloads from the study instead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error("rater {0} is not in the loaded data")]
    UnknownRater(i64),
    #[error("response {0} is not in the loaded data")]
    UnknownResponse(i64),
    #[error("criterion {0} is not in the loaded rubric")]
    UnknownCriterion(i64),
}

/// A rubric's ratings in memory.
#[derive(Debug, Clone)]
pub struct AgreementData {
    pub rubric_key: String,
    pub criteria: Vec<CriterionInfo>,
    pub groups: Vec<GroupInfo>,
    pub sources: Vec<SourceInfo>,
    pub raters: Vec<RaterInfo>,
    pub responses: Vec<ResponseInfo>,
    rater_index: HashMap<i64, usize>,
    response_index: HashMap<i64, usize>,
    criterion_index: HashMap<i64, usize>,
    /// `values[criterion][rater * responses.len() + response]`, NaN when absent.
    values: Vec<Vec<f64>>,
}

impl AgreementData {
    /// Build from parts (tests and synthetic benchmarks); every value starts absent.
    pub fn new(
        rubric: &Rubric,
        sources: Vec<SourceInfo>,
        raters: Vec<RaterInfo>,
        responses: Vec<ResponseInfo>,
    ) -> AgreementData {
        let criteria: Vec<CriterionInfo> = rubric
            .criteria
            .iter()
            .enumerate()
            .map(|(i, c)| CriterionInfo {
                id: i as i64 + 1,
                key: c.id.clone(),
                label: localized(&c.label, "en").to_string(),
                group: c.group.clone(),
                scale: c.scale.clone(),
            })
            .collect();
        AgreementData::assemble(rubric, criteria, sources, raters, responses)
    }

    fn assemble(
        rubric: &Rubric,
        criteria: Vec<CriterionInfo>,
        sources: Vec<SourceInfo>,
        raters: Vec<RaterInfo>,
        responses: Vec<ResponseInfo>,
    ) -> AgreementData {
        let groups = rubric
            .groups
            .iter()
            .map(|g| GroupInfo {
                id: g.id.clone(),
                label: g.id.clone(),
                members: criteria
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.group.as_deref() == Some(g.id.as_str()))
                    .map(|(i, _)| i)
                    .collect(),
            })
            .filter(|g| !g.members.is_empty())
            .collect();
        let size = raters.len() * responses.len();
        AgreementData {
            rubric_key: rubric.id.clone(),
            values: vec![vec![f64::NAN; size]; criteria.len()],
            rater_index: raters.iter().enumerate().map(|(i, r)| (r.id, i)).collect(),
            response_index: responses
                .iter()
                .enumerate()
                .map(|(i, r)| (r.id, i))
                .collect(),
            criterion_index: criteria
                .iter()
                .enumerate()
                .map(|(i, c)| (c.id, i))
                .collect(),
            criteria,
            groups,
            sources,
            raters,
            responses,
        }
    }

    /// Load every rating of rubric `rubric_key` from the study.
    pub fn load(store: &Store, rubric_key: &str) -> StoreResult<AgreementData> {
        let (rubric_id, rubric) = store
            .rubrics()?
            .into_iter()
            .find(|(_, r)| r.id == rubric_key)
            .ok_or_else(|| StoreError::NotFound {
                what: "rubric",
                key: rubric_key.to_string(),
            })?;
        let conn = store.conn();
        let mut criteria = Vec::new();
        {
            let mut stmt = conn
                .prepare("SELECT id, key FROM criterion WHERE rubric_id = ?1 ORDER BY position")?;
            let rows = stmt.query_map([rubric_id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })?;
            for row in rows {
                let (id, key) = row?;
                let c = rubric
                    .criterion(&key)
                    .ok_or_else(|| StoreError::Invalid(format!("criterion {key} not in rubric")))?;
                criteria.push(CriterionInfo {
                    id,
                    key,
                    label: localized(&c.label, "en").to_string(),
                    group: c.group.clone(),
                    scale: c.scale.clone(),
                });
            }
        }
        let sources: Vec<SourceInfo> = {
            let mut stmt = conn.prepare("SELECT id, key, name, family FROM source ORDER BY id")?;
            let rows = stmt.query_map([], |r| {
                Ok(SourceInfo {
                    id: r.get(0)?,
                    key: r.get(1)?,
                    name: r.get(2)?,
                    family: r.get(3)?,
                })
            })?;
            rows.collect::<Result<_, _>>()?
        };
        let source_pos: HashMap<i64, usize> =
            sources.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
        let raters: Vec<RaterInfo> = {
            let mut stmt = conn.prepare(
                "SELECT id, name, kind, model_id, family FROM rater ORDER BY kind, name",
            )?;
            let rows = stmt.query_map([], |r| {
                let kind: String = r.get(2)?;
                Ok(RaterInfo {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    kind: RaterKind::parse(&kind).unwrap_or(RaterKind::Expert),
                    model_id: r.get(3)?,
                    family: r.get(4)?,
                })
            })?;
            rows.collect::<Result<_, _>>()?
        };
        let responses: Vec<ResponseInfo> = {
            let mut stmt = conn.prepare(
                "SELECT p.id, p.source_id FROM response p
                 JOIN conversation c ON c.id = p.conversation_id
                 WHERE c.rubric_id = ?1 ORDER BY p.id",
            )?;
            let rows = stmt.query_map([rubric_id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (id, source_id) = row?;
                let source = *source_pos
                    .get(&source_id)
                    .ok_or_else(|| StoreError::Invalid(format!("unknown source {source_id}")))?;
                out.push(ResponseInfo { id, source });
            }
            out
        };
        let mut data = AgreementData::assemble(&rubric, criteria, sources, raters, responses);
        let mut stmt = conn.prepare(
            "SELECT g.rater_id, g.response_id, g.criterion_id, g.value FROM rating g
             JOIN criterion c ON c.id = g.criterion_id
             WHERE c.rubric_id = ?1 AND g.value IS NOT NULL",
        )?;
        let mut rows = stmt.query(params![rubric_id])?;
        while let Some(row) = rows.next()? {
            let (rater, response, criterion, value): (i64, i64, i64, i64) =
                (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
            // Ratings of responses outside this rubric's conversations cannot occur (the
            // criterion belongs to the rubric), so a failed lookup is skipped, never a panic.
            let _ = data.apply(rater, response, criterion, Some(value as f64));
        }
        Ok(data)
    }

    /// Set (or clear, with `None`) one value in memory.
    pub fn apply(
        &mut self,
        rater_id: i64,
        response_id: i64,
        criterion_id: i64,
        value: Option<f64>,
    ) -> Result<Touched, ApplyError> {
        let rater = *self
            .rater_index
            .get(&rater_id)
            .ok_or(ApplyError::UnknownRater(rater_id))?;
        let response = *self
            .response_index
            .get(&response_id)
            .ok_or(ApplyError::UnknownResponse(response_id))?;
        let criterion = *self
            .criterion_index
            .get(&criterion_id)
            .ok_or(ApplyError::UnknownCriterion(criterion_id))?;
        let n = self.responses.len();
        self.values[criterion][rater * n + response] = value.unwrap_or(f64::NAN);
        Ok(Touched { rater, criterion })
    }

    /// The values of `rater` on `criterion`, one per response (NaN when absent).
    pub fn series(&self, rater: usize, criterion: usize) -> &[f64] {
        let n = self.responses.len();
        &self.values[criterion][rater * n..(rater + 1) * n]
    }

    /// Positions of the expert raters.
    pub fn experts(&self) -> Vec<usize> {
        (0..self.raters.len())
            .filter(|&i| self.raters[i].kind == RaterKind::Expert)
            .collect()
    }

    /// Positions of the judge raters.
    pub fn judges(&self) -> Vec<usize> {
        (0..self.raters.len())
            .filter(|&i| self.raters[i].kind == RaterKind::Judge)
            .collect()
    }

    /// Number of values present for `rater` on any criterion.
    pub fn count(&self, rater: usize) -> usize {
        (0..self.criteria.len())
            .map(|c| self.series(rater, c).iter().filter(|v| !v.is_nan()).count())
            .sum()
    }

    /// Position of a rater by id.
    pub fn rater_position(&self, rater_id: i64) -> Option<usize> {
        self.rater_index.get(&rater_id).copied()
    }
}
