//! Shared builders for the integration tests.

pub mod panel;
