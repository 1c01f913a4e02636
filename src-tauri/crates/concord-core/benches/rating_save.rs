//! Durable save of one rating from the rating screen (`queue::rate`: scale check, upsert with
//! history, completion bookkeeping, one WAL transaction with `synchronous = FULL`), timed per call
//! on a study file, beside the floor for the same durability on the same disk: a bare rusqlite
//! INSERT + COMMIT into a one-table database with the same pragmas, in the same run.
//!
//! The same saves also go, in alternation, to a second study with the audit chain switched off:
//! the chain's cost is the ratio of the two in one run.
//!
//! Run: `cargo bench -p concord-core --bench rating_save [-- SAVES]`
//!
//! On a large study: `cargo bench -p concord-core --bench rating_save -- SAVES STUDY` times, on
//! that study file (it is written to: use a copy), the first expert with an assigned queue
//! working through it: `queue::rating_item` (what the rating screen fetches for the next item,
//! ahead of the keypress that shows it) and the durable save of each value, beside the same
//! durability floor on the same disk.

use concord_core::base::clock::SystemClock;
use concord_core::intake::demo::create_demo_at;
use concord_core::workflow::queue;
use std::sync::Arc;
use std::time::Instant;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((p * (sorted.len() - 1) as f64).round()) as usize]
}

fn summary(name: &str, mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(|a, b| a.total_cmp(b));
    let (p50, p99) = (percentile(&ms, 0.5), percentile(&ms, 0.99));
    println!(
        "{name}: n = {}, p50 = {p50:.3} ms, p95 = {:.3} ms, p99 = {p99:.3} ms, max = {:.3} ms",
        ms.len(),
        percentile(&ms, 0.95),
        ms[ms.len() - 1]
    );
    (p50, p99)
}

/// The bare insert + commit into a one-table database with Concord's pragmas, `saves` times.
fn floor(path: &std::path::Path, saves: usize) -> Vec<f64> {
    let conn = rusqlite::Connection::open(path).expect("peer db");
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
         CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, v INTEGER);",
    )
    .expect("peer schema");
    let mut floor = Vec::with_capacity(saves);
    for n in 0..saves {
        let t = Instant::now();
        conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
        conn.execute(
            "INSERT INTO t (a, b, v) VALUES (?1, ?2, ?3)",
            rusqlite::params![n as i64, n as i64 * 7, n as i64 % 5],
        )
        .expect("insert");
        conn.execute_batch("COMMIT").expect("commit");
        floor.push(t.elapsed().as_secs_f64() * 1e3);
    }
    floor
}

/// The rating screen on a large study: next item fetched and each value saved durably.
fn large_study(path: &std::path::Path, saves: usize) {
    let mut store = concord_core::store::Store::open(path, Arc::new(SystemClock)).expect("study");
    let expert = queue::profiles(&store)
        .expect("profiles")
        .profiles
        .into_iter()
        .find(|p| p.items > 0)
        .expect("an expert with an assigned queue (scale.py assigns one to expert0)");
    let q = queue::open_queue(&mut store, expert.id).expect("queue");
    let (mut fetch, mut save) = (Vec::new(), Vec::new());
    let mut n = 0;
    'items: for pass in 0.. {
        for item in 1..=q.total {
            let t = Instant::now();
            let it = queue::rating_item(&store, expert.id, item).expect("next item");
            fetch.push(t.elapsed().as_secs_f64() * 1e3);
            for c in &it.criteria {
                let value =
                    c.scale.min() + ((n + pass) as i64 % (c.scale.max() - c.scale.min() + 1));
                let t = Instant::now();
                queue::rate(&mut store, expert.id, item, &c.key, value).expect("durable save");
                save.push(t.elapsed().as_secs_f64() * 1e3);
                n += 1;
                if n >= saves {
                    break 'items;
                }
            }
        }
    }
    println!(
        "study {} ({} items in {}'s queue)",
        path.display(),
        q.total,
        expert.name
    );
    summary("queue::rating_item (next item)", fetch);
    let (c50, c99) = summary("concord queue::rate (durable, audit chain)", save);
    let dir = tempfile::tempdir_in(path.parent().unwrap_or(std::path::Path::new(".")))
        .expect("temp dir beside the study");
    let (f50, f99) = summary(
        "bare SQLite insert + commit (same pragmas, same disk)",
        floor(&dir.path().join("floor.sqlite"), saves),
    );
    println!(
        "ratio concord / floor: p50 {:.2}x, p99 {:.2}x",
        c50 / f50,
        c99 / f99
    );
}

fn main() {
    let saves: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(2000);
    if let Some(study) = std::env::args()
        .skip(1)
        .find(|a| a.parse::<usize>().is_err() && !a.starts_with('-'))
    {
        large_study(std::path::Path::new(&study), saves);
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");

    // Concord: one rater works through the demo queue, one value per call, cycling values so
    // every call after the first pass is a revision (history row + update). The same saves go
    // to two studies in alternation: one sealing each save into the audit chain (as Concord
    // always does) and one with the chain switched off, the plain save it is compared with.
    let mut chained = create_demo_at(&dir.path().join("bench.concord"), Arc::new(SystemClock), 7)
        .expect("demo study");
    let mut plain = create_demo_at(&dir.path().join("plain.concord"), Arc::new(SystemClock), 7)
        .expect("demo study");
    plain
        .disable_audit_chain_for_comparison()
        .expect("plain study");
    let setup = |store: &mut concord_core::store::Store| {
        let rater = queue::create_profile(store, "Bench rater", 3)
            .expect("profile")
            .id;
        let q = queue::open_queue(store, rater).expect("queue");
        let items: Vec<_> = (1..=q.total)
            .map(|i| queue::rating_item(store, rater, i).expect("item"))
            .collect();
        (rater, items)
    };
    let (rater, items) = setup(&mut chained);
    let (plain_rater, plain_items) = setup(&mut plain);
    let mut concord = Vec::with_capacity(saves);
    let mut unchained = Vec::with_capacity(saves);
    for n in 0..saves {
        let item = &items[n % items.len()];
        let c = &item.criteria[(n / items.len()) % item.criteria.len()];
        let value = c.scale.min() + (n as i64 % (c.scale.max() - c.scale.min() + 1));
        let plain_item = &plain_items[n % plain_items.len()];
        let mut save = |chain: bool| {
            let t = Instant::now();
            if chain {
                queue::rate(&mut chained, rater, item.item, &c.key, value).expect("durable save");
            } else {
                queue::rate(&mut plain, plain_rater, plain_item.item, &c.key, value)
                    .expect("durable save");
            }
            t.elapsed().as_secs_f64() * 1e3
        };
        // Alternate which goes first, so neither always meets a warmer cache.
        if n % 2 == 0 {
            concord.push(save(true));
            unchained.push(save(false));
        } else {
            unchained.push(save(false));
            concord.push(save(true));
        }
    }
    let intact = concord_core::guard::audit::verify(&chained).expect("verify");
    assert!(
        intact.broken.is_none(),
        "every benchmarked save was sealed into an intact chain: {:?}",
        intact.broken
    );

    // Peer: the durability floor on the same disk.
    let floor = floor(&dir.path().join("floor.sqlite"), saves);

    let (p50, p99) = summary("concord queue::rate without the audit chain", unchained);
    let (c50, c99) = summary("concord queue::rate (durable, audit chain)", concord);
    println!(
        "ratio chained / plain: p50 {:.2}x, p99 {:.2}x",
        c50 / p50,
        c99 / p99
    );
    let (f50, f99) = summary("bare SQLite insert + commit (same pragmas)", floor);
    println!(
        "ratio concord / floor: p50 {:.2}x, p99 {:.2}x",
        c50 / f50,
        c99 / f99
    );
}
