//! The open study keeps agreement reports in memory and updates them with each value from the
//! rating screen; the result must equal a report computed from the file afresh. And the first
//! screen's overview says whether the study holds Concord's sample data (the demo's welcome).

use concord_core::app::open_study::OpenStudy;
use concord_core::base::clock::SteppingClock;
use concord_core::intake::demo::populate_demo;
use concord_core::panel::agreement::report;
use concord_core::panel::agreement::AgreementOptions;
use concord_core::panel::agreement::Comparison;
use concord_core::panel::agreement::Level;
use concord_core::store::Store;
use concord_core::workflow::queue;
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
fn a_first_expert_value_reads_its_response_in_and_equals_a_fresh_load() {
    // The report holds only the responses experts rated. A value on a response no expert has
    // rated yet must bring that response in with its judges' values, leaving the report, the
    // table and the judge verdicts (which hold every response) equal to a fresh computation.
    use concord_core::panel::agreement::verdict::judge_verdicts;
    use concord_core::panel::agreement::verdict::VerdictOptions;
    use concord_core::panel::agreement::AgreementData;
    use concord_core::panel::agreement_table::table_with_reml_bands;
    use concord_core::panel::agreement_table::CiChoice;
    use concord_core::panel::agreement_table::IccChoice;
    use concord_core::panel::agreement_table::TableView;
    use concord_core::store::{Occasion, RaterKind, RatingInput};
    let mut store = Store::in_memory(Arc::new(SteppingClock::new(1_700_000_000_000, 10))).unwrap();
    populate_demo(&mut store, 5).unwrap();
    // The judge scores every response, so responses no expert rated carry judge values.
    let all = AgreementData::load(&store, "mentalbench").unwrap();
    let judge = all
        .raters
        .iter()
        .find(|r| r.kind == RaterKind::Judge)
        .unwrap()
        .id;
    store
        .write(|tx| {
            for r in &all.responses {
                for c in &all.criteria {
                    tx.set_rating(&RatingInput {
                        rater_id: judge,
                        response_id: r.id,
                        criterion_id: c.id,
                        occasion: Occasion::First,
                        value: Some(1 + (r.id * 7 + c.id * 3) % 5),
                        raw_value: None,
                        rationale: None,
                        origin: "import:test",
                    })?;
                }
            }
            Ok::<_, concord_core::store::StoreError>(())
        })
        .unwrap();
    let mut study = OpenStudy::new(store);
    let options = AgreementOptions::mentalalign("mentalbench");
    let verdict = VerdictOptions::default();
    let held = study.agreement_data(&options).unwrap().responses.len();
    let all = AgreementData::load(study.store(), "mentalbench")
        .unwrap()
        .responses
        .len();
    assert!(
        held < all,
        "the demo has judge-only responses the report does not hold ({held} of {all})"
    );
    let _ = study.judge_verdicts(&options, &verdict).unwrap();
    let expert = study
        .store()
        .raters()
        .unwrap()
        .into_iter()
        .find(|r| r.name == "Demo expert B")
        .unwrap()
        .id;
    let summary = queue::open_queue(study.store_mut(), expert).unwrap();
    let _ = study.agreement(&options).unwrap();
    let _ = study.judge_verdicts(&options, &verdict).unwrap();
    let mut taken_in = 0;
    for item in 1..=summary.total {
        let it = queue::rating_item(study.store(), expert, item).unwrap();
        if it.criteria.len() != 7 || it.criteria.iter().any(|c| c.value.is_some()) {
            continue;
        }
        let before = study.agreement_data(&options).unwrap().responses.len();
        study
            .rate(expert, item, &it.criteria[0].key, 2, None)
            .unwrap();
        assert_eq!(
            study.cached_reports(),
            1,
            "the held report took the value in place (not dropped and reloaded)"
        );
        let after = study.agreement_data(&options).unwrap().responses.len();
        taken_in += usize::from(after == before + 1);
        if taken_in == 3 {
            break;
        }
    }
    assert!(
        taken_in > 0,
        "some rated item was a response no expert had rated, so it was read in"
    );
    let fresh = report(study.store(), options.clone()).unwrap();
    assert_eq!(
        study.agreement(&options).unwrap(),
        &fresh,
        "the report with responses read in equals one loaded afresh"
    );
    let view = TableView {
        level: Level::Item,
        comparison: Comparison::JudgeVsExperts,
        icc: IccChoice::A1,
        ci: CiChoice::F,
    };
    assert_eq!(
        study.agreement_table(&options, view).unwrap(),
        table_with_reml_bands(study.store(), &fresh, view).unwrap(),
        "the window's table equals the command line's"
    );
    let full = AgreementData::load(study.store(), "mentalbench").unwrap();
    assert_eq!(
        study.judge_verdicts(&options, &verdict).unwrap(),
        judge_verdicts(&full, &verdict),
        "the verdicts kept up to date equal verdicts over every response loaded afresh"
    );
}

#[test]
fn a_change_written_by_another_connection_is_never_shown_stale() {
    // A judge run or another process writes to the study file on its own connection: the held
    // report and verdicts must notice (SQLite's data_version) and be computed afresh.
    use concord_core::panel::agreement::verdict::judge_verdicts;
    use concord_core::panel::agreement::verdict::VerdictOptions;
    use concord_core::panel::agreement::AgreementData;
    use concord_core::store::{Occasion, RaterKind, RatingInput};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.concord");
    let clock = || Arc::new(SteppingClock::new(1_700_000_000_000, 10));
    let mut store = Store::create(&path, clock()).unwrap();
    populate_demo(&mut store, 5).unwrap();
    let mut study = OpenStudy::new(store);
    let options = AgreementOptions::mentalalign("mentalbench");
    let verdict = VerdictOptions::default();
    let before = study.agreement(&options).unwrap().clone();
    let _ = study.judge_verdicts(&options, &verdict).unwrap();
    // Change every value of one expert through a second connection.
    let data = AgreementData::load(study.store(), "mentalbench").unwrap();
    let expert = data
        .raters
        .iter()
        .position(|r| r.kind == RaterKind::Expert)
        .unwrap();
    let mut other = Store::open(&path, clock()).unwrap();
    other
        .write(|tx| {
            for (c, criterion) in data.criteria.iter().enumerate() {
                for (i, response) in data.responses.iter().enumerate() {
                    let v = data.series(expert, c)[i];
                    if v.is_nan() {
                        continue;
                    }
                    tx.set_rating(&RatingInput {
                        rater_id: data.raters[expert].id,
                        response_id: response.id,
                        criterion_id: criterion.id,
                        occasion: Occasion::First,
                        value: Some(if v >= 3.0 { 1 } else { 5 }),
                        raw_value: None,
                        rationale: None,
                        origin: "import:test",
                    })?;
                }
            }
            Ok::<_, concord_core::store::StoreError>(())
        })
        .unwrap();
    let fresh = report(study.store(), options.clone()).unwrap();
    assert_ne!(
        fresh, before,
        "the other connection's values change the report"
    );
    assert_eq!(
        study.agreement(&options).unwrap(),
        &fresh,
        "the held report was dropped and computed from the file afresh"
    );
    let full = AgreementData::load(study.store(), "mentalbench").unwrap();
    assert_eq!(
        study.judge_verdicts(&options, &verdict).unwrap(),
        judge_verdicts(&full, &verdict),
        "the held verdicts were dropped too"
    );
}

#[test]
fn every_cell_carries_all_six_forms_and_the_table_can_show_each() {
    use concord_core::panel::agreement_table::table;
    use concord_core::panel::agreement_table::CiChoice;
    use concord_core::panel::agreement_table::IccChoice;
    use concord_core::panel::agreement_table::TableView;
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

/// The demo study says it holds sample data (the first screen's welcome reads it), and so does an
/// empty study filled from the demo; a study of one's own does not.
#[test]
fn the_demo_and_a_study_begun_from_it_say_they_hold_sample_data() {
    use concord_core::base::clock::SystemClock;
    use concord_core::intake::demo::{create_demo_at, populate_demo};
    use concord_core::store::Store;
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let demo = create_demo_at(&dir.path().join("demo.concord"), Arc::new(SystemClock), 3).unwrap();
    assert_eq!(
        demo.overview().unwrap().sample_data.as_deref(),
        Some("demo"),
        "the demo study is sample data"
    );
    let mut own = Store::create(&dir.path().join("own.concord"), Arc::new(SystemClock)).unwrap();
    assert_eq!(
        own.overview().unwrap().sample_data,
        None,
        "a new study of one's own is not"
    );
    populate_demo(&mut own, 4).unwrap();
    assert_eq!(
        own.overview().unwrap().sample_data.as_deref(),
        Some("demo"),
        "a study begun from the demo holds its sample data"
    );
}
