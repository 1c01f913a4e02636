//! JSON Lines read as a stream of objects in bounded memory: whatever the file's size, the reader
//! holds one line and a small read buffer. A line longer than the caller's bound is refused as
//! soon as it is (reading stops there, so a line that never ends — an endless pipe — ends the
//! reading instead of filling memory). Blank lines are skipped; every other line must be valid
//! UTF-8 holding one JSON object with no key named twice (see [`super::json`]).
//!
//! The encoding is decided from the first bytes as the CSV reader decides it: UTF-8 (a byte-order
//! mark is dropped), UTF-16 with a byte-order mark (decoded; such a file is read whole, within the
//! file limit), UTF-16 without one (refused, saying how to save the file), and a ZIP archive (an
//! `.xlsx` workbook; refused). Problems name the file and the line.

use super::bounds::{Limit, ReadLimits};
use super::{Issue, Location};
use serde_json::{Map, Value};
use std::io::{self, BufRead, BufReader, Cursor, Read};

/// Bytes sniffed before the encoding is decided.
const HEAD_BYTES: usize = 512;
/// The read buffer.
const BUFFER_BYTES: usize = 64 * 1024;

/// One line's object and the line it is on (1-based, as an editor shows it).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonLine {
    pub line: usize,
    pub object: Map<String, Value>,
}

/// A JSON Lines source read object by object; see the module documentation.
pub struct JsonLines<'a> {
    file: String,
    source: BufReader<Box<dyn Read + 'a>>,
    /// Bytes one line may hold (its line break not counted).
    max_line: u64,
    /// The line the next byte is on.
    line: usize,
    buffer: Vec<u8>,
    finished: bool,
}

impl<'a> JsonLines<'a> {
    /// Start reading `source` (named `file` in messages), whose lines may hold at most `max_line`
    /// bytes. Errors: an empty file, a file that is not UTF-8 or UTF-16 text, a ZIP archive.
    pub fn new(
        file: &str,
        mut source: impl Read + 'a,
        limits: &ReadLimits,
        max_line: u64,
    ) -> Result<JsonLines<'a>, Vec<Issue>> {
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
        let stream: Box<dyn Read + 'a> = if head.starts_with(b"\xFF\xFE")
            || head.starts_with(b"\xFE\xFF")
        {
            // UTF-16 is decoded whole: such files are rare, and the file limit holds.
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
                    "this is a ZIP archive (an .xlsx workbook?), not JSON Lines text".to_string(),
                )]);
            }
            Box::new(Cursor::new(start).chain(source))
        };
        Ok(JsonLines {
            file: file.to_string(),
            source: BufReader::with_capacity(BUFFER_BYTES, stream),
            max_line,
            line: 0,
            buffer: Vec::new(),
            finished: false,
        })
    }

    /// The file name used in messages.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Whether a problem ended the reading (no further line will come).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The next object; `None` at the end of the file or after a problem that ends the reading
    /// (a line over the bound, a read error). `Some(Err(issue))` is a line that is not one JSON
    /// object; reading goes on after it unless [`JsonLines::is_finished`] says otherwise.
    pub fn next_object(&mut self) -> Option<Result<JsonLine, Issue>> {
        loop {
            if self.finished {
                return None;
            }
            match self.read_line() {
                Ok(false) => {
                    self.finished = true;
                    return None;
                }
                Ok(true) => {}
                Err(issue) => {
                    self.finished = true;
                    return Some(Err(issue));
                }
            }
            let line = self.buffer.strip_suffix(b"\r").unwrap_or(&self.buffer);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let number = self.line;
            let at = || Location::file_row(&self.file, number);
            return Some(super::table::jsonl_object(line, at).map(|object| JsonLine {
                line: number,
                object,
            }));
        }
    }

    /// Read the next line into the buffer (without its line break); false at the end of the file.
    fn read_line(&mut self) -> Result<bool, Issue> {
        self.buffer.clear();
        self.line += 1;
        let mut any = false;
        loop {
            let available = match self.source.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Issue::error(
                        Location::whole_file(&self.file),
                        "unreadable",
                        format!("cannot read the file: {e}"),
                    ))
                }
            };
            if available.is_empty() {
                if !any {
                    return Ok(false);
                }
                break;
            }
            any = true;
            let (take, ends) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (available.len(), false),
            };
            // One byte more than the bound may be a CRLF's CR.
            if (self.buffer.len() + take) as u64 > self.max_line.saturating_add(1) {
                return Err(self.too_long());
            }
            self.buffer.extend_from_slice(&available[..take]);
            self.source.consume(take + ends as usize);
            if ends {
                break;
            }
        }
        let content = self.buffer.strip_suffix(b"\r").unwrap_or(&self.buffer);
        if content.len() as u64 > self.max_line {
            return Err(self.too_long());
        }
        Ok(true)
    }

    fn too_long(&self) -> Issue {
        Issue::error(
            Location::file_row(&self.file, self.line),
            "line_too_long",
            format!(
                "the line is longer than {} bytes (reading stopped there); a line may hold at most {} bytes ({:.0} MB)",
                self.max_line,
                self.max_line,
                self.max_line as f64 / 1_048_576.0
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn objects(bytes: &[u8], max_line: u64) -> Vec<Result<usize, String>> {
        let mut lines = JsonLines::new("t.jsonl", bytes, &ReadLimits::default(), max_line)
            .expect("the file opens");
        let mut out = Vec::new();
        while let Some(next) = lines.next_object() {
            out.push(next.map(|l| l.line).map_err(|i| i.code));
        }
        out
    }

    #[test]
    fn lines_are_numbered_as_an_editor_shows_them_and_blank_ones_skipped() {
        let got = objects(b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \n{\"b\":2}", 100);
        assert_eq!(
            got,
            vec![Ok(1), Ok(4)],
            "the BOM is dropped, blank lines skipped, the last line read without a line break"
        );
    }

    #[test]
    fn a_line_over_the_bound_ends_the_reading_at_its_line() {
        let got = objects(b"{\"a\":1}\n{\"b\":\"0123456789\"}\n{\"c\":3}\n", 10);
        assert_eq!(
            got,
            vec![Ok(1), Err("line_too_long".into())],
            "the long second line stops the reading: nothing after it is read"
        );
        assert_eq!(
            objects(b"{\"a\":1}\r\n", 7),
            vec![Ok(1)],
            "a line of exactly the bound is read (its line break not counted)"
        );
        assert_eq!(
            objects(b"{\"a\":1}", 6),
            vec![Err("line_too_long".into())],
            "one byte over the bound is refused"
        );
    }
}
