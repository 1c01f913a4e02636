//! How many expert labels and judge-only answers the study still needs (the agreement panel's
//! label-budget planner): the study's own judge–expert pairs on one criterion are the pilot of a
//! prediction-powered power analysis (`concord_stats::power`, as `ppi-python`'s `ppi_power`):
//! for a target standard error of the mean, or the smallest one a budget buys, the numbers of
//! expert-labelled (and judged) answers n and judge-only answers N, beside the expert-only
//! design. A pilot pair is a response both the judge and some expert scored: the judge's score
//! and the experts' mean. When the pilot cannot give a design the answer carries the reason.

use crate::panel::agreement::AgreementData;
use concord_stats::power::{pilot_moments, ppi_power, PowerCosts, PowerGoal};
use serde::{Deserialize, Serialize};

/// What the planner is asked to reach.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum BudgetGoal {
    /// The cheapest design with at most this standard error.
    StandardError(f64),
    /// The most precise design within this budget.
    Budget(f64),
}

/// The planner's question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LabelBudgetQuestion {
    /// Criterion key.
    pub criterion: String,
    /// The judge as the report names it (model id or name).
    pub judge: String,
    /// The cost of one expert label and of one judge call.
    pub cost_expert: f64,
    pub cost_judge: f64,
    pub goal: BudgetGoal,
}

/// An expert-only design.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExpertOnlyDesign {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub n_expert: u64,
    pub se: f64,
    pub cost: f64,
}

/// The prediction-powered design.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BudgetDesign {
    /// Answers labelled by experts (and judged).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub n_expert: u64,
    /// Answers judged only.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub n_judge: u64,
    pub se: f64,
    pub cost: f64,
    /// The pilot's PPI correlation.
    pub rho: f64,
    pub expert_only: ExpertOnlyDesign,
}

/// The planner's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LabelBudget {
    pub question: LabelBudgetQuestion,
    /// Pilot pairs the study holds.
    pub n_pilot: usize,
    pub design: Option<BudgetDesign>,
    /// Why there is no design.
    pub not_computed: Option<String>,
}

/// The pilot of `question` in `data`: (experts' mean, judge's score) per response both scored.
fn pilot(
    data: &AgreementData,
    question: &LabelBudgetQuestion,
) -> Result<(Vec<f64>, Vec<f64>), String> {
    let c = data
        .criteria
        .iter()
        .position(|c| c.key == question.criterion)
        .ok_or_else(|| format!("the rubric has no criterion {}", question.criterion))?;
    let j = data
        .judges()
        .into_iter()
        .find(|&j| {
            let r = &data.raters[j];
            r.model_id.as_deref().unwrap_or(&r.name) == question.judge || r.name == question.judge
        })
        .ok_or_else(|| format!("no judge {} rated this rubric", question.judge))?;
    let experts = data.experts();
    let (mut expert, mut judge) = (Vec::new(), Vec::new());
    for (i, &v) in data.series(j, c).iter().enumerate() {
        if v.is_nan() {
            continue;
        }
        let values: Vec<f64> = experts
            .iter()
            .map(|&e| data.series(e, c)[i])
            .filter(|x| !x.is_nan())
            .collect();
        if !values.is_empty() {
            expert.push(values.iter().sum::<f64>() / values.len() as f64);
            judge.push(v);
        }
    }
    Ok((expert, judge))
}

/// The label budget `question` asks for, from the judge–expert pairs of `data`.
pub fn label_budget(data: &AgreementData, question: &LabelBudgetQuestion) -> LabelBudget {
    let mut answer = LabelBudget {
        question: question.clone(),
        n_pilot: 0,
        design: None,
        not_computed: None,
    };
    let result = pilot(data, question).and_then(|(expert, judge)| {
        answer.n_pilot = expert.len();
        let (sigma2, rho) = pilot_moments(&expert, &judge).map_err(|e| e.to_string())?;
        let costs = PowerCosts {
            expert: question.cost_expert,
            judge: question.cost_judge,
            item: 0.0,
        };
        let goal = match question.goal {
            BudgetGoal::StandardError(s) => PowerGoal::StandardError(s),
            BudgetGoal::Budget(b) => PowerGoal::Budget(b),
        };
        ppi_power(sigma2, rho, &costs, goal).map_err(|e| e.to_string())
    });
    match result {
        Ok(d) => {
            answer.design = Some(BudgetDesign {
                n_expert: d.n_expert,
                n_judge: d.n_judge,
                se: d.se,
                cost: d.cost,
                rho: d.rho,
                expert_only: ExpertOnlyDesign {
                    n_expert: d.classical.n_expert,
                    se: d.classical.se,
                    cost: d.classical.cost,
                },
            })
        }
        Err(why) => answer.not_computed = Some(why),
    }
    answer
}
