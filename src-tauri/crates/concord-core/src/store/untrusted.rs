//! A study file may come from outside — a rater package back by e-mail, a study someone else made —
//! and an SQLite file can carry code: triggers and views run with the reader's rights, and a
//! damaged or crafted file can make a careless reader misbehave. Every connection Concord opens is
//! therefore hardened first (SQLite's defensive mode on, `trusted_schema` off, so nothing in a
//! schema may call functions with side effects), and before a file is opened for writing, its
//! schema is compared object by object (tables, indexes, triggers, views and their SQL) with the
//! schema Concord's own migrations build at the file's version. A file whose length is shorter than
//! its header says is refused as truncated. Each refusal has its own message, and all of it happens
//! on a read-only connection, so a refused file is never changed.
//!
//! The length check must not mistake a live study for a damaged one. While another connection
//! folds the write-ahead log back into the file (a checkpoint), SQLite writes page 1 — whose header
//! records the new page count — before the pages that lengthen the file, so for a moment a healthy
//! file is shorter than its header says. The check therefore runs inside a read transaction
//! ([`Snapshot`]), which keeps the log from being reset or cut while the lengths are read, and it
//! counts the pages the log beside the file can hold (its frames) as part of the database: a file
//! short by no more than its log holds is a checkpoint under way, one short by more is damaged.

use super::{display, StoreError, StoreResult, MIGRATIONS};
use crate::base::text::quoted;
use rusqlite::config::DbConfig;
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Turn on SQLite's defensive settings for `conn`.
pub(crate) fn harden(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.execute_batch("PRAGMA trusted_schema = OFF;")?;
    Ok(())
}

/// A read transaction held on a connection while the file's lengths are read: SQLite lets no
/// other connection reset or shorten the write-ahead log while it is open, and lets a checkpoint
/// copy into the file only pages the log still holds. Ended when dropped.
pub(crate) struct Snapshot<'c> {
    conn: &'c Connection,
    began: bool,
}

impl<'c> Snapshot<'c> {
    /// Begin a read transaction on `conn` (when none is open) and read the schema, which takes
    /// the snapshot. A file that cannot be read at all gives its error here, but the lengths can
    /// still be checked: a truncated file must be named as truncated first.
    pub(crate) fn take(conn: &'c Connection) -> (Snapshot<'c>, rusqlite::Result<()>) {
        let began = conn.is_autocommit() && conn.execute_batch("BEGIN DEFERRED").is_ok();
        let read = conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(drop);
        (Snapshot { conn, began }, read)
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        if self.began {
            // A read transaction has nothing to keep; ending it cannot lose anything.
            let _ = self.conn.execute_batch("COMMIT");
        }
    }
}

/// The length of the write-ahead log beside the study at `path` (0 when there is none).
pub(crate) fn log_len(path: &Path) -> u64 {
    let mut log = path.as_os_str().to_owned();
    log.push("-wal");
    std::fs::metadata(PathBuf::from(log)).map_or(0, |m| m.len())
}

/// The most bytes of database pages a write-ahead log of `log_len` bytes can hold: its frames
/// (a 24-byte header and a page each) after its 32-byte header.
fn pages_in_log(log_len: u64, page_size: u64) -> u64 {
    log_len.saturating_sub(32) / (24 + page_size) * page_size
}

/// Refuse a database of `pages` pages of `page_size` bytes whose file holds `file_len` bytes,
/// when even the pages its log of `log_len` bytes can hold do not make up the difference.
pub(crate) fn check_pages(
    path: &str,
    pages: u64,
    page_size: u64,
    file_len: u64,
    log_len: u64,
) -> StoreResult<()> {
    let expected = pages.saturating_mul(page_size);
    if file_len.saturating_add(pages_in_log(log_len, page_size)) < expected {
        return Err(StoreError::Truncated {
            path: path.to_string(),
            found: file_len,
            expected,
        });
    }
    Ok(())
}

/// Refuse a plain file shorter than the database size its header records (bytes 16–17 page size,
/// 28–31 page count; the count is valid when bytes 24–27 equal bytes 92–95), beyond what the log
/// beside it can hold. Call it under a [`Snapshot`]: it reads the log's length, then the header,
/// then the file's, so that a checkpoint finishing in between can only lengthen the file.
pub(crate) fn check_length(path: &Path) -> StoreResult<()> {
    let p = display(path);
    let io = |e: std::io::Error| StoreError::Io {
        path: p.clone(),
        detail: e.to_string(),
    };
    let log_len = log_len(path);
    let mut header = [0u8; 100];
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut got = 0;
    while got < header.len() {
        match file.read(&mut header[got..]).map_err(io)? {
            0 => break,
            n => got += n,
        }
    }
    let file_len = file.metadata().map_err(io)?.len();
    if got < header.len() {
        return Err(StoreError::Truncated {
            path: p,
            found: file_len,
            expected: 100,
        });
    }
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536u64,
        n => u64::from(n),
    };
    let pages = u64::from(be32(28));
    if be32(24) != be32(92) || pages == 0 || page_size < 512 {
        return Ok(());
    }
    check_pages(&p, pages, page_size, file_len, log_len)
}

/// One schema object: its type and name, the table it belongs to, and its SQL with whitespace runs
/// collapsed.
type Schema = BTreeMap<(String, String), (String, Option<String>)>;

fn schema_of(conn: &Connection) -> rusqlite::Result<Schema> {
    let mut stmt = conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema")?;
    let rows = stmt.query_map([], |r| {
        let sql: Option<String> = r.get(3)?;
        Ok((
            (r.get::<_, String>(0)?, r.get::<_, String>(1)?),
            (
                r.get::<_, String>(2)?,
                sql.map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")),
            ),
        ))
    })?;
    rows.collect()
}

/// The schema Concord's migrations build up to `version`.
fn expected_schema(version: i64) -> rusqlite::Result<Schema> {
    let conn = Connection::open_in_memory()?;
    for sql in MIGRATIONS.iter().take(version.max(0) as usize) {
        conn.execute_batch(sql)?;
    }
    schema_of(&conn)
}

/// Compare the schema of `conn` (a study at `version`) with Concord's.
pub(crate) fn verify_schema(path: &str, conn: &Connection, version: i64) -> StoreResult<()> {
    let found = schema_of(conn).map_err(|_| StoreError::NotSqlite {
        path: path.to_string(),
    })?;
    let expected = expected_schema(version)?;
    for ((kind, name), (table, _)) in &found {
        // Statistics tables SQLite writes itself when asked to optimise queries.
        let statistics = kind == "table" && name.starts_with("sqlite_stat");
        if !expected.contains_key(&(kind.clone(), name.clone())) && !statistics {
            return Err(StoreError::UnexpectedObject {
                path: path.to_string(),
                kind: kind.clone(),
                name: name.clone(),
                table: table.clone(),
            });
        }
    }
    for (key, (_, sql)) in &expected {
        match found.get(key) {
            None => {
                return Err(StoreError::ForeignSchema {
                    path: path.to_string(),
                    detail: format!("its {} {} is missing", key.0, quoted(&key.1)),
                })
            }
            Some((_, found_sql)) if found_sql != sql => {
                return Err(StoreError::ForeignSchema {
                    path: path.to_string(),
                    detail: format!("its {} {} is defined differently", key.0, quoted(&key.1)),
                })
            }
            Some(_) => {}
        }
    }
    Ok(())
}
