//! "Can this judge be trusted tomorrow?" — per judge × criterion of a rubric: how consistent the
//! judge is with itself across repetitions, how many repetitions its agreement with the experts
//! needs, whether it is right when it is confident, and where its bias comes from. The figures
//! are `concord-stats`' (`repetitions`, `calibration`, `judge_bias`, with their rules in their
//! docs); this module chooses the data:
//!
//! - **Judges** are the raters with judge runs on the rubric; a judge's repetitions of a response
//!   are those of its newest run that judged it (as `judge::scores` reads them), and its score is
//!   the study's aggregate of them (median unless chosen otherwise; one repetition is its own
//!   aggregate; a binary criterion's is the majority, `judge::scores::for_scale`).
//! - **The expert reference** is the mean of the experts' first-occasion values of the response
//!   (1–5), or their majority for a binary criterion (a tie is left out).
//! - **Calibration**: the expected score of a call is the one stored from token log-probabilities
//!   where the provider returned them, averaged over the response's repetitions; otherwise the
//!   repetitions' frequencies stand in (the share of 1s, or the mean). Binary: reliability diagram,
//!   ECE and Brier against the expert majority; 1–5: the judge–expert ICC(A,1) of the expected
//!   score beside that of the sampled (aggregated) score.
//! - **Bias** d = judge − expert reference: overall; on ln(characters of the response) (the
//!   length audit); the judge's family's own responses minus the others (sources' families from
//!   the study, overridden by a source → family map the lead passes); first half minus second half
//!   of the positions a criterion was asked in, over calls whose order was shuffled and recorded
//!   (the middle position of an odd count is left out); and within tertiles of the expert mean
//!   (ICC(A,1) and bias per band).
//! - **Repetitions for a target**: the fewest repetitions whose aggregate reaches the target
//!   reliability (0.80 unless chosen) by Spearman–Brown from the single-repetition reliability ρ₁.
//!
//! [`reliability_section`] is the agreement panel's "Judge reliability" section: the same figures
//! with what its plots draw (each response's ln length against judge − expert, and the fitted
//! line with its band), shown only when some judge of the rubric answered more than once (the
//! runs' counts say so before any call is read, so a study of single-repetition judges costs the
//! panel one query).

use crate::judge::scores::{for_scale, study_aggregate, RepetitionAggregate};
use crate::rubric::Scale;
use crate::store::{
    DoneCallScores, RaterKind, RaterRecord, Store, StoreError, StoreResult, StoredRubric,
};
use concord_stats::bootstrap::BootstrapOptions;
use concord_stats::calibration::binary_calibration;
/// The figures' own types, as the statistics crate defines them.
pub use concord_stats::calibration::{BinaryCalibration, CalibrationBin};
use concord_stats::icc::{icc_all, IccForm};
use concord_stats::judge_bias::{
    difference_interval, fitted_line, mean_interval, slope_interval, tertile_cuts, tertile_of,
};
pub use concord_stats::judge_bias::{BandPoint, FittedLine, IntervalEstimate};
use concord_stats::repetitions::{
    repetitions_for_reliability, repetitions_needed, self_consistency, spearman_brown, ScaleKind,
};
pub use concord_stats::repetitions::{RepetitionsNeeded, RepetitionsNeededRow, SelfConsistency};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// What the report is computed with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ReliabilityOptions {
    /// Rubric key; the study's only rubric with judge runs when `None`.
    pub rubric: Option<String>,
    /// The aggregate of repetitions; the study's when `None`.
    pub aggregate: Option<RepetitionAggregate>,
    /// Seed of the α bootstrap.
    pub seed: u64,
    /// Bootstrap resamples.
    pub resamples: usize,
    /// Equal-width bins of the reliability diagram.
    pub bins: usize,
    /// Source key → model family, overriding the study's source families.
    pub families: BTreeMap<String, String>,
    /// The reliability a judge's aggregate should reach (the repetitions it needs are reported).
    #[serde(default = "default_target_reliability")]
    pub target_reliability: f64,
}

/// The conventional 0.80 of a reliability good enough for research use.
pub const DEFAULT_TARGET_RELIABILITY: f64 = 0.8;

fn default_target_reliability() -> f64 {
    DEFAULT_TARGET_RELIABILITY
}

impl Default for ReliabilityOptions {
    fn default() -> Self {
        ReliabilityOptions {
            rubric: None,
            aggregate: None,
            seed: 42,
            resamples: 1000,
            bins: 10,
            families: BTreeMap::new(),
            target_reliability: DEFAULT_TARGET_RELIABILITY,
        }
    }
}

/// Calibration of one judge × criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Calibration {
    /// `logprobs` when every expected score came from token log-probabilities,
    /// `repetitions` when from repetition frequencies, `mixed` when both.
    pub source: Option<&'static str>,
    /// Binary criteria: diagram, ECE and Brier against the expert majority.
    pub binary: Option<BinaryCalibration>,
    /// 1–5 criteria: ICC(A,1) of the expected score against the expert mean …
    pub icc_a1_expected: Option<f64>,
    /// … beside that of the sampled (aggregated) score, on the same responses.
    pub icc_a1_sampled: Option<f64>,
    /// Responses in the 1–5 comparison.
    pub n_responses: usize,
}

/// Agreement and bias within one tertile of the expert mean.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct QualityBand {
    /// 1 (the worst-rated third), 2 or 3.
    pub band: usize,
    /// The band's expert-mean range [lowest, highest] among its responses.
    pub range: [Option<f64>; 2],
    pub n_responses: usize,
    pub icc_a1: Option<f64>,
    pub icc_a1_ci95: [Option<f64>; 2],
    pub bias: IntervalEstimate,
}

/// The bias audit of one judge × criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BiasAudit {
    pub overall: IntervalEstimate,
    pub length: IntervalEstimate,
    pub self_preference: IntervalEstimate,
    pub order: IntervalEstimate,
    pub bands: Vec<QualityBand>,
}

/// Every figure of one judge × criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct JudgeReliability {
    pub judge: String,
    pub model: Option<String>,
    pub family: Option<String>,
    pub criterion: String,
    /// `likert` or `binary`.
    pub scale: &'static str,
    /// The highest repetition number among the judge's done calls on the rubric (K).
    pub repetitions: usize,
    /// The aggregate this criterion's repetitions get (a binary criterion's is the mode).
    pub aggregate: RepetitionAggregate,
    /// Responses with a judge score.
    pub n_responses: usize,
    /// Responses with a judge score and an expert reference.
    pub n_compared: usize,
    pub consistency: SelfConsistency,
    pub repetitions_needed: RepetitionsNeeded,
    /// The repetitions the target reliability needs.
    pub target: TargetRepetitions,
    pub calibration: Calibration,
    pub bias: BiasAudit,
}

/// The reliability a judge's aggregate should reach and the repetitions that takes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TargetRepetitions {
    pub reliability: f64,
    /// The smallest k whose Spearman–Brown reliability reaches it (`None` when no k does or ρ₁
    /// is undefined).
    pub repetitions: Option<usize>,
}

/// One response of the length audit: ln(characters) against judge − expert reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LengthPoint {
    pub log_length: f64,
    pub difference: f64,
}

/// What the length scatter draws: the responses and the fitted line with its 95% band.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LengthScatter {
    pub points: Vec<LengthPoint>,
    pub line: Option<FittedLine>,
}

/// One point of the repetitions-needed curve: the Spearman–Brown reliability of a k-aggregate.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CurvePoint {
    pub k: usize,
    pub reliability: f64,
}

/// One judge × criterion of the panel's section: its figures, the repetitions-needed curve and
/// its length scatter.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ReliabilityRow {
    pub figures: JudgeReliability,
    /// ρₖ for k = 1 … max(K, the repetitions the target needs, up to [`CURVE_MOST`]); empty when
    /// ρ₁ is undefined.
    pub curve: Vec<CurvePoint>,
    pub length: LengthScatter,
}

/// The most repetitions the curve is drawn to.
pub const CURVE_MOST: usize = 20;

/// Whether the section is shown, or why not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum SectionState {
    /// Some judge of the rubric answered more than once.
    Shown,
    /// No judge run of the rubric has a done call, and no judge holds a score on it.
    NoJudgeRuns,
    /// No judge run of the rubric has a done call, but judges hold scores on it (imported from a
    /// file, one per response and criterion): `imported_judges` names them.
    ImportedScoresOnly,
    /// Every judge of the rubric answered each response once: nothing to be consistent with.
    SingleRepetition,
}

/// The agreement panel's "Judge reliability" section for one rubric.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ReliabilitySection {
    /// The rubric reported on (`None` when the study has no judge runs to choose one by).
    pub rubric: Option<String>,
    pub state: SectionState,
    pub target_reliability: f64,
    /// Equal-width bins of the reliability diagrams.
    pub bins: usize,
    /// Judges by name, criteria in rubric order; empty unless shown.
    pub rows: Vec<ReliabilityRow>,
    /// With [`SectionState::ImportedScoresOnly`], the judges holding scores on the rubric that no
    /// run gave (as the agreement table names them: model id, else name); empty otherwise.
    pub imported_judges: Vec<String>,
}

/// Points of the fitted line's band in the length scatter.
const BAND_POINTS: usize = 24;

const LENGTH_RULE: &str =
    "OLS slope of (judge - expert mean) on ln(response length in characters), t interval on n - 2 df";
const SELF_RULE: &str = "mean (judge - expert) on the judge family's own responses minus on the \
     other sources' responses, Welch interval";
const SELF_UNKNOWN: &str = "undefined: the judge has no model family";
const ORDER_RULE: &str = "mean (judge - expert) where the criterion was asked in the first half of \
     the prompt minus in the second half, over calls with a recorded shuffled order, Welch interval";

/// One judge's calls of one response: repetitions and expected scores per criterion id.
#[derive(Default)]
struct ResponseCalls {
    run: i64,
    /// criterion id → (repetition, value).
    values: HashMap<i64, Vec<(i64, f64)>>,
    /// criterion id → (repetition, expected score from log-probabilities).
    expected: HashMap<i64, Vec<(i64, f64)>>,
    /// criterion id → (position, count) of each call with a recorded order, beside its value.
    positions: HashMap<i64, Vec<(usize, usize, f64)>>,
}

fn parse_object(text: &str) -> StoreResult<serde_json::Map<String, serde_json::Value>> {
    serde_json::from_str(text).map_err(|e| StoreError::Invalid(format!("judge call record: {e}")))
}

/// The report for every judge × criterion of the rubric, judges by name, criteria in rubric
/// order.
pub fn judge_reliability(
    store: &Store,
    options: &ReliabilityOptions,
) -> StoreResult<Vec<JudgeReliability>> {
    Ok(compute(store, options)?
        .into_iter()
        .map(|row| row.figures)
        .collect())
}

/// The panel's section: [`SectionState::Shown`] with every judge × criterion and its length
/// scatter when some run of the rubric (`options.rubric`, or the study's only rubric with judge
/// runs) asked more than once and some judge answered a response more than once; otherwise the
/// state says why it is empty.
pub fn reliability_section(
    store: &Store,
    options: &ReliabilityOptions,
) -> StoreResult<ReliabilitySection> {
    let runs: Vec<_> = store
        .judge_run_counts()?
        .into_iter()
        .filter(|r| r.done > 0)
        .filter(|r| options.rubric.as_ref().is_none_or(|key| &r.rubric == key))
        .collect();
    let empty = |state, rubric: Option<String>| ReliabilitySection {
        rubric,
        state,
        target_reliability: options.target_reliability,
        bins: options.bins,
        rows: Vec::new(),
        imported_judges: Vec::new(),
    };
    let rubric = options
        .rubric
        .clone()
        .or_else(|| runs.first().map(|r| r.rubric.clone()));
    if runs.is_empty() {
        let imported: Vec<String> = match &rubric {
            Some(key) => store
                .judges_rating_rubric(key)?
                .into_iter()
                .map(|j| j.model_id.unwrap_or(j.name))
                .collect(),
            None => Vec::new(),
        };
        if imported.is_empty() {
            return Ok(empty(SectionState::NoJudgeRuns, rubric));
        }
        return Ok(ReliabilitySection {
            imported_judges: imported,
            ..empty(SectionState::ImportedScoresOnly, rubric)
        });
    }
    if runs.iter().all(|r| r.repetitions <= 1) {
        return Ok(empty(SectionState::SingleRepetition, rubric));
    }
    let rows = compute(store, options)?;
    if rows.iter().all(|r| r.figures.repetitions <= 1) {
        return Ok(empty(SectionState::SingleRepetition, rubric));
    }
    Ok(ReliabilitySection {
        rubric,
        state: SectionState::Shown,
        target_reliability: options.target_reliability,
        bins: options.bins,
        rows,
        imported_judges: Vec::new(),
    })
}

/// Response → (its length in characters, its source's model family).
type ResponseFamilies = HashMap<i64, (Option<i64>, Option<String>)>;

/// What the report reads of the study for one rubric.
struct Loaded {
    aggregate: RepetitionAggregate,
    /// (criterion id, key, scale) in rubric order.
    criteria: Vec<(i64, String, Scale)>,
    /// The experts' first-occasion values per (response, criterion).
    expert_values: HashMap<(i64, i64), Vec<f64>>,
    /// Response → (characters, model family).
    responses: ResponseFamilies,
    /// Judge → response → its calls of the newest run that judged the response.
    calls: HashMap<i64, HashMap<i64, ResponseCalls>>,
    /// The most repetitions of any done call per judge (K of the repetitions-needed table).
    max_reps: HashMap<i64, usize>,
    raters: Vec<crate::store::RaterRecord>,
}

impl Loaded {
    /// The judges with calls, by name.
    fn judges(&self) -> Vec<&crate::store::RaterRecord> {
        let mut judges: Vec<&crate::store::RaterRecord> = self
            .raters
            .iter()
            .filter(|r| self.calls.contains_key(&r.id))
            .collect();
        judges.sort_by(|a, b| a.name.cmp(&b.name));
        judges
    }
}

/// One judge's value of one response × criterion in one repetition, as the report reads it (the
/// newest run that judged the response), with what the methods appendix recomputes it from.
#[derive(Debug, Clone, PartialEq)]
pub struct RepetitionRecord {
    pub judge: String,
    pub response_id: i64,
    pub criterion: String,
    pub repetition: i64,
    pub value: f64,
    /// The call's expected score from token log-probabilities, when the provider returned them.
    pub expected: Option<f64>,
    /// The response's length in characters.
    pub chars: Option<i64>,
}

/// Every repetition the report reads, judges by name, then response, criterion in rubric order
/// and repetition.
pub fn repetition_records(
    store: &Store,
    options: &ReliabilityOptions,
) -> StoreResult<Vec<RepetitionRecord>> {
    let Some(l) = load(store, options)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for judge in l.judges() {
        let by_response = &l.calls[&judge.id];
        let mut ids: Vec<i64> = by_response.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let calls = &by_response[&id];
            let chars = l.responses.get(&id).and_then(|r| r.0);
            for (criterion_id, key, _) in &l.criteria {
                let Some(values) = calls.values.get(criterion_id) else {
                    continue;
                };
                let mut values = values.clone();
                values.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
                let expected = calls.expected.get(criterion_id);
                for (repetition, value) in values {
                    out.push(RepetitionRecord {
                        judge: judge.name.clone(),
                        response_id: id,
                        criterion: key.clone(),
                        repetition,
                        value,
                        expected: expected
                            .and_then(|e| e.iter().find(|x| x.0 == repetition))
                            .map(|x| x.1),
                        chars,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Read the rubric's judges, experts, responses and calls; `None` when no rubric was named and
/// none has judge runs.
fn load(store: &Store, options: &ReliabilityOptions) -> StoreResult<Option<Loaded>> {
    let Some(stored) = reported_rubric(store, options)? else {
        return Ok(None);
    };
    let aggregate = match options.aggregate {
        Some(a) => a,
        None => study_aggregate(store)?,
    };
    let rubric_id = stored.id;
    let criteria: Vec<(i64, String, Scale)> = store
        .criteria_in_order(rubric_id)?
        .into_iter()
        .filter_map(|c| {
            let scale = stored.rubric.criterion(&c.key)?.scale.clone();
            Some((c.id, c.key, scale))
        })
        .collect();
    let raters = store.rater_records()?;
    let expert_values = expert_values(store, &criteria, &raters)?;
    let responses = response_lengths(store, options, rubric_id)?;
    let JudgeCalls { calls, max_reps } = newest_calls(store, rubric_id, &criteria)?;
    Ok(Some(Loaded {
        aggregate,
        criteria,
        expert_values,
        responses,
        calls,
        max_reps,
        raters,
    }))
}

/// The rubric reported on: the named one, or the study's only rubric with judge runs (`None`
/// when none has).
fn reported_rubric(
    store: &Store,
    options: &ReliabilityOptions,
) -> StoreResult<Option<StoredRubric>> {
    let rubrics = store.rubrics()?;
    if let Some(key) = &options.rubric {
        return rubrics
            .into_iter()
            .find(|r| &r.rubric.id == key)
            .map(Some)
            .ok_or_else(|| StoreError::NotFound {
                what: "rubric",
                key: key.clone(),
            });
    }
    let used: Vec<String> = store
        .judge_run_counts()?
        .into_iter()
        .map(|r| r.rubric)
        .collect();
    let mut with_runs: Vec<_> = rubrics
        .into_iter()
        .filter(|r| used.contains(&r.rubric.id))
        .collect();
    match with_runs.len() {
        1 => Ok(Some(with_runs.remove(0))),
        0 => Ok(None),
        _ => Err(StoreError::Invalid(
            "judge runs use several rubrics; choose one".into(),
        )),
    }
}

/// The experts' first-occasion values per (response, criterion) of the criteria.
fn expert_values(
    store: &Store,
    criteria: &[(i64, String, Scale)],
    raters: &[RaterRecord],
) -> StoreResult<HashMap<(i64, i64), Vec<f64>>> {
    let experts: Vec<i64> = raters
        .iter()
        .filter(|r| RaterKind::parse(&r.kind) == Some(RaterKind::Expert))
        .map(|r| r.id)
        .collect();
    let criterion_ids: Vec<i64> = criteria.iter().map(|c| c.0).collect();
    let mut expert_values: HashMap<(i64, i64), Vec<f64>> = HashMap::new();
    store.for_each_value_of_raters(&criterion_ids, &experts, |_, response, criterion, value| {
        expert_values
            .entry((response, criterion))
            .or_default()
            .push(value as f64);
    })?;
    Ok(expert_values)
}

/// Each response of the rubric → (its length in characters, its source's model family, the
/// options' family map overriding the study's).
fn response_lengths(
    store: &Store,
    options: &ReliabilityOptions,
    rubric_id: i64,
) -> StoreResult<ResponseFamilies> {
    let sources: HashMap<i64, (String, Option<String>)> = store
        .sources()?
        .into_iter()
        .map(|s| {
            let family = options.families.get(&s.key).cloned().or(s.family);
            (s.id, (s.key, family))
        })
        .collect();
    Ok(store
        .rubric_response_lengths(rubric_id)?
        .into_iter()
        .map(|r| {
            let family = sources.get(&r.source_id).and_then(|s| s.1.clone());
            (r.response_id, (r.chars, family))
        })
        .collect())
}

/// Every judge's calls of each response from the newest run that judged it, beside its most
/// repetitions.
struct JudgeCalls {
    /// Judge → response → its calls of the newest run that judged the response.
    calls: HashMap<i64, HashMap<i64, ResponseCalls>>,
    /// The most repetitions of any done call per judge (K of the repetitions-needed table).
    max_reps: HashMap<i64, usize>,
}

/// Every done call of the rubric, the newest run per (judge, response); the first unreadable call
/// record is the error.
fn newest_calls(
    store: &Store,
    rubric_id: i64,
    criteria: &[(i64, String, Scale)],
) -> StoreResult<JudgeCalls> {
    let key_to_id: HashMap<&str, i64> = criteria
        .iter()
        .map(|(id, k, _)| (k.as_str(), *id))
        .collect();
    let mut calls: HashMap<i64, HashMap<i64, ResponseCalls>> = HashMap::new();
    let mut max_reps: HashMap<i64, usize> = HashMap::new();
    let mut bad: Option<StoreError> = None;
    store.for_each_done_call(rubric_id, 1, None, |c| {
        if bad.is_some() {
            return;
        }
        let k = max_reps.entry(c.rater_id).or_default();
        *k = (*k).max(c.repetition.max(1) as usize);
        let slot = calls
            .entry(c.rater_id)
            .or_default()
            .entry(c.response_id)
            .or_default();
        if slot.run != c.run_id {
            *slot = ResponseCalls {
                run: c.run_id,
                ..ResponseCalls::default()
            };
        }
        if let Err(e) = slot.add(&c, &key_to_id) {
            bad = Some(e);
        }
    })?;
    match bad {
        Some(e) => Err(e),
        None => Ok(JudgeCalls { calls, max_reps }),
    }
}

impl ResponseCalls {
    /// Adds one done call's values, positions and expected scores of the rubric's criteria.
    fn add(&mut self, c: &DoneCallScores, key_to_id: &HashMap<&str, i64>) -> StoreResult<()> {
        let scores = parse_object(&c.scores_json)?;
        let order: Option<Vec<String>> = c
            .criteria_order
            .as_deref()
            .and_then(|t| serde_json::from_str(t).ok());
        for (key, v) in &scores {
            let (Some(&id), Some(v)) = (key_to_id.get(key.as_str()), v.as_f64()) else {
                continue;
            };
            self.values.entry(id).or_default().push((c.repetition, v));
            if let Some(order) = &order {
                if let Some(pos) = order.iter().position(|k| k == key) {
                    self.positions
                        .entry(id)
                        .or_default()
                        .push((pos, order.len(), v));
                }
            }
        }
        if let Some(expected) = c.expected_json.as_deref() {
            for (key, v) in parse_object(expected)? {
                if let (Some(&id), Some(v)) = (key_to_id.get(key.as_str()), v.as_f64()) {
                    self.expected.entry(id).or_default().push((c.repetition, v));
                }
            }
        }
        Ok(())
    }
}

/// Every judge × criterion with its curve and length scatter (see [`judge_reliability`]).
fn compute(store: &Store, options: &ReliabilityOptions) -> StoreResult<Vec<ReliabilityRow>> {
    let Some(loaded) = load(store, options)? else {
        return Ok(Vec::new());
    };
    let bootstrap = BootstrapOptions {
        resamples: options.resamples,
        ..BootstrapOptions::default()
    };
    let mut out = Vec::new();
    for judge in loaded.judges() {
        let by_response = &loaded.calls[&judge.id];
        let k_max = loaded.max_reps.get(&judge.id).copied().unwrap_or(1);
        let mut response_ids: Vec<i64> = by_response.keys().copied().collect();
        response_ids.sort_unstable();
        for (criterion_id, key, scale) in &loaded.criteria {
            let binary = matches!(scale, Scale::Binary);
            let cell = JudgeCriterion {
                judge,
                by_response,
                response_ids: &response_ids,
                k_max,
                criterion_id: *criterion_id,
                key,
                scale,
                binary,
                aggregate: for_scale(loaded.aggregate, binary),
            };
            out.push(reliability_row(&loaded, &cell, options, &bootstrap));
        }
    }
    Ok(out)
}

/// One judge × criterion as the figures read it.
struct JudgeCriterion<'a> {
    judge: &'a RaterRecord,
    /// The judge's calls per response.
    by_response: &'a HashMap<i64, ResponseCalls>,
    /// The responses the judge called, ascending.
    response_ids: &'a [i64],
    /// The judge's most repetitions (K).
    k_max: usize,
    criterion_id: i64,
    key: &'a str,
    scale: &'a Scale,
    binary: bool,
    /// The aggregate of this criterion's repetitions.
    aggregate: RepetitionAggregate,
}

impl JudgeCriterion<'_> {
    /// The judge's score of a response: the aggregate of its repetitions.
    fn score(&self, row: &[Option<f64>]) -> Option<f64> {
        let v: Vec<f64> = row.iter().flatten().copied().collect();
        self.aggregate.of(&v)
    }
}

/// The judge's repetitions of each response it scored on the criterion (one slot per repetition
/// 1 … K) with the response's expert reference.
struct RepetitionTable {
    rows: Vec<Vec<Option<f64>>>,
    reference: Vec<Option<f64>>,
    /// The response of each row.
    response_ids: Vec<i64>,
}

/// The paired (judge score, expert reference) samples of one judge × criterion, with what the
/// bias audit and calibration read.
#[derive(Default)]
struct AuditSamples {
    /// Judge − expert reference per compared response.
    d: Vec<f64>,
    /// ln(characters) per compared response (NaN when unknown).
    log_len: Vec<f64>,
    /// Judge − expert on the judge family's own responses …
    own: Vec<f64>,
    /// … and on the other sources' responses.
    others: Vec<f64>,
    /// Call value − expert where the criterion was asked in the first half of the prompt …
    first_half: Vec<f64>,
    /// … and in the second half.
    second_half: Vec<f64>,
    /// (expert, judge, response) per compared response.
    pairs: Vec<(f64, f64, i64)>,
    /// (expected, sampled score, expert reference, from log-probabilities) per compared response.
    calibration_rows: Vec<(f64, f64, f64, bool)>,
}

/// Every figure of one judge × criterion, with its curve and length scatter.
fn reliability_row(
    loaded: &Loaded,
    cell: &JudgeCriterion<'_>,
    options: &ReliabilityOptions,
    bootstrap: &BootstrapOptions,
) -> ReliabilityRow {
    let scale = cell.scale;
    let categories: Vec<f64> = (scale.min()..=scale.max()).map(|v| v as f64).collect();
    let table = repetition_table(loaded, cell);
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let kind = if cell.binary {
        ScaleKind::Binary
    } else {
        ScaleKind::Likert
    };
    let consistency = self_consistency(&table.rows, &categories, kind, bootstrap, &mut rng);
    let needed = repetitions_needed(&table.rows, &table.reference, cell.k_max, cell.aggregate);
    let samples = audit_samples(loaded, cell, &table);
    let calibration = calibrate(&samples.calibration_rows, cell.binary, options.bins);
    let target = TargetRepetitions {
        reliability: options.target_reliability,
        repetitions: needed
            .single_repetition_reliability
            .and_then(|rho1| repetitions_for_reliability(rho1, options.target_reliability)),
    };
    let figures = JudgeReliability {
        judge: cell.judge.name.clone(),
        model: cell.judge.model_id.clone(),
        family: cell.judge.family.clone(),
        criterion: cell.key.to_string(),
        scale: if cell.binary { "binary" } else { "likert" },
        repetitions: cell.k_max,
        aggregate: cell.aggregate,
        n_responses: table
            .rows
            .iter()
            .filter(|r| cell.score(r).is_some())
            .count(),
        n_compared: samples.pairs.len(),
        consistency,
        repetitions_needed: needed,
        target,
        calibration,
        bias: samples.bias_audit(cell.judge),
    };
    let curve = curve(&figures);
    ReliabilityRow {
        figures,
        curve,
        length: samples.length_scatter(),
    }
}

/// The judge's repetitions of each response it scored on the criterion, with the expert
/// references.
fn repetition_table(loaded: &Loaded, cell: &JudgeCriterion<'_>) -> RepetitionTable {
    let mut table = RepetitionTable {
        rows: Vec::new(),
        reference: Vec::new(),
        response_ids: Vec::new(),
    };
    for id in cell.response_ids {
        let Some(values) = cell.by_response[id].values.get(&cell.criterion_id) else {
            continue;
        };
        let mut row = vec![None; cell.k_max];
        for &(rep, v) in values {
            if rep >= 1 && (rep as usize) <= cell.k_max {
                row[rep as usize - 1] = Some(v);
            }
        }
        table.rows.push(row);
        table.reference.push(expert_reference(
            loaded.expert_values.get(&(*id, cell.criterion_id)),
            cell.binary,
        ));
        table.response_ids.push(*id);
    }
    table
}

/// The samples of every response with both a judge score and an expert reference.
fn audit_samples(
    loaded: &Loaded,
    cell: &JudgeCriterion<'_>,
    table: &RepetitionTable,
) -> AuditSamples {
    let mut s = AuditSamples::default();
    for (i, id) in table.response_ids.iter().enumerate() {
        let (Some(score), Some(e)) = (cell.score(&table.rows[i]), table.reference[i]) else {
            continue;
        };
        s.pairs.push((e, score, *id));
        s.d.push(score - e);
        let (chars, family) = loaded.responses.get(id).cloned().unwrap_or((None, None));
        s.log_len.push(
            chars
                .filter(|&c| c > 0)
                .map_or(f64::NAN, |c| (c as f64).ln()),
        );
        if let Some(jf) = &cell.judge.family {
            if family.as_deref() == Some(jf.as_str()) {
                s.own.push(score - e);
            } else {
                s.others.push(score - e);
            }
        }
        let calls_here = &cell.by_response[id];
        s.add_positions(calls_here, cell.criterion_id, e);
        let reps: Vec<f64> = table.rows[i].iter().flatten().copied().collect();
        let (expected, from_logprobs) = match calls_here.expected.get(&cell.criterion_id) {
            Some(x) if !x.is_empty() => (x.iter().map(|e| e.1).sum::<f64>() / x.len() as f64, true),
            _ => (reps.iter().sum::<f64>() / reps.len() as f64, false),
        };
        s.calibration_rows.push((expected, score, e, from_logprobs));
    }
    s
}

impl AuditSamples {
    /// Adds the response's calls with a recorded order to the first or second half (the middle
    /// position of an odd count left out), against the expert reference `e`.
    fn add_positions(&mut self, calls: &ResponseCalls, criterion_id: i64, e: f64) {
        for &(pos, count, v) in calls.positions.get(&criterion_id).into_iter().flatten() {
            if count < 2 {
                continue;
            }
            if 2 * pos + 1 < count {
                self.first_half.push(v - e);
            } else if 2 * pos + 1 > count {
                self.second_half.push(v - e);
            }
        }
    }

    /// The bias audit: overall, on length, self-preference, order and per quality band.
    fn bias_audit(&self, judge: &RaterRecord) -> BiasAudit {
        let self_preference = match &judge.family {
            Some(_) => difference_interval(&self.own, &self.others, SELF_RULE),
            None => difference_interval(&[], &[], SELF_UNKNOWN),
        };
        BiasAudit {
            overall: mean_interval(&self.d),
            length: slope_interval(&self.log_len, &self.d, LENGTH_RULE),
            self_preference,
            order: difference_interval(&self.first_half, &self.second_half, ORDER_RULE),
            bands: bands(&self.pairs),
        }
    }

    /// The length scatter: each response's ln length against judge − expert, and the fitted line.
    fn length_scatter(&self) -> LengthScatter {
        LengthScatter {
            points: self
                .log_len
                .iter()
                .zip(&self.d)
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|(&log_length, &difference)| LengthPoint {
                    log_length,
                    difference,
                })
                .collect(),
            line: fitted_line(&self.log_len, &self.d, BAND_POINTS),
        }
    }
}

/// The Spearman–Brown curve of a judge × criterion (see [`ReliabilityRow::curve`]).
fn curve(figures: &JudgeReliability) -> Vec<CurvePoint> {
    let Some(rho1) = figures.repetitions_needed.single_repetition_reliability else {
        return Vec::new();
    };
    let reach = figures.target.repetitions.unwrap_or(CURVE_MOST);
    let last = figures.repetitions.max(reach.min(CURVE_MOST)).max(2);
    (1..=last)
        .filter_map(|k| {
            spearman_brown(rho1, k as f64).map(|reliability| CurvePoint { k, reliability })
        })
        .collect()
}

/// The experts' mean (1–5) or majority (binary, a tie left out).
fn expert_reference(values: Option<&Vec<f64>>, binary: bool) -> Option<f64> {
    let v = values.filter(|v| !v.is_empty())?;
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    if !binary {
        return Some(mean);
    }
    match mean.partial_cmp(&0.5)? {
        std::cmp::Ordering::Greater => Some(1.0),
        std::cmp::Ordering::Less => Some(0.0),
        std::cmp::Ordering::Equal => None,
    }
}

fn icc_a1(pairs: &[(f64, f64)]) -> (Option<f64>, [Option<f64>; 2]) {
    if pairs.len() < 2 {
        return (None, [None, None]);
    }
    let matrix: Vec<f64> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    match icc_all(&matrix, pairs.len(), 2) {
        Ok(t) => {
            let e = t.get(IccForm::Icc2);
            (e.value, e.ci95)
        }
        Err(_) => (None, [None, None]),
    }
}

/// (expected, sampled score, expert reference, from log-probabilities) per response.
fn calibrate(rows: &[(f64, f64, f64, bool)], binary: bool, bins: usize) -> Calibration {
    let logprobs = rows.iter().filter(|r| r.3).count();
    let source = match (rows.is_empty(), logprobs) {
        (true, _) => None,
        (false, 0) => Some("repetitions"),
        (false, n) if n == rows.len() => Some("logprobs"),
        _ => Some("mixed"),
    };
    if binary {
        let p: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let y: Vec<f64> = rows.iter().map(|r| r.2).collect();
        return Calibration {
            source,
            binary: Some(binary_calibration(&p, &y, bins)),
            icc_a1_expected: None,
            icc_a1_sampled: None,
            n_responses: rows.len(),
        };
    }
    let expected: Vec<(f64, f64)> = rows.iter().map(|r| (r.2, r.0)).collect();
    let sampled: Vec<(f64, f64)> = rows.iter().map(|r| (r.2, r.1)).collect();
    Calibration {
        source,
        binary: None,
        icc_a1_expected: icc_a1(&expected).0,
        icc_a1_sampled: icc_a1(&sampled).0,
        n_responses: rows.len(),
    }
}

/// ICC(A,1) and bias within tertiles of the expert mean; `pairs` are (expert, judge, response).
fn bands(pairs: &[(f64, f64, i64)]) -> Vec<QualityBand> {
    let experts: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let Some(cuts) = tertile_cuts(&experts) else {
        return Vec::new();
    };
    (0..3)
        .map(|b| {
            let inside: Vec<(f64, f64)> = pairs
                .iter()
                .filter(|p| tertile_of(p.0, cuts) == b)
                .map(|p| (p.0, p.1))
                .collect();
            let lo = inside.iter().map(|p| p.0).reduce(f64::min);
            let hi = inside.iter().map(|p| p.0).reduce(f64::max);
            let (icc, ci) = icc_a1(&inside);
            let d: Vec<f64> = inside.iter().map(|p| p.1 - p.0).collect();
            QualityBand {
                band: b + 1,
                range: [lo, hi],
                n_responses: inside.len(),
                icc_a1: icc,
                icc_a1_ci95: ci,
                bias: mean_interval(&d),
            }
        })
        .collect()
}
