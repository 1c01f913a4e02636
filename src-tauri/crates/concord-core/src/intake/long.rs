//! Generic long form (CSV, JSON Lines or XLSX), with column names chosen by the user:
//! - items: `conversation_id, context, response_id, source, text` — one row per response, and
//!   an optional `category` (the conversation's risk type, which agreement can be split by; the
//!   rows of one conversation must agree on it, an empty cell is no category);
//!   conversation ids are used as the study's external ids as written (so `mentalbench:12` meets
//!   the released datasets), response ids become the responses' external ids;
//! - ratings: `item, rater, criterion, score`, optional `rationale` — one row per rating; `item`
//!   (or `target`) names a response by its external id, `criterion` any key of the rubric. A header
//!   with `conversation_id` instead of `item` names the items of a conversation: with a reply
//!   rubric `conversation_id, turn, source` (`source` empty, or no such column, where the turn has
//!   a single reply; an earlier release's single-turn answer is turn 2), with a session rubric
//!   `conversation_id` alone (its session item).
//!
//! Sources are looked up in the release catalogue by key or MentalBench column name; other
//! sources are created under the name given (family guessed from the name like a judge's). Raters
//! already in the study keep their kind; new ones get the kind the user chose (judges get a model
//! id equal to their name and a family from it). The same rating twice in one file, an unknown
//! item or criterion, or a score that cannot be one rejects the import; an empty score is
//! missing (reported, not stored).

use super::catalog::{judge_family, source_by_key, source_by_mentalbench_column};
use super::index::{RaterSpec, SourceSpec, StudyIndex};
use super::land;
use super::FileReport;
use super::FileStatus;
use super::ImportError;
use super::ImportOptions;
use super::ImportReport;
use super::OutOfScale;
use super::QualityItem;
use super::QualityKind;
use super::{prepare, Formats, Prepared};
use super::{ImportProgress, PROGRESS_EVERY_ROWS};
use crate::base::digest::sha256_reader;
use crate::base::text::quoted;
use crate::files::bounds::ReadLimits;
use crate::files::csv_rows::CsvRow;
use crate::files::csv_rows::CsvRows;
use crate::files::json_lines::JsonLines;
use crate::files::table::check_headers;
use crate::files::table::display_name;
use crate::files::table::object_cells;
use crate::files::table::Cell;
use crate::files::table::FileFormat;
use crate::files::table::RawRow;
use crate::files::table::RawTable;
use crate::files::Issue;
use crate::files::Location;
use crate::rubric::reply::classify_number;
use crate::rubric::reply::Score;
use crate::rubric::{builtin, Criterion, Rubric};
use crate::store::{
    ImportedRating, NewConversation, RaterKind, RatingImport, SourceKind, Store, StudyTx,
};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::cell::Cell as Shared;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::rc::Rc;

/// Column names of an items file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemColumns {
    pub conversation: String,
    pub context: String,
    pub response: String,
    pub source: String,
    pub text: String,
    /// The conversation's category: read when the file has this column.
    pub category: String,
}

impl Default for ItemColumns {
    fn default() -> Self {
        ItemColumns {
            conversation: "conversation_id".into(),
            context: "context".into(),
            response: "response_id".into(),
            source: "source".into(),
            text: "text".into(),
            category: "category".into(),
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
pub(super) fn find_rubric(store: &Store, key: &str, at: &Location) -> Result<Rubric, ImportError> {
    if let Some(s) = store.rubrics()?.into_iter().find(|s| s.rubric.id == key) {
        return Ok(s.rubric);
    }
    builtin::by_id(key).ok_or_else(|| {
        ImportError::one(
            at.clone(),
            "unknown_rubric",
            format!("no rubric {} in the study or built in", quoted(&key)),
        )
    })
}

pub(super) fn required(table: &RawTable, names: &[(&str, &str)]) -> Result<Vec<usize>, Vec<Issue>> {
    let mut missing = Vec::new();
    let mut out = Vec::new();
    for (role, name) in names {
        match table.column(name) {
            Some(c) => out.push(c),
            None => missing.push(format!("{} ({role})", quoted(&name))),
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
                    .map(|h| quoted(h).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )])
    }
}

/// The key a source named in a file is stored under (the release catalogue's key, or the name).
pub(super) fn source_key(name: &str) -> String {
    source_spec(name).key
}

pub(super) fn source_spec(name: &str) -> SourceSpec {
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

/// What the items importer keeps of the rows read so far, to find repeated ids: each id once,
/// with the row it first appears in; a conversation's context as its SHA-256, not its text.
#[derive(Default)]
struct SeenItems {
    /// Response id → the row it first appears in.
    responses: HashMap<Box<str>, usize>,
    /// Conversation id → what is known of it.
    conversations: HashMap<Box<str>, SeenConversation>,
    /// Source key → its position among the file's sources.
    sources: HashMap<String, u32>,
    /// (conversation, source) positions → the row of their response.
    pairs: HashMap<(u32, u32), usize>,
}

/// A conversation as first read: its position, its context's digest and that row.
struct SeenConversation {
    position: u32,
    context: [u8; 32],
    row: usize,
    /// Its category as its first row gives it.
    category: Option<Box<str>>,
    /// Its id in the study once written, and whether the study held it with another context
    /// (the same for every row of it, as the rows agree on the context).
    stored: Option<(i64, bool)>,
}

fn context_digest(context: &str) -> [u8; 32] {
    Sha256::digest(context.as_bytes()).into()
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
    import_items_reporting(
        store,
        path,
        rubric_key,
        columns,
        sheet,
        options,
        &mut |_| {},
    )
}

/// [`import_items`], telling `progress` how far it has come (see [`ImportProgress`]). A CSV
/// file is read as a stream and written row by row in one transaction (rolled back if any row
/// is refused), so memory grows only with the ids it names, not with its text; JSON Lines and
/// XLSX are read within the read limits.
pub fn import_items_reporting(
    store: &mut Store,
    path: &Path,
    rubric_key: &str,
    columns: &ItemColumns,
    sheet: Option<&str>,
    options: &ImportOptions,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<ImportReport, ImportError> {
    let file = LongFile {
        path,
        sheet,
        kind: "long-items",
        options,
    };
    file.import(store, progress, &mut |store, file| {
        write_items(store, file, rubric_key, columns, options)
    })
}

/// One long-form file to import and how to tell what it is.
struct LongFile<'p> {
    path: &'p Path,
    sheet: Option<&'p str>,
    /// The format named in the file's report and import record.
    kind: &'static str,
    options: &'p ImportOptions,
}

/// A long-form file's rows as [`LongFile::import`] hands them to its writer.
struct FileRows<'t, 'a> {
    /// The file, sheet and columns.
    header: &'t RawTable,
    rows: RatingRows<'t>,
    /// Reads the rows anew.
    again: &'a dyn Fn() -> Result<RatingRows<'t>, ImportError>,
    /// The file's SHA-256.
    sha: &'a str,
    /// Told how many rows have been read.
    progress: &'a mut dyn FnMut(u64),
}

/// Writes a long-form file's rows in one transaction.
type WriteRows<'w> =
    dyn for<'t, 'a> FnMut(&mut Store, FileRows<'t, 'a>) -> Result<FileReport, ImportError> + 'w;

impl LongFile<'_> {
    /// Recognise a file imported before, then hand its rows to `write`: a CSV file as a stream
    /// (its size and row count unlimited, progress from the bytes read), JSON Lines and XLSX as
    /// a table read within the read limits. The last report (`done == total`) comes once the
    /// import has landed.
    fn import(
        &self,
        store: &mut Store,
        progress: &mut dyn FnMut(ImportProgress),
        write: &mut WriteRows<'_>,
    ) -> Result<ImportReport, ImportError> {
        let (path, options) = (self.path, self.options);
        let name = display_name(path);
        let landed = |out: FileReport| ImportReport {
            options: options.clone(),
            files: vec![out],
        };
        if FileFormat::from_name(&name) == Some(FileFormat::Csv) {
            let sha = sha256_file(path)?;
            if store.read().import_by_hash(&sha)?.is_some() {
                let mut done = FileReport::new(&name, None, self.kind, &sha);
                done.status = FileStatus::AlreadyImported;
                return Ok(landed(done));
            }
            let read = Rc::new(Shared::new(0u64));
            let open = |read: Rc<Shared<u64>>| open_counted(path, &name, read);
            let total = std::fs::metadata(path).map_or(0, |m| m.len());
            let reader = open(read.clone())?;
            let header = RawTable {
                file: name.clone(),
                sheet: None,
                headers: reader.headers().to_vec(),
                rows: Vec::new(),
            };
            check_headers(&header).map_err(ImportError::Rejected)?;
            // What is read lies ahead of what is written by at most the reader's buffer.
            let (mut done, mut rows_read) = (0, 0);
            let out = write(
                store,
                FileRows {
                    header: &header,
                    rows: RatingRows::Stream(Box::new(reader)),
                    again: &|| {
                        open(Rc::new(Shared::new(0))).map(|r| RatingRows::Stream(Box::new(r)))
                    },
                    sha: &sha,
                    progress: &mut |rows| {
                        done = read.get().clamp(done, total.saturating_sub(1));
                        rows_read = rows;
                        progress(ImportProgress { done, total, rows });
                    },
                },
            )?;
            progress(ImportProgress {
                done: total,
                total,
                rows: rows_read,
            });
            return Ok(landed(out));
        }
        let p = match prepare(store, path, self.sheet, "long", "long-form", Formats::Any)? {
            Prepared::Read(p) => p,
            Prepared::AlreadyImported(done) => return Ok(landed(done)),
        };
        let table = &p.table;
        let total = table.rows.len() as u64;
        let out = write(
            store,
            FileRows {
                header: table,
                rows: RatingRows::Table { table, next: 0 },
                again: &|| Ok(RatingRows::Table { table, next: 0 }),
                sha: &p.sha,
                progress: &mut |rows| {
                    progress(ImportProgress {
                        done: rows.min(total.saturating_sub(1)),
                        total,
                        rows,
                    })
                },
            },
        )?;
        progress(ImportProgress {
            done: total,
            total,
            rows: total,
        });
        Ok(landed(out))
    }
}

/// Validate every row of an items file and write it as it is read, in one transaction: rolled
/// back, with every problem found, if any row is refused. Once a problem is known nothing more
/// is written; the rows are still read, to find the others. Problems of the file itself (a
/// broken quote, bad bytes) are reported alone, as when the file is read whole.
fn write_items(
    store: &mut Store,
    file: FileRows<'_, '_>,
    rubric_key: &str,
    columns: &ItemColumns,
    options: &ImportOptions,
) -> Result<FileReport, ImportError> {
    let FileRows {
        header,
        mut rows,
        sha,
        progress,
        ..
    } = file;
    let rubric = find_rubric(store, rubric_key, &header.whole())?;
    let cols = required(
        header,
        &[
            ("conversation", &columns.conversation),
            ("context", &columns.context),
            ("response", &columns.response),
            ("source", &columns.source),
            ("text", &columns.text),
        ],
    )
    .map_err(ImportError::Rejected)?;
    let report = FileReport::new(&header.file, header.sheet.clone(), "long-items", sha);
    store.write(|tx| {
        land(tx, report, options, |tx, report| {
            let rubric_id = tx.add_rubric(&rubric)?;
            let mut items = ItemsWrite {
                header,
                cols: &cols,
                category_col: header.column(&columns.category),
                columns,
                rubric_id,
                index: StudyIndex::load(tx)?,
                existing: tx.response_external_ids()?,
                seen: SeenItems::default(),
                issues: Vec::new(),
                refused_write: None,
                accepted: 0,
            };
            let mut read_issues = Vec::new();
            let mut counted = 0u64;
            let rows_read = rows.each(&mut read_issues, |row, read_issues| {
                counted += 1;
                if counted.is_multiple_of(PROGRESS_EVERY_ROWS) {
                    progress(counted);
                }
                let Some(item) = items.check(row) else {
                    return Ok(());
                };
                if !items.issues.is_empty()
                    || !read_issues.is_empty()
                    || items.refused_write.is_some()
                {
                    // The import is refused anyway: only look for further problems.
                    return Ok(());
                }
                items.write(tx, row, item, report)
            })?;
            progress(rows_read as u64);
            items.finish(read_issues)
        })
    })
}

/// The writing of an items file as its rows are read: where its columns are, the study's index,
/// the response ids the study already holds, what the rows named so far, and the problems found.
struct ItemsWrite<'a> {
    header: &'a RawTable,
    /// The conversation, context, response, source and text columns.
    cols: &'a [usize],
    /// The category column, when the file has one.
    category_col: Option<usize>,
    columns: &'a ItemColumns,
    rubric_id: i64,
    index: StudyIndex,
    /// Response external id → response, as the study held them before the import.
    existing: HashMap<String, i64>,
    seen: SeenItems,
    issues: Vec<Issue>,
    /// A response id already naming another response of the study: found while writing,
    /// reported only when the rows themselves hold no problem (as when all were checked first).
    refused_write: Option<ImportError>,
    /// Rows that passed their check.
    accepted: usize,
}

/// An items row that passed its check: its row number, ids and context, and its source.
struct ItemRow<'r> {
    number: usize,
    conversation: Cow<'r, str>,
    context: Cow<'r, str>,
    response: Cow<'r, str>,
    category: Option<Cow<'r, str>>,
    spec: SourceSpec,
}

impl ItemsWrite<'_> {
    /// Row `row`, column `column` (one of the five) as a location.
    fn at(&self, row: usize, column: usize) -> Location {
        self.header.at(row, Some(self.cols[column]))
    }

    /// A problem of row `number` in column `column`, listed while fewer than [`ITEM_ISSUES`] are.
    fn problem(
        &mut self,
        number: usize,
        column: usize,
        code: &str,
        message: impl FnOnce() -> String,
    ) {
        if self.issues.len() < ITEM_ISSUES {
            self.issues
                .push(Issue::error(self.at(number, column), code, message()));
        }
    }

    /// Check one row against the rows before it: its ids, context and source present, its
    /// response id new, its conversation without a response from the source yet, and the same
    /// context as the conversation's other rows. The row's fields when it passes.
    fn check<'r>(&mut self, row: &'r dyn RatingRow) -> Option<ItemRow<'r>> {
        let number = row.number();
        let mut missing = false;
        for (i, what) in [
            (0, "conversation id"),
            (1, "context"),
            (2, "response id"),
            (3, "source"),
        ] {
            if row.text(self.cols[i]).is_none() {
                self.problem(number, i, "missing_value", || {
                    format!("the {what} is empty")
                });
                missing = true;
            }
        }
        if missing {
            return None;
        }
        let conversation = row.text(self.cols[0]).unwrap_or_default();
        let context = row.untrimmed(self.cols[1]).unwrap_or_default();
        let response = row.text(self.cols[2]).unwrap_or_default();
        let source_name = row.text(self.cols[3]).unwrap_or_default();
        let category = self.category_col.and_then(|c| row.text(c));
        if let Some(&first) = self.seen.responses.get(response.as_ref()) {
            self.problem(number, 2, "duplicate_id", || {
                format!(
                    "response id {} appears again (first in row {first})",
                    quoted(&response)
                )
            });
            return None;
        }
        self.seen.responses.insert(response.as_ref().into(), number);
        let spec = source_spec(&source_name);
        let seen = &mut self.seen;
        let source_at = match seen.sources.get(&spec.key) {
            Some(&known) => known,
            None => {
                let next = seen.sources.len() as u32;
                seen.sources.insert(spec.key.clone(), next);
                next
            }
        };
        let digest = context_digest(&context);
        let next_conversation = seen.conversations.len() as u32;
        let (conversation_at, same_context, same_category, context_row) =
            match seen.conversations.get(conversation.as_ref()) {
                Some(c) => (
                    c.position,
                    c.context == digest,
                    c.category.as_deref() == category.as_deref(),
                    c.row,
                ),
                None => (next_conversation, true, true, number),
            };
        if let Some(&first) = seen.pairs.get(&(conversation_at, source_at)) {
            self.problem(number, 3, "duplicate_response", || {
                format!(
                    "conversation {} already has a response from {} (row {first})",
                    quoted(&conversation),
                    quoted(&source_name)
                )
            });
            return None;
        }
        seen.pairs.insert((conversation_at, source_at), number);
        if conversation_at == next_conversation {
            seen.conversations.insert(
                conversation.as_ref().into(),
                SeenConversation {
                    position: conversation_at,
                    context: digest,
                    row: number,
                    category: category.as_deref().map(Box::from),
                    stored: None,
                },
            );
        }
        if !same_context {
            self.problem(number, 1, "context_conflict", || {
                format!(
                    "conversation {} has a different context in row {context_row}",
                    quoted(&conversation)
                )
            });
            return None;
        }
        if !same_category {
            if let Some(column) = self.category_col {
                if self.issues.len() < ITEM_ISSUES {
                    self.issues.push(Issue::error(
                        self.header.at(number, Some(column)),
                        "category_conflict",
                        format!(
                            "conversation {} has a different category in row {context_row}",
                            quoted(&conversation)
                        ),
                    ));
                }
            }
            return None;
        }
        self.accepted += 1;
        Some(ItemRow {
            number,
            conversation,
            context,
            response,
            category,
            spec,
        })
    }

    /// Write a checked row: its conversation (once; a context differing from the study's is a
    /// finding), its source, its response with the text, and the response's id (refused when
    /// it already names another response).
    fn write(
        &mut self,
        tx: &mut StudyTx<'_>,
        row: &dyn RatingRow,
        item: ItemRow<'_>,
        report: &mut FileReport,
    ) -> Result<(), ImportError> {
        let ItemRow {
            number,
            conversation,
            context,
            response,
            category,
            spec,
        } = item;
        let cached = self
            .seen
            .conversations
            .get(conversation.as_ref())
            .and_then(|c| c.stored);
        let (conversation_id, context_differs) = match cached {
            Some(stored) => stored,
            None => {
                let c = self.index.conversation(
                    tx,
                    &NewConversation {
                        external_id: &conversation,
                        rubric_id: self.rubric_id,
                        context: &context,
                        language: None,
                        category: category.as_deref(),
                    },
                )?;
                report.conversations_added += c.added as usize;
                if let Some(entry) = self.seen.conversations.get_mut(conversation.as_ref()) {
                    entry.stored = Some((c.id, c.context_differs));
                }
                (c.id, c.context_differs)
            }
        };
        if context_differs {
            report.quality.push(QualityItem {
                kind: QualityKind::ContextMismatch,
                at: Location {
                    file: report.file.clone(),
                    sheet: report.sheet.clone(),
                    row: Some(number),
                    column: Some(self.columns.context.clone()),
                },
                criterion: None,
                value: Some(conversation.to_string()),
                action: "reported".into(),
            });
        }
        let source_id = self.index.source(tx, &spec)?;
        let text = row.untrimmed(self.cols[4]);
        let (response_id, added, filled) =
            self.index
                .response(tx, conversation_id, source_id, text.as_deref())?;
        report.responses_added += added as usize;
        report.texts_filled += filled as usize;
        match self.existing.get(response.as_ref()) {
            Some(&id) if id != response_id => {
                self.refused_write = Some(ImportError::one(
                    Location {
                        file: report.file.clone(),
                        sheet: report.sheet.clone(),
                        row: Some(number),
                        column: Some(self.columns.response.clone()),
                    },
                    "duplicate_id",
                    format!(
                        "response id {} already names another response in the study (a different conversation or source); give this response its own id",
                        quoted(&response)
                    ),
                ));
            }
            Some(_) => {}
            None => tx.set_response_external_id(response_id, &response)?,
        }
        Ok(())
    }

    /// Once every row is read: the file's own problems alone if it has any, else the rows'
    /// (an empty file is one), else a refused write; nothing when the file imports.
    fn finish(mut self, read_issues: Vec<Issue>) -> Result<(), ImportError> {
        if !read_issues.is_empty() {
            return Err(ImportError::Rejected(read_issues));
        }
        if self.accepted == 0 && self.issues.is_empty() {
            self.issues.push(Issue::error(
                self.header.whole(),
                "empty_file",
                "the file has a header row but no data rows".to_string(),
            ));
        }
        if !self.issues.is_empty() {
            return Err(ImportError::Rejected(self.issues));
        }
        if let Some(refused) = self.refused_write {
            return Err(refused);
        }
        Ok(())
    }
}

/// The rows of a ratings file: a CSV file streamed row by row (memory flat in its length), or
/// a JSON Lines or XLSX file already read into a table within the read limits.
pub(super) enum RatingRows<'a> {
    Stream(Box<CsvRows<'a>>),
    Table {
        table: &'a RawTable,
        next: usize,
    },
    /// JSON Lines streamed object by object, each read as the cells of `headers`.
    Lines {
        lines: Box<JsonLines<'a>>,
        headers: &'a [String],
        limits: ReadLimits,
        /// Data rows read so far.
        records: usize,
    },
}

/// What the ratings importer needs of one row.
pub(super) trait RatingRow {
    /// The row as the user sees it.
    fn number(&self) -> usize;
    /// The cell's text, trimmed; `None` when it is blank.
    fn text(&self, column: usize) -> Option<Cow<'_, str>>;
    /// The cell's text as written; `None` when it is blank.
    fn untrimmed(&self, column: usize) -> Option<Cow<'_, str>>;
}

impl RatingRow for CsvRow<'_> {
    fn number(&self) -> usize {
        self.line
    }

    fn text(&self, column: usize) -> Option<Cow<'_, str>> {
        Some(self.trimmed(column)).filter(|t| !t.is_empty())
    }

    fn untrimmed(&self, column: usize) -> Option<Cow<'_, str>> {
        Some(CsvRow::text(self, column)).filter(|t| !t.trim().is_empty())
    }
}

pub(super) struct TableRow<'t>(pub(super) &'t RawRow);

impl RatingRow for TableRow<'_> {
    fn number(&self) -> usize {
        self.0.number
    }

    fn text(&self, column: usize) -> Option<Cow<'_, str>> {
        match self.0.cells.get(column)? {
            Cell::Text(t) => Some(Cow::Borrowed(t.trim())),
            other => other.as_text().map(|t| Cow::Owned(t.trim().to_string())),
        }
        .filter(|t| !t.is_empty())
    }

    fn untrimmed(&self, column: usize) -> Option<Cow<'_, str>> {
        match self.0.cells.get(column)? {
            Cell::Text(t) => Some(Cow::Borrowed(t.as_str())),
            other => other.as_text().map(Cow::Owned),
        }
        .filter(|t| !t.trim().is_empty())
    }
}

impl RatingRows<'_> {
    /// Call `visit` with every row; problems of the file itself (a broken quote, bad bytes) are
    /// collected in `issues`, and reading stops once [`MAX_ISSUES`] are known.
    pub(super) fn each(
        &mut self,
        issues: &mut Vec<Issue>,
        mut visit: impl FnMut(&dyn RatingRow, &mut Vec<Issue>) -> Result<(), ImportError>,
    ) -> Result<usize, ImportError> {
        let mut rows = 0;
        match self {
            RatingRows::Stream(reader) => {
                while let Some(row) = reader.next_row() {
                    match row {
                        Ok(row) => {
                            rows += 1;
                            visit(&row, issues)?;
                        }
                        Err(mut found) => issues.append(&mut found),
                    }
                    if issues.len() >= MAX_ISSUES {
                        break;
                    }
                }
            }
            RatingRows::Table { table, next } => {
                while let Some(row) = table.rows.get(*next) {
                    *next += 1;
                    rows += 1;
                    visit(&TableRow(row), issues)?;
                    if issues.len() >= MAX_ISSUES {
                        break;
                    }
                }
            }
            RatingRows::Lines {
                lines,
                headers,
                limits,
                records,
            } => {
                while let Some(line) = lines.next_object() {
                    let line = match line {
                        Ok(line) => line,
                        Err(issue) => {
                            issues.push(issue);
                            continue;
                        }
                    };
                    let number = line.line;
                    let at = |column: Option<String>| Location {
                        column,
                        ..Location::file_row(lines.file(), number)
                    };
                    match object_cells(line.object, headers, limits, &at) {
                        Ok(cells) => {
                            *records += 1;
                            rows += 1;
                            let row = RawRow {
                                number,
                                record: *records,
                                cells,
                            };
                            visit(&TableRow(&row), issues)?;
                        }
                        Err(mut found) => issues.append(&mut found),
                    }
                    if issues.len() >= MAX_ISSUES {
                        break;
                    }
                }
            }
        }
        Ok(rows)
    }
}

/// Reading stops once this many problems are known.
pub(super) const MAX_ISSUES: usize = 200;

/// Problems with the rows of an items file listed at most (the file is read to its end).
const ITEM_ISSUES: usize = 10_000;

/// Which (rater, response, criterion) the file has named so far: one bit each, a bitset per
/// rater over the study's responses × the rubric's criteria, so a file of millions of rows needs
/// kilobytes, not a set of strings.
struct SeenRatings {
    responses: usize,
    criteria: usize,
    per_rater: Vec<Vec<u64>>,
}

impl SeenRatings {
    /// Mark a rating as seen; false when it was seen before.
    fn first_time(&mut self, rater: usize, response: usize, criterion: usize) -> bool {
        if self.per_rater.len() <= rater {
            let words = (self.responses * self.criteria).div_ceil(64);
            self.per_rater.resize_with(rater + 1, || vec![0; words]);
        }
        let bit = response * self.criteria + criterion;
        let word = &mut self.per_rater[rater][bit / 64];
        let mask = 1u64 << (bit % 64);
        let fresh = *word & mask == 0;
        *word |= mask;
        fresh
    }
}

/// Import a long-form ratings file. A CSV file is read as a stream and written row by row in one
/// transaction (rolled back if any row is refused), so memory stays flat in the number of rows;
/// its size and row count are not limited. JSON Lines and XLSX are read within the read limits.
pub fn import_ratings(
    store: &mut Store,
    path: &Path,
    rubric_key: &str,
    columns: &RatingColumns,
    sheet: Option<&str>,
    options: &ImportOptions,
) -> Result<ImportReport, ImportError> {
    import_ratings_reporting(
        store,
        path,
        rubric_key,
        columns,
        sheet,
        options,
        &mut |_| {},
    )
}

/// A reader that counts the bytes read through it (the progress of a stream).
pub(super) struct Counted<R> {
    inner: R,
    read: Rc<Shared<u64>>,
}

impl<R> Counted<R> {
    /// `inner`, counting the bytes read through it into `read`.
    pub(super) fn new(inner: R, read: Rc<Shared<u64>>) -> Self {
        Counted { inner, read }
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// [`import_ratings`], telling `progress` how far it has come (see [`ImportProgress`]).
pub fn import_ratings_reporting(
    store: &mut Store,
    path: &Path,
    rubric_key: &str,
    columns: &RatingColumns,
    sheet: Option<&str>,
    options: &ImportOptions,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<ImportReport, ImportError> {
    let file = LongFile {
        path,
        sheet,
        kind: "long-ratings",
        options,
    };
    file.import(store, progress, &mut |store, file| {
        write_ratings(store, file, rubric_key, columns, options)
    })
}

/// A CSV file read as a stream, counting the bytes read into `read`.
pub(super) fn open_counted(
    path: &Path,
    name: &str,
    read: Rc<Shared<u64>>,
) -> Result<CsvRows<'static>, ImportError> {
    let file = File::open(path).map_err(|e| {
        ImportError::one(
            Location::whole_file(name),
            "unreadable",
            format!("cannot read the file: {e}"),
        )
    })?;
    let file = Counted { inner: file, read };
    CsvRows::new(name, file, &stream_limits()).map_err(ImportError::Rejected)
}

/// Limits for a CSV file read as a stream: what is held at any time is one row, so the limits on
/// the file's size, rows and cells (which bound a table kept whole) do not apply.
pub(super) fn stream_limits() -> ReadLimits {
    ReadLimits {
        file_bytes: u64::MAX,
        rows: u64::MAX,
        cells: u64::MAX,
        ..ReadLimits::from_env()
    }
}

/// SHA-256 of a file, read in chunks.
pub(super) fn sha256_file(path: &Path) -> Result<String, ImportError> {
    let name = display_name(path);
    let unreadable = |e: std::io::Error| {
        ImportError::one(
            Location::whole_file(&name),
            "unreadable",
            format!("cannot read the file: {e}"),
        )
    };
    let file = File::open(path).map_err(unreadable)?;
    sha256_reader(std::io::BufReader::with_capacity(1 << 16, file)).map_err(unreadable)
}

/// Validate every row of a ratings file and write it, in one transaction: rolled back, with
/// every problem found (up to [`MAX_ISSUES`]), if any row is refused. The file's header names the
/// file, sheet and columns; reading the rows anew is only needed to name the first row of a
/// duplicate.
fn write_ratings(
    store: &mut Store,
    file: FileRows<'_, '_>,
    rubric_key: &str,
    columns: &RatingColumns,
    options: &ImportOptions,
) -> Result<FileReport, ImportError> {
    let FileRows {
        header,
        mut rows,
        again,
        sha,
        progress,
    } = file;
    let rubric = find_rubric(store, rubric_key, &header.whole())?;
    let (addressing, item_name) = Addressing::of(header, columns, &rubric)?;
    let cols = required(
        header,
        &[
            ("item", &item_name),
            ("rater", &columns.rater),
            ("criterion", &columns.criterion),
            ("score", &columns.score),
        ],
    )
    .map_err(ImportError::Rejected)?;
    let existing_raters: HashMap<String, RaterKind> = store
        .raters()?
        .into_iter()
        .map(|r| (r.name, r.kind))
        .collect();
    let report = FileReport::new(&header.file, header.sheet.clone(), "long-ratings", sha);
    store.write(|tx| {
        land(tx, report, options, |tx, report| {
            let rubric_id = tx.add_rubric(&rubric)?;
            let criterion_ids = tx.read().criterion_ids(rubric_id)?;
            // Items by the key the file names them with, with a dense position for the
            // seen-ratings bitsets.
            let items = addressing.items(tx, rubric_id)?;
            let index = StudyIndex::load(tx)?;
            let mut import = tx.begin_rating_import(&format!("import:{}", report.file))?;
            let mut check = RatingsCheck {
                header,
                cols: &cols,
                rationale_col: header.column(&columns.rationale),
                rubric: &rubric,
                columns,
                options,
                existing_raters: &existing_raters,
                criterion_ids,
                seen: SeenRatings {
                    responses: items.count,
                    criteria: rubric.criteria.len(),
                    per_rater: Vec::new(),
                },
                addressing: &addressing,
                responses: items.by_key,
                ambiguous: items.ambiguous,
                index,
                raters: HashMap::new(),
                criteria: HashMap::new(),
                unknown_items: HashSet::new(),
                duplicates: Vec::new(),
                too_many_duplicates: false,
            };
            let mut issues = Vec::new();
            let mut counted = 0u64;
            let rows_read = rows.each(&mut issues, |row, issues| {
                counted += 1;
                if counted.is_multiple_of(PROGRESS_EVERY_ROWS) {
                    progress(counted);
                }
                check.row(tx, &mut import, row, issues, report)
            })?;
            progress(rows_read as u64);
            if !check.duplicates.is_empty() {
                issues.extend(name_duplicates(
                    header,
                    again()?,
                    (&addressing, &cols),
                    &check.duplicates,
                    &rubric,
                )?);
            }
            if rows_read == 0 && issues.is_empty() {
                issues.push(Issue::error(
                    header.whole(),
                    "empty_file",
                    "the file has a header row but no data rows".to_string(),
                ));
            }
            if !issues.is_empty() {
                return Err(ImportError::Rejected(issues));
            }
            let outcome = tx.finish_rating_import(import)?;
            report.ratings_inserted = outcome.inserted;
            report.ratings_updated = outcome.updated;
            let mut names: Vec<String> = check.raters.into_keys().collect();
            names.sort();
            report.rater = Some(names.join(", "));
            Ok(())
        })
    })
}

/// How a ratings file names its items: by a response's external id (`item`, or `target`), or —
/// a header with `conversation_id` and no item column — by conversation, turn and source (a
/// reply rubric's items) or by conversation alone (a session rubric's item).
enum Addressing {
    Item,
    Reply { turn: usize, source: Option<usize> },
    Session,
}

/// The items of the study by the key a ratings file names them with.
struct AddressedItems {
    by_key: HashMap<String, (i64, usize)>,
    /// Items addressed (the dense positions run below it).
    count: usize,
    /// Keys naming several items (a turn of candidates named without a source).
    ambiguous: HashSet<String>,
}

/// Separates the parts of a reply item's key (never in an id a person types).
const KEY_SEPARATOR: char = '\u{1f}';

impl Addressing {
    /// The addressing of a file's header, and the name of its first column (the item's or the
    /// conversation's); a reply rubric's file without a `turn` column is refused.
    fn of(
        header: &RawTable,
        columns: &RatingColumns,
        rubric: &Rubric,
    ) -> Result<(Addressing, String), ImportError> {
        if header.column(&columns.item).is_some() {
            return Ok((Addressing::Item, columns.item.clone()));
        }
        if header.column("target").is_some() {
            return Ok((Addressing::Item, "target".into()));
        }
        if header.column("conversation_id").is_none() {
            return Ok((Addressing::Item, columns.item.clone()));
        }
        let addressing = match (rubric.scope, header.column("turn")) {
            (crate::rubric::Scope::Session, _) => Addressing::Session,
            (crate::rubric::Scope::Reply, Some(turn)) => Addressing::Reply {
                turn,
                source: header.column("source"),
            },
            (crate::rubric::Scope::Reply, None) => {
                return Err(ImportError::one(
                    header.whole(),
                    "missing_column",
                    format!(
                        "rubric {} rates replies: a file naming items by conversation_id needs the columns conversation_id, turn and source (source may be empty where the turn has a single reply)",
                        quoted(&rubric.id)
                    ),
                ))
            }
        };
        Ok((addressing, "conversation_id".into()))
    }

    /// The key of a row's item (`None` when a part it needs is blank): the item id as written,
    /// or the conversation, turn and source's key.
    fn key(&self, row: &dyn RatingRow, first: usize) -> Option<String> {
        let named = row.text(first)?;
        match self {
            Addressing::Item => Some(named.into_owned()),
            Addressing::Session => Some(named.into_owned()),
            Addressing::Reply { turn, source } => {
                let written = row.text(*turn)?;
                let turn = written
                    .parse::<u64>()
                    .ok()
                    .or_else(|| {
                        written
                            .parse::<f64>()
                            .ok()
                            .filter(|x| x.fract() == 0.0 && *x >= 1.0 && *x < 1e15)
                            .map(|x| x as u64)
                    })
                    .map_or_else(|| written.to_string(), |n| n.to_string());
                let source = source
                    .and_then(|c| row.text(c))
                    .map(|s| source_spec(&s).key)
                    .unwrap_or_default();
                Some(format!(
                    "{named}{KEY_SEPARATOR}{turn}{KEY_SEPARATOR}{source}"
                ))
            }
        }
    }

    /// A key as a person reads it: `c1, turn 3, gpt4o`.
    fn shown(&self, key: &str) -> String {
        let mut parts = key.split(KEY_SEPARATOR);
        match (parts.next(), parts.next(), parts.next()) {
            (Some(c), Some(t), Some("")) => format!("{c}, turn {t}"),
            (Some(c), Some(t), Some(s)) => format!("{c}, turn {t}, {s}"),
            _ => key.to_string(),
        }
    }

    /// What a row must name, for the refusal of one that does not.
    fn needs(&self) -> &'static str {
        match self {
            Addressing::Item => "item",
            Addressing::Reply { .. } => "conversation_id, turn",
            Addressing::Session => "conversation_id",
        }
    }

    /// The refusal of a key naming no item (`ambiguous`: several).
    fn unknown(&self, key: &str, ambiguous: bool, rubric: &str) -> String {
        let parts: Vec<&str> = key.split(KEY_SEPARATOR).collect();
        match (self, parts.as_slice()) {
            (Addressing::Reply { .. }, [c, t, _]) if ambiguous => format!(
                "conversation {} has several replies at turn {t} (candidates); name the source",
                quoted(c)
            ),
            (Addressing::Reply { .. }, [c, t, s]) => format!(
                "conversation {} has no reply item at turn {t}{} rated with rubric {}; import the conversations first",
                quoted(c),
                if s.is_empty() { String::new() } else { format!(" from {}", quoted(s)) },
                quoted(&rubric)
            ),
            (Addressing::Session, _) => format!(
                "conversation {} has no session item of rubric {}; import the conversations with it first",
                quoted(&key),
                quoted(&rubric)
            ),
            _ => format!(
                "item {} is not a response id in the study; import the items first",
                quoted(&key)
            ),
        }
    }

    /// The study's items by key: responses by external id, or the items of the rubric's
    /// conversations (a reply also under its conversation and turn alone when it is the turn's
    /// only reply).
    fn items(&self, tx: &StudyTx<'_>, rubric_id: i64) -> Result<AddressedItems, ImportError> {
        let mut by_key = HashMap::new();
        let mut ambiguous = HashSet::new();
        if let Addressing::Item = self {
            by_key = tx
                .response_external_ids()?
                .into_iter()
                .enumerate()
                .map(|(i, (external, id))| (external, (id, i)))
                .collect();
            let count = by_key.len();
            return Ok(AddressedItems {
                by_key,
                count,
                ambiguous,
            });
        }
        let mut count = 0;
        for a in tx.item_addresses(rubric_id)? {
            let key = match (self, a.turn) {
                (Addressing::Session, None) => a.conversation.clone(),
                (Addressing::Session, Some(_)) => continue,
                // An earlier release's single-turn answer follows its user's message: turn 2.
                (_, turn) => {
                    let short = format!(
                        "{}{KEY_SEPARATOR}{}{KEY_SEPARATOR}",
                        a.conversation,
                        turn.unwrap_or(2)
                    );
                    if by_key
                        .insert(short.clone(), (a.response_id, count))
                        .is_some()
                    {
                        ambiguous.insert(short);
                    }
                    format!(
                        "{}{KEY_SEPARATOR}{}{KEY_SEPARATOR}{}",
                        a.conversation,
                        turn.unwrap_or(2),
                        a.source
                    )
                }
            };
            by_key.insert(key, (a.response_id, count));
            count += 1;
        }
        for key in &ambiguous {
            by_key.remove(key);
        }
        Ok(AddressedItems {
            by_key,
            count,
            ambiguous,
        })
    }
}

/// A rating repeated in a file: (row, item, rater, criterion as written, criterion position).
type Duplicate = (usize, String, String, String, usize);

/// The check of a ratings file as its rows are read: where its columns are, the rubric and the
/// study's responses and raters, what the rows named so far, and the repeated ratings.
struct RatingsCheck<'a> {
    header: &'a RawTable,
    /// The item, rater, criterion and score columns.
    cols: &'a [usize],
    rationale_col: Option<usize>,
    rubric: &'a Rubric,
    columns: &'a RatingColumns,
    options: &'a ImportOptions,
    /// Rater name → kind, as the study held them before the import.
    existing_raters: &'a HashMap<String, RaterKind>,
    /// Criterion id → its row id.
    criterion_ids: HashMap<String, i64>,
    /// How the file names its items.
    addressing: &'a Addressing,
    /// Item key (see [`Addressing::key`]) → (response, dense position).
    responses: HashMap<String, (i64, usize)>,
    /// Keys that name several items (a turn of candidates named without a source).
    ambiguous: HashSet<String>,
    index: StudyIndex,
    /// Rater name → (id, position among the file's raters).
    raters: HashMap<String, (i64, usize)>,
    /// Criterion name as written → position in the rubric.
    criteria: HashMap<String, Option<usize>>,
    seen: SeenRatings,
    unknown_items: HashSet<String>,
    /// The first 20 repeated ratings.
    duplicates: Vec<Duplicate>,
    too_many_duplicates: bool,
}

impl RatingsCheck<'_> {
    /// Check one row and, while the file holds no problem, write its rating: item, rater and
    /// criterion present and known (a new rater is created), the rating not named before, the
    /// score on the criterion's scale (an empty one is a finding, not stored).
    fn row(
        &mut self,
        tx: &mut StudyTx<'_>,
        import: &mut RatingImport,
        row: &dyn RatingRow,
        issues: &mut Vec<Issue>,
        report: &mut FileReport,
    ) -> Result<(), ImportError> {
        let (header, cols, rubric) = (self.header, self.cols, self.rubric);
        let at = |row: usize, column: Option<usize>| header.at(row, column);
        let number = row.number();
        let (Some(item), Some(rater), Some(criterion_name)) = (
            self.addressing.key(row, cols[0]),
            row.text(cols[1]),
            row.text(cols[2]),
        ) else {
            issues.push(Issue::error(
                at(number, None),
                "missing_value",
                format!(
                    "{}, rater and criterion must all be present",
                    self.addressing.needs()
                ),
            ));
            return Ok(());
        };
        let Some(position) = self.criterion_position(&criterion_name) else {
            issues.push(Issue::error(
                at(number, Some(cols[2])),
                "unknown_criterion",
                format!(
                    "{} is not a criterion of rubric {}",
                    quoted(&criterion_name),
                    quoted(&rubric.id)
                ),
            ));
            return Ok(());
        };
        let criterion = &rubric.criteria[position];
        let Some(&(response_id, response_at)) = self.responses.get(item.as_str()) else {
            if self.unknown_items.len() < 20 && self.unknown_items.insert(item.clone()) {
                issues.push(Issue::error(
                    at(number, Some(cols[0])),
                    "unknown_item",
                    self.addressing
                        .unknown(&item, self.ambiguous.contains(&item), &rubric.id),
                ));
            }
            return Ok(());
        };
        let (rater_id, rater_at) = self.rater(tx, &rater)?;
        if !self.seen.first_time(rater_at, response_at, position) {
            let shown = self.addressing.shown(&item);
            self.duplicate(number, (&shown, &rater, &criterion_name), position, issues);
            return Ok(());
        }
        let at_score = || at(number, Some(cols[3]));
        let Some(score) = row.text(cols[3]) else {
            report.quality.push(QualityItem {
                kind: QualityKind::EmptyValue,
                at: at_score(),
                criterion: Some(criterion.id.clone()),
                value: None,
                action: "skipped".into(),
            });
            return Ok(());
        };
        let (value, raw) = match score_value(
            &score,
            criterion,
            self.options.out_of_scale,
            at_score,
            report,
        ) {
            Ok(read) => read,
            Err(msg) => {
                issues.push(Issue::error(at_score(), "bad_score", msg));
                return Ok(());
            }
        };
        if !issues.is_empty() {
            // The import is refused anyway: only look for further problems.
            return Ok(());
        }
        let rationale = self
            .rationale_col
            .and_then(|c| row.text(c))
            .map(|t| t.into_owned());
        tx.import_rating(
            import,
            ImportedRating {
                rater_id,
                response_id,
                criterion_id: self.criterion_ids[&criterion.id],
                value,
                raw_value: raw,
                rationale,
            },
        )?;
        Ok(())
    }

    /// The rubric position of a criterion as written (looked up once per name).
    fn criterion_position(&mut self, name: &str) -> Option<usize> {
        match self.criteria.get(name) {
            Some(known) => *known,
            None => {
                let found = self.rubric.criteria.iter().position(|c| c.answers_to(name));
                self.criteria.insert(name.to_string(), found);
                found
            }
        }
    }

    /// A rater's id and position among the file's raters; a rater new to the study is created
    /// with its kind there, else the kind chosen for new raters.
    fn rater(&mut self, tx: &mut StudyTx<'_>, name: &str) -> Result<(i64, usize), ImportError> {
        if let Some(known) = self.raters.get(name) {
            return Ok(*known);
        }
        let kind = self
            .existing_raters
            .get(name)
            .copied()
            .unwrap_or(self.columns.new_rater_kind);
        let spec = RaterSpec {
            kind,
            name: name.to_string(),
            model_id: (kind == RaterKind::Judge).then(|| name.to_string()),
            family: (kind == RaterKind::Judge).then(|| judge_family(name)),
        };
        let id = self.index.rater(tx, &spec, self.options.seed)?;
        let known = (id, self.raters.len());
        self.raters.insert(name.to_string(), known);
        Ok(known)
    }

    /// A rating named again in row `number` ((item, rater, criterion) as written): kept to be
    /// named with its first row, up to 20; past that, one problem says there are more.
    fn duplicate(
        &mut self,
        number: usize,
        (item, rater, criterion_name): (&str, &str, &str),
        position: usize,
        issues: &mut Vec<Issue>,
    ) {
        if self.duplicates.len() < 20 {
            self.duplicates.push((
                number,
                item.to_string(),
                rater.to_string(),
                criterion_name.to_string(),
                position,
            ));
        } else if !self.too_many_duplicates {
            self.too_many_duplicates = true;
            issues.push(Issue::error(
                self.header.at(number, None),
                "duplicate_rating",
                format!("{rater} rated {criterion_name} of {} twice, and more than 20 ratings appear twice; only the first 20 are listed", quoted(&item)),
            ));
        }
    }
}

/// A score as written read on the criterion's scale: the value stored and the raw text kept
/// (one step out of the scale is a finding at `at`, kept or missing as chosen); the problem
/// when it is not a score.
fn score_value(
    score: &str,
    criterion: &Criterion,
    out_of_scale: OutOfScale,
    at: impl Fn() -> Location,
    report: &mut FileReport,
) -> Result<(Option<i64>, Option<String>), String> {
    let number_read = score
        .parse::<f64>()
        .map_err(|_| format!("{} is not a number", quoted(&score)));
    match number_read.and_then(|x| {
        if x.is_finite() {
            classify_number(x, &criterion.scale)
        } else {
            Err(format!("{x} is not a finite number"))
        }
    })? {
        Score::OnScale(v) => Ok((Some(v), None)),
        Score::OneStepOut(v) => {
            report.quality.push(QualityItem {
                kind: QualityKind::OutOfScale,
                at: at(),
                criterion: Some(criterion.id.clone()),
                value: Some(v.to_string()),
                action: match out_of_scale {
                    OutOfScale::Keep => "kept".into(),
                    OutOfScale::Missing => "missing".into(),
                },
            });
            let stored = (out_of_scale == OutOfScale::Keep).then_some(v);
            Ok((stored, Some(v.to_string())))
        }
        Score::Null | Score::Empty => Ok((None, None)),
    }
}

/// A `duplicate_rating` problem for each repeated rating, naming the row where it first appears
/// (found by reading the rows again: only a refused file pays for it).
fn name_duplicates(
    header: &RawTable,
    mut rows: RatingRows<'_>,
    (addressing, cols): (&Addressing, &[usize]),
    duplicates: &[(usize, String, String, String, usize)],
    rubric: &Rubric,
) -> Result<Vec<Issue>, ImportError> {
    // At most 20 duplicates are kept: a linear search is enough.
    let mut first: Vec<Option<usize>> = vec![None; duplicates.len()];
    let mut ignored = Vec::new();
    rows.each(&mut ignored, |row, _| {
        let (Some(item), Some(rater), Some(criterion)) = (
            addressing.key(row, cols[0]).map(|k| addressing.shown(&k)),
            row.text(cols[1]),
            row.text(cols[2]),
        ) else {
            return Ok(());
        };
        let Some(position) = rubric
            .criteria
            .iter()
            .position(|c| c.answers_to(&criterion))
        else {
            return Ok(());
        };
        for (slot, (_, i, r, _, p)) in first.iter_mut().zip(duplicates) {
            if *p == position && *i == item && r == rater.as_ref() {
                slot.get_or_insert(row.number());
            }
        }
        Ok(())
    })?;
    Ok(duplicates
        .iter()
        .zip(first)
        .map(|((number, item, rater, criterion, _), first)| {
            let earlier = first.map_or("an earlier row".to_string(), |r| format!("row {r}"));
            Issue::error(
                header.at(*number, None),
                "duplicate_rating",
                format!(
                    "{rater} rated {criterion} of {} already in {earlier}; the same rating twice is ambiguous",
                    quoted(&item)
                ),
            )
        })
        .collect())
}
