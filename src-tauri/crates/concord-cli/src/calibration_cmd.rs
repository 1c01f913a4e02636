//! `concord calibration`: the lead's gold items (keys with explanations), the pass rule, every
//! expert's calibration status and the lead's override; `answer` lets an expert answer a gold item
//! from the command line and prints the key and explanation afterwards.

use crate::study_cmd::{open_study, StudyCmdError};
use clap::{Args, Subcommand};
use concord_core::app::calibration;
use concord_core::base::text::{quoted, visible};
use concord_core::workflow::calibration::CalibrationError;
use concord_core::workflow::calibration::PassRule;
use serde::Serialize;
use std::path::Path;

#[derive(Args, Debug)]
pub struct CalibrationArgs {
    #[command(subcommand)]
    command: CalibrationCommand,
}

#[derive(Subcommand, Debug)]
enum CalibrationCommand {
    /// Mark one criterion of a response as a gold item: its key value and why.
    Key {
        #[arg(long)]
        item: String,
        #[arg(long)]
        criterion: String,
        #[arg(long)]
        value: i64,
        #[arg(long)]
        explanation: String,
    },
    /// Set the pass rule (defaults: ≥ 80% of 1–5 answers within ±1, ≥ 80% of binary answers exact).
    Rule {
        #[arg(long, default_value_t = 1)]
        likert_tolerance: i64,
        #[arg(long, default_value_t = 0.8)]
        likert_min_share: f64,
        #[arg(long, default_value_t = 0.8)]
        binary_min_share: f64,
    },
    /// Every expert's calibration: answered, shares right, passed or not, override.
    Status,
    /// Answer gold item N as an expert (`--value key=V` per criterion); prints the key after.
    Answer {
        #[arg(long)]
        rater: String,
        #[arg(long)]
        item: usize,
        /// `criterion=value`, once per keyed criterion.
        #[arg(long = "value", value_parser = parse_pair)]
        values: Vec<(String, i64)>,
    },
    /// Let an expert start the regular queue without passing (recorded with your name and reason).
    Override {
        #[arg(long)]
        rater: String,
        #[arg(long)]
        lead: String,
        #[arg(long)]
        reason: String,
    },
}

fn parse_pair(s: &str) -> Result<(String, i64), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("{}: expected criterion=value", quoted(&s)))?;
    let v = v
        .trim()
        .parse::<i64>()
        .map_err(|_| format!("{}: the value must be a whole number", quoted(&s)))?;
    Ok((k.trim().to_string(), v))
}

#[derive(Debug, thiserror::Error)]
pub enum CalibrationCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Calibration(#[from] CalibrationError),
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

fn json<T: Serialize>(value: &T) -> Result<String, CalibrationCmdError> {
    Ok(format!("{}\n", serde_json::to_string_pretty(value)?))
}

pub fn run(
    args: &CalibrationArgs,
    db: Option<&Path>,
    as_json: bool,
) -> Result<String, CalibrationCmdError> {
    let mut study = match &args.command {
        CalibrationCommand::Status => crate::study_cmd::open_study_to_read(db)?,
        _ => open_study(db)?,
    };
    match &args.command {
        CalibrationCommand::Key {
            item,
            criterion,
            value,
            explanation,
        } => {
            calibration::set_key(&mut study, item, criterion, *value, explanation)?;
            Ok(format!("{item} {criterion}: key {value}\n"))
        }
        CalibrationCommand::Rule {
            likert_tolerance,
            likert_min_share,
            binary_min_share,
        } => {
            let rule = PassRule {
                likert_tolerance: *likert_tolerance,
                likert_min_share: *likert_min_share,
                binary_min_share: *binary_min_share,
            };
            calibration::set_pass_rule(&mut study, &rule)?;
            if as_json {
                return json(&rule);
            }
            Ok(format!(
                "pass: ≥ {:.0}% of 1–5 answers within ±{}, ≥ {:.0}% of binary answers exact\n",
                rule.likert_min_share * 100.0,
                rule.likert_tolerance,
                rule.binary_min_share * 100.0
            ))
        }
        CalibrationCommand::Status => {
            let all = calibration::statuses(&study)?;
            if as_json {
                return json(&serde_json::json!({ "experts": all }));
            }
            let pct =
                |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{:.0}%", v * 100.0));
            Ok(all
                .iter()
                .map(|s| {
                    format!(
                        "{}: {:?}, {}/{} gold items answered, 1–5 right {}, binary right {}{}\n",
                        visible(&s.rater),
                        s.state,
                        s.answered,
                        s.items,
                        pct(s.likert_share),
                        pct(s.binary_share),
                        s.overridden_by
                            .as_ref()
                            .map(|(lead, reason)| format!(" (override by {lead}: {reason})"))
                            .unwrap_or_default()
                    )
                })
                .collect())
        }
        CalibrationCommand::Answer {
            rater,
            item,
            values,
        } => {
            let shown = calibration::answer(&mut study, rater, *item, values)?;
            if as_json {
                return json(&shown);
            }
            let mut out = String::new();
            for c in &shown.criteria {
                out.push_str(&format!(
                    "{}: you {}, key {} — {}\n",
                    c.key,
                    c.answer.map_or("—".into(), |v| v.to_string()),
                    c.key_value.map_or("—".into(), |v| v.to_string()),
                    c.explanation.as_deref().unwrap_or("")
                ));
            }
            Ok(out)
        }
        CalibrationCommand::Override {
            rater,
            lead,
            reason,
        } => {
            let status = calibration::override_gate(&mut study, rater, lead, reason)?;
            if as_json {
                return json(&status);
            }
            Ok(format!(
                "{rater}: regular queue open (override by {lead})\n"
            ))
        }
    }
}
