//! The spans of a fill-in rating sheet. For each rubric of the expert's assignment that declares
//! span codes and rates replies, the workbook has one more sheet, `<rubric> spans`, where the
//! expert marks evidence as a list: one span per row, in the columns
//!
//! - `item` — the item number as the rubric's sheet shows it (several rows may name one item);
//! - `quote` — the words of that item's answer, copied exactly;
//! - `code` — one of the rubric's code keys (a dropdown);
//! - `severity` — optional, one of the code's severity levels.
//!
//! Beside the list (columns `codes`, `label`, `meaning`, `levels`) the rubric's codes are written
//! out for the expert. The rows above the blank ones hold the expert's own spans already in the
//! study (locked; nobody else's: blinding holds). The hidden `concord` sheet names each spans
//! sheet's rubric (`spans:<rubric key>` → sheet name).
//!
//! Reading it back: a row whose four cells are blank is skipped. Every other row must name one of
//! the items this sheet gave the expert on that rubric, a non-blank quote, a declared code and,
//! when given, a severity level of that code; each bad cell is reported with file, sheet, row and
//! column, and the caller then writes nothing. Each quote is located in the item's answer as
//! judge quotes are (`rubric::quote`: exactly, then whitespace-insensitively; of several matches
//! the first); a quote found neither way is kept unlocated (no offsets, the words as written) and
//! reported, never guessed. A span the expert already has (same reply, code, place and severity;
//! or, unlocated, the same quote) is left as it is; nothing is removed by a sheet (a span is
//! removed on the rating screen). Spans come in with origin `sheet`, sealed by the audit chain.

use super::workbook::{CellError, Cells, SheetFormats};
use super::{unneutralise, ExportError};
use crate::files::table::{Cell, RawTable};
use crate::rubric::quote::locate;
use crate::rubric::{localized, Rubric};
use crate::store::{AssignedText, NewSpan, SpanOrigin, Store, StoreError, StudyTx};
use crate::workflow::assignment::Purpose;
use rust_xlsxwriter::{DataValidation, Format, Worksheet};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// The key prefix of the meta sheet's rows that name a spans sheet's rubric.
pub(super) const META_PREFIX: &str = "spans:";
const ITEM: &str = "item";
const QUOTE: &str = "quote";
const CODE: &str = "code";
const SEVERITY: &str = "severity";
/// Columns of the codes listed beside the spans (one blank column between).
const CODES_AT: u16 = 5;
/// Rows with a dropdown of codes and levels below the header (the column stays unlocked below).
const VALIDATED_ROWS: u32 = 2_000;

/// Whether `rubric` gets a spans sheet.
pub(super) fn takes_spans(rubric: &Rubric) -> bool {
    !rubric.codes.is_empty() && rubric.scope.is_reply()
}

/// A span the expert already has, as its locked row shows it.
pub(super) struct KeptSpan {
    pub item: i64,
    pub quote: String,
    pub code: String,
    pub severity: Option<String>,
}

/// The expert's own spans on `items` (the rubric's items of their assignment), in item order.
pub(super) fn kept_spans(
    store: &Store,
    rater_id: i64,
    rubric_id: i64,
    items: &[&AssignedText],
) -> Result<Vec<KeptSpan>, ExportError> {
    // A reply given twice (first and retest) shows its spans at its first item number.
    let mut number: HashMap<i64, i64> = HashMap::new();
    for item in items {
        let n = number.entry(item.response_id).or_insert(item.position + 1);
        *n = (*n).min(item.position + 1);
    }
    let mut kept: Vec<KeptSpan> = store
        .spans_of_rubric(rubric_id)?
        .into_iter()
        .filter(|s| s.span.rater_id == rater_id)
        .filter_map(|s| {
            let item = *number.get(&s.span.response_id)?;
            let quote = match s.span.range {
                Some((start, end)) => crate::rubric::quote::char_slice(
                    &s.text,
                    start.max(0) as usize,
                    end.max(0) as usize,
                )
                .map(str::to_string)
                .or(s.span.quote)?,
                None => s.span.quote?,
            };
            Some(KeptSpan {
                item,
                quote,
                code: s.span.code,
                severity: s.span.severity,
            })
        })
        .collect();
    kept.sort_by_key(|k| k.item);
    Ok(kept)
}

/// Write one rubric's spans sheet: the header, the expert's own spans (locked), unlocked rows
/// below with dropdowns, and the codes listed beside.
pub(super) fn write_span_sheet(
    ws: &mut Worksheet,
    cells: &mut Cells,
    formats: &SheetFormats,
    rubric: &Rubric,
    kept: &[KeptSpan],
) -> Result<(), ExportError> {
    let header: Vec<String> = [
        ITEM, QUOTE, CODE, SEVERITY, "", "codes", "label", "meaning", "levels",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for (c, name) in header.iter().enumerate() {
        if !name.is_empty() {
            cells.text_fmt(ws, 0, c as u16, name, &formats.bold)?;
        }
    }
    ws.set_freeze_panes(1, 0)?;
    ws.set_column_width(0, 6)?;
    ws.set_column_width(1, 60)?;
    ws.set_column_width(2, 24)?;
    ws.set_column_width(3, 12)?;
    ws.set_column_width(CODES_AT, 24)?;
    ws.set_column_width(CODES_AT + 1, 28)?;
    ws.set_column_width(CODES_AT + 2, 50)?;
    ws.set_column_width(CODES_AT + 3, 20)?;
    // The input columns are unlocked below the header and the expert's kept spans.
    for col in 0..4u16 {
        let format = if col == 1 {
            &formats.input_wrap
        } else {
            &formats.input
        };
        ws.set_column_format(col, format)?;
    }
    let locked = Format::new().set_locked();
    for (n, k) in kept.iter().enumerate() {
        let row = (n + 1) as u32;
        ws.write_number_with_format(row, 0, k.item as f64, &locked)?;
        cells.count += 1;
        cells.text_fmt(ws, row, 1, &k.quote, &formats.locked_wrap)?;
        cells.text_fmt(ws, row, 2, &k.code, &locked)?;
        cells.text_fmt(ws, row, 3, k.severity.as_deref().unwrap_or(""), &locked)?;
    }
    for (n, code) in rubric.codes.iter().enumerate() {
        let row = (n + 1) as u32;
        cells.text_fmt(ws, row, CODES_AT, &code.key, &formats.bold)?;
        cells.text_fmt(
            ws,
            row,
            CODES_AT + 1,
            localized(&code.label, "en"),
            &formats.locked_wrap,
        )?;
        cells.text_fmt(
            ws,
            row,
            CODES_AT + 2,
            localized(&code.description, "en"),
            &formats.locked_wrap,
        )?;
        cells.text_fmt(
            ws,
            row,
            CODES_AT + 3,
            &code.severity.join(", "),
            &formats.locked_wrap,
        )?;
    }
    let first = (kept.len() + 1) as u32;
    let last = first + VALIDATED_ROWS;
    let keys: Vec<String> = rubric.codes.iter().map(|c| c.key.clone()).collect();
    // A list longer than a dropdown holds is left without one: the reader checks every code.
    if let Ok(v) = DataValidation::new().allow_list_strings(&keys) {
        let v = v
            .set_error_title("Not a code of this rubric")?
            .set_error_message("Choose one of the codes listed beside the spans.")?;
        ws.add_data_validation(first, 2, last, 2, &v)?;
    }
    let mut levels: Vec<String> = Vec::new();
    for code in &rubric.codes {
        for level in &code.severity {
            if !levels.contains(level) {
                levels.push(level.clone());
            }
        }
    }
    if !levels.is_empty() {
        if let Ok(v) = DataValidation::new().allow_list_strings(&levels) {
            let v = v
                .set_error_title("Not a severity level")?
                .set_error_message("Choose one of the code's levels, or leave it blank.")?;
            ws.add_data_validation(first, 3, last, 3, &v)?;
        }
    }
    ws.protect();
    Ok(())
}

/// A span read from a sheet, to write.
pub(super) struct SpanEntry {
    pub sheet: String,
    pub row: usize,
    pub item: i64,
    pub response: i64,
    pub code: String,
    pub quote: String,
    pub severity: Option<String>,
}

/// What a spans sheet may name: the expert's items of its rubric by number.
pub(super) struct SpanSheetExpectations<'a> {
    pub file: &'a str,
    pub rater_name: &'a str,
    pub rubric: &'a Rubric,
    /// Item number → reply.
    pub items: HashMap<i64, i64>,
}

/// The item number → reply map of rubric `rubric` from an expert's assignment
/// `(position, response, purpose, rubric key)`.
pub(super) fn items_of(
    assigned: &[(i64, i64, Purpose, String)],
    rubric: &str,
) -> HashMap<i64, i64> {
    assigned
        .iter()
        .filter(|a| a.3 == rubric)
        .map(|a| (a.0 + 1, a.1))
        .collect()
}

/// Read one spans sheet: its rows as spans, or the cells that are wrong.
pub(super) fn read_span_sheet(
    expected: &SpanSheetExpectations<'_>,
    name: &str,
    table: &RawTable,
    entries: &mut Vec<SpanEntry>,
    errors: &mut Vec<CellError>,
) {
    let at = |row: usize, column: &str, value: Option<String>, message: String| {
        CellError::at(expected.file, name, row, column, value, message)
    };
    let columns: Vec<Option<usize>> = [ITEM, QUOTE, CODE, SEVERITY]
        .iter()
        .map(|c| table.column(c))
        .collect();
    let (Some(item_col), Some(quote_col), Some(code_col)) = (columns[0], columns[1], columns[2])
    else {
        errors.push(at(
            1,
            "",
            None,
            "a spans sheet needs the columns item, quote and code; the sheet was changed".into(),
        ));
        return;
    };
    let severity_col = columns[3];
    let codes: Vec<&str> = expected
        .rubric
        .codes
        .iter()
        .map(|c| c.key.as_str())
        .collect();
    for row in &table.rows {
        let item_cell = table.cell(row, item_col);
        let quote_cell = table.cell(row, quote_col);
        let code_cell = table.cell(row, code_col);
        let severity_cell = severity_col.map(|c| table.cell(row, c));
        if item_cell.is_blank()
            && quote_cell.is_blank()
            && code_cell.is_blank()
            && severity_cell.is_none_or(Cell::is_blank)
        {
            continue;
        }
        let before = errors.len();
        let item = match item_number(item_cell) {
            Some(n) if expected.items.contains_key(&n) => Some(n),
            _ => {
                errors.push(at(
                    row.number,
                    ITEM,
                    item_cell.as_text(),
                    not_given(expected),
                ));
                None
            }
        };
        let quote = quote_cell
            .as_text()
            .map(|q| unneutralise(&q).to_string())
            .filter(|q| !q.trim().is_empty());
        if quote.is_none() {
            errors.push(at(
                row.number,
                QUOTE,
                None,
                "the quote is empty: copy the words of the answer that show the code".into(),
            ));
        }
        let code_text = code_cell
            .as_text()
            .map(|c| unneutralise(c.trim()).to_string())
            .unwrap_or_default();
        let code = expected.rubric.code(&code_text);
        if code.is_none() {
            errors.push(at(
                row.number,
                CODE,
                Some(code_text.clone()),
                format!(
                    "not a code of rubric {}; its codes are {}",
                    expected.rubric.id,
                    codes.join(", ")
                ),
            ));
        }
        let severity_text = severity_cell
            .and_then(Cell::as_text)
            .map(|s| unneutralise(s.trim()).to_string())
            .filter(|s| !s.is_empty());
        let severity = match (code, severity_text) {
            (Some(code), Some(text)) => match severity_of(code, &text) {
                Ok(level) => Some(level),
                Err(why) => {
                    errors.push(at(row.number, SEVERITY, Some(text), why));
                    None
                }
            },
            _ => None,
        };
        if errors.len() > before {
            continue;
        }
        let (Some(item), Some(quote), Some(code)) = (item, quote, code) else {
            continue;
        };
        entries.push(SpanEntry {
            sheet: name.to_string(),
            row: row.number,
            item,
            response: expected.items[&item],
            code: code.key.clone(),
            quote,
            severity,
        });
    }
}

/// Why an item number cannot be read: it is not one of the expert's items on the rubric.
fn not_given(expected: &SpanSheetExpectations<'_>) -> String {
    format!(
        "not an item this sheet gave {} on rubric {}: write the item number of the answer the \
         quote is from",
        expected.rater_name, expected.rubric.id
    )
}

/// The level a severity cell names for `code`, in the code's spelling, or why it cannot be.
fn severity_of(code: &crate::rubric::Code, text: &str) -> Result<String, String> {
    match code.severity_level(text) {
        Some(level) => Ok(level.to_string()),
        None if code.severity.is_empty() => Err(format!(
            "code {} takes no severity; leave it blank",
            code.key
        )),
        None => Err(format!(
            "not a severity level of code {}; its levels are {}",
            code.key,
            code.severity.join(", ")
        )),
    }
}

/// An item number typed in a cell: a whole number.
fn item_number(cell: &Cell) -> Option<i64> {
    let x = match cell {
        Cell::Number(x) => *x,
        Cell::Text(t) => t.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    (x.fract() == 0.0 && (1.0..1e12).contains(&x)).then_some(x as i64)
}

/// A quote from a sheet that could not be located in its item's answer (kept unlocated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SheetQuoteUnlocated {
    pub sheet: String,
    /// The row as the spreadsheet shows it.
    pub row: usize,
    pub item: i64,
    pub code: String,
    pub quote: String,
}

/// What writing a sheet's spans did.
#[derive(Debug, Default)]
pub(super) struct SpansWritten {
    pub added: usize,
    pub unchanged: usize,
    pub unlocated: Vec<SheetQuoteUnlocated>,
}

/// Write `entries` as rater `rater_id`'s spans, each quote located in its reply.
pub(super) fn write_span_entries(
    tx: &mut StudyTx<'_>,
    rater_id: i64,
    entries: &[SpanEntry],
) -> Result<SpansWritten, StoreError> {
    type Key = (String, Option<(i64, i64)>, Option<String>, Option<String>);
    let mut written = SpansWritten::default();
    let mut texts: HashMap<i64, String> = HashMap::new();
    let mut have: HashMap<i64, HashSet<Key>> = HashMap::new();
    for e in entries {
        if let std::collections::hash_map::Entry::Vacant(slot) = texts.entry(e.response) {
            slot.insert(tx.reply_text(e.response)?.unwrap_or_default());
            let mine: HashSet<Key> = tx
                .spans_on(e.response)?
                .into_iter()
                .filter(|s| s.rater_id == rater_id)
                .map(|s| {
                    let quote = s.range.is_none().then_some(s.quote).flatten();
                    (s.code, s.range, s.severity, quote)
                })
                .collect();
            have.insert(e.response, mine);
        }
        let text = &texts[&e.response];
        let range = locate(text, &e.quote).map(|l| {
            let (s, end) = l.range();
            (s as i64, end as i64)
        });
        let key: Key = (
            e.code.clone(),
            range,
            e.severity.clone(),
            range.is_none().then(|| e.quote.clone()),
        );
        if range.is_none() {
            written.unlocated.push(SheetQuoteUnlocated {
                sheet: e.sheet.clone(),
                row: e.row,
                item: e.item,
                code: e.code.clone(),
                quote: e.quote.clone(),
            });
        }
        let mine = have.entry(e.response).or_default();
        if mine.contains(&key) {
            written.unchanged += 1;
            continue;
        }
        tx.add_span(&NewSpan {
            response_id: e.response,
            rater_id,
            code: e.code.clone(),
            range,
            severity: e.severity.clone(),
            quote: Some(e.quote.clone()),
            origin: SpanOrigin::Sheet,
            call_id: None,
        })?;
        mine.insert(key);
        written.added += 1;
    }
    Ok(written)
}
