//! The expert's queue and rating screen, blinded by construction. A rater works through their
//! assigned responses in an order randomised per rater (the assignment positions, seeded); a rater
//! in a study nobody has assigned yet gets every response, shuffled with the rater's stored seed.
//! Items are addressed by their number in the rater's queue, never by response id, and every type
//! here carries only what the screen may show: the user's message, the answer, the rubric and this
//! rater's own values — no source, model, judge score or other rater's rating. Each value is
//! committed in its own transaction the moment it is entered; revisions keep the earlier value in
//! the history; time on each item and the place in the queue are recorded.

use crate::assignment::{add_expert, set_retest_rating, AssignmentError};
use crate::error_code::ErrorCode;
use crate::rubric::{Anchor, Group, LocalText, Rubric, RubricFormat, Scale};
use crate::store::{RaterKind, RatingInput, RatingOutcome, Store, StoreError};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rusqlite::{params, OptionalExtension};
use serde::Serialize;

/// `study_meta` key that, when "true", stops new rater profiles being created on the rating screen.
pub const PROFILES_LOCKED_KEY: &str = "profiles_locked";

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error(
        "this study only allows its existing rater profiles; ask the project lead to add {0:?}"
    )]
    ProfilesLocked(String),
    #[error("rater {0} is not an expert of this study")]
    NotAnExpert(i64),
    #[error("item {item} is outside this queue of {total} items")]
    NoSuchItem { item: i64, total: i64 },
    #[error("criterion {0:?} is not part of this item's rubric")]
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
    #[error("this expert starts with the calibration items; the regular queue opens after passing them (or when the lead allows it)")]
    CalibrationPending,
    #[error(transparent)]
    Calibration(#[from] crate::calibration::CalibrationError),
    #[error(transparent)]
    Assignment(#[from] AssignmentError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for QueueError {
    fn from(e: rusqlite::Error) -> Self {
        QueueError::Store(e.into())
    }
}

impl QueueError {
    pub fn code(&self) -> ErrorCode {
        match self {
            QueueError::ProfilesLocked(_) => ErrorCode::ProfilesLocked,
            QueueError::NotAnExpert(_) => ErrorCode::NotAnExpert,
            QueueError::NoSuchItem { .. } => ErrorCode::NoSuchItem,
            QueueError::NoSuchCriterion(_) => ErrorCode::NoSuchCriterion,
            QueueError::OffScale { .. } => ErrorCode::OffScale,
            QueueError::EmptyReason => ErrorCode::EmptyReason,
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
    pub items: i64,
    pub completed: i64,
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
    /// The answer's text; `None` when the study holds only ratings for it.
    pub answer: Option<String>,
    pub language: Option<String>,
    pub rubric_name: LocalText,
    pub groups: Vec<Group>,
    pub criteria: Vec<ItemCriterion>,
    pub rationale: Option<String>,
    pub flagged: bool,
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
    retest: bool,
}

fn is_expert(store: &Store, rater_id: i64) -> Result<String, QueueError> {
    let row: Option<(String, String)> = store
        .conn()
        .query_row(
            "SELECT name, kind FROM rater WHERE id = ?1",
            [rater_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    match row {
        Some((name, kind)) if kind == RaterKind::Expert.as_str() => Ok(name),
        _ => Err(QueueError::NotAnExpert(rater_id)),
    }
}

/// The expert profiles of the study, with their progress.
pub fn profiles(store: &Store) -> Result<RaterProfiles, QueueError> {
    let mut stmt = store.conn().prepare(
        "SELECT r.id, r.name,
                (SELECT COUNT(*) FROM assignment a WHERE a.rater_id = r.id),
                (SELECT COUNT(*) FROM assignment a WHERE a.rater_id = r.id AND a.completed_at IS NOT NULL)
         FROM rater r WHERE r.kind = 'expert' ORDER BY r.name",
    )?;
    let profiles = stmt
        .query_map([], |r| {
            Ok(RaterProfile {
                id: r.get(0)?,
                name: r.get(1)?,
                items: r.get(2)?,
                completed: r.get(3)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(RaterProfiles {
        profiles,
        locked: store.meta(PROFILES_LOCKED_KEY)?.as_deref() == Some("true"),
    })
}

/// Create (or find) the expert profile `name`, unless the study restricts profiles.
pub fn create_profile(
    store: &mut Store,
    name: &str,
    queue_seed: u64,
) -> Result<RaterProfile, QueueError> {
    let existing = profiles(store)?;
    if let Some(p) = existing.profiles.iter().find(|p| p.name == name.trim()) {
        return Ok(p.clone());
    }
    if existing.locked {
        return Err(QueueError::ProfilesLocked(name.trim().to_string()));
    }
    let added = add_expert(store, name, queue_seed)?;
    Ok(RaterProfile {
        id: added.id,
        name: added.name,
        items: 0,
        completed: 0,
    })
}

/// Open a rater's queue. In a study without any expert assignment yet, a rater gets every response,
/// in an order shuffled with their stored seed (and recorded as their assignment).
pub fn open_queue(store: &mut Store, rater_id: i64) -> Result<QueueSummary, QueueError> {
    let name = is_expert(store, rater_id)?;
    if !crate::calibration::may_rate(store, rater_id)? {
        return Err(QueueError::CalibrationPending);
    }
    let (own, any): (i64, i64) = store.conn().query_row(
        "SELECT (SELECT COUNT(*) FROM assignment WHERE rater_id = ?1),
                (SELECT COUNT(*) FROM assignment a JOIN rater r ON r.id = a.rater_id WHERE r.kind = 'expert')",
        [rater_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if own == 0 && any == 0 {
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
        tx.conn().execute(
            "UPDATE assignment SET first_shown_at = ?2 WHERE id = ?1 AND first_shown_at IS NULL",
            params![s.assignment_id, tx.now()],
        )?;
        Ok::<_, QueueError>(())
    })
}

fn assign_everything(store: &mut Store, rater_id: i64) -> Result<(), QueueError> {
    let seed: i64 = store.conn().query_row(
        "SELECT queue_seed FROM rater WHERE id = ?1",
        [rater_id],
        |r| r.get(0),
    )?;
    let mut responses: Vec<i64> = store
        .conn()
        .prepare("SELECT id FROM response ORDER BY id")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed as u64);
    responses.shuffle(&mut rng);
    store.write(|tx| {
        let mut ins = tx.conn().prepare(
            "INSERT INTO assignment(rater_id, response_id, position, purpose) VALUES (?1, ?2, ?3, 'regular')",
        )?;
        for (pos, id) in responses.iter().enumerate() {
            ins.execute(params![rater_id, id, pos as i64 + 1])?;
        }
        drop(ins);
        tx.audit(
            "rating-screen",
            "solo_queue_created",
            &serde_json::json!({ "rater_id": rater_id, "items": responses.len(), "seed": seed }),
        )?;
        Ok::<_, QueueError>(())
    })
}

fn summary(store: &Store, rater_id: i64, rater_name: String) -> Result<QueueSummary, QueueError> {
    let (total, completed): (i64, i64) = store.conn().query_row(
        "SELECT COUNT(*), COUNT(completed_at) FROM assignment WHERE rater_id = ?1",
        [rater_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let last: Option<i64> = store
        .conn()
        .query_row(
            "SELECT item FROM rater_session WHERE rater_id = ?1",
            [rater_id],
            |r| r.get(0),
        )
        .optional()?;
    let resume_item = match last {
        Some(item) if (1..=total).contains(&item) => item,
        _ => first_incomplete(store, rater_id)?.unwrap_or(if total > 0 { 1 } else { 0 }),
    };
    Ok(QueueSummary {
        rater_id,
        rater_name,
        total,
        completed,
        resume_item,
    })
}

fn first_incomplete(store: &Store, rater_id: i64) -> Result<Option<i64>, QueueError> {
    let mut stmt = store.conn().prepare(
        "SELECT completed_at IS NOT NULL FROM assignment WHERE rater_id = ?1 ORDER BY position",
    )?;
    let done: Vec<bool> = stmt
        .query_map([rater_id], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(done.iter().position(|d| !d).map(|i| i as i64 + 1))
}

fn slot(store: &Store, rater_id: i64, item: i64) -> Result<Slot, QueueError> {
    let total: i64 = store.conn().query_row(
        "SELECT COUNT(*) FROM assignment WHERE rater_id = ?1",
        [rater_id],
        |r| r.get(0),
    )?;
    if item < 1 || item > total {
        return Err(QueueError::NoSuchItem { item, total });
    }
    Ok(store.conn().query_row(
        "SELECT id, response_id, purpose FROM assignment WHERE rater_id = ?1
         ORDER BY position LIMIT 1 OFFSET ?2",
        params![rater_id, item - 1],
        |r| {
            Ok(Slot {
                assignment_id: r.get(0)?,
                response_id: r.get(1)?,
                retest: r.get::<_, String>(2)? == "retest",
            })
        },
    )?)
}

fn item_rubric(store: &Store, response_id: i64) -> Result<(i64, Rubric), QueueError> {
    let (rubric_id, key, text): (i64, String, String) = store.conn().query_row(
        "SELECT b.id, b.key, b.source_toml FROM response p
         JOIN conversation c ON c.id = p.conversation_id JOIN rubric b ON b.id = c.rubric_id
         WHERE p.id = ?1",
        [response_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let rubric = Rubric::parse(&text, RubricFormat::Toml, &format!("stored rubric {key}"))
        .map_err(|e| StoreError::Invalid(e.to_string()))?;
    Ok((rubric_id, rubric))
}

/// This rater's current values for an item, by criterion key.
fn own_values(
    store: &Store,
    rater_id: i64,
    s: &Slot,
) -> Result<Vec<(String, Option<i64>)>, QueueError> {
    let table = if s.retest { "retest_rating" } else { "rating" };
    let mut stmt = store.conn().prepare(&format!(
        "SELECT c.key, g.value FROM {table} g JOIN criterion c ON c.id = g.criterion_id
         WHERE g.rater_id = ?1 AND g.response_id = ?2"
    ))?;
    let rows = stmt
        .query_map(params![rater_id, s.response_id], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The item at number `item` of the rater's queue, as the rating screen shows it. A pure read (the
/// screen may fetch the next item ahead); the moment an item is shown is recorded by
/// [`open_queue`] and [`leave_item`].
pub fn rating_item(store: &Store, rater_id: i64, item: i64) -> Result<RatingItem, QueueError> {
    is_expert(store, rater_id)?;
    if !crate::calibration::may_rate(store, rater_id)? {
        return Err(QueueError::CalibrationPending);
    }
    let s = slot(store, rater_id, item)?;
    let (context, answer, language): (String, Option<String>, Option<String>) =
        store.conn().query_row(
            "SELECT c.context, p.text, c.language FROM response p
         JOIN conversation c ON c.id = p.conversation_id WHERE p.id = ?1",
            [s.response_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
    let (_, rubric) = item_rubric(store, s.response_id)?;
    let values = own_values(store, rater_id, &s)?;
    // Retest values are never signed: a signature covers the regular ratings.
    let signed = if s.retest {
        Vec::new()
    } else {
        store.signed_criteria(rater_id, s.response_id)?
    };
    let (rationale, flagged, total, completed): (Option<String>, bool, i64, i64) = store.conn().query_row(
        "SELECT a.rationale,
                EXISTS(SELECT 1 FROM flag f WHERE f.rater_id = a.rater_id AND f.response_id = a.response_id
                       AND f.resolved_at IS NULL),
                (SELECT COUNT(*) FROM assignment WHERE rater_id = a.rater_id),
                (SELECT COUNT(completed_at) FROM assignment WHERE rater_id = a.rater_id)
         FROM assignment a WHERE a.id = ?1",
        [s.assignment_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
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
        total,
        completed,
        context,
        answer,
        language,
        rubric_name: rubric.name.clone(),
        groups: rubric.groups.clone(),
        criteria,
        rationale,
        flagged,
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
    is_expert(store, rater_id)?;
    let s = slot(store, rater_id, item)?;
    let (rubric_id, rubric) = item_rubric(store, s.response_id)?;
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
    let criterion_id: i64 = store.conn().query_row(
        "SELECT id FROM criterion WHERE rubric_id = ?1 AND key = ?2",
        params![rubric_id, criterion],
        |r| r.get(0),
    )?;
    let n_criteria = rubric.criteria.len() as i64;
    let table = if s.retest { "retest_rating" } else { "rating" };
    store.write(|tx| {
        let rationale: Option<String> = tx.conn().query_row(
            "SELECT rationale FROM assignment WHERE id = ?1",
            [s.assignment_id],
            |r| r.get(0),
        )?;
        let input = RatingInput {
            rater_id,
            response_id: s.response_id,
            criterion_id,
            value: Some(value),
            raw_value: None,
            rationale: rationale.as_deref(),
            origin: "screen",
        };
        let outcome = match (s.retest, reason) {
            (true, _) => set_retest_rating(tx, &input)?,
            (false, Some(reason)) => tx.set_rating_with_reason(&input, reason)?,
            (false, None) => tx.set_rating(&input)?,
        };
        let rated: i64 = tx.conn().query_row(
            &format!(
                "SELECT COUNT(*) FROM {table} g JOIN criterion c ON c.id = g.criterion_id
                 WHERE g.rater_id = ?1 AND g.response_id = ?2 AND c.rubric_id = ?3 AND g.value IS NOT NULL"
            ),
            params![rater_id, s.response_id, rubric_id],
            |r| r.get(0),
        )?;
        let complete = rated >= n_criteria;
        if complete {
            tx.conn().execute(
                "UPDATE assignment SET completed_at = COALESCE(completed_at, ?2) WHERE id = ?1",
                params![s.assignment_id, tx.now()],
            )?;
        }
        let (total, completed): (i64, i64) = tx.conn().query_row(
            "SELECT COUNT(*), COUNT(completed_at) FROM assignment WHERE rater_id = ?1",
            [rater_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
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
                rubric_key: rubric.id.clone(),
                retest: s.retest,
            },
        ))
    })
}

/// Set the item's rationale; it is kept with the assignment and copied onto the item's ratings
/// (each change to a rating's rationale keeps the earlier text in the history).
pub fn set_rationale(
    store: &mut Store,
    rater_id: i64,
    item: i64,
    rationale: &str,
) -> Result<(), QueueError> {
    is_expert(store, rater_id)?;
    let s = slot(store, rater_id, item)?;
    let text = Some(rationale.trim()).filter(|t| !t.is_empty());
    let table = if s.retest { "retest_rating" } else { "rating" };
    store.write(|tx| {
        tx.conn().execute(
            "UPDATE assignment SET rationale = ?2 WHERE id = ?1",
            params![s.assignment_id, text],
        )?;
        let rows: Vec<(i64, Option<i64>)> = tx
            .conn()
            .prepare(&format!(
                "SELECT criterion_id, value FROM {table} WHERE rater_id = ?1 AND response_id = ?2"
            ))?
            .query_map(params![rater_id, s.response_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<Result<_, _>>()?;
        for (criterion_id, value) in rows {
            let input = RatingInput {
                rater_id,
                response_id: s.response_id,
                criterion_id,
                value,
                raw_value: None,
                rationale: text,
                origin: "screen",
            };
            if s.retest {
                set_retest_rating(tx, &input)?;
            } else {
                tx.set_rating(&input)?;
            }
        }
        Ok::<_, QueueError>(())
    })
}

/// Flag an item (with a reason) for the lead's attention.
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
    let s = slot(store, rater_id, item)?;
    store.write(|tx| {
        tx.add_flag(rater_id, s.response_id, reason)?;
        Ok::<_, QueueError>(())
    })
}

/// Record that the rater left `item` after `seconds` on it and now stands at `next_item`
/// (where a relaunch resumes, and which is recorded as shown now if it never was).
pub fn leave_item(
    store: &mut Store,
    rater_id: i64,
    item: i64,
    seconds: f64,
    next_item: i64,
) -> Result<(), QueueError> {
    is_expert(store, rater_id)?;
    let s = slot(store, rater_id, item)?;
    let seconds = if seconds.is_finite() {
        seconds.clamp(0.0, 86_400.0)
    } else {
        0.0
    };
    let next = if next_item != item {
        slot(store, rater_id, next_item).ok()
    } else {
        None
    };
    store.write(|tx| {
        tx.conn().execute(
            "UPDATE assignment SET seconds_spent = seconds_spent + ?2 WHERE id = ?1",
            params![s.assignment_id, seconds],
        )?;
        tx.conn().execute(
            "INSERT INTO rater_session(rater_id, item, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(rater_id) DO UPDATE SET item = excluded.item, updated_at = excluded.updated_at",
            params![rater_id, next_item, tx.now()],
        )?;
        if let Some(next) = &next {
            tx.conn().execute(
                "UPDATE assignment SET first_shown_at = ?2 WHERE id = ?1 AND first_shown_at IS NULL",
                params![next.assignment_id, tx.now()],
            )?;
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
    let mut stmt = store.conn().prepare(
        "SELECT first_shown_at, seconds_spent, completed_at FROM assignment
         WHERE rater_id = ?1 ORDER BY position",
    )?;
    let rows = stmt
        .query_map([rater_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<Vec<(Option<i64>, f64, Option<i64>)>, _>>()?;
    Ok(rows
        .into_iter()
        .enumerate()
        .map(
            |(i, (first_shown_at, seconds_spent, completed_at))| ShownItem {
                item: i as i64 + 1,
                first_shown_at,
                seconds_spent,
                completed_at,
            },
        )
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
