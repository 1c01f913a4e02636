//! Generic long form (CSV, JSON Lines or XLSX), with column names chosen by the user:
//! - items: `conversation_id, context, response_id, source, text` — one row per response;
//!   conversation ids are used as the study's external ids as written (so `mentalbench:12` meets
//!   the released datasets), response ids become the responses' external ids;
//! - ratings: `item, rater, criterion, score`, optional `rationale` — one row per rating; `item`
//!   (or `target`) names a response by its external id, `criterion` any key of the rubric.
//!
//! Sources are looked up in the release catalogue by key or MentalBench column name; other
//! sources are created under the name given (family guessed from the name like a judge's). Raters
//! already in the study keep their kind; new ones get the kind the user chose (judges get a model
//! id equal to their name and a family from it). The same rating twice in one file, an unknown
//! item or criterion, or a score that cannot be one rejects the import; an empty score is
//! missing (reported, not stored).

use super::catalog::{judge_family, source_by_key, source_by_mentalbench_column};
use super::index::{RaterSpec, SourceSpec, StudyIndex};
use super::reply::{classify_number, Score};
use super::table::{Cell, RawTable};
use super::{prepare, Formats, Prepared};
use super::{
    record_file, FileReport, FileStatus, ImportError, ImportOptions, ImportReport, Issue, Location,
    OutOfScale, QualityItem, QualityKind,
};
use crate::rubric::{builtin, Rubric};
use crate::store::{ImportedRating, NewConversation, RaterKind, SourceKind, Store};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Column names of an items file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemColumns {
    pub conversation: String,
    pub context: String,
    pub response: String,
    pub source: String,
    pub text: String,
}

impl Default for ItemColumns {
    fn default() -> Self {
        ItemColumns {
            conversation: "conversation_id".into(),
            context: "context".into(),
            response: "response_id".into(),
            source: "source".into(),
            text: "text".into(),
        }
    }
}

/// Column names of a ratings file, and the kind of raters it introduces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RatingColumns {
    pub item: String,
    pub rater: String,
    pub criterion: String,
    pub score: String,
    pub rationale: String,
    pub new_rater_kind: RaterKind,
}

impl Default for RatingColumns {
    fn default() -> Self {
        RatingColumns {
            item: "item".into(),
            rater: "rater".into(),
            criterion: "criterion".into(),
            score: "score".into(),
            rationale: "rationale".into(),
            new_rater_kind: RaterKind::Expert,
        }
    }
}

/// A rubric by id: one stored in the study, else a built-in one.
fn find_rubric(store: &Store, key: &str, at: &Location) -> Result<Rubric, ImportError> {
    if let Some((_, r)) = store.rubrics()?.into_iter().find(|(_, r)| r.id == key) {
        return Ok(r);
    }
    builtin::by_id(key).ok_or_else(|| {
        ImportError::one(
            at.clone(),
            "unknown_rubric",
            format!("no rubric {key:?} in the study or built in"),
        )
    })
}

fn required(table: &RawTable, names: &[(&str, &str)]) -> Result<Vec<usize>, Vec<Issue>> {
    let mut missing = Vec::new();
    let mut out = Vec::new();
    for (role, name) in names {
        match table.column(name) {
            Some(c) => out.push(c),
            None => missing.push(format!("{name:?} ({role})")),
        }
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(vec![Issue::error(
            table.whole(),
            "missing_column",
            format!(
                "missing column(s) {}; the file's columns are {}",
                missing.join(", "),
                table
                    .headers
                    .iter()
                    .map(|h| format!("{h:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )])
    }
}

fn source_spec(name: &str) -> SourceSpec {
    if let Some(entry) = source_by_key(name).or_else(|| source_by_mentalbench_column(name)) {
        return SourceSpec::from(entry);
    }
    let human = ["human", "original"]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h));
    SourceSpec {
        key: name.to_string(),
        name: name.to_string(),
        family: (!human).then(|| judge_family(name)),
        kind: if human {
            SourceKind::Human
        } else {
            SourceKind::Llm
        },
    }
}

struct ItemRow {
    /// The row it was read from, for messages.
    row: usize,
    conversation: String,
    context: String,
    response: String,
    source: String,
    text: Option<String>,
}

/// Import a long-form items file.
pub fn import_items(
    store: &mut Store,
    path: &Path,
    rubric_key: &str,
    columns: &ItemColumns,
    sheet: Option<&str>,
    options: &ImportOptions,
) -> Result<ImportReport, ImportError> {
    let p = match prepare(store, path, sheet, "long", "long-form", Formats::Any)? {
        Prepared::Read(p) => p,
        Prepared::AlreadyImported(done) => {
            return Ok(ImportReport {
                options: options.clone(),
                files: vec![done],
            })
        }
    };
    let rubric = find_rubric(store, rubric_key, &p.table.whole())?;
    let table = &p.table;
    let cols = required(
        table,
        &[
            ("conversation", &columns.conversation),
            ("context", &columns.context),
            ("response", &columns.response),
            ("source", &columns.source),
            ("text", &columns.text),
        ],
    )
    .map_err(ImportError::Rejected)?;
    let mut issues = Vec::new();
    let mut rows = Vec::new();
    let mut responses: HashMap<String, usize> = HashMap::new();
    let mut pairs: HashMap<(String, String), usize> = HashMap::new();
    let mut contexts: HashMap<String, (String, usize)> = HashMap::new();
    for row in &table.rows {
        let get = |i: usize| {
            table
                .cell(row, cols[i])
                .as_text()
                .map(|s| s.trim().to_string())
        };
        let mut missing = false;
        for (i, what) in [
            (0, "conversation id"),
            (1, "context"),
            (2, "response id"),
            (3, "source"),
        ] {
            if get(i).filter(|s| !s.is_empty()).is_none() {
                issues.push(Issue::error(
                    table.at(row.number, Some(cols[i])),
                    "missing_value",
                    format!("the {what} is empty"),
                ));
                missing = true;
            }
        }
        if missing {
            continue;
        }
        let item = ItemRow {
            row: row.number,
            conversation: get(0).unwrap_or_default(),
            context: table.cell(row, cols[1]).as_text().unwrap_or_default(),
            response: get(2).unwrap_or_default(),
            source: get(3).unwrap_or_default(),
            text: table
                .cell(row, cols[4])
                .as_text()
                .filter(|t| !t.trim().is_empty()),
        };
        if let Some(first) = responses.insert(item.response.clone(), row.number) {
            issues.push(Issue::error(
                table.at(row.number, Some(cols[2])),
                "duplicate_id",
                format!(
                    "response id {:?} appears again (first in row {first})",
                    item.response
                ),
            ));
            continue;
        }
        let source = source_spec(&item.source).key;
        if let Some(first) = pairs.insert((item.conversation.clone(), source), row.number) {
            issues.push(Issue::error(
                table.at(row.number, Some(cols[3])),
                "duplicate_response",
                format!(
                    "conversation {:?} already has a response from {:?} (row {first})",
                    item.conversation, item.source
                ),
            ));
            continue;
        }
        match contexts.get(&item.conversation) {
            Some((c, first)) if c != &item.context => issues.push(Issue::error(
                table.at(row.number, Some(cols[1])),
                "context_conflict",
                format!(
                    "conversation {:?} has a different context in row {first}",
                    item.conversation
                ),
            )),
            Some(_) => {}
            None => {
                contexts.insert(
                    item.conversation.clone(),
                    (item.context.clone(), row.number),
                );
            }
        }
        rows.push(item);
    }
    if rows.is_empty() && issues.is_empty() {
        issues.push(Issue::error(
            table.whole(),
            "empty_file",
            "the file has a header row but no data rows".to_string(),
        ));
    }
    if !issues.is_empty() {
        return Err(ImportError::Rejected(issues));
    }
    let mut report = FileReport::new(&p.name, table.sheet.clone(), "long-items", &p.sha);
    let out = store.write(|tx| -> Result<FileReport, ImportError> {
        if tx.import_by_hash(&p.sha)?.is_some() {
            report.status = FileStatus::AlreadyImported;
            return Ok(report);
        }
        let rubric_id = tx.add_rubric(&rubric)?;
        let mut index = StudyIndex::load(tx)?;
        let existing = tx.response_external_ids()?;
        for item in &rows {
            let c = index.conversation(
                tx,
                &NewConversation {
                    external_id: &item.conversation,
                    rubric_id,
                    context: &item.context,
                    language: None,
                    category: None,
                },
            )?;
            report.conversations_added += c.added as usize;
            if c.context_differs {
                report.quality.push(QualityItem {
                    kind: QualityKind::ContextMismatch,
                    at: Location {
                        file: report.file.clone(),
                        sheet: report.sheet.clone(),
                        row: Some(item.row),
                        column: Some(columns.context.clone()),
                    },
                    criterion: None,
                    value: Some(item.conversation.clone()),
                    action: "reported".into(),
                });
            }
            let source_id = index.source(tx, &source_spec(&item.source))?;
            let (response_id, added, filled) =
                index.response(tx, c.id, source_id, item.text.as_deref())?;
            report.responses_added += added as usize;
            report.texts_filled += filled as usize;
            match existing.get(&item.response) {
                Some(&id) if id != response_id => {
                    return Err(ImportError::one(
                        Location {
                            file: report.file.clone(),
                            sheet: report.sheet.clone(),
                            row: Some(item.row),
                            column: Some(columns.response.clone()),
                        },
                        "duplicate_id",
                        format!(
                            "response id {:?} already names another response in the study (a different conversation or source); give this response its own id",
                            item.response
                        ),
                    ))
                }
                Some(_) => {}
                None => tx.set_response_external_id(response_id, &item.response)?,
            }
        }
        record_file(tx, &report, options)?;
        Ok(report)
    })?;
    Ok(ImportReport {
        options: options.clone(),
        files: vec![out],
    })
}

/// One validated rating row.
struct ParsedRating {
    /// The row it was read from, for messages.
    row: usize,
    item: String,
    rater: String,
    /// Criterion id.
    criterion: String,
    value: Option<i64>,
    raw: Option<String>,
    rationale: Option<String>,
}

/// Import a long-form ratings file.
pub fn import_ratings(
    store: &mut Store,
    path: &Path,
    rubric_key: &str,
    columns: &RatingColumns,
    sheet: Option<&str>,
    options: &ImportOptions,
) -> Result<ImportReport, ImportError> {
    let p = match prepare(store, path, sheet, "long", "long-form", Formats::Any)? {
        Prepared::Read(p) => p,
        Prepared::AlreadyImported(done) => {
            return Ok(ImportReport {
                options: options.clone(),
                files: vec![done],
            })
        }
    };
    let rubric = find_rubric(store, rubric_key, &p.table.whole())?;
    let table = &p.table;
    let item_name = if table.column(&columns.item).is_none() && table.column("target").is_some() {
        "target".to_string()
    } else {
        columns.item.clone()
    };
    let cols = required(
        table,
        &[
            ("item", &item_name),
            ("rater", &columns.rater),
            ("criterion", &columns.criterion),
            ("score", &columns.score),
        ],
    )
    .map_err(ImportError::Rejected)?;
    let rationale_col = table.column(&columns.rationale);
    let mut report = FileReport::new(&p.name, table.sheet.clone(), "long-ratings", &p.sha);
    let mut issues = Vec::new();
    let mut parsed: Vec<ParsedRating> = Vec::new();
    let mut seen: HashMap<(String, String, String), usize> = HashMap::new();
    for row in &table.rows {
        let text = |c: usize| table.cell(row, c).as_text().map(|s| s.trim().to_string());
        let (Some(item), Some(rater), Some(criterion_name)) = (
            text(cols[0]).filter(|s| !s.is_empty()),
            text(cols[1]).filter(|s| !s.is_empty()),
            text(cols[2]).filter(|s| !s.is_empty()),
        ) else {
            issues.push(Issue::error(
                table.at(row.number, None),
                "missing_value",
                "item, rater and criterion must all be present".to_string(),
            ));
            continue;
        };
        let Some(criterion) = rubric.criterion_for_key(&criterion_name) else {
            issues.push(Issue::error(
                table.at(row.number, Some(cols[2])),
                "unknown_criterion",
                format!(
                    "{criterion_name:?} is not a criterion of rubric {:?}",
                    rubric.id
                ),
            ));
            continue;
        };
        let key = (item.clone(), rater.clone(), criterion.id.clone());
        if let Some(first) = seen.insert(key, row.number) {
            issues.push(Issue::error(
                table.at(row.number, None),
                "duplicate_rating",
                format!(
                    "{rater} rated {criterion_name} of {item:?} already in row {first}; the same rating twice is ambiguous"
                ),
            ));
            continue;
        }
        let at = || table.at(row.number, Some(cols[3]));
        let number = match table.cell(row, cols[3]) {
            c if c.is_blank() => {
                report.quality.push(QualityItem {
                    kind: QualityKind::EmptyValue,
                    at: at(),
                    criterion: Some(criterion.id.clone()),
                    value: None,
                    action: "skipped".into(),
                });
                continue;
            }
            Cell::Number(x) => Ok(*x),
            Cell::Text(t) => t
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("{t:?} is not a number")),
            other => Err(format!(
                "{:?} is not a number",
                other.as_text().unwrap_or_default()
            )),
        };
        let (value, raw) = match number.and_then(|x| {
            if x.is_finite() {
                classify_number(x, &criterion.scale)
            } else {
                Err(format!("{x} is not a finite number"))
            }
        }) {
            Ok(Score::OnScale(v)) => (Some(v), None),
            Ok(Score::OneStepOut(v)) => {
                report.quality.push(QualityItem {
                    kind: QualityKind::OutOfScale,
                    at: at(),
                    criterion: Some(criterion.id.clone()),
                    value: Some(v.to_string()),
                    action: match options.out_of_scale {
                        OutOfScale::Keep => "kept".into(),
                        OutOfScale::Missing => "missing".into(),
                    },
                });
                let stored = (options.out_of_scale == OutOfScale::Keep).then_some(v);
                (stored, Some(v.to_string()))
            }
            Ok(Score::Null | Score::Empty) => (None, None),
            Err(msg) => {
                issues.push(Issue::error(at(), "bad_score", msg));
                continue;
            }
        };
        let rationale = rationale_col
            .and_then(|c| table.cell(row, c).as_text())
            .filter(|t| !t.trim().is_empty());
        parsed.push(ParsedRating {
            row: row.number,
            item,
            rater,
            criterion: criterion.id.clone(),
            value,
            raw,
            rationale,
        });
    }
    if table.rows.is_empty() {
        issues.push(Issue::error(
            table.whole(),
            "empty_file",
            "the file has a header row but no data rows".to_string(),
        ));
    }
    if !issues.is_empty() {
        return Err(ImportError::Rejected(issues));
    }
    let existing_raters: HashMap<String, RaterKind> = store
        .raters()?
        .into_iter()
        .map(|r| (r.name, r.kind))
        .collect();
    let out = store.write(|tx| -> Result<FileReport, ImportError> {
        if tx.import_by_hash(&p.sha)?.is_some() {
            report.status = FileStatus::AlreadyImported;
            return Ok(report);
        }
        let rubric_id = tx.add_rubric(&rubric)?;
        let criteria = tx.criterion_ids(rubric_id)?;
        let responses = tx.response_external_ids()?;
        // Each unknown item once, at the first row naming it.
        let unknown: Vec<(&String, usize)> = {
            let mut seen = HashSet::new();
            parsed
                .iter()
                .filter(|p| !responses.contains_key(&p.item) && seen.insert(&p.item))
                .map(|p| (&p.item, p.row))
                .collect()
        };
        if !unknown.is_empty() {
            return Err(ImportError::Rejected(
                unknown
                    .iter()
                    .take(20)
                    .map(|(i, row)| {
                        Issue::error(
                            Location {
                                file: report.file.clone(),
                                sheet: report.sheet.clone(),
                                row: Some(*row),
                                column: Some(item_name.clone()),
                            },
                            "unknown_item",
                            format!("item {i:?} is not a response id in the study; import the items first"),
                        )
                    })
                    .collect(),
            ));
        }
        let mut index = StudyIndex::load(tx)?;
        let mut rater_ids: HashMap<String, i64> = HashMap::new();
        let mut ratings = Vec::with_capacity(parsed.len());
        for ParsedRating {
            row: _,
            item,
            rater,
            criterion,
            value,
            raw,
            rationale,
        } in parsed
        {
            let rater_id = match rater_ids.get(&rater) {
                Some(id) => *id,
                None => {
                    let kind = existing_raters
                        .get(&rater)
                        .copied()
                        .unwrap_or(columns.new_rater_kind);
                    let spec = RaterSpec {
                        kind,
                        name: rater.clone(),
                        model_id: (kind == RaterKind::Judge).then(|| rater.clone()),
                        family: (kind == RaterKind::Judge).then(|| judge_family(&rater)),
                    };
                    let id = index.rater(tx, &spec, options.seed)?;
                    rater_ids.insert(rater.clone(), id);
                    id
                }
            };
            ratings.push(ImportedRating {
                rater_id,
                response_id: responses[&item],
                criterion_id: criteria[&criterion],
                value,
                raw_value: raw,
                rationale,
            });
        }
        let outcome = tx.import_ratings(&ratings, &format!("import:{}", report.file))?;
        report.ratings_inserted = outcome.inserted;
        report.ratings_updated = outcome.updated;
        let mut names: Vec<String> = rater_ids.into_keys().collect();
        names.sort();
        report.rater = Some(names.join(", "));
        record_file(tx, &report, options)?;
        Ok(report)
    })?;
    Ok(ImportReport {
        options: options.clone(),
        files: vec![out],
    })
}
