//! Agreement on marked evidence (`concord agreement --spans`): per code of a rubric and over all
//! codes, Krippendorff's unitized α among the experts, span F1 (exact boundaries and any overlap)
//! for every pair of raters, and each judge's F1 against each expert beside the range of the
//! expert–expert figures, each with a percentile bootstrap interval over replies (seeded).
//!
//! What enters:
//! - the raters are those who marked at least one located span on the rubric's replies (an
//!   expert who marked nothing is not taken to have looked for evidence); experts first, then
//!   judges, each by name;
//! - a rater *covers* a reply they rated on some criterion of the rubric or marked;
//! - the replies compared are the rubric's reply items some rater marked, in the order of
//!   conversation id, turn and source (the bootstrap resamples them);
//! - uα's continuum is those replies at least one expert marked, among the ones every compared
//!   expert covers (so a reply an expert never saw is not read as "nothing to mark"), laid end to
//!   end; one rater's overlapping spans of one code are merged;
//! - F1 of two raters reads the replies both cover; a match needs the same code (over all codes
//!   too);
//! - a judge's quote that could not be located has no offsets and is left out (counted per rater).
//!
//! A figure the data cannot give is `null`: uα with fewer than two experts or an empty
//! continuum, a code no expert used, F1 of two raters of whom neither marked anything on their
//! shared replies.

use crate::rubric::Rubric;
use crate::store::{RaterKind, Store, StoreError};
use concord_stats::bootstrap::{BootstrapInterval, BootstrapOptions};
use concord_stats::spans::{
    continuum, percentile_cis_each, span_f1, unitized_alpha, ItemSpan, MarkedItem, MarkedSpan,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// How the report is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanAgreementOptions {
    /// Bootstrap resamples of replies (0: no intervals).
    pub resamples: usize,
    /// Seed of the bootstrap.
    pub seed: u64,
}

impl Default for SpanAgreementOptions {
    fn default() -> Self {
        SpanAgreementOptions {
            resamples: 1000,
            seed: 20_240_601,
        }
    }
}

/// A 95% percentile bootstrap interval; `null` bounds when too few replicates were defined.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Interval {
    pub lower: Option<f64>,
    pub upper: Option<f64>,
}

impl From<&BootstrapInterval> for Interval {
    fn from(b: &BootstrapInterval) -> Self {
        Interval {
            lower: b.lower,
            upper: b.upper,
        }
    }
}

/// Span F1 of two raters.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairF1 {
    pub a: String,
    pub b: String,
    /// `expert` or `judge`.
    pub a_kind: String,
    pub b_kind: String,
    pub f1_exact: Option<f64>,
    pub f1_overlap: Option<f64>,
    pub f1_exact_ci: Option<Interval>,
    pub f1_overlap_ci: Option<Interval>,
    /// Replies both cover among those compared.
    pub replies: usize,
    pub a_spans: usize,
    pub b_spans: usize,
}

/// The lowest and highest of the expert–expert figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Range {
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// One judge against each expert, beside the experts among themselves.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct JudgeAgainstExperts {
    pub judge: String,
    /// The judge's pair with each expert (`a` the judge, `b` the expert).
    pub experts: Vec<PairF1>,
    pub expert_range_exact: Range,
    pub expert_range_overlap: Range,
}

/// The figures of one code (or, as `overall`, of all codes).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CodeAgreement {
    pub code: String,
    /// Spans of this code the compared raters marked (located).
    pub spans: usize,
    pub alpha_u: Option<f64>,
    pub alpha_u_ci: Option<Interval>,
    pub pairs: Vec<PairF1>,
    pub judges: Vec<JudgeAgainstExperts>,
}

/// A rater whose spans the report reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SpanRater {
    pub name: String,
    pub kind: String,
    /// Located spans on the rubric's replies.
    pub spans: usize,
    /// Judges' quotes not located in their reply (left out of every figure).
    pub unlocated: usize,
    /// Replies the rater covers (rated or marked).
    pub replies_covered: usize,
}

/// The span agreement of one rubric.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SpanAgreementReport {
    pub rubric: String,
    pub codes: Vec<CodeAgreement>,
    pub overall: CodeAgreement,
    pub raters: Vec<SpanRater>,
    /// Replies some rater marked (the bootstrap's units).
    pub replies_marked: usize,
    /// Replies and characters of uα's continuum.
    pub continuum_replies: usize,
    pub continuum_characters: u64,
    pub resamples: usize,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seed: u64,
}

/// Why a span report cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum SpanAgreementError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the study has no rubric {0}")]
    UnknownRubric(String),
    #[error("no rubric of the study declares span codes, so there are no spans to compare")]
    NoCodes,
    #[error("{0}")]
    Statistics(String),
}

/// One compared reply: its length, every rater's spans, who covers it and whether an expert
/// marked it.
struct Reply {
    /// Conversation id, turn (2 for an earlier release's single-turn answer) and source.
    name: (String, i64, String),
    item: MarkedItem,
    covered: Vec<bool>,
    expert_marked: bool,
}

/// What each bootstrap replicate recomputes.
struct Setup<'a> {
    replies: &'a [Reply],
    experts: Vec<usize>,
    raters: usize,
    codes: usize,
    pairs: Vec<(usize, usize)>,
}

impl Setup<'_> {
    /// Figures per code then overall: uα, then each pair's exact and overlap F1.
    fn figures(&self, drawn: &[usize], out: &mut [Option<f64>]) {
        let per = 1 + 2 * self.pairs.len();
        let chosen: Vec<&Reply> = drawn.iter().map(|&i| &self.replies[i]).collect();
        let alpha = self.alpha(&chosen);
        for code in 0..=self.codes {
            let base = code * per;
            out[base] = match &alpha {
                None => None,
                Some(a) if code < self.codes => a.category(code).map(|c| c.alpha),
                Some(a) => a.alpha,
            };
            let filter = (code < self.codes).then_some(code);
            for (k, &(a, b)) in self.pairs.iter().enumerate() {
                let f = self.pair(&chosen, a, b, filter);
                out[base + 1 + 2 * k] = f.exact;
                out[base + 2 + 2 * k] = f.overlap;
            }
        }
    }

    fn alpha(&self, chosen: &[&Reply]) -> Option<concord_stats::spans::UnitizedAlpha> {
        if self.experts.len() < 2 {
            return None;
        }
        let items: Vec<&MarkedItem> = chosen
            .iter()
            .filter(|r| r.expert_marked && self.experts.iter().all(|&e| r.covered[e]))
            .map(|r| &r.item)
            .collect();
        if items.is_empty() {
            return None;
        }
        unitized_alpha(&continuum(&items, &self.experts)).ok()
    }

    fn pair(
        &self,
        chosen: &[&Reply],
        a: usize,
        b: usize,
        code: Option<usize>,
    ) -> concord_stats::spans::SpanF1 {
        let (mut first, mut second) = (Vec::new(), Vec::new());
        for (k, reply) in chosen.iter().enumerate() {
            if !(reply.covered[a] && reply.covered[b]) {
                continue;
            }
            for s in &reply.item.spans {
                if code.is_some_and(|c| c != s.code) {
                    continue;
                }
                let span = ItemSpan {
                    item: k,
                    code: s.code,
                    start: s.start,
                    end: s.end,
                };
                if s.rater == a {
                    first.push(span);
                } else if s.rater == b {
                    second.push(span);
                }
            }
        }
        span_f1(&first, &second)
    }
}

/// The span agreement of rubric `rubric` (by key; `None`: the first rubric of the study that
/// declares codes).
pub fn span_agreement(
    store: &Store,
    rubric: Option<&str>,
    options: SpanAgreementOptions,
) -> Result<SpanAgreementReport, SpanAgreementError> {
    let prepared = prepare(store, rubric)?;
    report_of(&prepared, options)
}

/// A located span as the methods appendix lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanRow {
    pub conversation: String,
    pub turn: i64,
    pub source: String,
    pub rater: String,
    pub kind: String,
    pub code: String,
    pub start: u64,
    pub end: u64,
}

/// A compared reply: its length in characters and one rater who covers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoverRow {
    pub conversation: String,
    pub turn: i64,
    pub source: String,
    pub length: u64,
    pub rater: String,
}

/// What a span report reads, row by row: every located span of its raters and, for each
/// compared reply, each rater who covers it (in the report's order of replies and raters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanInputs {
    pub spans: Vec<SpanRow>,
    pub coverage: Vec<CoverRow>,
}

/// The report of rubric `rubric` with the rows it reads; `None` when no rater marked a located
/// span on its replies (or it declares no codes).
pub fn span_agreement_with_inputs(
    store: &Store,
    rubric: &str,
    options: SpanAgreementOptions,
) -> Result<Option<(SpanAgreementReport, SpanInputs)>, SpanAgreementError> {
    let prepared = prepare(store, Some(rubric))?;
    if prepared.replies.is_empty() {
        return Ok(None);
    }
    let report = report_of(&prepared, options)?;
    let kind = |judge: bool| {
        if judge {
            RaterKind::Judge
        } else {
            RaterKind::Expert
        }
        .as_str()
        .to_string()
    };
    let mut inputs = SpanInputs {
        spans: Vec::new(),
        coverage: Vec::new(),
    };
    for reply in &prepared.replies {
        let (conversation, turn, source) = &reply.name;
        for (r, (_, name, judge)) in prepared.raters.iter().enumerate() {
            if reply.covered[r] {
                inputs.coverage.push(CoverRow {
                    conversation: conversation.clone(),
                    turn: *turn,
                    source: source.clone(),
                    length: reply.item.length,
                    rater: name.clone(),
                });
            }
            let mut own: Vec<&MarkedSpan> =
                reply.item.spans.iter().filter(|s| s.rater == r).collect();
            own.sort_by_key(|s| (s.start, s.end, s.code));
            for s in own {
                inputs.spans.push(SpanRow {
                    conversation: conversation.clone(),
                    turn: *turn,
                    source: source.clone(),
                    rater: name.clone(),
                    kind: kind(*judge),
                    code: prepared.rubric.codes[s.code].key.clone(),
                    start: s.start,
                    end: s.end,
                });
            }
        }
    }
    Ok(Some((report, inputs)))
}

/// What a report is computed from: the rubric, the raters (experts first, then judges, each by
/// name) and the compared replies.
struct Prepared {
    rubric: Rubric,
    raters: Vec<(i64, String, bool)>,
    replies: Vec<Reply>,
    unlocated: HashMap<i64, usize>,
    covered: HashSet<(usize, i64)>,
}

fn prepare(store: &Store, rubric: Option<&str>) -> Result<Prepared, SpanAgreementError> {
    let rubrics = store.rubrics()?;
    let stored = match rubric {
        Some(key) => rubrics
            .into_iter()
            .find(|r| r.rubric.id == key)
            .ok_or_else(|| SpanAgreementError::UnknownRubric(key.to_string()))?,
        None => rubrics
            .into_iter()
            .find(|r| !r.rubric.codes.is_empty())
            .ok_or(SpanAgreementError::NoCodes)?,
    };
    let rubric = &stored.rubric;
    let items = store.text_items(stored.id)?;
    let spans = store.spans_of_rubric(stored.id)?;
    let code_index: HashMap<&str, usize> = rubric
        .codes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.key.as_str(), i))
        .collect();
    // Raters with located spans: experts first, then judges, each by name.
    let mut unlocated: HashMap<i64, usize> = HashMap::new();
    let mut marking: BTreeMap<(bool, String), i64> = BTreeMap::new();
    for s in &spans {
        if s.span.range.is_none() {
            *unlocated.entry(s.span.rater_id).or_default() += 1;
        } else if code_index.contains_key(s.span.code.as_str()) {
            let judge = s.rater_kind == RaterKind::Judge.as_str();
            marking.insert((judge, s.rater.clone()), s.span.rater_id);
        }
    }
    let raters: Vec<(i64, String, bool)> = marking
        .into_iter()
        .map(|((judge, name), id)| (id, name, judge))
        .collect();
    let index_of: HashMap<i64, usize> = raters.iter().enumerate().map(|(i, r)| (r.0, i)).collect();
    let mut covered: HashSet<(usize, i64)> = store
        .rated_items_of_rubric(stored.id)?
        .into_iter()
        .filter_map(|(rater, response)| Some((*index_of.get(&rater)?, response)))
        .collect();
    let mut by_response: HashMap<i64, Vec<MarkedSpan>> = HashMap::new();
    for s in &spans {
        let (Some(&rater), Some((start, end)), Some(&code)) = (
            index_of.get(&s.span.rater_id),
            s.span.range,
            code_index.get(s.span.code.as_str()),
        ) else {
            continue;
        };
        covered.insert((rater, s.span.response_id));
        by_response
            .entry(s.span.response_id)
            .or_default()
            .push(MarkedSpan {
                rater,
                code,
                start: start as u64,
                end: end as u64,
            });
    }
    let expert_count = raters.iter().filter(|r| !r.2).count();
    let replies: Vec<Reply> = items
        .iter()
        .filter_map(|item| {
            let spans = by_response.remove(&item.response_id)?;
            let text = item.text.as_deref()?;
            Some(Reply {
                name: (
                    item.conversation.clone(),
                    item.turn.unwrap_or(2),
                    item.source.clone(),
                ),
                expert_marked: spans.iter().any(|s| s.rater < expert_count),
                covered: (0..raters.len())
                    .map(|r| covered.contains(&(r, item.response_id)))
                    .collect(),
                item: MarkedItem {
                    length: crate::rubric::quote::char_len(text) as u64,
                    spans,
                },
            })
        })
        .collect();
    Ok(Prepared {
        rubric: rubric.clone(),
        raters,
        replies,
        unlocated,
        covered,
    })
}

fn report_of(
    prepared: &Prepared,
    options: SpanAgreementOptions,
) -> Result<SpanAgreementReport, SpanAgreementError> {
    let Prepared {
        rubric,
        raters,
        replies,
        unlocated,
        covered,
    } = prepared;
    let expert_count = raters.iter().filter(|r| !r.2).count();
    let experts: Vec<usize> = (0..expert_count).collect();
    let pairs: Vec<(usize, usize)> = (0..raters.len())
        .flat_map(|a| (a + 1..raters.len()).map(move |b| (a, b)))
        .collect();
    let setup = Setup {
        replies,
        experts,
        raters: raters.len(),
        codes: rubric.codes.len(),
        pairs,
    };
    let all: Vec<usize> = (0..replies.len()).collect();
    let per = 1 + 2 * setup.pairs.len();
    let mut point = vec![None; per * (setup.codes + 1)];
    setup.figures(&all, &mut point);
    let intervals = if options.resamples > 0 && !replies.is_empty() {
        let boot = BootstrapOptions {
            resamples: options.resamples,
            ..BootstrapOptions::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
        Some(
            percentile_cis_each(replies.len(), point.len(), &boot, &mut rng, |idx, out| {
                setup.figures(idx, out)
            })
            .map_err(|e| SpanAgreementError::Statistics(e.to_string()))?,
        )
    } else {
        None
    };
    let names: Vec<(String, String)> = raters
        .iter()
        .map(|(_, name, judge)| {
            let kind = if *judge {
                RaterKind::Judge
            } else {
                RaterKind::Expert
            };
            (name.clone(), kind.as_str().to_string())
        })
        .collect();
    let figures = Figures {
        setup: &setup,
        point: &point,
        intervals: intervals.as_deref(),
        names: &names,
        replies,
    };
    let codes: Vec<CodeAgreement> = rubric
        .codes
        .iter()
        .enumerate()
        .map(|(i, c)| figures.code(i, &c.key))
        .collect();
    let overall = figures.code(setup.codes, "all");
    let continuum_items: Vec<&Reply> = replies
        .iter()
        .filter(|r| {
            setup.experts.len() >= 2
                && r.expert_marked
                && setup.experts.iter().all(|&e| r.covered[e])
        })
        .collect();
    let rater_rows = raters
        .iter()
        .enumerate()
        .map(|(i, (id, name, _))| SpanRater {
            name: name.clone(),
            kind: names[i].1.clone(),
            spans: replies
                .iter()
                .map(|r| r.item.spans.iter().filter(|s| s.rater == i).count())
                .sum(),
            unlocated: unlocated.get(id).copied().unwrap_or(0),
            replies_covered: covered.iter().filter(|(r, _)| *r == i).count(),
        })
        .collect();
    Ok(SpanAgreementReport {
        rubric: rubric.id.clone(),
        codes,
        overall,
        raters: rater_rows,
        replies_marked: replies.len(),
        continuum_replies: continuum_items.len(),
        continuum_characters: continuum_items.iter().map(|r| r.item.length).sum(),
        resamples: if intervals.is_some() {
            options.resamples
        } else {
            0
        },
        seed: options.seed,
    })
}

/// The point figures and intervals, read back into the report's shape.
struct Figures<'a> {
    setup: &'a Setup<'a>,
    point: &'a [Option<f64>],
    intervals: Option<&'a [BootstrapInterval]>,
    names: &'a [(String, String)],
    replies: &'a [Reply],
}

impl Figures<'_> {
    fn ci(&self, at: usize) -> Option<Interval> {
        self.intervals.map(|i| Interval::from(&i[at]))
    }

    fn code(&self, code: usize, key: &str) -> CodeAgreement {
        let per = 1 + 2 * self.setup.pairs.len();
        let base = code * per;
        let filter = (code < self.setup.codes).then_some(code);
        let counts = |rater: usize, other: usize| -> (usize, usize, usize) {
            let mut out = (0, 0, 0);
            for r in self.replies {
                if !(r.covered[rater] && r.covered[other]) {
                    continue;
                }
                out.0 += 1;
                for s in &r.item.spans {
                    if filter.is_some_and(|c| c != s.code) {
                        continue;
                    }
                    if s.rater == rater {
                        out.1 += 1;
                    } else if s.rater == other {
                        out.2 += 1;
                    }
                }
            }
            out
        };
        let pairs: Vec<PairF1> = self
            .setup
            .pairs
            .iter()
            .enumerate()
            .map(|(k, &(a, b))| {
                let (replies, a_spans, b_spans) = counts(a, b);
                PairF1 {
                    a: self.names[a].0.clone(),
                    b: self.names[b].0.clone(),
                    a_kind: self.names[a].1.clone(),
                    b_kind: self.names[b].1.clone(),
                    f1_exact: self.point[base + 1 + 2 * k],
                    f1_overlap: self.point[base + 2 + 2 * k],
                    f1_exact_ci: self.ci(base + 1 + 2 * k),
                    f1_overlap_ci: self.ci(base + 2 + 2 * k),
                    replies,
                    a_spans,
                    b_spans,
                }
            })
            .collect();
        let expert = |i: usize| i < self.setup.experts.len();
        let among_experts: Vec<&PairF1> = self
            .setup
            .pairs
            .iter()
            .zip(&pairs)
            .filter(|((a, b), _)| expert(*a) && expert(*b))
            .map(|(_, p)| p)
            .collect();
        let range = |f: fn(&PairF1) -> Option<f64>| {
            let values: Vec<f64> = among_experts.iter().filter_map(|p| f(p)).collect();
            Range {
                min: values.iter().copied().reduce(f64::min),
                max: values.iter().copied().reduce(f64::max),
            }
        };
        let (range_exact, range_overlap) = (range(|p| p.f1_exact), range(|p| p.f1_overlap));
        let judges = (self.setup.experts.len()..self.setup.raters)
            .map(|judge| JudgeAgainstExperts {
                judge: self.names[judge].0.clone(),
                experts: self
                    .setup
                    .pairs
                    .iter()
                    .zip(&pairs)
                    .filter(|((a, b), _)| *b == judge && expert(*a))
                    .map(|(_, p)| PairF1 {
                        a: p.b.clone(),
                        b: p.a.clone(),
                        a_kind: p.b_kind.clone(),
                        b_kind: p.a_kind.clone(),
                        a_spans: p.b_spans,
                        b_spans: p.a_spans,
                        ..p.clone()
                    })
                    .collect(),
                expert_range_exact: range_exact,
                expert_range_overlap: range_overlap,
            })
            .collect();
        let spans = self
            .replies
            .iter()
            .flat_map(|r| &r.item.spans)
            .filter(|s| filter.is_none_or(|c| c == s.code))
            .count();
        CodeAgreement {
            code: key.to_string(),
            spans,
            alpha_u: self.point[base],
            alpha_u_ci: self.ci(base),
            pairs,
            judges,
        }
    }
}

/// Whether `rubric` can have spans (it declares codes and rates replies).
pub fn has_codes(rubric: &Rubric) -> bool {
    !rubric.codes.is_empty() && rubric.scope.is_reply()
}
