//! The desktop app's own files, outside any study: the recent-studies list and the settings file
//! (the chosen backup folder, the language of the native menu) in the OS config folder, and the default backup folder in the OS
//! app-data folder. Paths come from Tauri's path resolver, so they follow each platform's rules
//! (`$XDG_CONFIG_HOME`, `~/Library/Application Support`, `%APPDATA%`).

use crate::error::{ErrorCode, IpcError, IpcResult};
use concord_core::app::recent::RecentStudies;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tauri::{AppHandle, Manager, Runtime};

/// The language of the native menu's labels: the window's interface language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum MenuLanguage {
    #[default]
    En,
    Zh,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct SettingsFile {
    backup_folder: Option<PathBuf>,
    /// The window's interface language, which the native menu follows.
    #[serde(default)]
    language: Option<MenuLanguage>,
}

/// Settings the user changed, the recent studies, and where both live (managed Tauri state).
pub struct DesktopSettings {
    config_dir: PathBuf,
    default_backups: PathBuf,
    file: Mutex<SettingsFile>,
    recent: Mutex<RecentStudies>,
}

/// The study opened most recently that still exists, read before the window exists from where
/// [`DesktopSettings::load`] keeps the list (the app's config folder, which Tauri names by the
/// app's identifier).
pub fn last_study(identifier: &str) -> Option<PathBuf> {
    let dir = dirs::config_dir()?.join(identifier);
    RecentStudies::load(&dir.join("recent-studies.json"))
        .existing()
        .first()
        .map(|r| PathBuf::from(&r.path))
}

impl DesktopSettings {
    pub fn load<R: Runtime>(app: &AppHandle<R>) -> DesktopSettings {
        let config_dir = app
            .path()
            .app_config_dir()
            .unwrap_or_else(|_| std::env::temp_dir().join("concord-config"));
        let default_backups = app
            .path()
            .app_data_dir()
            .map(|d| d.join("backups"))
            .unwrap_or_else(|_| std::env::temp_dir().join("concord-backups"));
        let file = std::fs::read(config_dir.join("settings.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let recent = RecentStudies::load(&config_dir.join("recent-studies.json"));
        DesktopSettings {
            config_dir,
            default_backups,
            file: Mutex::new(file),
            recent: Mutex::new(recent),
        }
    }

    fn poisoned() -> IpcError {
        IpcError::new(
            ErrorCode::Internal,
            "the settings lock was poisoned; restart Concord",
        )
    }

    /// The recent-studies list.
    pub fn recent(&self) -> IpcResult<std::sync::MutexGuard<'_, RecentStudies>> {
        self.recent.lock().map_err(|_| Self::poisoned())
    }

    /// Where backups go: the folder the user chose, else `backups` in the app-data folder.
    pub fn backup_folder(&self) -> PathBuf {
        self.file
            .lock()
            .ok()
            .and_then(|f| f.backup_folder.clone())
            .unwrap_or_else(|| self.default_backups.clone())
    }

    /// Choose the backup folder (`None`: back to the default) and save the choice.
    pub fn set_backup_folder(&self, folder: Option<&Path>) -> IpcResult<PathBuf> {
        if let Some(f) = folder {
            if !f.is_dir() {
                return Err(IpcError::new(
                    ErrorCode::FolderMissing,
                    format!("{}: no such folder; choose an existing folder", f.display()),
                ));
            }
        }
        let mut file = self.file.lock().map_err(|_| Self::poisoned())?;
        file.backup_folder = folder.map(Path::to_path_buf);
        self.save(&file)?;
        drop(file);
        Ok(self.backup_folder())
    }

    /// The language the native menu is built in (English until the window says otherwise).
    pub fn language(&self) -> MenuLanguage {
        self.file
            .lock()
            .ok()
            .and_then(|f| f.language)
            .unwrap_or_default()
    }

    /// Remember the window's interface language for the menu, now and at the next launch.
    pub fn set_language(&self, language: MenuLanguage) -> IpcResult<()> {
        let mut file = self.file.lock().map_err(|_| Self::poisoned())?;
        if file.language == Some(language) {
            return Ok(());
        }
        file.language = Some(language);
        self.save(&file)
    }

    fn save(&self, file: &SettingsFile) -> IpcResult<()> {
        let path = self.config_dir.join("settings.json");
        let save = || -> std::io::Result<()> {
            std::fs::create_dir_all(&self.config_dir)?;
            let json = serde_json::to_vec_pretty(file).map_err(std::io::Error::other)?;
            std::fs::write(&path, json)
        };
        save().map_err(|e| {
            IpcError::new(
                ErrorCode::ReadOnly,
                format!("{}: cannot save the settings: {e}", path.display()),
            )
        })
    }
}
