//! The API's one error answer: the window's `{code, message}` shape (the core's `ErrorCode`)
//! with an HTTP status chosen from the code, worded in the request's language
//! ([`crate::messages`]): English as a sentence, or Chinese. A refusal of an invitation also says
//! why (`reason`: `used`, `expired` or `invalid`), so the page can lead to the login with it.
//! Every core error reaches it through `Coded`; the text of an internal failure (a path, a
//! database message) stays in the server.

use crate::messages::{self, sentence, Lang, Said};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use concord_core::base::error_code::{Coded, ErrorCode};
use concord_core::workflow::web_access::WebAccessError;

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
    /// A refusal of the core, with its code and (English) message; its Chinese where it has
    /// one of its own (else its code's), and why an invitation was refused.
    Core {
        code: ErrorCode,
        message: String,
        zh: Option<String>,
        reason: Option<&'static str>,
    },
    Internal,
}

impl<E: Coded> From<E> for WebError {
    fn from(e: E) -> Self {
        WebError::Core {
            code: e.code(),
            message: e.to_string(),
            zh: None,
            reason: None,
        }
    }
}

impl WebError {
    /// A refusal of the invitation, the login or the web passphrase, with its own Chinese and,
    /// for an invitation, its reason.
    pub fn access(e: WebAccessError) -> WebError {
        WebError::Core {
            code: e.code(),
            zh: messages::access_zh(&e),
            reason: messages::invitation_reason(&e),
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
        let lang = messages::current();
        let retry_after = match &self {
            WebError::Wait { seconds } => Some(axum::http::HeaderValue::from(*seconds)),
            _ => None,
        };
        let mut reason = None;
        let (status, code, message) = match self {
            WebError::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                ErrorCode::WebSession,
                Said::NotLoggedIn.text(lang),
            ),
            WebError::Csrf => (
                StatusCode::FORBIDDEN,
                ErrorCode::WebSession,
                Said::NoCsrf.text(lang),
            ),
            WebError::Core {
                code,
                message,
                zh,
                reason: why,
            } => {
                let status = status(code);
                if status == StatusCode::INTERNAL_SERVER_ERROR {
                    eprintln!("concord serve: {message}");
                    (status, code, Said::SeeTheLog.text(lang))
                } else {
                    reason = why;
                    let text = match lang {
                        Lang::En => sentence(&message),
                        Lang::Zh => zh.unwrap_or_else(|| messages::code_zh(code).to_string()),
                    };
                    (status, code, text)
                }
            }
            WebError::Wait { seconds } => (
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::WebLocked,
                Said::Wait { seconds }.text(lang),
            ),
            WebError::Internal => (
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                Said::Failed.text(lang),
            ),
        };
        let mut body = serde_json::json!({ "code": code, "message": message });
        if let Some(reason) = reason {
            body["reason"] = reason.into();
        }
        let mut response = (status, axum::Json(body)).into_response();
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, seconds);
        }
        response
    }
}
