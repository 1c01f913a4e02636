//! The Alternative Annotator Test ("alt-test") of Calderon, Reichart & Dror (ACL 2025, "The
//! Alternative Annotator Test for LLM-as-a-Judge: How to Statistically Justify Replacing Human
//! Annotators with LLMs"): can an LLM judge replace the human annotators of a study?
//!
//! # Definitions used (those of the paper and the authors' reference implementation)
//! Let H be the human annotators, x_{h,i} annotator h's label of item i, and x_{J,i} the judge's.
//! 1. Items are kept when at least `min_humans_per_item` (2) humans labelled them and the judge did.
//! 2. Leave one annotator out: for each h with at least `min_items_per_human` (30) kept items, and
//!    each such item i, let R_i = the labels of the other humans on i (in annotator order). The
//!    alignment of a label y with R_i is
//!    - accuracy: S(y, R_i) = (1/|R_i|) Σ_{r∈R_i} [y = r] (categorical labels), or
//!    - negative RMSE: S(y, R_i) = −√((1/|R_i|) Σ_{r∈R_i} (y − r)²) (numeric scores).
//!
//!    W^J_i = 1 if S(x_{J,i}, R_i) ≥ S(x_{h,i}, R_i) else 0 (the judge is at least as aligned), and
//!    W^h_i = 1 if S(x_{h,i}, R_i) ≥ S(x_{J,i}, R_i) else 0; ties count for both.
//! 3. ρ^J_h = mean_i W^J_i and ρ^h_h = mean_i W^h_i. The test of H0: ρ^h_h − ρ^J_h ≥ ε against
//!    H1: ρ^h_h − ρ^J_h < ε is a one-sided one-sample t-test on d_i = W^h_i − W^J_i with
//!    t = (d̄ − ε) / (s_d/√n), s_d with n − 1 in the denominator, p = P(T_{n−1} ≤ t). ε is the
//!    cost-benefit allowance granted to the judge (0.2 suggested for expert annotators, 0.15 for
//!    skilled, 0.1 for crowd workers). With s_d = 0 the statistic is −∞, +∞ or undefined (p = 0,
//!    1, or undefined and never rejected), as scipy's `ttest_1samp` gives.
//! 4. The p-values of all tested annotators are corrected together by the Benjamini–Yekutieli
//!    procedure at level q = α (valid under any dependence): with p sorted ascending, reject the
//!    first k where k is the largest rank with p_(k) ≤ (k/m) · q / Σ_{j=1..m} 1/j.
//!    A rejected null means the judge "wins" against that annotator.
//! 5. Winning rate ω = (annotators won) / (annotators tested); the judge passes when ω ≥ 0.5.
//!    Advantage probability ρ = mean over tested annotators of ρ^J_h (the chance the judge is at
//!    least as aligned as a random annotator), for comparing judges.
//!
//! The paper asks for at least three human annotators: with two, leaving one out compares the
//! judge with a single person. Concord refuses fewer than three.

use crate::special::beta_tails;
use serde::Serialize;
use thiserror::Error;

/// How a label is compared with the remaining annotators' labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AlignmentMetric {
    /// Share of remaining annotators with the same label (categorical labels).
    Accuracy,
    /// Negative root mean squared difference from the remaining annotators (numeric scores).
    NegRmse,
}

/// Settings of the test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AltTestOptions {
    /// ε, the allowance granted to the judge.
    pub epsilon: f64,
    /// q of the Benjamini–Yekutieli procedure.
    pub alpha: f64,
    /// The alignment score.
    pub metric: AlignmentMetric,
    /// Items need at least this many human labels.
    pub min_humans_per_item: usize,
    /// Annotators with fewer kept items are not tested.
    pub min_items_per_human: usize,
}

impl Default for AltTestOptions {
    /// The paper's settings for expert annotators: ε = 0.2, q = 0.05, accuracy, 2 and 30.
    fn default() -> Self {
        Self {
            epsilon: 0.2,
            alpha: 0.05,
            metric: AlignmentMetric::Accuracy,
            min_humans_per_item: 2,
            min_items_per_human: 30,
        }
    }
}

/// The judge against one left-out annotator.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnnotatorOutcome {
    /// The annotator's column index.
    pub rater: usize,
    /// Items compared.
    pub n_items: usize,
    /// One-sided t-test p-value (`None` when undefined).
    pub p_value: Option<f64>,
    /// Whether the Benjamini–Yekutieli procedure rejects, i.e. the judge wins.
    pub won: bool,
    /// ρ^J: share of items where the judge is at least as aligned as the annotator.
    pub rho_judge: f64,
    /// ρ^h: share of items where the annotator is at least as aligned as the judge.
    pub rho_human: f64,
}

/// The test's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AltTestResult {
    /// ε used.
    pub epsilon: f64,
    /// q used.
    pub alpha: f64,
    /// ω, share of tested annotators the judge wins against.
    pub winning_rate: f64,
    /// ρ, mean of ρ^J over tested annotators.
    pub advantage_probability: f64,
    /// ω ≥ 0.5.
    pub passed: bool,
    /// One entry per tested annotator, in column order.
    pub annotators: Vec<AnnotatorOutcome>,
    /// Annotators not tested, with their number of kept items (fewer than the minimum).
    pub skipped: Vec<(usize, usize)>,
}

/// Input the test cannot use.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum AltTestError {
    /// The matrix shape does not match.
    #[error("the human labels hold {len} values, but {items} items × {annotators} annotators were declared")]
    Shape {
        /// Values given.
        len: usize,
        /// Items.
        items: usize,
        /// Annotators.
        annotators: usize,
    },
    /// Fewer than three human annotators.
    #[error("the alt-test needs at least 3 human annotators labelling the same items besides the judge (got {0})")]
    TooFewAnnotators(usize),
    /// No annotator has enough items shared with the judge and another annotator.
    #[error("no annotator has at least {min} items labelled also by the judge and another annotator (most: {most})")]
    TooFewItems {
        /// The minimum.
        min: usize,
        /// The largest count found.
        most: usize,
    },
    /// ε or α out of range.
    #[error(
        "epsilon must be in [0, 1) and alpha in (0, 1) (got epsilon {epsilon}, alpha {alpha})"
    )]
    BadOption {
        /// ε.
        epsilon: f64,
        /// α.
        alpha: f64,
    },
}

fn alignment(metric: AlignmentMetric, y: f64, others: &[f64]) -> f64 {
    let n = others.len() as f64;
    match metric {
        AlignmentMetric::Accuracy => others.iter().filter(|&&r| r == y).count() as f64 / n,
        AlignmentMetric::NegRmse => {
            -(others.iter().map(|r| (y - r) * (y - r)).sum::<f64>() / n).sqrt()
        }
    }
}

/// Lower-tail P(T_ν ≤ t) of Student's t.
fn t_cdf(t: f64, nu: f64) -> Option<f64> {
    if t.is_nan() {
        return None;
    }
    if t == f64::NEG_INFINITY {
        return Some(0.0);
    }
    if t == f64::INFINITY {
        return Some(1.0);
    }
    let x = nu / (nu + t * t);
    let (tail, _) = beta_tails(nu / 2.0, 0.5, x, t * t / (nu + t * t))?;
    Some(if t < 0.0 {
        0.5 * tail
    } else {
        1.0 - 0.5 * tail
    })
}

/// One-sided one-sample t-test of mean(d) < ε, as `scipy.stats.ttest_1samp(d, ε, alternative="less")`.
pub fn t_test_less(d: &[f64], epsilon: f64) -> Option<f64> {
    let n = d.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mean = d.iter().sum::<f64>() / nf;
    let var = d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (nf - 1.0);
    let diff = mean - epsilon;
    let t = if var == 0.0 {
        if diff < 0.0 {
            f64::NEG_INFINITY
        } else if diff > 0.0 {
            f64::INFINITY
        } else {
            f64::NAN
        }
    } else {
        diff / (var.sqrt() / nf.sqrt())
    };
    t_cdf(t, nf - 1.0)
}

/// The indices rejected by the Benjamini–Yekutieli procedure at level `q`; undefined p-values are
/// never rejected.
pub fn benjamini_yekutieli(p_values: &[Option<f64>], q: f64) -> Vec<usize> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| match (p_values[a], p_values[b]) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    let harmonic: f64 = (1..=m).map(|j| 1.0 / j as f64).sum();
    let mut last = None;
    for (rank, &i) in order.iter().enumerate() {
        let threshold = ((rank + 1) as f64 / m as f64) * (q / harmonic);
        if p_values[i].is_some_and(|p| p <= threshold) {
            last = Some(rank);
        }
    }
    match last {
        Some(k) => order[..=k].to_vec(),
        None => Vec::new(),
    }
}

/// Run the alt-test. `humans` is an items × annotators matrix (row-major, `None` = not labelled);
/// `judge` holds the judge's label per item. Labels are compared as numbers (categorical labels
/// by their code).
pub fn alt_test(
    humans: &[Option<f64>],
    n_items: usize,
    n_annotators: usize,
    judge: &[Option<f64>],
    options: &AltTestOptions,
) -> Result<AltTestResult, AltTestError> {
    if humans.len() != n_items * n_annotators || judge.len() != n_items {
        return Err(AltTestError::Shape {
            len: humans.len(),
            items: n_items,
            annotators: n_annotators,
        });
    }
    if !((0.0..1.0).contains(&options.epsilon) && options.alpha > 0.0 && options.alpha < 1.0) {
        return Err(AltTestError::BadOption {
            epsilon: options.epsilon,
            alpha: options.alpha,
        });
    }
    let row = |i: usize| &humans[i * n_annotators..(i + 1) * n_annotators];
    let active = (0..n_annotators)
        .filter(|&h| (0..n_items).any(|i| row(i)[h].is_some()))
        .count();
    if active < 3 {
        return Err(AltTestError::TooFewAnnotators(active));
    }
    let kept: Vec<usize> = (0..n_items)
        .filter(|&i| {
            judge[i].is_some()
                && row(i).iter().filter(|x| x.is_some()).count()
                    >= options.min_humans_per_item.max(2)
        })
        .collect();

    let mut tested: Vec<AnnotatorOutcome> = Vec::new();
    let mut p_values = Vec::new();
    let mut skipped = Vec::new();
    let mut others = Vec::with_capacity(n_annotators);
    let mut most = 0;
    for h in 0..n_annotators {
        let items: Vec<usize> = kept
            .iter()
            .copied()
            .filter(|&i| row(i)[h].is_some())
            .collect();
        most = most.max(items.len());
        if items.is_empty() {
            continue;
        }
        if items.len() < options.min_items_per_human {
            skipped.push((h, items.len()));
            continue;
        }
        let (mut w_judge, mut w_human) = (0usize, 0usize);
        let mut diffs = Vec::with_capacity(items.len());
        for &i in &items {
            let labels = row(i);
            let (x_h, x_j) = (labels[h].unwrap_or_default(), judge[i].unwrap_or_default());
            others.clear();
            others.extend(
                labels
                    .iter()
                    .enumerate()
                    .filter(|&(g, x)| g != h && x.is_some())
                    .filter_map(|(_, x)| *x),
            );
            let s_h = alignment(options.metric, x_h, &others);
            let s_j = alignment(options.metric, x_j, &others);
            let wj = u8::from(s_j >= s_h);
            let wh = u8::from(s_h >= s_j);
            w_judge += wj as usize;
            w_human += wh as usize;
            diffs.push(wh as f64 - wj as f64);
        }
        let n = items.len() as f64;
        p_values.push(t_test_less(&diffs, options.epsilon));
        tested.push(AnnotatorOutcome {
            rater: h,
            n_items: items.len(),
            p_value: *p_values.last().unwrap_or(&None),
            won: false,
            rho_judge: w_judge as f64 / n,
            rho_human: w_human as f64 / n,
        });
    }
    if tested.is_empty() {
        return Err(AltTestError::TooFewItems {
            min: options.min_items_per_human,
            most,
        });
    }
    for i in benjamini_yekutieli(&p_values, options.alpha) {
        tested[i].won = true;
    }
    let won = tested.iter().filter(|a| a.won).count();
    let winning_rate = won as f64 / tested.len() as f64;
    let advantage_probability =
        tested.iter().map(|a| a.rho_judge).sum::<f64>() / tested.len() as f64;
    Ok(AltTestResult {
        epsilon: options.epsilon,
        alpha: options.alpha,
        winning_rate,
        advantage_probability,
        passed: winning_rate >= 0.5,
        annotators: tested,
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_procedure_uses_the_harmonic_correction() {
        // m = 3, H = 1.8333; thresholds q/H · (1/3, 2/3, 1) = 0.00909, 0.01818, 0.02727.
        let rejected = benjamini_yekutieli(&[Some(0.02), Some(0.001), Some(0.5)], 0.05);
        assert_eq!(
            rejected,
            vec![1],
            "only 0.001 is below its BY threshold 0.00909"
        );
        let rejected = benjamini_yekutieli(&[Some(0.017), Some(0.001), Some(0.5)], 0.05);
        assert_eq!(
            rejected,
            vec![1, 0],
            "0.017 ≤ 0.01818 at rank 2 rejects both"
        );
        assert!(
            benjamini_yekutieli(&[None, Some(0.9)], 0.05).is_empty(),
            "undefined and large p-values are never rejected"
        );
    }

    #[test]
    fn t_test_matches_a_hand_computation() {
        // d = (0, 0, −1, 1, 0, −1): mean −1/6, s = √(4/15 − ...) computed by hand below.
        let d = [0.0, 0.0, -1.0, 1.0, 0.0, -1.0];
        let mean = -1.0 / 6.0;
        let var = d.iter().map(|x: &f64| (x - mean).powi(2)).sum::<f64>() / 5.0;
        let t = (mean - 0.2) / (var.sqrt() / 6f64.sqrt());
        let p = t_test_less(&d, 0.2).expect("defined");
        let expected = t_cdf(t, 5.0).unwrap();
        assert!(
            (p - expected).abs() < 1e-15,
            "the p-value is the t CDF at t"
        );
        assert!(
            p > 0.0 && p < 0.5,
            "a negative t gives a p-value below one half"
        );
        assert_eq!(
            t_test_less(&[0.0; 5], 0.2),
            Some(0.0),
            "constant d below ε: t = −∞, p = 0"
        );
    }
}
