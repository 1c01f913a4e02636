//! The study's model of conversations of many turns (store level): a transcript's turns and rated
//! replies read back as each item's history in order, the same source answering at several turns,
//! a session item seeing the whole conversation but the candidates, a single-turn conversation's
//! history being its user's message, and the audit chain sealing the turns.

use concord_core::store::{
    NewConversation, NewSource, NewTurn, Role, SourceKind, Store, StoreError,
};
use concord_testsupport::lead_study::*;

struct Transcript {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    store: Store,
    replies: Vec<i64>,
    session: i64,
}

/// One conversation of five messages (a system note, user, assistant, user, assistant) whose two
/// assistant turns are rated replies of one chatbot, and a session item on a second copy.
fn transcript() -> Transcript {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("study.concord");
    let mut store = Store::create(&path, clock()).expect("a study is created");
    populate(&mut store, 2, &["Ana"]);
    let (replies, session) = store
        .write(|tx| {
            let bot = tx.upsert_source(&NewSource {
                key: "helperbot",
                name: "helperbot",
                family: None,
                kind: SourceKind::Llm,
            })?;
            let c = tx.add_conversation(&NewConversation {
                external_id: "t1",
                rubric_id: 1,
                context: "",
                language: Some("en"),
                category: Some("grief"),
            })?;
            let mut replies = Vec::new();
            for (pos, role, text) in [
                (1, Role::System, "The user agreed to a research study."),
                (2, Role::User, "My dog died last week."),
                (3, Role::Assistant, "I am sorry. How are you coping?"),
                (4, Role::User, "Badly, I cannot sleep."),
                (5, Role::Assistant, "Sleep often suffers in grief."),
            ] {
                if role == Role::Assistant {
                    replies.push(tx.add_item(c, bot, Some(pos), Some(text))?);
                } else {
                    tx.add_turn(&NewTurn {
                        conversation_id: c,
                        position: pos,
                        role,
                        text,
                        source_id: None,
                        candidate: false,
                    })?;
                }
            }
            let s = tx.add_conversation(&NewConversation {
                external_id: "t1-session",
                rubric_id: 1,
                context: "",
                language: Some("en"),
                category: None,
            })?;
            for (pos, role, text, candidate) in [
                (1, Role::User, "Hello", false),
                (2, Role::Assistant, "Hi, how can I help?", false),
                (3, Role::User, "I feel low", false),
                (4, Role::Assistant, "candidate A", true),
                (4, Role::Assistant, "candidate B", true),
            ] {
                tx.add_turn(&NewTurn {
                    conversation_id: s,
                    position: pos,
                    role,
                    text,
                    source_id: Some(bot),
                    candidate,
                })?;
            }
            let session = tx.add_item(s, bot, None, None)?;
            Ok::<_, StoreError>((replies, session))
        })
        .expect("a transcript is stored");
    Transcript {
        _dir: dir,
        path,
        store,
        replies,
        session,
    }
}

#[test]
fn a_reply_sees_every_turn_before_it_in_order() {
    let t = transcript();
    let late = t.store.history(t.replies[1]).expect("history reads");
    let positions: Vec<i64> = late.iter().map(|h| h.position).collect();
    assert_eq!(
        positions,
        vec![1, 2, 3, 4],
        "the reply at turn 5 is judged in the light of turns 1–4, in order"
    );
    assert_eq!(
        late[2].response_id,
        Some(t.replies[0]),
        "the earlier rated reply is part of the later one's history, named as the item it is"
    );
    assert_eq!(late[0].role, Role::System, "the system note keeps its role");
    let early = t.store.history(t.replies[0]).expect("history reads");
    assert_eq!(
        early.len(),
        2,
        "the reply at turn 3 sees only turns 1 and 2, nothing after it"
    );
    let place = t.store.item_place(t.replies[1]).expect("place reads");
    assert_eq!(place.turn, Some(5), "a reply's turn number is its position");
    assert!(
        place.transcript,
        "a conversation with turns is a transcript"
    );
}

#[test]
fn a_session_item_sees_the_whole_conversation_but_not_the_candidates() {
    let t = transcript();
    let whole = t.store.history(t.session).expect("history reads");
    let texts: Vec<&str> = whole.iter().map(|h| h.text.as_str()).collect();
    assert_eq!(
        texts,
        vec!["Hello", "Hi, how can I help?", "I feel low"],
        "a session item shows the history only; candidates are rated as reply items"
    );
    assert_eq!(
        t.store.item_place(t.session).expect("place").turn,
        None,
        "a session item has no turn of its own"
    );
}

#[test]
fn a_single_turn_conversation_history_is_its_users_message() {
    let t = transcript();
    let legacy = t
        .store
        .response_ids_in_order()
        .expect("ids")
        .into_iter()
        .find(|id| !t.replies.contains(id) && *id != t.session)
        .expect("the seeded study has single-turn items");
    let history = t.store.history(legacy).expect("history reads");
    assert_eq!(history.len(), 1, "one user message before the answer");
    assert_eq!(
        history[0].role,
        Role::User,
        "the context is the user's turn"
    );
    assert_eq!(
        t.store.item_place(legacy).expect("place").turn,
        Some(2),
        "a single-turn answer is turn 2"
    );
}

#[test]
fn one_source_answers_at_many_turns_but_not_twice_at_one() {
    let mut t = transcript();
    let again = t.store.write(|tx| {
        let c = tx.conversation_ids()?["t1"];
        let bot = tx.upsert_source(&NewSource {
            key: "helperbot",
            name: "helperbot",
            family: None,
            kind: SourceKind::Llm,
        })?;
        tx.add_item(c, bot, Some(3), Some("a second reply at turn 3"))
    });
    assert!(
        again.is_err(),
        "a response is unique per conversation, source and turn"
    );
}

#[test]
fn the_audit_chain_seals_the_turns() {
    let t = transcript();
    let check = t.store.verify_audit_chain().expect("the chain verifies");
    assert!(
        check.entries > 0,
        "writing a transcript appends to the chain: {check:?}"
    );
    let path = t.path.clone();
    drop(t.store);
    rusqlite::Connection::open(&path)
        .expect("the file opens in another program")
        .execute("UPDATE turn SET text = 'edited' WHERE position = 2", [])
        .expect("an outside edit");
    let after = Store::open(&path, clock()).and_then(|s| s.verify_audit_chain());
    assert!(
        format!("{after:?}").contains("turn"),
        "a turn edited outside Concord no longer matches the seal, and the table is named: {after:?}"
    );
}

#[test]
fn a_session_item_is_not_an_answer_missing_its_text() {
    let t = transcript();
    let without = t.store.responses_without_text().expect("reads");
    assert!(
        !without.contains(&t.session),
        "a session item rates the conversation itself: it has no text by design, and assigning it must not ask for --without-text"
    );
}
