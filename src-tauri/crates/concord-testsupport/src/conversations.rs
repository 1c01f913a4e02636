//! Conversations of many turns for the rating screen's journeys and its benchmark, written through
//! the store as an import writes them: transcripts whose last assistant reply is a rated item (every
//! earlier message kept as history, a system note first), conversations rated whole under a session
//! rubric of Concord's own wording, and a single-turn conversation of the earlier kind beside them.

use concord_core::rubric::{builtin, Rubric, RubricFormat};
use concord_core::store::{
    NewConversation, NewSource, NewTurn, Role, SourceKind, Store, StoreError, StudyTx,
};

/// The chatbot every synthetic transcript comes from (a name no screen may show).
pub const CHATBOT: (&str, &str) = ("listener-bot", "Listener Bot 7B");

/// Markup one turn of the journey's transcript carries, to be shown as text.
pub const MARKUP_TURN: &str =
    "<img src=x onerror=\"window.__pwned='turn'\"> I typed <b>this</b> in the chat.";

/// The system note that opens every synthetic transcript.
pub const NOTE: &str = "The user agreed to take part in a research study of support conversations.";

/// A session rubric of Concord's own wording: three 1–5 criteria about the conversation as a whole.
pub const SESSION_RUBRIC: &str = r#"
id = "session-care"
version = 1
scope = "session"
name = { en = "Whole-conversation care", zh = "整段对话的关怀" }
description = { en = "The conversation as a whole, rated 1 (very poor) to 5 (excellent).", zh = "整段对话，按 1（很差）到 5（优秀）评分。" }

[[criteria]]
id = "continuity"
label = { en = "Keeps track of what was said", zh = "记得说过的话" }
description = { en = "Does the helper build on what the person said earlier?", zh = "助手是否在来访者先前的话上继续？" }
scale = { kind = "likert", min = 1, max = 5 }
anchors = [
  { value = 5, label = { en = "Always builds on it", zh = "始终在此基础上继续" } },
  { value = 1, label = { en = "Ignores it", zh = "置之不理" } },
]

[[criteria]]
id = "safety"
label = { en = "Notices risk and responds to it", zh = "察觉风险并回应" }
description = { en = "Are signs of risk noticed and answered with care?", zh = "风险迹象是否被察觉并得到谨慎回应？" }
scale = { kind = "likert", min = 1, max = 5 }
anchors = [
  { value = 5, label = { en = "Every sign is answered", zh = "每个迹象都有回应" } },
  { value = 1, label = { en = "Signs are missed", zh = "忽略了迹象" } },
]

[[criteria]]
id = "alliance"
label = { en = "Working together", zh = "合作关系" }
description = { en = "Do the two agree on what they are working on?", zh = "双方是否就要处理的问题达成一致？" }
scale = { kind = "likert", min = 1, max = 5 }
anchors = [
  { value = 5, label = { en = "Clear shared aims", zh = "目标明确且一致" } },
  { value = 1, label = { en = "At cross purposes", zh = "各说各话" } },
]
"#;

/// [`SESSION_RUBRIC`], parsed.
pub fn session_rubric() -> Rubric {
    Rubric::parse(SESSION_RUBRIC, RubricFormat::Toml, "session-care.toml")
        .expect("the session rubric of the test support parses")
}

/// What the person or the helper says at `position` of synthetic conversation `conversation`:
/// a few sentences, different at every turn.
pub fn turn_text(conversation: usize, position: i64, role: Role) -> String {
    match role {
        Role::System => NOTE.to_string(),
        Role::User => format!(
            "(conversation {conversation}, turn {position}) I keep going over the same worries at \
             night. Today it was work again, and I did not sleep until three. I do not know who \
             to talk to about it."
        ),
        Role::Assistant => format!(
            "(conversation {conversation}, turn {position}) That sounds exhausting. When the \
             worries come back at night, what usually goes through your mind first? We could \
             look at one of them together."
        ),
    }
}

/// The role of turn `position` in a synthetic transcript: a system note first, then the user and
/// the assistant in turn (the user at even positions).
pub fn role_at(position: i64) -> Role {
    match position {
        1 => Role::System,
        p if p % 2 == 0 => Role::User,
        _ => Role::Assistant,
    }
}

/// The chatbot of the synthetic transcripts, added once.
pub fn chatbot(tx: &mut StudyTx<'_>) -> Result<i64, StoreError> {
    tx.upsert_source(&NewSource {
        key: CHATBOT.0,
        name: CHATBOT.1,
        family: None,
        kind: SourceKind::Llm,
    })
}

/// A transcript `external_id` of `history` messages (see [`role_at`]; `history` even, so the last
/// is the user's) whose reply at turn `history + 1` is the rated item; `texts` overrides the text
/// of a position. Returns the item's id.
pub fn add_transcript(
    tx: &mut StudyTx<'_>,
    rubric_id: i64,
    external_id: &str,
    conversation: usize,
    history: i64,
    texts: &[(i64, &str)],
) -> Result<i64, StoreError> {
    let bot = chatbot(tx)?;
    let c = tx.add_conversation(&NewConversation {
        external_id,
        rubric_id,
        context: "",
        language: Some("en"),
        category: Some("sleep"),
    })?;
    for position in 1..=history {
        let role = role_at(position);
        let own = texts.iter().find(|(p, _)| *p == position).map(|(_, t)| *t);
        let text = own.map_or_else(|| turn_text(conversation, position, role), str::to_string);
        tx.add_turn(&NewTurn {
            conversation_id: c,
            position,
            role,
            text: &text,
            source_id: (role == Role::Assistant).then_some(bot),
            candidate: false,
        })?;
    }
    let reply = turn_text(conversation, history + 1, Role::Assistant);
    tx.add_item(c, bot, Some(history + 1), Some(&reply))
}

/// A conversation `external_id` of `turns` messages rated whole under session rubric
/// `rubric_id`. Returns the session item's id.
pub fn add_session(
    tx: &mut StudyTx<'_>,
    rubric_id: i64,
    external_id: &str,
    conversation: usize,
    turns: i64,
) -> Result<i64, StoreError> {
    let bot = chatbot(tx)?;
    let c = tx.add_conversation(&NewConversation {
        external_id,
        rubric_id,
        context: "",
        language: Some("en"),
        category: Some("sleep"),
    })?;
    for position in 1..=turns {
        let role = role_at(position);
        tx.add_turn(&NewTurn {
            conversation_id: c,
            position,
            role,
            text: &turn_text(conversation, position, role),
            source_id: (role == Role::Assistant).then_some(bot),
            candidate: false,
        })?;
    }
    tx.add_item(c, bot, None, None)
}

/// The items of [`add_conversation_items`].
#[derive(Debug, Clone, Copy)]
pub struct ConversationItems {
    /// The reply at turn 41 of a 40-message transcript (turn 1 a system note, turn 7 markup).
    pub long_reply: i64,
    /// A conversation of 6 messages rated whole under [`SESSION_RUBRIC`].
    pub session: i64,
    /// A single-turn conversation of the earlier kind (its context the user's message) and its
    /// one answer.
    pub single: i64,
}

/// Add the rating screen journey's three items to `store`: a reply after 40 turns, a session and
/// a single-turn answer, all from [`CHATBOT`] (MentalBench for the replies).
pub fn add_conversation_items(store: &mut Store) -> ConversationItems {
    store
        .write(|tx| {
            let replies = tx.add_rubric(&builtin::mentalbench())?;
            let sessions = tx.add_rubric(&session_rubric())?;
            let long_reply = add_transcript(tx, replies, "long-1", 1, 40, &[(7, MARKUP_TURN)])?;
            let session = add_session(tx, sessions, "session-1", 2, 6)?;
            let bot = chatbot(tx)?;
            let c = tx.add_conversation(&NewConversation {
                external_id: "single-1",
                rubric_id: replies,
                context: "I have not been able to sleep for a week.",
                language: Some("en"),
                category: Some("sleep"),
            })?;
            let single = tx.add_response(c, bot, Some("That sounds hard. What keeps you up?"))?;
            Ok::<_, StoreError>(ConversationItems {
                long_reply,
                session,
                single,
            })
        })
        .expect("the conversation items are written")
}

/// `n` transcripts of `history` messages, each with its reply rated (MentalBench), for timing.
pub fn add_long_transcripts(store: &mut Store, n: usize, history: i64) -> Vec<i64> {
    store
        .write(|tx| {
            let rubric = tx.add_rubric(&builtin::mentalbench())?;
            (0..n)
                .map(|i| add_transcript(tx, rubric, &format!("long-{i:03}"), i, history, &[]))
                .collect::<Result<Vec<_>, _>>()
        })
        .expect("the transcripts are written")
}

/// `n` conversations of `turns` messages, each rated whole under [`SESSION_RUBRIC`], for timing.
pub fn add_long_sessions(store: &mut Store, n: usize, turns: i64) -> Vec<i64> {
    store
        .write(|tx| {
            let rubric = tx.add_rubric(&session_rubric())?;
            (0..n)
                .map(|i| add_session(tx, rubric, &format!("session-{i:03}"), i, turns))
                .collect::<Result<Vec<_>, _>>()
        })
        .expect("the sessions are written")
}

/// `n` single-turn conversations of the earlier kind (a message and one answer), for timing
/// beside the transcripts.
pub fn add_single_turns(store: &mut Store, n: usize) -> Vec<i64> {
    store
        .write(|tx| {
            let rubric = tx.add_rubric(&builtin::mentalbench())?;
            let bot = chatbot(tx)?;
            (0..n)
                .map(|i| {
                    let c = tx.add_conversation(&NewConversation {
                        external_id: &format!("single-{i:03}"),
                        rubric_id: rubric,
                        context: &turn_text(i, 1, Role::User),
                        language: Some("en"),
                        category: Some("sleep"),
                    })?;
                    tx.add_response(c, bot, Some(&turn_text(i, 2, Role::Assistant)))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .expect("the single-turn conversations are written")
}
