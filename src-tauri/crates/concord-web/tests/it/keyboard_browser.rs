//! The browser's rating page by keyboard alone (headless Chromium, WebDriver key actions only —
//! no click from the invitation to the login page): the invited expert sets a passphrase, the
//! rating page opens with the keyboard on the first criterion, Tab reaches Log out, 中文 and Sign
//! off, and the expert rates ten items, writes a rationale, flags an item, leaves one
//! half-rated, signs off (the dialog takes the keyboard and gives it back) and logs out. On the
//! way axe-core finds no violation of any impact on the rating page (in English and Chinese),
//! its key help, the sign-off dialog and the end of the queue.

use crate::browser::{web_ui, Chrome};
use crate::serve;
use concord_testsupport::web::STRONG;
use serde_json::Value;
use std::time::{Duration, Instant};

const TAB: &str = "\u{E004}";
const ENTER: &str = "\u{E007}";
const ESCAPE: &str = "\u{E00C}";
const ITEM: &str = "[data-testid=rating-screen] [data-testid=item-number]";
/// The signing passphrase the expert sets at sign-off.
const SIGNING: &str = "quiet lantern orchard 47";

/// What has keyboard focus: its `data-testid` (or tag), role, whether it shows its focus and
/// whether it is inside an open dialog; `body` when nothing has it.
pub fn focused(chrome: &Chrome) -> Value {
    chrome.script(
        "const e = document.activeElement; \
         if (!e || e === document.body || e === document.documentElement) return {testid: 'body'}; \
         return {testid: e.dataset.testid || e.tagName.toLowerCase(), role: e.getAttribute('role'), \
                 visible: e.matches(':focus-visible'), inDialog: !!e.closest('dialog[open]')};",
    )
}

/// Wait until the keyboard is on an element with `testid`.
pub fn wait_focus(chrome: &Chrome, testid: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = focused(chrome);
        if now["testid"] == testid {
            return now;
        }
        assert!(
            Instant::now() < deadline,
            "the keyboard never reached {testid}; it is on {now}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Press Tab, one key at a time, until the keyboard is on `testid`; every control passed on the
/// way shows its focus.
pub fn tab_to(chrome: &Chrome, testid: &str, limit: usize) {
    let mut path = Vec::new();
    for _ in 0..limit {
        chrome.press(TAB);
        let now = focused(chrome);
        assert!(
            now["testid"] == "body" || now["visible"] == true,
            "the control the keyboard is on shows it: {now}"
        );
        if now["testid"] == testid {
            return;
        }
        path.push(now["testid"].as_str().unwrap_or_default().to_string());
    }
    panic!("{limit} Tabs never reached {testid}: {path:?}");
}

fn no_violations(chrome: &Chrome, page: &str) {
    let found = chrome.axe_violations();
    println!(
        "figure: axe on the browser's {page}: {} violations",
        found.len()
    );
    assert!(
        found.is_empty(),
        "axe-core finds no accessibility violation on {page}: {found:#?}"
    );
}

#[test]
fn an_expert_rates_ten_items_writes_a_rationale_flags_leaves_one_signs_off_and_logs_out_in_a_browser_by_keyboard_alone(
) {
    let (served, tokens) = serve(3, &["Ada"], |o| o.ui_dir = web_ui());
    let chrome = Chrome::start();
    chrome.go(&format!("{}/invite#{}", served.base, tokens[0]));
    chrome.wait_for("[data-testid=web-invite-name]");

    // The page's title says where the expert is, and the fields say what they hold (a password
    // manager fills them).
    assert_eq!(
        chrome.script("return document.title;"),
        "Choose your passphrase — Concord",
        "the invitation page is titled by what it asks"
    );
    assert_eq!(
        chrome
            .attribute("[data-testid=web-passphrase]", "autocomplete")
            .as_deref(),
        Some("new-password"),
        "the new passphrase is marked as one"
    );

    // The invitation by keyboard: Tab to the passphrase, the passphrase, Tab, again, Enter.
    tab_to(&chrome, "web-passphrase", 12);
    chrome.press(STRONG);
    tab_to(&chrome, "web-passphrase-confirm", 4);
    chrome.press(&format!("{STRONG}{ENTER}"));
    chrome.wait_for(ITEM);

    // The rating page opens with the keyboard on the first criterion's levels.
    let first = wait_focus(&chrome, "level");
    assert_eq!(first["role"], "radio", "a level is a radio: {first}");
    assert_eq!(
        chrome.script("return document.title;"),
        "Rate answers — Concord",
        "the rating page is titled as such"
    );
    no_violations(&chrome, "rating page");

    // Log out and 中文 are reached by Tab from the criteria (round the page), as is Sign off.
    tab_to(&chrome, "web-logout", 40);
    tab_to(&chrome, "web-lang", 3);
    chrome.press(ENTER);
    chrome.wait_for_attribute("html", "lang", "zh-CN");
    no_violations(&chrome, "rating page in Chinese");
    chrome.press(ENTER);
    chrome.wait_for_attribute("html", "lang", "en");
    // Back to the criteria: Tab goes on from the header into the page.
    tab_to(&chrome, "level", 10);
    chrome.press("?");
    chrome.wait_for("[data-testid=help-overlay][open]");
    assert_eq!(
        focused(&chrome)["inDialog"],
        true,
        "the key help takes the keyboard"
    );
    no_violations(&chrome, "rating page's key help");
    chrome.press(ESCAPE);
    wait_focus(&chrome, "level");

    let criteria = chrome.count("[data-testid=criterion]");
    for item in 1..=10 {
        chrome.wait_for_attribute(ITEM, "data-item", &item.to_string());
        if item == 3 {
            chrome.press("r");
            wait_focus(&chrome, "rationale");
            chrome.press("The reply names the feeling but offers no next step");
            chrome.press(ESCAPE);
            wait_focus(&chrome, "level");
        }
        if item == 5 {
            chrome.press("f");
            wait_focus(&chrome, "flag-reason");
            chrome.press(&format!("Mentions a medication dose{ENTER}"));
            chrome.wait_for("[data-testid=flag-note]");
            wait_focus(&chrome, "level");
        }
        let values: String = (0..criteria)
            .map(|j| char::from(b'1' + ((item + j) % 5) as u8))
            .collect();
        chrome.press(&format!("{values}{ENTER}"));
    }
    chrome.wait_for_attribute(ITEM, "data-item", "11");
    // Item 11 is left half-rated: one value, then S.
    chrome.press("2s");
    chrome.wait_for_attribute(ITEM, "data-item", "12");

    // Sign off: Tab to it, Enter; the dialog takes the keyboard; set the signing passphrase,
    // sign; Esc gives the keyboard back to Sign off.
    tab_to(&chrome, "signoff-button", 40);
    chrome.press(ENTER);
    let inside = wait_focus(&chrome, "signoff-new");
    assert_eq!(
        inside["inDialog"], true,
        "the dialog's first field has the keyboard"
    );
    no_violations(&chrome, "sign-off dialog");
    chrome.press(&format!("{SIGNING}{TAB}{SIGNING}{ENTER}"));
    wait_focus(&chrome, "signoff-passphrase");
    chrome.press(&format!("{SIGNING}{ENTER}"));
    chrome.wait_for("[data-testid=signature]");
    no_violations(&chrome, "sign-off dialog once signed");
    chrome.press(ESCAPE);
    wait_focus(&chrome, "signoff-button");
    chrome.wait_for_attribute("[data-testid=save-state]", "data-pending", "0");

    // On to the end of the queue (S twice): the items left to look at are listed.
    chrome.press("s");
    chrome.wait_for_attribute(ITEM, "data-item", "13");
    chrome.press("s");
    chrome.wait_for("[data-testid=left-items]");
    no_violations(&chrome, "end of the queue");

    // Log out, by Tab and Enter: the login page.
    tab_to(&chrome, "web-logout", 40);
    chrome.press(ENTER);
    chrome.wait_for("[data-testid=web-login-name]");
    assert_eq!(
        chrome
            .attribute("[data-testid=web-login-name]", "autocomplete")
            .as_deref(),
        Some("username"),
        "the login's name is marked as the user name"
    );

    let conn = rusqlite::Connection::open(&served.study).expect("the study opens");
    let rater: i64 = conn
        .query_row("SELECT id FROM rater WHERE name = 'Ada'", [], |r| r.get(0))
        .expect("the invited expert");
    let count = |sql: &str| -> i64 {
        conn.query_row(sql, [rater], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    assert_eq!(
        count("SELECT COUNT(*) FROM rating WHERE rater_id = ?1 AND value IS NOT NULL"),
        10 * criteria as i64 + 1,
        "every value typed is stored: ten items whole and one value of the eleventh"
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM assignment WHERE rater_id = ?1 AND completed_at IS NOT NULL"),
        10,
        "ten items are complete"
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
