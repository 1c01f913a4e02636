//! `concord export methods --out DIR` (the self-recomputing methods appendix), `concord export
//! ratings --format csv|wide-csv|xlsx --out FILE [--excel]`, `concord export
//! sheet --rater NAME --out FILE.xlsx` (the fill-in rating sheet) and `concord sheet import FILE`
//! (a filled sheet back as that expert's ratings). Without `--out` a file goes to the study's
//! export folder (`<study>-exports/`), as in the window. Files are written beside the target and
//! renamed into place, so a failed export never leaves half a file; a file already at `--out` is
//! replaced only with `--force` (the study itself, a folder, a FIFO or a device never).

use crate::study_cmd::{open_study, StudyCmdError};
use concord_core::app::export::{ExportJobError, JudgeRepetitions, RatingsExport, RatingsFormat};
use concord_core::guard::phi::review::PhiError;
use concord_core::guard::phi::review::PhiGate;
use concord_core::outputs::export::sheet::SheetError;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ExportCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Job(#[from] ExportJobError),
    #[error("{0}")]
    Sheet(#[from] SheetError),
    #[error(transparent)]
    Phi(#[from] PhiError),
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Methods(#[from] concord_core::outputs::methods::MethodsError),
    #[error(transparent)]
    Spans(#[from] concord_core::app::spans::SpanJobError),
}

/// `--judge-repetitions`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepetitionsArg {
    Aggregate,
    All,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One row per rating.
    Csv,
    /// One row per response × rater, one column per criterion.
    WideCsv,
    /// Workbook: codebook, one sheet per expert, agreement.
    Xlsx,
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    #[command(subcommand)]
    pub command: ExportCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum ExportCommand {
    /// The methods appendix: agreement table, ratings, the judge reliability table with the
    /// repetitions it reads, methods paragraph and a Python script that recomputes every number of
    /// both tables (`python DIR/recompute.py DIR`).
    Methods {
        /// Rubric of the table.
        #[arg(long, default_value = "mentalbench")]
        rubric: String,
        /// Directory to write into (created when missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Replace the appendix's files already in DIR.
        #[arg(long)]
        force: bool,
        /// Write even though PHI findings are not reviewed yet; the reason goes to the audit trail.
        #[arg(long, value_name = "REASON")]
        override_phi: Option<String>,
    },
    /// Every rating of the study as CSV (long or wide) or an XLSX workbook.
    Ratings {
        #[arg(long, value_enum, default_value = "csv")]
        format: Format,
        /// Where to write it (default: `<study>-ratings-long.csv`, `-ratings-wide.csv` or
        /// `-results.xlsx` in the study's export folder, `<study>-exports/` beside the study).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace a file already at the --out path (never the study, a folder, a FIFO or a device).
        #[arg(long)]
        force: bool,
        /// CSV for Excel: byte-order mark and CRLF line ends.
        #[arg(long)]
        excel: bool,
        /// Add the context and the response text to each CSV row.
        #[arg(long)]
        texts: bool,
        /// A judge's repetitions in the long CSV: `aggregate` (the study's aggregate in the value
        /// column, as every report reads it) or `all` (one row per repetition, with a
        /// `repetition` column).
        #[arg(long, value_enum, default_value = "aggregate")]
        judge_repetitions: RepetitionsArg,
        /// Leave the agreement sheet out of the workbook.
        #[arg(long)]
        no_agreement: bool,
        /// Write even though PHI findings are not reviewed yet; the reason goes to the audit trail.
        #[arg(long, value_name = "REASON")]
        override_phi: Option<String>,
    },
    /// Every evidence span as CSV: conversation_id, turn, source, rater, code, start, end
    /// (Unicode characters), severity, quote; a judge's unlocated quote has empty offsets.
    Spans {
        /// Where to write it (default: `<study>-spans.csv` in the study's export folder).
        #[arg(long, value_name = "FILE.csv")]
        out: Option<PathBuf>,
        /// Replace a file already at the --out path (never the study, a folder, a FIFO or a device).
        #[arg(long)]
        force: bool,
        /// Write even though PHI findings are not reviewed yet; the reason goes to the audit trail.
        #[arg(long, value_name = "REASON")]
        override_phi: Option<String>,
    },
    /// The fill-in XLSX rating sheet of one expert.
    Sheet {
        #[arg(long, value_name = "NAME")]
        rater: String,
        /// Where to write it (default: `<study>-sheet-<name>.xlsx` in the study's export folder).
        #[arg(long, value_name = "FILE.xlsx")]
        out: Option<PathBuf>,
        /// Replace a file already at the --out path (never the study, a folder, a FIFO or a device).
        #[arg(long)]
        force: bool,
        /// Write even though PHI findings are not reviewed yet; the reason goes to the audit trail.
        #[arg(long, value_name = "REASON")]
        override_phi: Option<String>,
    },
}

#[derive(clap::Args, Debug)]
pub struct SheetArgs {
    #[command(subcommand)]
    pub command: SheetCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum SheetCommand {
    /// Import a filled rating sheet as its expert's ratings (all or nothing).
    Import { file: PathBuf },
}

/// An export of an encrypted study is a plain file: say so on stderr and in the JSON document.
fn warn_if_plain_copy(warning: Option<&String>, doc: serde_json::Value) -> serde_json::Value {
    let Some(warning) = warning else {
        return doc;
    };
    crate::terminal::say(&format!("concord: warning: {warning}"));
    let mut doc = doc;
    if let Some(map) = doc.as_object_mut() {
        map.insert(
            "warning".to_string(),
            serde_json::Value::String(warning.clone()),
        );
    }
    doc
}

pub fn run(args: &ExportArgs, db: Option<&Path>, json: bool) -> Result<String, ExportCmdError> {
    let mut study = open_study(db)?;
    let by = crate::phi_cmd::actor(None);
    match &args.command {
        ExportCommand::Methods {
            rubric,
            out,
            force,
            override_phi,
        } => {
            let options = concord_core::panel::agreement::AgreementOptions::mentalalign(rubric);
            let gate = PhiGate {
                actor: &by,
                override_reason: override_phi.as_deref(),
            };
            let written = concord_core::app::methods::write_methods_appendix(
                &mut study,
                &options,
                out,
                env!("CARGO_PKG_VERSION"),
                *force,
                gate,
            )?;
            let names: Vec<String> = written
                .files
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            let doc = warn_if_plain_copy(
                written.warning.as_ref(),
                serde_json::json!({ "written": names }),
            );
            Ok(if json {
                serde_json::to_string_pretty(&doc)? + "\n"
            } else {
                format!("wrote the methods appendix:\n  {}\n", names.join("\n  "))
            })
        }
        ExportCommand::Ratings {
            format,
            out,
            force,
            excel,
            texts,
            judge_repetitions,
            no_agreement,
            override_phi,
        } => {
            let export = RatingsExport {
                format: match format {
                    Format::Csv => RatingsFormat::LongCsv,
                    Format::WideCsv => RatingsFormat::WideCsv,
                    Format::Xlsx => RatingsFormat::Xlsx,
                },
                excel: *excel,
                texts: *texts,
                agreement: !no_agreement,
                judge_repetitions: match judge_repetitions {
                    RepetitionsArg::Aggregate => JudgeRepetitions::Aggregate,
                    RepetitionsArg::All => JudgeRepetitions::All,
                },
            };
            let gate = PhiGate {
                actor: &by,
                override_reason: override_phi.as_deref(),
            };
            let written = concord_core::app::export::export_ratings(
                &mut study,
                &export,
                out.as_deref(),
                *force,
                gate,
            )?;
            let doc = warn_if_plain_copy(
                written.warning.as_ref(),
                serde_json::to_value(&written.summary)?,
            );
            if json {
                return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
            }
            Ok(format!(
                "Wrote {} ({} ratings)\n",
                written.path.display(),
                written.summary.ratings()
            ))
        }
        ExportCommand::Spans { .. } => export_spans(&mut study, &by, &args.command, json),
        ExportCommand::Sheet { .. } => export_sheet(&mut study, &by, &args.command, json),
    }
}

pub fn sheet(args: &SheetArgs, db: Option<&Path>, json: bool) -> Result<String, ExportCmdError> {
    let mut study = open_study(db)?;
    match &args.command {
        SheetCommand::Import { file } => {
            let report = concord_core::app::sheet::import_sheet(&mut study, file)?;
            if json {
                return Ok(format!("{}\n", serde_json::to_string_pretty(&report)?));
            }
            let mut out = format!(
                "Imported {} rows of {}'s sheet: {} new, {} revised, {} unchanged values\n",
                report.rows, report.rater, report.inserted, report.updated, report.unchanged
            );
            if report.spans_added + report.spans_unchanged > 0 {
                out.push_str(&format!(
                    "Spans: {} new, {} already there, {} not found in their answer (kept as written)\n",
                    report.spans_added,
                    report.spans_unchanged,
                    report.spans_unlocated.len()
                ));
                for q in &report.spans_unlocated {
                    out.push_str(&format!(
                        "  not found: sheet {}, row {}, item {}, code {}: {}\n",
                        concord_core::base::text::visible(&q.sheet),
                        q.row,
                        q.item,
                        concord_core::base::text::visible(&q.code),
                        concord_core::base::text::visible(&q.quote)
                    ));
                }
            }
            Ok(out)
        }
    }
}

/// `concord export spans`: every span as CSV, behind the PHI gate.
fn export_spans(
    study: &mut concord_core::app::open_study::OpenStudy,
    by: &str,
    command: &ExportCommand,
    json: bool,
) -> Result<String, ExportCmdError> {
    let ExportCommand::Spans {
        out,
        force,
        override_phi,
    } = command
    else {
        return Ok(String::new());
    };
    let gate = PhiGate {
        actor: by,
        override_reason: override_phi.as_deref(),
    };
    let written = concord_core::app::spans::export_spans(study, out.as_deref(), *force, gate)?;
    let doc = warn_if_plain_copy(
        written.warning.as_ref(),
        serde_json::to_value(&written.summary)?,
    );
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
    }
    Ok(format!(
        "Wrote {} ({} spans, {} unlocated quotes)\n",
        written.path.display(),
        written.summary.spans,
        written.summary.unlocated
    ))
}

/// `concord export sheet`: one expert's fill-in rating sheet, behind the PHI gate.
fn export_sheet(
    study: &mut concord_core::app::open_study::OpenStudy,
    by: &str,
    command: &ExportCommand,
    json: bool,
) -> Result<String, ExportCmdError> {
    let ExportCommand::Sheet {
        rater,
        out,
        force,
        override_phi,
    } = command
    else {
        return Ok(String::new());
    };
    let gate = PhiGate {
        actor: by,
        override_reason: override_phi.as_deref(),
    };
    let written =
        concord_core::app::export::export_sheet(study, rater, out.as_deref(), *force, gate)?;
    let doc = warn_if_plain_copy(
        written.warning.as_ref(),
        serde_json::to_value(&written.summary)?,
    );
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
    }
    Ok(format!(
        "Wrote the rating sheet of {} to {} ({} items)\n",
        written.summary.rater,
        written.path.display(),
        written.summary.rows
    ))
}
