//! Lead-workflow figures: export a ~700,000-cell results workbook (goal ≤ 5 s) and merge a
//! 10,000-rating rater package (goal ≤ 1 s). Run with
//! `cargo run --release -p concord-core --example lead_bench`; the study files go to a temporary
//! folder that is removed afterwards.

use concord_core::base::clock::SteppingClock;
use concord_core::outputs::export::write_workbook;
use concord_core::outputs::export::WorkbookOptions;
use concord_core::rubric::builtin;
use concord_core::store::{
    ImportedRating, NewConversation, NewRater, NewSource, Passphrase, RaterKind, SourceKind, Store,
    StoreError,
};
use concord_core::workflow::assignment;
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::package::export_package;
use concord_core::workflow::package::merge_package;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

const SOURCES: [&str; 4] = ["original", "claude", "gpt4o", "qwen_3"];

fn study(path: &Path, conversations: usize, experts: &[&str], start: i64) -> Store {
    let mut store = Store::create(path, Arc::new(SteppingClock::new(start, 1))).expect("study");
    store
        .write(|tx| {
            let rubric = tx.add_rubric(&builtin::mentalbench())?;
            let sources: Vec<i64> = SOURCES
                .iter()
                .map(|k| {
                    tx.upsert_source(&NewSource {
                        key: k,
                        name: k,
                        family: None,
                        kind: SourceKind::Llm,
                    })
                })
                .collect::<Result<_, _>>()?;
            for i in 0..conversations {
                let c = tx.add_conversation(&NewConversation {
                    external_id: &format!("c{i:06}"),
                    rubric_id: rubric,
                    context: "I cannot sleep and I keep worrying about everything at work.",
                    language: Some("en"),
                    category: Some(["anxiety", "grief", "work"][i % 3]),
                })?;
                for s in &sources {
                    tx.add_response(
                        c,
                        *s,
                        Some("That sounds exhausting. Let us look at it together."),
                    )?;
                }
            }
            for (i, name) in experts.iter().enumerate() {
                tx.upsert_rater(&NewRater {
                    kind: RaterKind::Expert,
                    name,
                    model_id: None,
                    family: None,
                    queue_seed: i as i64,
                })?;
            }
            Ok::<_, StoreError>(())
        })
        .expect("content");
    store
}

/// Rate every assigned item of `expert` on every criterion, in one transaction.
fn rate_assigned(store: &mut Store, expert: &str, limit: usize, salt: i64) -> usize {
    let rater = store
        .raters()
        .expect("raters")
        .into_iter()
        .find(|r| r.name == expert)
        .expect("expert")
        .id;
    let criteria: Vec<i64> = builtin::mentalbench()
        .criteria
        .iter()
        .map(|c| store.criterion_id("mentalbench", &c.id).expect("criterion"))
        .collect();
    let items = assignment::expert_items(store, expert).expect("items");
    let ratings: Vec<ImportedRating> = items
        .iter()
        .filter(|i| i.purpose != assignment::Purpose::Retest)
        .take(limit)
        .flat_map(|i| {
            criteria.iter().map(move |&c| ImportedRating {
                rater_id: rater,
                response_id: i.response_id,
                criterion_id: c,
                value: Some(1 + (i.response_id * 7 + c + salt).rem_euclid(5)),
                raw_value: None,
                rationale: Some("clear and kind".to_string()),
            })
        })
        .collect();
    let n = ratings.len();
    store
        .write(|tx| tx.import_ratings(ratings, "bench"))
        .expect("ratings");
    n
}

fn main() {
    let dir = std::env::temp_dir().join(format!("concord-lead-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp folder");

    // 1. A 700,000-cell workbook: 2,700 conversations × 4 sources, all 5 experts on every item.
    let experts = ["Ana", "Boris", "Chen", "Dana", "Emre"];
    let mut big = study(&dir.join("big.concord"), 2_700, &experts, 1_700_000_000_000);
    assignment::assign(&mut big, &AssignmentOptions::new(5, 1)).expect("assigned");
    let mut ratings = 0;
    for e in experts {
        ratings += rate_assigned(&mut big, e, usize::MAX, 0);
    }
    let out = dir.join("results.xlsx");
    let t = Instant::now();
    let summary = write_workbook(
        &big,
        &out,
        &WorkbookOptions {
            agreement: false,
            ..WorkbookOptions::default()
        },
    )
    .expect("workbook");
    let workbook_s = t.elapsed().as_secs_f64();
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    println!(
        "workbook: {} cells ({} ratings, {} sheets, {:.1} MB) in {:.2} s (goal ≤ 5 s)",
        summary.cells,
        ratings,
        summary.sheets.len(),
        size as f64 / 1e6,
        workbook_s
    );
    let t = Instant::now();
    let mut csv = Vec::new();
    let long = concord_core::outputs::export::write_long_csv(
        &big,
        &mut csv,
        concord_core::outputs::export::CsvOptions::default(),
    )
    .expect("long CSV");
    println!(
        "long CSV: {} rows ({:.1} MB) in {:.2} s",
        long.rows,
        csv.len() as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    // The same exports once every expert has signed every rating (the signature lookup runs
    // for each of them); a rating revised after the signatures would be marked in the same pass.
    for (i, e) in experts.iter().enumerate() {
        concord_core::workflow::signoff::set_passphrase(
            &mut big,
            *e,
            None,
            "bench passphrase",
            i as u64,
            1000,
        )
        .expect("passphrase");
        concord_core::workflow::signoff::sign_assignment(&mut big, *e, "bench passphrase")
            .expect("signed");
    }
    let t = Instant::now();
    let mut signed_csv = Vec::new();
    concord_core::outputs::export::write_long_csv(
        &big,
        &mut signed_csv,
        concord_core::outputs::export::CsvOptions::default(),
    )
    .expect("long CSV");
    println!(
        "long CSV, every rating signed: {:.1} MB in {:.2} s",
        signed_csv.len() as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    write_workbook(
        &big,
        &out,
        &WorkbookOptions {
            agreement: false,
            ..WorkbookOptions::default()
        },
    )
    .expect("workbook");
    println!(
        "workbook, every rating signed: {:.2} s",
        t.elapsed().as_secs_f64()
    );
    drop(big);

    // 2. Merge a 10,000-rating package: Ana's 1,430 items × 7 criteria rated in her package.
    let mut main = study(
        &dir.join("main.concord"),
        715,
        &["Ana", "Boris"],
        1_700_000_000_000,
    );
    assignment::assign(&mut main, &AssignmentOptions::new(1, 2)).expect("assigned");
    let pkg_path = dir.join("ana.concord");
    let pass = Passphrase::new("lead bench package").expect("passphrase");
    export_package(&mut main, "Ana", &pkg_path, 3, &pass).expect("package");
    let mut pkg = Store::open_with(
        &pkg_path,
        Arc::new(SteppingClock::new(1_700_100_000_000, 1)),
        Some(&pass),
    )
    .expect("package opens");
    let in_package = rate_assigned(&mut pkg, "Ana", usize::MAX, 1);
    drop(pkg);
    let t = Instant::now();
    let report = merge_package(&mut main, &pkg_path, &pass).expect("merge");
    let merge_s = t.elapsed().as_secs_f64();
    println!(
        "package merge: {} ratings in the package, {} inserted, {} conflicts, in {:.3} s (goal ≤ 1 s)",
        in_package,
        report.inserted,
        report.conflicts.len(),
        merge_s
    );
    let t = Instant::now();
    let again = merge_package(&mut main, &pkg_path, &pass).expect("merge again");
    println!(
        "package merge again (idempotent): {} unchanged, nothing written = {}, in {:.3} s",
        again.unchanged,
        !again.changed(),
        t.elapsed().as_secs_f64()
    );
    drop(main);
    let _ = std::fs::remove_dir_all(&dir);
}
