//! Journey of evidence spans in the agreement panel: a study whose two experts' spans come from
//! an imported span CSV and whose judge was run with spans against the loopback test judge (its
//! quotes: one exact, one with its spaces doubled, one the reply never says). Opened in the real
//! window, the panel's span table carries exactly the figures `agreement --spans --json` computes
//! with the panel's seed and resamples (uα per code and over all codes, each judge's F1 against
//! each expert, exact and overlap), the unlocated quotes are counted and listed as written, and
//! the stacked view shows each rater's spans over the reply's text, named, with each span's code
//! label in words; the chooser steps through the replies by keyboard. The states of the section —
//! the report, a rubric with codes but no spans, a rubric without codes — are axe-core clean, in
//! English and in Chinese.

use super::App;
use concord_core::base::clock::SystemClock;
use concord_core::judge::{
    execute_run, open_run, CancellationToken, Execution, ProviderKind, RunSettings,
};
use concord_core::panel::span_agreement::{span_agreement, SpanAgreementOptions};
use concord_core::rubric::builtin;
use concord_core::store::{RaterKind, Store};
use concord_testsupport::judge_server::{study_with_items, FakeJudge, UNFOUND_QUOTE};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const ITEMS: u64 = 3;
const ENTER: &str = "\u{E007}";

/// The experts' spans on reply `i` ("That sounds hard; item #i. Let us talk."): (rater, code,
/// quote).
fn expert_spans(i: u64) -> Vec<(&'static str, &'static str, String)> {
    vec![
        (
            "ann",
            "actionable_guidance",
            format!("That sounds hard; item #{i}"),
        ),
        ("ann", "validating_statement", "Let us talk.".to_string()),
        ("bob", "actionable_guidance", "sounds hard".to_string()),
        ("bob", "validating_statement", "Let us talk".to_string()),
    ]
}

fn reply(i: u64) -> String {
    format!("That sounds hard; item #{i}. Let us talk.")
}

/// `[start, end)` of `quote` in `text`, in characters.
fn at(text: &str, quote: &str) -> (usize, usize) {
    let byte = text.find(quote).expect("the quote is in the reply");
    let start = text[..byte].chars().count();
    (start, start + quote.chars().count())
}

/// The study: three MentalBench replies, the experts' spans imported from a CSV, a judge run with
/// spans, and two more rubrics (PsyCrisis, with codes and no spans; the session rubric, without
/// codes).
fn span_study(dir: &Path) -> (std::path::PathBuf, Vec<i64>) {
    let path = dir.join("spans.concord");
    let (mut store, ids) = study_with_items(&path, &builtin::mentalbench(), ITEMS);
    let mut csv = String::from("conversation_id,turn,source,rater,code,start,end\n");
    for i in 0..ITEMS {
        for (rater, code, quote) in expert_spans(i) {
            let (s, e) = at(&reply(i), &quote);
            csv.push_str(&format!("c{i},2,gpt4o,{rater},{code},{s},{e}\n"));
        }
    }
    let file = dir.join("expert-spans.csv");
    std::fs::write(&file, csv).expect("the span CSV is written");
    concord_core::intake::spans::import_spans(&mut store, &file, RaterKind::Expert, 7, "lead")
        .expect("the experts' spans import");

    let server = FakeJudge::start(Duration::ZERO, false, None);
    let mut settings = RunSettings::new(
        ProviderKind::OpenaiCompatible,
        &server.base_url(),
        "span-judge",
    );
    settings.max_tokens = 256;
    settings.spans = true;
    let run = open_run(&mut store, &settings)
        .expect("the run opens")
        .run_id;
    execute_run(
        &mut store,
        run,
        &Execution::default(),
        None,
        &CancellationToken::new(),
        &mut |_| {},
    )
    .expect("the judge run executes");
    store
        .write(|tx| {
            tx.add_rubric(&builtin::psycrisis())?;
            tx.add_rubric(&builtin::session_care())?;
            Ok::<_, concord_core::store::StoreError>(())
        })
        .expect("the other rubrics are added");
    (path, ids)
}

fn read_only(study: &Path) -> Store {
    Store::open_read_only(study, Arc::new(SystemClock), None)
        .expect("the study opens read-only beside the window")
}

fn choose(app: &App, css: &str, value: &str) {
    app.wait_for(css, Duration::from_secs(10));
    app.script(
        "const s = document.querySelector(arguments[0]); s.value = arguments[1]; \
         s.dispatchEvent(new Event('change')); return 1;",
        json!([css, value]),
    );
}

/// The number an attribute holds (the shortest decimal of the double the core sent); `None`
/// when it is empty (a figure the data cannot give).
fn figure(app: &App, css: &str, attribute: &str) -> Option<f64> {
    let e = app.wait_for(css, Duration::from_secs(60));
    let v = app.attribute(&e, attribute).unwrap_or_default();
    (!v.is_empty()).then(|| {
        v.parse()
            .unwrap_or_else(|_| panic!("{css} {attribute} is a number: {v:?}"))
    })
}

/// One row of the stacked view as the window shows it.
struct Track {
    rater: String,
    kind: String,
    /// The text each of the rater's spans covers, in order.
    spans: Vec<String>,
    /// The code labels written on the row.
    labels: Vec<String>,
    /// The row's text without its labels.
    text: String,
}

fn tracks(app: &App) -> Vec<Track> {
    let v = app.script(
        "return [...document.querySelectorAll('[data-testid=span-track]')].map(t => { \
           const marks = [...t.querySelectorAll('[data-testid=span-mark]')]; \
           const n = Math.max(0, ...marks.flatMap(m => m.dataset.spans.split(' ').map(Number).map(x => x + 1))); \
           const spans = [...Array(n).keys()].map(i => marks \
             .filter(m => m.dataset.spans.split(' ').map(Number).includes(i)) \
             .map(m => m.textContent).join('')); \
           const labels = [...t.querySelectorAll('[data-testid=span-label]')].map(l => l.textContent.trim()); \
           const text = [...t.querySelector('[data-testid=span-track-text]').childNodes] \
             .filter(c => c.dataset?.testid !== 'span-label').map(c => c.textContent).join(''); \
           return [t.dataset.rater, t.dataset.kind, spans, labels, text]; });",
        json!([]),
    );
    v.as_array()
        .expect("the rows are listed")
        .iter()
        .map(|t| {
            let strings = |x: &Value| -> Vec<String> {
                x.as_array()
                    .map(|a| {
                        a.iter()
                            .map(|s| s.as_str().unwrap_or_default().to_string())
                            .collect()
                    })
                    .unwrap_or_default()
            };
            Track {
                rater: t[0].as_str().unwrap_or_default().to_string(),
                kind: t[1].as_str().unwrap_or_default().to_string(),
                spans: strings(&t[2]),
                labels: strings(&t[3]),
                text: t[4].as_str().unwrap_or_default().to_string(),
            }
        })
        .collect()
}

fn section_text(app: &App) -> String {
    app.script(
        "return document.querySelector('[data-testid=span-section]').innerText;",
        json!([]),
    )
    .as_str()
    .unwrap_or_default()
    .to_string()
}

#[test]
fn the_span_section_shows_the_cores_figures_unlocated_quotes_and_each_raters_spans() {
    let tmp = tempfile::tempdir().expect("temporary folder");
    let (study, ids) = span_study(tmp.path());
    let core = span_agreement(
        &read_only(&study),
        Some("mentalbench"),
        SpanAgreementOptions {
            resamples: 1000,
            seed: 42,
        },
    )
    .expect("the core's span report");
    let judge = core
        .raters
        .iter()
        .find(|r| r.kind == "judge")
        .expect("the judge marked spans")
        .name
        .clone();

    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    app.click(&app.wait_for("[data-testid=nav-agreement]", Duration::from_secs(5)));
    app.wait_for("[data-testid=span-table]", Duration::from_secs(120));

    // (a) The table: the core's figures, code by code and over all codes.
    for row in core.codes.iter().chain(std::iter::once(&core.overall)) {
        let css = format!("[data-testid=span-row][data-code={}]", row.code);
        assert_eq!(
            figure(
                &app,
                &format!("{css} [data-testid=span-alpha]"),
                "data-value"
            ),
            row.alpha_u,
            "the window's uα of {} is the core's",
            row.code
        );
        for j in &row.judges {
            for p in &j.experts {
                let pair = format!(
                    "{css} [data-testid=span-judge][data-judge='{}'] [data-testid=span-pair][data-expert='{}']",
                    j.judge, p.b
                );
                assert_eq!(
                    (
                        figure(&app, &pair, "data-exact"),
                        figure(&app, &pair, "data-overlap")
                    ),
                    (p.f1_exact, p.f1_overlap),
                    "{} against {} on {}: the window's F1 (exact, overlap) is the core's",
                    j.judge,
                    p.b,
                    row.code
                );
            }
        }
    }
    assert!(
        core.overall.alpha_u.is_some() && core.overall.judges[0].experts[0].f1_overlap.is_some(),
        "the study gives figures to compare, not only dashes"
    );

    // The unlocated quotes: one per reply, as the judge wrote it.
    let quotes: Vec<String> = app
        .find_all("[data-testid=span-unlocated-quote]")
        .iter()
        .map(|e| app.text(e))
        .collect();
    assert_eq!(
        quotes,
        vec![UNFOUND_QUOTE.to_string(); ITEMS as usize],
        "every unlocated quote is listed as written"
    );
    assert!(
        section_text(&app).contains(&format!("Judge quotes not located ({ITEMS})")),
        "and counted"
    );

    // (b) The stacked view of the first reply: experts, then the judge, each with their spans.
    app.wait_for("[data-testid=span-track]", Duration::from_secs(30));
    let rows = tracks(&app);
    let names: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.rater.as_str(), r.kind.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("ann", "expert"),
            ("bob", "expert"),
            (judge.as_str(), "judge")
        ],
        "one row per rater, experts first, named"
    );
    for Track {
        rater,
        spans,
        labels,
        text,
        ..
    } in &rows
    {
        assert_eq!(
            text,
            &reply(0),
            "{rater}'s row is the reply's text, as text"
        );
        assert_eq!(
            labels.len(),
            spans.len(),
            "each of {rater}'s spans carries a label in words: {labels:?}"
        );
        assert!(
            labels.iter().all(|l| !l.is_empty() && !l.contains('_')),
            "labels are the codes' names, not their keys: {labels:?}"
        );
    }
    let want = |rater: &str| -> Vec<String> {
        let mut v: Vec<(usize, String)> = expert_spans(0)
            .into_iter()
            .filter(|s| s.0 == rater)
            .map(|s| (at(&reply(0), &s.2).0, s.2))
            .collect();
        v.sort();
        v.into_iter().map(|s| s.1).collect()
    };
    assert_eq!(rows[0].spans, want("ann"), "ann's spans cover her quotes");
    assert_eq!(rows[1].spans, want("bob"), "bob's spans cover his quotes");
    assert_eq!(
        rows[2].spans,
        vec!["That sounds hard; item #0".to_string(); 2],
        "the judge's exact and spaced quotes are both placed on the first sentence"
    );
    let unplaced = app.text(&app.wait_for(
        "[data-testid=span-track][data-kind=judge] [data-testid=span-track-unlocated]",
        Duration::from_secs(5),
    ));
    assert!(
        unplaced.contains(UNFOUND_QUOTE),
        "the judge's row names its unfound quote: {unplaced}"
    );
    app.script(
        "document.querySelector('[data-testid=span-section]').scrollIntoView({block: 'start'}); return 1;",
        json!([]),
    );
    app.screenshot("spans-panel");
    app.script(
        "document.querySelector('[data-testid=span-tracks]').scrollIntoView({block: 'center'}); return 1;",
        json!([]),
    );
    app.screenshot("spans-stacked");
    app.assert_accessible("agreement panel with spans");

    // The chooser, by keyboard: Next moves to the second reply.
    app.wait_for_attribute(
        "[data-testid=span-tracks]",
        "data-response",
        &ids[0].to_string(),
        Duration::from_secs(10),
    );
    app.script(
        "document.querySelector('[data-testid=span-next]').focus(); return 1;",
        json!([]),
    );
    app.press(ENTER);
    // (Waits until Enter on Next shows the second reply.)
    app.wait_for_attribute(
        "[data-testid=span-tracks]",
        "data-response",
        &ids[1].to_string(),
        Duration::from_secs(10),
    );
    assert_eq!(
        tracks(&app)[0].text,
        reply(1),
        "the second reply's rows show its own text"
    );

    // The same section in Chinese.
    let switch = app.wait_for("[data-testid=lang-switch]", Duration::from_secs(5));
    app.click(&switch);
    app.wait_for("html[lang=zh-CN]", Duration::from_secs(10));
    let text = section_text(&app);
    for words in [
        "证据片段的一致性",
        "未定位的评审模型引文",
        "单条回复上的片段",
    ] {
        assert!(
            text.contains(words),
            "the span section is written in Chinese: {words} is missing"
        );
    }
    app.assert_accessible("agreement panel with spans, Chinese");

    // A rubric with codes and no spans says how to get them; one without codes says so.
    choose(&app, "[data-testid=ag-rubric]", "psycrisis");
    app.wait_for("[data-testid=span-empty]", Duration::from_secs(30));
    app.assert_accessible("span section without spans, Chinese");
    choose(&app, "[data-testid=ag-rubric]", "session-care");
    app.wait_for("[data-testid=span-no-codes]", Duration::from_secs(30));
    app.click(&app.wait_for("[data-testid=lang-switch]", Duration::from_secs(5)));
    app.wait_for("html[lang=en]", Duration::from_secs(10));
    app.assert_accessible("span section of a rubric without codes");
    choose(&app, "[data-testid=ag-rubric]", "psycrisis");
    let empty = app.text(&app.wait_for("[data-testid=span-empty]", Duration::from_secs(30)));
    assert!(
        empty.contains("concord import spans") && empty.contains("--spans"),
        "the empty state says how to get spans: {empty}"
    );
    app.assert_accessible("span section without spans");
}
