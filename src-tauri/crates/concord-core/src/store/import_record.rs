//! The `import_record` table: every file imported into the study, keyed by the SHA-256 of its
//! bytes, so a second import of the same bytes is recognised and changes nothing.

use super::{Store, StoreError, StoreResult, StudyTx};
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

/// A file recorded in the study by a previous import.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportRecord {
    pub sha256: String,
    pub format: String,
    pub file_name: String,
    pub imported_at: i64,
}

const IMPORT_BY_HASH: &str =
    "SELECT sha256, format, file_name, imported_at FROM import_record WHERE sha256 = ?1";

fn import_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<ImportRecord> {
    Ok(ImportRecord {
        sha256: r.get(0)?,
        format: r.get(1)?,
        file_name: r.get(2)?,
        imported_at: r.get(3)?,
    })
}

fn import_by_hash(c: &Connection, sha256: &str) -> StoreResult<Option<ImportRecord>> {
    Ok(c.query_row(IMPORT_BY_HASH, [sha256], import_record)
        .optional()?)
}

impl Store {
    /// Every file imported into the study, oldest first.
    pub fn imports(&self) -> StoreResult<Vec<ImportRecord>> {
        let mut stmt = self.conn().prepare(
            "SELECT sha256, format, file_name, imported_at FROM import_record ORDER BY id",
        )?;
        let rows = stmt.query_map([], import_record)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl StudyTx<'_> {
    /// Record an imported file with the options used and a summary of what it wrote.
    pub fn record_import(
        &mut self,
        sha256: &str,
        format: &str,
        file_name: &str,
        options: &serde_json::Value,
        summary: &serde_json::Value,
    ) -> StoreResult<()> {
        self.conn()
            .execute(
                "INSERT INTO import_record(sha256, format, file_name, imported_at, options_json,
                     summary_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    sha256,
                    format,
                    file_name,
                    self.now,
                    options.to_string(),
                    summary.to_string()
                ],
            )
            .map_err(|e| {
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) {
                    StoreError::Invalid(format!("{file_name} was already imported"))
                } else {
                    StoreError::Sqlite(e)
                }
            })?;
        Ok(())
    }
}

/// Reads a store and a write transaction share (through their [`StudyRead`](super::StudyRead)).
impl super::StudyRead<'_> {
    /// The earlier import of a file with these bytes, if any.
    pub fn import_by_hash(&self, sha256: &str) -> StoreResult<Option<ImportRecord>> {
        import_by_hash(self.conn(), sha256)
    }
}
