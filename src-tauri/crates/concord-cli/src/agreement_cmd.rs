//! `concord agreement`: judge–expert agreement over the study. `--method mentalalign` prints the
//! paper's table (system level, one row per judge × attribute, exactly the command-line contract's
//! keys; `--groups` adds the CSS/ARS rows); `--method full` prints the whole agreement report
//! (both levels, per-expert and expert–expert comparisons, Bland–Altman, Lin's CCC, binary
//! dimensions and totals) as the desktop panel receives it. `--by category` gives either one per
//! category of the conversations, each computed on that category's responses alone.
//! `--prevalence` gives each judge's corrected prevalence of every binary criterion;
//! `--reference dawid-skene` compares judges with the latent Dawid–Skene label and prints the fits;
//! `--gstudy` gives the study's G- and D-studies (experts × responses × occasions, each judge ×
//! responses × repetitions).
//!
//! A rubric of conversations (a session rubric, or a reply rubric whose items are all replies of
//! transcripts) has its MentalAlign rows at item level — each item a target, the judge against the experts' mean on
//! it — since a transcript's replies come from one or a few sources; those rows also say their
//! `level`, their interval's `ci_method` and, for the conversation-cluster bootstrap, the
//! conversations it resampled (`n_clusters`). An earlier release's rows are as they were.

use crate::import_cmd::ImportCmdError;
use crate::study_cmd::open_study_to_read;
use clap::{Args, ValueEnum};
use concord_core::app::adjudication::agreement_report;
use concord_core::app::agreement::{
    headline_level, provenance, render_table as render_agreement_table, table_with_reml_bands,
};
use concord_core::app::reviewer::{agreement_by, gstudy, latent_agreement, prevalence};
use concord_core::base::text::visible;
use concord_core::panel::adjudication::AdjudicationError;
use concord_core::panel::adjudication::AgreementReference;
use concord_core::panel::agreement::AgreementCell;
use concord_core::panel::agreement::AgreementOptions;
use concord_core::panel::agreement::AgreementReport;
use concord_core::panel::agreement::CiMethod;
use concord_core::panel::agreement::Comparison;
use concord_core::panel::agreement::Level;
use concord_core::panel::agreement::DEFAULT_SEED;
use concord_core::panel::agreement_table::CiChoice;
use concord_core::panel::agreement_table::IccChoice;
use concord_core::panel::agreement_table::TableFormat;
use concord_core::panel::agreement_table::TableView;
use concord_core::panel::gstudy::GStudySection;
use concord_core::panel::latent::LatentFit;
use concord_core::panel::prevalence::PrevalenceRow;
use concord_core::panel::strata::{Facet, StratifiedReport};
use serde::Serialize;
use std::path::Path;

#[derive(Args, Debug)]
pub struct AgreementArgs {
    /// `mentalalign`: the paper's system-level table; `full`: every comparison and level.
    #[arg(long, value_enum, default_value = "mentalalign")]
    method: MethodArg,
    /// Rubric whose ratings are compared (default: mentalbench; with --prevalence every rubric
    /// that has a binary criterion).
    #[arg(long)]
    rubric: Option<String>,
    /// Include the CSS and ARS group rows in the mentalalign table.
    #[arg(long)]
    groups: bool,
    /// Level(s) for `--method full`.
    #[arg(long, value_enum, default_value = "both")]
    level: LevelArg,
    /// Bootstrap seed (ChaCha8).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Bootstrap resamples per cell.
    #[arg(long, default_value_t = 1000)]
    resamples: usize,
    /// Keep the responses of each judge's own model family (the paper leaves them out).
    #[arg(long)]
    include_self_family: bool,
    /// Print the agreement table (as the desktop panel shows it) as CSV, Markdown or LaTeX
    /// (APA style "ICC [95% CI]") instead of the default text or JSON.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// With --format: the comparison shown.
    #[arg(long, value_enum, default_value = "judge-vs-experts")]
    comparison: ComparisonArg,
    /// With --format: the ICC form shown (consistency C1 = ICC(3,1), absolute agreement A1 = ICC(2,1)).
    #[arg(long, value_enum, default_value = "c1")]
    icc: IccArg,
    /// With --format: the interval shown (bootstrap where computed, else F-based; or always F).
    #[arg(long, value_enum, default_value = "bootstrap")]
    ci: CiArg,
    /// What judges are compared with: the experts' mean, the consensus after adjudication
    /// (adjudicated pairs take the decided value; expert–expert cells then show agreement after
    /// adjudication), or the latent label of a Dawid–Skene model over every rater (adjudicated
    /// pairs held at their decisions; the fits are printed with the report).
    #[arg(long, value_enum, default_value = "experts")]
    reference: ReferenceArg,
    /// Pairwise preferences instead of ratings: Bradley–Terry strengths per source with 95%
    /// intervals (experts pooled and each judge), agreement on preferences, and each judge's
    /// position consistency and P(first wins). `--rubric` then names the pairwise rubric (or the
    /// rubric it compares, e.g. mentalbench for mentalbench-pairs).
    #[arg(long)]
    pairwise: bool,
    /// With --pairwise: how ties enter the Bradley–Terry fit (Davidson's tie parameter, or
    /// half a win to each side).
    #[arg(long, value_enum, default_value = "davidson")]
    ties: TiesArg,
    /// Every figure per value of a facet of the responses, each computed on those responses
    /// alone: `category` (the conversation's category, from the import) or `turn` (the turn
    /// number a reply stands at; item-level intervals resample conversations whole).
    #[arg(long, value_enum, conflicts_with_all = ["format", "pairwise"])]
    by: Option<ByArg>,
    /// Each judge's corrected prevalence of every binary criterion (Rogan–Gladen against the
    /// experts' consensus, with Lee et al.'s interval).
    #[arg(long, conflicts_with_all = ["format", "pairwise", "by"])]
    prevalence: bool,
    /// With --prevalence: the confidence level of the interval.
    #[arg(
        long,
        default_value_t = 0.95,
        value_name = "L",
        requires = "prevalence"
    )]
    confidence_level: f64,
    /// With --prevalence: how N expert labels (those given included) should be split between
    /// truly positive and truly negative answers.
    #[arg(long, value_name = "N", requires = "prevalence")]
    allocate: Option<u64>,
    /// The study's G-studies per criterion: experts × responses × occasions (first ratings and
    /// retests) and each judge × responses × repetitions, with REML variance components,
    /// Brennan's coefficients and the D-study for 1–10 of each facet.
    #[arg(long, conflicts_with_all = ["format", "pairwise", "by", "prevalence"])]
    gstudy: bool,
    /// Agreement on the evidence spans raters marked: per code of the rubric and over all codes,
    /// Krippendorff's unitized alpha among the experts, span F1 (exact boundaries and any
    /// overlap) for each pair of raters, each judge against each expert beside the expert–expert
    /// range, with bootstrap intervals over replies (`--rubric`: default the first rubric that
    /// declares codes).
    #[arg(long, conflicts_with_all = ["format", "pairwise", "by", "prevalence", "gstudy"])]
    spans: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ByArg {
    Category,
    Turn,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum TiesArg {
    Davidson,
    Split,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ReferenceArg {
    Experts,
    Consensus,
    DawidSkene,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum FormatArg {
    Csv,
    Md,
    Latex,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ComparisonArg {
    JudgeVsExperts,
    JudgeVsExpert,
    ExpertVsExpert,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum IccArg {
    /// ICC(C,1) = ICC(3,1)
    C1,
    /// ICC(A,1) = ICC(2,1)
    A1,
    /// ICC(1,1), one-way
    Icc1,
    /// ICC(1,k)
    Icc1k,
    /// ICC(A,k) = ICC(2,k)
    Ak,
    /// ICC(C,k) = ICC(3,k)
    Ck,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum CiArg {
    Bootstrap,
    F,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum MethodArg {
    Mentalalign,
    Full,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum LevelArg {
    System,
    Item,
    Both,
}

/// One row of the MentalAlign table, with exactly the contract's keys (and, for a rubric of
/// conversations, its level, interval method and conversations).
#[derive(Debug, Serialize)]
struct MentalAlignRow<'a> {
    judge: &'a str,
    attribute: &'a str,
    group: Option<&'a str>,
    icc_c1: Option<f64>,
    icc_a1: Option<f64>,
    ci95: [Option<f64>; 2],
    ci_width: Option<f64>,
    status: Option<&'static str>,
    bias: Option<f64>,
    mse: Option<f64>,
    n_pairs: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    level: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    n_targets: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ci_method: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    n_clusters: Option<usize>,
}

fn row(c: &AgreementCell) -> MentalAlignRow<'_> {
    let item = c.level == Level::Item;
    MentalAlignRow {
        judge: &c.rater,
        attribute: &c.attribute,
        group: c.group.as_deref(),
        icc_c1: c.icc_c1,
        icc_a1: c.icc_a1,
        ci95: c.ci95,
        ci_width: c.ci_width,
        status: c.status.map(|s| s.as_str()),
        bias: c.bias,
        mse: c.mse,
        n_pairs: c.n_pairs,
        level: item.then_some("item"),
        n_targets: item.then_some(c.n_targets),
        ci_method: item.then_some(match c.ci_method {
            CiMethod::Bootstrap => "bootstrap",
            CiMethod::F => "F",
            CiMethod::Cluster => "cluster",
        }),
        n_clusters: c.n_clusters,
    }
}

pub fn run(args: &AgreementArgs, db: Option<&Path>, json: bool) -> Result<String, ImportCmdError> {
    let mut study = open_study_to_read(db)?;
    if args.spans {
        return spans(args, &study, json);
    }
    if args.prevalence {
        let rows = prevalence(
            &mut study,
            args.rubric.as_deref(),
            args.confidence_level,
            args.allocate,
        )?;
        return if json {
            Ok(format!("{}\n", serde_json::to_string_pretty(&rows)?))
        } else {
            Ok(render_prevalence(&rows))
        };
    }
    if args.gstudy {
        let section = gstudy(&study, &rubric_of(args))?;
        return if json {
            Ok(format!("{}\n", serde_json::to_string_pretty(&section)?))
        } else {
            Ok(render_gstudy(&section))
        };
    }
    if args.pairwise {
        return pairwise(args, &study, json);
    }
    let table_wanted = args.format.is_some();
    let headline = headline_level(&study, &rubric_of(args))?;
    let levels = match (args.method, args.level) {
        _ if table_wanted => vec![Level::System, Level::Item],
        (MethodArg::Mentalalign, _) => vec![headline],
        (_, LevelArg::System) => vec![Level::System],
        (_, LevelArg::Item) => vec![Level::Item],
        (_, LevelArg::Both) => vec![Level::System, Level::Item],
    };
    let options = AgreementOptions {
        rubric: rubric_of(args),
        seed: args.seed,
        resamples: args.resamples,
        levels,
        groups: args.method == MethodArg::Full || args.groups || table_wanted,
        per_expert: args.method == MethodArg::Full || table_wanted,
        exclude_self_family: !args.include_self_family,
    };
    let reference = match args.reference {
        ReferenceArg::Experts => AgreementReference::Experts,
        ReferenceArg::Consensus => AgreementReference::Consensus,
        ReferenceArg::DawidSkene => AgreementReference::DawidSkene,
    };
    if let Some(by) = args.by {
        let facet = match by {
            ByArg::Category => Facet::Category,
            ByArg::Turn => Facet::Turn,
        };
        let report =
            agreement_by(&study, &options, reference, facet).map_err(adjudication_error)?;
        return by_facet_output(&report, args.method, headline, json);
    }
    let options_record = options.clone();
    let (report, fits) = if reference == AgreementReference::DawidSkene {
        let view = table_view(args);
        let latent = latent_agreement(&study, options, view).map_err(adjudication_error)?;
        (latent.report, Some(latent.fits))
    } else {
        let report = agreement_report(&study, options, reference).map_err(adjudication_error)?;
        (report, None)
    };
    if let Some(format) = args.format {
        let view = table_view(args);
        let format = match format {
            FormatArg::Csv => TableFormat::Csv,
            FormatArg::Md => TableFormat::Md,
            FormatArg::Latex => TableFormat::Latex,
        };
        let provenance = provenance(
            &study,
            serde_json::json!({ "agreement": &options_record, "table": view, "reference": format!("{:?}", args.reference) }),
        )?;
        let shown = table_with_reml_bands(&study, &report, view)?;
        return Ok(render_agreement_table(&shown, format, &provenance));
    }
    let fits_text = || fits.as_deref().map(render_fits).unwrap_or_default();
    match args.method {
        MethodArg::Mentalalign => {
            let rows: Vec<MentalAlignRow<'_>> =
                mentalalign_cells(&report, headline).map(row).collect();
            if json {
                Ok(format!("{}\n", serde_json::to_string_pretty(&rows)?))
            } else {
                Ok(render_table(&rows) + &fits_text())
            }
        }
        MethodArg::Full => {
            if json {
                // The report as its fields are declared (an earlier release printed it so); only
                // with the Dawid–Skene fits beside it does it go through a map of its keys.
                let Some(fits) = &fits else {
                    return Ok(format!("{}\n", serde_json::to_string_pretty(&report)?));
                };
                let mut value = serde_json::to_value(&report)?;
                if let Some(object) = value.as_object_mut() {
                    object.insert("dawid_skene".into(), serde_json::to_value(fits)?);
                }
                Ok(format!("{}\n", serde_json::to_string_pretty(&value)?))
            } else {
                Ok(render_full(&report) + &fits_text())
            }
        }
    }
}

/// The rubric asked for, MentalBench by default.
fn rubric_of(args: &AgreementArgs) -> String {
    args.rubric.clone().unwrap_or_else(|| "mentalbench".into())
}

/// The table view `--level`, `--comparison`, `--icc` and `--ci` choose.
fn table_view(args: &AgreementArgs) -> TableView {
    TableView {
        level: match (args.method, args.level) {
            (_, LevelArg::Item) => Level::Item,
            _ => Level::System,
        },
        comparison: match args.comparison {
            ComparisonArg::JudgeVsExperts => Comparison::JudgeVsExperts,
            ComparisonArg::JudgeVsExpert => Comparison::JudgeVsExpert,
            ComparisonArg::ExpertVsExpert => Comparison::ExpertVsExpert,
        },
        icc: match args.icc {
            IccArg::C1 => IccChoice::C1,
            IccArg::A1 => IccChoice::A1,
            IccArg::Icc1 => IccChoice::Icc1,
            IccArg::Icc1k => IccChoice::Icc1k,
            IccArg::Ak => IccChoice::Ak,
            IccArg::Ck => IccChoice::Ck,
        },
        ci: match args.ci {
            CiArg::Bootstrap => CiChoice::Bootstrap,
            CiArg::F => CiChoice::F,
        },
    }
}

/// A share with three decimals, or a dash.
fn rate(x: Option<f64>) -> String {
    x.map_or_else(|| "—".to_string(), |v| format!("{v:.3}"))
}

/// `--prevalence` as text: one line per judge × binary criterion, the reason where there is no
/// corrected figure.
fn render_prevalence(rows: &[PrevalenceRow]) -> String {
    if rows.is_empty() {
        return "No judge labelled a binary criterion in this study.\n".to_string();
    }
    let mut out = format!(
        "{:<12} {:<28} {:<36} {:>6} {:>6} {:>6} {:>6} {:>6} {:>9} {:>17}\n",
        "rubric", "judge", "criterion", "n", "calib", "raw", "sens", "spec", "corrected", "CI"
    );
    for r in rows {
        let ci =
            r.ci.map_or_else(|| "—".to_string(), |[lo, hi]| format!("[{lo:.3}, {hi:.3}]"));
        out.push_str(&format!(
            "{:<12} {:<28} {:<36} {:>6} {:>6} {:>6} {:>6} {:>6} {:>9} {:>17}\n",
            visible(&r.rubric),
            visible(&r.judge),
            r.attribute,
            r.n_items,
            r.n_calibration,
            rate(r.raw_rate),
            rate(r.sensitivity),
            rate(r.specificity),
            rate(r.corrected),
            ci
        ));
        if let Some(a) = r.allocation {
            out.push_str(&format!(
                "    allocate: {} expert labels to positive answers, {} to negative\n",
                a.positive, a.negative
            ));
        }
        if let Some(why) = &r.not_computed {
            out.push_str(&format!("    not computed: {}\n", visible(why)));
        }
    }
    out
}

/// `--gstudy` as text: per study its components, G coefficients and the design that reaches the
/// target reliability, or the reason there are none.
fn render_gstudy(section: &GStudySection) -> String {
    if section.studies.is_empty() {
        return format!("No ratings of {} to study.\n", visible(&section.rubric));
    }
    let mut out = String::new();
    for s in &section.studies {
        out.push_str(&format!(
            "{} · {} (responses × {}): {} scores, {} responses, {} {}{}\n",
            visible(&s.raters),
            s.attribute,
            s.facets.join(" × "),
            s.n_scores,
            s.n_targets,
            s.n_raters,
            s.facets[0],
            if s.facets.len() > 1 {
                format!(", {} occasions", s.n_occasions)
            } else {
                String::new()
            }
        ));
        if let Some(why) = &s.not_computed {
            out.push_str(&format!("  not computed: {}\n", visible(why)));
            continue;
        }
        let total: f64 = s.components.values().sum();
        for (name, v) in &s.components {
            let share = if total > 0.0 { 100.0 * v / total } else { 0.0 };
            out.push_str(&format!("  {name:<18} {v:>10.4} {share:>5.1}%\n"));
        }
        if let Some(g) = &s.g {
            out.push_str(&format!(
                "  G: relative {} absolute {}\n",
                rate(g.relative),
                rate(g.absolute)
            ));
        }
        match &s.reaches_target {
            Some(p) => out.push_str(&format!(
                "  reaches {:.2}: {} {}{}\n",
                section.target_reliability,
                p.n_rater,
                s.facets[0],
                if s.facets.len() > 1 {
                    format!(" × {} occasions", p.n_occasion)
                } else {
                    String::new()
                }
            )),
            None => out.push_str(&format!(
                "  no design of the D-study reaches {:.2}\n",
                section.target_reliability
            )),
        }
    }
    out
}

/// The Dawid–Skene fits as text: per criterion the passes, each rater's accuracy (the mean of
/// its confusion matrix's diagonal) and the judges' error correlations.
fn render_fits(fits: &[LatentFit]) -> String {
    let mut out =
        String::from("\nDawid–Skene latent consensus (judges compared with its labels)\n");
    for f in fits {
        if let Some(why) = &f.not_computed {
            out.push_str(&format!(
                "  {}: not computed: {}\n",
                f.attribute,
                visible(why)
            ));
            continue;
        }
        out.push_str(&format!(
            "  {}: {} responses ({} adjudicated), {} passes{}, {} labels changed from the experts' majority\n",
            f.attribute,
            f.n_items,
            f.n_gold,
            f.iterations,
            if f.converged { "" } else { " (not converged)" },
            f.n_changed
        ));
        for r in &f.raters {
            let diagonal: Vec<f64> = f
                .labels
                .iter()
                .filter_map(|l| r.confusion.get(l).and_then(|row| row.get(l)).copied())
                .collect();
            let accuracy = (!diagonal.is_empty())
                .then(|| diagonal.iter().sum::<f64>() / diagonal.len() as f64);
            out.push_str(&format!(
                "    {:<28} mean P(right label) {}\n",
                visible(&r.rater),
                rate(accuracy)
            ));
        }
        for c in &f.judge_error_correlation {
            out.push_str(&format!(
                "    errors of {} and {}: φ {} over {} responses\n",
                visible(&c.a),
                visible(&c.b),
                rate(c.phi),
                c.n
            ));
        }
    }
    out
}

fn adjudication_error(e: AdjudicationError) -> ImportCmdError {
    match e {
        AdjudicationError::Store(e) => ImportCmdError::Store(e),
        other => ImportCmdError::Store(concord_core::store::StoreError::Invalid(other.to_string())),
    }
}

/// `--by`: per stratum the MentalAlign rows (at `level`) or the full report (JSON keys: the
/// facet's name for its value — a number for a turn —, `n_responses`, `n_compared`, by turn
/// `n_conversations`, then `rows` or `report`, or `not_computed`).
fn by_facet_output(
    report: &StratifiedReport,
    method: MethodArg,
    level: Level,
    json: bool,
) -> Result<String, ImportCmdError> {
    let facet = report.facet.as_str();
    if json {
        let strata: Vec<serde_json::Value> = report
            .strata
            .iter()
            .map(|s| {
                let mut entry = serde_json::Map::new();
                entry.insert(
                    facet.to_string(),
                    report.facet.value_json(s.value.as_deref()),
                );
                entry.insert("n_responses".into(), serde_json::json!(s.n_responses));
                entry.insert("n_compared".into(), serde_json::json!(s.n_compared));
                if let Some(n) = s.n_conversations {
                    entry.insert("n_conversations".into(), serde_json::json!(n));
                }
                match (&s.report, method) {
                    (Some(r), MethodArg::Mentalalign) => {
                        let rows: Vec<MentalAlignRow<'_>> =
                            mentalalign_cells(r, level).map(row).collect();
                        entry.insert("rows".into(), serde_json::to_value(rows)?);
                    }
                    (Some(r), MethodArg::Full) => {
                        entry.insert("report".into(), serde_json::to_value(r)?);
                    }
                    (None, _) => {
                        entry.insert("not_computed".into(), serde_json::json!(s.not_computed));
                    }
                }
                Ok(serde_json::Value::Object(entry))
            })
            .collect::<Result<_, serde_json::Error>>()?;
        let out =
            serde_json::json!({ "by": facet, "reference": report.reference, "strata": strata });
        return Ok(format!("{}\n", serde_json::to_string_pretty(&out)?));
    }
    let mut out = String::new();
    for s in &report.strata {
        let name = s
            .value
            .as_deref()
            .map_or_else(|| format!("(no {facet})"), visible);
        out.push_str(&format!(
            "{facet} {name}: {} responses, {} with an expert value{}\n",
            s.n_responses,
            s.n_compared,
            s.n_conversations
                .map_or_else(String::new, |n| format!(", from {n} conversations"))
        ));
        match &s.report {
            Some(r) => match method {
                MethodArg::Mentalalign => {
                    let rows: Vec<MentalAlignRow<'_>> =
                        mentalalign_cells(r, level).map(row).collect();
                    out.push_str(&render_table(&rows));
                }
                MethodArg::Full => out.push_str(&render_full(r)),
            },
            None => out.push_str(&format!(
                "  not computed: {}\n",
                visible(s.not_computed.as_deref().unwrap_or(""))
            )),
        }
        out.push('\n');
    }
    Ok(out)
}

/// The judge-versus-experts cells of the MentalAlign table at `level` (system, or item for a
/// rubric of conversations).
fn mentalalign_cells(
    report: &AgreementReport,
    level: Level,
) -> impl Iterator<Item = &AgreementCell> {
    report
        .cells
        .iter()
        .filter(move |c| c.comparison == Comparison::JudgeVsExperts && c.level == level)
}

fn num(x: Option<f64>, signed: bool) -> String {
    match x {
        Some(v) if signed => format!("{v:+.3}"),
        Some(v) => format!("{v:.3}"),
        None => "—".to_string(),
    }
}

fn render_table(rows: &[MentalAlignRow<'_>]) -> String {
    if rows.is_empty() {
        return "No judge and expert ratings to compare in this rubric.\n".to_string();
    }
    let mut out = String::new();
    if let Some(first) = rows.first().filter(|r| r.level.is_some()) {
        out.push_str(match first.ci_method {
            Some("cluster") => "Item level: each rated reply a target; 95% CI: percentile bootstrap resampling conversations whole.\n",
            _ => "Item level: each rated item a target; 95% CI: F-based (McGraw & Wong).\n",
        });
    }
    out += &format!(
        "{:<28} {:<16} {:<5} {:>8} {:>8} {:>17} {:>6} {:<9} {:>7} {:>6} {:>7}\n",
        "judge",
        "attribute",
        "group",
        "ICC(C,1)",
        "ICC(A,1)",
        "95% CI",
        "width",
        "status",
        "bias",
        "MSE",
        "pairs"
    );
    for r in rows {
        out.push_str(&format!(
            "{:<28} {:<16} {:<5} {:>8} {:>8} {:>17} {:>6} {:<9} {:>7} {:>6} {:>7}\n",
            visible(r.judge),
            r.attribute,
            r.group.unwrap_or(""),
            num(r.icc_c1, false),
            num(r.icc_a1, false),
            format!("[{}, {}]", num(r.ci95[0], false), num(r.ci95[1], false)),
            num(r.ci_width, false),
            r.status.unwrap_or("—"),
            num(r.bias, true),
            num(r.mse, false),
            r.n_pairs
        ));
    }
    out
}

fn render_full(report: &AgreementReport) -> String {
    let mut out = String::new();
    if !report.cells.is_empty() {
        out.push_str(&format!(
            "{:<16} {:<28} {:<20} {:<16} {:<6} {:>6} {:>8} {:>8} {:>17} {:>7} {:>6} {:>6}\n",
            "comparison",
            "rater",
            "reference",
            "attribute",
            "level",
            "n",
            "ICC(C,1)",
            "ICC(A,1)",
            "95% CI",
            "bias",
            "MSE",
            "CCC"
        ));
        for c in &report.cells {
            out.push_str(&format!(
                "{:<16} {:<28} {:<20} {:<16} {:<6} {:>6} {:>8} {:>8} {:>17} {:>7} {:>6} {:>6}\n",
                match c.comparison {
                    Comparison::JudgeVsExperts => "judge–experts",
                    Comparison::JudgeVsExpert => "judge–expert",
                    Comparison::ExpertVsExpert => "expert–expert",
                },
                visible(&c.rater),
                visible(&c.reference),
                c.attribute,
                c.level.as_str(),
                c.n_targets,
                num(c.icc_c1, false),
                num(c.icc_a1, false),
                format!("[{}, {}]", num(c.ci95[0], false), num(c.ci95[1], false)),
                num(c.bias, true),
                num(c.mse, false),
                num(c.lin_ccc, false)
            ));
        }
    }
    if !report.binary.is_empty() {
        out.push_str(&format!(
            "\n{:<28} {:<36} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7}\n",
            "judge", "dimension", "n", "kappa", "AC1", "PABAK", "sens", "spec"
        ));
        for b in &report.binary {
            out.push_str(&format!(
                "{:<28} {:<36} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7}\n",
                visible(&b.judge),
                b.attribute,
                b.n_items,
                num(b.cohen_kappa, false),
                num(b.gwet_ac1, false),
                num(b.pabak, false),
                num(b.sensitivity.estimate, false),
                num(b.specificity.estimate, false)
            ));
        }
    }
    if !report.totals.is_empty() {
        out.push_str(&format!(
            "\n{:<28} {:<6} {:>6} {:>8} {:>8} {:>8}\n",
            "judge (totals)", "level", "n", "Pearson", "Spearman", "Kendall"
        ));
        for t in &report.totals {
            out.push_str(&format!(
                "{:<28} {:<6} {:>6} {:>8} {:>8} {:>8}\n",
                visible(&t.judge),
                t.level.as_str(),
                t.n,
                num(t.pearson, false),
                num(t.spearman, false),
                num(t.kendall_tau_b, false)
            ));
        }
    }
    if out.is_empty() {
        out.push_str("No judge and expert ratings to compare in this rubric.\n");
    }
    out
}

/// `concord agreement --pairwise`.
fn pairwise(
    args: &AgreementArgs,
    study: &concord_core::app::open_study::OpenStudy,
    json: bool,
) -> Result<String, ImportCmdError> {
    use concord_core::panel::pairwise::PairwiseOptions;
    use concord_stats::pairwise::TieHandling;
    let mut options = PairwiseOptions {
        rubric: Some(rubric_of(args)),
        ties: match args.ties {
            TiesArg::Davidson => TieHandling::Davidson,
            TiesArg::Split => TieHandling::Split,
        },
        seed: args.seed,
        ..PairwiseOptions::default()
    };
    options.bootstrap.resamples = args.resamples;
    let report = concord_core::app::pairs::agreement(study, &options).map_err(|e| {
        ImportCmdError::Store(concord_core::store::StoreError::Invalid(e.to_string()))
    })?;
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&report)?));
    }
    Ok(render_pairwise(&report))
}

/// A figure of the pairwise report as text: three decimals, or a dash when absent.
fn pairwise_figure(x: Option<f64>) -> String {
    x.map_or_else(|| "—".to_string(), |v| format!("{v:.3}"))
}

/// The pairwise report as text: the leaderboards, then agreement, position and rank correlation.
fn render_pairwise(report: &concord_core::panel::pairwise::PairwiseReport) -> String {
    use std::fmt::Write as _;
    let f = pairwise_figure;
    let mut out = format!(
        "{}: {} pairs, {} verdicts; Bradley–Terry log-strengths ({:?} ties) with {}-resample 95% intervals\n",
        visible(&report.rubric),
        report.pairs,
        report.verdicts,
        report.options.ties,
        report.options.bootstrap.resamples
    );
    for l in &report.leaderboards {
        let _ = writeln!(
            out,
            "\n{} · {} ({} verdicts)",
            visible(&l.rater),
            visible(&l.criterion),
            l.verdicts
        );
        if let Some(why) = &l.unavailable {
            let _ = writeln!(out, "  no fit: {}", visible(why));
            continue;
        }
        for s in &l.sources {
            let _ = writeln!(
                out,
                "  {:>2}. {:<28} {:>7} [{}, {}]  win rate {}",
                s.rank.map_or_else(|| "-".into(), |r| r.to_string()),
                visible(&s.name),
                f(s.strength),
                f(s.ci_low),
                f(s.ci_high),
                f(s.win_rate)
            );
        }
    }
    render_preference_agreement(report, &mut out);
    if !report.position.is_empty() {
        out.push_str("\nPosition (judges): consistent across both orders; P(the answer shown first wins) [95% CI]\n");
        for p in &report.position {
            let _ = writeln!(
                out,
                "  {:<24} {:<16} consistent {} of {} ({})  P(first) {} [{}, {}] of {} decided",
                visible(&p.judge),
                visible(&p.criterion),
                p.consistency.consistent,
                p.consistency.pairs,
                f(p.consistency.share),
                f(p.bias.p_first),
                f(p.bias.ci.0),
                f(p.bias.ci.1),
                p.bias.decided
            );
        }
    }
    if !report.rank_correlation.is_empty() {
        let _ = writeln!(
            out,
            "\nRank correlation with mean scores on {}",
            visible(report.compared_with.as_deref().unwrap_or(""))
        );
        for r in &report.rank_correlation {
            let _ = writeln!(
                out,
                "  {:<24} {:<16} Spearman {}  Kendall τb {}  ({} sources)",
                visible(&r.rater),
                visible(&r.criterion),
                f(r.correlation.spearman),
                f(r.correlation.kendall_tau_b),
                r.correlation.n
            );
        }
    }
    out
}

/// The report's agreement on preferences, appended to `out` as text.
fn render_preference_agreement(
    report: &concord_core::panel::pairwise::PairwiseReport,
    out: &mut String,
) {
    use std::fmt::Write as _;
    let f = pairwise_figure;
    if !report.agreement.is_empty() {
        out.push_str("\nAgreement on preferences (percent, Cohen's kappa [95% CI])\n");
        for a in &report.agreement {
            match &a.agreement {
                Some(g) => {
                    let _ = writeln!(
                        out,
                        "  {:<24} {:<16} n {:>6}  {} %  κ {} [{}, {}]",
                        visible(&a.between),
                        visible(&a.criterion),
                        g.n,
                        g.percent
                            .map_or_else(|| "—".into(), |p| format!("{:.1}", p * 100.0)),
                        f(g.kappa),
                        f(g.kappa_ci.0),
                        f(g.kappa_ci.1)
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "  {:<24} {:<16} —",
                        visible(&a.between),
                        visible(&a.criterion)
                    );
                }
            }
        }
    }
}

/// `concord agreement --spans`: the span agreement of the rubric, as JSON or text.
fn spans(
    args: &AgreementArgs,
    study: &concord_core::app::open_study::OpenStudy,
    json: bool,
) -> Result<String, ImportCmdError> {
    let report = concord_core::app::spans::span_agreement(
        study,
        args.rubric.as_deref(),
        concord_core::panel::span_agreement::SpanAgreementOptions {
            resamples: args.resamples,
            seed: args.seed,
        },
    )?;
    Ok(if json {
        format!("{}\n", serde_json::to_string_pretty(&report)?)
    } else {
        render_spans(&report)
    })
}

/// `--spans` as text: per code (then over all) uα among the experts and each pair's F1.
fn render_spans(report: &concord_core::panel::span_agreement::SpanAgreementReport) -> String {
    use concord_core::panel::span_agreement::{CodeAgreement, Interval};
    let num = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.3}"));
    let ci = |i: &Option<Interval>| match i {
        Some(Interval {
            lower: Some(l),
            upper: Some(u),
        }) => format!(" [{l:.3}, {u:.3}]"),
        _ => String::new(),
    };
    let mut out = format!(
        "span agreement, rubric {}: {} replies marked; unitized alpha over {} replies ({} characters); {} bootstrap resamples of replies\n",
        visible(&report.rubric),
        report.replies_marked,
        report.continuum_replies,
        report.continuum_characters,
        report.resamples
    );
    for r in &report.raters {
        out.push_str(&format!(
            "  {} ({}): {} spans on {} replies{}\n",
            visible(&r.name),
            r.kind,
            r.spans,
            r.replies_covered,
            if r.unlocated > 0 {
                format!(", {} unlocated quotes left out", r.unlocated)
            } else {
                String::new()
            }
        ));
    }
    let section = |c: &CodeAgreement| {
        let mut s = format!(
            "\n{} ({} spans): alpha_u {}{}\n",
            visible(&c.code),
            c.spans,
            num(c.alpha_u),
            ci(&c.alpha_u_ci)
        );
        for p in &c.pairs {
            s.push_str(&format!(
                "  {} – {}: F1 exact {}{}, overlap {}{}\n",
                visible(&p.a),
                visible(&p.b),
                num(p.f1_exact),
                ci(&p.f1_exact_ci),
                num(p.f1_overlap),
                ci(&p.f1_overlap_ci)
            ));
        }
        for j in &c.judges {
            s.push_str(&format!(
                "  judge {}: experts among themselves F1 exact {}–{}, overlap {}–{}\n",
                visible(&j.judge),
                num(j.expert_range_exact.min),
                num(j.expert_range_exact.max),
                num(j.expert_range_overlap.min),
                num(j.expert_range_overlap.max)
            ));
        }
        s
    };
    for c in &report.codes {
        out.push_str(&section(c));
    }
    out.push_str(&section(&report.overall));
    out
}
