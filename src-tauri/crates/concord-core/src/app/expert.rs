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

/// A returned copy written: where, and the earlier copies beside the package it supersedes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ReturnedCopy {
    /// The file to send back: it holds every rating made so far.
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub path: PathBuf,
    /// Earlier "Return ratings" copies beside the package (`<package>-returned.concord`,
    /// `<package>-returned-2.concord`, …) other than `path`: older, so not the ones to send.
    #[cfg_attr(feature = "ts", ts(type = "Array<string>"))]
    pub superseded: Vec<PathBuf>,
}

/// The copies "Return ratings" has written beside the package under the names it suggests
/// (`<stem>-returned.concord`, `<stem>-returned-N.concord`), but `written`, by name.
fn earlier_returns(study: &OpenStudy, written: &std::path::Path) -> Vec<PathBuf> {
    let Some(package) = study.store().path() else {
        return Vec::new();
    };
    let stem = package
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = format!("{stem}-returned");
    let dir = package
        .parent()
        .unwrap_or_else(|| std::path::Path::new("."));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.as_path() != written)
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            let Some(rest) = name.as_deref().and_then(|n| n.strip_suffix(".concord")) else {
                return false;
            };
            rest == base
                || rest
                    .strip_prefix(&base)
                    .and_then(|r| r.strip_prefix('-'))
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    found.sort();
    found
}

/// [`return_ratings`], saying which earlier copies beside the package the new one supersedes, so
/// the expert knows which file to send (the window's "Return ratings").
pub fn return_ratings_copy(
    study: &OpenStudy,
    out: &str,
    overwrite: bool,
) -> Result<ReturnedCopy, PathError> {
    let path = return_ratings(study, out, overwrite)?;
    let superseded = earlier_returns(study, &path);
    Ok(ReturnedCopy { path, superseded })
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
