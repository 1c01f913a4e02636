//! Journeys of an encrypted study in the real window: it opens only through the unlock screen (a
//! wrong passphrase is refused there), and the idle lock — set to seconds for the test — hides the
//! study mid-item, drops it in the shell (its commands answer "passphrase needed"), keeps the
//! rationale being typed, and unlocking returns the expert to the same item. And a plain study
//! encrypted from its overview: the passphrase is typed twice, a repeat that differs is refused
//! beside the repeat field (naming it) and encrypts nothing.

use super::App;
use concord_core::base::clock::SystemClock;
use concord_core::intake::demo::create_demo_with;
use concord_core::store::Passphrase;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

const ENTER: &str = "\u{E007}";
const PASS: &str = "window test passphrase";

fn current_item(app: &App) -> i64 {
    let e = app.wait_for("[data-testid=item-number]", Duration::from_secs(10));
    app.attribute(&e, "data-item")
        .and_then(|v| v.parse().ok())
        .expect("the item number is on the screen")
}

fn unlock_with(app: &App, passphrase: &str) {
    let input = app.wait_for("[data-testid=unlock-passphrase]", Duration::from_secs(30));
    app.clear(&input);
    app.type_into(&input, passphrase);
    let submit = app.wait_for("[data-testid=unlock-submit]", Duration::from_secs(5));
    app.click(&submit);
}

#[test]
fn an_encrypted_study_opens_through_the_unlock_screen_and_the_idle_lock_returns_to_the_same_item() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("locked.concord");
    let pass = Passphrase::new(PASS).unwrap();
    drop(create_demo_with(&study, Arc::new(SystemClock), 7, Some(&pass)).expect("demo study"));
    let app = App::launch_with(&study, &[("CONCORD_IDLE_LOCK_SECONDS", "8")]);

    app.wait_for("[data-testid=unlock-screen]", Duration::from_secs(60));
    assert!(
        app.try_find("[data-testid=overview]").is_none(),
        "nothing of the study shows before it is unlocked"
    );
    unlock_with(&app, "not the passphrase");
    let refused = app.text_of("[data-testid=unlock-error]");
    assert!(
        refused.contains("passphrase"),
        "a wrong passphrase is refused on the unlock screen: {refused}"
    );
    unlock_with(&app, PASS);
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));
    let state = app.text_of("[data-testid=security-state]");
    assert!(
        state.contains("encrypted"),
        "the study screen says the study is encrypted: {state}"
    );

    // Rate two items by keyboard, then start a rationale on the third and stop touching anything.
    let rate = app.wait_for("[data-testid=nav-rate]", Duration::from_secs(5));
    app.click(&rate);
    let input = app.wait_for("[data-testid=new-profile]", Duration::from_secs(10));
    app.click(&input);
    app.type_into(&input, &format!("Locked expert{ENTER}"));
    let confirm = app.wait_for("[data-testid=confirm-profile]", Duration::from_secs(10));
    app.click(&confirm);
    for _ in 0..2 {
        let item = current_item(&app);
        let n = app.find_all("[data-testid=criterion]").len();
        app.press(&format!("{}{ENTER}", "1".repeat(n)));
        app.wait_for_attribute(
            "[data-testid=item-number]",
            "data-item",
            &(item + 1).to_string(),
            Duration::from_secs(10),
        );
    }
    assert_eq!(current_item(&app), 3, "two items rated, the third shown");
    let rationale = app.wait_for("[data-testid=rationale]", Duration::from_secs(5));
    app.type_into(&rationale, "half a thought");

    let locked = app.wait_for("[data-testid=locked-idle]", Duration::from_secs(40));
    assert!(
        !app.text(&locked).is_empty(),
        "the unlock screen says the study was locked for being idle"
    );
    assert!(
        app.try_find("[data-testid=rating-screen]").is_none()
            && app.try_find("[data-testid=study-title]").is_none(),
        "the rating screen and the study's name are gone from the window while locked"
    );
    let answer = app.script_async(
        "const done = arguments[arguments.length - 1];
         window.__TAURI_INTERNALS__.invoke('open_queue')
           .then(() => done('open'), (e) => done(e.code));",
        json!([]),
    );
    assert_eq!(
        answer,
        json!("passphrase_needed"),
        "the shell dropped the study: its commands need the passphrase again"
    );
    app.screenshot("idle-locked");

    unlock_with(&app, PASS);
    app.wait_for("[data-testid=rating-screen]", Duration::from_secs(30));
    assert_eq!(
        current_item(&app),
        3,
        "unlocking returns the expert to the item they were on"
    );
    let kept = app.script(
        "return document.querySelector('[data-testid=rationale]').value;",
        json!([]),
    );
    assert_eq!(
        kept,
        json!("half a thought"),
        "the rationale typed before the lock was saved and is back"
    );
}

#[test]
fn the_lead_types_the_study_passphrase_twice_and_a_mismatch_is_said_beside_the_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("plain.concord");
    drop(
        concord_core::intake::demo::create_demo_at(&study, Arc::new(SystemClock), 3)
            .expect("a plain demo study"),
    );
    let app = App::launch(&study);
    app.click(&app.wait_for("[data-testid=encrypt-study]", Duration::from_secs(30)));
    let new = app.wait_for("[data-testid=new-passphrase]", Duration::from_secs(5));
    app.type_into(&new, PASS);
    let repeat = app.wait_for("[data-testid=repeat-passphrase]", Duration::from_secs(5));
    app.type_into(&repeat, "window test passphrasf");
    app.click(&app.wait_for("[data-testid=passphrase-apply]", Duration::from_secs(5)));
    let said = app.wait_for("[data-testid=security-mismatch]", Duration::from_secs(5));
    assert!(
        app.text(&said).contains("Repeat the new passphrase"),
        "the refusal names the field that differs: {:?}",
        app.text(&said)
    );
    assert_eq!(
        app.attribute(&repeat, "aria-invalid").as_deref(),
        Some("true"),
        "the repeat field is marked invalid for assistive technology"
    );
    app.assert_accessible("encrypt-with-a-mismatch");
    assert!(
        !concord_core::store::is_encrypted(&study).unwrap(),
        "a mismatch encrypts nothing"
    );
    app.clear(&repeat);
    app.type_into(&repeat, PASS);
    assert!(
        app.try_find("[data-testid=security-mismatch]").is_none(),
        "retyping the repeat takes the note away"
    );
    app.click(&app.wait_for("[data-testid=passphrase-apply]", Duration::from_secs(5)));
    app.wait_for("[data-testid=security-done]", Duration::from_secs(60));
    assert!(
        concord_core::store::is_encrypted(&study).unwrap(),
        "typed twice alike, the passphrase encrypts the study"
    );
}
