//! Encrypted studies: no clinical text in the bytes of the study file, its WAL and shared memory,
//! or any other file Concord writes beside it (after imports, ratings and package work); a
//! missing or wrong passphrase is refused with the file unchanged; encrypting, decrypting and
//! re-keying keep the study whole (content, history, triggers) and leave no stray files; a study
//! open elsewhere is not converted; a conversion file left by a crash changes nothing.

use concord_testsupport::lead_study;

use concord_core::intake::long;
use concord_core::intake::long::ItemColumns;
use concord_core::intake::long::RatingColumns;
use concord_core::intake::ImportOptions;
use concord_core::store::{
    decrypt_study, encrypt_study, inspect, rekey_study, Passphrase, Store, StoreError,
};
use concord_core::workflow::package;
use lead_study::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const PASS: &str = "a long study passphrase";
const EXPERT: &str = "Ana Pereira-Lindqvist";
const RATIONALE: &str = "the answer minimises her grief";
const IMPORTED_CONTEXT: &str = "my sister stopped answering my calls";
const IMPORTED_ANSWER: &str = "that silence sounds frightening";
const IMPORTED_RATIONALE: &str = "names the fear without judging";

/// Texts that must never appear in the bytes of an encrypted study's files.
const KNOWN_TEXTS: [&str; 8] = [
    "feeling low for weeks",
    "to conversation",
    EXPERT,
    RATIONALE,
    IMPORTED_CONTEXT,
    IMPORTED_ANSWER,
    IMPORTED_RATIONALE,
    "Human original",
];

fn pass() -> Passphrase {
    Passphrase::new(PASS).expect("a passphrase")
}

/// Every file in `dir` with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).expect("bytes");
            (p, bytes)
        })
        .collect()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// The known texts found in any file of `dir`, as (file, text).
fn texts_on_disk(dir: &Path) -> Vec<(String, &'static str)> {
    let mut found = Vec::new();
    for (path, bytes) in files(dir) {
        for text in KNOWN_TEXTS {
            if contains(&bytes, text) {
                found.push((path.display().to_string(), text));
            }
        }
    }
    found
}

/// Import a small long-form items file and its expert ratings (the CSVs live elsewhere: they are
/// the user's input, not files Concord writes).
fn import_long(store: &mut Store, inputs: &Path) {
    let items = inputs.join("items.csv");
    std::fs::write(
        &items,
        format!(
            "conversation_id,context,response_id,source,text\nx1,{IMPORTED_CONTEXT},x1-a,original,{IMPORTED_ANSWER}\n"
        ),
    )
    .expect("items written");
    long::import_items(
        store,
        &items,
        "mentalbench",
        &ItemColumns::default(),
        None,
        &ImportOptions::default(),
    )
    .expect("items imported");
    let ratings = inputs.join("ratings.csv");
    std::fs::write(
        &ratings,
        format!(
            "item,rater,criterion,score,rationale\nx1-a,{EXPERT},empathy,4,{IMPORTED_RATIONALE}\n"
        ),
    )
    .expect("ratings written");
    long::import_ratings(
        store,
        &ratings,
        "mentalbench",
        &RatingColumns::default(),
        None,
        &ImportOptions::default(),
    )
    .expect("ratings imported");
}

/// Build a study at `path` (encrypted with `key` when given): conversations, an import, ratings
/// with a rationale, an assignment and a sealed package written beside it. Returns the store
/// still open, so its WAL is in use.
fn working_study(path: &Path, inputs: &Path, key: Option<&Passphrase>) -> Store {
    let mut store = Store::create_with(path, clock(), key).expect("study created");
    populate(&mut store, 9, &[EXPERT, "Boris"]);
    import_long(&mut store, inputs);
    let expert = rater_id(&store, EXPERT);
    for response in 1..=6 {
        rate_all(&mut store, expert, response, 3, Some(RATIONALE));
    }
    let options = concord_core::workflow::assignment::AssignmentOptions::new(2, 5);
    concord_core::workflow::assignment::assign(&mut store, &options).expect("assigned");
    let package_pass = Passphrase::new("package passphrase").expect("passphrase");
    package::export_package(
        &mut store,
        EXPERT,
        &path.with_file_name("package.concord"),
        3,
        &package_pass,
    )
    .expect("package written");
    store
}

#[test]
fn an_encrypted_study_its_wal_and_its_package_hold_no_clinical_text() {
    let inputs = tempfile::tempdir().expect("inputs dir");
    // Control: the same work in a plain study leaves the texts readable, so the search below can
    // find them when they are there.
    let plain_dir = tempfile::tempdir().expect("dir");
    let plain = working_study(&plain_dir.path().join("plain.concord"), inputs.path(), None);
    let found = texts_on_disk(plain_dir.path());
    assert!(
        found.iter().any(|(_, t)| *t == RATIONALE) && found.iter().any(|(_, t)| *t == EXPERT),
        "a plain study shows its rationale and rater name on disk (control): {found:?}"
    );
    drop(plain);

    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("secret.concord");
    let store = working_study(&path, inputs.path(), Some(&pass()));
    assert!(store.is_encrypted(), "the study was created encrypted");
    let open_files: Vec<String> = files(dir.path())
        .keys()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        open_files.iter().any(|f| f.ends_with("-wal")),
        "the WAL is there while the study is open, so it is searched too: {open_files:?}"
    );
    assert_eq!(
        texts_on_disk(dir.path()),
        vec![],
        "no clinical text or rater name in any file while the study is open (file, WAL, shm, package)"
    );
    drop(store);
    assert_eq!(texts_on_disk(dir.path()), vec![], "nor after it was closed");
    let head = std::fs::read(&path).expect("bytes");
    assert!(
        !head.starts_with(b"SQLite format 3\0"),
        "an encrypted study has no readable SQLite header"
    );
    let names: Vec<String> = files(dir.path())
        .keys()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["package.concord".to_string(), "secret.concord".to_string()],
        "Concord left no temporary file beside the study"
    );
    let reopened = Store::open_with(&path, clock(), Some(&pass())).expect("reopens");
    let overview = reopened.overview().expect("overview");
    assert_eq!(
        overview.conversations, 10,
        "nine conversations and the imported one are all there"
    );
}

#[test]
fn a_missing_or_wrong_passphrase_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("secret.concord");
    let mut store = Store::create_with(&path, clock(), Some(&pass())).expect("created");
    populate(&mut store, 3, &[EXPERT]);
    drop(store);
    let before = files(dir.path());

    let missing = Store::open(&path, clock()).expect_err("no passphrase");
    assert!(
        matches!(missing, StoreError::PassphraseNeeded { .. }),
        "an encrypted study without a passphrase: {missing}"
    );
    assert!(
        missing.to_string().contains("passphrase"),
        "the message says a passphrase is needed: {missing}"
    );
    let wrong = Store::open_with(
        &path,
        clock(),
        Some(&Passphrase::new("not the passphrase").unwrap()),
    )
    .expect_err("wrong passphrase");
    assert!(
        matches!(wrong, StoreError::WrongPassphrase { .. }),
        "a wrong passphrase is its own error: {wrong}"
    );
    assert!(
        wrong.to_string().contains("passphrase"),
        "the message says the passphrase is wrong: {wrong}"
    );
    let inspected = inspect(&path).expect_err("inspect needs the passphrase too");
    assert!(
        matches!(inspected, StoreError::PassphraseNeeded { .. }),
        "inspect does not mistake an encrypted study for a foreign file: {inspected}"
    );
    let created = Store::create_with(&path, clock(), Some(&pass())).expect_err("exists");
    assert!(
        matches!(created, StoreError::AlreadyExists { .. }),
        "an encrypted study is never overwritten by a new one: {created}"
    );
    let rekey = rekey_study(
        &path,
        &Passphrase::new("not the passphrase").unwrap(),
        &Passphrase::new("another long one").unwrap(),
    )
    .expect_err("re-keying needs the current passphrase");
    assert!(
        matches!(rekey, StoreError::WrongPassphrase { .. }),
        "re-keying with a wrong passphrase is refused: {rekey}"
    );
    assert_eq!(
        files(dir.path()),
        before,
        "no refused attempt wrote a byte or left a file"
    );
    let text = dir.path().join("notes.concord");
    std::fs::write(&text, "just some notes").expect("written");
    let err = Store::open_with(&text, clock(), Some(&pass())).expect_err("not a study");
    assert!(
        matches!(err, StoreError::NotSqlite { .. }),
        "a short text file is still 'not SQLite', not an encrypted study: {err}"
    );
}

/// What a conversion must keep: the overview, every rating's history, and the schema objects.
fn fingerprint(store: &Store) -> String {
    let overview = store.overview().expect("overview");
    let ana = rater_id(store, EXPERT);
    let crit = criteria(store)[0];
    let history = store.rating_versions(ana, 1, crit).expect("versions");
    format!(
        "{}|{}|{}|{:?}|{:?}",
        overview.conversations,
        overview.responses,
        overview.ratings,
        overview.raters.iter().map(|r| &r.name).collect::<Vec<_>>(),
        history.iter().map(|v| v.value).collect::<Vec<_>>()
    )
}

#[test]
fn encrypt_rekey_and_decrypt_keep_the_study_whole_and_leave_no_stray_files() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("study.concord");
    let mut store = Store::create(&path, clock()).expect("created");
    populate(&mut store, 4, &[EXPERT]);
    let ana = rater_id(&store, EXPERT);
    rate_all(&mut store, ana, 1, 2, None);
    rate_all(&mut store, ana, 1, 4, Some(RATIONALE));
    let expected = fingerprint(&store);
    drop(store);
    let short = encrypt_study(&path, &Passphrase::new("short").unwrap()).expect_err("too short");
    assert!(
        matches!(short, StoreError::WeakPassphrase(_)),
        "a short new passphrase is refused: {short}"
    );

    encrypt_study(&path, &pass()).expect("encrypted");
    assert_eq!(
        texts_on_disk(dir.path()),
        vec![],
        "after encryption no text is readable"
    );
    assert!(
        matches!(
            Store::open(&path, clock()),
            Err(StoreError::PassphraseNeeded { .. })
        ),
        "the encrypted study needs its passphrase"
    );
    let store = Store::open_with(&path, clock(), Some(&pass())).expect("opens encrypted");
    assert_eq!(fingerprint(&store), expected, "encryption keeps everything");
    let err = store
        .reopen()
        .and_then(|s| {
            // The history stays append-only: the trigger came along.
            s.overview()?;
            Ok(s)
        })
        .expect("a second connection opens with the same passphrase");
    drop(err);
    drop(store);
    let again = encrypt_study(&path, &pass()).expect_err("already encrypted");
    assert!(
        matches!(again, StoreError::AlreadyEncrypted { .. }),
        "encrypting twice is refused: {again}"
    );

    let new = Passphrase::new("the new passphrase").unwrap();
    rekey_study(&path, &pass(), &new).expect("re-keyed");
    assert!(
        matches!(
            Store::open_with(&path, clock(), Some(&pass())),
            Err(StoreError::WrongPassphrase { .. })
        ),
        "the old passphrase no longer opens it"
    );
    let store = Store::open_with(&path, clock(), Some(&new)).expect("new passphrase opens it");
    assert_eq!(fingerprint(&store), expected, "re-keying keeps everything");
    drop(store);

    decrypt_study(&path, &new).expect("decrypted");
    let head = std::fs::read(&path).expect("bytes");
    assert!(
        head.starts_with(b"SQLite format 3\0"),
        "a decrypted study is a plain SQLite file again"
    );
    let store = Store::open(&path, clock()).expect("opens plain");
    assert_eq!(fingerprint(&store), expected, "decryption keeps everything");
    let triggers: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        triggers >= 2,
        "the append-only triggers of the history survive the round trip ({triggers})"
    );
    drop(store);
    let not = decrypt_study(&path, &new).expect_err("plain");
    assert!(
        matches!(not, StoreError::NotEncrypted { .. }),
        "decrypting a plain study is refused: {not}"
    );
    let names: Vec<String> = files(dir.path())
        .keys()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["study.concord".to_string()],
        "three conversions leave only the study itself"
    );
}

#[test]
fn a_study_open_elsewhere_is_not_converted_and_a_crashed_conversion_changes_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("study.concord");
    let mut store = Store::create(&path, clock()).expect("created");
    populate(&mut store, 2, &[EXPERT]);
    let expected = fingerprint(&store);
    let err = encrypt_study(&path, &pass()).expect_err("open elsewhere");
    assert!(
        matches!(err, StoreError::InUse { .. }),
        "a study with another connection open is not replaced under it: {err}"
    );
    assert_eq!(fingerprint(&store), expected, "the open study is untouched");
    drop(store);
    assert!(
        std::fs::read(&path)
            .unwrap()
            .starts_with(b"SQLite format 3\0"),
        "and still plain"
    );

    // A crash mid-conversion leaves the half-written new file beside the old study.
    let leftover = dir.path().join(".study.concord.converting");
    std::fs::write(&leftover, vec![7u8; 8192]).expect("leftover");
    let store = Store::open(&path, clock()).expect("the old study opens as if nothing happened");
    assert_eq!(fingerprint(&store), expected, "with all its content");
    drop(store);
    encrypt_study(&path, &pass()).expect("the next conversion runs");
    assert!(
        !leftover.exists(),
        "and replaces the leftover with its own complete file"
    );
    let store = Store::open_with(&path, clock(), Some(&pass())).expect("opens");
    assert_eq!(
        fingerprint(&store),
        expected,
        "the converted study is whole"
    );
}
