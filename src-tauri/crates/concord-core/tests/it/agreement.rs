//! The agreement engine on in-memory data: recomputing after one new rating gives exactly the
//! report a full recomputation gives; the bootstrap is reproducible from its seed; undefined
//! statistics serialise as null; groups need every member attribute; experts compare with each
//! other when several rated the same responses.

use concord_core::panel::agreement::data::RaterInfo;
use concord_core::panel::agreement::data::ResponseInfo;
use concord_core::panel::agreement::data::SourceInfo;
use concord_core::panel::agreement::AgreementData;
use concord_core::panel::agreement::AgreementEngine;
use concord_core::panel::agreement::AgreementOptions;
use concord_core::panel::agreement::Comparison;
use concord_core::panel::agreement::Level;
use concord_core::rubric::builtin;
use concord_core::store::RaterKind;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SOURCES: [(&str, Option<&str>); 4] = [
    ("original", None),
    ("claude", Some("claude")),
    ("gpt4o", Some("gpt-4o")),
    ("qwen_3", Some("qwen")),
];

/// Two experts and two judges rating `per_source` responses of each source on all seven
/// attributes with seeded random noise around a per-source level.
fn synthetic(per_source: usize, seed: u64) -> AgreementData {
    let rubric = builtin::mentalbench();
    let sources = SOURCES
        .iter()
        .enumerate()
        .map(|(i, (k, f))| SourceInfo {
            id: i as i64 + 1,
            key: k.to_string(),
            name: k.to_string(),
            family: f.map(str::to_string),
        })
        .collect();
    let rater = |id: i64, name: &str, kind, family: Option<&str>| RaterInfo {
        id,
        name: name.to_string(),
        kind,
        model_id: (kind == RaterKind::Judge).then(|| name.to_string()),
        family: family.map(str::to_string),
    };
    let raters = vec![
        rater(1, "Expert A", RaterKind::Expert, None),
        rater(2, "Expert B", RaterKind::Expert, None),
        rater(3, "gpt-4o", RaterKind::Judge, Some("gpt-4o")),
        rater(4, "claude-3-7-sonnet", RaterKind::Judge, Some("claude")),
    ];
    let responses: Vec<ResponseInfo> = (0..SOURCES.len() * per_source)
        .map(|i| ResponseInfo::answer(i as i64 + 1, i % SOURCES.len()))
        .collect();
    let mut data = AgreementData::new(&rubric, sources, raters, responses.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for r in &responses {
        for criterion in 1..=7 {
            let level = 2 + r.source as i64 % 3;
            for rater in 1..=4 {
                let v = (level + rng.gen_range(-1..=1) + (rater == 3) as i64).clamp(1, 5);
                data.apply(rater, r.id, criterion, Some(v as f64))
                    .expect("known rater, response and criterion");
            }
        }
    }
    data
}

fn options() -> AgreementOptions {
    AgreementOptions {
        resamples: 200,
        ..AgreementOptions::mentalalign("mentalbench")
    }
}

#[test]
fn one_new_rating_updates_exactly_like_a_full_recompute() {
    let mut engine = AgreementEngine::new(synthetic(30, 1), options());
    let before = engine.report().clone();
    // Expert A changes one Empathy value (criterion 5) of response 7.
    let recomputed = engine.apply(1, 7, 5, Some(1.0)).expect("known cell");
    assert!(recomputed > 0, "cells reading that value are recomputed");
    let mut changed = synthetic(30, 1);
    changed.apply(1, 7, 5, Some(1.0)).expect("known cell");
    let full = AgreementEngine::new(changed, options());
    assert_eq!(
        engine.report(),
        full.report(),
        "the incremental report must equal the full recomputation"
    );
    assert_ne!(
        engine.report(),
        &before,
        "the change must show in the report"
    );
    let untouched = engine
        .report()
        .cells
        .iter()
        .zip(&before.cells)
        .filter(|(a, b)| a.criterion == "guidance" && a == b)
        .count();
    assert!(untouched > 0, "cells of other attributes keep their values");
    assert!(
        engine.apply(99, 7, 5, Some(1.0)).is_err(),
        "an unknown rater asks for a reload instead of guessing"
    );
}

#[test]
fn bootstrap_is_reproducible_from_its_seed() {
    let a = AgreementEngine::new(synthetic(20, 2), options());
    let b = AgreementEngine::new(synthetic(20, 2), options());
    assert_eq!(
        a.report(),
        b.report(),
        "the same seed gives the same report"
    );
    let other = AgreementEngine::new(
        synthetic(20, 2),
        AgreementOptions {
            seed: 7,
            ..options()
        },
    );
    let ci = |e: &AgreementEngine| -> Vec<[Option<f64>; 2]> {
        e.report()
            .cells
            .iter()
            .filter(|c| c.level == Level::System)
            .map(|c| c.ci95)
            .collect()
    };
    assert_ne!(ci(&a), ci(&other), "another seed draws other resamples");
    let points = |e: &AgreementEngine| -> Vec<Option<f64>> {
        e.report().cells.iter().map(|c| c.icc_c1).collect()
    };
    assert_eq!(
        points(&a),
        points(&other),
        "point estimates do not depend on the seed"
    );
}

#[test]
fn comparisons_cover_judges_experts_and_the_human_baseline() {
    let engine = AgreementEngine::new(synthetic(10, 3), options());
    let report = engine.report();
    let count = |cmp: Comparison| report.cells.iter().filter(|c| c.comparison == cmp).count();
    // 7 attributes + 2 groups, 2 levels.
    assert_eq!(
        count(Comparison::JudgeVsExperts),
        2 * 9 * 2,
        "each judge against the experts"
    );
    assert_eq!(
        count(Comparison::JudgeVsExpert),
        2 * 2 * 9 * 2,
        "each judge against each expert"
    );
    assert_eq!(count(Comparison::ExpertVsExpert), 9 * 2, "one expert pair");
    let claude = report
        .cells
        .iter()
        .find(|c| c.rater == "claude-3-7-sonnet" && c.level == Level::System)
        .expect("a claude cell");
    assert_eq!(
        claude.excluded_sources,
        vec!["claude".to_string()],
        "claude's own family is excluded"
    );
    assert_eq!(claude.n_targets, 3, "three sources remain");
    let item = report
        .cells
        .iter()
        .find(|c| c.rater == "gpt-4o" && c.level == Level::Item && !c.is_group)
        .expect("an item-level cell");
    assert_eq!(
        item.n_targets, 30,
        "every kept response is a target at item level"
    );
    assert!(
        item.ci95_f_c1[0].is_some()
            && item.bland_altman.loa95[0].is_some()
            && item.lin_ccc.is_some(),
        "F interval, Bland–Altman limits and Lin's CCC are reported"
    );
    assert!(
        (item.bias.expect("bias") - item.bland_altman.bias.expect("BA bias")).abs() < 1e-12,
        "at item level the Bland–Altman bias is the pair bias"
    );
}

#[test]
fn groups_need_every_member_and_undefined_values_print_as_null() {
    let mut data = synthetic(6, 4);
    // Judge gpt-4o loses its Safety value (criterion 4, a CSS member) on response 1.
    data.apply(3, 1, 4, None).expect("known cell");
    let engine = AgreementEngine::new(data, options());
    let css = engine
        .report()
        .cells
        .iter()
        .find(|c| {
            c.rater == "gpt-4o"
                && c.criterion == "CSS"
                && c.level == Level::Item
                && c.comparison == Comparison::JudgeVsExperts
        })
        .expect("CSS row");
    let guidance = engine
        .report()
        .cells
        .iter()
        .find(|c| {
            c.rater == "gpt-4o"
                && c.criterion == "guidance"
                && c.level == Level::Item
                && c.comparison == Comparison::JudgeVsExperts
        })
        .expect("Guidance row");
    assert_eq!(
        css.n_pairs + 1,
        guidance.n_pairs,
        "a response missing one CSS member has no CSS score"
    );

    // Constant ratings: every ICC is undefined and must serialise as null, never NaN.
    let rubric = builtin::mentalbench();
    let mut flat = AgreementData::new(
        &rubric,
        vec![SourceInfo {
            id: 1,
            key: "original".into(),
            name: "original".into(),
            family: None,
        }],
        vec![
            RaterInfo {
                id: 1,
                name: "E".into(),
                kind: RaterKind::Expert,
                model_id: None,
                family: None,
            },
            RaterInfo {
                id: 2,
                name: "J".into(),
                kind: RaterKind::Judge,
                model_id: Some("j".into()),
                family: Some("j".into()),
            },
        ],
        (1..=3).map(|id| ResponseInfo::answer(id, 0)).collect(),
    );
    for id in 1..=3 {
        for rater in 1..=2 {
            flat.apply(rater, id, 1, Some(3.0)).expect("known cell");
        }
    }
    let engine = AgreementEngine::new(flat, options());
    let json = serde_json::to_string(engine.report()).expect("serialises");
    assert!(!json.contains("NaN"), "no NaN in the JSON");
    let cell = engine
        .report()
        .cells
        .iter()
        .find(|c| c.criterion == "guidance" && c.level == Level::Item)
        .expect("guidance cell");
    assert_eq!(cell.icc_c1, None, "no variance, no ICC");
    assert_eq!(cell.bias, Some(0.0), "identical values have zero bias");
    let value = serde_json::to_value(cell).expect("cell serialises");
    assert!(value["icc_c1"].is_null(), "an undefined ICC prints as null");
}

/// Binary dimensions: positive and negative specific agreement among three experts with missing
/// ratings (Uebersax's generalisation, computed by hand below), the judge against the experts'
/// majority (Dice's coefficient), and every coefficient's interval around its estimate.
#[test]
fn binary_dimensions_report_specific_agreement_ac1_and_alpha_with_intervals() {
    let rubric = builtin::psycrisis();
    let sources = vec![SourceInfo {
        id: 1,
        key: "gpt4o".into(),
        name: "GPT-4o".into(),
        family: Some("gpt-4o".into()),
    }];
    let rater = |id: i64, name: &str, kind| RaterInfo {
        id,
        name: name.to_string(),
        kind,
        model_id: (kind == RaterKind::Judge).then(|| name.to_string()),
        family: None,
    };
    let raters = vec![
        rater(1, "E1", RaterKind::Expert),
        rater(2, "E2", RaterKind::Expert),
        rater(3, "E3", RaterKind::Expert),
        rater(4, "judge-x", RaterKind::Judge),
    ];
    let responses: Vec<ResponseInfo> = (1..=4).map(|id| ResponseInfo::answer(id, 0)).collect();
    let mut data = AgreementData::new(&rubric, sources, raters, responses);
    // Criterion 1, per response: E1, E2, E3 (None: not rated), judge.
    let table: [[Option<f64>; 4]; 4] = [
        [Some(1.0), Some(1.0), Some(1.0), Some(1.0)],
        [Some(1.0), Some(0.0), None, Some(1.0)],
        [Some(0.0), Some(0.0), Some(1.0), Some(0.0)],
        [Some(0.0), Some(0.0), None, Some(1.0)],
    ];
    for (i, row) in table.iter().enumerate() {
        for (r, v) in row.iter().enumerate() {
            if let Some(v) = v {
                data.apply(r as i64 + 1, i as i64 + 1, 1, Some(*v))
                    .expect("known rater, response and criterion");
            }
        }
    }
    let options = AgreementOptions {
        resamples: 200,
        ..AgreementOptions::mentalalign("psycrisis")
    };
    let report = AgreementEngine::new(data, options).report().clone();
    let key = &builtin::psycrisis().criteria[0].id;
    let experts = report
        .binary
        .iter()
        .find(|b| b.experts && &b.criterion == key)
        .expect("the experts' own agreement is reported");
    // Pairs involving "present": response 1 gives 3·2 = 6 (all agreeing), response 2 gives 1,
    // response 3 gives 2; "absent": response 2 gives 1, response 3 gives 2·2 = 4 (2 agreeing),
    // response 4 gives 2 (2 agreeing).
    let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-12);
    assert!(
        close(experts.positive_agreement, 6.0 / 9.0)
            && close(experts.negative_agreement, 4.0 / 7.0),
        "Uebersax's many-rater specific agreement over the missing ratings: {experts:?}"
    );
    assert_eq!(
        experts.n_items, 4,
        "every response was rated by two or more experts"
    );
    let judge = report
        .binary
        .iter()
        .find(|b| !b.experts && &b.criterion == key)
        .expect("the judge's cell");
    // Majority: 1, tie (left out), 0, 0; judge 1, ·, 0, 1 → a = 1, d = 1, one disagreement.
    assert!(
        close(judge.positive_agreement, 2.0 / 3.0) && close(judge.negative_agreement, 2.0 / 3.0),
        "two raters: Dice's coefficient on each category: {judge:?}"
    );
    for cell in [experts, judge] {
        for (name, value, ci) in [
            ("AC1", cell.gwet_ac1, cell.gwet_ac1_ci95),
            (
                "alpha",
                cell.krippendorff_alpha,
                cell.krippendorff_alpha_ci95,
            ),
            (
                "positive agreement",
                cell.positive_agreement,
                cell.positive_agreement_ci95,
            ),
        ] {
            let (Some(v), Some([lo, hi])) = (value, ci) else {
                panic!(
                    "{name} of {} has an estimate and an interval: {cell:?}",
                    cell.judge
                );
            };
            // AC1's interval is centred on it (its lower end uncapped, as irrCAC leaves it); a
            // percentile bootstrap need not contain the estimate on four items, but it is an
            // ordered interval of values the statistic can take.
            assert!(
                lo <= hi
                    && (name == "AC1"
                        || ((-1.0..=1.0).contains(&lo) && (-1.0..=1.0).contains(&hi))),
                "{name} of {} has an ordered interval of possible values: [{lo}, {hi}]",
                cell.judge
            );
            if name == "AC1" {
                assert!(
                    lo <= v && v <= hi,
                    "AC1 of {} lies in its interval: {v} in [{lo}, {hi}]",
                    cell.judge
                );
            }
        }
    }
}
