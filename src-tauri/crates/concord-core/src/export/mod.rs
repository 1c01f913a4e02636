//! Exports of a study's ratings for analysis elsewhere, and the Excel rating sheet an expert can
//! fill in instead of using the app: a long CSV (one row per rating), a wide CSV (one row per
//! response × rater, one column per criterion), an XLSX workbook (one sheet per expert, the
//! codebook, the agreement report) and the fill-in sheet with its import ([`sheet`]).
//!
//! Every text cell leaving Concord goes through [`neutralise`]: a text beginning with `=`, `+`,
//! `-`, `@`, a tab or a carriage return gets a leading single quote, so no spreadsheet runs a
//! dataset's text as a formula (CSV injection); XLSX cells are written as strings, never formulas.
//! A text that is a plain negative number (`-3`, `-0.5`) is left alone, and numeric values are
//! written as numbers. Timestamps are ISO-8601 UTC.

pub mod csv;
pub mod sheet;
pub mod workbook;

pub use self::csv::{write_long_csv, write_wide_csv, CsvOptions, CsvSummary};
pub use sheet::{
    import_rating_sheet, write_rating_sheet, CellError, SheetImportReport, SheetSummary,
};
pub use workbook::{write_workbook, WorkbookOptions, WorkbookSummary};

use crate::clock::Millis;
use crate::store::StoreError;
use rusqlite::params;
use std::borrow::Cow;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path}: cannot write: {detail}")]
    Io { path: String, detail: String },
    #[error("could not write the workbook: {0}")]
    Xlsx(#[from] rust_xlsxwriter::XlsxError),
    #[error("could not write CSV: {0}")]
    Csv(#[from] ::csv::Error),
    #[error("no rater named {0:?} in this study")]
    UnknownRater(String),
    #[error("{0:?} is an LLM judge; rating sheets are for experts")]
    NotAnExpert(String),
    #[error("{0:?} has no assigned items; run the assignment first")]
    NothingAssigned(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for ExportError {
    fn from(e: rusqlite::Error) -> Self {
        ExportError::Store(StoreError::Sqlite(e))
    }
}

impl From<std::io::Error> for ExportError {
    fn from(e: std::io::Error) -> Self {
        ExportError::Io {
            path: String::new(),
            detail: e.to_string(),
        }
    }
}

/// The characters that make a spreadsheet read a cell as a formula (or hide its start).
const DANGEROUS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// Make `text` safe to open in a spreadsheet: a leading `=`, `+`, `-`, `@`, tab or CR gets a
/// single-quote prefix; plain negative numbers stay as they are.
pub fn neutralise(text: &str) -> Cow<'_, str> {
    match text.chars().next() {
        Some(c) if DANGEROUS.contains(&c) => {
            if c == '-' && is_plain_number(text) {
                Cow::Borrowed(text)
            } else {
                Cow::Owned(format!("'{text}"))
            }
        }
        _ => Cow::Borrowed(text),
    }
}

/// Undo [`neutralise`] on a text read back from a sheet Concord wrote.
pub fn unneutralise(text: &str) -> &str {
    match text.strip_prefix('\'') {
        Some(rest) if rest.starts_with(DANGEROUS) => rest,
        _ => text,
    }
}

fn is_plain_number(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.chars().filter(|&c| c == '.').count() <= 1
        && digits.chars().any(|c| c.is_ascii_digit())
}

/// Milliseconds since the epoch as ISO-8601 UTC (`2023-11-14T22:13:20.000Z`).
pub fn iso_utc(ms: Millis) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A criterion as exports name it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CriterionColumn {
    pub id: i64,
    pub rubric: String,
    pub key: String,
    /// Header text: the key, or `rubric:key` when several rubrics use the key.
    pub header: String,
}

/// Every criterion of the study, rubric by rubric in rubric order.
pub(crate) fn criterion_columns(
    conn: &rusqlite::Connection,
) -> Result<Vec<CriterionColumn>, ExportError> {
    let mut stmt = conn.prepare(
        "SELECT c.id, r.key, c.key FROM criterion c JOIN rubric r ON r.id = c.rubric_id
         ORDER BY r.id, c.position",
    )?;
    let rows: Vec<(i64, String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    let dup = |key: &str| rows.iter().filter(|r| r.2 == key).count() > 1;
    Ok(rows
        .iter()
        .map(|(id, rubric, key)| CriterionColumn {
            id: *id,
            rubric: rubric.clone(),
            key: key.clone(),
            header: if dup(key) {
                format!("{rubric}:{key}")
            } else {
                key.clone()
            },
        })
        .collect())
}

/// One rating as exports read it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RatingRow {
    pub conversation: String,
    pub response: String,
    pub response_id: i64,
    pub source: String,
    pub rater: String,
    pub rater_kind: String,
    pub rubric: String,
    pub criterion_id: i64,
    pub criterion: String,
    pub occasion: &'static str,
    pub value: Option<i64>,
    pub raw_value: Option<String>,
    pub rationale: Option<String>,
    pub created_at: Millis,
    pub updated_at: Millis,
}

/// The select shared by every rating export, ordered conversation, source, rater, occasion,
/// criterion. `?1` optionally restricts to one rater's name.
const RATINGS_SQL: &str = "
    SELECT v.external_id, COALESCE(p.external_id, CAST(p.id AS TEXT)), p.id, s.key, r.name, r.kind,
           rb.key, c.id, c.key, g.occasion, g.value, g.raw_value, g.rationale, g.created_at,
           g.updated_at
    FROM (SELECT rater_id, response_id, criterion_id, value, raw_value, rationale, created_at,
                 updated_at, 'first' AS occasion FROM rating
          UNION ALL
          SELECT rater_id, response_id, criterion_id, value, NULL, rationale, created_at,
                 updated_at, 'retest' FROM retest_rating) g
    JOIN rater r ON r.id = g.rater_id
    JOIN response p ON p.id = g.response_id
    JOIN conversation v ON v.id = p.conversation_id
    JOIN source s ON s.id = p.source_id
    JOIN criterion c ON c.id = g.criterion_id
    JOIN rubric rb ON rb.id = c.rubric_id
    WHERE ?1 IS NULL OR r.name = ?1
    ORDER BY v.external_id, s.key, r.kind, r.name, g.occasion, rb.id, c.position";

/// Visit every rating (optionally of one rater) in export order.
pub(crate) fn for_each_rating(
    conn: &rusqlite::Connection,
    rater: Option<&str>,
    mut f: impl FnMut(RatingRow) -> Result<(), ExportError>,
) -> Result<usize, ExportError> {
    let mut stmt = conn.prepare(RATINGS_SQL)?;
    let mut rows = stmt.query(params![rater])?;
    let mut n = 0;
    while let Some(r) = rows.next()? {
        let occasion: String = r.get(9)?;
        f(RatingRow {
            conversation: r.get(0)?,
            response: r.get(1)?,
            response_id: r.get(2)?,
            source: r.get(3)?,
            rater: r.get(4)?,
            rater_kind: r.get(5)?,
            rubric: r.get(6)?,
            criterion_id: r.get(7)?,
            criterion: r.get(8)?,
            occasion: if occasion == "retest" {
                "retest"
            } else {
                "first"
            },
            value: r.get(10)?,
            raw_value: r.get(11)?,
            rationale: r.get(12)?,
            created_at: r.get(13)?,
            updated_at: r.get(14)?,
        })?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neutralise_prefixes_formula_starts_but_not_negative_numbers() {
        assert_eq!(neutralise("=1+1"), "'=1+1", "a formula start is defused");
        assert_eq!(neutralise("+cmd"), "'+cmd", "a plus start is defused");
        assert_eq!(
            neutralise("@SUM(A1)"),
            "'@SUM(A1)",
            "an at start is defused"
        );
        assert_eq!(neutralise("\tx"), "'\tx", "a leading tab is defused");
        assert_eq!(neutralise("-2+3"), "'-2+3", "an expression is not a number");
        assert_eq!(neutralise("-3"), "-3", "a negative number stays numeric");
        assert_eq!(
            neutralise("-0.25"),
            "-0.25",
            "a negative decimal stays numeric"
        );
        assert_eq!(neutralise("plain"), "plain", "ordinary text is untouched");
        assert_eq!(
            unneutralise("'=1+1"),
            "=1+1",
            "the prefix is removed on reading back"
        );
        assert_eq!(unneutralise("'quoted"), "'quoted", "other apostrophes stay");
    }

    #[test]
    fn iso_utc_formats_known_instants() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00.000Z", "the epoch");
        assert_eq!(
            iso_utc(1_700_000_000_123),
            "2023-11-14T22:13:20.123Z",
            "a known instant"
        );
        assert_eq!(
            iso_utc(951_782_400_000),
            "2000-02-29T00:00:00.000Z",
            "a leap day"
        );
    }
}
