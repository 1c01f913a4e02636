//! The exact prompt of one call of a run, rendered again from the study (`concord judge prompt`):
//! the run's template, its history depth and its criteria order, filled with the call's turns and
//! reply (or pair of replies) as the runner fills them, beside the SHA-256 recorded on the call
//! when it was sent (`judge_call.prompt_sha256`, of the system message, a NUL and the user
//! message). While the study's texts are unchanged the two hashes are equal; a text changed since
//! (a PHI redaction) shows as a hash that no longer matches.

use super::ledger::{load_run, rendered_call};
use super::settings::HistoryDepth;
use super::JudgeError;
use crate::base::text::quoted;
use crate::store::{Store, StoreError};
use serde::Serialize;

/// Which call of a run to render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallChoice {
    /// The call with this id.
    Call(i64),
    /// The call judging this item (its name: external id, else its number) in this repetition
    /// (from 1); a run that rates one answer at a time has one.
    Item { item: String, repetition: i64 },
}

/// One call's prompt as the study renders it, and the hash recorded when it was sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallPrompt {
    pub run_id: i64,
    pub call_id: i64,
    /// The item judged (the answer shown first, for a pairwise call): its name.
    pub item: String,
    /// Its conversation's external id.
    pub conversation: String,
    /// Its turn number (2 for a single-turn conversation's answer); `None` for a session item.
    pub turn: Option<i64>,
    pub repetition: i64,
    /// The pair a pairwise call compares.
    pub pair_id: Option<i64>,
    /// `pending`, `in_flight`, `done` or `failed`.
    pub state: String,
    /// The run's history depth.
    pub history: HistoryDepth,
    /// How many turns the prompt shows before the reply (the whole conversation of a session
    /// item).
    pub turns_shown: usize,
    pub system: Option<String>,
    pub user: String,
    /// SHA-256 of this rendering: the system message, a NUL, the user message.
    pub prompt_sha256: String,
    /// The hash recorded when the call was sent (`None` while it has not been).
    pub recorded_sha256: Option<String>,
    /// Whether the rendering is what was sent (`None` while nothing was).
    pub matches_recorded: Option<bool>,
}

/// The prompt of the call `choice` names in run `run_id`, rendered from the study.
pub fn call_prompt(
    store: &Store,
    run_id: i64,
    choice: &CallChoice,
) -> Result<CallPrompt, JudgeError> {
    let run = load_run(store, run_id)?;
    let call_id = match choice {
        CallChoice::Call(id) => *id,
        CallChoice::Item { item, repetition } => {
            let found = store
                .response_by_item(item)?
                .ok_or_else(|| StoreError::NotFound {
                    what: "item",
                    key: item.clone(),
                })?;
            store
                .judge_call_of(run_id, found.id, *repetition)?
                .ok_or_else(|| {
                    JudgeError::Settings(format!(
                        "run {run_id} has no call judging item {} in repetition {repetition}{}",
                        quoted(item),
                        if run.rubric.is_pairwise() {
                            " (a pairwise run's calls are named by --call)"
                        } else {
                            ""
                        }
                    ))
                })?
        }
    };
    let (stored, prompt) =
        rendered_call(store, &run, call_id)?.ok_or_else(|| StoreError::NotFound {
            what: "judge call",
            key: format!("{call_id} of run {run_id}"),
        })?;
    let response_id = stored.call.response_id;
    let place = store.item_place(response_id)?;
    let turns_shown =
        super::ledger::shown_history(store, run.rubric.scope, run.settings.history, response_id)?
            .len();
    let sha = prompt.sha256();
    Ok(CallPrompt {
        run_id,
        call_id,
        item: store.item_name(response_id)?,
        conversation: place.conversation,
        turn: place.turn,
        repetition: stored.call.repetition,
        pair_id: stored.call.pair.as_ref().map(|p| p.pair_id),
        state: stored.state,
        history: run.settings.history,
        turns_shown,
        matches_recorded: stored.prompt_sha256.as_ref().map(|r| *r == sha),
        recorded_sha256: stored.prompt_sha256,
        system: prompt.system,
        user: prompt.user,
        prompt_sha256: sha,
    })
}
