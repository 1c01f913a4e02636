//! Commands of the PHI review queue: the findings of the study (open ones in their context) and
//! the lead's decision on some of them — redact to typed placeholders, or keep with a reason.
//! Decisions are recorded in the audit trail by the core.

use crate::error::IpcResult;
use crate::state::AppState;
use concord_core::app::paths::desktop_actor;
use concord_core::app::phi::PhiDecision;
use concord_core::guard::phi::review::PhiReview;

#[tauri::command]
pub async fn phi_review(state: tauri::State<'_, AppState>) -> IpcResult<PhiReview> {
    state
        .run(move |s| Ok(concord_core::app::phi::phi_review(s)?))
        .await
}

#[tauri::command]
pub async fn phi_decide(
    state: tauri::State<'_, AppState>,
    ids: Vec<i64>,
    decision: PhiDecision,
) -> IpcResult<PhiReview> {
    let actor = desktop_actor();
    state
        .run(move |s| {
            Ok(concord_core::app::phi::decide_phi(
                s, &ids, &decision, &actor,
            )?)
        })
        .await
}
