//! The lead's setup wizard on an open study: one entry point per step (custom rubric file, data
//! import, experts, sample and assignment, packages, exports and the fill-in sheet), each a thin
//! composition of the importers, `assignment`, `package` and `export` modules with the desktop's
//! conventions added — typed absolute paths, default output files in the study's export folder
//! (`<study>-exports/` beside the study), outputs written to a temporary sibling and renamed into
//! place, and rejections (bad rows, bad cells) returned as data the wizard lists instead of one
//! long error message. Writes that bring many ratings in (imports, merges, filled sheets) go
//! through [`OpenStudy::store_mut`], which drops the cached agreement reports.

use crate::assignment::{
    self, AssignmentError, AssignmentOptions, AssignmentSummary, AssignmentTable, ExpertAdded,
    RubricAdded,
};
use crate::export::{
    self, CellError, CsvOptions, ExportError, SheetImportReport, SheetSummary, WorkbookOptions,
};
use crate::import::long::{self, ItemColumns, RatingColumns};
use crate::import::{
    mentalalign, mentalbench, psycrisis, ImportError, ImportOptions, ImportReport, Issue,
    OutOfScale, ReplyParsing,
};
use crate::open_study::OpenStudy;
use crate::package::{self, MergeReport, PackageError, PackageSummary};
use crate::store::{RaterKind, StoreError};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// What the import step asks for.
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

/// An import that happened (`report`) or was refused because of problems in the input
/// (`issues`, each with its file, sheet, row and column; nothing was written).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportOutcome {
    pub report: Option<ImportReport>,
    pub issues: Vec<Issue>,
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

/// A file the wizard wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WrittenFile {
    pub path: String,
    /// Ratings in the file (rating exports) or items in it (rating sheets).
    pub count: usize,
}

/// A rater package written for one expert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PackageWritten {
    pub path: String,
    pub summary: PackageSummary,
}

#[derive(Debug, thiserror::Error)]
pub enum LeadError {
    #[error("type a full (absolute) path, e.g. /home/me/study/data.csv; {0:?} is relative")]
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
    Store(#[from] StoreError),
}

impl LeadError {
    /// A stable machine-readable code for the UI.
    pub fn code(&self) -> &'static str {
        match self {
            LeadError::RelativePath(_) | LeadError::EmptyPath => "path",
            LeadError::ReadRubric { .. } => "unreadable",
            LeadError::MissingSource => "missing_source",
            LeadError::Write { .. } => "io",
            LeadError::Assignment(AssignmentError::Rubric(_)) => "rubric",
            LeadError::Assignment(AssignmentError::Store(e)) => e.code(),
            LeadError::Assignment(_) => "assignment",
            LeadError::Package(PackageError::Store(e)) => e.code(),
            LeadError::Package(_) => "package",
            LeadError::Export(ExportError::Store(e)) => e.code(),
            LeadError::Export(_) => "export",
            LeadError::Store(e) => e.code(),
        }
    }
}

/// A typed path, which must be absolute: the app's working folder means nothing to its user.
pub fn typed_path(text: &str) -> Result<PathBuf, LeadError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(LeadError::EmptyPath);
    }
    let path = PathBuf::from(text);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(LeadError::RelativePath(text.to_string()))
    }
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

fn io(path: &Path, e: impl std::fmt::Display) -> LeadError {
    LeadError::Write {
        path: path.display().to_string(),
        detail: e.to_string(),
    }
}

/// Write through `f` into `<out>.partial`, then rename it to `out`; a failure leaves no file.
fn write_atomically<T>(
    out: &Path,
    f: impl FnOnce(&Path) -> Result<T, LeadError>,
) -> Result<T, LeadError> {
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

    /// Where an output goes: the typed absolute path, or `default` in the export folder (which is
    /// created).
    fn output_path(&self, typed: Option<&str>, default: &str) -> Result<PathBuf, LeadError> {
        match typed.filter(|t| !t.trim().is_empty()) {
            Some(t) => typed_path(t),
            None => Ok(self.created_export_dir()?.join(default)),
        }
    }

    /// The export folder, created when missing.
    fn created_export_dir(&self) -> Result<PathBuf, LeadError> {
        let dir = self.export_dir()?;
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        Ok(dir)
    }

    /// Step 1: add a custom rubric file (TOML or JSON) unless the identical rubric is there.
    pub fn add_rubric_path(&mut self, path: &str) -> Result<RubricAdded, LeadError> {
        let path = typed_path(path)?;
        let text = crate::rubric::read_text(&path).map_err(|e| LeadError::ReadRubric {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(assignment::add_rubric_file(self.store_mut(), &text, &name)?)
    }

    /// Step 2: import a released dataset or a long-form file. `seed` orders the queues of raters
    /// the import creates.
    pub fn import_data(
        &mut self,
        request: &ImportRequest,
        seed: u64,
    ) -> Result<ImportOutcome, LeadError> {
        let path = typed_path(&request.path)?;
        let options = ImportOptions {
            out_of_scale: request.out_of_scale,
            replies: ReplyParsing::Strict,
            seed,
        };
        let rubric = request
            .rubric
            .clone()
            .filter(|r| !r.trim().is_empty())
            .unwrap_or_else(|| "mentalbench".into());
        let given = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
        if request.format == ImportFormat::Psycrisis && given(&request.source).is_none() {
            return Err(LeadError::MissingSource);
        }
        let store = self.store_mut();
        let result = match request.format {
            ImportFormat::Mentalalign => match given(&request.judge) {
                Some(judge) => mentalalign::import_dir_as(store, &path, &options, &judge),
                None => mentalalign::import_dir(store, &path, &options),
            },
            ImportFormat::Mentalbench => mentalbench::import_file(store, &path, None, &options),
            ImportFormat::Psycrisis => psycrisis::import_file(
                store,
                &path,
                &psycrisis::CrisisFile {
                    source_key: given(&request.source).unwrap_or_default(),
                    source_name: None,
                    judge: given(&request.judge),
                    expert: given(&request.expert),
                    sheet: None,
                },
                &options,
            ),
            ImportFormat::LongItems => long::import_items(
                store,
                &path,
                &rubric,
                &ItemColumns::default(),
                None,
                &options,
            ),
            ImportFormat::LongRatings => long::import_ratings(
                store,
                &path,
                &rubric,
                &RatingColumns {
                    item: "item".into(),
                    rater: "rater".into(),
                    criterion: "criterion".into(),
                    score: "score".into(),
                    rationale: "rationale".into(),
                    new_rater_kind: if request.judges {
                        RaterKind::Judge
                    } else {
                        RaterKind::Expert
                    },
                },
                None,
                &options,
            ),
        };
        match result {
            Ok(report) => Ok(ImportOutcome {
                report: Some(report),
                issues: Vec::new(),
            }),
            Err(ImportError::Rejected(issues)) => Ok(ImportOutcome {
                report: None,
                issues,
            }),
            Err(ImportError::Store(e)) => Err(e.into()),
        }
    }

    /// Step 3: add an expert by name (an existing expert of that name is returned as is).
    pub fn add_expert(&mut self, name: &str, queue_seed: u64) -> Result<ExpertAdded, LeadError> {
        Ok(assignment::add_expert(self.store_mut(), name, queue_seed)?)
    }

    /// Step 4: what `options` would assign, without writing anything.
    pub fn preview_assignment(
        &self,
        options: &AssignmentOptions,
    ) -> Result<AssignmentSummary, LeadError> {
        Ok(assignment::preview(self.store(), options)?)
    }

    /// Step 4: draw the sample and write the assignment.
    pub fn assign(&mut self, options: &AssignmentOptions) -> Result<AssignmentSummary, LeadError> {
        Ok(assignment::assign(self.store_mut(), options)?)
    }

    /// Step 5: the assignment with every expert's progress.
    pub fn assignment_table(&self) -> Result<AssignmentTable, LeadError> {
        Ok(assignment::progress(self.store())?)
    }

    /// Step 6: write `expert`'s package to the typed path, or to
    /// `<study>-package-<expert>.concord` in the export folder (numbered when taken).
    pub fn export_package(
        &mut self,
        expert: &str,
        out: Option<&str>,
        seed: u64,
    ) -> Result<PackageWritten, LeadError> {
        let path = match out.filter(|t| !t.trim().is_empty()) {
            Some(t) => typed_path(t)?,
            None => {
                let name = format!(
                    "{}-package-{}.concord",
                    self.study_stem(),
                    name_slug(expert)
                );
                unused_path(&self.created_export_dir()?, &name)
            }
        };
        let summary = package::export_package(self.store_mut(), expert, &path, seed)?;
        Ok(PackageWritten {
            path: path.display().to_string(),
            summary,
        })
    }

    /// Step 6: merge a returned package; conflicts are listed, the study keeps its values.
    pub fn merge_package(&mut self, path: &str) -> Result<MergeReport, LeadError> {
        let path = typed_path(path)?;
        Ok(package::merge_package(self.store_mut(), &path)?)
    }

    /// Step 7: every rating as a long or wide CSV (`excel`: byte-order mark and CRLF) or the
    /// results workbook, to the typed path or a default file in the export folder.
    pub fn export_ratings(
        &mut self,
        format: RatingsFormat,
        out: Option<&str>,
        excel: bool,
    ) -> Result<WrittenFile, LeadError> {
        let path = self.output_path(out, &format.default_name(&self.study_stem()))?;
        let options = CsvOptions {
            excel,
            texts: false,
        };
        let store = self.store();
        let count = write_atomically(&path, |tmp| match format {
            RatingsFormat::LongCsv | RatingsFormat::WideCsv => {
                let file = std::fs::File::create(tmp).map_err(|e| io(&path, e))?;
                let mut w = std::io::BufWriter::new(file);
                let summary = if format == RatingsFormat::LongCsv {
                    export::write_long_csv(store, &mut w, options)?
                } else {
                    export::write_wide_csv(store, &mut w, options)?
                };
                w.flush().map_err(|e| io(&path, e))?;
                Ok(summary.ratings)
            }
            RatingsFormat::Xlsx => {
                Ok(export::write_workbook(store, tmp, &WorkbookOptions::default())?.ratings)
            }
        })?;
        Ok(WrittenFile {
            path: path.display().to_string(),
            count,
        })
    }

    /// Step 7: the fill-in rating sheet of `expert`, to the typed path or
    /// `<study>-sheet-<expert>.xlsx` in the export folder.
    pub fn export_sheet(&self, expert: &str, out: Option<&str>) -> Result<WrittenFile, LeadError> {
        let name = format!("{}-sheet-{}.xlsx", self.study_stem(), name_slug(expert));
        let path = self.output_path(out, &name)?;
        let summary: SheetSummary = write_atomically(&path, |tmp| {
            Ok(export::write_rating_sheet(self.store(), expert, tmp)?)
        })?;
        Ok(WrittenFile {
            path: path.display().to_string(),
            count: summary.rows,
        })
    }

    /// Step 7: import a filled rating sheet as its expert's ratings (all or nothing).
    pub fn import_sheet(&mut self, path: &str) -> Result<SheetOutcome, LeadError> {
        let path = typed_path(path)?;
        match export::import_rating_sheet(self.store_mut(), &path) {
            Ok(report) => Ok(SheetOutcome {
                report: Some(report),
                errors: Vec::new(),
            }),
            Err(export::sheet::SheetError::Rejected(errors)) => Ok(SheetOutcome {
                report: None,
                errors,
            }),
            Err(export::sheet::SheetError::Export(e)) => Err(e.into()),
            Err(export::sheet::SheetError::Store(e)) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SteppingClock;
    use crate::store::Store;
    use std::sync::Arc;

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
    fn typed_paths_must_be_absolute() {
        assert!(
            matches!(typed_path("data.csv"), Err(LeadError::RelativePath(_))),
            "a relative path is refused with its own error"
        );
        assert!(
            matches!(typed_path("   "), Err(LeadError::EmptyPath)),
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

        let first = s.export_package("Ana", None, 9).expect("package written");
        let second = s.export_package("Ana", None, 9).expect("second package");
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
            .merge_package(&first.path)
            .expect("merge of an untouched package");
        assert!(
            merged.conflicts.is_empty() && merged.inserted == 0,
            "nothing to merge from an untouched package"
        );

        let csv = s
            .export_ratings(RatingsFormat::LongCsv, None, true)
            .expect("csv written");
        let bytes = std::fs::read(&csv.path).expect("csv on disk");
        assert!(
            bytes.starts_with(b"\xEF\xBB\xBFconversation_id,"),
            "the Excel option adds a byte-order mark before the header"
        );
        let sheet = s.export_sheet("Ben", None).expect("sheet written");
        assert_eq!(sheet.count, 8, "one sheet row per assigned item");
        let back = s
            .import_sheet(&sheet.path)
            .expect("the untouched sheet reads back");
        let report = back.report.expect("an untouched sheet is accepted");
        assert_eq!(
            (report.rater.as_str(), report.inserted),
            ("Ben", 0),
            "an untouched sheet is Ben's and brings no values"
        );
        let bad = s
            .import_sheet(&write(dir.path(), "notes.xlsx", "not a workbook"))
            .expect("a refused sheet is an outcome, not an error");
        assert!(
            bad.report.is_none() && !bad.errors.is_empty(),
            "a file that is not a workbook is refused with its problems listed"
        );
        let refused = s
            .export_ratings(RatingsFormat::WideCsv, Some("relative.csv"), false)
            .expect_err("relative output path refused");
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
            matches!(psy, Err(LeadError::MissingSource)),
            "PsyCrisis needs its answering source"
        );
        let rubric = s.add_rubric_path(&write(dir.path(), "r.toml", "id = 3"));
        assert!(
            matches!(
                rubric,
                Err(LeadError::Assignment(AssignmentError::Rubric(_)))
            ),
            "an invalid rubric file is refused by the core's validation"
        );
    }
}
