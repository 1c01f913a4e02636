//! **Row 3** of the core's layers (base 0 · files 1 · rubric 2 · store 3 · intake, judge, guard, workflow 4 · panel 5 · outputs 6 · app 7): the study file.
//! Imports only `base`, `files` and `rubric`; never a domain folder above it (the domain's row
//! types it stores are declared here, and the domain folders use them).
//!
//! The study store: one study is one SQLite file (`.concord`) opened in WAL mode with foreign keys
//! on and `synchronous = FULL`, so a rating is on disk when its transaction returns. Migrations are
//! embedded and tracked in `PRAGMA user_version`; a Concord study is recognised by its
//! `PRAGMA application_id`. A file that is not SQLite, not a study, or written by a newer Concord is
//! refused before anything is written to it, and so is one whose schema is not exactly Concord's
//! (an extra trigger or view, a forged `application_id`) or that is truncated (see `untrusted`). All writes go through [`Store::write`], one transaction
//! each, so a failed import leaves the study exactly as it was ([`Store::write_each`]: one
//! transaction for many independent items, a savepoint each, so one failing item is rolled back
//! alone). A study may be encrypted
//! ([`cipher`]): it is then opened with its [`Passphrase`], which the open store keeps in memory
//! (wiped when dropped) only to open a second connection to the same file.
//! Each write is sealed into the audit chain (`audit`) as it commits.

mod adjudication;
mod assignment;
mod audit;
mod backup;
mod checkpoint;
pub mod cipher;
mod dataset;
mod flag;
mod import_record;
mod judge;
mod judgement;
pub mod lead_key;
mod meta;
mod overview;
mod package;
mod package_meta;
mod pair;
mod panel;
mod phi;
mod rater;
mod rating;
mod rating_count;
mod rubric;
pub mod seal;
mod signoff;
mod span;
mod untrusted;
mod web_access;

pub use adjudication::*;
pub use assignment::*;
pub use audit::{
    sealed_rows, AuditEntry, ChainBreak, ChainCheck, ChainTrust, EVENTS_PER_ENTRY_LIMIT,
    LATE_COLUMNS, TRACKED_TABLES, VOLATILE_COLUMNS,
};
pub use backup::{integrity_problems, restore_copy, ChangeStamp};
pub use cipher::{decrypt_study, encrypt_study, is_encrypted, rekey_study, Passphrase};
pub use dataset::*;
pub use flag::*;
pub use import_record::*;
pub use judge::*;
pub use judgement::*;
pub use meta::SAMPLE_DATA_META;
pub use overview::*;
pub use package::*;
pub use package_meta::{peek_package, PackageIdentity, META_PACKAGE_ID, META_PACKAGE_RATER};
pub use pair::*;
pub use panel::*;
pub use phi::*;
pub use rater::*;
pub use rating::*;
pub use rating_count::{KeptCountDifference, RatingCounts};
pub use rubric::*;
pub use signoff::*;
pub use span::*;
pub use web_access::*;

use crate::base::clock::Clock;
use crate::base::clock::Millis;
use crate::base::error_code::ErrorCode;
use crate::base::text::quoted;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `PRAGMA application_id` of every Concord study ("CONC").
pub const APPLICATION_ID: i32 = 0x434F_4E43;

const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/0001_study.sql"),
    include_str!("../../migrations/0002_import.sql"),
    include_str!("../../migrations/0003_judge_runs.sql"),
    include_str!("../../migrations/0004_lead.sql"),
    include_str!("../../migrations/0005_rating_screen.sql"),
    include_str!("../../migrations/0006_adjudication.sql"),
    include_str!("../../migrations/0007_package_seal.sql"),
    include_str!("../../migrations/0008_phi_guard.sql"),
    include_str!("../../migrations/0009_audit_chain.sql"),
    include_str!("../../migrations/0010_signoff.sql"),
    include_str!("../../migrations/0011_judge_results_audited.sql"),
    include_str!("../../migrations/0012_rating_occasion.sql"),
    include_str!("../../migrations/0013_rating_counts.sql"),
    include_str!("../../migrations/0014_package_trust.sql"),
    include_str!("../../migrations/0015_lead_key.sql"),
    include_str!("../../migrations/0016_web_access.sql"),
    include_str!("../../migrations/0017_judge_call_details.sql"),
    include_str!("../../migrations/0018_pairwise.sql"),
    include_str!("../../migrations/0019_pair_packages.sql"),
    include_str!("../../migrations/0020_meaning_sealed.sql"),
    include_str!("../../migrations/0021_server_trust.sql"),
    include_str!("../../migrations/0022_answering_model.sql"),
    include_str!("../../migrations/0023_conversations.sql"),
    include_str!("../../migrations/0024_spans.sql"),
];

/// The schema version of the first migration whose text contains `marker` (0 when none does).
pub(crate) fn migration_version(marker: &str) -> i64 {
    MIGRATIONS
        .iter()
        .position(|m| m.contains(marker))
        .map_or(0, |i| i as i64 + 1)
}

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Create the empty file a new study goes into, readable and writable by its owner only (`0600`),
/// before SQLite writes anything to it; SQLite gives the study's journal and log the same mode.
fn create_private(path: &Path) -> StoreResult<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map(drop).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => StoreError::AlreadyExists {
            path: display(path),
        },
        _ => StoreError::ReadOnly {
            path: display(path),
            detail: e.to_string(),
        },
    })
}

/// Remove a study file this process just created, with any journal or log SQLite made beside it.
pub(crate) fn remove_with_sidecars(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: no such study file")]
    Missing { path: String },
    #[error("{path}: the folder {folder} does not exist; choose an existing folder")]
    MissingFolder { path: String, folder: String },
    #[error("{path}: already exists; refusing to overwrite it")]
    AlreadyExists { path: String },
    #[error("{path}: the file name is {bytes} bytes; a study keeps its journal beside it under the same name plus \"-journal\", and a file name can hold at most 255 bytes, so choose a name of at most {max} bytes")]
    NameTooLong {
        path: String,
        bytes: usize,
        max: usize,
    },
    #[error("{path}: is {kind}, not a study file; a study is a regular file (.concord), so nothing was read from it or changed")]
    NotAFile { path: String, kind: &'static str },
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
    #[error("{path}: the encrypted file is damaged or truncated (a page is missing or fails its authentication), so it cannot be read safely; use the complete file. The file was not changed")]
    Damaged { path: String },
    #[error("{path}: carries Concord's application id but is not a Concord study ({detail}); the file was not changed")]
    ForeignSchema { path: String, detail: String },
    #[error("{path}: holds a {kind} {name_q} (on {table_q}) that Concord never creates; a {kind} in a study file could run code when the study is used, so the file is refused and was not changed", name_q = quoted(&.name), table_q = quoted(&.table))]
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
    #[error("{what} {key_q} does not exist in this study", key_q = quoted(&.key))]
    NotFound { what: &'static str, key: String },
    #[error(
        "{path}: this study is encrypted; give its passphrase to open it. The file was not changed"
    )]
    PassphraseNeeded { path: String },
    #[error("{path}: wrong passphrase (or not a Concord study); the file was not changed")]
    WrongPassphrase { path: String },
    #[error("passphrase refused: {0}")]
    PassphraseRefused(String),
    #[error("new passphrase refused: {0}")]
    WeakPassphrase(#[from] crate::base::passphrase_strength::WeakPassphrase),
    #[error(
        "{path}: already encrypted; use rekey to change its passphrase. The file was not changed"
    )]
    AlreadyEncrypted { path: String },
    #[error("{path}: not encrypted, so it has no passphrase to remove or change; the file was not changed")]
    NotEncrypted { path: String },
    #[error("{path}: the study is open elsewhere (another Concord window or command); close it there and try again. The file was not changed")]
    InUse { path: String },
    #[error(
        "this rating was signed off by {signer} (signature {signature}); a change needs a reason"
    )]
    SignedRating { signer: String, signature: i64 },
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {reason}: the study's key records were changed outside Concord, so Concord writes nothing to it. `concord audit verify` shows what changed; restore the study from a backup taken before the change")]
    KeyRecordsChanged { path: String, reason: String },
    #[error(transparent)]
    LeadKey(lead_key::LeadKeyError),
    #[error("study database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error(transparent)]
    Output(#[from] crate::files::output::OutputError),
}

impl crate::base::error_code::Coded for StoreError {
    /// A stable machine-readable code for the UI and scripts.
    fn code(&self) -> ErrorCode {
        match self {
            StoreError::Missing { .. } => ErrorCode::StudyMissing,
            StoreError::MissingFolder { .. } => ErrorCode::FolderMissing,
            StoreError::AlreadyExists { .. } => ErrorCode::AlreadyExists,
            StoreError::NameTooLong { .. } => ErrorCode::Invalid,
            StoreError::NotAFile { .. } => ErrorCode::Path,
            StoreError::NotSqlite { .. } => ErrorCode::NotSqlite,
            StoreError::NotAStudy { .. } => ErrorCode::NotAStudy,
            StoreError::NewerSchema { .. } => ErrorCode::NewerSchema,
            StoreError::Truncated { .. } => ErrorCode::Truncated,
            StoreError::Damaged { .. } => ErrorCode::Damaged,
            StoreError::ForeignSchema { .. } => ErrorCode::ForeignSchema,
            StoreError::UnexpectedObject { .. } => ErrorCode::UnexpectedSchemaObject,
            StoreError::ReadOnly { .. } => ErrorCode::ReadOnly,
            StoreError::Io { .. } => ErrorCode::Io,
            StoreError::NotFound { .. } => ErrorCode::NotFound,
            StoreError::PassphraseNeeded { .. } => ErrorCode::PassphraseNeeded,
            StoreError::WrongPassphrase { .. } => ErrorCode::WrongPassphrase,
            StoreError::PassphraseRefused(_) => ErrorCode::PassphraseRefused,
            StoreError::WeakPassphrase(_) => ErrorCode::WeakPassphrase,
            StoreError::AlreadyEncrypted { .. } => ErrorCode::AlreadyEncrypted,
            StoreError::NotEncrypted { .. } => ErrorCode::NotEncrypted,
            StoreError::InUse { .. } => ErrorCode::InUse,
            StoreError::SignedRating { .. } => ErrorCode::SignedRating,
            StoreError::Invalid(_) => ErrorCode::Invalid,
            StoreError::KeyRecordsChanged { .. } => ErrorCode::Damaged,
            StoreError::LeadKey(e) => e.code(),
            StoreError::Sqlite(_) => ErrorCode::Database,
            StoreError::Output(e) => crate::base::error_code::Coded::code(e),
        }
    }
}

impl StoreError {
    /// Whether this error is a file's damage: a page SQLite finds malformed, one that does not
    /// decrypt or authenticate, or a file cut short.
    pub fn is_damage(&self) -> bool {
        match self {
            StoreError::Sqlite(e) => matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
            ),
            StoreError::Damaged { .. } | StoreError::Truncated { .. } => true,
            _ => false,
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// An open study.
pub struct Store {
    conn: Connection,
    clock: Arc<dyn Clock>,
    path: Option<PathBuf>,
    /// The passphrase of an encrypted study (kept to open a second connection to it).
    key: Option<Passphrase>,
    /// The seal a rater package carries, renewed by every write made through Concord.
    seal: Option<seal::SealKey>,
    /// Row changes the audit triggers saw since the last seal.
    pending: audit::PendingCell,
    /// Off only in the rating-save benchmark's comparison study.
    sealing: bool,
    /// The study's lead key: held (its writes are checkpointed), to be made at the next write,
    /// or not available here.
    lead: Lead,
    /// This connection created the study (a lead key may be made for its chain).
    created: bool,
}

/// Where a study stands with its lead key on this machine.
#[derive(Debug, Clone, Default)]
enum Lead {
    /// No key store was given (a package, an in-memory study, a tool that never signs).
    #[default]
    Off,
    /// This machine holds the study's key: every write is checkpointed.
    Held(Arc<lead_key::LeadKey>),
    /// A lead's study without a key yet: the next write makes one and keeps it here.
    Make(lead_key::KeyStore),
    /// The study has a key this machine does not hold (another machine, an expert), or it has
    /// a chain of entries and never had a key: writes are not checkpointed.
    Unavailable,
    /// The study's key records contradict what this machine's key store holds for it (why):
    /// every write is refused.
    Refused(String),
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// What one [`LogFolder::fold`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogFold {
    /// Another connection held the study, so nothing was folded back.
    pub busy: bool,
    /// Frames in the write-ahead log.
    pub frames: u64,
    /// Of those, the frames now in the study file.
    pub folded: u64,
}

/// A connection of a study that only folds its write-ahead log ([`Store::log_folder`]).
pub struct LogFolder {
    conn: Connection,
}

impl LogFolder {
    /// Fold what the log holds back into the study file now (PASSIVE: it waits for no reader
    /// or writer; frames a reader still needs stay for the next time). What was committed is as
    /// durable before as after.
    pub fn fold(&self) -> StoreResult<LogFold> {
        let (busy, frames, folded): (i64, i64, i64) =
            self.conn
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?;
        Ok(LogFold {
            busy: busy != 0,
            frames: frames.max(0) as u64,
            folded: folded.max(0) as u64,
        })
    }
}

/// What a file at a path turned out to be, read without writing to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    Absent,
    Study { schema: i64, encrypted: bool },
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// The metadata of the study file at `path` (symbolic links followed), refusing anything but a
/// regular file before it is opened: a directory, and above all a FIFO (reading one waits for a
/// writer forever), a device (`/dev/zero` never ends) or a socket.
pub(crate) fn regular_file(path: &Path) -> StoreResult<std::fs::Metadata> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => StoreError::Missing {
            path: display(path),
        },
        _ => StoreError::Io {
            path: display(path),
            detail: e.to_string(),
        },
    })?;
    if meta.is_file() {
        return Ok(meta);
    }
    Err(StoreError::NotAFile {
        path: display(path),
        kind: file_kind(&meta.file_type()),
    })
}

/// What a file that is not a regular file is, in words.
fn file_kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// Look at `path` without changing it: absent, a Concord study (with its schema version), or an error
/// saying why it is not one. An encrypted study needs its passphrase ([`inspect_with`]).
pub fn inspect(path: &Path) -> StoreResult<FileKind> {
    inspect_with(path, None)
}

/// [`inspect`], opening an encrypted study with `key` (which a plain study does not need).
pub fn inspect_with(path: &Path, key: Option<&Passphrase>) -> StoreResult<FileKind> {
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
    if !meta.is_file() {
        return Err(StoreError::NotAFile {
            path: p,
            kind: file_kind(&meta.file_type()),
        });
    }
    let encrypted = match cipher::read_header(path)? {
        cipher::Header::Plain => false,
        cipher::Header::Other => return Err(StoreError::NotSqlite { path: p }),
        cipher::Header::Opaque if key.is_none() => {
            return Err(StoreError::PassphraseNeeded { path: p })
        }
        cipher::Header::Opaque => true,
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|_| StoreError::NotSqlite { path: p.clone() })?;
    // Another process may be writing the study (the server, the window, the CLI): waiting
    // for its lock is better than failing.
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let (app_id, version, _snapshot) = match (encrypted, key) {
        (true, Some(key)) => {
            cipher::apply_key(&conn, key)?;
            untrusted::harden(&conn)?;
            let (snapshot, _) = untrusted::Snapshot::take(&conn);
            cipher::check_keyed_length(&conn, path)?;
            let (app_id, version) = cipher::keyed_identity(&conn, path)?;
            (app_id, version, snapshot)
        }
        _ => {
            untrusted::harden(&conn)?;
            // The lengths are read under a snapshot, so a checkpoint under way elsewhere is not
            // taken for damage; a file SQLite cannot read is named truncated first when it is.
            let (snapshot, read) = untrusted::Snapshot::take(&conn);
            untrusted::check_length(path)?;
            read.map_err(|_| StoreError::NotSqlite { path: p.clone() })?;
            let (app_id, version) = cipher::keyed_identity(&conn, path)
                .map_err(|_| StoreError::NotSqlite { path: p.clone() })?;
            (app_id, version, snapshot)
        }
    };
    let schema = cipher::check_identity(path, app_id, version)?;
    untrusted::verify_schema(&p, &conn, version)?;
    Ok(FileKind::Study { schema, encrypted })
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

/// The longest study file name, in bytes: SQLite writes `<name>-journal` (and `-wal`, `-shm`)
/// beside the study, and most file systems hold names of at most 255 bytes.
pub const MAX_STUDY_NAME_BYTES: usize = 255 - "-journal".len();

/// The page cache of a connection to an encrypted study, in KiB (SQLite's default is 2,048).
const ENCRYPTED_CACHE_KIB: u32 = 16_384;

impl Store {
    /// Close the study now: fold the write-ahead log back into the file and close the
    /// connection, so no `-wal`/`-shm` stays beside it and the file alone is the whole study (a
    /// package mailed right after is complete). Dropping a store closes it too; this is for an
    /// exit that skips destructors, and it reports a close that failed.
    pub fn close(self) -> StoreResult<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        self.conn.close().map_err(|(_, e)| StoreError::from(e))
    }

    /// Let the write-ahead log grow to `pages` pages before a commit folds it back into the file
    /// itself (SQLite's auto-checkpoint, 1000 pages by default; 0 turns it off). A writer whose log
    /// is folded by another connection ([`Store::log_folder`]) sets it high, so that the fold
    /// runs inside a commit only as a safety net. This connection only; how
    /// durable a commit is does not change.
    pub fn fold_log_every(&mut self, pages: u32) -> StoreResult<()> {
        self.conn
            .query_row(&format!("PRAGMA wal_autocheckpoint = {pages}"), [], |_| {
                Ok(())
            })?;
        Ok(())
    }

    /// A second connection to this study whose only work is folding the write-ahead log back
    /// into the file ([`LogFolder::fold`]), so the fold can run on another thread while this
    /// connection keeps committing: SQLite lets a PASSIVE checkpoint copy committed frames while
    /// a writer appends new ones. Opened on the same file with the same key; never writes a row.
    pub fn log_folder(&self) -> StoreResult<LogFolder> {
        let path = self.path.as_deref().ok_or_else(|| {
            StoreError::Invalid("a study in memory has no write-ahead log to fold".into())
        })?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| map_open_error(path, e))?;
        if let Some(key) = &self.key {
            cipher::apply_key(&conn, key)?;
        }
        untrusted::harden(&conn)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch("PRAGMA synchronous = FULL;")?;
        Ok(LogFolder { conn })
    }

    /// Refuse every commit of this connection while `refuse` is set: SQLite rolls the
    /// transaction back and the write returns its error, as when a commit fails. Only for tests
    /// that a front end acknowledges a write only once it is committed.
    #[doc(hidden)]
    pub fn refuse_commits_while(&mut self, refuse: Arc<std::sync::atomic::AtomicBool>) {
        self.conn.commit_hook(Some(move || {
            refuse.load(std::sync::atomic::Ordering::SeqCst)
        }));
    }

    /// Open an existing plain study.
    pub fn open(path: &Path, clock: Arc<dyn Clock>) -> StoreResult<Store> {
        Store::open_with(path, clock, None)
    }

    /// Open an existing study; an encrypted one with `key` (a plain one ignores it).
    pub fn open_with(
        path: &Path,
        clock: Arc<dyn Clock>,
        key: Option<&Passphrase>,
    ) -> StoreResult<Store> {
        if std::fs::symlink_metadata(path).is_err() {
            return Err(StoreError::Missing {
                path: display(path),
            });
        }
        match cipher::read_header(path)? {
            cipher::Header::Plain => match inspect(path)? {
                FileKind::Absent => Err(StoreError::Missing {
                    path: display(path),
                }),
                FileKind::Study { .. } => Store::open_file(path, clock, None),
            },
            cipher::Header::Other => Err(StoreError::NotSqlite {
                path: display(path),
            }),
            cipher::Header::Opaque => match key {
                None => Err(StoreError::PassphraseNeeded {
                    path: display(path),
                }),
                Some(key) => Store::open_file(path, clock, Some(key)),
            },
        }
    }

    /// Open an existing study only to read it, so that nothing the job does can change the
    /// file: a read-only connection, the journal mode left as the file has it (a study that is
    /// not in WAL mode is not switched, which would rewrite its header), no migration and no
    /// audit triggers; [`Store::write`] on it is refused. The file is checked as
    /// [`Store::open_with`] checks it. A study from an older Concord cannot be read without its
    /// upgrade, so it is opened (and upgraded) as `open_with` does.
    pub fn open_read_only(
        path: &Path,
        clock: Arc<dyn Clock>,
        key: Option<&Passphrase>,
    ) -> StoreResult<Store> {
        let p = display(path);
        let key = match cipher::read_header(path)? {
            cipher::Header::Plain => {
                if let FileKind::Absent = inspect(path)? {
                    return Err(StoreError::Missing { path: p });
                }
                None
            }
            cipher::Header::Other => return Err(StoreError::NotSqlite { path: p }),
            cipher::Header::Opaque => match key {
                None => return Err(StoreError::PassphraseNeeded { path: p }),
                Some(key) => Some(key),
            },
        };
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| map_open_error(path, e))?;
        if let Some(key) = key {
            cipher::apply_key(&conn, key)?;
        }
        untrusted::harden(&conn)?;
        if key.is_some() {
            cipher::check_keyed_length(&conn, path)?;
        }
        let (app_id, version) = cipher::keyed_identity(&conn, path)?;
        cipher::check_identity(path, app_id, version)?;
        untrusted::verify_schema(&p, &conn, version)?;
        if version < SCHEMA_VERSION {
            drop(conn);
            return Store::open_with(path, clock, key);
        }
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;")?;
        if key.is_some() {
            conn.execute_batch(&format!("PRAGMA cache_size = -{ENCRYPTED_CACHE_KIB}"))?;
        }
        Ok(Store {
            conn,
            clock,
            path: Some(path.to_path_buf()),
            key: key.cloned(),
            seal: None,
            pending: Default::default(),
            sealing: true,
            // Read-only: nothing is written, so nothing is signed.
            lead: Lead::Off,
            created: false,
        })
    }

    /// Whether this study was opened only to read it ([`Store::open_read_only`]).
    pub fn is_read_only(&self) -> bool {
        self.conn
            .is_readonly(rusqlite::DatabaseName::Main)
            .unwrap_or(false)
    }

    /// Create a new, empty plain study; refuses if anything exists at `path`.
    pub fn create(path: &Path, clock: Arc<dyn Clock>) -> StoreResult<Store> {
        Store::create_with(path, clock, None)
    }

    /// Create a new, empty study, encrypted with `key` when one is given; refuses if anything
    /// exists at `path`.
    pub fn create_with(
        path: &Path,
        clock: Arc<dyn Clock>,
        key: Option<&Passphrase>,
    ) -> StoreResult<Store> {
        if std::fs::symlink_metadata(path).is_ok() {
            return Err(match inspect(path) {
                Err(e) if !matches!(e, StoreError::PassphraseNeeded { .. }) => e,
                _ => StoreError::AlreadyExists {
                    path: display(path),
                },
            });
        }
        let bytes = path.file_name().map_or(0, |n| n.as_encoded_bytes().len());
        if bytes > MAX_STUDY_NAME_BYTES {
            return Err(StoreError::NameTooLong {
                path: display(path),
                bytes,
                max: MAX_STUDY_NAME_BYTES,
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
        if let Some(key) = key {
            key.check_new()?;
        }
        create_private(path)?;
        let mut store =
            Store::open_file(path, clock, key).inspect_err(|_| remove_with_sidecars(path))?;
        store.created = true;
        Ok(store)
    }

    /// A new, empty study in the empty file at `path` (the staged temporary file of an output,
    /// which `files::output` created `0600` and renames into place), encrypted with `key` when
    /// one is given.
    pub fn create_in_empty_file(
        path: &Path,
        clock: Arc<dyn Clock>,
        key: Option<&Passphrase>,
    ) -> StoreResult<Store> {
        let len = std::fs::metadata(path)
            .map_err(|e| StoreError::Io {
                path: display(path),
                detail: e.to_string(),
            })?
            .len();
        if len != 0 {
            return Err(StoreError::AlreadyExists {
                path: display(path),
            });
        }
        if let Some(key) = key {
            key.check_new()?;
        }
        Store::open_file(path, clock, key)
    }

    /// Open the study at `path`, creating an empty one if nothing is there.
    pub fn open_or_create(path: &Path, clock: Arc<dyn Clock>) -> StoreResult<Store> {
        Store::open_or_create_with(path, clock, None)
    }

    /// [`Store::open_or_create`] with a passphrase: opens an encrypted study, or creates one.
    pub fn open_or_create_with(
        path: &Path,
        clock: Arc<dyn Clock>,
        key: Option<&Passphrase>,
    ) -> StoreResult<Store> {
        if std::fs::symlink_metadata(path).is_err() {
            Store::create_with(path, clock, key)
        } else {
            Store::open_with(path, clock, key)
        }
    }

    /// A second connection to the same study file (for work on another thread), opened with the
    /// same passphrase and signing with the same lead key.
    pub fn reopen(&self) -> StoreResult<Store> {
        match &self.path {
            Some(p) => {
                let mut other = Store::open_with(p, self.clock.clone(), self.key.as_ref())?;
                // The second connection signs with the same key (a judge run's results are
                // checkpointed like any write); only the first makes a key.
                match &self.lead {
                    Lead::Held(key) => other.lead = Lead::Held(key.clone()),
                    // A study refused for writing is refused on every connection.
                    Lead::Refused(reason) => other.lead = Lead::Refused(reason.clone()),
                    _ => {}
                }
                Ok(other)
            }
            None => Err(StoreError::Invalid(
                "an in-memory study cannot be opened twice".to_string(),
            )),
        }
    }

    /// Whether this study is encrypted.
    pub fn is_encrypted(&self) -> bool {
        self.key.is_some()
    }

    /// The passphrase this study was opened with (for a second connection elsewhere).
    pub fn passphrase(&self) -> Option<&Passphrase> {
        self.key.as_ref()
    }

    /// A study that lives only in memory (tests, scratch computations).
    pub fn in_memory(clock: Arc<dyn Clock>) -> StoreResult<Store> {
        let conn = Connection::open_in_memory()?;
        let mut store = Store {
            conn,
            clock,
            path: None,
            key: None,
            seal: None,
            pending: Default::default(),
            sealing: true,
            lead: Lead::Off,
            created: false,
        };
        store.configure()?;
        store.migrate()?;
        Ok(store)
    }

    fn open_file(
        path: &Path,
        clock: Arc<dyn Clock>,
        key: Option<&Passphrase>,
    ) -> StoreResult<Store> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| map_open_error(path, e))?;
        if let Some(key) = key {
            cipher::apply_key(&conn, key)?;
            // An existing encrypted file is checked before anything is written to it, as
            // `inspect` checks a plain one; a new (empty) one has nothing to check yet.
            if std::fs::metadata(path)
                .map(|m| m.len() > 0)
                .unwrap_or(false)
            {
                untrusted::harden(&conn)?;
                cipher::check_keyed_length(&conn, path)?;
                let (app_id, version) = cipher::keyed_identity(&conn, path)?;
                cipher::check_identity(path, app_id, version)?;
                untrusted::verify_schema(&display(path), &conn, version)?;
            }
        }
        let mut store = Store {
            conn,
            clock,
            path: Some(path.to_path_buf()),
            key: key.cloned(),
            seal: None,
            pending: Default::default(),
            sealing: true,
            lead: Lead::Off,
            created: false,
        };
        store.configure().map_err(|e| match e {
            StoreError::Sqlite(e) => map_open_error(path, e),
            other => other,
        })?;
        store.migrate().map_err(|e| match e {
            StoreError::Sqlite(e) => map_open_error(path, e),
            other => other,
        })?;
        store.seal = match &store.key {
            Some(key) => seal::SealKey::for_store(&store, key)?,
            None => None,
        };
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
        if self.key.is_some() {
            // SQLCipher decrypts a page each time it is read into the cache; SQLite's default
            // 2 MiB cache made a report decrypt the same pages again query after query.
            self.conn
                .execute_batch(&format!("PRAGMA cache_size = -{ENCRYPTED_CACHE_KIB}"))?;
        }
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
        let before = if version < SCHEMA_VERSION && audit::has_chain(&self.conn)? {
            Some(audit::before_migration(&self.conn, version)?)
        } else {
            None
        };
        // A new study (version 0) has no seal, nor a table to keep one in.
        let sealed = if version > 0 && version < SCHEMA_VERSION {
            seal::before_migration(&self.conn, self.key.as_ref())?
        } else {
            None
        };
        if version < SCHEMA_VERSION {
            // A migration may rebuild a table that others refer to, which SQLite allows only
            // with foreign keys off; each migration checks them itself before it commits.
            self.conn.execute_batch("PRAGMA foreign_keys = OFF")?;
            let applied = self.apply_migrations(version);
            self.conn.execute_batch("PRAGMA foreign_keys = ON")?;
            applied?;
        }
        let now = self.clock.now_ms();
        match before {
            Some(before) => {
                audit::seal_migration(&self.conn, before, now, version, SCHEMA_VERSION)?
            }
            None => {
                audit::ensure_chain(&self.conn, now, SCHEMA_VERSION)?;
            }
        }
        // Last, after the audit chain recorded the upgrade (its entry is part of the state).
        if let Some(sealed) = sealed {
            seal::after_migration(&self.conn, sealed)?;
        }
        audit::install(&self.conn, &self.pending)?;
        Ok(())
    }

    fn apply_migrations(&mut self, from: i64) -> StoreResult<()> {
        let path = self.path_string();
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(sql)?;
            let broken = {
                let mut check = tx.prepare("PRAGMA foreign_key_check")?;
                let mut rows = check.query([])?;
                rows.next()?.is_some()
            };
            if broken {
                return Err(StoreError::Invalid(format!(
                    "{}: upgrading the study to schema {} would break its references; the file was not changed",
                    path,
                    i + 1
                )));
            }
            tx.execute_batch(&format!(
                "PRAGMA user_version = {}; PRAGMA application_id = {APPLICATION_ID};",
                i + 1
            ))?;
            tx.commit()?;
        }
        Ok(())
    }

    /// Switch the audit chain off for this connection: no triggers, no entries. Only for the
    /// rating-save benchmark, which compares a save with and without the chain in one run; a
    /// study written this way fails `audit verify`.
    #[doc(hidden)]
    pub fn disable_audit_chain_for_comparison(&mut self) -> StoreResult<()> {
        self.sealing = false;
        audit::uninstall(&self.conn)
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

    /// The connection, for the table modules of the store only.
    fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The reads the store shares with its write transactions.
    pub fn read(&self) -> StudyRead<'_> {
        StudyRead { conn: &self.conn }
    }

    /// A number that changes whenever another connection — another process, or a judge run's
    /// own connection — commits to the study file, and stays the same across this connection's
    /// own commits (SQLite's `PRAGMA data_version`): what was read into memory from the file is
    /// current while it has not changed.
    pub fn outside_changes(&self) -> StoreResult<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }

    /// Run `f` in one write transaction: everything it wrote is committed durably, or, if it returns
    /// an error, nothing is.
    pub fn write<T, E>(&mut self, f: impl FnOnce(&mut StudyTx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        if self.is_read_only() {
            return Err(StoreError::Invalid(format!(
                "{}: the study was opened only to read it, so this job cannot change it",
                self.path_string()
            ))
            .into());
        }
        if let Lead::Refused(reason) = &self.lead {
            return Err(StoreError::KeyRecordsChanged {
                path: self.path_string(),
                reason: reason.clone(),
            }
            .into());
        }
        let now = self.clock.now_ms();
        let snapshot = audit::snapshot(&self.pending);
        let made = self.make_lead_key();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(StoreError::from);
        let tx = match tx {
            Ok(tx) => tx,
            Err(e) => {
                if let Some((key, keys)) = &made {
                    keys.forget(key.study_id());
                }
                return Err(e.into());
            }
        };
        let signer = match (&made, &self.lead) {
            (Some((key, _)), _) => Some(key.clone()),
            (None, Lead::Held(key)) => Some(key.clone()),
            _ => None,
        };
        let mut study_tx = StudyTx {
            tx,
            now,
            events: Vec::new(),
            pending: self.pending.clone(),
            change_reason: None,
            lead: signer.filter(|_| self.sealing),
            new_lead: made.is_some() && self.sealing,
            entry_per_event: false,
            direct: Vec::new(),
            phi_marks: None,
        };
        let forget = |made: &Option<(Arc<lead_key::LeadKey>, lead_key::KeyStore)>| {
            if let Some((key, keys)) = made {
                keys.forget(key.study_id());
            }
        };
        let out = match f(&mut study_tx) {
            Ok(out) => out,
            Err(e) => {
                audit::restore(&self.pending, snapshot);
                forget(&made);
                return Err(e);
            }
        };
        let audited = if self.sealing {
            study_tx
                .record_new_lead_key()
                .and_then(|()| study_tx.seal())
        } else {
            Ok(())
        };
        let committed = audited
            .and_then(|()| match &self.seal {
                Some(seal) => seal.renew(&study_tx),
                None => Ok(()),
            })
            .and_then(|()| study_tx.tx.commit().map_err(StoreError::from));
        if let Err(e) = committed {
            audit::restore(&self.pending, snapshot);
            forget(&made);
            return Err(e.into());
        }
        if let Some((key, _)) = made {
            self.lead = if self.sealing {
                Lead::Held(key)
            } else {
                Lead::Unavailable
            };
        }
        Ok(out)
    }
}

/// Where a [`StudyTx`] stood before one item of a [`Store::write_each`]: what rolling that item
/// back must also undo outside the file (its audit events and the rows the triggers saw).
struct ItemMark {
    events: usize,
    pending: audit::Pending,
}

impl Store {
    /// Run `each` on every item of `items` in ONE write transaction (one commit, one wait for the
    /// disk, however many items), each item under its own savepoint: an item whose `each` fails
    /// is rolled back alone — its rows, its audit events and the row changes the audit saw — and
    /// gets its own error in its place of the answer, while the others stay in the transaction.
    /// Every item that succeeded is committed durably before this returns; `Err` means the
    /// transaction itself failed (it could not begin, a savepoint could not be taken or
    /// released, or the commit failed) and then none of the items is stored. Each rating event
    /// is sealed as its own audit entry however many items there are.
    pub fn write_each<I, T, E>(
        &mut self,
        items: I,
        mut each: impl FnMut(&mut StudyTx<'_>, I::Item) -> Result<T, E>,
    ) -> StoreResult<Vec<Result<T, E>>>
    where
        I: IntoIterator,
    {
        self.write(|tx| {
            tx.entry_per_event = true;
            let mut out = Vec::new();
            for item in items {
                let mark = tx.mark();
                tx.conn().execute_batch("SAVEPOINT concord_item")?;
                match each(tx, item) {
                    Ok(done) => {
                        tx.conn().execute_batch("RELEASE concord_item")?;
                        out.push(Ok(done));
                    }
                    Err(e) => {
                        tx.conn()
                            .execute_batch("ROLLBACK TO concord_item; RELEASE concord_item")?;
                        tx.back_to(mark);
                        out.push(Err(e));
                    }
                }
            }
            Ok::<_, StoreError>(out)
        })
    }
}

impl StudyTx<'_> {
    fn mark(&self) -> ItemMark {
        ItemMark {
            events: self.events.len(),
            pending: audit::snapshot(&self.pending),
        }
    }

    /// Undo, outside the file, what the item since `mark` did (its rows are rolled back apart).
    fn back_to(&mut self, mark: ItemMark) {
        self.events.truncate(mark.events);
        audit::restore(&self.pending, mark.pending);
        self.change_reason = None;
    }
}

/// A read handle on the study file: the reads a [`Store`] and a [`StudyTx`] both need are written
/// once, on this, and either gives one (`store.read()`, `tx.read()`) — inside a transaction it
/// sees the transaction's own uncommitted rows.
#[derive(Clone, Copy)]
pub struct StudyRead<'c> {
    conn: &'c Connection,
}

impl<'c> StudyRead<'c> {
    /// The connection, for the table modules of the store only.
    fn conn(&self) -> &'c Connection {
        self.conn
    }
}

/// One write transaction on a study, handed out by [`Store::write`]. Its methods (one table
/// module each) are the only writes a study receives.
pub struct StudyTx<'c> {
    tx: rusqlite::Transaction<'c>,
    now: Millis,
    /// Events to seal into the audit chain when the transaction commits.
    events: Vec<audit::Event>,
    pending: audit::PendingCell,
    /// The reason given for the rating change being written (needed for signed ratings).
    change_reason: Option<String>,
    /// The lead key that signs this write's checkpoint (and replay records), when held.
    lead: Option<Arc<lead_key::LeadKey>>,
    /// Whether this write made the study's lead key (it records the public key).
    new_lead: bool,
    /// Seal one audit entry per event however many there are (a [`Store::write_each`] of many
    /// people's saves), never one batch entry for many ratings.
    entry_per_event: bool,
    /// Tables whose inserted rows this transaction digests itself (their insert triggers set
    /// aside until the seal; see `StudyTx::digest_inserts_here`).
    direct: Vec<audit::DirectInserts>,
    /// The PHI guard's insert triggers set aside by a bulk import of conversations, put back
    /// (and the new texts marked) when it finishes or, at the latest, when the transaction is
    /// sealed (see `StudyTx::set_phi_marks_aside`).
    phi_marks: Option<phi::PhiMarksAside>,
}

impl StudyTx<'_> {
    /// The time stamped on everything written in this transaction.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// The transaction's connection, for the table modules of the store only.
    fn conn(&self) -> &Connection {
        &self.tx
    }

    /// The reads a transaction shares with the store, seeing its own uncommitted rows.
    pub fn read(&self) -> StudyRead<'_> {
        StudyRead { conn: &self.tx }
    }
}

/// Turn a unique-key violation into a readable refusal; any other error stays a database error.
fn unique_violation(e: rusqlite::Error, message: impl FnOnce() -> String) -> StoreError {
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) {
        StoreError::Invalid(message())
    } else {
        StoreError::Sqlite(e)
    }
}

#[cfg(test)]
mod tests;
