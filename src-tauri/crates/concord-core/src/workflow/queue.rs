//! The expert's queue and rating screen, blinded by construction. A rater works through their
//! assigned responses in an order randomised per rater (the assignment positions, seeded); a rater
//! in a study nobody has assigned yet gets every response, shuffled with the rater's stored seed.
//! Items are addressed by their number in the rater's queue, never by response id, and every type
//! here carries only what the screen may show: the user's message, the answer, the rubric and this
//! rater's own values — no source, model, judge score or other rater's rating. Each value is
//! committed the moment it is entered — in its own transaction, or with the values of other
//! raters that arrived at the same moment in one shared transaction ([`rate_each_via`], a
//! savepoint each, so one refused value refuses only itself); revisions keep the earlier value in
//! the history; time on each item and the place in the queue are recorded.

use crate::base::error_code::ErrorCode;
use crate::base::text::quoted;
use crate::rubric::{Anchor, Group, LocalText, Scale, Scope};
use crate::store::{
    NewAssignment, Occasion, Purpose, QueueCounts, RatingInput, RatingOutcome, Store, StoreError,
    StoredRubric, StudyTx,
};
use crate::workflow::assignment::add_expert;
use crate::workflow::assignment::AssignmentError;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::collections::HashMap;

/// `study_meta` key that, when "true", stops new rater profiles being created on the rating screen.
pub const PROFILES_LOCKED_KEY: &str = "profiles_locked";

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error(
        "this study only allows its existing rater profiles; ask the project lead to add {q0}",
        q0 = quoted(&.0)
    )]
    ProfilesLocked(String),
    #[error("rater {0} is not an expert of this study")]
    NotAnExpert(i64),
    #[error("item {item} is outside this queue of {total} items")]
    NoSuchItem { item: i64, total: i64 },
    #[error("criterion {q0} is not part of this item's rubric", q0 = quoted(&.0))]
    NoSuchCriterion(String),
    #[error("{value} is not a level of {criterion} ({min}–{max})")]
    OffScale {
        criterion: String,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error("a flag needs a reason")]
    EmptyReason,
    #[error("a flag's reason is at most {max} bytes; this one has {bytes}: say it more briefly", max = crate::store::MAX_FLAG_REASON_BYTES)]
    FlagTooLong { bytes: usize },
    #[error("this item already carries {} flags of yours, the most one item may; the lead will see them", crate::store::MAX_FLAGS_PER_ITEM)]
    TooManyFlags,
    #[error("this expert starts with the calibration items; the regular queue opens after passing them (or when the lead allows it)")]
    CalibrationPending,
    #[error(transparent)]
    Calibration(#[from] crate::workflow::calibration::CalibrationError),
    #[error(transparent)]
    Assignment(#[from] AssignmentError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl crate::base::error_code::Coded for QueueError {
    fn code(&self) -> ErrorCode {
        match self {
            QueueError::ProfilesLocked(_) => ErrorCode::ProfilesLocked,
            QueueError::NotAnExpert(_) => ErrorCode::NotAnExpert,
            QueueError::NoSuchItem { .. } => ErrorCode::NoSuchItem,
            QueueError::NoSuchCriterion(_) => ErrorCode::NoSuchCriterion,
            QueueError::OffScale { .. } => ErrorCode::OffScale,
            QueueError::EmptyReason => ErrorCode::EmptyReason,
            QueueError::FlagTooLong { .. } | QueueError::TooManyFlags => ErrorCode::Invalid,
            QueueError::CalibrationPending => ErrorCode::CalibrationPending,
            QueueError::Calibration(e) => e.code(),
            QueueError::Assignment(_) => ErrorCode::Assignment,
            QueueError::Store(e) => e.code(),
        }
    }
}

/// An expert profile as the start screen lists it.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RaterProfile {
    pub id: i64,
    pub name: String,
    /// Items in the expert's queue, and how many of them are complete.
    pub items: i64,
    pub completed: i64,
    /// First-occasion values the expert has in the study, queued or not (imported ratings).
    pub ratings: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RaterProfiles {
    pub profiles: Vec<RaterProfile>,
    /// New profiles cannot be created (the lead restricted them).
    pub locked: bool,
}

/// A rater's queue at a glance.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct QueueSummary {
    pub rater_id: i64,
    pub rater_name: String,
    pub total: i64,
    pub completed: i64,
    /// The item to show first: where the rater left off (1-based), or 0 for an empty queue.
    pub resume_item: i64,
}

/// An item the rater left unfinished or flagged: what the end of the queue lists, with a way back.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LeftItem {
    /// Its number in the queue (1-based).
    pub item: i64,
    /// Not every criterion has a value yet (skipped, or left half-rated).
    pub unfinished: bool,
    /// The reason of the rater's open flag on it, when flagged.
    pub flag_reason: Option<String>,
}

/// One criterion as the rating screen shows it, with this rater's current value.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ItemCriterion {
    pub key: String,
    pub label: LocalText,
    pub description: LocalText,
    pub group: Option<String>,
    pub scale: Scale,
    pub anchors: Vec<Anchor>,
    pub value: Option<i64>,
    /// This rater signed the value off: a change needs a reason.
    pub signed: bool,
    /// The signed value was changed after the signature (with a reason).
    pub changed_after_signature: bool,
}

/// Everything the rating screen shows for one item — and nothing more.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RatingItem {
    pub item: i64,
    pub total: i64,
    pub completed: i64,
    pub context: String,
    /// Everything said before the reply being rated, in order (for a session item, the whole
    /// conversation): a single-turn conversation's is its user's message. Never names a source.
    pub history: Vec<ShownTurn>,
    /// The reply's turn number (`None` for a session item).
    pub turn: Option<i64>,
    /// Whether the item is a reply or a whole conversation.
    pub scope: Scope,
    /// The answer's text; `None` when the study holds only ratings for it (and for a session
    /// item, which rates the history itself).
    pub answer: Option<String>,
    pub language: Option<String>,
    pub rubric_name: LocalText,
    pub groups: Vec<Group>,
    pub criteria: Vec<ItemCriterion>,
    pub rationale: Option<String>,
    pub flagged: bool,
    /// The reason the expert gave when flagging the item (their latest open flag).
    pub flag_reason: Option<String>,
}

/// One turn of an item's history as an expert sees it: its number, who speaks and what was said
/// (who wrote an assistant turn is never shown; blinding).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ShownTurn {
    pub turn: i64,
    pub role: crate::store::Role,
    pub text: String,
}

/// An item's history as an expert sees it (see [`ShownTurn`]).
pub fn shown_history(store: &Store, response_id: i64) -> Result<Vec<ShownTurn>, QueueError> {
    Ok(store
        .history(response_id)?
        .into_iter()
        .map(|t| ShownTurn {
            turn: t.position,
            role: t.role,
            text: t.text,
        })
        .collect())
}

/// The state of an item after a value was entered.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ItemProgress {
    pub item: i64,
    pub missing: i64,
    pub complete: bool,
    pub completed: i64,
    pub total: i64,
    pub outcome: RatingOutcome,
}

/// The assignment row behind an item number.
struct Slot {
    assignment_id: i64,
    response_id: i64,
    occasion: Occasion,
}

fn is_expert(store: &Store, rater_id: i64) -> Result<String, QueueError> {
    match store.rater(rater_id)? {
        Some(r) if r.is_expert() => Ok(r.name),
        _ => Err(QueueError::NotAnExpert(rater_id)),
    }
}

/// The expert profiles of the study, with their progress.
pub fn profiles(store: &Store) -> Result<RaterProfiles, QueueError> {
    let profiles = store
        .expert_queues()?
        .into_iter()
        .map(|q| RaterProfile {
            id: q.rater_id,
            name: q.name,
            items: q.items,
            completed: q.completed,
            ratings: q.ratings,
        })
        .collect();
    Ok(RaterProfiles {
        profiles,
        locked: store.meta(PROFILES_LOCKED_KEY)?.as_deref() == Some("true"),
    })
}

/// Create (or find) the expert profile `name` (whitespace runs collapsed, ends trimmed), unless the
/// study restricts profiles.
pub fn create_profile(
    store: &mut Store,
    name: &str,
    queue_seed: u64,
) -> Result<RaterProfile, QueueError> {
    let name = crate::base::text::normalise_name(name);
    let existing = profiles(store)?;
    if let Some(p) = existing.profiles.iter().find(|p| p.name == name) {
        return Ok(p.clone());
    }
    if existing.locked {
        return Err(QueueError::ProfilesLocked(name));
    }
    let added = add_expert(store, &name, queue_seed)?;
    Ok(RaterProfile {
        id: added.id,
        name: added.name,
        items: 0,
        completed: 0,
        ratings: 0,
    })
}

/// Open a rater's queue. In a study without any expert assignment yet (of answers or of pairs), a
/// rater gets every response, in an order shuffled with their stored seed (and recorded as their
/// assignment). A study whose lead gave out pairs only is assigned: its experts compare pairs,
/// and their queue of single answers stays empty.
pub fn open_queue(store: &mut Store, rater_id: i64) -> Result<QueueSummary, QueueError> {
    let name = is_expert(store, rater_id)?;
    if !crate::workflow::calibration::may_rate(store, rater_id)? {
        return Err(QueueError::CalibrationPending);
    }
    let own = store.read().queue_counts(rater_id)?.total;
    if own == 0
        && store.read().expert_assignment_count()? == 0
        && !store.read().has_pair_assignments()?
    {
        assign_everything(store, rater_id)?;
    }
    let summary = summary(store, rater_id, name)?;
    if summary.resume_item > 0 {
        mark_shown(store, rater_id, summary.resume_item)?;
    }
    Ok(summary)
}

/// Record when an item was first shown to its rater (the order actually shown).
fn mark_shown(store: &mut Store, rater_id: i64, item: i64) -> Result<(), QueueError> {
    let s = slot(store, rater_id, item)?;
    store.write(|tx| {
        tx.mark_shown(s.assignment_id)?;
        Ok::<_, QueueError>(())
    })
}

fn assign_everything(store: &mut Store, rater_id: i64) -> Result<(), QueueError> {
    let seed = store
        .rater(rater_id)?
        .ok_or(QueueError::NotAnExpert(rater_id))?
        .queue_seed;
    let mut responses = store.response_ids_in_order()?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed as u64);
    responses.shuffle(&mut rng);
    let rows: Vec<NewAssignment> = responses
        .iter()
        .enumerate()
        .map(|(pos, &id)| NewAssignment::fresh(rater_id, id, pos as i64 + 1, Purpose::Regular))
        .collect();
    store.write(|tx| {
        tx.add_assignments(&rows)?;
        tx.audit(
            "rating-screen",
            "solo_queue_created",
            &serde_json::json!({ "rater_id": rater_id, "items": responses.len(), "seed": seed }),
        )?;
        Ok::<_, QueueError>(())
    })
}

/// Where a reopened queue starts: the first unfinished item (an item skipped earlier comes back
/// before the place the rater stopped), else where they stood, else the first.
fn summary(store: &Store, rater_id: i64, rater_name: String) -> Result<QueueSummary, QueueError> {
    let QueueCounts { total, completed } = store.read().queue_counts(rater_id)?;
    let resume_item = match first_incomplete(store, rater_id)? {
        Some(item) => item,
        None => match store.read().session_item(rater_id)? {
            Some(item) if (1..=total).contains(&item) => item,
            _ => i64::from(total > 0),
        },
    };
    Ok(QueueSummary {
        rater_id,
        rater_name,
        total,
        completed,
        resume_item,
    })
}

/// The items of the rater's queue left unfinished or flagged (open flags), in queue order.
pub fn left_items(store: &Store, rater_id: i64) -> Result<Vec<LeftItem>, QueueError> {
    is_expert(store, rater_id)?;
    let mut flags = store.flags_of_rater(rater_id)?;
    flags.sort_by_key(|f| f.created_at);
    let open: HashMap<i64, String> = flags
        .into_iter()
        .filter(|f| f.resolved_at.is_none())
        .map(|f| (f.response_id, f.reason))
        .collect();
    Ok(store
        .assignments_of_rater(rater_id)?
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let unfinished = a.completed_at.is_none();
            let flag_reason = open.get(&a.response_id).cloned();
            (unfinished || flag_reason.is_some()).then_some(LeftItem {
                item: i as i64 + 1,
                unfinished,
                flag_reason,
            })
        })
        .collect())
}

fn first_incomplete(store: &Store, rater_id: i64) -> Result<Option<i64>, QueueError> {
    let done = store.completion_flags(rater_id)?;
    Ok(done.iter().position(|d| !d).map(|i| i as i64 + 1))
}

fn slot(store: &Store, rater_id: i64, item: i64) -> Result<Slot, QueueError> {
    let total = store.read().queue_counts(rater_id)?.total;
    if item < 1 || item > total {
        return Err(QueueError::NoSuchItem { item, total });
    }
    let a = store
        .assignment_at(rater_id, item - 1)?
        .ok_or(QueueError::NoSuchItem { item, total })?;
    Ok(Slot {
        assignment_id: a.id,
        response_id: a.response_id,
        occasion: if a.purpose == Purpose::Retest {
            Occasion::Retest
        } else {
            Occasion::First
        },
    })
}

/// The response behind item `item` of the expert's queue, checked as the rating screen checks
/// it: the rater is an expert past the calibration gate and the item is in their queue (their
/// assignment). What an expert marks in a reply is addressed this way, never by response id.
pub(crate) fn item_response(store: &Store, rater_id: i64, item: i64) -> Result<i64, QueueError> {
    is_expert(store, rater_id)?;
    if !crate::workflow::calibration::may_rate(store, rater_id)? {
        return Err(QueueError::CalibrationPending);
    }
    Ok(slot(store, rater_id, item)?.response_id)
}

/// The item at number `item` of the rater's queue, as the rating screen shows it. A pure read (the
/// screen may fetch the next item ahead); the moment an item is shown is recorded by
/// [`open_queue`] and [`leave_item`].
pub fn rating_item(store: &Store, rater_id: i64, item: i64) -> Result<RatingItem, QueueError> {
    is_expert(store, rater_id)?;
    if !crate::workflow::calibration::may_rate(store, rater_id)? {
        return Err(QueueError::CalibrationPending);
    }
    let s = slot(store, rater_id, item)?;
    let text = store.item_text(s.response_id)?;
    let rubric = store.response_rubric(s.response_id)?.rubric;
    let values = store.own_values(rater_id, s.response_id, s.occasion)?;
    // Retest values are never signed: a signature covers the first ratings.
    let signed = if s.occasion == Occasion::First {
        store.signed_criteria(rater_id, s.response_id)?
    } else {
        Vec::new()
    };
    let state = store.item_state(s.assignment_id)?;
    let criteria = rubric
        .criteria
        .iter()
        .map(|c| ItemCriterion {
            key: c.id.clone(),
            label: c.label.clone(),
            description: c.description.clone(),
            group: c.group.clone(),
            scale: c.scale.clone(),
            anchors: c.anchors.clone(),
            value: values
                .iter()
                .find(|(k, _)| *k == c.id)
                .and_then(|(_, v)| *v),
            signed: signed.iter().any(|x| x.criterion == c.id),
            changed_after_signature: signed
                .iter()
                .any(|x| x.criterion == c.id && x.changed_after_signature),
        })
        .collect();
    Ok(RatingItem {
        item,
        total: state.counts.total,
        completed: state.counts.completed,
        context: text.context,
        history: shown_history(store, s.response_id)?,
        turn: store.item_place(s.response_id)?.turn,
        scope: rubric.scope,
        answer: text.answer,
        language: text.language,
        rubric_name: rubric.name.clone(),
        groups: rubric.groups.clone(),
        criteria,
        rationale: state.rationale,
        flagged: state.flagged,
        flag_reason: store.open_flag_reason(rater_id, s.response_id)?,
    })
}

/// Enter (or revise) one value; committed durably before this returns.
pub fn rate(
    store: &mut Store,
    rater_id: i64,
    item: i64,
    criterion: &str,
    value: i64,
) -> Result<ItemProgress, QueueError> {
    rate_and_locate(store, rater_id, item, criterion, value, None).map(|(p, _)| p)
}

/// Which stored rating a value from the screen became (for in-memory agreement updates; never
/// sent to the screen).
#[derive(Debug, Clone, PartialEq)]
pub struct SavedRating {
    pub rater_id: i64,
    pub response_id: i64,
    pub criterion_id: i64,
    pub value: i64,
    /// The rubric of the rated item.
    pub rubric_key: String,
    /// A retest value, kept apart from the ratings agreement reads.
    pub retest: bool,
}

/// [`rate`], also saying which stored rating the value became. A value the rater signed off
/// changes only with `reason` (recorded in the audit trail against the signature).
pub fn rate_and_locate(
    store: &mut Store,
    rater_id: i64,
    item: i64,
    criterion: &str,
    value: i64,
    reason: Option<&str>,
) -> Result<(ItemProgress, SavedRating), QueueError> {
    rate_and_locate_via(store, "screen", rater_id, item, criterion, value, reason)
}

/// [`rate_and_locate`] from the surface `origin` names (`screen` for the window, `web` for a
/// browser), which the stored rating and its audit entry record.
pub fn rate_and_locate_via(
    store: &mut Store,
    origin: &'static str,
    rater_id: i64,
    item: i64,
    criterion: &str,
    value: i64,
    reason: Option<&str>,
) -> Result<(ItemProgress, SavedRating), QueueError> {
    let checked = check_rating(store, rater_id, item, criterion, value)?;
    store.write(|tx| write_rating(tx, origin, &checked, reason))
}

/// One value of a [`rate_each_via`]: who enters it, where, and the reason a signed value's change
/// needs.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingSave {
    pub rater_id: i64,
    pub item: i64,
    pub criterion: String,
    pub value: i64,
    pub reason: Option<String>,
}

/// What each value of a [`rate_each_via`] became, in the order given.
pub type EachRated = Vec<Result<(ItemProgress, SavedRating), QueueError>>;

/// Enter many values — several raters' saves that arrived together — in ONE write transaction,
/// one commit for all of them. Each is checked and written as [`rate_and_locate_via`] would,
/// under its own savepoint, so a value that is refused (off its scale, another rater's item, a
/// signed value without a reason) gets its own error in its place and takes nothing else down;
/// later values see the earlier ones of the batch. Every `Ok` is durable when this returns, and
/// each value has its own audit entry naming its rater and `origin`. `Err` is the transaction's
/// own failure (its commit above all): then none of the values is stored.
pub fn rate_each_via(
    store: &mut Store,
    origin: &'static str,
    saves: &[RatingSave],
) -> Result<EachRated, StoreError> {
    let checked: Vec<Result<CheckedRating, QueueError>> = saves
        .iter()
        .map(|s| check_rating(store, s.rater_id, s.item, &s.criterion, s.value))
        .collect();
    store.write_each(checked.into_iter().zip(saves), |tx, (checked, save)| {
        write_rating(tx, origin, &checked?, save.reason.as_deref())
    })
}

/// A value checked against its rater's queue and the item's rubric, ready to be written.
struct CheckedRating {
    rater_id: i64,
    item: i64,
    slot: Slot,
    rubric_id: i64,
    rubric_key: String,
    criterion_id: i64,
    n_criteria: i64,
    value: i64,
}

/// The reads before a value is written: the rater is an expert, the item is in their queue, the
/// criterion is the item's rubric's and the value on its scale.
fn check_rating(
    store: &Store,
    rater_id: i64,
    item: i64,
    criterion: &str,
    value: i64,
) -> Result<CheckedRating, QueueError> {
    is_expert(store, rater_id)?;
    let s = slot(store, rater_id, item)?;
    let StoredRubric {
        id: rubric_id,
        rubric,
    } = store.response_rubric(s.response_id)?;
    let c = rubric
        .criterion(criterion)
        .ok_or_else(|| QueueError::NoSuchCriterion(criterion.to_string()))?;
    if !c.scale.contains(value) {
        return Err(QueueError::OffScale {
            criterion: criterion.to_string(),
            value,
            min: c.scale.min(),
            max: c.scale.max(),
        });
    }
    let criterion_id = *store
        .read()
        .criterion_ids(rubric_id)?
        .get(criterion)
        .ok_or_else(|| QueueError::NoSuchCriterion(criterion.to_string()))?;
    Ok(CheckedRating {
        rater_id,
        item,
        slot: s,
        rubric_id,
        rubric_key: rubric.id.clone(),
        criterion_id,
        n_criteria: rubric.criteria.len() as i64,
        value,
    })
}

/// Write a checked value in transaction `tx`: the rating, the item's completion and the rater's
/// place in the queue.
fn write_rating(
    tx: &mut StudyTx<'_>,
    origin: &'static str,
    checked: &CheckedRating,
    reason: Option<&str>,
) -> Result<(ItemProgress, SavedRating), QueueError> {
    let CheckedRating {
        rater_id,
        item,
        slot: ref s,
        rubric_id,
        ref rubric_key,
        criterion_id,
        n_criteria,
        value,
    } = *checked;
    let rationale = tx.item_rationale(s.assignment_id)?;
    let input = RatingInput {
        rater_id,
        response_id: s.response_id,
        criterion_id,
        occasion: s.occasion,
        value: Some(value),
        raw_value: None,
        rationale: rationale.as_deref(),
        origin,
    };
    let outcome = match (s.occasion, reason) {
        (Occasion::First, Some(reason)) => tx.set_rating_with_reason(&input, reason)?,
        _ => tx.set_rating(&input)?,
    };
    let rated = tx.count_rated(rater_id, s.response_id, rubric_id, s.occasion)?;
    let complete = rated >= n_criteria;
    let completes = complete && tx.mark_completed(s.assignment_id)?;
    let QueueCounts { total, completed } = tx.read().queue_counts(rater_id)?;
    // The value that completes the item the rater stands on moves them on, in this same
    // transaction: the screen shows the next item at once, and a crash before it records the
    // move must not reopen the finished item.
    if completes
        && item < total
        && tx
            .read()
            .session_item(rater_id)?
            .is_none_or(|at| at == item)
    {
        tx.set_session_item(rater_id, item + 1)?;
    }
    Ok((
        ItemProgress {
            item,
            missing: n_criteria - rated,
            complete,
            completed,
            total,
            outcome,
        },
        SavedRating {
            rater_id,
            response_id: s.response_id,
            criterion_id,
            value,
            rubric_key: rubric_key.clone(),
            retest: s.occasion == Occasion::Retest,
        },
    ))
}

/// Set the item's rationale; it is kept with the assignment and copied onto the item's ratings
/// (each change to a rating's rationale keeps the earlier text in the history). Each rating keeps
/// its origin: a rationale says nothing about where the value came from (a value entered from a
/// browser stays `web` whichever screen the rationale was typed on).
pub fn set_rationale(
    store: &mut Store,
    rater_id: i64,
    item: i64,
    rationale: &str,
) -> Result<(), QueueError> {
    is_expert(store, rater_id)?;
    let s = slot(store, rater_id, item)?;
    let text = Some(rationale.trim()).filter(|t| !t.is_empty());
    store.write(|tx| {
        tx.set_item_rationale(s.assignment_id, text)?;
        for (criterion_id, value, origin) in tx.own_ratings(rater_id, s.response_id, s.occasion)? {
            tx.set_rating(&RatingInput {
                rater_id,
                response_id: s.response_id,
                criterion_id,
                occasion: s.occasion,
                value,
                raw_value: None,
                rationale: text,
                origin: &origin,
            })?;
        }
        Ok::<_, QueueError>(())
    })
}

/// Flag an item (with a reason) for the lead's attention: at most
/// [`MAX_FLAGS_PER_ITEM`](crate::store::MAX_FLAGS_PER_ITEM) per item, each reason at most
/// [`MAX_FLAG_REASON_BYTES`](crate::store::MAX_FLAG_REASON_BYTES).
pub fn flag_item(
    store: &mut Store,
    rater_id: i64,
    item: i64,
    reason: &str,
) -> Result<(), QueueError> {
    is_expert(store, rater_id)?;
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(QueueError::EmptyReason);
    }
    if reason.len() > crate::store::MAX_FLAG_REASON_BYTES {
        return Err(QueueError::FlagTooLong {
            bytes: reason.len(),
        });
    }
    let s = slot(store, rater_id, item)?;
    store.write(|tx| {
        if tx.flag_count(rater_id, s.response_id)? >= crate::store::MAX_FLAGS_PER_ITEM {
            return Err(QueueError::TooManyFlags);
        }
        tx.add_flag(rater_id, s.response_id, reason)?;
        Ok::<_, QueueError>(())
    })
}

/// The most time on one item that Concord records: one visit adds at most this (a day; the
/// screen's clock left running past it is not work), and a merged package's item may not hold
/// more in all.
pub const MAX_SECONDS_ON_ITEM: f64 = 86_400.0;

/// The seconds of a visit that count: what the screen's clock says (`claimed`, at most
/// [`MAX_SECONDS_ON_ITEM`]; not a number counts nothing), never more than the time that passed,
/// as the study's clock measures it, since the later of when the item was first `shown` and when
/// the rater's time was last `counted` (nothing when neither is known: the item was never shown).
/// So a screen, a browser or a script that reports more time than passed adds only what passed,
/// however often it reports.
pub fn countable_seconds(
    claimed: f64,
    now: crate::base::clock::Millis,
    shown: Option<crate::base::clock::Millis>,
    counted: Option<crate::base::clock::Millis>,
) -> f64 {
    let claimed = if claimed.is_finite() {
        claimed.clamp(0.0, MAX_SECONDS_ON_ITEM)
    } else {
        0.0
    };
    let Some(since) = shown.max(counted) else {
        return 0.0;
    };
    claimed.min(now.saturating_sub(since).max(0) as f64 / 1000.0)
}

/// Record that the rater left `item` after `seconds` on it and now stands at `next_item`
/// (where a relaunch resumes, and which is recorded as shown now if it never was). The time
/// added is [`countable_seconds`]: at most what passed since the item was shown or the rater's
/// time was last counted, which moves to now.
pub fn leave_item(
    store: &mut Store,
    rater_id: i64,
    item: i64,
    seconds: f64,
    next_item: i64,
) -> Result<(), QueueError> {
    is_expert(store, rater_id)?;
    let s = slot(store, rater_id, item)?;
    let next = if next_item != item {
        slot(store, rater_id, next_item).ok()
    } else {
        None
    };
    store.write(|tx| {
        let shown = tx.first_shown_at(s.assignment_id)?;
        let counted = tx.read().time_counted_until(rater_id)?;
        let seconds = countable_seconds(seconds, tx.now(), shown, counted);
        tx.add_seconds(s.assignment_id, seconds)?;
        tx.count_time_until_now(rater_id, false)?;
        tx.set_session_item(rater_id, next_item)?;
        if let Some(next) = &next {
            tx.mark_shown(next.assignment_id)?;
        }
        Ok::<_, QueueError>(())
    })
}

/// One line of a rater's record: when each item of the queue was first shown, how long was spent
/// on it and when it was completed (the order actually shown, for the lead and for analysis).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ShownItem {
    pub item: i64,
    pub first_shown_at: Option<i64>,
    pub seconds_spent: f64,
    pub completed_at: Option<i64>,
}

/// The rater's queue in order with what was recorded about each item.
pub fn shown_log(store: &Store, rater_id: i64) -> Result<Vec<ShownItem>, QueueError> {
    Ok(store
        .assignments_of_rater(rater_id)?
        .into_iter()
        .enumerate()
        .map(|(i, a)| ShownItem {
            item: i as i64 + 1,
            first_shown_at: a.first_shown_at,
            seconds_spent: a.seconds_spent,
            completed_at: a.completed_at,
        })
        .collect())
}

/// Restrict (or reopen) the rater profiles of a study: when locked, the rating screen offers only
/// the existing expert profiles and refuses to create new ones.
pub fn set_profiles_locked(store: &mut Store, locked: bool) -> Result<(), QueueError> {
    store.write(|tx| {
        tx.set_meta(PROFILES_LOCKED_KEY, if locked { "true" } else { "false" })?;
        tx.audit(
            "lead",
            "profiles_locked",
            &serde_json::json!({ "locked": locked }),
        )?;
        Ok::<_, QueueError>(())
    })
}
