//! `concord stats icc|agreement|compare|alttest|ppi`: statistics on a long-form CSV file, printed as text or JSON;
//! `prevalence`, `ppi-power`, `gstudy` and `consensus` have their own modules.
//! The file is read by `concord_core::files::score_table`; the numbers come from `concord_stats`. JSON
//! output has exactly the keys of the command-line contract, with NaN and infinities as null.

use clap::{Args, Subcommand};
use concord_core::base::text::visible;
use concord_core::files::score_table::read_long_csv;
use concord_core::files::score_table::read_prediction_csv;
use concord_core::files::score_table::ColumnNames;
use concord_stats::alttest::{alt_test, AlignmentMetric, AltTestOptions};
use concord_stats::bootstrap::BootstrapOptions;
use concord_stats::categorical::{
    self, AgreementSummary, AlphaMetric, CategoricalRatings, SpecificAgreement, Weights,
};
use concord_stats::icc::{icc_with_missing, IccEstimate};
use concord_stats::paired::compare;
use concord_stats::ppi::ppi_mean;
use concord_stats::reml::{
    reml_icc, BoundaryComponent, Rating, RemlIccEstimate, VarianceComponents,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::stats_error::to_json;
pub use crate::stats_error::StatsError;

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
    /// The Alternative Annotator Test: can the judge replace the human annotators?
    Alttest(AltTestArgs),
    /// PPI++ bias-corrected means per group from judge scores and a subset of expert ratings.
    Ppi(PpiArgs),
    /// Prevalence of a binary criterion corrected for the judge's sensitivity and specificity.
    Prevalence(crate::prevalence_cmd::PrevalenceArgs),
    /// Expert labels and judge-only answers a prediction-powered mean needs (power analysis).
    #[command(name = "ppi-power")]
    PpiPower(crate::power_cmd::PpiPowerArgs),
    /// G-study variance components, G coefficients and D-study of a crossed design.
    Gstudy(crate::gstudy_cmd::GStudyArgs),
    /// Latent consensus labels and each rater's confusion matrix (Dawid–Skene).
    Consensus(crate::consensus_cmd::ConsensusArgs),
}

/// `concord stats alttest`
#[derive(Args, Debug)]
pub struct AltTestArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// The rater id of the judge; every other rater is a human annotator.
    #[arg(long, value_name = "NAME")]
    pub judge: String,
    /// ε, the allowance granted to the judge (0.2 for experts, 0.15 skilled, 0.1 crowd workers).
    #[arg(long, default_value_t = 0.2, value_name = "E")]
    pub epsilon: f64,
    /// The false discovery rate q of the Benjamini–Yekutieli procedure.
    #[arg(long, default_value_t = 0.05, value_name = "A")]
    pub alpha: f64,
    /// Alignment score: `accuracy` for categorical labels, `neg_rmse` for numeric scores.
    #[arg(long, value_enum, default_value = "accuracy")]
    pub metric: MetricArg,
}

/// The alignment score of the alt-test.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricArg {
    /// Share of the remaining annotators giving the same label.
    Accuracy,
    /// Negative root mean squared difference from the remaining annotators.
    #[value(name = "neg_rmse")]
    NegRmse,
}

/// `concord stats ppi`
#[derive(Args, Debug)]
pub struct PpiArgs {
    /// CSV with one row per response: group (model), judge score, expert score (empty = unrated).
    pub file: PathBuf,
    /// Column holding the group.
    #[arg(long, default_value = "group", value_name = "COL")]
    pub group: String,
    /// Column holding the judge score.
    #[arg(long = "judge-column", default_value = "judge", value_name = "COL")]
    pub judge: String,
    /// Column holding the expert score.
    #[arg(long = "expert-column", default_value = "expert", value_name = "COL")]
    pub expert: String,
    /// 1 − the confidence level.
    #[arg(long, default_value_t = 0.05, value_name = "A")]
    pub alpha: f64,
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
    /// Seed of the bootstrap behind Krippendorff's α intervals (same seed, same bounds).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Resamples of that bootstrap.
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
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

/// Run a statistics subcommand and return what to print.
pub fn run(args: &StatsArgs, json: bool) -> Result<String, StatsError> {
    match &args.command {
        StatsCommand::Icc(a) => run_icc(a, json),
        StatsCommand::Agreement(a) => run_agreement(a, json),
        StatsCommand::Compare(a) => run_compare(a, json),
        StatsCommand::Alttest(a) => run_alttest(a, json),
        StatsCommand::Ppi(a) => run_ppi(a, json),
        StatsCommand::Prevalence(a) => crate::prevalence_cmd::run(a, json),
        StatsCommand::PpiPower(a) => crate::power_cmd::run(a, json),
        StatsCommand::Gstudy(a) => crate::gstudy_cmd::run(a, json),
        StatsCommand::Consensus(a) => crate::consensus_cmd::run(a, json),
    }
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
            crate::terminal::say(&format!("note: {note}"));
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
    let cells = table.numeric_cells()?;
    let result = icc_with_missing(&cells, table.n_targets(), table.n_raters())?;
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
    let specific = categorical::specific_agreement_binary(&ratings);
    let ac1 = categorical::gwet_ac2_interval(&ratings, Weights::Unweighted, 0.95);
    let options = BootstrapOptions {
        resamples: args.resamples,
        ..BootstrapOptions::default()
    };
    let alpha_ci = |metric: AlphaMetric, wanted: bool| {
        if !wanted {
            return [None, None];
        }
        // One stream per metric so that each interval depends only on the seed.
        let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
        categorical::krippendorff_alpha_bootstrap(&ratings, metric, &options, &mut rng)
            .map_or([None, None], |b| [b.lower, b.upper])
    };
    let alpha_ci95 = AlphaIntervals {
        nominal: alpha_ci(
            AlphaMetric::Nominal,
            summary.krippendorff_alpha.nominal.is_some(),
        ),
        ordinal: alpha_ci(
            AlphaMetric::Ordinal,
            summary.krippendorff_alpha.ordinal.is_some(),
        ),
        interval: alpha_ci(
            AlphaMetric::Interval,
            summary.krippendorff_alpha.interval.is_some(),
        ),
    };
    let output = AgreementOutput {
        summary: &summary,
        specific_agreement: specific,
        gwet_ac1_ci95: ac1.map_or([None, None], |c| [Some(c.ci[0]), Some(c.ci[1])]),
        krippendorff_alpha_ci95: alpha_ci95,
        bootstrap: BootstrapSettings {
            resamples: args.resamples,
            seed: args.seed,
        },
    };
    if json {
        return to_json(&output);
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
    let ci = |c: [Option<f64>; 2]| format!("[{}, {}]", show(c[0]), show(c[1]));
    let _ = writeln!(
        out,
        "Gwet's AC1 95% CI (Gwet's variance, as irrCAC) {}",
        ci(output.gwet_ac1_ci95)
    );
    let _ = writeln!(
        out,
        "Krippendorff's alpha 95% CI (item bootstrap, {} resamples, seed {}): nominal {}, ordinal {}, interval {}",
        args.resamples,
        args.seed,
        ci(output.krippendorff_alpha_ci95.nominal),
        ci(output.krippendorff_alpha_ci95.ordinal),
        ci(output.krippendorff_alpha_ci95.interval)
    );
    if let Some(s) = specific {
        let _ = writeln!(
            out,
            "specific agreement: positive ({}) {}, negative ({}) {}",
            cats.categories[1],
            show(s.positive),
            cats.categories[0],
            show(s.negative)
        );
    }
    Ok(out)
}

#[derive(Serialize)]
struct AlphaIntervals {
    nominal: [Option<f64>; 2],
    ordinal: [Option<f64>; 2],
    interval: [Option<f64>; 2],
}

#[derive(Serialize)]
struct BootstrapSettings {
    resamples: usize,
    seed: u64,
}

/// The agreement summary's keys plus the intervals and specific agreement.
#[derive(Serialize)]
struct AgreementOutput<'a> {
    #[serde(flatten)]
    summary: &'a AgreementSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    specific_agreement: Option<SpecificAgreement>,
    gwet_ac1_ci95: [Option<f64>; 2],
    krippendorff_alpha_ci95: AlphaIntervals,
    bootstrap: BootstrapSettings,
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

#[derive(Serialize)]
struct AltTestAnnotatorOutput<'a> {
    rater: &'a str,
    p_value: Option<f64>,
    won: bool,
    rho_judge: f64,
    rho_human: f64,
}

#[derive(Serialize)]
struct AltTestOutput<'a> {
    epsilon: f64,
    alpha: f64,
    winning_rate: f64,
    advantage_probability: f64,
    passed: bool,
    annotators: Vec<AltTestAnnotatorOutput<'a>>,
}

fn run_alttest(args: &AltTestArgs, json: bool) -> Result<String, StatsError> {
    let table = read_long_csv(&args.table.file, &args.table.columns())?;
    let Some(judge_index) = table.raters.iter().position(|r| r == &args.judge) else {
        return Err(StatsError::UnknownJudge {
            file: table.file.clone(),
            judge: args.judge.clone(),
            available: table.raters.join(", "),
        });
    };
    // Labels as numbers: numeric scores as themselves for RMSE, categorical labels by their code
    // for accuracy (only equality matters there).
    let (cells, metric): (Vec<Option<f64>>, AlignmentMetric) = match args.metric {
        MetricArg::NegRmse => (table.numeric()?.cells, AlignmentMetric::NegRmse),
        MetricArg::Accuracy => {
            let cats = table.categorical(None)?;
            (
                cats.cells.iter().map(|c| c.map(|x| x as f64)).collect(),
                AlignmentMetric::Accuracy,
            )
        }
    };
    let k = table.n_raters();
    let n = table.n_targets();
    let humans_index: Vec<usize> = (0..k).filter(|&r| r != judge_index).collect();
    let mut humans = Vec::with_capacity(n * humans_index.len());
    let mut judge = Vec::with_capacity(n);
    for t in 0..n {
        judge.push(cells[t * k + judge_index]);
        humans.extend(humans_index.iter().map(|&r| cells[t * k + r]));
    }
    let options = AltTestOptions {
        epsilon: args.epsilon,
        alpha: args.alpha,
        metric,
        ..AltTestOptions::default()
    };
    let result = alt_test(&humans, n, humans_index.len(), &judge, &options)?;
    let name = |h: usize| table.raters[humans_index[h]].as_str();
    if json {
        return to_json(&AltTestOutput {
            epsilon: result.epsilon,
            alpha: result.alpha,
            winning_rate: result.winning_rate,
            advantage_probability: result.advantage_probability,
            passed: result.passed,
            annotators: result
                .annotators
                .iter()
                .map(|a| AltTestAnnotatorOutput {
                    rater: name(a.rater),
                    p_value: a.p_value,
                    won: a.won,
                    rho_judge: a.rho_judge,
                    rho_human: a.rho_human,
                })
                .collect(),
        });
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: can `{}` replace the {} annotators? (alt-test, ε = {}, BY q = {}, {})",
        table.file,
        args.judge,
        humans_index.len(),
        result.epsilon,
        result.alpha,
        match metric {
            AlignmentMetric::Accuracy => "accuracy",
            AlignmentMetric::NegRmse => "negative RMSE",
        }
    );
    let _ = writeln!(
        out,
        "{:<20} {:>6} {:>8} {:>8} {:>8}  judge wins",
        "left-out annotator", "items", "p", "ρ judge", "ρ human"
    );
    for a in &result.annotators {
        let _ = writeln!(
            out,
            "{:<20} {:>6} {:>8} {:>8.3} {:>8.3}  {}",
            visible(name(a.rater)),
            a.n_items,
            show_p(a.p_value),
            a.rho_judge,
            a.rho_human,
            if a.won { "yes" } else { "no" }
        );
    }
    for (h, items) in &result.skipped {
        let _ = writeln!(
            out,
            "{:<20} {:>6}  not tested (fewer than 30 items shared with the judge and another annotator)",
            name(*h),
            items
        );
    }
    let _ = writeln!(
        out,
        "winning rate ω = {:.3} ({}; passes when ω ≥ 0.5), advantage probability ρ = {:.3}",
        result.winning_rate,
        if result.passed { "passed" } else { "failed" },
        result.advantage_probability
    );
    Ok(out)
}

#[derive(Serialize)]
struct PpiGroupOutput<'a> {
    group: &'a str,
    n_labeled: usize,
    n_unlabeled: usize,
    estimate: Option<f64>,
    ci95: [Option<f64>; 2],
    lambda: Option<f64>,
    classical_estimate: Option<f64>,
    classical_ci95: [Option<f64>; 2],
}

#[derive(Serialize)]
struct PpiOutput<'a> {
    alpha: f64,
    groups: Vec<PpiGroupOutput<'a>>,
}

fn run_ppi(args: &PpiArgs, json: bool) -> Result<String, StatsError> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(StatsError::BadOption(format!(
            "--alpha must be between 0 and 1 (got {})",
            args.alpha
        )));
    }
    let table = read_prediction_csv(&args.file, &args.group, &args.judge, &args.expert)?;
    let results: Vec<_> = table
        .groups
        .iter()
        .map(|g| {
            (
                g,
                ppi_mean(&g.expert, &g.judge_labeled, &g.judge_unlabeled, args.alpha),
            )
        })
        .collect();
    if json {
        return to_json(&PpiOutput {
            alpha: args.alpha,
            groups: results
                .iter()
                .map(|(g, r)| PpiGroupOutput {
                    group: &g.name,
                    n_labeled: r.n_labeled,
                    n_unlabeled: r.n_unlabeled,
                    estimate: r.estimate,
                    ci95: r.ci,
                    lambda: r.lambda,
                    classical_estimate: r.classical_estimate,
                    classical_ci95: r.classical_ci,
                })
                .collect(),
        });
    }
    let level = format!("{:.0}%", (1.0 - args.alpha) * 100.0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: PPI++ means (power-tuned λ) beside expert-only and judge-only means, {level} CIs",
        table.file
    );
    let _ = writeln!(
        out,
        "{:<20} {:>6} {:>7} {:>7} {:>6} {:>20} {:>20} {:>7}",
        "group", "rated", "unrated", "PPI++", "λ", "PPI++ CI", "expert-only CI", "judge"
    );
    for (g, r) in &results {
        let _ = writeln!(
            out,
            "{:<20} {:>6} {:>7} {:>7} {:>6} {:>20} {:>20} {:>7}",
            visible(&g.name),
            r.n_labeled,
            r.n_unlabeled,
            show(r.estimate),
            show(r.lambda),
            format!("[{}, {}]", show(r.ci[0]), show(r.ci[1])),
            format!("[{}, {}]", show(r.classical_ci[0]), show(r.classical_ci[1])),
            show(r.judge_estimate)
        );
    }
    Ok(out)
}
