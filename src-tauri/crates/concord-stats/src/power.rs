//! How many expert labels and judge-only answers a prediction-powered mean needs — the power
//! analysis of Broska, Howes & van Loon (2024, "The Mixed Subjects Design") as the `ppi-python`
//! package (0.2.3) computes it in `ppi_power` and `ppi_mean_power`.
//!
//! # Definitions
//! From a pilot of n pairs (expert rating Y, judge score Ŷ), σ² is the variance of Y dividing by
//! n, and the PPI correlation ρ is the Pearson correlation of Y and Ŷ, capped at 1 − 1/n. An
//! expert label costs c_Y, a judge score c_Ŷ (an unlabelled item c_X, 0 for a mean), γ = (c_Ŷ +
//! c_X)/c_Y. A design of n labelled items (expert and judge) and N judge-only items has the
//! standard error of a classical mean over n₀ = n(n + N)/(n + (1 − ρ²)N) expert labels, its
//! *effective* sample size, so its standard error is σ/√n₀.
//!
//! - The cheapest design matching n₀ classical labels has n = n₀(1 − ρ² + √(γρ²(1 − ρ²))) and
//!   N = n(n₀ − n)/(n − (1 − ρ²)n₀), both rounded half to even; it costs c_Y per classical label
//!   times 1 − ρ² + γρ² + 2√(γρ²(1 − ρ²)).
//! - For a target standard error s, n₀ = σ²/s²; for a budget B, n₀ = B over that cost per
//!   classical label.
//! - When labels alone are cheaper (c_Y + c_X below that cost) or N comes out negative, the design
//!   is expert-only: n = round(n₀) for a target, round(B/(c_Y + c_X)) for a budget, N = 0.
//!
//! The expert-only design beside it uses the same rounding. Reported standard errors are those of
//! the integer designs.

use serde::Serialize;
use thiserror::Error;

/// What each unit costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerCosts {
    /// One expert label (c_Y).
    pub expert: f64,
    /// One judge score (c_Ŷ).
    pub judge: f64,
    /// One unlabelled item itself (c_X; 0 when estimating a mean of existing answers).
    pub item: f64,
}

/// What the design must achieve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PowerGoal {
    /// The cheapest design with at most this standard error.
    StandardError(f64),
    /// The most precise design within this budget.
    Budget(f64),
}

/// An expert-only design.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClassicalDesign {
    /// Expert labels.
    pub n_expert: u64,
    /// Standard error of the expert-only mean.
    pub se: f64,
    /// Its cost.
    pub cost: f64,
}

/// A prediction-powered design with the expert-only design beside it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PpiDesign {
    /// Items labelled by experts (and scored by the judge), n.
    pub n_expert: u64,
    /// Items scored by the judge only, N.
    pub n_judge: u64,
    /// Standard error of the prediction-powered mean with this n and N.
    pub se: f64,
    /// Its cost.
    pub cost: f64,
    /// The PPI correlation used.
    pub rho: f64,
    /// The expert-only design for the same goal.
    pub classical: ClassicalDesign,
}

/// Why a power analysis cannot be done.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PowerError {
    /// Expert and judge lists differ in length.
    #[error("{experts} expert ratings but {judges} judge scores: the pilot needs pairs")]
    Unpaired {
        /// Expert ratings given.
        experts: usize,
        /// Judge scores given.
        judges: usize,
    },
    /// Fewer than two pilot pairs.
    #[error("the pilot has {0} pair(s): at least two are needed for a variance and a correlation")]
    TooFewPairs(usize),
    /// A pilot value is not a finite number.
    #[error("pilot pair {0} holds a value that is not a finite number")]
    NonFinite(usize),
    /// The experts gave one value to every pilot item.
    #[error("every expert rating in the pilot is the same: the variance is 0, so any design has standard error 0 and the correlation is undefined")]
    ConstantExpert,
    /// The judge gave one score to every pilot item.
    #[error(
        "every judge score in the pilot is the same: the correlation with the experts is undefined"
    )]
    ConstantJudge,
    /// The judge is the exact mirror image of the experts.
    #[error("the PPI correlation is −1 (the judge is the experts' mirror image); the reference requires it strictly between −1 and 1")]
    PerfectMirror,
    /// A cost is not positive (the unlabelled item cost may be 0).
    #[error("{0} must be a positive number")]
    BadCost(&'static str),
    /// The goal is not a positive number.
    #[error("the {0} must be a positive number")]
    BadGoal(&'static str),
    /// The design needs no expert label at all, or the budget buys none.
    #[error("the {which} design has no expert label ({why}); ask for a smaller standard error or a larger budget")]
    NoLabel {
        /// `prediction-powered` or `expert-only`.
        which: &'static str,
        /// What made it empty.
        why: &'static str,
    },
    /// The design's sizes are too large to count.
    #[error("the design's sizes are not finite: the goal is out of reach")]
    Unbounded,
}

/// σ² (dividing by n) and the capped PPI correlation ρ of a pilot.
pub fn pilot_moments(expert: &[f64], judge: &[f64]) -> Result<(f64, f64), PowerError> {
    if expert.len() != judge.len() {
        return Err(PowerError::Unpaired {
            experts: expert.len(),
            judges: judge.len(),
        });
    }
    let n = expert.len();
    if n < 2 {
        return Err(PowerError::TooFewPairs(n));
    }
    if let Some(i) = (0..n).find(|&i| !expert[i].is_finite() || !judge[i].is_finite()) {
        return Err(PowerError::NonFinite(i));
    }
    let nf = n as f64;
    let (my, mh) = (
        expert.iter().sum::<f64>() / nf,
        judge.iter().sum::<f64>() / nf,
    );
    let (mut syy, mut shh, mut syh) = (0.0, 0.0, 0.0);
    for (y, h) in expert.iter().zip(judge) {
        let (dy, dh) = (y - my, h - mh);
        syy += dy * dy;
        shh += dh * dh;
        syh += dy * dh;
    }
    if syy == 0.0 {
        return Err(PowerError::ConstantExpert);
    }
    if shh == 0.0 {
        return Err(PowerError::ConstantJudge);
    }
    let rho = ((syh / nf) / ((syy / nf) * (shh / nf)).sqrt()).min(1.0 - 1.0 / nf);
    if rho <= -1.0 {
        return Err(PowerError::PerfectMirror);
    }
    Ok((syy / nf, rho))
}

fn count(x: f64) -> Result<u64, PowerError> {
    if x.is_finite() && x < u64::MAX as f64 {
        Ok(x.round_ties_even().max(0.0) as u64)
    } else {
        Err(PowerError::Unbounded)
    }
}

/// What the cheapest prediction-powered design pays per classical label it stands for:
/// c_Y (1 − ρ² + γρ² + 2√(γρ²(1 − ρ²))).
pub fn cost_per_classical_label(rho: f64, c: &PowerCosts) -> f64 {
    let r2 = rho * rho;
    let gamma = (c.judge + c.item) / c.expert;
    c.expert * (1.0 - r2 + gamma * r2 + 2.0 * (gamma * r2 * (1.0 - r2)).sqrt())
}

/// The design sizes (n, N) and cost the reference chooses for ρ, costs and goal, without a cap on
/// n + N; `n0` is the classical sample size the goal stands for.
fn design_sizes(
    rho: f64,
    c: &PowerCosts,
    n0: f64,
    budget: Option<f64>,
) -> Result<(u64, u64, f64), PowerError> {
    let r2 = rho * rho;
    let gamma = (c.judge + c.item) / c.expert;
    let root = (gamma * r2 * (1.0 - r2)).sqrt();
    let ppi_cost = cost_per_classical_label(rho, c);
    let classical_cost = c.expert + c.item;
    let n_raw = n0 * (1.0 - r2 + root);
    let big_n_raw = if rho != 0.0 {
        n_raw * (n0 - n_raw) / (n_raw - (1.0 - r2) * n0)
    } else {
        0.0
    };
    // The reference rounds N as computed, so a negative N (labels alone are better) is seen
    // before it is clamped.
    let negative = !big_n_raw.is_nan() && big_n_raw.round_ties_even() < 0.0;
    if classical_cost < ppi_cost || negative {
        let n = count(budget.map_or(n0, |b| b / classical_cost))?;
        return Ok((n, 0, n as f64 * classical_cost));
    }
    let (n, big_n) = (count(n_raw)?, count(big_n_raw)?);
    let cost = n as f64 * c.expert + (n + big_n) as f64 * (c.judge + c.item);
    Ok((n, big_n, cost))
}

/// The standard error σ √((n + (1 − ρ²)N)/(n(n + N))) of a design of n labelled and N
/// judge-only items.
pub fn design_se(sigma2: f64, rho: f64, n: u64, big_n: u64) -> f64 {
    let (n, big_n) = (n as f64, big_n as f64);
    (sigma2 * (n + (1.0 - rho * rho) * big_n) / (n * (n + big_n))).sqrt()
}

/// The prediction-powered design (as `ppi_power`) for a pilot with variance `sigma2` and PPI
/// correlation `rho`, with the expert-only design beside it.
pub fn ppi_power(
    sigma2: f64,
    rho: f64,
    costs: &PowerCosts,
    goal: PowerGoal,
) -> Result<PpiDesign, PowerError> {
    for (name, value) in [
        ("the cost of an expert label", costs.expert),
        ("the cost of a judge score", costs.judge),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(PowerError::BadCost(name));
        }
    }
    if !(costs.item.is_finite() && costs.item >= 0.0) {
        return Err(PowerError::BadCost("the cost of an item"));
    }
    if !(rho > -1.0 && rho < 1.0) {
        return Err(PowerError::PerfectMirror);
    }
    let (n0, budget, what) = match goal {
        PowerGoal::StandardError(s) => (sigma2 / (s * s), None, (s, "standard error")),
        PowerGoal::Budget(b) => (
            b / cost_per_classical_label(rho, costs),
            Some(b),
            (b, "budget"),
        ),
    };
    if !(what.0.is_finite() && what.0 > 0.0) {
        return Err(PowerError::BadGoal(what.1));
    }
    let (n, big_n, cost) = design_sizes(rho, costs, n0, budget)?;
    let classical_cost = costs.expert + costs.item;
    let n_classical = count(budget.map_or(n0, |b| b / classical_cost))?;
    let why = if budget.is_some() {
        "the budget buys less than half a label"
    } else {
        "the standard error asked for is larger than the pilot's SD times √2"
    };
    if n == 0 {
        return Err(PowerError::NoLabel {
            which: "prediction-powered",
            why,
        });
    }
    if n_classical == 0 {
        return Err(PowerError::NoLabel {
            which: "expert-only",
            why,
        });
    }
    Ok(PpiDesign {
        n_expert: n,
        n_judge: big_n,
        se: design_se(sigma2, rho, n, big_n),
        cost,
        rho,
        classical: ClassicalDesign {
            n_expert: n_classical,
            se: (sigma2 / n_classical as f64).sqrt(),
            cost: n_classical as f64 * classical_cost,
        },
    })
}

/// The design for a mean (as `ppi_mean_power`): the pilot's expert ratings and judge scores,
/// the costs of an expert label and a judge score, and the goal.
pub fn ppi_mean_power(
    expert: &[f64],
    judge: &[f64],
    cost_expert: f64,
    cost_judge: f64,
    goal: PowerGoal,
) -> Result<PpiDesign, PowerError> {
    let (sigma2, rho) = pilot_moments(expert, judge)?;
    let costs = PowerCosts {
        expert: cost_expert,
        judge: cost_judge,
        item: 0.0,
    };
    ppi_power(sigma2, rho, &costs, goal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_useless_judge_gives_the_expert_only_design() {
        let expert = [1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0, 3.0];
        let judge = [3.0, 3.0, 4.0, 3.0, 3.0, 4.0, 3.0, 3.0];
        let d = ppi_mean_power(&expert, &judge, 1.0, 0.1, PowerGoal::StandardError(0.1)).unwrap();
        assert_eq!(
            d.n_judge, 0,
            "a judge with ρ ≈ 0 is not worth scoring extra answers"
        );
        assert_eq!(
            d.n_expert, d.classical.n_expert,
            "then the design is the expert-only one"
        );
    }

    #[test]
    fn a_good_cheap_judge_saves_expert_labels() {
        let expert: Vec<f64> = (0..40).map(|i| (i % 5) as f64).collect();
        let judge: Vec<f64> = expert
            .iter()
            .enumerate()
            .map(|(i, y)| y + if i % 7 == 0 { 1.0 } else { 0.0 })
            .collect();
        let d = ppi_mean_power(&expert, &judge, 10.0, 0.01, PowerGoal::Budget(1000.0)).unwrap();
        assert!(
            d.n_judge > 0 && d.se < d.classical.se,
            "with ρ near 1 and judge scores 1000× cheaper PPI beats labels alone: {d:?}"
        );
        assert!(
            d.cost <= 1000.0 * 1.01,
            "the design stays within the budget up to rounding: {}",
            d.cost
        );
    }

    #[test]
    fn degenerate_pilots_are_named() {
        assert_eq!(
            pilot_moments(&[2.0, 2.0, 2.0], &[1.0, 2.0, 3.0]),
            Err(PowerError::ConstantExpert),
            "constant expert ratings have no variance"
        );
        assert_eq!(
            pilot_moments(&[1.0, 2.0, 3.0], &[2.0, 2.0, 2.0]),
            Err(PowerError::ConstantJudge),
            "a constant judge has no correlation"
        );
        assert_eq!(
            pilot_moments(&[1.0], &[1.0]),
            Err(PowerError::TooFewPairs(1)),
            "one pair has no variance"
        );
    }
}
