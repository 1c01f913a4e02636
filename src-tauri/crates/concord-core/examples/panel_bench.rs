//! Panel-workflow figures: the discrepancy list and status of a study with 10,000 items × 7
//! criteria × 3 experts (goal ≤ 200 ms), and rater quality over 100,800 expert ratings (goal ≤
//! 500 ms), each read from the study file as the CLI does. Peer on the same file in the same run:
//! SQLite itself computing the same numbers with one aggregate query (pairs with spread ≥ 2;
//! every expert's mean offset per criterion); the bench checks that both agree before timing.
//! Run with `cargo run --release -p concord-core --example panel_bench`; the study files go to a
//! temporary folder that is removed afterwards.

use concord_testsupport::simulated_panel;

use concord_core::panel::adjudication::DiscrepancyRule;
use concord_core::panel::adjudication::Panel;
use concord_core::panel::rater_quality;
use concord_core::panel::rater_quality::QualityOptions;
use simulated_panel::{panel_study, PanelSpec};
use std::time::Instant;

const RUNS: usize = 7;

/// Median wall time of `RUNS` runs of `f`, in milliseconds, and the last result.
fn time<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::with_capacity(RUNS);
    let mut last = None;
    for _ in 0..RUNS {
        let t = Instant::now();
        last = Some(f());
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    (times[RUNS / 2], last.expect("at least one run"))
}

fn main() {
    let dir = std::env::temp_dir().join(format!("concord-panel-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp folder");
    let experts = [("Ana", 0.4), ("Boris", 0.0), ("Chen", -0.2)];

    // 1. Discrepancies and status: 10,000 items × 7 criteria × 3 experts = 210,000 expert values.
    let path = dir.join("discrepancies.concord");
    drop(panel_study(
        Some(&path),
        &PanelSpec {
            items: 10_000,
            experts: &experts,
            drift: None,
            noise: 0.7,
            seed: 1,
        },
    ));
    let store = concord_core::store::Store::open(
        &path,
        std::sync::Arc::new(concord_core::base::clock::SystemClock),
    )
    .expect("study opens");
    let rule = DiscrepancyRule::default();
    let (ms_list, (listed, status)) = time(|| {
        let panel = Panel::load(&store, false).expect("panel");
        (panel.discrepancies(&rule, false).len(), panel.status(&rule))
    });
    let peer = rusqlite::Connection::open(&path).expect("peer connection");
    let peer_sql = "SELECT COUNT(*) FROM (SELECT g.response_id, g.criterion_id FROM rating g
        JOIN rater r ON r.id = g.rater_id WHERE r.kind = 'expert' AND g.value IS NOT NULL
        GROUP BY g.response_id, g.criterion_id HAVING COUNT(*) >= 2 AND MAX(g.value) - MIN(g.value) >= 2)";
    let (ms_peer, peer_count) = time(|| {
        peer.query_row(peer_sql, [], |r| r.get::<_, i64>(0))
            .expect("peer query")
    });
    assert_eq!(
        peer_count as usize, listed,
        "Concord and SQLite must find the same discrepant pairs"
    );
    assert_eq!(status.pairs, 70_000, "every item × criterion is a pair");
    println!(
        "discrepancies + status: 10,000 items × 7 criteria × 3 experts, {listed} discrepant of {} pairs: {ms_list:.1} ms median of {RUNS} (goal ≤ 200 ms); SQLite GROUP BY count alone: {ms_peer:.1} ms (ratio {:.2})",
        status.pairs,
        ms_list / ms_peer
    );
    drop(store);

    // 2. Rater quality over 100,800 expert ratings: 4,800 items × 7 criteria × 3 experts.
    let path = dir.join("quality.concord");
    drop(panel_study(
        Some(&path),
        &PanelSpec {
            items: 4_800,
            experts: &experts,
            drift: Some((2, 2_400, 0.5)),
            noise: 0.7,
            seed: 2,
        },
    ));
    let store = concord_core::store::Store::open(
        &path,
        std::sync::Arc::new(concord_core::base::clock::SystemClock),
    )
    .expect("study opens");
    let options = QualityOptions::default();
    let (ms_quality, report) = time(|| rater_quality::report(&store, &options).expect("report"));
    let ratings: usize = report.experts.iter().map(|e| e.ratings).sum();
    let peer = rusqlite::Connection::open(&path).expect("peer connection");
    let peer_sql = "WITH e AS (SELECT g.rater_id, g.response_id, g.criterion_id, g.value FROM rating g
            JOIN rater r ON r.id = g.rater_id WHERE r.kind = 'expert' AND g.value IS NOT NULL),
        s AS (SELECT response_id, criterion_id, SUM(value) AS total, COUNT(*) AS n FROM e
            GROUP BY response_id, criterion_id)
        SELECT r.name, c.key, AVG(e.value - (s.total - e.value) * 1.0 / (s.n - 1))
        FROM e JOIN s USING (response_id, criterion_id) JOIN rater r ON r.id = e.rater_id
        JOIN criterion c ON c.id = e.criterion_id WHERE s.n >= 2 GROUP BY e.rater_id, e.criterion_id";
    let (ms_peer, peer_rows) = time(|| {
        let mut stmt = peer.prepare(peer_sql).expect("peer query");
        stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, f64>(2)?,
            ))
        })
        .expect("peer rows")
        .collect::<Result<Vec<_>, _>>()
        .expect("peer rows")
    });
    for (rater, criterion, mean) in &peer_rows {
        let ours = report
            .experts
            .iter()
            .find(|e| &e.rater == rater)
            .and_then(|e| e.criteria.iter().find(|c| &c.criterion == criterion))
            .and_then(|c| c.severity.mean)
            .expect("every peer row has a Concord severity");
        assert!(
            (ours - mean).abs() < 1e-9,
            "{rater} {criterion}: Concord {ours} and SQLite {mean} must agree"
        );
    }
    let alarms: usize = report
        .experts
        .iter()
        .flat_map(|e| &e.criteria)
        .filter(|c| c.drift.alarm)
        .count();
    println!(
        "rater quality: {ratings} expert ratings, 3 experts × 7 criteria (severity, drift, test–retest, time, straight-lining; {alarms} drift alarms): {ms_quality:.1} ms median of {RUNS} (goal ≤ 500 ms); SQLite severity means alone: {ms_peer:.1} ms (ratio {:.2})",
        ms_quality / ms_peer
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}
