//! Journey: the window keeps answering while a long import holds the study. A long-form ratings
//! file of 2.8 million judge ratings (written here: 10,000 items × 40 judges × 7 criteria) is
//! imported from the Setup screen; while it runs, the progress bar is read twice and has moved,
//! and clicks on other screens (Overview, the agreement panel, Overview) are answered — the screen
//! is there while the import still runs, the overview marked as updating because its fresh
//! counts wait for the study (how long each click took is printed as a figure, not asserted: on
//! a loaded machine it measures the machine). The app is then stopped
//! mid-import (the import's transaction is never committed): the import's end is not what this
//! journey is about, and waiting for it would cost a minute of a debug build.
//!
//! `CONCORD_RESPONSIVE_RATINGS` sets the number of ratings for a quicker local run; it must keep
//! the import going for a few seconds (half a million ratings does in a debug build).

use super::setup::{click, fill, wait_text};
use super::App;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const RATINGS_ENV: &str = "CONCORD_RESPONSIVE_RATINGS";
const DEFAULT_RATINGS: usize = 2_800_000;
const CONVERSATIONS: usize = 1_000;
const SOURCES: usize = 10;
const CRITERIA: [&str; 7] = [
    "Guidance",
    "Informativeness",
    "Relevance",
    "Safety",
    "Empathy",
    "Helpfulness",
    "Understanding",
];

fn ratings_wanted() -> usize {
    std::env::var(RATINGS_ENV)
        .ok()
        .and_then(|v| v.trim().replace('_', "").parse().ok())
        .filter(|n: &usize| *n > 0)
        .unwrap_or(DEFAULT_RATINGS)
}

/// The items file (1,000 conversations × 10 sources) and a ratings file of `wanted` ratings:
/// judge after judge, every item on every criterion. Lines are put together from ready-made
/// pieces, so even a debug build writes the 95 MB in a few seconds.
fn write_files(dir: &Path, wanted: usize) -> (PathBuf, PathBuf, usize) {
    let items_path = dir.join("items.csv");
    let mut items = String::from("conversation_id,context,response_id,source,text\n");
    let mut ids = Vec::with_capacity(CONVERSATIONS * SOURCES);
    for c in 0..CONVERSATIONS {
        for s in 0..SOURCES {
            let id = format!("r{c}-{s}");
            items.push_str(&format!(
                "c{c},A synthetic context {c},{id},source{s},A synthetic answer {s}\n"
            ));
            ids.push(id);
        }
    }
    std::fs::write(&items_path, items).expect("the items file is written");

    let ratings_path = dir.join("ratings.csv");
    let file = std::fs::File::create(&ratings_path).expect("the ratings file is created");
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    out.write_all(b"item,rater,criterion,score\n").unwrap();
    let per_judge = ids.len() * CRITERIA.len();
    let judges = wanted.div_ceil(per_judge);
    let mut line = Vec::with_capacity(64);
    let mut written = 0;
    'all: for j in 0..judges {
        let judge = format!(",judge{j:02},");
        for (i, id) in ids.iter().enumerate() {
            for (k, criterion) in CRITERIA.iter().enumerate() {
                if written == wanted {
                    break 'all;
                }
                line.clear();
                line.extend_from_slice(id.as_bytes());
                line.extend_from_slice(judge.as_bytes());
                line.extend_from_slice(criterion.as_bytes());
                line.push(b',');
                line.push(b'1' + ((i + j + k) % 5) as u8);
                line.push(b'\n');
                out.write_all(&line).unwrap();
                written += 1;
            }
        }
    }
    out.flush().expect("the ratings file is written");
    (items_path, ratings_path, written)
}

/// The import's progress bar now: bytes read and the file's size.
fn progress(app: &App) -> (u64, u64) {
    let bar = app.wait_for("[data-testid=import-progress]", Duration::from_secs(60));
    let number = |name| {
        app.attribute(&bar, name)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("the progress bar has a numeric {name}"))
    };
    (number("data-done"), number("data-total"))
}

/// One click on a screen's button and how soon the screen was there.
struct Click {
    /// In the page: from the click's event to the first animation frame with the screen's element
    /// in the document (`performance.now()`).
    page: Duration,
    /// From the test's side: the WebDriver click sent until WebDriver finds the element. The
    /// round trip goes through the window's main thread, so a frozen window shows here (with the
    /// study read on the main thread, this click waited the whole import).
    round_trip: Duration,
}

/// Click `css` and wait for `shown` to be in the window, timed in the page and from the test.
fn timed_click(app: &App, css: &str, shown: &str) -> Click {
    let target = app.wait_for(css, Duration::from_secs(10));
    app.script(
        "window.__clickAt = null; window.__frameAt = null; \
         const [css, shown] = arguments; \
         document.querySelector(css).addEventListener('click', \
           () => { window.__clickAt = performance.now(); }, {capture: true, once: true}); \
         const observer = new MutationObserver(() => { \
           if (window.__clickAt === null || !document.querySelector(shown)) return; \
           observer.disconnect(); \
           requestAnimationFrame(() => { window.__frameAt = performance.now(); }); }); \
         observer.observe(document.body, {childList: true, subtree: true}); \
         return 1;",
        json!([css, shown]),
    );
    let started = Instant::now();
    app.click(&target);
    let deadline = started + Duration::from_secs(30);
    while app.try_find(shown).is_none() {
        assert!(
            Instant::now() < deadline,
            "{shown} never appeared after clicking {css}"
        );
    }
    let round_trip = started.elapsed();
    let page = loop {
        let v = app.script(
            "return window.__frameAt === null ? null : window.__frameAt - window.__clickAt;",
            json!([]),
        );
        if let Some(ms) = v.as_f64() {
            break Duration::from_secs_f64(ms / 1000.0);
        }
        assert!(
            Instant::now() < deadline,
            "the page never drew a frame with {shown} after the click on {css}"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    Click { page, round_trip }
}

#[test]
fn the_window_answers_a_click_while_a_long_import_holds_the_study() {
    let began = Instant::now();
    let wanted = ratings_wanted();
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("responsive.concord");
    let (items, ratings, written) = write_files(tmp.path(), wanted);
    let size_mb = std::fs::metadata(&ratings).unwrap().len() as f64 / 1e6;
    let generated = began.elapsed();

    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    // The same click with nothing running, for comparison.
    let idle = timed_click(&app, "[data-testid=nav-setup]", "[data-testid=setup]");
    click(&app, "[data-testid=step-import]");
    click(&app, "[data-testid=format-long_items]");
    fill(
        &app,
        "[data-testid=import-path]",
        &items.display().to_string(),
    );
    click(&app, "[data-testid=import-run]");
    wait_text(&app, "[data-testid=import-counts]", "the items", |t| {
        t.contains(&format!(
            "{} responses added",
            super::grouped(CONVERSATIONS * SOURCES)
        ))
    });

    click(&app, "[data-testid=format-long_ratings]");
    click(&app, "[data-testid=import-judges]");
    fill(
        &app,
        "[data-testid=import-path]",
        &ratings.display().to_string(),
    );
    let import_started = Instant::now();
    click(&app, "[data-testid=import-run]");

    // (b) The progress bar moves while the import runs.
    let first = progress(&app);
    let first_at = import_started.elapsed();
    let deadline = Instant::now() + Duration::from_secs(30);
    let second = loop {
        std::thread::sleep(Duration::from_millis(250));
        let now = progress(&app);
        if now.0 > first.0 || Instant::now() > deadline {
            break now;
        }
    };
    let second_at = import_started.elapsed();
    assert!(
        second.0 > first.0,
        "the progress bar moved while the import ran: {first:?} then {second:?}"
    );
    assert!(
        second.0 < second.1,
        "the import was still running at the second reading ({second:?}); a size of {wanted} \
         ratings is too small for this journey (see {RATINGS_ENV})"
    );

    // (a) Clicks on other screens are answered at once, though their data waits for the study:
    // Overview, the agreement panel, Overview again.
    let screens = [
        ("[data-testid=nav-overview]", "[data-testid=overview]"),
        (
            "[data-testid=nav-agreement]",
            "[data-testid=agreement-panel]",
        ),
        ("[data-testid=nav-overview]", "[data-testid=overview]"),
    ];
    let mut clicks = Vec::new();
    for (nav, screen) in screens {
        clicks.push(timed_click(&app, nav, screen));
        if clicks.len() == 1 {
            let overview = app.wait_for(screen, Duration::from_secs(1));
            assert_eq!(
                app.attribute(&overview, "data-updating").as_deref(),
                Some("true"),
                "the overview shows at once, marked as updating while the import holds the study"
            );
        }
    }
    let shot = app.screenshot("responsive-overview-during-import");
    let overview = app.wait_for("[data-testid=overview]", Duration::from_secs(1));
    assert_eq!(
        app.attribute(&overview, "data-updating").as_deref(),
        Some("true"),
        "the import still held the study after the clicks, so they were all made during it \
         (a size of {wanted} ratings is too small for this journey: see {RATINGS_ENV})"
    );
    let measured_at = import_started.elapsed();
    app.kill_app();
    drop(app);

    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    let listed = clicks
        .iter()
        .map(|c| format!("{} (round trip {})", ms(c.page), ms(c.round_trip)))
        .collect::<Vec<_>>()
        .join(", ");
    println!(
        "figure: responsive window: {written} ratings ({size_mb:.0} MB) written in {:.1} s; \
         progress {} of {} bytes at {:.1} s, {} at {:.1} s after Import; clicks during the \
         import, click to screen drawn in the page: {listed}; idle {} (round trip {}); measured \
         {:.1} s into the import; journey {:.1} s; screenshot {}",
        generated.as_secs_f64(),
        first.0,
        first.1,
        first_at.as_secs_f64(),
        second.0,
        second_at.as_secs_f64(),
        ms(idle.page),
        ms(idle.round_trip),
        measured_at.as_secs_f64(),
        began.elapsed().as_secs_f64(),
        shot.display()
    );
    // How fast the clicks were is a figure (printed above), not an assertion: under a loaded
    // machine it measures the machine. What must hold is structural and asserted above — every
    // click drew its screen while the import still held the study, which a window waiting for
    // the study on its main thread could not do.
}
