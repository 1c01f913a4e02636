//! Calibration and qualification. The lead marks gold items: for some responses a key value per
//! criterion with an explanation, and a pass rule (by default at least 80% of 1–5 answers within
//! ±1 of the key and at least 80% of binary answers exactly on it). While a study has gold items,
//! an expert rates them first: each answer is recorded once (never changed), and only then are the
//! key and its explanation shown. The expert may open the regular queue once they have answered
//! every gold item and passed, or once the lead has overridden the gate (recorded with the lead's
//! name and reason). Calibration answers are kept apart from the study's ratings, so they never
//! enter agreement.

use crate::base::error_code::ErrorCode;
use crate::base::text::quoted;
use crate::rubric::{Anchor, LocalText, Scale};
use crate::store::{
    CalibrationAnswer, CalibrationKey, PanelResponse, ResponseTexts, Store, StoreError,
};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// `study_meta` key of the pass rule (JSON).
pub const PASS_RULE_KEY: &str = "calibration_pass_rule";

/// When an expert passes calibration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PassRule {
    /// A 1–5 answer counts as right within this many points of the key.
    pub likert_tolerance: i64,
    /// Smallest share of right 1–5 answers.
    pub likert_min_share: f64,
    /// Smallest share of binary answers equal to the key.
    pub binary_min_share: f64,
}

impl Default for PassRule {
    fn default() -> Self {
        PassRule {
            likert_tolerance: 1,
            likert_min_share: 0.8,
            binary_min_share: 0.8,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error("no item {q0} in this study", q0 = quoted(&.0))]
    UnknownItem(String),
    #[error("item {item_q} has no criterion {criterion_q} in its rubric", item_q = quoted(&.item), criterion_q = quoted(&.criterion))]
    UnknownCriterion { item: String, criterion: String },
    #[error("{value} is not a level of {criterion} ({min}–{max})")]
    OffScale {
        criterion: String,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error("no expert named {q0} in this study", q0 = quoted(&.0))]
    UnknownExpert(String),
    #[error("calibration item {item} is outside the {total} calibration items")]
    NoSuchItem { item: usize, total: usize },
    #[error("calibration item {item} needs a value for {criterion_q}", criterion_q = quoted(&.criterion))]
    Incomplete { item: usize, criterion: String },
    #[error("a key needs an explanation")]
    EmptyExplanation,
    #[error("an override needs the lead's name and a reason")]
    EmptyOverride,
    #[error("shares must lie between 0 and 1 and the tolerance must not be negative")]
    BadRule,
    #[error("the study's calibration rule is unreadable: {0}")]
    StoredRule(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl crate::base::error_code::Coded for CalibrationError {
    fn code(&self) -> ErrorCode {
        match self {
            CalibrationError::UnknownItem(_) => ErrorCode::UnknownItem,
            CalibrationError::UnknownCriterion { .. } => ErrorCode::UnknownCriterion,
            CalibrationError::OffScale { .. } => ErrorCode::OffScale,
            CalibrationError::UnknownExpert(_) => ErrorCode::UnknownExpert,
            CalibrationError::NoSuchItem { .. } => ErrorCode::NoSuchItem,
            CalibrationError::Incomplete { .. } => ErrorCode::Incomplete,
            CalibrationError::EmptyExplanation => ErrorCode::EmptyExplanation,
            CalibrationError::EmptyOverride => ErrorCode::EmptyOverride,
            CalibrationError::BadRule => ErrorCode::BadRule,
            CalibrationError::StoredRule(_) => ErrorCode::StoredRule,
            CalibrationError::Store(e) => e.code(),
        }
    }
}

/// Where an expert stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum CalibrationState {
    /// The study has no gold items.
    NotRequired,
    InProgress,
    Passed,
    Failed,
    /// The lead let the expert start without passing.
    Overridden,
}

/// An expert's calibration at a glance.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CalibrationStatus {
    pub rater: String,
    pub state: CalibrationState,
    /// Gold items, and how many the expert has answered.
    pub items: usize,
    pub answered: usize,
    /// Share of 1–5 answers within the tolerance (over answered pairs).
    pub likert_share: Option<f64>,
    /// Share of binary answers on the key.
    pub binary_share: Option<f64>,
    pub rule: PassRule,
    /// The lead's override: (lead, reason).
    pub overridden_by: Option<(String, String)>,
    /// Whether the regular queue is open to this expert.
    pub may_rate: bool,
}

/// One criterion of a calibration item; the key and explanation appear only once answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CalibrationCriterion {
    pub key: String,
    pub label: LocalText,
    pub description: LocalText,
    pub scale: Scale,
    pub anchors: Vec<Anchor>,
    pub answer: Option<i64>,
    pub key_value: Option<i64>,
    pub explanation: Option<String>,
    /// The answer counts as right under the pass rule.
    pub right: Option<bool>,
}

/// A calibration item as the expert sees it (no source, model or other rater).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CalibrationItem {
    /// 1-based number among the gold items.
    pub item: usize,
    pub total: usize,
    pub context: String,
    pub answer: Option<String>,
    pub criteria: Vec<CalibrationCriterion>,
    pub answered: bool,
}

/// The study's pass rule (the default when none was set).
pub fn pass_rule(store: &Store) -> Result<PassRule, CalibrationError> {
    match store.meta(PASS_RULE_KEY)? {
        Some(text) => {
            serde_json::from_str(&text).map_err(|e| CalibrationError::StoredRule(e.to_string()))
        }
        None => Ok(PassRule::default()),
    }
}

/// Set the pass rule.
pub fn set_pass_rule(store: &mut Store, rule: &PassRule) -> Result<(), CalibrationError> {
    let share_ok = |s: f64| (0.0..=1.0).contains(&s);
    if rule.likert_tolerance < 0
        || !share_ok(rule.likert_min_share)
        || !share_ok(rule.binary_min_share)
    {
        return Err(CalibrationError::BadRule);
    }
    let text =
        serde_json::to_string(rule).map_err(|e| CalibrationError::StoredRule(e.to_string()))?;
    store.write(|tx| {
        tx.set_meta(PASS_RULE_KEY, &text)?;
        Ok::<_, CalibrationError>(())
    })
}

fn criterion_of(
    store: &Store,
    response: &PanelResponse,
    item: &str,
    key: &str,
) -> Result<crate::store::PanelCriterion, CalibrationError> {
    store
        .panel_criteria()?
        .into_iter()
        .find(|c| c.rubric_id == response.rubric_id && c.key == key)
        .ok_or_else(|| CalibrationError::UnknownCriterion {
            item: item.to_string(),
            criterion: key.to_string(),
        })
}

/// Mark (or re-mark) one criterion of a response as a gold item with its key and explanation.
pub fn set_key(
    store: &mut Store,
    item: &str,
    criterion: &str,
    value: i64,
    explanation: &str,
) -> Result<(), CalibrationError> {
    let explanation = explanation.trim();
    if explanation.is_empty() {
        return Err(CalibrationError::EmptyExplanation);
    }
    let response = store
        .response_by_item(item)?
        .ok_or_else(|| CalibrationError::UnknownItem(item.to_string()))?;
    let c = criterion_of(store, &response, item, criterion)?;
    if value < c.min || value > c.max {
        return Err(CalibrationError::OffScale {
            criterion: c.key,
            value,
            min: c.min,
            max: c.max,
        });
    }
    store.write(|tx| {
        tx.set_calibration_key(&CalibrationKey {
            response_id: response.id,
            criterion_id: c.id,
            value,
            explanation: explanation.to_string(),
        })?;
        Ok::<_, CalibrationError>(())
    })
}

pub fn expert_id(store: &Store, name: &str) -> Result<i64, CalibrationError> {
    store
        .panel_experts()?
        .into_iter()
        .find(|e| e.name == name)
        .map(|e| e.id)
        .ok_or_else(|| CalibrationError::UnknownExpert(name.to_string()))
}

/// The gold responses in order, with their keys by criterion id.
fn gold(store: &Store) -> Result<Vec<(i64, Vec<CalibrationKey>)>, CalibrationError> {
    let mut out: Vec<(i64, Vec<CalibrationKey>)> = Vec::new();
    for k in store.calibration_keys()? {
        match out.last_mut() {
            Some((r, keys)) if *r == k.response_id => keys.push(k),
            _ => out.push((k.response_id, vec![k])),
        }
    }
    Ok(out)
}

fn is_right(answer: i64, key: i64, binary: bool, rule: &PassRule) -> bool {
    if binary {
        answer == key
    } else {
        (answer - key).abs() <= rule.likert_tolerance
    }
}

/// Where an expert stands (by rater id).
pub fn status_of(
    store: &Store,
    rater_id: i64,
    name: &str,
) -> Result<CalibrationStatus, CalibrationError> {
    let rule = pass_rule(store)?;
    let gold = gold(store)?;
    let answers: HashMap<(i64, i64), i64> = store
        .calibration_answers(rater_id)?
        .into_iter()
        .map(|a| ((a.response_id, a.criterion_id), a.value))
        .collect();
    let binary: HashMap<i64, bool> = store
        .panel_criteria()?
        .into_iter()
        .map(|c| (c.id, c.binary))
        .collect();
    let overridden = store.calibration_override(rater_id)?;
    let (mut likert, mut likert_right, mut bin, mut bin_right) = (0usize, 0usize, 0usize, 0usize);
    let mut answered = 0;
    for (_, keys) in &gold {
        let mut all = true;
        for k in keys {
            match answers.get(&(k.response_id, k.criterion_id)) {
                Some(&a) => {
                    let b = binary.get(&k.criterion_id).copied().unwrap_or(false);
                    let right = is_right(a, k.value, b, &rule);
                    if b {
                        bin += 1;
                        bin_right += usize::from(right);
                    } else {
                        likert += 1;
                        likert_right += usize::from(right);
                    }
                }
                None => all = false,
            }
        }
        answered += usize::from(all);
    }
    let share = |right: usize, n: usize| (n > 0).then(|| right as f64 / n as f64);
    let likert_share = share(likert_right, likert);
    let binary_share = share(bin_right, bin);
    let passed = likert_share.is_none_or(|s| s >= rule.likert_min_share)
        && binary_share.is_none_or(|s| s >= rule.binary_min_share);
    let state = if gold.is_empty() {
        CalibrationState::NotRequired
    } else if answered == gold.len() && passed {
        CalibrationState::Passed
    } else if overridden.is_some() {
        CalibrationState::Overridden
    } else if answered == gold.len() {
        CalibrationState::Failed
    } else {
        CalibrationState::InProgress
    };
    Ok(CalibrationStatus {
        rater: name.to_string(),
        state,
        items: gold.len(),
        answered,
        likert_share,
        binary_share,
        rule,
        overridden_by: overridden.map(|o| (o.lead, o.reason)),
        may_rate: matches!(
            state,
            CalibrationState::NotRequired | CalibrationState::Passed | CalibrationState::Overridden
        ),
    })
}

/// Where an expert stands (by name).
pub fn status(store: &Store, rater: &str) -> Result<CalibrationStatus, CalibrationError> {
    let id = expert_id(store, rater)?;
    status_of(store, id, rater)
}

/// Every expert's calibration.
pub fn statuses(store: &Store) -> Result<Vec<CalibrationStatus>, CalibrationError> {
    store
        .panel_experts()?
        .into_iter()
        .map(|e| status_of(store, e.id, &e.name))
        .collect()
}

/// Where expert `rater_id` stands.
pub fn status_for(store: &Store, rater_id: i64) -> Result<CalibrationStatus, CalibrationError> {
    let name = store
        .panel_experts()?
        .into_iter()
        .find(|e| e.id == rater_id)
        .map(|e| e.name)
        .ok_or_else(|| CalibrationError::UnknownExpert(rater_id.to_string()))?;
    status_of(store, rater_id, &name)
}

/// Whether the regular queue is open to an expert.
pub fn may_rate(store: &Store, rater_id: i64) -> Result<bool, CalibrationError> {
    if store.calibration_keys()?.is_empty() {
        return Ok(true);
    }
    Ok(status_of(store, rater_id, "")?.may_rate)
}

/// Calibration item `number` (1-based) as the expert sees it.
pub fn item(
    store: &Store,
    rater: &str,
    number: usize,
) -> Result<CalibrationItem, CalibrationError> {
    item_for(store, expert_id(store, rater)?, number)
}

/// Calibration item `number` (1-based) as expert `rater_id` sees it.
pub fn item_for(
    store: &Store,
    rater_id: i64,
    number: usize,
) -> Result<CalibrationItem, CalibrationError> {
    let rule = pass_rule(store)?;
    let gold = gold(store)?;
    let total = gold.len();
    let (response_id, keys) =
        gold.get(number.wrapping_sub(1))
            .ok_or(CalibrationError::NoSuchItem {
                item: number,
                total,
            })?;
    let answers: HashMap<i64, i64> = store
        .calibration_answers(rater_id)?
        .into_iter()
        .filter(|a| a.response_id == *response_id)
        .map(|a| (a.criterion_id, a.value))
        .collect();
    let answered = keys.iter().all(|k| answers.contains_key(&k.criterion_id));
    let ResponseTexts {
        context,
        text: answer,
    } = store.response_texts(*response_id)?;
    let rubric_id = store
        .panel_responses()?
        .into_iter()
        .find(|r| r.id == *response_id)
        .map(|r| r.rubric_id)
        .ok_or_else(|| CalibrationError::UnknownItem(response_id.to_string()))?;
    let rubric = store
        .rubrics()?
        .into_iter()
        .find(|s| s.id == rubric_id)
        .ok_or_else(|| CalibrationError::UnknownItem(response_id.to_string()))?
        .rubric;
    let ids: HashMap<String, (i64, bool)> = store
        .panel_criteria()?
        .into_iter()
        .filter(|c| c.rubric_id == rubric_id)
        .map(|c| (c.key, (c.id, c.binary)))
        .collect();
    let criteria = rubric
        .criteria
        .iter()
        .filter_map(|c| {
            let (id, binary) = *ids.get(&c.id)?;
            let key = keys.iter().find(|k| k.criterion_id == id)?;
            let given = answers.get(&id).copied();
            Some(CalibrationCriterion {
                key: c.id.clone(),
                label: c.label.clone(),
                description: c.description.clone(),
                scale: c.scale.clone(),
                anchors: c.anchors.clone(),
                answer: given,
                key_value: answered.then_some(key.value),
                explanation: answered.then(|| key.explanation.clone()),
                right: if answered {
                    given.map(|a| is_right(a, key.value, binary, &rule))
                } else {
                    None
                },
            })
        })
        .collect();
    Ok(CalibrationItem {
        item: number,
        total,
        context,
        answer,
        criteria,
        answered,
    })
}

/// Record an expert's answers on calibration item `number` (every keyed criterion at once) and
/// return the item with its key and explanation revealed. Answers already given are kept as
/// they were: calibration measures the first reading.
pub fn answer(
    store: &mut Store,
    rater: &str,
    number: usize,
    values: &[(String, i64)],
) -> Result<CalibrationItem, CalibrationError> {
    let rater_id = expert_id(store, rater)?;
    answer_for(store, rater_id, number, values)
}

/// [`answer`] for expert `rater_id`.
pub fn answer_for(
    store: &mut Store,
    rater_id: i64,
    number: usize,
    values: &[(String, i64)],
) -> Result<CalibrationItem, CalibrationError> {
    let gold = gold(store)?;
    let total = gold.len();
    let (response_id, keys) =
        gold.get(number.wrapping_sub(1))
            .cloned()
            .ok_or(CalibrationError::NoSuchItem {
                item: number,
                total,
            })?;
    let criteria: HashMap<i64, crate::store::PanelCriterion> = store
        .panel_criteria()?
        .into_iter()
        .map(|c| (c.id, c))
        .collect();
    let mut rows = Vec::new();
    for k in &keys {
        let c = criteria
            .get(&k.criterion_id)
            .ok_or_else(|| CalibrationError::UnknownItem(response_id.to_string()))?;
        let value = values
            .iter()
            .find(|(key, _)| *key == c.key)
            .map(|(_, v)| *v)
            .ok_or_else(|| CalibrationError::Incomplete {
                item: number,
                criterion: c.key.clone(),
            })?;
        if value < c.min || value > c.max {
            return Err(CalibrationError::OffScale {
                criterion: c.key.clone(),
                value,
                min: c.min,
                max: c.max,
            });
        }
        rows.push(CalibrationAnswer {
            response_id,
            criterion_id: c.id,
            value,
        });
    }
    store.write(|tx| {
        for row in &rows {
            tx.add_calibration_answer(rater_id, row)?;
        }
        Ok::<_, CalibrationError>(())
    })?;
    item_for(store, rater_id, number)
}

/// The lead lets an expert start the regular queue without passing; recorded with the lead's
/// name and reason (and in the audit log).
pub fn override_gate(
    store: &mut Store,
    rater: &str,
    lead: &str,
    reason: &str,
) -> Result<CalibrationStatus, CalibrationError> {
    let (lead, reason) = (lead.trim(), reason.trim());
    if lead.is_empty() || reason.is_empty() {
        return Err(CalibrationError::EmptyOverride);
    }
    let rater_id = expert_id(store, rater)?;
    let detail = serde_json::json!({ "rater": rater, "reason": reason });
    store.write(|tx| {
        tx.set_calibration_override(rater_id, lead, reason)?;
        tx.audit(lead, "calibration_override", &detail)?;
        Ok::<_, CalibrationError>(())
    })?;
    status(store, rater)
}
