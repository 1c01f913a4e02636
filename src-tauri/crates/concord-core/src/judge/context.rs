//! What every request of a run shares ([`CallContext`]): the endpoint, the loaded run, the
//! execution settings, the rate limiter, the clock and the cancellation token, with the retry
//! backoff and the reply parser used by both the live sender and the batch driver.

use super::http::{CallError, Completion, Endpoint};
use super::ledger::{CallOutcome, LoadedRun};
use super::pacing::{backoff_delay, RateLimiter};
use super::settings::Execution;
use crate::base::clock::Clock;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What every request of a run shares.
pub(crate) struct CallContext {
    pub endpoint: Endpoint,
    pub run: LoadedRun,
    pub exec: Execution,
    pub limiter: RateLimiter,
    pub clock: Arc<dyn Clock>,
    pub cancel: CancellationToken,
}

impl CallContext {
    pub(crate) fn timeout(&self) -> Duration {
        Duration::from_millis(self.exec.timeout_ms)
    }

    /// The seeded jitter stream of one call (the same call always backs off the same way).
    pub(crate) fn rng_for(&self, salt: i64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(
            self.exec.jitter_seed ^ (salt as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        )
    }

    pub(crate) async fn backoff(&self, retry: u32, err: &CallError, rng: &mut ChaCha8Rng) -> bool {
        let delay = backoff_delay(
            retry,
            Duration::from_millis(self.exec.backoff_base_ms),
            Duration::from_millis(self.exec.backoff_cap_ms),
            err.retry_after(),
            rng,
        );
        tokio::select! {
            _ = tokio::time::sleep(delay) => true,
            _ = self.cancel.cancelled() => false,
        }
    }

    /// `{criterion id: expected score}` JSON from a completion's log-probabilities, when it has
    /// them and its reply was read as scores.
    pub(crate) fn expected(
        &self,
        completion: &Completion,
        outcome: &CallOutcome,
    ) -> Option<String> {
        self.run.expected(completion, outcome)
    }

    /// Turn a completion text into an outcome with the rubric's parser.
    pub(crate) fn judge(&self, text: &str) -> CallOutcome {
        self.run.judge(text)
    }
}
