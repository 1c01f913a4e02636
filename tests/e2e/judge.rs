//! Journey on the judge-run screen: a tiny OpenAI-compatible judge on a loopback port (answering
//! MentalBench JSON scores, and one reply that holds no scores but hostile markup), the demo
//! study, the Judges screen filled in by keyboard, a cost preview, a run started in the window
//! (a second start refused while it goes), its progress to the end, the failure shown with its
//! raw output as text, and the judge's ratings on disk; the confirmation Start shows (endpoint
//! and key source) and the endpoint and key-source rule refusing what the page sends.

use super::App;
use rusqlite::Connection;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The reply the judge gives its third call: no scores, and markup that must stay text.
const MALFORMED: &str =
    "I would rather not score this one. <b>bold claim</b> <img src=x onerror=\"window.__judgeInjected=1\">";

/// A small chat-completions server (axum on a loopback port) with a fixed latency, so the run is
/// visibly in progress for a while.
struct TinyJudge {
    base_url: String,
    requests: Arc<AtomicU64>,
    authorizations: Arc<Mutex<Vec<String>>>,
}

/// What the server shares between requests.
#[derive(Clone)]
struct TinyState {
    requests: Arc<AtomicU64>,
    authorizations: Arc<Mutex<Vec<String>>>,
    latency: Duration,
}

fn scores_reply(n: u64) -> String {
    let names = [
        "Guidance",
        "Informativeness",
        "Relevance",
        "Safety",
        "Empathy",
        "Helpfulness",
        "Understanding",
    ];
    let mut obj = serde_json::Map::new();
    for (k, name) in names.iter().enumerate() {
        obj.insert(name.to_string(), json!(1 + (n + k as u64) % 5));
    }
    obj.insert("Overall".into(), json!(3));
    obj.insert("Explanation".into(), json!(format!("Reply {n}.")));
    Value::Object(obj).to_string()
}

async fn complete(
    axum::extract::State(state): axum::extract::State<TinyState>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> axum::Json<Value> {
    let n = state.requests.fetch_add(1, Ordering::SeqCst) + 1;
    if let Some(auth) = headers.get("authorization").and_then(|v| v.to_str().ok()) {
        state
            .authorizations
            .lock()
            .expect("the judge's request log")
            .push(auth.to_string());
    }
    tokio::time::sleep(state.latency).await;
    let content = if n == 3 {
        MALFORMED.to_string()
    } else {
        scores_reply(n)
    };
    axum::Json(json!({
        "id": format!("chatcmpl-{n}"),
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": body.len() / 4, "completion_tokens": 40},
    }))
}

impl TinyJudge {
    fn start(latency: Duration) -> TinyJudge {
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port for the judge");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let addr = listener.local_addr().expect("the judge's address");
        let requests = Arc::new(AtomicU64::new(0));
        let authorizations = Arc::new(Mutex::new(Vec::new()));
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(complete))
            .with_state(TinyState {
                requests: requests.clone(),
                authorizations: authorizations.clone(),
                latency,
            });
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the judge");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)
                    .expect("the judge's listener on the runtime");
                axum::serve(listener, app)
                    .await
                    .expect("the judge serves until the test ends");
            });
        });
        TinyJudge {
            base_url: format!("http://{addr}/v1"),
            requests,
            authorizations,
        }
    }
}

fn fill(app: &App, css: &str, text: &str) {
    let e = app.wait_for(css, Duration::from_secs(5));
    app.clear(&e);
    app.type_into(&e, text);
}

/// Press Send on the confirmation Start shows.
fn send_confirmed(app: &App) {
    let send = app.wait_for("[data-testid=judge-confirm-send]", Duration::from_secs(10));
    app.click(&send);
}

fn attr_u64(app: &App, css: &str, name: &str) -> u64 {
    let e = app.wait_for(css, Duration::from_secs(5));
    app.attribute(&e, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{css} has no numeric {name}"))
}

fn mentalbench_responses_with_text(study: &Path) -> u64 {
    let db = Connection::open(study).expect("the study opens read-side");
    db.query_row(
        "SELECT COUNT(*) FROM response r JOIN conversation c ON c.id = r.conversation_id
         JOIN rubric b ON b.id = c.rubric_id WHERE b.key = 'mentalbench' AND r.text IS NOT NULL",
        [],
        |row| row.get::<_, i64>(0),
    )
    .expect("count the MentalBench responses") as u64
}

#[test]
fn a_local_judge_runs_from_the_window_with_progress_failures_and_ratings_on_disk() {
    let judge = TinyJudge::start(Duration::from_millis(250));
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let study = tmp.path().join("judged.concord");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    let nav = app.wait_for("[data-testid=nav-judges]", Duration::from_secs(5));
    assert_eq!(app.text(&nav), "Judges", "the nav entry is named Judges");
    app.click(&nav);
    app.wait_for("[data-testid=judge-screen]", Duration::from_secs(10));
    app.wait_for("[data-testid=judge-base-url]", Duration::from_secs(5));
    assert_eq!(
        app.script(
            "return document.querySelector('[data-testid=judge-base-url]').value;",
            json!([])
        ),
        json!("http://localhost:11434/v1"),
        "the base URL starts at a local Ollama server"
    );
    app.wait_for("[data-testid=judge-no-runs]", Duration::from_secs(10));

    fill(&app, "[data-testid=judge-base-url]", &judge.base_url);
    fill(&app, "[data-testid=judge-model]", "tiny-judge-1");
    fill(&app, "[data-testid=judge-concurrency]", "2");
    fill(&app, "[data-testid=judge-price-in]", "3");
    fill(&app, "[data-testid=judge-price-out]", "15");

    // Preview: the cost estimate comes first and sends nothing.
    let preview = app.wait_for("[data-testid=judge-preview]", Duration::from_secs(5));
    app.click(&preview);
    app.wait_for("[data-testid=judge-estimate]", Duration::from_secs(10));
    let expected = mentalbench_responses_with_text(&study);
    assert!(
        expected > 3,
        "the demo has MentalBench responses with texts: {expected}"
    );
    assert_eq!(
        attr_u64(&app, "[data-testid=judge-estimate]", "data-calls"),
        expected,
        "one call per MentalBench response with a text"
    );
    let line = app.text_of("[data-testid=judge-estimate-line]");
    assert!(
        line.contains(&format!("{expected} calls"))
            && line.contains('$')
            && !line.contains("$0.0000"),
        "the estimate shows calls, tokens and a non-zero cost: {line}"
    );
    assert!(
        app.text_of("[data-testid=judge-resume]")
            .contains("new run"),
        "nothing to resume yet"
    );
    assert_eq!(
        judge.requests.load(Ordering::SeqCst),
        0,
        "a preview sends no request to the judge"
    );

    // Start first shows where the requests go and where the key comes from; Send sends.
    let start = app.wait_for("[data-testid=judge-start]", Duration::from_secs(5));
    app.click(&start);
    app.wait_for("[data-testid=judge-confirm]", Duration::from_secs(10));
    assert_eq!(
        app.text_of("[data-testid=judge-confirm-endpoint]"),
        judge.base_url,
        "the confirmation names the endpoint"
    );
    assert_eq!(
        app.text_of("[data-testid=judge-confirm-key]"),
        "No key is sent.",
        "and that no key goes with a local model"
    );
    send_confirmed(&app);
    // While the run goes, a second start is refused with a clear error.
    app.wait_for("[data-testid=judge-progress]", Duration::from_secs(10));
    let second = app.script_async(
        "const done = arguments[arguments.length - 1];
         window.__TAURI_INTERNALS__.invoke('judge_start', { request: {
             settings: { provider: 'openai-compatible', base_url: arguments[0], model: 'tiny-judge-2',
               rater_name: null, family: null, rubric: 'mentalbench', selection: { kind: 'all' }, seed: 1,
               repetitions: 1, temperature: 0, top_p: null, max_tokens: 256, prompt: null, batch: false,
               prices: { input_per_million: 0, output_per_million: 0 } },
             concurrency: 1, retry_failed: false,
             key: { env_var: null, keyring_account: null, api_key: null, save_to_keyring: false } } })
           .then(() => done('STARTED'), e => done(e.code));",
        json!([judge.base_url]),
    );
    assert_eq!(
        second,
        json!("judge_busy"),
        "a second run is refused while the first goes"
    );
    // The window stays responsive during the run: other commands answer at once.
    let t0 = std::time::Instant::now();
    let overview = app.script_async(
        "const done = arguments[arguments.length - 1];
         window.__TAURI_INTERNALS__.invoke('study_overview').then(o => done(o.responses), e => done(-1));",
        json!([]),
    );
    assert!(
        overview.as_i64().unwrap_or(-1) > 0 && t0.elapsed() < Duration::from_secs(3),
        "the study answers during the run ({overview} in {:?})",
        t0.elapsed()
    );

    let progress = app.wait_for_attribute(
        "[data-testid=judge-progress]",
        "data-phase",
        "finished",
        Duration::from_secs(90),
    );
    let num = |name: &str| {
        app.attribute(&progress, name)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("the progress has no {name}"))
    };
    let (done, failed, total) = (num("data-done"), num("data-failed"), num("data-total"));
    assert_eq!(total, expected, "the run covers every MentalBench response");
    assert_eq!(failed, 1, "exactly the malformed reply failed");
    assert_eq!(done, total - failed, "everything else was scored");
    let progress_line = app.text_of("[data-testid=judge-progress-line]");
    assert!(
        progress_line.contains(&format!("{done} done")) && progress_line.contains("1 failed"),
        "the progress line shows the counts: {progress_line}"
    );
    let rate_line = app.text_of("[data-testid=judge-rate-line]");
    assert!(
        rate_line.contains("calls/s") && rate_line.contains("ETA") && rate_line.contains('$'),
        "rate, ETA and cost are shown: {rate_line}"
    );

    // The failure is listed with its reason and the raw output, as text.
    let raw = app.wait_for("[data-testid=judge-failure-raw]", Duration::from_secs(10));
    app.assert_accessible("judge-run-with-a-failure");
    assert_eq!(
        app.text(&raw),
        MALFORMED,
        "the raw output is shown verbatim, markup included, as text"
    );
    let rendered = app.script(
        "const pre = document.querySelector('[data-testid=judge-failure-raw]');
         return [pre.querySelectorAll('*').length, window.__judgeInjected ?? null];",
        json!([]),
    );
    assert_eq!(
        rendered,
        json!([0, null]),
        "no element of the raw output was rendered and nothing in it ran"
    );
    assert!(
        !app.text_of("[data-testid=judge-failure-reason]").is_empty(),
        "the failure has a reason"
    );
    let row = app.wait_for("[data-testid=judge-run-row]", Duration::from_secs(10));
    assert_eq!(
        app.attribute(&row, "data-done").as_deref(),
        Some(done.to_string().as_str()),
        "the runs list shows the run's counts"
    );
    app.script(
        "document.querySelector('[data-testid=judge-progress]').scrollIntoView({block: 'start'}); return 1;",
        json!([]),
    );
    std::thread::sleep(Duration::from_millis(200));
    app.screenshot("judge-run");
    drop(app);

    // On disk: one rating per scored response and criterion, from the judge, with its origin.
    let db = Connection::open(&study).expect("the study opens after the window closed");
    let (ratings, raters): (i64, i64) = db
        .query_row(
            "SELECT COUNT(*), COUNT(DISTINCT g.rater_id) FROM rating g JOIN rater t ON t.id = g.rater_id
             WHERE g.origin LIKE 'judge:%' AND t.kind = 'judge' AND t.name = 'tiny-judge-1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("count the judge's ratings");
    assert_eq!(raters, 1, "one judge rater holds the run's ratings");
    assert_eq!(
        ratings as u64,
        done * 7,
        "seven MentalBench criteria per scored response"
    );
    let raw_on_disk: String = db
        .query_row(
            "SELECT raw_output FROM judge_call WHERE state = 'failed'",
            [],
            |r| r.get(0),
        )
        .expect("the failed call keeps its raw output");
    assert_eq!(
        raw_on_disk, MALFORMED,
        "the raw output is stored as it came"
    );
    assert_eq!(
        judge.requests.load(Ordering::SeqCst),
        expected,
        "one request per call: the malformed reply is recorded, not retried"
    );
}

#[test]
fn a_cancelled_run_keeps_its_answers_and_the_same_settings_resume_it() {
    let judge = TinyJudge::start(Duration::from_millis(700));
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let study = tmp.path().join("cancelled.concord");
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    let nav = app.wait_for("[data-testid=nav-judges]", Duration::from_secs(5));
    app.click(&nav);
    fill(&app, "[data-testid=judge-base-url]", &judge.base_url);
    fill(&app, "[data-testid=judge-model]", "slow-judge");
    fill(&app, "[data-testid=judge-concurrency]", "1");
    let start = app.wait_for("[data-testid=judge-start]", Duration::from_secs(5));
    app.click(&start);
    send_confirmed(&app);
    // Let a few answers land, then cancel.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while attr_u64(&app, "[data-testid=judge-progress]", "data-done") < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no answers arrived within 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let cancel = app.wait_for("[data-testid=judge-cancel]", Duration::from_secs(5));
    app.click(&cancel);
    app.wait_for_attribute(
        "[data-testid=judge-progress]",
        "data-phase",
        "cancelled",
        Duration::from_secs(30),
    );
    let done = attr_u64(&app, "[data-testid=judge-progress]", "data-done");
    let total = attr_u64(&app, "[data-testid=judge-progress]", "data-total");
    assert!(
        done >= 2 && done < total,
        "a cancelled run keeps what it finished and leaves the rest ({done} of {total})"
    );
    let row = app.wait_for("[data-testid=judge-run-row]", Duration::from_secs(10));
    assert_eq!(
        app.attribute(&row, "data-done").as_deref(),
        Some(done.to_string().as_str()),
        "the runs list agrees with the progress after the cancel"
    );

    // The same settings: the preview says it resumes, and Start continues the same run.
    let preview = app.wait_for("[data-testid=judge-preview]", Duration::from_secs(5));
    app.click(&preview);
    let resume = app.text_of("[data-testid=judge-resume]");
    assert!(
        resume.contains("resume run 1"),
        "the preview names the run it resumes: {resume}"
    );
    let start = app.wait_for("[data-testid=judge-start]", Duration::from_secs(5));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while app.attribute(&start, "disabled").is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "Start is enabled again after a cancel"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    app.click(&start);
    send_confirmed(&app);
    let notice = app.text_of("[data-testid=judge-notice]");
    assert!(
        notice.contains("Run 1 resumed"),
        "Start continues the same run: {notice}"
    );
    let cancel = app.wait_for("[data-testid=judge-cancel]", Duration::from_secs(5));
    app.click(&cancel);
    app.wait_for_attribute(
        "[data-testid=judge-progress]",
        "data-phase",
        "cancelled",
        Duration::from_secs(30),
    );
    let runs = app.find_all("[data-testid=judge-run-row]");
    assert_eq!(runs.len(), 1, "resuming made no second run");
    drop(app);
    let db = Connection::open(&study).expect("the study opens after the window closed");
    let open: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM judge_call WHERE state = 'in_flight'",
            [],
            |r| r.get(0),
        )
        .expect("count open calls");
    assert_eq!(open, 0, "a cancel leaves no call marked in flight");
}

/// A `judge_start` request as the page could send it, with this base URL and key variable.
fn page_request(base_url: &str, env_var: &str, account: Option<&str>) -> Value {
    json!({ "request": {
        "settings": { "provider": "openai-compatible", "base_url": base_url, "model": "page-judge",
          "rater_name": null, "family": null, "rubric": "mentalbench", "selection": { "kind": "all" },
          "seed": 1, "repetitions": 1, "temperature": 0, "top_p": null, "max_tokens": 256,
          "prompt": null, "batch": false, "prices": { "input_per_million": 0, "output_per_million": 0 } },
        "concurrency": 1, "retry_failed": false,
        "key": { "env_var": env_var, "keyring_account": account, "api_key": null, "save_to_keyring": false } } })
}

#[test]
fn a_run_shows_endpoint_and_key_source_first_and_the_page_cannot_send_the_environment() {
    const KEY: &str = "sk-e2e-3f9a61d0";
    let judge = TinyJudge::start(Duration::ZERO);
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let study = tmp.path().join("keyed.concord");
    let app = App::launch_with(&study, &[("E2E_JUDGE_API_KEY", KEY)]);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    let nav = app.wait_for("[data-testid=nav-judges]", Duration::from_secs(5));
    app.click(&nav);
    fill(&app, "[data-testid=judge-base-url]", &judge.base_url);
    fill(&app, "[data-testid=judge-model]", "keyed-judge");
    fill(&app, "[data-testid=judge-key-env]", "E2E_JUDGE_API_KEY");
    let start = app.wait_for("[data-testid=judge-start]", Duration::from_secs(5));

    // Start asks first: endpoint and key source, never the key; Back sends nothing.
    app.click(&start);
    let confirm = app.wait_for("[data-testid=judge-confirm]", Duration::from_secs(10));
    assert_eq!(
        app.text_of("[data-testid=judge-confirm-endpoint]"),
        judge.base_url,
        "the confirmation names the endpoint"
    );
    assert_eq!(
        app.text_of("[data-testid=judge-confirm-key]"),
        "Key from environment variable E2E_JUDGE_API_KEY.",
        "the confirmation names the key's variable"
    );
    assert_eq!(
        app.attribute(&confirm, "data-loopback").as_deref(),
        Some("true"),
        "a loopback endpoint is marked as this machine"
    );
    assert!(
        !app.text(&confirm).contains(KEY),
        "the key itself is never shown"
    );
    app.assert_accessible("judge-confirm");
    let back = app.wait_for("[data-testid=judge-confirm-back]", Duration::from_secs(5));
    app.click(&back);
    assert!(
        app.try_find("[data-testid=judge-confirm]").is_none(),
        "Back closes the confirmation"
    );

    // A variable that is not named like a key is refused by the shell, on the screen…
    fill(&app, "[data-testid=judge-key-env]", "HOME");
    app.click(&start);
    let refused = app.wait_for("[data-testid=judge-error]", Duration::from_secs(10));
    assert_eq!(
        app.attribute(&refused, "data-code").as_deref(),
        Some("judge_key_source"),
        "HOME is no key source"
    );
    assert!(
        app.text(&refused).contains("HOME")
            && app.try_find("[data-testid=judge-confirm]").is_none(),
        "the refusal names the variable and nothing is offered to send: {}",
        app.text(&refused)
    );

    // …and from the page, whatever it sends.
    let study_account = format!("study:{}", study.display());
    for (args, code, what) in [
        (
            page_request(&judge.base_url, "HOME", None),
            "judge_key_source",
            "HOME as the key variable",
        ),
        (
            page_request(&judge.base_url, "CONCORD_PASSPHRASE", None),
            "judge_key_source",
            "Concord's passphrase variable",
        ),
        (
            page_request(&judge.base_url, "E2E_JUDGE_API_KEY", Some(&study_account)),
            "judge_key_source",
            "a study's passphrase account",
        ),
        (
            page_request("http://judge.example/v1", "E2E_JUDGE_API_KEY", None),
            "judge_endpoint",
            "a remote plain-http endpoint",
        ),
        (
            page_request(
                "http://127.0.0.1.evil.example/v1",
                "E2E_JUDGE_API_KEY",
                None,
            ),
            "judge_endpoint",
            "a remote host spelled like loopback",
        ),
    ] {
        let out = app.invoke("judge_start", args.clone());
        assert_eq!(
            out["error"]["code"],
            json!(code),
            "judge_start refuses {what}: {out}"
        );
        let out = app.invoke(
            "judge_destination",
            json!({ "settings": args["request"]["settings"], "key": args["request"]["key"] }),
        );
        assert_eq!(
            out["error"]["code"],
            json!(code),
            "judge_destination refuses {what}: {out}"
        );
    }
    assert_eq!(
        judge.requests.load(Ordering::SeqCst),
        0,
        "nothing was sent before Send"
    );

    // The allowed run: Send, and the key from the named variable goes to the shown endpoint.
    fill(&app, "[data-testid=judge-key-env]", "E2E_JUDGE_API_KEY");
    app.click(&start);
    send_confirmed(&app);
    app.wait_for_attribute(
        "[data-testid=judge-progress]",
        "data-phase",
        "finished",
        Duration::from_secs(60),
    );
    let sent = judge
        .authorizations
        .lock()
        .expect("the judge's request log")
        .clone();
    assert!(
        !sent.is_empty() && sent.iter().all(|a| *a == format!("Bearer {KEY}")),
        "every call carried the key from E2E_JUDGE_API_KEY ({} calls)",
        sent.len()
    );
    assert_eq!(
        sent.len() as u64,
        judge.requests.load(Ordering::SeqCst),
        "and every request had it"
    );
}
