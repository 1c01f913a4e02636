//! Agreement on marked spans: Krippendorff's unitized alpha (uα) and span F1.
//!
//! # Unitized alpha
//!
//! Krippendorff's (1995, 2004) α for unitizing a continuum: each rater cuts the continuum
//! `[begin, begin + length)` into units of categories and the gaps between them, and α_U compares
//! the squared differences of overlapping segments with those expected when every possible
//! unitization of the same units is equally likely. [`unitized_alpha`] computes it exactly as DKPro
//! Statistics' `KrippendorffAlphaUnitizingAgreement` (2.3) does, which its test vectors hold to
//! 1e-6 (`tests/vectors/unitized_alpha.json`):
//!
//! - for each category c, the observed disagreement walks every pair of raters' segments (units of
//!   c and the gaps between them) along the continuum:
//!   D_O,c = 2 Σ_pairs Σ δ² / (R (R − 1) L²), where δ² of two overlapping units is
//!   (b₁ − b₂)² + (e₁ − e₂)², of a unit lying wholly inside the other rater's gap its length
//!   squared, and 0 otherwise;
//! - its expected disagreement counts every placement of each unit of c against the other units
//!   and every gap: D_E,c = (2 / L) Σ_units [(N_c − 1) l(l − 1)(2l − 1)/3 + l² Σ_{gaps g ≥ l}
//!   (g − l + 1)] / (R L (R L − 1) − Σ_units l (l − 1));
//! - α_c = 1 − D_O,c / D_E,c, and 0 when the two are equal (DKPro's rule, which also covers 0/0);
//! - over all categories, α = 1 − mean_c D_O,c / mean_c D_E,c over the categories some unit uses;
//!   when both are 0 it is 1 if any unit has a positive length (full agreement) and 0 if every
//!   unit is empty (nothing to agree on); a study without units has no α (`None`, DKPro's NaN).
//!
//! Sums are exact integers (`i128`) and each disagreement is one division, so the figures match
//! DKPro's to the last few bits; DKPro computes l³ in doubles, which rounds past 2⁵³. Krippendorff's
//! own worked values of D_E (1995) differ slightly from both: DKPro's tests note a suspected error
//! in the paper's formula and accept its published α within 0.02.
//!
//! Units of one rater and one category must not overlap (the measure is undefined for them):
//! [`unitized_alpha`] refuses them, and [`continuum`] — which lays marked items end to end — merges
//! one rater's overlapping spans of one code into their union first.
//!
//! # Span F1
//!
//! [`span_f1`] compares two raters' spans on the same items: *exact* counts a span of one rater as
//! matched by a span of the other with the same item, code, start and end (one to one), F1 =
//! 2 |A ∩ B| / (|A| + |B|); *overlap* counts a span as matched when a span of the other rater on the
//! same item with the same code shares at least one character with it, precision = the share of
//! A's spans matched, recall = the share of B's, F1 = 2PR / (P + R). Both are symmetric in A and B,
//! `None` when neither rater marked anything and 0 when only one did.
//!
//! # Intervals
//!
//! [`percentile_cis_each`] bootstraps several figures over the same resamples of items (replies),
//! each figure keeping the replicates where it is defined.

use std::collections::BTreeMap;

use rand::Rng;
use serde::Serialize;
use thiserror::Error;

use crate::bootstrap::{
    check_request, quantile_sorted, BootstrapError, BootstrapInterval, BootstrapOptions,
};

/// One unit of a unitizing study: `[begin, begin + length)` marked by `rater` with `category`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// First position of the unit.
    pub begin: u64,
    /// Number of positions it covers (0 is allowed and carries no weight).
    pub length: u64,
    /// Index of the rater, below the study's `raters`.
    pub rater: usize,
    /// The unit's category.
    pub category: usize,
}

/// A unitizing study: the continuum, the number of raters and every rater's units.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UnitizedStudy {
    /// First position of the continuum.
    pub begin: u64,
    /// Length of the continuum.
    pub length: u64,
    /// Number of raters (each rater's absence of units is a judgement too).
    pub raters: usize,
    /// The units, in any order.
    pub units: Vec<Unit>,
}

/// One category's disagreements and α.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoryAlpha {
    /// The category.
    pub category: usize,
    /// Observed disagreement D_O.
    pub observed: f64,
    /// Expected disagreement D_E.
    pub expected: f64,
    /// α_U of this category: 1 − D_O / D_E, 0 when the two are equal.
    pub alpha: f64,
}

/// Unitized α of a study: per category (in ascending order of category) and over all.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnitizedAlpha {
    /// Every category some unit uses.
    pub categories: Vec<CategoryAlpha>,
    /// α_U over all categories; `None` when the study has no unit.
    pub alpha: Option<f64>,
}

impl UnitizedAlpha {
    /// The figures of one category, when some unit uses it.
    pub fn category(&self, category: usize) -> Option<&CategoryAlpha> {
        self.categories.iter().find(|c| c.category == category)
    }
}

/// A study the measure cannot be computed on.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UnitizingError {
    /// Fewer than two raters.
    #[error("unitized alpha needs at least two raters, the study has {0}")]
    TooFewRaters(usize),
    /// The continuum has no length.
    #[error("the continuum is empty")]
    EmptyContinuum,
    /// A unit names a rater the study does not have.
    #[error("a unit names rater {rater}, but the study has {raters} raters")]
    UnknownRater { rater: usize, raters: usize },
    /// A unit reaches outside the continuum.
    #[error("the unit [{begin}, {end}) lies outside the continuum [{from}, {to})")]
    OutsideContinuum {
        begin: u64,
        end: u64,
        from: u64,
        to: u64,
    },
    /// Two units of one rater and one category overlap.
    #[error("rater {rater} has overlapping units of category {category} at {at}")]
    Overlap {
        rater: usize,
        category: usize,
        at: u64,
    },
}

/// The squared distance Krippendorff's α_U gives two segments of two raters, each a unit (`true`)
/// or a gap (`false`), as DKPro's `measureDistance`: two overlapping units (b₁ − b₂)² + (e₁ − e₂)²,
/// a unit wholly inside the other rater's gap its length squared, anything else 0.
pub fn segment_distance(first: (i128, i128, bool), second: (i128, i128, bool)) -> i128 {
    let ((b1, l1, unit1), (b2, l2, unit2)) = (first, second);
    let begin_diff = b1 - b2;
    let length_diff = l1 - l2;
    if unit1 && unit2 && -l1 < begin_diff && begin_diff < l2 {
        begin_diff * begin_diff + (begin_diff + length_diff) * (begin_diff + length_diff)
    } else if unit1 && !unit2 && -length_diff >= begin_diff && begin_diff >= 0 {
        l1 * l1
    } else if !unit1 && unit2 && -length_diff <= begin_diff && begin_diff <= 0 {
        l2 * l2
    } else {
        0
    }
}

/// Krippendorff's unitized α of `study`, as DKPro Statistics computes it (see the module docs).
pub fn unitized_alpha(study: &UnitizedStudy) -> Result<UnitizedAlpha, UnitizingError> {
    let by_category = checked_units(study)?;
    let mut categories = Vec::with_capacity(by_category.len());
    let (mut observed_sum, mut expected_sum) = (0.0, 0.0);
    for (&category, per_rater) in &by_category {
        let observed = observed_disagreement(study, per_rater);
        let expected = expected_disagreement(study, per_rater);
        let (d_o, d_e) = (ratio(observed), ratio(expected));
        let alpha = if same_ratio(observed, expected, d_o, d_e) {
            0.0
        } else {
            1.0 - d_o / d_e
        };
        observed_sum += d_o;
        expected_sum += d_e;
        categories.push(CategoryAlpha {
            category,
            observed: d_o,
            expected: d_e,
            alpha,
        });
    }
    let alpha = if categories.is_empty() {
        None
    } else {
        let count = categories.len() as f64;
        let (d_o, d_e) = (observed_sum / count, expected_sum / count);
        Some(if d_o == d_e {
            if d_o == 0.0 && study.units.iter().any(|u| u.length > 0) {
                1.0
            } else {
                0.0
            }
        } else {
            1.0 - d_o / d_e
        })
    };
    Ok(UnitizedAlpha { categories, alpha })
}

/// A fraction of exact integers.
type Fraction = (i128, i128);

/// One category's units per rater, each `(begin, length)`.
type RaterUnits = Vec<Vec<(i128, i128)>>;

fn ratio((numerator, denominator): Fraction) -> f64 {
    numerator as f64 / denominator as f64
}

/// Whether two fractions are equal: exactly when their cross products fit, else as doubles.
fn same_ratio(a: Fraction, b: Fraction, a_f64: f64, b_f64: f64) -> bool {
    match (a.0.checked_mul(b.1), b.0.checked_mul(a.1)) {
        (Some(x), Some(y)) => x == y,
        _ => a_f64 == b_f64,
    }
}

/// Units per category and, within it, per rater as `(begin, length)` sorted by begin then length
/// (DKPro's order), after checking raters, bounds and overlaps.
fn checked_units(study: &UnitizedStudy) -> Result<BTreeMap<usize, RaterUnits>, UnitizingError> {
    if study.raters < 2 {
        return Err(UnitizingError::TooFewRaters(study.raters));
    }
    if study.length == 0 {
        return Err(UnitizingError::EmptyContinuum);
    }
    let end = study.begin.saturating_add(study.length);
    let mut by_category: BTreeMap<usize, RaterUnits> = BTreeMap::new();
    for unit in &study.units {
        if unit.rater >= study.raters {
            return Err(UnitizingError::UnknownRater {
                rater: unit.rater,
                raters: study.raters,
            });
        }
        let unit_end = unit.begin.saturating_add(unit.length);
        if unit.begin < study.begin || unit_end > end {
            return Err(UnitizingError::OutsideContinuum {
                begin: unit.begin,
                end: unit_end,
                from: study.begin,
                to: end,
            });
        }
        by_category
            .entry(unit.category)
            .or_insert_with(|| vec![Vec::new(); study.raters])[unit.rater]
            .push((i128::from(unit.begin), i128::from(unit.length)));
    }
    for (&category, per_rater) in by_category.iter_mut() {
        for (rater, units) in per_rater.iter_mut().enumerate() {
            units.sort_unstable();
            // Sorted by begin, any overlap shows between neighbours.
            if let Some(w) = units.windows(2).find(|w| w[1].0 < w[0].0 + w[0].1) {
                return Err(UnitizingError::Overlap {
                    rater,
                    category,
                    at: w[1].0 as u64,
                });
            }
        }
    }
    Ok(by_category)
}

/// One rater's walk along the continuum: the current segment and the next unit.
struct Walk<'a> {
    units: &'a [(i128, i128)],
    next: usize,
    offset: i128,
    length: i128,
    is_unit: bool,
}

impl<'a> Walk<'a> {
    fn new(units: &'a [(i128, i128)], begin: i128) -> Self {
        Walk {
            units,
            next: 0,
            offset: begin,
            length: 0,
            is_unit: false,
        }
    }

    fn pending(&self) -> bool {
        self.next < self.units.len()
    }

    /// At `pos`, when the current segment ends there, step to the next unit or the gap before it.
    fn advance(&mut self, pos: i128, end: i128) {
        if pos != self.offset + self.length {
            return;
        }
        match self.units.get(self.next) {
            Some(&(begin, length)) if begin == pos => {
                self.length = length;
                self.is_unit = true;
                self.next += 1;
            }
            next => {
                self.length = next.map_or(end, |u| u.0) - pos;
                self.is_unit = false;
            }
        }
        self.offset = pos;
    }

    fn segment(&self) -> (i128, i128, bool) {
        (self.offset, self.length, self.is_unit)
    }
}

/// D_O of one category as a fraction.
fn observed_disagreement(study: &UnitizedStudy, per_rater: &[Vec<(i128, i128)>]) -> Fraction {
    let begin = i128::from(study.begin);
    let length = i128::from(study.length);
    let end = begin + length;
    let mut sum: i128 = 0;
    for r1 in 0..per_rater.len() {
        for r2 in r1 + 1..per_rater.len() {
            let mut first = Walk::new(&per_rater[r1], begin);
            let mut second = Walk::new(&per_rater[r2], begin);
            let mut pos = begin;
            while pos < end && (first.pending() || second.pending()) {
                first.advance(pos, end);
                second.advance(pos, end);
                sum += segment_distance(first.segment(), second.segment());
                pos = (first.offset + first.length).min(second.offset + second.length);
            }
        }
    }
    let raters = per_rater.len() as i128;
    (2 * sum, raters * (raters - 1) * length * length)
}

/// D_E of one category as a fraction.
fn expected_disagreement(study: &UnitizedStudy, per_rater: &[Vec<(i128, i128)>]) -> Fraction {
    let begin = i128::from(study.begin);
    let length = i128::from(study.length);
    let end = begin + length;
    let mut gaps: Vec<i128> = Vec::new();
    for units in per_rater {
        let mut walk = Walk::new(units, begin);
        let mut pos = begin;
        while pos < end {
            walk.advance(pos, end);
            if !walk.is_unit && walk.offset == pos && walk.length > 0 {
                gaps.push(walk.length);
            }
            pos = walk.offset + walk.length;
        }
    }
    gaps.sort_unstable();
    // suffix[i] = Σ gaps[i..]: the gaps at least l long are a suffix of the ascending list.
    let mut suffix = vec![0i128; gaps.len() + 1];
    for i in (0..gaps.len()).rev() {
        suffix[i] = suffix[i + 1] + gaps[i];
    }
    let all: Vec<i128> = per_rater.iter().flatten().map(|u| u.1).collect();
    let count = all.len() as i128;
    let squared_lengths: i128 = all.iter().map(|&l| l * (l - 1)).sum();
    let mut numerator: i128 = 0;
    for &l in &all {
        let within = (count - 1) * (l * (l - 1) * (2 * l - 1) / 3);
        let from = gaps.partition_point(|&g| g < l);
        let long_gaps = (gaps.len() - from) as i128;
        let placements = suffix[from] - long_gaps * (l - 1);
        numerator += within + l * l * placements;
    }
    let raters = per_rater.len() as i128;
    let total = raters * length;
    (
        2 * numerator,
        length * (total * (total - 1) - squared_lengths),
    )
}

/// One span a rater marked on an item, `[start, end)` in the item's own positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MarkedSpan {
    /// Index of the rater (whatever numbering the caller uses).
    pub rater: usize,
    /// The span's code.
    pub code: usize,
    /// First position.
    pub start: u64,
    /// Position after the last.
    pub end: u64,
}

/// An item (a reply) of a given length and the spans raters marked on it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MarkedItem {
    /// Its length in positions (characters).
    pub length: u64,
    /// Every rater's spans on it.
    pub spans: Vec<MarkedSpan>,
}

/// The unitizing study of `raters` over `items` laid end to end in the order given: rater
/// `raters[i]` becomes rater `i`, spans of other raters are left out, and one rater's overlapping
/// spans of one code are merged into their union (spans that only touch stay two units). An item given twice (a bootstrap
/// resample) is laid down twice. Spans reaching past their item are cut at its end.
pub fn continuum(items: &[&MarkedItem], raters: &[usize]) -> UnitizedStudy {
    let mut units = Vec::new();
    let mut offset = 0u64;
    for item in items {
        let mut own: Vec<(usize, usize, u64, u64)> = item
            .spans
            .iter()
            .filter_map(|s| {
                let rater = raters.iter().position(|&r| r == s.rater)?;
                let end = s.end.min(item.length);
                (s.start < end).then_some((rater, s.code, s.start, end))
            })
            .collect();
        own.sort_unstable();
        let mut current: Option<(usize, usize, u64, u64)> = None;
        for span in own {
            current = match current {
                Some(c) if c.0 == span.0 && c.1 == span.1 && span.2 < c.3 => {
                    Some((c.0, c.1, c.2, c.3.max(span.3)))
                }
                Some(c) => {
                    units.push(unit_at(offset, c));
                    Some(span)
                }
                None => Some(span),
            };
        }
        if let Some(c) = current {
            units.push(unit_at(offset, c));
        }
        offset += item.length;
    }
    UnitizedStudy {
        begin: 0,
        length: offset,
        raters: raters.len(),
        units,
    }
}

fn unit_at(offset: u64, (rater, code, start, end): (usize, usize, u64, u64)) -> Unit {
    Unit {
        begin: offset + start,
        length: end - start,
        rater,
        category: code,
    }
}

/// A span for F1: which item it is on, its code and bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ItemSpan {
    /// Index of the item (a reply; a resampled copy gets its own index).
    pub item: usize,
    /// The span's code.
    pub code: usize,
    /// First position.
    pub start: u64,
    /// Position after the last.
    pub end: u64,
}

/// Span F1 of two raters and the counts it is made of.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpanF1 {
    /// F1 on exact boundaries; `None` when neither rater marked a span.
    pub exact: Option<f64>,
    /// F1 on any overlap; `None` when neither rater marked a span.
    pub overlap: Option<f64>,
    /// Spans of the first rater.
    pub a_spans: usize,
    /// Spans of the second rater.
    pub b_spans: usize,
    /// Spans matched exactly (one to one).
    pub exact_matches: usize,
    /// Spans of the first rater that overlap one of the second's.
    pub a_overlapping: usize,
    /// Spans of the second rater that overlap one of the first's.
    pub b_overlapping: usize,
}

/// Span F1 of raters A and B on the same items (see the module docs).
pub fn span_f1(a: &[ItemSpan], b: &[ItemSpan]) -> SpanF1 {
    let mut sorted_a = a.to_vec();
    let mut sorted_b = b.to_vec();
    sorted_a.sort_unstable();
    sorted_b.sort_unstable();
    let (mut i, mut j, mut exact_matches) = (0, 0, 0);
    while i < sorted_a.len() && j < sorted_b.len() {
        match sorted_a[i].cmp(&sorted_b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                exact_matches += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let a_overlapping = overlapping(&sorted_a, &sorted_b);
    let b_overlapping = overlapping(&sorted_b, &sorted_a);
    let (na, nb) = (a.len(), b.len());
    let (exact, overlap) = if na + nb == 0 {
        (None, None)
    } else {
        let exact = 2.0 * exact_matches as f64 / (na + nb) as f64;
        let precision = if na == 0 {
            0.0
        } else {
            a_overlapping as f64 / na as f64
        };
        let recall = if nb == 0 {
            0.0
        } else {
            b_overlapping as f64 / nb as f64
        };
        let overlap = if precision + recall == 0.0 {
            0.0
        } else {
            2.0 * precision * recall / (precision + recall)
        };
        (Some(exact), Some(overlap))
    };
    SpanF1 {
        exact,
        overlap,
        a_spans: na,
        b_spans: nb,
        exact_matches,
        a_overlapping,
        b_overlapping,
    }
}

/// How many spans of `spans` share a character with a span of `others` on the same item and code
/// (both sorted).
fn overlapping(spans: &[ItemSpan], others: &[ItemSpan]) -> usize {
    spans
        .iter()
        .filter(|s| {
            let from = others.partition_point(|o| (o.item, o.code) < (s.item, s.code));
            others[from..]
                .iter()
                .take_while(|o| (o.item, o.code) == (s.item, s.code) && o.start < s.end)
                .any(|o| s.start < o.end)
        })
        .count()
}

/// Percentile bootstrap of several figures over the same resamples of `n_targets` targets. Indices
/// are drawn as in [`crate::bootstrap::percentile_ci`]; the closure fills one slot per figure
/// (`None` where the replicate leaves it undefined), and each figure's interval is taken from the
/// replicates where it is defined and inside the keep range, so one undefined figure does not drop
/// another's replicate. With `drop_undefined` false a figure with any undefined replicate has no
/// interval.
pub fn percentile_cis_each<R, F>(
    n_targets: usize,
    figures: usize,
    options: &BootstrapOptions,
    rng: &mut R,
    mut statistic: F,
) -> Result<Vec<BootstrapInterval>, BootstrapError>
where
    R: Rng + ?Sized,
    F: FnMut(&[usize], &mut [Option<f64>]),
{
    check_request(n_targets, options)?;
    let mut indices = vec![0usize; n_targets];
    let mut buffer: Vec<Option<f64>> = vec![None; figures];
    let mut replicates: Vec<Vec<f64>> = vec![Vec::with_capacity(options.resamples); figures];
    let mut undefined = vec![0usize; figures];
    let mut out_of_range = vec![0usize; figures];
    for _ in 0..options.resamples {
        for slot in indices.iter_mut() {
            *slot = rng.gen_range(0..n_targets);
        }
        buffer.fill(None);
        statistic(&indices, &mut buffer);
        for (k, value) in buffer.iter().enumerate() {
            match value.filter(|x| x.is_finite()) {
                None => undefined[k] += 1,
                Some(x) => match options.keep_range {
                    Some((lo, hi)) if x < lo || x > hi => out_of_range[k] += 1,
                    _ => replicates[k].push(x),
                },
            }
        }
    }
    let tail = (1.0 - options.level) / 2.0;
    Ok(replicates
        .into_iter()
        .enumerate()
        .map(|(k, mut values)| {
            values.sort_by(f64::total_cmp);
            let poisoned = !options.drop_undefined && undefined[k] > 0;
            let (lower, upper) = if poisoned {
                (None, None)
            } else {
                (
                    quantile_sorted(&values, tail),
                    quantile_sorted(&values, 1.0 - tail),
                )
            };
            BootstrapInterval {
                lower,
                upper,
                resamples: options.resamples,
                kept: values.len(),
                dropped_undefined: undefined[k],
                dropped_out_of_range: out_of_range[k],
            }
        })
        .collect())
}
