//! The jobs a person can start, as one set of functions on an [`OpenStudy`] that the `concord`
//! command line and the desktop window both call: open or create a study, import a dataset by
//! format, add rubrics and experts, sample and assign, write and merge rater packages, export
//! ratings and fill-in sheets (to a chosen path or a default file in the study's export folder,
//! `<study>-exports/` beside the study, written to a temporary sibling and renamed into place),
//! and start or resume a judge run. The front ends only parse their input, call one of these and
//! print or serialise the answer. The setup wizard's shapes (a typed absolute path, rejections
//! returned as data it lists instead of one long message) are thin adapters over the same jobs.
//! Writes that bring many ratings in (imports, merges, filled sheets, judge runs) go through
//! [`OpenStudy::store_mut`], which drops the cached agreement reports.

use crate::app::open_study::OpenStudy;
pub use crate::app::open_study::PhiDecision;
pub use crate::app::open_study::PhiGate;
use crate::base::clock::Clock;
use crate::base::error_code::ErrorCode;
use crate::base::study_location::StudyPath;
use crate::base::text::quoted;
use crate::files::Issue;
use crate::intake::demo::DemoError;
use crate::intake::long;
use crate::intake::long::ItemColumns;
use crate::intake::long::RatingColumns;
use crate::intake::mentalalign;
use crate::intake::mentalbench;
use crate::intake::psycrisis;
use crate::intake::ImportError;
use crate::intake::ImportOptions;
use crate::intake::ImportProgress;
use crate::intake::ImportReport;
use crate::intake::OutOfScale;
use crate::judge::{self, JudgeError, RunPlan, RunSettings};
use crate::outputs::export;
use crate::outputs::export::sheet::SheetError;
use crate::outputs::export::CellError;
use crate::outputs::export::CsvOptions;
use crate::outputs::export::CsvSummary;
use crate::outputs::export::ExportError;
use crate::outputs::export::SheetImportReport;
use crate::outputs::export::SheetSummary;
use crate::outputs::export::WorkbookOptions;
use crate::outputs::export::WorkbookSummary;
use crate::rubric::reply::ReplyParsing;
use crate::store::{inspect_with, FileKind, Passphrase, RaterKind, Store, StoreError};
use crate::workflow::assignment;
use crate::workflow::assignment::AssignmentError;
use crate::workflow::assignment::AssignmentOptions;
use crate::workflow::assignment::AssignmentSummary;
use crate::workflow::assignment::AssignmentTable;
use crate::workflow::assignment::ExpertAdded;
use crate::workflow::assignment::RubricAdded;
use crate::workflow::package;
use crate::workflow::package::MergeReport;
use crate::workflow::package::PackageError;
use crate::workflow::package::PackageSummary;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What to do when the study file a job names does not exist yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenMissing {
    /// Refuse with "no such study file" and create nothing (every job that reads a study).
    Refuse,
    /// Create a new, empty study there (an import into a new file).
    CreateEmpty,
    /// Create the demo study there (`concord demo`, the window's first launch).
    CreateDemo,
}

/// A study opened for a job, and whether opening it created the file.
#[derive(Debug)]
pub struct Opened {
    pub study: OpenStudy,
    pub created: bool,
}

/// Open the study at `path` for a job. The default study in the app-data folder is always
/// created as the demo on first use (its folder too), as the window and the CLI have always
/// agreed; an explicit path follows `when_missing`, and is never created inside a folder that
/// does not exist. A file that is not a Concord study is refused unchanged either way. `seed`
/// orders the queues of a demo study created here.
pub fn open(
    path: &StudyPath,
    when_missing: WhenMissing,
    clock: Arc<dyn Clock>,
    seed: u64,
) -> Result<Opened, DemoError> {
    open_with(path, when_missing, clock, seed, None)
}

/// [`open`] with a passphrase: an encrypted study is opened with it, and a study created here is
/// created encrypted with it.
pub fn open_with(
    path: &StudyPath,
    when_missing: WhenMissing,
    clock: Arc<dyn Clock>,
    seed: u64,
    key: Option<&Passphrase>,
) -> Result<Opened, DemoError> {
    let p = path.path();
    let created = match inspect_with(p, key)? {
        FileKind::Study { .. } => None,
        FileKind::Absent => match (path, when_missing) {
            (StudyPath::Default(_), _) | (StudyPath::Explicit(_), WhenMissing::CreateDemo) => {
                if let (StudyPath::Default(_), Some(folder)) = (path, p.parent()) {
                    std::fs::create_dir_all(folder).map_err(|e| StoreError::ReadOnly {
                        path: p.display().to_string(),
                        detail: e.to_string(),
                    })?;
                }
                Some(crate::intake::demo::create_demo_with(
                    p,
                    clock.clone(),
                    seed,
                    key,
                )?)
            }
            (StudyPath::Explicit(_), WhenMissing::CreateEmpty) => {
                Some(Store::create_with(p, clock.clone(), key)?)
            }
            (StudyPath::Explicit(_), WhenMissing::Refuse) => {
                return Err(StoreError::Missing {
                    path: p.display().to_string(),
                }
                .into())
            }
        },
    };
    let (store, created) = match created {
        Some(store) => (store, true),
        None => (Store::open_with(p, clock, key)?, false),
    };
    Ok(Opened {
        study: OpenStudy::new(store),
        created,
    })
}

/// One import, by format, with everything that format takes.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportJob {
    /// Every MentalAlign-70k workbook in `dir` (the human file and any judge files); `judge`
    /// names the judge of files whose sheet name is not a model id.
    MentalAlign { dir: PathBuf, judge: Option<String> },
    /// MentalBench-100k answer texts (CSV or XLSX).
    MentalBench {
        file: PathBuf,
        sheet: Option<String>,
    },
    /// A PsyCrisis workbook.
    PsyCrisis {
        file: PathBuf,
        crisis: psycrisis::CrisisFile,
    },
    /// Generic long-form items of `rubric`.
    LongItems {
        file: PathBuf,
        rubric: String,
        columns: ItemColumns,
        sheet: Option<String>,
    },
    /// Generic long-form ratings of `rubric`.
    LongRatings {
        file: PathBuf,
        rubric: String,
        columns: RatingColumns,
        sheet: Option<String>,
    },
}

/// The formats the wizard imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ImportFormat {
    /// A folder of MentalAlign-70k workbooks (the human file and any judge files).
    Mentalalign,
    /// A MentalBench-100k answer file (CSV or XLSX).
    Mentalbench,
    /// A PsyCrisis workbook.
    Psycrisis,
    /// Generic long-form items: conversation_id, context, response_id, source, text.
    LongItems,
    /// Generic long-form ratings: item, rater, criterion, score, optional rationale.
    LongRatings,
}

/// What the wizard's import step asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportRequest {
    pub format: ImportFormat,
    /// Absolute path of the file (or, for MentalAlign, the folder).
    pub path: String,
    /// Out-of-scale whole numbers (MentalAlign's 0s and 6s): keep as written or store as missing.
    #[serde(default)]
    pub out_of_scale: OutOfScale,
    /// Rubric of the long-form files (default MentalBench).
    #[serde(default)]
    pub rubric: Option<String>,
    /// PsyCrisis: key of the source that wrote the answers (required there).
    #[serde(default)]
    pub source: Option<String>,
    /// MentalAlign / PsyCrisis: the judge model id of the file's judge output.
    #[serde(default)]
    pub judge: Option<String>,
    /// PsyCrisis: the expert whose dimension columns the file holds.
    #[serde(default)]
    pub expert: Option<String>,
    /// Long-form ratings: raters not yet in the study are LLM judges instead of experts.
    #[serde(default)]
    pub judges: bool,
}

impl ImportRequest {
    /// The import job the request describes (its path must be absolute).
    pub fn job(&self) -> Result<ImportJob, UseCaseError> {
        let path = typed_path(&self.path)?;
        let given = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
        let rubric = given(&self.rubric).unwrap_or_else(|| "mentalbench".into());
        Ok(match self.format {
            ImportFormat::Mentalalign => ImportJob::MentalAlign {
                dir: path,
                judge: given(&self.judge),
            },
            ImportFormat::Mentalbench => ImportJob::MentalBench {
                file: path,
                sheet: None,
            },
            ImportFormat::Psycrisis => ImportJob::PsyCrisis {
                file: path,
                crisis: psycrisis::CrisisFile {
                    source_key: given(&self.source).ok_or(UseCaseError::MissingSource)?,
                    source_name: None,
                    judge: given(&self.judge),
                    expert: given(&self.expert),
                    sheet: None,
                },
            },
            ImportFormat::LongItems => ImportJob::LongItems {
                file: path,
                rubric,
                columns: ItemColumns::default(),
                sheet: None,
            },
            ImportFormat::LongRatings => ImportJob::LongRatings {
                file: path,
                rubric,
                columns: RatingColumns {
                    new_rater_kind: if self.judges {
                        RaterKind::Judge
                    } else {
                        RaterKind::Expert
                    },
                    ..RatingColumns::default()
                },
                sheet: None,
            },
        })
    }
}

/// An import that happened (`report`) or was refused because of problems in the input
/// (`issues`, each with its file, sheet, row and column; nothing was written).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportOutcome {
    pub report: Option<ImportReport>,
    pub issues: Vec<Issue>,
    /// The PHI scan of the texts the import brought in (when it happened).
    pub phi: Option<crate::guard::phi::review::PhiScanSummary>,
}

/// A filled rating sheet that was imported (`report`) or refused with its bad cells (`errors`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SheetOutcome {
    pub report: Option<SheetImportReport>,
    pub errors: Vec<CellError>,
}

/// The study-wide rating exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum RatingsFormat {
    /// One row per rating.
    LongCsv,
    /// One row per response × rater × occasion, one column per criterion.
    WideCsv,
    /// The results workbook: codebook, one sheet per expert, agreement.
    Xlsx,
}

impl RatingsFormat {
    fn default_name(self, stem: &str) -> String {
        match self {
            RatingsFormat::LongCsv => format!("{stem}-ratings-long.csv"),
            RatingsFormat::WideCsv => format!("{stem}-ratings-wide.csv"),
            RatingsFormat::Xlsx => format!("{stem}-results.xlsx"),
        }
    }
}

/// A rating export: the format and its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RatingsExport {
    pub format: RatingsFormat,
    /// CSV for Excel: byte-order mark and CRLF line ends.
    pub excel: bool,
    /// CSV: add the context and the response text to each row.
    pub texts: bool,
    /// Workbook: include the agreement sheet.
    pub agreement: bool,
}

impl RatingsExport {
    /// `format` with the defaults: plain CSV without texts, workbook with its agreement sheet.
    pub fn new(format: RatingsFormat) -> RatingsExport {
        RatingsExport {
            format,
            excel: false,
            texts: false,
            agreement: true,
        }
    }
}

/// What a rating export wrote: a CSV's rows or a workbook's sheets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RatingsSummary {
    Csv(CsvSummary),
    Workbook(WorkbookSummary),
}

impl RatingsSummary {
    /// Ratings in the file.
    pub fn ratings(&self) -> usize {
        match self {
            RatingsSummary::Csv(s) => s.ratings,
            RatingsSummary::Workbook(s) => s.ratings,
        }
    }
}

/// A rating export written to `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RatingsWritten {
    pub path: PathBuf,
    pub summary: RatingsSummary,
    /// Set when the study is encrypted: the file written is not.
    pub warning: Option<String>,
}

/// A fill-in rating sheet written to `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SheetWritten {
    pub path: PathBuf,
    pub summary: SheetSummary,
    /// Set when the study is encrypted: the file written is not.
    pub warning: Option<String>,
}

/// A file the wizard wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WrittenFile {
    pub path: String,
    /// Ratings in the file (rating exports) or items in it (rating sheets).
    pub count: usize,
    /// Set when the study is encrypted: the file written is not (see
    /// [`crate::outputs::export::plain_copy_warning`]).
    pub warning: Option<String>,
}

impl From<RatingsWritten> for WrittenFile {
    fn from(w: RatingsWritten) -> Self {
        WrittenFile {
            path: w.path.display().to_string(),
            count: w.summary.ratings(),
            warning: w.warning,
        }
    }
}

impl From<SheetWritten> for WrittenFile {
    fn from(w: SheetWritten) -> Self {
        WrittenFile {
            path: w.path.display().to_string(),
            count: w.summary.rows,
            warning: w.warning,
        }
    }
}

/// A rater package written for one expert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PackageWritten {
    pub path: String,
    pub summary: PackageSummary,
}

/// A judge run opened (or found again, with the same settings) and ready to send its calls over
/// its own connection to the study file, so the study's other work (a window that keeps
/// rating) never waits for it.
#[derive(Debug)]
pub struct JudgeSession {
    pub plan: RunPlan,
    store: Store,
}

impl JudgeSession {
    /// Send the run's pending calls (see [`judge::execute_run`]); blocks until the run is
    /// finished or `cancel` is cancelled.
    pub fn execute(
        mut self,
        exec: &judge::Execution,
        key: Option<judge::ApiKey>,
        cancel: &judge::CancellationToken,
        progress: &mut dyn FnMut(&judge::Progress),
    ) -> Result<judge::RunReport, JudgeError> {
        judge::execute_run(
            &mut self.store,
            self.plan.run_id,
            exec,
            key,
            cancel,
            progress,
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum UseCaseError {
    #[error("type a full (absolute) path, e.g. /home/me/study/data.csv; {q0} is relative", q0 = quoted(&.0))]
    RelativePath(String),
    #[error("a path is needed")]
    EmptyPath,
    #[error("{path}: cannot read the rubric file: {detail}")]
    ReadRubric { path: String, detail: String },
    #[error("a PsyCrisis import needs the key of the source that wrote the answers (e.g. gpt4o)")]
    MissingSource,
    #[error("{path}: cannot write: {detail}")]
    Write { path: String, detail: String },
    #[error(transparent)]
    Assignment(#[from] AssignmentError),
    #[error(transparent)]
    Package(#[from] PackageError),
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error(transparent)]
    Phi(#[from] crate::guard::phi::review::PhiError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl UseCaseError {
    /// A stable machine-readable code for the UI.
    pub fn code(&self) -> ErrorCode {
        match self {
            UseCaseError::RelativePath(_) | UseCaseError::EmptyPath => ErrorCode::Path,
            UseCaseError::ReadRubric { .. } => ErrorCode::Unreadable,
            UseCaseError::MissingSource => ErrorCode::MissingSource,
            UseCaseError::Write { .. } => ErrorCode::Io,
            UseCaseError::Assignment(AssignmentError::Rubric(_)) => ErrorCode::Rubric,
            UseCaseError::Assignment(AssignmentError::Store(e)) => e.code(),
            UseCaseError::Assignment(_) => ErrorCode::Assignment,
            UseCaseError::Package(PackageError::Store(e)) => e.code(),
            UseCaseError::Package(_) => ErrorCode::Package,
            UseCaseError::Export(ExportError::Store(e)) => e.code(),
            UseCaseError::Export(_) => ErrorCode::Export,
            UseCaseError::Phi(e) => e.code(),
            UseCaseError::Store(e) => e.code(),
        }
    }
}

/// Who the window's lead is in the audit trail: the operating-system account (`USER`, or
/// `USERNAME` on Windows), else "lead".
pub fn desktop_actor() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "lead".to_string())
}

/// A typed path, which must be absolute: the app's working folder means nothing to its user.
pub fn typed_path(text: &str) -> Result<PathBuf, UseCaseError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(UseCaseError::EmptyPath);
    }
    let path = PathBuf::from(text);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(UseCaseError::RelativePath(text.to_string()))
    }
}

/// A typed output path: blank means "the default file", anything else must be absolute.
pub fn typed_output(text: Option<&str>) -> Result<Option<PathBuf>, UseCaseError> {
    text.filter(|t| !t.trim().is_empty())
        .map(typed_path)
        .transpose()
}

/// A file-name fragment from a person's name: letters and digits kept (any script), the rest `-`.
pub fn name_slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "expert".into()
    } else {
        out
    }
}

/// `dir/name`, or `dir/<stem>-2.<ext>`, `-3`, … when that file already exists.
pub fn unused_path(dir: &Path, name: &str) -> PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    let p = Path::new(name);
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = p
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (2..)
        .map(|n| dir.join(format!("{stem}-{n}{ext}")))
        .find(|p| !p.exists())
        .expect("some numbered name is free")
}

fn io(path: &Path, e: impl std::fmt::Display) -> UseCaseError {
    UseCaseError::Write {
        path: path.display().to_string(),
        detail: e.to_string(),
    }
}

/// Write through `f` into `<out>.partial`, then rename it to `out`; a failure leaves no file.
fn write_atomically<T>(
    out: &Path,
    f: impl FnOnce(&Path) -> Result<T, UseCaseError>,
) -> Result<T, UseCaseError> {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    let tmp = out.with_file_name(name);
    match f(&tmp) {
        Ok(v) => {
            std::fs::rename(&tmp, out).map_err(|e| io(out, e))?;
            Ok(v)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

impl OpenStudy {
    /// The study file's name without extension (the prefix of default output names).
    fn study_stem(&self) -> String {
        self.store()
            .path()
            .and_then(|p| p.file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "study".into())
    }

    /// Where an output goes: `out` when given, else `default` (bounded in length) in the export
    /// folder (created).
    fn output_path(&self, out: Option<&Path>, default: &str) -> Result<PathBuf, UseCaseError> {
        match out {
            Some(p) => Ok(p.to_path_buf()),
            None => Ok(self
                .created_export_dir()?
                .join(crate::base::text::bounded_file_name(default))),
        }
    }

    /// The export folder, created when missing.
    fn created_export_dir(&self) -> Result<PathBuf, UseCaseError> {
        let dir = self.export_dir()?;
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        Ok(dir)
    }

    /// Add a custom rubric file (TOML or JSON) unless the identical rubric is there.
    pub fn add_rubric_file(&mut self, path: &Path) -> Result<RubricAdded, UseCaseError> {
        let text = crate::rubric::read_text(path).map_err(|e| UseCaseError::ReadRubric {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(assignment::add_rubric_file(self.store_mut(), &text, &name)?)
    }

    /// The wizard's step 1: [`Self::add_rubric_file`] at a typed absolute path.
    pub fn add_rubric_path(&mut self, path: &str) -> Result<RubricAdded, UseCaseError> {
        self.add_rubric_file(&typed_path(path)?)
    }

    /// Import a released dataset or a long-form file (all or nothing).
    pub fn import(
        &mut self,
        job: &ImportJob,
        options: &ImportOptions,
    ) -> Result<ImportReport, ImportError> {
        self.import_reporting(job, options, &mut |_| {})
    }

    /// [`Self::import`], telling `progress` how far an import that can take long (long-form
    /// items or ratings, millions of rows) has come; the others report nothing.
    pub fn import_reporting(
        &mut self,
        job: &ImportJob,
        options: &ImportOptions,
        progress: &mut dyn FnMut(ImportProgress),
    ) -> Result<ImportReport, ImportError> {
        let store = self.store_mut();
        match job {
            ImportJob::MentalAlign { dir, judge } => match judge {
                Some(judge) => mentalalign::import_dir_as(store, dir, options, judge),
                None => mentalalign::import_dir(store, dir, options),
            },
            ImportJob::MentalBench { file, sheet } => {
                mentalbench::import_file(store, file, sheet.as_deref(), options)
            }
            ImportJob::PsyCrisis { file, crisis } => {
                psycrisis::import_file(store, file, crisis, options)
            }
            ImportJob::LongItems {
                file,
                rubric,
                columns,
                sheet,
            } => long::import_items_reporting(
                store,
                file,
                rubric,
                columns,
                sheet.as_deref(),
                options,
                progress,
            ),
            ImportJob::LongRatings {
                file,
                rubric,
                columns,
                sheet,
            } => long::import_ratings_reporting(
                store,
                file,
                rubric,
                columns,
                sheet.as_deref(),
                options,
                progress,
            ),
        }
    }

    /// The wizard's step 2: [`Self::import`] with strict reply parsing, problems in the input
    /// returned as data. `seed` orders the queues of raters the import creates.
    pub fn import_data(
        &mut self,
        request: &ImportRequest,
        seed: u64,
    ) -> Result<ImportOutcome, UseCaseError> {
        self.import_data_reporting(request, seed, &mut |_| {})
    }

    /// [`Self::import_data`], telling `progress` how far the import has come (see
    /// [`Self::import_reporting`]).
    pub fn import_data_reporting(
        &mut self,
        request: &ImportRequest,
        seed: u64,
        progress: &mut dyn FnMut(ImportProgress),
    ) -> Result<ImportOutcome, UseCaseError> {
        let job = request.job()?;
        let options = ImportOptions {
            out_of_scale: request.out_of_scale,
            replies: ReplyParsing::Strict,
            seed,
        };
        match self.import_reporting(&job, &options, progress) {
            Ok(report) => Ok(ImportOutcome {
                report: Some(report),
                issues: Vec::new(),
                phi: Some(self.scan_phi(&desktop_actor())?),
            }),
            Err(ImportError::Rejected(issues)) => Ok(ImportOutcome {
                report: None,
                issues,
                phi: None,
            }),
            Err(ImportError::Store(e)) => Err(e.into()),
        }
    }

    /// Add an expert by name (an existing expert of that name is returned as is).
    pub fn add_expert(&mut self, name: &str, queue_seed: u64) -> Result<ExpertAdded, UseCaseError> {
        Ok(assignment::add_expert(self.store_mut(), name, queue_seed)?)
    }

    /// What `options` would assign, without writing anything.
    pub fn preview_assignment(
        &self,
        options: &AssignmentOptions,
    ) -> Result<AssignmentSummary, UseCaseError> {
        Ok(assignment::preview(self.store(), options)?)
    }

    /// Draw the sample and write the assignment.
    pub fn assign(
        &mut self,
        options: &AssignmentOptions,
    ) -> Result<AssignmentSummary, UseCaseError> {
        Ok(assignment::assign(self.store_mut(), options)?)
    }

    /// The assignment with every expert's progress.
    pub fn assignment_table(&self) -> Result<AssignmentTable, UseCaseError> {
        Ok(assignment::progress(self.store())?)
    }

    /// The warning an export of an encrypted study carries (none for a plain study).
    fn plain_copy_warning(&self, file: &Path) -> Option<String> {
        self.store()
            .is_encrypted()
            .then(|| crate::outputs::export::plain_copy_warning(file))
    }

    /// Write `expert`'s package, sealed under `passphrase`, to `out`, or to
    /// `<study>-package-<expert>.concord` in the export folder (numbered when taken). `seed`
    /// draws the package id and the source codes. Refused while PHI findings are open, unless
    /// `gate` overrides with a reason.
    pub fn export_package(
        &mut self,
        expert: &str,
        out: Option<&Path>,
        seed: u64,
        passphrase: &Passphrase,
        gate: PhiGate<'_>,
    ) -> Result<PackageWritten, UseCaseError> {
        self.require_phi_reviewed("a rater package", gate)?;
        let path = match out {
            Some(p) => p.to_path_buf(),
            None => {
                let name = format!(
                    "{}-package-{}.concord",
                    self.study_stem(),
                    name_slug(expert)
                );
                unused_path(
                    &self.created_export_dir()?,
                    &crate::base::text::bounded_file_name(&name),
                )
            }
        };
        let summary = package::export_package(self.store_mut(), expert, &path, seed, passphrase)?;
        Ok(PackageWritten {
            path: path.display().to_string(),
            summary,
        })
    }

    /// Merge a returned package (opened with `passphrase`); conflicts are listed, the study
    /// keeps its values.
    pub fn merge_package(
        &mut self,
        path: &Path,
        passphrase: &Passphrase,
    ) -> Result<MergeReport, UseCaseError> {
        Ok(package::merge_package(self.store_mut(), path, passphrase)?)
    }

    /// Every rating as a long or wide CSV or the results workbook, to `out` or a default file
    /// in the export folder. Refused while PHI findings are open, unless `gate` overrides.
    pub fn export_ratings(
        &mut self,
        export: &RatingsExport,
        out: Option<&Path>,
        gate: PhiGate<'_>,
    ) -> Result<RatingsWritten, UseCaseError> {
        self.require_phi_reviewed("an export", gate)?;
        let format = export.format;
        let path = self.output_path(out, &format.default_name(&self.study_stem()))?;
        let options = CsvOptions {
            excel: export.excel,
            texts: export.texts,
        };
        let store = self.store();
        let summary = write_atomically(&path, |tmp| match format {
            RatingsFormat::LongCsv | RatingsFormat::WideCsv => {
                let file = std::fs::File::create(tmp).map_err(|e| io(&path, e))?;
                let mut w = std::io::BufWriter::new(file);
                let summary = if format == RatingsFormat::LongCsv {
                    export::write_long_csv(store, &mut w, options)?
                } else {
                    export::write_wide_csv(store, &mut w, options)?
                };
                w.flush().map_err(|e| io(&path, e))?;
                Ok(RatingsSummary::Csv(summary))
            }
            RatingsFormat::Xlsx => {
                let options = WorkbookOptions {
                    agreement: export.agreement,
                    ..WorkbookOptions::default()
                };
                Ok(RatingsSummary::Workbook(export::write_workbook(
                    store, tmp, &options,
                )?))
            }
        })?;
        let warning = self.plain_copy_warning(&path);
        Ok(RatingsWritten {
            path,
            summary,
            warning,
        })
    }

    /// The fill-in rating sheet of `expert`, to `out` or `<study>-sheet-<expert>.xlsx` in the
    /// export folder. Refused while PHI findings are open, unless `gate` overrides.
    pub fn export_sheet(
        &mut self,
        expert: &str,
        out: Option<&Path>,
        gate: PhiGate<'_>,
    ) -> Result<SheetWritten, UseCaseError> {
        self.require_phi_reviewed("a rating sheet", gate)?;
        let name = format!("{}-sheet-{}.xlsx", self.study_stem(), name_slug(expert));
        let path = self.output_path(out, &name)?;
        let summary = write_atomically(&path, |tmp| {
            Ok(export::write_rating_sheet(self.store(), expert, tmp)?)
        })?;
        let warning = self.plain_copy_warning(&path);
        Ok(SheetWritten {
            path,
            summary,
            warning,
        })
    }

    /// Import a filled rating sheet as its expert's ratings (all or nothing).
    pub fn import_sheet(&mut self, path: &Path) -> Result<SheetImportReport, SheetError> {
        export::import_rating_sheet(self.store_mut(), path)
    }

    /// The wizard's step 7: [`Self::import_sheet`] at a typed path, bad cells returned as data.
    pub fn import_sheet_outcome(&mut self, path: &str) -> Result<SheetOutcome, UseCaseError> {
        let path = typed_path(path)?;
        match self.import_sheet(&path) {
            Ok(report) => Ok(SheetOutcome {
                report: Some(report),
                errors: Vec::new(),
            }),
            Err(SheetError::Rejected(errors)) => Ok(SheetOutcome {
                report: None,
                errors,
            }),
            Err(SheetError::Export(e)) => Err(e.into()),
            Err(SheetError::Store(e)) => Err(e.into()),
        }
    }

    /// Open (or resume, when the same settings ran before) a judge run, and a second connection
    /// to the study file to send its calls on. Opening adds the judge rater and the run's rows,
    /// so the cached agreement reports are dropped.
    pub fn start_judge_run(&mut self, settings: &RunSettings) -> Result<JudgeSession, JudgeError> {
        if self.store().path().is_none() {
            return Err(JudgeError::Settings(
                "a study held only in memory cannot run a judge".into(),
            ));
        }
        let plan = judge::open_run(self.store_mut(), settings)?;
        // The run's own connection, opened with the study's passphrase when it is encrypted.
        let store = self.store().reopen()?;
        Ok(JudgeSession { plan, store })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::SteppingClock;
    use crate::store::Store;
    use std::sync::Arc;

    /// A lead who never overrides the PHI gate.
    const LEAD: PhiGate<'static> = PhiGate {
        actor: "test lead",
        override_reason: None,
    };

    fn study(dir: &Path) -> OpenStudy {
        let store = Store::create(
            &dir.join("lead.concord"),
            Arc::new(SteppingClock::new(1_700_000_000_000, 1000)),
        )
        .expect("a new study");
        OpenStudy::new(store)
    }

    fn write(dir: &Path, name: &str, text: &str) -> String {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("test input written");
        p.display().to_string()
    }

    const BENCH: &str = "context,response,Gemini,gpt-4o\n\
        I cannot sleep before exams,Try a wind-down routine,Breathe slowly,Talk to a tutor\n\
        My friend stopped talking to me,Ask them gently,Give it time,Write to them\n\
        I feel alone in a new city,Join a club,Call home,Volunteer locally\n\
        Work leaves me exhausted,Rest on weekends,Set limits,Speak to your manager\n";

    #[test]
    fn a_long_chinese_study_and_expert_name_still_export_under_255_bytes() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        // 56 characters of 3 bytes (168 bytes): the study file fits the limit; an export named
        // after it and a 60-character expert did not.
        let stem = "心理危机干预研究".repeat(7);
        let store = Store::create(
            &dir.path().join(format!("{stem}.concord")),
            Arc::new(SteppingClock::new(1_700_000_000_000, 1000)),
        )
        .expect("a study with a long Chinese name");
        let mut s = OpenStudy::new(store);
        crate::intake::demo::populate_demo(s.store_mut(), 3).expect("demo content");
        let expert = "王".repeat(60);
        s.add_expert(&expert, 1)
            .expect("an expert with a long name");
        let mut options = AssignmentOptions::new(1, 42);
        options.sample = Some(2);
        s.assign(&options).expect("assigned");
        for format in [RatingsFormat::LongCsv, RatingsFormat::Xlsx] {
            let written = s
                .export_ratings(&RatingsExport::new(format), None, LEAD)
                .expect("the export writes under a shortened name");
            let name = Path::new(&written.path)
                .file_name()
                .expect("a file name")
                .len();
            assert!(
                name <= 255,
                "the file name fits the file system: {name} bytes"
            );
        }
        let sheet = s
            .export_sheet(&expert, None, LEAD)
            .expect("the expert's sheet writes under a shortened name");
        assert!(
            Path::new(&sheet.path)
                .file_name()
                .expect("a file name")
                .len()
                <= 255,
            "the sheet's name fits too"
        );
    }

    #[test]
    fn typed_paths_must_be_absolute() {
        assert!(
            matches!(typed_path("data.csv"), Err(UseCaseError::RelativePath(_))),
            "a relative path is refused with its own error"
        );
        assert!(
            matches!(typed_path("   "), Err(UseCaseError::EmptyPath)),
            "a blank path is refused"
        );
        let abs = std::env::temp_dir().join("x.csv");
        assert_eq!(
            typed_path(&format!("  {}  ", abs.display())).expect("absolute path accepted"),
            abs,
            "surrounding blanks are trimmed"
        );
    }

    #[test]
    fn slugs_and_unused_names() {
        assert_eq!(
            name_slug("Dr. Ana Li"),
            "dr-ana-li",
            "punctuation collapses to -"
        );
        assert_eq!(
            name_slug("王医生"),
            "王医生",
            "letters of any script are kept"
        );
        assert_eq!(
            name_slug("?!"),
            "expert",
            "a name without letters still gives a file name"
        );
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            unused_path(dir.path(), "a.concord"),
            dir.path().join("a.concord"),
            "a free name is used as is"
        );
        std::fs::write(dir.path().join("a.concord"), b"x").unwrap();
        std::fs::write(dir.path().join("a-2.concord"), b"x").unwrap();
        assert_eq!(
            unused_path(dir.path(), "a.concord"),
            dir.path().join("a-3.concord"),
            "taken names get the next free number"
        );
    }

    #[test]
    fn the_wizard_runs_from_import_to_package_and_csv() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = study(dir.path());
        let outcome = s
            .import_data(
                &ImportRequest {
                    format: ImportFormat::Mentalbench,
                    path: write(dir.path(), "bench.csv", BENCH),
                    out_of_scale: OutOfScale::Keep,
                    rubric: None,
                    source: None,
                    judge: None,
                    expert: None,
                    judges: false,
                },
                7,
            )
            .expect("the import runs");
        let report = outcome.report.expect("a clean file is imported");
        assert_eq!(report.files[0].conversations_added, 4, "four conversations");
        assert_eq!(report.files[0].responses_added, 12, "three answers each");

        for name in ["Ana", "Ben", "Chen"] {
            s.add_expert(name, 1).expect("expert added");
        }
        let mut options = AssignmentOptions::new(2, 42);
        options.sample = Some(4);
        let preview = s.preview_assignment(&options).expect("preview");
        assert!(
            s.assignment_table().unwrap().options.is_none(),
            "a preview writes nothing"
        );
        let summary = s.assign(&options).expect("assigned");
        assert_eq!(preview, summary, "the preview is what gets assigned");
        let table = s.assignment_table().expect("table");
        let loads: Vec<usize> = table.experts.iter().map(|e| e.assigned).collect();
        assert_eq!(loads, vec![8, 8, 8], "12 responses × k=2 over 3 experts");

        let pass = Passphrase::new("lead test passphrase").unwrap();
        let first = s
            .export_package("Ana", None, 9, &pass, LEAD)
            .expect("package written");
        let second = s
            .export_package("Ana", None, 9, &pass, LEAD)
            .expect("second package");
        assert!(
            first
                .path
                .ends_with("lead-exports/lead-package-ana.concord"),
            "default package path in the export folder: {}",
            first.path
        );
        assert_ne!(
            first.path, second.path,
            "an existing package is never overwritten"
        );
        assert!(
            Path::new(&second.path).exists(),
            "the second package exists"
        );
        let merged = s
            .merge_package(Path::new(&first.path), &pass)
            .expect("merge of an untouched package");
        assert!(
            merged.conflicts.is_empty() && merged.inserted == 0,
            "nothing to merge from an untouched package"
        );

        let csv = s
            .export_ratings(
                &RatingsExport {
                    excel: true,
                    ..RatingsExport::new(RatingsFormat::LongCsv)
                },
                None,
                LEAD,
            )
            .expect("csv written");
        let bytes = std::fs::read(&csv.path).expect("csv on disk");
        assert!(
            bytes.starts_with(b"\xEF\xBB\xBFconversation_id,"),
            "the Excel option adds a byte-order mark before the header"
        );
        let sheet = s.export_sheet("Ben", None, LEAD).expect("sheet written");
        assert_eq!(sheet.summary.rows, 8, "one sheet row per assigned item");
        let back = s
            .import_sheet_outcome(&sheet.path.display().to_string())
            .expect("the untouched sheet reads back");
        let report = back.report.expect("an untouched sheet is accepted");
        assert_eq!(
            (report.rater.as_str(), report.inserted),
            ("Ben", 0),
            "an untouched sheet is Ben's and brings no values"
        );
        let bad = s
            .import_sheet_outcome(&write(dir.path(), "notes.xlsx", "not a workbook"))
            .expect("a refused sheet is an outcome, not an error");
        assert!(
            bad.report.is_none() && !bad.errors.is_empty(),
            "a file that is not a workbook is refused with its problems listed"
        );
        let refused = typed_output(Some("relative.csv")).expect_err("relative output path refused");
        assert_eq!(refused.code(), "path", "path errors have their own code");
    }

    #[test]
    fn rejected_input_comes_back_as_issues_and_bad_rubrics_as_errors() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = study(dir.path());
        let outcome = s
            .import_data(
                &ImportRequest {
                    format: ImportFormat::Mentalbench,
                    path: write(dir.path(), "bad.csv", "prompt,answer\nx,y\n"),
                    out_of_scale: OutOfScale::Keep,
                    rubric: None,
                    source: None,
                    judge: None,
                    expert: None,
                    judges: false,
                },
                7,
            )
            .expect("a refused import is an outcome, not an error");
        assert!(outcome.report.is_none(), "nothing imported");
        assert!(
            outcome.issues.iter().any(|i| i.code == "missing_column"),
            "the missing columns are named: {:?}",
            outcome.issues
        );
        let psy = s.import_data(
            &ImportRequest {
                format: ImportFormat::Psycrisis,
                path: write(dir.path(), "p.xlsx", "x"),
                out_of_scale: OutOfScale::Keep,
                rubric: None,
                source: Some("  ".into()),
                judge: None,
                expert: None,
                judges: false,
            },
            7,
        );
        assert!(
            matches!(psy, Err(UseCaseError::MissingSource)),
            "PsyCrisis needs its answering source"
        );
        let rubric = s.add_rubric_path(&write(dir.path(), "r.toml", "id = 3"));
        assert!(
            matches!(
                rubric,
                Err(UseCaseError::Assignment(AssignmentError::Rubric(_)))
            ),
            "an invalid rubric file is refused by the core's validation"
        );
    }

    #[test]
    fn phi_found_at_import_gates_exports_until_each_finding_is_decided() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = study(dir.path());
        let csv = "context,response,Gemini,gpt-4o\n\
            Call me on 415-555-0132 tonight,Ask them gently,Give it time,Write to them\n\
            My email is jo.doe@example.org,Join a club,Call home,Volunteer locally\n";
        let outcome = s
            .import_data(
                &ImportRequest {
                    format: ImportFormat::Mentalbench,
                    path: write(dir.path(), "phi.csv", csv),
                    out_of_scale: OutOfScale::Keep,
                    rubric: None,
                    source: None,
                    judge: None,
                    expert: None,
                    judges: false,
                },
                7,
            )
            .expect("the import runs");
        let phi = outcome
            .phi
            .expect("an import that happened reports its PHI scan");
        assert_eq!(
            (phi.found, phi.open),
            (2, 2),
            "the phone number and the e-mail address are reported with the import"
        );
        s.add_expert("Ana", 1).unwrap();
        let mut options = AssignmentOptions::new(1, 42);
        options.sample = Some(2);
        s.assign(&options).unwrap();
        let pass = Passphrase::new("lead test passphrase").unwrap();
        let refused = s.export_package("Ana", None, 9, &pass, LEAD);
        assert!(
            matches!(&refused, Err(e) if e.code() == ErrorCode::PhiUnreviewed),
            "a package is refused while findings are open: {refused:?}"
        );
        let refused = s.export_ratings(&RatingsExport::new(RatingsFormat::LongCsv), None, LEAD);
        assert!(
            matches!(&refused, Err(e) if e.code() == ErrorCode::PhiUnreviewed),
            "so is a rating export"
        );

        let queue = s.phi_review().unwrap();
        let phone = queue
            .items
            .iter()
            .find(|i| i.finding.kind == crate::guard::phi::PhiKind::Phone)
            .expect("the phone number is in the queue");
        assert_eq!(
            (
                phone.before.as_str(),
                phone.matched.as_str(),
                phone.after.as_str()
            ),
            ("Call me on ", "415-555-0132", " tonight"),
            "an open finding is shown in its context"
        );
        let email = queue
            .items
            .iter()
            .find(|i| i.finding.kind == crate::guard::phi::PhiKind::Email)
            .expect("the e-mail address is in the queue")
            .finding
            .id;
        let after = s
            .decide_phi(&[phone.finding.id], &PhiDecision::Redact, "test lead")
            .unwrap();
        assert_eq!(
            (after.open, after.redacted),
            (1, 1),
            "one redacted, one open"
        );
        let kept = s.decide_phi(
            &[email],
            &PhiDecision::Keep {
                reason: "  ".into(),
            },
            "test lead",
        );
        assert!(
            matches!(&kept, Err(e) if e.code() == ErrorCode::EmptyReason),
            "keeping an original needs a reason"
        );
        let after = s
            .decide_phi(
                &[email],
                &PhiDecision::Keep {
                    reason: "a made-up address in a role-play".into(),
                },
                "test lead",
            )
            .unwrap();
        assert_eq!((after.open, after.kept), (0, 1), "nothing is open any more");
        let texts = s.store().phi_texts().unwrap();
        assert!(
            texts.iter().any(|t| t.text == "Call me on [PHONE] tonight")
                && !texts.iter().any(|t| t.text.contains("415-555-0132")),
            "the redacted number is gone from the stored text, replaced by its placeholder"
        );
        s.export_package("Ana", None, 9, &pass, LEAD)
            .expect("with every finding decided the package is written");
    }

    #[test]
    fn an_override_with_a_reason_writes_despite_open_findings_and_is_audited() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = study(dir.path());
        let csv = "context,response,Gemini,gpt-4o\nCall me on 415-555-0132,a,b,c\n";
        s.import_data(
            &ImportRequest {
                format: ImportFormat::Mentalbench,
                path: write(dir.path(), "phi.csv", csv),
                out_of_scale: OutOfScale::Keep,
                rubric: None,
                source: None,
                judge: None,
                expert: None,
                judges: false,
            },
            7,
        )
        .unwrap();
        let blank = PhiGate {
            actor: "test lead",
            override_reason: Some("   "),
        };
        assert!(
            s.export_ratings(&RatingsExport::new(RatingsFormat::LongCsv), None, blank)
                .is_err(),
            "a blank override reason is no override"
        );
        let gate = PhiGate {
            actor: "test lead",
            override_reason: Some("internal copy for the ethics board"),
        };
        s.export_ratings(&RatingsExport::new(RatingsFormat::LongCsv), None, gate)
            .expect("an override with a reason writes the export");
        let log = crate::guard::audit::log(s.store(), &Default::default()).unwrap();
        let entry = log
            .iter()
            .find(|e| e.entry.action == "phi.override")
            .expect("the override is in the audit trail");
        assert_eq!(
            (
                entry.entry.actor.as_str(),
                entry.entry.detail["reason"].as_str()
            ),
            ("test lead", Some("internal copy for the ethics board")),
            "with who overrode and why"
        );
    }
}
