//! `concord demo`, `concord overview` and the agreement table formats, run as a user would.

use std::process::Command;

fn concord(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_concord"))
        .args(args)
        .env_remove("CONCORD_STUDY")
        .output()
        .expect("the concord binary runs")
}

#[test]
fn demo_creates_a_study_and_refuses_foreign_files_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("demo.concord");
    let db = study.to_str().unwrap();
    let out = concord(&["--db", db, "demo", "--json"]);
    assert!(
        out.status.success(),
        "demo must succeed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["created"], true, "a new study was created");
    assert_eq!(
        doc["overview"]["conversations"], 12,
        "the demo has a dozen conversations"
    );

    let again = concord(&["--db", db, "demo"]);
    assert!(again.status.success(), "an existing study is left as it is");
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("left unchanged"),
        "and says so"
    );

    let foreign = dir.path().join("notes.concord");
    std::fs::write(&foreign, "not a study").unwrap();
    let out = concord(&["--db", foreign.to_str().unwrap(), "demo"]);
    assert!(
        !out.status.success(),
        "demo must refuse a file that is not a study"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("notes.concord") && err.contains("not a SQLite"),
        "the error says which file and why: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(&foreign).unwrap(),
        "not a study",
        "the file is untouched"
    );
}

#[test]
fn agreement_table_formats_render_the_demo_study() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("demo.concord");
    let db = study.to_str().unwrap();
    assert!(
        concord(&["--db", db, "demo"]).status.success(),
        "demo study created"
    );
    let latex = concord(&["--db", db, "agreement", "--format", "latex"]);
    assert!(
        latex.status.success(),
        "{}",
        String::from_utf8_lossy(&latex.stderr)
    );
    let text = String::from_utf8_lossy(&latex.stdout);
    assert!(
        text.contains("\\begin{tabular}") && text.contains("Guidance"),
        "a LaTeX table with the attributes: {text}"
    );
    let csv = concord(&[
        "--db",
        db,
        "agreement",
        "--format",
        "csv",
        "--comparison",
        "expert-vs-expert",
        "--level",
        "item",
    ]);
    assert!(
        csv.status.success(),
        "{}",
        String::from_utf8_lossy(&csv.stderr)
    );
    let text = String::from_utf8_lossy(&csv.stdout);
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap_or("")
            .starts_with("criterion,attribute"),
        "a header line"
    );
    assert!(
        lines.any(|l| l.contains("Demo expert A") && l.contains("Demo expert B")),
        "the two demo experts are compared with each other: {text}"
    );
    let md = concord(&[
        "--db",
        db,
        "agreement",
        "--format",
        "md",
        "--icc",
        "a1",
        "--ci",
        "f",
    ]);
    assert!(
        String::from_utf8_lossy(&md.stdout).starts_with("ICC(A,1)"),
        "the chosen form heads the table"
    );
}

#[test]
fn profiles_can_be_restricted_and_reopened() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("demo.concord");
    let db = study.to_str().unwrap();
    assert!(
        concord(&["--db", db, "demo"]).status.success(),
        "demo study created"
    );
    let locked = concord(&["--db", db, "profiles", "--lock", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&locked.stdout).expect("JSON");
    assert_eq!(doc["locked"], true, "--lock restricts profiles");
    assert_eq!(
        doc["profiles"].as_array().map(|a| a.len()),
        Some(2),
        "the two demo experts stay"
    );
    let open = concord(&["--db", db, "profiles", "--unlock", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&open.stdout).expect("JSON");
    assert_eq!(doc["locked"], false, "--unlock reopens them");
}
