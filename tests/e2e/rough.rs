//! The rough edges of an hour of rating, in the real window: a mistyped new profile is confirmed
//! before it is created, and an empty queue has a way back to the rater list that a relaunch does
//! not forget; a flag's reason is shown again on the item; long criterion labels leave every
//! rating button on screen and clickable at the window's minimum size; a right-to-left override
//! in a name is spelled out and reverses nothing; a long Chinese study and expert name export
//! under the file-name limit; a kill -9 after an item is complete reopens on the next one.

use super::App;
use concord_core::app::open_study::OpenStudy;
use concord_core::base::clock::SystemClock;
use concord_core::intake::demo::create_demo_at;
use concord_core::rubric::builtin;
use concord_core::store::{NewConversation, NewSource, SourceKind, Store};
use concord_core::workflow::assignment::AssignmentOptions;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

const ENTER: &str = "\u{E007}";

fn open_picker(app: &App) {
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    let rate = app.wait_for("[data-testid=nav-rate]", Duration::from_secs(5));
    app.click(&rate);
    app.wait_for("[data-testid=rater-picker]", Duration::from_secs(10));
}

#[test]
fn a_mistyped_profile_is_confirmed_first_and_an_empty_queue_leads_back() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("assigned.concord");
    {
        let store = create_demo_at(&study, Arc::new(SystemClock), 5).expect("demo study");
        let mut s = OpenStudy::new(store);
        concord_core::app::setup::assign(&mut s, &AssignmentOptions::new(1, 42))
            .expect("the demo's experts are assigned");
    }
    let app = App::launch(&study);
    open_picker(&app);
    let input = app.wait_for("[data-testid=new-profile]", Duration::from_secs(10));
    app.click(&input);
    app.type_into(&input, &format!("  Dr   Tpyo {ENTER}"));
    let shown = app.wait_for(
        "[data-testid=profile-confirm-name]",
        Duration::from_secs(10),
    );
    assert_eq!(
        app.text(&shown),
        "Dr Tpyo",
        "the name to be created is shown as it will be stored, before anything is created"
    );
    let cancel = app.wait_for("[data-testid=cancel-profile]", Duration::from_secs(5));
    app.click(&cancel);
    assert!(
        app.try_find("[data-testid=profile-confirm]").is_none(),
        "changing the name creates nothing"
    );
    app.type_into(&input, ENTER);
    let confirm = app.wait_for("[data-testid=confirm-profile]", Duration::from_secs(10));
    app.click(&confirm);
    app.wait_for("[data-testid=queue-empty]", Duration::from_secs(30));
    let back = app.wait_for("[data-testid=back-to-picker]", Duration::from_secs(5));
    app.click(&back);
    app.wait_for("[data-testid=rater-picker]", Duration::from_secs(10));
    drop(app);

    let app = App::launch(&study);
    app.wait_for(
        "[data-testid=overview], [data-testid=rater-picker]",
        Duration::from_secs(60),
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        app.try_find("[data-testid=queue-empty]").is_none(),
        "a relaunch does not return to the empty queue"
    );
}

#[test]
fn a_flag_reason_is_shown_again_on_the_item() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("flags.concord");
    let app = App::launch(&study);
    open_picker(&app);
    let input = app.wait_for("[data-testid=new-profile]", Duration::from_secs(10));
    app.click(&input);
    app.type_into(&input, &format!("Flagging expert{ENTER}"));
    let confirm = app.wait_for("[data-testid=confirm-profile]", Duration::from_secs(10));
    app.click(&confirm);
    app.wait_for("[data-testid=item-number]", Duration::from_secs(30));
    let flag = app.wait_for("[data-testid=flag-button]", Duration::from_secs(5));
    app.click(&flag);
    let reason = app.wait_for("[data-testid=flag-reason]", Duration::from_secs(5));
    app.type_into(
        &reason,
        &format!("the answer stops \u{202E}mid-sentence{ENTER}"),
    );
    app.wait_for("[data-testid=flag-note]", Duration::from_secs(10));
    drop(app);

    let app = App::launch(&study);
    let note = app.wait_for("[data-testid=flag-note] bdi", Duration::from_secs(60));
    assert_eq!(
        app.text(&note),
        "the answer stops \u{202E}mid-sentence",
        "after a relaunch the item still says why it was flagged, isolated from the sentence around it"
    );
}

/// Create a new profile named `name` on the picker and open its queue.
fn rate_as_new_profile(app: &App, name: &str) {
    open_picker(app);
    let input = app.wait_for("[data-testid=new-profile]", Duration::from_secs(10));
    app.click(&input);
    app.type_into(&input, &format!("{name}{ENTER}"));
    let confirm = app.wait_for("[data-testid=confirm-profile]", Duration::from_secs(10));
    app.click(&confirm);
    app.wait_for(
        "[data-testid=rating-screen] [data-testid=item-number]",
        Duration::from_secs(30),
    );
}

fn current_item(app: &App) -> i64 {
    let e = app.wait_for("[data-testid=item-number]", Duration::from_secs(10));
    app.attribute(&e, "data-item")
        .and_then(|v| v.parse().ok())
        .expect("the item number is on the screen")
}

/// The window's minimum size, as `tauri.conf.json` declares it.
fn minimum_window_size() -> (u32, u32) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tauri.conf.json");
    let conf: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("tauri.conf.json is readable"))
            .expect("tauri.conf.json is JSON");
    let window = &conf["app"]["windows"][0];
    let size = |key: &str| {
        window[key]
            .as_u64()
            .unwrap_or_else(|| panic!("tauri.conf.json declares the window's {key}")) as u32
    };
    (size("minWidth"), size("minHeight"))
}

/// A study of one answer rated on MentalBench's seven attributes relabelled with long labels:
/// long words that cannot break at a space, and long Chinese labels.
fn long_label_study(path: &Path) {
    let mut rubric = builtin::mentalbench();
    rubric.id = "long-labels".into();
    for (i, c) in rubric.criteria.iter_mut().enumerate() {
        c.label.insert(
            "en".into(),
            format!(
                "{i} {} {}",
                "Unterstützungsbereitschaftseinschätzung".repeat(3),
                "a label that keeps going well past the width of a narrow window ".repeat(3)
            ),
        );
        c.label
            .insert("zh".into(), "非常长的评分标准名称用于测试".repeat(8));
    }
    let mut store = Store::create(path, Arc::new(SystemClock)).expect("a new study");
    store
        .write(|tx| {
            let rubric = tx.add_rubric(&rubric)?;
            let source = tx.upsert_source(&NewSource {
                key: "x",
                name: "Some model",
                family: None,
                kind: SourceKind::Llm,
            })?;
            let conv = tx.add_conversation(&NewConversation {
                external_id: "long-1",
                rubric_id: rubric,
                context: "I cannot sleep and everything feels heavy.",
                language: Some("en"),
                category: None,
            })?;
            tx.add_response(
                conv,
                source,
                Some("That sounds exhausting. What helps a little?"),
            )?;
            Ok::<_, concord_core::store::StoreError>(())
        })
        .expect("the long-label study is written");
}

#[test]
fn long_criterion_labels_keep_every_rating_button_on_screen_at_the_minimum_size() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("long-labels.concord");
    long_label_study(&study);
    let (min_w, min_h) = minimum_window_size();
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    app.set_window_size(min_w, min_h);
    rate_as_new_profile(&app, "Narrow expert");
    let viewport = app.script("return [window.innerWidth, window.innerHeight];", json!([]));
    let (vw, vh) = (
        viewport[0].as_u64().unwrap_or(u64::MAX),
        viewport[1].as_u64().unwrap_or(u64::MAX),
    );
    assert!(
        vw <= u64::from(min_w) && vh <= u64::from(min_h),
        "the window is at its minimum size {min_w}×{min_h} (viewport {vw}×{vh})"
    );
    assert_buttons_on_screen(&app, vw);
    app.screenshot("long-labels-minimum-size");
    // And clicking them rates: the fourth level of every criterion (each click focuses its
    // criterion, whose long label then heads the anchors panel too).
    let criteria = app.find_all("[data-testid=criterion]");
    let keys: Vec<String> = criteria
        .iter()
        .filter_map(|c| app.attribute(c, "data-key"))
        .collect();
    for key in &keys {
        let button = app.wait_for(
            &format!("[data-testid=criterion][data-key='{key}'] button.level:nth-child(4)"),
            Duration::from_secs(5),
        );
        app.click(&button);
    }
    for key in &keys {
        app.wait_for_attribute(
            &format!("[data-testid=criterion][data-key='{key}']"),
            "data-value",
            "4",
            Duration::from_secs(10),
        );
    }
    app.wait_for_attribute(
        "[role=progressbar]",
        "aria-valuenow",
        "1",
        Duration::from_secs(10),
    );
    assert_buttons_on_screen(&app, vw);
}

/// Nothing on the page is wider than the window (no sideways scrolling), and every rating button,
/// scrolled to vertically as a rater would, lies inside the viewport and is the element a click at
/// its centre reaches.
fn assert_buttons_on_screen(app: &App, vw: u64) {
    let misplaced = app.script(
        "const out = []; const root = document.documentElement;
         const w = root.clientWidth; const h = root.clientHeight;
         if (root.scrollWidth > w) out.push(`the page is ${root.scrollWidth}px wide in a ${w}px window`);
         const buttons = document.querySelectorAll('[data-testid=criterion] button.level');
         for (const b of buttons) {
           b.scrollIntoView({block: 'center', inline: 'nearest'});
           const r = b.getBoundingClientRect();
           const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
           const inside = window.scrollX === 0 && r.left >= 0 && r.right <= w && r.top >= 0
             && r.bottom <= h && r.width > 0;
           if (!inside || !(hit === b || b.contains(hit))) {
             out.push(`${b.closest('[data-testid=criterion]').dataset.key} ${b.textContent}: `
               + `${Math.round(r.left)}..${Math.round(r.right)} of ${w}, scrolled ${window.scrollX}`);
           }
         }
         window.scrollTo(0, 0);
         return [buttons.length, out];",
        json!([]),
    );
    assert_eq!(
        misplaced[0],
        json!(35),
        "seven criteria with five levels each are on the screen"
    );
    assert_eq!(
        misplaced[1],
        json!([]),
        "every rating button is inside the {vw}px viewport without sideways scrolling and reachable by a click"
    );
}

#[test]
fn a_right_to_left_override_in_a_name_is_spelled_out_and_reverses_nothing() {
    const HOSTILE: &str = "Dr \u{202E}evil name\u{202C} Ng";
    const SHOWN: &str = "Dr <U+202E>evil name<U+202C> Ng";
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("bidi.concord");
    {
        let store = create_demo_at(&study, Arc::new(SystemClock), 5).expect("demo study");
        let mut s = OpenStudy::new(store);
        concord_core::app::setup::add_expert(&mut s, HOSTILE, 7)
            .expect("an expert with an override in the name");
    }
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    // No direction character reaches the page's text: each is spelled out where the name is.
    let raw_controls = "return [...document.body.innerText].filter((c) => /[\\u202A-\\u202E\\u2066-\\u2069\\u200E\\u200F\\u061C]/.test(c)).length;";
    let overview_names = app.script(
        "return [...document.querySelectorAll('[data-testid=overview] bdi.name')].map((e) => e.textContent);",
        json!([]),
    );
    assert!(
        overview_names
            .as_array()
            .is_some_and(|a| a.iter().any(|n| n == SHOWN)),
        "the overview lists the expert with the override spelled out: {overview_names}"
    );
    assert_eq!(
        app.script(raw_controls, json!([])),
        json!(0),
        "the overview's text holds no raw direction character"
    );
    open_picker(&app);
    let shown = app
        .find_all("[data-testid=profile] bdi.name")
        .into_iter()
        .map(|e| app.text(&e))
        .find(|t| t.starts_with("Dr "))
        .expect("the expert is on the picker");
    assert_eq!(shown, SHOWN, "the picker spells the override out");
    assert_eq!(
        app.script(raw_controls, json!([])),
        json!(0),
        "the picker's text holds no raw direction character"
    );
    // Laid out left to right: the first letter of "evil name" is left of its last.
    let order = app.script(
        "const el = [...document.querySelectorAll('[data-testid=profile] bdi.name')]
           .find((e) => e.textContent.startsWith('Dr '));
         const node = el.firstChild; const text = node.textContent;
         const at = (i) => { const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
                             return r.getBoundingClientRect().left; };
         const first = text.indexOf('evil'); const last = text.indexOf(' Ng') - 1;
         const after = text.length - 1;
         return [at(first) < at(last), at(last) < at(after)];",
        json!([]),
    );
    assert_eq!(
        order,
        json!([true, true]),
        "the text after the override runs left to right, as typed"
    );
    // A new name typed with an override is shown spelled out before it is created.
    let input = app.wait_for("[data-testid=new-profile]", Duration::from_secs(10));
    app.click(&input);
    app.type_into(&input, &format!("Neu \u{202E}name{ENTER}"));
    let pending = app.wait_for(
        "[data-testid=profile-confirm-name]",
        Duration::from_secs(10),
    );
    assert_eq!(
        app.text(&pending),
        "Neu <U+202E>name",
        "the name to be created shows its override"
    );
    app.screenshot("bidi-names");
}

/// The absolute path at the end of a "… written to PATH" line.
fn written_path(text: &str) -> PathBuf {
    PathBuf::from(
        text.rsplit(" to ")
            .next()
            .unwrap_or_else(|| panic!("no path in {text:?}"))
            .trim(),
    )
}

fn wait_text(app: &App, css: &str, ready: impl Fn(&str) -> bool) -> String {
    let e = app.wait_for(css, Duration::from_secs(30));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let text = app.text(&e);
        if ready(&text) {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{css} did not become ready: {text:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_long_chinese_study_and_expert_name_export_under_the_file_name_limit() {
    // 75 Chinese characters, 225 bytes: the study file and SQLite's `-journal` beside it (241
    // bytes) still fit, but a package named after study and expert would not.
    let title = "心理危机干预与临床评估研究项目".repeat(5);
    let expert = "资深临床心理学专家".repeat(5);
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join(format!("{title}.concord"));
    {
        let store = create_demo_at(&study, Arc::new(SystemClock), 5).expect("demo study");
        let mut s = OpenStudy::new(store);
        concord_core::app::setup::add_expert(&mut s, &expert, 7).expect("the long-named expert");
        let mut options = AssignmentOptions::new(1, 42);
        options.experts = vec![expert.clone()];
        concord_core::app::setup::assign(&mut s, &options).expect("the expert is assigned");
    }
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    let setup = app.wait_for("[data-testid=nav-setup]", Duration::from_secs(5));
    app.click(&setup);
    let step = app.wait_for("[data-testid=step-packages]", Duration::from_secs(10));
    app.click(&step);
    let pass = app.wait_for("[data-testid=package-passphrase]", Duration::from_secs(10));
    app.clear(&pass);
    app.type_into(&pass, "told to the expert by phone");
    let repeat = app.wait_for(
        "[data-testid=package-passphrase-repeat]",
        Duration::from_secs(5),
    );
    app.clear(&repeat);
    app.type_into(&repeat, "told to the expert by phone");
    let export = app.wait_for(
        &format!("[data-testid=package-row][data-name='{expert}'] [data-testid=package-export]"),
        Duration::from_secs(10),
    );
    app.click(&export);
    let written = wait_text(&app, "[data-testid=package-written]", |t| {
        t.contains(".concord")
    });
    let package = written_path(&written);
    let package_name = package.file_name().expect("a file name").len();
    assert!(
        package_name <= 255 && package.is_file(),
        "the package is written under a {package_name}-byte name (≤ 255): {}",
        package.display()
    );
    let full = format!("{title}-package-{expert}.concord").len();
    assert!(
        full > 255,
        "the unshortened name ({full} bytes) would not have fit, so the bound was needed"
    );
    assert!(
        package
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(&title[..180]) && n.ends_with(".concord")),
        "the shortened name keeps the study's name (its first 60 characters at least) at its start and the extension: {}",
        package.display()
    );

    let step = app.wait_for("[data-testid=step-exports]", Duration::from_secs(10));
    app.click(&step);
    let export = app.wait_for("[data-testid=export-long_csv]", Duration::from_secs(10));
    app.click(&export);
    let written = wait_text(&app, "[data-testid=written-long_csv]", |t| {
        t.contains(".csv")
    });
    let csv = written_path(&written);
    let csv_name = csv.file_name().expect("a file name").len();
    assert!(
        csv_name <= 255 && csv.is_file(),
        "the ratings CSV is written under a {csv_name}-byte name (≤ 255): {}",
        csv.display()
    );
}

#[test]
fn a_kill_after_an_item_is_complete_reopens_on_the_next_item() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("crash.concord");
    let app = App::launch(&study);
    rate_as_new_profile(&app, "Crash expert");
    assert_eq!(current_item(&app), 1, "a new queue starts at item 1");
    for k in 1..=3 {
        let n = app.find_all("[data-testid=criterion]").len();
        app.press(&"1".repeat(n));
        // The value that completes item k has been saved when the completed count says k.
        app.wait_for_attribute(
            "[role=progressbar]",
            "aria-valuenow",
            &k.to_string(),
            Duration::from_secs(10),
        );
        if k < 3 {
            app.press(ENTER);
            app.wait_for_attribute(
                "[data-testid=item-number]",
                "data-item",
                &(k + 1).to_string(),
                Duration::from_secs(10),
            );
        }
    }
    // Item 3 is complete and still on screen: the process dies without a chance to save more.
    app.kill_app();
    drop(app);

    let app = App::launch(&study);
    app.wait_for(
        "[data-testid=overview], [data-testid=rating-screen], [data-testid=rater-picker]",
        Duration::from_secs(60),
    );
    if app.try_find("[data-testid=rating-screen]").is_none() {
        if app.try_find("[data-testid=rater-picker]").is_none() {
            let rate = app.wait_for("[data-testid=nav-rate]", Duration::from_secs(5));
            app.click(&rate);
        }
        app.wait_for("[data-testid=profile]", Duration::from_secs(10));
        let mine = app
            .find_all("[data-testid=profile]")
            .into_iter()
            .find(|p| app.text(p).contains("Crash expert"))
            .expect("the profile made before the crash is listed");
        app.click(&mine);
    }
    assert_eq!(
        current_item(&app),
        4,
        "after kill -9 the rater reopens on item 4, the first unfinished one"
    );
}

/// Whether the element `css` lies wholly inside the window's viewport.
fn in_view(app: &App, css: &str) -> bool {
    app.script(
        "const e = document.querySelector(arguments[0]); if (!e) return false; \
         const r = e.getBoundingClientRect(); \
         return r.top >= -1 && r.bottom <= window.innerHeight + 1 && r.height > 0;",
        json!([css]),
    )
    .as_bool()
    .unwrap_or(false)
}

#[test]
fn at_800_by_600_every_criterion_and_every_message_is_in_view_and_the_mouse_has_a_next() {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = dir.path().join("small-window.concord");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    app.set_window_size(800, 600);
    std::thread::sleep(Duration::from_millis(300));
    rate_as_new_profile(&app, "Small window expert");
    std::thread::sleep(Duration::from_millis(300));
    let n = app.find_all("[data-testid=criterion]").len();
    assert!(
        n >= 5,
        "the demo's first item has its rubric's criteria ({n})"
    );

    // Every criterion can be reached by keyboard, and the one focused is scrolled into view.
    let settles_in_view = |css: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while !in_view(&app, css) {
            if std::time::Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(40));
        }
        true
    };
    for step in 0..n {
        assert!(
            settles_in_view("[data-testid=criterion][data-focused=true]"),
            "at 800×600 the focused criterion (step {step} of {n}) comes into view"
        );
        app.press("\u{E015}");
    }

    // Enter on an incomplete item: the message is beside the criteria, in view, and in a live
    // region that assistive technology announces.
    app.press(ENTER);
    app.wait_for("[data-testid=notice]", Duration::from_secs(5));
    assert!(
        settles_in_view("[data-testid=notice]"),
        "'rate every criterion' is drawn where the rater looks, not below the fold"
    );
    let region = app.wait_for("[data-testid=notice-region]", Duration::from_secs(5));
    assert_eq!(
        app.attribute(&region, "aria-live").as_deref(),
        Some("polite"),
        "the message is announced"
    );

    // A level chosen exposes its state (a radio of its criterion's group, checked); the others of
    // that criterion say they are not.
    app.script(
        "document.querySelector('[data-testid=criterion]').scrollIntoView(); return 1;",
        json!([]),
    );
    let levels = app
        .script(
            "return document.querySelector('[data-testid=criterion]') \
               .querySelectorAll('[data-testid=level]').length;",
            json!([]),
        )
        .as_u64()
        .expect("a count") as usize;
    let all = app.find_all("[data-testid=criterion] [data-testid=level]");
    let first = &all[..levels];
    app.click(&first[0]);
    std::thread::sleep(Duration::from_millis(200));
    let pressed: Vec<Option<String>> = app
        .find_all("[data-testid=criterion] [data-testid=level]")
        .iter()
        .take(first.len())
        .map(|b| app.attribute(b, "aria-checked"))
        .collect();
    assert_eq!(
        pressed[0].as_deref(),
        Some("true"),
        "the level clicked says it is checked: {pressed:?}"
    );
    assert!(
        pressed[1..].iter().all(|p| p.as_deref() == Some("false")),
        "the other levels of that criterion say they are not: {pressed:?}"
    );

    // The rest by keyboard, then the visible Next for a mouse user.
    let item = current_item(&app);
    app.press(&"1".repeat(n - 1));
    let next = app.wait_for("[data-testid=next-button]", Duration::from_secs(5));
    app.click(&next);
    app.wait_for_attribute(
        "[data-testid=item-number]",
        "data-item",
        &(item + 1).to_string(),
        Duration::from_secs(10),
    );

    // The sign-off dialog: labelled fields, and Esc closes it without touching the item.
    app.click(&app.wait_for("[data-testid=signoff-button]", Duration::from_secs(5)));
    app.wait_for("[data-testid=signoff-dialog]", Duration::from_secs(5));
    let unlabelled = app.script(
        "return [...document.querySelectorAll('[data-testid=signoff-dialog] input')] \
           .filter((i) => !i.closest('label') && !i.getAttribute('aria-label')).length;",
        json!([]),
    );
    assert_eq!(
        unlabelled,
        json!(0),
        "every field of the sign-off dialog has a label"
    );
    app.press("\u{E00C}");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while app.try_find("[data-testid=signoff-dialog]").is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "Esc closes the sign-off dialog"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_package_passphrase_can_be_shown_and_a_refusal_names_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("packages.concord");
    {
        let store = create_demo_at(&study, Arc::new(SystemClock), 5).expect("demo study");
        let mut s = OpenStudy::new(store);
        concord_core::app::setup::add_expert(&mut s, "Dana", 7).expect("an expert");
        let mut options = AssignmentOptions::new(1, 42);
        options.experts = vec!["Dana".into()];
        concord_core::app::setup::assign(&mut s, &options).expect("the expert is assigned");
    }
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    app.click(&app.wait_for("[data-testid=nav-setup]", Duration::from_secs(5)));
    app.click(&app.wait_for("[data-testid=step-packages]", Duration::from_secs(10)));
    let export = "[data-testid=package-row][data-name='Dana'] [data-testid=package-export]";
    // No passphrase: refused next to the field, which it names.
    app.click(&app.wait_for(export, Duration::from_secs(10)));
    let refusal = app.wait_for(
        "[data-testid=package-passphrase-error]",
        Duration::from_secs(5),
    );
    assert!(
        app.text(&refusal).starts_with("Package passphrase"),
        "the refusal names the field it is about: {}",
        app.text(&refusal)
    );
    // Typed twice, differently: refused before anything is sealed, next to the field.
    let pass = app.wait_for("[data-testid=package-passphrase]", Duration::from_secs(5));
    app.click(&pass);
    app.type_into(&pass, "abc123");
    let repeat = app.wait_for(
        "[data-testid=package-passphrase-repeat]",
        Duration::from_secs(5),
    );
    app.type_into(&repeat, "abc124");
    app.click(&app.wait_for(export, Duration::from_secs(5)));
    wait_text(&app, "[data-testid=package-passphrase-error]", |t| {
        t.starts_with("Package passphrase") && t.contains("differ")
    });
    // A weak one: the core's refusal is moved to the field, named, in sentences.
    app.clear(&repeat);
    app.type_into(&repeat, "abc123");
    app.click(&app.wait_for(export, Duration::from_secs(5)));
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let text = app
            .try_find("[data-testid=package-passphrase-error]")
            .map(|e| app.text(&e))
            .unwrap_or_default();
        if text.starts_with("Package passphrase")
            && text.len() > "Package passphrase: ".len() + 20
            && !text.contains("differ")
        {
            assert!(
                !text.contains(".."),
                "the refusal reads as sentences, with no doubled full stop: {text}"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "a weak passphrase is refused next to its field: {text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        app.attribute(&pass, "type").as_deref(),
        Some("password"),
        "the passphrase is hidden until asked"
    );
    app.click(&app.wait_for(
        "[data-testid=package-passphrase-show]",
        Duration::from_secs(5),
    ));
    assert_eq!(
        app.attribute(&pass, "type").as_deref(),
        Some("text"),
        "Show reveals what was typed, so the lead can check it before telling the expert"
    );
    app.clear(&pass);
    app.type_into(&pass, "told to the expert by phone");
    app.click(&app.wait_for(export, Duration::from_secs(5)));
    let written = wait_text(&app, "[data-testid=package-written]", |t| {
        t.contains(".concord")
    });
    assert!(
        written_path(&written).is_file(),
        "with a strong passphrase the package is written"
    );
    assert!(
        app.try_find("[data-testid=package-passphrase-error]")
            .is_none(),
        "the refusal is gone once the passphrase is accepted"
    );
}
