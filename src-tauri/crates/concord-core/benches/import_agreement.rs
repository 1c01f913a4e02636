//! Import and agreement benchmark (a plain binary, `harness = false`).
//!
//! `cargo bench -p concord-core --bench import_agreement -- [RELEASE_DIR] [--audit-only]`
//!
//! 1. MentalAlign-70k at full scale: the release's human file and judge files from RELEASE_DIR
//!    (synthetic files of the same shape when absent), plus synthetic `gemini-2.5-flash` and
//!    `o4-mini` judge files, so 1 human + 4 judges = 350,000 ratings; imported into a fresh study
//!    file in a child process whose peak resident memory is read from `/proc/self/status`.
//! 2. A MentalBench-100k-shaped CSV: 10,000 conversations × 10 answers = 100,000 responses.
//!    Then `audit verify` on that study, three times (`--audit-only` stops here).
//! 3. The agreement report over the imported release (1,000 bootstrap resamples per
//!    system-level cell, item level and CSS/ARS groups included) and the recomputation after one
//!    new rating.

use concord_core::base::clock::SystemClock;
use concord_core::intake::mentalalign;
use concord_core::intake::mentalbench;
use concord_core::intake::ImportOptions;
use concord_core::panel::agreement::AgreementData;
use concord_core::panel::agreement::AgreementEngine;
use concord_core::panel::agreement::AgreementOptions;
use concord_core::store::Store;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_xlsxwriter::Workbook;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const KEYS: [&str; 10] = [
    "original",
    "claude",
    "ds_llama",
    "ds_qwen",
    "gemini",
    "gpt4o",
    "gpt4omini",
    "llama_3",
    "qwen_2",
    "qwen_3",
];
const ATTRIBUTES: [&str; 7] = [
    "Guidance",
    "Informativeness",
    "Relevance",
    "Safety",
    "Empathy",
    "Helpfulness",
    "Understanding",
];

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

/// CPU time (user + system) of the whole process so far, from `/proc/self/stat` (in clock ticks
/// of 10 ms, the Linux default): on a shared machine wall time includes waiting for a core.
fn cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let utime: f64 = fields.get(11)?.parse().ok()?;
            let stime: f64 = fields.get(12)?.parse().ok()?;
            Some((utime + stime) * 10.0)
        })
        .unwrap_or(f64::NAN)
}

/// A MentalAlign-shaped file: 1,000 rows, judge cells with Overall, a one-sentence Explanation
/// and (every other cell) a ```json fence, like the released judge files.
fn write_release_file(path: &Path, sheet: &str, prefix: &str, seed: u64) {
    let judge = prefix.starts_with("judge");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut wb = Workbook::new();
    let ws = wb.add_worksheet();
    ws.set_name(sheet).expect("sheet name");
    ws.write_string(0, 0, "ConvID").expect("cell");
    ws.write_string(0, 1, "context").expect("cell");
    for (i, k) in KEYS.iter().enumerate() {
        ws.write_string(0, i as u16 + 2, format!("{prefix}{k}"))
            .expect("cell");
    }
    for conv in 1..=1000u32 {
        ws.write_number(conv, 0, conv as f64).expect("cell");
        ws.write_string(
            conv,
            1,
            format!("\"Lately I cannot sleep and I worry about everything at work ({conv}).\""),
        )
        .expect("cell");
        for c in 0..KEYS.len() {
            let values: Vec<i64> = (0..7).map(|_| rng.gen_range(1..=5)).collect();
            let mut parts: Vec<String> = ATTRIBUTES
                .iter()
                .zip(&values)
                .map(|(a, v)| format!("  \"{a}\": {v}"))
                .collect();
            if judge {
                parts.push(format!(
                    "  \"Overall\": {:.1}",
                    values.iter().sum::<i64>() as f64 / 7.0
                ));
                parts.push("  \"Explanation\": \"The response offers warm validation and some general direction, but its guidance stays broad and it does not fully reflect the specific situation the user describes.\"".into());
            }
            let body = format!("{{\n{}\n}}", parts.join(",\n"));
            let text = if judge && (conv as usize + c).is_multiple_of(2) {
                format!("```json\n{body}\n```")
            } else {
                body
            };
            ws.write_string(conv, c as u16 + 2, text).expect("cell");
        }
    }
    wb.save(path).expect("workbook saved");
}

fn write_mentalbench_csv(path: &Path, rows: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut out = String::with_capacity(rows * 11 * 520);
    out.push_str("context,response,Claude-3.5-Haiku,deepseek-llama,deepseek-qwen,Gemini,gpt-4o,gpt-4omini,Llama-3.1,Qwen-2.5,Qwen-3\n");
    let sentence =
        "It sounds like you are carrying a lot right now, and it makes sense that you feel tired. ";
    for r in 1..=rows {
        out.push_str(&format!(
            "\"I have been feeling low for weeks and nothing helps ({r}).\""
        ));
        for _ in 0..10 {
            let n = rng.gen_range(3..9);
            out.push_str(",\"");
            for _ in 0..n {
                out.push_str(sentence);
            }
            out.push_str("\nWould you like to talk about what happened?\"");
        }
        out.push('\n');
    }
    std::fs::write(path, out).expect("csv written");
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn child(args: &[String]) {
    let (what, input, db) = (&args[2], PathBuf::from(&args[3]), PathBuf::from(&args[4]));
    let mut store = Store::create(&db, Arc::new(SystemClock)).expect("fresh study");
    let cpu0 = cpu_ms();
    let start = Instant::now();
    let ratings = match what.as_str() {
        "mentalalign" => {
            let report = mentalalign::import_dir(&mut store, &input, &ImportOptions::default())
                .expect("release imports");
            report
                .files
                .iter()
                .map(|f| f.ratings_inserted)
                .sum::<usize>()
        }
        _ => {
            let report =
                mentalbench::import_file(&mut store, &input, None, &ImportOptions::default())
                    .expect("texts import");
            report
                .files
                .iter()
                .map(|f| f.responses_added)
                .sum::<usize>()
        }
    };
    let elapsed = start.elapsed();
    println!(
        "{} {} {} {}",
        ms(elapsed),
        peak_rss_mb(),
        ratings,
        cpu_ms() - cpu0
    );
}

fn run_child(what: &str, input: &Path, db: &Path) -> (f64, f64, usize, f64) {
    let exe = std::env::current_exe().expect("own path");
    let out = std::process::Command::new(exe)
        .args(["--child", what])
        .arg(input)
        .arg(db)
        .output()
        .expect("child runs");
    assert!(
        out.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_default();
    let mut parts = line.split_whitespace();
    let mut next = || parts.next().unwrap_or("nan").to_string();
    (
        next().parse().unwrap_or(f64::NAN),
        next().parse().unwrap_or(f64::NAN),
        next().parse().unwrap_or(0),
        next().parse().unwrap_or(f64::NAN),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        child(&args);
        return;
    }
    let release = args
        .iter()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .filter(|p| p.join("Human_judge.xlsx").is_file());
    let work = tempfile::tempdir().expect("temporary folder");
    let dir = work.path().join("release");
    std::fs::create_dir(&dir).expect("folder");
    match &release {
        Some(r) => {
            for f in [
                "Human_judge.xlsx",
                "claude_llm_judge.xlsx",
                "gpt-4o_llm_judge.xlsx",
            ] {
                std::fs::copy(r.join(f), dir.join(f)).expect("copy release file");
            }
            println!("release files: {}", r.display());
        }
        None => {
            println!("release folder not given or absent: all five files are synthetic");
            write_release_file(
                &dir.join("Human_judge.xlsx"),
                "Sheet1",
                "human_response_",
                1,
            );
            write_release_file(
                &dir.join("claude_llm_judge.xlsx"),
                "claude-3-7-sonnet-20250219_Fina",
                "judge_response_",
                2,
            );
            write_release_file(
                &dir.join("gpt-4o_llm_judge.xlsx"),
                "gpt-4o_Final_dataset_all_llm_ju",
                "judge_response_",
                3,
            );
        }
    }
    write_release_file(
        &dir.join("gemini_llm_judge.xlsx"),
        "gemini-2.5-flash_Final_dataset_",
        "judge_response_",
        4,
    );
    write_release_file(
        &dir.join("o4-mini_llm_judge.xlsx"),
        "o4-mini_Final_dataset_all_llm_j",
        "judge_response_",
        5,
    );

    let db = work.path().join("release.concord");
    let (import_ms, rss, ratings, cpu) = run_child("mentalalign", &dir, &db);
    println!(
        "MentalAlign-70k import (human + 4 judges): {import_ms:.0} ms wall, {cpu:.0} ms CPU, peak RSS {rss:.0} MB, {ratings} ratings written"
    );

    // The audit chain over the imported study: every link, every entry's hash and the digest of
    // all rating rows recomputed from the file.
    {
        let store = Store::open(&db, Arc::new(SystemClock)).expect("imported study");
        for round in 1..=3 {
            let start = Instant::now();
            let check = concord_core::guard::audit::verify(&store).expect("verify runs");
            let ms = start.elapsed().as_secs_f64() * 1e3;
            assert!(
                check.broken.is_none(),
                "the imported study verifies: {:?}",
                check.broken
            );
            println!(
                "audit verify, round {round}: {ms:.0} ms ({} entries, {ratings} ratings sealed)",
                check.entries
            );
        }
    }
    if args.iter().any(|a| a == "--audit-only") {
        return;
    }

    let csv = work.path().join("mentalbench-100k.csv");
    write_mentalbench_csv(&csv, 10_000);
    let size = std::fs::metadata(&csv).map(|m| m.len()).unwrap_or(0);
    let (bench_ms, bench_rss, responses, bench_cpu) =
        run_child("mentalbench", &csv, &work.path().join("bench.concord"));
    println!(
        "MentalBench-100k CSV import ({:.0} MB, 10,000 rows): {bench_ms:.0} ms wall, {bench_cpu:.0} ms CPU, peak RSS {bench_rss:.0} MB, {responses} responses",
        size as f64 / 1e6
    );

    let store = Store::open(&db, Arc::new(SystemClock)).expect("imported study");
    let start = Instant::now();
    let data = AgreementData::load(&store, "mentalbench").expect("ratings load");
    let load = start.elapsed();
    println!(
        "load {} responses × {} raters into memory: {:.0} ms",
        data.responses.len(),
        data.raters.len(),
        ms(load)
    );
    let options = AgreementOptions::mentalalign("mentalbench");
    let mut full = Vec::new();
    let mut engine = None;
    for _ in 0..7 {
        let d = data.clone();
        let start = Instant::now();
        let e = AgreementEngine::new(d, options.clone());
        full.push(start.elapsed());
        engine = Some(e);
    }
    let mut engine = engine.expect("engine built");
    let cells = engine.report().cells.len();
    println!(
        "full agreement report ({cells} cells, 1,000 resamples per system-level cell, item level and groups): median {:.1} ms, best {:.1} ms",
        ms(median(full.clone())),
        ms(*full.iter().min().expect("times"))
    );
    let expert = engine
        .data()
        .raters
        .iter()
        .find(|r| r.name == mentalalign::EXPERT_NAME)
        .map(|r| r.id)
        .expect("expert rater");
    let judge = engine
        .data()
        .raters
        .iter()
        .find(|r| r.name == "gpt-4o")
        .map(|r| r.id)
        .expect("judge rater");
    let criterion = engine.data().criteria[3].id;
    let responses: Vec<i64> = engine.data().responses.iter().map(|r| r.id).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for (who, rater) in [("judge", judge), ("expert", expert)] {
        let mut times = Vec::new();
        let mut touched = 0;
        for _ in 0..50 {
            let response = responses[rng.gen_range(0..responses.len())];
            let value = rng.gen_range(1..=5) as f64;
            let start = Instant::now();
            touched = engine
                .apply(rater, response, criterion, Some(value))
                .expect("known cell");
            times.push(start.elapsed());
        }
        println!(
            "recompute after one new {who} rating ({touched} cells): median {:.2} ms, best {:.2} ms, worst {:.2} ms",
            ms(median(times.clone())),
            ms(*times.iter().min().expect("times")),
            ms(*times.iter().max().expect("times"))
        );
    }
}
