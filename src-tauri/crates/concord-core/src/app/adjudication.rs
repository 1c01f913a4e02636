//! Adjudication after the blind ratings: the adjudicator's screen (the pairs to decide, with the
//! experts' values and rationales but never a source, model or judge score), the pairs that need
//! an adjudicator and the counts, recording a decision, giving a disputed response to one more
//! expert, and the agreement report and table against the consensus. Decisions are rows of
//! their own; a decision or a new assignment drops the cached reports, as a bulk write does.

use crate::app::open_study::OpenStudy;
use crate::panel::adjudication::{
    self, AdjudicationError, AdjudicationReview, AdjudicationStatus, AgreementReference,
    ConsensusAgreement, DecisionView, DiscrepancyRule, DiscrepantPair, Escalation, Panel,
    Resolution,
};
use crate::panel::agreement::{AgreementOptions, AgreementReport};
use crate::panel::agreement_table::TableView;

/// Everything the adjudicator's screen shows under `rule`.
pub fn review(
    study: &OpenStudy,
    rule: &DiscrepancyRule,
) -> Result<AdjudicationReview, AdjudicationError> {
    adjudication::review(study.store(), rule)
}

/// The pairs `rule` sends to an adjudicator (with the decided ones when `include_decided`).
pub fn discrepancies(
    study: &OpenStudy,
    rule: &DiscrepancyRule,
    include_decided: bool,
) -> Result<Vec<DiscrepantPair>, AdjudicationError> {
    Ok(Panel::load(study.store(), false)?.discrepancies(rule, include_decided))
}

/// How many pairs are unanimous, adjudicated or unresolved under `rule`.
pub fn status(
    study: &OpenStudy,
    rule: &DiscrepancyRule,
) -> Result<AdjudicationStatus, AdjudicationError> {
    Ok(Panel::load(study.store(), false)?.status(rule))
}

/// Record the adjudicator's decision on one pair.
pub fn resolve(
    study: &mut OpenStudy,
    resolution: &Resolution,
) -> Result<DecisionView, AdjudicationError> {
    adjudication::resolve(study.store_mut(), resolution)
}

/// Give each response `rule` finds disputed to one more expert, drawn with `seed`.
pub fn add_rater_on_disagreement(
    study: &mut OpenStudy,
    rule: &DiscrepancyRule,
    seed: u64,
) -> Result<Escalation, AdjudicationError> {
    adjudication::add_rater_on_disagreement(study.store_mut(), rule, seed)
}

/// The agreement report against `reference` (the experts, or the consensus after adjudication).
pub fn agreement_report(
    study: &OpenStudy,
    options: AgreementOptions,
    reference: AgreementReference,
) -> Result<AgreementReport, AdjudicationError> {
    adjudication::agreement_report(study.store(), options, reference)
}

/// The report and table against the consensus for `view`, with the adjudication counts.
pub fn consensus_agreement(
    study: &OpenStudy,
    options: AgreementOptions,
    view: TableView,
) -> Result<ConsensusAgreement, AdjudicationError> {
    adjudication::consensus_agreement(study.store(), options, view)
}
