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

fn judged_study(path: &std::path::Path, repetitions: u32) -> (Store, Vec<i64>) {
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
