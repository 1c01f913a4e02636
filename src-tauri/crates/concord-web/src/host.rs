//! The `Host` check every request passes before anything else: a browser names in `Host` the
//! name it reached the server by, and a web page whose own name was pointed at this server (DNS
//! rebinding) still sends its own name there. So a request is answered only when its `Host` is
//! the address the server is bound to (an IP address, on any port: a page cannot make a browser
//! send an address as its own name), `localhost` on a loopback server, or a name given with
//! `--public-name`; anything else gets 421 and never reaches a route.

use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The names and addresses a request may name in `Host`.
#[derive(Debug, Clone)]
pub struct AllowedHosts {
    bound: IpAddr,
    names: Vec<String>,
}

/// Whether `name` is a host name as `--public-name` takes it: letters, digits, `-` and `.`.
pub fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .split('.')
            .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
}

/// The host part of a `Host` value (`name`, `name:port`, `[v6]:port`), lower-cased.
fn host_part(value: &str) -> Option<String> {
    let value = value.trim();
    let host = if let Some(rest) = value.strip_prefix('[') {
        rest.split_once(']')?.0
    } else {
        match value.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => value,
        }
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

impl AllowedHosts {
    /// What a server bound to `bound`, reached also by `names`, answers to.
    pub fn new(bound: SocketAddr, names: &[String]) -> AllowedHosts {
        AllowedHosts {
            bound: bound.ip(),
            names: names.iter().map(|n| n.to_ascii_lowercase()).collect(),
        }
    }

    /// Whether a request whose `Host` is `value` is for this server.
    pub fn allows(&self, value: &str) -> bool {
        let Some(host) = host_part(value) else {
            return false;
        };
        if let Ok(ip) = host.parse::<IpAddr>() {
            return self.bound.is_unspecified()
                || ip == self.bound
                || (self.bound.is_loopback() && ip.is_loopback());
        }
        (self.bound.is_loopback() && host == "localhost") || self.names.contains(&host)
    }
}

/// Answer 421 to a request whose `Host` is missing or not this server's.
pub async fn check(allowed: Arc<AllowedHosts>, request: Request, next: Next) -> Response {
    let ok = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| allowed.allows(v));
    if !ok {
        return (
            StatusCode::MISDIRECTED_REQUEST,
            axum::Json(serde_json::json!({
                "code": "web_host",
                "message": crate::messages::Said::WrongHost.text(crate::messages::current()),
            })),
        )
            .into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_server_answers_its_addresses_and_localhost_only() {
        let allowed = AllowedHosts::new("127.0.0.1:8420".parse().unwrap(), &[]);
        for ok in [
            "127.0.0.1:8420",
            "127.0.0.1",
            "localhost:8420",
            "LOCALHOST",
            "[::1]:8420",
        ] {
            assert!(allowed.allows(ok), "{ok} names this loopback server");
        }
        for bad in [
            "evil.example:8420",
            "evil.example",
            "",
            "10.0.0.1:8420",
            "localhost.evil",
        ] {
            assert!(
                !allowed.allows(bad),
                "{bad:?} is another host: a rebound name is refused"
            );
        }
    }

    #[test]
    fn a_public_name_is_answered_only_when_given() {
        let names = vec!["Rate.Example.org".to_string()];
        let allowed = AllowedHosts::new("0.0.0.0:443".parse().unwrap(), &names);
        assert!(
            allowed.allows("rate.example.org"),
            "the given name, any case"
        );
        assert!(
            allowed.allows("192.168.1.5"),
            "an address of an unspecified bind"
        );
        assert!(
            !allowed.allows("localhost"),
            "localhost is not this network server's name"
        );
        assert!(
            !allowed.allows("other.example.org"),
            "another name is refused"
        );
        assert!(!is_host_name("a b"), "a space is not in a host name");
        assert!(!is_host_name("host:80"), "a port is not part of a name");
    }
}
