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
            MethodsError::Write { .. } => ErrorCode::Io,
            MethodsError::Export(_) | MethodsError::Json(_) => ErrorCode::Export,
        }
    }
}

/// Write the methods appendix for `options` into `dir`; returns the files written.
pub fn write_methods_appendix(
    study: &mut OpenStudy,
    options: &AgreementOptions,
    dir: &Path,
    software: &str,
    gate: PhiGate<'_>,
) -> Result<Vec<PathBuf>, MethodsError> {
    require_reviewed(study, "the methods appendix", gate)?;
    let table = study.agreement_table(options, methods::appendix_view())?;
    let meta = methods::study_json(study.agreement_data(options)?, options, software);
    methods::write_appendix(study.store(), &table, &meta, options, dir, software)
}
