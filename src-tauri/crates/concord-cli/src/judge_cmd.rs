//! `concord judge …`: LLM judge runs from the command line. `run` applies the core's endpoint and
//! key-source rule and prints where the requests go and where the key comes from on stderr,
//! previews the cost, opens the run (the same settings resume the same run, found by their hash, and say so on stderr), then
//! sends the calls with a progress bar on stderr (hidden with `--json`); `status` lists runs with
//! counts, tokens, cost, failures and the models the provider says answered (and whether that
//! changed from the model asked for); `failures RUN` shows each failed call with its reason and raw
//! output; `prompt --run RUN (--call ID | --item ITEM)` shows the exact prompt of one call rendered
//! from the study beside the hash recorded when it was sent; `aggregate [median|mean|mode]` shows or chooses how a judge's repetitions become its
//! score; `reliability` reports each judge × criterion's consistency, calibration and bias;
//! `key set ACCOUNT` stores a key (read from stdin) in the OS keyring. Interrupting a run
//! is safe: rerunning the same command continues it, sending again only calls that were open.

use crate::study_cmd::{open_study, StudyCmdError};
use clap::{Args, Subcommand, ValueEnum};
use concord_core::app::judge_runs;
use concord_core::base::text::{quoted, visible};
use concord_core::judge::scores::RepetitionAggregate;
use concord_core::judge::{
    ApiKey, CallChoice, CancellationToken, Execution, HistoryDepth, JudgeError, KeyChoice,
    KeyError, Prices, Progress, PromptTemplate, ProviderKind, ResponseSelection, RunAnswering,
    RunPlan, RunPreview, RunReport, RunSettings, RunStatus,
};
use concord_core::panel::judge_reliability::{JudgeReliability, ReliabilityOptions};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum JudgeCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Judge(#[from] JudgeError),
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error("{0}")]
    Usage(String),
    #[error("cannot read {path}: {detail}")]
    Read { path: String, detail: String },
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    BatchFile(#[from] judge_runs::BatchFileError),
}

#[derive(Args, Debug)]
pub struct JudgeArgs {
    #[command(subcommand)]
    command: JudgeCommand,
}

#[derive(Subcommand, Debug)]
enum JudgeCommand {
    /// Judge the study's responses with an LLM (rerun the same command to resume).
    Run(Box<RunArgs>),
    /// Judge runs with their counts, tokens, cost, failures and the models that answered.
    Status {
        /// Only this run.
        run: Option<i64>,
    },
    /// The failed calls of a run, with reasons and raw outputs.
    Failures { run: i64 },
    /// The exact prompt of one call of a run, rendered from the study (the turns it shows, its
    /// reply, the run's template and criteria order), beside the SHA-256 recorded on the call
    /// when it was sent; `--json` gives the messages byte for byte.
    Prompt(PromptArgs),
    /// Keys in the OS keyring.
    Key {
        #[command(subcommand)]
        command: KeyCommand,
    },
    /// The study's aggregate of a judge's repetitions (median, mean or mode): shows it, or
    /// chooses it for every report of the study.
    Aggregate {
        #[arg(value_enum)]
        aggregate: Option<AggregateArg>,
    },
    /// Per judge × criterion: consistency across repetitions (Krippendorff's α with a bootstrap
    /// 95% CI, exact agreement, within-response SD), the repetitions-needed table beside
    /// Spearman–Brown, calibration (ECE, Brier, expected-score ICC) and the bias audit (length,
    /// self-preference, criteria order, quality bands), each with its rule.
    Reliability(ReliabilityArgs),
    /// A run's calls as an OpenAI batch file (what `vllm run-batch` reads), and its output
    /// file read back into the run.
    BatchFile {
        #[command(subcommand)]
        command: BatchFileCommand,
    },
}

#[derive(Subcommand, Debug)]
enum BatchFileCommand {
    /// Open (or find) the run these settings make, as `judge run` does, and write its open calls
    /// as batch request lines with stable custom_ids; nothing is sent.
    Export {
        #[command(flatten)]
        run: Box<RunArgs>,
        /// The JSONL file to write.
        #[arg(long, value_name = "FILE.jsonl")]
        out: PathBuf,
        /// Replace a file already at --out.
        #[arg(long)]
        force: bool,
    },
    /// Read a batch output file into run RUN: checked whole first (unknown or duplicate
    /// custom_ids refuse it, nothing written), calls already done skipped, so it can be imported
    /// again.
    Import {
        #[arg(long)]
        run: i64,
        file: PathBuf,
    },
}

#[derive(Args, Debug)]
struct PromptArgs {
    /// The run.
    #[arg(long)]
    run: i64,
    /// The call (its number, as `judge failures` lists it); a pairwise run's calls are named
    /// this way.
    #[arg(long, conflicts_with = "item", required_unless_present = "item")]
    call: Option<i64>,
    /// The item judged: its external id, else its number (a run that rates one answer at a time).
    #[arg(long)]
    item: Option<String>,
    /// Which repetition of the item's calls (from 1).
    #[arg(long, default_value_t = 1, requires = "item")]
    repetition: i64,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum AggregateArg {
    Median,
    Mean,
    Mode,
}

impl AggregateArg {
    fn aggregate(self) -> RepetitionAggregate {
        match self {
            AggregateArg::Median => RepetitionAggregate::Median,
            AggregateArg::Mean => RepetitionAggregate::Mean,
            AggregateArg::Mode => RepetitionAggregate::Mode,
        }
    }
}

#[derive(Args, Debug)]
struct ReliabilityArgs {
    /// Rubric id; the one rubric with judge runs when not given.
    #[arg(long)]
    rubric: Option<String>,
    /// Aggregate of repetitions for this report; the study's when not given.
    #[arg(long, value_enum)]
    aggregate: Option<AggregateArg>,
    /// Seed of the α bootstrap.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = 1000)]
    resamples: usize,
    /// Equal-width bins of the reliability diagram.
    #[arg(long, default_value_t = 10)]
    bins: usize,
    /// The reliability a judge's aggregate should reach; the report gives the repetitions that
    /// takes (Spearman–Brown).
    #[arg(long, default_value_t = concord_core::panel::judge_reliability::DEFAULT_TARGET_RELIABILITY)]
    target_reliability: f64,
    /// A JSON object mapping source keys to model families (`{"gpt4o": "gpt-4o"}`), in place of
    /// the study's source families for the self-preference audit.
    #[arg(long, value_name = "FILE")]
    families: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum KeyCommand {
    /// Store the key read from standard input under ACCOUNT (service "concord").
    Set { account: String },
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum ProviderArg {
    OpenaiCompatible,
    Anthropic,
}

#[derive(Args, Debug)]
struct RunArgs {
    #[arg(long, value_enum)]
    provider: ProviderArg,
    /// Up to the version segment, e.g. http://localhost:11434/v1 (Anthropic defaults to its API);
    /// https, or http only to this machine.
    #[arg(long)]
    base_url: Option<String>,
    #[arg(long)]
    model: String,
    /// Environment variable holding the API key, named like one (e.g. OPENAI_API_KEY, HF_TOKEN;
    /// never CONCORD_* or a PASS/SECRET name); a local server may need none.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// OS keyring account holding the key (service "concord"); falls back to --api-key-env.
    #[arg(long, value_name = "ACCOUNT")]
    keyring_account: Option<String>,
    /// Rubric id; the rubric of the study's conversations by default.
    #[arg(long)]
    rubric: Option<String>,
    /// all | expert-rated | sample:N
    #[arg(long, default_value = "all")]
    responses: String,
    /// Seed of the sample.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value_t = 1)]
    repetitions: u32,
    /// Sampling temperature (both papers used 0.7; 0 for the most repeatable replies).
    #[arg(long, default_value_t = 0.7)]
    temperature: f64,
    #[arg(long)]
    top_p: Option<f64>,
    #[arg(long, default_value_t = 1024)]
    max_tokens: u32,
    /// The judge rater's name in the study (the model id by default).
    #[arg(long)]
    rater_name: Option<String>,
    /// The judge's model family (guessed from the model id by default).
    #[arg(long)]
    family: Option<String>,
    /// A user-message template with {{history}} (the turns before the reply, each as
    /// `[turn N] ROLE:` and its text) or {{context}} (a single-turn conversation's message, else
    /// the same turns) and {{response}} (a session rubric: no {{response}}); replaces the
    /// rubric's default.
    #[arg(long, value_name = "FILE")]
    prompt_file: Option<PathBuf>,
    /// A system-message template to go with --prompt-file.
    #[arg(long, value_name = "FILE")]
    system_file: Option<PathBuf>,
    /// How many turns before a reply the judge sees: a number (messages of any role; 0 shows the
    /// reply alone) or `all`. A session rubric's item always shows the whole conversation. Part
    /// of the run's settings: another depth is another run.
    #[arg(long, value_name = "N|all", default_value = "10", value_parser = parse_history, allow_hyphen_values = true)]
    history: HistoryDepth,
    /// Use the provider's batch API (cheaper, slower; resumable too).
    #[arg(long)]
    batch: bool,
    /// Ask an OpenAI-compatible server (vLLM, OpenAI) for token log-probabilities and store each
    /// criterion's expected score beside the sampled one (calibration).
    #[arg(long)]
    logprobs: bool,
    /// List the criteria in a seeded random order per call, recorded per call (the order-bias
    /// audit); needs the rubric's default prompt.
    #[arg(long)]
    shuffle_criteria: bool,
    /// A pairwise rubric only: ask every pair twice, the sides swapped the second time (the
    /// position-consistency and position-bias check).
    #[arg(long)]
    both_orders: bool,
    /// Ask for a JSON-schema-constrained reply (OpenAI-compatible `response_format`, vLLM's
    /// guided decoding; an Anthropic forced tool): one integer enum per criterion, rationale first.
    #[arg(long)]
    structured: bool,
    /// Ask the judge to quote the reply's words that show each of the rubric's span codes
    /// (`"spans": [{"code", "quote"}]`); each quote is located in the reply, and one that is not
    /// found is kept and listed by `judge status`.
    #[arg(long)]
    spans: bool,
    #[arg(long, default_value_t = 8)]
    concurrency: u32,
    /// Requests per minute.
    #[arg(long)]
    rpm: Option<u32>,
    /// Tokens per minute.
    #[arg(long)]
    tpm: Option<u32>,
    #[arg(long, default_value_t = 120)]
    timeout_secs: u64,
    #[arg(long, default_value_t = 5)]
    max_retries: u32,
    /// US dollars per million input tokens.
    #[arg(long, default_value_t = 0.0)]
    price_input: f64,
    /// US dollars per million output tokens.
    #[arg(long, default_value_t = 0.0)]
    price_output: f64,
    /// Send again the calls that failed in an earlier session.
    #[arg(long)]
    retry_failed: bool,
    /// Seconds between polls of a submitted batch.
    #[arg(long, default_value_t = 30)]
    poll_secs: u64,
    /// Print the estimate and stop.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(args: &JudgeArgs, db: Option<&Path>, json: bool) -> Result<String, JudgeCmdError> {
    match &args.command {
        JudgeCommand::Run(a) => run_judge(a, db, json),
        JudgeCommand::Status { run } => status(*run, db, json),
        JudgeCommand::Failures { run } => failures(*run, db, json),
        JudgeCommand::Prompt(a) => call_prompt(a, db, json),
        JudgeCommand::Key {
            command: KeyCommand::Set { account },
        } => set_key(account),
        JudgeCommand::BatchFile {
            command: BatchFileCommand::Export { run, out, force },
        } => export_batch_file(run, out, *force, db, json),
        JudgeCommand::BatchFile {
            command: BatchFileCommand::Import { run, file },
        } => import_batch_file(*run, file, db, json),
        JudgeCommand::Aggregate { aggregate } => aggregate_repetitions(*aggregate, db, json),
        JudgeCommand::Reliability(a) => reliability(a, db, json),
    }
}

/// A run's status as `judge status --json` gives it: the status's keys with `answering_models`
/// and `model_changed` beside them.
#[derive(serde::Serialize)]
struct StatusOut<'a> {
    #[serde(flatten)]
    status: &'a RunStatus,
    #[serde(flatten)]
    answering: &'a RunAnswering,
    /// A run that asked for spans: the quotes not found in their replies.
    #[serde(skip_serializing_if = "Option::is_none")]
    unlocated_quotes: Option<&'a Vec<concord_core::judge::spans::UnlocatedQuote>>,
}

/// `judge status`: every run's state, or one run's, with its reply mode's unreadable count and
/// the models that answered its calls.
fn status(run: Option<i64>, db: Option<&Path>, json: bool) -> Result<String, JudgeCmdError> {
    let study = crate::study_cmd::open_study_to_read(db)?;
    let list = match run {
        Some(id) => vec![judge_runs::run_status(&study, id)?],
        None => judge_runs::runs(&study)?,
    };
    let answering = list
        .iter()
        .map(|s| judge_runs::answering(&study, s))
        .collect::<Result<Vec<_>, _>>()?;
    let unlocated = list
        .iter()
        .map(|s| judge_runs::unlocated_quotes(&study, s.id))
        .collect::<Result<Vec<_>, _>>()?;
    if json {
        let out: Vec<StatusOut<'_>> = list
            .iter()
            .zip(&answering)
            .zip(&unlocated)
            .map(|((status, answering), unlocated)| StatusOut {
                status,
                answering,
                unlocated_quotes: unlocated.as_ref(),
            })
            .collect();
        return Ok(format!("{}\n", serde_json::to_string_pretty(&out)?));
    }
    if list.is_empty() {
        return Ok("No judge runs in this study.\n".into());
    }
    let modes = judge_runs::reply_modes(&study)?;
    Ok(list
        .iter()
        .zip(&answering)
        .zip(&unlocated)
        .map(|((s, a), unlocated)| {
            let mut text = render_status(s);
            text.push_str(&render_answering(&s.model, a));
            if let Some(quotes) = unlocated {
                text.push_str(&render_unlocated(quotes));
            }
            if let Some(m) = modes.iter().find(|m| m.run_id == s.id) {
                let _ = writeln!(
                    text,
                    "  replies: {} — {} of {} answered calls unreadable",
                    m.mode.replace('_', " "),
                    m.unreadable,
                    m.answered
                );
            }
            text
        })
        .collect())
}

/// `judge failures`: the calls of a run that failed, each with its reason and raw reply.
fn failures(run: i64, db: Option<&Path>, json: bool) -> Result<String, JudgeCmdError> {
    let study = crate::study_cmd::open_study_to_read(db)?;
    let fails = judge_runs::failures(&study, run)?;
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&fails)?));
    }
    let mut out = format!("{} failed calls in run {run}\n", fails.len());
    for f in &fails {
        let _ = writeln!(
            out,
            "\n#{} conversation {} / {} (repetition {}, {} attempts): {} — {}",
            f.call_id, f.conversation, f.source, f.repetition, f.attempts, f.kind, f.reason
        );
        if let Some(raw) = &f.raw_output {
            let excerpt: String = raw.chars().take(400).collect();
            let _ = writeln!(out, "  raw: {excerpt}");
        }
    }
    Ok(out)
}

/// `--history N|all`.
fn parse_history(s: &str) -> Result<HistoryDepth, String> {
    HistoryDepth::parse(s).ok_or_else(|| {
        format!("expected a whole number of turns (0 or more) or \"all\", not {s:?}")
    })
}

/// `judge prompt`: one call's prompt rendered from the study, with its hash beside the one
/// recorded when it was sent.
fn call_prompt(a: &PromptArgs, db: Option<&Path>, json: bool) -> Result<String, JudgeCmdError> {
    let study = crate::study_cmd::open_study_to_read(db)?;
    let choice = match (&a.call, &a.item) {
        (Some(call), _) => CallChoice::Call(*call),
        (None, Some(item)) => CallChoice::Item {
            item: item.clone(),
            repetition: a.repetition,
        },
        (None, None) => return Err(JudgeCmdError::Usage("give --call or --item".into())),
    };
    let p = judge_runs::call_prompt(&study, a.run, &choice)?;
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&p)?));
    }
    let mut out = String::new();
    let place = match p.turn {
        Some(t) => format!("turn {t}"),
        None => "the whole conversation".into(),
    };
    let _ = writeln!(
        out,
        "Run {}, call {}: item {} (conversation {}, {place}), repetition {}, {}",
        p.run_id,
        p.call_id,
        quoted(&p.item),
        quoted(&p.conversation),
        p.repetition,
        p.state.replace('_', " ")
    );
    let _ = writeln!(
        out,
        "History: {} turn{} shown (the run's depth: {})",
        p.turns_shown,
        if p.turns_shown == 1 { "" } else { "s" },
        p.history
    );
    let _ = writeln!(out, "Prompt SHA-256: {}", p.prompt_sha256);
    match (&p.recorded_sha256, p.matches_recorded) {
        (Some(_), Some(true)) => {
            let _ = writeln!(
                out,
                "Recorded when sent: the same (this is the prompt that was sent)"
            );
        }
        (Some(r), _) => {
            let _ = writeln!(
                out,
                "Recorded when sent: {r} — different: a text this call shows has changed since"
            );
        }
        (None, _) => {
            let _ = writeln!(
                out,
                "Recorded when sent: nothing yet (the call has not been sent)"
            );
        }
    }
    if let Some(system) = &p.system {
        let _ = writeln!(out, "\n=== system message ===\n{system}");
    }
    let _ = writeln!(out, "\n=== user message ===\n{}", p.user);
    Ok(out)
}

/// `judge key set`: the provider key read from standard input, kept in the OS keyring.
fn set_key(account: &str) -> Result<String, JudgeCmdError> {
    let mut secret = String::new();
    std::io::stdin()
        .read_line(&mut secret)
        .map_err(|e| JudgeCmdError::Read {
            path: "standard input".into(),
            detail: e.to_string(),
        })?;
    let secret = secret.trim();
    if secret.is_empty() {
        return Err(JudgeCmdError::Usage("no key on standard input".into()));
    }
    judge_runs::save_key(account, &ApiKey::new(secret))?;
    Ok(format!(
        "Stored the key for {} in the OS keyring.\n",
        quoted(&account)
    ))
}

/// `judge batch-file export`: the run's open calls written as batch request lines.
fn export_batch_file(
    run: &RunArgs,
    out: &Path,
    force: bool,
    db: Option<&Path>,
    json: bool,
) -> Result<String, JudgeCmdError> {
    let mut study = open_study(db)?;
    let settings = settings_with_prompt(run, &study)?;
    let (plan, written) = judge_runs::batch_file_export(&mut study, &settings, out, force)?;
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&written)?));
    }
    Ok(format!(
        "{} run {}: wrote {} request lines to {}\n",
        if plan.resumed { "Resumed" } else { "Opened" },
        written.run_id,
        written.lines,
        out.display()
    ))
}

/// `judge batch-file import`: a batch output file read back into its run.
fn import_batch_file(
    run: i64,
    file: &Path,
    db: Option<&Path>,
    json: bool,
) -> Result<String, JudgeCmdError> {
    let mut study = open_study(db)?;
    let r = judge_runs::batch_file_import(&mut study, run, file)?;
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&r)?));
    }
    Ok(format!(
        "run {}: {} lines — {} scored, {} failed, {} already done; {} calls still open\n",
        r.run_id, r.lines, r.done, r.failed, r.already_done, r.missing
    ))
}

/// `judge aggregate`: the study's aggregate of a judge's repetitions, shown or chosen.
fn aggregate_repetitions(
    aggregate: Option<AggregateArg>,
    db: Option<&Path>,
    json: bool,
) -> Result<String, JudgeCmdError> {
    let mut study = open_study(db)?;
    if let Some(a) = aggregate {
        judge_runs::set_repetition_aggregate(&mut study, a.aggregate())?;
    }
    let now = judge_runs::repetition_aggregate(&study)?;
    if json {
        return Ok(format!(
            "{}\n",
            serde_json::json!({"aggregate": now.as_str()})
        ));
    }
    Ok(format!(
        "A judge's score of a multi-repetition run is the {} of its repetitions.\n",
        now.as_str()
    ))
}

/// `judge reliability`: the judge reliability report, as JSON or as text.
fn reliability(
    a: &ReliabilityArgs,
    db: Option<&Path>,
    json: bool,
) -> Result<String, JudgeCmdError> {
    let study = open_study(db)?;
    let families = match &a.families {
        Some(path) => serde_json::from_str(&read_text(path)?).map_err(|e| {
            JudgeCmdError::Usage(format!(
                "{} is not a JSON object of source keys to families: {e}",
                path.display()
            ))
        })?,
        None => Default::default(),
    };
    let options = ReliabilityOptions {
        rubric: a.rubric.clone(),
        aggregate: a.aggregate.map(AggregateArg::aggregate),
        seed: a.seed,
        resamples: a.resamples,
        bins: a.bins,
        families,
        target_reliability: a.target_reliability,
    };
    let report = judge_runs::reliability(&study, &options)?;
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&report)?));
    }
    Ok(render_reliability(&report))
}

fn figure(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.3}"))
}

fn interval(ci: &[Option<f64>; 2]) -> String {
    format!("[{}, {}]", figure(ci[0]), figure(ci[1]))
}

fn render_reliability(report: &[JudgeReliability]) -> String {
    if report.is_empty() {
        return "No judge runs to report on.\n".into();
    }
    let mut out = String::new();
    for r in report {
        let _ = writeln!(
            out,
            "{} · {} ({}, {} repetitions, {} of repetitions; {} responses, {} with experts)",
            quoted(&r.judge),
            r.criterion,
            r.scale,
            r.repetitions,
            r.aggregate.as_str(),
            r.n_responses,
            r.n_compared
        );
        let c = &r.consistency;
        let _ = writeln!(
            out,
            "  self-consistency: α ({}) {} {}, exact agreement {}, within-response SD {}",
            c.alpha_metric,
            figure(c.alpha),
            interval(&c.alpha_ci95),
            figure(c.exact_agreement),
            figure(c.mean_within_sd)
        );
        for row in &r.repetitions_needed.rows {
            let _ = writeln!(
                out,
                "  k = {}: ICC(A,1) {} {}, Spearman–Brown {}",
                row.k,
                figure(row.icc_a1),
                interval(&row.icc_a1_ci95),
                figure(row.predicted_icc_a1)
            );
        }
        let _ = writeln!(
            out,
            "  repetitions for reliability {:.2}: {}",
            r.target.reliability,
            r.target.repetitions.map_or("—".into(), |k| k.to_string())
        );
        let cal = &r.calibration;
        match &cal.binary {
            Some(b) => {
                let _ = writeln!(
                    out,
                    "  calibration ({}): ECE {}, Brier {}",
                    cal.source.unwrap_or("none"),
                    figure(b.ece),
                    figure(b.brier)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "  calibration ({}): ICC(A,1) expected {} vs sampled {}",
                    cal.source.unwrap_or("none"),
                    figure(cal.icc_a1_expected),
                    figure(cal.icc_a1_sampled)
                );
            }
        }
        let b = &r.bias;
        for (name, e) in [
            ("bias", &b.overall),
            ("length slope", &b.length),
            ("self-preference", &b.self_preference),
            ("order (first − second half)", &b.order),
        ] {
            let _ = writeln!(
                out,
                "  {name}: {} {} (n {})",
                figure(e.estimate),
                interval(&e.ci95),
                e.n
            );
        }
        for band in &b.bands {
            let _ = writeln!(
                out,
                "  quality band {} (experts {}–{}, n {}): ICC(A,1) {}, bias {}",
                band.band,
                figure(band.range[0]),
                figure(band.range[1]),
                band.n_responses,
                figure(band.icc_a1),
                figure(band.bias.estimate)
            );
        }
    }
    out
}

fn read_text(path: &Path) -> Result<String, JudgeCmdError> {
    std::fs::read_to_string(path).map_err(|e| JudgeCmdError::Read {
        path: path.display().to_string(),
        detail: e.to_string(),
    })
}

fn settings_from(a: &RunArgs) -> Result<RunSettings, JudgeCmdError> {
    let provider = match a.provider {
        ProviderArg::OpenaiCompatible => ProviderKind::OpenaiCompatible,
        ProviderArg::Anthropic => ProviderKind::Anthropic,
    };
    let base_url = match (&a.base_url, provider) {
        (Some(u), _) => u.clone(),
        (None, ProviderKind::Anthropic) => "https://api.anthropic.com/v1".into(),
        (None, ProviderKind::OpenaiCompatible) => {
            return Err(JudgeCmdError::Usage(
                "--base-url is required for an OpenAI-compatible server (e.g. http://localhost:11434/v1)".into(),
            ))
        }
    };
    let mut s = RunSettings::new(provider, &base_url, &a.model);
    s.selection = ResponseSelection::parse(&a.responses).ok_or_else(|| {
        JudgeCmdError::Usage(format!(
            "--responses {:?}: expected all, expert-rated or sample:N",
            a.responses
        ))
    })?;
    s.rubric = a.rubric.clone();
    s.seed = a.seed;
    s.repetitions = a.repetitions;
    s.temperature = a.temperature;
    s.top_p = a.top_p;
    s.max_tokens = a.max_tokens;
    s.rater_name = a.rater_name.clone();
    s.family = a.family.clone();
    s.batch = a.batch;
    s.logprobs = a.logprobs;
    s.shuffle_criteria = a.shuffle_criteria;
    s.both_orders = a.both_orders;
    s.structured = a.structured;
    s.spans = a.spans;
    s.history = a.history;
    s.prices = Prices {
        input_per_million: a.price_input,
        output_per_million: a.price_output,
    };
    Ok(s)
}

fn run_judge(a: &RunArgs, db: Option<&Path>, json: bool) -> Result<String, JudgeCmdError> {
    let mut study = open_study(db)?;
    let settings = settings_with_prompt(a, &study)?;
    // The endpoint and key-source rule, and what it allows shown before anything is sent.
    let choice = KeyChoice {
        keyring_account: a.keyring_account.clone(),
        env_var: a.api_key_env.clone(),
        ..KeyChoice::default()
    };
    let destination = judge_runs::destination(&settings, &choice)?;
    crate::terminal::say(&format!("concord: judge {destination}"));
    let preview = judge_runs::preview(&study, &settings)?;
    announce_preview(&preview, settings.repetitions);
    if a.dry_run {
        if json {
            return Ok(format!("{}\n", serde_json::to_string_pretty(&preview)?));
        }
        return Ok(format!(
            "Dry run: nothing was sent. Settings hash {}\n",
            preview.settings_sha256
        ));
    }
    let start = concord_core::app::judge_start::start_judge_run(&mut study, &settings, &choice)?;
    if let Some(note) = &start.note {
        crate::terminal::say(&format!("concord: {note}"));
    }
    let session = start.session;
    let total = session.plan.status.total;
    announce_plan(&session.plan);
    let exec = Execution {
        concurrency: a.concurrency,
        requests_per_minute: a.rpm,
        tokens_per_minute: a.tpm,
        timeout_ms: a.timeout_secs.saturating_mul(1000),
        max_retries: a.max_retries,
        retry_failed: a.retry_failed,
        batch_poll_ms: a.poll_secs.saturating_mul(1000),
        ..Execution::default()
    };
    let bar = progress_bar(total, json);
    let mut on_progress = |p: &Progress| {
        bar.set_position(p.done + p.failed);
        let eta = p
            .eta_ms
            .map(|ms| format!(", ETA {}s", ms / 1000))
            .unwrap_or_default();
        bar.set_message(format!(
            "{} failed, {} open, {:.1}/s{eta}, ${:.4}",
            p.failed, p.in_flight, p.per_second, p.cost_usd
        ));
    };
    let report = session.execute(
        &exec,
        start.key,
        &CancellationToken::new(),
        &mut on_progress,
    )?;
    bar.finish_and_clear();
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&report)?));
    }
    Ok(render_report(&report))
}

/// The run's settings from the arguments, with the prompt files read when given (a system prompt
/// only goes with a user prompt).
fn settings_with_prompt(
    a: &RunArgs,
    study: &concord_core::app::open_study::OpenStudy,
) -> Result<RunSettings, JudgeCmdError> {
    let mut settings = settings_from(a)?;
    if let Some(file) = &a.prompt_file {
        let preview = judge_runs::preview(study, &settings)?;
        let base = judge_runs::default_prompt(study, Some(&preview.rubric))?;
        settings.prompt = Some(PromptTemplate {
            format: base.format,
            system: a.system_file.as_deref().map(read_text).transpose()?,
            user: read_text(file)?,
        });
    } else if a.system_file.is_some() {
        return Err(JudgeCmdError::Usage(
            "--system-file goes with --prompt-file".into(),
        ));
    }
    Ok(settings)
}

/// What a run would send and cost, on stderr before anything is sent.
fn announce_preview(preview: &RunPreview, repetitions: u32) {
    let e = &preview.estimate;
    crate::terminal::say(&format!(
        "concord: {} calls ({} responses × {} repetitions, rubric {}); estimated {} input + {} output tokens ≈ ${:.4}",
        preview.calls, preview.responses, repetitions, preview.rubric, e.input_tokens, e.output_tokens, e.cost_usd
    ));
    if preview.responses_without_text > 0 {
        crate::terminal::say(&format!(
            "concord: {} selected responses have no text and are left out",
            preview.responses_without_text
        ));
    }
}

/// Whether the run starts or resumes, on stderr.
fn announce_plan(plan: &RunPlan) {
    if plan.resumed {
        crate::terminal::say(&format!(
            "concord: resuming judge run {} (same settings, hash {}): {} of {} done, {} failed",
            plan.run_id,
            &plan.status.settings_sha256[..12],
            plan.status.done,
            plan.status.total,
            plan.status.failed
        ));
    } else {
        crate::terminal::say(&format!("concord: started judge run {}", plan.run_id));
    }
}

/// The run's progress bar on stderr (hidden with `--json`).
fn progress_bar(total: i64, json: bool) -> ProgressBar {
    let bar = ProgressBar::new(total.max(0) as u64);
    if json {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    } else {
        bar.set_draw_target(ProgressDrawTarget::stderr());
    }
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// A finished run as text: its status and what to do about failed or batched calls.
fn render_report(report: &RunReport) -> String {
    let mut out = render_status(&report.status);
    if report.status.failed > 0 {
        let _ = writeln!(
            out,
            "  see `concord judge failures {}`; rerun with --retry-failed to send them again",
            report.run_id
        );
    }
    if report.status.in_flight > 0 {
        let _ = writeln!(
            out,
            "  {} calls wait in a provider batch; rerun the same command to collect them",
            report.status.in_flight
        );
    }
    out
}

/// The models that answered a run, one line: each with its fingerprint and calls, and whether
/// the model changed from the one asked for.
/// A spans run's quotes that were not found in their replies, one line each.
fn render_unlocated(quotes: &[concord_core::judge::spans::UnlocatedQuote]) -> String {
    let mut out = format!(
        "  spans: {} quotes not found in their replies\n",
        quotes.len()
    );
    for q in quotes {
        let _ = writeln!(
            out,
            "    {}, turn {}, {} — {}: {}",
            visible(&q.conversation_id),
            q.turn,
            visible(&q.source),
            visible(&q.code),
            visible(&q.quote)
        );
    }
    out
}

fn render_answering(asked: &str, a: &RunAnswering) -> String {
    if a.answering_models.is_empty() {
        return "  answered by: the provider named no model\n".into();
    }
    let names: Vec<String> = a
        .answering_models
        .iter()
        .map(|m| {
            let model = m.model.as_deref().map_or("(unnamed)".into(), visible);
            let fingerprint = m
                .system_fingerprint
                .as_deref()
                .map_or(String::new(), |f| format!(" [{}]", visible(f)));
            format!("{model}{fingerprint} ({} calls)", m.calls)
        })
        .collect();
    let verdict = if a.model_changed {
        format!("MODEL CHANGED from the asked {}", visible(asked))
    } else {
        "as asked".to_string()
    };
    format!("  answered by: {} — {verdict}\n", names.join(", "))
}

fn render_status(s: &RunStatus) -> String {
    format!(
        "run {} — {} ({} {}, {}), rubric {}, temperature {}, {} repetition(s){}\n  {} calls: {} done, {} failed, {} pending, {} in flight; tokens {} in / {} out; cost ${:.4}\n  prompt sha256 {}\n",
        s.id,
        visible(&s.rater),
        s.provider,
        s.model,
        s.base_url,
        s.rubric,
        s.temperature,
        s.repetitions,
        if s.batch { ", batch" } else { "" },
        s.total,
        s.done,
        s.failed,
        s.pending,
        s.in_flight,
        s.input_tokens,
        s.output_tokens,
        s.cost_usd,
        s.prompt_sha256
    )
}
