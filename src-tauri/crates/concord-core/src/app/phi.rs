//! The PHI guard from the lead's side: scan the texts written since the last scan, the review
//! queue (each open finding in its context), the lead's decisions (redact to typed placeholders,
//! or keep with a reason; audited), and the gate every package, export, sheet and methods
//! appendix passes (refused while findings are open unless the lead overrides with a reason).
//! Texts change, ratings do not, so the cached agreement reports stay valid.

use crate::app::open_study::OpenStudy;
use crate::guard::phi::review::{self, PhiError, PhiGate, PhiReview, PhiScanSummary};

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
