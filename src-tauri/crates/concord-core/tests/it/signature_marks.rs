//! Sign-off marks beyond the rating screen: two experts sign their ratings of one shared item,
//! one of Ana's values is changed afterwards with a reason, and exactly that value is marked
//! `changed_after_signature` — on the adjudication screen's data, in the long CSV (also when its
//! rows are ordered through spilled runs), the wide CSV and the results workbook — while the
//! unchanged signed values are marked `signed` and the judge's unsigned ones carry no mark. An
//! exported long CSV with the new column still imports as ratings.

use concord_testsupport::lead_study;

use calamine::{Data, Reader, Xlsx};
use concord_core::intake::long::import_ratings;
use concord_core::intake::long::RatingColumns;
use concord_core::intake::ImportOptions;
use concord_core::outputs::export;
use concord_core::outputs::export::csv::write_long_csv_in_runs;
use concord_core::outputs::export::write_long_csv;
use concord_core::outputs::export::write_wide_csv;
use concord_core::outputs::export::CsvOptions;
use concord_core::outputs::export::WorkbookOptions;
use concord_core::panel::adjudication::DiscrepancyRule;
use concord_core::panel::adjudication::Panel;
use concord_core::rubric::builtin;
use concord_core::store::{Occasion, RatingInput, SignatureState, Store};
use concord_core::workflow::assignment;
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::signoff;
use lead_study::*;

/// The criterion whose value Ana changes after signing (the second of the rubric).
fn changed_key() -> String {
    builtin::mentalbench().criteria[1].id.clone()
}

/// Ana (4 everywhere) and Boris (2 everywhere) rate one item they are both assigned, the judge
/// rates it too (5), both experts sign, then Ana changes the second criterion to 5 with a reason.
fn setup() -> (Store, i64) {
    let mut store = memory_study(4, &["Ana", "Boris"]);
    assignment::assign(&mut store, &AssignmentOptions::new(2, 3)).expect("assigned");
    let ana = rater_id(&store, "Ana");
    let boris = rater_id(&store, "Boris");
    let judge = rater_id(&store, "gpt-4o-judge");
    let item = assignment::expert_items(&store, "Ana").expect("items")[0].response_id;
    assert!(
        assignment::expert_items(&store, "Boris")
            .expect("items")
            .iter()
            .any(|i| i.response_id == item),
        "with two experts per item Boris is assigned Ana's item too"
    );
    rate_all(&mut store, ana, item, 4, None);
    rate_all(&mut store, boris, item, 2, None);
    rate_all(&mut store, judge, item, 5, None);
    for (name, seed) in [("Ana", 1), ("Boris", 2)] {
        let pass = format!("{name} signs here");
        signoff::set_passphrase(&mut store, name, None, &pass, seed, 1000).expect("passphrase");
        signoff::sign_assignment(&mut store, name, &pass).expect("signed");
    }
    let crit = criteria(&store)[1];
    store
        .write(|tx| {
            tx.set_rating_with_reason(
                &RatingInput {
                    rater_id: ana,
                    response_id: item,
                    criterion_id: crit,
                    occasion: Occasion::First,
                    value: Some(5),
                    raw_value: None,
                    rationale: None,
                    origin: "screen",
                },
                "misread the answer's second paragraph",
            )
        })
        .expect("a signed value changes with a reason");
    (store, item)
}

#[test]
fn the_adjudicator_sees_which_expert_values_are_signed_and_which_changed_after() {
    let (store, _) = setup();
    let panel = Panel::load(&store, true).expect("panel");
    let pairs = panel.discrepancies(&DiscrepancyRule::default(), true);
    assert_eq!(
        pairs.len(),
        7,
        "Ana and Boris are two or more points apart on all seven criteria"
    );
    for pair in &pairs {
        let state = |rater: &str| {
            pair.values
                .iter()
                .find(|v| v.rater == rater)
                .unwrap_or_else(|| panic!("{rater}'s value is shown on {}", pair.criterion))
                .signature
        };
        let ana_expected = if pair.criterion == changed_key() {
            SignatureState::ChangedAfterSignature
        } else {
            SignatureState::Signed
        };
        assert_eq!(
            state("Ana"),
            ana_expected,
            "only Ana's changed value on {} is marked changed after signature",
            pair.criterion
        );
        assert_eq!(
            state("Boris"),
            SignatureState::Signed,
            "Boris' untouched signed value on {} is marked signed",
            pair.criterion
        );
    }
    let json = serde_json::to_value(&pairs[0]).expect("serialises");
    assert!(
        json["values"][0]["signature"].is_string(),
        "the window receives the state as a string: {json}"
    );
}

fn long_csv(store: &Store) -> String {
    let mut out = Vec::new();
    write_long_csv(store, &mut out, CsvOptions::default()).expect("long CSV written");
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn the_long_csv_marks_each_signed_value_and_the_changed_one_also_through_spilled_runs() {
    let (store, _) = setup();
    let text = long_csv(&store);
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().expect("header").clone();
    assert_eq!(
        headers.iter().next_back(),
        Some("signature"),
        "the signature column is appended after the existing columns"
    );
    let col = |name: &str| headers.iter().position(|h| h == name).expect("column");
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("record")).collect();
    assert_eq!(
        rows.len(),
        21,
        "seven values each of Ana, Boris and the judge"
    );
    for row in &rows {
        let expected = match (&row[col("rater")], &row[col("criterion")]) {
            ("gpt-4o-judge", _) => "",
            ("Ana", c) if c == changed_key() => "changed_after_signature",
            _ => "signed",
        };
        assert_eq!(
            &row[col("signature")],
            expected,
            "{} on {}",
            &row[col("rater")],
            &row[col("criterion")]
        );
    }
    let mut spilled = Vec::new();
    write_long_csv_in_runs(&store, &mut spilled, CsvOptions::default(), 2).expect("spilled");
    assert_eq!(
        String::from_utf8(spilled).expect("UTF-8"),
        text,
        "the signature states survive the runs spilled to disk and merged"
    );
}

#[test]
fn the_wide_csv_and_the_workbook_mark_each_rater_row() {
    let (store, _) = setup();
    let mut out = Vec::new();
    write_wide_csv(&store, &mut out, CsvOptions::default()).expect("wide CSV");
    let text = String::from_utf8(out).expect("UTF-8");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().expect("header").clone();
    let col = headers
        .iter()
        .position(|h| h == "signature")
        .expect("signature column");
    assert_eq!(
        col,
        6 + 7,
        "the signature column follows the seven criterion columns"
    );
    for row in reader.records().map(|r| r.expect("record")) {
        let expected = match &row[3] {
            "Ana" => "changed_after_signature",
            "Boris" => "signed",
            _ => "",
        };
        assert_eq!(&row[col], expected, "{}'s wide row", &row[3]);
    }

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("results.xlsx");
    export::write_workbook(&store, &path, &WorkbookOptions::default()).expect("workbook");
    let mut wb: Xlsx<_> = calamine::open_workbook(&path).expect("workbook opens");
    for (sheet, expected) in [("Ana", "changed_after_signature"), ("Boris", "signed")] {
        let cells = wb.worksheet_range(sheet).expect("sheet");
        let header: Vec<String> = (0..cells.width())
            .map(|c| cells.get((0, c)).map(|d| d.to_string()).unwrap_or_default())
            .collect();
        let col = header
            .iter()
            .position(|h| h == "signature")
            .expect("signature column");
        assert_eq!(
            col,
            header.len() - 1,
            "the signature column is the last of an expert sheet"
        );
        assert_eq!(
            cells.get((1, col)),
            Some(&Data::String(expected.to_string())),
            "{sheet}'s row is marked {expected}"
        );
    }
}

#[test]
fn an_exported_long_csv_with_the_signature_column_imports_as_ratings() {
    let (store, _) = setup();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("ratings.csv");
    std::fs::write(&path, long_csv(&store)).expect("written");
    // The same dataset in a fresh study, its responses named as the export names them (their
    // numbers: the synthetic study has no response ids of its own).
    let mut fresh = memory_study(4, &["Ana", "Boris"]);
    let responses = fresh.response_labels().expect("responses");
    fresh
        .write(|tx| {
            for r in &responses {
                tx.set_response_external_id(r.id, &r.id.to_string())?;
            }
            Ok::<_, concord_core::store::StoreError>(())
        })
        .expect("response ids set");
    let columns = RatingColumns {
        item: "response_id".into(),
        score: "value".into(),
        ..RatingColumns::default()
    };
    let report = import_ratings(
        &mut fresh,
        &path,
        "mentalbench",
        &columns,
        None,
        &ImportOptions::default(),
    )
    .expect("the export imports; the extra column is ignored");
    assert_eq!(
        report.files[0].ratings_inserted, 21,
        "every exported value comes back"
    );
}
