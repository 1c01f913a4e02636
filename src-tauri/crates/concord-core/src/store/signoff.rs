//! Expert sign-off tables: signing keys (salted slow hashes, never the passphrase), signatures
//! with the hash of what was signed, and the ratings each signature locks.

use super::{Store, StoreResult, StudyTx};
use crate::clock::Millis;
use rusqlite::{params, OptionalExtension};
use serde::Serialize;

/// A stored signing key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningKey {
    pub salt: String,
    pub hash: String,
    pub iterations: u32,
}

/// One rating as a signature covers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedValue {
    pub rating_id: i64,
    pub response_id: i64,
    pub criterion_id: i64,
    pub value: Option<i64>,
    pub raw_value: Option<String>,
    pub rationale: Option<String>,
}

/// A stored signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SignatureRecord {
    pub id: i64,
    pub rater_id: i64,
    pub signer: String,
    pub meaning: String,
    pub scope: String,
    pub signed_at: Millis,
    pub ratings: i64,
    pub ratings_sha256: String,
}

fn value_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SignedValue> {
    Ok(SignedValue {
        rating_id: r.get(0)?,
        response_id: r.get(1)?,
        criterion_id: r.get(2)?,
        value: r.get(3)?,
        raw_value: r.get(4)?,
        rationale: r.get(5)?,
    })
}

impl Store {
    pub fn signing_key(&self, rater_id: i64) -> StoreResult<Option<SigningKey>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT salt, hash, iterations FROM signing_key WHERE rater_id = ?1",
                [rater_id],
                |r| {
                    Ok(SigningKey {
                        salt: r.get(0)?,
                        hash: r.get(1)?,
                        iterations: r.get::<_, i64>(2)? as u32,
                    })
                },
            )
            .optional()?)
    }

    /// Every signature, oldest first.
    pub fn signatures(&self) -> StoreResult<Vec<SignatureRecord>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, rater_id, signer, meaning, scope, signed_at, ratings, ratings_sha256
             FROM signature ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(SignatureRecord {
                id: r.get(0)?,
                rater_id: r.get(1)?,
                signer: r.get(2)?,
                meaning: r.get(3)?,
                scope: r.get(4)?,
                signed_at: r.get(5)?,
                ratings: r.get(6)?,
                ratings_sha256: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The ratings a signature covers, as they are now (ordered by response, criterion).
    pub fn signed_values(&self, signature_id: i64) -> StoreResult<Vec<SignedValue>> {
        let mut stmt = self.conn().prepare(
            "SELECT g.id, g.response_id, g.criterion_id, g.value, g.raw_value, g.rationale
             FROM signed_rating s JOIN rating g ON g.id = s.rating_id
             WHERE s.signature_id = ?1 ORDER BY g.response_id, g.criterion_id",
        )?;
        let rows = stmt.query_map([signature_id], value_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A rater's ratings on the responses assigned to them (ordered by response, criterion).
    pub fn assigned_values(&self, rater_id: i64) -> StoreResult<Vec<SignedValue>> {
        let mut stmt = self.conn().prepare(
            "SELECT g.id, g.response_id, g.criterion_id, g.value, g.raw_value, g.rationale
             FROM rating g WHERE g.rater_id = ?1
               AND g.response_id IN (SELECT response_id FROM assignment WHERE rater_id = ?1)
             ORDER BY g.response_id, g.criterion_id",
        )?;
        let rows = stmt.query_map([rater_id], value_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The id and name of an expert.
    pub fn expert_by_name(&self, name: &str) -> StoreResult<Option<(i64, String)>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id, name FROM rater WHERE name = ?1 AND kind = 'expert'",
                [name.trim()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    /// How many ratings a signature covers were changed (or removed) after it was made: revisions
    /// recorded in the history after the signing time, plus covered ratings that no longer exist.
    pub fn signature_changes(&self, signature_id: i64) -> StoreResult<usize> {
        let n: i64 = self.conn().query_row(
            "SELECT (SELECT COUNT(DISTINCT h.rating_id) FROM rating_history h
                       JOIN signed_rating l ON l.rating_id = h.rating_id
                       JOIN signature s ON s.id = l.signature_id
                     WHERE s.id = ?1 AND h.replaced_at >= s.signed_at)
                  + ((SELECT ratings FROM signature WHERE id = ?1)
                     - (SELECT COUNT(*) FROM signed_rating WHERE signature_id = ?1))",
            [signature_id],
            |r| r.get(0),
        )?;
        Ok(n.max(0) as usize)
    }

    /// The id and name of an expert by id.
    pub fn expert_by_id(&self, id: i64) -> StoreResult<Option<(i64, String)>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id, name FROM rater WHERE id = ?1 AND kind = 'expert'",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    /// Signatures that cover a rating (its id).
    pub fn rating_signatures(&self, rating_id: i64) -> StoreResult<Vec<i64>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT signature_id FROM signed_rating WHERE rating_id = ?1")?;
        let rows = stmt.query_map([rating_id], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl StudyTx<'_> {
    pub fn set_signing_key(&mut self, rater_id: i64, key: &SigningKey) -> StoreResult<()> {
        self.tx.execute(
            "INSERT INTO signing_key(rater_id, salt, hash, iterations, set_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(rater_id) DO UPDATE SET salt = excluded.salt, hash = excluded.hash,
                 iterations = excluded.iterations, set_at = excluded.set_at",
            params![
                rater_id,
                key.salt,
                key.hash,
                key.iterations as i64,
                self.now
            ],
        )?;
        Ok(())
    }

    /// Store a signature and lock the ratings it covers; returns its id.
    pub fn add_signature(
        &mut self,
        rater_id: i64,
        signer: &str,
        meaning: &str,
        scope: &str,
        values: &[SignedValue],
        sha256: &str,
    ) -> StoreResult<i64> {
        self.tx.execute(
            "INSERT INTO signature(rater_id, signer, meaning, scope, signed_at, ratings, ratings_sha256)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                rater_id,
                signer,
                meaning,
                scope,
                self.now,
                values.len() as i64,
                sha256
            ],
        )?;
        let id = self.tx.last_insert_rowid();
        let mut stmt = self.tx.prepare(
            "INSERT OR IGNORE INTO signed_rating(rating_id, signature_id) VALUES (?1, ?2)",
        )?;
        for v in values {
            stmt.execute(params![v.rating_id, id])?;
        }
        Ok(id)
    }

    /// The signature (id, signer) that locks rating `rating_id`, if any.
    pub(crate) fn rating_lock(&self, rating_id: i64) -> StoreResult<Option<(i64, String)>> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT s.id, s.signer FROM signed_rating l JOIN signature s ON s.id = l.signature_id
                 WHERE l.rating_id = ?1 ORDER BY s.id DESC LIMIT 1",
            )?
            .query_row([rating_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }
}
