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
use crate::store::{RaterKind, Store, StoreError};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The recomputation script written into every appendix.
pub const RECOMPUTE_SCRIPT: &str = include_str!("methods/recompute.py");

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

/// The methods paragraph (Markdown) for a report computed with `options`.
pub fn methods_paragraph(
    options: &AgreementOptions,
    software: &str,
    n_ratings: usize,
    audit_head: Option<&str>,
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
    s
}

/// What `study.json` says of the study: the rubric, its criteria and groups, the sources with their
/// families, the raters, and the software that wrote it.
pub fn study_json(
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
    serde_json::json!({
        "rubric": options.rubric,
        "exclude_self_family": options.exclude_self_family,
        "criteria": criteria,
        "groups": groups,
        "sources": sources,
        "raters": raters,
        "software": software,
        "judge_reliability": reliability,
    })
}

/// Write the appendix into `dir` (created when missing) from the agreement `table` of `options`
/// (seen as [`appendix_view`]) and the `study.json` content [`study_json`] gave; returns the files
/// written. Its `ratings.csv` carries every rating with the judges' rationales: the caller checks
/// the PHI gate first, as for every other export. Every file goes through `files::output`: all
/// seven destinations are judged before the first is written (a file already there is replaced
/// only when `overwrite` is set; the open study never), each is staged `0600` and renamed in.
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
    let paths: Vec<PathBuf> = FILES.iter().map(|name| dir.join(name)).collect();
    for path in &paths {
        output::check(&destination(path, overwrite, store))?;
    }
    let provenance = crate::guard::provenance::Provenance::of(
        store,
        serde_json::json!({ "agreement": options, "table": appendix_view() }),
    )?;
    let mut ratings = Vec::new();
    let summary = write_long_csv(store, &mut ratings, CsvOptions::default())?;
    let reliability = reliability_options(&options.rubric);
    let judges = judge_reliability(store, &reliability)?;
    let files = [
        ("ratings.csv", ratings),
        (
            "judge_reliability.csv",
            reliability_table(&options.rubric, &judges)?,
        ),
        (
            "judge_repetitions.csv",
            repetitions_table(store, &reliability)?,
        ),
        (
            "agreement.csv",
            render(table, TableFormat::Csv, &provenance).into_bytes(),
        ),
        (
            "study.json",
            (serde_json::to_string_pretty(meta)? + "\n").into_bytes(),
        ),
        (
            "methods.md",
            methods_paragraph(
                options,
                software,
                summary.ratings,
                provenance.audit_head.as_deref(),
            )
            .into_bytes(),
        ),
        ("recompute.py", RECOMPUTE_SCRIPT.as_bytes().to_vec()),
    ];
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

/// The files of an appendix, in the order they are written.
const FILES: [&str; 7] = [
    "ratings.csv",
    "judge_reliability.csv",
    "judge_repetitions.csv",
    "agreement.csv",
    "study.json",
    "methods.md",
    "recompute.py",
];
