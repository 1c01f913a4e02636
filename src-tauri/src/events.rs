//! The events the shell sends the window, each with exactly one payload type (exported to the UI's
//! generated bindings, where `ipc.ts` maps each event name to its payload): `ratings-changed`
//! carries a [`RatingsChanged`], `judge-progress` a judge [`Progress`],
//! `judge-finished` a [`JudgeFinished`](crate::judge_runs::JudgeFinished), `import-progress` an
//! [`ImportProgress`](concord_core::intake::ImportProgress). The window's own events:
//! `menu` (the id of the native menu item chosen), `open-file` (a path the desktop handed to the
//! running app), `backup-taken` (a [`BackupEntry`](concord_core::app::backup::BackupEntry)) and
//! `backup-failed` (an [`IpcError`](crate::error::IpcError)).

use concord_core::judge::Progress;
use concord_core::workflow::queue::ItemProgress;
use serde::Serialize;
use tauri::{AppHandle, Emitter};

/// Event: ratings in the study changed (payload [`RatingsChanged`]).
pub const RATINGS_CHANGED: &str = "ratings-changed";
/// Event: the running judge's progress, throttled while sending and always for the last report.
pub const JUDGE_PROGRESS: &str = "judge-progress";
/// Event: the judge run's thread ended (finished, cancelled or failed).
pub const JUDGE_FINISHED: &str = "judge-finished";
/// Event: how far the setup wizard's import has come (sent while a long import reads its rows,
/// and once when it has landed).
pub const IMPORT_PROGRESS: &str = "import-progress";

/// Event: a native menu item was chosen (payload: its id, see `menu`).
pub const MENU: &str = "menu";
/// Event: the desktop handed the running app a file (payload: its path).
pub const OPEN_FILE: &str = "open-file";
/// Event: the open study was backed up (payload: the `BackupEntry`).
pub const BACKUP_TAKEN: &str = "backup-taken";
/// Event: a backup failed (payload: the `IpcError`).
pub const BACKUP_FAILED: &str = "backup-failed";

/// What changed the ratings: the one payload of `ratings-changed`.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum RatingsChanged {
    /// A value saved on the rating screen, with the item's progress.
    Rated { progress: ItemProgress },
    /// A dataset imported in the setup wizard.
    Import,
    /// A returned rater package merged.
    Merge,
    /// A filled rating sheet imported.
    Sheet,
    /// A judge run wrote ratings over its own connection: its progress while it runs, none at
    /// the end.
    Judge { progress: Option<Progress> },
    /// A rater session ended: the lead's screens reload what they were refused during it.
    SessionLeft,
    /// A choice saved on the pair rating screen (pair number `item` of the rater's queue).
    PairRated { item: i64 },
}

/// Tell the window that ratings changed. The change is already committed; a window that misses
/// the event only updates later.
pub fn ratings_changed(app: &AppHandle, change: RatingsChanged) {
    let _ = app.emit(RATINGS_CHANGED, change);
}
