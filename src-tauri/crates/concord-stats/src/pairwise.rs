//! Blinded pairwise preferences: Bradley–Terry strengths per source with cluster-bootstrap
//! intervals and a ranking, win rates, agreement between two raters' preferences, and a judge's
//! position bias and position consistency.
//!
//! # Data and conventions
//!
//! The items are the *sources* of a conversation's answers (MentalBench: nine models and the human
//! counsellor), indexed `0..n_items`. A [`Comparison`] says which item was on the left, which on the
//! right, and the verdict in those terms ([`Outcome::Left`], [`Outcome::Right`] or
//! [`Outcome::Tie`]). Left and right are only names for the two sides: every fit below is
//! unchanged when a comparison's sides and verdict are swapped together. A comparison of an item
//! with itself, or naming an item outside `0..n_items`, is refused
//! ([`PairwiseError::SelfComparison`], [`PairwiseError::UnknownItem`]).
//!
//! # The API
//!
//! - [`bradley_terry`]`(n_items, &[Comparison], TieHandling) -> Result<BradleyTerryFit, _>`;
//! - [`leaderboard`]`(n_items, &[Vec<Comparison>] /* one per conversation */, TieHandling,
//!   &BootstrapOptions, &mut rng) -> Result<Leaderboard, _>`: the fit, percentile intervals,
//!   ranks and win rates per source;
//! - [`win_rates`]`(n_items, &[Comparison]) -> Result<Vec<WinRecord>, _>`: wins, losses, ties,
//!   score (wins + ties/2) and win rate (score / comparisons) per item;
//! - [`preference_agreement`]`(&[Outcome], &[Outcome], level) -> Result<PreferenceAgreement, _>`;
//! - [`position_bias`]`(first_wins, decided, level) -> PositionBias`;
//! - [`position_consistency`]`(&[(Outcome, Outcome)], level) -> PositionConsistency`;
//! - [`rank_correlation`]`(&[Option<f64>], &[Option<f64>]) -> RankCorrelation`, with
//!   [`spearman`] and [`kendall_tau_b`] on plain slices.
//!
//! Levels are confidence levels in (0, 1), e.g. 0.95; outside it the intervals are `None`.
//!
//! # The model
//!
//! Bradley & Terry (1952): P(i beats j) = π_i / (π_i + π_j). The reported strength is the
//! log-strength θ_i = ln π_i, centred to mean 0 over the items that were compared (an item never
//! compared has `None`), so θ_i − θ_j is the log-odds that i beats j. Ties are handled one of two
//! documented ways ([`TieHandling`]):
//!
//! - **Split**: a tie counts as half a win for each side, so the fit is the Bradley–Terry MLE on
//!   the counts w_ij + t_ij/2 (w_ij: times i beat j, t_ij: ties between them). This is exactly
//!   `evalica.bradley_terry` (whose default tie weight is 0.5) and `choix.ilsr_pairwise_dense` on
//!   the matrix W + T/2; the reported log-likelihood is that of the split counts,
//!   Σ (w_ij + t_ij/2) ln P(i beats j), summed over ordered pairs.
//! - **Davidson** (1970): P(i beats j) = π_i / D_ij, P(tie) = ν √(π_i π_j) / D_ij with
//!   D_ij = π_i + π_j + ν √(π_i π_j). The tie parameter ν ≥ 0 is estimated jointly with the
//!   strengths by maximum likelihood; with no tie in the data its MLE is the boundary ν = 0, the
//!   strengths are then the plain Bradley–Terry fit, and ν is reported as 0. ν equals twice the `v`
//!   of Newman's (2023) parameterisation (`evalica.newman`). The log-likelihood is that of the data,
//!   Σ over comparisons of ln P(observed outcome).
//!
//! # The algorithm
//!
//! The comparisons are first aggregated into counts by (verdict, left item, right item), one
//! branch-free increment per comparison, so an iteration costs O(p) in the p compared pairs of
//! items whatever the number of comparisons (at most [`MAX_ITEMS`] items may be declared: the
//! counts are dense and each step solves a dense system).
//! The fit is Newton–Raphson on (θ with the last compared item held at 0, ln ν) using the observed
//! information from the counts, solved by Cholesky: the log-likelihood is jointly concave in
//! (θ, ln ν) (each outcome's log-probability is an affine function minus a log-sum-exp of affine
//! functions), so Newton's direction always ascends; a step that does not increase the
//! log-likelihood is halved until it does. The iteration stops when the largest change of a
//! log-strength (or of ln ν) in a step is at most 10⁻¹⁰ (`converged = true`), or after 100
//! iterations (`converged = false`, the last iterate reported).
//!
//! # When the MLE exists
//!
//! Checked before fitting, with a typed error naming the problem rather than divergent numbers:
//! 1. the compared items form one group linked by comparisons (else
//!    [`PairwiseError::Disconnected`]: the groups' relative strengths are not identified);
//! 2. the directed graph with an edge i → j when i beat or tied j at least once (a tie gives both
//!    edges) is strongly connected (Zermelo 1929; Ford 1957; Hunter 2004). Otherwise some group of
//!    items never lost to, nor tied with, an item outside it (its strengths would go to +∞) and
//!    some group never beat nor tied one: [`PairwiseError::NotStronglyConnected`] names both;
//! 3. Davidson only: at least one comparison is decided (else [`PairwiseError::OnlyTies`]: ν would
//!    go to +∞), and some cycle of results — stepping from each winner to its loser, or across a
//!    tie in either direction — holds more wins than ties (else
//!    [`PairwiseError::DavidsonUnbounded`]). The last condition is stronger than 2: if A beat B
//!    once and they tied once, the graph is strongly connected, but letting ν and θ_A − θ_B grow
//!    together raises the likelihood for ever (P(B wins) → 0 while P(tie) stays). It is the
//!    infeasibility of the difference constraints θ_i − θ_j ≥ 1 (i beat j), |θ_i − θ_j| ≤ 1 (a tie),
//!    checked by Bellman–Ford as a negative cycle.
//!
//! # The leaderboard and its bootstrap
//!
//! [`leaderboard`] takes the comparisons grouped into clusters (one per conversation) and
//! resamples whole clusters with replacement ([`crate::bootstrap::percentile_cis`]: the indices
//! drawn as every bootstrap in this crate draws them, numpy's linear percentiles). A replicate is
//! kept when its MLE exists, the fit converged and every item compared in the full data is compared
//! in it (otherwise its strengths would be centred over other items); the others are dropped and
//! counted (`resamples_kept`); with `drop_undefined = false` one such replicate leaves every
//! interval undefined. The options' keep range is not used (strengths are unbounded). Davidson's
//! ν gets an interval too. A replicate adds each cluster's counts as many times as the cluster was
//! drawn, in cluster order, so it costs one sequential pass over the data plus a fit. Rank 1 is
//! the strongest point estimate; equal strengths keep the item order.
//!
//! # Agreement, position bias and consistency
//!
//! - [`preference_agreement`]: two raters' verdicts on the same (pair, criterion), as three
//!   categories left/right/tie: percent agreement with its Wilson interval
//!   (`statsmodels.stats.proportion.proportion_confint(method="wilson")`) and Cohen's κ with the
//!   asymptotic standard error of Fleiss, Cohen & Everitt (1969) and the interval κ ± z·SE, not
//!   clipped — `statsmodels.stats.inter_rater.cohens_kappa`'s `std_kappa`, `kappa_low`,
//!   `kappa_upp`. Both verdicts must be in the same left/right terms.
//! - [`position_bias`]: among decided verdicts (the caller leaves ties out), the share won by the
//!   answer shown first, with the exact Clopper–Pearson interval and the two-sided exact binomial
//!   test against ½ (`scipy.stats.binomtest`: the p-value sums the probabilities of the counts no
//!   more likely than the observed one, with scipy's relative tolerance 10⁻⁷).
//! - [`position_consistency`]: the share of pairs asked in both orders whose verdict, expressed in
//!   the pair's canonical left/right terms, is the same both times (tie and tie is consistent),
//!   with its Wilson interval.
//! - [`rank_correlation`]: Spearman's ρ (average ranks, `scipy.stats.spearmanr`) and Kendall's τ-b
//!   (`scipy.stats.kendalltau`) between two item scorings, e.g. Bradley–Terry strengths and mean
//!   1–5 scores, over the items both define; [`spearman`] and [`kendall_tau_b`] are the ones of
//!   [`crate::paired`].
//!
//! Nothing here panics on any input; undefined results are `None`.

use std::borrow::Borrow;

use rand::Rng;
use serde::Serialize;
use statrs::function::gamma::ln_gamma;
use thiserror::Error;

use crate::bootstrap::{percentile_cis, BootstrapError, BootstrapInterval, BootstrapOptions};
use crate::categorical::wilson_interval;
pub use crate::paired::{kendall_tau_b, spearman};
use crate::special::{beta_quantile, beta_tails, z_critical};

/// Largest change of a log-strength (or of ln ν) in a Newton step at which the fit has converged.
pub const TOLERANCE: f64 = 1e-10;
/// Newton iterations before a fit gives up (`converged = false`).
pub const MAX_ITERATIONS: usize = 100;
/// Most items (sources) a fit accepts: the counts are dense 3 × n × n and each Newton step solves
/// an n × n system, which suits the ten sources of a conversation, not thousands of items.
pub const MAX_ITEMS: usize = 1_000;

/// A verdict on a pair, in the pair's left/right terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The left answer wins.
    Left,
    /// The right answer wins.
    Right,
    /// Neither is preferred.
    Tie,
}

impl Outcome {
    /// The same verdict with the sides swapped.
    pub fn swapped(self) -> Outcome {
        match self {
            Outcome::Left => Outcome::Right,
            Outcome::Right => Outcome::Left,
            Outcome::Tie => Outcome::Tie,
        }
    }

    fn category(self) -> usize {
        match self {
            Outcome::Left => 0,
            Outcome::Right => 1,
            Outcome::Tie => 2,
        }
    }
}

/// One judgement of two items (indices `0..n_items`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Comparison {
    /// The item on the left.
    pub left: usize,
    /// The item on the right.
    pub right: usize,
    /// The verdict.
    pub outcome: Outcome,
}

impl Comparison {
    /// A comparison of `left` and `right` with its verdict.
    pub fn new(left: usize, right: usize, outcome: Outcome) -> Self {
        Self {
            left,
            right,
            outcome,
        }
    }

    /// The same judgement with the sides (and so the verdict) swapped.
    pub fn swapped(self) -> Self {
        Self {
            left: self.right,
            right: self.left,
            outcome: self.outcome.swapped(),
        }
    }

    /// The winning item, `None` for a tie.
    pub fn winner(&self) -> Option<usize> {
        match self.outcome {
            Outcome::Left => Some(self.left),
            Outcome::Right => Some(self.right),
            Outcome::Tie => None,
        }
    }
}

/// How ties enter the Bradley–Terry fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum TieHandling {
    /// Davidson (1970): a tie parameter ν estimated jointly by maximum likelihood.
    Davidson,
    /// A tie counts as half a win for each side.
    Split,
}

impl TieHandling {
    /// The name it is serialised with (`davidson`, `split`).
    pub fn as_str(self) -> &'static str {
        match self {
            TieHandling::Davidson => "davidson",
            TieHandling::Split => "split",
        }
    }
}

/// Why a pairwise statistic could not be computed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PairwiseError {
    /// A comparison names an item outside `0..n_items`.
    #[error("comparison {comparison} names item {item}, but only {n_items} items were declared")]
    UnknownItem {
        /// 0-based position of the comparison (counted across clusters in order).
        comparison: usize,
        /// The offending item.
        item: usize,
        /// Declared items.
        n_items: usize,
    },
    /// A comparison compares an item with itself.
    #[error("comparison {comparison} compares item {item} with itself")]
    SelfComparison {
        /// 0-based position of the comparison (counted across clusters in order).
        comparison: usize,
        /// The item.
        item: usize,
    },
    /// More items declared than a fit handles.
    #[error("{n_items} items were declared; at most {limit} are supported")]
    TooManyItems {
        /// Declared items.
        n_items: usize,
        /// [`MAX_ITEMS`].
        limit: usize,
    },
    /// Nothing to fit.
    #[error("there are no comparisons to fit")]
    NoComparisons,
    /// The compared items fall into groups never compared with each other.
    #[error(
        "the compared items fall into groups never compared with each other, {groups:?}: \
         their relative strengths are not identified"
    )]
    Disconnected {
        /// The groups, each in item order, ordered by their first item.
        groups: Vec<Vec<usize>>,
    },
    /// Some items never lost to (nor tied with) the others, so no finite MLE exists.
    #[error(
        "no maximum-likelihood strengths: items {unbeaten:?} never lost to or tied with an item \
         outside them, and items {winless:?} never beat or tied one"
    )]
    NotStronglyConnected {
        /// A group of items none of which lost to or tied with an item outside the group.
        unbeaten: Vec<usize>,
        /// A group of items none of which beat or tied an item outside the group.
        winless: Vec<usize>,
    },
    /// Davidson ties: every comparison is a tie.
    #[error("every comparison is a tie: the Davidson tie parameter has no finite estimate")]
    OnlyTies,
    /// Davidson ties: no cycle of results holds more wins than ties.
    #[error(
        "no Davidson maximum-likelihood estimate: no cycle of results holds more wins than ties, \
         so the tie parameter and the strength differences grow without bound"
    )]
    DavidsonUnbounded,
    /// Two raters' verdicts are not paired one to one.
    #[error("the raters' verdicts number {first} and {second}: they must be paired one to one")]
    LengthMismatch {
        /// Verdicts of the first rater.
        first: usize,
        /// Verdicts of the second rater.
        second: usize,
    },
    /// Invalid bootstrap settings.
    #[error(transparent)]
    Bootstrap(#[from] BootstrapError),
}

/// A maximum-likelihood Bradley–Terry fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BradleyTerryFit {
    /// Log-strength θ_i per item, centred to mean 0 over the compared items; `None` for an item
    /// never compared.
    pub strengths: Vec<Option<f64>>,
    /// How ties were handled.
    pub ties: TieHandling,
    /// Davidson's ν (0 when the data hold no tie); `None` with split ties.
    pub tie_parameter: Option<f64>,
    /// Log-likelihood at the estimate (of the split counts with split ties).
    pub log_likelihood: f64,
    /// Newton iterations taken.
    pub iterations: usize,
    /// Whether the last Newton step moved every log-strength by at most [`TOLERANCE`].
    pub converged: bool,
}

/// Counts of comparisons by (verdict, left item, right item): 3 × n × n cells, so that adding a
/// comparison is one branch-free increment.
#[derive(Debug, Clone)]
struct Tally {
    n: usize,
    cells: Vec<f64>,
}

impl Tally {
    fn new(n: usize) -> Self {
        Self {
            n,
            cells: vec![0.0; 3 * n * n],
        }
    }

    fn clear(&mut self) {
        self.cells.fill(0.0);
    }

    /// The cell of a validated comparison.
    fn cell(&self, c: &Comparison) -> usize {
        (c.outcome.category() * self.n + c.left) * self.n + c.right
    }

    /// Adds a validated comparison `weight` times.
    fn add(&mut self, c: &Comparison, weight: f64) {
        let cell = self.cell(c);
        self.cells[cell] += weight;
    }

    /// Times i beat j, from either side.
    fn wins(&self, i: usize, j: usize) -> f64 {
        let n = self.n;
        self.cells[i * n + j] + self.cells[(n + j) * n + i]
    }

    /// Ties between i and j, from either side.
    fn ties(&self, i: usize, j: usize) -> f64 {
        let n = self.n;
        self.cells[(2 * n + i) * n + j] + self.cells[(2 * n + j) * n + i]
    }
}

/// Counts of one compared pair, in compact item indices.
#[derive(Debug, Clone, Copy)]
struct PairCounts {
    i: usize,
    j: usize,
    /// Times i beat j.
    wins_i: f64,
    /// Times j beat i.
    wins_j: f64,
    ties: f64,
}

fn validate(
    n_items: usize,
    comparisons: &[Comparison],
    offset: usize,
) -> Result<(), PairwiseError> {
    if n_items > MAX_ITEMS {
        return Err(PairwiseError::TooManyItems {
            n_items,
            limit: MAX_ITEMS,
        });
    }
    for (k, c) in comparisons.iter().enumerate() {
        for item in [c.left, c.right] {
            if item >= n_items {
                return Err(PairwiseError::UnknownItem {
                    comparison: offset + k,
                    item,
                    n_items,
                });
            }
        }
        if c.left == c.right {
            return Err(PairwiseError::SelfComparison {
                comparison: offset + k,
                item: c.left,
            });
        }
    }
    Ok(())
}

/// Bradley–Terry maximum-likelihood strengths of `n_items` items from `comparisons`, with ties
/// handled as `ties` says (see the module documentation for the model, the algorithm and when the
/// estimate exists).
pub fn bradley_terry(
    n_items: usize,
    comparisons: &[Comparison],
    ties: TieHandling,
) -> Result<BradleyTerryFit, PairwiseError> {
    validate(n_items, comparisons, 0)?;
    let mut tally = Tally::new(n_items);
    for c in comparisons {
        tally.add(c, 1.0);
    }
    fit_tally(&tally, ties)
}

fn fit_tally(tally: &Tally, ties: TieHandling) -> Result<BradleyTerryFit, PairwiseError> {
    let n = tally.n;
    // Compact indices of the compared items.
    let mut compact = vec![usize::MAX; n];
    let mut items = Vec::new();
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in (i + 1)..n {
            let (wins_i, wins_j, t) = (tally.wins(i, j), tally.wins(j, i), tally.ties(i, j));
            if wins_i + wins_j + t > 0.0 {
                for v in [i, j] {
                    if compact[v] == usize::MAX {
                        compact[v] = items.len();
                        items.push(v);
                    }
                }
                pairs.push((i, j, wins_i, wins_j, t));
            }
        }
    }
    if pairs.is_empty() {
        return Err(PairwiseError::NoComparisons);
    }
    // Items in ascending order keep the reported groups readable.
    items.sort_unstable();
    for (k, &v) in items.iter().enumerate() {
        compact[v] = k;
    }
    let m = items.len();
    let pairs: Vec<PairCounts> = pairs
        .into_iter()
        .map(|(i, j, wins_i, wins_j, ties)| PairCounts {
            i: compact[i],
            j: compact[j],
            wins_i,
            wins_j,
            ties,
        })
        .collect();
    check_connected(&pairs, m, &items)?;
    check_strongly_connected(&pairs, m, &items)?;
    let total_ties: f64 = pairs.iter().map(|p| p.ties).sum();
    let decided: f64 = pairs.iter().map(|p| p.wins_i + p.wins_j).sum();
    let model = match ties {
        TieHandling::Split => Model::Split,
        TieHandling::Davidson if total_ties == 0.0 => Model::Split,
        TieHandling::Davidson => {
            if decided == 0.0 {
                return Err(PairwiseError::OnlyTies);
            }
            if !has_winning_cycle(&pairs, m) {
                return Err(PairwiseError::DavidsonUnbounded);
            }
            Model::Davidson {
                initial_log_nu: (2.0 * total_ties / decided).ln(),
            }
        }
    };
    let estimate = newton(&pairs, m, model);
    let mean = estimate.theta.iter().sum::<f64>() / m as f64;
    let mut strengths = vec![None; n];
    for (k, &v) in items.iter().enumerate() {
        strengths[v] = Some(estimate.theta[k] - mean);
    }
    let tie_parameter = match (ties, model) {
        (TieHandling::Split, _) => None,
        (TieHandling::Davidson, Model::Split) => Some(0.0),
        (TieHandling::Davidson, Model::Davidson { .. }) => Some(estimate.log_nu.exp()),
    };
    Ok(BradleyTerryFit {
        strengths,
        ties,
        tie_parameter,
        log_likelihood: estimate.log_likelihood,
        iterations: estimate.iterations,
        converged: estimate.converged,
    })
}

/// Groups of compact items linked by comparisons, reported as an error when there are several.
fn check_connected(pairs: &[PairCounts], m: usize, items: &[usize]) -> Result<(), PairwiseError> {
    let mut parent: Vec<usize> = (0..m).collect();
    fn root(parent: &mut [usize], mut v: usize) -> usize {
        while parent[v] != v {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        v
    }
    for p in pairs {
        let (a, b) = (root(&mut parent, p.i), root(&mut parent, p.j));
        if a != b {
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of_root = vec![usize::MAX; m];
    for (v, &item) in items.iter().enumerate() {
        let r = root(&mut parent, v);
        if group_of_root[r] == usize::MAX {
            group_of_root[r] = groups.len();
            groups.push(Vec::new());
        }
        groups[group_of_root[r]].push(item);
    }
    if groups.len() > 1 {
        return Err(PairwiseError::Disconnected { groups });
    }
    Ok(())
}

/// Strong components of the "beat or tied" graph (Kosaraju, iterative); an error naming a source
/// and a sink component when there are several.
fn check_strongly_connected(
    pairs: &[PairCounts],
    m: usize,
    items: &[usize],
) -> Result<(), PairwiseError> {
    // beats[a * m + b]: a beat or tied b at least once.
    let mut beats = vec![false; m * m];
    for p in pairs {
        if p.wins_i > 0.0 || p.ties > 0.0 {
            beats[p.i * m + p.j] = true;
        }
        if p.wins_j > 0.0 || p.ties > 0.0 {
            beats[p.j * m + p.i] = true;
        }
    }
    // First pass: finishing order on the graph.
    let mut visited = vec![false; m];
    let mut order = Vec::with_capacity(m);
    for start in 0..m {
        if visited[start] {
            continue;
        }
        visited[start] = true;
        let mut stack = vec![(start, 0usize)];
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(w) = (*next..m).find(|&w| beats[v * m + w] && !visited[w]) {
                *next = w + 1;
                visited[w] = true;
                stack.push((w, 0));
            } else {
                order.push(v);
                stack.pop();
            }
        }
    }
    // Second pass on the reversed graph, in reverse finishing order.
    let mut component = vec![usize::MAX; m];
    let mut count = 0;
    for &start in order.iter().rev() {
        if component[start] != usize::MAX {
            continue;
        }
        component[start] = count;
        let mut stack = vec![start];
        while let Some(v) = stack.pop() {
            for w in 0..m {
                if beats[w * m + v] && component[w] == usize::MAX {
                    component[w] = count;
                    stack.push(w);
                }
            }
        }
        count += 1;
    }
    if count <= 1 {
        return Ok(());
    }
    // A component with no edge coming in from outside never lost; one with no edge going out
    // never won.
    let mut entered = vec![false; count];
    let mut left = vec![false; count];
    for a in 0..m {
        for b in 0..m {
            if beats[a * m + b] && component[a] != component[b] {
                left[component[a]] = true;
                entered[component[b]] = true;
            }
        }
    }
    let members = |c: usize| -> Vec<usize> {
        (0..m)
            .filter(|&v| component[v] == c)
            .map(|v| items[v])
            .collect()
    };
    let unbeaten = (0..count).find(|&c| !entered[c]).map(members);
    let winless = (0..count).find(|&c| !left[c]).map(members);
    Err(PairwiseError::NotStronglyConnected {
        unbeaten: unbeaten.unwrap_or_default(),
        winless: winless.unwrap_or_default(),
    })
}

/// Whether some cycle of results holds more wins than ties: a negative cycle (Bellman–Ford) in
/// the graph with an edge winner → loser of weight −1 and, across a tie, edges both ways of
/// weight +1 (the cheaper edge kept per direction).
fn has_winning_cycle(pairs: &[PairCounts], m: usize) -> bool {
    let mut edges: Vec<(usize, usize, i64)> = Vec::with_capacity(2 * pairs.len());
    for p in pairs {
        for (from, to, wins) in [(p.i, p.j, p.wins_i), (p.j, p.i, p.wins_j)] {
            if wins > 0.0 {
                edges.push((from, to, -1));
            } else if p.ties > 0.0 {
                edges.push((from, to, 1));
            }
        }
    }
    // A virtual source at distance 0 from every item; m + 1 vertices, so a change in pass m + 1
    // means a negative cycle.
    let mut distance = vec![0i64; m];
    for _ in 0..=m {
        let mut changed = false;
        for &(from, to, weight) in &edges {
            if distance[from] + weight < distance[to] {
                distance[to] = distance[from] + weight;
                changed = true;
            }
        }
        if !changed {
            return false;
        }
    }
    true
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Model {
    /// Bradley–Terry on wins + ties/2.
    Split,
    /// Davidson's ties, ν estimated from this starting value of ln ν.
    Davidson { initial_log_nu: f64 },
}

struct Estimate {
    /// Log-strengths in compact order, the last held at 0.
    theta: Vec<f64>,
    log_nu: f64,
    log_likelihood: f64,
    iterations: usize,
    converged: bool,
}

/// ln(e^a + e^b + e^c) without overflow.
fn log_sum_exp3(a: f64, b: f64, c: f64) -> f64 {
    let top = a.max(b).max(c);
    if top == f64::NEG_INFINITY {
        return top;
    }
    top + ((a - top).exp() + (b - top).exp() + (c - top).exp()).ln()
}

/// ln(1 + e^x) without overflow.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// Log-likelihood, and optionally its gradient and the observed information, at (θ, ln ν) over
/// the m compact items (index m is ln ν in the derivative arrays, used by Davidson only).
fn evaluate(
    pairs: &[PairCounts],
    m: usize,
    davidson: bool,
    theta: &[f64],
    log_nu: f64,
    derivatives: Option<(&mut [f64], &mut [f64])>,
) -> f64 {
    let mut ll = 0.0;
    let k = m + 1;
    let mut derivatives = derivatives;
    if let Some((grad, info)) = derivatives.as_mut() {
        grad.fill(0.0);
        info.fill(0.0);
    }
    let term = |count: f64, log_p: f64| if count > 0.0 { count * log_p } else { 0.0 };
    for p in pairs {
        let d = theta[p.i] - theta[p.j];
        let n = p.wins_i + p.wins_j + p.ties;
        if davidson {
            let log_d = log_sum_exp3(d / 2.0, -d / 2.0, log_nu);
            let (lpi, lpj, lpt) = (d / 2.0 - log_d, -d / 2.0 - log_d, log_nu - log_d);
            ll += term(p.wins_i, lpi) + term(p.wins_j, lpj) + term(p.ties, lpt);
            if let Some((grad, info)) = derivatives.as_mut() {
                let (pi, pj, pt) = (lpi.exp(), lpj.exp(), lpt.exp());
                let (a, b) = (pi + pt / 2.0, pj + pt / 2.0);
                grad[p.i] += p.wins_i + p.ties / 2.0 - n * a;
                grad[p.j] += p.wins_j + p.ties / 2.0 - n * b;
                grad[m] += p.ties - n * pt;
                info[p.i * k + p.i] += n * (pi + pt / 4.0 - a * a);
                info[p.j * k + p.j] += n * (pj + pt / 4.0 - b * b);
                let ij = n * (pt / 4.0 - a * b);
                info[p.i * k + p.j] += ij;
                info[p.j * k + p.i] += ij;
                let il = n * (pt / 2.0 - a * pt);
                let jl = n * (pt / 2.0 - b * pt);
                info[p.i * k + m] += il;
                info[m * k + p.i] += il;
                info[p.j * k + m] += jl;
                info[m * k + p.j] += jl;
                info[m * k + m] += n * (pt - pt * pt);
            }
        } else {
            let (a, b) = (p.wins_i + p.ties / 2.0, p.wins_j + p.ties / 2.0);
            let (lpi, lpj) = (-softplus(-d), -softplus(d));
            ll += term(a, lpi) + term(b, lpj);
            if let Some((grad, info)) = derivatives.as_mut() {
                let (pi, pj) = (lpi.exp(), lpj.exp());
                grad[p.i] += a - n * pi;
                grad[p.j] += b - n * pj;
                let v = n * pi * pj;
                info[p.i * k + p.i] += v;
                info[p.j * k + p.j] += v;
                info[p.i * k + p.j] -= v;
                info[p.j * k + p.i] -= v;
            }
        }
    }
    ll
}

/// Solves `a x = b` for a symmetric positive definite `a` (dim × dim, row-major) by Cholesky, in
/// place: `b` becomes x. `false` when `a` is not numerically positive definite.
fn cholesky_solve(a: &mut [f64], b: &mut [f64], dim: usize) -> bool {
    for j in 0..dim {
        let mut diag = a[j * dim + j];
        for k in 0..j {
            diag -= a[j * dim + k] * a[j * dim + k];
        }
        if !(diag > 0.0 && diag.is_finite()) {
            return false;
        }
        let diag = diag.sqrt();
        a[j * dim + j] = diag;
        for i in (j + 1)..dim {
            let mut s = a[i * dim + j];
            for k in 0..j {
                s -= a[i * dim + k] * a[j * dim + k];
            }
            a[i * dim + j] = s / diag;
        }
    }
    for i in 0..dim {
        let mut s = b[i];
        for k in 0..i {
            s -= a[i * dim + k] * b[k];
        }
        b[i] = s / a[i * dim + i];
    }
    for i in (0..dim).rev() {
        let mut s = b[i];
        for k in (i + 1)..dim {
            s -= a[k * dim + i] * b[k];
        }
        b[i] = s / a[i * dim + i];
    }
    true
}

/// Newton–Raphson with step halving, θ of the last compact item held at 0.
fn newton(pairs: &[PairCounts], m: usize, model: Model) -> Estimate {
    let (davidson, mut log_nu) = match model {
        Model::Split => (false, f64::NEG_INFINITY),
        Model::Davidson { initial_log_nu } => (true, initial_log_nu),
    };
    let k = m + 1;
    // Free parameters: θ_0 … θ_{m−2}, then ln ν for Davidson.
    let free: Vec<usize> = (0..m - 1).chain(davidson.then_some(m)).collect();
    let dim = free.len();
    let mut theta = vec![0.0; m];
    let (mut grad, mut info) = (vec![0.0; k], vec![0.0; k * k]);
    let (mut system, mut step) = (vec![0.0; dim * dim], vec![0.0; dim]);
    let mut trial = vec![0.0; m];
    let mut ll = evaluate(pairs, m, davidson, &theta, log_nu, None);
    let mut iterations = 0;
    let mut converged = dim == 0;
    while !converged && iterations < MAX_ITERATIONS {
        iterations += 1;
        evaluate(
            pairs,
            m,
            davidson,
            &theta,
            log_nu,
            Some((&mut grad, &mut info)),
        );
        for (r, &fr) in free.iter().enumerate() {
            step[r] = grad[fr];
            for (c, &fc) in free.iter().enumerate() {
                system[r * dim + c] = info[fr * k + fc];
            }
        }
        if !cholesky_solve(&mut system, &mut step, dim) {
            break;
        }
        let largest = step.iter().fold(0.0f64, |acc, s| acc.max(s.abs()));
        if !largest.is_finite() {
            break;
        }
        // A full Newton step this small is the last: the estimate has converged.
        let small = largest <= TOLERANCE;
        let mut scale = 1.0;
        let accepted = loop {
            trial.copy_from_slice(&theta);
            let mut trial_nu = log_nu;
            for (r, &fr) in free.iter().enumerate() {
                if fr == m {
                    trial_nu += scale * step[r];
                } else {
                    trial[fr] += scale * step[r];
                }
            }
            let trial_ll = evaluate(pairs, m, davidson, &trial, trial_nu, None);
            let slack = 1e-12 * (1.0 + ll.abs());
            if small || (trial_ll.is_finite() && trial_ll >= ll - slack) {
                theta.copy_from_slice(&trial);
                log_nu = trial_nu;
                ll = trial_ll;
                break true;
            }
            scale /= 2.0;
            if scale < 1e-12 {
                break false;
            }
        };
        if !accepted {
            break;
        }
        converged = small;
    }
    Estimate {
        theta,
        log_nu,
        log_likelihood: ll,
        iterations,
        converged,
    }
}

/// One item's line on the leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceStrength {
    /// The item (source) index.
    pub item: usize,
    /// Centred log-strength; `None` when never compared.
    pub strength: Option<f64>,
    /// Lower percentile bootstrap bound.
    pub ci_low: Option<f64>,
    /// Upper percentile bootstrap bound.
    pub ci_high: Option<f64>,
    /// 1 = strongest point estimate; `None` when never compared.
    pub rank: Option<usize>,
    /// Wins, a tie counting half.
    pub wins: f64,
    /// Comparisons the item took part in.
    pub comparisons: usize,
    /// wins / comparisons; `None` when never compared.
    pub win_rate: Option<f64>,
}

/// Bradley–Terry strengths with cluster-bootstrap intervals and ranks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Leaderboard {
    /// One entry per item, strongest first; items never compared last, in item order.
    pub entries: Vec<SourceStrength>,
    /// How ties were handled.
    pub ties: TieHandling,
    /// Davidson's ν of the point fit; `None` with split ties.
    pub tie_parameter: Option<f64>,
    /// Percentile bootstrap interval of ν (Davidson only).
    pub tie_parameter_ci: (Option<f64>, Option<f64>),
    /// Whether the point fit converged.
    pub converged: bool,
    /// Replicates kept (MLE exists, converged, the same items compared).
    pub resamples_kept: usize,
    /// Resamples drawn.
    pub resamples: usize,
}

/// The leaderboard: the Bradley–Terry fit of all comparisons with percentile intervals from
/// resampling `clusters` (one per conversation, resampled whole) with replacement. Errors when
/// the full data have no MLE or the bootstrap options are invalid.
pub fn leaderboard<R: Rng + ?Sized>(
    n_items: usize,
    clusters: &[Vec<Comparison>],
    ties: TieHandling,
    options: &BootstrapOptions,
    rng: &mut R,
) -> Result<Leaderboard, PairwiseError> {
    let mut tally = tally_clusters(n_items, clusters)?;
    let fit = fit_tally(&tally, ties)?;
    let compared: Vec<usize> = (0..n_items)
        .filter(|&i| fit.strengths[i].is_some())
        .collect();
    let with_nu = ties == TieHandling::Davidson;
    let options = BootstrapOptions {
        keep_range: None,
        ..options.clone()
    };
    let intervals = bootstrap_strengths(
        &mut tally,
        clusters,
        &ResampledFit {
            ties,
            compared: &compared,
            with_nu,
        },
        &options,
        rng,
    )?;
    let entries = leaderboard_entries(n_items, clusters, &fit, &compared, &intervals);
    let nu_interval = if with_nu {
        intervals.get(compared.len())
    } else {
        None
    };
    Ok(Leaderboard {
        entries,
        ties,
        tie_parameter: fit.tie_parameter,
        tie_parameter_ci: (
            nu_interval.and_then(|i| i.lower),
            nu_interval.and_then(|i| i.upper),
        ),
        converged: fit.converged,
        resamples_kept: intervals.first().map_or(0, |i| i.kept),
        resamples: options.resamples,
    })
}

/// The counts of every cluster's comparisons, each checked (its index counted across clusters).
fn tally_clusters(n_items: usize, clusters: &[Vec<Comparison>]) -> Result<Tally, PairwiseError> {
    // Checks the number of items even when there is no comparison to check.
    validate(n_items, &[], 0)?;
    let mut offset = 0;
    let mut tally = Tally::new(n_items);
    for cluster in clusters {
        validate(n_items, cluster, offset)?;
        offset += cluster.len();
        for c in cluster {
            tally.add(c, 1.0);
        }
    }
    Ok(tally)
}

/// What a bootstrap replicate's fit reports: the items compared in the full data, then ν.
struct ResampledFit<'a> {
    ties: TieHandling,
    /// The items compared in the full data, in item order.
    compared: &'a [usize],
    /// Whether ν follows the strengths (Davidson).
    with_nu: bool,
}

/// Percentile intervals of the compared items' strengths (then ν) from resampling whole clusters;
/// `tally` is reused as each replicate's counts.
fn bootstrap_strengths<R: Rng + ?Sized>(
    tally: &mut Tally,
    clusters: &[Vec<Comparison>],
    fit: &ResampledFit<'_>,
    options: &BootstrapOptions,
    rng: &mut R,
) -> Result<Vec<BootstrapInterval>, PairwiseError> {
    let compared = fit.compared;
    let dimension = compared.len() + usize::from(fit.with_nu);
    // Each cluster's comparisons as tally cells, contiguous, with the clusters' offsets. A
    // replicate adds each cluster as many times as it was drawn, visiting the clusters in order:
    // one sequential pass over the cells rather than a random access per draw.
    let mut cells = Vec::with_capacity(clusters.iter().map(Vec::len).sum());
    let mut starts = Vec::with_capacity(clusters.len() + 1);
    for cluster in clusters {
        starts.push(cells.len());
        cells.extend(cluster.iter().map(|c| tally.cell(c)));
    }
    starts.push(cells.len());
    let mut draws = vec![0u32; clusters.len()];
    let intervals = percentile_cis(clusters.len(), dimension, options, rng, |idx, out| {
        draws.fill(0);
        for &c in idx {
            draws[c] += 1;
        }
        tally.clear();
        for (k, &times) in draws.iter().enumerate() {
            if times > 0 {
                let weight = f64::from(times);
                for &cell in &cells[starts[k]..starts[k + 1]] {
                    tally.cells[cell] += weight;
                }
            }
        }
        let Ok(replicate) = fit_tally(tally, fit.ties) else {
            return false;
        };
        if !replicate.converged {
            return false;
        }
        let in_use = replicate.strengths.iter().filter(|s| s.is_some()).count();
        if in_use != compared.len() {
            return false;
        }
        for (slot, &item) in out.iter_mut().zip(compared) {
            match replicate.strengths[item] {
                Some(s) => *slot = s,
                None => return false,
            }
        }
        if fit.with_nu {
            out[compared.len()] = replicate.tie_parameter.unwrap_or(f64::NAN);
        }
        true
    })?;
    Ok(intervals)
}

/// The leaderboard's lines: the compared items strongest first with their intervals and ranks,
/// then the items never compared in item order.
fn leaderboard_entries(
    n_items: usize,
    clusters: &[Vec<Comparison>],
    fit: &BradleyTerryFit,
    compared: &[usize],
    intervals: &[BootstrapInterval],
) -> Vec<SourceStrength> {
    let record_of = records(n_items, clusters.iter().flatten());
    let mut order: Vec<usize> = compared.to_vec();
    order.sort_by(|&a, &b| {
        let (sa, sb) = (
            fit.strengths[a].unwrap_or(f64::NEG_INFINITY),
            fit.strengths[b].unwrap_or(f64::NEG_INFINITY),
        );
        sb.total_cmp(&sa).then(a.cmp(&b))
    });
    let mut entries = Vec::with_capacity(n_items);
    for (position, &item) in order.iter().enumerate() {
        let interval = compared
            .iter()
            .position(|&c| c == item)
            .and_then(|k| intervals.get(k));
        let record = &record_of[item];
        entries.push(SourceStrength {
            item,
            strength: fit.strengths[item],
            ci_low: interval.and_then(|i| i.lower),
            ci_high: interval.and_then(|i| i.upper),
            rank: Some(position + 1),
            wins: record.score,
            comparisons: record.comparisons,
            win_rate: record.win_rate,
        });
    }
    for item in (0..n_items).filter(|i| fit.strengths[*i].is_none()) {
        let record = &record_of[item];
        entries.push(SourceStrength {
            item,
            strength: None,
            ci_low: None,
            ci_high: None,
            rank: None,
            wins: record.score,
            comparisons: record.comparisons,
            win_rate: record.win_rate,
        });
    }
    entries
}

/// One item's raw record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WinRecord {
    /// Comparisons won.
    pub wins: usize,
    /// Comparisons lost.
    pub losses: usize,
    /// Comparisons tied.
    pub ties: usize,
    /// Comparisons the item took part in.
    pub comparisons: usize,
    /// wins + ties / 2.
    pub score: f64,
    /// score / comparisons; `None` when never compared.
    pub win_rate: Option<f64>,
}

/// Win, loss and tie counts per item (a tie counting half in the score and the rate), one record
/// per declared item; the comparisons are checked as [`bradley_terry`] checks them.
pub fn win_rates(
    n_items: usize,
    comparisons: &[Comparison],
) -> Result<Vec<WinRecord>, PairwiseError> {
    validate(n_items, comparisons, 0)?;
    Ok(records(n_items, comparisons))
}

/// Win records of validated comparisons.
fn records<I>(n_items: usize, comparisons: I) -> Vec<WinRecord>
where
    I: IntoIterator,
    I::Item: Borrow<Comparison>,
{
    let mut counts = vec![(0usize, 0usize, 0usize); n_items];
    for c in comparisons {
        let c = c.borrow();
        match c.outcome {
            Outcome::Left => {
                counts[c.left].0 += 1;
                counts[c.right].1 += 1;
            }
            Outcome::Right => {
                counts[c.right].0 += 1;
                counts[c.left].1 += 1;
            }
            Outcome::Tie => {
                counts[c.left].2 += 1;
                counts[c.right].2 += 1;
            }
        }
    }
    counts
        .into_iter()
        .map(|(wins, losses, ties)| {
            let comparisons = wins + losses + ties;
            let score = wins as f64 + ties as f64 / 2.0;
            WinRecord {
                wins,
                losses,
                ties,
                comparisons,
                score,
                win_rate: (comparisons > 0).then(|| score / comparisons as f64),
            }
        })
        .collect()
}

/// Agreement between two raters' verdicts on the same (pair, criterion) judgements.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PreferenceAgreement {
    /// Paired verdicts.
    pub n: usize,
    /// Verdicts that agree.
    pub agreements: usize,
    /// agreements / n.
    pub percent: Option<f64>,
    /// Wilson score interval of the percent agreement.
    pub percent_ci: (Option<f64>, Option<f64>),
    /// Cohen's κ over the categories left, right, tie; `None` when chance agreement is 1.
    pub kappa: Option<f64>,
    /// Asymptotic standard error of κ (Fleiss, Cohen & Everitt 1969).
    pub kappa_se: Option<f64>,
    /// κ ± z·SE.
    pub kappa_ci: (Option<f64>, Option<f64>),
}

fn valid_level(level: f64) -> bool {
    level > 0.0 && level < 1.0
}

fn defined(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn wilson_pair(count: usize, total: usize, level: f64) -> (Option<f64>, Option<f64>) {
    if !valid_level(level) {
        return (None, None);
    }
    match wilson_interval(count as u64, total as u64, 1.0 - level) {
        Some([lo, hi]) => (Some(lo), Some(hi)),
        None => (None, None),
    }
}

/// Percent agreement and Cohen's κ between verdicts `a[k]` and `b[k]` on the same judgement k
/// (both in the same left/right terms), with intervals at `level` (e.g. 0.95).
pub fn preference_agreement(
    a: &[Outcome],
    b: &[Outcome],
    level: f64,
) -> Result<PreferenceAgreement, PairwiseError> {
    if a.len() != b.len() {
        return Err(PairwiseError::LengthMismatch {
            first: a.len(),
            second: b.len(),
        });
    }
    let n = a.len();
    let mut table = [[0.0f64; 3]; 3];
    for (x, y) in a.iter().zip(b) {
        table[x.category()][y.category()] += 1.0;
    }
    let agreements = a.iter().zip(b).filter(|(x, y)| x == y).count();
    let percent = (n > 0).then(|| agreements as f64 / n as f64);
    let percent_ci = wilson_pair(agreements, n, level);
    let (kappa, kappa_se) = kappa_with_se(&table, n as f64);
    let kappa_ci = match (kappa, kappa_se, valid_level(level)) {
        (Some(k), Some(se), true) => {
            let z = z_critical(1.0 - level);
            (defined(k - z * se), defined(k + z * se))
        }
        _ => (None, None),
    };
    Ok(PreferenceAgreement {
        n,
        agreements,
        percent,
        percent_ci,
        kappa,
        kappa_se,
        kappa_ci,
    })
}

/// Cohen's κ and its asymptotic standard error from a 3 × 3 table of n judgements, by the
/// formula statsmodels' `cohens_kappa` uses (Fleiss, Cohen & Everitt 1969).
fn kappa_with_se(table: &[[f64; 3]; 3], n: f64) -> (Option<f64>, Option<f64>) {
    if n <= 0.0 {
        return (None, None);
    }
    let mut rows = [0.0; 3];
    let mut cols = [0.0; 3];
    for (k, row) in table.iter().enumerate() {
        for (l, &count) in row.iter().enumerate() {
            rows[k] += count / n;
            cols[l] += count / n;
        }
    }
    let observed: f64 = (0..3).map(|k| table[k][k] / n).sum();
    let expected: f64 = (0..3).map(|k| rows[k] * cols[k]).sum();
    let Some(kappa) = defined((observed - expected) / (1.0 - expected)) else {
        return (None, None);
    };
    let diagonal: f64 = (0..3)
        .map(|k| table[k][k] / n * (1.0 - (rows[k] + cols[k]) * (1.0 - kappa)).powi(2))
        .sum();
    let mut off = 0.0;
    for (k, row) in table.iter().enumerate() {
        for (l, &count) in row.iter().enumerate() {
            if k != l {
                off += count / n * (cols[k] + rows[l]).powi(2);
            }
        }
    }
    let off = (1.0 - kappa).powi(2) * off;
    let correction = (kappa - expected * (1.0 - kappa)).powi(2);
    let variance = (diagonal + off - correction) / (1.0 - expected).powi(2) / n;
    let se = if variance >= 0.0 {
        defined(variance.sqrt())
    } else {
        None
    };
    (Some(kappa), se)
}

/// P(the answer shown first wins) among decided verdicts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PositionBias {
    /// Decided verdicts (ties left out).
    pub decided: usize,
    /// Of those, won by the answer shown first.
    pub first_wins: usize,
    /// first_wins / decided.
    pub p_first: Option<f64>,
    /// Exact Clopper–Pearson interval.
    pub ci: (Option<f64>, Option<f64>),
    /// Two-sided exact binomial test of P(first wins) = ½.
    pub p_value: Option<f64>,
}

/// Position bias from `first_wins` of `decided` verdicts, with the interval at `level`.
/// Everything is `None` when `decided` is 0 or smaller than `first_wins` (or beyond 2^53).
pub fn position_bias(first_wins: usize, decided: usize, level: f64) -> PositionBias {
    // Counts beyond 2^53 are not exact in floating point; no study comes near.
    let valid = decided > 0 && first_wins <= decided && (decided as u64) <= 1 << 53;
    let ci = if valid && valid_level(level) {
        clopper_pearson(first_wins as u64, decided as u64, level)
    } else {
        (None, None)
    };
    PositionBias {
        decided,
        first_wins,
        p_first: valid.then(|| first_wins as f64 / decided as f64),
        ci,
        p_value: if valid {
            binomial_test_half(first_wins as u64, decided as u64)
        } else {
            None
        },
    }
}

/// Clopper–Pearson bounds: Beta quantiles, as scipy's `proportion_ci(method="exact")` finds them.
fn clopper_pearson(k: u64, n: u64, level: f64) -> (Option<f64>, Option<f64>) {
    let alpha = (1.0 - level) / 2.0;
    let (kf, nf) = (k as f64, n as f64);
    let lower = if k == 0 {
        Some(0.0)
    } else {
        beta_quantile(kf, nf - kf + 1.0, alpha).map(|q| q.0)
    };
    let upper = if k == n {
        Some(1.0)
    } else {
        beta_quantile(kf + 1.0, nf - kf, 1.0 - alpha).map(|q| q.0)
    };
    (lower, upper)
}

/// ln P(X = x) for X ~ Binomial(n, ½).
fn ln_binomial_half_pmf(x: i64, n: u64) -> f64 {
    if x < 0 || x as u64 > n {
        return f64::NEG_INFINITY;
    }
    let nf = n as f64;
    let xf = x as f64;
    ln_gamma(nf + 1.0) - ln_gamma(xf + 1.0) - ln_gamma(nf - xf + 1.0) - nf * std::f64::consts::LN_2
}

/// P(X ≤ x) and P(X > x) for X ~ Binomial(n, ½), each computed directly.
fn binomial_half_tails(x: i64, n: u64) -> Option<(f64, f64)> {
    if x < 0 {
        return Some((0.0, 1.0));
    }
    if x as u64 >= n {
        return Some((1.0, 0.0));
    }
    // P(X ≤ x) = I_{1/2}(n − x, x + 1).
    beta_tails((n - x as u64) as f64, x as f64 + 1.0, 0.5, 0.5)
}

/// scipy's `_binary_search_for_binom_tst`: the i with a(i) ≤ d < a(i + 1) for a increasing on
/// [lo, hi].
fn binary_search_binomial<F: Fn(i64) -> f64>(a: F, d: f64, mut lo: i64, mut hi: i64) -> i64 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let value = a(mid);
        if value < d {
            lo = mid + 1;
        } else if value > d {
            hi = mid - 1;
        } else {
            return mid;
        }
    }
    if a(lo) <= d {
        lo
    } else {
        lo - 1
    }
}

/// Two-sided exact binomial test of p = ½, as `scipy.stats.binomtest(k, n).pvalue`.
fn binomial_test_half(k: u64, n: u64) -> Option<f64> {
    if n == 0 || k > n {
        return None;
    }
    let pmf = |x: i64| ln_binomial_half_pmf(x, n).exp();
    let (k, ni) = (k as i64, n as i64);
    let d = pmf(k);
    let relative = 1.0 + 1e-7;
    let p = if 2 * k == ni {
        1.0
    } else if 2 * k < ni {
        let ix = binary_search_binomial(|x| -pmf(x), -d * relative, (ni + 1) / 2, ni);
        let y = ni - ix + i64::from(d * relative == pmf(ix));
        binomial_half_tails(k, n)?.0 + binomial_half_tails(ni - y, n)?.1
    } else {
        let ix = binary_search_binomial(pmf, d * relative, 0, ni / 2);
        let y = ix + 1;
        binomial_half_tails(y - 1, n)?.0 + binomial_half_tails(k - 1, n)?.1
    };
    defined(p.min(1.0))
}

/// How often a verdict survives swapping the sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PositionConsistency {
    /// Pairs asked in both orders.
    pub pairs: usize,
    /// Pairs with the same verdict both times.
    pub consistent: usize,
    /// consistent / pairs.
    pub share: Option<f64>,
    /// Wilson score interval of the share.
    pub ci: (Option<f64>, Option<f64>),
}

/// Position consistency of verdicts given for each pair in both orders, both expressed in the
/// pair's canonical left/right terms (the caller swaps the verdict given with the sides swapped).
pub fn position_consistency(verdicts: &[(Outcome, Outcome)], level: f64) -> PositionConsistency {
    let pairs = verdicts.len();
    let consistent = verdicts.iter().filter(|(a, b)| a == b).count();
    PositionConsistency {
        pairs,
        consistent,
        share: (pairs > 0).then(|| consistent as f64 / pairs as f64),
        ci: wilson_pair(consistent, pairs, level),
    }
}

/// Rank agreement between two scorings of the same items.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RankCorrelation {
    /// Items both scorings define.
    pub n: usize,
    /// Spearman's ρ with average ranks for ties.
    pub spearman: Option<f64>,
    /// Kendall's τ-b.
    pub kendall_tau_b: Option<f64>,
}

/// Spearman's ρ and Kendall's τ-b between `a[i]` and `b[i]` over the items i both define
/// (positions beyond the shorter slice count as undefined).
pub fn rank_correlation(a: &[Option<f64>], b: &[Option<f64>]) -> RankCorrelation {
    let (x, y): (Vec<f64>, Vec<f64>) = a
        .iter()
        .zip(b)
        .filter_map(|(x, y)| Some(((*x)?, (*y)?)))
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .unzip();
    RankCorrelation {
        n: x.len(),
        spearman: spearman(&x, &y),
        kendall_tau_b: kendall_tau_b(&x, &y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn c(left: usize, right: usize, outcome: Outcome) -> Comparison {
        Comparison::new(left, right, outcome)
    }

    #[test]
    fn two_items_have_the_closed_form() {
        // 3 wins to 1: θ_0 − θ_1 = ln 3, centred ± ln(3)/2.
        let data = [
            c(0, 1, Outcome::Left),
            c(1, 0, Outcome::Right),
            c(0, 1, Outcome::Left),
            c(0, 1, Outcome::Right),
        ];
        let fit = bradley_terry(2, &data, TieHandling::Split).unwrap();
        let half = 3f64.ln() / 2.0;
        assert!(fit.converged, "a two-item fit converges");
        assert!(
            (fit.strengths[0].unwrap() - half).abs() < 1e-12
                && (fit.strengths[1].unwrap() + half).abs() < 1e-12,
            "the MLE odds equal the observed odds 3:1, got {:?}",
            fit.strengths
        );
        let ll = 3.0 * (0.75f64).ln() + (0.25f64).ln();
        assert!(
            (fit.log_likelihood - ll).abs() < 1e-12,
            "log-likelihood at p = 3/4"
        );
    }

    #[test]
    fn davidson_two_items_closed_form() {
        // Two items: the MLE reproduces the observed shares, ν = t / √(w_i w_j).
        let mut data = vec![c(0, 1, Outcome::Left); 4];
        data.extend([c(0, 1, Outcome::Right); 2]);
        data.extend([c(1, 0, Outcome::Tie); 3]);
        let fit = bradley_terry(2, &data, TieHandling::Davidson).unwrap();
        let nu = 3.0 / (4.0f64 * 2.0).sqrt();
        assert!(
            (fit.tie_parameter.unwrap() - nu).abs() < 1e-10,
            "ν̂ = t/√(w₀w₁) with two items, got {:?}",
            fit.tie_parameter
        );
        assert!(
            (fit.strengths[0].unwrap() - (2f64).ln() / 2.0).abs() < 1e-10,
            "θ₀ − θ₁ = ln(w₀/w₁) with two items"
        );
    }

    #[test]
    fn refusals_name_the_problem() {
        let one_way = [c(0, 1, Outcome::Left), c(1, 2, Outcome::Left)];
        assert_eq!(
            bradley_terry(3, &one_way, TieHandling::Split),
            Err(PairwiseError::NotStronglyConnected {
                unbeaten: vec![0],
                winless: vec![2]
            }),
            "item 0 never lost and item 2 never won"
        );
        let apart = [
            c(0, 1, Outcome::Left),
            c(1, 0, Outcome::Left),
            c(2, 3, Outcome::Tie),
        ];
        assert_eq!(
            bradley_terry(4, &apart, TieHandling::Split),
            Err(PairwiseError::Disconnected {
                groups: vec![vec![0, 1], vec![2, 3]]
            }),
            "{{0, 1}} and {{2, 3}} never met"
        );
        let win_and_tie = [c(0, 1, Outcome::Left), c(0, 1, Outcome::Tie)];
        assert!(
            bradley_terry(2, &win_and_tie, TieHandling::Split).is_ok(),
            "split ties: a tie is a half-win for item 1, so the MLE exists"
        );
        assert_eq!(
            bradley_terry(2, &win_and_tie, TieHandling::Davidson),
            Err(PairwiseError::DavidsonUnbounded),
            "Davidson: ν and θ₀ − θ₁ grow together for ever"
        );
        assert_eq!(
            bradley_terry(2, &[c(0, 1, Outcome::Tie)], TieHandling::Davidson),
            Err(PairwiseError::OnlyTies),
            "only ties: ν → ∞"
        );
        assert_eq!(
            bradley_terry(2, &[], TieHandling::Split),
            Err(PairwiseError::NoComparisons),
            "nothing to fit"
        );
        assert_eq!(
            bradley_terry(2, &[c(0, 2, Outcome::Tie)], TieHandling::Split),
            Err(PairwiseError::UnknownItem {
                comparison: 0,
                item: 2,
                n_items: 2
            }),
            "item 2 is outside 0..2"
        );
        assert_eq!(
            bradley_terry(usize::MAX, &[], TieHandling::Split),
            Err(PairwiseError::TooManyItems {
                n_items: usize::MAX,
                limit: MAX_ITEMS
            }),
            "an absurd item count is refused before any count matrix is allocated"
        );
        assert!(
            leaderboard(
                usize::MAX,
                &[],
                TieHandling::Split,
                &BootstrapOptions::default(),
                &mut ChaCha8Rng::seed_from_u64(1)
            )
            .is_err(),
            "the leaderboard checks the item count even without comparisons"
        );
        assert_eq!(
            bradley_terry(2, &[c(1, 1, Outcome::Tie)], TieHandling::Split),
            Err(PairwiseError::SelfComparison {
                comparison: 0,
                item: 1
            }),
            "an item against itself says nothing"
        );
    }

    #[test]
    fn all_ties_split_give_equal_strengths() {
        let data = [
            c(0, 1, Outcome::Tie),
            c(1, 2, Outcome::Tie),
            c(2, 0, Outcome::Tie),
        ];
        let fit = bradley_terry(4, &data, TieHandling::Split).unwrap();
        assert_eq!(
            fit.strengths,
            vec![Some(0.0), Some(0.0), Some(0.0), None],
            "only ties split half and half: equal strengths, item 3 never compared"
        );
    }

    #[test]
    fn davidson_without_ties_is_bradley_terry() {
        let data = [
            c(0, 1, Outcome::Left),
            c(1, 2, Outcome::Left),
            c(2, 0, Outcome::Left),
            c(0, 2, Outcome::Left),
        ];
        let a = bradley_terry(3, &data, TieHandling::Davidson).unwrap();
        let b = bradley_terry(3, &data, TieHandling::Split).unwrap();
        assert_eq!(a.tie_parameter, Some(0.0), "no tie: ν̂ on the boundary 0");
        assert_eq!(a.strengths, b.strengths, "ν = 0 is the plain model");
    }

    #[test]
    fn binomial_test_matches_scipy_values() {
        // scipy.stats.binomtest(3, 10).pvalue = 0.34375, binomtest(0, 5).pvalue = 0.0625.
        assert!((binomial_test_half(3, 10).unwrap() - 0.34375).abs() < 1e-12);
        assert!((binomial_test_half(7, 10).unwrap() - 0.34375).abs() < 1e-12);
        assert!((binomial_test_half(0, 5).unwrap() - 0.0625).abs() < 1e-12);
        assert_eq!(binomial_test_half(5, 10), Some(1.0), "k = n/2 gives 1");
        assert_eq!(binomial_test_half(0, 0), None, "no trial, no test");
    }

    #[test]
    fn leaderboard_is_seeded_and_ranks_by_strength() {
        let mut clusters = Vec::new();
        for k in 0..30 {
            let o = if k % 3 == 0 {
                Outcome::Right
            } else {
                Outcome::Left
            };
            clusters.push(vec![
                c(0, 1, o),
                c(1, 2, o),
                c(2, 0, if k % 2 == 0 { o } else { Outcome::Tie }),
                c(0, 2, Outcome::Left),
            ]);
        }
        let opts = BootstrapOptions {
            resamples: 200,
            ..BootstrapOptions::default()
        };
        for ties in [TieHandling::Split, TieHandling::Davidson] {
            let a =
                leaderboard(4, &clusters, ties, &opts, &mut ChaCha8Rng::seed_from_u64(5)).unwrap();
            let b =
                leaderboard(4, &clusters, ties, &opts, &mut ChaCha8Rng::seed_from_u64(5)).unwrap();
            assert_eq!(a, b, "a seeded generator reproduces the leaderboard");
            let ranks: Vec<Option<usize>> = a.entries.iter().map(|e| e.rank).collect();
            assert_eq!(
                ranks,
                vec![Some(1), Some(2), Some(3), None],
                "entries strongest first, the never-compared item last"
            );
            for e in a.entries.iter().take(3) {
                let (lo, hi, s) = (e.ci_low.unwrap(), e.ci_high.unwrap(), e.strength.unwrap());
                assert!(lo <= s && s <= hi, "{ties:?}: CI [{lo}, {hi}] holds {s}");
            }
            assert!(a.resamples_kept > 150, "most replicates have an MLE");
        }
    }
}
