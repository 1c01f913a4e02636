//! The pairs of a fill-in rating sheet: for an expert given pairs to compare, one more sheet per
//! pairwise rubric, one row per pair in the expert's order — a hidden id, the pair number, the
//! context, answer A and answer B in the order this expert sees them (locked), one column per
//! question with a dropdown of `A`, `B` and (where the question allows it) `tie`, and a
//! rationale column, pre-filled with the expert's current choices. The answers' sources never
//! appear.
//!
//! Reading it back: a sheet whose headers carry `answer_a` is a pair sheet. A row's id must be a
//! pair of this expert's (and of the conversation it names); a cell must say `A`, `B` or `tie`
//! (any case; `tie` only where allowed). Every bad cell is reported with its sheet, row and
//! column, and the sheet's caller then writes nothing. Choices are stored in the pair's own
//! left/right terms, from the side the expert was shown first.

use super::workbook::{CellError, Cells, SheetFormats};
use super::{unneutralise, ExportError};
use crate::base::text::quoted;
use crate::files::table::{RawRow, RawTable};
use crate::rubric::{localized, Criterion, Rubric, PREFER_TIE};
use crate::store::{PairVerdictInput, Store, StoreError, StoredRubric, StudyTx, Winner};
use crate::workflow::pairs::ShownChoice;
use rust_xlsxwriter::DataValidation;
use std::collections::{HashMap, HashSet};

const ID: &str = "id";
const PAIR: &str = "pair";
const CONTEXT: &str = "context";
pub(super) const ANSWER_A: &str = "answer_a";
const ANSWER_B: &str = "answer_b";
const RATIONALE: &str = "rationale";
/// Columns before the first question.
const FIRST_QUESTION: usize = 5;

/// One of the expert's pairs as its sheet row shows it.
pub(super) struct PairRow {
    pub pair_id: i64,
    pub conversation: String,
    pub position: i64,
    pub left_first: bool,
    pub context: String,
    /// The answer shown first (A) and second (B).
    pub first: String,
    pub second: String,
    pub rationale: Option<String>,
    /// Criterion id → the current verdict in the pair's own terms.
    pub verdicts: HashMap<i64, Winner>,
}

/// The expert's pairs of each pairwise rubric, in their order (empty when they have none).
pub(super) fn pair_rows(
    store: &Store,
    rater_id: i64,
) -> Result<Vec<(StoredRubric, Vec<PairRow>)>, ExportError> {
    let work = store.read().pair_work_of_rater(rater_id)?;
    if work.is_empty() {
        return Ok(Vec::new());
    }
    let mut by_rubric: HashMap<i64, Vec<PairRow>> = HashMap::new();
    for w in work {
        let pair = store
            .read()
            .pair(w.pair_id)?
            .ok_or_else(|| StoreError::NotFound {
                what: "pair",
                key: w.pair_id.to_string(),
            })?;
        let (first_id, second_id) = if w.left_first {
            (pair.left_response_id, pair.right_response_id)
        } else {
            (pair.right_response_id, pair.left_response_id)
        };
        let first = store.item_text(first_id)?;
        let second = store.item_text(second_id)?;
        let verdicts = store
            .read()
            .pair_verdicts_on(rater_id, pair.id)?
            .into_iter()
            .map(|v| (v.criterion_id, v.winner))
            .collect();
        let conversation = store.conversation(pair.conversation_id)?.external_id;
        by_rubric.entry(pair.rubric_id).or_default().push(PairRow {
            pair_id: pair.id,
            conversation,
            position: w.position,
            left_first: w.left_first,
            context: first.context,
            first: first.answer.unwrap_or_default(),
            second: second.answer.unwrap_or_default(),
            rationale: w.rationale,
            verdicts,
        });
    }
    let mut out = Vec::new();
    for stored in store.rubrics()? {
        if let Some(mut rows) = by_rubric.remove(&stored.id) {
            rows.sort_by_key(|r| r.position);
            out.push((stored, rows));
        }
    }
    Ok(out)
}

fn pair_id_text(pair: i64, conversation: &str) -> String {
    format!("p{pair}|{conversation}")
}

fn parse_pair_id(text: &str) -> Option<(i64, String)> {
    let (pair, conversation) = text.trim().split_once('|')?;
    Some((
        pair.strip_prefix('p')?.parse().ok()?,
        conversation.to_string(),
    ))
}

fn shown_text(c: ShownChoice) -> &'static str {
    match c {
        ShownChoice::A => "A",
        ShownChoice::B => "B",
        ShownChoice::Tie => "tie",
    }
}

/// One pairwise rubric's sheet: header, a row per pair, the A/B/tie dropdowns, protection.
pub(super) fn write_pair_sheet(
    ws: &mut rust_xlsxwriter::Worksheet,
    cells: &mut Cells,
    formats: &SheetFormats,
    rubric: &StoredRubric,
    rows: &[PairRow],
    criterion_ids: &HashMap<String, i64>,
) -> Result<(), ExportError> {
    let criteria = &rubric.rubric.criteria;
    let mut header: Vec<String> = vec![
        ID.into(),
        PAIR.into(),
        CONTEXT.into(),
        ANSWER_A.into(),
        ANSWER_B.into(),
    ];
    header.extend(criteria.iter().map(|c| c.id.clone()));
    header.push(RATIONALE.into());
    cells.header(ws, &header, &formats.bold)?;
    ws.set_column_hidden(0)?;
    ws.set_column_width(1, 6)?;
    ws.set_column_width(2, 45)?;
    ws.set_column_width(3, 50)?;
    ws.set_column_width(4, 50)?;
    let rationale_col = (FIRST_QUESTION + criteria.len()) as u16;
    ws.set_column_width(rationale_col, 40)?;
    for (n, p) in rows.iter().enumerate() {
        let row = (n + 1) as u32;
        cells.text_fmt(
            ws,
            row,
            0,
            &pair_id_text(p.pair_id, &p.conversation),
            &formats.bold,
        )?;
        ws.write_number_with_format(row, 1, (p.position + 1) as f64, &formats.bold)?;
        cells.count += 1;
        cells.text_fmt(ws, row, 2, &p.context, &formats.locked_wrap)?;
        cells.text_fmt(ws, row, 3, &p.first, &formats.locked_wrap)?;
        cells.text_fmt(ws, row, 4, &p.second, &formats.locked_wrap)?;
        for (c, criterion) in criteria.iter().enumerate() {
            let col = (FIRST_QUESTION + c) as u16;
            let current = criterion_ids
                .get(&criterion.id)
                .and_then(|id| p.verdicts.get(id));
            match current {
                Some(w) => {
                    let text = shown_text(ShownChoice::of(*w, p.left_first));
                    cells.text_fmt(ws, row, col, text, &formats.input)?;
                }
                None => {
                    ws.write_blank(row, col, &formats.input)?;
                }
            }
        }
        match &p.rationale {
            Some(text) => cells.text_fmt(ws, row, rationale_col, text, &formats.input_wrap)?,
            None => {
                ws.write_blank(row, rationale_col, &formats.input_wrap)?;
            }
        }
    }
    let last = rows.len() as u32;
    if last > 0 {
        for (c, criterion) in criteria.iter().enumerate() {
            let col = (FIRST_QUESTION + c) as u16;
            let ties = criterion.scale.contains(PREFER_TIE);
            let levels: &[&str] = if ties {
                &["A", "B", "tie"]
            } else {
                &["A", "B"]
            };
            let label = crate::base::text::visible(localized(&criterion.label, "en"));
            let validation = DataValidation::new()
                .allow_list_strings(levels)?
                .set_error_title("Not a choice")?
                .set_error_message(format!(
                    "{label}: enter A (the first answer), B (the second){}.",
                    if ties { " or tie" } else { "" }
                ))?;
            ws.add_data_validation(1, col, last, col, &validation)?;
        }
    }
    ws.protect();
    Ok(())
}

/// One choice read from a pair sheet.
pub(super) struct PairEntry {
    pair_id: i64,
    criterion_id: i64,
    left_first: bool,
    winner: Winner,
    rationale: Option<String>,
}

/// What the study says a returned pair sheet may hold.
pub(super) struct PairExpectations {
    /// Pair id → (conversation, pairwise rubric key, side shown first) of the expert's pairs.
    pub pairs: HashMap<i64, (String, String, bool)>,
}

impl PairExpectations {
    pub(super) fn read(store: &Store, rater_id: i64) -> Result<Self, ExportError> {
        let mut pairs = HashMap::new();
        let rubrics: HashMap<i64, String> = store
            .rubrics()?
            .into_iter()
            .map(|s| (s.id, s.rubric.id))
            .collect();
        for w in store.read().pair_work_of_rater(rater_id)? {
            let Some(pair) = store.read().pair(w.pair_id)? else {
                continue;
            };
            let conversation = store.conversation(pair.conversation_id)?.external_id;
            let rubric = rubrics.get(&pair.rubric_id).cloned().unwrap_or_default();
            pairs.insert(pair.id, (conversation, rubric, w.left_first));
        }
        Ok(PairExpectations { pairs })
    }
}

/// What a returned workbook's pair sheets are read against: the file, the study's rubrics and
/// the criterion ids of its pairwise ones, the expert's pairs and the expert's name.
pub(super) struct PairSheetExpectations<'a> {
    pub file: &'a str,
    pub rubrics: &'a [StoredRubric],
    /// Pairwise rubric id → criterion key → criterion id.
    pub criterion_ids: &'a HashMap<i64, HashMap<String, i64>>,
    pub pairs: &'a PairExpectations,
    pub rater_name: &'a str,
}

/// What one pair sheet gave: its choices, the rows read and every bad cell.
#[derive(Default)]
pub(super) struct PairSheetReading {
    pub entries: Vec<PairEntry>,
    pub rows: usize,
    pub errors: Vec<CellError>,
}

/// Read one pair sheet: every row's choices, or the cells that are wrong.
pub(super) fn read_pair_sheet(
    expected: &PairSheetExpectations<'_>,
    name: &str,
    table: &RawTable,
) -> PairSheetReading {
    let mut reading = PairSheetReading::default();
    let sheet = match PairSheet::find(expected, name, table) {
        Ok(sheet) => sheet,
        Err(fault) => {
            reading.errors.push(fault.in_sheet(expected.file, name));
            return reading;
        }
    };
    let mut seen = HashSet::new();
    for row in &table.rows {
        match sheet.row_pair(row, &mut seen) {
            Ok((pair_id, left_first)) => {
                reading.rows += 1;
                sheet.read_choices(row, pair_id, left_first, &mut reading);
            }
            Err(fault) => reading.errors.push(fault.in_sheet(expected.file, name)),
        }
    }
    reading
}

/// A pair sheet being read: where it is, what the study expects of it, its id column, its
/// pairwise rubric, its question columns (column, criterion id, criterion) and its rationale
/// column.
struct PairSheet<'a> {
    expected: &'a PairSheetExpectations<'a>,
    name: &'a str,
    table: &'a RawTable,
    id_col: usize,
    rubric: &'a Rubric,
    questions: Vec<(usize, i64, &'a Criterion)>,
    rationale_col: Option<usize>,
}

impl<'a> PairSheet<'a> {
    /// The sheet's id column and the pairwise rubric its headers name, or why it has neither.
    fn find(
        expected: &'a PairSheetExpectations<'a>,
        name: &'a str,
        table: &'a RawTable,
    ) -> Result<Self, CellFault> {
        let error = |column: &'static str, message: &str| CellFault {
            row: 1,
            column,
            value: None,
            message: message.into(),
        };
        let Some(id_col) = table.column(ID) else {
            return Err(error(
                ID,
                "the hidden id column is missing; the sheet was changed",
            ));
        };
        let rubric = expected.rubrics.iter().find(|s| {
            s.rubric.is_pairwise()
                && s.rubric
                    .criteria
                    .iter()
                    .all(|c| table.column(&c.id).is_some())
        });
        let Some(StoredRubric {
            id: rubric_id,
            rubric,
        }) = rubric
        else {
            return Err(error(
                "",
                "the question columns do not match any pairwise rubric of this study",
            ));
        };
        let ids = expected.criterion_ids.get(rubric_id);
        let questions = rubric
            .criteria
            .iter()
            .filter_map(|c| Some((table.column(&c.id)?, *ids?.get(&c.id)?, c)))
            .collect();
        Ok(PairSheet {
            expected,
            name,
            table,
            id_col,
            rubric,
            questions,
            rationale_col: table.column(RATIONALE),
        })
    }

    /// A row's pair (one of the expert's, not read before) and the side the expert saw first.
    fn row_pair(&self, row: &RawRow, seen: &mut HashSet<i64>) -> Result<(i64, bool), CellFault> {
        let error = |value: String, message: String| CellFault {
            row: row.number,
            column: ID,
            value: Some(value),
            message,
        };
        let id_text = self
            .table
            .cell(row, self.id_col)
            .as_text()
            .unwrap_or_default();
        let Some((pair_id, conversation)) = parse_pair_id(&id_text) else {
            return Err(error(
                id_text,
                "not a Concord pair id; rows must not be added or their ids changed".into(),
            ));
        };
        let left_first = match self.expected.pairs.pairs.get(&pair_id) {
            Some((conv, key, left_first)) if conv == &conversation && key == &self.rubric.id => {
                *left_first
            }
            Some(_) => {
                return Err(error(
                    id_text,
                    "this row belongs to another study or rubric".into(),
                ));
            }
            None => {
                return Err(error(
                    id_text,
                    format!(
                        "this pair was not given to {}",
                        quoted(&self.expected.rater_name)
                    ),
                ));
            }
        };
        if !seen.insert(pair_id) {
            return Err(error(id_text, "this pair's row appears twice".into()));
        }
        Ok((pair_id, left_first))
    }

    /// Read a row's choices in the pair's own terms, or the cells that are not `A`, `B` or `tie`.
    fn read_choices(
        &self,
        row: &RawRow,
        pair_id: i64,
        left_first: bool,
        reading: &mut PairSheetReading,
    ) {
        let rationale = self
            .rationale_col
            .and_then(|c| self.table.cell(row, c).as_text())
            .map(|t| unneutralise(t.trim()).to_string())
            .filter(|t| !t.is_empty());
        for (col, criterion_id, criterion) in &self.questions {
            let cell = self.table.cell(row, *col);
            if cell.is_blank() {
                continue;
            }
            let text = cell.as_text().unwrap_or_default();
            let ties = criterion.scale.contains(PREFER_TIE);
            let choice = match text.trim().to_lowercase().as_str() {
                "a" => Some(ShownChoice::A),
                "b" => Some(ShownChoice::B),
                "tie" if ties => Some(ShownChoice::Tie),
                _ => None,
            };
            match choice {
                Some(c) => reading.entries.push(PairEntry {
                    pair_id,
                    criterion_id: *criterion_id,
                    left_first,
                    winner: c.winner(left_first),
                    rationale: rationale.clone(),
                }),
                None => reading.errors.push(CellError::at(
                    self.expected.file,
                    self.name,
                    row.number,
                    &self.table.headers[*col],
                    Some(text),
                    format!(
                        "{} takes A (the first answer) or B (the second){}",
                        criterion.id,
                        if ties { ", or tie" } else { "" }
                    ),
                )),
            }
        }
    }
}

/// A bad cell of a pair sheet before its file and sheet are named: its row, column, value and
/// what is wrong.
struct CellFault {
    row: usize,
    column: &'static str,
    value: Option<String>,
    message: String,
}

impl CellFault {
    /// The bad cell in `sheet` of `file`.
    fn in_sheet(self, file: &str, sheet: &str) -> CellError {
        CellError::at(file, sheet, self.row, self.column, self.value, self.message)
    }
}

/// What writing a sheet's pair choices changed.
#[derive(Debug, Default)]
pub(super) struct PairWrite {
    pub inserted: usize,
    pub updated: usize,
    pub unchanged: usize,
}

/// Write the choices read (inside the sheet import's transaction); a pair whose every question
/// is answered is marked finished.
pub(super) fn write_pair_entries(
    tx: &mut StudyTx<'_>,
    rater_id: i64,
    origin: &str,
    entries: &[PairEntry],
    question_counts: &HashMap<i64, usize>,
) -> Result<PairWrite, StoreError> {
    let mut out = PairWrite::default();
    let mut touched = HashSet::new();
    for e in entries {
        let before = tx
            .read()
            .pair_verdict(rater_id, e.pair_id, e.criterion_id, e.left_first)?
            .and_then(|v| v.content.winner);
        let changed = tx.set_pair_verdict(&PairVerdictInput {
            rater_id,
            pair_id: e.pair_id,
            criterion_id: e.criterion_id,
            left_first: e.left_first,
            winner: Some(e.winner),
            rationale: e.rationale.as_deref(),
            origin,
        })?;
        match (changed, before) {
            (false, _) => out.unchanged += 1,
            (true, None) => out.inserted += 1,
            (true, Some(_)) => out.updated += 1,
        }
        touched.insert(e.pair_id);
    }
    for pair_id in touched {
        let Some(pair) = tx.read().pair(pair_id)? else {
            continue;
        };
        let answered = tx.read().pair_verdicts_on(rater_id, pair_id)?.len();
        if question_counts
            .get(&pair.rubric_id)
            .is_some_and(|n| answered >= *n)
        {
            tx.complete_pair_assignment(rater_id, pair_id)?;
        }
    }
    Ok(out)
}

/// Criterion ids of each pairwise rubric, by criterion key.
pub(super) fn pairwise_criterion_ids(
    store: &Store,
    rubrics: &[StoredRubric],
) -> Result<HashMap<i64, HashMap<String, i64>>, ExportError> {
    let mut out = HashMap::new();
    for s in rubrics.iter().filter(|s| s.rubric.is_pairwise()) {
        out.insert(s.id, store.read().criterion_ids(s.id)?);
    }
    Ok(out)
}
