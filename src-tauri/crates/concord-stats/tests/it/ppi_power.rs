//! Prediction-powered power analysis against `ppi-python` 0.2.3 itself: every pilot in
//! `vectors/ppi_power.json` is recomputed. Design sizes are integers rounded as the package
//! rounds, so they must be identical; costs, the PPI correlation and the standard errors of the
//! integer designs agree within 1e-9. Degenerate pilots must be refused with their reason.

use concord_stats::power::{ppi_mean_power, PowerError, PowerGoal};
use serde_json::Value;

const TOL: f64 = 1e-9;

fn doc() -> Value {
    serde_json::from_str(include_str!("../vectors/ppi_power.json"))
        .expect("ppi_power.json is valid JSON")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

fn goal(case: &Value) -> PowerGoal {
    match case["se"].as_f64() {
        Some(se) => PowerGoal::StandardError(se),
        None => PowerGoal::Budget(case["budget"].as_f64().expect("a budget when no SE")),
    }
}

fn close(actual: f64, expected: &Value, what: &str) {
    let e = expected
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: a number"));
    assert!(
        (actual - e).abs() <= TOL * e.abs().max(1.0),
        "{what}: Concord {actual} differs from ppi-python {e}"
    );
}

#[test]
fn designs_match_ppi_python() {
    let doc = doc();
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 10, "the vectors cover SE and budget goals");
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let d = ppi_mean_power(
            &floats(&case["expert"]),
            &floats(&case["judge"]),
            case["cost_expert"].as_f64().unwrap(),
            case["cost_judge"].as_f64().unwrap(),
            goal(case),
        )
        .unwrap_or_else(|e| panic!("{name}: ppi-python gives a design ({e})"));
        assert_eq!(
            (d.n_expert, d.n_judge),
            (case["n"].as_u64().unwrap(), case["N"].as_u64().unwrap()),
            "{name}: (n, N) rounded half to even as the package rounds"
        );
        close(d.rho, &case["ppi_corr"], &format!("{name} ρ"));
        close(d.cost, &case["cost"], &format!("{name} cost"));
        close(
            d.se,
            &case["design_se"],
            &format!("{name} SE of the design"),
        );
        assert_eq!(
            d.classical.n_expert,
            case["classical"]["n"].as_u64().unwrap(),
            "{name}: the expert-only design rounds as the package's classical fallback"
        );
        close(
            d.classical.cost,
            &case["classical"]["cost"],
            &format!("{name} classical cost"),
        );
        close(
            d.classical.se,
            &case["classical"]["se"],
            &format!("{name} classical SE"),
        );
        if let Some(target) = case["se"].as_f64() {
            assert!(
                d.se <= target * 1.05,
                "{name}: the rounded design reaches the target SE {target} up to rounding, got {}",
                d.se
            );
        }
    }
}

#[test]
fn degenerate_pilots_are_refused_with_their_reason() {
    let doc = doc();
    for case in doc["errors"].as_array().expect("error cases") {
        let name = case["name"].as_str().unwrap();
        let e = ppi_mean_power(
            &floats(&case["expert"]),
            &floats(&case["judge"]),
            case["cost_expert"].as_f64().unwrap(),
            case["cost_judge"].as_f64().unwrap(),
            goal(case),
        )
        .expect_err(name);
        let reason = match e {
            PowerError::ConstantExpert => "constant_expert",
            PowerError::ConstantJudge => "constant_judge",
            PowerError::TooFewPairs(_) => "too_few_pairs",
            PowerError::PerfectMirror => "perfect_mirror",
            _ => "other",
        };
        assert_eq!(
            reason,
            case["error"].as_str().unwrap(),
            "{name}: refused with the reason the vector names, got `{e}`"
        );
    }
}
