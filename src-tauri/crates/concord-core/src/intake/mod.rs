//! **Row 4** of the core's layers (base 0 · files 1 · rubric 2 · store 3 · intake, judge, guard, workflow 4 · panel 5 · outputs 6 · app 7): intake.
//! Imports `base`, `files`, `rubric` and `store`; never `judge`, `guard`, `workflow` (its row) or
//! anything above.
//!
//! Importers for the datasets as released and for generic long-form files. Every import runs in
//! two phases: [`crate::files::table`] reads raw rows (CSV, JSON Lines or XLSX) without interpreting them, then a
//! format module validates them into domain values, collecting every problem with its file, sheet,
//! row and column instead of stopping at the first. Only when no error was found is anything
//! written, and then in one transaction, so a failed import leaves the study exactly as it was.
//! A file's SHA-256 is recorded in the study; importing the same bytes again is recognised and
//! changes nothing. Every importer ends in `land` (the same bytes checked for again inside the
//! transaction, the rows written, the file recorded); the release layouts read as one table
//! (MentalBench, PsyCrisis) run through `import_release`, the long-form files through
//! `LongFile::import`, and a MentalAlign release (several workbooks checked together) through its
//! own driver.
//!
//! Problems come in two severities. Errors (a score of 3.5, a missing column, a CSV renamed to
//! .xlsx) reject the import. Data-quality findings (a 0 or a 6 on a 1–5 scale, a null score, an
//! empty cell, a judge reply without scores, a PsyCrisis total that disagrees with its parts) are
//! reported and handled as the user chose ([`OutOfScale`], [`ReplyParsing`]); the choice is
//! recorded with the import. A judge reply whose scores cannot be read (not JSON, an attribute
//! given as a nested object or a word, a key given twice) is a finding too: the reply is kept
//! verbatim and reported, and the file imports; an expert's cell that cannot be read is an error.
//! The first phase never trusts a size a file declares (see [`crate::files::bounds`]).

pub mod catalog;
pub mod conversations;
pub mod demo;
mod index;
pub mod long;
pub mod mentalalign;
pub mod mentalbench;
pub mod psycrisis;
pub mod spans;

use crate::files::{bounds, table, Issue, Location, Severity};
use crate::rubric::reply::ReplyParsing;
use crate::store::{Store, StoreError, StudyTx};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Why an import did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The input has errors; nothing was written.
    #[error("{} — nothing was imported", describe(.0))]
    Rejected(Vec<Issue>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ImportError {
    /// The problems that rejected the import (empty for store errors).
    pub fn issues(&self) -> &[Issue] {
        match self {
            ImportError::Rejected(issues) => issues,
            ImportError::Store(_) => &[],
        }
    }

    pub(crate) fn one(at: Location, code: &str, message: String) -> ImportError {
        ImportError::Rejected(vec![Issue::error(at, code, message)])
    }
}

fn describe(issues: &[Issue]) -> String {
    const SHOWN: usize = 10;
    let errors: Vec<&Issue> = issues
        .iter()
        .filter(|i| i.severity == Severity::Error)
        .collect();
    let mut out = match errors.len() {
        1 => "1 problem in the input:".to_string(),
        n => format!("{n} problems in the input:"),
    };
    for issue in errors.iter().take(SHOWN) {
        out.push_str(&format!("\n  {issue}"));
    }
    if errors.len() > SHOWN {
        out.push_str(&format!("\n  … and {} more", errors.len() - SHOWN));
    }
    out.push('\n');
    out
}

/// What to do with a whole-number score one step outside the scale (a 0 or a 6 on 1–5), which
/// the MentalAlign release contains.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum OutOfScale {
    /// Store the value as written (with its raw text), as the paper computed its means.
    #[default]
    Keep,
    /// Store the rating as missing (value NULL), keeping the raw text.
    Missing,
}

impl OutOfScale {
    pub fn as_str(self) -> &'static str {
        match self {
            OutOfScale::Keep => "keep",
            OutOfScale::Missing => "missing",
        }
    }
}

/// How far an import that reads its file as a stream has come: `done` of `total` bytes of the
/// file read and `rows` data rows (a file read whole counts rows: `done` of `total` rows).
/// Reported every [`PROGRESS_EVERY_ROWS`] rows while rows are read, and once more with
/// `done == total` when the import has landed; `done` never goes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportProgress {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub done: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub total: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub rows: u64,
}

/// An import reports its progress after this many rows.
pub const PROGRESS_EVERY_ROWS: u64 = 1 << 13;

/// Choices an import runs with; recorded with the import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportOptions {
    pub out_of_scale: OutOfScale,
    pub replies: ReplyParsing,
    /// Seed of the queue orders of raters the import creates (randomness is passed in).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seed: u64,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            out_of_scale: OutOfScale::Keep,
            replies: ReplyParsing::Strict,
            seed: 0x00C0_FFEE,
        }
    }
}

/// Kinds of data-quality findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum QualityKind {
    /// A whole number one step outside the scale.
    OutOfScale,
    /// A score written as JSON `null`.
    NullValue,
    /// A score written as an empty string.
    EmptyValue,
    /// A rating cell with nothing in it.
    EmptyCell,
    /// An attribute absent from a cell's object.
    MissingAttribute,
    /// A judge reply from which no scores could be read.
    UnparsedReply,
    /// A declared total that differs from the sum of its parts.
    TotalMismatch,
    /// A dimension a PsyCrisis dict did not mention.
    MissingDimension,
    /// A conversation whose context differs from the one already stored.
    ContextMismatch,
}

/// One data-quality finding: where, what value, and what was done with it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct QualityItem {
    pub kind: QualityKind,
    pub at: Location,
    /// The criterion concerned, when the finding is about one attribute of a cell.
    pub criterion: Option<String>,
    /// The value as written (`0`, `6`, `null`, an excerpt of a reply…).
    pub value: Option<String>,
    /// What the import did: `kept`, `missing`, `skipped`, `reported`.
    pub action: String,
}

/// The data-quality report of one file: counts per kind (and per out-of-scale value) and every
/// finding with its location.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct QualityReport {
    /// Out-of-scale values by value as written: `{"0": 231, "6": 8}`.
    pub out_of_scale: std::collections::BTreeMap<String, usize>,
    pub null_values: usize,
    pub empty_values: usize,
    pub empty_cells: usize,
    pub missing_attributes: usize,
    pub unparsed_replies: usize,
    pub total_mismatches: usize,
    pub missing_dimensions: usize,
    pub context_mismatches: usize,
    pub items: Vec<QualityItem>,
}

impl QualityReport {
    pub fn push(&mut self, item: QualityItem) {
        match item.kind {
            QualityKind::OutOfScale => {
                *self
                    .out_of_scale
                    .entry(item.value.clone().unwrap_or_default())
                    .or_default() += 1
            }
            QualityKind::NullValue => self.null_values += 1,
            QualityKind::EmptyValue => self.empty_values += 1,
            QualityKind::EmptyCell => self.empty_cells += 1,
            QualityKind::MissingAttribute => self.missing_attributes += 1,
            QualityKind::UnparsedReply => self.unparsed_replies += 1,
            QualityKind::TotalMismatch => self.total_mismatches += 1,
            QualityKind::MissingDimension => self.missing_dimensions += 1,
            QualityKind::ContextMismatch => self.context_mismatches += 1,
        }
        self.items.push(item);
    }

    /// Number of findings of all kinds.
    pub fn total(&self) -> usize {
        self.items.len()
    }

    /// The counts without the item list (what the audit log keeps besides the items).
    pub fn counts_json(&self) -> serde_json::Value {
        serde_json::json!({
            "out_of_scale": self.out_of_scale,
            "null_values": self.null_values,
            "empty_values": self.empty_values,
            "empty_cells": self.empty_cells,
            "missing_attributes": self.missing_attributes,
            "unparsed_replies": self.unparsed_replies,
            "total_mismatches": self.total_mismatches,
            "missing_dimensions": self.missing_dimensions,
            "context_mismatches": self.context_mismatches,
        })
    }
}

/// Whether a file was imported now or had been before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    Imported,
    /// The same bytes were imported before; nothing was changed.
    AlreadyImported,
}

/// What the import did with one file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FileReport {
    pub file: String,
    pub sheet: Option<String>,
    /// `mentalalign`, `mentalbench`, `psycrisis`, `long-items`, `long-ratings`, `conversations`.
    pub format: String,
    pub sha256: String,
    pub status: FileStatus,
    /// The rater whose ratings the file holds, when it holds one rater's.
    pub rater: Option<String>,
    pub conversations_added: usize,
    pub responses_added: usize,
    pub texts_filled: usize,
    pub ratings_inserted: usize,
    pub ratings_updated: usize,
    pub judgements: usize,
    pub warnings: Vec<Issue>,
    pub quality: QualityReport,
    /// What an import of conversations brought in (only for that format; `null` for the others).
    pub conversation_counts: Option<Box<conversations::ConversationCounts>>,
}

impl FileReport {
    pub(crate) fn new(file: &str, sheet: Option<String>, format: &str, sha256: &str) -> Self {
        FileReport {
            file: file.to_string(),
            sheet,
            format: format.to_string(),
            sha256: sha256.to_string(),
            status: FileStatus::Imported,
            rater: None,
            conversations_added: 0,
            responses_added: 0,
            texts_filled: 0,
            ratings_inserted: 0,
            ratings_updated: 0,
            judgements: 0,
            warnings: Vec::new(),
            quality: QualityReport::default(),
            conversation_counts: None,
        }
    }

    /// The summary recorded with the import (everything but the item lists).
    pub(crate) fn summary_json(&self) -> serde_json::Value {
        let mut summary = self.common_summary();
        if let (Some(counts), Some(map)) = (&self.conversation_counts, summary.as_object_mut()) {
            map.insert(
                "conversations".into(),
                serde_json::to_value(counts).unwrap_or_default(),
            );
        }
        summary
    }

    fn common_summary(&self) -> serde_json::Value {
        serde_json::json!({
            "sheet": self.sheet,
            "rater": self.rater,
            "conversations_added": self.conversations_added,
            "responses_added": self.responses_added,
            "texts_filled": self.texts_filled,
            "ratings_inserted": self.ratings_inserted,
            "ratings_updated": self.ratings_updated,
            "judgements": self.judgements,
            "warnings": self.warnings.len(),
            "quality": self.quality.counts_json(),
        })
    }
}

/// What one import command did, file by file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportReport {
    pub options: ImportOptions,
    pub files: Vec<FileReport>,
}

impl ImportReport {
    /// The report of an import of one file.
    pub(crate) fn single(options: &ImportOptions, file: FileReport) -> Self {
        ImportReport {
            options: options.clone(),
            files: vec![file],
        }
    }
}

pub(crate) use crate::base::digest::sha256_hex;

/// A rater's queue seed derived from the import seed and the rater's name (stable, so
/// re-running an import on a fresh study gives the same queues).
pub(crate) fn rater_seed(seed: u64, name: &str) -> i64 {
    let digest = Sha256::digest(format!("{seed}:{name}").as_bytes());
    let mut b = [0u8; 4];
    b.copy_from_slice(&digest[..4]);
    u32::from_le_bytes(b) as i64
}

/// Record a finished file in the study: the import record (content hash, options, summary), an
/// audit entry with the full data-quality report, and the out-of-scale choice in `study_meta`.
pub(crate) fn record_file(
    tx: &mut StudyTx<'_>,
    report: &FileReport,
    options: &ImportOptions,
) -> Result<(), StoreError> {
    let options_json = serde_json::to_value(options).unwrap_or_default();
    tx.record_import(
        &report.sha256,
        &report.format,
        &report.file,
        &options_json,
        &report.summary_json(),
    )?;
    tx.audit(
        "import",
        &format!("import_{}", report.format.replace('-', "_")),
        &serde_json::json!({
            "file": report.file,
            "sha256": report.sha256,
            "options": options_json,
            "summary": report.summary_json(),
            "quality_items": report.quality.items,
        }),
    )?;
    tx.set_meta("import.out_of_scale", options.out_of_scale.as_str())?;
    Ok(())
}

/// The last phase every importer shares, inside the import's one transaction: unless the same
/// bytes were imported meanwhile (then `report` says so and nothing is written), `write` the
/// file's rows, counting what it did in `report`, and record the file ([`record_file`]).
pub(crate) fn land(
    tx: &mut StudyTx<'_>,
    mut report: FileReport,
    options: &ImportOptions,
    write: impl FnOnce(&mut StudyTx<'_>, &mut FileReport) -> Result<(), ImportError>,
) -> Result<FileReport, ImportError> {
    if tx.read().import_by_hash(&report.sha256)?.is_some() {
        report.status = FileStatus::AlreadyImported;
        return Ok(report);
    }
    write(tx, &mut report)?;
    record_file(tx, &report, options)?;
    Ok(report)
}

/// A release layout read as one table (the MentalBench-100k layout, PsyCrisis): how it is
/// named, how its raw rows are checked, and how the checked rows are written.
pub(crate) trait ReleaseLayout {
    /// The rows as checked, ready to write.
    type Checked;
    /// The format named in the file's report and import record (`mentalbench`, `psycrisis`).
    const KIND: &'static str;
    /// The layout as the error for a wrong format names it ("a MentalBench file must be …").
    const NOUN: &'static str;

    /// Check the raw rows, putting warnings and data-quality findings in `report`; every
    /// problem found when the file is refused.
    fn check(
        &self,
        table: &table::RawTable,
        report: &mut FileReport,
    ) -> Result<Self::Checked, Vec<Issue>>;

    /// Write the checked rows in the import's transaction, counting what was added in `report`.
    fn write(
        &self,
        tx: &mut StudyTx<'_>,
        table: &table::RawTable,
        checked: Self::Checked,
        report: &mut FileReport,
        options: &ImportOptions,
    ) -> Result<(), ImportError>;
}

/// Import one file of a release layout: the first phase ([`prepare`]: format, bytes, already
/// imported, raw rows), the layout's check, then its rows written and the file recorded in one
/// transaction ([`land`]).
pub(crate) fn import_release<L: ReleaseLayout>(
    store: &mut Store,
    path: &std::path::Path,
    sheet: Option<&str>,
    layout: &L,
    options: &ImportOptions,
) -> Result<ImportReport, ImportError> {
    let file = match prepare(store, path, sheet, L::KIND, L::NOUN, Formats::Tabular)? {
        Prepared::Read(file) => file,
        Prepared::AlreadyImported(done) => return Ok(ImportReport::single(options, done)),
    };
    let ReadFile { name, sha, table } = file;
    let mut report = FileReport::new(&name, table.sheet.clone(), L::KIND, &sha);
    let checked = layout
        .check(&table, &mut report)
        .map_err(ImportError::Rejected)?;
    let report = store.write(|tx| {
        land(tx, report, options, |tx, report| {
            layout.write(tx, &table, checked, report, options)
        })
    })?;
    Ok(ImportReport::single(options, report))
}

/// Normalise a context for comparison: trimmed, one pair of wrapping double quotes removed,
/// whitespace runs collapsed.
pub fn normalize_context(text: &str) -> String {
    let t = text.trim();
    let t = t
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(t);
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A short excerpt of a text for messages.
pub fn excerpt(text: &str, chars: usize) -> String {
    let mut out: String = text.chars().take(chars).collect();
    if text.chars().count() > chars {
        out.push('…');
    }
    out.replace('\n', " ")
}

/// Which file formats an importer takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Formats {
    /// CSV, JSON Lines or XLSX.
    Any,
    /// CSV or XLSX (layouts of one row per conversation).
    Tabular,
}

/// What the first phase found: a file to import, or bytes that were imported before.
pub(crate) enum Prepared {
    /// Read and parsed into raw rows; not imported before.
    Read(ReadFile),
    /// The same bytes were imported before: the report saying so (nothing more to do).
    AlreadyImported(FileReport),
}

/// A file read and parsed into raw rows, not imported before.
pub(crate) struct ReadFile {
    pub name: String,
    pub sha: String,
    pub table: table::RawTable,
}

/// The first phase every importer shares: name the file, check its format, read its bytes, stop
/// (with an "already imported" report of kind `kind`) when the same bytes were imported before,
/// and read the raw rows. `noun` names the
/// layout in the error for a wrong format ("a MentalBench file must be …").
pub(crate) fn prepare(
    store: &Store,
    path: &std::path::Path,
    sheet: Option<&str>,
    kind: &str,
    noun: &str,
    formats: Formats,
) -> Result<Prepared, ImportError> {
    let name = table::display_name(path);
    let at = Location {
        file: name.clone(),
        sheet: None,
        row: None,
        column: None,
    };
    let format = table::FileFormat::from_name(&name)
        .filter(|f| formats == Formats::Any || *f != table::FileFormat::Jsonl)
        .ok_or_else(|| {
            let expected = match formats {
                Formats::Any => ".csv, .jsonl or .xlsx",
                Formats::Tabular => ".csv or .xlsx",
            };
            ImportError::one(
                at.clone(),
                "unknown_format",
                format!("a {noun} file must be {expected}"),
            )
        })?;
    let limits = bounds::ReadLimits::from_env();
    let bytes = table::read_file(path, &limits).map_err(ImportError::Rejected)?;
    let sha = sha256_hex(&bytes);
    if store.read().import_by_hash(&sha)?.is_some() {
        let mut r = FileReport::new(&name, None, kind, &sha);
        r.status = FileStatus::AlreadyImported;
        return Ok(Prepared::AlreadyImported(r));
    }
    let table = table::read_table_within(&name, &bytes, format, sheet, &limits)
        .map_err(ImportError::Rejected)?;
    Ok(Prepared::Read(ReadFile { name, sha, table }))
}
