//! The judge reliability report on a study judged three times by the loopback judge, whose
//! repetitions disagree in a known way (`judge_server::spread_score`: +1, 0, −1 around a known
//! score) and whose experts score one below it: every figure the report draws from the study is
//! checked against what those known values give by hand.

use concord_core::judge::{
    execute_run, open_run, CancellationToken, Execution, ProviderKind, RunSettings,
};
use concord_core::panel::judge_reliability::{judge_reliability, ReliabilityOptions};
use concord_core::store::{NewRater, Occasion, RaterKind, RatingInput, Store, StoreError};
use concord_testsupport::judge_server::{
    self, expected_score, spread_score, study_with_items, FakeJudge,
};
use std::time::Duration;

const ITEMS: u64 = 12;

/// The experts' score of `item` on attribute `k`: one below the judge's median, at least 1.
fn expert_score(item: u64, k: usize) -> i64 {
    (expected_score(item, k) - 1).max(1)
}

pub(crate) fn judged_study(path: &std::path::Path, repetitions: u32) -> (Store, Vec<i64>) {
    let server = FakeJudge::start(Duration::ZERO, false, None);
    server
        .state
        .spread
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let (mut store, ids) = study_with_items(path, &judge_server::mentalbench(), ITEMS);
    let rubric_id = store.rubrics().unwrap()[0].id;
    let criteria = store.criteria_in_order(rubric_id).unwrap();
    store
        .write(|tx| -> Result<(), StoreError> {
            let expert = tx.upsert_rater(&NewRater {
                kind: RaterKind::Expert,
                name: "E1",
                model_id: None,
                family: None,
                queue_seed: 1,
            })?;
            for (item, id) in ids.iter().enumerate() {
                for (k, c) in criteria.iter().enumerate() {
                    tx.set_rating(&RatingInput {
                        rater_id: expert,
                        response_id: *id,
                        criterion_id: c.id,
                        occasion: Occasion::First,
                        value: Some(expert_score(item as u64, k)),
                        raw_value: None,
                        rationale: None,
                        origin: "screen",
                    })?;
                }
            }
            Ok(())
        })
        .unwrap();
    let mut s = RunSettings::new(
        ProviderKind::OpenaiCompatible,
        &server.base_url(),
        "judge-model-1",
    );
    s.max_tokens = 256;
    s.repetitions = repetitions;
    s.family = Some("gpt-4o".into());
    let run = open_run(&mut store, &s).unwrap().run_id;
    let exec = Execution {
        concurrency: 1,
        ..Execution::default()
    };
    let report = execute_run(
        &mut store,
        run,
        &exec,
        None,
        &CancellationToken::new(),
        &mut |_| {},
    )
    .expect("the run executes");
    assert_eq!(
        report.status.done as u64,
        ITEMS * repetitions as u64,
        "every call answers"
    );
    (store, ids)
}

#[test]
fn the_report_reads_every_repetition_and_the_experts() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = judged_study(&dir.path().join("s.concord"), 3);
    let report = judge_reliability(&store, &ReliabilityOptions::default()).expect("the report");
    assert_eq!(
        report.len(),
        7,
        "one object per judge × criterion (one judge, seven attributes)"
    );
    for (k, r) in report.iter().enumerate() {
        assert_eq!(
            r.repetitions, 3,
            "{}: K is the run's three repetitions",
            r.criterion
        );
        assert_eq!(
            r.n_compared as u64, ITEMS,
            "{}: every response has experts",
            r.criterion
        );
        // Exact agreement by hand: the share of agreeing pairs among the three spread values.
        let mut shares = 0.0;
        let mut bias = 0.0;
        for item in 0..ITEMS {
            let v: Vec<i64> = (1..=3).map(|c| spread_score(item, k, c)).collect();
            let agree = [(0, 1), (0, 2), (1, 2)]
                .iter()
                .filter(|(a, b)| v[*a] == v[*b])
                .count();
            shares += agree as f64 / 3.0;
            bias += (expected_score(item, k) - expert_score(item, k)) as f64;
        }
        let want = shares / ITEMS as f64;
        let got = r.consistency.exact_agreement.expect("defined");
        assert!(
            (got - want).abs() < 1e-12,
            "{}: exact agreement {got} must be the hand-counted {want}",
            r.criterion
        );
        let got = r.bias.overall.estimate.expect("defined");
        assert!(
            (got - bias / ITEMS as f64).abs() < 1e-12,
            "{}: the bias is the median's (= the known score's) distance from the experts",
            r.criterion
        );
        assert_eq!(
            r.repetitions_needed.rows.len(),
            3,
            "{}: a row per k = 1…3",
            r.criterion
        );
        assert_eq!(
            r.calibration.source,
            Some("repetitions"),
            "no log-probabilities were returned, so repetition frequencies stand in"
        );
        assert_eq!(
            r.bias.self_preference.estimate, None,
            "every response is the judge's own family's, so there is nothing to compare with"
        );
        assert_eq!(
            r.bias.order.n, 0,
            "the run did not shuffle the criteria order, so no call has a recorded position"
        );
        assert_eq!(r.bias.bands.len(), 3, "three quality bands");
        let alpha = r.consistency.alpha.expect("defined");
        let [lo, hi] = r.consistency.alpha_ci95;
        assert!(
            lo.unwrap() <= alpha && alpha <= hi.unwrap(),
            "{}: the seeded bootstrap interval holds the estimate",
            r.criterion
        );
    }
    let again = judge_reliability(&store, &ReliabilityOptions::default()).unwrap();
    assert_eq!(report, again, "the same seed gives the same report");
}

/// The loopback judge with log-probabilities on and an order bias (one point more on the
/// attributes a prompt lists in its first half), judged once per response with the criteria
/// shuffled per call: every call records its order and its expected scores, and the audit finds
/// the order bias the server put in.
#[test]
fn shuffled_orders_and_log_probabilities_are_recorded_and_audited() {
    use concord_core::judge::scores::RepetitionAggregate;
    use judge_server::logprob_alternatives;
    let server = FakeJudge::start(Duration::ZERO, false, None);
    server
        .state
        .order_bias
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.concord");
    let (mut store, ids) = study_with_items(&path, &judge_server::mentalbench(), ITEMS);
    let rubric_id = store.rubrics().unwrap()[0].id;
    let criteria = store.criteria_in_order(rubric_id).unwrap();
    store
        .write(|tx| -> Result<(), StoreError> {
            let expert = tx.upsert_rater(&NewRater {
                kind: RaterKind::Expert,
                name: "E1",
                model_id: None,
                family: None,
                queue_seed: 1,
            })?;
            for (item, id) in ids.iter().enumerate() {
                for (k, c) in criteria.iter().enumerate() {
                    tx.set_rating(&RatingInput {
                        rater_id: expert,
                        response_id: *id,
                        criterion_id: c.id,
                        occasion: Occasion::First,
                        value: Some(expected_score(item as u64, k)),
                        raw_value: None,
                        rationale: None,
                        origin: "screen",
                    })?;
                }
            }
            Ok(())
        })
        .unwrap();
    let mut s = RunSettings::new(
        ProviderKind::OpenaiCompatible,
        &server.base_url(),
        "judge-model-1",
    );
    s.max_tokens = 256;
    s.logprobs = true;
    s.shuffle_criteria = true;
    let run = open_run(&mut store, &s).unwrap().run_id;
    execute_run(
        &mut store,
        run,
        &Execution::default(),
        None,
        &CancellationToken::new(),
        &mut |_| {},
    )
    .expect("the run executes");

    let c = rusqlite::Connection::open(&path).unwrap();
    let mut q = c
        .prepare("SELECT response_id, criteria_order, expected_json, scores_json FROM judge_call WHERE run_id = ?1")
        .unwrap();
    let calls: Vec<(i64, String, String, String)> = q
        .query_map([run], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(calls.len() as u64, ITEMS, "one call per response");
    let keys: Vec<String> = criteria.iter().map(|c| c.key.clone()).collect();
    let mut orders = std::collections::HashSet::new();
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for (response, order, expected, scores) in &calls {
        let item = ids.iter().position(|i| i == response).unwrap() as u64;
        let order: Vec<String> = serde_json::from_str(order).expect("the order is a JSON array");
        let mut sorted = order.clone();
        sorted.sort();
        let mut all = keys.clone();
        all.sort();
        assert_eq!(sorted, all, "a call's order lists every criterion once");
        orders.insert(order.clone());
        let expected: std::collections::HashMap<String, f64> =
            serde_json::from_str(expected).unwrap();
        let scores: std::collections::HashMap<String, i64> = serde_json::from_str(scores).unwrap();
        for (k, key) in keys.iter().enumerate() {
            let v = scores[key];
            // Σ p·s by hand over the server's alternatives that are on the 1–5 scale.
            let (mut mass, mut sum) = (0.0, 0.0);
            for (a, p) in logprob_alternatives(v) {
                if (1..=5).contains(&a) {
                    mass += p;
                    sum += p * a as f64;
                }
            }
            assert!(
                (expected[key] - sum / mass).abs() < 1e-9,
                "item {item} {key}: the stored expected score {} is Σ p·s = {}",
                expected[key],
                sum / mass
            );
            let pos = order.iter().position(|o| o == key).unwrap();
            let d = (v - expected_score(item, k)) as f64;
            if 2 * pos + 1 < order.len() {
                first.push(d);
            } else if 2 * pos + 1 > order.len() {
                second.push(d);
            }
        }
    }
    assert!(
        orders.len() > 1,
        "the order is shuffled per call, not once per run"
    );
    let report = judge_reliability(
        &store,
        &ReliabilityOptions {
            aggregate: Some(RepetitionAggregate::Median),
            ..ReliabilityOptions::default()
        },
    )
    .unwrap();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let want = mean(&first) - mean(&second);
    let pooled: usize = report.iter().map(|r| r.bias.order.n).sum();
    assert_eq!(
        pooled,
        first.len() + second.len(),
        "every call's position outside the middle counts"
    );
    assert!(
        want > 0.5,
        "the server's order bias shows in the hand count ({want})"
    );
    for r in &report {
        assert_eq!(
            r.calibration.source,
            Some("logprobs"),
            "{}: expected scores came from log-probabilities",
            r.criterion
        );
        let est = r.bias.order.estimate.expect("both halves are present");
        assert!(
            est > 0.0,
            "{}: criteria asked first are scored higher ({est})",
            r.criterion
        );
    }
}

/// Run the loopback judge `model` on `rubric` of `store`, `repetitions` times per response (with
/// token log-probabilities asked for when `logprobs`).
pub(crate) fn run_judge(
    store: &mut Store,
    server: &FakeJudge,
    rubric: &str,
    model: &str,
    repetitions: u32,
    logprobs: bool,
) {
    let mut s = RunSettings::new(ProviderKind::OpenaiCompatible, &server.base_url(), model);
    s.max_tokens = 256;
    s.repetitions = repetitions;
    s.logprobs = logprobs;
    s.rubric = Some(rubric.into());
    s.family = Some("gpt-4o".into());
    let run = open_run(store, &s).unwrap().run_id;
    execute_run(
        store,
        run,
        &Execution::default(),
        None,
        &CancellationToken::new(),
        &mut |_| {},
    )
    .expect("the run executes");
}

/// The agreement panel's section: the CLI's figures, with the curve, the diagram's bins and the
/// length scatter its plots draw; and why it is empty when no judge ran or none repeated itself.
#[test]
fn the_panel_section_carries_the_report_and_what_its_plots_draw() {
    use concord_core::panel::judge_reliability::{reliability_section, SectionState};
    use concord_stats::repetitions::{spearman_brown, REACHES_TOLERANCE};
    let server = FakeJudge::start(Duration::ZERO, false, None);
    for flag in [&server.state.spread, &server.state.binary_spread] {
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    let dir = tempfile::tempdir().unwrap();
    let mut store = judge_server::reliability_study(&dir.path().join("s.concord"), 15);
    let options = |rubric: &str| ReliabilityOptions {
        rubric: Some(rubric.into()),
        ..ReliabilityOptions::default()
    };
    for rubric in ["mentalbench", "psycrisis"] {
        assert_eq!(
            reliability_section(&store, &options(rubric)).unwrap().state,
            SectionState::NoJudgeRuns,
            "{rubric}: before any run the section says no judge ran"
        );
    }
    run_judge(&mut store, &server, "psycrisis", "once-judge", 1, false);
    assert_eq!(
        reliability_section(&store, &options("psycrisis"))
            .unwrap()
            .state,
        SectionState::SingleRepetition,
        "a judge that answered once has nothing to be consistent with"
    );
    run_judge(&mut store, &server, "mentalbench", "thrice-judge", 3, false);
    run_judge(&mut store, &server, "psycrisis", "thrice-judge", 3, false);
    for rubric in ["mentalbench", "psycrisis"] {
        let section = reliability_section(&store, &options(rubric)).unwrap();
        assert_eq!(
            section.state,
            SectionState::Shown,
            "{rubric}: a judge answered three times"
        );
        let report = judge_reliability(&store, &options(rubric)).unwrap();
        let figures: Vec<_> = section.rows.iter().map(|r| r.figures.clone()).collect();
        assert_eq!(
            figures, report,
            "{rubric}: the panel shows exactly the figures `concord judge reliability` reports"
        );
        for row in section.rows.iter().filter(|r| r.figures.repetitions == 3) {
            let f = &row.figures;
            let what = format!("{rubric}/{}", f.criterion);
            assert_eq!(
                row.length.points.len(),
                f.n_compared,
                "{what}: one scatter point per response compared with the experts"
            );
            let line = row.length.line.as_ref().expect("the lengths vary");
            let slope = f.bias.length.estimate.expect("a length slope");
            assert!(
                (line.slope - slope).abs() < 1e-12,
                "{what}: the line drawn is the audit's slope ({} vs {slope})",
                line.slope
            );
            let rho1 = f
                .repetitions_needed
                .single_repetition_reliability
                .expect("ρ₁ of spread repetitions");
            for (p, r) in row.curve.iter().zip(&f.repetitions_needed.rows) {
                assert!(
                    (Some(p.reliability) == r.predicted_reliability) && p.k == r.k,
                    "{what}: the curve runs through the table's Spearman–Brown column at k = {}",
                    r.k
                );
            }
            match f.target.repetitions {
                Some(k) => {
                    assert!(
                        spearman_brown(rho1, k as f64).unwrap() >= 0.8 - REACHES_TOLERANCE
                            && (k == 1
                                || spearman_brown(rho1, (k - 1) as f64).unwrap()
                                    < 0.8 - REACHES_TOLERANCE),
                        "{what}: {k} repetitions are the fewest that reach 0.80 from ρ₁ = {rho1}"
                    );
                    assert_eq!(
                        row.curve.last().map(|p| p.k),
                        Some(k.clamp(3, 20)),
                        "{what}: the curve is drawn to the repetitions the target needs"
                    );
                }
                None => assert!(rho1 <= 0.0, "{what}: only ρ₁ ≤ 0 never reaches the target"),
            }
            if rubric == "psycrisis" {
                let b = f.calibration.binary.as_ref().expect("binary calibration");
                let binned: usize = b.bins.iter().map(|bin| bin.n).sum();
                assert_eq!(
                    binned, f.n_compared,
                    "{what}: every compared response falls in one bin of the diagram"
                );
                assert!(
                    b.bins
                        .iter()
                        .any(|bin| bin.n > 0 && bin.lower > 0.0 && bin.upper < 1.0),
                    "{what}: the spread repetitions put some predictions strictly between 0 and 1"
                );
            }
        }
        assert!(
            section
                .rows
                .iter()
                .any(|r| r.figures.judge == "thrice-judge"),
            "{rubric}: the repeated judge is in the section"
        );
    }
}

/// Judges whose scores were imported (the demo's judge: one score per response, no run of
/// Concord's) fill the agreement table, so the reliability section must not say that no judge
/// has run: it names them (the window then says the run with repetitions it needs). A rubric no
/// judge scored still says no judge ran (`the_panel_section_carries_the_report_…`).
#[test]
fn imported_judge_scores_are_named_in_the_empty_section_not_called_no_judge() {
    use concord_core::base::clock::SystemClock;
    use concord_core::intake::demo::create_demo_at;
    use concord_core::panel::judge_reliability::{reliability_section, SectionState};
    let dir = tempfile::tempdir().unwrap();
    let store = create_demo_at(
        &dir.path().join("demo.concord"),
        std::sync::Arc::new(SystemClock),
        7,
    )
    .unwrap();
    let section = reliability_section(
        &store,
        &ReliabilityOptions {
            rubric: Some("mentalbench".into()),
            ..ReliabilityOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        section.state,
        SectionState::ImportedScoresOnly,
        "the demo judge's imported scores are not 'no judge has run'"
    );
    let judge = store
        .rater_records()
        .unwrap()
        .into_iter()
        .find(|r| r.kind == "judge")
        .expect("the demo has a judge");
    assert_eq!(
        section.imported_judges,
        vec![judge.model_id.clone().unwrap_or(judge.name.clone())],
        "the section names the judge as the agreement table does"
    );
    assert!(
        section.rows.is_empty(),
        "nothing to show without repetitions"
    );
}
