//! Starting (or resuming) a judge run, the one sequence both front ends follow: the endpoint and
//! key-source rule is applied to the settings and the key choice before any key is read
//! (`judge::destination`, what the person confirms), then the key is read, the run opened — or
//! found again when the same settings ran before — and a second connection to the study file
//! handed back, so the run sends its calls without holding the open study (a window keeps
//! rating while it runs). Opening adds the judge rater and the run's rows, so the cached
//! agreement reports are dropped.

use crate::app::open_study::OpenStudy;
use crate::judge::{self, key, ApiKey, Destination, JudgeError, KeyChoice, RunPlan, RunSettings};
use crate::store::Store;

/// A judge run opened and ready to send its calls over its own connection to the study file.
#[derive(Debug)]
pub struct JudgeSession {
    pub plan: RunPlan,
    store: Store,
}

impl JudgeSession {
    /// Send the run's pending calls (see [`judge::execute_run`]); blocks until the run is
    /// finished or `cancel` is cancelled.
    pub fn execute(
        mut self,
        exec: &judge::Execution,
        key: Option<ApiKey>,
        cancel: &judge::CancellationToken,
        progress: &mut dyn FnMut(&judge::Progress),
    ) -> Result<judge::RunReport, JudgeError> {
        judge::execute_run(
            &mut self.store,
            self.plan.run_id,
            exec,
            key,
            cancel,
            progress,
        )
    }
}

/// A run that may start: where its requests go, the key read for it (and a note on where it
/// came from), and its session.
#[derive(Debug)]
pub struct JudgeStart {
    pub destination: Destination,
    pub key: Option<ApiKey>,
    pub note: Option<String>,
    pub session: JudgeSession,
}

/// Apply the destination rule to `settings` and `key`, read the key, and open (or resume) the
/// run with its own connection to the study file.
pub fn start_judge_run(
    study: &mut OpenStudy,
    settings: &RunSettings,
    key: &KeyChoice,
) -> Result<JudgeStart, JudgeError> {
    let destination = judge::destination(settings, key)?;
    if study.store().path().is_none() {
        return Err(JudgeError::Settings(
            "a study held only in memory cannot run a judge".into(),
        ));
    }
    let resolved = key::resolve_choice(key)?;
    let plan = judge::open_run(study.store_mut(), settings)?;
    // The run's own connection, opened with the study's passphrase when it is encrypted.
    let store = study.store().reopen()?;
    Ok(JudgeStart {
        destination,
        key: resolved.key,
        note: resolved.note,
        session: JudgeSession { plan, store },
    })
}
