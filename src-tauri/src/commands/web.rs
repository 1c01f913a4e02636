//! Commands of the lead's view of raters in browsers (`concord serve`): every expert's web access
//! with whether they are connected and their progress, a one-time invitation link for an expert,
//! and revoking an expert's web access. Lead commands: a rater session never reaches them.

use crate::error::IpcResult;
use crate::state::AppState;
use concord_core::app::web;
use concord_core::workflow::web_access::WebRaterAccess;

#[tauri::command]
pub async fn web_access(state: tauri::State<'_, AppState>) -> IpcResult<Vec<WebRaterAccess>> {
    state.run(move |s| Ok(web::access(s)?)).await
}

/// The link to send the expert: `BASE_URL/invite#TOKEN` (the token is shown only here, once).
#[tauri::command]
pub async fn web_invite(
    state: tauri::State<'_, AppState>,
    rater: String,
    base_url: String,
    days: u32,
) -> IpcResult<String> {
    state
        .run(move |s| {
            let invitation = web::invite(s, &rater, days, &mut rand::rngs::OsRng)?;
            Ok(format!(
                "{}/invite#{}",
                base_url.trim().trim_end_matches('/'),
                invitation.token
            ))
        })
        .await
}

#[tauri::command]
pub async fn web_revoke(state: tauri::State<'_, AppState>, rater: String) -> IpcResult<bool> {
    state.run(move |s| Ok(web::revoke(s, &rater)?)).await
}
