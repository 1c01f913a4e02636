//! The researcher's rough edges on the agreement panel, in the real window: the table's
//! precision badges and verdict arrows say what they measure (a legend and tooltips); each
//! figure saved as SVG and PNG carries its title and a legend naming each judge, and "Saved to …"
//! appears beside the button that saved it; the methods appendix is exported from the panel (a
//! typed or default folder, the files on disk with the content a reader recomputes from, the
//! message and any refusal beside the button); 中文 reaches the panel's attribute names, badges,
//! legend and verdict cards with their rules, `<html lang>` from the first frame and the native
//! menu's language; and under a dark system theme the figures are drawn, and saved, on a dark page
//! with light ink.

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

const APPENDIX: [&str; 16] = [
    "ratings.csv",
    "judge_reliability.csv",
    "judge_repetitions.csv",
    "pairwise.csv",
    "pairwise_position.csv",
    "pairwise_agreement.csv",
    "prevalence.csv",
    "gstudy.csv",
    "dawid_skene.csv",
    "adjudicated.csv",
    "agreement_by_category.csv",
    "categories.csv",
    "agreement.csv",
    "study.json",
    "methods.md",
    "recompute.py",
];

/// The seventeen files of the demo's MentalBench appendix in `dir` (every appendix's sixteen and
/// the table by turn of a rubric with transcripts), with the content a reader recomputes from.
fn assert_appendix(dir: &Path) {
    for name in APPENDIX.iter().chain(&["agreement_by_turn.csv"]) {
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

    // A folder typed (or returned by the folder dialog) gets the seventeen files: the demo's
    // MentalBench rates replies of transcripts too, so its appendix has the table by turn.
    let chosen = tmp.path().join("paper appendix");
    app.clear(&out);
    app.type_into(&out, &chosen.display().to_string());
    app.click(&export);
    let text = wait_text(&app, "[data-testid=methods-written]", |t| {
        t.contains("paper appendix")
    });
    assert!(
        text.starts_with("17 files written to"),
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
    app.assert_accessible("agreement-two-judges-with-figures");
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

/// Whether `text` holds a Chinese character.
fn chinese(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// The texts of every element matching `css`.
fn texts(app: &App, css: &str) -> Vec<String> {
    app.find_all(css).iter().map(|e| app.text(e)).collect()
}

/// The settings file the shell keeps in the app's config folder (`XDG_CONFIG_HOME`, as
/// `App::launch` sets it beside the study).
fn settings_file(study: &Path) -> PathBuf {
    study
        .with_extension("config")
        .join("org.concord.desktop")
        .join("settings.json")
}

#[test]
fn chinese_reaches_the_panel_its_verdict_cards_the_menu_and_html_lang() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("demo.concord");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    let lang = || app.script("return document.documentElement.lang;", json!([]));
    assert_eq!(lang(), json!("en"), "the window starts in English");
    let switch = app.wait_for("[data-testid=lang-switch]", Duration::from_secs(5));
    app.click(&switch);
    assert_eq!(
        lang(),
        json!("zh-CN"),
        "<html lang> follows the switch to 中文"
    );
    open_panel(&app);
    app.wait_for("[data-testid=verdict]", Duration::from_secs(30));

    // Attribute names (criteria and groups), the table's badges, bands and legend.
    let attributes = texts(&app, "[data-testid=attribute]");
    assert!(
        attributes.len() >= 9,
        "seven MentalBench attributes and two groups: {attributes:?}"
    );
    for a in &attributes {
        assert!(chinese(a), "the attribute {a:?} is named in Chinese");
    }
    assert!(
        attributes.iter().any(|a| a == "指导性")
            && attributes.iter().any(|a| a == "认知支持分（CSS）"),
        "the rubric's own Chinese labels, a group with its short id: {attributes:?}"
    );
    for badge in app.find_all("[data-testid=precision]") {
        let text = app.text(&badge);
        let title = app.attribute(&badge, "title").unwrap_or_default();
        assert!(
            text.starts_with("CI：") && chinese(&text) && chinese(&title),
            "a precision badge and its tooltip are Chinese: {text:?} / {title:?}"
        );
    }
    for band in texts(&app, "[data-testid=expert-band]") {
        assert!(
            band.starts_with("专家 "),
            "the expert band is named in Chinese: {band:?}"
        );
    }
    let arrow = app.wait_for("[data-testid=verdict]", Duration::from_secs(5));
    for attr in ["aria-label", "title"] {
        let said = app.attribute(&arrow, attr).unwrap_or_default();
        assert!(
            chinese(&said) && !said.contains("Below:"),
            "a verdict arrow's {attr} and its rule are Chinese: {said:?}"
        );
    }
    let legend = app.text_of("[data-testid=ag-legend]");
    assert!(
        legend.contains("置信区间") && legend.contains("专家区间"),
        "the table's legend is Chinese: {legend}"
    );

    // The verdict cards: each finding's result and its rule, and the experts' baseline.
    let card = app.wait_for("[data-testid=verdict-card]", Duration::from_secs(30));
    let card_text = app.text(&card);
    for part in ["finding-summary", "finding-rule"] {
        for said in texts(
            &app,
            &format!("[data-testid=verdict-card] [data-testid={part}]"),
        ) {
            assert!(chinese(&said), "a card's {part} is Chinese: {said:?}");
        }
    }
    for english in [
        "Leave each expert out",
        "not computed",
        "The judge's ICC(A,1)",
        "judge-only mean",
        "Bias = ",
        "at least 3 human annotators",
        "can replace the experts",
    ] {
        assert!(
            !card_text.contains(english),
            "no English left on the card ({english:?}): {card_text}"
        );
    }
    assert!(
        card_text.contains("替代标注者检验") && card_text.contains("至少 3 位人类标注者"),
        "the card names the alt-test and says in Chinese why it cannot run with two experts: {card_text}"
    );
    let baseline = app.text_of("[data-testid=baseline-method]");
    assert!(
        baseline.contains("REML 方差分量") && baseline.contains("完全设计"),
        "the expert baseline's method is Chinese: {baseline}"
    );
    for option in texts(&app, "[data-testid=verdict-attribute] option") {
        assert!(
            chinese(&option),
            "the card's attribute chooser is Chinese: {option:?}"
        );
    }
    app.screenshot("agreement-zh");

    // PsyCrisis' binary dimensions by their Chinese names.
    let select = app.wait_for("[data-testid=ag-rubric]", Duration::from_secs(5));
    app.script(
        "const s = arguments[0]; s.value = 'psycrisis'; s.dispatchEvent(new Event('change')); return 1;",
        json!([{"element-6066-11e4-a52e-4f735466cecf": select.0}]),
    );
    app.wait_for("[data-testid=binary-table]", Duration::from_secs(30));
    let dimensions = texts(&app, "[data-testid=binary-attribute]");
    assert!(
        !dimensions.is_empty() && dimensions.iter().all(|d| chinese(d)),
        "the binary dimensions are named in Chinese: {dimensions:?}"
    );

    // The window told the shell, which rebuilt the native menu in Chinese and keeps the language
    // for the next launch (the labels themselves are checked in menu.rs's tests).
    let settings = settings_file(&study);
    let deadline = Instant::now() + Duration::from_secs(10);
    let language = loop {
        let saved = std::fs::read(&settings)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .map(|v| v["language"].clone());
        if saved == Some(json!("zh")) || Instant::now() > deadline {
            break saved;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        language,
        Some(json!("zh")),
        "the shell was told the window's language for its menu ({})",
        settings.display()
    );
    drop(app);

    // A relaunch is Chinese from the first frame: <html lang> too, before any switch (the window
    // returns to the screen it was on).
    let app = App::launch(&study);
    app.wait_for("[data-testid=nav-agreement]", Duration::from_secs(60));
    assert_eq!(
        app.script("return document.documentElement.lang;", json!([])),
        json!("zh-CN"),
        "a relaunch in Chinese says so in <html lang> without a switch"
    );
    let nav = app.text_of("[data-testid=nav-agreement]");
    assert!(chinese(&nav), "and its screens are Chinese: {nav:?}");
    app.screenshot("relaunch-zh");
}

/// The perceived lightness (0 dark … 255 light) of a CSS `rgb(…)` or `#rrggbb` colour; NaN for
/// a transparent one, which is neither dark nor light.
fn lightness(color: &str) -> f64 {
    let c = color.trim();
    if c.starts_with("rgba(") && c.trim_end_matches(')').ends_with(", 0") {
        return f64::NAN;
    }
    let parts: Vec<f64> = if let Some(hex) = c.strip_prefix('#') {
        (0..3)
            .map(|i| f64::from(u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or(0)))
            .collect()
    } else {
        c.trim_start_matches("rgba(")
            .trim_start_matches("rgb(")
            .trim_end_matches(')')
            .split(',')
            .take(3)
            .map(|p| p.trim().parse().unwrap_or(0.0))
            .collect()
    };
    assert_eq!(parts.len(), 3, "{color:?} is a colour");
    0.299 * parts[0] + 0.587 * parts[1] + 0.114 * parts[2]
}

/// The `fill` of the first element with `class="name"` in `svg`.
fn fill_of(svg: &str, name: &str) -> String {
    let at = svg
        .find(&format!("class=\"{name}\""))
        .unwrap_or_else(|| panic!("no {name} in the saved figure"));
    let tag_end = at + svg[at..].find('>').unwrap();
    let tag = &svg[svg[..at].rfind('<').unwrap()..tag_end];
    let start = tag.find("fill=\"").expect("a fill") + 6;
    tag[start..].split('"').next().unwrap().to_string()
}

#[test]
fn under_a_dark_theme_the_figures_are_drawn_and_saved_dark() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("dark.concord");
    let app = App::launch_with(&study, &[("GTK_THEME", "Adwaita:dark")]);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    assert_eq!(
        app.script(
            "return window.matchMedia('(prefers-color-scheme: dark)').matches;",
            json!([])
        ),
        json!(true),
        "the window sees the dark system theme"
    );
    open_panel(&app);
    app.wait_for("[data-testid=forest-plot] svg", Duration::from_secs(30));
    for figure in ["forest-plot", "bland-altman", "heatmap"] {
        let colors = app.script(
            "const box = document.querySelector(`[data-testid=${arguments[0]}]`); \
             const svg = [...box.querySelectorAll('svg')].pop(); \
             const tick = svg.querySelector('text'); \
             return [getComputedStyle(box).backgroundColor, getComputedStyle(svg).backgroundColor, \
                     getComputedStyle(tick).fill, getComputedStyle(box.querySelector('h2')).color];",
            json!([figure]),
        );
        let colors: Vec<String> = serde_json::from_value(colors).unwrap();
        assert!(
            lightness(&colors[0]) < 60.0 && lightness(&colors[1]) < 60.0,
            "{figure}: drawn on a dark page under the dark theme: {colors:?}"
        );
        assert!(
            lightness(&colors[2]) > 180.0 && lightness(&colors[3]) > 180.0,
            "{figure}: its axis text and title are light: {colors:?}"
        );
    }
    app.screenshot("agreement-figures-dark");
    let path = save_beside(&app, "forest-svg", "svg");
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(
        lightness(&fill_of(&svg, "concord-figure-page")) < 60.0,
        "the saved figure keeps the dark page it was drawn on: {}",
        path.display()
    );
    assert!(
        lightness(&fill_of(&svg, "concord-figure-title")) > 180.0,
        "and its light title: {}",
        path.display()
    );
    let png = save_beside(&app, "forest-png", "png");
    let _ = std::fs::copy(&png, super::artifacts_dir().join("saved-forest-dark.png"));
}
