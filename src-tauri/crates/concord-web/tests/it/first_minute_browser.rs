//! The invited expert's first minute in a real browser (headless Chromium under chromedriver,
//! the browser build of the UI): the invitation and login pages on a phone 360 px wide — one
//! column, no horizontal scrolling, every target at least 44 px, the study, its lead, what
//! Concord is and whom to ask on the page, the name to type shown, no accessibility violation
//! axe-core finds — a login by keyboard alone with the name typed in another case, a used or
//! expired link that leads to the login with its reason, in English and Chinese, and the sign-off
//! dialog saying what the signing passphrase is for.

use crate::browser::{web_ui, Chrome};
use crate::{serve, serve_study, Browser};
use concord_testsupport::web::STRONG;
use rand::SeedableRng;
use serde_json::Value;

const TAB: &str = "\u{E004}";
const ENTER: &str = "\u{E007}";
const DAY_MS: i64 = 24 * 60 * 60 * 1000;
const RATING: &str = "[data-testid=rating-screen] [data-testid=item-number]";

/// The text of the first element matching `css`, its spaces collapsed and without the isolate
/// marks a name inside a sentence sits between.
fn text(chrome: &Chrome, css: &str) -> String {
    chrome.wait_for(css);
    chrome
        .script(&format!(
            "return document.querySelector({css:?}).textContent \
               .replace(/[\\u2068\\u2069]/g, '').trim().replace(/\\s+/g, ' ');"
        ))
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The `data-testid` (or tag) of the element that has keyboard focus.
fn focused(chrome: &Chrome) -> String {
    chrome
        .script(
            "const e = document.activeElement; \
             return e ? (e.dataset.testid || e.tagName.toLowerCase()) : '';",
        )
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Check the page as a phone shows it: the viewport is 360 px, nothing scrolls sideways, every
/// visible control is at least 44 × 44 px, and the form's fields are stacked in one column,
/// each label above its field.
fn fits_a_phone(chrome: &Chrome, page: &str) {
    let report = chrome.script(
        "const wide = document.documentElement.scrollWidth; \
         const small = [...document.querySelectorAll('button, input, a, select, textarea')] \
           .filter(e => e.offsetParent !== null) \
           .map(e => [e.dataset.testid || e.tagName + ':' + e.textContent.trim(), e.getBoundingClientRect()]) \
           .filter(([, r]) => r.width < 44 || r.height < 44) \
           .map(([n, r]) => `${n} ${Math.round(r.width)}×${Math.round(r.height)}`); \
         const fields = [...document.querySelectorAll('form .field')].map(f => { \
           const l = f.querySelector('label').getBoundingClientRect(); \
           const i = f.querySelector('input').getBoundingClientRect(); \
           return {left: Math.round(i.left), top: i.top, bottom: i.bottom, labelAbove: l.bottom <= i.top + 1, width: i.width}; }); \
         const stacked = fields.every((f, n) => n === 0 || (f.top >= fields[n - 1].bottom && f.left === fields[0].left)); \
         return {viewport: window.innerWidth, wide, small, fields: fields.length, stacked, \
                 labelsAbove: fields.every(f => f.labelAbove), narrowest: Math.min(...fields.map(f => f.width))};",
    );
    assert_eq!(
        report["viewport"], 360,
        "{page}: the page is laid out for a phone 360 px wide: {report}"
    );
    assert!(
        report["wide"].as_i64().unwrap_or(i64::MAX) <= 360,
        "{page}: nothing is wider than the phone, so nothing scrolls sideways: {report}"
    );
    assert_eq!(
        report["small"],
        Value::Array(vec![]),
        "{page}: every button, field and link is a target of at least 44 × 44 px"
    );
    assert!(
        report["fields"].as_u64().unwrap_or(0) >= 2
            && report["stacked"] == true
            && report["labelsAbove"] == true,
        "{page}: the labelled fields are stacked in one column, each label above its field: {report}"
    );
    assert!(
        report["narrowest"].as_f64().unwrap_or(0.0) >= 300.0,
        "{page}: each field spans the phone's width (less the margins): {report}"
    );
}

#[test]
fn the_invitation_and_login_pages_fit_a_phone_and_an_expert_logs_in_by_keyboard_alone() {
    let invited = std::cell::RefCell::new(String::new());
    let (served, _) = serve_study(
        2,
        &["Dr. Amira Haddad"],
        |study| {
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(21);
            let invitation = concord_core::app::web::invite_from(
                study,
                "Dr. Amira Haddad",
                7,
                Some("Dr. Mei Lee"),
                Some("mei.lee@example.org"),
                &mut rng,
            )
            .expect("the lead invites with their name and contact");
            *invited.borrow_mut() = invitation.token;
        },
        |o| o.ui_dir = web_ui(),
    );
    let chrome = Chrome::start();
    chrome.emulate_phone(360, 740);
    chrome.go(&format!("{}/invite#{}", served.base, invited.borrow()));

    // The invitation: which study, who invites, what Concord is, the name to log in with.
    assert_eq!(
        text(&chrome, "[data-testid=web-invite-name]"),
        "Dr. Amira Haddad",
        "the page shows the name the expert will log in with"
    );
    assert!(
        text(&chrome, "[data-testid=web-invite-title]").contains("study"),
        "the heading names the study (here its file name, as it has no title)"
    );
    assert!(
        text(&chrome, "[data-testid=web-invite-by]").contains("Dr. Mei Lee"),
        "the page names the lead who invites"
    );
    assert!(
        text(&chrome, "[data-testid=web-about]").starts_with("Concord is the research tool"),
        "the page says what Concord is"
    );
    assert!(
        text(&chrome, "[data-testid=web-ask]").contains("Ask Dr. Mei Lee")
            && text(&chrome, "[data-testid=web-contact]") == "mei.lee@example.org",
        "and whom to ask, with how to reach them"
    );
    assert!(
        text(&chrome, "[data-testid=web-invite-login-name]")
            .contains("capitals and extra spaces do not matter"),
        "and how the name may be typed"
    );
    fits_a_phone(&chrome, "the invitation page");
    let violations = chrome.axe_violations();
    assert!(
        violations.is_empty(),
        "axe-core finds no accessibility violation on the invitation page: {violations:#?}"
    );

    // A mismatch is an error styled as the app's and announced.
    chrome.type_into("[data-testid=web-passphrase]", STRONG);
    chrome.type_into("[data-testid=web-passphrase-confirm]", "something else 12");
    chrome.click("[data-testid=web-passphrase-submit]");
    chrome.wait_for("[role=alert] [data-testid=web-error]");
    let style = chrome.script(
        "const e = document.querySelector('[data-testid=web-error]'); const s = getComputedStyle(e); \
         return [s.backgroundColor, s.borderTopStyle, e.textContent.trim()];",
    );
    assert!(
        style[0] != "rgba(0, 0, 0, 0)"
            && style[1] == "solid"
            && style[2].as_str().is_some_and(|t| t.starts_with("The two passphrases differ")),
        "the error is set apart (a background and a border), in an alert region, as a sentence: {style}"
    );
    chrome.type_into("[data-testid=web-passphrase-confirm]", STRONG);
    chrome.click("[data-testid=web-passphrase-submit]");
    chrome.wait_for(RATING);
    chrome.click("[data-testid=web-logout]");

    // The login, by keyboard alone: Tab to the name, the name in another case, Tab, passphrase.
    chrome.wait_for("[data-testid=web-login-name]");
    assert!(
        text(&chrome, "[data-testid=web-login-name-hint]")
            .contains("as your study lead wrote it in your invitation"),
        "the login says how to type the name"
    );
    assert!(
        text(&chrome, "[data-testid=web-login-study]").contains("led by Dr. Mei Lee"),
        "and names the study and its lead"
    );
    fits_a_phone(&chrome, "the login page");
    let violations = chrome.axe_violations();
    assert!(
        violations.is_empty(),
        "axe-core finds no accessibility violation on the login page: {violations:#?}"
    );
    chrome.script("document.activeElement && document.activeElement.blur();");
    let mut order = Vec::new();
    for _ in 0..4 {
        chrome.press(TAB);
        order.push(focused(&chrome));
        if order.last().map(String::as_str) == Some("web-login-name") {
            break;
        }
    }
    assert_eq!(
        order,
        ["web-lang", "web-login-name"],
        "Tab reaches the language switch, then the name field"
    );
    chrome.press(&format!("  dr. amira HADDAD {TAB}"));
    assert_eq!(
        focused(&chrome),
        "web-login-passphrase",
        "Tab moves from the name to the passphrase"
    );
    chrome.press(&format!("not the passphrase 9{ENTER}"));
    chrome.wait_for("[role=alert] [data-testid=web-error]");
    assert!(
        text(&chrome, "[data-testid=web-error]")
            .starts_with("The name or the passphrase is not right."),
        "a wrong passphrase is announced as a sentence"
    );
    assert_eq!(
        focused(&chrome),
        "web-login-passphrase",
        "focus returns to the cleared passphrase field for another try"
    );
    chrome.press(&format!("{STRONG}{ENTER}"));
    chrome.wait_for(RATING);
    assert_eq!(
        text(&chrome, "[data-testid=web-rater]"),
        "Rating as Dr. Amira Haddad",
        "the name typed in lower case with extra spaces logged in the invited expert"
    );
}

#[test]
fn a_used_or_expired_invitation_link_leads_to_the_login_with_the_reason() {
    let (served, tokens) = serve(1, &["Ada", "Zoltan"], |o| o.ui_dir = web_ui());
    Browser::new(&served.base).accept(&tokens[0], STRONG);
    let chrome = Chrome::start();
    chrome.go(&format!("{}/invite#{}", served.base, tokens[0]));
    assert!(
        text(&chrome, "[data-testid=web-login-notice]")
            .starts_with("This invitation link has been used already."),
        "a used link leads to the login, which says why"
    );
    assert_eq!(
        chrome.script("return location.pathname;"),
        "/login",
        "the address is the login's"
    );
    assert_eq!(
        chrome.count("[data-testid=web-passphrase]"),
        0,
        "the form that sets a passphrase is not shown again"
    );
    let card = chrome.script(
        "const r = document.querySelector('[data-testid=web-login]').getBoundingClientRect(); \
         return [Math.round(r.left), Math.round(document.documentElement.clientWidth - r.right)];",
    );
    let (left, right) = (card[0].as_i64().unwrap_or(0), card[1].as_i64().unwrap_or(0));
    assert!(
        left > 100 && (left - right).abs() <= 2,
        "on a wide screen the login is a card in the middle, not flush to the left edge: {card}"
    );

    chrome.click("[data-testid=web-lang]");
    assert!(
        text(&chrome, "[data-testid=web-login-notice]").contains("已被使用"),
        "in Chinese the reason is Chinese"
    );
    chrome.type_into("[data-testid=web-login-name]", "ada");
    chrome.type_into("[data-testid=web-login-passphrase]", "not the passphrase 9");
    chrome.click("[data-testid=web-login-submit]");
    assert_eq!(
        text(&chrome, "[data-testid=web-error]"),
        "姓名或口令不正确。",
        "the server's refusal is in the language the page is in"
    );

    served.clock.advance(8 * DAY_MS);
    chrome.go(&format!("{}/invite#{}", served.base, tokens[1]));
    assert!(
        text(&chrome, "[data-testid=web-login-notice]").contains("已过期"),
        "an expired link leads to the login too, which says so (the page kept its language)"
    );
    chrome.type_into("[data-testid=web-login-name]", "ADA");
    chrome.type_into("[data-testid=web-login-passphrase]", STRONG);
    chrome.click("[data-testid=web-login-submit]");
    chrome.wait_for(RATING);
}

#[test]
fn the_sign_off_dialog_says_what_the_signing_passphrase_is_for() {
    let (served, tokens) = serve(1, &["Ada"], |o| o.ui_dir = web_ui());
    let chrome = Chrome::start();
    chrome.go(&format!("{}/invite#{}", served.base, tokens[0]));
    chrome.type_into("[data-testid=web-passphrase]", STRONG);
    chrome.type_into("[data-testid=web-passphrase-confirm]", STRONG);
    chrome.click("[data-testid=web-passphrase-submit]");
    chrome.wait_for(RATING);
    chrome.click("[data-testid=signoff-button]");
    chrome.wait_for("[data-testid=signoff-new]");
    let why = text(
        &chrome,
        "[data-testid=signoff-dialog] [data-testid=signoff-passphrase-why]",
    );
    assert!(
        why.contains("your signature")
            && why.contains("not the passphrase you log in")
            && why.contains("study lead included"),
        "where the signing passphrase is asked, the dialog says what it is for, that it is not \
         the login passphrase, and why: {why}"
    );
}
