//! Agreement between LLM judges and clinical experts, orchestrated over `concord-stats` (which does
//! every computation). The report has one [`AgreementCell`] per judge (or expert) × reference ×
//! attribute (or attribute group) × level, and, for binary rubrics, per-dimension categorical
//! agreement and correlations of totals.
//!
//! **The MentalAlign method** (system level), for each judge × attribute:
//! 1. responses from sources of the judge's own family are dropped (self-preference exclusion);
//! 2. for each remaining source, the mean reference score and the mean judge score over the
//!    responses where both are present form one target (a sources × 2 matrix);
//! 3. ICC(C,1) (= ICC(3,1)) and ICC(A,1) (= ICC(2,1)) of that matrix;
//! 4. a 95% percentile bootstrap interval of ICC(C,1): [`AgreementOptions::resamples`] resamples
//!    of the (reference, judge) pairs, pairs kept together, non-finite replicates and replicates
//!    outside [0, 1] dropped; the generator is ChaCha8 seeded with [`AgreementOptions::seed`]
//!    (default [`DEFAULT_SEED`]) on a stream derived from the cell's identity, so a cell's
//!    interval does not depend on which other cells were computed or in what order;
//! 5. precision status from the interval width: good ≤ 0.355 < moderate ≤ 0.560 < poor;
//! 6. bias = mean(judge − reference) and MSE = mean of squared differences over all individual
//!    rating pairs of the kept sources, with values as stored (out-of-scale values kept when the
//!    import kept them).
//!
//! The reference is the experts: per response, the mean of the experts who rated it (with one
//! expert, that expert). Beyond the paper, every cell is also computed at item level (every
//! response a target; the interval there is the analytic F-based one, as a bootstrap over
//! thousands of targets adds nothing), against each expert and expert against expert (the human
//! baseline) whenever several experts rated the same responses, with F-based intervals beside the
//! bootstrap ones, and Bland–Altman limits and Lin's CCC over the cell's targets.
//!
//! **Groups** (CSS, ARS): per response and rater the mean of the group's attributes (defined only
//! when every member attribute is present), then exactly the same method.
//!
//! **Recomputing.** [`AgreementEngine`] keeps the ratings in memory ([`AgreementData`]) and the
//! last report; [`AgreementEngine::apply`] takes one new rating and recomputes only the cells it
//! can change.

mod binary;
mod continuous;
pub mod data;
pub mod verdict;

pub(crate) use binary::consensus as expert_consensus;
pub use binary::{BinaryCell, Rate, TotalsCell};
pub use continuous::MIN_INTERVAL_CONVERSATIONS;
pub use data::{AgreementData, ApplyError, Touched};

use crate::rubric::Scope;
use crate::store::{RaterKind, Store, StoreResult};
use serde::{Deserialize, Serialize};

/// The default bootstrap seed (documented so published intervals can be reproduced).
pub const DEFAULT_SEED: u64 = 42;

/// Targets of an ICC: sources (the paper's system level) or individual responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Level {
    System,
    Item,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::System => "system",
            Level::Item => "item",
        }
    }
}

/// Who is compared with whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    /// A judge against the experts' mean (the paper's comparison).
    JudgeVsExperts,
    /// A judge against one expert.
    JudgeVsExpert,
    /// One expert against another (the human baseline).
    ExpertVsExpert,
}

/// Interval-width precision status of the MentalAlign method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    Good,
    Moderate,
    Poor,
}

impl Precision {
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Good => "good",
            Precision::Moderate => "moderate",
            Precision::Poor => "poor",
        }
    }
}

/// How the headline interval of a cell was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum CiMethod {
    /// Percentile bootstrap over the targets.
    Bootstrap,
    /// McGraw & Wong F-based interval.
    F,
    /// Percentile bootstrap resampling conversations whole (item level over transcripts).
    Cluster,
}

/// Settings of an agreement report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AgreementOptions {
    /// Rubric whose ratings are compared (`mentalbench`, `psycrisis`, a custom id).
    pub rubric: String,
    /// Seed of the bootstrap generator.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seed: u64,
    /// Bootstrap resamples per cell.
    pub resamples: usize,
    /// Levels to compute.
    pub levels: Vec<Level>,
    /// Include attribute-group rows (CSS, ARS).
    pub groups: bool,
    /// Also compare judges with each expert and experts with each other (when there are several).
    pub per_expert: bool,
    /// Leave out the responses of a judge's own model family (the paper's self-preference
    /// exclusion). On by default; off shows what the exclusion changes.
    #[serde(default = "default_true")]
    pub exclude_self_family: bool,
}

fn default_true() -> bool {
    true
}

impl AgreementOptions {
    /// The MentalAlign settings for a rubric: seed 42, 1,000 resamples, both levels, groups and
    /// per-expert comparisons included.
    pub fn mentalalign(rubric: &str) -> Self {
        AgreementOptions {
            rubric: rubric.to_string(),
            seed: DEFAULT_SEED,
            resamples: 1000,
            levels: vec![Level::System, Level::Item],
            groups: true,
            per_expert: true,
            exclude_self_family: true,
        }
    }
}

/// A rater as the report names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RaterRef {
    pub name: String,
    pub kind: RaterKind,
    pub model_id: Option<String>,
    pub family: Option<String>,
    /// Values present on the responses the report compares (those some expert rated).
    pub ratings: usize,
}

/// Bland–Altman summary of the differences (rater − reference) over a cell's targets.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BlandAltman {
    pub bias: Option<f64>,
    pub sd_diff: Option<f64>,
    pub loa95: [Option<f64>; 2],
}

/// One of the six ICC forms of a cell's targets, with its McGraw & Wong F-based 95% interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct IccFormValue {
    /// `ICC1`, `ICC2` (= A,1), `ICC3` (= C,1), `ICC1k`, `ICC2k` (= A,k), `ICC3k` (= C,k).
    pub form: String,
    pub value: Option<f64>,
    pub ci95: [Option<f64>; 2],
}

/// One target of a system-level cell: a source with its mean reference and rater scores (what a
/// Bland–Altman plot draws).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TargetPoint {
    pub source: String,
    pub reference: f64,
    pub rater: f64,
}

/// One judge (or expert) × reference × attribute (or group) × level.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AgreementCell {
    pub comparison: Comparison,
    /// The rater under study: a judge's model id (or name), or an expert's name.
    pub rater: String,
    /// `experts` (their mean) or the name of one expert.
    pub reference: String,
    /// Criterion key (`guidance`) or group id (`CSS`).
    pub criterion: String,
    /// Display name (`Guidance`, or the group id for group rows).
    pub attribute: String,
    /// The attribute's group (`CSS`/`ARS`), or the group itself for group rows.
    pub group: Option<String>,
    pub is_group: bool,
    pub level: Level,
    /// Source keys left out as the rater's own family.
    pub excluded_sources: Vec<String>,
    /// Targets in the ICC (sources at system level, responses at item level).
    pub n_targets: usize,
    /// Individual rating pairs (bias and MSE are over these).
    pub n_pairs: usize,
    pub icc_c1: Option<f64>,
    pub icc_a1: Option<f64>,
    /// Headline 95% interval of ICC(C,1): bootstrap at system level, F-based at item level (the
    /// conversation-cluster bootstrap for replies of transcripts).
    pub ci95: [Option<f64>; 2],
    pub ci_method: CiMethod,
    pub ci_width: Option<f64>,
    pub status: Option<Precision>,
    /// Bootstrap replicates kept (0 when no bootstrap ran).
    pub bootstrap_kept: usize,
    /// McGraw & Wong F-based 95% intervals.
    pub ci95_f_c1: [Option<f64>; 2],
    pub ci95_f_a1: [Option<f64>; 2],
    /// Mean of (rater − reference) over the individual pairs.
    pub bias: Option<f64>,
    /// Mean squared difference over the individual pairs.
    pub mse: Option<f64>,
    /// Bland–Altman over the ICC's targets.
    pub bland_altman: BlandAltman,
    /// Lin's concordance correlation over the ICC's targets.
    pub lin_ccc: Option<f64>,
    /// All six ICC forms of the same targets (F-based intervals).
    pub icc_forms: Vec<IccFormValue>,
    /// The targets themselves at system level (one per source); empty at item level.
    pub points: Vec<TargetPoint>,
    /// Conversations the headline interval resampled, when it is the conversation-cluster
    /// bootstrap (item level over transcripts); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub n_clusters: Option<usize>,
}

/// What a report on a rubric of conversations covers: a session rubric (each item a whole
/// conversation), or a reply rubric over transcripts (each item one reply, several per
/// conversation). Absent for an earlier release's single-turn rubric.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ConversationCoverage {
    pub scope: Scope,
    /// Items some expert rated (the report's responses).
    pub items: usize,
    /// The conversations they belong to (the clusters of the cluster bootstrap).
    pub conversations: usize,
    /// The turn numbers the items stand at, ascending (empty for a session rubric).
    #[cfg_attr(feature = "ts", ts(type = "Array<number>"))]
    pub turns: Vec<i64>,
    /// The level the figures are read at first: item level for a session rubric or when every
    /// item is a reply of a transcript, system level when single-turn answers are among them.
    pub headline: Level,
}

impl ConversationCoverage {
    /// The coverage of `data`, when its rubric is one of conversations.
    pub fn of(data: &AgreementData) -> Option<ConversationCoverage> {
        if !data.over_conversations() {
            return None;
        }
        let mut conversations: Vec<i64> = data.responses.iter().map(|r| r.conversation).collect();
        conversations.sort_unstable();
        conversations.dedup();
        let mut turns: Vec<i64> = data.responses.iter().filter_map(|r| r.at.turn()).collect();
        turns.sort_unstable();
        turns.dedup();
        if data.scope == Scope::Session {
            turns.clear();
        }
        Some(ConversationCoverage {
            headline: data.headline_level(),
            scope: data.scope,
            items: data.responses.len(),
            conversations: conversations.len(),
            turns,
        })
    }
}

/// Everything the desktop agreement panel shows and the CLI prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AgreementReport {
    pub options: AgreementOptions,
    pub raters: Vec<RaterRef>,
    /// Continuous-scale cells (Likert criteria and their groups).
    pub cells: Vec<AgreementCell>,
    /// Binary dimensions: κ, AC1, PABAK, sensitivity and specificity against expert consensus.
    pub binary: Vec<BinaryCell>,
    /// Binary rubrics: correlations of totals at item and system level.
    pub totals: Vec<TotalsCell>,
    /// A rubric of conversations: its scope, items, conversations and turns (absent otherwise,
    /// so an earlier release's report reads as before).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub conversations: Option<ConversationCoverage>,
}

/// What a continuous cell is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Target {
    Criterion(usize),
    Group(usize),
}

/// The reference side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Reference {
    Experts,
    Rater(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct CellSpec {
    pub comparison: Comparison,
    pub rater: usize,
    pub reference: Reference,
    pub target: Target,
    pub level: Level,
}

/// Which rater positions a spec reads (the rater and the reference's raters).
fn reads_rater(spec: &CellSpec, data: &AgreementData, rater: usize) -> bool {
    spec.rater == rater
        || match spec.reference {
            Reference::Rater(r) => r == rater,
            Reference::Experts => data.raters[rater].kind == RaterKind::Expert,
        }
}

fn reads_criterion(spec: &CellSpec, data: &AgreementData, criterion: usize) -> bool {
    match spec.target {
        Target::Criterion(c) => c == criterion,
        Target::Group(g) => data.groups[g].members.contains(&criterion),
    }
}

/// The in-memory agreement state: data, options, the cell plan and the last report.
#[derive(Debug, Clone)]
pub struct AgreementEngine {
    data: AgreementData,
    options: AgreementOptions,
    specs: Vec<CellSpec>,
    report: AgreementReport,
}

impl AgreementEngine {
    /// Load the rubric's ratings on the responses experts rated (all a report compares, see
    /// [`AgreementData::load_compared`]) and compute the full report.
    pub fn load(store: &Store, options: AgreementOptions) -> StoreResult<AgreementEngine> {
        let data = AgreementData::load_compared(store, &options.rubric)?;
        Ok(AgreementEngine::new(data, options))
    }

    /// Before a rating just saved in `store` is applied: hold its response if this is its first
    /// expert value (read in with every value the study has for it, in id order, so the state is
    /// what a fresh load gives). Returns whether it was taken in.
    pub fn take_response(&mut self, store: &Store, response_id: i64) -> StoreResult<bool> {
        let taken = self.data.take_response(store, response_id)?;
        if taken {
            // The response brings the judges' values with it: every rater's count may change.
            self.report.raters = self.rater_refs();
            self.report.conversations = ConversationCoverage::of(&self.data);
        }
        Ok(taken)
    }

    /// Compute the full report over data already in memory.
    pub fn new(data: AgreementData, options: AgreementOptions) -> AgreementEngine {
        let specs = plan(&data, &options);
        let mut engine = AgreementEngine {
            report: AgreementReport {
                options: options.clone(),
                raters: Vec::new(),
                cells: Vec::new(),
                binary: Vec::new(),
                totals: Vec::new(),
                conversations: None,
            },
            data,
            options,
            specs,
        };
        engine.recompute();
        engine
    }

    /// Recompute every cell.
    pub fn recompute(&mut self) {
        let all: Vec<usize> = (0..self.specs.len()).collect();
        let cells = compute_cells(&self.data, &self.specs, &all, &self.options);
        self.report = AgreementReport {
            options: self.options.clone(),
            raters: self.rater_refs(),
            cells,
            binary: binary::dimension_cells(&self.data, &self.options),
            totals: binary::totals_cells(&self.data),
            conversations: ConversationCoverage::of(&self.data),
        };
    }

    fn rater_refs(&self) -> Vec<RaterRef> {
        self.data
            .raters
            .iter()
            .enumerate()
            .map(|(i, r)| RaterRef {
                name: r.name.clone(),
                kind: r.kind,
                model_id: r.model_id.clone(),
                family: r.family.clone(),
                ratings: self.data.count(i),
            })
            .collect()
    }

    /// Apply one new or changed rating (value `None` clears it) and recompute only the cells it
    /// can change. An unknown rater, response or criterion (e.g. a rater created after loading)
    /// is an error: reload with [`AgreementEngine::load`].
    pub fn apply(
        &mut self,
        rater_id: i64,
        response_id: i64,
        criterion_id: i64,
        value: Option<f64>,
    ) -> Result<usize, ApplyError> {
        let touched = self
            .data
            .apply(rater_id, response_id, criterion_id, value)?;
        let affected: Vec<usize> = (0..self.specs.len())
            .filter(|&i| {
                reads_rater(&self.specs[i], &self.data, touched.rater)
                    && reads_criterion(&self.specs[i], &self.data, touched.criterion)
            })
            .collect();
        let recomputed = affected.len();
        let cells = compute_cells(&self.data, &self.specs, &affected, &self.options);
        for (i, cell) in affected.into_iter().zip(cells) {
            self.report.cells[i] = cell;
        }
        if self.data.criteria[touched.criterion].scale == crate::rubric::Scale::Binary {
            self.report.binary = binary::dimension_cells(&self.data, &self.options);
            self.report.totals = binary::totals_cells(&self.data);
        }
        if let Some(r) = self.report.raters.get_mut(touched.rater) {
            r.ratings = self.data.count(touched.rater);
        }
        Ok(recomputed)
    }

    pub fn report(&self) -> &AgreementReport {
        &self.report
    }

    pub fn data(&self) -> &AgreementData {
        &self.data
    }
}

/// A cell as computed, with its conversation-cluster interval still to draw when it has one.
type Computed = (AgreementCell, Option<continuous::PendingInterval>);

/// Compute the cells `which` (indices into `specs`), in that order, spreading them over the
/// available cores: cells are independent, and each draws its own bootstrap stream (item cells
/// over transcripts one per set of conversations, shared by the cells over it), so the result
/// does not depend on how they are split.
fn compute_cells(
    data: &AgreementData,
    specs: &[CellSpec],
    which: &[usize],
    options: &AgreementOptions,
) -> Vec<AgreementCell> {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let threads = cores.min(which.len().max(1));
    let computed: Vec<Computed> = if threads <= 1 {
        which
            .iter()
            .map(|&i| continuous::compute(data, &specs[i], options))
            .collect()
    } else {
        // Interleave so expensive item-level cells spread evenly over the threads.
        let parts: Vec<Vec<(usize, Computed)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    scope.spawn(move || {
                        which
                            .iter()
                            .enumerate()
                            .skip(t)
                            .step_by(threads)
                            .map(|(pos, &i)| (pos, continuous::compute(data, &specs[i], options)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        let mut slots: Vec<Option<Computed>> = (0..which.len()).map(|_| None).collect();
        for (pos, computed) in parts.into_iter().flatten() {
            slots[pos] = Some(computed);
        }
        slots.into_iter().flatten().collect()
    };
    let mut cells = Vec::with_capacity(computed.len());
    let mut pending = Vec::new();
    for (at, (cell, interval)) in computed.into_iter().enumerate() {
        cells.push(cell);
        if let Some(p) = interval {
            pending.push((at, p));
        }
    }
    continuous::draw_cluster_intervals(&mut cells, pending, options, cores);
    cells
}

/// The ratings a report reads when judges are compared with a reference other than the
/// experts' own values: the ratings (the experts' values, or after adjudication), and — when the
/// reference is a label of its own, such as a latent consensus — the same responses with every
/// expert's value replaced by that label.
#[derive(Debug, Clone)]
pub struct ReferencedData {
    /// The ratings as the experts gave them (or as adjudication left them).
    pub ratings: AgreementData,
    /// The same responses with each expert value replaced by the reference's label, when the
    /// reference is one; judges are then compared with it, experts with each other as rated.
    pub labelled: Option<AgreementData>,
    /// How the cells of judges against the reference name it: `experts`, `consensus`,
    /// `dawid-skene`.
    pub name: String,
}

impl ReferencedData {
    /// The experts' own values, the paper's reference.
    pub fn experts(ratings: AgreementData) -> ReferencedData {
        ReferencedData {
            ratings,
            labelled: None,
            name: "experts".to_string(),
        }
    }

    /// The same over only the responses `keep` accepts (see [`AgreementData::restricted_to`]).
    pub fn restricted_to(&self, keep: impl Fn(&data::ResponseInfo) -> bool) -> ReferencedData {
        ReferencedData {
            ratings: self.ratings.restricted_to(&keep),
            labelled: self.labelled.as_ref().map(|d| d.restricted_to(&keep)),
            name: self.name.clone(),
        }
    }

    /// The report: judges against the reference (the labels when there are some: continuous
    /// cells, binary judge rows and totals), experts against each other and judges against each
    /// expert from the ratings as given.
    pub fn report(&self, options: &AgreementOptions) -> AgreementReport {
        let mut report = AgreementEngine::new(self.ratings.clone(), options.clone())
            .report()
            .clone();
        if let Some(labelled) = &self.labelled {
            let against = AgreementEngine::new(
                labelled.clone(),
                AgreementOptions {
                    per_expert: false,
                    ..options.clone()
                },
            )
            .report()
            .clone();
            let mut cells = against.cells;
            cells.extend(
                report
                    .cells
                    .into_iter()
                    .filter(|c| c.comparison != Comparison::JudgeVsExperts),
            );
            report.cells = cells;
            for cell in report.binary.iter_mut().filter(|b| !b.experts) {
                if let Some(b) = against
                    .binary
                    .iter()
                    .find(|b| !b.experts && b.judge == cell.judge && b.criterion == cell.criterion)
                {
                    *cell = b.clone();
                }
            }
            report.totals = against.totals;
        }
        if self.name != "experts" {
            for cell in &mut report.cells {
                if cell.comparison == Comparison::JudgeVsExperts {
                    cell.reference = self.name.clone();
                }
            }
        }
        report
    }
}

/// Compute the report for a study in one call.
pub fn report(store: &Store, options: AgreementOptions) -> StoreResult<AgreementReport> {
    Ok(AgreementEngine::load(store, options)?.report.clone())
}

/// The cells to compute, in report order: per judge, per attribute then group, per level; then
/// judge-versus-each-expert and expert-versus-expert cells when there are several experts.
fn plan(data: &AgreementData, options: &AgreementOptions) -> Vec<CellSpec> {
    let mut targets: Vec<Target> = data
        .criteria
        .iter()
        .enumerate()
        .filter(|(_, c)| c.scale != crate::rubric::Scale::Binary)
        .map(|(i, _)| Target::Criterion(i))
        .collect();
    if options.groups {
        targets.extend(
            data.groups
                .iter()
                .enumerate()
                .filter(|(_, g)| {
                    g.members
                        .iter()
                        .all(|&m| data.criteria[m].scale != crate::rubric::Scale::Binary)
                })
                .map(|(i, _)| Target::Group(i)),
        );
    }
    let experts = data.experts();
    let judges = data.judges();
    let mut specs = Vec::new();
    let mut push = |comparison, rater, reference| {
        for &target in &targets {
            for &level in &options.levels {
                specs.push(CellSpec {
                    comparison,
                    rater,
                    reference,
                    target,
                    level,
                });
            }
        }
    };
    if !experts.is_empty() {
        for &j in &judges {
            push(Comparison::JudgeVsExperts, j, Reference::Experts);
        }
    }
    if options.per_expert && experts.len() > 1 {
        for &j in &judges {
            for &e in &experts {
                push(Comparison::JudgeVsExpert, j, Reference::Rater(e));
            }
        }
        for (i, &a) in experts.iter().enumerate() {
            for &b in &experts[i + 1..] {
                push(Comparison::ExpertVsExpert, a, Reference::Rater(b));
            }
        }
    }
    specs
}
