//! The agreement panel's pairwise view and `concord agreement --pairwise`: for a pairwise
//! rubric's verdicts, per rater group (the experts pooled, and each judge) and criterion, the
//! Bradley–Terry strength of every source with its cluster-bootstrap 95% interval, its rank and
//! win rate (`concord_stats::pairwise`); agreement on preferences between experts and between
//! each judge and the experts (percent agreement and Cohen's κ); per judge and criterion the
//! position consistency (the share of pairs asked both ways round whose verdict survives the
//! swap) and position bias (P(the answer shown first wins) over decided verdicts, with its exact
//! binomial interval); and, when the study also holds 1–5 ratings of the compared rubric, the
//! rank correlation between each group's pairwise strengths and its mean scores per source.
//!
//! Conventions. Every verdict is one comparison of the two answers' sources in the pair's own
//! left/right terms; a judge asked both orders contributes both verdicts to its fit (the design
//! is then balanced for position). The bootstrap resamples conversations whole (pairs of one
//! conversation share its context), seeded. For agreement, a judge asked both orders speaks for a
//! pair with one verdict: the two when they agree, a tie when they do not (a verdict that flips
//! with the side is no preference); every expert verdict on the pair is compared with it, and
//! every two experts who judged the same pair are compared with each other (the one whose name
//! sorts first as the first rater). Overall mean scores
//! for `overall` are the mean over the compared rubric's criteria.

use crate::base::text::quoted;
use crate::store::{
    PairRecord, PairVerdictRecord, RaterRecord, SourceRecord, Store, StoreError, StoredRubric,
    Winner,
};
pub use concord_stats::bootstrap::BootstrapOptions;
use concord_stats::pairwise::{self as bt, Comparison, Leaderboard, Outcome, PairwiseError};
/// The statistics' types the report carries (and the window's bindings declare).
pub use concord_stats::pairwise::{
    PositionBias, PositionConsistency, PreferenceAgreement, RankCorrelation, TieHandling,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, thiserror::Error)]
pub enum PairwiseReportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Invalid(String),
}

/// How the pairwise report is computed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairwiseOptions {
    /// The pairwise rubric (the study's only one with pairs when `None`); a rubric rating one
    /// answer at a time names its shipped pairwise form (`mentalbench` → `mentalbench-pairs`).
    pub rubric: Option<String>,
    pub ties: TieHandling,
    pub bootstrap: BootstrapOptions,
    pub seed: u64,
    pub level: f64,
}

impl Default for PairwiseOptions {
    fn default() -> Self {
        PairwiseOptions {
            rubric: None,
            ties: TieHandling::Davidson,
            bootstrap: BootstrapOptions {
                resamples: 1000,
                level: 0.95,
                drop_undefined: true,
                keep_range: None,
            },
            seed: 1,
            level: 0.95,
        }
    }
}

/// One source on a leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SourceRow {
    pub source: String,
    pub name: String,
    /// Bradley–Terry log-strength, centred to mean 0 over the compared sources.
    pub strength: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub rank: Option<usize>,
    /// Wins plus half the ties.
    pub wins: f64,
    pub comparisons: usize,
    pub win_rate: Option<f64>,
}

/// A group's leaderboard on one criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GroupLeaderboard {
    /// `experts` (pooled) or the judge's name.
    pub rater: String,
    /// `experts` or `judge`.
    pub kind: &'static str,
    pub criterion: String,
    pub verdicts: usize,
    pub ties: TieHandling,
    pub tie_parameter: Option<f64>,
    pub resamples_kept: usize,
    pub resamples: usize,
    /// The sources by strength, strongest first; empty when no fit exists.
    pub sources: Vec<SourceRow>,
    /// Why there is no fit (e.g. a source that never lost), when there is none.
    pub unavailable: Option<String>,
}

/// Agreement on preferences between two sides on one criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PreferenceRow {
    pub criterion: String,
    /// `experts` (expert with expert) or the judge's name (judge with each expert).
    pub between: String,
    pub agreement: Option<PreferenceAgreement>,
}

/// A judge's position figures on one criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PositionRow {
    pub judge: String,
    pub criterion: String,
    pub consistency: PositionConsistency,
    pub bias: PositionBias,
}

/// A group's pairwise ranking against its ranking by mean 1–5 scores.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RankRow {
    pub rater: String,
    pub criterion: String,
    pub correlation: RankCorrelation,
}

/// The pairwise report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairwiseReport {
    pub rubric: String,
    /// The rubric whose 1–5 ratings the rank correlations read, when the study has some.
    pub compared_with: Option<String>,
    pub pairs: usize,
    pub verdicts: usize,
    pub options: PairwiseOptions,
    pub leaderboards: Vec<GroupLeaderboard>,
    pub agreement: Vec<PreferenceRow>,
    pub position: Vec<PositionRow>,
    pub rank_correlation: Vec<RankRow>,
}

fn outcome(w: Winner) -> Outcome {
    match w {
        Winner::Left => Outcome::Left,
        Winner::Right => Outcome::Right,
        Winner::Tie => Outcome::Tie,
    }
}

/// The pairwise rubric with verdicts: the named one, or the only one.
fn rubric_with_verdicts(
    store: &Store,
    name: Option<&str>,
) -> Result<StoredRubric, PairwiseReportError> {
    let pairwise: Vec<StoredRubric> = store
        .rubrics()?
        .into_iter()
        .filter(|s| s.rubric.is_pairwise())
        .collect();
    if let Some(key) = name {
        let key =
            crate::rubric::builtin::pairwise_for(key).map_or_else(|| key.to_string(), |r| r.id);
        let key = key.as_str();
        return pairwise
            .into_iter()
            .find(|s| s.rubric.id == key)
            .ok_or_else(|| {
                PairwiseReportError::Invalid(format!(
                    "the study has no pairwise rubric {}",
                    quoted(&key)
                ))
            });
    }
    let mut with = Vec::new();
    for s in pairwise {
        if store.read().pair_design(s.id)?.is_some() {
            with.push(s);
        }
    }
    match with.len() {
        0 => Err(PairwiseReportError::Invalid(
            "the study has no pairs; draw them with `concord pairs design`".into(),
        )),
        1 => Ok(with.remove(0)),
        _ => Err(PairwiseReportError::Invalid(
            "the study has several pairwise rubrics; choose one with --rubric".into(),
        )),
    }
}

/// The pairwise report (see the module docs).
pub fn pairwise_report(
    store: &Store,
    options: &PairwiseOptions,
) -> Result<PairwiseReport, PairwiseReportError> {
    let inputs = PairwiseInputs::read(store, options)?;
    let leaderboards = inputs.leaderboards(options);
    let by_item = inputs.verdicts_by_item();
    let agreement = inputs.agreement_rows(&by_item, options);
    let position = inputs.position_rows(&by_item, options);
    let (compared_with, rank_correlation) = rank_rows(
        store,
        &inputs.rubric,
        &leaderboards,
        &inputs.sources,
        &inputs.raters,
    )?;
    Ok(PairwiseReport {
        rubric: inputs.rubric.rubric.id.clone(),
        compared_with,
        pairs: inputs.pairs.len(),
        verdicts: inputs.verdicts.len(),
        options: options.clone(),
        leaderboards,
        agreement,
        position,
        rank_correlation,
    })
}

/// The verdicts on each (pair id, criterion id), in the order they were read.
type VerdictsByItem<'a> = BTreeMap<(i64, i64), Vec<&'a PairVerdictRecord>>;

/// What the pairwise report reads of the study: the rubric, its pairs and verdicts, the sources
/// and raters, with their indexes and the judges by name.
struct PairwiseInputs {
    rubric: StoredRubric,
    pairs: Vec<PairRecord>,
    verdicts: Vec<PairVerdictRecord>,
    sources: Vec<SourceRecord>,
    /// Source id → its place in `sources` (its item in the fits).
    source_index: HashMap<i64, usize>,
    /// Pair id → its place in `pairs`.
    pair_index: HashMap<i64, usize>,
    /// The rubric's criterion key → id.
    criteria: HashMap<String, i64>,
    raters: Vec<RaterRecord>,
    /// Rater id → its place in `raters`.
    rater_index: HashMap<i64, usize>,
    /// The raters with verdicts who are not experts, by name.
    judges: Vec<i64>,
}

/// The verdicts of one rater group: the experts pooled, or one judge.
struct RaterGroup<'a> {
    /// `experts` or the judge's name.
    name: String,
    /// `experts` or `judge`.
    kind: &'static str,
    verdicts: Vec<&'a PairVerdictRecord>,
}

/// A judge's position evidence on one criterion: its verdicts asked both ways round, and how
/// often the answer shown first won among its decided verdicts.
#[derive(Default)]
struct PositionTally {
    both: Vec<(Outcome, Outcome)>,
    first_wins: usize,
    decided: usize,
    /// Whether the judge gave any verdict on the criterion.
    any: bool,
}

impl PairwiseInputs {
    /// Reads the rubric's pairs and verdicts and the study's sources and raters.
    fn read(store: &Store, options: &PairwiseOptions) -> Result<Self, PairwiseReportError> {
        let rubric = rubric_with_verdicts(store, options.rubric.as_deref())?;
        let read = store.read();
        let pairs = read.pairs(rubric.id)?;
        let verdicts = read.pair_verdicts(rubric.id)?;
        let sources = store.sources()?;
        let source_index = sources.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
        let pair_index = pairs.iter().enumerate().map(|(i, p)| (p.id, i)).collect();
        let criteria = read.criterion_ids(rubric.id)?;
        let raters = store.rater_records()?;
        let rater_index = raters.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
        let mut inputs = PairwiseInputs {
            rubric,
            pairs,
            verdicts,
            sources,
            source_index,
            pair_index,
            criteria,
            raters,
            rater_index,
            judges: Vec::new(),
        };
        inputs.judges = inputs.judges_by_name();
        Ok(inputs)
    }

    /// The raters with verdicts who are not experts, by name.
    fn judges_by_name(&self) -> Vec<i64> {
        let mut judges: Vec<i64> = self
            .verdicts
            .iter()
            .map(|v| v.rater_id)
            .filter(|&id| !self.is_expert(id))
            .collect();
        judges.sort_by_key(|&id| self.name_of(id));
        judges.dedup();
        judges
    }

    /// Whether the rater is one of the study's experts.
    fn is_expert(&self, id: i64) -> bool {
        self.rater_index
            .get(&id)
            .is_some_and(|&i| self.raters[i].is_expert())
    }

    /// The rater's name (empty for a rater the study does not hold).
    fn name_of(&self, id: i64) -> String {
        self.rater_index
            .get(&id)
            .map_or_else(String::new, |&i| self.raters[i].name.clone())
    }

    /// The pair with this id.
    fn pair(&self, id: i64) -> Option<&PairRecord> {
        self.pair_index.get(&id).map(|&i| &self.pairs[i])
    }

    /// The rubric's criteria the study stores, in rubric order: (key, id).
    fn stored_criteria(&self) -> Vec<(&str, i64)> {
        self.rubric
            .rubric
            .criteria
            .iter()
            .filter_map(|c| Some((c.id.as_str(), *self.criteria.get(&c.id)?)))
            .collect()
    }

    /// The rater groups: the experts pooled (when any gave a verdict), then each judge by name.
    fn groups(&self) -> Vec<RaterGroup<'_>> {
        let mut groups = Vec::new();
        let experts: Vec<&PairVerdictRecord> = self
            .verdicts
            .iter()
            .filter(|v| self.is_expert(v.rater_id))
            .collect();
        if !experts.is_empty() {
            groups.push(RaterGroup {
                name: "experts".into(),
                kind: "experts",
                verdicts: experts,
            });
        }
        for &j in &self.judges {
            groups.push(RaterGroup {
                name: self.name_of(j),
                kind: "judge",
                verdicts: self.verdicts.iter().filter(|v| v.rater_id == j).collect(),
            });
        }
        groups
    }

    /// Each group's leaderboard on each criterion it gave verdicts on.
    fn leaderboards(&self, options: &PairwiseOptions) -> Vec<GroupLeaderboard> {
        let mut leaderboards = Vec::new();
        for group in &self.groups() {
            for (key, cid) in self.stored_criteria() {
                let (clusters, n) = self.conversation_clusters(&group.verdicts, cid);
                if n == 0 {
                    continue;
                }
                let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
                let fit = bt::leaderboard(
                    self.sources.len(),
                    &clusters,
                    options.ties,
                    &options.bootstrap,
                    &mut rng,
                );
                leaderboards.push(group_leaderboard(
                    &group.name,
                    group.kind,
                    key,
                    n,
                    options,
                    fit,
                    &self.sources,
                ));
            }
        }
        leaderboards
    }

    /// A group's verdicts on one criterion as comparisons of sources, one cluster per
    /// conversation (in conversation id order), with how many there are.
    fn conversation_clusters(
        &self,
        verdicts: &[&PairVerdictRecord],
        criterion_id: i64,
    ) -> (Vec<Vec<Comparison>>, usize) {
        let mut clusters: BTreeMap<i64, Vec<Comparison>> = BTreeMap::new();
        let mut n = 0usize;
        for v in verdicts.iter().filter(|v| v.criterion_id == criterion_id) {
            let Some(p) = self.pair(v.pair_id) else {
                continue;
            };
            let (Some(&l), Some(&r)) = (
                self.source_index.get(&p.left_source_id),
                self.source_index.get(&p.right_source_id),
            ) else {
                continue;
            };
            clusters
                .entry(p.conversation_id)
                .or_default()
                .push(Comparison::new(l, r, outcome(v.winner)));
            n += 1;
        }
        (clusters.into_values().collect(), n)
    }

    /// Every verdict grouped by (pair, criterion).
    fn verdicts_by_item(&self) -> VerdictsByItem<'_> {
        let mut by_item = VerdictsByItem::new();
        for v in &self.verdicts {
            by_item
                .entry((v.pair_id, v.criterion_id))
                .or_default()
                .push(v);
        }
        by_item
    }

    /// Agreement per criterion: the experts with each other, then each judge with the experts.
    fn agreement_rows(
        &self,
        by_item: &VerdictsByItem<'_>,
        options: &PairwiseOptions,
    ) -> Vec<PreferenceRow> {
        let mut agreement = Vec::new();
        for (key, cid) in self.stored_criteria() {
            let (a, b) = self.expert_pairs(by_item, cid);
            if !a.is_empty() {
                agreement.push(PreferenceRow {
                    criterion: key.to_string(),
                    between: "experts".into(),
                    agreement: bt::preference_agreement(&a, &b, options.level).ok(),
                });
            }
            for &j in &self.judges {
                let (a, b) = self.judge_expert_pairs(by_item, cid, j);
                if !a.is_empty() {
                    agreement.push(PreferenceRow {
                        criterion: key.to_string(),
                        between: self.name_of(j),
                        agreement: bt::preference_agreement(&a, &b, options.level).ok(),
                    });
                }
            }
        }
        agreement
    }

    /// Every two experts' verdicts on the same pair and criterion, the one whose name sorts first
    /// as the first rater.
    fn expert_pairs(
        &self,
        by_item: &VerdictsByItem<'_>,
        criterion_id: i64,
    ) -> (Vec<Outcome>, Vec<Outcome>) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for ((_, crit), vs) in by_item {
            if *crit != criterion_id {
                continue;
            }
            // By name, so the first and second of each two experts are the same in the
            // methods appendix's ratings (which name raters, not their ids).
            let mut ex: Vec<&&PairVerdictRecord> =
                vs.iter().filter(|v| self.is_expert(v.rater_id)).collect();
            ex.sort_by_cached_key(|v| self.name_of(v.rater_id));
            for i in 0..ex.len() {
                for k in i + 1..ex.len() {
                    a.push(outcome(ex[i].winner));
                    b.push(outcome(ex[k].winner));
                }
            }
        }
        (a, b)
    }

    /// The judge's one verdict on each pair against every expert's verdict on it, on one
    /// criterion.
    fn judge_expert_pairs(
        &self,
        by_item: &VerdictsByItem<'_>,
        criterion_id: i64,
        judge: i64,
    ) -> (Vec<Outcome>, Vec<Outcome>) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for ((_, crit), vs) in by_item {
            if *crit != criterion_id {
                continue;
            }
            let Some(verdict) = judge_verdict(vs.iter().filter(|v| v.rater_id == judge)) else {
                continue;
            };
            for e in vs.iter().filter(|v| self.is_expert(v.rater_id)) {
                a.push(verdict);
                b.push(outcome(e.winner));
            }
        }
        (a, b)
    }

    /// Each judge's position consistency and bias on each criterion it gave verdicts on.
    fn position_rows(
        &self,
        by_item: &VerdictsByItem<'_>,
        options: &PairwiseOptions,
    ) -> Vec<PositionRow> {
        let mut position = Vec::new();
        for &j in &self.judges {
            for (key, cid) in self.stored_criteria() {
                let tally = position_tally(by_item, cid, j);
                if tally.any {
                    position.push(PositionRow {
                        judge: self.name_of(j),
                        criterion: key.to_string(),
                        consistency: bt::position_consistency(&tally.both, options.level),
                        bias: bt::position_bias(tally.first_wins, tally.decided, options.level),
                    });
                }
            }
        }
        position
    }
}

/// The judge's position evidence on one criterion (see [`PositionTally`]).
fn position_tally(by_item: &VerdictsByItem<'_>, criterion_id: i64, judge: i64) -> PositionTally {
    let mut tally = PositionTally::default();
    for ((_, crit), vs) in by_item {
        if *crit != criterion_id {
            continue;
        }
        let mine: Vec<&&PairVerdictRecord> = vs.iter().filter(|v| v.rater_id == judge).collect();
        for v in &mine {
            tally.any = true;
            if v.winner != Winner::Tie {
                tally.decided += 1;
                if (v.winner == Winner::Left) == v.left_first {
                    tally.first_wins += 1;
                }
            }
        }
        let lf = mine.iter().find(|v| v.left_first);
        let rf = mine.iter().find(|v| !v.left_first);
        if let (Some(lf), Some(rf)) = (lf, rf) {
            tally.both.push((outcome(lf.winner), outcome(rf.winner)));
        }
    }
    tally
}

/// A judge's one verdict on a pair (see the module docs): its verdicts when they agree, a tie
/// when the two orders disagree.
fn judge_verdict<'a>(vs: impl Iterator<Item = &'a &'a PairVerdictRecord>) -> Option<Outcome> {
    let mut out: Option<Outcome> = None;
    for v in vs {
        let o = outcome(v.winner);
        out = Some(match out {
            None => o,
            Some(prev) if prev == o => o,
            Some(_) => Outcome::Tie,
        });
    }
    out
}

fn group_leaderboard(
    name: &str,
    kind: &'static str,
    criterion: &str,
    verdicts: usize,
    options: &PairwiseOptions,
    fit: Result<Leaderboard, PairwiseError>,
    sources: &[crate::store::SourceRecord],
) -> GroupLeaderboard {
    match fit {
        Ok(l) => GroupLeaderboard {
            rater: name.to_string(),
            kind,
            criterion: criterion.to_string(),
            verdicts,
            ties: l.ties,
            tie_parameter: l.tie_parameter,
            resamples_kept: l.resamples_kept,
            resamples: l.resamples,
            sources: l
                .entries
                .iter()
                .filter(|e| e.comparisons > 0)
                .filter_map(|e| {
                    let s = sources.get(e.item)?;
                    Some(SourceRow {
                        source: s.key.clone(),
                        name: s.name.clone(),
                        strength: e.strength,
                        ci_low: e.ci_low,
                        ci_high: e.ci_high,
                        rank: e.rank,
                        wins: e.wins,
                        comparisons: e.comparisons,
                        win_rate: e.win_rate,
                    })
                })
                .collect(),
            unavailable: None,
        },
        Err(e) => GroupLeaderboard {
            rater: name.to_string(),
            kind,
            criterion: criterion.to_string(),
            verdicts,
            ties: options.ties,
            tie_parameter: None,
            resamples_kept: 0,
            resamples: options.bootstrap.resamples,
            sources: Vec::new(),
            unavailable: Some(name_sources(&e.to_string(), sources)),
        },
    }
}

/// An error about item indices, with the sources' keys for the indices it names.
fn name_sources(message: &str, sources: &[crate::store::SourceRecord]) -> String {
    let keys: Vec<&str> = sources.iter().map(|s| s.key.as_str()).collect();
    format!("{message} (items in source order: {})", keys.join(", "))
}

/// Each group's strengths against its mean 1–5 scores per source, on the compared rubric whose
/// criteria have the pairwise criteria's keys (`overall`: the mean over all its criteria).
fn rank_rows(
    store: &Store,
    pairwise: &StoredRubric,
    leaderboards: &[GroupLeaderboard],
    sources: &[crate::store::SourceRecord],
    raters: &[crate::store::RaterRecord],
) -> Result<(Option<String>, Vec<RankRow>), PairwiseReportError> {
    let in_use = store.rubric_ids_in_use()?;
    let Some(single) = store.rubrics()?.into_iter().find(|s| {
        in_use.contains(&s.id)
            && !s.rubric.is_pairwise()
            && s.rubric
                .criteria
                .iter()
                .any(|c| pairwise.rubric.criterion(&c.id).is_some())
    }) else {
        return Ok((None, Vec::new()));
    };
    let criteria = store.read().criterion_ids(single.id)?;
    let criterion_key: HashMap<i64, String> =
        criteria.iter().map(|(k, id)| (*id, k.clone())).collect();
    let source_of: HashMap<i64, i64> = store
        .rubric_responses(single.id)?
        .into_iter()
        .map(|r| (r.response_id, r.source_id))
        .collect();
    let source_key: HashMap<i64, &str> = sources.iter().map(|s| (s.id, s.key.as_str())).collect();
    // (group, criterion key, source key) → (sum, n); "overall" collects every criterion.
    let mut sums: HashMap<(String, String, String), (f64, usize)> = HashMap::new();
    let group_of: HashMap<i64, String> = raters
        .iter()
        .map(|r| {
            (
                r.id,
                if r.is_expert() {
                    "experts".to_string()
                } else {
                    r.name.clone()
                },
            )
        })
        .collect();
    let wanted: Vec<&str> = leaderboards.iter().map(|l| l.rater.as_str()).collect();
    let rater_ids: Vec<i64> = raters
        .iter()
        .filter(|r| wanted.contains(&group_of[&r.id].as_str()))
        .map(|r| r.id)
        .collect();
    let ids: Vec<i64> = criteria.values().copied().collect();
    store.for_each_value_of_raters(&ids, &rater_ids, |rater, response, criterion, value| {
        let (Some(group), Some(src), Some(key)) = (
            group_of.get(&rater),
            source_of.get(&response).and_then(|s| source_key.get(s)),
            criterion_key.get(&criterion),
        ) else {
            return;
        };
        for k in [key.as_str(), "overall"] {
            let e = sums
                .entry((group.clone(), k.to_string(), src.to_string()))
                .or_default();
            e.0 += value as f64;
            e.1 += 1;
        }
    })?;
    let mut rows = Vec::new();
    for l in leaderboards {
        if l.sources.is_empty() {
            continue;
        }
        let means: Vec<Option<f64>> = l
            .sources
            .iter()
            .map(|s| {
                sums.get(&(l.rater.clone(), l.criterion.clone(), s.source.clone()))
                    .map(|(sum, n)| sum / *n as f64)
            })
            .collect();
        if means.iter().all(Option::is_none) {
            continue;
        }
        let strengths: Vec<Option<f64>> = l.sources.iter().map(|s| s.strength).collect();
        rows.push(RankRow {
            rater: l.rater.clone(),
            criterion: l.criterion.clone(),
            correlation: bt::rank_correlation(&strengths, &means),
        });
    }
    Ok((Some(single.rubric.id), rows))
}
