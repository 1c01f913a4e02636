//! Bad input never panics, always names where the problem is (file, sheet, row, column), and
//! leaves the study exactly as it was: each test imports something valid first, then feeds one
//! kind of broken file and compares the study's fingerprint before and after.

use concord_testsupport::release_files;

use concord_core::files::Issue;
use concord_core::intake::long::import_items;
use concord_core::intake::long::import_ratings;
use concord_core::intake::long::ItemColumns;
use concord_core::intake::long::RatingColumns;
use concord_core::intake::mentalalign::conversation_external_id;
use concord_core::intake::mentalalign::import_files;
use concord_core::intake::mentalbench;
use concord_core::intake::ImportError;
use concord_core::intake::ImportOptions;
use concord_core::store::Store;
use release_files::*;
use std::path::Path;

fn expert_value(conv: usize, src: usize, attr: usize) -> i64 {
    1 + ((conv + src + attr) % 5) as i64
}

/// A study with a valid small release and long-form items already imported.
fn seeded(dir: &Path) -> Store {
    let human = dir.join("Human_judge.xlsx");
    mentalalign_file(&human, "Sheet1", "human_response_", 3, expert_value);
    let mut study = memory_study();
    import_files(&mut study, &[human], &ImportOptions::default()).expect("valid release");
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

/// Run `import` on a seeded study; it must fail with an issue of `code`, located in `file`
/// (and at `row` when given), and change nothing.
fn refused(
    code: &str,
    file: &str,
    row: Option<usize>,
    import: impl FnOnce(&mut Store) -> Result<concord_core::intake::ImportReport, ImportError>,
) -> Vec<Issue> {
    let dir = temp_dir();
    let mut study = seeded(dir.path());
    let before = fingerprint(&study);
    let err = import(&mut study).expect_err("the broken input must be refused");
    let issues = err.issues().to_vec();
    let hit = issues
        .iter()
        .find(|i| i.code == code)
        .unwrap_or_else(|| panic!("expected a {code} problem, got: {err}"));
    assert_eq!(hit.at.file, file, "the problem names the file: {hit}");
    if row.is_some() {
        assert_eq!(hit.at.row, row, "the problem names the row: {hit}");
    }
    assert!(
        err.to_string().contains("nothing was imported"),
        "the message says nothing changed: {err}"
    );
    assert_eq!(
        fingerprint(&study),
        before,
        "a refused import must leave the study exactly as it was"
    );
    issues
}

fn ratings(
    study: &mut Store,
    path: &Path,
) -> Result<concord_core::intake::ImportReport, ImportError> {
    import_ratings(
        study,
        path,
        "mentalbench",
        &RatingColumns::default(),
        None,
        &ImportOptions::default(),
    )
}

fn items(
    study: &mut Store,
    path: &Path,
) -> Result<concord_core::intake::ImportReport, ImportError> {
    import_items(
        study,
        path,
        "mentalbench",
        &ItemColumns::default(),
        None,
        &ImportOptions::default(),
    )
}

#[test]
fn bom_and_crlf_are_read_cleanly() {
    let dir = temp_dir();
    let study = seeded(dir.path());
    let text = study
        .conversation_context("b1")
        .expect("query")
        .expect("conversation b1 from the BOM/CRLF file");
    assert_eq!(
        text, "I cannot sleep\nat all",
        "CRLF inside a cell becomes LF"
    );
    let id = study
        .response_id("b1", "original")
        .expect("query")
        .expect("the BOM did not spoil the first header");
    assert_eq!(
        study.response_text(id).expect("query").as_deref(),
        Some("Try a routine\nbefore bed"),
        "multi-line answers survive"
    );
}

#[test]
fn empty_file() {
    refused("empty_file", "ratings.csv", None, |s| {
        ratings(s, &fixture("empty-file").join("ratings.csv"))
    });
    let dir = temp_dir();
    let empty = dir.path().join("Human_judge.xlsx");
    std::fs::write(&empty, b"").expect("write");
    refused("empty_file", "Human_judge.xlsx", None, |s| {
        import_files(s, &[empty], &ImportOptions::default())
    });
}

#[test]
fn wrong_sheet_and_missing_columns() {
    let dir = temp_dir();
    let texts = dir.path().join("mentalbench.xlsx");
    write_xlsx(
        &texts,
        "texts",
        &[
            vec![s("context"), s("response"), s("gpt-4o")],
            vec![s("hello"), s("hi"), s("hey")],
        ],
    );
    let issues = refused("missing_sheet", "mentalbench.xlsx", None, |st| {
        mentalbench::import_file(st, &texts, Some("Sheet9"), &ImportOptions::default())
    });
    assert!(
        issues[0].message.contains("“texts”"),
        "the message lists the sheets there are: {}",
        issues[0]
    );
    let no_conv = dir.path().join("Human_judge.xlsx");
    write_xlsx(
        &no_conv,
        "Sheet1",
        &[
            vec![s("id"), s("context"), s("human_response_original")],
            vec![X::N(1.0), s("hello"), s("{\"Guidance\": 4}")],
        ],
    );
    let issues = refused("missing_column", "Human_judge.xlsx", None, |st| {
        import_files(st, &[no_conv], &ImportOptions::default())
    });
    assert!(
        issues[0].message.contains("ConvID"),
        "the missing column is named: {}",
        issues[0]
    );
    let not_bench = dir.path().join("other.csv");
    std::fs::write(&not_bench, "question,answer\nq,a\n").expect("write");
    refused("missing_column", "other.csv", None, |st| {
        mentalbench::import_file(st, &not_bench, None, &ImportOptions::default())
    });
}

#[test]
fn csv_renamed_xlsx_and_truncated_xlsx() {
    let issues = refused("wrong_format", "Human_judge.xlsx", None, |s| {
        import_files(
            s,
            &[fixture("csv-renamed-xlsx").join("Human_judge.xlsx")],
            &ImportOptions::default(),
        )
    });
    assert!(
        issues[0].message.contains("CSV"),
        "the message says it looks like CSV: {}",
        issues[0]
    );
    let dir = temp_dir();
    let whole = dir.path().join("whole.xlsx");
    mentalalign_file(&whole, "Sheet1", "human_response_", 5, expert_value);
    let bytes = std::fs::read(&whole).expect("read");
    let cut = dir.path().join("Human_judge.xlsx");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    refused("unreadable_workbook", "Human_judge.xlsx", None, |s| {
        import_files(s, &[cut], &ImportOptions::default())
    });
}

#[test]
fn cells_that_are_not_json_or_lack_the_attributes() {
    let dir = temp_dir();
    let path = dir.path().join("Human_judge.xlsx");
    write_xlsx(
        &path,
        "Sheet1",
        &[
            vec![
                s("ConvID"),
                s("context"),
                s("human_response_original"),
                s("human_response_claude"),
            ],
            vec![
                X::N(1.0),
                s("hi"),
                s("Guidance four, Safety five"),
                s("{\"Guidance\": 4}"),
            ],
            vec![
                X::N(2.0),
                s("hey"),
                s("{\"Score\": 4, \"Note\": \"ok\"}"),
                X::N(4.0),
            ],
        ],
    );
    let issues = refused("not_json", "Human_judge.xlsx", Some(2), |s| {
        import_files(s, &[path], &ImportOptions::default())
    });
    let no_attr = issues
        .iter()
        .find(|i| i.code == "no_attributes")
        .expect("the object without attributes is reported in the same run");
    assert_eq!(
        (no_attr.at.row, no_attr.at.column.as_deref()),
        (Some(3), Some("human_response_original")),
        "located at row 3 of the original column"
    );
    assert!(
        issues
            .iter()
            .any(|i| i.code == "not_json" && i.at.row == Some(3)),
        "a bare number is not a score object either"
    );
}

#[test]
fn scores_that_cannot_be_ratings() {
    let dir = temp_dir();
    let path = dir.path().join("Human_judge.xlsx");
    let cell = |g: &str| X::S(format!("{{\"Guidance\": {g}, \"Safety\": 5}}"));
    write_xlsx(
        &path,
        "Sheet1",
        &[
            vec![s("ConvID"), s("context"), s("human_response_original")],
            vec![X::N(1.0), s("a"), cell("3.5")],
            vec![X::N(2.0), s("b"), cell("\"four\"")],
            vec![X::N(3.0), s("c"), cell("-1")],
            vec![X::N(4.0), s("d"), cell("1e308")],
            vec![X::N(5.0), s("e"), cell("6")],
        ],
    );
    let issues = refused("bad_score", "Human_judge.xlsx", None, |s| {
        import_files(s, &[path], &ImportOptions::default())
    });
    let rows: Vec<Option<usize>> = issues
        .iter()
        .filter(|i| i.code == "bad_score")
        .map(|i| i.at.row)
        .collect();
    assert_eq!(
        rows,
        vec![Some(2), Some(3), Some(4), Some(5)],
        "3.5, \"four\", -1 and 1e308 are each reported; 6 is only a data-quality finding"
    );
    let issues = refused("bad_score", "ratings.csv", Some(2), |s| {
        ratings(s, &fixture("bad-scores").join("ratings.csv"))
    });
    assert_eq!(
        issues.iter().filter(|i| i.code == "bad_score").count(),
        4,
        "the long form refuses the same four values: {issues:?}"
    );
}

#[test]
fn duplicate_conv_ids_and_the_same_rating_twice() {
    let dir = temp_dir();
    let path = dir.path().join("Human_judge.xlsx");
    let cell = s("{\"Guidance\": 4}");
    write_xlsx(
        &path,
        "Sheet1",
        &[
            vec![s("ConvID"), s("context"), s("human_response_original")],
            vec![X::N(1.0), s("a"), cell.clone()],
            vec![X::N(2.0), s("b"), cell.clone()],
            vec![X::N(1.0), s("c"), cell],
        ],
    );
    let issues = refused("duplicate_id", "Human_judge.xlsx", Some(4), |s| {
        import_files(s, &[path], &ImportOptions::default())
    });
    assert!(
        issues[0].message.contains("row 2"),
        "the first occurrence is named: {}",
        issues[0]
    );
    refused("duplicate_rating", "ratings.csv", Some(4), |s| {
        ratings(s, &fixture("duplicate-rating").join("ratings.csv"))
    });
}

#[test]
fn nul_bytes_and_invalid_utf8() {
    let issues = refused("nul_byte", "items.csv", Some(3), |s| {
        items(s, &fixture("nul-byte").join("items.csv"))
    });
    assert_eq!(
        issues[0].at.column.as_deref(),
        Some("context"),
        "the column is named"
    );
    let issues = refused("invalid_utf8", "items.csv", Some(2), |s| {
        items(s, &fixture("invalid-utf8").join("items.csv"))
    });
    assert_eq!(
        issues[0].at.column.as_deref(),
        Some("context"),
        "the column is named"
    );
}

#[test]
fn a_fifty_megabyte_cell() {
    let dir = temp_dir();
    let path = dir.path().join("items.csv");
    let mut text =
        String::from("conversation_id,context,response_id,source,text\nh1,hello,h1-0,original,");
    text.push_str(&"a".repeat(50 * 1024 * 1024));
    text.push('\n');
    std::fs::write(&path, text).expect("write");
    let issues = refused("cell_too_large", "items.csv", Some(2), |s| items(s, &path));
    assert!(
        issues[0].message.contains("more than 1.0 MB"),
        "the limit where reading stopped is stated: {}",
        issues[0]
    );
}

#[test]
fn formula_cells_are_text_and_never_evaluated() {
    let dir = temp_dir();
    let path = dir.path().join("mentalbench.xlsx");
    let formula = "=HYPERLINK(\"http://example.org\",\"click\")";
    write_xlsx(
        &path,
        "Sheet1",
        &[
            vec![s("context"), s("response"), s("gpt-4o")],
            vec![X::F(formula.to_string()), s("hi"), X::F("=1+1".to_string())],
        ],
    );
    let mut study = memory_study();
    mentalbench::import_file(&mut study, &path, None, &ImportOptions::default())
        .expect("formulas are imported as text");
    assert_eq!(
        study
            .conversation_context(&conversation_external_id(1))
            .expect("query")
            .as_deref(),
        Some(formula),
        "the formula's text is the context"
    );
    let id = study
        .response_id(&conversation_external_id(1), "gpt4o")
        .expect("query")
        .expect("response");
    assert_eq!(
        study.response_text(id).expect("query").as_deref(),
        Some("=1+1"),
        "=1+1 stays text, not 2"
    );
}

#[test]
fn importing_the_same_file_twice_changes_nothing() {
    let dir = temp_dir();
    let mut study = seeded(dir.path());
    let before = fingerprint(&study);
    let report = items(&mut study, &fixture("bom-crlf").join("items.csv")).expect("second import");
    assert_eq!(
        report.files[0].status,
        concord_core::intake::FileStatus::AlreadyImported,
        "the content hash recognises the file"
    );
    assert_eq!(fingerprint(&study), before, "nothing changed");
}

#[test]
fn crlf_row_numbers_in_every_csv_importer() {
    // Each file: CRLF line ends, a quoted CRLF inside the first data row (lines 2–3), and the
    // problem on line 5 — the line an editor shows, not the record count or a doubled count.
    let dir = temp_dir();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("test file written");
        p
    };
    let ratings_csv = write(
        "ratings.csv",
        "item,rater,criterion,score,rationale\r\n\
         b1-0,Expert A,Guidance,4,\"clear\r\nsteps\"\r\n\
         b1-0,Expert A,Empathy,3,warm\r\n\
         b1-0,Expert A,guidance,5,again\r\n",
    );
    refused("duplicate_rating", "ratings.csv", Some(5), |s| {
        ratings(s, &ratings_csv)
    });
    let items_csv = write(
        "items.csv",
        "conversation_id,context,response_id,source,text\r\n\
         c1,\"I feel\r\nlow\",c1-0,original,Talk to me\r\n\
         c1,I feel low,c1-1,gpt4o,Try a walk\r\n\
         c2,Work is hard,c1-0,gemini,Rest a little\r\n",
    );
    refused("duplicate_id", "items.csv", Some(5), |s| {
        items(s, &items_csv)
    });
    let bench_csv = write(
        "bench.csv",
        "ConvID,context,response,Gemini\r\n\
         1,\"I cannot\r\nsleep\",Try a routine,Breathe\r\n\
         2,My friend left,Ask gently,Give it time\r\n\
         1,I feel alone,Join a club,Call home\r\n",
    );
    refused("duplicate_id", "bench.csv", Some(5), |s| {
        mentalbench::import_file(s, &bench_csv, None, &ImportOptions::default())
    });
}
