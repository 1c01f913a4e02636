//! App state: the one open study (or the reason it could not be opened, shown in the window), chosen
//! from `--study FILE`, the `CONCORD_STUDY` environment variable, or the default study in the OS
//! app-data folder, which is created as the demo study on first launch.

use crate::error::{ErrorCode, IpcError, IpcResult};
use concord_core::clock::{fresh_seed, SystemClock};
use concord_core::open_study::OpenStudy;
use concord_core::study_location::{self, StudyPath, STUDY_ENV};
use concord_core::usecase::{self, WhenMissing};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

pub struct AppState {
    study: Mutex<Result<OpenStudy, IpcError>>,
    pub path: Option<StudyPath>,
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
            Some(p) => usecase::open(
                p,
                WhenMissing::CreateDemo,
                Arc::new(SystemClock),
                fresh_seed(),
            )
            .map(|opened| opened.study)
            .map_err(IpcError::from),
        };
        AppState {
            study: Mutex::new(study),
            path,
        }
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
