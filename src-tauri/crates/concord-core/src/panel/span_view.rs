//! The agreement panel's span section: the span agreement report of a rubric with what the
//! researcher needs beside it — the rubric's codes with their labels, every judge quote that could
//! not be located (listed, never placed), and the replies that carry spans — and the view of one
//! reply with each rater's spans on their own row (experts first, then judges, each by name: this
//! is the researcher's view, not an expert's, so raters are named).
//!
//! A row of the view is the reply's text cut at every boundary of that rater's spans into
//! segments; a segment says which of the rater's spans cover it and which start there (where the
//! window writes the code's label), so overlapping spans of one rater show as they are. Offsets
//! are characters (Unicode scalar values), as stored; the text is cut here so the window never
//! counts characters in UTF-16.

use super::span_agreement::{
    has_codes, span_agreement, SpanAgreementError, SpanAgreementOptions, SpanAgreementReport,
};
use crate::rubric::Code;
use crate::store::{RaterKind, SpanListed, Store, StoreError};
use serde::Serialize;
use std::collections::BTreeMap;

/// A judge's quote that could not be found in its reply, as the panel lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct UnlocatedSpan {
    pub response_id: i64,
    pub conversation_id: String,
    /// The reply's turn (2 for an earlier release's single-turn answer).
    pub turn: i64,
    pub source: String,
    pub rater: String,
    pub code: String,
    pub quote: String,
}

/// A reply that carries spans (located or not), for the panel's chooser.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SpanReplyEntry {
    pub response_id: i64,
    pub conversation_id: String,
    pub turn: i64,
    pub source: String,
    /// Located spans on the reply, every rater's.
    pub located: usize,
    /// Quotes kept unlocated.
    pub unlocated: usize,
    /// Raters with a span (located or not) on the reply.
    pub raters: usize,
}

/// The span section of the agreement panel for one rubric.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SpanPanel {
    pub rubric: String,
    /// Whether the rubric declares codes and rates replies (a session or pairwise rubric, or one
    /// without `[[codes]]`, has no spans).
    pub has_codes: bool,
    /// The rubric's codes, with their labels and descriptions in every language.
    pub codes: Vec<Code>,
    /// The report, as `concord agreement --spans --json` prints it; `None` while no rater has a
    /// located span on the rubric's replies.
    pub report: Option<SpanAgreementReport>,
    /// Judges' quotes that could not be located, by conversation, turn, source and rater.
    pub unlocated: Vec<UnlocatedSpan>,
    /// The replies that carry spans, in the report's order (conversation id, turn, source).
    pub replies: Vec<SpanReplyEntry>,
}

/// One span of a rater's row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TrackSpan {
    pub code: String,
    /// `[start, end)` in characters of the reply.
    pub start: usize,
    pub end: usize,
    pub severity: Option<String>,
    /// The characters the span covers.
    pub text: String,
}

/// A stretch of the reply on one rater's row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TrackSegment {
    pub text: String,
    /// The rater's spans (indices into the row's `spans`) covering the stretch.
    pub spans: Vec<usize>,
    /// Those of them that start here.
    pub starts: Vec<usize>,
}

/// A quote of a rater's that could not be located, on that rater's row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct UnplacedQuote {
    pub code: String,
    pub quote: String,
}

/// One rater's row of the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RaterTrack {
    pub rater: String,
    /// `expert` or `judge`.
    pub kind: String,
    /// Located spans in order of start, end and code.
    pub spans: Vec<TrackSpan>,
    /// The whole reply, cut at the spans' boundaries.
    pub segments: Vec<TrackSegment>,
    pub unlocated: Vec<UnplacedQuote>,
}

/// One reply with every rater's spans stacked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SpanReplyView {
    pub response_id: i64,
    pub conversation_id: String,
    pub turn: i64,
    pub source: String,
    pub text: String,
    /// Experts first, then judges, each by name.
    pub raters: Vec<RaterTrack>,
}

/// Why the span section cannot be shown.
#[derive(Debug, thiserror::Error)]
pub enum SpanViewError {
    #[error(transparent)]
    Agreement(#[from] SpanAgreementError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("reply {0} carries no spans")]
    NoSpans(i64),
}

/// The span section of rubric `rubric`.
pub fn span_panel(
    store: &Store,
    rubric: &str,
    options: SpanAgreementOptions,
) -> Result<SpanPanel, SpanViewError> {
    let stored = store
        .rubrics()?
        .into_iter()
        .find(|r| r.rubric.id == rubric)
        .ok_or_else(|| SpanAgreementError::UnknownRubric(rubric.to_string()))?;
    let mut panel = SpanPanel {
        rubric: rubric.to_string(),
        has_codes: has_codes(&stored.rubric),
        codes: stored.rubric.codes.clone(),
        report: None,
        unlocated: Vec::new(),
        replies: Vec::new(),
    };
    if !panel.has_codes {
        return Ok(panel);
    }
    let spans = store.spans_of_rubric(stored.id)?;
    let declared = |code: &str| stored.rubric.code(code).is_some();
    if spans
        .iter()
        .any(|s| s.span.range.is_some() && declared(&s.span.code))
    {
        panel.report = Some(span_agreement(store, Some(rubric), options)?);
    }
    // The replies in the store's order (conversation id, turn, source), each counted once.
    let mut order: Vec<i64> = Vec::new();
    let mut entries: BTreeMap<i64, (SpanReplyEntry, Vec<i64>)> = BTreeMap::new();
    for s in &spans {
        let (entry, raters) = entries.entry(s.span.response_id).or_insert_with(|| {
            order.push(s.span.response_id);
            (
                SpanReplyEntry {
                    response_id: s.span.response_id,
                    conversation_id: s.conversation.clone(),
                    turn: s.turn.unwrap_or(2),
                    source: s.source.clone(),
                    located: 0,
                    unlocated: 0,
                    raters: 0,
                },
                Vec::new(),
            )
        });
        if !raters.contains(&s.span.rater_id) {
            raters.push(s.span.rater_id);
            entry.raters += 1;
        }
        if s.span.range.is_some() {
            entry.located += 1;
        } else {
            entry.unlocated += 1;
            panel.unlocated.push(UnlocatedSpan {
                response_id: s.span.response_id,
                conversation_id: s.conversation.clone(),
                turn: s.turn.unwrap_or(2),
                source: s.source.clone(),
                rater: s.rater.clone(),
                code: s.span.code.clone(),
                quote: s.span.quote.clone().unwrap_or_default(),
            });
        }
    }
    panel.replies = order
        .into_iter()
        .filter_map(|id| entries.remove(&id).map(|(e, _)| e))
        .collect();
    Ok(panel)
}

/// Reply `response_id` with every rater's spans, one row per rater.
pub fn span_reply(store: &Store, response_id: i64) -> Result<SpanReplyView, SpanViewError> {
    let spans = store.spans_of_reply(response_id)?;
    let first = spans.first().ok_or(SpanViewError::NoSpans(response_id))?;
    let text = first.text.clone();
    let mut view = SpanReplyView {
        response_id,
        conversation_id: first.conversation.clone(),
        turn: first.turn.unwrap_or(2),
        source: first.source.clone(),
        text: String::new(),
        raters: Vec::new(),
    };
    // Experts first, then judges, each by name.
    let mut by_rater: BTreeMap<(bool, String), Vec<&SpanListed>> = BTreeMap::new();
    for s in &spans {
        let judge = s.rater_kind == RaterKind::Judge.as_str();
        by_rater
            .entry((judge, s.rater.clone()))
            .or_default()
            .push(s);
    }
    let chars: Vec<char> = text.chars().collect();
    for ((judge, rater), own) in by_rater {
        let kind = if judge {
            RaterKind::Judge
        } else {
            RaterKind::Expert
        };
        let mut shown: Vec<TrackSpan> = Vec::new();
        let mut unlocated = Vec::new();
        for s in own {
            match s.span.range {
                Some((start, end)) => {
                    // Stored offsets are checked on the way in; clamp anyway, never panic.
                    let end = (end.max(0) as usize).min(chars.len());
                    let start = (start.max(0) as usize).min(end);
                    if start < end {
                        shown.push(TrackSpan {
                            code: s.span.code.clone(),
                            start,
                            end,
                            severity: s.span.severity.clone(),
                            text: chars[start..end].iter().collect(),
                        });
                    }
                }
                None => unlocated.push(UnplacedQuote {
                    code: s.span.code.clone(),
                    quote: s.span.quote.clone().unwrap_or_default(),
                }),
            }
        }
        shown.sort_by(|a, b| (a.start, a.end, &a.code).cmp(&(b.start, b.end, &b.code)));
        view.raters.push(RaterTrack {
            rater,
            kind: kind.as_str().to_string(),
            segments: segments(&chars, &shown),
            spans: shown,
            unlocated,
        });
    }
    view.text = text;
    Ok(view)
}

/// The reply cut at every boundary of `spans` (each inside it, start before end).
fn segments(chars: &[char], spans: &[TrackSpan]) -> Vec<TrackSegment> {
    let mut cuts: Vec<usize> = vec![0, chars.len()];
    for s in spans {
        cuts.push(s.start);
        cuts.push(s.end);
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2)
        .filter(|w| w[0] < w[1])
        .map(|w| {
            let (from, to) = (w[0], w[1]);
            TrackSegment {
                text: chars[from..to].iter().collect(),
                spans: (0..spans.len())
                    .filter(|&i| spans[i].start <= from && spans[i].end >= to)
                    .collect(),
                starts: (0..spans.len())
                    .filter(|&i| spans[i].start == from)
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(code: &str, start: usize, end: usize, chars: &[char]) -> TrackSpan {
        TrackSpan {
            code: code.into(),
            start,
            end,
            severity: None,
            text: chars[start..end].iter().collect(),
        }
    }

    #[test]
    fn overlapping_spans_cut_the_reply_into_stretches_that_say_who_covers_them() {
        let chars: Vec<char> = "你好 😢 world".chars().collect();
        let spans = vec![span("a", 0, 4, &chars), span("b", 3, 6, &chars)];
        let cut = segments(&chars, &spans);
        let texts: Vec<&str> = cut.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            texts,
            ["你好 ", "😢", " w", "orld"],
            "the reply is cut at each boundary, in characters"
        );
        assert_eq!(cut[1].spans, [0, 1], "the emoji is covered by both spans");
        assert_eq!(cut[1].starts, [1], "and the second span starts there");
        let joined: String = cut.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            joined,
            chars.iter().collect::<String>(),
            "the stretches are the whole reply, in order"
        );
    }
}
