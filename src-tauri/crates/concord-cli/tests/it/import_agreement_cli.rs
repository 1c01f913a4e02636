//! `concord import mentalalign DIR` and `concord agreement --method mentalalign --json` exactly as
//! the command-line contract states them: on the released files when the folder sits beside the
//! repository (skipped with a note otherwise), and on a refused import (non-zero exit, message on
//! stderr).

use std::path::PathBuf;
use std::process::Command;

fn concord(db: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("the concord binary runs")
}

#[test]
fn release_table_has_the_contract_keys() {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/data/mentalalign-70k");
    if !dir.join("Human_judge.xlsx").is_file() {
        eprintln!("note: {} is absent; skipping", dir.display());
        return;
    }
    let tmp = tempfile::tempdir().expect("temporary folder");
    let db = tmp.path().join("study.concord");
    let out = concord(
        &db,
        &["import", "mentalalign", dir.to_str().expect("utf-8 path")],
    );
    assert!(
        out.status.success(),
        "import succeeds: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("0 ×231") && summary.contains("6 ×8"),
        "the data-quality summary names the zeros and sixes: {summary}"
    );
    assert!(
        summary.contains("10000 answers have ratings but no text")
            && summary.contains("concord import mentalbench FILE"),
        "the release holds 1,000 conversations × 10 answers and none of their texts: the report \
         counts them and names the import that fills them: {summary}"
    );
    let out = concord(&db, &["agreement", "--method", "mentalalign", "--json"]);
    assert!(out.status.success(), "agreement succeeds");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let rows = rows.as_array().expect("an array of rows");
    assert_eq!(rows.len(), 14, "two judges × seven attributes");
    let keys = [
        "judge",
        "attribute",
        "group",
        "icc_c1",
        "icc_a1",
        "ci95",
        "ci_width",
        "status",
        "bias",
        "mse",
        "n_pairs",
    ];
    for row in rows {
        let object = row.as_object().expect("rows are objects");
        let mut got: Vec<&str> = object.keys().map(String::as_str).collect();
        got.sort();
        let mut want = keys.to_vec();
        want.sort();
        assert_eq!(got, want, "exactly the contract's keys");
    }
    let claude = rows
        .iter()
        .find(|r| r["judge"] == "claude-3-7-sonnet-20250219" && r["attribute"] == "Guidance")
        .expect("Claude-3.7 Guidance row");
    let c1 = claude["icc_c1"].as_f64().expect("a number");
    assert!(
        (c1 - 0.881).abs() <= 0.005,
        "the paper's ICC(C,1) for Claude Guidance, got {c1}"
    );
    assert_eq!(claude["group"], "CSS", "Guidance is a CSS attribute");
    let with_groups = concord(
        &db,
        &["agreement", "--method", "mentalalign", "--groups", "--json"],
    );
    let rows: serde_json::Value =
        serde_json::from_slice(&with_groups.stdout).expect("one JSON document");
    assert_eq!(
        rows.as_array().map(Vec::len),
        Some(18),
        "--groups adds CSS and ARS rows per judge"
    );
}

#[test]
fn a_refused_import_exits_non_zero_and_explains() {
    let tmp = tempfile::tempdir().expect("temporary folder");
    let folder = tmp.path().join("release");
    std::fs::create_dir(&folder).expect("folder");
    std::fs::write(folder.join("Human_judge.xlsx"), "ConvID,context\n1,hi\n").expect("write");
    let db = tmp.path().join("study.concord");
    let out = concord(
        &db,
        &["import", "mentalalign", folder.to_str().expect("path")],
    );
    assert!(!out.status.success(), "a CSV renamed .xlsx is refused");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Human_judge.xlsx") && err.contains("nothing was imported"),
        "stderr names the file and says nothing changed: {err}"
    );
    assert!(out.stdout.is_empty(), "nothing on stdout for an error");
}
