//! The PHI guard from the lead's side: scan the texts written since the last scan, the review
//! queue (each open finding in its context), the lead's decisions (redact to typed placeholders,
//! or keep with a reason; audited), and the gate every package, export, sheet and methods
//! appendix passes (refused while findings are open unless the lead overrides with a reason).
//! Texts change, ratings do not, so the cached agreement reports stay valid. `concord phi` has
//! the same steps by name (a terms file, every text, a selection), through the bulk write access.

use crate::app::open_study::OpenStudy;
use crate::guard::phi::parse_terms;
use crate::guard::phi::review::{self, PhiError, PhiGate, PhiReview, PhiScanSummary, Selection};
use crate::store::{PhiFinding, PhiStatus};

/// The lead's decision on PHI findings.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PhiDecision {
    /// Replace each identifier by its typed placeholder.
    Redact,
    /// Keep the originals on purpose.
    Keep { reason: String },
}

/// Scan the texts written since the last scan (what an import brought in), as `actor`.
pub fn scan_phi(study: &mut OpenStudy, actor: &str) -> Result<PhiScanSummary, PhiError> {
    review::scan(study.store_keeping_reports(), false, actor)
}

/// Every finding, open ones in their context.
pub fn phi_review(study: &OpenStudy) -> Result<PhiReview, PhiError> {
    review::review_queue(study.store())
}

/// Redact the findings `ids` (typed placeholders in the stored texts), or keep them with a
/// reason; returns the review queue afterwards.
pub fn decide_phi(
    study: &mut OpenStudy,
    ids: &[i64],
    decision: &PhiDecision,
    actor: &str,
) -> Result<PhiReview, PhiError> {
    let selection = review::Selection::Ids(ids.to_vec());
    let store = study.store_keeping_reports();
    match decision {
        PhiDecision::Redact => review::redact(store, &selection, actor)?,
        PhiDecision::Keep { reason } => review::keep(store, &selection, reason, actor)?,
    };
    review::review_queue(study.store())
}

/// Refuse to write `what` while findings are open, unless the gate carries a reason (recorded).
pub(crate) fn require_reviewed(
    study: &mut OpenStudy,
    what: &str,
    gate: PhiGate<'_>,
) -> Result<(), PhiError> {
    review::require_reviewed(
        study.store_keeping_reports(),
        what,
        gate.override_reason,
        gate.actor,
    )
}

/// For `concord phi scan`: scan the texts written since the last scan (every text with `all`).
pub fn scan_texts(
    study: &mut OpenStudy,
    all: bool,
    actor: &str,
) -> Result<PhiScanSummary, PhiError> {
    review::scan(study.store_mut(), all, actor)
}

/// Replace the lead's list of names and places (one a line, as in a terms file) and scan every
/// text against it.
pub fn set_terms(
    study: &mut OpenStudy,
    list: &str,
    actor: &str,
) -> Result<PhiScanSummary, PhiError> {
    review::set_terms(study.store_mut(), &parse_terms(list), actor)
}

/// The findings with `status` (every finding when `None`).
pub fn findings(study: &OpenStudy, status: Option<PhiStatus>) -> Result<Vec<PhiFinding>, PhiError> {
    review::findings(study.store(), status)
}

/// How many findings are still open.
pub fn open_findings(study: &OpenStudy) -> Result<usize, PhiError> {
    Ok(study.store().open_phi_findings()?)
}

/// For `concord phi redact`: replace the selected identifiers by their typed placeholders.
pub fn redact(
    study: &mut OpenStudy,
    selection: &Selection,
    actor: &str,
) -> Result<usize, PhiError> {
    review::redact(study.store_mut(), selection, actor)
}

/// For `concord phi keep`: keep the selected originals on purpose, with `reason`.
pub fn keep(
    study: &mut OpenStudy,
    selection: &Selection,
    reason: &str,
    actor: &str,
) -> Result<usize, PhiError> {
    review::keep(study.store_mut(), selection, reason, actor)
}
