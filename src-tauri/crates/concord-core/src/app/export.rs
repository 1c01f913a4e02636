//! Rating exports and fill-in sheets: every rating as a long or wide CSV or the results
//! workbook, and an expert's fill-in rating sheet, each to a chosen path or a default file in the
//! study's export folder, written whole or not at all through `files::output` (an existing file
//! is replaced only when the caller says `overwrite`; the open study, a folder, a FIFO or a device
//! never), behind the PHI gate (refused while findings are open unless the lead overrides with a
//! reason), and with a warning when the study is encrypted (the file written is not).

use crate::app::open_study::OpenStudy;
use crate::app::paths::{
    expert_file_slug, output_path, plain_copy_warning, study_stem, write_error, write_output,
    PathError,
};
use crate::app::phi::require_reviewed;
use crate::base::error_code::{Coded, ErrorCode};
use crate::guard::phi::review::{PhiError, PhiGate};
use crate::outputs::export::{
    self, CsvOptions, CsvSummary, ExportError, SheetSummary, WorkbookOptions, WorkbookSummary,
};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The study-wide rating exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum RatingsFormat {
    /// One row per rating.
    LongCsv,
    /// One row per response × rater × occasion, one column per criterion.
    WideCsv,
    /// The results workbook: codebook, one sheet per expert, agreement.
    Xlsx,
}

impl RatingsFormat {
    fn default_name(self, stem: &str) -> String {
        match self {
            RatingsFormat::LongCsv => format!("{stem}-ratings-long.csv"),
            RatingsFormat::WideCsv => format!("{stem}-ratings-wide.csv"),
            RatingsFormat::Xlsx => format!("{stem}-results.xlsx"),
        }
    }
}

pub use crate::outputs::export::JudgeRepetitions;

/// A rating export: the format and its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RatingsExport {
    pub format: RatingsFormat,
    /// CSV for Excel: byte-order mark and CRLF line ends.
    pub excel: bool,
    /// CSV: add the context and the response text to each row.
    pub texts: bool,
    /// Workbook: include the agreement sheet.
    pub agreement: bool,
    /// Long CSV: a judge's repetitions aggregated (default) or one row each.
    pub judge_repetitions: JudgeRepetitions,
}

impl RatingsExport {
    /// `format` with the defaults: plain CSV without texts, workbook with its agreement sheet.
    pub fn new(format: RatingsFormat) -> RatingsExport {
        RatingsExport {
            format,
            excel: false,
            texts: false,
            agreement: true,
            judge_repetitions: JudgeRepetitions::Aggregate,
        }
    }
}

/// What a rating export wrote: a CSV's rows or a workbook's sheets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RatingsSummary {
    Csv(CsvSummary),
    Workbook(WorkbookSummary),
}

impl RatingsSummary {
    /// Ratings in the file.
    pub fn ratings(&self) -> usize {
        match self {
            RatingsSummary::Csv(s) => s.ratings,
            RatingsSummary::Workbook(s) => s.ratings,
        }
    }
}

/// A rating export written to `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RatingsWritten {
    pub path: PathBuf,
    pub summary: RatingsSummary,
    /// Set when the study is encrypted: the file written is not.
    pub warning: Option<String>,
}

/// A fill-in rating sheet written to `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SheetWritten {
    pub path: PathBuf,
    pub summary: SheetSummary,
    /// Set when the study is encrypted: the file written is not.
    pub warning: Option<String>,
}

/// A file the wizard wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WrittenFile {
    pub path: String,
    /// Ratings in the file (rating exports) or items in it (rating sheets).
    pub count: usize,
    /// Set when the study is encrypted: the file written is not (see
    /// [`crate::outputs::export::plain_copy_warning`]).
    pub warning: Option<String>,
}

impl From<RatingsWritten> for WrittenFile {
    fn from(w: RatingsWritten) -> Self {
        WrittenFile {
            path: w.path.display().to_string(),
            count: w.summary.ratings(),
            warning: w.warning,
        }
    }
}

impl From<SheetWritten> for WrittenFile {
    fn from(w: SheetWritten) -> Self {
        WrittenFile {
            path: w.path.display().to_string(),
            count: w.summary.rows,
            warning: w.warning,
        }
    }
}

/// Why an export was not written.
#[derive(Debug, thiserror::Error)]
pub enum ExportJobError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    Phi(#[from] PhiError),
    #[error(transparent)]
    Export(#[from] ExportError),
}

impl Coded for ExportJobError {
    fn code(&self) -> ErrorCode {
        match self {
            ExportJobError::Path(e) => e.code(),
            ExportJobError::Phi(e) => e.code(),
            ExportJobError::Export(ExportError::Store(e)) => e.code(),
            ExportJobError::Export(_) => ErrorCode::Export,
        }
    }
}

/// Every rating as a long or wide CSV or the results workbook, to `out` or a default file in
/// the export folder; a file already there is replaced only when `overwrite` is set.
pub fn export_ratings(
    study: &mut OpenStudy,
    export: &RatingsExport,
    out: Option<&Path>,
    overwrite: bool,
    gate: PhiGate<'_>,
) -> Result<RatingsWritten, ExportJobError> {
    require_reviewed(study, "an export", gate)?;
    let format = export.format;
    let path = output_path(study, out, &format.default_name(&study_stem(study)))?;
    let options = CsvOptions {
        excel: export.excel,
        texts: export.texts,
        judge_repetitions: export.judge_repetitions,
    };
    let store = study.store();
    let summary = write_output(
        study,
        &path,
        overwrite,
        |staged| -> Result<_, ExportJobError> {
            match format {
                RatingsFormat::LongCsv | RatingsFormat::WideCsv => {
                    let mut w = std::io::BufWriter::new(staged.file());
                    let summary = if format == RatingsFormat::LongCsv {
                        export::write_long_csv(store, &mut w, options)?
                    } else {
                        export::write_wide_csv(store, &mut w, options)?
                    };
                    w.flush().map_err(|e| write_error(&path, e))?;
                    Ok(RatingsSummary::Csv(summary))
                }
                RatingsFormat::Xlsx => {
                    let options = WorkbookOptions {
                        agreement: export.agreement,
                        ..WorkbookOptions::default()
                    };
                    Ok(RatingsSummary::Workbook(export::write_workbook(
                        store,
                        staged.path(),
                        &options,
                    )?))
                }
            }
        },
    )?;
    let warning = plain_copy_warning(study, &path);
    Ok(RatingsWritten {
        path,
        summary,
        warning,
    })
}

/// The fill-in rating sheet of `expert`, to `out` or `<study>-sheet-<expert>.xlsx` in the export
/// folder; a file already there is replaced only when `overwrite` is set.
pub fn export_sheet(
    study: &mut OpenStudy,
    expert: &str,
    out: Option<&Path>,
    overwrite: bool,
    gate: PhiGate<'_>,
) -> Result<SheetWritten, ExportJobError> {
    require_reviewed(study, "a rating sheet", gate)?;
    let name = format!(
        "{}-sheet-{}.xlsx",
        study_stem(study),
        expert_file_slug(study, expert).map_err(PathError::from)?
    );
    let path = output_path(study, out, &name)?;
    let summary = write_output(
        study,
        &path,
        overwrite,
        |staged| -> Result<_, ExportJobError> {
            Ok(export::write_rating_sheet(
                study.store(),
                expert,
                staged.path(),
            )?)
        },
    )?;
    let warning = plain_copy_warning(study, &path);
    Ok(SheetWritten {
        path,
        summary,
        warning,
    })
}
