//! Setting a study up, as the lead does before anyone rates: add a custom rubric file, add the
//! experts, preview and write the assignment (sample, exact-k overlap, calibration and retest
//! items), and read it back with every expert's progress. The rules themselves are
//! `workflow::assignment`; this file gives the front ends one call per step.

use crate::app::open_study::OpenStudy;
use crate::app::paths::PathError;
use crate::base::error_code::{Coded, ErrorCode};
use crate::workflow::assignment::{
    self, AssignmentError, AssignmentOptions, AssignmentSummary, AssignmentTable, ExpertAdded,
    RubricAdded,
};
use std::path::Path;

/// Why a setup step was refused.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("{path}: cannot read the rubric file: {detail}")]
    ReadRubric { path: String, detail: String },
    #[error(transparent)]
    Assignment(#[from] AssignmentError),
    #[error("the demo study fills only an empty study; this one already holds {conversations} conversations")]
    NotEmpty { conversations: i64 },
    #[error(transparent)]
    Demo(#[from] crate::intake::demo::DemoError),
}

impl Coded for SetupError {
    fn code(&self) -> ErrorCode {
        match self {
            SetupError::Path(e) => e.code(),
            SetupError::ReadRubric { .. } => ErrorCode::Unreadable,
            SetupError::Assignment(AssignmentError::Rubric(_)) => ErrorCode::Rubric,
            SetupError::Assignment(AssignmentError::Store(e)) => e.code(),
            SetupError::Assignment(AssignmentError::AlreadyAssigned) => ErrorCode::AssignmentExists,
            SetupError::Assignment(AssignmentError::AnswersWithoutText { .. }) => {
                ErrorCode::AnswersWithoutText
            }
            SetupError::Assignment(_) => ErrorCode::Assignment,
            SetupError::NotEmpty { .. } => ErrorCode::Demo,
            SetupError::Demo(e) => e.code(),
        }
    }
}

/// Start an empty study from the demo study's content (its conversations, answers, experts and
/// judges), as the empty overview offers; refused once the study holds conversations.
pub fn start_from_demo(study: &mut OpenStudy, seed: u64) -> Result<(), SetupError> {
    let conversations = study
        .store()
        .overview()
        .map_err(crate::intake::demo::DemoError::from)?
        .conversations;
    if conversations > 0 {
        return Err(SetupError::NotEmpty { conversations });
    }
    crate::intake::demo::populate_demo(study.store_mut(), seed)?;
    Ok(())
}

/// Add a custom rubric file (TOML or JSON) unless the identical rubric is there.
pub fn add_rubric(study: &mut OpenStudy, path: &Path) -> Result<RubricAdded, SetupError> {
    let (text, name) = rubric_text(path)?;
    Ok(assignment::add_rubric_file(
        study.store_mut(),
        &text,
        &name,
    )?)
}

/// Read and check a rubric file without a study, so that a study is created for a rubric only
/// when the rubric is valid (`concord rubric add` on a study that does not exist yet).
pub fn check_rubric(path: &Path) -> Result<(), SetupError> {
    let (text, name) = rubric_text(path)?;
    crate::rubric::Rubric::parse_named(&text, &name).map_err(AssignmentError::from)?;
    Ok(())
}

/// A rubric file's text and its name.
fn rubric_text(path: &Path) -> Result<(String, String), SetupError> {
    let text = crate::rubric::read_text(path).map_err(|e| SetupError::ReadRubric {
        path: path.display().to_string(),
        detail: e.to_string(),
    })?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((text, name))
}

/// Add an expert by name (an existing expert of that name is returned as is); `queue_seed`
/// orders the expert's queue.
pub fn add_expert(
    study: &mut OpenStudy,
    name: &str,
    queue_seed: u64,
) -> Result<ExpertAdded, SetupError> {
    Ok(assignment::add_expert(study.store_mut(), name, queue_seed)?)
}

/// What `options` would assign, without writing anything.
pub fn preview_assignment(
    study: &OpenStudy,
    options: &AssignmentOptions,
) -> Result<AssignmentSummary, SetupError> {
    Ok(assignment::preview(study.store(), options)?)
}

/// Draw the sample and write the assignment.
pub fn assign(
    study: &mut OpenStudy,
    options: &AssignmentOptions,
) -> Result<AssignmentSummary, SetupError> {
    Ok(assignment::assign(study.store_mut(), options)?)
}

/// The assignment with every expert's progress.
pub fn assignment_table(study: &OpenStudy) -> Result<AssignmentTable, SetupError> {
    Ok(assignment::progress(study.store())?)
}
