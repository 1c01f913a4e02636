//! The paths a job is given and the files it writes: a typed path must be absolute (the app's
//! working folder means nothing to its user), default outputs go to the study's export folder
//! (`<study>-exports/` beside it) under a name made from the study and the person, numbered when
//! taken, and every file is written through `files::output`: the destination judged first (never
//! the open study, a folder, a FIFO or a device; an existing file only when the person asked), the
//! content staged `0600` beside it and renamed into place, so a failure leaves nothing behind.
//! Who the window's lead is in the audit trail is decided here too.

use crate::app::open_study::OpenStudy;
use crate::base::error_code::{Coded, ErrorCode};
use crate::base::text::quoted;
use crate::files::output::{self, Destination, OutputError, Staged};
use crate::store::StoreError;
use std::path::{Path, PathBuf};

/// Why a path cannot be used or a file cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("type a full (absolute) path, e.g. /home/me/study/data.csv; {q0} is relative", q0 = quoted(&.0))]
    RelativePath(String),
    #[error("a path is needed")]
    EmptyPath,
    #[error("{path}: cannot write: {detail}")]
    Write { path: String, detail: String },
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Coded for PathError {
    fn code(&self) -> ErrorCode {
        match self {
            PathError::RelativePath(_) | PathError::EmptyPath => ErrorCode::Path,
            PathError::Write { .. } => ErrorCode::Io,
            PathError::Output(e) => e.code(),
            PathError::Store(e) => e.code(),
        }
    }
}

/// Who the window's lead is in the audit trail: the operating-system account (`USER`, or
/// `USERNAME` on Windows), else "lead".
pub fn desktop_actor() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "lead".to_string())
}

/// A typed path, which must be absolute.
pub fn typed_path(text: &str) -> Result<PathBuf, PathError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(PathError::EmptyPath);
    }
    let path = PathBuf::from(text);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(PathError::RelativePath(text.to_string()))
    }
}

/// A typed output path: blank means "the default file", anything else must be absolute.
pub fn typed_output(text: Option<&str>) -> Result<Option<PathBuf>, PathError> {
    text.filter(|t| !t.trim().is_empty())
        .map(typed_path)
        .transpose()
}

/// A file-name fragment from a person's name: letters and digits kept (any script), the rest `-`.
pub fn name_slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "expert".into()
    } else {
        out
    }
}

/// The file-name fragment of `expert` in default output names, never the same as another
/// expert's of this study: the [`name_slug`], or for a second expert whose name slugs alike
/// (`Anna Lee`, `anna-lee`) the slug with the next free number (`anna-lee-2`). Experts are taken
/// in the order they joined the study, and every other expert's own slug is left free, so each
/// expert keeps the same fragment however often their files are written.
pub fn expert_file_slug(study: &OpenStudy, expert: &str) -> Result<String, StoreError> {
    let experts: Vec<_> = study
        .store()
        .raters()?
        .into_iter()
        .filter(|r| r.kind == crate::store::RaterKind::Expert)
        .map(|r| (r.id, r.name))
        .collect();
    let wanted = name_slug(expert);
    let mut ordered = experts;
    ordered.sort_by_key(|(id, _)| *id);
    let own: std::collections::HashSet<String> =
        ordered.iter().map(|(_, name)| name_slug(name)).collect();
    let mut given: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (_, name) in &ordered {
        let slug = name_slug(name);
        let chosen = if given.insert(slug.clone()) {
            slug
        } else {
            let free = (2..)
                .map(|n| format!("{slug}-{n}"))
                .find(|s| !own.contains(s) && !given.contains(s))
                .expect("some numbered fragment is free");
            given.insert(free.clone());
            free
        };
        if name == expert {
            return Ok(chosen);
        }
    }
    Ok(wanted)
}

/// `dir/name`, or `dir/<stem>-2.<ext>`, `-3`, … when that file already exists.
pub fn unused_path(dir: &Path, name: &str) -> PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    let p = Path::new(name);
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = p
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (2..)
        .map(|n| dir.join(format!("{stem}-{n}{ext}")))
        .find(|p| !p.exists())
        .expect("some numbered name is free")
}

/// The error of writing `path`.
pub(crate) fn write_error(path: &Path, e: impl std::fmt::Display) -> PathError {
    PathError::Write {
        path: path.display().to_string(),
        detail: e.to_string(),
    }
}

/// Write `out` through `f`, which fills the staged temporary file: the destination is judged
/// first (the open study, its log files, a folder, a FIFO or a device are refused, and an existing
/// file unless `overwrite`), the file is staged `0600` beside it and renamed into place; a failure
/// leaves no file.
pub(crate) fn write_output<T, E: From<PathError>>(
    study: &OpenStudy,
    out: &Path,
    overwrite: bool,
    f: impl FnOnce(&mut Staged) -> Result<T, E>,
) -> Result<T, E> {
    let dest = Destination::new(out)
        .overwrite(overwrite)
        .guarding(study.store().path());
    output::write_with(&dest, |staged| f(staged).map_err(Carried)).map_err(|e| e.0)
}

/// Carries a job's error through [`output::write_with`], which needs `From<OutputError>`.
struct Carried<E>(E);

impl<E: From<PathError>> From<OutputError> for Carried<E> {
    fn from(e: OutputError) -> Self {
        Carried(E::from(PathError::Output(e)))
    }
}

/// The study file's name without extension (the prefix of default output names).
pub(crate) fn study_stem(study: &OpenStudy) -> String {
    study
        .store()
        .path()
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "study".into())
}

/// The export folder, created (`0700`) when missing.
pub(crate) fn created_export_dir(study: &OpenStudy) -> Result<PathBuf, PathError> {
    let dir = study.export_dir()?;
    output::create_folder(&dir)?;
    Ok(dir)
}

/// Where an output goes: `out` when given, else `default` (bounded in length) in the export
/// folder (created).
pub(crate) fn output_path(
    study: &OpenStudy,
    out: Option<&Path>,
    default: &str,
) -> Result<PathBuf, PathError> {
    match out {
        Some(p) => Ok(p.to_path_buf()),
        None => Ok(created_export_dir(study)?.join(crate::base::text::bounded_file_name(default))),
    }
}

/// The warning an export of an encrypted study carries (none for a plain study).
pub(crate) fn plain_copy_warning(study: &OpenStudy, file: &Path) -> Option<String> {
    study
        .store()
        .is_encrypted()
        .then(|| crate::outputs::export::plain_copy_warning(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_paths_must_be_absolute() {
        assert!(
            matches!(typed_path("data.csv"), Err(PathError::RelativePath(_))),
            "a relative path is refused with its own error"
        );
        assert!(
            matches!(typed_path("   "), Err(PathError::EmptyPath)),
            "a blank path is refused"
        );
        let abs = std::env::temp_dir().join("x.csv");
        assert_eq!(
            typed_path(&format!("  {}  ", abs.display())).expect("absolute path accepted"),
            abs,
            "surrounding blanks are trimmed"
        );
    }
}
