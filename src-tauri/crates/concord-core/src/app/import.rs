//! Importing a dataset into the study: one job for every format ([`ImportJob`]: the
//! MentalAlign-70k release, MentalBench-100k answers, a PsyCrisis workbook, long-form items or
//! ratings, conversations of many turns), all or nothing, telling `progress` how far an import that can take long has come,
//! and scanning what it brought in for PHI (the findings come back with the report). The setup
//! wizard's request ([`ImportRequest`]: a typed absolute path, the format, the few choices the
//! window offers) is turned into the same job, and its problems come back as data it lists
//! ([`ImportOutcome`]) instead of one long message. An import drops the cached agreement reports.

use crate::app::open_study::OpenStudy;
use crate::app::paths::{typed_path, PathError};
use crate::base::error_code::{Coded, ErrorCode};
use crate::files::Issue;
use crate::guard::phi::review::{self, PhiError, PhiScanSummary};
use crate::intake::long::{self, ItemColumns, RatingColumns};
use crate::intake::{
    conversations, mentalalign, mentalbench, psycrisis, ImportError, ImportOptions, ImportProgress,
    ImportReport, OutOfScale,
};
use crate::rubric::reply::ReplyParsing;
use crate::store::RaterKind;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

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
    /// Conversations of many turns (chat JSON Lines or a turn table) rated with `rubric`.
    Conversations { file: PathBuf, rubric: String },
}

/// An import that landed, and the PHI scan of the texts it brought in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Imported {
    pub report: ImportReport,
    pub phi: PhiScanSummary,
    /// Answers the study now holds ratings for but no text (the MentalAlign release brings
    /// none; importing the MentalBench-100k file fills them).
    pub answers_without_text: i64,
}

/// Why an import did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ImportJobError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("a PsyCrisis import needs the key of the source that wrote the answers (e.g. gpt4o)")]
    MissingSource,
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error(transparent)]
    Phi(#[from] PhiError),
}

impl Coded for ImportJobError {
    fn code(&self) -> ErrorCode {
        match self {
            ImportJobError::Path(e) => e.code(),
            ImportJobError::MissingSource => ErrorCode::MissingSource,
            ImportJobError::Import(ImportError::Store(e)) => e.code(),
            ImportJobError::Import(ImportError::Rejected(_)) => ErrorCode::Invalid,
            ImportJobError::Phi(e) => e.code(),
        }
    }
}

/// Import `job` (all or nothing), then scan what it brought in for PHI as `actor`. `progress`
/// hears how far a long-form or conversations import has come (the others report nothing).
pub fn import(
    study: &mut OpenStudy,
    job: &ImportJob,
    options: &ImportOptions,
    actor: &str,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<Imported, ImportJobError> {
    let store = study.store_mut();
    let report = match job {
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
        ImportJob::Conversations { file, rubric } => {
            conversations::import_file_reporting(store, file, rubric, options, progress)
        }
    }?;
    let phi = review::scan(study.store_mut(), false, actor)?;
    let answers_without_text = study
        .store()
        .overview()
        .map_err(ImportError::Store)?
        .responses_without_text;
    Ok(Imported {
        report,
        phi,
        answers_without_text,
    })
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
    /// Conversations of many turns: chat JSON Lines, or a turn table (CSV, XLSX, JSON Lines).
    Conversations,
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
    /// Rubric of the long-form and conversations files (default MentalBench).
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
    pub fn job(&self) -> Result<ImportJob, ImportJobError> {
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
                    source_key: given(&self.source).ok_or(ImportJobError::MissingSource)?,
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
            ImportFormat::Conversations => ImportJob::Conversations { file: path, rubric },
        })
    }

    /// The options the wizard imports with: strict reply parsing; `seed` orders the queues of
    /// raters the import creates.
    pub fn options(&self, seed: u64) -> ImportOptions {
        ImportOptions {
            out_of_scale: self.out_of_scale,
            replies: ReplyParsing::Strict,
            seed,
        }
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
    pub phi: Option<PhiScanSummary>,
    /// Answers the study holds no text for after the import (0 when it was refused).
    pub answers_without_text: i64,
}

/// The wizard's import: [`import`] of the job `request` describes, problems in the input
/// returned as data.
pub fn import_request(
    study: &mut OpenStudy,
    request: &ImportRequest,
    seed: u64,
    actor: &str,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<ImportOutcome, ImportJobError> {
    let job = request.job()?;
    match import(study, &job, &request.options(seed), actor, progress) {
        Ok(Imported {
            report,
            phi,
            answers_without_text,
        }) => Ok(ImportOutcome {
            report: Some(report),
            issues: Vec::new(),
            phi: Some(phi),
            answers_without_text,
        }),
        Err(ImportJobError::Import(ImportError::Rejected(issues))) => Ok(ImportOutcome {
            report: None,
            issues,
            phi: None,
            answers_without_text: 0,
        }),
        Err(e) => Err(e),
    }
}
