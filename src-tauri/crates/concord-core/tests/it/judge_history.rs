//! Judges see the history: a reply of a transcript is judged after the last N turns before it
//! (`RunSettings::history`, every role counted) given verbatim and in order as `[turn N] ROLE:`
//! blocks, a session item after its whole conversation, a pair of candidates after the one
//! history they share; batch files, provider batches, structured replies and repetitions send the
//! same prompt; every call's prompt rendered again from the study hashes to the hash recorded
//! when it was sent; and a single-turn item is asked byte for byte as before transcripts existed
//! (the fixtures were rendered by the code of that release). Every request goes to the loopback
//! judge server of the test support crate.

use concord_core::judge::batch_file::{export_batch_file, import_batch_file};
use concord_core::judge::{
    self, call_prompt, execute_run, open_run, preview_run, CallChoice, CancellationToken,
    Execution, HistoryDepth, ProviderKind, RunSettings,
};
use concord_core::rubric::{builtin, Rubric, Scope};
use concord_core::store::{
    NewConversation, NewSource, NewTurn, Role, SourceKind, Store, StoreError,
};
use concord_core::workflow::pairs::{self, DesignMethod};
use concord_testsupport::judge_server::{
    self, item_in, judge_text, prompt_sha256, transcript_block, FakeJudge, TRANSCRIPT,
};
use concord_testsupport::lead_study::clock;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The single-turn MentalBench prompt the code before transcripts rendered (see the fixture's
/// folder): the frame of a reply prompt is compared with it.
const SINGLE_TURN: &str = include_str!("../fixtures/judge_prompts/mentalbench.user.txt");

struct Study {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    store: Store,
}

fn new_study() -> Study {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("history.concord");
    let store = Store::create(&path, clock()).expect("a study is created");
    Study {
        _dir: dir,
        path,
        store,
    }
}

/// A study of `rubric` holding the shared transcript (its replies' item ids in turn order).
fn transcript_study(rubric: &Rubric) -> (Study, Vec<i64>) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("history.concord");
    let (store, replies) = judge_server::transcript_study(&path, rubric);
    (
        Study {
            _dir: dir,
            path,
            store,
        },
        replies,
    )
}

/// The MentalBench prompt of a reply after `history` (a transcript block): the conversation
/// frame's opening, then the single-turn prompt's criteria, rules and reply format unchanged but
/// for naming the reply instead of the answer.
fn mentalbench_reply_prompt(history: &str, reply: &str) -> String {
    let criteria = &SINGLE_TURN[SINGLE_TURN
        .find("Attributes and what each score means:")
        .expect("the fixture lists the attributes")..];
    format!(
        "You are an experienced clinical psychologist reviewing how well a reply supports a \
         person in a conversation with a mental-health help service. Judge only the reply below, \
         in the light of the conversation before it, on every attribute listed, using whole \
         numbers.\n\nThe conversation before the reply, oldest turn first:\n<<<\n{history}\n>>>\n\n\
         The reply to judge (the assistant's next turn):\n<<<\n{reply}\n>>>\n\n{}",
        criteria.replace(
            "do not let the answer's length",
            "do not let the reply's length"
        )
    )
}

fn settings(server: &FakeJudge, history: HistoryDepth) -> RunSettings {
    let mut s = RunSettings::new(
        ProviderKind::OpenaiCompatible,
        &server.base_url(),
        "history-judge",
    );
    s.max_tokens = 256;
    s.history = history;
    s
}

fn server() -> FakeJudge {
    let server = FakeJudge::start(Duration::ZERO, false, None);
    server.state.keep_bodies.store(true, Ordering::SeqCst);
    server
}

/// Open and execute run `s` to its end; every call must be answered with scores.
pub(crate) fn run(store: &mut Store, s: &RunSettings) -> i64 {
    let run = open_run(store, s).expect("the run opens").run_id;
    let report = execute_run(
        store,
        run,
        &Execution {
            concurrency: 2,
            batch_poll_ms: 10,
            ..Execution::default()
        },
        None,
        &CancellationToken::new(),
        &mut |_| {},
    )
    .expect("the run executes");
    assert_eq!(
        report.status.done, report.status.total,
        "every call of run {run} is answered with scores"
    );
    run
}

/// The user message the server was sent that holds `marker`.
fn sent_with(server: &FakeJudge, marker: &str) -> Vec<(Option<String>, String)> {
    server
        .state
        .kept_messages()
        .into_iter()
        .filter(|(_, user)| user.contains(marker))
        .collect()
}

/// (call id, recorded prompt hash) of every call of a run.
fn recorded(path: &std::path::Path, run: i64) -> Vec<(i64, Option<String>)> {
    let c = rusqlite::Connection::open(path).unwrap();
    let mut q = c
        .prepare("SELECT id, prompt_sha256 FROM judge_call WHERE run_id = ?1 ORDER BY id")
        .unwrap();
    let rows = q
        .query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    rows
}

/// Every call of `run`: its prompt rendered again from the study hashes to the hash recorded
/// when it was sent, and is a prompt the server received.
fn assert_reproducible(s: &Study, run: i64, server: &FakeJudge) {
    let sent: Vec<String> = server
        .state
        .kept_messages()
        .iter()
        .map(|(system, user)| prompt_sha256(system.as_deref(), user))
        .collect();
    for (call, hash) in recorded(&s.path, run) {
        let shown = call_prompt(&s.store, run, &CallChoice::Call(call)).expect("the call renders");
        let hash = hash.unwrap_or_else(|| panic!("call {call} recorded the hash of its prompt"));
        assert_eq!(
            shown.prompt_sha256, hash,
            "call {call}: the prompt rendered from the study is the one whose hash was recorded"
        );
        assert_eq!(
            prompt_sha256(shown.system.as_deref(), &shown.user),
            hash,
            "call {call}: the shown messages themselves hash to the recorded hash"
        );
        assert_eq!(
            shown.matches_recorded,
            Some(true),
            "call {call}: the rendering says it matches"
        );
        assert!(
            sent.contains(&hash),
            "call {call}: the recorded prompt is one the judge received"
        );
    }
}

#[test]
fn a_reply_at_turn_seven_is_judged_after_its_last_three_turns_verbatim() {
    let server = server();
    let (mut s, replies) = transcript_study(&builtin::mentalbench());
    let settings = settings(&server, HistoryDepth::Last(3));
    let preview = preview_run(&s.store, &settings).expect("the preview");
    assert_eq!(
        (preview.responses, preview.responses_without_text),
        (3, 0),
        "the three replies are judged: a transcript's empty conversation context is not a missing text"
    );
    let run = run(&mut s.store, &settings);

    let seventh = sent_with(&server, "item #2 Thank you");
    assert_eq!(seventh.len(), 1, "the reply at turn 7 is asked once");
    let (system, user) = &seventh[0];
    assert_eq!(system, &None, "MentalBench's prompt has no system message");
    assert_eq!(
        user,
        &mentalbench_reply_prompt(&transcript_block(4, 6), TRANSCRIPT[6].2),
        "turn 7 is asked after turns 4, 5 and 6 exactly as they were written, with their roles"
    );
    assert!(
        user.contains(
            "[turn 4] user:\n  Mostly work. My manager said {{response}} would be \"fine\".\n\n\tAnd then I panic.  \n\n[turn 5] assistant:\n"
        ),
        "spaces, tab, empty line and a slot name inside a turn are sent as written"
    );

    let third = sent_with(&server, "item #0 I'm sorry");
    let third_alone: Vec<_> = third
        .iter()
        .filter(|(_, u)| !u.contains("[turn 3]"))
        .collect();
    assert_eq!(third_alone.len(), 1, "the reply at turn 3 is asked once");
    assert_eq!(
        third_alone[0].1,
        mentalbench_reply_prompt(&transcript_block(1, 2), TRANSCRIPT[2].2),
        "turn 3 has only two turns before it, the system note first, both shown"
    );
    let fifth: Vec<_> = sent_with(&server, "item #1 That sounds")
        .into_iter()
        .filter(|(_, u)| !u.contains("[turn 5]"))
        .collect();
    assert_eq!(
        fifth[0].1,
        mentalbench_reply_prompt(&transcript_block(2, 4), TRANSCRIPT[4].2),
        "turn 5 is asked after turns 2–4: the earlier rated reply is history like any turn"
    );

    let shown = call_prompt(
        &s.store,
        run,
        &CallChoice::Item {
            item: replies[2].to_string(),
            repetition: 1,
        },
    )
    .expect("the prompt of the reply at turn 7");
    assert_eq!(
        (shown.turn, shown.turns_shown, shown.history),
        (Some(7), 3, HistoryDepth::Last(3)),
        "the rendering says where the reply stands and how much history it shows"
    );
    assert_eq!(&shown.user, user, "the rendering is the message sent");
    assert_reproducible(&s, run, &server);
}

#[test]
fn history_all_gives_every_turn_and_each_depth_is_a_run_of_its_own() {
    let server = server();
    let (mut s, _) = transcript_study(&builtin::mentalbench());
    let all = run(&mut s.store, &settings(&server, HistoryDepth::All));
    let seventh = sent_with(&server, "item #2 Thank you");
    assert_eq!(
        seventh[0].1,
        mentalbench_reply_prompt(&transcript_block(1, 6), TRANSCRIPT[6].2),
        "--history all shows turns 1–6 before the reply at turn 7"
    );
    assert_reproducible(&s, all, &server);

    server.state.bodies.lock().unwrap().clear();
    let none = run(&mut s.store, &settings(&server, HistoryDepth::Last(0)));
    assert_ne!(none, all, "another depth is another run");
    assert_eq!(
        sent_with(&server, "item #2 Thank you")[0].1,
        mentalbench_reply_prompt("", TRANSCRIPT[6].2),
        "--history 0 shows the reply alone"
    );

    let again = open_run(&mut s.store, &settings(&server, HistoryDepth::All)).unwrap();
    assert!(
        again.resumed && again.run_id == all,
        "the same depth resumes its run (the depth is in the settings hash)"
    );
    let stored: RunSettings = {
        let c = rusqlite::Connection::open(&s.path).unwrap();
        let json: String = c
            .query_row(
                "SELECT settings_json FROM judge_run WHERE id = ?1",
                [all],
                |r| r.get(0),
            )
            .unwrap();
        serde_json::from_str(&json).unwrap()
    };
    assert_eq!(
        stored.history,
        HistoryDepth::All,
        "the run's settings keep its depth, so a resumed run shows the same turns"
    );
}

#[test]
fn a_session_item_is_judged_on_the_whole_conversation() {
    let server = server();
    let mut rubric = builtin::mentalbench();
    rubric.id = "session-test".into();
    rubric.scope = Scope::Session;
    let mut s = new_study();
    let session = s
        .store
        .write(|tx| {
            let rubric_id = tx.add_rubric(&rubric)?;
            let bot = tx.upsert_source(&NewSource {
                key: "helperbot",
                name: "helperbot",
                family: None,
                kind: SourceKind::Llm,
            })?;
            let c = tx.add_conversation(&NewConversation {
                external_id: "whole",
                rubric_id,
                context: "",
                language: Some("en"),
                category: None,
            })?;
            for (position, role, text, candidate) in [
                (1, Role::System, "A session of item #5.", false),
                (2, Role::User, "I keep failing my exams.", false),
                (3, Role::Assistant, "That is a lot of pressure.", false),
                (4, Role::User, "What should I do?", false),
                (5, Role::Assistant, "candidate one", true),
                (5, Role::Assistant, "candidate two", true),
            ] {
                tx.add_turn(&NewTurn {
                    conversation_id: c,
                    position,
                    role,
                    text,
                    source_id: Some(bot),
                    candidate,
                })?;
            }
            tx.add_item(c, bot, None, None)
        })
        .expect("the session is stored");
    // A depth of one turn does not cut a session: its item is the whole conversation.
    let settings = settings(&server, HistoryDepth::Last(1));
    let preview = preview_run(&s.store, &settings).expect("the preview");
    assert_eq!(
        (preview.responses, preview.responses_without_text),
        (1, 0),
        "a session item has no text of its own by design and is judged, not left out"
    );
    let run = run(&mut s.store, &settings);
    let sent = server.state.kept_messages();
    assert_eq!(sent.len(), 1, "one call for the one session item");
    let criteria = &SINGLE_TURN[SINGLE_TURN.find("Attributes and what").unwrap()..];
    let expected = format!(
        "You are an experienced clinical psychologist reviewing a whole conversation between a \
         person and a mental-health help service. Judge the conversation as a whole, on every \
         attribute listed, using whole numbers.\n\nThe conversation, oldest turn first:\n<<<\n\
         [turn 1] system:\nA session of item #5.\n\n[turn 2] user:\nI keep failing my exams.\n\n\
         [turn 3] assistant:\nThat is a lot of pressure.\n\n[turn 4] user:\nWhat should I do?\n\
         >>>\n\n{}",
        criteria.replace(
            "do not let the answer's length",
            "do not let the conversation's length"
        )
    );
    assert_eq!(
        sent[0].1, expected,
        "the whole conversation in order, its candidates (history only) left out, no reply slot"
    );
    let shown = call_prompt(
        &s.store,
        run,
        &CallChoice::Item {
            item: session.to_string(),
            repetition: 1,
        },
    )
    .unwrap();
    assert_eq!(
        (shown.turn, shown.turns_shown),
        (None, 4),
        "a session item stands for the whole conversation"
    );
    assert_reproducible(&s, run, &server);

    let mut with_reply = settings.clone();
    with_reply.prompt = Some(judge::PromptTemplate {
        format: judge::ReplyFormat::JsonScores,
        system: None,
        user: "{{history}}\n{{response}}".into(),
    });
    assert!(
        matches!(
            preview_run(&s.store, &with_reply),
            Err(judge::JudgeError::Settings(_))
        ),
        "a session rubric's prompt has no reply to show"
    );
}

#[test]
fn two_candidates_are_compared_after_the_same_history() {
    let server = server();
    let mut s = new_study();
    s.store
        .write(|tx| {
            let rubric_id = tx.add_rubric(&builtin::mentalbench())?;
            let mut sources = Vec::new();
            for key in ["s0", "s1", "s2"] {
                sources.push(tx.upsert_source(&NewSource {
                    key,
                    name: key,
                    family: None,
                    kind: SourceKind::Llm,
                })?);
            }
            let c = tx.add_conversation(&NewConversation {
                external_id: "cands",
                rubric_id,
                context: "",
                language: Some("en"),
                category: None,
            })?;
            for (position, role, text) in [
                (1, Role::User, "My sister stopped talking to me."),
                (3, Role::User, "It has been a month now."),
            ] {
                tx.add_turn(&NewTurn {
                    conversation_id: c,
                    position,
                    role,
                    text,
                    source_id: None,
                    candidate: false,
                })?;
            }
            // Turn 2 is a rated reply of s0 alone; turn 4 has three candidates.
            tx.add_item(c, sources[0], Some(2), Some("That must hurt. item #9"))?;
            for (k, source) in sources.iter().enumerate() {
                tx.add_item(
                    c,
                    *source,
                    Some(4),
                    Some(&format!("Candidate reply item #{k}.")),
                )?;
            }
            Ok::<_, StoreError>(())
        })
        .unwrap();
    let design = pairs::design(&mut s.store, None, None, DesignMethod::All, 1).expect("pairs");
    assert_eq!(
        design.pairs, 3,
        "pairs are drawn only among the three candidates at turn 4, never with the reply at turn 2"
    );
    let mut settings = settings(&server, HistoryDepth::Last(2));
    settings.rubric = Some("mentalbench-pairs".into());
    settings.both_orders = true;
    let run = run(&mut s.store, &settings);
    let sent = server.state.kept_messages();
    assert_eq!(sent.len(), 6, "three pairs, each asked both ways round");
    for (_, user) in &sent {
        let head = "You are an experienced clinical psychologist comparing two replies that a \
                    mental-health help service could give at the same point of a conversation. \
                    For each attribute, decide which reply is better, in the light of the \
                    conversation before it.\n\nThe conversation before the replies, oldest turn \
                    first:\n<<<\n[turn 2] assistant:\nThat must hurt. item #9\n\n[turn 3] user:\n\
                    It has been a month now.\n>>>\n\nAnswer A:\n<<<\nCandidate reply item #";
        assert!(
            user.starts_with(head),
            "both candidates follow the same last two turns (turn 2's reply among them): {user}"
        );
        let b = user.find("Answer B:\n<<<\nCandidate reply item #");
        assert!(b.is_some(), "the second candidate is answer B");
    }
    assert_reproducible(&s, run, &server);
}

/// The output line `vllm run-batch` would write for a request line, answered as the loopback
/// judge answers.
fn output_line(request: &Value) -> Value {
    let user = request["body"]["messages"][0]["content"].as_str().unwrap();
    let item = item_in(user).unwrap();
    json!({
        "custom_id": request["custom_id"],
        "response": {"status_code": 200, "body": {
            "id": "c", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": judge_text(item, false, false)}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 40}}},
        "error": null,
    })
}

#[test]
fn a_batch_file_line_carries_the_history_and_its_import_records_the_prompts_hash() {
    let (mut s, replies) = transcript_study(&builtin::mentalbench());
    let mut settings = RunSettings::new(
        ProviderKind::OpenaiCompatible,
        "http://127.0.0.1:9/v1",
        "offline-judge",
    );
    settings.history = HistoryDepth::Last(3);
    let run = open_run(&mut s.store, &settings).unwrap().run_id;
    let mut file = Vec::new();
    export_batch_file(&s.store, run, &mut file).expect("the export");
    let lines: Vec<Value> = String::from_utf8(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "one line per reply");
    let seventh = lines
        .iter()
        .find(|l| {
            l["body"]["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("item #2 Thank you")
        })
        .expect("the reply at turn 7 has its line");
    assert_eq!(
        seventh["body"]["messages"][0]["content"].as_str().unwrap(),
        mentalbench_reply_prompt(&transcript_block(4, 6), TRANSCRIPT[6].2),
        "the line's prompt is the live prompt: the last three turns verbatim, then the reply"
    );
    let before = call_prompt(
        &s.store,
        run,
        &CallChoice::Item {
            item: replies[2].to_string(),
            repetition: 1,
        },
    )
    .unwrap();
    assert_eq!(
        before.recorded_sha256, None,
        "nothing is recorded before the call's reply comes back"
    );

    let output: String = lines
        .iter()
        .map(|l| format!("{}\n", output_line(l)))
        .collect();
    let imported = import_batch_file(&mut s.store, run, || {
        Ok(std::io::Cursor::new(output.clone().into_bytes()))
    })
    .expect("the output file is imported");
    assert_eq!(imported.done, 3, "every reply is scored");
    for line in &lines {
        let user = line["body"]["messages"][0]["content"].as_str().unwrap();
        let call: i64 = line["custom_id"]
            .as_str()
            .unwrap()
            .rsplit('-')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let shown = call_prompt(&s.store, run, &CallChoice::Call(call)).unwrap();
        assert_eq!(
            shown.recorded_sha256.as_deref(),
            Some(prompt_sha256(None, user).as_str()),
            "call {call}: the import records the hash of the prompt its line carried"
        );
        assert_eq!(
            shown.matches_recorded,
            Some(true),
            "call {call}: reproducible"
        );
    }
}

#[test]
fn provider_batches_structured_replies_and_repetitions_send_the_same_history() {
    let server = server();
    let (mut s, _) = transcript_study(&builtin::mentalbench());
    let expected = mentalbench_reply_prompt(&transcript_block(4, 6), TRANSCRIPT[6].2);

    let mut batch = settings(&server, HistoryDepth::Last(3));
    batch.batch = true;
    let batch_run = run(&mut s.store, &batch);
    let sent = sent_with(&server, "item #2 Thank you");
    assert_eq!(sent.len(), 1, "the batch carried the reply at turn 7 once");
    assert_eq!(
        sent[0].1, expected,
        "a provider batch line shows the same history"
    );
    assert_reproducible(&s, batch_run, &server);

    server.state.bodies.lock().unwrap().clear();
    let mut structured = settings(&server, HistoryDepth::Last(3));
    structured.structured = true;
    structured.repetitions = 2;
    let structured_run = run(&mut s.store, &structured);
    let bodies = server.state.bodies.lock().unwrap().clone();
    let seventh: Vec<&Value> = bodies
        .iter()
        .filter(|b| {
            b["messages"][0]["content"]
                .as_str()
                .is_some_and(|u| u.contains("item #2 Thank you"))
        })
        .collect();
    assert_eq!(seventh.len(), 2, "two repetitions of the reply at turn 7");
    for b in seventh {
        assert!(
            b.get("response_format").is_some(),
            "a structured call asks for its schema"
        );
        assert_eq!(
            b["messages"][0]["content"].as_str().unwrap(),
            expected,
            "every repetition of a structured call shows the same history"
        );
    }
    assert_reproducible(&s, structured_run, &server);
}

#[test]
fn a_single_turn_item_is_asked_exactly_as_before_transcripts() {
    let fixture = |name: &str| {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/judge_prompts")
                .join(name),
        )
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
    };
    // The texts the fixtures were rendered with.
    let cases = [
        (
            builtin::mentalbench(),
            "mentalbench",
            "I have not slept properly in weeks.\nNothing seems to matter any more — what should I do?",
            "item #0 That sounds exhausting. Could we look at what keeps you awake?",
        ),
        (
            builtin::psycrisis(),
            "psycrisis",
            "最近每天都睡不着，觉得活着没什么意思。",
            "item #1 听起来你非常疲惫。你愿意多说一些吗？",
        ),
    ];
    for (rubric, name, context, answer) in cases {
        let server = server();
        let mut s = new_study();
        let item = s
            .store
            .write(|tx| {
                let rubric_id = tx.add_rubric(&rubric)?;
                let source = tx.upsert_source(&NewSource {
                    key: "gpt4o",
                    name: "GPT-4o",
                    family: None,
                    kind: SourceKind::Llm,
                })?;
                let c = tx.add_conversation(&NewConversation {
                    external_id: "single",
                    rubric_id,
                    context,
                    language: None,
                    category: None,
                })?;
                tx.add_response(c, source, Some(answer))
            })
            .unwrap();
        // The default depth, and a depth of one turn: a single-turn item shows its one message.
        for depth in [HistoryDepth::default(), HistoryDepth::Last(1)] {
            server.state.bodies.lock().unwrap().clear();
            let run = run(&mut s.store, &settings(&server, depth));
            let sent = server.state.kept_messages();
            assert_eq!(sent.len(), 1, "{name}: one call");
            let (system, user) = &sent[0];
            assert_eq!(
                user,
                &fixture(&format!("{name}.user.txt")),
                "{name} ({depth}): the user message is byte for byte the earlier release's"
            );
            let system_fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("tests/fixtures/judge_prompts/{name}.system.txt"));
            assert_eq!(
                system.clone(),
                std::fs::read_to_string(system_fixture).ok(),
                "{name}: the system message is the earlier release's"
            );
            let shown = call_prompt(
                &s.store,
                run,
                &CallChoice::Item {
                    item: item.to_string(),
                    repetition: 1,
                },
            )
            .unwrap();
            assert_eq!(
                shown.recorded_sha256.as_deref(),
                Some(fixture(&format!("{name}.sha256")).trim()),
                "{name}: the recorded prompt hash is the one the earlier release computed"
            );
            assert_eq!(
                shown.prompt_sha256,
                fixture(&format!("{name}.sha256")).trim(),
                "{name}: and the prompt rendered now reproduces it"
            );
        }
    }
}
