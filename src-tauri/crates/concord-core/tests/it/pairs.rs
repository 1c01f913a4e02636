//! Pairwise preferences end to end on a study of ten conversations with ten answers each: the
//! balanced design, exactly-k assignment with recorded sides, an expert's verdicts in the terms
//! they saw, and pairwise judge runs against the loopback judge (which prefers the answer with the
//! higher known quality, `judge_server::pair_choice`) asked both ways round — once by a fair
//! judge, once by one that says "A" where the answers are equal (a position bias).

use concord_core::judge::{
    execute_run, open_run, CancellationToken, Execution, ProviderKind, RunSettings,
};
use concord_core::store::{Store, Winner};
use concord_core::workflow::pairs::{self, DesignMethod, ShownChoice};
use concord_testsupport::judge_server::{pair_choice, pair_study, FakeJudge};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

const CONVERSATIONS: u64 = 10;
const SOURCES: u64 = 10;

/// The item number an answer's text carries.
pub(crate) fn item_of(store: &Store, response_id: i64) -> u64 {
    let text = store.response_text(response_id).unwrap().unwrap();
    concord_testsupport::judge_server::item_in(&text).unwrap()
}

pub(crate) fn designed(path: &std::path::Path) -> (Store, i64) {
    let mut store = pair_study(path, CONVERSATIONS, SOURCES);
    let report = pairs::design(&mut store, None, None, DesignMethod::Balanced(9), 2)
        .expect("the balanced design is drawn");
    assert_eq!(
        report.rubric, "mentalbench-pairs",
        "the shipped pairwise form of MentalBench"
    );
    assert_eq!(
        report.pairs, 90,
        "nine pairs from each of ten conversations"
    );
    assert_eq!(
        report.source_pair_meetings,
        (2, 2),
        "90 pairs over the 45 pairs of ten sources: each two sources meet twice"
    );
    let rubric = pairs::designed_rubric(&store, None).unwrap().id;
    (store, rubric)
}

pub(crate) fn judge(store: &mut Store, server: &FakeJudge, name: &str) -> i64 {
    let mut s = RunSettings::new(ProviderKind::OpenaiCompatible, &server.base_url(), name);
    s.rubric = Some("mentalbench-pairs".into());
    s.both_orders = true;
    s.max_tokens = 256;
    let run = open_run(store, &s).expect("a pairwise run opens").run_id;
    let report = execute_run(
        store,
        run,
        &Execution {
            concurrency: 4,
            ..Execution::default()
        },
        None,
        &CancellationToken::new(),
        &mut |_| {},
    )
    .expect("the pairwise run executes");
    assert_eq!(
        report.status.done, 180,
        "90 pairs asked both ways round are 180 answered calls"
    );
    store.rater_named(name).unwrap().unwrap().id
}

#[test]
fn a_pairwise_judge_asked_both_orders_is_recorded_in_the_pairs_own_terms() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, rubric) = designed(&dir.path().join("pairs.concord"));
    let server = FakeJudge::start(Duration::ZERO, false, None);
    let fair = judge(&mut store, &server, "fair-judge");
    server.state.position_bias.store(true, Ordering::SeqCst);
    let biased = judge(&mut store, &server, "biased-judge");
    assert_eq!(
        server.state.pair_requests.load(Ordering::SeqCst),
        360,
        "two judges, 180 pairwise prompts each"
    );

    let read = store.read();
    let pairs_by_id: HashMap<i64, _> = read
        .pairs(rubric)
        .unwrap()
        .into_iter()
        .map(|p| (p.id, p))
        .collect();
    let criteria: HashMap<i64, String> = read
        .criterion_ids(rubric)
        .unwrap()
        .into_iter()
        .map(|(k, id)| (id, k))
        .collect();
    let verdicts = read.pair_verdicts(rubric).unwrap();
    assert_eq!(
        verdicts.len(),
        2 * 180 * 8,
        "each call gives a verdict on all eight criteria"
    );
    let mut by_order: HashMap<(i64, i64, i64), [Option<Winner>; 2]> = HashMap::new();
    for v in &verdicts {
        let p = &pairs_by_id[&v.pair_id];
        let (l, r) = (
            item_of(&store, p.left_response_id),
            item_of(&store, p.right_response_id),
        );
        let key = &criteria[&v.criterion_id];
        let (first, second) = if v.left_first { (l, r) } else { (r, l) };
        let said = pair_choice(first, second, key, v.rater_id == biased);
        let expected = match (said, v.left_first) {
            ("tie", _) => Winner::Tie,
            ("A", true) | ("B", false) => Winner::Left,
            _ => Winner::Right,
        };
        assert_eq!(
            v.winner,
            expected,
            "the judge's {said} with the left answer shown {} is the pair's {expected:?}",
            if v.left_first { "first" } else { "second" }
        );
        by_order
            .entry((v.rater_id, v.pair_id, v.criterion_id))
            .or_default()[usize::from(v.left_first)] = Some(v.winner);
    }
    let inconsistent = |rater: i64| {
        by_order
            .iter()
            .filter(|((r, _, _), w)| *r == rater && w[0] != w[1])
            .count()
    };
    assert_eq!(
        inconsistent(fair),
        0,
        "a judge without position bias gives the same verdict both ways round"
    );
    assert!(
        inconsistent(biased) > 0,
        "the biased judge prefers whichever equal answer comes first (sources s and s + 5 are equal), so its verdicts flip"
    );
    let status = pairs::status(&store, None).unwrap();
    let judges: Vec<_> = status.raters.iter().filter(|r| r.kind == "judge").collect();
    assert!(
        judges
            .iter()
            .all(|j| j.pairs == 90 && j.done == 90 && j.verdicts == 1440),
        "each judge has judged every pair on every criterion, twice: {judges:?}"
    );
    // The long CSV: one row per verdict after the ratings, with the pair's sides, the winner in
    // its terms and the position the left answer was shown in.
    let mut csv = Vec::new();
    let summary = concord_core::outputs::export::write_long_csv(
        &store,
        &mut csv,
        concord_core::outputs::export::CsvOptions::default(),
    )
    .unwrap();
    assert_eq!(
        summary.rows,
        2 * 180 * 8,
        "every verdict is a row (the study has no ratings)"
    );
    let mut reader = csv::Reader::from_reader(csv.as_slice());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("the long CSV has a {name} column"))
    };
    let (left, right, winner, position) = (
        col("left"),
        col("right"),
        col("winner"),
        col("position_left"),
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2 * 180 * 8, "one row per verdict");
    assert!(
        rows.iter()
            .all(|r| r[left].starts_with('s') && r[right].starts_with('s') && r[left] < r[right]),
        "left and right name the pair's answers by source, left the lower response id"
    );
    assert!(
        rows.iter()
            .all(|r| ["left", "right", "tie"].contains(&&r[winner])
                && ["1", "2"].contains(&&r[position])),
        "winner is left, right or tie and position_left is 1 or 2"
    );
    let shown_first = rows.iter().filter(|r| &r[position] == "1").count();
    assert_eq!(
        shown_first,
        rows.len() / 2,
        "asked both ways round, the left answer was shown first in half the verdicts"
    );
    let chain = store.verify_audit_chain().unwrap();
    assert!(
        chain.broken.is_none() && chain.entries > 0,
        "the design, the calls and the verdicts are sealed into the audit chain: {chain:?}"
    );
}

#[test]
fn experts_get_exactly_k_pairs_each_and_their_choices_follow_the_side_they_saw() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, rubric) = designed(&dir.path().join("pairs.concord"));
    concord_testsupport::judge_server::add_experts(&mut store, &["Ana", "Bo", "Cy"]);
    let report = pairs::assign(&mut store, None, 2, 9).expect("the pairs are assigned");
    assert_eq!(
        report.pairs * 2,
        report.experts.iter().map(|e| e.1).sum::<usize>(),
        "k = 2 experts per pair"
    );
    assert!(
        matches!(
            pairs::assign(&mut store, None, 2, 9),
            Err(pairs::PairsError::AlreadyAssigned(_))
        ),
        "an assignment is made once"
    );
    let assignments = store.read().pair_assignments(rubric).unwrap();
    let ana = store.rater_named("Ana").unwrap().unwrap().id;
    let mine: Vec<_> = assignments.iter().filter(|a| a.rater_id == ana).collect();
    let first = mine[0];
    pairs::rate_pair(
        &mut store,
        ana,
        first.pair_id,
        "overall",
        Some(ShownChoice::A),
        None,
    )
    .expect("an assigned pair takes a verdict");
    let stored = store.read().pair_verdicts(rubric).unwrap();
    let expected = if first.left_first {
        Winner::Left
    } else {
        Winner::Right
    };
    assert_eq!(
        stored[0].winner, expected,
        "A is the answer the expert saw first, which is the left one only when left was shown first"
    );
    assert_eq!(
        stored[0].left_first, first.left_first,
        "the order shown is kept beside the verdict"
    );
    let other = assignments
        .iter()
        .find(|a| a.rater_id != ana && !mine.iter().any(|m| m.pair_id == a.pair_id))
        .expect("some pair is not Ana's");
    assert!(
        pairs::rate_pair(
            &mut store,
            ana,
            other.pair_id,
            "overall",
            Some(ShownChoice::B),
            None
        )
        .is_err(),
        "a pair not assigned to the expert is refused"
    );
    assert!(
        pairs::rate_pair(
            &mut store,
            ana,
            first.pair_id,
            "warmth",
            Some(ShownChoice::B),
            None
        )
        .is_err(),
        "an unknown criterion is refused"
    );
    for c in [
        "guidance",
        "informativeness",
        "relevance",
        "safety",
        "empathy",
        "helpfulness",
        "understanding",
    ] {
        pairs::rate_pair(
            &mut store,
            ana,
            first.pair_id,
            c,
            Some(ShownChoice::Tie),
            None,
        )
        .unwrap();
    }
    let done = store
        .read()
        .pair_assignments(rubric)
        .unwrap()
        .into_iter()
        .find(|a| a.rater_id == ana && a.pair_id == first.pair_id)
        .unwrap();
    assert!(
        done.completed_at.is_some(),
        "a pair with every criterion answered is finished"
    );
    pairs::rate_pair(
        &mut store,
        ana,
        first.pair_id,
        "overall",
        Some(ShownChoice::B),
        None,
    )
    .unwrap();
    let changed = store
        .read()
        .pair_verdicts(rubric)
        .unwrap()
        .into_iter()
        .find(|v| v.pair_id == first.pair_id && v.rater_id == ana && v.winner != Winner::Tie)
        .unwrap();
    assert_ne!(
        changed.winner, expected,
        "a changed verdict replaces the earlier one (which the history keeps)"
    );
}

/// Every assigned expert judges `overall`, preferring the answer of higher known quality four
/// times in five (seeded), never a tie, in the terms of the side they saw.
pub(crate) fn experts_prefer_the_better(store: &mut Store, rubric: i64, seed: u64) {
    use concord_testsupport::judge_server::pair_quality;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let pairs_by_id: HashMap<i64, _> = store
        .read()
        .pairs(rubric)
        .unwrap()
        .into_iter()
        .map(|p| (p.id, p))
        .collect();
    for a in store.read().pair_assignments(rubric).unwrap() {
        let p = &pairs_by_id[&a.pair_id];
        let (l, r) = (
            item_of(store, p.left_response_id),
            item_of(store, p.right_response_id),
        );
        let left_better = pair_quality(l, "overall") > pair_quality(r, "overall");
        let picks_better = rng.gen_bool(0.8);
        let left_wins = left_better == picks_better;
        let choice = if left_wins == a.left_first {
            ShownChoice::A
        } else {
            ShownChoice::B
        };
        pairs::rate_pair(store, a.rater_id, a.pair_id, "overall", Some(choice), None).unwrap();
    }
}

#[test]
fn the_pairwise_report_ranks_sources_and_measures_each_judges_position_bias() {
    use concord_core::panel::pairwise::{pairwise_report, PairwiseOptions};
    use concord_testsupport::judge_server::pair_quality;
    let dir = tempfile::tempdir().unwrap();
    let (mut store, rubric) = designed(&dir.path().join("pairs.concord"));
    concord_testsupport::judge_server::add_experts(&mut store, &["Ana", "Bo", "Cy"]);
    pairs::assign(&mut store, None, 2, 4).unwrap();
    experts_prefer_the_better(&mut store, rubric, 11);
    let server = FakeJudge::start(Duration::ZERO, false, None);
    judge(&mut store, &server, "fair-judge");
    server.state.position_bias.store(true, Ordering::SeqCst);
    judge(&mut store, &server, "biased-judge");

    let mut options = PairwiseOptions::default();
    options.bootstrap.resamples = 200;
    let report = pairwise_report(&store, &options).expect("the pairwise report");
    assert_eq!(
        (report.pairs, report.rubric.as_str()),
        (90, "mentalbench-pairs"),
        "the design's pairs"
    );

    let experts = report
        .leaderboards
        .iter()
        .find(|l| l.rater == "experts" && l.criterion == "overall")
        .expect("the experts' overall leaderboard");
    assert_eq!(experts.verdicts, 180, "90 pairs, two experts each");
    assert_eq!(
        experts.sources.len(),
        10,
        "every source is ranked: {:?}",
        experts.unavailable
    );
    for s in &experts.sources {
        let (p, lo, hi) = (s.strength.unwrap(), s.ci_low.unwrap(), s.ci_high.unwrap());
        assert!(
            lo <= p && p <= hi,
            "{}: the interval holds its strength ({lo} ≤ {p} ≤ {hi})",
            s.source
        );
    }
    let quality: Vec<f64> = experts
        .sources
        .iter()
        .map(|s| pair_quality(s.source[1..].parse::<u64>().unwrap(), "overall") as f64)
        .collect();
    let strengths: Vec<f64> = experts
        .sources
        .iter()
        .map(|s| s.strength.unwrap())
        .collect();
    let rho = concord_stats::pairwise::spearman(&strengths, &quality).unwrap();
    assert!(
        rho > 0.8,
        "experts who mostly pick the better answer rank sources by quality: ρ = {rho}"
    );

    let fair_guidance = report
        .leaderboards
        .iter()
        .find(|l| l.rater == "fair-judge" && l.criterion == "guidance")
        .unwrap();
    assert!(
        fair_guidance.sources.is_empty() && fair_guidance.unavailable.is_some(),
        "a judge whose preferences follow a strict order never lets the weakest sources win: no MLE, said rather than printed as divergent numbers"
    );

    let position = |judge: &str| {
        report
            .position
            .iter()
            .find(|p| p.judge == judge && p.criterion == "guidance")
            .unwrap()
    };
    let fair = position("fair-judge");
    assert_eq!(
        (fair.consistency.consistent, fair.consistency.pairs),
        (90, 90),
        "the fair judge's verdict survives every swap"
    );
    assert_eq!(
        (fair.bias.first_wins, fair.bias.decided),
        (80, 160),
        "of 180 calls 20 are ties (sources s and s + 5); of the rest the first shown wins half"
    );
    let biased = position("biased-judge");
    assert_eq!(
        (biased.consistency.consistent, biased.consistency.pairs),
        (80, 90),
        "the ten pairs of equal answers flip with the side"
    );
    assert_eq!(
        (biased.bias.first_wins, biased.bias.decided),
        (100, 180),
        "the 20 calls on equal answers all go to the first shown, on top of half the other 160"
    );
    assert!(
        biased.bias.ci.0.unwrap() < 100.0 / 180.0 && 100.0 / 180.0 < biased.bias.ci.1.unwrap(),
        "the binomial interval holds P(first wins)"
    );
    let judge_vs_experts = report
        .agreement
        .iter()
        .find(|a| a.between == "fair-judge" && a.criterion == "overall")
        .and_then(|a| a.agreement.clone())
        .expect("the fair judge against the experts on overall");
    assert_eq!(
        judge_vs_experts.n, 180,
        "each of 180 expert verdicts meets the judge's"
    );
    assert!(
        (judge_vs_experts.percent.unwrap() - 0.8 * 160.0 / 180.0).abs() < 0.08,
        "experts right four times in five, never saying tie, agree with an always-right judge on about 80% of the 160 verdicts on unequal answers and never on the 20 ties: {:?}",
        judge_vs_experts.percent
    );
    assert!(
        report
            .agreement
            .iter()
            .any(|a| a.between == "experts" && a.criterion == "overall"),
        "experts who judged the same pair are compared with each other"
    );
}

/// A design that is refused changes nothing: drawing pairs where no conversation has two
/// answers (one source each) fails, and the study holds no pairwise rubric afterwards — neither
/// the shipped form it would have added nor an audit entry — so the lead can import answers and
/// draw again as if the failed attempt had never been made.
#[test]
fn a_refused_design_adds_no_pairwise_rubric_and_no_audit_entry() {
    use concord_core::guard::audit;
    let dir = tempfile::tempdir().unwrap();
    let mut store = pair_study(&dir.path().join("single.concord"), 4, 1);
    let rubrics_before: Vec<String> = store
        .rubrics()
        .unwrap()
        .into_iter()
        .map(|s| s.rubric.id)
        .collect();
    let entries_before = audit::log(&store, &audit::LogFilter::default())
        .unwrap()
        .len();
    for rubric in [None, Some("mentalbench-pairs")] {
        let refused = pairs::design(&mut store, rubric, None, DesignMethod::All, 1)
            .expect_err("one answer per conversation gives no pair to draw");
        assert!(
            refused.to_string().contains("two answers"),
            "the refusal says why: {refused}"
        );
        let rubrics_after: Vec<String> = store
            .rubrics()
            .unwrap()
            .into_iter()
            .map(|s| s.rubric.id)
            .collect();
        assert_eq!(
            rubrics_after, rubrics_before,
            "a refused design ({rubric:?}) leaves no (empty) pairwise rubric in the study"
        );
        assert_eq!(
            audit::log(&store, &audit::LogFilter::default())
                .unwrap()
                .len(),
            entries_before,
            "and writes nothing to the audit trail"
        );
    }
    assert!(
        pairs::designed_rubric(&store, None).is_err(),
        "there is no design to assign"
    );
}
