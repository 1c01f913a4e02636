//! Assignment: the plan's guarantees as property tests (exactly k experts per regular response,
//! calibration items for everyone, balanced loads, nobody twice on a response, the retest gap,
//! the same plan from the same seed, a proportional stratified sample), then the stored
//! assignment, its errors and the progress table on a real study.

use concord_testsupport::lead_study;

use concord_core::workflow::assignment;
use concord_core::workflow::assignment::plan;
use concord_core::workflow::assignment::AssignmentError;
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::assignment::PlanConversation;
use concord_core::workflow::assignment::Purpose;
use lead_study::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

fn conversations(n: usize, per: usize, categories: usize) -> Vec<PlanConversation> {
    (0..n)
        .map(|i| PlanConversation {
            id: i as i64 + 1,
            external_id: format!("c{i:05}"),
            category: if categories == 0 {
                None
            } else {
                Some(format!("cat{}", i % categories))
            },
            responses: (0..per).map(|s| (i * per + s) as i64 + 1000).collect(),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn plan_guarantees_hold(
        experts in 1usize..7,
        k_raw in 1usize..7,
        n in 1usize..40,
        per in 1usize..5,
        categories in 0usize..4,
        sample_raw in 0usize..45,
        calibration in 0usize..4,
        retest in 0usize..4,
        gap in 0usize..6,
        seed in any::<u64>(),
    ) {
        let k = 1 + (k_raw - 1) % experts;
        let convs = conversations(n, per, categories);
        let mut options = AssignmentOptions::new(k, seed);
        options.sample = if sample_raw == 0 { None } else { Some(sample_raw) };
        options.calibration = calibration;
        options.retest = retest;
        options.retest_gap = gap;
        let result = plan(&convs, experts, &options);
        let p = match result {
            Ok(p) => p,
            Err(AssignmentError::TooManyCalibration { calibration: c, responses }) => {
                prop_assert!(c > responses, "calibration is refused only when it exceeds the sample");
                return Ok(());
            }
            Err(AssignmentError::RetestTooMany { eligible, retest: r, .. }) => {
                prop_assert!(r > eligible, "retests are refused only when too few items are early enough");
                return Ok(());
            }
            Err(e) => return Err(TestCaseError::fail(format!("valid options were refused: {e}"))),
        };

        // The sample: min(N, total) conversations, each stratum within one of its share.
        let want = options.sample.unwrap_or(n).min(n);
        prop_assert_eq!(p.sample.len(), want, "the sample has the requested size (capped at the pool)");
        let mut per_stratum: BTreeMap<Option<String>, usize> = BTreeMap::new();
        for (_, s) in &p.sample { *per_stratum.entry(s.clone()).or_default() += 1; }
        let mut pool: BTreeMap<Option<String>, usize> = BTreeMap::new();
        for c in &convs { *pool.entry(c.category.clone()).or_default() += 1; }
        for (stratum, size) in &pool {
            let share = (*size * want) as f64 / n as f64;
            let got = *per_stratum.get(stratum).unwrap_or(&0) as f64;
            prop_assert!((got - share).abs() < 1.0 + 1e-9,
                "stratum {:?} drew {} but its proportional share is {:.2}", stratum, got, share);
        }
        prop_assert_eq!(p.responses.len(), want * per,
            "every response (source) of a drawn conversation is kept");

        // Exactly k distinct experts per regular response, everyone on calibration items.
        let mut raters: HashMap<(i64, Purpose), Vec<usize>> = HashMap::new();
        for it in &p.items { raters.entry((it.response, it.purpose)).or_default().push(it.expert); }
        let cal: BTreeSet<i64> = p.calibration.iter().copied().collect();
        prop_assert_eq!(cal.len(), calibration, "the requested number of calibration items");
        for r in &p.responses {
            let (purpose, expected) = if cal.contains(r) { (Purpose::Calibration, experts) } else { (Purpose::Regular, k) };
            let got = raters.get(&(*r, purpose)).cloned().unwrap_or_default();
            let distinct: BTreeSet<usize> = got.iter().copied().collect();
            prop_assert_eq!(got.len(), expected, "response {} must have exactly {} experts as {:?}", r, expected, purpose);
            prop_assert_eq!(distinct.len(), got.len(), "nobody rates response {} twice", r);
            let other = if purpose == Purpose::Regular { Purpose::Calibration } else { Purpose::Regular };
            prop_assert!(!raters.contains_key(&(*r, other)), "a response is either regular or calibration, never both");
        }

        // Balanced load: regular items per expert differ by at most one.
        let mut regular = vec![0usize; experts];
        let mut per_expert: Vec<Vec<(usize, i64, Purpose)>> = vec![Vec::new(); experts];
        for it in &p.items {
            if it.purpose == Purpose::Regular { regular[it.expert] += 1; }
            per_expert[it.expert].push((it.position, it.response, it.purpose));
        }
        let (lo, hi) = (regular.iter().min().copied().unwrap_or(0), regular.iter().max().copied().unwrap_or(0));
        prop_assert!(hi - lo <= 1, "regular loads {:?} must be within one of each other", regular);

        for (e, items) in per_expert.iter_mut().enumerate() {
            items.sort();
            let positions: Vec<usize> = items.iter().map(|i| i.0).collect();
            prop_assert_eq!(positions, (0..items.len()).collect::<Vec<_>>(),
                "expert {}'s positions are 0..n without gaps or repeats", e);
            let first: HashMap<i64, usize> = items.iter().filter(|i| i.2 != Purpose::Retest).map(|i| (i.1, i.0)).collect();
            prop_assert_eq!(first.len(), items.iter().filter(|i| i.2 != Purpose::Retest).count(),
                "expert {} sees each response once outside retests", e);
            let retests: Vec<&(usize, i64, Purpose)> = items.iter().filter(|i| i.2 == Purpose::Retest).collect();
            prop_assert_eq!(retests.len(), retest, "expert {} gets the requested retest items", e);
            for (pos, resp, _) in retests {
                let f = first.get(resp).copied();
                prop_assert!(f.is_some(), "a retest repeats an item the expert already has");
                let f = f.unwrap_or(0);
                prop_assert!(*pos > f && pos - f > gap,
                    "retest of {} at {} must come at least {} items after its first showing at {}", resp, pos, gap, f);
            }
        }

        // Reproducible: the same seed gives the same plan.
        let again = plan(&convs, experts, &options);
        prop_assert_eq!(Some(&p), again.as_ref().ok(), "the same inputs and seed give the same plan");
    }
}

#[test]
fn a_different_seed_gives_a_different_order() {
    let convs = conversations(30, 4, 3);
    let a = plan(&convs, 3, &AssignmentOptions::new(2, 1)).expect("plan");
    let b = plan(&convs, 3, &AssignmentOptions::new(2, 2)).expect("plan");
    assert_ne!(
        a.items, b.items,
        "the seed drives the shuffles, so another seed must give another assignment"
    );
}

#[test]
fn clear_errors_for_impossible_requests() {
    let mut store = memory_study(6, &["Ana", "Ben"]);
    let err = assignment::assign(&mut store, &AssignmentOptions::new(3, 7))
        .expect_err("k = 3 with two experts is impossible");
    assert!(
        matches!(err, AssignmentError::TooFewExperts { k: 3, experts: 2 }),
        "the error names k and the number of experts: {err}"
    );
    assert!(
        err.to_string().contains("only 2 expert"),
        "the message explains the shortfall: {err}"
    );
    let mut no_experts = memory_study(3, &[]);
    let err = assignment::assign(&mut no_experts, &AssignmentOptions::new(1, 7))
        .expect_err("nobody to assign to");
    assert!(
        matches!(err, AssignmentError::NoExperts),
        "a study without experts is refused: {err}"
    );
    let mut judge_as_expert = AssignmentOptions::new(1, 7);
    judge_as_expert.experts = vec!["gpt-4o-judge".into()];
    let err =
        assignment::assign(&mut store, &judge_as_expert).expect_err("judges are not assigned");
    assert!(
        matches!(err, AssignmentError::NotAnExpert(_)),
        "naming a judge as expert is refused: {err}"
    );
    let progress = assignment::progress(&store).expect("progress reads");
    assert!(
        progress.experts.iter().all(|e| e.assigned == 0),
        "refused assignments wrote nothing"
    );
}

#[test]
fn stored_assignment_is_reproducible_and_reports_progress() {
    let experts = ["Ana", "Ben", "Chen"];
    let mut options = AssignmentOptions::new(2, 2024);
    options.sample = Some(9);
    options.calibration = 2;
    options.retest = 2;
    options.retest_gap = 3;
    let mut a = memory_study(30, &experts);
    let mut b = memory_study(30, &experts);
    let summary = assignment::assign(&mut a, &options).expect("assignment written");
    assignment::assign(&mut b, &options).expect("assignment written");
    assert_eq!(summary.conversations, 9, "nine conversations drawn");
    assert_eq!(
        summary.responses, 36,
        "all four sources of each drawn conversation kept"
    );
    assert_eq!(
        summary.strata.iter().map(|s| s.drawn).collect::<Vec<_>>(),
        vec![3, 3, 3],
        "three equal categories share the sample equally"
    );
    for name in experts {
        assert_eq!(
            assignment::expert_items(&a, name).expect("items"),
            assignment::expert_items(&b, name).expect("items"),
            "{name}'s list is the same in two studies assigned with the same seed"
        );
    }
    assert_eq!(
        assignment::stored_options(&a).expect("options read"),
        Some(options.clone()),
        "the options (seed included) are kept in the study"
    );

    let err = assignment::assign(&mut a, &options).expect_err("already assigned");
    assert!(
        matches!(err, AssignmentError::AlreadyAssigned),
        "a second assignment needs replace: {err}"
    );

    // Ana completes her first item; a partly rated item is not complete.
    let ana = rater_id(&a, "Ana");
    let items = assignment::expert_items(&a, "Ana").expect("items");
    rate_all(&mut a, ana, items[0].response_id, 4, None);
    let crit = criteria(&a)[0];
    a.write(|tx| {
        tx.set_rating(&concord_core::store::RatingInput {
            rater_id: ana,
            response_id: items[1].response_id,
            criterion_id: crit,
            occasion: concord_core::store::Occasion::First,
            value: Some(3),
            raw_value: None,
            rationale: None,
            origin: "screen",
        })
    })
    .expect("one rating");
    let table = assignment::progress(&a).expect("progress");
    let row = table
        .experts
        .iter()
        .find(|e| e.name == "Ana")
        .expect("Ana has a row");
    assert_eq!(
        row.completed, 1,
        "only the fully rated item counts as completed"
    );
    assert_eq!(
        row.remaining,
        row.assigned - 1,
        "remaining = assigned − completed"
    );
    assert_eq!(row.ratings, 8, "seven + one values on assigned items");
    assert_eq!(row.calibration, 2, "two calibration items");
    assert_eq!(row.retest, 2, "two retest items");

    let mut replace = options.clone();
    replace.replace = true;
    let err = assignment::assign(&mut a, &replace).expect_err("ratings exist");
    assert!(
        matches!(err, AssignmentError::HasRatings { ratings: 8 }),
        "an assignment with work done is never replaced: {err}"
    );
    assignment::assign(&mut b, &replace).expect("an untouched assignment can be replaced");
}

#[test]
fn experts_and_custom_rubrics_are_added_once() {
    let mut store = memory_study(1, &[]);
    let first = assignment::add_expert(&mut store, "  Dana ", 5).expect("added");
    let again = assignment::add_expert(&mut store, "Dana", 6).expect("idempotent");
    assert!(
        first.created && !again.created,
        "the second add finds the first"
    );
    assert_eq!(first.id, again.id, "one expert, one id");
    let err = assignment::add_expert(&mut store, "gpt-4o-judge", 1).expect_err("a judge's name");
    assert!(
        matches!(err, AssignmentError::NotAnExpert(_)),
        "a judge's name cannot become an expert: {err}"
    );
    let text = r#"
id = "warmth"
name = { en = "Warmth" }
[[criteria]]
id = "warmth"
label = { en = "Warmth" }
scale = { kind = "likert", min = 1, max = 3 }
"#;
    let added = assignment::add_rubric_file(&mut store, text, "warmth.toml").expect("added");
    let again = assignment::add_rubric_file(&mut store, text, "warmth.toml").expect("same");
    assert!(
        added.created && !again.created && added.id == again.id,
        "the same rubric is added once"
    );
    let changed = text.replace("max = 3", "max = 4");
    assert!(
        assignment::add_rubric_file(&mut store, &changed, "warmth.toml").is_err(),
        "a different rubric under an existing id is refused"
    );
}

/// A study of `conversations` MentalBench conversations with two answers each, the answers of the
/// first `textless` conversations held without text (as a MentalAlign-only study holds them), and
/// the experts Ana and Ben.
fn study_with_textless_answers(
    conversations: usize,
    textless: usize,
) -> concord_core::store::Store {
    let mut store = concord_core::store::Store::in_memory(clock()).unwrap();
    populate_textless(&mut store, conversations, textless);
    for (n, name) in ["Ana", "Ben"].iter().enumerate() {
        assignment::add_expert(&mut store, name, n as u64).unwrap();
    }
    store
}

#[test]
fn an_assignment_drawing_answers_without_text_needs_a_reason_and_records_it() {
    let mut store = study_with_textless_answers(3, 1);
    assert_eq!(
        store.overview().unwrap().responses_without_text,
        2,
        "the overview counts the two answers held without text"
    );
    let mut options = AssignmentOptions::new(1, 7);
    let preview = assignment::preview(&store, &options).unwrap();
    assert_eq!(
        (preview.without_text, preview.responses),
        (2, 6),
        "the preview says how many drawn answers have no text"
    );
    let err = assignment::assign(&mut store, &options).expect_err("blank items are not assigned");
    assert!(
        matches!(
            err,
            AssignmentError::AnswersWithoutText {
                without: 2,
                responses: 6
            }
        ),
        "the refusal counts them: {err}"
    );
    assert!(
        err.to_string().contains("concord import mentalbench"),
        "the refusal says which import fills the texts: {err}"
    );
    assert_eq!(
        store.read().expert_assignment_count().unwrap(),
        0,
        "nothing was assigned"
    );
    options.without_text = Some("  texts arrive from the authors next week ".into());
    let summary = assignment::assign(&mut store, &options).expect("assigned with a reason");
    assert_eq!(summary.without_text, 2, "the summary still counts them");
    assert_eq!(
        assignment::without_text_reason(&store).unwrap().as_deref(),
        Some("  texts arrive from the authors next week "),
        "the reason is recorded with the assignment"
    );
    let dir = tempfile::tempdir().unwrap();
    let key = concord_core::store::Passphrase::new("correct horse battery staple 41").unwrap();
    concord_core::workflow::package::export_package(
        &mut store,
        "Ana",
        &dir.path().join("ana.concord"),
        3,
        &key,
    )
    .expect("with the reason recorded, the package goes out");
}

#[test]
fn a_package_or_sheet_of_answers_without_text_is_refused_without_a_recorded_reason() {
    let mut store = study_with_textless_answers(2, 2);
    let ana = rater_id(&store, "Ana");
    // A solo queue (no assignment at all): every response, none with text.
    concord_core::workflow::queue::open_queue(&mut store, ana).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key = concord_core::store::Passphrase::new("correct horse battery staple 41").unwrap();
    let out = dir.path().join("ana.concord");
    let err = concord_core::workflow::package::export_package(&mut store, "Ana", &out, 3, &key)
        .expect_err("a package of blank items is refused");
    assert!(
        err.to_string().contains("4 of the 4 items assigned to"),
        "the refusal says how many items are blank: {err}"
    );
    assert!(!out.exists(), "no package file is written");
    let sheet = dir.path().join("ana.xlsx");
    let err = concord_core::outputs::export::write_rating_sheet(&store, "Ana", &sheet)
        .expect_err("a sheet of blank items is refused");
    assert!(
        err.to_string().contains("no answer text"),
        "the sheet's refusal says why: {err}"
    );
    assert!(!sheet.exists(), "no sheet is written");
}
