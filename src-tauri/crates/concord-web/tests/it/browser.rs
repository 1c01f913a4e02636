//! The rater's journey in a real browser: Debian's Chromium, headless, driven by chromedriver
//! through a small W3C WebDriver client over reqwest, against the real server serving the browser
//! build of the UI (`cd ui && npm run build`). Invitation → set passphrase → rate five items by
//! keyboard → reload resumes → log out → log in; and, in a window of 800×600, a reply rated with
//! its 40 turns of history in view above it, the turns stepped through by keyboard and back to
//! the reply, and a session item rated whole.

use crate::{serve, serve_study, HOSTILE};
use concord_core::rubric::Scope;
use concord_testsupport::conversations::{add_conversation_items, CHATBOT};
use concord_testsupport::web::STRONG;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";
const ENTER: &str = "\u{E007}";

/// The browser build of the UI in the source tree.
pub fn web_ui() -> PathBuf {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../ui/dist-web"));
    assert!(
        dir.join("index.html").is_file(),
        "the browser build of the UI is missing: run `cd ui && npm run build` first ({})",
        dir.display()
    );
    dir
}

fn program(name: &str) -> PathBuf {
    ["/usr/bin", "/usr/lib/chromium", "/usr/local/bin"]
        .iter()
        .map(|d| PathBuf::from(d).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("{name} is not installed: `apt-get install chromium chromium-driver` (scripts/dev setup does)")
        })
}

/// A headless Chromium under chromedriver; both stop on drop.
pub struct Chrome {
    http: reqwest::blocking::Client,
    base: String,
    session: String,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Chrome {
    pub fn start() -> Chrome {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let driver = Command::new(program("chromedriver"))
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("client");
        let deadline = Instant::now() + Duration::from_secs(20);
        while http
            .get(format!("{base}/status"))
            .send()
            .map(|r| !r.status().is_success())
            .unwrap_or(true)
        {
            assert!(
                Instant::now() < deadline,
                "chromedriver answers within 20 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let profile = tempfile::tempdir().expect("profile dir");
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": program("chromium"),
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1280,900", format!("--user-data-dir={}", profile.path().display())]
            }
        }}});
        let v: Value = http
            .post(format!("{base}/session"))
            .json(&caps)
            .send()
            .and_then(|r| r.json())
            .expect("a WebDriver session");
        let session = v["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("chromedriver made a session: {v}"))
            .to_string();
        Chrome {
            http,
            base,
            session,
            driver,
            _profile: profile,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}/session/{}{}", self.base, self.session, path)
    }

    fn post(&self, path: &str, body: Value) -> Value {
        self.http
            .post(self.url(path))
            .json(&body)
            .send()
            .and_then(|r| r.json())
            .unwrap_or_else(|e| panic!("WebDriver POST {path} failed: {e}"))
    }

    fn get(&self, path: &str) -> Value {
        self.http
            .get(self.url(path))
            .send()
            .and_then(|r| r.json())
            .unwrap_or_else(|e| panic!("WebDriver GET {path} failed: {e}"))
    }

    pub fn go(&self, url: &str) {
        self.post("/url", json!({"url": url}));
    }

    pub fn try_find(&self, css: &str) -> Option<String> {
        let v = self.post("/element", json!({"using": "css selector", "value": css}));
        v["value"][ELEMENT_KEY].as_str().map(str::to_string)
    }

    pub fn count(&self, css: &str) -> usize {
        let v = self.post("/elements", json!({"using": "css selector", "value": css}));
        v["value"].as_array().map(Vec::len).unwrap_or(0)
    }

    pub fn wait_for(&self, css: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(e) = self.try_find(css) {
                return e;
            }
            assert!(
                Instant::now() < deadline,
                "no {css} appeared within 20 s; the page says: {}",
                self.script("return document.body.innerText;")
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    pub fn script(&self, body: &str) -> Value {
        self.post("/execute/sync", json!({"script": body, "args": []}))["value"].clone()
    }

    /// Run `body`, which ends by calling `arguments[0]` with its answer.
    pub fn script_async(&self, body: &str) -> Value {
        self.post("/execute/async", json!({"script": body, "args": []}))["value"].clone()
    }

    /// Lay pages out as a phone `width` × `height` CSS pixels large (Chromium's device emulation,
    /// through chromedriver's bridge to the DevTools protocol): the page's viewport is that wide.
    pub fn emulate_phone(&self, width: u32, height: u32) {
        let v = self.post(
            "/goog/cdp/execute",
            json!({"cmd": "Emulation.setDeviceMetricsOverride", "params": {
                "width": width, "height": height, "deviceScaleFactor": 2, "mobile": true
            }}),
        );
        assert!(
            v["value"].get("error").is_none(),
            "Chromium emulates a phone of {width}×{height}: {v}"
        );
    }

    /// Make the page a touch screen's (Chromium's touch emulation): `pointer: coarse` matches.
    pub fn emulate_touch(&self) {
        let v = self.post(
            "/goog/cdp/execute",
            json!({"cmd": "Emulation.setTouchEmulationEnabled", "params": {
                "enabled": true, "maxTouchPoints": 5
            }}),
        );
        assert!(
            v["value"].get("error").is_none(),
            "Chromium emulates a touch screen: {v}"
        );
    }

    /// Ask pages for less motion, as a person who set "reduce motion" in their system does.
    pub fn emulate_reduced_motion(&self) {
        let v = self.post(
            "/goog/cdp/execute",
            json!({"cmd": "Emulation.setEmulatedMedia", "params": {
                "features": [{"name": "prefers-reduced-motion", "value": "reduce"}]
            }}),
        );
        assert!(
            v["value"].get("error").is_none(),
            "Chromium emulates a preference for reduced motion: {v}"
        );
    }

    pub fn attribute(&self, css: &str, name: &str) -> Option<String> {
        let e = self.try_find(css)?;
        self.get(&format!("/element/{e}/attribute/{name}"))["value"]
            .as_str()
            .map(str::to_string)
    }

    pub fn wait_for_attribute(&self, css: &str, name: &str, want: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.attribute(css, name).as_deref() != Some(want) {
            assert!(
                Instant::now() < deadline,
                "{css} never had {name}={want:?}; the page says: {}",
                self.script("return document.body.innerText;")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn type_into(&self, css: &str, text: &str) {
        let e = self.wait_for(css);
        self.post(&format!("/element/{e}/value"), json!({"text": text}));
    }

    pub fn click(&self, css: &str) {
        let e = self.wait_for(css);
        self.post(&format!("/element/{e}/click"), json!({}));
    }

    /// Resize the browser's window (WebDriver's window rect).
    pub fn resize(&self, width: u32, height: u32) {
        self.post("/window/rect", json!({"width": width, "height": height}));
    }

    /// axe-core (the UI's dev dependency) run on the page as it is now: every WCAG 2.2 A and AA
    /// rule and axe's best practices, every violation of any impact, one line each.
    pub fn axe_violations(&self) -> Vec<String> {
        if self.script("return typeof window.axe;") != "object" {
            self.script(&format!(
                "{};\nreturn typeof window.axe;",
                concord_testsupport::axe::source()
            ));
        }
        concord_testsupport::axe::describe(
            &self.script_async(&concord_testsupport::axe::run_script()),
        )
    }

    /// Press `key` while holding `modifier` (e.g. "\u{E008}" Shift), as one chord.
    pub fn chord(&self, modifier: &str, key: &str) {
        let actions = json!([
            {"type": "keyDown", "value": modifier},
            {"type": "keyDown", "value": key},
            {"type": "keyUp", "value": key},
            {"type": "keyUp", "value": modifier},
        ]);
        self.post(
            "/actions",
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}),
        );
        self.http.delete(self.url("/actions")).send().ok();
    }

    pub fn press(&self, keys: &str) {
        let mut actions = Vec::new();
        for ch in keys.chars() {
            actions.push(json!({"type": "keyDown", "value": ch.to_string()}));
            actions.push(json!({"type": "keyUp", "value": ch.to_string()}));
        }
        self.post(
            "/actions",
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}),
        );
        self.http.delete(self.url("/actions")).send().ok();
    }
}

impl Drop for Chrome {
    fn drop(&mut self) {
        let _ = self.http.delete(self.url("")).send();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

const ITEM: &str = "[data-testid=rating-screen] [data-testid=item-number]";

fn current_item(chrome: &Chrome) -> i64 {
    chrome.wait_for(ITEM);
    chrome
        .attribute(ITEM, "data-item")
        .and_then(|v| v.parse().ok())
        .expect("the item number is on the screen")
}

#[test]
fn a_rater_with_only_a_browser_rates_resumes_logs_out_and_logs_in() {
    let (served, tokens) = serve(2, &["Ada"], |o| o.ui_dir = web_ui());
    let chrome = Chrome::start();
    chrome.go(&format!("{}/invite#{}", served.base, tokens[0]));
    chrome.wait_for("[data-testid=web-invite-name]");
    chrome.type_into("[data-testid=web-passphrase]", STRONG);
    chrome.type_into("[data-testid=web-passphrase-confirm]", STRONG);
    chrome.click("[data-testid=web-passphrase-submit]");
    assert_eq!(
        current_item(&chrome),
        1,
        "the rating screen opens on the first item"
    );
    assert_eq!(
        chrome.script("return location.hash;"),
        "",
        "the invitation token is gone from the address bar"
    );

    let mut hostile_seen = false;
    for n in 1..=5 {
        assert_eq!(current_item(&chrome), n, "item {n} is shown");
        let answer = chrome.script(
            "const a = document.querySelector('[data-testid=answer]'); return a ? a.textContent : '';",
        );
        if answer.as_str() == Some(HOSTILE) {
            hostile_seen = true;
        }
        let criteria = chrome.count("[data-testid=criterion]");
        assert_eq!(
            criteria, 7,
            "item {n} shows the seven MentalBench attributes"
        );
        chrome.press(&format!("{}{ENTER}", "1".repeat(criteria)));
        chrome.wait_for_attribute(ITEM, "data-item", &(n + 1).to_string());
    }
    let markup = chrome.script(
        "return document.querySelectorAll('[data-testid=answer] img, [data-testid=answer] script, [data-testid=context] img').length;",
    );
    assert_eq!(markup, 0, "no dataset text became markup");

    // "Saved" on the screen: every value has been acknowledged by the server.
    chrome.wait_for_attribute("[data-testid=save-state]", "data-pending", "0");
    chrome.go(&format!("{}/", served.base));
    assert_eq!(
        current_item(&chrome),
        6,
        "a reload resumes at the item after the five rated"
    );

    chrome.click("[data-testid=web-logout]");
    chrome.type_into("[data-testid=web-login-name]", "Ada");
    chrome.type_into("[data-testid=web-login-passphrase]", STRONG);
    chrome.click("[data-testid=web-login-submit]");
    assert_eq!(
        current_item(&chrome),
        6,
        "logging in again resumes there too"
    );
    let cookie = chrome.script("return document.cookie;");
    assert_eq!(
        cookie, "",
        "the session cookie is out of the page's reach (HttpOnly)"
    );

    let study = served.open_again();
    let entries = concord_core::app::audit::log(&study, &Default::default()).expect("log");
    let from_web = entries
        .iter()
        .filter(|e| e.entry.action.starts_with("rating.") && e.entry.detail["origin"] == "web")
        .count();
    assert_eq!(
        from_web, 35,
        "five items × seven values, each durable and from the web"
    );
    assert!(
        hostile_seen,
        "the hostile answer was among the five items, shown as its exact text (the queue's seeded order puts it there)"
    );
}

#[test]
fn the_page_says_it_is_reconnecting_and_carries_on_when_the_server_is_back() {
    let (mut served, tokens) = serve(1, &["Ada"], |o| o.ui_dir = web_ui());
    let chrome = Chrome::start();
    chrome.go(&format!("{}/invite#{}", served.base, tokens[0]));
    chrome.type_into("[data-testid=web-passphrase]", STRONG);
    chrome.type_into("[data-testid=web-passphrase-confirm]", STRONG);
    chrome.click("[data-testid=web-passphrase-submit]");
    assert_eq!(current_item(&chrome), 1, "the rating screen opens");
    // The page fetches the next item ahead while the first is shown; the server stops once that
    // answer is in (otherwise it waits, as it should, for the server to come back).
    let deadline = Instant::now() + Duration::from_secs(20);
    while chrome.script(
        "return performance.getEntriesByType('resource') \
           .some((e) => e.name.endsWith('/api/items/2') && e.responseEnd > 0);",
    ) != json!(true)
    {
        assert!(
            Instant::now() < deadline,
            "the page fetches the second item ahead"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let addr = served.running.as_ref().expect("running").addr;
    served.stop();

    // The server is gone: the expert types a rationale and rates the item by keyboard.
    let rationale = "warm, but it skips the safety question";
    chrome.click("[data-testid=rationale]");
    chrome.type_into("[data-testid=rationale]", rationale);
    chrome.click(ITEM);
    chrome.press(&format!("{}{ENTER}", "1".repeat(7)));
    chrome.wait_for("[data-testid=web-reconnecting]");
    chrome.wait_for_attribute(ITEM, "data-item", "2");

    served.start_on(addr, &web_ui());
    chrome.wait_for_attribute("[data-testid=save-state]", "data-pending", "0");
    let deadline = Instant::now() + Duration::from_secs(20);
    while chrome.try_find("[data-testid=web-reconnecting]").is_some() {
        assert!(
            Instant::now() < deadline,
            "the reconnecting notice goes once the server is back"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let study = served.open_again();
    let ada = study
        .store()
        .expert_by_name("Ada")
        .expect("read")
        .expect("Ada")
        .id;
    let item = concord_core::app::rating::rating_item(&study, ada, 1).expect("item 1");
    assert!(
        item.criteria.iter().all(|c| c.value == Some(1)),
        "every value typed while the server was away is in the study: {:?}",
        item.criteria.iter().map(|c| c.value).collect::<Vec<_>>()
    );
    assert_eq!(
        item.rationale.as_deref(),
        Some(rationale),
        "the typed rationale was not lost"
    );
    let entries = concord_core::app::audit::log(&study, &Default::default()).expect("log");
    let values = entries
        .iter()
        .filter(|e| e.entry.action.starts_with("rating.") && e.entry.detail["origin"] == "web")
        .count();
    assert_eq!(values, 7, "each value was written once, none twice");
}

const ESCAPE: &str = "\u{E00C}";

/// `single`, `reply` or `session`: what the item on the screen is.
fn shape(chrome: &Chrome) -> String {
    chrome
        .script(
            "const c = document.querySelector('[data-testid=conversation]'); \
             return c ? c.dataset.scope : 'single';",
        )
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The number of the turn being read, or None on the reply.
fn reading(chrome: &Chrome) -> Option<i64> {
    chrome
        .script(
            "const t = document.querySelector('[data-testid=turn][data-current=true]'); \
             return t ? Number(t.dataset.turn) : null;",
        )
        .as_i64()
}

fn wait_reading(chrome: &Chrome, want: Option<i64>, after: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while reading(chrome) != want {
        assert!(
            Instant::now() < deadline,
            "after {after} the turn being read should be {want:?}, not {:?}",
            reading(chrome)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the first element matching `css` lies wholly inside the viewport.
fn in_view(chrome: &Chrome, css: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let shown = chrome.script(&format!(
            "const e = document.querySelector({css:?}); if (!e) return false; \
             const r = e.getBoundingClientRect(); \
             return r.height > 0 && r.top >= -1 && r.bottom <= window.innerHeight + 1;"
        ));
        if shown == json!(true) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
}

fn text_of(chrome: &Chrome, css: &str) -> String {
    chrome.wait_for(css);
    chrome
        .script(&format!(
            "return document.querySelector({css:?}).textContent.trim().replace(/\\s+/g, ' ');"
        ))
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The reply after 40 turns in the browser: in view at 800×600 with the first criterion, the
/// turns read back to the opening note and forward, Esc back to the reply; rated 5 then 4s.
fn browser_reply(chrome: &Chrome, criteria: usize) {
    assert_eq!(
        text_of(chrome, "[data-testid=reply-heading]"),
        "Reply being rated, turn 41",
        "the reply is marked with its turn"
    );
    assert!(
        in_view(chrome, "[data-testid=answer]") && in_view(chrome, "[data-testid=criterion]"),
        "at 800×600 the reply after 40 turns and the first criterion are in view: {}",
        chrome.script(
            "return ['[data-testid=answer]', '[data-testid=criterion]'].map(s => \
               document.querySelector(s).getBoundingClientRect().bottom).concat([window.innerHeight]);"
        )
    );
    assert_eq!(
        chrome.count("[data-testid=turn]"),
        2,
        "the long history opens on its last two turns"
    );
    chrome.press("[");
    wait_reading(chrome, Some(40), "[");
    chrome.press(&"[".repeat(40));
    wait_reading(chrome, Some(1), "[ forty more times");
    assert_eq!(
        chrome.count("[data-testid=turn]"),
        40,
        "reading the folded turns unfolds them"
    );
    assert_eq!(
        chrome.attribute("[data-testid=turn][data-turn='1']", "data-role"),
        Some("system".to_string()),
        "the first turn is the system note"
    );
    assert_eq!(
        text_of(
            chrome,
            "[data-testid=turn][data-turn='1'] [data-testid=turn-role]"
        ),
        "Note",
        "and is labelled a note"
    );
    assert_eq!(
        chrome.script(
            "return document.querySelectorAll('[data-testid=transcript] img, [data-testid=transcript] b').length;"
        ),
        json!(0),
        "the markup of a turn stays text"
    );
    chrome.press("]J");
    wait_reading(chrome, Some(3), "] and J");
    chrome.press(ESCAPE);
    wait_reading(chrome, None, "Esc");
    chrome.wait_for_attribute("[data-testid=answer]", "data-current", "true");
    chrome.press(&format!("5{}{ENTER}", "4".repeat(criteria - 1)));
}

/// The session item in the browser: the whole conversation is rated; rated 2s.
fn browser_session(chrome: &Chrome, criteria: usize) {
    assert_eq!(
        text_of(chrome, "#conversation-heading"),
        "The conversation being rated · 6 turns",
        "a session item says the whole conversation is rated"
    );
    assert_eq!(
        (
            chrome.count("[data-testid=turn]"),
            chrome.count("[data-testid=answer]")
        ),
        (6, 0),
        "every turn is shown and there is no separate reply"
    );
    chrome.press("]]");
    wait_reading(chrome, Some(2), "]]");
    chrome.press(&format!("{}{ENTER}", "2".repeat(criteria)));
}

#[test]
fn in_a_browser_at_800_by_600_a_rater_rates_a_reply_after_forty_turns_steps_through_them_and_rates_a_session(
) {
    let (served, tokens) = serve_study(
        0,
        &["Ada"],
        |study| {
            add_conversation_items(study.store_mut());
        },
        |o| o.ui_dir = web_ui(),
    );
    let chrome = Chrome::start();
    chrome.resize(800, 600);
    chrome.go(&format!("{}/invite#{}", served.base, tokens[0]));
    chrome.type_into("[data-testid=web-passphrase]", STRONG);
    chrome.type_into("[data-testid=web-passphrase-confirm]", STRONG);
    chrome.click("[data-testid=web-passphrase-submit]");
    let total = 4;
    let mut shapes = Vec::new();
    for n in 1..=total {
        assert_eq!(current_item(&chrome), n, "item {n} is shown");
        chrome.wait_for("[data-testid=criterion]");
        let criteria = chrome.count("[data-testid=criterion]");
        let now = shape(&chrome);
        let page = chrome.script("return document.body.innerText + document.body.innerHTML;");
        let page = page.as_str().unwrap_or_default();
        assert!(
            !page.contains(CHATBOT.0) && !page.contains(CHATBOT.1),
            "the page names no source (blinding)"
        );
        match now.as_str() {
            "reply" => browser_reply(&chrome, criteria),
            "session" => browser_session(&chrome, criteria),
            _ => chrome.press(&format!("{}{ENTER}", "3".repeat(criteria))),
        }
        shapes.push(now);
        if n < total {
            chrome.wait_for_attribute(ITEM, "data-item", &(n + 1).to_string());
        }
    }
    chrome.wait_for("[data-testid=queue-finished]");
    // The end of the queue lists nothing left: it is asked for after every value was saved.
    chrome.wait_for("[data-testid=left-none]");
    shapes.sort();
    assert_eq!(
        shapes,
        vec!["reply", "session", "single", "single"],
        "the queue held the reply, the session and two single-turn answers"
    );

    let study = served.open_again();
    let ada = study
        .store()
        .expert_by_name("Ada")
        .expect("read")
        .expect("Ada")
        .id;
    for i in 1..=total {
        let item = concord_core::app::rating::rating_item(&study, ada, i).expect("the item reads");
        let values: Vec<Option<i64>> = item.criteria.iter().map(|c| c.value).collect();
        let want: Vec<Option<i64>> = match (item.scope, item.history.len()) {
            (Scope::Reply, 40) => (0..values.len())
                .map(|c| Some(if c == 0 { 5 } else { 4 }))
                .collect(),
            (Scope::Session, 6) => vec![Some(2); values.len()],
            (Scope::Reply, 1) => vec![Some(3); values.len()],
            other => panic!("item {i} is none of the study's: {other:?}"),
        };
        assert_eq!(
            values,
            want,
            "item {i} ({:?}, {} turns before it) holds the values typed in the browser",
            item.scope,
            item.history.len()
        );
    }
}
