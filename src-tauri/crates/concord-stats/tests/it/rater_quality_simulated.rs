//! Rater-quality statistics validated on simulated panels: severities, drift and test–retest
//! reliability are planted in seeded simulations, and the estimates must recover them within their
//! own 95% intervals (single panels) and cover them at close to the nominal rate (many panels).

use concord_stats::rater_quality::{
    drift, severity, straight_lining, test_retest, Direction, DriftOptions,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A panel of raters with additive severities on one criterion: value = θ_item + δ_rater + noise,
/// optionally rounded and clamped to 1–5. `per_item` raters (chosen at random) rate each item.
fn panel(
    seed: u64,
    items: usize,
    severities: &[f64],
    per_item: usize,
    noise: f64,
    likert: bool,
) -> Vec<Vec<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let k = severities.len();
    let rows: Vec<Vec<f64>> = (0..items)
        .map(|_| {
            let theta = rng.gen_range(2.0..4.0);
            let mut raters: Vec<usize> = (0..k).collect();
            for j in 0..per_item {
                let pick = rng.gen_range(j..k);
                raters.swap(j, pick);
            }
            let mut row = vec![f64::NAN; k];
            for &r in &raters[..per_item] {
                let v = theta + severities[r] + noise * normal(&mut rng);
                row[r] = if likert { v.round().clamp(1.0, 5.0) } else { v };
            }
            row
        })
        .collect();
    (0..k)
        .map(|r| rows.iter().map(|row| row[r]).collect())
        .collect()
}

/// The offset each rater is expected to show: its severity minus the mean of the others'.
fn planted_offsets(severities: &[f64]) -> Vec<f64> {
    let k = severities.len() as f64;
    let total: f64 = severities.iter().sum();
    severities
        .iter()
        .map(|d| d - (total - d) / (k - 1.0))
        .collect()
}

#[test]
fn planted_severities_are_recovered_within_their_intervals_on_a_rounded_1_to_5_panel() {
    let severities = [0.8, 0.0, -0.4];
    let series = panel(7, 400, &severities, 3, 0.5, true);
    let refs: Vec<&[f64]> = series.iter().map(|s| s.as_slice()).collect();
    let estimates = severity(&refs);
    for (r, (e, planted)) in estimates
        .iter()
        .zip(planted_offsets(&severities))
        .enumerate()
    {
        let [lo, hi] = e.ci95.expect("400 shared items give an interval");
        assert!(
            lo <= planted && planted <= hi,
            "rater {r}: planted offset {planted} must lie in the estimate's interval [{lo}, {hi}]"
        );
        assert_eq!(e.n, 400, "every item is shared by all three raters");
    }
    let [lo, _] = estimates[0].ci95.unwrap();
    assert!(
        lo > 0.0,
        "the lenient rater's interval must exclude zero, got lower bound {lo}"
    );
}

#[test]
fn planted_severities_are_recovered_when_each_item_has_only_two_of_five_raters() {
    let severities = [0.6, 0.1, 0.0, -0.2, -0.5];
    let series = panel(11, 2000, &severities, 2, 0.5, true);
    let refs: Vec<&[f64]> = series.iter().map(|s| s.as_slice()).collect();
    for (r, (e, planted)) in severity(&refs)
        .iter()
        .zip(planted_offsets(&severities))
        .enumerate()
    {
        let [lo, hi] = e.ci95.expect("hundreds of shared items give an interval");
        assert!(
            lo <= planted && planted <= hi,
            "rater {r}: planted offset {planted} must lie in [{lo}, {hi}] with overlap 2"
        );
    }
}

#[test]
fn severity_intervals_cover_the_planted_offsets_at_close_to_95_percent() {
    let severities = [0.5, 0.0, -0.3];
    let planted = planted_offsets(&severities);
    let runs = 400;
    let mut covered = [0usize; 3];
    for seed in 0..runs {
        let series = panel(1000 + seed, 60, &severities, 3, 0.7, false);
        let refs: Vec<&[f64]> = series.iter().map(|s| s.as_slice()).collect();
        for (r, e) in severity(&refs).iter().enumerate() {
            let [lo, hi] = e.ci95.expect("60 items give an interval");
            if lo <= planted[r] && planted[r] <= hi {
                covered[r] += 1;
            }
        }
    }
    for (r, c) in covered.iter().enumerate() {
        let rate = *c as f64 / runs as f64;
        // Binomial sd at 95% over 400 runs is 1.1 points; 91–99% is ±3.6 sd.
        assert!(
            (0.91..=0.99).contains(&rate),
            "rater {r}: a 95% interval must cover the planted offset about 95% of the time, got {rate}"
        );
    }
}

/// A rater's sequence of offsets with a level shift of `shift` after `change` items.
fn drifting(seed: u64, n: usize, change: usize, shift: f64, noise: f64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| (if i >= change { shift } else { 0.0 }) + noise * normal(&mut rng))
        .collect()
}

#[test]
fn a_planted_drift_raises_the_alarm_near_where_it_was_planted_and_is_measured_within_its_interval()
{
    let x = drifting(3, 400, 200, 0.6, 0.8);
    let d = drift(&x, DriftOptions::default());
    assert!(
        d.alarm,
        "a 0.6-point shift over 200 items must raise the CUSUM alarm (p = {:?})",
        d.cusum_p
    );
    assert_eq!(
        d.direction,
        Some(Direction::Up),
        "the planted shift goes up"
    );
    let at = d.change_at.expect("the alarm has a place");
    assert!(
        (170..=230).contains(&at),
        "the change point estimate must be near item 200, got {at}"
    );
    let [lo, hi] = d.difference_ci95.expect("blocks of 100 give an interval");
    assert!(
        lo <= 0.6 && 0.6 <= hi,
        "the first-vs-last difference must cover the planted 0.6, got [{lo}, {hi}]"
    );
    assert_eq!(d.path.len(), 400, "one CUSUM point per value");
}

#[test]
fn without_drift_the_alarm_rings_at_about_its_nominal_rate() {
    let runs = 500;
    let alarms = (0..runs)
        .filter(|&seed| {
            drift(
                &drifting(5000 + seed, 300, 300, 0.0, 0.8),
                DriftOptions::default(),
            )
            .alarm
        })
        .count();
    // α = 0.01: expect about 5 of 500; the asymptotic test is a little conservative at n = 300.
    assert!(
        alarms <= 15,
        "a stable rater must rarely raise the alarm, got {alarms} of {runs}"
    );
}

#[test]
fn a_drift_downwards_is_reported_as_down() {
    let x = drifting(9, 300, 100, -0.7, 0.6);
    let d = drift(&x, DriftOptions::default());
    assert!(
        d.alarm && d.direction == Some(Direction::Down),
        "a planted fall must be seen as down: {d:?}"
    );
}

#[test]
fn planted_test_retest_reliability_is_recovered_within_its_interval() {
    // True scores with variance 0.64 and occasion noise with variance 0.25: ICC = 0.64 / 0.89.
    let planted = 0.64 / 0.89;
    let runs = 200;
    let mut covered = 0;
    for seed in 0..runs {
        let mut rng = ChaCha8Rng::seed_from_u64(20_000 + seed);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..80 {
            let t = 3.0 + 0.8 * normal(&mut rng);
            a.push(t + 0.5 * normal(&mut rng));
            b.push(t + 0.5 * normal(&mut rng));
        }
        let r = test_retest(&a, &b, false);
        let [lo, hi] = r.icc_ci95.expect("80 pairs give an interval");
        if lo <= planted && planted <= hi {
            covered += 1;
        }
    }
    let rate = covered as f64 / runs as f64;
    assert!(
        (0.90..=0.99).contains(&rate),
        "the ICC(A,1) interval must cover the planted reliability about 95% of the time, got {rate}"
    );
}

#[test]
fn binary_test_retest_uses_kappa() {
    let a = [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0];
    let b = [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0];
    let r = test_retest(&a, &b, true);
    // Observed 6/8, chance 0.5 (both occasions balanced): κ = (0.75 − 0.5) / 0.5.
    assert!(
        (r.kappa.unwrap() - 0.5).abs() < 1e-12,
        "Cohen's κ of the two occasions"
    );
    assert_eq!(r.icc_a1, None, "binary dimensions get κ, not an ICC");
    assert_eq!(r.exact, Some(0.75), "six of eight pairs agree");
}

#[test]
fn a_planted_straight_liner_is_detected_against_the_panel() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut honest = Vec::new();
    let mut liner = Vec::new();
    for _ in 0..200 {
        honest.push(
            (0..7)
                .map(|_| Some(rng.gen_range(1..=5) as f64))
                .collect::<Vec<_>>(),
        );
        let v = rng.gen_range(1..=5) as f64;
        liner.push(if rng.gen_bool(0.6) {
            vec![Some(v); 7]
        } else {
            (0..7).map(|_| Some(rng.gen_range(1..=5) as f64)).collect()
        });
    }
    let panel = straight_lining(&honest, None).share;
    let s = straight_lining(&liner, panel);
    assert!(
        s.p_value.unwrap() < 1e-6,
        "60% straight-lined items against a panel near 0% must be flagged"
    );
    assert!(
        (s.share.unwrap() - 0.6).abs() < 0.1,
        "the share must be near the planted 60%"
    );
}
