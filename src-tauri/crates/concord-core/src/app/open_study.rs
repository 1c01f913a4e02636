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

use crate::panel::agreement::verdict::assemble_verdicts;
use crate::panel::agreement::verdict::criterion_verdicts;
use crate::panel::agreement::verdict::CriterionVerdicts;
use crate::panel::agreement::verdict::VerdictOptions;
use crate::panel::agreement::verdict::VerdictReport;
use crate::panel::agreement::AgreementData;
use crate::panel::agreement::AgreementEngine;
use crate::panel::agreement::AgreementOptions;
use crate::panel::agreement::AgreementReport;
use crate::panel::agreement_table::table;
use crate::panel::agreement_table::use_reml_bands;
use crate::panel::agreement_table::AgreementTable;
use crate::panel::agreement_table::IccChoice;
use crate::panel::agreement_table::TableView;
use crate::store::lead_key::KeyStore;
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

/// Where this process keeps the studies' lead keys, once a front end has said.
static LEAD_KEYS: std::sync::OnceLock<KeyStore> = std::sync::OnceLock::new();

/// Keep the lead keys of the studies this process opens in `keys` (the CLI and the desktop shell
/// call it once at start with [`KeyStore::from_env`]; tests with a folder of their own). The first
/// call wins. Until it is made, studies are held without lead keys: nothing is signed and no
/// keyring is touched.
pub fn keep_lead_keys_in(keys: KeyStore) {
    let _ = LEAD_KEYS.set(keys);
}

/// Keep lead keys where this machine keeps them ([`KeyStore::from_env`]: the folder
/// `CONCORD_KEY_DIR` names, else the OS keyring with a private file in the user's data folder
/// where no keyring answers). What both front ends call at start.
pub fn keep_lead_keys_on_this_machine() {
    keep_lead_keys_in(KeyStore::from_env());
}

/// The lead keys of this process, if a front end said where they are kept.
pub fn lead_keys() -> Option<&'static KeyStore> {
    LEAD_KEYS.get()
}

/// At most this many differently-configured reports stay in memory.
const CACHED_REPORTS: usize = 4;

impl OpenStudy {
    /// Hold `store` for the jobs of a front end, with the lead keys of this process
    /// ([`keep_lead_keys_in`]): a lead's study whose key is there signs a checkpoint of its audit
    /// chain at every write, and one without a key gets one at its first write.
    pub fn new(mut store: Store) -> OpenStudy {
        if let Some(keys) = lead_keys() {
            // A study whose key state cannot be read is held as one without a key here: its
            // writes are not checkpointed, which `audit verify` reports.
            let _ = store.use_lead_keys(keys.clone());
        }
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

    /// The study file's path (none for a study held in memory).
    pub fn path(&self) -> Option<&std::path::Path> {
        self.store.path()
    }

    /// Whether the study file is encrypted.
    pub fn is_encrypted(&self) -> bool {
        self.store.is_encrypted()
    }

    /// The passphrase the study was opened with (an encrypted study's), held while it is open.
    pub fn passphrase(&self) -> Option<&crate::store::Passphrase> {
        self.store.passphrase()
    }

    /// Write access for operations that change many ratings at once; the cached reports are
    /// dropped because they can no longer be trusted.
    /// Close the study whole (see [`Store::close`]); for an exit that skips destructors.
    pub fn close(self) -> Result<(), crate::store::StoreError> {
        self.store.close()
    }

    pub fn store_mut(&mut self) -> &mut Store {
        self.invalidate_reports();
        &mut self.store
    }

    /// Write access for what changes no rating value (a rationale, a flag, time on an item, a
    /// signature, a PHI decision, a profile): the cached reports stay valid.
    pub(crate) fn store_keeping_reports(&mut self) -> &mut Store {
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
        let index = self.held_full(&options.rubric)?;
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

    /// Every rating of `rubric` in memory (every response, the judges' scores of responses no
    /// expert rated too), as the verdicts hold it.
    pub fn full_data(&mut self, rubric: &str) -> StoreResult<&AgreementData> {
        let index = self.held_full(rubric)?;
        Ok(&self.full[index].data)
    }

    /// The position of `rubric`'s full data in the cache, loaded from the study when it is not
    /// in memory.
    fn held_full(&mut self, rubric: &str) -> StoreResult<usize> {
        self.drop_if_changed_outside()?;
        if let Some(i) = self.full.iter().position(|h| h.data.rubric_key == rubric) {
            return Ok(i);
        }
        if self.full.len() >= CACHED_REPORTS {
            self.full.remove(0);
        }
        let data = AgreementData::load(&self.store, rubric)?;
        self.full.push(HeldVerdicts {
            parts: vec![None; data.criteria.len()],
            data,
            options: None,
        });
        Ok(self.full.len() - 1)
    }

    /// The in-memory ratings behind the report for `options` (the responses experts rated).
    pub fn agreement_data(&mut self, options: &AgreementOptions) -> StoreResult<&AgreementData> {
        Ok(self.engine(options)?.data())
    }

    /// The ratings of the rubric of `options` as a report reads them: those of any report of the
    /// rubric in memory (the ratings held do not depend on a report's options), else those of a
    /// report of `options`, loaded and kept.
    pub fn rubric_data(&mut self, options: &AgreementOptions) -> StoreResult<AgreementData> {
        self.drop_if_changed_outside()?;
        if let Some(e) = self
            .reports
            .iter()
            .find(|e| e.report().options.rubric == options.rubric)
        {
            return Ok(e.data().clone());
        }
        Ok(self.agreement_data(options)?.clone())
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
        self.rate_via("screen", rater_id, item, criterion, value, reason)
    }

    /// [`OpenStudy::rate`] from the surface `origin` names (`screen`, `web`).
    pub fn rate_via(
        &mut self,
        origin: &'static str,
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
        let (progress, saved) = queue::rate_and_locate_via(
            &mut self.store,
            origin,
            rater_id,
            item,
            criterion,
            value,
            reason,
        )?;
        self.take_saved(&saved);
        Ok(progress)
    }

    /// Enter several values at once — saves that arrived together from several raters — in one
    /// transaction with one commit ([`queue::rate_each_via`]: a savepoint each, so a refused value
    /// gets its own error and the others are kept), from the surface `origin` names; every cached
    /// report takes each value that was stored. `Err` is the transaction's own failure (none of
    /// the values is stored).
    pub fn rate_each_via(
        &mut self,
        origin: &'static str,
        saves: &[queue::RatingSave],
    ) -> Result<Vec<Result<ItemProgress, QueueError>>, StoreError> {
        if self.drop_if_changed_outside().is_err() {
            self.invalidate_reports();
        }
        let rated = queue::rate_each_via(&mut self.store, origin, saves)?;
        Ok(rated
            .into_iter()
            .map(|r| {
                r.map(|(progress, saved)| {
                    self.take_saved(&saved);
                    progress
                })
            })
            .collect())
    }

    /// Bring every cached report up to date with one stored value.
    fn take_saved(&mut self, saved: &queue::SavedRating) {
        if saved.retest {
            return;
        }
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
}

/// The agreement table as the panel shows it, and where the study's exports go.
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
}
