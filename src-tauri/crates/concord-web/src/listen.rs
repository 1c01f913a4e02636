//! The accept loop, plain or under TLS: each connection is served by hyper's HTTP/1.1 with a
//! header-read timeout (a client that sends its headers slowly, or not at all, is cut off and
//! holds no connection for long) and a TLS handshake timeout, and each of its requests carries
//! the client's address ([`Peer`]) for the login throttle.

use axum::Router;
use std::net::SocketAddr;
use std::time::Duration;
use tokio_rustls::TlsAcceptor;
use tower::Service as _;

/// How long a TLS handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The address a request came from (the TCP peer; behind a proxy, the proxy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer(pub SocketAddr);

/// Accept connections on `listener` until `stop` fires, under TLS when `tls` is given.
pub async fn serve(
    listener: tokio::net::TcpListener,
    tls: Option<TlsAcceptor>,
    app: Router,
    header_read_timeout: Duration,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = &mut stop => return,
        };
        let Ok((stream, peer)) = accepted else {
            continue;
        };
        let tls = tls.clone();
        let app = app.clone();
        tokio::spawn(async move {
            match tls {
                None => connection(stream, peer, app, header_read_timeout).await,
                Some(acceptor) => {
                    let Ok(Ok(stream)) =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await
                    else {
                        return;
                    };
                    connection(stream, peer, app, header_read_timeout).await
                }
            }
        });
    }
}

/// Serve one connection's requests, each with its [`Peer`].
async fn connection<S>(stream: S, peer: SocketAddr, app: Router, header_read_timeout: Duration)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |mut request: hyper::Request<_>| {
        request.extensions_mut().insert(Peer(peer));
        let mut app = app.clone();
        async move { app.call(request.map(axum::body::Body::new)).await }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
        .await;
}

/// The most of an oversized body read (and dropped) before its 413 is answered.
const DRAIN_BYTES: usize = 1 << 20;

/// Answer 413 to a request whose declared body is larger than `limit`, after reading and
/// dropping what the client sends (up to `DRAIN_BYTES`): a client still sending when the
/// connection closed would see a reset instead of the answer.
pub async fn refuse_oversized(
    limit: usize,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let declared = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_none_or(|n| n <= limit as u64) {
        return next.run(request).await;
    }
    let _ = axum::body::to_bytes(request.into_body(), DRAIN_BYTES).await;
    (
        axum::http::StatusCode::PAYLOAD_TOO_LARGE,
        axum::Json(serde_json::json!({
            "code": "web_too_large",
            "message": crate::messages::Said::TooLarge { limit }.text(crate::messages::current()),
        })),
    )
        .into_response()
}

/// Answer 408 to a request not finished within `limit` (its body read, its work done).
pub async fn within(
    limit: Duration,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => (
            axum::http::StatusCode::REQUEST_TIMEOUT,
            axum::Json(serde_json::json!({
                "code": "web_timeout",
                "message": crate::messages::Said::TooSlow.text(crate::messages::current()),
            })),
        )
            .into_response(),
    }
}
