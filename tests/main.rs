//! Concord's integration tests: one binary, one module per capability. The end-to-end modules
//! drive the real desktop window (tauri-driver + WebKitWebDriver under Xvfb).

mod bindings;
mod e2e;
mod layout;
