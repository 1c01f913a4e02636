//! How a server is started: the address, TLS or a TLS-terminating proxy, the UI build, the
//! request body limit and the PBKDF2 cost of new web passphrases; and the refusals of a start.
//! Binding to anything but loopback needs TLS or `--behind-proxy`, so a passphrase never
//! crosses a network in the clear.

use std::net::SocketAddr;
use std::path::PathBuf;

/// The largest request body the API reads (a rationale, a flag reason): larger gets 413.
pub const DEFAULT_BODY_LIMIT: usize = 64 * 1024;

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
    /// The browser build of the UI (`index.html` and its assets).
    pub ui_dir: PathBuf,
    pub body_limit: usize,
    /// PBKDF2 iterations of new web passphrases (`concord_core::app::web::ITERATIONS`).
    pub iterations: u32,
}

impl ServeOptions {
    /// Options for `bind` with the UI in `ui_dir`: plain HTTP, the default limits.
    pub fn new(bind: SocketAddr, ui_dir: PathBuf) -> ServeOptions {
        ServeOptions {
            bind,
            tls: None,
            behind_proxy: false,
            ui_dir,
            body_limit: DEFAULT_BODY_LIMIT,
            iterations: concord_core::app::web::ITERATIONS,
        }
    }

    /// Refuse what must not start: a non-loopback address without TLS or a proxy in front.
    pub fn check(&self) -> Result<(), ServeError> {
        if !self.bind.ip().is_loopback() && self.tls.is_none() && !self.behind_proxy {
            return Err(ServeError::PlainOnNetwork(self.bind));
        }
        if self.tls.is_some() && self.behind_proxy {
            return Err(ServeError::TlsAndProxy);
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("refusing to serve {0} without TLS: passphrases would cross the network in the clear; give --tls-cert FILE --tls-key FILE, or --behind-proxy when a reverse proxy terminates TLS, or bind to 127.0.0.1")]
    PlainOnNetwork(SocketAddr),
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
    #[error("{0}")]
    Io(String),
}
