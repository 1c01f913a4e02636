//! Journeys of the window as a desktop product, in the real webview: the expert's package from
//! opening (behind the unlock screen: a package is sealed under a passphrase) to "Return ratings"
//! and the lead's merge of the returned file (each file handed in the way the desktop or a dialog
//! hands it: a typed path on the welcome screen, a file given to the running app); switching
//! studies backs the closed one up, and a backup restores as a new study; an encrypted study
//! opened at runtime asks for its passphrase and then locks when idle;
//! and axe-core finds no serious or critical violation on any screen, in the light and the dark
//! theme. Native dialogs cannot be driven by WebDriver: the tests feed the path a dialog returns
//! into the same command the window sends it to.

use super::App;
use concord_core::app::open_study::OpenStudy;
use concord_core::base::clock::SystemClock;
use concord_core::guard::phi::review::PhiGate;
use concord_core::intake::demo::create_demo_at;
use concord_core::intake::demo::create_demo_with;
use concord_core::store::{integrity_problems, Passphrase};
use concord_core::workflow::assignment::AssignmentOptions;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ENTER: &str = "\u{E007}";
const EXPERT: &str = "Ana Ruiz";
/// The passphrase the lead seals the package with (and tells the expert by phone).
pub(super) const PKG_PASS: &str = "package passphrase by phone";

fn pkg_pass() -> Passphrase {
    Passphrase::new(PKG_PASS).expect("a passphrase")
}

pub(super) fn unlock_with(app: &App, passphrase: &str) {
    let input = app.wait_for("[data-testid=unlock-passphrase]", Duration::from_secs(30));
    app.clear(&input);
    app.type_into(&input, passphrase);
    app.click(&app.wait_for("[data-testid=unlock-submit]", Duration::from_secs(5)));
}

/// A demo study with `EXPERT` assigned four conversations, and her package written beside it.
pub(super) fn study_with_package(dir: &Path) -> (PathBuf, PathBuf, i64) {
    let main = dir.join("lead-study.concord");
    let store = create_demo_at(&main, Arc::new(SystemClock), 3).expect("demo study");
    let mut study = OpenStudy::new(store);
    concord_core::app::setup::add_expert(&mut study, EXPERT, 5).expect("expert added");
    let mut options = AssignmentOptions::new(1, 7);
    options.sample = Some(4);
    options.experts = vec![EXPERT.to_string()];
    concord_core::app::setup::assign(&mut study, &options).expect("assigned");
    let pkg = dir.join("lead-study-package-ana.concord");
    let written = concord_core::app::package::export_package(
        &mut study,
        EXPERT,
        Some(&pkg),
        false,
        11,
        &pkg_pass(),
        PhiGate {
            actor: "lead",
            override_reason: None,
        },
    )
    .expect("package written");
    (main, pkg, written.summary.assignments as i64)
}

/// Send an app event from the page, as the shell does for the native menu (`menu`) and for a
/// file the desktop hands to the running app (`open-file`).
fn emit(app: &App, event: &str, payload: &str) {
    let r = app.invoke(
        "plugin:event|emit",
        json!({"event": event, "payload": payload}),
    );
    assert!(r.get("error").is_none(), "emitting {event} failed: {r}");
}

/// Replace an input's value as a person would, so Svelte's binding sees it.
fn fill(app: &App, css: &str, text: &str) {
    let input = app.wait_for(css, Duration::from_secs(10));
    app.script(
        "const e = document.querySelector(arguments[0]); e.value = ''; \
         e.dispatchEvent(new Event('input', {bubbles: true})); return 1;",
        json!([css]),
    );
    app.type_into(&input, text);
}

/// The ratings `rater` has in the study file at `study` (a sealed package's with its passphrase).
fn ratings_of(study: &Path, rater: &str) -> i64 {
    let conn = rusqlite::Connection::open(study).expect("opens");
    let sealed = std::fs::read(study)
        .map(|b| !b.starts_with(b"SQLite format 3"))
        .unwrap_or(false);
    if sealed {
        conn.pragma_update(None, "key", PKG_PASS).expect("keyed");
    }
    conn.query_row(
        "SELECT COUNT(*) FROM rating g JOIN rater r ON r.id = g.rater_id WHERE r.name = ?1",
        [rater],
        |r| r.get(0),
    )
    .expect("counted")
}

#[test]
fn an_expert_rates_a_package_returns_it_and_the_lead_merges_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (main, pkg, items) = study_with_package(dir.path());
    let app = App::launch(&main);
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));

    // File → Close, then the package's path typed on the welcome screen (the dialog's fallback).
    emit(&app, "menu", "close");
    app.wait_for("[data-testid=welcome]", Duration::from_secs(10));
    let recent = app.text_of("[data-testid=recent-list]");
    assert!(
        recent.contains("lead-study"),
        "the study just closed is among the recent studies: {recent}"
    );
    app.assert_accessible("welcome");
    fill(
        &app,
        "[data-testid=welcome-path]",
        &pkg.display().to_string(),
    );
    app.click(&app.wait_for("[data-testid=welcome-path-open]", Duration::from_secs(5)));

    // The package is sealed: the unlock screen asks for the passphrase the lead gave by phone.
    app.wait_for("[data-testid=unlock-screen]", Duration::from_secs(15));
    app.assert_accessible("package-unlock");
    unlock_with(&app, PKG_PASS);

    // Then straight into Ana's queue, saying whose package it is and how many items it holds.
    let whose = app.text_of("[data-testid=package-whose]");
    assert!(
        whose.contains(EXPERT) && whose.contains(&format!("{items} items")),
        "the banner names the expert and the item count ({items}): {whose}"
    );
    app.wait_for(
        "[data-testid=rating-screen] [data-testid=item-number]",
        Duration::from_secs(10),
    );
    assert!(
        app.try_find("[data-testid=nav-agreement]").is_none(),
        "an expert's package shows no lead or researcher screens"
    );
    app.assert_accessible("package-rating");
    let n = app.find_all("[data-testid=criterion]").len();
    app.press(&format!("{}{ENTER}", "1".repeat(n)));
    app.wait_for_attribute(
        "[data-testid=item-number]",
        "data-item",
        "2",
        Duration::from_secs(10),
    );

    // Every value is committed (each rating is its own durable write) before the file is returned.
    let deadline = Instant::now() + Duration::from_secs(10);
    while ratings_of(&pkg, EXPERT) < n as i64 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }

    // Return ratings: the suggested file beside the package, written and shown.
    let suggested = app
        .attribute(
            &app.wait_for("[data-testid=return-path]", Duration::from_secs(5)),
            "value",
        )
        .unwrap_or_default();
    let returned = dir.path().join("lead-study-package-ana-returned.concord");
    assert_eq!(
        suggested,
        returned.display().to_string(),
        "the file to send back is suggested beside the package"
    );
    app.click(&app.wait_for("[data-testid=return-ratings]", Duration::from_secs(5)));
    let written = app.text_of("[data-testid=return-written]");
    assert!(
        written.contains(&returned.display().to_string()),
        "the window says where the file went: {written}"
    );
    assert!(
        integrity_problems(&returned, Some(&pkg_pass()))
            .expect("a study file, sealed like the package")
            .is_empty(),
        "the returned file passes PRAGMA integrity_check"
    );
    assert_eq!(
        ratings_of(&returned, EXPERT),
        n as i64,
        "the returned file holds the values just entered"
    );

    // The lead's study comes back as a file handed to the running app; the returned package is
    // routed to the merge step and merged.
    emit(&app, "open-file", &main.display().to_string());
    app.wait_for("[data-testid=overview]", Duration::from_secs(15));
    let before = ratings_of(&main, EXPERT);
    emit(&app, "open-file", &returned.display().to_string());
    let merge_path = app.wait_for("[data-testid=merge-path]", Duration::from_secs(10));
    assert_eq!(
        app.attribute(&merge_path, "value").as_deref(),
        Some(returned.display().to_string().as_str()),
        "a sealed package handed to the lead's study lands in the merge step"
    );
    app.assert_accessible("setup-packages");
    fill(&app, "[data-testid=package-passphrase]", PKG_PASS);
    app.click(&app.wait_for("[data-testid=merge-run]", Duration::from_secs(5)));
    app.wait_for("[data-testid=merge-report]", Duration::from_secs(15));
    assert_eq!(
        ratings_of(&main, EXPERT),
        before + n as i64,
        "the expert's values are in the lead's study after the merge"
    );

    // Closing the package backed it up (it changed); the backup restores as a new study.
    let backups_root = main
        .with_extension("webdata")
        .join("org.concord.desktop")
        .join("backups");
    let folders: Vec<PathBuf> = std::fs::read_dir(&backups_root)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(
        folders.len(),
        1,
        "only the package changed before it was closed, so only it has backups (in {}): {folders:?}",
        backups_root.display()
    );
    let name = folders[0]
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    assert!(
        name.as_deref()
            .is_some_and(|n| n.starts_with("lead-study-package-ana-")),
        "backups are kept per study, in a folder named after it: {name:?}"
    );
    let copies: Vec<PathBuf> = std::fs::read_dir(&folders[0])
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(
        copies.len(),
        1,
        "one backup, taken when the package was closed: {copies:?}"
    );
    assert!(
        integrity_problems(&copies[0], Some(&pkg_pass()))
            .expect("a study file, encrypted with the package's passphrase")
            .is_empty(),
        "the backup passes PRAGMA integrity_check"
    );
    emit(&app, "menu", "restore-backup");
    app.wait_for("[data-testid=dialog-backups]", Duration::from_secs(10));
    app.assert_accessible("backups-dialog");
    app.invoke("backup_now", json!({}));
    emit(&app, "menu", "about");
    let version = app.text_of("[data-testid=about-version]");
    assert!(
        version.starts_with("Concord ") && version.contains("build"),
        "About shows version and build: {version}"
    );
    app.assert_accessible("about-dialog");
    emit(&app, "menu", "restore-backup");
    app.wait_for("[data-testid=backup-entry]", Duration::from_secs(10));
    let restored = dir.path().join("restored.concord");
    fill(
        &app,
        "[data-testid=restore-to]",
        &restored.display().to_string(),
    );
    app.click(&app.wait_for("[data-testid=restore-backup]", Duration::from_secs(5)));
    app.wait_for_attribute(
        "[data-testid=study-path]",
        "data-path",
        &restored.display().to_string(),
        Duration::from_secs(15),
    );
    assert_eq!(
        ratings_of(&restored, EXPERT),
        ratings_of(&main, EXPERT),
        "the restored study holds the lead study's ratings at the backup"
    );
}

#[test]
fn a_missing_study_named_on_the_command_line_is_refused_and_nothing_is_created() {
    let home = tempfile::tempdir().expect("temp dir");
    let missing = home.path().join("typo-study.concord");
    let app = App::launch_bare(home.path(), &[missing.to_str().expect("a UTF-8 path")]);
    app.wait_for("[data-testid=study-error-message]", Duration::from_secs(30));
    let message = app.text_of("[data-testid=study-error-message]");
    assert!(
        message.contains("typo-study.concord") && message.contains("no such study file"),
        "the window says which file it could not find: {message}"
    );
    drop(app);
    assert!(
        !missing.exists(),
        "a study named on the command line that does not exist is not created (no demo there)"
    );
}

/// The path of the study the window has open (its status, as the window asks for it).
fn open_path(app: &App) -> Option<String> {
    let status = app.invoke("study_status", json!({}));
    status["ok"]["path"].as_str().map(str::to_string)
}

#[test]
fn a_relaunch_opens_the_study_opened_last_not_the_demo() {
    let home = tempfile::tempdir().expect("temp dir");
    let other = home.path().join("my-study.concord");
    create_demo_at(&other, Arc::new(SystemClock), 5).expect("a study");
    // First launch: no study named, so the default (demo) study; then the person opens theirs.
    let app = App::launch_bare(home.path(), &[]);
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));
    let first = open_path(&app).expect("a study is open");
    assert_ne!(
        first,
        other.display().to_string(),
        "the first launch opens the default study"
    );
    let r = app.invoke("open_study", json!({"path": other.display().to_string()}));
    assert!(r.get("error").is_none(), "opening the study works: {r}");
    assert_eq!(
        open_path(&app).as_deref(),
        Some(other.display().to_string().as_str()),
        "the window now has the person's study open"
    );
    drop(app);

    // Relaunched the same way: the study opened last comes back.
    let app = App::launch_bare(home.path(), &[]);
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));
    assert_eq!(
        open_path(&app).as_deref(),
        Some(other.display().to_string().as_str()),
        "a relaunch opens the study opened last, not the default demo study"
    );
}

/// `path` with `suffix` appended to its file name (`-wal`, `-shm`).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[test]
fn ctrl_q_quits_and_leaves_the_package_whole_without_wal_or_shm() {
    quits_and_leaves_the_package_whole("Ctrl+Q", |app| app.chord("\u{E009}", "q"));
}

#[test]
fn file_quit_quits_and_leaves_the_package_whole_without_wal_or_shm() {
    // The native menu's File → Quit sends `quit` to the window (menu.rs `forward`), which saves
    // what is still being saved and asks the shell to quit; the shell's 5 s fallback is not on
    // this path, so an exit within the deadline is the window's own quit.
    // The app may be gone before the emit's reply comes back, so the reply is not read: the
    // exit below is what must hold.
    quits_and_leaves_the_package_whole("File → Quit", |app| {
        app.invoke(
            "plugin:event|emit",
            json!({"event": "menu", "payload": "quit"}),
        );
    });
}

/// An expert's package opened, one item rated, then quit `how`: the app exits, the package is
/// closed whole (no `-wal`/`-shm`) and holds what was typed.
fn quits_and_leaves_the_package_whole(how: &str, quit: impl Fn(&App)) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_main, pkg, _items) = study_with_package(dir.path());
    let app = App::launch(&pkg);
    app.wait_for("[data-testid=unlock-title]", Duration::from_secs(30));
    let title = app.text_of("[data-testid=unlock-title]");
    assert!(
        title.contains("rater package"),
        "the lock screen of a package says it is a package, not a study: {title:?}"
    );
    unlock_with(&app, PKG_PASS);
    app.wait_for(
        "[data-testid=rating-screen] [data-testid=item-number]",
        Duration::from_secs(15),
    );
    // "1" is a level of every scale: the package may open on a yes–no item (PsyCrisis).
    let n = app.find_all("[data-testid=criterion]").len();
    app.press(&format!("{}{ENTER}", "1".repeat(n)));
    app.wait_for_attribute(
        "[data-testid=item-number]",
        "data-item",
        "2",
        Duration::from_secs(10),
    );
    assert!(
        app.try_find("[data-testid=switch-rater]").is_none(),
        "an expert's package holds one rater: its rating screen offers no Change rater, which \
         would lead nowhere"
    );
    assert!(
        beside(&pkg, "-wal").exists(),
        "while the package is open its write-ahead log sits beside it (what quitting must fold back)"
    );
    let pid = app.app_pid().expect("the app runs");

    quit(&app);
    let deadline = Instant::now() + Duration::from_secs(15);
    while std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|t| t == super::app_binary()) {
        assert!(
            Instant::now() < deadline,
            "{how} must quit the app within 15 s (pid {pid} still runs)"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for suffix in ["-wal", "-shm"] {
        assert!(
            !beside(&pkg, suffix).exists(),
            "quitting by {how} closes the package whole: no {suffix} is left beside it to be \
             forgotten when the file is mailed"
        );
    }
    assert_eq!(
        ratings_of(&pkg, EXPERT),
        n as i64,
        "the ratings typed before quitting by {how} are in the package file itself"
    );
}

#[test]
fn an_encrypted_study_opened_at_runtime_asks_for_its_passphrase_and_locks_when_idle() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plain = dir.path().join("plain.concord");
    let secret = dir.path().join("secret.concord");
    let pass = "runtime switch passphrase";
    drop(
        create_demo_with(
            &secret,
            Arc::new(SystemClock),
            8,
            Some(&Passphrase::new(pass).expect("a passphrase")),
        )
        .expect("encrypted demo study"),
    );
    let app = App::launch_with(&plain, &[("CONCORD_IDLE_LOCK_SECONDS", "6")]);
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));

    // Opened from the running window (a double-click while Concord runs): the unlock screen.
    emit(&app, "open-file", &secret.display().to_string());
    app.wait_for("[data-testid=unlock-screen]", Duration::from_secs(15));
    assert!(
        app.try_find("[data-testid=overview]").is_none(),
        "nothing of the encrypted study shows before it is unlocked"
    );
    let status = app.invoke("study_status", json!({}));
    assert_eq!(
        status["ok"]["error"]["code"], "passphrase_needed",
        "the shell holds the new study locked, not the old one: {status}"
    );
    unlock_with(&app, pass);
    app.wait_for_attribute(
        "[data-testid=study-path]",
        "data-path",
        &secret.display().to_string(),
        Duration::from_secs(30),
    );
    let state = app.text_of("[data-testid=security-state]");
    assert!(
        state.contains("encrypted"),
        "the switched-to study says it is encrypted: {state}"
    );

    // The idle lock watches the study switched to: untouched for 6 s, it locks.
    app.wait_for("[data-testid=locked-idle]", Duration::from_secs(40));
    let locked = app.invoke("study_overview", json!({}));
    assert_eq!(
        locked["error"]["code"], "passphrase_needed",
        "after the idle lock the shell no longer holds the study: {locked}"
    );
}

/// Switch the interface to `lang` ("en" or "zh") with its button, unless it is there already.
fn use_language(app: &App, lang: &str) {
    let tag = if lang == "zh" { "zh-CN" } else { "en" };
    let html = app.wait_for("html", Duration::from_secs(5));
    if app.attribute(&html, "lang").as_deref() != Some(tag) {
        app.click(&app.wait_for("[data-testid=lang-switch]", Duration::from_secs(5)));
        app.wait_for_attribute("html", "lang", tag, Duration::from_secs(5));
    }
}

/// A level chosen by keyboard, then: the chosen level's fill against the page around it, its
/// text against its fill, the focus ring of the level the keyboard moved on to and the outline of
/// the criterion in focus all keep the contrast WCAG asks of states and focus (3 : 1; 4.5 : 1 for
/// text), in the theme the window is in. (axe checks text, not these.)
fn assert_states_stand_out(app: &App, screen: &str) {
    app.wait_for(
        "[data-testid=level][tabindex='0']:focus",
        Duration::from_secs(10),
    );
    // (1 is a level of every scale, a yes–no criterion's "present" among them.)
    app.press("1");
    app.wait_for(
        "[data-testid=level][aria-checked=true]",
        Duration::from_secs(10),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let found = loop {
        let found = app.script(
            "const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number); \
             const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; \
               return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); }; \
             const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return Math.round(100 * (x + 0.05) / (y + 0.05)) / 100; }; \
             const bg = (e) => { for (let n = e; n; n = n.parentElement) { const c = rgb(getComputedStyle(n).backgroundColor); \
               if (c.length === 3 || c[3] > 0) return c; } return [255, 255, 255]; }; \
             const chosen = document.querySelector('[data-testid=level][aria-checked=true]'); \
             const focused = document.activeElement; \
             const criterion = document.querySelector('[data-testid=criterion][data-focused=true]'); \
             if (!chosen || !focused || focused.dataset.testid !== 'level' || !criterion) return null; \
             const c = getComputedStyle(chosen), f = getComputedStyle(focused), k = getComputedStyle(criterion); \
             return {chosen: ratio(rgb(c.backgroundColor), bg(chosen.parentElement)), \
                     chosenText: ratio(rgb(c.color), rgb(c.backgroundColor)), \
                     ring: f.outlineStyle === 'none' ? 0 : ratio(rgb(f.outlineColor), bg(focused.parentElement)), \
                     ringWidth: parseFloat(f.outlineWidth), \
                     criterion: ratio(rgb(k.outlineColor), bg(criterion.parentElement))};",
            json!([]),
        );
        if !found.is_null() || Instant::now() > deadline {
            break found;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    println!("figure: contrast of states on the {screen} screen: {found}");
    let at_least = |key: &str, min: f64| {
        assert!(
            found[key].as_f64().is_some_and(|r| r >= min),
            "{screen}: {key} must reach {min} : 1: {found}"
        );
    };
    at_least("chosen", 3.0);
    at_least("chosenText", 4.5);
    at_least("ring", 3.0);
    at_least("ringWidth", 2.0);
    at_least("criterion", 3.0);
}

/// Every screen of the lead's, the researcher's and the expert's window, checked with axe-core
/// in English and in Chinese: the overview, the agreement panel, judges, adjudication, raters,
/// each step of the setup wizard (the PHI review and the assignment among them), the rater
/// picker, the rating screen with its key help, its flag field and its sign-off dialog, and the
/// Keyboard shortcuts dialog (left open at the end).
fn check_every_screen(app: &App, theme: &str) {
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));
    for lang in ["en", "zh"] {
        use_language(app, lang);
        let name = |screen: &str| format!("{theme}-{lang}-{screen}");
        app.click(&app.wait_for("[data-testid=nav-overview]", Duration::from_secs(10)));
        app.wait_for("[data-testid=overview]", Duration::from_secs(30));
        app.assert_accessible(&name("overview"));
        for (nav, ready, screen) in [
            (
                "nav-agreement",
                "[data-testid=agreement-table] td",
                "agreement",
            ),
            ("nav-judges", "[data-testid=judge-screen]", "judges"),
            ("nav-adjudicate", "[data-testid=adj-status]", "adjudicate"),
            ("nav-raters", "[data-testid=raters]", "raters"),
            ("nav-rate", "[data-testid=rater-picker]", "rater-picker"),
        ] {
            app.click(&app.wait_for(&format!("[data-testid={nav}]"), Duration::from_secs(5)));
            app.wait_for(ready, Duration::from_secs(30));
            app.assert_accessible(&name(screen));
        }
        // (The wizard remembers its step: each is opened by its own button.)
        for (step, ready) in [
            ("rubric", "[data-testid=setup-rubric]"),
            ("import", "[data-testid=setup-import]"),
            ("privacy", "[data-testid=phi-counts]"),
            ("experts", "[data-testid=setup-experts]"),
            ("assign", "[data-testid=setup-assign]"),
            ("progress", "[data-testid=setup-progress]"),
            ("packages", "[data-testid=setup-packages]"),
            ("exports", "[data-testid=setup-exports]"),
        ] {
            app.click(&app.wait_for("[data-testid=nav-setup]", Duration::from_secs(5)));
            app.click(&app.wait_for(
                &format!("[data-testid=step-{step}]"),
                Duration::from_secs(5),
            ));
            app.wait_for(ready, Duration::from_secs(10));
            app.assert_accessible(&name(&format!("setup-{step}")));
        }

        // The expert's screens: a profile made (in English) or picked again (in Chinese).
        app.click(&app.wait_for("[data-testid=nav-rate]", Duration::from_secs(5)));
        let input = app.wait_for("[data-testid=new-profile]", Duration::from_secs(10));
        let made = app
            .find_all("[data-testid=profile]")
            .into_iter()
            .find(|p| app.text(p).contains("Axe expert"));
        match made {
            Some(profile) => app.click(&profile),
            None => {
                app.click(&input);
                app.type_into(&input, &format!("Axe expert{ENTER}"));
                let confirm =
                    app.wait_for("[data-testid=confirm-profile]", Duration::from_secs(10));
                app.click(&confirm);
            }
        }
        app.wait_for(
            "[data-testid=rating-screen] [data-testid=item-number]",
            Duration::from_secs(10),
        );
        app.assert_accessible(&name("rating"));
        assert_states_stand_out(app, &name("rating"));
        for (button, ready, screen) in [
            (
                "help-button",
                "[data-testid=help-overlay][open]",
                "rating-help",
            ),
            ("flag-button", "[data-testid=flag-reason]", "rating-flag"),
            (
                "signoff-button",
                "[data-testid=signoff-dialog][open]",
                "signoff-dialog",
            ),
        ] {
            app.click(&app.wait_for(&format!("[data-testid={button}]"), Duration::from_secs(5)));
            app.wait_for(ready, Duration::from_secs(10));
            app.assert_accessible(&name(screen));
            app.press("\u{E00C}");
            let deadline = Instant::now() + Duration::from_secs(5);
            while app.try_find(ready).is_some() {
                assert!(Instant::now() < deadline, "Esc closes {ready}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        // Back to lead mode for the next language (Change rater, which asks for nothing here).
        app.click(&app.wait_for("[data-testid=switch-rater]", Duration::from_secs(5)));
        app.wait_for("[data-testid=nav-overview]", Duration::from_secs(10));
    }
    emit(app, "menu", "shortcuts");
    app.wait_for("[data-testid=dialog-shortcuts]", Duration::from_secs(5));
    app.assert_accessible(&format!("{theme}-zh-shortcuts"));
}

#[test]
fn every_screen_passes_axe_in_the_light_theme() {
    let dir = tempfile::tempdir().expect("temp dir");
    let app = App::launch(&dir.path().join("axe-light.concord"));
    check_every_screen(&app, "light");

    // Ctrl + zooms the whole window in (fewer CSS pixels across), Ctrl 0 restores it.
    let width = || {
        app.script("return window.innerWidth;", json!([]))
            .as_f64()
            .unwrap_or(0.0)
    };
    let before = width();
    app.click(&app.wait_for("[data-testid=dialog-close]", Duration::from_secs(5)));
    app.chord("\u{E009}", "=");
    app.chord("\u{E009}", "=");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while width() >= before && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let zoomed = width();
    assert!(
        zoomed < before * 0.95,
        "two steps of Ctrl + make the content larger: {before} → {zoomed} CSS px wide"
    );
    app.chord("\u{E009}", "0");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while (width() - before).abs() > 1.0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        (width() - before).abs() <= 1.0,
        "Ctrl 0 returns to 100 %: {} vs {before}",
        width()
    );
}

#[test]
fn the_dark_theme_follows_the_system_and_passes_axe() {
    let dir = tempfile::tempdir().expect("temp dir");
    let app = App::launch_with(
        &dir.path().join("axe-dark.concord"),
        &[("GTK_THEME", "Adwaita:dark")],
    );
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));
    let dark = app.script(
        "return [window.matchMedia('(prefers-color-scheme: dark)').matches, \
         getComputedStyle(document.documentElement).getPropertyValue('--paper').trim()];",
        json!([]),
    );
    assert_eq!(
        dark,
        json!([true, "#151a1b"]),
        "with a dark system theme the window uses the dark palette"
    );
    check_every_screen(&app, "dark");
    app.screenshot("dark-rating");
}

/// A D-Bus session bus of the test's own (single-instance uses the session bus to find the
/// running Concord), stopped on drop.
struct SessionBus {
    daemon: std::process::Child,
    address: String,
}

impl SessionBus {
    fn start() -> SessionBus {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon starts (the README's setup installs it)");
        let mut address = String::new();
        BufReader::new(daemon.stdout.take().expect("dbus-daemon's stdout"))
            .read_line(&mut address)
            .expect("dbus-daemon prints its address");
        let address = address.trim().to_string();
        assert!(!address.is_empty(), "the bus must report its address");
        SessionBus { daemon, address }
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

#[test]
fn a_second_launch_hands_its_file_to_the_running_window() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = dir.path().join("first.concord");
    let second = dir.path().join("second.concord");
    create_demo_at(&second, Arc::new(SystemClock), 4).expect("a second study");
    let bus = SessionBus::start();
    let app = App::launch_with(&first, &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)]);
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));

    // What a double-click does while Concord runs: `concord-app FILE` once more.
    let started = Instant::now();
    let status = Command::new(super::app_binary())
        .arg(&second)
        .env("DISPLAY", app.display_name())
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .env("XDG_DATA_HOME", first.with_extension("webdata"))
        .env("XDG_CONFIG_HOME", first.with_extension("config"))
        .env_remove("CONCORD_STUDY")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the second launch runs");
    assert!(
        status.success() && started.elapsed() < Duration::from_secs(30),
        "the second launch hands its file over and exits ({status:?} after {:?})",
        started.elapsed()
    );
    app.wait_for_attribute(
        "[data-testid=study-path]",
        "data-path",
        &second.display().to_string(),
        Duration::from_secs(15),
    );
    let recent = app.invoke("recent_studies", json!({}));
    let paths: Vec<&str> = recent["ok"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r["path"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        paths.first().copied(),
        Some(second.display().to_string().as_str()),
        "the handed-over study is the most recent one: {recent}"
    );
}
