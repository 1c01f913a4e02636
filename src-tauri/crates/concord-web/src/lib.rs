//! `concord serve`: experts rate from a browser. A front end like the desktop shell and the CLI:
//! it calls only `concord_core::app` (never a store method, never SQL) and holds the HTTP side of
//! a web rater session — the JSON API for exactly what a rater session may do in the window (own
//! queue, an item, rate with rationale, flag, leave an item, calibration, sign-off, progress),
//! the login, logout and invitation routes, the session cookies and CSRF tokens ([`session`]),
//! the answers' security headers ([`headers`]) and the browser build of the Svelte UI, held in
//! memory and served by exact name only ([`assets`]). Every request first passes the `Host`
//! check ([`host`]) and a time limit; connections are served with a header-read timeout
//! ([`listen`]). Every answer is worded in English or Chinese, as the request asks
//! ([`messages`]). TLS is rustls ([`tls`]). The values raters
//! save go to one writer task that commits those arriving together in one transaction and
//! acknowledges each only after that commit ([`writer`]).
//!
//! The expert of every API call is the session's, never a field of the request; the answers are
//! the core's blinded queue types, serialised as JSON strings, so no source, model, judge or
//! other rater's value reaches a browser and a dataset's text is never HTML.

pub mod api;
pub mod assets;
pub mod config;
pub mod error;
pub mod headers;
pub mod host;
pub mod listen;
pub mod messages;
pub mod session;
pub mod throttle;
pub mod tls;
pub mod writer;

pub use config::{ServeError, ServeOptions, TlsFiles};

use concord_core::app::open_study::OpenStudy;
use concord_core::base::clock::Clock;
use rand::RngCore;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// What the server shares between requests: the open study (one writer, its work on tokio's
/// blocking pool), the queue of values to the writer that saves them in groups ([`writer`]),
/// the sessions, and the settings it was started with.
pub struct Shared {
    pub(crate) study: Mutex<OpenStudy>,
    pub(crate) saves: writer::Saves,
    pub(crate) sessions: session::Sessions,
    /// Failed logins per client address ([`throttle`]).
    pub(crate) throttle: throttle::Throttle,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) iterations: u32,
    pub(crate) secure_cookies: bool,
    pub(crate) behind_proxy: bool,
}

impl Shared {
    /// Run `job` on the study, on the blocking pool (study work never runs on an async worker).
    pub(crate) async fn with_study<T, E>(
        self: &Arc<Self>,
        job: impl FnOnce(&mut OpenStudy) -> Result<T, E> + Send + 'static,
    ) -> Result<T, error::WebError>
    where
        T: Send + 'static,
        E: Into<error::WebError> + Send + 'static,
    {
        let shared = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let mut study = shared.study.lock().unwrap_or_else(|p| p.into_inner());
            job(&mut study).map_err(Into::into)
        })
        .await
        .map_err(|_| error::WebError::Internal)?
    }
}

/// A running server: its address and scheme; dropping it (or [`Running::stop`]) stops it.
pub struct Running {
    pub addr: SocketAddr,
    pub scheme: &'static str,
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl Running {
    /// `http://HOST:PORT` or `https://HOST:PORT`.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// Serve until the process ends (or the server fails).
    pub fn wait(mut self) {
        if let (Some(rt), Some(done)) = (self.runtime.as_ref(), self.done.take()) {
            let _ = rt.block_on(done);
        }
    }

    /// Stop serving and release the study.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(std::time::Duration::from_secs(5));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Start serving `study` as `options` say, on a runtime of its own. `clock` times the sessions
/// (idle timeout); `rng` draws session and CSRF tokens and salts — the OS generator outside tests.
pub fn start(
    mut study: OpenStudy,
    options: ServeOptions,
    clock: Arc<dyn Clock>,
    rng: Box<dyn RngCore + Send>,
) -> Result<Running, ServeError> {
    options.check()?;
    let ui = assets::Assets::load(&options.ui_dir)?;
    let tls = match &options.tls {
        Some(files) => Some(tls::acceptor(files)?),
        None => None,
    };
    let idle_minutes = concord_core::app::web::idle_minutes(&study)
        .map_err(|e| ServeError::Study(e.to_string()))?;
    // Logins, invitations and sessions are sealed with a key derived from the lead key: no lead
    // key on this machine, no web access.
    concord_core::app::web::web_key(&mut study).map_err(|e| ServeError::Access(e.to_string()))?;
    concord_core::app::web::serve_with_log_folder(&mut study)
        .map_err(|e| ServeError::Study(e.to_string()))?;
    let folder =
        concord_core::app::web::log_folder(&study).map_err(|e| ServeError::Study(e.to_string()))?;
    let (saves, waiting) = writer::channel();
    let shared = Arc::new(Shared {
        study: Mutex::new(study),
        saves,
        sessions: session::Sessions::new(
            clock.clone(),
            rng,
            u64::from(idle_minutes.max(1)) * 60_000,
        ),
        throttle: throttle::Throttle::new(clock.clone()),
        clock,
        iterations: options.iterations,
        secure_cookies: tls.is_some() || options.behind_proxy,
        behind_proxy: options.behind_proxy,
    });
    let writer_shared = Arc::clone(&shared);
    let hsts = tls.is_some() || options.behind_proxy;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| ServeError::Io(e.to_string()))?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(options.bind))
        .map_err(|e| ServeError::Bind {
            addr: options.bind,
            detail: e.to_string(),
        })?;
    let addr = listener
        .local_addr()
        .map_err(|e| ServeError::Io(e.to_string()))?;
    let hosts = Arc::new(host::AllowedHosts::new(addr, &options.public_names));
    let limit = options.request_timeout;
    let body_limit = options.body_limit;
    let app = api::router(shared, ui, body_limit, hsts)
        .layer(axum::middleware::from_fn(move |r, n| {
            listen::refuse_oversized(body_limit, r, n)
        }))
        .layer(axum::middleware::from_fn(move |r, n| {
            listen::within(limit, r, n)
        }))
        .layer(axum::middleware::from_fn(move |r, n| {
            host::check(Arc::clone(&hosts), r, n)
        }))
        // Outermost: every answer, the refusals of the layers above included, is worded in the
        // request's language.
        .layer(axum::middleware::from_fn(messages::follow_language));
    runtime.spawn(writer::run(writer_shared, waiting, folder));
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let header_read_timeout = options.header_read_timeout;
    runtime.spawn(async move {
        listen::serve(listener, tls, app, header_read_timeout, stop_rx).await;
        let _ = done_tx.send(());
    });
    Ok(Running {
        addr,
        scheme,
        runtime: Some(runtime),
        stop: Some(stop_tx),
        done: Some(done_rx),
    })
}
