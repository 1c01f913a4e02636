//! The first import phase: reading a file into a [`RawTable`] of header names and cells, without
//! interpreting any value. CSV (UTF-8, an optional byte-order mark, LF or CRLF), JSON Lines (one
//! object per line) and XLSX workbooks (read with calamine; a formula cell is kept as its formula
//! text and never evaluated) are read the same way, so every format gets the same checks: the file
//! is not empty, it really is the format its name says, every text is valid UTF-8 without NUL
//! bytes, and the file stays within [`ReadLimits`] (per cell, row, sheet and file; a workbook is
//! checked by [`bounds::check_workbook`] before calamine allocates anything for it). Text files may
//! be UTF-8 (with or without a byte-order mark) or UTF-16 with a byte-order mark; a CSV quote that
//! is never closed, a row with fewer or more fields than the header, and two columns with the same
//! header are errors, never silently different data. A cell holding only whitespace reads as empty.
//! Problems name the file, sheet, row and column.

use super::bounds::{self, Limit, ReadLimits};
use super::column_letters;
use super::csv_rows::CsvRows;
use super::encoding::decode_text;
use super::{Issue, Location};
use crate::base::text::quoted;
use calamine::{Data, Reader, Xlsx};
use std::io::Cursor;
use std::path::Path;

/// One cell as read, before any interpretation.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Empty,
    Text(String),
    Number(f64),
    Bool(bool),
    /// A spreadsheet error value such as `#N/A`.
    Error(String),
}

impl Cell {
    /// The cell as text, as a person would read it in a spreadsheet (numbers without a trailing
    /// `.0`); `None` for an empty cell.
    pub fn as_text(&self) -> Option<String> {
        match self {
            Cell::Empty => None,
            Cell::Text(s) => Some(s.clone()),
            Cell::Number(x) => Some(format_number(*x)),
            Cell::Bool(b) => Some(b.to_string()),
            Cell::Error(e) => Some(e.clone()),
        }
    }

    /// Whether the cell is empty or holds only whitespace.
    pub fn is_blank(&self) -> bool {
        match self {
            Cell::Empty => true,
            Cell::Text(s) => s.trim().is_empty(),
            _ => false,
        }
    }
}

/// A number as text: integers without a decimal point.
pub fn format_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// One data row; `number` is the row as the user sees it (1-based, counting the header row, so
/// the first data row of a sheet is row 2; for CSV the line the record starts on; for JSON Lines
/// the line number).
#[derive(Debug, Clone, PartialEq)]
pub struct RawRow {
    pub number: usize,
    /// The data record's ordinal (1-based, header excluded, blank records counted): the n-th row
    /// of data whatever line breaks its cells hold.
    pub record: usize,
    pub cells: Vec<Cell>,
}

/// A file read into header names and rows of cells.
#[derive(Debug, Clone, PartialEq)]
pub struct RawTable {
    /// The file name shown in messages.
    pub file: String,
    /// The sheet read, for workbooks.
    pub sheet: Option<String>,
    /// Header names with surrounding whitespace removed (released files carry stray spaces).
    pub headers: Vec<String>,
    pub rows: Vec<RawRow>,
}

impl RawTable {
    /// The position of the column named `name` (surrounding whitespace and ASCII case ignored).
    pub fn column(&self, name: &str) -> Option<usize> {
        let name = name.trim();
        self.headers
            .iter()
            .position(|h| h.eq_ignore_ascii_case(name))
    }

    /// The location of a cell for messages.
    pub fn at(&self, row: usize, column: Option<usize>) -> Location {
        Location {
            file: self.file.clone(),
            sheet: self.sheet.clone(),
            row: Some(row),
            column: column.and_then(|c| self.headers.get(c).cloned()),
        }
    }

    /// The location of the file (or sheet) as a whole.
    pub fn whole(&self) -> Location {
        Location {
            file: self.file.clone(),
            sheet: self.sheet.clone(),
            row: None,
            column: None,
        }
    }

    /// Cell `column` of `row`, `Empty` when the row is short.
    pub fn cell<'a>(&self, row: &'a RawRow, column: usize) -> &'a Cell {
        static EMPTY: Cell = Cell::Empty;
        row.cells.get(column).unwrap_or(&EMPTY)
    }
}

/// File formats the readers understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileFormat {
    Csv,
    Jsonl,
    Xlsx,
}

impl FileFormat {
    /// The format a file name implies (`.csv`, `.jsonl`/`.ndjson`, `.xlsx`).
    pub fn from_name(name: &str) -> Option<FileFormat> {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".csv") {
            Some(FileFormat::Csv)
        } else if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
            Some(FileFormat::Jsonl)
        } else if lower.ends_with(".xlsx") {
            Some(FileFormat::Xlsx)
        } else {
            None
        }
    }
}

/// The display name of a path (its file name).
pub fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Check a text value read from a file: no NUL bytes, within the cell limit; CRLF line breaks
/// inside the text become LF.
pub fn clean_text(
    text: String,
    limits: &ReadLimits,
    at: impl FnOnce() -> Location,
) -> Result<String, Issue> {
    if text.len() as u64 > limits.cell_bytes {
        return Err(limits.exceeded(
            at(),
            Limit::CellBytes,
            format!(
                "the cell holds {:.1} MB of text",
                text.len() as f64 / 1_048_576.0
            ),
        ));
    }
    if text.contains('\0') {
        return Err(Issue::error(
            at(),
            "nul_byte",
            "the text contains a NUL byte (binary data); remove it and import again".to_string(),
        ));
    }
    if text.contains('\r') {
        Ok(text.replace("\r\n", "\n"))
    } else {
        Ok(text)
    }
}

/// Read a whole file into a table. `sheet` picks a workbook sheet (default: the first).
pub fn read_table(
    path: &Path,
    format: FileFormat,
    sheet: Option<&str>,
) -> Result<RawTable, Vec<Issue>> {
    let limits = ReadLimits::from_env();
    let file = display_name(path);
    let bytes = read_file(path, &limits)?;
    read_table_within(&file, &bytes, format, sheet, &limits)
}

/// The bytes of an input file, refusing (before reading it) a file larger than the file limit.
pub fn read_file(path: &Path, limits: &ReadLimits) -> Result<Vec<u8>, Vec<Issue>> {
    let file = display_name(path);
    let unreadable = |e: std::io::Error| {
        vec![Issue::error(
            Location::whole_file(&file),
            "unreadable",
            format!("cannot read the file: {e}"),
        )]
    };
    let handle = std::fs::File::open(path).map_err(unreadable)?;
    let too_big = |size: u64| {
        vec![limits.exceeded(
            Location::whole_file(&file),
            Limit::FileBytes,
            format!("the file holds {:.1} MB", size as f64 / 1_048_576.0),
        )]
    };
    let size = handle.metadata().map_err(unreadable)?.len();
    if size > limits.file_bytes {
        return Err(too_big(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // The file may grow while it is read: never read past the limit.
    std::io::Read::read_to_end(
        &mut std::io::Read::take(handle, limits.file_bytes + 1),
        &mut bytes,
    )
    .map_err(unreadable)?;
    if bytes.len() as u64 > limits.file_bytes {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read_table`] over bytes already in memory, with the limits from the environment.
pub fn read_table_bytes(
    file: &str,
    bytes: &[u8],
    format: FileFormat,
    sheet: Option<&str>,
) -> Result<RawTable, Vec<Issue>> {
    read_table_within(file, bytes, format, sheet, &ReadLimits::from_env())
}

/// [`read_table_bytes`] against explicit `limits`.
pub fn read_table_within(
    file: &str,
    bytes: &[u8],
    format: FileFormat,
    sheet: Option<&str>,
    limits: &ReadLimits,
) -> Result<RawTable, Vec<Issue>> {
    if bytes.is_empty() {
        return Err(vec![Issue::error(
            Location::whole_file(file),
            "empty_file",
            "the file is empty (0 bytes)".to_string(),
        )]);
    }
    if bytes.len() as u64 > limits.file_bytes {
        return Err(vec![limits.exceeded(
            Location::whole_file(file),
            Limit::FileBytes,
            format!("the file holds {:.1} MB", bytes.len() as f64 / 1_048_576.0),
        )]);
    }
    let table = match format {
        FileFormat::Csv => read_csv(file, bytes, limits),
        FileFormat::Jsonl => read_jsonl(file, &decode_text(file, bytes)?, limits),
        FileFormat::Xlsx => read_xlsx(file, bytes, sheet, limits).map(|mut t| t.remove(0)),
    }?;
    check_headers(&table)?;
    Ok(table)
}

/// The sheet names of a workbook, after the same checks as reading one of its sheets.
pub fn sheet_names(file: &str, bytes: &[u8]) -> Result<Vec<String>, Vec<Issue>> {
    let limits = ReadLimits::from_env();
    let workbook = open_workbook(file, bytes, &limits)?;
    Ok(workbook.sheet_names())
}

/// Two columns whose headers read the same (surrounding whitespace and ASCII case ignored, as
/// [`RawTable::column`] looks them up) would let one silently win: an error naming both.
pub(crate) fn check_headers(table: &RawTable) -> Result<(), Vec<Issue>> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut issues = Vec::new();
    let place = |i: usize| match table.sheet {
        Some(_) => column_letters(i),
        None => format!("#{}", i + 1),
    };
    for (i, h) in table.headers.iter().enumerate() {
        if h.is_empty() {
            continue;
        }
        if let Some(&first) = seen.get(&h.to_ascii_lowercase()) {
            issues.push(Issue::error(
                Location {
                    file: table.file.clone(),
                    sheet: table.sheet.clone(),
                    row: Some(match table.sheet {
                        Some(_) => table.rows.first().map_or(1, |r| r.number - r.record),
                        None => 1,
                    }),
                    column: Some(h.clone()),
                },
                "duplicate_column",
                format!(
                    "the header {} names two columns ({} and {}); which one holds the data is ambiguous: rename or remove one",
                    quoted(h),
                    place(first),
                    place(i)
                ),
            ));
        } else {
            seen.insert(h.to_ascii_lowercase(), i);
        }
    }
    if issues.is_empty() {
        Ok(())
    } else {
        Err(issues)
    }
}

/// A whole CSV file read into a table by the streaming reader ([`super::csv_rows`]), collecting
/// up to 200 problems before giving up. Rows and cells are counted against the limits, since the
/// table keeps them all.
fn read_csv(file: &str, bytes: &[u8], limits: &ReadLimits) -> Result<RawTable, Vec<Issue>> {
    let mut reader = CsvRows::new(file, bytes, limits)?;
    let headers = reader.headers().to_vec();
    let mut issues = Vec::new();
    let mut rows = Vec::new();
    let mut cell_count = headers.len() as u64;
    while let Some(row) = reader.next_row() {
        match row {
            Err(mut found) => issues.append(&mut found),
            Ok(row) => {
                cell_count += row.len() as u64;
                if cell_count > limits.cells {
                    issues.push(limits.exceeded(
                        Location::file_row(file, row.line),
                        Limit::Cells,
                        format!("the file holds more than {} cells", limits.cells),
                    ));
                    break;
                }
                let cells = (0..row.len())
                    .map(|i| {
                        let text = row.text(i);
                        if text.trim().is_empty() {
                            Cell::Empty
                        } else {
                            Cell::Text(text.into_owned())
                        }
                    })
                    .collect();
                rows.push(RawRow {
                    number: row.line,
                    record: row.record,
                    cells,
                });
            }
        }
        if issues.len() > 200 {
            break;
        }
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    Ok(RawTable {
        file: file.to_string(),
        sheet: None,
        headers,
        rows,
    })
}

/// Read JSON Lines: each line that is not blank within the line and row limits, read as one JSON
/// object ([`jsonl_object`]) whose keys name columns ([`JsonlColumns::cells`]), the whole file
/// within the cell limit.
fn read_jsonl(file: &str, bytes: &[u8], limits: &ReadLimits) -> Result<RawTable, Vec<Issue>> {
    let mut issues = Vec::new();
    let mut columns = JsonlColumns {
        headers: Vec::new(),
        positions: std::collections::HashMap::new(),
    };
    let mut rows = Vec::new();
    let mut cell_count = 0u64;
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let number = index + 1;
        let at = |column: Option<String>| Location {
            file: file.to_string(),
            sheet: None,
            row: Some(number),
            column,
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // One line is one row: its text may hold several cells, but not more than a row's worth.
        let line_limit = limits.cell_bytes.saturating_mul(4);
        if line.len() as u64 > line_limit {
            issues.push(limits.exceeded(
                at(None),
                Limit::CellBytes,
                format!(
                    "the line holds {:.1} MB (a line may hold four cells' worth)",
                    line.len() as f64 / 1_048_576.0
                ),
            ));
            continue;
        }
        if rows.len() as u64 >= limits.rows {
            issues.push(limits.exceeded(
                at(None),
                Limit::Rows,
                format!("the file holds more than {} rows", limits.rows),
            ));
            break;
        }
        let object = match jsonl_object(line, || at(None)) {
            Ok(object) => object,
            Err(issue) => {
                issues.push(issue);
                continue;
            }
        };
        let Some(cells) = columns.cells(object, limits, &at, &mut issues) else {
            return Err(issues);
        };
        cell_count += cells.len() as u64;
        if cell_count > limits.cells {
            issues.push(limits.exceeded(
                at(None),
                Limit::Cells,
                format!("the file holds more than {} cells", limits.cells),
            ));
            break;
        }
        let record = rows.len() + 1;
        rows.push(RawRow {
            number,
            record,
            cells,
        });
        if issues.len() > 200 {
            break;
        }
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    if rows.is_empty() {
        return Err(vec![Issue::error(
            Location::whole_file(file),
            "empty_file",
            "the file holds no JSON objects".to_string(),
        )]);
    }
    Ok(RawTable {
        file: file.to_string(),
        sheet: None,
        headers: columns.headers,
        rows,
    })
}

/// One line of JSON Lines as its object: valid UTF-8, valid JSON, and an object.
pub(crate) fn jsonl_object(
    line: &[u8],
    at: impl Fn() -> Location,
) -> Result<serde_json::Map<String, serde_json::Value>, Issue> {
    let text = std::str::from_utf8(line).map_err(|e| {
        Issue::error(
            at(),
            "invalid_utf8",
            format!(
                "the line is not valid UTF-8 (byte {}); save the file as UTF-8",
                e.valid_up_to() + 1
            ),
        )
    })?;
    match super::json::parse(text) {
        Ok(serde_json::Value::Object(o)) => Ok(o),
        Ok(_) => Err(Issue::error(
            at(),
            "not_an_object",
            "each line must be one JSON object".to_string(),
        )),
        Err(e) => Err(Issue::error(
            at(),
            "malformed_json",
            format!("not valid JSON: {e}"),
        )),
    }
}

/// The columns of a JSON Lines file, made as keys first appear (matched ignoring case).
struct JsonlColumns {
    headers: Vec<String>,
    /// Lower-cased key → column.
    positions: std::collections::HashMap<String, usize>,
}

impl JsonlColumns {
    /// One object's cells, one per column known so far (new keys add columns). Problems of a
    /// value go to `issues`; `None` when the object names more columns than the limit allows
    /// (that problem is in `issues`, and reading stops).
    fn cells(
        &mut self,
        object: serde_json::Map<String, serde_json::Value>,
        limits: &ReadLimits,
        at: &impl Fn(Option<String>) -> Location,
        issues: &mut Vec<Issue>,
    ) -> Option<Vec<Cell>> {
        let mut cells = vec![Cell::Empty; self.headers.len()];
        let mut written: std::collections::HashMap<usize, String> =
            std::collections::HashMap::new();
        for (raw_key, value) in object {
            let key = raw_key.trim().to_string();
            let position = match self.positions.get(&key.to_ascii_lowercase()) {
                Some(&p) => p,
                None => {
                    if self.headers.len() as u64 >= limits.columns {
                        issues.push(limits.exceeded(
                            at(None),
                            Limit::Columns,
                            format!("the file names more than {} different keys", limits.columns),
                        ));
                        return None;
                    }
                    self.positions
                        .insert(key.to_ascii_lowercase(), self.headers.len());
                    self.headers.push(key.clone());
                    cells.push(Cell::Empty);
                    self.headers.len() - 1
                }
            };
            if let Some(first) = written.insert(position, raw_key.clone()) {
                issues.push(Issue::error(
                    at(Some(key.clone())),
                    "duplicate_key",
                    format!(
                        "the keys {} and {} name the same column; which value is meant is ambiguous",
                        quoted(&first),
                        quoted(&raw_key)
                    ),
                ));
                continue;
            }
            match json_cell(value, limits, || at(Some(key.clone()))) {
                Ok(cell) => cells[position] = cell,
                Err(issue) => issues.push(issue),
            }
        }
        Some(cells)
    }
}

/// One JSON Lines object read as the cells of the columns `headers` names (a key matches a column
/// ignoring surrounding whitespace and ASCII case; keys naming no column are ignored), for a
/// reader that streams the lines and knows its columns in advance. Two keys naming one column and
/// a value that is not a cell are problems at `at` (the column's name given).
pub(crate) fn object_cells(
    object: serde_json::Map<String, serde_json::Value>,
    headers: &[String],
    limits: &ReadLimits,
    at: &impl Fn(Option<String>) -> Location,
) -> Result<Vec<Cell>, Vec<Issue>> {
    let mut cells = vec![Cell::Empty; headers.len()];
    let mut written: Vec<Option<String>> = vec![None; headers.len()];
    let mut issues = Vec::new();
    for (raw_key, value) in object {
        let key = raw_key.trim();
        let Some(position) = headers.iter().position(|h| h.eq_ignore_ascii_case(key)) else {
            continue;
        };
        if let Some(first) = written[position].replace(raw_key.clone()) {
            issues.push(Issue::error(
                at(Some(headers[position].clone())),
                "duplicate_key",
                format!(
                    "the keys {} and {} name the same column; which value is meant is ambiguous",
                    quoted(&first),
                    quoted(&raw_key)
                ),
            ));
            continue;
        }
        match json_cell(value, limits, || at(Some(headers[position].clone()))) {
            Ok(cell) => cells[position] = cell,
            Err(issue) => issues.push(issue),
        }
    }
    if issues.is_empty() {
        Ok(cells)
    } else {
        Err(issues)
    }
}

/// A JSON value as a cell: null empty, numbers as numbers (as text beyond `f64`), strings
/// checked as text (blank ones empty), anything else as its JSON text.
fn json_cell(
    value: serde_json::Value,
    limits: &ReadLimits,
    at: impl FnOnce() -> Location,
) -> Result<Cell, Issue> {
    Ok(match value {
        serde_json::Value::Null => Cell::Empty,
        serde_json::Value::Bool(b) => Cell::Bool(b),
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(x) => Cell::Number(x),
            None => Cell::Text(n.to_string()),
        },
        serde_json::Value::String(s) => match clean_text(s, limits, at)? {
            s if s.trim().is_empty() => Cell::Empty,
            s => Cell::Text(s),
        },
        other => Cell::Text(other.to_string()),
    })
}

/// Run a calamine call, turning a panic inside it (an arithmetic overflow on a damaged file, say)
/// into an error instead of a crash. Allocation failures cannot be caught: those are prevented by
/// [`bounds::check_workbook`] before calamine runs.
fn guarded<T>(
    file: &str,
    what: &str,
    f: impl FnOnce() -> Result<T, calamine::XlsxError>,
) -> Result<T, Vec<Issue>> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(vec![Issue::error(
            Location::whole_file(file),
            "unreadable_workbook",
            format!("{what} cannot be read (truncated or damaged?): {e}"),
        )]),
        Err(_) => Err(vec![Issue::error(
            Location::whole_file(file),
            "unreadable_workbook",
            format!("{what} cannot be read: the spreadsheet reader failed on damaged content"),
        )]),
    }
}

/// A workbook opened after the guard: over its own bytes, or over the guard's rewritten copy.
type CheckedWorkbook<'a> = Xlsx<Cursor<std::borrow::Cow<'a, [u8]>>>;

/// Check a workbook's bytes and open it: the format, then [`bounds::check_workbook`], then calamine.
fn open_workbook<'a>(
    file: &str,
    bytes: &'a [u8],
    limits: &ReadLimits,
) -> Result<CheckedWorkbook<'a>, Vec<Issue>> {
    let one =
        |code: &str, message: String| vec![Issue::error(Location::whole_file(file), code, message)];
    if !bytes.starts_with(b"PK\x03\x04") {
        let looks_textual = bytes
            .iter()
            .take(512)
            .all(|&b| b == b'\n' || b == b'\r' || b == b'\t' || b >= 0x20);
        return Err(one(
            "wrong_format",
            if looks_textual {
                "this is a text file (CSV?) with an .xlsx name, not an Excel workbook; rename it to .csv"
                    .to_string()
            } else {
                "this is not an Excel (.xlsx) workbook".to_string()
            },
        ));
    }
    let checked = bounds::check_workbook(file, bytes, limits)?;
    guarded(file, "the workbook", || Xlsx::new(Cursor::new(checked)))
}

/// Read one sheet (the named one, or the first) of an XLSX workbook. Returns a one-element vector
/// so callers that read every sheet can share the code path.
fn read_xlsx(
    file: &str,
    bytes: &[u8],
    sheet: Option<&str>,
    limits: &ReadLimits,
) -> Result<Vec<RawTable>, Vec<Issue>> {
    let one =
        |code: &str, message: String| vec![Issue::error(Location::whole_file(file), code, message)];
    let mut workbook = open_workbook(file, bytes, limits)?;
    let names = workbook.sheet_names();
    let name = match sheet {
        Some(wanted) => names
            .iter()
            .find(|n| n.as_str() == wanted || n.trim().eq_ignore_ascii_case(wanted.trim()))
            .cloned()
            .ok_or_else(|| {
                one(
                    "missing_sheet",
                    format!(
                        "the workbook has no sheet named {}; its sheets are {}",
                        quoted(&wanted),
                        names
                            .iter()
                            .map(|n| quoted(n).to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?,
        None => names
            .first()
            .cloned()
            .ok_or_else(|| one("empty_file", "the workbook has no sheets".to_string()))?,
    };
    let range = guarded(file, &format!("sheet {}", quoted(&name)), || {
        workbook.worksheet_range(&name)
    })?;
    let formulas = guarded(
        file,
        &format!("the formulas of sheet {}", quoted(&name)),
        || workbook.worksheet_formula(&name),
    )?;
    sheet_table(file, &name, &range, &formulas, limits).map(|t| vec![t])
}

/// One sheet as a table: every cell read ([`sheet_cell`]) with its location, the first row that
/// is not blank as the header, and the blank rows after it skipped.
fn sheet_table(
    file: &str,
    sheet: &str,
    range: &calamine::Range<Data>,
    formulas: &calamine::Range<String>,
    limits: &ReadLimits,
) -> Result<RawTable, Vec<Issue>> {
    let whole = Location {
        file: file.to_string(),
        sheet: Some(sheet.to_string()),
        row: None,
        column: None,
    };
    let Some((row0, col0)) = range.start() else {
        return Err(vec![Issue::error(
            whole,
            "empty_file",
            "the sheet is empty".to_string(),
        )]);
    };
    let width = range.width();
    let has_formulas = !formulas.is_empty();
    let mut issues = Vec::new();
    let mut headers: Option<Vec<String>> = None;
    let mut header_row = 0usize;
    let mut rows = Vec::new();
    for (r, row) in range.rows().enumerate() {
        let abs_row = row0 as usize + r;
        let number = abs_row + 1;
        let mut cells = Vec::with_capacity(width);
        for (c, data) in row.iter().enumerate() {
            let abs_col = col0 as usize + c;
            let column = headers
                .as_ref()
                .and_then(|h: &Vec<String>| h.get(c).cloned())
                .or_else(|| Some(column_letters(abs_col)));
            let at = || Location {
                file: file.to_string(),
                sheet: Some(sheet.to_string()),
                row: Some(number),
                column: column.clone(),
            };
            let formula = if has_formulas {
                formulas
                    .get_value((abs_row as u32, abs_col as u32))
                    .filter(|f| !f.is_empty())
            } else {
                None
            };
            match sheet_cell(data, formula, limits, at) {
                Ok(cell) => cells.push(cell),
                Err(issue) => issues.push(issue),
            }
        }
        match &headers {
            None => {
                if cells.iter().all(Cell::is_blank) {
                    continue;
                }
                headers = Some(
                    cells
                        .iter()
                        .map(|c| c.as_text().unwrap_or_default().trim().to_string())
                        .collect(),
                );
                header_row = number;
            }
            Some(_) => {
                if cells.iter().all(Cell::is_blank) {
                    continue;
                }
                rows.push(RawRow {
                    number,
                    record: number - header_row,
                    cells,
                });
            }
        }
        if issues.len() > 200 {
            break;
        }
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    let Some(headers) = headers else {
        return Err(vec![Issue::error(
            whole,
            "empty_file",
            "the sheet is empty".to_string(),
        )]);
    };
    Ok(RawTable {
        file: file.to_string(),
        sheet: Some(sheet.to_string()),
        headers,
        rows,
    })
}

/// One workbook cell: a formula as its text (never evaluated), else the value as read, text
/// checked ([`clean_text`]) and blank text empty.
fn sheet_cell(
    data: &Data,
    formula: Option<&String>,
    limits: &ReadLimits,
    at: impl FnOnce() -> Location,
) -> Result<Cell, Issue> {
    if let Some(f) = formula {
        // Formulas are never evaluated: the cell is the formula's text.
        let text = if f.starts_with('=') {
            f.clone()
        } else {
            format!("={f}")
        };
        return clean_text(text, limits, at).map(Cell::Text);
    }
    Ok(match data {
        Data::Empty => Cell::Empty,
        Data::String(s) => match clean_text(s.clone(), limits, at)? {
            t if t.trim().is_empty() => Cell::Empty,
            t => Cell::Text(t),
        },
        Data::Int(i) => Cell::Number(*i as f64),
        Data::Float(x) => Cell::Number(*x),
        Data::Bool(b) => Cell::Bool(*b),
        Data::DateTime(d) => Cell::Text(d.to_string()),
        Data::DateTimeIso(s) | Data::DurationIso(s) => Cell::Text(s.clone()),
        Data::Error(e) => Cell::Error(format!("{e}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_bom_and_crlf_reads_clean_headers() {
        let bytes = b"\xEF\xBB\xBFitem, rater\r\na,\"x\r\ny\"\r\n";
        let t = read_table_bytes("t.csv", bytes, FileFormat::Csv, None).expect("valid CSV");
        assert_eq!(
            t.headers,
            vec!["item", "rater"],
            "BOM and stray spaces are removed"
        );
        assert_eq!(
            t.rows[0].cells[1],
            Cell::Text("x\ny".into()),
            "CRLF inside a cell becomes LF"
        );
        assert_eq!(t.rows[0].number, 2, "the first data row is row 2");
    }
}
