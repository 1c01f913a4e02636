//! The dataset being rated: the `source`, `conversation`, `turn` and `response` tables. Sources
//! are who wrote an answer (a person or a model); a conversation holds the rubric it is rated with
//! and either the user's one message (`context`, a single-turn conversation) or its transcript
//! (`turn` rows); a response is a rated item: one source's reply at one turn (a reply item), or the
//! whole conversation (a session rubric's item). [`Store::history`] gives what came before an item,
//! the same way for both kinds of conversation. Importers fill the tables through maps loaded
//! once; everything else reads them.

use super::{unique_violation, Store, StoreResult, StudyTx};
use crate::base::text::quoted;
use rusqlite::types::{Value, ValueRef};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Who speaks in a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    /// A note about the conversation (an instruction, a context line): shown, never rated.
    System,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        }
    }

    /// The role named `s` exactly (`user`, `assistant`, `system`).
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "system" => Some(Role::System),
            _ => None,
        }
    }
}

/// A message of a transcript that is not itself rated (see the module's doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTurn<'a> {
    pub conversation_id: i64,
    /// 1-based turn number.
    pub position: i64,
    pub role: Role,
    pub text: &'a str,
    pub source_id: Option<i64>,
    /// One of several assistant replies at the last position, kept as history only.
    pub candidate: bool,
}

/// One turn of what came before an item, as [`Store::history`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnRecord {
    /// 1-based turn number.
    pub position: i64,
    pub role: Role,
    pub text: String,
    /// Who wrote it (assistant turns that name a source); never shown to an expert.
    pub source_id: Option<i64>,
    /// The item this turn is, when it is itself rated (an earlier reply of the same path).
    pub response_id: Option<i64>,
}

impl TurnRecord {
    /// The one turn of a single-turn conversation's history: the person's message `context`,
    /// a user turn at turn 1.
    pub fn opening(context: String) -> TurnRecord {
        TurnRecord {
            position: 1,
            role: Role::User,
            text: context,
            source_id: None,
            response_id: None,
        }
    }
}

/// Where an item sits in its conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemPlace {
    pub conversation_id: i64,
    /// The conversation's external id.
    pub conversation: String,
    /// The item's turn number: a reply's own position (2 for a single-turn conversation's
    /// answer); `None` for a session item, which stands for the whole conversation.
    pub turn: Option<i64>,
    /// Whether the conversation is a transcript: it has turns of its own, or the item has a turn
    /// number (a reply at turn 1 of a copy that holds nothing before it, as a rater package's).
    pub transcript: bool,
}

/// Who wrote a response: a person (the dataset's original answer) or a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Human,
    Llm,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Human => "human",
            SourceKind::Llm => "llm",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSource<'a> {
    pub key: &'a str,
    pub name: &'a str,
    pub family: Option<&'a str>,
    pub kind: SourceKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewConversation<'a> {
    pub external_id: &'a str,
    pub rubric_id: i64,
    pub context: &'a str,
    pub language: Option<&'a str>,
    pub category: Option<&'a str>,
}

/// A source as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRecord {
    pub id: i64,
    pub key: String,
    pub name: String,
    pub family: Option<String>,
}

/// A conversation as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationRecord {
    pub id: i64,
    pub external_id: String,
    pub rubric_id: i64,
    pub context: String,
    pub language: Option<String>,
    pub category: Option<String>,
}

/// A response as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseRecord {
    pub id: i64,
    pub conversation_id: i64,
    pub source_id: i64,
    pub text: Option<String>,
    /// The reply's turn number (`None`: a single-turn conversation's answer or a session item).
    pub turn: Option<i64>,
}

/// How exports and merges name a response: its conversation's external id, its own id in the
/// file it came from (the row id when it has none) and its source key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseLabel {
    pub id: i64,
    pub conversation: String,
    pub response: String,
    pub source: String,
    /// The item's turn as stored (`None`: a single-turn answer or a session item).
    pub turn: Option<i64>,
    /// The rubric of its conversation.
    pub rubric_id: i64,
}

/// What a rater is shown of a response: the user's message and the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemText {
    pub context: String,
    /// `None` when the study holds only ratings for it.
    pub answer: Option<String>,
    pub language: Option<String>,
}

/// A response a judge run may select: whether it has a text to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JudgeableResponse {
    pub id: i64,
    pub has_text: bool,
}

/// A conversation row read as `id, external_id, rubric_id, context, language, category`.
fn conversation_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<ConversationRecord> {
    Ok(ConversationRecord {
        id: r.get(0)?,
        external_id: r.get(1)?,
        rubric_id: r.get(2)?,
        context: r.get(3)?,
        language: r.get(4)?,
        category: r.get(5)?,
    })
}

/// A response row read as `id, conversation_id, source_id, text, turn`.
fn response_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<ResponseRecord> {
    Ok(ResponseRecord {
        id: r.get(0)?,
        conversation_id: r.get(1)?,
        source_id: r.get(2)?,
        text: r.get(3)?,
        turn: r.get(4)?,
    })
}

/// A response and the conversation it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseConversation {
    pub response_id: i64,
    pub conversation_id: i64,
    /// Its turn number in a transcript (`None`: a single-turn answer or a session item).
    pub turn: Option<i64>,
}

/// A response, the source that wrote it and the length of its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseLength {
    pub response_id: i64,
    pub source_id: i64,
    /// Characters of the response's text (`None` without a text).
    pub chars: Option<i64>,
}

/// An item of a rubric as a ratings file names it: its conversation's external id, its turn
/// (`None`: an earlier release's single-turn answer, or a session item) and its source's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemAddress {
    pub response_id: i64,
    pub conversation: String,
    pub turn: Option<i64>,
    pub source: String,
}

/// A response and the source that wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseSource {
    pub response_id: i64,
    pub source_id: i64,
}

/// A rated item with its source, its conversation and its turn as stored (`None`: a single-turn
/// conversation's answer, or a session item — the rubric's scope tells which).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RubricItem {
    pub response_id: i64,
    pub source_id: i64,
    pub conversation_id: i64,
    pub turn: Option<i64>,
}

/// A response and its conversation's category.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseCategory {
    pub response_id: i64,
    pub category: Option<String>,
}

impl Store {
    /// The response of source `source_key` to the conversation with external id `conversation`.
    pub fn response_id(&self, conversation: &str, source_key: &str) -> StoreResult<Option<i64>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT p.id FROM response p JOIN conversation c ON c.id = p.conversation_id
                 JOIN source s ON s.id = p.source_id WHERE c.external_id = ?1 AND s.key = ?2",
                params![conversation, source_key],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The item of source `source_id` in the conversation with external id `conversation` at turn
    /// `turn` (`None`: its single-turn answer or session item).
    pub fn response_of_source(
        &self,
        conversation: &str,
        source_id: i64,
        turn: Option<i64>,
    ) -> StoreResult<Option<i64>> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT p.id FROM response p JOIN conversation c ON c.id = p.conversation_id
                 WHERE c.external_id = ?1 AND p.source_id = ?2 AND p.turn IS ?3",
            )?
            .query_row(params![conversation, source_id, turn], |r| r.get(0))
            .optional()?)
    }

    /// The text of a response (`None` when it has none yet).
    pub fn response_text(&self, response_id: i64) -> StoreResult<Option<String>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT text FROM response WHERE id = ?1",
                [response_id],
                |r| r.get(0),
            )
            .optional()?
            .flatten())
    }

    /// The context of the conversation with external id `conversation`.
    pub fn conversation_context(&self, conversation: &str) -> StoreResult<Option<String>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT context FROM conversation WHERE external_id = ?1",
                [conversation],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The user's message, the answer and the language of one response.
    pub fn item_text(&self, response_id: i64) -> StoreResult<ItemText> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT c.context, p.text, c.language FROM response p
                 JOIN conversation c ON c.id = p.conversation_id WHERE p.id = ?1",
            )?
            .query_row([response_id], |r| {
                Ok(ItemText {
                    context: r.get(0)?,
                    answer: r.get(1)?,
                    language: r.get(2)?,
                })
            })?)
    }

    /// Where item `response_id` sits: its conversation and its turn number (see [`ItemPlace`]).
    pub fn item_place(&self, response_id: i64) -> StoreResult<ItemPlace> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT c.id, c.external_id, p.turn,
                        p.turn IS NOT NULL
                        OR EXISTS (SELECT 1 FROM turn t WHERE t.conversation_id = c.id)
                 FROM response p JOIN conversation c ON c.id = p.conversation_id WHERE p.id = ?1",
            )?
            .query_row([response_id], |r| {
                let transcript: bool = r.get(3)?;
                let turn: Option<i64> = r.get(2)?;
                Ok(ItemPlace {
                    conversation_id: r.get(0)?,
                    conversation: r.get(1)?,
                    // A single-turn conversation's answer follows the user's message.
                    turn: turn.or((!transcript).then_some(2)),
                    transcript,
                })
            })?)
    }

    /// What came before item `response_id`, in order: for a reply, every turn before its own
    /// (earlier replies of the same path included, candidates of the last position never); for a
    /// session item, the whole conversation but its candidates. A single-turn conversation's
    /// history is its user's message (turn 1).
    pub fn history(&self, response_id: i64) -> StoreResult<Vec<TurnRecord>> {
        let place = self.item_place(response_id)?;
        if !place.transcript {
            let context = self.conn().query_row(
                "SELECT context FROM conversation WHERE id = ?1",
                [place.conversation_id],
                |r| r.get(0),
            )?;
            return Ok(vec![TurnRecord::opening(context)]);
        }
        self.transcript_before(place.conversation_id, place.turn.unwrap_or(i64::MAX))
    }

    /// The turns of transcript `conversation_id` before turn `before`, rated ones included, in
    /// order (candidates of the last position left out).
    pub fn transcript_before(
        &self,
        conversation_id: i64,
        before: i64,
    ) -> StoreResult<Vec<TurnRecord>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT position, role, text, source_id, NULL FROM turn
             WHERE conversation_id = ?1 AND position < ?2 AND candidate = 0
             UNION ALL
             SELECT turn, 'assistant', IFNULL(text, ''), source_id, id FROM response
             WHERE conversation_id = ?1 AND turn IS NOT NULL AND turn < ?2
               AND NOT EXISTS (SELECT 1 FROM response o WHERE o.conversation_id = ?1
                               AND o.turn = response.turn AND o.id <> response.id)
             ORDER BY 1",
        )?;
        let rows = stmt.query_map(params![conversation_id, before], |r| {
            let role: String = r.get(1)?;
            Ok(TurnRecord {
                position: r.get(0)?,
                role: Role::parse(&role).unwrap_or(Role::System),
                text: r.get(2)?,
                source_id: r.get(3)?,
                response_id: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Whether the study holds any transcript (a conversation with turns of its own).
    pub fn has_transcripts(&self) -> StoreResult<bool> {
        Ok(self
            .conn()
            .query_row("SELECT EXISTS (SELECT 1 FROM turn)", [], |r| r.get(0))?)
    }

    /// Whether any conversation rated with rubric `rubric_id` is a transcript (turns of its own,
    /// or items at a turn): what a judge prompt's default wording follows.
    pub fn rubric_has_transcripts(&self, rubric_id: i64) -> StoreResult<bool> {
        Ok(self.conn().query_row(
            "SELECT EXISTS (SELECT 1 FROM turn t JOIN conversation c ON c.id = t.conversation_id
                            WHERE c.rubric_id = ?1)
                 OR EXISTS (SELECT 1 FROM response r JOIN conversation c ON c.id = r.conversation_id
                            WHERE c.rubric_id = ?1 AND r.turn IS NOT NULL)",
            [rubric_id],
            |r| r.get(0),
        )?)
    }

    /// Every source, by id.
    pub fn sources(&self) -> StoreResult<Vec<SourceRecord>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT id, key, name, family FROM source ORDER BY id")?;
        let rows = stmt.query_map([], |r| {
            Ok(SourceRecord {
                id: r.get(0)?,
                key: r.get(1)?,
                name: r.get(2)?,
                family: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One conversation by id.
    pub fn conversation(&self, id: i64) -> StoreResult<ConversationRecord> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT id, external_id, rubric_id, context, language, category
                 FROM conversation WHERE id = ?1",
            )?
            .query_row([id], conversation_record)?)
    }

    /// The conversations rated with rubric `rubric_key` (every conversation when `None`).
    pub fn conversations_of_rubric(
        &self,
        rubric_key: Option<&str>,
    ) -> StoreResult<Vec<ConversationRecord>> {
        let mut stmt = self.conn().prepare(
            "SELECT c.id, c.external_id, c.rubric_id, c.context, c.language, c.category
             FROM conversation c JOIN rubric r ON r.id = c.rubric_id
             WHERE ?1 IS NULL OR r.key = ?1",
        )?;
        let rows = stmt.query_map([rubric_key], conversation_record)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One response by id.
    pub fn response(&self, id: i64) -> StoreResult<ResponseRecord> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT id, conversation_id, source_id, text, turn FROM response WHERE id = ?1",
            )?
            .query_row([id], response_record)?)
    }

    /// The rated replies of conversation `conversation_id` at a turn before `before` (every one
    /// with a turn number when `None`), in turn order: the earlier replies a later item's
    /// history shows.
    pub fn replies_before(
        &self,
        conversation_id: i64,
        before: Option<i64>,
    ) -> StoreResult<Vec<ResponseRecord>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT id, conversation_id, source_id, text, turn FROM response
             WHERE conversation_id = ?1 AND turn IS NOT NULL AND (?2 IS NULL OR turn < ?2)
             ORDER BY turn, id",
        )?;
        let rows = stmt.query_map(params![conversation_id, before], response_record)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The turns of conversation `conversation_id` that are not rated items, before turn
    /// `before` (all of them when `None`), candidates left out, in order: the rest of what an
    /// item's history shows.
    pub fn turns_before(
        &self,
        conversation_id: i64,
        before: Option<i64>,
    ) -> StoreResult<Vec<TurnRecord>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT position, role, text, source_id FROM turn
             WHERE conversation_id = ?1 AND candidate = 0 AND (?2 IS NULL OR position < ?2)
             ORDER BY position, id",
        )?;
        let rows = stmt.query_map(params![conversation_id, before], |r| {
            let role: String = r.get(1)?;
            Ok(TurnRecord {
                position: r.get(0)?,
                role: Role::parse(&role).unwrap_or(Role::System),
                text: r.get(2)?,
                source_id: r.get(3)?,
                response_id: None,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The ids of every response, ascending.
    pub fn response_ids_in_order(&self) -> StoreResult<Vec<i64>> {
        let mut stmt = self.conn().prepare("SELECT id FROM response ORDER BY id")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The conversation of every response, by response id.
    pub fn response_conversations(&self) -> StoreResult<Vec<ResponseConversation>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT id, conversation_id, turn FROM response ORDER BY id")?;
        let rows = stmt.query_map([], |r| {
            Ok(ResponseConversation {
                response_id: r.get(0)?,
                conversation_id: r.get(1)?,
                turn: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The ids of the responses the study holds no answer text for (ratings imported without
    /// their answers, as from the MentalAlign release); a session item, which rates the
    /// conversation itself and has no text by design, is not one of them.
    pub fn responses_without_text(&self) -> StoreResult<std::collections::HashSet<i64>> {
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT id FROM response WHERE text IS NULL AND NOT {}",
            session_item("response")
        ))?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The responses to conversations rated with one rubric and their sources, by response id.
    /// Every response of a rubric with its source and its text's length in characters (`None`
    /// without a text), in id order: what a judge's length and self-preference audit reads.
    pub fn rubric_response_lengths(&self, rubric_id: i64) -> StoreResult<Vec<ResponseLength>> {
        let mut stmt = self.conn().prepare(
            "SELECT p.id, p.source_id, length(p.text) FROM response p
             JOIN conversation c ON c.id = p.conversation_id
             WHERE c.rubric_id = ?1 ORDER BY p.id",
        )?;
        let rows = stmt.query_map([rubric_id], |r| {
            Ok(ResponseLength {
                response_id: r.get(0)?,
                source_id: r.get(1)?,
                chars: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every item of a rubric's conversations, by id, with its source, conversation and turn.
    pub fn rubric_items(&self, rubric_id: i64) -> StoreResult<Vec<RubricItem>> {
        let mut stmt = self.conn().prepare(
            "SELECT p.id, p.source_id, p.conversation_id, p.turn FROM response p
             JOIN conversation c ON c.id = p.conversation_id
             WHERE c.rubric_id = ?1 ORDER BY p.id",
        )?;
        let rows = stmt.query_map([rubric_id], |r| {
            Ok(RubricItem {
                response_id: r.get(0)?,
                source_id: r.get(1)?,
                conversation_id: r.get(2)?,
                turn: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Whether every item of the rubric's conversations stands at a turn of a transcript (there
    /// is at least one, and none without a turn).
    pub fn rubric_all_at_turns(&self, rubric_id: i64) -> StoreResult<bool> {
        Ok(self.conn().query_row(
            "SELECT EXISTS (SELECT 1 FROM response p
                 JOIN conversation c ON c.id = p.conversation_id
                 WHERE c.rubric_id = ?1 AND p.turn IS NOT NULL)
             AND NOT EXISTS (SELECT 1 FROM response p
                 JOIN conversation c ON c.id = p.conversation_id
                 WHERE c.rubric_id = ?1 AND p.turn IS NULL)",
            [rubric_id],
            |r| r.get(0),
        )?)
    }

    pub fn rubric_responses(&self, rubric_id: i64) -> StoreResult<Vec<ResponseSource>> {
        let mut stmt = self.conn().prepare(
            "SELECT p.id, p.source_id FROM response p
             JOIN conversation c ON c.id = p.conversation_id
             WHERE c.rubric_id = ?1 ORDER BY p.id",
        )?;
        let rows = stmt.query_map([rubric_id], |r| {
            Ok(ResponseSource {
                response_id: r.get(0)?,
                source_id: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every response of a rubric with its conversation's category (`None` without one), in id
    /// order: what agreement by category groups responses by.
    pub fn rubric_response_categories(&self, rubric_id: i64) -> StoreResult<Vec<ResponseCategory>> {
        let mut stmt = self.conn().prepare(
            "SELECT p.id, c.category FROM response p
             JOIN conversation c ON c.id = p.conversation_id
             WHERE c.rubric_id = ?1 ORDER BY p.id",
        )?;
        let rows = stmt.query_map([rubric_id], |r| {
            Ok(ResponseCategory {
                response_id: r.get(0)?,
                category: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How every response is named (see [`ResponseLabel`]), in no particular order.
    pub fn response_labels(&self) -> StoreResult<Vec<ResponseLabel>> {
        let mut stmt = self.conn().prepare(
            "SELECT p.id, v.external_id, COALESCE(p.external_id, CAST(p.id AS TEXT)), s.key,
                    p.turn, v.rubric_id
             FROM response p JOIN conversation v ON v.id = p.conversation_id
             JOIN source s ON s.id = p.source_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ResponseLabel {
                id: r.get(0)?,
                conversation: r.get(1)?,
                response: r.get(2)?,
                source: r.get(3)?,
                turn: r.get(4)?,
                rubric_id: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The responses to conversations rated with one rubric, by id — only those an expert has
    /// rated (first occasion) when `expert_rated` — and whether each has a text.
    pub fn judgeable_responses(
        &self,
        rubric_id: i64,
        expert_rated: bool,
    ) -> StoreResult<Vec<JudgeableResponse>> {
        let mut stmt = self.conn().prepare(
            "SELECT r.id, r.text IS NOT NULL FROM response r
             JOIN conversation c ON c.id = r.conversation_id
             WHERE c.rubric_id = ?1 AND (?2 = 0 OR EXISTS (
                 SELECT 1 FROM rating g JOIN rater t ON t.id = g.rater_id
                 WHERE g.response_id = r.id AND g.occasion = 0 AND t.kind = 'expert'
                   AND g.value IS NOT NULL))
             ORDER BY r.id",
        )?;
        let rows = stmt.query_map(params![rubric_id, expert_rated as i64], |r| {
            Ok(JudgeableResponse {
                id: r.get(0)?,
                has_text: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The SQL condition that the `response` row named `alias` is a session item: no turn of its
/// own in a conversation that has turns (see the module's doc).
pub(super) fn session_item(alias: &str) -> String {
    format!(
        "({alias}.turn IS NULL AND EXISTS (SELECT 1 FROM turn st WHERE st.conversation_id = {alias}.conversation_id))"
    )
}

/// Overwrite a conversation's context, a response's text or a turn's: the PHI guard's
/// redaction, the only change of a text once imported.
pub(super) fn replace_text(
    c: &rusqlite::Connection,
    text: super::PhiTextId,
    to: &str,
) -> StoreResult<()> {
    match (text.response_id, text.turn_id) {
        (Some(r), _) => c.execute(
            "UPDATE response SET text = ?2 WHERE id = ?1",
            params![r, to],
        )?,
        (None, Some(t)) => c.execute("UPDATE turn SET text = ?2 WHERE id = ?1", params![t, to])?,
        (None, None) => c.execute(
            "UPDATE conversation SET context = ?2 WHERE id = ?1",
            params![text.conversation_id, to],
        )?,
    };
    Ok(())
}

impl StudyTx<'_> {
    /// From here to the end of this transaction, the conversations and responses it adds are
    /// digested for the audit chain here rather than by its triggers (an import's many rows).
    pub fn add_texts_in_bulk(&mut self) -> StoreResult<()> {
        self.digest_inserts_here(&["conversation", "response", "turn"])
    }

    /// Insert a source, or return the id of the source already stored under `key`.
    pub fn upsert_source(&mut self, s: &NewSource<'_>) -> StoreResult<i64> {
        if let Some(id) = self
            .conn()
            .query_row("SELECT id FROM source WHERE key = ?1", [s.key], |r| {
                r.get(0)
            })
            .optional()?
        {
            return Ok(id);
        }
        self.conn().execute(
            "INSERT INTO source(key, name, family, kind) VALUES (?1, ?2, ?3, ?4)",
            params![s.key, s.name, s.family, s.kind.as_str()],
        )?;
        Ok(self.conn().last_insert_rowid())
    }

    pub fn add_conversation(&mut self, c: &NewConversation<'_>) -> StoreResult<i64> {
        // Cached: an import adds its conversations one statement each.
        self.conn()
            .prepare_cached(
                "INSERT INTO conversation(external_id, rubric_id, context, language, category)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                c.external_id,
                c.rubric_id,
                c.context,
                c.language,
                c.category
            ])
            .map_err(|e| {
                unique_violation(e, || {
                    format!("conversation {} already exists", quoted(&c.external_id))
                })
            })?;
        let id = self.conn().last_insert_rowid();
        self.digest_inserted("conversation", id)?;
        Ok(id)
    }

    pub fn add_response(
        &mut self,
        conversation_id: i64,
        source_id: i64,
        text: Option<&str>,
    ) -> StoreResult<i64> {
        self.conn()
            .execute(
                "INSERT INTO response(conversation_id, source_id, text) VALUES (?1, ?2, ?3)",
                params![conversation_id, source_id, text],
            )
            .map_err(|e| {
                unique_violation(e, || {
                    format!("conversation {conversation_id} already has a response from source {source_id}")
                })
            })?;
        let id = self.conn().last_insert_rowid();
        self.digest_inserted("response", id)?;
        Ok(id)
    }

    /// A rated item of a transcript: source `source_id`'s reply at turn `turn` (`Some`), or the
    /// conversation's session item (`None`, no text).
    pub fn add_item(
        &mut self,
        conversation_id: i64,
        source_id: i64,
        turn: Option<i64>,
        text: Option<&str>,
    ) -> StoreResult<i64> {
        self.conn()
            .prepare_cached(
                "INSERT INTO response(conversation_id, source_id, text, turn) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![conversation_id, source_id, text, turn])
            .map_err(|e| {
                unique_violation(e, || {
                    format!(
                        "conversation {conversation_id} already has an item from source {source_id} at turn {}",
                        turn.map_or("(session)".to_string(), |t| t.to_string())
                    )
                })
            })?;
        let id = self.conn().last_insert_rowid();
        self.digest_inserted("response", id)?;
        Ok(id)
    }

    /// A message of a transcript that is not rated (see [`NewTurn`]).
    pub fn add_turn(&mut self, t: &NewTurn<'_>) -> StoreResult<i64> {
        self.conn()
            .prepare_cached(
                "INSERT INTO turn(conversation_id, position, role, text, source_id, candidate)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                t.conversation_id,
                t.position,
                t.role.as_str(),
                t.text,
                t.source_id,
                t.candidate as i64
            ])?;
        let id = self.conn().last_insert_rowid();
        self.digest_inserted("turn", id)?;
        Ok(id)
    }

    /// Start a bulk import of conversations as transcripts (see [`TranscriptImport`]): from
    /// here to the end of this transaction the conversations, responses and turns it adds are
    /// digested for the audit chain here (from the values written), not by the chain's triggers.
    pub fn begin_transcript_import(&mut self) -> StoreResult<TranscriptImport> {
        self.add_texts_in_bulk()?;
        // As for a bulk rating import: with SQLite's default 2 MB cache the transaction's pages
        // spill to the WAL before it commits, many of them more than once. Up to 64 MB are used
        // only as far as pages are actually touched.
        self.conn().execute_batch("PRAGMA cache_size = -65536")?;
        let digesting =
            |direct: &[super::audit::DirectInserts], table: &str, written: &[&str]| match direct
                .iter()
                .find(|d| d.table() == table)
            {
                None => Digesting::Not,
                Some(d) => d
                    .columns()
                    .iter()
                    .map(|c| written.iter().position(|w| w == c))
                    .collect::<Option<Vec<usize>>>()
                    .map_or(Digesting::ReadBack, Digesting::Values),
            };
        let next = |sql: &str| -> StoreResult<i64> {
            Ok(self.conn().query_row(sql, [], |r| r.get::<_, i64>(0))? + 1)
        };
        let import = TranscriptImport {
            next_conversation: next("SELECT COALESCE(MAX(id), 0) FROM conversation")?,
            conversation_digest: digesting(&self.direct, "conversation", &CONVERSATION_COLUMNS),
            items: PendingRows::new(
                next("SELECT COALESCE(MAX(id), 0) FROM response")?,
                ITEM_INSERT,
                ITEM_COLUMNS.len(),
                digesting(&self.direct, "response", &ITEM_COLUMNS),
            ),
            turns: PendingRows::new(
                next("SELECT COALESCE(MAX(id), 0) FROM turn")?,
                TURN_INSERT,
                TURN_COLUMNS.len(),
                digesting(&self.direct, "turn", &TURN_COLUMNS),
            ),
        };
        // The PHI guard's triggers would run for every row: the new texts are marked for the
        // scan in one statement per table when the import finishes.
        self.set_phi_marks_aside(
            import.next_conversation,
            import.items.next_id,
            import.turns.next_id,
        )?;
        Ok(import)
    }

    /// A new conversation of a transcript import, written at once (its rows follow it).
    pub fn import_conversation(
        &mut self,
        import: &mut TranscriptImport,
        c: &NewConversation<'_>,
    ) -> StoreResult<i64> {
        let id = import.next_conversation;
        fn text(t: &str) -> ValueRef<'_> {
            ValueRef::Text(t.as_bytes())
        }
        fn optional(t: Option<&str>) -> ValueRef<'_> {
            t.map_or(ValueRef::Null, text)
        }
        // In the order of CONVERSATION_COLUMNS.
        let values = [
            ValueRef::Integer(id),
            text(c.external_id),
            ValueRef::Integer(c.rubric_id),
            text(c.context),
            optional(c.language),
            optional(c.category),
        ];
        self.conn()
            .prepare_cached(
                "INSERT INTO conversation(id, external_id, rubric_id, context, language, category)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(rusqlite::params_from_iter(
                values
                    .iter()
                    .map(|v| rusqlite::types::ToSqlOutput::Borrowed(*v)),
            ))
            .map_err(|e| {
                unique_violation(e, || {
                    format!("conversation {} already exists", quoted(&c.external_id))
                })
            })?;
        import.next_conversation += 1;
        digest_row(
            &self.tx,
            &mut self.direct,
            "conversation",
            &import.conversation_digest,
            id,
            |i| values[i],
        )?;
        Ok(id)
    }

    /// A rated item of a transcript import (see [`StudyTx::add_item`]); written with the next
    /// rows of its kind, or by [`StudyTx::finish_transcript_import`].
    pub fn import_item(
        &mut self,
        import: &mut TranscriptImport,
        conversation_id: i64,
        source_id: i64,
        turn: Option<i64>,
        text: Option<&str>,
    ) -> StoreResult<i64> {
        // In the order of ITEM_COLUMNS.
        let id = import.items.push([
            Value::Integer(conversation_id),
            Value::Integer(source_id),
            text.map_or(Value::Null, |t| Value::Text(t.to_string())),
            Value::Null,
            turn.map_or(Value::Null, Value::Integer),
        ]);
        if import.items.full() {
            self.write_rows(&mut import.items, false)?;
        }
        Ok(id)
    }

    /// A message of a transcript import that is not rated (see [`StudyTx::add_turn`]); written
    /// with the next rows of its kind, or by [`StudyTx::finish_transcript_import`].
    pub fn import_turn(
        &mut self,
        import: &mut TranscriptImport,
        t: &NewTurn<'_>,
    ) -> StoreResult<i64> {
        // In the order of TURN_COLUMNS.
        let id = import.turns.push([
            Value::Integer(t.conversation_id),
            Value::Integer(t.position),
            Value::Text(t.role.as_str().to_string()),
            Value::Text(t.text.to_string()),
            t.source_id.map_or(Value::Null, Value::Integer),
            Value::Integer(i64::from(t.candidate)),
        ]);
        if import.turns.full() {
            self.write_rows(&mut import.turns, false)?;
        }
        Ok(id)
    }

    /// Write what a transcript import still holds.
    pub fn finish_transcript_import(&mut self, mut import: TranscriptImport) -> StoreResult<()> {
        self.write_rows(&mut import.items, true)?;
        self.write_rows(&mut import.turns, true)?;
        self.put_phi_marks_back()
    }

    /// Write the waiting rows of `rows` ([`TRANSCRIPT_INSERT_ROWS`] to a statement; with `all`
    /// the last, shorter statement too), each digested for the audit chain.
    fn write_rows(&mut self, rows: &mut PendingRows, all: bool) -> StoreResult<()> {
        let width = rows.width;
        let mut done = 0;
        while rows.values.len() - done >= width * TRANSCRIPT_INSERT_ROWS
            || (all && rows.values.len() > done)
        {
            let n = ((rows.values.len() - done) / width).min(TRANSCRIPT_INSERT_ROWS);
            let chunk = &rows.values[done..done + n * width];
            // The full-size statement is kept prepared; only the last, shorter one is made
            // for its own use.
            let (mut kept, mut once);
            let insert: &mut rusqlite::Statement<'_> = if n == TRANSCRIPT_INSERT_ROWS {
                kept = self.tx.prepare_cached(&rows.full_sql)?;
                &mut kept
            } else {
                once = self.tx.prepare(&rows_insert_sql(rows.insert, width, n))?;
                &mut once
            };
            for (i, v) in chunk.iter().enumerate() {
                insert.raw_bind_parameter(i + 1, v)?;
            }
            insert.raw_execute().map_err(|e| {
                unique_violation(e, || {
                    format!(
                        "{n} rows of an import of conversations repeat an item, a turn or an id \
                         already in the study"
                    )
                })
            })?;
            for row in chunk.chunks(width) {
                let id = match row[0] {
                    Value::Integer(id) => id,
                    _ => 0,
                };
                digest_row(
                    &self.tx,
                    &mut self.direct,
                    rows.table,
                    &rows.digest,
                    id,
                    |i| ValueRef::from(&row[i]),
                )?;
            }
            done += n * width;
        }
        rows.values.drain(..done);
        Ok(())
    }

    /// External id → id of every conversation in the study.
    pub fn conversation_ids(&self) -> StoreResult<HashMap<String, i64>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT external_id, id FROM conversation")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// (conversation id, source id) → (response id, whether it has a text) for every response.
    pub fn response_ids(&self) -> StoreResult<HashMap<(i64, i64), (i64, bool)>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT conversation_id, source_id, id, text IS NOT NULL FROM response")?;
        let rows = stmt.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), (r.get(2)?, r.get(3)?))))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every item of the conversations rated with rubric `rubric_id`, as a ratings file names it.
    pub fn item_addresses(&self, rubric_id: i64) -> StoreResult<Vec<ItemAddress>> {
        let mut stmt = self.conn().prepare(
            "SELECT p.id, c.external_id, p.turn, s.key FROM response p
             JOIN conversation c ON c.id = p.conversation_id JOIN source s ON s.id = p.source_id
             WHERE c.rubric_id = ?1 ORDER BY p.id",
        )?;
        let rows = stmt.query_map([rubric_id], |r| {
            Ok(ItemAddress {
                response_id: r.get(0)?,
                conversation: r.get(1)?,
                turn: r.get(2)?,
                source: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// External response id → response id, for responses imported with an id of their own.
    pub fn response_external_ids(&self) -> StoreResult<HashMap<String, i64>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT external_id, id FROM response WHERE external_id IS NOT NULL")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Give a response the id its file uses for it.
    pub fn set_response_external_id(
        &mut self,
        response_id: i64,
        external_id: &str,
    ) -> StoreResult<()> {
        self.conn()
            .prepare_cached("UPDATE response SET external_id = ?2 WHERE id = ?1")?
            .execute(params![response_id, external_id])?;
        Ok(())
    }

    /// The context stored for a conversation.
    pub fn conversation_context(&self, conversation_id: i64) -> StoreResult<String> {
        Ok(self.conn().query_row(
            "SELECT context FROM conversation WHERE id = ?1",
            [conversation_id],
            |r| r.get(0),
        )?)
    }

    /// Give a response that has no text yet its text; a response that already has one keeps it.
    /// Returns whether the text was filled.
    pub fn fill_response_text(&mut self, response_id: i64, text: &str) -> StoreResult<bool> {
        let changed = self
            .conn()
            .prepare_cached("UPDATE response SET text = ?2 WHERE id = ?1 AND text IS NULL")?
            .execute(params![response_id, text])?;
        Ok(changed == 1)
    }
}

/// Rows of `response` or `turn` one INSERT statement of a transcript import writes.
const TRANSCRIPT_INSERT_ROWS: usize = 128;

/// The columns a transcript import writes into `conversation`, in the order it binds them.
const CONVERSATION_COLUMNS: [&str; 6] = [
    "id",
    "external_id",
    "rubric_id",
    "context",
    "language",
    "category",
];
/// The columns a transcript import writes into `response`, in the order it binds them.
const ITEM_COLUMNS: [&str; 6] = [
    "id",
    "conversation_id",
    "source_id",
    "text",
    "external_id",
    "turn",
];
/// The start of its INSERT of items (the column list of [`ITEM_COLUMNS`]).
const ITEM_INSERT: &str =
    "INSERT INTO response(id, conversation_id, source_id, text, external_id, turn) VALUES ";
/// The columns a transcript import writes into `turn`, in the order it binds them.
const TURN_COLUMNS: [&str; 7] = [
    "id",
    "conversation_id",
    "position",
    "role",
    "text",
    "source_id",
    "candidate",
];
/// The start of its INSERT of turns (the column list of [`TURN_COLUMNS`]).
const TURN_INSERT: &str =
    "INSERT INTO turn(id, conversation_id, position, role, text, source_id, candidate) VALUES ";

/// `insert` (an INSERT up to `VALUES`) of `rows` rows of `width` values each.
fn rows_insert_sql(insert: &str, width: usize, rows: usize) -> String {
    let one = format!("({})", vec!["?"; width].join(", "));
    format!("{insert}{}", vec![one; rows].join(", "))
}

/// How a transcript import digests the rows it writes into one table for the audit chain.
#[derive(Debug)]
enum Digesting {
    /// The chain is off on this connection.
    Not,
    /// From the values written: the position among them of each column the digest covers.
    Values(Vec<usize>),
    /// Read back from the table (it has a digested column the import does not write).
    ReadBack,
}

/// Hand row `id` of `table`, written with `values`, to the chain's digest.
fn digest_row<'v>(
    conn: &rusqlite::Connection,
    direct: &mut [super::audit::DirectInserts],
    table: &str,
    how: &Digesting,
    id: i64,
    value: impl Fn(usize) -> ValueRef<'v>,
) -> StoreResult<()> {
    let Some(d) = direct.iter_mut().find(|d| d.table() == table) else {
        return Ok(());
    };
    match how {
        Digesting::Not => {}
        Digesting::Values(at) => d.add(at.iter().map(|&i| value(i))),
        Digesting::ReadBack => d.add_stored(conn, id)?,
    }
    Ok(())
}

/// The rows of `response` or `turn` a transcript import holds until they fill a statement.
#[derive(Debug)]
struct PendingRows {
    table: &'static str,
    /// The INSERT up to `VALUES`.
    insert: &'static str,
    /// The INSERT of [`TRANSCRIPT_INSERT_ROWS`] rows.
    full_sql: String,
    width: usize,
    /// `width` values a row (its id first), rows in order.
    values: Vec<Value>,
    next_id: i64,
    digest: Digesting,
}

impl PendingRows {
    fn new(next_id: i64, insert: &'static str, width: usize, digest: Digesting) -> PendingRows {
        PendingRows {
            table: if insert == TURN_INSERT {
                "turn"
            } else {
                "response"
            },
            insert,
            full_sql: rows_insert_sql(insert, width, TRANSCRIPT_INSERT_ROWS),
            width,
            values: Vec::with_capacity(width * TRANSCRIPT_INSERT_ROWS),
            next_id,
            digest,
        }
    }

    /// Hold one row (its values after the id); the id it gets.
    fn push<const N: usize>(&mut self, values: [Value; N]) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.values.push(Value::Integer(id));
        self.values.extend(values);
        id
    }

    fn full(&self) -> bool {
        self.values.len() >= self.width * TRANSCRIPT_INSERT_ROWS
    }
}

/// A bulk import of conversations as transcripts in progress
/// ([`StudyTx::begin_transcript_import`]). Each row gets its id when it is handed over — the
/// next after the largest in its table, as SQLite would give it — so a conversation is written
/// at once and its items and turns `TRANSCRIPT_INSERT_ROWS` (128) to a statement. The PHI guard's
/// insert triggers are set aside meanwhile (a statement that fires a trigger keeps a copy of
/// every page it touches, and each row costs a sub-program) and the new texts marked for the
/// scan in one statement per table when the import finishes. Each row is digested for the audit chain from the values written,
/// in the table's column order: the hash the chain's trigger computes. The rows still held are
/// written by [`StudyTx::finish_transcript_import`]; in between the transaction adds responses
/// and turns only through this import.
#[derive(Debug)]
pub struct TranscriptImport {
    next_conversation: i64,
    conversation_digest: Digesting,
    items: PendingRows,
    turns: PendingRows,
}
