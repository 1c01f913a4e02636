//! Evidence spans marked on the rating screen of the real window: an expert enters marking mode
//! with M, moves by sentence and word, selects with Shift and the arrows, opens the code picker
//! with C or Enter and attaches a code with Enter — keyboard alone —, changes a span's code and
//! removes one with the list's buttons reached by Tab, and marks one with the mouse (a selection
//! set in the reply, then a code picked with a real click). The study holds exactly those
//! offsets, in characters, also for a Chinese reply with an emoji; the code labels follow the
//! interface into Chinese; axe-core finds nothing in marking mode, with the picker open and with
//! spans listed.

use super::App;
use concord_core::base::clock::SystemClock;
use concord_core::store::Store;
use concord_testsupport::span_study::{
    add_span_study, chars_at, SpanStudy, EXPERT, REPLY_EN, REPLY_ZH,
};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const ENTER: &str = "\u{E007}";
const ESCAPE: &str = "\u{E00C}";
const TAB: &str = "\u{E004}";
const SHIFT: &str = "\u{E008}";
const RIGHT: &str = "\u{E014}";
const DOWN: &str = "\u{E015}";
const UP: &str = "\u{E013}";

fn span_study_file(path: &Path) -> SpanStudy {
    let mut store = Store::create(path, Arc::new(SystemClock)).expect("the study is created");
    let ids = add_span_study(&mut store);
    store.close().expect("closed");
    ids
}

/// Open the rating screen as the study's expert (picked from the list).
fn rate_as_expert(app: &App) {
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));
    app.click(&app.wait_for("[data-testid=nav-rate]", Duration::from_secs(5)));
    app.wait_for("[data-testid=profile]", Duration::from_secs(10));
    let pick = app
        .find_all("[data-testid=profile]")
        .into_iter()
        .find(|b| app.text(b).contains(EXPERT))
        .expect("the expert is on the rater list");
    app.click(&pick);
    app.wait_for(
        "[data-testid=rating-screen] [data-testid=evidence]",
        Duration::from_secs(15),
    );
}

/// The selection the screen shows, in characters.
fn selection(app: &App) -> (i64, i64) {
    let v = app.script(
        "const s = document.querySelector('[data-testid=span-selection]'); \
         return [Number(s.dataset.start), Number(s.dataset.end)];",
        json!([]),
    );
    (v[0].as_i64().unwrap_or(-1), v[1].as_i64().unwrap_or(-1))
}

/// The spans listed: (code, start, end).
fn listed(app: &App) -> Vec<(String, i64, i64)> {
    let v = app.script(
        "return [...document.querySelectorAll('[data-testid=span-item]')] \
           .map(s => [s.dataset.code, Number(s.dataset.start), Number(s.dataset.end)]);",
        json!([]),
    );
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    (
                        s[0].as_str().unwrap_or_default().to_string(),
                        s[1].as_i64().unwrap_or(-1),
                        s[2].as_i64().unwrap_or(-1),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn wait_listed(app: &App, want: &[(&str, (i64, i64))], after: &str) {
    let want: Vec<(String, i64, i64)> = want
        .iter()
        .map(|(c, (s, e))| (c.to_string(), *s, *e))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = listed(app);
        let mut sorted = now.clone();
        sorted.sort();
        let mut w = want.clone();
        w.sort();
        if sorted == w {
            return;
        }
        if Instant::now() > deadline {
            app.screenshot("spans-listed");
            panic!("after {after} the spans listed should be {want:?}, not {now:?}");
        }
        std::thread::sleep(Duration::from_millis(30));
    }
}

fn active_testid(app: &App) -> String {
    app.script(
        "const a = document.activeElement; return a ? (a.dataset.testid || a.tagName) : '';",
        json!([]),
    )
    .as_str()
    .unwrap_or_default()
    .to_string()
}

fn wait_active(app: &App, testid: &str, after: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while active_testid(app) != testid {
        if Instant::now() > deadline {
            app.screenshot("spans-focus");
            let evidence = app.script(
                "const e = document.querySelector('[data-testid=evidence]'); return e ? e.outerHTML.slice(0, 1500) : 'none';",
                json!([]),
            );
            panic!(
                "after {after} the keyboard should be on {testid}, not {} (screenshot tests/artifacts/spans-focus.png; the evidence box: {evidence})",
                active_testid(app)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Tab until the keyboard is on the element `css` (at most 60 presses): every control is reached
/// by Tab.
fn tab_to(app: &App, css: &str) {
    for _ in 0..60 {
        let on = app.script(
            "return !!document.activeElement && document.activeElement.matches(arguments[0]);",
            json!([css]),
        );
        if on == json!(true) {
            return;
        }
        app.press(TAB);
    }
    panic!("Tab never reached {css}");
}

/// Select characters `[start, end)` of the reply as a mouse drag leaves them: the DOM selection
/// set over the reply's text nodes (character offsets turned into UTF-16 ones inside each piece).
fn select_with_mouse(app: &App, start: i64, end: i64) {
    let ok = app.script(
        "const [start, end] = arguments; \
         const answer = document.querySelector('[data-testid=answer]'); \
         const at = (n) => { for (const p of answer.querySelectorAll('[data-at]:not([data-label])')) { \
             const a = Number(p.dataset.at), chars = Array.from(p.textContent); \
             if (n >= a && n <= a + chars.length) { \
               return [p.firstChild, chars.slice(0, n - a).join('').length]; } } return null; }; \
         const [s, e] = [at(start), at(end)]; if (!s || !e) return false; \
         const r = document.createRange(); r.setStart(s[0], s[1]); r.setEnd(e[0], e[1]); \
         const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(r); return true;",
        json!([start, end]),
    );
    assert_eq!(
        ok,
        json!(true),
        "the reply's characters {start}–{end} are selectable"
    );
}

/// Click the picker's option for `code` (a real pointer click).
fn pick_with_mouse(app: &App, code: &str) {
    let option = app.wait_for(
        &format!("[data-testid=code-picker] [data-code='{code}']"),
        Duration::from_secs(5),
    );
    app.click(&option);
}

/// The expert's spans in the study: (response, code, start, end, origin).
fn stored(path: &Path, ids: &SpanStudy) -> Vec<(i64, String, (i64, i64), String)> {
    let store = Store::open_read_only(path, Arc::new(SystemClock), None)
        .expect("the study opens beside the window");
    let mut out: Vec<_> = store
        .spans_of_rater(ids.expert)
        .expect("spans")
        .into_iter()
        .map(|s| (s.response_id, s.code, s.range.unwrap_or((-1, -1)), s.origin))
        .collect();
    out.sort();
    out
}

#[test]
fn an_expert_marks_spans_by_keyboard_and_by_mouse_and_the_study_holds_their_offsets() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("spans.concord");
    let ids = span_study_file(&path);
    let app = App::launch(&path);
    rate_as_expert(&app);
    let cheer = chars_at(REPLY_EN, "You should just cheer up.");
    let crisis = chars_at(REPLY_EN, "Please call a crisis line tonight");
    let hear = chars_at(REPLY_EN, "I hear how tired you are.");

    // Keyboard: M, down a sentence, Shift+down takes the sentence in, C, the fifth code, Enter.
    app.press("m");
    wait_active(&app, "answer", "M");
    app.press(DOWN);
    app.chord(SHIFT, DOWN);
    assert_eq!(
        selection(&app),
        cheer,
        "Shift+↓ selects the second sentence whole"
    );
    assert!(
        app.text_of("[data-testid=span-selection]")
            .contains("You should just cheer up."),
        "the selection is shown (and announced) with its text"
    );
    app.assert_accessible("spans-marking-mode");
    app.press("c");
    wait_active(&app, "code-option", "C");
    app.assert_accessible("spans-code-picker");
    app.press(&format!("{DOWN}{DOWN}{DOWN}{DOWN}"));
    app.press(ENTER);
    wait_listed(
        &app,
        &[("generic_reassurance", cheer)],
        "the first code attached",
    );
    wait_active(&app, "answer", "attaching (marking goes on)");

    // A second by words: down to the third sentence, Shift+→ six words, Enter opens the picker,
    // Enter attaches its first code.
    app.press(DOWN);
    for _ in 0..6 {
        app.chord(SHIFT, RIGHT);
    }
    assert_eq!(selection(&app), crisis, "six words taken in by Shift+→");
    app.press(ENTER);
    wait_active(&app, "code-option", "Enter in marking mode");
    app.press(ENTER);
    wait_listed(
        &app,
        &[
            ("generic_reassurance", cheer),
            ("actionable_guidance", crisis),
        ],
        "the second span",
    );
    app.press(ESCAPE);
    let marking = app.script(
        "return document.querySelector('[data-testid=answer]').dataset.marking;",
        json!([]),
    );
    assert_eq!(marking, json!("false"), "Esc leaves marking mode");
    app.assert_accessible("spans-listed");
    let labels = app.text_of("[data-testid=answer]");
    assert!(
        labels.contains("Generic reassurance") && labels.contains("Actionable guidance"),
        "each span shows its code's label in the reply: {labels}"
    );

    // Change the first span's code: Tab to its button, Enter, ↑ to the code before, Enter.
    tab_to(
        &app,
        "[data-testid=span-item][data-code=generic_reassurance] [data-testid=span-change]",
    );
    app.press(ENTER);
    wait_active(&app, "code-option", "Change code");
    app.press(UP);
    app.press(ENTER);
    wait_listed(
        &app,
        &[
            ("judgemental_phrasing", cheer),
            ("actionable_guidance", crisis),
        ],
        "the code changed",
    );
    // Remove the second: Tab to its Remove button, Enter.
    tab_to(
        &app,
        "[data-testid=span-item][data-code=actionable_guidance] [data-testid=span-remove]",
    );
    app.press(ENTER);
    wait_listed(&app, &[("judgemental_phrasing", cheer)], "the removal");

    // Mouse: the first sentence selected, then its code clicked in the picker.
    select_with_mouse(&app, hear.0, hear.1);
    pick_with_mouse(&app, "validating_statement");
    wait_listed(
        &app,
        &[
            ("judgemental_phrasing", cheer),
            ("validating_statement", hear),
        ],
        "the mouse's span",
    );
    assert_eq!(
        stored(&path, &ids),
        vec![
            (
                ids.reply_en,
                "judgemental_phrasing".into(),
                cheer,
                "screen".into()
            ),
            (
                ids.reply_en,
                "validating_statement".into(),
                hear,
                "screen".into()
            ),
        ],
        "the study holds exactly the spans left on the screen, at those characters"
    );

    // The Chinese reply with an emoji: the first sentence by keyboard, the emoji alone by mouse.
    app.press("s");
    app.wait_for_attribute(
        "[data-testid=item-number]",
        "data-item",
        "2",
        Duration::from_secs(10),
    );
    app.wait_for("[data-testid=evidence]", Duration::from_secs(10));
    app.press("m");
    wait_active(&app, "answer", "M on the Chinese reply");
    app.chord(SHIFT, DOWN);
    let first = chars_at(REPLY_ZH, "听起来你很难受 😢。");
    assert_eq!(
        selection(&app),
        first,
        "the first sentence, the emoji one character"
    );
    app.press("c");
    wait_active(&app, "code-option", "C");
    app.press(&format!("{DOWN}{DOWN}{ENTER}"));
    wait_listed(&app, &[("validating_statement", first)], "the Chinese span");
    app.press(ESCAPE);
    let emoji = chars_at(REPLY_ZH, "😢");
    assert_eq!(emoji, (8, 9), "the emoji is character 8");
    select_with_mouse(&app, emoji.0, emoji.1);
    pick_with_mouse(&app, "generic_reassurance");
    wait_listed(
        &app,
        &[
            ("validating_statement", first),
            ("generic_reassurance", emoji),
        ],
        "the emoji's span",
    );
    let zh: Vec<_> = stored(&path, &ids)
        .into_iter()
        .filter(|s| s.0 == ids.reply_zh)
        .map(|s| (s.1, s.2))
        .collect();
    assert_eq!(
        zh,
        vec![
            ("generic_reassurance".to_string(), (8, 9)),
            ("validating_statement".to_string(), (0, 10)),
        ],
        "the Chinese reply's spans are stored in characters (the emoji one, not two)"
    );

    // The interface in Chinese: the labels too.
    app.click(&app.wait_for("[data-testid=lang-switch]", Duration::from_secs(5)));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !app.text_of("[data-testid=answer]").contains("肯定性表述") {
        assert!(
            Instant::now() < deadline,
            "the code labels follow the interface into Chinese"
        );
        std::thread::sleep(Duration::from_millis(30));
    }
    app.assert_accessible("spans-listed-zh");
}
