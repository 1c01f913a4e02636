//! A judge's repetitions, calibration and bias estimators against their references: every case
//! in `vectors/judge_reliability.json` (written by `vectors/judge_reliability.py` from
//! krippendorff 0.9, pingouin, statsmodels, scipy and numpy, with ECE and Brier computed by hand
//! in numpy) is recomputed here. Points agree to 1e-9; pingouin 0.7 rounds its ICC intervals to
//! two decimals, so those bounds agree to 0.005.

use concord_stats::bootstrap::BootstrapOptions;
use concord_stats::calibration::binary_calibration;
use concord_stats::judge_bias::{difference_interval, mean_interval, slope_interval, tertile_cuts};
use concord_stats::repetitions::{
    repetitions_needed, self_consistency, RepetitionAggregate, ScaleKind,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

const TOL: f64 = 1e-9;

fn doc() -> Value {
    serde_json::from_str(include_str!("../vectors/judge_reliability.json"))
        .expect("judge_reliability.json is valid JSON")
}

fn close(actual: Option<f64>, expected: &Value, tol: f64, what: &str) {
    match expected.as_f64() {
        None => assert!(
            actual.is_none(),
            "{what}: undefined in the reference, got {actual:?}"
        ),
        Some(e) => {
            let a = actual.unwrap_or_else(|| panic!("{what}: the reference has {e}"));
            assert!(
                (a - e).abs() <= tol * e.abs().max(1.0),
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

fn rows(v: &Value) -> Vec<Vec<Option<f64>>> {
    v.as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            r.as_array()
                .expect("a row")
                .iter()
                .map(Value::as_f64)
                .collect()
        })
        .collect()
}

#[test]
fn aggregates_match_numpy_and_scipy() {
    let doc = doc();
    let cases = doc["aggregates"].as_array().expect("aggregate cases");
    assert!(
        cases.len() > 50,
        "every response of the consistency cases is aggregated"
    );
    for (i, c) in cases.iter().enumerate() {
        let v = floats(&c["values"]);
        for a in RepetitionAggregate::ALL {
            close(
                a.of(&v),
                &c[a.as_str()],
                TOL,
                &format!("case {i}: {} of {v:?}", a.as_str()),
            );
        }
    }
}

#[test]
fn self_consistency_matches_krippendorff() {
    let doc = doc();
    for c in doc["consistency"].as_array().expect("consistency cases") {
        let name = c["name"].as_str().expect("a name");
        let kind = match c["kind"].as_str() {
            Some("binary") => ScaleKind::Binary,
            _ => ScaleKind::Likert,
        };
        let got = self_consistency(
            &rows(&c["rows"]),
            &floats(&c["scale"]),
            kind,
            &BootstrapOptions::default(),
            &mut ChaCha8Rng::seed_from_u64(27),
        );
        close(
            got.alpha,
            &c["alpha"],
            TOL,
            &format!("{name}: Krippendorff's alpha"),
        );
        close(
            got.exact_agreement,
            &c["exact_agreement"],
            TOL,
            &format!("{name}: exact agreement"),
        );
        close(
            got.mean_within_sd,
            &c["mean_within_sd"],
            TOL,
            &format!("{name}: within-response SD"),
        );
        if let (Some(a), [Some(lo), Some(hi)]) = (got.alpha, got.alpha_ci95) {
            assert!(
                lo <= a + 1e-12 && a <= hi + 1e-12 || name == "steady_judge",
                "{name}: the bootstrap interval [{lo}, {hi}] should hold the estimate {a}"
            );
        }
    }
}

#[test]
fn repetitions_needed_matches_pingouin_and_spearman_brown() {
    let doc = doc();
    for c in doc["repetitions_needed"].as_array().expect("cases") {
        let name = c["name"].as_str().expect("a name");
        let expert: Vec<Option<f64>> = floats(&c["expert_mean"]).into_iter().map(Some).collect();
        let k = c["repetitions"].as_u64().expect("K") as usize;
        let got = repetitions_needed(
            &rows(&c["rows_in"]),
            &expert,
            k,
            RepetitionAggregate::Median,
        );
        close(
            got.single_repetition_reliability,
            &c["rho1"],
            TOL,
            &format!("{name}: ICC(1,1) of the repetitions (pingouin)"),
        );
        let want = c["rows"].as_array().expect("rows");
        assert_eq!(got.rows.len(), want.len(), "{name}: one row per k = 1…K");
        for (g, w) in got.rows.iter().zip(want) {
            let k = g.k;
            close(
                g.icc_a1,
                &w["icc_a1"],
                TOL,
                &format!("{name} k={k}: ICC(A,1) (pingouin)"),
            );
            close(
                g.icc_a1_ci95[0],
                &w["ci95"][0],
                0.005,
                &format!("{name} k={k}: lower bound"),
            );
            close(
                g.icc_a1_ci95[1],
                &w["ci95"][1],
                0.005,
                &format!("{name} k={k}: upper bound"),
            );
            close(
                g.predicted_reliability,
                &w["predicted_reliability"],
                TOL,
                &format!("{name} k={k}: Spearman–Brown reliability"),
            );
            close(
                g.predicted_icc_a1,
                &w["predicted_icc_a1"],
                TOL,
                &format!("{name} k={k}: predicted ICC(A,1)"),
            );
        }
    }
}

#[test]
fn ece_and_brier_match_the_hand_computation() {
    let doc = doc();
    for c in doc["calibration"].as_array().expect("cases") {
        let name = c["name"].as_str().expect("a name");
        let bins = c["n_bins"].as_u64().expect("bins") as usize;
        let got = binary_calibration(&floats(&c["p"]), &floats(&c["y"]), bins);
        close(got.ece, &c["ece"], TOL, &format!("{name}: ECE"));
        close(got.brier, &c["brier"], TOL, &format!("{name}: Brier"));
        let want = c["bins"].as_array().expect("bins");
        assert_eq!(
            got.bins.len(),
            want.len(),
            "{name}: every bin is reported, empty ones too"
        );
        for (b, (g, w)) in got.bins.iter().zip(want).enumerate() {
            assert_eq!(
                g.n as u64,
                w["n"].as_u64().expect("a count"),
                "{name}: bin {b} holds the same predictions (equal-width, last bin closed)"
            );
            close(
                g.mean_predicted,
                &w["mean_predicted"],
                TOL,
                &format!("{name}: bin {b} mean p"),
            );
            close(
                g.observed_rate,
                &w["observed_rate"],
                TOL,
                &format!("{name}: bin {b} rate"),
            );
        }
    }
}

#[test]
fn bias_estimators_match_statsmodels_and_scipy() {
    let doc = doc();
    let b = &doc["bias"];
    let s = slope_interval(
        &floats(&b["length"]["log_length"]),
        &floats(&b["length"]["d"]),
        "ols",
    );
    close(
        s.estimate,
        &b["length"]["slope"],
        TOL,
        "length slope (statsmodels OLS)",
    );
    close(
        s.ci95[0],
        &b["length"]["ci95"][0],
        TOL,
        "length slope lower bound (conf_int)",
    );
    close(
        s.ci95[1],
        &b["length"]["ci95"][1],
        TOL,
        "length slope upper bound (conf_int)",
    );
    let w = difference_interval(
        &floats(&b["welch"]["a"]),
        &floats(&b["welch"]["b"]),
        "welch",
    );
    close(
        w.estimate,
        &b["welch"]["difference"],
        TOL,
        "difference of means",
    );
    close(
        w.ci95[0],
        &b["welch"]["ci95"][0],
        1e-7,
        "Welch lower bound (tconfint_diff)",
    );
    close(
        w.ci95[1],
        &b["welch"]["ci95"][1],
        1e-7,
        "Welch upper bound (tconfint_diff)",
    );
    let m = mean_interval(&floats(&b["mean"]["d"]));
    close(m.estimate, &b["mean"]["mean"], TOL, "mean bias");
    close(
        m.ci95[0],
        &b["mean"]["ci95"][0],
        1e-7,
        "t interval lower bound (scipy)",
    );
    close(
        m.ci95[1],
        &b["mean"]["ci95"][1],
        1e-7,
        "t interval upper bound (scipy)",
    );
    let cuts = tertile_cuts(&floats(&b["tertiles"]["values"])).expect("cuts");
    close(
        Some(cuts[0]),
        &b["tertiles"]["cuts"][0],
        TOL,
        "first tertile cut (np.quantile)",
    );
    close(
        Some(cuts[1]),
        &b["tertiles"]["cuts"][1],
        TOL,
        "second tertile cut (np.quantile)",
    );
}
