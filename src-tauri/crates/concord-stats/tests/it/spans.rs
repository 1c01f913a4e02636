//! Agreement on marked spans: Krippendorff's unitized α against the worked examples of
//! Krippendorff (1995, 2004) and the studies of DKPro Statistics' tests, as DKPro computes them
//! (`vectors/unitized_alpha.json`, to 1e-6) and as the sources print them (to the tolerance DKPro's
//! tests allow); span F1 on hand-counted cases and its properties; the bootstrap of several
//! figures over common resamples.

use std::collections::BTreeMap;

use concord_stats::bootstrap::BootstrapOptions;
use concord_stats::spans::{
    continuum, percentile_cis_each, segment_distance, span_f1, unitized_alpha, ItemSpan,
    MarkedItem, MarkedSpan, Unit, UnitizedStudy, UnitizingError,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

const COMPUTED: f64 = 1e-6;

fn vectors() -> Value {
    serde_json::from_str(include_str!("../vectors/unitized_alpha.json"))
        .expect("unitized_alpha.json is valid JSON")
}

/// A case's study, with category names numbered in the order of their names.
fn study_of(case: &Value) -> (UnitizedStudy, BTreeMap<String, usize>) {
    let units = case["units"].as_array().expect("units is a list");
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for u in units {
        let name = u[3].as_str().expect("a category name").to_string();
        let next = names.len();
        names.entry(name).or_insert(next);
    }
    // Renumber in name order so the categories' ascending order is the names' order.
    let ordered: BTreeMap<String, usize> = names
        .keys()
        .enumerate()
        .map(|(i, k)| (k.clone(), i))
        .collect();
    let study = UnitizedStudy {
        begin: case["begin"].as_u64().expect("begin"),
        length: case["length"].as_u64().expect("length"),
        raters: case["raters"].as_u64().expect("raters") as usize,
        units: units
            .iter()
            .map(|u| Unit {
                begin: u[0].as_u64().expect("offset"),
                length: u[1].as_u64().expect("length"),
                rater: u[2].as_u64().expect("rater") as usize,
                category: ordered[u[3].as_str().expect("category")],
            })
            .collect(),
    };
    (study, ordered)
}

fn close(actual: f64, expected: f64, tolerance: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: Concord gives {actual}, the reference {expected} (tolerance {tolerance})"
    );
}

#[test]
fn unitized_alpha_matches_dkpro_on_every_vector() {
    let v = vectors();
    let cases = v["cases"].as_array().expect("cases");
    assert!(
        cases.len() >= 20,
        "the vectors hold the worked examples and the random studies"
    );
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let (study, names) = study_of(case);
        let got = unitized_alpha(&study).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (category, figures) in case["categories"].as_object().expect("categories") {
            let c = got.category(names[category]).unwrap_or_else(|| {
                panic!("{name}: category {category} is used, so it has figures")
            });
            for (field, value) in [
                ("observed", c.observed),
                ("expected", c.expected),
                ("alpha", c.alpha),
            ] {
                let want = figures[field].as_f64().expect("a number");
                close(value, want, COMPUTED, &format!("{name} {category} {field}"));
            }
        }
        match case["alpha"].as_f64() {
            Some(want) => close(
                got.alpha
                    .expect("DKPro computes an overall alpha, so must Concord"),
                want,
                COMPUTED,
                &format!("{name} overall alpha"),
            ),
            None => assert!(
                got.alpha.is_none(),
                "{name}: undefined for DKPro, None here"
            ),
        }
    }
}

#[test]
fn unitized_alpha_matches_the_published_figures_within_their_rounding() {
    let v = vectors();
    let mut checked = 0;
    for case in v["cases"].as_array().expect("cases") {
        let Some(published) = case.get("published") else {
            continue;
        };
        let name = case["name"].as_str().expect("name");
        let (study, names) = study_of(case);
        let got = unitized_alpha(&study).expect("the published studies are valid");
        for (key, entry) in published.as_object().expect("published is an object") {
            if key == "alpha" {
                let (want, tol) = (entry[0].as_f64().unwrap(), entry[1].as_f64().unwrap());
                close(
                    got.alpha.unwrap(),
                    want,
                    tol,
                    &format!("{name} published alpha"),
                );
                checked += 1;
                continue;
            }
            let c = got
                .category(names[key])
                .expect("a published category is used");
            for (field, pair) in entry.as_object().expect("fields") {
                let value = match field.as_str() {
                    "observed" => c.observed,
                    "expected" => c.expected,
                    _ => c.alpha,
                };
                let (want, tol) = (pair[0].as_f64().unwrap(), pair[1].as_f64().unwrap());
                close(value, want, tol, &format!("{name} {key} published {field}"));
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 30,
        "every published figure is checked ({checked})"
    );
}

#[test]
fn segment_distances_are_krippendorffs() {
    let v = vectors();
    for d in v["distances"].as_array().expect("distances") {
        let seg = |s: &Value| {
            (
                i128::from(s[0].as_i64().unwrap()),
                i128::from(s[1].as_i64().unwrap()),
                s[2].as_bool().unwrap(),
            )
        };
        let (a, b) = (seg(&d["first"]), seg(&d["second"]));
        let want = i128::from(d["distance"].as_i64().unwrap());
        assert_eq!(segment_distance(a, b), want, "distance of {a:?} and {b:?}");
    }
}

#[test]
fn unitized_alpha_refuses_what_it_cannot_measure() {
    let unit = |begin, length, rater, category| Unit {
        begin,
        length,
        rater,
        category,
    };
    let mut study = UnitizedStudy {
        begin: 0,
        length: 10,
        raters: 2,
        units: vec![unit(0, 4, 0, 0), unit(2, 4, 0, 0)],
    };
    assert!(
        matches!(
            unitized_alpha(&study),
            Err(UnitizingError::Overlap { rater: 0, .. })
        ),
        "one rater's units of one category must not overlap"
    );
    study.units = vec![unit(8, 4, 1, 0)];
    assert!(
        matches!(
            unitized_alpha(&study),
            Err(UnitizingError::OutsideContinuum { .. })
        ),
        "a unit past the continuum's end is refused"
    );
    study.units = vec![unit(0, 1, 2, 0)];
    assert!(
        matches!(
            unitized_alpha(&study),
            Err(UnitizingError::UnknownRater { .. })
        ),
        "a unit of a third rater in a two-rater study is refused"
    );
    study.units = vec![];
    assert_eq!(
        unitized_alpha(&study)
            .expect("an empty study is valid")
            .alpha,
        None,
        "no unit: nothing to measure (DKPro's NaN)"
    );
    study.raters = 1;
    assert!(
        matches!(unitized_alpha(&study), Err(UnitizingError::TooFewRaters(1))),
        "agreement needs two raters"
    );
}

#[test]
fn continuum_lays_items_end_to_end_and_merges_one_raters_overlaps() {
    let span = |rater, code, start, end| MarkedSpan {
        rater,
        code,
        start,
        end,
    };
    let first = MarkedItem {
        length: 10,
        spans: vec![
            span(7, 0, 1, 4),
            span(7, 0, 3, 6),
            span(9, 0, 6, 8),
            span(5, 1, 0, 2),
        ],
    };
    let second = MarkedItem {
        length: 5,
        spans: vec![span(9, 1, 0, 3), span(7, 1, 3, 5), span(7, 1, 0, 3)],
    };
    let study = continuum(&[&first, &second, &first], &[7, 9]);
    assert_eq!(study.length, 25, "three items of 10, 5 and 10 characters");
    assert_eq!(study.raters, 2, "only the raters asked for");
    let mut units: Vec<(u64, u64, usize, usize)> = study
        .units
        .iter()
        .map(|u| (u.begin, u.length, u.rater, u.category))
        .collect();
    units.sort_unstable();
    assert_eq!(
        units,
        vec![
            (1, 5, 0, 0),
            (6, 2, 1, 0),
            (10, 3, 0, 1),
            (10, 3, 1, 1),
            (13, 2, 0, 1),
            (16, 5, 0, 0),
            (21, 2, 1, 0),
        ],
        "overlapping spans of rater 7 merge into [1, 6); touching ones stay apart; rater 5 is left out"
    );
    assert!(
        unitized_alpha(&study).is_ok(),
        "a merged continuum is a valid study"
    );
}

fn s(item: usize, code: usize, start: u64, end: u64) -> ItemSpan {
    ItemSpan {
        item,
        code,
        start,
        end,
    }
}

#[test]
fn span_f1_counts_exact_and_overlapping_matches() {
    // A: four spans; B: three. Exact: (0,0,0,5) only. Overlap: A's (0,0,0,5), (0,0,10,14) and
    // (1,0,2,4) meet a B span of their item and code; A's (1,1,0,3) meets none (B's span there has
    // code 0). B's three spans all meet one of A's.
    let a = [s(0, 0, 0, 5), s(0, 0, 10, 14), s(1, 0, 2, 4), s(1, 1, 0, 3)];
    let b = [s(0, 0, 0, 5), s(0, 0, 12, 20), s(1, 0, 0, 3)];
    let f = span_f1(&a, &b);
    close(f.exact.unwrap(), 2.0 / 7.0, 1e-12, "exact F1 = 2·1/(4+3)");
    let (p, r) = (3.0 / 4.0, 3.0 / 3.0);
    close(
        f.overlap.unwrap(),
        2.0 * p * r / (p + r),
        1e-12,
        "overlap F1 from precision 3/4 and recall 3/3",
    );
    let g = span_f1(&b, &a);
    assert_eq!(f.exact, g.exact, "exact F1 is symmetric");
    assert_eq!(f.overlap, g.overlap, "overlap F1 is symmetric");
    let touching = span_f1(&[s(0, 0, 0, 5)], &[s(0, 0, 5, 9)]);
    assert_eq!(
        touching.overlap,
        Some(0.0),
        "spans that only touch share no character"
    );
    assert_eq!(span_f1(&[], &[]).exact, None, "nothing marked: undefined");
    assert_eq!(
        span_f1(&a, &[]).overlap,
        Some(0.0),
        "one rater marked nothing: 0"
    );
    let same = span_f1(&a, &a);
    assert_eq!(
        (same.exact, same.overlap),
        (Some(1.0), Some(1.0)),
        "a rater agrees with itself"
    );
}

#[test]
fn bootstrap_of_several_figures_keeps_each_figures_own_replicates() {
    let options = BootstrapOptions {
        resamples: 200,
        ..BootstrapOptions::default()
    };
    let values = [1.0, 2.0, 3.0, 4.0];
    let run = |seed| {
        percentile_cis_each(
            4,
            2,
            &options,
            &mut ChaCha8Rng::seed_from_u64(seed),
            |idx, out| {
                out[0] = Some(idx.iter().map(|&i| values[i]).sum::<f64>() / 4.0);
                // Defined only when item 0 was drawn.
                out[1] = idx.contains(&0).then_some(1.0);
            },
        )
        .expect("valid settings")
    };
    let first = run(7);
    assert_eq!(first, run(7), "a seed reproduces the intervals");
    assert_eq!(first[0].kept, 200, "the mean is defined on every resample");
    assert!(
        first[1].kept < 200 && first[1].kept + first[1].dropped_undefined == 200,
        "the second figure keeps only its defined replicates"
    );
    let (lo, hi) = (first[0].lower.unwrap(), first[0].upper.unwrap());
    assert!(
        lo >= 1.0 && hi <= 4.0 && lo < hi,
        "the mean's interval lies within the values"
    );
}
