//! Commands of the expert's sign-off on the rating screen: the expert's own signing state, setting
//! the signing passphrase, and signing their assigned ratings. The passphrase crosses IPC once per
//! call and is never stored or returned; only the expert's own signatures come back. The expert is
//! the shell's rater session.

use crate::error::IpcResult;
use crate::state::AppState;
use concord_core::workflow::signoff::SignoffState;

#[tauri::command]
pub async fn signoff_state(state: tauri::State<'_, AppState>) -> IpcResult<SignoffState> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| Ok(concord_core::app::signoff::signoff_state(s, rater_id)?))
        .await
}

#[tauri::command]
pub async fn set_signing_passphrase(
    state: tauri::State<'_, AppState>,
    current: Option<String>,
    passphrase: String,
) -> IpcResult<SignoffState> {
    let rater_id = state.rater_id()?;
    let seed = concord_core::base::clock::fresh_seed();
    state
        .run(move |s| {
            Ok(concord_core::app::signoff::set_signing_passphrase(
                s,
                rater_id,
                current.as_deref(),
                &passphrase,
                seed,
            )?)
        })
        .await
}

#[tauri::command]
pub async fn sign_off(
    state: tauri::State<'_, AppState>,
    passphrase: String,
) -> IpcResult<SignoffState> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| {
            Ok(concord_core::app::signoff::sign_off(
                s,
                rater_id,
                &passphrase,
            )?)
        })
        .await
}
