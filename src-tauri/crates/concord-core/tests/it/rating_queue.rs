//! The rating screen's queue: blinded payloads, solo queues in a seeded order, durable values with
//! history, resume where the rater left, restricted profiles, retest items kept apart.

use concord_core::base::clock::SteppingClock;
use concord_core::base::error_code::Coded;
use concord_core::intake::demo::demo_study;
use concord_core::intake::demo::populate_demo;
use concord_core::store::Store;
use concord_core::workflow::queue;
use concord_core::workflow::queue::QueueError;
use std::sync::Arc;

fn demo_store() -> Store {
    demo_store_and_clock().0
}

/// [`demo_store`] with its clock, which the test moves on as time passes on the screen.
fn demo_store_and_clock() -> (Store, Arc<SteppingClock>) {
    let clock = Arc::new(SteppingClock::new(1_700_000_000_000, 500));
    let mut store = Store::in_memory(clock.clone()).unwrap();
    populate_demo(&mut store, 11).unwrap();
    (store, clock)
}

fn expert(store: &mut Store, name: &str) -> i64 {
    queue::create_profile(store, name, 99).unwrap().id
}

#[test]
fn rating_screen_payloads_never_name_sources_models_or_other_ratings() {
    let mut store = demo_store();
    let demo = demo_study().unwrap();
    let me = expert(&mut store, "Blind rater");
    let summary = queue::open_queue(&mut store, me).unwrap();
    let mut forbidden: Vec<String> = Vec::new();
    for s in &demo.sources {
        forbidden.push(s.key.clone());
        forbidden.push(s.name.clone());
        forbidden.extend(s.family.clone());
    }
    for r in &demo.raters {
        forbidden.push(r.name.clone());
        forbidden.extend(r.model_id.clone());
    }
    for item in 1..=summary.total {
        let payload =
            serde_json::to_string(&queue::rating_item(&store, me, item).unwrap()).unwrap();
        for word in &forbidden {
            assert!(
                !payload.contains(&format!("\"{word}\""))
                    && !payload.contains(&format!(": \"{word}")),
                "item {item} payload leaks {word:?}: {payload}"
            );
        }
        let value: serde_json::Value = serde_json::from_str(&payload).unwrap();
        let mut keys = Vec::new();
        collect_keys(&value, &mut keys);
        for key in keys {
            for banned in ["source", "model", "judge", "family", "rater", "response_id"] {
                assert!(
                    !key.contains(banned),
                    "the item type must have no {banned} field at all, found {key:?}"
                );
            }
        }
    }
    let mut keys = Vec::new();
    collect_keys(&serde_json::to_value(&summary).unwrap(), &mut keys);
    assert!(
        keys.iter()
            .all(|k| !k.contains("source") && !k.contains("judge")),
        "the queue summary is blind too: {keys:?}"
    );
}

fn collect_keys(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                out.push(k.clone());
                collect_keys(v, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| collect_keys(v, out)),
        _ => {}
    }
}

#[test]
fn a_solo_rater_gets_every_response_in_a_seeded_order() {
    let mut a = demo_store();
    let mut b = demo_store();
    let ra = expert(&mut a, "Solo");
    let rb = expert(&mut b, "Solo");
    let qa = queue::open_queue(&mut a, ra).unwrap();
    let qb = queue::open_queue(&mut b, rb).unwrap();
    let responses = a.overview().unwrap().responses;
    assert_eq!(
        qa.total, responses,
        "a solo rater rates every response of the study"
    );
    let contexts = |s: &mut Store, r: i64, n: i64| -> Vec<String> {
        (1..=n)
            .map(|i| {
                let it = queue::rating_item(s, r, i).unwrap();
                format!("{}|{}", it.context, it.answer.unwrap_or_default())
            })
            .collect()
    };
    let order_a = contexts(&mut a, ra, qa.total);
    let order_b = contexts(&mut b, rb, qb.total);
    assert_eq!(
        order_a, order_b,
        "the same stored seed gives the same order"
    );
    let mut by_conversation = order_a.clone();
    by_conversation.sort();
    assert_ne!(
        order_a, by_conversation,
        "the order is shuffled, not the import order"
    );
    let again = queue::open_queue(&mut a, ra).unwrap();
    assert_eq!(
        again.total, qa.total,
        "reopening the queue does not assign twice"
    );
}

#[test]
fn values_are_durable_revisable_and_complete_items() {
    let mut store = demo_store();
    let me = expert(&mut store, "Durable");
    queue::open_queue(&mut store, me).unwrap();
    let item = queue::rating_item(&store, me, 1).unwrap();
    let n = item.criteria.len() as i64;
    let first = &item.criteria[0];
    let hi = first.scale.max();
    let lo = first.scale.min();
    let p = queue::rate(&mut store, me, 1, &first.key, hi).unwrap();
    assert_eq!(p.missing, n - 1, "one criterion rated, the rest missing");
    assert!(
        !p.complete,
        "an item is complete only when every criterion has a value"
    );
    queue::rate(&mut store, me, 1, &first.key, lo).unwrap();
    let shown = queue::rating_item(&store, me, 1).unwrap();
    assert_eq!(
        shown.criteria[0].value,
        Some(lo),
        "the revision is the current value"
    );
    for c in &item.criteria[1..] {
        queue::rate(&mut store, me, 1, &c.key, c.scale.min()).unwrap();
    }
    let s = queue::open_queue(&mut store, me).unwrap();
    assert_eq!(s.completed, 1, "the item counts as completed");
    let err = queue::rate(&mut store, me, 1, &first.key, hi + 1).unwrap_err();
    assert!(
        matches!(err, QueueError::OffScale { .. }),
        "off-scale keys are refused: {err}"
    );
    let err = queue::rate(&mut store, me, s.total + 1, &first.key, hi).unwrap_err();
    assert!(
        matches!(err, QueueError::NoSuchItem { .. }),
        "items past the end are refused: {err}"
    );
}

#[test]
fn the_queue_resumes_where_the_rater_left() {
    let (mut store, clock) = demo_store_and_clock();
    let me = expert(&mut store, "Resumer");
    let s = queue::open_queue(&mut store, me).unwrap();
    assert_eq!(s.resume_item, 1, "a new queue starts at the first item");
    rate_all(&mut store, me, 1);
    clock.advance(12_500);
    queue::leave_item(&mut store, me, 1, 12.5, 2).unwrap();
    rate_all(&mut store, me, 2);
    clock.advance(3_000);
    queue::leave_item(&mut store, me, 2, 3.0, 4).unwrap();
    let s = queue::open_queue(&mut store, me).unwrap();
    assert_eq!(
        s.resume_item, 3,
        "the reopened queue starts at the first unfinished item (3, jumped over), not where the \
         rater stood (4)"
    );
    rate_all(&mut store, me, 3);
    queue::leave_item(&mut store, me, 3, 1.0, 4).unwrap();
    let s = queue::open_queue(&mut store, me).unwrap();
    assert_eq!(
        s.resume_item, 4,
        "with items 1–3 done the first unfinished item is where the rater stood"
    );
    let log = queue::shown_log(&store, me).unwrap();
    let shown: Vec<Option<i64>> = log.iter().take(4).map(|l| l.first_shown_at).collect();
    assert!(
        (log[0].seconds_spent - 12.5).abs() < 1e-9 && (log[1].seconds_spent - 3.0).abs() < 1e-9,
        "time on each item is recorded: {log:?}"
    );
    assert!(
        shown[0].is_some() && shown[1].is_some() && shown[3].is_some(),
        "shown items are recorded: {shown:?}"
    );
    assert!(
        shown[2].is_some(),
        "item 3, jumped over, was shown when the reopened queue started there: {shown:?}"
    );
}

/// Every criterion of `item` rated at its scale's minimum.
fn rate_all(store: &mut Store, rater: i64, item: i64) {
    let it = queue::rating_item(store, rater, item).unwrap();
    for c in &it.criteria {
        queue::rate(store, rater, item, &c.key, c.scale.min()).unwrap();
    }
}

#[test]
fn skipped_and_flagged_items_are_listed_for_the_end_of_the_queue() {
    let mut store = demo_store();
    let me = expert(&mut store, "Skipper");
    let total = queue::open_queue(&mut store, me).unwrap().total;
    assert!(total >= 4, "the demo queue has items to skip ({total})");
    for item in 1..=total {
        if item != 2 {
            rate_all(&mut store, me, item);
        }
    }
    queue::flag_item(&mut store, me, 3, "the answer is cut off").unwrap();
    let left = queue::left_items(&store, me).unwrap();
    assert_eq!(
        left,
        vec![
            queue::LeftItem {
                item: 2,
                unfinished: true,
                flag_reason: None
            },
            queue::LeftItem {
                item: 3,
                unfinished: false,
                flag_reason: Some("the answer is cut off".to_string())
            },
        ],
        "the skipped item and the flagged (but rated) one are listed, in queue order, nothing else"
    );
    let s = queue::open_queue(&mut store, me).unwrap();
    assert_eq!(
        s.resume_item, 2,
        "a reopened queue starts at the skipped item"
    );
}

#[test]
fn a_crash_after_the_last_value_of_an_item_resumes_on_the_next_item() {
    let mut store = demo_store();
    let me = expert(&mut store, "Crasher");
    queue::open_queue(&mut store, me).unwrap();
    rate_all(&mut store, me, 1);
    queue::leave_item(&mut store, me, 1, 2.0, 2).unwrap();
    // The screen shows item 3 the moment item 2's last value is saved and records the move after;
    // the process dies in between.
    let item = queue::rating_item(&store, me, 2).unwrap();
    for c in &item.criteria {
        queue::rate(&mut store, me, 2, &c.key, c.scale.min()).unwrap();
    }
    let s = queue::open_queue(&mut store, me).unwrap();
    assert_eq!(
        s.resume_item, 3,
        "the value that completed item 2 moved the rater on in its own transaction"
    );
    // Revising a finished item does not move the rater.
    queue::leave_item(&mut store, me, 3, 1.0, 2).unwrap();
    queue::rate(
        &mut store,
        me,
        2,
        &item.criteria[0].key,
        item.criteria[0].scale.max(),
    )
    .unwrap();
    let s = queue::open_queue(&mut store, me).unwrap();
    assert_eq!(
        s.resume_item, 3,
        "a revision of item 2 moves nothing: the reopened queue starts at the first unfinished item"
    );
}

#[test]
fn rationale_and_flags_are_kept() {
    let mut store = demo_store();
    let me = expert(&mut store, "Writer");
    queue::open_queue(&mut store, me).unwrap();
    queue::set_rationale(&mut store, me, 2, "  <b>warm</b> but vague  ").unwrap();
    let it = queue::rating_item(&store, me, 2).unwrap();
    assert_eq!(
        it.rationale.as_deref(),
        Some("<b>warm</b> but vague"),
        "kept verbatim, trimmed"
    );
    assert!(
        queue::flag_item(&mut store, me, 2, "  ").is_err(),
        "a flag needs a reason"
    );
    queue::flag_item(&mut store, me, 2, "answer cut off").unwrap();
    let it = queue::rating_item(&store, me, 2).unwrap();
    assert!(it.flagged, "the flag shows on the item");
    assert_eq!(
        it.flag_reason.as_deref(),
        Some("answer cut off"),
        "the reason is shown again on the item"
    );
}

#[test]
fn new_profile_names_are_normalised() {
    let mut store = demo_store();
    let a = queue::create_profile(&mut store, "  Dr\t Li \n Wei ", 1).unwrap();
    assert_eq!(
        a.name, "Dr Li Wei",
        "whitespace runs collapse and the ends are trimmed"
    );
    let b = queue::create_profile(&mut store, "Dr Li  Wei", 2).unwrap();
    assert_eq!(a.id, b.id, "the same person typed twice is one profile");
}

#[test]
fn restricted_studies_refuse_new_profiles() {
    let mut store = demo_store();
    store
        .write(|tx| tx.set_meta(queue::PROFILES_LOCKED_KEY, "true"))
        .unwrap();
    let err = queue::create_profile(&mut store, "Stranger", 1).unwrap_err();
    assert_eq!(
        err.code(),
        "profiles_locked",
        "locked studies refuse new profiles: {err}"
    );
    let existing = queue::profiles(&store).unwrap();
    assert!(existing.locked, "the lock is visible to the start screen");
    let name = existing.profiles[0].name.clone();
    assert!(
        queue::create_profile(&mut store, &name, 1).is_ok(),
        "choosing an existing profile still works"
    );
}

#[test]
fn judges_have_no_rating_screen() {
    let mut store = demo_store();
    let judge = store
        .raters()
        .unwrap()
        .into_iter()
        .find(|r| r.kind == concord_core::store::RaterKind::Judge)
        .unwrap();
    let err = queue::open_queue(&mut store, judge.id).unwrap_err();
    assert_eq!(
        err.code(),
        "not_an_expert",
        "a judge cannot open the expert screen: {err}"
    );
}

#[test]
fn a_newcomer_picking_a_demo_expert_sees_a_conversation_first() {
    for seed in [1, 11, 2024, 0xC0FFEE] {
        // Each on a fresh demo, as on a first launch (the first queue opened is the solo one).
        for name in ["Demo expert A", "Demo expert B"] {
            let clock = Arc::new(SteppingClock::new(1_700_000_000_000, 500));
            let mut store = Store::in_memory(clock).unwrap();
            populate_demo(&mut store, seed).unwrap();
            let me = concord_testsupport::lead_study::rater_id(&store, name);
            let summary = queue::open_queue(&mut store, me).unwrap();
            let first = queue::rating_item(&store, me, summary.resume_item).unwrap();
            assert!(
                first.scope == concord_core::rubric::Scope::Session || first.history.len() >= 2,
                "seed {seed}: {name}'s queue opens on a conversation (a reply after at least two turns, or a whole session), not a single message: {:?}",
                first.history
            );
        }
    }
}

#[test]
fn the_demo_holds_conversations_rated_turn_by_turn_and_whole() {
    let store = demo_store();
    let demo = demo_study().unwrap();
    assert!(
        (4..=8).contains(&demo.transcripts.len()),
        "a handful of multi-turn conversations"
    );
    assert!(
        demo.transcripts
            .iter()
            .any(|t| t.language == "zh" && t.rubric == "mentalbench"),
        "one conversation rated turn by turn is in Chinese"
    );
    for t in &demo.transcripts {
        let turns = t.messages.len() + usize::from(!t.candidates.is_empty());
        assert!(
            (4..=8).contains(&turns),
            "{}: 4-8 turns, candidates sharing one ({turns})",
            t.id
        );
    }
    assert!(
        store.has_transcripts().unwrap(),
        "the demo study holds transcripts"
    );
    let mut session_items = 0;
    let mut late_replies = 0;
    for id in store.response_ids_in_order().unwrap() {
        let place = store.item_place(id).unwrap();
        if !place.transcript {
            continue;
        }
        match place.turn {
            None => session_items += 1,
            Some(t) if t >= 3 => late_replies += 1,
            Some(_) => {}
        }
    }
    assert_eq!(
        session_items, 2,
        "two conversations are rated whole with session-care"
    );
    assert!(
        late_replies >= 6,
        "replies are rated deep into their conversations"
    );
}
