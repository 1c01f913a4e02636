//! Commands of the expert's rating screen. They return only the blinded types of
//! `concord_core::workflow::queue` — no source, model, judge score or other rater's value ever crosses IPC
//! from here. Every saved value is announced with a `ratings-changed` event so other screens (the
//! agreement panel) can update live. The commands are `async` so they run off the main thread and
//! a durable commit never stalls the window. The expert is the shell's rater session, never an
//! argument the page could choose.

use crate::error::IpcResult;
use crate::events::{ratings_changed, RatingsChanged};
use crate::state::AppState;
use concord_core::workflow::queue::ItemProgress;
use concord_core::workflow::queue::LeftItem;
use concord_core::workflow::queue::QueueSummary;
use concord_core::workflow::queue::RaterProfile;
use concord_core::workflow::queue::RaterProfiles;
use concord_core::workflow::queue::RatingItem;

#[tauri::command]
pub async fn rater_profiles(state: tauri::State<'_, AppState>) -> IpcResult<RaterProfiles> {
    state
        .run(move |s| Ok(concord_core::app::rating::profiles(s)?))
        .await
}

#[tauri::command]
pub async fn create_rater_profile(
    state: tauri::State<'_, AppState>,
    name: String,
) -> IpcResult<RaterProfile> {
    let seed = concord_core::base::clock::fresh_seed();
    state
        .run(move |s| Ok(concord_core::app::rating::create_profile(s, &name, seed)?))
        .await
}

#[tauri::command]
pub async fn open_queue(state: tauri::State<'_, AppState>) -> IpcResult<QueueSummary> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| Ok(concord_core::app::rating::open_queue(s, rater_id)?))
        .await
}

/// The rater's items still to look at (unfinished or flagged), for the end of the queue.
#[tauri::command]
pub async fn left_items(state: tauri::State<'_, AppState>) -> IpcResult<Vec<LeftItem>> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| Ok(concord_core::app::rating::left_items(s, rater_id)?))
        .await
}

#[tauri::command]
pub async fn rating_item(state: tauri::State<'_, AppState>, item: i64) -> IpcResult<RatingItem> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| Ok(concord_core::app::rating::rating_item(s, rater_id, item)?))
        .await
}

#[tauri::command]
pub async fn rate(
    app: tauri::AppHandle,
    state: tauri::State<'_, AppState>,
    item: i64,
    criterion: String,
    value: i64,
    reason: Option<String>,
) -> IpcResult<ItemProgress> {
    let rater_id = state.rater_id()?;
    let progress = state
        .run(move |s| Ok(s.rate(rater_id, item, &criterion, value, reason.as_deref())?))
        .await?;
    ratings_changed(
        &app,
        RatingsChanged::Rated {
            progress: progress.clone(),
        },
    );
    Ok(progress)
}

#[tauri::command]
pub async fn set_rationale(
    state: tauri::State<'_, AppState>,
    item: i64,
    rationale: String,
) -> IpcResult<()> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| {
            Ok(concord_core::app::rating::set_rationale(
                s, rater_id, item, &rationale,
            )?)
        })
        .await
}

#[tauri::command]
pub async fn flag_item(
    state: tauri::State<'_, AppState>,
    item: i64,
    reason: String,
) -> IpcResult<()> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| {
            Ok(concord_core::app::rating::flag_item(
                s, rater_id, item, &reason,
            )?)
        })
        .await
}

#[tauri::command]
pub async fn leave_item(
    state: tauri::State<'_, AppState>,
    item: i64,
    seconds: f64,
    next_item: i64,
) -> IpcResult<()> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| {
            Ok(concord_core::app::rating::leave_item(
                s, rater_id, item, seconds, next_item,
            )?)
        })
        .await
}

/// The rater's pair queue (pairwise preferences) and where to resume.
#[tauri::command]
pub async fn pair_queue(
    state: tauri::State<'_, AppState>,
) -> IpcResult<concord_core::workflow::pairs::PairQueue> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| Ok(concord_core::app::pairs::pair_queue(s, rater_id)?))
        .await
}

/// Pair number `item` of the rater's queue: the context and the two answers in the order this
/// rater sees them, never their sources.
#[tauri::command]
pub async fn pair_item(
    state: tauri::State<'_, AppState>,
    item: i64,
) -> IpcResult<concord_core::workflow::pairs::PairItem> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| Ok(concord_core::app::pairs::pair_item(s, rater_id, item)?))
        .await
}

/// The rater's rationale for a pair (empty clears it), committed before it returns.
#[tauri::command]
pub async fn set_pair_rationale(
    state: tauri::State<'_, AppState>,
    item: i64,
    rationale: String,
) -> IpcResult<()> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| {
            Ok(concord_core::app::pairs::set_pair_rationale(
                s, rater_id, item, &rationale,
            )?)
        })
        .await
}

/// Flag a pair for the lead, with a reason.
#[tauri::command]
pub async fn flag_pair(
    state: tauri::State<'_, AppState>,
    item: i64,
    reason: String,
) -> IpcResult<()> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| {
            Ok(concord_core::app::pairs::flag_pair(
                s, rater_id, item, &reason,
            )?)
        })
        .await
}

/// The rater left a pair after `seconds` on it (time on task).
#[tauri::command]
pub async fn leave_pair(
    state: tauri::State<'_, AppState>,
    item: i64,
    seconds: f64,
) -> IpcResult<()> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| {
            Ok(concord_core::app::pairs::leave_pair(
                s, rater_id, item, seconds,
            )?)
        })
        .await
}

/// The rater's choice on one criterion of a pair (A, B, Tie, or none to clear it), committed
/// before it returns.
#[tauri::command]
pub async fn rate_pair(
    app: tauri::AppHandle,
    state: tauri::State<'_, AppState>,
    item: i64,
    criterion: String,
    choice: Option<concord_core::workflow::pairs::ShownChoice>,
) -> IpcResult<concord_core::workflow::pairs::PairProgress> {
    let rater_id = state.rater_id()?;
    let progress = state
        .run(move |s| {
            Ok(concord_core::app::pairs::rate_pair_item(
                s, rater_id, item, &criterion, choice,
            )?)
        })
        .await?;
    ratings_changed(&app, RatingsChanged::PairRated { item });
    Ok(progress)
}

// ---- Evidence spans the expert marks in the reply they rate (each a core call; the expert is
// the session's). What comes back is the item's codes and this expert's own spans only.

/// The codes item `item` may be marked with and the expert's spans on it.
#[tauri::command]
pub async fn item_spans(
    state: tauri::State<'_, AppState>,
    item: i64,
) -> IpcResult<concord_core::workflow::spans::ItemSpans> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| Ok(concord_core::app::rating::item_spans(s, rater_id, item)?))
        .await
}

/// Mark a span on the reply of item `item`; durable and audited when this returns.
#[tauri::command]
pub async fn mark_span(
    state: tauri::State<'_, AppState>,
    item: i64,
    span: concord_core::workflow::spans::ShownSpan,
) -> IpcResult<concord_core::workflow::spans::ItemSpans> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| {
            Ok(concord_core::app::rating::mark_span(
                s,
                concord_core::app::rating::SpanOrigin::Screen,
                rater_id,
                item,
                &span,
            )?)
        })
        .await
}

/// Change the expert's span `at` on item `item` to `span` (code, severity, extent).
#[tauri::command]
pub async fn change_span(
    state: tauri::State<'_, AppState>,
    item: i64,
    at: concord_core::workflow::spans::SpanAt,
    span: concord_core::workflow::spans::ShownSpan,
) -> IpcResult<concord_core::workflow::spans::ItemSpans> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| {
            Ok(concord_core::app::rating::change_span(
                s,
                concord_core::app::rating::SpanOrigin::Screen,
                rater_id,
                item,
                &at,
                &span,
            )?)
        })
        .await
}

/// Remove the expert's span `at` from item `item`.
#[tauri::command]
pub async fn remove_span(
    state: tauri::State<'_, AppState>,
    item: i64,
    at: concord_core::workflow::spans::SpanAt,
) -> IpcResult<concord_core::workflow::spans::ItemSpans> {
    let rater_id = state.rater_id()?;
    state
        .run(move |s| {
            Ok(concord_core::app::rating::remove_span(
                s,
                concord_core::app::rating::SpanOrigin::Screen,
                rater_id,
                item,
                &at,
            )?)
        })
        .await
}
