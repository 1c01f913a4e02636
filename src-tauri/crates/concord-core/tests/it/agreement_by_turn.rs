//! Agreement on conversations (a study of transcripts written through the store API): the figures
//! of each turn number equal an independent computation from the values written, and the turn's
//! interval agrees with a conversation-cluster bootstrap written here from scratch; the cluster
//! interval is much wider than the naive one when the replies of a conversation are correlated
//! and about as wide when they are not; turns with too few items give their reason instead of
//! figures, and a turn of fewer than ten conversations its figures without an interval; a session
//! rubric is reported item by item (one per conversation) and has no turns;
//! an earlier release's single-turn report keeps its F-based item intervals.

use concord_core::panel::adjudication::{referenced_data, AgreementReference};
use concord_core::panel::agreement::{
    self, AgreementCell, AgreementOptions, CiMethod, Comparison, Level,
};
use concord_core::panel::strata::{by_facet, Facet};
use concord_core::rubric::Scope;
use concord_core::store::Store;
use concord_stats::bootstrap::{cluster_options, percentile_ci, quantile_sorted};
use concord_stats::icc::icc_c1_a1_resampled;
use concord_testsupport::lead_study::{clock, memory_study, rate_all, rater_id};
use concord_testsupport::transcript_study::{
    write_transcripts, TranscriptDesign, TranscriptValues,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

const RESAMPLES: usize = 1000;

fn options(rubric: &str) -> AgreementOptions {
    AgreementOptions {
        resamples: RESAMPLES,
        levels: vec![Level::System, Level::Item],
        groups: false,
        per_expert: false,
        ..AgreementOptions::mentalalign(rubric)
    }
}

fn study(design: &TranscriptDesign) -> (Store, TranscriptValues) {
    let mut store = Store::in_memory(clock()).expect("an in-memory study");
    let values = write_transcripts(&mut store, design);
    (store, values)
}

/// The judge-versus-experts cell of `criterion` at item level.
fn item_cell<'a>(cells: &'a [AgreementCell], criterion: &str) -> &'a AgreementCell {
    cells
        .iter()
        .find(|c| {
            c.comparison == Comparison::JudgeVsExperts
                && c.level == Level::Item
                && c.criterion == criterion
        })
        .expect("the judge-versus-experts item cell of the criterion")
}

/// ICC(C,1) and ICC(A,1) of n × 2 targets from the two-way ANOVA mean squares (McGraw & Wong,
/// 1996), written out here without the statistics crate.
fn two_way(pairs: &[(f64, f64)]) -> (f64, f64) {
    let n = pairs.len() as f64;
    let grand = pairs.iter().map(|p| p.0 + p.1).sum::<f64>() / (2.0 * n);
    let col = [
        pairs.iter().map(|p| p.0).sum::<f64>() / n,
        pairs.iter().map(|p| p.1).sum::<f64>() / n,
    ];
    let ss_rows: f64 = pairs
        .iter()
        .map(|p| 2.0 * ((p.0 + p.1) / 2.0 - grand).powi(2))
        .sum();
    let ss_cols: f64 = col.iter().map(|m| n * (m - grand).powi(2)).sum();
    let ss_total: f64 = pairs
        .iter()
        .map(|p| (p.0 - grand).powi(2) + (p.1 - grand).powi(2))
        .sum();
    let ss_error = ss_total - ss_rows - ss_cols;
    let (msr, msc, mse) = (ss_rows / (n - 1.0), ss_cols, ss_error / (n - 1.0));
    let c1 = (msr - mse) / (msr + mse);
    let a1 = (msr - mse) / (msr + mse + 2.0 * (msc - mse) / n);
    (c1, a1)
}

/// Per item of `turn` (all turns with `None`): the experts' mean, the judge's value and the
/// item's conversation, in response id order.
fn pairs_at(v: &TranscriptValues, turn: Option<i64>, criterion: &str) -> Vec<((f64, f64), usize)> {
    let judge = &v.judges[0];
    let mut items: Vec<_> = v
        .items
        .iter()
        .filter(|i| turn.is_none() || i.turn == turn)
        .collect();
    items.sort_by_key(|i| i.response_id);
    items
        .into_iter()
        .filter_map(|i| {
            let key = |who: &str| (who.to_string(), i.response_id, criterion.to_string());
            let experts: Vec<f64> = v
                .experts
                .iter()
                .filter_map(|e| v.values.get(&key(e)).map(|&x| x as f64))
                .collect();
            let j = *v.values.get(&key(judge))? as f64;
            (!experts.is_empty()).then(|| {
                (
                    (experts.iter().sum::<f64>() / experts.len() as f64, j),
                    i.conversation,
                )
            })
        })
        .collect()
}

/// A conversation-cluster percentile bootstrap written here from scratch: draw conversations
/// with replacement, gather their pairs, compute ICC(C,1) with [`two_way`], numpy's linear
/// percentiles of the finite replicates.
fn cluster_bootstrap(pairs: &[((f64, f64), usize)], resamples: usize, seed: u64) -> (f64, f64) {
    let mut by_conversation: BTreeMap<usize, Vec<(f64, f64)>> = BTreeMap::new();
    for &(p, c) in pairs {
        by_conversation.entry(c).or_default().push(p);
    }
    let clusters: Vec<Vec<(f64, f64)>> = by_conversation.into_values().collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut replicates = Vec::new();
    for _ in 0..resamples {
        let mut drawn = Vec::new();
        for _ in 0..clusters.len() {
            drawn.extend_from_slice(&clusters[rng.gen_range(0..clusters.len())]);
        }
        let (c1, _) = two_way(&drawn);
        if c1.is_finite() {
            replicates.push(c1);
        }
    }
    replicates.sort_by(f64::total_cmp);
    (
        quantile_sorted(&replicates, 0.025).expect("replicates"),
        quantile_sorted(&replicates, 0.975).expect("replicates"),
    )
}

#[test]
fn each_turn_agrees_with_an_independent_computation() {
    let design = TranscriptDesign::correlated(40, 7);
    let (store, values) = study(&design);
    let opts = options("mentalbench");
    let (data, _fits) =
        referenced_data(&store, &opts, AgreementReference::Experts).expect("the data");
    let split = by_facet(&store, &data, Facet::Turn, &opts).expect("by turn");
    let turns: Vec<Option<&str>> = split.strata.iter().map(|s| s.value.as_deref()).collect();
    assert_eq!(
        turns,
        vec![Some("2"), Some("4"), Some("6"), Some("8")],
        "one stratum per turn number, in numeric order (replies at 2, 4, 6; candidates at 8)"
    );
    for stratum in &split.strata {
        let turn: i64 = stratum.value.as_deref().unwrap().parse().unwrap();
        let report = stratum
            .report
            .as_ref()
            .unwrap_or_else(|| panic!("turn {turn} has 40 conversations: it has figures"));
        for criterion in ["guidance", "empathy"] {
            let cell = item_cell(&report.cells, criterion);
            let pairs = pairs_at(&values, Some(turn), criterion);
            let plain: Vec<(f64, f64)> = pairs.iter().map(|p| p.0).collect();
            let (c1, a1) = two_way(&plain);
            let bias = plain.iter().map(|(r, j)| j - r).sum::<f64>() / plain.len() as f64;
            let mse = plain.iter().map(|(r, j)| (j - r).powi(2)).sum::<f64>() / plain.len() as f64;
            let close = |a: Option<f64>, b: f64| (a.expect("a figure") - b).abs() < 1e-9;
            assert_eq!(
                cell.n_targets,
                plain.len(),
                "turn {turn} {criterion}: every rated item of the turn is a target"
            );
            assert!(
                close(cell.icc_c1, c1) && close(cell.icc_a1, a1),
                "turn {turn} {criterion}: ICC(C,1) and ICC(A,1) equal the ANOVA computed here ({:?}, {:?} vs {c1}, {a1})",
                cell.icc_c1,
                cell.icc_a1
            );
            assert!(
                close(cell.bias, bias) && close(cell.mse, mse),
                "turn {turn} {criterion}: bias and MSE are the judge's mean (squared) difference from the experts' mean"
            );
            let conversations: BTreeSet<usize> = pairs.iter().map(|p| p.1).collect();
            assert_eq!(
                (cell.ci_method, cell.n_clusters),
                (CiMethod::Cluster, Some(conversations.len())),
                "turn {turn}: the interval resamples the turn's conversations"
            );
            assert_eq!(
                stratum.n_conversations,
                Some(conversations.len()),
                "turn {turn}: the stratum counts its conversations"
            );
            let (lo, hi) = (cell.ci95[0].unwrap(), cell.ci95[1].unwrap());
            let (mine_lo, mine_hi) = cluster_bootstrap(&pairs, 4000, 99);
            // Two bootstraps on different streams differ by Monte Carlo error only: at 1,000
            // resamples an end's standard error is about 2% of the interval's width, so 0.01
            // plus a tenth of the width is five standard errors.
            let tolerance = 0.01 + 0.1 * (hi - lo);
            assert!(
                (lo - mine_lo).abs() <= tolerance && (hi - mine_hi).abs() <= tolerance,
                "turn {turn} {criterion}: the interval [{lo:.3}, {hi:.3}] is the cluster bootstrap's ([{mine_lo:.3}, {mine_hi:.3}] drawn here)"
            );
        }
    }
    let last = split.strata.last().unwrap();
    assert_eq!(
        (last.n_compared, last.n_conversations),
        (40 * 3, Some(40)),
        "the candidates at the last turn are three items of each conversation, resampled together"
    );
}

/// The width of the naive interval: the same percentile bootstrap drawing items as if they were
/// independent.
fn naive_width(pairs: &[(f64, f64)], seed: u64) -> f64 {
    let b = percentile_ci(
        pairs.len(),
        &cluster_options(RESAMPLES),
        &mut ChaCha8Rng::seed_from_u64(seed),
        |idx| icc_c1_a1_resampled(pairs, idx).ok().and_then(|e| e.c1),
    )
    .expect("a bootstrap");
    b.upper.unwrap() - b.lower.unwrap()
}

#[test]
fn the_cluster_interval_is_wider_only_when_a_conversations_replies_are_correlated() {
    let mut ratios = Vec::new();
    for (name, design) in [
        ("correlated", TranscriptDesign::correlated(60, 11)),
        ("independent", TranscriptDesign::independent(60, 11)),
    ] {
        let (store, values) = study(&design);
        let report = agreement::report(&store, options("mentalbench")).expect("the report");
        let cell = item_cell(&report.cells, "guidance");
        assert_eq!(
            (cell.ci_method, cell.n_clusters),
            (CiMethod::Cluster, Some(60)),
            "{name}: replies of transcripts get the conversation-cluster interval over all 60 conversations"
        );
        let coverage = report
            .conversations
            .as_ref()
            .expect("a report over transcripts says what it covers");
        assert_eq!(
            (coverage.scope, coverage.items, coverage.conversations),
            (Scope::Reply, 60 * 6, 60),
            "{name}: six rated replies in each of 60 conversations"
        );
        let pairs: Vec<(f64, f64)> = pairs_at(&values, None, "guidance")
            .into_iter()
            .map(|p| p.0)
            .collect();
        let cluster = cell.ci95[1].unwrap() - cell.ci95[0].unwrap();
        ratios.push((name, cluster / naive_width(&pairs, 5)));
    }
    let (correlated, independent) = (ratios[0].1, ratios[1].1);
    assert!(
        correlated > 1.6,
        "six replies sharing a conversation's effect and the judge's error carry far less than six \
         independent ones: the cluster interval must be much wider than the naive one (ratio {correlated:.2})"
    );
    assert!(
        (0.8..=1.25).contains(&independent),
        "independent replies: resampling conversations or items gives about the same interval \
         (ratio {independent:.2})"
    );
}

#[test]
fn turns_with_too_few_items_give_their_reason_and_no_figure() {
    let design = TranscriptDesign {
        expert_conversations: 1,
        ..TranscriptDesign::correlated(6, 3)
    };
    let (store, _) = study(&design);
    let opts = options("mentalbench");
    let (data, _fits) =
        referenced_data(&store, &opts, AgreementReference::Experts).expect("the data");
    let split = by_facet(&store, &data, Facet::Turn, &opts).expect("by turn");
    assert_eq!(split.strata.len(), 4, "every turn with items is listed");
    for s in &split.strata[..3] {
        let why = s
            .not_computed
            .as_deref()
            .expect("one rated reply has no ICC");
        assert!(
            s.report.is_none() && why.contains("only 1 response") && why.contains("turn"),
            "a turn with one expert-rated reply says so: {why}"
        );
    }
    let last = &split.strata[3];
    let why = last.not_computed.as_deref().expect("one conversation");
    assert!(
        last.report.is_none() && why.contains("1 conversation") && why.contains("resamples"),
        "three candidates of one conversation cannot be resampled by conversation: {why}"
    );
    let json = serde_json::to_string(&split).expect("the split serialises");
    assert!(
        !json.contains("NaN") && json.contains("not_computed"),
        "reasons, never undefined numbers"
    );
}

#[test]
fn a_session_rubric_is_reported_item_by_item_and_has_no_turns() {
    let design = TranscriptDesign {
        session: true,
        ..TranscriptDesign::correlated(30, 5)
    };
    let (store, values) = study(&design);
    let opts = options("session-quality");
    let report = agreement::report(&store, opts.clone()).expect("the session report");
    let coverage = report
        .conversations
        .as_ref()
        .expect("a session rubric's coverage");
    assert_eq!(
        (coverage.scope, coverage.items, coverage.conversations),
        (Scope::Session, 30, 30),
        "one session item per conversation"
    );
    assert!(
        coverage.turns.is_empty(),
        "a session item stands at no turn"
    );
    let cell = item_cell(&report.cells, "alliance");
    let sessions: Vec<((f64, f64), usize)> = {
        let mut v = values.clone();
        v.items.retain(|i| i.turn.is_none());
        pairs_at(&v, None, "alliance")
    };
    let plain: Vec<(f64, f64)> = sessions.iter().map(|p| p.0).collect();
    let (c1, _) = two_way(&plain);
    assert!(
        (cell.icc_c1.unwrap() - c1).abs() < 1e-9 && cell.n_targets == 30,
        "the judge against the experts' mean of each session, 30 targets"
    );
    assert_eq!(
        (cell.ci_method, cell.n_clusters),
        (CiMethod::F, None),
        "one item per conversation: the items are independent, the F-based interval stands"
    );
    let (data, _fits) =
        referenced_data(&store, &opts, AgreementReference::Experts).expect("the data");
    let split = by_facet(&store, &data, Facet::Turn, &opts).expect("by turn");
    assert_eq!(
        split.strata.len(),
        1,
        "one stratum: the items without a turn"
    );
    let why = split.strata[0].not_computed.as_deref().unwrap_or("");
    assert!(
        split.strata[0].value.is_none() && why.contains("session"),
        "a session rubric has no agreement by turn, and says why: {why}"
    );
}

#[test]
fn a_single_turn_study_keeps_its_item_intervals() {
    let mut store = memory_study(12, &["Ana", "Ben"]);
    let (ana, ben, judge) = (
        rater_id(&store, "Ana"),
        rater_id(&store, "Ben"),
        rater_id(&store, "gpt-4o-judge"),
    );
    let ids = store.response_ids_in_order().expect("ids");
    for (i, &r) in ids.iter().enumerate() {
        rate_all(&mut store, ana, r, 1 + (i as i64 * 7) % 5, None);
        rate_all(&mut store, ben, r, 1 + (i as i64 * 3) % 5, None);
        rate_all(&mut store, judge, r, 1 + (i as i64 * 5) % 5, None);
    }
    let report = agreement::report(&store, options("mentalbench")).expect("the report");
    let cell = item_cell(&report.cells, "guidance");
    assert_eq!(
        (
            cell.ci_method,
            cell.n_clusters,
            report.conversations.is_none()
        ),
        (CiMethod::F, None, true),
        "an earlier release's single-turn items keep the F-based interval and the report its shape"
    );
    let json = serde_json::to_value(&report).expect("json");
    assert!(
        json.get("conversations").is_none()
            && json["cells"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c.get("n_clusters").is_none()),
        "the report's JSON has no key an earlier release did not write"
    );
}

#[test]
fn a_turn_of_few_conversations_has_its_figures_but_no_interval() {
    use concord_core::panel::agreement::MIN_INTERVAL_CONVERSATIONS;
    let few = MIN_INTERVAL_CONVERSATIONS - 1;
    let (store, _) = study(&TranscriptDesign::correlated(few, 9));
    let opts = options("mentalbench");
    let (data, _fits) =
        referenced_data(&store, &opts, AgreementReference::Experts).expect("the data");
    let split = by_facet(&store, &data, Facet::Turn, &opts).expect("by turn");
    for s in &split.strata {
        let report = s
            .report
            .as_ref()
            .expect("two or more conversations give figures");
        let cell = item_cell(&report.cells, "guidance");
        assert!(
            cell.icc_c1.is_some() && cell.n_clusters == Some(few),
            "turn {:?}: the figures over {few} conversations stand",
            s.value
        );
        assert_eq!(
            (cell.ci95, cell.status),
            ([None, None], None),
            "turn {:?}: resamples of {few} conversations give no interval (nor a precision)",
            s.value
        );
    }
}
