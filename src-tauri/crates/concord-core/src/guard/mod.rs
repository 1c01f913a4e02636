//! **Row 4** of the core's layers (base 0 · files 1 · rubric 2 · store 3 · intake, judge, guard, workflow 4 · panel 5 · outputs 6 · app 7): what guards the record — the audit
//! chain as users read it ([`audit`]: verify and log), the PHI guard that scans imported text and
//! holds exports until findings are reviewed ([`phi`]), and the reproducibility record every
//! export carries ([`provenance`]).
//!
//! Imports `base`, `files`, `rubric` and `store`; never `intake`, `judge`, `workflow`
//! (its row) or anything above.

pub mod audit;
pub mod phi;
pub mod provenance;
