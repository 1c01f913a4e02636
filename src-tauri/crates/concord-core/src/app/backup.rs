//! Backups of an open study: whole-study copies taken with SQLite's online backup API (see
//! `store::Store::copy_to`) into a backup folder, one subfolder per study, named by the moment they
//! were taken, of which only the newest [`KEEP`] are kept. The desktop app takes one when a study
//! is closed and every [`INTERVAL_MS`] while it changes. A backup is itself a study: restoring one
//! checks it with `PRAGMA integrity_check` and copies it to a new file, never over the original.
//! The backups of an encrypted study are encrypted with its passphrase (see `store::Store::copy_to`),
//! and every backup file is `0600`. When a study is encrypted or re-keyed, [`secure_backups`]
//! brings the backups taken before under the new passphrase (a plain one is encrypted, one under
//! the old passphrase re-keyed) and removes any it cannot convert, so no plain copy of an
//! encrypted study stays in its backup folder; both front ends say what it did.

use crate::app::open_study::OpenStudy;
use crate::base::clock::iso_utc;
use crate::base::clock::Millis;
pub use crate::store::ChangeStamp;
use crate::store::{
    encrypt_study, is_encrypted, rekey_study, restore_copy, Passphrase, Store, StoreError,
    StoreResult,
};
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
    crate::files::output::create_folder(&folder)?;
    let mut moment = at;
    let mut dest = folder.join(file_name(moment));
    while dest.exists() {
        moment += 1;
        dest = folder.join(file_name(moment));
    }
    store.copy_to(&dest, false)?;
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

/// The desktop app's identifier: its folders under the OS config and data folders.
const DESKTOP_IDENTIFIER: &str = "org.concord.desktop";

/// Where the desktop app keeps backups, as the CLI finds it: the folder chosen in its settings
/// file (`<config dir>/org.concord.desktop/settings.json`, `backup_folder`), else `backups` in its
/// app-data folder.
pub fn desktop_root() -> Option<PathBuf> {
    let chosen = dirs::config_dir()
        .map(|d| d.join(DESKTOP_IDENTIFIER).join("settings.json"))
        .and_then(|f| std::fs::read(f).ok())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("backup_folder")?.as_str().map(PathBuf::from));
    chosen.or_else(|| dirs::data_dir().map(|d| d.join(DESKTOP_IDENTIFIER).join("backups")))
}

/// What [`secure_backups`] did to the backups of one study.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BackupsSecured {
    /// Plain backups encrypted with the new passphrase.
    pub encrypted: usize,
    /// Backups under the old passphrase re-keyed to the new one.
    pub rekeyed: usize,
    /// Plain backups that could not be encrypted (damaged, unreadable), removed.
    pub removed: usize,
}

impl BackupsSecured {
    /// The sentence a front end shows, `None` when there was nothing to do.
    pub fn note(&self) -> Option<String> {
        if *self == BackupsSecured::default() {
            return None;
        }
        let mut parts = Vec::new();
        if self.encrypted > 0 {
            parts.push(format!(
                "{} plain backup(s) taken before encryption were encrypted with the new passphrase",
                self.encrypted
            ));
        }
        if self.rekeyed > 0 {
            parts.push(format!(
                "{} backup(s) were re-keyed to the new passphrase",
                self.rekeyed
            ));
        }
        if self.removed > 0 {
            parts.push(format!(
                "{} plain backup(s) that could not be encrypted were removed",
                self.removed
            ));
        }
        Some(parts.join("; "))
    }
}

/// Bring the backups of the study at `study` under `root` to the passphrase `new` the study was
/// just encrypted or re-keyed with: a plain backup is encrypted, one under `old` (the study's
/// passphrase before a re-key) is re-keyed, and one that cannot be converted is removed. Each
/// conversion writes a complete new file (`0600`) renamed over the old one.
pub fn secure_backups(
    root: &Path,
    study: &Path,
    old: Option<&Passphrase>,
    new: &Passphrase,
) -> StoreResult<BackupsSecured> {
    let mut done = BackupsSecured::default();
    for entry in list(root, study)? {
        let path = Path::new(&entry.path);
        match (is_encrypted(path), old) {
            (Ok(true), Some(old)) => {
                // One under another passphrase stays as it is: encrypted, never plain.
                if rekey_study(path, old, new).is_ok() {
                    done.rekeyed += 1;
                }
            }
            // Taken after the conversion, or under a passphrase not known here: encrypted.
            (Ok(true), None) => {}
            (plain, _) => {
                if plain.is_ok() && encrypt_study(path, new).is_ok() {
                    done.encrypted += 1;
                    continue;
                }
                // A plain copy that cannot be encrypted (damaged, unreadable) is not kept.
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    let mut side = path.as_os_str().to_owned();
                    side.push(suffix);
                    let side = PathBuf::from(side);
                    match std::fs::remove_file(&side) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(io_error(&side, e)),
                    }
                }
                done.removed += 1;
            }
        }
    }
    Ok(done)
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
