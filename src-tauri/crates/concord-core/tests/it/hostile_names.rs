//! Hostile names and paths, one test per attack: a cell that never ends, control and direction
//! characters in names that reach a terminal or a workbook, experts whose names make the same
//! file name, a FIFO, device or folder given as a study, and read-only jobs on a study that is
//! not in WAL mode. Each test performs the attack and checks that the defence holds.

use concord_core::files::bounds::ReadLimits;
use concord_core::files::csv_rows::CsvRows;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// An endless stream (`/dev/zero` or a pipe that never closes): one header line, then an
/// unquoted cell of `x` that never ends. It counts every byte it hands out.
struct Endless {
    header: &'static [u8],
    served: Arc<AtomicU64>,
}

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = if self.header.is_empty() {
            buf.fill(b'x');
            buf.len()
        } else {
            let n = self.header.len().min(buf.len());
            buf[..n].copy_from_slice(&self.header[..n]);
            self.header = &self.header[n..];
            n
        };
        self.served.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[test]
fn an_endless_csv_cell_stops_at_the_limit() {
    let limit = 256 * 1024;
    let limits = ReadLimits {
        cell_bytes: limit,
        ..ReadLimits::default()
    };
    for (what, header) in [
        ("unquoted", b"a,b\n1,".as_slice()),
        ("quoted", b"a,b\n1,\"".as_slice()),
    ] {
        let served = Arc::new(AtomicU64::new(0));
        let source = Endless {
            header,
            served: served.clone(),
        };
        let mut rows = CsvRows::new("endless.csv", source, &limits).expect("the header is fine");
        let issues = rows
            .next_row()
            .expect("the endless row is a result, not the end")
            .err()
            .expect("an endless cell must be refused");
        let read = served.load(Ordering::Relaxed);
        // The parser reads in 64 KiB chunks: past the limit, at most the chunk that crossed it.
        let bound = limit + 64 * 1024 + 1024;
        assert!(
            read <= bound,
            "the {what} cell is read only to the limit plus one buffer: {read} bytes read, bound {bound}"
        );
        let issue = &issues[0];
        assert_eq!(
            issue.code, "cell_too_large",
            "the {what} cell is refused by the cell limit: {issue}"
        );
        assert_eq!(
            (
                issue.at.file.as_str(),
                issue.at.row,
                issue.at.column.as_deref()
            ),
            ("endless.csv", Some(2), Some("b")),
            "the refusal names file, row and column of the {what} cell: {issue}"
        );
        assert!(
            issue.message.contains("reading stopped"),
            "the message says reading stopped at the limit: {issue}"
        );
        if what == "quoted" {
            assert!(
                issue.message.contains("quoted cell opening on line 2"),
                "a quoted cell says where its quote opened: {issue}"
            );
        }
        assert!(rows.next_row().is_none(), "the refusal ends the reading");
    }
}

/// Run `job` on its own thread and fail (instead of hanging the suite) when it takes more than
/// ten seconds: a FIFO opened for reading waits for a writer forever.
fn within_seconds<T: Send + 'static>(what: &str, job: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(job());
    });
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("{what} must answer at once, not wait on the file"))
}

/// Paths that are not regular files: a FIFO made here, a folder, and a device.
#[cfg(unix)]
fn not_files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, &'static str)> {
    let fifo = dir.join("pipe.concord");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "the FIFO is made for the attack");
    let folder = dir.join("folder.concord");
    std::fs::create_dir(&folder).expect("folder made");
    vec![
        (fifo, "a named pipe (FIFO)"),
        (folder, "a folder"),
        (std::path::PathBuf::from("/dev/zero"), "a device"),
    ]
}

#[cfg(unix)]
#[test]
fn a_fifo_device_or_folder_given_as_a_study_is_refused_at_once() {
    use concord_core::app::open::{open, WhenMissing};
    use concord_core::base::study_location::StudyPath;
    use concord_core::store::{inspect, is_encrypted, Passphrase, Store, StoreError};
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, kind) in not_files(dir.path()) {
        let shown = path.display().to_string();
        let p = path.clone();
        let errors: Vec<(&str, StoreError)> = within_seconds(&shown, move || {
            let clock = concord_testsupport::lead_study::clock;
            let key = Passphrase::new("correct horse battery staple").expect("passphrase");
            vec![
                ("open", Store::open(&p, clock()).expect_err("refused")),
                (
                    "open with a key",
                    Store::open_with(&p, clock(), Some(&key)).expect_err("refused"),
                ),
                ("inspect", inspect(&p).expect_err("refused")),
                ("is_encrypted", is_encrypted(&p).expect_err("refused")),
                (
                    "encrypt",
                    concord_core::store::encrypt_study(&p, &key).expect_err("refused"),
                ),
                ("create", Store::create(&p, clock()).expect_err("refused")),
                (
                    "the jobs' open",
                    match open(
                        &StudyPath::Explicit(p.clone()),
                        WhenMissing::CreateEmpty,
                        clock(),
                        1,
                        None,
                    ) {
                        Err(concord_core::intake::demo::DemoError::Store(e)) => e,
                        other => panic!("the jobs' open must refuse it: {other:?}"),
                    },
                ),
            ]
        });
        for (how, err) in errors {
            assert!(
                matches!(err, StoreError::NotAFile { .. }),
                "{how} refuses {shown} as not a file: {err:?}"
            );
            let message = err.to_string();
            assert!(
                message.contains(&shown) && message.contains(kind),
                "{how}: the message names the path and says it is {kind}: {message}"
            );
        }
    }
    for name in ["pipe.concord", "pipe.xlsx"] {
        let fifo = dir.path().join(name);
        if !fifo.exists() {
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            assert!(made.is_ok_and(|s| s.success()), "the FIFO {name} is made");
        }
        let role = within_seconds(name, move || {
            concord_core::app::file_role::classify(&fifo, None)
        });
        assert!(
            matches!(&role, concord_core::app::file_role::FileRole::Unknown { reason } if reason.contains("not a regular file")),
            "the window's open says a FIFO named {name} is not a file, at once: {role:?}"
        );
    }
    assert!(
        std::fs::metadata(dir.path().join("pipe.concord"))
            .map(|m| !m.is_file())
            .unwrap_or(false),
        "the FIFO is still a FIFO: nothing replaced it"
    );
}

/// An expert name carrying C0 controls, an escape sequence, DEL, a C1 control and a right-to-left
/// override: everything a name should never smuggle into a terminal or a file.
const HOSTILE_NAME: &str = "Ana\u{1}\u{1b}[31m\u{7f}\u{85}\u{202e}Lee";

/// Whether `c` is a character XML 1.0 forbids (its `Char` production).
fn xml_forbidden(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Every XML part of the workbook at `path` is well-formed XML 1.0 with no forbidden character.
fn assert_well_formed_parts(path: &std::path::Path) {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).expect("workbook opens"))
        .expect("a ZIP archive");
    for i in 0..zip.len() {
        let mut part = zip.by_index(i).expect("part");
        let name = part.name().expect("a part name").to_string();
        if !name.ends_with(".xml") && !name.ends_with(".rels") {
            continue;
        }
        let mut text = String::new();
        part.read_to_string(&mut text).expect("UTF-8 XML");
        if let Some(c) = text.chars().find(|&c| xml_forbidden(c)) {
            panic!("{name} carries U+{:04X}, which XML 1.0 forbids", c as u32);
        }
        let mut reader = quick_xml::Reader::from_str(&text);
        loop {
            match reader.read_event() {
                Ok(quick_xml::events::Event::Eof) => break,
                Ok(_) => {}
                Err(e) => panic!("{name} is not well-formed XML: {e}"),
            }
        }
    }
}

#[test]
fn control_characters_in_names_never_reach_a_workbook_raw() {
    use calamine::{Reader, Xlsx};
    use concord_core::outputs::export::{write_rating_sheet, write_workbook, WorkbookOptions};
    use concord_core::workflow::assignment::{self, AssignmentOptions};
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = concord_testsupport::lead_study::memory_study(4, &[HOSTILE_NAME, "Boris"]);
    assignment::assign(&mut store, &AssignmentOptions::new(2, 3)).expect("assigned");
    let workbook = dir.path().join("results.xlsx");
    write_workbook(&store, &workbook, &WorkbookOptions::default()).expect("workbook written");
    let sheet = dir.path().join("sheet.xlsx");
    write_rating_sheet(&store, HOSTILE_NAME, &sheet).expect("rating sheet written");
    for path in [&workbook, &sheet] {
        assert_well_formed_parts(path);
        let mut wb: Xlsx<_> = calamine::open_workbook(path).expect("calamine opens the workbook");
        let names = wb.sheet_names().clone();
        for name in &names {
            assert!(
                !name
                    .chars()
                    .any(|c| c.is_control() || concord_core::base::text::is_hidden_control(c)),
                "sheet name {name:?} of {} carries no hidden character",
                path.display()
            );
            let range = wb.worksheet_range(name).expect("every sheet reads");
            for cell in range.used_cells() {
                let text = cell.2.to_string();
                assert!(
                    !text.chars().any(xml_forbidden),
                    "cell {:?} of {name} holds no character XML forbids: {text:?}",
                    (cell.0, cell.1)
                );
            }
        }
    }
    let wb: Xlsx<_> = calamine::open_workbook(&workbook).expect("opens");
    assert!(
        wb.sheet_names()
            .iter()
            .any(|n| n.starts_with("Ana<U+0001><U+001B>_31m")),
        "the expert's sheet shows the name with its controls spelled out: {:?}",
        wb.sheet_names()
    );
    let imported = concord_core::outputs::export::import_rating_sheet(&mut store, &sheet)
        .expect("the expert's own blank sheet imports back");
    assert_eq!(
        imported.rater, HOSTILE_NAME,
        "the sheet still names its expert exactly"
    );
}

/// The expert a fill-in sheet written by Concord names in its hidden `concord` sheet.
fn sheet_expert(path: &std::path::Path) -> String {
    use calamine::{Reader, Xlsx};
    let mut wb: Xlsx<_> = calamine::open_workbook(path).expect("the sheet opens");
    let meta = wb
        .worksheet_range("concord")
        .expect("the hidden sheet reads");
    meta.rows()
        .find(|r| r.first().map(|c| c.to_string()) == Some("rater".into()))
        .and_then(|r| r.get(1).map(|c| c.to_string()))
        .expect("the sheet names its expert")
}

#[test]
fn experts_whose_names_slug_alike_get_distinct_default_files() {
    use concord_core::app::open_study::OpenStudy;
    use concord_core::guard::phi::review::PhiGate;
    use concord_core::store::Passphrase;
    use concord_core::workflow::assignment::{self, AssignmentOptions};
    let dir = tempfile::tempdir().expect("temp dir");
    let experts = ["Anna Lee", "anna-lee", "Anna Lee 2", "ANNA  LEE"];
    let mut store =
        concord_testsupport::lead_study::file_study(&dir.path().join("s.concord"), 4, &experts);
    assignment::assign(&mut store, &AssignmentOptions::new(2, 3)).expect("assigned");
    let mut study = OpenStudy::new(store);
    let gate = PhiGate {
        actor: "lead",
        override_reason: None,
    };
    let mut sheets = Vec::new();
    for expert in experts {
        let written =
            concord_core::app::export::export_sheet(&mut study, expert, None, false, gate)
                .expect("the default sheet is written");
        sheets.push(written.path);
    }
    let names: std::collections::HashSet<_> = sheets.iter().collect();
    assert_eq!(
        names.len(),
        experts.len(),
        "every expert gets a sheet file of their own: {sheets:?}"
    );
    for (expert, path) in experts.iter().zip(&sheets) {
        assert_eq!(
            sheet_expert(path),
            *expert,
            "{} still holds {expert}'s sheet: none overwrote another",
            path.display()
        );
    }
    assert!(
        sheets[0].ends_with("s-sheet-anna-lee.xlsx") && sheets[2].ends_with("s-sheet-anna-lee-2.xlsx"),
        "the first of a slug keeps it and an expert whose own slug has a number keeps theirs: {sheets:?}"
    );
    // Written again over the same default file, as the lead asks when replacing it.
    let again = concord_core::app::export::export_sheet(&mut study, "anna-lee", None, true, gate)
        .expect("written again");
    assert_eq!(
        again.path, sheets[1],
        "an expert's default sheet stays the same file however often it is written"
    );
    let key = Passphrase::new("plinth orbit savvy gazebo tundra").expect("passphrase");
    let mut packages = Vec::new();
    for (n, expert) in experts.iter().enumerate() {
        let written = concord_core::app::package::export_package(
            &mut study, expert, None, false, n as u64, &key, gate,
        )
        .expect("the default package is written");
        packages.push(written.path);
    }
    let distinct: std::collections::HashSet<_> = packages.iter().collect();
    assert_eq!(
        distinct.len(),
        experts.len(),
        "every expert gets a package file of their own: {packages:?}"
    );
    for (expert, path) in experts.iter().zip(&packages) {
        let package = concord_core::store::Store::open_with(
            std::path::Path::new(path),
            concord_testsupport::lead_study::clock(),
            Some(&key),
        )
        .expect("the package opens");
        let rater = package
            .meta(concord_core::store::META_PACKAGE_RATER)
            .expect("meta reads")
            .expect("the package names its expert");
        assert_eq!(
            rater, *expert,
            "{path} is still {expert}'s package: none overwrote another"
        );
    }
}

/// A clock the test moves by hand.
struct HandClock(std::sync::atomic::AtomicI64);

impl concord_core::base::clock::Clock for HandClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[test]
fn the_unlock_screen_backs_off_after_repeated_wrong_passphrases() {
    use concord_core::app::study_security::{
        unlock, unlock_wait_seconds, SecurityError, UnlockAttempts, MAX_UNLOCK_WAIT_SECONDS,
    };
    use concord_core::store::{Passphrase, Store, StoreError};
    let waits: Vec<u64> = (0..14).map(unlock_wait_seconds).collect();
    assert_eq!(
        waits,
        [0, 0, 0, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300],
        "three free tries, then a doubling wait capped at five minutes"
    );
    assert_eq!(
        unlock_wait_seconds(u32::MAX),
        MAX_UNLOCK_WAIT_SECONDS,
        "no count overflows the cap"
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("locked.concord");
    let right = Passphrase::new("plinth orbit savvy gazebo tundra").expect("passphrase");
    let wrong = Passphrase::new("a guess at the passphrase").expect("passphrase");
    drop(
        Store::create_with(
            &path,
            concord_testsupport::lead_study::clock(),
            Some(&right),
        )
        .expect("an encrypted study"),
    );
    let clock = Arc::new(HandClock(std::sync::atomic::AtomicI64::new(
        1_700_000_000_000,
    )));
    let mut attempts = UnlockAttempts::default();
    for n in 1..=3 {
        let err = unlock(&path, clock.clone(), &wrong, false, &mut attempts)
            .expect_err("a wrong passphrase does not open the study");
        assert!(
            matches!(
                err,
                SecurityError::Store(StoreError::WrongPassphrase { .. })
            ),
            "attempt {n} is tried and found wrong: {err}"
        );
    }
    let before = std::fs::read(&path).expect("read");
    let err = unlock(&path, clock.clone(), &right, false, &mut attempts)
        .expect_err("the fourth attempt right away must wait");
    assert!(
        matches!(
            err,
            SecurityError::TryAgainLater {
                seconds: 2,
                failures: 3
            }
        ),
        "after three failures the next attempt waits 2 s, even with the right passphrase: {err:?}"
    );
    assert!(
        err.to_string().contains("try again in 2 s"),
        "the window shows how long to wait: {err}"
    );
    assert!(
        std::fs::read(&path).expect("read") == before,
        "a refused attempt does not touch the file"
    );
    clock.0.fetch_add(1_500, Ordering::SeqCst);
    assert!(
        matches!(
            unlock(&path, clock.clone(), &right, false, &mut attempts),
            Err(SecurityError::TryAgainLater { seconds: 1, .. })
        ),
        "half-way through the wait, the rest is rounded up to a whole second"
    );
    clock.0.fetch_add(500, Ordering::SeqCst);
    let err = unlock(&path, clock.clone(), &wrong, false, &mut attempts).expect_err("still wrong");
    assert!(
        matches!(
            err,
            SecurityError::Store(StoreError::WrongPassphrase { .. })
        ),
        "once the wait is over the attempt is tried: {err}"
    );
    assert_eq!(
        attempts.seconds_to_wait(concord_core::base::clock::Clock::now_ms(&*clock)),
        4,
        "a fourth failure doubles the wait"
    );
    clock.0.fetch_add(4_000, Ordering::SeqCst);
    let (store, _) = unlock(&path, clock.clone(), &right, false, &mut attempts)
        .expect("the right passphrase opens the study once the wait is over");
    drop(store);
    assert_eq!(
        attempts,
        UnlockAttempts::default(),
        "opening the study starts the count again"
    );
}

/// Passphrases a guesser tries first, each refused wherever a person chooses one.
const WEAK: [&str; 4] = ["aaaaaaaa", "password1", "qwertyuiop", "11111111111111"];
/// A diceware passphrase (five random words) and a random string, each accepted.
const STRONG: [&str; 2] = ["plinth orbit savvy gazebo tundra", "vR7#kq2Lm9!xTz"];

#[test]
fn weak_passphrases_are_refused_wherever_a_person_chooses_one() {
    use concord_core::store::{encrypt_study, rekey_study, Passphrase, Store, StoreError};
    use concord_core::workflow::assignment::{self, AssignmentOptions};
    use concord_core::workflow::package::{export_package, PackageError};
    use concord_core::workflow::rater_session::{lock_profiles, SessionError};
    use concord_core::workflow::signoff::{set_passphrase, SignoffError};
    let clock = concord_testsupport::lead_study::clock;
    let dir = tempfile::tempdir().expect("temp dir");
    let said_why = |what: &str, message: String| {
        assert!(
            message.contains("passphrase")
                && message.contains("too easy to guess")
                && message.contains("random words"),
            "{what}: the refusal says why and what to do: {message}"
        );
    };
    let plain = dir.path().join("plain.concord");
    let mut store = concord_testsupport::lead_study::file_study(&plain, 3, &["Ana", "Boris"]);
    assignment::assign(&mut store, &AssignmentOptions::new(2, 3)).expect("assigned");
    drop(store);
    for weak in WEAK {
        let key = Passphrase::new(weak).expect("a passphrase");
        let before = std::fs::read(&plain).expect("read");
        let err = encrypt_study(&plain, &key).expect_err("a weak study passphrase");
        assert!(
            matches!(err, StoreError::WeakPassphrase(_)),
            "encrypting with {weak:?} is refused as weak: {err}"
        );
        said_why("encrypt", err.to_string());
        assert!(
            std::fs::read(&plain).expect("read") == before,
            "a refused encryption leaves the study as it was"
        );
        let created = dir.path().join(format!("new-{}.concord", weak.len()));
        let err = Store::create_with(&created, clock(), Some(&key)).expect_err("weak");
        assert!(
            matches!(err, StoreError::WeakPassphrase(_)) && !created.exists(),
            "creating an encrypted study with {weak:?} is refused and writes nothing: {err}"
        );
        let mut store = Store::open(&plain, clock()).expect("opens");
        let out = dir.path().join("ana.concord");
        let err = export_package(&mut store, "Ana", &out, 1, &key).expect_err("weak");
        assert!(
            matches!(err, PackageError::Store(StoreError::WeakPassphrase(_))) && !out.exists(),
            "a package under {weak:?} is refused and not written: {err}"
        );
        let err = set_passphrase(&mut store, "Ana", None, weak, 1, 1_000).expect_err("weak");
        assert!(
            matches!(err, SignoffError::WeakPassphrase(_)),
            "a signing passphrase {weak:?} is refused: {err}"
        );
        said_why("signing", err.to_string());
        let err = lock_profiles(&mut store, weak, 1, 1_000).expect_err("weak");
        assert!(
            matches!(err, SessionError::WeakPassphrase(_)),
            "a lead passphrase {weak:?} is refused: {err}"
        );
        said_why("lead", err.to_string());
        assert!(
            store
                .meta(concord_core::workflow::queue::PROFILES_LOCKED_KEY)
                .expect("meta")
                .as_deref()
                != Some("true"),
            "a refused lock leaves the study unlocked"
        );
    }
    let err = {
        let mut store = Store::open(&plain, clock()).expect("opens");
        set_passphrase(&mut store, "Ana", None, "Ana Ana Ana 1", 1, 1_000).expect_err("her name")
    };
    assert!(
        matches!(err, SignoffError::WeakPassphrase(_)),
        "a signing passphrase made of the expert's own name is refused: {err}"
    );

    for (n, strong) in STRONG.iter().enumerate() {
        let key = Passphrase::new(*strong).expect("a passphrase");
        let mut store = Store::open(&plain, clock()).expect("opens");
        let out = dir.path().join(format!("ana-{n}.concord"));
        export_package(&mut store, "Ana", &out, n as u64, &key)
            .expect("a strong package passphrase");
        let current = n.checked_sub(1).map(|m| STRONG[m]);
        set_passphrase(&mut store, "Boris", current, strong, 1, 1_000)
            .unwrap_or_else(|e| panic!("{strong:?} is a fine signing passphrase: {e}"));
        drop(store);
        let copy = dir.path().join(format!("copy-{n}.concord"));
        std::fs::copy(&plain, &copy).expect("copied");
        encrypt_study(&copy, &key).unwrap_or_else(|e| panic!("{strong:?} encrypts: {e}"));
        let weak = Passphrase::new("aaaaaaaa").expect("a passphrase");
        let err = rekey_study(&copy, &key, &weak).expect_err("re-keying to a weak one");
        assert!(
            matches!(err, StoreError::WeakPassphrase(_)),
            "re-keying to a weak passphrase is refused: {err}"
        );
        Store::open_with(&copy, clock(), Some(&key))
            .expect("the study still opens with the old one");
    }
}

#[test]
fn a_study_opened_to_read_is_never_changed_even_outside_wal_mode() {
    use concord_core::app::open::open_to_read;
    use concord_core::base::study_location::StudyPath;
    use concord_core::store::{Passphrase, Store, StoreError};
    let clock = concord_testsupport::lead_study::clock;
    let dir = tempfile::tempdir().expect("temp dir");
    let plain = dir.path().join("plain.concord");
    drop(concord_testsupport::lead_study::file_study(
        &plain,
        3,
        &["Ana"],
    ));
    let encrypted = dir.path().join("sealed.concord");
    let key = Passphrase::new("plinth orbit savvy gazebo tundra").expect("passphrase");
    std::fs::copy(&plain, &encrypted).expect("copied");
    concord_core::store::encrypt_study(&encrypted, &key).expect("encrypted");
    let conn = rusqlite::Connection::open(&plain).expect("plain SQLite");
    let mode: String = conn
        .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))
        .expect("set");
    assert_eq!(
        mode, "delete",
        "the attack's study is in DELETE journal mode"
    );
    drop(conn);
    for (path, key) in [(&plain, None), (&encrypted, Some(&key))] {
        let before = std::fs::read(path).expect("read");
        let mut study = open_to_read(&StudyPath::Explicit(path.clone()), clock(), 1, key)
            .expect("the study opens to read");
        assert!(study.store().is_read_only(), "the connection is read-only");
        let overview = concord_core::app::overview::overview(&study).expect("overview");
        assert!(overview.conversations > 0, "the study is read whole");
        let check = concord_core::guard::audit::verify(study.store()).expect("verified");
        assert!(
            check.broken.is_none(),
            "the chain verifies on a read-only open"
        );
        let err = study
            .store_mut()
            .write(|tx| tx.set_meta("title", "changed"))
            .expect_err("a write through a read-only open");
        assert!(
            matches!(&err, StoreError::Invalid(m) if m.contains("only to read")),
            "a write is refused with a clear error: {err}"
        );
        drop(study);
        assert!(
            std::fs::read(path).expect("read") == before,
            "{}: opening to read, reading and a refused write change no byte",
            path.display()
        );
    }
    let err = Store::open_read_only(&dir.path().join("absent.concord"), clock(), None)
        .expect_err("no file");
    assert!(
        matches!(err, StoreError::Missing { .. }),
        "a missing study is refused, not created: {err}"
    );
    assert!(
        !dir.path().join("absent.concord").exists(),
        "nothing was created"
    );
}

#[test]
fn leaving_a_locked_rater_session_backs_off_after_wrong_lead_passphrases() {
    use concord_core::app::open_study::OpenStudy;
    use concord_core::app::session::{leave, start};
    use concord_core::app::study_security::UnlockAttempts;
    use concord_core::store::Store;
    use concord_core::workflow::rater_session::{lock_profiles, Session, SessionError};
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("locked.concord");
    let mut store = concord_testsupport::lead_study::file_study(&path, 2, &["Ana"]);
    let lead = "lead ferry lantern 82";
    lock_profiles(&mut store, lead, 7, 1_000).expect("the lead locks the study");
    let ana = concord_testsupport::lead_study::rater_id(&store, "Ana");
    drop(store);
    let clock = Arc::new(HandClock(std::sync::atomic::AtomicI64::new(
        1_700_000_000_000,
    )));
    let mut study = OpenStudy::new(Store::open(&path, clock.clone()).expect("opens"));
    let session = start(&mut study, Session::Lead, ana).expect("Ana picks her profile");
    let mut attempts = UnlockAttempts::default();
    for n in 1..=3 {
        assert!(
            matches!(
                leave(
                    &mut study,
                    session,
                    Some("a guess at the lead's"),
                    &mut attempts
                ),
                Err(SessionError::WrongLeadPassphrase)
            ),
            "guess {n} is tried and refused"
        );
    }
    let err = leave(&mut study, session, Some(lead), &mut attempts)
        .expect_err("the fourth attempt right away must wait");
    assert!(
        matches!(
            err,
            SessionError::TryAgainLater {
                seconds: 2,
                failures: 3
            }
        ),
        "after three wrong lead passphrases the next waits 2 s, untried: {err:?}"
    );
    assert!(
        err.to_string().contains("try again in 2 s"),
        "the picker shows how long to wait: {err}"
    );
    clock.0.fetch_add(2_000, Ordering::SeqCst);
    assert_eq!(
        leave(&mut study, session, Some(lead), &mut attempts).expect("the lead's passphrase"),
        Session::Lead,
        "once the wait is over the lead's passphrase opens lead mode"
    );
    assert_eq!(
        attempts,
        UnlockAttempts::default(),
        "leaving with the right passphrase starts the count again"
    );
}
