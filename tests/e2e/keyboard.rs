//! The window by keyboard alone, as an expert who uses no pointer (or a screen reader) works:
//! Tab and Shift+Tab move through every control of the rating screen in the order it reads —
//! 中文, the texts, one stop per criterion, the rationale, Next, Flag, Sign
//! off, Change rater — while the criteria keep their own keys (digits, ↑ ↓, Enter); each
//! criterion's levels are a radio group named by the criterion, and each level's name carries
//! the criterion, the level and its anchor; a value saved is announced; the sign-off dialog takes
//! focus, keeps Tab inside and gives focus back to Sign off. And a whole journey with WebDriver
//! key actions only: from the overview to the queue, ten items rated, a rationale written, an
//! item flagged, one left half-rated, the ratings signed off and the rater changed.

use super::rating::many_items_study;
use super::App;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const ENTER: &str = "\u{E007}";
const TAB: &str = "\u{E004}";
const SHIFT: &str = "\u{E008}";
const ESCAPE: &str = "\u{E00C}";
/// The signing passphrase the journey sets (strong enough for the passphrase rule).
const SIGNING: &str = "quiet lantern orchard 47";

/// What has keyboard focus: its `data-testid` (or tag), role, accessible label, the criterion it
/// belongs to and whether it is inside an open dialog; `body` when nothing has it.
fn focused(app: &App) -> Value {
    app.script(
        "const e = document.activeElement; \
         if (!e || e === document.body || e === document.documentElement) return {testid: 'body'}; \
         const c = e.closest('[data-testid=criterion]'); \
         return {testid: e.dataset.testid || e.tagName.toLowerCase(), role: e.getAttribute('role'), \
                 label: e.getAttribute('aria-label'), key: c ? c.dataset.key : null, \
                 inDialog: !!e.closest('dialog[open]'), visible: e.matches(':focus-visible')};",
        json!([]),
    )
}

fn focused_testid(app: &App) -> String {
    focused(app)["testid"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Wait until the keyboard is on an element with `testid`.
fn wait_focus(app: &App, testid: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = focused(app);
        if now["testid"] == testid {
            return now;
        }
        if Instant::now() > deadline {
            app.screenshot("keyboard-focus");
            panic!("the keyboard never reached {testid}; it is on {now}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Press Tab (one key action at a time, as a person does) until the keyboard is on `testid`;
/// the number of presses it took.
fn tab_to(app: &App, testid: &str, limit: usize) -> usize {
    let mut path = Vec::new();
    for presses in 1..=limit {
        app.press(TAB);
        let now = focused(app);
        if now["testid"] == testid {
            return presses;
        }
        path.push(now["testid"].as_str().unwrap_or_default().to_string());
    }
    panic!("{limit} Tabs never reached {testid}: {path:?}");
}

fn wait_item(app: &App, n: i64) {
    app.wait_for_attribute(
        "[data-testid=item-number]",
        "data-item",
        &n.to_string(),
        Duration::from_secs(15),
    );
}

#[test]
fn tab_reaches_every_control_of_the_rating_screen_and_each_level_names_its_criterion_and_anchor() {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = dir.path().join("tab.concord");
    many_items_study(&study, 4);
    let app = App::launch(&study);
    super::rating::start_rating_as(&app, "Tab expert");

    // The screen opens with the keyboard on the first criterion's levels.
    let first = wait_focus(&app, "level");
    assert_eq!(
        first["role"], "radio",
        "a level is a radio of its criterion's group: {first}"
    );
    assert_eq!(
        app.script("return document.title;", json!([])),
        "Rate answers — Concord",
        "the window's page is titled by the screen it shows"
    );
    // The texts and the labels in the other language say which language they are in.
    let langs = app.script(
        "return [document.querySelector('article.texts').lang, \
                 [...new Set([...document.querySelectorAll('[data-testid=criterion] .other')].map((e) => e.lang))]];",
        json!([]),
    );
    assert_eq!(
        langs,
        json!(["en", ["zh-CN"]]),
        "the item's texts carry their language, the criteria's Chinese names theirs"
    );
    let keys: Vec<String> = app
        .find_all("[data-testid=criterion]")
        .iter()
        .filter_map(|c| app.attribute(c, "data-key"))
        .collect();
    assert!(
        keys.len() >= 5,
        "the rubric has its criteria on screen: {keys:?}"
    );
    assert_eq!(
        first["key"].as_str(),
        Some(keys[0].as_str()),
        "the first criterion has the keyboard"
    );

    // From the top of the page, Tab after Tab: the keyboard never falls back to the page itself
    // and meets every control in reading order, one stop per criterion.
    app.script(
        "document.activeElement && document.activeElement.blur(); return 1;",
        json!([]),
    );
    let mut order: Vec<Value> = Vec::new();
    for _ in 0..60 {
        app.press(TAB);
        let now = focused(&app);
        assert_ne!(
            now["testid"], "body",
            "Tab moves the keyboard to a control, never leaves it on the page (after {order:?})"
        );
        assert_eq!(
            now["visible"], true,
            "the control the keyboard is on shows it: {now}"
        );
        let last = now["testid"] == "switch-rater";
        order.push(now);
        if last {
            break;
        }
    }
    let ids: Vec<&str> = order.iter().filter_map(|v| v["testid"].as_str()).collect();
    let at = |id: &str| {
        ids.iter()
            .position(|x| *x == id)
            .unwrap_or_else(|| panic!("Tab never reached {id}: {ids:?}"))
    };
    // (In a rater's session the window shows the rating screen only: no menu of screens.)
    let sequence = [
        "lang-switch",
        "context",
        "answer",
        "level",
        "rationale",
        "next-button",
        "prev-button",
        "skip-button",
        "flag-button",
        "help-button",
        "signoff-button",
        "switch-rater",
    ];
    let places: Vec<usize> = sequence.iter().map(|id| at(id)).collect();
    assert!(
        places.windows(2).all(|w| w[0] < w[1]),
        "Tab follows the page's reading order {sequence:?}: {ids:?}"
    );
    let stops: Vec<&str> = order
        .iter()
        .filter(|v| v["testid"] == "level")
        .filter_map(|v| v["key"].as_str())
        .collect();
    assert_eq!(
        stops, keys,
        "Tab stops once on each criterion's group of levels, in the rubric's order"
    );

    // Shift+Tab goes back the same way.
    app.chord(SHIFT, TAB);
    assert_eq!(
        focused_testid(&app),
        "signoff-button",
        "Shift+Tab from Change rater goes back to Sign off"
    );

    // Each group says, before it is used, that choosing a level moves the focus on (and which
    // keys it takes).
    let hint = app.script(
        "const g = document.querySelector('[role=radiogroup]'); \
         return document.getElementById(g.getAttribute('aria-describedby')).textContent;",
        json!([]),
    );
    assert!(
        hint.as_str()
            .is_some_and(|h| h.contains("the next criterion then takes the focus")),
        "a criterion's group describes its keys and that the focus moves on: {hint}"
    );

    // Each group is named by its criterion; each level by its value, its anchor and the
    // criterion (the anchors as the study holds them).
    let item = app.invoke("rating_item", json!({"item": 1}));
    let criteria = item["ok"]["criteria"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("the item's criteria: {item}"));
    let groups = app.script(
        "return [...document.querySelectorAll('[data-testid=criterion]')].map((c) => { \
           const g = c.querySelector('[role=radiogroup]'); \
           return {key: c.dataset.key, \
             name: g ? document.getElementById(g.getAttribute('aria-labelledby')).textContent.trim() : null, \
             levels: [...c.querySelectorAll('[role=radio]')].map((r) => ({value: r.dataset.level, \
               label: r.getAttribute('aria-label'), checked: r.getAttribute('aria-checked')}))}; });",
        json!([]),
    );
    for (c, g) in criteria
        .iter()
        .zip(groups.as_array().cloned().unwrap_or_default())
    {
        let label = c["label"]["en"].as_str().unwrap_or_default();
        assert!(
            g["name"].as_str().is_some_and(|n| n.starts_with(label)),
            "the group of {} is named by its criterion {label:?}: {g}",
            c["key"]
        );
        for level in g["levels"].as_array().cloned().unwrap_or_default() {
            let value: i64 = level["value"]
                .as_str()
                .and_then(|v| v.parse().ok())
                .unwrap_or(-1);
            let name = level["label"].as_str().unwrap_or_default();
            let anchor = c["anchors"]
                .as_array()
                .and_then(|a| a.iter().find(|a| a["value"] == value))
                .and_then(|a| a["label"]["en"].as_str())
                .unwrap_or_default();
            assert!(
                name.starts_with(&value.to_string())
                    && name.contains(label)
                    && name.contains(anchor),
                "level {value} of {label:?} is named by its value, its anchor {anchor:?} and the criterion: {name:?}"
            );
            assert_eq!(level["checked"], "false", "nothing is chosen yet: {level}");
        }
    }

    // A value typed is chosen, saved and announced, and the keyboard moves on to the next
    // criterion.
    app.script(
        "document.querySelector('[data-testid=criterion] [data-testid=level][tabindex=\"0\"]').focus(); return 1;",
        json!([]),
    );
    app.press("4");
    app.wait_for_attribute(
        "[data-testid=criterion] [data-level='4']",
        "aria-checked",
        "true",
        Duration::from_secs(10),
    );
    let now = focused(&app);
    assert_eq!(
        now["key"].as_str(),
        Some(keys[1].as_str()),
        "after a value the keyboard is on the next criterion: {now}"
    );
    let label = criteria[0]["label"]["en"].as_str().unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        // (Read as a screen reader does: the region is visually hidden.)
        let said = app
            .script(
                "const r = document.querySelector('[role=status][data-testid=rating-announce]'); \
                 return r ? r.textContent : '';",
                json!([]),
            )
            .as_str()
            .unwrap_or_default()
            .to_string();
        if said.contains(label) && said.contains('4') {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the saved value is announced in a status region: {said:?}"
        );
        std::thread::sleep(Duration::from_millis(30));
    }

    // 中文 by keyboard: Enter on it switches the interface's language, and back.
    tab_to(&app, "lang-switch", 60);
    app.press(ENTER);
    app.wait_for_attribute("html", "lang", "zh-CN", Duration::from_secs(5));
    app.press(ENTER);
    app.wait_for_attribute("html", "lang", "en", Duration::from_secs(5));

    // The sign-off dialog takes the keyboard, keeps Tab inside, closes on Esc and gives the
    // keyboard back to Sign off.
    tab_to(&app, "signoff-button", 60);
    app.press(ENTER);
    let inside = wait_focus(&app, "signoff-new");
    assert_eq!(
        inside["inDialog"], true,
        "the dialog's first field has the keyboard: {inside}"
    );
    for _ in 0..12 {
        app.press(TAB);
        let now = focused(&app);
        assert!(
            now["inDialog"] == true || now["testid"] == "body",
            "Tab stays inside the open dialog: {now}"
        );
    }
    app.press(ESCAPE);
    wait_focus(&app, "signoff-button");
    assert!(
        app.try_find("[data-testid=signoff-dialog][open]").is_none(),
        "Esc closed the dialog"
    );
}

#[test]
fn an_expert_rates_ten_items_writes_a_rationale_flags_leaves_one_signs_off_and_changes_rater_by_keyboard_alone(
) {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = dir.path().join("keyboard-only.concord");
    many_items_study(&study, 14);
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));

    // From the overview to the rating screen: Tab to Rate, Enter; the picker has the name field
    // ready; the name, Enter, and Enter again to confirm it.
    app.script(
        "document.activeElement && document.activeElement.blur(); return 1;",
        json!([]),
    );
    tab_to(&app, "nav-rate", 20);
    app.press(ENTER);
    wait_focus(&app, "new-profile");
    app.press(&format!("Keyboard only expert{ENTER}"));
    wait_focus(&app, "confirm-profile");
    app.press(ENTER);
    app.wait_for(
        "[data-testid=rating-screen] [data-testid=item-number]",
        Duration::from_secs(15),
    );
    wait_focus(&app, "level");
    let n = app.find_all("[data-testid=criterion]").len();

    for item in 1..=10 {
        wait_item(&app, item);
        if item == 3 {
            // R: the rationale; Esc back to the criteria.
            app.press("r");
            wait_focus(&app, "rationale");
            app.press("The reply names the feeling but offers no next step");
            app.press(ESCAPE);
            wait_focus(&app, "level");
        }
        if item == 5 {
            // F: the flag's reason, Enter saves it, the keyboard is back on the criteria.
            app.press("f");
            wait_focus(&app, "flag-reason");
            app.press(&format!("Mentions a medication dose{ENTER}"));
            app.wait_for("[data-testid=flag-note]", Duration::from_secs(10));
            wait_focus(&app, "level");
        }
        let values: String = (0..n)
            .map(|j| char::from(b'1' + ((item as usize + j) % 5) as u8))
            .collect();
        // A binary criterion takes 1 or 0: the values above stay in 1–5, and on a yes–no
        // criterion anything but 1 is refused, so the burst uses 1 there.
        let kinds = app.script(
            "return [...document.querySelectorAll('[data-testid=criterion]')].map((c) => c.querySelectorAll('[role=radio]').length);",
            json!([]),
        );
        let values: String = values
            .chars()
            .zip(kinds.as_array().cloned().unwrap_or_default())
            .map(|(v, k)| if k == 2 { '1' } else { v })
            .collect();
        app.press(&format!("{values}{ENTER}"));
    }
    wait_item(&app, 11);

    // Item 11 is left half-rated: one value, then S.
    app.press("2s");
    wait_item(&app, 12);

    // Sign off: Tab to it, Enter; set the signing passphrase, then sign; Esc closes.
    tab_to(&app, "signoff-button", 40);
    app.press(ENTER);
    wait_focus(&app, "signoff-new");
    app.press(&format!("{SIGNING}{TAB}{SIGNING}{ENTER}"));
    wait_focus(&app, "signoff-passphrase");
    app.press(&format!("{SIGNING}{ENTER}"));
    app.wait_for("[data-testid=signature]", Duration::from_secs(30));
    app.press(ESCAPE);
    wait_focus(&app, "signoff-button");

    // And leave: Change rater, by Tab and Enter, back to the list of raters.
    tab_to(&app, "switch-rater", 10);
    app.press(ENTER);
    app.wait_for("[data-testid=rater-picker]", Duration::from_secs(10));
    drop(app);

    let conn = rusqlite::Connection::open(&study).expect("the study opens");
    let rater: i64 = conn
        .query_row(
            "SELECT id FROM rater WHERE name = 'Keyboard only expert'",
            [],
            |r| r.get(0),
        )
        .expect("the expert made by keyboard exists");
    let count = |sql: &str| -> i64 {
        conn.query_row(sql, [rater], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    assert_eq!(
        count("SELECT COUNT(*) FROM assignment WHERE rater_id = ?1 AND completed_at IS NOT NULL"),
        10,
        "ten items are complete"
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM rating WHERE rater_id = ?1 AND value IS NOT NULL"),
        10 * n as i64 + 1,
        "every value typed is stored: ten items whole and one value of the eleventh"
    );
    assert_eq!(
        count("SELECT COUNT(DISTINCT response_id) FROM rating WHERE rater_id = ?1 AND rationale LIKE '%no next step%'"),
        1,
        "the rationale is stored on its item"
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM flag WHERE rater_id = ?1 AND reason = 'Mentions a medication dose'"),
        1,
        "the flag is stored with its reason"
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM signature WHERE rater_id = ?1"),
        1,
        "the ratings are signed off"
    );
}
