//! The audit chain against an insider who knows the scheme: each attack edits the study with
//! plain SQL (rusqlite) and recomputes the chain exactly as Concord computes it — the multiset
//! digest of the tracked tables, every entry's SHA-256 over the previous hash — so the hash chain
//! alone holds. What must catch it is the lead key: a checkpoint signed at every write, the study's
//! public key compared with the key this machine holds, and a head recorded elsewhere.
//!
//! Attacks: a signed rating edited and the chain re-hashed; a forged `rating.revise` entry in an
//! expert's name, inserted among the signed entries and appended after them; the whole chain
//! rewritten and re-signed with a fresh key that replaces the study's public key; checkpoints and
//! key stripped; a rewrite checked against a head recorded before it.

use concord_core::store::lead_key::{KeyStore, LocalLeadKey};
use concord_core::store::{
    sealed_rows, ChainCheck, ChainTrust, Store, LATE_COLUMNS, TRACKED_TABLES, VOLATILE_COLUMNS,
};
use concord_testsupport::lead_study::*;
use ed25519_dalek::{Signer, SigningKey};
use rusqlite::types::ValueRef;
use rusqlite::{params, Connection};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A lead's study whose key is kept in `dir/keys`, with an expert's ratings written in three
/// signed writes.
fn keyed_study(dir: &Path) -> (PathBuf, KeyStore) {
    let keys = KeyStore::Folder(dir.join("keys"));
    let path = dir.join("study.concord");
    let mut store = file_study(&path, 3, &["Ana Lindqvist"]);
    store.use_lead_keys(keys.clone()).expect("keys read");
    assert!(
        store.ensure_lead_key().expect("key made"),
        "a lead's study written here gets a lead key kept here"
    );
    let ana = rater_id(&store, "Ana Lindqvist");
    for (response, value) in [(1, 3), (2, 4), (3, 2)] {
        rate_all(&mut store, ana, response, value, Some("first look"));
    }
    (path, keys)
}

fn open(path: &Path, keys: &KeyStore) -> Store {
    let mut store = Store::open(path, clock()).expect("study opens");
    store.use_lead_keys(keys.clone()).expect("keys read");
    store
}

/// Verify as `concord audit verify` does on the lead's machine (its key store consulted).
fn verify_here(path: &Path, keys: &KeyStore, expect_head: Option<&str>) -> ChainCheck {
    let store = Store::open(path, clock()).expect("study opens");
    let local_key = match store.local_lead_key(keys).expect("key store read") {
        LocalLeadKey::Held(public) => Some(public),
        _ => None,
    };
    store
        .verify_audit_chain_with(&ChainTrust {
            local_key,
            expect_head: expect_head.map(str::to_string),
            require_signed: false,
        })
        .expect("verify runs")
}

/// Verify on a machine that holds no key for the study (another lead's laptop, a reviewer).
fn verify_elsewhere(path: &Path, expect_head: Option<&str>) -> ChainCheck {
    Store::open(path, clock())
        .expect("study opens")
        .verify_audit_chain_with(&ChainTrust {
            local_key: None,
            expect_head: expect_head.map(str::to_string),
            require_signed: false,
        })
        .expect("verify runs")
}

/// Verify `path` with `--require-signed`, on a machine that holds no key for it.
fn verify_signed_elsewhere(path: &Path) -> ChainCheck {
    Store::open(path, clock())
        .expect("study opens")
        .verify_audit_chain_with(&ChainTrust {
            local_key: None,
            expect_head: None,
            require_signed: true,
        })
        .expect("verify runs")
}

// ---- the attacker's tools: Concord's chain, recomputed from its published scheme ----

fn row_hash(table: &str, values: &[ValueRef<'_>]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((table.len() as u64).to_le_bytes());
    h.update(table.as_bytes());
    // A column added late counts only when set.
    let first_late = LATE_COLUMNS
        .iter()
        .find(|(t, _)| *t == table)
        .map_or(usize::MAX, |(_, at)| *at);
    for (i, v) in values.iter().enumerate() {
        if i >= first_late && matches!(v, ValueRef::Null) {
            continue;
        }
        match v {
            ValueRef::Null => h.update([0u8]),
            ValueRef::Integer(i) => {
                h.update([1u8]);
                h.update(i.to_le_bytes());
            }
            ValueRef::Real(f) => {
                h.update([2u8]);
                h.update(f.to_bits().to_le_bytes());
            }
            ValueRef::Text(t) => {
                h.update([3u8]);
                h.update((t.len() as u64).to_le_bytes());
                h.update(t);
            }
            ValueRef::Blob(b) => {
                h.update([4u8]);
                h.update((b.len() as u64).to_le_bytes());
                h.update(b);
            }
        }
    }
    h.finalize().into()
}

/// The sealed state of the tracked tables as the file now holds them.
fn full_state(c: &Connection) -> String {
    let mut state: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    for table in TRACKED_TABLES {
        let volatile = VOLATILE_COLUMNS
            .iter()
            .find(|(t, _)| t == table)
            .map_or(&[][..], |(_, cols)| *cols);
        let cols: Vec<String> = c
            .prepare(&format!("PRAGMA main.table_info({table})"))
            .unwrap()
            .query_map([], |r| r.get::<_, String>(1))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
            .into_iter()
            .filter(|c| !volatile.contains(&c.as_str()))
            .collect();
        if cols.is_empty() {
            continue;
        }
        let list = cols
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let only = sealed_rows(table, "t").map_or(String::new(), |w| format!(" WHERE {w}"));
        let mut stmt = c
            .prepare(&format!("SELECT {list} FROM {table} AS t{only}"))
            .unwrap();
        let mut rows = stmt.query([]).unwrap();
        let mut lanes = [0u64; 4];
        while let Some(row) = rows.next().unwrap() {
            let values: Vec<ValueRef<'_>> =
                (0..cols.len()).map(|i| row.get_ref(i).unwrap()).collect();
            let hash = row_hash(table, &values);
            for (i, lane) in lanes.iter_mut().enumerate() {
                let mut b = [0u8; 8];
                b.copy_from_slice(&hash[i * 8..i * 8 + 8]);
                *lane = lane.wrapping_add(u64::from_le_bytes(b));
            }
        }
        state.insert(table.to_string(), lanes);
    }
    state
        .iter()
        .filter(|(_, l)| **l != [0; 4])
        .map(|(t, l)| {
            format!(
                "{t}={}",
                l.iter().map(|x| format!("{x:016x}")).collect::<String>()
            )
        })
        .collect::<Vec<_>>()
        .join(";")
}

fn entry_hash(
    prev: &str,
    id: i64,
    at: i64,
    actor: &str,
    action: &str,
    detail: &str,
    state: &str,
) -> String {
    let mut h = Sha256::new();
    for part in [
        prev,
        &id.to_string(),
        &at.to_string(),
        actor,
        action,
        detail,
        state,
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Recompute every entry's link and hash from the first one on, and the recorded head.
pub(crate) fn rehash_chain(c: &Connection) {
    let rows: Vec<(i64, i64, String, String, String, String)> = c
        .prepare("SELECT id, at, actor, action, detail_json, state FROM audit_log WHERE hash IS NOT NULL ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut prev = GENESIS.to_string();
    let mut last = 0;
    for (id, at, actor, action, detail, state) in rows {
        let hash = entry_hash(&prev, id, at, &actor, &action, &detail, &state);
        c.execute(
            "UPDATE audit_log SET prev_hash = ?2, hash = ?3 WHERE id = ?1",
            params![id, prev, hash],
        )
        .unwrap();
        prev = hash;
        last = id;
    }
    c.execute(
        "UPDATE study_meta SET value = ?1 WHERE key = 'audit.head'",
        [format!("{last}:{prev}")],
    )
    .unwrap();
}

/// Seal the tables as they now are into the last entry's state, and re-hash the chain.
pub(crate) fn reseal(c: &Connection) {
    let state = full_state(c);
    c.execute(
        "UPDATE audit_log SET state = ?1 WHERE id = (SELECT MAX(id) FROM audit_log)",
        [state],
    )
    .unwrap();
    rehash_chain(c);
}

/// Edit a signed rating (Ana's on response 1) from 3 to 1.
fn edit_rating(c: &Connection) {
    let changed = c
        .execute(
            "UPDATE rating SET value = 1 WHERE response_id = 1 AND value = 3",
            [],
        )
        .unwrap();
    assert!(changed > 0, "the attack changed a signed rating");
}

fn last_entry(c: &Connection) -> i64 {
    c.query_row("SELECT MAX(id) FROM audit_log", [], |r| r.get(0))
        .unwrap()
}

fn head(path: &Path) -> String {
    Store::open(path, clock())
        .unwrap()
        .audit_head()
        .unwrap()
        .expect("a head")
}

#[test]
fn an_untouched_keyed_study_verifies_anchored_to_its_last_entry() {
    let dir = tempfile::tempdir().unwrap();
    let (path, keys) = keyed_study(dir.path());
    let check = verify_here(&path, &keys, None);
    assert_eq!(check.broken, None, "an untouched study is intact");
    assert!(check.key_held_here, "this machine holds the study's key");
    let last = last_entry(&Connection::open(&path).unwrap());
    assert_eq!(
        check.anchored_through,
        Some(last),
        "every write here was signed, so the chain is anchored to its last entry"
    );
    assert_eq!(
        check.not_anchored, 0,
        "no entry lies after the last checkpoint"
    );
    assert!(
        check.checkpoints >= 4,
        "one checkpoint per write: the key's own and three rating writes ({})",
        check.checkpoints
    );
    let kept: Vec<PathBuf> = std::fs::read_dir(dir.path().join("keys"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let keys_kept: Vec<&PathBuf> = kept
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "key"))
        .collect();
    assert_eq!(
        keys_kept.len(),
        1,
        "the private key is kept in the key folder, one file: {kept:?}"
    );
    let binding: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(keys_kept[0].with_extension("chain")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        binding["chain_start"].as_str(),
        Connection::open(&path)
            .unwrap()
            .query_row("SELECT hash FROM audit_log WHERE id = 1", [], |r| r
                .get::<_, String>(0))
            .ok()
            .as_deref(),
        "beside the key, its binding names the first entry of the chain it signs"
    );
    let bytes = std::fs::read(&path).unwrap();
    let secret = std::fs::read_to_string(keys_kept[0]).unwrap();
    assert!(
        !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
        "the private key never enters the study file"
    );
}

#[test]
fn an_edited_rating_with_the_chain_rehashed_fails_at_the_signed_head() {
    let dir = tempfile::tempdir().unwrap();
    let (path, keys) = keyed_study(dir.path());
    let c = Connection::open(&path).unwrap();
    let last = last_entry(&c);
    edit_rating(&c);
    reseal(&c);
    drop(c);
    // Links, hashes and the sealed state all hold again; the signed head does not, on the
    // lead's machine or any other.
    assert!(
        verify_here(&path, &keys, None).broken.is_some(),
        "the re-hashed edit fails where the key is held"
    );
    let check = verify_elsewhere(&path, None);
    let broken = check.broken.expect("the re-hashed edit is caught");
    assert_eq!(
        broken.entry,
        Some(last),
        "the break names the entry whose signed head no longer matches: {}",
        broken.message
    );
    assert!(
        broken.message.contains("rewritten"),
        "and says the chain was rewritten: {}",
        broken.message
    );
}

#[test]
fn a_forged_revision_in_an_experts_name_fails_among_signed_entries_and_after_them() {
    let dir = tempfile::tempdir().unwrap();
    let (path, keys) = keyed_study(dir.path());
    let ana = rater_id(&Store::open(&path, clock()).unwrap(), "Ana Lindqvist");
    // Inserted among the signed entries: the entry of Ana's first rating becomes a revision of
    // it from 3 to 1, and the chain is re-hashed around it.
    let c = Connection::open(&path).unwrap();
    let target: i64 = c
        .query_row(
            "SELECT MIN(id) FROM audit_log WHERE action = 'rating.enter' AND actor = ?1",
            [format!("rater:{ana}")],
            |r| r.get(0),
        )
        .unwrap();
    let detail: String = c
        .query_row(
            "SELECT detail_json FROM audit_log WHERE id = ?1",
            [target],
            |r| r.get(0),
        )
        .unwrap();
    let mut forged: serde_json::Value = serde_json::from_str(&detail).unwrap();
    forged["from"] = serde_json::json!(3);
    forged["to"] = serde_json::json!(1);
    c.execute(
        "UPDATE audit_log SET action = 'rating.revise', detail_json = ?2 WHERE id = ?1",
        params![target, forged.to_string()],
    )
    .unwrap();
    edit_rating(&c);
    reseal(&c);
    drop(c);
    let broken = verify_here(&path, &keys, None)
        .broken
        .expect("a forged revision among signed entries is caught");
    assert!(
        broken.entry.is_some_and(|e| e >= target),
        "the break names a signed head at or after the forged entry {target}: {}",
        broken.message
    );

    // Appended after the last signed entry, the forgery is not covered by any checkpoint:
    // verify says so, and fails when every entry must be signed.
    let dir = tempfile::tempdir().unwrap();
    let (path, keys) = keyed_study(dir.path());
    let c = Connection::open(&path).unwrap();
    let last = last_entry(&c);
    edit_rating(&c);
    c.execute(
        "INSERT INTO audit_log(id, at, actor, action, detail_json, prev_hash, hash, state)
         SELECT id + 1, at + 1, ?1, 'rating.revise', ?2, hash, hash, state FROM audit_log WHERE id = ?3",
        params![
            format!("rater:{ana}"),
            serde_json::json!({"rater_id": ana, "response_id": 1, "from": 3, "to": 1, "origin": "screen"}).to_string(),
            last
        ],
    )
    .unwrap();
    reseal(&c);
    drop(c);
    let check = verify_here(&path, &keys, None);
    assert_eq!(
        (check.anchored_through, check.not_anchored),
        (Some(last), 1),
        "the appended entry is reported as not anchored: {:?}",
        check.broken
    );
    let strict = verify_signed_elsewhere(&path)
        .broken
        .expect("an entry no signed write appended fails when every entry must be signed");
    assert_eq!(
        strict.entry,
        Some(last + 1),
        "naming the forged entry: {}",
        strict.message
    );
    // The lead's next write signs the new head, but not as its own: the forged entry stays
    // outside every signed write and is named.
    let mut store = open(&path, &keys);
    assert!(store.lead_key().is_some(), "the lead's key is held here");
    rate_all(&mut store, ana, 2, 5, Some("second look"));
    drop(store);
    let check = verify_here(&path, &keys, None);
    assert_eq!(
        (check.first_unsigned, check.unsigned),
        (Some(last + 1), 1),
        "the forged entry is named as written without the lead key even after a signed write: {:?}",
        check.broken
    );
}

/// Rewrite the chain (an edited rating, re-hashed) and sign every checkpoint with a fresh key
/// that replaces the study's public key.
fn resign_with_fresh_key(path: &Path) {
    let c = Connection::open(path).unwrap();
    edit_rating(&c);
    let fresh = SigningKey::from_bytes(&[7u8; 32]);
    let public: String = fresh
        .verifying_key()
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    // The chain's record of the key's creation names the fresh key too.
    let detail: String = c
        .query_row(
            "SELECT detail_json FROM audit_log WHERE action = 'lead_key.created'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut detail: serde_json::Value = serde_json::from_str(&detail).unwrap();
    detail["fingerprint"] = serde_json::json!(concord_core::store::lead_key::fingerprint(&public));
    c.execute(
        "UPDATE audit_log SET detail_json = ?1 WHERE action = 'lead_key.created'",
        [detail.to_string()],
    )
    .unwrap();
    c.execute(
        "UPDATE study_meta SET value = ?1 WHERE key = 'lead.public_key'",
        [&public],
    )
    .unwrap();
    reseal(&c);
    let study: String = c
        .query_row(
            "SELECT value FROM study_meta WHERE key = 'study.id'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let checkpoints: Vec<(i64, i64, String)> = c
        .prepare("SELECT entry_id, first_entry, a.hash FROM audit_checkpoint JOIN audit_log a ON a.id = entry_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (entry, first, hash) in checkpoints {
        let mut message = Vec::new();
        for part in [
            "concord lead signature v1",
            "audit.checkpoint",
            &study,
            &entry.to_string(),
            &first.to_string(),
            &hash,
        ] {
            message.extend_from_slice(&(part.len() as u64).to_le_bytes());
            message.extend_from_slice(part.as_bytes());
        }
        let signature: String = fresh
            .sign(&message)
            .to_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        c.execute(
            "UPDATE audit_checkpoint SET head = ?2, signature = ?3 WHERE entry_id = ?1",
            params![entry, hash, signature],
        )
        .unwrap();
    }
}

#[test]
fn a_chain_rewritten_and_resigned_with_a_fresh_key_fails_where_the_real_key_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let (path, keys) = keyed_study(dir.path());
    resign_with_fresh_key(&path);
    let broken = verify_here(&path, &keys, None)
        .broken
        .expect("a chain re-signed with another key fails where the real key is held");
    assert!(
        broken
            .message
            .contains("not the lead key this machine holds"),
        "and says the study's key was replaced: {}",
        broken.message
    );
    // What the file alone cannot show: without the real key (or a head recorded elsewhere) the
    // re-signed chain is self-consistent. The README says so.
    assert_eq!(
        verify_elsewhere(&path, None).broken,
        None,
        "without the real key a consistent re-signed chain cannot be told from the real one"
    );
}

#[test]
fn checkpoints_and_key_stripped_fail_where_the_key_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let (path, keys) = keyed_study(dir.path());
    let c = Connection::open(&path).unwrap();
    edit_rating(&c);
    reseal(&c);
    c.execute_batch(
        "DELETE FROM audit_checkpoint;
         DELETE FROM study_meta WHERE key IN ('lead.public_key', 'lead.key_entry');",
    )
    .unwrap();
    drop(c);
    let broken = verify_here(&path, &keys, None)
        .broken
        .expect("a study stripped of its key and checkpoints fails where the key is held");
    assert!(
        broken.message.contains("removed outside Concord"),
        "and says they were removed: {}",
        broken.message
    );
    // Opened where the key is held, the stripped study is not given a new key silently, and
    // it is refused for writing with the reason, so no later write can cover the strip.
    let mut store = open(&path, &keys);
    assert!(
        store.lead_key().is_none(),
        "a study whose key was stripped is not re-keyed"
    );
    let ana = rater_id(&store, "Ana Lindqvist");
    let refused = try_rate(&mut store, ana, 2, 5);
    assert!(
        refused.as_ref().is_err_and(|m| m.contains("changed outside Concord")),
        "a write to a study whose key records were stripped is refused with the reason: {refused:?}"
    );
    drop(store);
    assert!(
        verify_here(&path, &keys, None).broken.is_some(),
        "and the strip still shows"
    );

    // Only the checkpoints stripped, the key kept: fails on any machine.
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = keyed_study(dir.path());
    let c = Connection::open(&path).unwrap();
    c.execute_batch("DELETE FROM audit_checkpoint;").unwrap();
    drop(c);
    let broken = verify_elsewhere(&path, None)
        .broken
        .expect("a keyed study without checkpoints fails");
    assert!(
        broken.message.contains("no checkpoint"),
        "and says its checkpoints were removed: {}",
        broken.message
    );
}

/// Save one value through Concord; the refusal's text when the write is refused.
fn try_rate(store: &mut Store, rater: i64, response: i64, value: i64) -> Result<(), String> {
    let criterion = criteria(store)[0];
    store
        .write(|tx| {
            tx.set_rating(&concord_core::store::RatingInput {
                rater_id: rater,
                response_id: response,
                criterion_id: criterion,
                occasion: concord_core::store::Occasion::First,
                value: Some(value),
                raw_value: None,
                rationale: None,
                origin: "screen",
            })
        })
        .map(drop)
        .map_err(|e: concord_core::store::StoreError| e.to_string())
}

/// Renumber the chain's entries after some were deleted, as an insider hiding the gap would.
fn renumber(c: &Connection) {
    c.execute_batch(
        "CREATE TEMP TABLE kept AS SELECT * FROM audit_log ORDER BY id;
         DELETE FROM audit_log;
         INSERT INTO audit_log(id, at, actor, action, detail_json, prev_hash, hash, state)
           SELECT ROW_NUMBER() OVER (ORDER BY id), at, actor, action, detail_json, prev_hash, hash, state
           FROM kept;
         DROP TABLE kept;",
    )
    .unwrap();
}

/// The attack: a signed rating edited, the checkpoints and every record of the lead key deleted
/// (the `lead_key.created` entry too, the chain renumbered and re-hashed), and a new study id
/// written, so the study looks like one that never had a key. `rewrite_start` also changes the
/// chain's first entry, so that nothing in it matches what the lead's machine remembers.
fn strip_key_and_rename(path: &Path, rewrite_start: bool) {
    let c = Connection::open(path).unwrap();
    edit_rating(&c);
    c.execute_batch(
        "DELETE FROM audit_checkpoint;
         DELETE FROM audit_log WHERE action = 'lead_key.created';
         DELETE FROM study_meta WHERE key IN ('lead.public_key', 'lead.key_entry');
         UPDATE study_meta SET value = 'aaaabbbbccccdddd0000111122223333' WHERE key = 'study.id';",
    )
    .unwrap();
    if rewrite_start {
        c.execute("UPDATE audit_log SET at = at + 1 WHERE id = 1", [])
            .unwrap();
    }
    renumber(&c);
    reseal(&c);
}

#[test]
fn a_study_stripped_of_its_key_under_a_new_id_is_never_given_a_new_key() {
    // The insider keeps the chain's first entry: the lead's machine knows the chain by it.
    let dir = tempfile::tempdir().unwrap();
    let (path, keys) = keyed_study(dir.path());
    strip_key_and_rename(&path, false);
    assert_eq!(
        verify_elsewhere(&path, None).broken,
        None,
        "the forged study is self-consistent as a study that never had a key"
    );
    let mut store = open(&path, &keys);
    assert!(
        store.lead_key().is_none(),
        "no new lead key is made for a chain this machine knows under another id"
    );
    let ana = rater_id(&store, "Ana Lindqvist");
    let refused = try_rate(&mut store, ana, 2, 5);
    assert!(
        refused
            .as_ref()
            .is_err_and(|m| m.contains("began as study") && m.contains("changed outside Concord")),
        "the lead's next write is refused, naming the study the chain began as: {refused:?}"
    );
    drop(store);
    let here = verify_here(&path, &keys, None);
    assert!(
        here.broken
            .as_ref()
            .is_some_and(|b| b.message.contains("removed outside Concord")),
        "where the key is held, verify names the removed key: {:?}",
        here.broken
    );

    // The insider also rewrites the first entry: nothing ties the chain to the lead's key now,
    // but a chain with entries still never gets a new key, so nothing it holds is signed.
    let dir = tempfile::tempdir().unwrap();
    let (path, keys) = keyed_study(dir.path());
    strip_key_and_rename(&path, true);
    let mut store = open(&path, &keys);
    let ana = rater_id(&store, "Ana Lindqvist");
    try_rate(&mut store, ana, 2, 5).expect("a keyless study is still written, unsigned");
    assert!(
        store.lead_key().is_none(),
        "the write made no new lead key for a chain that already had entries"
    );
    drop(store);
    let signed = verify_signed_elsewhere(&path);
    assert!(
        signed.broken.is_some(),
        "--require-signed fails: no entry of the forged study is signed by any lead key"
    );
}

#[test]
fn the_key_entry_is_read_from_the_chain_not_from_a_setting() {
    // Moving `lead.key_entry` past a forged entry once hid it from --require-signed.
    let dir = tempfile::tempdir().unwrap();
    let (path, keys) = keyed_study(dir.path());
    let c = Connection::open(&path).unwrap();
    let last = last_entry(&c);
    let state: String = c
        .query_row("SELECT state FROM audit_log WHERE id = ?1", [last], |r| {
            r.get(0)
        })
        .unwrap();
    c.execute(
        "INSERT INTO audit_log(id, at, actor, action, detail_json, prev_hash, hash, state)
         VALUES (?1, 1, 'rater:1', 'rating.revise', '{}', '', '', ?2)",
        params![last + 1, state],
    )
    .unwrap();
    rehash_chain(&c);
    // The setting earlier versions read, planted past the forged entry.
    c.execute(
        "INSERT OR REPLACE INTO study_meta(key, value) VALUES ('lead.key_entry', ?1)",
        [(last + 1).to_string()],
    )
    .unwrap();
    drop(c);
    // The lead's next write signs a head after the forged entry.
    let mut store = open(&path, &keys);
    let ana = rater_id(&store, "Ana Lindqvist");
    try_rate(&mut store, ana, 3, 5).expect("the lead writes");
    drop(store);
    let check = verify_signed_elsewhere(&path);
    assert_eq!(
        check.broken.as_ref().and_then(|b| b.entry),
        Some(last + 1),
        "the forged entry, written by no checkpointed write, is named whatever the setting says: {:?}",
        check.broken
    );
}

#[test]
fn a_head_recorded_before_a_rewrite_is_not_found_in_the_rewritten_chain() {
    let dir = tempfile::tempdir().unwrap();
    let (path, keys) = keyed_study(dir.path());
    let recorded = head(&path);
    let found = verify_elsewhere(&path, Some(&recorded));
    assert_eq!(
        found.broken, None,
        "the recorded head is in the untouched chain"
    );
    let last = last_entry(&Connection::open(&path).unwrap());
    assert_eq!(
        found.expected_head_at,
        Some(last),
        "and verify says at which entry"
    );
    // The strongest rewrite the file allows without the key: re-hashed, re-signed with a fresh
    // key, seen from a machine without the real key.
    resign_with_fresh_key(&path);
    assert_eq!(
        verify_elsewhere(&path, None).broken,
        None,
        "the rewrite is self-consistent"
    );
    let broken = verify_elsewhere(&path, Some(&recorded))
        .broken
        .expect("the head recorded before the rewrite is not in the rewritten chain");
    assert!(
        broken.message.contains(&recorded),
        "the break names the head looked for: {}",
        broken.message
    );
    assert!(
        verify_here(&path, &keys, Some(&recorded)).broken.is_some(),
        "and on the lead's machine it fails too"
    );
}

#[test]
fn a_study_written_where_its_key_is_not_available_still_works_and_says_how_far_it_is_anchored() {
    let dir = tempfile::tempdir().unwrap();
    let (path, keys) = keyed_study(dir.path());
    let anchored = last_entry(&Connection::open(&path).unwrap());
    // Another machine: an empty key store.
    let mut elsewhere = open(&path, &KeyStore::Folder(dir.path().join("other-keys")));
    assert!(
        elsewhere.lead_key().is_none(),
        "the key is not on the other machine"
    );
    let ana = rater_id(&elsewhere, "Ana Lindqvist");
    rate_all(&mut elsewhere, ana, 2, 5, Some("on the laptop"));
    drop(elsewhere);
    assert!(
        std::fs::read_dir(dir.path().join("other-keys")).is_err(),
        "no new key is made for a study that already has one"
    );
    let check = verify_here(&path, &keys, None);
    assert_eq!(check.broken, None, "writes without the key are not a break");
    assert_eq!(
        check.anchored_through,
        Some(anchored),
        "the chain is anchored up to the last write signed with the key"
    );
    let laptop_entries = criteria(&Store::open(&path, clock()).unwrap()).len();
    assert_eq!(
        check.not_anchored, laptop_entries,
        "the laptop's write (one entry per criterion rated) is not anchored"
    );
    // Back on the lead's machine, the next write signs again.
    let mut store = open(&path, &keys);
    rate_all(&mut store, ana, 3, 5, None);
    drop(store);
    let check = verify_here(&path, &keys, None);
    assert_eq!(
        (check.not_anchored, check.first_unsigned),
        (0, Some(anchored + 1)),
        "anchored again to the end, the laptop's entry named as written without the key: {:?}",
        check.broken
    );
}

#[test]
fn what_gives_a_value_its_meaning_is_sealed_and_an_edit_names_its_table() {
    // Each edit changes what signed values mean without touching a rating: before the meaning
    // tables were sealed, every one passed `--require-signed`.
    let attacks: [(&str, &str, &str); 6] = [
        (
            "two experts' names swapped",
            "UPDATE rater SET name = 'swap' WHERE name = 'Ana Lindqvist';
             UPDATE rater SET name = 'Ana Lindqvist' WHERE name = 'Ben Okafor';
             UPDATE rater SET name = 'Ben Okafor' WHERE name = 'swap';",
            "rater",
        ),
        (
            "two models' identities swapped",
            "UPDATE source SET name = CASE id WHEN 1 THEN (SELECT name FROM source WHERE id = 2)
                                              ELSE (SELECT name FROM source WHERE id = 1) END
             WHERE id IN (1, 2)",
            "source",
        ),
        (
            "an answer's text rewritten",
            "UPDATE response SET text = 'You should stop your medication.' WHERE id = 1",
            "response",
        ),
        (
            "a criterion relabelled",
            "UPDATE criterion SET key = 'harm' WHERE id = (SELECT MIN(id) FROM criterion)",
            "criterion",
        ),
        (
            "a web session planted for an expert never invited",
            "INSERT INTO web_session(token_sha256, rater_id, login, created_at, last_seen)
             VALUES ('00ff', (SELECT id FROM rater WHERE name = 'Ben Okafor'), 1, 1, 1)",
            "web_session",
        ),
        (
            "the judges' aggregate setting changed",
            "INSERT OR REPLACE INTO study_meta(key, value) VALUES ('judge_repetition_aggregate', 'mean')",
            "study_meta",
        ),
    ];
    for (name, sql, table) in attacks {
        let dir = tempfile::tempdir().unwrap();
        let keys = KeyStore::Folder(dir.path().join("keys"));
        let path = dir.path().join("study.concord");
        let mut store = file_study(&path, 3, &["Ana Lindqvist", "Ben Okafor"]);
        store.use_lead_keys(keys.clone()).expect("keys read");
        let ana = rater_id(&store, "Ana Lindqvist");
        rate_all(&mut store, ana, 1, 3, None);
        drop(store);
        assert_eq!(
            verify_signed_elsewhere(&path).broken,
            None,
            "the untouched study verifies with --require-signed"
        );
        let c = Connection::open(&path).unwrap();
        c.execute_batch(sql).unwrap();
        assert!(c.total_changes() > 0, "the attack ({name}) changed a row");
        drop(c);
        let broken = verify_signed_elsewhere(&path).broken;
        assert_eq!(
            broken.as_ref().and_then(|b| b.table.as_deref()),
            Some(table),
            "{name} outside Concord fails --require-signed and names the table: {broken:?}"
        );
        if table != "response" {
            assert!(
                broken.as_ref().is_some_and(|b| b.message.contains("row ")),
                "{name}: the row is named too: {broken:?}"
            );
        }
    }
}

#[test]
fn what_changes_with_use_stays_outside_the_seal() {
    // When a session was last seen changes without an audit entry.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("study.concord");
    drop(file_study(&path, 3, &["Ana Lindqvist"]));
    let c = Connection::open(&path).unwrap();
    c.execute_batch(
        "INSERT INTO web_session(token_sha256, rater_id, login, created_at, last_seen)
         VALUES ('aa', 1, 1, 1, 1);",
    )
    .unwrap();
    reseal(&c);
    drop(c);
    assert_eq!(
        verify_elsewhere(&path, None).broken,
        None,
        "sealed as it is"
    );
    let c = Connection::open(&path).unwrap();
    c.execute("UPDATE web_session SET last_seen = 99", [])
        .unwrap();
    drop(c);
    assert_eq!(
        verify_elsewhere(&path, None).broken,
        None,
        "a session's last-seen time is volatile and documented as outside the seal"
    );
}

#[test]
fn a_study_that_never_had_a_key_gets_one_only_when_the_lead_asks() {
    // Written where no key store was given: a chain with entries and no key.
    let dir = tempfile::tempdir().unwrap();
    let keys = KeyStore::Folder(dir.path().join("keys"));
    let path = dir.path().join("study.concord");
    let mut store = file_study(&path, 3, &["Ana Lindqvist"]);
    let ana = rater_id(&store, "Ana Lindqvist");
    rate_all(&mut store, ana, 1, 3, None);
    drop(store);
    let mut store = open(&path, &keys);
    rate_all(&mut store, ana, 2, 4, None);
    assert!(
        store.lead_key().is_none(),
        "an ordinary write makes no key for a chain that already has entries"
    );
    let (fingerprint, before) = store
        .adopt_lead_key(keys.clone())
        .expect("the lead's explicit request gives the study a key");
    assert!(
        fingerprint.starts_with("ed25519:") && before > 1,
        "the adoption names the key and the entries before it: {fingerprint}, {before}"
    );
    assert!(store.lead_key().is_some(), "the key is held here now");
    rate_all(&mut store, ana, 3, 5, None);
    let again = store.adopt_lead_key(keys.clone());
    assert!(
        again.is_err(),
        "a study with a key is never given another: {again:?}"
    );
    drop(store);
    let log = Store::open(&path, clock())
        .unwrap()
        .audit_entries(None, None)
        .unwrap();
    assert!(
        log.iter().any(|e| e.action == "lead_key.adopted"
            && e.detail["unsigned_before"].as_i64() == Some(before)),
        "the chain says the key was adopted and how many entries came before it unsigned"
    );
    let check = verify_here(&path, &keys, None);
    assert_eq!(
        check.broken, None,
        "the adopted study verifies where its key is held"
    );

    // A study whose key records were stripped, its chain still known here, cannot adopt one.
    let dir = tempfile::tempdir().unwrap();
    let (path, keys) = keyed_study(dir.path());
    strip_key_and_rename(&path, false);
    let mut store = open(&path, &keys);
    let refused = store.adopt_lead_key(keys.clone());
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("changed outside Concord")),
        "adoption cannot launder a study whose chain this machine knows under another key: {refused:?}"
    );
}
