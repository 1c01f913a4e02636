//! Agreement on categorical (nominal or ordinal) ratings: percent agreement, Cohen's κ (unweighted,
//! linear and quadratic weights), Fleiss' κ, Gwet's AC1 and weighted AC2, Krippendorff's α for the
//! nominal, ordinal, interval and ratio metrics, PABAK with the prevalence and bias indices of Byrt,
//! Bishop & Carlin (1993), and the accuracy of a labelling against a reference (sensitivity,
//! specificity, PPV, NPV with Wilson score intervals).
//!
//! Ratings are an items × raters matrix of category indices into a declared category set; a
//! category that nobody used still counts (it changes AC1's chance agreement and the weights).
//! Missing cells are allowed everywhere:
//! - percent agreement, Fleiss' κ and Gwet's AC1/AC2 follow Gwet (2014) and the irrCAC package:
//!   the observed agreement averages over items rated at least twice, each item weighted equally,
//!   and the category prevalences average the per-item shares over items rated at least once;
//!   with complete data this is Fleiss (1971) exactly;
//! - Cohen's κ uses the items both raters rated (the classical definition, as statsmodels and
//!   scikit-learn); irrCAC instead takes each rater's marginals from all the items that rater
//!   rated, which differs when data are missing;
//! - Krippendorff's α uses every pairable value (units with at least two values), as Krippendorff
//!   (2011) and the `krippendorff` package.

use serde::Serialize;
use thiserror::Error;

use crate::special::z_critical;

/// Malformed categorical input.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CategoricalError {
    /// The cell vector is not items × raters long.
    #[error("ratings hold {len} cells but {items} items × {raters} raters were declared")]
    ShapeMismatch {
        /// Cells supplied.
        len: usize,
        /// Declared items.
        items: usize,
        /// Declared raters.
        raters: usize,
    },
    /// A cell names a category outside the declared set.
    #[error("item {item}, rater {rater}: category index {index} is outside the {categories} declared categories")]
    UnknownCategory {
        /// 0-based item.
        item: usize,
        /// 0-based rater.
        rater: usize,
        /// Offending index.
        index: usize,
        /// Size of the category set.
        categories: usize,
    },
    /// A category value is NaN or infinite.
    #[error("category value {position} is not a finite number")]
    NonFiniteCategory {
        /// 0-based position in the category set.
        position: usize,
    },
    /// Two declared categories have the same value.
    #[error("category value {value} is declared twice")]
    DuplicateCategory {
        /// The repeated value.
        value: f64,
    },
    /// Reference and predicted labellings differ in length.
    #[error("reference has {reference} labels but the prediction has {predicted}")]
    LengthMismatch {
        /// Reference length.
        reference: usize,
        /// Prediction length.
        predicted: usize,
    },
}

/// An items × raters matrix of category indices (row-major), with the numeric value of each
/// declared category (used by the weights and by Krippendorff's interval and ratio metrics; for
/// purely nominal labels pass their positions 0, 1, 2, …). Categories are ordered as declared,
/// which is the order the ordinal metric uses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoricalRatings {
    n_items: usize,
    n_raters: usize,
    categories: Vec<f64>,
    cells: Vec<Option<usize>>,
}

impl CategoricalRatings {
    /// Build from category values and row-major cells of indices into them.
    pub fn new(
        categories: Vec<f64>,
        n_items: usize,
        n_raters: usize,
        cells: Vec<Option<usize>>,
    ) -> Result<Self, CategoricalError> {
        if cells.len() != n_items.saturating_mul(n_raters) {
            return Err(CategoricalError::ShapeMismatch {
                len: cells.len(),
                items: n_items,
                raters: n_raters,
            });
        }
        check_categories(&categories)?;
        for (pos, cell) in cells.iter().enumerate() {
            if let Some(index) = *cell {
                if index >= categories.len() {
                    return Err(CategoricalError::UnknownCategory {
                        item: pos / n_raters,
                        rater: pos % n_raters,
                        index,
                        categories: categories.len(),
                    });
                }
            }
        }
        Ok(Self {
            n_items,
            n_raters,
            categories,
            cells,
        })
    }

    /// Build from rows of numeric labels (`None` = missing), each label being one of `categories`.
    pub fn from_values(
        categories: &[f64],
        rows: &[Vec<Option<f64>>],
    ) -> Result<Self, CategoricalError> {
        check_categories(categories)?;
        let n_raters = rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut cells = Vec::with_capacity(rows.len() * n_raters);
        for (item, row) in rows.iter().enumerate() {
            for rater in 0..n_raters {
                let cell = match row.get(rater).copied().flatten() {
                    None => None,
                    Some(v) => Some(categories.iter().position(|&c| c == v).ok_or(
                        CategoricalError::UnknownCategory {
                            item,
                            rater,
                            index: usize::MAX,
                            categories: categories.len(),
                        },
                    )?),
                };
                cells.push(cell);
            }
        }
        Self::new(categories.to_vec(), rows.len(), n_raters, cells)
    }

    /// Number of items.
    pub fn n_items(&self) -> usize {
        self.n_items
    }

    /// Number of raters.
    pub fn n_raters(&self) -> usize {
        self.n_raters
    }

    /// Declared category values.
    pub fn categories(&self) -> &[f64] {
        &self.categories
    }

    /// The rating of `item` by `rater`.
    pub fn get(&self, item: usize, rater: usize) -> Option<usize> {
        self.cells[item * self.n_raters + rater]
    }

    fn rows(&self) -> impl Iterator<Item = &[Option<usize>]> {
        self.cells
            .chunks(self.n_raters.max(1))
            .take(if self.n_raters == 0 { 0 } else { self.n_items })
    }

    /// Per-item counts r_ik of raters choosing each category (items × categories).
    fn item_counts(&self) -> Vec<f64> {
        let q = self.categories.len();
        let mut counts = vec![0.0; self.n_items * q];
        for (item, row) in self.rows().enumerate() {
            for c in row.iter().flatten() {
                counts[item * q + c] += 1.0;
            }
        }
        counts
    }
}

fn check_categories(categories: &[f64]) -> Result<(), CategoricalError> {
    for (position, &v) in categories.iter().enumerate() {
        if !v.is_finite() {
            return Err(CategoricalError::NonFiniteCategory { position });
        }
        if categories[..position].contains(&v) {
            return Err(CategoricalError::DuplicateCategory { value: v });
        }
    }
    Ok(())
}

/// Agreement weights between categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Weights {
    /// 1 on the diagonal, 0 elsewhere.
    Unweighted,
    /// 1 − |v_k − v_l| / (max − min).
    Linear,
    /// 1 − (v_k − v_l)² / (max − min)².
    Quadratic,
}

/// The q × q agreement-weight matrix (row-major) for the category values.
pub fn weight_matrix(values: &[f64], weights: Weights) -> Vec<f64> {
    let q = values.len();
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let range = max - min;
    let mut w = vec![0.0; q * q];
    for k in 0..q {
        for l in 0..q {
            w[k * q + l] = if k == l {
                1.0
            } else if range > 0.0 {
                let d = (values[k] - values[l]).abs() / range;
                match weights {
                    Weights::Unweighted => 0.0,
                    Weights::Linear => 1.0 - d,
                    Weights::Quadratic => 1.0 - d * d,
                }
            } else {
                0.0
            };
        }
    }
    w
}

fn defined(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Observed agreement p_a and category prevalences π_k in Gwet's multi-rater form.
/// `None` when no item has two ratings.
fn gwet_observed(r: &CategoricalRatings, w: &[f64]) -> Option<(f64, Vec<f64>)> {
    let q = r.categories.len();
    let counts = r.item_counts();
    let mut pa_sum = 0.0;
    let mut n2 = 0usize;
    let mut n1 = 0usize;
    let mut pi = vec![0.0; q];
    for item in 0..r.n_items {
        let row = &counts[item * q..(item + 1) * q];
        let ri: f64 = row.iter().sum();
        if ri >= 1.0 {
            n1 += 1;
            for (p, &c) in pi.iter_mut().zip(row) {
                *p += c / ri;
            }
        }
        if ri >= 2.0 {
            let mut s = 0.0;
            for k in 0..q {
                let weighted: f64 = (0..q).map(|l| w[k * q + l] * row[l]).sum();
                s += row[k] * (weighted - 1.0);
            }
            pa_sum += s / (ri * (ri - 1.0));
            n2 += 1;
        }
    }
    if n2 == 0 {
        return None;
    }
    for p in pi.iter_mut() {
        *p /= n1 as f64;
    }
    Some((pa_sum / n2 as f64, pi))
}

/// Percent agreement: for two raters, the share of items both rated that they labelled
/// identically; for more, the mean over items rated at least twice of the share of agreeing rater
/// pairs (Fleiss' P̄). The two coincide for two raters.
pub fn percent_agreement(r: &CategoricalRatings) -> Option<f64> {
    let w = weight_matrix(&r.categories, Weights::Unweighted);
    gwet_observed(r, &w).map(|(pa, _)| pa)
}

/// Fleiss' (1971) κ, with missing ratings handled as in Gwet (2014) / irrCAC.
pub fn fleiss_kappa(r: &CategoricalRatings) -> Option<f64> {
    fleiss_kappa_weighted(r, Weights::Unweighted)
}

/// Fleiss' κ with agreement weights (chance agreement Σ w_kl π_k π_l).
pub fn fleiss_kappa_weighted(r: &CategoricalRatings, weights: Weights) -> Option<f64> {
    let q = r.categories.len();
    let w = weight_matrix(&r.categories, weights);
    let (pa, pi) = gwet_observed(r, &w)?;
    let mut pe = 0.0;
    for k in 0..q {
        for l in 0..q {
            pe += w[k * q + l] * pi[k] * pi[l];
        }
    }
    defined((pa - pe) / (1.0 - pe))
}

/// Gwet's AC1 (unweighted AC2).
pub fn gwet_ac1(r: &CategoricalRatings) -> Option<f64> {
    gwet_ac2(r, Weights::Unweighted)
}

/// Gwet's AC2: chance agreement T_w / (q (q − 1)) · Σ π_k (1 − π_k), T_w the sum of all weights,
/// q the number of declared categories. Undefined for fewer than two categories.
pub fn gwet_ac2(r: &CategoricalRatings, weights: Weights) -> Option<f64> {
    let q = r.categories.len();
    if q < 2 {
        return None;
    }
    let w = weight_matrix(&r.categories, weights);
    let (pa, pi) = gwet_observed(r, &w)?;
    let tw: f64 = w.iter().sum();
    let qf = q as f64;
    let pe = tw / (qf * (qf - 1.0)) * pi.iter().map(|p| p * (1.0 - p)).sum::<f64>();
    defined((pa - pe) / (1.0 - pe))
}

/// Two-rater contingency table (q × q, row = rater 0, column = rater 1) over items both rated.
fn two_rater_table(r: &CategoricalRatings) -> Option<(Vec<f64>, f64)> {
    if r.n_raters != 2 {
        return None;
    }
    let q = r.categories.len();
    let mut t = vec![0.0; q * q];
    let mut n = 0.0;
    for row in r.rows() {
        if let (Some(a), Some(b)) = (row[0], row[1]) {
            t[a * q + b] += 1.0;
            n += 1.0;
        }
    }
    (n > 0.0).then_some((t, n))
}

/// Cohen's κ from a q × q table of counts (row-major).
pub fn cohen_kappa_table(table: &[f64], q: usize, w: &[f64]) -> Option<f64> {
    if table.len() != q * q || w.len() != q * q {
        return None;
    }
    let n: f64 = table.iter().sum();
    if n <= 0.0 {
        return None;
    }
    let mut rows = vec![0.0; q];
    let mut cols = vec![0.0; q];
    let mut po = 0.0;
    for k in 0..q {
        for l in 0..q {
            let p = table[k * q + l] / n;
            rows[k] += p;
            cols[l] += p;
            po += w[k * q + l] * p;
        }
    }
    let mut pe = 0.0;
    for k in 0..q {
        for l in 0..q {
            pe += w[k * q + l] * rows[k] * cols[l];
        }
    }
    defined((po - pe) / (1.0 - pe))
}

/// Cohen's κ for exactly two raters (else `None`), over the items both rated.
pub fn cohen_kappa(r: &CategoricalRatings, weights: Weights) -> Option<f64> {
    let (t, _) = two_rater_table(r)?;
    let q = r.categories.len();
    cohen_kappa_table(&t, q, &weight_matrix(&r.categories, weights))
}

/// Prevalence- and bias-adjusted κ and the two indices of Byrt, Bishop & Carlin (1993).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pabak {
    /// Observed agreement p_o over items both raters rated.
    pub observed: f64,
    /// PABAK = (q·p_o − 1)/(q − 1); for two categories 2 p_o − 1.
    pub pabak: Option<f64>,
    /// Prevalence index |p₁₁ − p₂₂| (two categories only).
    pub prevalence_index: Option<f64>,
    /// Bias index |p₁₂ − p₂₁| (two categories only).
    pub bias_index: Option<f64>,
}

/// PABAK and the prevalence and bias indices for two raters.
pub fn pabak(r: &CategoricalRatings) -> Option<Pabak> {
    let (t, n) = two_rater_table(r)?;
    let q = r.categories.len();
    let observed = (0..q).map(|k| t[k * q + k]).sum::<f64>() / n;
    let qf = q as f64;
    let pabak = (q >= 2).then(|| (qf * observed - 1.0) / (qf - 1.0));
    let (prevalence_index, bias_index) = if q == 2 {
        (
            Some(((t[0] - t[3]) / n).abs()),
            Some(((t[1] - t[2]) / n).abs()),
        )
    } else {
        (None, None)
    };
    Some(Pabak {
        observed,
        pabak,
        prevalence_index,
        bias_index,
    })
}

/// Krippendorff's difference functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AlphaMetric {
    /// δ = 0 if equal, 1 otherwise.
    Nominal,
    /// δ = (Σ_{g from c to k} n_g − (n_c + n_k)/2)², on the declared order.
    Ordinal,
    /// δ = (v_c − v_k)².
    Interval,
    /// δ = ((v_c − v_k)/(v_c + v_k))².
    Ratio,
}

/// Krippendorff's α from the coincidence matrix of pairable values.
pub fn krippendorff_alpha(r: &CategoricalRatings, metric: AlphaMetric) -> Option<f64> {
    let q = r.categories.len();
    let mut o = vec![0.0; q * q];
    let mut counts = vec![0.0; q];
    for row in r.rows() {
        counts.iter_mut().for_each(|c| *c = 0.0);
        let mut m = 0.0;
        for c in row.iter().flatten() {
            counts[*c] += 1.0;
            m += 1.0;
        }
        if m < 2.0 {
            continue;
        }
        for c in 0..q {
            if counts[c] == 0.0 {
                continue;
            }
            for k in 0..q {
                let pairs = if c == k {
                    counts[c] * (counts[c] - 1.0)
                } else {
                    counts[c] * counts[k]
                };
                o[c * q + k] += pairs / (m - 1.0);
            }
        }
    }
    let nc: Vec<f64> = (0..q).map(|c| (0..q).map(|k| o[c * q + k]).sum()).collect();
    let n: f64 = nc.iter().sum();
    if n <= 1.0 {
        return None;
    }
    let v = &r.categories;
    let delta = |c: usize, k: usize| -> f64 {
        match metric {
            AlphaMetric::Nominal => f64::from(u8::from(c != k)),
            AlphaMetric::Interval => (v[c] - v[k]).powi(2),
            AlphaMetric::Ratio => {
                let s = v[c] + v[k];
                if s == 0.0 {
                    0.0
                } else {
                    ((v[c] - v[k]) / s).powi(2)
                }
            }
            AlphaMetric::Ordinal => {
                let (lo, hi) = if c <= k { (c, k) } else { (k, c) };
                let between: f64 = nc[lo..=hi].iter().sum();
                (between - (nc[c] + nc[k]) / 2.0).powi(2)
            }
        }
    };
    let (mut disagree_obs, mut disagree_exp) = (0.0, 0.0);
    for c in 0..q {
        for k in 0..q {
            let d = delta(c, k);
            disagree_obs += o[c * q + k] * d;
            disagree_exp += nc[c] * nc[k] * d;
        }
    }
    if disagree_exp <= 0.0 {
        return None;
    }
    defined(1.0 - (n - 1.0) * disagree_obs / disagree_exp)
}

/// Positive and negative specific agreement for a two-category (binary) rating.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpecificAgreement {
    /// Agreement on the second declared category (e.g. `1`, "present").
    pub positive: Option<f64>,
    /// Agreement on the first declared category (e.g. `0`, "absent").
    pub negative: Option<f64>,
}

/// Specific agreement on category `k`, generalised to many raters and missing ratings
/// (Uebersax 1982; Fleiss 1971): the share of rater pairs involving a `k` rating in which the
/// other rating is also `k`, Σ_i n_ik (n_ik − 1) / Σ_i n_ik (n_i − 1) over items rated at least
/// twice (n_i ratings, n_ik of them `k`). With two raters it is 2a / (2a + b + c), Dice's
/// coefficient. `None` when no pair involves `k`.
pub fn specific_agreement(r: &CategoricalRatings, k: usize) -> Option<f64> {
    let q = r.categories.len();
    if k >= q {
        return None;
    }
    let counts = r.item_counts();
    let (mut agree, mut total) = (0.0, 0.0);
    for item in 0..r.n_items {
        let row = &counts[item * q..(item + 1) * q];
        let ni: f64 = row.iter().sum();
        if ni < 2.0 {
            continue;
        }
        agree += row[k] * (row[k] - 1.0);
        total += row[k] * (ni - 1.0);
    }
    (total > 0.0).then(|| agree / total)
}

/// Positive (second category) and negative (first category) specific agreement; `None` unless
/// exactly two categories are declared.
pub fn specific_agreement_binary(r: &CategoricalRatings) -> Option<SpecificAgreement> {
    (r.categories.len() == 2).then(|| SpecificAgreement {
        positive: specific_agreement(r, 1),
        negative: specific_agreement(r, 0),
    })
}

/// A coefficient with its standard error and confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CoefficientInterval {
    /// The coefficient.
    pub value: f64,
    /// Its standard error.
    pub se: f64,
    /// The interval [lower, upper].
    pub ci: [f64; 2],
}

/// Gwet's AC1/AC2 with the variance of Gwet (2008; 2014, §5) as irrCAC computes it: per-item
/// terms ac_i* = ac_i − 2(1 − AC)(pe_i − pe)/(1 − pe), with ac_i = (n/n₂)(pa_i − pe·[r_i ≥ 2])/(1 − pe)
/// and pe_i = T_w/(q(q − 1)) · Σ_k r_ik(1 − π_k)/r_i; Var = Σ (ac_i* − AC)² / (n(n − 1)) over the n
/// items rated at least once (no finite-population correction); interval AC ± t_{n−1} · SE with
/// the upper limit capped at 1 (irrCAC leaves the lower one uncapped).
pub fn gwet_ac2_interval(
    r: &CategoricalRatings,
    weights: Weights,
    level: f64,
) -> Option<CoefficientInterval> {
    let q = r.categories.len();
    if q < 2 || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let w = weight_matrix(&r.categories, weights);
    let (pa, pi) = gwet_observed(r, &w)?;
    let tw: f64 = w.iter().sum();
    let qf = q as f64;
    let scale = tw / (qf * (qf - 1.0));
    let pe = scale * pi.iter().map(|p| p * (1.0 - p)).sum::<f64>();
    let ac = (pa - pe) / (1.0 - pe);
    if !ac.is_finite() {
        return None;
    }
    let counts = r.item_counts();
    let rows: Vec<&[f64]> = (0..r.n_items)
        .map(|i| &counts[i * q..(i + 1) * q])
        .filter(|row| row.iter().sum::<f64>() >= 1.0)
        .collect();
    let n = rows.len() as f64;
    let n2 = rows
        .iter()
        .filter(|row| row.iter().sum::<f64>() >= 2.0)
        .count() as f64;
    if n < 2.0 {
        return None;
    }
    let mut ss = 0.0;
    for row in &rows {
        let ri: f64 = row.iter().sum();
        let mut sum_q = 0.0;
        for k in 0..q {
            let weighted: f64 = (0..q).map(|l| w[k * q + l] * row[l]).sum();
            sum_q += row[k] * (weighted - 1.0);
        }
        let den = ri * (ri - 1.0);
        let pa_i = sum_q / if den == 0.0 { -1.0 } else { den };
        let pe_r2 = if ri >= 2.0 { pe } else { 0.0 };
        let ac_i = (n / n2) * (pa_i - pe_r2) / (1.0 - pe);
        let pe_i = scale * (0..q).map(|k| row[k] * (1.0 - pi[k])).sum::<f64>() / ri;
        let ac_x = ac_i - 2.0 * (1.0 - ac) * (pe_i - pe) / (1.0 - pe);
        ss += (ac_x - ac) * (ac_x - ac);
    }
    let mut se = (ss / (n * (n - 1.0))).sqrt();
    if se == 0.0 {
        se = 1e-15;
    }
    let t = crate::special::t_critical(1.0 - level, n - 1.0)?;
    Some(CoefficientInterval {
        value: ac,
        se,
        ci: [ac - t * se, (ac + t * se).min(1.0)],
    })
}

impl CategoricalRatings {
    /// The ratings of the items at `indices` (a bootstrap resample), in that order.
    pub fn resample(&self, indices: &[usize]) -> CategoricalRatings {
        let mut cells = Vec::with_capacity(indices.len() * self.n_raters);
        for &i in indices {
            cells.extend_from_slice(&self.cells[i * self.n_raters..(i + 1) * self.n_raters]);
        }
        CategoricalRatings {
            categories: self.categories.clone(),
            n_items: indices.len(),
            n_raters: self.n_raters,
            cells,
        }
    }
}

/// Percentile bootstrap interval of Krippendorff's α: items (units) resampled with replacement,
/// α recomputed per resample, undefined replicates dropped, numpy-style percentiles. The
/// generator is the caller's (seeded for reproducible bounds).
pub fn krippendorff_alpha_bootstrap<R: rand::Rng + ?Sized>(
    r: &CategoricalRatings,
    metric: AlphaMetric,
    options: &crate::bootstrap::BootstrapOptions,
    rng: &mut R,
) -> Option<crate::bootstrap::BootstrapInterval> {
    crate::bootstrap::percentile_ci(r.n_items, options, rng, |idx| {
        krippendorff_alpha(&r.resample(idx), metric)
    })
    .ok()
}

/// Krippendorff's α for the three metrics Concord reports by default.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AlphaByMetric {
    /// Nominal metric.
    pub nominal: Option<f64>,
    /// Ordinal metric (declared category order).
    pub ordinal: Option<f64>,
    /// Interval metric (category values).
    pub interval: Option<f64>,
}

/// The categorical agreement summary printed by `concord stats agreement`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgreementSummary {
    /// See [`percent_agreement`].
    pub percent_agreement: Option<f64>,
    /// Unweighted Cohen's κ (exactly two raters, else `None`).
    pub cohen_kappa: Option<f64>,
    /// Fleiss' κ.
    pub fleiss_kappa: Option<f64>,
    /// Gwet's AC1.
    pub gwet_ac1: Option<f64>,
    /// Krippendorff's α by metric.
    pub krippendorff_alpha: AlphaByMetric,
    /// Items in the data.
    pub n_items: usize,
    /// Raters in the data.
    pub n_raters: usize,
}

/// All the coefficients of [`AgreementSummary`].
pub fn agreement_summary(r: &CategoricalRatings) -> AgreementSummary {
    AgreementSummary {
        percent_agreement: percent_agreement(r),
        cohen_kappa: cohen_kappa(r, Weights::Unweighted),
        fleiss_kappa: fleiss_kappa(r),
        gwet_ac1: gwet_ac1(r),
        krippendorff_alpha: AlphaByMetric {
            nominal: krippendorff_alpha(r, AlphaMetric::Nominal),
            ordinal: krippendorff_alpha(r, AlphaMetric::Ordinal),
            interval: krippendorff_alpha(r, AlphaMetric::Interval),
        },
        n_items: r.n_items,
        n_raters: r.n_raters,
    }
}

/// A proportion with its 95% Wilson score interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proportion {
    /// Successes.
    pub count: u64,
    /// Trials.
    pub total: u64,
    /// count / total; `None` when total is 0.
    pub estimate: Option<f64>,
    /// Wilson score interval; `None` when total is 0.
    pub ci95: Option<[f64; 2]>,
}

/// Wilson (1927) score interval at level 1 − `alpha` for `count` successes in `total` trials.
pub fn wilson_interval(count: u64, total: u64, alpha: f64) -> Option<[f64; 2]> {
    if total == 0 || count > total {
        return None;
    }
    let z = z_critical(alpha);
    let n = total as f64;
    let p = count as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At p = 0 (p = 1) the lower (upper) bound is exactly 0 (1); avoid rounding residue there.
    let lower = if count == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let upper = if count == total {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    Some([lower, upper])
}

fn proportion(count: u64, total: u64) -> Proportion {
    Proportion {
        count,
        total,
        estimate: (total > 0).then(|| count as f64 / total as f64),
        ci95: wilson_interval(count, total, 0.05),
    }
}

/// Accuracy of a binary labelling against a reference labelling.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagnosticAccuracy {
    /// Reference positive, labelled positive.
    pub true_positive: u64,
    /// Reference negative, labelled positive.
    pub false_positive: u64,
    /// Reference positive, labelled negative.
    pub false_negative: u64,
    /// Reference negative, labelled negative.
    pub true_negative: u64,
    /// TP / (TP + FN).
    pub sensitivity: Proportion,
    /// TN / (TN + FP).
    pub specificity: Proportion,
    /// TP / (TP + FP).
    pub ppv: Proportion,
    /// TN / (TN + FN).
    pub npv: Proportion,
}

/// Sensitivity, specificity, PPV and NPV of `predicted` against `reference` (true = positive).
pub fn diagnostic_accuracy(
    reference: &[bool],
    predicted: &[bool],
) -> Result<DiagnosticAccuracy, CategoricalError> {
    if reference.len() != predicted.len() {
        return Err(CategoricalError::LengthMismatch {
            reference: reference.len(),
            predicted: predicted.len(),
        });
    }
    let (mut tp, mut fp, mut fneg, mut tn) = (0u64, 0u64, 0u64, 0u64);
    for (&truth, &label) in reference.iter().zip(predicted) {
        match (truth, label) {
            (true, true) => tp += 1,
            (false, true) => fp += 1,
            (true, false) => fneg += 1,
            (false, false) => tn += 1,
        }
    }
    Ok(DiagnosticAccuracy {
        true_positive: tp,
        false_positive: fp,
        false_negative: fneg,
        true_negative: tn,
        sensitivity: proportion(tp, tp + fneg),
        specificity: proportion(tn, tn + fp),
        ppv: proportion(tp, tp + fp),
        npv: proportion(tn, tn + fneg),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_raters(a: &[usize], b: &[usize], q: usize) -> CategoricalRatings {
        let cells = a
            .iter()
            .zip(b)
            .flat_map(|(&x, &y)| [Some(x), Some(y)])
            .collect();
        CategoricalRatings::new((0..q).map(|c| c as f64).collect(), a.len(), 2, cells).unwrap()
    }

    #[test]
    fn cohen_textbook_two_by_two() {
        // 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no: p_o = 0.7, p_e = 0.5, κ = 0.4.
        let mut a = vec![];
        let mut b = vec![];
        for (x, y, n) in [(0, 0, 20), (0, 1, 5), (1, 0, 10), (1, 1, 15)] {
            for _ in 0..n {
                a.push(x);
                b.push(y);
            }
        }
        let r = two_raters(&a, &b, 2);
        let k = cohen_kappa(&r, Weights::Unweighted).unwrap();
        assert!(
            (k - 0.4).abs() < 1e-12,
            "worked 2×2 example gives κ = 0.4, got {k}"
        );
        let p = pabak(&r).unwrap();
        assert!((p.pabak.unwrap() - 0.4).abs() < 1e-12, "PABAK = 2·0.7 − 1");
        assert!(
            (p.bias_index.unwrap() - 0.1).abs() < 1e-12,
            "bias index |5 − 10|/50"
        );
    }

    #[test]
    fn one_observed_category_leaves_kappa_undefined_but_ac1_defined() {
        let r = two_raters(&[1, 1, 1], &[1, 1, 1], 2);
        assert!(
            cohen_kappa(&r, Weights::Unweighted).is_none(),
            "κ is 0/0 when chance agreement is 1"
        );
        assert_eq!(
            gwet_ac1(&r),
            Some(1.0),
            "AC1 is 1 for unanimous ratings with two declared categories"
        );
        assert!(
            krippendorff_alpha(&r, AlphaMetric::Nominal).is_none(),
            "α has no expected disagreement"
        );
    }

    #[test]
    fn wilson_matches_closed_form() {
        let ci = wilson_interval(0, 10, 0.05).unwrap();
        assert_eq!(ci[0], 0.0, "zero successes: lower bound 0");
        assert!(
            (ci[1] - 0.277_532_799_862_889_26).abs() < 1e-12,
            "upper Wilson bound for 0/10 (statsmodels proportion_confint), got {}",
            ci[1]
        );
    }

    #[test]
    fn diagnostic_accuracy_counts_and_rates() {
        let reference = [true, true, true, false, false, false, false, true];
        let predicted = [true, true, false, false, false, true, false, true];
        let d = diagnostic_accuracy(&reference, &predicted).unwrap();
        assert_eq!(
            (
                d.true_positive,
                d.false_positive,
                d.false_negative,
                d.true_negative
            ),
            (3, 1, 1, 3),
            "the 2×2 counts are tallied against the reference"
        );
        assert_eq!(d.sensitivity.estimate, Some(0.75), "sensitivity = 3/4");
        assert_eq!(d.ppv.estimate, Some(0.75), "PPV = 3/4");
        assert!(
            diagnostic_accuracy(&[true], &[]).is_err(),
            "labellings of different length cannot be compared"
        );
        let none = diagnostic_accuracy(&[false], &[false]).unwrap();
        assert!(
            none.sensitivity.estimate.is_none() && none.sensitivity.ci95.is_none(),
            "no reference positives: sensitivity is undefined"
        );
    }

    #[test]
    fn unknown_category_is_an_error() {
        let e = CategoricalRatings::new(vec![0.0, 1.0], 1, 2, vec![Some(0), Some(2)]);
        assert!(
            matches!(e, Err(CategoricalError::UnknownCategory { index: 2, .. })),
            "index 2 is outside two categories"
        );
    }
}
