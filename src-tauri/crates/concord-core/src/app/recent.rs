//! The studies opened recently, newest first, as the desktop app's File → Open recent menu shows
//! them. The list is a small JSON file in the app's config folder (the shell says where); a list
//! that is missing or unreadable is simply empty, and studies whose file is gone are left out.

use crate::base::clock::Millis;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// At most this many studies are remembered.
pub const RECENT_MAX: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RecentStudy {
    pub path: String,
    pub title: String,
    pub opened_at: Millis,
}

#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot save the list of recent studies: {detail}")]
pub struct RecentError {
    pub path: String,
    pub detail: String,
}

/// The recent-studies list kept in `file`.
#[derive(Debug, Clone)]
pub struct RecentStudies {
    file: PathBuf,
    entries: Vec<RecentStudy>,
}

impl RecentStudies {
    /// Read the list from `file` (empty when absent or unreadable).
    pub fn load(file: &Path) -> RecentStudies {
        let entries = std::fs::read(file)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Vec<RecentStudy>>(&bytes).ok())
            .unwrap_or_default();
        RecentStudies {
            file: file.to_path_buf(),
            entries,
        }
    }

    /// The remembered studies whose file still exists, newest first.
    pub fn existing(&self) -> Vec<RecentStudy> {
        self.entries
            .iter()
            .filter(|e| Path::new(&e.path).is_file())
            .cloned()
            .collect()
    }

    /// Put the study at `path` first (once), keep at most [`RECENT_MAX`], and save.
    pub fn remember(&mut self, path: &Path, title: &str, at: Millis) -> Result<(), RecentError> {
        let key = path.display().to_string();
        self.entries.retain(|e| e.path != key);
        self.entries.insert(
            0,
            RecentStudy {
                path: key,
                title: title.to_string(),
                opened_at: at,
            },
        );
        self.entries.truncate(RECENT_MAX);
        self.save()
    }

    /// Drop the study at `path` from the list and save.
    pub fn forget(&mut self, path: &Path) -> Result<(), RecentError> {
        let key = path.display().to_string();
        self.entries.retain(|e| e.path != key);
        self.save()
    }

    fn save(&self) -> Result<(), RecentError> {
        let err = |e: std::io::Error| RecentError {
            path: self.file.display().to_string(),
            detail: e.to_string(),
        };
        if let Some(folder) = self.file.parent() {
            std::fs::create_dir_all(folder).map_err(err)?;
        }
        let json = serde_json::to_vec_pretty(&self.entries).map_err(|e| RecentError {
            path: self.file.display().to_string(),
            detail: e.to_string(),
        })?;
        let tmp = self.file.with_extension("partial");
        std::fs::write(&tmp, json).map_err(err)?;
        std::fs::rename(&tmp, &self.file).map_err(err)
    }
}
