//! Evidence spans: `concord import spans FILE` (all or nothing, then the audit entry),
//! `concord export spans --out FILE.csv` (behind the PHI gate: the file quotes the replies) and
//! `concord agreement --spans` (unitized α, span F1, judges against experts).

use crate::app::open_study::OpenStudy;
use crate::app::paths::{
    output_path, plain_copy_warning, study_stem, write_error, write_output, PathError,
};
use crate::app::phi::require_reviewed;
use crate::base::error_code::{Coded, ErrorCode};
use crate::guard::phi::review::{PhiError, PhiGate};
use crate::intake::spans::SpansImported;
use crate::intake::ImportError;
use crate::outputs::export::spans::{write_spans_csv, SpansSummary};
use crate::outputs::export::ExportError;
use crate::panel::span_agreement::{SpanAgreementError, SpanAgreementOptions, SpanAgreementReport};
use crate::store::RaterKind;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a span job did not happen.
#[derive(Debug, thiserror::Error)]
pub enum SpanJobError {
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    Phi(#[from] PhiError),
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error(transparent)]
    Agreement(#[from] SpanAgreementError),
}

impl Coded for SpanJobError {
    fn code(&self) -> ErrorCode {
        match self {
            SpanJobError::Import(ImportError::Store(e)) => e.code(),
            SpanJobError::Import(ImportError::Rejected(_)) => ErrorCode::Invalid,
            SpanJobError::Path(e) => e.code(),
            SpanJobError::Phi(e) => e.code(),
            SpanJobError::Export(ExportError::Store(e)) => e.code(),
            SpanJobError::Export(_) => ErrorCode::Export,
            SpanJobError::Agreement(SpanAgreementError::Store(e)) => e.code(),
            SpanJobError::Agreement(SpanAgreementError::UnknownRubric(_)) => ErrorCode::Rubric,
            SpanJobError::Agreement(_) => ErrorCode::Invalid,
        }
    }
}

/// Import the spans of `file`; raters the study does not know are added as `new_kind`.
pub fn import_spans(
    study: &mut OpenStudy,
    file: &Path,
    new_kind: RaterKind,
    seed: u64,
    actor: &str,
) -> Result<SpansImported, SpanJobError> {
    Ok(crate::intake::spans::import_spans(
        study.store_keeping_reports(),
        file,
        new_kind,
        seed,
        actor,
    )?)
}

/// A spans export written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpansWritten {
    pub path: PathBuf,
    pub summary: SpansSummary,
    /// Set when the study is encrypted: the file written is not.
    pub warning: Option<String>,
}

/// Every span as CSV, to `out` or `<study>-spans.csv` in the export folder.
pub fn export_spans(
    study: &mut OpenStudy,
    out: Option<&Path>,
    overwrite: bool,
    gate: PhiGate<'_>,
) -> Result<SpansWritten, SpanJobError> {
    require_reviewed(study, "an export", gate)?;
    let path = output_path(study, out, &format!("{}-spans.csv", study_stem(study)))?;
    let store = study.store();
    let summary = write_output(
        study,
        &path,
        overwrite,
        |staged| -> Result<_, SpanJobError> {
            let mut w = std::io::BufWriter::new(staged.file());
            let summary = write_spans_csv(store, &mut w)?;
            w.flush().map_err(|e| write_error(&path, e))?;
            Ok(summary)
        },
    )?;
    let warning = plain_copy_warning(study, &path);
    Ok(SpansWritten {
        path,
        summary,
        warning,
    })
}

/// The span agreement of `rubric` (default: the first rubric that declares codes).
pub fn span_agreement(
    study: &OpenStudy,
    rubric: Option<&str>,
    options: SpanAgreementOptions,
) -> Result<SpanAgreementReport, SpanJobError> {
    Ok(crate::panel::span_agreement::span_agreement(
        study.store(),
        rubric,
        options,
    )?)
}
