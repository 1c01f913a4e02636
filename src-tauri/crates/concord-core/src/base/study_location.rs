//! Where the study lives. The desktop app and the CLI agree on one default study in the OS
//! app-data folder (`<data dir>/concord/default.concord`), which the `CONCORD_STUDY` environment
//! variable or an explicit path overrides. Opening a study for a job is
//! [`crate::app::open::open`]: the default is created as the demo study on first use; an explicit
//! path is never created inside a folder that does not exist.

use std::path::{Path, PathBuf};

/// The environment variable that points the app and the CLI at a study file.
pub const STUDY_ENV: &str = "CONCORD_STUDY";

/// How the study path was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StudyPath {
    /// Given explicitly (`--db`, a command-line argument, or `CONCORD_STUDY`).
    Explicit(PathBuf),
    /// The per-user default in the OS app-data folder.
    Default(PathBuf),
}

impl StudyPath {
    pub fn path(&self) -> &Path {
        match self {
            StudyPath::Explicit(p) | StudyPath::Default(p) => p,
        }
    }
}

/// The default study file in the OS app-data folder.
pub fn default_study_path() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("concord").join("default.concord"))
}

/// Resolve the study path: the explicit argument, else `CONCORD_STUDY`, else the default.
pub fn resolve(explicit: Option<&Path>, env_value: Option<&str>) -> Option<StudyPath> {
    if let Some(p) = explicit {
        return Some(StudyPath::Explicit(p.to_path_buf()));
    }
    if let Some(v) = env_value.filter(|v| !v.trim().is_empty()) {
        return Some(StudyPath::Explicit(PathBuf::from(v)));
    }
    default_study_path().map(StudyPath::Default)
}
