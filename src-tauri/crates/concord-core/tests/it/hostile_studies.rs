//! Study files and rater packages from outside are SQLite databases someone else wrote. Each kind
//! of hostile file — an extra trigger, an extra view, a forged `application_id`, a newer schema, a
//! truncated file, a package of another study — is refused with its own message, the file itself is
//! not changed by the attempt (its bytes are compared), and a refused merge leaves the study as it
//! was (its overview is compared). Packages are encrypted, so the hostile author here is one who
//! has the package passphrase.

use concord_testsupport::lead_study;

use concord_core::store::{Passphrase, Store, StoreError, APPLICATION_ID, SCHEMA_VERSION};
use concord_core::workflow::assignment;
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::package;
use concord_core::workflow::package::merge_package;
use concord_core::workflow::package::PackageError;
use lead_study::*;
use std::path::{Path, PathBuf};

const PACKAGE_PASS: &str = "hostile test package";

fn pass() -> Passphrase {
    Passphrase::new(PACKAGE_PASS).expect("passphrase")
}

/// A study with an assignment, and a package for Ana written from it.
fn study_and_package(dir: &Path) -> (Store, PathBuf) {
    study_of(dir, 6)
}

fn study_of(dir: &Path, conversations: usize) -> (Store, PathBuf) {
    let mut store = file_study(&dir.join("main.concord"), conversations, &["Ana", "Boris"]);
    assignment::assign(&mut store, &AssignmentOptions::new(2, 11)).expect("assigned");
    let out = dir.join("ana.concord");
    package::export_package(&mut store, "Ana", &out, 5, &pass()).expect("exported");
    (store, out)
}

/// Change a closed study file with plain SQLite (as a hostile author would; a package with its
/// passphrase).
fn tamper(path: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(path).expect("the file opens in plain SQLite");
    let plain = std::fs::read(path)
        .map(|b| b.is_empty() || b.starts_with(b"SQLite format 3\0"))
        .unwrap_or(true);
    if !plain {
        conn.pragma_update(None, "key", PACKAGE_PASS)
            .expect("keyed");
    }
    conn.execute_batch(sql).expect("tampering SQL runs");
    // Fold the WAL back so the file on disk is the whole story.
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .expect("checkpoint");
}

/// Opening `path` must fail with `check`, leave its bytes as they were, and say `words`.
fn open_refused(path: &Path, words: &str, check: impl Fn(&StoreError) -> bool) {
    let before = std::fs::read(path).expect("read the file");
    let err = Store::open_with(path, clock(), Some(&pass()))
        .expect_err("the hostile file must be refused");
    assert!(check(&err), "the refusal is of the right kind: {err:?}");
    assert!(
        err.to_string().contains(words),
        "the message says {words:?}: {err}"
    );
    assert_eq!(
        std::fs::read(path).expect("read the file again"),
        before,
        "a refused file is not changed"
    );
}

/// Merging `package` into `study` must fail with `check` and change neither.
fn merge_refused(study: &mut Store, package: &Path, check: impl Fn(&PackageError) -> bool) {
    let overview = study.overview().expect("overview");
    let bytes = std::fs::read(package).expect("read the package");
    let err =
        merge_package(study, package, &pass()).expect_err("the hostile package must be refused");
    assert!(check(&err), "the refusal is of the right kind: {err:?}");
    assert_eq!(
        study.overview().expect("overview"),
        overview,
        "a refused merge leaves the study as it was"
    );
    assert_eq!(
        std::fs::read(package).expect("read the package again"),
        bytes,
        "a refused package is not changed"
    );
}

fn is_store(err: &PackageError, check: impl Fn(&StoreError) -> bool) -> bool {
    matches!(err, PackageError::Store(e) if check(e))
}

#[test]
fn an_extra_trigger_is_refused_before_it_can_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut study, pkg) = study_and_package(dir.path());
    tamper(
        &pkg,
        "CREATE TABLE loot(x); CREATE TRIGGER steal AFTER INSERT ON rating BEGIN INSERT INTO loot VALUES (new.value); END;",
    );
    merge_refused(&mut study, &pkg, |e| {
        is_store(e, |s| matches!(s, StoreError::UnexpectedObject { .. }))
    });
    open_refused(&pkg, "Concord never creates", |e| {
        matches!(e, StoreError::UnexpectedObject { .. })
    });
    // A trigger added beside the study's own tables is refused just the same.
    let other = dir.path().join("other.concord");
    drop(file_study(&other, 1, &["Ana"]));
    tamper(
        &other,
        "CREATE TRIGGER wipe AFTER INSERT ON rating BEGIN DELETE FROM conversation; END;",
    );
    open_refused(
        &other,
        "trigger “wipe”",
        |e| matches!(e, StoreError::UnexpectedObject { kind, .. } if kind == "trigger"),
    );
}

#[test]
fn an_extra_view_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut study, pkg) = study_and_package(dir.path());
    tamper(&pkg, "CREATE VIEW peek AS SELECT * FROM rating;");
    merge_refused(&mut study, &pkg, |e| {
        is_store(
            e,
            |s| matches!(s, StoreError::UnexpectedObject { kind, .. } if kind == "view"),
        )
    });
    open_refused(&pkg, "view “peek”", |e| {
        matches!(e, StoreError::UnexpectedObject { .. })
    });
}

#[test]
fn a_forged_application_id_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let forged = dir.path().join("forged.concord");
    tamper(
        &forged,
        &format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION}; CREATE TABLE rating(x);"
        ),
    );
    open_refused(&forged, "not a Concord study", |e| {
        matches!(e, StoreError::ForeignSchema { .. })
    });
    // A table of Concord's name with a different definition is no better.
    let (mut study, pkg) = study_and_package(dir.path());
    tamper(
        &pkg,
        "DROP TABLE study_meta; CREATE TABLE study_meta(key, value);",
    );
    merge_refused(&mut study, &pkg, |e| {
        is_store(e, |s| matches!(s, StoreError::ForeignSchema { .. }))
    });
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut study, pkg) = study_and_package(dir.path());
    tamper(
        &pkg,
        &format!("PRAGMA user_version = {};", SCHEMA_VERSION + 1),
    );
    merge_refused(&mut study, &pkg, |e| {
        is_store(e, |s| matches!(s, StoreError::NewerSchema { .. }))
    });
    open_refused(&pkg, "newer Concord", |e| {
        matches!(e, StoreError::NewerSchema { .. })
    });
}

#[test]
fn a_truncated_file_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut study, pkg) = study_and_package(dir.path());
    // Fold the package's WAL into the file, then cut the file in half.
    tamper(&pkg, "SELECT 1;");
    let bytes = std::fs::read(&pkg).expect("read the package");
    assert!(bytes.len() > 8192, "the package spans several pages");
    std::fs::write(&pkg, &bytes[..bytes.len() / 2]).expect("truncate");
    // An encrypted package cut short either records more pages than it has, or its schema pages
    // are gone and fail their authentication: both say "truncated".
    let cut =
        |s: &StoreError| matches!(s, StoreError::Truncated { .. } | StoreError::Damaged { .. });
    // The merge names the package as damaged, never a raw SQLite error.
    merge_refused(&mut study, &pkg, |e| {
        is_store(e, cut)
            || matches!(e, PackageError::Damaged { file, .. } if file.contains(".concord"))
    });
    open_refused(&pkg, "truncated", cut);
    // A plain study cut inside its 100-byte header (an encrypted file that short is not told
    // apart from any other short file).
    drop(study);
    let main = dir.path().join("main.concord");
    tamper(&main, "SELECT 1;");
    let bytes = std::fs::read(&main).expect("read the study");
    std::fs::write(&main, &bytes[..60]).expect("truncate within the header");
    open_refused(&main, "truncated", |e| {
        matches!(e, StoreError::Truncated { .. })
    });
}

#[test]
fn a_package_of_another_study_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut study, _) = study_and_package(dir.path());
    let other_dir = tempfile::tempdir().expect("temp dir");
    // Another study, exported with the same seed: its package must not pass for this one's.
    let (_, foreign) = study_of(other_dir.path(), 7);
    merge_refused(&mut study, &foreign, |e| {
        matches!(e, PackageError::NotIssuedHere { .. })
    });
}

#[test]
fn genuine_studies_and_packages_pass_the_schema_check() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (study, pkg) = study_and_package(dir.path());
    drop(study);
    Store::open_with(&pkg, clock(), Some(&pass())).expect("a genuine package opens");
    Store::open(&dir.path().join("main.concord"), clock()).expect("a genuine study opens");
}

/// The size of the pages of an encrypted Concord file (SQLCipher's default).
const PAGE: usize = 4096;

/// A copy of `source` at `dest` with one bit flipped in the middle of page `page`.
fn flipped(source: &Path, dest: &Path, page: usize) {
    let mut bytes = std::fs::read(source).expect("read");
    let at = page * PAGE + PAGE / 2;
    bytes[at] ^= 0x10;
    std::fs::write(dest, bytes).expect("write the damaged copy");
}

#[test]
fn a_package_with_one_flipped_bit_anywhere_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut study, pkg) = study_and_package(dir.path());
    tamper(&pkg, "SELECT 1;");
    let pages = std::fs::metadata(&pkg).expect("size").len() as usize / PAGE;
    assert!(pages > 4, "the package spans several pages ({pages})");
    let overview = study.overview().expect("overview");
    for page in 0..pages {
        let damaged = dir.path().join(format!("ana-{page}.concord"));
        flipped(&pkg, &damaged, page);
        let err = merge_package(&mut study, &damaged, &pass())
            .expect_err("a package with a flipped bit must not merge");
        let raw = matches!(&err, PackageError::Store(StoreError::Sqlite(_)));
        assert!(
            !raw,
            "page {page}: a damaged package is refused in words, not as a raw SQLite error: {err}"
        );
        assert!(
            err.to_string().contains(&format!("ana-{page}.concord")),
            "page {page}: the refusal names the file: {err}"
        );
    }
    assert_eq!(
        study.overview().expect("overview"),
        overview,
        "no damaged package changed the study"
    );
}

#[test]
fn an_encrypted_study_with_one_flipped_bit_anywhere_is_not_called_intact() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("enc.concord");
    let key = pass();
    let mut store = Store::create_with(&path, clock(), Some(&key)).expect("created");
    populate(&mut store, 6, &["Ana", "Boris"]);
    store.close().expect("closed whole");
    let pages = std::fs::metadata(&path).expect("size").len() as usize / PAGE;
    assert!(pages > 4, "the study spans several pages ({pages})");
    for page in 0..pages {
        let damaged = dir.path().join(format!("enc-{page}.concord"));
        flipped(&path, &damaged, page);
        let verdict = Store::open_read_only(&damaged, clock(), Some(&key))
            .map(|s| s.verify_audit_chain().expect("verify runs").broken);
        match verdict {
            Ok(broken) => assert!(
                broken
                    .as_ref()
                    .is_some_and(|b| b.message.contains("damaged")),
                "page {page}: verify finds the flipped bit and says the file is damaged: {broken:?}"
            ),
            Err(e) => assert!(
                !matches!(e, StoreError::Sqlite(_)),
                "page {page}: a study too damaged to open is refused in words: {e}"
            ),
        }
    }
}
