//! The methods appendix that recomputes itself, written where the lead chooses: behind the PHI
//! gate (its `ratings.csv` carries every rating with the judges' rationales), from the agreement
//! table and the study's structure the open study holds. The window's researcher may leave the
//! folder blank: the appendix then goes to `methods-<rubric>` in the study's export folder.

use crate::app::open_study::OpenStudy;
use crate::app::phi::require_reviewed;
use crate::base::error_code::{Coded, ErrorCode};
use crate::guard::phi::review::PhiGate;
use crate::outputs::methods::{self, MethodsError};
use crate::panel::agreement::AgreementOptions;
use crate::store::StoreResult;
use serde::Serialize;
use std::path::{Path, PathBuf};

impl Coded for MethodsError {
    fn code(&self) -> ErrorCode {
        match self {
            MethodsError::Store(e) => e.code(),
            MethodsError::Phi(e) => e.code(),
            MethodsError::Output(e) => e.code(),
            MethodsError::Adjudication(e) => e.code(),
            MethodsError::Export(_)
            | MethodsError::Json(_)
            | MethodsError::Csv(_)
            | MethodsError::Spans(_) => ErrorCode::Export,
        }
    }
}

/// The methods appendix as written: its files, and the warning an encrypted study's appendix
/// carries (its files are plain).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodsWritten {
    /// The folder the files are in.
    pub dir: PathBuf,
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
    let view = methods::appendix_view_of(study.agreement_data(options)?);
    let table = study.agreement_table(options, view)?;
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
    Ok(MethodsWritten {
        dir: dir.to_path_buf(),
        files,
        warning,
    })
}

/// The folder the appendix of `rubric` goes to when none is chosen: `methods-<rubric>` in the
/// study's export folder (`<study>-exports/` beside it).
pub fn default_methods_dir(study: &OpenStudy, rubric: &str) -> StoreResult<PathBuf> {
    let name = format!("methods-{}", crate::app::paths::name_slug(rubric));
    Ok(study
        .export_dir()?
        .join(crate::base::text::bounded_file_name(&name)))
}

/// The window's export of the appendix: into `dir`, or into [`default_methods_dir`] when none is
/// given; otherwise as [`write_methods_appendix`].
pub fn export_methods_appendix(
    study: &mut OpenStudy,
    options: &AgreementOptions,
    dir: Option<&Path>,
    software: &str,
    overwrite: bool,
    gate: PhiGate<'_>,
) -> Result<MethodsWritten, MethodsError> {
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => default_methods_dir(study, &options.rubric)?,
    };
    write_methods_appendix(study, options, &dir, software, overwrite, gate)
}

/// The appendix as the window shows it: the folder and each file written, as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MethodsFiles {
    pub dir: String,
    pub files: Vec<String>,
    /// Set when the study is encrypted: the files written are not.
    pub warning: Option<String>,
}

impl From<MethodsWritten> for MethodsFiles {
    fn from(w: MethodsWritten) -> Self {
        MethodsFiles {
            dir: w.dir.display().to_string(),
            files: w.files.iter().map(|p| p.display().to_string()).collect(),
            warning: w.warning,
        }
    }
}
