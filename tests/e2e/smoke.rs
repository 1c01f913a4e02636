//! The smoke journey CI runs twice: against the binary cargo built, and against the app installed
//! from the .deb (`CONCORD_APP_BINARY`, see `scripts/dev test`). Launch on a fresh study, see the
//! overview, rate one item by keyboard, quit; the rating is on disk afterwards.

use super::App;
use serde_json::json;
use std::time::Duration;

const ENTER: &str = "\u{E007}";

#[test]
fn launch_overview_rate_one_item_quit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = dir.path().join("smoke.concord");
    {
        let app = App::launch(&study);
        app.wait_for("[data-testid=overview]", Duration::from_secs(30));
        let overview_after = app.launched_at.elapsed();
        let version = app.invoke("app_info", json!({}));
        let line = version["ok"]["version_line"].as_str().unwrap_or_default();
        assert!(
            line.starts_with(&format!("Concord {} (build ", env!("CARGO_PKG_VERSION"))),
            "the app reports its version and build: {version}"
        );
        let rss = app.app_rss_kb();
        println!(
            "figure: {} — launch to overview {:.0} ms, app RSS {} kB ({line})",
            super::app_binary().display(),
            overview_after.as_secs_f64() * 1000.0,
            rss.map(|k| k.to_string())
                .unwrap_or_else(|| "unknown".into()),
        );
        app.click(&app.wait_for("[data-testid=nav-rate]", Duration::from_secs(5)));
        let name = app.wait_for("[data-testid=new-profile]", Duration::from_secs(10));
        app.click(&name);
        app.type_into(&name, &format!("Smoke expert{ENTER}"));
        let confirm = app.wait_for("[data-testid=confirm-profile]", Duration::from_secs(10));
        app.click(&confirm);
        app.wait_for(
            "[data-testid=rating-screen] [data-testid=item-number]",
            Duration::from_secs(10),
        );
        let n = app.find_all("[data-testid=criterion]").len();
        assert!(n > 0, "the first item has criteria to rate");
        app.press(&format!("{}{ENTER}", "1".repeat(n)));
        app.wait_for_attribute(
            "[data-testid=item-number]",
            "data-item",
            "2",
            Duration::from_secs(10),
        );
    } // quit: the session ends and the window closes
    let conn = rusqlite::Connection::open(&study).expect("the study opens after quitting");
    let saved: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM rating g JOIN rater r ON r.id = g.rater_id
             WHERE r.name = 'Smoke expert' AND g.value = 1",
            [],
            |r| r.get(0),
        )
        .expect("counted");
    assert!(
        saved >= 1,
        "the item rated in the window is on disk after quitting ({saved} values)"
    );
}
