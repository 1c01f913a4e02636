//! Exports: the long and wide CSVs (columns, ISO-8601 UTC times, the Excel flavour), the results
//! workbook (one sheet per expert, codebook, agreement), the fill-in rating sheet round trip
//! (written, filled programmatically, imported back as the expert's ratings), bad cells rejected
//! with their location and nothing written, and formula injection neutralised everywhere while
//! negative numbers stay numeric.

use concord_testsupport::lead_study;

use calamine::{Data, Reader, Xlsx};
use concord_core::outputs::export;
use concord_core::outputs::export::import_rating_sheet;
use concord_core::outputs::export::write_long_csv;
use concord_core::outputs::export::write_rating_sheet;
use concord_core::outputs::export::write_wide_csv;
use concord_core::outputs::export::CsvOptions;
use concord_core::outputs::export::WorkbookOptions;
use concord_core::store::{NewConversation, Occasion, RatingInput, Store, StoreError};
use concord_core::workflow::assignment;
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::assignment::Purpose;
use lead_study::*;
use rust_xlsxwriter::Workbook;
use std::path::Path;

const INJECTION: &str = "=HYPERLINK(\"http://x\",\"y\")";

/// A study with two experts assigned, Ana's first item rated with a formula-like rationale, the
/// judge rating the same item, one conversation whose context starts with `+` and another with
/// `@`, and one out-of-scale value kept as −1.
fn setup() -> Store {
    let mut store = memory_study(6, &["Ana", "Boris"]);
    store
        .write(|tx| {
            let src = tx.upsert_source(&concord_core::store::NewSource {
                key: "original",
                name: "Human original",
                family: None,
                kind: concord_core::store::SourceKind::Human,
            })?;
            for (ext, context) in [
                ("plus", "+1 555 0100 is my number"),
                ("at", "@everyone help"),
            ] {
                let c = tx.add_conversation(&NewConversation {
                    external_id: ext,
                    rubric_id: 1,
                    context,
                    language: Some("en"),
                    category: Some("anxiety"),
                })?;
                tx.add_response(c, src, Some("-5 degrees outside, stay warm"))?;
            }
            Ok::<_, StoreError>(())
        })
        .expect("extra conversations");
    assignment::assign(&mut store, &AssignmentOptions::new(2, 3)).expect("assigned");
    let ana = rater_id(&store, "Ana");
    let judge = rater_id(&store, "gpt-4o-judge");
    let items = assignment::expert_items(&store, "Ana").expect("items");
    rate_all(&mut store, ana, items[0].response_id, 4, Some(INJECTION));
    rate_all(&mut store, judge, items[0].response_id, 5, None);
    let crit = criteria(&store)[0];
    let boris = rater_id(&store, "Boris");
    let boris_item = assignment::expert_items(&store, "Boris").expect("items")[0].response_id;
    store
        .write(|tx| {
            tx.set_rating(&RatingInput {
                rater_id: boris,
                response_id: boris_item,
                criterion_id: crit,
                occasion: Occasion::First,
                value: Some(-1),
                raw_value: Some("-1"),
                rationale: None,
                origin: "import:test",
            })
        })
        .expect("kept out-of-scale value");
    store
}

fn long_csv(store: &Store, options: CsvOptions) -> String {
    let mut out = Vec::new();
    write_long_csv(store, &mut out, options).expect("long CSV written");
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn long_csv_has_one_row_per_rating_with_iso_times_and_neutralised_text() {
    let store = setup();
    let text = long_csv(
        &store,
        CsvOptions {
            excel: false,
            texts: true,
            ..CsvOptions::default()
        },
    );
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().expect("header").clone();
    assert_eq!(
        headers.iter().collect::<Vec<_>>()[..export::csv::LONG_HEADER.len()],
        export::csv::LONG_HEADER,
        "the documented long-form columns come first"
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("record")).collect();
    assert_eq!(
        rows.len(),
        7 + 7 + 1,
        "Ana's 7, the judge's 7 and Boris' one value"
    );
    let col = |name: &str| headers.iter().position(|h| h == name).expect("column");
    let ana = rows
        .iter()
        .find(|r| &r[col("rater")] == "Ana")
        .expect("Ana's row");
    assert_eq!(&ana[col("rater_kind")], "expert", "the rater kind is given");
    assert_eq!(&ana[col("value")], "4", "values are plain numbers");
    assert_eq!(
        &ana[col("rationale")],
        format!("'{INJECTION}"),
        "a formula-like rationale is prefixed with a quote"
    );
    assert!(
        ana[col("created_at")].ends_with('Z') && ana[col("created_at")].starts_with("2023-11-14T"),
        "timestamps are ISO-8601 UTC: {}",
        &ana[col("created_at")]
    );
    let boris = rows
        .iter()
        .find(|r| &r[col("rater")] == "Boris")
        .expect("Boris' row");
    assert_eq!(
        &boris[col("value")],
        "-1",
        "a negative value stays a number"
    );
    assert_eq!(
        &boris[col("raw_value")],
        "-1",
        "a negative raw value is not prefixed"
    );
    assert!(
        !text.contains("\r\n") && !text.starts_with('\u{feff}'),
        "plain UTF-8 with LF by default"
    );
    let excel = long_csv(
        &store,
        CsvOptions {
            excel: true,
            texts: false,
            ..CsvOptions::default()
        },
    );
    assert!(
        excel.starts_with('\u{feff}'),
        "the Excel flavour starts with a BOM"
    );
    assert!(
        excel.lines().count() > 1 && excel.split("\r\n").count() == rows.len() + 2,
        "the Excel flavour ends every line with CRLF"
    );
}

#[test]
fn long_csv_spilled_in_sorted_runs_is_byte_identical_to_one_sort_in_memory() {
    // A large export orders its ratings in sorted runs spilled to disk and merged; runs of one
    // and of four rows make this small study spill, and the bytes must be those of the
    // in-memory sort (the order of every earlier export), texts and Excel flavour included.
    let store = setup();
    for options in [
        CsvOptions::default(),
        CsvOptions {
            excel: true,
            texts: true,
            ..CsvOptions::default()
        },
    ] {
        let mut memory = Vec::new();
        export::csv::write_long_csv_in_runs(&store, &mut memory, options, usize::MAX)
            .expect("long CSV sorted in memory");
        assert!(
            memory.iter().filter(|&&b| b == b'\n').count() > 10,
            "the fixture has enough rows to spill"
        );
        for run_rows in [1, 4] {
            let mut spilled = Vec::new();
            export::csv::write_long_csv_in_runs(&store, &mut spilled, options, run_rows)
                .expect("long CSV merged from runs");
            assert!(
                spilled == memory,
                "runs of {run_rows} rows give the same bytes as one sort ({options:?})"
            );
        }
    }
}

#[test]
fn contexts_starting_with_plus_or_at_are_neutralised_in_csv() {
    let mut store = setup();
    let boris = rater_id(&store, "Boris");
    let plus = store
        .response_id("plus", "original")
        .expect("q")
        .expect("response");
    let at = store
        .response_id("at", "original")
        .expect("q")
        .expect("response");
    rate_all(&mut store, boris, plus, 2, None);
    rate_all(&mut store, boris, at, 2, Some("@mention"));
    let text = long_csv(
        &store,
        CsvOptions {
            excel: false,
            texts: true,
            ..CsvOptions::default()
        },
    );
    assert!(
        text.contains("'+1 555 0100 is my number") && !text.contains(",+1 555"),
        "a context starting with + is prefixed"
    );
    assert!(
        text.contains("'@everyone help") && text.contains("'@mention"),
        "texts starting with @ are prefixed"
    );
    assert!(
        text.contains("'-5 degrees outside"),
        "a text starting with a minus that is not a number is prefixed"
    );
    let mut wide = Vec::new();
    write_wide_csv(
        &store,
        &mut wide,
        CsvOptions {
            excel: false,
            texts: true,
            ..CsvOptions::default()
        },
    )
    .expect("wide");
    let wide = String::from_utf8(wide).expect("UTF-8");
    assert!(
        wide.contains("'+1 555 0100") && !wide.contains(",+1 555"),
        "the wide form neutralises texts too"
    );
}

#[test]
fn wide_csv_has_one_row_per_response_and_rater_with_criterion_columns() {
    let store = setup();
    let mut out = Vec::new();
    let summary = write_wide_csv(&store, &mut out, CsvOptions::default()).expect("wide CSV");
    let text = String::from_utf8(out).expect("UTF-8");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().expect("header").clone();
    assert_eq!(
        headers.iter().skip(6).take(7).collect::<Vec<_>>(),
        vec![
            "guidance",
            "informativeness",
            "relevance",
            "safety",
            "empathy",
            "helpfulness",
            "understanding"
        ],
        "one column per criterion in rubric order"
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("record")).collect();
    assert_eq!(
        rows.len(),
        3,
        "Ana, the judge and Boris each rated one response"
    );
    assert_eq!(summary.ratings, 15, "all fifteen values are in the table");
    let ana = rows.iter().find(|r| &r[3] == "Ana").expect("Ana");
    assert!(
        (6..13).all(|i| &ana[i] == "4"),
        "Ana's seven values sit in the criterion columns"
    );
    let boris = rows.iter().find(|r| &r[3] == "Boris").expect("Boris");
    assert_eq!(
        &boris[6], "-1",
        "a negative value stays numeric in the wide form"
    );
    assert_eq!(&boris[7], "", "a criterion without a value is empty");
}

pub(crate) fn sheet_cells(path: &Path, sheet: &str) -> calamine::Range<Data> {
    let mut wb: Xlsx<_> = calamine::open_workbook(path).expect("workbook opens");
    wb.worksheet_range(sheet).expect("sheet")
}

fn formulas(path: &Path) -> usize {
    let mut wb: Xlsx<_> = calamine::open_workbook(path).expect("workbook opens");
    let names = wb.sheet_names();
    names
        .iter()
        .map(|n| {
            wb.worksheet_formula(n)
                .map(|f| f.used_cells().filter(|(_, _, f)| !f.is_empty()).count())
                .unwrap_or(0)
        })
        .sum()
}

#[test]
fn workbook_has_codebook_expert_sheets_and_agreement_without_formulas() {
    let store = setup();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("results.xlsx");
    let summary =
        export::write_workbook(&store, &path, &WorkbookOptions::default()).expect("workbook");
    assert_eq!(
        summary.sheets,
        vec!["Codebook", "Ana", "Boris", "Agreement", "Provenance"],
        "codebook, one sheet per expert, agreement, reproducibility record"
    );
    let provenance = sheet_cells(&path, "Provenance");
    assert_eq!(
        provenance.get((2, 1)),
        Some(&Data::String(
            store.audit_head().expect("head").expect("a chain")
        )),
        "the workbook names the audit-chain head of the data it was written from"
    );
    let ana = sheet_cells(&path, "Ana");
    let header: Vec<String> = (0..ana.width())
        .map(|c| ana.get((0, c)).map(|d| d.to_string()).unwrap_or_default())
        .collect();
    let rationale = header
        .iter()
        .position(|h| h == "rationale")
        .expect("rationale column");
    assert_eq!(
        ana.get((1, rationale)),
        Some(&Data::String(format!("'{INJECTION}"))),
        "the rationale is a neutralised string"
    );
    assert_eq!(
        ana.get((1, 4)),
        Some(&Data::Float(4.0)),
        "values are numbers"
    );
    let boris = sheet_cells(&path, "Boris");
    assert_eq!(
        boris.get((1, 4)),
        Some(&Data::Float(-1.0)),
        "a negative value is a number, not text"
    );
    assert_eq!(formulas(&path), 0, "no cell of the workbook is a formula");
    let codebook = sheet_cells(&path, "Codebook");
    assert_eq!(codebook.height(), 8, "header plus seven criteria");
    let anchors = codebook
        .get((1, 7))
        .map(|d| d.to_string())
        .unwrap_or_default();
    assert!(
        anchors.contains("1 = ") && anchors.contains("5 = "),
        "anchors are listed per level: {anchors}"
    );
    let agreement = sheet_cells(&path, "Agreement");
    assert!(
        agreement.height() > 3,
        "the agreement report of the judge against the experts is in the workbook"
    );
}

/// Copy a workbook cell by cell (as values), letting `fill` replace cells of the rating sheets.
pub(crate) fn filled_copy(
    src: &Path,
    dst: &Path,
    fill: impl Fn(&str, u32, u16, &Data) -> Option<Data>,
) {
    let mut wb: Xlsx<_> = calamine::open_workbook(src).expect("sheet opens");
    let mut out = Workbook::new();
    for name in wb.sheet_names() {
        let range = wb.worksheet_range(&name).expect("sheet");
        let ws = out.add_worksheet();
        ws.set_name(&name).expect("name");
        let (r0, c0) = range.start().unwrap_or((0, 0));
        for (r, row) in range.rows().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                let (r, c) = (r0 + r as u32, (c0 as usize + c) as u16);
                let cell = fill(&name, r, c, cell).unwrap_or_else(|| cell.clone());
                match cell {
                    Data::String(s) => {
                        ws.write_string(r, c, s).expect("string");
                    }
                    Data::Float(x) => {
                        ws.write_number(r, c, x).expect("number");
                    }
                    Data::Int(x) => {
                        ws.write_number(r, c, x as f64).expect("number");
                    }
                    _ => {}
                }
            }
        }
    }
    out.save(dst).expect("filled copy saved");
}

fn rating_count(store: &Store) -> i64 {
    store.overview().expect("overview").ratings
}

#[test]
fn fill_in_sheet_round_trip_imports_the_experts_ratings() {
    let mut store = setup();
    let dir = tempfile::tempdir().expect("temp dir");
    let blank = dir.path().join("ana.xlsx");
    let summary = write_rating_sheet(&store, "Ana", &blank).expect("sheet written");
    let items = assignment::expert_items(&store, "Ana").expect("items");
    assert_eq!(summary.rows, items.len(), "one row per assigned item");
    assert_eq!(formulas(&blank), 0, "the sheet holds no formula");
    let sheet = sheet_cells(&blank, "mentalbench");
    assert_eq!(
        sheet.get((1, 4)),
        Some(&Data::Float(4.0)),
        "Ana's existing value is pre-filled"
    );
    let bytes = std::fs::read(&blank).expect("bytes");
    for secret in [
        "Human original",
        "Claude",
        "GPT-4o",
        "gpt-4o-judge",
        "Boris",
    ] {
        assert!(
            !calamine_text(&blank).contains(secret)
                && !String::from_utf8_lossy(&bytes).contains(secret),
            "the rating sheet must not name {secret}"
        );
    }

    // Ana fills in every empty criterion cell with 2, and changes the first item's values to 5.
    let filled = dir.path().join("ana-filled.xlsx");
    filled_copy(&blank, &filled, |sheet, r, c, cell| {
        if sheet != "mentalbench" || r == 0 || !(4..11).contains(&c) {
            return None;
        }
        if r == 1 {
            return Some(Data::Float(5.0));
        }
        matches!(cell, Data::Empty).then_some(Data::Float(2.0))
    });
    let before = rating_count(&store);
    let report = import_rating_sheet(&mut store, &filled).expect("imported");
    assert_eq!(report.rater, "Ana", "the sheet names its expert");
    assert_eq!(report.updated, 7, "the first item's seven values changed");
    assert_eq!(
        report.inserted,
        (items.len() - 1) * 7,
        "every other item got seven new values"
    );
    assert_eq!(
        rating_count(&store) - before,
        ((items.len() - 1) * 7) as i64,
        "the new values are in the study"
    );
    let ana = rater_id(&store, "Ana");
    let crit = criteria(&store)[0];
    let versions = store
        .rating_versions(ana, items[0].response_id, crit)
        .expect("versions");
    assert_eq!(
        versions.iter().map(|v| v.value).collect::<Vec<_>>(),
        vec![Some(5), Some(4)],
        "the sheet's revision keeps the earlier value in the history"
    );
    assert_eq!(
        versions[0].rationale.as_deref(),
        Some(INJECTION),
        "the neutralising quote is removed again on import"
    );
    let again = import_rating_sheet(&mut store, &filled).expect("imported again");
    assert_eq!(
        (again.inserted, again.updated),
        (0, 0),
        "importing the same sheet twice changes nothing"
    );
}

fn calamine_text(path: &Path) -> String {
    let mut wb: Xlsx<_> = calamine::open_workbook(path).expect("opens");
    let mut out = String::new();
    for name in wb.sheet_names() {
        if let Ok(range) = wb.worksheet_range(&name) {
            for row in range.rows() {
                for c in row {
                    out.push_str(&c.to_string());
                    out.push('\t');
                }
            }
        }
    }
    out
}

#[test]
fn bad_cells_are_reported_with_their_location_and_nothing_is_written() {
    let mut store = setup();
    let dir = tempfile::tempdir().expect("temp dir");
    let blank = dir.path().join("ana.xlsx");
    write_rating_sheet(&store, "Ana", &blank).expect("sheet written");
    let bad = dir.path().join("ana-bad.xlsx");
    filled_copy(&blank, &bad, |sheet, r, c, _| {
        if sheet != "mentalbench" {
            return None;
        }
        match (r, c) {
            (2, 4) => Some(Data::Float(6.0)),
            (2, 5) => Some(Data::String("good".into())),
            (3, 6) => Some(Data::Float(3.5)),
            (3, 7) => Some(Data::Float(4.0)),
            _ => None,
        }
    });
    let before = rating_count(&store);
    let err = import_rating_sheet(&mut store, &bad).expect_err("bad cells");
    let export::sheet::SheetError::Rejected(errors) = err else {
        panic!("bad cells must reject the import with located errors");
    };
    assert_eq!(errors.len(), 3, "three bad cells, three errors: {errors:?}");
    let first = &errors[0];
    assert_eq!(
        (
            first.file.as_str(),
            first.sheet.as_deref(),
            first.row,
            first.column.as_deref(),
            first.value.as_deref()
        ),
        (
            "ana-bad.xlsx",
            Some("mentalbench"),
            Some(3),
            Some("guidance"),
            Some("6")
        ),
        "an error names file, sheet, row, column and value"
    );
    assert_eq!(
        errors[1].value.as_deref(),
        Some("good"),
        "text in a value cell is named"
    );
    assert_eq!(
        errors[2].value.as_deref(),
        Some("3.5"),
        "a fraction is named"
    );
    assert_eq!(
        rating_count(&store),
        before,
        "nothing was written, not even the valid 4"
    );
}

#[test]
fn fill_in_sheet_neutralises_contexts_and_keeps_retests_apart() {
    let mut store = memory_study(8, &["Ana", "Boris"]);
    store
        .write(|tx| {
            let src = tx.upsert_source(&concord_core::store::NewSource {
                key: "claude",
                name: "Claude-3.5-Haiku",
                family: None,
                kind: concord_core::store::SourceKind::Llm,
            })?;
            let c = tx.add_conversation(&NewConversation {
                external_id: "zz-plus",
                rubric_id: 1,
                context: "+44 call me",
                language: Some("en"),
                category: None,
            })?;
            tx.add_response(c, src, Some("@here is help"))?;
            Ok::<_, StoreError>(())
        })
        .expect("conversation");
    let mut options = AssignmentOptions::new(2, 8);
    options.retest = 2;
    options.retest_gap = 1;
    assignment::assign(&mut store, &options).expect("assigned");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("ana.xlsx");
    write_rating_sheet(&store, "Ana", &path).expect("written");
    let text = calamine_text(&path);
    assert!(
        !text.contains("\t+44") && !text.contains("\t@here"),
        "no cell starts with + or @"
    );
    let items = assignment::expert_items(&store, "Ana").expect("items");
    assert!(
        items.iter().any(|i| i.conversation == "zz-plus"),
        "with k = 2 of 2 experts Ana has every item, the + conversation included"
    );
    assert!(
        text.contains("'+44 call me") && text.contains("'@here is help"),
        "the context and the answer are neutralised"
    );
    // Fill only the retest rows and check they land in the retest ratings, not the first ones.
    let sheet = sheet_cells(&path, "mentalbench");
    let filled = dir.path().join("ana-retest.xlsx");
    let retest_rows: Vec<u32> = (1..sheet.height() as u32)
        .filter(|r| {
            sheet
                .get((*r as usize, 0))
                .map(|d| d.to_string().contains("|retest|"))
                .unwrap_or(false)
        })
        .collect();
    assert_eq!(
        retest_rows.len(),
        2,
        "both retest items are rows of the sheet"
    );
    filled_copy(&path, &filled, |s, r, c, _| {
        (s == "mentalbench" && retest_rows.contains(&r) && (4..11).contains(&c))
            .then_some(Data::Float(3.0))
    });
    let before = rating_count(&store);
    let report = import_rating_sheet(&mut store, &filled).expect("imported");
    assert_eq!(report.inserted, 14, "two retest items × seven criteria");
    assert_eq!(
        rating_count(&store),
        before,
        "retest values never overwrite the first ratings"
    );
    let progress = assignment::progress(&store).expect("progress");
    let ana = progress
        .experts
        .iter()
        .find(|e| e.name == "Ana")
        .expect("Ana");
    assert_eq!(ana.completed, 2, "the two retest items count as completed");
    assert!(
        items
            .iter()
            .filter(|i| i.purpose == Purpose::Retest)
            .count()
            == 2,
        "two retest items assigned"
    );
}
