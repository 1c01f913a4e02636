//! The corrected prevalence of each binary criterion per judge (`concord agreement
//! --prevalence`): what share of the answers truly meets the criterion, from the judge's labels
//! of every response of the rubric corrected for its sensitivity and specificity against the
//! experts (`concord_stats::prevalence`, Lee et al. 2025).
//!
//! The judge's raw rate is over every response it labelled (a multi-repetition run's aggregate);
//! the calibration set is the responses the judge labelled that have an expert consensus — the
//! value a strict majority of the experts who rated it gave, as the binary agreement table reads
//! it (responses where they tie are left out and counted). Where the correction has no meaning
//! the row carries the reason and no corrected figure: never one outside [0, 1], never NaN.

use crate::panel::agreement::{expert_consensus, AgreementData};
use crate::rubric::Scale;
use concord_stats::prevalence::{
    allocate_calibration, corrected_prevalence, Allocation, PrevalenceCounts, PrevalenceError,
};
use serde::Serialize;

/// How a calibration budget should be split (`--allocate N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LabelSplit {
    /// Expert labels for items the experts would call positive.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub positive: u64,
    /// Expert labels for items the experts would call negative.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub negative: u64,
}

impl From<Allocation> for LabelSplit {
    fn from(a: Allocation) -> Self {
        LabelSplit {
            positive: a.positive,
            negative: a.negative,
        }
    }
}

/// Why a row has no corrected prevalence, for a front end to word in its own language (the row's
/// counts and rates give the figures the words need; `not_computed` has them in English).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum PrevalenceReason {
    /// The judge labelled no response.
    NoItems,
    /// No response the judge labelled has an expert consensus.
    NoCalibration,
    /// The experts call none of the calibration responses positive.
    NoExpertPositive,
    /// The experts call none of them negative.
    NoExpertNegative,
    /// Sensitivity + specificity ≤ 1: the judge is no better than chance.
    NotInformative,
    /// So few expert labels that the interval's shrunk rates are no better than chance.
    TooFewExpertLabels,
    /// Anything else (the English text says what).
    Other,
}

impl From<&PrevalenceError> for PrevalenceReason {
    fn from(e: &PrevalenceError) -> Self {
        match e {
            PrevalenceError::NoItems => PrevalenceReason::NoItems,
            PrevalenceError::NoCalibration => PrevalenceReason::NoCalibration,
            PrevalenceError::NoExpertPositive(_) => PrevalenceReason::NoExpertPositive,
            PrevalenceError::NoExpertNegative(_) => PrevalenceReason::NoExpertNegative,
            PrevalenceError::NotInformative { .. } => PrevalenceReason::NotInformative,
            PrevalenceError::ShrunkNotInformative { .. } => PrevalenceReason::TooFewExpertLabels,
            _ => PrevalenceReason::Other,
        }
    }
}

/// One judge × binary criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PrevalenceRow {
    /// The rubric's key.
    pub rubric: String,
    /// The judge's model id (or name).
    pub judge: String,
    /// Criterion key and its English display name.
    pub criterion: String,
    pub attribute: String,
    /// Responses the judge labelled.
    pub n_items: usize,
    /// Of them, responses with an expert consensus (the calibration set).
    pub n_calibration: usize,
    /// Responses the judge labelled whose experts tied (left out of the calibration set).
    pub n_no_consensus: usize,
    /// The judge's positive rate over every response it labelled.
    pub raw_rate: Option<f64>,
    /// P(judge positive | experts positive) on the calibration set.
    pub sensitivity: Option<f64>,
    /// P(judge negative | experts negative) on the calibration set.
    pub specificity: Option<f64>,
    /// The Rogan–Gladen estimate, clipped to [0, 1].
    pub corrected: Option<f64>,
    /// Its interval (Lee et al.), both ends in [0, 1].
    pub ci: Option<[f64; 2]>,
    pub level: f64,
    /// With a calibration budget: how to split it.
    pub allocation: Option<LabelSplit>,
    /// Why there is no corrected prevalence (or no allocation).
    pub not_computed: Option<String>,
    /// The kind of reason there is no corrected prevalence.
    pub reason: Option<PrevalenceReason>,
}

fn judge_name(data: &AgreementData, j: usize) -> String {
    let r = &data.raters[j];
    r.model_id.clone().unwrap_or_else(|| r.name.clone())
}

/// The counts of judge `j` on binary criterion `c`, and the responses it labelled whose experts
/// tied.
fn counts(data: &AgreementData, j: usize, c: usize) -> (PrevalenceCounts, usize) {
    let reference = expert_consensus(data, &data.experts(), c);
    let mut k = PrevalenceCounts::default();
    let mut ties = 0;
    for (i, &v) in data.series(j, c).iter().enumerate() {
        if v.is_nan() {
            continue;
        }
        let said = v == 1.0;
        k.n_items += 1;
        k.judged_positive += u64::from(said);
        match reference[i] {
            Some(Some(e)) => match (e == 1.0, said) {
                (true, true) => k.true_positive += 1,
                (true, false) => k.false_negative += 1,
                (false, false) => k.true_negative += 1,
                (false, true) => k.false_positive += 1,
            },
            Some(None) => ties += 1,
            None => {}
        }
    }
    (k, ties)
}

/// A share, when its denominator is not zero.
fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// The row of judge `j` on binary criterion `c`.
fn row(
    data: &AgreementData,
    j: usize,
    c: usize,
    level: f64,
    allocate: Option<u64>,
) -> PrevalenceRow {
    let (k, ties) = counts(data, j, c);
    let info = &data.criteria[c];
    let mut row = PrevalenceRow {
        rubric: data.rubric_key.clone(),
        judge: judge_name(data, j),
        criterion: info.key.clone(),
        attribute: info.label.clone(),
        n_items: k.n_items as usize,
        n_calibration: k.n_calibration() as usize,
        n_no_consensus: ties,
        raw_rate: share(k.judged_positive, k.n_items),
        sensitivity: share(k.true_positive, k.expert_positive()),
        specificity: share(k.true_negative, k.expert_negative()),
        corrected: None,
        ci: None,
        level,
        allocation: None,
        not_computed: None,
        reason: None,
    };
    match corrected_prevalence(&k, level) {
        Ok(p) => {
            row.corrected = Some(p.corrected);
            row.ci = Some(p.ci);
        }
        Err(e) => {
            row.reason = Some(PrevalenceReason::from(&e));
            row.not_computed = Some(e.to_string());
        }
    }
    if let Some(budget) = allocate {
        let allocation = match (row.raw_rate, row.specificity, row.sensitivity) {
            (Some(p), Some(q0), Some(q1)) => {
                allocate_calibration(budget, p, q0, q1, k.n_calibration())
                    .map(LabelSplit::from)
                    .map_err(|e| e.to_string())
            }
            _ => Err(
                "the allocation needs the judge's rate, sensitivity and specificity from expert-rated positives and negatives"
                    .to_string(),
            ),
        };
        match allocation {
            Ok(a) => row.allocation = Some(a),
            Err(why) => {
                let said = row.not_computed.get_or_insert_with(String::new);
                if !said.is_empty() {
                    said.push_str("; ");
                }
                said.push_str("allocation: ");
                said.push_str(&why);
            }
        }
    }
    row
}

/// Every judge × binary criterion of `data` (which holds every response of the rubric, see
/// [`AgreementData::load`]), at confidence `level`; with `allocate`, how a calibration budget of
/// that many expert labels (those already given included) should be split.
pub fn prevalence_rows(
    data: &AgreementData,
    level: f64,
    allocate: Option<u64>,
) -> Vec<PrevalenceRow> {
    let binary: Vec<usize> = (0..data.criteria.len())
        .filter(|&c| data.criteria[c].scale == Scale::Binary)
        .collect();
    let mut out = Vec::new();
    for &c in &binary {
        for j in data.judges() {
            out.push(row(data, j, c, level, allocate));
        }
    }
    out
}
