//! Rater packages: what a package file may and may not hold (checked on its tables and raw
//! bytes), the round trip (the expert rates and revises in the package, the merge brings values
//! and history back), idempotence (a second merge changes nothing), conflicts (changed on both
//! sides: reported, the study keeps its value) and refused files.

use concord_testsupport::lead_study;

use concord_core::store::{Passphrase, RatingInput, Store};
use concord_core::workflow::assignment;
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::assignment::Purpose;
use concord_core::workflow::package;
use concord_core::workflow::package::merge_package;
use concord_core::workflow::package::Occasion;
use concord_core::workflow::package::PackageError;
use lead_study::*;
use std::path::Path;

const EXPERTS: [&str; 3] = ["Ana", "Boris", "Chen"];

/// An expert's items other than retests (each a distinct response), in shown order.
fn first_showings(store: &Store, name: &str) -> Vec<assignment::AssignedItem> {
    assignment::expert_items(store, name)
        .expect("items")
        .into_iter()
        .filter(|i| i.purpose != Purpose::Retest)
        .collect()
}

/// A study file with an assignment, ratings by Ana (one revised), Boris and the judge.
fn setup(dir: &Path) -> Store {
    let mut store = file_study(&dir.join("main.concord"), 12, &EXPERTS);
    let mut options = AssignmentOptions::new(2, 11);
    options.retest = 1;
    options.retest_gap = 2;
    assignment::assign(&mut store, &options).expect("assigned");
    let ana = rater_id(&store, "Ana");
    let boris = rater_id(&store, "Boris");
    let judge = rater_id(&store, "gpt-4o-judge");
    let items = first_showings(&store, "Ana");
    rate_all(&mut store, ana, items[0].response_id, 3, None);
    rate_all(
        &mut store,
        ana,
        items[0].response_id,
        4,
        Some("warm but vague"),
    );
    rate_all(&mut store, ana, items[1].response_id, 2, None);
    for item in assignment::expert_items(&store, "Boris")
        .expect("items")
        .iter()
        .take(3)
    {
        rate_all(
            &mut store,
            boris,
            item.response_id,
            5,
            Some("Boris' private note"),
        );
    }
    for item in &items {
        rate_all(
            &mut store,
            judge,
            item.response_id,
            1,
            Some("judge explanation"),
        );
    }
    store
}

/// The expert's laptop clock: the package is worked on a minute after it was written (the merge,
/// on the lead's clock, refuses times more than a few minutes ahead of it).
fn later_clock() -> std::sync::Arc<concord_core::base::clock::SteppingClock> {
    std::sync::Arc::new(concord_core::base::clock::SteppingClock::new(
        1_700_000_060_000,
        1,
    ))
}

/// The passphrase the lead seals Ana's package with.
fn pass() -> Passphrase {
    Passphrase::new("correct horse battery").expect("a passphrase")
}

/// A raw connection to a study or (keyed) package file, for checks below the store.
fn raw(path: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).expect("opens");
    let head = std::fs::read(path).expect("bytes");
    if !head.starts_with(b"SQLite format 3\0") {
        conn.pragma_update(None, "key", "correct horse battery")
            .expect("keyed");
    }
    conn
}

fn count(path: &Path, sql: &str) -> i64 {
    let conn = raw(path);
    conn.query_row(sql, [], |r| r.get(0)).expect("query")
}

/// Everything a merge can change, as one comparable value.
fn fingerprint(path: &Path) -> Vec<String> {
    let conn = raw(path);
    let mut out = Vec::new();
    for sql in [
        "SELECT rater_id || ':' || response_id || ':' || criterion_id || '=' || IFNULL(value,'-') || '|' || IFNULL(rationale,'') || '@' || updated_at FROM rating ORDER BY id",
        "SELECT rating_id || '=' || IFNULL(value,'-') || '@' || valid_from || '-' || replaced_at FROM rating_history ORDER BY id",
        "SELECT rater_id || ':' || response_id || '=' || IFNULL(value,'-') FROM rating WHERE occasion = 1 ORDER BY id",
        "SELECT id || ':' || IFNULL(first_shown_at,'-') || ':' || IFNULL(completed_at,'-') || ':' || seconds_spent FROM assignment ORDER BY id",
        "SELECT COUNT(*) FROM audit_log",
        "SELECT COUNT(*) FROM flag",
        "SELECT IFNULL(merged_at, '-') FROM package",
    ] {
        let mut stmt = conn.prepare(sql).expect("prepare");
        let rows = stmt
            .query_map([], |r| r.get::<_, rusqlite::types::Value>(0))
            .expect("query");
        for r in rows {
            out.push(format!("{:?}", r.expect("row")));
        }
    }
    out
}

#[test]
fn package_holds_only_the_experts_own_work_and_no_source_names() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = setup(dir.path());
    let out = dir.path().join("ana.concord");
    let summary = package::export_package(&mut store, "Ana", &out, 5, &pass()).expect("exported");
    let items = assignment::expert_items(&store, "Ana").expect("items");
    assert_eq!(
        summary.assignments,
        items.len(),
        "every assigned item is in the package"
    );
    assert_eq!(
        summary.ratings, 14,
        "Ana's 7 + 7 current ratings travel with her"
    );
    assert!(
        !out.with_extension("concord-wal").exists(),
        "the package is one closed file, no WAL beside it"
    );

    let pkg =
        Store::open_with(&out, later_clock(), Some(&pass())).expect("the package opens as a study");
    let raters = pkg.raters().expect("raters");
    assert_eq!(
        raters.len(),
        1,
        "only the expert herself is in the package: {raters:?}"
    );
    assert_eq!(raters[0].name, "Ana", "the package's rater is Ana");
    let pkg_items = assignment::expert_items(&pkg, "Ana").expect("items");
    assert_eq!(
        pkg_items
            .iter()
            .map(|i| (i.position, i.purpose))
            .collect::<Vec<_>>(),
        items
            .iter()
            .map(|i| (i.position, i.purpose))
            .collect::<Vec<_>>(),
        "the shown order and purposes are kept"
    );
    drop(pkg);
    assert_eq!(
        count(&out, "SELECT COUNT(*) FROM rating WHERE rater_id <> (SELECT id FROM rater WHERE name = 'Ana')"),
        0,
        "no other rater's rating is in the package"
    );
    assert_eq!(
        count(&out, "SELECT COUNT(*) FROM rating_history"),
        7,
        "Ana's revised item keeps its seven earlier values"
    );
    assert_eq!(
        count(&out, "SELECT COUNT(*) FROM source WHERE key NOT LIKE 'S__' OR name <> key OR family IS NOT NULL OR kind <> 'llm'"),
        0,
        "every source is an opaque code with no name, family or human/model kind"
    );
    let bytes = std::fs::read(&out).expect("package bytes");
    let text = String::from_utf8_lossy(&bytes);
    for secret in [
        "Human original",
        "Claude-3.5-Haiku",
        "GPT-4o",
        "Qwen-3-4B",
        "gpt4o",
        "qwen_3",
        "claude",
        "gpt-4o-judge",
        "judge explanation",
        "Boris",
        "Chen",
        "private note",
    ] {
        assert!(
            !text.contains(secret),
            "the package file must not contain {secret:?} anywhere in its bytes"
        );
    }
    let records = package::packages(&store).expect("packages");
    assert_eq!(records.len(), 1, "the study records the package it wrote");
    assert_eq!(records[0].package_id, summary.package_id, "by its id");
}

#[test]
fn round_trip_merges_new_ratings_revisions_and_history_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = setup(dir.path());
    let main = dir.path().join("main.concord");
    let out = dir.path().join("ana.concord");
    package::export_package(&mut store, "Ana", &out, 5, &pass()).expect("exported");
    let before_export_items = first_showings(&store, "Ana");

    // Ana works in her package: revises item 0, rates items 2 and 3, does a retest, flags one.
    let mut pkg = Store::open_with(&out, later_clock(), Some(&pass())).expect("package opens");
    let ana_pkg = rater_id(&pkg, "Ana");
    let pkg_items = first_showings(&pkg, "Ana");
    rate_all(
        &mut pkg,
        ana_pkg,
        pkg_items[0].response_id,
        5,
        Some("clearer now"),
    );
    rate_all(&mut pkg, ana_pkg, pkg_items[2].response_id, 1, None);
    rate_all(&mut pkg, ana_pkg, pkg_items[2].response_id, 2, None);
    rate_all(&mut pkg, ana_pkg, pkg_items[3].response_id, 3, None);
    let all_pkg_items = assignment::expert_items(&pkg, "Ana").expect("items");
    let retest = all_pkg_items
        .iter()
        .find(|i| i.purpose == Purpose::Retest)
        .expect("a retest item");
    let crits = criteria(&pkg);
    pkg.write(|tx| {
        for c in &crits {
            tx.set_rating(&RatingInput {
                rater_id: ana_pkg,
                response_id: retest.response_id,
                criterion_id: *c,
                occasion: Occasion::Retest,
                value: Some(4),
                raw_value: None,
                rationale: None,
                origin: "screen",
            })?;
        }
        tx.add_flag(ana_pkg, pkg_items[3].response_id, "answer cut off")?;
        Ok::<_, concord_core::store::StoreError>(())
    })
    .expect("package work saved");
    drop(pkg);

    let report = merge_package(&mut store, &out, &pass()).expect("merged");
    assert!(
        report.conflicts.is_empty(),
        "nothing changed in the study, so no conflict: {:?}",
        report.conflicts
    );
    assert_eq!(
        report.updated, 7,
        "item 0's seven criteria were revised in the package"
    );
    assert_eq!(report.inserted, 14, "items 2 and 3 were new");
    assert_eq!(report.retest_inserted, 7, "the retest values come back");
    assert_eq!(report.flags_added, 1, "the flag comes back");
    assert_eq!(report.unchanged, 7, "item 1 was untouched");
    let ana = rater_id(&store, "Ana");
    let first_crit = criteria(&store)[0];
    let versions = store
        .rating_versions(ana, before_export_items[0].response_id, first_crit)
        .expect("versions");
    assert_eq!(
        versions.iter().map(|v| v.value).collect::<Vec<_>>(),
        vec![Some(5), Some(4), Some(3)],
        "the revision made in the package lands on top of the full history"
    );
    let versions = store
        .rating_versions(ana, before_export_items[2].response_id, first_crit)
        .expect("versions");
    assert_eq!(
        versions.iter().map(|v| v.value).collect::<Vec<_>>(),
        vec![Some(2), Some(1)],
        "a new rating revised in the package brings its history"
    );
    drop(store);

    let before = fingerprint(&main);
    let mut store = Store::open(&main, clock()).expect("reopens");
    let again = merge_package(&mut store, &out, &pass()).expect("merged again");
    assert!(
        !again.changed(),
        "a second merge of the same package writes nothing: {again:?}"
    );
    assert_eq!(
        again.unchanged, 35,
        "every rating is recognised as already merged"
    );
    assert_eq!(
        store.kept_count_differences().expect("recount"),
        Vec::new(),
        "merged ratings and revisions keep the rating counts the overview reads"
    );
    drop(store);
    assert_eq!(
        fingerprint(&main),
        before,
        "the study is byte-for-byte the same in content after the second merge"
    );
}

#[test]
fn a_rating_changed_on_both_sides_is_a_conflict_and_the_study_keeps_its_value() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = setup(dir.path());
    let out = dir.path().join("ana.concord");
    package::export_package(&mut store, "Ana", &out, 9, &pass()).expect("exported");
    let items = first_showings(&store, "Ana");
    let ana = rater_id(&store, "Ana");
    // In the study: item 1 becomes 3 (was 2); item 4 gets a fresh rating 5.
    rate_all(&mut store, ana, items[1].response_id, 3, None);
    rate_all(&mut store, ana, items[4].response_id, 5, None);
    let mut pkg = Store::open_with(&out, later_clock(), Some(&pass())).expect("package opens");
    let ana_pkg = rater_id(&pkg, "Ana");
    let pkg_items = first_showings(&pkg, "Ana");
    rate_all(
        &mut pkg,
        ana_pkg,
        pkg_items[1].response_id,
        1,
        Some("on reflection"),
    );
    rate_all(&mut pkg, ana_pkg, pkg_items[4].response_id, 5, None);
    rate_all(&mut pkg, ana_pkg, pkg_items[5].response_id, 2, None);
    drop(pkg);

    let report = merge_package(&mut store, &out, &pass()).expect("merge runs");
    assert_eq!(
        report.conflicts.len(),
        7,
        "item 1's seven criteria changed on both sides"
    );
    let c = &report.conflicts[0];
    assert_eq!(
        (c.base, c.study, c.package, c.occasion),
        (Some(2), Some(3), Some(1), Occasion::First),
        "the conflict shows base, study and package values"
    );
    assert!(
        ["original", "claude", "gpt4o", "qwen_3"].contains(&c.source.as_str()),
        "the lead sees the real source key, not the package code: {}",
        c.source
    );
    assert_eq!(report.inserted, 7, "item 5 is new and merges");
    assert_eq!(
        report.unchanged, 14,
        "item 0 untouched, item 4 set to the same value on both sides is no conflict"
    );
    let crit = criteria(&store)[0];
    assert_eq!(
        store
            .rating_value(ana, items[1].response_id, crit)
            .expect("value"),
        Some((Some(3), None)),
        "the study keeps its own value when both changed"
    );
    let again = merge_package(&mut store, &out, &pass()).expect("merge again");
    assert_eq!(
        again.conflicts.len(),
        7,
        "the conflicts are reported again, never resolved silently"
    );
    assert!(!again.changed(), "and nothing more is written");
}

#[test]
fn foreign_or_plain_study_files_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = setup(dir.path());
    let other_dir = tempfile::tempdir().expect("temp dir");
    let mut other = setup(other_dir.path());
    let foreign = other_dir.path().join("ana.concord");
    package::export_package(&mut other, "Ana", &foreign, 5, &pass()).expect("exported");
    let err = merge_package(&mut store, &foreign, &pass()).expect_err("not from this study");
    assert!(
        matches!(err, PackageError::NotIssuedHere { .. }),
        "a package from another study is refused: {err}"
    );
    let plain = dir.path().join("plain.concord");
    drop(file_study(&plain, 1, &["Ana"]));
    let err = merge_package(&mut store, &plain, &pass()).expect_err("a plain study");
    assert!(
        matches!(err, PackageError::NotSealed { .. }),
        "a study that is not a (sealed) package is refused: {err}"
    );
    let err = package::export_package(
        &mut store,
        "gpt-4o-judge",
        &dir.path().join("j.concord"),
        1,
        &pass(),
    )
    .expect_err("judges get no package");
    assert!(
        matches!(err, PackageError::NotAnExpert(_)),
        "judges get no package: {err}"
    );
    let err =
        package::export_package(&mut store, "Ana", &plain, 1, &pass()).expect_err("file exists");
    assert!(
        matches!(err, PackageError::Store(_)),
        "an existing file is never overwritten: {err}"
    );
}

#[test]
fn a_signature_made_in_the_package_is_recorded_by_the_merge_and_checked_in_the_study() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = setup(dir.path());
    // Ana's signing passphrase is set in the lead's study (the study verifies her signatures with
    // it); her package carries only its check value.
    concord_core::workflow::signoff::set_passphrase(
        &mut store,
        "Ana",
        None,
        "ana signs here",
        3,
        1000,
    )
    .expect("signing passphrase set in the study");
    let out = dir.path().join("ana.concord");
    package::export_package(&mut store, "Ana", &out, 5, &pass()).expect("exported");

    // Ana rates one more item in her package and signs it off before returning it.
    let mut pkg = Store::open_with(&out, later_clock(), Some(&pass())).expect("package opens");
    let ana_pkg = rater_id(&pkg, "Ana");
    let pkg_items = first_showings(&pkg, "Ana");
    rate_all(&mut pkg, ana_pkg, pkg_items[2].response_id, 2, None);
    let signed =
        concord_core::workflow::signoff::sign_assignment(&mut pkg, "Ana", "ana signs here")
            .expect("signed in the package");
    drop(pkg);

    let report = merge_package(&mut store, &out, &pass()).expect("merged");
    assert_eq!(
        (report.inserted, report.signatures_added),
        (7, 1),
        "the new item's ratings and the signature come back"
    );
    let standing = concord_core::workflow::signoff::signatures(&store).expect("signatures");
    assert_eq!(
        standing.len(),
        1,
        "the study records the package's signature"
    );
    let s = &standing[0];
    assert_eq!(
        (
            s.signature.signer.as_str(),
            s.signature.signed_at,
            s.signature.ratings,
            s.matches
        ),
        (
            "Ana",
            signed.signature.signed_at,
            signed.signature.ratings,
            true
        ),
        "signer, time and count are the package's, and the study's ratings match what was signed"
    );
    assert!(
        s.signature.scope.starts_with("package "),
        "the scope says it came with a package: {}",
        s.signature.scope
    );
    let log = concord_core::guard::audit::log(&store, &Default::default()).expect("log");
    assert!(
        log.iter().any(|e| e.entry.action == "signoff.merge"
            && e.entry.detail["matched_in_package"] == serde_json::json!(true)),
        "the merge of the signature is in the audit trail"
    );
    assert_eq!(
        concord_core::guard::audit::verify(&store)
            .expect("verify")
            .broken,
        None,
        "the merged signature is sealed into an intact chain"
    );

    let again = merge_package(&mut store, &out, &pass()).expect("merged again");
    assert_eq!(
        again.signatures_added, 0,
        "a second merge records the signature once"
    );

    // The merged signature locks the study's copies: a change needs a reason and shows. The
    // lead works on after Ana's day with the package.
    drop(store);
    let mut store = Store::open(
        &dir.path().join("main.concord"),
        std::sync::Arc::new(concord_core::base::clock::SteppingClock::new(
            1_700_200_000_000,
            1,
        )),
    )
    .expect("reopens");
    let ana = rater_id(&store, "Ana");
    let first_crit = criteria(&store)[0];
    let item = first_showings(&store, "Ana")[2].response_id;
    let input = RatingInput {
        rater_id: ana,
        response_id: item,
        criterion_id: first_crit,
        occasion: Occasion::First,
        value: Some(5),
        raw_value: None,
        rationale: None,
        origin: "screen",
    };
    assert!(
        store.write(|tx| tx.set_rating(&input)).is_err(),
        "a signed rating merged from a package is locked in the study"
    );
    store
        .write(|tx| tx.set_rating_with_reason(&input, "lead corrected a typo with Ana"))
        .expect("changed with a reason");
    let standing = concord_core::workflow::signoff::signatures(&store).expect("signatures");
    assert_eq!(
        (standing[0].matches, standing[0].changed_after_signature),
        (false, 1),
        "the study shows the signature no longer matches, one rating changed after it"
    );
}
