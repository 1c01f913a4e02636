//! What the web server's tests share: a clock the test moves by hand (idle timeouts, lock-outs
//! and invitation expiry without waiting) and the strong passphrases the study accepts.

use concord_core::base::clock::{Clock, Millis};
use std::sync::atomic::{AtomicI64, Ordering};

/// A passphrase strong enough for a web login.
pub const STRONG: &str = "correct horse battery staple 41";
/// Another, for a second expert.
pub const STRONG_B: &str = "purple elephant orbit window 77";

/// A clock that stands still until the test moves it.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(start: Millis) -> ManualClock {
        ManualClock(AtomicI64::new(start))
    }

    /// Move the clock forward by `ms`.
    pub fn advance(&self, ms: Millis) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> Millis {
        self.0.load(Ordering::SeqCst)
    }
}
