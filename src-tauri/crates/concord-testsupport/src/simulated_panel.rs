//! A simulated expert panel written into a real study: MentalBench items rated by several experts
//! with planted severities (and optionally a planted drift), plus one LLM judge, all seeded.
//! Values are θ_item + δ_expert (+ drift) + noise, rounded and clamped to 1–5.

use concord_core::base::clock::SteppingClock;
use concord_core::rubric::builtin;
use concord_core::store::{
    ImportedRating, NewConversation, NewRater, NewSource, RaterKind, SourceKind, Store, StoreError,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::Arc;

/// What to plant.
pub struct PanelSpec<'a> {
    pub items: usize,
    /// Expert names with their severities (scale points added to every value).
    pub experts: &'a [(&'a str, f64)],
    /// (expert index, first item index of the drift, shift) on every criterion.
    pub drift: Option<(usize, usize, f64)>,
    /// Standard deviation of each value's noise.
    pub noise: f64,
    pub seed: u64,
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Write the panel into a new study at `path` (or in memory when `None`).
pub fn panel_study(path: Option<&Path>, spec: &PanelSpec<'_>) -> Store {
    let clock = Arc::new(SteppingClock::new(1_700_000_000_000, 1));
    let mut store = match path {
        Some(p) => Store::create(p, clock).expect("a new study file"),
        None => Store::in_memory(clock).expect("an in-memory study"),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    store
        .write(|tx| {
            let rubric = tx.add_rubric(&builtin::mentalbench())?;
            let criteria: Vec<i64> = builtin::mentalbench()
                .criteria
                .iter()
                .map(|c| tx.read().criterion_ids(rubric).map(|m| m[&c.id]))
                .collect::<Result<_, _>>()?;
            let sources: Vec<i64> = ["original", "claude", "gpt4o"]
                .iter()
                .map(|k| {
                    tx.upsert_source(&NewSource {
                        key: k,
                        name: k,
                        family: (*k != "original").then_some(*k),
                        kind: if *k == "original" {
                            SourceKind::Human
                        } else {
                            SourceKind::Llm
                        },
                    })
                })
                .collect::<Result<_, _>>()?;
            let experts: Vec<i64> = spec
                .experts
                .iter()
                .enumerate()
                .map(|(i, (name, _))| {
                    tx.upsert_rater(&NewRater {
                        kind: RaterKind::Expert,
                        name,
                        model_id: None,
                        family: None,
                        queue_seed: i as i64,
                    })
                })
                .collect::<Result<_, _>>()?;
            let judge = tx.upsert_rater(&NewRater {
                kind: RaterKind::Judge,
                name: "judge-x",
                model_id: Some("judge-x"),
                family: Some("judge-x"),
                queue_seed: 99,
            })?;
            let mut ratings = Vec::new();
            let mut conversation = 0;
            let mut item = 0;
            while item < spec.items {
                let c = tx.add_conversation(&NewConversation {
                    external_id: &format!("c{conversation:06}"),
                    rubric_id: rubric,
                    context: "I have not slept properly in weeks and everything feels too much.",
                    language: Some("en"),
                    category: None,
                })?;
                conversation += 1;
                for (s, source) in sources.iter().enumerate() {
                    if item >= spec.items {
                        break;
                    }
                    let response = tx.add_response(c, *source, Some("That sounds exhausting."))?;
                    let level = 2.0 + s as f64 * 0.6;
                    for &criterion in &criteria {
                        let theta = level + rng.gen_range(-0.5..0.5);
                        for (e, (_, severity)) in spec.experts.iter().enumerate() {
                            let drift = match spec.drift {
                                Some((who, from, shift)) if who == e && item >= from => shift,
                                _ => 0.0,
                            };
                            let v = theta + severity + drift + spec.noise * normal(&mut rng);
                            ratings.push(ImportedRating {
                                rater_id: experts[e],
                                response_id: response,
                                criterion_id: criterion,
                                value: Some(v.round().clamp(1.0, 5.0) as i64),
                                raw_value: None,
                                rationale: Some(format!("expert {e} on item {item}")),
                            });
                        }
                        let j = theta + 0.3 + 0.5 * normal(&mut rng);
                        ratings.push(ImportedRating {
                            rater_id: judge,
                            response_id: response,
                            criterion_id: criterion,
                            value: Some(j.round().clamp(1.0, 5.0) as i64),
                            raw_value: None,
                            rationale: None,
                        });
                    }
                    item += 1;
                }
            }
            tx.import_ratings(ratings, "simulated panel")?;
            Ok::<_, StoreError>(())
        })
        .expect("the simulated panel is written");
    store
}
