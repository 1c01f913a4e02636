//! Intraclass correlation coefficients, all six Shrout & Fleiss (1979) / McGraw & Wong (1996) forms,
//! from the mean squares of a two-way ANOVA without replication (targets × raters). Each form comes
//! with its F statistic, degrees of freedom, p-value and the 95% confidence interval of McGraw & Wong
//! (1996), computed exactly as `pingouin.intraclass_corr` does (Satterthwaite-style real-valued
//! denominator degrees of freedom for the absolute-agreement forms, real-valued F quantiles, the
//! ICC(A,k) bounds as the Spearman–Brown step-up of the ICC(A,1) bounds).
//!
//! Degenerate designs never panic and never return NaN or infinities as estimates: a quantity that
//! is undefined is `None`. Two limits are defined on purpose and differ from pingouin, which returns
//! NaN there: with perfect consistency (error mean square 0, targets differing) the consistency
//! forms are 1, F is +∞, p is 0 and the interval is [1, 1]; with no within-target variation the same
//! holds for the one-way forms. F = +∞ is the only infinity a caller can see (it serialises as null).

use serde::Serialize;
use thiserror::Error;

use crate::special::{f_quantile, f_sf};

/// The six ICC forms, in the order pingouin and R psych print them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum IccForm {
    /// ICC(1,1): one-way random effects, single rater.
    #[serde(rename = "ICC1")]
    Icc1,
    /// ICC(2,1) = ICC(A,1): two-way random effects, absolute agreement, single rater.
    #[serde(rename = "ICC2")]
    Icc2,
    /// ICC(3,1) = ICC(C,1): two-way mixed effects, consistency, single rater.
    #[serde(rename = "ICC3")]
    Icc3,
    /// ICC(1,k): one-way random effects, mean of k raters.
    #[serde(rename = "ICC1k")]
    Icc1k,
    /// ICC(2,k) = ICC(A,k): absolute agreement, mean of k raters.
    #[serde(rename = "ICC2k")]
    Icc2k,
    /// ICC(3,k) = ICC(C,k): consistency, mean of k raters.
    #[serde(rename = "ICC3k")]
    Icc3k,
}

impl IccForm {
    /// All forms in output order.
    pub const ALL: [IccForm; 6] = [
        IccForm::Icc1,
        IccForm::Icc2,
        IccForm::Icc3,
        IccForm::Icc1k,
        IccForm::Icc2k,
        IccForm::Icc3k,
    ];

    /// Shrout–Fleiss code as used in Concord's JSON: `ICC1`, `ICC2`, …, `ICC3k`.
    pub fn code(self) -> &'static str {
        match self {
            IccForm::Icc1 => "ICC1",
            IccForm::Icc2 => "ICC2",
            IccForm::Icc3 => "ICC3",
            IccForm::Icc1k => "ICC1k",
            IccForm::Icc2k => "ICC2k",
            IccForm::Icc3k => "ICC3k",
        }
    }

    /// McGraw & Wong name: `ICC(1,1)`, `ICC(A,1)`, `ICC(C,1)`, `ICC(1,k)`, `ICC(A,k)`, `ICC(C,k)`.
    pub fn mcgraw_wong_name(self) -> &'static str {
        match self {
            IccForm::Icc1 => "ICC(1,1)",
            IccForm::Icc2 => "ICC(A,1)",
            IccForm::Icc3 => "ICC(C,1)",
            IccForm::Icc1k => "ICC(1,k)",
            IccForm::Icc2k => "ICC(A,k)",
            IccForm::Icc3k => "ICC(C,k)",
        }
    }

    fn index(self) -> usize {
        match self {
            IccForm::Icc1 => 0,
            IccForm::Icc2 => 1,
            IccForm::Icc3 => 2,
            IccForm::Icc1k => 3,
            IccForm::Icc2k => 4,
            IccForm::Icc3k => 5,
        }
    }
}

/// Mean squares of the two-way ANOVA without replication.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeanSquares {
    /// Number of targets (rows).
    pub n: usize,
    /// Number of raters (columns).
    pub k: usize,
    /// Between-targets mean square (MSR, pingouin's `msb`), df n − 1.
    pub rows: f64,
    /// Between-raters mean square (MSC, `msj`), df k − 1.
    pub columns: f64,
    /// Residual mean square (MSE), df (n − 1)(k − 1).
    pub error: f64,
    /// One-way within-target mean square (MSW), df n(k − 1).
    pub within: f64,
}

/// One ICC form with its test and interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IccEstimate {
    /// Which form.
    #[serde(rename = "type")]
    pub form: IccForm,
    /// The coefficient; `None` when undefined (e.g. no variance at all).
    #[serde(rename = "icc")]
    pub value: Option<f64>,
    /// F statistic of the test ICC = 0; may be +∞ under perfect agreement (see module docs).
    pub f: Option<f64>,
    /// Numerator degrees of freedom of the F test.
    pub df1: f64,
    /// Denominator degrees of freedom of the F test.
    pub df2: f64,
    /// Upper-tail p-value of the F test.
    pub p: Option<f64>,
    /// 95% confidence interval [lower, upper] (McGraw & Wong 1996); each bound `None` when undefined.
    pub ci95: [Option<f64>; 2],
}

/// All six ICC forms for one design.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IccTable {
    /// Targets that entered the ANOVA.
    pub n_targets: usize,
    /// Raters (columns).
    pub n_raters: usize,
    /// The ANOVA mean squares; `None` when n < 2 or k < 2.
    pub mean_squares: Option<MeanSquares>,
    /// ICC1, ICC2, ICC3, ICC1k, ICC2k, ICC3k in that order.
    pub estimates: [IccEstimate; 6],
}

impl IccTable {
    /// The estimate for one form.
    pub fn get(&self, form: IccForm) -> &IccEstimate {
        &self.estimates[form.index()]
    }
}

/// An ICC table computed after dropping targets with a missing rating.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IccWithMissing {
    /// Targets in the input.
    pub n_targets: usize,
    /// Targets with a rating from every rater (those used).
    pub n_targets_used: usize,
    /// The table over the complete targets.
    pub table: IccTable,
}

/// Point estimates of ICC(C,1) and ICC(A,1) for a two-rater design.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IccPairEstimates {
    /// ICC(C,1) = ICC(3,1), consistency.
    pub c1: Option<f64>,
    /// ICC(A,1) = ICC(2,1), absolute agreement.
    pub a1: Option<f64>,
}

/// Malformed input to the ICC functions (as opposed to degenerate data, which gives `None`s).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum IccError {
    /// The matrix does not hold n × k values.
    #[error("matrix has {len} values but n × k = {n} × {k} were declared")]
    ShapeMismatch {
        /// Values supplied.
        len: usize,
        /// Declared rows.
        n: usize,
        /// Declared columns.
        k: usize,
    },
    /// A dense matrix holds NaN or an infinity (use [`icc_with_missing`] for missing data).
    #[error("matrix value at target {target}, rater {rater} is not a finite number")]
    NonFinite {
        /// Row (0-based).
        target: usize,
        /// Column (0-based).
        rater: usize,
    },
    /// A resampling index points outside the data.
    #[error("index {index} is out of range for {len} targets")]
    IndexOutOfRange {
        /// Offending index.
        index: usize,
        /// Number of targets.
        len: usize,
    },
}

/// Level of the analytic intervals.
const ALPHA: f64 = 0.05;

fn defined(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Rows processed together in the dense passes (independent accumulator chains).
const BLOCK: usize = 4;

/// ANOVA mean squares of a dense row-major n × k matrix. Two passes (column sums, then
/// deviations from the row, column and grand means), numerically stable, allocating only
/// k-length buffers. `Ok(None)` when n < 2 or k < 2.
pub fn mean_squares(matrix: &[f64], n: usize, k: usize) -> Result<Option<MeanSquares>, IccError> {
    if matrix.len() != n.saturating_mul(k) {
        return Err(IccError::ShapeMismatch {
            len: matrix.len(),
            n,
            k,
        });
    }
    if n < 2 || k < 2 {
        return match matrix.iter().position(|x| !x.is_finite()) {
            Some(pos) => Err(IccError::NonFinite {
                target: pos / k,
                rater: pos % k,
            }),
            None => Ok(None),
        };
    }
    let nf = n as f64;
    let kf = k as f64;
    // Pass 1: column sums. Rows are taken BLOCK at a time with separate accumulators so that
    // the floating-point additions form independent chains (the loop is latency-bound otherwise).
    let mut col_acc = vec![0.0; BLOCK * k];
    let mut blocks = matrix.chunks_exact(BLOCK * k);
    for block in &mut blocks {
        for (acc, &x) in col_acc.iter_mut().zip(block) {
            *acc += x;
        }
    }
    for row in blocks.remainder().chunks_exact(k) {
        for (acc, &x) in col_acc.iter_mut().zip(row) {
            *acc += x;
        }
    }
    let mut col_means = vec![0.0; k];
    for (j, mean) in col_means.iter_mut().enumerate() {
        *mean = (0..BLOCK).map(|r| col_acc[r * k + j]).sum::<f64>();
    }
    let total: f64 = col_means.iter().sum();
    if !total.is_finite() {
        if let Some(pos) = matrix.iter().position(|x| !x.is_finite()) {
            return Err(IccError::NonFinite {
                target: pos / k,
                rater: pos % k,
            });
        }
    }
    for mean in col_means.iter_mut() {
        *mean /= nf;
    }
    let grand = total / (nf * kf);
    // Column effects c_j − ḡ, reused for the residuals e = x − r̄ − (c_j − ḡ).
    let col_effects: Vec<f64> = col_means.iter().map(|&c| c - grand).collect();
    // Pass 2: row and residual sums of squares, BLOCK rows at a time.
    let mut ss_rows_acc = [0.0; BLOCK];
    let mut ss_resid_acc = [0.0; BLOCK];
    let mut blocks = matrix.chunks_exact(BLOCK * k);
    for block in &mut blocks {
        let mut means = [0.0; BLOCK];
        for j in 0..k {
            for (r, m) in means.iter_mut().enumerate() {
                *m += block[r * k + j];
            }
        }
        for (r, m) in means.iter_mut().enumerate() {
            *m /= kf;
            let d = *m - grand;
            ss_rows_acc[r] += d * d;
        }
        for (j, &cj) in col_effects.iter().enumerate() {
            for (r, &m) in means.iter().enumerate() {
                let e = block[r * k + j] - m - cj;
                ss_resid_acc[r] += e * e;
            }
        }
    }
    for row in blocks.remainder().chunks_exact(k) {
        let m = row.iter().sum::<f64>() / kf;
        let d = m - grand;
        ss_rows_acc[0] += d * d;
        for (&x, &cj) in row.iter().zip(&col_effects) {
            let e = x - m - cj;
            ss_resid_acc[0] += e * e;
        }
    }
    let ss_rows = kf * ss_rows_acc.iter().sum::<f64>();
    let ss_resid: f64 = ss_resid_acc.iter().sum();
    let ss_cols = nf * col_effects.iter().map(|&c| c * c).sum::<f64>();
    Ok(Some(MeanSquares {
        n,
        k,
        rows: ss_rows / (nf - 1.0),
        columns: ss_cols / (kf - 1.0),
        error: ss_resid / ((nf - 1.0) * (kf - 1.0)),
        within: (ss_cols + ss_resid) / (nf * (kf - 1.0)),
    }))
}

/// All six ICC forms, with F tests and 95% CIs, from a dense row-major n × k matrix
/// (targets in rows, raters in columns, every cell present and finite).
pub fn icc_all(matrix: &[f64], n: usize, k: usize) -> Result<IccTable, IccError> {
    let ms = mean_squares(matrix, n, k)?;
    Ok(match ms {
        Some(ms) => icc_from_mean_squares(&ms),
        None => undefined_table(n, k),
    })
}

/// All six ICC forms from a row-major n × k matrix with missing cells (`None` or NaN): targets with
/// any missing rating are dropped first, as `pingouin.intraclass_corr(nan_policy="omit")` does.
pub fn icc_with_missing(
    cells: &[Option<f64>],
    n: usize,
    k: usize,
) -> Result<IccWithMissing, IccError> {
    if cells.len() != n.saturating_mul(k) {
        return Err(IccError::ShapeMismatch {
            len: cells.len(),
            n,
            k,
        });
    }
    let mut dense = Vec::with_capacity(cells.len());
    let mut used = 0;
    if k > 0 {
        for row in cells.chunks_exact(k) {
            if row.iter().all(|c| matches!(c, Some(x) if x.is_finite())) {
                dense.extend(row.iter().map(|c| c.unwrap_or(f64::NAN)));
                used += 1;
            }
        }
    }
    let table = icc_all(&dense, used, k)?;
    Ok(IccWithMissing {
        n_targets: n,
        n_targets_used: used,
        table,
    })
}

fn undefined_table(n: usize, k: usize) -> IccTable {
    let nf = n as f64;
    let kf = k as f64;
    let df1 = (nf - 1.0).max(0.0);
    let df_oneway = nf * (kf - 1.0).max(0.0);
    let df_twoway = df1 * (kf - 1.0).max(0.0);
    let est = |form: IccForm, df2: f64| IccEstimate {
        form,
        value: None,
        f: None,
        df1,
        df2,
        p: None,
        ci95: [None, None],
    };
    IccTable {
        n_targets: n,
        n_raters: k,
        mean_squares: None,
        estimates: [
            est(IccForm::Icc1, df_oneway),
            est(IccForm::Icc2, df_twoway),
            est(IccForm::Icc3, df_twoway),
            est(IccForm::Icc1k, df_oneway),
            est(IccForm::Icc2k, df_twoway),
            est(IccForm::Icc3k, df_twoway),
        ],
    }
}

/// F ratio of two mean squares: +∞ when only the denominator vanishes, `None` when both do.
fn f_ratio(num: f64, den: f64) -> Option<f64> {
    if den > 0.0 {
        defined(num / den)
    } else if num > 0.0 {
        Some(f64::INFINITY)
    } else {
        None
    }
}

/// Bounds of a single-rater ICC from the bounds of F: (F − 1) / (F + k − 1), 1 at F = ∞.
fn single_from_f(f: f64, k: f64) -> Option<f64> {
    if f == f64::INFINITY {
        Some(1.0)
    } else {
        defined((f - 1.0) / (f + k - 1.0))
    }
}

/// Bounds of an average-rater ICC from the bounds of F: 1 − 1/F, 1 at F = ∞.
fn average_from_f(f: f64) -> Option<f64> {
    if f == f64::INFINITY {
        Some(1.0)
    } else {
        defined(1.0 - 1.0 / f)
    }
}

/// Upper 1 − α/2 quantile of F(d1, d2).
fn f_upper(d1: f64, d2: f64) -> Option<f64> {
    f_quantile(1.0 - ALPHA / 2.0, d1, d2)
}

/// The F-based interval shared by the one-way and consistency forms.
fn f_interval(f: Option<f64>, df1: f64, df2: f64, k: f64) -> ([Option<f64>; 2], [Option<f64>; 2]) {
    let Some(f) = f else {
        return ([None, None], [None, None]);
    };
    let fl = f_upper(df1, df2).map(|q| f / q);
    let fu = f_upper(df2, df1).map(|q| f * q);
    let single = [
        fl.and_then(|x| single_from_f(x, k)),
        fu.and_then(|x| single_from_f(x, k)),
    ];
    let average = [fl.and_then(average_from_f), fu.and_then(average_from_f)];
    (single, average)
}

/// All six forms from precomputed mean squares (n ≥ 2, k ≥ 2).
pub fn icc_from_mean_squares(ms: &MeanSquares) -> IccTable {
    let n = ms.n as f64;
    let k = ms.k as f64;
    if ms.n < 2 || ms.k < 2 {
        return undefined_table(ms.n, ms.k);
    }
    let (msb, msj, mse, msw) = (ms.rows, ms.columns, ms.error, ms.within);
    let df1 = n - 1.0;
    let df_oneway = n * (k - 1.0);
    let df_twoway = (n - 1.0) * (k - 1.0);

    // One-way forms. With msw = 0 and msb > 0 the raters agree perfectly: the ICC is 1.
    let icc1 = if msw == 0.0 && msb > 0.0 {
        Some(1.0)
    } else {
        defined((msb - msw) / (msb + (k - 1.0) * msw))
    };
    let icc1k = if msb > 0.0 {
        defined((msb - msw) / msb)
    } else {
        None
    };
    let f1 = f_ratio(msb, msw);
    let p1 = f1.and_then(|f| f_sf(f, df1, df_oneway));
    let (ci1, ci1k) = f_interval(f1, df1, df_oneway, k);

    // Consistency forms.
    let icc3 = if mse == 0.0 && msb > 0.0 {
        Some(1.0)
    } else {
        defined((msb - mse) / (msb + (k - 1.0) * mse))
    };
    let icc3k = if msb > 0.0 {
        defined((msb - mse) / msb)
    } else {
        None
    };
    let f3 = f_ratio(msb, mse);
    let p3 = f3.and_then(|f| f_sf(f, df1, df_twoway));
    let (ci3, ci3k) = f_interval(f3, df1, df_twoway, k);

    // Absolute-agreement forms.
    let icc2 = defined((msb - mse) / (msb + (k - 1.0) * mse + k * (msj - mse) / n));
    let icc2k = defined((msb - mse) / (msb + (msj - mse) / n));
    let (ci2, ci2k) = match icc2 {
        Some(r) => agreement_interval(msb, msj, mse, n, k, r),
        None => ([None, None], [None, None]),
    };

    let est = |form, value, f, df2, p, ci95| IccEstimate {
        form,
        value,
        f,
        df1,
        df2,
        p,
        ci95,
    };
    IccTable {
        n_targets: ms.n,
        n_raters: ms.k,
        mean_squares: Some(*ms),
        estimates: [
            est(IccForm::Icc1, icc1, f1, df_oneway, p1, ci1),
            est(IccForm::Icc2, icc2, f3, df_twoway, p3, ci2),
            est(IccForm::Icc3, icc3, f3, df_twoway, p3, ci3),
            est(IccForm::Icc1k, icc1k, f1, df_oneway, p1, ci1k),
            est(IccForm::Icc2k, icc2k, f3, df_twoway, p3, ci2k),
            est(IccForm::Icc3k, icc3k, f3, df_twoway, p3, ci3k),
        ],
    }
}

/// McGraw & Wong (1996) interval for ICC(A,1) and, by Spearman–Brown, ICC(A,k).
/// The Satterthwaite degrees of freedom are written with mse and msj multiplied through
/// (v = vn/vd with F_j = msj/mse cleared), which equals pingouin's expression when mse > 0
/// and stays finite when mse = 0.
fn agreement_interval(
    msb: f64,
    msj: f64,
    mse: f64,
    n: f64,
    k: f64,
    r: f64,
) -> ([Option<f64>; 2], [Option<f64>; 2]) {
    let df1 = n - 1.0;
    let df_twoway = (n - 1.0) * (k - 1.0);
    let c = n * (1.0 + (k - 1.0) * r) - k * r;
    let vn = df_twoway * (k * r * msj + c * mse).powi(2);
    let vd = df1 * k * k * r * r * msj * msj + c * c * mse * mse;
    let v = vn / vd;
    if !(v.is_finite() && v > 0.0) {
        return ([None, None], [None, None]);
    }
    let f2u = f_upper(df1, v);
    let f2l = f_upper(v, df1);
    let spread = k * msj + (k * n - k - n) * mse;
    let lower = f2u.and_then(|q| defined(n * (msb - q * mse) / (q * spread + n * msb)));
    let upper = f2l.and_then(|q| defined(n * (q * msb - mse) / (spread + n * q * msb)));
    let step_up = |x: Option<f64>| x.and_then(|x| defined(x * k / (1.0 + x * (k - 1.0))));
    ([lower, upper], [step_up(lower), step_up(upper)])
}

/// From the pair sums s = a + b and differences d = a − b: msb = var(s)/2, mse = var(d)/2,
/// msj = n·mean(d)²/2, with var over n − 1.
fn pair_estimates(
    n: usize,
    sum_s: f64,
    sum_d: f64,
    dev: impl Fn(f64, f64) -> (f64, f64),
) -> IccPairEstimates {
    if n < 2 {
        return IccPairEstimates { c1: None, a1: None };
    }
    let nf = n as f64;
    let mean_s = sum_s / nf;
    let mean_d = sum_d / nf;
    let (ss_s, ss_d) = dev(mean_s, mean_d);
    let msb = ss_s / (2.0 * (nf - 1.0));
    let mse = ss_d / (2.0 * (nf - 1.0));
    let msj = nf * mean_d * mean_d / 2.0;
    let c1 = if mse == 0.0 && msb > 0.0 {
        Some(1.0)
    } else {
        defined((msb - mse) / (msb + mse))
    };
    let a1 = defined((msb - mse) / (msb + mse + 2.0 * (msj - mse) / nf));
    IccPairEstimates { c1, a1 }
}

/// ICC(C,1) and ICC(A,1) point estimates for an n × 2 design given as (rater 1, rater 2) pairs.
/// Allocation-free; identical to the corresponding rows of [`icc_all`] (up to rounding).
pub fn icc_c1_a1_pairs(pairs: &[(f64, f64)]) -> IccPairEstimates {
    let (sum_s, sum_d) = pairs
        .iter()
        .fold((0.0, 0.0), |(s, d), &(a, b)| (s + a + b, d + a - b));
    pair_estimates(pairs.len(), sum_s, sum_d, |ms, md| {
        pairs.iter().fold((0.0, 0.0), |(ss, sd), &(a, b)| {
            let es = a + b - ms;
            let ed = a - b - md;
            (ss + es * es, sd + ed * ed)
        })
    })
}

/// [`icc_c1_a1_pairs`] over the resample `pairs[indices[0]], pairs[indices[1]], …` without
/// materialising it: the bootstrap's inner loop.
pub fn icc_c1_a1_resampled(
    pairs: &[(f64, f64)],
    indices: &[usize],
) -> Result<IccPairEstimates, IccError> {
    if let Some(&index) = indices.iter().find(|&&i| i >= pairs.len()) {
        return Err(IccError::IndexOutOfRange {
            index,
            len: pairs.len(),
        });
    }
    let (sum_s, sum_d) = indices.iter().fold((0.0, 0.0), |(s, d), &i| {
        let (a, b) = pairs[i];
        (s + a + b, d + a - b)
    });
    Ok(pair_estimates(indices.len(), sum_s, sum_d, |ms, md| {
        indices.iter().fold((0.0, 0.0), |(ss, sd), &i| {
            let (a, b) = pairs[i];
            let es = a + b - ms;
            let ed = a - b - md;
            (ss + es * es, sd + ed * ed)
        })
    }))
}

/// The sums a cluster of (rater 1, rater 2) pairs contributes to ICC(C,1) and ICC(A,1) of a
/// two-rater design: its count and the sums and sums of squares of s = a + b and d = a − b, each
/// taken about a fixed centre (any centre gives the same ICCs; the full sample's means keep the
/// squares small, so the one-pass variance loses no precision). A resample of whole clusters is
/// then summed from these in one pass over the clusters drawn, whatever their sizes.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct PairMoments {
    /// Pairs in the cluster.
    pub n: f64,
    /// Σ (s − centre_s).
    pub s: f64,
    /// Σ (d − centre_d).
    pub d: f64,
    /// Σ (s − centre_s)².
    pub ss: f64,
    /// Σ (d − centre_d)².
    pub dd: f64,
}

impl PairMoments {
    /// Add one pair, with the centre (of s, of d) every cluster of a sample shares.
    pub fn add(&mut self, (a, b): (f64, f64), centre: (f64, f64)) {
        let s = a + b - centre.0;
        let d = a - b - centre.1;
        self.n += 1.0;
        self.s += s;
        self.d += d;
        self.ss += s * s;
        self.dd += d * d;
    }
}

/// The centre [`PairMoments`] are taken about: the means of s = a + b and d = a − b over `pairs`
/// (zero for none).
pub fn pair_centre(pairs: &[(f64, f64)]) -> (f64, f64) {
    if pairs.is_empty() {
        return (0.0, 0.0);
    }
    let n = pairs.len() as f64;
    let (s, d) = pairs
        .iter()
        .fold((0.0, 0.0), |(s, d), &(a, b)| (s + a + b, d + a - b));
    (s / n, d / n)
}

/// ICC(C,1) and ICC(A,1) of the pairs of the clusters `clusters[indices[0]], clusters[indices[1]],
/// …` (a cluster drawn twice counts twice), from their [`PairMoments`] about `centre`: the cluster bootstrap's
/// inner loop, one pass over the indices. Equal, up to rounding, to [`icc_c1_a1_pairs`] of the
/// pairs those clusters hold.
pub fn icc_c1_a1_of_clusters(
    clusters: &[PairMoments],
    centre: (f64, f64),
    indices: &[usize],
) -> Result<IccPairEstimates, IccError> {
    if let Some(&index) = indices.iter().find(|&&i| i >= clusters.len()) {
        return Err(IccError::IndexOutOfRange {
            index,
            len: clusters.len(),
        });
    }
    let mut total = PairMoments::default();
    for &i in indices {
        let c = &clusters[i];
        total.n += c.n;
        total.s += c.s;
        total.d += c.d;
        total.ss += c.ss;
        total.dd += c.dd;
    }
    let n = total.n.round() as usize;
    let nf = total.n;
    // The sums of s and d themselves (ICC(A,1) needs the mean difference, not its offset).
    let (sum_s, sum_d) = (total.s + nf * centre.0, total.d + nf * centre.1);
    Ok(pair_estimates(n, sum_s, sum_d, |ms, md| {
        // Σ(x − m)² = Σ(x − c)² − n·(m − c)² about the shared centre c; never below zero.
        let (es, ed) = (ms - centre.0, md - centre.1);
        (
            (total.ss - nf * es * es).max(0.0),
            (total.dd - nf * ed * ed).max(0.0),
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_fast_path_equals_full_table() {
        let pairs = [
            (1.0, 2.0),
            (3.0, 3.5),
            (2.0, 4.0),
            (5.0, 4.5),
            (4.0, 4.0),
            (2.5, 1.0),
        ];
        let flat: Vec<f64> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
        let table = icc_all(&flat, pairs.len(), 2).unwrap();
        let fast = icc_c1_a1_pairs(&pairs);
        let c1 = table.get(IccForm::Icc3).value.unwrap();
        let a1 = table.get(IccForm::Icc2).value.unwrap();
        assert!(
            (fast.c1.unwrap() - c1).abs() < 1e-12,
            "pair formula must equal the ANOVA ICC(C,1)"
        );
        assert!(
            (fast.a1.unwrap() - a1).abs() < 1e-12,
            "pair formula must equal the ANOVA ICC(A,1)"
        );
        let idx: Vec<usize> = (0..pairs.len()).collect();
        let resampled = icc_c1_a1_resampled(&pairs, &idx).unwrap();
        assert_eq!(
            resampled, fast,
            "the identity resample must reproduce the full-sample estimate"
        );
    }

    #[test]
    fn cluster_moments_give_the_pairs_estimate() {
        let pairs = [
            (1.0, 2.0),
            (3.0, 3.5),
            (2.0, 4.0),
            (5.0, 4.5),
            (4.0, 4.0),
            (2.5, 1.0),
            (3.0, 2.0),
        ];
        let centre = pair_centre(&pairs);
        // Clusters of sizes 3, 1 and 3; cluster 2 drawn twice, cluster 1 left out.
        let mut clusters = [PairMoments::default(); 3];
        for (i, &p) in pairs.iter().enumerate() {
            clusters[[0, 0, 0, 1, 2, 2, 2][i]].add(p, centre);
        }
        let drawn: Vec<(f64, f64)> = pairs[..3]
            .iter()
            .chain(&pairs[4..])
            .chain(&pairs[4..])
            .copied()
            .collect();
        let direct = icc_c1_a1_pairs(&drawn);
        let summed = icc_c1_a1_of_clusters(&clusters, centre, &[2, 0, 2]).unwrap();
        assert!(
            (direct.c1.unwrap() - summed.c1.unwrap()).abs() < 1e-12
                && (direct.a1.unwrap() - summed.a1.unwrap()).abs() < 1e-12,
            "a resample of whole clusters summed from their moments must equal the ICCs of the \
             pairs it holds: {direct:?} vs {summed:?}"
        );
        assert!(
            icc_c1_a1_of_clusters(&clusters, centre, &[3]).is_err(),
            "an index past the clusters is malformed input, not a value"
        );
        assert_eq!(
            icc_c1_a1_of_clusters(&clusters, centre, &[1]).unwrap(),
            IccPairEstimates { c1: None, a1: None },
            "one pair has no ICC"
        );
    }

    #[test]
    fn degenerate_designs_are_undefined_not_nan() {
        let t = icc_all(&[1.0, 2.0, 3.0], 1, 3).unwrap();
        assert!(
            t.estimates.iter().all(|e| e.value.is_none()),
            "one target gives no ICC"
        );
        let t = icc_all(&[3.0; 12], 4, 3).unwrap();
        assert!(
            t.estimates
                .iter()
                .all(|e| e.value.is_none() && e.p.is_none()),
            "zero variance gives no ICC"
        );
        let t = icc_all(&[], 0, 0).unwrap();
        assert!(t.mean_squares.is_none(), "an empty design has no ANOVA");
        assert!(
            matches!(
                icc_all(&[1.0, f64::NAN], 1, 2),
                Err(IccError::NonFinite { .. })
            ),
            "NaN in a dense matrix is an input error"
        );
        assert!(
            matches!(
                icc_all(&[1.0, 2.0, 3.0], 2, 2),
                Err(IccError::ShapeMismatch { .. })
            ),
            "a short matrix is an input error"
        );
    }

    #[test]
    fn non_finite_cells_are_located() {
        let m = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, f64::INFINITY, 9.0, 10.0];
        assert_eq!(
            icc_all(&m, 5, 2),
            Err(IccError::NonFinite {
                target: 3,
                rater: 1
            }),
            "an infinite cell is reported at its target and rater"
        );
    }

    #[test]
    fn perfect_consistency_gives_one_and_infinite_f() {
        // Rater 2 = rater 1 + 1: residual mean square 0.
        let m = [1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 3.0, 4.0];
        let t = icc_all(&m, 4, 2).unwrap();
        let c = t.get(IccForm::Icc3);
        assert_eq!(
            c.value,
            Some(1.0),
            "perfectly parallel raters are perfectly consistent"
        );
        assert_eq!(
            c.f,
            Some(f64::INFINITY),
            "the F ratio diverges when the error mean square is 0"
        );
        assert_eq!(c.p, Some(0.0), "an infinite F has p = 0");
        assert_eq!(
            c.ci95,
            [Some(1.0), Some(1.0)],
            "the interval collapses on 1"
        );
        let a = t.get(IccForm::Icc2);
        assert!(
            a.value.unwrap() < 1.0 && a.ci95.iter().all(|b| b.is_some()),
            "absolute agreement stays defined below 1 with a rater offset"
        );
    }

    #[test]
    fn constant_targets_give_minus_one_over_k_minus_one() {
        // Every target has the same mean, raters disagree: msb = 0.
        let m = [1.0, 3.0, 3.0, 1.0, 1.0, 3.0, 3.0, 1.0];
        let t = icc_all(&m, 4, 2).unwrap();
        assert_eq!(
            t.get(IccForm::Icc3).value,
            Some(-1.0),
            "msb = 0 gives ICC(C,1) = -1/(k-1)"
        );
        assert_eq!(
            t.get(IccForm::Icc3k).value,
            None,
            "the average-measure form divides by msb = 0"
        );
    }

    #[test]
    fn missing_rows_are_dropped() {
        let cells = [
            Some(1.0),
            Some(2.0),
            None,
            Some(3.0),
            Some(4.0),
            Some(4.0),
            Some(2.0),
            Some(3.0),
            Some(5.0),
            Some(5.5),
        ];
        let r = icc_with_missing(&cells, 5, 2).unwrap();
        assert_eq!(
            r.n_targets_used, 4,
            "the one target with a missing rating is dropped"
        );
        assert_eq!(r.n_targets, 5, "the input count is kept for reporting");
    }
}
