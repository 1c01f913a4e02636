//! The fill-in rating sheet: an XLSX workbook for an expert who prefers Excel to the app. It has
//! one sheet per rubric of the expert's assignment, one row per assigned item in the expert's
//! shown order: a hidden id column, the item number, the context and the answer (locked by sheet
//! protection), one column per criterion with a validated dropdown of the scale's levels (1–5,
//! 0/1) and a rationale column, pre-filled with the expert's current values. A codebook sheet
//! holds the anchors, and a hidden `concord` sheet names the expert. No source, judge or other
//! rater appears in it.
//!
//! A rubric of conversations (a session rubric, or one with replies of transcripts) has a
//! `history` column in place of `context`: everything before the item, one turn per line as
//! `[turn] Role: text` (`[1] User: …`, `[2] Assistant: …`; a session item's is the whole
//! conversation but its candidates, and its `answer` is left empty). A history longer than a
//! spreadsheet cell holds ([`HISTORY_CELL_CHARS`]) keeps its latest turns, after a line saying
//! how many earlier ones the app shows instead. An earlier release's single-turn sheet is as it
//! was.
//!
//! [`import_rating_sheet`] reads a filled sheet back (through the importers' raw-row reader) as
//! that expert's ratings. Every bad cell — a value off the scale or not a whole number, an id that
//! is not in the expert's assignment or belongs to another study — is reported with its file,
//! sheet, row, column and value, and then nothing is written. Blank cells are left as they are.
//! A row's rationale goes onto every criterion rated in that row. An expert given pairs to
//! compare gets a sheet of them per pairwise rubric too (`pair_sheet`), and a rubric that declares
//! span codes a spans sheet where the expert lists quotes with their codes (`span_sheet`).

use super::pair_sheet;
use super::span_sheet;
use super::workbook::{codebook, sheet_name, CellError, Cells, SheetFormats};
use super::{unneutralise, ExportError};
use crate::base::cell::{workbook_text, xml_safe};
use crate::files::bounds::ReadLimits;
use crate::files::table::display_name;
use crate::files::table::read_file;
use crate::files::table::read_table_bytes;
use crate::files::table::sheet_names;
use crate::files::table::Cell;
use crate::files::table::FileFormat;
use crate::files::Issue;
use crate::rubric::{localized, Rubric};
use crate::store::{
    AssignedText, CriterionKey, Occasion, RaterKind, RatingInput, RatingOutcome, Store, StoreError,
    StoredRubric,
};
use crate::workflow::assignment::Purpose;
use rust_xlsxwriter::{DataValidation, DataValidationRule, Format, Workbook};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// The hidden sheet that names the expert.
pub const META_SHEET: &str = "concord";
const CODEBOOK_SHEET: &str = "Codebook";
const FORMAT_VERSION: &str = "rating-sheet/1";
const ID: &str = "id";
const ITEM: &str = "item";
const CONTEXT: &str = "context";
const HISTORY: &str = "history";
/// What a history cell may hold, in characters as the cell stores them: below a spreadsheet
/// cell's 32,767, leaving room for the line that says how many earlier turns were left out.
pub const HISTORY_CELL_CHARS: usize = 32_000;
const ANSWER: &str = "answer";
const RATIONALE: &str = "rationale";

/// What [`write_rating_sheet`] wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SheetSummary {
    pub rater: String,
    pub sheets: Vec<String>,
    pub rows: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum SheetError {
    /// The sheet has bad cells; nothing was written.
    #[error("{} — nothing was imported", describe(.0))]
    Rejected(Vec<CellError>),
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn describe(errors: &[CellError]) -> String {
    let mut out = format!("{} problem(s) in the rating sheet:", errors.len());
    for e in errors.iter().take(10) {
        out.push_str(&format!("\n  {e}"));
    }
    if errors.len() > 10 {
        out.push_str(&format!("\n  … and {} more", errors.len() - 10));
    }
    out
}

/// What [`import_rating_sheet`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SheetImportReport {
    pub rater: String,
    pub rows: usize,
    pub inserted: usize,
    pub updated: usize,
    pub unchanged: usize,
    /// Choices on pairs new to the study, and changed in it.
    pub pairs_inserted: usize,
    pub pairs_updated: usize,
    /// Spans of the spans sheets new to the study, and already there.
    pub spans_added: usize,
    pub spans_unchanged: usize,
    /// Quotes not found in their item's answer (kept unlocated, never guessed).
    pub spans_unlocated: Vec<span_sheet::SheetQuoteUnlocated>,
}

/// (occasion, response, criterion).
type CurrentKey = (Occasion, i64, i64);

fn occasion_of(purpose: Purpose) -> Occasion {
    if purpose == Purpose::Retest {
        Occasion::Retest
    } else {
        Occasion::First
    }
}

fn item_id(response: i64, purpose: Purpose, conversation: &str) -> String {
    format!("r{response}|{}|{conversation}", purpose.as_str())
}

/// The expert's current values a sheet is pre-filled with.
struct CurrentValues {
    /// (occasion, response, criterion) → (value, rationale).
    values: HashMap<CurrentKey, (Option<i64>, Option<String>)>,
    /// (rubric key, criterion key) → criterion id.
    criterion_ids: HashMap<CriterionKey, i64>,
}

impl CurrentValues {
    fn get(
        &self,
        rubric: &Rubric,
        criterion: &crate::rubric::Criterion,
        occasion: Occasion,
        response: i64,
    ) -> Option<&(Option<i64>, Option<String>)> {
        self.criterion_ids
            .get(&CriterionKey::new(&rubric.id, &criterion.id))
            .and_then(|id| self.values.get(&(occasion, response, *id)))
    }
}

/// Write the fill-in sheet of expert `rater` to `path`.
pub fn write_rating_sheet(
    store: &Store,
    rater: &str,
    path: &Path,
) -> Result<SheetSummary, ExportError> {
    let (rater_id, rater_name) = expert(store, rater)?;
    let items: Vec<AssignedText> = store.assigned_texts(rater_id)?;
    let pair_sheets = pair_sheet::pair_rows(store, rater_id)?;
    if items.is_empty() && pair_sheets.is_empty() {
        return Err(ExportError::NothingAssigned(rater_name));
    }
    let session_rubrics: BTreeSet<i64> = store
        .rubrics()?
        .into_iter()
        .filter(|s| s.rubric.scope == crate::rubric::Scope::Session)
        .map(|s| s.id)
        .collect();
    // A session item has no answer of its own: it stands for the whole conversation.
    let without = items
        .iter()
        .filter(|i| i.answer.is_empty() && !session_rubrics.contains(&i.rubric_id))
        .count();
    if without > 0 && crate::workflow::assignment::without_text_reason(store)?.is_none() {
        return Err(ExportError::AnswersWithoutText {
            rater: rater_name,
            without,
            items: items.len(),
        });
    }
    let current = CurrentValues {
        values: store
            .ratings_of_rater(rater_id)?
            .into_iter()
            .map(|r| {
                (
                    (r.occasion, r.response_id, r.criterion_id),
                    (r.value, r.rationale),
                )
            })
            .collect(),
        criterion_ids: criterion_ids(store)?,
    };
    let rubric_ids: BTreeSet<i64> = items.iter().map(|i| i.rubric_id).collect();
    let rubrics: Vec<StoredRubric> = store
        .rubrics()?
        .into_iter()
        .filter(|s| rubric_ids.contains(&s.id))
        .collect();

    let mut wb = Workbook::new();
    let mut cells = Cells { count: 0 };
    let mut taken = BTreeSet::new();
    taken.insert(CODEBOOK_SHEET.to_lowercase());
    taken.insert(META_SHEET.to_lowercase());
    let formats = SheetFormats {
        bold: Format::new().set_bold().set_locked(),
        locked_wrap: Format::new().set_text_wrap().set_locked(),
        input: Format::new().set_unlocked(),
        input_wrap: Format::new().set_unlocked().set_text_wrap(),
    };
    let mut sheets = Vec::new();
    let mut rows_written = 0;
    // (rubric key, sheet name) of each spans sheet, named in the hidden meta sheet.
    let mut span_sheets: Vec<(String, String)> = Vec::new();
    for StoredRubric {
        id: rubric_id,
        rubric,
    } in &rubrics
    {
        let name = sheet_name(&rubric.id, &mut taken);
        let mine: Vec<&AssignedText> = items.iter().filter(|i| i.rubric_id == *rubric_id).collect();
        let histories = histories(store, rubric, &mine)?;
        let ws = wb.add_worksheet();
        ws.set_name(&name)?;
        write_rubric_sheet(
            ws,
            &mut cells,
            &formats,
            rubric,
            &mine,
            &current,
            histories.as_deref(),
        )?;
        rows_written += mine.len();
        sheets.push(name);
        if span_sheet::takes_spans(rubric) {
            let name = sheet_name(&format!("{} spans", rubric.id), &mut taken);
            let kept = span_sheet::kept_spans(store, rater_id, *rubric_id, &mine)?;
            let ws = wb.add_worksheet();
            ws.set_name(&name)?;
            span_sheet::write_span_sheet(ws, &mut cells, &formats, rubric, &kept)?;
            span_sheets.push((rubric.id.clone(), name.clone()));
            sheets.push(name);
        }
    }
    for (stored, rows) in &pair_sheets {
        let name = sheet_name(&stored.rubric.id, &mut taken);
        let ids = store.read().criterion_ids(stored.id)?;
        let ws = wb.add_worksheet();
        ws.set_name(&name)?;
        pair_sheet::write_pair_sheet(ws, &mut cells, &formats, stored, rows, &ids)?;
        rows_written += rows.len();
        sheets.push(name);
    }
    codebook(&mut wb, CODEBOOK_SHEET, &rubrics, "en", &mut cells)?;
    sheets.push(CODEBOOK_SHEET.to_string());
    write_meta_sheet(&mut wb, &rater_name, &span_sheets)?;
    wb.save(path).map_err(|e| match e {
        rust_xlsxwriter::XlsxError::IoError(io) => ExportError::Io {
            path: path.display().to_string(),
            detail: io.to_string(),
        },
        other => ExportError::Xlsx(other),
    })?;
    Ok(SheetSummary {
        rater: rater_name,
        sheets,
        rows: rows_written,
    })
}

/// The history cell of every item of a rubric of conversations, in the items' order; `None`
/// for an earlier release's single-turn rubric, whose sheet shows the context as it was.
fn histories(
    store: &Store,
    rubric: &Rubric,
    items: &[&AssignedText],
) -> Result<Option<Vec<String>>, ExportError> {
    let mut places = Vec::with_capacity(items.len());
    for item in items {
        places.push(store.item_place(item.response_id)?.transcript);
    }
    if rubric.scope != crate::rubric::Scope::Session && !places.contains(&true) {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(history_cell(&store.history(item.response_id)?));
    }
    Ok(Some(out))
}

/// The turns before an item as one readable cell: `[turn] Role: text`, one turn per line; the
/// latest turns only when they would not fit in [`HISTORY_CELL_CHARS`].
pub fn history_cell(turns: &[crate::store::TurnRecord]) -> String {
    use crate::store::Role;
    let line = |t: &crate::store::TurnRecord| {
        let role = match t.role {
            Role::User => "User",
            Role::Assistant => "Assistant",
            Role::System => "System note",
        };
        format!("[{}] {role}: {}", t.position, t.text)
    };
    let lines: Vec<String> = turns.iter().map(line).collect();
    // The cell's length as stored: hidden characters are spelled out and formula starts defused.
    let stored = |text: &str| workbook_text(text).chars().count();
    let mut kept = 0usize;
    let mut used = 0usize;
    for l in lines.iter().rev() {
        let cost = stored(l) + 1;
        if used + cost > HISTORY_CELL_CHARS {
            break;
        }
        used += cost;
        kept += 1;
    }
    let left_out = lines.len() - kept;
    let mut shown: Vec<String> = Vec::with_capacity(kept + 1);
    if left_out > 0 {
        shown.push(format!(
            "[… {left_out} earlier turn(s) too long for one cell: the app shows the whole conversation]"
        ));
        if kept == 0 {
            // The last turn alone is too long: its end, the words nearest the item.
            let last = &lines[lines.len() - 1];
            let chars: Vec<char> = last.chars().collect();
            let budget = HISTORY_CELL_CHARS.saturating_sub(200);
            let mut tail: String = chars[chars.len().saturating_sub(budget)..].iter().collect();
            while stored(&tail) > budget {
                tail = tail.chars().skip(64).collect();
            }
            shown.push(format!("… {tail}"));
            return shown.join("\n");
        }
    }
    shown.extend(lines[left_out..].iter().cloned());
    shown.join("\n")
}

/// One rubric's sheet: the header, a row per item, the scale dropdowns, protection; the context
/// column is the items' `histories` when the rubric is one of conversations.
fn write_rubric_sheet(
    ws: &mut rust_xlsxwriter::Worksheet,
    cells: &mut Cells,
    formats: &SheetFormats,
    rubric: &Rubric,
    items: &[&AssignedText],
    current: &CurrentValues,
    histories: Option<&[String]>,
) -> Result<(), ExportError> {
    let before = if histories.is_some() {
        HISTORY
    } else {
        CONTEXT
    };
    let mut header: Vec<String> = vec![ID.into(), ITEM.into(), before.into(), ANSWER.into()];
    header.extend(rubric.criteria.iter().map(|c| c.id.clone()));
    header.push(RATIONALE.into());
    cells.header(ws, &header, &formats.bold)?;
    ws.set_column_hidden(0)?;
    ws.set_column_width(1, 6)?;
    ws.set_column_width(2, 50)?;
    ws.set_column_width(3, 60)?;
    ws.set_column_width((4 + rubric.criteria.len()) as u16, 40)?;
    for (n, item) in items.iter().enumerate() {
        let before = histories.and_then(|h| h.get(n)).map(String::as_str);
        let shown = ShownItem {
            item,
            before: before.unwrap_or(&item.context),
        };
        write_item_row(ws, cells, formats, (n + 1) as u32, rubric, &shown, current)?;
    }
    let last = items.len() as u32;
    if last > 0 {
        add_scale_validation(ws, rubric, last)?;
    }
    ws.protect();
    Ok(())
}

/// An item as its row shows it: the assignment and what comes before the answer (the context,
/// or the history of a conversation).
struct ShownItem<'a> {
    item: &'a AssignedText,
    before: &'a str,
}

/// One item's row: hidden id, item number, texts (locked), current values and rationale.
fn write_item_row(
    ws: &mut rust_xlsxwriter::Worksheet,
    cells: &mut Cells,
    formats: &SheetFormats,
    row: u32,
    rubric: &Rubric,
    shown: &ShownItem<'_>,
    current: &CurrentValues,
) -> Result<(), ExportError> {
    let item = shown.item;
    let occasion = occasion_of(item.purpose);
    let rationale_col = (4 + rubric.criteria.len()) as u16;
    cells.text_fmt(
        ws,
        row,
        0,
        &item_id(item.response_id, item.purpose, &item.conversation),
        &formats.bold,
    )?;
    ws.write_number_with_format(row, 1, (item.position + 1) as f64, &formats.bold)?;
    cells.count += 1;
    cells.text_fmt(ws, row, 2, shown.before, &formats.locked_wrap)?;
    cells.text_fmt(ws, row, 3, &item.answer, &formats.locked_wrap)?;
    let mut rationale: Option<String> = None;
    for (c, criterion) in rubric.criteria.iter().enumerate() {
        let col = (4 + c) as u16;
        match current.get(rubric, criterion, occasion, item.response_id) {
            Some((Some(v), r)) => {
                ws.write_number_with_format(row, col, *v as f64, &formats.input)?;
                cells.count += 1;
                if rationale.is_none() {
                    rationale = r.clone().filter(|t| !t.is_empty());
                }
            }
            _ => {
                ws.write_blank(row, col, &formats.input)?;
            }
        }
    }
    match rationale {
        Some(text) => cells.text_fmt(ws, row, rationale_col, &text, &formats.input_wrap)?,
        None => {
            ws.write_blank(row, rationale_col, &formats.input_wrap)?;
        }
    }
    Ok(())
}

/// A dropdown of the scale's levels on every criterion column of rows 1..=last.
fn add_scale_validation(
    ws: &mut rust_xlsxwriter::Worksheet,
    rubric: &Rubric,
    last: u32,
) -> Result<(), ExportError> {
    for (c, criterion) in rubric.criteria.iter().enumerate() {
        let col = (4 + c) as u16;
        let levels: Vec<String> = criterion
            .scale
            .levels()
            .iter()
            .map(|v| v.to_string())
            .collect();
        // The message is an XML attribute: the label's control characters are spelled out.
        let label = crate::base::text::visible(localized(&criterion.label, "en"));
        let validation = match DataValidation::new().allow_list_strings(&levels) {
            Ok(v) => v,
            Err(_) => DataValidation::new().allow_whole_number(DataValidationRule::Between(
                criterion.scale.min() as i32,
                criterion.scale.max() as i32,
            )),
        };
        let validation = validation
            .set_error_title("Not on the scale")?
            .set_error_message(format!(
                "{label}: enter a whole number from {} to {}.",
                criterion.scale.min(),
                criterion.scale.max()
            ))?;
        ws.add_data_validation(1, col, last, col, &validation)?;
    }
    Ok(())
}

/// The hidden, protected sheet that names the expert and the format version.
fn write_meta_sheet(
    wb: &mut Workbook,
    rater_name: &str,
    span_sheets: &[(String, String)],
) -> Result<(), ExportError> {
    let meta = wb.add_worksheet();
    meta.set_name(META_SHEET)?;
    meta.write_string(0, 0, "key")?;
    meta.write_string(0, 1, "value")?;
    meta.write_string(1, 0, "format")?;
    meta.write_string(1, 1, FORMAT_VERSION)?;
    meta.write_string(2, 0, "rater")?;
    meta.write_string(2, 1, workbook_text(rater_name).as_ref())?;
    for (n, (rubric, sheet)) in span_sheets.iter().enumerate() {
        let row = 3 + n as u32;
        let key = format!("{}{rubric}", span_sheet::META_PREFIX);
        meta.write_string(row, 0, workbook_text(&key).as_ref())?;
        meta.write_string(row, 1, sheet)?;
    }
    meta.set_hidden(true);
    meta.protect();
    Ok(())
}

fn expert(store: &Store, rater: &str) -> Result<(i64, String), ExportError> {
    let found = match store.rater_named(rater.trim())? {
        Some(found) => found,
        // A name with characters XML forbids went into the sheet spelled out: find the one
        // expert whose name is written so.
        None => {
            let spelled: Vec<_> = store
                .raters()?
                .into_iter()
                .filter(|r| r.kind == RaterKind::Expert && xml_safe(&r.name) != r.name)
                .filter(|r| xml_safe(&r.name).trim() == rater.trim())
                .collect();
            match spelled.as_slice() {
                [one] => store
                    .rater(one.id)?
                    .ok_or_else(|| ExportError::UnknownRater(rater.to_string()))?,
                _ => return Err(ExportError::UnknownRater(rater.to_string())),
            }
        }
    };
    if !found.is_expert() {
        return Err(ExportError::NotAnExpert(found.name));
    }
    Ok((found.id, found.name))
}

fn criterion_ids(store: &Store) -> Result<HashMap<CriterionKey, i64>, ExportError> {
    Ok(store
        .read()
        .criterion_keys()?
        .into_iter()
        .map(|c| (c.key, c.id))
        .collect())
}

/// One value to write.
struct Entry {
    response: i64,
    occasion: Occasion,
    criterion: i64,
    value: i64,
    rationale: Option<String>,
}

/// A workbook read for import: its display name, bytes and sheet names.
struct SheetFile {
    file: String,
    bytes: Vec<u8>,
    names: Vec<String>,
}

impl SheetFile {
    fn read(path: &Path) -> Result<SheetFile, SheetError> {
        let file = display_name(path);
        let bytes = read_file(path, &ReadLimits::from_env()).map_err(rejected)?;
        let names = sheet_names(&file, &bytes).map_err(rejected)?;
        Ok(SheetFile { file, bytes, names })
    }

    fn table(&self, sheet: &str) -> Result<crate::files::table::RawTable, SheetError> {
        read_table_bytes(&self.file, &self.bytes, FileFormat::Xlsx, Some(sheet)).map_err(rejected)
    }

    /// An error about the whole file.
    fn whole(&self, message: String) -> CellError {
        CellError {
            file: self.file.clone(),
            sheet: None,
            row: None,
            column: None,
            value: None,
            message,
        }
    }

    /// The expert the hidden `concord` sheet names, found in the study.
    fn expert(&self, store: &Store) -> Result<(i64, String), SheetError> {
        if !self.names.iter().any(|n| n == META_SHEET) {
            return Err(SheetError::Rejected(vec![self.whole(
                "this workbook is not a Concord rating sheet (its hidden `concord` sheet is missing)"
                    .into(),
            )]));
        }
        let meta = self.table(META_SHEET)?;
        let rater = meta
            .rows
            .iter()
            .find(|r| meta.cell(r, 0).as_text().as_deref() == Some("rater"))
            .and_then(|r| meta.cell(r, 1).as_text())
            .map(|r| unneutralise(&r).to_string())
            .ok_or_else(|| {
                SheetError::Rejected(vec![self.whole("the sheet does not name its expert".into())])
            })?;
        expert(store, &rater).map_err(|e| match e {
            ExportError::UnknownRater(_) | ExportError::NotAnExpert(_) => {
                SheetError::Rejected(vec![
                    self.whole(format!("{e}; is this sheet from another study?"))
                ])
            }
            other => other.into(),
        })
    }
}

impl SheetFile {
    /// The spans sheets the hidden `concord` sheet names: sheet name → rubric key.
    fn span_sheets(&self) -> Result<HashMap<String, String>, SheetError> {
        let meta = self.table(META_SHEET)?;
        Ok(meta
            .rows
            .iter()
            .filter_map(|r| {
                let key = meta.cell(r, 0).as_text()?;
                let rubric = key.strip_prefix(span_sheet::META_PREFIX)?.to_string();
                Some((meta.cell(r, 1).as_text()?, rubric))
            })
            .filter(|(name, _)| self.names.contains(name))
            .collect())
    }
}

/// Read one spans sheet (`span_sheet`) of rubric `rubric_key` into `reading`.
fn read_spans(
    sheet: &SheetFile,
    name: &str,
    table: &crate::files::table::RawTable,
    rubric_key: &str,
    positions: &[(i64, i64, Purpose, String)],
    expected: &SheetExpectations,
    reading: &mut SheetReading,
) {
    let rubric = expected
        .rubrics
        .iter()
        .map(|s| &s.rubric)
        .find(|r| r.id == rubric_key && span_sheet::takes_spans(r));
    let Some(rubric) = rubric else {
        reading.errors.push(CellError::at(
            &sheet.file,
            name,
            1,
            "",
            None,
            format!(
                "this spans sheet names rubric {rubric_key}, which has no span codes in this study"
            ),
        ));
        return;
    };
    let spans = span_sheet::SpanSheetExpectations {
        file: &sheet.file,
        rater_name: &expected.rater_name,
        rubric,
        items: span_sheet::items_of(positions, rubric_key),
    };
    span_sheet::read_span_sheet(&spans, name, table, &mut reading.spans, &mut reading.errors);
}

fn rejected(issues: Vec<Issue>) -> SheetError {
    SheetError::Rejected(issues.into_iter().map(Into::into).collect())
}

/// What the study says a returned sheet may hold: the expert's assignment, the rubrics and the
/// criterion ids.
struct SheetExpectations {
    rater_name: String,
    /// (response, purpose) → (conversation external id, rubric key).
    assigned: HashMap<(i64, Purpose), (String, String)>,
    rubrics: Vec<StoredRubric>,
    criterion_ids: HashMap<CriterionKey, i64>,
}

/// What the sheets of a workbook gave: values to write, rows read, and every bad cell.
#[derive(Default)]
struct SheetReading {
    entries: Vec<Entry>,
    pair_entries: Vec<pair_sheet::PairEntry>,
    /// Pairwise rubric id → how many questions a pair has.
    question_counts: HashMap<i64, usize>,
    spans: Vec<span_sheet::SpanEntry>,
    rows: usize,
    errors: Vec<CellError>,
}

/// Read a filled rating sheet back as its expert's ratings (see the module documentation).
pub fn import_rating_sheet(
    store: &mut Store,
    path: &Path,
) -> Result<SheetImportReport, SheetError> {
    let sheet = SheetFile::read(path)?;
    let (rater_id, rater_name) = sheet.expert(store)?;
    let keys = store.assigned_keys(rater_id).map_err(ExportError::from)?;
    let positions: Vec<(i64, i64, Purpose, String)> = keys
        .iter()
        .map(|a| (a.position, a.response_id, a.purpose, a.rubric.clone()))
        .collect();
    let span_sheets = sheet.span_sheets()?;
    let expected = SheetExpectations {
        assigned: keys
            .into_iter()
            .map(|a| ((a.response_id, a.purpose), (a.conversation, a.rubric)))
            .collect(),
        rubrics: store.rubrics()?,
        criterion_ids: criterion_ids(store).map_err(SheetError::Export)?,
        rater_name,
    };
    let pairs_expected = pair_sheet::PairExpectations::read(store, rater_id)?;
    let pair_ids = pair_sheet::pairwise_criterion_ids(store, &expected.rubrics)?;
    let pair_sheets = pair_sheet::PairSheetExpectations {
        file: &sheet.file,
        rubrics: &expected.rubrics,
        criterion_ids: &pair_ids,
        pairs: &pairs_expected,
        rater_name: &expected.rater_name,
    };
    let mut reading = SheetReading::default();
    for name in sheet
        .names
        .iter()
        .filter(|n| *n != META_SHEET && *n != CODEBOOK_SHEET)
    {
        let table = sheet.table(name)?;
        if let Some(rubric_key) = span_sheets.get(name) {
            read_spans(
                &sheet,
                name,
                &table,
                rubric_key,
                &positions,
                &expected,
                &mut reading,
            );
        } else if table.column(pair_sheet::ANSWER_A).is_some() {
            let pairs = pair_sheet::read_pair_sheet(&pair_sheets, name, &table);
            reading.pair_entries.extend(pairs.entries);
            reading.rows += pairs.rows;
            reading.errors.extend(pairs.errors);
        } else {
            read_rubric_sheet(&sheet.file, name, &table, &expected, &mut reading);
        }
    }
    reading.question_counts = pair_ids.iter().map(|(r, ids)| (*r, ids.len())).collect();
    if !reading.errors.is_empty() {
        return Err(SheetError::Rejected(reading.errors));
    }
    write_entries(store, &sheet.file, rater_id, expected.rater_name, reading)
}

/// Read one rubric's sheet: every row's values, or the cells that are wrong.
fn read_rubric_sheet(
    file: &str,
    name: &str,
    table: &crate::files::table::RawTable,
    expected: &SheetExpectations,
    reading: &mut SheetReading,
) {
    let at = |row: usize, column: &str, value: Option<String>, message: String| {
        CellError::at(file, name, row, column, value, message)
    };
    let Some(id_col) = table.column(ID) else {
        reading.errors.push(CellError {
            column: Some(ID.into()),
            ..at(
                1,
                ID,
                None,
                "the hidden id column is missing; the sheet was changed".into(),
            )
        });
        return;
    };
    // The rubric is the one whose criteria the headers name.
    let rubric = expected
        .rubrics
        .iter()
        .map(|s| &s.rubric)
        .find(|r| r.criteria.iter().all(|c| table.column(&c.id).is_some()));
    let Some(rubric) = rubric else {
        reading.errors.push(at(
            1,
            "",
            None,
            "the criterion columns do not match any rubric of this study".into(),
        ));
        return;
    };
    let columns: Vec<(usize, i64, &crate::rubric::Criterion)> = rubric
        .criteria
        .iter()
        .filter_map(|c| {
            let col = table.column(&c.id)?;
            let id = *expected
                .criterion_ids
                .get(&CriterionKey::new(&rubric.id, &c.id))?;
            Some((col, id, c))
        })
        .collect();
    let rationale_col = table.column(RATIONALE);
    for row in &table.rows {
        let id_text = table.cell(row, id_col).as_text().unwrap_or_default();
        let Some((response, purpose, conversation)) = parse_id(&id_text) else {
            reading.errors.push(at(
                row.number,
                ID,
                Some(id_text),
                "not a Concord item id; rows must not be added or their ids changed".into(),
            ));
            continue;
        };
        match expected.assigned.get(&(response, purpose)) {
            None => {
                reading.errors.push(at(
                    row.number,
                    ID,
                    Some(id_text),
                    format!("this item is not in {}'s assignment", expected.rater_name),
                ));
                continue;
            }
            Some((conv, key)) if conv != &conversation || key != &rubric.id => {
                reading.errors.push(at(
                    row.number,
                    ID,
                    Some(id_text),
                    "this row belongs to another study or rubric".into(),
                ));
                continue;
            }
            Some(_) => {}
        }
        reading.rows += 1;
        let rationale = rationale_col
            .and_then(|c| table.cell(row, c).as_text())
            .map(|t| unneutralise(t.trim()).to_string())
            .filter(|t| !t.is_empty());
        for (col, criterion_id, criterion) in &columns {
            let cell = table.cell(row, *col);
            if cell.is_blank() {
                continue;
            }
            match cell_value(cell, criterion) {
                Some(value) => reading.entries.push(Entry {
                    response,
                    occasion: occasion_of(purpose),
                    criterion: *criterion_id,
                    value,
                    rationale: rationale.clone(),
                }),
                None => reading.errors.push(at(
                    row.number,
                    &table.headers[*col],
                    Some(cell.as_text().unwrap_or_default()),
                    format!(
                        "{} takes a whole number from {} to {}",
                        criterion.id,
                        criterion.scale.min(),
                        criterion.scale.max()
                    ),
                )),
            }
        }
    }
}

/// A cell's value when it is a whole number on the criterion's scale.
fn cell_value(cell: &Cell, criterion: &crate::rubric::Criterion) -> Option<i64> {
    let number = match cell {
        Cell::Number(x) => Some(*x),
        Cell::Text(t) => t.trim().parse::<f64>().ok(),
        _ => None,
    };
    match number {
        Some(x) if x.fract() == 0.0 && criterion.scale.contains(x as i64) => Some(x as i64),
        _ => None,
    }
}

/// Write the values read, in one transaction, and count what changed.
fn write_entries(
    store: &mut Store,
    file: &str,
    rater_id: i64,
    rater_name: String,
    reading: SheetReading,
) -> Result<SheetImportReport, SheetError> {
    let origin = format!("sheet:{file}");
    let mut report = SheetImportReport {
        rater: rater_name,
        rows: reading.rows,
        ..SheetImportReport::default()
    };
    store.write(|tx| -> Result<(), SheetError> {
        for e in &reading.entries {
            let outcome = tx.set_rating(&RatingInput {
                rater_id,
                response_id: e.response,
                criterion_id: e.criterion,
                occasion: e.occasion,
                value: Some(e.value),
                raw_value: None,
                rationale: e.rationale.as_deref(),
                origin: &origin,
            })?;
            match outcome {
                RatingOutcome::Inserted => report.inserted += 1,
                RatingOutcome::Updated { .. } => report.updated += 1,
                RatingOutcome::Unchanged => report.unchanged += 1,
            }
        }
        let pairs = pair_sheet::write_pair_entries(
            tx,
            rater_id,
            &origin,
            &reading.pair_entries,
            &reading.question_counts,
        )?;
        report.pairs_inserted = pairs.inserted;
        report.pairs_updated = pairs.updated;
        report.unchanged += pairs.unchanged;
        let spans = span_sheet::write_span_entries(tx, rater_id, &reading.spans)?;
        report.spans_added = spans.added;
        report.spans_unchanged = spans.unchanged;
        report.spans_unlocated = spans.unlocated;
        if spans.added > 0 {
            tx.audit(
                "lead",
                "spans.sheet_import",
                &serde_json::json!({
                    "file": file, "rater": report.rater, "added": spans.added,
                    "unlocated": report.spans_unlocated.len(),
                }),
            )?;
        }
        if report.inserted + report.updated + pairs.inserted + pairs.updated > 0 {
            tx.audit(
                "lead",
                "rating_sheet_imported",
                &serde_json::json!({
                    "file": file, "rater": report.rater,
                    "inserted": report.inserted, "updated": report.updated,
                    "pairs_inserted": pairs.inserted, "pairs_updated": pairs.updated,
                }),
            )?;
        }
        Ok(())
    })?;
    Ok(report)
}

fn parse_id(text: &str) -> Option<(i64, Purpose, String)> {
    let mut parts = text.trim().splitn(3, '|');
    let response = parts.next()?.strip_prefix('r')?.parse().ok()?;
    let purpose = Purpose::parse(parts.next()?)?;
    let conversation = parts.next()?.to_string();
    Some((response, purpose, conversation))
}
