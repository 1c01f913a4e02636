//! The judge run of the desktop app, carried out in the background. A run can take hours, so it
//! never holds the open study's lock: it gets a second connection to the same study file (SQLite
//! in WAL mode lets the window keep reading and rating alongside it) and its own thread, which
//! blocks in `concord_core::judge::execute_run`. While it runs, progress goes to the window as
//! `judge-progress` events; at most once a second, and once at the end, the open study's cached
//! agreement reports are dropped and `ratings-changed` is emitted so the agreement panel shows
//! the judge's new ratings. Only one run goes at a time; its cancel token lives here so the
//! Cancel button can reach it. API keys are held in memory for the run only.

use crate::commands::rating::RATINGS_CHANGED;
use crate::error::{IpcError, IpcResult};
use crate::state::AppState;
use concord_core::judge::{
    self, key, ApiKey, CancelToken, Execution, KeySource, Progress, RunPlan, RunReport, RunSettings,
};
use concord_core::store::Store;
use serde::{Deserialize, Serialize};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tauri::{AppHandle, Emitter, Manager};

/// Event with the running judge's [`Progress`], at most every [`PROGRESS_EVERY`] while sending and
/// always for the last report.
pub const JUDGE_PROGRESS: &str = "judge-progress";
/// Event with a [`JudgeFinished`] when the run's thread ends (finished, cancelled or failed).
pub const JUDGE_FINISHED: &str = "judge-finished";

const PROGRESS_EVERY: Duration = Duration::from_millis(100);
const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// Where the API key comes from. A key typed into the window (`api_key`) is used for this run
/// only and, when asked and a keyring account is named, saved to the OS keyring; it is never
/// written to the study. No `Debug`: the typed key must not reach a log.
#[derive(Clone, Default, Deserialize, ts_rs::TS)]
pub struct KeyChoice {
    pub env_var: Option<String>,
    pub keyring_account: Option<String>,
    pub api_key: Option<String>,
    pub save_to_keyring: bool,
}

/// What the Start button sends.
#[derive(Clone, Deserialize, ts_rs::TS)]
pub struct JudgeStart {
    pub settings: RunSettings,
    pub concurrency: u32,
    /// Also send again the calls that failed in an earlier session of the same run.
    pub retry_failed: bool,
    pub key: KeyChoice,
}

/// The run that was started, and a note for the user (a key fallback, a keyring that refused).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct JudgeStarted {
    pub plan: RunPlan,
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
    cancel: CancelToken,
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
                "internal",
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
                "judge_busy",
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
        let (api_key, note) = resolve_key(&request.key)?;
        let (plan, path, clock) = state.with_study(|s| {
            let path = s.store().path().map(|p| p.to_path_buf()).ok_or_else(|| {
                IpcError::new(
                    "judge_settings",
                    "a study held only in memory cannot be judged from the window",
                )
            })?;
            let clock = s.store().clock();
            // Opening a run adds the judge rater and the run's rows: the cached reports go.
            let plan = judge::open_run(s.store_mut(), &request.settings)?;
            Ok((plan, path, clock))
        })?;
        let mut store = Store::open(&path, clock)?;
        let cancel = CancelToken::new();
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
                let result = judge::execute_run(
                    &mut store,
                    run_id,
                    &exec,
                    api_key,
                    &cancel,
                    &mut reporter(&app),
                );
                drop(store);
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
                "judge_runtime",
                format!("could not start the judge's thread: {e}"),
            ));
        }
        Ok(JudgeStarted { plan, note })
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
        if p.phase != "sending" || due {
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
    let _ = app.emit(RATINGS_CHANGED, progress);
}

/// Frees the run slot when the worker ends, even if it panicked.
struct ClearOnDrop(AppHandle);

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        self.0.state::<JudgeRuns>().clear();
    }
}

/// The key for a run: a key typed into the window first (saved to the keyring when asked), else
/// the keyring account or environment variable named; none when nothing is named (a local model).
fn resolve_key(choice: &KeyChoice) -> IpcResult<(Option<ApiKey>, Option<String>)> {
    let named = |s: &Option<String>| {
        s.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let account = named(&choice.keyring_account);
    if let Some(typed) = named(&choice.api_key) {
        let key = ApiKey::new(typed);
        let note = match (&account, choice.save_to_keyring) {
            (Some(account), true) => match key::save_to_keyring(account, &key) {
                Ok(()) => None,
                Err(e) => Some(format!("the key was used for this run but not saved: {e}")),
            },
            (None, true) => {
                Some("name a keyring account to save the key; it was used for this run only".into())
            }
            _ => None,
        };
        return Ok((Some(key), note));
    }
    let resolved = key::resolve(&KeySource {
        keyring_account: account,
        env_var: named(&choice.env_var),
    })?;
    Ok((resolved.key, resolved.note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_key_wins_and_nothing_named_means_no_key() {
        let (key, note) = resolve_key(&KeyChoice {
            api_key: Some("  sk-typed ".into()),
            env_var: Some("CONCORD_SHELL_TEST_UNSET".into()),
            ..KeyChoice::default()
        })
        .expect("a typed key needs no other source");
        assert_eq!(
            key.map(|k| k.expose().to_string()).as_deref(),
            Some("sk-typed"),
            "the typed key, trimmed, is the run's key"
        );
        assert!(note.is_none(), "nothing to report: {note:?}");
        let (key, _) = resolve_key(&KeyChoice {
            env_var: Some("   ".into()),
            ..KeyChoice::default()
        })
        .expect("a blank source is no source");
        assert!(key.is_none(), "a local model needs no key");
        let missing = resolve_key(&KeyChoice {
            env_var: Some("CONCORD_SHELL_TEST_UNSET".into()),
            ..KeyChoice::default()
        });
        assert_eq!(
            missing.err().map(|e| e.code),
            Some("judge_key".to_string()),
            "an unset variable is a key error naming it"
        );
        let (_, note) = resolve_key(&KeyChoice {
            api_key: Some("sk-typed".into()),
            save_to_keyring: true,
            ..KeyChoice::default()
        })
        .expect("saving without an account still runs");
        assert!(
            note.is_some_and(|n| n.contains("keyring account")),
            "asking to save without an account is explained"
        );
    }
}
