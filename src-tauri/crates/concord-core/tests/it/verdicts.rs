//! Judge verdicts on an incomplete design (each response rated by 3 of 5 experts, as Concord's
//! assignment produces): the expert baseline is the REML ICC over every expert rating; a judge
//! close to the truth passes the alt-test and sits in the expert band; a judge with a +1 bias
//! fails, and PPI++ (experts rate half the responses, judges all) both detects the bias and moves its leaderboard means back to the experts'.

use concord_core::panel::agreement::data::RaterInfo;
use concord_core::panel::agreement::data::ResponseInfo;
use concord_core::panel::agreement::data::SourceInfo;
use concord_core::panel::agreement::verdict::judge_verdicts;
use concord_core::panel::agreement::verdict::VerdictOptions;
use concord_core::panel::agreement::verdict::{FindingFacts, NotComputed};
use concord_core::panel::agreement::AgreementData;
use concord_core::rubric::builtin;
use concord_core::store::RaterKind;
use concord_stats::reml::{reml_icc, Rating};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SOURCES: usize = 4;

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let (u, v): (f64, f64) = (rng.gen_range(f64::EPSILON..1.0), rng.gen());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// `experts` experts (each response rated by 3 of them, or all when fewer), a close judge and a
/// judge biased by +1, `per_source` responses from each of four sources.
fn design(experts: usize, per_source: usize, seed: u64) -> AgreementData {
    let rubric = builtin::mentalbench();
    let sources = (0..SOURCES)
        .map(|i| SourceInfo {
            id: i as i64 + 1,
            key: format!("model{i}"),
            name: format!("model {i}"),
            family: None,
        })
        .collect();
    let mut raters: Vec<RaterInfo> = (0..experts)
        .map(|i| RaterInfo {
            id: i as i64 + 1,
            name: format!("Expert {i}"),
            kind: RaterKind::Expert,
            model_id: None,
            family: None,
        })
        .collect();
    for (k, name) in ["close-judge", "biased-judge"].iter().enumerate() {
        raters.push(RaterInfo {
            id: (experts + k) as i64 + 1,
            name: name.to_string(),
            kind: RaterKind::Judge,
            model_id: Some(name.to_string()),
            family: None,
        });
    }
    let responses: Vec<ResponseInfo> = (0..SOURCES * per_source)
        .map(|i| ResponseInfo::answer(i as i64 + 1, i % SOURCES))
        .collect();
    let mut data = AgreementData::new(&rubric, sources, raters, responses.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let expert_effect: Vec<f64> = (0..experts).map(|_| 0.2 * normal(&mut rng)).collect();
    let score = |x: f64| x.round().clamp(1.0, 5.0);
    for r in &responses {
        for criterion in 1..=7 {
            let truth = 2.2 + 0.5 * r.source as f64 + 0.8 * normal(&mut rng);
            // Experts rate every other response (the expensive subset); judges rate all.
            let k = if ((r.id - 1) as usize / SOURCES).is_multiple_of(2) {
                experts.min(3)
            } else {
                0
            };
            let first = rng.gen_range(0..experts);
            for step in 0..k {
                let e = (first + step) % experts;
                let v = score(truth + expert_effect[e] + 0.7 * normal(&mut rng));
                data.apply(e as i64 + 1, r.id, criterion, Some(v))
                    .expect("known ids");
            }
            let close = score(truth + 0.2 * normal(&mut rng));
            let biased = score(truth + 1.0 + 0.7 * normal(&mut rng));
            data.apply(experts as i64 + 1, r.id, criterion, Some(close))
                .expect("known ids");
            data.apply(experts as i64 + 2, r.id, criterion, Some(biased))
                .expect("known ids");
        }
    }
    data
}

#[test]
fn incomplete_design_verdicts_separate_a_close_judge_from_a_biased_one() {
    let data = design(5, 60, 3);
    let report = judge_verdicts(&data, &VerdictOptions::default());
    assert_eq!(report.baselines.len(), 7, "one baseline per attribute");
    let base = &report.baselines[0];
    assert!(
        base.method.contains("incomplete") && base.method.contains("REML"),
        "the panel says which method it used: {}",
        base.method
    );
    // The baseline is the REML ICC(A,1) of every expert rating.
    let mut ratings = Vec::new();
    for e in 0..5 {
        for (i, v) in data.series(e, 0).iter().enumerate() {
            if !v.is_nan() {
                ratings.push(Rating {
                    target: i,
                    rater: e,
                    score: *v,
                });
            }
        }
    }
    assert_eq!(
        ratings.len(),
        120 * 3,
        "three of five experts rated each expert-rated response"
    );
    let fit = reml_icc(&ratings).expect("a valid design");
    assert_eq!(base.n_ratings, 360, "every expert rating is used");
    assert_eq!(
        base.icc_a1,
        Some(fit.icc[1].icc),
        "the baseline is REML ICC(A,1)"
    );

    assert_eq!(report.cards.len(), 14, "two judges × seven attributes");
    for card in &report.cards {
        let alt = card
            .alt_test
            .as_ref()
            .expect("five experts allow the alt-test");
        assert_eq!(
            alt.metric, "neg_rmse",
            "Likert attributes use negative RMSE"
        );
        for f in [&card.alt_test_finding, &card.icc_finding, &card.ppi_finding] {
            assert!(
                !f.rule.is_empty() && !f.citation.is_empty(),
                "every finding states its rule and source"
            );
        }
        match &card.ppi_finding.facts {
            FindingFacts::PpiBias { detected, bias, .. } => {
                assert_eq!(
                    *detected,
                    card.ppi_finding.ok.map(|ok| !ok),
                    "{}: the facts say what the summary says (detected when not ok)",
                    card.attribute
                );
                assert_eq!(
                    *bias, card.ppi_bias,
                    "{}: the bias the card shows",
                    card.attribute
                );
            }
            other => panic!("a PPI++ finding carries PPI++ facts: {other:?}"),
        }
        match &card.icc_finding.facts {
            FindingFacts::IccBand { verdict, band, .. } => {
                assert_eq!(
                    (*verdict, *band),
                    (card.band_verdict, card.band),
                    "{}: the ICC finding's facts are the card's placement",
                    card.attribute
                );
            }
            other => panic!("an ICC finding carries ICC facts: {other:?}"),
        }
        if card.judge == "biased-judge" {
            assert!(
                !alt.passed,
                "{}: a +1-biased judge fails the alt-test",
                card.attribute
            );
            assert_eq!(
                card.ppi_finding.ok,
                Some(false),
                "{}: PPI++ detects the bias",
                card.attribute
            );
            let bias = card.ppi_bias.expect("defined");
            assert!(
                bias > 0.5,
                "{}: the bias is about +1 (got {bias})",
                card.attribute
            );
            assert!(
                !card.can_replace,
                "a biased judge cannot replace the experts"
            );
        } else {
            assert!(
                alt.passed,
                "{}: a judge closer to the truth than any expert passes (ω = {})",
                card.attribute, alt.winning_rate
            );
            assert_ne!(
                card.icc_finding.ok,
                Some(false),
                "{}: the close judge is not below the expert band ({})",
                card.attribute,
                card.icc_finding.summary
            );
        }
    }
    assert_eq!(
        report.leaderboard.len(),
        2 * 7 * SOURCES,
        "judge × attribute × model rows"
    );
    let rows: Vec<_> = report
        .leaderboard
        .iter()
        .filter(|r| r.judge == "biased-judge")
        .collect();
    let mean = |f: &dyn Fn(&&concord_core::panel::agreement::verdict::LeaderboardRow) -> f64| {
        rows.iter().map(f).sum::<f64>() / rows.len() as f64
    };
    let inflated = mean(&|r| r.judge_mean.unwrap() - r.expert_mean.unwrap());
    let corrected = mean(&|r| (r.ppi_mean.unwrap() - r.expert_mean.unwrap()).abs());
    assert!(
        inflated > 0.5,
        "the biased judge's means lie above the experts' by {inflated} on average"
    );
    assert!(
        corrected < inflated / 2.0,
        "PPI++ brings the means back towards the experts' (mean gap {corrected} vs {inflated})"
    );
}

#[test]
fn two_experts_say_why_the_alt_test_is_missing() {
    let data = design(2, 30, 4);
    let report = judge_verdicts(&data, &VerdictOptions::default());
    let card = &report.cards[0];
    assert!(
        card.alt_test.is_none(),
        "two experts are too few for the alt-test"
    );
    assert_eq!(
        card.alt_test_finding.ok, None,
        "not computable is neither pass nor fail"
    );
    assert!(
        card.alt_test_finding.summary.contains("at least 3"),
        "the card says what is needed: {}",
        card.alt_test_finding.summary
    );
    match &card.alt_test_finding.facts {
        FindingFacts::AltTest {
            not_computed: Some(NotComputed::TooFewExperts { experts }),
            result: None,
            metric,
            ..
        } => {
            assert_eq!(*experts, 2, "the facts say how many experts there were");
            assert_eq!(
                metric, "neg_rmse",
                "and the alignment metric of a 1–5 scale"
            );
        }
        other => panic!("the window is told why the alt-test is missing: {other:?}"),
    }
    assert!(
        !card.can_replace,
        "no verdict of replacement without the alt-test"
    );
    assert!(
        report.baselines[0].method.contains("complete"),
        "two experts rating everything is a complete design: {}",
        report.baselines[0].method
    );
}

/// The agreement table's expert band at item level is the experts' REML interval (all experts,
/// incomplete design) for ICC(A,1) and ICC(C,1), each row says so, and the judges' verdicts are
/// placed against it; at system level the band stays the span of the expert pairs' intervals.
#[test]
fn the_item_level_band_is_the_reml_baseline_and_says_so() {
    use concord_core::panel::agreement::verdict::expert_baselines;
    use concord_core::panel::agreement::verdict::verdict;
    use concord_core::panel::agreement::AgreementEngine;
    use concord_core::panel::agreement::AgreementOptions;
    use concord_core::panel::agreement::Comparison;
    use concord_core::panel::agreement::Level;
    use concord_core::panel::agreement_table::table;
    use concord_core::panel::agreement_table::use_reml_bands;
    use concord_core::panel::agreement_table::BandMethod;
    use concord_core::panel::agreement_table::CiChoice;
    use concord_core::panel::agreement_table::IccChoice;
    use concord_core::panel::agreement_table::TableView;
    let data = design(5, 30, 7);
    let baselines = expert_baselines(&data);
    let options = AgreementOptions {
        resamples: 100,
        ..AgreementOptions::mentalalign("mentalbench")
    };
    let report = AgreementEngine::new(data, options).report().clone();
    for (icc, pick) in [(IccChoice::A1, 0usize), (IccChoice::C1, 1usize)] {
        let view = TableView {
            level: Level::Item,
            comparison: Comparison::JudgeVsExperts,
            icc,
            ci: CiChoice::F,
        };
        let mut t = table(&report, view);
        use_reml_bands(&mut t, &baselines);
        let rows: Vec<_> = t.rows.iter().filter(|r| !r.is_group).collect();
        assert!(!rows.is_empty(), "the table has attribute rows");
        for row in rows {
            let base = baselines
                .iter()
                .find(|b| b.criterion == row.criterion)
                .expect("a baseline per criterion");
            let ci = if pick == 0 {
                base.ci95_a1
            } else {
                base.ci95_c1
            };
            let [Some(lo), Some(hi)] = ci else {
                panic!("five experts on 120 responses give a REML interval: {base:?}");
            };
            assert_eq!(
                (row.expert_band, row.band_method),
                (Some([lo, hi]), Some(BandMethod::Reml)),
                "{icc:?} {}: the band is the experts' REML interval and says so",
                row.criterion
            );
            for cell in row.cells.iter().flatten() {
                assert_eq!(
                    cell.verdict,
                    verdict(cell.ci95, row.expert_band),
                    "each judge is placed against the REML band"
                );
            }
        }
    }
    let system = TableView {
        level: Level::System,
        comparison: Comparison::JudgeVsExperts,
        icc: IccChoice::C1,
        ci: CiChoice::Bootstrap,
    };
    let mut t = table(&report, system);
    let before = t.clone();
    use_reml_bands(&mut t, &baselines);
    assert_eq!(
        t, before,
        "at system level (sources as targets) the REML baseline of responses does not apply"
    );
    assert!(
        t.rows
            .iter()
            .all(|r| r.band_method.is_none() || r.band_method == Some(BandMethod::ExpertPairs)),
        "system-level bands are the expert pairs' span"
    );
}

/// Where the experts overlap on too few responses their band spans nearly 0–1 (the demo's
/// session rubric: two conversations rated by both demo experts, band 0.00–1.00) or shrinks to a
/// point, and every judge would read "inside", "above" or "below" it by accident: no verdict is
/// given against such a band — not on the card, not in the table, at item or system level —, each
/// says the band cannot place a judge and on how few responses it rests; and a leaderboard row
/// without a PPI++ mean says why.
#[test]
fn a_band_that_cannot_discriminate_places_no_judge_and_says_why() {
    use concord_core::base::clock::SystemClock;
    use concord_core::intake::demo::create_demo_at;
    use concord_core::panel::agreement::verdict::{
        band_uninformative, expert_baselines, PpiMissing, MIN_BAND_OVERLAP,
        UNINFORMATIVE_BAND_WIDTH,
    };
    use concord_core::panel::agreement::{AgreementEngine, AgreementOptions, Comparison, Level};
    use concord_core::panel::agreement_table::{
        table, use_reml_bands, CiChoice, IccChoice, TableView,
    };
    let dir = tempfile::tempdir().unwrap();
    let store = create_demo_at(
        &dir.path().join("demo.concord"),
        std::sync::Arc::new(SystemClock),
        7,
    )
    .unwrap();
    let data = AgreementData::load_compared(&store, "session-care").unwrap();
    let verdicts = judge_verdicts(&data, &VerdictOptions::default());
    let wide: Vec<_> = verdicts
        .cards
        .iter()
        .filter(|c| c.band.is_some_and(|b| band_uninformative(b, Some(2))))
        .collect();
    assert!(
        !wide.is_empty(),
        "the demo's session rubric has bands too wide to discriminate: {:?}",
        verdicts.cards.iter().map(|c| c.band).collect::<Vec<_>>()
    );
    for card in &wide {
        let [lo, hi] = card.band.unwrap();
        assert!(
            hi - lo >= UNINFORMATIVE_BAND_WIDTH,
            "{}: a band of {lo:.2}–{hi:.2} is too wide",
            card.criterion
        );
        assert_eq!(
            card.band_verdict, None,
            "{}: no placement against a band of {lo:.2}–{hi:.2}",
            card.criterion
        );
        let FindingFacts::IccBand {
            verdict,
            band_uninformative: said,
            overlap,
            ..
        } = &card.icc_finding.facts
        else {
            panic!("the ICC finding carries its band facts");
        };
        assert!(
            verdict.is_none() && *said && *overlap == 2 && *overlap < MIN_BAND_OVERLAP,
            "{}: the finding says the band is too wide and rests on 2 responses rated by two experts",
            card.criterion
        );
        assert_eq!(
            card.icc_finding.ok, None,
            "{}: the ICC finding neither supports nor argues against replacement",
            card.criterion
        );
        assert!(
            card.icc_finding.summary.contains("cannot place"),
            "{}: the summary says why there is no verdict: {}",
            card.criterion,
            card.icc_finding.summary
        );
        assert!(!card.can_replace, "no 'can replace' without a placement");
    }

    let baselines = expert_baselines(&data);
    let report = AgreementEngine::new(
        data,
        AgreementOptions {
            resamples: 100,
            ..AgreementOptions::mentalalign("session-care")
        },
    )
    .report()
    .clone();
    let mut t = table(
        &report,
        TableView {
            level: Level::Item,
            comparison: Comparison::JudgeVsExperts,
            icc: IccChoice::A1,
            ci: CiChoice::F,
        },
    );
    use_reml_bands(&mut t, &baselines);
    let wide_rows: Vec<_> = t.rows.iter().filter(|r| r.band_uninformative).collect();
    assert!(
        !wide_rows.is_empty(),
        "the table marks the rows whose band is too wide"
    );
    for row in wide_rows {
        assert!(
            row.expert_band
                .is_some_and(|b| band_uninformative(b, row.band_overlap))
                && row.band_overlap == Some(2),
            "{}: a row marked uninformative has such a band, resting on 2 responses",
            row.criterion
        );
        assert!(
            row.cells.iter().flatten().all(|c| c.verdict.is_none()),
            "{}: no cell reads above, inside or below such a band",
            row.criterion
        );
    }

    let system = table(
        &report,
        TableView {
            level: Level::System,
            comparison: Comparison::JudgeVsExperts,
            icc: IccChoice::C1,
            ci: CiChoice::Bootstrap,
        },
    );
    for row in system.rows.iter().filter(|r| r.expert_band.is_some()) {
        assert!(
            row.band_uninformative && row.cells.iter().flatten().all(|c| c.verdict.is_none()),
            "{}: a system-level band over two sources ({:?}) places no judge either",
            row.criterion,
            row.expert_band
        );
    }

    let missing: Vec<_> = verdicts
        .leaderboard
        .iter()
        .filter(|r| r.ppi_mean.is_none())
        .collect();
    assert!(
        !missing.is_empty(),
        "every demo response the judge scored is expert-rated: PPI++ adds nothing per source"
    );
    for row in missing {
        assert_eq!(
            row.ppi_missing,
            Some(PpiMissing::NoJudgeOnly),
            "{} / {}: the row says why it has no PPI++ mean",
            row.criterion,
            row.source
        );
    }
    assert!(
        verdicts
            .leaderboard
            .iter()
            .filter(|r| r.ppi_mean.is_some())
            .all(|r| r.ppi_missing.is_none()),
        "a row with a PPI++ mean gives no reason for a missing one"
    );
}
