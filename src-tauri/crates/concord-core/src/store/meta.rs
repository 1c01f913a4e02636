//! The study's own records: `study_meta` (title, assignment options, locks, package identity,
//! the audit chain's head, a package's seal — key/value text), and the events a write records
//! for the audit chain (`audit_log` itself is written by the chain, see `audit`).

use super::{Store, StoreResult, StudyTx};
use rusqlite::{params, Connection, OptionalExtension};

/// `study_meta` key marking a study that holds Concord's sample data (the demo study, or a study
/// begun from it): its value names the sample (`demo`).
pub const SAMPLE_DATA_META: &str = "sample_data";

impl Store {
    pub fn meta(&self, key: &str) -> StoreResult<Option<String>> {
        get(self.conn(), key)
    }

    /// The study's title (set when it was created; the file name otherwise).
    pub fn title(&self) -> StoreResult<String> {
        if let Some(t) = self.meta("title")? {
            return Ok(t);
        }
        Ok(self
            .path()
            .and_then(|p| p.file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "Untitled study".to_string()))
    }
}

/// One `study_meta` entry (for the store's modules that keep their own entries: the audit
/// chain's head, a package's seal).
pub(super) fn get(c: &Connection, key: &str) -> StoreResult<Option<String>> {
    Ok(
        c.prepare_cached("SELECT value FROM study_meta WHERE key = ?1")?
            .query_row([key], |r| r.get(0))
            .optional()?,
    )
}

/// Set one `study_meta` entry.
pub(super) fn put(c: &Connection, key: &str, value: &str) -> StoreResult<()> {
    c.prepare_cached(
        "INSERT INTO study_meta(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    )?
    .execute(params![key, value])?;
    Ok(())
}

impl StudyTx<'_> {
    /// One `study_meta` entry as this transaction sees it.
    pub fn meta(&self, key: &str) -> StoreResult<Option<String>> {
        get(self.conn(), key)
    }

    pub fn set_meta(&mut self, key: &str, value: &str) -> StoreResult<()> {
        put(self.conn(), key, value)
    }
}
