//! The latent consensus as a reference (`concord agreement --reference dawid-skene`): per
//! criterion, a Dawid–Skene model (`concord_stats::dawid_skene`, as crowd-kit 1.4.2 fits it) over
//! every rater's values — experts and judges alike, each value a nominal label — on the responses
//! some expert rated, with adjudicated pairs held at their decided value (crowd-kit's
//! `true_labels`; a pair decided unratable is not held). Each response's most probable label
//! then stands in for the experts' values it replaces (only experts who rated the response), so
//! judges are compared with the latent label while experts are still compared with each other
//! as they rated.
//!
//! Beside each fit: every rater's confusion matrix (how good each rater is), the priors, the
//! passes and whether the stopping rule was met, and for every two judges the φ correlation of
//! their errors against the latent label, since correlated judges break the model's assumption
//! that raters err independently. The judges are part of the fit, as the contract's question
//! ("three experts and four judges disagree") has it, so a judge is partly compared with a label
//! it helped make; that is stated with the fits.

use crate::panel::agreement::AgreementData;
use crate::store::RaterKind;
use concord_stats::dawid_skene::{dawid_skene, error_correlation, DawidSkeneOptions, LabelRating};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// One rater's confusion matrix: P(gives `GIVEN` | true label `TRUE`) as `{TRUE: {GIVEN: p}}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LatentRater {
    /// A judge's model id (or name), or an expert's name.
    pub rater: String,
    pub kind: RaterKind,
    pub confusion: BTreeMap<String, BTreeMap<String, f64>>,
}

/// The φ correlation of two judges' errors (label ≠ latent label) over the responses both rated;
/// `None` when either never errs or always errs there.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct JudgeErrorCorrelation {
    pub a: String,
    pub b: String,
    /// Responses both judges rated.
    pub n: usize,
    pub phi: Option<f64>,
}

/// The Dawid–Skene fit of one criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LatentFit {
    /// Criterion key.
    pub criterion: String,
    /// Its English display name.
    pub attribute: String,
    /// The labels, in order (the values raters gave, as numbers, then gold-only values).
    pub labels: Vec<String>,
    /// Responses with at least one value.
    pub n_items: usize,
    /// Of them, held at an adjudicated value.
    pub n_gold: usize,
    /// Responses whose latent label differs from the experts' strict majority (ties counted as
    /// differing).
    pub n_changed: usize,
    pub priors: BTreeMap<String, f64>,
    pub raters: Vec<LatentRater>,
    pub iterations: usize,
    pub converged: bool,
    /// For every two judges.
    pub judge_error_correlation: Vec<JudgeErrorCorrelation>,
    /// Why no fit exists (then every other figure is empty and the experts' values are kept).
    pub not_computed: Option<String>,
}

/// The words a number label is written in: an integer without a decimal point.
fn label_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        v.to_string()
    }
}

fn rater_name(data: &AgreementData, r: usize) -> String {
    let info = &data.raters[r];
    match info.kind {
        RaterKind::Judge => info.model_id.clone().unwrap_or_else(|| info.name.clone()),
        RaterKind::Expert => info.name.clone(),
    }
}

/// The labels of criterion `c`: every value a rater gave there, sorted, then the adjudicated
/// values no rater gave.
fn labels_of(data: &AgreementData, c: usize, gold: &[(usize, f64)]) -> Vec<f64> {
    let mut labels: Vec<f64> = (0..data.raters.len())
        .flat_map(|r| data.series(r, c).iter().copied())
        .filter(|v| !v.is_nan())
        .collect();
    labels.sort_by(f64::total_cmp);
    labels.dedup();
    for &(_, v) in gold {
        if !labels.contains(&v) {
            labels.push(v);
        }
    }
    labels
}

/// The experts' strict majority per response on criterion `c` (`None`: no expert, or a tie).
fn expert_majority(data: &AgreementData, c: usize) -> Vec<Option<f64>> {
    let experts = data.experts();
    (0..data.responses.len())
        .map(|i| {
            let mut counts: Vec<(f64, usize)> = Vec::new();
            for &e in &experts {
                let v = data.series(e, c)[i];
                if v.is_nan() {
                    continue;
                }
                match counts.iter_mut().find(|(x, _)| *x == v) {
                    Some(slot) => slot.1 += 1,
                    None => counts.push((v, 1)),
                }
            }
            let total: usize = counts.iter().map(|c| c.1).sum();
            counts
                .into_iter()
                .find(|&(_, n)| 2 * n > total)
                .map(|(v, _)| v)
        })
        .collect()
}

/// A fit that could not be made, with its reason.
fn not_fitted(data: &AgreementData, c: usize, why: String) -> LatentFit {
    let info = &data.criteria[c];
    LatentFit {
        criterion: info.key.clone(),
        attribute: info.label.clone(),
        labels: Vec::new(),
        n_items: 0,
        n_gold: 0,
        n_changed: 0,
        priors: BTreeMap::new(),
        raters: Vec::new(),
        iterations: 0,
        converged: false,
        judge_error_correlation: Vec::new(),
        not_computed: Some(why),
    }
}

/// Fit criterion `c` and write its latent labels over the experts' values in `labelled`.
fn fit_criterion(
    data: &AgreementData,
    labelled: &mut AgreementData,
    c: usize,
    decided: &HashMap<(i64, i64), Option<i64>>,
    options: &DawidSkeneOptions,
) -> LatentFit {
    let criterion_id = data.criteria[c].id;
    let gold_values: Vec<(usize, f64)> = data
        .responses
        .iter()
        .enumerate()
        .filter_map(|(i, r)| match decided.get(&(r.id, criterion_id)) {
            Some(Some(v)) => Some((i, *v as f64)),
            _ => None,
        })
        .collect();
    let labels = labels_of(data, c, &gold_values);
    let index = |v: f64| labels.iter().position(|&l| l == v).unwrap_or(0);
    let mut ratings = Vec::new();
    let mut rated = vec![false; data.responses.len()];
    for r in 0..data.raters.len() {
        for (i, &v) in data.series(r, c).iter().enumerate() {
            if !v.is_nan() {
                rated[i] = true;
                ratings.push(LabelRating {
                    item: i,
                    rater: r,
                    label: index(v),
                });
            }
        }
    }
    let gold: Vec<(usize, usize)> = gold_values.iter().map(|&(i, v)| (i, index(v))).collect();
    let fit = match dawid_skene(
        &ratings,
        data.responses.len(),
        data.raters.len(),
        labels.len(),
        &gold,
        options,
    ) {
        Ok(fit) => fit,
        Err(e) => return not_fitted(data, c, e.to_string()),
    };
    let majority = expert_majority(data, c);
    let mut n_changed = 0;
    for (i, label) in fit.labels.iter().enumerate() {
        let Some(label) = label else { continue };
        let value = labels[*label];
        n_changed += usize::from(majority[i] != Some(value));
        for e in data.experts() {
            if !data.series(e, c)[i].is_nan() {
                // Ids taken from `data`, which `labelled` copies, so the lookup cannot fail.
                let _ = labelled.apply(
                    data.raters[e].id,
                    data.responses[i].id,
                    criterion_id,
                    Some(value),
                );
            }
        }
    }
    let names: Vec<String> = labels.iter().map(|&v| label_text(v)).collect();
    let k = labels.len();
    let raters = (0..data.raters.len())
        .map(|r| LatentRater {
            rater: rater_name(data, r),
            kind: data.raters[r].kind,
            confusion: (0..k)
                .map(|truth| {
                    let row = (0..k)
                        .map(|given| (names[given].clone(), fit.confusion_of(r, given, truth)))
                        .collect();
                    (names[truth].clone(), row)
                })
                .collect(),
        })
        .collect();
    let judges = data.judges();
    let given = |r: usize| -> Vec<Option<usize>> {
        data.series(r, c)
            .iter()
            .map(|&v| (!v.is_nan()).then(|| index(v)))
            .collect()
    };
    let mut correlations = Vec::new();
    for (x, &a) in judges.iter().enumerate() {
        for &b in &judges[x + 1..] {
            let (n, phi) = error_correlation(&given(a), &given(b), &fit.labels);
            correlations.push(JudgeErrorCorrelation {
                a: rater_name(data, a),
                b: rater_name(data, b),
                n,
                phi: phi.filter(|p| p.is_finite()),
            });
        }
    }
    let info = &data.criteria[c];
    LatentFit {
        criterion: info.key.clone(),
        attribute: info.label.clone(),
        n_items: rated.iter().filter(|&&r| r).count(),
        n_gold: gold.iter().filter(|&&(i, _)| rated[i]).count(),
        n_changed,
        priors: names
            .iter()
            .cloned()
            .zip(fit.priors.iter().copied())
            .collect(),
        raters,
        iterations: fit.iterations,
        converged: fit.converged,
        judge_error_correlation: correlations,
        not_computed: None,
        labels: names,
    }
}

/// The Dawid–Skene fit of every criterion of `data`, and a copy of `data` whose experts' values
/// are the latent labels (`decided`: the adjudicated value of each decided (response,
/// criterion) pair, `None` when decided unratable).
pub fn dawid_skene_reference(
    data: &AgreementData,
    decided: &HashMap<(i64, i64), Option<i64>>,
    options: &DawidSkeneOptions,
) -> (AgreementData, Vec<LatentFit>) {
    let mut labelled = data.clone();
    let fits = (0..data.criteria.len())
        .map(|c| {
            if data.experts().is_empty() {
                return not_fitted(
                    data,
                    c,
                    "no expert rated a response of this rubric: there is nothing to compare the judges with".to_string(),
                );
            }
            fit_criterion(data, &mut labelled, c, decided, options)
        })
        .collect();
    (labelled, fits)
}
