//! Generalizability theory for crossed designs — targets × raters, or targets × raters ×
//! occasions — with missing cells allowed: the G-study's variance components, Brennan's (2001,
//! *Generalizability Theory*) relative and absolute coefficients, and a D-study over 1–10 raters
//! and 1–10 occasions.
//!
//! # The model
//! Every facet is random. With one score per cell the highest interaction cannot be told from
//! error, so it is reported as `residual`:
//! - targets × raters: x_pr = μ + p + r + e (components target, rater, residual);
//! - targets × raters × occasions: x_pro = μ + p + r + o + pr + po + ro + e (target, rater,
//!   occasion, target:rater, target:occasion, rater:occasion, residual).
//!
//! # Estimation: REML
//! Components are restricted maximum likelihood estimates, which for balanced data without a
//! negative ANOVA estimate equal the ANOVA (expected mean squares) estimates, and which use every
//! score of an unbalanced design. The criterion is lme4's profiled REML deviance in the relative
//! standard deviations θ_j = σ_j/σ_e (as in [`crate::reml`]):
//! −2ℓ_R(θ) = log|B| + log|Q| + (N − 1)(1 + log(2π r²/(N − 1))), where the effects private to a
//! target (p, pr, po) are integrated out target by target (B is block-diagonal, one block per
//! target, inverted by Woodbury's identity), Q is the penalised cross-product of the intercept and
//! the shared effects (r, o, ro) and r² the penalised residual sum of squares. Targets scored in
//! the same cells share their blocks, so one evaluation costs a few small factorisations per
//! *pattern* of observed cells, however many targets there are; the data enter through each
//! pattern's cell sums and cross-products, gathered in one pass. θ is found by a Nelder–Mead
//! simplex (restarted until it stops improving), polished coordinate by coordinate with Brent
//! searches that also try θ_j = 0 exactly; a component estimated at 0 is reported in
//! [`GStudy::boundary`].
//!
//! # Balanced designs: the closed form
//! When every target with a score is scored once in every cell, the seven (three) mean squares
//! are computed from the one pattern's sums and cross-products and the components solved from
//! their expected values (the ANOVA estimates). Where none is negative these *are* the REML
//! estimates, so they are reported without iterating, with the REML deviance evaluated at them.
//! Where one is negative the REML fit runs, started from the ANOVA estimates with the negative
//! ones at 0; an unbalanced design starts it from the ANOVA estimates of its complete targets
//! (those scored in every cell), when at least two are.
//!
//! # Coefficients (Brennan 2001, random facets)
//! For n′_r raters and n′_o occasions:
//! - relative error σ²(δ) = σ²(pr)/n′_r + σ²(po)/n′_o + σ²(res)/(n′_r n′_o) (σ²(res)/n′_r without
//!   occasions);
//! - absolute error σ²(Δ) = σ²(δ) + σ²(r)/n′_r + σ²(o)/n′_o + σ²(ro)/(n′_r n′_o);
//! - generalizability Eρ² = σ²(p)/(σ²(p) + σ²(δ)), dependability Φ = σ²(p)/(σ²(p) + σ²(Δ)).
//!
//! The G coefficients use the numbers of distinct raters and occasions observed; the D-study
//! tabulates 1–10 of each (occasions fixed at 1 in a targets × raters design).
//!
//! A facet observed at one level has no variance to estimate: [`GStudyError::OneLevel`] says so.

use crate::optimize::{brent_min, nelder_mead};
use serde::Serialize;
use std::collections::HashMap;
use thiserror::Error;

/// One score: target, rater and occasion indices (occasion 0 in a targets × raters design).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GScore {
    /// Target index.
    pub target: usize,
    /// Rater index.
    pub rater: usize,
    /// Occasion index.
    pub occasion: usize,
    /// The score.
    pub score: f64,
}

/// The design's size: occasions `None` for targets × raters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GDesign {
    /// Targets.
    pub n_targets: usize,
    /// Raters.
    pub n_raters: usize,
    /// Occasions, when that facet is part of the design.
    pub n_occasions: Option<usize>,
}

/// The variance components; facets outside the design are `None`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GComponents {
    /// σ²(p).
    pub target: f64,
    /// σ²(r).
    pub rater: f64,
    /// σ²(o).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occasion: Option<f64>,
    /// σ²(pr).
    #[serde(rename = "target:rater", skip_serializing_if = "Option::is_none")]
    pub target_rater: Option<f64>,
    /// σ²(po).
    #[serde(rename = "target:occasion", skip_serializing_if = "Option::is_none")]
    pub target_occasion: Option<f64>,
    /// σ²(ro).
    #[serde(rename = "rater:occasion", skip_serializing_if = "Option::is_none")]
    pub rater_occasion: Option<f64>,
    /// σ²(res): the highest interaction confounded with error.
    pub residual: f64,
}

/// Relative and absolute coefficients; `None` when the target variance and the error are both 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GCoefficients {
    /// Eρ², the generalizability coefficient.
    pub relative: Option<f64>,
    /// Φ, the dependability coefficient.
    pub absolute: Option<f64>,
}

/// One D-study design.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DStudyRow {
    /// Raters averaged over.
    pub n_rater: usize,
    /// Occasions averaged over.
    pub n_occasion: usize,
    /// Eρ².
    pub relative: Option<f64>,
    /// Φ.
    pub absolute: Option<f64>,
}

/// A G-study and its D-study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GStudy {
    /// Scores used.
    pub n_scores: usize,
    /// Targets with at least one score.
    pub n_targets: usize,
    /// Distinct raters observed.
    pub n_raters: usize,
    /// Distinct occasions observed (1 without that facet).
    pub n_occasions: usize,
    /// REML variance components.
    pub components: GComponents,
    /// Coefficients for the observed numbers of raters and occasions.
    pub g: GCoefficients,
    /// Coefficients for 1–10 raters × 1–10 occasions.
    pub d_study: Vec<DStudyRow>,
    /// Names of the components estimated at 0.
    pub boundary: Vec<&'static str>,
    /// The REML deviance at the estimate.
    pub reml_deviance: f64,
}

/// Why a G-study cannot be run.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GStudyError {
    /// No scores.
    #[error("no scores")]
    NoScores,
    /// A score is NaN or infinite.
    #[error("score {0} is not a finite number")]
    NonFinite(usize),
    /// An index is out of range.
    #[error("score {index}: {what} index out of range")]
    OutOfRange {
        /// Position of the score.
        index: usize,
        /// Which index.
        what: &'static str,
    },
    /// A facet has a single level.
    #[error("the {0} facet has one level in these data: its variance cannot be estimated; a G-study needs at least two")]
    OneLevel(&'static str),
    /// A cell is scored twice.
    #[error("target {target} has two scores from rater {rater} on occasion {occasion}: one score per cell (name repetitions as occasions)")]
    Duplicate {
        /// Target index.
        target: usize,
        /// Rater index.
        rater: usize,
        /// Occasion index.
        occasion: usize,
    },
    /// Two components cannot be told apart with these cells.
    #[error("{0}")]
    NotSeparable(&'static str),
}

/// The random terms, in the order of θ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Term {
    Target,
    Rater,
    Occasion,
    TargetRater,
    TargetOccasion,
    RaterOccasion,
}

impl Term {
    fn name(self) -> &'static str {
        match self {
            Term::Target => "target",
            Term::Rater => "rater",
            Term::Occasion => "occasion",
            Term::TargetRater => "target:rater",
            Term::TargetOccasion => "target:occasion",
            Term::RaterOccasion => "rater:occasion",
        }
    }
}

/// Targets that share a pattern of observed cells: their count, the sum of their scores in each
/// cell and the cells' cross-products summed over them.
struct Pattern {
    cells: Vec<usize>,
    count: f64,
    sums: Vec<f64>,
    cross: Vec<f64>,
}

struct Model {
    n_raters: usize,
    n_occasions: usize,
    with_occasion: bool,
    terms: Vec<Term>,
    patterns: Vec<Pattern>,
    n: usize,
}

fn chol(a: &mut [f64], n: usize) -> Option<f64> {
    let mut logdet = 0.0;
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= a[j * n + k] * a[j * n + k];
        }
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        let d = d.sqrt();
        a[j * n + j] = d;
        logdet += 2.0 * d.ln();
        for i in j + 1..n {
            let mut v = a[i * n + j];
            for k in 0..j {
                v -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = v / d;
        }
    }
    Some(logdet)
}

/// Solve L x = b in place for lower-triangular `l` (n × n) and `cols` right-hand sides stored
/// row-major as n × cols.
fn forward(l: &[f64], n: usize, b: &mut [f64], cols: usize) {
    for i in 0..n {
        for k in 0..i {
            let f = l[i * n + k];
            if f != 0.0 {
                for c in 0..cols {
                    b[i * cols + c] -= f * b[k * cols + c];
                }
            }
        }
        for c in 0..cols {
            b[i * cols + c] /= l[i * n + i];
        }
    }
}

impl Model {
    fn theta_of(&self, theta: &[f64], term: Term) -> f64 {
        self.terms
            .iter()
            .position(|&t| t == term)
            .map_or(0.0, |j| theta[j].abs())
    }

    /// The shared columns: intercept, raters, then occasions and rater × occasion cells.
    fn n_global(&self) -> usize {
        1 + self.n_raters
            + if self.with_occasion {
                self.n_occasions + self.n_raters * self.n_occasions
            } else {
                0
            }
    }

    /// For a cell, its shared columns with their θ scaling (intercept unscaled).
    fn global_columns(&self, cell: usize, theta: &[f64]) -> Vec<(usize, f64)> {
        let (r, o) = (cell / self.n_occasions, cell % self.n_occasions);
        let mut out = vec![(0, 1.0), (1 + r, self.theta_of(theta, Term::Rater))];
        if self.with_occasion {
            out.push((1 + self.n_raters + o, self.theta_of(theta, Term::Occasion)));
            out.push((
                1 + self.n_raters + self.n_occasions + cell,
                self.theta_of(theta, Term::RaterOccasion),
            ));
        }
        out
    }

    /// For a pattern, each cell's private columns (target; target:rater; target:occasion, local
    /// indices) with their θ scaling, and the number of private columns.
    fn local_columns(&self, cells: &[usize], theta: &[f64]) -> (Vec<Vec<(usize, f64)>>, usize) {
        let mut raters: Vec<usize> = cells.iter().map(|c| c / self.n_occasions).collect();
        raters.dedup();
        let mut occasions: Vec<usize> = cells.iter().map(|c| c % self.n_occasions).collect();
        occasions.sort_unstable();
        occasions.dedup();
        let (tt, tr, to) = (
            self.theta_of(theta, Term::Target),
            self.theta_of(theta, Term::TargetRater),
            self.theta_of(theta, Term::TargetOccasion),
        );
        let mut q = 1;
        let rater_base = q;
        if self.with_occasion {
            q += raters.len();
        }
        let occasion_base = q;
        if self.with_occasion {
            q += occasions.len();
        }
        let columns = cells
            .iter()
            .map(|&c| {
                let mut cols = vec![(0, tt)];
                if self.with_occasion {
                    let ri = raters.binary_search(&(c / self.n_occasions)).unwrap_or(0);
                    let oi = occasions
                        .binary_search(&(c % self.n_occasions))
                        .unwrap_or(0);
                    cols.push((rater_base + ri, tr));
                    cols.push((occasion_base + oi, to));
                }
                cols
            })
            .collect();
        (columns, q)
    }

    /// The profiled REML deviance at θ and the residual variance σ²_e it implies.
    fn deviance(&self, theta: &[f64]) -> (f64, f64) {
        let g = self.n_global();
        let mut q_mat = vec![0.0; g * g];
        let mut h = vec![0.0; g];
        let (mut yy, mut logdet_b) = (0.0, 0.0);
        for p in &self.patterns {
            let m = p.cells.len();
            let (local, q) = self.local_columns(&p.cells, theta);
            // ΛZ' (q × m) and T = I + ΛZ'ZΛ.
            let mut lz = vec![0.0; q * m];
            for (i, cols) in local.iter().enumerate() {
                for &(j, s) in cols {
                    lz[j * m + i] = s;
                }
            }
            let mut t = vec![0.0; q * q];
            for a in 0..q {
                t[a * q + a] = 1.0;
                for b in 0..=a {
                    let v: f64 = (0..m).map(|i| lz[a * m + i] * lz[b * m + i]).sum();
                    t[a * q + b] += v;
                    t[b * q + a] = t[a * q + b];
                }
            }
            let Some(ld) = chol(&mut t, q) else {
                return (f64::INFINITY, f64::NAN);
            };
            logdet_b += p.count * ld;
            // F = L⁻¹ΛZ' (q × m); B⁻¹ = I − F'F on this pattern.
            forward(&t, q, &mut lz, m);
            let f = lz;
            // D = [X, WΛ_g] on the pattern's cells, kept as (cell, column, value) lists.
            let dcols: Vec<Vec<(usize, f64)>> = p
                .cells
                .iter()
                .map(|&c| self.global_columns(c, theta))
                .collect();
            // FD (q × g, sparse in g: gather the touched columns).
            let mut touched: Vec<usize> = dcols.iter().flatten().map(|&(j, _)| j).collect();
            touched.sort_unstable();
            touched.dedup();
            let gl = touched.len();
            let at = |j: usize| touched.binary_search(&j).unwrap_or(0);
            let mut d = vec![0.0; m * gl];
            for (i, cols) in dcols.iter().enumerate() {
                for &(j, s) in cols {
                    d[i * gl + at(j)] += s;
                }
            }
            let mut fd = vec![0.0; q * gl];
            for a in 0..q {
                for i in 0..m {
                    let fa = f[a * m + i];
                    if fa != 0.0 {
                        for c in 0..gl {
                            fd[a * gl + c] += fa * d[i * gl + c];
                        }
                    }
                }
            }
            // Q += count (D'D − (FD)'(FD)); h += D's − (FD)'(F s); yy += tr(S) − tr(F S F').
            for a in 0..gl {
                for b in 0..gl {
                    let dd: f64 = (0..m).map(|i| d[i * gl + a] * d[i * gl + b]).sum();
                    let ff: f64 = (0..q).map(|k| fd[k * gl + a] * fd[k * gl + b]).sum();
                    q_mat[touched[a] * g + touched[b]] += p.count * (dd - ff);
                }
            }
            let fs: Vec<f64> = (0..q)
                .map(|k| (0..m).map(|i| f[k * m + i] * p.sums[i]).sum())
                .collect();
            for a in 0..gl {
                let ds: f64 = (0..m).map(|i| d[i * gl + a] * p.sums[i]).sum();
                let ffs: f64 = (0..q).map(|k| fd[k * gl + a] * fs[k]).sum();
                h[touched[a]] += ds - ffs;
            }
            let mut fsf = 0.0;
            for k in 0..q {
                for i in 0..m {
                    let fki = f[k * m + i];
                    if fki != 0.0 {
                        let row: f64 = (0..m).map(|j| p.cross[i * m + j] * f[k * m + j]).sum();
                        fsf += fki * row;
                    }
                }
            }
            yy += (0..m).map(|i| p.cross[i * m + i]).sum::<f64>() - fsf;
        }
        for j in 1..g {
            q_mat[j * g + j] += 1.0;
        }
        let Some(logdet_q) = chol(&mut q_mat, g) else {
            return (f64::INFINITY, f64::NAN);
        };
        forward(&q_mat, g, &mut h, 1);
        let r2 = yy - h.iter().map(|v| v * v).sum::<f64>();
        let df = self.n as f64 - 1.0;
        if r2.is_nan() || r2 <= 0.0 {
            return (f64::INFINITY, f64::NAN);
        }
        let dev = logdet_b + logdet_q + df * (1.0 + (2.0 * std::f64::consts::PI * r2 / df).ln());
        (dev, r2 / df)
    }
}

/// The ANOVA (expected mean squares) components of the targets scored in every cell of the
/// design (all of them in a balanced design), in the order of the model's terms and then the
/// residual; `None` when fewer than two targets are complete or the residual mean square is not
/// positive. Components may be negative.
fn anova(model: &Model) -> Option<Vec<f64>> {
    let (nr, no) = (model.n_raters, model.n_occasions);
    let p = model
        .patterns
        .iter()
        .find(|p| p.cells.len() == nr * no && p.count >= 2.0)?;
    let (np, m) = (p.count, nr * no);
    let (fr, fo) = (nr as f64, no as f64);
    let cross = |a: usize, b: usize| p.cross[a * m + b];
    let cell = |r: usize, o: usize| r * no + o;
    let total: f64 = p.sums.iter().sum();
    let cf = total * total / (np * m as f64);
    let a_p = p.cross.iter().sum::<f64>() / m as f64;
    let a_r = (0..nr)
        .map(|r| (0..no).map(|o| p.sums[cell(r, o)]).sum::<f64>().powi(2))
        .sum::<f64>()
        / (np * fo);
    let a_all: f64 = (0..m).map(|c| cross(c, c)).sum();
    let (ms_p, ms_r) = ((a_p - cf) / (np - 1.0), (a_r - cf) / (fr - 1.0));
    if !model.with_occasion {
        let ms_e = (a_all - a_p - a_r + cf) / ((np - 1.0) * (fr - 1.0));
        return (ms_e > 0.0).then(|| vec![(ms_p - ms_e) / fr, (ms_r - ms_e) / np, ms_e]);
    }
    let a_o = (0..no)
        .map(|o| (0..nr).map(|r| p.sums[cell(r, o)]).sum::<f64>().powi(2))
        .sum::<f64>()
        / (np * fr);
    let a_ro = p.sums.iter().map(|s| s * s).sum::<f64>() / np;
    let a_pr = (0..nr)
        .flat_map(|r| (0..no).flat_map(move |o| (0..no).map(move |o2| (cell(r, o), cell(r, o2)))))
        .map(|(a, b)| cross(a, b))
        .sum::<f64>()
        / fo;
    let a_po = (0..no)
        .flat_map(|o| (0..nr).flat_map(move |r| (0..nr).map(move |r2| (cell(r, o), cell(r2, o)))))
        .map(|(a, b)| cross(a, b))
        .sum::<f64>()
        / fr;
    let ms_o = (a_o - cf) / (fo - 1.0);
    let ms_pr = (a_pr - a_p - a_r + cf) / ((np - 1.0) * (fr - 1.0));
    let ms_po = (a_po - a_p - a_o + cf) / ((np - 1.0) * (fo - 1.0));
    let ms_ro = (a_ro - a_r - a_o + cf) / ((fr - 1.0) * (fo - 1.0));
    let ms_e = (a_all - a_pr - a_po - a_ro + a_p + a_r + a_o - cf)
        / ((np - 1.0) * (fr - 1.0) * (fo - 1.0));
    (ms_e > 0.0).then(|| {
        vec![
            (ms_p - ms_pr - ms_po + ms_e) / (fr * fo),
            (ms_r - ms_pr - ms_ro + ms_e) / (np * fo),
            (ms_o - ms_po - ms_ro + ms_e) / (np * fr),
            (ms_pr - ms_e) / fo,
            (ms_po - ms_e) / fr,
            (ms_ro - ms_e) / np,
            ms_e,
        ]
    })
}

/// θ (σ_j/σ_e) of ANOVA components, the negative ones at 0.
fn theta_of_components(components: &[f64]) -> Vec<f64> {
    let (terms, residual) = components.split_at(components.len() - 1);
    terms
        .iter()
        .map(|v| (v.max(0.0) / residual[0]).sqrt())
        .collect()
}

const THETA_ZERO: f64 = 1e-7;

/// Re-minimise the criterion along coordinate `j` near θ, returning 0 when the boundary is at
/// least as good.
fn polish(model: &Model, theta: &mut [f64], j: usize) {
    let x = theta[j];
    let mut at = |v: f64| {
        let mut t = theta.to_vec();
        t[j] = v;
        model.deviance(&t).0
    };
    let hi = (4.0 * x).max(1.0);
    let (best, fbest) = brent_min(&mut at, 0.0, hi, 1e-11);
    let fx = at(x);
    let (best, fbest) = if fx < fbest { (x, fx) } else { (best, fbest) };
    theta[j] = if best < THETA_ZERO || at(0.0) <= fbest {
        0.0
    } else {
        best
    };
}

/// θ, the REML deviance and σ²_e: the closed form on a balanced design without a negative ANOVA
/// estimate, the iterative fit otherwise (see the module docs).
fn fit(model: &Model) -> (Vec<f64>, f64, f64) {
    let balanced = model.patterns.len() == 1;
    match anova(model) {
        Some(c) if balanced && c.iter().all(|v| *v >= 0.0) => {
            let theta = theta_of_components(&c);
            let deviance = model.deviance(&theta).0;
            (theta, deviance, c[c.len() - 1])
        }
        Some(c) => reml_fit(model, theta_of_components(&c)),
        None => reml_fit(model, vec![1.0; model.terms.len()]),
    }
}

/// The REML fit from θ = `start`: the simplex, restarted while it improves, then the polish.
fn reml_fit(model: &Model, start: Vec<f64>) -> (Vec<f64>, f64, f64) {
    let dev = |t: &[f64]| model.deviance(t).0;
    let mut theta = start;
    let mut best = dev(&theta);
    let mut step = 0.5;
    for _ in 0..8 {
        let (x, fx) = nelder_mead(dev, &theta, step, 1e-13, 1e-10, 40_000);
        let improved = best - fx;
        if fx <= best {
            theta = x.iter().map(|v| v.abs()).collect();
            best = fx;
        }
        if improved < 1e-10 {
            break;
        }
        step = 0.1;
    }
    for _ in 0..20 {
        let before = theta.clone();
        for j in 0..theta.len() {
            polish(model, &mut theta, j);
        }
        if before
            .iter()
            .zip(&theta)
            .all(|(a, b)| (a - b).abs() < 1e-12)
        {
            break;
        }
    }
    let (deviance, sigma2) = model.deviance(&theta);
    (theta, deviance, sigma2)
}

/// Each target's (cell, score) pairs sorted by cell, after checking indices and duplicates.
fn by_target(scores: &[GScore], design: &GDesign) -> Result<Vec<Vec<(usize, f64)>>, GStudyError> {
    let n_o = design.n_occasions.unwrap_or(1);
    let mut out: Vec<Vec<(usize, f64)>> = vec![Vec::new(); design.n_targets];
    for (index, s) in scores.iter().enumerate() {
        for (value, bound, what) in [
            (s.target, design.n_targets, "target"),
            (s.rater, design.n_raters, "rater"),
            (s.occasion, n_o, "occasion"),
        ] {
            if value >= bound {
                return Err(GStudyError::OutOfRange { index, what });
            }
        }
        if !s.score.is_finite() {
            return Err(GStudyError::NonFinite(index));
        }
        out[s.target].push((s.rater * n_o + s.occasion, s.score));
    }
    for (t, cells) in out.iter_mut().enumerate() {
        cells.sort_by_key(|c| c.0);
        if let Some(w) = cells.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(GStudyError::Duplicate {
                target: t,
                rater: w[0].0 / n_o,
                occasion: w[0].0 % n_o,
            });
        }
    }
    Ok(out)
}

/// Checks that every component can be told apart from the others with the observed cells.
fn separable(
    cells: &[Vec<(usize, f64)>],
    n_o: usize,
    with_occasion: bool,
) -> Result<(), GStudyError> {
    if cells.iter().filter(|c| !c.is_empty()).count() < 2 {
        return Err(GStudyError::OneLevel("target"));
    }
    let distinct = |f: &dyn Fn(usize) -> usize| {
        let mut v: Vec<usize> = cells.iter().flatten().map(|&(c, _)| f(c)).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    if distinct(&|c| c / n_o) < 2 {
        return Err(GStudyError::OneLevel("rater"));
    }
    if with_occasion && distinct(&|c| c % n_o) < 2 {
        return Err(GStudyError::OneLevel("occasion"));
    }
    if !cells.iter().any(|c| c.len() >= 2) {
        return Err(GStudyError::NotSeparable(
            "no target has two scores: target variance cannot be told from the residual",
        ));
    }
    if with_occasion {
        let twice = |same: &dyn Fn(usize) -> usize| {
            cells.iter().any(|c| {
                c.iter()
                    .enumerate()
                    .any(|(i, a)| c[i + 1..].iter().any(|b| same(a.0) == same(b.0)))
            })
        };
        if !twice(&|c| c / n_o) {
            return Err(GStudyError::NotSeparable(
                "no target is scored by one rater on two occasions: target:rater cannot be told from the residual",
            ));
        }
        if !twice(&|c| c % n_o) {
            return Err(GStudyError::NotSeparable(
                "no target is scored by two raters on one occasion: target:occasion cannot be told from the residual",
            ));
        }
    }
    Ok(())
}

fn patterns(cells: &[Vec<(usize, f64)>]) -> Vec<Pattern> {
    let mut index: HashMap<Vec<usize>, usize> = HashMap::new();
    let mut out: Vec<Pattern> = Vec::new();
    for target in cells.iter().filter(|c| !c.is_empty()) {
        let key: Vec<usize> = target.iter().map(|&(c, _)| c).collect();
        let m = key.len();
        let at = *index.entry(key.clone()).or_insert_with(|| {
            out.push(Pattern {
                cells: key,
                count: 0.0,
                sums: vec![0.0; m],
                cross: vec![0.0; m * m],
            });
            out.len() - 1
        });
        let p = &mut out[at];
        p.count += 1.0;
        for (i, &(_, a)) in target.iter().enumerate() {
            p.sums[i] += a;
            for (j, &(_, b)) in target.iter().enumerate() {
                p.cross[i * m + j] += a * b;
            }
        }
    }
    out
}

/// Eρ² and Φ of a design averaging over `nr` raters and `no` occasions.
pub fn coefficients(c: &GComponents, nr: usize, no: usize) -> GCoefficients {
    let (nr, no) = (nr as f64, no as f64);
    let delta = c.target_rater.unwrap_or(0.0) / nr
        + c.target_occasion.unwrap_or(0.0) / no
        + c.residual / (nr * no);
    let big_delta = delta
        + c.rater / nr
        + c.occasion.unwrap_or(0.0) / no
        + c.rater_occasion.unwrap_or(0.0) / (nr * no);
    let ratio = |error: f64| {
        let total = c.target + error;
        (total > 0.0).then(|| c.target / total)
    };
    GCoefficients {
        relative: ratio(delta),
        absolute: ratio(big_delta),
    }
}

/// The G-study of `scores` in `design` and its D-study.
pub fn g_study(scores: &[GScore], design: &GDesign) -> Result<GStudy, GStudyError> {
    if scores.is_empty() {
        return Err(GStudyError::NoScores);
    }
    let with_occasion = design.n_occasions.is_some();
    let n_o = design.n_occasions.unwrap_or(1);
    let cells = by_target(scores, design)?;
    separable(&cells, n_o, with_occasion)?;
    let observed = |f: &dyn Fn(usize) -> usize| {
        let mut seen = vec![false; design.n_raters.max(n_o)];
        for &(c, _) in cells.iter().flatten() {
            seen[f(c)] = true;
        }
        seen.iter().filter(|&&s| s).count()
    };
    let (n_raters, n_occasions) = (observed(&|c| c / n_o), observed(&|c| c % n_o));
    let terms = if with_occasion {
        vec![
            Term::Target,
            Term::Rater,
            Term::Occasion,
            Term::TargetRater,
            Term::TargetOccasion,
            Term::RaterOccasion,
        ]
    } else {
        vec![Term::Target, Term::Rater]
    };
    let model = Model {
        n_raters: design.n_raters,
        n_occasions: n_o,
        with_occasion,
        terms,
        patterns: patterns(&cells),
        n: scores.len(),
    };
    let (theta, reml_deviance, sigma2) = fit(&model);
    let var = |term: Term| model.theta_of(&theta, term).powi(2) * sigma2;
    let extra = |term: Term| with_occasion.then(|| var(term));
    let components = GComponents {
        target: var(Term::Target),
        rater: var(Term::Rater),
        occasion: extra(Term::Occasion),
        target_rater: extra(Term::TargetRater),
        target_occasion: extra(Term::TargetOccasion),
        rater_occasion: extra(Term::RaterOccasion),
        residual: sigma2,
    };
    let occasions_tabulated = if with_occasion { 10 } else { 1 };
    let d_study = (1..=10)
        .flat_map(|nr| (1..=occasions_tabulated).map(move |no| (nr, no)))
        .map(|(nr, no)| {
            let c = coefficients(&components, nr, no);
            DStudyRow {
                n_rater: nr,
                n_occasion: no,
                relative: c.relative,
                absolute: c.absolute,
            }
        })
        .collect();
    Ok(GStudy {
        n_scores: scores.len(),
        n_targets: cells.iter().filter(|c| !c.is_empty()).count(),
        n_raters,
        n_occasions,
        components,
        g: coefficients(&components, n_raters, n_occasions),
        d_study,
        boundary: model
            .terms
            .iter()
            .zip(&theta)
            .filter(|(_, &t)| t == 0.0)
            .map(|(term, _)| term.name())
            .collect(),
        reml_deviance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(target: usize, rater: usize, occasion: usize, score: f64) -> GScore {
        GScore {
            target,
            rater,
            occasion,
            score,
        }
    }

    /// Brennan's (2001) synthetic data set No. 4 is not reproduced here; instead a balanced
    /// targets × raters table whose ANOVA estimates are known in closed form.
    #[test]
    fn balanced_two_facet_reml_equals_anova() {
        // Shrout & Fleiss (1979): MS_targets 11.24, MS_raters 32.49, MS_error 1.02, n = 6, k = 4.
        let m = [
            [9.0, 2.0, 5.0, 8.0],
            [6.0, 1.0, 3.0, 2.0],
            [8.0, 4.0, 6.0, 8.0],
            [7.0, 1.0, 2.0, 6.0],
            [10.0, 5.0, 6.0, 9.0],
            [6.0, 2.0, 4.0, 7.0],
        ];
        let scores: Vec<GScore> = (0..6)
            .flat_map(|t| (0..4).map(move |r| (t, r)))
            .map(|(t, r)| score(t, r, 0, m[t][r]))
            .collect();
        let design = GDesign {
            n_targets: 6,
            n_raters: 4,
            n_occasions: None,
        };
        let g = g_study(&scores, &design).unwrap();
        // Expected mean squares: σ²e = MSE, σ²p = (MSp − MSE)/k, σ²r = (MSr − MSE)/n.
        let (msp, msr, mse) = (
            11.241_666_666_666_667,
            32.486_111_111_111_11,
            1.019_444_444_444_444_5,
        );
        let want = [(msp - mse) / 4.0, (msr - mse) / 6.0, mse];
        let got = [
            g.components.target,
            g.components.rater,
            g.components.residual,
        ];
        for (w, v) in want.iter().zip(got) {
            assert!(
                (w - v).abs() < 1e-6,
                "REML equals ANOVA on balanced data without a negative estimate: {want:?} vs {got:?}"
            );
        }
        assert_eq!(g.d_study.len(), 10, "one row per number of raters");
    }

    #[test]
    fn a_facet_with_one_level_is_refused() {
        let scores: Vec<GScore> = (0..5)
            .flat_map(|t| (0..2).map(move |r| score(t, r, 0, (t * r) as f64 + 0.5 * r as f64)))
            .collect();
        let design = GDesign {
            n_targets: 5,
            n_raters: 2,
            n_occasions: Some(1),
        };
        assert_eq!(
            g_study(&scores, &design),
            Err(GStudyError::OneLevel("occasion")),
            "one occasion gives no occasion variance"
        );
    }
}
