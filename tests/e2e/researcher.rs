//! The researcher's rough edges on the agreement panel, in the real window: the methods appendix
//! is exported from the panel (a typed or default folder, the files on disk with the content a
//! reader recomputes from, the message and any refusal beside the button).

use super::App;
use serde_json::json;
use std::path::{Path, PathBuf};
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
