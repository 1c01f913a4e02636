//! Judges mark evidence: a run with `spans` lists the rubric's codes in its prompt and asks for
//! `"spans": [{"code", "quote"}]`; the loopback judge server quotes each reply's first sentence
//! exactly, the same words with their spaces doubled, and words the reply never said; the first
//! is located exactly, the second whitespace-insensitively at the same characters, the third kept
//! unlocated and listed (never guessed) — in free-text and structured replies alike; a rubric
//! without codes refuses the option; a run without it asks as before.

use crate::judge_history::run;
use concord_core::judge::spans::unlocated;
use concord_core::judge::{open_run, JudgeError, ProviderKind, RunSettings};
use concord_core::outputs::export::spans::write_spans_csv;
use concord_core::rubric::builtin;
use concord_testsupport::judge_server::{study_with_items, FakeJudge, UNFOUND_QUOTE};
use std::sync::atomic::Ordering;
use std::time::Duration;

const ITEMS: u64 = 3;

fn settings(server: &FakeJudge, structured: bool) -> RunSettings {
    let mut s = RunSettings::new(
        ProviderKind::OpenaiCompatible,
        &server.base_url(),
        "span-judge",
    );
    s.max_tokens = 256;
    s.spans = true;
    s.structured = structured;
    s
}

/// Run a spans judge over a small MentalBench study and check what it stored.
fn judged(structured: bool) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let (mut store, ids) = study_with_items(
        &dir.path().join("s.concord"),
        &builtin::mentalbench(),
        ITEMS,
    );
    let server = FakeJudge::start(Duration::ZERO, false, None);
    server.state.keep_bodies.store(true, Ordering::SeqCst);
    let run_id = run(&mut store, &settings(&server, structured));

    let sent = server.state.kept_messages();
    assert_eq!(sent.len(), ITEMS as usize, "one call per item");
    for (_, user) in &sent {
        for code in &builtin::mentalbench().codes {
            assert!(
                user.contains(&format!("- {}: ", code.key)),
                "the prompt lists code {}",
                code.key
            );
        }
        assert!(
            user.contains("\"spans\""),
            "the prompt asks for the spans key"
        );
    }
    if structured {
        let bodies = server.state.bodies.lock().expect("bodies").clone();
        for b in &bodies {
            let schema = &b["response_format"]["json_schema"]["schema"];
            assert!(
                schema["required"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|k| k == "spans")),
                "a structured request requires spans: {schema}"
            );
        }
    }

    for (i, id) in ids.iter().enumerate() {
        let spans = store.spans_of_response(*id).expect("spans read");
        assert_eq!(spans.len(), 3, "item {i}: the three quotes are kept");
        let sentence = format!("That sounds hard; item #{i}");
        let want = Some((0, sentence.chars().count() as i64));
        assert_eq!(
            spans[0].range, want,
            "item {i}: the exact quote is at the start"
        );
        assert_eq!(
            spans[1].range, want,
            "item {i}: the spaced quote is found at the same place"
        );
        assert_ne!(spans[0].code, spans[1].code, "each quote keeps its code");
        assert_eq!(
            spans[2].range, None,
            "item {i}: a quote not in the reply is not placed"
        );
        assert_eq!(
            spans[2].quote.as_deref(),
            Some(UNFOUND_QUOTE),
            "and kept as written"
        );
    }
    let listed = unlocated(&store, run_id)
        .expect("status read")
        .expect("the run asked for spans");
    assert_eq!(
        listed.len(),
        ITEMS as usize,
        "judge status lists every unlocated quote"
    );
    assert!(
        listed
            .iter()
            .all(|q| q.quote == UNFOUND_QUOTE && q.turn == 2),
        "as the judge wrote it"
    );
    let mut csv = Vec::new();
    let summary = write_spans_csv(&store, &mut csv).expect("the export writes");
    assert_eq!(
        summary.unlocated, ITEMS as usize,
        "the export counts the unlocated quotes"
    );
    let csv = String::from_utf8(csv).expect("UTF-8");
    assert!(
        csv.contains(&format!(",,,{UNFOUND_QUOTE}\n")),
        "an unlocated quote is exported with empty offsets: {csv}"
    );
    let check = store.verify_audit_chain().expect("chain read");
    assert!(
        check.broken.is_none(),
        "the judge's spans are sealed: {:?}",
        check.broken
    );

    // The same run again (resumed) replaces nothing twice: the judge's spans stay three per item.
    run(&mut store, &settings(&server, structured));
    assert_eq!(
        store.spans_of_response(ids[0]).expect("spans").len(),
        3,
        "a resumed run does not add spans again"
    );
}

#[test]
fn a_free_text_judge_marks_spans_located_or_kept_unlocated() {
    judged(false);
}

#[test]
fn a_structured_judge_marks_spans_in_its_schema() {
    judged(true);
}

#[test]
fn spans_need_a_rubric_with_codes_and_stay_out_of_other_runs() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let (mut store, _) =
        study_with_items(&dir.path().join("s.concord"), &builtin::session_care(), 1);
    let server = FakeJudge::start(Duration::ZERO, false, None);
    let err = open_run(&mut store, &settings(&server, false)).expect_err("no codes: refused");
    assert!(
        matches!(&err, JudgeError::Settings(m) if m.contains("--spans")),
        "the refusal names the option: {err}"
    );

    let dir = tempfile::tempdir().expect("temporary folder");
    let (mut store, ids) =
        study_with_items(&dir.path().join("t.concord"), &builtin::mentalbench(), 1);
    server.state.keep_bodies.store(true, Ordering::SeqCst);
    let mut plain = settings(&server, false);
    plain.spans = false;
    let run_id = run(&mut store, &plain);
    assert!(
        server
            .state
            .kept_messages()
            .iter()
            .all(|(_, user)| !user.contains("Also mark the evidence")),
        "a run without spans does not ask for them"
    );
    assert!(
        store.spans_of_response(ids[0]).expect("spans").is_empty(),
        "and stores none"
    );
    assert_eq!(
        unlocated(&store, run_id).expect("status"),
        None,
        "nor lists any"
    );
}
