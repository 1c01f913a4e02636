//! Evidence spans marked from a browser (headless Chromium): the invited expert enters marking
//! mode with M, selects a sentence with Shift and the arrows, attaches a code from the picker
//! with the keys, changes its code and removes a span with the list's buttons reached by Tab, and
//! marks one with the mouse (a selection set in the reply, a real click on the code); the study
//! holds exactly those offsets with origin `web`, a Chinese reply with an emoji counted in
//! characters too. axe-core finds no violation of any impact in marking mode, with the picker
//! open and with spans listed.

use crate::browser::{web_ui, Chrome};
use crate::keyboard_browser::{tab_to, wait_focus};
use crate::serve_study;
use concord_testsupport::span_study::{add_span_study, chars_at, EXPERT, REPLY_EN, REPLY_ZH};
use concord_testsupport::web::STRONG;
use std::time::{Duration, Instant};

/// A stored span: its reply, code, bounds and origin.
type StoredSpan = (i64, String, Option<(i64, i64)>, String);

const ENTER: &str = "\u{E007}";
const ESCAPE: &str = "\u{E00C}";
const SHIFT: &str = "\u{E008}";
const RIGHT: &str = "\u{E014}";
const DOWN: &str = "\u{E015}";
const UP: &str = "\u{E013}";

fn listed(chrome: &Chrome) -> Vec<(String, i64, i64)> {
    let v = chrome.script(
        "return [...document.querySelectorAll('[data-testid=span-item]')] \
           .map(s => [s.dataset.code, Number(s.dataset.start), Number(s.dataset.end)]);",
    );
    let mut out: Vec<(String, i64, i64)> = v
        .as_array()
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
        .unwrap_or_default();
    out.sort();
    out
}

fn wait_listed(chrome: &Chrome, want: &[(&str, (i64, i64))], after: &str) {
    let mut want: Vec<(String, i64, i64)> = want
        .iter()
        .map(|(c, (s, e))| (c.to_string(), *s, *e))
        .collect();
    want.sort();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = listed(chrome);
        if now == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "after {after} the spans listed should be {want:?}, not {now:?}"
        );
        std::thread::sleep(Duration::from_millis(30));
    }
}

fn selection(chrome: &Chrome) -> (i64, i64) {
    let v = chrome.script(
        "const s = document.querySelector('[data-testid=span-selection]'); \
         return [Number(s.dataset.start), Number(s.dataset.end)];",
    );
    (v[0].as_i64().unwrap_or(-1), v[1].as_i64().unwrap_or(-1))
}

/// Characters `[start, end)` of the reply selected as a mouse drag leaves them.
fn select_with_mouse(chrome: &Chrome, start: i64, end: i64) {
    let ok = chrome.script(&format!(
        "const [start, end] = [{start}, {end}]; \
         const answer = document.querySelector('[data-testid=answer]'); \
         const at = (n) => {{ for (const p of answer.querySelectorAll('[data-at]:not([data-label])')) {{ \
             const a = Number(p.dataset.at), chars = Array.from(p.textContent); \
             if (n >= a && n <= a + chars.length) {{ \
               return [p.firstChild, chars.slice(0, n - a).join('').length]; }} }} return null; }}; \
         const [s, e] = [at(start), at(end)]; if (!s || !e) return false; \
         const r = document.createRange(); r.setStart(s[0], s[1]); r.setEnd(e[0], e[1]); \
         const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(r); return true;"
    ));
    assert_eq!(
        ok, true,
        "the reply's characters {start}–{end} are selectable"
    );
}

fn no_violations(chrome: &Chrome, state: &str) {
    let found = chrome.axe_violations();
    println!(
        "figure: axe on the browser's rating page, {state}: {} violations",
        found.len()
    );
    assert!(
        found.is_empty(),
        "axe-core finds no accessibility violation {state}: {found:#?}"
    );
}

#[test]
fn an_expert_marks_spans_in_a_browser_by_keyboard_and_by_mouse() {
    let mut ids = None;
    let mut token = String::new();
    let (served, _) = serve_study(
        0,
        &[],
        |study| {
            ids = Some(add_span_study(study.store_mut()));
            let mut rng = <rand_chacha::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(5);
            token = concord_core::app::web::invite(study, EXPERT, 7, &mut rng)
                .expect("the lead invites the expert")
                .token;
        },
        |o| o.ui_dir = web_ui(),
    );
    let ids = ids.expect("the span study is written");
    let chrome = Chrome::start();
    chrome.go(&format!("{}/invite#{}", served.base, token));
    chrome.wait_for("[data-testid=web-invite-name]");
    chrome.type_into("[data-testid=web-passphrase]", STRONG);
    chrome.type_into("[data-testid=web-passphrase-confirm]", STRONG);
    chrome.click("[data-testid=web-passphrase-submit]");
    chrome.wait_for("[data-testid=rating-screen] [data-testid=evidence]");
    wait_focus(&chrome, "level");
    let cheer = chars_at(REPLY_EN, "You should just cheer up.");
    let crisis = chars_at(REPLY_EN, "Please call a crisis line tonight");
    let hear = chars_at(REPLY_EN, "I hear how tired you are.");

    // Keyboard: M, a sentence down, Shift+↓ takes it in, C, the fifth code, Enter.
    chrome.press("m");
    wait_focus(&chrome, "answer");
    chrome.press(DOWN);
    chrome.chord(SHIFT, DOWN);
    assert_eq!(
        selection(&chrome),
        cheer,
        "Shift+↓ selects the second sentence"
    );
    no_violations(&chrome, "in marking mode");
    chrome.press("c");
    wait_focus(&chrome, "code-option");
    no_violations(&chrome, "with the code picker open");
    chrome.press(&format!("{DOWN}{DOWN}{DOWN}{DOWN}{ENTER}"));
    wait_listed(&chrome, &[("generic_reassurance", cheer)], "the first code");
    wait_focus(&chrome, "answer");
    chrome.press(DOWN);
    for _ in 0..6 {
        chrome.chord(SHIFT, RIGHT);
    }
    assert_eq!(selection(&chrome), crisis, "six words by Shift+→");
    chrome.press(ENTER);
    wait_focus(&chrome, "code-option");
    chrome.press(ENTER);
    wait_listed(
        &chrome,
        &[
            ("generic_reassurance", cheer),
            ("actionable_guidance", crisis),
        ],
        "the second span",
    );
    chrome.press(ESCAPE);
    no_violations(&chrome, "with spans listed");

    // Change the first span's code and remove the second, by Tab and Enter.
    tab_to(&chrome, "span-change", 40);
    chrome.press(ENTER);
    wait_focus(&chrome, "code-option");
    chrome.press(&format!("{UP}{ENTER}"));
    wait_listed(
        &chrome,
        &[
            ("judgemental_phrasing", cheer),
            ("actionable_guidance", crisis),
        ],
        "the code changed",
    );
    // In reading order the second span (the third sentence's) has the second Remove button.
    tab_to(&chrome, "span-remove", 40);
    tab_to(&chrome, "span-remove", 40);
    chrome.press(ENTER);
    wait_listed(&chrome, &[("judgemental_phrasing", cheer)], "the removal");

    // Mouse: the first sentence selected, its code clicked.
    select_with_mouse(&chrome, hear.0, hear.1);
    chrome.click("[data-testid=code-picker] [data-code=validating_statement]");
    wait_listed(
        &chrome,
        &[
            ("judgemental_phrasing", cheer),
            ("validating_statement", hear),
        ],
        "the mouse's span",
    );

    // The Chinese reply: its first sentence, the emoji one character.
    chrome.press("s");
    chrome.wait_for_attribute("[data-testid=item-number]", "data-item", "2");
    chrome.wait_for("[data-testid=evidence]");
    chrome.press("m");
    wait_focus(&chrome, "answer");
    chrome.chord(SHIFT, DOWN);
    let first = chars_at(REPLY_ZH, "听起来你很难受 😢。");
    assert_eq!(selection(&chrome), first, "the first Chinese sentence");
    chrome.press("c");
    wait_focus(&chrome, "code-option");
    chrome.press(&format!("{DOWN}{DOWN}{ENTER}"));
    wait_listed(
        &chrome,
        &[("validating_statement", first)],
        "the Chinese span",
    );

    let study = served.open_again();
    let mut stored: Vec<StoredSpan> = study
        .store()
        .spans_of_rater(ids.expert)
        .expect("spans")
        .into_iter()
        .map(|s| (s.response_id, s.code, s.range, s.origin))
        .collect();
    stored.sort();
    let mut want = vec![
        (
            ids.reply_en,
            "judgemental_phrasing".to_string(),
            Some(cheer),
            "web".to_string(),
        ),
        (
            ids.reply_en,
            "validating_statement".to_string(),
            Some(hear),
            "web".to_string(),
        ),
        (
            ids.reply_zh,
            "validating_statement".to_string(),
            Some((0, 10)),
            "web".to_string(),
        ),
    ];
    want.sort();
    assert_eq!(
        stored, want,
        "the study holds exactly the spans left on the page, in characters, from the web"
    );
}
