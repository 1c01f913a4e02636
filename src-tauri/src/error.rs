//! The one error shape the UI ever receives: `{code, message}`. `code` is an
//! [`ErrorCode`] (stable, machine-readable, `not_a_study`, `newer_schema`, …, typed in the UI's
//! bindings); `message` is a sentence for the person at the screen.

use concord_core::base::error_code::Coded;
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

/// Every core error says its own [`ErrorCode`] through [`Coded`]: it crosses IPC as that code
/// and its text. One impl for all of them (the shell's own `IpcError` is not `Coded`, so this
/// never overlaps `From<IpcError> for IpcError`).
impl<E: Coded> From<E> for IpcError {
    fn from(e: E) -> Self {
        IpcError::new(e.code(), e.to_string())
    }
}

pub type IpcResult<T> = Result<T, IpcError>;
