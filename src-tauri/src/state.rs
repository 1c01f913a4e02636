//! App state: the one open study (or the reason it could not be opened, shown in the window), chosen
//! from `--study FILE`, the `CONCORD_STUDY` environment variable, or the default study in the OS
//! app-data folder, which is created as the demo study on first launch. An encrypted study opens
//! with a passphrase remembered in the keyring, else it stays locked (error code
//! `passphrase_needed`) until the unlock screen supplies one; locking drops the open study, and
//! with it the passphrase, from memory.

use crate::error::{ErrorCode, IpcError, IpcResult};
use concord_core::clock::{fresh_seed, SystemClock};
use concord_core::demo::DemoError;
use concord_core::open_study::OpenStudy;
use concord_core::store::StoreError;
use concord_core::study_location::{self, StudyPath, STUDY_ENV};
use concord_core::study_security;
use concord_core::usecase::{self, WhenMissing};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

/// Environment variable that overrides the idle lock in seconds (tests, kiosk set-ups).
pub const IDLE_LOCK_SECONDS_ENV: &str = "CONCORD_IDLE_LOCK_SECONDS";

pub struct AppState {
    study: Mutex<Result<OpenStudy, IpcError>>,
    pub path: Option<StudyPath>,
    /// The idle lock in seconds when `CONCORD_IDLE_LOCK_SECONDS` sets it.
    pub idle_override: Option<u32>,
}

/// The error that keeps an encrypted study locked until a passphrase is given.
pub fn locked_error(path: &std::path::Path) -> IpcError {
    IpcError::from(StoreError::PassphraseNeeded {
        path: path.display().to_string(),
    })
}

/// The study file named on the command line (`--study FILE` or `--study=FILE`), if any.
pub fn study_arg(args: &[String]) -> Option<PathBuf> {
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        if a == crate::STUDY_FLAG {
            return it.next().map(PathBuf::from);
        }
        if let Some(v) = a.strip_prefix("--study=") {
            return Some(PathBuf::from(v));
        }
    }
    None
}

impl AppState {
    pub fn open(explicit: Option<PathBuf>) -> AppState {
        let env = std::env::var(STUDY_ENV).ok();
        let path = study_location::resolve(explicit.as_deref(), env.as_deref());
        let study = match &path {
            None => Err(IpcError::new(
                ErrorCode::NoLocation,
                "This system has no app-data folder; start Concord with --study FILE.",
            )),
            // A study named on the command line that does not exist yet becomes the demo.
            Some(p) => {
                let open = |key| {
                    usecase::open_with(
                        p,
                        WhenMissing::CreateDemo,
                        Arc::new(SystemClock),
                        fresh_seed(),
                        key,
                    )
                };
                match open(None) {
                    Err(DemoError::Store(StoreError::PassphraseNeeded { path })) => {
                        match study_security::remembered_passphrase(p.path()) {
                            // A remembered passphrase that no longer fits (the study was re-keyed
                            // elsewhere) leaves the study locked: the unlock screen asks.
                            Some(key) => open(Some(&key)).map_err(|e| match e {
                                DemoError::Store(StoreError::WrongPassphrase { .. }) => {
                                    IpcError::from(StoreError::PassphraseNeeded { path })
                                }
                                other => IpcError::from(other),
                            }),
                            None => Err(IpcError::from(StoreError::PassphraseNeeded { path })),
                        }
                    }
                    other => other.map_err(IpcError::from),
                }
                .map(|opened| opened.study)
            }
        };
        let idle_override = std::env::var(IDLE_LOCK_SECONDS_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .filter(|s: &u32| *s > 0);
        AppState {
            study: Mutex::new(study),
            path,
            idle_override,
        }
    }

    /// Replace the open study (or the reason there is none): unlocking, locking, converting.
    pub fn replace(&self, study: Result<OpenStudy, IpcError>) -> IpcResult<()> {
        *self.study()? = study;
        Ok(())
    }

    /// The open study, or the error that explains why there is none.
    pub fn study(&self) -> IpcResult<MutexGuard<'_, Result<OpenStudy, IpcError>>> {
        self.study.lock().map_err(|_| {
            IpcError::new(
                ErrorCode::Internal,
                "the study lock was poisoned; restart Concord",
            )
        })
    }

    /// Run `f` on the open study.
    pub fn with_study<T>(&self, f: impl FnOnce(&mut OpenStudy) -> IpcResult<T>) -> IpcResult<T> {
        let mut guard = self.study()?;
        match guard.as_mut() {
            Ok(store) => f(store),
            Err(e) => Err(e.clone()),
        }
    }
}
