//! **Row 6** of the core's layers (base 0 · files 1 · rubric 2 · store 3 · intake, judge, guard, workflow 4 · panel 5 · outputs 6 · app 7): every file Concord writes for people
//! outside the study — rating exports (long CSV, wide CSV, workbook) and fill-in sheets
//! ([`export`]) and the methods appendix that recomputes itself ([`methods`], with the tables of
//! the reviewer's questions in [`reviewer_tables`] and the evidence spans' in [`span_tables`]).
//!
//! Imports rows 0–5; never `app`.

pub mod export;
pub mod methods;
pub mod reviewer_tables;
pub mod span_tables;
