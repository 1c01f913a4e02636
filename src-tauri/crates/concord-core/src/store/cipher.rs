//! Encrypted studies. A study may be a SQLCipher database: every page of the file and of its WAL
//! is encrypted (AES-256 with a per-page HMAC, key derived from a passphrase with PBKDF2), so
//! no context, answer, rationale or rater name is readable on disk; temporary tables and sorts
//! stay in memory (`temp_store = MEMORY`). A plain study opens in the same build without a key.
//!
//! An encrypted file has no readable header, so it is recognised by what it is not: a file whose
//! first bytes are not SQLite's magic string and whose length is whole pages is taken to be an
//! encrypted study, opened only with a [`Passphrase`]; a wrong one is refused before anything is
//! written. Encrypting, decrypting and re-keying write a complete new file beside the study
//! (`sqlcipher_export`) and then rename it over the old one, so a crash at any point leaves either
//! the old study or the new one, never a mixture; the study must not be open elsewhere meanwhile.

use super::{display, StoreError, StoreResult, APPLICATION_ID, SCHEMA_VERSION};
use rusqlite::{Connection, OpenFlags};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zeroize::Zeroizing;

/// SQLite's file magic: the first 16 bytes of every unencrypted database.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// A passphrase. Its text is reachable only inside the store, is wiped from memory when the last
/// copy is dropped, and never printed (`Debug` shows `<redacted>`); there is deliberately no
/// `Display` and no `Serialize`.
#[derive(Clone)]
pub struct Passphrase(Arc<Zeroizing<String>>);

impl Passphrase {
    /// A passphrase as typed; refuses an empty one.
    pub fn new(text: impl Into<String>) -> StoreResult<Passphrase> {
        let text = Zeroizing::new(text.into());
        if text.is_empty() {
            return Err(StoreError::PassphraseRefused(
                "the passphrase is empty".to_string(),
            ));
        }
        Ok(Passphrase(Arc::new(text)))
    }

    /// The passphrase read from the environment variable `var`; a clear error naming the variable
    /// when it is unset or empty.
    pub fn from_env(var: &str) -> StoreResult<Passphrase> {
        match std::env::var(var) {
            Ok(v) if !v.is_empty() => Passphrase::new(v),
            _ => Err(StoreError::PassphraseRefused(format!(
                "no passphrase: the environment variable {var} is not set (or empty)"
            ))),
        }
    }

    /// Refuse a passphrase too easy to guess to protect a new encryption (see
    /// [`crate::base::passphrase_strength`]).
    pub fn check_new(&self) -> StoreResult<()> {
        Ok(crate::base::passphrase_strength::check_new_passphrase(
            self.expose(),
            &[],
        )?)
    }

    pub(crate) fn expose(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for Passphrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Passphrase(<redacted>)")
    }
}

/// What the first bytes of an existing file say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Header {
    /// A plain SQLite database.
    Plain,
    /// Whole pages with no readable header: an encrypted database (or random bytes).
    Opaque,
    /// Anything else: not a database.
    Other,
}

pub(crate) fn read_header(path: &Path) -> StoreResult<Header> {
    let io = |e: std::io::Error| StoreError::Io {
        path: display(path),
        detail: e.to_string(),
    };
    super::regular_file(path)?;
    let mut file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut header = [0u8; 16];
    let got = file.read(&mut header).map_err(io)?;
    if got == 16 && &header == SQLITE_MAGIC {
        return Ok(Header::Plain);
    }
    if len >= 1024 && len % 512 == 0 {
        return Ok(Header::Opaque);
    }
    Ok(Header::Other)
}

/// Give an opened connection its key; must come before any other statement.
pub(crate) fn apply_key(conn: &Connection, key: &Passphrase) -> rusqlite::Result<()> {
    conn.pragma_update(None, "key", key.expose())
}

/// What a failed read through a keyed connection means: page 1 that does not decrypt is a wrong
/// key; a later page that is missing or fails its authentication is a damaged file.
fn keyed_error(path: &Path, e: rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => StoreError::WrongPassphrase {
            path: display(path),
        },
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => StoreError::Damaged {
            path: display(path),
        },
        _ => StoreError::Sqlite(e),
    }
}

/// Read `(application_id, user_version)` through a keyed connection; a wrong key shows here.
pub(crate) fn keyed_identity(conn: &Connection, path: &Path) -> StoreResult<(i32, i64)> {
    let wrong = |e: rusqlite::Error| keyed_error(path, e);
    // Reading the schema is what first decrypts page 1.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_err(wrong)?;
    let app_id: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(wrong)?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(wrong)?;
    Ok((app_id, version))
}

/// Refuse an encrypted file shorter than the database its (decrypted) header records, beyond what
/// the write-ahead log beside it can hold (a wrong key shows here first, as it is the first read of
/// page 1). Read under a read transaction ([`super::untrusted::Snapshot`]), so a checkpoint under
/// way in another process is not taken for damage.
pub(crate) fn check_keyed_length(conn: &Connection, path: &Path) -> StoreResult<()> {
    let (_snapshot, _) = super::untrusted::Snapshot::take(conn);
    // SQLCipher answers these pragmas as text on a keyed connection; read either form.
    let number = |sql: &str| -> StoreResult<i64> {
        let v: rusqlite::types::Value = conn
            .query_row(sql, [], |r| r.get(0))
            .map_err(|e| keyed_error(path, e))?;
        Ok(match v {
            rusqlite::types::Value::Integer(n) => n,
            rusqlite::types::Value::Text(t) => t.trim().parse().unwrap_or(0),
            _ => 0,
        })
    };
    let pages = number("PRAGMA page_count")?;
    let page_size = number("PRAGMA page_size")?;
    // The log first, then the file: a checkpoint that ends in between only lengthens the file.
    let log_len = super::untrusted::log_len(path);
    let found = std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| StoreError::Io {
            path: display(path),
            detail: e.to_string(),
        })?;
    super::untrusted::check_pages(
        &display(path),
        pages.max(0) as u64,
        page_size.max(0) as u64,
        found,
        log_len,
    )
}

/// Refuse what is not a study this build can read, from its identity pragmas.
pub(crate) fn check_identity(path: &Path, app_id: i32, version: i64) -> StoreResult<i64> {
    if app_id != APPLICATION_ID {
        return Err(StoreError::NotAStudy {
            path: display(path),
        });
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: display(path),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(version)
}

/// Whether the study file at `path` is encrypted (an opaque file that is not plain SQLite).
pub fn is_encrypted(path: &Path) -> StoreResult<bool> {
    if !path.exists() {
        return Err(StoreError::Missing {
            path: display(path),
        });
    }
    Ok(read_header(path)? == Header::Opaque)
}

/// Encrypt the plain study at `path` with `new`.
pub fn encrypt_study(path: &Path, new: &Passphrase) -> StoreResult<()> {
    new.check_new()?;
    convert(path, None, Some(new))
}

/// Decrypt the encrypted study at `path` (its passphrase is `current`) into a plain study.
pub fn decrypt_study(path: &Path, current: &Passphrase) -> StoreResult<()> {
    convert(path, Some(current), None)
}

/// Change the passphrase of the encrypted study at `path` from `current` to `new`.
pub fn rekey_study(path: &Path, current: &Passphrase, new: &Passphrase) -> StoreResult<()> {
    new.check_new()?;
    convert(path, Some(current), Some(new))
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// The file a conversion writes before it replaces the study: beside it (same file system, so
/// the rename is atomic), hidden, and named after the study.
fn conversion_file(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "study".to_string());
    path.with_file_name(format!(".{name}.converting"))
}

fn remove_with_journals(path: &Path) {
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let _ = std::fs::remove_file(sibling(path, suffix));
    }
}

/// Write the study at `path` (opened with `from`) into a new file keyed with `to` (none: plain),
/// then move the new file over the old one.
fn convert(path: &Path, from: Option<&Passphrase>, to: Option<&Passphrase>) -> StoreResult<()> {
    let p = display(path);
    if !path.exists() {
        return Err(StoreError::Missing { path: p });
    }
    match (read_header(path)?, from) {
        (Header::Other, _) => return Err(StoreError::NotSqlite { path: p }),
        (Header::Plain, Some(_)) => return Err(StoreError::NotEncrypted { path: p }),
        (Header::Opaque, None) => return Err(StoreError::AlreadyEncrypted { path: p }),
        _ => {}
    }
    let io = |e: std::io::Error| StoreError::Io {
        path: display(path),
        detail: e.to_string(),
    };
    // CREATE is for the attached new file (attached databases share the main one's flags); the
    // study itself exists, as checked above.
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    if let Some(key) = from {
        apply_key(&conn, key)?;
    }
    super::untrusted::harden(&conn)?;
    let (app_id, version) = keyed_identity(&conn, path).map_err(|e| match (e, from) {
        // Unkeyed, an unreadable page 1 means random bytes, not a study.
        (StoreError::WrongPassphrase { .. }, None) => StoreError::NotSqlite {
            path: display(path),
        },
        (e, _) => e,
    })?;
    check_identity(path, app_id, version)?;
    super::untrusted::verify_schema(&display(path), &conn, version)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // Fold the WAL into the file; a reader or writer elsewhere keeps it busy.
    let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
    if busy != 0 {
        return Err(StoreError::InUse { path: p });
    }
    let target = conversion_file(path);
    remove_with_journals(&target);
    // The new file is the study from now on: owner-only (`0600`) before a page is written to it.
    super::create_private(&target)?;
    let target_text = target.to_str().ok_or_else(|| {
        StoreError::Invalid(format!("{}: the path is not valid UTF-8", target.display()))
    })?;
    let exported = (|| -> rusqlite::Result<()> {
        conn.execute(
            "ATTACH DATABASE ?1 AS concord_target KEY ?2",
            rusqlite::params![target_text, to.map(|k| k.expose()).unwrap_or("")],
        )?;
        conn.query_row("SELECT sqlcipher_export('concord_target')", [], |_| Ok(()))?;
        conn.execute_batch(&format!(
            "PRAGMA concord_target.user_version = {version};
             PRAGMA concord_target.application_id = {APPLICATION_ID};"
        ))?;
        conn.execute("DETACH DATABASE concord_target", [])?;
        Ok(())
    })();
    if let Err(e) = exported {
        drop(conn);
        remove_with_journals(&target);
        return Err(e.into());
    }
    if let Err((_, e)) = conn.close() {
        remove_with_journals(&target);
        return Err(e.into());
    }
    // The last connection to close removes the WAL; one still there means another process has the
    // study open, and replacing the file under it would lose its writes.
    if sibling(path, "-wal").exists() {
        remove_with_journals(&target);
        return Err(StoreError::InUse {
            path: display(path),
        });
    }
    std::fs::File::open(&target)
        .and_then(|f| f.sync_all())
        .map_err(io)?;
    std::fs::rename(&target, path).map_err(io)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Make the rename itself durable (not possible on every platform; best effort there).
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    let _ = std::fs::remove_file(sibling(path, "-shm"));
    Ok(())
}
