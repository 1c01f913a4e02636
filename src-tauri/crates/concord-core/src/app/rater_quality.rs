//! The raters screen and `concord raters quality`: each expert's severity, drift, test–retest,
//! time per item and straight-lining. A read.

use crate::app::open_study::OpenStudy;
use crate::panel::rater_quality::{self, QualityOptions, RaterQualityReport};
use crate::store::StoreError;

/// The rater-quality report under `options`.
pub fn report(
    study: &OpenStudy,
    options: &QualityOptions,
) -> Result<RaterQualityReport, StoreError> {
    rater_quality::report(study.store(), options)
}
