//! The evidence spans an expert marks while rating: a part of the reply they are rating,
//! `[start, end)` in Unicode scalar values of its text, with one of the rubric's codes and, when
//! the code declares levels, a severity. An expert adds a span, changes its code, severity or
//! extent, and removes it; each change is its own write transaction, durable when it returns,
//! with an audit entry naming the expert and what changed (the removed span's code and bounds
//! included), and the `span` rows sealed by the audit chain like ratings, so a span added,
//! changed or removed outside Concord fails `audit verify`.
//!
//! Like the rating screen's values, spans are addressed by the item's number in the expert's
//! queue and, within it, by the span's own code and bounds (an expert cannot mark the same code
//! over the same characters twice): never by a response or row id. What the screen receives
//! ([`ItemSpans`]) holds the rubric's codes and this expert's spans on this item only — no
//! source, no other rater's or judge's spans (blinding).

use crate::base::error_code::{Coded, ErrorCode};
use crate::base::text::quoted;
use crate::rubric::{Code, Scope};
use crate::store::{NewSpan, SpanOrigin, SpanRecord, Store, StoreError};
use crate::workflow::queue::{item_response, QueueError};
use serde::{Deserialize, Serialize};

/// Why a span was refused.
#[derive(Debug, thiserror::Error)]
pub enum SpanError {
    #[error("item {item} is a whole conversation, not a reply: spans mark a reply's text")]
    SessionItem { item: i64 },
    #[error("item {item} has no reply text in this study: there is nothing to mark")]
    NoText { item: i64 },
    #[error("this item's rubric declares no span codes")]
    NoCodes,
    #[error("{q0} is not one of this rubric's span codes", q0 = quoted(&.0))]
    UnknownCode(String),
    #[error("code {q0} has no severity level {q1}; its levels are {levels}", q0 = quoted(code), q1 = quoted(level))]
    UnknownSeverity {
        code: String,
        level: String,
        levels: String,
    },
    #[error("code {q0} declares no severity levels", q0 = quoted(.0))]
    NoSeverity(String),
    #[error("a span must end after it starts (start {start}, end {end})")]
    EmptyRange { start: i64, end: i64 },
    #[error("characters {start}–{end} lie outside the reply, which has {length} characters")]
    OutsideText { start: i64, end: i64, length: i64 },
    #[error("this span ({code} over characters {start}–{end}) is already marked", code = quoted(code))]
    AlreadyMarked { code: String, start: i64, end: i64 },
    #[error("no span of yours with code {code} over characters {start}–{end} on this item", code = quoted(code))]
    NoSuchSpan { code: String, start: i64, end: i64 },
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Coded for SpanError {
    fn code(&self) -> ErrorCode {
        match self {
            SpanError::Queue(e) => e.code(),
            SpanError::Store(e) => e.code(),
            _ => ErrorCode::Span,
        }
    }
}

/// A span as its expert sees it on the rating screen: code, bounds and severity, nothing more.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ShownSpan {
    /// The code's key.
    pub code: String,
    /// First character (a Unicode scalar value's index in the reply's text).
    pub start: i64,
    /// One past the last character.
    pub end: i64,
    pub severity: Option<String>,
}

/// Which of an expert's spans on an item: its code and bounds as they stand.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SpanAt {
    pub code: String,
    pub start: i64,
    pub end: i64,
}

/// What the rating screen may mark on an item: the rubric's codes (none for a session item or a
/// reply without text) and this expert's spans, in reading order.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ItemSpans {
    pub item: i64,
    pub codes: Vec<Code>,
    pub spans: Vec<ShownSpan>,
}

/// The reply an expert marks: its response, text length in characters and rubric codes.
struct Marked {
    response_id: i64,
    length: i64,
    codes: Vec<Code>,
}

/// The reply behind item `item` of the expert's queue, or why it cannot be marked.
fn marked_reply(store: &Store, rater_id: i64, item: i64) -> Result<Marked, SpanError> {
    let response_id = item_response(store, rater_id, item)?;
    let rubric = store.response_rubric(response_id)?.rubric;
    if rubric.scope == Scope::Session {
        return Err(SpanError::SessionItem { item });
    }
    let text = store
        .item_text(response_id)?
        .answer
        .filter(|t| !t.is_empty())
        .ok_or(SpanError::NoText { item })?;
    Ok(Marked {
        response_id,
        length: text.chars().count() as i64,
        codes: rubric.codes,
    })
}

/// Check a span against the reply and its rubric: bounds inside the text, end after start, a
/// code of the rubric, a severity among the code's levels. Returns the code and severity in
/// their declared spelling.
fn check_span(marked: &Marked, span: &ShownSpan) -> Result<ShownSpan, SpanError> {
    if marked.codes.is_empty() {
        return Err(SpanError::NoCodes);
    }
    let code = marked
        .codes
        .iter()
        .find(|c| c.key.eq_ignore_ascii_case(span.code.trim()))
        .ok_or_else(|| SpanError::UnknownCode(span.code.clone()))?;
    if span.end <= span.start {
        return Err(SpanError::EmptyRange {
            start: span.start,
            end: span.end,
        });
    }
    if span.start < 0 || span.end > marked.length {
        return Err(SpanError::OutsideText {
            start: span.start,
            end: span.end,
            length: marked.length,
        });
    }
    let severity = match span.severity.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(_) if code.severity.is_empty() => return Err(SpanError::NoSeverity(code.key.clone())),
        Some(level) => Some(
            code.severity_level(level)
                .ok_or_else(|| SpanError::UnknownSeverity {
                    code: code.key.clone(),
                    level: level.to_string(),
                    levels: code.severity.join(", "),
                })?
                .to_string(),
        ),
    };
    Ok(ShownSpan {
        code: code.key.clone(),
        start: span.start,
        end: span.end,
        severity,
    })
}

fn shown(r: &SpanRecord) -> Option<ShownSpan> {
    let (start, end) = r.range?;
    Some(ShownSpan {
        code: r.code.clone(),
        start,
        end,
        severity: r.severity.clone(),
    })
}

/// The expert's own located spans on a response, in reading order, with their row ids.
fn own_spans(records: Vec<SpanRecord>, rater_id: i64) -> Vec<(i64, ShownSpan)> {
    let mut own: Vec<(i64, ShownSpan)> = records
        .into_iter()
        .filter(|r| r.rater_id == rater_id)
        .filter_map(|r| shown(&r).map(|s| (r.id, s)))
        .collect();
    own.sort_by(|a, b| {
        (a.1.start, a.1.end, &a.1.code, a.0).cmp(&(b.1.start, b.1.end, &b.1.code, b.0))
    });
    own
}

/// What the rating screen may mark on item `item`, with this expert's spans on it.
pub fn item_spans(store: &Store, rater_id: i64, item: i64) -> Result<ItemSpans, SpanError> {
    let marked = match marked_reply(store, rater_id, item) {
        Ok(m) => m,
        Err(SpanError::SessionItem { .. } | SpanError::NoText { .. }) => {
            return Ok(ItemSpans {
                item,
                codes: Vec::new(),
                spans: Vec::new(),
            })
        }
        Err(e) => return Err(e),
    };
    let spans = own_spans(store.spans_of_response(marked.response_id)?, rater_id)
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    Ok(ItemSpans {
        item,
        codes: marked.codes,
        spans,
    })
}

fn detail(rater_id: i64, response_id: i64, s: &ShownSpan, origin: &str) -> serde_json::Value {
    serde_json::json!({
        "rater_id": rater_id,
        "response_id": response_id,
        "code": s.code,
        "start": s.start,
        "end": s.end,
        "severity": s.severity,
        "origin": origin,
    })
}

/// Mark `span` on item `item` of the expert's queue; committed durably, with its audit entry,
/// before this returns. Returns the item's spans as they now stand.
pub fn add_span(
    store: &mut Store,
    origin: SpanOrigin,
    rater_id: i64,
    item: i64,
    span: &ShownSpan,
) -> Result<ItemSpans, SpanError> {
    let marked = marked_reply(store, rater_id, item)?;
    let span = check_span(&marked, span)?;
    store.write(|tx| {
        let own = own_spans(tx.spans_on(marked.response_id)?, rater_id);
        if own
            .iter()
            .any(|(_, s)| (s.start, s.end, &s.code) == (span.start, span.end, &span.code))
        {
            return Err(SpanError::AlreadyMarked {
                code: span.code.clone(),
                start: span.start,
                end: span.end,
            });
        }
        tx.add_span(&NewSpan {
            response_id: marked.response_id,
            rater_id,
            code: span.code.clone(),
            range: Some((span.start, span.end)),
            severity: span.severity.clone(),
            quote: None,
            origin,
            call_id: None,
        })?;
        tx.audit(
            &format!("rater:{rater_id}"),
            "span.add",
            &detail(rater_id, marked.response_id, &span, origin.as_str()),
        )?;
        Ok::<_, SpanError>(())
    })?;
    item_spans(store, rater_id, item)
}

/// The row id of the expert's span `at` on a response, or [`SpanError::NoSuchSpan`].
fn find_own(own: &[(i64, ShownSpan)], at: &SpanAt) -> Result<(i64, ShownSpan), SpanError> {
    own.iter()
        .find(|(_, s)| {
            (s.start, s.end) == (at.start, at.end) && s.code.eq_ignore_ascii_case(at.code.trim())
        })
        .cloned()
        .ok_or_else(|| SpanError::NoSuchSpan {
            code: at.code.clone(),
            start: at.start,
            end: at.end,
        })
}

/// Change the expert's span `at` on item `item` to `to` (code, severity, extent); durable with
/// its audit entry (what it was and what it became) when this returns.
pub fn change_span(
    store: &mut Store,
    origin: SpanOrigin,
    rater_id: i64,
    item: i64,
    at: &SpanAt,
    to: &ShownSpan,
) -> Result<ItemSpans, SpanError> {
    let marked = marked_reply(store, rater_id, item)?;
    let to = check_span(&marked, to)?;
    store.write(|tx| {
        let own = own_spans(tx.spans_on(marked.response_id)?, rater_id);
        let (id, from) = find_own(&own, at)?;
        if from == to {
            return Ok(());
        }
        if own.iter().any(|(other, s)| {
            *other != id && (s.start, s.end, &s.code) == (to.start, to.end, &to.code)
        }) {
            return Err(SpanError::AlreadyMarked {
                code: to.code.clone(),
                start: to.start,
                end: to.end,
            });
        }
        tx.update_span(id, &to.code, (to.start, to.end), to.severity.as_deref())?;
        let mut d = detail(rater_id, marked.response_id, &to, origin.as_str());
        d["from"] = serde_json::json!({
            "code": from.code, "start": from.start, "end": from.end, "severity": from.severity,
        });
        tx.audit(&format!("rater:{rater_id}"), "span.change", &d)?;
        Ok::<_, SpanError>(())
    })?;
    item_spans(store, rater_id, item)
}

/// Remove the expert's span `at` from item `item`; durable with its audit entry (the removed
/// span's code, bounds and severity) when this returns.
pub fn remove_span(
    store: &mut Store,
    origin: SpanOrigin,
    rater_id: i64,
    item: i64,
    at: &SpanAt,
) -> Result<ItemSpans, SpanError> {
    let marked = marked_reply(store, rater_id, item)?;
    store.write(|tx| {
        let own = own_spans(tx.spans_on(marked.response_id)?, rater_id);
        let (id, gone) = find_own(&own, at)?;
        tx.remove_span(id)?;
        tx.audit(
            &format!("rater:{rater_id}"),
            "span.remove",
            &detail(rater_id, marked.response_id, &gone, origin.as_str()),
        )?;
        Ok::<_, SpanError>(())
    })?;
    item_spans(store, rater_id, item)
}
