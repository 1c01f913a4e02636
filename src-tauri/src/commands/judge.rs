//! Commands of the judge-run screen: the rubric's default prompt, a cost preview, where a run
//! would send its requests and take its key from (the confirmation before Start; the core's
//! endpoint and key-source rule refuses the rest), starting and cancelling the one background run (see [`crate::judge_runs`]), what is going on now, the runs
//! in the study and a run's failed calls with their raw outputs (untrusted text the window shows
//! as text).

use crate::error::IpcResult;
use crate::judge_runs::{JudgeActivity, JudgeRuns, JudgeStart, JudgeStarted};
use crate::state::AppState;
use concord_core::app::judge_runs;
use concord_core::judge::{
    CallFailure, Destination, KeyChoice, PromptTemplate, RunPreview, RunSettings, RunStatus,
};
use tauri::Manager;

#[tauri::command]
pub async fn judge_default_prompt(
    state: tauri::State<'_, AppState>,
    rubric: Option<String>,
) -> IpcResult<PromptTemplate> {
    state
        .run(move |s| Ok(judge_runs::default_prompt(s, rubric.as_deref())?))
        .await
}

#[tauri::command]
pub async fn judge_preview(
    state: tauri::State<'_, AppState>,
    settings: RunSettings,
) -> IpcResult<RunPreview> {
    state
        .run(move |s| Ok(judge_runs::preview(s, &settings)?))
        .await
}

/// Where a run with these settings and key choice sends its requests and where its key comes
/// from, or the rule's refusal (`judge_endpoint`, `judge_key_source`); nothing is read or sent.
#[tauri::command]
pub async fn judge_destination(settings: RunSettings, key: KeyChoice) -> IpcResult<Destination> {
    Ok(judge_runs::destination(&settings, &key)?)
}

#[tauri::command]
pub async fn judge_start(
    app: tauri::AppHandle,
    state: tauri::State<'_, AppState>,
    request: JudgeStart,
) -> IpcResult<JudgeStarted> {
    state
        .run_with(move |state| app.state::<JudgeRuns>().start(app.clone(), state, request))
        .await
}

#[tauri::command]
pub async fn judge_cancel(runs: tauri::State<'_, JudgeRuns>) -> IpcResult<bool> {
    runs.cancel()
}

#[tauri::command]
pub async fn judge_activity(runs: tauri::State<'_, JudgeRuns>) -> IpcResult<JudgeActivity> {
    runs.activity()
}

#[tauri::command]
pub async fn judge_runs(state: tauri::State<'_, AppState>) -> IpcResult<Vec<RunStatus>> {
    state.run(move |s| Ok(judge_runs::runs(s)?)).await
}

#[tauri::command]
pub async fn judge_failures(
    state: tauri::State<'_, AppState>,
    run_id: i64,
) -> IpcResult<Vec<CallFailure>> {
    state
        .run(move |s| Ok(judge_runs::failures(s, run_id)?))
        .await
}
