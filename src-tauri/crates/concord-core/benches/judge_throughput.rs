//! Judge runner throughput against the loopback judge server with 5 ms latency per request at
//! concurrency 64: judgments per second end to end (request, parse, durable write of ratings),
//! with a check that no judgment was lost or duplicated. Run with
//! `cargo bench -p concord-core --bench judge_throughput` (optionally `-- ITEMS`).

#[path = "../tests/judge_server/mod.rs"]
mod judge_server;

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
    let report = execute_run(
        &mut store,
        run,
        &exec,
        None,
        &CancellationToken::new(),
        &mut |_| {},
    )
    .expect("the run executes");
    let secs = start.elapsed().as_secs_f64();
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
    assert_eq!(lost, 0, "every judgment must be recorded");
    assert_eq!(duplicated, 0, "no call may be sent twice");
    assert_eq!(ratings, items as i64 * 7, "seven ratings per judgment");
}
