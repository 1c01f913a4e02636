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

impl From<concord_core::store::StoreError> for IpcError {
    fn from(e: concord_core::store::StoreError) -> Self {
        IpcError::new(e.code(), e.to_string())
    }
}

impl From<concord_core::intake::demo::DemoError> for IpcError {
    fn from(e: concord_core::intake::demo::DemoError) -> Self {
        match e {
            concord_core::intake::demo::DemoError::Store(s) => s.into(),
            other => IpcError::new(ErrorCode::Demo, other.to_string()),
        }
    }
}

pub type IpcResult<T> = Result<T, IpcError>;

impl From<concord_core::panel::adjudication::AdjudicationError> for IpcError {
    fn from(e: concord_core::panel::adjudication::AdjudicationError) -> Self {
        IpcError::new(e.code(), e.to_string())
    }
}

impl From<concord_core::workflow::calibration::CalibrationError> for IpcError {
    fn from(e: concord_core::workflow::calibration::CalibrationError) -> Self {
        IpcError::new(e.code(), e.to_string())
    }
}

impl From<concord_core::workflow::queue::QueueError> for IpcError {
    fn from(e: concord_core::workflow::queue::QueueError) -> Self {
        IpcError::new(e.code(), e.to_string())
    }
}

impl From<concord_core::workflow::signoff::SignoffError> for IpcError {
    fn from(e: concord_core::workflow::signoff::SignoffError) -> Self {
        IpcError::new(e.code(), e.to_string())
    }
}

impl From<concord_core::guard::phi::review::PhiError> for IpcError {
    fn from(e: concord_core::guard::phi::review::PhiError) -> Self {
        IpcError::new(e.code(), e.to_string())
    }
}

impl From<concord_core::app::usecase::UseCaseError> for IpcError {
    fn from(e: concord_core::app::usecase::UseCaseError) -> Self {
        IpcError::new(e.code(), e.to_string())
    }
}

impl From<concord_core::judge::JudgeError> for IpcError {
    fn from(e: concord_core::judge::JudgeError) -> Self {
        IpcError::new(e.code(), e.to_string())
    }
}

impl From<concord_core::judge::KeyError> for IpcError {
    fn from(e: concord_core::judge::KeyError) -> Self {
        IpcError::new(e.code(), e.to_string())
    }
}

impl From<concord_core::app::study_security::SecurityError> for IpcError {
    fn from(e: concord_core::app::study_security::SecurityError) -> Self {
        IpcError::new(e.code(), e.to_string())
    }
}

impl From<concord_core::workflow::rater_session::SessionError> for IpcError {
    fn from(e: concord_core::workflow::rater_session::SessionError) -> Self {
        IpcError::new(e.code(), e.to_string())
    }
}
