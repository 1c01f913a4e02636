//! Long-form ratings in CSV are imported as a stream, row by row, in one transaction: the whole
//! file or nothing, every problem located, ratings that already exist updated with their history
//! kept — also when there are more of them than one update batch holds. Long-form items in CSV
//! are streamed the same way: a bad row after thousands of written ones leaves nothing behind.

use concord_testsupport::release_files;

use concord_core::intake::long::import_items;
use concord_core::intake::long::import_items_reporting;
use concord_core::intake::long::import_ratings;
use concord_core::intake::long::import_ratings_reporting;
use concord_core::intake::long::ItemColumns;
use concord_core::intake::long::RatingColumns;
use concord_core::intake::ImportOptions;
use concord_core::intake::ImportProgress;
use concord_core::intake::ImportReport;
use concord_core::intake::PROGRESS_EVERY_ROWS;
use concord_core::store::{
    ImportedRating, NewRater, Occasion, RaterKind, RatingInput, Store, RATING_IMPORT_BATCH,
};
use release_files::*;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const CRITERIA: [&str; 7] = [
    "Guidance",
    "Informativeness",
    "Relevance",
    "Safety",
    "Empathy",
    "Helpfulness",
    "Understanding",
];

/// `conversations` × 10 sources as long-form items.
fn items_file(dir: &Path, conversations: usize) -> PathBuf {
    let mut text = String::from("conversation_id,context,response_id,source,text\n");
    for c in 0..conversations {
        for s in 0..10 {
            let _ = writeln!(
                text,
                "conv{c},A synthetic context {c},conv{c}-s{s},source{s},A synthetic answer {s}"
            );
        }
    }
    let path = dir.join("items.csv");
    std::fs::write(&path, text).expect("items file written");
    path
}

/// Every response scored by `judges` judges on the seven attributes; `score` picks the value.
fn ratings_file(
    dir: &Path,
    name: &str,
    conversations: usize,
    judges: usize,
    score: impl Fn(usize, usize, usize) -> String,
) -> PathBuf {
    let mut text = String::from("item,rater,criterion,score\n");
    for j in 0..judges {
        for c in 0..conversations {
            for s in 0..10 {
                for (k, criterion) in CRITERIA.iter().enumerate() {
                    let _ = writeln!(
                        text,
                        "conv{c}-s{s},judge{j},{criterion},{}",
                        score(c * 10 + s, j, k)
                    );
                }
            }
        }
    }
    let path = dir.join(name);
    std::fs::write(&path, text).expect("ratings file written");
    path
}

fn study_with_items(dir: &Path, conversations: usize) -> Store {
    let mut study = memory_study();
    import_items(
        &mut study,
        &items_file(dir, conversations),
        "mentalbench",
        &ItemColumns::default(),
        None,
        &ImportOptions::default(),
    )
    .expect("valid items");
    study
}

fn import(
    study: &mut Store,
    path: &Path,
) -> Result<ImportReport, concord_core::intake::ImportError> {
    import_ratings(
        study,
        path,
        "mentalbench",
        &RatingColumns {
            new_rater_kind: RaterKind::Judge,
            ..RatingColumns::default()
        },
        None,
        &ImportOptions::default(),
    )
}

#[test]
fn one_bad_row_at_the_end_of_a_large_file_leaves_nothing_behind() {
    let dir = temp_dir();
    let mut study = study_with_items(dir.path(), 100);
    let before = fingerprint(&study);
    // 100 × 10 responses × 2 judges × 7 attributes = 14,000 rows; the very last one is broken.
    let rows = 14_000;
    let path = ratings_file(dir.path(), "ratings.csv", 100, 2, |r, j, k| {
        if r == 999 && j == 1 && k == 6 {
            "lots".to_string()
        } else {
            (1 + (r + j + k) % 5).to_string()
        }
    });
    let err = import(&mut study, &path).expect_err("a row that is not a score refuses the file");
    let bad = err
        .issues()
        .iter()
        .find(|i| i.code == "bad_score")
        .unwrap_or_else(|| panic!("the bad score is reported: {err}"));
    assert_eq!(
        (bad.at.row, bad.at.column.as_deref()),
        (Some(rows + 1), Some("score")),
        "the last line of the file, score column"
    );
    assert_eq!(
        fingerprint(&study),
        before,
        "13,999 good rows were written before the bad one was read; all of them must be rolled back"
    );
    assert!(
        study
            .raters()
            .expect("raters")
            .iter()
            .all(|r| !r.name.starts_with("judge")),
        "judges created while reading are rolled back too"
    );
}

#[test]
fn a_repeated_rating_names_both_rows() {
    let dir = temp_dir();
    let mut study = study_with_items(dir.path(), 2);
    let path = dir.path().join("ratings.csv");
    std::fs::write(
        &path,
        "item,rater,criterion,score\n\
         conv0-s0,judgeA,Guidance,4\n\
         conv0-s1,judgeA,Guidance,3\n\
         conv1-s0,judgeB,Safety,5\n\
         conv0-s1,judgeA,guidance,2\n",
    )
    .expect("file written");
    let err = import(&mut study, &path).expect_err("the same rating twice is ambiguous");
    let dup = err
        .issues()
        .iter()
        .find(|i| i.code == "duplicate_rating")
        .unwrap_or_else(|| panic!("the repeat is reported: {err}"));
    assert_eq!(dup.at.row, Some(5), "the repeat is on line 5");
    assert!(
        dup.message.contains("row 3"),
        "the first occurrence (line 3, criterion written differently) is named: {}",
        dup.message
    );
}

#[test]
fn changed_values_update_more_ratings_than_one_batch_and_keep_history() {
    let dir = temp_dir();
    // 70 conversations × 10 sources × 1 judge × 7 attributes = 4,900 ratings > one batch.
    let mut study = study_with_items(dir.path(), 70);
    let n = 70 * 10 * 7;
    assert!(
        n > RATING_IMPORT_BATCH,
        "the test must span more than one update batch"
    );
    let first = ratings_file(dir.path(), "first.csv", 70, 1, |r, _, k| {
        (1 + (r + k) % 4).to_string()
    });
    let report = import(&mut study, &first).expect("first import");
    assert_eq!(report.files[0].ratings_inserted, n, "every rating is new");
    let second = ratings_file(dir.path(), "second.csv", 70, 1, |r, _, k| {
        (2 + (r + k) % 4).to_string()
    });
    let report = import(&mut study, &second).expect("second import with every value raised by one");
    assert_eq!(
        (
            report.files[0].ratings_inserted,
            report.files[0].ratings_updated
        ),
        (0, n),
        "every rating existed and changed"
    );
    let judge = study
        .raters()
        .expect("raters")
        .into_iter()
        .find(|r| r.name == "judge0")
        .expect("the judge exists");
    let history = study.history_of_rater(judge.id).expect("history");
    assert_eq!(
        history.len(),
        n,
        "every changed rating keeps its earlier value"
    );
    assert!(
        history.values().all(|versions| versions.len() == 1),
        "each rating changed exactly once"
    );
    assert_eq!(
        study.kept_count_differences().expect("recount"),
        Vec::new(),
        "a first import and a re-import with changed values keep the rating counts"
    );
}

#[test]
fn a_reimport_mixing_new_and_existing_ratings_gives_the_new_ones_ids_in_file_order() {
    // A first file rates every other response; the second rates all of them, the existing
    // ratings of the first criterion with a new value. The second file's rows alternate between
    // existing and new ratings every seven rows, so every statement of the bulk write holds
    // both kinds: the new rows must get ids in the file's order (as one INSERT per row gave
    // them), the existing ones be updated, and the chain seal every row.
    let dir = temp_dir();
    let (mut study, path) = file_study_with_items(dir.path(), 40);
    let line = |c: usize, s: usize, k: usize, bump: bool| {
        let score = 1 + (c + s + k) % 4 + usize::from(bump && k == 0);
        format!("conv{c}-s{s},judge0,{},{score}\n", CRITERIA[k])
    };
    let header = "item,rater,criterion,score\n";
    let (mut first, mut second) = (String::from(header), String::from(header));
    let mut new_rows = Vec::new();
    for c in 0..40 {
        for s in 0..10 {
            for (k, criterion) in CRITERIA.iter().enumerate() {
                let existing = (c + s) % 2 == 0;
                if existing {
                    first.push_str(&line(c, s, k, false));
                } else {
                    new_rows.push((format!("conv{c}-s{s}"), criterion.to_lowercase()));
                }
                second.push_str(&line(c, s, k, existing));
            }
        }
    }
    let (first_file, second_file) = (dir.path().join("first.csv"), dir.path().join("second.csv"));
    std::fs::write(&first_file, first).expect("first file written");
    std::fs::write(&second_file, second).expect("second file written");
    import(&mut study, &first_file).expect("first import");
    let raw = rusqlite::Connection::open(&path).expect("the file opens in plain SQLite");
    let last_before: i64 = raw
        .query_row("SELECT MAX(id) FROM rating", [], |r| r.get(0))
        .expect("the first import's last id");
    let report = import(&mut study, &second_file).expect("second import");
    assert_eq!(
        (
            report.files[0].ratings_inserted,
            report.files[0].ratings_updated
        ),
        (new_rows.len(), 200),
        "the new ratings are inserted and the 200 changed ones (first criterion of every other \
         response) updated"
    );
    let mut stmt = raw
        .prepare(
            "SELECT g.id, p.external_id, c.key FROM rating g JOIN response p ON p.id = g.response_id
             JOIN criterion c ON c.id = g.criterion_id WHERE g.id > ?1 ORDER BY g.id",
        )
        .expect("query");
    let stored: Vec<(i64, String, String)> = stmt
        .query_map([last_before], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows read");
    assert_eq!(
        stored.iter().map(|(id, _, _)| *id).collect::<Vec<_>>(),
        (last_before + 1..=last_before + new_rows.len() as i64).collect::<Vec<_>>(),
        "the new ratings take the ids after the last one, without gaps"
    );
    assert_eq!(
        stored
            .into_iter()
            .map(|(_, item, key)| (item, key))
            .collect::<Vec<_>>(),
        new_rows,
        "the new ratings take their ids in the order of the file's rows"
    );
    assert_eq!(
        study.verify_audit_chain().expect("verify").broken,
        None,
        "every new row is sealed with the id it was given and every update by the trigger"
    );
    assert_eq!(
        study.kept_count_differences().expect("recount"),
        Vec::new(),
        "a re-import that adds and updates keeps the rating counts"
    );
}

/// A file-backed study with `conversations` × 10 responses (the tamper check edits the file).
fn file_study_with_items(dir: &Path, conversations: usize) -> (Store, PathBuf) {
    let path = dir.join("study.concord");
    let mut study = Store::create(&path, clock()).expect("a new study file");
    import_items(
        &mut study,
        &items_file(dir, conversations),
        "mentalbench",
        &ItemColumns::default(),
        None,
        &ImportOptions::default(),
    )
    .expect("valid items");
    (study, path)
}

#[test]
fn a_bulk_import_seals_its_rows_and_a_later_edit_outside_concord_is_caught() {
    let dir = temp_dir();
    let (mut study, path) = file_study_with_items(dir.path(), 70);
    // 4,900 rows (more than one batch) with rationales and one without, and an out-of-scale
    // value kept as written: every column type the row digest encodes.
    let mut text = String::from("item,rater,criterion,score,rationale\n");
    for c in 0..70 {
        for s in 0..10 {
            for (k, criterion) in CRITERIA.iter().enumerate() {
                let score = match (c, s, k) {
                    (0, 0, 1) => "6".to_string(),
                    _ => (1 + (c + s + k) % 5).to_string(),
                };
                let rationale = match (c, s, k) {
                    (0, 0, 0) => String::new(),
                    _ => format!("\"reason {c}, {s}\""),
                };
                let _ = writeln!(text, "conv{c}-s{s},judge0,{criterion},{score},{rationale}");
            }
        }
    }
    let file = dir.path().join("ratings.csv");
    std::fs::write(&file, text).expect("ratings file written");
    let report = import(&mut study, &file).expect("a valid file");
    assert_eq!(report.files[0].ratings_inserted, 4_900, "every row is new");
    assert_eq!(
        study.verify_audit_chain().expect("verify").broken,
        None,
        "the digest the import computed for its rows must equal the digest of the rows as stored"
    );
    // The chain's insert trigger is back: a rating entered afterwards is sealed too.
    let raters = study.raters().expect("raters");
    let judge = raters.iter().find(|r| r.name == "judge0").expect("judge");
    let extra = raters.iter().find(|r| r.id != judge.id);
    let crit = study
        .criterion_id("mentalbench", "empathy")
        .expect("criterion");
    let response = study
        .response_id("conv3", "source3")
        .expect("responses")
        .expect("a response");
    let rater_id = match extra {
        Some(r) => r.id,
        None => study
            .write(|tx| {
                tx.upsert_rater(&NewRater {
                    kind: RaterKind::Expert,
                    name: "Expert A",
                    model_id: None,
                    family: None,
                    queue_seed: 7,
                })
            })
            .expect("an expert"),
    };
    study
        .write(|tx| {
            tx.set_rating(&RatingInput {
                rater_id,
                response_id: response,
                criterion_id: crit,
                occasion: Occasion::First,
                value: Some(3),
                raw_value: None,
                rationale: None,
                origin: "screen",
            })
        })
        .expect("a rating from the screen");
    assert_eq!(
        study.verify_audit_chain().expect("verify").broken,
        None,
        "a rating written after the import is sealed by the trigger the import put back"
    );
    drop(study);
    let raw = rusqlite::Connection::open(&path).expect("the file opens in plain SQLite");
    raw.execute(
        "UPDATE rating SET value = 1 WHERE id = (SELECT MAX(id) - 100 FROM rating)",
        [],
    )
    .expect("an edit outside Concord");
    drop(raw);
    let study = Store::open(&path, clock()).expect("reopened");
    let broken = study
        .verify_audit_chain()
        .expect("verify")
        .broken
        .expect("an imported rating changed outside Concord must break the seal");
    assert_eq!(broken.table.as_deref(), Some("rating"), "{broken:?}");
}

#[test]
fn a_bulk_write_refused_midway_keeps_the_chain_whole() {
    let dir = temp_dir();
    let (mut study, _path) = file_study_with_items(dir.path(), 2);
    let judge = study
        .write(|tx| {
            tx.upsert_rater(&NewRater {
                kind: RaterKind::Judge,
                name: "judgeZ",
                model_id: Some("judgeZ"),
                family: None,
                queue_seed: 7,
            })
        })
        .expect("a judge");
    let crit = study
        .criterion_id("mentalbench", "safety")
        .expect("criterion");
    let before = fingerprint(&study);
    let refused = study.write(|tx| {
        tx.import_ratings(
            [1, 2, 999_999].map(|response_id| ImportedRating {
                rater_id: judge,
                response_id,
                criterion_id: crit,
                value: Some(4),
                raw_value: None,
                rationale: None,
            }),
            "import:test",
        )
    });
    assert!(
        refused.is_err(),
        "a rating of a response the study does not have is refused by the store"
    );
    assert_eq!(fingerprint(&study), before, "nothing of the batch is kept");
    study
        .write(|tx| {
            tx.import_ratings(
                [1, 2].map(|response_id| ImportedRating {
                    rater_id: judge,
                    response_id,
                    criterion_id: crit,
                    value: Some(4),
                    raw_value: None,
                    rationale: None,
                }),
                "import:test",
            )
        })
        .expect("a valid batch");
    study
        .write(|tx| {
            tx.set_rating(&RatingInput {
                rater_id: judge,
                response_id: 3,
                criterion_id: crit,
                occasion: Occasion::First,
                value: Some(2),
                raw_value: None,
                rationale: None,
                origin: "screen",
            })
        })
        .expect("a single rating");
    assert_eq!(
        study.verify_audit_chain().expect("verify").broken,
        None,
        "after a refused bulk write the chain's trigger is in place and every later row sealed"
    );
}

#[test]
fn a_streamed_import_reports_progress_that_only_grows_and_ends_at_the_file_size() {
    let dir = temp_dir();
    let mut study = study_with_items(dir.path(), 100);
    // 100 × 10 responses × 3 judges × 7 attributes = 21,000 rows: more than two report intervals.
    let rows = 21_000u64;
    assert!(
        rows > 2 * PROGRESS_EVERY_ROWS,
        "the file must span several reports"
    );
    let path = ratings_file(dir.path(), "ratings.csv", 100, 3, |r, j, k| {
        (1 + (r + j + k) % 5).to_string()
    });
    let size = std::fs::metadata(&path).expect("the file").len();
    let mut seen: Vec<ImportProgress> = Vec::new();
    import_ratings_reporting(
        &mut study,
        &path,
        "mentalbench",
        &RatingColumns {
            new_rater_kind: RaterKind::Judge,
            ..RatingColumns::default()
        },
        None,
        &ImportOptions::default(),
        &mut |p| seen.push(p),
    )
    .expect("a valid file");
    let last = *seen.last().expect("progress is reported");
    assert_eq!(
        last,
        ImportProgress {
            done: size,
            total: size,
            rows
        },
        "the last report says the whole file and every row landed"
    );
    assert!(
        seen.iter().all(|p| p.total == size && p.done <= p.total),
        "every report counts bytes of this file: {seen:?}"
    );
    assert!(
        seen.windows(2)
            .all(|w| w[0].done <= w[1].done && w[0].rows <= w[1].rows),
        "progress never goes back: {seen:?}"
    );
    let before_end = seen.iter().filter(|p| p.done < size).count();
    assert!(
        before_end >= 2,
        "reports come while the rows are read, not only at the end: {seen:?}"
    );
    assert!(
        seen[..seen.len() - 1].iter().all(|p| p.done < size),
        "only the report after the import landed says it is complete: {seen:?}"
    );
}

fn items(
    study: &mut Store,
    path: &Path,
) -> Result<ImportReport, concord_core::intake::ImportError> {
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
fn an_items_file_with_one_bad_row_after_thousands_of_good_ones_leaves_nothing_behind() {
    let dir = temp_dir();
    let mut study = memory_study();
    let before = fingerprint(&study);
    // 1,000 conversations × 10 sources = 10,000 rows, all written before the last one is read.
    let path = items_file(dir.path(), 1_000);
    let mut text = std::fs::read_to_string(&path).expect("items file");
    text.push_str("conv5,A synthetic context 5,conv5-s99,source3,A repeated source\n");
    std::fs::write(&path, text).expect("items file extended");
    let err =
        items(&mut study, &path).expect_err("a second response from one source refuses the file");
    let dup = err
        .issues()
        .iter()
        .find(|i| i.code == "duplicate_response")
        .unwrap_or_else(|| panic!("the repeated pair is reported: {err}"));
    assert_eq!(
        (dup.at.row, dup.at.column.as_deref()),
        (Some(10_002), Some("source")),
        "the last line of the file, source column: {dup}"
    );
    assert!(
        dup.message.contains("row 55"),
        "the first response of conversation 5 from source3 (line 55) is named: {dup}"
    );
    assert_eq!(
        fingerprint(&study),
        before,
        "10,000 good rows were written before the bad one was read; all of them must be rolled back"
    );
}

#[test]
fn repeated_ids_and_conflicting_contexts_in_a_streamed_items_file_name_both_rows() {
    let dir = temp_dir();
    let mut study = memory_study();
    let path = dir.path().join("items.csv");
    std::fs::write(
        &path,
        "conversation_id,context,response_id,source,text\n\
         c1,I cannot sleep,c1-a,original,Rest\n\
         c2,I feel alone,c2-a,original,You are not\n\
         c1,I cannot sleep,c1-a,claude,Again\n\
         c2,I feel alone today,c2-b,claude,Changed\n",
    )
    .expect("file written");
    let err = items(&mut study, &path).expect_err("a repeated id and a changed context");
    let found: Vec<(String, Option<usize>, String)> = err
        .issues()
        .iter()
        .map(|i| (i.code.clone(), i.at.row, i.message.clone()))
        .collect();
    assert!(
        found
            .iter()
            .any(|(code, row, m)| code == "duplicate_id" && *row == Some(4) && m.contains("row 2")),
        "the repeated response id names line 4 and its first line 2: {found:?}"
    );
    assert!(
        found.iter().any(|(code, row, m)| code == "context_conflict"
            && *row == Some(5)
            && m.contains("row 3")),
        "the changed context names line 5 and the line 3 it differs from: {found:?}"
    );
}

#[test]
fn a_streamed_items_import_reports_progress_and_a_second_import_is_recognised() {
    let dir = temp_dir();
    let mut study = memory_study();
    // 2,000 conversations × 10 sources = 20,000 rows: more than two report intervals.
    let rows = 20_000u64;
    assert!(
        rows > 2 * PROGRESS_EVERY_ROWS,
        "the file must span several reports"
    );
    let path = items_file(dir.path(), 2_000);
    let size = std::fs::metadata(&path).expect("the file").len();
    let mut seen: Vec<ImportProgress> = Vec::new();
    let report = import_items_reporting(
        &mut study,
        &path,
        "mentalbench",
        &ItemColumns::default(),
        None,
        &ImportOptions::default(),
        &mut |p| seen.push(p),
    )
    .expect("a valid file");
    assert_eq!(
        report.files[0].responses_added, 20_000,
        "every row is a new response"
    );
    let last = *seen.last().expect("progress is reported");
    assert_eq!(
        last,
        ImportProgress {
            done: size,
            total: size,
            rows
        },
        "the last report says the whole file and every row landed"
    );
    assert!(
        seen.windows(2)
            .all(|w| w[0].done <= w[1].done && w[0].rows <= w[1].rows),
        "progress never goes back: {seen:?}"
    );
    assert!(
        seen.iter().filter(|p| p.done < size).count() >= 2,
        "reports come while the rows are read, not only at the end: {seen:?}"
    );
    let again = items(&mut study, &path).expect("the same file again");
    assert_eq!(
        again.files[0].status,
        concord_core::intake::FileStatus::AlreadyImported,
        "the same file a second time is recognised, not imported twice"
    );
}
