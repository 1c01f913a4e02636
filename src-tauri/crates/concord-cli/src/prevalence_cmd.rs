//! `concord stats prevalence`: the share of answers truly meeting a binary criterion, corrected
//! for the judge's sensitivity and specificity on the expert-rated rows (Lee et al. 2025), with
//! its interval and, on request, how a calibration budget should be split.

use crate::stats_error::{to_json, StatsError};
use clap::Args;
use concord_core::files::score_table::read_binary_calibration;
use concord_stats::prevalence::{
    allocate_calibration, corrected_prevalence, Allocation, PrevalenceCounts,
};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// `concord stats prevalence`
#[derive(Args, Debug)]
pub struct PrevalenceArgs {
    /// CSV with one row per item: item id, the judge's 0/1 label, the expert's 0/1 label (empty
    /// where no expert rated).
    pub file: PathBuf,
    /// Confidence level of the interval.
    #[arg(long, default_value_t = 0.95, value_name = "L")]
    pub level: f64,
    /// Also split a calibration set of N expert labels (those in FILE counted inside N) between
    /// truly positive and truly negative items.
    #[arg(long, value_name = "N")]
    pub allocate: Option<u64>,
    /// Column holding the item id.
    #[arg(long = "item-column", default_value = "item", value_name = "COL")]
    pub item: String,
    /// Column holding the judge's label.
    #[arg(long = "judge-column", default_value = "judge", value_name = "COL")]
    pub judge: String,
    /// Column holding the expert's label.
    #[arg(long = "expert-column", default_value = "expert", value_name = "COL")]
    pub expert: String,
}

#[derive(Serialize)]
struct PrevalenceOutput {
    n_items: u64,
    n_calibration: u64,
    raw_rate: f64,
    sensitivity: f64,
    specificity: f64,
    corrected: f64,
    ci: [f64; 2],
    level: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    allocation: Option<Allocation>,
}

/// Run `concord stats prevalence` and return what to print.
pub fn run(args: &PrevalenceArgs, json: bool) -> Result<String, StatsError> {
    let (file, c) = read_binary_calibration(
        &args.file,
        [
            args.item.as_str(),
            args.judge.as_str(),
            args.expert.as_str(),
        ],
    )?;
    let counts = PrevalenceCounts {
        n_items: c.n_items,
        judged_positive: c.judged_positive,
        true_positive: c.true_positive,
        false_negative: c.false_negative,
        true_negative: c.true_negative,
        false_positive: c.false_positive,
    };
    let with_file = |e| StatsError::Prevalence {
        file: file.clone(),
        source: e,
    };
    let r = corrected_prevalence(&counts, args.level).map_err(with_file)?;
    let allocation = match args.allocate {
        Some(budget) => Some(
            allocate_calibration(
                budget,
                r.raw_rate,
                r.specificity,
                r.sensitivity,
                r.n_calibration,
            )
            .map_err(with_file)?,
        ),
        None => None,
    };
    if json {
        return to_json(&PrevalenceOutput {
            n_items: r.n_items,
            n_calibration: r.n_calibration,
            raw_rate: r.raw_rate,
            sensitivity: r.sensitivity,
            specificity: r.specificity,
            corrected: r.corrected,
            ci: r.ci,
            level: r.level,
            allocation,
        });
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{file}: {} items judged, {} rated by experts ({} positive, {} negative)",
        r.n_items,
        r.n_calibration,
        counts.expert_positive(),
        counts.expert_negative()
    );
    let _ = writeln!(
        out,
        "judge's raw rate {:.4}; sensitivity {:.4}, specificity {:.4} on the expert-rated items",
        r.raw_rate, r.sensitivity, r.specificity
    );
    let _ = writeln!(
        out,
        "corrected prevalence {:.4}, {:.0}% interval [{:.4}, {:.4}] (Rogan–Gladen, Lee et al. 2025)",
        r.corrected,
        r.level * 100.0,
        r.ci[0],
        r.ci[1]
    );
    if let (Some(a), Some(budget)) = (allocation, args.allocate) {
        let _ = writeln!(
            out,
            "of {budget} expert labels (the {} already collected included): {} for truly positive items, {} for truly negative ones",
            r.n_calibration, a.positive, a.negative
        );
    }
    Ok(out)
}
