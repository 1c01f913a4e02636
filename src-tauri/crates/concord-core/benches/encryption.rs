//! Plain vs encrypted studies, side by side in one run, on the same disk: the durable save of one
//! rating from the rating screen (p50/p99), the MentalAlign-70k import, the full agreement report
//! read from the imported study, and a rater package of 10,000 ratings exported and merged back
//! (packages are always sealed; the columns differ in whether the lead's study is encrypted).
//! The goal is encrypted within 1.5× of plain on each; the ratio is printed. Saves alternate
//! between the two studies; the other measures run plain, encrypted, plain, encrypted and report
//! the best of each, so load from elsewhere on the machine falls on both sides alike.
//!
//! Run: `cargo bench -p concord-core --bench encryption -- MENTALALIGN_DIR [SAVES]`
//! (without a folder the import and the agreement report are skipped).

use concord_core::base::clock::SteppingClock;
use concord_core::base::clock::SystemClock;
use concord_core::intake::demo::create_demo_with;
use concord_core::intake::mentalalign;
use concord_core::intake::ImportOptions;
use concord_core::panel::agreement::AgreementEngine;
use concord_core::panel::agreement::AgreementOptions;
use concord_core::rubric::builtin;
use concord_core::store::{
    ImportedRating, NewConversation, NewRater, NewSource, Passphrase, RaterKind, SourceKind, Store,
    StoreError,
};
use concord_core::workflow::assignment;
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::package::export_package;
use concord_core::workflow::package::merge_package;
use concord_core::workflow::queue;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((p * (sorted.len() - 1) as f64).round()) as usize]
}

/// A demo study with a new rater's queue open: the study, the rater and the queue's items.
fn save_target(
    dir: &Path,
    key: Option<&Passphrase>,
) -> (Store, i64, Vec<concord_core::workflow::queue::RatingItem>) {
    let mut store = create_demo_with(&dir.join("saves.concord"), Arc::new(SystemClock), 7, key)
        .expect("demo study");
    let rater = queue::create_profile(&mut store, "Bench rater", 3)
        .expect("profile")
        .id;
    let q = queue::open_queue(&mut store, rater).expect("queue");
    let items = (1..=q.total)
        .map(|i| queue::rating_item(&store, rater, i).expect("item"))
        .collect();
    (store, rater, items)
}

/// p50 and p99 (ms) of durable rating saves into a plain and an encrypted study, the saves
/// alternating between the two so both see the same load on the machine.
fn rating_saves(
    plain_dir: &Path,
    enc_dir: &Path,
    key: &Passphrase,
    saves: usize,
) -> [(f64, f64); 2] {
    let mut targets = [
        save_target(plain_dir, None),
        save_target(enc_dir, Some(key)),
    ];
    let mut ms = [Vec::with_capacity(saves), Vec::with_capacity(saves)];
    for n in 0..saves {
        for (k, (store, rater, items)) in targets.iter_mut().enumerate() {
            let item = &items[n % items.len()];
            let c = &item.criteria[(n / items.len()) % item.criteria.len()];
            let value = c.scale.min() + (n as i64 % (c.scale.max() - c.scale.min() + 1));
            let t = Instant::now();
            queue::rate(store, *rater, item.item, &c.key, value).expect("durable save");
            ms[k].push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    ms.map(|mut m| {
        m.sort_by(|a, b| a.total_cmp(b));
        (percentile(&m, 0.5), percentile(&m, 0.99))
    })
}

/// Seconds to import the release, then seconds to compute the full agreement report from the
/// study file (ratings read from disk, then every cell).
fn import_and_agreement(dir: &Path, key: Option<&Passphrase>, release: &Path) -> (f64, f64) {
    let db = dir.join("mentalalign.concord");
    let mut store = Store::create_with(&db, Arc::new(SystemClock), key).expect("fresh study");
    let t = Instant::now();
    mentalalign::import_dir(&mut store, release, &ImportOptions::default())
        .expect("release imports");
    let import_s = t.elapsed().as_secs_f64();
    drop(store);
    let store = Store::open_with(&db, Arc::new(SystemClock), key).expect("reopens");
    let t = Instant::now();
    let engine = AgreementEngine::load(&store, AgreementOptions::mentalalign("mentalbench"))
        .expect("report");
    let agreement_s = t.elapsed().as_secs_f64();
    assert!(
        !engine.report().cells.is_empty(),
        "the report has cells, so the timing measured real work"
    );
    (import_s, agreement_s)
}

const SOURCES: [&str; 4] = ["original", "claude", "gpt4o", "qwen_3"];

/// A lead's study of 715 conversations × 4 sources, Ana assigned 1,430 responses with all seven
/// criteria rated (10,010 ratings).
fn lead_study(path: &Path, key: Option<&Passphrase>) -> Store {
    let mut store = Store::create_with(
        path,
        Arc::new(SteppingClock::new(1_700_000_000_000, 1)),
        key,
    )
    .expect("study");
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
            for i in 0..715 {
                let c = tx.add_conversation(&NewConversation {
                    external_id: &format!("c{i:06}"),
                    rubric_id: rubric,
                    context: "I cannot sleep and I keep worrying about everything at work.",
                    language: Some("en"),
                    category: None,
                })?;
                for s in &sources {
                    tx.add_response(c, *s, Some("That sounds exhausting. Let us look at it."))?;
                }
            }
            for (i, name) in ["Ana", "Boris"].iter().enumerate() {
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
    assignment::assign(&mut store, &AssignmentOptions::new(1, 2)).expect("assigned");
    rate_all(&mut store, 0);
    store
}

/// Rate (or re-rate, with another `salt`) every item assigned to Ana on every criterion.
fn rate_all(store: &mut Store, salt: i64) -> usize {
    let rater = store
        .raters()
        .expect("raters")
        .into_iter()
        .find(|r| r.name == "Ana")
        .expect("Ana")
        .id;
    let criteria: Vec<i64> = builtin::mentalbench()
        .criteria
        .iter()
        .map(|c| store.criterion_id("mentalbench", &c.id).expect("criterion"))
        .collect();
    let ratings: Vec<ImportedRating> = assignment::expert_items(store, "Ana")
        .expect("items")
        .iter()
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

/// Seconds to export Ana's package and to merge it back after she revised every rating, and
/// the number of ratings it carried.
fn package_round_trip(dir: &Path, key: Option<&Passphrase>) -> (f64, f64, usize) {
    let mut main = lead_study(&dir.join("lead.concord"), key);
    let pass = Passphrase::new("bench package passphrase").expect("passphrase");
    let out = dir.join("ana.concord");
    let t = Instant::now();
    let summary = export_package(&mut main, "Ana", &out, 3, &pass).expect("package");
    let export_s = t.elapsed().as_secs_f64();
    let mut pkg = Store::open_with(
        &out,
        Arc::new(SteppingClock::new(1_700_100_000_000, 1)),
        Some(&pass),
    )
    .expect("package opens");
    rate_all(&mut pkg, 1);
    drop(pkg);
    let t = Instant::now();
    let report = merge_package(&mut main, &out, &pass).expect("merge");
    let merge_s = t.elapsed().as_secs_f64();
    assert!(report.changed(), "the merge brought the revisions back");
    (export_s, merge_s, summary.ratings)
}

fn row(name: &str, plain: f64, encrypted: f64, unit: &str) {
    println!(
        "| {name} | {plain:.3} {unit} | {encrypted:.3} {unit} | {:.2}× |",
        encrypted / plain
    );
}

fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let release: Option<PathBuf> = args.iter().map(PathBuf::from).find(|p| p.is_dir());
    let saves: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(2000);
    let pass = Passphrase::new("bench study passphrase").expect("passphrase");
    let keys: [Option<&Passphrase>; 2] = [None, Some(&pass)];
    // Each whole-study measure runs plain, encrypted, plain, encrypted; the best of the two runs
    // of each is reported, so a burst of load on the machine does not land on one side only.
    const ROUNDS: usize = 2;

    let (plain_dir, enc_dir) = (
        tempfile::tempdir().expect("temp dir"),
        tempfile::tempdir().expect("temp dir"),
    );
    let saves_out = rating_saves(plain_dir.path(), enc_dir.path(), &pass, saves);
    let mut import_s = [Vec::new(), Vec::new()];
    let mut agreement_s = [Vec::new(), Vec::new()];
    let mut export_s = [Vec::new(), Vec::new()];
    let mut merge_s = [Vec::new(), Vec::new()];
    let mut total_s = [Vec::new(), Vec::new()];
    let mut n = 0;
    for _ in 0..ROUNDS {
        for (k, key) in keys.iter().enumerate() {
            if let Some(release) = &release {
                let dir = tempfile::tempdir().expect("temp dir");
                let (i, a) = import_and_agreement(dir.path(), *key, release);
                import_s[k].push(i);
                agreement_s[k].push(a);
            }
            let dir = tempfile::tempdir().expect("temp dir");
            let (e, m, count) = package_round_trip(dir.path(), *key);
            export_s[k].push(e);
            merge_s[k].push(m);
            total_s[k].push(e + m);
            n = count;
        }
    }
    println!("| measure | plain | encrypted | encrypted / plain |");
    println!("|---|---|---|---|");
    row(
        &format!("rating save p50 ({saves} saves each, alternating)"),
        saves_out[0].0,
        saves_out[1].0,
        "ms",
    );
    row(
        &format!("rating save p99 ({saves} saves each, alternating)"),
        saves_out[0].1,
        saves_out[1].1,
        "ms",
    );
    if release.is_some() {
        row(
            "MentalAlign-70k import",
            min(&import_s[0]),
            min(&import_s[1]),
            "s",
        );
        row(
            "full agreement report (read from the file + every cell)",
            min(&agreement_s[0]),
            min(&agreement_s[1]),
            "s",
        );
    }
    row(
        &format!("package export ({n} ratings)"),
        min(&export_s[0]),
        min(&export_s[1]),
        "s",
    );
    row(
        &format!("package merge ({n} revised ratings)"),
        min(&merge_s[0]),
        min(&merge_s[1]),
        "s",
    );
    row(
        &format!("package export + merge ({n} ratings)"),
        min(&total_s[0]),
        min(&total_s[1]),
        "s",
    );
}
