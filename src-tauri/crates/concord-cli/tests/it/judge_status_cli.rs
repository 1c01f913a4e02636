//! `concord judge status` names the models the provider says answered each run: `--json` gives
//! every run its status keys with `answering_models` (`model`, `system_fingerprint`, `calls`) and
//! `model_changed`, and the text says which models answered and whether that is a change.

use crate::serve_cli::concord;
use concord_testsupport::judge_server::{self, study_with_items, AnswerAs, Answering, FakeJudge};
use serde_json::Value;
use std::time::Duration;

/// `concord judge run` of the MentalBench rubric with `model` against `base`, one call at a time.
fn judge(db: &str, base: &str, model: &str) {
    let run = concord(&[
        "--db",
        db,
        "judge",
        "run",
        "--provider",
        "openai-compatible",
        "--base-url",
        base,
        "--model",
        model,
        "--rubric",
        "mentalbench",
        "--concurrency",
        "1",
        "--json",
    ]);
    assert!(
        run.status.success(),
        "the judge run finishes: {}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn judge_status_names_the_models_that_answered_each_run() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("judged.concord");
    drop(study_with_items(&path, &judge_server::mentalbench(), 5));
    let db = path.to_str().expect("a UTF-8 path");

    // Run 1: a server that names nothing. Run 2: the asked model for 3 replies, then another.
    let silent = FakeJudge::start(Duration::ZERO, false, None);
    judge(db, &silent.base_url(), "judge-a");
    let switching = FakeJudge::start(Duration::ZERO, false, None);
    switching.state.answer_as(Answering {
        first: Some(AnswerAs::new("judge-b", Some("fp_1"))),
        then: Some((4, AnswerAs::new("judge-b-mini", Some("fp_2")))),
    });
    judge(db, &switching.base_url(), "judge-b");

    let out = concord(&["--db", db, "judge", "status", "--json"]);
    assert!(
        out.status.success(),
        "the status is read: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs: Value = serde_json::from_slice(&out.stdout).expect("one JSON document on stdout");
    let runs = runs.as_array().expect("a list of runs");
    assert_eq!(runs.len(), 2, "two runs, one per model asked for");
    for r in runs {
        for key in ["id", "model", "done", "failed", "cost_usd", "prompt_sha256"] {
            assert!(
                r.get(key).is_some(),
                "the status keys scripts already read stay beside the new ones: {key} in {r}"
            );
        }
        for m in r["answering_models"]
            .as_array()
            .expect("answering_models is a list")
        {
            let mut keys: Vec<&str> = m
                .as_object()
                .expect("an object")
                .keys()
                .map(String::as_str)
                .collect();
            keys.sort_unstable();
            assert_eq!(
                keys,
                ["calls", "model", "system_fingerprint"],
                "each answering model has exactly the contract's keys: {m}"
            );
        }
        assert!(
            r["model_changed"].is_boolean(),
            "model_changed is true or false: {r}"
        );
    }
    let (silent_run, switched_run) = (&runs[0], &runs[1]);
    assert_eq!(
        silent_run["model"], "judge-a",
        "runs are listed oldest first"
    );
    assert_eq!(
        (
            &silent_run["answering_models"],
            &silent_run["model_changed"]
        ),
        (&serde_json::json!([]), &Value::Bool(false)),
        "a provider that names nothing lists no model and is not a change"
    );
    assert_eq!(
        switched_run["answering_models"],
        serde_json::json!([
            {"model": "judge-b", "system_fingerprint": "fp_1", "calls": 3},
            {"model": "judge-b-mini", "system_fingerprint": "fp_2", "calls": 2},
        ]),
        "one call at a time, so call order is reply order: the first 3 replies named the asked \
         model, the last 2 another"
    );
    assert_eq!(
        switched_run["model_changed"], true,
        "a second model (another model, not a version of the asked one) answered"
    );

    let text = concord(&["--db", db, "judge", "status"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("answered by: the provider named no model"),
        "the silent run says so: {text}"
    );
    assert!(
        text.contains("answered by: judge-b [fp_1] (3 calls), judge-b-mini [fp_2] (2 calls) — MODEL CHANGED from the asked judge-b"),
        "the switched run names both models and the change: {text}"
    );
}
