//! Paired continuous comparison of two raters (a versus b) over the same targets: bias and the
//! Bland–Altman limits of agreement with their approximate confidence intervals, error measures,
//! and the correlation family (Pearson r, Spearman ρ with average ranks, Kendall τ-b by Knight's
//! O(n log n) algorithm) plus Lin's concordance correlation coefficient.
//!
//! Conventions:
//! - Limits of agreement are bias ± 1.96·SD of the differences (SD with n − 1), as in Bland &
//!   Altman (1986).
//! - Their 95% CIs use the approximate standard error of Bland & Altman (1999, section 4.2),
//!   SE(limit) ≈ √(3 s² / n), with the Student t quantile on n − 1 df; the bias CI uses s/√n.
//! - Lin's CCC uses population (1/n) variances and covariance, as in Lin (1989):
//!   ρc = 2 s_ab / (s_a² + s_b² + (ā − b̄)²).
//! - Kendall's τ-b is the tie-corrected variant, τ-b = (C − D) / √((n₀ − n₁)(n₀ − n₂)), which is
//!   scipy's default; it is not τ-a nor Stuart's τ-c.

use serde::Serialize;
use thiserror::Error;

use crate::special::t_critical;

/// Multiplier of the SD for the limits of agreement.
pub const LOA_Z: f64 = 1.96;

/// Everything Concord reports for a paired comparison; `None` where undefined
/// (e.g. correlations when one side is constant, SDs with n < 2).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedComparison {
    /// Number of complete pairs.
    pub n: usize,
    /// Mean of a − b.
    pub bias: Option<f64>,
    /// 95% CI of the bias (t on n − 1 df).
    pub bias_ci95: [Option<f64>; 2],
    /// Sample SD (n − 1) of a − b.
    pub sd_diff: Option<f64>,
    /// Bland–Altman 95% limits of agreement [bias − 1.96 s, bias + 1.96 s].
    pub loa95: [Option<f64>; 2],
    /// 95% CI of the lower limit (Bland & Altman 1999 approximation).
    pub loa_lower_ci95: [Option<f64>; 2],
    /// 95% CI of the upper limit.
    pub loa_upper_ci95: [Option<f64>; 2],
    /// Mean squared difference.
    pub mse: Option<f64>,
    /// Root mean squared difference.
    pub rmse: Option<f64>,
    /// Mean absolute difference.
    pub mae: Option<f64>,
    /// Pearson product-moment correlation.
    pub pearson: Option<f64>,
    /// Spearman rank correlation (average ranks for ties).
    pub spearman: Option<f64>,
    /// Kendall τ-b (tie-corrected).
    pub kendall_tau_b: Option<f64>,
    /// Lin's concordance correlation coefficient (population variances).
    pub lin_ccc: Option<f64>,
}

/// Bias (mean of a − b) and mean squared difference, accumulated one pair at a time so a caller
/// that walks its pairs once (the agreement engine) needs no copy of them. `None` without pairs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MeanDifference {
    n: usize,
    sum: f64,
    sum_sq: f64,
}

impl MeanDifference {
    /// Add the pair (a, b): its difference a − b.
    pub fn add(&mut self, a: f64, b: f64) {
        let d = a - b;
        self.n += 1;
        self.sum += d;
        self.sum_sq += d * d;
    }

    /// Pairs added.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Mean of a − b.
    pub fn bias(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    /// Mean of (a − b)².
    pub fn mse(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum_sq / self.n as f64)
    }
}

impl FromIterator<(f64, f64)> for MeanDifference {
    fn from_iter<I: IntoIterator<Item = (f64, f64)>>(pairs: I) -> Self {
        let mut m = MeanDifference::default();
        for (a, b) in pairs {
            m.add(a, b);
        }
        m
    }
}

/// Malformed paired input.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PairedError {
    /// The two sides differ in length.
    #[error("paired series differ in length: {a} versus {b}")]
    LengthMismatch {
        /// Length of a.
        a: usize,
        /// Length of b.
        b: usize,
    },
    /// A value is NaN or infinite.
    #[error("pair {index} holds a value that is not a finite number")]
    NonFinite {
        /// 0-based pair index.
        index: usize,
    },
}

fn defined(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Pearson correlation; `None` when n < 2 or either side is constant.
pub fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    let (ma, mb) = (mean(a), mean(b));
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        let (dx, dy) = (x - ma, y - mb);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    if saa <= 0.0 || sbb <= 0.0 {
        return None;
    }
    defined((sab / (saa.sqrt() * sbb.sqrt())).clamp(-1.0, 1.0))
}

/// Ranks 1..n with ties given their average rank (the "average" method of scipy.stats.rankdata).
pub fn average_ranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
    let mut ranks = vec![0.0; x.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && x[order[end]] == x[order[start]] {
            end += 1;
        }
        // Positions start..end (0-based) share the mean of ranks start+1..=end.
        let rank = (start + end + 1) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        start = end;
    }
    ranks
}

/// Spearman ρ: Pearson correlation of average ranks.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    pearson(&average_ranks(a), &average_ranks(b))
}

/// Number of tied pairs Σ t(t − 1)/2 over runs of equal values in a sorted slice.
fn tied_pairs<T: PartialEq>(sorted: &[T]) -> u64 {
    let mut total = 0u64;
    let mut run = 1u64;
    for w in sorted.windows(2) {
        if w[0] == w[1] {
            run += 1;
        } else {
            total += run * (run - 1) / 2;
            run = 1;
        }
    }
    if !sorted.is_empty() {
        total += run * (run - 1) / 2;
    }
    total
}

/// Merge sort of `v` counting the number of swaps (discordant inversions), reusing `buf`.
fn sort_counting_swaps(v: &mut [f64], buf: &mut [f64]) -> u64 {
    let n = v.len();
    if n < 2 {
        return 0;
    }
    let mid = n / 2;
    let mut swaps = {
        let (left, right) = v.split_at_mut(mid);
        let (bl, br) = buf.split_at_mut(mid);
        sort_counting_swaps(left, bl) + sort_counting_swaps(right, br)
    };
    let (mut i, mut j, mut out) = (0, mid, 0);
    while i < mid && j < n {
        if v[j] < v[i] {
            buf[out] = v[j];
            swaps += (mid - i) as u64;
            j += 1;
        } else {
            buf[out] = v[i];
            i += 1;
        }
        out += 1;
    }
    buf[out..out + (mid - i)].copy_from_slice(&v[i..mid]);
    out += mid - i;
    buf[out..out + (n - j)].copy_from_slice(&v[j..n]);
    v.copy_from_slice(&buf[..n]);
    swaps
}

/// Kendall τ-b by Knight's (1966) O(n log n) algorithm: sort by (a, b), count ties in a and in
/// (a, b) jointly, merge-sort b counting swaps, then count ties in b.
pub fn kendall_tau_b(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len();
    if n != b.len() || n < 2 {
        return None;
    }
    let mut pairs: Vec<(f64, f64)> = a.iter().copied().zip(b.iter().copied()).collect();
    pairs.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.total_cmp(&q.1)));
    let n0 = (n as u64) * (n as u64 - 1) / 2;
    let ties_a = {
        let xs: Vec<f64> = pairs.iter().map(|p| p.0).collect();
        tied_pairs(&xs)
    };
    let ties_joint = tied_pairs(&pairs);
    let mut ys: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let mut buf = vec![0.0; n];
    let swaps = sort_counting_swaps(&mut ys, &mut buf);
    let ties_b = tied_pairs(&ys);
    // Concordant − discordant = n0 − n1 − n2 + n3 − 2·swaps.
    let con_minus_dis =
        n0 as f64 - ties_a as f64 - ties_b as f64 + ties_joint as f64 - 2.0 * swaps as f64;
    let denom = ((n0 - ties_a) as f64).sqrt() * ((n0 - ties_b) as f64).sqrt();
    if denom == 0.0 {
        return None;
    }
    defined((con_minus_dis / denom).clamp(-1.0, 1.0))
}

/// Lin's (1989) concordance correlation coefficient with population (1/n) moments.
pub fn lin_ccc(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len();
    if n != b.len() || n < 2 {
        return None;
    }
    let nf = n as f64;
    let (ma, mb) = (mean(a), mean(b));
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        let (dx, dy) = (x - ma, y - mb);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    let denom = saa / nf + sbb / nf + (ma - mb) * (ma - mb);
    if denom <= 0.0 {
        return None;
    }
    defined(2.0 * (sab / nf) / denom)
}

/// Paired data must have equal lengths and finite values.
pub(crate) fn check_pairs(a: &[f64], b: &[f64]) -> Result<(), PairedError> {
    if a.len() != b.len() {
        return Err(PairedError::LengthMismatch {
            a: a.len(),
            b: b.len(),
        });
    }
    if let Some(index) = a
        .iter()
        .zip(b)
        .position(|(x, y)| !x.is_finite() || !y.is_finite())
    {
        return Err(PairedError::NonFinite { index });
    }
    Ok(())
}

/// The full paired comparison of a versus b (same length, finite values).
pub fn compare(a: &[f64], b: &[f64]) -> Result<PairedComparison, PairedError> {
    check_pairs(a, b)?;
    let n = a.len();
    let nf = n as f64;
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let moments: MeanDifference = a.iter().copied().zip(b.iter().copied()).collect();
    let bias = moments.bias();
    let mse = moments.mse();
    let mae = (n > 0).then(|| diffs.iter().map(|d| d.abs()).sum::<f64>() / nf);
    let sd_diff = match bias {
        Some(m) if n >= 2 => {
            defined((diffs.iter().map(|d| (d - m) * (d - m)).sum::<f64>() / (nf - 1.0)).sqrt())
        }
        _ => None,
    };
    let t = if n >= 2 {
        t_critical(0.05, nf - 1.0)
    } else {
        None
    };
    let (mut bias_ci95, mut loa95, mut loa_lower_ci95, mut loa_upper_ci95) =
        ([None; 2], [None; 2], [None; 2], [None; 2]);
    if let (Some(m), Some(s)) = (bias, sd_diff) {
        let lo = m - LOA_Z * s;
        let hi = m + LOA_Z * s;
        loa95 = [Some(lo), Some(hi)];
        if let Some(t) = t {
            let se_bias = s / nf.sqrt();
            let se_limit = (3.0 * s * s / nf).sqrt();
            bias_ci95 = [Some(m - t * se_bias), Some(m + t * se_bias)];
            loa_lower_ci95 = [Some(lo - t * se_limit), Some(lo + t * se_limit)];
            loa_upper_ci95 = [Some(hi - t * se_limit), Some(hi + t * se_limit)];
        }
    }
    Ok(PairedComparison {
        n,
        bias,
        bias_ci95,
        sd_diff,
        loa95,
        loa_lower_ci95,
        loa_upper_ci95,
        mse,
        rmse: mse.map(f64::sqrt),
        mae,
        pearson: pearson(a, b),
        spearman: spearman(a, b),
        kendall_tau_b: kendall_tau_b(a, b),
        lin_ccc: lin_ccc(a, b),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// O(n²) definition of τ-b, to check Knight's algorithm against.
    fn kendall_naive(a: &[f64], b: &[f64]) -> Option<f64> {
        let (mut s, mut n1, mut n2, mut n0) = (0i64, 0i64, 0i64, 0i64);
        for i in 0..a.len() {
            for j in i + 1..a.len() {
                n0 += 1;
                let da = (a[i] - a[j]).signum() as i64 * i64::from(a[i] != a[j]);
                let db = (b[i] - b[j]).signum() as i64 * i64::from(b[i] != b[j]);
                s += da * db;
                n1 += i64::from(da == 0);
                n2 += i64::from(db == 0);
            }
        }
        let d = (((n0 - n1) * (n0 - n2)) as f64).sqrt();
        (d > 0.0).then(|| s as f64 / d)
    }

    #[test]
    fn mean_difference_is_bias_and_mse_by_hand() {
        let a = [3.0, 4.0, 2.0, 5.0];
        let b = [2.0, 4.0, 4.0, 1.0];
        let m: MeanDifference = a.iter().copied().zip(b.iter().copied()).collect();
        // Differences 1, 0, −2, 4: mean 3/4, mean square 21/4.
        assert_eq!(m.n(), 4, "every pair counts");
        assert_eq!(m.bias(), Some(0.75), "bias is the mean of a − b");
        assert_eq!(m.mse(), Some(5.25), "MSE is the mean squared difference");
        let empty = MeanDifference::default();
        assert_eq!(
            (empty.bias(), empty.mse()),
            (None, None),
            "no pairs, no estimate"
        );
        let full = compare(&a, &b).unwrap();
        assert_eq!(
            (full.bias, full.mse),
            (m.bias(), m.mse()),
            "the full comparison reports the same two numbers"
        );
    }

    #[test]
    fn knight_matches_quadratic_definition_with_ties() {
        let a = [1.0, 2.0, 2.0, 3.0, 4.0, 4.0, 4.0, 5.0, 1.0, 3.0];
        let b = [2.0, 1.0, 3.0, 3.0, 5.0, 4.0, 4.0, 2.0, 1.0, 5.0];
        let fast = kendall_tau_b(&a, &b).unwrap();
        let slow = kendall_naive(&a, &b).unwrap();
        assert!(
            (fast - slow).abs() < 1e-12,
            "Knight's algorithm must equal the pairwise definition: {fast} vs {slow}"
        );
    }

    #[test]
    fn average_ranks_share_ties() {
        assert_eq!(
            average_ranks(&[10.0, 20.0, 20.0, 5.0]),
            vec![2.0, 3.5, 3.5, 1.0],
            "tied values get the mean of their ranks"
        );
    }

    #[test]
    fn constant_side_leaves_correlations_undefined() {
        let c = compare(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]).unwrap();
        assert!(
            c.pearson.is_none() && c.spearman.is_none() && c.kendall_tau_b.is_none(),
            "a constant series has no correlation"
        );
        assert!(
            c.lin_ccc.is_some(),
            "CCC stays defined: its denominator includes the other variance"
        );
        let e = compare(&[], &[]).unwrap();
        assert!(e.bias.is_none() && e.sd_diff.is_none(), "no pairs, no bias");
    }

    #[test]
    fn identical_series_agree_perfectly() {
        let x = [1.0, 2.0, 4.0, 3.0];
        let c = compare(&x, &x).unwrap();
        assert_eq!(c.bias, Some(0.0), "no difference, no bias");
        assert_eq!(
            c.lin_ccc,
            Some(1.0),
            "identical series are perfectly concordant"
        );
        assert_eq!(
            c.kendall_tau_b,
            Some(1.0),
            "identical series are perfectly rank-concordant"
        );
    }
}
