//! Prediction-powered inference for a mean (PPI++, Angelopoulos, Duchi & Zrnic 2023, "PPI++:
//! Efficient Prediction-Powered Inference"): many cheap judge scores and a few expert ratings give
//! a bias-corrected mean with a valid confidence interval.
//!
//! # Definitions (as the `ppi-python` package's `ppi_mean_pointestimate` / `ppi_mean_ci` with
//! `lam=None`)
//! n labelled items carry an expert rating Y_i and a judge score Ŷ_i; N unlabelled items carry only
//! a judge score Ŷ^u_j. With the power-tuning weight λ,
//! - estimate θ̂_λ = λ · mean(Ŷ^u) + mean(Y − λ Ŷ);
//! - λ̂ = Cov_n(Y, Ŷ) / ((1 + n/N) · Var(Ŷ ∪ Ŷ^u)), clipped to [0, 1], where Cov_n divides by n
//!   (over the labelled pairs) and Var divides by n + N − 1 (over all n + N judge scores). λ = 0 is
//!   the classical expert-only mean, λ = 1 the original PPI;
//! - standard error s = √(Var_N(λ Ŷ^u)/N + Var_n(Y − λ Ŷ)/n) with variances dividing by N and n;
//! - interval θ̂ ± z_{1−α/2} · s (normal approximation).
//!
//! The classical interval beside it is mean(Y) ± z_{1−α/2} · SD_n(Y)/√n (`classical_mean_ci`,
//! SD dividing by n). The judge's bias on the labelled items is mean(Ŷ − Y).

use crate::special::z_critical;
use serde::Serialize;

/// A PPI++ mean with its classical counterpart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PpiMean {
    /// Items with an expert rating (and a judge score).
    pub n_labeled: usize,
    /// Items with a judge score only.
    pub n_unlabeled: usize,
    /// θ̂_λ; `None` without labelled or unlabelled items.
    pub estimate: Option<f64>,
    /// (1 − α) interval of θ̂_λ.
    pub ci: [Option<f64>; 2],
    /// The power-tuning λ̂ used.
    pub lambda: Option<f64>,
    /// Expert-only mean.
    pub classical_estimate: Option<f64>,
    /// Expert-only (1 − α) interval.
    pub classical_ci: [Option<f64>; 2],
    /// Judge-only mean over every judge score (labelled and unlabelled).
    pub judge_estimate: Option<f64>,
    /// Mean judge − expert difference on the labelled items.
    pub judge_bias: Option<f64>,
}

fn mean(x: impl Iterator<Item = f64> + Clone) -> f64 {
    let (s, n) = x.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    s / n as f64
}

/// Variance dividing by `len − ddof`.
fn var(x: impl Iterator<Item = f64> + Clone, ddof: f64) -> f64 {
    let m = mean(x.clone());
    let (ss, n) = x.fold((0.0, 0usize), |(s, n), v| (s + (v - m) * (v - m), n + 1));
    ss / (n as f64 - ddof)
}

/// PPI++ mean and (1 − `alpha`) interval from expert ratings `expert` with their judge scores
/// `judge_labeled` (same length) and the judge scores `judge_unlabeled` of unrated items.
pub fn ppi_mean(
    expert: &[f64],
    judge_labeled: &[f64],
    judge_unlabeled: &[f64],
    alpha: f64,
) -> PpiMean {
    let n = expert.len().min(judge_labeled.len());
    let big_n = judge_unlabeled.len();
    let (y, yh, yu) = (&expert[..n], &judge_labeled[..n], judge_unlabeled);
    let z = z_critical(alpha);
    let nf = n as f64;
    let classical_estimate = (n > 0).then(|| mean(y.iter().copied()));
    let classical_ci = match classical_estimate {
        Some(m) if n > 0 => {
            let se = var(y.iter().copied(), 0.0).sqrt() / nf.sqrt();
            [Some(m - z * se), Some(m + z * se)]
        }
        _ => [None, None],
    };
    let judge_estimate = (n + big_n > 0).then(|| mean(yh.iter().chain(yu.iter()).copied()));
    let judge_bias = (n > 0).then(|| mean(yh.iter().zip(y).map(|(h, e)| h - e)));
    let mut out = PpiMean {
        n_labeled: n,
        n_unlabeled: big_n,
        estimate: None,
        ci: [None, None],
        lambda: None,
        classical_estimate,
        classical_ci,
        judge_estimate,
        judge_bias,
    };
    if n == 0 || big_n == 0 {
        return out;
    }
    let bn = big_n as f64;
    let (my, mh) = (mean(y.iter().copied()), mean(yh.iter().copied()));
    let cov = y
        .iter()
        .zip(yh)
        .map(|(a, b)| (a - my) * (b - mh))
        .sum::<f64>()
        / nf;
    let var_all = var(yh.iter().chain(yu.iter()).copied(), 1.0);
    let raw = cov / ((1.0 + nf / bn) * var_all);
    let lambda = if raw.is_nan() {
        0.0
    } else {
        raw.clamp(0.0, 1.0)
    };
    let estimate =
        lambda * mean(yu.iter().copied()) + mean(y.iter().zip(yh).map(|(a, b)| a - lambda * b));
    let imputed = var(yu.iter().map(|v| lambda * v), 0.0) / bn;
    let rectifier = var(y.iter().zip(yh).map(|(a, b)| a - lambda * b), 0.0) / nf;
    let se = (imputed + rectifier).sqrt();
    out.estimate = Some(estimate);
    out.ci = [Some(estimate - z * se), Some(estimate + z * se)];
    out.lambda = Some(lambda);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_perfect_judge_narrows_the_interval() {
        let expert = [1.0, 2.0, 3.0, 4.0, 5.0, 3.0];
        let unlabeled: Vec<f64> = (0..200).map(|i| (i % 5 + 1) as f64).collect();
        let r = ppi_mean(&expert, &expert, &unlabeled, 0.05);
        let lambda = r.lambda.expect("defined with both parts");
        assert!(
            lambda > 0.5,
            "a judge equal to the experts earns a large λ (Cov/((1 + n/N) Var) ≈ 0.81 here), got {lambda}"
        );
        let width = r.ci[1].unwrap() - r.ci[0].unwrap();
        let classical = r.classical_ci[1].unwrap() - r.classical_ci[0].unwrap();
        assert!(
            width < classical,
            "PPI++ is narrower than expert-only ({width} vs {classical})"
        );
        assert_eq!(
            r.judge_bias,
            Some(0.0),
            "no bias when the judge equals the experts"
        );
    }

    #[test]
    fn an_uninformative_judge_falls_back_to_the_classical_mean() {
        let expert = [1.0, 2.0, 3.0, 4.0];
        let judge = [4.0, 3.0, 2.0, 1.0]; // negatively correlated: λ clipped to 0
        let r = ppi_mean(&expert, &judge, &[5.0, 5.0], 0.05);
        assert_eq!(r.lambda, Some(0.0), "negative covariance clips λ to 0");
        assert_eq!(
            r.estimate, r.classical_estimate,
            "λ = 0 is the classical mean"
        );
    }
}
