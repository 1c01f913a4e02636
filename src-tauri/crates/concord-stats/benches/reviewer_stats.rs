//! Timing of the reviewer's statistics at MentalBench scale (100,000 responses × 4 judges)
//! against their Python references on the same data in the same run: corrected prevalence with
//! its interval and allocation (the authors' `llm_judge_reporting`), prediction-powered power
//! analysis (`ppi-python`), a G-study of 100,000 targets × 4 raters × 2 occasions (REML here,
//! ANOVA expected mean squares with numpy there — the two coincide on balanced data) and
//! Dawid–Skene on 400,000 labels (`crowd-kit`).
//!
//! `cargo bench -p concord-stats --bench reviewer_stats` writes the seeded data as CSV into a
//! temporary directory, times Concord (median of 3 runs), then runs
//! `python3 benches/reviewer_stats_peers.py DIR` (another interpreter with `CONCORD_BENCH_PYTHON`;
//! skipped with a note when absent), checks that the numbers agree, and prints one JSON object
//! per method with the ratio.

use concord_stats::dawid_skene::{dawid_skene, DawidSkeneOptions, LabelRating};
use concord_stats::gtheory::{g_study, GDesign, GScore};
use concord_stats::power::{ppi_mean_power, PowerGoal};
use concord_stats::prevalence::{allocate_calibration, corrected_prevalence, PrevalenceCounts};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const ITEMS: usize = 100_000;
const JUDGES: usize = 4;

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let (u, v): (f64, f64) = (rng.gen_range(f64::EPSILON..1.0), rng.gen());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

fn time_it<T, F: FnMut() -> T>(reps: usize, mut f: F) -> (T, f64) {
    let mut out = f();
    let mut samples: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            out = black_box(f());
            t.elapsed().as_secs_f64()
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    (out, samples[samples.len() / 2])
}

/// 0/1 labels of four judges on every item, the expert's on 1,000 of them (8% truly positive).
fn prevalence_data(dir: &Path) -> (Vec<[u8; JUDGES]>, Vec<Option<u8>>) {
    let mut rng = ChaCha8Rng::seed_from_u64(2511);
    let (sens, spec) = ([0.75, 0.85, 0.9, 0.6], [0.97, 0.9, 0.95, 0.99]);
    let mut csv = String::from("item,j1,j2,j3,j4,expert\n");
    let (mut judges, mut expert) = (Vec::new(), Vec::new());
    for i in 0..ITEMS {
        let truth = rng.gen_bool(0.08);
        let j: [u8; JUDGES] = std::array::from_fn(|k| {
            u8::from(if truth {
                rng.gen_bool(sens[k])
            } else {
                !rng.gen_bool(spec[k])
            })
        });
        let e = (i % 100 == 0).then_some(u8::from(truth));
        let _ = writeln!(
            csv,
            "i{i},{},{},{},{},{}",
            j[0],
            j[1],
            j[2],
            j[3],
            e.map_or(String::new(), |v| v.to_string())
        );
        judges.push(j);
        expert.push(e);
    }
    std::fs::write(dir.join("prevalence.csv"), csv).expect("write prevalence.csv");
    (judges, expert)
}

fn prevalence_run(judges: &[[u8; JUDGES]], expert: &[Option<u8>]) -> Vec<[f64; 4]> {
    (0..JUDGES)
        .map(|k| {
            let mut c = PrevalenceCounts {
                n_items: judges.len() as u64,
                ..PrevalenceCounts::default()
            };
            for (j, e) in judges.iter().zip(expert) {
                let j = j[k] == 1;
                c.judged_positive += u64::from(j);
                match (e, j) {
                    (Some(1), true) => c.true_positive += 1,
                    (Some(1), false) => c.false_negative += 1,
                    (Some(_), false) => c.true_negative += 1,
                    (Some(_), true) => c.false_positive += 1,
                    (None, _) => {}
                }
            }
            let r = corrected_prevalence(&c, 0.95).expect("informative judges");
            let a = allocate_calibration(
                4000,
                r.raw_rate,
                r.specificity,
                r.sensitivity,
                r.n_calibration,
            )
            .expect("budget above the pilot");
            [r.corrected, r.ci[0], r.ci[1], a.positive as f64]
        })
        .collect()
}

/// A pilot of 100,000 expert ratings on a 1–5 scale with four judges' scores.
fn pilot_data(dir: &Path) -> (Vec<f64>, Vec<Vec<f64>>) {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let mut csv = String::from("expert,j1,j2,j3,j4\n");
    let (mut y, mut judges) = (Vec::new(), vec![Vec::new(); JUDGES]);
    for _ in 0..ITEMS {
        let e = f64::from(rng.gen_range(1..=5u8));
        let _ = write!(csv, "{e}");
        for (k, col) in judges.iter_mut().enumerate() {
            let noise = [0.5, 0.8, 1.1, 1.6][k] * normal(&mut rng);
            let s = (e + noise).round().clamp(1.0, 5.0);
            col.push(s);
            let _ = write!(csv, ",{s}");
        }
        csv.push('\n');
        y.push(e);
    }
    std::fs::write(dir.join("pilot.csv"), csv).expect("write pilot.csv");
    (y, judges)
}

/// 100,000 targets × 4 raters × 2 occasions, every cell scored.
fn gstudy_data(dir: &Path) -> Vec<GScore> {
    let mut rng = ChaCha8Rng::seed_from_u64(2001);
    let mut eff =
        |n: usize, sd: f64| -> Vec<f64> { (0..n).map(|_| sd * normal(&mut rng)).collect() };
    let (r, o, ro) = (eff(4, 0.4), eff(2, 0.2), eff(8, 0.15));
    let mut rng = ChaCha8Rng::seed_from_u64(2002);
    let mut csv = String::from("target,rater,occasion,score\n");
    let mut scores = Vec::with_capacity(ITEMS * 8);
    for t in 0..ITEMS {
        let p = normal(&mut rng);
        let pr: Vec<f64> = (0..4).map(|_| 0.5 * normal(&mut rng)).collect();
        let po: Vec<f64> = (0..2).map(|_| 0.3 * normal(&mut rng)).collect();
        for j in 0..4 {
            for k in 0..2 {
                let s =
                    3.0 + p + r[j] + o[k] + ro[j * 2 + k] + pr[j] + po[k] + 0.6 * normal(&mut rng);
                let _ = writeln!(csv, "{t},{j},{k},{s}");
                scores.push(GScore {
                    target: t,
                    rater: j,
                    occasion: k,
                    score: s,
                });
            }
        }
    }
    std::fs::write(dir.join("gstudy.csv"), csv).expect("write gstudy.csv");
    scores
}

/// 100,000 items labelled 1–5 by four judges of differing accuracy.
fn consensus_data(dir: &Path) -> Vec<LabelRating> {
    let mut rng = ChaCha8Rng::seed_from_u64(1979);
    let mut csv = String::from("task,worker,label\n");
    let mut ratings = Vec::with_capacity(ITEMS * JUDGES);
    for i in 0..ITEMS {
        let truth = rng.gen_range(0..5usize);
        for j in 0..JUDGES {
            let label = if rng.gen_bool([0.85, 0.75, 0.7, 0.6][j]) {
                truth
            } else {
                rng.gen_range(0..5)
            };
            let _ = writeln!(csv, "i{i},j{j},{}", label + 1);
            ratings.push(LabelRating {
                item: i,
                rater: j,
                label,
            });
        }
    }
    std::fs::write(dir.join("consensus.csv"), csv).expect("write consensus.csv");
    ratings
}

fn peers(dir: &Path) -> Option<serde_json::Value> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches");
    let program = std::env::var("CONCORD_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&program)
        .arg(here.join("reviewer_stats_peers.py"))
        .arg(dir)
        .output()
        .ok()?;
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        eprintln!("note: {program} could not run the peers; Concord's times only");
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

fn report(name: &str, concord_s: f64, peer: Option<(&serde_json::Value, &str)>) {
    let mut line = serde_json::json!({ "bench": name, "concord_s": concord_s });
    if let Some((p, who)) = peer {
        if let Some(s) = p.as_f64() {
            line[format!("{who}_s")] = s.into();
            line[format!("{who}_over_concord")] = (s / concord_s).into();
        }
    }
    println!("{line}");
}

fn main() {
    let dir = std::env::temp_dir().join(format!("concord-reviewer-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let (judges, expert) = prevalence_data(&dir);
    let (y, pilot) = pilot_data(&dir);
    let scores = gstudy_data(&dir);
    let labels = consensus_data(&dir);
    let (prev, prev_s) = time_it(3, || prevalence_run(&judges, &expert));
    let (power, power_s) = time_it(3, || {
        pilot
            .iter()
            .map(|j| {
                ppi_mean_power(&y, j, 20.0, 0.05, PowerGoal::StandardError(0.002))
                    .expect("a design")
            })
            .collect::<Vec<_>>()
    });
    let design = GDesign {
        n_targets: ITEMS,
        n_raters: 4,
        n_occasions: Some(2),
    };
    let (g, g_s) = time_it(3, || g_study(&scores, &design).expect("a G-study"));
    let options = DawidSkeneOptions::default();
    let (ds, ds_s) = time_it(3, || {
        dawid_skene(&labels, ITEMS, JUDGES, 5, &[], &options).expect("a fit")
    });
    let peer = peers(&dir);
    let get = |k: &str| peer.as_ref().and_then(|p| p.get(k)).cloned();
    if let Some(p) = get("prevalence") {
        for (mine, theirs) in prev.iter().zip(p.as_array().unwrap()) {
            for (a, e) in mine.iter().zip(theirs.as_array().unwrap()) {
                assert!(
                    (a - e.as_f64().unwrap()).abs() < 1e-9,
                    "prevalence {a} vs the authors' {e}"
                );
            }
        }
    }
    if let Some(p) = get("power") {
        for (d, theirs) in power.iter().zip(p.as_array().unwrap()) {
            assert_eq!(
                [d.n_expert, d.n_judge],
                [theirs[0].as_u64().unwrap(), theirs[1].as_u64().unwrap()],
                "ppi-python's (n, N)"
            );
        }
    }
    if let Some(p) = get("gstudy") {
        let c = g.components;
        let mine = [
            c.target,
            c.rater,
            c.occasion.unwrap(),
            c.target_rater.unwrap(),
            c.target_occasion.unwrap(),
            c.rater_occasion.unwrap(),
            c.residual,
        ];
        for (a, e) in mine.iter().zip(p.as_array().unwrap()) {
            let e = e.as_f64().unwrap();
            assert!(
                (a - e).abs() < 1e-4 * e.abs().max(1.0),
                "σ² {a} vs ANOVA {e}"
            );
        }
    }
    if let Some(p) = get("consensus") {
        assert_eq!(
            ds.iterations as u64,
            p["iterations"].as_u64().unwrap(),
            "crowd-kit's EM passes"
        );
        for (a, e) in ds.priors.iter().zip(p["priors"].as_array().unwrap()) {
            assert!(
                (a - e.as_f64().unwrap()).abs() < 1e-4,
                "prior {a} vs crowd-kit {e}"
            );
        }
    }
    let secs = |k: &str| get(&format!("{k}_s"));
    report(
        "prevalence_100000_x4_judges",
        prev_s,
        secs("prevalence")
            .as_ref()
            .map(|s| (s, "llm_judge_reporting")),
    );
    report(
        "ppi_power_pilot_100000_x4_judges",
        power_s,
        secs("power").as_ref().map(|s| (s, "ppi_python")),
    );
    report(
        "gstudy_100000_x4_raters_x2_occasions",
        g_s,
        secs("gstudy").as_ref().map(|s| (s, "numpy_anova")),
    );
    report(
        "dawid_skene_100000_x4_judges_5_labels",
        ds_s,
        secs("consensus").as_ref().map(|s| (s, "crowd_kit")),
    );
    let _ = std::fs::remove_dir_all(&dir);
}
