//! Journeys on the expert's rating screen: rating by keyboard only survives a quit and resumes at
//! the next item; hostile text renders as text; the commands feeding the screen carry no source
//! names; Chinese items render; and the keypress-to-next-item latency is measured.

use super::App;
use concord_core::base::clock::SystemClock;
use concord_core::intake::demo::demo_study;
use concord_core::rubric::builtin;
use concord_core::store::{NewConversation, NewSource, SourceKind, Store};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const ENTER: &str = "\u{E007}";

/// Open the rating screen as a new expert named `name` (typed, then Enter).
/// Create the profile `name` from the picker and start rating; whether the picker listed the demo
/// study's first expert (and so had her count checked).
pub(super) fn start_rating_as(app: &App, name: &str) -> bool {
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));
    let rate = app.wait_for("[data-testid=nav-rate]", Duration::from_secs(5));
    app.click(&rate);
    let input = app.wait_for("[data-testid=new-profile]", Duration::from_secs(10));
    // The demo's first expert has imported ratings and no queue: the picker counts those, never
    // "0 of 0 done".
    let demo_expert = app
        .find_all("[data-testid=profile]")
        .into_iter()
        .find(|p| app.text(p).contains("Demo expert A"));
    if let Some(demo) = &demo_expert {
        let definition = demo_study().unwrap();
        let values: usize = definition
            .ratings
            .iter()
            .filter(|r| r.rater == "Demo expert A")
            .map(|r| r.values.len())
            .sum::<usize>()
            + definition
                .transcripts
                .iter()
                .flat_map(|t| &t.ratings)
                .filter(|r| r.rater == "Demo expert A")
                .map(|r| r.values.len())
                .sum::<usize>();
        let progress = app.text(demo);
        assert!(
            progress.contains(&format!("{values} ratings in the study"))
                && !progress.contains("0 of 0"),
            "an expert with imported ratings and no queue is shown with her {values} ratings: {progress:?}"
        );
    }
    app.click(&input);
    app.type_into(&input, &format!("{name}{ENTER}"));
    let confirm = app.wait_for("[data-testid=confirm-profile]", Duration::from_secs(10));
    app.click(&confirm);
    app.wait_for(
        "[data-testid=rating-screen] [data-testid=item-number]",
        Duration::from_secs(10),
    );
    demo_expert.is_some()
}

pub(super) fn current_item(app: &App) -> i64 {
    let e = app.wait_for("[data-testid=item-number]", Duration::from_secs(10));
    app.attribute(&e, "data-item")
        .and_then(|v| v.parse().ok())
        .expect("the item number is on the screen")
}

/// Rate every criterion of the current item with "1" (valid on 1–5 and on binary scales) and
/// press Enter; wait for the next item.
pub(super) fn rate_current_item_with_keys(app: &App) -> usize {
    let item = current_item(app);
    let n = app.find_all("[data-testid=criterion]").len();
    app.press(&format!("{}{ENTER}", "1".repeat(n)));
    app.wait_for_attribute(
        "[data-testid=item-number]",
        "data-item",
        &(item + 1).to_string(),
        Duration::from_secs(10),
    );
    n
}

#[test]
fn keyboard_rating_survives_quit_and_resumes_at_the_next_item() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("keyboard.concord");
    let mut entered = 0;
    {
        let app = App::launch(&study);
        assert!(
            start_rating_as(&app, "Keyboard expert"),
            "the demo study's picker lists its first expert, whose count is checked"
        );
        assert_eq!(current_item(&app), 1, "a new queue starts at item 1");
        for _ in 0..3 {
            entered += rate_current_item_with_keys(&app);
        }
        assert_eq!(
            current_item(&app),
            4,
            "three items rated, the fourth is shown"
        );
        // The next item is shown as soon as it is fetched; the count of completed items follows
        // when the last save of the item before it returns, so it is awaited, not sampled.
        app.wait_for_attribute(
            "[role=progressbar]",
            "aria-valuenow",
            "3",
            Duration::from_secs(10),
        );
        let progress = app.text_of("[data-testid=item-number]");
        assert!(
            progress.contains("3 done"),
            "the progress counts the three completed items: {progress}"
        );
        app.screenshot("rating-item-4");
    } // the window closes here
    let conn = rusqlite::Connection::open(&study).unwrap();
    let (count, ones): (i64, i64) = conn
        .query_row(
            "SELECT COUNT(*), SUM(g.value = 1) FROM rating g JOIN rater r ON r.id = g.rater_id
             WHERE r.name = 'Keyboard expert'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        count as usize, entered,
        "every key press is a committed rating in the study file"
    );
    assert_eq!(ones, count, "every value entered was 1");
    let completed: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM assignment a JOIN rater r ON r.id = a.rater_id
             WHERE r.name = 'Keyboard expert' AND a.completed_at IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(completed, 3, "three items are complete");
    drop(conn);

    let app = App::launch(&study);
    app.wait_for(
        "[data-testid=overview], [data-testid=rating-screen]",
        Duration::from_secs(30),
    );
    if app.try_find("[data-testid=rating-screen]").is_none() {
        // The window did not remember the screen: choose the profile as a rater would.
        let rate = app.wait_for("[data-testid=nav-rate]", Duration::from_secs(5));
        app.click(&rate);
        app.wait_for("[data-testid=profile]", Duration::from_secs(10));
        let mine = app
            .find_all("[data-testid=profile]")
            .into_iter()
            .find(|p| app.text(p).contains("Keyboard expert"))
            .expect("the profile created before the quit is listed");
        app.click(&mine);
    }
    assert_eq!(
        current_item(&app),
        4,
        "after relaunch the rater resumes at item 4"
    );
    app.screenshot("rating-resumed");
}

/// A study whose one answer and context carry markup and script.
fn hostile_study(path: &Path) {
    let mut store = Store::create(path, Arc::new(SystemClock)).unwrap();
    store
        .write(|tx| {
            let rubric = tx.add_rubric(&builtin::mentalbench())?;
            let source = tx.upsert_source(&NewSource {
                key: "x",
                name: "Hostile source",
                family: None,
                kind: SourceKind::Llm,
            })?;
            let conv = tx.add_conversation(&NewConversation {
                external_id: "hostile-1",
                rubric_id: rubric,
                context: "<b>bold?</b> <script>window.__pwned = 'context'</script>",
                language: Some("en"),
                category: None,
            })?;
            tx.add_response(
                conv,
                source,
                Some("<img src=x onerror=\"window.__pwned='img'\"><script>window.__pwned='script'</script>"),
            )?;
            Ok::<_, concord_core::store::StoreError>(())
        })
        .unwrap();
}

#[test]
fn markup_in_dataset_text_renders_as_text_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("hostile.concord");
    hostile_study(&study);
    let app = App::launch(&study);
    start_rating_as(&app, "Careful expert");
    let answer = app.text_of("[data-testid=answer]");
    assert!(
        answer.contains("<img src=x onerror=") && answer.contains("<script>"),
        "the markup must show as literal text: {answer}"
    );
    let context = app.text_of("[data-testid=context]");
    assert!(
        context.contains("<b>bold?</b>"),
        "context markup shows as text: {context}"
    );
    std::thread::sleep(Duration::from_millis(300));
    let pwned = app.script(
        "return window.__pwned === undefined ? null : String(window.__pwned);",
        json!([]),
    );
    assert_eq!(
        pwned,
        serde_json::Value::Null,
        "no script from the data may run"
    );
    let injected = app.script(
        "return document.querySelectorAll('[data-testid=answer] img, [data-testid=answer] script, [data-testid=context] b').length;",
        json!([]),
    );
    assert_eq!(
        injected,
        json!(0),
        "no element may be created from dataset text"
    );
    app.screenshot("rating-hostile-text");
}

#[test]
fn rating_commands_carry_no_source_names_and_chinese_renders() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("blind.concord");
    let app = App::launch(&study);
    start_rating_as(&app, "Blind expert");
    // Call the screen's own commands from the page, as the screen does, and inspect the payloads.
    let payloads = app.script_async(
        "const done = arguments[arguments.length - 1];
         const invoke = window.__TAURI_INTERNALS__.invoke;
         (async () => {
           const q = await invoke('open_queue');
           const items = [];
           for (let i = 1; i <= q.total; i++) items.push(await invoke('rating_item', { item: i }));
           return JSON.stringify({ q, items });
         })().then(done, e => done('ERROR ' + JSON.stringify(e)));",
        json!([]),
    );
    let text = payloads.as_str().expect("payload text");
    assert!(
        !text.starts_with("ERROR"),
        "the commands must answer: {text}"
    );
    let demo = demo_study().unwrap();
    for s in &demo.sources {
        for word in [&s.key, &s.name] {
            assert!(
                !text.contains(&format!("\"{word}\"")),
                "payload names source {word}"
            );
        }
    }
    for r in demo.raters.iter().filter(|r| r.model_id.is_some()) {
        assert!(
            !text.contains(&r.name),
            "payload names the judge {}",
            r.name
        );
    }
    // Find a Chinese item by skipping (S) through the queue, then keep a screenshot. (A new
    // profile's queue is drawn afresh each time: a conversation, which shows its turns rather
    // than one message, may come first.)
    for _ in 0..60 {
        app.wait_for("[data-testid=criterion]", Duration::from_secs(10));
        let ctx = app
            .try_find("[data-testid=context]")
            .map(|e| app.text(&e))
            .unwrap_or_default();
        if ctx.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)) {
            let dims = app.find_all("[data-testid=criterion]");
            assert_eq!(
                dims.len(),
                5,
                "Chinese demo items are rated on the five PsyCrisis dimensions"
            );
            let shot = app.screenshot("rating-chinese");
            println!("screenshot of a Chinese item: {}", shot.display());
            return;
        }
        let item = current_item(&app);
        app.press("s");
        app.wait_for_attribute(
            "[data-testid=item-number]",
            "data-item",
            &(item + 1).to_string(),
            Duration::from_secs(10),
        );
    }
    panic!("the demo queue must contain Chinese items");
}

/// A study of `n` short synthetic items for timing.
pub(super) fn many_items_study(path: &Path, n: usize) {
    let mut store = Store::create(path, Arc::new(SystemClock)).unwrap();
    store
        .write(|tx| {
            let rubric = tx.add_rubric(&builtin::mentalbench())?;
            let source = tx.upsert_source(&NewSource {
                key: "synthetic",
                name: "Synthetic",
                family: None,
                kind: SourceKind::Llm,
            })?;
            for i in 0..n {
                let conv = tx.add_conversation(&NewConversation {
                    external_id: &format!("timing-{i}"),
                    rubric_id: rubric,
                    context: &format!(
                        "Synthetic message {i}: I have been feeling low and tired for weeks."
                    ),
                    language: Some("en"),
                    category: None,
                })?;
                tx.add_response(
                    conv,
                    source,
                    Some(&format!("Synthetic answer {i}. ").repeat(20)),
                )?;
            }
            Ok::<_, concord_core::store::StoreError>(())
        })
        .unwrap();
}

/// Rate 50 items by keys and return the screen's keypress-to-next-item timings, sorted.
fn fifty_item_timings(app: &App) -> Vec<f64> {
    for _ in 0..50 {
        rate_current_item_with_keys(app);
    }
    let timings = app.script("return window.__concordNavTimings || [];", json!([]));
    let mut ms: Vec<f64> = timings
        .as_array()
        .expect("timings recorded by the screen")
        .iter()
        .filter_map(|v| v.as_f64())
        .collect();
    assert_eq!(
        ms.len(),
        50,
        "one timing per Enter that moved to the next item"
    );
    assert!(
        ms.iter().all(|m| m.is_finite() && *m >= 0.0),
        "timings are real durations"
    );
    ms.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| ms[((p * (ms.len() - 1) as f64).round()) as usize];
    println!(
        "figure: keypress to next item rendered over 50 items: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        pct(0.5),
        pct(0.95),
        ms[ms.len() - 1]
    );
    ms
}

#[test]
fn skipped_and_flagged_items_are_listed_at_the_end_and_a_reopened_queue_starts_at_the_skipped_one()
{
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("leftovers.concord");
    many_items_study(&study, 4);
    let app = App::launch(&study);
    start_rating_as(&app, "Leftover expert");
    rate_current_item_with_keys(&app);
    // Item 2: skipped.
    app.press("s");
    app.wait_for_attribute(
        "[data-testid=item-number]",
        "data-item",
        "3",
        Duration::from_secs(10),
    );
    // Item 3: rated, then flagged with a reason.
    let n = app.find_all("[data-testid=criterion]").len();
    app.press(&"2".repeat(n));
    app.click(&app.wait_for("[data-testid=flag-button]", Duration::from_secs(5)));
    let reason = app.wait_for("[data-testid=flag-reason]", Duration::from_secs(5));
    app.type_into(&reason, &format!("the answer stops mid-sentence{ENTER}"));
    app.wait_for("[data-testid=flag-note]", Duration::from_secs(5));
    // "Flagged" is said beside the flag control that saved it, in view.
    let placed = app.script(
        "const n = document.querySelector('[data-testid=flag-note]').getBoundingClientRect(); \
         const b = document.querySelector('[data-testid=flag-button]').getBoundingClientRect(); \
         return [n.top >= -1 && n.bottom <= window.innerHeight + 1, \
                 Math.min(Math.abs(n.top - b.bottom), Math.abs(b.top - n.bottom))];",
        serde_json::json!([]),
    );
    assert_eq!(
        placed[0],
        serde_json::json!(true),
        "the flag's note is in view once saved: {placed}"
    );
    assert!(
        placed[1].as_f64().is_some_and(|gap| gap < 120.0),
        "the flag's note sits beside the flag control, not elsewhere on the page: {placed}"
    );
    app.click(&app.wait_for("[data-testid=next-button]", Duration::from_secs(5)));
    app.wait_for_attribute(
        "[data-testid=item-number]",
        "data-item",
        "4",
        Duration::from_secs(10),
    );
    let n = app.find_all("[data-testid=criterion]").len();
    app.press(&format!("{}{ENTER}", "3".repeat(n)));

    // The end of the queue lists what is still to look at, each with a way back.
    app.wait_for("[data-testid=queue-finished]", Duration::from_secs(10));
    app.wait_for("[data-testid=left-items]", Duration::from_secs(10));
    let listed: Vec<(String, String)> = app
        .find_all("[data-testid=left-item]")
        .iter()
        .map(|e| {
            (
                app.attribute(e, "data-item").unwrap_or_default(),
                app.text(e),
            )
        })
        .collect();
    assert_eq!(
        listed.iter().map(|(i, _)| i.as_str()).collect::<Vec<_>>(),
        vec!["2", "3"],
        "the skipped item and the flagged item are listed, nothing else: {listed:?}"
    );
    assert!(
        listed[1].1.contains("the answer stops mid-sentence"),
        "the flagged item says why it was flagged: {listed:?}"
    );
    app.click(&app.find_all("[data-testid=left-item-open]")[0]);
    app.wait_for_attribute(
        "[data-testid=item-number]",
        "data-item",
        "2",
        Duration::from_secs(10),
    );
    app.press("\u{E012}\u{E012}");
    drop(app);

    // Reopened later: the queue starts at the skipped item, not where the rater stood.
    let app = App::launch(&study);
    start_rating_again(&app, "Leftover expert");
    assert_eq!(
        current_item(&app),
        2,
        "a reopened queue resumes at the first unfinished item"
    );
}

/// Open the rating screen again as the existing expert `name`: the window may return to it by
/// itself (it remembers the last screen and rater of a study), else pick `name` from the list.
fn start_rating_again(app: &App, name: &str) {
    let item = "[data-testid=rating-screen] [data-testid=item-number]";
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if app.try_find(item).is_some() {
            return;
        }
        if app.try_find("[data-testid=overview]").is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the window shows a screen after relaunch"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    app.click(&app.wait_for("[data-testid=nav-rate]", Duration::from_secs(5)));
    app.wait_for("[data-testid=profile]", Duration::from_secs(10));
    let pick = app
        .find_all("[data-testid=profile]")
        .into_iter()
        .find(|b| app.text(b).contains(name))
        .unwrap_or_else(|| panic!("{name} is on the rater list"));
    app.click(&pick);
    app.wait_for(item, Duration::from_secs(10));
}

/// The value typed for criterion `j` of item `i` in the burst: every item gets its own row of
/// values, so a value applied to a neighbouring item shows.
fn burst_value(i: usize, j: usize) -> i64 {
    1 + ((i * 3 + j * 2 + i / 5) % 5) as i64
}

#[test]
fn a_zero_delay_burst_over_twenty_items_stores_exactly_what_was_typed() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("burst.concord");
    many_items_study(&study, 24);
    let app = App::launch(&study);
    start_rating_as(&app, "Burst expert");
    let n = app.find_all("[data-testid=criterion]").len();
    let items = 20;
    let mut keys = String::new();
    for i in 1..=items {
        for j in 0..n {
            keys.push_str(&burst_value(i, j).to_string());
        }
        keys.push_str(ENTER);
    }
    // One actions request: WebDriver sends every key with no delay between them, far faster
    // than the screen moves from item to item.
    app.press(&keys);
    app.wait_for_attribute(
        "[data-testid=item-number]",
        "data-item",
        &(items + 1).to_string(),
        Duration::from_secs(30),
    );
    // Every value is committed before the screen moves on; give the last saves time to land.
    let store = Store::open(&study, Arc::new(SystemClock)).unwrap();
    let rater = store
        .rater_named("Burst expert")
        .unwrap()
        .expect("the expert exists")
        .id;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let last = concord_core::workflow::queue::rating_item(&store, rater, items as i64).unwrap();
        if last.criteria.iter().all(|c| c.value.is_some()) || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut wrong = Vec::new();
    for i in 1..=items {
        let item = concord_core::workflow::queue::rating_item(&store, rater, i as i64).unwrap();
        for (j, c) in item.criteria.iter().enumerate() {
            if c.value != Some(burst_value(i, j)) {
                wrong.push(format!(
                    "item {i} {}: stored {:?}, typed {}",
                    c.key,
                    c.value,
                    burst_value(i, j)
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "keys typed faster than the screen moves land on the item they were typed for: {} of {} \
         values differ: {wrong:?}",
        wrong.len(),
        items * n
    );
}

#[test]
fn keypress_to_next_item_latency_over_fifty_items() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("timing.concord");
    many_items_study(&study, 60);
    let app = App::launch(&study);
    start_rating_as(&app, "Fast expert");
    fifty_item_timings(&app);
}

/// The same figure on a large study: the file named by `CONCORD_LATENCY_STUDY` (it is written
/// to: use a copy), rated as its expert `expert0`, who needs an assigned queue of 50 items or
/// more — `concord-cli/benches/scale.py --keep DIR` makes such a study (2.8 million judge
/// ratings). Not run in CI:
/// `CONCORD_LATENCY_STUDY=FILE cargo test --test integration large_study -- --ignored --nocapture`.
#[test]
#[ignore = "needs a large study named by CONCORD_LATENCY_STUDY"]
fn keypress_to_next_item_latency_on_a_large_study() {
    let study = std::env::var_os("CONCORD_LATENCY_STUDY")
        .expect("CONCORD_LATENCY_STUDY names a large study with expert0's queue");
    let app = App::launch(Path::new(&study));
    // A study whose expert was rating last reopens on that expert's screen; otherwise pick
    // expert0 from the overview.
    let screen = "[data-testid=rating-screen] [data-testid=item-number]";
    let first = app.wait_for(
        &format!("[data-testid=overview], {screen}"),
        Duration::from_secs(120),
    );
    if app.attribute(&first, "data-testid").as_deref() == Some("overview") {
        let rate = app.wait_for("[data-testid=nav-rate]", Duration::from_secs(5));
        app.click(&rate);
        let input = app.wait_for("[data-testid=new-profile]", Duration::from_secs(30));
        app.click(&input);
        // An existing profile's name opens it without a confirmation.
        app.type_into(&input, &format!("expert0{ENTER}"));
        app.wait_for(screen, Duration::from_secs(30));
    }
    fifty_item_timings(&app);
}

/// Sign-off in the window: an expert rates two items, opens "Sign off", sets a signing passphrase
/// (typed twice), signs with it after a wrong attempt is refused, and sees the signature; the
/// study file then holds the signature with its meaning and hash, only a salted hash of the
/// passphrase, a locked rating that the screen refuses to change, and an intact audit chain.
#[test]
fn an_expert_sets_a_passphrase_and_signs_off_in_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("signoff.concord");
    let app = App::launch(&study);
    start_rating_as(&app, "Signing expert");
    let rated = rate_current_item_with_keys(&app) + rate_current_item_with_keys(&app);
    let open = app.wait_for("[data-testid=signoff-button]", Duration::from_secs(5));
    app.click(&open);
    app.wait_for("[data-testid=signoff-dialog]", Duration::from_secs(10));
    assert!(
        app.text_of("[data-testid=signoff-meaning]")
            .contains("my own independent judgement"),
        "the dialog states what signing means"
    );
    let new = app.wait_for("[data-testid=signoff-new]", Duration::from_secs(5));
    app.click(&new);
    app.type_into(&new, "calm harbour 7");
    let repeat = app.wait_for("[data-testid=signoff-repeat]", Duration::from_secs(5));
    app.click(&repeat);
    app.type_into(&repeat, "calm harbour 7");
    let set = app.wait_for("[data-testid=signoff-set]", Duration::from_secs(5));
    app.click(&set);
    let pass = app.wait_for("[data-testid=signoff-passphrase]", Duration::from_secs(30));
    let scope = app.text_of("[data-testid=signoff-scope]");
    assert!(
        scope.contains(&format!("covers {rated} ratings"))
            && scope.contains("not finished")
            && scope.contains("unsigned"),
        "the dialog says how many ratings it signs (the {rated} values of the two items rated) and that the unfinished items stay unsigned: {scope}"
    );
    app.click(&pass);
    app.type_into(&pass, "wrong harbour 7");
    app.click(&app.wait_for("[data-testid=signoff-sign]", Duration::from_secs(5)));
    let refusal = app.wait_for("[data-testid=signoff-error]", Duration::from_secs(30));
    assert!(
        app.text(&refusal).contains("wrong signing passphrase"),
        "a wrong passphrase is refused"
    );
    let pass = app.wait_for("[data-testid=signoff-passphrase]", Duration::from_secs(5));
    app.click(&pass);
    app.type_into(&pass, "calm harbour 7");
    app.click(&app.wait_for("[data-testid=signoff-sign]", Duration::from_secs(5)));
    let signed = app.wait_for("[data-testid=signature]", Duration::from_secs(30));
    assert_eq!(
        app.attribute(&signed, "data-matches").as_deref(),
        Some("true"),
        "the new signature is shown as matching its ratings"
    );
    app.screenshot("signoff-signed");

    // A signed value changes only with a reason, and is then marked as changed after signature.
    app.script(
        "document.querySelector('[data-testid=signoff-dialog] > button').click(); return 1;",
        json!([]),
    );
    app.press("\u{E003}");
    app.wait_for_attribute(
        "[data-testid=item-number]",
        "data-item",
        "2",
        Duration::from_secs(10),
    );
    assert!(
        !app.find_all("[data-testid=signed-mark]").is_empty(),
        "the signed values are marked as signed"
    );
    // The first criterion's first level other than the signed "1" (2 on a 1–5 scale, 0 on a
    // binary one), clicked as a person would.
    app.script(
        "const c = document.querySelector('[data-testid=criterion]'); \
         [...c.querySelectorAll('.level')].find(b => !b.classList.contains('chosen')).click(); \
         return 1;",
        json!([]),
    );
    let reason = app.wait_for("[data-testid=signed-reason]", Duration::from_secs(10));
    assert_eq!(
        app.attribute(
            &app.wait_for("[data-testid=criterion]", Duration::from_secs(5)),
            "data-value"
        )
        .as_deref(),
        Some("1"),
        "the signed value stays as it was until a reason is given"
    );
    app.type_into(&reason, &format!("misread the anchor{ENTER}"));
    app.wait_for(
        "[data-testid=criterion] [data-testid=changed-after-signature]",
        Duration::from_secs(10),
    );
    let first = app.wait_for("[data-testid=criterion]", Duration::from_secs(5));
    let shown = app.attribute(&first, "data-value");
    assert!(
        matches!(shown.as_deref(), Some("0") | Some("2")),
        "the changed value is shown: {shown:?}"
    );
    app.screenshot("signoff-changed-after-signature");
    drop(app);

    let conn = rusqlite::Connection::open(&study).unwrap();
    let (signer, meaning, ratings, sha): (String, String, i64, String) = conn
        .query_row(
            "SELECT signer, meaning, ratings, ratings_sha256 FROM signature",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(signer, "Signing expert", "the signer's name is recorded");
    assert!(
        meaning.contains("independent judgement"),
        "with the meaning"
    );
    assert!(
        ratings > 0 && sha.len() == 64,
        "and the hash of the signed ratings"
    );
    let stored: String = conn
        .query_row("SELECT salt || hash FROM signing_key", [], |r| r.get(0))
        .unwrap();
    assert!(
        !stored.contains("harbour"),
        "the passphrase itself is not stored"
    );
    drop(conn);
    let store = Store::open(&study, Arc::new(SystemClock)).unwrap();
    assert_eq!(
        concord_core::guard::audit::verify(&store).unwrap().broken,
        None,
        "the window's ratings, the signature and the reasoned change are sealed into an intact audit chain"
    );
    let standing = concord_core::workflow::signoff::signatures(&store).unwrap();
    assert_eq!(
        (standing[0].matches, standing[0].changed_after_signature),
        (false, 1),
        "the signature now shows one rating changed after signing"
    );
    let log = concord_core::guard::audit::log(&store, &Default::default()).unwrap();
    let change = log
        .iter()
        .rev()
        .find(|e| e.entry.action == "rating.revise")
        .expect("the change is in the audit trail");
    assert_eq!(
        change.entry.detail["reason"].as_str(),
        Some("misread the anchor"),
        "with the reason the expert typed"
    );
}
