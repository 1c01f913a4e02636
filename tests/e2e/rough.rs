//! The rough edges of an hour of rating, in the real window: a mistyped new profile is confirmed
//! before it is created, and an empty queue has a way back to the rater list that a relaunch does
//! not forget; a flag's reason is shown again on the item.

use super::App;
use concord_core::assignment::AssignmentOptions;
use concord_core::clock::SystemClock;
use concord_core::demo::create_demo_at;
use concord_core::open_study::OpenStudy;
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
        s.assign(&AssignmentOptions::new(1, 42))
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
