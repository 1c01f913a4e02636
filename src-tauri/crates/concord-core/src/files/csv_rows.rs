//! CSV read as a stream of rows in bounded memory: the one CSV reader every part of Concord uses
//! (the importers through [`super::table`], the long-form score tables of `concord stats`, the
//! streaming bulk imports). Whatever the file's size, the reader holds one record, a small read
//! buffer and the line breaks of the record being read; nothing grows with the number of rows.
//!
//! The bytes pass through a watcher on their way to the `csv` crate's parser. The watcher counts
//! line breaks as an editor shows them (LF, CRLF once, a lone CR), so every row knows the line it
//! starts on even when earlier cells hold quoted line breaks; and it follows the quoting rules of
//! the parser, so a quote that is never closed is reported at the line where it opens instead of
//! swallowing the rest of the file into one cell, and a quoted cell or a line longer than any
//! valid one could be is refused as soon as it is, before it is buffered whole: reading stops at
//! the cell limit (plus the parser's buffer), so a cell that never ends — an endless pipe,
//! `/dev/zero` — is refused at its row and column instead of counted. Inside a field it
//! skips over runs of bytes that are neither a quote, a comma nor a line break (they only make the
//! field longer), so most bytes are looked at once.
//!
//! Encoding is decided from the first bytes: UTF-8 (a byte-order mark is dropped), UTF-16 with a
//! byte-order mark (decoded; such a file is read whole, within the file limit), UTF-16 without one
//! (refused, with a message saying how to save the file) and ZIP archives (an `.xlsx` named
//! `.csv`; refused). Each cell is checked as it is read: valid UTF-8, no NUL byte, within the cell
//! limit; a row with more non-blank fields or fewer fields than the header is an error naming the
//! row and the column.

use super::bounds::{Limit, ReadLimits};
use super::{Issue, Location};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{self, Cursor, Read};

/// Bytes sniffed before the encoding is decided.
const HEAD_BYTES: usize = 512;
/// The parser's read buffer.
const BUFFER_BYTES: usize = 64 * 1024;

/// Why the watcher stopped the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// A quoted field opened on this line runs to the end of the file.
    UnclosedQuote { line: usize },
    /// Field `column` (0-based) of the record starting on `line` grew to `bytes` bytes, more than
    /// the cell limit, where reading stopped; `quoted` is the line its opening quote is on.
    CellTooLong {
        line: usize,
        column: usize,
        bytes: u64,
        quoted: Option<usize>,
    },
}

/// Where the parser is inside quoting, by the `csv` crate's rules: a quote opens a quoted field
/// only at the start of a field, `""` inside one is a quote, text after the closing quote joins
/// the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quoting {
    FieldStart,
    Unquoted,
    Quoted,
    QuoteInQuoted,
}

/// The reader between the file and the parser; see the module documentation.
struct Watched<R> {
    inner: R,
    /// The line the next byte is on (1-based).
    line: usize,
    previous_was_cr: bool,
    /// The line of each record that has started and not yet been taken by the parser. Like the
    /// parser, a record starts at the first byte of a line (outside quotes) that is not itself a
    /// line break: empty lines hold no record.
    record_lines: VecDeque<usize>,
    at_line_start: bool,
    quoting: Quoting,
    quote_line: usize,
    /// The field being read: its position in its record and its bytes so far (quotes included).
    field_column: usize,
    field_bytes: u64,
    /// Bytes a field may hold: the cell limit plus its two quotes.
    max_field: u64,
    stop: Option<Stop>,
}

impl<R: Read> Watched<R> {
    fn new(inner: R, cell_bytes: u64) -> Self {
        Watched {
            inner,
            line: 1,
            previous_was_cr: false,
            record_lines: VecDeque::new(),
            at_line_start: true,
            quoting: Quoting::FieldStart,
            quote_line: 1,
            field_column: 0,
            field_bytes: 0,
            max_field: cell_bytes.saturating_add(2),
            stop: None,
        }
    }

    /// Follow one byte; true when it ends the current field.
    fn watch(&mut self, b: u8) -> bool {
        // A CR is a line break (a CRLF counts once, at its CR); an LF is one unless a CR led it.
        let is_break = b == b'\r' || (b == b'\n' && !self.previous_was_cr);
        self.previous_was_cr = b == b'\r';
        if self.at_line_start && b != b'\r' && b != b'\n' {
            self.record_lines.push_back(self.line);
            self.at_line_start = false;
        }
        self.quoting = match (self.quoting, b) {
            (Quoting::FieldStart, b'"') => {
                self.quote_line = self.line;
                Quoting::Quoted
            }
            (Quoting::Quoted, b'"') => Quoting::QuoteInQuoted,
            (Quoting::Quoted, _) => Quoting::Quoted,
            (Quoting::QuoteInQuoted, b'"') => Quoting::Quoted,
            (_, b',' | b'\n' | b'\r') => Quoting::FieldStart,
            _ => Quoting::Unquoted,
        };
        if is_break {
            self.line += 1;
        }
        if self.quoting == Quoting::FieldStart {
            if b == b',' {
                self.field_column += 1;
            } else {
                self.field_column = 0;
                self.at_line_start = true;
            }
            self.field_bytes = 0;
            true
        } else {
            self.field_bytes += 1;
            false
        }
    }

    /// The line the record the parser has just read started on.
    fn take_record_line(&mut self) -> usize {
        // The parser only reads records the watcher has seen start; the fallback is never used.
        self.record_lines.pop_front().unwrap_or(self.line)
    }

    /// A field has grown past any valid cell: stop here, without reading another byte of the
    /// file, so a cell that never ends (an endless stream, `/dev/zero`) ends the reading at the
    /// limit. A quoted field says where its quote opened, since an unclosed quote is the usual
    /// cause of a cell this large.
    fn overlong(&mut self) -> io::Error {
        let line = self.record_lines.back().copied().unwrap_or(self.line);
        let quoted = matches!(self.quoting, Quoting::Quoted | Quoting::QuoteInQuoted)
            .then_some(self.quote_line);
        self.stopped(Stop::CellTooLong {
            line,
            column: self.field_column,
            bytes: self.field_bytes,
            quoted,
        })
    }

    fn stopped(&mut self, stop: Stop) -> io::Error {
        self.stop = Some(stop);
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stopped by the CSV reader's checks",
        )
    }
}

impl<R: Read> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(stop) = self.stop {
            return Err(self.stopped(stop));
        }
        let n = self.inner.read(buf)?;
        if n == 0 {
            if self.quoting == Quoting::Quoted {
                return Err(self.stopped(Stop::UnclosedQuote {
                    line: self.quote_line,
                }));
            }
            return Ok(0);
        }
        let mut i = 0;
        while i < n {
            self.watch(buf[i]);
            if self.field_bytes > self.max_field {
                return Err(self.overlong());
            }
            i += 1;
            // Inside a field, a run of bytes that are neither a quote, a comma nor a line break
            // changes nothing but the field's length (what `watch` would do byte by byte).
            if matches!(self.quoting, Quoting::Unquoted | Quoting::Quoted) {
                // The run stops where the field would pass the limit, so the byte that passes
                // it is watched on its own (and a run is never searched twice).
                let room = (self.max_field - self.field_bytes.min(self.max_field)) as usize;
                let window = &buf[i..i + (n - i).min(room)];
                let run = match self.quoting {
                    // Inside quotes a comma changes nothing either: only a quote or a line
                    // break ends the run, found with vector instructions (quoted texts are
                    // most of a conversations file's bytes).
                    Quoting::Quoted => memchr::memchr3(b'"', b'\r', b'\n', window),
                    _ => window
                        .iter()
                        .position(|c| matches!(c, b'"' | b',' | b'\r' | b'\n')),
                }
                .unwrap_or(window.len());
                if run > 0 {
                    self.field_bytes += run as u64;
                    self.previous_was_cr = false;
                    i += run;
                }
            }
        }
        Ok(n)
    }
}

/// One data row, borrowed from the reader until the next row is read. Every field has been
/// checked (UTF-8, no NUL byte, within the cell limit).
pub struct CsvRow<'r> {
    /// The line the row starts on, as an editor shows it.
    pub line: usize,
    /// The data record's ordinal (1-based, header excluded, blank records counted).
    pub record: usize,
    fields: &'r csv::ByteRecord,
}

impl<'r> CsvRow<'r> {
    /// Number of fields in the row (may exceed the header's when the extra ones are blank).
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether the row has no fields.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Field `i` as text (CRLF inside it read as LF); empty past the end of the row.
    pub fn text(&self, i: usize) -> Cow<'r, str> {
        let field = self.fields.get(i).unwrap_or_default();
        // Checked when the row was read, so this never falls back.
        let text = std::str::from_utf8(field).unwrap_or_default();
        if text.contains('\r') {
            Cow::Owned(text.replace("\r\n", "\n"))
        } else {
            Cow::Borrowed(text)
        }
    }

    /// Field `i`, trimmed of surrounding whitespace (no copy unless it held a CRLF).
    pub fn trimmed(&self, i: usize) -> Cow<'r, str> {
        match self.text(i) {
            Cow::Borrowed(t) => Cow::Borrowed(t.trim()),
            Cow::Owned(t) => Cow::Owned(t.trim().to_string()),
        }
    }
}

/// A CSV source read row by row; see the module documentation.
pub struct CsvRows<'a> {
    file: String,
    reader: csv::Reader<Watched<Box<dyn Read + 'a>>>,
    limits: ReadLimits,
    headers: Vec<String>,
    record: csv::ByteRecord,
    ordinal: usize,
    finished: bool,
}

impl<'a> CsvRows<'a> {
    /// Start reading `source` (named `file` in messages): the encoding is decided and the header
    /// row read. Errors: an empty file, a file that is not CSV text, a header that breaks a limit.
    pub fn new(
        file: &str,
        mut source: impl Read + 'a,
        limits: &ReadLimits,
    ) -> Result<CsvRows<'a>, Vec<Issue>> {
        let unreadable = |e: io::Error| {
            vec![Issue::error(
                Location::whole_file(file),
                "unreadable",
                format!("cannot read the file: {e}"),
            )]
        };
        let mut head = Vec::with_capacity(HEAD_BYTES);
        (&mut source)
            .take(HEAD_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(unreadable)?;
        if head.is_empty() {
            return Err(vec![Issue::error(
                Location::whole_file(file),
                "empty_file",
                "the file is empty (0 bytes)".to_string(),
            )]);
        }
        let stream: Box<dyn Read + 'a> =
            if head.starts_with(b"\xFF\xFE") || head.starts_with(b"\xFE\xFF") {
                // UTF-16 is decoded whole: such files are rare and small, and the file limit holds.
                let mut all = head;
                source
                    .take(limits.file_bytes.saturating_add(1))
                    .read_to_end(&mut all)
                    .map_err(unreadable)?;
                if all.len() as u64 > limits.file_bytes {
                    return Err(vec![limits.exceeded(
                        Location::whole_file(file),
                        Limit::FileBytes,
                        format!("the file holds {:.1} MB", all.len() as f64 / 1_048_576.0),
                    )]);
                }
                let text = super::encoding::decode_text(file, &all)?.into_owned();
                Box::new(Cursor::new(text))
            } else {
                let start = super::encoding::decode_text(file, &head)?.into_owned();
                if start.starts_with(b"PK\x03\x04") {
                    return Err(vec![Issue::error(
                    Location::whole_file(file),
                    "wrong_format",
                    "this is a ZIP archive (an .xlsx workbook?), not CSV text; import it as .xlsx"
                        .to_string(),
                )]);
                }
                Box::new(Cursor::new(start).chain(source))
            };
        let watched = Watched::new(stream, limits.cell_bytes);
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .buffer_capacity(BUFFER_BYTES)
            .from_reader(watched);
        let mut rows = CsvRows {
            file: file.to_string(),
            reader,
            limits: *limits,
            headers: Vec::new(),
            record: csv::ByteRecord::new(),
            ordinal: 0,
            finished: false,
        };
        let line = match rows.read_record() {
            Ok(Some(line)) => line,
            Ok(None) => {
                return Err(vec![Issue::error(
                    Location::whole_file(file),
                    "empty_file",
                    "the file has no header row".to_string(),
                )])
            }
            Err(issue) => return Err(vec![issue]),
        };
        let issues = rows.check_fields(line, false);
        if !issues.is_empty() {
            return Err(issues);
        }
        rows.headers = (0..rows.record.len())
            .map(|i| {
                std::str::from_utf8(&rows.record[i])
                    .unwrap_or_default()
                    .trim()
                    .to_string()
            })
            .collect();
        if rows.headers.iter().all(String::is_empty) {
            return Err(vec![Issue::error(
                Location::whole_file(file),
                "empty_file",
                "the file has no header row".to_string(),
            )]);
        }
        Ok(rows)
    }

    /// The file name used in messages.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Header names, surrounding whitespace removed.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    /// Whether a problem ended the reading (no further row will come).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The next non-blank data row; `None` at the end of the file or after a problem that ends
    /// the reading. `Some(Err(issues))` is a row with problems; reading may go on after it unless
    /// [`CsvRows::is_finished`] says otherwise.
    pub fn next_row(&mut self) -> Option<Result<CsvRow<'_>, Vec<Issue>>> {
        loop {
            if self.finished {
                return None;
            }
            let line = match self.read_record() {
                Ok(Some(line)) => line,
                Ok(None) => {
                    self.finished = true;
                    return None;
                }
                Err(issue) => {
                    self.finished = true;
                    return Some(Err(vec![issue]));
                }
            };
            self.ordinal += 1;
            if self.ordinal as u64 > self.limits.rows {
                self.finished = true;
                return Some(Err(vec![self.limits.exceeded(
                    Location::file_row(&self.file, line),
                    Limit::Rows,
                    format!("the file holds more than {} rows", self.limits.rows),
                )]));
            }
            let mut issues = self.check_fields(line, true);
            let blank = (0..self.record.len()).all(|i| self.record[i].trim_ascii().is_empty());
            if blank && issues.is_empty() {
                continue;
            }
            let width = self.headers.len();
            let fields = self.record.len();
            if fields > width && (width..fields).any(|i| !self.record[i].trim_ascii().is_empty()) {
                issues.push(Issue::error(
                    Location::file_row(&self.file, line),
                    "extra_fields",
                    format!("the row has {fields} fields but the header names {width}"),
                ));
            } else if fields < width {
                // A short row is a lost separator or line break, not empty cells: reading it as
                // such would shift or drop values silently.
                issues.push(Issue::error(
                    Location {
                        column: self.headers.get(fields).cloned(),
                        ..Location::file_row(&self.file, line)
                    },
                    "missing_fields",
                    format!(
                        "the row has {fields} fields but the header names {width}; every row needs one field per column (an empty field is two adjacent commas)"
                    ),
                ));
            }
            if !issues.is_empty() {
                return Some(Err(issues));
            }
            return Some(Ok(CsvRow {
                line,
                record: self.ordinal,
                fields: &self.record,
            }));
        }
    }

    /// Read the next record; its line, or `None` at the end.
    fn read_record(&mut self) -> Result<Option<usize>, Issue> {
        match self.reader.read_byte_record(&mut self.record) {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => return Err(self.read_error(e)),
        }
        let line = self.reader.get_mut().take_record_line();
        if self.record.len() as u64 > self.limits.columns {
            return Err(self.limits.exceeded(
                Location::file_row(&self.file, line),
                Limit::Columns,
                format!("the row has {} fields", self.record.len()),
            ));
        }
        Ok(Some(line))
    }

    fn read_error(&self, e: csv::Error) -> Issue {
        let limits = &self.limits;
        match self.reader.get_ref().stop {
            Some(Stop::UnclosedQuote { line }) => Issue::error(
                Location::file_row(&self.file, line),
                "unclosed_quote",
                format!(
                    "a quoted cell opens on line {line} and is never closed, so every row after it would be read as part of that one cell; close the quote (a quote inside a quoted cell is written twice: \"\")"
                ),
            ),
            Some(Stop::CellTooLong {
                line,
                column,
                bytes,
                quoted,
            }) => limits.exceeded(
                Location {
                    column: self
                        .headers
                        .get(column)
                        .cloned()
                        .or_else(|| Some(format!("#{}", column + 1))),
                    ..Location::file_row(&self.file, line)
                },
                Limit::CellBytes,
                format!(
                    "the cell holds more than {:.1} MB of text (reading stopped there){}",
                    bytes.saturating_sub(2) as f64 / 1_048_576.0,
                    match quoted {
                        Some(q) => format!(
                            "; it is a quoted cell opening on line {q}: if that quote is never closed, close it (a quote inside a quoted cell is written twice: \"\")"
                        ),
                        None => String::new(),
                    }
                ),
            ),
            None => match e.kind() {
                csv::ErrorKind::Io(io) => Issue::error(
                    Location::whole_file(&self.file),
                    "unreadable",
                    format!("cannot read the file: {io}"),
                ),
                _ => Issue::error(
                    Location {
                        row: e.position().map(|p| p.line() as usize),
                        ..Location::whole_file(&self.file)
                    },
                    "malformed_csv",
                    format!("not valid CSV: {e}"),
                ),
            },
        }
    }

    /// Check every field of the current record: UTF-8, no NUL, within the cell limit.
    fn check_fields(&self, line: usize, named: bool) -> Vec<Issue> {
        let mut issues = Vec::new();
        for (i, field) in self.record.iter().enumerate() {
            let at = || Location {
                column: if named {
                    self.headers.get(i).cloned()
                } else {
                    None
                }
                .or_else(|| Some(format!("#{}", i + 1))),
                ..Location::file_row(&self.file, line)
            };
            if field.len() as u64 > self.limits.cell_bytes {
                issues.push(self.limits.exceeded(
                    at(),
                    Limit::CellBytes,
                    format!(
                        "the cell holds {:.1} MB of text",
                        field.len() as f64 / 1_048_576.0
                    ),
                ));
                continue;
            }
            if let Err(e) = std::str::from_utf8(field) {
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
            if field.contains(&0) {
                issues.push(Issue::error(
                    at(),
                    "nul_byte",
                    "the text contains a NUL byte (binary data); remove it and import again"
                        .to_string(),
                ));
            }
        }
        issues
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_of(bytes: &[u8]) -> Result<Vec<(usize, Vec<String>)>, Vec<Issue>> {
        let mut rows = CsvRows::new("t.csv", bytes, &ReadLimits::default())?;
        let mut out = Vec::new();
        while let Some(row) = rows.next_row() {
            let row = row?;
            out.push((
                row.line,
                (0..row.len()).map(|i| row.text(i).into_owned()).collect(),
            ));
        }
        Ok(out)
    }

    /// A reader handing out one byte per call, so every chunk boundary is exercised.
    struct Trickle<'b>(&'b [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((&b, rest)), Some(slot)) => {
                    *slot = b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    #[test]
    fn lines_count_lf_crlf_lone_cr_and_quoted_breaks_as_an_editor_does() {
        let bytes = b"a,b\r\n1,\"x\r\ny\"\r\n2,z\r3,w\n\n4,v";
        let rows = rows_of(bytes).expect("valid CSV");
        let lines: Vec<usize> = rows.iter().map(|r| r.0).collect();
        assert_eq!(
            lines,
            vec![2, 4, 5, 7],
            "a quoted CRLF moves the next row down a line, a lone CR is a line break, a blank line is counted"
        );
        assert_eq!(
            rows[0].1[1], "x\ny",
            "CRLF inside a quoted cell reads as LF"
        );
        let mut trickled = CsvRows::new("t.csv", Trickle(bytes), &ReadLimits::default())
            .expect("the header reads one byte at a time too");
        let mut seen = Vec::new();
        while let Some(row) = trickled.next_row() {
            seen.push(row.expect("valid row").line);
        }
        assert_eq!(seen, lines, "line numbers must not depend on read sizes");
    }

    #[test]
    fn an_unclosed_quote_is_reported_where_it_opens() {
        let issues = rows_of(b"a,b\n1,2\n3,\"never closed\n4,5\n").expect_err("unclosed quote");
        assert_eq!(issues[0].code, "unclosed_quote", "the mistake is named");
        assert_eq!(issues[0].at.row, Some(3), "the line where the quote opens");
    }

    #[test]
    fn an_overlong_quoted_cell_stops_before_it_is_buffered() {
        let limits = ReadLimits {
            cell_bytes: 1024,
            ..ReadLimits::default()
        };
        let mut bytes = b"a,b\n1,\"".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', 200_000));
        bytes.extend(b"\"\n2,3\n");
        let mut rows = CsvRows::new("t.csv", &bytes[..], &limits).expect("header is fine");
        let issues = rows
            .next_row()
            .expect("a result")
            .err()
            .expect("the cell is too long");
        assert_eq!(issues[0].code, "cell_too_large", "the cell limit is named");
        assert_eq!(issues[0].at.row, Some(2), "the line where the cell opens");
        assert!(rows.next_row().is_none(), "the problem ends the reading");
    }

    #[test]
    fn short_and_long_rows_name_row_and_column() {
        let issues = rows_of(b"a,b,c\n1,2\n").expect_err("short row");
        assert_eq!(issues[0].code, "missing_fields", "a short row is an error");
        assert_eq!(
            issues[0].at.column.as_deref(),
            Some("c"),
            "the first missing column"
        );
        let issues = rows_of(b"a,b\n1,2,3\n").expect_err("long row");
        assert_eq!(issues[0].code, "extra_fields", "a long row is an error");
        assert!(
            rows_of(b"a,b\n1,2,,\n").is_ok(),
            "blank extra fields (a trailing comma) are allowed"
        );
    }

    #[test]
    fn encodings_are_sniffed_from_the_first_bytes() {
        let utf16: Vec<u8> = std::iter::once(0xFEFFu16)
            .chain("a,b\n1,é\n".encode_utf16())
            .flat_map(u16::to_le_bytes)
            .collect();
        let rows = rows_of(&utf16).expect("UTF-16 with a byte-order mark is decoded");
        assert_eq!(rows[0].1[1], "é", "the text survives decoding");
        let rows = rows_of(b"\xEF\xBB\xBFa,b\n1,2\n").expect("UTF-8 with a byte-order mark");
        assert_eq!(rows[0].0, 2, "the mark does not shift lines");
        let issues = rows_of(b"PK\x03\x04rest").expect_err("a ZIP archive is not CSV");
        assert_eq!(
            issues[0].code, "wrong_format",
            "the format mistake is named"
        );
        let issues = rows_of(b"").expect_err("an empty file");
        assert_eq!(issues[0].code, "empty_file", "an empty file is named so");
    }

    #[test]
    fn bad_bytes_in_a_cell_name_row_and_column() {
        let issues = rows_of(b"a,b\n1,x\xFFy\n").expect_err("invalid UTF-8");
        assert_eq!(
            issues[0].code, "invalid_utf8",
            "the encoding problem is named"
        );
        assert_eq!(
            (issues[0].at.row, issues[0].at.column.as_deref()),
            (Some(2), Some("b")),
            "row and column of the bad cell"
        );
        let issues = rows_of(b"a,b\n1,x\0y\n").expect_err("NUL byte");
        assert_eq!(issues[0].code, "nul_byte", "binary data is named");
    }
}
