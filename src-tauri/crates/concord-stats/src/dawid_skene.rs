//! The latent consensus label of items rated by several raters, and how good each rater is —
//! Dawid & Skene (1979), "Maximum likelihood estimation of observer error-rates using the EM
//! algorithm", as `crowd-kit` 1.4.2's `DawidSkene` fits it, with adjudicated (gold) items held at
//! their known labels as its `true_labels` argument does.
//!
//! # The fit
//! Each rater r has a confusion matrix e_r[g | c], the probability of giving label g to an item
//! whose true label is c, and the labels have priors π_c.
//! - *Start:* each item's posterior is its share of votes per label (majority vote), gold items set
//!   to their label; priors are the posteriors' means; then an M-step.
//! - *E-step:* posterior of item i ∝ π_c ∏ e_r[g_ri | c] over its ratings (in base-2 logs, shifted
//!   by the row maximum before exponentiating), priors floored at 10⁻¹⁰; gold items reset to their
//!   label; priors are the mean posteriors.
//! - *M-step:* e_r[g | c] ∝ the posterior mass of c over the items r labelled g, floored at 10⁻¹⁰
//!   and normalised over the labels r actually gave (a label r never gave has probability 0).
//! - *Stopping rule:* after each E+M pass the evidence lower bound per rating,
//!   L = [Σ_ratings Σ_c p_ic (ln e_r[g | c] + ln π_c) − Σ_i Σ_c p̃_ic ln p̃_ic] / n_ratings with
//!   p̃ = max(p, 10⁻¹⁰) (the prior term counted once per rating, as crowd-kit counts it), is
//!   compared with the previous pass; the fit stops when it rose by less than `tol`, or after
//!   `max_iter` passes without doing so (then it has not converged). Reported posteriors are
//!   floored at 10⁻¹⁰ as crowd-kit's are.
//!
//! # A label no rater used
//! A gold item may carry a label no rater gave. Such a label is kept: the raters' confusion
//! columns for it are learnt from the gold items, its posterior elsewhere from the fit. Before
//! the first E-step it has no majority-vote share on the other items; its starting prior is then
//! taken over the gold items that carry a value for it, as crowd-kit's starting table does (there
//! the label's column is added while the gold labels are applied in order of first appearance,
//! so it is defined on gold items of its own label and of labels applied after it).
//! [`DawidSkeneFit::gold_only_labels`] names these labels so the caller can say so.
//!
//! # Correlated judges
//! The model assumes raters err independently given the true label. [`error_correlation`] gives,
//! for two raters, the φ coefficient of their error indicators (label ≠ consensus) over the items
//! both rated; it is undefined (`None`) when either never errs or always errs there.

use serde::Serialize;
use thiserror::Error;

const EPS: f64 = 1e-10;

/// One rating: item, rater and label indices, 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelRating {
    /// Item index.
    pub item: usize,
    /// Rater index.
    pub rater: usize,
    /// Label index.
    pub label: usize,
}

/// Iteration limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DawidSkeneOptions {
    /// Largest number of E+M passes (crowd-kit's `n_iter`, 100 by default).
    pub max_iter: usize,
    /// Stop when the lower bound per rating rises by less than this (1e-5 by default).
    pub tol: f64,
}

impl Default for DawidSkeneOptions {
    fn default() -> Self {
        DawidSkeneOptions {
            max_iter: 100,
            tol: 1e-5,
        }
    }
}

/// A fitted Dawid–Skene model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DawidSkeneFit {
    /// Number of labels (columns of `posteriors`).
    pub n_labels: usize,
    /// Items × labels, row-major; rows of items with no rating are all zero.
    pub posteriors: Vec<f64>,
    /// Most probable label of each item (`None` for an item with no rating); ties go to the
    /// lowest label index.
    pub labels: Vec<Option<usize>>,
    /// Prior of each label.
    pub priors: Vec<f64>,
    /// Raters × given label × true label, row-major: P(rater gives g | true label c).
    pub confusion: Vec<f64>,
    /// Which (rater, given label) pairs occur in the data.
    pub gave: Vec<bool>,
    /// E+M passes run.
    pub iterations: usize,
    /// Whether the stopping rule was met within `max_iter` passes.
    pub converged: bool,
    /// The lower bound per rating after each pass.
    pub loss_history: Vec<f64>,
    /// Labels that occur only as gold labels, given by no rater.
    pub gold_only_labels: Vec<usize>,
}

impl DawidSkeneFit {
    /// P(rater `r` gives `given` | true label `truth`).
    pub fn confusion_of(&self, r: usize, given: usize, truth: usize) -> f64 {
        let k = self.n_labels;
        self.confusion[(r * k + given) * k + truth]
    }
}

/// Input a Dawid–Skene fit cannot use.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DawidSkeneError {
    /// No rating at all.
    #[error("no ratings: the consensus needs at least one rated item")]
    NoRatings,
    /// An index is out of range.
    #[error("rating {index}: {what} index out of range")]
    OutOfRange {
        /// Position of the rating (or gold entry).
        index: usize,
        /// Which index.
        what: &'static str,
    },
    /// A rater labelled the same item twice.
    #[error("rater {rater} labels item {item} twice; give one label per rater and item")]
    Duplicate {
        /// Item index.
        item: usize,
        /// Rater index.
        rater: usize,
    },
    /// An item has two gold labels.
    #[error("item {0} has two gold labels")]
    DuplicateGold(usize),
    /// No pass allowed.
    #[error("at least one EM pass is needed (max_iter = 0)")]
    NoIterations,
    /// The tolerance is not a finite non-negative number.
    #[error("the tolerance must be a finite number ≥ 0 (got {0})")]
    BadTolerance(f64),
}

/// The ratings grouped by item.
struct ByItem {
    start: Vec<usize>,
    rater: Vec<usize>,
    label: Vec<usize>,
}

struct Problem<'a> {
    n_items: usize,
    n_raters: usize,
    k: usize,
    by_item: ByItem,
    rated: Vec<bool>,
    gold: Vec<Option<usize>>,
    gold_entries: &'a [(usize, usize)],
    n_ratings: usize,
}

fn group(
    ratings: &[LabelRating],
    n_items: usize,
    n_raters: usize,
    k: usize,
) -> Result<ByItem, DawidSkeneError> {
    let mut start = vec![0usize; n_items + 1];
    for (index, r) in ratings.iter().enumerate() {
        for (value, bound, what) in [
            (r.item, n_items, "item"),
            (r.rater, n_raters, "rater"),
            (r.label, k, "label"),
        ] {
            if value >= bound {
                return Err(DawidSkeneError::OutOfRange { index, what });
            }
        }
        start[r.item + 1] += 1;
    }
    for i in 0..n_items {
        start[i + 1] += start[i];
    }
    let mut next = start.clone();
    let (mut rater, mut label) = (vec![0; ratings.len()], vec![0; ratings.len()]);
    for r in ratings {
        let at = next[r.item];
        rater[at] = r.rater;
        label[at] = r.label;
        next[r.item] += 1;
    }
    let mut seen = vec![usize::MAX; n_raters];
    for i in 0..n_items {
        for &r in &rater[start[i]..start[i + 1]] {
            if seen[r] == i {
                return Err(DawidSkeneError::Duplicate { item: i, rater: r });
            }
            seen[r] = i;
        }
    }
    Ok(ByItem {
        start,
        rater,
        label,
    })
}

impl Problem<'_> {
    fn ratings_of(&self, i: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let span = self.by_item.start[i]..self.by_item.start[i + 1];
        self.by_item.rater[span.clone()]
            .iter()
            .copied()
            .zip(self.by_item.label[span].iter().copied())
    }

    /// Majority-vote posteriors with gold items applied as crowd-kit's starting table has them;
    /// `None` marks a cell that table leaves undefined.
    fn start(&self, used: &[bool]) -> Vec<Option<f64>> {
        let k = self.k;
        let mut p = vec![None; self.n_items * k];
        for i in (0..self.n_items).filter(|&i| self.rated[i]) {
            let n = (self.by_item.start[i + 1] - self.by_item.start[i]) as f64;
            for c in (0..k).filter(|&c| used[c]) {
                p[i * k + c] = Some(0.0);
            }
            for (_, g) in self.ratings_of(i) {
                p[i * k + g] = p[i * k + g].map(|v| v + 1.0 / n);
            }
        }
        // Gold labels in order of first appearance; a label no rater used gets its column when
        // first applied, defined on the rows set from then on.
        let mut exists = used.to_vec();
        let mut order: Vec<usize> = Vec::new();
        for &(_, c) in self.gold_entries {
            if !order.contains(&c) {
                order.push(c);
            }
        }
        for c in order {
            exists[c] = true;
            for &(i, _) in self
                .gold_entries
                .iter()
                .filter(|&&(i, g)| g == c && self.rated[i])
            {
                for d in (0..k).filter(|&d| exists[d]) {
                    p[i * k + d] = Some(if d == c { 1.0 } else { 0.0 });
                }
            }
        }
        p
    }

    fn m_step(&self, p: impl Fn(usize, usize) -> f64, gave: &[bool]) -> Vec<f64> {
        let k = self.k;
        let mut e = vec![0.0; self.n_raters * k * k];
        for i in (0..self.n_items).filter(|&i| self.rated[i]) {
            for (r, g) in self.ratings_of(i) {
                let row = &mut e[(r * k + g) * k..(r * k + g + 1) * k];
                for (c, v) in row.iter_mut().enumerate() {
                    *v += p(i, c);
                }
            }
        }
        for r in 0..self.n_raters {
            for c in 0..k {
                let mut total = 0.0;
                for g in (0..k).filter(|&g| gave[r * k + g]) {
                    let v = &mut e[(r * k + g) * k + c];
                    *v = v.max(EPS);
                    total += *v;
                }
                for g in (0..k).filter(|&g| gave[r * k + g]) {
                    e[(r * k + g) * k + c] /= total;
                }
            }
        }
        e
    }

    fn e_step(&self, priors: &[f64], e: &[f64], p: &mut [f64]) {
        let k = self.k;
        let log_prior: Vec<f64> = priors.iter().map(|&v| v.max(EPS).log2()).collect();
        let mut row = vec![0.0; k];
        for i in (0..self.n_items).filter(|&i| self.rated[i]) {
            row.copy_from_slice(&log_prior);
            for (r, g) in self.ratings_of(i) {
                let errs = &e[(r * k + g) * k..(r * k + g + 1) * k];
                for (v, err) in row.iter_mut().zip(errs) {
                    *v += err.log2();
                }
            }
            let top = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mut total = 0.0;
            for v in &mut row {
                *v = (*v - top).exp2();
                total += *v;
            }
            match self.gold[i] {
                Some(c) => {
                    for (d, v) in p[i * k..(i + 1) * k].iter_mut().enumerate() {
                        *v = if d == c { 1.0 } else { 0.0 };
                    }
                }
                None => {
                    for (v, x) in p[i * k..(i + 1) * k].iter_mut().zip(&row) {
                        *v = x / total;
                    }
                }
            }
        }
    }

    fn priors(&self, p: &[f64]) -> Vec<f64> {
        let k = self.k;
        let n = self.rated.iter().filter(|&&r| r).count() as f64;
        let mut out = vec![0.0; k];
        for i in (0..self.n_items).filter(|&i| self.rated[i]) {
            for (o, v) in out.iter_mut().zip(&p[i * k..(i + 1) * k]) {
                *o += v;
            }
        }
        out.iter().map(|v| v / n).collect()
    }

    fn lower_bound(&self, p: &[f64], priors: &[f64], e: &[f64]) -> f64 {
        let k = self.k;
        let log_prior: Vec<f64> = priors.iter().map(|&v| v.max(EPS).ln()).collect();
        let (mut joint, mut entropy) = (0.0, 0.0);
        for i in (0..self.n_items).filter(|&i| self.rated[i]) {
            let post = &p[i * k..(i + 1) * k];
            for (r, g) in self.ratings_of(i) {
                let errs = &e[(r * k + g) * k..(r * k + g + 1) * k];
                for c in 0..k {
                    joint += post[c] * (errs[c].ln() + log_prior[c]);
                }
            }
            for &v in post {
                let v = v.max(EPS);
                entropy -= v * v.ln();
            }
        }
        (joint + entropy) / self.n_ratings as f64
    }
}

/// Fit Dawid–Skene to `ratings` of `n_items` items by `n_raters` raters with `n_labels` labels;
/// `gold` lists (item, label) pairs held at their known label, in file order (gold items with no
/// rating are ignored).
pub fn dawid_skene(
    ratings: &[LabelRating],
    n_items: usize,
    n_raters: usize,
    n_labels: usize,
    gold: &[(usize, usize)],
    options: &DawidSkeneOptions,
) -> Result<DawidSkeneFit, DawidSkeneError> {
    if ratings.is_empty() {
        return Err(DawidSkeneError::NoRatings);
    }
    if options.max_iter == 0 {
        return Err(DawidSkeneError::NoIterations);
    }
    if !(options.tol.is_finite() && options.tol >= 0.0) {
        return Err(DawidSkeneError::BadTolerance(options.tol));
    }
    let k = n_labels;
    let by_item = group(ratings, n_items, n_raters, k)?;
    let rated: Vec<bool> = (0..n_items)
        .map(|i| by_item.start[i + 1] > by_item.start[i])
        .collect();
    let mut gold_of = vec![None; n_items];
    for (index, &(i, c)) in gold.iter().enumerate() {
        if i >= n_items || c >= k {
            return Err(DawidSkeneError::OutOfRange {
                index,
                what: "gold",
            });
        }
        if gold_of[i].replace(c).is_some() {
            return Err(DawidSkeneError::DuplicateGold(i));
        }
    }
    let gold_entries: Vec<(usize, usize)> =
        gold.iter().copied().filter(|&(i, _)| rated[i]).collect();
    let mut used = vec![false; k];
    let mut gave = vec![false; n_raters * k];
    for r in ratings {
        used[r.label] = true;
        gave[r.rater * k + r.label] = true;
    }
    let problem = Problem {
        n_items,
        n_raters,
        k,
        by_item,
        rated,
        gold: gold_of,
        gold_entries: &gold_entries,
        n_ratings: ratings.len(),
    };
    Ok(run_em(&problem, &used, gave, options))
}

fn run_em(
    problem: &Problem<'_>,
    used: &[bool],
    gave: Vec<bool>,
    options: &DawidSkeneOptions,
) -> DawidSkeneFit {
    let k = problem.k;
    let start = problem.start(used);
    let mut priors = vec![0.0; k];
    for (c, prior) in priors.iter_mut().enumerate() {
        let (sum, n) = (0..problem.n_items)
            .filter_map(|i| start[i * k + c])
            .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
        *prior = if n == 0 { 0.0 } else { sum / n as f64 };
    }
    let mut e = problem.m_step(|i, c| start[i * k + c].unwrap_or(0.0), &gave);
    let mut p = vec![0.0; problem.n_items * k];
    let mut loss = f64::NEG_INFINITY;
    let (mut history, mut converged) = (Vec::new(), false);
    for _ in 0..options.max_iter {
        problem.e_step(&priors, &e, &mut p);
        priors = problem.priors(&p);
        e = problem.m_step(|i, c| p[i * k + c], &gave);
        let new_loss = problem.lower_bound(&p, &priors, &e);
        history.push(new_loss);
        if new_loss - loss < options.tol {
            converged = true;
            break;
        }
        loss = new_loss;
    }
    let mut labels = vec![None; problem.n_items];
    for i in (0..problem.n_items).filter(|&i| problem.rated[i]) {
        let row = &mut p[i * k..(i + 1) * k];
        let mut best = 0;
        for c in 1..k {
            if row[c] > row[best] {
                best = c;
            }
        }
        labels[i] = Some(best);
        for v in row.iter_mut() {
            *v = v.max(EPS);
        }
    }
    DawidSkeneFit {
        n_labels: k,
        posteriors: p,
        labels,
        priors: priors.iter().map(|v| v.max(EPS)).collect(),
        confusion: e,
        gave,
        iterations: history.len(),
        converged,
        loss_history: history,
        gold_only_labels: (0..k)
            .filter(|&c| !used[c] && problem.gold_entries.iter().any(|&(_, g)| g == c))
            .collect(),
    }
}

/// The φ coefficient of two raters' errors against `consensus` over the items both rated:
/// `a` and `b` give each item's label by that rater (`None` = not rated). Returns the number of
/// items used and φ, `None` when either rater never errs or always errs on them.
pub fn error_correlation(
    a: &[Option<usize>],
    b: &[Option<usize>],
    consensus: &[Option<usize>],
) -> (usize, Option<f64>) {
    let mut table = [[0u64; 2]; 2];
    for ((x, y), truth) in a.iter().zip(b).zip(consensus) {
        if let (Some(x), Some(y), Some(t)) = (x, y, truth) {
            table[usize::from(x != t)][usize::from(y != t)] += 1;
        }
    }
    let n = table.iter().flatten().sum::<u64>();
    let f = |v: u64| v as f64;
    let (row0, row1) = (f(table[0][0] + table[0][1]), f(table[1][0] + table[1][1]));
    let (col0, col1) = (f(table[0][0] + table[1][0]), f(table[0][1] + table[1][1]));
    let denominator = (row0 * row1 * col0 * col1).sqrt();
    let phi = (denominator > 0.0)
        .then(|| (f(table[1][1]) * f(table[0][0]) - f(table[1][0]) * f(table[0][1])) / denominator);
    (n as usize, phi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(item: usize, rater: usize, label: usize) -> LabelRating {
        LabelRating { item, rater, label }
    }

    #[test]
    fn unanimous_raters_give_certain_posteriors() {
        let ratings: Vec<LabelRating> = (0..6)
            .flat_map(|i| (0..3).map(move |j| r(i, j, i % 2)))
            .collect();
        let fit = dawid_skene(&ratings, 6, 3, 2, &[], &DawidSkeneOptions::default()).unwrap();
        for i in 0..6 {
            assert_eq!(
                fit.labels[i],
                Some(i % 2),
                "every rater agrees on item {i}, so the consensus is their label"
            );
            assert!(
                fit.posteriors[i * 2 + i % 2] > 0.99,
                "and the posterior is near 1"
            );
        }
        assert!(
            fit.converged,
            "a clean problem converges well within 100 passes"
        );
    }

    #[test]
    fn gold_items_keep_their_label() {
        let ratings = vec![r(0, 0, 0), r(0, 1, 0), r(1, 0, 1), r(1, 1, 1)];
        let fit = dawid_skene(&ratings, 2, 2, 2, &[(0, 1)], &DawidSkeneOptions::default()).unwrap();
        assert_eq!(
            fit.labels[0],
            Some(1),
            "a gold item keeps its adjudicated label even when every rater disagrees"
        );
    }

    #[test]
    fn a_label_only_in_gold_is_kept_and_named() {
        let ratings = vec![r(0, 0, 0), r(0, 1, 0), r(1, 0, 1), r(1, 1, 0)];
        let fit = dawid_skene(&ratings, 2, 2, 3, &[(0, 2)], &DawidSkeneOptions::default()).unwrap();
        assert_eq!(
            fit.gold_only_labels,
            vec![2],
            "label 2 is given by no rater"
        );
        assert!(
            fit.posteriors
                .iter()
                .chain(&fit.priors)
                .chain(&fit.confusion)
                .all(|v| v.is_finite()),
            "no NaN anywhere"
        );
    }

    #[test]
    fn phi_is_undefined_without_errors() {
        let consensus = [Some(0), Some(1), Some(0)];
        let (n, phi) = error_correlation(&consensus, &[Some(1), Some(1), Some(0)], &consensus);
        assert_eq!(n, 3, "three items rated by both");
        assert_eq!(phi, None, "a rater who never errs has no error variance");
        let (_, phi) = error_correlation(
            &[Some(1), Some(0), Some(0), Some(1)],
            &[Some(1), Some(0), Some(0), Some(0)],
            &[Some(0), Some(1), Some(0), Some(1)],
        );
        assert!(
            (phi.unwrap() - (1.0 / 3.0f64).sqrt()).abs() < 1e-12,
            "errors (1,1,0,0) and (1,1,0,1): φ = 1/√3"
        );
    }
}
