//! Pairwise preferences from the command line: `concord pairs design` (draw the pairs of the
//! study's pairwise rubric: `--all`, `--per-conversation N`, or `--balanced N`, with `--seed S`),
//! `concord pairs assign --k K --seed S` (exactly k experts per pair, sides randomised per
//! rater) and `concord pairs status` (the design and every rater's progress).

use crate::study_cmd::{open_study, open_study_to_read, StudyCmdError};
use concord_core::base::text::quoted;
use concord_core::workflow::pairs::{DesignMethod, PairsError};
use std::fmt::Write as _;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum PairsCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Pairs(#[from] PairsError),
    #[error("{0}")]
    Usage(String),
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

#[derive(clap::Args, Debug)]
pub struct PairsArgs {
    #[command(subcommand)]
    pub command: PairsCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum PairsCommand {
    /// Draw the pairs of the study's pairwise rubric (once).
    Design {
        /// Every pair of answers within each conversation.
        #[arg(long, conflicts_with_all = ["per_conversation", "balanced"])]
        all: bool,
        /// A seeded sample of N pairs per conversation.
        #[arg(long, value_name = "N", conflicts_with = "balanced")]
        per_conversation: Option<usize>,
        /// N pairs per conversation, every two sources meeting equally often.
        #[arg(long, value_name = "N")]
        balanced: Option<usize>,
        /// Seed of the draw; the same seed draws the same pairs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The pairwise rubric (its id): by default the shipped pairwise form of the study's
        /// rubric (`mentalbench-pairs` for MentalBench).
        #[arg(long)]
        rubric: Option<String>,
        /// Compare the answers of this rubric's conversations (needed when the study holds
        /// conversations of several rubrics and the pairwise rubric is not a shipped one).
        #[arg(long, value_name = "RUBRIC")]
        of: Option<String>,
    },
    /// Give the design's pairs to the experts, exactly k experts per pair.
    Assign {
        /// Experts per pair (the fixed overlap).
        #[arg(long)]
        k: usize,
        /// Seed of every random choice (who gets which pair, sides, order).
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        rubric: Option<String>,
    },
    /// The design and every rater's progress on it.
    Status {
        #[arg(long)]
        rubric: Option<String>,
    },
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, PairsCmdError> {
    Ok(format!("{}\n", serde_json::to_string_pretty(value)?))
}

pub fn run(args: &PairsArgs, db: Option<&Path>, as_json: bool) -> Result<String, PairsCmdError> {
    match &args.command {
        PairsCommand::Design {
            all,
            per_conversation,
            balanced,
            seed,
            rubric,
            of,
        } => {
            let method = match (all, per_conversation, balanced) {
                (true, None, None) => DesignMethod::All,
                (false, Some(n), None) => DesignMethod::PerConversation(*n),
                (false, None, Some(n)) => DesignMethod::Balanced(*n),
                _ => {
                    return Err(PairsCmdError::Usage(
                        "say how pairs are drawn: --all, --per-conversation N or --balanced N"
                            .into(),
                    ))
                }
            };
            let mut study = open_study(db)?;
            let report = concord_core::app::pairs::design(
                &mut study,
                rubric.as_deref(),
                of.as_deref(),
                method,
                *seed,
            )?;
            if as_json {
                return json(&report);
            }
            let mut out = format!(
                "Drew {} pairs of {} from {} conversations of {} ({}, seed {})\n",
                report.pairs,
                quoted(&report.rubric),
                report.conversations,
                quoted(&report.of),
                match report.method {
                    DesignMethod::All => "every pair".to_string(),
                    DesignMethod::PerConversation(n) => format!("{n} per conversation"),
                    DesignMethod::Balanced(n) => format!("{n} per conversation, balanced"),
                },
                report.seed
            );
            let (lo, hi) = report.source_pair_meetings;
            let _ = writeln!(out, "every two sources meet {lo} to {hi} times");
            if report.answers_without_text > 0 {
                let _ = writeln!(
                    out,
                    "{} answers without a text were left out (import their texts to compare them)",
                    report.answers_without_text
                );
            }
            Ok(out)
        }
        PairsCommand::Assign { k, seed, rubric } => {
            let mut study = open_study(db)?;
            let report =
                concord_core::app::pairs::assign(&mut study, rubric.as_deref(), *k, *seed)?;
            if as_json {
                return json(&report);
            }
            let mut out = format!(
                "Assigned {} pairs of {} to {} experts, k = {}, seed {} ({} of {} shown left answer first)\n",
                report.pairs,
                quoted(&report.rubric),
                report.experts.len(),
                report.k,
                report.seed,
                report.left_first,
                report.pairs * report.k
            );
            for (name, n) in &report.experts {
                let _ = writeln!(out, "  {:<24} {n:>7} pairs", quoted(name));
            }
            Ok(out)
        }
        PairsCommand::Status { rubric } => {
            let study = open_study_to_read(db)?;
            let s = concord_core::app::pairs::status(&study, rubric.as_deref())?;
            if as_json {
                return json(&s);
            }
            let mut out = format!(
                "{}: {} pairs from {} conversations ({}{}, seed {}), criteria {}\n",
                quoted(&s.rubric),
                s.pairs,
                s.conversations,
                s.method.replace('_', " "),
                s.per_conversation
                    .map(|n| format!(" {n}"))
                    .unwrap_or_default(),
                s.seed,
                s.criteria.join(", ")
            );
            if s.raters.is_empty() {
                out.push_str("No pairs assigned or judged yet.\n");
            }
            for r in &s.raters {
                let _ = writeln!(
                    out,
                    "  {:<6} {:<24} {:>7} pairs {:>7} done {:>8} verdicts",
                    r.kind,
                    quoted(&r.rater),
                    r.pairs,
                    r.done,
                    r.verdicts
                );
            }
            Ok(out)
        }
    }
}
