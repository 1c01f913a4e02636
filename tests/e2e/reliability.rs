//! Journey of the agreement panel's "Judge reliability" section: a study with both rubrics and an
//! expert, judged three times per response from the Judges screen by the loopback judge server
//! (real HTTP on 127.0.0.1; its repetitions disagree in a known way on both scales), then the
//! panel: the section is shown, its table carries the figures `concord_core` computes for the
//! same study, and its three figures are SVG with one mark per data point — the
//! repetitions-needed curve, the reliability diagram (binary criteria only: the 1–5 rubric says
//! so) and the length scatter with its fitted line.

use super::App;
use concord_core::base::clock::SystemClock;
use concord_core::panel::judge_reliability::{
    reliability_section, ReliabilityOptions, ReliabilityRow, ReliabilitySection, SectionState,
};
use concord_core::store::Store;
use concord_testsupport::judge_server::{reliability_study, FakeJudge};
use serde_json::json;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Conversations per rubric in the study.
const ITEMS: u64 = 15;
const REPETITIONS: u64 = 3;
const JUDGE: &str = "thrice-judge";

fn fill(app: &App, css: &str, text: &str) {
    let e = app.wait_for(css, Duration::from_secs(5));
    app.clear(&e);
    app.type_into(&e, text);
}

fn choose(app: &App, css: &str, value: &str) {
    app.wait_for(css, Duration::from_secs(5));
    app.script(
        "const s = document.querySelector(arguments[0]); s.value = arguments[1]; \
         s.dispatchEvent(new Event('change')); return 1;",
        json!([css, value]),
    );
}

/// Start a run of the judge on `rubric` from the Judges screen and wait for all its calls.
fn run_from_the_judges_screen(app: &App, base_url: &str, rubric: &str, runs_before: usize) {
    choose(app, "[data-testid=judge-rubric]", rubric);
    fill(app, "[data-testid=judge-base-url]", base_url);
    fill(app, "[data-testid=judge-model]", JUDGE);
    fill(app, "[data-testid=judge-family]", "gpt-4o");
    fill(
        app,
        "[data-testid=judge-repetitions]",
        &REPETITIONS.to_string(),
    );
    fill(app, "[data-testid=judge-concurrency]", "3");
    let start = app.wait_for("[data-testid=judge-start]", Duration::from_secs(5));
    app.click(&start);
    let send = app.wait_for("[data-testid=judge-confirm-send]", Duration::from_secs(10));
    app.click(&send);
    let done = (ITEMS * REPETITIONS).to_string();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let finished = app.script(
            "return document.querySelectorAll(`[data-testid=judge-run-row][data-done='${arguments[0]}']`).length;",
            json!([done]),
        );
        if finished.as_u64().unwrap_or(0) as usize > runs_before {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the {rubric} run must finish its {done} calls within two minutes"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// What the core computes for the panel's options on the study file the window has open.
fn core_section(study: &Path, rubric: &str) -> ReliabilitySection {
    let store = Store::open_read_only(study, Arc::new(SystemClock), None)
        .expect("the study opens read-only beside the window");
    reliability_section(
        &store,
        &ReliabilityOptions {
            rubric: Some(rubric.into()),
            ..ReliabilityOptions::default()
        },
    )
    .expect("the core computes the section")
}

/// The section's table row of `judge` × `criterion`, waiting for it.
fn row_css(judge: &str, criterion: &str) -> String {
    format!("[data-testid=rel-row][data-judge='{judge}'][data-criterion='{criterion}']")
}

fn value_of(app: &App, row: &str, cell: &str, attribute: &str) -> Option<f64> {
    let e = app.wait_for(
        &format!("{row} [data-testid={cell}]"),
        Duration::from_secs(5),
    );
    let v = app.attribute(&e, attribute).unwrap_or_default();
    (!v.is_empty()).then(|| {
        v.parse()
            .unwrap_or_else(|_| panic!("{row} {cell} {attribute} is a number: {v}"))
    })
}

/// Every figure of the table row equals the core's, to the last bit (both sides write the
/// shortest decimal that reads back as the same double).
fn assert_row_matches(app: &App, r: &ReliabilityRow) {
    let f = &r.figures;
    let row = row_css(&f.judge, &f.criterion);
    app.wait_for(&row, Duration::from_secs(30));
    let checks: [(&str, &str, Option<f64>); 14] = [
        ("rel-k", "data-value", Some(f.repetitions as f64)),
        ("rel-alpha", "data-value", f.consistency.alpha),
        ("rel-alpha", "data-lo", f.consistency.alpha_ci95[0]),
        ("rel-alpha", "data-hi", f.consistency.alpha_ci95[1]),
        (
            "rel-rho1",
            "data-value",
            f.repetitions_needed.single_repetition_reliability,
        ),
        (
            "rel-needed",
            "data-value",
            f.target.repetitions.map(|k| k as f64),
        ),
        (
            "rel-ece",
            "data-value",
            f.calibration.binary.as_ref().and_then(|b| b.ece),
        ),
        (
            "rel-brier",
            "data-value",
            f.calibration.binary.as_ref().and_then(|b| b.brier),
        ),
        ("rel-bias", "data-value", f.bias.overall.estimate),
        ("rel-length", "data-value", f.bias.length.estimate),
        ("rel-length", "data-lo", f.bias.length.ci95[0]),
        ("rel-length", "data-hi", f.bias.length.ci95[1]),
        ("rel-self", "data-value", f.bias.self_preference.estimate),
        ("rel-order", "data-value", f.bias.order.estimate),
    ];
    for (cell, attribute, want) in checks {
        assert_eq!(
            value_of(app, &row, cell, attribute),
            want,
            "{} × {}: the window's {cell} {attribute} must be the core's figure for the same study",
            f.judge,
            f.criterion
        );
    }
    let alpha = f.consistency.alpha.expect("spread repetitions have an α");
    let shown = app.text_of(&format!("{row} [data-testid=rel-alpha]"));
    assert!(
        shown.starts_with(&format!("{alpha:.3}")),
        "{} × {}: α is shown to three decimals ({shown} for {alpha})",
        f.judge,
        f.criterion
    );
}

/// Count the elements of the marks of class `class` inside figure `figure`.
fn marks(app: &App, figure: &str, class: &str, element: &str) -> u64 {
    app.script(
        "return document.querySelectorAll(`[data-testid=${arguments[0]}] svg g.${arguments[1]} ${arguments[2]}`).length;",
        json!([figure, class, element]),
    )
    .as_u64()
    .unwrap_or(0)
}

/// The three figures of the chosen row are SVG with one mark per data point of the core's row.
fn assert_figures_match(app: &App, r: &ReliabilityRow) {
    let f = &r.figures;
    let chosen = app.wait_for("[data-testid=rel-chosen]", Duration::from_secs(10));
    assert!(
        app.text(&chosen).contains(&f.judge),
        "the figures are of the chosen judge"
    );
    app.wait_for("[data-testid=rel-curve] svg", Duration::from_secs(10));
    let observed = f
        .repetitions_needed
        .rows
        .iter()
        .filter(|row| row.icc_a1.is_some())
        .count() as u64;
    assert_eq!(
        marks(app, "rel-curve", "rel-icc-observed", "circle"),
        observed,
        "{}: one observed ICC(A,1) point per k the core defines",
        f.criterion
    );
    assert_eq!(
        marks(app, "rel-curve", "rel-rho1", "circle"),
        1,
        "{}: the observed single-repetition reliability is drawn",
        f.criterion
    );
    assert_eq!(
        marks(app, "rel-curve", "rel-predicted", "path"),
        1,
        "{}: the Spearman–Brown curve over {} points is drawn",
        f.criterion,
        r.curve.len()
    );
    assert_eq!(
        marks(app, "rel-curve", "rel-target", "line"),
        1,
        "{}: the target reliability is a line across the curve",
        f.criterion
    );
    app.wait_for("[data-testid=rel-length-plot] svg", Duration::from_secs(10));
    assert_eq!(
        marks(app, "rel-length-plot", "rel-length-point", "circle") as usize,
        r.length.points.len(),
        "{}: one scatter point per response compared with the expert",
        f.criterion
    );
    assert_eq!(
        (
            marks(app, "rel-length-plot", "rel-fit", "path"),
            marks(app, "rel-length-plot", "rel-band", "path")
        ),
        (1, 1),
        "{}: the fitted line and its confidence band are drawn",
        f.criterion
    );
    match &f.calibration.binary {
        Some(b) => {
            app.wait_for("[data-testid=rel-diagram] svg", Duration::from_secs(10));
            let bins = b.bins.iter().filter(|bin| bin.n > 0).count() as u64;
            assert_eq!(
                marks(app, "rel-diagram", "rel-bin", "circle"),
                bins,
                "{}: one diagram point per non-empty bin",
                f.criterion
            );
            assert_eq!(
                marks(app, "rel-diagram", "rel-diagonal", "path"),
                1,
                "{}: the diagonal of perfect calibration is drawn",
                f.criterion
            );
        }
        None => {
            app.wait_for(
                "[data-testid=rel-diagram-binary-only]",
                Duration::from_secs(10),
            );
        }
    }
    let text_only = app.script(
        "return document.querySelectorAll('[data-testid=judge-reliability] foreignObject, [data-testid=judge-reliability] svg script').length;",
        json!([]),
    );
    assert_eq!(
        text_only,
        json!(0),
        "figures hold SVG marks and text only, nothing rendered as HTML inside them"
    );
}

#[test]
fn a_judge_run_three_times_shows_its_reliability_section_with_the_cores_figures() {
    let server = FakeJudge::start(Duration::ZERO, false, None);
    server.state.spread.store(true, Ordering::SeqCst);
    server.state.binary_spread.store(true, Ordering::SeqCst);
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let study = tmp.path().join("reliability.concord");
    drop(reliability_study(&study, ITEMS));

    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));

    // Before any judge ran, the section says why it is empty.
    let nav = app.wait_for("[data-testid=nav-agreement]", Duration::from_secs(5));
    app.click(&nav);
    app.wait_for_attribute(
        "[data-testid=judge-reliability]",
        "data-state",
        "no_judge_runs",
        Duration::from_secs(60),
    );
    assert!(
        !app.text_of("[data-testid=rel-empty]").is_empty(),
        "an empty section says why"
    );

    let nav = app.wait_for("[data-testid=nav-judges]", Duration::from_secs(5));
    app.click(&nav);
    app.wait_for("[data-testid=judge-screen]", Duration::from_secs(10));
    run_from_the_judges_screen(&app, &server.base_url(), "mentalbench", 0);
    run_from_the_judges_screen(&app, &server.base_url(), "psycrisis", 1);
    assert_eq!(
        server.state.calls_snapshot().values().sum::<u32>() as u64,
        2 * ITEMS * REPETITIONS,
        "every call went over HTTP to the loopback judge"
    );

    let nav = app.wait_for("[data-testid=nav-agreement]", Duration::from_secs(5));
    let opened = Instant::now();
    app.click(&nav);
    app.wait_for_attribute(
        "[data-testid=judge-reliability]",
        "data-state",
        "shown",
        Duration::from_secs(60),
    );
    app.wait_for("[data-testid=rel-length-plot] svg", Duration::from_secs(30));
    println!(
        "figure: judge reliability section drawn {} ms after the agreement panel was opened \
         ({ITEMS} responses × {REPETITIONS} repetitions × 7 attributes, 1,000 bootstrap resamples each)",
        opened.elapsed().as_millis()
    );

    // MentalBench (1–5): the table equals the core's, the curve and the scatter are drawn, and
    // the diagram is said to be for binary criteria only.
    let mentalbench = core_section(&study, "mentalbench");
    assert_eq!(
        mentalbench.state,
        SectionState::Shown,
        "the core shows it too"
    );
    assert_eq!(
        mentalbench.rows.len(),
        7,
        "one judge × seven MentalBench attributes"
    );
    assert_eq!(
        app.find_all("[data-testid=rel-row]").len(),
        mentalbench.rows.len(),
        "one table row per judge × criterion"
    );
    for r in &mentalbench.rows {
        assert_eq!(
            r.figures.repetitions, REPETITIONS as usize,
            "three repetitions"
        );
        assert!(
            r.figures.bias.self_preference.estimate.is_some(),
            "the judge's family (gpt-4o) answered some responses and another family the rest"
        );
        assert_row_matches(&app, r);
    }
    assert_figures_match(&app, &mentalbench.rows[0]);
    app.script(
        "document.querySelector('[data-testid=judge-reliability]').scrollIntoView({block: 'start'}); return 1;",
        json!([]),
    );
    std::thread::sleep(Duration::from_millis(200));
    app.screenshot("judge-reliability-mentalbench");
    app.script(
        "document.querySelector('[data-testid=rel-chosen]').scrollIntoView({block: 'start'}); return 1;",
        json!([]),
    );
    std::thread::sleep(Duration::from_millis(200));
    app.screenshot("judge-reliability-mentalbench-figures");

    // A figure is saved as SVG beside the study, with its marks.
    let save = app.wait_for("[data-testid=rel-length-svg]", Duration::from_secs(5));
    app.click(&save);
    let saved = app.wait_for("[data-testid=rel-saved-path]", Duration::from_secs(20));
    let text = app.text(&saved);
    let path = text
        .split_whitespace()
        .last()
        .filter(|p| p.ends_with(".svg"))
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| panic!("the saved path is shown: {text}"));
    let svg = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        svg.starts_with("<svg") && svg.contains("rel-length-point"),
        "{} must hold the length scatter as SVG with its points",
        path.display()
    );

    // Another row chosen: its figures replace the first's.
    let third = &mentalbench.rows[2];
    let button = app.wait_for(
        &format!(
            "{} button",
            row_css(&third.figures.judge, &third.figures.criterion)
        ),
        Duration::from_secs(5),
    );
    app.click(&button);
    app.wait_for(
        &format!(
            "{}.chosen",
            row_css(&third.figures.judge, &third.figures.criterion)
        ),
        Duration::from_secs(5),
    );
    assert_figures_match(&app, third);

    // PsyCrisis (binary): the reliability diagram with ECE and Brier.
    choose(&app, "[data-testid=ag-rubric]", "psycrisis");
    let psycrisis = core_section(&study, "psycrisis");
    let first = &psycrisis.rows[0];
    app.wait_for(
        &row_css(&first.figures.judge, &first.figures.criterion),
        Duration::from_secs(60),
    );
    assert_eq!(
        app.find_all("[data-testid=rel-row]").len(),
        psycrisis.rows.len(),
        "one table row per judge × PsyCrisis dimension"
    );
    for r in &psycrisis.rows {
        assert!(
            r.figures.calibration.binary.is_some(),
            "a PsyCrisis dimension is binary"
        );
        assert_row_matches(&app, r);
    }
    assert_figures_match(&app, first);
    assert!(
        first.figures.calibration.binary.as_ref().is_some_and(|b| b
            .bins
            .iter()
            .filter(|bin| bin.n > 0)
            .count()
            >= 2),
        "the spread repetitions give the diagram more than one bin"
    );
    app.script(
        "document.querySelector('[data-testid=rel-chosen]').scrollIntoView({block: 'start'}); return 1;",
        json!([]),
    );
    std::thread::sleep(Duration::from_millis(200));
    app.screenshot("judge-reliability-psycrisis");
    app.assert_accessible("judge-reliability");
}
