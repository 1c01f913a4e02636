//! The MentalAlign-70k release: one expert file (`human_response_<source>` columns) and any number
//! of judge files (`judge_response_<source>` columns, judge identity from the sheet name), each
//! 1,000 rows of `ConvID`, `context` and ten cells holding a JSON object of the seven MentalBench
//! attributes.
//!
//! Mapping into the study:
//! - conversation `ConvID` n becomes the conversation with external id `mentalbench:n`, the id the
//!   MentalBench-100k importer gives the n-th data row of its file, so ratings and answer texts
//!   meet whichever is imported first; the responses are created without text;
//! - the expert file's ratings belong to one expert rater, [`EXPERT_NAME`] (the release has one
//!   expert rating per response and no expert ids); each judge file's to a judge rater named by its
//!   model id, with its family from [`catalog::judge_family`];
//! - a judge's `Explanation` is the rationale and `Overall` (with any other extra key) is kept as
//!   extra data in the `judgement` table; a reply without readable scores is kept verbatim there;
//! - out-of-scale values (0, 6), nulls and empty cells are data-quality findings handled per
//!   [`OutOfScale`]; a score that cannot be one (3.5, "four", −1) rejects the import.

use super::catalog::{self, judge_family, judge_from_sheet};
use super::excerpt;
use super::index::{RaterSpec, SourceSpec, StudyIndex};
use super::land;
use super::sha256_hex;
use super::FileReport;
use super::FileStatus;
use super::ImportError;
use super::ImportOptions;
use super::ImportReport;
use super::OutOfScale;
use super::QualityItem;
use super::QualityKind;
use super::QualityReport;
use crate::base::text::quoted;
use crate::files::table::display_name;
use crate::files::table::read_table_bytes;
use crate::files::table::Cell;
use crate::files::table::FileFormat;
use crate::files::table::RawRow;
use crate::files::table::RawTable;
use crate::files::Issue;
use crate::files::Location;
use crate::rubric::reply::classify;
use crate::rubric::reply::expert_object;
use crate::rubric::reply::judge_object;
use crate::rubric::reply::Score;
use crate::rubric::reply::ScoreObject;
use crate::rubric::{builtin, Rubric};
use crate::store::{
    ImportedRating, NewConversation, NewJudgement, RaterKind, SourceKind, Store, StudyTx,
};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The rater the release's expert ratings are imported as.
pub const EXPERT_NAME: &str = "MentalAlign expert";

/// The external id of MentalBench conversation `n` (1-based).
pub fn conversation_external_id(n: u64) -> String {
    format!("mentalbench:{n}")
}

/// One rating cell after validation.
#[derive(Debug, Clone, PartialEq)]
struct ParsedCell {
    conv: u64,
    source: usize,
    /// (criterion id, stored value, raw value when it is not a plain on-scale value).
    values: Vec<(String, Option<i64>, Option<String>)>,
    rationale: Option<String>,
    extra: Map<String, Value>,
    raw_reply: Option<String>,
}

/// A validated file, ready to write: its rows and its report so far.
#[derive(Debug, Clone)]
struct ParsedFile {
    rows: ParsedRows,
    report: FileReport,
}

/// What a validated file holds.
#[derive(Debug, Clone)]
struct ParsedRows {
    rater: RaterSpec,
    sources: Vec<SourceSpec>,
    /// (ConvID, context, the row it was read from).
    conversations: Vec<(u64, String, usize)>,
    cells: Vec<ParsedCell>,
}

/// Import every `.xlsx` file of a MentalAlign release folder (human and judge files).
pub fn import_dir(
    store: &mut Store,
    dir: &Path,
    options: &ImportOptions,
) -> Result<ImportReport, ImportError> {
    import_dir_judged(store, dir, options, None)
}

/// [`import_dir`] naming the judge of the folder's judge file(s) explicitly, for exports whose
/// sheet names are not model ids.
pub fn import_dir_as(
    store: &mut Store,
    dir: &Path,
    options: &ImportOptions,
    judge: &str,
) -> Result<ImportReport, ImportError> {
    import_dir_judged(store, dir, options, Some(judge))
}

fn import_dir_judged(
    store: &mut Store,
    dir: &Path,
    options: &ImportOptions,
    judge: Option<&str>,
) -> Result<ImportReport, ImportError> {
    let whole = Location {
        file: dir.display().to_string(),
        sheet: None,
        row: None,
        column: None,
    };
    let entries = std::fs::read_dir(dir).map_err(|e| {
        ImportError::one(
            whole.clone(),
            "unreadable",
            format!("cannot read the folder: {e}"),
        )
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = display_name(p);
            p.is_file() && name.to_ascii_lowercase().ends_with(".xlsx") && !name.starts_with("~$")
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(ImportError::one(
            whole,
            "no_files",
            "the folder holds no .xlsx files; expected Human_judge.xlsx and judge files"
                .to_string(),
        ));
    }
    import_files_judged(store, &files, options, judge)
}

/// Import the given MentalAlign files (human and/or judge files) in one transaction.
pub fn import_files(
    store: &mut Store,
    paths: &[PathBuf],
    options: &ImportOptions,
) -> Result<ImportReport, ImportError> {
    import_files_judged(store, paths, options, None)
}

fn import_files_judged(
    store: &mut Store,
    paths: &[PathBuf],
    options: &ImportOptions,
    judge: Option<&str>,
) -> Result<ImportReport, ImportError> {
    let limits = crate::files::bounds::ReadLimits::from_env();
    let inputs: Vec<(String, Vec<u8>)> = paths
        .iter()
        .map(|p| crate::files::table::read_file(p, &limits).map(|b| (display_name(p), b)))
        .collect::<Result<_, _>>()
        .map_err(ImportError::Rejected)?;
    import_bytes(store, &inputs, options, judge)
}

/// Import MentalAlign files given as (file name, bytes). `judge` overrides the judge model id the
/// sheet names give (for a single judge file with a generic sheet name). Files given twice or
/// imported before are set aside, the others read and checked (every problem of every file
/// reported), then all written in one transaction.
pub fn import_bytes(
    store: &mut Store,
    inputs: &[(String, Vec<u8>)],
    options: &ImportOptions,
    judge: Option<&str>,
) -> Result<ImportReport, ImportError> {
    let rubric = builtin::mentalbench();
    let (todo, already) = set_aside_known(store, inputs)?;

    // Phase 1: read and validate every file (two at a time), collecting every problem.
    let parsed: Vec<Result<ParsedFile, Vec<Issue>>> = parse_all(&todo, &rubric, options, judge);
    let files = checked_together(parsed).map_err(ImportError::Rejected)?;

    // Phase 2: write everything in one transaction.
    let written = store.write(|tx| -> Result<Vec<FileReport>, ImportError> {
        let rubric_id = tx.add_rubric(&rubric)?;
        let mut writer = FileWriter {
            criteria: tx.read().criterion_ids(rubric_id)?,
            index: StudyIndex::load(tx)?,
            rubric_id,
            rubric: &rubric,
            options,
        };
        let mut reports = Vec::new();
        for f in files {
            let rows = &f.rows;
            reports.push(land(tx, f.report, options, |tx, report| {
                writer.write(tx, rows, report)
            })?);
        }
        Ok(reports)
    })?;
    let mut files = written;
    files.extend(already);
    Ok(ImportReport {
        options: options.clone(),
        files,
    })
}

/// A file to read: its name, bytes and SHA-256.
type Todo<'a> = (&'a str, &'a [u8], String);

/// The inputs to read, and the reports of those set aside: a file identical to one given
/// before it (imported once), or imported before.
fn set_aside_known<'a>(
    store: &Store,
    inputs: &'a [(String, Vec<u8>)],
) -> Result<(Vec<Todo<'a>>, Vec<FileReport>), ImportError> {
    let mut already = Vec::new();
    let mut todo = Vec::new();
    let mut seen_hashes: HashMap<String, String> = HashMap::new();
    for (name, bytes) in inputs {
        let sha = sha256_hex(bytes);
        if let Some(first) = seen_hashes.get(&sha) {
            let mut r = FileReport::new(name, None, "mentalalign", &sha);
            r.status = FileStatus::AlreadyImported;
            r.warnings.push(Issue::warning(
                Location::whole_file(name),
                "duplicate_file",
                format!("identical to {first}; imported once"),
            ));
            already.push(r);
            continue;
        }
        seen_hashes.insert(sha.clone(), name.clone());
        if store.read().import_by_hash(&sha)?.is_some() {
            let mut r = FileReport::new(name, None, "mentalalign", &sha);
            r.status = FileStatus::AlreadyImported;
            already.push(r);
            continue;
        }
        todo.push((name.as_str(), bytes.as_slice(), sha));
    }
    Ok((todo, already))
}

/// The files read, when none was refused and no two hold the same rater's ratings; else every
/// problem of every file.
fn checked_together(
    parsed: Vec<Result<ParsedFile, Vec<Issue>>>,
) -> Result<Vec<ParsedFile>, Vec<Issue>> {
    let mut issues = Vec::new();
    let mut files = Vec::new();
    for p in parsed {
        match p {
            Ok(f) => files.push(f),
            Err(mut e) => issues.append(&mut e),
        }
    }
    let mut raters_seen: HashMap<String, String> = HashMap::new();
    for f in &files {
        if let Some(other) = raters_seen.insert(f.rows.rater.name.clone(), f.report.file.clone()) {
            issues.push(Issue::error(
                Location::whole_file(&f.report.file),
                "same_rater_twice",
                format!(
                    "{} and {other} both hold ratings of {}; import them separately",
                    f.report.file, f.rows.rater.name
                ),
            ));
        }
    }
    if issues.is_empty() {
        Ok(files)
    } else {
        Err(issues)
    }
}

/// Writes validated files in the import's transaction: the study's index and the rubric's
/// criteria, shared by every file.
struct FileWriter<'a> {
    index: StudyIndex,
    rubric_id: i64,
    /// Criterion id → its row id.
    criteria: HashMap<String, i64>,
    rubric: &'a Rubric,
    options: &'a ImportOptions,
}

impl FileWriter<'_> {
    /// Write one file: its rater and sources, its conversations (a differing context is a
    /// finding), a response per rated cell with its ratings and judgement, then the ratings in
    /// one bulk write.
    fn write(
        &mut self,
        tx: &mut StudyTx<'_>,
        f: &ParsedRows,
        report: &mut FileReport,
    ) -> Result<(), ImportError> {
        let index = &mut self.index;
        let origin = format!("import:{}", report.file);
        let rater_id = index.rater(tx, &f.rater, self.options.seed)?;
        let mut source_ids = Vec::with_capacity(f.sources.len());
        for s in &f.sources {
            source_ids.push(index.source(tx, s)?);
        }
        let mut conv_ids = HashMap::with_capacity(f.conversations.len());
        for (n, context, row) in &f.conversations {
            let ext = conversation_external_id(*n);
            let c = index.conversation(
                tx,
                &NewConversation {
                    external_id: &ext,
                    rubric_id: self.rubric_id,
                    context,
                    language: Some("en"),
                    category: None,
                },
            )?;
            if c.added {
                report.conversations_added += 1;
            }
            if c.context_differs {
                report.quality.push(QualityItem {
                    kind: QualityKind::ContextMismatch,
                    at: Location {
                        file: report.file.clone(),
                        sheet: report.sheet.clone(),
                        row: Some(*row),
                        column: Some("context".into()),
                    },
                    criterion: None,
                    value: Some(format!("ConvID {n}: {}", excerpt(context, 60))),
                    action: "reported".into(),
                });
            }
            conv_ids.insert(*n, c.id);
        }
        let mut ratings = Vec::with_capacity(f.cells.len() * self.rubric.criteria.len());
        for cell in &f.cells {
            let (response_id, added, _) =
                index.response(tx, conv_ids[&cell.conv], source_ids[cell.source], None)?;
            if added {
                report.responses_added += 1;
            }
            for (criterion, value, raw) in &cell.values {
                ratings.push(ImportedRating {
                    rater_id,
                    response_id,
                    criterion_id: self.criteria[criterion],
                    value: *value,
                    raw_value: raw.clone(),
                    rationale: None,
                });
            }
            if cell.rationale.is_some() || !cell.extra.is_empty() || cell.raw_reply.is_some() {
                tx.set_judgement(&NewJudgement {
                    rater_id,
                    response_id,
                    rationale: cell.rationale.as_deref(),
                    extra: &Value::Object(cell.extra.clone()),
                    raw_reply: cell.raw_reply.as_deref(),
                    origin: &origin,
                })?;
                report.judgements += 1;
            }
        }
        let outcome = tx.import_ratings(ratings, &origin)?;
        report.ratings_inserted = outcome.inserted;
        report.ratings_updated = outcome.updated;
        Ok(())
    }
}

/// Read and validate the files, a few at a time on their own threads; the results in the
/// order given.
fn parse_all(
    todo: &[Todo<'_>],
    rubric: &Rubric,
    options: &ImportOptions,
    judge: Option<&str>,
) -> Vec<Result<ParsedFile, Vec<Issue>>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    let mut out: Vec<Option<Result<ParsedFile, Vec<Issue>>>> = vec![None; todo.len()];
    for chunk in (0..todo.len()).collect::<Vec<_>>().chunks(threads) {
        let results: Vec<(usize, Result<ParsedFile, Vec<Issue>>)> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|&i| {
                    let (name, bytes, sha) = &todo[i];
                    s.spawn(move || (i, parse_file(name, bytes, sha, rubric, options, judge)))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        (
                            usize::MAX,
                            Err(vec![Issue::error(
                                Location::whole_file("?"),
                                "internal",
                                "reading a file failed unexpectedly".to_string(),
                            )]),
                        )
                    })
                })
                .collect()
        });
        for (i, r) in results {
            if let Some(slot) = out.get_mut(i) {
                *slot = Some(r);
            } else {
                return vec![r];
            }
        }
    }
    out.into_iter().flatten().collect()
}

const HUMAN_PREFIX: &str = "human_response_";
const JUDGE_PREFIX: &str = "judge_response_";

/// Read and validate one MentalAlign file: its columns, the rater they hold and the source of
/// each rating column, then every row's ConvID and context and every rating cell
/// ([`FileCheck::cell`]).
fn parse_file(
    name: &str,
    bytes: &[u8],
    sha: &str,
    rubric: &Rubric,
    options: &ImportOptions,
    judge: Option<&str>,
) -> Result<ParsedFile, Vec<Issue>> {
    let table = read_table_bytes(name, bytes, FileFormat::Xlsx, None)?;
    let sheet = table.sheet.clone();
    let mut report = FileReport::new(name, sheet.clone(), "mentalalign", sha);
    let mut issues = Vec::new();

    let conv_col = table.column("ConvID");
    let context_col = table.column("context");
    let rating_cols = rating_columns(&table);
    require_columns(&table, conv_col, context_col, &rating_cols)?;
    let (conv_col, context_col) = (conv_col.unwrap_or(0), context_col.unwrap_or(0));
    let is_judge = rating_cols[0].2;
    if rating_cols.iter().any(|c| c.2 != is_judge) {
        return Err(vec![Issue::error(
            table.whole(),
            "mixed_columns",
            "the file mixes human_response_ and judge_response_ columns; one file holds one rater's ratings"
                .to_string(),
        )]);
    }
    let rater = file_rater(&table, name, is_judge, judge)?;
    report.rater = Some(rater.name.clone());
    let (sources, column_source) = column_sources(&table, &rating_cols, &mut report, &mut issues);

    let mut conversations = Vec::with_capacity(table.rows.len());
    let mut rows_of: HashMap<u64, usize> = HashMap::new();
    let mut check = FileCheck {
        table: &table,
        rubric,
        options,
        is_judge,
        report,
        issues,
        cells: Vec::with_capacity(table.rows.len() * column_source.len()),
        parsed_replies: 0,
    };
    for row in &table.rows {
        let conv = match conv_id(table.cell(row, conv_col)) {
            Ok(n) => n,
            Err(msg) => {
                check.issues.push(Issue::error(
                    table.at(row.number, Some(conv_col)),
                    "bad_id",
                    msg,
                ));
                continue;
            }
        };
        if let Some(first) = rows_of.insert(conv, row.number) {
            check.issues.push(Issue::error(
                table.at(row.number, Some(conv_col)),
                "duplicate_id",
                format!("ConvID {conv} appears again (first in row {first})"),
            ));
            continue;
        }
        let context = table
            .cell(row, context_col)
            .as_text()
            .unwrap_or_default()
            .trim()
            .to_string();
        conversations.push((conv, context, row.number));
        for &(col, source) in &column_source {
            check.cell(row, col, conv, source);
        }
        if check.issues.len() > 500 {
            break;
        }
    }
    let FileCheck {
        report,
        mut issues,
        cells,
        parsed_replies,
        ..
    } = check;
    if is_judge && parsed_replies == 0 && issues.is_empty() {
        issues.push(Issue::error(
            table.whole(),
            "no_scores",
            "no judge reply in this file holds readable scores; is it a MentalAlign judge file?"
                .to_string(),
        ));
    }
    if table.rows.is_empty() {
        issues.push(Issue::error(
            table.whole(),
            "empty_file",
            "the sheet has a header row but no data rows".to_string(),
        ));
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    Ok(ParsedFile {
        rows: ParsedRows {
            rater,
            sources,
            conversations,
            cells,
        },
        report,
    })
}

/// The rating columns of a file: (column, source key, whether it is a judge's).
fn rating_columns(table: &RawTable) -> Vec<(usize, String, bool)> {
    table
        .headers
        .iter()
        .enumerate()
        .filter_map(|(i, h)| {
            let lower = h.to_ascii_lowercase();
            if let Some(key) = lower.strip_prefix(HUMAN_PREFIX) {
                Some((i, key.to_string(), false))
            } else {
                lower
                    .strip_prefix(JUDGE_PREFIX)
                    .map(|key| (i, key.to_string(), true))
            }
        })
        .collect()
}

/// A MentalAlign file has a ConvID, a context and at least one rating column.
fn require_columns(
    table: &RawTable,
    conv_col: Option<usize>,
    context_col: Option<usize>,
    rating_cols: &[(usize, String, bool)],
) -> Result<(), Vec<Issue>> {
    let mut missing = Vec::new();
    if conv_col.is_none() {
        missing.push("ConvID");
    }
    if context_col.is_none() {
        missing.push("context");
    }
    if rating_cols.is_empty() {
        missing.push("human_response_<source> or judge_response_<source>");
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(vec![Issue::error(
        table.whole(),
        "missing_column",
        format!(
            "not a MentalAlign rating file: missing column(s) {}; its columns are {}",
            missing.join(", "),
            table
                .headers
                .iter()
                .map(|h| quoted(h).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )])
}

/// Whose ratings the file holds: the release's expert, or a judge named by the caller, the
/// sheet or the file name (`<model>_llm_judge…`), in that order.
fn file_rater(
    table: &RawTable,
    name: &str,
    is_judge: bool,
    judge: Option<&str>,
) -> Result<RaterSpec, Vec<Issue>> {
    if !is_judge {
        return Ok(RaterSpec {
            kind: RaterKind::Expert,
            name: EXPERT_NAME.to_string(),
            model_id: None,
            family: None,
        });
    }
    let model = judge
        .map(str::to_string)
        .or_else(|| table.sheet.as_deref().and_then(judge_from_sheet))
        .or_else(|| {
            let stem = name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name);
            stem.split("_llm_judge")
                .next()
                .filter(|s| !s.is_empty() && *s != stem)
                .map(str::to_string)
        });
    let Some(model) = model else {
        return Err(vec![Issue::error(
            table.whole(),
            "unknown_judge",
            "cannot tell which judge wrote this file: its sheet name is not a model id; name the judge explicitly"
                .to_string(),
        )]);
    };
    Ok(RaterSpec {
        kind: RaterKind::Judge,
        family: Some(judge_family(&model)),
        name: model.clone(),
        model_id: Some(model),
    })
}

/// The source of each rating column, from the release catalogue (another source is a warning
/// and imported under its own name; a source with two columns is a problem): the sources, and
/// (column, source position) per rating column.
fn column_sources(
    table: &RawTable,
    rating_cols: &[(usize, String, bool)],
    report: &mut FileReport,
    issues: &mut Vec<Issue>,
) -> (Vec<SourceSpec>, Vec<(usize, usize)>) {
    let mut sources = Vec::new();
    let mut column_source = Vec::new();
    for (col, key, _) in rating_cols {
        let spec = match catalog::source_by_key(key) {
            Some(entry) => SourceSpec::from(entry),
            None => {
                report.warnings.push(Issue::warning(
                    table.at(1, Some(*col)),
                    "unknown_source",
                    format!(
                        "source {} is not one of the release's ten; imported under its own name",
                        quoted(&key)
                    ),
                ));
                SourceSpec {
                    key: key.clone(),
                    name: key.clone(),
                    family: Some(judge_family(key)),
                    kind: SourceKind::Llm,
                }
            }
        };
        if sources.contains(&spec) {
            issues.push(Issue::error(
                table.at(1, Some(*col)),
                "duplicate_column",
                format!("source {} has two columns", quoted(&key)),
            ));
        }
        sources.push(spec);
        column_source.push((*col, sources.len() - 1));
    }
    (sources, column_source)
}

/// The check of one file's rating cells as it goes: the cells read, the problems and findings,
/// and how many judge replies held readable scores.
struct FileCheck<'a> {
    table: &'a RawTable,
    rubric: &'a Rubric,
    options: &'a ImportOptions,
    is_judge: bool,
    report: FileReport,
    issues: Vec<Issue>,
    cells: Vec<ParsedCell>,
    parsed_replies: usize,
}

impl FileCheck<'_> {
    /// One rating cell (conversation `conv`, source position `source`): an empty cell is a
    /// finding; a judge's reply without readable scores is kept verbatim and reported, an
    /// expert's cell that is not a score object is a problem; the scores are classified
    /// ([`score_cell`]).
    fn cell(&mut self, row: &RawRow, col: usize, conv: u64, source: usize) {
        let (table, rubric) = (self.table, self.rubric);
        let at = || table.at(row.number, Some(col));
        let cell = table.cell(row, col);
        let text = match cell {
            c if c.is_blank() => {
                self.report.quality.push(QualityItem {
                    kind: QualityKind::EmptyCell,
                    at: at(),
                    criterion: None,
                    value: None,
                    action: "missing".into(),
                });
                return;
            }
            Cell::Text(t) => t,
            other => {
                self.issues.push(Issue::error(
                    at(),
                    "not_json",
                    format!(
                        "expected a JSON object with the attribute scores, found {:?}",
                        other.as_text().unwrap_or_default()
                    ),
                ));
                return;
            }
        };
        let object = if self.is_judge {
            match judge_object(text, self.options.replies, rubric) {
                ScoreObject::Parsed(o) => {
                    self.parsed_replies += 1;
                    o
                }
                ScoreObject::Unparsed => {
                    self.report.quality.push(QualityItem {
                        kind: QualityKind::UnparsedReply,
                        at: at(),
                        criterion: None,
                        value: Some(excerpt(text, 80)),
                        action: "missing".into(),
                    });
                    self.cells.push(unread_cell(conv, source, text));
                    return;
                }
            }
        } else {
            match expert_object(text) {
                Ok(o) => o,
                Err(msg) => {
                    self.issues.push(Issue::error(at(), "not_json", msg));
                    return;
                }
            }
        };
        let mut findings = QualityReport::default();
        match score_cell(
            &object,
            rubric,
            self.options.out_of_scale,
            &at,
            &mut findings,
        ) {
            Ok((values, rationale, extra)) => {
                for item in findings.items {
                    self.report.quality.push(item);
                }
                self.cells.push(ParsedCell {
                    conv,
                    source,
                    values,
                    rationale,
                    extra,
                    raw_reply: None,
                })
            }
            // A judge's reply whose scores cannot be read (an attribute given as a nested
            // object, a word, 3.5) is what the documentation promises to keep verbatim and
            // report; the reply does not reject the file. An expert's cell is data the lead
            // must fix, so it does.
            Err(e) if self.is_judge => {
                self.parsed_replies -= 1;
                self.report.quality.push(QualityItem {
                    kind: QualityKind::UnparsedReply,
                    at: at(),
                    criterion: None,
                    value: Some(excerpt(
                        &format!(
                            "{}: {text}",
                            e.first().map(|i| i.message.as_str()).unwrap_or_default()
                        ),
                        120,
                    )),
                    action: "missing".into(),
                });
                self.cells.push(unread_cell(conv, source, text));
            }
            Err(mut e) => self.issues.append(&mut e),
        }
    }
}

/// A judge's reply kept verbatim, without scores.
fn unread_cell(conv: u64, source: usize, text: &str) -> ParsedCell {
    ParsedCell {
        conv,
        source,
        values: Vec::new(),
        rationale: None,
        extra: Map::new(),
        raw_reply: Some(text.to_string()),
    }
}

type CellValues = (
    Vec<(String, Option<i64>, Option<String>)>,
    Option<String>,
    Map<String, Value>,
);

/// Validate one score object: every attribute classified, `Explanation` as rationale, other keys
/// kept as extra data.
fn score_cell(
    object: &Map<String, Value>,
    rubric: &Rubric,
    policy: OutOfScale,
    at: &dyn Fn() -> Location,
    findings: &mut QualityReport,
) -> Result<CellValues, Vec<Issue>> {
    let mut values = Vec::with_capacity(rubric.criteria.len());
    let mut rationale = None;
    let mut extra = Map::new();
    let mut issues = Vec::new();
    let mut found = vec![false; rubric.criteria.len()];
    for (key, value) in object {
        if let Some(pos) = rubric.criteria.iter().position(|c| c.answers_to(key)) {
            let criterion = &rubric.criteria[pos];
            if found[pos] {
                issues.push(Issue::error(
                    at(),
                    "duplicate_attribute",
                    format!("{} is given twice", criterion.id),
                ));
                continue;
            }
            found[pos] = true;
            let quality = |kind, value: &str, action: &str| QualityItem {
                kind,
                at: at(),
                criterion: Some(criterion.id.clone()),
                value: Some(value.to_string()),
                action: action.to_string(),
            };
            match classify(value, &criterion.scale) {
                Ok(Score::OnScale(v)) => values.push((criterion.id.clone(), Some(v), None)),
                Ok(Score::OneStepOut(v)) => {
                    let raw = v.to_string();
                    let stored = match policy {
                        OutOfScale::Keep => Some(v),
                        OutOfScale::Missing => None,
                    };
                    findings.push(quality(
                        QualityKind::OutOfScale,
                        &raw,
                        policy_action(policy),
                    ));
                    values.push((criterion.id.clone(), stored, Some(raw)));
                }
                Ok(Score::Null) => {
                    findings.push(quality(QualityKind::NullValue, "null", "missing"));
                    values.push((criterion.id.clone(), None, Some("null".into())));
                }
                Ok(Score::Empty) => {
                    findings.push(quality(QualityKind::EmptyValue, "", "missing"));
                    values.push((criterion.id.clone(), None, Some(String::new())));
                }
                Err(msg) => issues.push(Issue::error(
                    at(),
                    "bad_score",
                    format!(
                        "{}: {msg}",
                        criterion.label.get("en").unwrap_or(&criterion.id)
                    ),
                )),
            }
        } else if key.trim().eq_ignore_ascii_case("explanation") {
            rationale = value
                .as_str()
                .map(str::to_string)
                .or_else(|| (!value.is_null()).then(|| value.to_string()));
        } else {
            extra.insert(key.trim().to_string(), value.clone());
        }
    }
    if !found.iter().any(|f| *f) {
        issues.push(Issue::error(
            at(),
            "no_attributes",
            format!(
                "the JSON object names none of the attributes ({}); its keys are {}",
                rubric
                    .criteria
                    .iter()
                    .map(|c| c.label.get("en").cloned().unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join(", "),
                object
                    .keys()
                    .map(|k| quoted(k).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    } else {
        for (pos, criterion) in rubric.criteria.iter().enumerate() {
            if !found[pos] {
                findings.push(QualityItem {
                    kind: QualityKind::MissingAttribute,
                    at: at(),
                    criterion: Some(criterion.id.clone()),
                    value: None,
                    action: "missing".into(),
                });
            }
        }
    }
    if issues.is_empty() {
        Ok((values, rationale, extra))
    } else {
        Err(issues)
    }
}

fn policy_action(policy: OutOfScale) -> &'static str {
    match policy {
        OutOfScale::Keep => "kept",
        OutOfScale::Missing => "missing",
    }
}

/// A conversation id: a positive whole number, as a number cell or as text.
pub(crate) fn conv_id(cell: &Cell) -> Result<u64, String> {
    let x = match cell {
        Cell::Number(x) => *x,
        Cell::Text(t) => t
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("ConvID {} is not a number", quoted(t)))?,
        Cell::Empty => return Err("ConvID is empty".to_string()),
        other => {
            return Err(format!(
                "ConvID {} is not a number",
                quoted(&other.as_text().unwrap_or_default())
            ))
        }
    };
    if !(x.is_finite() && x >= 1.0 && x.fract() == 0.0 && x < 1e12) {
        return Err(format!("ConvID {x} is not a positive whole number"));
    }
    Ok(x as u64)
}

/// The raw table of a MentalAlign file, for callers that want to look before importing.
pub fn read_file(path: &Path) -> Result<RawTable, Vec<Issue>> {
    crate::files::table::read_table(path, FileFormat::Xlsx, None)
}
