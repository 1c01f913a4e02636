//! App state: the one open study (or the reason it could not be opened, shown in the window), chosen
//! from `--study FILE`, the `CONCORD_STUDY` environment variable, or the default study in the OS
//! app-data folder, which is created as the demo study on first launch. An encrypted study opens
//! with a passphrase remembered in the keyring, else it stays locked (error code
//! `passphrase_needed`) until the unlock screen supplies one; locking drops the open study, and
//! with it the passphrase, from memory. The state also holds whom the window works for (the
//! [`Session`]: lead mode, a locked study's picker, or one expert), decided by the shell from the
//! study, never by the page.

use crate::error::{ErrorCode, IpcError, IpcResult};
use concord_core::clock::{fresh_seed, SystemClock};
use concord_core::demo::DemoError;
use concord_core::open_study::OpenStudy;
use concord_core::rater_session::{self, Session};
use concord_core::store::StoreError;
use concord_core::study_location::{self, StudyPath, STUDY_ENV};
use concord_core::study_security;
use concord_core::usecase::{self, WhenMissing};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Environment variable that overrides the idle lock in seconds (tests, kiosk set-ups).
pub const IDLE_LOCK_SECONDS_ENV: &str = "CONCORD_IDLE_LOCK_SECONDS";

pub struct AppState {
    study: Mutex<Result<OpenStudy, IpcError>>,
    pub path: Option<StudyPath>,
    /// The idle lock in seconds when `CONCORD_IDLE_LOCK_SECONDS` sets it.
    pub idle_override: Option<u32>,
    /// Whom the window works for; `None` until a study is open (an encrypted one behind the unlock
    /// screen), which grants nothing of lead mode.
    session: Mutex<Option<Session>>,
    /// Whether Tauri has granted the lead commands to the window (it cannot take them back).
    lead_granted: AtomicBool,
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
        let session = study
            .as_ref()
            .ok()
            .map(|s| rater_session::at_open(s.store()).unwrap_or(Session::Picking));
        AppState {
            study: Mutex::new(study),
            path,
            idle_override,
            session: Mutex::new(session),
            lead_granted: AtomicBool::new(false),
        }
    }

    /// Replace the open study (or the reason there is none): unlocking, locking, converting. A
    /// rater session survives; otherwise the newly opened study decides the session.
    pub fn replace(&self, study: Result<OpenStudy, IpcError>) -> IpcResult<()> {
        let mut guard = self.study()?;
        *guard = study;
        if let Ok(s) = guard.as_ref() {
            let mut session = self.session_guard();
            if matches!(*session, None | Some(Session::Lead)) {
                *session = Some(rater_session::at_open(s.store()).unwrap_or(Session::Picking));
            }
        }
        Ok(())
    }

    fn session_guard(&self) -> MutexGuard<'_, Option<Session>> {
        // The session is a plain value: a panic elsewhere cannot leave it half-written.
        self.session.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whom the window works for (a study not yet open counts as the picker: nothing of lead mode).
    pub fn session(&self) -> Session {
        self.session_guard().unwrap_or(Session::Picking)
    }

    pub fn set_session(&self, session: Session) {
        *self.session_guard() = Some(session);
    }

    /// The expert of the rater session; refused outside one.
    pub fn rater_id(&self) -> IpcResult<i64> {
        Ok(self.session().rater_id()?)
    }

    pub fn lead_granted(&self) -> bool {
        self.lead_granted.load(Ordering::SeqCst)
    }

    pub fn mark_lead_granted(&self) {
        self.lead_granted.store(true, Ordering::SeqCst);
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
