//! `concord judge run --history N|all` and `concord judge prompt`: a run with `--history 3`
//! against the loopback judge sends the reply at turn 7 after turns 4–6 verbatim; `judge prompt`
//! shows that call's prompt rendered from the study, its `--json` messages hashing to the hash
//! recorded on the call; `--history all` is a run of its own; a depth that is neither a number
//! nor `all` is refused before anything is written. On twelve expert-rated transcripts, a run with
//! `--history 3` sends each reply after exactly its three turns before and is reported by turn
//! number (`agreement --by turn`), each turn's interval resampling the conversations.

use crate::serve_cli::concord;
use concord_testsupport::judge_server::{
    self, prompt_sha256, transcript_block, transcript_study, FakeJudge, TRANSCRIPT,
};
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::Duration;

fn judge(db: &str, base: &str, history: &str) -> std::process::Output {
    concord(&[
        "--db",
        db,
        "judge",
        "run",
        "--provider",
        "openai-compatible",
        "--base-url",
        base,
        "--model",
        "history-judge",
        "--history",
        history,
        "--concurrency",
        "1",
        "--json",
    ])
}

fn recorded_hash(db: &str, run: i64, response: i64) -> String {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(
        "SELECT prompt_sha256 FROM judge_call WHERE run_id = ?1 AND response_id = ?2",
        [run, response],
        |r| r.get(0),
    )
    .expect("the call recorded its prompt's hash")
}

#[test]
fn judge_run_history_3_sends_the_last_three_turns_and_judge_prompt_shows_what_was_sent() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("transcript.concord");
    let (_, replies) = transcript_study(&path, &judge_server::mentalbench());
    let db = path.to_str().unwrap();
    let server = FakeJudge::start(Duration::ZERO, false, None);
    server.state.keep_bodies.store(true, Ordering::SeqCst);

    let out = judge(db, &server.base_url(), "3");
    assert!(
        out.status.success(),
        "the run finishes: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
    let run = report["run_id"].as_i64().expect("the run's id");
    assert_eq!(report["status"]["done"], 3, "the three replies are judged");

    let sent: Vec<String> = server
        .state
        .kept_messages()
        .into_iter()
        .map(|(_, user)| user)
        .filter(|u| u.contains("item #2 Thank you"))
        .collect();
    assert_eq!(sent.len(), 1, "the reply at turn 7 is asked once");
    let expected = format!(
        "The conversation before the reply, oldest turn first:\n<<<\n{}\n>>>\n\n\
         The reply to judge (the assistant's next turn):\n<<<\n{}\n>>>\n\n",
        transcript_block(4, 6),
        TRANSCRIPT[6].2
    );
    assert!(
        sent[0].contains(&expected),
        "turns 4–6 verbatim with their roles, then the reply: {}",
        sent[0]
    );
    assert!(
        !sent[0].contains("[turn 3]"),
        "nothing before the last three turns is sent"
    );

    let item = replies[2].to_string();
    let shown = concord(&[
        "--db", db, "judge", "prompt", "--run", "1", "--item", &item, "--json",
    ]);
    assert!(
        shown.status.success(),
        "judge prompt reads the call: {}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let p: Value = serde_json::from_slice(&shown.stdout).expect("the prompt is JSON");
    let user = p["user"].as_str().expect("the user message");
    assert_eq!(
        user, sent[0],
        "the shown rendering is the message that was sent"
    );
    let recorded = recorded_hash(db, run, replies[2]);
    assert_eq!(
        prompt_sha256(p["system"].as_str(), user),
        recorded,
        "the shown messages hash to the hash recorded on the call"
    );
    assert_eq!(p["prompt_sha256"], recorded.as_str(), "and say so");
    assert_eq!(
        p["recorded_sha256"],
        recorded.as_str(),
        "beside the recorded one"
    );
    assert_eq!(p["matches_recorded"], true, "which matches");
    assert_eq!(p["history"], 3, "the run's depth");
    assert_eq!(p["turns_shown"], 3, "three turns shown");
    assert_eq!(p["turn"], 7, "the reply's turn");

    let text = concord(&["--db", db, "judge", "prompt", "--run", "1", "--item", &item]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("Prompt SHA-256: {recorded}"))
            && text.contains("Recorded when sent: the same"),
        "the text names the hash and that it is the one recorded: {text}"
    );
    assert!(
        text.contains("[turn 6] user:\nSometimes I think everyone would be better off without me."),
        "the text shows the turns: {text}"
    );
}

#[test]
fn history_all_is_a_run_of_its_own_and_a_bad_depth_is_refused() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("transcript.concord");
    let (_, replies) = transcript_study(&path, &judge_server::mentalbench());
    let db = path.to_str().unwrap();
    let server = FakeJudge::start(Duration::ZERO, false, None);

    for bad in ["many", "-1", "2.5"] {
        let out = judge(db, &server.base_url(), bad);
        assert!(!out.status.success(), "--history {bad} is refused");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--history") && err.contains("all"),
            "the refusal names the option and what it takes: {err}"
        );
    }
    let runs = concord(&["--db", db, "judge", "status", "--json"]);
    assert_eq!(
        serde_json::from_slice::<Value>(&runs.stdout).unwrap(),
        serde_json::json!([]),
        "a refused depth wrote no run"
    );

    let first = judge(db, &server.base_url(), "3");
    assert!(first.status.success(), "a run with three turns");
    let all = judge(db, &server.base_url(), "all");
    assert!(
        all.status.success(),
        "a run with every turn: {}",
        String::from_utf8_lossy(&all.stderr)
    );
    let report: Value = serde_json::from_slice(&all.stdout).unwrap();
    assert_eq!(report["run_id"], 2, "another depth is another run");
    let p: Value = serde_json::from_slice(
        &concord(&[
            "--db",
            db,
            "judge",
            "prompt",
            "--run",
            "2",
            "--item",
            &replies[2].to_string(),
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(p["history"], "all", "the run's depth is all");
    assert!(
        p["user"]
            .as_str()
            .unwrap()
            .contains(&format!("<<<\n{}\n>>>", transcript_block(1, 6))),
        "all six turns before the reply"
    );
    let again = judge(db, &server.base_url(), "all");
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["run_id"], 2, "the same depth resumes its run");
    let missing = concord(&[
        "--db", db, "judge", "prompt", "--run", "2", "--item", "nope",
    ]);
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        !missing.status.success() && err.contains("item “nope” does not exist"),
        "an unknown item is named in the refusal: {err}"
    );
}

#[test]
fn a_judge_run_with_history_3_on_rated_transcripts_is_reported_by_turn() {
    use concord_testsupport::transcript_study::{write_transcripts, TranscriptDesign};
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("rated-transcripts.concord");
    let mut store =
        concord_core::store::Store::create(&path, concord_testsupport::lead_study::clock())
            .expect("a study file");
    // Twelve conversations of replies at turns 2, 4 and 6 and two candidates at turn 8, every
    // item rated by two experts; no judge yet: the loopback judge is run below.
    let design = TranscriptDesign {
        candidates: 2,
        judges: 0,
        item_marks: true,
        ..TranscriptDesign::correlated(12, 35)
    };
    let written = write_transcripts(&mut store, &design);
    drop(store);
    let db = path.to_str().unwrap();
    let server = FakeJudge::start(Duration::ZERO, false, None);
    server.state.keep_bodies.store(true, Ordering::SeqCst);

    let out = judge(db, &server.base_url(), "3");
    assert!(
        out.status.success(),
        "the run finishes: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
    assert_eq!(
        report["status"]["done"].as_u64(),
        Some(written.items.len() as u64),
        "every reply and candidate is judged once"
    );

    // The reply at turn 6 of the fourth conversation (its third reply: marks count from 0, five
    // items a conversation) was sent after turns 3–5 exactly, nothing earlier.
    let c = 3;
    let mark = c * 5 + 2;
    let reply = format!("Reply 6 of the helper in conversation {c}. item #{mark}");
    let sent: Vec<String> = server
        .state
        .kept_messages()
        .into_iter()
        .map(|(_, user)| user)
        .filter(|u| u.contains(&reply))
        .collect();
    let expected = format!(
        "The conversation before the reply, oldest turn first:\n<<<\n\
         [turn 3] user:\nUser message 3 of conversation {c}.\n\n\
         [turn 4] assistant:\nReply 4 of the helper in conversation {c}. item #{}\n\n\
         [turn 5] user:\nUser message 5 of conversation {c}.\n>>>\n\n\
         The reply to judge (the assistant's next turn):\n<<<\n{reply}\n>>>\n\n",
        mark - 1
    );
    assert!(
        sent.iter()
            .any(|u| u.contains(&expected) && !u.contains("[turn 2]")),
        "the reply at turn 6 is sent after turns 3–5 verbatim, in order, with their roles, and \
         nothing before them: {sent:?}"
    );

    let by_turn = crate::reviewer_study_cli::json(
        &path,
        &[
            "agreement",
            "--rubric",
            "mentalbench",
            "--json",
            "--by",
            "turn",
        ],
    );
    let strata = by_turn["strata"].as_array().expect("one stratum per turn");
    let turns: Vec<i64> = strata.iter().filter_map(|s| s["turn"].as_i64()).collect();
    assert_eq!(turns, vec![2, 4, 6, 8], "the judged turns, in order");
    for s in strata {
        let rows = s["rows"].as_array().expect("each turn has rows");
        assert_eq!(rows.len(), 7, "the history judge on every attribute: {s}");
        for row in rows {
            assert_eq!(
                row["judge"], "history-judge",
                "the rows are the judge that ran with three turns of history: {row}"
            );
            assert_eq!(
                (row["ci_method"].as_str(), row["n_clusters"].as_u64()),
                (Some("cluster"), Some(12)),
                "its interval resamples the twelve conversations: {row}"
            );
            assert!(
                row["icc_c1"].is_f64() && row["ci95"][0].is_f64() && row["ci95"][1].is_f64(),
                "the judge's values vary, so each turn has figures: {row}"
            );
        }
    }
}
