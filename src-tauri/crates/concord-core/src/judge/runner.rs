//! Executing a run. The calling thread owns the study and is its only writer: it claims pending
//! rows in chunks (marking them in flight), hands them to a dispatcher on a tokio runtime that
//! keeps at most `concurrency` requests open (each paced by the rate limiter and retried with
//! backoff), and writes results as they come back, many per transaction, so a durable commit
//! costs milliseconds per batch rather than per judgment. Progress is reported after every commit.
//! Cancelling stops claiming, aborts open requests and puts every unfinished row back to pending;
//! results that arrived before the cancel are kept. A call whose request was open when the
//! process died is sent again on resume (nothing of it was recorded).

use super::batch;
use super::context::CallContext;
use super::http::{AnsweredBy, CallError, Endpoint};
use super::key::ApiKey;
use super::ledger::{self, CallOutcome, CallResult, Job, RunStatus};
use super::pacing::RateLimiter;
use super::progress::{Meter, Progress, RunPhase};
use super::prompt::estimate_tokens;
use super::settings::Execution;
use super::JudgeError;
use crate::store::Store;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// What one execution did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RunReport {
    pub run_id: i64,
    pub cancelled: bool,
    /// Rows a previous session left in flight (or failed, with `retry_failed`) that were queued again.
    pub requeued: u64,
    /// Calls finished (done or failed) in this session.
    pub finished_now: u64,
    pub status: RunStatus,
}

fn released(job: &Job, attempts: u32) -> CallResult {
    CallResult {
        call_id: job.call_id,
        response_id: job.response_id,
        repetition: job.repetition,
        attempts,
        prompt_sha256: None,
        raw_output: None,
        http_status: None,
        input_tokens: None,
        output_tokens: None,
        expected_json: None,
        answered_by: AnsweredBy::default(),
        outcome: CallOutcome::Released,
        pair: job.pair.as_ref().map(|p| (p.pair_id, p.left_first)),
    }
}

/// One call with its retries.
async fn call(ctx: &CallContext, job: &Job) -> CallResult {
    let prompt = ctx.run.prompt_for(job);
    let body = ctx.run.body_for(&prompt);
    let est_tokens = estimate_tokens(prompt.system.as_deref().unwrap_or(""))
        + estimate_tokens(&prompt.user)
        + ctx.run.settings.max_tokens as u64;
    let mut rng = ctx.rng_for(job.call_id);
    let mut attempts = 0u32;
    loop {
        tokio::select! {
            _ = ctx.limiter.acquire(est_tokens) => {}
            _ = ctx.cancel.cancelled() => return released(job, attempts),
        }
        attempts += 1;
        let reply = tokio::select! {
            biased;
            r = ctx.endpoint.complete(&body, ctx.timeout(), &*ctx.clock) => r,
            _ = ctx.cancel.cancelled() => return released(job, attempts),
        };
        match reply {
            Ok(c) => {
                let outcome = ctx.judge(&c.text);
                return CallResult {
                    call_id: job.call_id,
                    response_id: job.response_id,
                    repetition: job.repetition,
                    attempts,
                    prompt_sha256: Some(prompt.sha256()),
                    expected_json: ctx.expected(&c, &outcome),
                    answered_by: c.answered_by.clone(),
                    outcome,
                    pair: job.pair.as_ref().map(|p| (p.pair_id, p.left_first)),
                    raw_output: Some(c.text),
                    http_status: Some(200),
                    input_tokens: c.input_tokens,
                    output_tokens: c.output_tokens,
                };
            }
            Err(e) if e.is_retryable() && attempts <= ctx.exec.max_retries => {
                if !ctx.backoff(attempts - 1, &e, &mut rng).await {
                    return released(job, attempts);
                }
            }
            Err(e) => {
                let raw = match &e {
                    CallError::Status { body, .. } if !body.is_empty() => Some(body.clone()),
                    _ => None,
                };
                return CallResult {
                    call_id: job.call_id,
                    response_id: job.response_id,
                    repetition: job.repetition,
                    attempts,
                    prompt_sha256: Some(prompt.sha256()),
                    raw_output: raw,
                    http_status: e.status(),
                    input_tokens: None,
                    output_tokens: None,
                    expected_json: None,
                    answered_by: AnsweredBy::default(),
                    outcome: CallOutcome::Failed {
                        kind: e.code().to_string(),
                        reason: format!("{e} (after {attempts} attempts)"),
                    },
                    pair: job.pair.as_ref().map(|p| (p.pair_id, p.left_first)),
                };
            }
        }
    }
}

async fn dispatch(
    ctx: Arc<CallContext>,
    mut jobs: tokio::sync::mpsc::UnboundedReceiver<Job>,
    results: std::sync::mpsc::Sender<CallResult>,
) {
    let slots = Arc::new(Semaphore::new(ctx.exec.concurrency as usize));
    while let Some(job) = jobs.recv().await {
        if ctx.cancel.is_cancelled() {
            let _ = results.send(released(&job, 0));
            continue;
        }
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => p.expect("the semaphore is never closed"),
            _ = ctx.cancel.cancelled() => {
                let _ = results.send(released(&job, 0));
                continue;
            }
        };
        let ctx = ctx.clone();
        let results = results.clone();
        tokio::spawn(async move {
            let r = call(&ctx, &job).await;
            let _ = results.send(r);
            drop(permit);
        });
    }
}

/// Send the run's pending calls and record what comes back (see the module docs). Blocks the
/// calling thread until the run is finished or cancelled; call it from a worker thread, not from
/// inside an async runtime.
pub fn execute_run(
    store: &mut Store,
    run_id: i64,
    exec: &Execution,
    key: Option<ApiKey>,
    cancel: &CancellationToken,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunReport, JudgeError> {
    exec.validate()?;
    let run = ledger::load_run(store, run_id)?;
    let requeued = ledger::reset_for_session(store, run_id, exec.retry_failed)?;
    let status = ledger::run_status(store, run_id)?;
    let clock = store.clock();
    let mut meter = Meter::new(&status, run.settings.prices, clock.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| JudgeError::Runtime(e.to_string()))?;
    let endpoint = Endpoint::new(&run.settings, key, exec.concurrency as usize)?;
    let ctx = Arc::new(CallContext {
        endpoint,
        limiter: RateLimiter::new(exec.requests_per_minute, exec.tokens_per_minute),
        run,
        exec: exec.clone(),
        clock,
        cancel: cancel.clone(),
    });
    progress(&meter.snapshot(0, RunPhase::Sending));
    let outcome = if ctx.run.settings.batch {
        batch::drive(store, &ctx, &runtime, &mut meter, progress)
    } else {
        live(store, &ctx, &runtime, &mut meter, progress)
    };
    drop(ctx);
    runtime.shutdown_timeout(Duration::from_secs(1));
    outcome?;
    let cancelled = cancel.is_cancelled();
    let status = ledger::run_status(store, run_id)?;
    let mut last = meter.snapshot(
        status.in_flight as u64,
        if cancelled {
            RunPhase::Cancelled
        } else {
            RunPhase::Finished
        },
    );
    last.pending = status.pending as u64;
    progress(&last);
    Ok(RunReport {
        run_id,
        cancelled,
        requeued,
        finished_now: meter.finished_now,
        status,
    })
}

fn live(
    store: &mut Store,
    ctx: &Arc<CallContext>,
    runtime: &tokio::runtime::Runtime,
    meter: &mut Meter,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(), JudgeError> {
    let concurrency = ctx.exec.concurrency as usize;
    let chunk = (concurrency * 4).clamp(64, 2048);
    let low_water = chunk;
    let (jobs_tx, jobs_rx) = tokio::sync::mpsc::unbounded_channel::<Job>();
    let (results_tx, results_rx) = std::sync::mpsc::channel::<CallResult>();
    runtime.spawn(dispatch(ctx.clone(), jobs_rx, results_tx));
    let mut jobs_tx = Some(jobs_tx);
    let mut outstanding = 0usize;
    let mut exhausted = false;
    let write_batch = ctx.exec.write_batch as usize;
    loop {
        if ctx.cancel.is_cancelled() {
            jobs_tx = None;
        }
        if let Some(tx) = &jobs_tx {
            if !exhausted && outstanding < low_water {
                let jobs = ledger::claim(store, &ctx.run, chunk)?;
                exhausted = jobs.len() < chunk;
                outstanding += jobs.len();
                for job in jobs {
                    if tx.send(job).is_err() {
                        return Err(JudgeError::Runtime("the request dispatcher stopped".into()));
                    }
                }
            }
            if exhausted && outstanding == 0 {
                jobs_tx = None;
            }
        }
        if jobs_tx.is_none() && outstanding == 0 {
            return Ok(());
        }
        match results_rx.recv_timeout(Duration::from_millis(50)) {
            Ok(first) => {
                let mut batch = vec![first];
                while batch.len() < write_batch {
                    match results_rx.try_recv() {
                        Ok(r) => batch.push(r),
                        Err(_) => break,
                    }
                }
                let tally = ledger::record(store, &ctx.run, &batch)?;
                outstanding -= batch.len();
                meter.add(tally);
                progress(&meter.snapshot(outstanding as u64, RunPhase::Sending));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(JudgeError::Runtime(
                    "the request tasks stopped before answering every call".into(),
                ));
            }
        }
    }
}
