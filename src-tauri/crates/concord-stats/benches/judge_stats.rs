//! Timing of the judge-versus-experts statistics against their peers on the same data in the same
//! run: the REML ICC on 100,000 ratings (50,000 targets, each rated by 2 of 10 raters) against R's
//! lme4; the alt-test over 7 attributes × 5 experts × 1,000 items against a Python transcription
//! of the authors' reference procedure; PPI++ means over 100,000 judge scores (1,000 with expert
//! ratings) against `ppi-python`.
//!
//! `cargo bench -p concord-stats --bench judge_stats` writes the seeded data as CSV into a
//! temporary directory, times Concord, then runs `Rscript benches/judge_stats_lme4.R DIR` and
//! `python3 benches/judge_stats_peers.py DIR` (skipped with a note when absent), checks that the
//! numbers agree, and prints one JSON object per measurement with the ratio.

use concord_stats::alttest::{alt_test, AlignmentMetric, AltTestOptions};
use concord_stats::ppi::ppi_mean;
use concord_stats::reml::{reml_icc, Rating};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const ATTRIBUTES: usize = 7;
const EXPERTS: usize = 5;
const ITEMS: usize = 1_000;

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    // Box–Muller.
    let (u, v): (f64, f64) = (rng.gen_range(f64::EPSILON..1.0), rng.gen());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// Median seconds of `reps` calls after one warm-up.
fn time_it<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    f();
    let mut samples: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn reml_data(dir: &Path) -> Vec<Rating> {
    let mut rng = ChaCha8Rng::seed_from_u64(2025);
    let rater_effect: Vec<f64> = (0..10).map(|_| 0.4 * normal(&mut rng)).collect();
    let mut ratings = Vec::with_capacity(100_000);
    let mut csv = String::from("target,rater,score\n");
    for t in 0..50_000 {
        let a = 0.9 * normal(&mut rng);
        let first = rng.gen_range(0..10);
        let second = (first + rng.gen_range(1..10)) % 10;
        for r in [first, second] {
            let score = 3.0 + a + rater_effect[r] + 0.7 * normal(&mut rng);
            ratings.push(Rating {
                target: t,
                rater: r,
                score,
            });
            let _ = writeln!(csv, "{t},{r},{score}");
        }
    }
    std::fs::write(dir.join("reml.csv"), csv).expect("temporary directory is writable");
    ratings
}

/// Seven attributes: items × (5 experts + judge) Likert scores, one CSV per attribute.
/// One attribute's labels: the items × experts matrix and the judge's labels.
type Labels = (Vec<Option<f64>>, Vec<Option<f64>>);

fn alttest_data(dir: &Path) -> Vec<Labels> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut out = Vec::new();
    for a in 0..ATTRIBUTES {
        let mut humans = Vec::with_capacity(ITEMS * EXPERTS);
        let mut judge = Vec::with_capacity(ITEMS);
        let mut csv = String::from("item,rater,score\n");
        for i in 0..ITEMS {
            let truth = rng.gen_range(1..=5) as f64;
            let noisy = |p: f64, rng: &mut ChaCha8Rng| {
                if rng.gen::<f64>() < p {
                    (truth + [-1.0, 1.0][rng.gen_range(0..2)]).clamp(1.0, 5.0)
                } else {
                    truth
                }
            };
            for h in 0..EXPERTS {
                let v = noisy(0.3, &mut rng);
                humans.push(Some(v));
                let _ = writeln!(csv, "{i},{h},{v}");
            }
            let v = noisy(0.25, &mut rng);
            judge.push(Some(v));
            let _ = writeln!(csv, "{i},judge,{v}");
        }
        std::fs::write(dir.join(format!("alttest_{a}.csv")), csv).expect("writable");
        out.push((humans, judge));
    }
    out
}

/// 100,000 judge scores in 10 groups; the first 100 of each group carry an expert rating.
/// One group's expert ratings, judge scores beside them, and judge-only scores.
type Group = (Vec<f64>, Vec<f64>, Vec<f64>);

fn ppi_data(dir: &Path) -> Vec<Group> {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut csv = String::from("group,judge,expert\n");
    let mut out = Vec::new();
    for g in 0..10 {
        let (mut y, mut yh, mut yu) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..10_000 {
            let truth = 2.5 + 0.1 * g as f64 + normal(&mut rng);
            let j = truth + 0.3 + 0.5 * normal(&mut rng);
            if i < 100 {
                y.push(truth);
                yh.push(j);
                let _ = writeln!(csv, "m{g},{j},{truth}");
            } else {
                yu.push(j);
                let _ = writeln!(csv, "m{g},{j},");
            }
        }
        out.push((y, yh, yu));
    }
    std::fs::write(dir.join("ppi.csv"), csv).expect("writable");
    out
}

fn run_peer(program: &str, script: &Path, dir: &Path) -> Option<serde_json::Value> {
    let out = Command::new(program).arg(script).arg(dir).output().ok()?;
    if !out.status.success() {
        eprintln!(
            "{program} {} failed: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

fn main() {
    let dir = std::env::temp_dir().join(format!("concord-judge-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches");

    let ratings = reml_data(&dir);
    let fit = reml_icc(&ratings).expect("the simulated design is valid");
    let reml_s = time_it(5, || {
        black_box(reml_icc(black_box(&ratings)).expect("valid"));
    });
    let attrs = alttest_data(&dir);
    let options = AltTestOptions {
        metric: AlignmentMetric::NegRmse,
        ..AltTestOptions::default()
    };
    let results: Vec<_> = attrs
        .iter()
        .map(|(h, j)| alt_test(h, ITEMS, EXPERTS, j, &options).expect("valid"))
        .collect();
    let alt_s = time_it(20, || {
        for (h, j) in &attrs {
            black_box(alt_test(h, ITEMS, EXPERTS, j, &options).expect("valid"));
        }
    });
    let groups = ppi_data(&dir);
    let ppi: Vec<_> = groups
        .iter()
        .map(|(y, yh, yu)| ppi_mean(y, yh, yu, 0.05))
        .collect();
    let ppi_s = time_it(50, || {
        for (y, yh, yu) in &groups {
            black_box(ppi_mean(y, yh, yu, 0.05));
        }
    });

    let lme4 = run_peer("Rscript", &here.join("judge_stats_lme4.R"), &dir);
    let py = run_peer("python3", &here.join("judge_stats_peers.py"), &dir);

    let mut line = serde_json::json!({
        "bench": "reml_icc_100000_ratings_k2_of_10",
        "concord_s": reml_s,
        "concord_includes": "crossed + one-way REML fits and six profile-likelihood bounds",
        "variance": fit.variance,
    });
    if let Some(p) = &lme4 {
        let peer = p["seconds"].as_f64().unwrap_or(f64::NAN);
        for (k, v) in [
            ("target", fit.variance.target),
            ("rater", fit.variance.rater),
            ("residual", fit.variance.residual),
        ] {
            let e = p["variance"][k].as_f64().unwrap_or(f64::NAN);
            assert!(
                (v - e).abs() < 1e-4,
                "σ² {k}: Concord {v} vs lme4 {e} on the same data"
            );
        }
        line["lme4_s"] = peer.into();
        line["lme4_includes"] = "crossed + one-way lmer fits, no intervals".into();
        line["lme4_over_concord"] = (peer / reml_s).into();
    }
    println!("{line}");

    let mut line = serde_json::json!({
        "bench": "alttest_7_attributes_5_experts_1000_items",
        "concord_s": alt_s,
        "winning_rates": results.iter().map(|r| r.winning_rate).collect::<Vec<_>>(),
    });
    if let Some(p) = &py {
        let peer = p["alttest_seconds"].as_f64().unwrap_or(f64::NAN);
        let rates = p["alttest_winning_rates"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for (r, e) in results.iter().zip(&rates) {
            assert_eq!(
                Some(r.winning_rate),
                e.as_f64(),
                "same winning rate as the transcription"
            );
        }
        line["python_reference_s"] = peer.into();
        line["python_over_concord"] = (peer / alt_s).into();
    }
    println!("{line}");

    let mut line = serde_json::json!({
        "bench": "ppi_100000_judge_scores_10_groups_1000_expert",
        "concord_s": ppi_s,
    });
    if let Some(p) = &py {
        let peer = p["ppi_seconds"].as_f64().unwrap_or(f64::NAN);
        let est = p["ppi_estimates"].as_array().cloned().unwrap_or_default();
        for (r, e) in ppi.iter().zip(&est) {
            let (a, e) = (
                r.estimate.unwrap_or(f64::NAN),
                e.as_f64().unwrap_or(f64::NAN),
            );
            assert!((a - e).abs() < 1e-9, "PPI++ estimate {a} vs ppi-python {e}");
        }
        line["ppi_python_s"] = peer.into();
        line["ppi_python_over_concord"] = (peer / ppi_s).into();
    }
    println!("{line}");
    let _ = std::fs::remove_dir_all(&dir);
}
