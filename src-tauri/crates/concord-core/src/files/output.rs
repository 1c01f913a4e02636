//! The one writer of every file Concord puts on disk (exports, sheets, the methods appendix,
//! packages, backups, new studies): a destination is judged before anything is opened — the open
//! study and its `-wal`, `-shm` and `-journal` files (compared by device and inode, and by
//! canonical folder and name for a log that does not exist yet), a folder, a FIFO, a socket and a
//! device are refused, and an existing file is replaced only when it is a regular file and the
//! caller says so — then the content goes into a temporary file created `0600` in the
//! destination's folder, is flushed to disk and renamed into place (without replacing anything
//! that appeared meanwhile, unless replacing was asked for). On any failure the temporary file is
//! removed, so a failed write leaves nothing behind and never touches what was at the path.
//!
//! Only metadata is read to judge a path (`symlink_metadata`, `metadata`): a FIFO is never opened,
//! so judging one never blocks, and a device is never written. A symbolic link is judged by what
//! it points to; when replacing is allowed, the link itself is replaced (its target is not written).

use crate::base::error_code::{Coded, ErrorCode};
use std::fs::File;
use std::path::{Path, PathBuf};

/// Why a destination was refused or a write failed: the path and the reason.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct OutputError {
    pub path: String,
    pub reason: Reason,
}

/// The reason an [`OutputError`] gives.
#[derive(Debug, thiserror::Error)]
pub enum Reason {
    #[error("is the open study; choose another file")]
    OpenStudy,
    #[error("is the open study's {0} file; choose another file")]
    StudySidecar(&'static str),
    #[error("is a folder; name a file inside it")]
    Directory,
    #[error("is a FIFO (named pipe); choose a regular file")]
    Fifo,
    #[error("is a socket; choose a regular file")]
    Socket,
    #[error("is a device; choose a regular file")]
    Device,
    #[error("is not a regular file; choose another path")]
    Special,
    #[error("exists; pass --force to replace it")]
    Exists,
    #[error("the folder {0} does not exist")]
    MissingFolder(String),
    #[error("cannot write: {0}")]
    Io(#[from] std::io::Error),
}

impl OutputError {
    fn new(path: &Path, reason: impl Into<Reason>) -> OutputError {
        OutputError {
            path: path.display().to_string(),
            reason: reason.into(),
        }
    }

    /// Whether the destination was refused only because a file is there (replacing it is the
    /// person's choice: `--force`, or the window's confirmation).
    pub fn is_existing_file(&self) -> bool {
        matches!(self.reason, Reason::Exists)
    }

    /// Whether the destination itself was refused (as opposed to a write that failed).
    pub fn is_refused_path(&self) -> bool {
        !matches!(self.reason, Reason::Io(_) | Reason::Exists)
    }
}

impl Coded for OutputError {
    /// `already_exists` when only a file is in the way (the window offers to replace it), `path`
    /// when the destination itself is refused, else `io`.
    fn code(&self) -> ErrorCode {
        if self.is_existing_file() {
            ErrorCode::AlreadyExists
        } else if self.is_refused_path() {
            ErrorCode::Path
        } else {
            ErrorCode::Io
        }
    }
}

/// Where a file goes and what may be there.
#[derive(Debug, Clone, Copy)]
pub struct Destination<'a> {
    /// The file to write.
    pub path: &'a Path,
    /// Replace a regular file already at `path` (`--force`, or a path the person confirmed).
    pub overwrite: bool,
    /// The open study, which no output may replace (nor its log or shared-memory files).
    pub study: Option<&'a Path>,
}

impl<'a> Destination<'a> {
    /// A new file at `path` that replaces nothing.
    pub fn new(path: &'a Path) -> Destination<'a> {
        Destination {
            path,
            overwrite: false,
            study: None,
        }
    }

    /// `self`, replacing a regular file already there when `overwrite` is set.
    pub fn overwrite(self, overwrite: bool) -> Destination<'a> {
        Destination { overwrite, ..self }
    }

    /// `self`, guarding the open study at `study`.
    pub fn guarding(self, study: Option<&'a Path>) -> Destination<'a> {
        Destination { study, ..self }
    }
}

/// The files beside a SQLite database that belong to it.
const SIDECARS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// `path` with `suffix` appended to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// `path` as its canonical folder joined with its own name (the file need not exist).
fn canonical_place(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    let folder = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => p.canonicalize().ok()?,
        None => std::env::current_dir().ok()?.canonicalize().ok()?,
    };
    Some(folder.join(name))
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

/// Refuse `dest` when it is the study at `study` or one of its sidecar files.
fn check_not_study(dest: &Path, study: &Path) -> Result<(), OutputError> {
    let target = std::fs::metadata(dest).ok();
    let place = canonical_place(dest);
    let candidates = std::iter::once((study.to_path_buf(), None))
        .chain(SIDECARS.map(|s| (with_suffix(study, s), Some(s))));
    for (file, sidecar) in candidates {
        let reason = || match sidecar {
            None => Reason::OpenStudy,
            Some(s) => Reason::StudySidecar(s),
        };
        if let (Some(target), Ok(theirs)) = (&target, std::fs::metadata(&file)) {
            if same_file(target, &theirs) {
                return Err(OutputError::new(dest, reason()));
            }
        }
        let theirs = canonical_place(&file);
        if place.is_some() && place == theirs {
            return Err(OutputError::new(dest, reason()));
        }
        // A link to the study (or a path through a linked folder) resolves to it.
        if let (Ok(a), Ok(b)) = (dest.canonicalize(), file.canonicalize()) {
            if a == b {
                return Err(OutputError::new(dest, reason()));
            }
        }
    }
    Ok(())
}

/// What kind of thing is at a path, judged from its metadata alone.
fn check_kind(dest: &Path, meta: &std::fs::Metadata) -> Result<(), OutputError> {
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(OutputError::new(dest, Reason::Directory));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Err(OutputError::new(dest, Reason::Fifo));
        }
        if kind.is_socket() {
            return Err(OutputError::new(dest, Reason::Socket));
        }
        if kind.is_block_device() || kind.is_char_device() {
            return Err(OutputError::new(dest, Reason::Device));
        }
    }
    if !kind.is_file() {
        return Err(OutputError::new(dest, Reason::Special));
    }
    Ok(())
}

/// Judge `dest` without opening anything at it: refused when it is the open study or one of its
/// files, a folder, a FIFO, a socket or a device, when a file is there and replacing was not
/// asked for, or when its folder does not exist.
pub fn check(dest: &Destination<'_>) -> Result<(), OutputError> {
    let path = dest.path;
    if let Some(study) = dest.study {
        check_not_study(path, study)?;
    }
    if let Ok(link) = std::fs::symlink_metadata(path) {
        // A link is judged by its target; a dangling one is something already there.
        match std::fs::metadata(path) {
            Ok(meta) => check_kind(path, &meta)?,
            Err(_) if link.file_type().is_symlink() => {}
            Err(e) => return Err(OutputError::new(path, e)),
        }
        if !dest.overwrite {
            return Err(OutputError::new(path, Reason::Exists));
        }
    }
    let folder = folder_of(path);
    if !folder.is_dir() {
        return Err(OutputError::new(
            path,
            Reason::MissingFolder(folder.display().to_string()),
        ));
    }
    Ok(())
}

fn folder_of(path: &Path) -> PathBuf {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => p.to_path_buf(),
        None => PathBuf::from("."),
    }
}

/// The temporary file a write goes into before it is renamed into place: created `0600` in the
/// destination's folder, empty. Writers that need a path (a workbook, a database) use
/// [`Staged::path`]; the others write to [`Staged::file`].
pub struct Staged {
    file: File,
    path: PathBuf,
}

impl Staged {
    /// The temporary file's path (it exists, empty, mode `0600`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary file, open for writing.
    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }
}

/// Write a new file at `dest` through `write`: the destination is judged ([`check`]), `write`
/// fills a temporary file created `0600` beside it, which is then flushed to disk and renamed to
/// `dest`. When `write` fails, or anything after it does, the temporary file is removed and what
/// was at `dest` is untouched.
pub fn write_with<T, E: From<OutputError>>(
    dest: &Destination<'_>,
    write: impl FnOnce(&mut Staged) -> Result<T, E>,
) -> Result<T, E> {
    check(dest)?;
    let path = dest.path;
    let folder = folder_of(path);
    let stem = path
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(40).collect::<String>())
        .unwrap_or_default();
    let prefix = format!(".{stem}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o600));
    }
    let named = builder
        .tempfile_in(&folder)
        .map_err(|e| OutputError::new(path, e))?;
    let (file, temp) = named.into_parts();
    let mut staged = Staged {
        file,
        path: temp.to_path_buf(),
    };
    // `temp` removes the file when dropped, on every path out of here but the rename.
    let value = write(&mut staged)?;
    let Staged { file, path: _ } = staged;
    drop(file);
    // Writers that reopened the file by path wrote through other handles: flush the file itself.
    File::open(&temp)
        .and_then(|f| f.sync_all())
        .map_err(|e| OutputError::new(path, e))?;
    // The destination is judged again just before the rename (it may have changed meanwhile).
    check(dest)?;
    let renamed = if dest.overwrite {
        temp.persist(path)
    } else {
        temp.persist_noclobber(path)
    };
    renamed.map_err(|e| {
        let reason = if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            Reason::Exists
        } else {
            Reason::Io(e.error)
        };
        // Dropping the returned temporary path removes the file.
        drop(e.path);
        OutputError::new(path, reason)
    })?;
    // Make the rename itself durable (best effort where folders cannot be opened).
    if let Ok(d) = File::open(&folder) {
        let _ = d.sync_all();
    }
    Ok(value)
}

/// Write `bytes` as a new file at `dest` ([`write_with`]).
pub fn write_bytes(dest: &Destination<'_>, bytes: &[u8]) -> Result<(), OutputError> {
    write_with(dest, |staged| -> Result<(), OutputError> {
        use std::io::Write;
        staged
            .file()
            .write_all(bytes)
            .map_err(|e| OutputError::new(dest.path, e))
    })
}

/// Create a folder for outputs (and its parents) when missing; a path that is there but is not a
/// folder is refused with its kind. New folders are `0700`, as their files are `0600`.
pub fn create_folder(path: &Path) -> Result<(), OutputError> {
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Ok(());
        }
        check_kind(path, &meta)?;
        return Err(OutputError::new(
            path,
            Reason::Io(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "a file is there, not a folder",
            )),
        ));
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path).map_err(|e| OutputError::new(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_folder_as_it_was() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let out = dir.path().join("out.csv");
        let failed: Result<(), OutputError> = write_with(&Destination::new(&out), |staged| {
            use std::io::Write;
            staged.file().write_all(b"half").expect("written");
            Err(OutputError::new(&out, Reason::Special))
        });
        assert!(failed.is_err(), "the writer's error comes back");
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("listed").collect();
        assert!(
            left.is_empty(),
            "neither the output nor its temporary file is left: {left:?}"
        );
    }

    #[test]
    fn a_sidecar_that_does_not_exist_yet_is_still_the_studys() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let study = dir.path().join("s.concord");
        std::fs::write(&study, b"x").expect("study stand-in");
        let wal = dir.path().join("./s.concord-wal");
        let refused = check(&Destination::new(&wal).guarding(Some(&study)));
        assert!(
            matches!(
                refused,
                Err(OutputError {
                    reason: Reason::StudySidecar("-wal"),
                    ..
                })
            ),
            "a log SQLite would read with the study is refused by name: {refused:?}"
        );
    }
}
