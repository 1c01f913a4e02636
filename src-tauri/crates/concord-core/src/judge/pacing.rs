//! Pacing of requests: a limiter for requests per minute and tokens per minute (two token
//! buckets that refill continuously, each holding at most one minute's allowance), and
//! exponential backoff with jitter drawn from a seeded generator; a server's `Retry-After` wins
//! over the computed delay.

use rand::Rng;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

struct Bucket {
    capacity: f64,
    level: f64,
}

impl Bucket {
    fn new(per_minute: u32) -> Bucket {
        let capacity = per_minute as f64;
        Bucket {
            capacity,
            level: capacity,
        }
    }
    fn refill(&mut self, seconds: f64) {
        self.level = (self.level + seconds * self.capacity / 60.0).min(self.capacity);
    }
    /// Seconds until `amount` is available (an amount above capacity waits for a full bucket).
    fn wait_for(&self, amount: f64) -> f64 {
        let need = amount.min(self.capacity) - self.level;
        if need <= 0.0 {
            0.0
        } else {
            need * 60.0 / self.capacity
        }
    }
}

struct Buckets {
    requests: Option<Bucket>,
    tokens: Option<Bucket>,
    last: Instant,
}

/// Requests-per-minute and tokens-per-minute limits shared by all of a run's requests.
pub struct RateLimiter {
    inner: Option<Mutex<Buckets>>,
}

impl RateLimiter {
    pub fn new(requests_per_minute: Option<u32>, tokens_per_minute: Option<u32>) -> RateLimiter {
        if requests_per_minute.is_none() && tokens_per_minute.is_none() {
            return RateLimiter { inner: None };
        }
        RateLimiter {
            inner: Some(Mutex::new(Buckets {
                requests: requests_per_minute.map(Bucket::new),
                tokens: tokens_per_minute.map(Bucket::new),
                last: Instant::now(),
            })),
        }
    }

    /// Wait until one request of about `tokens` tokens may be sent, then count it.
    pub async fn acquire(&self, tokens: u64) {
        let Some(inner) = &self.inner else { return };
        loop {
            let wait = {
                let mut b = inner.lock().await;
                let now = Instant::now();
                let elapsed = now.duration_since(b.last).as_secs_f64();
                b.last = now;
                if let Some(r) = b.requests.as_mut() {
                    r.refill(elapsed);
                }
                if let Some(t) = b.tokens.as_mut() {
                    t.refill(elapsed);
                }
                let wait = b
                    .requests
                    .as_ref()
                    .map_or(0.0, |r| r.wait_for(1.0))
                    .max(b.tokens.as_ref().map_or(0.0, |t| t.wait_for(tokens as f64)));
                if wait <= 0.0 {
                    if let Some(r) = b.requests.as_mut() {
                        r.level -= 1.0;
                    }
                    if let Some(t) = b.tokens.as_mut() {
                        t.level -= (tokens as f64).min(t.capacity);
                    }
                    return;
                }
                wait
            };
            tokio::time::sleep(Duration::from_secs_f64(wait.max(0.001))).await;
        }
    }
}

/// The delay before retry number `retry` (0 for the first retry): `base · 2^retry` capped at
/// `cap`, of which a random half is kept ("equal jitter"), so simultaneous failures spread out.
/// A `Retry-After` from the server replaces it (never shortened).
pub fn backoff_delay(
    retry: u32,
    base: Duration,
    cap: Duration,
    retry_after: Option<Duration>,
    rng: &mut impl Rng,
) -> Duration {
    if let Some(after) = retry_after {
        return after;
    }
    let exp = base.saturating_mul(1u32.checked_shl(retry.min(30)).unwrap_or(u32::MAX));
    let ceiling = exp.min(cap);
    let half = ceiling / 2;
    let jitter = if half.is_zero() {
        Duration::ZERO
    } else {
        Duration::from_nanos(rng.gen_range(0..=half.as_nanos() as u64))
    };
    half + jitter
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn backoff_grows_caps_and_honours_retry_after() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let base = Duration::from_millis(100);
        let cap = Duration::from_secs(2);
        for retry in 0..8 {
            let d = backoff_delay(retry, base, cap, None, &mut rng);
            let ceiling = (base * 2u32.pow(retry)).min(cap);
            assert!(
                d >= ceiling / 2 && d <= ceiling,
                "retry {retry}: {d:?} must lie in [ceiling/2, ceiling] = {ceiling:?}"
            );
        }
        assert_eq!(
            backoff_delay(0, base, cap, Some(Duration::from_secs(9)), &mut rng),
            Duration::from_secs(9),
            "the server's Retry-After is honoured even above the cap"
        );
        let a = backoff_delay(3, base, cap, None, &mut ChaCha8Rng::seed_from_u64(1));
        let b = backoff_delay(3, base, cap, None, &mut ChaCha8Rng::seed_from_u64(1));
        assert_eq!(a, b, "the same seed gives the same jitter");
    }

    #[tokio::test(start_paused = true)]
    async fn limiter_spaces_requests() {
        let limiter = RateLimiter::new(Some(60), None);
        let start = Instant::now();
        for _ in 0..61 {
            limiter.acquire(0).await;
        }
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(990) && waited < Duration::from_millis(1500),
            "60 rpm allows a burst of 60, then one a second; waited {waited:?}"
        );
        let tokens = RateLimiter::new(None, Some(600));
        let start = Instant::now();
        tokens.acquire(600).await;
        tokens.acquire(300).await;
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(29_900) && waited < Duration::from_millis(31_000),
            "300 more tokens at 600/min take 30 s; waited {waited:?}"
        );
    }
}
