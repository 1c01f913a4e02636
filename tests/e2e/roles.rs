//! Rater sessions in the real window: a study locked to its experts behind a lead passphrase opens
//! on its picker; once an expert picks their profile the window shows only the rating screen, every
//! other command called from the page is refused (by Tauri's capabilities when the process never
//! was in lead mode, by the shell's own guard when it was), a rating sent with another expert's id
//! lands under the session's expert, a relaunch returns to the same session, and only the lead's
//! passphrase opens lead mode again.

use super::App;
use concord_app::session::{LEAD_COMMANDS, PICKER_COMMANDS};
use concord_core::base::clock::SystemClock;
use concord_core::intake::demo::create_demo_at;
use concord_core::store::Store;
use concord_core::workflow::queue;
use concord_core::workflow::rater_session;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const LEAD: &str = "lead passphrase 1";
const NAV: [&str; 6] = [
    "nav-overview",
    "nav-agreement",
    "nav-setup",
    "nav-judges",
    "nav-adjudicate",
    "nav-raters",
];

/// Call `command` from the page with `args`: `{"ok": value}` or `{"err": what was thrown}`.
fn invoke(app: &App, command: &str, args: Value) -> Value {
    app.script_async(
        "const done = arguments[arguments.length - 1];
         window.__TAURI_INTERNALS__.invoke(arguments[0], arguments[1])
           .then(v => done({ ok: v === undefined ? null : v }), e => done({ err: e }));",
        json!([command, args]),
    )
}

/// Every lead and picker command, called from the page, is refused without running: the picker's
/// by the shell (the rater capability holds them, for the picker), the lead's by Tauri's ACL when
/// the process never was in lead mode, else by the shell.
fn probe_every_other_command(app: &App, by_acl: bool) {
    for command in LEAD_COMMANDS.iter().chain(PICKER_COMMANDS) {
        if *command == "start_rater_session" {
            continue; // probed with an expert id: a switch of expert is refused
        }
        let answer = invoke(app, command, json!({}));
        let err = answer
            .get("err")
            .unwrap_or_else(|| panic!("{command} answered a rater session: {answer}"));
        let refused_by_shell = err["code"] == "rater_session";
        let refused_by_tauri = err.as_str().is_some_and(|m| m.contains("not allowed"));
        if PICKER_COMMANDS.contains(command) {
            assert!(
                refused_by_shell,
                "the shell refuses the picker's {command}: {err}"
            );
        } else if by_acl {
            assert!(
                refused_by_tauri,
                "a process never in lead mode holds no lead capability: {command} → {err}"
            );
        } else {
            assert!(
                refused_by_shell || refused_by_tauri,
                "{command} must be refused as a lead command, not fail on its arguments: {err}"
            );
        }
    }
}

fn nav_absent(app: &App) {
    for nav in NAV {
        assert!(
            app.try_find(&format!("[data-testid={nav}]")).is_none(),
            "a rater session shows no {nav}"
        );
    }
}

fn experts(study: &Path) -> Vec<(i64, String)> {
    let store = Store::open(study, Arc::new(SystemClock)).expect("the study opens");
    queue::profiles(&store)
        .expect("profiles")
        .profiles
        .into_iter()
        .map(|p| (p.id, p.name))
        .collect()
}

#[test]
fn a_rater_session_reaches_only_its_own_queue_by_the_ui_or_by_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("locked.concord");
    {
        let mut store = create_demo_at(&study, Arc::new(SystemClock), 5).expect("demo study");
        rater_session::lock_profiles(&mut store, LEAD, 3, 1_000).expect("the lead locks it");
    }
    let people = experts(&study);
    assert!(people.len() >= 2, "the demo has two experts");

    // A locked study opens on its picker: no lead screen, no lead command.
    let app = App::launch(&study);
    app.wait_for("[data-testid=rater-picker]", Duration::from_secs(60));
    nav_absent(&app);
    assert!(
        app.try_find("[data-testid=study-title]").is_none(),
        "the picker of a locked study is not lead mode"
    );
    let overview = invoke(&app, "study_overview", json!({}));
    assert!(
        overview.get("err").is_some(),
        "the picker cannot read the study overview: {overview}"
    );

    // The expert picks their profile: the rating screen only.
    let first = app.wait_for("[data-testid=profile]", Duration::from_secs(10));
    app.click(&first);
    app.wait_for("[data-testid=rating-screen]", Duration::from_secs(30));
    nav_absent(&app);
    let me_name = app.text_of("[data-testid=session-rater] bdi");
    let me = people
        .iter()
        .find(|(_, n)| *n == me_name)
        .unwrap_or_else(|| panic!("the header names the session's expert: {me_name}"))
        .0;
    let other = people
        .iter()
        .find(|(id, _)| *id != me)
        .expect("another expert")
        .0;
    probe_every_other_command(&app, true);
    let switch = invoke(&app, "start_rater_session", json!({ "raterId": other }));
    assert_eq!(
        switch["err"]["code"], "rater_session",
        "a session cannot switch itself to another expert: {switch}"
    );

    // A rating sent with another expert's id lands under the session's expert.
    let before_other = {
        let store = Store::open(&study, Arc::new(SystemClock)).unwrap();
        format!("{:?}", store.assigned_values(other).unwrap())
    };
    let item = invoke(&app, "rating_item", json!({ "raterId": other, "item": 1 }));
    let criterion = item["ok"]["criteria"][0].clone();
    let key = criterion["key"].as_str().expect("a criterion").to_string();
    let max = criterion["scale"]["max"].as_i64().unwrap_or(1);
    let rated = invoke(
        &app,
        "rate",
        json!({ "raterId": other, "item": 1, "criterion": key, "value": max }),
    );
    assert!(
        rated.get("ok").is_some(),
        "the session's own rating saves: {rated}"
    );
    {
        let store = Store::open(&study, Arc::new(SystemClock)).unwrap();
        let mine = queue::rating_item(&store, me, 1).expect("the session's item 1");
        assert_eq!(
            mine.criteria
                .iter()
                .find(|c| c.key == key)
                .and_then(|c| c.value),
            Some(max),
            "the value lands under the session's expert"
        );
        assert_eq!(
            format!("{:?}", store.assigned_values(other).unwrap()),
            before_other,
            "the other expert's ratings are untouched"
        );
    }
    app.screenshot("rater-session");
    drop(app);

    // A relaunch returns to the same session; the process never held a lead capability.
    let app = App::launch(&study);
    app.wait_for("[data-testid=rating-screen]", Duration::from_secs(60));
    nav_absent(&app);
    assert_eq!(
        app.text_of("[data-testid=session-rater] bdi"),
        me_name,
        "the relaunch is the same expert's session"
    );
    probe_every_other_command(&app, true);

    // Leaving needs the lead's passphrase.
    let exit = app.wait_for("[data-testid=switch-rater]", Duration::from_secs(5));
    app.click(&exit);
    let field = app.wait_for("[data-testid=lead-passphrase]", Duration::from_secs(5));
    app.type_into(&field, "not the lead\u{E007}");
    let refused = app.wait_for("[data-testid=lead-error]", Duration::from_secs(10));
    app.assert_accessible("lead-passphrase-refused");
    assert!(
        !app.text(&refused).is_empty(),
        "a wrong lead passphrase is refused in the window"
    );
    nav_absent(&app);
    let field = app.wait_for("[data-testid=lead-passphrase]", Duration::from_secs(5));
    app.type_into(&field, &format!("{LEAD}\u{E007}"));
    app.wait_for("[data-testid=nav-agreement]", Duration::from_secs(30));
    let overview = invoke(&app, "study_overview", json!({}));
    assert!(
        overview.get("ok").is_some(),
        "lead mode reads the overview: {overview}"
    );

    // The same process picks an expert again: Tauri cannot withdraw the lead capability it
    // granted, so the shell's own guard refuses.
    let rate = app.wait_for("[data-testid=nav-rate]", Duration::from_secs(5));
    app.click(&rate);
    let first = app.wait_for("[data-testid=profile]", Duration::from_secs(10));
    app.click(&first);
    app.wait_for("[data-testid=rating-screen]", Duration::from_secs(30));
    nav_absent(&app);
    for command in [
        "study_overview",
        "agreement_report",
        "setup_add_expert",
        "judge_start",
    ] {
        let answer = invoke(&app, command, json!({}));
        assert_eq!(
            answer["err"]["code"], "rater_session",
            "the shell refuses {command} in a rater session: {answer}"
        );
    }
}
