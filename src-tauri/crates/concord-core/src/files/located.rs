//! Where a problem in an input file is, and the problem itself: every reader and importer reports
//! with these, so a message names the file, sheet, row (as the user sees it: 1-based, header row
//! included) and column, whichever reader found it.

use crate::base::text::quoted;
use serde::Serialize;
use std::fmt;

/// Where a problem is: the file, and when known the sheet, row (as the user sees it: 1-based,
/// header row included) and column header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Location {
    pub file: String,
    pub sheet: Option<String>,
    pub row: Option<usize>,
    pub column: Option<String>,
}

impl Location {
    /// A file (or, for CSV and JSON Lines, its only table) as a whole.
    pub fn whole_file(file: &str) -> Location {
        Location {
            file: file.to_string(),
            sheet: None,
            row: None,
            column: None,
        }
    }

    /// A row (a line of a text file) of a file without sheets.
    pub fn file_row(file: &str, row: usize) -> Location {
        Location {
            row: Some(row),
            ..Location::whole_file(file)
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
        Ok(())
    }
}

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The import is rejected.
    Error,
    /// Reported; the import goes ahead.
    Warning,
}

/// One problem found in an input file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Issue {
    pub severity: Severity,
    /// A stable machine-readable code (`missing_column`, `not_json`, `bad_score`, …).
    pub code: String,
    /// Boxed so results carrying an issue stay small.
    pub at: Box<Location>,
    pub message: String,
}

impl Issue {
    pub fn error(at: Location, code: &str, message: String) -> Issue {
        Issue {
            severity: Severity::Error,
            code: code.to_string(),
            at: Box::new(at),
            message,
        }
    }
    pub fn warning(at: Location, code: &str, message: String) -> Issue {
        Issue {
            severity: Severity::Warning,
            code: code.to_string(),
            at: Box::new(at),
            message,
        }
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
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
    use super::{column_letters, Location};

    #[test]
    fn a_location_quotes_sheet_and_column_without_debug_escapes() {
        let at = Location {
            file: "ratings.xlsx".into(),
            sheet: Some("Sheet \"1\"".into()),
            row: Some(7),
            column: Some("score\u{202E}evil".into()),
        };
        assert_eq!(
            at.to_string(),
            "ratings.xlsx, sheet “Sheet \"1\"”, row 7, column “score<U+202E>evil”",
            "a header with quotes or a direction override is quoted as a person reads it"
        );
    }

    #[test]
    fn column_letters_follow_spreadsheet_convention() {
        assert_eq!(column_letters(0), "A", "first column");
        assert_eq!(column_letters(25), "Z", "last single letter");
        assert_eq!(column_letters(26), "AA", "first two-letter column");
        assert_eq!(column_letters(701), "ZZ", "last two-letter column");
    }
}
