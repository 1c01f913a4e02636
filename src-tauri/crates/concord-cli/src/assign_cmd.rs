//! The lead's setup commands: `concord expert add NAME`, `concord rubric add FILE`,
//! `concord assign --k K --seed S [...]` (sample and assign with exact overlap) and
//! `concord assignment` (the per-expert progress table).

use crate::study_cmd::{open_as, open_study, open_study_to_read, StudyCmdError};
use concord_core::app::open::WhenMissing;
use concord_core::app::setup::SetupError;
use concord_core::base::clock::fresh_seed;
use concord_core::base::text::{quoted, visible};
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::assignment::AssignmentSummary;
use concord_core::workflow::assignment::AssignmentTable;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum AssignCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Job(#[from] SetupError),
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

#[derive(clap::Args, Debug)]
pub struct AssignArgs {
    /// Experts per response (the fixed overlap).
    #[arg(long)]
    pub k: usize,
    /// Seed of every random choice; the same seed gives the same assignment.
    #[arg(long)]
    pub seed: u64,
    /// Draw this many conversations (stratified by category); default: all.
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,
    /// Only conversations of this rubric.
    #[arg(long)]
    pub rubric: Option<String>,
    /// Do not stratify the sample by category.
    #[arg(long)]
    pub no_stratify: bool,
    /// Responses every expert rates.
    #[arg(long, default_value_t = 0, value_name = "C")]
    pub calibration: usize,
    /// Blind test–retest items per expert.
    #[arg(long, default_value_t = 0, value_name = "R")]
    pub retest: usize,
    /// Items shown at least between an item and its retest.
    #[arg(long, default_value_t = 10, value_name = "G")]
    pub retest_gap: usize,
    /// Assign only these experts (repeat the option); default: every expert.
    #[arg(long = "expert", value_name = "NAME")]
    pub experts: Vec<String>,
    /// Replace an existing assignment (refused once experts have rated assigned responses).
    #[arg(long)]
    pub replace: bool,
    /// Show what would be assigned without writing anything.
    #[arg(long)]
    pub preview: bool,
    /// Assign answers the study holds no text for, for this reason (recorded); without it an
    /// assignment that draws such answers is refused.
    #[arg(long = "without-text", value_name = "REASON")]
    pub without_text: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct ExpertArgs {
    #[command(subcommand)]
    pub command: ExpertCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum ExpertCommand {
    /// Add a human expert by name (nothing happens if they already exist).
    Add { name: String },
}

#[derive(clap::Args, Debug)]
pub struct RubricArgs {
    #[command(subcommand)]
    pub command: RubricCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum RubricCommand {
    /// Add a custom rubric file (.toml or .json) unless the identical rubric is there; a `--db`
    /// file that does not exist yet becomes a new study holding the rubric.
    Add { file: PathBuf },
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, AssignCmdError> {
    Ok(format!("{}\n", serde_json::to_string_pretty(value)?))
}

pub fn expert(
    args: &ExpertArgs,
    db: Option<&Path>,
    as_json: bool,
) -> Result<String, AssignCmdError> {
    let mut study = open_study(db)?;
    match &args.command {
        ExpertCommand::Add { name } => {
            let added = concord_core::app::setup::add_expert(&mut study, name, fresh_seed())?;
            if as_json {
                return json(&added);
            }
            Ok(if added.created {
                format!("Added expert {}\n", quoted(&added.name))
            } else {
                format!(
                    "Expert {} already exists; nothing changed\n",
                    quoted(&added.name)
                )
            })
        }
    }
}

pub fn rubric(
    args: &RubricArgs,
    db: Option<&Path>,
    as_json: bool,
) -> Result<String, AssignCmdError> {
    match &args.command {
        RubricCommand::Add { file } => {
            // A valid rubric on a study that does not exist yet creates the study first.
            concord_core::app::setup::check_rubric(file)?;
            let mut study = open_as(db, WhenMissing::CreateEmpty)?.study;
            let added = concord_core::app::setup::add_rubric(&mut study, file)?;
            if as_json {
                return json(&added);
            }
            Ok(if added.created {
                format!("Added rubric {}\n", quoted(&added.key))
            } else {
                format!(
                    "Rubric {} is already in the study; nothing changed\n",
                    quoted(&added.key)
                )
            })
        }
    }
}

pub fn assign(
    args: &AssignArgs,
    db: Option<&Path>,
    as_json: bool,
) -> Result<String, AssignCmdError> {
    let mut study = open_study(db)?;
    let options = AssignmentOptions {
        k: args.k,
        seed: args.seed,
        sample: args.sample,
        rubric: args.rubric.clone(),
        stratify: !args.no_stratify,
        calibration: args.calibration,
        retest: args.retest,
        retest_gap: args.retest_gap,
        experts: args.experts.clone(),
        replace: args.replace,
        without_text: args.without_text.clone(),
    };
    let summary = if args.preview {
        concord_core::app::setup::preview_assignment(&study, &options)?
    } else {
        concord_core::app::setup::assign(&mut study, &options)?
    };
    if as_json {
        return json(&summary);
    }
    Ok(render_summary(&summary, args.preview))
}

fn render_summary(s: &AssignmentSummary, preview: bool) -> String {
    let mut out = format!(
        "{} {} conversations ({} responses) to {} experts, k = {}, seed {}\n",
        if preview { "Would assign" } else { "Assigned" },
        s.conversations,
        s.responses,
        s.experts.len(),
        s.options.k,
        s.options.seed
    );
    if s.without_text > 0 {
        out.push_str(&format!(
            "{} of these answers have no text in the study{}\n",
            s.without_text,
            match s.options.without_text.as_deref() {
                Some(reason) => format!(" (assigned anyway: {})", visible(reason)),
                None => ": import the MentalBench-100k file to fill them".to_string(),
            }
        ));
    }
    if s.strata.len() > 1 || s.strata.iter().any(|c| c.category.is_some()) {
        out.push_str("strata:\n");
        for c in &s.strata {
            out.push_str(&format!(
                "  {:<24} {:>6} of {:>6}\n",
                visible(c.category.as_deref().unwrap_or("(no category)")),
                c.drawn,
                c.available
            ));
        }
    }
    out.push_str(&format!(
        "{:<24} {:>8} {:>12} {:>7} {:>7}\n",
        "expert", "regular", "calibration", "retest", "total"
    ));
    for e in &s.experts {
        out.push_str(&format!(
            "{:<24} {:>8} {:>12} {:>7} {:>7}\n",
            visible(&e.name),
            e.regular,
            e.calibration,
            e.retest,
            e.total
        ));
    }
    out
}

pub fn table(db: Option<&Path>, as_json: bool) -> Result<String, AssignCmdError> {
    let study = open_study_to_read(db)?;
    let t = concord_core::app::setup::assignment_table(&study)?;
    if as_json {
        return json(&t);
    }
    Ok(render_table(&t))
}

fn render_table(t: &AssignmentTable) -> String {
    let mut out = match &t.options {
        Some(o) => format!(
            "Assignment: k = {}, seed {}, {} sampled conversations, {} calibration, {} retest (gap {})\n",
            o.k, o.seed, t.sampled_conversations, o.calibration, o.retest, o.retest_gap
        ),
        None => "No assignment yet (concord assign --k K --seed S)\n".to_string(),
    };
    out.push_str(&format!(
        "{:<24} {:>8} {:>9} {:>9} {:>6}\n",
        "expert", "assigned", "completed", "remaining", "done"
    ));
    for e in &t.experts {
        let done = if e.assigned == 0 {
            "-".to_string()
        } else {
            format!("{:.0}%", 100.0 * e.completed as f64 / e.assigned as f64)
        };
        out.push_str(&format!(
            "{:<24} {:>8} {:>9} {:>9} {:>6}\n",
            visible(&e.name),
            e.assigned,
            e.completed,
            e.remaining,
            done
        ));
    }
    out
}
