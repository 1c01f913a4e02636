//! `concord demo`, `concord overview` and the agreement table formats, run as a user would.

use std::process::Command;

fn concord(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
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
    let demo = concord_core::intake::demo::demo_study().expect("the shipped demo");
    assert_eq!(
        doc["overview"]["conversations"],
        demo.conversations.len() + demo.transcripts.len(),
        "the demo has its dozen single-turn conversations and its multi-turn ones"
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
    let refused = concord(&["--db", db, "profiles", "--lock", "--json"]);
    assert!(
        !refused.status.success(),
        "a lock without a lead passphrase would leave rater sessions nothing to guard them"
    );
    let unset = Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .args(["--db", db, "profiles", "--lock"])
        .args(["--lead-passphrase-env", "CONCORD_TEST_LEAD"])
        .env_remove("CONCORD_STUDY")
        .env_remove("CONCORD_TEST_LEAD")
        .output()
        .expect("the concord binary runs");
    assert!(
        String::from_utf8_lossy(&unset.stderr).contains("CONCORD_TEST_LEAD"),
        "an unset variable is named in the error"
    );
    let locked = Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .args(["--db", db, "profiles", "--lock", "--json"])
        .args(["--lead-passphrase-env", "CONCORD_TEST_LEAD"])
        .env_remove("CONCORD_STUDY")
        .env("CONCORD_TEST_LEAD", "lead ferry lantern 82")
        .output()
        .expect("the concord binary runs");
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

#[test]
fn commands_that_read_a_study_refuse_a_missing_file_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo.concord");
    let db = typo.to_str().unwrap();
    let elsewhere = dir.path().join("in.concord");
    let elsewhere = elsewhere.to_str().unwrap();
    let commands: [&[&str]; 12] = [
        &["agreement", "--method", "mentalalign", "--json"],
        &["overview"],
        &[
            "profiles",
            "--lock",
            "--lead-passphrase-env",
            "CONCORD_LEAD",
        ],
        &["judge", "status"],
        &["judge", "failures", "1"],
        &["assignment"],
        &["assign", "--k", "2", "--seed", "1"],
        &["expert", "add", "Ana"],
        &["export", "ratings", "--format", "csv"],
        &["export", "sheet", "--rater", "Ana"],
        &["package", "merge", elsewhere],
        &["sheet", "import", elsewhere],
    ];
    for args in commands {
        let mut full = vec!["--db", db];
        full.extend_from_slice(args);
        let out = concord(&full);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "`concord {}` must fail on a study file that does not exist",
            args.join(" ")
        );
        assert!(
            err.contains("typo.concord") && err.contains("no such study file"),
            "`concord {}` names the missing file and says so: {err}",
            args.join(" ")
        );
        assert!(
            !typo.exists(),
            "`concord {}` must not create the missing study",
            args.join(" ")
        );
        assert!(
            !dir.path().join("typo-exports").exists(),
            "`concord {}` must not create an export folder for it",
            args.join(" ")
        );
    }
    // The explicit create paths still create: the demo, and an import into a new file.
    let demo = dir.path().join("new-demo.concord");
    let out = concord(&["--db", demo.to_str().unwrap(), "demo"]);
    assert!(
        out.status.success() && demo.exists(),
        "`concord demo` creates the study it is pointed at: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let items = dir.path().join("items.csv");
    std::fs::write(
        &items,
        "conversation_id,context,response_id,source,text\nc1,I feel low,c1-0,original,Talk to me\n",
    )
    .unwrap();
    let fresh = dir.path().join("fresh.concord");
    let out = concord(&[
        "--db",
        fresh.to_str().unwrap(),
        "import",
        "long-items",
        items.to_str().unwrap(),
    ]);
    assert!(
        out.status.success() && fresh.exists(),
        "an import into a new file creates the study: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn exports_without_out_go_to_the_study_export_folder() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("lab.concord");
    let db = study.to_str().unwrap();
    assert!(
        concord(&["--db", db, "demo"]).status.success(),
        "the demo study is created"
    );
    let out = concord(&["--db", db, "export", "ratings", "--format", "csv"]);
    assert!(
        out.status.success(),
        "an export without --out succeeds: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = dir.path().join("lab-exports").join("lab-ratings-long.csv");
    assert!(
        expected.exists(),
        "the default file is the one the window writes: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("lab-ratings-long.csv"),
        "the path written is printed"
    );
}
