//! The demo study: a dozen synthetic single-turn conversations (English rated with MentalBench,
//! Chinese with PsyCrisis) answered by three named sources, and seven multi-turn conversations —
//! five rated reply by reply with MentalBench (one in Chinese, one ending in two candidate
//! replies), two rated whole with the shipped session rubric `session-care` (one in Chinese) —
//! with two demo experts and one demo judge and their ratings. Its content lives in the
//! repository's `data/demo-study.json`, written for Concord and compiled in, so the first launch
//! and `concord demo` have something real to show. Each demo expert's queue seed is drawn so that
//! the queue the rating screen gives them opens on a conversation: a reply with at least two turns
//! before it, or a whole session.

use crate::rubric::{builtin, Rubric, Scope};
use crate::store::{
    NewConversation, NewRater, NewSource, NewTurn, Occasion, RaterKind, RatingInput, Role,
    SourceKind, Store, StoreError, StudyTx,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The demo study's definition, as shipped.
pub const DEMO_JSON: &str = include_str!("../../../../../data/demo-study.json");

/// The rubrics the demo study holds.
const DEMO_RUBRICS: [&str; 3] = ["mentalbench", "psycrisis", "session-care"];

#[derive(Debug, Deserialize)]
pub struct DemoStudy {
    pub title: String,
    pub sources: Vec<DemoSource>,
    pub raters: Vec<DemoRater>,
    pub conversations: Vec<DemoConversation>,
    pub ratings: Vec<DemoRating>,
    /// Conversations of many turns.
    #[serde(default)]
    pub transcripts: Vec<DemoTranscript>,
}

#[derive(Debug, Deserialize)]
pub struct DemoSource {
    pub key: String,
    pub name: String,
    pub family: Option<String>,
    pub kind: SourceKind,
}

#[derive(Debug, Deserialize)]
pub struct DemoRater {
    pub name: String,
    pub kind: RaterKind,
    pub model_id: Option<String>,
    pub family: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct DemoConversation {
    pub id: String,
    pub rubric: String,
    pub language: String,
    #[serde(default)]
    pub category: Option<String>,
    pub context: String,
    pub responses: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
pub struct DemoRating {
    pub conversation: String,
    pub source: String,
    pub rater: String,
    /// One value per criterion of the conversation's rubric, in rubric order.
    pub values: Vec<i64>,
}

/// A conversation of many turns: with a reply rubric its assistant turns and candidates are
/// rated, with a session rubric the whole conversation is.
#[derive(Debug, Deserialize)]
pub struct DemoTranscript {
    pub id: String,
    pub rubric: String,
    pub language: String,
    #[serde(default)]
    pub category: Option<String>,
    /// The source of its assistant turns that name none.
    #[serde(default)]
    pub source: Option<String>,
    pub messages: Vec<DemoMessage>,
    /// Assistant replies after the last message (a user turn), one per source.
    #[serde(default)]
    pub candidates: Vec<DemoCandidate>,
    pub ratings: Vec<DemoTurnRating>,
}

#[derive(Debug, Deserialize)]
pub struct DemoMessage {
    pub role: Role,
    pub content: String,
    #[serde(default)]
    pub source: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct DemoCandidate {
    pub source: String,
    pub content: String,
}

/// A rating of one reply (`turn`, and `source` where the turn has candidates) or of the whole
/// conversation (neither).
#[derive(Debug, Deserialize)]
pub struct DemoTurnRating {
    #[serde(default)]
    pub turn: Option<i64>,
    #[serde(default)]
    pub source: Option<String>,
    pub rater: String,
    /// One value per criterion of the rubric, in rubric order.
    pub values: Vec<i64>,
}

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("the demo data is malformed: {0}")]
    Malformed(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The shipped demo definition.
pub fn demo_study() -> Result<DemoStudy, DemoError> {
    serde_json::from_str(DEMO_JSON).map_err(|e| DemoError::Malformed(e.to_string()))
}

/// The demo's rubrics in the study: id, rubric and criterion ids in rubric order, by key.
struct DemoRubrics(HashMap<String, (i64, Rubric, Vec<i64>)>);

impl DemoRubrics {
    fn add(tx: &mut StudyTx<'_>) -> Result<DemoRubrics, DemoError> {
        let mut out = HashMap::new();
        for key in DEMO_RUBRICS {
            let rubric = builtin::by_id(key).ok_or_else(|| DemoError::Malformed(key.into()))?;
            let id = tx.add_rubric(&rubric)?;
            let by_key = tx.read().criterion_ids(id)?;
            let mut ids = Vec::new();
            for c in &rubric.criteria {
                ids.push(*by_key.get(&c.id).ok_or_else(|| StoreError::NotFound {
                    what: "criterion",
                    key: format!("{key}/{}", c.id),
                })?);
            }
            out.insert(key.to_string(), (id, rubric, ids));
        }
        Ok(DemoRubrics(out))
    }

    fn get(&self, key: &str) -> Result<&(i64, Rubric, Vec<i64>), DemoError> {
        self.0
            .get(key)
            .ok_or_else(|| DemoError::Malformed(format!("unknown rubric {key}")))
    }
}

/// Where the demo's items are: single-turn answers by (conversation, source), transcript items
/// by (conversation, turn, source) — `None` for a session item —, and the items a conversation
/// shows as one (a reply after at least two turns, or a whole session).
#[derive(Default)]
struct DemoItems {
    answers: HashMap<(String, String), i64>,
    transcript: HashMap<(String, Option<i64>, String), i64>,
    conversations: HashSet<i64>,
    all: Vec<i64>,
}

/// Fill an empty study with the demo content. `seed` drives the raters' queue orders.
pub fn populate_demo(store: &mut Store, seed: u64) -> Result<(), DemoError> {
    let demo = demo_study()?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    store.write(|tx| {
        tx.set_meta("title", &demo.title)?;
        // The first screen says this is sample data (and what each role does next).
        tx.set_meta(crate::store::SAMPLE_DATA_META, "demo")?;
        let rubrics = DemoRubrics::add(tx)?;
        let mut source_ids = HashMap::new();
        for s in &demo.sources {
            let id = tx.upsert_source(&NewSource {
                key: &s.key,
                name: &s.name,
                family: s.family.as_deref(),
                kind: s.kind,
            })?;
            source_ids.insert(s.key.clone(), id);
        }
        let mut items = DemoItems::default();
        let mut conversation_rubric = HashMap::new();
        for c in &demo.conversations {
            let (rubric_id, _, _) = rubrics.get(&c.rubric)?;
            let conv_id = tx.add_conversation(&NewConversation {
                external_id: &c.id,
                rubric_id: *rubric_id,
                context: &c.context,
                language: Some(&c.language),
                category: c.category.as_deref(),
            })?;
            conversation_rubric.insert(c.id.clone(), c.rubric.clone());
            for (source, text) in &c.responses {
                let id = tx.add_response(conv_id, source_of(&source_ids, source)?, Some(text))?;
                items.answers.insert((c.id.clone(), source.clone()), id);
                items.all.push(id);
            }
        }
        for t in &demo.transcripts {
            add_transcript(tx, t, &rubrics, &source_ids, &mut items)?;
        }
        let rater_ids = add_raters(tx, &demo, &mut rng, &items)?;
        for r in &demo.ratings {
            let response_id = *items
                .answers
                .get(&(r.conversation.clone(), r.source.clone()))
                .ok_or_else(|| {
                    DemoError::Malformed(format!("no response {}/{}", r.conversation, r.source))
                })?;
            let (_, _, criteria) = rubrics.get(&conversation_rubric[&r.conversation])?;
            let what = format!("{}/{} by {}", r.conversation, r.source, r.rater);
            rate(
                tx,
                rater(&rater_ids, &r.rater)?,
                response_id,
                criteria,
                &r.values,
                &what,
            )?;
        }
        for t in &demo.transcripts {
            let (_, _, criteria) = rubrics.get(&t.rubric)?;
            for r in &t.ratings {
                let source = r.source.clone().or(t.source.clone()).unwrap_or_default();
                let key = (t.id.clone(), r.turn, source);
                let response_id = *items.transcript.get(&key).ok_or_else(|| {
                    DemoError::Malformed(format!("no item {}/{:?}/{}", key.0, key.1, key.2))
                })?;
                let what = format!("{}/{:?} by {}", t.id, r.turn, r.rater);
                rate(
                    tx,
                    rater(&rater_ids, &r.rater)?,
                    response_id,
                    criteria,
                    &r.values,
                    &what,
                )?;
            }
        }
        tx.audit(
            "concord",
            "demo_created",
            &serde_json::json!({ "seed": seed }),
        )?;
        Ok(())
    })
}

fn source_of(sources: &HashMap<String, i64>, key: &str) -> Result<i64, DemoError> {
    sources
        .get(key)
        .copied()
        .ok_or_else(|| DemoError::Malformed(format!("unknown source {key}")))
}

fn rater(raters: &HashMap<String, i64>, name: &str) -> Result<i64, DemoError> {
    raters
        .get(name)
        .copied()
        .ok_or_else(|| DemoError::Malformed(format!("unknown rater {name}")))
}

/// Write one transcript: every message and candidate as a reply item (a reply rubric's
/// assistant turns) or a turn of history, and a session rubric's session item.
fn add_transcript(
    tx: &mut StudyTx<'_>,
    t: &DemoTranscript,
    rubrics: &DemoRubrics,
    sources: &HashMap<String, i64>,
    items: &mut DemoItems,
) -> Result<(), DemoError> {
    let (rubric_id, rubric, _) = rubrics.get(&t.rubric)?;
    let conv = tx.add_conversation(&NewConversation {
        external_id: &t.id,
        rubric_id: *rubric_id,
        context: "",
        language: Some(&t.language),
        category: t.category.as_deref(),
    })?;
    let session = rubric.scope == Scope::Session;
    let mut item = |tx: &mut StudyTx<'_>, turn: Option<i64>, source: &str, text: Option<&str>| {
        let id = tx.add_item(conv, source_of(sources, source)?, turn, text)?;
        items
            .transcript
            .insert((t.id.clone(), turn, source.to_string()), id);
        items.all.push(id);
        if turn.is_none_or(|n| n >= 3) {
            items.conversations.insert(id);
        }
        Ok::<_, DemoError>(())
    };
    if session {
        item(tx, None, t.source.as_deref().unwrap_or_default(), None)?;
    }
    let after = t.messages.len() as i64 + 1;
    let said = t.messages.iter().enumerate().map(|(i, m)| {
        let source = (m.role == Role::Assistant).then(|| m.source.as_ref().or(t.source.as_ref()));
        (i as i64 + 1, m.role, &m.content, source.flatten(), false)
    });
    let candidates = t
        .candidates
        .iter()
        .map(|c| (after, Role::Assistant, &c.content, Some(&c.source), true));
    for (position, role, text, source, candidate) in said.chain(candidates) {
        match source {
            Some(source) if !session => item(tx, Some(position), source, Some(text))?,
            _ => {
                tx.add_turn(&NewTurn {
                    conversation_id: conv,
                    position,
                    role,
                    text,
                    source_id: source.map(|s| source_of(sources, s)).transpose()?,
                    candidate,
                })?;
            }
        }
    }
    Ok(())
}

/// The demo's raters; each expert's queue seed drawn until the queue the rating screen would
/// give them (every item, shuffled with the seed as `workflow::queue` shuffles it) opens on a
/// conversation, so a newcomer who picks a demo expert sees one first.
fn add_raters(
    tx: &mut StudyTx<'_>,
    demo: &DemoStudy,
    rng: &mut rand_chacha::ChaCha8Rng,
    items: &DemoItems,
) -> Result<HashMap<String, i64>, DemoError> {
    let mut order = items.all.clone();
    order.sort_unstable();
    let mut ids = HashMap::new();
    for r in &demo.raters {
        let mut queue_seed = rng.gen::<u32>();
        if r.kind == RaterKind::Expert && !items.conversations.is_empty() {
            for _ in 0..10_000 {
                let mut shown = order.clone();
                shown.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(
                    queue_seed as u64,
                ));
                if shown
                    .first()
                    .is_some_and(|i| items.conversations.contains(i))
                {
                    break;
                }
                queue_seed = rng.gen::<u32>();
            }
        }
        let id = tx.upsert_rater(&NewRater {
            kind: r.kind,
            name: &r.name,
            model_id: r.model_id.as_deref(),
            family: r.family.as_deref(),
            queue_seed: queue_seed as i64,
        })?;
        ids.insert(r.name.clone(), id);
    }
    Ok(ids)
}

/// Write one rater's values of one item, one per criterion in rubric order.
fn rate(
    tx: &mut StudyTx<'_>,
    rater_id: i64,
    response_id: i64,
    criteria: &[i64],
    values: &[i64],
    what: &str,
) -> Result<(), DemoError> {
    if criteria.len() != values.len() {
        return Err(DemoError::Malformed(format!(
            "{what}: {} values for {} criteria",
            values.len(),
            criteria.len()
        )));
    }
    for (criterion_id, value) in criteria.iter().zip(values) {
        tx.set_rating(&RatingInput {
            rater_id,
            response_id,
            criterion_id: *criterion_id,
            occasion: Occasion::First,
            value: Some(*value),
            raw_value: None,
            rationale: None,
            origin: "demo",
        })?;
    }
    Ok(())
}

/// Create the demo study at `path`. Refuses (changing nothing) if anything but nothing is there.
pub fn create_demo_at(
    path: &std::path::Path,
    clock: std::sync::Arc<dyn crate::base::clock::Clock>,
    seed: u64,
) -> Result<Store, DemoError> {
    create_demo_with(path, clock, seed, None)
}

/// [`create_demo_at`], encrypted with `key` when one is given.
pub fn create_demo_with(
    path: &std::path::Path,
    clock: std::sync::Arc<dyn crate::base::clock::Clock>,
    seed: u64,
    key: Option<&crate::store::Passphrase>,
) -> Result<Store, DemoError> {
    let mut store = Store::create_with(path, clock, key)?;
    if let Err(e) = populate_demo(&mut store, seed) {
        drop(store);
        // The file was created by us a moment ago and holds nothing else: remove it.
        for suffix in ["", "-wal", "-shm"] {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            let _ = std::fs::remove_file(std::path::PathBuf::from(p));
        }
        return Err(e);
    }
    Ok(store)
}

/// Draw a fresh seed from any RNG the caller owns (keeps randomness passed in).
pub fn seed_from(rng: &mut impl Rng) -> u64 {
    rng.gen()
}
