//! Calibration before the regular queue: the lead's gold items and pass rule, every expert's
//! standing, the expert's items and answers (kept apart from ratings), and the lead's recorded
//! override of the gate. The writes go through the study's bulk write access, which drops the
//! cached reports, as the front ends always did.

use crate::app::open_study::OpenStudy;
use crate::workflow::calibration::{
    self, CalibrationError, CalibrationItem, CalibrationStatus, PassRule,
};

/// Set the gold key of `criterion` on `item`, with the explanation the expert is shown.
pub fn set_key(
    study: &mut OpenStudy,
    item: &str,
    criterion: &str,
    value: i64,
    explanation: &str,
) -> Result<(), CalibrationError> {
    calibration::set_key(study.store_mut(), item, criterion, value, explanation)
}

/// Set the pass rule.
pub fn set_pass_rule(study: &mut OpenStudy, rule: &PassRule) -> Result<(), CalibrationError> {
    calibration::set_pass_rule(study.store_mut(), rule)
}

/// Every expert's calibration.
pub fn statuses(study: &OpenStudy) -> Result<Vec<CalibrationStatus>, CalibrationError> {
    calibration::statuses(study.store())
}

/// Where the expert `rater_id` stands.
pub fn status_for(study: &OpenStudy, rater_id: i64) -> Result<CalibrationStatus, CalibrationError> {
    calibration::status_for(study.store(), rater_id)
}

/// Gold item `number` as the expert `rater_id` sees it.
pub fn item_for(
    study: &OpenStudy,
    rater_id: i64,
    number: usize,
) -> Result<CalibrationItem, CalibrationError> {
    calibration::item_for(study.store(), rater_id, number)
}

/// The expert `rater_id`'s answers to gold item `number`; returns the item with its key shown.
pub fn answer_for(
    study: &mut OpenStudy,
    rater_id: i64,
    number: usize,
    values: &[(String, i64)],
) -> Result<CalibrationItem, CalibrationError> {
    calibration::answer_for(study.store_mut(), rater_id, number, values)
}

/// The expert named `rater`'s answers to gold item `number`; returns the item with its key shown.
pub fn answer(
    study: &mut OpenStudy,
    rater: &str,
    number: usize,
    values: &[(String, i64)],
) -> Result<CalibrationItem, CalibrationError> {
    calibration::answer(study.store_mut(), rater, number, values)
}

/// Open the regular queue of `rater` by the lead's recorded override.
pub fn override_gate(
    study: &mut OpenStudy,
    rater: &str,
    lead: &str,
    reason: &str,
) -> Result<CalibrationStatus, CalibrationError> {
    calibration::override_gate(study.store_mut(), rater, lead, reason)
}
