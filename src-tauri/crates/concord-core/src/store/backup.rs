//! Whole-study copies taken with SQLite's online backup API: a consistent snapshot of the study
//! (including what still sits in its write-ahead log) written while the study stays open and in
//! use. Backups, a returned rater package and a restored study are all made this way, so the copy
//! is always a single self-contained file. Also the checks a copy must pass (`PRAGMA
//! integrity_check`) and a stamp that tells whether the study changed since the last copy.
//!
//! The copy of an encrypted study (or of a sealed rater package) is encrypted with the same
//! passphrase: SQLCipher's backup runs between two connections keyed alike, so every page is
//! written encrypted and the copy opens only with that passphrase.

use super::cipher::apply_key;
use super::{display, inspect_with, FileKind, Passphrase, Store, StoreError, StoreResult};
use crate::files::output::{self, Destination};
use rusqlite::backup::Backup;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Pages copied per step of the online backup; between steps other connections may write.
const PAGES_PER_STEP: std::os::raw::c_int = 4096;

/// Remove the write-ahead log and shared-memory files SQLite may have left beside `path`, so a file
/// renamed into place there is never read together with another database's log.
fn remove_sidecars(path: &Path) -> StoreResult<()> {
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let side = PathBuf::from(name);
        match std::fs::remove_file(&side) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(StoreError::ReadOnly {
                    path: display(&side),
                    detail: e.to_string(),
                })
            }
        }
    }
    Ok(())
}

/// Copy the database behind `source` into a new file at `dest` through `files::output`: judged
/// first (never the study at `guard`, a folder, a FIFO or a device; a file there only when
/// `overwrite`), written into a temporary file created `0600` beside it and renamed into place, so
/// `dest` is either the whole copy or untouched. `key` is the passphrase `source` was opened with
/// (the copy is encrypted with it), `None` for a plain study.
fn copy_database(
    source: &Connection,
    dest: &Path,
    key: Option<&Passphrase>,
    overwrite: bool,
    guard: Option<&Path>,
) -> StoreResult<()> {
    if let Some(folder) = dest.parent().filter(|f| !f.as_os_str().is_empty()) {
        if !folder.is_dir() {
            return Err(StoreError::MissingFolder {
                path: display(dest),
                folder: display(folder),
            });
        }
    }
    let target = Destination::new(dest).overwrite(overwrite).guarding(guard);
    output::write_with(&target, |staged| -> StoreResult<()> {
        let tmp = staged.path().to_path_buf();
        let copied = (|| -> StoreResult<()> {
            let mut target = Connection::open_with_flags(
                &tmp,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
            )
            .map_err(|e| StoreError::ReadOnly {
                path: display(dest),
                detail: e.to_string(),
            })?;
            if let Some(key) = key {
                apply_key(&target, key)?;
            }
            {
                let backup = Backup::new(source, &mut target)?;
                backup.run_to_completion(PAGES_PER_STEP, Duration::ZERO, None)?;
            }
            // One file, no log beside it: the copy can be mailed or moved on its own.
            target.query_row("PRAGMA journal_mode = DELETE", [], |_| Ok(()))?;
            target.close().map_err(|(_, e)| StoreError::Sqlite(e))?;
            Ok(())
        })();
        if copied.is_err() {
            let _ = remove_sidecars(&tmp);
            return copied;
        }
        // A log left beside the destination belongs to another database: never read with this one.
        remove_sidecars(dest)
    })
}

impl Store {
    /// Write a consistent copy of the whole study to a new file at `dest` (never the study
    /// itself or its log files; a file already there only when `overwrite`). The copy is `0600`
    /// and, for an encrypted study, encrypted with its passphrase. The study stays open and usable
    /// throughout.
    pub fn copy_to(&self, dest: &Path, overwrite: bool) -> StoreResult<()> {
        copy_database(self.conn(), dest, self.passphrase(), overwrite, self.path())
    }

    /// A stamp that differs whenever the study changed since it was last taken: writes through
    /// this connection (`total_changes()`) and commits by any other connection to the same file
    /// (`PRAGMA data_version`, e.g. a judge run on its own thread).
    pub fn change_stamp(&self) -> StoreResult<ChangeStamp> {
        let own: i64 = self
            .conn()
            .query_row("SELECT total_changes()", [], |r| r.get(0))?;
        let others: i64 = self
            .conn()
            .query_row("PRAGMA data_version", [], |r| r.get(0))?;
        Ok(ChangeStamp { own, others })
    }
}

/// What [`Store::change_stamp`] reads: equal stamps mean no change in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeStamp {
    /// Rows changed through this connection since it opened.
    pub own: i64,
    /// SQLite's counter of commits made by other connections to the same file.
    pub others: i64,
}

/// Open the study file at `path` read-only, keyed with `key` when it is encrypted.
fn open_read_only(path: &Path, key: Option<&Passphrase>) -> StoreResult<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    if let Some(key) = key {
        apply_key(&conn, key)?;
    }
    Ok(conn)
}

/// Run SQLite's `PRAGMA integrity_check` on the file at `path` (opened read-only; an encrypted
/// one with `key`) and return the problems it lists: empty when the file is sound. A file that is
/// not a Concord study is an error, as when opening it; so is an encrypted one without its
/// passphrase (`PassphraseNeeded`) or with a wrong one (`WrongPassphrase`).
pub fn integrity_problems(path: &Path, key: Option<&Passphrase>) -> StoreResult<Vec<String>> {
    match inspect_with(path, key) {
        Ok(FileKind::Absent) => {
            return Err(StoreError::Missing {
                path: display(path),
            })
        }
        Ok(FileKind::Study { .. }) => {}
        // A page SQLite cannot read while the file is being recognised is itself a problem found.
        Err(StoreError::Sqlite(e)) => return Ok(vec![e.to_string()]),
        Err(StoreError::Damaged { .. }) => return Ok(vec!["a page fails its check".into()]),
        Err(e) => return Err(e),
    }
    let conn = open_read_only(path, key)?;
    let checked = (|| -> rusqlite::Result<Vec<String>> {
        let mut stmt = conn.prepare("PRAGMA integrity_check")?;
        let lines = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(lines)
    })();
    match checked {
        Ok(lines) => Ok(lines.into_iter().filter(|l| l != "ok").collect()),
        // A page too damaged for the check itself to read is a problem it found.
        Err(e) => Ok(vec![e.to_string()]),
    }
}

impl Store {
    /// Every page of this study checked: an encrypted one's pages against their HMAC
    /// (SQLCipher's `cipher_integrity_check`), then SQLite's structure check (`quick_check`).
    /// The problems found, empty when the file is sound; a page too damaged to read is a problem
    /// found, not an error.
    pub fn page_problems(&self) -> StoreResult<Vec<String>> {
        let conn = self.conn();
        let lines = |sql: &str| -> Vec<String> {
            let read = (|| -> rusqlite::Result<Vec<String>> {
                let mut stmt = conn.prepare(sql)?;
                let lines = stmt
                    .query_map([], |r| r.get::<_, String>(0))?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(lines)
            })();
            match read {
                Ok(lines) => lines.into_iter().filter(|l| l != "ok").collect(),
                Err(e) => vec![e.to_string()],
            }
        };
        let mut problems = Vec::new();
        if self.is_encrypted() {
            problems.extend(lines("PRAGMA cipher_integrity_check"));
        }
        if problems.is_empty() {
            problems.extend(lines("PRAGMA quick_check"));
        }
        Ok(problems)
    }
}

/// Copy the study file at `source` (a backup) to a new file at `dest`, checked first: refused when
/// `source` fails the integrity check, and never over an existing file. An encrypted backup needs
/// its passphrase `key`, and the restored study is encrypted with it too.
pub fn restore_copy(source: &Path, dest: &Path, key: Option<&Passphrase>) -> StoreResult<()> {
    let encrypted = super::cipher::is_encrypted(source)?;
    let key = if encrypted { key } else { None };
    let problems = integrity_problems(source, key)?;
    if !problems.is_empty() {
        return Err(StoreError::Invalid(format!(
            "{}: the backup is damaged ({}); choose another backup",
            display(source),
            problems.join("; ")
        )));
    }
    if std::fs::symlink_metadata(dest).is_ok() {
        return Err(StoreError::AlreadyExists {
            path: display(dest),
        });
    }
    let conn = open_read_only(source, key)?;
    copy_database(&conn, dest, key, false, Some(source))
}
