//! Saves that arrive together, written in one transaction (group commit, what `concord serve`
//! does with many raters): each save is stored, a bad one is refused alone with its own error
//! in its own place, a save that fails after it wrote is rolled back alone — rows, audit events
//! and the audit's view of the rows — and every stored save keeps its own audit entry naming
//! its rater and where it came from, however many share the transaction.

use concord_core::base::clock::SteppingClock;
use concord_core::store::{Occasion, RatingInput, Store, StoreError};
use concord_core::workflow::assignment;
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::queue;
use concord_core::workflow::queue::{QueueError, RatingSave};
use concord_testsupport::lead_study::populate;
use std::sync::Arc;

/// A study of MentalBench answers (seven attributes on 1–5) with `experts`, every answer
/// assigned to every one of them in their own order; the experts' ids in the order given.
fn study_with(experts: &[&str]) -> (Store, Vec<i64>) {
    let mut store = Store::in_memory(Arc::new(SteppingClock::new(1_700_000_000_000, 500)))
        .expect("an in-memory study opens");
    populate(&mut store, 3, experts);
    assignment::assign(&mut store, &AssignmentOptions::new(experts.len(), 3))
        .expect("the lead assigns every answer to every expert");
    let ids = experts
        .iter()
        .map(|name| {
            let id = store
                .expert_by_name(name)
                .expect("the experts read")
                .expect("the expert is in the study")
                .id;
            queue::open_queue(&mut store, id).expect("the expert's queue opens");
            id
        })
        .collect();
    (store, ids)
}

/// The criterion keys of item `item` of the rater's queue.
fn criteria(store: &Store, rater: i64, item: i64) -> Vec<String> {
    scales(store, rater, item)
        .into_iter()
        .map(|(k, _, _)| k)
        .collect()
}

/// The criteria of item `item` with the lowest and highest level of each one's scale.
fn scales(store: &Store, rater: i64, item: i64) -> Vec<(String, i64, i64)> {
    queue::rating_item(store, rater, item)
        .expect("the item is shown")
        .criteria
        .into_iter()
        .map(|c| (c.key, c.scale.min(), c.scale.max()))
        .collect()
}

/// The rater's stored value on `criterion` of item `item`.
fn stored(store: &Store, rater: i64, item: i64, criterion: &str) -> Option<i64> {
    queue::rating_item(store, rater, item)
        .expect("the item is shown")
        .criteria
        .into_iter()
        .find(|c| c.key == criterion)
        .and_then(|c| c.value)
}

fn save(rater_id: i64, item: i64, criterion: &str, value: i64) -> RatingSave {
    RatingSave {
        rater_id,
        item,
        criterion: criterion.to_string(),
        value,
        reason: None,
    }
}

/// The rating entries of the audit trail after entry `after`: (actor, origin).
fn rating_entries(store: &Store, after: i64) -> Vec<(String, String)> {
    store
        .audit_entries(None, None)
        .expect("the audit trail reads")
        .into_iter()
        .filter(|e| e.id > after && e.action.starts_with("rating."))
        .map(|e| {
            (
                e.actor,
                e.detail["origin"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn last_entry(store: &Store) -> i64 {
    store
        .audit_entries(None, None)
        .expect("the audit trail reads")
        .last()
        .map_or(0, |e| e.id)
}

fn chain_holds(store: &Store) {
    let check = store.verify_audit_chain().expect("the chain is read");
    assert_eq!(
        check.broken, None,
        "the audit chain verifies: what it sealed is exactly what the transaction kept"
    );
}

#[test]
fn a_batch_stores_each_save_and_refuses_the_bad_one_alone_with_its_own_error() {
    let (mut store, ids) = study_with(&["Batch rater A", "Batch rater B"]);
    let (a, b) = (ids[0], ids[1]);
    let sa = scales(&store, a, 1);
    let sb = scales(&store, b, 1);
    assert!(sa.len() >= 3, "the item has three criteria to rate: {sa:?}");
    let ca: Vec<String> = sa.iter().map(|(k, _, _)| k.clone()).collect();
    let cb: Vec<String> = sb.iter().map(|(k, _, _)| k.clone()).collect();
    let (a0, b0, a2) = (sa[0].2, sb[0].2, sa[2].1);
    let off = sa[1].2 + 90;
    let before = last_entry(&store);
    let saves = vec![
        save(a, 1, &ca[0], a0),
        save(b, 1, &cb[0], b0),
        save(a, 1, &ca[1], off),
        save(b, 999, &cb[1], 1),
        save(a, 1, &ca[2], a2),
    ];
    let each = queue::rate_each_via(&mut store, "web", &saves)
        .expect("the transaction of the batch commits");
    assert_eq!(each.len(), saves.len(), "one answer per save, in order");
    for i in [0, 1, 4] {
        assert!(
            each[i].is_ok(),
            "save {i} is valid and stored although others of its batch are refused: {:?}",
            each[i]
        );
    }
    match &each[2] {
        Err(QueueError::OffScale {
            criterion, value, ..
        }) => assert!(
            criterion == &ca[1] && *value == off,
            "the off-scale save's error names its own criterion and value ({criterion} {value})"
        ),
        other => panic!("save 2 is off its scale and is refused for it: {other:?}"),
    }
    match &each[3] {
        Err(QueueError::NoSuchItem { item, .. }) => assert_eq!(
            *item, 999,
            "the save on an item outside the queue is refused naming that item"
        ),
        other => panic!("save 3 is on no item of the queue and is refused for it: {other:?}"),
    }
    assert_eq!(
        stored(&store, a, 1, &ca[0]),
        Some(a0),
        "A's first value is in the study"
    );
    assert_eq!(
        stored(&store, b, 1, &cb[0]),
        Some(b0),
        "B's value is in the study"
    );
    assert_eq!(
        stored(&store, a, 1, &ca[2]),
        Some(a2),
        "A's value after the refused one is in the study"
    );
    assert_eq!(
        stored(&store, a, 1, &ca[1]),
        None,
        "the refused value left nothing behind"
    );
    let entries = rating_entries(&store, before);
    assert_eq!(
        entries,
        vec![
            (format!("rater:{a}"), "web".to_string()),
            (format!("rater:{b}"), "web".to_string()),
            (format!("rater:{a}"), "web".to_string()),
        ],
        "each stored save has its own audit entry naming its rater and saying it came from the web; a refused one has none"
    );
    chain_holds(&store);
}

#[test]
fn a_save_that_fails_after_it_wrote_is_rolled_back_alone() {
    let (mut store, ids) = study_with(&["Savepoint rater"]);
    let a = ids[0];
    let response = store
        .assignment_at(a, 0)
        .expect("the queue reads")
        .expect("the queue has a first item")
        .response_id;
    let rubric = store
        .response_rubric(response)
        .expect("the item's rubric reads");
    let ids = store
        .read()
        .criterion_ids(rubric.id)
        .expect("the rubric's criteria read");
    let keys = criteria(&store, a, 1);
    let id_of = |k: &str| *ids.get(k).expect("a criterion of the rubric");
    let before = last_entry(&store);
    let input = |criterion_id: i64| RatingInput {
        rater_id: a,
        response_id: response,
        criterion_id,
        occasion: Occasion::First,
        value: Some(1),
        raw_value: None,
        rationale: None,
        origin: "web",
    };
    let items = [
        (id_of(&keys[0]), false),
        (id_of(&keys[1]), true),
        (id_of(&keys[2]), false),
    ];
    let each = store
        .write_each(items, |tx, (criterion_id, fail_after_writing)| {
            tx.set_rating(&input(criterion_id))?;
            if fail_after_writing {
                return Err(StoreError::Invalid("refused after it wrote".into()));
            }
            Ok(criterion_id)
        })
        .expect("the shared transaction commits");
    assert!(
        each[0].is_ok() && each[2].is_ok(),
        "the saves around the failing one are kept: {each:?}"
    );
    assert!(
        matches!(&each[1], Err(StoreError::Invalid(m)) if m == "refused after it wrote"),
        "the failing save gets its own error back: {:?}",
        each[1]
    );
    assert_eq!(
        stored(&store, a, 1, &keys[1]),
        None,
        "the row the failing save wrote before it failed is rolled back with it"
    );
    assert_eq!(
        (
            stored(&store, a, 1, &keys[0]),
            stored(&store, a, 1, &keys[2])
        ),
        (Some(1), Some(1)),
        "the rows of the other saves of the transaction stay"
    );
    assert_eq!(
        rating_entries(&store, before).len(),
        2,
        "the failing save's audit event is dropped with its rows; the two kept saves have theirs"
    );
    chain_holds(&store);
}

#[test]
fn a_batch_of_more_saves_than_one_audit_entry_bundles_keeps_an_entry_per_save() {
    let (mut store, raters) = study_with(&["Many A", "Many B", "Many C"]);
    let mut saves = Vec::new();
    for &r in &raters {
        let total = queue::open_queue(&mut store, r)
            .expect("the queue opens")
            .total;
        for item in 1..=total {
            for key in criteria(&store, r, item) {
                saves.push(save(r, item, &key, 1));
            }
        }
    }
    let limit = concord_core::store::EVENTS_PER_ENTRY_LIMIT;
    assert!(
        saves.len() > limit,
        "the batch holds more saves ({}) than one transaction's entries are bundled above ({limit})",
        saves.len()
    );
    let before = last_entry(&store);
    let each = queue::rate_each_via(&mut store, "web", &saves)
        .expect("the transaction of the batch commits");
    assert!(
        each.iter().all(Result::is_ok),
        "every save of the batch is valid and stored"
    );
    let entries = rating_entries(&store, before);
    assert_eq!(
        entries.len(),
        saves.len(),
        "every save keeps its own audit entry, none is folded into a batch entry"
    );
    assert!(
        entries.iter().zip(&saves).all(|((actor, origin), s)| actor
            == &format!("rater:{}", s.rater_id)
            && origin == "web"),
        "each entry names its save's rater and the web"
    );
    chain_holds(&store);
}
