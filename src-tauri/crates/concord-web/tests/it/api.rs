//! A rater session over the JSON API: invitation, queue, rating with a rationale, flag, leaving
//! an item, resuming, sign-off; what reaches the study and its audit trail.

use crate::{serve, Browser, HOSTILE};
use concord_testsupport::lead_study::SOURCES;
use concord_testsupport::web::STRONG;

/// The criterion keys of an item as the API answers it.
fn keys(item: &serde_json::Value) -> Vec<String> {
    item["criteria"]
        .as_array()
        .expect("criteria")
        .iter()
        .map(|c| c["key"].as_str().expect("key").to_string())
        .collect()
}

#[test]
fn a_rater_rates_their_queue_from_the_web_and_every_value_is_in_the_study() {
    let (mut served, tokens) = serve(2, &["Ada", "Zoltan"], |_| {});
    let mut web = Browser::new(&served.base);
    let who = web.accept(&tokens[0], STRONG);
    assert_eq!(who["rater_name"], "Ada", "the invitation was for Ada");
    assert_eq!(
        who["idle_minutes"], 15,
        "the idle timeout is the study's idle-lock setting"
    );

    let queue = web.json("/api/queue");
    assert_eq!(
        queue["total"], 9,
        "Ada's queue holds every answer (two conversations × four, and one more)"
    );
    assert_eq!(
        queue["resume_item"], 1,
        "a new queue starts at its first item"
    );

    let item = web.json("/api/items/1");
    let criteria = keys(&item);
    assert_eq!(criteria.len(), 7, "MentalBench has seven attributes");
    let r = web.post(
        "/api/items/1/rationale",
        serde_json::json!({"rationale": "warm but vague"}),
    );
    assert_eq!(r.status(), 200, "the rationale is saved");
    let mut last = serde_json::Value::Null;
    for key in &criteria {
        let r = web.post(
            "/api/items/1/rate",
            serde_json::json!({"criterion": key, "value": 4}),
        );
        assert_eq!(r.status(), 200, "a value on the scale is saved");
        last = r.json().expect("progress");
    }
    assert_eq!(last["complete"], true, "seven values complete the item");
    assert_eq!(last["completed"], 1, "one item of the queue is done");
    let r = web.post(
        "/api/items/2/flag",
        serde_json::json!({"reason": "answer cut off"}),
    );
    assert_eq!(r.status(), 200, "the flag is saved");
    let r = web.post(
        "/api/items/1/leave",
        serde_json::json!({"seconds": 12.5, "next_item": 2}),
    );
    assert_eq!(r.status(), 200, "leaving the item is recorded");
    let off = web.post(
        "/api/items/2/rate",
        serde_json::json!({"criterion": criteria[0], "value": 9}),
    );
    assert_eq!(off.status(), 422, "a value off the 1–5 scale is refused");

    // Another browser of Ada's resumes where she left.
    let mut again = Browser::new(&served.base);
    again.login("Ada", STRONG);
    let queue = again.json("/api/queue");
    assert_eq!(
        queue["resume_item"], 2,
        "a new session resumes at the item after the finished one"
    );
    assert_eq!(queue["completed"], 1, "the finished item counts");
    let item2 = again.json("/api/items/2");
    assert_eq!(item2["flagged"], true, "the flag is on the item");

    served.stop();
    let study = served.open_again();
    let entries = concord_core::app::audit::log(&study, &Default::default()).expect("audit log");
    let web_ratings = entries
        .iter()
        .filter(|e| e.entry.action.starts_with("rating.") && e.entry.detail["origin"] == "web")
        .count();
    assert_eq!(
        web_ratings, 7,
        "each value from the browser is an audit entry with origin web"
    );
    for action in ["web.invited", "web.passphrase_set", "web.login"] {
        assert!(
            entries
                .iter()
                .any(|e| e.entry.action == action && e.entry.detail["via"] == "web"),
            "the audit trail records {action}, saying it came from the web"
        );
    }
    assert!(
        entries
            .iter()
            .any(|e| e.entry.action == "web.login" && e.entry.actor == "Ada"),
        "the login entry names the expert"
    );
    let check = concord_core::app::audit::verify(&study, None, false).expect("verify");
    assert!(
        check.broken.is_none(),
        "the chain verifies after web writes: {check:?}"
    );
}

#[test]
fn the_api_shows_no_source_model_judge_or_other_rater() {
    let (_served, tokens) = serve(2, &["Ada", "Zoltan"], |_| {});
    let mut web = Browser::new(&_served.base);
    web.accept(&tokens[0], STRONG);
    let queue = web.json("/api/queue");
    let total = queue["total"].as_i64().expect("total");
    let mut hostile_seen = false;
    for n in 1..=total {
        let r = web.get(&format!("/api/items/{n}"));
        assert_eq!(r.status(), 200, "each of Ada's items opens");
        let text = r.text().expect("body");
        for (key, name) in SOURCES {
            assert!(
                !text.contains(name) && !text.contains(&format!("\"{key}\"")),
                "item {n} names no source or model ({name})"
            );
        }
        assert!(!text.contains("gpt-4o-judge"), "item {n} names no judge");
        assert!(!text.contains("Zoltan"), "item {n} names no other rater");
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        if v["answer"] == HOSTILE {
            hostile_seen = true;
        }
    }
    assert!(
        hostile_seen,
        "the hostile answer is one of Ada's items, as a JSON string"
    );
}

#[test]
fn signing_off_from_the_web_locks_the_values_as_on_the_desktop() {
    let (_served, tokens) = serve(1, &["Ada"], |_| {});
    let mut web = Browser::new(&_served.base);
    web.accept(&tokens[0], STRONG);
    web.json("/api/queue");
    let item = web.json("/api/items/1");
    let criteria = keys(&item);
    for key in &criteria {
        web.post(
            "/api/items/1/rate",
            serde_json::json!({"criterion": key, "value": 2}),
        );
    }
    let state = web.post(
        "/api/signoff/passphrase",
        serde_json::json!({"passphrase": "sign here 2024 please", "current": null}),
    );
    assert_eq!(state.status(), 200, "the signing passphrase is set");
    let signed = web.post(
        "/api/signoff",
        serde_json::json!({"passphrase": "sign here 2024 please"}),
    );
    assert_eq!(signed.status(), 200, "the expert signs their ratings");
    let state: serde_json::Value = signed.json().expect("state");
    assert_eq!(
        state["signatures"].as_array().map(Vec::len),
        Some(1),
        "one signature"
    );
    _served.clock.advance(1_000);
    let change = web.post(
        "/api/items/1/rate",
        serde_json::json!({"criterion": criteria[0], "value": 3}),
    );
    assert_eq!(
        change.status(),
        409,
        "a signed value changes only with a reason"
    );
    let reasoned = web.post(
        "/api/items/1/rate",
        serde_json::json!({"criterion": criteria[0], "value": 3, "reason": "misread the answer"}),
    );
    assert_eq!(reasoned.status(), 200, "with a reason it changes");
    let item = web.json("/api/items/1");
    assert_eq!(
        item["criteria"][0]["changed_after_signature"], true,
        "the screen says the value changed after signature"
    );
}

#[test]
fn a_restarted_server_carries_a_session_on_with_its_csrf_token() {
    let (mut served, tokens) = serve(1, &["Ada"], |_| {});
    let mut web = Browser::new(&served.base);
    web.accept(&tokens[0], STRONG);
    web.json("/api/queue");
    let key = web.json("/api/items/1")["criteria"][0]["key"]
        .as_str()
        .expect("key")
        .to_string();
    let ui = served.dir.path().join("ui");
    served.restart(&ui);
    web.base = served.base.clone();
    let r = web.post(
        "/api/items/1/rate",
        serde_json::json!({"criterion": key, "value": 5}),
    );
    assert_eq!(
        r.status(),
        200,
        "the page's cookie and CSRF token still work after a restart"
    );
    let again = web.json("/api/session");
    assert_eq!(
        again["csrf"],
        web.csrf.clone().expect("csrf").as_str(),
        "the CSRF token is the same"
    );
    served.clock.advance(16 * 60_000);
    served.restart(&ui);
    assert_eq!(
        web.get("/api/queue").status(),
        401,
        "a session idle past the timeout does not come back"
    );
    let study = served.open_again();
    let kept = concord_core::app::web::kept_session(&study, web.cookie.as_deref().expect("cookie"))
        .expect("read");
    assert!(kept.is_none(), "and the study no longer keeps it");
}
