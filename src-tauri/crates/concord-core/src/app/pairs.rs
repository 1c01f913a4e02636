//! Pairwise preferences, the jobs both front ends call: `concord pairs design`, `pairs assign`,
//! `pairs status`, and an expert's verdict on a pair (the rating screen for pairs). Designing
//! and assigning change what the reports read, so they go through `store_mut`; a verdict too.
//! The pairwise agreement report ([`agreement`]) is a read.

use crate::app::open_study::OpenStudy;
use crate::base::error_code::{Coded, ErrorCode};
use crate::workflow::pairs::{
    self, DesignMethod, DesignReport, PairAssignmentReport, PairItem, PairProgress, PairQueue,
    PairStatus, PairsError, ShownChoice,
};

impl Coded for PairsError {
    fn code(&self) -> ErrorCode {
        match self {
            PairsError::Store(e) => e.code(),
            PairsError::Invalid(_) | PairsError::AlreadyAssigned(_) => ErrorCode::Invalid,
            PairsError::NoDesign(_) => ErrorCode::NotFound,
        }
    }
}

/// Draw and store the pairs of the study's pairwise rubric (`rubric`, or the shipped pairwise
/// form of the study's rubric) among the answers of `of`'s conversations.
pub fn design(
    study: &mut OpenStudy,
    rubric: Option<&str>,
    of: Option<&str>,
    method: DesignMethod,
    seed: u64,
) -> Result<DesignReport, PairsError> {
    pairs::design(study.store_mut(), rubric, of, method, seed)
}

/// Give the design's pairs to the study's experts, exactly `k` per pair.
pub fn assign(
    study: &mut OpenStudy,
    rubric: Option<&str>,
    k: usize,
    seed: u64,
) -> Result<PairAssignmentReport, PairsError> {
    pairs::assign(study.store_mut(), rubric, k, seed)
}

/// The design and every rater's progress on it.
pub fn status(study: &OpenStudy, rubric: Option<&str>) -> Result<PairStatus, PairsError> {
    pairs::status(study.store(), rubric)
}

/// [`status`] when the study has a pair design, `None` when it has none yet (the window then
/// offers to draw the pairs).
pub fn status_if_any(study: &OpenStudy) -> Result<Option<PairStatus>, PairsError> {
    match pairs::status(study.store(), None) {
        Ok(s) => Ok(Some(s)),
        Err(PairsError::NoDesign(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// An expert's verdict on one criterion of an assigned pair, in the terms they saw it.
pub fn rate_pair(
    study: &mut OpenStudy,
    rater_id: i64,
    pair_id: i64,
    criterion: &str,
    choice: Option<ShownChoice>,
    rationale: Option<&str>,
) -> Result<(), PairsError> {
    pairs::rate_pair(
        study.store_mut(),
        rater_id,
        pair_id,
        criterion,
        choice,
        rationale,
    )
}

/// The rater's pair queue and where to resume (the pair rating screen's start); their time on
/// task is counted from the first opening ([`pairs::open_pair_queue`]).
pub fn pair_queue(study: &mut OpenStudy, rater_id: i64) -> Result<PairQueue, PairsError> {
    pairs::open_pair_queue(study.store_keeping_reports(), rater_id)
}

/// Pair number `item` of the rater's queue, blinded, in the order this rater sees it.
pub fn pair_item(study: &OpenStudy, rater_id: i64, item: i64) -> Result<PairItem, PairsError> {
    pairs::pair_item(study.store(), rater_id, item)
}

/// The rater's choice on one criterion of pair number `item` (A, B, tie, or `None` to clear).
pub fn rate_pair_item(
    study: &mut OpenStudy,
    rater_id: i64,
    item: i64,
    criterion: &str,
    choice: Option<ShownChoice>,
) -> Result<PairProgress, PairsError> {
    pairs::rate_pair_item(study.store_mut(), rater_id, item, criterion, choice)
}

/// The rater's rationale for pair number `item` (empty clears it), committed before it returns.
pub fn set_pair_rationale(
    study: &mut OpenStudy,
    rater_id: i64,
    item: i64,
    rationale: &str,
) -> Result<(), PairsError> {
    pairs::set_pair_rationale(study.store_mut(), rater_id, item, rationale)
}

/// Flag pair number `item` for the lead, with a reason.
pub fn flag_pair(
    study: &mut OpenStudy,
    rater_id: i64,
    item: i64,
    reason: &str,
) -> Result<(), PairsError> {
    pairs::flag_pair(study.store_mut(), rater_id, item, reason)
}

/// The rater left pair number `item` after `seconds` on it.
pub fn leave_pair(
    study: &mut OpenStudy,
    rater_id: i64,
    item: i64,
    seconds: f64,
) -> Result<(), PairsError> {
    pairs::leave_pair(study.store_mut(), rater_id, item, seconds)
}

impl Coded for crate::panel::pairwise::PairwiseReportError {
    fn code(&self) -> ErrorCode {
        match self {
            crate::panel::pairwise::PairwiseReportError::Store(e) => e.code(),
            crate::panel::pairwise::PairwiseReportError::Invalid(_) => ErrorCode::Invalid,
        }
    }
}

/// The pairwise agreement report (`concord agreement --pairwise`, the panel's pairwise view):
/// Bradley–Terry leaderboards per rater group and criterion, agreement on preferences, and the
/// judges' position consistency and bias. A read.
pub fn agreement(
    study: &OpenStudy,
    options: &crate::panel::pairwise::PairwiseOptions,
) -> Result<crate::panel::pairwise::PairwiseReport, crate::panel::pairwise::PairwiseReportError> {
    crate::panel::pairwise::pairwise_report(study.store(), options)
}

/// [`agreement`] with the default options when the study has a pair design, `None` otherwise
/// (the panel shows its pairwise view only then).
pub fn agreement_if_any(
    study: &OpenStudy,
) -> Result<
    Option<crate::panel::pairwise::PairwiseReport>,
    crate::panel::pairwise::PairwiseReportError,
> {
    if pairs::designed_rubric(study.store(), None).is_err() {
        return Ok(None);
    }
    agreement(study, &crate::panel::pairwise::PairwiseOptions::default()).map(Some)
}
