//! Commands of the rater session: what the window's session is, starting one when an expert picks
//! their profile, and leaving it for lead mode (with the lead passphrase in a locked study). The
//! session lives in the shell; these are the only calls that change it.

use crate::error::IpcResult;
use crate::events::{ratings_changed, RatingsChanged};
use crate::session::grant_lead_if_lead;
use crate::state::AppState;
use concord_core::app::session as rater_session;
use concord_core::workflow::rater_session::SessionInfo;

#[tauri::command]
pub async fn rater_session(state: tauri::State<'_, AppState>) -> IpcResult<SessionInfo> {
    let session = state.session();
    state
        .run(move |s| Ok(rater_session::info(s, session)?))
        .await
}

#[tauri::command]
pub async fn start_rater_session(
    state: tauri::State<'_, AppState>,
    rater_id: i64,
) -> IpcResult<SessionInfo> {
    let current = state.session();
    let shell = AppState::clone(&state);
    state
        .run(move |s| {
            let session = rater_session::start(s, current, rater_id)?;
            shell.set_session(session);
            Ok(rater_session::info(s, session)?)
        })
        .await
}

#[tauri::command]
pub async fn leave_rater_session(
    app: tauri::AppHandle,
    state: tauri::State<'_, AppState>,
    lead_passphrase: Option<String>,
) -> IpcResult<SessionInfo> {
    let current = state.session();
    let shell = AppState::clone(&state);
    let info = state
        .run(move |s| {
            // Wrong lead passphrases back off as the unlock screen's do.
            let session = rater_session::leave(
                s,
                current,
                lead_passphrase.as_deref(),
                &mut *shell.lead_attempts()?,
            )?;
            shell.set_session(session);
            Ok(rater_session::info(s, session)?)
        })
        .await?;
    grant_lead_if_lead(&app, state.session());
    if info.rater_id.is_none() && !info.picking {
        ratings_changed(&app, RatingsChanged::SessionLeft);
    }
    Ok(info)
}
