//! Signed checkpoints of the audit chain (`audit_checkpoint`): every committed write that appends
//! audit entries, made where the study's lead key is available, stores the chain's new head (the
//! last entry's id and hash), the first entry that write appended, and the lead key's Ed25519
//! signature over the three (see `lead_key`). A hash chain alone proves only that entries link;
//! anyone who can write the file can recompute every hash after an edit. A checkpoint's head
//! cannot be recomputed without the private key, so an edit of any entry at or before a
//! checkpoint (or of a row its state seals) no longer matches a signed head.
//!
//! [`check`] compares the checkpoints with the chain as recomputed: each must name an entry of
//! the chain, carry that entry's hash and verify under the study's public key; it says through
//! which entry the chain is anchored (the last good checkpoint) and which entries no checkpoint's
//! write appended (written where the key was not available, or added outside Concord).

use super::lead_key::{self, LeadKey};
use super::StoreResult;
use crate::base::clock::Millis;
use rusqlite::{params, Connection};
use std::collections::HashMap;

/// What a checkpoint signature says: the head entry, the first entry its write appended, the
/// head's hash.
const DOMAIN: &str = "audit.checkpoint";

/// Sign and store the checkpoint of a write that appended entries `first..=last` (hash `head`).
pub(super) fn write(
    c: &Connection,
    key: &LeadKey,
    first: i64,
    last: i64,
    head: &str,
    at: Millis,
) -> StoreResult<()> {
    let signature = key.sign(DOMAIN, &[&last.to_string(), &first.to_string(), head]);
    c.prepare_cached(
        "INSERT INTO audit_checkpoint(entry_id, first_entry, head, at, signature)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![last, first, head, at, signature])?;
    Ok(())
}

/// One stored checkpoint.
struct Checkpoint {
    entry: i64,
    first: i64,
    head: String,
    signature: String,
}

fn stored(c: &Connection) -> StoreResult<Vec<Checkpoint>> {
    let mut stmt = c.prepare(
        "SELECT entry_id, first_entry, head, signature FROM audit_checkpoint ORDER BY entry_id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(Checkpoint {
            entry: r.get(0)?,
            first: r.get(1)?,
            head: r.get(2)?,
            signature: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The entries the stored checkpoints name.
pub(super) fn entries(c: &Connection) -> StoreResult<std::collections::HashSet<i64>> {
    let mut stmt = c.prepare("SELECT entry_id FROM audit_checkpoint")?;
    let ids = stmt.query_map([], |r| r.get(0))?;
    Ok(ids.collect::<Result<_, _>>()?)
}

/// The last entry a checkpoint anchors: the newest one that names an entry of `hashes` (the
/// chain as walked), carries its hash and verifies under `public` for study `study_id`.
pub(super) fn last_valid(
    c: &Connection,
    study_id: &str,
    public: &str,
    hashes: &HashMap<i64, String>,
) -> StoreResult<Option<i64>> {
    for cp in stored(c)?.iter().rev() {
        let holds = hashes.get(&cp.entry) == Some(&cp.head)
            && cp.first <= cp.entry
            && lead_key::verify(
                public,
                study_id,
                DOMAIN,
                &[&cp.entry.to_string(), &cp.first.to_string(), &cp.head],
                &cp.signature,
            );
        if holds {
            return Ok(Some(cp.entry));
        }
    }
    Ok(None)
}

/// What the checkpoints say about a chain whose hashes hold together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Anchoring {
    /// Checkpoints checked.
    pub checkpoints: usize,
    /// The last entry a valid checkpoint signs (every entry up to it is anchored).
    pub anchored_through: Option<i64>,
    /// Entries after the key was made that no checkpointed write appended (written where the
    /// key was not available, or added outside Concord), the first of them and their count.
    pub first_unsigned: Option<i64>,
    pub unsigned: usize,
}

/// A checkpoint that does not hold, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Mismatch {
    pub entry: i64,
    pub message: String,
}

/// Check every checkpoint against the chain (`hashes`: entry id → recomputed hash, for every
/// chained entry, in order in `ids`) under the public key `public` of study `study_id`; entries
/// after `key_entry` (the entry that recorded the key) are expected to be signed.
pub(super) fn check(
    c: &Connection,
    study_id: &str,
    public: Option<&str>,
    key_entry: Option<i64>,
    ids: &[i64],
    hashes: &HashMap<i64, String>,
) -> StoreResult<Result<Anchoring, Mismatch>> {
    let checkpoints = stored(c)?;
    let mut out = Anchoring::default();
    let Some(public) = public else {
        if let Some(first) = checkpoints.first() {
            return Ok(Err(Mismatch {
                entry: first.entry,
                message: format!(
                    "the study holds checkpoints signed by a lead key (the first at entry {}) but no lead public key: the key was removed outside Concord",
                    first.entry
                ),
            }));
        }
        return Ok(Ok(out));
    };
    let mut previous: Option<i64> = None;
    let mut signed: Vec<(i64, i64)> = Vec::new();
    for cp in &checkpoints {
        let since = previous.map_or(String::new(), |p| {
            format!(" (the change lies after entry {p}, the previous checkpoint)")
        });
        let Some(hash) = hashes.get(&cp.entry) else {
            return Ok(Err(Mismatch {
                entry: cp.entry,
                message: format!(
                    "the lead's key signed entry {} as a head of the chain, but the chain has no entry {}: entries were deleted outside Concord",
                    cp.entry, cp.entry
                ),
            }));
        };
        if !lead_key::verify(
            public,
            study_id,
            DOMAIN,
            &[&cp.entry.to_string(), &cp.first.to_string(), &cp.head],
            &cp.signature,
        ) || cp.first > cp.entry
        {
            return Ok(Err(Mismatch {
                entry: cp.entry,
                message: format!(
                    "the checkpoint at entry {} is not signed by the study's lead key: it was forged or changed outside Concord",
                    cp.entry
                ),
            }));
        }
        if *hash != cp.head {
            return Ok(Err(Mismatch {
                entry: cp.entry,
                message: format!(
                    "entry {} is not the head the lead's key signed there: the chain up to entry {} was rewritten outside Concord{since}",
                    cp.entry, cp.entry
                ),
            }));
        }
        out.checkpoints += 1;
        out.anchored_through = Some(cp.entry);
        previous = Some(cp.entry);
        signed.push((cp.first, cp.entry));
    }
    if let Some(key_entry) = key_entry {
        if checkpoints.is_empty() {
            return Ok(Err(Mismatch {
                entry: key_entry,
                message: format!(
                    "the study's lead key was made at entry {key_entry} and signed a checkpoint then, but the study holds no checkpoint: they were removed outside Concord"
                ),
            }));
        }
        let last = out.anchored_through.unwrap_or(key_entry);
        for &id in ids.iter().filter(|&&id| id > key_entry && id <= last) {
            if !signed.iter().any(|&(a, b)| a <= id && id <= b) {
                out.unsigned += 1;
                out.first_unsigned.get_or_insert(id);
            }
        }
    }
    Ok(Ok(out))
}

/// Whether the study has a public key of the right form (a break message when not).
pub(super) fn public_key_problem(public: &str) -> Option<String> {
    (!lead_key::is_public_key(public)).then(|| {
        "the study's lead public key is not an Ed25519 key: it was changed outside Concord"
            .to_string()
    })
}
