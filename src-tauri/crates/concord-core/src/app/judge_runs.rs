//! The judge-run screen and `concord judge` apart from starting a run (that is
//! [`judge_start`](crate::app::judge_start)): the rubric's default prompt, a run's cost preview,
//! where a run would send its requests and take its key from (the core's endpoint and key-source
//! rule), the runs in the study, one run's status, its failed calls and the exact prompt of one
//! of its calls rendered again from the study beside the hash recorded when it was sent (all
//! reads), the study's aggregate of a judge's repetitions (read and chosen), the judges'
//! reliability report (and the agreement panel's section drawn from it), and an API key put in
//! the OS keyring.

use crate::app::open_study::OpenStudy;
use crate::app::paths::{write_output, PathError};
use crate::base::error_code::{Coded, ErrorCode};
pub use crate::judge::batch_file::{self, BatchFileExport, BatchFileImport};
use crate::judge::scores::{self, RepetitionAggregate};
use crate::judge::RunPlan;
use crate::judge::{
    self, ApiKey, CallFailure, Destination, JudgeError, KeyChoice, KeyError, PromptTemplate,
    RunPreview, RunSettings, RunStatus,
};
use crate::panel::judge_reliability::{
    judge_reliability, reliability_section, JudgeReliability, ReliabilityOptions,
    ReliabilitySection,
};
use std::io::Write as _;
use std::path::Path;

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

/// Which models the provider says answered `run`'s calls, and whether that is a change from the
/// model it asked for.
pub fn answering(study: &OpenStudy, run: &RunStatus) -> Result<judge::RunAnswering, JudgeError> {
    judge::answering(study.store(), run)
}

/// The quotes of run `run_id`'s judge that could not be located in their replies; `None` when
/// the run did not ask for spans.
pub fn unlocated_quotes(
    study: &OpenStudy,
    run_id: i64,
) -> Result<Option<Vec<judge::spans::UnlocatedQuote>>, JudgeError> {
    judge::spans::unlocated(study.store(), run_id)
}

/// The failed calls of run `run_id` with their raw outputs.
pub fn failures(study: &OpenStudy, run_id: i64) -> Result<Vec<CallFailure>, JudgeError> {
    judge::failures(study.store(), run_id)
}

/// The prompt of one call of run `run_id`, rendered from the study, beside the hash recorded
/// when it was sent.
pub fn call_prompt(
    study: &OpenStudy,
    run_id: i64,
    choice: &judge::CallChoice,
) -> Result<judge::CallPrompt, JudgeError> {
    judge::call_prompt(study.store(), run_id, choice)
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

/// The agreement panel's "Judge reliability" section for `options.rubric`: the report with what
/// its plots draw, or why it is empty (no judge runs, or none answered more than once).
pub fn reliability_panel(
    study: &OpenStudy,
    options: &ReliabilityOptions,
) -> Result<ReliabilitySection, JudgeError> {
    Ok(reliability_section(study.store(), options)?)
}

/// Why a batch file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum BatchFileError {
    #[error(transparent)]
    Judge(#[from] JudgeError),
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("cannot read {path}: {detail}")]
    Read { path: String, detail: String },
}

impl Coded for BatchFileError {
    fn code(&self) -> ErrorCode {
        match self {
            BatchFileError::Judge(e) => e.code(),
            BatchFileError::Path(e) => e.code(),
            BatchFileError::Read { .. } => ErrorCode::Io,
        }
    }
}

/// `concord judge batch-file export`: open the run of `settings` (or find it, as a live run
/// would) and write its open calls to `out` in the OpenAI batch format (`judge::batch_file`);
/// a file already there is replaced only when `overwrite` is set.
pub fn batch_file_export(
    study: &mut OpenStudy,
    settings: &RunSettings,
    out: &Path,
    overwrite: bool,
) -> Result<(RunPlan, BatchFileExport), BatchFileError> {
    let plan = judge::open_run(study.store_mut(), settings)?;
    let store = study.store();
    let written = write_output(
        study,
        out,
        overwrite,
        |staged| -> Result<_, BatchFileError> {
            let mut w = std::io::BufWriter::new(staged.file());
            let written = batch_file::export_batch_file(store, plan.run_id, &mut w)?;
            w.flush().map_err(|e| BatchFileError::Read {
                path: out.display().to_string(),
                detail: e.to_string(),
            })?;
            Ok(written)
        },
    )?;
    Ok((plan, written))
}

/// `concord judge batch-file import`: read a batch output file back into run `run_id`.
pub fn batch_file_import(
    study: &mut OpenStudy,
    run_id: i64,
    file: &Path,
) -> Result<BatchFileImport, BatchFileError> {
    let open = || std::fs::File::open(file).map(std::io::BufReader::new);
    open().map_err(|e| BatchFileError::Read {
        path: file.display().to_string(),
        detail: e.to_string(),
    })?;
    Ok(batch_file::import_batch_file(
        study.store_mut(),
        run_id,
        open,
    )?)
}

/// `concord judge key set`: store `key` in the OS keyring under `account` (the rule on accounts applies).
pub fn save_key(account: &str, key: &ApiKey) -> Result<(), KeyError> {
    judge::key::save_to_keyring(account, key)
}
