//! The methods appendix that recomputes itself, written where the lead chooses: behind the PHI
//! gate (its `ratings.csv` carries every rating with the judges' rationales), from the agreement
//! table and the study's structure the open study holds.

use crate::app::open_study::OpenStudy;
use crate::app::phi::require_reviewed;
use crate::base::error_code::{Coded, ErrorCode};
use crate::guard::phi::review::PhiGate;
use crate::outputs::methods::{self, MethodsError};
use crate::panel::agreement::AgreementOptions;
use std::path::{Path, PathBuf};

impl Coded for MethodsError {
    fn code(&self) -> ErrorCode {
        match self {
            MethodsError::Store(e) => e.code(),
            MethodsError::Phi(e) => e.code(),
            MethodsError::Output(e) => e.code(),
            MethodsError::Export(_) | MethodsError::Json(_) | MethodsError::Csv(_) => {
                ErrorCode::Export
            }
        }
    }
}

/// The methods appendix as written: its files, and the warning an encrypted study's appendix
/// carries (its files are plain).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodsWritten {
    pub files: Vec<PathBuf>,
    /// Set when the study is encrypted: the files written are not.
    pub warning: Option<String>,
}

/// Write the methods appendix for `options` into `dir`; files already there are replaced only
/// when `overwrite` is set.
pub fn write_methods_appendix(
    study: &mut OpenStudy,
    options: &AgreementOptions,
    dir: &Path,
    software: &str,
    overwrite: bool,
    gate: PhiGate<'_>,
) -> Result<MethodsWritten, MethodsError> {
    require_reviewed(study, "the methods appendix", gate)?;
    let table = study.agreement_table(options, methods::appendix_view())?;
    let meta = methods::study_json(study.agreement_data(options)?, options, software);
    let files = methods::write_appendix(
        study.store(),
        &table,
        &meta,
        options,
        dir,
        software,
        overwrite,
    )?;
    let warning = crate::app::paths::plain_copy_warning(study, dir);
    Ok(MethodsWritten { files, warning })
}
