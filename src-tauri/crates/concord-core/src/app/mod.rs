//! **Row 7** of the core's layers (base 0 · files 1 · rubric 2 · store 3 · intake, judge, guard, workflow 4 · panel 5 · outputs 6 · app 7): the application layer, the only door
//! the desktop shell and the `concord` CLI need. One file per job a person starts, each with one
//! entry point per step (progress, when a job reports it, is a parameter) and one error type
//! that says its [`ErrorCode`](crate::base::error_code::ErrorCode) through
//! [`Coded`](crate::base::error_code::Coded): [`open`] a study, [`import`] a dataset, [`setup`]
//! (rubrics, experts, assignment), [`package`]s out and back, rating [`export`]s and fill-in
//! sheets, a filled [`sheet`] back, [`judge_start`] and the rest of the judge screen
//! ([`judge_runs`]: prompt, preview, destination, runs, failures), the [`rating`] screen, rater
//! [`session`]s, expert [`signoff`] and a signed rating's [`revise`]ion, the [`phi`] guard's
//! review, the [`agreement`] panel's outputs, [`adjudication`], [`rater_quality`],
//! [`calibration`], the [`audit`] chain, the study [`overview`], the [`methods`] appendix, rating from a browser ([`web`]) and the
//! [`reviewer`]'s questions (agreement by category), evidence [`spans`] and the agreement panel's
//! [`span_panel`].
//! Beside them: the study as the window holds it with its cached reports ([`open_study`]: the
//! store and the cache, no jobs), the expert's side of a package ([`expert`]), what a
//! handed-over file is for ([`file_role`]), backups ([`backup`]), the recent-studies list
//! ([`recent`]), an encrypted study's keeping ([`study_security`]) and the paths jobs take and
//! write ([`paths`]).
//!
//! May import every folder below; nothing in the crate imports it.

pub mod adjudication;
pub mod agreement;
pub mod audit;
pub mod backup;
pub mod calibration;
pub mod expert;
pub mod export;
pub mod file_role;
pub mod import;
pub mod judge_runs;
pub mod judge_start;
pub mod methods;
pub mod open;
pub mod open_study;
pub mod overview;
pub mod package;
pub mod pairs;
pub mod paths;
pub mod phi;
pub mod rater_quality;
pub mod rating;
pub mod recent;
pub mod reviewer;
pub mod revise;
pub mod session;
pub mod setup;
pub mod sheet;
pub mod signoff;
pub mod span_panel;
pub mod spans;
pub mod study_security;
pub mod web;

#[cfg(test)]
mod tests;
