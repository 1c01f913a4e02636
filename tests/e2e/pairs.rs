//! The expert's pair screen in the real window: a study with a drawn and assigned pair design,
//! an expert who has only pairs opens straight on them, compares two pairs by keyboard alone
//! (1/← A, 2/→ B, 0/= equal, Enter on), every choice is in the study file in the pair's own
//! left/right terms beside the side shown first, the answers stack on a narrow window, and a
//! relaunch resumes at the first pair not finished.

use super::App;
use concord_core::store::{NewRater, RaterKind, Store, Winner};
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
    store
        .write(|tx| {
            tx.upsert_rater(&NewRater {
                kind: RaterKind::Expert,
                name: EXPERT,
                model_id: None,
                family: None,
                queue_seed: 1,
            })
        })
        .unwrap();
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
