//! Calibration on a real study: gold items gate the regular queue; the key and explanation stay
//! hidden until an item is answered; answers are kept as first given; passing opens the queue,
//! failing keeps it closed until the lead overrides (recorded).

use concord_testsupport::simulated_panel;

use concord_core::workflow::calibration;
use concord_core::workflow::calibration::CalibrationError;
use concord_core::workflow::calibration::CalibrationState;
use concord_core::workflow::calibration::PassRule;
use concord_core::workflow::queue;
use concord_core::workflow::queue::QueueError;
use simulated_panel::{panel_study, PanelSpec};

fn study() -> concord_core::store::Store {
    let mut store = panel_study(
        None,
        &PanelSpec {
            items: 6,
            experts: &[("Ana", 0.0), ("Boris", 0.0)],
            drift: None,
            noise: 0.5,
            seed: 3,
        },
    );
    for (item, criterion, value) in [
        ("1", "empathy", 4),
        ("1", "safety", 5),
        ("2", "empathy", 2),
        ("2", "guidance", 1),
        ("2", "relevance", 3),
    ] {
        calibration::set_key(
            &mut store,
            item,
            criterion,
            value,
            "the anchor text fits best",
        )
        .expect("a key on a real item and criterion");
    }
    store
}

fn id(store: &concord_core::store::Store, name: &str) -> i64 {
    store
        .raters()
        .unwrap()
        .into_iter()
        .find(|r| r.name == name)
        .unwrap()
        .id
}

fn values(pairs: &[(&str, i64)]) -> Vec<(String, i64)> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn gold_items_come_first_and_passing_opens_the_queue() {
    let mut store = study();
    let ana = id(&store, "Ana");
    let s = calibration::status(&store, "Ana").unwrap();
    assert_eq!(
        (s.state, s.items, s.answered),
        (CalibrationState::InProgress, 2, 0),
        "two gold items, none answered"
    );
    assert!(
        matches!(
            queue::open_queue(&mut store, ana),
            Err(QueueError::CalibrationPending)
        ),
        "the regular queue stays closed before calibration"
    );
    let before = calibration::item(&store, "Ana", 1).unwrap();
    assert_eq!(
        before.criteria.len(),
        2,
        "only the keyed criteria are asked"
    );
    assert!(
        before
            .criteria
            .iter()
            .all(|c| c.key_value.is_none() && c.explanation.is_none()),
        "the key and its explanation are hidden until the item is answered"
    );
    assert!(
        matches!(
            calibration::answer(&mut store, "Ana", 1, &values(&[("empathy", 4)])),
            Err(CalibrationError::Incomplete { .. })
        ),
        "every keyed criterion needs an answer"
    );
    let shown = calibration::answer(
        &mut store,
        "Ana",
        1,
        &values(&[("empathy", 3), ("safety", 5)]),
    )
    .unwrap();
    assert!(shown.answered, "the item is answered");
    let empathy = shown.criteria.iter().find(|c| c.key == "empathy").unwrap();
    assert_eq!(
        (empathy.answer, empathy.key_value, empathy.right),
        (Some(3), Some(4), Some(true)),
        "3 against a key of 4 is within ±1"
    );
    assert_eq!(
        empathy.explanation.as_deref(),
        Some("the anchor text fits best"),
        "the explanation is shown after"
    );
    // A second answer does not replace the first.
    calibration::answer(
        &mut store,
        "Ana",
        1,
        &values(&[("empathy", 1), ("safety", 1)]),
    )
    .unwrap();
    let again = calibration::item(&store, "Ana", 1).unwrap();
    assert_eq!(
        again
            .criteria
            .iter()
            .find(|c| c.key == "empathy")
            .unwrap()
            .answer,
        Some(3),
        "the first answer stands"
    );
    calibration::answer(
        &mut store,
        "Ana",
        2,
        &values(&[("empathy", 2), ("guidance", 2), ("relevance", 3)]),
    )
    .unwrap();
    let s = calibration::status(&store, "Ana").unwrap();
    assert_eq!(
        s.state,
        CalibrationState::Passed,
        "five of five within ±1: passed ({s:?})"
    );
    assert_eq!(s.likert_share, Some(1.0), "every 1–5 answer right");
    assert!(
        queue::open_queue(&mut store, ana).is_ok(),
        "the regular queue opens after passing"
    );
}

#[test]
fn failing_keeps_the_queue_closed_until_the_lead_overrides() {
    let mut store = study();
    let boris = id(&store, "Boris");
    calibration::answer(
        &mut store,
        "Boris",
        1,
        &values(&[("empathy", 1), ("safety", 2)]),
    )
    .unwrap();
    calibration::answer(
        &mut store,
        "Boris",
        2,
        &values(&[("empathy", 5), ("guidance", 1), ("relevance", 3)]),
    )
    .unwrap();
    let s = calibration::status(&store, "Boris").unwrap();
    assert_eq!(
        s.state,
        CalibrationState::Failed,
        "two of five right is below 80%"
    );
    assert_eq!(
        s.likert_share,
        Some(0.4),
        "guidance and relevance right, three wrong"
    );
    assert!(!s.may_rate, "a failed expert may not rate");
    assert!(
        matches!(
            queue::open_queue(&mut store, boris),
            Err(QueueError::CalibrationPending)
        ),
        "the queue stays closed"
    );
    assert!(
        matches!(
            calibration::override_gate(&mut store, "Boris", "", "x"),
            Err(CalibrationError::EmptyOverride)
        ),
        "an override needs the lead's name"
    );
    let s = calibration::override_gate(
        &mut store,
        "Boris",
        "Dr Lead",
        "experienced rater, rubric discussed",
    )
    .unwrap();
    assert_eq!(s.state, CalibrationState::Overridden, "overridden");
    assert_eq!(
        s.overridden_by,
        Some((
            "Dr Lead".to_string(),
            "experienced rater, rubric discussed".to_string()
        )),
        "the override is recorded with its lead and reason"
    );
    assert!(
        queue::open_queue(&mut store, boris).is_ok(),
        "the queue opens after the override"
    );
}

#[test]
fn the_pass_rule_is_configurable_and_checked() {
    let mut store = study();
    assert_eq!(
        calibration::pass_rule(&store).unwrap(),
        PassRule::default(),
        "default rule"
    );
    let strict = PassRule {
        likert_tolerance: 0,
        likert_min_share: 1.0,
        binary_min_share: 1.0,
    };
    calibration::set_pass_rule(&mut store, &strict).unwrap();
    calibration::answer(
        &mut store,
        "Ana",
        1,
        &values(&[("empathy", 3), ("safety", 5)]),
    )
    .unwrap();
    calibration::answer(
        &mut store,
        "Ana",
        2,
        &values(&[("empathy", 2), ("guidance", 1), ("relevance", 3)]),
    )
    .unwrap();
    assert_eq!(
        calibration::status(&store, "Ana").unwrap().state,
        CalibrationState::Failed,
        "under an exact rule, one answer off by one fails"
    );
    assert!(
        matches!(
            calibration::set_pass_rule(
                &mut store,
                &PassRule {
                    likert_tolerance: 1,
                    likert_min_share: 1.5,
                    binary_min_share: 0.8
                }
            ),
            Err(CalibrationError::BadRule)
        ),
        "a share above 1 is refused"
    );
    assert!(
        matches!(
            calibration::set_key(&mut store, "3", "empathy", 7, "x"),
            Err(CalibrationError::OffScale { .. })
        ),
        "a key off the scale is refused"
    );
}

#[test]
fn a_study_without_gold_items_needs_no_calibration() {
    let mut store = panel_study(
        None,
        &PanelSpec {
            items: 3,
            experts: &[("Ana", 0.0)],
            drift: None,
            noise: 0.5,
            seed: 1,
        },
    );
    let ana = id(&store, "Ana");
    assert_eq!(
        calibration::status(&store, "Ana").unwrap().state,
        CalibrationState::NotRequired,
        "no gold items"
    );
    assert!(
        queue::open_queue(&mut store, ana).is_ok(),
        "the queue is open"
    );
}
