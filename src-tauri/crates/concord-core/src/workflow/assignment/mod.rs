//! Study setup and assignment, the lead's side of a study: experts and custom rubrics are added,
//! then [`assign`] draws the sample (stratified by category, every source of a drawn conversation
//! kept) and gives every sampled response to exactly k experts with balanced loads, optional
//! calibration items that everyone rates and optional blind test–retest items, each expert's
//! items in an order shuffled for that expert. The plan is a pure function of the study's content
//! and the options (seed included), which are stored in the study so the same assignment can be
//! recomputed and checked. [`progress`] reads the per-expert table: assigned, completed (every
//! criterion of the item's rubric rated) and remaining.

mod plan;
pub mod sample;

pub(crate) use plan::stream as seeded;
pub use plan::{check, plan, Plan, PlanConversation, PlannedItem};
pub use sample::StratumCount;

pub use crate::store::{AssignedItem, Purpose};

use crate::base::text::quoted;
use crate::rubric::{Rubric, RubricError};
use crate::store::{NewAssignment, NewRater, RaterKind, Store, StoreError, StudyTx};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// `study_meta` key under which the options of the last assignment are kept (JSON).
pub const ASSIGNMENT_META: &str = "assignment";

fn yes() -> bool {
    true
}

/// What the assignment wizard asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AssignmentOptions {
    /// Experts per regular response (the fixed overlap).
    pub k: usize,
    /// Seed of every random choice (sample, calibration items, orders, retests).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seed: u64,
    /// Conversations to draw; `None` takes every conversation.
    #[serde(default)]
    pub sample: Option<usize>,
    /// Only conversations rated with this rubric; `None` takes every rubric.
    #[serde(default)]
    pub rubric: Option<String>,
    /// Stratify the draw by conversation category.
    #[serde(default = "yes")]
    pub stratify: bool,
    /// Responses every expert rates (drawn from the sample).
    #[serde(default)]
    pub calibration: usize,
    /// Test–retest items per expert.
    #[serde(default)]
    pub retest: usize,
    /// Items shown at least between an item and its retest.
    #[serde(default)]
    pub retest_gap: usize,
    /// Experts by name; empty means every expert of the study.
    #[serde(default)]
    pub experts: Vec<String>,
    /// Replace an existing assignment (refused once experts have rated assigned responses).
    #[serde(default)]
    pub replace: bool,
    /// Assign answers the study holds no text for (a MentalAlign-only study), for this reason
    /// (recorded with the assignment); without it such answers are refused.
    #[serde(default)]
    pub without_text: Option<String>,
}

impl AssignmentOptions {
    /// k experts per response with this seed, everything else at its default.
    pub fn new(k: usize, seed: u64) -> Self {
        AssignmentOptions {
            k,
            seed,
            sample: None,
            rubric: None,
            stratify: true,
            calibration: 0,
            retest: 0,
            retest_gap: 0,
            experts: Vec::new(),
            replace: false,
            without_text: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AssignmentError {
    #[error("the study has no experts to assign; add them first (concord expert add NAME)")]
    NoExperts,
    #[error("k must be at least 1 expert per response")]
    ZeroOverlap,
    #[error("k = {k} experts per response, but only {experts} expert(s) take part; add experts or lower k")]
    TooFewExperts { k: usize, experts: usize },
    #[error("the sample size must be at least 1 conversation")]
    EmptySample,
    #[error("no conversations (with responses) to assign for this selection")]
    NothingToAssign,
    #[error("{calibration} calibration items requested, but the sample holds only {responses} responses")]
    TooManyCalibration {
        calibration: usize,
        responses: usize,
    },
    #[error("{retest} retest items with a gap of {gap} do not fit: expert #{} has {items} items, of which only {eligible} are early enough to be repeated {gap} items later; lower the retest count or the gap", expert_index + 1)]
    RetestTooMany {
        retest: usize,
        gap: usize,
        expert_index: usize,
        items: usize,
        eligible: usize,
    },
    #[error("no rater named {q0} in this study", q0 = quoted(&.0))]
    UnknownExpert(String),
    #[error("{q0} is an LLM judge, not an expert; judges are not assigned", q0 = quoted(&.0))]
    NotAnExpert(String),
    #[error("rubric {q0} is not in this study", q0 = quoted(&.0))]
    UnknownRubric(String),
    #[error("the study already has an assignment; replace it explicitly (--replace)")]
    AlreadyAssigned,
    #[error("the assignment cannot be replaced: experts already entered {ratings} rating(s) on assigned responses")]
    HasRatings { ratings: i64 },
    #[error("an expert needs a name")]
    EmptyName,
    #[error("{without} of the {responses} answers this assignment draws have no text in the study (the MentalAlign release holds ratings, not answers): experts would rate blank items. Import the MentalBench-100k file to fill them (concord import mentalbench FILE), or assign anyway with a reason (--without-text REASON), which is recorded")]
    AnswersWithoutText { without: usize, responses: usize },
    #[error(transparent)]
    Rubric(#[from] RubricError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One expert's load in a new assignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExpertLoad {
    pub name: String,
    pub regular: usize,
    pub calibration: usize,
    pub retest: usize,
    pub total: usize,
}

/// What [`assign`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AssignmentSummary {
    pub options: AssignmentOptions,
    pub conversations: usize,
    pub responses: usize,
    pub calibration_items: usize,
    pub strata: Vec<StratumCount>,
    pub experts: Vec<ExpertLoad>,
    /// Rows written to the assignment table.
    pub assignments: usize,
    /// Drawn answers the study holds no text for (refused unless the options give a reason).
    pub without_text: usize,
}

/// One expert's row of the progress table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExpertProgress {
    pub name: String,
    pub assigned: usize,
    /// Items whose every criterion has a value.
    pub completed: usize,
    pub remaining: usize,
    pub regular: usize,
    pub calibration: usize,
    pub retest: usize,
    /// Ratings with a value on assigned items.
    pub ratings: usize,
}

/// The assignment screen: the stored options and every expert's progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AssignmentTable {
    pub options: Option<AssignmentOptions>,
    pub sampled_conversations: usize,
    pub experts: Vec<ExpertProgress>,
}

/// An expert added to the study.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExpertAdded {
    pub id: i64,
    pub name: String,
    /// False when an expert of that name was already there.
    pub created: bool,
}

/// A rubric file added to the study.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RubricAdded {
    pub id: i64,
    pub key: String,
    /// False when the identical rubric was already there.
    pub created: bool,
}

/// Add an expert (a human rater) by name; an existing expert of that name is returned as is.
/// `queue_seed` seeds the expert's own queue order (passed in for reproducibility).
pub fn add_expert(
    store: &mut Store,
    name: &str,
    queue_seed: u64,
) -> Result<ExpertAdded, AssignmentError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(AssignmentError::EmptyName);
    }
    store.write(|tx| {
        let existed = tx.rater_id(name)?;
        let id = tx
            .upsert_rater(&NewRater {
                kind: RaterKind::Expert,
                name,
                model_id: None,
                family: None,
                queue_seed: queue_seed as i64,
            })
            .map_err(|e| match e {
                StoreError::Invalid(_) => AssignmentError::NotAnExpert(name.to_string()),
                other => other.into(),
            })?;
        if existed.is_none() {
            tx.audit("lead", "expert_added", &serde_json::json!({ "name": name }))?;
        }
        Ok(ExpertAdded {
            id,
            name: name.to_string(),
            created: existed.is_none(),
        })
    })
}

/// Add a custom rubric file (TOML or JSON, chosen by `file_name`'s extension) to the study unless
/// the identical rubric is already there; a different rubric under the same id is refused.
pub fn add_rubric_file(
    store: &mut Store,
    text: &str,
    file_name: &str,
) -> Result<RubricAdded, AssignmentError> {
    let rubric = Rubric::parse_named(text, file_name)?;
    store.write(|tx| {
        let existed = tx.read().rubric_id(&rubric.id)?;
        let id = tx.add_rubric(&rubric)?;
        if existed.is_none() {
            tx.audit(
                "lead",
                "rubric_added",
                &serde_json::json!({ "rubric": rubric.id, "file": file_name }),
            )?;
        }
        Ok(RubricAdded {
            id,
            key: rubric.id.clone(),
            created: existed.is_none(),
        })
    })
}

/// The experts taking part, sorted by name: the named ones, or every expert of the study.
fn experts(store: &Store, names: &[String]) -> Result<Vec<(i64, String)>, AssignmentError> {
    let all: Vec<(i64, String, String)> = store
        .rater_records()?
        .into_iter()
        .map(|r| (r.id, r.name, r.kind))
        .collect();
    if names.is_empty() {
        return Ok(all
            .into_iter()
            .filter(|(_, _, k)| k == "expert")
            .map(|(id, n, _)| (id, n))
            .collect());
    }
    let mut out = Vec::new();
    for wanted in names {
        let (id, name, kind) = all
            .iter()
            .find(|(_, n, _)| n == wanted.trim())
            .ok_or_else(|| AssignmentError::UnknownExpert(wanted.clone()))?;
        if kind != "expert" {
            return Err(AssignmentError::NotAnExpert(name.clone()));
        }
        if !out.iter().any(|(i, _)| i == id) {
            out.push((*id, name.clone()));
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// The conversations (with responses) the options select.
fn candidates(
    store: &Store,
    rubric: Option<&str>,
) -> Result<Vec<PlanConversation>, AssignmentError> {
    if let Some(key) = rubric {
        if store.read().rubric_id(key)?.is_none() {
            return Err(AssignmentError::UnknownRubric(key.to_string()));
        }
    }
    let mut out: Vec<PlanConversation> = store
        .conversations_of_rubric(rubric)?
        .into_iter()
        .map(|c| PlanConversation {
            id: c.id,
            external_id: c.external_id,
            category: c.category.filter(|c| !c.trim().is_empty()),
            responses: Vec::new(),
        })
        .collect();
    let index: HashMap<i64, usize> = out.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
    for crate::store::ResponseConversation {
        response_id: id,
        conversation_id: conv,
        ..
    } in store.response_conversations()?
    {
        if let Some(&i) = index.get(&conv) {
            out[i].responses.push(id);
        }
    }
    out.retain(|c| !c.responses.is_empty());
    Ok(out)
}

/// Compute the assignment the options describe without writing anything (the wizard's preview).
pub fn preview(
    store: &Store,
    options: &AssignmentOptions,
) -> Result<AssignmentSummary, AssignmentError> {
    let experts = experts(store, &options.experts)?;
    let convs = candidates(store, options.rubric.as_deref())?;
    let plan = plan(&convs, experts.len(), options)?;
    let textless = store.responses_without_text()?;
    Ok(summarise(&convs, &experts, &plan, options, &textless))
}

fn summarise(
    convs: &[PlanConversation],
    experts: &[(i64, String)],
    plan: &Plan,
    options: &AssignmentOptions,
    textless: &std::collections::HashSet<i64>,
) -> AssignmentSummary {
    let sample_candidates: Vec<sample::SampleCandidate> = convs
        .iter()
        .map(|c| sample::SampleCandidate {
            id: c.id,
            stratum: if options.stratify {
                c.category.clone()
            } else {
                None
            },
        })
        .collect();
    let mut loads: Vec<ExpertLoad> = experts
        .iter()
        .map(|(_, name)| ExpertLoad {
            name: name.clone(),
            regular: 0,
            calibration: 0,
            retest: 0,
            total: 0,
        })
        .collect();
    for item in &plan.items {
        let l = &mut loads[item.expert];
        l.total += 1;
        match item.purpose {
            Purpose::Regular => l.regular += 1,
            Purpose::Calibration => l.calibration += 1,
            Purpose::Retest => l.retest += 1,
        }
    }
    AssignmentSummary {
        options: options.clone(),
        conversations: plan.sample.len(),
        responses: plan.responses.len(),
        calibration_items: plan.calibration.len(),
        strata: sample::strata_counts(&sample_candidates, &plan.sample),
        experts: loads,
        assignments: plan.items.len(),
        without_text: plan
            .responses
            .iter()
            .filter(|r| textless.contains(r))
            .count(),
    }
}

/// Draw the sample and write the assignment, in one transaction.
pub fn assign(
    store: &mut Store,
    options: &AssignmentOptions,
) -> Result<AssignmentSummary, AssignmentError> {
    let experts = experts(store, &options.experts)?;
    let convs = candidates(store, options.rubric.as_deref())?;
    let plan = plan(&convs, experts.len(), options)?;
    let textless = store.responses_without_text()?;
    let summary = summarise(&convs, &experts, &plan, options, &textless);
    let reason = options.without_text.as_deref().map(str::trim);
    if summary.without_text > 0 && reason.is_none_or(str::is_empty) {
        return Err(AssignmentError::AnswersWithoutText {
            without: summary.without_text,
            responses: summary.responses,
        });
    }
    store.write(|tx| {
        write_plan(tx, &experts, &plan, options)?;
        tx.audit(
            "lead",
            "assignment",
            &serde_json::to_value(&summary).unwrap_or_default(),
        )?;
        Ok(summary)
    })
}

fn write_plan(
    tx: &mut StudyTx<'_>,
    experts: &[(i64, String)],
    plan: &Plan,
    options: &AssignmentOptions,
) -> Result<(), AssignmentError> {
    if tx.read().expert_assignment_count()? > 0 {
        if !options.replace {
            return Err(AssignmentError::AlreadyAssigned);
        }
        let ratings = tx.expert_ratings_on_assignments()?;
        if ratings > 0 {
            return Err(AssignmentError::HasRatings { ratings });
        }
        tx.clear_expert_assignments()?;
    }
    tx.replace_sample(&plan.sample)?;
    let rows: Vec<NewAssignment> = plan
        .items
        .iter()
        .map(|item| {
            NewAssignment::fresh(
                experts[item.expert].0,
                item.response,
                item.position as i64,
                item.purpose,
            )
        })
        .collect();
    tx.add_assignments(&rows)?;
    let mut stored = options.clone();
    stored.replace = false;
    tx.set_meta(
        ASSIGNMENT_META,
        &serde_json::to_string(&stored).unwrap_or_default(),
    )?;
    Ok(())
}

/// The reason the study's assignment gave for assigning answers without text, if it did: packages
/// and rating sheets then go out with those items (the choice is recorded with the assignment).
pub fn without_text_reason(store: &Store) -> Result<Option<String>, StoreError> {
    let stored: Option<AssignmentOptions> = store
        .meta(ASSIGNMENT_META)?
        .and_then(|v| serde_json::from_str(&v).ok());
    Ok(stored
        .and_then(|o| o.without_text)
        .filter(|r| !r.trim().is_empty()))
}

/// The options of the study's last assignment, if any.
pub fn stored_options(store: &Store) -> Result<Option<AssignmentOptions>, AssignmentError> {
    Ok(store
        .meta(ASSIGNMENT_META)?
        .and_then(|s| serde_json::from_str(&s).ok()))
}

/// The progress table: for every expert, items assigned, completed (every criterion of the
/// item's rubric has a value; for a retest item, a retest value) and remaining.
pub fn progress(store: &Store) -> Result<AssignmentTable, AssignmentError> {
    let rows = store.expert_item_progress()?;
    let mut table: Vec<ExpertProgress> = experts(store, &[])?
        .into_iter()
        .map(|(_, name)| ExpertProgress {
            name,
            assigned: 0,
            completed: 0,
            remaining: 0,
            regular: 0,
            calibration: 0,
            retest: 0,
            ratings: 0,
        })
        .collect();
    for row in rows {
        let Some(p) = table.iter_mut().find(|p| p.name == row.expert) else {
            continue;
        };
        p.assigned += 1;
        p.ratings += row.rated as usize;
        match row.purpose {
            Purpose::Calibration => p.calibration += 1,
            Purpose::Retest => p.retest += 1,
            Purpose::Regular => p.regular += 1,
        }
        if row.needed > 0 && row.rated >= row.needed {
            p.completed += 1;
        } else {
            p.remaining += 1;
        }
    }
    let sampled = store.sampled_conversations()?;
    Ok(AssignmentTable {
        options: stored_options(store)?,
        sampled_conversations: sampled as usize,
        experts: table,
    })
}

/// An expert's assigned items in shown order.
pub fn expert_items(store: &Store, expert: &str) -> Result<Vec<AssignedItem>, AssignmentError> {
    Ok(store.expert_items(expert)?)
}
