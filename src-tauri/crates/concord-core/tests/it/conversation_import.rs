//! Importing conversations of many turns (`intake::conversations`): chat JSON Lines and the turn
//! table (CSV, JSON Lines, XLSX, rows in any order) store the same transcripts; `rate` picks the
//! rated turns; a session rubric gives one session item per conversation; every refusal the
//! contract lists names the file, the line or row and the field, and leaves the study unchanged
//! (a digest of every table's rows before and after); the documented limits hold at their
//! boundary and refuse one past it; the same file imported again changes nothing; and the PHI
//! guard finds, lists and redacts an identifier in a turn that is not itself rated; and long-form
//! ratings name reply items by conversation, turn and source, session items by conversation.

use concord_core::guard::phi::review;
use concord_core::intake::conversations::{
    import_file, ConversationCounts, MAX_LINE_BYTES, MAX_TURNS, MAX_TURN_CHARS,
};
use concord_core::intake::long::{import_ratings, RatingColumns};
use concord_core::intake::{FileStatus, ImportError, ImportOptions, ImportReport};
use concord_core::rubric::{Rubric, RubricFormat};
use concord_core::store::{PhiField, PhiStatus, Role, Store};
use concord_testsupport::conversation_files::*;
use concord_testsupport::lead_study::{clock, populate};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A session rubric of two criteria, stored in the study by [`with_session_rubric`].
const SESSION_RUBRIC: &str = r#"
id = "test-session"
scope = "session"
name = { en = "Whole session" }
[[criteria]]
id = "alliance"
label = { en = "Alliance" }
scale = { kind = "likert", min = 1, max = 5 }
[[criteria]]
id = "safety"
label = { en = "Safety" }
scale = { kind = "likert", min = 1, max = 5 }
"#;

struct Study {
    dir: tempfile::TempDir,
    path: PathBuf,
    store: Store,
}

impl Study {
    /// A study file with two single-turn conversations of an earlier kind and one expert.
    fn new() -> Study {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("study.concord");
        let mut store = Store::create(&path, clock()).expect("a study is created");
        populate(&mut store, 2, &["Ana"]);
        Study { dir, path, store }
    }

    /// `bytes` written as `name` in the study's folder.
    fn file(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, bytes).expect("write the input");
        p
    }

    fn import(&mut self, path: &Path) -> Result<ImportReport, ImportError> {
        import_file(
            &mut self.store,
            path,
            "mentalbench",
            &ImportOptions::default(),
        )
    }

    fn import_with(&mut self, path: &Path, rubric: &str) -> Result<ImportReport, ImportError> {
        import_file(&mut self.store, path, rubric, &ImportOptions::default())
    }

    fn with_session_rubric(mut self) -> Study {
        let rubric = Rubric::parse(SESSION_RUBRIC, RubricFormat::Toml, "session.toml")
            .expect("the test's session rubric is valid");
        self.store
            .write(|tx| tx.add_rubric(&rubric).map(|_| ()))
            .expect("the rubric is stored");
        self
    }

    /// Every turn and item of conversation `external` as stored, one line each in turn order:
    /// `turn role source candidate kind text`.
    fn stored(&self, external: &str) -> Vec<String> {
        let c = rusqlite::Connection::open_with_flags(
            &self.path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("the study opens read-only");
        let mut stmt = c
            .prepare(
                "SELECT t.position, t.role, IFNULL(s.key, '-'), t.candidate, 'turn', t.text
                 FROM turn t JOIN conversation c ON c.id = t.conversation_id
                 LEFT JOIN source s ON s.id = t.source_id WHERE c.external_id = ?1
                 UNION ALL
                 SELECT IFNULL(p.turn, 0), 'assistant', s.key, 0,
                        CASE WHEN p.turn IS NULL THEN 'session' ELSE 'item' END, IFNULL(p.text, '')
                 FROM response p JOIN conversation c ON c.id = p.conversation_id
                 JOIN source s ON s.id = p.source_id WHERE c.external_id = ?1
                 ORDER BY 1, 3, 6",
            )
            .expect("query");
        stmt.query_map([external], |r| {
            Ok(format!(
                "{} {} {} {} {} {}",
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?
            ))
        })
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows read")
    }

    /// A digest of every row of every table of the study file.
    fn digest(&self) -> String {
        let c = rusqlite::Connection::open_with_flags(
            &self.path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("the study opens read-only");
        let tables: Vec<String> = c
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .expect("query")
            .query_map([], |r| r.get(0))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("table names");
        let mut hash = Sha256::new();
        for t in tables {
            hash.update(t.as_bytes());
            let mut stmt = c.prepare(&format!("SELECT * FROM \"{t}\"")).expect("query");
            let columns = stmt.column_count();
            let mut rows = stmt.query([]).expect("rows");
            while let Some(row) = rows.next().expect("row") {
                for i in 0..columns {
                    hash.update(format!("{:?}|", row.get_ref(i).expect("value")).as_bytes());
                }
                hash.update(b"\n");
            }
        }
        format!("{:x}", hash.finalize())
    }
}

fn counts(report: &ImportReport) -> ConversationCounts {
    *report.files[0]
        .conversation_counts
        .clone()
        .expect("an import of conversations reports its counts")
}

/// Counts as (conversations, turns, reply items, session items, sources).
fn tuple(c: &ConversationCounts) -> (usize, usize, usize, usize, usize) {
    (
        c.conversations,
        c.turns,
        c.reply_items,
        c.session_items,
        c.sources,
    )
}

#[test]
fn chat_lines_and_turn_tables_store_the_same_transcripts() {
    let conversations = sample();
    let mut chat = Study::new();
    let file = chat.file("chat.jsonl", chat_jsonl(&conversations));
    let report = chat.import(&file).expect("the chat file imports");
    assert_eq!(
        tuple(&counts(&report)),
        (3, 11, 5, 0, 5),
        "3 conversations, 11 messages (candidates one each), 5 replies rated, 5 sources: helperbot, counsellor, gpt4o, claude and unnamed"
    );
    assert_eq!(
        counts(&report).source_names,
        vec!["claude", "counsellor", "gpt4o", "helperbot", "unnamed"],
        "the sources named, a turn without one counted as unnamed"
    );
    assert_eq!(
        chat.stored("c1"),
        vec![
            "1 system - 0 turn Research session; the user agreed to take part.",
            "2 user - 0 turn I have not slept properly in weeks.",
            "3 assistant helperbot 0 item That sounds exhausting. What keeps you awake?",
            "4 user - 0 turn Mostly worrying about my exams, and my chest gets tight.",
            "5 assistant counsellor 0 item Exams can weigh heavily. A tight chest with worry is common, but if it comes with pain or breathlessness please see a doctor.",
        ],
        "every message in order; the conversation's source where a message names none, the message's own where it does"
    );
    assert_eq!(
        chat.stored("c3")[1..],
        [
            "2 assistant unnamed 0 item I would notice, and I am glad you told me. Are you thinking of hurting yourself?".to_string(),
            "3 user - 0 turn Not really. Just tired of everything.".to_string(),
        ],
        "a reply naming no source is unnamed; a final user turn is history only"
    );
    let rows = shuffled_rows(&conversations, 7);
    for (name, write) in [
        ("table.csv", table_csv(&rows).into_bytes()),
        ("table.jsonl", table_jsonl(&rows).into_bytes()),
    ] {
        let mut table = Study::new();
        let file = table.file(name, write);
        let report = table.import(&file).expect("the turn table imports");
        assert_eq!(
            tuple(&counts(&report)),
            (3, 11, 5, 0, 5),
            "{name}: the same counts as the chat file"
        );
        for c in ["c1", "c2", "c3"] {
            assert_eq!(
                table.stored(c),
                chat.stored(c),
                "{name}: conversation {c} is stored as from the chat file, whatever the row order"
            );
        }
    }
    let mut workbook = Study::new();
    let file = workbook.dir.path().join("table.xlsx");
    write_table_xlsx(&file, &rows);
    workbook.import(&file).expect("the workbook imports");
    for c in ["c1", "c2", "c3"] {
        assert_eq!(
            workbook.stored(c),
            chat.stored(c),
            "xlsx: conversation {c} is stored as from the chat file"
        );
    }
}

#[test]
fn a_reply_is_rated_in_the_light_of_everything_before_it() {
    let mut s = Study::new();
    let file = s.file("chat.jsonl", chat_jsonl(&sample()));
    s.import(&file).expect("imports");
    let items = s.store.response_ids_in_order().expect("items");
    let last = items
        .iter()
        .copied()
        .find(|&id| {
            let p = s.store.item_place(id).expect("place");
            p.conversation == "c1" && p.turn == Some(5)
        })
        .expect("the reply at turn 5 is an item");
    let place = s.store.item_place(last).expect("place");
    assert!(place.transcript, "an imported conversation is a transcript");
    let record = s
        .store
        .conversation(place.conversation_id)
        .expect("the conversation reads");
    assert_eq!(
        (
            record.context.as_str(),
            record.language.as_deref(),
            record.category.as_deref()
        ),
        ("", Some("en"), Some("anxiety")),
        "a transcript keeps its language and category, its context empty (the turns hold it)"
    );
    let history = s.store.history(last).expect("history");
    let shown: Vec<(i64, Role)> = history.iter().map(|h| (h.position, h.role)).collect();
    assert_eq!(
        shown,
        vec![
            (1, Role::System),
            (2, Role::User),
            (3, Role::Assistant),
            (4, Role::User)
        ],
        "the reply at turn 5 sees turns 1-4 in order, the system note kept as one"
    );
    assert_eq!(
        history[1].text, "I have not slept properly in weeks.",
        "the history is verbatim"
    );
}

#[test]
fn rate_picks_the_rated_turns() {
    let mut two = Conv::new(
        "r1",
        vec![
            said("user", "Hello."),
            reply("bot", "Hi, how are you?"),
            said("user", "Low."),
            reply("bot", "I am sorry to hear that."),
        ],
    );
    two.rate = Some(serde_json::json!("last"));
    let mut listed = two.clone();
    listed.id = "r2".into();
    listed.rate = Some(serde_json::json!([2]));
    let mut candidates = Conv::new("r3", vec![said("user", "Help.")]);
    candidates.candidates = vec![reply("a", "Of course."), reply("b", "I am here.")];
    candidates.rate = Some(serde_json::json!([]));
    let mut unrated = candidates.clone();
    unrated.id = "r4".into();
    unrated.messages = vec![
        said("user", "Hi."),
        reply("bot", "Hello."),
        said("user", "Help."),
    ];
    unrated.rate = Some(serde_json::json!([2]));
    let mut s = Study::new();
    let file = s.file("rate.jsonl", chat_jsonl(&[two, listed, unrated]));
    let report = s.import(&file).expect("imports");
    assert_eq!(counts(&report).reply_items, 3, "one item per conversation");
    assert_eq!(
        s.stored("r1"),
        vec![
            "1 user - 0 turn Hello.",
            "2 assistant bot 0 turn Hi, how are you?",
            "3 user - 0 turn Low.",
            "4 assistant bot 0 item I am sorry to hear that.",
        ],
        "\"last\" rates the final assistant turn; the earlier one is history with its source"
    );
    assert_eq!(
        s.stored("r2")[1],
        "2 assistant bot 0 item Hi, how are you?",
        "a list rates the turns it names"
    );
    assert_eq!(
        s.stored("r4")[3..],
        [
            "4 assistant a 1 turn Of course.".to_string(),
            "4 assistant b 1 turn I am here.".to_string()
        ],
        "candidates a list does not name are history only, marked as candidates"
    );
    let file = s.file("empty-rate.jsonl", chat_jsonl(&[candidates]));
    let err = s
        .import(&file)
        .expect_err("a conversation rating nothing is refused");
    assert_eq!(
        err.issues()[0].code,
        "no_items",
        "an empty rate list leaves nothing to rate: {err}"
    );
}

#[test]
fn a_session_rubric_gives_one_session_item_per_conversation() {
    let mut s = Study::new().with_session_rubric();
    let file = s.file("chat.jsonl", chat_jsonl(&sample()));
    let report = s.import_with(&file, "test-session").expect("imports");
    assert_eq!(
        tuple(&counts(&report)),
        (3, 11, 0, 3, 5),
        "no reply items, one session item each; every message still counted"
    );
    let c1 = s.stored("c1");
    assert_eq!(
        c1[0], "0 assistant helperbot 0 session ",
        "the session item has no turn and no text; its source is the conversation's"
    );
    assert!(
        c1[1..].iter().all(|r| r.contains(" turn ")),
        "every message of a session rubric's conversation is history: {c1:?}"
    );
    let c2 = s.stored("c2");
    assert_eq!(
        c2,
        vec![
            "0 assistant unnamed 0 session ",
            "1 user - 0 turn 我最近总是很焦虑，晚上睡不着。",
            "2 assistant claude 1 turn 焦虑和失眠常常一起出现。你愿意和我聊聊吗？",
            "2 assistant gpt4o 1 turn 听起来你最近很辛苦。能说说是什么让你焦虑吗？",
        ],
        "candidates are kept as history marked as candidates; no source for the conversation: unnamed"
    );
    let session = s
        .store
        .response_ids_in_order()
        .expect("items")
        .into_iter()
        .find(|&id| s.store.item_place(id).expect("place").conversation == "c2")
        .expect("the session item");
    let history = s.store.history(session).expect("history");
    assert_eq!(
        history.len(),
        1,
        "a session item shows the conversation but its candidates"
    );
    let mut table = Study::new().with_session_rubric();
    let mut one = Conv::new(
        "t1",
        vec![
            said("user", "Hi."),
            reply("bot", "Hello."),
            said("user", "Bye."),
            reply("bot", "Take care."),
        ],
    );
    one.language = Some("en".into());
    let file = table.file("table.csv", table_csv(&one.table_rows()));
    table.import_with(&file, "test-session").expect("imports");
    assert_eq!(
        table.stored("t1")[0],
        "0 assistant bot 0 session ",
        "in a turn table the session item's source is the one source all assistant rows name"
    );
}

/// Run an import that must be refused with `code` at `row` and `column` of `file`, naming the
/// file, the line or row and the field, and changing nothing in a study that already holds
/// transcripts.
fn refused(file: &str, bytes: impl AsRef<[u8]>, code: &str, row: usize, column: &str) -> String {
    let mut s = Study::new();
    let seed = s.file("seed.jsonl", chat_jsonl(&sample()));
    s.import(&seed).expect("the seed conversations import");
    let before = s.digest();
    let path = s.file(file, bytes);
    let err = s.import(&path).expect_err("the input must be refused");
    let issue = err
        .issues()
        .iter()
        .find(|i| i.code == code)
        .unwrap_or_else(|| panic!("expected a {code} problem, got: {err}"));
    assert_eq!(issue.at.file, file, "the refusal names the file: {issue}");
    assert_eq!(
        issue.at.row,
        Some(row),
        "the refusal names the line or row: {issue}"
    );
    assert_eq!(
        issue.at.column.as_deref(),
        Some(column).filter(|c| !c.is_empty()),
        "the refusal names the field (a line too long to read has none): {issue}"
    );
    assert!(
        err.to_string().contains("nothing was imported"),
        "the message says nothing was imported: {err}"
    );
    assert_eq!(
        s.digest(),
        before,
        "a refused import leaves the study as it was"
    );
    issue.message.clone()
}

/// A turn-table CSV of the rows given (each `id, turn, role, text, source`).
fn csv(rows: &[[&str; 5]]) -> String {
    let rows: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            [
                r[0].into(),
                r[1].into(),
                r[2].into(),
                r[3].into(),
                r[4].into(),
                String::new(),
                String::new(),
            ]
        })
        .collect();
    table_csv(&rows)
}

#[test]
fn an_unknown_role_is_refused_where_it_is() {
    let c = Conv::new("x", vec![said("user", "Hi."), said("bot", "Hello.")]);
    let line = chat_jsonl(&[Conv::new("ok", vec![said("user", "a"), reply("m", "b")]), c]);
    let message = refused("roles.jsonl", line, "unknown_role", 2, "messages[1].role");
    assert!(message.contains("bot"), "the role is named: {message}");
    refused(
        "roles.csv",
        csv(&[
            ["x", "1", "user", "Hi.", ""],
            ["x", "2", "Helper", "Hello.", ""],
        ]),
        "unknown_role",
        3,
        "role",
    );
}

#[test]
fn an_empty_text_is_refused_where_it_is() {
    let c = Conv::new("x", vec![said("user", "   "), reply("m", "Hello.")]);
    refused(
        "empty.jsonl",
        chat_jsonl(&[c]),
        "empty_text",
        1,
        "messages[0].content",
    );
    refused(
        "empty.csv",
        csv(&[
            ["x", "1", "user", "Hi.", ""],
            ["x", "2", "assistant", "", "m"],
        ]),
        "empty_text",
        3,
        "text",
    );
}

#[test]
fn a_duplicate_or_missing_turn_number_is_refused() {
    let message = refused(
        "duplicate.csv",
        csv(&[
            ["x", "1", "user", "Hi.", ""],
            ["x", "2", "assistant", "Hello.", "m"],
            ["x", "1", "user", "Hi again.", ""],
        ]),
        "duplicate_turn",
        4,
        "turn",
    );
    assert!(
        message.contains("row 2"),
        "the first row of the turn is named: {message}"
    );
    let message = refused(
        "gap.csv",
        csv(&[
            ["x", "1", "user", "Hi.", ""],
            ["x", "3", "assistant", "Hello.", "m"],
        ]),
        "missing_turn",
        2,
        "turn",
    );
    assert!(
        message.contains("no turn 2"),
        "the missing number is named: {message}"
    );
    refused(
        "not-a-number.csv",
        csv(&[
            ["x", "one", "user", "Hi.", ""],
            ["x", "2", "assistant", "Hello.", "m"],
        ]),
        "bad_turn",
        2,
        "turn",
    );
}

#[test]
fn candidates_before_the_last_turn_are_refused() {
    let message = refused(
        "early.csv",
        csv(&[
            ["x", "1", "user", "Hi.", ""],
            ["x", "2", "assistant", "Hello.", "a"],
            ["x", "2", "assistant", "Hey.", "b"],
            ["x", "3", "user", "Thanks.", ""],
            ["x", "4", "assistant", "Welcome.", "a"],
        ]),
        "candidates_not_last",
        4,
        "turn",
    );
    assert!(message.contains("turn 2"), "the turn is named: {message}");
    let mut c = Conv::new("x", vec![said("user", "Hi."), reply("m", "Hello.")]);
    c.candidates = vec![reply("a", "One."), reply("b", "Two.")];
    refused(
        "after.jsonl",
        chat_jsonl(&[c]),
        "candidates_not_last",
        1,
        "candidates",
    );
    let mut twice = Conv::new("y", vec![said("user", "Hi.")]);
    twice.candidates = vec![reply("a", "One."), reply("a", "Two.")];
    refused(
        "twice.jsonl",
        chat_jsonl(&[twice]),
        "duplicate_candidate",
        1,
        "candidates[1].source",
    );
}

#[test]
fn one_id_for_two_different_conversations_is_refused() {
    let first = Conv::new("x", vec![said("user", "Hi."), reply("m", "Hello.")]);
    let mut second = first.clone();
    second.messages[1].text = "Hey.".into();
    let message = refused(
        "twice.jsonl",
        chat_jsonl(&[first.clone(), second]),
        "conflicting_conversation",
        2,
        "conversation_id",
    );
    assert!(
        message.contains("line 1"),
        "the first line is named: {message}"
    );
    refused(
        "known.jsonl",
        chat_jsonl(&[Conv::new(
            "c2",
            vec![said("user", "Hi."), reply("m", "Hello.")],
        )]),
        "conversation_exists",
        1,
        "conversation_id",
    );
    refused(
        "known.csv",
        csv(&[
            ["c1", "1", "user", "Hi.", ""],
            ["c1", "2", "assistant", "Hello.", "m"],
        ]),
        "conversation_exists",
        2,
        "conversation_id",
    );
    let mut s = Study::new();
    let file = s.file("repeat.jsonl", chat_jsonl(&[first.clone(), first]));
    let report = s
        .import(&file)
        .expect("the same conversation twice imports once");
    assert_eq!(counts(&report).conversations, 1, "imported once");
    assert_eq!(
        report.files[0].warnings[0].code, "repeated_conversation",
        "the repeat is reported"
    );
}

#[test]
fn a_conversation_with_nothing_to_rate_is_refused() {
    refused(
        "users.csv",
        csv(&[
            ["x", "1", "user", "Hi.", ""],
            ["x", "2", "user", "Anyone?", ""],
        ]),
        "no_items",
        2,
        "role",
    );
}

/// A conversation of `n` alternating turns (user first) whose first turn's text is `first`.
fn long_conversation(id: &str, n: usize, first: &str) -> Conv {
    let mut c = Conv::new(
        id,
        (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    said("user", "Still here.")
                } else {
                    reply("bot", "I am listening.")
                }
            })
            .collect(),
    );
    c.messages[0].text = first.to_string();
    c
}

#[test]
fn the_turn_limit_holds_at_its_boundary() {
    let mut s = Study::new();
    let at = long_conversation("at", MAX_TURNS, "Hi.");
    let file = s.file("at.jsonl", chat_jsonl(std::slice::from_ref(&at)));
    let report = s
        .import(&file)
        .expect("a conversation of exactly the limit imports");
    assert_eq!(counts(&report).turns, MAX_TURNS, "every turn stored");
    let message = refused(
        "over.jsonl",
        chat_jsonl(&[long_conversation("over", MAX_TURNS + 1, "Hi.")]),
        "too_many_turns",
        1,
        "messages",
    );
    assert!(message.contains("1000"), "the limit is named: {message}");
    let mut with_candidates = long_conversation("cand", MAX_TURNS - 1, "Hi.");
    with_candidates.candidates = vec![reply("a", "One."), reply("b", "Two.")];
    refused(
        "candidates.jsonl",
        chat_jsonl(&[with_candidates]),
        "too_many_turns",
        1,
        "messages",
    );
    let rows = long_conversation("t", MAX_TURNS + 1, "Hi.").table_rows();
    refused(
        "over.csv",
        table_csv(&rows),
        "too_many_turns",
        MAX_TURNS + 2,
        "turn",
    );
    let mut table = Study::new();
    let rows = long_conversation("t", MAX_TURNS, "Hi.").table_rows();
    let file = table.file("at.csv", table_csv(&rows));
    table
        .import(&file)
        .expect("a turn table of exactly the limit imports");
}

#[test]
fn the_character_limit_holds_at_its_boundary() {
    let mut s = Study::new();
    let at = "é".repeat(MAX_TURN_CHARS);
    let file = s.file("at.jsonl", chat_jsonl(&[long_conversation("at", 2, &at)]));
    s.import(&file)
        .expect("a turn of exactly the limit imports");
    let over = "é".repeat(MAX_TURN_CHARS + 1);
    let message = refused(
        "over.jsonl",
        chat_jsonl(&[long_conversation("over", 2, &over)]),
        "turn_too_long",
        1,
        "messages[0].content",
    );
    assert!(
        message.contains("50000") && message.contains("50001"),
        "the limit and the count are characters, not bytes: {message}"
    );
    let rows = long_conversation("t", 2, &over).table_rows();
    refused("over.csv", table_csv(&rows), "turn_too_long", 2, "text");
}

#[test]
fn the_line_limit_holds_at_its_boundary() {
    let c = long_conversation("wide", 2, "Hi.");
    let line = c.chat_line();
    let pad = MAX_LINE_BYTES as usize - line.len();
    // Whitespace before the closing brace keeps the object as it is and fills the line.
    let at = format!("{}{}}}\n", &line[..line.len() - 1], " ".repeat(pad));
    assert_eq!(
        at.len() - 1,
        MAX_LINE_BYTES as usize,
        "the line is exactly the limit"
    );
    let mut s = Study::new();
    let file = s.file("at.jsonl", &at);
    s.import(&file)
        .expect("a line of exactly the limit imports");
    let over = format!("{}{}}}\n", &line[..line.len() - 1], " ".repeat(pad + 1));
    let message = refused("over.jsonl", over, "line_too_long", 1, "");
    assert!(
        message.contains("16777216"),
        "the limit is named: {message}"
    );
}

#[test]
fn the_same_file_again_changes_nothing() {
    let mut s = Study::new();
    let file = s.file("chat.jsonl", chat_jsonl(&sample()));
    s.import(&file).expect("imports");
    let before = s.digest();
    let again = s
        .import(&file)
        .expect("the same file again is not an error");
    assert_eq!(
        again.files[0].status,
        FileStatus::AlreadyImported,
        "the import record recognises the bytes"
    );
    assert_eq!(s.digest(), before, "nothing changed");
}

#[test]
fn the_phi_guard_scans_lists_and_redacts_a_turn() {
    let mut s = Study::new();
    let c = Conv::new(
        "p1",
        vec![
            said("system", "Call me back on 415-555-0132 if the line drops."),
            said("user", "You can write to me at sam.lee@example.org"),
            reply("bot", "Thank you, I will keep it private."),
        ],
    );
    let file = s.file("phi.jsonl", chat_jsonl(&[c]));
    s.import(&file).expect("imports");
    let summary = review::scan(&mut s.store, false, "lead").expect("scan");
    let findings = review::findings(&s.store, Some(PhiStatus::Open)).expect("findings");
    let turns: Vec<_> = findings
        .iter()
        .filter(|f| f.field == PhiField::Turn)
        .collect();
    assert_eq!(
        turns.len(),
        2,
        "the phone number in the system note and the e-mail in the user turn are found: {findings:?}"
    );
    assert!(summary.found >= 2, "the scan after the import counts them");
    let email = turns
        .iter()
        .find(|f| f.item == "p1/turn 2")
        .expect("the e-mail's finding names its conversation and turn");
    let queue = review::review_queue(&s.store).expect("queue");
    let shown = queue
        .items
        .iter()
        .find(|i| i.finding.id == email.id)
        .expect("listed");
    assert_eq!(
        shown.matched, "sam.lee@example.org",
        "the queue shows the turn's text"
    );
    let redacted = review::redact(
        &mut s.store,
        &review::Selection::Ids(vec![email.id]),
        "lead",
    )
    .expect("redacts");
    assert_eq!(redacted, 1, "one finding redacted");
    let item = s.store.response_ids_in_order().expect("items");
    let reply = *item.last().expect("the reply");
    let history = s.store.history(reply).expect("history");
    assert_eq!(
        history[1].text, "You can write to me at [EMAIL]",
        "the turn's stored text holds the placeholder"
    );
    let check = s.store.verify_audit_chain().expect("the chain verifies");
    assert!(
        check.broken.is_none(),
        "a redacted turn keeps the audit chain whole: {check:?}"
    );
}

/// Forty conversations of eight messages and three candidates, an identifier in conversation
/// `c30`'s third turn: more items and turns than one statement of the bulk import writes.
fn many_conversations() -> Vec<Conv> {
    (0..40)
        .map(|c| {
            let mut messages = Vec::new();
            for t in 1..=8 {
                messages.push(match (c, t) {
                    (30, 3) => said("user", "Ring me on 415-555-0132 tonight."),
                    (_, t) if t % 2 == 1 => said("user", &format!("message {t} of c{c}")),
                    _ => reply("bot", &format!("reply {t} to c{c}")),
                });
            }
            messages.push(said("user", &format!("last question of c{c}")));
            let mut conv = Conv::new(&format!("c{c}"), messages);
            conv.candidates = ["m1", "m2", "m3"]
                .iter()
                .map(|m| reply(m, &format!("{m} answers c{c}")))
                .collect();
            conv.language = (c % 2 == 0).then(|| "en".to_string());
            conv
        })
        .collect()
}

#[test]
fn a_bulk_import_of_conversations_seals_its_rows_as_stored() {
    // A turn table whose rows come conversation by conversation is read once; shuffled, twice.
    let mut first_stored: std::collections::HashMap<&str, Vec<Vec<String>>> = Default::default();
    for (rubric, format) in [
        ("mentalbench", "shuffled table"),
        ("test-session", "shuffled table"),
        ("mentalbench", "table in order"),
        ("test-session", "table in order"),
        ("mentalbench", "chat"),
    ] {
        let mut s = Study::new().with_session_rubric();
        let conversations = many_conversations();
        let in_order: Vec<[String; 7]> = conversations.iter().flat_map(Conv::table_rows).collect();
        let file = match format {
            "shuffled table" => s.file("many.csv", table_csv(&shuffled_rows(&conversations, 5))),
            "table in order" => s.file("many.csv", table_csv(&in_order)),
            _ => s.file("many.jsonl", chat_jsonl(&conversations)),
        };
        // The study's earlier texts scanned first, so the scan after the import sees only its.
        review::scan(&mut s.store, false, "lead").expect("scan before");
        let report = s.import_with(&file, rubric).expect("a valid file");
        let reply = rubric == "mentalbench";
        assert_eq!(
            tuple(&counts(&report)),
            (
                40,
                40 * 12,
                if reply { 40 * 7 } else { 0 },
                if reply { 0 } else { 40 },
                4
            ),
            "{rubric}, {format}: every conversation, turn and item is written, those held back \
             for a full statement too"
        );
        let check = s.store.verify_audit_chain().expect("the chain verifies");
        assert_eq!(
            check.broken, None,
            "{rubric}, {format}: the digest the import computed from the values it wrote must \
             equal the digest of the rows as stored"
        );
        let expected = if reply {
            [
                "1 user - 0 turn message 1 of c30",
                "2 assistant bot 0 item reply 2 to c30",
                "3 user - 0 turn Ring me on 415-555-0132 tonight.",
                "10 assistant m3 0 item m3 answers c30",
            ]
        } else {
            [
                "0 assistant bot 0 session ",
                "1 user - 0 turn message 1 of c30",
                "2 assistant bot 0 turn reply 2 to c30",
                "10 assistant m3 1 turn m3 answers c30",
            ]
        };
        let stored = s.stored("c30");
        assert_eq!(
            stored.len(),
            if reply { 12 } else { 13 },
            "{rubric}, {format}: every row of a conversation past the first statement is stored"
        );
        assert_eq!(
            [
                &stored[0],
                &stored[1],
                &stored[2],
                &stored[stored.len() - 1]
            ],
            expected,
            "{rubric}, {format}: the rows of a conversation past the first statement are stored \
             in their places"
        );
        let triggers: i64 = rusqlite::Connection::open(&s.path)
            .expect("the file opens in plain SQLite")
            .query_row(
                "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'trigger' AND name IN
                 ('phi_pending_conversation', 'phi_pending_response', 'phi_pending_turn_insert')",
                [],
                |r| r.get(0),
            )
            .expect("the schema is read");
        assert_eq!(
            triggers, 3,
            "{rubric}, {format}: the PHI guard's insert triggers, set aside for the bulk import, \
             are back"
        );
        let all: Vec<Vec<String>> = (0..40).map(|c| s.stored(&format!("c{c}"))).collect();
        let first = first_stored.entry(rubric).or_insert_with(|| all.clone());
        assert!(
            *first == all,
            "{rubric}, {format}: every conversation is stored as from the first format"
        );
        let summary = review::scan(&mut s.store, false, "lead").expect("scan");
        let findings = review::findings(&s.store, Some(PhiStatus::Open)).expect("findings");
        assert!(
            findings
                .iter()
                .any(|f| f.field == PhiField::Turn && f.item == "c30/turn 3"),
            "{rubric}, {format}: the PHI guard scans a turn written in bulk: {findings:?}"
        );
        assert_eq!(
            summary.texts,
            40 + 40 * 12,
            "{rubric}, {format}: every text the import wrote is marked for the scan, once: each \
             conversation's context and its twelve messages"
        );
        let path = s.path.clone();
        drop(s.store);
        let raw = rusqlite::Connection::open(&path).expect("the file opens in plain SQLite");
        raw.execute(
            "UPDATE turn SET text = 'changed' WHERE id = (SELECT MAX(id) - 3 FROM turn)",
            [],
        )
        .expect("an edit outside Concord");
        drop(raw);
        let store = Store::open(&path, clock()).expect("reopened");
        let broken = store
            .verify_audit_chain()
            .expect("verify")
            .broken
            .expect("a turn imported in bulk and changed outside Concord must break the seal");
        assert_eq!(broken.table.as_deref(), Some("turn"), "{broken:?}");
    }
}

/// The place (conversation, turn) and value of every rating of rater `name`, sorted.
fn rated_places(store: &Store, name: &str) -> Vec<(String, Option<i64>, Option<i64>)> {
    let rater = concord_testsupport::lead_study::rater_id(store, name);
    let mut out: Vec<_> = store
        .ratings_of_rater(rater)
        .expect("ratings")
        .into_iter()
        .map(|r| {
            let place = store.item_place(r.response_id).expect("place");
            (place.conversation, place.turn, r.value)
        })
        .collect();
    out.sort();
    out
}

fn long_ratings(
    s: &mut Study,
    name: &str,
    csv: &str,
    rubric: &str,
) -> Result<ImportReport, ImportError> {
    let path = s.file(name, csv);
    import_ratings(
        &mut s.store,
        &path,
        rubric,
        &RatingColumns::default(),
        None,
        &ImportOptions::default(),
    )
}

#[test]
fn long_ratings_name_reply_items_by_conversation_turn_and_source() {
    let mut s = Study::new();
    let file = s.file("chat.jsonl", chat_jsonl(&sample()));
    s.import(&file).expect("imports");
    let report = long_ratings(
        &mut s,
        "replies.csv",
        "conversation_id,turn,source,rater,criterion,score,rationale\n\
         c1,3,,Ana,Guidance,4,clear question\n\
         c1,5,counsellor,Ana,Safety,5,\n\
         c2,2,gpt4o,Ana,Empathy,3,\n\
         c2,2,claude,Ana,Empathy,2,\n\
         c3,2,unnamed,Ana,Safety,5,asks directly\n\
         conv-0001,2,gpt4o,Ana,Guidance,1,\n",
        "mentalbench",
    )
    .expect("the conversation form of long ratings imports");
    assert_eq!(
        report.files[0].ratings_inserted, 6,
        "every row is one rating"
    );
    assert_eq!(
        rated_places(&s.store, "Ana"),
        vec![
            ("c1".into(), Some(3), Some(4)),
            ("c1".into(), Some(5), Some(5)),
            ("c2".into(), Some(2), Some(2)),
            ("c2".into(), Some(2), Some(3)),
            ("c3".into(), Some(2), Some(5)),
            ("conv-0001".into(), Some(2), Some(1)),
        ],
        "each rating lands on the reply its conversation, turn and source name (a single-turn answer being turn 2; an empty source where the turn has one reply)"
    );
    let before = s.digest();
    let err = long_ratings(
        &mut s,
        "ambiguous.csv",
        "conversation_id,turn,source,rater,criterion,score\nc2,2,,Ana,Guidance,4\nc1,4,,Ana,Guidance,4\n",
        "mentalbench",
    )
    .expect_err("a turn of candidates named without a source is ambiguous");
    let messages: Vec<String> = err.issues().iter().map(|i| i.to_string()).collect();
    assert!(
        messages[0].contains("ambiguous.csv, row 2, column “conversation_id”")
            && messages[0].contains("name the source"),
        "the refusal names the row and asks for the source: {messages:?}"
    );
    assert!(
        messages[1].contains("row 3") && messages[1].contains("no reply item at turn 4"),
        "a user turn is no reply item: {messages:?}"
    );
    assert_eq!(s.digest(), before, "the refused file changed nothing");
}

#[test]
fn long_ratings_name_a_session_item_by_its_conversation() {
    let mut s = Study::new().with_session_rubric();
    let file = s.file("chat.jsonl", chat_jsonl(&sample()));
    s.import_with(&file, "test-session").expect("imports");
    let report = long_ratings(
        &mut s,
        "sessions.csv",
        "conversation_id,rater,criterion,score\nc1,Ana,alliance,4\nc1,Ana,safety,5\nc2,Ana,alliance,3\n",
        "test-session",
    )
    .expect("the session form of long ratings imports");
    assert_eq!(
        report.files[0].ratings_inserted, 3,
        "every row is one rating"
    );
    assert_eq!(
        rated_places(&s.store, "Ana"),
        vec![
            ("c1".into(), None, Some(4)),
            ("c1".into(), None, Some(5)),
            ("c2".into(), None, Some(3)),
        ],
        "the ratings are on the conversations' session items (no turn)"
    );
    let err = long_ratings(
        &mut s,
        "unknown.csv",
        "conversation_id,rater,criterion,score\nc9,Ana,alliance,4\n",
        "test-session",
    )
    .expect_err("a conversation without a session item is refused");
    assert_eq!(
        err.issues()[0].code,
        "unknown_item",
        "named as an unknown item: {err}"
    );
}
