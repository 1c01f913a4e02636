//! **Row 0** of the core's layers (base 0 · files 1 · rubric 2 · store 3 · intake, judge, guard, workflow 4 · panel 5 · outputs 6 · app 7): what every other folder may use and
//! which uses nothing of the crate itself — time passed in, SHA-256 hex, names and labels as a
//! person reads them, the closed enum of error codes the window matches on, and where the default
//! study lives.
//!
//! Never imports another folder of the crate.

pub mod cell;
pub mod clock;
pub mod digest;
pub mod error_code;
pub mod passphrase_strength;
pub mod study_location;
pub mod text;
