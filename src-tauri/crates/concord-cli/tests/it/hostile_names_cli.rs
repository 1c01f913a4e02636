//! Hostile names and paths through the `concord` binary: a FIFO, device or folder given as the
//! study, names holding terminal escape codes and direction overrides, experts whose names make
//! the same file name, read commands on a study not in WAL mode, and weak passphrases. Each test
//! performs the attack as a user would and checks that the defence holds.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Run `concord args` (no study from the environment), failing instead of hanging when it takes
/// more than `limit`.
fn concord_within(args: &[&str], envs: &[(&str, &str)], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_concord"))
        .args(args)
        .env_remove("CONCORD_STUDY")
        .env_remove("CONCORD_PASSPHRASE")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the concord binary runs");
    let start = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("concord {args:?} must answer within {limit:?}, not wait on the file");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn concord(args: &[&str]) -> Output {
    concord_within(args, &[], Duration::from_secs(120))
}

#[cfg(unix)]
#[test]
fn a_fifo_device_or_folder_given_as_the_study_is_refused_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("pipe.concord");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs")
            .success(),
        "the FIFO is made for the attack"
    );
    let folder = dir.path().join("folder.concord");
    std::fs::create_dir(&folder).expect("folder");
    let cases = [
        (fifo.to_str().expect("utf-8 path"), "a named pipe (FIFO)"),
        (folder.to_str().expect("utf-8 path"), "a folder"),
        ("/dev/null", "a device"),
    ];
    for (db, kind) in cases {
        for command in [
            vec!["overview"],
            vec!["assignment"],
            vec!["audit", "verify"],
            vec!["demo"],
        ] {
            let mut args = vec!["--db", db];
            args.extend(command.iter().copied());
            let out = concord_within(&args, &[], Duration::from_secs(20));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success(),
                "concord {args:?} must refuse {kind}: {err}"
            );
            assert!(
                err.contains(db) && err.contains(kind) && err.contains("not a study file"),
                "concord {args:?}: the error names the path and says it is {kind}: {err}"
            );
        }
    }
    let meta = std::fs::metadata("/dev/null").expect("/dev/null is there");
    assert!(!meta.is_file(), "/dev/null is still a device");
}

/// An expert name that would recolour the terminal, ring its bell and reverse what follows.
const ESCAPING: &str = "Ana\u{1b}[31m\u{7}\u{202e}eeL";
/// An imported rater name whose line break would print a line of its own.
const FORGING: &str = "Eve\nconcord: audit intact";

/// Whether `text` holds a character a terminal would act on instead of show (the layout's line
/// breaks aside).
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            c != '\n'
                && (c.is_control()
                    || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
        })
        .collect()
}

#[test]
fn names_with_escape_codes_and_overrides_are_spelled_out_on_the_terminal() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The study's own file name carries an escape sequence that would retitle the terminal.
    let study = dir.path().join("s\u{1b}]0;pwned\u{7}.concord");
    let db = study.to_str().expect("utf-8 path");
    let run = |args: &[&str]| {
        let mut all = vec!["--db", db];
        all.extend_from_slice(args);
        let out = concord(&all);
        assert!(
            out.status.success(),
            "{all:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    run(&["demo"]);
    run(&["expert", "add", ESCAPING]);
    let items = dir.path().join("items.csv");
    std::fs::write(
        &items,
        "conversation_id,context,response_id,source,text\nc1,I feel low,r1,gpt4o,That sounds hard.\n",
    )
    .expect("items written");
    run(&["import", "long-items", items.to_str().expect("utf-8")]);
    let ratings = dir.path().join("ratings.csv");
    std::fs::write(
        &ratings,
        format!("item,rater,criterion,score\nr1,\"{FORGING}\",guidance,3\nr1,\"{ESCAPING}\",guidance,4\n"),
    )
    .expect("ratings written");
    run(&["import", "long-ratings", ratings.to_str().expect("utf-8")]);
    run(&["assign", "--k", "1", "--seed", "3"]);
    let commands: &[&[&str]] = &[
        &["overview"],
        &["assignment"],
        &["profiles"],
        &["adjudication", "discrepancies", "--likert-gap", "0"],
        &["raters", "quality"],
        &["audit", "log"],
        &["audit", "verify"],
        &["agreement"],
        &["signoff", "status"],
    ];
    for args in commands {
        let mut all = vec!["--db", db];
        all.extend_from_slice(args);
        let out = concord(&all);
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let text = String::from_utf8_lossy(bytes);
            let raw = raw_controls(&text);
            assert!(
                raw.is_empty(),
                "concord {args:?} writes no raw control or direction character to {stream}: {raw:?} in {text}"
            );
        }
    }
    for args in [["overview"], ["assignment"]] {
        let mut all = vec!["--db", db];
        all.extend_from_slice(&args);
        let text = String::from_utf8(concord(&all).stdout).expect("UTF-8");
        assert!(
            text.contains("Ana<U+001B>[31m<U+0007><U+202E>eeL"),
            "concord {args:?} shows the expert with every hidden character spelled out: {text}"
        );
        assert!(
            text.contains("Eve<U+000A>concord: audit intact")
                && !text.lines().any(|l| l.starts_with("concord: audit intact")),
            "concord {args:?}: a line break in a name cannot print a line of its own: {text}"
        );
    }
    let overview = String::from_utf8(concord(&["--db", db, "overview"]).stdout).expect("UTF-8");
    assert!(
        overview.contains("s<U+001B>]0;pwned<U+0007>.concord"),
        "the study's file name is spelled out too: {overview}"
    );
    let json = concord(&["--db", db, "overview", "--json"]);
    let text = String::from_utf8(json.stdout).expect("UTF-8");
    assert!(
        text.contains("\\u001b[31m\\u0007") && !text.contains("<U+"),
        "--json stays JSON, escaped as serde escapes it: {text}"
    );
    let doc: serde_json::Value = serde_json::from_str(&text).expect("one JSON document");
    let raters: Vec<&str> = doc["raters"]
        .as_array()
        .expect("raters")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(
        raters.contains(&ESCAPING) && raters.contains(&FORGING),
        "the JSON document carries the names exactly: {raters:?}"
    );
}

#[test]
fn weak_passphrases_are_refused_by_every_command_that_sets_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = dir.path().join("s.concord");
    let db = study.to_str().expect("utf-8 path");
    let run = |args: &[&str], envs: &[(&str, &str)]| {
        let mut all = vec!["--db", db];
        all.extend_from_slice(args);
        concord_within(&all, envs, Duration::from_secs(120))
    };
    assert!(run(&["demo"], &[]).status.success(), "demo study made");
    assert!(
        run(&["assign", "--k", "2", "--seed", "3"], &[])
            .status
            .success(),
        "assigned"
    );
    let package = dir.path().join("a.concord");
    let package_out = package.to_str().expect("utf-8");
    let weak = "aaaaaaaa";
    let attempts: Vec<(Vec<&str>, &str)> = vec![
        (vec!["study", "encrypt"], "CONCORD_PASSPHRASE"),
        (
            vec![
                "profiles",
                "--lock",
                "--lead-passphrase-env",
                "CONCORD_LEAD",
            ],
            "CONCORD_LEAD",
        ),
        (
            vec!["signoff", "passphrase", "--rater", "Demo expert A"],
            "CONCORD_SIGNING_PASSPHRASE",
        ),
        (
            vec![
                "package",
                "export",
                "--rater",
                "Demo expert A",
                "--out",
                package_out,
            ],
            "CONCORD_PACKAGE_PASSPHRASE",
        ),
    ];
    for (args, var) in &attempts {
        let before = std::fs::read(&study).expect("read the study");
        let out = run(args, &[(var, weak)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "concord {args:?} refuses the passphrase {weak:?}: {err}"
        );
        assert!(
            err.contains("passphrase")
                && err.contains("too easy to guess")
                && err.contains("random words"),
            "concord {args:?}: the error says why and what to do: {err}"
        );
        assert!(
            !err.contains(weak),
            "concord {args:?}: the refused passphrase is never printed: {err}"
        );
        assert!(
            std::fs::read(&study).expect("read the study") == before,
            "concord {args:?}: a refused passphrase leaves the study as it was"
        );
    }
    assert!(
        !package.exists(),
        "no package was written under a weak passphrase"
    );
    let strong = "plinth orbit savvy gazebo tundra";
    for (args, var) in &attempts {
        let out = run(args, &[(var, strong), ("CONCORD_PASSPHRASE", strong)]);
        assert!(
            out.status.success(),
            "concord {args:?} takes a diceware passphrase: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run(
        &["study", "rekey"],
        &[
            ("CONCORD_PASSPHRASE", strong),
            ("CONCORD_NEW_PASSPHRASE", "password1"),
        ],
    );
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("too easy to guess"),
        "re-keying to a weak passphrase is refused: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The bytes, modification time and sibling files of a study.
fn snapshot(study: &std::path::Path) -> (Vec<u8>, std::time::SystemTime, Vec<String>) {
    let bytes = std::fs::read(study).expect("read the study");
    let mtime = std::fs::metadata(study)
        .and_then(|m| m.modified())
        .expect("mtime");
    let mut names: Vec<String> = std::fs::read_dir(study.parent().expect("folder"))
        .expect("list the folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    (bytes, mtime, names)
}

#[test]
fn read_commands_never_change_a_study_that_is_not_in_wal_mode() {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = dir.path().join("s.concord");
    let db = study.to_str().expect("utf-8 path");
    for args in [
        vec!["--db", db, "demo"],
        vec!["--db", db, "assign", "--k", "2", "--seed", "3"],
    ] {
        assert!(
            concord(&args).status.success(),
            "{args:?} sets the study up"
        );
    }
    // A study written by another tool, or copied, may be in the rollback-journal mode.
    let conn = rusqlite::Connection::open(&study).expect("plain SQLite opens it");
    let mode: String = conn
        .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))
        .expect("journal mode set");
    assert_eq!(mode, "delete", "the study is now in DELETE journal mode");
    drop(conn);
    let reads: &[&[&str]] = &[
        &["overview"],
        &["overview", "--json"],
        &["assignment"],
        &["profiles"],
        &["agreement"],
        &["agreement", "--method", "mentalalign", "--json"],
        &["audit", "verify"],
        &["audit", "log"],
        &["raters", "quality"],
        &["adjudication", "discrepancies"],
        &["adjudication", "status"],
        &["calibration", "status"],
        &["signoff", "list"],
        &["judge", "status"],
    ];
    for args in reads {
        let before = snapshot(&study);
        // A coarse file-system clock would hide a rewrite within the same tick.
        std::thread::sleep(Duration::from_millis(20));
        let mut all = vec!["--db", db];
        all.extend_from_slice(args);
        let out = concord(&all);
        assert!(
            out.status.success(),
            "concord {args:?} reads the study: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let after = snapshot(&study);
        assert!(
            after.0 == before.0,
            "concord {args:?} leaves every byte of the study as it was"
        );
        assert_eq!(
            after.1, before.1,
            "concord {args:?} leaves the study's modification time as it was"
        );
        assert_eq!(
            after.2, before.2,
            "concord {args:?} leaves no journal or other file beside the study"
        );
    }
    let conn = rusqlite::Connection::open(&study).expect("opens");
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("journal mode read");
    assert_eq!(mode, "delete", "no read command switched the journal mode");
}
