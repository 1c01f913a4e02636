//! G-study variance components and Brennan's coefficients against public references: every
//! case in `vectors/gtheory.json` is refitted here. Balanced designs are checked against the
//! ANOVA expected-mean-squares estimates (numpy), unbalanced ones against statsmodels' REML fit
//! of the same crossed model (confirmed by a dense REML minimised with scipy). REML is an
//! iterative fit, so components agree within 1e-4 (relative to the larger of 1 and the value);
//! the coefficients follow from them by closed forms and carry that tolerance.

use concord_stats::gtheory::{g_study, GDesign, GScore, GStudyError};
use serde_json::Value;
use std::collections::HashMap;

const FIT_TOL: f64 = 1e-4;

fn doc() -> Value {
    serde_json::from_str(include_str!("../vectors/gtheory.json"))
        .expect("gtheory.json is valid JSON")
}

fn index(map: &mut HashMap<String, usize>, key: &str) -> usize {
    let next = map.len();
    *map.entry(key.to_string()).or_insert(next)
}

/// The case's scores as indices, and its design.
fn scores_of(case: &Value) -> (Vec<GScore>, GDesign) {
    let with_occasion = case["facets"].as_str().unwrap() == "rater,occasion";
    let (mut t, mut r, mut o) = (HashMap::new(), HashMap::new(), HashMap::new());
    let scores: Vec<GScore> = case["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let row = row.as_array().unwrap();
            GScore {
                target: index(&mut t, row[0].as_str().unwrap()),
                rater: index(&mut r, row[1].as_str().unwrap()),
                occasion: if with_occasion {
                    index(&mut o, row[2].as_str().unwrap())
                } else {
                    0
                },
                score: row[row.len() - 1].as_f64().unwrap(),
            }
        })
        .collect();
    let design = GDesign {
        n_targets: t.len(),
        n_raters: r.len(),
        n_occasions: with_occasion.then_some(o.len()),
    };
    (scores, design)
}

fn near(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= FIT_TOL * expected.abs().max(1.0),
        "{what}: Concord {actual} differs from the reference {expected}"
    );
}

#[test]
fn g_studies_match_the_references() {
    let doc = doc();
    let cases = doc["cases"].as_array().expect("cases");
    assert!(
        cases.len() >= 5,
        "balanced, unbalanced and boundary designs"
    );
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let (scores, design) = scores_of(case);
        let g = g_study(&scores, &design).unwrap_or_else(|e| panic!("{name}: {e}"));
        let components = serde_json::to_value(g.components).unwrap();
        let expected = case["components"].as_object().unwrap();
        assert_eq!(
            components.as_object().unwrap().len(),
            expected.len(),
            "{name}: the same components, facets outside the design omitted: {components}"
        );
        for (key, value) in expected {
            let actual = components[key]
                .as_f64()
                .unwrap_or_else(|| panic!("{name}: component {key} is reported"));
            near(
                actual,
                value.as_f64().unwrap(),
                &format!("{name} σ²({key})"),
            );
        }
        let deviance = case["reml_deviance"].as_f64().unwrap();
        assert!(
            (g.reml_deviance - deviance).abs() < 1e-4,
            "{name}: the REML criterion at the estimate is the reference's dense-matrix value \
             ({} vs {deviance}), so both criteria are one and the same function at its minimum",
            g.reml_deviance
        );
        near(
            g.g.relative.unwrap(),
            case["g"]["relative"].as_f64().unwrap(),
            &format!("{name} Eρ²"),
        );
        near(
            g.g.absolute.unwrap(),
            case["g"]["absolute"].as_f64().unwrap(),
            &format!("{name} Φ"),
        );
        let rows = case["d_study"].as_array().unwrap();
        assert_eq!(
            g.d_study.len(),
            rows.len(),
            "{name}: 1–10 raters (× 1–10 occasions when that facet is in the design)"
        );
        for (row, want) in g.d_study.iter().zip(rows) {
            assert_eq!(
                (row.n_rater as u64, row.n_occasion as u64),
                (
                    want["n_rater"].as_u64().unwrap(),
                    want["n_occasion"].as_u64().unwrap()
                ),
                "{name}: D-study rows in the reference's order"
            );
            let what = format!("{name} D-study {} × {}", row.n_rater, row.n_occasion);
            near(
                row.relative.unwrap(),
                want["relative"].as_f64().unwrap(),
                &what,
            );
            near(
                row.absolute.unwrap(),
                want["absolute"].as_f64().unwrap(),
                &what,
            );
        }
    }
}

#[test]
fn a_facet_with_one_level_is_refused_with_its_name() {
    let doc = doc();
    for case in doc["errors"].as_array().expect("error cases") {
        let name = case["name"].as_str().unwrap();
        let (scores, design) = scores_of(case);
        let reason = match g_study(&scores, &design).expect_err(name) {
            GStudyError::OneLevel(facet) => format!("one_level:{facet}"),
            other => format!("{other}"),
        };
        assert_eq!(
            reason,
            case["error"].as_str().unwrap(),
            "{name}: the facet with one level is named"
        );
    }
}
