//! The spans export: one row per span, `conversation_id, turn, source, rater, code, start, end,
//! severity, quote`, ordered by conversation id, turn, source, rater and position. Offsets are in
//! Unicode scalar values of the reply's text, as `concord import spans` reads them, so the file
//! re-imports to the same offsets. `quote` holds the marked characters (whitespace as in the
//! reply); a judge's quote that could not be located has empty offsets and the quote as the judge
//! wrote it. An earlier release's single-turn answer is at turn 2. Every text cell is neutralised
//! against spreadsheet formulas.

use super::ExportError;
use crate::base::cell::neutralise;
use crate::rubric::quote::char_slice;
use crate::store::Store;
use serde::Serialize;
use std::io::Write;

/// The header of the spans export.
pub const SPANS_HEADER: [&str; 9] = [
    "conversation_id",
    "turn",
    "source",
    "rater",
    "code",
    "start",
    "end",
    "severity",
    "quote",
];

/// What a spans export wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpansSummary {
    /// Spans written.
    pub spans: usize,
    /// Of them, judges' quotes not located in their reply.
    pub unlocated: usize,
}

/// Write every span of the study as CSV to `out`.
pub fn write_spans_csv<W: Write>(store: &Store, out: W) -> Result<SpansSummary, ExportError> {
    let mut w = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(out);
    w.write_record(SPANS_HEADER)?;
    let mut summary = SpansSummary {
        spans: 0,
        unlocated: 0,
    };
    for listed in store.spans_listed()? {
        let span = &listed.span;
        let (start, end, quote) = match span.range {
            Some((s, e)) => (
                s.to_string(),
                e.to_string(),
                char_slice(&listed.text, s as usize, e as usize)
                    .unwrap_or_default()
                    .to_string(),
            ),
            None => {
                summary.unlocated += 1;
                (
                    String::new(),
                    String::new(),
                    span.quote.clone().unwrap_or_default(),
                )
            }
        };
        let turn = listed.turn.unwrap_or(2).to_string();
        w.write_record([
            neutralise(&listed.conversation).as_ref(),
            &turn,
            neutralise(&listed.source).as_ref(),
            neutralise(&listed.rater).as_ref(),
            neutralise(&span.code).as_ref(),
            &start,
            &end,
            neutralise(span.severity.as_deref().unwrap_or_default()).as_ref(),
            neutralise(&quote).as_ref(),
        ])?;
        summary.spans += 1;
    }
    w.flush()?;
    Ok(summary)
}
