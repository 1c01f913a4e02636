//! `concord export ratings --format csv|wide-csv|xlsx --out FILE [--excel]`, `concord export
//! sheet --rater NAME --out FILE.xlsx` (the fill-in rating sheet) and `concord sheet import FILE`
//! (a filled sheet back as that expert's ratings). Files are written beside the target and
//! renamed into place, so a failed export never leaves half a file.

use crate::study_cmd::{open_study, StudyCmdError};
use concord_core::export::sheet::SheetError;
use concord_core::export::{self, CsvOptions, ExportError, WorkbookOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ExportCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error("{0}")]
    Sheet(#[from] SheetError),
    #[error("{path}: cannot write: {detail}")]
    Write { path: String, detail: String },
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
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
    /// Every rating of the study as CSV (long or wide) or an XLSX workbook.
    Ratings {
        #[arg(long, value_enum, default_value = "csv")]
        format: Format,
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// CSV for Excel: byte-order mark and CRLF line ends.
        #[arg(long)]
        excel: bool,
        /// Add the context and the response text to each CSV row.
        #[arg(long)]
        texts: bool,
        /// Leave the agreement sheet out of the workbook.
        #[arg(long)]
        no_agreement: bool,
    },
    /// The fill-in XLSX rating sheet of one expert.
    Sheet {
        #[arg(long, value_name = "NAME")]
        rater: String,
        #[arg(long, value_name = "FILE.xlsx")]
        out: PathBuf,
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

/// A sibling path to write to before renaming into place.
fn partial(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    out.with_file_name(name)
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> ExportCmdError {
    ExportCmdError::Write {
        path: path.display().to_string(),
        detail: e.to_string(),
    }
}

/// Write through `f` into a temporary sibling, then rename it to `out`.
fn write_atomically<T>(
    out: &Path,
    f: impl FnOnce(&Path) -> Result<T, ExportCmdError>,
) -> Result<T, ExportCmdError> {
    let tmp = partial(out);
    match f(&tmp) {
        Ok(v) => {
            std::fs::rename(&tmp, out).map_err(|e| io_error(out, e))?;
            Ok(v)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

pub fn run(args: &ExportArgs, db: Option<&Path>, json: bool) -> Result<String, ExportCmdError> {
    let store = open_study(db)?;
    match &args.command {
        ExportCommand::Ratings {
            format,
            out,
            excel,
            texts,
            no_agreement,
        } => {
            let options = CsvOptions {
                excel: *excel,
                texts: *texts,
            };
            let doc = match format {
                Format::Csv | Format::WideCsv => {
                    let summary = write_atomically(out, |tmp| {
                        let file = std::fs::File::create(tmp).map_err(|e| io_error(out, e))?;
                        let mut w = BufWriter::new(file);
                        let s = if *format == Format::Csv {
                            export::write_long_csv(&store, &mut w, options)?
                        } else {
                            export::write_wide_csv(&store, &mut w, options)?
                        };
                        w.flush().map_err(|e| io_error(out, e))?;
                        Ok(s)
                    })?;
                    serde_json::to_value(summary)?
                }
                Format::Xlsx => {
                    let options = WorkbookOptions {
                        agreement: !no_agreement,
                        ..WorkbookOptions::default()
                    };
                    let summary = write_atomically(out, |tmp| {
                        Ok(export::write_workbook(&store, tmp, &options)?)
                    })?;
                    serde_json::to_value(summary)?
                }
            };
            if json {
                return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
            }
            Ok(format!(
                "Wrote {} ({} ratings)\n",
                out.display(),
                doc.get("ratings").and_then(|v| v.as_u64()).unwrap_or(0)
            ))
        }
        ExportCommand::Sheet { rater, out } => {
            let summary = write_atomically(out, |tmp| {
                Ok(export::write_rating_sheet(&store, rater, tmp)?)
            })?;
            if json {
                return Ok(format!("{}\n", serde_json::to_string_pretty(&summary)?));
            }
            Ok(format!(
                "Wrote the rating sheet of {} to {} ({} items)\n",
                summary.rater,
                out.display(),
                summary.rows
            ))
        }
    }
}

pub fn sheet(args: &SheetArgs, db: Option<&Path>, json: bool) -> Result<String, ExportCmdError> {
    let mut store = open_study(db)?;
    match &args.command {
        SheetCommand::Import { file } => {
            let report = export::import_rating_sheet(&mut store, file)?;
            if json {
                return Ok(format!("{}\n", serde_json::to_string_pretty(&report)?));
            }
            Ok(format!(
                "Imported {} rows of {}'s sheet: {} new, {} revised, {} unchanged values\n",
                report.rows, report.rater, report.inserted, report.updated, report.unchanged
            ))
        }
    }
}
