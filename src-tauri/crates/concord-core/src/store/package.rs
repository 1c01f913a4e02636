//! The rater-package tables of the study a package was written from: `package` (every package
//! written, and when it was merged back), `package_source` (the opaque source codes it uses) and
//! `package_base` (the package rater's ratings as they were when it was written — the common
//! base a merge compares the package and the study against) and `package_merged` (the last value
//! of each rating the study and the package agreed on at a merge, the base of a later return).

use super::seal::IssuedSeal;
use super::{NamedRater, Occasion, RatingContent, Store, StoreResult, StudyRead, StudyTx};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// A package written from this study.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PackageRecord {
    pub package_id: String,
    pub rater: String,
    pub file_name: String,
    pub exported_at: i64,
    pub merged_at: Option<i64>,
}

/// The key of a base value: occasion, response, criterion.
pub type BaseKey = (Occasion, i64, i64);

/// One base value to record: the package rater's rating when the package was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseValue<'a> {
    pub occasion: Occasion,
    pub response_id: i64,
    pub criterion_id: i64,
    pub content: &'a RatingContent,
}

impl Store {
    /// Every package written from the study, oldest first.
    pub fn packages(&self) -> StoreResult<Vec<PackageRecord>> {
        let mut stmt = self.conn().prepare(
            "SELECT p.id, r.name, p.file_name, p.exported_at, p.merged_at
             FROM package p JOIN rater r ON r.id = p.rater_id ORDER BY p.exported_at, p.id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(PackageRecord {
                package_id: r.get(0)?,
                rater: r.get(1)?,
                file_name: r.get(2)?,
                exported_at: r.get(3)?,
                merged_at: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Whether a package with this id was written from the study.
    pub fn package_exists(&self, package_id: &str) -> StoreResult<bool> {
        Ok(self
            .conn()
            .query_row("SELECT 1 FROM package WHERE id = ?1", [package_id], |r| {
                r.get::<_, i64>(0)
            })
            .optional()?
            .is_some())
    }

    /// A package written from the study, by id.
    pub fn package_record(&self, package_id: &str) -> StoreResult<Option<PackageRecord>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT p.id, r.name, p.file_name, p.exported_at, p.merged_at
                 FROM package p JOIN rater r ON r.id = p.rater_id WHERE p.id = ?1",
                [package_id],
                |r| {
                    Ok(PackageRecord {
                        package_id: r.get(0)?,
                        rater: r.get(1)?,
                        file_name: r.get(2)?,
                        exported_at: r.get(3)?,
                        merged_at: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }

    /// The rater a package was written for.
    pub fn package_rater(&self, package_id: &str) -> StoreResult<Option<NamedRater>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT p.rater_id, r.name FROM package p JOIN rater r ON r.id = p.rater_id
                 WHERE p.id = ?1",
                [package_id],
                super::rater::named_rater,
            )
            .optional()?)
    }

    /// A package's source codes: code → (source id, source key).
    pub fn package_sources(&self, package_id: &str) -> StoreResult<HashMap<String, (i64, String)>> {
        let mut stmt = self.conn().prepare(
            "SELECT ps.code, ps.source_id, s.key FROM package_source ps
             JOIN source s ON s.id = ps.source_id WHERE ps.package_id = ?1",
        )?;
        let rows = stmt.query_map([package_id], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl StudyRead<'_> {
    /// The base values recorded when a package was written.
    pub fn package_base(&self, package_id: &str) -> StoreResult<HashMap<BaseKey, RatingContent>> {
        self.base_values(
            "SELECT occasion, response_id, criterion_id, value, raw_value, rationale
             FROM package_base WHERE package_id = ?1",
            package_id,
        )
    }

    /// The values an earlier merge of a package left agreed between it and the study.
    pub fn package_merged(&self, package_id: &str) -> StoreResult<HashMap<BaseKey, RatingContent>> {
        self.base_values(
            "SELECT occasion, response_id, criterion_id, value, raw_value, rationale
             FROM package_merged WHERE package_id = ?1",
            package_id,
        )
    }

    /// The rating values `sql` reads for one package (occasion, response, criterion, value, raw
    /// value, rationale).
    fn base_values(
        &self,
        sql: &'static str,
        package_id: &str,
    ) -> StoreResult<HashMap<BaseKey, RatingContent>> {
        let mut stmt = self.conn().prepare(sql)?;
        let rows = stmt.query_map([package_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                RatingContent {
                    value: r.get(3)?,
                    raw_value: r.get(4)?,
                    rationale: r.get(5)?,
                },
            ))
        })?;
        let mut out = HashMap::new();
        for row in rows {
            let (occasion, response, criterion, content) = row?;
            if let Some(occasion) = Occasion::parse(&occasion) {
                out.insert((occasion, response, criterion), content);
            }
        }
        Ok(out)
    }
}

impl StudyTx<'_> {
    /// Record a package written for a rater, with its source codes (source id → code) and base
    /// values.
    pub fn record_package(
        &mut self,
        package_id: &str,
        rater_id: i64,
        file_name: &str,
        codes: &BTreeMap<i64, String>,
        base: &[BaseValue<'_>],
    ) -> StoreResult<()> {
        self.conn().execute(
            "INSERT INTO package(id, rater_id, file_name, exported_at) VALUES (?1, ?2, ?3, ?4)",
            params![package_id, rater_id, file_name, self.now],
        )?;
        let mut src = self.conn().prepare(
            "INSERT INTO package_source(package_id, code, source_id) VALUES (?1, ?2, ?3)",
        )?;
        for (sid, code) in codes {
            src.execute(params![package_id, code, sid])?;
        }
        let mut insert = self.conn().prepare(
            "INSERT INTO package_base(package_id, occasion, response_id, criterion_id, value,
                 raw_value, rationale) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for b in base {
            insert.execute(params![
                package_id,
                b.occasion.as_str(),
                b.response_id,
                b.criterion_id,
                b.content.value,
                b.content.raw_value,
                b.content.rationale
            ])?;
        }
        Ok(())
    }

    /// Record `content` as the value of `key` the study and package `package_id` agree on.
    pub fn set_package_merged(
        &mut self,
        package_id: &str,
        key: BaseKey,
        content: &RatingContent,
    ) -> StoreResult<()> {
        let (occasion, response, criterion) = key;
        self.conn()
            .prepare_cached(
                "INSERT INTO package_merged(package_id, occasion, response_id, criterion_id, value,
                     raw_value, rationale) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT(package_id, occasion, response_id, criterion_id) DO UPDATE SET
                     value = excluded.value, raw_value = excluded.raw_value,
                     rationale = excluded.rationale",
            )?
            .execute(params![
                package_id,
                occasion.as_str(),
                response,
                criterion,
                content.value,
                content.raw_value,
                content.rationale
            ])?;
        Ok(())
    }

    /// Record the seal of package `package` as issued, with the lead's signature over it and
    /// over the record (when this write holds the lead key).
    pub fn record_package_seal(&mut self, package: &str, seal: &IssuedSeal) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE package SET issue_digest = ?2, issue_state = ?3, issuer_signature = ?4
             WHERE id = ?1",
            params![package, seal.issue, seal.state, seal.issuer_signature],
        )?;
        self.sign_package_record(package)
    }

    /// Record that return `seq` (state digest `state`) of package `package` was merged: the
    /// record signed by the lead key, and an audit entry naming the return, so a record set back
    /// by another program no longer matches the chain.
    pub fn record_package_return(
        &mut self,
        package: &str,
        seq: i64,
        state: &str,
    ) -> StoreResult<()> {
        let changed = self.conn().execute(
            "UPDATE package SET merged_seq = ?2, merged_state = ?3
             WHERE id = ?1 AND (merged_seq IS NOT ?2 OR merged_state IS NOT ?3)",
            params![package, seq, state],
        )?;
        if changed > 0 {
            self.sign_package_record(package)?;
            self.audit(
                "lead",
                super::seal::RETURN_ACTION,
                &serde_json::json!({"package": package, "seq": seq, "state": state}),
            )?;
        }
        Ok(())
    }

    /// Sign the study's record of package `package` with the lead key, when this write holds it.
    fn sign_package_record(&mut self, package: &str) -> StoreResult<()> {
        let Some(key) = self.lead.clone() else {
            return Ok(());
        };
        let Some(record) = self.read().package_seal_record(package)? else {
            return Ok(());
        };
        let signature = super::seal::sign_record(&key, package, &record);
        self.conn().execute(
            "UPDATE package SET replay_signature = ?2 WHERE id = ?1",
            params![package, signature],
        )?;
        Ok(())
    }

    /// Sign the record of every package issued (when the lead key was just made).
    pub(super) fn sign_package_records(&mut self) -> StoreResult<()> {
        let ids: Vec<String> = self
            .conn()
            .prepare("SELECT id FROM package ORDER BY id")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for id in ids {
            self.sign_package_record(&id)?;
        }
        Ok(())
    }

    /// Stamp a package as merged now.
    pub fn mark_package_merged(&mut self, package_id: &str) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE package SET merged_at = ?2 WHERE id = ?1",
            params![package_id, self.now],
        )?;
        Ok(())
    }
}
