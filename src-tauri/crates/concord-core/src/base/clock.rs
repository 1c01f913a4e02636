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

    /// Move the clock forward by `ms` (time that passes between two steps of a test).
    pub fn advance(&self, ms: Millis) {
        self.next.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for SteppingClock {
    fn now_ms(&self) -> Millis {
        self.next.fetch_add(self.step_ms, Ordering::SeqCst)
    }
}

/// Milliseconds since the epoch as ISO-8601 UTC (`2023-11-14T22:13:20.000Z`).
pub fn iso_utc(ms: Millis) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_utc_formats_known_instants() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00.000Z", "the epoch");
        assert_eq!(
            iso_utc(1_700_000_000_123),
            "2023-11-14T22:13:20.123Z",
            "a known instant"
        );
        assert_eq!(
            iso_utc(951_782_400_000),
            "2000-02-29T00:00:00.000Z",
            "a leap day"
        );
    }
}
