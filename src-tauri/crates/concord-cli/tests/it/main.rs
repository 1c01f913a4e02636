//! The `concord` command line's tests: one binary, one module per command family, each running
//! the built `concord` binary as a user would.
/// Every `concord` these tests run keeps lead keys in this folder, never in the OS keyring or
/// the user's data folder.
pub const LEAD_KEY_DIR: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/cli-lead-keys");
pub const KEY_DIR_ENV: &str = "CONCORD_KEY_DIR";

mod adjudication_cli;
mod audit_cli;
mod conversations_agreement_cli;
mod conversations_cli;
mod encrypted_cli;
mod hostile_names_cli;
mod import_agreement_cli;
mod judge_cli;
mod judge_history_cli;
mod judge_reliability_cli;
mod judge_status_cli;
mod live_study_cli;
mod output_cli;
mod pairs_cli;
mod phi_cli;
mod reviewer_stats_cli;
mod reviewer_study_cli;
mod serve_cli;
mod signoff_cli;
mod spans_cli;
mod stats_cli;
mod study_cli;
mod upgrade_fixture;
