//! Tauri commands, one module per screen. Each command makes one call into `concord-core` and maps
//! its error to the IPC error shape; no SQL and no statistics live here.

pub mod agreement;
pub mod desktop;
pub mod judge;
pub mod panel;
pub mod phi;
pub mod rating;
pub mod security;
pub mod session;
pub mod setup;
pub mod signoff;
pub mod study;
pub mod web;
