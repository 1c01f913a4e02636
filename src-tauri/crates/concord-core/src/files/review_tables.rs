//! The CSV files of the reviewer's statistics (`concord stats prevalence|ppi-power|gstudy|
//! consensus`), read by the same streaming reader as the score tables
//! ([`crate::files::score_table`]), so byte-order marks, CRLF line ends and quoted line breaks
//! are handled alike and every refusal names the file, the line and the column.
//!
//! - a binary calibration table `item,judge,expert`: 0/1 labels, `expert` empty where no expert
//!   rated;
//! - a pilot `judge,expert`: both numbers on every row;
//! - facet scores `target,rater[,occasion],score`: an empty score is a missing cell, a cell given
//!   twice is refused;
//! - labels `item,rater,label` and gold labels `item,label`: text labels, an empty label is no
//!   rating, a rater labelling an item twice (or an item with two gold labels) is refused.

use crate::files::score_table::{parse_score, ScoreRows, ScoreTableError};
use serde::Serialize;
use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

fn open(path: &Path) -> Result<(File, String), ScoreTableError> {
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
    let (handle, file) = open(path)?;
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

/// Ids in order of first appearance, with the line each first appeared on.
#[derive(Default)]
struct Ids {
    names: Vec<String>,
    index: HashMap<String, u32>,
}

impl Ids {
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
    let (mut t, mut r, mut o) = (Ids::default(), Ids::default(), Ids::default());
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
    let (mut items, mut raters) = (Ids::default(), Ids::default());
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
