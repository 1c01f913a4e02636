//! Hostile and malformed input files, one test per class: workbooks that declare sizes meant to
//! make a reader allocate gigabytes, CSV whose quoting or row shape would silently change what is
//! read, text encodings, duplicate headers and keys, alias collisions, whitespace-only text, empty
//! cells, findings without their place, and judge replies that cannot be read. Every refused file
//! names its place and leaves the study exactly as it was.

use concord_testsupport::release_files;

use concord_core::files::bounds::ReadLimits;
use concord_core::files::table::read_table_within;
use concord_core::files::table::FileFormat;
use concord_core::files::Issue;
use concord_core::intake::long::import_items;
use concord_core::intake::long::import_ratings;
use concord_core::intake::long::ItemColumns;
use concord_core::intake::long::RatingColumns;
use concord_core::intake::mentalalign::import_files;
use concord_core::intake::psycrisis;
use concord_core::intake::psycrisis::CrisisFile;
use concord_core::intake::ImportError;
use concord_core::intake::ImportOptions;
use concord_core::intake::ImportReport;
use concord_core::store::Store;
use release_files::*;
use std::io::Write;
use std::path::Path;

/// The parts of a minimal workbook around `sheet` (the XML of `xl/worksheets/sheet1.xml`) and
/// optional shared strings.
pub fn workbook_bytes(sheet: &str, shared_strings: Option<&str>) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut part = |name: &str, text: &str| {
        zip.start_file(name, options).expect("zip part");
        zip.write_all(text.as_bytes()).expect("zip write");
    };
    part(
        "[Content_Types].xml",
        r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>"#,
    );
    part(
        "_rels/.rels",
        r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
    );
    part(
        "xl/workbook.xml",
        r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#,
    );
    part(
        "xl/_rels/workbook.xml.rels",
        r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>"#,
    );
    part("xl/worksheets/sheet1.xml", sheet);
    if let Some(strings) = shared_strings {
        part("xl/sharedStrings.xml", strings);
    }
    zip.finish().expect("zip finished").into_inner()
}

const SHEET_HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">"#;

/// A sheet of `rows` (cell XML per row) with an optional `<dimension>`.
fn sheet_xml(dimension: Option<&str>, rows: &str) -> String {
    let dimension = dimension
        .map(|d| format!(r#"<dimension ref="{d}"/>"#))
        .unwrap_or_default();
    format!("{SHEET_HEAD}{dimension}<sheetData>{rows}</sheetData></worksheet>")
}

/// A valid header row and one data row of inline strings.
const SMALL_ROWS: &str = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>item</t></is></c><c r="B1" t="inlineStr"><is><t>rater</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>x</t></is></c><c r="B2" t="inlineStr"><is><t>y</t></is></c></row>"#;

/// Workbooks whose metadata lies over a few real cells: a dimension of the whole grid, and a
/// shared-strings part declaring far more texts than it holds (calamine would reserve room for
/// all of them). The real cells are a header and one row.
fn lying_workbooks() -> Vec<(&'static str, Vec<u8>)> {
    let one_string = |count: &str| {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="{count}" uniqueCount="{count}"><si><t>rater</t></si></sst>"#
        )
    };
    let shared_rows = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>item</t></is></c><c r="B1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>x</t></is></c><c r="B2" t="inlineStr"><is><t>y</t></is></c></row>"#;
    vec![
        (
            "a dimension of the whole grid",
            workbook_bytes(&sheet_xml(Some("A1:XFD1048576"), SMALL_ROWS), None),
        ),
        (
            "a shared-string count of 999,999,999,999",
            workbook_bytes(
                &sheet_xml(None, shared_rows),
                Some(&one_string("999999999999")),
            ),
        ),
        (
            "a shared-string count of 4,000,000,000 and a whole-grid dimension",
            workbook_bytes(
                &sheet_xml(Some("A1:XFD1048576"), shared_rows),
                Some(&one_string("4000000000")),
            ),
        ),
    ]
}

/// The bombs of the hostile corpus (cells really placed far out) plus a shared-formula index,
/// each a few kilobytes.
pub fn bombs() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    vec![
        (
            "far-away cell",
            workbook_bytes(
                &sheet_xml(
                    None,
                    &format!(
                        r#"{SMALL_ROWS}<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>"#
                    ),
                ),
                None,
            ),
            "too_many_cells",
        ),
        (
            "far-away cell under a lying dimension",
            workbook_bytes(
                &sheet_xml(
                    Some("A1:B2"),
                    &format!(r#"{SMALL_ROWS}<row r="900000"><c r="ZZ900000"><v>1</v></c></row>"#),
                ),
                None,
            ),
            "too_many_cells",
        ),
        (
            "shared-formula index",
            workbook_bytes(
                &sheet_xml(
                    None,
                    &format!(
                        r#"{SMALL_ROWS}<row r="3"><c r="A3"><f t="shared" ref="A3:A4" si="4000000000">1+1</f><v>2</v></c></row>"#
                    ),
                ),
                None,
            ),
            "too_many_cells",
        ),
        (
            "cell beyond Excel's last row",
            workbook_bytes(
                &sheet_xml(
                    None,
                    &format!(
                        r#"{SMALL_ROWS}<row r="99999999"><c r="A99999999"><v>1</v></c></row>"#
                    ),
                ),
                None,
            ),
            "too_many_rows",
        ),
    ]
}

/// A study with long-form items imported (`b1-0`, `b2-0`, …).
fn seeded() -> Store {
    let mut study = memory_study();
    import_items(
        &mut study,
        &fixture("bom-crlf").join("items.csv"),
        "mentalbench",
        &ItemColumns::default(),
        None,
        &ImportOptions::default(),
    )
    .expect("valid items with BOM and CRLF");
    study
}

/// `import` must fail on the seeded study with an issue of `code` at `file` (and `row`, when
/// given), and change nothing.
fn refused(
    code: &str,
    file: &str,
    row: Option<usize>,
    import: impl FnOnce(&mut Store) -> Result<ImportReport, ImportError>,
) -> Issue {
    let mut study = seeded();
    let before = fingerprint(&study);
    let err = import(&mut study).expect_err("the hostile input must be refused");
    let hit = err
        .issues()
        .iter()
        .find(|i| i.code == code)
        .cloned()
        .unwrap_or_else(|| panic!("expected a {code} problem, got: {err}"));
    assert_eq!(hit.at.file, file, "the problem names the file: {hit}");
    if row.is_some() {
        assert_eq!(hit.at.row, row, "the problem names the row: {hit}");
    }
    assert_eq!(
        fingerprint(&study),
        before,
        "a refused import must leave the study exactly as it was"
    );
    hit
}

fn items(study: &mut Store, path: &Path) -> Result<ImportReport, ImportError> {
    import_items(
        study,
        path,
        "mentalbench",
        &ItemColumns::default(),
        None,
        &ImportOptions::default(),
    )
}

fn ratings(study: &mut Store, path: &Path) -> Result<ImportReport, ImportError> {
    import_ratings(
        study,
        path,
        "mentalbench",
        &RatingColumns::default(),
        None,
        &ImportOptions::default(),
    )
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write the input file");
    path
}

#[test]
fn workbook_bombs_are_refused_before_the_reader_allocates() {
    let dir = temp_dir();
    for (what, bytes, code) in bombs() {
        assert!(
            bytes.len() < 4096,
            "the {what} bomb is a small file ({} bytes)",
            bytes.len()
        );
        let path = write(dir.path(), "ratings.xlsx", &bytes);
        let issue = refused(code, "ratings.xlsx", None, |s| ratings(s, &path));
        assert!(
            issue.message.contains("CONCORD_MAX_"),
            "the {what} message says which limit and how to raise it: {issue}"
        );
        // The fill-in sheet reader and the MentalAlign importer take the same guard.
        let mut study = memory_study();
        let err = concord_core::outputs::export::import_rating_sheet(&mut study, &path)
            .expect_err("a bomb is no rating sheet");
        assert!(
            err.to_string().contains("CONCORD_MAX_"),
            "the sheet reader refuses the {what} bomb by its limit: {err}"
        );
        let human = write(dir.path(), "Human_judge.xlsx", &bytes);
        let err = import_files(&mut study, &[human], &ImportOptions::default())
            .expect_err("a bomb is no release file");
        assert!(
            err.issues().iter().any(|i| i.code == code),
            "the MentalAlign importer refuses the {what} bomb: {err}"
        );
    }
}

#[test]
fn a_workbook_whose_metadata_lies_reads_its_real_cells() {
    for (what, bytes) in lying_workbooks() {
        let t = read_table_within(
            "lying.xlsx",
            &bytes,
            FileFormat::Xlsx,
            None,
            &ReadLimits::default(),
        )
        .unwrap_or_else(|e| {
            panic!("{what}: declared sizes are not cells, the real cells fit the limits: {e:?}")
        });
        assert_eq!(
            t.headers,
            vec!["item", "rater"],
            "{what}: the header is read from the real cells (the shared string included)"
        );
        assert_eq!(t.rows.len(), 1, "{what}: the one real data row is read");
    }
}

#[test]
fn a_far_away_cell_is_refused_at_its_row() {
    let bytes = workbook_bytes(
        &sheet_xml(
            Some("A1:B2"),
            &format!(r#"{SMALL_ROWS}<row r="900000"><c r="ZZ900000"><v>1</v></c></row>"#),
        ),
        None,
    );
    let err = read_table_within(
        "far.xlsx",
        &bytes,
        FileFormat::Xlsx,
        None,
        &ReadLimits::default(),
    )
    .expect_err("a real cell placed far out spans more cells than the limit");
    let issue = err
        .iter()
        .find(|i| i.code == "too_many_cells")
        .unwrap_or_else(|| panic!("the cell limit is what refuses it: {err:?}"));
    assert_eq!(
        issue.at.row,
        Some(900_000),
        "the refusal names the row of the far-away cell: {issue}"
    );
}

#[test]
fn a_small_valid_workbook_built_by_hand_still_reads() {
    let t = read_table_within(
        "ok.xlsx",
        &workbook_bytes(&sheet_xml(Some("A1:B2"), SMALL_ROWS), None),
        FileFormat::Xlsx,
        None,
        &ReadLimits::default(),
    )
    .expect("the guard lets a normal workbook through");
    assert_eq!(t.headers, vec!["item", "rater"], "headers read");
    assert_eq!(t.rows.len(), 1, "one data row");
}

#[test]
fn limits_per_cell_row_sheet_and_file_are_each_named() {
    let tight = ReadLimits {
        file_bytes: 4096,
        cell_bytes: 16,
        columns: 3,
        rows: 2,
        cells: 8,
        unpacked_bytes: 4096,
    };
    let cases: [(&str, Vec<u8>, FileFormat, &str); 7] = [
        (
            "cell",
            b"a,b\nthis cell is far too long,x\n".to_vec(),
            FileFormat::Csv,
            "CONCORD_MAX_CELL_MB",
        ),
        (
            "row",
            b"a,b,c,d\n1,2,3,4\n".to_vec(),
            FileFormat::Csv,
            "CONCORD_MAX_COLUMNS",
        ),
        (
            "rows",
            b"a\n1\n2\n3\n".to_vec(),
            FileFormat::Csv,
            "CONCORD_MAX_ROWS",
        ),
        (
            "cells",
            b"a,b\n1,2\n3,4\n5,6\n7,8\n".to_vec(),
            FileFormat::Csv,
            "CONCORD_MAX_",
        ),
        (
            "file",
            vec![b'a'; 5000],
            FileFormat::Csv,
            "CONCORD_MAX_FILE_MB",
        ),
        (
            "jsonl keys",
            b"{\"a\":1,\"b\":2,\"c\":3,\"d\":4}\n".to_vec(),
            FileFormat::Jsonl,
            "CONCORD_MAX_COLUMNS",
        ),
        (
            "unpacked",
            workbook_bytes(
                &sheet_xml(None, &format!("{SMALL_ROWS}<!--{}-->", "x".repeat(5000))),
                None,
            ),
            FileFormat::Xlsx,
            "CONCORD_MAX_UNPACKED_MB",
        ),
    ];
    for (what, bytes, format, variable) in cases {
        let issues = read_table_within("f", &bytes, format, None, &tight)
            .expect_err("over the limit must be refused");
        assert!(
            issues.iter().any(|i| i.message.contains(variable)),
            "the {what} limit names {variable}: {issues:?}"
        );
    }
}

#[test]
fn an_unclosed_csv_quote_is_an_error_not_swallowed_rows() {
    let dir = temp_dir();
    let path = write(
        dir.path(),
        "items.csv",
        b"conversation_id,context,response_id,source,text\nq1,\"I am sad,q1-0,original,Hi\nq2,ok,q2-0,original,Hello\n",
    );
    let issue = refused("unclosed_quote", "items.csv", Some(2), |s| items(s, &path));
    assert!(
        issue.message.contains("never closed"),
        "the message explains the quote: {issue}"
    );
}

#[test]
fn a_short_csv_row_is_an_error_not_empty_cells() {
    let dir = temp_dir();
    let path = write(
        dir.path(),
        "items.csv",
        b"conversation_id,context,response_id,source,text\nq1,ctx,q1-0,original,Hi\nq2,ctx,q2-0\n",
    );
    let issue = refused("missing_fields", "items.csv", Some(3), |s| items(s, &path));
    assert_eq!(
        issue.at.column.as_deref(),
        Some("source"),
        "the first missing column is named: {issue}"
    );
}

#[test]
fn utf16_with_a_byte_order_mark_is_decoded_and_without_one_refused() {
    let dir = temp_dir();
    let text =
        "conversation_id,context,response_id,source,text\nu1,我睡不着,u1-0,original,试试呼吸练习\n";
    let mut le = vec![0xFF, 0xFE];
    le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let path = write(dir.path(), "items.csv", &le);
    let mut study = seeded();
    items(&mut study, &path).expect("UTF-16LE with a BOM imports");
    assert_eq!(
        study.conversation_context("u1").expect("query").as_deref(),
        Some("我睡不着"),
        "the UTF-16 text arrives intact"
    );
    let mut be = vec![0xFE, 0xFF];
    be.extend(
        text.replace("u1", "v1")
            .encode_utf16()
            .flat_map(u16::to_be_bytes),
    );
    let path = write(dir.path(), "items.csv", &be);
    items(&mut study, &path).expect("UTF-16BE with a BOM imports");

    let bare: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let path = write(dir.path(), "items.csv", &bare);
    let issue = refused("utf16_without_bom", "items.csv", None, |s| items(s, &path));
    assert!(
        issue.message.contains("UTF-8"),
        "the message says how to fix it: {issue}"
    );
}

#[test]
fn nul_bytes_and_invalid_utf8_are_located() {
    let dir = temp_dir();
    let path = write(
        dir.path(),
        "items.csv",
        b"conversation_id,context,response_id,source,text\nn1,a\0b,n1-0,original,x\n",
    );
    let issue = refused("nul_byte", "items.csv", Some(2), |s| items(s, &path));
    assert_eq!(issue.at.column.as_deref(), Some("context"), "column named");
    let path = write(
        dir.path(),
        "ratings.jsonl",
        b"{\"item\":\"b1-0\",\"rater\":\"e\",\"criterion\":\"Guidance\",\"score\":\"\xff\"}\n",
    );
    refused("invalid_utf8", "ratings.jsonl", Some(1), |s| {
        ratings(s, &path)
    });
}

#[test]
fn duplicate_headers_name_both_columns() {
    let dir = temp_dir();
    let path = write(
        dir.path(),
        "items.csv",
        b"conversation_id,context,response_id,source,text, Context\nd1,a,d1-0,original,x,b\n",
    );
    let issue = refused("duplicate_column", "items.csv", Some(1), |s| {
        items(s, &path)
    });
    assert!(
        issue.message.contains("#2") && issue.message.contains("#6"),
        "both places are named: {issue}"
    );
    let xlsx = dir.path().join("items.xlsx");
    write_xlsx(
        &xlsx,
        "items",
        &[
            vec![
                s("conversation_id"),
                s("context"),
                s("response_id"),
                s("source"),
                s("text"),
                s("text"),
            ],
            vec![s("d1"), s("a"), s("d1-0"), s("original"), s("x"), s("y")],
        ],
    );
    let issue = refused("duplicate_column", "items.xlsx", Some(1), |s| {
        items(s, &xlsx)
    });
    assert!(
        issue.message.contains("(E and F)"),
        "workbook columns are named by letter: {issue}"
    );
}

#[test]
fn duplicate_json_keys_name_both_places() {
    let dir = temp_dir();
    let path = write(
        dir.path(),
        "ratings.jsonl",
        b"{\"item\":\"b1-0\",\"rater\":\"e\",\"criterion\":\"Guidance\",\"score\":4}\n{\"item\":\"b1-0\",\"rater\":\"e\",\"criterion\":\"Safety\",\"score\":4,\"score\":1}\n",
    );
    let issue = refused("malformed_json", "ratings.jsonl", Some(2), |s| {
        ratings(s, &path)
    });
    assert!(
        issue.message.contains("“score”")
            && issue.message.contains("key 4")
            && issue.message.contains("key 5"),
        "the key and both places are named: {issue}"
    );
    // Two spellings of one column in one object are the same ambiguity.
    let path = write(
        dir.path(),
        "ratings.jsonl",
        b"{\"item\":\"b1-0\",\"rater\":\"e\",\"criterion\":\"Guidance\",\"score\":4,\" Score\":2}\n",
    );
    refused("duplicate_key", "ratings.jsonl", Some(1), |s| {
        ratings(s, &path)
    });
    // A rubric file naming a key twice is refused too.
    let rubric = r#"{"id": "r", "name": "r", "name": "s", "criteria": []}"#;
    let err = concord_core::rubric::Rubric::parse(
        rubric,
        concord_core::rubric::RubricFormat::Json,
        "r.json",
    )
    .expect_err("a duplicate rubric key is ambiguous");
    assert!(
        err.to_string().contains("“name”"),
        "the rubric error names the key: {err}"
    );
}

fn crisis_spec(judge: Option<&str>) -> CrisisFile {
    CrisisFile {
        source_key: "gpt4o".into(),
        source_name: None,
        judge: judge.map(str::to_string),
        expert: None,
        sheet: None,
    }
}

#[test]
fn two_aliases_of_one_psycrisis_dimension_are_refused() {
    let dir = temp_dir();
    let path = dir.path().join("expert.xlsx");
    write_xlsx(
        &path,
        "Sheet1",
        &[
            vec![
                s("utterance"),
                s("answer"),
                s("共情与合作"),
                s("共情与关系立场"),
            ],
            vec![s("我很难过"), s("我在这里"), X::N(1.0), X::N(0.0)],
        ],
    );
    let issue = refused("duplicate_dimension", "expert.xlsx", None, |s| {
        psycrisis::import_file(s, &path, &crisis_spec(None), &ImportOptions::default())
    });
    assert!(
        issue.message.contains("(C)") && issue.message.contains("(D)"),
        "both columns are named: {issue}"
    );
}

#[test]
fn whitespace_only_required_text_counts_as_empty() {
    let dir = temp_dir();
    let path = write(
        dir.path(),
        "items.csv",
        b"conversation_id,context,response_id,source,text\nw1,\"  \t \",w1-0,original,x\n",
    );
    let issue = refused("missing_value", "items.csv", Some(2), |s| items(s, &path));
    assert_eq!(issue.at.column.as_deref(), Some("context"), "column named");
    let xlsx = dir.path().join("crisis.xlsx");
    write_xlsx(
        &xlsx,
        "Sheet1",
        &[
            vec![s("utterance"), s("answer"), s("共情与合作")],
            vec![s("   "), s("我在这里"), X::N(1.0)],
        ],
    );
    refused("missing_value", "crisis.xlsx", Some(2), |s| {
        psycrisis::import_file(s, &xlsx, &crisis_spec(None), &ImportOptions::default())
    });
}

#[test]
fn an_empty_expert_score_cell_is_reported() {
    let dir = temp_dir();
    let path = dir.path().join("expert.xlsx");
    write_xlsx(
        &path,
        "Sheet1",
        &[
            vec![
                s("utterance"),
                s("answer"),
                s("共情与合作"),
                s("风险评估与识别"),
            ],
            vec![s("我很难过"), s("我在这里"), X::N(1.0), X::E],
        ],
    );
    let mut study = memory_study();
    let report = psycrisis::import_file(
        &mut study,
        &path,
        &crisis_spec(None),
        &ImportOptions::default(),
    )
    .expect("an empty score is a finding, not an error");
    let q = &report.files[0].quality;
    assert_eq!(q.empty_cells, 1, "the empty cell is counted: {q:?}");
    let item = &q.items[0];
    assert_eq!(
        (
            item.at.row,
            item.at.column.as_deref(),
            item.criterion.as_deref()
        ),
        (Some(2), Some("风险评估与识别"), Some("risk_assessment")),
        "the finding is located: {item:?}"
    );
}

#[test]
fn an_unknown_item_in_a_ratings_file_is_reported_with_its_row() {
    let dir = temp_dir();
    let path = write(
        dir.path(),
        "ratings.csv",
        b"item,rater,criterion,score\nb1-0,e,Guidance,4\nnope,e,Guidance,4\nnope,e,Safety,3\n",
    );
    let issue = refused("unknown_item", "ratings.csv", Some(3), |s| {
        ratings(s, &path)
    });
    assert_eq!(issue.at.column.as_deref(), Some("item"), "column named");
}

#[test]
fn a_judge_reply_with_a_nested_object_is_kept_verbatim_and_reported() {
    let dir = temp_dir();
    let path = dir.path().join("gpt-4o_llm_judge.xlsx");
    mentalalign_file(&path, "gpt-4o", "judge_response_", 2, |c, s, a| {
        1 + ((c + s + a) % 5) as i64
    });
    // Rewrite one reply so that an attribute holds an object instead of a number.
    let nested = r#"{"Guidance": {"score": 4, "why": "steps"}, "Informativeness": 4, "Relevance": 4, "Safety": 5, "Empathy": 4, "Helpfulness": 4, "Understanding": 4, "Overall": 4, "Explanation": "ok"}"#;
    let mut rows = vec![{
        let mut h = vec![s("ConvID"), s("context")];
        h.extend(
            SOURCE_KEYS
                .iter()
                .map(|k| X::S(format!("judge_response_{k}"))),
        );
        h
    }];
    for conv in 1..=2usize {
        let mut row = vec![X::N(conv as f64), X::S(format!("I feel alone ({conv})."))];
        for src in 0..SOURCE_KEYS.len() {
            row.push(if conv == 1 && src == 1 {
                s(nested)
            } else {
                X::S(score_json([4, 4, 4, 5, 4, 4, 4], true, false))
            });
        }
        rows.push(row);
    }
    write_xlsx(&path, "gpt-4o", &rows);
    let mut study = memory_study();
    let report = import_files(&mut study, &[path], &ImportOptions::default())
        .expect("one unreadable reply does not reject the judge file");
    let q = &report.files[0].quality;
    assert_eq!(q.unparsed_replies, 1, "the reply is reported: {q:?}");
    let item = q
        .items
        .iter()
        .find(|i| i.at.row == Some(2) && i.at.column.as_deref() == Some("judge_response_claude"))
        .expect("the finding names the row and column of the reply");
    assert!(
        item.value
            .as_deref()
            .unwrap_or_default()
            .contains("not a score"),
        "the finding says why: {item:?}"
    );
    assert_eq!(
        report.files[0].ratings_inserted,
        (2 * 10 - 1) * 7,
        "every other reply's scores are imported"
    );
}

#[test]
fn a_response_id_already_naming_another_response_is_located() {
    // Found by the mutation tests: the conflict was detected inside the write and reported
    // without its file and row.
    let dir = temp_dir();
    let path = write(
        dir.path(),
        "items.csv",
        b"conversation_id,context,response_id,source,text\nb2,another person,b1-0,claude,x\n",
    );
    let issue = refused("duplicate_id", "items.csv", Some(2), |s| items(s, &path));
    assert_eq!(
        issue.at.column.as_deref(),
        Some("response_id"),
        "column named"
    );
}
