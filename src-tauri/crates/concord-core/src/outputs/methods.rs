//! The methods appendix that recomputes itself: beside a study, a directory with the agreement
//! table, every rating as the long CSV, the rubric's structure and the options (`study.json`), a
//! methods paragraph naming the ICC form and why, the interval methods, the software version and
//! the options, and a Python script (`recompute.py`) that recomputes every number of the table
//! from the ratings with public packages (pingouin, numpy) and fails unless all agree to 1e-6.
//!
//! The appendix's table uses McGraw & Wong's F-based intervals: they are deterministic, so a
//! reader's software reproduces them exactly, while the panel's headline percentile bootstrap
//! depends on the random stream (its seed and resamples are stated in the paragraph).

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
use crate::store::{RaterKind, Store, StoreError};
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
`recompute.py` in this directory recomputes every number of `agreement.csv` from `ratings.csv` and `study.json` with pingouin and numpy (`python recompute.py .`).",
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
    serde_json::json!({
        "rubric": options.rubric,
        "exclude_self_family": options.exclude_self_family,
        "criteria": criteria,
        "groups": groups,
        "sources": sources,
        "raters": raters,
        "software": software,
    })
}

/// Write the appendix into `dir` (created when missing) from the agreement `table` of `options`
/// (seen as [`appendix_view`]) and the `study.json` content [`study_json`] gave; returns the files
/// written. Its `ratings.csv` carries every rating with the judges' rationales: the caller checks
/// the PHI gate first, as for every other export. Every file goes through `files::output`: all
/// five destinations are judged before the first is written (a file already there is replaced
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
    let files = [
        ("ratings.csv", ratings),
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
const FILES: [&str; 5] = [
    "ratings.csv",
    "agreement.csv",
    "study.json",
    "methods.md",
    "recompute.py",
];
