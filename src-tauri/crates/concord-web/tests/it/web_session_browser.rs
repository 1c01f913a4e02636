//! The end of a web session, in a real browser (headless Chromium, the browser build of the UI):
//! the page says after how many idle minutes it logs out — the study's own setting, not a vague
//! "a while" —, says so again on the login when it has happened, and "Change rater", which in a
//! browser means logging out, asks first and can be declined.

use crate::browser::{web_ui, Chrome};
use crate::serve_study;
use concord_testsupport::web::STRONG;

const RATING: &str = "[data-testid=rating-screen] [data-testid=item-number]";
const MINUTE_MS: i64 = 60 * 1000;

/// The text of the first element matching `css`, its spaces collapsed.
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

fn log_in(chrome: &Chrome) {
    chrome.type_into("[data-testid=web-login-name]", "Ada");
    chrome.type_into("[data-testid=web-login-passphrase]", STRONG);
    chrome.click("[data-testid=web-login-submit]");
    chrome.wait_for(RATING);
}

#[test]
fn the_page_says_when_it_logs_out_and_change_rater_asks_before_logging_out() {
    // The lead set the study's idle lock to 20 minutes: the page says 20, the server keeps to it.
    let (served, tokens) = serve_study(
        2,
        &["Ada"],
        |s| {
            concord_core::app::study_security::set_idle_lock_minutes_of(s, 20)
                .expect("the lead sets the idle lock");
        },
        |o| o.ui_dir = web_ui(),
    );
    let chrome = Chrome::start();
    chrome.go(&format!("{}/invite#{}", served.base, tokens[0]));
    chrome.wait_for("[data-testid=web-invite-name]");
    chrome.type_into("[data-testid=web-passphrase]", STRONG);
    chrome.type_into("[data-testid=web-passphrase-confirm]", STRONG);
    chrome.click("[data-testid=web-passphrase-submit]");
    chrome.wait_for(RATING);
    let idle = text(&chrome, "[data-testid=web-idle]");
    assert_eq!(
        idle, "Logs out after 20 minutes without activity",
        "the page says after how long it logs out, from the study's setting"
    );

    // Change rater asks first; Stay keeps the session.
    chrome.click("[data-testid=switch-rater]");
    let asked = text(&chrome, "[data-testid=web-leave]");
    assert!(
        asked.contains("Log out to change rater?") && asked.contains("ratings are saved"),
        "Change rater says it will log out, and that the ratings are kept: {asked}"
    );
    assert_eq!(
        chrome.script("return document.activeElement.dataset.testid;"),
        "web-leave-confirm",
        "the question takes the focus"
    );
    chrome.click("[data-testid=web-leave-cancel]");
    assert_eq!(
        chrome.count("[data-testid=web-leave]"),
        0,
        "Stay closes the question"
    );
    assert_eq!(
        chrome.count(RATING),
        1,
        "and the expert is still rating, logged in"
    );
    assert_eq!(
        chrome.count("[data-testid=web-login-name]"),
        0,
        "nobody was logged out"
    );
    // Confirmed, it logs out.
    chrome.click("[data-testid=switch-rater]");
    chrome.click("[data-testid=web-leave-confirm]");
    chrome.wait_for("[data-testid=web-login-name]");

    // Logged in again, then idle for longer than the setting: the next action finds the session
    // ended, and the login says why, with the study's minutes.
    log_in(&chrome);
    served.clock.advance(21 * MINUTE_MS);
    // A level clicked: its save is the first request after the idle minutes.
    chrome.click("[data-testid=level]");
    let notice = text(&chrome, "[data-testid=web-login-notice]");
    assert!(
        notice.starts_with("You were logged out after 20 minutes without activity"),
        "the login says the session ended after the study's idle minutes: {notice}"
    );
    log_in(&chrome);
    assert_eq!(
        chrome.count("[data-testid=web-login-notice]"),
        0,
        "logged in again, the notice is gone"
    );
}
