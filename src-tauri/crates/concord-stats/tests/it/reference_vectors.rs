//! Concord against peer implementations: every case in `vectors/reference.json` (written by
//! `vectors/generate.py` from pingouin, statsmodels, irrCAC, krippendorff, scipy and numpy) is
//! recomputed here. Point estimates must agree to 1e-9 and interval bounds to 1e-7 (relative to
//! the magnitude when it exceeds 1, as for large F statistics).

use concord_stats::bootstrap::quantile_sorted;
use concord_stats::categorical::{self, AlphaMetric, CategoricalRatings, Weights};
use concord_stats::icc::{icc_with_missing, IccForm};
use concord_stats::paired::compare;
use concord_stats::special::{f_quantile, f_sf, t_critical};
use serde_json::Value;

const POINT: f64 = 1e-9;
const BOUND: f64 = 1e-7;

fn reference() -> Value {
    serde_json::from_str(include_str!("../vectors/reference.json"))
        .expect("reference.json is valid JSON")
}

/// `expected` null means the peer found the quantity undefined: Concord must say `None`, or give an
/// infinite F (which also prints as null).
fn check(actual: Option<f64>, expected: &Value, tol: f64, what: &str) {
    match expected.as_f64() {
        None => assert!(
            actual.is_none_or(|a| !a.is_finite()),
            "{what}: the peer reports undefined, Concord must not invent a number (got {actual:?})"
        ),
        Some(e) => {
            let a =
                actual.unwrap_or_else(|| panic!("{what}: the peer computes {e}, Concord must too"));
            assert!(
                (a - e).abs() <= tol * e.abs().max(1.0),
                "{what}: Concord {a} differs from the peer's {e} by more than {tol}"
            );
        }
    }
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn icc_matches_pingouin() {
    let doc = reference();
    let cases = doc["icc"].as_array().unwrap();
    assert!(
        cases.len() >= 10,
        "the ICC vectors cover at least ten designs"
    );
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let n = case["n"].as_u64().unwrap() as usize;
        let k = case["k"].as_u64().unwrap() as usize;
        let cells: Vec<Option<f64>> = case["matrix"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|row| row.as_array().unwrap().iter().map(Value::as_f64))
            .collect();
        let result = icc_with_missing(&cells, n, k).unwrap();
        assert_eq!(
            result.n_targets_used as u64,
            case["n_targets_used"].as_u64().unwrap(),
            "{name}: targets with a missing score are dropped as pingouin does"
        );
        for (row, form) in case["expected"]
            .as_array()
            .unwrap()
            .iter()
            .zip(IccForm::ALL)
        {
            assert_eq!(
                row["type"].as_str().unwrap(),
                form.code(),
                "{name}: rows come in pingouin's order"
            );
            let est = result.table.get(form);
            let what = format!("{name} {}", form.code());
            check(est.value, &row["icc"], POINT, &format!("{what} ICC"));
            check(est.f, &row["f"], POINT, &format!("{what} F"));
            check(Some(est.df1), &row["df1"], POINT, &format!("{what} df1"));
            check(Some(est.df2), &row["df2"], POINT, &format!("{what} df2"));
            check(est.p, &row["p"], POINT, &format!("{what} p"));
            check(
                est.ci95[0],
                &row["ci95"][0],
                BOUND,
                &format!("{what} lower bound"),
            );
            check(
                est.ci95[1],
                &row["ci95"][1],
                BOUND,
                &format!("{what} upper bound"),
            );
        }
    }
}

#[test]
fn paired_comparison_matches_scipy_and_numpy() {
    let doc = reference();
    for case in doc["paired"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let c = compare(&floats(&case["a"]), &floats(&case["b"])).unwrap();
        let e = &case["expected"];
        assert_eq!(
            c.n as u64,
            e["n"].as_u64().unwrap(),
            "{name}: every pair is counted"
        );
        check(c.bias, &e["bias"], POINT, &format!("{name} bias"));
        check(c.sd_diff, &e["sd_diff"], POINT, &format!("{name} sd_diff"));
        check(c.mse, &e["mse"], POINT, &format!("{name} mse"));
        check(c.rmse, &e["rmse"], POINT, &format!("{name} rmse"));
        check(c.mae, &e["mae"], POINT, &format!("{name} mae"));
        check(
            c.pearson,
            &e["pearson"],
            POINT,
            &format!("{name} pearson (scipy)"),
        );
        check(
            c.spearman,
            &e["spearman"],
            POINT,
            &format!("{name} spearman (scipy)"),
        );
        check(
            c.kendall_tau_b,
            &e["kendall_tau_b"],
            POINT,
            &format!("{name} kendall tau-b (scipy)"),
        );
        check(
            c.lin_ccc,
            &e["lin_ccc"],
            POINT,
            &format!("{name} Lin's CCC"),
        );
        for (key, got) in [
            ("loa95", c.loa95),
            ("bias_ci95", c.bias_ci95),
            ("loa_lower_ci95", c.loa_lower_ci95),
            ("loa_upper_ci95", c.loa_upper_ci95),
        ] {
            check(got[0], &e[key][0], BOUND, &format!("{name} {key} lower"));
            check(got[1], &e[key][1], BOUND, &format!("{name} {key} upper"));
        }
    }
}

/// Where a peer returns a number for a quantity Concord treats as undefined, with the reason.
const DIVERGENCES: &[(&str, &str, &str)] = &[(
    "one_category",
    "fleiss_kappa",
    "every rating is the same category, so chance agreement is 1 and kappa is 0/0; irrCAC's floating-point \
     chance agreement lands a hair below 1 and it reports 1.0, statsmodels reports NaN; Concord says undefined",
)];

#[test]
fn categorical_coefficients_match_irrcac_statsmodels_krippendorff() {
    let doc = reference();
    for case in doc["categorical"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let categories = floats(&case["categories"]);
        let rows: Vec<Vec<Option<f64>>> = case["ratings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_array().unwrap().iter().map(Value::as_f64).collect())
            .collect();
        let r = CategoricalRatings::from_values(&categories, &rows).unwrap();
        let e = &case["expected"];
        let mut computed: Vec<(&str, Option<f64>)> = vec![
            ("percent_agreement", categorical::percent_agreement(&r)),
            ("gwet_ac1", categorical::gwet_ac1(&r)),
            (
                "gwet_ac2_linear",
                categorical::gwet_ac2(&r, Weights::Linear),
            ),
            (
                "gwet_ac2_quadratic",
                categorical::gwet_ac2(&r, Weights::Quadratic),
            ),
            ("fleiss_kappa", categorical::fleiss_kappa(&r)),
            ("fleiss_kappa_statsmodels", categorical::fleiss_kappa(&r)),
            (
                "cohen_kappa",
                categorical::cohen_kappa(&r, Weights::Unweighted),
            ),
            (
                "cohen_kappa_linear",
                categorical::cohen_kappa(&r, Weights::Linear),
            ),
            (
                "cohen_kappa_quadratic",
                categorical::cohen_kappa(&r, Weights::Quadratic),
            ),
            (
                "alpha_nominal",
                categorical::krippendorff_alpha(&r, AlphaMetric::Nominal),
            ),
            (
                "alpha_ordinal",
                categorical::krippendorff_alpha(&r, AlphaMetric::Ordinal),
            ),
            (
                "alpha_interval",
                categorical::krippendorff_alpha(&r, AlphaMetric::Interval),
            ),
            (
                "alpha_ratio",
                categorical::krippendorff_alpha(&r, AlphaMetric::Ratio),
            ),
        ];
        if let Some(p) = categorical::pabak(&r) {
            computed.push(("pabak", p.pabak));
            computed.push(("prevalence_index", p.prevalence_index));
            computed.push(("bias_index", p.bias_index));
        }
        let mut checked = 0;
        for (key, got) in computed {
            if e.get(key).is_none() {
                continue;
            }
            if let Some((_, _, why)) = DIVERGENCES.iter().find(|(c, k, _)| *c == name && *k == key)
            {
                assert!(
                    got.is_none(),
                    "{name} {key}: documented divergence, Concord must report undefined: {why}"
                );
                continue;
            }
            check(got, &e[key], POINT, &format!("{name} {key}"));
            checked += 1;
        }
        assert!(
            checked >= 8,
            "{name}: at least eight coefficients are compared, got {checked}"
        );
    }
}

#[test]
fn f_and_t_distributions_match_scipy() {
    let doc = reference();
    for q in doc["f_quantile"].as_array().unwrap() {
        let (p, d1, d2) = (
            q["p"].as_f64().unwrap(),
            q["d1"].as_f64().unwrap(),
            q["d2"].as_f64().unwrap(),
        );
        check(
            f_quantile(p, d1, d2),
            &q["quantile"],
            1e-10,
            &format!("F({d1},{d2}) quantile at {p} (scipy f.ppf)"),
        );
    }
    for s in doc["f_sf"].as_array().unwrap() {
        let (f, d1, d2) = (
            s["f"].as_f64().unwrap(),
            s["d1"].as_f64().unwrap(),
            s["d2"].as_f64().unwrap(),
        );
        check(
            f_sf(f, d1, d2),
            &s["sf"],
            POINT,
            &format!("F({d1},{d2}) survival at {f} (scipy f.sf)"),
        );
        // scipy itself drifts by ~2e-11 at 10^4 degrees of freedom; the 40-digit value is tighter.
        check(
            f_sf(f, d1, d2),
            &s["sf_mpmath"],
            1e-12,
            &format!("F({d1},{d2}) survival at {f} (mpmath, 40 digits)"),
        );
    }
    for t in doc["t_quantile"].as_array().unwrap() {
        let df = t["df"].as_f64().unwrap();
        check(
            t_critical(0.05, df),
            &t["t"],
            1e-10,
            &format!("t({df}) 97.5% point (scipy t.ppf)"),
        );
    }
}

#[test]
fn wilson_intervals_match_statsmodels() {
    let doc = reference();
    for w in doc["wilson"].as_array().unwrap() {
        let (c, n) = (w["count"].as_u64().unwrap(), w["total"].as_u64().unwrap());
        let ci = categorical::wilson_interval(c, n, 0.05)
            .expect("a proportion with trials has an interval");
        check(
            Some(ci[0]),
            &w["ci95"][0],
            BOUND,
            &format!("Wilson lower {c}/{n}"),
        );
        check(
            Some(ci[1]),
            &w["ci95"][1],
            BOUND,
            &format!("Wilson upper {c}/{n}"),
        );
    }
}

#[test]
fn percentiles_match_numpy_linear() {
    let doc = reference();
    for case in doc["percentile"].as_array().unwrap() {
        let values = floats(&case["values"]);
        for (p, e) in floats(&case["p"])
            .into_iter()
            .zip(case["expected"].as_array().unwrap())
        {
            check(
                quantile_sorted(&values, p),
                e,
                POINT,
                &format!("numpy percentile {p} of {} values", values.len()),
            );
        }
    }
}
