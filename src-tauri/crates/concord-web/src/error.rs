//! The API's one error answer: the window's `{code, message}` shape (the core's `ErrorCode`)
//! with an HTTP status chosen from the code. Every core error reaches it through `Coded`; the
//! text of an internal failure (a path, a database message) stays in the server.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use concord_core::base::error_code::{Coded, ErrorCode};

#[derive(Debug, Clone)]
pub enum WebError {
    /// No session, or one that ended (idle, logged out, revoked).
    Unauthorized,
    /// A write without the session's CSRF token.
    Csrf,
    /// A login guess made before the wait after wrong passphrases (for its name or from its
    /// client) ended: 429 with `Retry-After`.
    Wait {
        seconds: u64,
    },
    /// A refusal of the core, with its code and message.
    Core {
        code: ErrorCode,
        message: String,
    },
    Internal,
}

impl<E: Coded> From<E> for WebError {
    fn from(e: E) -> Self {
        WebError::Core {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

fn status(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::WebLogin | ErrorCode::WebSession => StatusCode::UNAUTHORIZED,
        ErrorCode::WebLocked => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::WebInvitation | ErrorCode::NoSuchItem | ErrorCode::NotFound => {
            StatusCode::NOT_FOUND
        }
        ErrorCode::CalibrationPending | ErrorCode::SignedRating | ErrorCode::InUse => {
            StatusCode::CONFLICT
        }
        ErrorCode::Internal
        | ErrorCode::Database
        | ErrorCode::Io
        | ErrorCode::Damaged
        | ErrorCode::ReadOnly => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let retry_after = match &self {
            WebError::Wait { seconds } => Some(axum::http::HeaderValue::from(*seconds)),
            _ => None,
        };
        let (status, code, message) = match self {
            WebError::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                ErrorCode::WebSession,
                "not logged in, or the session has ended; log in again".to_string(),
            ),
            WebError::Csrf => (
                StatusCode::FORBIDDEN,
                ErrorCode::WebSession,
                "this request lacks the session's CSRF token; reload the page".to_string(),
            ),
            WebError::Core { code, message } => {
                let status = status(code);
                if status == StatusCode::INTERNAL_SERVER_ERROR {
                    eprintln!("concord serve: {message}");
                    (
                        status,
                        code,
                        "the server could not do this; the study lead can see why in its log"
                            .to_string(),
                    )
                } else {
                    (status, code, message)
                }
            }
            WebError::Wait { seconds } => (
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::WebLocked,
                format!(
                    "too many wrong passphrases: try again in {seconds} s, or ask the study lead"
                ),
            ),
            WebError::Internal => (
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                "the server could not do this".to_string(),
            ),
        };
        let mut response = (
            status,
            axum::Json(serde_json::json!({ "code": code, "message": message })),
        )
            .into_response();
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, seconds);
        }
        response
    }
}
