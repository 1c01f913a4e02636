//! `--out` from the command line never destroys: the study itself and its `-wal`, a FIFO, a folder
//! and a device are refused with the path and the reason (a FIFO at once, never opened), an
//! existing file is replaced only with `--force`, files written are `0600`, an encrypted study's
//! methods appendix says on stderr and in its JSON that it is plain, and `study encrypt` encrypts
//! the desktop app's plain backups of the study and says so. A reader that closes stdout early
//! (`concord … | head`) ends the output quietly, without a panic.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const PASS: &str = "correct horse battery staple 41";

fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_concord"));
    cmd.args(args)
        .env_remove("CONCORD_STUDY")
        .env_remove("CONCORD_PASSPHRASE")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Run `concord` and wait at most 60 s: a command that blocks (on a FIFO) fails the test instead
/// of hanging it.
fn concord(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut child = command(args, env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the concord binary runs");
    let start = Instant::now();
    while child.try_wait().expect("waitable").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("concord {args:?} did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output read")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ok(out: &Output, what: &str) -> String {
    assert!(out.status.success(), "{what} must succeed: {}", stderr(out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: &Output, reason: &str, what: &str) {
    assert!(!out.status.success(), "{what} must be refused");
    assert!(
        stderr(out).contains(reason),
        "{what}: the error says {reason:?}: {}",
        stderr(out)
    );
}

fn demo(dir: &Path) -> String {
    let study = dir.join("study.concord");
    let db = study.to_str().expect("UTF-8 path").to_string();
    ok(&concord(&["--db", &db, "demo"], &[]), "demo");
    db
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

#[test]
fn export_onto_the_study_or_its_log_is_refused_and_the_study_survives() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let db = demo(dir.path());
    let before = ok(
        &concord(&["--db", &db, "--json", "overview"], &[]),
        "overview",
    );
    let wal = format!("{db}-wal");
    for (out, reason) in [(&db, "is the open study"), (&wal, "-wal file")] {
        for force in [false, true] {
            let mut args = vec!["--db", &db, "export", "ratings", "--out", out];
            if force {
                args.push("--force");
            }
            refused(
                &concord(&args, &[]),
                reason,
                &format!("export ratings --out {out} (force {force})"),
            );
        }
    }
    refused(
        &concord(
            &[
                "--db",
                &db,
                "export",
                "sheet",
                "--rater",
                "Demo expert A",
                "--out",
                &db,
                "--force",
            ],
            &[],
        ),
        "is the open study",
        "export sheet --out the study --force",
    );
    let after = ok(
        &concord(&["--db", &db, "--json", "overview"], &[]),
        "overview",
    );
    assert_eq!(
        after, before,
        "the study opens and says the same after the attempts"
    );
    ok(
        &concord(&["--db", &db, "audit", "verify"], &[]),
        "the audit chain is intact",
    );
}

#[cfg(unix)]
#[test]
fn export_onto_a_fifo_a_folder_or_a_device_is_refused() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let db = demo(dir.path());
    let fifo = dir.path().join("pipe.csv");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "a FIFO is made for the attack");
    let fifo = fifo.to_str().unwrap().to_string();
    refused(
        &concord(
            &["--db", &db, "export", "ratings", "--out", &fifo, "--force"],
            &[],
        ),
        "is a FIFO",
        "export onto a FIFO",
    );
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).expect("a folder");
    refused(
        &concord(
            &[
                "--db",
                &db,
                "export",
                "ratings",
                "--out",
                folder.to_str().unwrap(),
                "--force",
            ],
            &[],
        ),
        "is a folder",
        "export onto a folder",
    );
    // /dev/null is only judged, never written (the refusal comes from its metadata).
    refused(
        &concord(
            &[
                "--db",
                &db,
                "export",
                "ratings",
                "--out",
                "/dev/null",
                "--force",
            ],
            &[],
        ),
        "/dev/null: is a device",
        "export onto /dev/null",
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata("/dev/null")
            .expect("there")
            .file_type()
            .is_char_device(),
        "/dev/null is still the device"
    );
}

#[test]
fn an_existing_file_is_replaced_only_with_force() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let db = demo(dir.path());
    let out = dir.path().join("ratings.csv");
    std::fs::write(&out, "my notes").expect("a file there");
    let target = out.to_str().unwrap();
    refused(
        &concord(&["--db", &db, "export", "ratings", "--out", target], &[]),
        "exists; pass --force to replace it",
        "export onto an existing file",
    );
    assert_eq!(
        std::fs::read_to_string(&out).expect("text"),
        "my notes",
        "the file is unchanged"
    );
    ok(
        &concord(
            &["--db", &db, "export", "ratings", "--out", target, "--force"],
            &[],
        ),
        "export --force",
    );
    assert!(
        std::fs::read_to_string(&out)
            .expect("text")
            .starts_with("conversation_id"),
        "the export replaced the file"
    );
    #[cfg(unix)]
    assert_eq!(mode(&out), 0o600, "the export is owner-only");
    let pkg = dir.path().join("pkg.concord");
    std::fs::write(&pkg, "keep").expect("a file there");
    ok(
        &concord(&["--db", &db, "assign", "--k", "2", "--seed", "3"], &[]),
        "assign",
    );
    let env = [("CONCORD_PACKAGE_PASSPHRASE", PASS)];
    let pkg_args = [
        "--db",
        &db,
        "package",
        "export",
        "--rater",
        "Demo expert A",
        "--out",
    ];
    let mut args = pkg_args.to_vec();
    args.push(pkg.to_str().unwrap());
    refused(
        &concord(&args, &env),
        "exists; pass --force",
        "package onto a file",
    );
    args.push("--force");
    ok(&concord(&args, &env), "package export --force");
    #[cfg(unix)]
    assert_eq!(mode(&pkg), 0o600, "the package is owner-only");
    let leftovers: Vec<String> = std::fs::read_dir(dir.path())
        .expect("listed")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial") || n.ends_with(".tmp"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "no temporary file is left: {leftovers:?}"
    );
}

#[test]
fn an_encrypted_studys_methods_appendix_says_it_is_plain() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let db = demo(dir.path());
    let env = [("CONCORD_PASSPHRASE", PASS)];
    ok(
        &concord(&["--db", &db, "study", "encrypt"], &env),
        "encrypt",
    );
    let appendix = dir.path().join("appendix");
    let out = concord(
        &[
            "--db",
            &db,
            "--json",
            "export",
            "methods",
            "--out",
            appendix.to_str().unwrap(),
        ],
        &env,
    );
    let doc: serde_json::Value = serde_json::from_str(&ok(&out, "methods")).expect("JSON");
    assert!(
        stderr(&out).contains("plain, unencrypted"),
        "stderr says the appendix is plain: {}",
        stderr(&out)
    );
    assert!(
        doc["warning"].as_str().is_some_and(|w| w.contains("plain")),
        "the JSON gains a warning field: {doc}"
    );
    assert!(
        doc["written"].as_array().is_some_and(|w| w.len() == 17),
        "the existing field still lists the appendix's files (the demo's sixteen and its table \
         by turn): {doc}"
    );
}

#[test]
fn study_encrypt_encrypts_the_desktop_apps_plain_backups_and_says_so() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let db = demo(dir.path());
    let data = dir.path().join("data");
    let config = dir.path().join("config");
    let root = data.join("org.concord.desktop").join("backups");
    let folder = concord_core::app::backup::study_folder(&root, Path::new(&db));
    std::fs::create_dir_all(&folder).expect("backup folder");
    // A backup the desktop app took while the study was plain: a plain copy of it.
    let plain = folder.join(concord_core::app::backup::file_name(1_000));
    std::fs::copy(&db, &plain).expect("a plain backup");
    let env = [
        ("CONCORD_PASSPHRASE", PASS),
        ("XDG_DATA_HOME", data.to_str().unwrap()),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
    ];
    let out = ok(
        &concord(&["--db", &db, "study", "encrypt"], &env),
        "encrypt",
    );
    assert!(
        out.contains("1 plain backup(s) taken before encryption were encrypted"),
        "the CLI says what it did to the backups: {out}"
    );
    assert!(
        !std::fs::read(&plain)
            .expect("backup bytes")
            .starts_with(b"SQLite format 3\0"),
        "the backup is no longer plain SQLite"
    );
}

#[test]
fn a_reader_that_stops_early_ends_the_output_without_a_panic() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    // The demo's full agreement report is larger (about 170 KB as JSON) than a pipe holds, so
    // the writer is still writing when the reader goes.
    let full = ["agreement", "--rubric", "mentalbench", "--method", "full"];
    for json in [true, false] {
        let mut args = vec!["--db", db.as_str()];
        args.extend(full);
        if json {
            args.push("--json");
        }
        let mut child = command(&args, &[])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("concord starts");
        let mut stdout = child.stdout.take().expect("its stdout");
        let mut first = [0u8; 16];
        stdout
            .read_exact(&mut first)
            .expect("the report starts to come out");
        // As `head -c 16` does: read a little, then close the pipe.
        drop(stdout);
        let out = child.wait_with_output().expect("concord ends");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked") && out.status.code() != Some(101),
            "{args:?}: a closed pipe is not a crash ({:?}): {stderr}",
            out.status
        );
    }
}
