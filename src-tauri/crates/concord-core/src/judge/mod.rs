//! **Row 4** of the core's layers (base 0 · files 1 · rubric 2 · store 3 · intake, judge, guard, workflow 4 · panel 5 · outputs 6 · app 7): judge runs.
//! Imports `base`, `files`, `rubric` and `store`; never `intake`, `guard`, `workflow` (its row) or
//! anything above.
//!
//! The LLM judge runner: judges (OpenAI-compatible chat completions — OpenAI, Ollama, vLLM,
//! llama.cpp server, LM Studio — and the Anthropic Messages API, live or through the providers'
//! batch APIs) rate a study's responses with a rubric's prompt, and their scores become ratings of a
//! judge rater. A run is stored in the study with its exact prompt template, model and sampling
//! settings (hashed), and every (run, response, repetition) is a row with a state, so a killed app
//! or CLI resumes without re-sending finished calls; calls that were in flight when the process
//! died are sent again (their answers were never recorded, so that cannot be avoided).
//!
//! The flow the desktop screen and the CLI follow:
//! 1. [`preview_run`] — what a run with these [`RunSettings`] would send and cost, and whether it
//!    resumes an earlier run; nothing is written.
//! 2. [`open_run`] — create the run (or find the one with the same settings hash) and its rows.
//! 3. [`execute_run`] — send the pending calls with an [`Execution`] (concurrency, rate limits,
//!    retries, timeouts), reporting [`Progress`] to a callback and stopping when a
//!    [`CancellationToken`] is cancelled. Cancelled and in-flight rows go back to pending.
//! 4. [`runs`], [`run_status`], [`failures`] — what the runs hold, with raw outputs of failures;
//!    [`answering()`] — which model the provider says answered each run's calls ([`mod@answering`]);
//!    [`call_prompt()`] — one call's exact prompt rendered again from the study beside the hash
//!    recorded when it was sent ([`mod@call_prompt`]).
//!
//! Conversations: a reply of a transcript is judged after the last [`RunSettings::history`] turns
//! before it (10 unless told; every role counted), a session item after its whole conversation,
//! and a pair of candidates after the history they share; the prompt gives them as the
//! transcript [`prompt::transcript`] writes. A single-turn conversation's answer is asked exactly
//! as before transcripts existed.
//!
//! Repetitions: every repetition's scores are kept in the run's `judge_call` rows. The judge's
//! *rating* row (one per rater × response × criterion, origin `judge:<run id>`, the judge's
//! explanation as rationale) is written from the lowest-numbered repetition that succeeded; what
//! every report reads as the judge's score of a multi-repetition run is the study's aggregate of
//! all its repetitions ([`scores`]: median by default, mean or mode), never one repetition.
//! API keys come from the OS keyring or an environment variable ([`key`]) and are never written
//! to the study; which variables and accounts may hold one, and which endpoints may receive it,
//! is one rule ([`mod@destination`]) both front ends pass through.

pub mod answering;
pub mod batch;
pub mod batch_file;
pub mod call_prompt;
mod context;
pub mod destination;
pub mod http;
pub mod key;
pub mod ledger;
pub mod logprobs;
pub mod pacing;
pub mod progress;
pub mod prompt;
pub mod rule;
pub mod runner;
pub mod scores;
pub mod settings;
pub mod spans;
pub mod structured;
pub mod verdict;

pub use answering::{answering, RunAnswering};
pub use call_prompt::{call_prompt, CallChoice, CallPrompt};
pub use destination::{destination, Destination, KeyOrigin};
pub use key::{ApiKey, KeyChoice, KeyError, KeySource};
pub use ledger::{
    default_prompt, failures, open_run, preview_run, reply_modes, run_status, runs, CallFailure,
    CostEstimate, ReplyMode, RunPlan, RunPreview, RunStatus,
};
pub use progress::{Progress, RunPhase};
pub use prompt::{Frame, PromptTemplate, ReplyFormat};
pub use rule::DestinationError;
pub use runner::{execute_run, RunReport};
pub use settings::{
    Execution, HistoryDepth, Prices, ProviderKind, ResponseSelection, RunSettings, DEFAULT_HISTORY,
};
pub use tokio_util::sync::CancellationToken;
pub use verdict::{read_reply, ReplyError, Verdict};

use crate::base::error_code::ErrorCode;
use crate::store::StoreError;

/// Why a judge run could not be planned or carried out. Failures of single calls are not errors:
/// they are recorded on their rows (see [`CallFailure`]).
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("invalid judge settings: {0}")]
    Settings(String),
    #[error("the prompt template has no {placeholder} placeholder; add it where the text goes")]
    Template { placeholder: &'static str },
    #[error("judge run {0} does not exist in this study")]
    NoSuchRun(i64),
    #[error("{0}")]
    Rubric(String),
    #[error("could not start the async runtime: {0}")]
    Runtime(String),
    #[error("could not set up the HTTP client: {0}")]
    Client(String),
    #[error("provider batch: {0}")]
    Batch(String),
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error(transparent)]
    Destination(#[from] DestinationError),
}

impl crate::base::error_code::Coded for JudgeError {
    /// A stable machine-readable code for the UI and scripts.
    fn code(&self) -> ErrorCode {
        match self {
            JudgeError::Store(e) => e.code(),
            JudgeError::Settings(_) => ErrorCode::JudgeSettings,
            JudgeError::Template { .. } => ErrorCode::JudgeTemplate,
            JudgeError::NoSuchRun(_) => ErrorCode::NotFound,
            JudgeError::Rubric(_) => ErrorCode::JudgeRubric,
            JudgeError::Runtime(_) => ErrorCode::JudgeRuntime,
            JudgeError::Client(_) => ErrorCode::JudgeClient,
            JudgeError::Batch(_) => ErrorCode::JudgeBatch,
            JudgeError::Key(e) => e.code(),
            JudgeError::Destination(e) => e.code(),
        }
    }
}

/// A guess of a judge model's family from its id (used for the self-preference exclusion in
/// agreement), following the MentalAlign grouping: o4-mini counts as gpt-4o-mini.
pub fn family_of_model(model: &str) -> Option<&'static str> {
    let m = model.to_ascii_lowercase();
    let families: [(&str, &str); 9] = [
        ("claude", "claude"),
        ("gemini", "gemini"),
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("o4-mini", "gpt-4o-mini"),
        ("gpt-4o", "gpt-4o"),
        ("deepseek", "deepseek"),
        ("llama", "llama"),
        ("qwen", "qwen"),
        ("mistral", "mistral"),
    ];
    families
        .iter()
        .find(|(needle, _)| m.contains(needle))
        .map(|(_, family)| *family)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_follow_the_mentalalign_grouping() {
        assert_eq!(
            family_of_model("claude-3-7-sonnet-20250219"),
            Some("claude"),
            "Claude models are one family"
        );
        assert_eq!(
            family_of_model("gpt-4o-mini-2024-07-18"),
            Some("gpt-4o-mini"),
            "gpt-4o-mini must not be taken for gpt-4o"
        );
        assert_eq!(
            family_of_model("o4-mini"),
            Some("gpt-4o-mini"),
            "the paper groups o4-mini with gpt-4o-mini"
        );
        assert_eq!(family_of_model("gpt-4o"), Some("gpt-4o"), "gpt-4o");
        assert_eq!(
            family_of_model("phi-3"),
            None,
            "unknown models get no family"
        );
    }
}
