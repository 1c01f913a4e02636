//! `concord stats icc|agreement|compare`: statistics on a long-form CSV file, printed as text or JSON.
//! The file is read by `concord_core::score_table`; the numbers come from `concord_stats`. JSON
//! output has exactly the keys of the command-line contract, with NaN and infinities as null.

use clap::{Args, Subcommand};
use concord_core::score_table::{read_long_csv, ColumnNames, ScoreTableError};
use concord_stats::categorical::{self, AgreementSummary, CategoricalError, CategoricalRatings};
use concord_stats::icc::{icc_with_missing, IccError, IccEstimate};
use concord_stats::paired::{compare, PairedError};
use concord_stats::reml::{
    reml_icc, BoundaryComponent, Rating, RemlError, RemlIccEstimate, VarianceComponents,
};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;
use thiserror::Error;

/// `concord stats …`
#[derive(Args, Debug)]
pub struct StatsArgs {
    #[command(subcommand)]
    pub command: StatsCommand,
}

/// The statistics subcommands.
#[derive(Subcommand, Debug)]
pub enum StatsCommand {
    /// All six intraclass correlations with F tests and 95% CIs (McGraw & Wong 1996).
    Icc(IccArgs),
    /// Categorical agreement: percent agreement, Cohen's and Fleiss' kappa, Gwet's AC1, Krippendorff's alpha.
    Agreement(AgreementArgs),
    /// Paired comparison of two raters: bias, limits of agreement, errors, correlations, Lin's CCC.
    Compare(CompareArgs),
}

/// The long-form CSV file and its column names.
#[derive(Args, Debug)]
pub struct TableArgs {
    /// Long-form CSV: one row per target × rater × score.
    pub file: PathBuf,
    /// Column holding the target (item) id.
    #[arg(long, default_value = "target", value_name = "COL")]
    pub target: String,
    /// Column holding the rater id.
    #[arg(long, default_value = "rater", value_name = "COL")]
    pub rater: String,
    /// Column holding the score (empty = missing).
    #[arg(long, default_value = "score", value_name = "COL")]
    pub score: String,
}

impl TableArgs {
    fn columns(&self) -> ColumnNames {
        ColumnNames {
            target: self.target.clone(),
            rater: self.rater.clone(),
            score: self.score.clone(),
        }
    }
}

/// `concord stats icc`
#[derive(Args, Debug)]
pub struct IccArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// `anova`: the six forms from complete targets (McGraw & Wong); `reml`: ICC1/ICC2/ICC3 from
    /// REML variance components, using every rating of an incomplete design.
    #[arg(long, value_enum, default_value = "anova")]
    pub method: IccMethod,
}

/// How `concord stats icc` estimates.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum IccMethod {
    /// Two-way ANOVA mean squares over targets rated by every rater.
    Anova,
    /// REML variance components of the crossed and one-way mixed models (lme4's criterion).
    Reml,
}

/// `concord stats agreement`
#[derive(Args, Debug)]
pub struct AgreementArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// The declared category set in order, e.g. `0,1` or `1,2,3,4,5` (default: the observed labels).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub categories: Option<Vec<String>>,
}

/// `concord stats compare`
#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// Rater a (differences are a − b).
    #[arg(long = "a", value_name = "RATER")]
    pub a: String,
    /// Rater b.
    #[arg(long = "b", value_name = "RATER")]
    pub b: String,
}

/// Why a statistics command failed.
#[derive(Debug, Error)]
pub enum StatsError {
    /// The CSV could not be read or converted.
    #[error(transparent)]
    Table(#[from] ScoreTableError),
    /// The ICC input was malformed.
    #[error("ICC: {0}")]
    Icc(#[from] IccError),
    /// The paired input was malformed.
    #[error("comparison: {0}")]
    Paired(#[from] PairedError),
    /// The REML fit could not use the data.
    #[error("REML ICC: {0}")]
    Reml(#[from] RemlError),
    /// The categorical input was malformed.
    #[error("agreement: {0}")]
    Categorical(#[from] CategoricalError),
    /// JSON encoding failed.
    #[error("cannot encode JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Run a statistics subcommand and return what to print.
pub fn run(args: &StatsArgs, json: bool) -> Result<String, StatsError> {
    match &args.command {
        StatsCommand::Icc(a) => run_icc(a, json),
        StatsCommand::Agreement(a) => run_agreement(a, json),
        StatsCommand::Compare(a) => run_compare(a, json),
    }
}

fn to_json<T: Serialize>(value: &T) -> Result<String, StatsError> {
    let mut s = serde_json::to_string_pretty(value)?;
    s.push('\n');
    Ok(s)
}

/// Text for an optional number: three decimals, or a dash when undefined.
fn show(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.3}"),
        Some(v) if v > 0.0 => "inf".to_string(),
        _ => "—".to_string(),
    }
}

fn show_p(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() && v < 0.001 => "<.001".to_string(),
        Some(v) if v.is_finite() => format!("{v:.3}"),
        _ => "—".to_string(),
    }
}

#[derive(Serialize)]
struct IccOutput<'a> {
    n_targets: usize,
    n_raters: usize,
    n_targets_used: usize,
    icc: &'a [IccEstimate],
}

#[derive(Serialize)]
struct RemlOutput<'a> {
    n_targets: usize,
    n_raters: usize,
    n_ratings: usize,
    variance: VarianceComponents,
    icc: &'a [RemlIccEstimate],
}

fn run_icc_reml(args: &IccArgs, json: bool) -> Result<String, StatsError> {
    let table = read_long_csv(&args.table.file, &args.table.columns())?;
    let numeric = table.numeric()?;
    let k = numeric.raters.len();
    let ratings: Vec<Rating> = numeric
        .cells
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            c.map(|score| Rating {
                target: i / k,
                rater: i % k,
                score,
            })
        })
        .collect();
    let fit = reml_icc(&ratings)?;
    let boundary_note = boundary_note(&fit.boundary);
    if json {
        if let Some(note) = &boundary_note {
            eprintln!("note: {note}");
        }
        return to_json(&RemlOutput {
            n_targets: fit.n_targets,
            n_raters: fit.n_raters,
            n_ratings: fit.n_ratings,
            variance: fit.variance,
            icc: &fit.icc,
        });
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} ratings of {} targets by {} raters (REML variance components, every rating used)",
        table.file, fit.n_ratings, fit.n_targets, fit.n_raters
    );
    let _ = writeln!(
        out,
        "variance: target {:.4}, rater {:.4}, residual {:.4}",
        fit.variance.target, fit.variance.rater, fit.variance.residual
    );
    if let Some(note) = &boundary_note {
        let _ = writeln!(out, "note: {note}");
    }
    let _ = writeln!(
        out,
        "{:<6} {:<32} {:>7}  95% CI (profile likelihood)",
        "type", "model", "ICC"
    );
    for e in &fit.icc {
        let model = match e.form {
            concord_stats::reml::RemlIccForm::Icc1 => "one-way, score ~ 1 + (1|target)",
            concord_stats::reml::RemlIccForm::Icc2 => "crossed, absolute agreement",
            concord_stats::reml::RemlIccForm::Icc3 => "crossed, consistency",
        };
        let code = serde_json::to_value(e.form)?;
        let _ = writeln!(
            out,
            "{:<6} {:<32} {:>7}  [{}, {}]",
            code.as_str().unwrap_or_default(),
            model,
            show(Some(e.icc)),
            show(e.ci95[0]),
            show(e.ci95[1])
        );
    }
    Ok(out)
}

/// A sentence naming the variance components estimated at zero, if any.
fn boundary_note(boundary: &[BoundaryComponent]) -> Option<String> {
    if boundary.is_empty() {
        return None;
    }
    let names: Vec<&str> = boundary
        .iter()
        .map(|b| match b {
            BoundaryComponent::Target => "target variance (crossed model)",
            BoundaryComponent::Rater => "rater variance",
            BoundaryComponent::TargetOneWay => "target variance (one-way model)",
        })
        .collect();
    Some(format!(
        "boundary fit: {} estimated at 0 (the estimate lies on the edge of the parameter space)",
        names.join(", ")
    ))
}

fn run_icc(args: &IccArgs, json: bool) -> Result<String, StatsError> {
    if args.method == IccMethod::Reml {
        return run_icc_reml(args, json);
    }
    let table = read_long_csv(&args.table.file, &args.table.columns())?;
    let numeric = table.numeric()?;
    let result = icc_with_missing(&numeric.cells, table.n_targets(), table.n_raters())?;
    if json {
        return to_json(&IccOutput {
            n_targets: result.n_targets,
            n_raters: table.n_raters(),
            n_targets_used: result.n_targets_used,
            icc: &result.table.estimates,
        });
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} targets × {} raters; {} targets with every score used",
        table.file,
        result.n_targets,
        table.n_raters(),
        result.n_targets_used
    );
    let _ = writeln!(
        out,
        "{:<6} {:<9} {:>7} {:>9} {:>6} {:>8} {:>7}  95% CI",
        "type", "form", "ICC", "F", "df1", "df2", "p"
    );
    for e in &result.table.estimates {
        let _ = writeln!(
            out,
            "{:<6} {:<9} {:>7} {:>9} {:>6} {:>8} {:>7}  [{}, {}]",
            e.form.code(),
            e.form.mcgraw_wong_name(),
            show(e.value),
            show(e.f),
            e.df1,
            format!("{:.0}", e.df2),
            show_p(e.p),
            show(e.ci95[0]),
            show(e.ci95[1])
        );
    }
    Ok(out)
}

fn run_agreement(args: &AgreementArgs, json: bool) -> Result<String, StatsError> {
    let table = read_long_csv(&args.table.file, &args.table.columns())?;
    let cats = table.categorical(args.categories.as_deref())?;
    let numeric = cats.values.is_some();
    // Non-numeric labels are placed at their positions: fine for the nominal and ordinal metrics,
    // meaningless for the interval one, which is then reported as undefined.
    let values = cats
        .values
        .clone()
        .unwrap_or_else(|| (0..cats.categories.len()).map(|i| i as f64).collect());
    let ratings = CategoricalRatings::new(
        values,
        cats.targets.len(),
        cats.raters.len(),
        cats.cells.clone(),
    )?;
    let mut summary: AgreementSummary = categorical::agreement_summary(&ratings);
    if !numeric {
        summary.krippendorff_alpha.interval = None;
    }
    if json {
        return to_json(&summary);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} items × {} raters; categories: {}",
        table.file,
        summary.n_items,
        summary.n_raters,
        cats.categories.join(", ")
    );
    let rows = [
        ("percent agreement", summary.percent_agreement),
        ("Cohen's kappa", summary.cohen_kappa),
        ("Fleiss' kappa", summary.fleiss_kappa),
        ("Gwet's AC1", summary.gwet_ac1),
        (
            "Krippendorff's alpha (nominal)",
            summary.krippendorff_alpha.nominal,
        ),
        (
            "Krippendorff's alpha (ordinal)",
            summary.krippendorff_alpha.ordinal,
        ),
        (
            "Krippendorff's alpha (interval)",
            summary.krippendorff_alpha.interval,
        ),
    ];
    for (name, v) in rows {
        let _ = writeln!(out, "{name:<32} {:>7}", show(v));
    }
    Ok(out)
}

#[derive(Serialize)]
struct CompareOutput {
    n: usize,
    bias: Option<f64>,
    sd_diff: Option<f64>,
    loa95: [Option<f64>; 2],
    mse: Option<f64>,
    rmse: Option<f64>,
    mae: Option<f64>,
    pearson: Option<f64>,
    spearman: Option<f64>,
    kendall_tau_b: Option<f64>,
    lin_ccc: Option<f64>,
}

fn run_compare(args: &CompareArgs, json: bool) -> Result<String, StatsError> {
    let table = read_long_csv(&args.table.file, &args.table.columns())?;
    let pairs = table.paired(&args.a, &args.b)?;
    let c = compare(&pairs.a, &pairs.b)?;
    if json {
        return to_json(&CompareOutput {
            n: c.n,
            bias: c.bias,
            sd_diff: c.sd_diff,
            loa95: c.loa95,
            mse: c.mse,
            rmse: c.rmse,
            mae: c.mae,
            pearson: c.pearson,
            spearman: c.spearman,
            kendall_tau_b: c.kendall_tau_b,
            lin_ccc: c.lin_ccc,
        });
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} − {} over {} targets scored by both",
        table.file, args.a, args.b, c.n
    );
    let rows = [
        ("bias (mean a − b)", show(c.bias)),
        ("SD of differences", show(c.sd_diff)),
        (
            "95% limits of agreement",
            format!("[{}, {}]", show(c.loa95[0]), show(c.loa95[1])),
        ),
        ("MSE", show(c.mse)),
        ("RMSE", show(c.rmse)),
        ("MAE", show(c.mae)),
        ("Pearson r", show(c.pearson)),
        ("Spearman rho", show(c.spearman)),
        ("Kendall tau-b", show(c.kendall_tau_b)),
        ("Lin's CCC", show(c.lin_ccc)),
    ];
    for (name, v) in rows {
        let _ = writeln!(out, "{name:<24} {v}");
    }
    Ok(out)
}
