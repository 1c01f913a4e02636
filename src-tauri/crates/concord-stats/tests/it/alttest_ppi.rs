//! The Alternative Annotator Test and PPI++ means against their references: every case in
//! `vectors/alttest_ppi.json` (written by `vectors/alttest_ppi.py` — a transcription of the
//! alt-test authors' reference procedure on scipy, and the `ppi-python` package itself) is
//! recomputed here. Rates, p-values and every PPI number must agree within 1e-9; which
//! annotators the judge wins against, and which are skipped, must be identical.

use concord_stats::alttest::{alt_test, AlignmentMetric, AltTestOptions};
use concord_stats::ppi::ppi_mean;
use serde_json::Value;

const TOL: f64 = 1e-9;

fn doc() -> Value {
    serde_json::from_str(include_str!("../vectors/alttest_ppi.json"))
        .expect("alttest_ppi.json is valid JSON")
}

fn close(actual: Option<f64>, expected: &Value, what: &str) {
    match expected.as_f64() {
        None => assert!(
            actual.is_none(),
            "{what}: undefined in the reference, got {actual:?}"
        ),
        Some(e) => {
            let a = actual.unwrap_or_else(|| panic!("{what}: the reference has {e}"));
            assert!(
                (a - e).abs() <= TOL * e.abs().max(1.0),
                "{what}: Concord {a} differs from the reference {e}"
            );
        }
    }
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

#[test]
fn alt_test_matches_the_reference_procedure() {
    let doc = doc();
    let cases = doc["alttest"].as_array().expect("alt-test cases");
    assert!(
        cases.len() >= 6,
        "the alt-test vectors cover at least six designs"
    );
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let rows = case["humans"].as_array().unwrap();
        let n_items = rows.len();
        let n_ann = rows[0].as_array().unwrap().len();
        let humans: Vec<Option<f64>> = rows
            .iter()
            .flat_map(|r| r.as_array().unwrap().iter().map(Value::as_f64))
            .collect();
        let judge: Vec<Option<f64>> = case["judge"]
            .as_array()
            .unwrap()
            .iter()
            .map(Value::as_f64)
            .collect();
        let options = AltTestOptions {
            epsilon: case["epsilon"].as_f64().unwrap(),
            alpha: case["alpha"].as_f64().unwrap(),
            metric: match case["metric"].as_str().unwrap() {
                "accuracy" => AlignmentMetric::Accuracy,
                _ => AlignmentMetric::NegRmse,
            },
            ..AltTestOptions::default()
        };
        let r = alt_test(&humans, n_items, n_ann, &judge, &options)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        close(
            Some(r.winning_rate),
            &case["winning_rate"],
            &format!("{name} ω"),
        );
        close(
            Some(r.advantage_probability),
            &case["advantage_probability"],
            &format!("{name} ρ"),
        );
        assert_eq!(
            r.passed,
            case["passed"].as_bool().unwrap(),
            "{name}: the verdict"
        );
        let expected = case["annotators"].as_array().unwrap();
        assert_eq!(
            r.annotators.len(),
            expected.len(),
            "{name}: the same annotators are tested"
        );
        for (a, e) in r.annotators.iter().zip(expected) {
            let who = format!("{name} annotator {}", a.rater);
            assert_eq!(a.rater as u64, e["rater"].as_u64().unwrap(), "{who}: order");
            assert_eq!(
                a.n_items as u64,
                e["n_items"].as_u64().unwrap(),
                "{who}: items"
            );
            close(a.p_value, &e["p_value"], &format!("{who} p"));
            close(
                Some(a.rho_judge),
                &e["rho_judge"],
                &format!("{who} ρ judge"),
            );
            close(
                Some(a.rho_human),
                &e["rho_human"],
                &format!("{who} ρ human"),
            );
            assert_eq!(
                a.won,
                e["won"].as_bool().unwrap(),
                "{who}: won by the BY procedure"
            );
        }
        let skipped: Vec<(usize, usize)> = case["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s[0].as_u64().unwrap() as usize,
                    s[1].as_u64().unwrap() as usize,
                )
            })
            .collect();
        assert_eq!(
            r.skipped, skipped,
            "{name}: annotators with too few items are skipped"
        );
    }
}

#[test]
fn alt_test_refuses_two_annotators() {
    let humans = vec![Some(1.0); 40 * 2];
    let judge = vec![Some(1.0); 40];
    let err = alt_test(&humans, 40, 2, &judge, &AltTestOptions::default())
        .expect_err("two annotators are too few");
    assert!(
        err.to_string().contains("at least 3 human annotators"),
        "the error says what is needed: {err}"
    );
}

#[test]
fn ppi_matches_ppi_python() {
    let doc = doc();
    let cases = doc["ppi"].as_array().expect("PPI cases");
    assert!(
        cases.len() >= 5,
        "the PPI vectors cover at least five designs"
    );
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let r = ppi_mean(
            &floats(&case["expert"]),
            &floats(&case["judge_labeled"]),
            &floats(&case["judge_unlabeled"]),
            case["alpha"].as_f64().unwrap(),
        );
        close(r.estimate, &case["estimate"], &format!("{name} estimate"));
        close(r.lambda, &case["lambda"], &format!("{name} λ"));
        close(r.ci[0], &case["ci"][0], &format!("{name} ci lower"));
        close(r.ci[1], &case["ci"][1], &format!("{name} ci upper"));
        close(
            r.classical_estimate,
            &case["classical_estimate"],
            &format!("{name} classical"),
        );
        close(
            r.classical_ci[0],
            &case["classical_ci"][0],
            &format!("{name} classical lower"),
        );
        close(
            r.classical_ci[1],
            &case["classical_ci"][1],
            &format!("{name} classical upper"),
        );
    }
}
