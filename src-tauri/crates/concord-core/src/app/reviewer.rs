//! The questions reviewers ask of a judge study, asked of the open study: agreement split by a
//! facet of the responses (their category).

use crate::app::open_study::OpenStudy;
use crate::panel::adjudication::{referenced_data, AdjudicationError, AgreementReference};
use crate::panel::agreement::AgreementOptions;
use crate::panel::strata::{by_facet, Facet, StratifiedReport};

/// The agreement report against `reference`, computed on each value of `facet` alone.
pub fn agreement_by(
    study: &OpenStudy,
    options: &AgreementOptions,
    reference: AgreementReference,
    facet: Facet,
) -> Result<StratifiedReport, AdjudicationError> {
    let data = referenced_data(study.store(), options, reference)?;
    Ok(by_facet(study.store(), &data, facet, options)?)
}
