//! Commands of the lead's panel screens: adjudication (the pairs to decide, with the experts'
//! values and rationales but never a source, model or judge score; recording a decision), rater
//! quality, and the expert's calibration items before their regular queue.

use crate::error::IpcResult;
use crate::state::AppState;
use concord_core::app::adjudication;
use concord_core::app::calibration;
use concord_core::app::rater_quality;
use concord_core::panel::adjudication::AdjudicationReview;
use concord_core::panel::adjudication::DecisionView;
use concord_core::panel::adjudication::DiscrepancyRule;
use concord_core::panel::adjudication::Resolution;
use concord_core::panel::rater_quality::QualityOptions;
use concord_core::panel::rater_quality::RaterQualityReport;
use concord_core::workflow::calibration::CalibrationItem;
use concord_core::workflow::calibration::CalibrationStatus;

#[tauri::command]
pub async fn adjudication_review(
    state: tauri::State<'_, AppState>,
    rule: DiscrepancyRule,
) -> IpcResult<AdjudicationReview> {
    state
        .run(move |s| Ok(adjudication::review(s, &rule)?))
        .await
}

#[tauri::command]
pub async fn adjudication_resolve(
    state: tauri::State<'_, AppState>,
    resolution: Resolution,
) -> IpcResult<DecisionView> {
    state
        .run(move |s| Ok(adjudication::resolve(s, &resolution)?))
        .await
}

#[tauri::command]
pub async fn rater_quality(state: tauri::State<'_, AppState>) -> IpcResult<RaterQualityReport> {
    let options = QualityOptions {
        paths: true,
        ..QualityOptions::default()
    };
    state
        .run(move |s| Ok(rater_quality::report(s, &options)?))
        .await
}

#[tauri::command]
pub async fn calibration_status(state: tauri::State<'_, AppState>) -> IpcResult<CalibrationStatus> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| Ok(calibration::status_for(s, rater_id)?))
        .await
}

#[tauri::command]
pub async fn calibration_item(
    state: tauri::State<'_, AppState>,
    item: usize,
) -> IpcResult<CalibrationItem> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| Ok(calibration::item_for(s, rater_id, item)?))
        .await
}

#[tauri::command]
pub async fn calibration_answer(
    state: tauri::State<'_, AppState>,
    item: usize,
    values: Vec<(String, i64)>,
) -> IpcResult<CalibrationItem> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| Ok(calibration::answer_for(s, rater_id, item, &values)?))
        .await
}
