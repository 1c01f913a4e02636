//! Judge calibration: is a judge right when it is confident?
//!
//! - **Expected score** from token log-probabilities: Σ p(s)·s over the scale's values s, with
//!   the probabilities of the score tokens the provider returned renormalised to sum to 1 (tokens
//!   that are not a scale value are left out) — [`expected_from_logprobs`]. Where no
//!   log-probabilities were returned, the k repetitions' frequencies stand in
//!   ([`expected_from_repetitions`]: the mean of the repetitions, i.e. Σ f(s)·s).
//! - **Binary criteria** ([`binary_calibration`]): the predicted probability that the dimension
//!   is present against the expert majority (0/1). Equal-width bins over [0, 1] (`n_bins`, 10 by
//!   default): bin b holds p in [b/B, (b + 1)/B), the last bin also p = 1. The reliability
//!   diagram is each non-empty bin's mean prediction and observed rate; the *expected calibration
//!   error* ECE = Σ_b (n_b / N)·|mean p_b − mean y_b| (Guo et al. 2017); the *Brier score* is
//!   mean (p − y)².

use serde::Serialize;

/// The expected score Σ p(s)·s from `(scale value, log-probability)` pairs of the score token's
/// alternatives. Pairs whose value is not in `scale` are ignored; the remaining probabilities are
/// renormalised. `None` when no alternative is a scale value.
pub fn expected_from_logprobs(alternatives: &[(f64, f64)], scale: &[f64]) -> Option<f64> {
    let mut mass = 0.0;
    let mut weighted = 0.0;
    for &(value, logprob) in alternatives {
        if !scale.contains(&value) || !logprob.is_finite() {
            continue;
        }
        let p = logprob.exp();
        mass += p;
        weighted += p * value;
    }
    (mass > 0.0).then(|| weighted / mass)
}

/// The frequency-weighted expected score of a response's repetitions (their mean).
pub fn expected_from_repetitions(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// One bin of the reliability diagram.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CalibrationBin {
    /// Lower edge (inclusive).
    pub lower: f64,
    /// Upper edge (exclusive, except 1 for the last bin).
    pub upper: f64,
    /// Predictions in the bin.
    pub n: usize,
    /// Their mean predicted probability (`None` when empty).
    pub mean_predicted: Option<f64>,
    /// The share of them the experts' majority marked present.
    pub observed_rate: Option<f64>,
}

/// Calibration of a binary judge against the expert majority.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BinaryCalibration {
    /// Pairs (prediction, expert majority) used.
    pub n: usize,
    /// Every bin, empty ones included, in order.
    pub bins: Vec<CalibrationBin>,
    /// Expected calibration error over equal-width bins.
    pub ece: Option<f64>,
    /// Brier score.
    pub brier: Option<f64>,
}

/// Reliability diagram, ECE and Brier score of predictions `p` (probability of 1) against
/// outcomes `y` (0 or 1), over `n_bins` equal-width bins (see the module docs). Pairs with a
/// prediction outside [0, 1] or a non-finite value are left out.
pub fn binary_calibration(p: &[f64], y: &[f64], n_bins: usize) -> BinaryCalibration {
    let n_bins = n_bins.max(1);
    let pairs: Vec<(f64, f64)> = p
        .iter()
        .zip(y)
        .map(|(&p, &y)| (p, y))
        .filter(|(p, y)| p.is_finite() && y.is_finite() && (0.0..=1.0).contains(p))
        .collect();
    let mut sums = vec![(0usize, 0.0f64, 0.0f64); n_bins];
    let mut brier = 0.0;
    for &(p, y) in &pairs {
        let b = ((p * n_bins as f64).floor() as usize).min(n_bins - 1);
        sums[b].0 += 1;
        sums[b].1 += p;
        sums[b].2 += y;
        brier += (p - y) * (p - y);
    }
    let n = pairs.len();
    let mut ece = 0.0;
    let bins = sums
        .iter()
        .enumerate()
        .map(|(b, &(count, sp, sy))| {
            let (mp, my) = if count > 0 {
                let c = count as f64;
                ece += (c / n as f64) * (sp / c - sy / c).abs();
                (Some(sp / c), Some(sy / c))
            } else {
                (None, None)
            };
            CalibrationBin {
                lower: b as f64 / n_bins as f64,
                upper: (b + 1) as f64 / n_bins as f64,
                n: count,
                mean_predicted: mp,
                observed_rate: my,
            }
        })
        .collect();
    BinaryCalibration {
        n,
        bins,
        ece: (n > 0).then_some(ece),
        brier: (n > 0).then(|| brier / n as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_score_renormalises_over_the_scale() {
        let alts = [(4.0, 0.5f64.ln()), (5.0, 0.25f64.ln()), (9.0, 0.25f64.ln())];
        let e = expected_from_logprobs(&alts, &[1.0, 2.0, 3.0, 4.0, 5.0]).expect("defined");
        assert!(
            (e - (4.0 * 2.0 / 3.0 + 5.0 / 3.0)).abs() < 1e-12,
            "9 is not on the scale, so 4 and 5 share the mass 2:1"
        );
        assert_eq!(
            expected_from_logprobs(&[(7.0, 0.0)], &[0.0, 1.0]),
            None,
            "no scale value among the alternatives"
        );
    }

    #[test]
    fn a_perfect_predictor_has_no_error() {
        let c = binary_calibration(&[0.0, 1.0, 1.0, 0.0], &[0.0, 1.0, 1.0, 0.0], 10);
        assert_eq!(c.ece, Some(0.0), "certain and right: no calibration error");
        assert_eq!(c.brier, Some(0.0), "certain and right: Brier 0");
        assert_eq!(c.bins[9].n, 2, "p = 1 falls in the last bin");
    }
}
