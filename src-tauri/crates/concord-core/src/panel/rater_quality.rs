//! Rater quality, measured per expert from the study's own ratings (the statistics are
//! `concord_stats::rater_quality`; this module chooses the data and the thresholds):
//!
//! - **severity** per criterion: the expert's mean offset from the other experts on shared items,
//!   with a 95% t interval; flagged *lenient* (or *severe*) when the interval excludes 0 and the
//!   offset is at least [`QualityOptions::min_offset_likert`] points (binary dimensions:
//!   [`QualityOptions::min_offset_binary`], a difference of proportions);
//! - **drift** per criterion over the session, in the order the values were first entered: the
//!   offsets from the other experts when at least half of the expert's items are shared, else the
//!   raw values; first vs last quarter and the CUSUM change test (alarm at α = 0.01);
//! - **test–retest** per criterion from the retest items (ICC(A,1) on 1–5, κ on binary);
//! - **time per item** from the rating screen, with items faster than
//!   max([`QualityOptions::too_fast_floor_seconds`], [`QualityOptions::too_fast_fraction`] × the
//!   panel's median) flagged; an expert is flagged when more than
//!   [`QualityOptions::too_fast_share`] of their items are that fast;
//! - **straight-lining**: items with one value on every criterion, flagged when their share is at
//!   least [`QualityOptions::straight_min_share`] and significantly above the rest of the panel's
//!   (one-sided binomial p < 0.01; the panel's share counts one pseudo-item each way).
//!
//! Nothing is flagged on fewer than [`QualityOptions::min_items`] items.

use crate::store::{ExpertValue, ItemTime, PanelCriterion, PanelExpert, Store, StoreError};
use concord_stats::rater_quality::{
    drift, mean_with_ci, median, offsets_from_others, straight_lining, test_retest, time_on_task,
    Direction, Drift, DriftOptions, MeanEstimate, StraightLining, TestRetest,
};

/// A mean offset with its 95% t interval (see `concord_stats::rater_quality::MeanEstimate`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SeverityEstimate {
    pub n: usize,
    pub mean: Option<f64>,
    pub sd: Option<f64>,
    pub ci95: Option<[f64; 2]>,
}

impl From<MeanEstimate> for SeverityEstimate {
    fn from(m: MeanEstimate) -> Self {
        SeverityEstimate {
            n: m.n,
            mean: m.mean,
            sd: m.sd,
            ci95: m.ci95,
        }
    }
}

/// Which way a drift went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum DriftDirection {
    Up,
    Down,
}

/// Drift over a session (see `concord_stats::rater_quality::Drift`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SessionDrift {
    pub n: usize,
    pub block: usize,
    pub first_mean: Option<f64>,
    pub last_mean: Option<f64>,
    pub difference: Option<f64>,
    pub difference_ci95: Option<[f64; 2]>,
    pub cusum_max: Option<f64>,
    pub cusum_p: Option<f64>,
    pub alarm: bool,
    pub change_at: Option<usize>,
    pub direction: Option<DriftDirection>,
    /// The standardised CUSUM path, when asked for (for plots).
    pub path: Vec<f64>,
}

impl From<Drift> for SessionDrift {
    fn from(d: Drift) -> Self {
        SessionDrift {
            n: d.n,
            block: d.block,
            first_mean: d.first_mean,
            last_mean: d.last_mean,
            difference: d.difference,
            difference_ci95: d.difference_ci95,
            cusum_max: d.cusum_max,
            cusum_p: d.cusum_p,
            alarm: d.alarm,
            change_at: d.change_at,
            direction: d.direction.map(|x| match x {
                Direction::Up => DriftDirection::Up,
                Direction::Down => DriftDirection::Down,
            }),
            path: d.path,
        }
    }
}

/// Test–retest agreement (see `concord_stats::rater_quality::TestRetest`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Retest {
    pub n: usize,
    pub icc_a1: Option<f64>,
    pub icc_ci95: Option<[f64; 2]>,
    pub kappa: Option<f64>,
    pub exact: Option<f64>,
    pub within_one: Option<f64>,
}

impl From<TestRetest> for Retest {
    fn from(t: TestRetest) -> Self {
        Retest {
            n: t.n,
            icc_a1: t.icc_a1,
            icc_ci95: t.icc_ci95,
            kappa: t.kappa,
            exact: t.exact,
            within_one: t.within_one,
        }
    }
}

/// Straight-lining (see `concord_stats::rater_quality::StraightLining`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StraightLines {
    pub n: usize,
    pub straight: usize,
    pub share: Option<f64>,
    pub panel_share: Option<f64>,
    pub longest_run: usize,
    pub p_value: Option<f64>,
}

impl From<StraightLining> for StraightLines {
    fn from(s: StraightLining) -> Self {
        StraightLines {
            n: s.n,
            straight: s.straight,
            share: s.share,
            panel_share: s.panel_share,
            longest_run: s.longest_run,
            p_value: s.p_value,
        }
    }
}
use serde::Serialize;
use std::collections::HashMap;

/// Thresholds of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QualityOptions {
    pub drift: DriftOptions,
    /// Smallest |offset| (scale points) that flags a 1–5 criterion as lenient or severe.
    pub min_offset_likert: f64,
    /// Smallest |offset| (difference of proportions) that flags a binary dimension.
    pub min_offset_binary: f64,
    /// An item faster than this many seconds is too fast whatever the panel does.
    pub too_fast_floor_seconds: f64,
    /// … or faster than this fraction of the panel's median time per item.
    pub too_fast_fraction: f64,
    /// Share of too-fast items above which the expert is flagged.
    pub too_fast_share: f64,
    /// Smallest share of straight-lined items that can flag an expert.
    pub straight_min_share: f64,
    /// Fewest shared items (severity) or items (time, straight-lining) before anything is
    /// flagged: below that the numbers are shown but raise no flag.
    pub min_items: usize,
    /// Include the CUSUM paths (for plots).
    pub paths: bool,
}

impl Default for QualityOptions {
    fn default() -> Self {
        QualityOptions {
            drift: DriftOptions::default(),
            min_offset_likert: 0.5,
            min_offset_binary: 0.15,
            too_fast_floor_seconds: 3.0,
            too_fast_fraction: 0.25,
            too_fast_share: 0.2,
            straight_min_share: 0.25,
            min_items: 10,
            paths: false,
        }
    }
}

/// One criterion of one expert.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CriterionQuality {
    pub criterion: String,
    pub binary: bool,
    /// Values the expert entered on this criterion.
    pub n: usize,
    /// Mean offset from the other experts over shared items (positive = lenient).
    pub severity: SeverityEstimate,
    /// `lenient`, `severe`, or none.
    pub severity_flag: Option<SeverityFlag>,
    /// Whether `drift` ran on offsets from the panel (else on raw values).
    pub drift_on_offsets: bool,
    pub drift: SessionDrift,
    pub test_retest: Retest,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum SeverityFlag {
    Lenient,
    Severe,
}

/// An expert's time per item.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TimeSummary {
    /// Items with a recorded time.
    pub n: usize,
    pub median_seconds: Option<f64>,
    pub too_fast: usize,
    pub share_too_fast: Option<f64>,
}

/// Something about an expert worth a look.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum QualityFlag {
    Lenient {
        criterion: String,
    },
    Severe {
        criterion: String,
    },
    Drift {
        criterion: String,
        direction: DriftDirection,
    },
    TooFast,
    StraightLining,
}

/// One expert.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExpertQuality {
    pub rater: String,
    pub ratings: usize,
    pub items: usize,
    pub criteria: Vec<CriterionQuality>,
    pub time: TimeSummary,
    pub straight_lining: StraightLines,
    pub flags: Vec<QualityFlag>,
}

/// The whole panel.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RaterQualityReport {
    pub experts: Vec<ExpertQuality>,
    pub panel_median_seconds: Option<f64>,
    /// Items faster than this are too fast.
    pub too_fast_below_seconds: f64,
    #[cfg_attr(feature = "ts", ts(skip))]
    pub options: QualityOptions,
}

/// Rater quality of every expert of the study: the panel's values read and put in the order of
/// work, then per criterion (severity, drift, test–retest), time per item and straight-lining,
/// and each expert's flags from those.
pub fn report(store: &Store, options: &QualityOptions) -> Result<RaterQualityReport, StoreError> {
    let experts = store.panel_experts()?;
    let criteria = store.panel_criteria()?;
    let mut values = store.expert_values(false)?;
    let retests = store.expert_retest_values()?;
    let times = store.expert_item_times()?;
    let panel = PanelIndex::new(&experts, &criteria);
    // Order of work: first entry time, then response.
    values.sort_unstable_by_key(|v| (v.created_at, v.response_id, v.criterion_id));

    let retest_pairs = panel.retest_pairs(&values, &retests);
    let mut criterion_quality = panel.criterion_quality(&criteria, &values, &retest_pairs, options);
    let seconds = panel.seconds_per_item(&times);
    let all_times: Vec<f64> = seconds
        .iter()
        .flatten()
        .copied()
        .filter(|s| *s > 0.0)
        .collect();
    let panel_median = median(&all_times);
    let floor = options
        .too_fast_floor_seconds
        .max(panel_median.map_or(0.0, |m| m * options.too_fast_fraction));
    let items = panel.items(&values);
    let straight_counts: Vec<(usize, usize)> = items
        .iter()
        .map(|list| {
            let s = straight_lining(list, None);
            (s.straight, s.n)
        })
        .collect();

    let per_expert = PerExpert {
        seconds: &seconds,
        floor,
        items: &items,
        straight_counts: &straight_counts,
        options,
    };
    let out = experts
        .iter()
        .enumerate()
        .map(|(e, expert)| {
            per_expert.quality(e, &expert.name, std::mem::take(&mut criterion_quality[e]))
        })
        .collect();
    Ok(RaterQualityReport {
        experts: out,
        panel_median_seconds: panel_median,
        too_fast_below_seconds: floor,
        options: options.clone(),
    })
}

/// (expert, criterion) positions → the first values and the retest values of the responses
/// retested.
type RetestPairs = HashMap<(usize, usize), (Vec<f64>, Vec<f64>)>;

/// The panel's experts and criteria by their position (the dense index every list of the report
/// is kept by).
struct PanelIndex {
    /// Rater id → position among the experts.
    expert_at: HashMap<i64, usize>,
    /// Criterion id → position among the criteria.
    criterion_at: HashMap<i64, usize>,
    /// Number of experts.
    k: usize,
}

impl PanelIndex {
    /// Index the experts and criteria as the store lists them.
    fn new(experts: &[PanelExpert], criteria: &[PanelCriterion]) -> Self {
        PanelIndex {
            expert_at: experts.iter().enumerate().map(|(i, e)| (e.id, i)).collect(),
            criterion_at: criteria
                .iter()
                .enumerate()
                .map(|(i, c)| (c.id, i))
                .collect(),
            k: experts.len(),
        }
    }

    /// Each (expert, criterion)'s retest pairs: the first value and the retest value of every
    /// retested response the expert first rated.
    fn retest_pairs(&self, values: &[ExpertValue], retests: &[ExpertValue]) -> RetestPairs {
        let first_value: HashMap<(i64, i64, i64), i64> = values
            .iter()
            .map(|v| ((v.rater_id, v.response_id, v.criterion_id), v.value))
            .collect();
        let mut retest_pairs: RetestPairs = HashMap::new();
        for r in retests {
            let (Some(&e), Some(&c)) = (
                self.expert_at.get(&r.rater_id),
                self.criterion_at.get(&r.criterion_id),
            ) else {
                continue;
            };
            if let Some(&first) = first_value.get(&(r.rater_id, r.response_id, r.criterion_id)) {
                let entry = retest_pairs.entry((e, c)).or_default();
                entry.0.push(first as f64);
                entry.1.push(r.value as f64);
            }
        }
        retest_pairs
    }

    /// Severity, drift and test–retest of every expert on every criterion they rated, by expert
    /// (criteria in their order).
    fn criterion_quality(
        &self,
        criteria: &[PanelCriterion],
        values: &[ExpertValue],
        retest_pairs: &RetestPairs,
        options: &QualityOptions,
    ) -> Vec<Vec<CriterionQuality>> {
        // Per criterion: the experts' values in the order of work.
        let mut per_criterion: Vec<Vec<&ExpertValue>> = vec![Vec::new(); criteria.len()];
        for v in values {
            if let (Some(&c), true) = (
                self.criterion_at.get(&v.criterion_id),
                self.expert_at.contains_key(&v.rater_id),
            ) {
                per_criterion[c].push(v);
            }
        }
        let mut criterion_quality: Vec<Vec<CriterionQuality>> = vec![Vec::new(); self.k];
        for (c, list) in per_criterion.iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            let series = CriterionSeries::new(self, list);
            let refs: Vec<&[f64]> = series.series.iter().map(|s| s.as_slice()).collect();
            let offsets = offsets_from_others(&refs);
            for e in 0..self.k {
                if series.order[e].is_empty() {
                    continue;
                }
                let (first, second) = retest_pairs
                    .get(&(e, c))
                    .map(|(a, b)| (a.as_slice(), b.as_slice()))
                    .unwrap_or((&[], &[]));
                criterion_quality[e].push(series.quality(
                    e,
                    &offsets[e],
                    &criteria[c],
                    (first, second),
                    options,
                ));
            }
        }
        criterion_quality
    }

    /// Each expert's seconds per item, as the store lists them.
    fn seconds_per_item(&self, times: &[ItemTime]) -> Vec<Vec<f64>> {
        let mut seconds: Vec<Vec<f64>> = vec![Vec::new(); self.k];
        for t in times {
            if let Some(&e) = self.expert_at.get(&t.rater_id) {
                seconds[e].push(t.seconds);
            }
        }
        seconds
    }

    /// For straight-lining: per expert, per response (in the order first entered), the values on
    /// each criterion of the response's rubric.
    fn items(&self, values: &[ExpertValue]) -> Vec<Vec<Vec<Option<f64>>>> {
        let mut items: Vec<Vec<Vec<Option<f64>>>> = vec![Vec::new(); self.k];
        let mut slot: HashMap<(usize, i64), usize> = HashMap::new();
        for v in values {
            let Some(&e) = self.expert_at.get(&v.rater_id) else {
                continue;
            };
            if !self.criterion_at.contains_key(&v.criterion_id) {
                continue;
            }
            let pos = *slot.entry((e, v.response_id)).or_insert_with(|| {
                items[e].push(Vec::new());
                items[e].len() - 1
            });
            items[e][pos].push(Some(v.value as f64));
        }
        items
    }
}

/// One criterion's values laid out for the statistics: the responses rated densely indexed, each
/// expert's series over them (NaN where not rated) and the order the expert rated them in.
struct CriterionSeries {
    series: Vec<Vec<f64>>,
    order: Vec<Vec<usize>>,
}

impl CriterionSeries {
    /// Lay out one criterion's values (in the order of work).
    fn new(panel: &PanelIndex, list: &[&ExpertValue]) -> Self {
        let mut index: HashMap<i64, usize> = HashMap::new();
        for v in list {
            let next = index.len();
            index.entry(v.response_id).or_insert(next);
        }
        let n = index.len();
        let mut series = vec![vec![f64::NAN; n]; panel.k];
        let mut order: Vec<Vec<usize>> = vec![Vec::new(); panel.k];
        for v in list {
            let e = panel.expert_at[&v.rater_id];
            let i = index[&v.response_id];
            series[e][i] = v.value as f64;
            order[e].push(i);
        }
        CriterionSeries { series, order }
    }

    /// Expert `e`'s severity (from `offsets`, the expert's offsets from the others), drift over
    /// the session and test–retest (`retest`: first and retest values) on `criterion`.
    fn quality(
        &self,
        e: usize,
        offsets: &[f64],
        criterion: &PanelCriterion,
        retest: (&[f64], &[f64]),
        options: &QualityOptions,
    ) -> CriterionQuality {
        let order = &self.order[e];
        let severity = mean_with_ci(offsets);
        let shared = severity.n;
        let on_offsets = shared * 2 >= order.len() && shared > 0;
        let sequence: Vec<f64> = order
            .iter()
            .map(|&i| {
                if on_offsets {
                    offsets[i]
                } else {
                    self.series[e][i]
                }
            })
            .filter(|v| v.is_finite())
            .collect();
        let mut d = drift(&sequence, options.drift);
        if !options.paths {
            d.path.clear();
        }
        let min_offset = if criterion.binary {
            options.min_offset_binary
        } else {
            options.min_offset_likert
        };
        let severity_flag = match (severity.mean, severity.ci95) {
            _ if severity.n < options.min_items => None,
            (Some(m), Some([lo, _])) if lo > 0.0 && m >= min_offset => Some(SeverityFlag::Lenient),
            (Some(m), Some([_, hi])) if hi < 0.0 && -m >= min_offset => Some(SeverityFlag::Severe),
            _ => None,
        };
        CriterionQuality {
            criterion: criterion.key.clone(),
            binary: criterion.binary,
            n: order.len(),
            severity: severity.into(),
            severity_flag,
            drift_on_offsets: on_offsets,
            drift: d.into(),
            test_retest: test_retest(retest.0, retest.1, criterion.binary).into(),
        }
    }
}

/// What the panel-wide phases hand each expert's summary: times per item and the too-fast floor,
/// items for straight-lining and every expert's straight-lined counts.
struct PerExpert<'a> {
    seconds: &'a [Vec<f64>],
    floor: f64,
    items: &'a [Vec<Vec<Option<f64>>>],
    /// (straight-lined items, items) of each expert.
    straight_counts: &'a [(usize, usize)],
    options: &'a QualityOptions,
}

impl PerExpert<'_> {
    /// Expert `e`'s summary: time per item, straight-lining against the rest of the panel, and
    /// the flags raised by those and by its `criteria`.
    fn quality(&self, e: usize, name: &str, criteria: Vec<CriterionQuality>) -> ExpertQuality {
        let options = self.options;
        let t = time_on_task(&self.seconds[e], self.floor);
        let time = TimeSummary {
            n: t.n,
            median_seconds: t.median,
            too_fast: t.too_fast.len(),
            share_too_fast: t.share_too_fast,
        };
        let (others_straight, others_n) = self
            .straight_counts
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != e)
            .fold((0, 0), |(s, n), (_, (a, b))| (s + a, n + b));
        // The panel's share with one pseudo-item each way (Laplace), so a small panel that never
        // straight-lined does not make a single straight-lined item significant.
        let panel_share =
            (others_n > 0).then(|| (others_straight as f64 + 1.0) / (others_n as f64 + 2.0));
        let straight = straight_lining(&self.items[e], panel_share);
        let mut flags = criterion_flags(&criteria);
        if time.n >= options.min_items
            && time
                .share_too_fast
                .is_some_and(|s| s > options.too_fast_share)
        {
            flags.push(QualityFlag::TooFast);
        }
        if straight.n >= options.min_items
            && straight
                .share
                .is_some_and(|s| s >= options.straight_min_share)
            && straight.p_value.is_some_and(|p| p < 0.01)
        {
            flags.push(QualityFlag::StraightLining);
        }
        ExpertQuality {
            rater: name.to_string(),
            ratings: criteria.iter().map(|c| c.n).sum(),
            items: self.items[e].len(),
            criteria,
            time,
            straight_lining: straight.into(),
            flags,
        }
    }
}

/// The flags an expert's criteria raise: lenient or severe, and drift, criterion by criterion.
fn criterion_flags(criteria: &[CriterionQuality]) -> Vec<QualityFlag> {
    let mut flags = Vec::new();
    for c in criteria {
        match c.severity_flag {
            Some(SeverityFlag::Lenient) => flags.push(QualityFlag::Lenient {
                criterion: c.criterion.clone(),
            }),
            Some(SeverityFlag::Severe) => flags.push(QualityFlag::Severe {
                criterion: c.criterion.clone(),
            }),
            None => {}
        }
        if let (true, Some(direction)) = (c.drift.alarm, c.drift.direction) {
            flags.push(QualityFlag::Drift {
                criterion: c.criterion.clone(),
                direction,
            });
        }
    }
    flags
}
