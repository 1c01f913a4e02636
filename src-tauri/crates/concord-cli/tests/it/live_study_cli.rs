//! One study held at once by `concord serve` (experts saving from their browsers) and by the lead's
//! CLI reading it (overview, audit verify, export) and writing it (expert add): no command may be
//! refused, no acknowledged value lost, and the file must be whole afterwards.
//!
//! The run lasts `CONCORD_LIVE_STUDY_SECONDS` seconds (6 by default, for CI); run longer it is the
//! benchmark whose figures BENCHMARKS.md gives (`-- --nocapture` prints them).

use crate::serve_cli::{concord, invited, ok, start_serving, ui, Web};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Every (item, criterion, two values of its scale) of the session's queue.
fn cells(web: &Web) -> Vec<(i64, String, [i64; 2])> {
    let total = web.get("/api/queue")["total"]
        .as_i64()
        .expect("the queue has a total");
    let mut cells = Vec::new();
    for n in 1..=total {
        let item = web.get(&format!("/api/items/{n}"));
        for c in item["criteria"].as_array().expect("criteria") {
            let binary = c["scale"].to_string().to_lowercase().contains("binary");
            let key = c["key"].as_str().expect("key").to_string();
            cells.push((n, key, if binary { [0, 1] } else { [2, 4] }));
        }
    }
    cells
}

/// What one expert's browser did: the last acknowledged value of each cell, saves acknowledged,
/// saves refused.
type Saved = (BTreeMap<(i64, String), i64>, usize, usize);

fn save_until(web: Arc<Web>, stop: Arc<AtomicBool>, done: Arc<AtomicUsize>) -> Saved {
    let cells = cells(&web);
    let mut last = BTreeMap::new();
    let (mut acked, mut refused) = (0usize, 0usize);
    for (round, (item, key, values)) in cells.iter().cycle().enumerate() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let value = values[(round / cells.len()) % 2];
        if web.rate(*item, key, value) {
            last.insert((*item, key.clone()), value);
            acked += 1;
            done.fetch_add(1, Ordering::SeqCst);
        } else {
            refused += 1;
        }
    }
    (last, acked, refused)
}

/// The lead's commands, round and round until `stop`: each (command, error text) that failed,
/// and how many ran.
fn lead_commands_until(
    d: String,
    exports: std::path::PathBuf,
    stop: Arc<AtomicBool>,
    done: Arc<AtomicUsize>,
) -> (Vec<String>, usize) {
    let mut failures = Vec::new();
    let mut ran = 0usize;
    let mut n = 0usize;
    while !stop.load(Ordering::SeqCst) {
        let out_file = exports.join(format!("ratings-{n}.csv"));
        let out = out_file.to_str().expect("path").to_string();
        let name = format!("Dr Live {n}");
        let args: Vec<&str> = match n % 4 {
            0 => vec!["--db", &d, "overview"],
            1 => vec!["--db", &d, "audit", "verify"],
            2 => vec![
                "--db", &d, "export", "ratings", "--format", "csv", "--out", &out,
            ],
            _ => vec!["--db", &d, "expert", "add", &name],
        };
        let result = concord(&args);
        ran += 1;
        done.fetch_add(1, Ordering::SeqCst);
        if !result.status.success() {
            failures.push(format!(
                "{}: {}",
                args[2..].join(" "),
                String::from_utf8_lossy(&result.stderr).trim()
            ));
        }
        n += 1;
    }
    (failures, ran)
}

#[test]
fn serve_with_two_experts_saving_and_the_lead_at_the_cli_refuses_nothing_and_loses_nothing() {
    let seconds: u64 = std::env::var("CONCORD_LIVE_STUDY_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("s.concord");
    let d = db.to_str().expect("path").to_string();
    ok(concord(&["--db", &d, "demo"]), "demo");
    let ui = ui(dir.path());
    let (serving, base) = start_serving(&d, "127.0.0.1:0", &ui);
    let experts = [
        invited(
            &d,
            &base,
            "Demo expert A",
            "correct horse battery staple 41",
        ),
        invited(
            &d,
            &base,
            "Demo expert B",
            "purple elephant orbit window 77",
        ),
    ];
    let exports = dir.path().join("exports");
    std::fs::create_dir_all(&exports).expect("exports folder");

    let stop = Arc::new(AtomicBool::new(false));
    let (saved, commanded) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let started = Instant::now();
    let savers: Vec<_> = experts
        .into_iter()
        .map(|web| {
            let (web, stop, saved) = (Arc::new(web), stop.clone(), saved.clone());
            let keep = web.clone();
            (
                keep,
                std::thread::spawn(move || save_until(web, stop, saved)),
            )
        })
        .collect();
    let lead = {
        let (d, exports, stop) = (d.clone(), exports.clone(), stop.clone());
        let commanded = commanded.clone();
        std::thread::spawn(move || lead_commands_until(d, exports, stop, commanded))
    };
    // The run lasts its time and, on a machine too busy to do much in it, until the lead has run
    // every kind of command and the experts have saved a few rounds (at most five minutes).
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let elapsed = started.elapsed();
        let enough = commanded.load(Ordering::SeqCst) >= 4 && saved.load(Ordering::SeqCst) >= 20;
        if (elapsed >= Duration::from_secs(seconds) && enough)
            || elapsed >= Duration::from_secs(300)
        {
            break;
        }
    }
    stop.store(true, Ordering::SeqCst);
    let (failures, commands) = lead.join().expect("the lead's commands end");
    let mut saves = (0usize, 0usize);
    let mut sessions = Vec::new();
    for (web, saver) in savers {
        let (last, acked, refused) = saver.join().expect("a browser ends");
        saves = (saves.0 + acked, saves.1 + refused);
        sessions.push((web, last));
    }
    let elapsed = started.elapsed().as_secs_f64();

    assert!(
        failures.is_empty(),
        "no CLI command is refused while the server writes the study ({} of {commands} failed; first: {:?})",
        failures.len(),
        failures.first()
    );
    assert_eq!(
        saves.1, 0,
        "no save from a browser is refused while the CLI reads and writes the study"
    );
    assert!(
        commands >= 4 && saves.0 >= 20,
        "the run overlapped real work: {commands} commands and {} saves",
        saves.0
    );
    // Every acknowledged value is what the study holds now.
    let mut lost = Vec::new();
    for (web, last) in &sessions {
        let mut shown: BTreeMap<i64, serde_json::Value> = BTreeMap::new();
        for ((item, key), value) in last {
            let page = shown
                .entry(*item)
                .or_insert_with(|| web.get(&format!("/api/items/{item}")));
            let stored = page["criteria"]
                .as_array()
                .expect("criteria")
                .iter()
                .find(|c| c["key"] == key.as_str())
                .and_then(|c| c["value"].as_i64());
            if stored != Some(*value) {
                lost.push((*item, key.clone(), *value, stored));
            }
        }
    }
    assert!(
        lost.is_empty(),
        "every acknowledged value is in the study ({} lost; first: {:?})",
        lost.len(),
        lost.first()
    );
    drop(serving);
    let verify = concord(&["--db", &d, "audit", "verify"]);
    assert!(
        verify.status.success(),
        "the audit chain is intact after the run: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("the study opens");
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity check");
    assert_eq!(integrity, "ok", "SQLite finds the file whole after the run");
    println!(
        "figure: live study {elapsed:.1} s: {} saves acknowledged from 2 browsers ({:.0}/s), {} refused; \
         {commands} CLI commands ({:.1}/s), {} refused; {} values checked, {} lost; integrity {integrity}",
        saves.0,
        saves.0 as f64 / elapsed,
        saves.1,
        commands as f64 / elapsed,
        failures.len(),
        sessions.iter().map(|(_, l)| l.len()).sum::<usize>(),
        lost.len()
    );
}
