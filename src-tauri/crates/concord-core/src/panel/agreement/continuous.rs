//! One continuous agreement cell: gather the (reference, rater) values per response, drop the
//! rater's own family, aggregate per source (system level) or keep responses (item level), and
//! hand the numbers to `concord-stats` for the ICCs, the intervals, Bland–Altman and Lin's CCC.
//!
//! At item level the replies of transcripts are not independent targets: the replies of one
//! conversation share its history (and candidates at its last turn share everything but the
//! reply). Their headline interval is therefore a conversation-cluster percentile bootstrap of
//! ICC(C,1) — conversations resampled whole with replacement, [`AgreementOptions::resamples`]
//! resamples, only undefined replicates dropped — in place of the F-based interval, which assumes
//! independence; a cell's `n_clusters` says how many conversations it resampled (fewer than
//! [`MIN_INTERVAL_CONVERSATIONS`] give no interval). The resamples
//! are drawn from [`AgreementOptions::seed`] on a ChaCha8 stream derived from the conversations
//! resampled (their ids in order), and every cell over the same conversations shares them
//! ([`draw_cluster_intervals`], common random numbers): a report's dozens of item cells cost
//! little more than one, and a cell's interval still depends on its own data and conversations
//! alone, never on which other cells were computed. Single-turn answers and session items (one
//! per conversation) keep the F-based interval, so an earlier release's report is unchanged.

use super::data::AgreementData;
use super::data::ItemAt;
use super::{
    AgreementCell, AgreementOptions, BlandAltman, CellSpec, CiMethod, IccFormValue, Level,
    Precision, Reference, Target, TargetPoint,
};
use concord_stats::bootstrap::{
    cluster_icc_c1_cis, cluster_options, percentile_ci, BootstrapOptions, ClusteredPairs,
};
use concord_stats::icc::{icc_all, icc_c1_a1_resampled, IccForm};
use concord_stats::interpret::{precision_status, PrecisionStatus};
use concord_stats::limits::bland_altman;
use concord_stats::paired::{lin_ccc, MeanDifference};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The value of `rater` on `target` for every response: the criterion's values, or for a group
/// the mean of its members (NaN unless every member is present).
pub(crate) fn rater_values(data: &AgreementData, rater: usize, target: Target) -> Vec<f64> {
    match target {
        Target::Criterion(c) => data.series(rater, c).to_vec(),
        Target::Group(g) => {
            let members = &data.groups[g].members;
            let n = data.responses.len();
            let mut out = vec![0.0; n];
            for &m in members {
                for (o, v) in out.iter_mut().zip(data.series(rater, m)) {
                    *o += v;
                }
            }
            let k = members.len() as f64;
            out.iter_mut().for_each(|o| *o /= k);
            out
        }
    }
}

/// The reference values: one rater's, or per response the mean of the experts who have a value.
pub(crate) fn reference_values(
    data: &AgreementData,
    reference: Reference,
    target: Target,
) -> Vec<f64> {
    match reference {
        Reference::Rater(r) => rater_values(data, r, target),
        Reference::Experts => {
            let experts = data.experts();
            if experts.len() == 1 {
                return rater_values(data, experts[0], target);
            }
            let n = data.responses.len();
            let mut sum = vec![0.0; n];
            let mut count = vec![0u32; n];
            for &e in &experts {
                for (i, v) in rater_values(data, e, target).into_iter().enumerate() {
                    if !v.is_nan() {
                        sum[i] += v;
                        count[i] += 1;
                    }
                }
            }
            sum.iter()
                .zip(&count)
                .map(|(s, &c)| if c == 0 { f64::NAN } else { s / c as f64 })
                .collect()
        }
    }
}

/// A stable 64-bit stream id for a cell (FNV-1a over its identity), so each cell draws its own
/// bootstrap stream from the seed.
fn stream_id(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0x1f]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// An item-level cell's conversation-cluster interval still to draw: the conversations its
/// pairs come from (in order of first appearance) and its pairs' moments in each.
pub(crate) struct PendingInterval {
    conversations: Vec<i64>,
    pairs: ClusteredPairs,
}

/// One continuous cell: the target's names and the sources left out, the (reference, rater)
/// pairs gathered, then the ICCs, the interval and its precision, Bland–Altman and Lin's CCC
/// computed from them. An item-level cell over replies of transcripts comes with its interval
/// still to draw, which [`draw_cluster_intervals`] fills in.
pub(crate) fn compute(
    data: &AgreementData,
    spec: &CellSpec,
    options: &AgreementOptions,
) -> (AgreementCell, Option<PendingInterval>) {
    let rater = &data.raters[spec.rater];
    let names = TargetNames::of(data, spec.target);
    let reference_name = match spec.reference {
        Reference::Experts => "experts".to_string(),
        Reference::Rater(r) => data.raters[r].name.clone(),
    };
    let rater_name = rater.model_id.clone().unwrap_or_else(|| rater.name.clone());
    let excluded = excluded_sources(data, spec.rater, options);
    let excluded_sources = data
        .sources
        .iter()
        .zip(&excluded)
        .filter(|(_, &x)| x)
        .map(|(s, _)| s.key.clone())
        .collect();

    let pairs = Pairs::gather(data, spec, &excluded);
    let n_pairs = pairs.per_source.iter().map(|s| s.2).sum::<usize>();
    let bias = pairs.differences.bias().and_then(finite);
    let mse = pairs.differences.mse().and_then(finite);
    let points = pairs.points(data, spec.level);
    let clusters =
        (spec.level == Level::Item && pairs.of_transcripts).then(|| pairs.item_clusters.clone());
    let targets = pairs.targets(spec.level);

    let iccs = Iccs::of(&targets);
    let stream = stream_id(&[
        &rater.name,
        &reference_name,
        &names.criterion,
        spec.level.as_str(),
    ]);
    let mut pending = None;
    let (ci95, ci_method, bootstrap_kept) = match (spec.level, clusters) {
        (Level::System, _) => bootstrap_interval(&targets, stream, options),
        (Level::Item, Some(clusters)) => {
            pending = Some(pending_interval(&targets, &clusters));
            ([None, None], CiMethod::Cluster, 0)
        }
        (Level::Item, None) => (iccs.ci95_f_c1, CiMethod::F, 0),
    };
    let n_clusters = pending.as_ref().map(|p| p.conversations.len());

    let (reference_side, rater_side): (Vec<f64>, Vec<f64>) = targets.iter().copied().unzip();
    let bland_altman = limits_of_agreement(&rater_side, &reference_side);
    let lin_ccc = lin_ccc(&rater_side, &reference_side);

    let mut cell = AgreementCell {
        comparison: spec.comparison,
        rater: rater_name,
        reference: reference_name,
        criterion: names.criterion,
        attribute: names.attribute,
        group: names.group,
        is_group: names.is_group,
        level: spec.level,
        excluded_sources,
        n_targets: targets.len(),
        n_pairs,
        icc_c1: iccs.icc_c1,
        icc_a1: iccs.icc_a1,
        ci95,
        ci_method,
        ci_width: None,
        status: None,
        bootstrap_kept,
        ci95_f_c1: iccs.ci95_f_c1,
        ci95_f_a1: iccs.ci95_f_a1,
        bias,
        mse,
        bland_altman,
        lin_ccc,
        icc_forms: iccs.forms,
        points,
        n_clusters,
    };
    set_interval(&mut cell, ci95, bootstrap_kept);
    (cell, pending)
}

/// A cell's headline interval, the replicates it kept, and the width and precision status that
/// follow from it.
fn set_interval(cell: &mut AgreementCell, ci95: [Option<f64>; 2], kept: usize) {
    cell.ci95 = ci95;
    cell.bootstrap_kept = kept;
    cell.ci_width = match ci95 {
        [Some(lo), Some(hi)] => finite(hi - lo),
        _ => None,
    };
    cell.status = cell.ci_width.and_then(precision_status).map(|s| match s {
        PrecisionStatus::Good => Precision::Good,
        PrecisionStatus::Moderate => Precision::Moderate,
        PrecisionStatus::Poor => Precision::Poor,
    });
}

/// The interval an item cell's pairs (with their conversations) still need.
fn pending_interval(targets: &[(f64, f64)], clusters: &[u64]) -> PendingInterval {
    let mut at: foldhash::HashMap<u64, usize> = Default::default();
    let mut conversations = Vec::new();
    let position: Vec<usize> = clusters
        .iter()
        .map(|&c| {
            *at.entry(c).or_insert_with(|| {
                conversations.push(c as i64);
                conversations.len() - 1
            })
        })
        .collect();
    let pairs = ClusteredPairs::new(targets, &position, conversations.len());
    PendingInterval {
        conversations,
        pairs,
    }
}

/// The cells (by position, with their pairs' moments) that resample one set of conversations.
type ConversationGroup = (Vec<i64>, Vec<(usize, ClusteredPairs)>);

/// The fewest conversations a conversation-cluster interval is drawn from: resamples of fewer
/// take so few distinct values that their percentiles say little and move with the random stream
/// (of three conversations, one resample in nine repeats a single one). Below it a cell has its
/// figures and `n_clusters` but no interval.
pub const MIN_INTERVAL_CONVERSATIONS: usize = 10;

/// Draw the conversation-cluster intervals of `pending` cells (each with its position in
/// `cells`): cells over the same conversations share one set of resamples, drawn from the seed on
/// a stream derived from those conversations, split over up to `threads` threads (each draws
/// the same resamples for its share of the cells, so the split changes nothing). No interval
/// below [`MIN_INTERVAL_CONVERSATIONS`] conversations or without resamples.
pub(crate) fn draw_cluster_intervals(
    cells: &mut [AgreementCell],
    pending: Vec<(usize, PendingInterval)>,
    options: &AgreementOptions,
    threads: usize,
) {
    let mut groups: Vec<ConversationGroup> = Vec::new();
    let mut group_of: std::collections::HashMap<Vec<i64>, usize> = Default::default();
    for (at, p) in pending {
        let g = *group_of.entry(p.conversations.clone()).or_insert_with(|| {
            groups.push((p.conversations, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push((at, p.pairs));
    }
    let bootstrap = cluster_options(options.resamples);
    for (conversations, members) in groups {
        let k = conversations.len();
        if k < MIN_INTERVAL_CONVERSATIONS || options.resamples == 0 {
            for (at, _) in &members {
                set_interval(&mut cells[*at], [None, None], 0);
            }
            continue;
        }
        let stream = conversation_stream(&conversations);
        let draw = |part: &[(usize, ClusteredPairs)]| {
            let sets: Vec<ClusteredPairs> = part.iter().map(|(_, p)| p.clone()).collect();
            let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
            rng.set_stream(stream);
            cluster_icc_c1_cis(&sets, k, &bootstrap, &mut rng).unwrap_or_default()
        };
        let share = members.len().div_ceil(threads.clamp(1, members.len()));
        let intervals: Vec<_> = if share >= members.len() {
            draw(&members)
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = members
                    .chunks(share)
                    .map(|part| scope.spawn(move || draw(part)))
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            })
        };
        for ((at, _), b) in members.iter().zip(intervals) {
            set_interval(&mut cells[*at], [b.lower, b.upper], b.kept);
        }
    }
}

/// The bootstrap stream of the resamples of `conversations` (FNV-1a over their ids in order).
fn conversation_stream(conversations: &[i64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in b"conversations"
        .iter()
        .copied()
        .chain(conversations.iter().flat_map(|c| c.to_le_bytes()))
    {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The names a cell is reported under: its criterion (or group) key and label, the group it
/// belongs to, and whether the target is a group.
struct TargetNames {
    criterion: String,
    attribute: String,
    group: Option<String>,
    is_group: bool,
}

impl TargetNames {
    /// The names of `target`.
    fn of(data: &AgreementData, target: Target) -> Self {
        match target {
            Target::Criterion(c) => {
                let info = &data.criteria[c];
                TargetNames {
                    criterion: info.key.clone(),
                    attribute: info.label.clone(),
                    group: info.group.clone(),
                    is_group: false,
                }
            }
            Target::Group(g) => {
                let info = &data.groups[g];
                TargetNames {
                    criterion: info.id.clone(),
                    attribute: info.label.clone(),
                    group: Some(info.id.clone()),
                    is_group: true,
                }
            }
        }
    }
}

/// Per source, whether it is left out of `rater`'s cells: self-family exclusion applies to
/// judges only (experts have no model family).
fn excluded_sources(data: &AgreementData, rater: usize, options: &AgreementOptions) -> Vec<bool> {
    let rater = &data.raters[rater];
    data.sources
        .iter()
        .map(|s| {
            options.exclude_self_family
                && rater.kind == crate::store::RaterKind::Judge
                && s.family.is_some()
                && s.family.as_deref() == rater.family.as_deref()
        })
        .collect()
}

/// The (reference, rater) values of a cell: per source their sums and count, at item level
/// every pair, and the running mean difference.
struct Pairs {
    /// (reference sum, rater sum, pairs) per source.
    per_source: Vec<(f64, f64, usize)>,
    /// Every pair (item level only).
    item_pairs: Vec<(f64, f64)>,
    /// The conversation of every item pair, in the same order (item level only).
    item_clusters: Vec<u64>,
    /// Whether any pair is a reply of a transcript.
    of_transcripts: bool,
    differences: MeanDifference,
}

impl Pairs {
    /// Gather the pairs of every response whose source is not excluded and where both sides have
    /// a value.
    fn gather(data: &AgreementData, spec: &CellSpec, excluded: &[bool]) -> Self {
        let judge = rater_values(data, spec.rater, spec.target);
        let reference = reference_values(data, spec.reference, spec.target);
        let mut per_source = vec![(0.0f64, 0.0f64, 0usize); data.sources.len()];
        let mut item_pairs: Vec<(f64, f64)> = Vec::new();
        let mut item_clusters: Vec<u64> = Vec::new();
        let mut of_transcripts = false;
        let mut differences = MeanDifference::default();
        for (i, response) in data.responses.iter().enumerate() {
            if excluded[response.source] {
                continue;
            }
            let (r, j) = (reference[i], judge[i]);
            if r.is_nan() || j.is_nan() {
                continue;
            }
            differences.add(j, r);
            let s = &mut per_source[response.source];
            s.0 += r;
            s.1 += j;
            s.2 += 1;
            of_transcripts |= matches!(response.at, ItemAt::Reply(_));
            if spec.level == Level::Item {
                item_pairs.push((r, j));
                item_clusters.push(response.conversation as u64);
            }
        }
        Pairs {
            per_source,
            item_pairs,
            item_clusters,
            of_transcripts,
            differences,
        }
    }

    /// The targets the ICC is computed over: per source the mean of each side (system level), or
    /// every pair (item level).
    fn targets(self, level: Level) -> Vec<(f64, f64)> {
        match level {
            Level::System => self
                .per_source
                .iter()
                .filter(|s| s.2 > 0)
                .map(|&(r, j, n)| (r / n as f64, j / n as f64))
                .collect(),
            Level::Item => self.item_pairs,
        }
    }

    /// The points of a system-level plot: each source's means (none at item level).
    fn points(&self, data: &AgreementData, level: Level) -> Vec<TargetPoint> {
        match level {
            Level::System => self
                .per_source
                .iter()
                .enumerate()
                .filter(|(_, s)| s.2 > 0)
                .map(|(i, &(r, j, n))| TargetPoint {
                    source: data.sources[i].key.clone(),
                    reference: r / n as f64,
                    rater: j / n as f64,
                })
                .collect(),
            Level::Item => Vec::new(),
        }
    }
}

/// The ICCs of a cell's targets: C1 and A1 with their F intervals, and every form.
struct Iccs {
    icc_c1: Option<f64>,
    icc_a1: Option<f64>,
    ci95_f_c1: [Option<f64>; 2],
    ci95_f_a1: [Option<f64>; 2],
    forms: Vec<IccFormValue>,
}

impl Iccs {
    /// Compute the ICC table over the (reference, rater) targets (nothing when it cannot be).
    fn of(targets: &[(f64, f64)]) -> Self {
        let flat: Vec<f64> = targets.iter().flat_map(|&(r, j)| [r, j]).collect();
        match icc_all(&flat, targets.len(), 2) {
            Ok(table) => {
                let c = table.get(IccForm::Icc3);
                let a = table.get(IccForm::Icc2);
                let forms = table
                    .estimates
                    .iter()
                    .map(|e| IccFormValue {
                        form: form_name(e.form).to_string(),
                        value: e.value,
                        ci95: e.ci95,
                    })
                    .collect();
                Iccs {
                    icc_c1: c.value,
                    icc_a1: a.value,
                    ci95_f_c1: c.ci95,
                    ci95_f_a1: a.ci95,
                    forms,
                }
            }
            Err(_) => Iccs {
                icc_c1: None,
                icc_a1: None,
                ci95_f_c1: [None, None],
                ci95_f_a1: [None, None],
                forms: Vec::new(),
            },
        }
    }
}

/// A system-level cell's percentile bootstrap interval of ICC(C,1) over its sources, drawn from
/// the seed on the cell's own `stream` (none below two targets or without resamples), with the
/// number of resamples kept.
fn bootstrap_interval(
    targets: &[(f64, f64)],
    stream: u64,
    options: &AgreementOptions,
) -> ([Option<f64>; 2], CiMethod, usize) {
    if targets.len() < 2 || options.resamples == 0 {
        return ([None, None], CiMethod::Bootstrap, 0);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    rng.set_stream(stream);
    let boot_options = BootstrapOptions {
        resamples: options.resamples,
        ..BootstrapOptions::mentalalign()
    };
    match percentile_ci(targets.len(), &boot_options, &mut rng, |idx| {
        icc_c1_a1_resampled(targets, idx).ok().and_then(|e| e.c1)
    }) {
        Ok(b) => ([b.lower, b.upper], CiMethod::Bootstrap, b.kept),
        Err(_) => ([None, None], CiMethod::Bootstrap, 0),
    }
}

/// Bland–Altman limits of the rater against the reference (empty when they cannot be computed).
fn limits_of_agreement(rater_side: &[f64], reference_side: &[f64]) -> BlandAltman {
    match bland_altman(rater_side, reference_side) {
        Ok(l) => BlandAltman {
            bias: l.bias,
            sd_diff: l.sd_diff,
            loa95: l.loa95,
        },
        Err(_) => BlandAltman {
            bias: None,
            sd_diff: None,
            loa95: [None, None],
        },
    }
}

/// The name `concord stats icc` and pingouin use for a form.
fn form_name(form: IccForm) -> &'static str {
    match form {
        IccForm::Icc1 => "ICC1",
        IccForm::Icc2 => "ICC2",
        IccForm::Icc3 => "ICC3",
        IccForm::Icc1k => "ICC1k",
        IccForm::Icc2k => "ICC2k",
        IccForm::Icc3k => "ICC3k",
    }
}
