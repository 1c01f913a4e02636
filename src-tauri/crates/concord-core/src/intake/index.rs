//! The study's conversations, responses, sources and raters as maps loaded once at the start of
//! an import's transaction, so that tens of thousands of get-or-create look-ups cost a hash probe
//! each instead of a query. Only importers use it, always inside their one transaction.

use super::catalog::SourceEntry;
use super::{normalize_context, rater_seed};
use crate::store::{
    NewConversation, NewRater, NewSource, RaterKind, SourceKind, StoreResult, StudyTx,
};
use std::collections::HashMap;

/// A response source to create or find, from the catalogue or from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSpec {
    pub key: String,
    pub name: String,
    pub family: Option<String>,
    pub kind: SourceKind,
}

impl From<&SourceEntry> for SourceSpec {
    fn from(s: &SourceEntry) -> Self {
        SourceSpec {
            key: s.key.to_string(),
            name: s.name.to_string(),
            family: s.family.map(str::to_string),
            kind: s.kind,
        }
    }
}

/// A rater to create or find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaterSpec {
    pub kind: RaterKind,
    pub name: String,
    pub model_id: Option<String>,
    pub family: Option<String>,
}

/// The outcome of a conversation look-up.
pub struct ConversationRef {
    pub id: i64,
    pub added: bool,
    /// The stored context differs from the one in the file (after normalisation).
    pub context_differs: bool,
}

pub struct StudyIndex {
    conversations: HashMap<String, i64>,
    responses: HashMap<(i64, i64), (i64, bool)>,
    sources: HashMap<String, i64>,
    raters: HashMap<String, i64>,
}

impl StudyIndex {
    /// Load the maps, and have the transaction digest the many conversations and responses an
    /// import adds itself ([`StudyTx::add_texts_in_bulk`]).
    pub fn load(tx: &mut StudyTx<'_>) -> StoreResult<StudyIndex> {
        tx.add_texts_in_bulk()?;
        Ok(StudyIndex {
            conversations: tx.conversation_ids()?,
            responses: tx.response_ids()?,
            sources: HashMap::new(),
            raters: HashMap::new(),
        })
    }

    pub fn source(&mut self, tx: &mut StudyTx<'_>, s: &SourceSpec) -> StoreResult<i64> {
        if let Some(id) = self.sources.get(&s.key) {
            return Ok(*id);
        }
        let id = tx.upsert_source(&NewSource {
            key: &s.key,
            name: &s.name,
            family: s.family.as_deref(),
            kind: s.kind,
        })?;
        self.sources.insert(s.key.clone(), id);
        Ok(id)
    }

    pub fn rater(&mut self, tx: &mut StudyTx<'_>, r: &RaterSpec, seed: u64) -> StoreResult<i64> {
        if let Some(id) = self.raters.get(&r.name) {
            return Ok(*id);
        }
        let id = tx.upsert_rater(&NewRater {
            kind: r.kind,
            name: &r.name,
            model_id: r.model_id.as_deref(),
            family: r.family.as_deref(),
            queue_seed: rater_seed(seed, &r.name),
        })?;
        self.raters.insert(r.name.clone(), id);
        Ok(id)
    }

    pub fn conversation(
        &mut self,
        tx: &mut StudyTx<'_>,
        c: &NewConversation<'_>,
    ) -> StoreResult<ConversationRef> {
        if let Some(&id) = self.conversations.get(c.external_id) {
            let stored = tx.conversation_context(id)?;
            let differs = normalize_context(&stored) != normalize_context(c.context);
            return Ok(ConversationRef {
                id,
                added: false,
                context_differs: differs,
            });
        }
        let id = tx.add_conversation(c)?;
        self.conversations.insert(c.external_id.to_string(), id);
        Ok(ConversationRef {
            id,
            added: true,
            context_differs: false,
        })
    }

    /// Find or create the response of `source_id` to `conversation_id`; a text fills a response
    /// stored without one. Returns (response id, added, text filled).
    pub fn response(
        &mut self,
        tx: &mut StudyTx<'_>,
        conversation_id: i64,
        source_id: i64,
        text: Option<&str>,
    ) -> StoreResult<(i64, bool, bool)> {
        if let Some(entry) = self.responses.get_mut(&(conversation_id, source_id)) {
            let (id, has_text) = *entry;
            let filled = match text {
                Some(t) if !has_text => tx.fill_response_text(id, t)?,
                _ => false,
            };
            if filled {
                entry.1 = true;
            }
            return Ok((id, false, filled));
        }
        let id = tx.add_response(conversation_id, source_id, text)?;
        self.responses
            .insert((conversation_id, source_id), (id, text.is_some()));
        Ok((id, true, false))
    }
}
