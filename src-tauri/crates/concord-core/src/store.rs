//! The study store: one study is one SQLite file (`.concord`) opened in WAL mode with foreign keys
//! on and `synchronous = FULL`, so a rating is on disk when its transaction returns. Migrations are
//! embedded and tracked in `PRAGMA user_version`; a Concord study is recognised by its
//! `PRAGMA application_id`. A file that is not SQLite, not a study, or written by a newer Concord is
//! refused before anything is written to it, and so is one whose schema is not exactly Concord's
//! (an extra trigger or view, a forged `application_id`) or that is truncated (see `untrusted`). All writes go through [`Store::write`], one transaction
//! each, so a failed import leaves the study exactly as it was.

mod adjudication;
mod bulk;
mod panel;
mod read;
mod untrusted;
mod write;

pub use adjudication::*;
pub use bulk::*;
pub use panel::*;

pub use read::*;
pub use write::*;

use crate::clock::{Clock, Millis};
use crate::error_code::ErrorCode;
use rusqlite::{Connection, OpenFlags};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `PRAGMA application_id` of every Concord study ("CONC").
pub const APPLICATION_ID: i32 = 0x434F_4E43;

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_study.sql"),
    include_str!("../migrations/0002_import.sql"),
    include_str!("../migrations/0003_judge_runs.sql"),
    include_str!("../migrations/0004_lead.sql"),
    include_str!("../migrations/0005_rating_screen.sql"),
    include_str!("../migrations/0006_adjudication.sql"),
];

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: no such study file")]
    Missing { path: String },
    #[error("{path}: the folder {folder} does not exist; choose an existing folder")]
    MissingFolder { path: String, folder: String },
    #[error("{path}: already exists; refusing to overwrite it")]
    AlreadyExists { path: String },
    #[error("{path}: not a SQLite database, so not a Concord study; the file was not changed")]
    NotSqlite { path: String },
    #[error("{path}: a SQLite database but not a Concord study; the file was not changed")]
    NotAStudy { path: String },
    #[error("{path}: written by a newer Concord (study schema {found}; this version reads up to {supported}). Update Concord to open it; the file was not changed")]
    NewerSchema {
        path: String,
        found: i64,
        supported: i64,
    },
    #[error("{path}: the file is truncated ({found} bytes; its header records {expected}), so it cannot be read safely; use the complete file. The file was not changed")]
    Truncated {
        path: String,
        found: u64,
        expected: u64,
    },
    #[error("{path}: carries Concord's application id but is not a Concord study ({detail}); the file was not changed")]
    ForeignSchema { path: String, detail: String },
    #[error("{path}: holds a {kind} {name:?} (on {table:?}) that Concord never creates; a {kind} in a study file could run code when the study is used, so the file is refused and was not changed")]
    UnexpectedObject {
        path: String,
        kind: String,
        name: String,
        table: String,
    },
    #[error("{path}: cannot write here ({detail}); check the folder's permissions or choose another location")]
    ReadOnly { path: String, detail: String },
    #[error("{path}: cannot read the file: {detail}")]
    Io { path: String, detail: String },
    #[error("{what} {key:?} does not exist in this study")]
    NotFound { what: &'static str, key: String },
    #[error("{0}")]
    Invalid(String),
    #[error("study database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

impl StoreError {
    /// A stable machine-readable code for the UI and scripts.
    pub fn code(&self) -> ErrorCode {
        match self {
            StoreError::Missing { .. } => ErrorCode::StudyMissing,
            StoreError::MissingFolder { .. } => ErrorCode::FolderMissing,
            StoreError::AlreadyExists { .. } => ErrorCode::AlreadyExists,
            StoreError::NotSqlite { .. } => ErrorCode::NotSqlite,
            StoreError::NotAStudy { .. } => ErrorCode::NotAStudy,
            StoreError::NewerSchema { .. } => ErrorCode::NewerSchema,
            StoreError::Truncated { .. } => ErrorCode::Truncated,
            StoreError::ForeignSchema { .. } => ErrorCode::ForeignSchema,
            StoreError::UnexpectedObject { .. } => ErrorCode::UnexpectedSchemaObject,
            StoreError::ReadOnly { .. } => ErrorCode::ReadOnly,
            StoreError::Io { .. } => ErrorCode::Io,
            StoreError::NotFound { .. } => ErrorCode::NotFound,
            StoreError::Invalid(_) => ErrorCode::Invalid,
            StoreError::Sqlite(_) => ErrorCode::Database,
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// An open study.
pub struct Store {
    conn: Connection,
    clock: Arc<dyn Clock>,
    path: Option<PathBuf>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// What a file at a path turned out to be, read without writing to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    Absent,
    Study { schema: i64 },
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// Look at `path` without changing it: absent, a Concord study (with its schema version), or an error
/// saying why it is not one.
pub fn inspect(path: &Path) -> StoreResult<FileKind> {
    let p = display(path);
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileKind::Absent),
        Err(e) => {
            return Err(StoreError::Io {
                path: p,
                detail: e.to_string(),
            })
        }
    };
    if meta.is_dir() {
        return Err(StoreError::NotSqlite { path: p });
    }
    let mut header = [0u8; 100];
    let mut file = std::fs::File::open(path).map_err(|e| StoreError::Io {
        path: p.clone(),
        detail: e.to_string(),
    })?;
    let got = file.read(&mut header).map_err(|e| StoreError::Io {
        path: p.clone(),
        detail: e.to_string(),
    })?;
    if got < 16 || &header[..16] != b"SQLite format 3\0" {
        return Err(StoreError::NotSqlite { path: p });
    }
    if got < 100 {
        return Err(StoreError::Truncated {
            path: p,
            found: meta.len(),
            expected: 100,
        });
    }
    untrusted::check_length(&p, &header, meta.len())?;
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|_| StoreError::NotSqlite { path: p.clone() })?;
    untrusted::harden(&conn)?;
    let app_id: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|_| StoreError::NotSqlite { path: p.clone() })?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|_| StoreError::NotSqlite { path: p.clone() })?;
    if app_id != APPLICATION_ID {
        return Err(StoreError::NotAStudy { path: p });
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: p,
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    untrusted::verify_schema(&p, &conn, version)?;
    Ok(FileKind::Study { schema: version })
}

fn map_open_error(path: &Path, e: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::ReadOnly)
        | Some(ErrorCode::CannotOpen)
        | Some(ErrorCode::PermissionDenied) => StoreError::ReadOnly {
            path: display(path),
            detail: e.to_string(),
        },
        _ => StoreError::Sqlite(e),
    }
}

impl Store {
    /// Open an existing study.
    pub fn open(path: &Path, clock: Arc<dyn Clock>) -> StoreResult<Store> {
        match inspect(path)? {
            FileKind::Absent => Err(StoreError::Missing {
                path: display(path),
            }),
            FileKind::Study { .. } => Store::open_file(path, clock),
        }
    }

    /// Create a new, empty study; refuses if anything exists at `path`.
    pub fn create(path: &Path, clock: Arc<dyn Clock>) -> StoreResult<Store> {
        if inspect(path)? != FileKind::Absent {
            return Err(StoreError::AlreadyExists {
                path: display(path),
            });
        }
        if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
            if !folder.is_dir() {
                return Err(StoreError::MissingFolder {
                    path: display(path),
                    folder: display(folder),
                });
            }
        }
        Store::open_file(path, clock)
    }

    /// Open the study at `path`, creating an empty one if nothing is there.
    pub fn open_or_create(path: &Path, clock: Arc<dyn Clock>) -> StoreResult<Store> {
        match inspect(path)? {
            FileKind::Absent => Store::create(path, clock),
            FileKind::Study { .. } => Store::open_file(path, clock),
        }
    }

    /// A study that lives only in memory (tests, scratch computations).
    pub fn in_memory(clock: Arc<dyn Clock>) -> StoreResult<Store> {
        let conn = Connection::open_in_memory()?;
        let mut store = Store {
            conn,
            clock,
            path: None,
        };
        store.configure()?;
        store.migrate()?;
        Ok(store)
    }

    fn open_file(path: &Path, clock: Arc<dyn Clock>) -> StoreResult<Store> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| map_open_error(path, e))?;
        let mut store = Store {
            conn,
            clock,
            path: Some(path.to_path_buf()),
        };
        store.configure().map_err(|e| match e {
            StoreError::Sqlite(e) => map_open_error(path, e),
            other => other,
        })?;
        store.migrate().map_err(|e| match e {
            StoreError::Sqlite(e) => map_open_error(path, e),
            other => other,
        })?;
        Ok(store)
    }

    fn configure(&mut self) -> StoreResult<()> {
        untrusted::harden(&self.conn)?;
        self.conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if self.path.is_some() && !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::ReadOnly {
                path: self.path_string(),
                detail: format!("journal mode stayed {mode}"),
            });
        }
        self.conn.execute_batch(
            "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY;",
        )?;
        Ok(())
    }

    fn migrate(&mut self) -> StoreResult<()> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                path: self.path_string(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(sql)?;
            tx.execute_batch(&format!(
                "PRAGMA user_version = {}; PRAGMA application_id = {APPLICATION_ID};",
                i + 1
            ))?;
            tx.commit()?;
        }
        Ok(())
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub(crate) fn path_string(&self) -> String {
        self.path
            .as_deref()
            .map(display)
            .unwrap_or_else(|| ":memory:".to_string())
    }

    pub fn now_ms(&self) -> Millis {
        self.clock.now_ms()
    }

    pub fn clock(&self) -> Arc<dyn Clock> {
        self.clock.clone()
    }

    /// Read access to the connection for queries inside the core.
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Run `f` in one write transaction: everything it wrote is committed durably, or, if it returns
    /// an error, nothing is.
    pub fn write<T, E>(&mut self, f: impl FnOnce(&mut StudyTx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let now = self.clock.now_ms();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(StoreError::from)?;
        let mut study_tx = StudyTx { tx, now };
        let out = f(&mut study_tx)?;
        study_tx.tx.commit().map_err(StoreError::from)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
