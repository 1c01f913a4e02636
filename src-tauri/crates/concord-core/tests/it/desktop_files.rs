//! What the desktop app does with files outside the study's own screens: backups taken with the
//! online backup API (each a sound study with the same ratings, the newest ten kept, restored to a
//! new file only), the expert's "Return ratings" copy (a single file the lead can merge even while
//! the package still has a write-ahead log; a later copy names the earlier ones it supersedes), the recent-studies list, and what a dropped file is for.
//! An encrypted study's backups are encrypted with its passphrase: useless without it, whole with it.

use concord_testsupport::lead_study;

use concord_core::app::backup;
use concord_core::app::file_role::classify;
use concord_core::app::file_role::FileRole;
use concord_core::app::import::ImportFormat;
use concord_core::app::open_study::OpenStudy;
use concord_core::app::recent::RecentStudies;
use concord_core::app::recent::RECENT_MAX;
use concord_core::store::{integrity_problems, Passphrase, Store, StoreError};
use concord_core::workflow::assignment;
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::package;
use concord_core::workflow::package::merge_package;
use lead_study::*;
use std::path::Path;

const PASS: &str = "correct horse battery staple";

fn pass() -> Passphrase {
    Passphrase::new(PASS).expect("a passphrase")
}

fn ratings(path: &Path) -> i64 {
    keyed_ratings(path, None)
}

/// The number of ratings in the study file at `path`, opened with `key` when it is encrypted.
fn keyed_ratings(path: &Path, key: Option<&str>) -> i64 {
    let conn = rusqlite::Connection::open(path).expect("opens");
    if let Some(key) = key {
        conn.pragma_update(None, "key", key).expect("keyed");
    }
    conn.query_row("SELECT COUNT(*) FROM rating", [], |r| r.get(0))
        .expect("counted")
}

#[test]
fn a_backup_is_a_sound_study_and_only_the_newest_ten_stay() {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = dir.path().join("main.concord");
    let mut store = file_study(&study, 6, &["Ana", "Boris"]);
    let ana = rater_id(&store, "Ana");
    rate_all(&mut store, ana, 1, 4, Some("kept in the backup"));
    let root = dir.path().join("backups");
    let first = backup::take(&store, &root, 1_764_518_712_123, backup::KEEP).expect("backed up");
    assert_eq!(
        first.taken, "2025-11-30T16:05:12.123Z",
        "the backup is named by the moment passed in"
    );
    let copy = Path::new(&first.path);
    assert!(
        integrity_problems(copy, None)
            .expect("checkable")
            .is_empty(),
        "a backup passes PRAGMA integrity_check"
    );
    assert!(
        !Path::new(&format!("{}-wal", first.path)).exists(),
        "a backup is one file with no log beside it"
    );
    assert_eq!(
        ratings(copy),
        ratings(&study),
        "the backup holds every rating, including those still in the study's log"
    );
    Store::open(copy, clock()).expect("a backup opens as a study");

    for i in 1..15 {
        rate_all(&mut store, ana, 2, 1 + i % 5, None);
        backup::take(&store, &root, 1_764_518_712_123 + i * 60_000, backup::KEEP)
            .expect("backed up");
    }
    let kept = backup::list(&root, &study).expect("listed");
    assert_eq!(kept.len(), backup::KEEP, "only the newest ten are kept");
    assert!(
        kept.windows(2).all(|w| w[0].taken > w[1].taken),
        "newest first: {:?}",
        kept.iter().map(|k| &k.taken).collect::<Vec<_>>()
    );
    assert!(
        !copy.exists(),
        "the oldest backup was deleted when the eleventh newer one arrived"
    );

    let restored = dir.path().join("restored.concord");
    backup::restore(Path::new(&kept[0].path), &restored, None).expect("restored");
    assert_eq!(
        ratings(&restored),
        ratings(&study),
        "the newest backup restores the current ratings"
    );
    let again = backup::restore(Path::new(&kept[0].path), &restored, None);
    assert!(
        again.is_err(),
        "restoring never overwrites an existing file"
    );
    assert!(
        store.copy_to(&study, true).is_err(),
        "a copy never replaces the open study itself"
    );
}

#[test]
fn a_damaged_backup_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = dir.path().join("main.concord");
    let store = file_study(&study, 30, &["Ana"]);
    let entry = backup::take(&store, &dir.path().join("b"), 1_000, backup::KEEP).expect("taken");
    // Overwrite a page in the middle of the copy (not the header): the file still looks like a
    // study, but its b-trees are broken.
    let mut bytes = std::fs::read(&entry.path).expect("read");
    assert!(bytes.len() > 4096 * 4, "the copy has several pages");
    let page = 4096 * 2;
    for b in &mut bytes[page..page + 4096] {
        *b = 0xA5;
    }
    std::fs::write(&entry.path, bytes).expect("damaged");
    let problems =
        integrity_problems(Path::new(&entry.path), None).unwrap_or_else(|e| vec![e.to_string()]);
    assert!(!problems.is_empty(), "a damaged page is found");
    let err = backup::restore(Path::new(&entry.path), &dir.path().join("r.concord"), None)
        .expect_err("a damaged backup is not restored");
    assert!(
        err.to_string().contains("backup-"),
        "the refusal names the backup it refused: {err}"
    );
    assert!(
        !dir.path().join("r.concord").exists(),
        "nothing is written when the backup is refused"
    );
}

#[test]
fn an_expert_returns_ratings_the_lead_can_merge_and_files_are_routed_by_kind() {
    let dir = tempfile::tempdir().expect("temp dir");
    let main_path = dir.path().join("main.concord");
    let mut main = file_study(&main_path, 8, &["Ana", "Boris"]);
    assignment::assign(&mut main, &AssignmentOptions::new(2, 3)).expect("assigned");
    let pkg_path = dir.path().join("ana.concord");
    package::export_package(&mut main, "Ana", &pkg_path, 9, &pass()).expect("exported");
    let items = assignment::expert_items(&main, "Ana").expect("items").len() as i64;

    assert_eq!(
        classify(&pkg_path, Some(&main)),
        FileRole::Encrypted { lead_study: true },
        "a sealed package is encrypted; handed to the study that issued packages, it is to merge"
    );
    assert_eq!(
        classify(&pkg_path, None),
        FileRole::Encrypted { lead_study: false },
        "with no study open it opens behind the unlock screen"
    );
    assert_eq!(
        classify(&main_path, None),
        FileRole::Study,
        "a study is a study"
    );
    assert_eq!(
        classify(dir.path(), None),
        FileRole::Dataset {
            format: Some(ImportFormat::Mentalalign)
        },
        "a folder is the MentalAlign layout"
    );
    let csv = dir.path().join("items.csv");
    std::fs::write(&csv, "a,b\n1,2\n").expect("written");
    assert_eq!(
        classify(&csv, None),
        FileRole::Dataset { format: None },
        "a CSV goes to the import step"
    );
    let junk = dir.path().join("notes.concord");
    std::fs::write(&junk, "not sqlite").expect("written");
    assert!(
        matches!(classify(&junk, None), FileRole::Unknown { .. }),
        "a file that only has the extension is refused"
    );

    // The expert opens the package a minute after it was issued (the merge refuses values dated
    // before issue) and rates; the values sit in its write-ahead log.
    let expert_clock = std::sync::Arc::new(concord_core::base::clock::SteppingClock::new(
        1_700_000_060_000,
        1,
    ));
    let mut pkg = OpenStudy::new(
        Store::open_with(&pkg_path, expert_clock, Some(&pass())).expect("package opens"),
    );
    let who = concord_core::app::expert::package_identity(&pkg)
        .expect("read")
        .expect("a package");
    assert_eq!(who.rater, "Ana", "the package names its expert");
    assert_eq!(who.items, items, "and how many items it holds");
    let queue = concord_core::app::rating::open_queue(&mut pkg, who.rater_id).expect("queue");
    assert_eq!(queue.total, who.items, "the queue is the package's items");
    let first =
        concord_core::workflow::queue::rating_item(pkg.store(), who.rater_id, 1).expect("item 1");
    pkg.rate(who.rater_id, 1, &first.criteria[0].key, 4, None)
        .expect("rated");
    let out = dir.path().join("ana-returned.concord");
    assert_eq!(
        concord_core::app::expert::default_return_path(&pkg).expect("suggested"),
        out,
        "the suggested file sits beside the package"
    );
    let written =
        concord_core::app::expert::return_ratings(&pkg, &out.display().to_string(), false)
            .expect("returned");
    assert!(
        integrity_problems(&written, Some(&pass()))
            .expect("checkable")
            .is_empty(),
        "the returned file is sound"
    );
    assert!(
        matches!(
            Store::open(&written, clock()),
            Err(StoreError::PassphraseNeeded { .. })
        ),
        "the returned file is encrypted like the package it copies"
    );
    let report =
        merge_package(&mut main, &written, &pass()).expect("the lead merges the returned file");
    assert_eq!(report.inserted, 1, "the expert's one rating comes back");
    // A second Return ratings (the next day, say) suggests a numbered name beside the first copy
    // and says that this one is the file to send, the first being older.
    let second = concord_core::app::expert::default_return_path(&pkg).expect("suggested");
    assert_eq!(
        second,
        dir.path().join("ana-returned-2.concord"),
        "the first copy is not overwritten unasked"
    );
    let copy =
        concord_core::app::expert::return_ratings_copy(&pkg, &second.display().to_string(), false)
            .expect("returned again");
    assert_eq!(
        (copy.path, copy.superseded),
        (second, vec![out.clone()]),
        "the second copy is the one to send, and the first is named as older"
    );
    assert!(
        concord_core::app::expert::return_ratings(&pkg, "relative.concord", false).is_err(),
        "a typed path must be absolute"
    );
    let not_pkg = OpenStudy::new(main);
    assert!(
        concord_core::app::expert::return_ratings(
            &not_pkg,
            &dir.path().join("x.concord").display().to_string(),
            false
        )
        .is_err(),
        "a study that is not a package has no ratings to return"
    );
}

#[test]
fn an_encrypted_studys_backup_needs_its_passphrase_and_is_whole_with_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = dir.path().join("secret.concord");
    let mut store = Store::create_with(&study, clock(), Some(&pass())).expect("created encrypted");
    populate(&mut store, 6, &["Ana"]);
    let ana = rater_id(&store, "Ana");
    rate_all(
        &mut store,
        ana,
        1,
        3,
        Some("a rationale that must not leak"),
    );
    let entry = backup::take(&store, &dir.path().join("b"), 5_000, backup::KEEP).expect("taken");
    let copy = Path::new(&entry.path);

    let bytes = std::fs::read(copy).expect("read");
    assert!(
        !bytes.starts_with(b"SQLite format 3"),
        "the backup has no plain SQLite header: it is encrypted"
    );
    assert!(
        !bytes
            .windows(b"must not leak".len())
            .any(|w| w == b"must not leak"),
        "no rationale is readable in the backup's bytes"
    );
    assert!(
        matches!(
            Store::open(copy, clock()),
            Err(StoreError::PassphraseNeeded { .. })
        ),
        "without the passphrase the backup does not open"
    );
    assert!(
        matches!(
            integrity_problems(copy, None),
            Err(StoreError::PassphraseNeeded { .. })
        ),
        "nor can it be checked"
    );
    let wrong = Passphrase::new("not the passphrase at all").expect("a passphrase");
    assert!(
        matches!(
            Store::open_with(copy, clock(), Some(&wrong)),
            Err(StoreError::WrongPassphrase { .. })
        ),
        "a wrong passphrase is refused"
    );
    assert!(
        integrity_problems(copy, Some(&pass()))
            .expect("checkable with the passphrase")
            .is_empty(),
        "with its passphrase the backup passes PRAGMA integrity_check"
    );
    Store::open_with(copy, clock(), Some(&pass())).expect("with its passphrase it opens");
    assert_eq!(
        keyed_ratings(copy, Some(PASS)),
        keyed_ratings(&study, Some(PASS)),
        "the backup holds every rating of the study"
    );

    let restored = dir.path().join("restored.concord");
    let refused = backup::restore(copy, &restored, None).expect_err("needs the passphrase");
    assert!(
        matches!(refused, StoreError::PassphraseNeeded { .. }),
        "an encrypted backup is not restored without its passphrase: {refused}"
    );
    assert!(!restored.exists(), "nothing is written when it is refused");
    backup::restore(copy, &restored, Some(&pass())).expect("restored with the passphrase");
    assert!(
        matches!(
            Store::open(&restored, clock()),
            Err(StoreError::PassphraseNeeded { .. })
        ),
        "the restored study stays encrypted"
    );
    Store::open_with(&restored, clock(), Some(&pass())).expect("and opens with the passphrase");
}

#[test]
fn recent_studies_put_the_latest_first_once_and_keep_ten() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list_file = dir.path().join("config").join("recent.json");
    let mut recent = RecentStudies::load(&list_file);
    assert!(recent.existing().is_empty(), "no list yet: empty");
    let studies: Vec<_> = (0..12)
        .map(|i| {
            let p = dir.path().join(format!("s{i}.concord"));
            std::fs::write(&p, b"x").expect("placeholder");
            p
        })
        .collect();
    for (i, p) in studies.iter().enumerate() {
        recent
            .remember(p, &format!("S{i}"), i as i64)
            .expect("saved");
    }
    recent.remember(&studies[5], "S5", 100).expect("saved");
    let again = RecentStudies::load(&list_file).existing();
    assert_eq!(again.len(), RECENT_MAX, "at most ten are kept");
    assert_eq!(again[0].title, "S5", "the study opened last comes first");
    assert_eq!(
        again.iter().filter(|r| r.title == "S5").count(),
        1,
        "a study appears once"
    );
    std::fs::remove_file(&studies[5]).expect("removed");
    assert_ne!(
        RecentStudies::load(&list_file).existing()[0].title,
        "S5",
        "a study whose file is gone is left out"
    );
    std::fs::write(&list_file, "{not json").expect("garbled");
    assert!(
        RecentStudies::load(&list_file).existing().is_empty(),
        "a garbled list is simply empty"
    );
}
