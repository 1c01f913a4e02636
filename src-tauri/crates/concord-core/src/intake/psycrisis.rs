//! The PsyCrisis layout: a workbook (or CSV) whose first two columns are the user's utterance and
//! the model's answer (header row present), optionally a `category` column, and then either a
//! judge's `evaluation_result` (reasons followed by a Python-style dict, read leniently by
//! [`crate::rubric::reply::crisis_reply`]) or an expert's dimension columns (headers naming the
//! dimensions by any of the rubric's keys, values 0/1, optionally a 总分 total column), or both.
//!
//! The file does not say which model wrote the answers or who judged them, so the caller names the
//! source (and the judge or expert). Conversations are keyed by their utterance
//! (`psycrisis:` + the first 16 hex digits of its SHA-256 after whitespace normalisation), so the
//! answers of several models to the same utterance, imported from several files, meet under one
//! conversation. A declared total that differs from the sum of the dimensions is a data-quality
//! finding; the dimensions are stored and the total is kept as extra data.

use super::catalog::{judge_family, source_by_key};
use super::excerpt;
use super::index::{RaterSpec, SourceSpec, StudyIndex};
use super::normalize_context;
use super::sha256_hex;
use super::FileReport;
use super::ImportError;
use super::ImportOptions;
use super::ImportReport;
use super::QualityItem;
use super::QualityKind;
use super::{import_release, ReleaseLayout};
use crate::base::text::quoted;
use crate::files::table::Cell;
use crate::files::table::RawRow;
use crate::files::table::RawTable;
use crate::files::Issue;
use crate::files::Location;
use crate::rubric::reply::classify_number;
use crate::rubric::reply::crisis_reply;
use crate::rubric::reply::CrisisReply;
use crate::rubric::reply::Score;
use crate::rubric::{builtin, Rubric};
use crate::store::{
    ImportedRating, NewConversation, NewJudgement, RaterKind, SourceKind, Store, StudyTx,
};
use std::collections::HashMap;
use std::path::Path;

/// The default name of the expert whose dimension columns a file holds.
pub const DEFAULT_EXPERT: &str = "PsyCrisis expert";

/// What the caller says about a PsyCrisis file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrisisFile {
    /// Key of the source that wrote the answers (e.g. `gpt4o`).
    pub source_key: String,
    pub source_name: Option<String>,
    /// Model id of the judge whose `evaluation_result` the file holds.
    pub judge: Option<String>,
    /// Name of the expert whose dimension columns the file holds (default [`DEFAULT_EXPERT`]).
    pub expert: Option<String>,
    pub sheet: Option<String>,
}

/// One rater's scores on one row.
struct RowScores {
    rater: usize,
    values: Vec<(String, i64)>,
    rationale: Option<String>,
    extra: serde_json::Map<String, serde_json::Value>,
    raw_reply: Option<String>,
}

struct Row {
    utterance: String,
    answer: String,
    category: Option<String>,
    scores: Vec<RowScores>,
}

/// The conversation id of an utterance.
pub fn conversation_external_id(utterance: &str) -> String {
    let hash = sha256_hex(normalize_context(utterance).as_bytes());
    format!("psycrisis:{}", &hash[..16])
}

/// Import a PsyCrisis file.
pub fn import_file(
    store: &mut Store,
    path: &Path,
    file: &CrisisFile,
    options: &ImportOptions,
) -> Result<ImportReport, ImportError> {
    import_release(
        store,
        path,
        file.sheet.as_deref(),
        &PsyCrisis { file },
        options,
    )
}

/// The PsyCrisis layout, with what the caller says about the file: its rows checked by
/// [`validate`], written as conversations, one response each and the raters' scores.
struct PsyCrisis<'f> {
    file: &'f CrisisFile,
}

/// A PsyCrisis file as checked.
struct CheckedFile {
    rubric: Rubric,
    raters: Vec<RaterSpec>,
    rows: Vec<Row>,
    /// The source of the answers.
    source: SourceSpec,
}

impl ReleaseLayout for PsyCrisis<'_> {
    type Checked = CheckedFile;
    const KIND: &'static str = "psycrisis";
    const NOUN: &'static str = "PsyCrisis";

    /// Check the rows against the built-in rubric, name the raters in the report, and make the
    /// answers' source from the catalogue or the name the caller gave.
    fn check(&self, table: &RawTable, report: &mut FileReport) -> Result<CheckedFile, Vec<Issue>> {
        let file = self.file;
        let rubric = builtin::psycrisis();
        let (raters, rows) = validate(table, file, &rubric, report)?;
        report.rater = Some(
            raters
                .iter()
                .map(|r| r.name.clone())
                .collect::<Vec<_>>()
                .join(", "),
        );
        let source = match source_by_key(&file.source_key) {
            Some(entry) => SourceSpec::from(entry),
            None => SourceSpec {
                key: file.source_key.clone(),
                name: file
                    .source_name
                    .clone()
                    .unwrap_or_else(|| file.source_key.clone()),
                family: Some(judge_family(&file.source_key)),
                kind: if file.source_key.eq_ignore_ascii_case("human") {
                    SourceKind::Human
                } else {
                    SourceKind::Llm
                },
            },
        };
        Ok(CheckedFile {
            rubric,
            raters,
            rows,
            source,
        })
    }

    /// Write the source and raters, then per row its conversation, its response with the
    /// answer, and each rater's scores (a judgement when there is a rationale, extra data or an
    /// unread reply); the ratings in one bulk write.
    fn write(
        &self,
        tx: &mut StudyTx<'_>,
        _table: &RawTable,
        checked: CheckedFile,
        report: &mut FileReport,
        options: &ImportOptions,
    ) -> Result<(), ImportError> {
        let CheckedFile {
            rubric,
            raters,
            rows,
            source,
        } = checked;
        let origin = format!("import:{}", report.file);
        let rubric_id = tx.add_rubric(&rubric)?;
        let criteria = tx.read().criterion_ids(rubric_id)?;
        let mut index = StudyIndex::load(tx)?;
        let source_id = index.source(tx, &source)?;
        let mut rater_ids = Vec::new();
        for r in &raters {
            rater_ids.push(index.rater(tx, r, options.seed)?);
        }
        let mut ratings = Vec::new();
        for row in &rows {
            let ext = conversation_external_id(&row.utterance);
            let c = index.conversation(
                tx,
                &NewConversation {
                    external_id: &ext,
                    rubric_id,
                    context: &row.utterance,
                    language: Some("zh"),
                    category: row.category.as_deref(),
                },
            )?;
            if c.added {
                report.conversations_added += 1;
            }
            let (response_id, added, filled) =
                index.response(tx, c.id, source_id, Some(&row.answer))?;
            report.responses_added += added as usize;
            report.texts_filled += filled as usize;
            for s in &row.scores {
                for (criterion, value) in &s.values {
                    ratings.push(ImportedRating {
                        rater_id: rater_ids[s.rater],
                        response_id,
                        criterion_id: criteria[criterion],
                        value: Some(*value),
                        raw_value: None,
                        rationale: None,
                    });
                }
                if s.rationale.is_some() || !s.extra.is_empty() || s.raw_reply.is_some() {
                    tx.set_judgement(&NewJudgement {
                        rater_id: rater_ids[s.rater],
                        response_id,
                        rationale: s.rationale.as_deref(),
                        extra: &serde_json::Value::Object(s.extra.clone()),
                        raw_reply: s.raw_reply.as_deref(),
                        origin: &origin,
                    })?;
                    report.judgements += 1;
                }
            }
        }
        let outcome = tx.import_ratings(ratings, &origin)?;
        report.ratings_inserted = outcome.inserted;
        report.ratings_updated = outcome.updated;
        Ok(())
    }
}

/// Check a PsyCrisis table: its columns ([`CrisisColumns`]) and the raters they hold, then every
/// row: the utterance and answer present and the utterance not repeated, the judge's reply and
/// the expert's dimensions scored.
fn validate(
    table: &RawTable,
    file: &CrisisFile,
    rubric: &Rubric,
    report: &mut FileReport,
) -> Result<(Vec<RaterSpec>, Vec<Row>), Vec<Issue>> {
    let mut issues = Vec::new();
    if table.headers.len() < 2 {
        return Err(vec![Issue::error(
            table.whole(),
            "missing_column",
            "a PsyCrisis file needs the utterance and the answer as its first two columns"
                .to_string(),
        )]);
    }
    let columns = CrisisColumns::find(table, rubric, &mut issues);
    let (raters, judge_pos, expert_pos) = columns.raters(table, file, &mut issues);
    let reader = CrisisRows {
        table,
        rubric,
        columns: &columns,
    };
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut rows = Vec::with_capacity(table.rows.len());
    for row in &table.rows {
        let at = |c: Option<usize>| table.at(row.number, c);
        let (Some(utterance), Some(answer)) =
            (table.cell(row, 0).as_text(), table.cell(row, 1).as_text())
        else {
            issues.push(Issue::error(
                at(None),
                "missing_value",
                "the utterance and the answer (first two columns) must both be present".to_string(),
            ));
            continue;
        };
        let key = conversation_external_id(&utterance);
        if let Some(first) = seen.insert(key, row.number) {
            issues.push(Issue::error(
                at(Some(0)),
                "duplicate_id",
                format!(
                    "the same utterance appears again (first in row {first}); one file holds one answer per utterance"
                ),
            ));
            continue;
        }
        let mut scores = Vec::new();
        if let (Some(col), Some(rater)) = (columns.eval_col, judge_pos) {
            if let Some(s) = reader.judge_scores(row, col, rater, report, &mut issues) {
                scores.push(s);
            }
        }
        if let Some(rater) = expert_pos {
            scores.push(reader.expert_scores(row, rater, report, &mut issues));
        }
        rows.push(Row {
            utterance,
            answer,
            category: columns
                .category_col
                .and_then(|c| table.cell(row, c).as_text()),
            scores,
        });
        if issues.len() > 500 {
            break;
        }
    }
    if table.rows.is_empty() {
        issues.push(Issue::error(
            table.whole(),
            "empty_file",
            "the sheet has a header row but no data rows".to_string(),
        ));
    }
    if issues.is_empty() {
        Ok((raters, rows))
    } else {
        Err(issues)
    }
}

/// Where a PsyCrisis table holds what (past its first two columns): the category, a judge's
/// `evaluation_result`, the expert's dimension columns and their total.
struct CrisisColumns {
    category_col: Option<usize>,
    eval_col: Option<usize>,
    /// (column, criterion id) of each dimension.
    dim_cols: Vec<(usize, String)>,
    total_col: Option<usize>,
}

impl CrisisColumns {
    /// Find the columns by their headers; two columns for one dimension are a problem.
    fn find(table: &RawTable, rubric: &Rubric, issues: &mut Vec<Issue>) -> Self {
        let category_col = table
            .column("category")
            .or_else(|| table.column("类别"))
            .filter(|&c| c >= 2);
        let eval_col = table.column("evaluation_result").filter(|&c| c >= 2);
        let dim_cols: Vec<(usize, String)> = table
            .headers
            .iter()
            .enumerate()
            .skip(2)
            .filter_map(|(i, h)| rubric.criterion_for_key(h).map(|c| (i, c.id.clone())))
            .collect();
        // Two columns for one dimension (its name and an alias, say) would let one silently win.
        for (n, (col, criterion)) in dim_cols.iter().enumerate() {
            if let Some((first, _)) = dim_cols[..n].iter().find(|(_, c)| c == criterion) {
                issues.push(Issue::error(
                    table.at(1, Some(*col)),
                    "duplicate_dimension",
                    format!(
                        "the columns {} ({}) and {} ({}) are both the dimension {criterion}; which one holds the score is ambiguous: remove one",
                        quoted(&table.headers[*first]),
                        crate::files::column_letters(*first),
                        quoted(&table.headers[*col]),
                        crate::files::column_letters(*col),
                    ),
                ));
            }
        }
        let total_col = table
            .headers
            .iter()
            .enumerate()
            .skip(2)
            .find(|(_, h)| rubric.is_total_key(h))
            .map(|(i, _)| i);
        CrisisColumns {
            category_col,
            eval_col,
            dim_cols,
            total_col,
        }
    }

    /// The raters the columns hold: the judge the caller names (a judge's column without one is
    /// a problem), then the expert of the dimension columns; with each one's position.
    fn raters(
        &self,
        table: &RawTable,
        file: &CrisisFile,
        issues: &mut Vec<Issue>,
    ) -> (Vec<RaterSpec>, Option<usize>, Option<usize>) {
        let mut raters = Vec::new();
        let mut judge_pos = None;
        let mut expert_pos = None;
        if self.eval_col.is_some() {
            match &file.judge {
                Some(model) => {
                    raters.push(RaterSpec {
                        kind: RaterKind::Judge,
                        name: model.clone(),
                        model_id: Some(model.clone()),
                        family: Some(judge_family(model)),
                    });
                    judge_pos = Some(raters.len() - 1);
                }
                None => issues.push(Issue::error(
                    table.at(1, self.eval_col),
                    "unknown_judge",
                    "the file holds a judge's evaluation_result: name the judge (its model id)"
                        .to_string(),
                )),
            }
        }
        if !self.dim_cols.is_empty() {
            raters.push(RaterSpec {
                kind: RaterKind::Expert,
                name: file
                    .expert
                    .clone()
                    .unwrap_or_else(|| DEFAULT_EXPERT.to_string()),
                model_id: None,
                family: None,
            });
            expert_pos = Some(raters.len() - 1);
        }
        (raters, judge_pos, expert_pos)
    }
}

/// What scoring a row's cells needs: the table, the rubric and where the columns are.
struct CrisisRows<'a> {
    table: &'a RawTable,
    rubric: &'a Rubric,
    columns: &'a CrisisColumns,
}

impl CrisisRows<'_> {
    /// The judge's scores of one row from its reply in column `col`: an empty cell is a finding
    /// (no scores), a reply that cannot be read is kept verbatim and reported, and a cell that
    /// is not text is a problem.
    fn judge_scores(
        &self,
        row: &RawRow,
        col: usize,
        rater: usize,
        report: &mut FileReport,
        issues: &mut Vec<Issue>,
    ) -> Option<RowScores> {
        let (table, rubric) = (self.table, self.rubric);
        let at = |c: Option<usize>| table.at(row.number, c);
        match table.cell(row, col) {
            c if c.is_blank() => {
                report.quality.push(QualityItem {
                    kind: QualityKind::EmptyCell,
                    at: at(Some(col)),
                    criterion: None,
                    value: None,
                    action: "missing".into(),
                });
                None
            }
            // A reply whose dict cannot be read, or whose values are not 0/1, is kept verbatim
            // and reported (as the documentation promises); it never rejects the file.
            Cell::Text(text) => Some(match read_reply(text, rubric) {
                Ok((reply, values)) => {
                    check_parts(rubric, &values, reply.total, at(Some(col)), report);
                    let mut extra = serde_json::Map::new();
                    if let Some(t) = reply.total {
                        extra.insert("总分".into(), serde_json::json!(t));
                    }
                    if !reply.unknown_keys.is_empty() {
                        extra.insert("unknown_keys".into(), serde_json::json!(reply.unknown_keys));
                    }
                    RowScores {
                        rater,
                        values,
                        rationale: reply.rationale,
                        extra,
                        raw_reply: None,
                    }
                }
                Err(msg) => {
                    report.quality.push(QualityItem {
                        kind: QualityKind::UnparsedReply,
                        at: at(Some(col)),
                        criterion: None,
                        value: Some(excerpt(&format!("{msg}: {text}"), 100)),
                        action: "missing".into(),
                    });
                    RowScores {
                        rater,
                        values: Vec::new(),
                        rationale: None,
                        extra: serde_json::Map::new(),
                        raw_reply: Some(text.clone()),
                    }
                }
            }),
            other => {
                issues.push(Issue::error(
                    at(Some(col)),
                    "bad_reply",
                    format!(
                        "expected the judge's text, found {:?}",
                        other.as_text().unwrap_or_default()
                    ),
                ));
                None
            }
        }
    }

    /// The expert's scores of one row from the dimension columns (0 or 1 each; an empty cell is
    /// a finding, anything else a problem), checked against the row's total when all are there.
    fn expert_scores(
        &self,
        row: &RawRow,
        rater: usize,
        report: &mut FileReport,
        issues: &mut Vec<Issue>,
    ) -> RowScores {
        let (table, columns) = (self.table, self.columns);
        let at = |c: Option<usize>| table.at(row.number, c);
        let mut values = Vec::new();
        for (col, criterion) in &columns.dim_cols {
            let cell = table.cell(row, *col);
            if cell.is_blank() {
                report.quality.push(QualityItem {
                    kind: QualityKind::EmptyCell,
                    at: at(Some(*col)),
                    criterion: Some(criterion.clone()),
                    value: None,
                    action: "missing".into(),
                });
                continue;
            }
            let number = match cell {
                Cell::Number(x) => Ok(*x),
                Cell::Text(t) => t
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| format!("{} is not 0 or 1", quoted(t))),
                other => Err(format!(
                    "{} is not 0 or 1",
                    quoted(&other.as_text().unwrap_or_default())
                )),
            };
            match number.and_then(|x| classify_number(x, &crate::rubric::Scale::Binary)) {
                Ok(Score::OnScale(v)) => values.push((criterion.clone(), v)),
                Ok(_) => {}
                Err(msg) => issues.push(Issue::error(at(Some(*col)), "bad_score", msg)),
            }
        }
        let total = columns.total_col.and_then(|c| match table.cell(row, c) {
            Cell::Number(x) => Some(*x),
            Cell::Text(t) => t.trim().parse().ok(),
            _ => None,
        });
        if values.len() == columns.dim_cols.len() {
            check_parts(self.rubric, &values, total, at(columns.total_col), report);
        }
        let mut extra = serde_json::Map::new();
        if let Some(t) = total {
            extra.insert("总分".into(), serde_json::json!(t));
        }
        RowScores {
            rater,
            values,
            rationale: None,
            extra,
            raw_reply: None,
        }
    }
}

/// A judge's reply read as a PsyCrisis dict, with its values on each dimension's scale.
fn read_reply(text: &str, rubric: &Rubric) -> Result<(CrisisReply, Vec<(String, i64)>), String> {
    crisis_reply(text, rubric).and_then(|reply| {
        let mut values = Vec::new();
        for (criterion, x) in &reply.values {
            let scale = &rubric
                .criterion(criterion)
                .map(|c| c.scale.clone())
                .unwrap_or(crate::rubric::Scale::Binary);
            match classify_number(*x, scale) {
                Ok(Score::OnScale(v)) => values.push((criterion.clone(), v)),
                Ok(_) => {}
                Err(msg) => return Err(format!("{criterion}: {msg}")),
            }
        }
        Ok((reply, values))
    })
}

/// Report dimensions a dict left out, and a declared total that differs from the sum.
fn check_parts(
    rubric: &Rubric,
    values: &[(String, i64)],
    total: Option<f64>,
    at: Location,
    report: &mut FileReport,
) {
    for c in &rubric.criteria {
        if !values.iter().any(|(id, _)| *id == c.id) {
            report.quality.push(QualityItem {
                kind: QualityKind::MissingDimension,
                at: at.clone(),
                criterion: Some(c.id.clone()),
                value: None,
                action: "missing".into(),
            });
        }
    }
    if let Some(t) = total {
        let sum: i64 = values.iter().map(|(_, v)| v).sum();
        if values.len() == rubric.criteria.len() && (t - sum as f64).abs() > 1e-9 {
            report.quality.push(QualityItem {
                kind: QualityKind::TotalMismatch,
                at,
                criterion: None,
                value: Some(format!(
                    "总分 {} but the dimensions sum to {sum}",
                    crate::files::table::format_number(t)
                )),
                action: "reported".into(),
            });
        }
    }
}
