//! A study for the reviewer's questions, written as files a lead would import (long-form items
//! with a `category` column, the experts' and the judges' ratings) and imported through the
//! long-form importer, for both rubrics: conversations in three risk categories, one rare
//! category whose experts rated a single response, and conversations without a category; five
//! sources; three experts who rate two thirds of the conversations (every response of them) and
//! two of whom re-rate some as retest items; three judges who rate every response — a good one,
//! a fair one, and a contrarian one that is worse than chance on the binary dimensions. Every
//! value is drawn from a ChaCha8 stream of the seed, so the files and the study are the same for
//! a seed.

use concord_core::base::clock::SteppingClock;
use concord_core::intake::long::{import_items, import_ratings, ItemColumns, RatingColumns};
use concord_core::intake::ImportOptions;
use concord_core::rubric::{builtin, Scale};
use concord_core::store::{Occasion, RaterKind, RatingInput, Store, StoreError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The three common categories, with the share of binary dimensions truly present in each.
pub const CATEGORIES: [(&str, f64); 3] = [
    ("suicidal-ideation", 0.55),
    ("self-harm", 0.35),
    ("existential", 0.2),
];
/// A category of one conversation whose experts rated one response only.
pub const RARE_CATEGORY: &str = "eating";
/// Conversations per common category.
pub const PER_CATEGORY: usize = 9;
/// Conversations without a category.
pub const UNCATEGORISED: usize = 3;
pub const SOURCES: [&str; 5] = [
    "gpt-4o",
    "claude-3-5-sonnet",
    "llama-3-70b",
    "qwen-2-72b",
    "human",
];
pub const EXPERTS: [&str; 3] = ["Ana", "Boris", "Chen"];
/// The judges: a good one, a fair one, and a contrarian one (binary labels flipped more often
/// than kept, so its sensitivity + specificity is below 1).
pub const JUDGES: [&str; 3] = ["judge-good", "judge-fair", "judge-contrarian"];
/// Expert-rated conversations whose responses the first two experts rate again (retest).
pub const RETESTED_CONVERSATIONS: usize = 4;

/// The files written for one rubric.
#[derive(Debug, Clone)]
pub struct RubricFiles {
    pub rubric: &'static str,
    pub items: PathBuf,
    pub experts: PathBuf,
    pub judges: PathBuf,
}

/// A conversation of the study: its id, category, the share of binary dimensions truly present,
/// and how many of its sources' responses the experts rate (in source order).
pub struct Conversation {
    pub id: String,
    pub category: Option<&'static str>,
    pub prevalence: f64,
    pub rated_sources: usize,
}

/// The conversations of `rubric`, in file order.
pub fn conversations(rubric: &str) -> Vec<Conversation> {
    conversations_scaled(rubric, PER_CATEGORY)
}

/// The conversations of `rubric` with `per_category` conversations in each common category.
pub fn conversations_scaled(rubric: &str, per_category: usize) -> Vec<Conversation> {
    let mut out = Vec::new();
    let mut n = 0;
    let mut push = |category: Option<&'static str>, prevalence: f64, rare: bool| {
        let rated_sources = if rare {
            1
        } else if (n / CATEGORIES.len()) % 3 == 2 {
            // Every third round of the categories is left to the judges.
            0
        } else {
            SOURCES.len()
        };
        out.push(Conversation {
            id: format!("{rubric}-c{n:03}"),
            category,
            prevalence,
            rated_sources,
        });
        n += 1;
    };
    for _ in 0..per_category {
        for (category, prevalence) in CATEGORIES {
            push(Some(category), prevalence, false);
        }
    }
    push(Some(RARE_CATEGORY), 0.3, true);
    for _ in 0..UNCATEGORISED {
        push(None, 0.3, false);
    }
    out
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn likert(x: f64) -> i64 {
    x.round().clamp(1.0, 5.0) as i64
}

/// Judge `judge`'s value of a true value.
fn judged(judge: usize, truth: i64, binary: bool, rng: &mut ChaCha8Rng) -> i64 {
    if binary {
        let flip = [0.08, 0.22, 0.6][judge];
        return if rng.gen_bool(flip) { 1 - truth } else { truth };
    }
    match judge {
        0 => likert(truth as f64 + 0.5 * normal(rng)),
        1 => likert(truth as f64 + 0.4 + 0.9 * normal(rng)),
        _ => rng.gen_range(1..=5),
    }
}

/// An expert's value of a true value.
fn rated(truth: i64, binary: bool, rng: &mut ChaCha8Rng) -> i64 {
    if binary {
        if rng.gen_bool(0.07) {
            1 - truth
        } else {
            truth
        }
    } else {
        likert(truth as f64 + 0.45 * normal(rng))
    }
}

/// Write the items, experts' and judges' files of `rubric` (`mentalbench` or `psycrisis`) into
/// `dir`.
pub fn write_files(dir: &Path, rubric: &'static str, seed: u64) -> RubricFiles {
    write_files_scaled(dir, rubric, seed, PER_CATEGORY)
}

/// [`write_files`] with `per_category` conversations in each common category (benchmarks).
pub fn write_files_scaled(
    dir: &Path,
    rubric: &'static str,
    seed: u64,
    per_category: usize,
) -> RubricFiles {
    let spec = builtin::by_id(rubric).expect("a built-in rubric");
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ rubric.len() as u64);
    let mut items = String::from("conversation_id,context,response_id,source,text,category\n");
    let mut experts = String::from("item,rater,criterion,score\n");
    let mut judges = String::from("item,rater,criterion,score\n");
    let source_level = [0.9, 0.4, -0.2, -0.6, 0.2];
    for c in conversations_scaled(rubric, per_category) {
        let item_level = 0.6 * normal(&mut rng);
        for (s, source) in SOURCES.iter().enumerate() {
            let response = format!("{}-{source}", c.id);
            let _ = writeln!(
                items,
                "{},\"I feel I cannot go on ({}).\",{response},{source},\"I am here with you; tell me more.\",{}",
                c.id,
                c.id,
                c.category.unwrap_or("")
            );
            for criterion in &spec.criteria {
                let binary = criterion.scale == Scale::Binary;
                let truth = if binary {
                    i64::from(rng.gen_bool(c.prevalence))
                } else {
                    likert(3.0 + source_level[s] + item_level + 0.5 * normal(&mut rng))
                };
                if s < c.rated_sources {
                    for e in EXPERTS {
                        let v = rated(truth, binary, &mut rng);
                        let _ = writeln!(experts, "{response},{e},{},{v}", criterion.id);
                    }
                }
                for (j, name) in JUDGES.iter().enumerate() {
                    let v = judged(j, truth, binary, &mut rng);
                    let _ = writeln!(judges, "{response},{name},{},{v}", criterion.id);
                }
            }
        }
    }
    let write = |name: &str, text: &str| {
        let path = dir.join(format!("{rubric}-{name}.csv"));
        std::fs::write(&path, text).expect("the fixture file is written");
        path
    };
    RubricFiles {
        rubric,
        items: write("items", &items),
        experts: write("experts", &experts),
        judges: write("judges", &judges),
    }
}

/// Import one rubric's files into `store`.
pub fn import_files(store: &mut Store, files: &RubricFiles) {
    let options = ImportOptions::default();
    import_items(
        store,
        &files.items,
        files.rubric,
        &ItemColumns::default(),
        None,
        &options,
    )
    .expect("the items import");
    for (path, kind) in [
        (&files.experts, RaterKind::Expert),
        (&files.judges, RaterKind::Judge),
    ] {
        let columns = RatingColumns {
            new_rater_kind: kind,
            ..RatingColumns::default()
        };
        import_ratings(store, path, files.rubric, &columns, None, &options)
            .expect("the ratings import");
    }
}

/// The retest values: the first two experts rate every response of the first
/// [`RETESTED_CONVERSATIONS`] expert-rated conversations of every rubric again — their first
/// value, one point off on a 1–5 criterion every third time and flipped on a binary one every
/// seventh. (expert, response, criterion, value).
pub fn retest_values(store: &Store) -> Vec<(i64, i64, i64, i64)> {
    let experts: Vec<i64> = store
        .rater_records()
        .expect("raters")
        .into_iter()
        .filter(|r| EXPERTS[..2].contains(&r.name.as_str()))
        .map(|r| r.id)
        .collect();
    let mut out = Vec::new();
    for stored in store.rubrics().expect("rubrics") {
        let ids = store
            .read()
            .criterion_ids(stored.id)
            .expect("criterion ids");
        let retested = conversations(&stored.rubric.id)
            .into_iter()
            .filter(|c| c.rated_sources == SOURCES.len())
            .take(RETESTED_CONVERSATIONS);
        for c in retested {
            for source in SOURCES {
                let item = format!("{}-{source}", c.id);
                let Some(response) = store.response_by_item(&item).expect("a lookup") else {
                    continue;
                };
                let response = response.id;
                for criterion in &stored.rubric.criteria {
                    let criterion_id = ids[&criterion.id];
                    for &expert in &experts {
                        let Some((Some(first), _)) = store
                            .rating_value(expert, response, criterion_id)
                            .expect("a rating lookup")
                        else {
                            continue;
                        };
                        let n = out.len();
                        let value = match criterion.scale {
                            Scale::Binary if n % 7 == 0 => 1 - first,
                            Scale::Binary => first,
                            _ if n % 3 == 0 && first < 5 => first + 1,
                            _ if n % 3 == 0 => first - 1,
                            _ => first,
                        };
                        out.push((expert, response, criterion_id, value));
                    }
                }
            }
        }
    }
    out
}

/// Write [`retest_values`] into the study as retest ratings.
pub fn add_retests(store: &mut Store) {
    let retests = retest_values(store);
    store
        .write(|tx| -> Result<(), StoreError> {
            for &(rater, response, criterion, value) in &retests {
                tx.set_rating(&RatingInput {
                    rater_id: rater,
                    response_id: response,
                    criterion_id: criterion,
                    occasion: Occasion::Retest,
                    value: Some(value),
                    raw_value: None,
                    rationale: None,
                    origin: "screen",
                })?;
            }
            Ok(())
        })
        .expect("the retests are written");
}

/// The whole study at `path`: both rubrics' files written into `dir` and imported, then the
/// retests.
pub fn reviewer_study(path: &Path, dir: &Path, seed: u64) -> Store {
    let clock = Arc::new(SteppingClock::new(1_700_000_000_000, 1));
    let mut store = Store::create(path, clock).expect("a new study file");
    for rubric in ["psycrisis", "mentalbench"] {
        import_files(&mut store, &write_files(dir, rubric, seed));
    }
    add_retests(&mut store);
    store
}
