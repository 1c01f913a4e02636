//! How much one input file may make Concord hold in memory, and the check that runs on a workbook
//! before the spreadsheet reader sees it. Readers must never allocate in proportion to a size a
//! file merely *declares*: calamine reserves room for the shared-string count a workbook states and
//! lays a sheet out as one block from its first to its last cell, so a 3 KB file declaring a billion
//! strings, or holding one cell at `XFD1048576`, would ask for gigabytes and abort the process.
//! [`check_workbook`] streams every XML part of the archive (never trusting the sizes its directory
//! states) and compares what it finds — declared counts, the `<dimension>` and every cell reference
//! that holds a value, shared-formula indexes, unpacked bytes — with [`ReadLimits`]; only a
//! workbook within them is handed to calamine. What a workbook *declares* is metadata and may lie:
//! a `<dimension>` wider than its cells or a shared-string count beyond the strings it holds does
//! not refuse the file. The real cells decide; the declared string counts are removed before
//! calamine sees the workbook (the archive is rebuilt with that one part rewritten), since calamine
//! reserves room for them, and its reservation for a dimension is capped. CSV and JSON Lines are read in one pass and checked
//! against the same limits as they go.
//!
//! Each limit is a clear error naming the file, the limit and the environment variable that raises
//! it.

use super::{Issue, Location};
use crate::base::text::quoted;
use quick_xml::events::{BytesStart, Event};
use std::io::{Cursor, Read};

/// Limits per cell, row, sheet and file. The defaults keep any input of up to 50 MB within about
/// 300 MB of memory while leaving room for the released datasets (the MentalBench-100k layout is
/// 10,000 rows × 11 columns; a study's long-form ratings a few hundred thousand rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// Bytes of one file (`CONCORD_MAX_FILE_MB`).
    pub file_bytes: u64,
    /// Bytes of text in one cell (`CONCORD_MAX_CELL_MB`).
    pub cell_bytes: u64,
    /// Columns of one row (`CONCORD_MAX_COLUMNS`).
    pub columns: u64,
    /// Rows of one sheet or file (`CONCORD_MAX_ROWS`).
    pub rows: u64,
    /// Cells of one file, and of the block a sheet spans from its first to its last cell
    /// (`CONCORD_MAX_CELLS`).
    pub cells: u64,
    /// Unpacked bytes of the shared strings plus one sheet of a workbook (`CONCORD_MAX_UNPACKED_MB`).
    pub unpacked_bytes: u64,
}

const MB: u64 = 1 << 20;

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            file_bytes: 256 * MB,
            cell_bytes: MB,
            columns: 16_384,
            rows: 1_048_576,
            cells: 3_000_000,
            unpacked_bytes: 128 * MB,
        }
    }
}

/// One limit: what it bounds, its variable, and whether it is counted in megabytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    FileBytes,
    CellBytes,
    Columns,
    Rows,
    Cells,
    UnpackedBytes,
}

impl Limit {
    /// The environment variable that raises the limit.
    pub fn variable(self) -> &'static str {
        match self {
            Limit::FileBytes => "CONCORD_MAX_FILE_MB",
            Limit::CellBytes => "CONCORD_MAX_CELL_MB",
            Limit::Columns => "CONCORD_MAX_COLUMNS",
            Limit::Rows => "CONCORD_MAX_ROWS",
            Limit::Cells => "CONCORD_MAX_CELLS",
            Limit::UnpackedBytes => "CONCORD_MAX_UNPACKED_MB",
        }
    }

    /// The issue code of crossing the limit.
    pub fn code(self) -> &'static str {
        match self {
            Limit::FileBytes => "file_too_large",
            Limit::CellBytes => "cell_too_large",
            Limit::Columns => "too_many_columns",
            Limit::Rows => "too_many_rows",
            Limit::Cells => "too_many_cells",
            Limit::UnpackedBytes => "unpacked_too_large",
        }
    }

    fn in_megabytes(self) -> bool {
        matches!(
            self,
            Limit::FileBytes | Limit::CellBytes | Limit::UnpackedBytes
        )
    }
}

impl ReadLimits {
    /// The defaults, each replaced by its environment variable when that holds a positive whole
    /// number (megabytes for the byte limits).
    pub fn from_env() -> ReadLimits {
        let mut limits = ReadLimits::default();
        for limit in [
            Limit::FileBytes,
            Limit::CellBytes,
            Limit::Columns,
            Limit::Rows,
            Limit::Cells,
            Limit::UnpackedBytes,
        ] {
            let Some(n) = std::env::var(limit.variable())
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|&n| n > 0)
            else {
                continue;
            };
            let value = if limit.in_megabytes() {
                n.saturating_mul(MB)
            } else {
                n
            };
            *limits.get_mut(limit) = value;
        }
        limits
    }

    pub fn get(&self, limit: Limit) -> u64 {
        match limit {
            Limit::FileBytes => self.file_bytes,
            Limit::CellBytes => self.cell_bytes,
            Limit::Columns => self.columns,
            Limit::Rows => self.rows,
            Limit::Cells => self.cells,
            Limit::UnpackedBytes => self.unpacked_bytes,
        }
    }

    fn get_mut(&mut self, limit: Limit) -> &mut u64 {
        match limit {
            Limit::FileBytes => &mut self.file_bytes,
            Limit::CellBytes => &mut self.cell_bytes,
            Limit::Columns => &mut self.columns,
            Limit::Rows => &mut self.rows,
            Limit::Cells => &mut self.cells,
            Limit::UnpackedBytes => &mut self.unpacked_bytes,
        }
    }

    /// The error for `found` exceeding `limit`; `what` says what was counted ("the sheet spans
    /// 16384 columns × 1048576 rows").
    pub fn exceeded(&self, at: Location, limit: Limit, what: String) -> Issue {
        let max = self.get(limit);
        let (max_text, unit) = if limit.in_megabytes() {
            (format!("{}", max.div_ceil(MB)), " MB")
        } else {
            (max.to_string(), "")
        };
        let noun = match limit {
            Limit::FileBytes => "per file",
            Limit::CellBytes => "of text per cell",
            Limit::Columns => "columns per row",
            Limit::Rows => "rows per sheet",
            Limit::Cells => "cells per sheet or file",
            Limit::UnpackedBytes => "of unpacked workbook XML per sheet",
        };
        Issue::error(
            at,
            limit.code(),
            format!(
                "{what}; Concord reads at most {max_text}{unit} {noun} (to raise the limit, set the environment variable {}, e.g. {}={}, and import again)",
                limit.variable(),
                limit.variable(),
                max_text.parse::<u64>().unwrap_or(max).saturating_mul(2)
            ),
        )
    }
}

fn whole(file: &str, part: Option<&str>) -> Location {
    Location {
        file: file.to_string(),
        sheet: part.map(str::to_string),
        row: None,
        column: None,
    }
}

/// A cell reference (`B7`, `XFD1048576`) as 0-based (row, column); `None` when it is not one or
/// its numbers would overflow.
pub(crate) fn cell_ref(text: &[u8]) -> Option<(u64, u64)> {
    let letters = text.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    let digits = &text[letters..];
    if letters == 0 || letters > 7 || digits.is_empty() || digits.len() > 12 {
        return None;
    }
    let mut col = 0u64;
    for b in &text[..letters] {
        col = col * 26 + u64::from(b.to_ascii_uppercase() - b'A') + 1;
    }
    let mut row = 0u64;
    for b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        row = row * 10 + u64::from(b - b'0');
    }
    (row >= 1).then(|| (row - 1, col - 1))
}

/// A row number attribute (`r="12"`), 0-based.
fn row_number(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 12 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = text.iter().fold(0u64, |n, b| n * 10 + u64::from(b - b'0'));
    (n >= 1).then(|| n - 1)
}

fn attribute(e: &BytesStart<'_>, name: &str) -> Option<Vec<u8>> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .map(|a| a.value.into_owned().into_bytes())
}

/// What the scan of one XML part found.
#[derive(Debug, Default)]
struct PartFacts {
    unpacked: u64,
    /// Cells that hold a value, and the block they span.
    cells: u64,
    first: Option<(u64, u64)>,
    last: Option<(u64, u64)>,
    is_shared_strings: bool,
    /// The largest shared-string count the part declares (`uniqueCount` or `count`).
    declared_strings: u64,
}

impl PartFacts {
    fn span(&self) -> u64 {
        match (self.first, self.last) {
            (Some((r0, c0)), Some((r1, c1))) => (r1 - r0 + 1).saturating_mul(c1 - c0 + 1),
            _ => 0,
        }
    }
}

/// Check a workbook (the bytes of an .xlsx) against `limits` before any reader allocates for it.
/// Every XML part of the archive is streamed; see the module documentation for what is checked.
/// Returns the workbook calamine may read: the same bytes, or, when the shared strings declare
/// more texts than they hold, a copy with those declared counts removed.
pub fn check_workbook<'a>(
    file: &str,
    bytes: &'a [u8],
    limits: &ReadLimits,
) -> Result<std::borrow::Cow<'a, [u8]>, Vec<Issue>> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
        vec![Issue::error(
            whole(file, None),
            "unreadable_workbook",
            format!("the workbook cannot be opened (truncated or damaged?): {e}"),
        )]
    })?;
    let mut shared_strings = 0u64;
    let mut overstated: Vec<String> = Vec::new();
    let mut sheets: Vec<(String, PartFacts)> = Vec::new();
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).map_err(|e| {
            vec![Issue::error(
                whole(file, None),
                "unreadable_workbook",
                format!("part {index} of the workbook cannot be read: {e}"),
            )]
        })?;
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        let lower = name.to_ascii_lowercase();
        // Parts that are not named as XML are scanned too (a relationship may point a sheet at any
        // name), but only XML that holds cells or strings is held to the limits.
        let strict = lower.ends_with(".xml") || lower.ends_with(".rels");
        let facts = scan_part(file, &name, &mut entry, limits, strict)?;
        if facts.is_shared_strings {
            shared_strings = shared_strings.saturating_add(facts.unpacked);
            if facts.declared_strings > facts.cells {
                overstated.push(name);
            }
        } else if facts.cells > 0 || facts.first.is_some() {
            sheets.push((name, facts));
        }
    }
    let mut total_cells = 0u64;
    for (name, facts) in &sheets {
        let unpacked = facts.unpacked.saturating_add(shared_strings);
        if unpacked > limits.unpacked_bytes {
            return Err(vec![limits.exceeded(
                whole(file, Some(name)),
                Limit::UnpackedBytes,
                format!(
                    "part {name} and the shared strings unpack to {:.1} MB",
                    unpacked as f64 / MB as f64
                ),
            )]);
        }
        total_cells = total_cells.saturating_add(facts.cells);
    }
    if total_cells > limits.cells {
        return Err(vec![limits.exceeded(
            whole(file, None),
            Limit::Cells,
            format!("the workbook holds {total_cells} cells"),
        )]);
    }
    if overstated.is_empty() {
        return Ok(std::borrow::Cow::Borrowed(bytes));
    }
    without_declared_counts(&mut archive, &overstated, limits)
        .map(std::borrow::Cow::Owned)
        .map_err(|e| {
            vec![Issue::error(
                whole(file, None),
                "unreadable_workbook",
                format!("the workbook's shared strings cannot be rewritten: {e}"),
            )]
        })
}

/// A copy of the archive in which each part named in `parts` (shared strings, already checked
/// against `limits`) has the `count` and `uniqueCount` attributes of its `<sst>` tag removed;
/// every other part is copied as it is, still compressed.
fn without_declared_counts(
    archive: &mut zip::ZipArchive<Cursor<&[u8]>>,
    parts: &[String],
    limits: &ReadLimits,
) -> zip::result::ZipResult<Vec<u8>> {
    static SST_TAG: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(|| {
        regex::bytes::Regex::new(r"<(?:[A-Za-z_][\w.-]*:)?sst[\s>/][^>]*>")
            .expect("the shared-strings tag pattern compiles")
    });
    static COUNTS: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(|| {
        regex::bytes::Regex::new(r#"\s(?:count|uniqueCount)\s*=\s*(?:"[^"]*"|'[^']*')"#)
            .expect("the declared-count pattern compiles")
    });
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for index in 0..archive.len() {
        let name = String::from_utf8_lossy(archive.by_index_raw(index)?.name_raw()).into_owned();
        if !parts.contains(&name) {
            out.raw_copy_file(archive.by_index_raw(index)?)?;
            continue;
        }
        let mut text = Vec::new();
        archive
            .by_index(index)?
            .take(limits.unpacked_bytes)
            .read_to_end(&mut text)?;
        if let Some(tag) = SST_TAG.find(&text) {
            let cleaned = COUNTS.replace_all(tag.as_bytes(), &b""[..]).into_owned();
            text.splice(tag.range(), cleaned);
        }
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        out.start_file(name, options)?;
        std::io::Write::write_all(&mut out, &text)?;
    }
    Ok(out.finish()?.into_inner())
}

/// Stream one XML part, failing at the first limit crossed: every start and end tag goes to
/// [`PartScan`], and the bytes unpacked are checked once the part is read.
fn scan_part(
    file: &str,
    name: &str,
    entry: &mut dyn Read,
    limits: &ReadLimits,
    strict: bool,
) -> Result<PartFacts, Vec<Issue>> {
    let mut scan = PartScan {
        file,
        name,
        limits,
        facts: PartFacts::default(),
        row: 0,
        col: 0,
        in_cell: None,
        cell_has_value: false,
    };
    // One byte past the limit tells "at the limit" from "over it" without reading further.
    let mut counted = CountingReader {
        inner: entry.take(limits.unpacked_bytes.saturating_add(1)),
        count: 0,
    };
    let mut buf = Vec::new();
    {
        let mut xml = quick_xml::Reader::from_reader(std::io::BufReader::new(&mut counted));
        xml.config_mut().check_end_names = false;
        loop {
            buf.clear();
            let event = match xml.read_event_into(&mut buf) {
                Ok(e) => e,
                // Text after the limit is cut off mid-element; the size check below reports it.
                Err(_) if xml.buffer_position() >= limits.unpacked_bytes => break,
                // calamine reads with the same parser, so it stops at the same error.
                Err(_) if !strict => break,
                Err(e) => return Err(scan.damaged(e.to_string())),
            };
            match &event {
                Event::Start(e) => scan.start(e, false)?,
                Event::Empty(e) => scan.start(e, true)?,
                Event::End(e) => scan.end(e.local_name().as_ref())?,
                Event::Eof => break,
                _ => {}
            }
        }
    }
    scan.facts.unpacked = counted.count;
    let facts = &scan.facts;
    let holds_data = strict || facts.cells > 0 || facts.is_shared_strings;
    if counted.count > limits.unpacked_bytes && holds_data {
        return Err(scan.over(
            Limit::UnpackedBytes,
            format!(
                "part {name} unpacks to more than {:.1} MB",
                limits.unpacked_bytes as f64 / MB as f64
            ),
            None,
        ));
    }
    Ok(scan.facts)
}

/// The scan of one XML part as it goes: what it found so far, and where it is (the row and
/// column a cell without a reference stands at, the cell open and whether it holds a value).
struct PartScan<'a> {
    file: &'a str,
    name: &'a str,
    limits: &'a ReadLimits,
    facts: PartFacts,
    row: u64,
    col: u64,
    in_cell: Option<(u64, u64)>,
    cell_has_value: bool,
}

impl PartScan<'_> {
    /// The part (and 0-based `row`, when known) as a location.
    fn at(&self, row: Option<u64>) -> Location {
        Location {
            file: self.file.to_string(),
            sheet: Some(self.name.to_string()),
            row: row.map(|r| (r + 1) as usize),
            column: None,
        }
    }

    /// The problem of crossing `limit`.
    fn over(&self, limit: Limit, what: String, row: Option<u64>) -> Vec<Issue> {
        vec![self.limits.exceeded(self.at(row), limit, what)]
    }

    /// The problem of a part that cannot be read as a workbook part.
    fn damaged(&self, detail: String) -> Vec<Issue> {
        vec![Issue::error(
            self.at(None),
            "unreadable_workbook",
            format!("part {} of the workbook is damaged: {detail}", self.name),
        )]
    }

    /// An end tag: a closed cell that held a value is counted (and the block it widens checked),
    /// and the position moves on.
    fn end(&mut self, local_name: &str) -> Result<(), Vec<Issue>> {
        match local_name {
            "c" => {
                if let Some(pos) = self.in_cell.take() {
                    if self.cell_has_value {
                        self.facts.note_cell(pos);
                        check_span(&self.facts, self.limits)
                            .map_err(|(l, w)| self.over(l, w, Some(pos.0)))?;
                    }
                }
                self.col += 1;
            }
            "row" => {
                self.row += 1;
                self.col = 0;
            }
            _ => {}
        }
        Ok(())
    }

    /// A start (or, when `empty`, self-closing) tag: the shared strings' declared counts and
    /// texts, a sheet's dimension, rows, cells and shared formulas, each checked as it comes.
    fn start(&mut self, e: &BytesStart<'_>, empty: bool) -> Result<(), Vec<Issue>> {
        match e.local_name().as_ref() {
            "sst" => self.declared_strings(e)?,
            "si" if self.facts.is_shared_strings => {
                self.facts.cells += 1;
                if self.facts.cells > self.limits.cells {
                    return Err(self.over(
                        Limit::Cells,
                        format!(
                            "the shared strings hold more than {} texts",
                            self.limits.cells
                        ),
                        None,
                    ));
                }
            }
            "dimension" => self.dimension(e)?,
            "row" => {
                if let Some(v) = attribute(e, "r") {
                    self.row = row_number(&v).ok_or_else(|| {
                        self.damaged(format!(
                            "row number {} is not a positive whole number",
                            quoted(&String::from_utf8_lossy(&v))
                        ))
                    })?;
                    check_position(self.limits, (self.row, 0))
                        .map_err(|(l, w)| self.over(l, w, Some(self.row)))?;
                }
                self.col = 0;
                if empty {
                    self.row += 1;
                }
            }
            "c" => self.cell(e, empty)?,
            "v" | "is" if self.in_cell.is_some() => self.cell_has_value = true,
            "f" => self.formula(e)?,
            _ => {}
        }
        Ok(())
    }

    /// The shared strings' `uniqueCount` and `count`: numbers, recorded (the texts the part
    /// really holds are what is held to the cell limit; see [`check_workbook`]).
    fn declared_strings(&mut self, e: &BytesStart<'_>) -> Result<(), Vec<Issue>> {
        self.facts.is_shared_strings = true;
        for key in ["uniqueCount", "count"] {
            if let Some(v) = attribute(e, key) {
                let declared = std::str::from_utf8(&v)
                    .ok()
                    .and_then(|s| s.trim().parse::<u64>().ok());
                match declared {
                    Some(n) => self.facts.declared_strings = self.facts.declared_strings.max(n),
                    None => {
                        return Err(self.damaged(format!(
                            "the shared-string {} {} is not a number",
                            key,
                            quoted(&String::from_utf8_lossy(&v))
                        )))
                    }
                }
            }
        }
        Ok(())
    }

    /// A sheet's declared `<dimension>`: a cell range (its size is not held to the limits: the
    /// cells the sheet really holds are, and calamine's reservation for a dimension is capped).
    fn dimension(&self, e: &BytesStart<'_>) -> Result<(), Vec<Issue>> {
        let Some(v) = attribute(e, "ref") else {
            return Ok(());
        };
        let mut corners = v.split(|&b| b == b':').map(cell_ref);
        let first = corners.next().flatten();
        let last = corners.next().flatten().or(first);
        let (Some((r0, c0)), Some((r1, c1))) = (first, last) else {
            return Err(self.damaged(format!(
                "the sheet's dimension {} is not a cell range",
                quoted(&String::from_utf8_lossy(&v))
            )));
        };
        if r1 < r0 || c1 < c0 {
            return Err(self.damaged(format!(
                "the sheet's dimension {} ends before it starts",
                quoted(&String::from_utf8_lossy(&v))
            )));
        }
        Ok(())
    }

    /// A cell opening: its reference (or the position it stands at) within the limits; a
    /// self-closing cell holds nothing.
    fn cell(&mut self, e: &BytesStart<'_>, empty: bool) -> Result<(), Vec<Issue>> {
        let pos = match attribute(e, "r") {
            Some(v) => cell_ref(&v).ok_or_else(|| {
                self.damaged(format!(
                    "{} is not a cell reference",
                    quoted(&String::from_utf8_lossy(&v))
                ))
            })?,
            None => (self.row, self.col),
        };
        check_position(self.limits, pos).map_err(|(l, w)| self.over(l, w, Some(pos.0)))?;
        self.col = pos.1;
        if empty {
            self.col += 1;
        } else {
            self.in_cell = Some(pos);
            self.cell_has_value = false;
        }
        Ok(())
    }

    /// A formula: its cell holds a value, and a shared formula's index is within the cell limit.
    fn formula(&mut self, e: &BytesStart<'_>) -> Result<(), Vec<Issue>> {
        if self.in_cell.is_some() {
            self.cell_has_value = true;
        }
        if let Some(v) = attribute(e, "si") {
            let index = std::str::from_utf8(&v)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok());
            match index {
                Some(i) if i < self.limits.cells => {}
                _ => {
                    return Err(self.over(
                        Limit::Cells,
                        format!(
                            "a shared formula has the index {}",
                            String::from_utf8_lossy(&v)
                        ),
                        self.in_cell.map(|p| p.0),
                    ))
                }
            }
        }
        Ok(())
    }
}

impl PartFacts {
    fn note_cell(&mut self, (r, c): (u64, u64)) {
        self.cells += 1;
        self.first = Some(match self.first {
            Some((r0, c0)) => (r0.min(r), c0.min(c)),
            None => (r, c),
        });
        self.last = Some(match self.last {
            Some((r1, c1)) => (r1.max(r), c1.max(c)),
            None => (r, c),
        });
    }
}

/// The cells found so far must stay within the cell limit, counted and as the block they span.
fn check_span(facts: &PartFacts, limits: &ReadLimits) -> Result<(), (Limit, String)> {
    if facts.cells > limits.cells {
        return Err((
            Limit::Cells,
            format!("the sheet holds more than {} cells", limits.cells),
        ));
    }
    if facts.span() > limits.cells {
        let (r0, c0) = facts.first.unwrap_or_default();
        let (r1, c1) = facts.last.unwrap_or_default();
        return Err((
            Limit::Cells,
            format!(
                "the sheet's cells span {} rows × {} columns (from {}{} to {}{})",
                r1 - r0 + 1,
                c1 - c0 + 1,
                super::column_letters(c0 as usize),
                r0 + 1,
                super::column_letters(c1 as usize),
                r1 + 1
            ),
        ));
    }
    Ok(())
}

/// A position must lie within the row and column limits.
fn check_position(limits: &ReadLimits, (row, col): (u64, u64)) -> Result<(), (Limit, String)> {
    if row >= limits.rows {
        return Err((
            Limit::Rows,
            format!("the sheet has a cell in row {}", row + 1),
        ));
    }
    if col >= limits.columns {
        return Err((
            Limit::Columns,
            format!("the sheet has a cell in column {}", col + 1),
        ));
    }
    Ok(())
}

/// Counts the bytes read through it.
struct CountingReader<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_references_parse_and_refuse_overflow() {
        assert_eq!(cell_ref(b"A1"), Some((0, 0)), "the first cell");
        assert_eq!(
            cell_ref(b"XFD1048576"),
            Some((1_048_575, 16_383)),
            "Excel's last cell"
        );
        assert_eq!(cell_ref(b"A0"), None, "rows start at 1");
        assert_eq!(
            cell_ref(b"AAAAAAAAAAAA1"),
            None,
            "column letters that would overflow are not a reference"
        );
        assert_eq!(cell_ref(b"1A"), None, "letters come first");
    }

    #[test]
    fn limit_messages_name_the_variable() {
        let limits = ReadLimits::default();
        let issue = limits.exceeded(whole("f.xlsx", None), Limit::Cells, "x".into());
        assert!(
            issue.message.contains("CONCORD_MAX_CELLS") && issue.message.contains("3000000"),
            "the message says the limit and how to raise it: {}",
            issue.message
        );
    }
}
