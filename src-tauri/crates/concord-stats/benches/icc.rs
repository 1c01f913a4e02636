//! Timing of Concord's ICC: all six forms with F tests and 95% CIs on dense matrices, and the
//! bootstrap's cheap two-rater estimate. Run with
//! `cargo bench -p concord-stats --bench icc -- [DATA_DIR]`; with a directory written by
//! `benches/icc_peers.py` it times the same matrices the Python peers time, otherwise it
//! generates its own. Prints one JSON object per measurement on stdout.

use concord_stats::bootstrap::{mentalalign_icc_c1_ci, percentile_ci, BootstrapOptions};
use concord_stats::icc::{icc_all, icc_c1_a1_resampled, IccForm};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;
use std::time::Instant;

/// A wide matrix: n lines of k comma-separated numbers.
fn read_wide(path: &std::path::Path) -> (Vec<f64>, usize, usize) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut values = Vec::new();
    let mut n = 0;
    let mut k = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let row: Vec<f64> = line
            .split(',')
            .map(|x| x.trim().parse().expect("numeric cell"))
            .collect();
        k = row.len();
        values.extend(row);
        n += 1;
    }
    (values, n, k)
}

fn generate(n: usize, k: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut m = Vec::with_capacity(n * k);
    for _ in 0..n {
        let truth: f64 = rng.gen_range(1.0..5.0);
        for j in 0..k {
            m.push((truth + 0.1 * j as f64 + rng.gen_range(-1.0..1.0)).clamp(1.0, 5.0));
        }
    }
    m
}

/// Median seconds per call over enough repetitions to fill about `budget` seconds.
fn time_it<F: FnMut()>(budget: f64, mut f: F) -> (f64, usize) {
    f();
    let start = Instant::now();
    f();
    let once = start.elapsed().as_secs_f64().max(1e-9);
    let reps = ((budget / once) as usize).clamp(5, 20_000);
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        f();
        samples.push(t.elapsed().as_secs_f64());
    }
    samples.sort_by(f64::total_cmp);
    (samples[samples.len() / 2], reps)
}

fn report(name: &str, n: usize, k: usize, (secs, reps): (f64, usize), extra: &str) {
    println!("{{\"bench\": \"{name}\", \"n\": {n}, \"k\": {k}, \"median_seconds\": {secs:.9}, \"repetitions\": {reps}{extra}}}");
}

fn main() {
    let data_dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .map(std::path::PathBuf::from);
    let designs = [
        ("icc_10000x5", 10_000, 5),
        ("icc_100000x2", 100_000, 2),
        ("icc_70000x5", 70_000, 5),
    ];
    for (i, (name, n, k)) in designs.into_iter().enumerate() {
        let (m, n, k) = match &data_dir {
            Some(dir) => read_wide(&dir.join(format!("{name}.csv"))),
            None => (generate(n, k, 42 + i as u64), n, k),
        };
        let table = icc_all(&m, n, k).expect("valid matrix");
        let icc3 = table.get(IccForm::Icc3).value.unwrap_or(f64::NAN);
        let timing = time_it(1.0, || {
            black_box(icc_all(black_box(&m), n, k).expect("valid matrix"));
        });
        report(name, n, k, timing, &format!(", \"icc3\": {icc3:.12}"));
    }

    // MentalAlign bootstrap: 1,000 resamples of 9 (expert, judge) pairs.
    let pairs: Vec<(f64, f64)> = (0..9)
        .map(|i| {
            (
                3.0 + 0.1 * i as f64,
                3.2 + 0.11 * i as f64 + 0.05 * ((i * 7 % 5) as f64 - 2.0),
            )
        })
        .collect();
    let timing = time_it(1.0, || {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        black_box(mentalalign_icc_c1_ci(black_box(&pairs), &mut rng).expect("nine pairs"));
    });
    report("bootstrap_mentalalign_9_pairs_1000", 9, 2, timing, "");

    // Item-level bootstrap: 1,000 resamples of 1,000 pairs.
    let big: Vec<(f64, f64)> = generate(1000, 2, 9)
        .chunks_exact(2)
        .map(|c| (c[0], c[1]))
        .collect();
    let timing = time_it(2.0, || {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        black_box(
            percentile_ci(big.len(), &BootstrapOptions::default(), &mut rng, |idx| {
                icc_c1_a1_resampled(&big, idx).ok().and_then(|e| e.c1)
            })
            .expect("pairs"),
        );
    });
    report("bootstrap_item_level_1000_pairs_1000", 1000, 2, timing, "");
}
