//! Precision planning for an ICC study, from Bonett (2002), "Sample size requirements for
//! estimating intraclass correlations with desired precision", Statistics in Medicine 21,
//! 1331–1335. For k raters, planning value ρ and desired 100(1 − α)% interval width w, the number
//! of targets is
//!
//! n = 8 z² (1 − ρ)² (1 + (k − 1)ρ)² / (k (k − 1) w²) + 1,
//!
//! rounded up, z the two-sided normal critical value; conversely the expected width for n targets
//! is w = √(8 z² (1 − ρ)² (1 + (k − 1)ρ)² / (k (k − 1)(n − 1))). Bonett derives it for the
//! one-way ICC and notes it serves the two-way forms well when rater effects are small.

use serde::Serialize;
use thiserror::Error;

use crate::special::z_critical;

/// Invalid planning input.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PlannerError {
    /// Fewer than two raters.
    #[error("at least two raters are needed, got {0}")]
    Raters(usize),
    /// Planning value outside [0, 1).
    #[error("planning ICC {0} must lie in [0, 1)")]
    PlanningValue(f64),
    /// Width not positive.
    #[error("desired width {0} must be positive")]
    Width(f64),
    /// Fewer than two targets.
    #[error("at least two targets are needed, got {0}")]
    Targets(usize),
    /// Level outside (0, 1).
    #[error("confidence level {0} is not between 0 and 1")]
    Level(f64),
}

/// A planning result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrecisionPlan {
    /// Raters per target.
    pub raters: usize,
    /// Planning ICC value.
    pub planning_icc: f64,
    /// Confidence level.
    pub level: f64,
    /// Targets.
    pub targets: usize,
    /// Expected interval width with that many targets.
    pub expected_width: f64,
}

fn check(k: usize, rho: f64, level: f64) -> Result<f64, PlannerError> {
    if k < 2 {
        return Err(PlannerError::Raters(k));
    }
    if !(0.0..1.0).contains(&rho) {
        return Err(PlannerError::PlanningValue(rho));
    }
    if !(level > 0.0 && level < 1.0) {
        return Err(PlannerError::Level(level));
    }
    let z = z_critical(1.0 - level);
    let kf = k as f64;
    Ok(8.0 * z * z * (1.0 - rho).powi(2) * (1.0 + (kf - 1.0) * rho).powi(2) / (kf * (kf - 1.0)))
}

/// Targets needed for an interval of width `width` (Bonett 2002), rounded up.
pub fn targets_for_width(
    k: usize,
    planning_icc: f64,
    width: f64,
    level: f64,
) -> Result<PrecisionPlan, PlannerError> {
    let c = check(k, planning_icc, level)?;
    if !(width > 0.0 && width.is_finite()) {
        return Err(PlannerError::Width(width));
    }
    let targets = ((c / (width * width) + 1.0).ceil() as usize).max(2);
    Ok(PrecisionPlan {
        raters: k,
        planning_icc,
        level,
        targets,
        expected_width: (c / (targets as f64 - 1.0)).sqrt(),
    })
}

/// Expected interval width with `targets` targets (Bonett 2002).
pub fn width_for_targets(
    k: usize,
    planning_icc: f64,
    targets: usize,
    level: f64,
) -> Result<PrecisionPlan, PlannerError> {
    let c = check(k, planning_icc, level)?;
    if targets < 2 {
        return Err(PlannerError::Targets(targets));
    }
    Ok(PrecisionPlan {
        raters: k,
        planning_icc,
        level,
        targets,
        expected_width: (c / (targets as f64 - 1.0)).sqrt(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bonett_table_value() {
        // ρ = 0.7, k = 2, w = 0.2 at 95%: the formula gives 100.9…, so 101 targets.
        let plan = targets_for_width(2, 0.7, 0.2, 0.95).unwrap();
        let direct =
            8.0 * 1.959_963_984_540_054_f64.powi(2) * 0.09 * 1.7_f64.powi(2) / 2.0 / 0.04 + 1.0;
        assert_eq!(
            plan.targets,
            direct.ceil() as usize,
            "targets are the formula rounded up"
        );
        assert!(
            plan.expected_width <= 0.2,
            "rounding up can only narrow the interval"
        );
        let back = width_for_targets(2, 0.7, plan.targets, 0.95).unwrap();
        assert_eq!(
            back.expected_width, plan.expected_width,
            "the converse gives the same width"
        );
        assert!(
            targets_for_width(1, 0.7, 0.2, 0.95).is_err(),
            "one rater cannot give an ICC"
        );
    }
}
