//! Commands of the window itself rather than one screen: which study is open (open, new, close,
//! recent, restore from a backup), what a dropped or double-clicked file is for, native file
//! dialogs, "Show in folder", the expert's "Return ratings", backups, zoom, the native menu's
//! language and the About box.
//! Every dialog only returns a path (or nothing when cancelled); the window then calls the same
//! command a typed path goes to, so a journey can be driven without a dialog.

use crate::backups;
use crate::error::{ErrorCode, IpcError, IpcResult};
use crate::judge_runs::JudgeRuns;
use crate::settings::DesktopSettings;
use crate::settings::MenuLanguage;
use crate::state::{self, AppState};
use concord_core::app::backup;
use concord_core::app::backup::BackupEntry;
use concord_core::app::file_role;
use concord_core::app::file_role::FileRole;
use concord_core::app::open_study::OpenStudy;
use concord_core::app::paths::typed_path;
use concord_core::app::recent::RecentStudy;
use concord_core::base::clock::Clock;
use concord_core::base::clock::SystemClock;
use concord_core::store::PackageIdentity;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use tauri::{AppHandle, Manager};
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_opener::OpenerExt;

/// What the window needs after a study was opened.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct StudyOpened {
    pub path: String,
    /// Set when the file is a rater package: whose it is and how many items it holds.
    pub package: Option<PackageIdentity>,
    /// The study (or package) is encrypted and waits for its passphrase on the unlock screen.
    pub locked: bool,
    /// Something the person should know (a judge run that was stopped by the switch).
    pub note: Option<String>,
}

/// The version and build shown by About, and where the app keeps its backups.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct AppInfo {
    pub version: String,
    pub build: String,
    pub version_line: String,
    pub backup_folder: String,
}

/// The backups of the open study.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct BackupList {
    pub folder: String,
    pub backups: Vec<BackupEntry>,
}

/// What a file dialog is for: its title and file-type filter.
#[derive(Debug, Clone, Copy, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum FilePurpose {
    Study,
    Package,
    Rubric,
    Dataset,
    Sheet,
    Backup,
}

impl FilePurpose {
    fn title(self) -> &'static str {
        match self {
            FilePurpose::Study => "Open a study or rater package",
            FilePurpose::Package => "Choose a returned rater package",
            FilePurpose::Rubric => "Choose a rubric file",
            FilePurpose::Dataset => "Choose a dataset file",
            FilePurpose::Sheet => "Choose a filled-in rating sheet",
            FilePurpose::Backup => "Choose a backup",
        }
    }

    fn filter(self) -> (&'static str, &'static [&'static str]) {
        match self {
            FilePurpose::Study | FilePurpose::Package | FilePurpose::Backup => {
                ("Concord study or package", &["concord"])
            }
            FilePurpose::Rubric => ("Rubric (TOML or JSON)", &["toml", "json"]),
            FilePurpose::Dataset => ("Dataset", &["csv", "xlsx", "json", "jsonl", "tsv"]),
            FilePurpose::Sheet => ("Rating sheet (XLSX)", &["xlsx"]),
        }
    }
}

fn dialog_path(picked: Option<tauri_plugin_dialog::FilePath>) -> Option<String> {
    picked
        .and_then(|f| f.into_path().ok())
        .map(|p| p.display().to_string())
}

/// Cancel a judge run still going (its finished answers are kept; starting the same settings
/// resumes it) and wait briefly for it to stop, before the study under it is closed.
fn stop_judge(runs: &JudgeRuns) -> IpcResult<Option<String>> {
    let Some(run_id) = runs.activity()?.run_id else {
        return Ok(None);
    };
    runs.cancel()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while runs.activity()?.run_id.is_some() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Ok(Some(format!(
        "Judge run {run_id} was stopped because its study was closed; its answers so far are \
         kept, and starting the same settings in that study resumes it."
    )))
}

/// Put `study` (open, or locked behind the unlock screen) in the window: stop a judge run, back up
/// and close the old study, remember the new one among the recent studies, rebuild the menu.
fn show(
    app: &AppHandle,
    state: &AppState,
    path: &Path,
    study: Result<OpenStudy, IpcError>,
) -> IpcResult<StudyOpened> {
    let note = stop_judge(&app.state::<JudgeRuns>())?;
    let locked = state::is_locked(&study);
    let (title, package) = match study.as_ref() {
        Ok(s) => (
            concord_core::app::overview::title(s).unwrap_or_default(),
            concord_core::app::expert::package_identity(s)?,
        ),
        // A locked study's title is inside the encrypted file: its name stands in until unlocked.
        Err(_) => (file_title(path), None),
    };
    state.switch(path, study, |old| backups::on_close(app, old))?;
    // The new study's state now is the base its first backup is compared with (a locked one's
    // once it is unlocked).
    let _ = state.with_study(|s| {
        backups::rebase(app, s);
        Ok(())
    });
    crate::menu::remember(app, path, &title);
    crate::session::grant_lead_if_lead(app, state.session());
    Ok(StudyOpened {
        path: path.display().to_string(),
        package,
        locked,
        note,
    })
}

fn file_title(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Open the study or rater package at `path` in the window, closing the one open now.
#[tauri::command]
pub async fn open_study(
    app: AppHandle,
    state: tauri::State<'_, AppState>,
    path: String,
) -> IpcResult<StudyOpened> {
    let path = typed_path(&path)?;
    state
        .run_with(move |state| {
            let study = state::open_existing(&path)?;
            show(&app, state, &path, study)
        })
        .await
}

/// Create a new, empty study at `path` and open it.
#[tauri::command]
pub async fn new_study(
    app: AppHandle,
    state: tauri::State<'_, AppState>,
    path: String,
) -> IpcResult<StudyOpened> {
    let mut path = typed_path(&path)?;
    if path.extension().is_none() {
        path.set_extension("concord");
    }
    state
        .run_with(move |state| {
            let study = state::create_new(&path)?;
            show(&app, state, &path, Ok(study))
        })
        .await
}

/// Close the open study (backed up first when it changed).
#[tauri::command]
pub async fn close_study(
    app: AppHandle,
    state: tauri::State<'_, AppState>,
) -> IpcResult<Option<String>> {
    state
        .run_with(move |state| {
            let note = stop_judge(&app.state::<JudgeRuns>())?;
            state.close(|old| backups::on_close(&app, old))?;
            Ok(note)
        })
        .await
}

/// The recently opened studies that still exist, newest first.
#[tauri::command]
pub async fn recent_studies(
    settings: tauri::State<'_, DesktopSettings>,
) -> IpcResult<Vec<RecentStudy>> {
    Ok(settings.recent()?.existing())
}

/// What the file at `path` is for (a dropped file, a file given by the desktop).
#[tauri::command]
pub async fn classify_file(state: tauri::State<'_, AppState>, path: String) -> IpcResult<FileRole> {
    let path = typed_path(&path)?;
    state
        .run_opened(move |opened| Ok(file_role::classify_for(&path, opened.study.as_ref().ok())))
        .await
}

/// Whose package the open study is (`null` for a study).
#[tauri::command]
pub async fn package_identity(
    state: tauri::State<'_, AppState>,
) -> IpcResult<Option<PackageIdentity>> {
    state
        .run(move |s| Ok(concord_core::app::expert::package_identity(s)?))
        .await
}

/// Where "Return ratings" suggests saving.
#[tauri::command]
pub async fn default_return_path(state: tauri::State<'_, AppState>) -> IpcResult<String> {
    state
        .run(move |s| {
            Ok(concord_core::app::expert::default_return_path(s)?
                .display()
                .to_string())
        })
        .await
}

/// Save the open package, with the expert's ratings, to `out` for sending back, saying which
/// earlier copies beside the package it supersedes; a file there is replaced only with `overwrite` (a path the save dialog's own question confirmed, or the
/// window's confirmation after an `already_exists` refusal).
#[tauri::command]
pub async fn return_ratings(
    state: tauri::State<'_, AppState>,
    out: String,
    overwrite: bool,
) -> IpcResult<concord_core::app::expert::ReturnedCopy> {
    state
        .run(move |s| {
            Ok(concord_core::app::expert::return_ratings_copy(
                s, &out, overwrite,
            )?)
        })
        .await
}

/// A native "open file" dialog; `null` when cancelled.
#[tauri::command]
pub async fn pick_file(app: AppHandle, purpose: FilePurpose) -> IpcResult<Option<String>> {
    let (name, exts) = purpose.filter();
    let mut dialog = app.dialog().file().set_title(purpose.title());
    if matches!(purpose, FilePurpose::Backup) {
        dialog = dialog.set_directory(app.state::<DesktopSettings>().backup_folder());
    }
    Ok(dialog_path(
        dialog.add_filter(name, exts).blocking_pick_file(),
    ))
}

/// A native "choose folder" dialog; `null` when cancelled.
#[tauri::command]
pub async fn pick_folder(app: AppHandle, title: String) -> IpcResult<Option<String>> {
    Ok(dialog_path(
        app.dialog().file().set_title(title).blocking_pick_folder(),
    ))
}

/// A native "save as" dialog starting at `suggested`; `null` when cancelled.
#[tauri::command]
pub async fn pick_save(
    app: AppHandle,
    title: String,
    suggested: Option<String>,
) -> IpcResult<Option<String>> {
    let mut dialog = app.dialog().file().set_title(title);
    if let Some(s) = suggested.as_deref().map(PathBuf::from) {
        if let Some(dir) = s.parent().filter(|d| d.is_dir()) {
            dialog = dialog.set_directory(dir);
        }
        if let Some(name) = s.file_name() {
            dialog = dialog.set_file_name(name.to_string_lossy());
        }
    }
    Ok(dialog_path(dialog.blocking_save_file()))
}

/// Show a written file in the system's file manager.
#[tauri::command]
pub async fn reveal(app: AppHandle, path: String) -> IpcResult<()> {
    let path = typed_path(&path)?;
    if !path.exists() {
        return Err(IpcError::new(
            ErrorCode::NotFound,
            format!("{}: the file is no longer there", path.display()),
        ));
    }
    app.opener().reveal_item_in_dir(&path).map_err(|e| {
        IpcError::new(
            ErrorCode::Io,
            format!("could not show {} in the file manager: {e}", path.display()),
        )
    })
}

/// Version, build and the backup folder, for the About dialog.
#[tauri::command]
pub async fn app_info(settings: tauri::State<'_, DesktopSettings>) -> IpcResult<AppInfo> {
    Ok(AppInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        build: env!("CONCORD_BUILD").to_string(),
        version_line: crate::launch::version_line(),
        backup_folder: settings.backup_folder().display().to_string(),
    })
}

/// The open study's backups, newest first.
#[tauri::command]
pub async fn list_backups(
    state: tauri::State<'_, AppState>,
    settings: tauri::State<'_, DesktopSettings>,
) -> IpcResult<BackupList> {
    let folder = settings.backup_folder();
    state
        .run_with(move |state| {
            let study = state.study_file().ok_or_else(|| {
                IpcError::new(
                    ErrorCode::NoStudy,
                    "No study is open, so it has no backups.",
                )
            })?;
            Ok(BackupList {
                folder: folder.display().to_string(),
                backups: backup::list(&folder, &study)?,
            })
        })
        .await
}

/// Back the open study up now.
#[tauri::command]
pub async fn backup_now(
    state: tauri::State<'_, AppState>,
    settings: tauri::State<'_, DesktopSettings>,
) -> IpcResult<BackupEntry> {
    let folder = settings.backup_folder();
    state
        .run(move |s| {
            Ok(backup::take_of(
                s,
                &folder,
                SystemClock.now_ms(),
                backup::KEEP,
            )?)
        })
        .await
}

/// Restore the backup at `backup` as a new study at `dest` and open it.
#[tauri::command]
pub async fn restore_backup(
    app: AppHandle,
    state: tauri::State<'_, AppState>,
    backup: String,
    dest: String,
) -> IpcResult<StudyOpened> {
    let source = typed_path(&backup)?;
    let mut dest = typed_path(&dest)?;
    if dest.extension().is_none() {
        dest.set_extension("concord");
    }
    state
        .run_with(move |state| {
            // An encrypted study's backups are encrypted with its passphrase: the open study's
            // opens them.
            let key = state
                .with_study(|s| Ok(s.passphrase().cloned()))
                .ok()
                .flatten();
            backup::restore(&source, &dest, key.as_ref())?;
            let study = match key {
                Some(key) => Ok(state::open_keyed(&dest, &key)?),
                None => state::open_existing(&dest)?,
            };
            show(&app, state, &dest, study)
        })
        .await
}

/// Choose the backup folder (`null` for the default); returns the folder now in use.
#[tauri::command]
pub async fn set_backup_folder(
    settings: tauri::State<'_, DesktopSettings>,
    folder: Option<String>,
) -> IpcResult<String> {
    let folder = match folder.as_deref().map(str::trim).filter(|f| !f.is_empty()) {
        Some(f) => Some(typed_path(f)?),
        None => None,
    };
    Ok(settings
        .set_backup_folder(folder.as_deref())?
        .display()
        .to_string())
}

/// Quit Concord (File → Quit, Ctrl+Q): the exit handler backs the study up when it changed and
/// closes it whole, so no `-wal`/`-shm` stays beside it.
#[tauri::command]
pub fn quit_app(app: AppHandle) {
    app.exit(0);
}

/// The window's interface language: the native menu is rebuilt in it and starts in it next time.
#[tauri::command]
pub async fn set_menu_language(app: AppHandle, language: MenuLanguage) -> IpcResult<()> {
    app.state::<DesktopSettings>().set_language(language)?;
    crate::menu::install(&app)
}

/// Zoom the window's content (1.0 = 100 %).
#[tauri::command]
pub async fn set_zoom(app: AppHandle, factor: f64) -> IpcResult<()> {
    let factor = factor.clamp(0.5, 3.0);
    let window = app
        .get_webview_window("main")
        .ok_or_else(|| IpcError::new(ErrorCode::Internal, "the main window is gone"))?;
    window
        .set_zoom(factor)
        .map_err(|e| IpcError::new(ErrorCode::Internal, format!("could not zoom: {e}")))
}
