//! Many raters, one study: RATERS experts (separate sessions, one thread and connection each)
//! each save a value every 300 ms for SECONDS over loopback to a real server; every save's
//! latency (request sent → acknowledgement read) is timed. Afterwards the server is stopped and
//! every acknowledged value is looked up in the study file: none may be missing.
//!
//! Run: `cargo bench --profile dev -p concord-web --bench web_load [-- SECONDS RATERS]`
//! (defaults 120 and 30; prints one JSON line).

use concord_core::app::open::{open, WhenMissing};
use concord_core::app::open_study::OpenStudy;
use concord_core::base::clock::{Clock, SystemClock};
use concord_core::base::study_location::StudyPath;
use concord_core::store::Store;
use concord_testsupport::lead_study::populate;
use rand::SeedableRng;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const PASSPHRASE: &str = "correct horse battery staple 41";

fn open_study(path: &Path) -> OpenStudy {
    // The server seals web access with a key derived from the study's lead key.
    concord_core::app::open_study::keep_lead_keys_in(
        concord_core::store::lead_key::KeyStore::Folder(
            std::env::temp_dir().join("concord-bench-lead-keys"),
        ),
    );
    open(
        &StudyPath::Explicit(path.to_path_buf()),
        WhenMissing::Refuse,
        Arc::new(SystemClock),
        1,
        None,
    )
    .expect("the study opens")
    .study
}

struct Rater {
    latencies_ms: Vec<f64>,
    /// (item, criterion, value) the server acknowledged.
    acknowledged: Vec<(i64, String, i64)>,
    errors: usize,
}

fn rater(base: String, token: String, seconds: u64, seed: u64) -> Rater {
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    let r = client
        .post(format!("{base}/api/invitation/accept"))
        .json(&serde_json::json!({"token": token, "passphrase": PASSPHRASE}))
        .send()
        .expect("accept");
    assert!(r.status().is_success(), "the invitation is taken up");
    let cookie = r.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .split(';')
        .next()
        .expect("pair")
        .to_string();
    let session: serde_json::Value = r.json().expect("session");
    let csrf = session["csrf"].as_str().expect("csrf").to_string();
    let get = |path: &str| -> serde_json::Value {
        client
            .get(format!("{base}{path}"))
            .header("cookie", &cookie)
            .send()
            .and_then(|r| r.json())
            .expect("GET")
    };
    let queue = get("/api/queue");
    let total = queue["total"].as_i64().expect("total");
    let mut out = Rater {
        latencies_ms: Vec::new(),
        acknowledged: Vec::new(),
        errors: 0,
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (mut item, mut criteria, mut next_criterion) = (1, Vec::<String>::new(), 0usize);
    let start = Instant::now();
    let mut due = start;
    while start.elapsed() < Duration::from_secs(seconds) {
        if next_criterion == criteria.len() {
            if !criteria.is_empty() {
                item = item % total + 1;
            }
            let it = get(&format!("/api/items/{item}"));
            criteria = it["criteria"]
                .as_array()
                .expect("criteria")
                .iter()
                .map(|c| c["key"].as_str().expect("key").to_string())
                .collect();
            next_criterion = 0;
        }
        due += Duration::from_millis(300);
        let value = rand::Rng::gen_range(&mut rng, 1..=5);
        let criterion = criteria[next_criterion].clone();
        let sent = Instant::now();
        let r = client
            .post(format!("{base}/api/items/{item}/rate"))
            .header("cookie", &cookie)
            .header("x-csrf-token", &csrf)
            .json(&serde_json::json!({"criterion": criterion, "value": value}))
            .send();
        let ok = r.is_ok_and(|r| r.status().is_success() && r.bytes().is_ok());
        match ok {
            true => {
                out.latencies_ms.push(sent.elapsed().as_secs_f64() * 1000.0);
                // A later value for the same cell replaces this one in the study.
                out.acknowledged
                    .retain(|(i, c, _)| !(*i == item && *c == criterion));
                out.acknowledged.push((item, criterion, value));
            }
            false => out.errors += 1,
        }
        next_criterion += 1;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    out
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((p * (sorted.len() - 1) as f64).round()) as usize]
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let seconds: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(120);
    let raters: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(30);
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("load.concord");
    let names: Vec<String> = (1..=raters).map(|i| format!("Rater {i:02}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut store = Store::create(&path, Arc::new(SystemClock)).expect("study");
    // Created on the lead's machine: the server seals web access with the study's lead key.
    store
        .use_lead_keys(concord_core::store::lead_key::KeyStore::Folder(
            std::env::temp_dir().join("concord-bench-lead-keys"),
        ))
        .expect("lead keys");
    populate(&mut store, 15, &refs);
    store.close().expect("close");
    let mut study = open_study(&path);
    let options = concord_core::workflow::assignment::AssignmentOptions::new(raters, 3);
    concord_core::app::setup::assign(&mut study, &options).expect("assign");
    let mut rng = rand::rngs::OsRng;
    let tokens: Vec<String> = names
        .iter()
        .map(|n| {
            concord_core::app::web::invite(&mut study, n, 1, &mut rng)
                .expect("invite")
                .token
        })
        .collect();
    let ui = dir.path().join("ui");
    std::fs::create_dir_all(&ui).expect("ui");
    std::fs::write(ui.join("index.html"), "<!doctype html>").expect("index");
    let mut options = concord_web::ServeOptions::new("127.0.0.1:0".parse().expect("addr"), ui);
    // Logins are not what is measured; the saves are.
    options.iterations = 1_000;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let running =
        concord_web::start(study, options, clock, Box::new(rand::rngs::OsRng)).expect("serve");
    let base = running.url();
    let started = Instant::now();
    let handles: Vec<_> = tokens
        .into_iter()
        .enumerate()
        .map(|(i, token)| {
            let base = base.clone();
            std::thread::spawn(move || rater(base, token, seconds, i as u64))
        })
        .collect();
    let results: Vec<Rater> = handles
        .into_iter()
        .map(|h| h.join().expect("a rater thread"))
        .collect();
    let wall = started.elapsed().as_secs_f64();
    running.stop();

    let study = open_study(&path);
    let mut lost = 0usize;
    let mut acknowledged = 0usize;
    for (name, r) in names.iter().zip(&results) {
        let rater_id = study
            .store()
            .expert_by_name(name)
            .expect("read")
            .expect("rater")
            .id;
        let mut items = std::collections::HashMap::new();
        for (item, criterion, value) in &r.acknowledged {
            acknowledged += 1;
            let shown = items.entry(*item).or_insert_with(|| {
                concord_core::app::rating::rating_item(&study, rater_id, *item).expect("item")
            });
            let stored = shown
                .criteria
                .iter()
                .find(|c| &c.key == criterion)
                .and_then(|c| c.value);
            if stored != Some(*value) {
                lost += 1;
            }
        }
    }
    let mut all: Vec<f64> = results
        .iter()
        .flat_map(|r| r.latencies_ms.clone())
        .collect();
    all.sort_by(|a, b| a.total_cmp(b));
    let errors: usize = results.iter().map(|r| r.errors).sum();
    println!(
        "{}",
        serde_json::json!({
            "bench": "web_load",
            "raters": raters,
            "seconds": seconds,
            "wall_s": (wall * 10.0).round() / 10.0,
            "saves_acknowledged": all.len(),
            "saves_per_s": ((all.len() as f64 / wall) * 10.0).round() / 10.0,
            "errors": errors,
            "distinct_values_checked": acknowledged,
            "lost": lost,
            "p50_ms": (percentile(&all, 0.5) * 100.0).round() / 100.0,
            "p95_ms": (percentile(&all, 0.95) * 100.0).round() / 100.0,
            "p99_ms": (percentile(&all, 0.99) * 100.0).round() / 100.0,
            "max_ms": (all.last().copied().unwrap_or(0.0) * 100.0).round() / 100.0,
        })
    );
}
