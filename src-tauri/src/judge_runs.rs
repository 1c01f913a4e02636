//! The judge run of the desktop app, carried out in the background. A run can take hours, so it
//! never holds the open study's lock: the core's `judge_start::start_judge_run` (the same job the CLI runs)
//! gives it a second connection to the same study file (SQLite in WAL mode lets the window keep
//! reading and rating alongside it), and its own thread blocks in `JudgeSession::execute`. While it runs, progress goes to the window as
//! `judge-progress` events; at most once a second, and once at the end, the open study's cached
//! agreement reports are dropped and `ratings-changed` is emitted so the agreement panel shows
//! the judge's new ratings. Only one run goes at a time; its cancel token lives here so the
//! Cancel button can reach it. API keys are held in memory for the run only; the core's endpoint
//! and key-source rule (`judge::destination`) refuses a run before any key is read.

use crate::error::{ErrorCode, IpcError, IpcResult};
use crate::events::{ratings_changed, RatingsChanged, JUDGE_FINISHED, JUDGE_PROGRESS};
use crate::state::AppState;
use concord_core::judge::{
    CancellationToken, Destination, Execution, KeyChoice, Progress, RunPhase, RunPlan, RunReport,
    RunSettings,
};
use serde::{Deserialize, Serialize};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tauri::{AppHandle, Emitter, Manager};

const PROGRESS_EVERY: Duration = Duration::from_millis(100);
const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// What the Start button sends.
#[derive(Clone, Deserialize, ts_rs::TS)]
pub struct JudgeStart {
    pub settings: RunSettings,
    pub concurrency: u32,
    /// Also send again the calls that failed in an earlier session of the same run.
    pub retry_failed: bool,
    pub key: KeyChoice,
}

/// The run that was started, where it sends its requests and takes its key from, and a note for
/// the user (a key fallback, a keyring that refused).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct JudgeStarted {
    pub plan: RunPlan,
    pub destination: Destination,
    pub note: Option<String>,
}

/// The run going on now, if any, with its last progress.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct JudgeActivity {
    pub run_id: Option<i64>,
    pub progress: Option<Progress>,
}

/// How the run's thread ended: a report, or the error that stopped it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct JudgeFinished {
    pub run_id: i64,
    pub report: Option<RunReport>,
    pub error: Option<IpcError>,
}

struct ActiveRun {
    run_id: i64,
    cancel: CancellationToken,
    last: Option<Progress>,
}

/// The app's judge-run slot (managed Tauri state beside [`AppState`]).
#[derive(Default)]
pub struct JudgeRuns {
    active: Mutex<Option<ActiveRun>>,
}

impl JudgeRuns {
    fn slot(&self) -> IpcResult<MutexGuard<'_, Option<ActiveRun>>> {
        self.active.lock().map_err(|_| {
            IpcError::new(
                ErrorCode::Internal,
                "the judge-run lock was poisoned; restart Concord",
            )
        })
    }

    /// The run going on now, if any.
    pub fn activity(&self) -> IpcResult<JudgeActivity> {
        let slot = self.slot()?;
        Ok(JudgeActivity {
            run_id: slot.as_ref().map(|a| a.run_id),
            progress: slot.as_ref().and_then(|a| a.last.clone()),
        })
    }

    /// Ask the running judge to stop; true when a run was going. Finished calls are kept and the
    /// unfinished ones go back to pending, so starting the same settings again resumes.
    pub fn cancel(&self) -> IpcResult<bool> {
        let slot = self.slot()?;
        match slot.as_ref() {
            Some(a) => {
                a.cancel.cancel();
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn remember(&self, progress: &Progress) {
        if let Ok(mut slot) = self.active.lock() {
            if let Some(a) = slot.as_mut() {
                a.last = Some(progress.clone());
            }
        }
    }

    fn clear(&self) {
        if let Ok(mut slot) = self.active.lock() {
            *slot = None;
        }
    }

    /// Open (or resume) the run for `request.settings` and start sending its calls on a worker
    /// thread. Refused while another run is going.
    pub fn start(
        &self,
        app: AppHandle,
        state: &AppState,
        request: JudgeStart,
    ) -> IpcResult<JudgeStarted> {
        let mut slot = self.slot()?;
        if let Some(a) = slot.as_ref() {
            return Err(IpcError::new(
                ErrorCode::JudgeBusy,
                format!(
                    "judge run {} is still going; wait for it or cancel it before starting another",
                    a.run_id
                ),
            ));
        }
        let exec = Execution {
            concurrency: request.concurrency,
            retry_failed: request.retry_failed,
            ..Execution::default()
        };
        // The endpoint and key-source rule before any key is read, then the key and the run.
        let start = state.with_study(|s| {
            Ok(concord_core::app::judge_start::start_judge_run(
                s,
                &request.settings,
                &request.key,
            )?)
        })?;
        let (destination, note, key, session) =
            (start.destination, start.note, start.key, start.session);
        let plan = session.plan.clone();
        let cancel = CancellationToken::new();
        let run_id = plan.run_id;
        *slot = Some(ActiveRun {
            run_id,
            cancel: cancel.clone(),
            last: None,
        });
        let worker_app = app.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("judge-run-{run_id}"))
            .spawn(move || {
                let app = worker_app;
                let guard = ClearOnDrop(app.clone());
                let result = session.execute(&exec, key, &cancel, &mut reporter(&app));
                refresh_reports(&app, None);
                let finished = match result {
                    Ok(report) => JudgeFinished {
                        run_id,
                        report: Some(report),
                        error: None,
                    },
                    Err(e) => JudgeFinished {
                        run_id,
                        report: None,
                        error: Some(e.into()),
                    },
                };
                // Free the slot first, so the window can start another run as soon as it hears.
                drop(guard);
                let _ = app.emit(JUDGE_FINISHED, &finished);
            });
        if let Err(e) = spawned {
            *slot = None;
            return Err(IpcError::new(
                ErrorCode::JudgeRuntime,
                format!("could not start the judge's thread: {e}"),
            ));
        }
        Ok(JudgeStarted {
            plan,
            destination,
            note,
        })
    }
}

/// The progress callback of a run: remembers the last report, emits it (throttled while
/// sending), and refreshes the agreement panel at most once a second while ratings arrive.
fn reporter(app: &AppHandle) -> impl FnMut(&Progress) + '_ {
    let mut last_emit: Option<Instant> = None;
    let mut last_refresh = Instant::now();
    let mut refreshed_done = None;
    move |p: &Progress| {
        app.state::<JudgeRuns>().remember(p);
        let now = Instant::now();
        let due = last_emit.is_none_or(|t| now.duration_since(t) >= PROGRESS_EVERY);
        if p.phase != RunPhase::Sending || due {
            let _ = app.emit(JUDGE_PROGRESS, p);
            last_emit = Some(now);
        }
        if now.duration_since(last_refresh) >= REFRESH_EVERY && refreshed_done != Some(p.done) {
            refresh_reports(app, Some(p));
            refreshed_done = Some(p.done);
            last_refresh = now;
        }
    }
}

/// The judge wrote ratings through its own connection: drop the open study's cached reports and
/// tell the window (payload: the run's progress, or none at the end).
fn refresh_reports(app: &AppHandle, progress: Option<&Progress>) {
    let _ = app.state::<AppState>().with_study(|s| {
        s.invalidate_reports();
        Ok(())
    });
    ratings_changed(
        app,
        RatingsChanged::Judge {
            progress: progress.cloned(),
        },
    );
}

/// Frees the run slot when the worker ends, even if it panicked.
struct ClearOnDrop(AppHandle);

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        self.0.state::<JudgeRuns>().clear();
    }
}
