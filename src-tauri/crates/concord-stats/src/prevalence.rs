//! The share of answers that truly meet a binary criterion, corrected for the judge's errors —
//! the method of Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report LLM-as-a-Judge
//! Evaluations" (arXiv 2511.21140), as their reference package computes it
//! (`point_estimator`, `confidence_interval`, `allocate_calibration_sample`).
//!
//! A judge labels all n items; its raw positive rate p is biased by its sensitivity q₁ and
//! specificity q₀, which are estimated on the expert-rated (calibration) subset: m₁ items the
//! experts call positive, m₀ they call negative.
//!
//! - **Point estimate** (Rogan & Gladen 1978): θ̂ = (p + q₀ − 1) / (q₀ + q₁ − 1), clipped to [0, 1].
//! - **Interval.** The rates are first shrunk as in an Agresti–Coull interval:
//!   p̃ = (n p + z²/2) / (n + z²), q̃₀ = (m₀ q₀ + 1) / (m₀ + 2), q̃₁ = (m₁ q₁ + 1) / (m₁ + 2), with
//!   ñ = n + z², m̃ᵢ = mᵢ + 2. With θ̃ the Rogan–Gladen value of the shrunk rates, the centre is
//!   moved by Δ = 2z² (θ̃ q̃₁(1 − q̃₁)/m̃₁ − (1 − θ̃) q̃₀(1 − q̃₀)/m̃₀) and the half-width is z times
//!   s = √(p̃(1 − p̃)/ñ + (1 − θ̃)² q̃₀(1 − q̃₀)/m̃₀ + θ̃² q̃₁(1 − q̃₁)/m̃₁) / (q̃₀ + q̃₁ − 1), so the
//!   interval carries the sampling error of the raw rate and of both calibration rates. Both ends
//!   are clipped to [0, 1].
//! - **Allocation.** Of a calibration budget of m expert labels, the share for truly positive
//!   items is m₁ = m / (1 + (1/p − 1)√κ), rounded half to even and kept within [m_pilot, m − m_pilot],
//!   where κ = (m_pilot(1 − q₀) + 1) / (m_pilot(1 − q₁) + 1) smooths the pilot's error rates
//!   (κ = (1 − q₀)/(1 − q₁) without a pilot, q₁ capped at 1 − 10⁻⁶); when p < 10⁻⁶ every label
//!   beyond the pilot goes to positives. m₀ = m − m₁.
//!
//! Where the correction has no meaning — no items, no expert positives or negatives, or a judge
//! no better than chance (q₀ + q₁ ≤ 1, also after shrinking) — a [`PrevalenceError`] names the
//! reason; no result is ever NaN or outside [0, 1].

use crate::special::z_critical;
use serde::Serialize;
use thiserror::Error;

/// The judge's labels against the experts' on the calibration subset, and on all items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PrevalenceCounts {
    /// Items the judge labelled (every item).
    pub n_items: u64,
    /// Items the judge labelled positive.
    pub judged_positive: u64,
    /// Expert positive, judge positive.
    pub true_positive: u64,
    /// Expert positive, judge negative.
    pub false_negative: u64,
    /// Expert negative, judge negative.
    pub true_negative: u64,
    /// Expert negative, judge positive.
    pub false_positive: u64,
}

impl PrevalenceCounts {
    /// Items the experts rated (m₀ + m₁).
    pub fn n_calibration(&self) -> u64 {
        self.expert_positive() + self.expert_negative()
    }

    /// Items the experts call positive (m₁).
    pub fn expert_positive(&self) -> u64 {
        self.true_positive + self.false_negative
    }

    /// Items the experts call negative (m₀).
    pub fn expert_negative(&self) -> u64 {
        self.true_negative + self.false_positive
    }
}

/// A corrected prevalence with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Prevalence {
    /// Items the judge labelled.
    pub n_items: u64,
    /// Items the experts rated.
    pub n_calibration: u64,
    /// The judge's positive rate over every item.
    pub raw_rate: f64,
    /// P(judge positive | expert positive) on the calibration subset.
    pub sensitivity: f64,
    /// P(judge negative | expert negative) on the calibration subset.
    pub specificity: f64,
    /// The Rogan–Gladen estimate, clipped to [0, 1].
    pub corrected: f64,
    /// The interval, both ends in [0, 1].
    pub ci: [f64; 2],
    /// Its confidence level.
    pub level: f64,
}

/// How a calibration budget should be split between truly positive and truly negative items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Allocation {
    /// Expert labels for items the experts would call positive (m₁).
    pub positive: u64,
    /// Expert labels for items the experts would call negative (m₀).
    pub negative: u64,
}

/// Why a corrected prevalence or an allocation cannot be given.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PrevalenceError {
    /// No item was labelled by the judge.
    #[error("no items: the judge's rate needs at least one labelled item")]
    NoItems,
    /// A count does not fit (more of a kind than items).
    #[error("inconsistent counts: {0}")]
    Inconsistent(&'static str),
    /// The experts rated no item the judge labelled.
    #[error("no expert-rated items: sensitivity and specificity cannot be estimated")]
    NoCalibration,
    /// No calibration item is positive by the experts.
    #[error("none of the {0} expert-rated items is positive: the judge's sensitivity cannot be estimated")]
    NoExpertPositive(u64),
    /// No calibration item is negative by the experts.
    #[error("none of the {0} expert-rated items is negative: the judge's specificity cannot be estimated")]
    NoExpertNegative(u64),
    /// The judge is no better than chance on the calibration subset.
    #[error("sensitivity {sensitivity:.4} + specificity {specificity:.4} ≤ 1: the judge is no better than chance, so its errors cannot be corrected")]
    NotInformative {
        /// Estimated sensitivity.
        sensitivity: f64,
        /// Estimated specificity.
        specificity: f64,
    },
    /// After the interval's shrinkage toward ½, sensitivity + specificity ≤ 1.
    #[error("with so few expert labels ({positive} positive, {negative} negative) the shrunk sensitivity + specificity is {sum:.4} ≤ 1: the interval is undefined; rate more items")]
    ShrunkNotInformative {
        /// Expert positives.
        positive: u64,
        /// Expert negatives.
        negative: u64,
        /// q̃₀ + q̃₁.
        sum: f64,
    },
    /// The confidence level is not strictly between 0 and 1.
    #[error("the confidence level must be strictly between 0 and 1 (got {0})")]
    BadLevel(f64),
    /// The calibration budget is zero.
    #[error("the calibration budget must be at least one expert label")]
    NoBudget,
    /// The calibration budget is smaller than the labels already collected.
    #[error("a calibration budget of {budget} is smaller than the {pilot} expert labels already collected (they count inside the budget)")]
    BudgetBelowPilot {
        /// The budget asked for.
        budget: u64,
        /// Labels already collected.
        pilot: u64,
    },
    /// A rate is outside [0, 1] or not a number.
    #[error("{name} must be a number in [0, 1] (got {value})")]
    BadRate {
        /// Which rate.
        name: &'static str,
        /// Its value.
        value: f64,
    },
}

/// The Rogan–Gladen estimate (p + q₀ − 1)/(q₀ + q₁ − 1) clipped to [0, 1]; `None` when
/// q₀ + q₁ ≤ 1.
pub fn rogan_gladen(raw_rate: f64, specificity: f64, sensitivity: f64) -> Option<f64> {
    let denominator = specificity + sensitivity - 1.0;
    (denominator > 0.0).then(|| ((raw_rate + specificity - 1.0) / denominator).clamp(0.0, 1.0))
}

fn check_counts(c: &PrevalenceCounts) -> Result<(), PrevalenceError> {
    if c.n_items == 0 {
        return Err(PrevalenceError::NoItems);
    }
    if c.judged_positive > c.n_items {
        return Err(PrevalenceError::Inconsistent(
            "more judged positives than items",
        ));
    }
    if c.n_calibration() > c.n_items {
        return Err(PrevalenceError::Inconsistent(
            "more expert-rated items than items",
        ));
    }
    if c.n_calibration() == 0 {
        return Err(PrevalenceError::NoCalibration);
    }
    if c.expert_positive() == 0 {
        return Err(PrevalenceError::NoExpertPositive(c.n_calibration()));
    }
    if c.expert_negative() == 0 {
        return Err(PrevalenceError::NoExpertNegative(c.n_calibration()));
    }
    Ok(())
}

/// The corrected prevalence and its `level` interval from the judge's and the experts' counts.
pub fn corrected_prevalence(
    counts: &PrevalenceCounts,
    level: f64,
) -> Result<Prevalence, PrevalenceError> {
    if !(level > 0.0 && level < 1.0) {
        return Err(PrevalenceError::BadLevel(level));
    }
    check_counts(counts)?;
    let n = counts.n_items as f64;
    let (m1, m0) = (
        counts.expert_positive() as f64,
        counts.expert_negative() as f64,
    );
    let p = counts.judged_positive as f64 / n;
    let q1 = counts.true_positive as f64 / m1;
    let q0 = counts.true_negative as f64 / m0;
    let corrected = rogan_gladen(p, q0, q1).ok_or(PrevalenceError::NotInformative {
        sensitivity: q1,
        specificity: q0,
    })?;
    let z = z_critical(1.0 - level);
    let z2 = z * z;
    let (pt, nt) = ((n * p + z2 / 2.0) / (n + z2), n + z2);
    let (q0t, m0t) = ((m0 * q0 + 1.0) / (m0 + 2.0), m0 + 2.0);
    let (q1t, m1t) = ((m1 * q1 + 1.0) / (m1 + 2.0), m1 + 2.0);
    let denominator = q0t + q1t - 1.0;
    if denominator <= 0.0 {
        return Err(PrevalenceError::ShrunkNotInformative {
            positive: counts.expert_positive(),
            negative: counts.expert_negative(),
            sum: q0t + q1t,
        });
    }
    let theta = (pt + q0t - 1.0) / denominator;
    let (v0, v1) = (q0t * (1.0 - q0t) / m0t, q1t * (1.0 - q1t) / m1t);
    let shift = 2.0 * z2 * (theta * v1 - (1.0 - theta) * v0);
    let se = (pt * (1.0 - pt) / nt + (1.0 - theta).powi(2) * v0 + theta * theta * v1).sqrt()
        / denominator;
    let centre = theta + shift;
    Ok(Prevalence {
        n_items: counts.n_items,
        n_calibration: counts.n_calibration(),
        raw_rate: p,
        sensitivity: q1,
        specificity: q0,
        corrected,
        ci: [
            (centre - z * se).clamp(0.0, 1.0),
            (centre + z * se).clamp(0.0, 1.0),
        ],
        level,
    })
}

fn rate(name: &'static str, value: f64) -> Result<f64, PrevalenceError> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(PrevalenceError::BadRate { name, value })
    }
}

/// How `budget` expert labels should be split between truly positive and truly negative items,
/// given the judge's raw rate and the pilot's specificity and sensitivity estimated on
/// `pilot` expert labels already collected (which count inside the budget; 0 = the rates are
/// beliefs, not estimates).
pub fn allocate_calibration(
    budget: u64,
    raw_rate: f64,
    specificity: f64,
    sensitivity: f64,
    pilot: u64,
) -> Result<Allocation, PrevalenceError> {
    let p = rate("the raw rate", raw_rate)?;
    let q0 = rate("the specificity", specificity)?;
    let mut q1 = rate("the sensitivity", sensitivity)?;
    if budget == 0 {
        return Err(PrevalenceError::NoBudget);
    }
    if budget < pilot {
        return Err(PrevalenceError::BudgetBelowPilot { budget, pilot });
    }
    const EPS: f64 = 1e-6;
    let (m, mp) = (budget as f64, pilot as f64);
    let positive = if p < EPS {
        budget - pilot
    } else {
        let kappa = if pilot == 0 {
            q1 = q1.min(1.0 - EPS);
            (1.0 - q0) / (1.0 - q1)
        } else {
            (mp * (1.0 - q0) + 1.0) / (mp * (1.0 - q1) + 1.0)
        };
        let ideal = m / (1.0 + (1.0 / p - 1.0) * kappa.sqrt());
        let rounded = (m - mp).min(ideal).round_ties_even();
        // `rounded` lies in [0, budget − pilot] here, so the conversion is exact.
        (rounded as u64).max(pilot)
    };
    Ok(Allocation {
        positive,
        negative: budget - positive,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(n: u64, pos: u64, tp: u64, fneg: u64, tn: u64, fp: u64) -> PrevalenceCounts {
        PrevalenceCounts {
            n_items: n,
            judged_positive: pos,
            true_positive: tp,
            false_negative: fneg,
            true_negative: tn,
            false_positive: fp,
        }
    }

    #[test]
    fn a_perfect_judge_needs_no_correction() {
        let r = corrected_prevalence(&counts(100, 30, 10, 0, 10, 0), 0.95).unwrap();
        assert!(
            (r.corrected - 0.3).abs() < 1e-12,
            "sensitivity = specificity = 1 leaves the raw rate as it is, got {}",
            r.corrected
        );
        assert!(
            r.ci[0] <= 0.3 && 0.3 <= r.ci[1],
            "the interval covers the estimate: {:?}",
            r.ci
        );
    }

    #[test]
    fn a_chance_judge_is_refused_with_its_rates() {
        let e = corrected_prevalence(&counts(100, 50, 5, 5, 5, 5), 0.95).unwrap_err();
        assert!(
            matches!(e, PrevalenceError::NotInformative { .. }),
            "sensitivity 0.5 + specificity 0.5 = 1 cannot be inverted, got {e:?}"
        );
    }

    #[test]
    fn missing_expert_classes_are_named() {
        assert_eq!(
            corrected_prevalence(&counts(10, 3, 0, 0, 4, 1), 0.95),
            Err(PrevalenceError::NoExpertPositive(5)),
            "no expert positive means no sensitivity"
        );
        assert_eq!(
            corrected_prevalence(&counts(10, 3, 4, 1, 0, 0), 0.95),
            Err(PrevalenceError::NoExpertNegative(5)),
            "no expert negative means no specificity"
        );
        assert_eq!(
            corrected_prevalence(&counts(0, 0, 0, 0, 0, 0), 0.95),
            Err(PrevalenceError::NoItems),
            "an empty file has no rate"
        );
    }

    #[test]
    fn allocation_keeps_the_pilot_and_sums_to_the_budget() {
        let a = allocate_calibration(200, 0.4, 0.7, 0.9, 10).unwrap();
        assert_eq!(
            a.positive + a.negative,
            200,
            "the split uses the whole budget"
        );
        assert!(
            a.positive >= 10 && a.negative >= 10,
            "each side keeps at least the pilot: {a:?}"
        );
        assert_eq!(
            allocate_calibration(5, 0.4, 0.7, 0.9, 10),
            Err(PrevalenceError::BudgetBelowPilot {
                budget: 5,
                pilot: 10
            }),
            "the labels already collected count inside the budget"
        );
    }
}
