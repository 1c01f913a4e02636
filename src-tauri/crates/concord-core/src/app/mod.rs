//! **Row 7** of the core's layers (base 0 · files 1 · rubric 2 · store 3 · intake, judge, guard, workflow 4 · panel 5 · outputs 6 · app 7): the application layer, the only door
//! the desktop shell and the `concord` CLI need — the jobs a person starts ([`usecase`]), the
//! study as the window holds it with its cached reports ([`open_study`]), the expert's side of
//! a package ([`expert`]), what a handed-over file is for ([`file_role`]), backups
//! ([`backup`]), the recent-studies list ([`recent`]) and an encrypted study's keeping
//! ([`study_security`]).
//!
//! May import every folder below; nothing in the crate imports it.

pub mod backup;
pub mod expert;
pub mod file_role;
pub mod open_study;
pub mod recent;
pub mod study_security;
pub mod usecase;
