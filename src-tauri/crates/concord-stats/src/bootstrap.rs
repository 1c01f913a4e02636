//! Percentile bootstrap over resampled targets with a caller-supplied random number generator, so
//! that a seeded generator reproduces the interval exactly. Each resample draws n target indices
//! with replacement (`rng.gen_range(0..n)`, n draws in order), hands them to the statistic, and the
//! kept replicates give the interval by percentiles.
//!
//! Percentiles use linear interpolation between order statistics — numpy's default
//! (`method="linear"`, Hyndman & Fan type 7): for sorted replicates x₀ ≤ … ≤ x_{m−1} the
//! p-quantile is x_⌊h⌋ + (h − ⌊h⌋)(x_⌊h⌋+1 − x_⌊h⌋) with h = (m − 1)p.
//!
//! The MentalAlign method is [`mentalalign_icc_c1_ci`]: 1,000 resamples of the (expert, judge)
//! pairs, pairs kept together, replicates whose ICC(C,1) is not finite or lies outside [0, 1]
//! dropped, percentiles 2.5 and 97.5.
//!
//! Targets that are not independent — the replies of one conversation, which share its history —
//! are resampled in whole clusters by [`cluster_icc_c1_ci`]: the indices drawn are clusters (in
//! the order each first appears among the pairs), every pair of a drawn cluster enters the
//! replicate as often as the cluster was drawn, and only undefined replicates are dropped
//! (ICC(C,1) of two raters lies in [−1, 1], and a judge near zero keeps its negative replicates).
//! [`cluster_icc_c1_cis`] bootstraps several sets of pairs over the same clusters from the same
//! resamples (common random numbers): each draw of a cluster adds that cluster's moments of every
//! set at once, so many figures over one set of conversations cost little more than one, and each
//! set's interval is exactly what [`cluster_icc_c1_ci`] gives it with the same generator.

use rand::Rng;
use serde::Serialize;
use thiserror::Error;

use crate::icc::{icc_c1_a1_of_totals, icc_c1_a1_resampled, pair_centre, PairMoments};

/// How to run a percentile bootstrap.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BootstrapOptions {
    /// Number of resamples.
    pub resamples: usize,
    /// Confidence level (0.95 gives percentiles 2.5 and 97.5).
    pub level: f64,
    /// Drop replicates for which the statistic is undefined (otherwise any undefined replicate
    /// makes the interval undefined).
    pub drop_undefined: bool,
    /// Drop replicates outside this closed range (e.g. `Some((0.0, 1.0))`).
    pub keep_range: Option<(f64, f64)>,
}

impl Default for BootstrapOptions {
    fn default() -> Self {
        Self {
            resamples: 1000,
            level: 0.95,
            drop_undefined: true,
            keep_range: None,
        }
    }
}

impl BootstrapOptions {
    /// The MentalAlign settings: 1,000 resamples, 95%, undefined and out-of-[0, 1] replicates dropped.
    pub fn mentalalign() -> Self {
        Self {
            resamples: 1000,
            level: 0.95,
            drop_undefined: true,
            keep_range: Some((0.0, 1.0)),
        }
    }
}

/// A percentile bootstrap interval and what was kept.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootstrapInterval {
    /// Lower percentile; `None` when no replicate was kept (or an undefined one was not dropped).
    pub lower: Option<f64>,
    /// Upper percentile.
    pub upper: Option<f64>,
    /// Resamples drawn.
    pub resamples: usize,
    /// Replicates kept.
    pub kept: usize,
    /// Replicates dropped as undefined (NaN, infinite or `None`).
    pub dropped_undefined: usize,
    /// Replicates dropped as outside the keep range.
    pub dropped_out_of_range: usize,
}

impl BootstrapInterval {
    /// Upper − lower, when both are defined.
    pub fn width(&self) -> Option<f64> {
        Some(self.upper? - self.lower?)
    }
}

/// Invalid bootstrap settings.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum BootstrapError {
    /// No targets to resample.
    #[error("cannot bootstrap zero targets")]
    NoTargets,
    /// The level is not inside (0, 1).
    #[error("confidence level {0} is not between 0 and 1")]
    Level(f64),
    /// The keep range is empty or not finite.
    #[error("keep range [{0}, {1}] is not a finite non-empty interval")]
    Range(f64, f64),
}

/// Linear-interpolation quantile (numpy's default) of an ascending slice; `None` when empty.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&p) {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    let frac = h - lo as f64;
    Some(sorted[lo] + frac * (sorted[hi] - sorted[lo]))
}

/// Percentile bootstrap of `statistic` over `n_targets` targets. The closure receives the
/// resampled indices (a buffer reused across resamples) and returns the replicate, `None` when
/// undefined.
pub fn percentile_ci<R, F>(
    n_targets: usize,
    options: &BootstrapOptions,
    rng: &mut R,
    mut statistic: F,
) -> Result<BootstrapInterval, BootstrapError>
where
    R: Rng + ?Sized,
    F: FnMut(&[usize]) -> Option<f64>,
{
    check_request(n_targets, options)?;
    let mut indices = vec![0usize; n_targets];
    let mut replicates = Vec::with_capacity(options.resamples);
    let (mut dropped_undefined, mut dropped_out_of_range) = (0, 0);
    let mut poisoned = false;
    for _ in 0..options.resamples {
        for slot in indices.iter_mut() {
            *slot = rng.gen_range(0..n_targets);
        }
        match statistic(&indices).filter(|x| x.is_finite()) {
            None => {
                dropped_undefined += 1;
                if !options.drop_undefined {
                    poisoned = true;
                }
            }
            Some(x) => match options.keep_range {
                Some((lo, hi)) if x < lo || x > hi => dropped_out_of_range += 1,
                _ => replicates.push(x),
            },
        }
    }
    replicates.sort_by(f64::total_cmp);
    let tail = (1.0 - options.level) / 2.0;
    let (lower, upper) = if poisoned {
        (None, None)
    } else {
        (
            quantile_sorted(&replicates, tail),
            quantile_sorted(&replicates, 1.0 - tail),
        )
    };
    Ok(BootstrapInterval {
        lower,
        upper,
        resamples: options.resamples,
        kept: replicates.len(),
        dropped_undefined,
        dropped_out_of_range,
    })
}

/// Refuse a bootstrap that cannot be drawn: no targets, a level outside (0, 1), or a keep range
/// that is not a finite interval.
pub(crate) fn check_request(
    n_targets: usize,
    options: &BootstrapOptions,
) -> Result<(), BootstrapError> {
    if n_targets == 0 {
        return Err(BootstrapError::NoTargets);
    }
    if !(options.level > 0.0 && options.level < 1.0) {
        return Err(BootstrapError::Level(options.level));
    }
    if let Some((lo, hi)) = options.keep_range {
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return Err(BootstrapError::Range(lo, hi));
        }
    }
    Ok(())
}

/// Percentile bootstrap of a statistic with `dimension` components computed together on each
/// resample (every strength of one model fit, say). Indices are drawn exactly as in
/// [`percentile_ci`], so with one component the interval is the same. The closure receives the
/// resampled indices and a buffer of `dimension` components to fill, and returns `false` when the
/// replicate is undefined; a replicate with any non-finite component is undefined too, and one
/// with any component outside the keep range is dropped. Replicates are kept or dropped whole, so
/// every component's interval rests on the same replicates; the result holds one interval per
/// component.
pub fn percentile_cis<R, F>(
    n_targets: usize,
    dimension: usize,
    options: &BootstrapOptions,
    rng: &mut R,
    mut statistic: F,
) -> Result<Vec<BootstrapInterval>, BootstrapError>
where
    R: Rng + ?Sized,
    F: FnMut(&[usize], &mut [f64]) -> bool,
{
    check_request(n_targets, options)?;
    let mut indices = vec![0usize; n_targets];
    let mut buffer = vec![0.0; dimension];
    let mut replicates: Vec<Vec<f64>> = (0..dimension)
        .map(|_| Vec::with_capacity(options.resamples))
        .collect();
    let (mut dropped_undefined, mut dropped_out_of_range) = (0, 0);
    let mut poisoned = false;
    for _ in 0..options.resamples {
        for slot in indices.iter_mut() {
            *slot = rng.gen_range(0..n_targets);
        }
        buffer.fill(f64::NAN);
        let defined = statistic(&indices, &mut buffer) && buffer.iter().all(|x| x.is_finite());
        if !defined {
            dropped_undefined += 1;
            if !options.drop_undefined {
                poisoned = true;
            }
            continue;
        }
        if let Some((lo, hi)) = options.keep_range {
            if buffer.iter().any(|&x| x < lo || x > hi) {
                dropped_out_of_range += 1;
                continue;
            }
        }
        for (component, &x) in replicates.iter_mut().zip(&buffer) {
            component.push(x);
        }
    }
    let tail = (1.0 - options.level) / 2.0;
    let kept = if dimension == 0 {
        options.resamples - dropped_undefined - dropped_out_of_range
    } else {
        replicates[0].len()
    };
    Ok(replicates
        .into_iter()
        .map(|mut component| {
            component.sort_by(f64::total_cmp);
            let (lower, upper) = if poisoned {
                (None, None)
            } else {
                (
                    quantile_sorted(&component, tail),
                    quantile_sorted(&component, 1.0 - tail),
                )
            };
            BootstrapInterval {
                lower,
                upper,
                resamples: options.resamples,
                kept,
                dropped_undefined,
                dropped_out_of_range,
            }
        })
        .collect())
}

/// The MentalAlign interval for ICC(C,1): 1,000 resamples of the (expert, judge) pairs.
pub fn mentalalign_icc_c1_ci<R: Rng + ?Sized>(
    pairs: &[(f64, f64)],
    rng: &mut R,
) -> Result<BootstrapInterval, BootstrapError> {
    percentile_ci(pairs.len(), &BootstrapOptions::mentalalign(), rng, |idx| {
        icc_c1_a1_resampled(pairs, idx).ok().and_then(|e| e.c1)
    })
}

/// The settings of the conversation-cluster bootstrap: `resamples` draws, 95%, undefined
/// replicates dropped, none dropped for its range.
pub fn cluster_options(resamples: usize) -> BootstrapOptions {
    BootstrapOptions {
        resamples,
        level: 0.95,
        drop_undefined: true,
        keep_range: None,
    }
}

/// The [`PairMoments`] of each cluster of `pairs` (`cluster_of[i]` names the cluster of pair
/// `i`), in the order each cluster first appears, about the pairs' own centre.
pub fn cluster_moments(pairs: &[(f64, f64)], cluster_of: &[u64]) -> Vec<PairMoments> {
    let centre = pair_centre(pairs);
    let mut position: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    let mut clusters: Vec<PairMoments> = Vec::new();
    for (&pair, &label) in pairs.iter().zip(cluster_of) {
        let at = *position.entry(label).or_insert_with(|| {
            clusters.push(PairMoments::default());
            clusters.len() - 1
        });
        clusters[at].add(pair, centre);
    }
    clusters
}

/// The percentile bootstrap interval of ICC(C,1) over (reference, rater) `pairs` that resamples
/// clusters whole (`cluster_of[i]` is pair `i`'s cluster, e.g. its conversation): each resample
/// draws as many clusters as there are, with replacement (`rng.gen_range(0..clusters)` in order,
/// clusters numbered by first appearance), and the replicate is ICC(C,1) of every pair of the
/// clusters drawn. Options as [`cluster_options`] gives them. With one pair per cluster this is
/// the ordinary bootstrap of the pairs without a keep range.
pub fn cluster_icc_c1_ci<R: Rng + ?Sized>(
    pairs: &[(f64, f64)],
    cluster_of: &[u64],
    options: &BootstrapOptions,
    rng: &mut R,
) -> Result<BootstrapInterval, BootstrapError> {
    let set = ClusteredPairs {
        centre: pair_centre(pairs),
        moments: cluster_moments(pairs, cluster_of),
    };
    let k = set.moments.len();
    let mut out = cluster_icc_c1_cis(std::slice::from_ref(&set), k, options, rng)?;
    Ok(out.remove(0))
}

/// One set of pairs of [`cluster_icc_c1_cis`]: the [`PairMoments`] of its pairs in each of the
/// shared clusters (in the shared order; a cluster where it has no pair holds zeros), about its
/// `centre`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusteredPairs {
    pub moments: Vec<PairMoments>,
    pub centre: (f64, f64),
}

impl ClusteredPairs {
    /// The moments of `pairs` whose clusters are `position[i]` among `clusters` shared clusters.
    pub fn new(pairs: &[(f64, f64)], position: &[usize], clusters: usize) -> ClusteredPairs {
        let centre = pair_centre(pairs);
        let mut moments = vec![PairMoments::default(); clusters];
        for (&pair, &at) in pairs.iter().zip(position) {
            if let Some(m) = moments.get_mut(at) {
                m.add(pair, centre);
            }
        }
        ClusteredPairs { moments, centre }
    }
}

/// Percentile bootstrap intervals of ICC(C,1) of several `sets` of pairs over the same `clusters`
/// clusters, from the same resamples: each of `options.resamples` resamples draws `clusters`
/// indices with replacement (`rng.gen_range(0..clusters)` in order, as [`percentile_ci`] draws),
/// and each set's replicate is ICC(C,1) of its pairs in the clusters drawn; each set keeps or
/// drops its own replicates and takes its own percentiles. One interval per set, in order.
pub fn cluster_icc_c1_cis<R: Rng + ?Sized>(
    sets: &[ClusteredPairs],
    clusters: usize,
    options: &BootstrapOptions,
    rng: &mut R,
) -> Result<Vec<BootstrapInterval>, BootstrapError> {
    if clusters == 0 {
        return Err(BootstrapError::NoTargets);
    }
    if !(options.level > 0.0 && options.level < 1.0) {
        return Err(BootstrapError::Level(options.level));
    }
    if let Some((lo, hi)) = options.keep_range {
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return Err(BootstrapError::Range(lo, hi));
        }
    }
    // Row c holds cluster c's five moments of every set, so a draw adds one contiguous row.
    let width = sets.len() * 5;
    let mut rows = vec![0.0f64; clusters * width];
    for (j, set) in sets.iter().enumerate() {
        for (c, m) in set.moments.iter().enumerate().take(clusters) {
            rows[c * width + j * 5..c * width + j * 5 + 5]
                .copy_from_slice(&[m.n, m.s, m.d, m.ss, m.dd]);
        }
    }
    let mut replicates: Vec<Vec<f64>> = sets
        .iter()
        .map(|_| Vec::with_capacity(options.resamples))
        .collect();
    let mut dropped = vec![(0usize, 0usize); sets.len()];
    let mut poisoned = vec![false; sets.len()];
    let mut totals = vec![0.0f64; width];
    for _ in 0..options.resamples {
        totals.fill(0.0);
        for _ in 0..clusters {
            let c = rng.gen_range(0..clusters);
            for (t, x) in totals.iter_mut().zip(&rows[c * width..(c + 1) * width]) {
                *t += x;
            }
        }
        for (j, set) in sets.iter().enumerate() {
            let t = &totals[j * 5..j * 5 + 5];
            let total = PairMoments {
                n: t[0],
                s: t[1],
                d: t[2],
                ss: t[3],
                dd: t[4],
            };
            match icc_c1_a1_of_totals(&total, set.centre)
                .c1
                .filter(|x| x.is_finite())
            {
                None => {
                    dropped[j].0 += 1;
                    if !options.drop_undefined {
                        poisoned[j] = true;
                    }
                }
                Some(x) => match options.keep_range {
                    Some((lo, hi)) if x < lo || x > hi => dropped[j].1 += 1,
                    _ => replicates[j].push(x),
                },
            }
        }
    }
    let tail = (1.0 - options.level) / 2.0;
    Ok(replicates
        .into_iter()
        .enumerate()
        .map(|(j, mut r)| {
            r.sort_by(f64::total_cmp);
            let (lower, upper) = if poisoned[j] {
                (None, None)
            } else {
                (quantile_sorted(&r, tail), quantile_sorted(&r, 1.0 - tail))
            };
            BootstrapInterval {
                lower,
                upper,
                resamples: options.resamples,
                kept: r.len(),
                dropped_undefined: dropped[j].0,
                dropped_out_of_range: dropped[j].1,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn numpy_linear_quantile() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(
            quantile_sorted(&x, 0.5),
            Some(2.5),
            "median of 1..4 interpolates to 2.5"
        );
        assert_eq!(
            quantile_sorted(&x, 0.025),
            Some(1.075),
            "h = 3·0.025 = 0.075 above the first value"
        );
        assert_eq!(
            quantile_sorted(&[], 0.5),
            None,
            "no replicates, no quantile"
        );
    }

    #[test]
    fn same_seed_same_interval() {
        let pairs: Vec<(f64, f64)> = (0..9).map(|i| (i as f64, (i * i % 7) as f64)).collect();
        let a = mentalalign_icc_c1_ci(&pairs, &mut ChaCha8Rng::seed_from_u64(7)).unwrap();
        let b = mentalalign_icc_c1_ci(&pairs, &mut ChaCha8Rng::seed_from_u64(7)).unwrap();
        assert_eq!(a, b, "a seeded generator must reproduce the interval");
        assert_eq!(
            a.kept + a.dropped_undefined + a.dropped_out_of_range,
            1000,
            "every resample is accounted for"
        );
    }

    #[test]
    fn one_component_reproduces_the_scalar_bootstrap() {
        let x: Vec<f64> = (0..25).map(|i| ((i * 7) % 11) as f64).collect();
        let mean = |idx: &[usize]| idx.iter().map(|&i| x[i]).sum::<f64>() / idx.len() as f64;
        let opts = BootstrapOptions::default();
        let scalar = percentile_ci(x.len(), &opts, &mut ChaCha8Rng::seed_from_u64(3), |idx| {
            Some(mean(idx))
        })
        .unwrap();
        let vector = percentile_cis(
            x.len(),
            2,
            &opts,
            &mut ChaCha8Rng::seed_from_u64(3),
            |idx, out| {
                out[0] = mean(idx);
                out[1] = -mean(idx);
                true
            },
        )
        .unwrap();
        assert_eq!(
            vector[0], scalar,
            "the same draws and percentiles must give the scalar interval"
        );
        let (lo, hi) = (vector[1].lower.unwrap(), vector[1].upper.unwrap());
        let (slo, shi) = (scalar.lower.unwrap(), scalar.upper.unwrap());
        assert!(
            (lo + shi).abs() < 1e-12 && (hi + slo).abs() < 1e-12,
            "each component takes its own percentiles over the same replicates"
        );
    }

    #[test]
    fn singleton_clusters_are_the_pairs_bootstrap() {
        let pairs: Vec<(f64, f64)> = (0..30)
            .map(|i| (((i * 7) % 5) as f64, ((i * 3) % 5) as f64 + 0.5))
            .collect();
        let options = cluster_options(300);
        let labels: Vec<u64> = (0..30).collect();
        let clustered =
            cluster_icc_c1_ci(&pairs, &labels, &options, &mut ChaCha8Rng::seed_from_u64(9))
                .unwrap();
        let plain = percentile_ci(
            pairs.len(),
            &options,
            &mut ChaCha8Rng::seed_from_u64(9),
            |idx| icc_c1_a1_resampled(&pairs, idx).ok().and_then(|e| e.c1),
        )
        .unwrap();
        let close = |a: Option<f64>, b: Option<f64>| (a.unwrap() - b.unwrap()).abs() < 1e-9;
        assert!(
            close(clustered.lower, plain.lower) && close(clustered.upper, plain.upper),
            "clusters of one pair each draw the same indices as the pairs' bootstrap: \
             {clustered:?} vs {plain:?}"
        );
    }

    #[test]
    fn sets_over_the_same_clusters_get_each_its_own_interval_from_shared_draws() {
        let pairs: Vec<(f64, f64)> = (0..40)
            .map(|i| (((i * 7) % 5) as f64, ((i * 3) % 5) as f64 + 0.5))
            .collect();
        let other: Vec<(f64, f64)> = pairs.iter().map(|&(a, b)| (a, 0.5 * (a + b))).collect();
        let labels: Vec<u64> = (0..40).map(|i| i / 4).collect();
        let options = cluster_options(200);
        let alone = |p: &[(f64, f64)]| {
            cluster_icc_c1_ci(p, &labels, &options, &mut ChaCha8Rng::seed_from_u64(4)).unwrap()
        };
        let position: Vec<usize> = labels.iter().map(|&l| l as usize).collect();
        let sets = [
            ClusteredPairs::new(&pairs, &position, 10),
            ClusteredPairs::new(&other, &position, 10),
        ];
        let together =
            cluster_icc_c1_cis(&sets, 10, &options, &mut ChaCha8Rng::seed_from_u64(4)).unwrap();
        assert_eq!(
            together,
            vec![alone(&pairs), alone(&other)],
            "each set's interval from the shared draws is the one it gets alone, every digit"
        );
    }

    #[test]
    fn undefined_replicates_poison_when_not_dropped() {
        let opts = BootstrapOptions {
            drop_undefined: false,
            ..BootstrapOptions::default()
        };
        let r = percentile_ci(3, &opts, &mut ChaCha8Rng::seed_from_u64(1), |_| None).unwrap();
        assert_eq!(
            (r.lower, r.upper),
            (None, None),
            "undefined replicates that are kept make the interval undefined"
        );
        assert!(
            percentile_ci(0, &opts, &mut ChaCha8Rng::seed_from_u64(1), |_| Some(1.0)).is_err(),
            "nothing to resample is an error"
        );
    }
}
