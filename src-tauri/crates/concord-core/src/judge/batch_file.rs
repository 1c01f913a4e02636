//! A run's calls as an OpenAI batch file, for judging offline at any scale (`vllm run-batch`,
//! the OpenAI Batch API's file format), and its output file read back into the run.
//!
//! **Export** writes one request line per call of the run that is not done (pending or failed),
//! in call order: `{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`, the
//! body exactly what a live call sends (the call's shuffled order and the reply schema
//! included). Nothing is marked: exporting again writes the calls still open. Calls are read in
//! pages of [`PAGE`], so memory stays flat in the number of calls.
//!
//! **custom_id** is `run-<run id>-<first 12 hex of the run's settings hash>-call-<call id>`:
//! stable for a call, and a line from another run or another study is told apart.
//!
//! **Import** reads an output file (`{"custom_id", "response": {"status_code", "body"}, "error"}`
//! per line). The whole file is checked first — every line must be JSON with a custom_id of one
//! of this run's calls, none twice — and nothing is written when any line fails the check (the
//! unknown and duplicate ids are reported). Then each line of a call not yet done is recorded as
//! a live reply would be (scores and ratings, or the failure), in transactions of [`PAGE`] lines;
//! lines of calls already done are counted and skipped, so importing a file again (after an
//! interruption, or a second output file for the calls still open) is safe. The run's calls no
//! line answered are counted as missing and stay open for the next export. Lines longer than
//! [`MAX_LINE`] bytes are refused.

use super::http::{read_completion, AnsweredBy};
use super::ledger::{self, CallOutcome, CallResult, LoadedRun};
use super::settings::ProviderKind;
use super::JudgeError;
use crate::store::Store;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, Write};

/// Calls read, and lines recorded, per page.
pub const PAGE: usize = 10_000;
/// The longest line an import reads.
pub const MAX_LINE: usize = 16 << 20;
/// The most unknown or duplicate ids a refusal lists.
const LISTED: usize = 20;

fn prefix(run: &LoadedRun, settings_sha256: &str) -> String {
    format!(
        "run-{}-{}-call-",
        run.id,
        &settings_sha256[..12.min(settings_sha256.len())]
    )
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchFileExport {
    pub run_id: i64,
    pub lines: u64,
}

/// What an import read and recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchFileImport {
    pub run_id: i64,
    pub lines: u64,
    /// Lines recorded as scores.
    pub done: u64,
    /// Lines recorded as failed calls (an error line, a reply that could not be read).
    pub failed: u64,
    /// Lines of calls that were already done (skipped).
    pub already_done: u64,
    /// Calls of the run no line answered (still open).
    pub missing: u64,
}

/// Write the run's open calls to `out` as OpenAI batch request lines.
pub fn export_batch_file(
    store: &Store,
    run_id: i64,
    mut out: impl Write,
) -> Result<BatchFileExport, JudgeError> {
    let run = ledger::load_run(store, run_id)?;
    if run.rubric.is_pairwise() {
        return Err(JudgeError::Batch(
            "a batch file carries calls that rate one answer; a pairwise run is sent live".into(),
        ));
    }
    if run.settings.provider != ProviderKind::OpenaiCompatible {
        return Err(JudgeError::Batch(
            "a batch file is in the OpenAI batch format: the run must be OpenAI-compatible".into(),
        ));
    }
    let sha = ledger::run_status(store, run_id)?.settings_sha256;
    let prefix = prefix(&run, &sha);
    let mut after = 0;
    let mut lines = 0u64;
    loop {
        let page = store.open_calls_after(run_id, after, PAGE)?;
        let Some(last) = page.last() else { break };
        after = last.call_id;
        for c in page {
            let job = run.job(store, c)?;
            let line = json!({
                "custom_id": format!("{prefix}{}", job.call_id),
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": run.body_for(&run.prompt_for(&job)),
            });
            writeln!(out, "{line}").map_err(|e| JudgeError::Batch(format!("writing: {e}")))?;
            lines += 1;
        }
    }
    out.flush()
        .map_err(|e| JudgeError::Batch(format!("writing: {e}")))?;
    Ok(BatchFileExport { run_id, lines })
}

/// Why an output file was refused before anything was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the batch file does not match run {run_id}: {unknown} line(s) with an unknown custom_id{}, \
     {duplicates} duplicate(s){}; nothing was imported",
    listed(unknown_ids),
    listed(duplicate_ids)
)]
pub struct BatchFileMismatch {
    pub run_id: i64,
    pub unknown: u64,
    pub unknown_ids: Vec<String>,
    pub duplicates: u64,
    pub duplicate_ids: Vec<String>,
}

fn listed(ids: &[String]) -> String {
    if ids.is_empty() {
        String::new()
    } else {
        format!(" ({})", ids.join(", "))
    }
}

/// Visit every line of `reader` (line number from 1, text), refusing overlong lines.
fn for_each_line(
    mut reader: impl BufRead,
    mut f: impl FnMut(u64, &str) -> Result<(), JudgeError>,
) -> Result<(), JudgeError> {
    let mut buf = Vec::new();
    let mut n = 0u64;
    loop {
        buf.clear();
        let read = std::io::Read::take(&mut reader, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| JudgeError::Batch(format!("reading: {e}")))?;
        if read == 0 {
            return Ok(());
        }
        n += 1;
        if buf.len() > MAX_LINE {
            return Err(JudgeError::Batch(format!(
                "line {n} is longer than {MAX_LINE} bytes"
            )));
        }
        let text = std::str::from_utf8(&buf)
            .map_err(|_| JudgeError::Batch(format!("line {n} is not UTF-8")))?;
        if !text.trim().is_empty() {
            f(n, text)?;
        }
    }
}

/// Import an output file into run `run_id`; `open` opens the file afresh for each of the two
/// passes (see the module docs).
pub fn import_batch_file<R: BufRead>(
    store: &mut Store,
    run_id: i64,
    mut open: impl FnMut() -> std::io::Result<R>,
) -> Result<BatchFileImport, JudgeError> {
    let run = ledger::load_run(store, run_id)?;
    let sha = ledger::run_status(store, run_id)?.settings_sha256;
    let calls = store
        .judge_call_states(run_id)?
        .into_iter()
        .map(|c| {
            let state = CallState {
                response_id: c.response_id,
                repetition: c.repetition,
                done: c.done,
                seen: false,
            };
            (c.call_id, state)
        })
        .collect();
    let mut batch = BatchRun {
        prefix: prefix(&run, &sha),
        run: &run,
        calls,
    };
    let io = |e: std::io::Error| JudgeError::Batch(format!("reading: {e}"));
    let lines = batch.check_lines(open().map_err(io)?)?;
    let mut report = BatchFileImport {
        run_id,
        lines,
        done: 0,
        failed: 0,
        already_done: 0,
        missing: batch.missing(),
    };
    batch.record_lines(store, open().map_err(io)?, &mut report)?;
    Ok(report)
}

/// One of the run's calls as an import sees it: its response and repetition, whether it is
/// done, and whether a line of the file names it.
#[derive(Clone, Copy)]
struct CallState {
    response_id: i64,
    repetition: i64,
    done: bool,
    seen: bool,
}

/// The run an output file is imported into: the run, the custom_id prefix of its calls and its
/// calls by id.
struct BatchRun<'a> {
    run: &'a LoadedRun,
    prefix: String,
    calls: HashMap<i64, CallState>,
}

/// The call a line's custom_id names, when it has the run's `prefix`.
fn call_of(prefix: &str, line: &Value) -> Option<i64> {
    line.get("custom_id")?
        .as_str()?
        .strip_prefix(prefix)?
        .parse()
        .ok()
}

impl BatchRun<'_> {
    /// Pass 1: check every line names one of the run's calls, once; returns the lines read.
    fn check_lines(&mut self, reader: impl BufRead) -> Result<u64, JudgeError> {
        let mut mismatch = BatchFileMismatch {
            run_id: self.run.id,
            unknown: 0,
            unknown_ids: Vec::new(),
            duplicates: 0,
            duplicate_ids: Vec::new(),
        };
        let mut lines = 0u64;
        for_each_line(reader, |n, text| {
            lines += 1;
            let line: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            let shown = line
                .get("custom_id")
                .and_then(Value::as_str)
                .map_or(format!("line {n}"), |s| {
                    crate::base::text::quoted(&s).to_string()
                });
            match call_of(&self.prefix, &line).and_then(|id| self.calls.get_mut(&id)) {
                None => {
                    mismatch.unknown += 1;
                    if mismatch.unknown_ids.len() < LISTED {
                        mismatch.unknown_ids.push(shown);
                    }
                }
                Some(call) if call.seen => {
                    mismatch.duplicates += 1;
                    if mismatch.duplicate_ids.len() < LISTED {
                        mismatch.duplicate_ids.push(shown);
                    }
                }
                Some(call) => call.seen = true,
            }
            Ok(())
        })?;
        // Refused with the unknown and duplicate ids, before anything is written.
        if mismatch.unknown > 0 || mismatch.duplicates > 0 {
            return Err(JudgeError::Batch(mismatch.to_string()));
        }
        Ok(lines)
    }

    /// The run's calls that are not done and that no line answered.
    fn missing(&self) -> u64 {
        self.calls.values().filter(|c| !c.done && !c.seen).count() as u64
    }

    /// Pass 2: record each open call's line, [`PAGE`] lines a transaction, counting into `report`.
    fn record_lines(
        &self,
        store: &mut Store,
        reader: impl BufRead,
        report: &mut BatchFileImport,
    ) -> Result<(), JudgeError> {
        let mut page: Vec<CallResult> = Vec::with_capacity(PAGE.min(1024));
        let flush = |store: &mut Store, page: &mut Vec<CallResult>| -> Result<(), JudgeError> {
            if !page.is_empty() {
                ledger::record(store, self.run, page)?;
                page.clear();
            }
            Ok(())
        };
        // A failed transaction is reported once the whole file has been read.
        let mut pending_error = None;
        for_each_line(reader, |_, text| {
            let line: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            let Some(call_id) = call_of(&self.prefix, &line) else {
                return Ok(());
            };
            let Some(&call) = self.calls.get(&call_id) else {
                return Ok(());
            };
            if call.done {
                report.already_done += 1;
                return Ok(());
            }
            let mut r = self.call_result(call_id, call, &line, text);
            // The prompt the exported line carried, rendered again from the study.
            r.prompt_sha256 =
                ledger::rendered_call(store, self.run, call_id)?.map(|(_, prompt)| prompt.sha256());
            match &r.outcome {
                CallOutcome::Scored(_) => report.done += 1,
                _ => report.failed += 1,
            }
            page.push(r);
            if page.len() >= PAGE {
                if let Err(e) = flush(store, &mut page) {
                    pending_error.get_or_insert(e);
                }
            }
            Ok(())
        })?;
        if let Some(e) = pending_error {
            return Err(e);
        }
        flush(store, &mut page)
    }

    /// The result a line gives its call, as a live reply is recorded (scores, or the failure).
    fn call_result(&self, call_id: i64, call: CallState, line: &Value, text: &str) -> CallResult {
        let status = line
            .pointer("/response/status_code")
            .and_then(Value::as_u64);
        let result = match (line.pointer("/response/body"), status) {
            (Some(body), Some(200)) => read_completion(ProviderKind::OpenaiCompatible, body)
                .map_err(|e| (e.code().to_string(), e.to_string())),
            _ => Err((
                "batch_error".to_string(),
                line.pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("the batch returned no completion for this request")
                    .to_string(),
            )),
        };
        match result {
            Ok(c) => {
                let outcome = self.run.judge(&c.text);
                CallResult {
                    pair: None,
                    call_id,
                    response_id: call.response_id,
                    repetition: call.repetition,
                    attempts: 1,
                    prompt_sha256: None,
                    expected_json: self.run.expected(&c, &outcome),
                    answered_by: c.answered_by.clone(),
                    outcome,
                    raw_output: Some(c.text),
                    http_status: Some(200),
                    input_tokens: c.input_tokens,
                    output_tokens: c.output_tokens,
                }
            }
            Err((kind, reason)) => CallResult {
                pair: None,
                call_id,
                response_id: call.response_id,
                repetition: call.repetition,
                attempts: 1,
                prompt_sha256: None,
                expected_json: None,
                answered_by: AnsweredBy::default(),
                outcome: CallOutcome::Failed { kind, reason },
                raw_output: Some(text.trim_end().to_string()),
                http_status: status.map(|s| s as u16),
                input_tokens: None,
                output_tokens: None,
            },
        }
    }
}
