//! Timing of the pairwise-preference statistics on a MentalBench-sized study: 100,000 comparisons
//! of 10 sources in 10,000 conversations (10 comparisons each), drawn from Davidson's model
//! (ν = 0.5, about one comparison in five a tie) with a fixed seed.
//!
//! Measured: `bradley_terry` with split and with Davidson ties on the 100,000 comparisons (the
//! aggregation into counts included), and `leaderboard` with 1,000 cluster-bootstrap resamples
//! for each. Every figure is the median of repeated runs after a warm-up; peak resident memory is
//! the process's high-water mark (VmHWM) read after each measurement.
//!
//! `cargo bench -p concord-stats --bench pairwise` writes the data as CSV into a temporary
//! directory, times Concord, then runs `python3 benches/pairwise_peers.py DIR` (skipped with a
//! note when it fails, e.g. without choix and evalica), checks that the peers' strengths agree,
//! and prints one JSON object per measurement with the ratio.

use concord_stats::bootstrap::BootstrapOptions;
use concord_stats::pairwise::{bradley_terry, leaderboard, Comparison, Outcome, TieHandling};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const SOURCES: usize = 10;
const CONVERSATIONS: usize = 10_000;
const PER_CONVERSATION: usize = 10;
const RESAMPLES: usize = 1_000;

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

/// Peak resident set size of this process in MiB (Linux), `None` elsewhere.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    // Box–Muller.
    let (u, v): (f64, f64) = (rng.gen_range(f64::EPSILON..1.0), rng.gen());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// The seeded study, one Vec per conversation, also written as `pairs.csv` in `dir`.
fn study(dir: &Path) -> Vec<Vec<Comparison>> {
    let mut rng = ChaCha8Rng::seed_from_u64(28);
    let theta: Vec<f64> = (0..SOURCES).map(|_| 0.7 * normal(&mut rng)).collect();
    let nu = 0.5;
    let mut csv = String::from("conversation,left,right,outcome\n");
    let mut clusters = Vec::with_capacity(CONVERSATIONS);
    for conversation in 0..CONVERSATIONS {
        let mut cluster = Vec::with_capacity(PER_CONVERSATION);
        for _ in 0..PER_CONVERSATION {
            let left = rng.gen_range(0..SOURCES);
            let right = (left + rng.gen_range(1..SOURCES)) % SOURCES;
            let (pl, pr) = (theta[left].exp(), theta[right].exp());
            let u = rng.gen::<f64>() * (pl + pr + nu * (pl * pr).sqrt());
            let (outcome, word) = if u < pl {
                (Outcome::Left, "left")
            } else if u < pl + pr {
                (Outcome::Right, "right")
            } else {
                (Outcome::Tie, "tie")
            };
            cluster.push(Comparison::new(left, right, outcome));
            let _ = writeln!(csv, "{conversation},{left},{right},{word}");
        }
        clusters.push(cluster);
    }
    std::fs::write(dir.join("pairs.csv"), csv).expect("temporary directory is writable");
    clusters
}

fn run_peer(script: &Path, dir: &Path) -> Option<serde_json::Value> {
    let out = match Command::new("python3").arg(script).arg(dir).output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("python3 not run ({e}): peer timings skipped");
            return None;
        }
    };
    if !out.status.success() {
        eprintln!(
            "python3 {} failed, peer timings skipped: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect())
        .unwrap_or_default()
}

fn main() {
    let dir = std::env::temp_dir().join(format!("concord-pairwise-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches");
    let clusters = study(&dir);
    let all: Vec<Comparison> = clusters.iter().flatten().copied().collect();
    let rss_data = peak_rss_mib();

    let split = bradley_terry(SOURCES, &all, TieHandling::Split).expect("the study has an MLE");
    let split_s = time_it(21, || {
        black_box(bradley_terry(SOURCES, black_box(&all), TieHandling::Split).expect("MLE"));
    });
    let davidson =
        bradley_terry(SOURCES, &all, TieHandling::Davidson).expect("the study has an MLE");
    let davidson_s = time_it(21, || {
        black_box(bradley_terry(SOURCES, black_box(&all), TieHandling::Davidson).expect("MLE"));
    });
    let rss_fit = peak_rss_mib();
    let options = BootstrapOptions {
        resamples: RESAMPLES,
        ..BootstrapOptions::default()
    };
    let mut boards = Vec::new();
    let mut board_s = Vec::new();
    for ties in [TieHandling::Split, TieHandling::Davidson] {
        let board = leaderboard(
            SOURCES,
            &clusters,
            ties,
            &options,
            &mut ChaCha8Rng::seed_from_u64(1),
        )
        .expect("the study has an MLE");
        board_s.push(time_it(5, || {
            black_box(
                leaderboard(
                    SOURCES,
                    black_box(&clusters),
                    ties,
                    &options,
                    &mut ChaCha8Rng::seed_from_u64(1),
                )
                .expect("MLE"),
            );
        }));
        boards.push(board);
    }
    let rss_board = peak_rss_mib();

    let peer = run_peer(&here.join("pairwise_peers.py"), &dir);
    let strengths = |fit: &concord_stats::pairwise::BradleyTerryFit| -> Vec<f64> {
        fit.strengths
            .iter()
            .map(|s| s.unwrap_or(f64::NAN))
            .collect()
    };
    let agree = |ours: &[f64], theirs: &[f64], tol: f64, what: &str| {
        assert_eq!(ours.len(), theirs.len(), "{what}: one strength per source");
        for (a, b) in ours.iter().zip(theirs) {
            assert!(
                (a - b).abs() < tol,
                "{what}: Concord {a} vs peer {b} on the same data"
            );
        }
    };

    let mut line = serde_json::json!({
        "bench": "bradley_terry_split_100000_comparisons_10_sources",
        "concord_s": split_s,
        "iterations": split.iterations,
        "peak_rss_mib": rss_fit,
        "peak_rss_mib_after_data": rss_data,
    });
    if let Some(p) = &peer {
        agree(
            &strengths(&split),
            &floats(&p["choix_split_strengths"]),
            1e-8,
            "split ties vs choix",
        );
        agree(
            &strengths(&split),
            &floats(&p["evalica_split_strengths"]),
            1e-6,
            "split ties vs evalica",
        );
        for peer_name in ["choix_split", "evalica_split"] {
            let s = p[format!("{peer_name}_s")].as_f64().unwrap_or(f64::NAN);
            line[format!("{peer_name}_s")] = s.into();
            line[format!("{peer_name}_over_concord")] = (s / split_s).into();
        }
    }
    println!("{line}");

    let mut line = serde_json::json!({
        "bench": "bradley_terry_davidson_100000_comparisons_10_sources",
        "concord_s": davidson_s,
        "iterations": davidson.iterations,
        "tie_parameter": davidson.tie_parameter,
        "peak_rss_mib": rss_fit,
    });
    if let Some(p) = &peer {
        agree(
            &strengths(&davidson),
            &floats(&p["evalica_davidson_strengths"]),
            1e-6,
            "Davidson ties vs evalica.newman",
        );
        let nu = p["evalica_davidson_nu"].as_f64().unwrap_or(f64::NAN);
        let ours = davidson.tie_parameter.unwrap_or(f64::NAN);
        assert!(
            (nu - ours).abs() < 1e-6,
            "Davidson nu: Concord {ours} vs evalica 2v = {nu}"
        );
        let s = p["evalica_davidson_s"].as_f64().unwrap_or(f64::NAN);
        line["evalica_davidson_s"] = s.into();
        line["evalica_davidson_over_concord"] = (s / davidson_s).into();
    }
    println!("{line}");

    for ((board, seconds), (ties, peer_key)) in boards.iter().zip(&board_s).zip([
        ("split", "choix_split_bootstrap"),
        ("davidson", "evalica_davidson_bootstrap"),
    ]) {
        let widths: Vec<f64> = board
            .entries
            .iter()
            .map(|e| e.ci_high.unwrap_or(f64::NAN) - e.ci_low.unwrap_or(f64::NAN))
            .collect();
        let mut line = serde_json::json!({
            "bench": format!("leaderboard_{ties}_{RESAMPLES}_resamples_10000_conversations"),
            "concord_s": seconds,
            "resamples_kept": board.resamples_kept,
            "mean_ci_width": widths.iter().sum::<f64>() / widths.len() as f64,
            "peak_rss_mib": rss_board,
        });
        if let Some(p) = &peer {
            let s = p[format!("{peer_key}_s")].as_f64().unwrap_or(f64::NAN);
            let resamples = p[format!("{peer_key}_resamples")].as_u64().unwrap_or(0);
            line[format!("{peer_key}_s")] = s.into();
            line[format!("{peer_key}_resamples")] = resamples.into();
            line[format!("{peer_key}_mean_ci_width")] =
                p[format!("{peer_key}_mean_ci_width")].clone();
            // Per resample, in case the peer ran fewer.
            line["peer_over_concord_per_resample"] =
                (s / resamples as f64 / (seconds / RESAMPLES as f64)).into();
        }
        println!("{line}");
    }
    if let Some(p) = &peer {
        println!(
            "{}",
            serde_json::json!({"bench": "peer_environment", "versions": p["versions"],
                "peak_rss_mib": p["peak_rss_mib"]})
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
