//! Journeys of the clinical panel's workflow in the real window: an adjudicator decides three
//! disputed pairs (values and rationales side by side, each marked signed or changed after
//! signature when its expert signed it off, never a source); an expert passes
//! calibration (the key and explanation shown after each gold item) and only then reaches the
//! regular queue; the Raters view flags a planted lenient expert.

use super::App;
use concord_core::base::clock::SystemClock;
use concord_core::intake::demo::create_demo_at;
use concord_core::panel::adjudication::DiscrepancyRule;
use concord_core::panel::adjudication::LikertRule;
use concord_core::panel::adjudication::Panel;
use concord_core::rubric::builtin;
use concord_core::store::{
    ImportedRating, NewConversation, NewRater, NewSource, Occasion, RaterKind, RatingInput,
    SignedValue, SourceKind, Store, StoreError,
};
use concord_core::workflow::calibration;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

fn open(app: &App, nav: &str) {
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    let b = app.wait_for(&format!("[data-testid={nav}]"), Duration::from_secs(5));
    app.click(&b);
}

/// Among the first three pairs the rule lists, the first on a Likert criterion: its first two
/// experts sign their values off, and the first expert's value is then changed (with a reason) to
/// one no other expert gave, so the pair stays discrepant. Returns the pair's item and criterion
/// and the two experts' names (changed, signed).
fn sign_and_change_one_value(
    study: &std::path::Path,
    rule: &DiscrepancyRule,
) -> (String, String, String, String) {
    let mut store = Store::open(study, Arc::new(SystemClock)).unwrap();
    let panel = Panel::load(&store, true).unwrap();
    let pair = panel
        .discrepancies(rule, false)
        .into_iter()
        .take(3)
        .find(|p| {
            panel
                .criteria
                .iter()
                .any(|c| c.id == p.criterion_id && !c.binary && p.values.len() >= 2)
        })
        .expect("one of the first three pairs is on a Likert criterion");
    let scale = panel
        .criteria
        .iter()
        .find(|c| c.id == pair.criterion_id)
        .map(|c| c.min..=c.max)
        .unwrap();
    let (a, b) = (&pair.values[0], &pair.values[1]);
    let new = scale
        .clone()
        .find(|v| pair.values.iter().all(|o| o.value != *v))
        .or_else(|| scale.clone().find(|v| *v != a.value && *v != b.value))
        .expect("a 1–5 scale has a level neither expert chose");
    store
        .write(|tx| {
            for v in [a, b] {
                let rater = tx.rater_id(&v.rater)?.expect("the expert exists");
                let rating = tx
                    .rating_id(rater, pair.response_id, pair.criterion_id)?
                    .expect("the shown value is a stored rating");
                tx.add_signature(
                    rater,
                    &v.rater,
                    "these ratings are my own independent judgement",
                    "assignment",
                    &[SignedValue {
                        rating_id: rating,
                        response_id: pair.response_id,
                        criterion_id: pair.criterion_id,
                        value: Some(v.value),
                        raw_value: None,
                        rationale: v.rationale.clone(),
                    }],
                    "signed in the test's setup",
                )?;
            }
            Ok::<_, StoreError>(())
        })
        .unwrap();
    // The change comes later than the signature (the study runs on the system clock).
    std::thread::sleep(Duration::from_millis(5));
    store
        .write(|tx| {
            tx.set_rating_with_reason(
                &RatingInput {
                    rater_id: tx.rater_id(&a.rater)?.expect("the expert exists"),
                    response_id: pair.response_id,
                    criterion_id: pair.criterion_id,
                    occasion: Occasion::First,
                    value: Some(new),
                    raw_value: None,
                    rationale: a.rationale.as_deref(),
                    origin: "screen",
                },
                "misread the anchor",
            )?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
    (
        pair.item.clone(),
        pair.criterion.clone(),
        a.rater.clone(),
        b.rater.clone(),
    )
}

#[test]
fn an_adjudicator_decides_three_pairs_without_seeing_sources() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("adjudicate.concord");
    drop(create_demo_at(&study, Arc::new(SystemClock), 7).expect("demo study"));
    let gap_one = DiscrepancyRule {
        likert: LikertRule::Spread { gap: 1 },
        flagged: true,
    };
    let before = {
        let store = Store::open(&study, Arc::new(SystemClock)).unwrap();
        let panel = Panel::load(&store, false).unwrap();
        assert!(
            panel.discrepancies(&gap_one, false).len() >= 3,
            "the demo's experts differ by a point on at least three pairs"
        );
        panel.status(&gap_one)
    };
    let (item, criterion, changed, signed) = sign_and_change_one_value(&study, &gap_one);

    let app = App::launch(&study);
    open(&app, "nav-adjudicate");
    let gap = app.wait_for("[data-testid=adj-gap]", Duration::from_secs(10));
    app.clear(&gap);
    app.type_into(&gap, "1");
    let apply = app.wait_for("[data-testid=adj-apply]", Duration::from_secs(5));
    app.click(&apply);
    let mut marked_pair_seen = false;
    for n in 1..=3 {
        let current = app.wait_for("[data-testid=adj-current]", Duration::from_secs(10));
        if n == 1 {
            app.assert_accessible("adjudication-pair");
        }
        let opinions = app.find_all("[data-testid=adj-opinion]");
        assert!(opinions.len() >= 2, "the experts' values are side by side");
        if app.attribute(&current, "data-item").as_deref() == Some(item.as_str())
            && app.attribute(&current, "data-criterion").as_deref() == Some(criterion.as_str())
        {
            marked_pair_seen = true;
            let mark = |rater: &str| {
                app.script(
                    "return [...document.querySelectorAll('[data-testid=adj-opinion]')] \
                       .filter(o => o.querySelector('strong').textContent.includes(arguments[0])) \
                       .map(o => [...o.querySelectorAll('.signed')].map(m => m.dataset.testid)) \
                       .flat().join(',');",
                    json!([rater]),
                )
                .as_str()
                .unwrap_or_default()
                .to_string()
            };
            assert_eq!(
                mark(&changed),
                "adj-changed-after-signature",
                "the value changed after its signature is marked so"
            );
            assert_eq!(
                mark(&signed),
                "adj-signed",
                "the unchanged signed value is marked signed"
            );
            app.screenshot("adjudication-signature-marks");
        }
        let text = app.text(&current);
        for hidden in ["GPT-4o", "Claude", "Demo judge", "gpt4o", "claude"] {
            assert!(
                !text.contains(hidden),
                "the adjudicator must not see the source or a judge ({hidden})"
            );
        }
        let level = app.wait_for(
            "[data-testid=adj-level][data-value='3']",
            Duration::from_secs(5),
        );
        app.click(&level);
        let reason = app.wait_for("[data-testid=adj-reason]", Duration::from_secs(5));
        app.type_into(&reason, &format!("discussed, pair {n}"));
        let who = app.wait_for("[data-testid=adj-who]", Duration::from_secs(5));
        app.clear(&who);
        app.type_into(&who, "Dr Lead");
        let record = app.wait_for("[data-testid=adj-record]", Duration::from_secs(5));
        app.click(&record);
        app.wait_for_attribute(
            "[data-testid=adj-status]",
            "data-adjudicated",
            &n.to_string(),
            Duration::from_secs(10),
        );
    }
    assert!(
        marked_pair_seen,
        "the pair with the signed and changed values is among the three decided"
    );
    app.screenshot("adjudication");
    drop(app);
    let store = Store::open(&study, Arc::new(SystemClock)).unwrap();
    let after = Panel::load(&store, false).unwrap().status(&gap_one);
    assert_eq!(after.adjudicated, 3, "three decisions are in the study");
    assert_eq!(
        after.unresolved,
        before.unresolved - 3,
        "three fewer unresolved pairs"
    );
    let decisions = store.latest_decisions().unwrap();
    assert!(
        decisions.values().all(|d| d.adjudicator == "Dr Lead"
            && d.value == Some(3)
            && d.reason.starts_with("discussed")),
        "each decision carries its adjudicator, value and reason"
    );
}

#[test]
fn an_expert_passes_calibration_then_reaches_the_regular_queue() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("calibration.concord");
    {
        let mut store = create_demo_at(&study, Arc::new(SystemClock), 7).expect("demo study");
        calibration::set_key(
            &mut store,
            "1",
            "empathy",
            4,
            "names the feeling and stays with it",
        )
        .expect("a key on item 1");
        calibration::set_key(&mut store, "2", "guidance", 2, "advice without steps")
            .expect("a key on item 2");
    }
    let app = App::launch(&study);
    open(&app, "nav-rate");
    let profile = app.wait_for("[data-testid=profile]", Duration::from_secs(10));
    app.click(&profile);
    app.wait_for("[data-testid=calibration]", Duration::from_secs(10));
    app.wait_for("[data-testid=cal-level]", Duration::from_secs(10));
    app.assert_accessible("calibration");
    assert!(
        app.try_find("[data-testid=rating-screen]").is_none(),
        "the regular queue does not open before calibration"
    );
    for (item, value, next) in [(1, "4", true), (2, "3", false)] {
        app.wait_for_attribute(
            "[data-testid=cal-progress]",
            "data-item",
            &item.to_string(),
            Duration::from_secs(10),
        );
        assert!(
            app.try_find("[data-testid=cal-key]").is_none(),
            "the key is hidden before answering"
        );
        let level = app.wait_for(
            &format!("[data-testid=cal-level][data-value='{value}']"),
            Duration::from_secs(5),
        );
        app.click(&level);
        let submit = app.wait_for("[data-testid=cal-submit]", Duration::from_secs(5));
        app.click(&submit);
        let key = app.wait_for("[data-testid=cal-key]", Duration::from_secs(10));
        assert!(
            app.text(&key).contains("Key:") && app.text(&key).len() > 10,
            "the key and its explanation are shown after answering: {}",
            app.text(&key)
        );
        if next {
            let b = app.wait_for("[data-testid=cal-next]", Duration::from_secs(5));
            app.click(&b);
        }
    }
    app.wait_for("[data-testid=cal-passed]", Duration::from_secs(10));
    app.screenshot("calibration-passed");
    let start = app.wait_for("[data-testid=cal-start]", Duration::from_secs(5));
    app.click(&start);
    app.wait_for(
        "[data-testid=rating-screen] [data-testid=item-number]",
        Duration::from_secs(10),
    );
}

/// Three experts on 40 MentalBench items; Lena rates one point above the panel on every
/// criterion. Deterministic: the values cycle through a fixed pattern.
fn lenient_panel(path: &std::path::Path) {
    let mut store = Store::create(path, Arc::new(SystemClock)).unwrap();
    store
        .write(|tx| {
            let rubric = tx.add_rubric(&builtin::mentalbench())?;
            let ids = tx.read().criterion_ids(rubric)?;
            let criteria: Vec<i64> = builtin::mentalbench()
                .criteria
                .iter()
                .map(|c| ids[&c.id])
                .collect();
            let source = tx.upsert_source(&NewSource {
                key: "original",
                name: "Original",
                family: None,
                kind: SourceKind::Human,
            })?;
            let experts: Vec<i64> = ["Lena", "Mark", "Nora"]
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    tx.upsert_rater(&NewRater {
                        kind: RaterKind::Expert,
                        name,
                        model_id: None,
                        family: None,
                        queue_seed: i as i64,
                    })
                })
                .collect::<Result<_, _>>()?;
            let mut ratings = Vec::new();
            for i in 0..40i64 {
                let c = tx.add_conversation(&NewConversation {
                    external_id: &format!("c{i}"),
                    rubric_id: rubric,
                    context: "I feel alone since the move.",
                    language: Some("en"),
                    category: None,
                })?;
                let r = tx.add_response(c, source, Some("Moving is hard; tell me more."))?;
                for (k, &criterion) in criteria.iter().enumerate() {
                    let k = k as i64;
                    let theta = 2 + (i * 7 + k * 3) % 2;
                    let jitter = [[0, 1, -1], [1, -1, 0], [-1, 0, 1]];
                    for (e, &expert) in experts.iter().enumerate() {
                        let lenient = i64::from(e == 0);
                        let v = theta + lenient + jitter[((i + k) % 3) as usize][e];
                        ratings.push(ImportedRating {
                            rater_id: expert,
                            response_id: r,
                            criterion_id: criterion,
                            value: Some(v.clamp(1, 5)),
                            raw_value: None,
                            rationale: None,
                        });
                    }
                }
            }
            tx.import_ratings(ratings, "planted panel")?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
}

#[test]
fn the_raters_view_flags_a_planted_lenient_expert() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("lenient.concord");
    lenient_panel(&study);
    let app = App::launch(&study);
    open(&app, "nav-raters");
    let flag = app.wait_for(
        "[data-testid=rater-card][data-rater=Lena] [data-testid=rater-flag][data-kind=lenient]",
        Duration::from_secs(20),
    );
    app.assert_accessible("raters-with-a-flag");
    assert!(
        app.text(&flag).contains("lenient"),
        "Lena is flagged lenient: {}",
        app.text(&flag)
    );
    assert!(
        app.try_find(
            "[data-testid=rater-card][data-rater=Mark] [data-testid=rater-flag][data-kind=lenient]"
        )
        .is_none(),
        "Mark is not lenient"
    );
    app.wait_for("[data-testid=severity-plot] svg", Duration::from_secs(10));
    app.screenshot("raters");
}

#[test]
fn the_agreement_panel_compares_judges_with_the_consensus() {
    use concord_core::panel::adjudication;
    use concord_core::panel::adjudication::Resolution;
    use concord_core::panel::adjudication::Ruling;
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("consensus.concord");
    {
        let mut store = create_demo_at(&study, Arc::new(SystemClock), 7).expect("demo study");
        let pairs = Panel::load(&store, false)
            .unwrap()
            .discrepancies(&DiscrepancyRule::default(), false);
        for p in pairs.iter().take(2) {
            adjudication::resolve(
                &mut store,
                &Resolution {
                    item: p.item.clone(),
                    criterion: p.criterion.clone(),
                    ruling: Ruling::Value { value: 3 },
                    reason: "agreed in the panel meeting".into(),
                    adjudicator: "Dr Lead".into(),
                },
            )
            .expect("decided");
        }
    }
    let app = App::launch(&study);
    open(&app, "nav-agreement");
    app.wait_for("[data-testid=agreement-table]", Duration::from_secs(60));
    assert!(
        app.try_find("[data-testid=consensus-note]").is_none(),
        "the experts' mean is the default reference"
    );
    app.script(
        "const s = document.querySelector('[data-testid=ag-reference]'); s.value = 'consensus'; s.dispatchEvent(new Event('change')); return 1;",
        serde_json::json!([]),
    );
    app.wait_for_attribute(
        "[data-testid=consensus-note]",
        "data-adjudicated",
        "2",
        Duration::from_secs(30),
    );
    app.screenshot("agreement-consensus");
}
