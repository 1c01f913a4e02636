//! Commands of the study overview screen.

use crate::error::IpcResult;
use crate::state::AppState;
use concord_core::store::{PackageIdentity, StudyOverview};
use serde::Serialize;

/// The open study's overview, read from SQLite.
#[tauri::command]
pub async fn study_overview(state: tauri::State<'_, AppState>) -> IpcResult<StudyOverview> {
    state
        .run(|s| Ok(concord_core::app::overview::overview(s)?))
        .await
}

/// Which study file the window has, whether or not it opened, and whose package it is when it is
/// a rater package.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct StudyStatus {
    pub path: Option<String>,
    pub is_default: bool,
    pub error: Option<crate::error::IpcError>,
    pub package: Option<PackageIdentity>,
}

#[tauri::command]
pub async fn study_status(state: tauri::State<'_, AppState>) -> IpcResult<StudyStatus> {
    state
        .run_opened(|opened| {
            let package = match opened.study.as_ref() {
                Ok(s) => concord_core::app::expert::package_identity(s)?,
                Err(_) => None,
            };
            Ok(StudyStatus {
                path: opened.path.as_ref().map(|p| p.path().display().to_string()),
                is_default: matches!(
                    opened.path,
                    Some(concord_core::base::study_location::StudyPath::Default(_))
                ),
                error: opened.study.as_ref().err().cloned(),
                package,
            })
        })
        .await
}
