//! What Concord's tests and benchmarks share, in one unpublished crate so no test binary compiles
//! its own copy: small studies on a fixed clock for the lead's workflow ([`lead_study`]),
//! release-shaped files and a fingerprint of what an import can change ([`release_files`]), a
//! simulated expert panel with known severities ([`simulated_panel`]), a judge server on
//! loopback that speaks the providers' protocols and injects faults ([`judge_server`]), a study
//! for the reviewer's questions imported from files with categories ([`reviewer_study`]), the
//! web server tests' hand-moved clock and strong passphrases ([`web`]), conversations of many
//! turns for the rating screen ([`conversations`]), conversations files in both input formats
//! for the import ([`conversation_files`]), a study of transcripts with replies correlated
//! (or not) within a conversation ([`transcript_study`]), replies in English and in Chinese
//! with an emoji for marking evidence spans ([`span_study`]), and axe-core as both surfaces' page
//! tests run it ([`axe`]).

pub mod axe;
pub mod conversation_files;
pub mod conversations;
pub mod judge_server;
pub mod lead_study;
pub mod release_files;
pub mod reviewer_study;
pub mod simulated_panel;
pub mod span_study;
pub mod transcript_study;
pub mod web;
