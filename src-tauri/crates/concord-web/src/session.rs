//! Web sessions: a random token in an HttpOnly, SameSite=Strict cookie (Secure under TLS or
//! behind a TLS proxy), held in the server's memory and kept in the study as a hash of the token
//! keyed by the study's web key, with its seal (so a restarted server carries a session on, and a
//! session row written into the file by anything else opens nothing), each with a CSRF token that every write must
//! carry in `X-CSRF-Token`: the SHA-256 of the cookie's token under a label, which a page learns
//! only from the server (the cookie is out of scripts' reach) and another site cannot compute. A session ends after the study's idle-lock minutes without
//! a request, on logout, and when the expert's login is revoked or replaced (checked against the
//! study on every request, so `concord serve revoke` from another process takes effect at once).

use concord_core::base::clock::{Clock, Millis};
use concord_core::workflow::web_access::WebIdentity;
use rand::RngCore;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The session cookie's name.
pub const COOKIE: &str = "concord_session";
/// The header a write carries its CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// One logged-in browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub identity: WebIdentity,
    pub csrf: String,
    pub last_seen: Millis,
    /// When the study last had this session's presence noted (at most once a minute).
    pub noted: Millis,
}

/// How often a session's presence is noted in the study.
pub const NOTE_EVERY_MS: Millis = 60_000;

/// Why a token no longer names a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The session, and whether its presence is due to be noted in the study.
    Found(Session, bool),
    /// It was idle too long (now removed).
    Expired(WebIdentity),
    Unknown,
}

struct Inner {
    map: HashMap<String, Session>,
    rng: Box<dyn RngCore + Send>,
}

/// The sessions of one server.
pub struct Sessions {
    inner: Mutex<Inner>,
    clock: Arc<dyn Clock>,
    idle_ms: u64,
}

/// The CSRF token of the session whose cookie carries `token`.
pub fn csrf_of(token: &str) -> String {
    use sha2::Digest as _;
    hex(&sha2::Sha256::digest(
        format!("concord-csrf\n{token}").as_bytes(),
    ))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Equal strings, compared in time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

impl Sessions {
    pub fn new(clock: Arc<dyn Clock>, rng: Box<dyn RngCore + Send>, idle_ms: u64) -> Sessions {
        Sessions {
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                rng,
            }),
            clock,
            idle_ms,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Draw `bytes` random bytes as hex (tokens, salts' seeds).
    pub fn random_hex(&self, bytes: usize) -> String {
        let mut b = vec![0u8; bytes];
        self.lock().rng.fill_bytes(&mut b);
        hex(&b)
    }

    /// A seed for the core's seeded steps (a signing passphrase's salt).
    pub fn seed(&self) -> u64 {
        self.lock().rng.next_u64()
    }

    /// A generator the core's randomised steps draw from (taken from this server's).
    pub fn rng(&self) -> rand::rngs::StdRng {
        use rand::SeedableRng;
        let mut seed = [0u8; 32];
        self.lock().rng.fill_bytes(&mut seed);
        rand::rngs::StdRng::from_seed(seed)
    }

    /// Open a session for `identity`; returns its token and CSRF token.
    pub fn open(&self, identity: WebIdentity) -> (String, Session) {
        let now = self.clock.now_ms();
        let mut inner = self.lock();
        let mut token = [0u8; 32];
        inner.rng.fill_bytes(&mut token);
        let token = hex(&token);
        let session = Session {
            identity,
            csrf: csrf_of(&token),
            last_seen: now,
            noted: now,
        };
        inner.map.insert(token.clone(), session.clone());
        (token, session)
    }

    /// The session `token` names, its idle time reset; an idle one is removed.
    pub fn touch(&self, token: &str) -> Lookup {
        let now = self.clock.now_ms();
        let mut inner = self.lock();
        let Some(session) = inner.map.get_mut(token) else {
            return Lookup::Unknown;
        };
        if now.saturating_sub(session.last_seen) > self.idle_ms as i64 {
            let identity = session.identity.clone();
            inner.map.remove(token);
            return Lookup::Expired(identity);
        }
        session.last_seen = now;
        let due = now.saturating_sub(session.noted) >= NOTE_EVERY_MS;
        if due {
            session.noted = now;
        }
        Lookup::Found(session.clone(), due)
    }

    /// Take back a session the study kept (after a restart), last seen at `last_seen`; `None`
    /// when it has been idle too long.
    pub fn restore(
        &self,
        token: &str,
        identity: WebIdentity,
        last_seen: Millis,
    ) -> Option<Session> {
        let now = self.clock.now_ms();
        if now.saturating_sub(last_seen) > self.idle_ms as i64 {
            return None;
        }
        let session = Session {
            identity,
            csrf: csrf_of(token),
            last_seen: now,
            noted: now,
        };
        self.lock().map.insert(token.to_string(), session.clone());
        Some(session)
    }

    /// End session `token`.
    pub fn close(&self, token: &str) -> Option<Session> {
        self.lock().map.remove(token)
    }

    /// End every session of expert `rater_id` (their login was revoked or replaced).
    pub fn close_all_of(&self, rater_id: i64) {
        self.lock()
            .map
            .retain(|_, s| s.identity.rater.id != rater_id);
    }

    /// Minutes of idleness that end a session, in milliseconds.
    pub fn idle_ms(&self) -> u64 {
        self.idle_ms
    }

    /// The experts with a live session and when each was last seen.
    pub fn connected(&self) -> Vec<(i64, Millis)> {
        let now = self.clock.now_ms();
        let inner = self.lock();
        let mut out: HashMap<i64, Millis> = HashMap::new();
        for s in inner.map.values() {
            if now.saturating_sub(s.last_seen) <= self.idle_ms as i64 {
                let e = out.entry(s.identity.rater.id).or_insert(s.last_seen);
                *e = (*e).max(s.last_seen);
            }
        }
        let mut v: Vec<_> = out.into_iter().collect();
        v.sort();
        v
    }
}
