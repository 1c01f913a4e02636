//! Judge runner throughput against the loopback judge server with 5 ms latency per request at
//! concurrency 64: judgments per second end to end (request, parse, durable write of ratings),
//! with a check that no judgment was lost or duplicated. Run with
//! `cargo bench -p concord-core --bench judge_throughput` (optionally `-- ITEMS`).
//!
//! Besides the whole-run rate it prints the rate in each tenth of the run, from the runner's own
//! progress reports, so a ledger that slows the runner as it grows (a lookup that scans the calls
//! already made, an index missing on the claim path) shows as a falling rate from the first tenth
//! to the last; the last line gives the ratio of the last tenth's rate to the first's.

use concord_testsupport::judge_server;

use concord_core::judge::{
    execute_run, open_run, CancellationToken, Execution, ProviderKind, RunSettings,
};
use judge_server::{study_with_items, FakeJudge};
use std::time::{Duration, Instant};

fn main() {
    let items: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000);
    let server = FakeJudge::start(Duration::from_millis(5), false, None);
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join("bench.concord");
    let (mut store, _) = study_with_items(&path, &judge_server::mentalbench(), items);
    let settings = RunSettings::new(
        ProviderKind::OpenaiCompatible,
        &server.base_url(),
        "bench-judge",
    );
    let run = open_run(&mut store, &settings).expect("run").run_id;
    let exec = Execution {
        concurrency: 64,
        timeout_ms: 10_000,
        ..Execution::default()
    };
    let start = Instant::now();
    // (seconds since start, judgments done) at each report, to read the rate per tenth.
    let mut marks: Vec<(f64, u64)> = vec![(0.0, 0)];
    let report = execute_run(
        &mut store,
        run,
        &exec,
        None,
        &CancellationToken::new(),
        &mut |p| marks.push((start.elapsed().as_secs_f64(), p.done)),
    )
    .expect("the run executes");
    let secs = start.elapsed().as_secs_f64();
    marks.push((secs, report.status.done as u64));
    let tenths = rate_per_tenth(&marks, items);
    let calls = server.state.calls_snapshot();
    let duplicated = calls.values().filter(|&&n| n > 1).count();
    let sent: u64 = calls.values().map(|&n| n as u64).sum();
    let lost = items - report.status.done as u64;
    let ratings: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM rating", [], |r| r.get(0))
        .unwrap();
    println!(
        "judge_throughput: {items} judgments in {secs:.2} s = {:.0} judgments/s at concurrency 64, 5 ms latency; \
         lost {lost}, duplicated {duplicated}, requests {sent}, ratings {ratings}, max open requests {}",
        items as f64 / secs,
        server.state.max_in_flight.load(std::sync::atomic::Ordering::SeqCst)
    );
    println!("| tenth of the run | judgments done at its end | judgments/s in it |");
    println!("|---|---|---|");
    for (k, (done, rate)) in tenths.iter().enumerate() {
        println!("| {} | {done} | {rate:.0} |", k + 1);
    }
    if let (Some(first), Some(last)) = (tenths.first(), tenths.last()) {
        println!(
            "last tenth / first tenth: {:.2}; study file {:.1} MB",
            last.1 / first.1,
            file_mb(&path)
        );
    }
    assert_eq!(lost, 0, "every judgment must be recorded");
    assert_eq!(duplicated, 0, "no call may be sent twice");
    assert_eq!(ratings, items as i64 * 7, "seven ratings per judgment");
}

/// The judgments done at the end of each tenth of the run and the rate within it, from the
/// progress marks (time, done): each tenth ends at the first mark reaching k/10 of the items.
fn rate_per_tenth(marks: &[(f64, u64)], items: u64) -> Vec<(u64, f64)> {
    let mut out = Vec::new();
    let mut from = marks[0];
    for k in 1..=10u64 {
        let goal = items * k / 10;
        let Some(&to) = marks.iter().find(|m| m.1 >= goal) else {
            break;
        };
        if to.0 > from.0 {
            out.push((to.1, (to.1 - from.1) as f64 / (to.0 - from.0)));
        }
        from = to;
    }
    out
}

/// The study file with its write-ahead log, in megabytes.
fn file_mb(path: &std::path::Path) -> f64 {
    let wal = path.with_extension("concord-wal");
    [path.to_path_buf(), wal]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len() as f64 / 1e6)
        .sum()
}
