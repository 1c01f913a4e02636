//! The demo study: a dozen synthetic conversations (English rated with MentalBench, Chinese with
//! PsyCrisis) answered by three named sources, two demo experts and one demo judge with some
//! ratings. Its content lives in the repository's `data/demo-study.json`, written for Concord and
//! compiled in, so the first launch and `concord demo` have something real to show.

use crate::rubric::builtin;
use crate::store::{
    NewConversation, NewRater, NewSource, Occasion, RaterKind, RatingInput, SourceKind, Store,
    StoreError,
};
use rand::{Rng, SeedableRng};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

/// The demo study's definition, as shipped.
pub const DEMO_JSON: &str = include_str!("../../../../../data/demo-study.json");

#[derive(Debug, Deserialize)]
pub struct DemoStudy {
    pub title: String,
    pub sources: Vec<DemoSource>,
    pub raters: Vec<DemoRater>,
    pub conversations: Vec<DemoConversation>,
    pub ratings: Vec<DemoRating>,
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

/// Fill an empty study with the demo content. `seed` drives the raters' queue orders.
pub fn populate_demo(store: &mut Store, seed: u64) -> Result<(), DemoError> {
    let demo = demo_study()?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    store.write(|tx| {
        tx.set_meta("title", &demo.title)?;
        let mut rubric_ids = HashMap::new();
        let mut rubrics = HashMap::new();
        for key in ["mentalbench", "psycrisis"] {
            let rubric = builtin::by_id(key).ok_or_else(|| DemoError::Malformed(key.into()))?;
            rubric_ids.insert(key.to_string(), tx.add_rubric(&rubric)?);
            rubrics.insert(key.to_string(), rubric);
        }
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
        let mut rater_ids = HashMap::new();
        for r in &demo.raters {
            let id = tx.upsert_rater(&NewRater {
                kind: r.kind,
                name: &r.name,
                model_id: r.model_id.as_deref(),
                family: r.family.as_deref(),
                queue_seed: rng.gen::<u32>() as i64,
            })?;
            rater_ids.insert(r.name.clone(), id);
        }
        let mut response_ids = HashMap::new();
        let mut conversation_rubric = HashMap::new();
        for c in &demo.conversations {
            let rubric_id = *rubric_ids
                .get(&c.rubric)
                .ok_or_else(|| DemoError::Malformed(format!("unknown rubric {}", c.rubric)))?;
            let conv_id = tx.add_conversation(&NewConversation {
                external_id: &c.id,
                rubric_id,
                context: &c.context,
                language: Some(&c.language),
                category: c.category.as_deref(),
            })?;
            conversation_rubric.insert(c.id.clone(), c.rubric.clone());
            for (source, text) in &c.responses {
                let source_id = *source_ids
                    .get(source)
                    .ok_or_else(|| DemoError::Malformed(format!("unknown source {source}")))?;
                let id = tx.add_response(conv_id, source_id, Some(text))?;
                response_ids.insert((c.id.clone(), source.clone()), id);
            }
        }
        let mut criterion_ids: HashMap<String, Vec<i64>> = HashMap::new();
        for (key, rubric) in &rubrics {
            let by_key = tx.read().criterion_ids(rubric_ids[key])?;
            let mut ids = Vec::new();
            for c in &rubric.criteria {
                let id = *by_key.get(&c.id).ok_or_else(|| StoreError::NotFound {
                    what: "criterion",
                    key: format!("{key}/{}", c.id),
                })?;
                ids.push(id);
            }
            criterion_ids.insert(key.clone(), ids);
        }
        for r in &demo.ratings {
            let response_id = *response_ids
                .get(&(r.conversation.clone(), r.source.clone()))
                .ok_or_else(|| {
                    DemoError::Malformed(format!("no response {}/{}", r.conversation, r.source))
                })?;
            let rater_id = *rater_ids
                .get(&r.rater)
                .ok_or_else(|| DemoError::Malformed(format!("unknown rater {}", r.rater)))?;
            let rubric = &conversation_rubric[&r.conversation];
            let crit = &criterion_ids[rubric];
            if crit.len() != r.values.len() {
                return Err(DemoError::Malformed(format!(
                    "{}/{} by {}: {} values for {} criteria",
                    r.conversation,
                    r.source,
                    r.rater,
                    r.values.len(),
                    crit.len()
                )));
            }
            for (criterion_id, value) in crit.iter().zip(&r.values) {
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
        }
        tx.audit(
            "concord",
            "demo_created",
            &serde_json::json!({ "seed": seed }),
        )?;
        Ok(())
    })
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
