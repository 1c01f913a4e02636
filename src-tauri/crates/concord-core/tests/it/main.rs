//! concord-core's integration tests: one binary, one module per capability (imports, the
//! lead's workflow, packages, judge runs, agreement, hostile files and studies, fuzzed readers).
//! Shared fixtures are the `concord-testsupport` crate.
mod a_batch_of_saves_in_one_transaction;
mod adjudication;
mod agreement;
mod audit_chain;
mod calibration;
mod desktop_files;
mod encrypted_study;
mod fuzz_readers;
mod hostile_files;
mod hostile_names;
mod hostile_studies;
mod import_bad_input;
mod import_formats;
mod import_mentalalign;
mod import_streaming;
mod judge_batch_file;
mod judge_reliability;
mod judge_run;
mod lead_assignment;
mod lead_export;
mod lead_package;
mod live_study;
mod methods;
mod open_study;
mod package_forgery;
mod package_seal;
mod pair_packages;
mod pairs;
mod phi_eval;
mod rating_queue;
mod reviewer;
mod safe_writes;
mod signature_marks;
mod signoff_forgery;
mod verdicts;
