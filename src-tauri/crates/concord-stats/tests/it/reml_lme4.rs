//! Concord's REML ICC against R's lme4: every design in `vectors/reml_lme4.json` (written by
//! `vectors/reml_lme4.R`: balanced, incomplete k-of-N, unbalanced Likert, and fits on the boundary
//! of the parameter space) is refitted here. Variance components, ICCs and the profile-likelihood
//! interval bounds must agree within 1e-4 (both sides optimise numerically), the REML criterion
//! within 1e-6 relative.

use concord_stats::reml::{reml_icc, BoundaryComponent, Rating};
use serde_json::Value;

const TOL: f64 = 1e-4;

fn cases() -> Vec<Value> {
    let doc: Value = serde_json::from_str(include_str!("../vectors/reml_lme4.json"))
        .expect("reml_lme4.json is valid JSON");
    doc["cases"].as_array().expect("a list of cases").clone()
}

fn close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= TOL,
        "{what}: Concord {actual} differs from lme4's {expected} by more than {TOL}"
    );
}

#[test]
fn reml_icc_matches_lme4() {
    let cases = cases();
    assert!(
        cases.len() >= 6,
        "the lme4 vectors cover at least six designs"
    );
    for case in &cases {
        let name = case["name"].as_str().expect("a name");
        let ratings: Vec<Rating> = case["ratings"]
            .as_array()
            .expect("ratings")
            .iter()
            .map(|r| Rating {
                target: r[0].as_u64().expect("target index") as usize,
                rater: r[1].as_u64().expect("rater index") as usize,
                score: r[2].as_f64().expect("score"),
            })
            .collect();
        let fit = reml_icc(&ratings).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(fit.n_ratings, ratings.len(), "{name}: every rating is used");
        let v = &case["variance"];
        close(
            fit.variance.target,
            v["target"].as_f64().unwrap(),
            &format!("{name} σ²t"),
        );
        close(
            fit.variance.rater,
            v["rater"].as_f64().unwrap(),
            &format!("{name} σ²r"),
        );
        close(
            fit.variance.residual,
            v["residual"].as_f64().unwrap(),
            &format!("{name} σ²e"),
        );
        let o = &case["one_way"];
        close(
            fit.one_way[0],
            o["target"].as_f64().unwrap(),
            &format!("{name} one-way σ²t"),
        );
        close(
            fit.one_way[1],
            o["residual"].as_f64().unwrap(),
            &format!("{name} one-way σ²e"),
        );
        close(
            fit.intercept,
            case["intercept"].as_f64().unwrap(),
            &format!("{name} intercept"),
        );
        let crit = case["reml_criterion"].as_f64().unwrap();
        assert!(
            (fit.reml_deviance - crit).abs() <= 1e-6 * crit.abs().max(1.0),
            "{name}: the REML criterion {} equals lme4's {crit}: the same likelihood is maximised",
            fit.reml_deviance
        );
        for est in &fit.icc {
            let code = serde_json::to_value(est.form).unwrap();
            let code = code.as_str().unwrap();
            close(
                est.icc,
                case["icc"][code].as_f64().unwrap(),
                &format!("{name} {code}"),
            );
            for (side, bound) in est.ci95.iter().enumerate() {
                let b =
                    bound.unwrap_or_else(|| panic!("{name} {code}: the profile bound is found"));
                close(
                    b,
                    case["ci95"][code][side].as_f64().unwrap(),
                    &format!("{name} {code} ci95[{side}]"),
                );
            }
        }
        if case["singular"].as_bool().unwrap() {
            assert!(
                !fit.boundary.is_empty(),
                "{name}: lme4 reports a singular (boundary) fit, Concord must say so too"
            );
        } else {
            assert!(
                !fit.boundary.contains(&BoundaryComponent::Target)
                    && !fit.boundary.contains(&BoundaryComponent::Rater),
                "{name}: an interior fit is not reported as boundary ({:?})",
                fit.boundary
            );
        }
    }
}
