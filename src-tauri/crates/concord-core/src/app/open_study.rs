//! An open study as the desktop app holds it: the store plus the agreement reports computed from
//! it, kept in memory so that one new rating updates the panel incrementally instead of reloading
//! hundreds of thousands of ratings. Every write path the app offers goes through here, so the
//! cached reports never disagree with the file: a value from the rating screen is applied to each
//! cached report; anything bulkier (an import, a judge run, a merged package) drops the cache.
//!
//! A report holds only the responses experts rated ([`AgreementData::load_compared`]), so the
//! panel opens without reading a large study's judge-only ratings; the judge verdicts, which need
//! them, load every response of the rubric the first time they are asked for and keep those
//! data up to date the same way. A commit to the file by any other connection (a judge run,
//! another process) changes SQLite's `data_version`, which is checked before anything held is
//! used or updated: then everything held is dropped and read again.

use crate::guard::phi::review;
pub use crate::guard::phi::review::PhiGate;
use crate::panel::agreement::verdict::assemble_verdicts;
use crate::panel::agreement::verdict::criterion_verdicts;
use crate::panel::agreement::verdict::CriterionVerdicts;
use crate::panel::agreement::verdict::VerdictOptions;
use crate::panel::agreement::verdict::VerdictReport;
use crate::panel::agreement::AgreementData;
use crate::panel::agreement::AgreementEngine;
use crate::panel::agreement::AgreementOptions;
use crate::panel::agreement::AgreementReport;
use crate::panel::agreement::Comparison;
use crate::panel::agreement_table::plan_more;
use crate::panel::agreement_table::render;
use crate::panel::agreement_table::table;
use crate::panel::agreement_table::use_reml_bands;
use crate::panel::agreement_table::AgreementTable;
use crate::panel::agreement_table::IccChoice;
use crate::panel::agreement_table::MoreTargets;
use crate::panel::agreement_table::PlanError;
use crate::panel::agreement_table::TableFormat;
use crate::panel::agreement_table::TableView;
use crate::store::{Store, StoreError, StoreResult};
use crate::workflow::queue;
use crate::workflow::queue::ItemProgress;
use crate::workflow::queue::QueueError;
use std::path::PathBuf;

pub struct OpenStudy {
    store: Store,
    reports: Vec<AgreementEngine>,
    /// Every response of a rubric (what the judge verdicts read), by rubric, with the verdicts
    /// last computed from them.
    full: Vec<HeldVerdicts>,
    /// [`Store::outside_changes`] when the held reports were last known current.
    seen: Option<i64>,
}

/// A rubric's data for the verdicts and the verdicts of its criteria for one set of options;
/// a criterion's part is dropped when a rating on it arrives and recomputed on the next request.
#[derive(Debug)]
struct HeldVerdicts {
    data: AgreementData,
    options: Option<VerdictOptions>,
    parts: Vec<Option<CriterionVerdicts>>,
}

impl std::fmt::Debug for OpenStudy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenStudy")
            .field("store", &self.store)
            .field("cached_reports", &self.reports.len())
            .field("cached_full_data", &self.full.len())
            .finish()
    }
}

/// At most this many differently-configured reports stay in memory.
const CACHED_REPORTS: usize = 4;

impl OpenStudy {
    pub fn new(store: Store) -> OpenStudy {
        OpenStudy {
            store,
            reports: Vec::new(),
            full: Vec::new(),
            seen: None,
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Write access for operations that change many ratings at once; the cached reports are
    /// dropped because they can no longer be trusted.
    pub fn store_mut(&mut self) -> &mut Store {
        self.invalidate_reports();
        &mut self.store
    }

    /// Drop the cached reports because the study file was changed through another connection
    /// (a judge run writing on its own thread); the next request reloads them from the file.
    pub fn invalidate_reports(&mut self) {
        self.reports.clear();
        self.full.clear();
    }

    /// Drop what is held if another connection (another process, a judge run) committed to the
    /// study file since it was last known current, so nothing stale is ever shown.
    fn drop_if_changed_outside(&mut self) -> StoreResult<()> {
        let now = self.store.outside_changes()?;
        if self.seen != Some(now) {
            self.invalidate_reports();
            self.seen = Some(now);
        }
        Ok(())
    }

    /// How many agreement reports are held in memory (a report that could not take a rating in
    /// place is dropped and reloaded on its next request).
    pub fn cached_reports(&self) -> usize {
        self.reports.len()
    }

    /// The agreement report for `options`, from memory when it was computed before.
    pub fn agreement(&mut self, options: &AgreementOptions) -> StoreResult<&AgreementReport> {
        Ok(self.engine(options)?.report())
    }

    /// "Can this judge replace the experts?": expert baselines, verdict cards and the leaderboard
    /// for the rubric of `options`, over every response of the rubric (the judge-only mean and
    /// PPI++ read the judges' scores of responses no expert rated), held in memory.
    pub fn judge_verdicts(
        &mut self,
        options: &AgreementOptions,
        verdict: &VerdictOptions,
    ) -> StoreResult<VerdictReport> {
        self.drop_if_changed_outside()?;
        let found = self
            .full
            .iter()
            .position(|h| h.data.rubric_key == options.rubric);
        let index = match found {
            Some(i) => i,
            None => {
                if self.full.len() >= CACHED_REPORTS {
                    self.full.remove(0);
                }
                let data = AgreementData::load(&self.store, &options.rubric)?;
                self.full.push(HeldVerdicts {
                    parts: vec![None; data.criteria.len()],
                    data,
                    options: None,
                });
                self.full.len() - 1
            }
        };
        let held = &mut self.full[index];
        if held.options.as_ref() != Some(verdict) {
            held.parts.iter_mut().for_each(|p| *p = None);
            held.options = Some(verdict.clone());
        }
        let data = &held.data;
        let parts: Vec<CriterionVerdicts> = held
            .parts
            .iter_mut()
            .enumerate()
            .map(|(c, part)| {
                part.get_or_insert_with(|| criterion_verdicts(data, c, verdict))
                    .clone()
            })
            .collect();
        Ok(assemble_verdicts(verdict, &parts))
    }

    /// The in-memory ratings behind the report for `options` (the responses experts rated).
    pub fn agreement_data(&mut self, options: &AgreementOptions) -> StoreResult<&AgreementData> {
        Ok(self.engine(options)?.data())
    }

    /// The cached engine for `options`, loaded from the study when it is not in memory.
    fn engine(&mut self, options: &AgreementOptions) -> StoreResult<&AgreementEngine> {
        self.drop_if_changed_outside()?;
        let found = self
            .reports
            .iter()
            .position(|e| e.report().options == *options);
        let index = match found {
            Some(i) => i,
            None => {
                if self.reports.len() >= CACHED_REPORTS {
                    self.reports.remove(0);
                }
                self.reports
                    .push(AgreementEngine::load(&self.store, options.clone())?);
                self.reports.len() - 1
            }
        };
        Ok(&self.reports[index])
    }

    /// Enter a value from the rating screen and bring every cached report up to date. A value
    /// the rater signed off changes only with `reason`.
    pub fn rate(
        &mut self,
        rater_id: i64,
        item: i64,
        criterion: &str,
        value: i64,
        reason: Option<&str>,
    ) -> Result<ItemProgress, QueueError> {
        // What was held must be current before one value is applied to it in place.
        if self.drop_if_changed_outside().is_err() {
            self.invalidate_reports();
        }
        let (progress, saved) =
            queue::rate_and_locate(&mut self.store, rater_id, item, criterion, value, reason)?;
        if !saved.retest {
            // A report that cannot take the value in place (a rater it has never seen) is
            // dropped and rebuilt on its next request.
            let store = &self.store;
            let value = Some(saved.value as f64);
            self.reports.retain_mut(|engine| {
                engine.data().rubric_key != saved.rubric_key
                    || (engine.take_response(store, saved.response_id).is_ok()
                        && engine
                            .apply(saved.rater_id, saved.response_id, saved.criterion_id, value)
                            .is_ok())
            });
            self.full.retain_mut(|held| {
                if held.data.rubric_key != saved.rubric_key {
                    return true;
                }
                match held
                    .data
                    .apply(saved.rater_id, saved.response_id, saved.criterion_id, value)
                {
                    Ok(touched) => {
                        held.parts[touched.criterion] = None;
                        true
                    }
                    Err(_) => false,
                }
            });
        }
        Ok(progress)
    }
}

/// Rating-screen writes that change no rating value, so cached reports stay valid.
impl OpenStudy {
    pub fn open_queue(&mut self, rater_id: i64) -> Result<queue::QueueSummary, QueueError> {
        queue::open_queue(&mut self.store, rater_id)
    }

    pub fn create_profile(
        &mut self,
        name: &str,
        queue_seed: u64,
    ) -> Result<queue::RaterProfile, QueueError> {
        queue::create_profile(&mut self.store, name, queue_seed)
    }

    pub fn set_rationale(
        &mut self,
        rater_id: i64,
        item: i64,
        text: &str,
    ) -> Result<(), QueueError> {
        queue::set_rationale(&mut self.store, rater_id, item, text)
    }

    pub fn flag_item(&mut self, rater_id: i64, item: i64, reason: &str) -> Result<(), QueueError> {
        queue::flag_item(&mut self.store, rater_id, item, reason)
    }

    pub fn leave_item(
        &mut self,
        rater_id: i64,
        item: i64,
        seconds: f64,
        next_item: i64,
    ) -> Result<(), QueueError> {
        queue::leave_item(&mut self.store, rater_id, item, seconds, next_item)
    }
}

/// Expert sign-off from the rating screen.
impl OpenStudy {
    /// The expert's signing state (their own signatures only).
    pub fn signoff_state(
        &self,
        rater_id: i64,
    ) -> Result<crate::workflow::signoff::SignoffState, crate::workflow::signoff::SignoffError>
    {
        crate::workflow::signoff::state(&self.store, rater_id)
    }

    /// Set (or replace, given the current one) the expert's signing passphrase.
    pub fn set_signing_passphrase(
        &mut self,
        rater_id: i64,
        current: Option<&str>,
        passphrase: &str,
        salt_seed: u64,
    ) -> Result<crate::workflow::signoff::SignoffState, crate::workflow::signoff::SignoffError>
    {
        crate::workflow::signoff::set_passphrase(
            &mut self.store,
            rater_id,
            current,
            passphrase,
            salt_seed,
            crate::workflow::signoff::ITERATIONS,
        )?;
        crate::workflow::signoff::state(&self.store, rater_id)
    }

    /// Sign the expert's assigned ratings after checking the passphrase.
    pub fn sign_off(
        &mut self,
        rater_id: i64,
        passphrase: &str,
    ) -> Result<crate::workflow::signoff::SignoffState, crate::workflow::signoff::SignoffError>
    {
        crate::workflow::signoff::sign_assignment(&mut self.store, rater_id, passphrase)?;
        crate::workflow::signoff::state(&self.store, rater_id)
    }
}

/// The PHI guard from the window: the review queue and the lead's decisions. Texts change, ratings
/// do not, so the cached reports stay valid.
impl OpenStudy {
    /// Scan the texts written since the last scan (what an import brought in).
    pub fn scan_phi(&mut self, actor: &str) -> Result<review::PhiScanSummary, review::PhiError> {
        review::scan(&mut self.store, false, actor)
    }

    /// Every finding, open ones in their context.
    pub fn phi_review(&self) -> Result<review::PhiReview, review::PhiError> {
        review::review_queue(&self.store)
    }

    /// Redact the findings `ids` (typed placeholders in the stored texts), or keep them with a
    /// reason; returns the review queue afterwards.
    pub fn decide_phi(
        &mut self,
        ids: &[i64],
        decision: &PhiDecision,
        actor: &str,
    ) -> Result<review::PhiReview, review::PhiError> {
        let selection = review::Selection::Ids(ids.to_vec());
        match decision {
            PhiDecision::Redact => review::redact(&mut self.store, &selection, actor)?,
            PhiDecision::Keep { reason } => {
                review::keep(&mut self.store, &selection, reason, actor)?
            }
        };
        review::review_queue(&self.store)
    }

    /// Refuse to write `what` while findings are open, unless the gate carries a reason.
    pub fn require_phi_reviewed(
        &mut self,
        what: &str,
        gate: PhiGate<'_>,
    ) -> Result<(), review::PhiError> {
        review::require_reviewed(&mut self.store, what, gate.override_reason, gate.actor)
    }
}

/// The lead's decision on PHI findings.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PhiDecision {
    /// Replace each identifier by its typed placeholder.
    Redact,
    /// Keep the originals on purpose.
    Keep { reason: String },
}

/// The agreement table, its exports, and figures saved beside the study.
impl OpenStudy {
    /// The agreement table for `options` seen as `view`.
    pub fn agreement_table(
        &mut self,
        options: &AgreementOptions,
        view: TableView,
    ) -> StoreResult<AgreementTable> {
        let mut t = table(self.agreement(options)?, view);
        if view.level == crate::panel::agreement::Level::Item
            && matches!(view.icc, IccChoice::A1 | IccChoice::C1)
        {
            let baselines =
                crate::panel::agreement::verdict::expert_baselines(self.agreement_data(options)?);
            use_reml_bands(&mut t, &baselines);
        }
        Ok(t)
    }

    /// Write the table in `format` beside the study file; returns the path written.
    pub fn export_agreement(
        &mut self,
        options: &AgreementOptions,
        view: TableView,
        format: TableFormat,
    ) -> StoreResult<PathBuf> {
        let t = self.agreement_table(options, view)?;
        let icc = match view.icc {
            IccChoice::C1 => "icc-c1",
            IccChoice::A1 => "icc-a1",
            IccChoice::Icc1 => "icc-1-1",
            IccChoice::Icc1k => "icc-1-k",
            IccChoice::Ak => "icc-a-k",
            IccChoice::Ck => "icc-c-k",
        };
        let name = format!(
            "{}-agreement-{}-{}-{}.{}",
            options.rubric,
            view.level.as_str(),
            icc,
            comparison_slug(view.comparison),
            format.extension()
        );
        let provenance = crate::guard::provenance::Provenance::of(
            &self.store,
            serde_json::json!({ "agreement": options, "table": view }),
        )?;
        self.save_export(&name, render(&t, format, &provenance).as_bytes())
    }

    /// The study's export folder, `<study name>-exports` beside the study file (not created here).
    pub fn export_dir(&self) -> StoreResult<PathBuf> {
        let study = self.store.path().ok_or_else(|| {
            StoreError::Invalid("an in-memory study has no folder to export into".into())
        })?;
        let stem = study
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "study".into());
        Ok(study
            .parent()
            .unwrap_or_else(|| std::path::Path::new("."))
            .join(format!("{stem}-exports")))
    }

    /// Write bytes (a figure, a table) as `name` into the study's export folder
    /// (`<study name>-exports` beside the study file); returns the path written.
    pub fn save_export(&self, name: &str, bytes: &[u8]) -> StoreResult<PathBuf> {
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let clean = clean.trim_start_matches('.').to_string();
        if clean.is_empty() {
            return Err(StoreError::Invalid("an export needs a file name".into()));
        }
        let dir = self.export_dir()?;
        let io = |e: std::io::Error, p: &std::path::Path| StoreError::Io {
            path: p.display().to_string(),
            detail: e.to_string(),
        };
        std::fs::create_dir_all(&dir).map_err(|e| io(e, &dir))?;
        let path = dir.join(crate::base::text::bounded_file_name(&clean));
        // Write whole or not at all: a temporary file renamed into place.
        let tmp = path.with_extension("partial");
        std::fs::write(&tmp, bytes).map_err(|e| io(e, &tmp))?;
        std::fs::rename(&tmp, &path).map_err(|e| io(e, &path))?;
        Ok(path)
    }
}

fn comparison_slug(c: Comparison) -> &'static str {
    match c {
        Comparison::JudgeVsExperts => "judge-vs-experts",
        Comparison::JudgeVsExpert => "judge-vs-each-expert",
        Comparison::ExpertVsExpert => "expert-vs-expert",
    }
}

impl OpenStudy {
    /// How many more targets the cell (criterion × rater × reference in `view`) needs for its CI
    /// to be at most `width` wide.
    pub fn plan_more(
        &mut self,
        options: &AgreementOptions,
        view: TableView,
        criterion: &str,
        rater: &str,
        reference: &str,
        width: f64,
    ) -> Result<MoreTargets, PlanError> {
        let t = self
            .agreement_table(options, view)
            .map_err(|e| PlanError::Study(e.to_string()))?;
        let col = t
            .columns
            .iter()
            .position(|c| c.rater == rater && c.reference == reference);
        let cell = t
            .rows
            .iter()
            .find(|r| r.criterion == criterion)
            .and_then(|r| col.and_then(|i| r.cells.get(i).cloned().flatten()))
            .ok_or(PlanError::NoEstimate)?;
        plan_more(&cell, width)
    }
}

/// The methods appendix, beside the study or wherever the lead chooses.
impl OpenStudy {
    /// Write the methods appendix for `options` into `dir`: refused while PHI findings are open
    /// unless `gate` overrides with a reason (its `ratings.csv` carries every rating with the judges'
    /// rationales); the table and the study's structure come from the cached reports.
    pub fn write_methods_appendix(
        &mut self,
        options: &AgreementOptions,
        dir: &std::path::Path,
        software: &str,
        gate: PhiGate<'_>,
    ) -> Result<Vec<std::path::PathBuf>, crate::outputs::methods::MethodsError> {
        use crate::outputs::methods;
        self.require_phi_reviewed("the methods appendix", gate)?;
        let table = self.agreement_table(options, methods::appendix_view())?;
        let meta = methods::study_json(self.agreement_data(options)?, options, software);
        methods::write_appendix(&self.store, &table, &meta, options, dir, software)
    }
}
