//! Writes that never destroy and leak nothing: every output path is judged before anything is
//! opened (the open study and its log, a folder, a FIFO, a device, an existing file without
//! overwrite are refused with the path and the reason, the thing at the path unchanged), a failed
//! export leaves no file, every file written is `0600`, an encrypted study's export spills no
//! readable rating to the temporary folder, its backups are not plain SQLite, and plain backups
//! taken before encryption are encrypted with it.

use concord_testsupport::lead_study::*;

use concord_core::app::backup;
use concord_core::app::export::{export_ratings, export_sheet, RatingsExport, RatingsFormat};
use concord_core::app::open_study::OpenStudy;
use concord_core::base::error_code::{Coded, ErrorCode};
use concord_core::guard::phi::review::PhiGate;
use concord_core::outputs::export::csv::write_long_csv_in_runs;
use concord_core::outputs::export::CsvOptions;
use concord_core::store::{encrypt_study, integrity_problems, Passphrase, Store};
use concord_core::workflow::assignment::{self, AssignmentOptions};
use concord_core::workflow::package;
use std::path::{Path, PathBuf};
use std::time::Duration;

const PASS: &str = "correct horse battery staple 41";
const EXPERT: &str = "Ana";
/// A rationale no other test writes: found in a file only if that file holds this study's ratings.
const RATIONALE: &str = "spill-probe: she names the loss without hurrying her";

const LEAD: PhiGate<'static> = PhiGate {
    actor: "lead",
    override_reason: None,
};

fn pass() -> Passphrase {
    Passphrase::new(PASS).expect("a strong passphrase")
}

/// A study at `path` (encrypted with `key` when given) whose expert rated six responses with
/// [`RATIONALE`] and has an assignment.
fn study_at(path: &Path, key: Option<&Passphrase>) -> Store {
    rated_study_at(path, key, 6)
}

/// [`study_at`] with `rated` responses rated.
fn rated_study_at(path: &Path, key: Option<&Passphrase>, rated: i64) -> Store {
    let mut store = Store::create_with(path, clock(), key).expect("study created");
    populate(&mut store, 60, &[EXPERT, "Boris"]);
    let expert = rater_id(&store, EXPERT);
    for response in 1..=rated {
        rate_all(&mut store, expert, response, 3, Some(RATIONALE));
    }
    assignment::assign(&mut store, &AssignmentOptions::new(2, 3)).expect("assigned");
    store
}

fn long_csv() -> RatingsExport {
    RatingsExport::new(RatingsFormat::LongCsv)
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("listed")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_export_onto_the_open_study_or_its_log_is_refused_and_the_study_is_unchanged() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("study.concord");
    let mut study = OpenStudy::new(study_at(&path, None));
    let before = std::fs::read(&path).expect("study bytes");
    let link = dir.path().join("link-to-study.csv");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&path, &link).expect("a link to the study");
    let hard = dir.path().join("hard-link.csv");
    std::fs::hard_link(&path, &hard).expect("a second name of the study");
    let wal = dir.path().join("study.concord-wal");
    let shm = dir.path().join("./study.concord-shm");
    let mut targets = vec![
        (path.clone(), "is the open study"),
        (hard, "is the open study"),
        (wal, "-wal file"),
        (shm, "-shm file"),
    ];
    if cfg!(unix) {
        targets.push((link, "is the open study"));
    }
    for (target, reason) in targets {
        for overwrite in [false, true] {
            let refused = export_ratings(&mut study, &long_csv(), Some(&target), overwrite, LEAD)
                .expect_err("an export never replaces the study or its log");
            let message = refused.to_string();
            assert!(
                message.contains(reason) && message.contains(&target.display().to_string()),
                "the refusal names the path and why ({reason}): {message}"
            );
            assert_eq!(
                refused.code(),
                ErrorCode::Path,
                "a refused destination is a path error, not one to confirm"
            );
        }
    }
    assert_eq!(
        std::fs::read(&path).expect("study bytes"),
        before,
        "the study file is byte for byte what it was"
    );
    assert!(
        integrity_problems(&path, None)
            .expect("checkable")
            .is_empty(),
        "the study is still whole"
    );
}

#[cfg(unix)]
#[test]
fn an_export_onto_a_fifo_is_refused_at_once_without_opening_it() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let fifo = dir.path().join("pipe.csv");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "a FIFO is made for the attack");
    let path = dir.path().join("study.concord");
    let mut study = OpenStudy::new(study_at(&path, None));
    let (tx, rx) = std::sync::mpsc::channel();
    let target = fifo.clone();
    // Opening a FIFO for writing blocks until a reader comes: the export runs on its own thread
    // and must answer within seconds, refused.
    std::thread::spawn(move || {
        let result = export_ratings(&mut study, &long_csv(), Some(&target), true, LEAD)
            .map(|_| ())
            .map_err(|e| e.to_string());
        let _ = tx.send(result);
    });
    let result = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the export answers without waiting for a reader of the FIFO");
    let message = result.expect_err("a FIFO is never written");
    assert!(
        message.contains("is a FIFO"),
        "the refusal says what the path is: {message}"
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&fifo)
            .expect("still there")
            .file_type()
            .is_fifo(),
        "the FIFO is still a FIFO, not replaced by a file"
    );
}

#[test]
fn an_export_onto_a_folder_is_refused() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut study = OpenStudy::new(study_at(&dir.path().join("s.concord"), None));
    let folder = dir.path().join("out");
    std::fs::create_dir(&folder).expect("a folder");
    let refused = export_ratings(&mut study, &long_csv(), Some(&folder), true, LEAD)
        .expect_err("a folder is not a file to write");
    assert!(
        refused.to_string().contains("is a folder"),
        "the refusal names the kind: {refused}"
    );
    assert!(
        names(&folder).is_empty() && folder.is_dir(),
        "the folder is untouched and empty"
    );
}

#[cfg(unix)]
#[test]
fn a_device_is_refused_before_anything_is_opened() {
    // /dev/null is only judged, never written: the refusal comes from its metadata. As root (where
    // a rename could replace it) this is the attack itself; as another user it still checks that
    // the judgement comes first, since the rename would have failed with a different error.
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut study = OpenStudy::new(study_at(&dir.path().join("s.concord"), None));
    let null = Path::new("/dev/null");
    for format in [RatingsFormat::LongCsv, RatingsFormat::Xlsx] {
        let refused = export_ratings(
            &mut study,
            &RatingsExport::new(format),
            Some(null),
            true,
            LEAD,
        )
        .expect_err("a device is never replaced");
        assert!(
            refused.to_string().contains("/dev/null: is a device"),
            "the refusal names the device: {refused}"
        );
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(null)
            .expect("there")
            .file_type()
            .is_char_device(),
        "/dev/null is still the character device"
    );
}

#[test]
fn an_existing_file_is_replaced_only_when_asked() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut study = OpenStudy::new(study_at(&dir.path().join("s.concord"), None));
    let out = dir.path().join("ratings.csv");
    std::fs::write(&out, b"the analyst's own notes").expect("a file already there");
    let refused = export_ratings(&mut study, &long_csv(), Some(&out), false, LEAD)
        .expect_err("an existing file needs the person's yes");
    assert_eq!(
        refused.code(),
        ErrorCode::AlreadyExists,
        "the window offers to replace on this code"
    );
    assert!(
        refused
            .to_string()
            .contains("exists; pass --force to replace it"),
        "the refusal says how to replace it: {refused}"
    );
    assert_eq!(
        std::fs::read(&out).expect("bytes"),
        b"the analyst's own notes",
        "the file is unchanged"
    );
    let written = export_ratings(&mut study, &long_csv(), Some(&out), true, LEAD)
        .expect("replaced when asked");
    let text = std::fs::read_to_string(&written.path).expect("the export");
    assert!(text.contains(RATIONALE), "the file now holds the export");
    assert_eq!(
        names(dir.path()),
        ["ratings.csv", "s.concord", "s.concord-shm", "s.concord-wal"],
        "no temporary or .partial file is left beside it"
    );
    #[cfg(unix)]
    assert_eq!(mode(&out), 0o600, "the replaced export is owner-only");
}

#[test]
fn a_failed_export_leaves_no_file_behind() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut study = OpenStudy::new(study_at(&dir.path().join("s.concord"), None));
    let outputs = dir.path().join("outputs");
    std::fs::create_dir(&outputs).expect("a folder for outputs");
    // The judge has no assigned items: the sheet fails after its temporary file was made.
    let failed = export_sheet(
        &mut study,
        "gpt-4o-judge",
        Some(&outputs.join("sheet.xlsx")),
        false,
        LEAD,
    );
    assert!(failed.is_err(), "a judge gets no rating sheet");
    let missing = export_ratings(
        &mut study,
        &long_csv(),
        Some(&dir.path().join("no-such-folder").join("r.csv")),
        false,
        LEAD,
    )
    .expect_err("a missing folder is refused");
    assert!(
        missing.to_string().contains("does not exist"),
        "the refusal names the missing folder: {missing}"
    );
    assert!(
        names(&outputs).is_empty(),
        "nothing is left: no sheet, no temporary, no .partial: {:?}",
        names(&outputs)
    );
}

#[cfg(unix)]
#[test]
fn exports_packages_studies_and_backups_are_owner_only() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("s.concord");
    let mut study = OpenStudy::new(study_at(&path, None));
    assert_eq!(mode(&path), 0o600, "a new study file is owner-only");
    for (format, name) in [
        (RatingsFormat::LongCsv, "long.csv"),
        (RatingsFormat::WideCsv, "wide.csv"),
        (RatingsFormat::Xlsx, "results.xlsx"),
    ] {
        let out = dir.path().join(name);
        export_ratings(
            &mut study,
            &RatingsExport::new(format),
            Some(&out),
            false,
            LEAD,
        )
        .expect("exported");
        assert_eq!(mode(&out), 0o600, "{name} is owner-only");
    }
    let sheet = dir.path().join("sheet.xlsx");
    export_sheet(&mut study, EXPERT, Some(&sheet), false, LEAD).expect("sheet");
    assert_eq!(mode(&sheet), 0o600, "the rating sheet is owner-only");
    let default = export_ratings(&mut study, &long_csv(), None, false, LEAD).expect("default");
    assert_eq!(mode(&default.path), 0o600, "a default export is owner-only");
    assert_eq!(
        mode(default.path.parent().expect("export folder")),
        0o700,
        "the export folder made for it is owner-only"
    );
    let pkg = dir.path().join("ana.concord");
    concord_core::app::package::export_package(
        &mut study,
        EXPERT,
        Some(&pkg),
        false,
        7,
        &pass(),
        LEAD,
    )
    .expect("package");
    assert_eq!(mode(&pkg), 0o600, "the package is owner-only");
    let entry = backup::take_of(&study, &dir.path().join("backups"), 1_000, backup::KEEP)
        .expect("backed up");
    assert_eq!(
        mode(Path::new(&entry.path)),
        0o600,
        "the backup is owner-only"
    );
    drop(study);
    encrypt_study(&path, &pass()).expect("encrypted");
    assert_eq!(
        mode(&path),
        0o600,
        "the encrypted study (a new file renamed in) is owner-only"
    );
}

#[test]
fn a_package_never_replaces_the_study_nor_an_existing_file_unasked() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("s.concord");
    let mut store = study_at(&path, None);
    let refused = package::export_package_to(&mut store, EXPERT, &path, true, 3, &pass())
        .expect_err("the study is not a package destination");
    assert!(
        refused.to_string().contains("is the open study"),
        "the refusal says why: {refused}"
    );
    let taken = dir.path().join("taken.concord");
    std::fs::write(&taken, b"keep").expect("a file there");
    package::export_package(&mut store, EXPERT, &taken, 3, &pass())
        .expect_err("an existing file is kept");
    assert_eq!(
        std::fs::read(&taken).expect("bytes"),
        b"keep",
        "the file is unchanged"
    );
    package::export_package_to(&mut store, EXPERT, &taken, true, 3, &pass())
        .expect("replaced when asked");
    assert!(
        std::fs::read(&taken).expect("bytes") != b"keep",
        "the package replaced it"
    );
}

/// The contents of this process's open, already-deleted temporary files (the export's anonymous
/// spill files), read through `/proc/self/fd` while they are open.
#[cfg(target_os = "linux")]
fn open_spill_files() -> Vec<(String, Vec<u8>)> {
    let temp = std::env::temp_dir();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").expect("fds listed") {
        let fd = entry.expect("fd").path();
        let Ok(target) = std::fs::read_link(&fd) else {
            continue;
        };
        let text = target.display().to_string();
        if text.starts_with(&temp.display().to_string()) && text.ends_with("(deleted)") {
            if let Ok(bytes) = std::fs::read(&fd) {
                found.push((text, bytes));
            }
        }
    }
    found
}

/// A writer that looks at the spill files the first time the export writes a merged row (the runs
/// are open then) and records what it saw.
#[cfg(target_os = "linux")]
struct SpillProbe {
    seen: Option<Vec<(String, Vec<u8>)>>,
    written: Vec<u8>,
}

#[cfg(target_os = "linux")]
impl std::io::Write for SpillProbe {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // The CSV writer hands over its buffer when it fills: the merge is still going then.
        if self.seen.is_none() {
            self.seen = Some(open_spill_files());
        }
        self.written.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Export `store` with runs of 4 rows (so every few ratings spill) and return the spill files
/// seen mid-merge that hold a rating of this study, or any file seen at all.
#[cfg(target_os = "linux")]
fn spill_files_during_export(store: &Store) -> (usize, Vec<String>) {
    let mut probe = SpillProbe {
        seen: None,
        written: Vec::new(),
    };
    write_long_csv_in_runs(store, &mut probe, CsvOptions::default(), 4).expect("exported");
    assert!(
        String::from_utf8_lossy(&probe.written).contains(RATIONALE),
        "the export itself carries the rationale (the export the person asked for is plain)"
    );
    let seen = probe
        .seen
        .expect("the export wrote enough to be probed mid-merge");
    let leaking = seen
        .iter()
        .filter(|(_, bytes)| {
            bytes
                .windows(RATIONALE.len())
                .any(|w| w == RATIONALE.as_bytes())
        })
        .map(|(name, _)| name.clone())
        .collect();
    (seen.len(), leaking)
}

#[cfg(target_os = "linux")]
#[test]
fn an_encrypted_studys_export_spills_no_readable_rating() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    // The control: a plain study's runs are plain, and the probe finds the rationale in them, so
    // the probe can see spill contents.
    // 80 responses × 7 criteria: the export's output fills the CSV writer's buffer several times
    // while the runs are being merged.
    let plain = rated_study_at(&dir.path().join("plain.concord"), None, 80);
    let (seen, leaking) = spill_files_during_export(&plain);
    assert!(seen > 0, "the export spilled runs to temporary files");
    assert!(
        !leaking.is_empty(),
        "the probe reads a plain study's spill files and finds its rationale in them"
    );
    let encrypted = rated_study_at(&dir.path().join("sealed.concord"), Some(&pass()), 80);
    let (seen, leaking) = spill_files_during_export(&encrypted);
    assert!(seen > 0, "the encrypted study's export spilled runs too");
    assert!(
        leaking.is_empty(),
        "no spill file of an encrypted study holds a readable rationale: {leaking:?}"
    );
}

#[test]
fn an_encrypted_studys_backup_is_not_plain_sqlite() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let study = study_at(&dir.path().join("sealed.concord"), Some(&pass()));
    let entry =
        backup::take(&study, &dir.path().join("backups"), 5_000, backup::KEEP).expect("taken");
    let bytes = std::fs::read(&entry.path).expect("backup bytes");
    assert!(
        !bytes.starts_with(b"SQLite format 3\0"),
        "the backup has no plain SQLite header"
    );
    assert!(
        !bytes
            .windows(RATIONALE.len())
            .any(|w| w == RATIONALE.as_bytes()),
        "no rationale is readable in the backup"
    );
    let unkeyed = rusqlite::Connection::open(&entry.path).expect("a connection");
    assert!(
        unkeyed
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r
                .get::<_, i64>(0))
            .is_err(),
        "SQLite cannot read the backup without the passphrase"
    );
    assert!(
        integrity_problems(Path::new(&entry.path), Some(&pass()))
            .expect("checkable with the passphrase")
            .is_empty(),
        "with the passphrase the backup is whole"
    );
}

#[test]
fn plain_backups_taken_before_encryption_are_encrypted_with_the_study() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("s.concord");
    let root = dir.path().join("backups");
    let study = study_at(&path, None);
    let first = backup::take(&study, &root, 1_000, backup::KEEP).expect("plain backup");
    let second = backup::take(&study, &root, 2_000, backup::KEEP).expect("plain backup");
    drop(study);
    // A damaged plain backup cannot be encrypted: it must not stay.
    let damaged: PathBuf = Path::new(&first.path).with_file_name(backup::file_name(3_000));
    std::fs::write(&damaged, format!("not a database {RATIONALE}")).expect("damaged copy");
    encrypt_study(&path, &pass()).expect("encrypted");
    let secured = backup::secure_backups(&root, &path, None, &pass()).expect("secured");
    assert_eq!(
        (secured.encrypted, secured.removed),
        (2, 1),
        "both plain backups encrypted, the damaged plain copy removed: {secured:?}"
    );
    assert!(
        secured.note().is_some_and(|n| n.contains("encrypted")),
        "the front ends have a sentence to say so"
    );
    for b in [&first.path, &second.path] {
        let bytes = std::fs::read(b).expect("backup bytes");
        assert!(
            !bytes.starts_with(b"SQLite format 3\0")
                && !bytes
                    .windows(RATIONALE.len())
                    .any(|w| w == RATIONALE.as_bytes()),
            "{b} is no longer plain"
        );
        assert!(
            integrity_problems(Path::new(b), Some(&pass()))
                .expect("checkable")
                .is_empty(),
            "{b} opens whole with the study's passphrase"
        );
    }
    assert!(!damaged.exists(), "the unconvertible plain copy is gone");
    let again = backup::secure_backups(&root, &path, None, &pass()).expect("secured again");
    assert_eq!(
        again,
        backup::BackupsSecured::default(),
        "nothing left to do the second time"
    );
}

#[test]
fn the_methods_appendix_of_an_encrypted_study_says_it_is_plain() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut study = OpenStudy::new(study_at(&dir.path().join("sealed.concord"), Some(&pass())));
    let out = dir.path().join("appendix");
    let options = concord_core::panel::agreement::AgreementOptions::mentalalign("mentalbench");
    let written = concord_core::app::methods::write_methods_appendix(
        &mut study, &options, &out, "9.9.9", false, LEAD,
    )
    .expect("written");
    assert!(
        written
            .warning
            .as_deref()
            .is_some_and(|w| w.contains("plain, unencrypted")),
        "the appendix of an encrypted study carries the plain-copy warning: {:?}",
        written.warning
    );
    let again = concord_core::app::methods::write_methods_appendix(
        &mut study, &options, &out, "9.9.9", false, LEAD,
    )
    .expect_err("its files are there now");
    assert_eq!(
        again.code(),
        ErrorCode::AlreadyExists,
        "a second appendix into the same folder needs --force"
    );
    #[cfg(unix)]
    for f in &written.files {
        assert_eq!(mode(f), 0o600, "{} is owner-only", f.display());
    }
}
