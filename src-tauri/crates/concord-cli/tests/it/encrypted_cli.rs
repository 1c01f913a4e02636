//! Encrypted studies and sealed packages from the command line, run as a user would:
//! `concord study encrypt|decrypt|rekey` with passphrases from environment variables only, every
//! command opening an encrypted study with `--passphrase-env`, a missing or wrong passphrase
//! refused with a message saying "passphrase" and the file's bytes unchanged, exports warning that
//! they are plain files, packages exported and merged under a package passphrase — and no
//! passphrase ever printed.

use std::path::Path;
use std::process::{Command, Output};

const PASS: &str = "cli study passphrase 31";
const NEW_PASS: &str = "cli new passphrase 47";
const PACKAGE_PASS: &str = "cli package passphrase 59";

fn concord(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_concord"));
    cmd.env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR);
    cmd.args(args)
        .env_remove("CONCORD_STUDY")
        .env_remove("CONCORD_PASSPHRASE")
        .env_remove("CONCORD_NEW_PASSPHRASE")
        .env_remove("CONCORD_PACKAGE_PASSPHRASE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the concord binary runs")
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} must succeed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Everything a run printed, to check no passphrase is in it.
fn printed(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn is_plain(path: &Path) -> bool {
    std::fs::read(path)
        .unwrap()
        .starts_with(b"SQLite format 3\0")
}

#[test]
fn study_encrypt_rekey_decrypt_and_refused_passphrases_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("study.concord");
    let db = study.to_str().unwrap();
    ok(&concord(&["--db", db, "demo"], &[]), "demo");
    let mut all_output = String::new();

    let out = concord(&["--db", db, "study", "encrypt"], &[]);
    assert!(!out.status.success(), "encrypt needs a passphrase");
    assert!(
        printed(&out).contains("CONCORD_PASSPHRASE"),
        "and names the variable to set: {}",
        printed(&out)
    );
    let out = concord(
        &["--db", db, "study", "encrypt"],
        &[("CONCORD_PASSPHRASE", PASS)],
    );
    all_output += &ok(&out, "encrypt");
    all_output += &printed(&out);
    assert!(!is_plain(&study), "the study file is encrypted");

    let before = std::fs::read(&study).unwrap();
    for (env, what) in [
        (vec![], "no passphrase"),
        (
            vec![("CONCORD_PASSPHRASE", "a wrong passphrase")],
            "a wrong passphrase",
        ),
    ] {
        let out = concord(&["--db", db, "overview"], &env);
        assert!(!out.status.success(), "{what} is refused");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("passphrase"),
            "{what}: the error says passphrase: {err}"
        );
        all_output += &printed(&out);
        let out = concord(&["--db", db, "demo"], &env);
        assert!(!out.status.success(), "demo refuses too with {what}");
        assert_eq!(
            std::fs::read(&study).unwrap(),
            before,
            "{what}: the study's bytes are unchanged"
        );
        assert!(
            !dir.path().join("study.concord-wal").exists(),
            "{what}: no WAL was created"
        );
    }
    let out = concord(
        &[
            "--db",
            db,
            "--passphrase-env",
            "MY_STUDY_KEY",
            "overview",
            "--json",
        ],
        &[("MY_STUDY_KEY", PASS)],
    );
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&out, "overview with --passphrase-env")).unwrap();
    let demo = concord_core::intake::demo::demo_study().expect("the shipped demo");
    assert_eq!(
        doc["conversations"],
        demo.conversations.len() + demo.transcripts.len(),
        "the encrypted demo reads through the named variable"
    );

    let out = concord(
        &["--db", db, "study", "rekey"],
        &[
            ("CONCORD_PASSPHRASE", PASS),
            ("CONCORD_NEW_PASSPHRASE", NEW_PASS),
        ],
    );
    all_output += &ok(&out, "rekey");
    all_output += &printed(&out);
    let old = concord(&["--db", db, "overview"], &[("CONCORD_PASSPHRASE", PASS)]);
    assert!(
        !old.status.success(),
        "after rekey the old passphrase is refused"
    );
    ok(
        &concord(
            &["--db", db, "overview"],
            &[("CONCORD_PASSPHRASE", NEW_PASS)],
        ),
        "overview with the new passphrase",
    );

    // An export of an encrypted study says it is a plain file.
    let csv = dir.path().join("ratings.csv");
    let out = concord(
        &[
            "--db",
            db,
            "export",
            "ratings",
            "--out",
            csv.to_str().unwrap(),
        ],
        &[("CONCORD_PASSPHRASE", NEW_PASS)],
    );
    ok(&out, "export");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("plain, unencrypted file"),
        "the export warns that it is a plain file: {err}"
    );
    all_output += &printed(&out);

    let out = concord(
        &["--db", db, "study", "decrypt"],
        &[("CONCORD_PASSPHRASE", NEW_PASS)],
    );
    all_output += &ok(&out, "decrypt");
    assert!(is_plain(&study), "decrypt leaves a plain study");
    let out = concord(&["--db", db, "overview"], &[]);
    ok(&out, "a plain study opens without a passphrase");
    let out = concord(
        &[
            "--db",
            db,
            "export",
            "ratings",
            "--out",
            csv.to_str().unwrap(),
            // The encrypted study's export is there: replacing it is asked for.
            "--force",
        ],
        &[],
    );
    assert!(
        !String::from_utf8_lossy(&ok(&out, "plain export").into_bytes()).is_empty()
            && !String::from_utf8_lossy(&out.stderr).contains("unencrypted"),
        "a plain study's export carries no warning"
    );
    for secret in [PASS, NEW_PASS] {
        assert!(
            !all_output.contains(secret),
            "no passphrase is ever printed ({secret:?})"
        );
    }
}

#[test]
fn packages_are_sealed_under_the_package_passphrase_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("lead.concord");
    let db = study.to_str().unwrap();
    ok(&concord(&["--db", db, "demo"], &[]), "demo");
    for name in ["Ana", "Boris"] {
        ok(
            &concord(&["--db", db, "expert", "add", name], &[]),
            "expert add",
        );
    }
    ok(
        &concord(&["--db", db, "assign", "--k", "2", "--seed", "3"], &[]),
        "assign",
    );
    let package = dir.path().join("ana.concord");
    let pkg = package.to_str().unwrap();
    let out = concord(
        &[
            "--db", db, "package", "export", "--rater", "Ana", "--out", pkg,
        ],
        &[],
    );
    assert!(
        !out.status.success() && printed(&out).contains("CONCORD_PACKAGE_PASSPHRASE"),
        "a package needs its passphrase: {}",
        printed(&out)
    );
    let out = concord(
        &[
            "--db", db, "package", "export", "--rater", "Ana", "--out", pkg,
        ],
        &[("CONCORD_PACKAGE_PASSPHRASE", PACKAGE_PASS)],
    );
    let text = ok(&out, "package export");
    assert!(
        text.contains("separately") && !printed(&out).contains(PACKAGE_PASS),
        "the lead is told to pass the passphrase on separately, and it is not printed: {text}"
    );
    assert!(!is_plain(&package), "the package is encrypted");
    let out = concord(
        &["--db", db, "package", "merge", pkg],
        &[("CONCORD_PACKAGE_PASSPHRASE", "not the package one")],
    );
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("passphrase"),
        "a wrong package passphrase is refused: {}",
        printed(&out)
    );
    let out = concord(
        &[
            "--db",
            db,
            "package",
            "merge",
            pkg,
            "--package-passphrase-env",
            "ANA_KEY",
        ],
        &[("ANA_KEY", PACKAGE_PASS)],
    );
    let text = ok(&out, "package merge");
    assert!(
        text.contains("Nothing new"),
        "an untouched package merges with nothing new: {text}"
    );
}
