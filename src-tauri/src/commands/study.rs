//! Commands of the study overview screen.

use crate::error::IpcResult;
use crate::state::AppState;
use concord_core::store::StudyOverview;
use serde::Serialize;

/// The open study's overview, read from SQLite.
#[tauri::command]
pub fn study_overview(state: tauri::State<'_, AppState>) -> IpcResult<StudyOverview> {
    state.with_study(|s| Ok(s.store().overview()?))
}

/// Which study file the app was asked to open, whether or not it opened.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct StudyStatus {
    pub path: Option<String>,
    pub is_default: bool,
    pub error: Option<crate::error::IpcError>,
}

#[tauri::command]
pub fn study_status(state: tauri::State<'_, AppState>) -> IpcResult<StudyStatus> {
    let error = state.study()?.as_ref().err().cloned();
    Ok(StudyStatus {
        path: state.path.as_ref().map(|p| p.path().display().to_string()),
        is_default: matches!(
            state.path,
            Some(concord_core::study_location::StudyPath::Default(_))
        ),
        error,
    })
}
