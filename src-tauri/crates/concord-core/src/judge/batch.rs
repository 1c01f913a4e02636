//! Batch mode for large runs: the OpenAI Batch API (upload a JSONL file, create a batch, poll it,
//! download the output and error files) and Anthropic Message Batches (submit the requests, poll,
//! read the results). Each call is one request line with `custom_id = call-<row id>`. A submitted
//! batch is recorded in the study with its rows before anything else happens, so a resumed run
//! polls it again instead of sending its calls twice; only a crash between the provider accepting
//! a batch and that record being written leads to a second submission of those calls. Cancelling
//! stops submitting and polling but leaves submitted batches to be collected on resume.

use super::context::CallContext;
use super::http::{read_completion, AnsweredBy, CallError};
use super::ledger::{self, CallOutcome, CallResult};
use super::progress::{Meter, Progress, RunPhase};
use super::settings::ProviderKind;
use super::JudgeError;
use crate::base::text::quoted;
use crate::store::Store;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// The state of a provider batch.
#[derive(Debug, Clone, PartialEq, Eq)]
enum BatchState {
    Running,
    /// Finished; where its results are (OpenAI: output and error file ids; Anthropic: results URL).
    Ended {
        results: Vec<String>,
        note: Option<String>,
    },
}

async fn retrying<T, F, Fut>(ctx: &CallContext, salt: i64, mut f: F) -> Result<T, JudgeError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, CallError>>,
{
    let mut rng = ctx.rng_for(salt);
    let mut attempt = 0u32;
    loop {
        match f().await {
            Ok(v) => return Ok(v),
            Err(e) if e.is_retryable() && attempt < ctx.exec.max_retries => {
                if !ctx.backoff(attempt, &e, &mut rng).await {
                    return Err(JudgeError::Batch(format!("cancelled while retrying: {e}")));
                }
                attempt += 1;
            }
            Err(e) => return Err(JudgeError::Batch(e.to_string())),
        }
    }
}

fn custom_id(call_id: i64) -> String {
    format!("call-{call_id}")
}

fn call_of(custom_id: &str) -> Option<i64> {
    custom_id.strip_prefix("call-")?.parse().ok()
}

/// The `files` upload of an OpenAI batch: `purpose=batch` and the JSONL request file.
fn batch_upload(jsonl: &str) -> Result<reqwest::multipart::Form, CallError> {
    let file = reqwest::multipart::Part::text(jsonl.to_string())
        .file_name("concord-batch.jsonl")
        .mime_str("application/jsonl")
        .map_err(|e| CallError::Transport(e.to_string()))?;
    Ok(reqwest::multipart::Form::new()
        .text("purpose", "batch")
        .part("file", file))
}

async fn submit(ctx: &CallContext, lines: Vec<(i64, Value)>) -> Result<String, JudgeError> {
    let e = &ctx.endpoint;
    let timeout = ctx.timeout();
    let clock = &*ctx.clock;
    let salt = lines.first().map_or(0, |(id, _)| *id);
    match e.provider() {
        ProviderKind::OpenaiCompatible => {
            let mut jsonl = String::new();
            for (id, body) in &lines {
                jsonl.push_str(
                    &json!({"custom_id": custom_id(*id), "method": "POST",
                            "url": "/v1/chat/completions", "body": body})
                    .to_string(),
                );
                jsonl.push('\n');
            }
            let jsonl = &jsonl;
            let file = retrying(ctx, salt, || async move {
                // A form is consumed by sending it, so every attempt builds its own.
                let rb = e
                    .request(reqwest::Method::POST, &e.url("files"))
                    .multipart(batch_upload(jsonl)?);
                e.send_json(rb, timeout, clock).await
            })
            .await?;
            let file_id = file
                .get("id")
                .and_then(Value::as_str)
                .ok_or_else(|| JudgeError::Batch("the file upload returned no id".into()))?
                .to_string();
            let created = retrying(ctx, salt, || {
                let rb = e
                    .request(reqwest::Method::POST, &e.url("batches"))
                    .json(&json!({
                        "input_file_id": file_id,
                        "endpoint": "/v1/chat/completions",
                        "completion_window": "24h",
                    }));
                e.send_json(rb, timeout, clock)
            })
            .await?;
            created
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| JudgeError::Batch("creating the batch returned no id".into()))
        }
        ProviderKind::Anthropic => {
            let requests: Vec<Value> = lines
                .iter()
                .map(|(id, body)| json!({"custom_id": custom_id(*id), "params": body}))
                .collect();
            let payload = json!({ "requests": requests });
            let created = retrying(ctx, salt, || {
                let rb = e
                    .request(reqwest::Method::POST, &e.url("messages/batches"))
                    .json(&payload);
                e.send_json(rb, timeout, clock)
            })
            .await?;
            created
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| JudgeError::Batch("creating the batch returned no id".into()))
        }
    }
}

async fn poll(ctx: &CallContext, provider_id: &str) -> Result<BatchState, JudgeError> {
    let e = &ctx.endpoint;
    let path = match e.provider() {
        ProviderKind::OpenaiCompatible => format!("batches/{provider_id}"),
        ProviderKind::Anthropic => format!("messages/batches/{provider_id}"),
    };
    let body = retrying(ctx, 1, || {
        e.send_json(
            e.request(reqwest::Method::GET, &e.url(&path)),
            ctx.timeout(),
            &*ctx.clock,
        )
    })
    .await?;
    let text = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_string);
    match e.provider() {
        ProviderKind::OpenaiCompatible => {
            let status = text("status").unwrap_or_default();
            match status.as_str() {
                "completed" | "failed" | "expired" | "cancelled" => Ok(BatchState::Ended {
                    results: [text("output_file_id"), text("error_file_id")]
                        .into_iter()
                        .flatten()
                        .collect(),
                    note: (status != "completed").then(|| {
                        let errors = body
                            .pointer("/errors/data/0/message")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        format!("the batch ended as {status} {errors}")
                            .trim()
                            .to_string()
                    }),
                }),
                _ => Ok(BatchState::Running),
            }
        }
        ProviderKind::Anthropic => match text("processing_status").as_deref() {
            Some("ended") => Ok(BatchState::Ended {
                results: text("results_url").into_iter().collect(),
                note: None,
            }),
            _ => Ok(BatchState::Running),
        },
    }
}

async fn fetch_lines(ctx: &CallContext, locators: &[String]) -> Result<Vec<Value>, JudgeError> {
    let e = &ctx.endpoint;
    let mut lines = Vec::new();
    for loc in locators {
        let url = match e.provider() {
            ProviderKind::OpenaiCompatible => e.url(&format!("files/{loc}/content")),
            ProviderKind::Anthropic => {
                // The provider names the results' URL; the key goes only to its own origin.
                if !e.on_origin(loc) {
                    return Err(JudgeError::Batch(format!(
                        "the batch's results URL {} is not on the judge endpoint; it was not fetched",
                        quoted(loc)
                    )));
                }
                loc.clone()
            }
        };
        let text = retrying(ctx, 2, || {
            e.send_text(
                e.request(reqwest::Method::GET, &url),
                ctx.timeout(),
                &*ctx.clock,
            )
        })
        .await?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line)
                .map_err(|err| JudgeError::Batch(format!("a result line is not JSON: {err}")))?;
            lines.push(v);
        }
    }
    Ok(lines)
}

/// A result line's completion, or (failure kind, reason, HTTP status).
type LineResult = Result<super::http::Completion, (String, String, Option<u16>)>;

/// Turn one result line into (call id, what it holds).
fn read_line(ctx: &CallContext, line: &Value) -> Option<(i64, LineResult)> {
    let id = call_of(line.get("custom_id")?.as_str()?)?;
    let r = match ctx.endpoint.provider() {
        ProviderKind::OpenaiCompatible => {
            let status = line
                .pointer("/response/status_code")
                .and_then(Value::as_u64);
            match (line.pointer("/response/body"), status) {
                (Some(body), Some(200)) => read_completion(ProviderKind::OpenaiCompatible, body)
                    .map_err(|e| (e.code().to_string(), e.to_string(), Some(200))),
                (body, status) => {
                    let msg = line
                        .pointer("/error/message")
                        .or_else(|| body.and_then(|b| b.pointer("/error/message")))
                        .and_then(Value::as_str)
                        .unwrap_or("the batch returned no completion for this request");
                    Err((
                        "batch_error".to_string(),
                        msg.to_string(),
                        status.map(|s| s as u16),
                    ))
                }
            }
        }
        ProviderKind::Anthropic => {
            let kind = line
                .pointer("/result/type")
                .and_then(Value::as_str)
                .unwrap_or("");
            match (kind, line.pointer("/result/message")) {
                ("succeeded", Some(m)) => read_completion(ProviderKind::Anthropic, m)
                    .map_err(|e| (e.code().to_string(), e.to_string(), None)),
                _ => {
                    let msg = line
                        .pointer("/result/error/error/message")
                        .or_else(|| line.pointer("/result/error/message"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    Err((
                        format!("batch_{}", if kind.is_empty() { "error" } else { kind }),
                        format!("the batch request {kind}: {msg}")
                            .trim()
                            .to_string(),
                        None,
                    ))
                }
            }
        }
    };
    Some((id, r))
}

fn sleep_or_cancel(ctx: &CallContext, runtime: &tokio::runtime::Runtime, d: Duration) {
    runtime.block_on(async {
        tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = ctx.cancel.cancelled() => {}
        }
    });
}

/// Submit the run's pending calls in batches, then poll and collect every open batch.
pub(crate) fn drive(
    store: &mut Store,
    ctx: &Arc<CallContext>,
    runtime: &tokio::runtime::Runtime,
    meter: &mut Meter,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(), JudgeError> {
    let mut run = BatchRun {
        store,
        ctx,
        runtime,
        meter,
        progress,
    };
    run.submit_pending()?;
    run.collect_open()
}

/// A run in batch mode: the study its calls are kept in, the calls' context, the runtime the
/// requests run on, and the tally and progress reported.
struct BatchRun<'a> {
    store: &'a mut Store,
    ctx: &'a Arc<CallContext>,
    runtime: &'a tokio::runtime::Runtime,
    meter: &'a mut Meter,
    progress: &'a mut dyn FnMut(&Progress),
}

impl BatchRun<'_> {
    /// Tell the progress callback how far the run is while it waits for its batches.
    fn report_waiting(&mut self) -> Result<(), JudgeError> {
        let in_batches = ledger::run_status(self.store, self.ctx.run.id)?.in_flight as u64;
        (self.progress)(&self.meter.snapshot(in_batches, RunPhase::WaitingForBatch));
        Ok(())
    }

    /// Claim the pending calls a batch at a time and submit each batch, recording it before
    /// anything else; a batch the provider refuses releases its calls and ends the run.
    fn submit_pending(&mut self) -> Result<(), JudgeError> {
        let (ctx, run_id) = (self.ctx, self.ctx.run.id);
        while !ctx.cancel.is_cancelled() {
            let jobs = ledger::claim(self.store, &ctx.run, ctx.exec.batch_max_requests as usize)?;
            if jobs.is_empty() {
                break;
            }
            let mut hashes = Vec::with_capacity(jobs.len());
            let lines: Vec<(i64, Value)> = jobs
                .iter()
                .map(|j| {
                    let prompt = ctx.run.prompt_for(j);
                    hashes.push((j.call_id, prompt.sha256()));
                    (j.call_id, ctx.run.body_for(&prompt))
                })
                .collect();
            match self.runtime.block_on(submit(ctx, lines)) {
                Ok(provider_id) => {
                    ledger::record_batch(self.store, run_id, &provider_id, &hashes)?;
                    self.report_waiting()?;
                }
                Err(e) => {
                    let back: Vec<CallResult> = jobs
                        .iter()
                        .map(|j| CallResult {
                            pair: None,
                            call_id: j.call_id,
                            response_id: j.response_id,
                            repetition: j.repetition,
                            attempts: 0,
                            prompt_sha256: None,
                            raw_output: None,
                            http_status: None,
                            input_tokens: None,
                            output_tokens: None,
                            expected_json: None,
                            answered_by: AnsweredBy::default(),
                            outcome: CallOutcome::Released,
                        })
                        .collect();
                    ledger::record(self.store, &ctx.run, &back)?;
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Poll every open batch until none is left (or the run is cancelled), collecting each one
    /// that has ended, and wait between rounds.
    fn collect_open(&mut self) -> Result<(), JudgeError> {
        let (ctx, run_id) = (self.ctx, self.ctx.run.id);
        loop {
            let open = ledger::open_batches(self.store, run_id)?;
            if open.is_empty() || ctx.cancel.is_cancelled() {
                return Ok(());
            }
            for crate::store::OpenBatch {
                id: row,
                provider_id,
            } in open
            {
                let state = self.runtime.block_on(poll(ctx, &provider_id))?;
                let BatchState::Ended { results, note } = state else {
                    continue;
                };
                let lines = self.runtime.block_on(fetch_lines(ctx, &results))?;
                let waiting = ledger::batch_calls(self.store, run_id, &provider_id)?;
                let out = batch_results(ctx, &lines, &waiting, note);
                for chunk in out.chunks(ctx.exec.write_batch as usize) {
                    let tally = ledger::record(self.store, &ctx.run, chunk)?;
                    self.meter.add(tally);
                }
                ledger::close_batch(self.store, row)?;
                self.report_waiting()?;
            }
            if !ledger::open_batches(self.store, run_id)?.is_empty() {
                sleep_or_cancel(
                    ctx,
                    self.runtime,
                    Duration::from_millis(ctx.exec.batch_poll_ms),
                );
            }
        }
    }
}

/// The results of an ended batch, in call order: each of its `waiting` calls (call, response,
/// repetition) with the line that answers it, judged or failed, and a call no line answers
/// failed as missing (with the batch's `note` when it ended badly).
fn batch_results(
    ctx: &CallContext,
    lines: &[Value],
    waiting: &[(i64, i64, i64)],
    note: Option<String>,
) -> Vec<CallResult> {
    let mut by_id: HashMap<i64, (i64, i64)> =
        waiting.iter().map(|(c, r, p)| (*c, (*r, *p))).collect();
    let mut out = Vec::with_capacity(waiting.len());
    for line in lines {
        let Some((call_id, result)) = read_line(ctx, line) else {
            continue;
        };
        let Some((response_id, repetition)) = by_id.remove(&call_id) else {
            continue;
        };
        let prompt_sha256 = None;
        out.push(match result {
            Ok(c) => {
                let outcome = ctx.judge(&c.text);
                CallResult {
                    pair: None,
                    call_id,
                    response_id,
                    repetition,
                    attempts: 0,
                    prompt_sha256,
                    expected_json: ctx.expected(&c, &outcome),
                    answered_by: c.answered_by.clone(),
                    outcome,
                    raw_output: Some(c.text),
                    http_status: Some(200),
                    input_tokens: c.input_tokens,
                    output_tokens: c.output_tokens,
                }
            }
            Err((kind, reason, status)) => CallResult {
                pair: None,
                call_id,
                response_id,
                repetition,
                attempts: 0,
                prompt_sha256,
                raw_output: Some(line.to_string()),
                http_status: status,
                input_tokens: None,
                output_tokens: None,
                expected_json: None,
                answered_by: AnsweredBy::default(),
                outcome: CallOutcome::Failed { kind, reason },
            },
        });
    }
    for (call_id, (response_id, repetition)) in by_id {
        out.push(CallResult {
            pair: None,
            call_id,
            response_id,
            repetition,
            attempts: 0,
            prompt_sha256: None,
            raw_output: None,
            http_status: None,
            input_tokens: None,
            output_tokens: None,
            expected_json: None,
            answered_by: AnsweredBy::default(),
            outcome: CallOutcome::Failed {
                kind: "batch_missing".into(),
                reason: note
                    .clone()
                    .unwrap_or_else(|| "the ended batch has no result for this call".into()),
            },
        });
    }
    out.sort_by_key(|r| r.call_id);
    out
}
