//! Long-form score tables (one row per target × rater × score) read from CSV for the
//! `concord stats` commands, with errors that name the file, line and column.
//!
//! Column names are chosen by the caller. A UTF-8 byte-order mark and CRLF line ends are accepted;
//! cells are trimmed. An empty score is a missing rating. A (target, rater) pair that occurs twice
//! is refused (never averaged), as are empty target or rater ids and, when numbers are asked for,
//! scores that are not finite numbers.

use crate::files::bounds::ReadLimits;
use crate::files::csv_rows::CsvRow;
use crate::files::csv_rows::CsvRows;
use crate::files::Issue;
use serde::Serialize;
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use thiserror::Error;

/// Which CSV columns hold the target id, the rater id and the score.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ColumnNames {
    /// Target (item) id column.
    pub target: String,
    /// Rater id column.
    pub rater: String,
    /// Score column.
    pub score: String,
}

impl Default for ColumnNames {
    fn default() -> Self {
        Self {
            target: "target".into(),
            rater: "rater".into(),
            score: "score".into(),
        }
    }
}

/// Why a score table could not be read or converted.
#[derive(Debug, Error)]
pub enum ScoreTableError {
    /// The file could not be opened or read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// File name as given.
        file: String,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The CSV is malformed at a line (wrong number of fields, invalid UTF-8, …).
    #[error("{file}: line {line}: unparsable row: {message}")]
    Unparsable {
        /// File name.
        file: String,
        /// 1-based line.
        line: u64,
        /// What the CSV reader reported.
        message: String,
    },
    /// The file has no header row.
    #[error("{file}: the file is empty (a header row with the column names is required)")]
    NoHeader {
        /// File name.
        file: String,
    },
    /// A requested column is not in the header.
    #[error("{file}: line 1: no column named `{column}` (the header has: {available})")]
    UnknownColumn {
        /// File name.
        file: String,
        /// The missing column.
        column: String,
        /// The header's columns, comma-separated.
        available: String,
    },
    /// A target or rater id is empty.
    #[error("{file}: line {line}, column `{column}`: empty id")]
    EmptyId {
        /// File name.
        file: String,
        /// 1-based line.
        line: u64,
        /// Column name.
        column: String,
    },
    /// A (target, rater) pair occurs more than once.
    #[error("{file}: line {line}: target `{target}` is rated by `{rater}` again (first at line {first_line}); duplicate ratings are refused, not averaged")]
    Duplicate {
        /// File name.
        file: String,
        /// Line of the repeat.
        line: u64,
        /// Line of the first occurrence.
        first_line: u64,
        /// Target id.
        target: String,
        /// Rater id.
        rater: String,
    },
    /// A score is not a finite number.
    #[error("{file}: line {line}, column `{column}`: score `{value}` is not a finite number")]
    NotNumeric {
        /// File name.
        file: String,
        /// 1-based line.
        line: u64,
        /// Score column name.
        column: String,
        /// The offending text.
        value: String,
    },
    /// A label is outside the declared category set.
    #[error("{file}: line {line}, column `{column}`: label `{value}` is not one of the declared categories ({declared})")]
    UnknownCategory {
        /// File name.
        file: String,
        /// 1-based line.
        line: u64,
        /// Score column name.
        column: String,
        /// The offending label.
        value: String,
        /// The declared categories, comma-separated.
        declared: String,
    },
    /// The declared category list repeats a label.
    #[error("category `{0}` is declared twice")]
    DuplicateCategory(String),
    /// A rater asked for by name is not in the file.
    #[error("{file}: no rater `{rater}` in column `{column}` (raters: {available})")]
    UnknownRater {
        /// File name.
        file: String,
        /// Requested rater.
        rater: String,
        /// Rater column name.
        column: String,
        /// Raters present, comma-separated.
        available: String,
    },
}

/// One rating as read: the trimmed score text (empty = missing) and its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RawCell<'t> {
    /// Score text, trimmed.
    pub text: &'t str,
    /// 1-based line in the file.
    pub line: u64,
}

/// Where a cell's text lies in the table's text buffer, and its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
struct CellAt {
    start: usize,
    len: usize,
    line: u64,
}

/// A long-form table pivoted to targets × raters, scores still as text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LongTable {
    /// File name used in messages.
    pub file: String,
    /// Column names used.
    pub columns: ColumnNames,
    /// Target ids, in order of first appearance.
    pub targets: Vec<String>,
    /// Rater ids, in order of first appearance.
    pub raters: Vec<String>,
    /// Every score text, one after another (one buffer instead of one allocation per rating).
    texts: String,
    /// Row-major targets × raters; `None` where no row exists.
    cells: Vec<Option<CellAt>>,
}

/// Scores as numbers, targets × raters row-major, `None` = missing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NumericTable {
    /// Target ids.
    pub targets: Vec<String>,
    /// Rater ids.
    pub raters: Vec<String>,
    /// Row-major cells.
    pub cells: Vec<Option<f64>>,
}

/// Scores as category indices, targets × raters row-major.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoryTable {
    /// Target ids.
    pub targets: Vec<String>,
    /// Rater ids.
    pub raters: Vec<String>,
    /// Category labels in their order (declared, or observed sorted).
    pub categories: Vec<String>,
    /// Numeric value of each category when every label is a number.
    pub values: Option<Vec<f64>>,
    /// Row-major indices into `categories`.
    pub cells: Vec<Option<usize>>,
}

/// Paired scores of two raters over the targets both scored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedScores {
    /// Targets with both scores.
    pub targets: Vec<String>,
    /// Scores of rater a.
    pub a: Vec<f64>,
    /// Scores of rater b.
    pub b: Vec<f64>,
}

/// A score CSV read row by row by the importers' streaming CSV reader
/// ([`crate::files::csv_rows`]), so byte-order marks, CRLF line ends and quoted line breaks give
/// the same line numbers here as in an import, and memory holds only what the caller keeps.
pub(crate) struct ScoreRows<'a> {
    rows: CsvRows<'a>,
}

impl<'a> ScoreRows<'a> {
    pub(crate) fn open(reader: impl Read + 'a, file: &str) -> Result<Self, ScoreTableError> {
        let rows = CsvRows::new(file, reader, &ReadLimits::from_env())
            .map_err(|issues| unparsable(file, issues))?;
        Ok(ScoreRows { rows })
    }

    /// The position of the column named exactly `column`.
    pub(crate) fn find(&self, column: &str) -> Result<usize, ScoreTableError> {
        let names = self.rows.headers();
        names
            .iter()
            .position(|n| n == column)
            .ok_or_else(|| ScoreTableError::UnknownColumn {
                file: self.rows.file().to_string(),
                column: column.to_string(),
                available: names.join(", "),
            })
    }

    /// Call `visit` with each non-blank row's line and its trimmed cells, every row exactly as
    /// long as the header.
    pub(crate) fn each(
        mut self,
        mut visit: impl FnMut(u64, &CsvRow<'_>) -> Result<(), ScoreTableError>,
    ) -> Result<(), ScoreTableError> {
        let width = self.rows.headers().len();
        let file = self.rows.file().to_string();
        while let Some(row) = self.rows.next_row() {
            let row = row.map_err(|issues| unparsable(&file, issues))?;
            let line = row.line as u64;
            if row.len() != width {
                return Err(ScoreTableError::Unparsable {
                    file,
                    line,
                    message: format!("{} fields where the header has {width}", row.len()),
                });
            }
            visit(line, &row)?;
        }
        Ok(())
    }
}

/// The first problem the CSV reader found, as a score-table error.
fn unparsable(file: &str, issues: Vec<Issue>) -> ScoreTableError {
    match issues.into_iter().next() {
        Some(issue) if issue.code != "empty_file" => ScoreTableError::Unparsable {
            file: file.to_string(),
            line: issue.at.row.unwrap_or(0) as u64,
            message: issue.message,
        },
        _ => ScoreTableError::NoHeader {
            file: file.to_string(),
        },
    }
}

/// Read a long-form CSV file.
pub fn read_long_csv(path: &Path, columns: &ColumnNames) -> Result<LongTable, ScoreTableError> {
    let file = path.display().to_string();
    let handle = File::open(path).map_err(|source| ScoreTableError::Io {
        file: file.clone(),
        source,
    })?;
    parse_long_csv(handle, &file, columns)
}

/// Parse a long-form CSV from any reader; `file` names it in messages. The rows are read by the
/// importers' CSV reader, so byte-order marks, CRLF line ends and quoted line breaks give the
/// same line numbers here as in an import.
pub fn parse_long_csv<R: Read>(
    reader: R,
    file: &str,
    columns: &ColumnNames,
) -> Result<LongTable, ScoreTableError> {
    let table = ScoreRows::open(reader, file)?;
    let (ti, ri, si) = (
        table.find(&columns.target)?,
        table.find(&columns.rater)?,
        table.find(&columns.score)?,
    );

    let mut targets = Interned::default();
    let mut raters = Interned::default();
    let mut texts = String::new();
    // (target, rater, cell) in file order; placed into the grid once its size is known.
    let mut entries: Vec<(u32, u32, CellAt)> = Vec::new();
    table.each(|line, row| {
        let empty = |column: &str| ScoreTableError::EmptyId {
            file: file.to_string(),
            line,
            column: column.to_string(),
        };
        let target = row.trimmed(ti);
        if target.is_empty() {
            return Err(empty(&columns.target));
        }
        let rater = row.trimmed(ri);
        if rater.is_empty() {
            return Err(empty(&columns.rater));
        }
        let t = targets.index(&target);
        let r = raters.index(&rater);
        let score = row.trimmed(si);
        entries.push((
            t,
            r,
            CellAt {
                start: texts.len(),
                len: score.len(),
                line,
            },
        ));
        texts.push_str(&score);
        Ok(())
    })?;
    let (targets, raters) = (targets.into_names(), raters.into_names());
    let k = raters.len();
    let mut cells: Vec<Option<CellAt>> = vec![None; targets.len() * k];
    for (t, r, cell) in entries {
        let (t, r) = (t as usize, r as usize);
        let slot = &mut cells[t * k + r];
        if let Some(first) = slot {
            return Err(ScoreTableError::Duplicate {
                file: file.to_string(),
                line: cell.line,
                first_line: first.line,
                target: targets[t].clone(),
                rater: raters[r].clone(),
            });
        }
        *slot = Some(cell);
    }
    Ok(LongTable {
        file: file.to_string(),
        columns: columns.clone(),
        targets,
        raters,
        texts,
        cells,
    })
}

/// Ids in order of first appearance, each stored once, found by a seeded hash.
#[derive(Default)]
struct Interned {
    index: foldhash::HashMap<Box<str>, u32>,
}

impl Interned {
    /// The index of `id`, appending it when new.
    fn index(&mut self, id: &str) -> u32 {
        if let Some(&i) = self.index.get(id) {
            return i;
        }
        let i = self.index.len() as u32;
        self.index.insert(id.into(), i);
        i
    }

    /// The ids in order of first appearance.
    fn into_names(self) -> Vec<String> {
        let mut names = vec![String::new(); self.index.len()];
        for (name, i) in self.index {
            names[i as usize] = name.into_string();
        }
        names
    }
}

pub(crate) fn parse_score(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|x| x.is_finite())
}

impl LongTable {
    /// Number of targets.
    pub fn n_targets(&self) -> usize {
        self.targets.len()
    }

    /// Number of raters.
    pub fn n_raters(&self) -> usize {
        self.raters.len()
    }

    /// The cell of a target and rater, `None` when no row exists.
    pub fn cell(&self, target: usize, rater: usize) -> Option<RawCell<'_>> {
        self.cells[target * self.raters.len() + rater].map(|c| self.raw(c))
    }

    fn raw(&self, at: CellAt) -> RawCell<'_> {
        RawCell {
            text: &self.texts[at.start..at.start + at.len],
            line: at.line,
        }
    }

    /// Every cell, row-major; `None` where no row exists.
    fn all_cells(&self) -> impl Iterator<Item = Option<RawCell<'_>>> {
        self.cells.iter().map(|c| c.map(|c| self.raw(c)))
    }

    fn number(&self, cell: RawCell<'_>) -> Result<Option<f64>, ScoreTableError> {
        if cell.text.is_empty() {
            return Ok(None);
        }
        parse_score(cell.text)
            .map(Some)
            .ok_or_else(|| ScoreTableError::NotNumeric {
                file: self.file.clone(),
                line: cell.line,
                column: self.columns.score.clone(),
                value: cell.text.to_string(),
            })
    }

    /// The scores as numbers, targets × raters row-major; empty scores and absent rows are
    /// missing.
    pub fn numeric_cells(&self) -> Result<Vec<Option<f64>>, ScoreTableError> {
        self.all_cells()
            .map(|cell| match cell {
                None => Ok(None),
                Some(c) => self.number(c),
            })
            .collect()
    }

    /// Scores as numbers with the target and rater ids; empty scores and absent rows are missing.
    pub fn numeric(&self) -> Result<NumericTable, ScoreTableError> {
        Ok(NumericTable {
            targets: self.targets.clone(),
            raters: self.raters.clone(),
            cells: self.numeric_cells()?,
        })
    }

    /// Scores as categories. With `declared`, that list in that order (labels outside it are
    /// errors); otherwise the observed labels, sorted numerically when all are numbers and
    /// lexicographically otherwise.
    pub fn categorical(
        &self,
        declared: Option<&[String]>,
    ) -> Result<CategoryTable, ScoreTableError> {
        let categories: Vec<String> = match declared {
            Some(list) => {
                let list: Vec<String> = list.iter().map(|s| s.trim().to_string()).collect();
                for (i, c) in list.iter().enumerate() {
                    if list[..i].contains(c) {
                        return Err(ScoreTableError::DuplicateCategory(c.clone()));
                    }
                }
                list
            }
            None => {
                let mut seen: Vec<String> = Vec::new();
                for c in self.all_cells().flatten() {
                    if !c.text.is_empty() && !seen.iter().any(|s| s == c.text) {
                        seen.push(c.text.to_string());
                    }
                }
                if seen.iter().all(|s| parse_score(s).is_some()) {
                    seen.sort_by(|a, b| {
                        parse_score(a)
                            .unwrap_or(0.0)
                            .total_cmp(&parse_score(b).unwrap_or(0.0))
                    });
                } else {
                    seen.sort();
                }
                seen
            }
        };
        let values: Option<Vec<f64>> = categories.iter().map(|c| parse_score(c)).collect();
        // With numeric categories, "1" and "1.0" are the same label.
        let lookup = |text: &str| -> Option<usize> {
            categories.iter().position(|c| c == text).or_else(|| {
                let v = parse_score(text)?;
                values.as_ref()?.iter().position(|&x| x == v)
            })
        };
        let mut cells = Vec::with_capacity(self.cells.len());
        for cell in self.all_cells() {
            cells.push(match cell {
                Some(c) if !c.text.is_empty() => {
                    Some(
                        lookup(c.text).ok_or_else(|| ScoreTableError::UnknownCategory {
                            file: self.file.clone(),
                            line: c.line,
                            column: self.columns.score.clone(),
                            value: c.text.to_string(),
                            declared: categories.join(","),
                        })?,
                    )
                }
                _ => None,
            });
        }
        Ok(CategoryTable {
            targets: self.targets.clone(),
            raters: self.raters.clone(),
            categories,
            values,
            cells,
        })
    }

    /// Scores of raters `a` and `b` over the targets both scored (in target order).
    pub fn paired(&self, a: &str, b: &str) -> Result<PairedScores, ScoreTableError> {
        let index = |name: &str| {
            self.raters.iter().position(|r| r == name).ok_or_else(|| {
                ScoreTableError::UnknownRater {
                    file: self.file.clone(),
                    rater: name.to_string(),
                    column: self.columns.rater.clone(),
                    available: self.raters.join(", "),
                }
            })
        };
        let (ia, ib) = (index(a)?, index(b)?);
        let mut out = PairedScores {
            targets: Vec::new(),
            a: Vec::new(),
            b: Vec::new(),
        };
        for (t, name) in self.targets.iter().enumerate() {
            let sa = match self.cell(t, ia) {
                Some(c) => self.number(c)?,
                None => None,
            };
            let sb = match self.cell(t, ib) {
                Some(c) => self.number(c)?,
                None => None,
            };
            if let (Some(x), Some(y)) = (sa, sb) {
                out.targets.push(name.clone());
                out.a.push(x);
                out.b.push(y);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LongTable, ScoreTableError> {
        parse_long_csv(text.as_bytes(), "scores.csv", &ColumnNames::default())
    }

    #[test]
    fn bom_crlf_and_missing_scores() {
        let t = parse("\u{feff}target,rater,score\r\nt1,r1,3\r\nt1,r2,\r\nt2,r1,4\r\n").unwrap();
        assert_eq!(
            t.targets,
            vec!["t1", "t2"],
            "the BOM must not stick to the first column name"
        );
        let n = t.numeric().unwrap();
        assert_eq!(
            n.cells,
            vec![Some(3.0), None, Some(4.0), None],
            "an empty score and an absent row are both missing"
        );
    }

    #[test]
    fn crlf_and_quoted_line_breaks_give_the_lines_an_editor_shows() {
        // Lines: 1 header, 2–3 a rating whose target id spans a quoted CRLF, 4 another, 5 the
        // repeat of line 4.
        let e =
            parse("target,rater,score\r\n\"t\r\n1\",r1,3\r\nt2,r1,4\r\nt2,r1,5\r\n").unwrap_err();
        assert!(
            matches!(
                e,
                ScoreTableError::Duplicate {
                    line: 5,
                    first_line: 4,
                    ..
                }
            ),
            "with CRLF line ends and a quoted line break the repeat is on line 5, first on 4: {e}"
        );
        let e = parse("target,rater,score\r\nt1,r1,3\r\nt1\r\n").unwrap_err();
        assert!(
            matches!(e, ScoreTableError::Unparsable { line: 3, .. }),
            "a short row after CRLF lines is located on its own line: {e}"
        );
    }

    #[test]
    fn prediction_tables_count_crlf_lines_like_an_editor() {
        // Lines: 1 header, 2–3 a row whose group spans a quoted CRLF, 4 a judge score that is
        // not a number.
        let text = "group,judge,expert\r\n\"g\r\n1\",3,4\r\ng1,high,\r\n";
        let e =
            parse_prediction_csv(text.as_bytes(), "p.csv", "group", "judge", "expert").unwrap_err();
        assert!(
            matches!(e, ScoreTableError::NotNumeric { line: 4, .. }),
            "the bad judge score is on line 4 of the file: {e}"
        );
    }

    #[test]
    fn duplicates_are_refused_with_both_lines() {
        let e = parse("target,rater,score\nt1,r1,3\nt1,r1,4\n").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("line 3") && msg.contains("line 2") && msg.contains("scores.csv"),
            "the message names the file and both lines: {msg}"
        );
    }

    #[test]
    fn non_numeric_score_names_line_and_column() {
        let t = parse("target,rater,score\nt1,r1,3\nt2,r1,high\n").unwrap();
        let msg = t.numeric().unwrap_err().to_string();
        assert!(
            msg.contains("line 3") && msg.contains("`score`") && msg.contains("high"),
            "message must locate the bad score: {msg}"
        );
    }

    #[test]
    fn unknown_column_and_ragged_rows() {
        let cols = ColumnNames {
            score: "value".into(),
            ..ColumnNames::default()
        };
        let e = parse_long_csv("target,rater,score\n".as_bytes(), "s.csv", &cols).unwrap_err();
        assert!(
            e.to_string().contains("no column named `value`"),
            "unknown columns are named: {e}"
        );
        let e = parse("target,rater,score\nt1,r1\n").unwrap_err();
        assert!(
            matches!(e, ScoreTableError::Unparsable { line: 2, .. }),
            "a short row is unparsable at its line: {e}"
        );
    }

    #[test]
    fn categories_declared_and_observed() {
        let t = parse("target,rater,score\na,x,1\na,y,0\nb,x,1\nb,y,1\n").unwrap();
        let c = t.categorical(None).unwrap();
        assert_eq!(
            c.categories,
            vec!["0", "1"],
            "observed numeric labels sort numerically"
        );
        let declared = vec!["0".to_string(), "1".to_string(), "2".to_string()];
        assert_eq!(
            t.categorical(Some(&declared)).unwrap().categories.len(),
            3,
            "declared categories are kept even when unused"
        );
        let e = t.categorical(Some(&["0".to_string()])).unwrap_err();
        assert!(
            e.to_string().contains("line 2"),
            "a label outside the declared set names its line: {e}"
        );
    }
}

/// Judge scores with expert ratings on a subset, per group (model), for PPI means: a CSV with a
/// group, a judge-score and an expert-score column (expert empty where unrated).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PredictionTable {
    /// File name as given.
    pub file: String,
    /// One entry per group, in order of first appearance.
    pub groups: Vec<PredictionGroup>,
}

/// One group of a [`PredictionTable`].
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct PredictionGroup {
    /// Group name.
    pub name: String,
    /// Expert ratings of the labelled rows.
    pub expert: Vec<f64>,
    /// Judge scores of the same rows.
    pub judge_labeled: Vec<f64>,
    /// Judge scores of rows without an expert rating.
    pub judge_unlabeled: Vec<f64>,
}

/// Read a `group,judge,expert` CSV (column names chosen by the caller, in that order).
pub fn read_prediction_csv(
    path: &Path,
    group: &str,
    judge: &str,
    expert: &str,
) -> Result<PredictionTable, ScoreTableError> {
    let file = path.display().to_string();
    let handle = File::open(path).map_err(|source| ScoreTableError::Io {
        file: file.clone(),
        source,
    })?;
    parse_prediction_csv(handle, &file, group, judge, expert)
}

/// Parse a `group,judge,expert` CSV from any reader; `file` names it in messages.
pub fn parse_prediction_csv<R: Read>(
    reader: R,
    file: &str,
    group: &str,
    judge: &str,
    expert: &str,
) -> Result<PredictionTable, ScoreTableError> {
    let table = ScoreRows::open(reader, file)?;
    let (gi, ji, ei) = (table.find(group)?, table.find(judge)?, table.find(expert)?);
    let mut groups: Vec<PredictionGroup> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    table.each(|line, row| {
        let cell = |i: usize| row.trimmed(i);
        let name = cell(gi);
        if name.is_empty() {
            return Err(ScoreTableError::EmptyId {
                file: file.to_string(),
                line,
                column: group.to_string(),
            });
        }
        let number = |i: usize, column: &str| {
            let text = cell(i);
            parse_score(&text).ok_or_else(|| ScoreTableError::NotNumeric {
                file: file.to_string(),
                line,
                column: column.to_string(),
                value: text.to_string(),
            })
        };
        let j = number(ji, judge)?;
        let e = match cell(ei).as_ref() {
            "" => None,
            _ => Some(number(ei, expert)?),
        };
        let g = match index.get(name.as_ref()) {
            Some(&g) => g,
            None => {
                groups.push(PredictionGroup {
                    name: name.to_string(),
                    ..PredictionGroup::default()
                });
                index.insert(name.to_string(), groups.len() - 1);
                groups.len() - 1
            }
        };
        let entry = &mut groups[g];
        match e {
            Some(e) => {
                entry.expert.push(e);
                entry.judge_labeled.push(j);
            }
            None => entry.judge_unlabeled.push(j),
        }
        Ok(())
    })?;
    Ok(PredictionTable {
        file: file.to_string(),
        groups,
    })
}
