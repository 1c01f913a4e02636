//! `concord judge run --repetitions 3` against the loopback judge (whose repetitions disagree in a
//! known way), then `concord judge reliability --json` and `concord judge aggregate`, as a
//! researcher runs them: one object per judge × criterion with every figure, and the aggregate a
//! study keeps.

use concord_core::store::{NewRater, Occasion, RaterKind, RatingInput, StoreError};
use concord_testsupport::judge_server::{self, expected_score, study_with_items, FakeJudge};
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

#[test]
fn reliability_reports_every_judge_and_criterion_after_three_repetitions() {
    let server = FakeJudge::start(Duration::ZERO, false, None);
    server
        .state
        .spread
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("judged.concord");
    {
        let (mut store, ids) = study_with_items(&path, &judge_server::mentalbench(), 9);
        let rubric_id = store.rubrics().expect("rubrics")[0].id;
        let criteria = store.criteria_in_order(rubric_id).expect("criteria");
        store
            .write(|tx| -> Result<(), StoreError> {
                let expert = tx.upsert_rater(&NewRater {
                    kind: RaterKind::Expert,
                    name: "E1",
                    model_id: None,
                    family: None,
                    queue_seed: 1,
                })?;
                for (item, id) in ids.iter().enumerate() {
                    for (k, c) in criteria.iter().enumerate() {
                        tx.set_rating(&RatingInput {
                            rater_id: expert,
                            response_id: *id,
                            criterion_id: c.id,
                            occasion: Occasion::First,
                            value: Some(expected_score(item as u64, k)),
                            raw_value: None,
                            rationale: None,
                            origin: "screen",
                        })?;
                    }
                }
                Ok(())
            })
            .expect("the expert's ratings are written");
    }
    let db = path.to_str().expect("a UTF-8 path");
    let base = server.base_url();
    let run = concord(&[
        "--db",
        db,
        "judge",
        "run",
        "--provider",
        "openai-compatible",
        "--base-url",
        &base,
        "--model",
        "judge-model-1",
        "--rubric",
        "mentalbench",
        "--repetitions",
        "3",
        "--concurrency",
        "1",
        "--json",
    ]);
    assert!(
        run.status.success(),
        "the judge run with three repetitions finishes: {}",
        String::from_utf8_lossy(&run.stderr)
    );

    let out = concord(&["--db", db, "judge", "reliability", "--json"]);
    assert!(
        out.status.success(),
        "the report is made: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON document on stdout");
    let rows = report
        .as_array()
        .expect("a list of judge × criterion objects");
    assert_eq!(rows.len(), 7, "one judge × seven attributes");
    for r in rows {
        let what = r["criterion"].as_str().expect("a criterion");
        assert_eq!(
            r["judge"], "judge-model-1",
            "{what}: named by the judge rater"
        );
        assert_eq!(r["repetitions"], 3, "{what}: K = 3");
        assert_eq!(
            r["aggregate"], "median",
            "{what}: the default aggregate is the median"
        );
        for key in ["alpha", "alpha_ci95", "exact_agreement", "mean_within_sd"] {
            assert!(
                r["consistency"].get(key).is_some(),
                "{what}: consistency carries {key}"
            );
        }
        assert_eq!(
            r["repetitions_needed"]["rows"].as_array().map(Vec::len),
            Some(3),
            "{what}: the repetitions-needed table has k = 1…3"
        );
        assert!(
            (r["bias"]["overall"]["estimate"].as_f64().expect("a bias") - 0.0).abs() < 1e-12,
            "{what}: the median of the spread repetitions is the experts' score, so no bias"
        );
        for key in ["length", "self_preference", "order"] {
            assert!(
                r["bias"][key]["rule"]
                    .as_str()
                    .is_some_and(|s| !s.is_empty()),
                "{what}: the {key} audit states its rule"
            );
        }
    }

    // The long CSV: the median by default, one row per repetition with `--judge-repetitions all`.
    let csv = |extra: &[&str], name: &str| -> Vec<Vec<String>> {
        let out_path = dir.path().join(name);
        let out_arg = out_path.to_str().expect("a UTF-8 path").to_string();
        let mut args = vec![
            "--db",
            db,
            "export",
            "ratings",
            "--format",
            "csv",
            "--out",
            &out_arg,
            "--override-phi",
            "synthetic test texts",
        ];
        args.extend_from_slice(extra);
        let out = concord(&args);
        assert!(
            out.status.success(),
            "the export is written: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(&out_path)
            .expect("the CSV")
            .lines()
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect()
    };
    let plain = csv(&[], "plain.csv");
    assert!(
        !plain[0].contains(&"repetition".to_string()),
        "the default long CSV keeps today's columns"
    );
    let col = |rows: &[Vec<String>], name: &str| {
        rows[0].iter().position(|h| h == name).expect("a column")
    };
    let (kind, value, criterion) = (
        col(&plain, "rater_kind"),
        col(&plain, "value"),
        col(&plain, "criterion"),
    );
    let judge_rows: Vec<&Vec<String>> = plain.iter().filter(|r| r[kind] == "judge").collect();
    assert_eq!(
        judge_rows.len(),
        9 * 7,
        "one judge row per response × attribute by default"
    );
    let all = csv(&["--judge-repetitions", "all"], "all.csv");
    let rep = col(&all, "repetition");
    assert_eq!(rep, all[0].len() - 1, "the repetition column comes last");
    let judge_all: Vec<&Vec<String>> = all.iter().filter(|r| r[kind] == "judge").collect();
    assert_eq!(
        judge_all.len(),
        9 * 7 * 3,
        "one row per repetition with --judge-repetitions all"
    );
    assert!(
        all.iter()
            .filter(|r| r[kind] == "expert")
            .all(|r| r[rep].is_empty()),
        "experts' rows leave the repetition empty"
    );
    // Each default judge value is the median of the three repetitions' values.
    let mut reps: std::collections::HashMap<(String, String), Vec<f64>> = Default::default();
    let response = col(&all, "response_id");
    for r in &judge_all {
        reps.entry((r[response].clone(), r[criterion].clone()))
            .or_default()
            .push(r[value].parse().expect("a number"));
    }
    for r in &judge_rows {
        let mut v = reps[&(r[response].clone(), r[criterion].clone())].clone();
        v.sort_by(f64::total_cmp);
        assert_eq!(
            r[value].parse::<f64>().expect("a number"),
            v[1],
            "the default export writes the median of the repetitions {v:?}"
        );
    }

    let text = concord(&["--db", db, "judge", "reliability"]);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    println!("{text}");
    for line in [
        "self-consistency: α (interval)",
        "k = 3: ICC(A,1)",
        "calibration (repetitions)",
        "length slope",
        "quality band 3",
    ] {
        assert!(
            text.contains(line),
            "the text report shows {line:?}:\n{text}"
        );
    }

    let set = concord(&["--db", db, "judge", "aggregate", "mean", "--json"]);
    assert!(
        set.status.success(),
        "the aggregate is chosen: {}",
        String::from_utf8_lossy(&set.stderr)
    );
    let shown: Value = serde_json::from_slice(&set.stdout).expect("JSON");
    assert_eq!(
        shown["aggregate"], "mean",
        "the study now reads the mean of repetitions"
    );
    let out = concord(&["--db", db, "judge", "reliability", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        report[0]["aggregate"], "mean",
        "the report follows the study's aggregate"
    );
}

/// `concord judge batch-file export` then `import`, as a lead judging offline with vLLM runs it:
/// the file holds one line per call, the answered file comes back matched by custom_id, and
/// `judge status` shows the calls done.
#[test]
fn a_batch_file_goes_out_and_comes_back() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("offline.concord");
    drop(study_with_items(&path, &judge_server::mentalbench(), 5));
    let db = path.to_str().expect("a UTF-8 path");
    let requests = dir.path().join("requests.jsonl");
    let out = concord(&[
        "--db",
        db,
        "judge",
        "batch-file",
        "export",
        "--provider",
        "openai-compatible",
        "--base-url",
        "http://localhost:8000/v1",
        "--model",
        "local-model",
        "--rubric",
        "mentalbench",
        "--out",
        requests.to_str().expect("UTF-8"),
        "--json",
    ]);
    assert!(
        out.status.success(),
        "the export is written: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(written["lines"], 5, "one line per call");
    let answered: String = std::fs::read_to_string(&requests)
        .expect("the request file")
        .lines()
        .rev()
        .map(|l| {
            let r: Value = serde_json::from_str(l).expect("JSON");
            let user = r["body"]["messages"][0]["content"].as_str().expect("a message");
            let item = judge_server::item_in(user).expect("an item");
            let body = serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant",
                "content": judge_server::judge_text(item, false, false)}}]});
            format!(
                "{}\n",
                serde_json::json!({"custom_id": r["custom_id"], "response": {"status_code": 200, "body": body}, "error": null})
            )
        })
        .collect();
    let results = dir.path().join("results.jsonl");
    std::fs::write(&results, answered).expect("the results file");
    let out = concord(&[
        "--db",
        db,
        "judge",
        "batch-file",
        "import",
        "--run",
        &written["run_id"].to_string(),
        results.to_str().expect("UTF-8"),
        "--json",
    ]);
    assert!(
        out.status.success(),
        "the import is read: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        (report["done"].as_u64(), report["missing"].as_u64()),
        (Some(5), Some(0)),
        "every call is recorded: {report}"
    );
    let status = concord(&["--db", db, "judge", "status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("5 done")
            && text.contains("replies: free text — 0 of 5 answered calls unreadable"),
        "the ledger shows the imported calls: {text}"
    );
}
