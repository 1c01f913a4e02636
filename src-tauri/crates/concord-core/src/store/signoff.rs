//! Expert sign-off tables: signing keys (the public half of a key derived from the passphrase
//! by a salted slow hash, or an older key's hash; never the passphrase), signatures with the
//! hash of what was signed, and the ratings each signature locks.

use super::rater::named_rater;
use super::{NamedRater, Store, StoreResult, StudyTx};
use crate::base::clock::Millis;
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use std::collections::HashMap;

/// A stored signing key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningKey {
    pub salt: String,
    pub hash: String,
    pub iterations: u32,
    /// `hash` is a check value of the key (as a package holds it), not the key itself.
    pub check_only: bool,
    /// `hash` is the public half of the Ed25519 key derived from the passphrase (what every key
    /// set since schema 21 is); otherwise a key from before it.
    pub public: bool,
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

/// A signed rating as the rating screen marks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedCriterion {
    pub criterion: String,
    pub changed_after_signature: bool,
}

/// Where a rating stands with respect to sign-off, as the adjudication screen and the exports
/// show it: not signed, signed (unchanged since its latest signature), or changed after it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum SignatureState {
    #[default]
    Unsigned,
    Signed,
    ChangedAfterSignature,
}

impl SignatureState {
    /// The state of a rating last updated at `updated_at` whose latest covering signature was
    /// made at `signed_at` (none when no signature covers it).
    pub fn of(signed_at: Option<Millis>, updated_at: Millis) -> SignatureState {
        match signed_at {
            None => SignatureState::Unsigned,
            Some(at) if updated_at > at => SignatureState::ChangedAfterSignature,
            Some(_) => SignatureState::Signed,
        }
    }

    /// The export cell: empty, `signed` or `changed_after_signature`.
    pub fn as_str(self) -> &'static str {
        match self {
            SignatureState::Unsigned => "",
            SignatureState::Signed => "signed",
            SignatureState::ChangedAfterSignature => "changed_after_signature",
        }
    }
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
                "SELECT salt, hash, iterations, check_only, public FROM signing_key
                 WHERE rater_id = ?1",
                [rater_id],
                |r| {
                    Ok(SigningKey {
                        salt: r.get(0)?,
                        hash: r.get(1)?,
                        iterations: r.get::<_, i64>(2)? as u32,
                        check_only: r.get::<_, Option<i64>>(3)?.is_some(),
                        public: r.get::<_, Option<i64>>(4)?.is_some(),
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

    /// The proof a signature carries (`None` for one made before proofs, or none at all).
    pub fn signature_proof(&self, signature_id: i64) -> StoreResult<Option<String>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT proof FROM signature WHERE id = ?1",
                [signature_id],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()?
            .flatten())
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

    /// A rater's first ratings on the responses assigned to them (ordered by response,
    /// criterion). Test–retest repeats are not signed (they were not before they moved into the
    /// rating table either), so signatures made before that move keep their hashes.
    pub fn assigned_values(&self, rater_id: i64) -> StoreResult<Vec<SignedValue>> {
        let mut stmt = self.conn().prepare(
            "SELECT g.id, g.response_id, g.criterion_id, g.value, g.raw_value, g.rationale
             FROM rating g WHERE g.rater_id = ?1 AND g.occasion = 0
               AND g.response_id IN (SELECT response_id FROM assignment WHERE rater_id = ?1)
             ORDER BY g.response_id, g.criterion_id",
        )?;
        let rows = stmt.query_map([rater_id], value_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The id and name of an expert.
    pub fn expert_by_name(&self, name: &str) -> StoreResult<Option<NamedRater>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id, name FROM rater WHERE name = ?1 AND kind = 'expert'",
                [name.trim()],
                named_rater,
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
    pub fn expert_by_id(&self, id: i64) -> StoreResult<Option<NamedRater>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id, name FROM rater WHERE id = ?1 AND kind = 'expert'",
                [id],
                named_rater,
            )
            .optional()?)
    }

    /// The signed ratings of `rater_id` on `response_id`, by criterion key, each with whether it
    /// changed after its latest signature (what the rating screen marks).
    pub fn signed_criteria(
        &self,
        rater_id: i64,
        response_id: i64,
    ) -> StoreResult<Vec<SignedCriterion>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT c.key, g.updated_at > MAX(s.signed_at)
             FROM signed_rating l JOIN rating g ON g.id = l.rating_id
             JOIN signature s ON s.id = l.signature_id JOIN criterion c ON c.id = g.criterion_id
             WHERE g.rater_id = ?1 AND g.response_id = ?2 GROUP BY g.id",
        )?;
        let rows = stmt.query_map([rater_id, response_id], |r| {
            Ok(SignedCriterion {
                criterion: r.get(0)?,
                changed_after_signature: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Whether any rating of the study is signed (a study without signatures skips the lookups).
    pub fn has_signed_ratings(&self) -> StoreResult<bool> {
        Ok(self
            .conn()
            .query_row("SELECT EXISTS (SELECT 1 FROM signed_rating)", [], |r| {
                r.get(0)
            })?)
    }

    /// Every signed rating as (rater, response, criterion) of its first occasion → its state,
    /// in one pass over the signature links (what the adjudication screen marks).
    pub fn signature_states(&self) -> StoreResult<HashMap<(i64, i64, i64), SignatureState>> {
        let mut stmt = self.conn().prepare(
            "SELECT g.rater_id, g.response_id, g.criterion_id, g.updated_at, MAX(s.signed_at)
             FROM signed_rating l JOIN rating g ON g.id = l.rating_id
             JOIN signature s ON s.id = l.signature_id
             WHERE g.occasion = 0 GROUP BY l.rating_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                (r.get(0)?, r.get(1)?, r.get(2)?),
                SignatureState::of(r.get(4)?, r.get(3)?),
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
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
            "INSERT INTO signing_key(rater_id, salt, hash, iterations, set_at, check_only, public)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT(rater_id) DO UPDATE SET salt = excluded.salt, hash = excluded.hash,
                 iterations = excluded.iterations, set_at = excluded.set_at,
                 check_only = excluded.check_only, public = excluded.public",
            params![
                rater_id,
                key.salt,
                key.hash,
                key.iterations as i64,
                self.now,
                key.check_only.then_some(1_i64),
                key.public.then_some(1_i64)
            ],
        )?;
        Ok(())
    }

    /// Store a signature made now, without a proof, and lock the ratings it covers; returns its
    /// id (a merge refuses such a signature from a package).
    pub fn add_signature(
        &mut self,
        rater_id: i64,
        signer: &str,
        meaning: &str,
        scope: &str,
        values: &[SignedValue],
        sha256: &str,
    ) -> StoreResult<i64> {
        let now = self.now;
        self.add_signature_at(
            rater_id,
            signer,
            meaning,
            scope,
            now,
            values.len() as i64,
            values,
            sha256,
            None,
        )
    }

    /// Store a signature made at `signed_at` over `ratings` ratings (now, or a merged package's
    /// time) with its proof, and lock the ratings of `values`; returns its id.
    #[allow(clippy::too_many_arguments)] // one column each; a signature has no smaller part
    pub fn add_signature_at(
        &mut self,
        rater_id: i64,
        signer: &str,
        meaning: &str,
        scope: &str,
        signed_at: Millis,
        ratings: i64,
        values: &[SignedValue],
        sha256: &str,
        proof: Option<&str>,
    ) -> StoreResult<i64> {
        self.tx.execute(
            "INSERT INTO signature(rater_id, signer, meaning, scope, signed_at, ratings, ratings_sha256,
                 proof)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![rater_id, signer, meaning, scope, signed_at, ratings, sha256, proof],
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

    /// Whether the study already holds this rater's signature of `signed_at` with `scope` (a
    /// package merged twice records its signatures once).
    pub fn has_signature(
        &self,
        rater_id: i64,
        signed_at: Millis,
        scope: &str,
    ) -> StoreResult<bool> {
        Ok(self
            .tx
            .query_row(
                "SELECT 1 FROM signature WHERE rater_id = ?1 AND signed_at = ?2 AND scope = ?3",
                params![rater_id, signed_at, scope],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// The id of a rater's rating of one response and criterion.
    pub fn rating_id(
        &self,
        rater_id: i64,
        response_id: i64,
        criterion_id: i64,
    ) -> StoreResult<Option<i64>> {
        Ok(self
            .tx
            .query_row(
                "SELECT id FROM rating WHERE rater_id = ?1 AND response_id = ?2 AND criterion_id = ?3
                   AND occasion = 0",
                params![rater_id, response_id, criterion_id],
                |r| r.get(0),
            )
            .optional()?)
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
