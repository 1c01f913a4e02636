//! The agreement panel's span section: the span agreement report of a rubric with its codes, the
//! judges' unlocated quotes and the replies that carry spans, and one reply with every rater's
//! spans on a row of their own (`panel::span_view`). Both only read the study.

use crate::app::open_study::OpenStudy;
use crate::base::error_code::{Coded, ErrorCode};
use crate::panel::span_agreement::{SpanAgreementError, SpanAgreementOptions};
use crate::panel::span_view::{SpanPanel, SpanReplyView, SpanViewError};

impl Coded for SpanViewError {
    fn code(&self) -> ErrorCode {
        match self {
            SpanViewError::Store(e) | SpanViewError::Agreement(SpanAgreementError::Store(e)) => {
                e.code()
            }
            SpanViewError::Agreement(SpanAgreementError::UnknownRubric(_)) => ErrorCode::Rubric,
            SpanViewError::Agreement(_) | SpanViewError::NoSpans(_) => ErrorCode::Invalid,
        }
    }
}

/// The span section of `rubric`, its intervals from `resamples` bootstrap draws seeded by `seed`
/// (the figures `concord agreement --spans --rubric KEY --seed S --resamples N --json` prints).
pub fn span_panel(
    study: &OpenStudy,
    rubric: &str,
    seed: u64,
    resamples: usize,
) -> Result<SpanPanel, SpanViewError> {
    crate::panel::span_view::span_panel(
        study.store(),
        rubric,
        SpanAgreementOptions { resamples, seed },
    )
}

/// Reply `response_id` with every rater's spans, one row per rater.
pub fn span_reply(study: &OpenStudy, response_id: i64) -> Result<SpanReplyView, SpanViewError> {
    crate::panel::span_view::span_reply(study.store(), response_id)
}
