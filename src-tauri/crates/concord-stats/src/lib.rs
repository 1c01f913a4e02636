//! Pure agreement statistics for Concord: intraclass correlations, paired comparisons,
//! categorical agreement coefficients, bootstrap and interpretation. No IO, no clock, no database:
//! every function takes numbers in and gives numbers (or an explicit "undefined") out.

pub mod icc;
pub mod special;
