//! Corrected prevalence against the authors' own package: every case in `vectors/prevalence.json`
//! (written by `llm_judge_reporting`, Lee et al. 2025) is recomputed here. Closed forms, so the
//! rates, estimate and interval agree within 1e-9 and the allocations exactly; the degenerate
//! cases must be refused with the reason the vector names.

use concord_stats::prevalence::{
    allocate_calibration, corrected_prevalence, PrevalenceCounts, PrevalenceError,
};
use serde_json::Value;

const TOL: f64 = 1e-9;

fn doc() -> Value {
    serde_json::from_str(include_str!("../vectors/prevalence.json"))
        .expect("prevalence.json is valid JSON")
}

fn count(case: &Value, key: &str) -> u64 {
    case[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is a count"))
}

fn close(actual: f64, expected: &Value, what: &str) {
    let e = expected
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: a number"));
    assert!(
        (actual - e).abs() <= TOL,
        "{what}: Concord {actual} differs from the authors' package {e}"
    );
}

fn reason(e: &PrevalenceError) -> &'static str {
    match e {
        PrevalenceError::NoItems => "no_items",
        PrevalenceError::NoCalibration => "no_calibration",
        PrevalenceError::NoExpertPositive(_) => "no_expert_positive",
        PrevalenceError::NoExpertNegative(_) => "no_expert_negative",
        PrevalenceError::NotInformative { .. } => "not_informative",
        PrevalenceError::ShrunkNotInformative { .. } => "shrunk_not_informative",
        _ => "other",
    }
}

#[test]
fn prevalence_matches_the_authors_package() {
    let doc = doc();
    let cases = doc["prevalence"].as_array().expect("prevalence cases");
    assert!(
        cases.len() >= 15,
        "the vectors cover designs and degenerate data"
    );
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let counts = PrevalenceCounts {
            n_items: count(case, "n_items"),
            judged_positive: count(case, "judged_positive"),
            true_positive: count(case, "true_positive"),
            false_negative: count(case, "false_negative"),
            true_negative: count(case, "true_negative"),
            false_positive: count(case, "false_positive"),
        };
        let result = corrected_prevalence(&counts, case["level"].as_f64().unwrap());
        if let Some(expected) = case["error"].as_str() {
            let e = result.expect_err(name);
            assert_eq!(
                reason(&e),
                expected,
                "{name}: degenerate data must be refused with its reason, got `{e}`"
            );
            continue;
        }
        let r = result.unwrap_or_else(|e| panic!("{name}: the reference gives a result ({e})"));
        close(r.raw_rate, &case["raw_rate"], &format!("{name} raw rate"));
        close(
            r.sensitivity,
            &case["sensitivity"],
            &format!("{name} sensitivity"),
        );
        close(
            r.specificity,
            &case["specificity"],
            &format!("{name} specificity"),
        );
        close(
            r.corrected,
            &case["corrected"],
            &format!("{name} corrected"),
        );
        close(r.ci[0], &case["ci"][0], &format!("{name} lower limit"));
        close(r.ci[1], &case["ci"][1], &format!("{name} upper limit"));
        assert!(
            (0.0..=1.0).contains(&r.ci[0]) && r.ci[0] <= r.ci[1] && r.ci[1] <= 1.0,
            "{name}: the interval is an ordered pair inside [0, 1]: {:?}",
            r.ci
        );
        if let Some(budget) = case["allocate"].as_u64() {
            let a = allocate_calibration(
                budget,
                r.raw_rate,
                r.specificity,
                r.sensitivity,
                counts.n_calibration(),
            )
            .unwrap_or_else(|e| panic!("{name}: allocation ({e})"));
            assert_eq!(
                (a.positive, a.negative),
                (
                    count(&case["allocation"], "positive"),
                    count(&case["allocation"], "negative")
                ),
                "{name}: the split of {budget} labels is the authors' split"
            );
        }
    }
}

#[test]
fn allocation_matches_the_authors_package() {
    let doc = doc();
    for case in doc["allocation"].as_array().expect("allocation cases") {
        let a = allocate_calibration(
            count(case, "budget"),
            case["raw_rate"].as_f64().unwrap(),
            case["specificity"].as_f64().unwrap(),
            case["sensitivity"].as_f64().unwrap(),
            count(case, "pilot"),
        )
        .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(
            (a.positive, a.negative),
            (count(case, "positive"), count(case, "negative")),
            "{case}: the split (ties rounded half to even, as Python's round) is the authors'"
        );
    }
}
