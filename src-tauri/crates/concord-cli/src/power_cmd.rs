//! `concord stats ppi-power`: how many expert labels and judge-only answers a prediction-powered
//! mean needs for a standard error or a budget, from a pilot (as `ppi-python`'s `ppi_power`),
//! beside the expert-only design.

use crate::stats_error::{to_json, StatsError};
use clap::Args;
use concord_core::files::score_table::read_pilot_pairs;
use concord_stats::power::{ppi_mean_power, ClassicalDesign, PowerGoal};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// `concord stats ppi-power`
#[derive(Args, Debug)]
pub struct PpiPowerArgs {
    /// Pilot CSV: one row per item with the judge's score and the expert's rating (both present).
    pub file: PathBuf,
    /// Cost of one expert label.
    #[arg(long = "cost-expert", value_name = "C")]
    pub cost_expert: f64,
    /// Cost of one judge score.
    #[arg(long = "cost-judge", value_name = "C")]
    pub cost_judge: f64,
    /// The standard error to reach at the lowest cost.
    #[arg(
        long,
        value_name = "S",
        conflicts_with = "budget",
        required_unless_present = "budget"
    )]
    pub se: Option<f64>,
    /// The budget to spend for the smallest standard error.
    #[arg(long, value_name = "B")]
    pub budget: Option<f64>,
    /// Column holding the judge's score.
    #[arg(long = "judge-column", default_value = "judge", value_name = "COL")]
    pub judge: String,
    /// Column holding the expert's rating.
    #[arg(long = "expert-column", default_value = "expert", value_name = "COL")]
    pub expert: String,
}

#[derive(Serialize)]
struct PowerOutput {
    n_expert: u64,
    n_judge: u64,
    se: f64,
    cost: f64,
    rho: f64,
    classical: ClassicalDesign,
}

/// Run `concord stats ppi-power` and return what to print.
pub fn run(args: &PpiPowerArgs, json: bool) -> Result<String, StatsError> {
    let pilot = read_pilot_pairs(&args.file, [args.judge.as_str(), args.expert.as_str()])?;
    let goal = match (args.se, args.budget) {
        (Some(se), _) => PowerGoal::StandardError(se),
        (None, Some(b)) => PowerGoal::Budget(b),
        (None, None) => {
            return Err(StatsError::BadOption(
                "give --se S or --budget B".to_string(),
            ))
        }
    };
    let d = ppi_mean_power(
        &pilot.expert,
        &pilot.judge,
        args.cost_expert,
        args.cost_judge,
        goal,
    )
    .map_err(|source| StatsError::Power {
        file: pilot.file.clone(),
        source,
    })?;
    if json {
        return to_json(&PowerOutput {
            n_expert: d.n_expert,
            n_judge: d.n_judge,
            se: d.se,
            cost: d.cost,
            rho: d.rho,
            classical: d.classical,
        });
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: pilot of {} pairs, PPI correlation ρ = {:.4}; expert label {}, judge score {}",
        pilot.file,
        pilot.expert.len(),
        d.rho,
        args.cost_expert,
        args.cost_judge
    );
    let goal_text = match goal {
        PowerGoal::StandardError(s) => format!("for a standard error of {s}"),
        PowerGoal::Budget(b) => format!("for a budget of {b}"),
    };
    let _ = writeln!(out, "{goal_text} (sizes rounded as ppi-python rounds):");
    let _ = writeln!(
        out,
        "  prediction-powered: {} expert labels (also judged) + {} judge-only answers, SE {:.5}, cost {:.2}",
        d.n_expert, d.n_judge, d.se, d.cost
    );
    let _ = writeln!(
        out,
        "  expert-only:        {} expert labels, SE {:.5}, cost {:.2}",
        d.classical.n_expert, d.classical.se, d.classical.cost
    );
    Ok(out)
}
