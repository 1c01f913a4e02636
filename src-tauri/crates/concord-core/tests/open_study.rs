//! The open study keeps agreement reports in memory and updates them with each value from the
//! rating screen; the result must equal a report computed from the file afresh.

use concord_core::agreement::{report, AgreementOptions, Comparison, Level};
use concord_core::clock::SteppingClock;
use concord_core::demo::populate_demo;
use concord_core::open_study::OpenStudy;
use concord_core::queue;
use concord_core::store::Store;
use std::sync::Arc;

#[test]
fn a_rating_updates_the_cached_report_exactly_as_a_fresh_computation() {
    let mut store = Store::in_memory(Arc::new(SteppingClock::new(1_700_000_000_000, 10))).unwrap();
    populate_demo(&mut store, 5).unwrap();
    let mut study = OpenStudy::new(store);
    let options = AgreementOptions::mentalalign("mentalbench");
    let before = study.agreement(&options).unwrap().clone();
    let expert = study
        .store()
        .raters()
        .unwrap()
        .into_iter()
        .find(|r| r.name == "Demo expert B")
        .unwrap()
        .id;
    let summary = queue::open_queue(study.store_mut(), expert).unwrap();
    // Rate items on the MentalBench rubric with values that differ from anything stored.
    let mut changed = 0;
    for item in 1..=summary.total {
        let it = queue::rating_item(study.store(), expert, item).unwrap();
        if it.criteria.len() != 7 {
            continue;
        }
        let _ = study.agreement(&options).unwrap();
        for c in &it.criteria {
            let v = if c.value == Some(5) { 1 } else { 5 };
            study.rate(expert, item, &c.key, v).unwrap();
            changed += 1;
        }
        if changed > 40 {
            break;
        }
    }
    let cached = study.agreement(&options).unwrap().clone();
    let fresh = report(study.store(), options.clone()).unwrap();
    assert_eq!(
        cached, fresh,
        "the in-memory update must equal recomputing from the file"
    );
    assert_ne!(cached, before, "the new values must change the report");
    let n_before: usize = before
        .cells
        .iter()
        .filter(|c| c.comparison == Comparison::ExpertVsExpert && c.level == Level::Item)
        .map(|c| c.n_pairs)
        .sum();
    let n_after: usize = cached
        .cells
        .iter()
        .filter(|c| c.comparison == Comparison::ExpertVsExpert && c.level == Level::Item)
        .map(|c| c.n_pairs)
        .sum();
    assert!(
        n_after > n_before,
        "more double-rated pairs after rating: {n_before} → {n_after}"
    );
}
