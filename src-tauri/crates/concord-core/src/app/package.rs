//! Rater packages, out and back: write an expert's package (their queue only, encrypted and
//! sealed under a passphrase the lead hands over) to a chosen path or a numbered default in the
//! export folder, behind the PHI gate; merge a returned one (its seal checked, conflicts listed,
//! the study keeping its own values). A merge drops the cached agreement reports.

use crate::app::open_study::OpenStudy;
use crate::app::paths::{created_export_dir, expert_file_slug, study_stem, unused_path, PathError};
use crate::app::phi::require_reviewed;
use crate::base::error_code::{Coded, ErrorCode};
use crate::guard::phi::review::{PhiError, PhiGate};
use crate::store::Passphrase;
use crate::workflow::package::{self, MergeReport, PackageError, PackageSummary};
use serde::Serialize;
use std::path::Path;

/// A rater package written for one expert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PackageWritten {
    pub path: String,
    pub summary: PackageSummary,
}

/// Why a package was not written or merged.
#[derive(Debug, thiserror::Error)]
pub enum PackageJobError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    Phi(#[from] PhiError),
    #[error(transparent)]
    Package(#[from] PackageError),
}

impl Coded for PackageJobError {
    fn code(&self) -> ErrorCode {
        match self {
            PackageJobError::Path(e) => e.code(),
            PackageJobError::Phi(e) => e.code(),
            PackageJobError::Package(PackageError::Store(e)) => e.code(),
            PackageJobError::Package(_) => ErrorCode::Package,
        }
    }
}

/// Write `expert`'s package, sealed under `passphrase`, to `out`, or to
/// `<study>-package-<expert>.concord` in the export folder (numbered when taken). `seed` draws
/// the package id and the source codes. A file already at `out` is replaced only when `overwrite`
/// is set. Refused while PHI findings are open, unless `gate` overrides with a reason.
pub fn export_package(
    study: &mut OpenStudy,
    expert: &str,
    out: Option<&Path>,
    overwrite: bool,
    seed: u64,
    passphrase: &Passphrase,
    gate: PhiGate<'_>,
) -> Result<PackageWritten, PackageJobError> {
    // A weak passphrase is refused before anything else runs (the PHI gate may write).
    passphrase.check_new().map_err(PackageError::from)?;
    require_reviewed(study, "a rater package", gate)?;
    let path = match out {
        Some(p) => p.to_path_buf(),
        None => {
            let name = format!(
                "{}-package-{}.concord",
                study_stem(study),
                expert_file_slug(study, expert).map_err(PathError::from)?
            );
            unused_path(
                &created_export_dir(study)?,
                &crate::base::text::bounded_file_name(&name),
            )
        }
    };
    let summary = package::export_package_to(
        study.store_mut(),
        expert,
        &path,
        overwrite,
        seed,
        passphrase,
    )?;
    Ok(PackageWritten {
        path: path.display().to_string(),
        summary,
    })
}

/// Merge a returned package (opened with `passphrase`); conflicts are listed, the study keeps
/// its values.
pub fn merge_package(
    study: &mut OpenStudy,
    path: &Path,
    passphrase: &Passphrase,
) -> Result<MergeReport, PackageJobError> {
    Ok(package::merge_package(study.store_mut(), path, passphrase)?)
}
