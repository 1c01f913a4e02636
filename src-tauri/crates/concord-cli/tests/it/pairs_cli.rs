//! The pairwise command-line contract as a researcher runs it against the loopback judge:
//! `concord pairs design --per-conversation N --seed S`, `pairs assign --k K --seed S`,
//! `pairs status --json`, `judge run … --rubric mentalbench-pairs --both-orders`,
//! `agreement --pairwise --json` (per rater and criterion the strength of each source with its
//! interval; per judge position consistency and P(first wins) with its interval) and the long CSV
//! with `left`, `right`, `winner` and `position_left`.

use concord_testsupport::judge_server::{pair_study, FakeJudge};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

fn concord(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .env_remove("CONCORD_STUDY")
        .args(args)
        .output()
        .expect("the concord binary runs")
}

fn ok(out: &std::process::Output, what: &str) -> Value {
    assert!(
        out.status.success(),
        "{what} succeeds: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

#[test]
fn pairs_are_designed_assigned_judged_both_ways_and_reported() {
    let server = FakeJudge::start(Duration::ZERO, false, None);
    server
        .state
        .position_bias
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pairs.concord");
    {
        let mut store = pair_study(&path, 12, 10);
        concord_testsupport::judge_server::add_experts(&mut store, &["E1", "E2"]);
    }
    let db = path.to_str().unwrap();
    let design = ok(
        &concord(&[
            "--db",
            db,
            "--json",
            "pairs",
            "design",
            "--per-conversation",
            "6",
            "--seed",
            "4",
        ]),
        "pairs design",
    );
    assert_eq!(
        design["pairs"], 72,
        "six pairs from each of twelve conversations"
    );
    assert_eq!(
        design["rubric"], "mentalbench-pairs",
        "the shipped pairwise rubric's id"
    );
    let again = concord(&["--db", db, "pairs", "design", "--all"]);
    assert!(
        !again.status.success() && String::from_utf8_lossy(&again.stderr).contains("drawn once"),
        "a second design is refused, saying why"
    );
    let assigned = ok(
        &concord(&[
            "--db", db, "--json", "pairs", "assign", "--k", "2", "--seed", "9",
        ]),
        "pairs assign",
    );
    assert_eq!(assigned["k"], 2, "exactly two experts per pair");
    let base = server.base_url();
    ok(
        &concord(&[
            "--db",
            db,
            "--json",
            "judge",
            "run",
            "--provider",
            "openai-compatible",
            "--base-url",
            &base,
            "--model",
            "pair-judge",
            "--rubric",
            "mentalbench-pairs",
            "--both-orders",
            "--concurrency",
            "2",
        ]),
        "the pairwise judge run",
    );
    assert_eq!(
        server
            .state
            .pair_requests
            .load(std::sync::atomic::Ordering::SeqCst),
        144,
        "72 pairs asked both ways round"
    );
    let status = ok(
        &concord(&["--db", db, "--json", "pairs", "status"]),
        "pairs status",
    );
    let judge = status["raters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["rater"] == "pair-judge")
        .expect("the judge is listed");
    assert_eq!(
        (judge["pairs"].as_u64(), judge["done"].as_u64()),
        (Some(72), Some(72)),
        "every pair judged on every criterion"
    );

    let report = ok(
        &concord(&[
            "--db",
            db,
            "--json",
            "agreement",
            "--pairwise",
            "--resamples",
            "100",
        ]),
        "agreement --pairwise",
    );
    let boards = report["leaderboards"].as_array().unwrap();
    assert_eq!(
        boards.len(),
        8,
        "one judge, eight criteria (no expert has judged yet)"
    );
    for b in boards {
        assert_eq!(b["rater"], "pair-judge", "the judge's own leaderboard");
        for s in b["sources"].as_array().unwrap() {
            assert!(
                s["source"].is_string() && s["strength"].is_number(),
                "a strength per source: {s}"
            );
            assert!(
                s["ci_low"].is_number() && s["ci_high"].is_number(),
                "with its interval: {s}"
            );
        }
    }
    let position = report["position"].as_array().unwrap();
    assert_eq!(
        position.len(),
        8,
        "position figures per judge and criterion"
    );
    for p in position {
        let share = p["consistency"]["share"].as_f64().unwrap();
        let first = p["bias"]["p_first"].as_f64().unwrap();
        assert!(
            share < 1.0,
            "{}: the biased judge flips on equal answers: {share}",
            p["criterion"]
        );
        assert!(
            first > 0.5,
            "{}: and favours the answer shown first: {first}",
            p["criterion"]
        );
        assert!(
            p["bias"]["ci"][0].as_f64().unwrap() <= first
                && first <= p["bias"]["ci"][1].as_f64().unwrap(),
            "P(first wins) lies in its interval"
        );
    }

    let csv_path = dir.path().join("ratings.csv");
    ok(
        &concord(&[
            "--db",
            db,
            "export",
            "ratings",
            "--format",
            "csv",
            "--out",
            csv_path.to_str().unwrap(),
        ]),
        "the ratings export",
    );
    let text = std::fs::read_to_string(&csv_path).unwrap();
    let header = text.lines().next().unwrap();
    for col in ["left", "right", "winner", "position_left"] {
        assert!(
            header.split(',').any(|h| h == col),
            "the long CSV has {col}: {header}"
        );
    }
    assert_eq!(text.lines().count() - 1, 144 * 8, "one row per verdict");
}
