//! Gwet's AC1/AC2 intervals against irrCAC and specific agreement against its definition: every
//! case in `vectors/agreement_ci.json` (written by `vectors/agreement_ci.py`) is recomputed here.
//! Coefficients, standard errors and interval bounds agree within 1e-9; the Krippendorff α
//! bootstrap is checked for what must hold of any seeded percentile interval.

use concord_stats::bootstrap::BootstrapOptions;
use concord_stats::categorical::{
    gwet_ac2_interval, krippendorff_alpha, krippendorff_alpha_bootstrap, specific_agreement_binary,
    AlphaMetric, CategoricalRatings, Weights,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

const TOL: f64 = 1e-9;

fn cases() -> Vec<Value> {
    let doc: Value = serde_json::from_str(include_str!("../vectors/agreement_ci.json"))
        .expect("agreement_ci.json is valid JSON");
    doc["cases"].as_array().expect("cases").clone()
}

fn ratings(case: &Value) -> CategoricalRatings {
    let categories: Vec<f64> = case["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let rows: Vec<Vec<Option<f64>>> = case["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(Value::as_f64).collect())
        .collect();
    CategoricalRatings::from_values(&categories, &rows).expect("valid ratings")
}

fn close(a: f64, e: &Value, what: &str) {
    let e = e
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: the reference is a number"));
    assert!((a - e).abs() <= TOL, "{what}: Concord {a} vs irrCAC {e}");
}

#[test]
fn gwet_intervals_match_irrcac() {
    let cases = cases();
    assert!(cases.len() >= 4, "at least four designs");
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let r = ratings(case);
        for (key, weights) in [
            ("identity", Weights::Unweighted),
            ("linear", Weights::Linear),
            ("quadratic", Weights::Quadratic),
        ] {
            let got = gwet_ac2_interval(&r, weights, 0.95)
                .unwrap_or_else(|| panic!("{name} {key}: defined in irrCAC"));
            let want = &case["gwet"][key];
            close(got.value, &want["value"], &format!("{name} {key} AC"));
            close(got.se, &want["se"], &format!("{name} {key} SE"));
            close(got.ci[0], &want["ci"][0], &format!("{name} {key} lower"));
            close(got.ci[1], &want["ci"][1], &format!("{name} {key} upper"));
        }
    }
}

#[test]
fn specific_agreement_matches_its_definition() {
    let mut seen = 0;
    for case in cases() {
        let Some(want) = case.get("specific") else {
            continue;
        };
        seen += 1;
        let name = case["name"].as_str().unwrap();
        let got = specific_agreement_binary(&ratings(&case)).expect("two categories");
        close(
            got.positive.unwrap(),
            &want["positive"],
            &format!("{name} positive"),
        );
        close(
            got.negative.unwrap(),
            &want["negative"],
            &format!("{name} negative"),
        );
    }
    assert!(seen >= 3, "three binary designs are checked");
}

#[test]
fn krippendorff_bootstrap_is_seeded_and_brackets_the_estimate() {
    let case = &cases()[1];
    let r = ratings(case);
    let alpha = krippendorff_alpha(&r, AlphaMetric::Nominal).expect("defined");
    let options = BootstrapOptions::default();
    let a = krippendorff_alpha_bootstrap(
        &r,
        AlphaMetric::Nominal,
        &options,
        &mut ChaCha8Rng::seed_from_u64(5),
    )
    .expect("an interval");
    let b = krippendorff_alpha_bootstrap(
        &r,
        AlphaMetric::Nominal,
        &options,
        &mut ChaCha8Rng::seed_from_u64(5),
    )
    .expect("an interval");
    assert_eq!(a, b, "the same seed gives the same interval");
    let (lo, hi) = (a.lower.unwrap(), a.upper.unwrap());
    assert!(
        lo < alpha && alpha < hi,
        "[{lo}, {hi}] brackets α = {alpha} on 100 items"
    );
    assert!(
        hi - lo < 0.3,
        "100 items give an interval narrower than 0.3 ({})",
        hi - lo
    );
    assert_eq!(a.kept, 1000, "every resample of 100 items has a defined α");
}
