//! Journey of the project lead's setup wizard in the real window: on a fresh study (created as the
//! demo), a MentalBench-layout CSV written here is imported, three experts are added, the sample is
//! assigned with k = 2 and a fixed seed, the assignment table shows the three experts with
//! balanced loads, one expert's package and the long rating CSV are exported beside the study and
//! checked on disk.

use super::{App, Element};
use concord_core::outputs::export::csv::{CONVERSATION_HEADER, LONG_HEADER};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const EXPERTS: [&str; 3] = ["Ana Ruiz", "Ben Okafor", "Chen Wei"];

/// Six synthetic conversations in the MentalBench-100k layout: context, the original answer and
/// two models' answers (texts written for this test; one has a comma, one a line break).
pub(super) fn write_bench_csv(dir: &Path) -> PathBuf {
    let rows = [
        (
            "I keep failing my driving test and feel stupid.",
            "Many people need several tries; what happened on the last one?",
            "Failing a test says nothing about your worth.",
            "Book extra lessons and practise the parts that went wrong.",
        ),
        (
            "My sister and I have not spoken for a year.",
            "A year is long, and it sounds like it weighs on you.",
            "Perhaps send a short, warm message.",
            "Think about what you would want to say first.",
        ),
        (
            "I can't stop checking my phone at night.",
            "Try leaving it in another room, at least for a week.",
            "Night scrolling often feeds worry; notice how you feel after.",
            "Set a do-not-disturb schedule.",
        ),
        (
            "Since the move, I have no friends here.",
            "Moving is lonely at first. What did you enjoy back home?",
            "Local groups, classes or volunteering can help.",
            "Give yourself time; friendships take months.",
        ),
        (
            "My boss criticises me in front of everyone.",
            "That sounds humiliating. Have you been able to tell anyone?",
            "You could ask for feedback in private.",
            "Keep notes of what happens, with dates.",
        ),
        (
            "I feel numb, like nothing matters.",
            "Feeling numb can be a sign of depression.\nHave you had thoughts of harming yourself?",
            "Please consider talking to a doctor.",
            "Small routines, like a walk, can help a little.",
        ),
    ];
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut text = String::from("context,response,Gemini,gpt-4o\n");
    for (context, original, gemini, gpt) in rows {
        text.push_str(&format!(
            "{},{},{},{}\n",
            quote(context),
            quote(original),
            quote(gemini),
            quote(gpt)
        ));
    }
    let path = dir.join("bench-sample.csv");
    std::fs::write(&path, text).expect("the test CSV is written");
    path
}

/// Replace an input's value as a person would (clear, then type), so Svelte's binding sees it.
pub(super) fn fill(app: &App, css: &str, text: &str) {
    let input = app.wait_for(css, Duration::from_secs(10));
    app.script(
        "const e = document.querySelector(arguments[0]); e.value = ''; \
         e.dispatchEvent(new Event('input', {bubbles: true})); return 1;",
        json!([css]),
    );
    app.type_into(&input, text);
}

pub(super) fn click(app: &App, css: &str) {
    let e: Element = app.wait_for(css, Duration::from_secs(10));
    app.click(&e);
}

/// Wait until `css`'s text satisfies `ok`; returns that text.
pub(super) fn wait_text(app: &App, css: &str, what: &str, ok: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(e) = app.try_find(css) {
            let text = app.text(&e);
            if ok(&text) {
                return text;
            }
            if Instant::now() > deadline {
                app.screenshot("timeout");
                panic!("{css} never showed {what}; last text {text:?}");
            }
        } else if Instant::now() > deadline {
            app.screenshot("timeout");
            panic!("{css} never appeared (waiting for {what})");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The absolute path at the end of a "… written to PATH" line.
fn written_path(text: &str) -> PathBuf {
    let path = text
        .rsplit(" to ")
        .next()
        .unwrap_or_else(|| panic!("no path in {text:?}"))
        .trim();
    PathBuf::from(path)
}

#[test]
fn lead_sets_up_a_three_expert_study_from_a_csv_to_a_package_and_a_rating_csv() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("lead.concord");
    let csv = write_bench_csv(tmp.path());
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    click(&app, "[data-testid=nav-setup]");
    app.wait_for("[data-testid=setup-rubric]", Duration::from_secs(10));
    assert!(
        app.try_find("[data-testid=rubric-mentalbench]").is_some(),
        "the built-in MentalBench rubric is offered in step 1"
    );

    // Step 2: a relative path is refused with a clear message; the real file is imported.
    click(&app, "[data-testid=step-import]");
    click(&app, "[data-testid=format-mentalbench]");
    fill(&app, "[data-testid=import-path]", "bench-sample.csv");
    click(&app, "[data-testid=import-run]");
    let refused = wait_text(&app, "[data-testid=setup-error]", "a path message", |t| {
        !t.is_empty()
    });
    assert!(
        refused.contains("full path"),
        "a relative path is explained, not sent: {refused:?}"
    );
    fill(
        &app,
        "[data-testid=import-path]",
        &csv.display().to_string(),
    );
    click(&app, "[data-testid=import-run]");
    let counts = wait_text(&app, "[data-testid=import-counts]", "import counts", |t| {
        t.contains("conversations added")
    });
    assert!(
        counts.starts_with("6 conversations added, 18 responses added"),
        "six conversations with three answers each were imported: {counts:?}"
    );
    assert!(
        app.try_find("[data-testid=quality-none]").is_some(),
        "a clean file reports no data-quality findings"
    );

    // Step 3: three experts, typed in one box.
    click(&app, "[data-testid=step-experts]");
    fill(&app, "[data-testid=expert-names]", &EXPERTS.join(", "));
    click(&app, "[data-testid=experts-add]");
    wait_text(
        &app,
        "[data-testid=team-size]",
        "three chosen experts",
        |t| t.starts_with("3 "),
    );
    for name in EXPERTS {
        let css = format!("[data-testid=expert-choice][data-name='{name}']");
        let checked = app.script(
            "return document.querySelector(arguments[0])?.checked ?? null;",
            json!([css]),
        );
        assert_eq!(checked, json!(true), "{name} is added and takes part");
    }

    // Step 4: 6 of the 14 MentalBench conversations, k = 2, a fixed seed; preview, then assign.
    click(&app, "[data-testid=step-assign]");
    fill(&app, "[data-testid=assign-sample]", "6");
    fill(&app, "[data-testid=assign-k]", "2");
    fill(&app, "[data-testid=assign-seed]", "20240601");
    click(&app, "[data-testid=assign-preview]");
    let preview = wait_text(
        &app,
        "[data-testid=assign-preview-result]",
        "the preview",
        |t| t.contains("Would assign"),
    );
    assert!(
        preview.contains("Would assign 6 conversations (18 responses) to 3 experts, k = 2"),
        "the preview describes the draw: {preview:?}"
    );
    click(&app, "[data-testid=assign-run]");

    // Step 5: the table with the three experts and balanced loads (18 × 2 / 3 = 12 each).
    app.wait_for("[data-testid=assignment-table]", Duration::from_secs(30));
    let rows = app.find_all("[data-testid=progress-row]");
    assert_eq!(rows.len(), 3, "the table lists the three assigned experts");
    for name in EXPERTS {
        let css = format!("[data-testid=progress-row][data-name='{name}'] [data-testid=assigned]");
        assert_eq!(
            app.text_of(&css),
            "12",
            "{name} has 12 of the 36 assigned items"
        );
    }
    let balance = app.wait_for("[data-testid=balance]", Duration::from_secs(5));
    assert_eq!(
        app.attribute(&balance, "data-balanced").as_deref(),
        Some("true"),
        "the loads are reported as balanced"
    );
    let options = app.text_of("[data-testid=assignment-options]");
    assert!(
        options.contains("k = 2, seed 20240601, 6 sampled conversations"),
        "the stored options are shown: {options:?}"
    );
    let shot = app.screenshot("setup-wizard");

    // Step 6: one expert's package, sealed under a passphrase, written beside the study by default.
    click(&app, "[data-testid=step-packages]");
    fill(
        &app,
        "[data-testid=package-passphrase]",
        "told to Ana by phone",
    );
    fill(
        &app,
        "[data-testid=package-passphrase-repeat]",
        "told to Ana by phone",
    );
    click(
        &app,
        "[data-testid=package-row][data-name='Ana Ruiz'] [data-testid=package-export]",
    );
    let written = wait_text(
        &app,
        "[data-testid=package-written]",
        "the package path",
        |t| t.contains(".concord"),
    );
    let package = written_path(&written);
    assert!(
        written.starts_with("12 items"),
        "the package holds Ana's 12 items: {written:?}"
    );
    assert_eq!(
        package.parent(),
        Some(tmp.path().join("lead-exports").as_path()),
        "the default package goes into the study's export folder"
    );
    let bytes = std::fs::read(&package).expect("the package file exists on disk");
    assert!(
        !bytes.starts_with(b"SQLite format 3\0") && !bytes.windows(8).any(|w| w == b"Ana Ruiz"),
        "a package is an encrypted study file: no readable header, no expert name in its bytes"
    );
    let sealed = concord_core::store::Store::open_with(
        &package,
        std::sync::Arc::new(concord_core::base::clock::SystemClock),
        Some(&concord_core::store::Passphrase::new("told to Ana by phone").unwrap()),
    )
    .expect("the package opens with the passphrase the lead typed");
    assert!(
        sealed.package_seal().unwrap().is_some(),
        "and carries its seal"
    );
    drop(sealed);

    // The package comes back (here as issued: nothing rated yet) after the lead has been on
    // another step: the merge uses the passphrase the window already holds for it, untyped.
    click(&app, "[data-testid=step-exports]");
    click(&app, "[data-testid=step-packages]");
    let pass = app.wait_for("[data-testid=package-passphrase]", Duration::from_secs(10));
    assert_eq!(
        app.attribute(&pass, "value").as_deref(),
        Some("told to Ana by phone"),
        "the packages step keeps the passphrase the lead typed when they come back to it"
    );
    fill(
        &app,
        "[data-testid=merge-path]",
        &package.display().to_string(),
    );
    click(&app, "[data-testid=merge-run]");
    app.wait_for("[data-testid=merge-report]", Duration::from_secs(15));
    assert!(
        app.try_find("[data-testid=package-passphrase-error]")
            .is_none(),
        "the merge took the held passphrase: no passphrase was asked for again"
    );

    // Step 7: the long CSV (Excel-friendly by default), checked on disk.
    click(&app, "[data-testid=step-exports]");
    click(&app, "[data-testid=export-long_csv]");
    let written = wait_text(
        &app,
        "[data-testid=written-long_csv]",
        "the CSV path",
        |t| t.contains(".csv"),
    );
    let path = written_path(&written);
    let bytes = std::fs::read(&path).expect("the long CSV exists on disk");
    let text = String::from_utf8(bytes).expect("the CSV is UTF-8");
    let text = text
        .strip_prefix('\u{feff}')
        .expect("the Excel-friendly CSV starts with a byte-order mark");
    let mut lines = text.split("\r\n");
    // The study began as the demo, whose transcripts give every row its turn and scope.
    let header: Vec<&str> = LONG_HEADER
        .iter()
        .chain(CONVERSATION_HEADER.iter())
        .copied()
        .collect();
    assert_eq!(
        lines.next(),
        Some(header.join(",").as_str()),
        "the long CSV has its documented header, with the conversation columns"
    );
    let demo_row = lines
        .find(|l| l.starts_with("demo-en-01,") && l.contains(",Demo expert A,expert,mentalbench,"))
        .unwrap_or_else(|| {
            panic!(
                "no row of Demo expert A on demo-en-01 in {}",
                path.display()
            )
        });
    assert_eq!(
        demo_row.split(',').count(),
        header.len(),
        "a plain row has one field per header column: {demo_row:?}"
    );
    let ratings: usize = written
        .split_whitespace()
        .next()
        // The count is grouped in thousands as the interface writes numbers ("1,234").
        .and_then(|n| n.replace(',', "").parse().ok())
        .expect("the count of ratings written");
    assert_eq!(
        text.split("\r\n").filter(|l| !l.is_empty()).count(),
        ratings + 1,
        "one line per rating written, plus the header"
    );
    println!(
        "setup wizard: {ratings} ratings exported; package {}; screenshot {}",
        package.display(),
        shot.display()
    );
}

/// Journey of the PHI guard in the window: a file whose texts hold a phone number and an e-mail
/// address is imported and the import reports both; the rating export is refused while they are
/// open and written once the lead types an override reason; in the review queue the lead sees each
/// finding in its context, redacts the phone number and keeps the address with a reason (refused
/// without one); then the export goes through without an override. The study file holds the
/// placeholder instead of the number, and the audit trail the override, the redaction and the
/// kept original with their reasons.
#[test]
fn lead_reviews_phi_found_at_import_and_exports_are_gated_until_then() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("phi.concord");
    let csv = tmp.path().join("phi-sample.csv");
    std::fs::write(
        &csv,
        "context,response,Gemini,gpt-4o\n\
         \"Please call me on 415-555-0132 tonight, I can't cope.\",\"I hear you.\",\"You are not alone.\",\"Let's talk.\"\n\
         \"I wrote to my old therapist at jo.doe@example.org and got no answer.\",\"That hurts.\",\"Try again?\",\"Maybe she moved.\"\n",
    )
    .expect("the test CSV is written");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    click(&app, "[data-testid=nav-setup]");
    click(&app, "[data-testid=step-import]");
    click(&app, "[data-testid=format-mentalbench]");
    fill(
        &app,
        "[data-testid=import-path]",
        &csv.display().to_string(),
    );
    click(&app, "[data-testid=import-run]");
    let report = app.wait_for("[data-testid=import-phi]", Duration::from_secs(30));
    assert_eq!(
        (
            app.attribute(&report, "data-found").as_deref(),
            app.attribute(&report, "data-open").as_deref()
        ),
        (Some("2"), Some("2")),
        "the import reports the phone number and the e-mail address it brought in"
    );

    // Exports are refused while the findings are open; an override with a reason writes.
    click(&app, "[data-testid=step-exports]");
    click(&app, "[data-testid=export-long_csv]");
    let refused = wait_text(&app, "[data-testid=setup-error]", "the PHI refusal", |t| {
        !t.is_empty()
    });
    assert!(
        refused.contains("not reviewed"),
        "the refusal says why: {refused:?}"
    );
    assert!(
        app.try_find("[data-testid=written-long_csv]").is_none(),
        "nothing was written"
    );
    fill(
        &app,
        "[data-testid=phi-override-reason]",
        "copy for the ethics board's secure drive",
    );
    click(&app, "[data-testid=export-long_csv]");
    wait_text(
        &app,
        "[data-testid=written-long_csv]",
        "the CSV written under the override",
        |t| t.contains(".csv"),
    );

    // The review queue: each finding in its context; redact one, keep the other with a reason.
    click(&app, "[data-testid=phi-gate-review]");
    let counts = app.wait_for("[data-testid=phi-counts]", Duration::from_secs(10));
    assert_eq!(
        app.attribute(&counts, "data-open").as_deref(),
        Some("2"),
        "both findings wait for a decision"
    );
    app.assert_accessible("phi-review-with-findings");
    let phone_item = "[data-testid=phi-item][data-kind=phone]";
    let context = app.text_of(&format!("{phone_item} [data-testid=phi-context]"));
    assert!(
        context.contains("Please call me on 415-555-0132 tonight"),
        "the phone number is shown in its context: {context:?}"
    );
    click(&app, &format!("{phone_item} [data-testid=phi-redact]"));
    app.wait_for_attribute(
        "[data-testid=phi-counts]",
        "data-redacted",
        "1",
        Duration::from_secs(10),
    );
    click(
        &app,
        "[data-testid=phi-item][data-kind=email] [data-testid=phi-keep]",
    );
    let no_reason = wait_text(&app, "[data-testid=phi-error]", "a reason request", |t| {
        !t.is_empty()
    });
    assert!(
        no_reason.contains("reason"),
        "keeping an original without a reason is refused: {no_reason:?}"
    );
    fill(
        &app,
        "[data-testid=phi-keep-reason]",
        "the therapist's public work address",
    );
    click(
        &app,
        "[data-testid=phi-item][data-kind=email] [data-testid=phi-keep]",
    );
    app.wait_for_attribute(
        "[data-testid=phi-counts]",
        "data-open",
        "0",
        Duration::from_secs(10),
    );
    let shot = app.screenshot("phi-review");

    // With nothing open, the export goes through without an override.
    click(&app, "[data-testid=step-exports]");
    if app.try_find("[data-testid=phi-override-reason]").is_some() {
        fill(&app, "[data-testid=phi-override-reason]", "");
    }
    click(&app, "[data-testid=export-wide_csv]");
    wait_text(
        &app,
        "[data-testid=written-wide_csv]",
        "the CSV written after review",
        |t| t.contains(".csv"),
    );

    let store = concord_core::store::Store::open(
        &study,
        std::sync::Arc::new(concord_core::base::clock::SystemClock),
    )
    .expect("the study opens beside the window");
    let texts = store.phi_texts().unwrap();
    assert!(
        texts
            .iter()
            .any(|t| t.text == "Please call me on [PHONE] tonight, I can't cope.")
            && !texts.iter().any(|t| t.text.contains("415-555-0132")),
        "the stored text holds the placeholder, never the number"
    );
    let log = concord_core::guard::audit::log(&store, &Default::default()).unwrap();
    let detail = |action: &str| {
        log.iter()
            .filter(|e| e.entry.action == action)
            .map(|e| e.entry.detail.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        detail("phi.override")
            .iter()
            .map(|d| d["reason"].as_str())
            .collect::<Vec<_>>(),
        vec![Some("copy for the ethics board's secure drive")],
        "exactly one override, with its reason, is in the audit trail"
    );
    assert_eq!(
        detail("phi.redact").len(),
        1,
        "the redaction is in the audit trail"
    );
    assert_eq!(
        detail("phi.keep")
            .iter()
            .map(|d| d["reason"].as_str())
            .collect::<Vec<_>>(),
        vec![Some("the therapist's public work address")],
        "the kept original is in the audit trail with its reason"
    );
    assert_eq!(
        concord_core::guard::audit::verify(&store).unwrap().broken,
        None,
        "the chain stays intact through the window's decisions"
    );
    println!("PHI review in the window: screenshot {}", shot.display());
}

#[test]
fn a_long_form_ratings_import_shows_its_progress_in_the_window() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("progress.concord");
    let items = tmp.path().join("items.csv");
    let ratings = tmp.path().join("ratings.csv");
    let criteria = [
        "Guidance",
        "Informativeness",
        "Relevance",
        "Safety",
        "Empathy",
        "Helpfulness",
        "Understanding",
    ];
    let mut text = String::from("conversation_id,context,response_id,source,text\n");
    let mut rated = String::from("item,rater,criterion,score\n");
    for c in 0..10 {
        for s in 0..3 {
            text.push_str(&format!(
                "p{c},A synthetic context {c},p{c}-s{s},source{s},A synthetic answer {s}\n"
            ));
            for j in 0..4 {
                for (k, name) in criteria.iter().enumerate() {
                    rated.push_str(&format!(
                        "p{c}-s{s},judge{j},{name},{}\n",
                        1 + (c + s + j + k) % 5
                    ));
                }
            }
        }
    }
    std::fs::write(&items, text).expect("items written");
    std::fs::write(&ratings, rated).expect("ratings written");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    click(&app, "[data-testid=nav-setup]");
    app.wait_for("[data-testid=setup-rubric]", Duration::from_secs(10));
    click(&app, "[data-testid=step-import]");
    click(&app, "[data-testid=format-long_items]");
    fill(
        &app,
        "[data-testid=import-path]",
        &items.display().to_string(),
    );
    click(&app, "[data-testid=import-run]");
    wait_text(&app, "[data-testid=import-counts]", "the items", |t| {
        t.contains("30 responses added")
    });
    click(&app, "[data-testid=format-long_ratings]");
    fill(
        &app,
        "[data-testid=import-path]",
        &ratings.display().to_string(),
    );
    click(&app, "[data-testid=import-run]");
    // 10 conversations × 3 responses × 4 judges × 7 attributes.
    let shown = wait_text(
        &app,
        "[data-testid=import-progress]",
        "the import's progress",
        |t| t.contains("100%"),
    );
    assert!(
        shown.contains("840"),
        "the window shows the import complete with its rows, from the shell's progress events: {shown:?}"
    );
    app.assert_accessible("import-progress");
}

#[test]
fn a_conversations_file_imports_from_the_window() {
    use concord_testsupport::conversation_files::{chat_jsonl, sample};
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("conversations.concord");
    let chat = tmp.path().join("chat.jsonl");
    std::fs::write(&chat, chat_jsonl(&sample())).expect("chat file written");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    click(&app, "[data-testid=nav-setup]");
    app.wait_for("[data-testid=setup-rubric]", Duration::from_secs(10));
    click(&app, "[data-testid=step-import]");
    click(&app, "[data-testid=format-conversations]");
    // The file dialog returns a path to the same field a typed path goes to.
    fill(
        &app,
        "[data-testid=import-path]",
        &chat.display().to_string(),
    );
    click(&app, "[data-testid=import-run]");
    let shown = wait_text(
        &app,
        "[data-testid=import-counts]",
        "the conversations",
        |t| t.contains("3 conversations"),
    );
    assert!(
        shown.contains("11 turns")
            && shown.contains("5 reply items")
            && shown.contains("5 sources"),
        "the window shows what the core's import of conversations counted: {shown:?}"
    );
    drop(app);
    let store = concord_core::store::Store::open(
        &study,
        std::sync::Arc::new(concord_core::base::clock::SystemClock),
    )
    .expect("the study opens");
    assert!(
        store.has_transcripts().expect("query"),
        "the window's import stored the conversations as transcripts"
    );
}

/// Whether the checkbox `css` is ticked.
fn checked(app: &App, css: &str) -> Option<bool> {
    app.script(
        "return document.querySelector(arguments[0])?.checked ?? null;",
        json!([css]),
    )
    .as_bool()
}

#[test]
fn the_wizard_keeps_its_step_and_results_and_imported_experts_are_not_preselected() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("keeps.concord");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    click(&app, "[data-testid=nav-setup]");

    // The demo's two experts came with their ratings and nobody assigned them work: not the team.
    click(&app, "[data-testid=step-experts]");
    app.wait_for("[data-testid=expert-list]", Duration::from_secs(10));
    for name in ["Demo expert A", "Demo expert B"] {
        let css = format!("[data-testid=expert-choice][data-name='{name}']");
        app.wait_for(&css, Duration::from_secs(10));
        assert_eq!(
            checked(&app, &css),
            Some(false),
            "{name}, imported with ratings and never assigned, is not preselected for the team"
        );
    }
    fill(&app, "[data-testid=expert-names]", "Dana Reyes");
    click(&app, "[data-testid=experts-add]");
    wait_text(&app, "[data-testid=team-size]", "one chosen expert", |t| {
        t.starts_with("1 expert chosen")
    });

    // A preview on the assignment step, then away to the overview and back.
    click(&app, "[data-testid=step-assign]");
    fill(&app, "[data-testid=assign-sample]", "2");
    fill(&app, "[data-testid=assign-k]", "1");
    click(&app, "[data-testid=assign-preview]");
    let preview = wait_text(
        &app,
        "[data-testid=assign-preview-result]",
        "the preview",
        |t| t.contains("Would assign"),
    );
    click(&app, "[data-testid=nav-overview]");
    app.wait_for("[data-testid=overview]", Duration::from_secs(10));
    click(&app, "[data-testid=nav-setup]");
    app.wait_for(
        "[data-testid=assign-preview-result]",
        Duration::from_secs(10),
    );
    let active = app.wait_for("[data-testid=step-assign]", Duration::from_secs(5));
    assert!(
        app.attribute(&active, "class")
            .is_some_and(|c| c.contains("active")),
        "the wizard comes back on the step the lead left"
    );
    assert_eq!(
        app.text_of("[data-testid=assign-preview-result]"),
        preview,
        "and with the last result the lead saw there"
    );
}

#[test]
fn an_empty_study_links_to_the_import_step_and_to_the_demo_study() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("empty.concord");
    concord_core::store::Store::create(
        &study,
        std::sync::Arc::new(concord_core::base::clock::SystemClock),
    )
    .expect("an empty study");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview-empty]", Duration::from_secs(60));
    click(&app, "[data-testid=overview-import]");
    app.wait_for("[data-testid=setup]", Duration::from_secs(10));
    let step = app.wait_for("[data-testid=step-import]", Duration::from_secs(5));
    assert!(
        app.attribute(&step, "class")
            .is_some_and(|c| c.contains("active")),
        "'Import data' opens the wizard on its import step"
    );
    click(&app, "[data-testid=nav-overview]");
    click(&app, "[data-testid=overview-demo]");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let n = app
            .try_find("[data-testid=count-conversations]")
            .and_then(|e| app.attribute(&e, "data-count"))
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(0);
        if n > 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "'Start from the demo study' fills the empty study with the demo's conversations"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        app.try_find("[data-testid=overview-empty]").is_none(),
        "the study is no longer empty"
    );
}
