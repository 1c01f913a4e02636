//! The methods appendix that recomputes itself: beside a study, a directory with the agreement
//! table, every rating as the long CSV, the rubric's structure and the options (`study.json`), a
//! methods paragraph naming the ICC form and why, the interval methods, the software version and
//! the options, and a Python script (`recompute.py`) that recomputes every number of the table
//! from the ratings with public packages (pingouin, numpy) and fails unless all agree to 1e-6.
//!
//! The appendix's table uses McGraw & Wong's F-based intervals: they are deterministic, so a
//! reader's software reproduces them exactly, while the panel's headline percentile bootstrap
//! depends on the random stream (its seed and resamples are stated in the paragraph).
//!
//! The judges' reliability across repetitions has a table of its own (`judge_reliability.csv`,
//! per judge × criterion: repetitions, Krippendorff's α across them with its bootstrap CI, the
//! single-repetition reliability and the repetitions the target needs, ECE and Brier for binary
//! criteria, the length-bias slope with its CI), computed as `concord judge reliability` computes
//! it, and every repetition it reads (`judge_repetitions.csv`, with each response's length and
//! any expected score from log-probabilities). `recompute.py` recomputes that table from those
//! files and `ratings.csv` with krippendorff, statsmodels, pingouin and numpy; α's bootstrap
//! interval depends on the random stream, so the script checks it against a bootstrap of its own
//! within a stated Monte Carlo tolerance, and every other number to 1e-6.
//!
//! A study with pairwise verdicts on the appendix rubric's pairwise form (`mentalbench` →
//! `mentalbench-pairs`) gets three more tables, as `concord agreement --pairwise` computes them:
//! `pairwise.csv` (per rater group — the experts pooled, each judge — criterion and source: the
//! Bradley–Terry strength with its cluster-bootstrap interval, rank, wins and win rate, Davidson's
//! tie parameter, or why no fit exists), `pairwise_position.csv` (per judge and criterion: position
//! consistency with its Wilson interval, P(the answer shown first wins) with its exact interval and
//! binomial test) and `pairwise_agreement.csv` (percent agreement and Cohen's κ on preferences,
//! experts with each other and each judge with the experts). `recompute.py` refits every strength
//! from the pair rows of `ratings.csv` with scipy and checks it, the win rates and every position
//! and agreement figure to 1e-6; the strengths' bootstrap intervals against a bootstrap of its own
//! within a stated Monte Carlo tolerance. A study without pairs writes the three headers only.
//!
//! A rubric of conversations (a session rubric, or a reply rubric whose items are all replies of
//! transcripts) has its table at item level — each rated item a target, the judge against the experts' mean on it — since a
//! transcript's replies come from one or a few sources. A reply rubric over transcripts gets one
//! more table, `agreement_by_turn.csv` ([`BY_TURN_HEADER`]): per judge and criterion the
//! item-level figures over all turns and at each turn number, with the conversation-cluster
//! bootstrap interval of ICC(C,1) (a turn with too few items gives its reason), and its
//! `recompute.py` gains the part that recomputes them ([`RECOMPUTE_TURNS_PART`]): the point
//! estimates with pingouin and numpy to 1e-6, the intervals by a cluster bootstrap of its own
//! (numpy's generator cannot draw ChaCha8's stream) within a Monte Carlo tolerance it measures
//! from ten batches of its own draws (five standard deviations of one bootstrap's end).
//!
//! The reviewer's questions add six files (`outputs::reviewer_tables`): the judges' corrected
//! prevalence, the study's G-studies, the Dawid–Skene fits with the adjudicated values they hold,
//! and the agreement table per conversation category with the categories; `recompute.py`
//! recomputes them with the prevalence paper's formulas, numpy and scipy's REML, crowd-kit and
//! pingouin.

use crate::files::output::{self, Destination, OutputError};
use crate::outputs::export::write_long_csv;
use crate::outputs::export::CsvOptions;
use crate::outputs::export::ExportError;
use crate::panel::agreement::AgreementData;
use crate::panel::agreement::AgreementOptions;
use crate::panel::agreement::Comparison;
use crate::panel::agreement::Level;
use crate::panel::agreement_table::render;
use crate::panel::agreement_table::AgreementTable;
use crate::panel::agreement_table::CiChoice;
use crate::panel::agreement_table::IccChoice;
use crate::panel::agreement_table::TableFormat;
use crate::panel::agreement_table::TableView;
use crate::panel::judge_reliability::{
    judge_reliability, repetition_records, JudgeReliability, ReliabilityOptions,
};
use crate::panel::pairwise::{
    pairwise_report, PairwiseOptions, PairwiseReport, PairwiseReportError,
};
use crate::store::{RaterKind, Store, StoreError};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The recomputation script written into every appendix.
pub const RECOMPUTE_SCRIPT: &str = include_str!("methods/recompute.py");

/// What an appendix with `agreement_by_turn.csv` adds to [`RECOMPUTE_SCRIPT`], in place of its
/// last lines (the call of `main`): the by-turn check and a call of both.
pub const RECOMPUTE_TURNS_PART: &str = include_str!("methods/recompute_turns.py");

/// What an appendix with span tables adds, after the by-turn part's functions when there is one:
/// the span check and an entry point that runs every check the script holds.
pub const RECOMPUTE_SPANS_PART: &str = include_str!("methods/recompute_spans.py");

/// The line [`RECOMPUTE_TURNS_PART`] takes the place of, and everything after it.
const SCRIPT_ENTRY: &str = "\nif __name__ == \"__main__\":";

/// The script of an appendix: [`RECOMPUTE_SCRIPT`] itself, or with a by-turn table, the same
/// script up to its entry point followed by [`RECOMPUTE_TURNS_PART`].
pub fn recompute_script(by_turn: bool) -> String {
    match (by_turn, RECOMPUTE_SCRIPT.rfind(SCRIPT_ENTRY)) {
        (true, Some(cut)) => format!("{}{RECOMPUTE_TURNS_PART}", &RECOMPUTE_SCRIPT[..=cut]),
        _ => RECOMPUTE_SCRIPT.to_string(),
    }
}

/// The script of an appendix with span tables: [`recompute_script`] up to its entry point, then
/// [`RECOMPUTE_SPANS_PART`] (whose entry point also runs the by-turn check when it is there).
pub fn recompute_script_with_spans(by_turn: bool) -> String {
    let script = recompute_script(by_turn);
    match script.rfind(SCRIPT_ENTRY) {
        Some(cut) => format!("{}{RECOMPUTE_SPANS_PART}", &script[..=cut]),
        None => script,
    }
}

/// Header of `agreement_by_turn.csv`: one line per judge × criterion over all turns (`turn`
/// empty) and at each turn, or one line per turn without figures (`not_computed` says why).
pub const BY_TURN_HEADER: [&str; 19] = [
    "rubric",
    "turn",
    "rater",
    "criterion",
    "attribute",
    "n_targets",
    "n_pairs",
    "n_conversations",
    "icc_c1",
    "icc_a1",
    "bias",
    "mse",
    "ci_low",
    "ci_high",
    "ci_method",
    "resamples",
    "resamples_kept",
    "seed",
    "not_computed",
];

/// The figures of `agreement_by_turn.csv`, when the appendix rubric is a reply rubric over
/// transcripts: the item-level report over all turns and the report split by turn, computed with
/// `options` at item level.
pub struct ByTurnFigures {
    pub overall: crate::panel::agreement::AgreementReport,
    pub split: crate::panel::strata::StratifiedReport,
}

/// The by-turn figures of the appendix rubric, `None` unless it rates replies of transcripts.
pub fn appendix_by_turn(
    store: &Store,
    options: &AgreementOptions,
) -> Result<Option<ByTurnFigures>, MethodsError> {
    use crate::panel::agreement::ReferencedData;
    use crate::panel::strata::{by_facet, Facet};
    let data = AgreementData::load_compared(store, &options.rubric)?;
    if !data.over_transcripts() {
        return Ok(None);
    }
    let options = by_turn_options(options);
    let data = ReferencedData::experts(data);
    let overall = data.report(&options);
    let split = by_facet(store, &data, Facet::Turn, &options)?;
    Ok(Some(ByTurnFigures { overall, split }))
}

/// The options the by-turn table is computed with: the appendix's seed and resamples, item
/// level, judges against the experts' mean, attribute groups as the appendix has them.
fn by_turn_options(options: &AgreementOptions) -> AgreementOptions {
    AgreementOptions {
        levels: vec![Level::Item],
        per_expert: false,
        ..options.clone()
    }
}

/// What every line of `agreement_by_turn.csv` repeats: the rubric and the options.
struct ByTurnLine<'a> {
    rubric: &'a str,
    options: &'a AgreementOptions,
}

impl ByTurnLine<'_> {
    /// One line per judge-versus-experts item-level cell of `report`, at `turn` (empty: all).
    fn cells(
        &self,
        w: &mut csv::Writer<Vec<u8>>,
        turn: &str,
        report: &crate::panel::agreement::AgreementReport,
        conversations: Option<usize>,
    ) -> Result<(), MethodsError> {
        use crate::base::cell::neutralise;
        use crate::panel::agreement::CiMethod;
        for c in report
            .cells
            .iter()
            .filter(|c| c.comparison == Comparison::JudgeVsExperts && c.level == Level::Item)
        {
            w.write_record([
                self.rubric.to_string(),
                turn.to_string(),
                neutralise(&c.rater).into_owned(),
                neutralise(&c.criterion).into_owned(),
                neutralise(&c.attribute).into_owned(),
                c.n_targets.to_string(),
                c.n_pairs.to_string(),
                c.n_clusters.or(conversations).unwrap_or(0).to_string(),
                figure(c.icc_c1),
                figure(c.icc_a1),
                figure(c.bias),
                figure(c.mse),
                figure(c.ci95[0]),
                figure(c.ci95[1]),
                match c.ci_method {
                    CiMethod::Cluster => "cluster bootstrap",
                    CiMethod::Bootstrap => "bootstrap",
                    CiMethod::F => "F",
                }
                .to_string(),
                self.options.resamples.to_string(),
                c.bootstrap_kept.to_string(),
                self.options.seed.to_string(),
                String::new(),
            ])?;
        }
        Ok(())
    }
}

/// `agreement_by_turn.csv` of `figures`.
pub fn by_turn_table(
    options: &AgreementOptions,
    figures: &ByTurnFigures,
) -> Result<Vec<u8>, MethodsError> {
    use crate::base::cell::neutralise;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(BY_TURN_HEADER)?;
    let rubric = neutralise(&options.rubric).into_owned();
    let overall_conversations = figures
        .overall
        .conversations
        .as_ref()
        .map(|c| c.conversations);
    let line = ByTurnLine {
        rubric: &rubric,
        options,
    };
    line.cells(&mut w, "", &figures.overall, overall_conversations)?;
    for stratum in &figures.split.strata {
        let turn = stratum.value.clone().unwrap_or_default();
        match &stratum.report {
            Some(report) => line.cells(&mut w, &turn, report, stratum.n_conversations)?,
            None => {
                let mut row = vec![rubric.clone(), turn];
                row.extend(std::iter::repeat_n(String::new(), 3));
                row.push(stratum.n_compared.to_string());
                row.push(String::new());
                row.push(stratum.n_conversations.unwrap_or(0).to_string());
                row.extend(std::iter::repeat_n(String::new(), 7));
                row.push(options.resamples.to_string());
                row.push(String::new());
                row.push(options.seed.to_string());
                row.push(neutralise(stratum.not_computed.as_deref().unwrap_or("")).into_owned());
                w.write_record(&row)?;
            }
        }
    }
    w.into_inner()
        .map_err(|e| MethodsError::Csv(csv::Error::from(e.into_error())))
}

/// Why an appendix could not be written.
#[derive(Debug, Error)]
pub enum MethodsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error("cannot encode study.json: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Phi(#[from] crate::guard::phi::review::PhiError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error("cannot write the judge reliability table: {0}")]
    Csv(#[from] csv::Error),
    #[error(transparent)]
    Adjudication(#[from] crate::panel::adjudication::AdjudicationError),
    #[error("cannot compute the span tables: {0}")]
    Spans(String),
}

/// What the appendix's judge reliability table is computed with: the report's defaults (seed 42,
/// 1,000 resamples, 10 bins, target 0.80, the study's aggregate) on the appendix's rubric.
pub fn reliability_options(rubric: &str) -> ReliabilityOptions {
    ReliabilityOptions {
        rubric: Some(rubric.to_string()),
        ..ReliabilityOptions::default()
    }
}

/// Header of `judge_reliability.csv`.
pub const RELIABILITY_HEADER: [&str; 21] = [
    "rubric",
    "judge",
    "criterion",
    "scale",
    "aggregate",
    "repetitions",
    "n_responses",
    "alpha_metric",
    "alpha",
    "alpha_ci_low",
    "alpha_ci_high",
    "single_repetition_reliability",
    "target_reliability",
    "repetitions_for_target",
    "n_compared",
    "ece",
    "brier",
    "length_slope",
    "length_ci_low",
    "length_ci_high",
    "n_length",
];

/// What the appendix's pairwise tables are computed with: the report's defaults (Davidson ties,
/// 1,000 resamples of conversations, seed 1, 95%) on the appendix rubric's pairwise form.
pub fn pairwise_options(rubric: &str) -> PairwiseOptions {
    PairwiseOptions {
        rubric: Some(rubric.to_string()),
        ..PairwiseOptions::default()
    }
}

/// Header of `pairwise.csv`: one line per rater group × criterion × source (one line with an
/// empty source and empty figures when the group's verdicts on the criterion have no fit).
pub const PAIRWISE_HEADER: [&str; 16] = [
    "rubric",
    "rater",
    "kind",
    "criterion",
    "verdicts",
    "ties",
    "tie_parameter",
    "resamples_kept",
    "source",
    "strength",
    "ci_low",
    "ci_high",
    "rank",
    "wins",
    "comparisons",
    "win_rate",
];

/// Header of `pairwise_position.csv`: one line per judge × criterion.
pub const POSITION_HEADER: [&str; 14] = [
    "rubric",
    "judge",
    "criterion",
    "both_orders",
    "consistent",
    "consistency",
    "consistency_ci_low",
    "consistency_ci_high",
    "decided",
    "first_wins",
    "p_first",
    "p_first_ci_low",
    "p_first_ci_high",
    "p_value",
];

/// Header of `pairwise_agreement.csv`: one line per criterion × (experts with experts, or a
/// judge with the experts).
pub const PREFERENCE_HEADER: [&str; 12] = [
    "rubric",
    "criterion",
    "between",
    "n",
    "agreements",
    "percent",
    "percent_ci_low",
    "percent_ci_high",
    "kappa",
    "kappa_se",
    "kappa_ci_low",
    "kappa_ci_high",
];

/// The pairwise report the appendix's tables hold: `None` when the study has no pairwise form
/// of `rubric` with pairs.
pub fn appendix_pairwise(
    store: &Store,
    rubric: &str,
) -> Result<Option<PairwiseReport>, MethodsError> {
    match pairwise_report(store, &pairwise_options(rubric)) {
        Ok(report) => Ok(Some(report)),
        Err(PairwiseReportError::Invalid(_)) => Ok(None),
        Err(PairwiseReportError::Store(e)) => Err(e.into()),
    }
}

/// `pairwise.csv`, `pairwise_position.csv` and `pairwise_agreement.csv` of `report` (the
/// headers only without one).
pub fn pairwise_tables(report: Option<&PairwiseReport>) -> Result<[Vec<u8>; 3], MethodsError> {
    use crate::base::cell::neutralise;
    let count = |n: usize| n.to_string();
    let mut strengths = csv::Writer::from_writer(Vec::new());
    strengths.write_record(PAIRWISE_HEADER)?;
    let mut position = csv::Writer::from_writer(Vec::new());
    position.write_record(POSITION_HEADER)?;
    let mut agreement = csv::Writer::from_writer(Vec::new());
    agreement.write_record(PREFERENCE_HEADER)?;
    if let Some(r) = report {
        let rubric = neutralise(&r.rubric).into_owned();
        for l in &r.leaderboards {
            let head = [
                rubric.clone(),
                neutralise(&l.rater).into_owned(),
                l.kind.to_string(),
                neutralise(&l.criterion).into_owned(),
                count(l.verdicts),
                l.ties.as_str().to_string(),
                figure(l.tie_parameter),
                count(l.resamples_kept),
            ];
            if l.sources.is_empty() {
                let mut row = head.to_vec();
                row.extend(std::iter::repeat_n(String::new(), 8));
                strengths.write_record(&row)?;
            }
            for s in &l.sources {
                let mut row = head.to_vec();
                row.extend([
                    neutralise(&s.source).into_owned(),
                    figure(s.strength),
                    figure(s.ci_low),
                    figure(s.ci_high),
                    s.rank.map_or(String::new(), count),
                    figure(Some(s.wins)),
                    count(s.comparisons),
                    figure(s.win_rate),
                ]);
                strengths.write_record(&row)?;
            }
        }
        for p in &r.position {
            let (c, b) = (&p.consistency, &p.bias);
            position.write_record([
                rubric.clone(),
                neutralise(&p.judge).into_owned(),
                neutralise(&p.criterion).into_owned(),
                count(c.pairs),
                count(c.consistent),
                figure(c.share),
                figure(c.ci.0),
                figure(c.ci.1),
                count(b.decided),
                count(b.first_wins),
                figure(b.p_first),
                figure(b.ci.0),
                figure(b.ci.1),
                figure(b.p_value),
            ])?;
        }
        for a in &r.agreement {
            let Some(f) = &a.agreement else { continue };
            agreement.write_record([
                rubric.clone(),
                neutralise(&a.criterion).into_owned(),
                neutralise(&a.between).into_owned(),
                count(f.n),
                count(f.agreements),
                figure(f.percent),
                figure(f.percent_ci.0),
                figure(f.percent_ci.1),
                figure(f.kappa),
                figure(f.kappa_se),
                figure(f.kappa_ci.0),
                figure(f.kappa_ci.1),
            ])?;
        }
    }
    let done = |w: csv::Writer<Vec<u8>>| {
        w.into_inner()
            .map_err(|e| MethodsError::Csv(csv::Error::from(e.into_error())))
    };
    Ok([done(strengths)?, done(position)?, done(agreement)?])
}

/// Header of `judge_repetitions.csv`.
pub const REPETITIONS_HEADER: [&str; 8] = [
    "conversation_id",
    "response_id",
    "judge",
    "criterion",
    "repetition",
    "value",
    "expected",
    "length_chars",
];

/// A figure as the tables write it: every digit (the shortest decimal that reads back as the
/// same double), empty when undefined.
fn figure(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => v.to_string(),
        _ => String::new(),
    }
}

/// `judge_reliability.csv`: one line per judge × criterion of `figures`.
pub fn reliability_table(
    rubric: &str,
    figures: &[JudgeReliability],
) -> Result<Vec<u8>, MethodsError> {
    use crate::base::cell::neutralise;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(RELIABILITY_HEADER)?;
    for f in figures {
        let binary = f.calibration.binary.as_ref();
        let count = |n: Option<usize>| n.map_or(String::new(), |n| n.to_string());
        w.write_record([
            neutralise(rubric).into_owned(),
            neutralise(&f.judge).into_owned(),
            neutralise(&f.criterion).into_owned(),
            f.scale.to_string(),
            f.aggregate.as_str().to_string(),
            f.repetitions.to_string(),
            f.consistency.n_responses.to_string(),
            f.consistency.alpha_metric.to_string(),
            figure(f.consistency.alpha),
            figure(f.consistency.alpha_ci95[0]),
            figure(f.consistency.alpha_ci95[1]),
            figure(f.repetitions_needed.single_repetition_reliability),
            figure(Some(f.target.reliability)),
            count(f.target.repetitions),
            f.n_compared.to_string(),
            figure(binary.and_then(|b| b.ece)),
            figure(binary.and_then(|b| b.brier)),
            figure(f.bias.length.estimate),
            figure(f.bias.length.ci95[0]),
            figure(f.bias.length.ci95[1]),
            f.bias.length.n.to_string(),
        ])?;
    }
    w.into_inner()
        .map_err(|e| MethodsError::Csv(csv::Error::from(e.into_error())))
}

/// `judge_repetitions.csv`: every repetition the reliability table reads, with the response named
/// as `ratings.csv` names it.
fn repetitions_table(store: &Store, options: &ReliabilityOptions) -> Result<Vec<u8>, MethodsError> {
    use crate::base::cell::neutralise;
    let labels: HashMap<i64, (String, String)> = store
        .response_labels()?
        .into_iter()
        .map(|l| (l.id, (l.conversation, l.response)))
        .collect();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(REPETITIONS_HEADER)?;
    for r in repetition_records(store, options)? {
        let Some((conversation, response)) = labels.get(&r.response_id) else {
            continue;
        };
        w.write_record([
            neutralise(conversation).into_owned(),
            neutralise(response).into_owned(),
            neutralise(&r.judge).into_owned(),
            neutralise(&r.criterion).into_owned(),
            r.repetition.to_string(),
            figure(Some(r.value)),
            figure(r.expected),
            r.chars.map_or(String::new(), |c| c.to_string()),
        ])?;
    }
    w.into_inner()
        .map_err(|e| MethodsError::Csv(csv::Error::from(e.into_error())))
}

/// The table view of the appendix: system level, judges against the experts' mean, ICC(C,1),
/// F-based intervals.
pub fn appendix_view() -> TableView {
    TableView {
        level: Level::System,
        comparison: Comparison::JudgeVsExperts,
        icc: IccChoice::C1,
        ci: CiChoice::F,
    }
}

/// The appendix's view for a rubric of the data: [`appendix_view`], at item level for a rubric of
/// conversations (a session rubric, or one whose items are all replies of transcripts).
pub fn appendix_view_of(data: &AgreementData) -> TableView {
    TableView {
        level: data.headline_level(),
        ..appendix_view()
    }
}

/// The methods paragraph (Markdown) for a report computed with `options`, with a section on the
/// pairwise tables when the study has `pairwise` verdicts.
pub fn methods_paragraph(
    options: &AgreementOptions,
    software: &str,
    n_ratings: usize,
    audit_head: Option<&str>,
    pairwise: Option<&PairwiseReport>,
    by_turn: Option<&ByTurnFigures>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Methods: agreement between LLM judges and clinical experts\n"
    );
    let _ = writeln!(
        s,
        "Agreement was computed with Concord {software} (statistics in its `concord-stats` crate) for the `{}` rubric; the study's {n_ratings} ratings are in `ratings.csv`. \
For each judge and attribute, the reference was, per response, the mean of the experts who rated it. \
At the system level each rated model (source) is one target: the mean reference score and the mean judge score over the responses both scored. \
{}\
Agreement is the intraclass correlation ICC(C,1) — two-way, consistency, single rater, equal to Shrout & Fleiss' ICC(3,1) (McGraw & Wong, 1996) — the MentalAlign form: \
consistency asks whether the judge ranks the models as the experts do, and the judge's constant offset is reported separately as the bias, mean(judge − reference), with the mean squared difference. \
ICC(A,1) (absolute agreement) and the other forms are available in the table's other views.",
        options.rubric,
        if options.exclude_self_family {
            "Responses written by a model of the judge's own family were left out (self-preference exclusion). "
        } else {
            "Responses of the judge's own model family were kept (self-preference exclusion off). "
        }
    );
    let _ = writeln!(
        s,
        "\n95% confidence intervals in this appendix's table are McGraw & Wong's F-based intervals (deterministic, reproduced exactly by `recompute.py` with pingouin). \
The panel's headline interval at the system level is a percentile bootstrap over the targets with {} resamples, seed {}, ChaCha8 generator on a stream derived from each cell's identity, replicates outside [0, 1] dropped; \
at the item level the F-based interval. \
When experts rate different subsets of responses (an incomplete design), the experts' own agreement is estimated by REML variance components of score ~ 1 + (1|response) + (1|expert) (lme4's criterion; profile-likelihood 95% intervals), not by the ANOVA form, which needs every expert on every response. \
Binary dimensions: Gwet's AC1 with Gwet's variance as irrCAC computes it; Krippendorff's α with an item bootstrap (seeded); positive and negative specific agreement pooled over rater pairs (Uebersax). \
Whether a judge can replace the experts: the Alternative Annotator Test (Calderon, Reichart & Dror, 2025; ε = 0.2, Benjamini–Yekutieli q = 0.05) and PPI++ means (Angelopoulos, Duchi & Zrnic, 2023) with power-tuned λ.",
        options.resamples, options.seed
    );
    let _ = writeln!(
        s,
        "\nOptions: rubric `{}`; levels {}; attribute groups {}; per-expert comparisons {}; self-family exclusion {}; bootstrap seed {} and {} resamples. \
{} \
`recompute.py` in this directory recomputes every number of `agreement.csv` from `ratings.csv` and `study.json` with pingouin and numpy, and every number of `judge_reliability.csv` from `judge_repetitions.csv` and `ratings.csv` with krippendorff, statsmodels, pingouin and numpy (`python recompute.py .`).",
        options.rubric,
        options
            .levels
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        if options.groups { "on" } else { "off" },
        if options.per_expert { "on" } else { "off" },
        if options.exclude_self_family { "on" } else { "off" },
        options.seed,
        options.resamples,
        match audit_head {
            Some(h) => format!("The study's audit chain head when the table was computed: `{h}` (`concord audit verify` prints it while the data are unchanged)."),
            None => "The study has no audit entries, so no audit chain head is cited.".to_string(),
        }
    );
    let r = reliability_options(&options.rubric);
    let _ = writeln!(
        s,
        "\n## Judge reliability across repetitions\n\n`judge_reliability.csv` holds, per judge and attribute, how consistent the judge is with itself when it scores the same response again; `judge_repetitions.csv` holds every repetition it is computed from (the newest run that judged each response), with the response's length in characters and, where the provider returned token log-probabilities, the expected score Σ p·s. A judge's score of a response is the study's aggregate of its repetitions (the `aggregate` column; a binary dimension's is the majority, ties to 0). Self-consistency is Krippendorff's α across repetitions (responses as units, repetitions as coders; interval metric for 1–5 attributes, nominal for binary dimensions; responses with at least two repetitions), with a percentile bootstrap 95% interval over responses ({resamples} resamples, seed {seed}, ChaCha8 generator). The single-repetition reliability ρ₁ is the one-way ICC(1,1) of the K repetitions on the responses that have all K and an expert reference; by Spearman–Brown a k-repetition aggregate has reliability kρ₁/(1 + (k − 1)ρ₁), and `repetitions_for_target` is the smallest k that reaches {target:.2} (a step-up less than 1e-9 below it counts, so a boundary exact in rationals, such as ρ₁ = 4/7 at 0.80, is not lost to rounding). For binary dimensions the predicted probability is the mean expected score from log-probabilities where stored, else the share of repetitions that marked the dimension present; against the experts' majority (ties left out), ECE over {bins} equal-width bins (Guo et al., 2017) and the Brier score. The length audit is the OLS slope of (judge − expert reference) on ln(response length in characters) with its t 95% interval (n − 2 df). `recompute.py` recomputes α with the krippendorff package, ρ₁ with pingouin, the slope and its interval with statsmodels OLS, ECE and Brier with numpy, each to 1e-6; the bootstrap interval of α depends on the random stream, so the script draws its own ({resamples} resamples) and requires both ends within 0.1.",
        resamples = r.resamples,
        seed = r.seed,
        target = r.target_reliability,
        bins = r.bins,
    );
    reviewer_paragraph(&mut s);
    if let Some(report) = pairwise {
        let p = &report.options;
        let _ = writeln!(
            s,
            "\n## Pairwise preferences\n\nThe study's {pairs} pairs of answers (rubric `{rubric}`) received {verdicts} verdicts, one row each in `ratings.csv` with the pair's `left` and `right` sources, the `winner` in those terms and `position_left`, the position the left answer was shown in. \
`pairwise.csv` holds, per rater group (the experts pooled, then each judge) and criterion, each source's Bradley–Terry log-strength θ = ln π (P(i beats j) = π_i/(π_i + π_j)), centred to mean 0 over the compared sources, fitted by maximum likelihood with {ties}; \
its {level:.0}% interval is a percentile bootstrap resampling conversations whole ({resamples} resamples, seed {seed}, ChaCha8 generator; a replicate without a finite fit, or missing a compared source, is dropped and counted in `resamples_kept`); \
rank 1 is the strongest; `wins` counts wins plus half the ties and `win_rate` divides it by the comparisons. A group whose verdicts leave some sources never beaten (or never beating) the rest has no finite fit: its line says so with empty figures. \
A judge asked both orders contributes both verdicts to its fit. `pairwise_position.csv` gives per judge and criterion the position consistency — the share of pairs asked both ways round whose verdict, in the pair's own terms, is the same both times, with its Wilson interval — and the position bias, P(the answer shown first wins) over decided verdicts, with its exact Clopper–Pearson interval and the two-sided exact binomial test against ½. \
`pairwise_agreement.csv` gives percent agreement (Wilson interval) and Cohen's κ over left/right/tie (Fleiss, Cohen & Everitt's asymptotic SE, κ ± z·SE) between every two experts who judged the same pair (the name sorting first as the first rater), and between each judge and every expert on the pair; a judge asked both orders speaks with one verdict, the two when they agree and a tie when they do not. \
`recompute.py` refits every strength and tie parameter from the pair rows of `ratings.csv` with scipy, and checks them, the ranks, the win rates and every position and agreement figure (scipy's binomial test, statsmodels' Wilson interval and Cohen's κ) to 1e-6; the strengths' intervals depend on the random stream, so it draws its own bootstrap ({resamples} resamples) and requires each end within 0.25 plus a quarter of the interval's width.",
            pairs = report.pairs,
            rubric = report.rubric,
            verdicts = report.verdicts,
            ties = match p.ties {
                concord_stats::pairwise::TieHandling::Davidson => "ties as Davidson (1970) models them (P(tie) = ν√(π_iπ_j)/(π_i + π_j + ν√(π_iπ_j)), ν estimated jointly; reported as `tie_parameter`, 0 when the data hold no tie)",
                concord_stats::pairwise::TieHandling::Split => "each tie counted as half a win for each side",
            },
            level = p.level * 100.0,
            resamples = p.bootstrap.resamples,
            seed = p.seed,
        );
    }
    if let Some(figures) = by_turn {
        let coverage = figures.overall.conversations.as_ref();
        let _ = writeln!(
            s,
            "\n## Conversations: agreement by turn\n\nThe `{rubric}` rubric rates replies of transcripts ({items} expert-rated replies in {conversations} conversations). Each rated reply is one target of `agreement.csv`, which is therefore at the item level: the judge against the experts' mean on that reply. \
The replies of one conversation are not independent — they share its history, and candidates at its last turn share everything but the reply — so an interval that treats them as independent is too narrow. `agreement_by_turn.csv` gives, per judge and attribute, the item-level ICC(C,1), ICC(A,1), bias and MSE over all turns (`turn` empty) and at each turn number (a reply's position in its conversation, every message counted; candidates share theirs), each with a conversation-cluster percentile bootstrap 95% interval of ICC(C,1): each of {resamples} resamples draws as many conversations as the figure covers, with replacement, and the replicate is ICC(C,1) of every reply of the conversations drawn (a conversation drawn twice counts twice); ChaCha8 generator seeded with {seed} on a stream derived from the conversations resampled (their ids in order), every figure over the same conversations drawn from the same resamples; only undefined replicates are dropped (ICC(C,1) of two raters lies in [−1, 1]); percentiles 2.5 and 97.5 by linear interpolation (numpy's default). \
A turn with fewer than two expert-rated replies, or whose replies come from a single conversation, has no figures and says why in `not_computed`; a figure over fewer than {min_conversations} conversations has no interval (so few conversations give resamples of so few distinct values that their percentiles say little). \
`recompute.py` recomputes every count and point estimate of `agreement_by_turn.csv` from `ratings.csv` (its `turn` column) with pingouin and numpy to 1e-6. A bootstrap drawn by another generator differs from this one by Monte Carlo error only, and that error depends on the data (with few conversations an ICC's lower tail is long and its 2.5th percentile varies several times more than its 97.5th), so the script measures it: it draws ten batches of {resamples} resamples with numpy's generator, takes each end's standard deviation across the batches as that of one bootstrap's end, and requires each end of this table within 0.01 plus five such standard deviations of its pooled end.",
            rubric = options.rubric,
            items = coverage.map_or(0, |c| c.items),
            conversations = coverage.map_or(0, |c| c.conversations),
            resamples = options.resamples,
            seed = options.seed,
            min_conversations = crate::panel::agreement::MIN_INTERVAL_CONVERSATIONS,
        );
    }
    s
}

/// The methods of the reviewer's tables (`prevalence.csv`, `gstudy.csv`, `dawid_skene.csv`,
/// `agreement_by_category.csv`), appended to `s`.
fn reviewer_paragraph(s: &mut String) {
    let _ = writeln!(
        s,
        "\n## The reviewer's questions\n\n\
`prevalence.csv` gives, per judge and binary dimension, the share of answers truly meeting the dimension: the judge's raw rate over every answer it labelled (a multi-repetition run's aggregate), corrected for its sensitivity and specificity against the experts' strict majority (ties left out, counted in `n_no_consensus`) by the Rogan–Gladen estimator clipped to [0, 1], with the interval of Lee et al. (2025), which carries the uncertainty of the raw rate and of both calibration rates (95%); where the correction has no meaning the line gives the `reason` and no figure. \
`gstudy.csv` gives the study's generalizability studies per criterion: experts × responses × occasions (the experts' first ratings and, where the study has test–retest items, their retest ratings as a second occasion) and each judge × responses × repetitions (its newest run that asked at least twice), one line per variance component estimated by REML (every facet random, missing cells allowed), with Brennan's (2001) relative and absolute coefficients for the numbers of raters and occasions observed and `reaches_n`, the design (raters × occasions) with the fewest scores per response whose relative coefficient reaches 0.80. \
`dawid_skene.csv` gives, per criterion, the Dawid–Skene (1979) model that `concord agreement --reference dawid-skene` compares judges with, as crowd-kit 1.4.2 fits it (majority-vote start, at most 100 passes, tolerance 1e-5) over every expert's and judge's first ratings on the responses some expert rated, the pairs decided by adjudication (`adjudicated.csv`) held at their values: the priors and each rater's probability of giving each label for each true label. \
`agreement_by_category.csv` is `agreement.csv` computed on each conversation category's responses alone (`categories.csv` gives each conversation's category); a category with fewer than two responses some expert rated has its reason instead of figures. \
`recompute.py` recomputes the prevalence by the published formulas (Rogan–Gladen's correction, the interval from Agresti–Coull-shrunk rates with its bias shift) written with scipy's normal quantile, every variance component by maximising the same model's REML likelihood written with numpy and minimised with scipy (to 1e-5), the coefficients and the design that reaches 0.80 by Brennan's formulas, the Dawid–Skene fits with crowd-kit's `DawidSkene`, and each category's table with pingouin as the main table."
    );
}

/// What `study.json` says of the study: the rubric, its criteria and groups, the sources with their
/// families, the raters, and the software that wrote it.
pub fn study_json(
    data: &AgreementData,
    options: &AgreementOptions,
    software: &str,
) -> serde_json::Value {
    let mut meta = study_json_of(data, options, software);
    if data.over_transcripts() {
        if let Some(map) = meta.as_object_mut() {
            map.insert(
                "by_turn".to_string(),
                serde_json::json!({
                    "seed": options.seed,
                    "resamples": options.resamples,
                    "level": 0.95,
                    "cluster": "conversation_id",
                }),
            );
        }
    }
    meta
}

/// What `study.json` holds for every appendix (see [`study_json`]).
fn study_json_of(
    data: &AgreementData,
    options: &AgreementOptions,
    software: &str,
) -> serde_json::Value {
    let criteria: Vec<serde_json::Value> = data
        .criteria
        .iter()
        .map(|c| serde_json::json!({ "key": c.key, "group": c.group }))
        .collect();
    let groups: serde_json::Map<String, serde_json::Value> = data
        .groups
        .iter()
        .map(|g| {
            let keys: Vec<&str> = g
                .members
                .iter()
                .map(|&m| data.criteria[m].key.as_str())
                .collect();
            (g.id.clone(), serde_json::json!(keys))
        })
        .collect();
    let sources: serde_json::Map<String, serde_json::Value> = data
        .sources
        .iter()
        .map(|s| (s.key.clone(), serde_json::json!(s.family)))
        .collect();
    let raters: Vec<serde_json::Value> = data
        .raters
        .iter()
        .map(|r| {
            serde_json::json!({
                "name": r.name,
                "kind": if r.kind == RaterKind::Expert { "expert" } else { "judge" },
                "model_id": r.model_id,
                "family": r.family,
            })
        })
        .collect();
    let r = reliability_options(&options.rubric);
    let reliability = serde_json::json!({
        "seed": r.seed,
        "resamples": r.resamples,
        "bins": r.bins,
        "target_reliability": r.target_reliability,
    });
    let p = pairwise_options(&options.rubric);
    let pairwise = serde_json::json!({
        "ties": p.ties,
        "seed": p.seed,
        "resamples": p.bootstrap.resamples,
        "level": p.level,
    });
    serde_json::json!({
        "rubric": options.rubric,
        "exclude_self_family": options.exclude_self_family,
        "criteria": criteria,
        "groups": groups,
        "sources": sources,
        "raters": raters,
        "software": software,
        "judge_reliability": reliability,
        "pairwise": pairwise,
    })
}

/// Write the appendix into `dir` (created when missing) from the agreement `table` of `options`
/// (seen as [`appendix_view_of`] gives) and the `study.json` content [`study_json`] gave; returns
/// the files written. Its `ratings.csv` carries every rating with the judges' rationales: the
/// caller checks the PHI gate first, as for every other export. Every file goes through
/// `files::output`: all destinations (sixteen, seventeen with a by-turn table, three more with spans) are judged before the
/// first is written (a file already there is replaced only when `overwrite` is set; the open
/// study never), each is staged `0600` and renamed in.
pub fn write_appendix(
    store: &Store,
    table: &AgreementTable,
    meta: &serde_json::Value,
    options: &AgreementOptions,
    dir: &Path,
    software: &str,
    overwrite: bool,
) -> Result<Vec<PathBuf>, MethodsError> {
    output::create_folder(dir)?;
    let by_turn = appendix_by_turn(store, options)?;
    let spans = crate::panel::span_agreement::span_agreement_with_inputs(
        store,
        &options.rubric,
        crate::outputs::span_tables::span_options(),
    )
    .map_err(|e| match e {
        crate::panel::span_agreement::SpanAgreementError::Store(e) => MethodsError::Store(e),
        other => MethodsError::Spans(other.to_string()),
    })?;
    let span_files = spans
        .as_ref()
        .map_or(&[][..], |_| &crate::outputs::span_tables::SPAN_FILES[..]);
    let names: Vec<&str> = FILES
        .iter()
        .copied()
        .chain(by_turn.as_ref().map(|_| BY_TURN_FILE))
        .chain(span_files.iter().copied())
        .collect();
    let paths: Vec<PathBuf> = names.iter().map(|name| dir.join(name)).collect();
    for path in &paths {
        output::check(&destination(path, overwrite, store))?;
    }
    let provenance = crate::guard::provenance::Provenance::of(
        store,
        serde_json::json!({ "agreement": options, "table": table.view }),
    )?;
    let mut ratings = Vec::new();
    let summary = write_long_csv(store, &mut ratings, CsvOptions::default())?;
    let reliability = reliability_options(&options.rubric);
    let judges = judge_reliability(store, &reliability)?;
    let pairwise = appendix_pairwise(store, &options.rubric)?;
    let [strengths, position, preference] = pairwise_tables(pairwise.as_ref())?;
    let [prevalence, gstudy, latent, adjudicated, by_category, categories] =
        reviewer_files(store, options, &provenance)?;
    let mut files = vec![
        ("ratings.csv", ratings),
        (
            "judge_reliability.csv",
            reliability_table(&options.rubric, &judges)?,
        ),
        (
            "judge_repetitions.csv",
            repetitions_table(store, &reliability)?,
        ),
        ("pairwise.csv", strengths),
        ("pairwise_position.csv", position),
        ("pairwise_agreement.csv", preference),
        ("prevalence.csv", prevalence),
        ("gstudy.csv", gstudy),
        ("dawid_skene.csv", latent),
        ("adjudicated.csv", adjudicated),
        ("agreement_by_category.csv", by_category),
        ("categories.csv", categories),
        (
            "agreement.csv",
            render(table, TableFormat::Csv, &provenance).into_bytes(),
        ),
        (
            "study.json",
            (serde_json::to_string_pretty(meta)? + "\n").into_bytes(),
        ),
        ("methods.md", {
            let mut paragraph = methods_paragraph(
                options,
                software,
                summary.ratings,
                provenance.audit_head.as_deref(),
                pairwise.as_ref(),
                by_turn.as_ref(),
            );
            if let Some((report, _)) = &spans {
                crate::outputs::span_tables::span_paragraph(&mut paragraph, report);
            }
            paragraph.into_bytes()
        }),
        (
            "recompute.py",
            if spans.is_some() {
                recompute_script_with_spans(by_turn.is_some())
            } else {
                recompute_script(by_turn.is_some())
            }
            .into_bytes(),
        ),
    ];
    if let Some(figures) = &by_turn {
        files.push((BY_TURN_FILE, by_turn_table(options, figures)?));
    }
    if let Some((report, inputs)) = &spans {
        let tables = crate::outputs::span_tables::span_tables(report, inputs)?;
        files.extend(SPAN_FILE_NAMES.into_iter().zip(tables));
    }
    let mut written = Vec::new();
    for ((name, bytes), path) in files.into_iter().zip(paths) {
        debug_assert!(
            path.ends_with(name),
            "the files are judged in the order written"
        );
        output::write_bytes(&destination(&path, overwrite, store), &bytes)?;
        written.push(path);
    }
    Ok(written)
}

/// Where one file of an appendix goes: never over the open study.
fn destination<'a>(path: &'a Path, overwrite: bool, store: &'a Store) -> Destination<'a> {
    Destination::new(path)
        .overwrite(overwrite)
        .guarding(store.path())
}

/// The tables of the reviewer's questions on the appendix's rubric (see
/// [`crate::outputs::reviewer_tables`]): prevalence, G-studies, Dawid–Skene fits with the
/// decisions they hold, and agreement by category with the conversations' categories.
fn reviewer_files(
    store: &Store,
    options: &AgreementOptions,
    provenance: &crate::guard::provenance::Provenance,
) -> Result<[Vec<u8>; 6], MethodsError> {
    use crate::outputs::reviewer_tables as t;
    use crate::panel::adjudication::{decided_values, referenced_data, AgreementReference};
    let rubric = &options.rubric;
    let prevalence =
        crate::panel::prevalence::prevalence_rows(&AgreementData::load(store, rubric)?, 0.95, None);
    let gstudy = crate::panel::gstudy::gstudy_section(store, rubric)?;
    let (_, fits) = referenced_data(store, options, AgreementReference::DawidSkene)?;
    let criteria: HashMap<i64, String> = store
        .rubrics()?
        .into_iter()
        .filter(|s| &s.rubric.id == rubric)
        .map(|s| store.read().criterion_ids(s.id))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .map(|(key, id)| (id, key))
        .collect();
    let (experts, _) = referenced_data(store, options, AgreementReference::Experts)?;
    let split = crate::panel::strata::by_facet(
        store,
        &experts,
        crate::panel::strata::Facet::Category,
        options,
    )?;
    Ok([
        t::prevalence_table(&prevalence)?,
        t::gstudy_table(&gstudy)?,
        t::dawid_skene_table(rubric, &fits)?,
        t::adjudicated_table(store, &decided_values(store)?, &criteria)?,
        t::by_category_table(&split, appendix_view_of(&experts.ratings), provenance)?,
        t::categories_table(store, rubric)?,
    ])
}

/// The span tables' names, as `outputs::span_tables::SPAN_FILES` lists them.
const SPAN_FILE_NAMES: [&str; 3] = crate::outputs::span_tables::SPAN_FILES;

/// The by-turn table, written last, only for a reply rubric over transcripts.
const BY_TURN_FILE: &str = "agreement_by_turn.csv";

/// The files of every appendix, in the order they are written.
const FILES: [&str; 16] = [
    "ratings.csv",
    "judge_reliability.csv",
    "judge_repetitions.csv",
    "pairwise.csv",
    "pairwise_position.csv",
    "pairwise_agreement.csv",
    "prevalence.csv",
    "gstudy.csv",
    "dawid_skene.csv",
    "adjudicated.csv",
    "agreement_by_category.csv",
    "categories.csv",
    "agreement.csv",
    "study.json",
    "methods.md",
    "recompute.py",
];
