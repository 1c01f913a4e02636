//! "Can this judge replace your experts?" — one verdict card per judge × criterion, and a
//! leaderboard of the rated models per criterion, over the ratings already in memory
//! ([`AgreementData`]). Every number comes from `concord-stats`; this module only chooses the
//! data and writes the rules down beside the results.
//!
//! **Expert baseline.** For each criterion, the experts' ICC(A,1) and ICC(C,1) from REML variance
//! components of score ~ 1 + (1|response) + (1|expert) over every expert rating
//! ([`concord_stats::reml`]) — exact for the incomplete designs Concord's assignment produces
//! (each response rated by k of N experts), where the ANOVA form would drop every response not
//! rated by all experts. The expert band is its profile-likelihood 95% interval of ICC(A,1).
//!
//! **Card**, per judge × criterion, three findings each with its rule and citation:
//! 1. the Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025) of the judge against
//!    the experts (negative RMSE for Likert criteria, accuracy for binary ones; ε = 0.2 for
//!    experts, Benjamini–Yekutieli q = 0.05; needs at least three experts on the same responses);
//! 2. the judge's ICC(A,1) against single experts — every (expert rating, judge rating) pair of a
//!    response is one target of a two-rater design, so it answers "does the judge agree with an
//!    expert as well as experts agree with each other?" — with its McGraw & Wong 95% CI, placed
//!    against the expert band by the interval rule of [`verdict`];
//! 3. the judge's bias after prediction-powered inference (PPI++, Angelopoulos, Duchi & Zrnic
//!    2023): the judge-only mean over every response it scored minus the PPI++ mean (judge scores
//!    corrected by the expert-rated subset, per-response expert mean as the label), flagged when
//!    the judge-only mean lies outside the PPI++ 95% interval.
//!
//! The card says "can replace" only when the alt-test passes, the ICC is not below the band and no
//! bias is detected; any finding that cannot be computed is reported with its reason.
//!
//! Each finding and baseline says itself in English (`summary`, `rule`, `method`) and carries the
//! figures and reasons it was written from (`facts`, `complete_design`, `boundary`), so the window
//! says the same in the reader's language.
//!
//! **Leaderboard**, per judge × criterion × source (rated model): the judge-only mean (t interval),
//! the PPI++ mean and interval, and the expert-only mean over every expert-rated response of the
//! model (normal interval, as ppi-python's classical interval), so models can be ranked on the expert scale with valid intervals.

use super::data::AgreementData;
use crate::rubric::Scale;
use concord_stats::alttest::{alt_test, AlignmentMetric, AltTestOptions};
use concord_stats::icc::icc_all;
use concord_stats::ppi::{ppi_mean, PpiMean};
use concord_stats::reml::{reml_icc, BoundaryComponent, Rating, RemlIccForm};
use concord_stats::special::t_critical;
use serde::{Deserialize, Serialize};

/// Placement of a judge against the experts' own agreement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Inside,
    Below,
    Above,
}

/// How wide an expert band may be and still place a judge: an interval of an agreement
/// coefficient at least this wide spans (nearly) everything from no agreement to perfect
/// agreement — as when few responses were rated by two or more experts, and the band reads
/// 0.00–1.00 — so any judge's interval overlaps it and "inside" says nothing.
pub const UNINFORMATIVE_BAND_WIDTH: f64 = 0.9;

/// The fewest targets rated by two or more experts a band may rest on: an ICC over two targets
/// has a degenerate interval (a point such as 0.92–0.92, or 0–1), which would place every judge
/// "above" or "below" it by accident.
pub const MIN_BAND_OVERLAP: usize = 3;

/// Whether an expert band cannot place a judge: it is [`UNINFORMATIVE_BAND_WIDTH`] or more wide,
/// or rests on fewer than [`MIN_BAND_OVERLAP`] targets rated by two or more experts (`overlap`,
/// when known).
pub fn band_uninformative(band: [f64; 2], overlap: Option<usize>) -> bool {
    band[1] - band[0] >= UNINFORMATIVE_BAND_WIDTH || overlap.is_some_and(|n| n < MIN_BAND_OVERLAP)
}

/// The band a judge is placed against: `band`, unless it cannot place one
/// ([`band_uninformative`]).
pub fn placing_band(band: Option<[f64; 2]>, overlap: Option<usize>) -> Option<[f64; 2]> {
    band.filter(|b| !band_uninformative(*b, overlap))
}

/// Place an interval against a band; no verdict without both.
pub fn verdict(ci: [Option<f64>; 2], band: Option<[f64; 2]>) -> Option<Verdict> {
    let ([Some(lo), Some(hi)], Some([b_lo, b_hi])) = (ci, band) else {
        return None;
    };
    Some(if hi < b_lo {
        Verdict::Below
    } else if lo > b_hi {
        Verdict::Above
    } else {
        Verdict::Inside
    })
}

/// Settings of the verdicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct VerdictOptions {
    /// ε of the alt-test (0.2 for expert annotators).
    pub epsilon: f64,
    /// q of the Benjamini–Yekutieli procedure, and 1 − the confidence level of the intervals.
    pub alpha: f64,
}

impl Default for VerdictOptions {
    fn default() -> Self {
        VerdictOptions {
            epsilon: 0.2,
            alpha: 0.05,
        }
    }
}

/// The experts' agreement on one criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExpertBaseline {
    pub criterion: String,
    pub attribute: String,
    /// How it was computed, in words (model, design, what was used).
    pub method: String,
    pub n_responses: usize,
    pub n_experts: usize,
    pub n_ratings: usize,
    /// Responses rated by two or more experts (the overlap the band is estimated from).
    pub n_overlap: usize,
    pub icc_a1: Option<f64>,
    pub ci95_a1: [Option<f64>; 2],
    pub icc_c1: Option<f64>,
    pub ci95_c1: [Option<f64>; 2],
    /// Whether every expert rated every response (`None` when no baseline was computed).
    pub complete_design: Option<bool>,
    /// Variance components estimated at zero.
    pub boundary: Vec<ZeroVariance>,
    /// Why no baseline could be computed, when none was.
    pub note: Option<String>,
}

/// A variance component of the experts' REML fit estimated at zero (a boundary fit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ZeroVariance {
    /// Between responses.
    Response,
    /// Between experts.
    Expert,
}

impl ZeroVariance {
    /// The component in words.
    pub fn text(self) -> &'static str {
        match self {
            ZeroVariance::Response => "response variance at 0",
            ZeroVariance::Expert => "expert variance at 0",
        }
    }
}

/// The alt-test as a card shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AltTestFinding {
    pub winning_rate: f64,
    pub advantage_probability: f64,
    pub passed: bool,
    /// Experts tested (left out in turn).
    pub n_experts: usize,
    /// `accuracy` or `neg_rmse`.
    pub metric: String,
}

/// One finding of a card: a value, whether it supports replacing the experts, the rule and the
/// source of the method.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Finding {
    /// `true` supports replacement, `false` argues against, `None` not computable.
    pub ok: Option<bool>,
    /// The result in words ("ω = 0.80, ρ = 0.91: passed").
    pub summary: String,
    pub rule: String,
    pub citation: String,
    /// What `summary` and `rule` are written from.
    pub facts: FindingFacts,
}

/// The figures, settings and reasons a finding is written from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FindingFacts {
    /// The Alternative Annotator Test: its ε and q, the alignment metric (`accuracy` or
    /// `neg_rmse`), and its result or why there is none.
    AltTest {
        epsilon: f64,
        alpha: f64,
        metric: String,
        result: Option<AltTestFinding>,
        not_computed: Option<NotComputed>,
    },
    /// The judge's ICC(A,1) over its (expert, judge) pairs against the expert band.
    IccBand {
        icc: Option<f64>,
        ci95: [Option<f64>; 2],
        pairs: usize,
        band: Option<[f64; 2]>,
        verdict: Option<Verdict>,
        /// The band cannot place the judge ([`band_uninformative`]): no verdict.
        band_uninformative: bool,
        /// Responses rated by two or more experts.
        overlap: usize,
    },
    /// The judge-only mean against the PPI++ mean and its interval.
    PpiBias {
        judge_mean: Option<f64>,
        ppi_mean: Option<f64>,
        ci95: [Option<f64>; 2],
        lambda: Option<f64>,
        n_labeled: usize,
        n_unlabeled: usize,
        /// Judge-only mean − PPI++ mean.
        bias: Option<f64>,
        /// Whether the judge-only mean lies outside the PPI++ interval (`None`: not computed).
        detected: Option<bool>,
    },
}

/// Why the alt-test could not run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum NotComputed {
    /// Fewer than three experts rated the same responses.
    TooFewExperts { experts: usize },
    /// No expert has enough responses shared with the judge and another expert.
    TooFewItems { min: usize, most: usize },
    /// Any other reason, in English.
    Other { message: String },
}

impl From<&concord_stats::alttest::AltTestError> for NotComputed {
    fn from(e: &concord_stats::alttest::AltTestError) -> Self {
        use concord_stats::alttest::AltTestError;
        match e {
            AltTestError::TooFewAnnotators(n) => NotComputed::TooFewExperts { experts: *n },
            AltTestError::TooFewItems { min, most } => NotComputed::TooFewItems {
                min: *min,
                most: *most,
            },
            other => NotComputed::Other {
                message: other.to_string(),
            },
        }
    }
}

/// The verdict card of one judge on one criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct VerdictCard {
    /// The judge's model id (or name).
    pub judge: String,
    pub criterion: String,
    pub attribute: String,
    /// `true` only when every finding supports replacement.
    pub can_replace: bool,
    pub alt_test: Option<AltTestFinding>,
    pub alt_test_finding: Finding,
    /// ICC(A,1) of (expert, judge) pairs and its 95% CI.
    pub icc_a1: Option<f64>,
    pub icc_ci95: [Option<f64>; 2],
    pub band: Option<[f64; 2]>,
    pub band_verdict: Option<Verdict>,
    pub icc_finding: Finding,
    /// Judge-only mean minus PPI++ mean over all the judge's responses.
    pub ppi_bias: Option<f64>,
    pub ppi_finding: Finding,
}

/// Why a leaderboard row has no PPI++ mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum PpiMissing {
    /// None of the responses the judge scored has an expert rating: nothing to correct the
    /// judge's scores with.
    NoExpertRated,
    /// Every response the judge scored is expert-rated: there are no judge-only responses for
    /// PPI++ to add, and the experts' own mean (its column) is the estimate.
    NoJudgeOnly,
}

/// One model on one criterion as judged by one judge.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LeaderboardRow {
    pub judge: String,
    pub criterion: String,
    pub attribute: String,
    /// The rated model (source) name.
    pub source: String,
    pub n_judged: usize,
    pub n_expert: usize,
    pub judge_mean: Option<f64>,
    pub judge_ci95: [Option<f64>; 2],
    pub ppi_mean: Option<f64>,
    pub ppi_ci95: [Option<f64>; 2],
    pub ppi_lambda: Option<f64>,
    /// Why there is no PPI++ mean, when there is none.
    pub ppi_missing: Option<PpiMissing>,
    pub expert_mean: Option<f64>,
    pub expert_ci95: [Option<f64>; 2],
}

/// Baselines, cards and leaderboard of one rubric.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct VerdictReport {
    pub options: VerdictOptions,
    pub baselines: Vec<ExpertBaseline>,
    pub cards: Vec<VerdictCard>,
    pub leaderboard: Vec<LeaderboardRow>,
}

const ALT_TEST_CITATION: &str =
    "Calderon, Reichart & Dror (2025), The Alternative Annotator Test for LLM-as-a-Judge, ACL";
const ICC_CITATION: &str = "McGraw & Wong (1996); expert baseline by REML variance components as lme4 (Bates et al. 2015), profile-likelihood interval";
const PPI_CITATION: &str =
    "Angelopoulos, Duchi & Zrnic (2023), PPI++: Efficient Prediction-Powered Inference";

fn judge_name(data: &AgreementData, r: usize) -> String {
    data.raters[r]
        .model_id
        .clone()
        .unwrap_or_else(|| data.raters[r].name.clone())
}

fn present(v: f64) -> Option<f64> {
    (!v.is_nan()).then_some(v)
}

/// Per response, the mean of the experts who rated it.
fn expert_means(data: &AgreementData, experts: &[usize], c: usize) -> Vec<Option<f64>> {
    (0..data.responses.len())
        .map(|i| {
            let vals: Vec<f64> = experts
                .iter()
                .filter_map(|&e| present(data.series(e, c)[i]))
                .collect();
            (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
        })
        .collect()
}

fn baseline(data: &AgreementData, experts: &[usize], c: usize) -> ExpertBaseline {
    let crit = &data.criteria[c];
    let mut ratings = Vec::new();
    for (j, &e) in experts.iter().enumerate() {
        for (i, v) in data.series(e, c).iter().enumerate() {
            if let Some(score) = present(*v) {
                ratings.push(Rating {
                    target: i,
                    rater: j,
                    score,
                });
            }
        }
    }
    let mut out = ExpertBaseline {
        criterion: crit.key.clone(),
        attribute: crit.label.clone(),
        method: String::new(),
        n_responses: 0,
        n_experts: 0,
        n_ratings: ratings.len(),
        n_overlap: {
            let mut per_target: std::collections::HashMap<usize, usize> =
                std::collections::HashMap::new();
            for r in &ratings {
                *per_target.entry(r.target).or_default() += 1;
            }
            per_target.values().filter(|n| **n >= 2).count()
        },
        icc_a1: None,
        ci95_a1: [None, None],
        icc_c1: None,
        ci95_c1: [None, None],
        complete_design: None,
        boundary: Vec::new(),
        note: None,
    };
    match reml_icc(&ratings) {
        Ok(fit) => {
            out.n_responses = fit.n_targets;
            out.n_experts = fit.n_raters;
            let complete = fit.n_ratings == fit.n_targets * fit.n_raters;
            out.complete_design = Some(complete);
            out.method = format!(
                "REML variance components of score ~ 1 + (1|response) + (1|expert) over all {} expert ratings of {} responses by {} experts ({} design); profile-likelihood 95% CI",
                fit.n_ratings,
                fit.n_targets,
                fit.n_raters,
                if complete { "complete" } else { "incomplete" }
            );
            for e in &fit.icc {
                match e.form {
                    RemlIccForm::Icc2 => {
                        out.icc_a1 = Some(e.icc);
                        out.ci95_a1 = e.ci95;
                    }
                    RemlIccForm::Icc3 => {
                        out.icc_c1 = Some(e.icc);
                        out.ci95_c1 = e.ci95;
                    }
                    RemlIccForm::Icc1 => {}
                }
            }
            out.boundary = fit
                .boundary
                .iter()
                .filter(|b| **b != BoundaryComponent::TargetOneWay)
                .map(|b| match b {
                    BoundaryComponent::Target => ZeroVariance::Response,
                    _ => ZeroVariance::Expert,
                })
                .collect();
        }
        Err(e) => {
            out.method = "REML variance components (not computable)".into();
            out.note = Some(e.to_string());
        }
    }
    out
}

fn alt_finding(
    data: &AgreementData,
    experts: &[usize],
    judge: usize,
    c: usize,
    options: &VerdictOptions,
) -> (Option<AltTestFinding>, Finding) {
    let n = data.responses.len();
    let binary = data.criteria[c].scale == Scale::Binary;
    let metric = if binary {
        AlignmentMetric::Accuracy
    } else {
        AlignmentMetric::NegRmse
    };
    let mut humans = Vec::with_capacity(n * experts.len());
    for i in 0..n {
        humans.extend(experts.iter().map(|&e| present(data.series(e, c)[i])));
    }
    let judge_labels: Vec<Option<f64>> =
        data.series(judge, c).iter().map(|v| present(*v)).collect();
    let alt_options = AltTestOptions {
        epsilon: options.epsilon,
        alpha: options.alpha,
        metric,
        ..AltTestOptions::default()
    };
    let rule = format!(
        "Leave each expert out; the judge wins against that expert when a one-sided t-test rejects ρ_expert − ρ_judge ≥ ε = {} after Benjamini–Yekutieli correction at q = {}; passes when it wins against at least half the experts (ω ≥ 0.5). Alignment: {}.",
        options.epsilon,
        options.alpha,
        if binary { "accuracy" } else { "negative RMSE" }
    );
    let metric = if binary { "accuracy" } else { "neg_rmse" };
    let facts =
        |result: Option<AltTestFinding>, not_computed: Option<NotComputed>| FindingFacts::AltTest {
            epsilon: options.epsilon,
            alpha: options.alpha,
            metric: metric.into(),
            result,
            not_computed,
        };
    match alt_test(&humans, n, experts.len(), &judge_labels, &alt_options) {
        Ok(r) => {
            let found = AltTestFinding {
                winning_rate: r.winning_rate,
                advantage_probability: r.advantage_probability,
                passed: r.passed,
                n_experts: r.annotators.len(),
                metric: metric.into(),
            };
            let summary = format!(
                "ω = {:.2}, ρ = {:.2} over {} experts: {}",
                r.winning_rate,
                r.advantage_probability,
                r.annotators.len(),
                if r.passed { "passed" } else { "failed" }
            );
            (
                Some(found.clone()),
                Finding {
                    ok: Some(r.passed),
                    summary,
                    rule,
                    citation: ALT_TEST_CITATION.into(),
                    facts: facts(Some(found), None),
                },
            )
        }
        Err(e) => (
            None,
            Finding {
                ok: None,
                summary: format!("not computed: {e}"),
                rule,
                citation: ALT_TEST_CITATION.into(),
                facts: facts(None, Some(NotComputed::from(&e))),
            },
        ),
    }
}

fn icc_finding(
    data: &AgreementData,
    experts: &[usize],
    judge: usize,
    c: usize,
    base: &ExpertBaseline,
) -> IccOutcome {
    let j = data.series(judge, c);
    let mut matrix = Vec::new();
    for &e in experts {
        for (i, v) in data.series(e, c).iter().enumerate() {
            if let (Some(x), Some(y)) = (present(*v), present(j[i])) {
                matrix.push(x);
                matrix.push(y);
            }
        }
    }
    let pairs = matrix.len() / 2;
    let (icc, ci) = match icc_all(&matrix, pairs, 2) {
        Ok(t) => {
            let e = t.get(concord_stats::icc::IccForm::Icc2);
            (e.value, e.ci95)
        }
        Err(_) => (None, [None, None]),
    };
    let band = match base.ci95_a1 {
        [Some(lo), Some(hi)] => Some([lo, hi]),
        _ => None,
    };
    let overlap = Some(base.n_overlap);
    let v = verdict(ci, placing_band(band, overlap));
    let too_wide = band.is_some_and(|b| band_uninformative(b, overlap));
    let rule = format!("The judge's ICC(A,1) over every (expert, judge) rating pair, with its McGraw & Wong 95% CI, against the expert band (the 95% CI of the experts' REML ICC(A,1)): below when the whole CI lies under the band, above when over it, inside when they overlap. Not below supports replacement. A band {UNINFORMATIVE_BAND_WIDTH} or more wide, or resting on fewer than {MIN_BAND_OVERLAP} responses rated by two or more experts, places no judge.");
    let show = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.2}"));
    let summary = match (icc, band, v) {
        (Some(i), Some(b), None) if too_wide => format!(
            "ICC(A,1) = {:.2} [{}, {}] over {pairs} pairs; the expert band [{:.2}, {:.2}] cannot place the judge (only {} responses rated by two or more experts)",
            i,
            show(ci[0]),
            show(ci[1]),
            b[0],
            b[1],
            base.n_overlap
        ),
        (Some(i), Some(b), Some(v)) => format!(
            "ICC(A,1) = {:.2} [{}, {}] over {pairs} pairs; expert band [{:.2}, {:.2}]: {}",
            i,
            show(ci[0]),
            show(ci[1]),
            b[0],
            b[1],
            match v {
                Verdict::Below => "below",
                Verdict::Inside => "inside",
                Verdict::Above => "above",
            }
        ),
        (Some(i), None, _) => format!(
            "ICC(A,1) = {i:.2} over {pairs} pairs; no expert band ({})",
            base.note
                .as_deref()
                .unwrap_or("the baseline has no interval")
        ),
        _ => format!("not computed: {pairs} (expert, judge) pairs"),
    };
    let ok = v.map(|v| v != Verdict::Below);
    IccOutcome {
        icc,
        ci,
        band,
        verdict: v,
        finding: Finding {
            ok,
            summary,
            rule,
            citation: ICC_CITATION.into(),
            facts: FindingFacts::IccBand {
                icc,
                ci95: ci,
                pairs,
                band,
                verdict: v,
                band_uninformative: too_wide,
                overlap: base.n_overlap,
            },
        },
    }
}

/// The judge's ICC placed against the expert band.
struct IccOutcome {
    icc: Option<f64>,
    ci: [Option<f64>; 2],
    band: Option<[f64; 2]>,
    verdict: Option<Verdict>,
    finding: Finding,
}

/// Judge-only mean with its t interval.
fn mean_t(x: &[f64], alpha: f64) -> (Option<f64>, [Option<f64>; 2]) {
    let n = x.len();
    if n == 0 {
        return (None, [None, None]);
    }
    let m = x.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (Some(m), [None, None]);
    }
    let sd = (x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1) as f64).sqrt();
    let half = t_critical(alpha, (n - 1) as f64).map(|t| t * sd / (n as f64).sqrt());
    (Some(m), [half.map(|h| m - h), half.map(|h| m + h)])
}

/// The PPI++ inputs of a judge on a criterion, restricted to responses of `source` (all when None).
fn ppi_inputs(
    data: &AgreementData,
    reference: &[Option<f64>],
    judge: usize,
    c: usize,
    source: Option<usize>,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let j = data.series(judge, c);
    let (mut y, mut yh, mut yu) = (Vec::new(), Vec::new(), Vec::new());
    for (i, r) in data.responses.iter().enumerate() {
        if source.is_some_and(|s| s != r.source) {
            continue;
        }
        let Some(score) = present(j[i]) else {
            continue;
        };
        match reference[i] {
            Some(e) => {
                y.push(e);
                yh.push(score);
            }
            None => yu.push(score),
        }
    }
    (y, yh, yu)
}

/// The experts' REML baseline of every criterion of the data.
pub fn expert_baselines(data: &AgreementData) -> Vec<ExpertBaseline> {
    let experts = data.experts();
    (0..data.criteria.len())
        .map(|c| baseline(data, &experts, c))
        .collect()
}

/// Baselines, cards and leaderboard for every judge × non-group criterion of the data.
pub fn judge_verdicts(data: &AgreementData, options: &VerdictOptions) -> VerdictReport {
    let parts: Vec<CriterionVerdicts> = (0..data.criteria.len())
        .map(|c| criterion_verdicts(data, c, options))
        .collect();
    assemble_verdicts(options, &parts)
}

/// The verdicts of one criterion: its expert baseline, its cards and its leaderboard rows. Each
/// depends on that criterion's values only, so a new rating changes one criterion's part.
#[derive(Debug, Clone, PartialEq)]
pub struct CriterionVerdicts {
    pub baseline: ExpertBaseline,
    pub cards: Vec<VerdictCard>,
    pub leaderboard: Vec<LeaderboardRow>,
}

/// The report from every criterion's part, in criterion order (as [`judge_verdicts`] gives it).
pub fn assemble_verdicts(options: &VerdictOptions, parts: &[CriterionVerdicts]) -> VerdictReport {
    VerdictReport {
        options: options.clone(),
        baselines: parts.iter().map(|p| p.baseline.clone()).collect(),
        cards: parts.iter().flat_map(|p| p.cards.iter().cloned()).collect(),
        leaderboard: parts
            .iter()
            .flat_map(|p| p.leaderboard.iter().cloned())
            .collect(),
    }
}

/// The baseline, cards and leaderboard rows of criterion `c`: the experts' baseline and mean per
/// response, then for every judge that scored the criterion its card and its rows per source.
pub fn criterion_verdicts(
    data: &AgreementData,
    c: usize,
    options: &VerdictOptions,
) -> CriterionVerdicts {
    let experts = data.experts();
    let judges = data.judges();
    let mut cards = Vec::new();
    let mut leaderboard = Vec::new();
    let base = baseline(data, &experts, c);
    let reference = expert_means(data, &experts, c);
    let criterion = OneCriterion {
        data,
        experts: &experts,
        base: &base,
        reference: &reference,
        c,
        options,
    };
    for &judge in &judges {
        if data.series(judge, c).iter().all(|v| v.is_nan()) {
            continue;
        }
        let name = judge_name(data, judge);
        cards.push(criterion.card(judge, name.clone()));
        criterion.leaderboard_rows(judge, &name, &mut leaderboard);
    }
    CriterionVerdicts {
        baseline: base,
        cards,
        leaderboard,
    }
}

/// What every judge's verdicts on one criterion share: the experts, their baseline and their
/// mean per response (the reference).
struct OneCriterion<'a> {
    data: &'a AgreementData,
    experts: &'a [usize],
    base: &'a ExpertBaseline,
    reference: &'a [Option<f64>],
    c: usize,
    options: &'a VerdictOptions,
}

impl OneCriterion<'_> {
    /// The judge's card: the alt-test, the ICC against the experts' band and the PPI++ bias, and
    /// whether all three allow the judge to replace the experts.
    fn card(&self, judge: usize, name: String) -> VerdictCard {
        let (data, c, options) = (self.data, self.c, self.options);
        let (alt, alt_f) = alt_finding(data, self.experts, judge, c, options);
        let IccOutcome {
            icc,
            ci: icc_ci,
            band,
            verdict: band_verdict,
            finding: icc_f,
        } = icc_finding(data, self.experts, judge, c, self.base);
        let (y, yh, yu) = ppi_inputs(data, self.reference, judge, c, None);
        let all_judge: Vec<f64> = yh.iter().chain(&yu).copied().collect();
        let (judge_mean, _) = mean_t(&all_judge, options.alpha);
        let mut ppi = ppi_mean(&y, &yh, &yu, options.alpha);
        // Every scored response also expert-rated: PPI++ reduces to the expert mean.
        let all_labeled = ppi.estimate.is_none() && ppi.n_unlabeled == 0 && ppi.n_labeled > 1;
        if all_labeled {
            ppi.estimate = ppi.classical_estimate;
            ppi.ci = ppi.classical_ci;
            ppi.lambda = Some(0.0);
        }
        let ppi_bias = judge_mean.zip(ppi.estimate).map(|(j, p)| j - p);
        let ppi_f = ppi_finding(judge_mean, &ppi);
        let can_replace = [alt_f.ok, icc_f.ok, ppi_f.ok]
            .iter()
            .all(|ok| *ok == Some(true));
        VerdictCard {
            judge: name,
            criterion: data.criteria[c].key.clone(),
            attribute: data.criteria[c].label.clone(),
            can_replace,
            alt_test: alt,
            alt_test_finding: alt_f,
            icc_a1: icc,
            icc_ci95: icc_ci,
            band,
            band_verdict,
            icc_finding: icc_f,
            ppi_bias,
            ppi_finding: ppi_f,
        }
    }

    /// The judge's leaderboard rows, one per source it scored: its own mean, the PPI++ mean and
    /// the experts' mean over every expert-rated response of the source.
    fn leaderboard_rows(&self, judge: usize, name: &str, leaderboard: &mut Vec<LeaderboardRow>) {
        let (data, c, options) = (self.data, self.c, self.options);
        for (s, source) in data.sources.iter().enumerate() {
            let (y, yh, yu) = ppi_inputs(data, self.reference, judge, c, Some(s));
            if yh.is_empty() && yu.is_empty() {
                continue;
            }
            let all_judge: Vec<f64> = yh.iter().chain(&yu).copied().collect();
            let (judge_mean, judge_ci95) = mean_t(&all_judge, options.alpha);
            let p = ppi_mean(&y, &yh, &yu, options.alpha);
            // Expert-only: every expert-rated response of the source, scored by the judge or not.
            let expert_all: Vec<f64> = data
                .responses
                .iter()
                .zip(self.reference)
                .filter(|(r, _)| r.source == s)
                .filter_map(|(_, e)| *e)
                .collect();
            let classical = ppi_mean(&expert_all, &expert_all, &[], options.alpha);
            leaderboard.push(LeaderboardRow {
                judge: name.to_string(),
                criterion: data.criteria[c].key.clone(),
                attribute: data.criteria[c].label.clone(),
                source: source.name.clone(),
                n_judged: all_judge.len(),
                n_expert: expert_all.len(),
                judge_mean,
                judge_ci95,
                ppi_mean: p.estimate,
                ppi_ci95: p.ci,
                ppi_lambda: p.lambda,
                ppi_missing: match (p.estimate, p.n_labeled, p.n_unlabeled) {
                    (Some(_), _, _) => None,
                    (None, 0, _) => Some(PpiMissing::NoExpertRated),
                    (None, _, _) => Some(PpiMissing::NoJudgeOnly),
                },
                expert_mean: classical.classical_estimate,
                expert_ci95: classical.classical_ci,
            });
        }
    }
}

/// The PPI++ bias finding: detected when the judge-only mean lies outside the PPI++ 95% interval
/// (not computed without both expert-rated and judge-only responses).
fn ppi_finding(judge_mean: Option<f64>, ppi: &PpiMean) -> Finding {
    let ppi_rule = "Bias = judge-only mean over all responses it scored − PPI++ mean (judge scores corrected by the expert-rated subset, power-tuned λ; the expert mean when every scored response is expert-rated). Detected when the judge-only mean lies outside the PPI++ 95% CI.".to_string();
    let facts = FindingFacts::PpiBias {
        judge_mean,
        ppi_mean: ppi.estimate,
        ci95: ppi.ci,
        lambda: ppi.lambda,
        n_labeled: ppi.n_labeled,
        n_unlabeled: ppi.n_unlabeled,
        bias: judge_mean.zip(ppi.estimate).map(|(j, p)| j - p),
        detected: match (judge_mean, ppi.ci) {
            (Some(jm), [Some(lo), Some(hi)]) if ppi.estimate.is_some() => {
                Some(!(lo..=hi).contains(&jm))
            }
            _ => None,
        },
    };
    match (judge_mean, ppi.estimate, ppi.ci) {
        (Some(jm), Some(p), [Some(lo), Some(hi)]) => {
            let inside = (lo..=hi).contains(&jm);
            Finding {
                ok: Some(inside),
                summary: format!(
                    "judge-only mean {jm:.2} vs PPI++ {p:.2} [{lo:.2}, {hi:.2}] (λ = {:.2}, {} expert-rated, {} judge-only): bias {:+.2}, {}",
                    ppi.lambda.unwrap_or(f64::NAN),
                    ppi.n_labeled,
                    ppi.n_unlabeled,
                    jm - p,
                    if inside { "not detected" } else { "detected" }
                ),
                rule: ppi_rule,
                citation: PPI_CITATION.into(),
                facts,
            }
        }
        _ => Finding {
            ok: None,
            summary: format!(
                "not computed: {} expert-rated and {} judge-only responses (PPI++ needs both)",
                ppi.n_labeled, ppi.n_unlabeled
            ),
            rule: ppi_rule,
            citation: PPI_CITATION.into(),
            facts,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_intervals() {
        let band = Some([0.6, 0.8]);
        assert_eq!(
            verdict([Some(0.1), Some(0.5)], band),
            Some(Verdict::Below),
            "whole CI under the band"
        );
        assert_eq!(
            verdict([Some(0.85), Some(0.95)], band),
            Some(Verdict::Above),
            "whole CI over it"
        );
        assert_eq!(
            verdict([Some(0.5), Some(0.65)], band),
            Some(Verdict::Inside),
            "overlap is inside"
        );
        assert_eq!(
            verdict([None, Some(0.65)], band),
            None,
            "no interval, no verdict"
        );
        assert_eq!(
            verdict([Some(0.5), Some(0.65)], None),
            None,
            "no experts' band, no verdict"
        );
    }
}
