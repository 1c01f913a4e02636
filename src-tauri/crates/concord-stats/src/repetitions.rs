//! A judge's repetitions as data: how repeated scores of one response on one criterion become
//! one score ([`RepetitionAggregate`]), how consistent a judge is with itself across repetitions
//! ([`self_consistency`]) and how many repetitions its agreement with the experts needs
//! ([`repetitions_needed`]).
//!
//! # Conventions
//!
//! - **Aggregates.** `median` (the default): the middle value, or the mean of the two middle
//!   values for an even count (numpy's `median`); `mean`: the arithmetic mean; `mode`: the most
//!   frequent value, ties going to the *lowest* tied value (a conservative, deterministic choice;
//!   `scipy.stats.mode` breaks ties the same way). Every aggregate of one value is that value, so a
//!   single-repetition run scores exactly as before.
//! - **Self-consistency** treats each response as a unit and its repetitions as exchangeable
//!   coders: Krippendorff's α (interval metric for a 1–5 scale, nominal for a binary one; the
//!   coincidence-matrix definition of the `krippendorff` package), with a percentile bootstrap
//!   over responses (seeded by the caller's generator); *exact agreement* is the share of
//!   agreeing repetition pairs averaged over responses with at least two repetitions (Fleiss'
//!   P̄); the *within-response SD* is the sample SD (n − 1) of a response's repetitions, averaged
//!   over responses with at least two.
//! - **Repetitions needed.** On the responses that have every repetition 1…K and an expert mean,
//!   the judge–expert ICC(A,1) (two-way random, absolute agreement, single rater; targets =
//!   responses, raters = the expert mean and the judge's aggregate of repetitions 1…k) is
//!   *observed* for each k. Beside it the *Spearman–Brown prediction*: with ρ₁ the one-way
//!   ICC(1,1) of the judge's K repetitions (its single-repetition reliability) the reliability of a
//!   k-aggregate is ρₖ = kρ₁ / (1 + (k − 1)ρ₁), and the judge–expert agreement of the k-aggregate
//!   is predicted by the attenuation step-up ICCₖ = ICC₁ · √(ρₖ / ρ₁) (the expert side held
//!   fixed). The prediction assumes the mean; a median or mode of few repetitions is not linear,
//!   which is why the observed column is there. The repetitions a *target* reliability needs
//!   ([`repetitions_for_reliability`]) invert the same step-up: the smallest k with ρₖ ≥ target.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bootstrap::{BootstrapInterval, BootstrapOptions};
use crate::categorical::{self, AlphaMetric, CategoricalRatings};
use crate::icc::{icc_all, IccForm};

/// How a judge's repetitions of one response × criterion become its score (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum RepetitionAggregate {
    /// The middle value (mean of the two middle ones for an even count).
    #[default]
    Median,
    /// The arithmetic mean.
    Mean,
    /// The most frequent value, ties to the lowest.
    Mode,
}

impl RepetitionAggregate {
    /// All aggregates, default first.
    pub const ALL: [RepetitionAggregate; 3] = [
        RepetitionAggregate::Median,
        RepetitionAggregate::Mean,
        RepetitionAggregate::Mode,
    ];

    /// The word used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RepetitionAggregate::Median => "median",
            RepetitionAggregate::Mean => "mean",
            RepetitionAggregate::Mode => "mode",
        }
    }

    /// `median`, `mean` or `mode`.
    pub fn parse(word: &str) -> Option<RepetitionAggregate> {
        Self::ALL.into_iter().find(|a| a.as_str() == word)
    }

    /// The aggregate of `values` (non-finite values ignored); `None` when none is left.
    pub fn of(self, values: &[f64]) -> Option<f64> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        Some(match self {
            RepetitionAggregate::Median => {
                if n % 2 == 1 {
                    v[n / 2]
                } else {
                    (v[n / 2 - 1] + v[n / 2]) / 2.0
                }
            }
            RepetitionAggregate::Mean => v.iter().sum::<f64>() / n as f64,
            RepetitionAggregate::Mode => {
                // Sorted, so the first run of the greatest length is the lowest tied value.
                let (mut best, mut best_len) = (v[0], 0usize);
                let mut i = 0;
                while i < n {
                    let mut j = i;
                    while j < n && v[j] == v[i] {
                        j += 1;
                    }
                    if j - i > best_len {
                        best = v[i];
                        best_len = j - i;
                    }
                    i = j;
                }
                best
            }
        })
    }
}

/// Which Krippendorff metric a scale's self-consistency uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleKind {
    /// An ordered numeric scale (1–5): interval metric.
    Likert,
    /// Present/absent (0/1): nominal metric.
    Binary,
}

/// How consistent a judge is with itself across repetitions (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SelfConsistency {
    /// Responses with at least two repetitions.
    pub n_responses: usize,
    /// `interval` or `nominal`.
    pub alpha_metric: &'static str,
    /// Krippendorff's α across repetitions.
    pub alpha: Option<f64>,
    /// Percentile bootstrap 95% interval of α over responses.
    pub alpha_ci95: [Option<f64>; 2],
    /// Share of agreeing repetition pairs, averaged over responses (Fleiss' P̄).
    pub exact_agreement: Option<f64>,
    /// Mean over responses of the sample SD of their repetitions.
    pub mean_within_sd: Option<f64>,
}

/// Self-consistency of one judge × criterion. `rows[i][r]` is repetition r + 1 of response i
/// (`None` when it failed or is missing); `categories` are the scale's values (1…5 or 0, 1).
pub fn self_consistency<R: Rng + ?Sized>(
    rows: &[Vec<Option<f64>>],
    categories: &[f64],
    kind: ScaleKind,
    bootstrap: &BootstrapOptions,
    rng: &mut R,
) -> SelfConsistency {
    let metric = match kind {
        ScaleKind::Likert => AlphaMetric::Interval,
        ScaleKind::Binary => AlphaMetric::Nominal,
    };
    let metric_name = match kind {
        ScaleKind::Likert => "interval",
        ScaleKind::Binary => "nominal",
    };
    // Only values on the scale take part (a value off the scale cannot be a category).
    let on_scale: Vec<Vec<Option<f64>>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| v.filter(|x| categories.contains(x)))
                .collect()
        })
        .filter(|r: &Vec<Option<f64>>| r.iter().flatten().count() >= 2)
        .collect();
    let n = on_scale.len();
    let mut sds = Vec::new();
    for r in &on_scale {
        let v: Vec<f64> = r.iter().flatten().copied().collect();
        let m = v.iter().sum::<f64>() / v.len() as f64;
        let ss: f64 = v.iter().map(|x| (x - m) * (x - m)).sum();
        sds.push((ss / (v.len() as f64 - 1.0)).sqrt());
    }
    let mean_within_sd = (!sds.is_empty()).then(|| sds.iter().sum::<f64>() / sds.len() as f64);
    let ratings = CategoricalRatings::from_values(categories, &on_scale).ok();
    let (alpha, ci, agreement) = match (&ratings, n) {
        (Some(r), n) if n > 0 => {
            let interval: Option<BootstrapInterval> =
                categorical::krippendorff_alpha_bootstrap(r, metric, bootstrap, rng);
            (
                categorical::krippendorff_alpha(r, metric),
                interval.map_or([None, None], |i| [i.lower, i.upper]),
                categorical::percent_agreement(r),
            )
        }
        _ => (None, [None, None], None),
    };
    SelfConsistency {
        n_responses: n,
        alpha_metric: metric_name,
        alpha,
        alpha_ci95: ci,
        exact_agreement: agreement,
        mean_within_sd,
    }
}

/// One row of the repetitions-needed table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RepetitionsNeededRow {
    /// Repetitions aggregated (1…K).
    pub k: usize,
    /// Responses in the comparison (the same for every k).
    pub n_responses: usize,
    /// Observed judge–expert ICC(A,1) of the aggregate of repetitions 1…k.
    pub icc_a1: Option<f64>,
    /// Its McGraw & Wong 95% interval.
    pub icc_a1_ci95: [Option<f64>; 2],
    /// Spearman–Brown reliability of a k-aggregate, ρₖ = kρ₁ / (1 + (k − 1)ρ₁).
    pub predicted_reliability: Option<f64>,
    /// Predicted judge–expert ICC(A,1): ICC₁ · √(ρₖ / ρ₁).
    pub predicted_icc_a1: Option<f64>,
}

/// The repetitions-needed table and the single-repetition reliability it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RepetitionsNeeded {
    /// ρ₁: the one-way ICC(1,1) of the judge's K repetitions on the complete responses.
    pub single_repetition_reliability: Option<f64>,
    /// One row per k = 1…K.
    pub rows: Vec<RepetitionsNeededRow>,
}

/// Spearman–Brown: the reliability of the mean of `k` parallel measurements of reliability `rho`.
pub fn spearman_brown(rho: f64, k: f64) -> Option<f64> {
    let denominator = 1.0 + (k - 1.0) * rho;
    (denominator != 0.0 && rho.is_finite()).then(|| k * rho / denominator)
}

/// How far below the target a Spearman–Brown step-up may fall from rounding alone and still
/// count as reaching it (documented in the methods appendix; the recompute script uses the same).
pub const REACHES_TOLERANCE: f64 = 1e-9;

/// The fewest repetitions whose aggregate reaches the reliability `target` by Spearman–Brown
/// from the single-repetition reliability `rho1`: the smallest k ≥ 1 with
/// kρ₁ / (1 + (k − 1)ρ₁) ≥ target, i.e. k = ⌈target(1 − ρ₁) / (ρ₁(1 − target))⌉ (1 when ρ₁
/// already reaches it). `None` when no number of repetitions does (ρ₁ ≤ 0), when `target` is
/// not in (0, 1), or when more than a million would be needed. A step-up within
/// [`REACHES_TOLERANCE`] below the target counts as reaching it, so a boundary that is exact in
/// rationals (ρ₁ = 4/7 reaches 0.8 at k = 3) is not lost to the last bit of a float.
pub fn repetitions_for_reliability(rho1: f64, target: f64) -> Option<usize> {
    const MOST: f64 = 1e6;
    let reaches = |r: f64| r >= target - REACHES_TOLERANCE;
    if !(rho1.is_finite() && target > 0.0 && target < 1.0) || rho1 <= 0.0 {
        return None;
    }
    if reaches(rho1) {
        return Some(1);
    }
    let exact = target * (1.0 - rho1) / (rho1 * (1.0 - target));
    if exact > MOST {
        return None;
    }
    // The closed form up to rounding: step to the first k whose step-up reaches the target.
    let mut k = (exact.ceil() as usize).max(1);
    while k > 1 && spearman_brown(rho1, (k - 1) as f64).is_some_and(reaches) {
        k -= 1;
    }
    while spearman_brown(rho1, k as f64).is_some_and(|r| !reaches(r)) {
        k += 1;
    }
    Some(k)
}

/// The repetitions-needed table (see the module docs). `rows[i][r]` is repetition r + 1 of
/// response i and `expert_mean[i]` the experts' mean score of response i (`None` when unrated);
/// `repetitions` is K.
pub fn repetitions_needed(
    rows: &[Vec<Option<f64>>],
    expert_mean: &[Option<f64>],
    repetitions: usize,
    aggregate: RepetitionAggregate,
) -> RepetitionsNeeded {
    let complete: Vec<(Vec<f64>, f64)> = rows
        .iter()
        .zip(expert_mean)
        .filter_map(|(r, e)| {
            let e = e.filter(|x| x.is_finite())?;
            let reps: Option<Vec<f64>> = (0..repetitions)
                .map(|i| r.get(i).copied().flatten().filter(|x| x.is_finite()))
                .collect();
            Some((reps?, e))
        })
        .collect();
    let n = complete.len();
    let rho1 = if repetitions >= 2 && n >= 2 {
        let matrix: Vec<f64> = complete.iter().flat_map(|(r, _)| r.clone()).collect();
        icc_all(&matrix, n, repetitions)
            .ok()
            .and_then(|t| t.get(IccForm::Icc1).value)
    } else {
        None
    };
    let mut out = Vec::with_capacity(repetitions);
    let mut icc1 = None;
    for k in 1..=repetitions {
        let matrix: Vec<f64> = complete
            .iter()
            .flat_map(|(r, e)| [*e, aggregate.of(&r[..k]).unwrap_or(f64::NAN)])
            .collect();
        let est = if n >= 2 {
            icc_all(&matrix, n, 2)
                .ok()
                .map(|t| t.get(IccForm::Icc2).clone())
        } else {
            None
        };
        let (icc, ci) = est.map_or((None, [None, None]), |e| (e.value, e.ci95));
        if k == 1 {
            icc1 = icc;
        }
        let rho_k = rho1.and_then(|r| spearman_brown(r, k as f64));
        let predicted = match (icc1, rho1, rho_k) {
            (Some(i1), Some(r1), Some(rk)) if r1 > 0.0 && rk >= 0.0 => Some(i1 * (rk / r1).sqrt()),
            _ => None,
        };
        out.push(RepetitionsNeededRow {
            k,
            n_responses: n,
            icc_a1: icc,
            icc_a1_ci95: ci,
            predicted_reliability: rho_k,
            predicted_icc_a1: predicted,
        });
    }
    RepetitionsNeeded {
        single_repetition_reliability: rho1,
        rows: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn aggregates_of_one_value_are_that_value() {
        for a in RepetitionAggregate::ALL {
            assert_eq!(
                a.of(&[4.0]),
                Some(4.0),
                "{a:?} of a single repetition must leave a single-repetition run unchanged"
            );
            assert_eq!(a.of(&[]), None, "{a:?} of nothing is undefined");
        }
    }

    #[test]
    fn aggregates_follow_their_documented_rules() {
        let m = RepetitionAggregate::Median;
        assert_eq!(m.of(&[5.0, 1.0, 4.0]), Some(4.0), "median of 1, 4, 5");
        assert_eq!(
            m.of(&[2.0, 5.0]),
            Some(3.5),
            "even count: mean of the middle two"
        );
        assert_eq!(
            RepetitionAggregate::Mean.of(&[1.0, 2.0, 4.0]),
            Some(7.0 / 3.0),
            "arithmetic mean"
        );
        assert_eq!(
            RepetitionAggregate::Mode.of(&[3.0, 5.0, 5.0, 3.0, 4.0]),
            Some(3.0),
            "a tie between 3 and 5 goes to the lower value"
        );
        assert_eq!(
            RepetitionAggregate::Mode.of(&[2.0, 4.0, 4.0]),
            Some(4.0),
            "the most frequent value"
        );
        assert_eq!(
            RepetitionAggregate::parse("mode"),
            Some(RepetitionAggregate::Mode),
            "words parse"
        );
        assert_eq!(
            RepetitionAggregate::parse("first"),
            None,
            "unknown words are refused"
        );
    }

    #[test]
    fn a_judge_that_never_changes_its_mind_is_fully_consistent() {
        let rows: Vec<Vec<Option<f64>>> =
            (0..6).map(|i| vec![Some((i % 5 + 1) as f64); 3]).collect();
        let c = self_consistency(
            &rows,
            &[1.0, 2.0, 3.0, 4.0, 5.0],
            ScaleKind::Likert,
            &BootstrapOptions::default(),
            &mut ChaCha8Rng::seed_from_u64(1),
        );
        assert_eq!(c.alpha, Some(1.0), "identical repetitions give α = 1");
        assert_eq!(c.exact_agreement, Some(1.0), "every pair agrees");
        assert_eq!(c.mean_within_sd, Some(0.0), "no spread within a response");
    }

    #[test]
    fn the_repetitions_for_a_target_are_the_first_k_that_reach_it() {
        // ρ₁ = 0.5, target 0.8: k = 0.8·0.5 / (0.5·0.2) = 4 exactly, and ρ₄ = 0.8.
        assert_eq!(
            repetitions_for_reliability(0.5, 0.8),
            Some(4),
            "the prophecy formula's exact integer is enough"
        );
        // ρ₁ = 0.4, target 0.8: 0.8·0.6 / (0.4·0.2) = 6; ρ₅ = 2/2.6 < 0.8 ≤ ρ₆.
        assert_eq!(
            repetitions_for_reliability(0.4, 0.8),
            Some(6),
            "ρ₅ falls short"
        );
        // ρ₁ = 4/7: ρ₃ = (12/7)/(15/7) = 0.8 exactly, which floats compute as 0.7999999999999999.
        assert_eq!(
            repetitions_for_reliability(4.0 / 7.0, 0.8),
            Some(3),
            "a boundary exact in rationals is reached, not lost to rounding"
        );
        // ρ₁ = 0.45: 0.8·0.55/(0.45·0.2) = 4.89 → 5.
        let k = repetitions_for_reliability(0.45, 0.8).expect("reachable");
        assert_eq!(k, 5, "the closed form rounded up");
        assert!(
            spearman_brown(0.45, 5.0).unwrap() >= 0.8 && spearman_brown(0.45, 4.0).unwrap() < 0.8,
            "five reach the target and four do not"
        );
        assert_eq!(
            repetitions_for_reliability(0.9, 0.8),
            Some(1),
            "a judge already reliable enough needs one repetition"
        );
        assert_eq!(
            repetitions_for_reliability(0.0, 0.8),
            None,
            "no number of unreliable repetitions reaches the target"
        );
        assert_eq!(
            repetitions_for_reliability(-0.2, 0.8),
            None,
            "nor of negatively reliable ones"
        );
        assert_eq!(
            repetitions_for_reliability(0.5, 1.0),
            None,
            "a target of 1 is never reached"
        );
    }

    #[test]
    fn spearman_brown_steps_up() {
        let r = spearman_brown(0.5, 3.0).expect("defined");
        assert!((r - 0.75).abs() < 1e-12, "3·0.5/(1 + 2·0.5) = 0.75");
    }
}
