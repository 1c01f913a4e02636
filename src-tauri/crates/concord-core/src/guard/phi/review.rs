//! The PHI guard on a study: scan what an import brought in (or every text), list findings, and
//! the lead's two decisions — redact (the identifier becomes its typed placeholder in the stored
//! text) or keep the original, which needs a reason. Every decision is written to the audit
//! trail; a redaction records the SHA-256 of the text before and after, never the identifier.
//! Rater packages and exports call [`require_reviewed`], which refuses while findings are open
//! unless the lead overrides with a reason (also audited).

use super::{redact as redact_text, PhiKind, PhiSpan, Scanner};
use crate::base::error_code::ErrorCode;
use crate::store::{
    text_sha256, PhiFinding, PhiStatus, PhiText, PhiTextId, Store, StoreError, StudyTx,
};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, thiserror::Error)]
pub enum PhiError {
    #[error("{open} possible identifiers (PHI) found in the study's texts are not reviewed yet; review them (concord phi scan, concord phi redact / keep) or override with a reason before writing {what}")]
    Unreviewed { open: usize, what: String },
    #[error("keeping an identifier needs a reason")]
    ReasonRequired,
    #[error("no finding {0} in this study")]
    UnknownFinding(i64),
    #[error("finding {id} is already {status}")]
    AlreadyResolved { id: i64, status: &'static str },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl crate::base::error_code::Coded for PhiError {
    fn code(&self) -> ErrorCode {
        match self {
            PhiError::Unreviewed { .. } => ErrorCode::PhiUnreviewed,
            PhiError::ReasonRequired => ErrorCode::EmptyReason,
            PhiError::UnknownFinding(_) => ErrorCode::NotFound,
            PhiError::AlreadyResolved { .. } => ErrorCode::AlreadyResolved,
            PhiError::Store(e) => e.code(),
        }
    }
}

/// What a scan did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PhiScanSummary {
    /// Texts scanned.
    pub texts: usize,
    /// Open findings in the scanned texts.
    pub found: usize,
    /// Open findings in the whole study afterwards.
    pub open: usize,
    /// Open findings per class in the whole study.
    pub by_kind: BTreeMap<String, usize>,
}

/// Which findings a decision applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    Ids(Vec<i64>),
    Kinds(Vec<PhiKind>),
}

fn scan_texts(
    tx: &mut StudyTx<'_>,
    scanner: &Scanner,
    all: bool,
) -> Result<(usize, usize), StoreError> {
    // A text without findings in which the scan finds nothing has nothing to replace: it is
    // scanned as it is read and neither kept nor queried again (an import of 200,000 turns).
    let with_findings = tx.phi_texts_with_findings()?;
    let mut spans_of = Vec::new();
    let (read, texts) = tx.take_phi_pending(all, |id, text| {
        let spans = scanner.scan(text);
        let keep = !spans.is_empty() || with_findings.contains(&id);
        if keep {
            spans_of.push(spans);
        }
        keep
    })?;
    let mut found = 0;
    for (t, spans) in texts.iter().zip(spans_of) {
        found += tx.replace_phi_findings(t, &spans)?;
    }
    Ok((read, found))
}

fn by_kind(store: &Store) -> Result<BTreeMap<String, usize>, StoreError> {
    let mut out = BTreeMap::new();
    for f in store.phi_findings(Some(PhiStatus::Open))? {
        *out.entry(f.kind.as_str().to_string()).or_insert(0) += 1;
    }
    Ok(out)
}

/// Scan the texts written since the last scan (after an import), or every text when `all`.
pub fn scan(store: &mut Store, all: bool, actor: &str) -> Result<PhiScanSummary, PhiError> {
    let scanner = Scanner::new(&store.phi_terms()?);
    let (texts, found) = store.write(|tx| {
        let (texts, found) = scan_texts(tx, &scanner, all)?;
        if texts > 0 {
            tx.audit(
                actor,
                "phi.scan",
                &serde_json::json!({"texts": texts, "found": found, "all": all}),
            )?;
        }
        Ok::<_, StoreError>((texts, found))
    })?;
    Ok(PhiScanSummary {
        texts,
        found,
        open: store.open_phi_findings()?,
        by_kind: by_kind(store)?,
    })
}

/// Replace the lead's list of names and places, then rescan every text with it.
pub fn set_terms(
    store: &mut Store,
    terms: &[super::PhiTerm],
    actor: &str,
) -> Result<PhiScanSummary, PhiError> {
    store.write(|tx| {
        tx.set_phi_terms(terms)?;
        tx.audit(
            actor,
            "phi.terms",
            &serde_json::json!({"terms": terms.len()}),
        )
    })?;
    scan(store, true, actor)
}

/// Findings, all or with one status.
pub fn findings(store: &Store, status: Option<PhiStatus>) -> Result<Vec<PhiFinding>, PhiError> {
    Ok(store.phi_findings(status)?)
}

/// Characters of the surrounding text the review queue shows on each side of a finding.
pub const CONTEXT_CHARS: usize = 60;

/// A finding as the review queue shows it: for an open one, the identifier in its context
/// (`before`, `matched`, `after`, from the text as it is now); for a decided one, the decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PhiReviewItem {
    #[serde(flatten)]
    pub finding: PhiFinding,
    pub before: String,
    pub matched: String,
    pub after: String,
}

/// The review queue: every finding (open first), with counts per status.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PhiReview {
    pub open: usize,
    pub kept: usize,
    pub redacted: usize,
    pub items: Vec<PhiReviewItem>,
}

/// The review queue of the study's findings (texts not scanned yet are not in it: imports scan
/// what they bring in, and [`require_reviewed`] scans before it decides).
pub fn review_queue(store: &Store) -> Result<PhiReview, PhiError> {
    let all = store.phi_findings(None)?;
    let count = |s: PhiStatus| all.iter().filter(|f| f.status == s).count();
    let (open, kept, redacted) = (
        count(PhiStatus::Open),
        count(PhiStatus::Kept),
        count(PhiStatus::Redacted),
    );
    let mut texts: BTreeMap<PhiTextId, Option<Vec<char>>> = BTreeMap::new();
    let mut items = Vec::with_capacity(all.len());
    for f in all {
        let (mut before, mut matched, mut after) = (String::new(), String::new(), String::new());
        if f.status == PhiStatus::Open {
            let key = f.text_id();
            if let std::collections::btree_map::Entry::Vacant(slot) = texts.entry(key) {
                slot.insert(store.phi_text_of(key)?.map(|t| t.text.chars().collect()));
            }
            if let Some(Some(chars)) = texts.get(&key) {
                let end = f.end.min(chars.len());
                let start = f.start.min(end);
                before = chars[start.saturating_sub(CONTEXT_CHARS)..start]
                    .iter()
                    .collect();
                matched = chars[start..end].iter().collect();
                after = chars[end..(end + CONTEXT_CHARS).min(chars.len())]
                    .iter()
                    .collect();
            }
        }
        items.push(PhiReviewItem {
            finding: f,
            before,
            matched,
            after,
        });
    }
    // Open findings first, each group in the order they were found.
    items.sort_by_key(|i| i.finding.status != PhiStatus::Open);
    Ok(PhiReview {
        open,
        kept,
        redacted,
        items,
    })
}

fn selected(tx: &StudyTx<'_>, selection: &Selection) -> Result<Vec<PhiFinding>, PhiError> {
    match selection {
        Selection::Ids(ids) => {
            let found = tx.phi_findings_by_id(ids)?;
            for id in ids {
                match found.iter().find(|f| f.id == *id) {
                    None => return Err(PhiError::UnknownFinding(*id)),
                    Some(f) if f.status != PhiStatus::Open => {
                        return Err(PhiError::AlreadyResolved {
                            id: *id,
                            status: f.status.as_str(),
                        })
                    }
                    Some(_) => {}
                }
            }
            Ok(found)
        }
        Selection::Kinds(kinds) => Ok(tx
            .open_phi_findings_in_tx()?
            .into_iter()
            .filter(|f| kinds.contains(&f.kind))
            .collect()),
    }
}

/// Redact the selected open findings: each becomes its class's placeholder in the stored text,
/// the text is scanned again (so the offsets of findings left open stay right), and one audit
/// entry per text records the finding ids and the text's SHA-256 before and after. Returns how
/// many findings were redacted.
pub fn redact(store: &mut Store, selection: &Selection, actor: &str) -> Result<usize, PhiError> {
    let scanner = Scanner::new(&store.phi_terms()?);
    store.write(|tx| {
        let chosen = selected(tx, selection)?;
        let mut per_text: BTreeMap<PhiTextId, Vec<PhiFinding>> = BTreeMap::new();
        for f in chosen {
            per_text.entry(f.text_id()).or_default().push(f);
        }
        let mut redacted = 0;
        for (text, list) in per_text {
            let Some(before) = tx.phi_text(text)? else {
                continue;
            };
            let spans: Vec<PhiSpan> = list
                .iter()
                .map(|f| PhiSpan {
                    kind: f.kind,
                    start: f.start,
                    end: f.end,
                })
                .collect();
            let after = redact_text(&before.text, &spans);
            tx.set_phi_text(text, &after)?;
            // Rescanned just below, so no longer pending.
            tx.clear_phi_pending(text)?;
            for f in &list {
                tx.resolve_phi_finding(f.id, PhiStatus::Redacted, None, actor)?;
            }
            redacted += list.len();
            let now = PhiText {
                text: after,
                ..before.clone()
            };
            let fresh = scanner.scan(&now.text);
            tx.replace_phi_findings(&now, &fresh)?;
            tx.audit(
                actor,
                "phi.redact",
                &serde_json::json!({
                    "item": before.item,
                    "field": before.field().as_str(),
                    "findings": list.iter().map(|f| f.id).collect::<Vec<_>>(),
                    "kinds": list.iter().map(|f| f.kind.as_str()).collect::<Vec<_>>(),
                    "from_sha256": text_sha256(&before.text),
                    "to_sha256": text_sha256(&now.text),
                }),
            )?;
        }
        Ok(redacted)
    })
}

/// Keep the originals of the selected open findings (the lead's explicit choice, with a reason).
pub fn keep(
    store: &mut Store,
    selection: &Selection,
    reason: &str,
    actor: &str,
) -> Result<usize, PhiError> {
    if reason.trim().is_empty() {
        return Err(PhiError::ReasonRequired);
    }
    store.write(|tx| {
        let chosen = selected(tx, selection)?;
        for f in &chosen {
            tx.resolve_phi_finding(f.id, PhiStatus::Kept, Some(reason.trim()), actor)?;
        }
        if !chosen.is_empty() {
            tx.audit(
                actor,
                "phi.keep",
                &serde_json::json!({
                    "findings": chosen.iter().map(|f| f.id).collect::<Vec<_>>(),
                    "reason": reason.trim(),
                }),
            )?;
        }
        Ok(chosen.len())
    })
}

/// Refuse to write `what` (a package, an export) while findings are open, unless `override_reason`
/// is given — then the override is recorded in the audit trail and the write may go ahead. Texts
/// not scanned yet are scanned first.
pub fn require_reviewed(
    store: &mut Store,
    what: &str,
    override_reason: Option<&str>,
    actor: &str,
) -> Result<(), PhiError> {
    let open = scan(store, false, actor)?.open;
    if open == 0 {
        return Ok(());
    }
    match override_reason.map(str::trim).filter(|r| !r.is_empty()) {
        None => Err(PhiError::Unreviewed {
            open,
            what: what.to_string(),
        }),
        Some(reason) => {
            store.write(|tx| {
                tx.audit(
                    actor,
                    "phi.override",
                    &serde_json::json!({"what": what, "open": open, "reason": reason}),
                )
            })?;
            Ok(())
        }
    }
}
/// Who writes an export, and the lead's reason to write it although PHI findings are open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhiGate<'a> {
    /// The person recorded in the audit trail.
    pub actor: &'a str,
    /// Write despite open findings; the reason goes to the audit trail.
    pub override_reason: Option<&'a str>,
}
