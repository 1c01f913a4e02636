//! `concord adjudication` (discrepancies, resolve, status) and `concord raters quality`: the
//! clinical panel's workflow after the blind ratings, over `concord_core::panel::adjudication` and
//! `concord_core::panel::rater_quality`.

use crate::study_cmd::{open_study, StudyCmdError};
use clap::{Args, Subcommand};
use concord_core::app::adjudication;
use concord_core::app::rater_quality;
use concord_core::base::text::visible;
use concord_core::panel::adjudication::AdjudicationError;
use concord_core::panel::adjudication::DiscrepancyRule;
use concord_core::panel::adjudication::LikertRule;
use concord_core::panel::adjudication::Resolution;
use concord_core::panel::adjudication::Ruling;
use concord_core::panel::adjudication::DEFAULT_LIKERT_GAP;
use concord_core::panel::rater_quality::QualityFlag;
use concord_core::panel::rater_quality::QualityOptions;
use concord_core::store::{SignatureState, StoreError};
use serde::Serialize;
use std::path::Path;

#[derive(Args, Debug)]
pub struct AdjudicationArgs {
    #[command(subcommand)]
    command: AdjudicationCommand,
}

/// The rule that decides which pairs need adjudication.
#[derive(Args, Debug, Clone)]
pub struct RuleArgs {
    /// 1–5 criteria: values this many points apart (max − min) need adjudication.
    #[arg(long, default_value_t = DEFAULT_LIKERT_GAP, conflicts_with = "tolerance")]
    likert_gap: i64,
    /// 1–5 criteria: instead of the gap, any value more than this many points from the median.
    #[arg(long)]
    tolerance: Option<i64>,
    /// Do not treat flagged items as needing adjudication.
    #[arg(long)]
    ignore_flags: bool,
}

impl RuleArgs {
    fn rule(&self) -> Result<DiscrepancyRule, AdjudicationError> {
        let likert = match self.tolerance {
            Some(points) if points < 0 => return Err(AdjudicationError::BadGap(points)),
            Some(points) => LikertRule::Tolerance { points },
            None if self.likert_gap < 1 => return Err(AdjudicationError::BadGap(self.likert_gap)),
            None => LikertRule::Spread {
                gap: self.likert_gap,
            },
        };
        Ok(DiscrepancyRule {
            likert,
            flagged: !self.ignore_flags,
        })
    }
}

#[derive(Subcommand, Debug)]
enum AdjudicationCommand {
    /// The (item, criterion) pairs the experts disagree on, with every expert's value.
    Discrepancies {
        #[command(flatten)]
        rule: RuleArgs,
        /// Also list pairs already decided.
        #[arg(long)]
        all: bool,
    },
    /// Record a consensus value (or "unratable") for one pair, with a reason.
    Resolve {
        #[arg(long)]
        item: String,
        #[arg(long)]
        criterion: String,
        #[arg(
            long,
            required_unless_present = "unratable",
            conflicts_with = "unratable"
        )]
        value: Option<i64>,
        #[arg(long)]
        unratable: bool,
        #[arg(long)]
        reason: String,
        #[arg(long)]
        adjudicator: String,
    },
    /// The assignment's "add a rater on disagreement" option: give every response with an
    /// undecided discrepancy to one more expert (fewest items first, ties by the seed).
    AddRaters {
        #[command(flatten)]
        rule: RuleArgs,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Counts of pairs by status: unanimous, adjudicated, unresolved.
    Status {
        #[command(flatten)]
        rule: RuleArgs,
    },
}

#[derive(Args, Debug)]
pub struct RatersArgs {
    #[command(subcommand)]
    command: RatersCommand,
}

#[derive(Subcommand, Debug)]
enum RatersCommand {
    /// Per expert: severity per criterion with 95% CI, drift, test–retest, time per item,
    /// straight-lining, and the flags they raise.
    Quality {
        /// Include the CUSUM paths (one point per rating) in the JSON.
        #[arg(long)]
        paths: bool,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum AdjudicationCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Adjudication(#[from] AdjudicationError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

fn json<T: Serialize>(value: &T) -> Result<String, AdjudicationCmdError> {
    Ok(format!("{}\n", serde_json::to_string_pretty(value)?))
}

#[derive(Serialize)]
struct Listed<'a> {
    item: &'a str,
    criterion: &'a str,
    values: Vec<Value<'a>>,
    reason: concord_core::panel::adjudication::DiscrepancyReason,
}

#[derive(Serialize)]
struct Listing<'a> {
    items: Vec<Listed<'a>>,
}

#[derive(Serialize)]
struct Value<'a> {
    rater: &'a str,
    value: i64,
    signature: SignatureState,
}

pub fn run(
    args: &AdjudicationArgs,
    db: Option<&Path>,
    as_json: bool,
) -> Result<String, AdjudicationCmdError> {
    let mut study = match &args.command {
        AdjudicationCommand::Discrepancies { .. } | AdjudicationCommand::Status { .. } => {
            crate::study_cmd::open_study_to_read(db)?
        }
        _ => open_study(db)?,
    };
    match &args.command {
        AdjudicationCommand::Discrepancies { rule, all } => {
            let rule = rule.rule()?;
            discrepancies(&adjudication::discrepancies(&study, &rule, *all)?, as_json)
        }
        AdjudicationCommand::Resolve {
            item,
            criterion,
            value,
            unratable,
            reason,
            adjudicator,
        } => {
            let ruling = match (value, unratable) {
                (_, true) => Ruling::Unratable,
                (Some(v), false) => Ruling::Value { value: *v },
                (None, false) => Ruling::Unratable,
            };
            let decision = adjudication::resolve(
                &mut study,
                &Resolution {
                    item: item.clone(),
                    criterion: criterion.clone(),
                    ruling,
                    reason: reason.clone(),
                    adjudicator: adjudicator.clone(),
                },
            )?;
            if as_json {
                return json(&serde_json::json!({
                    "item": item, "criterion": criterion, "decision": decision
                }));
            }
            Ok(match decision.value {
                Some(v) => format!("{item} {criterion}: consensus {v} by {adjudicator}\n"),
                None => format!("{item} {criterion}: unratable, by {adjudicator}\n"),
            })
        }
        AdjudicationCommand::AddRaters { rule, seed } => {
            let rule = rule.rule()?;
            let done = adjudication::add_rater_on_disagreement(&mut study, &rule, *seed)?;
            if as_json {
                return json(&done);
            }
            let mut out = format!(
                "{} responses given to one more expert; {} already with every expert\n",
                done.added.len(),
                done.no_expert_left
            );
            for a in &done.added {
                out.push_str(&format!(
                    "  {} → {} (item {} of their queue)\n",
                    visible(&a.item),
                    visible(&a.rater),
                    a.position
                ));
            }
            Ok(out)
        }
        AdjudicationCommand::Status { rule } => {
            let rule = rule.rule()?;
            let status = adjudication::status(&study, &rule)?;
            if as_json {
                return json(&status);
            }
            Ok(format!(
                "{} pairs rated by two or more experts (or flagged): {} unanimous, {} adjudicated ({} unratable), {} unresolved\n",
                status.pairs, status.unanimous, status.adjudicated, status.unratable, status.unresolved
            ))
        }
    }
}

/// The pairs that need an adjudicator, as JSON or one line per pair with each expert's value and
/// its signature state.
fn discrepancies(
    pairs: &[concord_core::panel::adjudication::DiscrepantPair],
    as_json: bool,
) -> Result<String, AdjudicationCmdError> {
    if as_json {
        let items: Vec<Listed<'_>> = pairs
            .iter()
            .map(|p| Listed {
                item: &p.item,
                criterion: &p.criterion,
                values: p
                    .values
                    .iter()
                    .map(|v| Value {
                        rater: &v.rater,
                        value: v.value,
                        signature: v.signature,
                    })
                    .collect(),
                reason: p.reason,
            })
            .collect();
        return json(&Listing { items });
    }
    let mut out = format!("{} pairs need adjudication\n", pairs.len());
    for p in pairs {
        let values: Vec<String> = p
            .values
            .iter()
            .map(|v| match v.signature {
                SignatureState::Unsigned => format!("{} {}", visible(&v.rater), v.value),
                SignatureState::Signed => format!("{} {} (signed)", visible(&v.rater), v.value),
                SignatureState::ChangedAfterSignature => {
                    format!(
                        "{} {} (changed after signature)",
                        visible(&v.rater),
                        v.value
                    )
                }
            })
            .collect();
        let decided = match &p.decision {
            Some(d) if d.unratable => " — unratable".to_string(),
            Some(d) => format!(" — consensus {}", d.value.unwrap_or_default()),
            None => String::new(),
        };
        out.push_str(&format!(
            "  {} {}: {} ({:?}){decided}\n",
            p.item,
            p.criterion,
            values.join(", "),
            p.reason
        ));
    }
    Ok(out)
}

pub fn raters(
    args: &RatersArgs,
    db: Option<&Path>,
    as_json: bool,
) -> Result<String, AdjudicationCmdError> {
    let study = crate::study_cmd::open_study_to_read(db)?;
    match &args.command {
        RatersCommand::Quality { paths } => {
            let options = QualityOptions {
                paths: *paths,
                ..QualityOptions::default()
            };
            let report = rater_quality::report(&study, &options)?;
            if as_json {
                return json(&report);
            }
            let mut out = String::new();
            let show = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:+.2}"));
            for e in &report.experts {
                out.push_str(&format!(
                    "{}: {} ratings on {} items, median {} s per item, {} too fast; straight-lined {}/{}\n",
                    visible(&e.rater),
                    e.ratings,
                    e.items,
                    e.time.median_seconds.map_or("—".to_string(), |m| format!("{m:.0}")),
                    e.time.too_fast,
                    e.straight_lining.straight,
                    e.straight_lining.n
                ));
                for c in &e.criteria {
                    let ci = c.severity.ci95.map_or("—".to_string(), |[lo, hi]| {
                        format!("[{lo:+.2}, {hi:+.2}]")
                    });
                    out.push_str(&format!(
                        "  {:<16} severity {} {ci}  drift {}{}\n",
                        c.criterion,
                        show(c.severity.mean),
                        show(c.drift.difference),
                        if c.drift.alarm { " (CUSUM alarm)" } else { "" }
                    ));
                }
                for f in &e.flags {
                    out.push_str(&format!("  flag: {}\n", flag_text(f)));
                }
            }
            Ok(out)
        }
    }
}

fn flag_text(f: &QualityFlag) -> String {
    match f {
        QualityFlag::Lenient { criterion } => format!("lenient on {criterion}"),
        QualityFlag::Severe { criterion } => format!("severe on {criterion}"),
        QualityFlag::Drift {
            criterion,
            direction,
        } => format!("drifts {direction:?} on {criterion}").to_lowercase(),
        QualityFlag::TooFast => "too fast".into(),
        QualityFlag::StraightLining => "straight-lining".into(),
    }
}
