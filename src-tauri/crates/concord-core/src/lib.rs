//! Concord's core: the domain (studies, rubrics, conversations, responses, raters, ratings), the
//! SQLite study store, importers and exporters, assignment, agreement orchestration over
//! `concord-stats`, and the LLM judge runner. It never depends on tauri: the desktop shell and the
//! `concord` CLI are both thin layers over this crate.
//!
//! The crate is eleven folders on eight rows. A file imports only its own folder and folders on
//! lower rows; folders on one row never import each other (`tests/layout.rs` checks it from the
//! code). From the bottom up:
//!
//! | row | folders | holds |
//! |---|---|---|
//! | 0 | [`base`] | time, digests, names as people read them, error codes, the default study path |
//! | 1 | [`files`] | the hardened readers of outside files: bounds, CSV rows, tables, JSON, located issues |
//! | 2 | [`rubric`] | rubrics, scales and the one parser of judge replies |
//! | 3 | [`store`] | the study file: the only code that speaks SQL |
//! | 4 | [`intake`], [`judge`], [`guard`], [`workflow`] | imports; judge runs; audit, PHI and provenance; assignment, queues, packages, sign-off |
//! | 5 | [`panel`] | agreement, the agreement table, adjudication, rater quality |
//! | 6 | [`outputs`] | exports, rating sheets, the methods appendix |
//! | 7 | [`app`] | the jobs a person starts, shared by the window and the CLI, and the open study |

pub mod app;
pub mod base;
pub mod files;
pub mod guard;
pub mod intake;
pub mod judge;
pub mod outputs;
pub mod panel;
pub mod rubric;
pub mod store;
pub mod workflow;
