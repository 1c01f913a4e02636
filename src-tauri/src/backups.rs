//! Automatic backups of the open study. A background thread looks every 15 s (`TICK`) and, when the
//! study changed since its last backup (or since it was opened) and [`backup::INTERVAL_MS`] have
//! passed, copies it with SQLite's online backup API into the backup folder (see `settings`),
//! keeping the newest [`backup::KEEP`]. Closing a study — File → Close, opening another, quitting,
//! and locking an encrypted one — backs it up too when it changed. The window hears `backup-taken` / `backup-failed`.

use crate::error::{ErrorCode, IpcError, IpcResult};
use crate::settings::DesktopSettings;
use crate::state::AppState;
use concord_core::app::backup;
use concord_core::app::backup::BackupEntry;
use concord_core::app::open_study::OpenStudy;
use concord_core::base::clock::Clock;
use concord_core::base::clock::SystemClock;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tauri::{AppHandle, Emitter, Manager, Runtime};

use crate::events::{BACKUP_FAILED, BACKUP_TAKEN};

/// How often the background thread looks at the study.
const TICK: Duration = Duration::from_secs(15);

struct Seen {
    study: PathBuf,
    stamp: backup::ChangeStamp,
    at: Instant,
}

/// What was last backed up (or seen at opening), per the study open now (managed Tauri state).
#[derive(Default)]
pub struct BackupWatch {
    seen: Mutex<Option<Seen>>,
}

impl BackupWatch {
    /// Back up `study` if it changed since it was last seen; when `force` is false, only once
    /// [`backup::INTERVAL_MS`] have passed since then. A study seen for the first time is only
    /// remembered (its first backup follows its first change). Returns the backup written.
    pub fn check(
        &self,
        study: &OpenStudy,
        folder: &std::path::Path,
        force: bool,
    ) -> IpcResult<Option<BackupEntry>> {
        let Some(path) = study.path().map(PathBuf::from) else {
            return Ok(None);
        };
        let stamp = backup::change_stamp(study)?;
        let mut seen = self
            .seen
            .lock()
            .map_err(|_| IpcError::new(ErrorCode::Internal, "the backup lock was poisoned"))?;
        let due = match seen.as_ref() {
            Some(s) if s.study == path => {
                s.stamp != stamp
                    && (force
                        || s.at.elapsed() >= Duration::from_millis(backup::INTERVAL_MS as u64))
            }
            _ => {
                *seen = Some(Seen {
                    study: path,
                    stamp,
                    at: Instant::now(),
                });
                return Ok(None);
            }
        };
        if !due {
            return Ok(None);
        }
        let entry = backup::take_of(study, folder, SystemClock.now_ms(), backup::KEEP)?;
        *seen = Some(Seen {
            study: path,
            stamp,
            at: Instant::now(),
        });
        Ok(Some(entry))
    }
}

/// Take `study`, as it is now, as the base its next backup is compared with (a study just opened,
/// unlocked or converted: its connection is new, so its change stamp starts afresh).
pub fn rebase<R: Runtime>(app: &AppHandle<R>, study: &OpenStudy) {
    let watch = app.state::<BackupWatch>();
    if let Ok(mut seen) = watch.seen.lock() {
        *seen = None;
    }
    let folder = app.state::<DesktopSettings>().backup_folder();
    report(app, watch.check(study, &folder, false));
}

/// Back up `study` now if it changed (the study is being closed or locked), and tell the window.
pub fn on_close<R: Runtime>(app: &AppHandle<R>, study: &OpenStudy) {
    let folder = app.state::<DesktopSettings>().backup_folder();
    let result = app.state::<BackupWatch>().check(study, &folder, true);
    report(app, result);
}

fn report<R: Runtime>(app: &AppHandle<R>, result: IpcResult<Option<BackupEntry>>) {
    match result {
        Ok(Some(entry)) => {
            let _ = app.emit(BACKUP_TAKEN, &entry);
        }
        Ok(None) => {}
        Err(e) => {
            eprintln!("Concord: backup failed: {}", e.message);
            let _ = app.emit(BACKUP_FAILED, &e);
        }
    }
}

/// Start the background thread that backs the open study up while it changes.
pub fn start<R: Runtime>(app: AppHandle<R>) {
    let spawned = std::thread::Builder::new()
        .name("study-backups".into())
        .spawn(move || loop {
            std::thread::sleep(TICK);
            let folder = app.state::<DesktopSettings>().backup_folder();
            let result = match app.state::<AppState>().opened() {
                Ok(guard) => match guard.study.as_ref() {
                    Ok(s) => app.state::<BackupWatch>().check(s, &folder, false),
                    Err(_) => Ok(None),
                },
                Err(e) => Err(e),
            };
            report(&app, result);
        });
    if let Err(e) = spawned {
        eprintln!("Concord: automatic backups are off: {e}");
    }
}
