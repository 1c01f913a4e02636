//! A study file may come from outside — a rater package back by e-mail, a study someone else made —
//! and an SQLite file can carry code: triggers and views run with the reader's rights, and a
//! damaged or crafted file can make a careless reader misbehave. Every connection Concord opens is
//! therefore hardened first (SQLite's defensive mode on, `trusted_schema` off, so nothing in a
//! schema may call functions with side effects), and before a file is opened for writing, its
//! schema is compared object by object (tables, indexes, triggers, views and their SQL) with the
//! schema Concord's own migrations build at the file's version. A file whose length is shorter than
//! its header says is refused as truncated. Each refusal has its own message, and all of it happens
//! on a read-only connection, so a refused file is never changed.

use super::{StoreError, StoreResult, MIGRATIONS};
use crate::base::text::quoted;
use rusqlite::config::DbConfig;
use rusqlite::Connection;
use std::collections::BTreeMap;

/// Turn on SQLite's defensive settings for `conn`.
pub(crate) fn harden(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.execute_batch("PRAGMA trusted_schema = OFF;")?;
    Ok(())
}

/// Refuse a file shorter than the database size its header records (bytes 16–17 page size, 28–31
/// page count; the count is valid when bytes 24–27 equal bytes 92–95).
pub(crate) fn check_length(path: &str, header: &[u8; 100], file_len: u64) -> StoreResult<()> {
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
    let expected = pages * page_size;
    if file_len < expected {
        return Err(StoreError::Truncated {
            path: path.to_string(),
            found: file_len,
            expected,
        });
    }
    Ok(())
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
