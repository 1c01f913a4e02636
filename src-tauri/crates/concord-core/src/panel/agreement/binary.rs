//! Binary rubrics (PsyCrisis): per judge and dimension, Cohen's κ, Gwet's AC1 with its interval,
//! PABAK, positive and negative specific agreement and Krippendorff's α (nominal) with percentile
//! bootstrap intervals, and the judge's sensitivity and specificity against the expert
//! consensus; per dimension the same agreement statistics among the experts themselves (every
//! expert a rater, missing ratings allowed: Uebersax's generalisation of specific agreement, as
//! the experts of an assignment rate different subsets); per judge, Pearson, Spearman
//! and Kendall τ-b between judge and expert totals at item level (every response) and at system
//! level (per-source mean totals). All numbers come from `concord-stats`.
//!
//! Expert consensus on a dimension is the value held by a strict majority of the experts who
//! rated the response (with one expert, that expert's value); responses where the experts tie are
//! left out and counted. A rater's total is the sum of the dimensions, defined only when every
//! dimension is present; the expert total of a response is the mean of the experts' totals.
//!
//! Intervals: AC1 by Gwet's variance with a t quantile (as irrCAC computes it); specific
//! agreement and α by a percentile bootstrap over items ([`super::AgreementOptions::resamples`]
//! resamples, each statistic its own ChaCha8 stream seeded from [`super::AgreementOptions::seed`]
//! and the cell, undefined replicates dropped).

use super::data::AgreementData;
use super::Level;
use crate::rubric::Scale;
use concord_stats::bootstrap::BootstrapOptions;
use concord_stats::categorical::{
    cohen_kappa, diagnostic_accuracy, gwet_ac1, gwet_ac2_interval, krippendorff_alpha, pabak,
    percent_agreement, specific_agreement, AlphaMetric, CategoricalRatings, Weights,
};
use concord_stats::paired::{kendall_tau_b, pearson, spearman};
use rand::SeedableRng;
use serde::Serialize;

/// A proportion with its Wilson 95% interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Rate {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub count: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub total: u64,
    pub estimate: Option<f64>,
    pub ci95: Option<[f64; 2]>,
}

/// One judge × binary dimension against the expert consensus.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BinaryCell {
    pub judge: String,
    pub criterion: String,
    pub attribute: String,
    /// Responses with both a judge value and an expert consensus.
    pub n_items: usize,
    /// Responses the experts rated but tied on.
    pub n_no_consensus: usize,
    pub percent_agreement: Option<f64>,
    pub cohen_kappa: Option<f64>,
    pub gwet_ac1: Option<f64>,
    /// Gwet's 95% interval of AC1.
    pub gwet_ac1_ci95: Option<[f64; 2]>,
    pub pabak: Option<f64>,
    /// Positive specific agreement (on "present") with its bootstrap 95% interval.
    pub positive_agreement: Option<f64>,
    pub positive_agreement_ci95: Option<[f64; 2]>,
    /// Negative specific agreement (on "absent") with its bootstrap 95% interval.
    pub negative_agreement: Option<f64>,
    pub negative_agreement_ci95: Option<[f64; 2]>,
    /// Krippendorff's α (nominal) with its bootstrap 95% interval.
    pub krippendorff_alpha: Option<f64>,
    pub krippendorff_alpha_ci95: Option<[f64; 2]>,
    /// The experts among themselves (no judge; sensitivity and specificity do not apply).
    pub experts: bool,
    /// Judge says present when the experts do.
    pub sensitivity: Rate,
    /// Judge says absent when the experts do.
    pub specificity: Rate,
}

/// One judge's totals against the experts' at one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TotalsCell {
    pub judge: String,
    pub level: Level,
    /// Responses (item level) or sources (system level).
    pub n: usize,
    pub pearson: Option<f64>,
    pub spearman: Option<f64>,
    pub kendall_tau_b: Option<f64>,
}

fn binary_criteria(data: &AgreementData) -> Vec<usize> {
    (0..data.criteria.len())
        .filter(|&c| data.criteria[c].scale == Scale::Binary)
        .collect()
}

fn judge_name(data: &AgreementData, j: usize) -> String {
    let r = &data.raters[j];
    r.model_id.clone().unwrap_or_else(|| r.name.clone())
}

fn rate(p: &concord_stats::categorical::Proportion) -> Rate {
    Rate {
        count: p.count,
        total: p.total,
        estimate: p.estimate,
        ci95: p.ci95,
    }
}

/// Consensus per response on criterion `c`: `Some(Some(v))` a majority value, `Some(None)` a tie,
/// `None` no expert rated it.
pub(crate) fn consensus(
    data: &AgreementData,
    experts: &[usize],
    c: usize,
) -> Vec<Option<Option<f64>>> {
    let n = data.responses.len();
    let mut ones = vec![0u32; n];
    let mut zeros = vec![0u32; n];
    for &e in experts {
        for (i, v) in data.series(e, c).iter().enumerate() {
            if *v == 1.0 {
                ones[i] += 1;
            } else if *v == 0.0 {
                zeros[i] += 1;
            }
        }
    }
    (0..n)
        .map(|i| match (ones[i], zeros[i]) {
            (0, 0) => None,
            (o, z) if o > z => Some(Some(1.0)),
            (o, z) if z > o => Some(Some(0.0)),
            _ => Some(None),
        })
        .collect()
}

/// The agreement statistics of one table of binary ratings, with their intervals.
struct Coefficients {
    ac1_ci95: Option<[f64; 2]>,
    positive: (Option<f64>, Option<[f64; 2]>),
    negative: (Option<f64>, Option<[f64; 2]>),
    alpha: (Option<f64>, Option<[f64; 2]>),
}

fn coefficients(
    r: &CategoricalRatings,
    options: &super::AgreementOptions,
    cell: u64,
) -> Coefficients {
    let boot = BootstrapOptions {
        resamples: options.resamples,
        level: 0.95,
        drop_undefined: true,
        keep_range: None,
    };
    let interval = |stream: u64, f: &dyn Fn(&CategoricalRatings) -> Option<f64>| {
        let seed = options
            .seed
            .wrapping_add(cell.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .wrapping_add(stream);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let value = f(r);
        let ci = value.and_then(|_| {
            concord_stats::bootstrap::percentile_ci(r.n_items(), &boot, &mut rng, |idx| {
                f(&r.resample(idx))
            })
            .ok()
            .and_then(|b| Some([b.lower?, b.upper?]))
        });
        (value, ci)
    };
    Coefficients {
        ac1_ci95: gwet_ac2_interval(r, Weights::Unweighted, 0.95).map(|c| c.ci),
        positive: interval(1, &|x| specific_agreement(x, 1)),
        negative: interval(2, &|x| specific_agreement(x, 0)),
        alpha: interval(3, &|x| krippendorff_alpha(x, AlphaMetric::Nominal)),
    }
}

/// The experts' own agreement on criterion `c`: every expert a rater, over the responses at
/// least two of them rated.
fn experts_cell(
    data: &AgreementData,
    experts: &[usize],
    c: usize,
    options: &super::AgreementOptions,
) -> Option<BinaryCell> {
    if experts.len() < 2 {
        return None;
    }
    let series: Vec<&[f64]> = experts.iter().map(|&e| data.series(e, c)).collect();
    let mut cells = Vec::new();
    let mut n_items = 0;
    for i in 0..data.responses.len() {
        let row: Vec<Option<usize>> = series
            .iter()
            .map(|s| (!s[i].is_nan()).then(|| s[i] as usize))
            .collect();
        if row.iter().filter(|v| v.is_some()).count() >= 2 {
            cells.extend(row);
            n_items += 1;
        }
    }
    let ratings = CategoricalRatings::new(vec![0.0, 1.0], n_items, experts.len(), cells).ok()?;
    let k = coefficients(&ratings, options, c as u64 * 1_000_003);
    let info = &data.criteria[c];
    let empty = Rate {
        count: 0,
        total: 0,
        estimate: None,
        ci95: None,
    };
    Some(BinaryCell {
        judge: format!("experts ({})", experts.len()),
        criterion: info.key.clone(),
        attribute: info.label.clone(),
        n_items,
        n_no_consensus: 0,
        percent_agreement: percent_agreement(&ratings),
        cohen_kappa: None,
        gwet_ac1: gwet_ac1(&ratings),
        gwet_ac1_ci95: k.ac1_ci95,
        pabak: None,
        positive_agreement: k.positive.0,
        positive_agreement_ci95: k.positive.1,
        negative_agreement: k.negative.0,
        negative_agreement_ci95: k.negative.1,
        krippendorff_alpha: k.alpha.0,
        krippendorff_alpha_ci95: k.alpha.1,
        experts: true,
        sensitivity: empty.clone(),
        specificity: empty,
    })
}

pub(crate) fn dimension_cells(
    data: &AgreementData,
    options: &super::AgreementOptions,
) -> Vec<BinaryCell> {
    let dims = binary_criteria(data);
    let experts = data.experts();
    if dims.is_empty() || experts.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for &c in &dims {
        out.extend(experts_cell(data, &experts, c, options));
        let reference = consensus(data, &experts, c);
        for j in data.judges() {
            let judged = data.series(j, c);
            let mut cells = Vec::new();
            let (mut truth, mut said) = (Vec::new(), Vec::new());
            let mut ties = 0;
            for (i, r) in reference.iter().enumerate() {
                let v = judged[i];
                if v.is_nan() {
                    continue;
                }
                match r {
                    None => {}
                    Some(None) => ties += 1,
                    Some(Some(e)) => {
                        cells.push(Some(*e as usize));
                        cells.push(Some(v as usize));
                        truth.push(*e == 1.0);
                        said.push(v == 1.0);
                    }
                }
            }
            let n_items = truth.len();
            let ratings = CategoricalRatings::new(vec![0.0, 1.0], n_items, 2, cells).ok();
            let k = ratings
                .as_ref()
                .map(|r| coefficients(r, options, (c as u64) * 1_000_003 + j as u64 + 1));
            let accuracy = diagnostic_accuracy(&truth, &said).ok();
            let info = &data.criteria[c];
            let empty = Rate {
                count: 0,
                total: 0,
                estimate: None,
                ci95: None,
            };
            out.push(BinaryCell {
                judge: judge_name(data, j),
                criterion: info.key.clone(),
                attribute: info.label.clone(),
                n_items,
                n_no_consensus: ties,
                percent_agreement: ratings.as_ref().and_then(percent_agreement),
                cohen_kappa: ratings
                    .as_ref()
                    .and_then(|r| cohen_kappa(r, Weights::Unweighted)),
                gwet_ac1: ratings.as_ref().and_then(gwet_ac1),
                gwet_ac1_ci95: k.as_ref().and_then(|k| k.ac1_ci95),
                pabak: ratings.as_ref().and_then(pabak).and_then(|p| p.pabak),
                positive_agreement: k.as_ref().and_then(|k| k.positive.0),
                positive_agreement_ci95: k.as_ref().and_then(|k| k.positive.1),
                negative_agreement: k.as_ref().and_then(|k| k.negative.0),
                negative_agreement_ci95: k.as_ref().and_then(|k| k.negative.1),
                krippendorff_alpha: k.as_ref().and_then(|k| k.alpha.0),
                krippendorff_alpha_ci95: k.as_ref().and_then(|k| k.alpha.1),
                experts: false,
                sensitivity: accuracy
                    .as_ref()
                    .map(|a| rate(&a.sensitivity))
                    .unwrap_or_else(|| empty.clone()),
                specificity: accuracy
                    .as_ref()
                    .map(|a| rate(&a.specificity))
                    .unwrap_or(empty),
            });
        }
    }
    out
}

/// A rater's total per response (NaN unless every dimension is present).
fn totals(data: &AgreementData, rater: usize, dims: &[usize]) -> Vec<f64> {
    let mut out = vec![0.0; data.responses.len()];
    for &c in dims {
        for (o, v) in out.iter_mut().zip(data.series(rater, c)) {
            *o += v;
        }
    }
    out
}

pub(crate) fn totals_cells(data: &AgreementData) -> Vec<TotalsCell> {
    let dims = binary_criteria(data);
    let experts = data.experts();
    if dims.is_empty() || experts.is_empty() {
        return Vec::new();
    }
    let n = data.responses.len();
    let mut sum = vec![0.0; n];
    let mut count = vec![0u32; n];
    for &e in &experts {
        for (i, t) in totals(data, e, &dims).into_iter().enumerate() {
            if !t.is_nan() {
                sum[i] += t;
                count[i] += 1;
            }
        }
    }
    let expert_total: Vec<f64> = sum
        .iter()
        .zip(&count)
        .map(|(s, &c)| if c == 0 { f64::NAN } else { s / c as f64 })
        .collect();
    let mut out = Vec::new();
    for j in data.judges() {
        let judge_total = totals(data, j, &dims);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut per_source = vec![(0.0, 0.0, 0usize); data.sources.len()];
        for i in 0..n {
            let (e, t) = (expert_total[i], judge_total[i]);
            if e.is_nan() || t.is_nan() {
                continue;
            }
            a.push(t);
            b.push(e);
            let s = &mut per_source[data.responses[i].source];
            s.0 += t;
            s.1 += e;
            s.2 += 1;
        }
        let name = judge_name(data, j);
        out.push(TotalsCell {
            judge: name.clone(),
            level: Level::Item,
            n: a.len(),
            pearson: pearson(&a, &b),
            spearman: spearman(&a, &b),
            kendall_tau_b: kendall_tau_b(&a, &b),
        });
        let (sa, sb): (Vec<f64>, Vec<f64>) = per_source
            .iter()
            .filter(|s| s.2 > 0)
            .map(|&(t, e, k)| (t / k as f64, e / k as f64))
            .unzip();
        out.push(TotalsCell {
            judge: name,
            level: Level::System,
            n: sa.len(),
            pearson: pearson(&sa, &sb),
            spearman: spearman(&sa, &sb),
            kendall_tau_b: kendall_tau_b(&sa, &sb),
        });
    }
    out
}
