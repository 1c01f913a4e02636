//! The first import phase: reading a file into a [`RawTable`] of header names and cells, without
//! interpreting any value. CSV (UTF-8, an optional byte-order mark, LF or CRLF), JSON Lines (one
//! object per line) and XLSX workbooks (read with calamine; a formula cell is kept as its formula
//! text and never evaluated) are read the same way, so every format gets the same checks: the file
//! is not empty, it really is the format its name says, every text is valid UTF-8 without NUL
//! bytes, and no single cell exceeds [`MAX_CELL_BYTES`]. Problems name the file, sheet, row and
//! column.

use super::{Issue, Location};
use calamine::{Data, Reader, Xlsx};
use std::io::Cursor;
use std::path::Path;

/// The largest cell Concord accepts (1 MiB): a therapy answer or a judge reply is a few kilobytes,
/// so a bigger cell is a broken export, not data.
pub const MAX_CELL_BYTES: usize = 1 << 20;

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

fn whole_file(file: &str) -> Location {
    Location {
        file: file.to_string(),
        sheet: None,
        row: None,
        column: None,
    }
}

/// Check a text value read from a file: no NUL bytes, not larger than [`MAX_CELL_BYTES`]; CRLF line
/// breaks inside the text become LF.
pub fn clean_text(text: String, at: impl FnOnce() -> Location) -> Result<String, Issue> {
    if text.len() > MAX_CELL_BYTES {
        return Err(Issue::error(
            at(),
            "cell_too_large",
            format!(
                "the cell holds {:.1} MB of text; Concord accepts at most {} MB in one cell",
                text.len() as f64 / 1_048_576.0,
                MAX_CELL_BYTES / 1_048_576
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
    let file = display_name(path);
    let bytes = std::fs::read(path).map_err(|e| {
        vec![Issue::error(
            whole_file(&file),
            "unreadable",
            format!("cannot read the file: {e}"),
        )]
    })?;
    read_table_bytes(&file, &bytes, format, sheet)
}

/// [`read_table`] over bytes already in memory.
pub fn read_table_bytes(
    file: &str,
    bytes: &[u8],
    format: FileFormat,
    sheet: Option<&str>,
) -> Result<RawTable, Vec<Issue>> {
    if bytes.is_empty() {
        return Err(vec![Issue::error(
            whole_file(file),
            "empty_file",
            "the file is empty (0 bytes)".to_string(),
        )]);
    }
    match format {
        FileFormat::Csv => read_csv(file, bytes),
        FileFormat::Jsonl => read_jsonl(file, bytes),
        FileFormat::Xlsx => read_xlsx(file, bytes, sheet).map(|mut tables| tables.remove(0)),
    }
}

fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Line breaks in `bytes`: LF, CRLF (counted once) and a lone CR.
fn line_breaks(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')))
        .count()
}

fn read_csv(file: &str, bytes: &[u8]) -> Result<RawTable, Vec<Issue>> {
    let bytes = strip_bom(bytes);
    if bytes.starts_with(b"PK\x03\x04") {
        return Err(vec![Issue::error(
            whole_file(file),
            "wrong_format",
            "this is a ZIP archive (an .xlsx workbook?), not CSV text; import it as .xlsx"
                .to_string(),
        )]);
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut issues = Vec::new();
    let mut headers: Option<Vec<String>> = None;
    let mut rows = Vec::new();
    let mut record = csv::ByteRecord::new();
    let mut ordinal = 0usize;
    let (mut counted_to, mut line_no) = (0usize, 1usize);
    loop {
        // Where the next record starts (the reader's position before reading it).
        let next_start = reader.position().byte() as usize;
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map(|p| p.line() as usize);
                issues.push(Issue::error(
                    Location {
                        file: file.to_string(),
                        sheet: None,
                        row: line,
                        column: None,
                    },
                    "malformed_csv",
                    format!("not valid CSV: {e}"),
                ));
                break;
            }
        }
        // The record's line number, counted from its starting byte (so quoted line breaks in
        // earlier records and CRLF endings count exactly as an editor shows them).
        // The csv reader ends a record at the CR of a CRLF, so a record may "start" on the LF
        // that belongs to the previous line break: step over it before counting.
        let mut start = next_start.clamp(counted_to, bytes.len());
        if bytes.get(start) == Some(&b'\n') {
            start += 1;
        }
        line_no += line_breaks(&bytes[counted_to..start]);
        counted_to = start;
        let line = line_no;
        let mut cells = Vec::with_capacity(record.len());
        for (i, field) in record.iter().enumerate() {
            let column_name = headers.as_ref().and_then(|h| h.get(i).cloned());
            let at = || Location {
                file: file.to_string(),
                sheet: None,
                row: Some(line),
                column: column_name.clone().or_else(|| Some(format!("#{}", i + 1))),
            };
            let text = match std::str::from_utf8(field) {
                Ok(t) => t.to_string(),
                Err(e) => {
                    issues.push(Issue::error(
                        at(),
                        "invalid_utf8",
                        format!(
                            "the text is not valid UTF-8 (byte {} of the cell); save the file as UTF-8",
                            e.valid_up_to() + 1
                        ),
                    ));
                    continue;
                }
            };
            match clean_text(text, at) {
                Ok(t) if t.is_empty() => cells.push(Cell::Empty),
                Ok(t) => cells.push(Cell::Text(t)),
                Err(issue) => issues.push(issue),
            }
        }
        match &headers {
            None => {
                headers = Some(
                    cells
                        .iter()
                        .map(|c| c.as_text().unwrap_or_default().trim().to_string())
                        .collect(),
                )
            }
            Some(h) => {
                ordinal += 1;
                if cells.iter().all(Cell::is_blank) {
                    continue;
                }
                if cells.len() > h.len() && cells[h.len()..].iter().any(|c| !c.is_blank()) {
                    issues.push(Issue::error(
                        Location {
                            file: file.to_string(),
                            sheet: None,
                            row: Some(line),
                            column: None,
                        },
                        "extra_fields",
                        format!(
                            "the row has {} fields but the header names {}",
                            cells.len(),
                            h.len()
                        ),
                    ));
                }
                rows.push(RawRow {
                    number: line,
                    record: ordinal,
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
    let headers = headers.unwrap_or_default();
    if headers.iter().all(|h| h.is_empty()) {
        return Err(vec![Issue::error(
            whole_file(file),
            "empty_file",
            "the file has no header row".to_string(),
        )]);
    }
    Ok(RawTable {
        file: file.to_string(),
        sheet: None,
        headers,
        rows,
    })
}

fn read_jsonl(file: &str, bytes: &[u8]) -> Result<RawTable, Vec<Issue>> {
    let bytes = strip_bom(bytes);
    let mut issues = Vec::new();
    let mut headers: Vec<String> = Vec::new();
    let mut rows = Vec::new();
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
        if line.len() > MAX_CELL_BYTES * 4 {
            issues.push(Issue::error(
                at(None),
                "cell_too_large",
                format!(
                    "the line holds {:.1} MB; Concord accepts at most {} MB in one cell",
                    line.len() as f64 / 1_048_576.0,
                    MAX_CELL_BYTES / 1_048_576
                ),
            ));
            continue;
        }
        let text = match std::str::from_utf8(line) {
            Ok(t) => t,
            Err(e) => {
                issues.push(Issue::error(
                    at(None),
                    "invalid_utf8",
                    format!(
                        "the line is not valid UTF-8 (byte {}); save the file as UTF-8",
                        e.valid_up_to() + 1
                    ),
                ));
                continue;
            }
        };
        let object = match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(o)) => o,
            Ok(_) => {
                issues.push(Issue::error(
                    at(None),
                    "not_an_object",
                    "each line must be one JSON object".to_string(),
                ));
                continue;
            }
            Err(e) => {
                issues.push(Issue::error(
                    at(None),
                    "malformed_json",
                    format!("not valid JSON: {e}"),
                ));
                continue;
            }
        };
        let mut cells = vec![Cell::Empty; headers.len()];
        for (key, value) in object {
            let key = key.trim().to_string();
            let position = match headers.iter().position(|h| *h == key) {
                Some(p) => p,
                None => {
                    headers.push(key.clone());
                    cells.push(Cell::Empty);
                    headers.len() - 1
                }
            };
            let cell = match value {
                serde_json::Value::Null => Cell::Empty,
                serde_json::Value::Bool(b) => Cell::Bool(b),
                serde_json::Value::Number(n) => match n.as_f64() {
                    Some(x) => Cell::Number(x),
                    None => Cell::Text(n.to_string()),
                },
                serde_json::Value::String(s) => match clean_text(s, || at(Some(key.clone()))) {
                    Ok(s) if s.is_empty() => Cell::Empty,
                    Ok(s) => Cell::Text(s),
                    Err(issue) => {
                        issues.push(issue);
                        continue;
                    }
                },
                other => Cell::Text(other.to_string()),
            };
            cells[position] = cell;
        }
        let record = rows.len() + 1;
        rows.push(RawRow {
            number,
            record,
            cells,
        });
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    if rows.is_empty() {
        return Err(vec![Issue::error(
            whole_file(file),
            "empty_file",
            "the file holds no JSON objects".to_string(),
        )]);
    }
    Ok(RawTable {
        file: file.to_string(),
        sheet: None,
        headers,
        rows,
    })
}

/// Read one sheet (the named one, or the first) of an XLSX workbook. Returns a one-element vector
/// so callers that read every sheet can share the code path.
fn read_xlsx(file: &str, bytes: &[u8], sheet: Option<&str>) -> Result<Vec<RawTable>, Vec<Issue>> {
    let one = |code: &str, message: String| vec![Issue::error(whole_file(file), code, message)];
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
    let mut workbook = Xlsx::new(Cursor::new(bytes)).map_err(|e| {
        one(
            "unreadable_workbook",
            format!("the workbook cannot be opened (truncated or damaged?): {e}"),
        )
    })?;
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
                        "the workbook has no sheet named {wanted:?}; its sheets are {}",
                        names
                            .iter()
                            .map(|n| format!("{n:?}"))
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
    let range = workbook.worksheet_range(&name).map_err(|e| {
        one(
            "unreadable_workbook",
            format!("sheet {name:?} cannot be read (truncated or damaged?): {e}"),
        )
    })?;
    let formulas = workbook.worksheet_formula(&name).map_err(|e| {
        one(
            "unreadable_workbook",
            format!("the formulas of sheet {name:?} cannot be read: {e}"),
        )
    })?;
    sheet_table(file, &name, &range, &formulas).map(|t| vec![t])
}

fn sheet_table(
    file: &str,
    sheet: &str,
    range: &calamine::Range<Data>,
    formulas: &calamine::Range<String>,
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
            let cell = if let Some(f) = formula {
                // Formulas are never evaluated: the cell is the formula's text.
                let text = if f.starts_with('=') {
                    f.clone()
                } else {
                    format!("={f}")
                };
                match clean_text(text, at) {
                    Ok(t) => Cell::Text(t),
                    Err(issue) => {
                        issues.push(issue);
                        continue;
                    }
                }
            } else {
                match data {
                    Data::Empty => Cell::Empty,
                    Data::String(s) => match clean_text(s.clone(), at) {
                        Ok(t) if t.is_empty() => Cell::Empty,
                        Ok(t) => Cell::Text(t),
                        Err(issue) => {
                            issues.push(issue);
                            continue;
                        }
                    },
                    Data::Int(i) => Cell::Number(*i as f64),
                    Data::Float(x) => Cell::Number(*x),
                    Data::Bool(b) => Cell::Bool(*b),
                    Data::DateTime(d) => Cell::Text(d.to_string()),
                    Data::DateTimeIso(s) | Data::DurationIso(s) => Cell::Text(s.clone()),
                    Data::Error(e) => Cell::Error(format!("{e}")),
                }
            };
            cells.push(cell);
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

/// Spreadsheet column letters for a 0-based column index (0 → A, 26 → AA).
pub fn column_letters(mut index: usize) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'A' + (index % 26) as u8);
        if index < 26 {
            break;
        }
        index = index / 26 - 1;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_letters_follow_spreadsheet_convention() {
        assert_eq!(column_letters(0), "A", "first column");
        assert_eq!(column_letters(25), "Z", "last single letter");
        assert_eq!(column_letters(26), "AA", "first two-letter column");
        assert_eq!(column_letters(701), "ZZ", "last two-letter column");
    }

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
