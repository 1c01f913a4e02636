//! Where a run stands: the [`Progress`] reported to the caller after every write (the CLI's
//! progress bar, the window's `judge-progress` event) with its [`RunPhase`], and the `Meter`
//! that keeps the session's counts, tokens, cost and rate. Both the live sender
//! ([`super::runner`]) and the batch driver ([`super::batch`]) report through it.

use super::ledger::{RunStatus, Tally};
use super::settings::Prices;
use crate::base::clock::Clock;
use serde::Serialize;
use std::sync::Arc;

/// What a run is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum RunPhase {
    /// Requests are going out (live calls, or batches being submitted).
    Sending,
    /// Every call is in a provider batch; the runner polls until the batches end.
    WaitingForBatch,
    /// Nothing is left to send in this session.
    Finished,
    /// Stopped by the cancel token; unfinished calls went back to pending.
    Cancelled,
}

impl RunPhase {
    /// Whether the run's thread has ended.
    pub fn is_over(self) -> bool {
        matches!(self, RunPhase::Finished | RunPhase::Cancelled)
    }
}

/// Where a run stands, reported after every write.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Progress {
    pub run_id: i64,
    pub total: u64,
    pub done: u64,
    pub failed: u64,
    /// Claimed and not yet answered (requests open, queued or in a provider batch).
    pub in_flight: u64,
    pub pending: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub elapsed_ms: i64,
    /// Calls finished per second in this session.
    pub per_second: f64,
    /// Estimated time to finish the calls left, at this session's rate.
    pub eta_ms: Option<i64>,
    /// What the run is doing.
    pub phase: RunPhase,
}
/// The session's running totals, turned into a [`Progress`] after every write.
pub(crate) struct Meter {
    run_id: i64,
    total: u64,
    done: u64,
    failed: u64,
    input_tokens: u64,
    output_tokens: u64,
    prices: Prices,
    clock: Arc<dyn Clock>,
    started_ms: i64,
    pub(crate) finished_now: u64,
}

impl Meter {
    pub(crate) fn new(status: &RunStatus, prices: Prices, clock: Arc<dyn Clock>) -> Meter {
        Meter {
            run_id: status.id,
            total: status.total as u64,
            done: status.done as u64,
            failed: status.failed as u64,
            input_tokens: status.input_tokens as u64,
            output_tokens: status.output_tokens as u64,
            prices,
            started_ms: clock.now_ms(),
            clock,
            finished_now: 0,
        }
    }

    pub(crate) fn add(&mut self, t: Tally) {
        self.done += t.done;
        self.failed += t.failed;
        self.input_tokens += t.input_tokens;
        self.output_tokens += t.output_tokens;
        self.finished_now += t.done + t.failed;
    }

    pub(crate) fn snapshot(&self, in_flight: u64, phase: RunPhase) -> Progress {
        let elapsed_ms = (self.clock.now_ms() - self.started_ms).max(0);
        let left = self.total.saturating_sub(self.done + self.failed);
        let per_second = if elapsed_ms > 0 {
            self.finished_now as f64 * 1000.0 / elapsed_ms as f64
        } else {
            0.0
        };
        let eta_ms = (per_second > 0.0).then(|| (left as f64 / per_second * 1000.0) as i64);
        Progress {
            run_id: self.run_id,
            total: self.total,
            done: self.done,
            failed: self.failed,
            in_flight,
            pending: left.saturating_sub(in_flight),
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cost_usd: self.prices.cost(self.input_tokens, self.output_tokens),
            elapsed_ms,
            per_second,
            eta_ms,
            phase,
        }
    }
}
