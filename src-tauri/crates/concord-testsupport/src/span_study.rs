//! A study for marking evidence spans on the rating screen: one expert given two replies after a
//! short conversation — one in English, one in Chinese with an emoji (a character outside the
//! Basic Multilingual Plane: one Unicode scalar value, two UTF-16 units, four bytes) — under
//! MentalBench, whose span codes are Concord's own wording, and a conversation rated whole under
//! a session rubric (nothing to mark). The replies come first and second in the expert's queue,
//! the session item third, so the window, the browser and the core's tests all stand on the same
//! items.

use crate::conversations::{add_session, chatbot, session_rubric};
use concord_core::rubric::builtin;
use concord_core::store::{
    NewAssignment, NewConversation, NewRater, NewTurn, Purpose, RaterKind, Role, Store, StoreError,
};

/// The expert who marks.
pub const EXPERT: &str = "Dr Span";
/// Another expert of the study, whose spans the first must never see.
pub const OTHER_EXPERT: &str = "Dr Other";

/// The English reply (queue item 1).
pub const REPLY_EN: &str =
    "I hear how tired you are. You should just cheer up. Please call a crisis line tonight if you feel unsafe.";
/// The Chinese reply with an emoji (queue item 2).
pub const REPLY_ZH: &str =
    "听起来你很难受 😢。你可以拨打心理援助热线 12356。你有没有想过伤害自己？";

/// The ids the study was written with.
#[derive(Debug, Clone, Copy)]
pub struct SpanStudy {
    pub expert: i64,
    pub other: i64,
    pub reply_en: i64,
    pub reply_zh: i64,
    pub session: i64,
}

/// `[start, end)` of the first `quote` in `text`, in Unicode scalar values.
pub fn chars_at(text: &str, quote: &str) -> (i64, i64) {
    let byte = text.find(quote).expect("the quote is in the text");
    let start = text[..byte].chars().count() as i64;
    (start, start + quote.chars().count() as i64)
}

fn conversation(
    tx: &mut concord_core::store::StudyTx<'_>,
    rubric_id: i64,
    external_id: &str,
    user: &str,
    reply: &str,
    language: &str,
) -> Result<i64, StoreError> {
    let bot = chatbot(tx)?;
    let c = tx.add_conversation(&NewConversation {
        external_id,
        rubric_id,
        context: "",
        language: Some(language),
        category: Some("low mood"),
    })?;
    tx.add_turn(&NewTurn {
        conversation_id: c,
        position: 1,
        role: Role::User,
        text: user,
        source_id: None,
        candidate: false,
    })?;
    tx.add_item(c, bot, Some(2), Some(reply))
}

/// Write the span study into `store` (see the module documentation).
pub fn add_span_study(store: &mut Store) -> SpanStudy {
    store
        .write(|tx| {
            let replies = tx.add_rubric(&builtin::mentalbench())?;
            let sessions = tx.add_rubric(&session_rubric())?;
            let reply_en = conversation(
                tx,
                replies,
                "span-en",
                "I am so tired of everything.",
                REPLY_EN,
                "en",
            )?;
            let reply_zh = conversation(tx, replies, "span-zh", "我最近很难过", REPLY_ZH, "zh")?;
            let session = add_session(tx, sessions, "span-session", 3, 4)?;
            let mut raters = Vec::new();
            for (seed, name) in [EXPERT, OTHER_EXPERT].into_iter().enumerate() {
                raters.push(tx.upsert_rater(&NewRater {
                    kind: RaterKind::Expert,
                    name,
                    model_id: None,
                    family: None,
                    queue_seed: seed as i64,
                })?);
            }
            let mut rows = Vec::new();
            for &rater in &raters {
                for (position, &item) in [reply_en, reply_zh, session].iter().enumerate() {
                    rows.push(NewAssignment::fresh(
                        rater,
                        item,
                        position as i64 + 1,
                        Purpose::Regular,
                    ));
                }
            }
            tx.add_assignments(&rows)?;
            Ok::<_, StoreError>(SpanStudy {
                expert: raters[0],
                other: raters[1],
                reply_en,
                reply_zh,
                session,
            })
        })
        .expect("the span study is written")
}
