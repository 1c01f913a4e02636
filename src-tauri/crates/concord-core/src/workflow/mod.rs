//! **Row 4** of the core's layers (base 0 · files 1 · rubric 2 · store 3 · intake, judge, guard, workflow 4 · panel 5 · outputs 6 · app 7): the study's workflow between the lead
//! and the experts — who rates what ([`assignment`]), the expert's blinded queue
//! ([`queue`]), gold items and the qualification gate ([`calibration`]), rater packages out and
//! back ([`package`]), who the window works for ([`rater_session`]) and expert sign-off
//! ([`signoff`]), and experts who rate from a browser ([`web_access`]: invitations, web
//! passphrases, lock-outs, revocation), and pairwise preferences ([`pairs`]: the pair design,
//! its assignment and an expert's verdicts), and the evidence spans an expert marks in the reply
//! they rate ([`spans`]).
//!
//! Imports `base`, `files`, `rubric` and `store`; never `intake`, `judge`, `guard`
//! (its row) or anything above.

pub mod assignment;
pub mod calibration;
pub mod package;
pub mod pairs;
pub mod queue;
pub mod rater_session;
pub mod signoff;
pub mod spans;
pub mod web_access;
