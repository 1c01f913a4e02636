//! Concord's core: the domain (studies, rubrics, conversations, responses, raters, ratings), the
//! SQLite study store, importers and exporters, assignment, agreement orchestration over
//! `concord-stats`, and the LLM judge runner. It never depends on tauri: the desktop shell and the
//! `concord` CLI are both thin layers over this crate.

pub mod adjudication;
pub mod agreement;
pub mod agreement_table;
pub mod assignment;
pub mod audit;
pub mod backup;
pub mod calibration;
pub mod clock;
pub mod demo;
pub mod digest;
pub mod error_code;
pub mod expert;
pub mod export;
pub mod file_role;
pub mod import;
pub mod judge;
pub mod methods;
pub mod open_study;
pub mod package;
pub mod phi;
pub mod provenance;
pub mod queue;
pub mod rater_quality;
pub mod rater_session;
pub mod recent;
pub mod rubric;
pub mod score_table;
pub mod signoff;
pub mod store;
pub mod study_location;
pub mod study_security;
pub mod text;
pub mod usecase;
