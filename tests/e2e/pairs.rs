//! The expert's pair screen in the real window: a study with a drawn and assigned pair design,
//! an expert who has only pairs opens straight on them, compares two pairs by keyboard alone
//! (1/← A, 2/→ B, 0/= equal, Enter on), every choice is in the study file in the pair's own
//! left/right terms beside the side shown first, the answers stack on a narrow window, and a
//! relaunch resumes at the first pair not finished.

use super::App;
use concord_core::store::{Store, Winner};
use concord_core::workflow::pairs::{self, DesignMethod};
use concord_testsupport::judge_server::pair_study;
use std::path::Path;
use std::time::Duration;

const ENTER: &str = "\u{E007}";
const LEFT: &str = "\u{E012}";
const RIGHT: &str = "\u{E014}";
const EXPERT: &str = "Pair expert";

fn pair_ready_study(path: &Path) {
    let mut store = pair_study(path, 6, 3);
    pairs::design(&mut store, None, None, DesignMethod::PerConversation(2), 3).unwrap();
    concord_testsupport::judge_server::add_experts(&mut store, &[EXPERT]);
    pairs::assign(&mut store, None, 1, 5).unwrap();
    store.close().unwrap();
}

fn open_pairs(app: &App) {
    app.wait_for(
        "[data-testid=overview], [data-testid=pair-screen]",
        Duration::from_secs(30),
    );
    if app.try_find("[data-testid=pair-screen]").is_none() {
        app.click(&app.wait_for("[data-testid=nav-rate]", Duration::from_secs(5)));
        app.wait_for("[data-testid=profile]", Duration::from_secs(10));
        let pick = app
            .find_all("[data-testid=profile]")
            .into_iter()
            .find(|b| app.text(b).contains(EXPERT))
            .expect("the expert is on the rater list");
        app.click(&pick);
    }
    app.wait_for(
        "[data-testid=pair-screen] [data-testid=pair-progress]",
        Duration::from_secs(15),
    );
}

fn progress(app: &App) -> String {
    app.text_of("[data-testid=pair-progress]")
}

#[test]
fn an_expert_compares_pairs_by_keyboard_and_resumes_after_a_relaunch() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("pairs.concord");
    pair_ready_study(&study);
    {
        let app = App::launch(&study);
        open_pairs(&app);
        assert!(
            progress(&app).contains("Pair 1 of 12"),
            "six conversations, two pairs each, all this expert's: {}",
            progress(&app)
        );
        assert_eq!(
            app.find_all("[data-testid=pair-criterion]").len(),
            8,
            "the seven attributes and overall are asked"
        );
        let a = app.text_of("[data-testid=answer-a-text]");
        let b = app.text_of("[data-testid=answer-b-text]");
        assert!(
            a.contains("item #") && b.contains("item #") && a != b,
            "the two answers of the pair are shown side by side: {a} | {b}"
        );
        app.assert_accessible("pair-screen");
        // Pair 1: A, B, equal, equal, A (←), B (→), A, B — then Enter.
        app.press(&format!("120={LEFT}{RIGHT}12{ENTER}"));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !progress(&app).contains("Pair 2 of 12") {
            assert!(
                std::time::Instant::now() < deadline,
                "Enter goes on to pair 2: {}",
                progress(&app)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // Enter with questions unanswered stays and says why.
        app.press("1");
        app.press(ENTER);
        app.wait_for("[data-testid=pair-notice]", Duration::from_secs(5));
        assert!(
            progress(&app).contains("Pair 2 of 12"),
            "an unfinished pair is not left by Enter"
        );
        app.press(&format!("2222222{ENTER}"));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !progress(&app).contains("Pair 3 of 12") {
            assert!(
                std::time::Instant::now() < deadline,
                "pair 2 done, pair 3 shown: {}",
                progress(&app)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // A narrow window (the narrowest the window allows, 800 px) stacks the answers.
        app.set_window_size(800, 900);
        std::thread::sleep(Duration::from_millis(300));
        let columns = app.script(
            "return getComputedStyle(document.querySelector('.answers')).gridTemplateColumns.split(' ').length;",
            serde_json::json!([]),
        );
        assert_eq!(
            columns,
            serde_json::json!(1),
            "on a narrow window the answers are stacked"
        );
        app.screenshot("pairs-narrow");
    }
    // The study file holds every choice in the pair's own terms beside the side shown first.
    let store = Store::open(
        &study,
        std::sync::Arc::new(concord_core::base::clock::SystemClock),
    )
    .unwrap();
    let rubric = pairs::designed_rubric(&store, None).unwrap();
    let expert = store.rater_named(EXPERT).unwrap().unwrap().id;
    let queue: Vec<_> = store
        .read()
        .pair_assignments(rubric.id)
        .unwrap()
        .into_iter()
        .filter(|a| a.rater_id == expert)
        .collect();
    let criteria = store.read().criterion_ids(rubric.id).unwrap();
    let verdicts = store.read().pair_verdicts(rubric.id).unwrap();
    let typed = ["A", "B", "Tie", "Tie", "A", "B", "A", "B"];
    for (k, c) in rubric.rubric.criteria.iter().enumerate() {
        let v = verdicts
            .iter()
            .find(|v| v.pair_id == queue[0].pair_id && v.criterion_id == criteria[&c.id])
            .unwrap_or_else(|| panic!("{} of pair 1 is saved", c.id));
        let expected = match (typed[k], queue[0].left_first) {
            ("Tie", _) => Winner::Tie,
            ("A", true) | ("B", false) => Winner::Left,
            _ => Winner::Right,
        };
        assert_eq!(
            v.winner, expected,
            "{}: {} with left shown first = {}",
            c.id, typed[k], queue[0].left_first
        );
        assert_eq!(
            v.left_first, queue[0].left_first,
            "the side shown first is kept with the choice"
        );
    }
    assert_eq!(
        verdicts
            .iter()
            .filter(|v| v.pair_id == queue[1].pair_id)
            .count(),
        8,
        "pair 2: the first key and the seven after the notice"
    );
    drop(store);

    let app = App::launch(&study);
    open_pairs(&app);
    assert!(
        progress(&app).contains("Pair 3 of 12") && progress(&app).contains("2 done"),
        "a relaunch resumes at the first pair not finished: {}",
        progress(&app)
    );
}

/// A pair study judged both ways round by a judge with a position bias, with expert verdicts on
/// `overall`; returns the core's pairwise report of it.
fn judged_pair_study(path: &Path) -> concord_core::panel::pairwise::PairwiseReport {
    use concord_core::judge::{
        execute_run, open_run, CancellationToken, Execution, ProviderKind, RunSettings,
    };
    use concord_core::workflow::pairs::ShownChoice;
    use concord_testsupport::judge_server::{item_in, pair_quality, FakeJudge};
    use rand::{Rng, SeedableRng};
    let mut store = pair_study(path, 10, 10);
    pairs::design(&mut store, None, None, DesignMethod::Balanced(9), 2).unwrap();
    concord_testsupport::judge_server::add_experts(&mut store, &["Ana", "Bo", "Cy"]);
    pairs::assign(&mut store, None, 2, 4).unwrap();
    let rubric = pairs::designed_rubric(&store, None).unwrap().id;
    let by_id: std::collections::HashMap<i64, _> = store
        .read()
        .pairs(rubric)
        .unwrap()
        .into_iter()
        .map(|p| (p.id, p))
        .collect();
    let item =
        |store: &Store, id: i64| item_in(&store.response_text(id).unwrap().unwrap()).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for a in store.read().pair_assignments(rubric).unwrap() {
        let p = &by_id[&a.pair_id];
        let (l, r) = (
            item(&store, p.left_response_id),
            item(&store, p.right_response_id),
        );
        let left_wins =
            (pair_quality(l, "overall") > pair_quality(r, "overall")) == rng.gen_bool(0.8);
        let choice = if left_wins == a.left_first {
            ShownChoice::A
        } else {
            ShownChoice::B
        };
        pairs::rate_pair(
            &mut store,
            a.rater_id,
            a.pair_id,
            "overall",
            Some(choice),
            None,
        )
        .unwrap();
    }
    let server = FakeJudge::start(Duration::ZERO, false, None);
    server
        .state
        .position_bias
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let mut s = RunSettings::new(
        ProviderKind::OpenaiCompatible,
        &server.base_url(),
        "biased-judge",
    );
    s.rubric = Some("mentalbench-pairs".into());
    s.both_orders = true;
    s.max_tokens = 256;
    let run = open_run(&mut store, &s).unwrap().run_id;
    execute_run(
        &mut store,
        run,
        &Execution::default(),
        None,
        &CancellationToken::new(),
        &mut |_| {},
    )
    .unwrap();
    let report = concord_core::panel::pairwise::pairwise_report(
        &store,
        &concord_core::panel::pairwise::PairwiseOptions::default(),
    )
    .unwrap();
    store.close().unwrap();
    report
}

#[test]
fn the_agreement_panel_shows_the_leaderboard_and_each_judges_position_bias() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("judged-pairs.concord");
    let core = judged_pair_study(&study);
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));
    app.click(&app.wait_for("[data-testid=nav-agreement]", Duration::from_secs(5)));
    app.wait_for("[data-testid=pairwise-view]", Duration::from_secs(30));
    app.wait_for(
        "[data-testid=pairwise-leaderboard]",
        Duration::from_secs(10),
    );
    app.assert_accessible("agreement-pairwise");
    let groups: Vec<String> = app
        .find_all("[data-testid=pairwise-group]")
        .iter()
        .map(|e| app.text(e))
        .collect();
    assert_eq!(
        groups,
        ["Experts (pooled)", "biased-judge"],
        "the experts and the judge side by side on overall"
    );
    let experts = core
        .leaderboards
        .iter()
        .find(|l| l.rater == "experts" && l.criterion == "overall")
        .unwrap();
    assert_eq!(experts.sources.len(), 10, "the experts rank every source");
    for s in &experts.sources {
        let cell = app.wait_for(
            &format!(
                "[data-testid=pairwise-source][data-source='{}'] [data-testid=pairwise-cell][data-rater=experts]",
                s.source
            ),
            Duration::from_secs(5),
        );
        let shown: f64 = app
            .attribute(&cell, "data-strength")
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            (shown - s.strength.unwrap()).abs() < 1e-9,
            "{}: the window's strength is the core's",
            s.source
        );
        let text = app.text(&cell);
        assert!(
            text.contains(&format!("{:.2}", s.ci_low.unwrap()))
                && text.contains(&format!("{:.2}", s.ci_high.unwrap())),
            "{}: the cell shows its interval: {text}",
            s.source
        );
    }
    let position = core
        .position
        .iter()
        .find(|p| p.judge == "biased-judge" && p.criterion == "overall")
        .unwrap();
    let card = app.text_of(
        "[data-testid=position-card][data-judge=biased-judge] [data-testid=position-consistency]",
    );
    assert!(
        card.contains(&format!(
            "{} of {} pairs",
            position.consistency.consistent, position.consistency.pairs
        )) && position.consistency.consistent < position.consistency.pairs,
        "the card says how many pairs keep their verdict when the sides swap: {card}"
    );
    let bias = app.wait_for(
        "[data-testid=position-card][data-judge=biased-judge] [data-testid=position-bias]",
        Duration::from_secs(5),
    );
    let p_first: f64 = app
        .attribute(&bias, "data-p-first")
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (p_first - position.bias.p_first.unwrap()).abs() < 1e-12 && p_first > 0.5,
        "the card gives the core's P(first wins), above one half for this judge: {p_first}"
    );
    assert!(
        app.try_find("[data-testid=pairwise-agreement-row][data-between=biased-judge]")
            .is_some(),
        "the judge's agreement with the experts is listed"
    );
    app.screenshot("pairwise-panel");
}

/// The passphrase the lead seals the pair package with.
const PKG_PASS: &str = "pairs by phone, not by mail 7";

/// Verdicts held in the sealed package at `pkg`.
fn package_verdicts(pkg: &Path) -> i64 {
    let conn = rusqlite::Connection::open(pkg).expect("opens");
    conn.pragma_update(None, "key", PKG_PASS).expect("keyed");
    conn.query_row(
        "SELECT COUNT(*) FROM pair_judgement WHERE winner IS NOT NULL",
        [],
        |r| r.get(0),
    )
    .unwrap_or(0)
}

#[test]
fn an_expert_compares_pairs_from_a_package_and_the_merge_brings_them_back() {
    use concord_core::guard::phi::review::PhiGate;
    use concord_core::store::Passphrase;
    use concord_core::workflow::pairs::ShownChoice;
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("lead-pairs.concord");
    pair_ready_study(&main);
    let pkg = dir.path().join("pair-expert-package.concord");
    {
        let store = Store::open(
            &main,
            std::sync::Arc::new(concord_core::base::clock::SystemClock),
        )
        .unwrap();
        let mut study = concord_core::app::open_study::OpenStudy::new(store);
        let written = concord_core::app::package::export_package(
            &mut study,
            EXPERT,
            Some(&pkg),
            false,
            3,
            &Passphrase::new(PKG_PASS).unwrap(),
            PhiGate {
                actor: "lead",
                override_reason: None,
            },
        )
        .expect("the pair package is written");
        assert_eq!(
            written.summary.pairs, 12,
            "the expert's twelve pairs go in the package"
        );
    }

    let app = App::launch(&main);
    app.wait_for(
        "[data-testid=overview], [data-testid=pair-screen]",
        Duration::from_secs(30),
    );
    let r = app.invoke(
        "plugin:event|emit",
        serde_json::json!({"event": "menu", "payload": "close"}),
    );
    assert!(r.get("error").is_none(), "File → Close is sent: {r}");
    let path = app.wait_for("[data-testid=welcome-path]", Duration::from_secs(10));
    app.type_into(&path, &pkg.display().to_string());
    app.click(&app.wait_for("[data-testid=welcome-path-open]", Duration::from_secs(5)));
    let input = app.wait_for("[data-testid=unlock-passphrase]", Duration::from_secs(15));
    app.type_into(&input, PKG_PASS);
    app.click(&app.wait_for("[data-testid=unlock-submit]", Duration::from_secs(5)));

    // The package opens on its pairs: compare the first by keyboard, with a rationale.
    app.wait_for(
        "[data-testid=pair-screen] [data-testid=pair-progress]",
        Duration::from_secs(20),
    );
    assert!(
        progress(&app).contains("Pair 1 of 12"),
        "the package's pair queue: {}",
        progress(&app)
    );
    app.press("11111111");
    app.press("r");
    let box_ = app.wait_for("[data-testid=rationale]", Duration::from_secs(5));
    app.type_into(&box_, "A names the feeling first");
    app.press("\u{E00C}"); // Esc: back to the choices, the rationale saved
    app.press(ENTER);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !progress(&app).contains("Pair 2 of 12") {
        assert!(
            std::time::Instant::now() < deadline,
            "Enter goes on to pair 2: {}",
            progress(&app)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Pair 2: flagged with a reason, then answered B throughout, by the buttons' Next.
    app.press("f");
    let reason = app.wait_for("[data-testid=flag-reason]", Duration::from_secs(5));
    app.type_into(&reason, "both answers miss the risk");
    app.press(ENTER);
    app.wait_for("[data-testid=flag-note]", Duration::from_secs(5));
    app.press("22222222");
    app.click(&app.wait_for("[data-testid=next-button]", Duration::from_secs(5)));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !progress(&app).contains("Pair 3 of 12") || package_verdicts(&pkg) < 16 {
        assert!(
            std::time::Instant::now() < deadline,
            "pair 2 done and all 16 choices durable in the package: {} ({} saved)",
            progress(&app),
            package_verdicts(&pkg)
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // Return the package, then the lead merges the returned file.
    app.click(&app.wait_for("[data-testid=return-ratings]", Duration::from_secs(5)));
    let written = app.text_of("[data-testid=return-written]");
    let returned = dir.path().join("pair-expert-package-returned.concord");
    assert!(
        written.contains(&returned.display().to_string()),
        "the window says where the returned package went: {written}"
    );
    drop(app);
    let mut store = Store::open(
        &main,
        std::sync::Arc::new(concord_core::base::clock::SystemClock),
    )
    .unwrap();
    let report = concord_core::workflow::package::merge_package(
        &mut store,
        &returned,
        &Passphrase::new(PKG_PASS).unwrap(),
    )
    .expect("the returned pair package merges");
    assert_eq!(
        (report.pairs_inserted, report.pair_flags_added),
        (16, 1),
        "two pairs of eight questions and the flag come back: {report:?}"
    );
    let rubric = pairs::designed_rubric(&store, None).unwrap();
    let expert = store.rater_named(EXPERT).unwrap().unwrap().id;
    let mine = store.read().pair_assignments_of(rubric.id, expert).unwrap();
    for (a, typed) in mine.iter().take(2).zip([ShownChoice::A, ShownChoice::B]) {
        let verdicts = store.read().pair_verdicts_on(expert, a.pair_id).unwrap();
        assert!(
            verdicts.len() == 8 && verdicts.iter().all(|v| v.winner == typed.winner(a.left_first)),
            "what was typed on the answer shown first or second is the lead's left or right answer by the recorded side"
        );
    }
    let first = store
        .read()
        .pair_verdicts_on(expert, mine[0].pair_id)
        .unwrap();
    assert!(
        first
            .iter()
            .all(|v| v.rationale.as_deref() == Some("A names the feeling first")),
        "the rationale typed in the package is on pair 1's verdicts"
    );
}
