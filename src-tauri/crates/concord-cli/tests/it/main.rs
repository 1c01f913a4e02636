//! The `concord` command line's tests: one binary, one module per command family, each running
//! the built `concord` binary as a user would.
/// Every `concord` these tests run keeps lead keys in this folder, never in the OS keyring or
/// the user's data folder.
pub const LEAD_KEY_DIR: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/cli-lead-keys");
pub const KEY_DIR_ENV: &str = "CONCORD_KEY_DIR";

/// `concord --db DB ARGS…` as a user runs it (lead keys in the tests' folder, no study named by
/// the environment).
pub fn concord(db: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(KEY_DIR_ENV, LEAD_KEY_DIR)
        .env_remove("CONCORD_STUDY")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("the concord binary runs")
}

/// The standard output of a run that must have succeeded (`what` names it in the failure).
pub fn ok(out: &std::process::Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} succeeds: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Write an input file `name` into `dir`; its path as the command line takes it.
pub fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write the input");
    p.to_str().expect("utf-8 path").to_string()
}

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
