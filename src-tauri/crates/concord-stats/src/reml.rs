//! Intraclass correlations for incomplete and unbalanced designs from REML variance components.
//!
//! When each target is rated by only some of the raters (Concord's own assignment gives each
//! response to k of N experts), the ANOVA mean squares of [`crate::icc`] need complete rows and
//! would discard almost everything. Instead the variance components are estimated by restricted
//! maximum likelihood (REML) in two linear mixed models, exactly as R's `lme4::lmer` does:
//!
//! - crossed: score = μ + a_target + b_rater + e, with a ~ N(0, σ²t), b ~ N(0, σ²r), e ~ N(0, σ²e);
//!   ICC2 = σ²t / (σ²t + σ²r + σ²e) (absolute agreement of one rater, ICC(A,1)) and
//!   ICC3 = σ²t / (σ²t + σ²e) (consistency of one rater, ICC(C,1), rater effects treated as fixed
//!   shifts that do not count against agreement);
//! - one-way: score = μ + a_target + e; ICC1 = σ²t / (σ²t + σ²e).
//!
//! # The computation
//! The REML criterion is lme4's profiled deviance in the relative standard deviations
//! θ = (σt/σe, σr/σe): −2 ℓ_R(θ) = log|L_θ|² + log|R_X|² + (N − p)(1 + log(2π r²(θ)/(N − p))), where
//! L_θ L_θ' = Λ'Z'ZΛ + I and r² is the penalised residual sum of squares. Concord never forms the
//! N-dimensional matrices: the target block of the mixed-model equations is diagonal (1 + θt² n_i),
//! so it is eliminated target by target and only the Schur complement over the rater effects and
//! the intercept — (N_raters + 1)² numbers — is factorised. Targets rated by the same raters the
//! same number of times contribute identical terms apart from their sums of scores, so they are
//! eliminated together from three sufficient statistics: one evaluation costs
//! O(P · k² + N_raters³) for P distinct rating patterns (at most C(N, k) — 45 for 2 of 10 raters —
//! however many targets), after one O(N) pass over the ratings. The two θ are found by a Nelder–Mead
//! simplex on the criterion (which is even in each θ, so the bound θ ≥ 0 needs no constraint),
//! polished by coordinate-wise Brent searches that also try θ = 0 exactly.
//!
//! # Boundary fits
//! A component whose best estimate is 0 (for example no detectable rater effect) is reported in
//! [`RemlIcc::boundary`]; the estimate is then on the edge of the parameter space, as lme4's
//! "boundary (singular) fit" message says, and the ICCs are still the REML values (ICC2 = ICC3 when
//! σ²r = 0, both 0 when σ²t = 0).
//!
//! # Confidence intervals: profile likelihood
//! Each 95% interval is the set of ICC values ρ whose profiled REML deviance lies within
//! χ²₁(0.95) = 3.8415 of the minimum: for ICC3 the constraint fixes θt² = ρ/(1 − ρ) and the
//! deviance is minimised over θr; for ICC2 it fixes θt² = ρ(1 + θr²)/(1 − ρ); for ICC1 it fixes the
//! one-way model's single θ. Why this method: the exact F-based intervals of McGraw & Wong (1996)
//! exist only for complete designs; Satterthwaite-type approximations for unbalanced crossed
//! designs have no agreed form; Wald intervals on the variance components are symmetric and fail
//! at the boundary, where the information matrix is singular. The profile interval is invariant
//! to reparameterisation, always lies in [0, 1], handles a boundary estimate (the lower limit
//! is then 0) and is what `confint.merMod` uses by default for the components themselves. It is
//! an asymptotic interval: with few targets its coverage is approximate, and at a boundary the
//! χ²₁ cut-off is conservative (the null distribution is a 50:50 mixture of χ²₀ and χ²₁).

use crate::optimize::{brent_min, brent_root, nelder_mead_2d};
use crate::special::z_critical;
use serde::Serialize;
use thiserror::Error;

/// One rating: a target index, a rater index and the score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rating {
    /// Target (item) index, 0-based.
    pub target: usize,
    /// Rater index, 0-based.
    pub rater: usize,
    /// The score.
    pub score: f64,
}

/// The three variance components of the crossed model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VarianceComponents {
    /// σ²t, between targets.
    pub target: f64,
    /// σ²r, between raters.
    pub rater: f64,
    /// σ²e, residual.
    pub residual: f64,
}

/// Which REML ICC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RemlIccForm {
    /// One-way model, σ²t / (σ²t + σ²e).
    #[serde(rename = "ICC1")]
    Icc1,
    /// Crossed model, absolute agreement σ²t / (σ²t + σ²r + σ²e).
    #[serde(rename = "ICC2")]
    Icc2,
    /// Crossed model, consistency σ²t / (σ²t + σ²e).
    #[serde(rename = "ICC3")]
    Icc3,
}

/// One REML ICC with its profile-likelihood 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RemlIccEstimate {
    /// Which form.
    #[serde(rename = "type")]
    pub form: RemlIccForm,
    /// The coefficient.
    pub icc: f64,
    /// Profile-likelihood 95% interval; a bound is `None` only if the search failed numerically.
    pub ci95: [Option<f64>; 2],
}

/// A variance component estimated at zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundaryComponent {
    /// σ²t = 0 in the crossed model.
    Target,
    /// σ²r = 0 in the crossed model.
    Rater,
    /// σ²t = 0 in the one-way model.
    TargetOneWay,
}

/// REML variance components and ICCs for an incomplete design.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemlIcc {
    /// Targets with at least one rating.
    pub n_targets: usize,
    /// Raters with at least one rating.
    pub n_raters: usize,
    /// Ratings used.
    pub n_ratings: usize,
    /// Crossed-model variance components.
    pub variance: VarianceComponents,
    /// One-way model components (target, residual).
    pub one_way: [f64; 2],
    /// Fixed intercept of the crossed model.
    pub intercept: f64,
    /// The REML deviance (−2 ℓ_R) of the crossed fit, comparable with lme4's `REMLcrit`.
    pub reml_deviance: f64,
    /// ICC1, ICC2, ICC3 in that order.
    pub icc: [RemlIccEstimate; 3],
    /// Components estimated at zero (empty for an interior fit).
    pub boundary: Vec<BoundaryComponent>,
}

/// Input that the REML fit cannot use.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RemlError {
    /// A score is NaN or infinite.
    #[error("rating {index} has a score that is not a finite number")]
    NonFinite {
        /// Position in the input.
        index: usize,
    },
    /// Too few targets or raters to separate the components.
    #[error("REML ICC needs at least 2 targets and 2 raters with ratings (got {targets} targets, {raters} raters)")]
    TooFew {
        /// Targets with ratings.
        targets: usize,
        /// Raters with ratings.
        raters: usize,
    },
    /// No target has two ratings, so within-target variation cannot be seen.
    #[error("REML ICC needs at least one target rated twice")]
    NoReplication,
    /// Every score within every target is identical, or all scores are equal: no residual variance.
    #[error("REML ICC is undefined: the residual variance is zero (every rater gives each target the same score)")]
    NoResidual,
}

/// The data reduced to what the criterion needs: per target its count, centred sum and raters.
struct Design {
    n: usize,
    m: usize,
    /// N ratings.
    total: f64,
    /// Σ (y − ȳ)².
    yy: f64,
    /// Targets grouped by their rating pattern (which raters, how often): every target of a
    /// pattern contributes the same terms to the criterion except through its sum of scores, so
    /// a pattern needs only its count, Σ s_i and Σ s_i² (s_i the target's sum of centred scores).
    /// With k of N raters per target there are at most C(N, k) patterns, whatever the number of
    /// targets.
    patterns: Vec<Pattern>,
    rater_n: Vec<f64>,
    rater_sum: Vec<f64>,
    /// The mean used for centring.
    mean: f64,
}

impl Design {
    fn new(ratings: &[Rating]) -> Result<Self, RemlError> {
        for (index, r) in ratings.iter().enumerate() {
            if !r.score.is_finite() {
                return Err(RemlError::NonFinite { index });
            }
        }
        // Compact the indices to those that occur.
        let max_t = ratings.iter().map(|r| r.target + 1).max().unwrap_or(0);
        let max_r = ratings.iter().map(|r| r.rater + 1).max().unwrap_or(0);
        let mut t_map = vec![usize::MAX; max_t];
        let mut r_map = vec![usize::MAX; max_r];
        let (mut n, mut m) = (0, 0);
        for r in ratings {
            if t_map[r.target] == usize::MAX {
                t_map[r.target] = n;
                n += 1;
            }
            if r_map[r.rater] == usize::MAX {
                r_map[r.rater] = m;
                m += 1;
            }
        }
        let total = ratings.len() as f64;
        let mean = ratings.iter().map(|r| r.score).sum::<f64>() / total.max(1.0);
        let mut target_n = vec![0.0; n];
        let mut target_sum = vec![0.0; n];
        let mut rater_n = vec![0.0; m];
        let mut rater_sum = vec![0.0; m];
        let mut yy = 0.0;
        let mut per_target: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for r in ratings {
            let (t, j, y) = (t_map[r.target], r_map[r.rater], r.score - mean);
            target_n[t] += 1.0;
            target_sum[t] += y;
            rater_n[j] += 1.0;
            rater_sum[j] += y;
            yy += y * y;
            match per_target[t].iter_mut().find(|e| e.0 == j) {
                Some(e) => e.1 += 1.0,
                None => per_target[t].push((j, 1.0)),
            }
        }
        let mut index: std::collections::HashMap<Vec<(usize, u64)>, usize> =
            std::collections::HashMap::new();
        let mut patterns: Vec<Pattern> = Vec::new();
        for (t, mut list) in per_target.into_iter().enumerate() {
            list.sort_by_key(|e| e.0);
            let key: Vec<(usize, u64)> = list.iter().map(|&(j, c)| (j, c as u64)).collect();
            let p = *index.entry(key).or_insert_with(|| {
                patterns.push(Pattern {
                    entries: list.clone(),
                    n: target_n[t],
                    count: 0.0,
                    sum: 0.0,
                    sum_sq: 0.0,
                });
                patterns.len() - 1
            });
            let pat = &mut patterns[p];
            pat.count += 1.0;
            pat.sum += target_sum[t];
            pat.sum_sq += target_sum[t] * target_sum[t];
        }
        Ok(Self {
            n,
            m,
            total,
            yy,
            patterns,
            rater_n,
            rater_sum,
            mean,
        })
    }

    /// lme4's REML deviance at relative SDs (θt, θr); `raters == false` fits the one-way model.
    /// Also returns σ̂²e and the intercept (on the original scale).
    fn deviance(&self, theta_t: f64, theta_r: f64, raters: bool) -> (f64, f64, f64) {
        let m = if raters { self.m } else { 0 };
        let q = m + 1;
        let (tt, tr) = (theta_t.abs(), theta_r.abs());
        // Schur complement S (q × q, row-major) and right-hand side over (rater effects, intercept).
        let mut s = vec![0.0; q * q];
        let mut rhs = vec![0.0; q];
        for j in 0..m {
            s[j * q + j] = tr * tr * self.rater_n[j] + 1.0;
            s[j * q + m] = tr * self.rater_n[j];
            s[m * q + j] = tr * self.rater_n[j];
            rhs[j] = tr * self.rater_sum[j];
        }
        s[m * q + m] = self.total;
        rhs[m] = 0.0; // Σ (y − ȳ) = 0
        let mut log_det = 0.0;
        let mut quad = 0.0;
        let mut b: Vec<(usize, f64)> = Vec::with_capacity(q);
        for p in &self.patterns {
            let d = tt * tt * p.n + 1.0;
            log_det += p.count * d.ln();
            // Σ_i rt_i / d and Σ_i rt_i² / d over the pattern's targets, rt_i = θt s_i.
            let rt_sum = tt * p.sum;
            quad += tt * tt * p.sum_sq / d;
            b.clear();
            if m > 0 && tr > 0.0 {
                for &(j, c) in &p.entries {
                    b.push((j, tt * tr * c));
                }
            }
            b.push((m, tt * p.n));
            for &(j, bj) in &b {
                rhs[j] -= bj * rt_sum / d;
                for &(l, bl) in &b {
                    s[j * q + l] -= p.count * bj * bl / d;
                }
            }
        }
        // Cholesky of S.
        let mut l = s;
        for j in 0..q {
            let mut diag = l[j * q + j];
            for k in 0..j {
                diag -= l[j * q + k] * l[j * q + k];
            }
            if diag <= 0.0 || !diag.is_finite() {
                return (f64::INFINITY, f64::NAN, f64::NAN);
            }
            let djj = diag.sqrt();
            l[j * q + j] = djj;
            for i in j + 1..q {
                let mut v = l[i * q + j];
                for k in 0..j {
                    v -= l[i * q + k] * l[j * q + k];
                }
                l[i * q + j] = v / djj;
            }
            log_det += 2.0 * djj.ln();
        }
        // Forward solve L z = rhs; rhs' S⁻¹ rhs = z'z.
        let mut z = rhs.clone();
        for i in 0..q {
            for k in 0..i {
                z[i] -= l[i * q + k] * z[k];
            }
            z[i] /= l[i * q + i];
        }
        quad += z.iter().map(|v| v * v).sum::<f64>();
        // Back solve for the intercept (last unknown) in the scaled system L' x = z.
        let mut x = z;
        for i in (0..q).rev() {
            for k in i + 1..q {
                x[i] -= l[k * q + i] * x[k];
            }
            x[i] /= l[i * q + i];
        }
        let r2 = self.yy - quad;
        let df = self.total - 1.0;
        if r2 <= self.yy * 1e-14 || r2 <= 0.0 {
            return (f64::INFINITY, 0.0, f64::NAN);
        }
        let dev = log_det + df * (1.0 + (2.0 * std::f64::consts::PI * r2 / df).ln());
        (dev, r2 / df, x[m] + self.mean)
    }
}

/// Targets sharing one rating pattern.
struct Pattern {
    /// (rater, times) pairs, sorted by rater.
    entries: Vec<(usize, f64)>,
    /// Ratings per target.
    n: f64,
    /// Targets with this pattern.
    count: f64,
    /// Σ s_i over them.
    sum: f64,
    /// Σ s_i² over them.
    sum_sq: f64,
}

/// REML estimates at the optimum of one model.
#[derive(Clone, Copy)]
struct Fit {
    theta_t: f64,
    theta_r: f64,
    deviance: f64,
    sigma2: f64,
    intercept: f64,
}

const THETA_ZERO: f64 = 1e-7;

fn fit_crossed(d: &Design) -> Fit {
    let dev = |t: f64, r: f64| d.deviance(t, r, true).0;
    let (x, _) = nelder_mead_2d(|p| dev(p[0], p[1]), [1.0, 1.0], 0.5, 1e-13, 1e-9, 4000);
    let (mut t, mut r) = (x[0].abs(), x[1].abs());
    // Coordinate polish with exact zero checks.
    for _ in 0..6 {
        let (t0, r0) = (t, r);
        t = polish(|v| dev(v, r), t);
        r = polish(|v| dev(t, v), r);
        if (t - t0).abs() < 1e-12 && (r - r0).abs() < 1e-12 {
            break;
        }
    }
    let (deviance, sigma2, intercept) = d.deviance(t, r, true);
    Fit {
        theta_t: t,
        theta_r: r,
        deviance,
        sigma2,
        intercept,
    }
}

fn fit_one_way(d: &Design) -> Fit {
    let dev = |t: f64| d.deviance(t, 0.0, false).0;
    let (x, _) = brent_min(dev, 0.0, 1.0f64.max(4.0 * start_one_way(d)), 1e-12);
    let t = polish(dev, x);
    let (deviance, sigma2, intercept) = d.deviance(t, 0.0, false);
    Fit {
        theta_t: t,
        theta_r: 0.0,
        deviance,
        sigma2,
        intercept,
    }
}

/// A rough one-way θ from the between/within mean squares, to size the search interval.
fn start_one_way(d: &Design) -> f64 {
    let between: f64 = d.patterns.iter().map(|p| p.sum_sq / p.n).sum();
    let within = (d.yy - between).max(0.0) / (d.total - d.n as f64).max(1.0);
    let nbar = d.total / d.n as f64;
    let var_t = (between / (d.n as f64 - 1.0).max(1.0) - within).max(0.0) / nbar;
    if within > 0.0 {
        (var_t / within).sqrt().min(1e4)
    } else {
        1e4
    }
}

/// Re-minimise a one-dimensional slice of the criterion near `x`, returning 0 when the boundary
/// is at least as good.
fn polish<F: FnMut(f64) -> f64>(mut f: F, x: f64) -> f64 {
    let hi = (4.0 * x).max(1.0);
    let (best, fbest) = brent_min(&mut f, 0.0, hi, 1e-11);
    let (best, fbest) = if f(x) < fbest {
        (x, f(x))
    } else {
        (best, fbest)
    };
    if best < THETA_ZERO || f(0.0) <= fbest {
        0.0
    } else {
        best
    }
}

fn icc_of(theta2_t: f64, theta2_r: f64, with_rater: bool) -> f64 {
    if with_rater {
        theta2_t / (theta2_t + theta2_r + 1.0)
    } else {
        theta2_t / (theta2_t + 1.0)
    }
}

/// Largest ICC searched for an upper bound.
const RHO_MAX: f64 = 1.0 - 1e-9;

/// Profile-likelihood interval for a scalar ρ ∈ [0, 1) given its profiled deviance.
fn profile_interval<F: FnMut(f64) -> f64>(
    mut profile: F,
    rho_hat: f64,
    dev_min: f64,
) -> [Option<f64>; 2] {
    let cut = z_critical(0.05).powi(2);
    let mut g = |rho: f64| profile(rho) - dev_min - cut;
    let lower = if rho_hat <= 0.0 || g(0.0) <= 0.0 {
        Some(0.0)
    } else {
        brent_root(&mut g, 0.0, rho_hat, 1e-10)
    };
    let upper = if rho_hat >= RHO_MAX || g(RHO_MAX) <= 0.0 {
        Some(1.0)
    } else {
        brent_root(&mut g, rho_hat, RHO_MAX, 1e-10)
    };
    [lower, upper]
}

/// Whether every target's scores are all equal (no within-target variation at all).
fn within_target_constant(ratings: &[Rating]) -> bool {
    let mut first: std::collections::HashMap<usize, f64> = std::collections::HashMap::new();
    ratings
        .iter()
        .all(|r| *first.entry(r.target).or_insert(r.score) == r.score)
}

/// REML variance components and ICC1/ICC2/ICC3 with profile-likelihood 95% intervals.
///
/// Every rating is used; targets may be rated by any subset of raters (an incomplete design),
/// and a rater may rate a target more than once.
pub fn reml_icc(ratings: &[Rating]) -> Result<RemlIcc, RemlError> {
    let d = Design::new(ratings)?;
    if d.n < 2 || d.m < 2 {
        return Err(RemlError::TooFew {
            targets: d.n,
            raters: d.m,
        });
    }
    if d.total <= d.n as f64 {
        return Err(RemlError::NoReplication);
    }
    if within_target_constant(ratings) {
        return Err(RemlError::NoResidual);
    }
    let crossed = fit_crossed(&d);
    let one_way = fit_one_way(&d);
    let scale = d.yy / d.total;
    let degenerate = |f: &Fit| {
        !f.deviance.is_finite()
            || f.sigma2.is_nan()
            || f.sigma2 <= 1e-10 * scale
            || f.theta_t > 1e4
            || f.theta_r > 1e4
    };
    if degenerate(&crossed) || degenerate(&one_way) {
        return Err(RemlError::NoResidual);
    }
    let (t2, r2) = (crossed.theta_t.powi(2), crossed.theta_r.powi(2));
    let o2 = one_way.theta_t.powi(2);
    let mut boundary = Vec::new();
    if crossed.theta_t == 0.0 {
        boundary.push(BoundaryComponent::Target);
    }
    if crossed.theta_r == 0.0 {
        boundary.push(BoundaryComponent::Rater);
    }
    if one_way.theta_t == 0.0 {
        boundary.push(BoundaryComponent::TargetOneWay);
    }

    let icc1 = icc_of(o2, 0.0, false);
    let icc2 = icc_of(t2, r2, true);
    let icc3 = icc_of(t2, 0.0, false);
    let r_hi = (10.0 * crossed.theta_r).max(3.0);
    // ICC1: the one-way model's θ is fixed by ρ.
    let ci1 = profile_interval(
        |rho| d.deviance((rho / (1.0 - rho)).sqrt(), 0.0, false).0,
        icc1,
        one_way.deviance,
    );
    // ICC3: θt fixed by ρ, minimise over θr.
    let profile_r = |theta_t: &dyn Fn(f64) -> f64| {
        let (_, fmin) = brent_min(|r| d.deviance(theta_t(r), r, true).0, 0.0, r_hi, 1e-9);
        fmin.min(d.deviance(theta_t(0.0), 0.0, true).0)
    };
    let ci3 = profile_interval(
        |rho| profile_r(&|_r| (rho / (1.0 - rho)).sqrt()),
        icc3,
        crossed.deviance,
    );
    let ci2 = profile_interval(
        |rho| profile_r(&|r| (rho / (1.0 - rho) * (1.0 + r * r)).sqrt()),
        icc2,
        crossed.deviance,
    );
    let s2 = crossed.sigma2;
    Ok(RemlIcc {
        n_targets: d.n,
        n_raters: d.m,
        n_ratings: ratings.len(),
        variance: VarianceComponents {
            target: t2 * s2,
            rater: r2 * s2,
            residual: s2,
        },
        one_way: [o2 * one_way.sigma2, one_way.sigma2],
        intercept: crossed.intercept,
        reml_deviance: crossed.deviance,
        icc: [
            RemlIccEstimate {
                form: RemlIccForm::Icc1,
                icc: icc1,
                ci95: ci1,
            },
            RemlIccEstimate {
                form: RemlIccForm::Icc2,
                icc: icc2,
                ci95: ci2,
            },
            RemlIccEstimate {
                form: RemlIccForm::Icc3,
                icc: icc3,
                ci95: ci3,
            },
        ],
        boundary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_matrix(rows: &[&[Option<f64>]]) -> Vec<Rating> {
        let mut v = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            for (j, x) in row.iter().enumerate() {
                if let Some(score) = x {
                    v.push(Rating {
                        target: i,
                        rater: j,
                        score: *score,
                    });
                }
            }
        }
        v
    }

    #[test]
    fn balanced_one_way_matches_anova_estimator() {
        // For balanced data with a positive ANOVA estimate, REML equals the ANOVA estimator.
        let rows: Vec<Vec<Option<f64>>> = (0..8)
            .map(|i| {
                (0..3)
                    .map(|j| Some(((i * 7 + j * 3) % 5) as f64 + i as f64 * 0.5))
                    .collect()
            })
            .collect();
        let refs: Vec<&[Option<f64>]> = rows.iter().map(|r| r.as_slice()).collect();
        let fit = reml_icc(&from_matrix(&refs)).expect("a valid design");
        let m: Vec<f64> = rows.iter().flatten().map(|x| x.unwrap()).collect();
        let table = crate::icc::icc_all(&m, 8, 3).expect("complete matrix");
        let anova = table.estimates[0].value.unwrap();
        assert!(
            (fit.icc[0].icc - anova).abs() < 1e-6,
            "balanced REML ICC1 {} equals the ANOVA ICC1 {anova}",
            fit.icc[0].icc
        );
        let [lo, hi] = fit.icc[0].ci95;
        assert!(
            lo.unwrap() < fit.icc[0].icc && fit.icc[0].icc < hi.unwrap(),
            "the interval contains the estimate"
        );
    }

    #[test]
    fn too_few_raters_is_an_error() {
        let r = from_matrix(&[&[Some(1.0)], &[Some(2.0)]]);
        assert!(
            matches!(reml_icc(&r), Err(RemlError::TooFew { .. })),
            "one rater cannot separate rater variance"
        );
    }

    #[test]
    fn no_residual_is_an_error_not_a_panic() {
        let r = from_matrix(&[&[Some(1.0), Some(1.0)], &[Some(3.0), Some(3.0)]]);
        assert!(
            reml_icc(&r).is_err(),
            "identical scores within every target leave no residual variance"
        );
    }
}
