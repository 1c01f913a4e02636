//! Figures of the installed release app, printed for BENCHMARKS.md (not assertions: timings are
//! never asserted in tests). Run on purpose, with the app and the study to measure:
//! `CONCORD_APP_BINARY=/usr/bin/concord-app CONCORD_FIGURE_STUDY=ma70k.concord
//!  cargo test --test integration e2e::figures -- --ignored --nocapture`.

use super::App;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[test]
#[ignore = "measures the installed app on a large study; run by hand for BENCHMARKS.md"]
fn release_app_start_memory_and_agreement_panel() {
    let study = PathBuf::from(
        std::env::var("CONCORD_FIGURE_STUDY").expect("CONCORD_FIGURE_STUDY names the study"),
    );
    for run in 1..=3 {
        let app = App::launch(&study);
        app.wait_for("[data-testid=overview]", Duration::from_secs(60));
        let overview = app.launched_at.elapsed();
        std::thread::sleep(Duration::from_secs(5));
        let idle_rss = app.app_rss_kb();
        let nav = app.wait_for("[data-testid=nav-agreement]", Duration::from_secs(5));
        let clicked = Instant::now();
        app.click(&nav);
        app.wait_for("[data-testid=agreement-table] td", Duration::from_secs(120));
        let panel = clicked.elapsed();
        println!(
            "figure: run {run} {} — launch to overview {:.0} ms; idle app RSS {} kB; \
             agreement panel drawn {:.0} ms after the click; RSS then {} kB",
            study.display(),
            overview.as_secs_f64() * 1000.0,
            idle_rss.map(|k| k.to_string()).unwrap_or_default(),
            panel.as_secs_f64() * 1000.0,
            app.app_rss_kb().map(|k| k.to_string()).unwrap_or_default(),
        );
    }
}
