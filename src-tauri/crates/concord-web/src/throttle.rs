//! The login throttle per client: beside the wait each expert's name imposes after wrong
//! passphrases (kept in the study, `concord_core::app::web::wait_after`), each client address
//! may make [`FREE_FAILURES`] failed logins (any names, known or not) before each further guess
//! must wait, [`FIRST_WAIT_MS`] doubling with each failure up to [`LONGEST_WAIT_MS`]; a success
//! forgets the client's failures. A guess made during the wait is refused without being tried or
//! counted. Held in memory (a restart forgets it), at most [`MAX_CLIENTS`] addresses; an IPv6
//! client counts by its /64, which one machine usually holds whole. Behind a proxy on this
//! machine, the client is the last address the proxy added to `X-Forwarded-For`.

use axum::http::HeaderMap;
use concord_core::base::clock::{Clock, Millis};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Failed logins a client may make before each further guess waits.
pub const FREE_FAILURES: u32 = 10;
/// The first wait; it doubles with each further failure.
pub const FIRST_WAIT_MS: Millis = 2_000;
/// The longest wait, and how long a client's failures are remembered after its last one.
pub const LONGEST_WAIT_MS: Millis = 15 * 60 * 1000;
/// The most client addresses remembered; the one failed longest ago makes room.
pub const MAX_CLIENTS: usize = 65_536;

#[derive(Debug, Clone, Copy)]
struct Record {
    failures: u32,
    wait_until: Millis,
    last: Millis,
}

/// The failed logins of each client address.
pub struct Throttle {
    clock: Arc<dyn Clock>,
    clients: Mutex<HashMap<IpAddr, Record>>,
}

/// The wait after `failures` failed logins from one client.
pub fn wait_after(failures: u32) -> Option<Millis> {
    failures
        .checked_sub(FREE_FAILURES)
        .map(|beyond| (FIRST_WAIT_MS << beyond.min(20)).min(LONGEST_WAIT_MS))
}

/// The address a request's guess is counted against: the TCP peer, or behind a proxy on this
/// machine the last address in `X-Forwarded-For` (the one the proxy itself added); an IPv6
/// address by its /64.
pub fn client(peer: IpAddr, headers: &HeaderMap, behind_proxy: bool) -> IpAddr {
    let forwarded = behind_proxy
        .then(|| {
            headers
                .get_all("x-forwarded-for")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .next_back()
                .and_then(|a| a.trim().parse::<IpAddr>().ok())
        })
        .flatten();
    match forwarded.unwrap_or(peer) {
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() => {
            let s = v6.segments();
            IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
        IpAddr::V6(v6) => IpAddr::V4(
            v6.to_ipv4_mapped()
                .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED),
        ),
        v4 => v4,
    }
}

impl Throttle {
    pub fn new(clock: Arc<dyn Clock>) -> Throttle {
        Throttle {
            clock,
            clients: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, Record>> {
        self.clients.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `Err(until)` while `client` must wait before its next guess.
    pub fn check(&self, client: IpAddr) -> Result<(), Millis> {
        let now = self.clock.now_ms();
        match self.lock().get(&client) {
            Some(r) if r.wait_until > now => Err(r.wait_until),
            _ => Ok(()),
        }
    }

    /// Count a failed login of `client`; `Some(until)` when its next guess must wait.
    pub fn failed(&self, client: IpAddr) -> Option<Millis> {
        let now = self.clock.now_ms();
        let mut clients = self.lock();
        if clients.len() >= MAX_CLIENTS && !clients.contains_key(&client) {
            clients.retain(|_, r| now.saturating_sub(r.last) < LONGEST_WAIT_MS);
            if clients.len() >= MAX_CLIENTS {
                if let Some(oldest) = clients.iter().min_by_key(|(_, r)| r.last).map(|(a, _)| *a) {
                    clients.remove(&oldest);
                }
            }
        }
        let record = clients.entry(client).or_insert(Record {
            failures: 0,
            wait_until: 0,
            last: now,
        });
        if now.saturating_sub(record.last) >= LONGEST_WAIT_MS {
            record.failures = 0;
        }
        record.failures += 1;
        record.last = now;
        let until = wait_after(record.failures).map(|wait| now + wait);
        record.wait_until = until.unwrap_or(0);
        until
    }

    /// A login of `client` succeeded: its failures are forgotten.
    pub fn succeeded(&self, client: IpAddr) {
        self.lock().remove(&client);
    }
}
