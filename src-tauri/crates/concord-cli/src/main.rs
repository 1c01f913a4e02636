//! The `concord` command line: every headless job (demo study, statistics on CSV files, imports,
//! agreement reports, exports, judge runs) as a thin layer over `concord-core`.

mod adjudication_cmd;
mod agreement_cmd;
mod assign_cmd;
mod audit_cmd;
mod calibration_cmd;
mod consensus_cmd;
mod export_cmd;
mod gstudy_cmd;
mod import_cmd;
mod judge_cmd;
mod package_cmd;
mod pairs_cmd;
mod phi_cmd;
mod power_cmd;
mod prevalence_cmd;
mod serve_cmd;
mod signoff_cmd;
mod stats_cmd;
mod stats_error;
mod study_cmd;
mod terminal;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "concord",
    version,
    about = "Rate LLM answers and measure judge-expert agreement"
)]
struct Cli {
    /// The study file (.concord). Without it, the desktop app's default study is used.
    #[arg(long, global = true, value_name = "STUDY.concord")]
    db: Option<PathBuf>,
    /// Print one JSON document on stdout (NaN and infinities print as null).
    #[arg(long, global = true)]
    json: bool,
    /// The environment variable holding the passphrase of an encrypted study (never pass the
    /// passphrase itself as an argument).
    #[arg(long, global = true, value_name = "VAR", default_value = study_cmd::PASSPHRASE_ENV)]
    passphrase_env: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Create the demo study (at --db when given); refuses a file that is not a Concord study.
    Demo,
    /// Show what the study holds: rubrics, conversations, responses per source, raters, ratings.
    Overview,
    /// Encrypt, decrypt or re-key the study (passphrases from environment variables).
    Study(study_cmd::StudyArgs),
    /// List the expert profiles; --lock restricts the rating screen to them behind the lead
    /// passphrase (from the variable --lead-passphrase-env names), --unlock reopens it.
    Profiles {
        #[arg(long, conflicts_with = "unlock", requires = "lead_passphrase_env")]
        lock: bool,
        #[arg(long)]
        unlock: bool,
        /// The environment variable holding the lead passphrase (at least 8 characters, and hard to guess: a zxcvbn score of 3 of 4).
        #[arg(long, value_name = "VAR")]
        lead_passphrase_env: Option<String>,
    },
    /// Agreement statistics on a long-form CSV file (no study needed).
    Stats(stats_cmd::StatsArgs),
    /// Import released datasets or long-form files into the study.
    Import(import_cmd::ImportArgs),
    /// Judge–expert agreement over the study (the MentalAlign table, or the full report).
    Agreement(agreement_cmd::AgreementArgs),
    /// LLM judge runs: run (resumable), status, failures, keys.
    Judge(judge_cmd::JudgeArgs),
    /// Add a human expert to the study.
    Expert(assign_cmd::ExpertArgs),
    /// Add a custom rubric file to the study.
    Rubric(assign_cmd::RubricArgs),
    /// Sample conversations and assign each response to exactly k experts.
    Assign(assign_cmd::AssignArgs),
    /// The assignment with every expert's progress (assigned, completed, remaining).
    Assignment,
    /// Pairwise preferences: draw the pairs, assign them to experts, status.
    Pairs(pairs_cmd::PairsArgs),
    /// Rater packages: one expert's blinded study file out, their ratings back in.
    Package(package_cmd::PackageArgs),
    /// Export ratings (long/wide CSV, XLSX workbook) or an expert's fill-in rating sheet.
    Export(export_cmd::ExportArgs),
    /// Filled XLSX rating sheets: import one back as its expert's ratings.
    Sheet(export_cmd::SheetArgs),
    /// Discrepancies between experts and their adjudication: list, resolve, status.
    Adjudication(adjudication_cmd::AdjudicationArgs),
    /// Calibration: gold items with keys, the pass rule, experts' status, the lead's override.
    Calibration(calibration_cmd::CalibrationArgs),
    /// The expert panel's rater quality: severity, drift, test–retest, time, straight-lining.
    Raters(adjudication_cmd::RatersArgs),
    /// The PHI guard: scan texts for identifiers, redact them or keep them with a reason.
    Phi(phi_cmd::PhiArgs),
    /// The tamper-evident audit trail: verify the chain, list entries.
    Audit(audit_cmd::AuditArgs),
    /// Expert sign-off: signing passphrase, signing an assignment, signatures and their standing.
    Signoff(signoff_cmd::SignoffArgs),
    /// Serve the rating screen to experts' browsers; invite, revoke, status.
    Serve(serve_cmd::ServeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.json;
    study_cmd::set_passphrase_env(&cli.passphrase_env);
    // Lead keys live in the OS keyring (or a private file), or in the folder CONCORD_KEY_DIR names.
    concord_core::app::open_study::keep_lead_keys_on_this_machine();
    let result: Result<String, Box<dyn std::error::Error>> = match cli.command {
        Command::Demo => study_cmd::demo(cli.db.as_deref(), cli.json).map_err(Into::into),
        Command::Overview => study_cmd::overview(cli.db.as_deref(), cli.json).map_err(Into::into),
        Command::Study(args) => {
            study_cmd::study(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Profiles {
            lock,
            unlock,
            lead_passphrase_env,
        } => {
            let change = if lock {
                Some(true)
            } else if unlock {
                Some(false)
            } else {
                None
            };
            study_cmd::profiles(
                cli.db.as_deref(),
                change,
                lead_passphrase_env.as_deref(),
                cli.json,
            )
            .map_err(Into::into)
        }
        Command::Stats(args) => stats_cmd::run(&args, cli.json).map_err(Into::into),
        Command::Import(args) => {
            import_cmd::run(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Agreement(args) => {
            agreement_cmd::run(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Judge(args) => {
            judge_cmd::run(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Expert(args) => {
            assign_cmd::expert(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Rubric(args) => {
            assign_cmd::rubric(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Assign(args) => {
            assign_cmd::assign(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Assignment => assign_cmd::table(cli.db.as_deref(), cli.json).map_err(Into::into),
        Command::Pairs(args) => {
            pairs_cmd::run(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Package(args) => {
            package_cmd::run(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Export(args) => {
            export_cmd::run(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Sheet(args) => {
            export_cmd::sheet(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Adjudication(args) => {
            adjudication_cmd::run(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Calibration(args) => {
            calibration_cmd::run(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Raters(args) => {
            adjudication_cmd::raters(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Audit(args) => {
            audit_cmd::run(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Signoff(args) => {
            signoff_cmd::run(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Serve(args) => {
            serve_cmd::run(&args, cli.db.as_deref(), cli.json).map_err(Into::into)
        }
        Command::Phi(args) => phi_cmd::run(&args, cli.db.as_deref(), cli.json).map_err(Into::into),
    };
    match result {
        Ok(out) => {
            terminal::print_output(&out, json);
            ExitCode::SUCCESS
        }
        Err(e) => {
            terminal::say(&format!("concord: {e}"));
            ExitCode::FAILURE
        }
    }
}
