//! `concord signoff revise`: the lead changes one first-occasion rating of an expert after it was
//! signed, with the reason the change is recorded under (the only way a signed value changes).
//! The study's bulk write access drops the cached reports, as a rating write must.

use crate::app::open_study::OpenStudy;
use crate::base::error_code::{Coded, ErrorCode};
use crate::base::text::quoted;
use crate::store::{Occasion, RatingInput, StoreError};
use crate::workflow::signoff::SignoffError;

/// Why a revision was refused.
#[derive(Debug, thiserror::Error)]
pub enum ReviseError {
    #[error(transparent)]
    Signoff(#[from] SignoffError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no response {q0} in this study", q0 = quoted(&.0))]
    UnknownItem(String),
}

impl Coded for ReviseError {
    fn code(&self) -> ErrorCode {
        match self {
            ReviseError::Signoff(e) => e.code(),
            ReviseError::Store(e) => e.code(),
            ReviseError::UnknownItem(_) => ErrorCode::NotFound,
        }
    }
}

/// Change `rater`'s value of `criterion` on `item` to `value`, recorded with `reason`.
pub fn revise(
    study: &mut OpenStudy,
    rater: &str,
    item: &str,
    criterion: &str,
    value: i64,
    reason: &str,
) -> Result<(), ReviseError> {
    let store = study.store_mut();
    let rater_id = store
        .expert_by_name(rater)?
        .ok_or_else(|| SignoffError::UnknownExpert(rater.to_string()))?
        .id;
    let response_id = *store
        .response_item_names()?
        .iter()
        .find(|(_, label)| *label == item)
        .ok_or_else(|| ReviseError::UnknownItem(item.to_string()))?
        .0;
    let rubric = store
        .rubrics()?
        .into_iter()
        .find(|s| s.rubric.criteria.iter().any(|c| c.id == *criterion))
        .map(|s| s.rubric.id)
        .ok_or_else(|| StoreError::NotFound {
            what: "criterion",
            key: criterion.to_string(),
        })?;
    let criterion_id = store.criterion_id(&rubric, criterion)?;
    store.write(|tx| {
        tx.set_rating_with_reason(
            &RatingInput {
                rater_id,
                response_id,
                criterion_id,
                occasion: Occasion::First,
                value: Some(value),
                raw_value: None,
                rationale: None,
                origin: "cli",
            },
            reason,
        )
    })?;
    Ok(())
}
