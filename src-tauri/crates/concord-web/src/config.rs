//! How a server is started: the address, TLS or a TLS-terminating proxy, the names browsers
//! reach it by, the UI build, the request body limit, the time a connection may take to send
//! its headers and a request to finish, and the PBKDF2 cost of new web passphrases; and the
//! refusals of a start. Binding to anything but loopback needs TLS, so a passphrase never
//! crosses a network in the clear; `--behind-proxy` is for a proxy on the same machine, so it
//! binds to loopback only (on any other address the server would answer without TLS to anyone
//! who reaches it past the proxy).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The largest request body the API reads (a rationale, a flag reason): larger gets 413.
pub const DEFAULT_BODY_LIMIT: usize = 64 * 1024;

/// How long a connection may take to send a request's headers: a client that opens connections
/// and sends its headers a byte at a time is cut off.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request may take from its headers to its answer, its body included (a login's
/// key derivation and a save's commit are well inside it): a body sent a byte at a time ends
/// with 408.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The certificate chain and private key (PEM files) of `--tls-cert/--tls-key`.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// What `concord serve` was asked for.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub bind: SocketAddr,
    pub tls: Option<TlsFiles>,
    /// A reverse proxy in front terminates TLS (cookies are then marked Secure).
    pub behind_proxy: bool,
    /// The host names browsers reach the server by (`--public-name`), beside its address: a
    /// request whose `Host` is another name is refused, so a web page whose name was pointed at
    /// this server (DNS rebinding) cannot talk to it.
    pub public_names: Vec<String>,
    /// The browser build of the UI (`index.html` and its assets).
    pub ui_dir: PathBuf,
    pub body_limit: usize,
    /// PBKDF2 iterations of new web passphrases (`concord_core::app::web::ITERATIONS`), and the
    /// cost of the stand-in derivation a login for an unknown name does.
    pub iterations: u32,
    pub header_read_timeout: Duration,
    pub request_timeout: Duration,
}

impl ServeOptions {
    /// Options for `bind` with the UI in `ui_dir`: plain HTTP, the default limits.
    pub fn new(bind: SocketAddr, ui_dir: PathBuf) -> ServeOptions {
        ServeOptions {
            bind,
            tls: None,
            behind_proxy: false,
            public_names: Vec::new(),
            ui_dir,
            body_limit: DEFAULT_BODY_LIMIT,
            iterations: concord_core::app::web::ITERATIONS,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
        }
    }

    /// Refuse what must not start: a non-loopback address without TLS, a proxy in front of
    /// anything but loopback, and a public name that is not a host name.
    pub fn check(&self) -> Result<(), ServeError> {
        if self.tls.is_some() && self.behind_proxy {
            return Err(ServeError::TlsAndProxy);
        }
        if self.behind_proxy && !self.bind.ip().is_loopback() {
            return Err(ServeError::ProxyOffLoopback(self.bind));
        }
        if !self.bind.ip().is_loopback() && self.tls.is_none() {
            return Err(ServeError::PlainOnNetwork(self.bind));
        }
        if let Some(bad) = self
            .public_names
            .iter()
            .find(|n| !crate::host::is_host_name(n))
        {
            return Err(ServeError::PublicName(bad.clone()));
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("refusing to serve {0} without TLS: passphrases would cross the network in the clear; give --tls-cert FILE --tls-key FILE, or bind to 127.0.0.1 (with --behind-proxy when a reverse proxy on this machine terminates TLS)")]
    PlainOnNetwork(SocketAddr),
    #[error("--behind-proxy serves plain HTTP for a proxy on this machine, so it binds to loopback only (127.0.0.1 or ::1), not {0}: anyone reaching {0} past the proxy would talk to Concord without TLS")]
    ProxyOffLoopback(SocketAddr),
    #[error("--public-name {0:?} is not a host name (letters, digits, '-' and '.', no port)")]
    PublicName(String),
    #[error("--behind-proxy is for a proxy that terminates TLS; with --tls-cert/--tls-key Concord terminates it itself: give one or the other")]
    TlsAndProxy,
    #[error("the browser build of the UI is not in {dir} ({detail}); build it with `cd ui && npm run build:web` or name it with --ui DIR")]
    Ui { dir: String, detail: String },
    #[error("could not read the TLS {what} {path}: {detail}")]
    Tls {
        what: &'static str,
        path: String,
        detail: String,
    },
    #[error("could not listen on {addr}: {detail}")]
    Bind { addr: SocketAddr, detail: String },
    #[error("could not read the study: {0}")]
    Study(String),
    /// Web access cannot be sealed here (the study's lead key is not on this machine).
    #[error("{0}")]
    Access(String),
    #[error("{0}")]
    Io(String),
}
