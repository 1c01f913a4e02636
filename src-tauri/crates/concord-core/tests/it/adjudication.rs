//! Adjudication and rater quality on real studies: the discrepancy rule lists exactly the pairs it
//! should, decisions are recorded with provenance without touching the experts' ratings, status
//! counts follow, the consensus reference changes agreement only where decisions exist, and a
//! simulated panel's planted lenient expert and planted drift are found.

use concord_testsupport::simulated_panel;

use concord_core::panel::adjudication;
use concord_core::panel::adjudication::AdjudicationError;
use concord_core::panel::adjudication::AgreementReference;
use concord_core::panel::adjudication::DiscrepancyReason;
use concord_core::panel::adjudication::DiscrepancyRule;
use concord_core::panel::adjudication::LikertRule;
use concord_core::panel::adjudication::Panel;
use concord_core::panel::adjudication::Resolution;
use concord_core::panel::adjudication::Ruling;
use concord_core::panel::agreement;
use concord_core::panel::agreement::AgreementOptions;
use concord_core::panel::agreement::Comparison;
use concord_core::panel::agreement::Level;
use concord_core::panel::rater_quality;
use concord_core::panel::rater_quality::QualityFlag;
use concord_core::panel::rater_quality::QualityOptions;
use concord_core::panel::rater_quality::SeverityFlag;
use simulated_panel::{panel_study, PanelSpec};

fn small_panel() -> concord_core::store::Store {
    panel_study(
        None,
        &PanelSpec {
            items: 30,
            experts: &[("Ana", 0.0), ("Boris", 0.0), ("Chen", 0.0)],
            drift: None,
            noise: 0.8,
            seed: 5,
        },
    )
}

fn resolution(item: &str, criterion: &str, ruling: Ruling) -> Resolution {
    Resolution {
        item: item.to_string(),
        criterion: criterion.to_string(),
        ruling,
        reason: "discussed the answer's second paragraph".to_string(),
        adjudicator: "Dr Lead".to_string(),
    }
}

#[test]
fn the_rule_lists_exactly_the_pairs_whose_values_spread_by_the_gap() {
    let store = small_panel();
    let panel = Panel::load(&store, true).expect("panel");
    for gap in [1, 2, 3] {
        let rule = DiscrepancyRule {
            likert: LikertRule::Spread { gap },
            flagged: true,
        };
        let listed = panel.discrepancies(&rule, false);
        let expected = panel
            .pairs
            .iter()
            .filter(|(_, v)| {
                let max = v.iter().map(|x| x.value).max().unwrap();
                let min = v.iter().map(|x| x.value).min().unwrap();
                v.len() >= 2 && max - min >= gap
            })
            .count();
        assert_eq!(
            listed.len(),
            expected,
            "gap {gap}: every pair with spread ≥ gap, and no other"
        );
        assert!(
            listed
                .iter()
                .all(|p| p.reason == DiscrepancyReason::Spread && p.values.len() == 3),
            "each listed pair carries all three experts' values"
        );
        assert!(
            listed
                .iter()
                .all(|p| p.values.iter().all(|v| v.rationale.is_some())),
            "the adjudicator sees each expert's rationale"
        );
    }
    let status = panel.status(&DiscrepancyRule::default());
    assert_eq!(
        status.pairs,
        30 * 7,
        "every item × criterion rated by three experts is a pair"
    );
    assert_eq!(
        status.unanimous + status.unresolved,
        status.pairs,
        "before any decision, every pair is unanimous or unresolved"
    );
}

#[test]
fn resolving_records_provenance_keeps_ratings_and_moves_the_status() {
    let mut store = small_panel();
    let rule = DiscrepancyRule::default();
    let before = Panel::load(&store, false).unwrap();
    let status_before = before.status(&rule);
    let pairs = before.discrepancies(&rule, false);
    assert!(
        pairs.len() >= 3,
        "the noisy panel has at least three discrepancies, got {}",
        pairs.len()
    );
    let overview_before = store.overview().unwrap();

    let a = adjudication::resolve(
        &mut store,
        &resolution(
            &pairs[0].item,
            &pairs[0].criterion,
            Ruling::Value { value: 3 },
        ),
    )
    .expect("a consensus value is recorded");
    assert_eq!(
        (a.value, a.unratable, a.adjudicator.as_str()),
        (Some(3), false, "Dr Lead"),
        "provenance is returned"
    );
    adjudication::resolve(
        &mut store,
        &resolution(&pairs[1].item, &pairs[1].criterion, Ruling::Unratable),
    )
    .expect("unratable is recorded");
    adjudication::resolve(
        &mut store,
        &resolution(
            &pairs[2].item,
            &pairs[2].criterion,
            Ruling::Value { value: 4 },
        ),
    )
    .expect("a third decision");
    // Deciding a pair again keeps the first decision on record; the latest counts.
    adjudication::resolve(
        &mut store,
        &resolution(
            &pairs[0].item,
            &pairs[0].criterion,
            Ruling::Value { value: 2 },
        ),
    )
    .expect("a revised decision");

    let after = Panel::load(&store, false).unwrap();
    let status = after.status(&rule);
    assert_eq!(status.adjudicated, 3, "three pairs decided (one twice)");
    assert_eq!(status.unratable, 1, "one of them unratable");
    assert_eq!(
        status.unresolved,
        status_before.unresolved - 3,
        "three fewer unresolved"
    );
    assert_eq!(
        status.unanimous, status_before.unanimous,
        "unanimous pairs are untouched"
    );
    assert_eq!(
        after.discrepancies(&rule, false).len(),
        pairs.len() - 3,
        "decided pairs leave the to-do list"
    );
    let listed_all = after.discrepancies(&rule, true);
    let first = listed_all
        .iter()
        .find(|p| p.item == pairs[0].item && p.criterion == pairs[0].criterion)
        .expect("decided pairs are listed with --all");
    assert_eq!(
        first.decision.as_ref().and_then(|d| d.value),
        Some(2),
        "the latest decision counts"
    );
    let history = store
        .decision_history(pairs[0].response_id, pairs[0].criterion_id)
        .unwrap();
    assert_eq!(
        history.iter().map(|d| d.value).collect::<Vec<_>>(),
        vec![Some(3), Some(2)],
        "every decision stays on record"
    );
    let overview_after = store.overview().unwrap();
    assert_eq!(
        overview_before.ratings, overview_after.ratings,
        "no rating was added or removed"
    );
    for (k, v) in &pairs[0..3]
        .iter()
        .map(|p| ((p.response_id, p.criterion_id), p.values.clone()))
        .collect::<Vec<_>>()
    {
        let now = after
            .pairs
            .iter()
            .find(|(key, _)| key == k)
            .expect("pair still there");
        assert_eq!(
            now.1.iter().map(|x| x.value).collect::<Vec<_>>(),
            v.iter().map(|x| x.value).collect::<Vec<_>>(),
            "the experts' original values are never changed"
        );
    }
}

#[test]
fn resolving_refuses_what_it_cannot_record() {
    let mut store = small_panel();
    let pair = Panel::load(&store, false)
        .unwrap()
        .discrepancies(&DiscrepancyRule::default(), false)[0]
        .clone();
    let bad = |r: Resolution, store: &mut concord_core::store::Store| {
        adjudication::resolve(store, &r).unwrap_err()
    };
    assert!(
        matches!(
            bad(
                resolution("no-such-item", "empathy", Ruling::Unratable),
                &mut store
            ),
            AdjudicationError::UnknownItem(_)
        ),
        "an unknown item"
    );
    assert!(
        matches!(
            bad(
                resolution(&pair.item, "kindness", Ruling::Unratable),
                &mut store
            ),
            AdjudicationError::UnknownCriterion { .. }
        ),
        "a criterion outside the rubric"
    );
    assert!(
        matches!(
            bad(
                resolution(&pair.item, &pair.criterion, Ruling::Value { value: 6 }),
                &mut store
            ),
            AdjudicationError::OffScale { .. }
        ),
        "a value off the 1–5 scale"
    );
    let mut empty = resolution(&pair.item, &pair.criterion, Ruling::Unratable);
    empty.reason = "  ".into();
    assert!(
        matches!(bad(empty, &mut store), AdjudicationError::EmptyReason),
        "a decision without a reason"
    );
    assert_eq!(
        store.latest_decisions().unwrap().len(),
        0,
        "nothing was recorded by the refusals"
    );
}

fn options() -> AgreementOptions {
    AgreementOptions {
        resamples: 200,
        ..AgreementOptions::mentalalign("mentalbench")
    }
}

#[test]
fn the_experts_reference_is_exactly_the_plain_report_and_consensus_moves_only_with_decisions() {
    let mut store = small_panel();
    let plain = agreement::report(&store, options()).unwrap();
    let experts =
        adjudication::agreement_report(&store, options(), AgreementReference::Experts).unwrap();
    assert_eq!(
        serde_json::to_string(&plain).unwrap(),
        serde_json::to_string(&experts).unwrap(),
        "the default reference must give byte-identical output"
    );
    let undecided =
        adjudication::agreement_report(&store, options(), AgreementReference::Consensus).unwrap();
    for (a, b) in plain.cells.iter().zip(&undecided.cells) {
        assert_eq!(
            (a.icc_c1, a.bias),
            (b.icc_c1, b.bias),
            "without decisions the consensus is the experts' values"
        );
    }
    assert!(
        undecided
            .cells
            .iter()
            .filter(|c| c.comparison == Comparison::JudgeVsExperts)
            .all(|c| c.reference == "consensus"),
        "cells against the consensus say so"
    );
    // Adjudicate every discrepancy to the median of the experts' values.
    let pairs = Panel::load(&store, false)
        .unwrap()
        .discrepancies(&DiscrepancyRule::default(), false);
    for p in &pairs {
        let mut v: Vec<i64> = p.values.iter().map(|x| x.value).collect();
        v.sort_unstable();
        adjudication::resolve(
            &mut store,
            &resolution(&p.item, &p.criterion, Ruling::Value { value: v[1] }),
        )
        .unwrap();
    }
    let status = Panel::load(&store, false)
        .unwrap()
        .status(&DiscrepancyRule::default());
    assert_eq!(status.unresolved, 0, "every discrepancy is decided");
    let consensus =
        adjudication::agreement_report(&store, options(), AgreementReference::Consensus).unwrap();
    let ee = |r: &agreement::AgreementReport| -> f64 {
        let cells: Vec<f64> = r
            .cells
            .iter()
            .filter(|c| {
                c.comparison == Comparison::ExpertVsExpert && c.level == Level::Item && !c.is_group
            })
            .filter_map(|c| c.icc_a1)
            .collect();
        cells.iter().sum::<f64>() / cells.len() as f64
    };
    assert!(
        ee(&consensus) > ee(&plain),
        "expert–expert agreement after adjudication ({}) must exceed before ({})",
        ee(&consensus),
        ee(&plain)
    );
    let changed = plain
        .cells
        .iter()
        .zip(&consensus.cells)
        .filter(|(a, b)| a.comparison == Comparison::JudgeVsExperts && a.icc_a1 != b.icc_a1)
        .count();
    assert!(
        changed > 0,
        "judge cells against the consensus differ once decisions exist"
    );
}

#[test]
fn a_planted_lenient_expert_is_flagged_and_the_planted_offset_is_within_each_interval() {
    let store = panel_study(
        None,
        &PanelSpec {
            items: 240,
            experts: &[("Ana", 0.9), ("Boris", 0.0), ("Chen", 0.0)],
            drift: None,
            noise: 0.5,
            seed: 17,
        },
    );
    let report = rater_quality::report(&store, &QualityOptions::default()).unwrap();
    let ana = report
        .experts
        .iter()
        .find(|e| e.rater == "Ana")
        .expect("Ana is reported");
    assert_eq!(ana.criteria.len(), 7, "one row per criterion");
    let mut covered = 0;
    for c in &ana.criteria {
        assert_eq!(
            c.severity_flag,
            Some(SeverityFlag::Lenient),
            "Ana is lenient on {}",
            c.criterion
        );
        // Planted offset: 0.9 − mean(0, 0).
        let [lo, hi] = c.severity.ci95.unwrap();
        covered += usize::from(lo <= 0.9 && 0.9 <= hi);
    }
    // Each 95% interval covers with probability 0.95; when the estimates are right, three or
    // more of seven miss with probability 0.004.
    assert!(
        covered >= 5,
        "the planted offset 0.9 must lie in at least 5 of the 7 intervals, got {covered}"
    );
    assert!(
        ana.flags
            .iter()
            .any(|f| matches!(f, QualityFlag::Lenient { .. })),
        "the lenient flag is raised"
    );
    for other in report.experts.iter().filter(|e| e.rater != "Ana") {
        assert!(
            other
                .flags
                .iter()
                .all(|f| !matches!(f, QualityFlag::Lenient { .. })),
            "{} is not lenient",
            other.rater
        );
    }
}

#[test]
fn a_planted_drift_raises_the_cusum_alarm_for_that_expert_only() {
    let store = panel_study(
        None,
        &PanelSpec {
            items: 300,
            experts: &[("Ana", 0.0), ("Boris", 0.0), ("Chen", 0.0)],
            drift: Some((1, 150, 0.8)),
            noise: 0.5,
            seed: 23,
        },
    );
    let report = rater_quality::report(&store, &QualityOptions::default()).unwrap();
    let boris = report.experts.iter().find(|e| e.rater == "Boris").unwrap();
    let alarms = boris.criteria.iter().filter(|c| c.drift.alarm).count();
    assert!(
        alarms >= 6,
        "Boris drifts on all seven criteria; at least six alarms expected, got {alarms}"
    );
    let mut covered = 0;
    for c in &boris.criteria {
        assert!(
            c.drift_on_offsets,
            "shared items: drift is measured on offsets from the panel"
        );
        // The others do not move, so Boris's offset rises by the planted 0.8.
        let [lo, hi] = c
            .drift
            .difference_ci95
            .expect("blocks of 75 give an interval");
        covered += usize::from(lo <= 0.8 && 0.8 <= hi);
    }
    assert!(
        covered >= 5,
        "the planted drift 0.8 must lie in at least 5 of the 7 first-vs-last intervals, got {covered}"
    );
    let ana = report.experts.iter().find(|e| e.rater == "Ana").unwrap();
    let false_alarms: usize = ana.criteria.iter().filter(|c| c.drift.alarm).count();
    // Ana's offsets are taken against Boris too, whose drift moves them by −0.4; the alarm may
    // ring for her as well, but weaker — the report must single out Boris by the difference.
    let mean_diff = |e: &rater_quality::ExpertQuality| {
        e.criteria
            .iter()
            .filter_map(|c| c.drift.difference)
            .sum::<f64>()
            / 7.0
    };
    assert!(
        mean_diff(boris) > 0.6 && mean_diff(ana) < 0.0,
        "Boris moves up by about 0.8 ({:.2}), Ana relatively down ({:.2}); Ana alarms: {false_alarms}",
        mean_diff(boris),
        mean_diff(ana)
    );
}

#[test]
fn the_long_export_carries_consensus_rows_with_their_provenance() {
    let mut store = small_panel();
    let mut plain = Vec::new();
    let before =
        concord_core::outputs::export::write_long_csv(&store, &mut plain, Default::default())
            .unwrap();
    let pairs = Panel::load(&store, false)
        .unwrap()
        .discrepancies(&DiscrepancyRule::default(), false);
    adjudication::resolve(
        &mut store,
        &resolution(
            &pairs[0].item,
            &pairs[0].criterion,
            Ruling::Value { value: 4 },
        ),
    )
    .unwrap();
    adjudication::resolve(
        &mut store,
        &resolution(&pairs[1].item, &pairs[1].criterion, Ruling::Unratable),
    )
    .unwrap();
    let mut out = Vec::new();
    let after = concord_core::outputs::export::write_long_csv(&store, &mut out, Default::default())
        .unwrap();
    assert_eq!(
        after.ratings, before.ratings,
        "the experts' ratings are exported as before"
    );
    assert_eq!(
        after.rows,
        before.rows + 2,
        "one consensus row per decided pair"
    );
    let text = String::from_utf8(out).unwrap();
    let consensus: Vec<&str> = text.lines().filter(|l| l.contains(",consensus,")).collect();
    assert_eq!(consensus.len(), 2, "two consensus rows: {consensus:?}");
    assert!(
        consensus
            .iter()
            .any(|l| l.contains("Dr Lead,adjudicator,") && l.contains(",consensus,4,,discussed")),
        "a decided value with its adjudicator and reason: {consensus:?}"
    );
    assert!(
        consensus
            .iter()
            .any(|l| l.contains(",consensus,,unratable,discussed")),
        "an unratable pair has no value and says so: {consensus:?}"
    );
    assert!(
        text.starts_with(std::str::from_utf8(&plain).unwrap().lines().next().unwrap()),
        "same header"
    );
}

#[test]
fn disagreement_adds_one_more_expert_with_balanced_loads_and_only_once() {
    use concord_core::store::{NewRater, RaterKind, StoreError};
    let mut store = small_panel();
    store
        .write(|tx| {
            for (i, name) in ["Dana", "Emil"].iter().enumerate() {
                tx.upsert_rater(&NewRater {
                    kind: RaterKind::Expert,
                    name,
                    model_id: None,
                    family: None,
                    queue_seed: 10 + i as i64,
                })?;
            }
            Ok::<_, StoreError>(())
        })
        .unwrap();
    let rule = DiscrepancyRule::default();
    let discrepant: std::collections::BTreeSet<String> = Panel::load(&store, false)
        .unwrap()
        .discrepancies(&rule, false)
        .into_iter()
        .map(|p| p.item)
        .collect();
    let first = adjudication::add_rater_on_disagreement(&mut store, &rule, 9).unwrap();
    assert_eq!(
        first.added.len(),
        discrepant.len(),
        "every response with a discrepancy gets exactly one more expert"
    );
    assert!(
        first
            .added
            .iter()
            .all(|a| a.rater == "Dana" || a.rater == "Emil"),
        "only experts who have not rated the response are added"
    );
    let dana = first.added.iter().filter(|a| a.rater == "Dana").count();
    let emil = first.added.len() - dana;
    assert!(
        dana.abs_diff(emil) <= 1,
        "loads stay balanced: Dana {dana}, Emil {emil}"
    );
    let again = adjudication::add_rater_on_disagreement(&mut store, &rule, 9).unwrap();
    assert!(
        again.added.is_empty(),
        "a response already escalated is not escalated twice"
    );
    let items = concord_core::workflow::assignment::expert_items(&store, "Dana").unwrap();
    assert_eq!(items.len(), dana, "the added items are in Dana's queue");
}

#[test]
fn the_adjudicator_sees_why_an_expert_flagged_a_response() {
    let mut store = small_panel();
    let panel = Panel::load(&store, true).expect("panel");
    let ((response, _), values) = panel.pairs.first().expect("a rated pair").clone();
    let rater = values[0].rater_id;
    store
        .write(|tx| tx.add_flag(rater, response, "the answer is cut off <mid-sentence>"))
        .expect("an expert flags the response");
    let panel = Panel::load(&store, true).expect("panel");
    let rule = DiscrepancyRule {
        likert: LikertRule::Spread { gap: 99 },
        flagged: true,
    };
    let listed = panel.discrepancies(&rule, false);
    assert!(
        !listed.is_empty()
            && listed.iter().all(|p| p.reason == DiscrepancyReason::Flagged
                && p.flag_reason.as_deref() == Some("the answer is cut off <mid-sentence>")),
        "every pair of the flagged response carries the expert's reason: {listed:?}"
    );
}
