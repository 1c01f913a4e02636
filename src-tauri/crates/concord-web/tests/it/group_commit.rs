//! Many raters saving at once: the server writes the values that arrive together in one
//! transaction and answers each only after that commit. Every value acknowledged is in the study
//! file — seen at once by another connection, and after the server stops — with its own audit
//! entry; a refused value is refused alone; a commit that fails is never acknowledged.

use crate::{open_study, serve, serve_study, Browser};
use concord_testsupport::web::STRONG;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

/// The criterion keys of item `item` as the API shows it.
fn keys(web: &mut Browser, item: i64) -> Vec<String> {
    web.json(&format!("/api/items/{item}"))["criteria"]
        .as_array()
        .expect("the item lists its criteria")
        .iter()
        .map(|c| c["key"].as_str().expect("a criterion key").to_string())
        .collect()
}

/// The value `rater` has on `criterion` of item `item`, read from `study`.
fn stored(
    study: &concord_core::app::open_study::OpenStudy,
    rater: i64,
    item: i64,
    criterion: &str,
) -> Option<i64> {
    concord_core::app::rating::rating_item(study, rater, item)
        .expect("the item reads from the study file")
        .criteria
        .into_iter()
        .find(|c| c.key == criterion)
        .and_then(|c| c.value)
}

/// What one rater's browser saw: the values acknowledged and the refusals, as (item, key, value).
struct Saw {
    rater: i64,
    acknowledged: Vec<(i64, String, i64)>,
    refused: Vec<(i64, String, i64)>,
    /// Acknowledged values another connection did not find at once.
    not_found_at_once: Vec<(i64, String, i64)>,
}

#[test]
fn several_raters_saving_at_once_find_every_acknowledged_value_in_the_file() {
    const RATERS: usize = 6;
    const ITEMS: i64 = 3;
    let names: Vec<String> = (1..=RATERS).map(|i| format!("Rater {i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (mut served, tokens) = serve(2, &refs, |_| {});
    let start = Arc::new(Barrier::new(RATERS));
    let threads: Vec<_> = tokens
        .into_iter()
        .enumerate()
        .map(|(r, token)| {
            let base = served.base.clone();
            let path = served.study.clone();
            let clock = served.clock.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                let mut web = Browser::new(&base);
                let rater = web.accept(&token, STRONG)["rater_id"]
                    .as_i64()
                    .expect("the session names its rater");
                let cells: Vec<(i64, String)> = (1..=ITEMS)
                    .flat_map(|item| {
                        keys(&mut web, item)
                            .into_iter()
                            .map(move |k| (item, k))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                // Another connection to the study file, as the desktop app would hold one.
                let reader = open_study(&path, clock);
                let mut saw = Saw {
                    rater,
                    acknowledged: Vec::new(),
                    refused: Vec::new(),
                    not_found_at_once: Vec::new(),
                };
                start.wait();
                for (n, (item, key)) in cells.iter().enumerate() {
                    // Every fifth save is off the 1–5 scale, interleaved with the others' saves.
                    let off_scale = (n + r) % 5 == 0;
                    let value = if off_scale { 99 } else { 1 + ((n + r) % 5) as i64 };
                    let answer = web.post(
                        &format!("/api/items/{item}/rate"),
                        serde_json::json!({"criterion": key, "value": value}),
                    );
                    let status = answer.status();
                    let body: serde_json::Value = answer.json().expect("a JSON answer");
                    if off_scale {
                        assert_eq!(
                            (status.as_u16(), body["code"].as_str()),
                            (422, Some("off_scale")),
                            "an off-scale value is refused with its own error: {body}"
                        );
                        assert!(
                            body["message"]
                                .as_str()
                                .is_some_and(|m| m.contains(key.as_str()) && m.contains("99")),
                            "the refusal names the value's own criterion and value: {body}"
                        );
                        saw.refused.push((*item, key.clone(), value));
                        continue;
                    }
                    assert_eq!(
                        status, 200,
                        "a value on the scale is saved although other raters' saves in the same commit are refused: {body}"
                    );
                    if stored(&reader, rater, *item, key) != Some(value) {
                        saw.not_found_at_once.push((*item, key.clone(), value));
                    }
                    saw.acknowledged.push((*item, key.clone(), value));
                }
                saw
            })
        })
        .collect();
    let seen: Vec<Saw> = threads
        .into_iter()
        .map(|t| t.join().expect("a rater's browser finishes"))
        .collect();
    for saw in &seen {
        assert!(
            saw.not_found_at_once.is_empty(),
            "an acknowledged value is committed: another connection finds it at once (rater {}, not found: {:?})",
            saw.rater,
            saw.not_found_at_once
        );
    }
    served.stop();

    let study = served.open_again();
    let mut missing = Vec::new();
    for saw in &seen {
        for (item, key, value) in &saw.acknowledged {
            if stored(&study, saw.rater, *item, key) != Some(*value) {
                missing.push((saw.rater, *item, key.clone(), *value));
            }
        }
        for (item, key, _) in &saw.refused {
            assert_eq!(
                stored(&study, saw.rater, *item, key),
                None,
                "a refused value left nothing in the study (rater {}, item {item}, {key})",
                saw.rater
            );
        }
    }
    let acknowledged: usize = seen.iter().map(|s| s.acknowledged.len()).sum();
    assert!(
        missing.is_empty(),
        "every acknowledged value is in the study file ({} of {acknowledged} missing: {missing:?})",
        missing.len()
    );
    let entries =
        concord_core::app::audit::log(&study, &Default::default()).expect("the audit trail reads");
    for saw in &seen {
        let own = entries
            .iter()
            .filter(|e| {
                e.entry.action == "rating.enter"
                    && e.entry.actor == format!("rater:{}", saw.rater)
                    && e.entry.detail["origin"] == "web"
            })
            .count();
        assert_eq!(
            own,
            saw.acknowledged.len(),
            "each acknowledged save of rater {} has its own audit entry naming the rater and the web",
            saw.rater
        );
    }
    let check = concord_core::app::audit::verify(&study, None, false).expect("verify");
    assert!(
        check.broken.is_none(),
        "the audit chain verifies after saves committed in groups: {check:?}"
    );
}

#[test]
fn a_save_is_not_acknowledged_before_its_commit() {
    let refuse = Arc::new(AtomicBool::new(false));
    let hook = refuse.clone();
    let (mut served, tokens) = serve_study(
        1,
        &["Ada"],
        move |study| study.store_mut().refuse_commits_while(hook),
        |_| {},
    );
    let mut web = Browser::new(&served.base);
    let rater = web.accept(&tokens[0], STRONG)["rater_id"]
        .as_i64()
        .expect("the session names its rater");
    // A lone expert's queue is made when it is first opened.
    web.json("/api/queue");
    let criteria = keys(&mut web, 1);

    // Every commit fails from now on: a save that waits for its commit gets the failure.
    refuse.store(true, Ordering::SeqCst);
    let answer = web.post(
        "/api/items/1/rate",
        serde_json::json!({"criterion": criteria[0], "value": 3}),
    );
    let status = answer.status();
    let body: serde_json::Value = answer.json().expect("a JSON answer");
    assert_eq!(
        (status.as_u16(), body["code"].as_str()),
        (500, Some("database")),
        "a save whose commit failed is answered with the failure, never acknowledged: {body}"
    );
    // Several at once share the failed commit: none of them is acknowledged either.
    let together: Vec<_> = criteria[1..4]
        .iter()
        .map(|key| {
            let mut other = Browser {
                client: web.client.clone(),
                base: web.base.clone(),
                cookie: web.cookie.clone(),
                csrf: web.csrf.clone(),
            };
            let key = key.clone();
            std::thread::spawn(move || {
                other
                    .post(
                        "/api/items/1/rate",
                        serde_json::json!({"criterion": key, "value": 2}),
                    )
                    .status()
            })
        })
        .collect();
    for t in together {
        let status = t.join().expect("a save finishes");
        assert_eq!(
            status, 500,
            "a save sharing a failed commit is answered with the failure"
        );
    }

    refuse.store(false, Ordering::SeqCst);
    let answer = web.post(
        "/api/items/1/rate",
        serde_json::json!({"criterion": criteria[4], "value": 4}),
    );
    assert_eq!(
        answer.status(),
        200,
        "once commits succeed again the next save is acknowledged"
    );
    served.stop();

    let study = served.open_again();
    for key in &criteria[..4] {
        assert_eq!(
            stored(&study, rater, 1, key),
            None,
            "a value whose commit failed is not in the study ({key})"
        );
    }
    assert_eq!(
        stored(&study, rater, 1, &criteria[4]),
        Some(4),
        "the value acknowledged after the failure is in the study"
    );
    let check = concord_core::app::audit::verify(&study, None, false).expect("verify");
    assert!(
        check.broken.is_none(),
        "the audit chain verifies after a failed commit: {check:?}"
    );
}
