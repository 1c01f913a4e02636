//! A filled fill-in rating sheet coming back: read as its expert's ratings, all or nothing; the
//! cells that cannot be ratings come back with their sheet, row and column. The window lists
//! them ([`SheetOutcome`]); the CLI prints them. An imported sheet drops the cached reports.

use crate::app::open_study::OpenStudy;
use crate::base::error_code::{Coded, ErrorCode};
use crate::outputs::export::sheet::SheetError;
use crate::outputs::export::{self, CellError, ExportError, SheetImportReport};
use serde::Serialize;
use std::path::Path;

impl Coded for SheetError {
    fn code(&self) -> ErrorCode {
        match self {
            SheetError::Rejected(_) => ErrorCode::Invalid,
            SheetError::Export(ExportError::Store(e)) | SheetError::Store(e) => e.code(),
            SheetError::Export(_) => ErrorCode::Export,
        }
    }
}

/// A filled rating sheet that was imported (`report`) or refused with its bad cells (`errors`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SheetOutcome {
    pub report: Option<SheetImportReport>,
    pub errors: Vec<CellError>,
}

impl SheetOutcome {
    /// The window's view of an import: refused cells become data, other errors stay errors.
    pub fn of(result: Result<SheetImportReport, SheetError>) -> Result<SheetOutcome, SheetError> {
        match result {
            Ok(report) => Ok(SheetOutcome {
                report: Some(report),
                errors: Vec::new(),
            }),
            Err(SheetError::Rejected(errors)) => Ok(SheetOutcome {
                report: None,
                errors,
            }),
            Err(e) => Err(e),
        }
    }
}

/// Import a filled rating sheet as its expert's ratings (all or nothing).
pub fn import_sheet(study: &mut OpenStudy, path: &Path) -> Result<SheetImportReport, SheetError> {
    export::import_rating_sheet(study.store_mut(), path)
}
