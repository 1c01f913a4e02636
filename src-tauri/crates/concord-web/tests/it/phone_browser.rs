//! The rating page on a phone (headless Chromium emulating a touch screen of 390 × 844 CSS px):
//! the invited expert sets a passphrase and rates three items by tapping, and on every item the
//! page is one column — the message and the answer, then the criteria under them, each
//! criterion's levels on one line — nothing is wider than the phone (no sideways scrolling, the
//! answer wrapping inside its box), every control is a target of at least 44 × 44 px, and
//! axe-core finds no violation; text spaced out (WCAG 1.4.12) is not cut off; at 320 px it
//! still fits; asked for reduced motion, nothing on the page moves.

use crate::browser::{web_ui, Chrome};
use crate::serve;
use concord_testsupport::web::STRONG;
use serde_json::{json, Value};

const ITEM: &str = "[data-testid=rating-screen] [data-testid=item-number]";

/// How the page lies on the phone now.
fn layout(chrome: &Chrome) -> Value {
    chrome.script(
        "const root = document.documentElement; \
         const box = (css) => { const e = document.querySelector(css); return e ? e.getBoundingClientRect() : null; }; \
         const small = [...document.querySelectorAll('button, input, select, textarea, a, summary')] \
           .filter((e) => e.offsetParent !== null) \
           .map((e) => [e.dataset.testid || (e.tagName + ':' + e.textContent.trim().slice(0, 20)), e.getBoundingClientRect()]) \
           .filter(([, r]) => r.width < 44 || r.height < 44) \
           .map(([n, r]) => `${n} ${Math.round(r.width)}×${Math.round(r.height)}`); \
         const answer = document.querySelector('[data-testid=answer]'); \
         const texts = box('.texts'); const criteria = box('aside.criteria'); \
         const split = [...document.querySelectorAll('[data-testid=criterion]')].filter((c) => \
           new Set([...c.querySelectorAll('[data-testid=level]')].map((b) => Math.round(b.getBoundingClientRect().top))).size > 1) \
           .map((c) => c.dataset.key); \
         return {viewport: window.innerWidth, wide: root.scrollWidth, scrolledSideways: window.scrollX, small, \
                 answerWraps: answer ? answer.scrollWidth <= answer.clientWidth + 1 : false, \
                 criteriaBelow: !!(texts && criteria && criteria.top >= texts.bottom - 1), \
                 criteriaWidth: criteria ? Math.round(criteria.width) : 0, levelsSplit: split, \
                 coarse: matchMedia('(pointer: coarse)').matches};",
    )
}

fn fits_the_phone(chrome: &Chrome, item: usize) {
    let l = layout(chrome);
    assert_eq!(
        l["viewport"], 390,
        "item {item}: the page is laid out 390 px wide: {l}"
    );
    assert_eq!(
        l["coarse"], true,
        "item {item}: the page knows it is on a touch screen: {l}"
    );
    assert!(
        l["wide"].as_i64().unwrap_or(i64::MAX) <= 390 && l["scrolledSideways"] == 0,
        "item {item}: nothing is wider than the phone, so nothing scrolls sideways: {l}"
    );
    assert_eq!(
        l["answerWraps"], true,
        "item {item}: the answer wraps inside its box, read without scrolling sideways: {l}"
    );
    assert_eq!(
        l["criteriaBelow"], true,
        "item {item}: one column — the criteria come under the texts, not beside them: {l}"
    );
    assert!(
        l["criteriaWidth"].as_i64().unwrap_or(0) >= 330,
        "item {item}: the criteria take the phone's width (less its margins): {l}"
    );
    assert_eq!(
        l["levelsSplit"],
        json!([]),
        "item {item}: each criterion's levels stay on one line: {l}"
    );
    assert_eq!(
        l["small"],
        json!([]),
        "item {item}: every control is a target of at least 44 × 44 px: {l}"
    );
}

#[test]
fn on_a_phone_an_expert_rates_three_items_in_one_column_with_no_sideways_scrolling() {
    let (served, tokens) = serve(1, &["Ada"], |o| o.ui_dir = web_ui());
    let chrome = Chrome::start();
    chrome.emulate_phone(390, 844);
    chrome.emulate_touch();
    chrome.go(&format!("{}/invite#{}", served.base, tokens[0]));
    chrome.type_into("[data-testid=web-passphrase]", STRONG);
    chrome.type_into("[data-testid=web-passphrase-confirm]", STRONG);
    chrome.click("[data-testid=web-passphrase-submit]");

    for item in 1..=3 {
        chrome.wait_for_attribute(ITEM, "data-item", &item.to_string());
        fits_the_phone(&chrome, item);
        if item == 1 {
            let found = chrome.axe_violations();
            println!(
                "figure: axe on the browser's rating page at 390 × 844: {} violations",
                found.len()
            );
            assert!(
                found.is_empty(),
                "axe-core finds no accessibility violation on the phone's rating page: {found:#?}"
            );
        }
        // Tap a level of each criterion (the third, or "present" on a yes–no one), then Next.
        let keys: Vec<String> = chrome
            .script("return [...document.querySelectorAll('[data-testid=criterion]')].map((c) => c.dataset.key);")
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect();
        for key in &keys {
            let css = format!("[data-testid=criterion][data-key='{key}']");
            let levels = chrome.count(&format!("{css} [data-testid=level]"));
            let nth = if levels > 2 { 3 } else { 1 };
            chrome.click(&format!("{css} [data-testid=level]:nth-child({nth})"));
            chrome.wait_for_attribute(&css, "data-value", if levels > 2 { "3" } else { "1" });
        }
        fits_the_phone(&chrome, item);
        chrome.click("[data-testid=next-button]");
    }
    chrome.wait_for_attribute(ITEM, "data-item", "4");
    chrome.wait_for_attribute("[data-testid=save-state]", "data-pending", "0");

    // Text spaced out as WCAG 1.4.12 asks (a reader's own style sheet): no control's text is cut
    // off and nothing goes wider than the phone.
    let clipped = chrome.script(
        "const s = document.createElement('style'); \
         s.textContent = '* { line-height: 1.5 !important; letter-spacing: 0.12em !important; \
           word-spacing: 0.16em !important; } p { margin-bottom: 2em !important; }'; \
         document.head.appendChild(s); \
         const cut = [...document.querySelectorAll('button, label, [data-testid=criterion] .name')] \
           .filter((e) => e.offsetParent !== null && (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)) \
           .map((e) => e.dataset.testid || e.textContent.trim().slice(0, 30)); \
         const wide = document.documentElement.scrollWidth; s.remove(); return {cut, wide};",
    );
    assert_eq!(
        clipped,
        json!({"cut": [], "wide": 390}),
        "with the text spaced out nothing is cut off or pushed sideways"
    );

    // Narrower still, 320 px (WCAG 1.4.10's width): still one column, nothing sideways.
    chrome.emulate_phone(320, 640);
    chrome.wait_for(ITEM);
    let wide = chrome.script("return [window.innerWidth, document.documentElement.scrollWidth];");
    assert_eq!(
        wide,
        json!([320, 320]),
        "at 320 px the page still fits without sideways scrolling"
    );

    // A phone set to reduce motion: nothing on the page moves.
    chrome.emulate_reduced_motion();
    let motion = chrome.script(
        "const l = document.querySelector('[data-testid=level]'); const s = getComputedStyle(l); \
         return [matchMedia('(prefers-reduced-motion: reduce)').matches, \
                 parseFloat(s.transitionDuration) <= 0.0001 && parseFloat(s.animationDuration) <= 0.0001, \
                 document.getAnimations().length];",
    );
    assert_eq!(
        motion,
        json!([true, true, 0]),
        "with reduced motion asked for, no transition or animation runs"
    );

    let conn = rusqlite::Connection::open(&served.study).expect("the study opens");
    let complete: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM assignment a JOIN rater r ON r.id = a.rater_id \
             WHERE r.name = 'Ada' AND a.completed_at IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .expect("counted");
    assert_eq!(
        complete, 3,
        "the three items rated on the phone are complete"
    );
}
