//! Rater quality: how one rater's values depart from a panel's, over shared items and over time.
//! Every function takes numbers (a rater's values per item, in rating order, seconds per item) and
//! returns estimates with their uncertainty; choosing the data and the thresholds is the caller's.
//!
//! - **Severity** ([`severity`]): per rater, the mean over shared items of the rater's value minus
//!   the mean of the other raters on that item, with a Student-t 95% interval over items (the
//!   per-item offsets are independent across items). Positive = lenient (higher values than the
//!   panel), negative = severe. Under an additive model x = θ_item + δ_rater + ε with every rater on
//!   every item, the expected offset of rater r is δ_r − mean(δ of the others).
//! - **Drift** ([`drift`]): a rater's sequence in the order rated (offsets from the panel when
//!   items are shared, else raw values). The first and last blocks are compared by their mean
//!   difference with a Welch interval, and a CUSUM change-in-mean test runs over the whole
//!   sequence: S_t = Σ_{i≤t} (x_i − x̄) / (s √n), whose maximum |S_t| under no change is
//!   asymptotically Kolmogorov distributed (the Brownian-bridge limit, as in Page 1954 and the
//!   OLS-CUSUM test of Ploberger & Krämer 1992). The alarm is raised when its p-value falls below
//!   the chosen α; the argmax of |S_t| estimates where the change happened.
//! - **Test–retest** ([`test_retest`]): the same rater's first and second value on the retest
//!   items: ICC(A,1) with its McGraw & Wong interval on a 1–5 scale, Cohen's κ for binary
//!   dimensions, plus exact and within-one agreement.
//! - **Time on task** ([`time_on_task`]): the median seconds per item and the items faster than a
//!   floor (the caller derives it from the panel, e.g. a quarter of the panel's median).
//! - **Straight-lining** ([`straight_lining`]): items on which a rater gave one value to every
//!   criterion, with a one-sided binomial test against the share seen in the rest of the panel.
//!
//! Undefined results are `None`, never NaN.

use crate::categorical::{cohen_kappa, CategoricalRatings, Weights};
use crate::icc::{icc_all, IccForm};
use crate::special::t_critical;
use serde::Serialize;
use statrs::distribution::{Binomial, DiscreteCDF};

/// A mean with its 95% Student-t interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeanEstimate {
    /// Number of values averaged.
    pub n: usize,
    /// Their mean; `None` when n = 0.
    pub mean: Option<f64>,
    /// Sample standard deviation (n − 1); `None` when n < 2.
    pub sd: Option<f64>,
    /// Mean ± t(0.975, n − 1) · sd / √n; `None` when n < 2.
    pub ci95: Option<[f64; 2]>,
}

/// The mean of `values` with a t interval (values that are not finite are skipped).
pub fn mean_with_ci(values: &[f64]) -> MeanEstimate {
    let (mut n, mut sum) = (0usize, 0.0);
    for &v in values.iter().filter(|v| v.is_finite()) {
        n += 1;
        sum += v;
    }
    if n == 0 {
        return MeanEstimate {
            n,
            mean: None,
            sd: None,
            ci95: None,
        };
    }
    let mean = sum / n as f64;
    if n < 2 {
        return MeanEstimate {
            n,
            mean: Some(mean),
            sd: None,
            ci95: None,
        };
    }
    let ss: f64 = values
        .iter()
        .filter(|v| v.is_finite())
        .map(|v| (v - mean) * (v - mean))
        .sum();
    let sd = (ss / (n - 1) as f64).sqrt();
    let ci95 = t_critical(0.05, (n - 1) as f64).map(|t| {
        let half = t * sd / (n as f64).sqrt();
        [mean - half, mean + half]
    });
    MeanEstimate {
        n,
        mean: Some(mean),
        sd: Some(sd),
        ci95,
    }
}

/// Each rater's offsets from the others, one per item: `out[r][i]` is rater r's value on item i
/// minus the mean of the other raters who rated item i (NaN when r did not rate it or nobody else
/// did). `series[r][i]` is rater r's value on item i, NaN when absent; every series has one length.
pub fn offsets_from_others(series: &[&[f64]]) -> Vec<Vec<f64>> {
    let n = series.first().map_or(0, |s| s.len());
    let mut sum = vec![0.0; n];
    let mut count = vec![0usize; n];
    for s in series {
        for ((v, total), c) in s.iter().zip(sum.iter_mut()).zip(count.iter_mut()) {
            if v.is_finite() {
                *total += v;
                *c += 1;
            }
        }
    }
    series
        .iter()
        .map(|s| {
            s.iter()
                .zip(sum.iter().zip(&count))
                .map(|(v, (total, c))| {
                    if v.is_finite() && *c >= 2 {
                        v - (total - v) / (*c - 1) as f64
                    } else {
                        f64::NAN
                    }
                })
                .collect()
        })
        .collect()
}

/// Severity of every rater on one criterion: the mean offset from the other raters over the items
/// rated by the rater and at least one other, with a 95% interval (see the module docs).
pub fn severity(series: &[&[f64]]) -> Vec<MeanEstimate> {
    offsets_from_others(series)
        .iter()
        .map(|o| mean_with_ci(o))
        .collect()
}

/// Which way a drift went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Up,
    Down,
}

/// Settings of [`drift`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DriftOptions {
    /// Share of the sequence in the first and in the last block (0 < share ≤ 0.5).
    pub block_share: f64,
    /// Fewest values per block; shorter sequences get no block comparison.
    pub min_block: usize,
    /// Significance level of the CUSUM alarm.
    pub alpha: f64,
}

impl Default for DriftOptions {
    /// First and last quarter, at least 5 values each, alarm at α = 0.01.
    fn default() -> Self {
        DriftOptions {
            block_share: 0.25,
            min_block: 5,
            alpha: 0.01,
        }
    }
}

/// Drift of one rater over a session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drift {
    /// Values in the sequence (non-finite ones are skipped).
    pub n: usize,
    /// Values in each of the first and last blocks (0 when the sequence is too short).
    pub block: usize,
    /// Mean of the first block.
    pub first_mean: Option<f64>,
    /// Mean of the last block.
    pub last_mean: Option<f64>,
    /// last − first.
    pub difference: Option<f64>,
    /// Welch 95% interval of last − first.
    pub difference_ci95: Option<[f64; 2]>,
    /// max_t |S_t| of the standardised CUSUM; `None` when n < 3 or every value is equal.
    pub cusum_max: Option<f64>,
    /// Asymptotic p-value of `cusum_max` (Kolmogorov distribution).
    pub cusum_p: Option<f64>,
    /// The CUSUM rejected "no change" at the chosen α.
    pub alarm: bool,
    /// Position (in the finite values, 0-based) after which the change most likely happened.
    pub change_at: Option<usize>,
    /// Direction of the change when the alarm is raised.
    pub direction: Option<Direction>,
    /// The standardised CUSUM path S_1 … S_n, for plotting.
    pub path: Vec<f64>,
}

/// Survival function of the Kolmogorov distribution: P(sup |Brownian bridge| > x).
pub fn kolmogorov_sf(x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    if x < 0.3 {
        // The alternating series converges slowly here and the value is 1 to 12 digits.
        return 1.0;
    }
    let mut sum = 0.0;
    for j in 1..=100 {
        let j = j as f64;
        let term = (-2.0 * j * j * x * x).exp();
        sum += if j as i64 % 2 == 1 { term } else { -term };
        if term < 1e-16 {
            break;
        }
    }
    (2.0 * sum).clamp(0.0, 1.0)
}

/// Drift of a sequence in rating order (see the module docs).
pub fn drift(sequence: &[f64], options: DriftOptions) -> Drift {
    let x: Vec<f64> = sequence.iter().copied().filter(|v| v.is_finite()).collect();
    let n = x.len();
    let share = options.block_share.clamp(f64::MIN_POSITIVE, 0.5);
    let mut block = (n as f64 * share).floor() as usize;
    if block < options.min_block.max(2) {
        block = 0;
    }
    let (mut first_mean, mut last_mean, mut difference, mut difference_ci95) =
        (None, None, None, None);
    if block > 0 {
        let first = mean_with_ci(&x[..block]);
        let last = mean_with_ci(&x[n - block..]);
        first_mean = first.mean;
        last_mean = last.mean;
        if let (Some(a), Some(b), Some(sa), Some(sb)) = (first.mean, last.mean, first.sd, last.sd) {
            difference = Some(b - a);
            let m = block as f64;
            let (va, vb) = (sa * sa / m, sb * sb / m);
            let se = (va + vb).sqrt();
            let df = if va + vb > 0.0 {
                (va + vb).powi(2) / (va * va / (m - 1.0) + vb * vb / (m - 1.0))
            } else {
                2.0 * (m - 1.0)
            };
            difference_ci95 = t_critical(0.05, df).map(|t| [b - a - t * se, b - a + t * se]);
        }
    }
    let mut out = Drift {
        n,
        block,
        first_mean,
        last_mean,
        difference,
        difference_ci95,
        cusum_max: None,
        cusum_p: None,
        alarm: false,
        change_at: None,
        direction: None,
        path: Vec::new(),
    };
    if n < 3 {
        return out;
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let sd = (x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64).sqrt();
    if sd.is_nan() || sd <= 0.0 {
        return out;
    }
    let scale = sd * (n as f64).sqrt();
    let mut s = 0.0;
    let (mut best, mut best_at) = (0.0f64, 0usize);
    out.path.reserve(n);
    for (i, v) in x.iter().enumerate() {
        s += (v - mean) / scale;
        out.path.push(s);
        if s.abs() > best.abs() {
            best = s;
            best_at = i;
        }
    }
    let p = kolmogorov_sf(best.abs());
    out.cusum_max = Some(best.abs());
    out.cusum_p = Some(p);
    out.change_at = Some(best_at);
    if p < options.alpha {
        out.alarm = true;
        // Values below the mean before the change (S falls to a minimum) mean the level went up.
        out.direction = Some(if best < 0.0 {
            Direction::Up
        } else {
            Direction::Down
        });
    }
    out
}

/// Agreement of a rater with themself on the retest items.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestRetest {
    /// Items with both a first and a retest value.
    pub n: usize,
    /// ICC(A,1) of the n × 2 matrix (Likert scales); `None` for binary or when undefined.
    pub icc_a1: Option<f64>,
    /// Its McGraw & Wong 95% interval.
    pub icc_ci95: Option<[f64; 2]>,
    /// Cohen's κ of the two occasions (binary scales); `None` for Likert or when undefined.
    pub kappa: Option<f64>,
    /// Share of items with the same value twice.
    pub exact: Option<f64>,
    /// Share of items whose two values differ by at most one scale point.
    pub within_one: Option<f64>,
}

/// Test–retest agreement from paired values (pairs with a non-finite side are skipped).
pub fn test_retest(first: &[f64], retest: &[f64], binary: bool) -> TestRetest {
    let pairs: Vec<(f64, f64)> = first
        .iter()
        .zip(retest)
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .map(|(a, b)| (*a, *b))
        .collect();
    let n = pairs.len();
    let share = |f: &dyn Fn(f64, f64) -> bool| {
        (n > 0).then(|| pairs.iter().filter(|(a, b)| f(*a, *b)).count() as f64 / n as f64)
    };
    let exact = share(&|a, b| a == b);
    let within_one = share(&|a, b| (a - b).abs() <= 1.0);
    let mut out = TestRetest {
        n,
        icc_a1: None,
        icc_ci95: None,
        kappa: None,
        exact,
        within_one,
    };
    if n < 2 {
        return out;
    }
    if binary {
        let mut categories: Vec<f64> = pairs.iter().flat_map(|(a, b)| [*a, *b]).collect();
        categories.sort_by(f64::total_cmp);
        categories.dedup();
        if categories.len() < 2 {
            return out;
        }
        let rows: Vec<Vec<Option<f64>>> = pairs
            .iter()
            .map(|(a, b)| vec![Some(*a), Some(*b)])
            .collect();
        if let Ok(r) = CategoricalRatings::from_values(&categories, &rows) {
            out.kappa = cohen_kappa(&r, Weights::Unweighted);
        }
    } else {
        let matrix: Vec<f64> = pairs.iter().flat_map(|(a, b)| [*a, *b]).collect();
        if let Ok(table) = icc_all(&matrix, n, 2) {
            let e = table.get(IccForm::Icc2);
            out.icc_a1 = e.value;
            out.icc_ci95 = match e.ci95 {
                [Some(lo), Some(hi)] => Some([lo, hi]),
                _ => None,
            };
        }
    }
    out
}

/// A rater's time per item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeOnTask {
    /// Items with a recorded time (> 0 seconds).
    pub n: usize,
    /// Median seconds per item.
    pub median: Option<f64>,
    /// Positions (into the input) of the items faster than the floor.
    pub too_fast: Vec<usize>,
    /// too_fast / n.
    pub share_too_fast: Option<f64>,
}

/// The median of the finite values (average of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

/// Time per item with the items under `floor_seconds` flagged. Times that are not finite or not
/// positive (never shown, or shown before times were recorded) are left out.
pub fn time_on_task(seconds: &[f64], floor_seconds: f64) -> TimeOnTask {
    let recorded: Vec<f64> = seconds
        .iter()
        .copied()
        .filter(|s| s.is_finite() && *s > 0.0)
        .collect();
    let n = recorded.len();
    let too_fast: Vec<usize> = seconds
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_finite() && **s > 0.0 && **s < floor_seconds)
        .map(|(i, _)| i)
        .collect();
    TimeOnTask {
        n,
        median: median(&recorded),
        share_too_fast: (n > 0).then(|| too_fast.len() as f64 / n as f64),
        too_fast,
    }
}

/// How often a rater gave one value to every criterion of an item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StraightLining {
    /// Items with a value on at least two criteria.
    pub n: usize,
    /// Those with the same value on every criterion.
    pub straight: usize,
    /// straight / n.
    pub share: Option<f64>,
    /// The share among the rest of the panel, when given.
    pub panel_share: Option<f64>,
    /// Longest run of consecutive straight-lined items (in the order given).
    pub longest_run: usize,
    /// One-sided binomial p-value of `straight` or more out of `n` at the panel's share.
    pub p_value: Option<f64>,
}

/// Whether an item's values (one per criterion, `None` = missing) are straight-lined: at least two
/// present and all equal. `None` when fewer than two are present.
pub fn is_straight(values: &[Option<f64>]) -> Option<bool> {
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    (present.len() >= 2).then(|| present.iter().all(|v| *v == present[0]))
}

/// Straight-lining over a rater's items in rating order; `panel_share` is the share seen among the
/// other raters (on the same items, ideally).
pub fn straight_lining(items: &[Vec<Option<f64>>], panel_share: Option<f64>) -> StraightLining {
    let (mut n, mut straight, mut run, mut longest_run) = (0usize, 0usize, 0usize, 0usize);
    for item in items {
        match is_straight(item) {
            Some(true) => {
                n += 1;
                straight += 1;
                run += 1;
                longest_run = longest_run.max(run);
            }
            Some(false) => {
                n += 1;
                run = 0;
            }
            None => {}
        }
    }
    let p_value = match panel_share {
        Some(p0) if n > 0 && (0.0..1.0).contains(&p0) => {
            if straight == 0 {
                Some(1.0)
            } else if p0 == 0.0 {
                Some(0.0)
            } else {
                Binomial::new(p0, n as u64)
                    .ok()
                    .map(|b| b.sf(straight as u64 - 1))
            }
        }
        _ => None,
    };
    StraightLining {
        n,
        straight,
        share: (n > 0).then(|| straight as f64 / n as f64),
        panel_share,
        longest_run,
        p_value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_interval_matches_a_hand_computed_t_interval() {
        // Values 1..=5: mean 3, sd √2.5, t(0.975, 4) = 2.776445105.
        let m = mean_with_ci(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let half = 2.776_445_105_198_6 * 2.5f64.sqrt() / 5f64.sqrt();
        let ci = m.ci95.expect("five values give an interval");
        assert!(
            (ci[0] - (3.0 - half)).abs() < 1e-8 && (ci[1] - (3.0 + half)).abs() < 1e-8,
            "the interval must be mean ± t·sd/√n, got {ci:?}"
        );
    }

    #[test]
    fn offsets_are_taken_from_the_other_raters_only() {
        let a = [3.0, 4.0, f64::NAN];
        let b = [1.0, 4.0, 2.0];
        let c = [2.0, f64::NAN, f64::NAN];
        let o = offsets_from_others(&[&a, &b, &c]);
        assert_eq!(
            o[0][0],
            3.0 - 1.5,
            "rater a on item 0 against the mean of b and c"
        );
        assert_eq!(o[0][1], 0.0, "rater a on item 1 against b alone");
        assert!(o[1][2].is_nan(), "an item rated by one rater has no offset");
    }

    #[test]
    fn kolmogorov_tail_matches_the_tabulated_critical_values() {
        // P(K > 1.358) ≈ 0.05 and P(K > 1.628) ≈ 0.01 (Kolmogorov–Smirnov tables).
        assert!((kolmogorov_sf(1.3581) - 0.05).abs() < 5e-4, "5% point");
        assert!((kolmogorov_sf(1.6276) - 0.01).abs() < 5e-4, "1% point");
    }

    #[test]
    fn straight_lining_counts_items_with_one_value_everywhere() {
        let items = vec![
            vec![Some(3.0), Some(3.0), Some(3.0)],
            vec![Some(3.0), Some(4.0), Some(3.0)],
            vec![Some(5.0), None, Some(5.0)],
            vec![Some(5.0), Some(5.0), Some(5.0)],
            vec![None, None, Some(1.0)],
        ];
        let s = straight_lining(&items, Some(0.1));
        assert_eq!(
            (s.n, s.straight, s.longest_run),
            (4, 3, 2),
            "items with < 2 values are skipped"
        );
        // P(X ≥ 3 | n = 4, p = 0.1) = 4·0.001·0.9 + 0.0001 = 0.0037.
        assert!(
            (s.p_value.unwrap() - 0.0037).abs() < 1e-12,
            "binomial upper tail"
        );
    }

    #[test]
    fn too_fast_items_are_those_under_the_floor() {
        let t = time_on_task(&[30.0, 2.0, 0.0, 45.0, 1.0], 5.0);
        assert_eq!(
            t.too_fast,
            vec![1, 4],
            "unrecorded (0 s) times are not too fast"
        );
        assert_eq!(t.median, Some(16.0), "median of 1, 2, 30, 45");
    }
}
