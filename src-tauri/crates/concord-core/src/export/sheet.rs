//! The fill-in rating sheet: an XLSX workbook for an expert who prefers Excel to the app. It has
//! one sheet per rubric of the expert's assignment, one row per assigned item in the expert's
//! shown order: a hidden id column, the item number, the context and the answer (locked by sheet
//! protection), one column per criterion with a validated dropdown of the scale's levels (1–5,
//! 0/1) and a rationale column, pre-filled with the expert's current values. A codebook sheet
//! holds the anchors, and a hidden `concord` sheet names the expert. No source, judge or other
//! rater appears in it.
//!
//! [`import_rating_sheet`] reads a filled sheet back (through the importers' raw-row reader) as
//! that expert's ratings. Every bad cell — a value off the scale or not a whole number, an id that
//! is not in the expert's assignment or belongs to another study — is reported with its file,
//! sheet, row, column and value, and then nothing is written. Blank cells are left as they are.
//! A row's rationale goes onto every criterion rated in that row.

use super::workbook::{codebook, sheet_name, Cells};
use super::{neutralise, unneutralise, ExportError};
use crate::assignment::{set_retest_rating, Purpose};
use crate::import::bounds::ReadLimits;
use crate::import::table::{
    display_name, read_file, read_table_bytes, sheet_names, Cell, FileFormat,
};
use crate::import::Issue;
use crate::rubric::{localized, Rubric};
use crate::store::{RatingInput, RatingOutcome, Store, StoreError};
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

impl std::fmt::Display for CellError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(s) = &self.sheet {
            write!(f, ", sheet {s:?}")?;
        }
        if let Some(r) = self.row {
            write!(f, ", row {r}")?;
        }
        if let Some(c) = &self.column {
            write!(f, ", column {c:?}")?;
        }
        if let Some(v) = &self.value {
            write!(f, ", value {v:?}")?;
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
}

struct SheetItem {
    position: i64,
    response: i64,
    purpose: Purpose,
    conversation: String,
    context: String,
    answer: String,
    rubric: i64,
}

/// (retest occasion, response, criterion).
type CurrentKey = (bool, i64, i64);

fn item_id(response: i64, purpose: Purpose, conversation: &str) -> String {
    format!("r{response}|{}|{conversation}", purpose.as_str())
}

/// Write the fill-in sheet of expert `rater` to `path`.
pub fn write_rating_sheet(
    store: &Store,
    rater: &str,
    path: &Path,
) -> Result<SheetSummary, ExportError> {
    let conn = store.conn();
    let (rater_id, rater_name) = expert(store, rater)?;
    let items: Vec<SheetItem> = conn
        .prepare(
            "SELECT a.position, a.response_id, a.purpose, v.external_id, v.context,
                    COALESCE(p.text, ''), v.rubric_id
             FROM assignment a JOIN response p ON p.id = a.response_id
             JOIN conversation v ON v.id = p.conversation_id
             WHERE a.rater_id = ?1 ORDER BY a.position",
        )?
        .query_map([rater_id], |r| {
            let purpose: String = r.get(2)?;
            Ok(SheetItem {
                position: r.get(0)?,
                response: r.get(1)?,
                purpose: Purpose::parse(&purpose).unwrap_or(Purpose::Regular),
                conversation: r.get(3)?,
                context: r.get(4)?,
                answer: r.get(5)?,
                rubric: r.get(6)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    if items.is_empty() {
        return Err(ExportError::NothingAssigned(rater_name));
    }
    // Current values: (occasion is retest, response, criterion) → (value, rationale).
    let mut current: HashMap<CurrentKey, (Option<i64>, Option<String>)> = HashMap::new();
    for (retest, table) in [(false, "rating"), (true, "retest_rating")] {
        let mut stmt = conn.prepare(&format!(
            "SELECT response_id, criterion_id, value, rationale FROM {table} WHERE rater_id = ?1"
        ))?;
        let rows = stmt.query_map([rater_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<i64>>(2)?,
                r.get::<_, Option<String>>(3)?,
            ))
        })?;
        for row in rows {
            let (resp, crit, value, rationale) = row?;
            current.insert((retest, resp, crit), (value, rationale));
        }
    }
    let rubric_ids: BTreeSet<i64> = items.iter().map(|i| i.rubric).collect();
    let rubrics: Vec<(i64, Rubric)> = store
        .rubrics()?
        .into_iter()
        .filter(|(id, _)| rubric_ids.contains(id))
        .collect();
    let crit_ids = criterion_ids(store)?;

    let mut wb = Workbook::new();
    let mut cells = Cells { count: 0 };
    let mut taken = BTreeSet::new();
    taken.insert(CODEBOOK_SHEET.to_lowercase());
    taken.insert(META_SHEET.to_lowercase());
    let bold = Format::new().set_bold().set_locked();
    let locked_wrap = Format::new().set_text_wrap().set_locked();
    let input = Format::new().set_unlocked();
    let input_wrap = Format::new().set_unlocked().set_text_wrap();
    let mut sheets = Vec::new();
    let mut rows_written = 0;
    for (rubric_id, rubric) in &rubrics {
        let name = sheet_name(&rubric.id, &mut taken);
        let ws = wb.add_worksheet();
        ws.set_name(&name)?;
        let mut header: Vec<String> = vec![ID.into(), ITEM.into(), CONTEXT.into(), ANSWER.into()];
        header.extend(rubric.criteria.iter().map(|c| c.id.clone()));
        header.push(RATIONALE.into());
        cells.header(ws, &header, &bold)?;
        ws.set_column_hidden(0)?;
        ws.set_column_width(1, 6)?;
        ws.set_column_width(2, 50)?;
        ws.set_column_width(3, 60)?;
        let rationale_col = (4 + rubric.criteria.len()) as u16;
        ws.set_column_width(rationale_col, 40)?;
        let mine: Vec<&SheetItem> = items.iter().filter(|i| i.rubric == *rubric_id).collect();
        for (n, item) in mine.iter().enumerate() {
            let row = (n + 1) as u32;
            let retest = item.purpose == Purpose::Retest;
            cells.text_fmt(
                ws,
                row,
                0,
                &item_id(item.response, item.purpose, &item.conversation),
                &bold,
            )?;
            ws.write_number_with_format(row, 1, (item.position + 1) as f64, &bold)?;
            cells.count += 1;
            cells.text_fmt(ws, row, 2, &item.context, &locked_wrap)?;
            cells.text_fmt(ws, row, 3, &item.answer, &locked_wrap)?;
            let mut rationale: Option<String> = None;
            for (c, criterion) in rubric.criteria.iter().enumerate() {
                let col = (4 + c) as u16;
                let value = crit_ids
                    .get(&(rubric.id.clone(), criterion.id.clone()))
                    .and_then(|id| current.get(&(retest, item.response, *id)));
                match value {
                    Some((Some(v), r)) => {
                        ws.write_number_with_format(row, col, *v as f64, &input)?;
                        cells.count += 1;
                        if rationale.is_none() {
                            rationale = r.clone().filter(|t| !t.is_empty());
                        }
                    }
                    _ => {
                        ws.write_blank(row, col, &input)?;
                    }
                }
            }
            match rationale {
                Some(text) => cells.text_fmt(ws, row, rationale_col, &text, &input_wrap)?,
                None => {
                    ws.write_blank(row, rationale_col, &input_wrap)?;
                }
            }
            rows_written += 1;
        }
        let last = mine.len() as u32;
        if last > 0 {
            for (c, criterion) in rubric.criteria.iter().enumerate() {
                let col = (4 + c) as u16;
                let levels: Vec<String> = criterion
                    .scale
                    .levels()
                    .iter()
                    .map(|v| v.to_string())
                    .collect();
                let label = localized(&criterion.label, "en");
                let validation = match DataValidation::new().allow_list_strings(&levels) {
                    Ok(v) => v,
                    Err(_) => {
                        DataValidation::new().allow_whole_number(DataValidationRule::Between(
                            criterion.scale.min() as i32,
                            criterion.scale.max() as i32,
                        ))
                    }
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
        }
        ws.protect();
        sheets.push(name);
    }
    codebook(&mut wb, CODEBOOK_SHEET, &rubrics, "en", &mut cells)?;
    sheets.push(CODEBOOK_SHEET.to_string());
    let meta = wb.add_worksheet();
    meta.set_name(META_SHEET)?;
    meta.write_string(0, 0, "key")?;
    meta.write_string(0, 1, "value")?;
    meta.write_string(1, 0, "format")?;
    meta.write_string(1, 1, FORMAT_VERSION)?;
    meta.write_string(2, 0, "rater")?;
    meta.write_string(2, 1, neutralise(&rater_name).as_ref())?;
    meta.set_hidden(true);
    meta.protect();
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

fn expert(store: &Store, rater: &str) -> Result<(i64, String), ExportError> {
    let found: Option<(i64, String, String)> =
        rusqlite::OptionalExtension::optional(store.conn().query_row(
            "SELECT id, name, kind FROM rater WHERE name = ?1",
            [rater.trim()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        ))?;
    let (id, name, kind) = found.ok_or_else(|| ExportError::UnknownRater(rater.to_string()))?;
    if kind != "expert" {
        return Err(ExportError::NotAnExpert(name));
    }
    Ok((id, name))
}

fn criterion_ids(store: &Store) -> Result<HashMap<(String, String), i64>, ExportError> {
    let mut stmt = store.conn().prepare(
        "SELECT r.key, c.key, c.id FROM criterion c JOIN rubric r ON r.id = c.rubric_id",
    )?;
    let rows = stmt.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One value to write.
struct Entry {
    response: i64,
    retest: bool,
    criterion: i64,
    value: i64,
    rationale: Option<String>,
}

/// Read a filled rating sheet back as its expert's ratings (see the module documentation).
pub fn import_rating_sheet(
    store: &mut Store,
    path: &Path,
) -> Result<SheetImportReport, SheetError> {
    let file = display_name(path);
    let whole = |message: String| CellError {
        file: file.clone(),
        sheet: None,
        row: None,
        column: None,
        value: None,
        message,
    };
    let rejected = |issues: Vec<crate::import::Issue>| {
        SheetError::Rejected(issues.into_iter().map(Into::into).collect())
    };
    let bytes = read_file(path, &ReadLimits::from_env()).map_err(rejected)?;
    let names = sheet_names(&file, &bytes).map_err(rejected)?;
    let read = |sheet: &str| {
        read_table_bytes(&file, &bytes, FileFormat::Xlsx, Some(sheet))
            .map_err(|issues| SheetError::Rejected(issues.into_iter().map(Into::into).collect()))
    };
    if !names.iter().any(|n| n == META_SHEET) {
        return Err(SheetError::Rejected(vec![whole(
            "this workbook is not a Concord rating sheet (its hidden `concord` sheet is missing)"
                .into(),
        )]));
    }
    let meta = read(META_SHEET)?;
    let value_of = |key: &str| {
        meta.rows
            .iter()
            .find(|r| meta.cell(r, 0).as_text().as_deref() == Some(key))
            .and_then(|r| meta.cell(r, 1).as_text())
    };
    let rater = value_of("rater")
        .map(|r| unneutralise(&r).to_string())
        .ok_or_else(|| {
            SheetError::Rejected(vec![whole("the sheet does not name its expert".into())])
        })?;
    let (rater_id, rater_name) =
        expert(store, &rater).map_err(|e| match e {
            ExportError::UnknownRater(_) | ExportError::NotAnExpert(_) => SheetError::Rejected(
                vec![whole(format!("{e}; is this sheet from another study?"))],
            ),
            other => other.into(),
        })?;
    let conn = store.conn();
    // The expert's assignment: (response, purpose) → (conversation external id, rubric key).
    let assigned: HashMap<(i64, String), (String, String)> = conn
        .prepare(
            "SELECT a.response_id, a.purpose, v.external_id, b.key FROM assignment a
             JOIN response p ON p.id = a.response_id JOIN conversation v ON v.id = p.conversation_id
             JOIN rubric b ON b.id = v.rubric_id WHERE a.rater_id = ?1",
        )
        .map_err(StoreError::from)?
        .query_map([rater_id], |r| {
            Ok(((r.get(0)?, r.get(1)?), (r.get(2)?, r.get(3)?)))
        })
        .map_err(StoreError::from)?
        .collect::<Result<_, _>>()
        .map_err(StoreError::from)?;
    let rubrics = store.rubrics()?;
    let crit_ids = criterion_ids(store).map_err(SheetError::Export)?;

    let mut errors: Vec<CellError> = Vec::new();
    let mut entries: Vec<Entry> = Vec::new();
    let mut rows = 0usize;
    for name in names
        .iter()
        .filter(|n| *n != META_SHEET && *n != CODEBOOK_SHEET)
    {
        let table = read(name)?;
        let at = |row: usize, column: &str, value: Option<String>, message: String| CellError {
            file: file.clone(),
            sheet: Some(name.clone()),
            row: Some(row),
            column: Some(column.to_string()),
            value,
            message,
        };
        let Some(id_col) = table.column(ID) else {
            errors.push(CellError {
                column: Some(ID.into()),
                ..at(
                    1,
                    ID,
                    None,
                    "the hidden id column is missing; the sheet was changed".into(),
                )
            });
            continue;
        };
        // The rubric is the one whose criteria the headers name.
        let rubric = rubrics
            .iter()
            .map(|(_, r)| r)
            .find(|r| r.criteria.iter().all(|c| table.column(&c.id).is_some()));
        let Some(rubric) = rubric else {
            errors.push(at(
                1,
                "",
                None,
                "the criterion columns do not match any rubric of this study".into(),
            ));
            continue;
        };
        let columns: Vec<(usize, i64, &crate::rubric::Criterion)> = rubric
            .criteria
            .iter()
            .filter_map(|c| {
                let col = table.column(&c.id)?;
                let id = *crit_ids.get(&(rubric.id.clone(), c.id.clone()))?;
                Some((col, id, c))
            })
            .collect();
        let rationale_col = table.column(RATIONALE);
        for row in &table.rows {
            let id_text = table.cell(row, id_col).as_text().unwrap_or_default();
            let parsed = parse_id(&id_text);
            let Some((response, purpose, conversation)) = parsed else {
                errors.push(at(
                    row.number,
                    ID,
                    Some(id_text),
                    "not a Concord item id; rows must not be added or their ids changed".into(),
                ));
                continue;
            };
            match assigned.get(&(response, purpose.as_str().to_string())) {
                None => {
                    errors.push(at(
                        row.number,
                        ID,
                        Some(id_text),
                        format!("this item is not in {rater_name}'s assignment"),
                    ));
                    continue;
                }
                Some((conv, key)) if conv != &conversation || key != &rubric.id => {
                    errors.push(at(
                        row.number,
                        ID,
                        Some(id_text),
                        "this row belongs to another study or rubric".into(),
                    ));
                    continue;
                }
                Some(_) => {}
            }
            rows += 1;
            let rationale = rationale_col
                .and_then(|c| table.cell(row, c).as_text())
                .map(|t| unneutralise(t.trim()).to_string())
                .filter(|t| !t.is_empty());
            for (col, criterion_id, criterion) in &columns {
                let cell = table.cell(row, *col);
                if cell.is_blank() {
                    continue;
                }
                let shown = cell.as_text().unwrap_or_default();
                let number = match cell {
                    Cell::Number(x) => Some(*x),
                    Cell::Text(t) => t.trim().parse::<f64>().ok(),
                    _ => None,
                };
                let value = match number {
                    Some(x) if x.fract() == 0.0 && criterion.scale.contains(x as i64) => x as i64,
                    _ => {
                        errors.push(at(
                            row.number,
                            &table.headers[*col],
                            Some(shown),
                            format!(
                                "{} takes a whole number from {} to {}",
                                criterion.id,
                                criterion.scale.min(),
                                criterion.scale.max()
                            ),
                        ));
                        continue;
                    }
                };
                entries.push(Entry {
                    response,
                    retest: purpose == Purpose::Retest,
                    criterion: *criterion_id,
                    value,
                    rationale: rationale.clone(),
                });
            }
        }
    }
    if !errors.is_empty() {
        return Err(SheetError::Rejected(errors));
    }
    let origin = format!("sheet:{file}");
    let mut report = SheetImportReport {
        rater: rater_name.clone(),
        rows,
        ..SheetImportReport::default()
    };
    store.write(|tx| -> Result<(), SheetError> {
        for e in &entries {
            let input = RatingInput {
                rater_id,
                response_id: e.response,
                criterion_id: e.criterion,
                value: Some(e.value),
                raw_value: None,
                rationale: e.rationale.as_deref(),
                origin: &origin,
            };
            let outcome = if e.retest {
                set_retest_rating(tx, &input)?
            } else {
                tx.set_rating(&input)?
            };
            match outcome {
                RatingOutcome::Inserted => report.inserted += 1,
                RatingOutcome::Updated { .. } => report.updated += 1,
                RatingOutcome::Unchanged => report.unchanged += 1,
            }
        }
        if report.inserted + report.updated > 0 {
            tx.audit(
                "lead",
                "rating_sheet_imported",
                &serde_json::json!({
                    "file": file, "rater": rater_name,
                    "inserted": report.inserted, "updated": report.updated,
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
