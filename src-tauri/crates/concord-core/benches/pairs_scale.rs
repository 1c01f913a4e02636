//! Pairwise preferences at scale: a MentalBench study of CONVERSATIONS conversations with ten
//! answers each, its pair design (ten pairs per conversation: 100,000 pairs by default), the
//! assignment of every pair to two of twenty experts (200,000 items, sides drawn per expert), one
//! verdict per assigned pair on `overall` written in one transaction, and the pairwise report
//! (the experts' Bradley–Terry fit on those 200,000 verdicts with a 1,000-resample cluster
//! bootstrap, agreement between the experts). Each phase is timed on the wall clock, with the
//! process's peak resident memory (VmHWM) after it; one JSON line per phase.
//!
//! Run: `cargo bench -p concord-core --bench pairs_scale [-- CONVERSATIONS]` (default 10,000).

use concord_core::base::clock::SystemClock;
use concord_core::panel::pairwise::{pairwise_report, PairwiseOptions};
use concord_core::rubric::builtin;
use concord_core::store::{
    NewConversation, NewRater, NewSource, PairVerdictInput, RaterKind, SourceKind, Store,
    StoreError, Winner,
};
use concord_core::workflow::pairs::{self, DesignMethod};
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use std::time::Instant;

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn report(phase: &str, started: Instant, extra: serde_json::Value) {
    let mut line = serde_json::json!({
        "bench": "pairs_scale",
        "phase": phase,
        "seconds": (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        "peak_rss_mib": (peak_rss_mib() * 10.0).round() / 10.0,
    });
    if let (Some(l), Some(e)) = (line.as_object_mut(), extra.as_object()) {
        l.extend(e.clone());
    }
    println!("{line}");
}

fn main() {
    let conversations: u64 = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("pairs-scale.concord");
    let mut store = Store::create(&path, Arc::new(SystemClock)).expect("the study");

    let t = Instant::now();
    store
        .write(|tx| -> Result<(), StoreError> {
            let rubric = tx.add_rubric(&builtin::mentalbench())?;
            let mut sources = Vec::new();
            for s in 0..10 {
                sources.push(tx.upsert_source(&NewSource {
                    key: &format!("model-{s}"),
                    name: &format!("Model {s}"),
                    family: None,
                    kind: SourceKind::Llm,
                })?);
            }
            for c in 0..conversations {
                let conv = tx.add_conversation(&NewConversation {
                    external_id: &format!("c{c:06}"),
                    rubric_id: rubric,
                    context: "I have not slept properly for weeks and I feel alone.",
                    language: Some("en"),
                    category: None,
                })?;
                for (s, source) in sources.iter().enumerate() {
                    tx.add_response(conv, *source, Some(&format!("Answer {s} to {c}.")))?;
                }
            }
            for e in 0..20 {
                tx.upsert_rater(&NewRater {
                    kind: RaterKind::Expert,
                    name: &format!("Expert {e:02}"),
                    model_id: None,
                    family: None,
                    queue_seed: e,
                })?;
            }
            Ok(())
        })
        .expect("the study is written");
    report(
        "study",
        t,
        serde_json::json!({"conversations": conversations, "responses": conversations * 10}),
    );

    let t = Instant::now();
    let design = pairs::design(&mut store, None, None, DesignMethod::PerConversation(10), 7)
        .expect("the design");
    report("design", t, serde_json::json!({"pairs": design.pairs}));

    let t = Instant::now();
    let assigned = pairs::assign(&mut store, None, 2, 7).expect("the assignment");
    report(
        "assign",
        t,
        serde_json::json!({"pairs": assigned.pairs, "items": assigned.pairs * 2, "experts": assigned.experts.len()}),
    );

    let t = Instant::now();
    let rubric = pairs::designed_rubric(&store, None).expect("the rubric");
    let overall = store.read().criterion_ids(rubric.id).expect("criteria")["overall"];
    let assignments = store
        .read()
        .pair_assignments(rubric.id)
        .expect("assignments");
    let pairs_by_id: std::collections::HashMap<i64, (i64, i64)> = store
        .read()
        .pairs(rubric.id)
        .expect("pairs")
        .into_iter()
        .map(|p| (p.id, (p.left_source_id, p.right_source_id)))
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    store
        .write(|tx| -> Result<(), StoreError> {
            for a in &assignments {
                let (l, r) = pairs_by_id[&a.pair_id];
                // The source with the higher id is better; experts see it four times in five.
                let better_left = l > r;
                let winner = if rng.gen_bool(0.1) {
                    Winner::Tie
                } else if better_left == rng.gen_bool(0.8) {
                    Winner::Left
                } else {
                    Winner::Right
                };
                tx.set_pair_verdict(&PairVerdictInput {
                    rater_id: a.rater_id,
                    pair_id: a.pair_id,
                    criterion_id: overall,
                    left_first: a.left_first,
                    winner: Some(winner),
                    rationale: None,
                    origin: "bench",
                })?;
            }
            Ok(())
        })
        .expect("the verdicts");
    report(
        "verdicts",
        t,
        serde_json::json!({"verdicts": assignments.len()}),
    );

    let t = Instant::now();
    let r = pairwise_report(&store, &PairwiseOptions::default()).expect("the report");
    let board = r
        .leaderboards
        .iter()
        .find(|l| l.criterion == "overall")
        .expect("the overall leaderboard");
    report(
        "report",
        t,
        serde_json::json!({"verdicts": r.verdicts, "resamples": board.resamples, "resamples_kept": board.resamples_kept,
                           "top_source": board.sources.first().map(|s| s.source.clone())}),
    );
}
