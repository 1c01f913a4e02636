//! The one error shape the UI ever receives: `{code, message}`. `code` is an
//! [`ErrorCode`] (stable, machine-readable, `not_a_study`, `newer_schema`, …, typed in the UI's
//! bindings); `message` is a sentence for the person at the screen.

pub use concord_core::base::error_code::ErrorCode;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[derive(ts_rs::TS)]
pub struct IpcError {
    pub code: ErrorCode,
    pub message: String,
}

impl IpcError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        IpcError {
            code,
            message: message.into(),
        }
    }
}

/// The core's errors that name their own [`ErrorCode`] (an inherent `code()`): each crosses IPC as
/// that code and its text.
macro_rules! from_coded_errors {
    ($($error:ty),+ $(,)?) => {$(
        impl From<$error> for IpcError {
            fn from(e: $error) -> Self {
                IpcError::new(e.code(), e.to_string())
            }
        }
    )+};
}

from_coded_errors!(
    concord_core::store::StoreError,
    concord_core::panel::adjudication::AdjudicationError,
    concord_core::workflow::calibration::CalibrationError,
    concord_core::workflow::queue::QueueError,
    concord_core::workflow::signoff::SignoffError,
    concord_core::guard::phi::review::PhiError,
    concord_core::app::usecase::UseCaseError,
    concord_core::judge::JudgeError,
    concord_core::judge::KeyError,
    concord_core::app::study_security::SecurityError,
    concord_core::workflow::rater_session::SessionError,
);

/// The demo's error: a store error keeps its own code, anything else is `demo`.
impl From<concord_core::intake::demo::DemoError> for IpcError {
    fn from(e: concord_core::intake::demo::DemoError) -> Self {
        match e {
            concord_core::intake::demo::DemoError::Store(s) => s.into(),
            other => IpcError::new(ErrorCode::Demo, other.to_string()),
        }
    }
}

pub type IpcResult<T> = Result<T, IpcError>;
