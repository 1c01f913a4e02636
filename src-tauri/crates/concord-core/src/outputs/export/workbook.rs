//! The results workbook (XLSX, written with rust_xlsxwriter): a codebook sheet (every criterion
//! with its scale and anchors), one sheet per expert (one row per response × occasion, one column
//! per criterion, then the rationale, the time of the last change and the row's signature state —
//! `changed_after_signature` when any value changed after its signature, else `signed` when any
//! is signed, else empty), and an agreement sheet
//! with the agreement module's report for every rubric that has both judge and expert ratings.
//! A study of conversations (transcripts or a session rubric) has `turn` and `scope` after
//! `source` on every expert sheet, and the agreement sheet adds, for a reply rubric over
//! transcripts, its figures per turn number.
//! Strings are written as strings (never formulas) after [`workbook_text`] (formula starts
//! defused, characters XML forbids spelled out); values as numbers.

use super::csv::row_signature;
use super::{
    criterion_columns, for_each_rating, has_conversation_columns, iso_utc, ExportError, RatingRow,
};
use crate::base::cell::workbook_text;
use crate::base::text::quoted;
use crate::files::Issue;
use crate::panel::agreement;
use crate::panel::agreement::AgreementOptions;
use crate::rubric::localized;
use crate::store::SignatureState;
use crate::store::{Store, StoredRubric};
use rust_xlsxwriter::{Format, Workbook, Worksheet};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// What goes into the workbook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WorkbookOptions {
    /// Compute and include the agreement report (may take seconds on a large study).
    pub agreement: bool,
    /// Display language of labels and anchors (`en`, `zh`).
    pub language: String,
}

impl Default for WorkbookOptions {
    fn default() -> Self {
        WorkbookOptions {
            agreement: true,
            language: "en".to_string(),
        }
    }
}

/// What [`write_workbook`] wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WorkbookSummary {
    pub sheets: Vec<String>,
    /// Cells written (headers included).
    pub cells: usize,
    pub ratings: usize,
}

/// A valid, unique worksheet name for `wanted` (31 characters, none of `[]:*?/\`), its control
/// and direction characters spelled out (`<U+202E>`): a sheet name is an XML attribute, where a
/// control character makes the workbook malformed, and a tab the reader sees.
pub(crate) fn sheet_name(wanted: &str, taken: &mut BTreeSet<String>) -> String {
    let clean: String = crate::base::text::visible(wanted)
        .chars()
        .map(|c| if "[]:*?/\\".contains(c) { '_' } else { c })
        .collect();
    let clean = clean.trim_matches('\'').trim();
    let base: String = if clean.is_empty() || clean.eq_ignore_ascii_case("history") {
        format!("Sheet {}", taken.len() + 1)
    } else {
        clean.chars().take(31).collect()
    };
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains(&name.to_lowercase()) {
        let suffix = format!(" ({n})");
        name = base
            .chars()
            .take(31 - suffix.chars().count())
            .collect::<String>()
            + &suffix;
        n += 1;
    }
    taken.insert(name.to_lowercase());
    name
}

/// Counts cells as they are written.
pub(crate) struct Cells {
    pub count: usize,
}

impl Cells {
    pub fn text(
        &mut self,
        ws: &mut Worksheet,
        row: u32,
        col: u16,
        text: &str,
    ) -> Result<(), ExportError> {
        if !text.is_empty() {
            ws.write_string(row, col, workbook_text(text).as_ref())?;
            self.count += 1;
        }
        Ok(())
    }
    pub fn text_fmt(
        &mut self,
        ws: &mut Worksheet,
        row: u32,
        col: u16,
        text: &str,
        format: &Format,
    ) -> Result<(), ExportError> {
        ws.write_string_with_format(row, col, workbook_text(text).as_ref(), format)?;
        self.count += 1;
        Ok(())
    }
    pub fn number(
        &mut self,
        ws: &mut Worksheet,
        row: u32,
        col: u16,
        value: f64,
    ) -> Result<(), ExportError> {
        ws.write_number(row, col, value)?;
        self.count += 1;
        Ok(())
    }
    pub fn header(
        &mut self,
        ws: &mut Worksheet,
        names: &[String],
        bold: &Format,
    ) -> Result<(), ExportError> {
        for (c, name) in names.iter().enumerate() {
            self.text_fmt(ws, 0, c as u16, name, bold)?;
        }
        ws.set_freeze_panes(1, 0)?;
        Ok(())
    }
}

/// Write the codebook sheet: one row per criterion.
pub(crate) fn codebook(
    wb: &mut Workbook,
    name: &str,
    rubrics: &[StoredRubric],
    language: &str,
    cells: &mut Cells,
) -> Result<(), ExportError> {
    let bold = Format::new().set_bold();
    let wrap = Format::new().set_text_wrap();
    let ws = wb.add_worksheet();
    ws.set_name(name)?;
    let header: Vec<String> = [
        "rubric",
        "criterion",
        "label",
        "group",
        "scale",
        "min",
        "max",
        "anchors",
        "description",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    cells.header(ws, &header, &bold)?;
    ws.set_column_width(2, 28)?;
    ws.set_column_width(7, 60)?;
    ws.set_column_width(8, 60)?;
    let mut row = 1u32;
    for StoredRubric { rubric, .. } in rubrics {
        for c in &rubric.criteria {
            cells.text(ws, row, 0, &rubric.id)?;
            cells.text(ws, row, 1, &c.id)?;
            cells.text(ws, row, 2, localized(&c.label, language))?;
            cells.text(ws, row, 3, c.group.as_deref().unwrap_or(""))?;
            cells.text(ws, row, 4, c.scale.kind_name())?;
            cells.number(ws, row, 5, c.scale.min() as f64)?;
            cells.number(ws, row, 6, c.scale.max() as f64)?;
            let anchors = c
                .anchors
                .iter()
                .map(|a| format!("{} = {}", a.value, localized(&a.label, language)))
                .collect::<Vec<_>>()
                .join("\n");
            if !anchors.is_empty() {
                cells.text_fmt(ws, row, 7, &anchors, &wrap)?;
            }
            let description = localized(&c.description, language);
            if !description.is_empty() {
                cells.text_fmt(ws, row, 8, description, &wrap)?;
            }
            row += 1;
        }
    }
    Ok(())
}

/// Write the results workbook to `path`: the codebook, one sheet per expert, the agreement sheet
/// (when asked for) and the provenance sheet, then the file.
pub fn write_workbook(
    store: &Store,
    path: &Path,
    options: &WorkbookOptions,
) -> Result<WorkbookSummary, ExportError> {
    let mut out = WorkbookWriter {
        wb: Workbook::new(),
        cells: Cells { count: 0 },
        taken: BTreeSet::new(),
        sheets: Vec::new(),
        bold: Format::new().set_bold(),
    };

    let rubrics = store.rubrics()?;
    let name = sheet_name("Codebook", &mut out.taken);
    codebook(
        &mut out.wb,
        &name,
        &rubrics,
        &options.language,
        &mut out.cells,
    )?;
    out.sheets.push(name);
    let ratings = out.expert_sheets(store)?;
    if options.agreement {
        out.agreement_sheet(store, &rubrics)?;
    }
    out.provenance_sheet(store, options)?;

    let WorkbookWriter {
        mut wb,
        cells,
        sheets,
        ..
    } = out;
    wb.save(path).map_err(|e| match e {
        rust_xlsxwriter::XlsxError::IoError(io) => ExportError::Io {
            path: path.display().to_string(),
            detail: io.to_string(),
        },
        other => ExportError::Xlsx(other),
    })?;
    Ok(WorkbookSummary {
        sheets,
        cells: cells.count,
        ratings,
    })
}

/// The workbook as it is written: its sheets so far (and the names they took), the cells
/// counted, and the bold format of headers.
struct WorkbookWriter {
    wb: Workbook,
    cells: Cells,
    taken: BTreeSet<String>,
    sheets: Vec<String>,
    bold: Format,
}

impl WorkbookWriter {
    /// One sheet per expert, all with the same columns; the ratings written.
    fn expert_sheets(&mut self, store: &Store) -> Result<usize, ExportError> {
        let layout = ExpertLayout::of(store)?;
        let experts: Vec<String> = store
            .raters()?
            .into_iter()
            .filter(|r| r.kind == crate::store::RaterKind::Expert)
            .map(|r| r.name)
            .collect();
        let mut ratings = 0usize;
        for expert in &experts {
            let name = sheet_name(expert, &mut self.taken);
            let ws = self.wb.add_worksheet();
            ws.set_name(&name)?;
            self.cells.header(ws, &layout.header, &self.bold)?;
            let mut rows = ExpertRows {
                ws,
                cells: &mut self.cells,
                layout: &layout,
                row: 0,
                last: None,
                rationale_written: false,
                updated: 0,
                signature: SignatureState::Unsigned,
            };
            ratings += for_each_rating(
                store,
                Some(expert),
                super::order::RUN_ROWS,
                |r: RatingRow| rows.rating(r),
            )?;
            rows.close_row()?;
            self.sheets.push(name);
        }
        Ok(ratings)
    }

    /// The agreement report of every rubric with both judge and expert ratings, one block per
    /// part of the report (or a line saying there is none).
    fn agreement_sheet(
        &mut self,
        store: &Store,
        rubrics: &[StoredRubric],
    ) -> Result<(), ExportError> {
        let (cells, bold) = (&mut self.cells, &self.bold);
        let name = sheet_name("Agreement", &mut self.taken);
        let ws = self.wb.add_worksheet();
        ws.set_name(&name)?;
        let mut row = 0u32;
        let mut any = false;
        for StoredRubric { rubric, .. } in rubrics {
            let kinds = store.rater_kinds_of_rubric(&rubric.id)?;
            if !(kinds.iter().any(|k| k == "judge") && kinds.iter().any(|k| k == "expert")) {
                continue;
            }
            let report = agreement::report(store, AgreementOptions::mentalalign(&rubric.id))?;
            any = true;
            for (title, items) in [
                ("ICC", to_rows(&report.cells)),
                ("Binary dimensions", to_rows(&report.binary)),
                ("Totals", to_rows(&report.totals)),
            ] {
                if items.is_empty() {
                    continue;
                }
                cells.text_fmt(ws, row, 0, &format!("{} — {title}", rubric.id), bold)?;
                row += 1;
                row = write_block(ws, cells, bold, row, &items)?;
            }
            if report
                .conversations
                .as_ref()
                .is_some_and(|c| !c.turns.is_empty())
            {
                let items = by_turn_rows(store, &rubric.id)?;
                cells.text_fmt(ws, row, 0, &format!("{} — ICC by turn", rubric.id), bold)?;
                row += 1;
                row = write_block(ws, cells, bold, row, &items)?;
            }
        }
        if !any {
            cells.text(
                ws,
                0,
                0,
                "No rubric has both judge and expert ratings yet, so there is no agreement to report.",
            )?;
        }
        self.sheets.push(name);
        Ok(())
    }

    /// The reproducibility record: which data (the audit chain's head), which Concord, which
    /// options.
    fn provenance_sheet(
        &mut self,
        store: &Store,
        options: &WorkbookOptions,
    ) -> Result<(), ExportError> {
        let provenance = crate::guard::provenance::Provenance::of(
            store,
            serde_json::json!({
                "workbook": { "agreement": options.agreement, "language": options.language },
                "agreement": if options.agreement { Some("mentalalign defaults per rubric (seed 42, 1000 resamples)") } else { None },
            }),
        )?;
        let name = sheet_name("Provenance", &mut self.taken);
        let ws = self.wb.add_worksheet();
        ws.set_name(&name)?;
        let rows = [
            ("concord_version", provenance.concord_version.clone()),
            (
                "audit_head",
                provenance.audit_head.clone().unwrap_or_default(),
            ),
            ("lead_key", provenance.lead_key.clone().unwrap_or_default()),
            ("options", provenance.options.to_string()),
        ];
        self.cells
            .header(ws, &["key".to_string(), "value".to_string()], &self.bold)?;
        for (i, (k, v)) in rows.iter().enumerate() {
            self.cells.text(ws, i as u32 + 1, 0, k)?;
            self.cells.text(ws, i as u32 + 1, 1, v)?;
        }
        self.sheets.push(name);
        Ok(())
    }
}

/// The columns of an expert sheet: the response's identity and occasion, one per criterion,
/// then the rationale, the time of the last change and the signature state.
struct ExpertLayout {
    header: Vec<String>,
    /// Criterion id → its position among the criterion columns.
    index: HashMap<i64, usize>,
    /// The column of the first criterion.
    first_value: usize,
    /// Whether `turn` and `scope` follow `source`.
    conversations: bool,
    /// The rationale's column (the last change and the signature follow it).
    rationale_col: usize,
}

impl ExpertLayout {
    /// The columns for the study's criteria.
    fn of(store: &Store) -> Result<Self, ExportError> {
        let columns = criterion_columns(store)?;
        let index: HashMap<i64, usize> =
            columns.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
        let conversations = has_conversation_columns(store)?;
        let mut header: Vec<String> = ["conversation_id", "response_id", "source"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if conversations {
            header.extend(["turn".to_string(), "scope".to_string()]);
        }
        header.push("occasion".into());
        let first_value = header.len();
        header.extend(columns.iter().map(|c| c.header.clone()));
        let rationale_col = header.len();
        header.push("rationale".into());
        header.push("updated_at".into());
        header.push("signature".into());
        Ok(ExpertLayout {
            header,
            index,
            first_value,
            conversations,
            rationale_col,
        })
    }
}

/// One expert sheet as its ratings arrive in export order: a row per response × occasion, the
/// row open and what it has gathered (first rationale written, last change, signature state).
struct ExpertRows<'a> {
    ws: &'a mut Worksheet,
    cells: &'a mut Cells,
    layout: &'a ExpertLayout,
    row: u32,
    last: Option<(i64, &'static str)>,
    rationale_written: bool,
    updated: i64,
    signature: SignatureState,
}

impl ExpertRows<'_> {
    /// One rating: a new row when it is of another response or occasion, then its value in its
    /// criterion's column and the row's first rationale.
    fn rating(&mut self, r: RatingRow) -> Result<(), ExportError> {
        if self.last != Some((r.response_id, r.occasion)) {
            self.close_row()?;
            self.row += 1;
            self.last = Some((r.response_id, r.occasion));
            self.rationale_written = false;
            self.updated = 0;
            self.signature = SignatureState::Unsigned;
            self.cells.text(self.ws, self.row, 0, &r.conversation)?;
            self.cells.text(self.ws, self.row, 1, &r.response)?;
            self.cells.text(self.ws, self.row, 2, &r.source)?;
            let mut col = 3;
            if self.layout.conversations {
                if let Some(turn) = r.turn {
                    self.cells.number(self.ws, self.row, col, turn as f64)?;
                }
                self.cells
                    .text(self.ws, self.row, col + 1, r.scope.as_str())?;
                col += 2;
            }
            self.cells.text(self.ws, self.row, col, r.occasion)?;
        }
        let (row, layout) = (self.row, self.layout);
        self.updated = self.updated.max(r.updated_at);
        self.signature = row_signature(self.signature, r.signature);
        if let Some(&i) = layout.index.get(&r.criterion_id) {
            let col = (layout.first_value + i) as u16;
            match (r.value, &r.raw_value) {
                (Some(v), _) => self.cells.number(self.ws, row, col, v as f64)?,
                (None, Some(raw)) => self.cells.text(self.ws, row, col, raw)?,
                (None, None) => {}
            }
        }
        if !self.rationale_written {
            if let Some(text) = r.rationale.as_deref().filter(|t| !t.is_empty()) {
                self.cells
                    .text(self.ws, row, layout.rationale_col as u16, text)?;
                self.rationale_written = true;
            }
        }
        Ok(())
    }

    /// Finish the open row (if any): its last change and signature state.
    fn close_row(&mut self) -> Result<(), ExportError> {
        if self.row > 0 {
            let col = self.layout.rationale_col;
            self.cells
                .text(self.ws, self.row, (col + 1) as u16, &iso_utc(self.updated))?;
            self.cells
                .text(self.ws, self.row, (col + 2) as u16, self.signature.as_str())?;
        }
        Ok(())
    }
}

/// The agreement of a rubric over transcripts per turn number, as rows: the turn, its items and
/// conversations, then each judge-versus-experts item-level cell (its interval resamples the
/// turn's conversations), or the reason a turn has none.
fn by_turn_rows(
    store: &Store,
    rubric: &str,
) -> Result<Vec<Vec<(String, serde_json::Value)>>, ExportError> {
    use crate::panel::agreement::{AgreementData, Comparison, Level, ReferencedData};
    use crate::panel::strata::{by_facet, Facet};
    let options = AgreementOptions {
        levels: vec![Level::Item],
        groups: false,
        per_expert: false,
        ..AgreementOptions::mentalalign(rubric)
    };
    let data = ReferencedData::experts(AgreementData::load_compared(store, rubric)?);
    let split = by_facet(store, &data, Facet::Turn, &options)?;
    let mut rows = Vec::new();
    for stratum in &split.strata {
        let head = vec![
            (
                "turn".to_string(),
                Facet::Turn.value_json(stratum.value.as_deref()),
            ),
            ("n_compared".to_string(), stratum.n_compared.into()),
            (
                "n_conversations".to_string(),
                stratum.n_conversations.unwrap_or(0).into(),
            ),
        ];
        match &stratum.report {
            None => {
                let mut row = head;
                row.push((
                    "not_computed".to_string(),
                    stratum.not_computed.clone().unwrap_or_default().into(),
                ));
                rows.push(row);
            }
            Some(report) => {
                let cells: Vec<_> = report
                    .cells
                    .iter()
                    .filter(|c| c.comparison == Comparison::JudgeVsExperts)
                    .collect();
                for cell in to_rows(&cells) {
                    let mut row = head.clone();
                    row.extend(cell);
                    rows.push(row);
                }
            }
        }
    }
    Ok(rows)
}

/// A header of every key the rows have (in the order each first appears: rows of one report
/// differ only by fields some rows leave out), then each row's values under their keys; returns
/// the row after the block's blank line.
fn write_block(
    ws: &mut Worksheet,
    cells: &mut Cells,
    bold: &Format,
    mut row: u32,
    items: &[Vec<(String, serde_json::Value)>],
) -> Result<u32, ExportError> {
    let mut keys: Vec<&str> = Vec::new();
    for item in items {
        for (k, _) in item {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    for (c, k) in keys.iter().enumerate() {
        cells.text_fmt(ws, row, c as u16, k, bold)?;
    }
    row += 1;
    for item in items {
        for (k, v) in item {
            if let Some(c) = keys.iter().position(|key| key == k) {
                write_json(ws, cells, row, c as u16, v)?;
            }
        }
        row += 1;
    }
    Ok(row + 1)
}

/// Serialise report rows into (column, value) pairs, nested objects flattened with dots.
fn to_rows<T: Serialize>(items: &[T]) -> Vec<Vec<(String, serde_json::Value)>> {
    fn flatten(prefix: &str, v: serde_json::Value, out: &mut Vec<(String, serde_json::Value)>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    let key = if prefix.is_empty() {
                        k
                    } else {
                        format!("{prefix}.{k}")
                    };
                    flatten(&key, v, out);
                }
            }
            other => out.push((prefix.to_string(), other)),
        }
    }
    items
        .iter()
        .map(|item| {
            let mut out = Vec::new();
            flatten("", serde_json::to_value(item).unwrap_or_default(), &mut out);
            out
        })
        .collect()
}

fn write_json(
    ws: &mut Worksheet,
    cells: &mut Cells,
    row: u32,
    col: u16,
    v: &serde_json::Value,
) -> Result<(), ExportError> {
    match v {
        serde_json::Value::Null => Ok(()),
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(x) if x.is_finite() => cells.number(ws, row, col, x),
            _ => Ok(()),
        },
        serde_json::Value::Bool(b) => cells.text(ws, row, col, if *b { "yes" } else { "no" }),
        serde_json::Value::String(s) => cells.text(ws, row, col, s),
        serde_json::Value::Array(items) => {
            let text = items
                .iter()
                .map(|i| match i {
                    serde_json::Value::Null => "".to_string(),
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ");
            cells.text(ws, row, col, &text)
        }
        serde_json::Value::Object(_) => cells.text(ws, row, col, &v.to_string()),
    }
}

/// One bad cell of a filled sheet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CellError {
    pub file: String,
    pub sheet: Option<String>,
    /// The row as the user sees it (1-based, header row included).
    pub row: Option<usize>,
    pub column: Option<String>,
    pub value: Option<String>,
    pub message: String,
}

impl CellError {
    /// A bad cell of a sheet of a workbook: its file, sheet, row, column, value and what is wrong.
    pub(crate) fn at(
        file: &str,
        sheet: &str,
        row: usize,
        column: &str,
        value: Option<String>,
        message: String,
    ) -> CellError {
        CellError {
            file: file.to_string(),
            sheet: Some(sheet.to_string()),
            row: Some(row),
            column: Some(column.to_string()),
            value,
            message,
        }
    }
}

impl std::fmt::Display for CellError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(s) = &self.sheet {
            write!(f, ", sheet {}", quoted(s))?;
        }
        if let Some(r) = self.row {
            write!(f, ", row {r}")?;
        }
        if let Some(c) = &self.column {
            write!(f, ", column {}", quoted(c))?;
        }
        if let Some(v) = &self.value {
            write!(f, ", value {}", quoted(v))?;
        }
        write!(f, ": {}", self.message)
    }
}

impl From<Issue> for CellError {
    fn from(i: Issue) -> Self {
        CellError {
            file: i.at.file,
            sheet: i.at.sheet,
            row: i.at.row,
            column: i.at.column,
            value: None,
            message: i.message,
        }
    }
}

/// The cell formats of a fill-in sheet.
pub(super) struct SheetFormats {
    pub bold: Format,
    pub locked_wrap: Format,
    pub input: Format,
    pub input_wrap: Format,
}
