//! Spans in the fill-in rating sheet: a rubric that declares codes gets a spans sheet (item,
//! quote, code, severity; the rubric's codes listed beside; no source named), and a returned sheet
//! puts each quote where it stands in its item's answer — exactly, then whitespace-insensitively,
//! in characters across Chinese and an emoji — as the expert's span with origin `sheet`, sealed by
//! the audit chain; a quote found neither way is kept unlocated and reported with its row, never
//! guessed; the same sheet again adds nothing; and a bad row (unknown code, unknown severity, an
//! item the expert was not given, an empty quote) refuses the whole sheet naming file, sheet, row
//! and column.

use calamine::{Data, Reader, Xlsx};
use concord_core::outputs::export::sheet::SheetError;
use concord_core::outputs::export::{import_rating_sheet, write_rating_sheet};
use concord_core::store::{NewConversation, NewSource, SourceKind, Store, StoreError};
use concord_core::workflow::assignment::{self, AssignmentOptions};
use concord_testsupport::lead_study::{memory_study, rater_id};
use rust_xlsxwriter::Workbook;
use std::path::Path;

const REPLY_ZH: &str = "听起来你很难受 😢。你可以拨打心理援助热线 12356。你有没有想过伤害自己？";
const REPLY_EN: &str = "Everything will be fine.  You should just   cheer up. Try a walk outside.";
const SPANS: &str = "mentalbench spans";

/// A study of two conversations (a Chinese reply with an emoji, an English one with runs of
/// spaces) that both experts rate.
fn study() -> Store {
    let mut store = memory_study(0, &["Ana", "Boris"]);
    store
        .write(|tx| {
            let bot = tx.upsert_source(&NewSource {
                key: "secret-bot",
                name: "Secret Bot",
                family: None,
                kind: SourceKind::Llm,
            })?;
            for (ext, context, reply) in [
                ("c-zh", "我最近很难过", REPLY_ZH),
                ("c-en", "I feel awful", REPLY_EN),
            ] {
                let c = tx.add_conversation(&NewConversation {
                    external_id: ext,
                    rubric_id: 1,
                    context,
                    language: None,
                    category: None,
                })?;
                tx.add_response(c, bot, Some(reply))?;
            }
            Ok::<_, StoreError>(())
        })
        .expect("the conversations are added");
    assignment::assign(&mut store, &AssignmentOptions::new(2, 7)).expect("assigned");
    store
}

/// The item number of Ana's sheet whose answer is `reply`.
fn item_of(store: &Store, reply: &str) -> i64 {
    let items = assignment::expert_items(store, "Ana").expect("items");
    let item = items
        .iter()
        .find(|i| store_text(store, i.response_id) == reply)
        .expect("the reply is Ana's");
    item.position + 1
}

fn store_text(store: &Store, response: i64) -> String {
    store
        .text_items(1)
        .expect("items")
        .into_iter()
        .find(|i| i.response_id == response)
        .and_then(|i| i.text)
        .unwrap_or_default()
}

fn cells(path: &Path, sheet: &str) -> calamine::Range<Data> {
    let mut wb: Xlsx<_> = calamine::open_workbook(path).expect("the sheet opens");
    wb.worksheet_range(sheet).expect("the sheet is there")
}

/// Copy a workbook cell by cell as values, then add `rows` below the last row of `sheet`.
fn with_rows(src: &Path, dst: &Path, sheet: &str, rows: &[[&str; 4]]) {
    let mut wb: Xlsx<_> = calamine::open_workbook(src).expect("the sheet opens");
    let mut out = Workbook::new();
    for name in wb.sheet_names() {
        let range = wb.worksheet_range(&name).expect("sheet");
        let ws = out.add_worksheet();
        ws.set_name(&name).expect("name");
        let (r0, c0) = range.start().unwrap_or((0, 0));
        let mut last = 0u32;
        for (r, row) in range.rows().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                let (r, c) = (r0 + r as u32, (c0 as usize + c) as u16);
                match cell {
                    Data::String(s) => {
                        ws.write_string(r, c, s).expect("string");
                    }
                    Data::Float(x) => {
                        ws.write_number(r, c, *x).expect("number");
                    }
                    Data::Int(x) => {
                        ws.write_number(r, c, *x as f64).expect("number");
                    }
                    _ => continue,
                }
                if c < 4 {
                    last = last.max(r);
                }
            }
        }
        if name == sheet {
            for (k, row) in rows.iter().enumerate() {
                let r = last + 1 + k as u32;
                for (c, value) in row.iter().enumerate() {
                    if value.is_empty() {
                        continue;
                    }
                    match (c, value.parse::<f64>()) {
                        (0, Ok(x)) => ws.write_number(r, c as u16, x),
                        _ => ws.write_string(r, c as u16, *value),
                    }
                    .expect("cell");
                }
            }
        }
    }
    out.save(dst).expect("the filled copy is saved");
}

/// `[start, end)` in characters of `quote` in `text`.
fn chars_of(text: &str, quote: &str) -> (i64, i64) {
    let byte = text.find(quote).expect("the quote is in the text");
    let start = text[..byte].chars().count() as i64;
    (start, start + quote.chars().count() as i64)
}

#[test]
fn a_sheet_carries_spans_and_reads_them_back_located_or_kept_unlocated() {
    let mut store = study();
    let dir = tempfile::tempdir().expect("temporary folder");
    let blank = dir.path().join("ana.xlsx");
    let summary = write_rating_sheet(&store, "Ana", &blank).expect("the sheet is written");
    assert!(
        summary.sheets.iter().any(|s| s == SPANS),
        "a rubric with codes gets a spans sheet: {:?}",
        summary.sheets
    );
    let sheet = cells(&blank, SPANS);
    let header: Vec<String> = (0..4)
        .map(|c| sheet.get((0, c)).map(|d| d.to_string()).unwrap_or_default())
        .collect();
    assert_eq!(
        header,
        ["item", "quote", "code", "severity"],
        "the spans are listed in these columns"
    );
    let listed: Vec<String> = (1..sheet.height())
        .filter_map(|r| sheet.get((r, 5)).map(|d| d.to_string()))
        .filter(|s| !s.is_empty())
        .collect();
    let codes: Vec<String> = concord_core::rubric::builtin::mentalbench()
        .codes
        .iter()
        .map(|c| c.key.clone())
        .collect();
    assert_eq!(
        listed, codes,
        "the rubric's codes are listed for the expert"
    );
    let everything: String = sheet.rows().flatten().map(|d| d.to_string()).collect();
    assert!(
        !everything.contains("secret-bot") && !everything.contains("Secret Bot"),
        "no source is named in the spans sheet"
    );

    let (zh, en) = (item_of(&store, REPLY_ZH), item_of(&store, REPLY_EN));
    let (zh, en) = (zh.to_string(), en.to_string());
    let filled = dir.path().join("ana-filled.xlsx");
    with_rows(
        &blank,
        &filled,
        SPANS,
        &[
            [&zh, "拨打心理援助热线 12356", "actionable_guidance", ""],
            [&zh, "难受 😢", "validating_statement", ""],
            [
                &en,
                "You should just cheer up.",
                "judgemental_phrasing",
                "MAJOR",
            ],
            [&en, "words the reply never said", "generic_reassurance", ""],
        ],
    );
    let report = import_rating_sheet(&mut store, &filled).expect("the sheet reads back");
    assert_eq!(report.spans_added, 4, "every row is a span of Ana's");
    assert_eq!(
        report.spans_unlocated.len(),
        1,
        "the quote the answer never says is reported: {:?}",
        report.spans_unlocated
    );
    let unlocated = &report.spans_unlocated[0];
    assert_eq!(
        (
            unlocated.sheet.as_str(),
            unlocated.row,
            unlocated.code.as_str()
        ),
        (SPANS, 5, "generic_reassurance"),
        "with its sheet, row (as the spreadsheet numbers it) and code"
    );

    let ana = rater_id(&store, "Ana");
    let spans: Vec<_> = store
        .spans_of_rubric(1)
        .expect("spans")
        .into_iter()
        .filter(|s| s.span.rater_id == ana)
        .collect();
    let find = |code: &str| {
        spans
            .iter()
            .find(|s| s.span.code == code)
            .unwrap_or_else(|| panic!("a span of {code}"))
    };
    assert_eq!(
        find("actionable_guidance").span.range,
        Some(chars_of(REPLY_ZH, "拨打心理援助热线 12356")),
        "the quote is placed exactly, in characters"
    );
    assert_eq!(
        find("validating_statement").span.range,
        Some(chars_of(REPLY_ZH, "难受 😢")),
        "an emoji counts as one character"
    );
    let judgemental = find("judgemental_phrasing");
    assert_eq!(
        judgemental.span.range,
        Some(chars_of(REPLY_EN, "You should just   cheer up.")),
        "a quote with its spaces made single is found whitespace-insensitively"
    );
    assert_eq!(
        judgemental.span.severity.as_deref(),
        Some("major"),
        "a severity level is kept in the code's spelling"
    );
    let kept = find("generic_reassurance");
    assert_eq!(kept.span.range, None, "an unfound quote is not placed");
    assert_eq!(
        kept.span.quote.as_deref(),
        Some("words the reply never said"),
        "it is kept as written"
    );
    assert!(
        spans.iter().all(|s| s.span.origin == "sheet"),
        "every span says it came from a sheet"
    );
    let check = store.verify_audit_chain().expect("the chain reads");
    assert!(
        check.broken.is_none(),
        "the sheet's spans are sealed: {:?}",
        check.broken
    );

    // The sheet written again shows Ana her spans; returned as it is, it adds nothing.
    let again = dir.path().join("ana-again.xlsx");
    write_rating_sheet(&store, "Ana", &again).expect("the sheet is written again");
    let sheet = cells(&again, SPANS);
    let quotes: Vec<String> = (1..sheet.height())
        .filter_map(|r| sheet.get((r, 1)).map(|d| d.to_string()))
        .filter(|s| !s.is_empty())
        .collect();
    assert_eq!(
        quotes.len(),
        4,
        "Ana's four spans are on her sheet: {quotes:?}"
    );
    assert!(
        quotes.iter().any(|q| q == "难受 😢"),
        "a located span shows the characters it covers"
    );
    let boris = dir.path().join("boris.xlsx");
    write_rating_sheet(&store, "Boris", &boris).expect("Boris's sheet");
    let theirs: String = cells(&boris, SPANS)
        .rows()
        .flatten()
        .map(|d| d.to_string())
        .collect();
    assert!(
        !theirs.contains("难受"),
        "another expert's sheet does not show Ana's spans"
    );
    let report = import_rating_sheet(&mut store, &again).expect("the same spans read back");
    assert_eq!(
        (report.spans_added, report.spans_unchanged),
        (0, 4),
        "spans already there are left as they are"
    );
}

fn refused(store: &mut Store, path: &Path) -> Vec<concord_core::outputs::export::CellError> {
    match import_rating_sheet(store, path) {
        Err(SheetError::Rejected(errors)) => errors,
        other => panic!("the sheet is refused with its bad cells: {other:?}"),
    }
}

#[test]
fn a_bad_span_row_refuses_the_whole_sheet_naming_file_row_and_column() {
    let mut store = study();
    let dir = tempfile::tempdir().expect("temporary folder");
    let blank = dir.path().join("ana.xlsx");
    write_rating_sheet(&store, "Ana", &blank).expect("the sheet is written");
    let zh = item_of(&store, REPLY_ZH).to_string();
    let cases: [([&str; 4], &str, &str); 5] = [
        (
            [&zh, "难受", "no_such_code", ""],
            "code",
            "not a code of rubric",
        ),
        (
            [&zh, "难受", "judgemental_phrasing", "extreme"],
            "severity",
            "not a severity level",
        ),
        (
            [&zh, "难受", "validating_statement", "minor"],
            "severity",
            "takes no severity",
        ),
        (
            ["99", "难受", "validating_statement", ""],
            "item",
            "not an item",
        ),
        (
            [&zh, "", "validating_statement", ""],
            "quote",
            "quote is empty",
        ),
    ];
    for (row, column, says) in cases {
        let filled = dir.path().join("bad.xlsx");
        let _ = std::fs::remove_file(&filled);
        with_rows(
            &blank,
            &filled,
            SPANS,
            &[
                [&zh, "拨打心理援助热线 12356", "actionable_guidance", ""],
                row,
            ],
        );
        let errors = refused(&mut store, &filled);
        assert_eq!(errors.len(), 1, "one bad cell in {row:?}: {errors:?}");
        let e = &errors[0];
        assert_eq!(
            (
                e.file.as_str(),
                e.sheet.as_deref(),
                e.row,
                e.column.as_deref()
            ),
            ("bad.xlsx", Some(SPANS), Some(3), Some(column)),
            "the refusal names the file, sheet, row and column of {row:?}"
        );
        assert!(
            e.message.contains(says),
            "the refusal says what is wrong with {row:?}: {}",
            e.message
        );
        assert!(
            store.spans_of_rubric(1).expect("spans").is_empty(),
            "nothing is written, not even the good row before it"
        );
    }
}
