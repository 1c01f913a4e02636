//! Journeys of the lead's and the researcher's first minutes in the real window: honest empty
//! states (the judge reliability section names judges whose scores were imported and says how to
//! get repetitions instead of claiming no judge ran), and pairwise comparisons drawn, assigned and
//! reported from the window, each checked against the study file.

use super::setup::{click, fill, wait_text};
use super::App;
use concord_core::base::clock::SystemClock;
use concord_core::store::Store;
use concord_core::workflow::pairs;
use concord_testsupport::judge_server::{add_experts, pair_study};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn judge_reliability_names_the_imported_judges_of_the_table_above_and_how_to_get_repetitions() {
    let dir = tempfile::tempdir().unwrap();
    // Created as the demo on first launch: its judge's scores were imported, never run.
    let study = dir.path().join("demo.concord");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    click(&app, "[data-testid=nav-agreement]");
    app.wait_for("[data-testid=judge-reliability]", Duration::from_secs(10));
    app.wait_for_attribute(
        "[data-testid=judge-reliability]",
        "data-state",
        "imported_scores_only",
        Duration::from_secs(60),
    );
    let text = app.text_of("[data-testid=rel-empty]");
    assert!(
        text.contains("demo-judge") && text.contains("imported"),
        "the section names the judge whose scores fill the table above and says they were imported: {text}"
    );
    assert!(
        !text.contains("No judge has"),
        "it does not say that no judge has run while one fills the table: {text}"
    );
    assert!(
        text.contains("Repetitions") && text.contains("Judges screen"),
        "it says how to get repetitions, in the window's words: {text}"
    );
}

#[test]
fn the_lead_draws_and_assigns_pairs_from_the_window_and_the_report_appears() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("pairs.concord");
    {
        let mut store = pair_study(&study, 6, 3);
        add_experts(&mut store, &["Ana", "Bo"]);
        store.close().unwrap();
    }
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    click(&app, "[data-testid=nav-agreement]");
    app.wait_for("[data-testid=agreement-panel]", Duration::from_secs(10));
    assert!(
        app.try_find("[data-testid=pairwise-view]").is_none(),
        "no pairwise report before any pair is drawn"
    );

    click(&app, "[data-testid=nav-setup]");
    click(&app, "[data-testid=step-assign]");
    app.wait_for_attribute(
        "[data-testid=pairs-card]",
        "data-state",
        "none",
        Duration::from_secs(30),
    );
    click(&app, "[data-testid=pairs-method-per_conversation]");
    fill(&app, "[data-testid=pairs-per-conversation]", "2");
    fill(&app, "[data-testid=pairs-seed]", "3");
    click(&app, "[data-testid=pairs-design]");
    let summary = app.wait_for(
        "[data-testid=pairs-design-summary]",
        Duration::from_secs(30),
    );
    assert_eq!(
        app.attribute(&summary, "data-pairs").as_deref(),
        Some("12"),
        "two pairs from each of six conversations"
    );
    assert_eq!(
        app.attribute(&summary, "data-rubric").as_deref(),
        Some("mentalbench-pairs"),
        "the shipped pairwise form of the study's rubric"
    );

    fill(&app, "[data-testid=pairs-k]", "2");
    fill(&app, "[data-testid=pairs-assign-seed]", "5");
    click(&app, "[data-testid=pairs-assign]");
    wait_text(
        &app,
        "[data-testid=pairs-assigned]",
        "the assignment",
        |t| t.contains("12 pairs") && t.contains("2 experts"),
    );
    app.wait_for_attribute(
        "[data-testid=pairs-card]",
        "data-state",
        "assigned",
        Duration::from_secs(10),
    );
    for expert in ["Ana", "Bo"] {
        let row = app.wait_for(
            &format!("[data-testid=pairs-rater][data-name='{expert}']"),
            Duration::from_secs(10),
        );
        assert_eq!(
            app.attribute(&row, "data-pairs").as_deref(),
            Some("12"),
            "with k = 2 of two experts, {expert} has every pair"
        );
    }

    // The study file holds what the window drew, as the CLI would have drawn it.
    let store = Store::open_read_only(&study, Arc::new(SystemClock), None).unwrap();
    let status = pairs::status(&store, None).expect("a pair design in the study");
    assert_eq!(
        (status.pairs, status.seed, status.method.as_str()),
        (12, 3, "per_conversation"),
        "the design in the file is the one drawn in the window"
    );
    assert!(
        status
            .raters
            .iter()
            .filter(|r| r.kind == "expert")
            .all(|r| r.pairs == 12),
        "each expert holds every pair in the file: {:?}",
        status.raters
    );
    drop(store);

    click(&app, "[data-testid=nav-agreement]");
    let view = app.wait_for("[data-testid=pairwise-view]", Duration::from_secs(30));
    assert!(
        app.text(&view).contains("12 pairs"),
        "the agreement panel reports on the pairs drawn: {}",
        app.text(&view)
    );
}

/// A long-items file of `conversations` × ten answers, enough for an import that runs for
/// seconds in a debug build.
fn write_items(dir: &std::path::Path, conversations: usize) -> std::path::PathBuf {
    use std::io::Write;
    let path = dir.join("items.csv");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    out.write_all(b"conversation_id,context,response_id,source,text\n")
        .unwrap();
    for c in 0..conversations {
        for s in 0..10 {
            writeln!(
                out,
                "c{c},A synthetic context {c},r{c}-{s},source{s},A synthetic answer {s}"
            )
            .unwrap();
        }
    }
    out.flush().unwrap();
    path
}

/// `CONCORD_IMPORT_SHOWN_CONVERSATIONS` sets the size of the import for a quicker local run; it
/// must keep the import going while the Study screen is opened and read.
const IMPORT_ENV: &str = "CONCORD_IMPORT_SHOWN_CONVERSATIONS";

#[test]
fn the_study_screen_shows_an_import_under_way_not_an_empty_study() {
    let conversations: usize = std::env::var(IMPORT_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(5_000);
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("empty.concord");
    Store::create(&study, Arc::new(SystemClock)).expect("an empty study");
    let items = write_items(dir.path(), conversations);

    let app = App::launch(&study);
    app.wait_for("[data-testid=overview-empty]", Duration::from_secs(60));
    click(&app, "[data-testid=overview-import]");
    click(&app, "[data-testid=format-long_items]");
    fill(
        &app,
        "[data-testid=import-path]",
        &items.display().to_string(),
    );
    click(&app, "[data-testid=import-run]");
    click(&app, "[data-testid=nav-overview]");

    let shown = app.wait_for("[data-testid=overview-importing]", Duration::from_secs(10));
    let overview = app.wait_for("[data-testid=overview]", Duration::from_secs(1));
    let still_running = app.attribute(&overview, "data-updating").as_deref() == Some("true");
    let text = app.text(&shown);
    for absent in ["overview-empty", "overview-import", "overview-demo"] {
        assert!(
            app.try_find(&format!("[data-testid={absent}]")).is_none(),
            "during the import the Study screen shows no {absent}: the study is being filled"
        );
    }
    assert!(
        text.contains("Importing") && text.contains("items.csv"),
        "the Study screen says what is being imported: {text}"
    );
    app.screenshot("study-screen-during-import");
    assert!(
        still_running,
        "the import still held the study when the Study screen was read, so what it showed was \
         shown during the import ({conversations} conversations is too small for this journey: \
         see {IMPORT_ENV})"
    );

    // When the import has landed, the counts fill in and the notice goes.
    let deadline = std::time::Instant::now() + Duration::from_secs(600);
    loop {
        let n = app
            .try_find("[data-testid=count-conversations]")
            .and_then(|e| app.attribute(&e, "data-count"))
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(0);
        if n == conversations && app.try_find("[data-testid=overview-importing]").is_none() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the Study screen shows the {conversations} conversations once the import has landed"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_first_launch_opens_the_demo_with_a_welcome_that_says_it_is_sample_data_and_what_each_role_does(
) {
    let home = tempfile::tempdir().unwrap();
    let app = App::launch_bare(home.path(), &[]);
    let welcome = app.wait_for("[data-testid=sample-welcome]", Duration::from_secs(60));
    let text = app.text(&welcome);
    assert!(
        text.contains("demo study") && text.contains("sample data"),
        "the welcome says the study is the demo and holds sample data: {text}"
    );
    for (role, words) in [
        ("lead", "New study"),
        ("expert", "Rate"),
        ("researcher", "Agreement"),
    ] {
        let said = app.text_of(&format!("[data-testid=sample-role-{role}]"));
        assert!(
            said.contains(words),
            "the welcome says what a {role} does next, naming where ({words}): {said}"
        );
    }
    app.assert_accessible("sample-welcome");
    app.screenshot("sample-welcome");

    // Its buttons lead where they say; the welcome stays until it is dismissed.
    click(&app, "[data-testid=sample-welcome-rate]");
    app.wait_for("[data-testid=profile]", Duration::from_secs(15));
    click(&app, "[data-testid=nav-agreement]");
    app.wait_for("[data-testid=agreement-panel]", Duration::from_secs(15));
    click(&app, "[data-testid=nav-overview]");
    app.wait_for("[data-testid=sample-welcome]", Duration::from_secs(10));
    click(&app, "[data-testid=sample-welcome-agreement]");
    app.wait_for("[data-testid=agreement-panel]", Duration::from_secs(15));
    click(&app, "[data-testid=nav-overview]");
    click(&app, "[data-testid=sample-welcome-dismiss]");
    app.wait_for("[data-testid=overview]", Duration::from_secs(10));
    assert!(
        app.try_find("[data-testid=sample-welcome]").is_none(),
        "a dismissed welcome goes"
    );
    drop(app);

    // Remembered: the next launch opens the same demo without it.
    let app = App::launch_bare(home.path(), &[]);
    app.wait_for(
        "[data-testid=overview] [data-testid=count-conversations]",
        Duration::from_secs(60),
    );
    assert!(
        app.try_find("[data-testid=sample-welcome]").is_none(),
        "the welcome, once dismissed, is not shown again"
    );
}

#[test]
fn a_band_resting_on_two_shared_responses_warns_instead_of_placing_judges_and_ppi_gaps_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("demo.concord");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    click(&app, "[data-testid=nav-agreement]");
    app.wait_for("[data-testid=agreement-table]", Duration::from_secs(60));
    // The demo's session rubric: two conversations rated by both demo experts.
    let select = app.wait_for("[data-testid=ag-rubric]", Duration::from_secs(5));
    app.script(
        "const s = arguments[0]; s.value = 'session-care'; s.dispatchEvent(new Event('change')); return 1;",
        serde_json::json!([{"element-6066-11e4-a52e-4f735466cecf": select.0}]),
    );
    let warning = app.wait_for("[data-testid=band-warning]", Duration::from_secs(30));
    let said = app.text(&warning);
    assert!(
        said.contains("Cannot place a judge") && said.contains("only 2 responses"),
        "the band says it cannot place a judge and why: {said}"
    );
    let advice = app.text_of("[data-testid=band-advice]");
    assert!(
        advice.contains("at least two experts"),
        "and below the table, what would narrow it: {advice}"
    );
    assert_eq!(
        app.attribute(&warning, "data-overlap").as_deref(),
        Some("2"),
        "it rests on the two conversations both experts rated"
    );
    let warned = app.find_all("[data-testid=band-warning]").len();
    let bands = app.find_all("[data-testid=expert-band]").len();
    assert_eq!(
        warned, bands,
        "every band of this rubric rests on two shared responses, so each is warned about"
    );
    assert!(
        app.find_all("[data-testid=verdict]").is_empty(),
        "no judge reads above, inside or below such a band"
    );

    // The verdict card says the same, and the leaderboard's empty PPI++ cells say why.
    wait_text(
        &app,
        "[data-testid=verdict-card] [data-testid=finding-icc-band] [data-testid=finding-summary]",
        "the card's band finding",
        |t| t.contains("cannot place the judge"),
    );
    let gaps = app.find_all("[data-testid=ppi-missing]");
    assert!(
        !gaps.is_empty(),
        "the demo judge's scores are all expert-rated: its PPI++ cells are empty"
    );
    for gap in &gaps {
        let title = app.attribute(gap, "title").unwrap_or_default();
        assert!(
            title.contains("no judge-only responses"),
            "an empty PPI++ cell says why on hover: {title:?}"
        );
        let spoken = app.script(
            "return arguments[0].querySelector('.sr-only').textContent;",
            serde_json::json!([{"element-6066-11e4-a52e-4f735466cecf": gap.0}]),
        );
        assert!(
            spoken
                .as_str()
                .is_some_and(|s| s.contains("No PPI++ mean") && s.contains("no judge-only")),
            "and to a screen reader: {spoken}"
        );
    }
    app.screenshot("band-uninformative");
}

#[test]
fn a_second_return_says_which_file_to_send() {
    use super::desktop::{study_with_package, unlock_with, PKG_PASS};
    let dir = tempfile::tempdir().unwrap();
    let (_main, pkg, _items) = study_with_package(dir.path());
    // The expert returned the package once already (yesterday's copy, beside it).
    let earlier = dir.path().join("lead-study-package-ana-returned.concord");
    std::fs::copy(&pkg, &earlier).expect("an earlier returned copy");
    let app = App::launch(&pkg);
    unlock_with(&app, PKG_PASS);
    let path = app.wait_for("[data-testid=return-path]", Duration::from_secs(30));
    let second = dir.path().join("lead-study-package-ana-returned-2.concord");
    assert_eq!(
        app.attribute(&path, "value").as_deref(),
        Some(second.display().to_string().as_str()),
        "the earlier copy is not overwritten unasked: a numbered name is suggested"
    );
    click(&app, "[data-testid=return-ratings]");
    let note = app.wait_for("[data-testid=return-superseded]", Duration::from_secs(15));
    let said = app.text(&note);
    assert!(
        said.starts_with("Send lead-study-package-ana-returned-2.concord")
            && said.contains("lead-study-package-ana-returned.concord")
            && said.contains("need not be sent"),
        "the window says which file to send and that the earlier copy is older: {said}"
    );
    assert!(second.is_file(), "the new copy is written");
}

/// An imported MentalBench file with a phone number and an e-mail address in its contexts (two
/// PHI findings), two experts and an assignment already drawn.
fn study_with_findings_and_an_assignment(dir: &std::path::Path) -> std::path::PathBuf {
    use concord_core::app::import::{import_request, ImportFormat, ImportRequest};
    use concord_core::app::open_study::OpenStudy;
    use concord_core::workflow::assignment::AssignmentOptions;
    let study = dir.join("phi.concord");
    let csv = dir.join("phi-sample.csv");
    std::fs::write(
        &csv,
        "context,response,Gemini,gpt-4o\n\
         \"Please call me on 415-555-0132 tonight, I can't cope.\",\"I hear you.\",\"You are not alone.\",\"Let's talk.\"\n\
         \"I wrote to my old therapist at jo.doe@example.org and got no answer.\",\"That hurts.\",\"Try again?\",\"Maybe she moved.\"\n",
    )
    .unwrap();
    let mut s = OpenStudy::new(Store::create(&study, Arc::new(SystemClock)).unwrap());
    let request = ImportRequest {
        format: ImportFormat::Mentalbench,
        path: csv.display().to_string(),
        out_of_scale: Default::default(),
        rubric: None,
        source: None,
        judge: None,
        expert: None,
        judges: false,
    };
    import_request(&mut s, &request, 1, "lead", &mut |_| {}).expect("the file imports");
    for (name, seed) in [("Ana", 3), ("Bo", 4)] {
        concord_core::app::setup::add_expert(&mut s, name, seed).expect("an expert");
    }
    concord_core::app::setup::assign(&mut s, &AssignmentOptions::new(1, 5)).expect("assigned");
    study
}

#[test]
fn redact_all_asks_first_and_the_assign_refusal_speaks_the_windows_words() {
    let dir = tempfile::tempdir().unwrap();
    let study = study_with_findings_and_an_assignment(dir.path());
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    click(&app, "[data-testid=nav-setup]");
    click(&app, "[data-testid=step-privacy]");
    let counts = app.wait_for_attribute(
        "[data-testid=phi-counts]",
        "data-open",
        "2",
        Duration::from_secs(30),
    );

    // "Redact all 2 open" asks, with the count and what it rewrites; Cancel changes nothing.
    click(&app, "[data-testid=phi-redact-all]");
    let question = app.text_of("[data-testid=phi-redact-all-confirmation]");
    assert!(
        question.contains("Redact all 2 open findings?") && question.contains("2 texts"),
        "the question says how many findings and texts it rewrites: {question}"
    );
    assert_eq!(
        app.attribute(&counts, "data-open").as_deref(),
        Some("2"),
        "nothing is redacted before the answer"
    );
    click(&app, "[data-testid=phi-redact-all-cancel]");
    assert!(
        app.try_find("[data-testid=phi-redact-all-confirmation]")
            .is_none(),
        "Cancel closes the question"
    );
    assert_eq!(
        app.attribute(&counts, "data-open").as_deref(),
        Some("2"),
        "and redacts nothing"
    );
    click(&app, "[data-testid=phi-redact-all]");
    click(&app, "[data-testid=phi-redact-all-confirm]");
    app.wait_for_attribute(
        "[data-testid=phi-counts]",
        "data-redacted",
        "2",
        Duration::from_secs(15),
    );

    // Assigning again without "Replace": refused in the window's words, not the CLI's flags.
    click(&app, "[data-testid=step-assign]");
    click(&app, "[data-testid=assign-run]");
    let refusal = wait_text(&app, "[data-testid=setup-error]", "the refusal", |t| {
        !t.is_empty()
    });
    assert!(
        refusal.contains("Replace the existing assignment") && !refusal.contains("--"),
        "the refusal names the window's checkbox, not a command-line flag: {refusal}"
    );
    app.wait_for("[data-testid=assign-replace]", Duration::from_secs(5));
}
