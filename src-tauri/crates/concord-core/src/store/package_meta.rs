//! Reads that tell a rater package apart from a study: its package id and expert (kept in
//! `study_meta`) and how many items the expert has and has finished — read either from an open
//! study or, without changing it, from a file on disk.

use super::{display, Store, StoreError, StoreResult};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde::Serialize;
use std::path::Path;

/// `study_meta` keys of a package file: its package id and its expert's name.
pub const META_PACKAGE_ID: &str = "package.id";
pub const META_PACKAGE_RATER: &str = "package.rater";

/// Whose package a study file is and how much of it is done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PackageIdentity {
    pub package_id: String,
    /// The expert the package was written for.
    pub rater: String,
    pub rater_id: i64,
    /// Items in the expert's queue (retest repeats included).
    pub items: i64,
    pub completed: i64,
}

fn identity(conn: &Connection) -> StoreResult<Option<PackageIdentity>> {
    let meta = |key: &str| -> StoreResult<Option<String>> {
        Ok(conn
            .query_row("SELECT value FROM study_meta WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()?)
    };
    let (Some(package_id), Some(rater)) = (meta(META_PACKAGE_ID)?, meta(META_PACKAGE_RATER)?)
    else {
        return Ok(None);
    };
    let rater_id: Option<i64> = conn
        .query_row("SELECT id FROM rater WHERE name = ?1", [&rater], |r| {
            r.get(0)
        })
        .optional()?;
    let rater_id = rater_id.ok_or_else(|| StoreError::NotFound {
        what: "the package's expert",
        key: rater.clone(),
    })?;
    let (items, completed): (i64, i64) = conn.query_row(
        "SELECT COUNT(*), COUNT(completed_at) FROM assignment WHERE rater_id = ?1",
        [rater_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(Some(PackageIdentity {
        package_id,
        rater,
        rater_id,
        items,
        completed,
    }))
}

impl Store {
    /// The package identity when this study is a rater package, `None` for a study.
    pub fn package_identity(&self) -> StoreResult<Option<PackageIdentity>> {
        identity(self.conn())
    }

    /// Whether any rater package was written from this study (it is a lead's study).
    pub fn issued_packages(&self) -> StoreResult<bool> {
        Ok(self
            .conn()
            .query_row("SELECT 1 FROM package LIMIT 1", [], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Whether a package with this id was written from this study.
    pub fn wrote_package(&self, package_id: &str) -> StoreResult<bool> {
        Ok(self
            .conn()
            .query_row("SELECT 1 FROM package WHERE id = ?1", [package_id], |_| {
                Ok(())
            })
            .optional()?
            .is_some())
    }
}

/// The package identity of the study file at `path`, read without writing to it (`None` for a
/// study that is not a package). The caller has checked that `path` is a Concord study.
pub fn peek_package(path: &Path) -> StoreResult<Option<PackageIdentity>> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| StoreError::Io {
        path: display(path),
        detail: e.to_string(),
    })?;
    identity(&conn)
}
