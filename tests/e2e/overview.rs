//! Journey: first launch on a fresh study file creates the demo study and the overview shows its
//! real counts; a file that is not a study shows a clear message and stays untouched; a study
//! holding answers without text (built from ratings alone) says how many and which import fills them.

use super::{grouped, App};
use concord_core::intake::demo::demo_study;
use std::time::Duration;

#[test]
fn first_launch_shows_the_demo_study_overview() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("first-launch.concord");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));
    let rendered_after = app.launched_at.elapsed();

    let demo = demo_study().unwrap();
    // A transcript's items: its rated assistant turns and candidates, or one session item.
    let transcript_items: usize = demo
        .transcripts
        .iter()
        .map(|t| match t.rubric.as_str() {
            "session-care" => 1,
            _ => {
                t.messages
                    .iter()
                    .filter(|m| m.role == concord_core::store::Role::Assistant)
                    .count()
                    + t.candidates.len()
            }
        })
        .sum();
    let responses: usize = demo
        .conversations
        .iter()
        .map(|c| c.responses.len())
        .sum::<usize>()
        + transcript_items;
    let ratings: usize = demo.ratings.iter().map(|r| r.values.len()).sum::<usize>()
        + demo
            .transcripts
            .iter()
            .flat_map(|t| &t.ratings)
            .map(|r| r.values.len())
            .sum::<usize>();
    assert_eq!(
        app.text_of("[data-testid=count-conversations]"),
        grouped(demo.conversations.len() + demo.transcripts.len()),
        "the overview must show the demo's conversations, single-turn and multi-turn, read from SQLite"
    );
    assert_eq!(
        app.text_of("[data-testid=count-responses]"),
        grouped(responses),
        "every demo answer and every rated item of a conversation is a response"
    );
    assert_eq!(
        app.text_of("[data-testid=count-ratings]"),
        grouped(ratings),
        "every demo value is a rating, its count grouped in thousands"
    );
    let raw = app.wait_for("[data-testid=count-ratings]", Duration::from_secs(5));
    assert_eq!(
        app.attribute(&raw, "data-count"),
        Some(ratings.to_string()),
        "the exact count stays readable by a machine"
    );
    assert_eq!(
        app.find_all("[data-testid=rater-row]").len(),
        demo.raters.len(),
        "one row per demo rater"
    );
    assert_eq!(
        app.find_all("[data-testid=rubric]").len(),
        3,
        "the demo uses both built-in reply rubrics and the shipped session rubric"
    );
    assert_eq!(
        app.find_all("[data-testid=source-row]").len(),
        demo.sources.len(),
        "one row per source"
    );
    assert!(
        study.exists(),
        "the demo study was written to the requested file"
    );
    let rss = app.app_rss_kb();
    let shot = app.screenshot("overview");
    println!(
        "figure: launch to overview rendered {:.0} ms; app RSS {} kB; screenshot {}",
        rendered_after.as_secs_f64() * 1000.0,
        rss.map(|k| k.to_string())
            .unwrap_or_else(|| "unknown".into()),
        shot.display()
    );
}

#[test]
fn a_file_that_is_not_a_study_is_refused_in_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("notes.concord");
    std::fs::write(&study, "meeting notes, not a study").unwrap();
    let app = App::launch(&study);
    let msg = app.text_of("[data-testid=study-error-message]");
    assert!(
        msg.contains("not a SQLite database") && msg.contains("notes.concord"),
        "the window must say which file and why: {msg}"
    );
    app.screenshot("not-a-study");
    app.assert_accessible("not-a-study");
    drop(app);
    assert_eq!(
        std::fs::read_to_string(&study).unwrap(),
        "meeting notes, not a study",
        "a refused file must stay untouched"
    );
}

#[test]
fn the_interface_switches_to_chinese() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("zh.concord");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));
    let switch = app.wait_for("[data-testid=lang-switch]", Duration::from_secs(5));
    app.click(&switch);
    let title = app.text_of("[data-testid=overview] h1");
    assert_eq!(
        title, "研究概览",
        "the overview heading must come from the Chinese catalogue"
    );
    let lang = app.script(
        "return document.documentElement.lang;",
        serde_json::json!([]),
    );
    assert_eq!(
        lang, "zh-CN",
        "the document language drives CJK font selection"
    );
    let psycrisis = app.wait_for(
        "[data-testid=rubric][data-key=psycrisis]",
        Duration::from_secs(5),
    );
    assert_eq!(
        app.attribute(&psycrisis, "data-key").as_deref(),
        Some("psycrisis"),
        "the PsyCrisis rubric is listed"
    );
    assert!(
        app.text(&psycrisis).contains("评估并提取证据支持的风险"),
        "PsyCrisis dimensions show their Chinese labels"
    );
    app.screenshot("overview-zh");
}

#[test]
fn the_overview_says_how_many_answers_have_no_text_and_which_import_fills_them() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("ratings-only.concord");
    // Three conversations, two answers each, the first two conversations' answers without text.
    let mut store = concord_core::store::Store::create(
        &study,
        std::sync::Arc::new(concord_core::base::clock::SystemClock),
    )
    .expect("a new study file");
    concord_testsupport::lead_study::populate_textless(&mut store, 3, 2);
    drop(store);
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(30));
    let note = app.wait_for(
        "[data-testid=overview-without-text]",
        Duration::from_secs(10),
    );
    assert_eq!(
        app.attribute(&note, "data-count").as_deref(),
        Some("4"),
        "four of the six answers are held without text, and the overview says so"
    );
    let text = app.text_of("[data-testid=overview-without-text]");
    assert!(
        text.starts_with("4 answers have no text") && text.contains("MentalBench-100k"),
        "the warning counts them (plural) and names the import that fills them: {text:?}"
    );
}
