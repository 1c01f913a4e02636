//! The judge-run screen and `concord judge` apart from starting a run (that is
//! [`judge_start`](crate::app::judge_start)): the rubric's default prompt, a run's cost preview,
//! where a run would send its requests and take its key from (the core's endpoint and key-source
//! rule), the runs in the study, one run's status and its failed calls (all reads), the study's
//! aggregate of a judge's repetitions (read and chosen), the judges' reliability report, and an API
//! key put in the OS keyring.

use crate::app::open_study::OpenStudy;
use crate::judge::scores::{self, RepetitionAggregate};
use crate::judge::{
    self, ApiKey, CallFailure, Destination, JudgeError, KeyChoice, KeyError, PromptTemplate,
    RunPreview, RunSettings, RunStatus,
};
use crate::panel::judge_reliability::{judge_reliability, JudgeReliability, ReliabilityOptions};

/// The default prompt of `rubric` (the study's only rubric when `None`).
pub fn default_prompt(
    study: &OpenStudy,
    rubric: Option<&str>,
) -> Result<PromptTemplate, JudgeError> {
    judge::default_prompt(study.store(), rubric)
}

/// What a run with `settings` would do: its responses, calls and estimated cost.
pub fn preview(study: &OpenStudy, settings: &RunSettings) -> Result<RunPreview, JudgeError> {
    judge::preview_run(study.store(), settings)
}

/// Where a run with `settings` and `key` sends its requests and takes its key from, or the rule's refusal.
pub fn destination(settings: &RunSettings, key: &KeyChoice) -> Result<Destination, JudgeError> {
    judge::destination(settings, key)
}

/// Every judge run in the study with its counts.
pub fn runs(study: &OpenStudy) -> Result<Vec<RunStatus>, JudgeError> {
    judge::runs(study.store())
}

/// Every run's reply mode (structured or free text) with its unreadable replies.
pub fn reply_modes(study: &OpenStudy) -> Result<Vec<judge::ReplyMode>, JudgeError> {
    judge::reply_modes(study.store())
}

/// One run's status (`judge_no_such_run` when the study has no run `run_id`).
pub fn run_status(study: &OpenStudy, run_id: i64) -> Result<RunStatus, JudgeError> {
    judge::run_status(study.store(), run_id)
}

/// The failed calls of run `run_id` with their raw outputs.
pub fn failures(study: &OpenStudy, run_id: i64) -> Result<Vec<CallFailure>, JudgeError> {
    judge::failures(study.store(), run_id)
}

/// The study's aggregate of a judge's repetitions (median unless chosen).
pub fn repetition_aggregate(study: &OpenStudy) -> Result<RepetitionAggregate, JudgeError> {
    Ok(scores::study_aggregate(study.store())?)
}

/// Choose the study's aggregate of a judge's repetitions; every report reads the judges'
/// scores anew.
pub fn set_repetition_aggregate(
    study: &mut OpenStudy,
    aggregate: RepetitionAggregate,
) -> Result<(), JudgeError> {
    Ok(scores::set_study_aggregate(study.store_mut(), aggregate)?)
}

/// Per judge × criterion: consistency across repetitions, repetitions needed, calibration and the
/// bias audit (`concord judge reliability`).
pub fn reliability(
    study: &OpenStudy,
    options: &ReliabilityOptions,
) -> Result<Vec<JudgeReliability>, JudgeError> {
    Ok(judge_reliability(study.store(), options)?)
}

/// `concord judge key set`: store `key` in the OS keyring under `account` (the rule on accounts applies).
pub fn save_key(account: &str, key: &ApiKey) -> Result<(), KeyError> {
    judge::key::save_to_keyring(account, key)
}
