//! Sealed rater packages: a package is encrypted under the lead's package passphrase (no clinical
//! text in its bytes, a wrong passphrase refused) and the merge refuses — each with its own error,
//! the study untouched — a package not issued by this study, one altered outside Concord after
//! issue, one altered outside Concord after the expert's return, and an older return replayed
//! after a newer one from the same expert was merged.

use concord_testsupport::lead_study;

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
        1_700_086_400_000,
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
