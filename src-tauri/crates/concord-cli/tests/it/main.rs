//! The `concord` command line's tests: one binary, one module per command family, each running
//! the built `concord` binary as a user would.
mod adjudication_cli;
mod audit_cli;
mod encrypted_cli;
mod hostile_names_cli;
mod import_agreement_cli;
mod judge_cli;
mod phi_cli;
mod signoff_cli;
mod stats_cli;
mod study_cli;
