//! Drawing the study's conversations: a seeded draw of N conversations, stratified by category
//! where conversations have one. Each stratum gets its proportional share of N (largest
//! remainders round, ties to the larger stratum, then the stratum name), and within a stratum the
//! conversations are drawn uniformly. A conversation is drawn whole: every response (every
//! source) to it comes along, so each source is represented equally in the sample.

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BTreeMap;

/// A conversation that may be drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleCandidate {
    pub id: i64,
    /// The stratum (category); `None` is a stratum of its own.
    pub stratum: Option<String>,
}

/// How many conversations one stratum had and how many were drawn from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StratumCount {
    /// The category, `None` for conversations without one.
    pub category: Option<String>,
    pub available: usize,
    pub drawn: usize,
}

/// Proportional quotas per stratum summing to `min(n, total)`.
pub fn allocate(sizes: &[(Option<String>, usize)], n: usize) -> Vec<usize> {
    let total: usize = sizes.iter().map(|(_, s)| s).sum();
    let n = n.min(total);
    if total == 0 {
        return vec![0; sizes.len()];
    }
    let mut quotas: Vec<usize> = sizes.iter().map(|(_, s)| s * n / total).collect();
    let mut left = n - quotas.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    // Largest remainder first; remainders compared exactly as (s·n mod total).
    order.sort_by(|&a, &b| {
        let ra = sizes[a].1 * n % total;
        let rb = sizes[b].1 * n % total;
        rb.cmp(&ra)
            .then(sizes[b].1.cmp(&sizes[a].1))
            .then(sizes[a].0.cmp(&sizes[b].0))
    });
    for &i in order.iter().cycle() {
        if left == 0 {
            break;
        }
        if quotas[i] < sizes[i].1 {
            quotas[i] += 1;
            left -= 1;
        }
    }
    quotas
}

/// Draw up to `n` candidates, stratified; returns (id, stratum) in draw order (stratum by
/// stratum, in name order, `None` first).
pub fn draw_sample(
    candidates: &[SampleCandidate],
    n: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<(i64, Option<String>)> {
    let mut strata: BTreeMap<Option<String>, Vec<i64>> = BTreeMap::new();
    for c in candidates {
        strata.entry(c.stratum.clone()).or_default().push(c.id);
    }
    let sizes: Vec<(Option<String>, usize)> =
        strata.iter().map(|(k, v)| (k.clone(), v.len())).collect();
    let quotas = allocate(&sizes, n);
    let mut out = Vec::with_capacity(n.min(candidates.len()));
    for ((stratum, ids), quota) in strata.into_iter().zip(quotas) {
        let mut ids = ids;
        ids.shuffle(rng);
        out.extend(ids.into_iter().take(quota).map(|id| (id, stratum.clone())));
    }
    out
}

/// Per-stratum counts of a draw.
pub fn strata_counts(
    candidates: &[SampleCandidate],
    drawn: &[(i64, Option<String>)],
) -> Vec<StratumCount> {
    let mut counts: BTreeMap<Option<String>, (usize, usize)> = BTreeMap::new();
    for c in candidates {
        counts.entry(c.stratum.clone()).or_default().0 += 1;
    }
    for (_, s) in drawn {
        counts.entry(s.clone()).or_default().1 += 1;
    }
    counts
        .into_iter()
        .map(|(category, (available, drawn))| StratumCount {
            category,
            available,
            drawn,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocation_is_proportional_and_sums_to_n() {
        let sizes = vec![
            (Some("a".to_string()), 50),
            (Some("b".to_string()), 30),
            (Some("c".to_string()), 20),
        ];
        assert_eq!(
            allocate(&sizes, 10),
            vec![5, 3, 2],
            "exact proportions need no rounding"
        );
        let q = allocate(&sizes, 7);
        assert_eq!(
            q.iter().sum::<usize>(),
            7,
            "quotas must add up to the sample size"
        );
        assert_eq!(
            allocate(&sizes, 500),
            vec![50, 30, 20],
            "a sample larger than the pool takes everything"
        );
    }
}
