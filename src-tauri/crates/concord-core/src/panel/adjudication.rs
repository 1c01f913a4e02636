//! Discrepancies and their adjudication. A [`DiscrepancyRule`] decides which (response,
//! criterion) pairs the experts disagree on enough to need an adjudicator: on a 1–5 criterion the
//! spread of the experts' values (max − min ≥ gap, default 2) or any value outside a ± tolerance
//! around their median; on a binary dimension any disagreement; and every pair of a response an
//! expert flagged. An adjudicator sees the experts' values and rationales side by side with the
//! user's message and the answer — never the answer's source, model or any judge's score — and
//! records a consensus value with a reason, or marks the pair unratable. Each expert value says
//! whether its expert signed it off and whether it changed after the signature. Decisions are kept
//! append-only beside the ratings (the latest counts); the experts' own ratings are never changed.
//!
//! Every pair with at least two expert values (or an open flag) has a status: **unanimous** (the
//! rule finds no discrepancy), **adjudicated** (decided, including unratable) or **unresolved**.
//! The consensus of a study — what agreement can use as its reference — is the decided value on
//! adjudicated pairs (none on unratable ones) and the experts' own values elsewhere.

use crate::base::error_code::ErrorCode;
use crate::base::text::quoted;
use crate::panel::agreement::AgreementData;
use crate::panel::agreement::AgreementOptions;
use crate::panel::agreement::AgreementReport;
use crate::panel::agreement::ReferencedData;
use crate::panel::latent::{dawid_skene_reference, LatentFit};
use crate::store::{
    Decision, ExpertValue, PanelCriterion, PanelExpert, PanelResponse, SignatureState, Store,
    StoreError,
};
use concord_stats::dawid_skene::DawidSkeneOptions;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How 1–5 (Likert) values are judged discrepant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LikertRule {
    /// max − min ≥ gap.
    Spread { gap: i64 },
    /// Some value lies more than `points` from the median of the values.
    Tolerance { points: i64 },
}

/// Which pairs need adjudication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiscrepancyRule {
    pub likert: LikertRule,
    /// Every criterion of a response an expert flagged needs adjudication too.
    pub flagged: bool,
}

/// The default Likert gap: values two or more points apart.
pub const DEFAULT_LIKERT_GAP: i64 = 2;

impl Default for DiscrepancyRule {
    fn default() -> Self {
        DiscrepancyRule {
            likert: LikertRule::Spread {
                gap: DEFAULT_LIKERT_GAP,
            },
            flagged: true,
        }
    }
}

/// Why a pair needs adjudication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum DiscrepancyReason {
    /// The Likert values spread by at least the gap.
    Spread,
    /// A Likert value lies outside the tolerance around the median.
    OutsideTolerance,
    /// Experts disagree on a binary dimension.
    Disagreement,
    /// An expert flagged the response.
    Flagged,
}

/// The rule applied to one pair's expert values (flags aside).
pub fn discrepancy(
    values: &[i64],
    binary: bool,
    rule: &DiscrepancyRule,
) -> Option<DiscrepancyReason> {
    if values.len() < 2 {
        return None;
    }
    let (min, max) = values
        .iter()
        .fold((i64::MAX, i64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    if binary {
        return (min != max).then_some(DiscrepancyReason::Disagreement);
    }
    match rule.likert {
        LikertRule::Spread { gap } => (max - min >= gap).then_some(DiscrepancyReason::Spread),
        LikertRule::Tolerance { points } => {
            let mut sorted = values.to_vec();
            sorted.sort_unstable();
            let n = sorted.len();
            // Twice the median, so an even count's midpoint stays an integer.
            let twice_median = if n % 2 == 1 {
                2 * sorted[n / 2]
            } else {
                sorted[n / 2 - 1] + sorted[n / 2]
            };
            sorted
                .iter()
                .any(|&v| (2 * v - twice_median).abs() > 2 * points)
                .then_some(DiscrepancyReason::OutsideTolerance)
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AdjudicationError {
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
    #[error("no expert has rated {criterion_q} of item {item_q}; there is nothing to adjudicate", criterion_q = quoted(&.criterion), item_q = quoted(&.item))]
    NothingRated { item: String, criterion: String },
    #[error("a decision needs a reason")]
    EmptyReason,
    #[error("a decision needs the adjudicator's name")]
    EmptyAdjudicator,
    #[error("a Likert gap must be at least 1, got {0}")]
    BadGap(i64),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl crate::base::error_code::Coded for AdjudicationError {
    fn code(&self) -> ErrorCode {
        match self {
            AdjudicationError::UnknownItem(_) => ErrorCode::UnknownItem,
            AdjudicationError::UnknownCriterion { .. } => ErrorCode::UnknownCriterion,
            AdjudicationError::OffScale { .. } => ErrorCode::OffScale,
            AdjudicationError::NothingRated { .. } => ErrorCode::NothingRated,
            AdjudicationError::EmptyReason => ErrorCode::EmptyReason,
            AdjudicationError::EmptyAdjudicator => ErrorCode::EmptyAdjudicator,
            AdjudicationError::BadGap(_) => ErrorCode::BadGap,
            AdjudicationError::Store(e) => e.code(),
        }
    }
}

/// One expert's value on a pair, as the adjudicator sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExpertOpinion {
    pub rater: String,
    pub value: i64,
    pub rationale: Option<String>,
    /// Whether the expert signed this value off, and whether it changed after the signature.
    pub signature: SignatureState,
}

/// A decision as shown: the consensus value (none when unratable) with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DecisionView {
    pub value: Option<i64>,
    pub unratable: bool,
    pub reason: String,
    pub adjudicator: String,
    /// Milliseconds since the epoch.
    pub decided_at: i64,
}

impl From<&Decision> for DecisionView {
    fn from(d: &Decision) -> Self {
        DecisionView {
            value: d.value,
            unratable: d.value.is_none(),
            reason: d.reason.clone(),
            adjudicator: d.adjudicator.clone(),
            decided_at: d.decided_at,
        }
    }
}

/// One pair that needs (or had) adjudication.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiscrepantPair {
    /// The response's name (its external id, else its number).
    pub item: String,
    pub criterion: String,
    pub reason: DiscrepancyReason,
    pub values: Vec<ExpertOpinion>,
    /// The latest decision, when there is one.
    pub decision: Option<DecisionView>,
    /// Why an expert flagged the response, when one did (the first open flag's reason).
    pub flag_reason: Option<String>,
    #[serde(skip)]
    pub response_id: i64,
    #[serde(skip)]
    pub criterion_id: i64,
}

/// Counts of pairs by status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AdjudicationStatus {
    /// Pairs with at least two expert values, or flagged.
    pub pairs: usize,
    pub unanimous: usize,
    /// Decided pairs (those marked unratable included).
    pub adjudicated: usize,
    /// Of the adjudicated, those marked unratable.
    pub unratable: usize,
    pub unresolved: usize,
}

/// The study's expert values grouped by pair, with everything the rule and the views need.
#[derive(Debug, Clone)]
pub struct Panel {
    pub experts: Vec<PanelExpert>,
    pub criteria: Vec<PanelCriterion>,
    /// (response, criterion) → values, ordered by expert name.
    pub pairs: Vec<((i64, i64), Vec<ExpertValue>)>,
    pub flagged: HashMap<i64, String>,
    pub decisions: HashMap<(i64, i64), Decision>,
    items: HashMap<i64, String>,
    criterion_at: HashMap<i64, usize>,
    expert_name: HashMap<i64, usize>,
    /// (rater, response, criterion) → state, for the signed values only.
    signatures: HashMap<(i64, i64, i64), SignatureState>,
}

impl Panel {
    /// Load the panel (rationales only when a view will show them).
    pub fn load(store: &Store, with_rationale: bool) -> Result<Panel, AdjudicationError> {
        let experts = store.panel_experts()?;
        let criteria = store.panel_criteria()?;
        let expert_name: HashMap<i64, usize> =
            experts.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
        // Sort on plain integer keys (response, criterion, the expert's place by name).
        let mut values: Vec<(i64, i64, usize, ExpertValue)> = store
            .expert_values(with_rationale)?
            .into_iter()
            .map(|v| {
                let rank = expert_name.get(&v.rater_id).copied().unwrap_or(usize::MAX);
                (v.response_id, v.criterion_id, rank, v)
            })
            .collect();
        values
            .sort_unstable_by_key(|(response, criterion, rank, _)| (*response, *criterion, *rank));
        let mut pairs: Vec<((i64, i64), Vec<ExpertValue>)> = Vec::new();
        for (_, _, _, v) in values {
            let key = (v.response_id, v.criterion_id);
            match pairs.last_mut() {
                Some((k, group)) if *k == key => group.push(v),
                _ => pairs.push((key, vec![v])),
            }
        }
        let mut flagged = HashMap::new();
        for crate::store::OpenFlag {
            response_id: response,
            reason,
        } in store.open_expert_flags()?
        {
            flagged.entry(response).or_insert(reason);
        }
        let items = store
            .panel_responses()?
            .into_iter()
            .map(|r| (r.id, r.item))
            .collect();
        Ok(Panel {
            criterion_at: criteria
                .iter()
                .enumerate()
                .map(|(i, c)| (c.id, i))
                .collect(),
            decisions: store.latest_decisions()?,
            experts,
            criteria,
            pairs,
            flagged,
            items,
            expert_name,
            signatures: store.signature_states()?,
        })
    }

    fn criterion(&self, id: i64) -> Option<&PanelCriterion> {
        self.criterion_at.get(&id).map(|&i| &self.criteria[i])
    }

    /// Why a pair needs adjudication under `rule`, if it does.
    fn reason(
        &self,
        response: i64,
        criterion: &PanelCriterion,
        values: &[ExpertValue],
        rule: &DiscrepancyRule,
    ) -> Option<DiscrepancyReason> {
        let v: Vec<i64> = values.iter().map(|x| x.value).collect();
        discrepancy(&v, criterion.binary, rule).or_else(|| {
            (rule.flagged && self.flagged.contains_key(&response))
                .then_some(DiscrepancyReason::Flagged)
        })
    }

    /// Every pair the rule finds discrepant (decided ones included when `include_decided`), in
    /// item order.
    pub fn discrepancies(
        &self,
        rule: &DiscrepancyRule,
        include_decided: bool,
    ) -> Vec<DiscrepantPair> {
        let mut out = Vec::new();
        for ((response, criterion_id), values) in &self.pairs {
            let Some(criterion) = self.criterion(*criterion_id) else {
                continue;
            };
            if values.len() < 2 && !self.flagged.contains_key(response) {
                continue;
            }
            let Some(reason) = self.reason(*response, criterion, values, rule) else {
                continue;
            };
            let decision = self.decisions.get(&(*response, *criterion_id));
            if decision.is_some() && !include_decided {
                continue;
            }
            out.push(DiscrepantPair {
                item: self.items.get(response).cloned().unwrap_or_default(),
                criterion: criterion.key.clone(),
                reason,
                values: values
                    .iter()
                    .map(|v| ExpertOpinion {
                        rater: self
                            .expert_name
                            .get(&v.rater_id)
                            .map(|&i| self.experts[i].name.clone())
                            .unwrap_or_default(),
                        value: v.value,
                        rationale: v.rationale.clone(),
                        signature: self
                            .signatures
                            .get(&(v.rater_id, v.response_id, v.criterion_id))
                            .copied()
                            .unwrap_or_default(),
                    })
                    .collect(),
                decision: decision.map(DecisionView::from),
                flag_reason: self.flagged.get(response).cloned(),
                response_id: *response,
                criterion_id: *criterion_id,
            });
        }
        out
    }

    /// Counts of pairs by status under `rule`.
    pub fn status(&self, rule: &DiscrepancyRule) -> AdjudicationStatus {
        let mut s = AdjudicationStatus::default();
        for ((response, criterion_id), values) in &self.pairs {
            let Some(criterion) = self.criterion(*criterion_id) else {
                continue;
            };
            if values.len() < 2 && !self.flagged.contains_key(response) {
                continue;
            }
            s.pairs += 1;
            match self.decisions.get(&(*response, *criterion_id)) {
                Some(d) => {
                    s.adjudicated += 1;
                    if d.value.is_none() {
                        s.unratable += 1;
                    }
                }
                None => match self.reason(*response, criterion, values, rule) {
                    Some(_) => s.unresolved += 1,
                    None => s.unanimous += 1,
                },
            }
        }
        s
    }
}

/// One pair as the adjudicator's screen shows it: the user's message, the answer, the criterion
/// and every expert's value and rationale — never the answer's source or a judge's score.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ReviewPair {
    pub pair: DiscrepantPair,
    pub context: String,
    pub answer: Option<String>,
    /// The criterion's label in every language the rubric gives.
    pub label: crate::rubric::LocalText,
    pub min: i64,
    pub max: i64,
    pub binary: bool,
}

/// The adjudicator's screen: status counts and the pairs to decide (decided ones after them).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AdjudicationReview {
    pub rule: DiscrepancyRule,
    pub status: AdjudicationStatus,
    pub pairs: Vec<ReviewPair>,
}

/// Everything the adjudicator's screen shows under `rule`.
pub fn review(
    store: &Store,
    rule: &DiscrepancyRule,
) -> Result<AdjudicationReview, AdjudicationError> {
    let panel = Panel::load(store, true)?;
    let mut listed = panel.discrepancies(rule, true);
    // Undecided first, each group in item order.
    listed.sort_by_key(|p| p.decision.is_some());
    let rubrics: HashMap<i64, crate::rubric::Rubric> = store
        .rubrics()?
        .into_iter()
        .map(|s| (s.id, s.rubric))
        .collect();
    let mut pairs = Vec::with_capacity(listed.len());
    for pair in listed {
        let Some(criterion) = panel.criterion(pair.criterion_id).cloned() else {
            continue;
        };
        let crate::store::ResponseTexts {
            context,
            text: answer,
        } = store.response_texts(pair.response_id)?;
        let label = rubrics
            .get(&criterion.rubric_id)
            .and_then(|r| r.criterion(&criterion.key))
            .map(|c| c.label.clone())
            .unwrap_or_default();
        pairs.push(ReviewPair {
            pair,
            context,
            answer,
            label,
            min: criterion.min,
            max: criterion.max,
            binary: criterion.binary,
        });
    }
    Ok(AdjudicationReview {
        rule: *rule,
        status: panel.status(rule),
        pairs,
    })
}

/// What an adjudicator decides on a pair.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ruling {
    /// The consensus value.
    Value { value: i64 },
    /// The pair cannot be rated (e.g. the answer is empty or not in the rubric's language).
    Unratable,
}

/// A resolution of one pair.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Resolution {
    pub item: String,
    pub criterion: String,
    pub ruling: Ruling,
    pub reason: String,
    pub adjudicator: String,
}

/// Record a decision on a pair. The pair must have at least one expert value; the value must be a
/// level of the criterion's scale. The decision is also written to the audit log.
pub fn resolve(store: &mut Store, r: &Resolution) -> Result<DecisionView, AdjudicationError> {
    let reason = r.reason.trim();
    let adjudicator = r.adjudicator.trim();
    if reason.is_empty() {
        return Err(AdjudicationError::EmptyReason);
    }
    if adjudicator.is_empty() {
        return Err(AdjudicationError::EmptyAdjudicator);
    }
    let response: PanelResponse = store
        .response_by_item(&r.item)?
        .ok_or_else(|| AdjudicationError::UnknownItem(r.item.clone()))?;
    let criterion = store
        .panel_criteria()?
        .into_iter()
        .find(|c| c.rubric_id == response.rubric_id && c.key == r.criterion)
        .ok_or_else(|| AdjudicationError::UnknownCriterion {
            item: r.item.clone(),
            criterion: r.criterion.clone(),
        })?;
    let value = match r.ruling {
        Ruling::Value { value } => {
            if value < criterion.min || value > criterion.max {
                return Err(AdjudicationError::OffScale {
                    criterion: criterion.key,
                    value,
                    min: criterion.min,
                    max: criterion.max,
                });
            }
            Some(value)
        }
        Ruling::Unratable => None,
    };
    if !store.pair_has_expert_value(response.id, criterion.id)? {
        return Err(AdjudicationError::NothingRated {
            item: r.item.clone(),
            criterion: r.criterion.clone(),
        });
    }
    let detail = serde_json::json!({
        "item": response.item,
        "criterion": criterion.key,
        "value": value,
        "unratable": value.is_none(),
        "reason": reason,
    });
    store.write(|tx| -> Result<(), AdjudicationError> {
        tx.add_decision(response.id, criterion.id, value, reason, adjudicator)?;
        tx.audit(adjudicator, "adjudicate", &detail)?;
        Ok(())
    })?;
    let history = store.decision_history(response.id, criterion.id)?;
    let last = history.last().ok_or_else(|| {
        AdjudicationError::Store(StoreError::Invalid(
            "the decision just written is not there".into(),
        ))
    })?;
    Ok(DecisionView::from(last))
}

/// The consensus of every decided pair: (response, criterion) → value (`None` = unratable).
pub fn decided_values(
    store: &Store,
) -> Result<HashMap<(i64, i64), Option<i64>>, AdjudicationError> {
    Ok(store
        .latest_decisions()?
        .into_iter()
        .map(|(k, d)| (k, d.value))
        .collect())
}

/// One response given to one more expert because the first ones disagreed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AddedRater {
    pub item: String,
    pub rater: String,
    /// Its place in the expert's queue (1-based).
    pub position: i64,
}

/// What [`add_rater_on_disagreement`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Escalation {
    pub added: Vec<AddedRater>,
    /// Discrepant responses every expert already has.
    pub no_expert_left: usize,
}

/// The assignment's "add a rater on disagreement" option: every response with an undecided
/// discrepancy under `rule` goes to one more expert — the one with the fewest regular items among
/// those who neither rated nor hold it (ties broken by a stream seeded with `seed`) — at the end of
/// that expert's queue. A response already escalated (held by an expert who has not rated it yet)
/// is not escalated again.
pub fn add_rater_on_disagreement(
    store: &mut Store,
    rule: &DiscrepancyRule,
    seed: u64,
) -> Result<Escalation, AdjudicationError> {
    use rand::seq::SliceRandom;
    let panel = Panel::load(store, false)?;
    let mut responses: Vec<(i64, String)> = Vec::new();
    for p in panel.discrepancies(rule, false) {
        if responses.last().map(|(r, _)| *r) != Some(p.response_id) {
            responses.push((p.response_id, p.item.clone()));
        }
    }
    let assignments = store.expert_assignments()?;
    let mut load: HashMap<i64, usize> = panel.experts.iter().map(|e| (e.id, 0)).collect();
    let mut holders: HashMap<i64, Vec<i64>> = HashMap::new();
    for a in &assignments {
        *load.entry(a.rater_id).or_default() += 1;
        holders.entry(a.response_id).or_default().push(a.rater_id);
    }
    let mut raters_of: HashMap<i64, Vec<i64>> = HashMap::new();
    for ((response, _), values) in &panel.pairs {
        let e = raters_of.entry(*response).or_default();
        for v in values {
            if !e.contains(&v.rater_id) {
                e.push(v.rater_id);
            }
        }
    }
    let mut order: Vec<i64> = panel.experts.iter().map(|e| e.id).collect();
    order.shuffle(&mut crate::workflow::assignment::seeded(seed, 0xad1d));
    let name: HashMap<i64, String> = panel
        .experts
        .iter()
        .map(|e| (e.id, e.name.clone()))
        .collect();
    let mut plan: Vec<(i64, i64, String)> = Vec::new();
    let mut no_expert_left = 0;
    for (response, item) in responses {
        let rated = raters_of.get(&response).cloned().unwrap_or_default();
        let held = holders.get(&response).cloned().unwrap_or_default();
        if held.iter().any(|h| !rated.contains(h)) {
            continue;
        }
        let pick = order
            .iter()
            .filter(|e| !rated.contains(e) && !held.contains(e))
            .min_by_key(|e| load.get(e).copied().unwrap_or(0))
            .copied();
        match pick {
            Some(e) => {
                *load.entry(e).or_default() += 1;
                holders.entry(response).or_default().push(e);
                plan.push((e, response, item));
            }
            None => no_expert_left += 1,
        }
    }
    let added = store.write(|tx| -> Result<Vec<AddedRater>, AdjudicationError> {
        let mut added = Vec::with_capacity(plan.len());
        for (rater, response, item) in &plan {
            let position = tx.append_regular_assignment(*rater, *response)?;
            added.push(AddedRater {
                item: item.clone(),
                rater: name.get(rater).cloned().unwrap_or_default(),
                position,
            });
        }
        if !added.is_empty() {
            tx.audit(
                "lead",
                "add_rater_on_disagreement",
                &serde_json::json!({ "added": added.len(), "seed": seed }),
            )?;
        }
        Ok(added)
    })?;
    Ok(Escalation {
        added,
        no_expert_left,
    })
}

/// What judges are compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum AgreementReference {
    /// Per response the mean of the experts' values (the paper's reference).
    #[default]
    Experts,
    /// The same, after adjudication: on every decided pair each expert's value is replaced by the
    /// consensus (removed where the pair is unratable). Unresolved pairs keep the experts' values,
    /// so expert–expert cells show agreement after adjudication.
    Consensus,
    /// The latent label of a Dawid–Skene model over every rater, adjudicated pairs held at their
    /// decisions (`panel::latent`); experts are still compared with each other as they rated.
    #[serde(rename = "dawid-skene")]
    DawidSkene,
}

/// Replace the experts' values on every decided pair by the decision (see
/// [`AgreementReference::Consensus`]). Returns how many pairs were changed.
pub fn apply_consensus(
    data: &mut AgreementData,
    decided: &HashMap<(i64, i64), Option<i64>>,
) -> usize {
    let response_at: HashMap<i64, usize> = data
        .responses
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id, i))
        .collect();
    let criterion_at: HashMap<i64, usize> = data
        .criteria
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id, i))
        .collect();
    let experts: Vec<(usize, i64)> = data
        .experts()
        .into_iter()
        .map(|e| (e, data.raters[e].id))
        .collect();
    let mut changed = 0;
    for (&(response, criterion), &value) in decided {
        let (Some(&i), Some(&c)) = (response_at.get(&response), criterion_at.get(&criterion))
        else {
            continue;
        };
        let rated: Vec<i64> = experts
            .iter()
            .filter(|(e, _)| !data.series(*e, c)[i].is_nan())
            .map(|(_, id)| *id)
            .collect();
        for id in &rated {
            // Every id and position was taken from `data` itself, so the lookup cannot fail.
            let _ = data.apply(*id, response, criterion, value.map(|v| v as f64));
        }
        changed += usize::from(!rated.is_empty());
    }
    changed
}

/// The ratings a report against `reference` reads (see [`ReferencedData`]): the experts' values;
/// after adjudication, every decided pair taking its decision; or the Dawid–Skene latent labels,
/// with the fit of every criterion (empty for the other references).
pub fn referenced_data(
    store: &Store,
    options: &AgreementOptions,
    reference: AgreementReference,
) -> Result<(ReferencedData, Vec<LatentFit>), AdjudicationError> {
    let mut data = AgreementData::load_compared(store, &options.rubric)?;
    Ok(match reference {
        AgreementReference::Experts => (ReferencedData::experts(data), Vec::new()),
        AgreementReference::Consensus => {
            apply_consensus(&mut data, &decided_values(store)?);
            let referenced = ReferencedData {
                ratings: data,
                labelled: None,
                name: "consensus".to_string(),
            };
            (referenced, Vec::new())
        }
        AgreementReference::DawidSkene => {
            let (labelled, fits) = dawid_skene_reference(
                &data,
                &decided_values(store)?,
                &DawidSkeneOptions::default(),
            );
            let referenced = ReferencedData {
                ratings: data,
                labelled: Some(labelled),
                name: "dawid-skene".to_string(),
            };
            (referenced, fits)
        }
    })
}

/// The agreement report against the chosen reference. With [`AgreementReference::Experts`] this
/// is exactly [`crate::panel::agreement::report`]; with the consensus, cells compared with the experts
/// name their reference `consensus`.
pub fn agreement_report(
    store: &Store,
    options: AgreementOptions,
    reference: AgreementReference,
) -> Result<AgreementReport, AdjudicationError> {
    match reference {
        AgreementReference::Experts => Ok(crate::panel::agreement::report(store, options)?),
        _ => Ok(referenced_data(store, &options, reference)?
            .0
            .report(&options)),
    }
}

/// The agreement panel against the consensus: the report, its table for one view, and how many
/// pairs are decided or still unresolved (unresolved pairs keep the experts' values).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ConsensusAgreement {
    pub report: AgreementReport,
    pub table: crate::panel::agreement_table::AgreementTable,
    pub status: AdjudicationStatus,
}

/// [`agreement_report`] against the consensus with its table for `view` and the status counts
/// under the default discrepancy rule.
pub fn consensus_agreement(
    store: &Store,
    options: AgreementOptions,
    view: crate::panel::agreement_table::TableView,
) -> Result<ConsensusAgreement, AdjudicationError> {
    let report = agreement_report(store, options, AgreementReference::Consensus)?;
    let table = crate::panel::agreement_table::table(&report, view);
    let status = Panel::load(store, false)?.status(&DiscrepancyRule::default());
    Ok(ConsensusAgreement {
        report,
        table,
        status,
    })
}

/// The agreement panel against the Dawid–Skene latent labels: the report, its table for one
/// view, and the fit of every criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LatentAgreement {
    pub report: AgreementReport,
    pub table: crate::panel::agreement_table::AgreementTable,
    pub fits: Vec<LatentFit>,
}

/// [`agreement_report`] against the Dawid–Skene latent labels with its table for `view` and
/// every criterion's fit.
pub fn latent_agreement(
    store: &Store,
    options: AgreementOptions,
    view: crate::panel::agreement_table::TableView,
) -> Result<LatentAgreement, AdjudicationError> {
    let (data, fits) = referenced_data(store, &options, AgreementReference::DawidSkene)?;
    let report = data.report(&options);
    let table = crate::panel::agreement_table::table(&report, view);
    Ok(LatentAgreement {
        report,
        table,
        fits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_rule_flags_a_gap_of_two_by_default() {
        let rule = DiscrepancyRule::default();
        assert_eq!(
            discrepancy(&[3, 4], false, &rule),
            None,
            "one point apart is within the rule"
        );
        assert_eq!(
            discrepancy(&[2, 4], false, &rule),
            Some(DiscrepancyReason::Spread),
            "two points apart needs adjudication"
        );
        assert_eq!(
            discrepancy(&[2], false, &rule),
            None,
            "one value has nothing to disagree with"
        );
    }

    #[test]
    fn tolerance_rule_measures_from_the_median() {
        let rule = DiscrepancyRule {
            likert: LikertRule::Tolerance { points: 1 },
            flagged: false,
        };
        assert_eq!(
            discrepancy(&[2, 3, 4], false, &rule),
            None,
            "each value is within 1 of 3"
        );
        assert_eq!(
            discrepancy(&[2, 3, 5], false, &rule),
            Some(DiscrepancyReason::OutsideTolerance),
            "5 lies 2 from the median 3"
        );
        assert_eq!(
            discrepancy(&[2, 4], false, &rule),
            None,
            "the even-count median 3 is within 1 of both"
        );
    }

    #[test]
    fn binary_dimensions_need_adjudication_on_any_disagreement() {
        let rule = DiscrepancyRule::default();
        assert_eq!(discrepancy(&[1, 1, 1], true, &rule), None, "all agree");
        assert_eq!(
            discrepancy(&[1, 0, 1], true, &rule),
            Some(DiscrepancyReason::Disagreement),
            "a single dissent counts on a binary dimension"
        );
    }
}
