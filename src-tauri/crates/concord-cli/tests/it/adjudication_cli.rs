//! `concord adjudication …`, `concord agreement --reference` and `concord raters quality` run as a
//! user would, on the demo study (two experts who disagree on a few pairs): the JSON contract,
//! the status moving as pairs are resolved, the default reference leaving output byte-identical,
//! and clear refusals.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn concord(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("CONCORD_STUDY")
        .output()
        .expect("the concord binary runs")
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "command must succeed; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("--json prints one JSON document")
}

fn demo() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("demo.concord");
    assert!(
        concord(&db, &["demo"]).status.success(),
        "the demo study is created"
    );
    (dir, db)
}

#[test]
fn discrepancies_resolve_and_status_follow_the_contract() {
    let (_dir, db) = demo();
    let listed = json_of(&concord(&db, &["adjudication", "discrepancies", "--json"]));
    let items = listed["items"].as_array().expect("items is an array");
    assert!(
        !items.is_empty(),
        "the demo's experts disagree on some pairs"
    );
    for item in items {
        assert!(item["item"].is_string(), "item is a string: {item}");
        assert!(
            item["criterion"].is_string(),
            "criterion is a string: {item}"
        );
        assert!(item["reason"].is_string(), "reason is a string: {item}");
        let values = item["values"].as_array().expect("values is an array");
        assert!(values.len() >= 2, "a discrepancy has at least two values");
        assert!(
            values
                .iter()
                .all(|v| v["rater"].is_string() && v["value"].is_i64()),
            "each value names its rater: {item}"
        );
        assert!(
            values.iter().all(|v| v["signature"] == "unsigned"),
            "each value gives its signature state; nobody signed in the demo: {item}"
        );
    }
    let wider = json_of(&concord(
        &db,
        &[
            "adjudication",
            "discrepancies",
            "--likert-gap",
            "4",
            "--json",
        ],
    ));
    assert!(
        wider["items"].as_array().unwrap().len() <= items.len(),
        "a larger gap never lists more pairs"
    );
    let before = json_of(&concord(&db, &["adjudication", "status", "--json"]));
    let unresolved = before["unresolved"].as_u64().unwrap();
    assert_eq!(
        unresolved as usize,
        items.len(),
        "every listed pair is unresolved"
    );

    let first = &items[0];
    let out = concord(
        &db,
        &[
            "adjudication",
            "resolve",
            "--item",
            first["item"].as_str().unwrap(),
            "--criterion",
            first["criterion"].as_str().unwrap(),
            "--value",
            "3",
            "--reason",
            "agreed after discussion",
            "--adjudicator",
            "Dr Lead",
        ],
    );
    assert!(
        out.status.success(),
        "resolve succeeds: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = json_of(&concord(&db, &["adjudication", "status", "--json"]));
    assert_eq!(after["adjudicated"], 1, "one pair adjudicated: {after}");
    assert_eq!(
        after["unresolved"].as_u64().unwrap(),
        unresolved - 1,
        "one fewer unresolved"
    );
    assert_eq!(
        after["unanimous"], before["unanimous"],
        "unanimous pairs unchanged"
    );
    let listed_after = json_of(&concord(&db, &["adjudication", "discrepancies", "--json"]));
    assert_eq!(
        listed_after["items"].as_array().unwrap().len(),
        items.len() - 1,
        "the resolved pair leaves the list"
    );
}

#[test]
fn resolve_refuses_bad_input_with_a_clear_message() {
    let (_dir, db) = demo();
    let out = concord(
        &db,
        &[
            "adjudication",
            "resolve",
            "--item",
            "1",
            "--criterion",
            "helpfulness",
            "--value",
            "9",
            "--reason",
            "x",
            "--adjudicator",
            "y",
        ],
    );
    assert!(!out.status.success(), "an off-scale value is refused");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a level"),
        "the message names the problem: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = concord(
        &db,
        &[
            "adjudication",
            "resolve",
            "--item",
            "1",
            "--criterion",
            "helpfulness",
            "--value",
            "2",
            "--unratable",
            "--reason",
            "x",
            "--adjudicator",
            "y",
        ],
    );
    assert!(
        !out.status.success(),
        "--value and --unratable exclude each other"
    );
    let missing = db.with_file_name("typo.concord");
    let out = concord(&missing, &["adjudication", "status", "--json"]);
    assert!(!out.status.success(), "a missing study is refused");
    assert!(!missing.exists(), "and no file is created");
}

#[test]
fn the_default_reference_is_byte_identical_and_consensus_names_itself() {
    let (_dir, db) = demo();
    let plain = concord(&db, &["agreement", "--json"]);
    let experts = concord(&db, &["agreement", "--reference", "experts", "--json"]);
    assert!(plain.status.success(), "agreement runs");
    assert_eq!(
        plain.stdout, experts.stdout,
        "--reference experts changes nothing"
    );
    let full = json_of(&concord(
        &db,
        &[
            "agreement",
            "--method",
            "full",
            "--reference",
            "consensus",
            "--json",
        ],
    ));
    let cells = full["cells"].as_array().unwrap();
    assert!(
        cells
            .iter()
            .filter(|c| c["comparison"] == "judge_vs_experts")
            .all(|c| c["reference"] == "consensus"),
        "cells against the consensus say so"
    );
}

#[test]
fn raters_quality_reports_every_expert_with_severity_intervals() {
    let (_dir, db) = demo();
    let q = json_of(&concord(&db, &["raters", "quality", "--json"]));
    let experts = q["experts"].as_array().expect("experts is an array");
    assert_eq!(experts.len(), 2, "the demo has two experts");
    for e in experts {
        assert!(e["rater"].is_string(), "each expert is named");
        let criteria = e["criteria"].as_array().unwrap();
        assert!(!criteria.is_empty(), "each expert has criteria");
        for c in criteria {
            assert!(
                c["severity"]["ci95"].is_array() || c["severity"]["ci95"].is_null(),
                "severity carries its interval"
            );
            assert!(
                c["drift"].is_object() && c["test_retest"].is_object(),
                "drift and test–retest are reported"
            );
        }
        assert!(
            e["time"].is_object() && e["straight_lining"].is_object(),
            "time and straight-lining are reported"
        );
    }
}
