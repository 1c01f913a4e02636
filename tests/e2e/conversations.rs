//! Journeys on the rating screen with conversations: an expert rates a reply by keyboard with its
//! 40 turns of history above it, steps back through the turns with the turn keys (unfolding the
//! earlier ones, down to the opening system note) and returns to the reply, rates a session item
//! whose whole conversation is the thing rated, and a single-turn item beside them as before; the
//! values are in the study afterwards, no source is named anywhere the expert can look, the text
//! of a turn stays text, and at 800×600 a 40-turn history leaves the reply and the first criterion
//! in view. The keypress-to-next-item time with 40-turn histories is measured against
//! single-turn items interleaved with them in the same window.

use super::rating::{current_item, rate_current_item_with_keys, start_rating_as};
use super::App;
use concord_core::base::clock::SystemClock;
use concord_core::rubric::Scope;
use concord_core::store::Store;
use concord_core::workflow::queue;
use concord_testsupport::conversations::{
    add_conversation_items, add_long_sessions, add_long_transcripts, add_single_turns, CHATBOT,
    NOTE,
};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const ENTER: &str = "\u{E007}";
const ESCAPE: &str = "\u{E00C}";

/// What the screen shows now: `single`, `reply` or `session`.
fn shape(app: &App) -> String {
    app.script(
        "const c = document.querySelector('[data-testid=conversation]'); \
         return c ? c.dataset.scope : 'single';",
        json!([]),
    )
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// The turns on the page: number, role, the role's label as written, and whether it is the one
/// being read.
fn turns(app: &App) -> Vec<(i64, String, String, bool)> {
    let v = app.script(
        "return [...document.querySelectorAll('[data-testid=turn]')].map(t => [ \
           Number(t.dataset.turn), t.dataset.role, \
           t.querySelector('[data-testid=turn-role]').textContent.trim(), \
           t.dataset.current === 'true']);",
        json!([]),
    );
    v.as_array()
        .expect("the turns are listed")
        .iter()
        .map(|t| {
            (
                t[0].as_i64().unwrap_or(-1),
                t[1].as_str().unwrap_or_default().to_string(),
                t[2].as_str().unwrap_or_default().to_string(),
                t[3].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

/// The turn being read (its number), or None on the reply.
fn reading(app: &App) -> Option<i64> {
    app.script(
        "const t = document.querySelector('[data-testid=turn][data-current=true]'); \
         return t ? Number(t.dataset.turn) : null;",
        json!([]),
    )
    .as_i64()
}

/// Wait until the turn being read is `want` (None: the reply), and it has come into view: inside
/// the window and inside the history's own scrolling box.
fn wait_reading(app: &App, want: Option<i64>, after: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let now = reading(app);
        let shown = match want {
            Some(n) => fully_in_view(app, &format!("[data-testid=turn][data-turn='{n}'] .who")),
            None => true,
        };
        if now == want && shown {
            return;
        }
        if Instant::now() > deadline {
            app.screenshot("conversation-turn-keys");
            panic!(
                "after {after} the turn being read should be {want:?} and in view, not {now:?} \
                 (in view: {shown}; screenshot tests/artifacts/conversation-turn-keys.png)"
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the first element matching `css` lies wholly inside the window and inside every
/// scrolling box around it.
fn fully_in_view(app: &App, css: &str) -> bool {
    app.script(
        "const e = document.querySelector(arguments[0]); if (!e) return false; \
         const r = e.getBoundingClientRect(); \
         if (r.height <= 0 || r.top < -1 || r.bottom > window.innerHeight + 1) return false; \
         for (let p = e.parentElement; p; p = p.parentElement) { \
           const s = getComputedStyle(p).overflowY; \
           if (s !== 'auto' && s !== 'scroll') continue; \
           const b = p.getBoundingClientRect(); \
           if (r.top < b.top - 1 || r.bottom > b.bottom + 1) return false; } \
         return true;",
        json!([css]),
    )
    .as_bool()
    .unwrap_or(false)
}

/// Wait until `css` is wholly in view (the screen scrolls after it renders).
fn settles_in_view(app: &App, css: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !fully_in_view(app, css) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    true
}

fn text_content(app: &App, css: &str) -> String {
    app.wait_for(css, Duration::from_secs(10));
    app.script(
        "return document.querySelector(arguments[0]).textContent.trim().replace(/\\s+/g, ' ');",
        json!([css]),
    )
    .as_str()
    .unwrap_or_default()
    .to_string()
}

fn count(app: &App, css: &str) -> usize {
    app.find_all(css).len()
}

/// Nothing on the page names the chatbot that wrote the replies.
fn assert_blind(app: &App, at: &str) {
    let page = app.script(
        "return document.body.innerText + ' ' + document.body.innerHTML;",
        json!([]),
    );
    let page = page.as_str().unwrap_or_default();
    for name in [CHATBOT.0, CHATBOT.1] {
        assert!(
            !page.contains(name),
            "the page names the source {name:?} on the {at} item (blinding)"
        );
    }
}

/// Type `value` for every criterion but the ones already set, then Enter; wait for the next item
/// (or the end of the queue).
fn finish_item(app: &App, value: u8, item: i64) {
    let missing = app.script(
        "return document.querySelectorAll('[data-testid=criterion][data-value=\"\"]').length;",
        json!([]),
    );
    let missing = missing.as_u64().unwrap_or(0) as usize;
    app.press(&format!("{}{ENTER}", value.to_string().repeat(missing)));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = app.script(
            "if (document.querySelector('[data-testid=queue-finished]')) return -1; \
             const n = document.querySelector('[data-testid=item-number]'); \
             return n ? Number(n.dataset.item) : 0;",
            json!([]),
        );
        if now == json!(-1) || now == json!(item + 1) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "Enter after the last value moves on from item {item}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The reply after 40 turns: its history shown with the earlier turns folded, the turn keys
/// through all of them and back, the markup of turn 7 as text; rated 5 then 4s.
fn rate_the_long_reply(app: &App) {
    assert_eq!(
        text_content(app, "[data-testid=reply-heading]"),
        "Reply being rated, turn 41",
        "the reply being rated is marked with its turn"
    );
    let shown = turns(app);
    assert_eq!(
        shown
            .iter()
            .map(|(n, role, label, _)| (*n, role.as_str(), label.as_str()))
            .collect::<Vec<_>>(),
        vec![(39, "assistant", "Assistant"), (40, "user", "User")],
        "a long history opens on its last two turns, each labelled with who speaks"
    );
    let toggle = app.wait_for("[data-testid=turns-toggle]", Duration::from_secs(5));
    assert_eq!(
        (
            app.attribute(&toggle, "aria-expanded").as_deref(),
            text_content(app, "[data-testid=turns-toggle]")
        ),
        (Some("false"), "Show 38 earlier turns".to_string()),
        "the 38 earlier turns are folded behind a control that says so"
    );
    assert!(
        settles_in_view(app, "[data-testid=answer]")
            && settles_in_view(app, "[data-testid=criterion]"),
        "the reply and the first criterion are in view on load"
    );
    assert!(
        settles_in_view(app, "[data-testid=turn][data-turn='40']"),
        "the history is scrolled to the turn just before the reply"
    );
    app.assert_accessible("conversation-reply");

    app.press("[");
    wait_reading(app, Some(40), "[");
    assert!(
        text_content(app, "[data-testid=turn-position]").starts_with("Reading turn 40 of 40"),
        "the screen says which turn is being read"
    );
    app.press("k");
    wait_reading(app, Some(39), "k");
    app.press("[");
    wait_reading(app, Some(38), "a third [, into the folded turns");
    assert_eq!(
        app.attribute(&toggle, "aria-expanded").as_deref(),
        Some("true"),
        "reading a folded turn unfolds the earlier turns"
    );
    assert_eq!(
        count(app, "[data-testid=turn]"),
        40,
        "all 40 turns are shown once unfolded"
    );
    app.press(&"[".repeat(40));
    wait_reading(app, Some(1), "[ forty more times");
    let note = turns(app)[0].clone();
    assert_eq!(
        (note.1.as_str(), note.2.as_str()),
        ("system", "Note"),
        "the opening system message is shown as a note"
    );
    assert_eq!(
        count(app, "[data-testid=turn][data-role=system] button"),
        0,
        "a note has nothing to rate"
    );
    assert!(
        text_content(app, "[data-testid=turn][data-turn='1'] .said") == NOTE,
        "the note's text is shown"
    );
    // The markup typed into turn 7 is text on the page.
    assert!(
        text_content(app, "[data-testid=turn][data-turn='7'] .said").contains("<img src=x"),
        "markup in a turn is shown as text"
    );
    assert_eq!(
        app.script(
            "return document.querySelectorAll('[data-testid=transcript] img, [data-testid=transcript] b').length \
             + (window.__pwned === undefined ? 0 : 100);",
            json!([])
        ),
        json!(0),
        "no element is made from a turn's text and nothing in it runs"
    );
    app.screenshot("conversation-first-turn");

    app.press("]");
    wait_reading(app, Some(2), "]");
    app.press("J");
    wait_reading(app, Some(3), "J");
    // Values are typed while a turn is being read: the digits still rate the focused criterion.
    app.press("5");
    app.wait_for_attribute(
        "[data-testid=criterion]",
        "data-value",
        "5",
        Duration::from_secs(10),
    );
    app.press(ESCAPE);
    wait_reading(app, None, "Esc");
    app.wait_for_attribute(
        "[data-testid=answer]",
        "data-current",
        "true",
        Duration::from_secs(5),
    );
    assert!(
        settles_in_view(app, "[data-testid=answer]"),
        "Esc brings the reply back into view"
    );
    app.press("[");
    wait_reading(app, Some(40), "[ from the reply");
    app.press("]");
    wait_reading(app, None, "] past the last turn");
    assert_blind(app, "reply");
    app.screenshot("conversation-reply");
    let item = current_item(app);
    finish_item(app, 4, item);
}

/// The session item: the whole conversation framed as the thing rated, stepped through; rated 2s.
fn rate_the_session(app: &App) {
    assert_eq!(
        text_content(app, "#conversation-heading"),
        "The conversation being rated · 6 turns",
        "a session item says the whole conversation is rated"
    );
    assert_eq!(
        (
            count(app, "[data-testid=reply-heading]"),
            count(app, "[data-testid=answer]"),
            count(app, "[data-testid=turns-toggle]"),
        ),
        (0, 0, 0),
        "a session item has no reply of its own (nor a missing-answer note) and nothing folded"
    );
    let roles: Vec<(i64, String)> = turns(app).into_iter().map(|t| (t.0, t.1)).collect();
    assert_eq!(
        roles,
        (1..=6)
            .map(|n| (
                n,
                match n {
                    1 => "system",
                    n if n % 2 == 0 => "user",
                    _ => "assistant",
                }
                .to_string()
            ))
            .collect::<Vec<_>>(),
        "the whole conversation is shown in order"
    );
    app.assert_accessible("conversation-session");
    app.press("]");
    wait_reading(app, Some(1), "] on a session");
    app.press(&"]".repeat(8));
    wait_reading(app, Some(6), "] past the end of a session");
    app.press(ESCAPE);
    wait_reading(app, None, "Esc on a session");
    assert_blind(app, "session");
    app.screenshot("conversation-session");
    let item = current_item(app);
    finish_item(app, 2, item);
}

/// The single-turn item: as the screen always showed it; the turn keys do nothing there.
fn rate_the_single_turn(app: &App) {
    assert_eq!(
        text_content(app, "[data-testid=context]"),
        "I have not been able to sleep for a week.",
        "a single-turn item shows the person's message as before"
    );
    app.press("[");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        (count(app, "[data-testid=conversation]"), reading(app)),
        (0, None),
        "a single-turn item has no transcript, and [ changes nothing"
    );
    let item = current_item(app);
    finish_item(app, 3, item);
}

fn conversation_study(path: &Path) {
    let mut store = Store::create(path, Arc::new(SystemClock)).expect("the study is created");
    add_conversation_items(&mut store);
}

#[test]
fn an_expert_rates_a_reply_seeing_forty_turns_steps_through_them_and_rates_a_session() {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = dir.path().join("conversations.concord");
    conversation_study(&study);
    let app = App::launch(&study);
    start_rating_as(&app, "Conversation expert");
    let mut seen = Vec::new();
    for _ in 0..3 {
        app.wait_for("[data-testid=criterion]", Duration::from_secs(10));
        let now = shape(&app);
        match now.as_str() {
            "reply" => rate_the_long_reply(&app),
            "session" => rate_the_session(&app),
            "single" => rate_the_single_turn(&app),
            other => panic!("an item of an unknown shape {other:?}"),
        }
        seen.push(now);
    }
    seen.sort();
    assert_eq!(
        seen,
        vec!["reply", "session", "single"],
        "the queue holds the three items, each rated once"
    );
    app.wait_for("[data-testid=queue-finished]", Duration::from_secs(10));
    let payloads = app.script_async(
        "const done = arguments[arguments.length - 1];
         const invoke = window.__TAURI_INTERNALS__.invoke;
         (async () => {
           const items = [];
           for (let i = 1; i <= 3; i++) items.push(await invoke('rating_item', { item: i }));
           return JSON.stringify(items);
         })().then(done, e => done('ERROR ' + JSON.stringify(e)));",
        json!([]),
    );
    let payloads = payloads.as_str().unwrap_or_default();
    assert!(
        payloads.starts_with('[') && !payloads.contains(CHATBOT.0) && !payloads.contains(CHATBOT.1),
        "the screen's items carry no source name: {}",
        &payloads[..payloads.len().min(200)]
    );
    drop(app);

    let store = Store::open(&study, Arc::new(SystemClock)).expect("the study opens");
    let rater = store
        .rater_named("Conversation expert")
        .expect("raters read")
        .expect("the expert exists")
        .id;
    let mut kinds = Vec::new();
    for i in 1..=3 {
        let item = queue::rating_item(&store, rater, i).expect("the item reads");
        let values: Vec<Option<i64>> = item.criteria.iter().map(|c| c.value).collect();
        let (kind, want) = match (item.scope, item.turn, item.history.len()) {
            (Scope::Reply, Some(41), 40) => ("reply", {
                let mut v = vec![Some(4); values.len()];
                v[0] = Some(5);
                v
            }),
            (Scope::Session, None, 6) => ("session", vec![Some(2); values.len()]),
            (Scope::Reply, Some(2), 1) => ("single", vec![Some(3); values.len()]),
            other => panic!("item {i} is none of the study's three: {other:?}"),
        };
        assert_eq!(
            values, want,
            "the {kind} item holds the values typed on the screen"
        );
        kinds.push(kind);
    }
    kinds.sort();
    assert_eq!(
        kinds,
        vec!["reply", "session", "single"],
        "each item was rated"
    );

    // And in the long CSV: each value with its item's turn (41, none for the session, 2 for the
    // single-turn answer) and scope.
    let mut csv = Vec::new();
    concord_core::outputs::export::csv::write_long_csv(
        &store,
        &mut csv,
        concord_core::outputs::export::csv::CsvOptions::default(),
    )
    .expect("the long CSV is written");
    let csv = String::from_utf8(csv).expect("the CSV is UTF-8");
    let csv = csv.trim_start_matches('\u{feff}');
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("the long CSV has a {name} column: {header:?}"))
    };
    let (rater, turn, scope, value) = (
        column("rater"),
        column("turn"),
        column("scope"),
        column("value"),
    );
    let mut exported: Vec<(String, String, String)> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f.get(rater) == Some(&"Conversation expert"))
        .map(|f| {
            (
                f[turn].to_string(),
                f[scope].to_string(),
                f[value].to_string(),
            )
        })
        .collect();
    exported.sort();
    exported.dedup();
    assert_eq!(
        exported,
        [
            ("".to_string(), "session".to_string(), "2".to_string()),
            ("2".to_string(), "reply".to_string(), "3".to_string()),
            ("41".to_string(), "reply".to_string(), "4".to_string()),
            ("41".to_string(), "reply".to_string(), "5".to_string()),
        ],
        "the export carries every value typed with its item's turn and scope"
    );
    assert_eq!(
        concord_core::guard::audit::verify(&store)
            .expect("the chain verifies")
            .broken,
        None,
        "the values are sealed into an intact audit chain"
    );
}

#[test]
fn at_800_by_600_a_forty_turn_history_leaves_the_reply_and_the_first_criterion_in_view() {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = dir.path().join("small-window-conversations.concord");
    {
        let mut store = Store::create(&study, Arc::new(SystemClock)).expect("the study is created");
        add_long_transcripts(&mut store, 2, 40);
    }
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    app.set_window_size(800, 600);
    std::thread::sleep(Duration::from_millis(300));
    start_rating_as(&app, "Small window expert");
    app.wait_for("[data-testid=answer]", Duration::from_secs(10));
    let viewport = app.script("return [window.innerWidth, window.innerHeight];", json!([]));
    assert!(
        viewport[0].as_u64().is_some_and(|w| w <= 800)
            && viewport[1].as_u64().is_some_and(|h| h <= 600),
        "the window is 800×600 or less inside: {viewport}"
    );
    assert_eq!(
        text_content(&app, "[data-testid=reply-heading]"),
        "Reply being rated, turn 41",
        "the item is the reply after 40 turns"
    );
    let in_view = |what: &str| settles_in_view(&app, what);
    let rects = || -> Value {
        app.script(
            "return ['[data-testid=answer]', '[data-testid=criterion]'].map(s => { \
               const r = document.querySelector(s).getBoundingClientRect(); return [s, r.top, r.bottom]; });",
            json!([]),
        )
    };
    app.screenshot("conversation-800x600");
    assert!(
        in_view("[data-testid=answer]") && in_view("[data-testid=criterion]"),
        "at 800×600 the reply and the first criterion are wholly in view on load: {} in a \
         viewport of {viewport} (screenshot tests/artifacts/conversation-800x600.png)",
        rects()
    );
    // Down to the first turn and back: the reply and the first criterion are in view again.
    app.press(&"[".repeat(41));
    wait_reading(&app, Some(1), "[ forty-one times at 800×600");
    app.press(ESCAPE);
    wait_reading(&app, None, "Esc at 800×600");
    assert!(
        in_view("[data-testid=answer]") && in_view("[data-testid=criterion]"),
        "after reading the first turn, Esc shows the reply and the first criterion again: {}",
        rects()
    );
    rate_current_item_with_keys(&app);
    assert!(
        in_view("[data-testid=answer]") && in_view("[data-testid=criterion]"),
        "the next item opens with its reply and first criterion in view too: {}",
        rects()
    );
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((p * (sorted.len() - 1) as f64).round()) as usize]
}

/// The benchmark of BENCHMARKS.md: item to item with 40 turns of history — a reply (its history
/// folded but for two turns) and a session (all 40 turns shown) — against single-turn items, 60 of
/// each in one study whose queue the expert's seed shuffles, so the three kinds are interleaved in
/// one window under the same load. 150 items are rated by keys (seven or three values sent in one
/// burst, then Enter); each time the screen records from Enter to the frame after the next item is
/// in the DOM is counted for the kind of that item. Prints the figures; asserts no time (CI
/// machines are loaded).
#[test]
fn keypress_to_next_item_with_forty_turn_histories_against_single_turn_items() {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = dir.path().join("timing-conversations.concord");
    {
        let mut store = Store::create(&study, Arc::new(SystemClock)).expect("the study is created");
        add_single_turns(&mut store, 60);
        add_long_transcripts(&mut store, 60, 40);
        add_long_sessions(&mut store, 60, 40);
    }
    let app = App::launch(&study);
    start_rating_as(&app, "Timing expert");
    let rated = 150;
    let mut kinds = Vec::new();
    for _ in 0..rated {
        rate_current_item_with_keys(&app);
        app.wait_for("[data-testid=criterion]", Duration::from_secs(10));
        kinds.push(shape(&app));
    }
    let timings = app.script("return window.__concordNavTimings || [];", json!([]));
    let ms: Vec<f64> = timings
        .as_array()
        .expect("timings recorded by the screen")
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    assert_eq!(
        ms.len(),
        rated,
        "one timing per Enter that moved to the next item"
    );
    let of = |kind: &str| {
        let mut v: Vec<f64> = ms
            .iter()
            .zip(&kinds)
            .filter(|(_, k)| k.as_str() == kind)
            .map(|(m, _)| *m)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let single = of("single");
    for (label, kind) in [
        ("single-turn items (peer)", "single"),
        ("replies after 40 turns", "reply"),
        ("sessions of 40 turns", "session"),
    ] {
        let v = of(kind);
        assert!(
            v.len() >= 20 && single.len() >= 20,
            "the shuffled queue brings each kind often enough to time it: {kind} {}",
            v.len()
        );
        println!(
            "figure: {label}, {} items: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms; p50 / peer {:.2}, p95 / peer {:.2}",
            v.len(),
            percentile(&v, 0.5),
            percentile(&v, 0.95),
            v[v.len() - 1],
            percentile(&v, 0.5) / percentile(&single, 0.5).max(0.1),
            percentile(&v, 0.95) / percentile(&single, 0.95).max(0.1)
        );
    }
}
