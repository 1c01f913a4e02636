//! Dawid–Skene against `crowd-kit` 1.4.2 itself: every case in `vectors/dawid_skene.json` is
//! refitted here. The EM passes are the package's, so the number of passes and whether the
//! stopping rule was met must be identical, and posteriors, priors and confusion matrices agree
//! within 1e-4 (an iterative fit); φ of the judges' errors is a closed form on the consensus
//! labels and agrees within 1e-9.

use concord_stats::dawid_skene::{dawid_skene, error_correlation, DawidSkeneOptions, LabelRating};
use serde_json::Value;
use std::collections::HashMap;

const FIT_TOL: f64 = 1e-4;

fn doc() -> Value {
    serde_json::from_str(include_str!("../vectors/dawid_skene.json"))
        .expect("dawid_skene.json is valid JSON")
}

/// Ids in order of first appearance.
#[derive(Default)]
struct Ids {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

impl Ids {
    fn of(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }
}

/// Labels the raters gave, sorted (as numbers when all are numbers), then gold-only labels in
/// gold order — the order the command line uses.
fn label_order(ratings: &[Value], gold: &[(String, String)]) -> Vec<String> {
    let mut given: Vec<String> = ratings
        .iter()
        .map(|r| r[2].as_str().unwrap().to_string())
        .collect();
    given.sort();
    given.dedup();
    if given.iter().all(|l| l.parse::<f64>().is_ok()) {
        given.sort_by(|a, b| {
            a.parse::<f64>()
                .unwrap()
                .total_cmp(&b.parse::<f64>().unwrap())
        });
    }
    for (_, l) in gold {
        if !given.contains(l) {
            given.push(l.clone());
        }
    }
    given
}

fn near(actual: f64, expected: f64, tol: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tol,
        "{what}: Concord {actual} differs from crowd-kit {expected}"
    );
}

#[test]
fn dawid_skene_matches_crowd_kit() {
    let doc = doc();
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 8, "the vectors cover designs and edge cases");
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let rows = case["ratings"].as_array().unwrap();
        let gold: Vec<(String, String)> = case["gold"]
            .as_array()
            .map(|g| {
                g.iter()
                    .map(|p| (p[0].as_str().unwrap().into(), p[1].as_str().unwrap().into()))
                    .collect()
            })
            .unwrap_or_default();
        let labels = label_order(rows, &gold);
        let label_index = |l: &str| labels.iter().position(|x| x == l).unwrap();
        let (mut items, mut raters) = (Ids::default(), Ids::default());
        let ratings: Vec<LabelRating> = rows
            .iter()
            .map(|r| LabelRating {
                item: items.of(r[0].as_str().unwrap()),
                rater: raters.of(r[1].as_str().unwrap()),
                label: label_index(r[2].as_str().unwrap()),
            })
            .collect();
        let gold_pairs: Vec<(usize, usize)> = gold
            .iter()
            .map(|(i, l)| (items.of(i), label_index(l)))
            .collect();
        let options = DawidSkeneOptions {
            max_iter: case["max_iter"].as_u64().unwrap() as usize,
            tol: case["tol"].as_f64().unwrap(),
        };
        let fit = dawid_skene(
            &ratings,
            items.names.len(),
            raters.names.len(),
            labels.len(),
            &gold_pairs,
            &options,
        )
        .unwrap_or_else(|e| panic!("{name}: crowd-kit fits these data ({e})"));
        assert_eq!(
            fit.iterations,
            case["iterations"].as_u64().unwrap() as usize,
            "{name}: the same EM passes and stopping rule give the same number of passes"
        );
        assert_eq!(
            fit.converged,
            case["converged"].as_bool().unwrap(),
            "{name}: convergence is reported as the stopping rule decided"
        );
        let k = labels.len();
        for (item, post) in case["posteriors"].as_object().unwrap() {
            let i = items.index[item];
            let mut top = f64::NEG_INFINITY;
            for (l, p) in post.as_object().unwrap() {
                let p = p.as_f64().unwrap();
                top = top.max(p);
                near(
                    fit.posteriors[i * k + label_index(l)],
                    p,
                    FIT_TOL,
                    &format!("{name} P({item} = {l})"),
                );
            }
            let tied = post
                .as_object()
                .unwrap()
                .values()
                .filter(|p| (p.as_f64().unwrap() - top).abs() < 1e-9)
                .count()
                > 1;
            if !tied {
                let expected = case["labels"][item].as_str().unwrap();
                assert_eq!(
                    labels[fit.labels[i].unwrap()],
                    expected,
                    "{name}: the consensus label of {item} is the most probable one"
                );
            }
        }
        for (l, p) in case["priors"].as_object().unwrap() {
            near(
                fit.priors[label_index(l)],
                p.as_f64().unwrap(),
                FIT_TOL,
                &format!("{name} prior of {l}"),
            );
        }
        for (rater, by_truth) in case["confusion"].as_object().unwrap() {
            let r = raters.index[rater];
            for (truth, by_given) in by_truth.as_object().unwrap() {
                let c = label_index(truth);
                for (g, given) in labels.iter().enumerate() {
                    let expected = by_given[given].as_f64().unwrap_or(0.0);
                    near(
                        fit.confusion_of(r, g, c),
                        expected,
                        FIT_TOL,
                        &format!("{name} P({rater} says {given} | {truth}) (0 for a label the rater never gave)"),
                    );
                }
            }
        }
        let Some(pairs) = case["judge_error_correlation"].as_array() else {
            continue;
        };
        let given_by = |rater: &str| -> Vec<Option<usize>> {
            let r = raters.index[rater];
            let mut out = vec![None; items.names.len()];
            for x in &ratings {
                if x.rater == r {
                    out[x.item] = Some(x.label);
                }
            }
            out
        };
        for pair in pairs {
            let (a, b) = (pair["a"].as_str().unwrap(), pair["b"].as_str().unwrap());
            let (n, phi) = error_correlation(&given_by(a), &given_by(b), &fit.labels);
            assert_eq!(
                n,
                pair["n"].as_u64().unwrap() as usize,
                "{name}: {a} and {b} share these items"
            );
            match pair["phi"].as_f64() {
                None => assert_eq!(
                    phi, None,
                    "{name}: φ of {a}, {b} is undefined in the reference"
                ),
                Some(e) => near(
                    phi.expect("defined"),
                    e,
                    1e-9,
                    &format!("{name} φ({a}, {b})"),
                ),
            }
        }
    }
}
