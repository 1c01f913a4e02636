//! The expert's side of a rater package, as the desktop app offers it: an opened package says whose
//! it is and how far along; when done, "Return ratings" writes a copy to send back to the lead —
//! one self-contained file taken with SQLite's online backup API (the package itself may still
//! have recent ratings in its write-ahead log beside it, which a mailed file would lose).

use crate::app::open_study::OpenStudy;
use crate::app::paths::{typed_path, unused_path, PathError};
use crate::store::{PackageIdentity, StoreError};
use std::path::PathBuf;

/// Whose package the open study is, or `None` when it is a study rather than a package.
pub fn package_identity(study: &OpenStudy) -> Result<Option<PackageIdentity>, StoreError> {
    study.store().package_identity()
}

/// Where "Return ratings" suggests saving: `<package name>-returned.concord` beside the
/// package (numbered when taken).
pub fn default_return_path(study: &OpenStudy) -> Result<PathBuf, StoreError> {
    let path = study.store().path().ok_or_else(|| {
        StoreError::Invalid("a package held only in memory cannot be returned".into())
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "package".into());
    let dir = path.parent().unwrap_or_else(|| std::path::Path::new("."));
    Ok(unused_path(dir, &format!("{stem}-returned.concord")))
}

/// Write the package with the expert's ratings to `out` (an absolute path; a file there is
/// replaced only when `overwrite` is set, the open package and its log files never) and return
/// where it went.
pub fn return_ratings(study: &OpenStudy, out: &str, overwrite: bool) -> Result<PathBuf, PathError> {
    if package_identity(study)?.is_none() {
        return Err(StoreError::Invalid(
            "the open study is not a rater package; only a package's ratings are returned \
             (a lead exports ratings from the setup screen)"
                .into(),
        )
        .into());
    }
    let out = typed_path(out)?;
    study.store().copy_to(&out, overwrite)?;
    Ok(out)
}
