//! The researcher's rough edges on the agreement panel, in the real window: the table's
//! precision badges and verdict arrows say what they measure (a legend and tooltips); each
//! figure saved as SVG and PNG carries its title and a legend naming each judge, and "Saved to …"
//! appears beside the button that saved it; the methods appendix is exported from the panel (a
//! typed or default folder, the files on disk with the content a reader recomputes from, the
//! message and any refusal beside the button).

use super::App;
use concord_core::base::clock::SystemClock;
use concord_core::intake::demo::create_demo_at;
use concord_core::store::{NewRater, Occasion, RaterKind, RatingInput, StoreError};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Open the demo study's agreement panel and wait for its table.
fn open_panel(app: &App) {
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    let nav = app.wait_for("[data-testid=nav-agreement]", Duration::from_secs(5));
    app.click(&nav);
    app.wait_for("[data-testid=agreement-table]", Duration::from_secs(60));
}

/// Wait until the element at `css` has text for which `ready` holds, and return that text.
fn wait_text(app: &App, css: &str, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(e) = app.try_find(css) {
            let text = app.text(&e);
            if ready(&text) {
                return text;
            }
        }
        if Instant::now() > deadline {
            app.screenshot("researcher-timeout");
            panic!("{css} never showed the expected text (screenshot tests/artifacts/researcher-timeout.png)");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether the element at `css` sits in the same row (the nearest `.row`) as the button at
/// `button`: a message shown beside the button that caused it.
fn beside(app: &App, css: &str, button: &str) -> bool {
    app.script(
        "const el = document.querySelector(arguments[0]); \
         const row = el && el.closest('.row'); \
         return !!row && !!row.querySelector(arguments[1]);",
        json!([css, button]),
    ) == json!(true)
}

/// The absolute path at the end of a "… written to PATH" line.
fn written_to(text: &str) -> PathBuf {
    PathBuf::from(
        text.rsplit(" to ")
            .next()
            .unwrap_or_else(|| panic!("no path in {text:?}"))
            .trim(),
    )
}

const APPENDIX: [&str; 7] = [
    "ratings.csv",
    "judge_reliability.csv",
    "judge_repetitions.csv",
    "agreement.csv",
    "study.json",
    "methods.md",
    "recompute.py",
];

/// The seven files of an appendix in `dir`, with the content a reader recomputes from.
fn assert_appendix(dir: &Path) {
    for name in APPENDIX {
        assert!(
            dir.join(name).is_file(),
            "the appendix in {} holds {name}",
            dir.display()
        );
    }
    let table = std::fs::read_to_string(dir.join("agreement.csv")).unwrap();
    assert!(
        table.starts_with("criterion,attribute,"),
        "agreement.csv is the published table with its header: {}",
        &table[..table.len().min(200)]
    );
    assert!(
        table.contains("guidance") && table.contains("ICC(C,1)"),
        "the table has the MentalBench rows in the appendix's ICC form"
    );
    let study: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("study.json")).unwrap())
            .expect("study.json is JSON");
    assert_eq!(
        study["rubric"],
        json!("mentalbench"),
        "the appendix is of the rubric the panel shows"
    );
    assert_eq!(
        study["exclude_self_family"],
        json!(true),
        "it carries the panel's options (self-family exclusion on by default)"
    );
    let methods = std::fs::read_to_string(dir.join("methods.md")).unwrap();
    assert!(
        methods.contains("ICC(C,1)") && methods.contains("mentalbench"),
        "the methods paragraph names the ICC form and the rubric: {methods}"
    );
    let ratings = std::fs::read_to_string(dir.join("ratings.csv")).unwrap();
    assert!(
        ratings.lines().count() > 100,
        "ratings.csv carries every rating of the demo study"
    );
    let script = std::fs::read_to_string(dir.join("recompute.py")).unwrap();
    assert!(
        script.contains("import"),
        "recompute.py is the script that recomputes the numbers"
    );
}

#[test]
fn the_methods_appendix_is_exported_from_the_agreement_panel() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("demo.concord");
    let app = App::launch(&study);
    open_panel(&app);
    let out = app.wait_for("[data-testid=methods-out]", Duration::from_secs(20));
    let export = app.wait_for("[data-testid=methods-export]", Duration::from_secs(5));

    // A relative folder is refused, and the refusal is beside the button.
    app.type_into(&out, "appendix");
    app.click(&export);
    let refusal = wait_text(&app, "[data-testid=methods-error]", |t| !t.is_empty());
    assert!(
        refusal.contains("full path"),
        "a relative folder is refused with what to type instead: {refusal}"
    );
    assert!(
        beside(
            &app,
            "[data-testid=methods-error]",
            "[data-testid=methods-export]"
        ),
        "the refusal is shown next to the button that was pressed"
    );

    // A folder typed (or returned by the folder dialog) gets the seven files.
    let chosen = tmp.path().join("paper appendix");
    app.clear(&out);
    app.type_into(&out, &chosen.display().to_string());
    app.click(&export);
    let text = wait_text(&app, "[data-testid=methods-written]", |t| {
        t.contains("paper appendix")
    });
    assert!(
        text.starts_with("7 files written to"),
        "the message counts the files: {text}"
    );
    assert_eq!(
        written_to(&text),
        chosen,
        "the message names the folder written"
    );
    assert!(
        beside(
            &app,
            "[data-testid=methods-written]",
            "[data-testid=methods-export]"
        ),
        "the message is shown next to the button that wrote the appendix"
    );
    assert!(
        app.try_find("[data-testid=methods-error]").is_none(),
        "the earlier refusal is gone once the appendix is written"
    );
    assert_appendix(&chosen);

    // Blank: the default folder beside the study; a second export asks before replacing.
    app.script(
        "const i = document.querySelector('[data-testid=methods-out]'); \
         i.value = ''; i.dispatchEvent(new Event('input', {bubbles: true})); return 1;",
        json!([]),
    );
    app.click(&export);
    let text = wait_text(&app, "[data-testid=methods-written]", |t| {
        t.contains("methods-mentalbench")
    });
    let default = tmp.path().join("demo-exports").join("methods-mentalbench");
    assert_eq!(
        written_to(&text),
        default,
        "a blank folder means methods-<rubric> in the study's export folder"
    );
    assert_appendix(&default);
    std::fs::write(default.join("methods.md"), "stale").unwrap();
    app.script(
        "window.__asked = null; window.confirm = (m) => { window.__asked = m; return true; }; return 1;",
        json!([]),
    );
    app.click(&export);
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(default.join("methods.md")).unwrap() == "stale" {
        assert!(
            Instant::now() < deadline,
            "the appendix was not written again after the yes"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let asked = app.script("return window.__asked;", json!([]));
    assert!(
        asked.as_str().is_some_and(|m| m.contains("Replace")),
        "files already there are replaced only after the person said yes: {asked}"
    );
    assert_appendix(&default);
    app.screenshot("methods-appendix-exported");
}

/// The demo study at `study` with a second judge (`name`) who gave the demo judge's values, so
/// every figure has two judges to tell apart.
fn demo_with_two_judges(study: &Path, name: &str) {
    let mut store = create_demo_at(study, Arc::new(SystemClock), 7).expect("demo study");
    let judge = store
        .raters()
        .unwrap()
        .into_iter()
        .find(|r| r.name == "Demo judge")
        .expect("the demo has its judge")
        .id;
    let ratings = store.ratings_of_rater(judge).unwrap();
    store
        .write(|tx| {
            let second = tx.upsert_rater(&NewRater {
                kind: RaterKind::Judge,
                name,
                model_id: Some(name),
                family: None,
                queue_seed: 11,
            })?;
            for r in ratings.iter().filter(|r| r.occasion == Occasion::First) {
                tx.set_rating(&RatingInput {
                    rater_id: second,
                    response_id: r.response_id,
                    criterion_id: r.criterion_id,
                    occasion: Occasion::First,
                    value: r.value,
                    raw_value: None,
                    rationale: None,
                    origin: "test",
                })?;
            }
            Ok::<_, StoreError>(())
        })
        .expect("the second judge's ratings are written");
}

/// Click `button`, wait for "Saved to PATH.ext" beside it and return the path.
fn save_beside(app: &App, button: &str, ext: &str) -> PathBuf {
    let css = format!("[data-testid={button}]");
    let b = app.wait_for(&css, Duration::from_secs(10));
    app.click(&b);
    let text = wait_text(app, "[data-testid=saved-path]", |t| {
        t.ends_with(&format!(".{ext}"))
            && t.contains(button.trim_end_matches("-svg").trim_end_matches("-png"))
    });
    assert!(
        beside(app, "[data-testid=saved-path]", &css),
        "\"{text}\" is shown next to the button that saved it ({button})"
    );
    PathBuf::from(text.trim_start_matches("Saved to ").trim())
}

/// Width and height of a PNG, from its IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[1..4], b"PNG", "a PNG file");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

/// The number in `attr="…"` of the outermost element of `svg`.
fn root_attr(svg: &str, attr: &str) -> f64 {
    let root = &svg[..svg.find('>').expect("an SVG root")];
    let key = format!("{attr}=\"");
    let start = root
        .find(&key)
        .unwrap_or_else(|| panic!("no {attr} on {root}"))
        + key.len();
    root[start..]
        .split('"')
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{attr} of {root} is a number"))
}

#[test]
fn badges_say_what_they_measure_and_saved_figures_carry_title_and_legend() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("demo.concord");
    demo_with_two_judges(&study, "Second judge");
    let app = App::launch(&study);
    open_panel(&app);
    app.wait_for("[data-testid=verdict]", Duration::from_secs(30));

    // The precision badges say what they measure, and a legend explains them and the arrows.
    let badges = app.find_all("[data-testid=precision]");
    assert!(
        !badges.is_empty(),
        "the demo's cells carry a precision badge"
    );
    for badge in &badges {
        let text = app.text(badge);
        assert!(
            text.starts_with("CI: "),
            "a badge names what it grades (the CI), not the agreement: {text:?}"
        );
        let title = app.attribute(badge, "title").unwrap_or_default();
        assert!(
            title.contains("95% CI") && title.contains("not how well the raters agree"),
            "a badge's tooltip says it grades the interval's width: {title:?}"
        );
    }
    let legend = app.text_of("[data-testid=ag-legend]");
    for needle in [
        "CI: good",
        "CI: moderate",
        "CI: poor",
        "width of its 95% CI",
        "↓",
        "≈",
        "↑",
        "expert band",
        "F-based",
    ] {
        assert!(
            legend.contains(needle),
            "the table's legend explains {needle:?}: {legend}"
        );
    }
    let arrow = app.wait_for("[data-testid=verdict]", Duration::from_secs(5));
    let label = app.attribute(&arrow, "aria-label").unwrap_or_default();
    let title = app.attribute(&arrow, "title").unwrap_or_default();
    assert!(
        label.contains("expert band") && title.contains("Below: the judge's whole 95% CI"),
        "an arrow says what it places against what, with the rule: {label:?} / {title:?}"
    );
    app.screenshot("agreement-legend");

    // Every figure, saved as SVG and PNG, carries its title and a legend naming each judge.
    let judges = app.script(
        "return [...document.querySelectorAll('[data-testid=agreement-table] thead th')] \
           .slice(1).map(th => th.textContent.trim());",
        json!([]),
    );
    let judges: Vec<String> = serde_json::from_value(judges).unwrap();
    assert!(
        judges.len() == 2 && judges.iter().any(|j| j == "Second judge"),
        "the table compares the demo's judge and the second one: {judges:?}"
    );
    app.wait_for("[data-testid=forest-plot] svg", Duration::from_secs(30));
    for (figure, title, names_judges) in [
        ("forest", "Forest plot: ICC(C,1) with 95% CI", true),
        (
            "bland-altman",
            "Bland–Altman: bias and limits of agreement",
            true,
        ),
        ("heatmap", "Heatmap: ICC(C,1)", false),
    ] {
        let path = save_beside(&app, &format!("{figure}-svg"), "svg");
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(
            svg.contains("class=\"concord-figure-title\"")
                && svg.contains(&format!(">{title}</text>")),
            "{figure}: the saved SVG shows its title as text on the image: {}",
            path.display()
        );
        let legend = svg
            .split("class=\"concord-figure-legend\"")
            .nth(1)
            .unwrap_or_else(|| panic!("{figure}: the saved SVG has a legend: {}", path.display()));
        if names_judges {
            for judge in &judges {
                assert!(
                    legend.contains(&format!(">{judge}</text>")),
                    "{figure}: the saved legend names {judge}: {}",
                    path.display()
                );
            }
            assert_eq!(
                legend.matches("class=\"concord-legend-entry\"").count(),
                judges.len(),
                "{figure}: one legend entry (colour and name) per judge"
            );
        } else {
            assert!(
                legend.contains("-ramp"),
                "{figure}: the saved legend carries the ICC colour ramp"
            );
        }
        let height = root_attr(&svg, "height");
        let png = save_beside(&app, &format!("{figure}-png"), "png");
        let (_, png_height) = png_size(&std::fs::read(&png).unwrap());
        // Kept for a person to look at after the run.
        let _ = std::fs::copy(
            &png,
            super::artifacts_dir().join(format!("saved-{figure}.png")),
        );
        assert_eq!(
            f64::from(png_height),
            (height * 2.0).ceil(),
            "{figure}: the PNG is the same image (title and legend included) at twice the size"
        );
    }
    app.screenshot("agreement-figures-saved");
}
