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
struct ScoreRows<'a> {
    rows: CsvRows<'a>,
}

impl<'a> ScoreRows<'a> {
    fn open(reader: impl Read + 'a, file: &str) -> Result<Self, ScoreTableError> {
        let rows = CsvRows::new(file, reader, &ReadLimits::from_env())
            .map_err(|issues| unparsable(file, issues))?;
        Ok(ScoreRows { rows })
    }

    /// The position of the column named exactly `column`.
    fn find(&self, column: &str) -> Result<usize, ScoreTableError> {
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
    fn each(
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

fn parse_score(text: &str) -> Option<f64> {
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

// ---------------------------------------------------------------------------------------------
// The CSV files of the reviewer's statistics (`concord stats prevalence|ppi-power|gstudy|
// consensus`), read by the same streaming reader, so every refusal names the file, the line and
// the column:
// - a binary calibration table `item,judge,expert`: 0/1 labels, `expert` empty where no expert
//   rated;
// - a pilot `judge,expert`: both numbers on every row;
// - facet scores `target,rater[,occasion],score`: an empty score is a missing cell, a cell given
//   twice is refused;
// - labels `item,rater,label` and gold labels `item,label`: text labels, an empty label is no
//   rating, a rater labelling an item twice (or an item with two gold labels) is refused.
// ---------------------------------------------------------------------------------------------

fn open_file(path: &Path) -> Result<(File, String), ScoreTableError> {
    let file = path.display().to_string();
    let handle = File::open(path).map_err(|source| ScoreTableError::Io {
        file: file.clone(),
        source,
    })?;
    Ok((handle, file))
}

/// Read `path`'s rows and hand each one's line and the trimmed cells of `columns` (in that order)
/// to `visit`.
fn rows(
    path: &Path,
    columns: &[&str],
    mut visit: impl FnMut(&str, u64, &[String]) -> Result<(), ScoreTableError>,
) -> Result<String, ScoreTableError> {
    let (handle, file) = open_file(path)?;
    let table = ScoreRows::open(handle, &file)?;
    let at: Vec<usize> = columns
        .iter()
        .map(|c| table.find(c))
        .collect::<Result<_, _>>()?;
    let mut cells = vec![String::new(); at.len()];
    table.each(|line, row| {
        for (cell, &i) in cells.iter_mut().zip(&at) {
            cell.clear();
            cell.push_str(&row.trimmed(i));
        }
        visit(&file, line, &cells)
    })?;
    Ok(file)
}

fn empty_id(file: &str, line: u64, column: &str) -> ScoreTableError {
    ScoreTableError::EmptyId {
        file: file.to_string(),
        line,
        column: column.to_string(),
    }
}

fn number(file: &str, line: u64, column: &str, text: &str) -> Result<f64, ScoreTableError> {
    parse_score(text).ok_or_else(|| ScoreTableError::NotNumeric {
        file: file.to_string(),
        line,
        column: column.to_string(),
        value: text.to_string(),
    })
}

fn binary(file: &str, line: u64, column: &str, text: &str) -> Result<bool, ScoreTableError> {
    match parse_score(text) {
        Some(0.0) => Ok(false),
        Some(1.0) => Ok(true),
        _ => Err(ScoreTableError::UnknownCategory {
            file: file.to_string(),
            line,
            column: column.to_string(),
            value: text.to_string(),
            declared: "0, 1".to_string(),
        }),
    }
}

/// Ids in order of first appearance.
#[derive(Default)]
struct FirstSeen {
    names: Vec<String>,
    index: HashMap<String, u32>,
}

impl FirstSeen {
    fn of(&mut self, id: &str) -> u32 {
        if let Some(&i) = self.index.get(id) {
            return i;
        }
        let i = self.names.len() as u32;
        self.index.insert(id.to_string(), i);
        self.names.push(id.to_string());
        i
    }
}

/// A judge's 0/1 labels on every item against the experts' on the rated ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct BinaryCalibration {
    /// Items (rows).
    pub n_items: u64,
    /// Items the judge labelled 1.
    pub judged_positive: u64,
    /// Expert 1, judge 1.
    pub true_positive: u64,
    /// Expert 1, judge 0.
    pub false_negative: u64,
    /// Expert 0, judge 0.
    pub true_negative: u64,
    /// Expert 0, judge 1.
    pub false_positive: u64,
}

/// Read an `item,judge,expert` table (column names chosen by the caller, in that order): one row
/// per item, 0/1 labels, the expert's empty where unrated; an item given twice is refused.
pub fn read_binary_calibration(
    path: &Path,
    columns: [&str; 3],
) -> Result<(String, BinaryCalibration), ScoreTableError> {
    let mut out = BinaryCalibration::default();
    let mut first_line: HashMap<String, u64> = HashMap::new();
    let file = rows(path, &columns, |file, line, cells| {
        if cells[0].is_empty() {
            return Err(empty_id(file, line, columns[0]));
        }
        if let Some(&first) = first_line.get(&cells[0]) {
            return Err(ScoreTableError::Unparsable {
                file: file.to_string(),
                line,
                message: format!(
                    "item `{}` appears again (first at line {first}); one row per item",
                    cells[0]
                ),
            });
        }
        first_line.insert(cells[0].clone(), line);
        let judge = binary(file, line, columns[1], &cells[1])?;
        out.n_items += 1;
        out.judged_positive += u64::from(judge);
        if !cells[2].is_empty() {
            match (binary(file, line, columns[2], &cells[2])?, judge) {
                (true, true) => out.true_positive += 1,
                (true, false) => out.false_negative += 1,
                (false, false) => out.true_negative += 1,
                (false, true) => out.false_positive += 1,
            }
        }
        Ok(())
    })?;
    Ok((file, out))
}

/// A pilot's paired scores.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct PilotPairs {
    /// File name as given.
    pub file: String,
    /// Judge scores.
    pub judge: Vec<f64>,
    /// Expert ratings of the same rows.
    pub expert: Vec<f64>,
}

/// Read a `judge,expert` pilot (column names chosen by the caller): both numbers on every row.
pub fn read_pilot_pairs(path: &Path, columns: [&str; 2]) -> Result<PilotPairs, ScoreTableError> {
    let mut out = PilotPairs::default();
    out.file = rows(path, &columns, |file, line, cells| {
        out.judge.push(number(file, line, columns[0], &cells[0])?);
        out.expert.push(number(file, line, columns[1], &cells[1])?);
        Ok(())
    })?;
    Ok(out)
}

/// Scores in a crossed design, as indices into the id lists.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct FacetScores {
    /// File name as given.
    pub file: String,
    /// Target ids in order of first appearance.
    pub targets: Vec<String>,
    /// Rater ids.
    pub raters: Vec<String>,
    /// Occasion ids (empty when the design has no occasion facet).
    pub occasions: Vec<String>,
    /// (target, rater, occasion, score); occasion 0 without that facet.
    pub scores: Vec<(u32, u32, u32, f64)>,
}

/// Read `target,rater[,occasion],score` (column names chosen by the caller; `occasion` `None`
/// for a targets × raters design). An empty score is a missing cell; a cell given twice is
/// refused with both lines.
pub fn read_facet_scores(
    path: &Path,
    target: &str,
    rater: &str,
    occasion: Option<&str>,
    score: &str,
) -> Result<FacetScores, ScoreTableError> {
    let mut columns = vec![target, rater, score];
    columns.extend(occasion);
    let (mut t, mut r, mut o) = (
        FirstSeen::default(),
        FirstSeen::default(),
        FirstSeen::default(),
    );
    let mut seen: HashMap<(u32, u32, u32), u64> = HashMap::new();
    let mut scores = Vec::new();
    let file = rows(path, &columns, |file, line, cells| {
        for (i, column) in [(0, target), (1, rater)] {
            if cells[i].is_empty() {
                return Err(empty_id(file, line, column));
            }
        }
        let occasion_id = match occasion {
            Some(column) if cells[3].is_empty() => return Err(empty_id(file, line, column)),
            Some(_) => o.of(&cells[3]),
            None => 0,
        };
        let key = (t.of(&cells[0]), r.of(&cells[1]), occasion_id);
        if cells[2].is_empty() {
            return Ok(());
        }
        let value = number(file, line, score, &cells[2])?;
        if let Some(&first_line) = seen.get(&key) {
            return Err(ScoreTableError::Duplicate {
                file: file.to_string(),
                line,
                first_line,
                target: cells[0].clone(),
                rater: match occasion {
                    Some(_) => format!("{} on occasion `{}`", cells[1], cells[3]),
                    None => cells[1].clone(),
                },
            });
        }
        seen.insert(key, line);
        scores.push((key.0, key.1, key.2, value));
        Ok(())
    })?;
    Ok(FacetScores {
        file,
        targets: t.names,
        raters: r.names,
        occasions: o.names,
        scores,
    })
}

/// Labels given by raters to items, as indices; labels as text.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct LabelRows {
    /// File name as given.
    pub file: String,
    /// Item ids in order of first appearance.
    pub items: Vec<String>,
    /// Rater ids in order of first appearance.
    pub raters: Vec<String>,
    /// (item, rater, label text).
    pub ratings: Vec<(u32, u32, String)>,
}

/// Read `item,rater,label` (column names chosen by the caller). An empty label is no rating; a
/// rater labelling an item twice is refused with both lines.
pub fn read_label_rows(path: &Path, columns: [&str; 3]) -> Result<LabelRows, ScoreTableError> {
    let (mut items, mut raters) = (FirstSeen::default(), FirstSeen::default());
    let mut seen: HashMap<(u32, u32), u64> = HashMap::new();
    let mut ratings = Vec::new();
    let file = rows(path, &columns, |file, line, cells| {
        for i in 0..2 {
            if cells[i].is_empty() {
                return Err(empty_id(file, line, columns[i]));
            }
        }
        let key = (items.of(&cells[0]), raters.of(&cells[1]));
        if cells[2].is_empty() {
            return Ok(());
        }
        if let Some(&first_line) = seen.get(&key) {
            return Err(ScoreTableError::Duplicate {
                file: file.to_string(),
                line,
                first_line,
                target: cells[0].clone(),
                rater: cells[1].clone(),
            });
        }
        seen.insert(key, line);
        ratings.push((key.0, key.1, cells[2].clone()));
        Ok(())
    })?;
    Ok(LabelRows {
        file,
        items: items.names,
        raters: raters.names,
        ratings,
    })
}

/// One adjudicated item's label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GoldLabel {
    /// Item id.
    pub item: String,
    /// Its known label.
    pub label: String,
    /// 1-based line in the file.
    pub line: u64,
}

/// Read gold labels `item,label` (column names chosen by the caller), in file order, each with
/// its line; an empty label or an item given twice is refused.
pub fn read_gold_labels(
    path: &Path,
    columns: [&str; 2],
) -> Result<(String, Vec<GoldLabel>), ScoreTableError> {
    let mut out: Vec<GoldLabel> = Vec::new();
    let mut first_line: HashMap<String, u64> = HashMap::new();
    let file = rows(path, &columns, |file, line, cells| {
        for i in 0..2 {
            if cells[i].is_empty() {
                return Err(empty_id(file, line, columns[i]));
            }
        }
        if let Some(&first) = first_line.get(&cells[0]) {
            return Err(ScoreTableError::Unparsable {
                file: file.to_string(),
                line,
                message: format!(
                    "item `{}` has a second gold label (first at line {first})",
                    cells[0]
                ),
            });
        }
        first_line.insert(cells[0].clone(), line);
        out.push(GoldLabel {
            item: cells[0].clone(),
            label: cells[1].clone(),
            line,
        });
        Ok(())
    })?;
    Ok((file, out))
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
