//! Backups of an open study: whole-study copies taken with SQLite's online backup API (see
//! `store::Store::copy_to`) into a backup folder, one subfolder per study, named by the moment they
//! were taken, of which only the newest [`KEEP`] are kept. The desktop app takes one when a study
//! is closed and every [`INTERVAL_MS`] while it changes. A backup is itself a study: restoring one
//! checks it with `PRAGMA integrity_check` and copies it to a new file, never over the original.
//! The backups of an encrypted study are encrypted with its passphrase (see `store::Store::copy_to`).

use crate::app::open_study::OpenStudy;
use crate::base::clock::iso_utc;
use crate::base::clock::Millis;
pub use crate::store::ChangeStamp;
use crate::store::{restore_copy, Passphrase, Store, StoreError, StoreResult};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// How many backups of one study are kept.
pub const KEEP: usize = 10;
/// How often a study that changed is backed up while it stays open.
pub const INTERVAL_MS: Millis = 5 * 60 * 1000;

const PREFIX: &str = "backup-";
const EXTENSION: &str = "concord";

/// One backup on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BackupEntry {
    pub path: String,
    /// When it was taken, as ISO-8601 UTC (read from its name).
    pub taken: String,
    pub bytes: u64,
}

/// The subfolder of `root` holding the backups of the study at `study`: the study's name plus a
/// short digest of its full path, so two studies with the same name never share backups.
pub fn study_folder(root: &Path, study: &Path) -> PathBuf {
    let full = study
        .canonicalize()
        .unwrap_or_else(|_| study.to_path_buf())
        .display()
        .to_string();
    let digest = Sha256::digest(full.as_bytes());
    let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let stem = study
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "study".into());
    root.join(format!("{}-{short}", crate::app::paths::name_slug(&stem)))
}

/// The file name of a backup taken at `at`: `backup-2026-11-30T16-05-12-123Z.concord`, which
/// sorts in the order the backups were taken.
pub fn file_name(at: Millis) -> String {
    let stamp = iso_utc(at).replace([':', '.'], "-");
    format!("{PREFIX}{stamp}.{EXTENSION}")
}

fn taken_from_name(name: &str) -> Option<String> {
    let stamp = name.strip_prefix(PREFIX)?.strip_suffix(".concord")?;
    // 2026-11-30T16-05-12-123Z → 2026-11-30T16:05:12.123Z
    let (date, time) = stamp.split_once('T')?;
    let parts: Vec<&str> = time.trim_end_matches('Z').split('-').collect();
    match parts.as_slice() {
        [h, m, s, ms] => Some(format!("{date}T{h}:{m}:{s}.{ms}Z")),
        _ => None,
    }
}

fn io_error(path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        detail: e.to_string(),
    }
}

/// The backups of the study at `study` under `root`, newest first.
pub fn list(root: &Path, study: &Path) -> StoreResult<Vec<BackupEntry>> {
    let folder = study_folder(root, study);
    let entries = match std::fs::read_dir(&folder) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(&folder, e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error(&folder, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(taken) = taken_from_name(&name) else {
            continue;
        };
        let bytes = entry.metadata().map(|m| m.len()).unwrap_or(0);
        found.push((
            name,
            BackupEntry {
                path: entry.path().display().to_string(),
                taken,
                bytes,
            },
        ));
    }
    found.sort_by(|a, b| b.0.cmp(&a.0));
    Ok(found.into_iter().map(|(_, e)| e).collect())
}

/// Back up the open study `store` into its folder under `root` (created if needed), then delete
/// all but the newest `keep` backups of it. `at` names the backup (time is passed in).
pub fn take(store: &Store, root: &Path, at: Millis, keep: usize) -> StoreResult<BackupEntry> {
    let study = store
        .path()
        .ok_or_else(|| StoreError::Invalid("a study held only in memory has no backups".into()))?;
    let folder = study_folder(root, study);
    std::fs::create_dir_all(&folder).map_err(|e| StoreError::ReadOnly {
        path: folder.display().to_string(),
        detail: e.to_string(),
    })?;
    let mut moment = at;
    let mut dest = folder.join(file_name(moment));
    while dest.exists() {
        moment += 1;
        dest = folder.join(file_name(moment));
    }
    store.copy_to(&dest)?;
    let all = list(root, study)?;
    for old in all.iter().skip(keep.max(1)) {
        let p = Path::new(&old.path);
        std::fs::remove_file(p).map_err(|e| io_error(p, e))?;
    }
    let bytes = std::fs::metadata(&dest).map(|m| m.len()).unwrap_or(0);
    Ok(BackupEntry {
        path: dest.display().to_string(),
        taken: iso_utc(moment),
        bytes,
    })
}

/// Restore the backup at `backup` as a new study at `dest` (checked with `PRAGMA
/// integrity_check`; never over an existing file). The backup of an encrypted study needs its
/// passphrase `key` and is restored encrypted with it.
pub fn restore(backup: &Path, dest: &Path, key: Option<&Passphrase>) -> StoreResult<()> {
    restore_copy(backup, dest, key)
}

/// [`take`] for the open study.
pub fn take_of(
    study: &OpenStudy,
    root: &Path,
    at: Millis,
    keep: usize,
) -> StoreResult<BackupEntry> {
    take(study.store(), root, at, keep)
}

/// The open study's change stamp: a backup is due when it differs from the last one's.
pub fn change_stamp(study: &OpenStudy) -> StoreResult<ChangeStamp> {
    study.store().change_stamp()
}
