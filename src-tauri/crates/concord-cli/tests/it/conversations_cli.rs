//! `concord import conversations FILE [--rubric KEY] [--json]`, `concord rubric add FILE` on a
//! study that does not exist yet, and `concord import long-ratings` naming reply items by
//! conversation, turn and source and session items by conversation, as the conversations
//! contract states them: the five counts printed (exactly those keys with `--json`), the study
//! created where `--db` names no file, a refused file exiting non-zero with its file, line and
//! field named and the study unchanged.

use crate::{concord, ok, write};
use concord_testsupport::conversation_files::{chat_jsonl, sample, shuffled_rows, table_csv};
use std::path::Path;

/// Every row of every table of the study, as one text (the study is small).
fn digest(db: &Path) -> String {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("the study opens read-only");
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("query")
        .query_map([], |r| r.get(0))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("table names");
    let mut out = String::new();
    for t in tables {
        let mut stmt = c.prepare(&format!("SELECT * FROM \"{t}\"")).expect("query");
        let columns = stmt.column_count();
        let mut rows = stmt.query([]).expect("rows");
        while let Some(row) = rows.next().expect("row") {
            out.push_str(&t);
            for i in 0..columns {
                out.push_str(&format!("|{:?}", row.get_ref(i).expect("value")));
            }
            out.push('\n');
        }
    }
    out
}

const SESSION_RUBRIC: &str = r#"
id = "lab-session"
scope = "session"
name = { en = "Our session scale", zh = "我们的会话量表" }
[[criteria]]
id = "warmth"
label = { en = "Warmth", zh = "温暖" }
scale = { kind = "likert", min = 1, max = 5 }
"#;

#[test]
fn import_conversations_prints_the_five_counts_and_creates_the_study() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let db = dir.path().join("new.concord");
    let file = write(dir.path(), "chat.jsonl", &chat_jsonl(&sample()));
    let out = ok(
        &concord(&db, &["import", "conversations", &file, "--json"]),
        "import conversations --json",
    );
    assert!(db.is_file(), "the import creates the study --db names");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    let keys: Vec<&str> = doc
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = vec![
        "conversations",
        "turns",
        "reply_items",
        "session_items",
        "sources",
    ];
    let mut sorted = keys.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected, "exactly the contract's keys: {out}");
    assert_eq!(
        doc,
        serde_json::json!({"conversations": 3, "turns": 11, "reply_items": 5, "session_items": 0, "sources": 5}),
        "three conversations, eleven messages (each candidate one), five rated replies, five sources (unnamed among them)"
    );
    let table = dir.path().join("table.concord");
    let csv = write(
        dir.path(),
        "table.csv",
        &table_csv(&shuffled_rows(&sample(), 11)),
    );
    let text = ok(
        &concord(&table, &["import", "conversations", &csv]),
        "import conversations of a turn table",
    );
    assert!(
        text.contains(
            "table.csv: 3 conversations, 11 turns, 5 reply items, 0 session items, 5 sources (claude, counsellor, gpt4o, helperbot, unnamed)"
        ),
        "the text names the counts and the sources: {text}"
    );
    let again = ok(
        &concord(&table, &["import", "conversations", &csv]),
        "the same file again",
    );
    assert!(
        again.contains("already imported"),
        "the same file again changes nothing: {again}"
    );
}

#[test]
fn a_refused_conversations_file_names_where_and_changes_nothing() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let db = dir.path().join("study.concord");
    let file = write(dir.path(), "chat.jsonl", &chat_jsonl(&sample()));
    ok(
        &concord(&db, &["import", "conversations", &file]),
        "the first import",
    );
    let before = digest(&db);
    let bad = write(
        dir.path(),
        "roles.jsonl",
        "{\"conversation_id\":\"n1\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":\"assistant\",\"content\":\"Hello\"}]}\n\
         {\"conversation_id\":\"n2\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":\"bot\",\"content\":\"Hello\"}]}\n",
    );
    let out = concord(&db, &["import", "conversations", &bad, "--json"]);
    assert!(!out.status.success(), "a refused import exits non-zero");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("roles.jsonl, row 2, column “messages[1].role”") && err.contains("bot"),
        "stderr names the file, the line, the field and the role: {err}"
    );
    let overview = ok(&concord(&db, &["overview", "--json"]), "overview");
    let doc: serde_json::Value = serde_json::from_str(&overview).expect("JSON");
    assert_eq!(
        doc["conversations"], 3,
        "the first line of the refused file was not kept: {overview}"
    );
    assert_eq!(digest(&db), before, "every table of the study is as it was");
}

#[test]
fn rubric_add_creates_a_missing_study_and_a_session_rubric_gives_session_items() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let db = dir.path().join("fresh.concord");
    let broken = write(
        dir.path(),
        "broken.toml",
        "id = \"x\"\nscope = \"session\"\n",
    );
    let out = concord(&db, &["rubric", "add", &broken]);
    assert!(!out.status.success(), "an invalid rubric is refused");
    assert!(!db.exists(), "no study is created for an invalid rubric");
    let rubric = write(dir.path(), "session.toml", SESSION_RUBRIC);
    let text = ok(&concord(&db, &["rubric", "add", &rubric]), "rubric add");
    assert!(
        text.contains("Added rubric “lab-session”"),
        "the rubric is added: {text}"
    );
    assert!(db.is_file(), "rubric add creates the study --db names");
    let file = write(dir.path(), "chat.jsonl", &chat_jsonl(&sample()));
    let out = ok(
        &concord(
            &db,
            &[
                "import",
                "conversations",
                &file,
                "--rubric",
                "lab-session",
                "--json",
            ],
        ),
        "import with the session rubric",
    );
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        (doc["reply_items"].clone(), doc["session_items"].clone()),
        (serde_json::json!(0), serde_json::json!(3)),
        "a session rubric gives one session item per conversation and no reply items: {out}"
    );
    let ratings = write(
        dir.path(),
        "sessions.csv",
        "conversation_id,rater,criterion,score\nc1,Dana,warmth,4\nc3,Dana,warmth,2\n",
    );
    let out = ok(
        &concord(
            &db,
            &[
                "import",
                "long-ratings",
                &ratings,
                "--rubric",
                "lab-session",
                "--json",
            ],
        ),
        "session ratings in the long form",
    );
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        doc["files"][0]["ratings_inserted"], 2,
        "both session ratings are written: {out}"
    );
}

#[test]
fn the_shipped_session_rubric_is_available_by_key() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let db = dir.path().join("study.concord");
    let file = write(dir.path(), "chat.jsonl", &chat_jsonl(&sample()));
    let out = ok(
        &concord(
            &db,
            &[
                "import",
                "conversations",
                &file,
                "--rubric",
                "session-care",
                "--json",
            ],
        ),
        "import with the built-in session rubric",
    );
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        doc["session_items"], 3,
        "session-care is built in like mentalbench and gives one session item per conversation: {out}"
    );
}

#[test]
fn long_ratings_name_replies_by_conversation_turn_and_source() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let db = dir.path().join("study.concord");
    let file = write(dir.path(), "chat.jsonl", &chat_jsonl(&sample()));
    ok(
        &concord(&db, &["import", "conversations", &file]),
        "import conversations",
    );
    let ratings = write(
        dir.path(),
        "replies.csv",
        "conversation_id,turn,source,rater,criterion,score,rationale\n\
         c1,3,,Dana,Empathy,4,warm\n\
         c2,2,gpt4o,Dana,Empathy,5,\n\
         c2,2,claude,Dana,Empathy,3,\n",
    );
    let out = ok(
        &concord(
            &db,
            &[
                "import",
                "long-ratings",
                &ratings,
                "--rubric",
                "mentalbench",
                "--json",
            ],
        ),
        "reply ratings in the long form",
    );
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        doc["files"][0]["ratings_inserted"], 3,
        "every reply rating is written: {out}"
    );
    let bad = write(
        dir.path(),
        "candidates.csv",
        "conversation_id,turn,source,rater,criterion,score\nc2,2,,Dana,Empathy,4\n",
    );
    let out = concord(
        &db,
        &["import", "long-ratings", &bad, "--rubric", "mentalbench"],
    );
    assert!(
        !out.status.success(),
        "a turn of candidates without a source is refused"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("candidates.csv, row 2") && err.contains("name the source"),
        "the refusal names the row and what is missing: {err}"
    );
}
