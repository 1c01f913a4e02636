//! The questions reviewers ask of a judge study, asked of the open study: agreement split by a
//! facet of the responses (their category), the judges' corrected prevalence of each binary
//! criterion, agreement against the Dawid–Skene latent consensus, and the G- and D-studies of
//! the study's experts and judges, and the label budget a target precision needs.

use crate::app::open_study::OpenStudy;
use crate::panel::adjudication::{
    self, referenced_data, AdjudicationError, AgreementReference, LatentAgreement,
};
use crate::panel::agreement::AgreementOptions;
use crate::panel::agreement_table::TableView;
use crate::panel::gstudy::{gstudy_section, GStudySection};
use crate::panel::label_budget::{label_budget as plan_labels, LabelBudget, LabelBudgetQuestion};
use crate::panel::prevalence::{prevalence_rows, PrevalenceRow};
use crate::panel::strata::{by_facet, Facet, StratifiedReport};
use crate::rubric::Scale;
use crate::store::StoreResult;

/// The agreement report against `reference`, computed on each value of `facet` alone.
pub fn agreement_by(
    study: &OpenStudy,
    options: &AgreementOptions,
    reference: AgreementReference,
    facet: Facet,
) -> Result<StratifiedReport, AdjudicationError> {
    let (data, _) = referenced_data(study.store(), options, reference)?;
    Ok(by_facet(study.store(), &data, facet, options)?)
}

/// Every judge × binary criterion of `rubric` (of every rubric of the study with a binary
/// criterion when `None`): the corrected prevalence at confidence `level`, and with `allocate`
/// how that many expert labels should be split (from the held ratings of every response).
pub fn prevalence(
    study: &mut OpenStudy,
    rubric: Option<&str>,
    level: f64,
    allocate: Option<u64>,
) -> StoreResult<Vec<PrevalenceRow>> {
    let rubrics: Vec<String> = match rubric {
        Some(r) => vec![r.to_string()],
        None => study
            .store()
            .rubrics()?
            .into_iter()
            .filter(|s| s.rubric.criteria.iter().any(|c| c.scale == Scale::Binary))
            .map(|s| s.rubric.id)
            .collect(),
    };
    let mut rows = Vec::new();
    for r in rubrics {
        rows.extend(prevalence_rows(study.full_data(&r)?, level, allocate));
    }
    Ok(rows)
}

/// The report and table against the Dawid–Skene latent labels for `view`, with every fit.
pub fn latent_agreement(
    study: &OpenStudy,
    options: AgreementOptions,
    view: TableView,
) -> Result<LatentAgreement, AdjudicationError> {
    adjudication::latent_agreement(study.store(), options, view)
}

/// The G-studies of `rubric`: experts × responses (× occasions) and each judge × responses ×
/// repetitions, per criterion.
pub fn gstudy(study: &OpenStudy, rubric: &str) -> StoreResult<GStudySection> {
    gstudy_section(study.store(), rubric)
}

/// How many expert labels and judge-only answers `question` needs, with the study's judge–expert
/// pairs of `options`' rubric as the pilot.
pub fn label_budget(
    study: &mut OpenStudy,
    options: &AgreementOptions,
    question: &LabelBudgetQuestion,
) -> StoreResult<LabelBudget> {
    Ok(plan_labels(study.agreement_data(options)?, question))
}
