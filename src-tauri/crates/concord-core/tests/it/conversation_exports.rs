//! Exports of a study of conversations: the long and wide CSV carry `turn` and `scope` when the
//! study holds transcripts or a session rubric (rows in the order conversation, turn, source),
//! and a study of single-turn conversations alone exports without them (the upgrade fixture test
//! of the command line compares such a study's exports byte for byte with the release before);
//! the results workbook's expert sheets carry them too; the fill-in sheet gives each item its
//! history as `[turn] Role: text` lines in one cell (formula starts defused, a history too long
//! for a cell keeps its latest turns) and reads back as before.

use crate::lead_export::{filled_copy, sheet_cells};
use calamine::Data;
use concord_core::outputs::export::csv::{CONVERSATION_HEADER, LONG_HEADER};
use concord_core::outputs::export::sheet::{history_cell, HISTORY_CELL_CHARS};
use concord_core::outputs::export::{
    import_rating_sheet, write_long_csv, write_rating_sheet, write_wide_csv, write_workbook,
    CsvOptions, WorkbookOptions,
};
use concord_core::store::{Role, Store, TurnRecord};
use concord_core::workflow::assignment::{self, AssignmentOptions};
use concord_testsupport::lead_study::{clock, memory_study};
use concord_testsupport::transcript_study::{write_transcripts, TranscriptDesign};
use std::collections::HashMap;

fn csv_rows(bytes: Vec<u8>) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let header = reader
        .headers()
        .expect("a header")
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.expect("a row").iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

fn transcript_store(
    session: bool,
) -> (
    Store,
    concord_testsupport::transcript_study::TranscriptValues,
) {
    let mut store = Store::in_memory(clock()).expect("a study");
    let values = write_transcripts(
        &mut store,
        &TranscriptDesign {
            session,
            ..TranscriptDesign::correlated(4, 13)
        },
    );
    (store, values)
}

#[test]
fn the_long_csv_of_transcripts_carries_turn_and_scope_in_conversation_order() {
    let (store, values) = transcript_store(true);
    let mut out = Vec::new();
    write_long_csv(&store, &mut out, CsvOptions::default()).expect("exported");
    let (header, rows) = csv_rows(out);
    let mut expected: Vec<String> = LONG_HEADER.iter().map(|s| s.to_string()).collect();
    expected.extend(CONVERSATION_HEADER.iter().map(|s| s.to_string()));
    assert_eq!(
        header, expected,
        "turn and scope follow the fourteen columns of the long CSV"
    );
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (conv, resp, turn, scope) = (
        at("conversation_id"),
        at("response_id"),
        at("turn"),
        at("scope"),
    );
    let turn_of: HashMap<String, Option<i64>> = values
        .items
        .iter()
        .map(|i| (i.response_id.to_string(), i.turn))
        .collect();
    assert_eq!(rows.len(), values.values.len(), "one row per value written");
    for row in &rows {
        let written = turn_of[&row[resp]];
        assert_eq!(
            row[turn],
            written.map_or(String::new(), |t| t.to_string()),
            "a reply's row names its turn, a session item's none: {row:?}"
        );
        assert_eq!(
            row[scope],
            if written.is_some() {
                "reply"
            } else {
                "session"
            },
            "the rubric's scope: {row:?}"
        );
    }
    let order: Vec<(String, i64)> = rows
        .iter()
        .filter(|r| r[scope] == "reply")
        .map(|r| (r[conv].clone(), r[turn].parse().unwrap()))
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(
        order, sorted,
        "rows come in the order of conversation, then turn"
    );
}

#[test]
fn exports_without_transcripts_have_no_conversation_columns() {
    let store = memory_study(3, &["Ana"]);
    let mut long = Vec::new();
    write_long_csv(&store, &mut long, CsvOptions::default()).expect("exported");
    assert_eq!(
        csv_rows(long).0,
        LONG_HEADER.to_vec(),
        "a single-turn study's long CSV has exactly the columns it always had"
    );
    let mut wide = Vec::new();
    write_wide_csv(&store, &mut wide, CsvOptions::default()).expect("exported");
    let (header, _) = csv_rows(wide);
    assert!(
        !header.iter().any(|h| h == "turn" || h == "scope"),
        "nor its wide CSV: {header:?}"
    );

    let (store, _) = transcript_store(false);
    let mut wide = Vec::new();
    write_wide_csv(&store, &mut wide, CsvOptions::default()).expect("exported");
    let (header, rows) = csv_rows(wide);
    assert_eq!(
        header[..6],
        [
            "conversation_id",
            "response_id",
            "source",
            "turn",
            "scope",
            "rater"
        ],
        "a transcript study's wide CSV names the turn beside the source"
    );
    assert!(
        rows.iter()
            .all(|r| r[4] == "reply" && r[3].parse::<i64>().is_ok()),
        "every reply row has its turn number"
    );
}

#[test]
fn the_workbook_expert_sheets_carry_turn_and_scope() {
    let (store, _) = transcript_store(true);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.xlsx");
    write_workbook(&store, &path, &WorkbookOptions::default()).expect("the workbook");
    let sheet = sheet_cells(&path, "Expert A");
    let header: Vec<String> = (0..6)
        .map(|c| sheet.get((0, c)).map(|d| d.to_string()).unwrap_or_default())
        .collect();
    assert_eq!(
        header,
        [
            "conversation_id",
            "response_id",
            "source",
            "turn",
            "scope",
            "occasion"
        ],
        "an expert sheet names each item's turn and scope"
    );
    let turns: Vec<Data> = (1..sheet.height())
        .filter_map(|r| sheet.get((r, 3)).cloned())
        .collect();
    assert!(
        turns.contains(&Data::Float(2.0)) && turns.contains(&Data::Float(8.0)),
        "turn numbers are numbers: {turns:?}"
    );
    let agreement = sheet_cells(&path, "Agreement");
    let headers: Vec<String> = (0..agreement.width())
        .filter_map(|c| agreement.get((1, c)).map(|d| d.to_string()))
        .collect();
    assert!(
        headers.iter().any(|h| h == "n_clusters"),
        "the agreement block names every key its rows have, the clusters of item rows included: {headers:?}"
    );
    let titles: Vec<String> = (0..agreement.height())
        .filter_map(|r| agreement.get((r, 0)).map(|d| d.to_string()))
        .collect();
    let at = titles
        .iter()
        .position(|t| t == "mentalbench — ICC by turn")
        .expect("a reply rubric over transcripts has its figures by turn in the workbook");
    let turns: Vec<String> = titles[at + 2..]
        .iter()
        .take_while(|t| !t.is_empty())
        .cloned()
        .collect();
    assert!(
        turns.contains(&"2".to_string()) && turns.contains(&"8".to_string()),
        "one block row per turn and judge × criterion, the turn first: {turns:?}"
    );
}

fn turn(position: i64, role: Role, text: &str) -> TurnRecord {
    TurnRecord {
        position,
        role,
        text: text.to_string(),
        source_id: None,
        response_id: None,
    }
}

#[test]
fn a_history_cell_is_readable_and_fits_a_cell() {
    let cell = history_cell(&[
        turn(1, Role::System, "Consent recorded."),
        turn(2, Role::User, "=HYPERLINK(\"x\")"),
        turn(3, Role::Assistant, "I hear you."),
    ]);
    assert_eq!(
        cell, "[1] System note: Consent recorded.\n[2] User: =HYPERLINK(\"x\")\n[3] Assistant: I hear you.",
        "turn numbers and roles, one turn per line, in order"
    );
    let long = "word ".repeat(3000);
    let turns: Vec<TurnRecord> = (1..=40)
        .map(|p| {
            turn(
                p,
                if p % 2 == 1 {
                    Role::User
                } else {
                    Role::Assistant
                },
                &long,
            )
        })
        .collect();
    let cell = history_cell(&turns);
    assert!(
        cell.chars().count() <= HISTORY_CELL_CHARS,
        "a 40-turn history of 15,000-character turns fits one spreadsheet cell"
    );
    assert!(
        cell.starts_with("[… ") && cell.ends_with(&format!("[40] Assistant: {long}")),
        "it keeps the latest turns, nearest the item, and says how many came before"
    );
}

#[test]
fn the_fill_in_sheet_shows_each_items_history_and_reads_back() {
    let mut store = Store::in_memory(clock()).expect("a study");
    write_transcripts(
        &mut store,
        &TranscriptDesign {
            expert_conversations: 0,
            ..TranscriptDesign::correlated(3, 17)
        },
    );
    assignment::assign(
        &mut store,
        &AssignmentOptions {
            rubric: Some("mentalbench".into()),
            ..AssignmentOptions::new(2, 5)
        },
    )
    .expect("assigned");
    let dir = tempfile::tempdir().unwrap();
    let blank = dir.path().join("expert-a.xlsx");
    let summary = write_rating_sheet(&store, "Expert A", &blank).expect("the sheet");
    assert_eq!(
        summary.rows,
        3 * 6,
        "every reply of the three conversations"
    );
    let sheet = sheet_cells(&blank, "mentalbench");
    assert_eq!(
        sheet.get((0, 2)).map(|d| d.to_string()).as_deref(),
        Some("history"),
        "a rubric of conversations has a history column"
    );
    let items = assignment::expert_items(&store, "Expert A").expect("items");
    for (row, item) in items.iter().enumerate() {
        let history = sheet
            .get((row + 1, 2))
            .map(|d| d.to_string())
            .unwrap_or_default();
        let place = store.item_place(item.response_id).expect("place");
        let turn = place.turn.expect("a reply's turn");
        let lines: Vec<&str> = history.lines().collect();
        assert_eq!(
            lines.len() as i64,
            turn - 1,
            "the reply at turn {turn} is shown after every turn before it: {history}"
        );
        assert!(
            lines[0].starts_with("[1] User: ")
                && (turn < 3 || lines[1].starts_with("[2] Assistant: ")),
            "each line gives the turn number and the role: {history}"
        );
        assert!(
            !history.contains("helperbot") && !history.contains("candidate-"),
            "no source is named in a history"
        );
    }
    let filled = dir.path().join("expert-a-filled.xlsx");
    filled_copy(&blank, &filled, |sheet, r, c, _| {
        (sheet == "mentalbench" && r > 0 && (4..11).contains(&c)).then_some(Data::Float(3.0))
    });
    let report = import_rating_sheet(&mut store, &filled).expect("the filled sheet reads back");
    assert_eq!(
        (report.rows, report.inserted),
        (3 * 6, 3 * 6 * 7),
        "every item's seven values are written, as for a single-turn sheet"
    );
}

#[test]
fn a_session_item_sheet_shows_the_whole_conversation_without_candidates() {
    let mut store = Store::in_memory(clock()).expect("a study");
    write_transcripts(
        &mut store,
        &TranscriptDesign {
            expert_conversations: 0,
            session: true,
            ..TranscriptDesign::correlated(2, 19)
        },
    );
    assignment::assign(
        &mut store,
        &AssignmentOptions {
            rubric: Some("session-quality".into()),
            without_text: Some("session items stand for whole conversations".into()),
            ..AssignmentOptions::new(2, 5)
        },
    )
    .expect("assigned");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.xlsx");
    write_rating_sheet(&store, "Expert A", &path)
        .expect("a session item has no answer of its own, and that is no missing text");
    let sheet = sheet_cells(&path, "session-quality");
    let histories: Vec<String> = (1..sheet.height())
        .map(|r| sheet.get((r, 2)).map(|d| d.to_string()).unwrap_or_default())
        .collect();
    assert!(
        histories
            .iter()
            .all(|h| h.lines().count() >= 7 && !h.contains("Candidate candidate-")),
        "the whole conversation but its candidates: {histories:?}"
    );
    assert!(
        histories.iter().all(|h| h.starts_with("[1] User: ")),
        "a history cell starts with its first turn's number, so no dataset text can start it as a formula"
    );
}
