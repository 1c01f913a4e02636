//! Opening a study for a job: the one door by which the window and every CLI command reach a
//! study file. The default study in the app-data folder is created as the demo on first use (its
//! folder too), as the window and the CLI have always agreed; an explicit path follows
//! [`WhenMissing`] and is never created inside a folder that does not exist. A file that is not
//! a Concord study is refused unchanged either way. An encrypted study opens with its passphrase,
//! and a study created here with a passphrase is created encrypted.

use crate::app::open_study::OpenStudy;
use crate::base::clock::Clock;
use crate::base::error_code::{Coded, ErrorCode};
use crate::base::study_location::StudyPath;
use crate::intake::demo::DemoError;
use crate::store::{inspect_with, FileKind, Passphrase, Store, StoreError};
use std::sync::Arc;

/// Opening a study fails as the store says, or, creating the demo, with a malformed demo.
impl Coded for DemoError {
    fn code(&self) -> ErrorCode {
        match self {
            DemoError::Store(e) => e.code(),
            DemoError::Malformed(_) => ErrorCode::Demo,
        }
    }
}

/// What to do when the study file a job names does not exist yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenMissing {
    /// Refuse with "no such study file" and create nothing (every job that reads a study).
    Refuse,
    /// Create a new, empty study there (an import into a new file).
    CreateEmpty,
    /// Create the demo study there (`concord demo`, the window's first launch).
    CreateDemo,
}

/// A study opened for a job, and whether opening it created the file.
#[derive(Debug)]
pub struct Opened {
    pub study: OpenStudy,
    pub created: bool,
}

/// Open the study at `path` for a job that only reads it (an overview, a report, the audit log):
/// the file is opened read-only and never changed ([`Store::open_read_only`]). A default study
/// that does not exist yet is created as the demo, as [`open`] does; an explicit path that does
/// not exist is refused.
pub fn open_to_read(
    path: &StudyPath,
    clock: Arc<dyn Clock>,
    seed: u64,
    key: Option<&Passphrase>,
) -> Result<OpenStudy, DemoError> {
    match inspect_with(path.path(), key)? {
        FileKind::Study { .. } => Ok(OpenStudy::new(Store::open_read_only(
            path.path(),
            clock,
            key,
        )?)),
        FileKind::Absent => Ok(open(path, WhenMissing::Refuse, clock, seed, key)?.study),
    }
}

/// Open the study at `path` for a job, with `key` when it is (or is to be created) encrypted.
/// `seed` orders the queues of a demo study created here.
pub fn open(
    path: &StudyPath,
    when_missing: WhenMissing,
    clock: Arc<dyn Clock>,
    seed: u64,
    key: Option<&Passphrase>,
) -> Result<Opened, DemoError> {
    let p = path.path();
    let created = match inspect_with(p, key)? {
        FileKind::Study { .. } => None,
        FileKind::Absent => match (path, when_missing) {
            (StudyPath::Default(_), _) | (StudyPath::Explicit(_), WhenMissing::CreateDemo) => {
                if let (StudyPath::Default(_), Some(folder)) = (path, p.parent()) {
                    std::fs::create_dir_all(folder).map_err(|e| StoreError::ReadOnly {
                        path: p.display().to_string(),
                        detail: e.to_string(),
                    })?;
                }
                Some(crate::intake::demo::create_demo_with(
                    p,
                    clock.clone(),
                    seed,
                    key,
                )?)
            }
            (StudyPath::Explicit(_), WhenMissing::CreateEmpty) => {
                Some(Store::create_with(p, clock.clone(), key)?)
            }
            (StudyPath::Explicit(_), WhenMissing::Refuse) => {
                return Err(StoreError::Missing {
                    path: p.display().to_string(),
                }
                .into())
            }
        },
    };
    let (store, created) = match created {
        Some(store) => (store, true),
        None => (Store::open_with(p, clock, key)?, false),
    };
    let mut study = OpenStudy::new(store);
    if created {
        // A new lead's study gets its lead key now, so its chain is signed from its start.
        study.store_mut().ensure_lead_key()?;
    }
    Ok(Opened { study, created })
}
