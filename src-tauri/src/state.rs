//! App state: the one open study (or the reason none is open, shown in the window). At launch it
//! is chosen from the command line (see `launch`), the `CONCORD_STUDY` environment variable, or the
//! default study in the OS app-data folder, which is created as the demo study on first launch.
//! While the app runs the study can be switched (File → Open…, a double-clicked file, a second
//! launch), created, or closed; every switch drops the previous study's cached agreement reports
//! with it, because they live inside the [`OpenStudy`].
//!
//! Every study, at launch or at runtime, is opened by [`open_at`]: an encrypted study (or a sealed
//! rater package) opens with a passphrase remembered in the keyring, else it stays locked (error
//! code `passphrase_needed`, its path kept) until the unlock screen supplies one; locking drops
//! the open study, and with it the passphrase, from memory.
//!
//! The state also holds whom the window works for (the [`Session`]: lead mode, a locked study's
//! picker, or one expert), decided by the shell from the study, never by the page: each study
//! opened decides it afresh (as a relaunch on that file would); unlocking, locking or converting
//! the same study keeps a rater session.
//!
//! Study work never runs on the window's main thread nor on the async runtime's workers: a
//! command hands it to [`AppState::run`] (the open study), [`AppState::run_opened`] (the study or
//! the reason there is none) or [`AppState::run_with`] (a job of several steps: open and switch,
//! unlock, convert), which run it on the blocking pool and wait there for the study lock. So a
//! long import holding the lock makes other study calls wait their turn while the window goes on
//! answering. The synchronous methods ([`AppState::with_study`], [`AppState::opened`], …) are for
//! code already off those threads: the blocking pool, the shell's own threads, launch and exit.
use crate::error::{ErrorCode, IpcError, IpcResult};
use concord_core::app::open::{self, WhenMissing};
use concord_core::app::open_study::OpenStudy;
use concord_core::app::session as rater_session;
use concord_core::app::study_security;
use concord_core::app::study_security::UnlockAttempts;
use concord_core::base::clock::fresh_seed;
use concord_core::base::clock::SystemClock;
use concord_core::base::study_location;
use concord_core::base::study_location::StudyPath;
use concord_core::base::study_location::STUDY_ENV;
use concord_core::intake::demo::DemoError;
use concord_core::store::{Passphrase, Store, StoreError};
use concord_core::workflow::rater_session::Session;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Environment variable that overrides the idle lock in seconds (tests, kiosk set-ups).
pub const IDLE_LOCK_SECONDS_ENV: &str = "CONCORD_IDLE_LOCK_SECONDS";

/// The study the window shows: where it is, and the open study or why it is not open (locked,
/// missing, damaged, closed).
pub struct Opened {
    pub path: Option<StudyPath>,
    pub study: Result<OpenStudy, IpcError>,
}

impl Opened {
    /// The file of the study the window has, open or locked.
    pub fn file(&self) -> Option<PathBuf> {
        self.path.as_ref().map(|p| p.path().to_path_buf())
    }
}

/// The shell's state, managed by Tauri. A clone shares everything (the parts live behind one
/// `Arc`), so a job on the blocking pool takes its own handle.
#[derive(Clone)]
pub struct AppState {
    shared: Arc<Shared>,
    /// The idle lock in seconds when `CONCORD_IDLE_LOCK_SECONDS` sets it.
    pub idle_override: Option<u32>,
}

struct Shared {
    opened: Mutex<Opened>,
    /// Whom the window works for; `None` until a study is open (an encrypted one behind the unlock
    /// screen), which grants nothing of lead mode.
    session: Mutex<Option<Session>>,
    /// Whether Tauri has granted the lead commands to the window (it cannot take them back).
    lead_granted: AtomicBool,
    /// Wrong passphrases given to the unlock screen in a row (the core's backoff policy).
    unlock_attempts: Mutex<UnlockAttempts>,
    /// Wrong lead passphrases given to leave a locked study's rater session, likewise.
    lead_attempts: Mutex<UnlockAttempts>,
}

/// Run `f` on the async runtime's blocking pool and wait for it without holding a worker.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> IpcResult<T> + Send + 'static,
) -> IpcResult<T> {
    tauri::async_runtime::spawn_blocking(f).await.map_err(|e| {
        IpcError::new(
            ErrorCode::Internal,
            format!("a study job stopped before it finished: {e}"),
        )
    })?
}

/// The session a study just opened starts in (`None` while it is not open).
fn session_at_open(study: &Result<OpenStudy, IpcError>) -> Option<Session> {
    study
        .as_ref()
        .ok()
        .map(|s| rater_session::at_open(s).unwrap_or(Session::Picking))
}

/// The error that keeps an encrypted study locked until a passphrase is given.
pub fn locked_error(path: &Path) -> IpcError {
    IpcError::from(StoreError::PassphraseNeeded {
        path: path.display().to_string(),
    })
}

/// Whether `study` is an encrypted study waiting behind the unlock screen.
pub fn is_locked(study: &Result<OpenStudy, IpcError>) -> bool {
    matches!(study, Err(e) if e.code == ErrorCode::PassphraseNeeded)
}

/// Open the study at `p` for the window. An encrypted one opens with the passphrase remembered in
/// the keyring; without one (or with one that no longer fits, the study having been re-keyed
/// elsewhere) it stays locked and the unlock screen asks.
pub fn open_at(p: &StudyPath, when_missing: WhenMissing) -> Result<OpenStudy, IpcError> {
    let open = |key| open::open(p, when_missing, Arc::new(SystemClock), fresh_seed(), key);
    match open(None) {
        Err(DemoError::Store(StoreError::PassphraseNeeded { path })) => {
            match study_security::remembered_passphrase(p.path()) {
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

impl AppState {
    /// Open the study for launch: `explicit` (the command line; refused, and nothing created,
    /// when no such file exists), else `CONCORD_STUDY` (created as the demo study when absent),
    /// else `last` (the study opened most recently, when it still exists), else the default study
    /// (created as the demo study when absent).
    pub fn open(explicit: Option<PathBuf>, last: Option<PathBuf>) -> AppState {
        // Relative paths are made absolute once, here, so the recent list and every later
        // reopening mean the same file whatever the working folder.
        let absolute = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
        let explicit = explicit.map(absolute);
        let env = std::env::var(STUDY_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| absolute(PathBuf::from(v)).display().to_string());
        let when_missing = if explicit.is_some() {
            WhenMissing::Refuse
        } else {
            WhenMissing::CreateDemo
        };
        let path = match (&explicit, &env, last) {
            (None, None, Some(last)) => Some(StudyPath::Explicit(last)),
            _ => study_location::resolve(explicit.as_deref(), env.as_deref()),
        };
        let study = match &path {
            None => Err(IpcError::new(
                ErrorCode::NoLocation,
                "This system has no app-data folder; start Concord with a study file.",
            )),
            Some(p) => open_at(p, when_missing),
        };
        if let (Some(file), Err(e)) = (&explicit, &study) {
            if !file.exists() {
                eprintln!("Concord: {}", e.message);
            }
        }
        let idle_override = std::env::var(IDLE_LOCK_SECONDS_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .filter(|s: &u32| *s > 0);
        let session = session_at_open(&study);
        AppState {
            shared: Arc::new(Shared {
                opened: Mutex::new(Opened { path, study }),
                session: Mutex::new(session),
                lead_granted: AtomicBool::new(false),
                unlock_attempts: Mutex::new(UnlockAttempts::default()),
                lead_attempts: Mutex::new(UnlockAttempts::default()),
            }),
            idle_override,
        }
    }

    /// Run `f` on the open study, on the blocking pool (see the module's introduction).
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut OpenStudy) -> IpcResult<T> + Send + 'static,
    ) -> IpcResult<T> {
        self.run_with(move |state| state.with_study(f)).await
    }

    /// Run `f` on the opened study and its path (open or not), on the blocking pool.
    pub async fn run_opened<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Opened) -> IpcResult<T> + Send + 'static,
    ) -> IpcResult<T> {
        self.run_with(move |state| f(&mut *state.opened()?)).await
    }

    /// Run `f` with this state on the blocking pool: a job that takes the study lock itself, in
    /// several steps (open a file and switch to it, unlock, convert).
    pub async fn run_with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&AppState) -> IpcResult<T> + Send + 'static,
    ) -> IpcResult<T> {
        let state = self.clone();
        blocking(move || f(&state)).await
    }

    /// The unlock screen's count of wrong passphrases (held only while an unlock runs, which
    /// holds the study lock too).
    pub fn unlock_attempts(&self) -> IpcResult<MutexGuard<'_, UnlockAttempts>> {
        self.shared.unlock_attempts.lock().map_err(|_| {
            IpcError::new(
                ErrorCode::Internal,
                "the unlock count was poisoned; restart Concord",
            )
        })
    }

    /// The count of wrong lead passphrases (held only while leaving a rater session, which holds
    /// the study lock too).
    pub fn lead_attempts(&self) -> IpcResult<MutexGuard<'_, UnlockAttempts>> {
        self.shared.lead_attempts.lock().map_err(|_| {
            IpcError::new(
                ErrorCode::Internal,
                "the lead passphrase count was poisoned; restart Concord",
            )
        })
    }

    /// The opened study and its path; waits for the study lock, so only off the main thread and
    /// the async workers.
    pub fn opened(&self) -> IpcResult<MutexGuard<'_, Opened>> {
        self.shared.opened.lock().map_err(|_| {
            IpcError::new(
                ErrorCode::Internal,
                "the study lock was poisoned; restart Concord",
            )
        })
    }

    /// Run `f` on the open study, here (waits for the study lock: see [`AppState::opened`]).
    pub fn with_study<T>(&self, f: impl FnOnce(&mut OpenStudy) -> IpcResult<T>) -> IpcResult<T> {
        let mut guard = self.opened()?;
        match guard.study.as_mut() {
            Ok(study) => f(study),
            Err(e) => Err(e.clone()),
        }
    }

    /// The file of the study the window has, open or locked.
    pub fn study_file(&self) -> Option<PathBuf> {
        self.opened().ok()?.file()
    }

    /// Replace the open study of the same file (or the reason there is none): unlocking, locking,
    /// converting. A rater session survives; otherwise the newly opened study decides the session.
    pub fn set_study(&self, study: Result<OpenStudy, IpcError>) -> IpcResult<()> {
        let mut guard = self.opened()?;
        guard.study = study;
        if let Ok(s) = guard.study.as_ref() {
            let mut session = self.session_guard();
            if matches!(*session, None | Some(Session::Lead)) {
                *session = Some(rater_session::at_open(s).unwrap_or(Session::Picking));
            }
        }
        Ok(())
    }

    fn session_guard(&self) -> MutexGuard<'_, Option<Session>> {
        // The session is a plain value: a panic elsewhere cannot leave it half-written.
        self.shared
            .session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
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
        self.shared.lead_granted.load(Ordering::SeqCst)
    }

    pub fn mark_lead_granted(&self) {
        self.shared.lead_granted.store(true, Ordering::SeqCst);
    }

    /// Switch the window to the study at `path` (open, or locked behind the unlock screen); the
    /// old one is closed and its cached reports dropped. `before_close` runs on the study being
    /// closed (a last backup) while it is still open.
    pub fn switch(
        &self,
        path: &Path,
        study: Result<OpenStudy, IpcError>,
        before_close: impl FnOnce(&OpenStudy),
    ) -> IpcResult<()> {
        let mut guard = self.opened()?;
        if let Ok(old) = guard.study.as_ref() {
            before_close(old);
        }
        *self.session_guard() = session_at_open(&study);
        *guard = Opened {
            path: Some(StudyPath::Explicit(path.to_path_buf())),
            study,
        };
        Ok(())
    }

    /// Close the open study for good as the app exits: its write-ahead log is folded back into
    /// the file and the connection closed, so the file alone is the whole study.
    pub fn close_for_exit(&self) {
        let Ok(mut guard) = self.opened() else {
            return;
        };
        let gone = Err(IpcError::new(ErrorCode::NoStudy, "Concord is quitting."));
        if let Ok(study) = std::mem::replace(&mut guard.study, gone) {
            if let Err(e) = study.close() {
                eprintln!("Concord: the study did not close cleanly: {e}");
            }
        }
    }

    /// Close the open study; the window then offers to open or create one.
    pub fn close(&self, before_close: impl FnOnce(&OpenStudy)) -> IpcResult<()> {
        let mut guard = self.opened()?;
        if let Ok(old) = guard.study.as_ref() {
            before_close(old);
        }
        *self.session_guard() = None;
        *guard = Opened {
            path: None,
            study: Err(IpcError::new(
                ErrorCode::NoStudy,
                "No study is open. Open a study or a rater package, or start a new study.",
            )),
        };
        Ok(())
    }
}

/// Open the existing study (or rater package) at `path` for the window: open, or locked when it
/// is encrypted and no remembered passphrase fits. Any other failure (missing, not a study) is
/// returned as the error and the window keeps its study.
pub fn open_existing(path: &Path) -> IpcResult<Result<OpenStudy, IpcError>> {
    match open_at(
        &StudyPath::Explicit(path.to_path_buf()),
        WhenMissing::Refuse,
    ) {
        Ok(study) => Ok(Ok(study)),
        Err(e) if e.code == ErrorCode::PassphraseNeeded => Ok(Err(e)),
        Err(e) => Err(e),
    }
}

/// Open the encrypted study at `path` with `key` (a restored backup of the open study).
pub fn open_keyed(path: &Path, key: &Passphrase) -> IpcResult<OpenStudy> {
    Ok(OpenStudy::new(Store::open_with(
        path,
        Arc::new(SystemClock),
        Some(key),
    )?))
}

/// Create a new, empty study at `path` (refused if anything is there).
pub fn create_new(path: &Path) -> IpcResult<OpenStudy> {
    Ok(OpenStudy::new(Store::create(path, Arc::new(SystemClock))?))
}
