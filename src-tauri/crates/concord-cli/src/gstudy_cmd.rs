//! `concord stats gstudy`: generalizability theory on a crossed design — REML variance
//! components of targets × raters [× occasions], Brennan's (2001) relative and absolute
//! coefficients and the D-study over 1–10 raters and occasions.

use crate::stats_error::{to_json, StatsError};
use clap::Args;
use concord_core::files::score_table::read_facet_scores;
use concord_stats::gtheory::{g_study, DStudyRow, GCoefficients, GComponents, GDesign, GScore};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// `concord stats gstudy`
#[derive(Args, Debug)]
pub struct GStudyArgs {
    /// Long CSV: one row per target × rater [× occasion] with its score (empty = missing).
    pub file: PathBuf,
    /// The facets crossed with the targets: `rater` or `rater,occasion`.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "rater",
        value_name = "LIST"
    )]
    pub facets: Vec<String>,
    /// Column holding the target id.
    #[arg(long, default_value = "target", value_name = "COL")]
    pub target: String,
    /// Column holding the rater id.
    #[arg(long, default_value = "rater", value_name = "COL")]
    pub rater: String,
    /// Column holding the occasion id (with `--facets rater,occasion`).
    #[arg(long, default_value = "occasion", value_name = "COL")]
    pub occasion: String,
    /// Column holding the score.
    #[arg(long, default_value = "score", value_name = "COL")]
    pub score: String,
}

#[derive(Serialize)]
struct GStudyOutput<'a> {
    components: GComponents,
    g: GCoefficients,
    d_study: &'a [DStudyRow],
}

fn with_occasion(facets: &[String]) -> Result<bool, StatsError> {
    let names: Vec<&str> = facets.iter().map(|f| f.trim()).collect();
    match names.as_slice() {
        ["rater"] => Ok(false),
        ["rater", "occasion"] | ["occasion", "rater"] => Ok(true),
        _ => Err(StatsError::BadOption(format!(
            "--facets must be `rater` or `rater,occasion` (got `{}`)",
            names.join(",")
        ))),
    }
}

fn coefficient(x: Option<f64>) -> String {
    x.map_or("—".to_string(), |v| format!("{v:.3}"))
}

/// Run `concord stats gstudy` and return what to print.
pub fn run(args: &GStudyArgs, json: bool) -> Result<String, StatsError> {
    let occasions = with_occasion(&args.facets)?;
    let table = read_facet_scores(
        &args.file,
        &args.target,
        &args.rater,
        occasions.then_some(args.occasion.as_str()),
        &args.score,
    )?;
    let scores: Vec<GScore> = table
        .scores
        .iter()
        .map(|&(t, r, o, score)| GScore {
            target: t as usize,
            rater: r as usize,
            occasion: o as usize,
            score,
        })
        .collect();
    let design = GDesign {
        n_targets: table.targets.len(),
        n_raters: table.raters.len(),
        n_occasions: occasions.then_some(table.occasions.len()),
    };
    let g = g_study(&scores, &design).map_err(|source| StatsError::GStudy {
        file: table.file.clone(),
        source,
    })?;
    let note = (!g.boundary.is_empty()).then(|| {
        format!(
            "boundary fit: {} estimated at 0 (the estimate lies on the edge of the parameter space)",
            g.boundary.join(", ")
        )
    });
    if json {
        if let Some(note) = &note {
            crate::terminal::say(&format!("note: {note}"));
        }
        return to_json(&GStudyOutput {
            components: g.components,
            g: g.g,
            d_study: &g.d_study,
        });
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} scores of {} targets by {} raters{} (REML variance components)",
        table.file,
        g.n_scores,
        g.n_targets,
        g.n_raters,
        if occasions {
            format!(" on {} occasions", g.n_occasions)
        } else {
            String::new()
        }
    );
    let components = serde_json::to_value(g.components)?;
    let total: f64 = components
        .as_object()
        .map_or(0.0, |m| m.values().filter_map(|v| v.as_f64()).sum());
    for (name, value) in components.as_object().into_iter().flatten() {
        let v = value.as_f64().unwrap_or(0.0);
        let share = if total > 0.0 { 100.0 * v / total } else { 0.0 };
        let _ = writeln!(out, "  {name:<16} {v:>10.4}  {share:>5.1}%");
    }
    if let Some(note) = &note {
        let _ = writeln!(out, "note: {note}");
    }
    let _ = writeln!(
        out,
        "G coefficients for {} raters × {} occasions: relative Eρ² {}, absolute Φ {}",
        g.n_raters,
        g.n_occasions,
        coefficient(g.g.relative),
        coefficient(g.g.absolute)
    );
    let _ = writeln!(out, "D-study (relative / absolute):");
    for row in &g.d_study {
        let _ = writeln!(
            out,
            "  {:>2} raters × {:>2} occasions  {} / {}",
            row.n_rater,
            row.n_occasion,
            coefficient(row.relative),
            coefficient(row.absolute)
        );
    }
    Ok(out)
}
