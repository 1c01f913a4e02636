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
            study.rate(expert, item, &c.key, v, None).unwrap();
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

#[test]
fn every_cell_carries_all_six_forms_and_the_table_can_show_each() {
    use concord_core::agreement_table::{table, CiChoice, IccChoice, TableView};
    let mut store = Store::in_memory(Arc::new(SteppingClock::new(1_700_000_000_000, 10))).unwrap();
    populate_demo(&mut store, 5).unwrap();
    let report = report(&store, AgreementOptions::mentalalign("mentalbench")).unwrap();
    for cell in &report.cells {
        assert_eq!(cell.icc_forms.len(), 6, "six ICC forms per cell");
        let icc3 = cell.icc_forms.iter().find(|f| f.form == "ICC3").unwrap();
        assert_eq!(icc3.value, cell.icc_c1, "ICC3 is ICC(C,1)");
        assert_eq!(
            cell.points.is_empty(),
            cell.level == Level::Item,
            "system-level cells carry their source targets, item-level ones do not"
        );
    }
    for icc in [
        IccChoice::Icc1,
        IccChoice::Icc1k,
        IccChoice::Ak,
        IccChoice::Ck,
    ] {
        let t = table(
            &report,
            TableView {
                level: Level::Item,
                comparison: Comparison::ExpertVsExpert,
                icc,
                ci: CiChoice::F,
            },
        );
        let shown = t.rows[0].cells[0]
            .as_ref()
            .expect("the demo experts share items");
        let want = report
            .cells
            .iter()
            .find(|c| {
                c.comparison == Comparison::ExpertVsExpert
                    && c.level == Level::Item
                    && c.criterion == t.rows[0].criterion
            })
            .unwrap();
        assert!(
            want.icc_forms.iter().any(|f| f.value == shown.icc),
            "the table shows the chosen form's value ({icc:?})"
        );
    }
}
