//! Sealed rater packages: a package is encrypted under the lead's package passphrase (no clinical
//! text in its bytes, a wrong passphrase refused) and the merge refuses — each with its own error,
//! the study untouched — a package not issued by this study, one altered outside Concord after
//! issue, one altered outside Concord after the expert's return, and an older return replayed
//! after a newer one from the same expert was merged.

use concord_testsupport::lead_study;

use concord_core::store::lead_key::KeyStore;
use concord_core::store::{Passphrase, Store, StoreError};
use concord_core::workflow::assignment;
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::package;
use concord_core::workflow::package::merge_package;
use concord_core::workflow::package::PackageError;
use lead_study::*;
use std::path::{Path, PathBuf};

const PACKAGE_PASS: &str = "told to Ana by phone";
// Names long enough that encrypted bytes do not hold one by chance: random ciphertext holds a
// given 3-byte name now and then (seen once), which failed the "no plaintext" check at random.
const EXPERTS: [&str; 2] = ["Ana Lindqvist", "Boris Petrov"];

fn pass() -> Passphrase {
    Passphrase::new(PACKAGE_PASS).expect("passphrase")
}

fn later_clock() -> std::sync::Arc<concord_core::base::clock::SteppingClock> {
    std::sync::Arc::new(concord_core::base::clock::SteppingClock::new(
        1_700_000_060_000,
        1,
    ))
}

/// A lead's study with an assignment and Ana's sealed package beside it.
fn issued(dir: &Path, seed: u64) -> (Store, PathBuf) {
    let mut store = file_study(&dir.join("main.concord"), 6, &EXPERTS);
    assignment::assign(&mut store, &AssignmentOptions::new(2, 11)).expect("assigned");
    let out = dir.join("ana.concord");
    package::export_package(&mut store, "Ana Lindqvist", &out, seed, &pass())
        .expect("package written");
    (store, out)
}

/// A raw connection to the package, below Concord: what another program with the passphrase does.
fn outside_edit(path: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(path).expect("opens");
    conn.pragma_update(None, "key", PACKAGE_PASS)
        .expect("keyed");
    let changed = conn.execute(sql, []).expect("edited");
    assert!(changed > 0, "the outside edit changed a row: {sql}");
}

/// Ana works in her package in Concord: every criterion of her `n`-th item set to `value`.
fn rate_in_concord(path: &Path, n: usize, value: i64) {
    let mut pkg = Store::open_with(path, later_clock(), Some(&pass())).expect("package opens");
    let ana = rater_id(&pkg, "Ana Lindqvist");
    let items = assignment::expert_items(&pkg, "Ana Lindqvist").expect("items");
    rate_all(
        &mut pkg,
        ana,
        items[n].response_id,
        value,
        Some("rated at home"),
    );
}

/// Everything a merge could change in the lead's study.
fn fingerprint(store: &Store) -> String {
    let ana = rater_id(store, "Ana Lindqvist");
    let crit = criteria(store);
    let mut out = format!("{:?}", store.overview().expect("overview").ratings);
    for item in assignment::expert_items(store, "Ana Lindqvist").expect("items") {
        for c in &crit {
            out.push_str(&format!(
                "|{:?}",
                store
                    .rating_versions(ana, item.response_id, *c)
                    .expect("versions")
            ));
        }
    }
    out.push_str(&format!(
        "{:?}",
        package::packages(store).expect("packages")
    ));
    out
}

#[test]
fn a_sealed_package_is_encrypted_and_a_wrong_passphrase_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let (mut store, out) = issued(dir.path(), 5);
    let bytes = std::fs::read(&out).expect("package bytes");
    for text in [
        "feeling low for weeks",
        "to conversation",
        "Ana Lindqvist",
        "Human original",
    ] {
        assert!(
            !bytes.windows(text.len()).any(|w| w == text.as_bytes()),
            "the package's bytes do not contain {text:?}"
        );
    }
    let before = fingerprint(&store);
    let err = merge_package(
        &mut store,
        &out,
        &Passphrase::new("guessed passphrase").unwrap(),
    )
    .expect_err("wrong passphrase");
    assert!(
        matches!(err, PackageError::Store(StoreError::WrongPassphrase { .. })),
        "a wrong package passphrase is refused: {err}"
    );
    assert!(
        err.to_string().contains("passphrase"),
        "and the message says so: {err}"
    );
    assert_eq!(fingerprint(&store), before, "the study is untouched");
    let short = package::export_package(
        &mut store,
        "Boris Petrov",
        &dir.path().join("boris.concord"),
        1,
        &Passphrase::new("1234").unwrap(),
    )
    .expect_err("too short");
    assert!(
        matches!(short, PackageError::Store(StoreError::WeakPassphrase(_))),
        "a package passphrase under 8 characters is refused: {short}"
    );
    let report = merge_package(&mut store, &out, &pass()).expect("the right passphrase merges");
    assert!(
        !report.changed(),
        "an untouched package merges with nothing to change"
    );
}

#[test]
fn a_package_not_issued_by_this_study_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let (mut store, _) = issued(dir.path(), 5);
    let other = tempfile::tempdir().expect("other dir");
    // Same people, same seed, same passphrase: only the issuing study differs.
    let (_other_store, foreign) = issued(other.path(), 5);
    rate_in_concord(&foreign, 0, 4);
    let before = fingerprint(&store);
    let err = merge_package(&mut store, &foreign, &pass()).expect_err("foreign package");
    assert!(
        matches!(err, PackageError::NotIssuedHere { .. }),
        "a package issued by another study is refused as such: {err}"
    );
    assert!(
        err.to_string().contains("not issued by this study"),
        "with its own message: {err}"
    );
    assert_eq!(fingerprint(&store), before, "the study is untouched");
}

#[test]
fn a_package_altered_outside_concord_after_issue_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let (mut store, out) = issued(dir.path(), 5);
    let pristine = dir.path().join("pristine.concord");
    std::fs::copy(&out, &pristine).expect("copy");
    let before = fingerprint(&store);

    // Someone with the passphrase rewrites a conversation the expert will read.
    outside_edit(
        &out,
        "UPDATE conversation SET context = 'a different story' WHERE id = 1",
    );
    let err = merge_package(&mut store, &out, &pass()).expect_err("altered items");
    assert!(
        matches!(err, PackageError::AlteredAfterIssue { .. }),
        "changed items are refused as altered after issue: {err}"
    );
    assert!(
        err.to_string().contains("after it was issued"),
        "with its own message: {err}"
    );

    // Or enters ratings before the expert ever opened it in Concord.
    outside_edit(
        &pristine,
        "INSERT INTO rating(rater_id, response_id, criterion_id, value, origin, created_at, updated_at)
         SELECT r.id, a.response_id, (SELECT min(id) FROM criterion), 5, 'screen', 0, 0
         FROM rater r JOIN assignment a ON a.rater_id = r.id LIMIT 1",
    );
    let err = merge_package(&mut store, &pristine, &pass()).expect_err("ratings slipped in");
    assert!(
        matches!(err, PackageError::AlteredAfterIssue { .. }),
        "ratings written outside Concord before any save in it are refused: {err}"
    );
    assert_eq!(fingerprint(&store), before, "the study is untouched");
}

#[test]
fn a_package_altered_outside_concord_after_the_experts_return_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let (mut store, out) = issued(dir.path(), 5);
    rate_in_concord(&out, 0, 2);
    rate_in_concord(&out, 1, 3);
    let returned = dir.path().join("returned.concord");
    std::fs::copy(&out, &returned).expect("copy");
    outside_edit(&out, "UPDATE rating SET value = 5 WHERE value = 2");
    let before = fingerprint(&store);
    let err = merge_package(&mut store, &out, &pass()).expect_err("altered after return");
    assert!(
        matches!(err, PackageError::AlteredAfterReturn { .. }),
        "a rating changed after the expert's last save is refused: {err}"
    );
    assert!(
        err.to_string().contains("after the expert's return"),
        "with its own message: {err}"
    );
    assert_eq!(fingerprint(&store), before, "the study is untouched");
    let report = merge_package(&mut store, &returned, &pass()).expect("the real return merges");
    assert_eq!(
        report.inserted,
        2 * criteria(&store).len(),
        "both rated items come in from the genuine return"
    );
}

#[test]
fn an_older_return_replayed_after_a_newer_one_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let (mut store, out) = issued(dir.path(), 5);
    rate_in_concord(&out, 0, 2);
    let first_return = dir.path().join("first-return.concord");
    std::fs::copy(&out, &first_return).expect("copy of the first return");
    rate_in_concord(&out, 0, 4);
    rate_in_concord(&out, 1, 1);
    let report = merge_package(&mut store, &out, &pass()).expect("the newer return merges");
    assert!(report.changed(), "the newer return brings ratings");
    let before = fingerprint(&store);
    let err = merge_package(&mut store, &first_return, &pass()).expect_err("replayed");
    assert!(
        matches!(err, PackageError::Replayed { .. }),
        "the older return is refused as a replay: {err}"
    );
    assert!(
        err.to_string().contains("replayed") && err.to_string().contains("Ana Lindqvist"),
        "with its own message naming the expert: {err}"
    );
    assert_eq!(
        fingerprint(&store),
        before,
        "the study keeps the newer values, untouched"
    );
    let again = merge_package(&mut store, &out, &pass()).expect("the newest merges again");
    assert!(!again.changed(), "re-merging the newest return is a no-op");
}

// ---- the lead key's part: the issuer binding and the sealed replay record ----

const STRONG_PASS: &str = "correct horse battery staple 41";

fn strong() -> Passphrase {
    Passphrase::new(STRONG_PASS).expect("passphrase")
}

/// A lead's study with its lead key kept in `keys`, an assignment, and Ana's package beside it.
fn issued_keyed(dir: &Path, keys: &KeyStore, seed: u64) -> (Store, PathBuf) {
    let mut store = file_study(&dir.join("main.concord"), 6, &EXPERTS);
    store.use_lead_keys(keys.clone()).expect("keys read");
    assignment::assign(&mut store, &AssignmentOptions::new(2, 11)).expect("assigned");
    let out = dir.join("ana.concord");
    package::export_package(&mut store, "Ana Lindqvist", &out, seed, &strong())
        .expect("package written");
    assert!(
        store.lead_key().is_some(),
        "exporting a package made the study's lead key"
    );
    (store, out)
}

fn rate_keyed(path: &Path, n: usize, value: i64) {
    let mut pkg = Store::open_with(path, later_clock(), Some(&strong())).expect("package opens");
    let ana = rater_id(&pkg, "Ana Lindqvist");
    let items = assignment::expert_items(&pkg, "Ana Lindqvist").expect("items");
    rate_all(&mut pkg, ana, items[n].response_id, value, Some("at home"));
}

fn raw_package(path: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).expect("opens");
    conn.pragma_update(None, "key", STRONG_PASS).expect("keyed");
    conn
}

fn meta_of(conn: &rusqlite::Connection, key: &str) -> String {
    conn.query_row("SELECT value FROM study_meta WHERE key = ?1", [key], |r| {
        r.get(0)
    })
    .unwrap_or_else(|_| panic!("{key} is set"))
}

/// The seal's HMAC as Concord computes it from the package passphrase: what an expert who holds
/// the passphrase and knows the scheme can recompute after any edit.
fn reseal_with_passphrase(conn: &rusqlite::Connection) {
    use hmac::{Hmac, Mac};
    type HmacSha256 = Hmac<sha2::Sha256>;
    let (study, package, issue, seq, state) = (
        meta_of(conn, "seal.study"),
        meta_of(conn, "seal.package"),
        meta_of(conn, "seal.issue"),
        meta_of(conn, "seal.seq"),
        meta_of(conn, "seal.state"),
    );
    let mut derive = HmacSha256::new_from_slice(STRONG_PASS.as_bytes()).unwrap();
    derive.update(b"concord package seal v1\n");
    derive.update(package.as_bytes());
    let key = derive.finalize().into_bytes();
    let mut mac = HmacSha256::new_from_slice(&key).unwrap();
    mac.update(format!("{package}\n{study}\n{issue}\n{seq}\n{state}").as_bytes());
    let mac: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    conn.execute(
        "UPDATE study_meta SET value = ?1 WHERE key = 'seal.mac'",
        [mac],
    )
    .expect("resealed");
}

#[test]
fn a_package_from_another_study_with_its_issuer_rewritten_and_resealed_is_refused() {
    let keys_dir = tempfile::tempdir().expect("keys dir");
    let keys = KeyStore::Folder(keys_dir.path().to_path_buf());
    let dir = tempfile::tempdir().expect("dir");
    let (mut store, ours) = issued_keyed(dir.path(), &keys, 5);
    let other = tempfile::tempdir().expect("other dir");
    // Same people, items, seed and passphrase: only the issuing study (and its key) differ.
    let (_other_store, foreign) = issued_keyed(other.path(), &keys, 5);
    rate_keyed(&foreign, 0, 4);
    let (our_study, our_package, our_issue) = {
        let c = raw_package(&ours);
        (
            meta_of(&c, "seal.study"),
            meta_of(&c, "seal.package"),
            meta_of(&c, "seal.issue"),
        )
    };
    let c = raw_package(&foreign);
    assert_eq!(
        meta_of(&c, "seal.issue"),
        our_issue,
        "the foreign package's items digest like ours: only the issuer binding tells them apart"
    );
    for (key, value) in [
        ("seal.study", &our_study),
        ("seal.package", &our_package),
        ("package.id", &our_package),
    ] {
        c.execute(
            "UPDATE study_meta SET value = ?2 WHERE key = ?1",
            [key, value.as_str()],
        )
        .expect("rewritten");
    }
    reseal_with_passphrase(&c);
    drop(c);
    let before = fingerprint(&store);
    let err = merge_package(&mut store, &foreign, &strong()).expect_err("foreign package");
    assert!(
        matches!(&err, PackageError::NotIssuedHere { detail, .. } if detail.contains("issuer signature")),
        "a package whose issuer was rewritten is refused by the lead's signature: {err}"
    );
    assert_eq!(fingerprint(&store), before, "the study is untouched");

    // The other study's signature stripped instead: this study signed what it issued under that
    // id, so a package without a signature is not its own either.
    let c = raw_package(&foreign);
    c.execute("DELETE FROM study_meta WHERE key = 'seal.issuer'", [])
        .expect("stripped");
    drop(c);
    let err = merge_package(&mut store, &foreign, &strong()).expect_err("unsigned package");
    assert!(
        matches!(&err, PackageError::NotIssuedHere { detail, .. } if detail.contains("no issuer signature")),
        "a package stripped of its issuer signature is refused: {err}"
    );
    assert_eq!(fingerprint(&store), before, "the study is untouched");
    let report = merge_package(&mut store, &ours, &strong()).expect("our own package merges");
    assert!(
        !report.changed(),
        "our untouched package has nothing to merge"
    );
}

/// The study's replay record of its one package: the return merged last, its state, the lead's
/// signature over them.
type ReplayRecord = (Option<i64>, Option<String>, Option<String>);

fn replay_record(c: &rusqlite::Connection) -> ReplayRecord {
    c.query_row(
        "SELECT merged_seq, merged_state, replay_signature FROM package",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .expect("the package record")
}

/// Put `record` back with sqlite3, as an insider would.
fn set_replay_record(c: &rusqlite::Connection, record: &ReplayRecord) {
    c.execute(
        "UPDATE package SET merged_seq = ?1, merged_state = ?2, replay_signature = ?3",
        rusqlite::params![record.0, record.1, record.2],
    )
    .expect("set back");
}

#[test]
fn a_replay_record_set_back_outside_concord_is_refused() {
    let keys_dir = tempfile::tempdir().expect("keys dir");
    let keys = KeyStore::Folder(keys_dir.path().to_path_buf());
    let dir = tempfile::tempdir().expect("dir");
    let (mut store, out) = issued_keyed(dir.path(), &keys, 5);
    let main = dir.path().join("main.concord");
    rate_keyed(&out, 0, 2);
    let first_return = dir.path().join("first-return.concord");
    std::fs::copy(&out, &first_return).expect("copy of the first return");
    merge_package(&mut store, &first_return, &strong()).expect("the first return merges");
    let after_first = replay_record(&rusqlite::Connection::open(&main).expect("opens"));
    rate_keyed(&out, 0, 4);
    rate_keyed(&out, 1, 1);
    merge_package(&mut store, &out, &strong()).expect("the newer return merges");
    drop(store);

    // The replay counter reset with sqlite3: the record's signature no longer holds.
    let saved = dir.path().join("saved.concord");
    std::fs::copy(&main, &saved).expect("copy");
    let c = rusqlite::Connection::open(&main).expect("opens");
    c.execute(
        "UPDATE package SET merged_seq = NULL, merged_state = NULL",
        [],
    )
    .expect("reset");
    drop(c);
    let mut store = Store::open(&main, clock()).expect("opens");
    store.use_lead_keys(keys.clone()).expect("keys");
    let before = fingerprint(&store);
    let err = merge_package(&mut store, &first_return, &strong()).expect_err("reset record");
    assert!(
        matches!(err, PackageError::RecordChanged { .. }),
        "a reset replay counter is detected and the older return refused: {err}"
    );
    assert!(
        err.to_string().contains("changed outside Concord"),
        "with a clear message: {err}"
    );
    assert_eq!(fingerprint(&store), before, "the study is untouched");
    drop(store);

    // Set back to the signed record of the first return instead: its signature holds, but the
    // audit chain records the newer return as merged.
    std::fs::copy(&saved, &main).expect("restored");
    let c = rusqlite::Connection::open(&main).expect("opens");
    set_replay_record(&c, &after_first);
    drop(c);
    let mut store = Store::open(&main, clock()).expect("opens");
    store.use_lead_keys(keys.clone()).expect("keys");
    let err = merge_package(&mut store, &first_return, &strong()).expect_err("set-back record");
    assert!(
        matches!(&err, PackageError::RecordChanged { detail, .. } if detail.contains("audit chain")),
        "a record set back to an older signed one is refused against the chain: {err}"
    );
    drop(store);

    // Where the lead's key is not held, the merge cannot re-sign the record and refuses.
    std::fs::copy(&saved, &main).expect("restored");
    let mut elsewhere = Store::open(&main, clock()).expect("opens");
    elsewhere
        .use_lead_keys(KeyStore::Folder(dir.path().join("no-keys")))
        .expect("keys");
    let err = merge_package(&mut elsewhere, &out, &strong()).expect_err("no key here");
    assert!(
        matches!(err, PackageError::LeadKeyNeeded { .. }),
        "a keyed study's merge needs its lead key: {err}"
    );
}

#[test]
fn a_withdrawn_return_recorded_again_in_an_unanchored_entry_is_refused() {
    // The insider sets the record back to the first return's signed record and appends a
    // `package.return` entry naming the first return, re-hashing the chain: the newest entry then
    // agrees with the record. Only entries a signed checkpoint anchors may set the replay floor.
    let keys_dir = tempfile::tempdir().expect("keys dir");
    let keys = KeyStore::Folder(keys_dir.path().to_path_buf());
    let dir = tempfile::tempdir().expect("dir");
    let (mut store, out) = issued_keyed(dir.path(), &keys, 5);
    let main = dir.path().join("main.concord");
    rate_keyed(&out, 0, 2);
    let first_return = dir.path().join("first-return.concord");
    std::fs::copy(&out, &first_return).expect("copy of the first return");
    merge_package(&mut store, &first_return, &strong()).expect("the first return merges");
    let c = rusqlite::Connection::open(&main).expect("opens");
    let first = replay_record(&c);
    let entry: (String, String) = c
        .query_row(
            "SELECT actor, detail_json FROM audit_log WHERE action = 'package.return' ORDER BY id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the chain's entry of the first return");
    drop(c);
    rate_keyed(&out, 0, 4);
    merge_package(&mut store, &out, &strong()).expect("the newer return merges");
    drop(store);

    let c = rusqlite::Connection::open(&main).expect("opens");
    set_replay_record(&c, &first);
    let (last, state): (i64, String) = c
        .query_row(
            "SELECT id, state FROM audit_log ORDER BY id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("head");
    c.execute(
        "INSERT INTO audit_log(id, at, actor, action, detail_json, prev_hash, hash, state)
         VALUES (?1, 1700000099000, ?2, 'package.return', ?3, '', '', ?4)",
        rusqlite::params![last + 1, entry.0, entry.1, state],
    )
    .expect("forged entry");
    // The forged entry seals the record as set back, so the package table matches the chain.
    crate::audit_chain::reseal(&c);
    drop(c);

    let mut store = Store::open(&main, clock()).expect("opens");
    store.use_lead_keys(keys.clone()).expect("keys");
    let before = fingerprint(&store);
    let err = merge_package(&mut store, &first_return, &strong())
        .expect_err("the withdrawn return must not merge again");
    assert!(
        matches!(&err, PackageError::RecordChanged { detail, .. }
            if detail.contains(&format!("entry {}", last + 1)) && detail.contains("no checkpoint")),
        "the unanchored entry naming the package is reported: {err}"
    );
    assert_eq!(fingerprint(&store), before, "the study is untouched");
}

#[test]
fn a_study_whose_public_key_was_deleted_merges_nothing_where_its_key_is_held() {
    let keys_dir = tempfile::tempdir().expect("keys dir");
    let keys = KeyStore::Folder(keys_dir.path().to_path_buf());
    let dir = tempfile::tempdir().expect("dir");
    let (store, out) = issued_keyed(dir.path(), &keys, 5);
    drop(store);
    rate_keyed(&out, 0, 2);
    let main = dir.path().join("main.concord");
    let c = rusqlite::Connection::open(&main).expect("opens");
    c.execute_batch(
        "DELETE FROM study_meta WHERE key IN ('lead.public_key', 'lead.key_entry');
         DELETE FROM audit_checkpoint;",
    )
    .expect("key records deleted");
    drop(c);
    let mut store = Store::open(&main, clock()).expect("opens");
    store.use_lead_keys(keys.clone()).expect("keys");
    let before = fingerprint(&store);
    let err = merge_package(&mut store, &out, &strong())
        .expect_err("a study stripped of its public key merges nothing where the key is held");
    assert!(
        matches!(&err, PackageError::KeyRecordsChanged { reason, .. } if reason.contains("no lead key")),
        "the merge says the key records were changed: {err}"
    );
    assert_eq!(fingerprint(&store), before, "the study is untouched");
}

#[test]
fn an_issue_time_moved_back_in_the_study_file_is_refused() {
    // Moving the package's issue time back would let a return claim more time on task and date
    // values earlier; the study's record of its packages is sealed by the audit chain.
    let dir = tempfile::tempdir().expect("dir");
    let (store, out) = issued(dir.path(), 5);
    drop(store);
    rate_in_concord(&out, 0, 2);
    let main = dir.path().join("main.concord");
    let c = rusqlite::Connection::open(&main).expect("opens");
    let changed = c
        .execute(
            "UPDATE package SET exported_at = exported_at - 30 * 86400000",
            [],
        )
        .expect("moved back");
    assert_eq!(
        changed, 1,
        "the attack moved the issue time of the one package"
    );
    drop(c);
    let mut store = Store::open(&main, clock()).expect("opens");
    let before = fingerprint(&store);
    let err = merge_package(&mut store, &out, &pass()).expect_err("an edited record is refused");
    assert!(
        matches!(&err, PackageError::RecordChanged { detail, .. } if detail.contains("audit chain")),
        "the merge says the record no longer matches the chain's seal: {err}"
    );
    assert_eq!(fingerprint(&store), before, "the study is untouched");
}
