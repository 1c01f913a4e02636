//! Shared helpers of the lead-workflow tests: a synthetic study (MentalBench rubric, conversations
//! in categories, several named sources, experts and one judge) on a fixed clock.

use concord_core::base::clock::SteppingClock;
use concord_core::rubric::builtin;
use concord_core::store::{
    NewConversation, NewRater, NewSource, Occasion, RaterKind, RatingInput, SourceKind, Store,
};
use std::path::Path;
use std::sync::Arc;

pub const SOURCES: [(&str, &str); 4] = [
    ("original", "Human original"),
    ("claude", "Claude-3.5-Haiku"),
    ("gpt4o", "GPT-4o"),
    ("qwen_3", "Qwen-3-4B"),
];

pub const CATEGORIES: [&str; 3] = ["anxiety", "depression", "grief"];

pub fn clock() -> Arc<SteppingClock> {
    Arc::new(SteppingClock::new(1_700_000_000_000, 1))
}

/// Fill a study: `conversations` conversations (categories cycling), every source answering
/// each, the named experts and a judge `gpt-4o-judge`.
pub fn populate(store: &mut Store, conversations: usize, experts: &[&str]) {
    populate_with(store, &builtin::mentalbench(), conversations, experts);
}

/// [`populate`] with the MentalBench rubric as given (an earlier release's, say: without codes).
pub fn populate_with(
    store: &mut Store,
    rubric: &concord_core::rubric::Rubric,
    conversations: usize,
    experts: &[&str],
) {
    store
        .write(|tx| {
            let rubric = tx.add_rubric(rubric)?;
            let mut sources = Vec::new();
            for (key, name) in SOURCES {
                sources.push(tx.upsert_source(&NewSource {
                    key,
                    name,
                    family: None,
                    kind: if key == "original" {
                        SourceKind::Human
                    } else {
                        SourceKind::Llm
                    },
                })?);
            }
            for i in 0..conversations {
                let ext = format!("conv-{i:04}");
                let context = format!("I have been feeling low for weeks ({i}).");
                let c = tx.add_conversation(&NewConversation {
                    external_id: &ext,
                    rubric_id: rubric,
                    context: &context,
                    language: Some("en"),
                    category: Some(CATEGORIES[i % CATEGORIES.len()]),
                })?;
                for (s, id) in sources.iter().enumerate() {
                    tx.add_response(c, *id, Some(&format!("Answer {s} to conversation {i}.")))?;
                }
            }
            for (i, name) in experts.iter().enumerate() {
                tx.upsert_rater(&NewRater {
                    kind: RaterKind::Expert,
                    name,
                    model_id: None,
                    family: None,
                    queue_seed: i as i64,
                })?;
            }
            tx.upsert_rater(&NewRater {
                kind: RaterKind::Judge,
                name: "gpt-4o-judge",
                model_id: Some("gpt-4o"),
                family: Some("gpt-4o"),
                queue_seed: 99,
            })?;
            Ok::<_, concord_core::store::StoreError>(())
        })
        .expect("the synthetic study is written");
}

pub fn memory_study(conversations: usize, experts: &[&str]) -> Store {
    let mut store = Store::in_memory(clock()).expect("an in-memory study opens");
    populate(&mut store, conversations, experts);
    store
}

pub fn file_study(path: &Path, conversations: usize, experts: &[&str]) -> Store {
    let mut store = Store::create(path, clock()).expect("a study file is created");
    populate(&mut store, conversations, experts);
    store
}

/// [`file_study`] whose MentalBench rubric is stored as an earlier release stored it, before
/// rubrics declared span codes.
pub fn earlier_file_study(path: &Path, conversations: usize, experts: &[&str]) -> Store {
    let mut store = Store::create(path, clock()).expect("a study file is created");
    populate_with(
        &mut store,
        &builtin::mentalbench().without_codes(),
        conversations,
        experts,
    );
    store
}

pub fn rater_id(store: &Store, name: &str) -> i64 {
    store
        .raters()
        .expect("raters read")
        .into_iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("rater {name} exists"))
        .id
}

/// Fill a study built from ratings alone (as the MentalAlign release builds one):
/// `conversations` MentalBench conversations answered by GPT-4o and the human original, the
/// answers of the first `textless` conversations held without text.
pub fn populate_textless(store: &mut Store, conversations: usize, textless: usize) {
    store
        .write(|tx| {
            let rubric = tx.add_rubric(&builtin::mentalbench())?;
            let model = tx.upsert_source(&NewSource {
                key: "gpt4o",
                name: "GPT-4o",
                family: None,
                kind: SourceKind::Llm,
            })?;
            let human = tx.upsert_source(&NewSource {
                key: "original",
                name: "Original",
                family: None,
                kind: SourceKind::Human,
            })?;
            for i in 0..conversations {
                let c = tx.add_conversation(&NewConversation {
                    external_id: &format!("c{i}"),
                    rubric_id: rubric,
                    context: &format!("I cannot sleep ({i})."),
                    language: Some("en"),
                    category: None,
                })?;
                for s in [model, human] {
                    let text = (i >= textless).then(|| format!("An answer to {i}."));
                    tx.add_response(c, s, text.as_deref())?;
                }
            }
            Ok::<_, concord_core::store::StoreError>(())
        })
        .expect("the ratings-only study is written");
}

/// Criterion ids of the MentalBench rubric, in rubric order.
pub fn criteria(store: &Store) -> Vec<i64> {
    builtin::mentalbench()
        .criteria
        .iter()
        .map(|c| store.criterion_id("mentalbench", &c.id).expect("criterion"))
        .collect()
}

/// Rate every criterion of `response` as `rater` with `value`.
pub fn rate_all(store: &mut Store, rater: i64, response: i64, value: i64, rationale: Option<&str>) {
    let crits = criteria(store);
    store
        .write(|tx| {
            for c in &crits {
                tx.set_rating(&RatingInput {
                    rater_id: rater,
                    response_id: response,
                    criterion_id: *c,
                    occasion: Occasion::First,
                    value: Some(value),
                    raw_value: None,
                    rationale,
                    origin: "screen",
                })?;
            }
            Ok::<_, concord_core::store::StoreError>(())
        })
        .expect("ratings written");
}
