//! Time as a value passed in: the store stamps ratings and history with a `Clock` it was given,
//! so tests run on a fixed, advancing clock and every timestamp in a study is reproducible.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, UTC.
pub type Millis = i64;

pub trait Clock: Send + Sync {
    fn now_ms(&self) -> Millis;
}

/// The operating system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> Millis {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as Millis)
            .unwrap_or(0)
    }
}

/// A seed for new randomised state (a new rater's queue order, a package's codes) drawn from the
/// system time. Only the front ends call it, at the edge of the program; the core's logic only
/// ever receives seeds, which it stores, so the same seed gives the same study.
pub fn fresh_seed() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x5eed)
}

/// A clock for tests: starts at a given instant and moves forward by `step_ms` at every reading.
#[derive(Debug)]
pub struct SteppingClock {
    next: AtomicI64,
    step_ms: i64,
}

impl SteppingClock {
    pub fn new(start_ms: Millis, step_ms: i64) -> Self {
        SteppingClock {
            next: AtomicI64::new(start_ms),
            step_ms,
        }
    }
}

impl Clock for SteppingClock {
    fn now_ms(&self) -> Millis {
        self.next.fetch_add(self.step_ms, Ordering::SeqCst)
    }
}
