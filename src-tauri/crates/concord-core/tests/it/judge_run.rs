//! The judge runner against a real HTTP server on loopback that speaks both protocols and injects
//! faults: every response ends with exactly its scores or a recorded failure, finished calls are
//! never sent again after a crash or a cancel, the concurrency limit holds, Retry-After is
//! honoured, repetitions are kept, and the API key never reaches the study file.

use concord_testsupport::judge_server;

use concord_core::judge::{
    self, execute_run, open_run, CancellationToken, Execution, ProviderKind, ResponseSelection,
    RunPhase, RunSettings,
};
use concord_core::store::Store;
use judge_server::{always_fails, expected_binary, expected_score, study_with_items, FakeJudge};
use rusqlite::Connection;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

fn settings(server: &FakeJudge, provider: ProviderKind) -> RunSettings {
    let mut s = RunSettings::new(provider, &server.base_url(), "judge-model-1");
    s.max_tokens = 256;
    s
}

fn quick(concurrency: u32) -> Execution {
    Execution {
        concurrency,
        timeout_ms: 400,
        max_retries: 4,
        backoff_base_ms: 5,
        backoff_cap_ms: 50,
        batch_poll_ms: 20,
        ..Execution::default()
    }
}

/// (response id, repetition, state, failure kind, raw output) of a call row.
type CallRow = (i64, i64, String, Option<String>, Option<String>);

/// Every call row of a run, in row order.
fn rows(path: &Path, run: i64) -> Vec<CallRow> {
    let c = Connection::open(path).unwrap();
    let mut s = c
        .prepare("SELECT response_id, repetition, state, failure_kind, raw_output FROM judge_call WHERE run_id = ?1 ORDER BY id")
        .unwrap();
    let out = s
        .query_map([run], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    out
}

/// criterion key → value of the judge's ratings of one response.
fn ratings_of(path: &Path, response: i64) -> HashMap<String, i64> {
    let c = Connection::open(path).unwrap();
    let mut s = c
        .prepare(
            "SELECT c.key, g.value FROM rating g JOIN criterion c ON c.id = g.criterion_id
             JOIN rater t ON t.id = g.rater_id WHERE t.kind = 'judge' AND g.response_id = ?1",
        )
        .unwrap();
    let out = s
        .query_map([response], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<HashMap<_, _>, _>>()
        .unwrap();
    out
}

fn run_to_end(store: &mut Store, run: i64, exec: &Execution) -> judge::RunReport {
    execute_run(
        store,
        run,
        exec,
        None,
        &CancellationToken::new(),
        &mut |_| {},
    )
    .expect("the run executes")
}

#[test]
fn faults_end_in_scores_or_recorded_failures_openai() {
    let server = FakeJudge::start(Duration::from_millis(2), true, None);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.concord");
    let rubric = judge_server::mentalbench();
    let (mut store, ids) = study_with_items(&path, &rubric, 40);
    let plan = open_run(
        &mut store,
        &settings(&server, ProviderKind::OpenaiCompatible),
    )
    .unwrap();
    assert!(!plan.resumed, "a first run is new");
    let report = run_to_end(&mut store, plan.run_id, &quick(6));
    assert!(!report.cancelled, "nobody cancelled");
    assert_eq!(report.status.total, 40, "one call per response");
    let max = server
        .state
        .max_in_flight
        .load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        max <= 6,
        "the server saw {max} requests at once; the limit was 6"
    );
    assert!(max >= 2, "concurrency must actually be used (saw {max})");
    for (row, (response, _, state, kind, raw)) in rows(&path, plan.run_id).into_iter().enumerate() {
        let item = row as u64;
        assert_eq!(response, ids[row], "rows follow the responses");
        let ratings = ratings_of(&path, response);
        if always_fails(item) {
            assert_eq!(state, "failed", "item {item} never gives readable scores");
            let kind = kind.unwrap();
            assert!(
                kind == "missing_score" || kind == "out_of_range",
                "item {item}: the failure names why ({kind})"
            );
            assert!(
                raw.is_some(),
                "item {item}: the raw output of a failed parse is kept"
            );
            assert!(
                ratings.is_empty(),
                "item {item}: a failed parse never becomes a score"
            );
        } else {
            assert_eq!(
                state, "done",
                "item {item} recovers from its transient fault"
            );
            assert!(raw.is_some(), "item {item}: the raw output is stored");
            assert_eq!(
                ratings.len(),
                7,
                "item {item}: exactly the seven attributes are rated"
            );
            for (k, c) in rubric.criteria.iter().enumerate() {
                assert_eq!(
                    ratings[&c.id],
                    expected_score(item, k),
                    "item {item}, {}: the rating is the judge's score",
                    c.id
                );
            }
        }
    }
    let times = server.state.call_times.lock().unwrap();
    let t = &times[&10];
    assert!(t.len() >= 2, "item 10 was rate limited once and sent again");
    assert!(
        t[1] - t[0] >= Duration::from_millis(950),
        "Retry-After: 1 must be honoured, waited {:?}",
        t[1] - t[0]
    );
    let fails = judge::failures(&store, plan.run_id).unwrap();
    assert_eq!(fails.len(), 8, "items 5, 6, 15, 16, 25, 26, 35, 36 fail");
    assert!(
        fails.iter().all(|f| f.raw_output.is_some()),
        "failures list their raw output"
    );
    let c = Connection::open(&path).unwrap();
    let origin: String = c
        .query_row("SELECT DISTINCT origin FROM rating", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        origin,
        format!("judge:{}", plan.run_id),
        "ratings say which run made them"
    );
    let rationale: Option<String> = c
        .query_row("SELECT rationale FROM rating LIMIT 1", [], |r| r.get(0))
        .unwrap();
    assert!(
        rationale.unwrap().starts_with("Judged item"),
        "the explanation is the rationale"
    );
    let status = judge::run_status(&store, plan.run_id).unwrap();
    assert!(
        status.input_tokens > 0 && status.output_tokens > 0,
        "usage is recorded"
    );
    assert_eq!(
        store.kept_count_differences().unwrap(),
        Vec::new(),
        "a judge run keeps the rating counts the overview reads"
    );
}

#[test]
fn anthropic_psycrisis_reads_the_dict_and_sends_the_key_header() {
    let server = FakeJudge::start(Duration::ZERO, true, Some("sk-ant-test"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.concord");
    let rubric = judge_server::psycrisis();
    let (mut store, ids) = study_with_items(&path, &rubric, 20);
    let plan = open_run(&mut store, &settings(&server, ProviderKind::Anthropic)).unwrap();
    let report = execute_run(
        &mut store,
        plan.run_id,
        &quick(4),
        Some(judge::ApiKey::new("sk-ant-test")),
        &CancellationToken::new(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(
        server
            .state
            .unauthorized
            .load(std::sync::atomic::Ordering::SeqCst),
        0,
        "every request carried the key in x-api-key"
    );
    assert_eq!(
        report.status.done + report.status.failed,
        20,
        "every call finished"
    );
    for (i, id) in ids.iter().enumerate() {
        let item = i as u64;
        let ratings = ratings_of(&path, *id);
        if always_fails(item) {
            assert!(
                ratings.is_empty(),
                "item {item}: an unreadable dict gives no rating"
            );
            continue;
        }
        for (k, c) in rubric.criteria.iter().enumerate() {
            assert_eq!(
                ratings.get(&c.id).copied(),
                Some(expected_binary(item, k)),
                "item {item}, {}: the dict value is the rating",
                c.id
            );
        }
    }
}

#[test]
fn structured_replies_are_asked_for_and_read_on_both_providers() {
    for (provider, rubric) in [
        (ProviderKind::OpenaiCompatible, judge_server::mentalbench()),
        (ProviderKind::Anthropic, judge_server::psycrisis()),
    ] {
        let server = FakeJudge::start(Duration::ZERO, false, None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.concord");
        let (mut store, ids) = study_with_items(&path, &rubric, 6);
        let mut s = settings(&server, provider);
        s.structured = true;
        let run = open_run(&mut store, &s).unwrap().run_id;
        let report = run_to_end(&mut store, run, &quick(2));
        assert_eq!(
            report.status.done, 6,
            "{provider:?}: every structured reply is read"
        );
        assert_eq!(
            server
                .state
                .structured_requests
                .load(std::sync::atomic::Ordering::SeqCst),
            6,
            "{provider:?}: every request carried the reply schema (response_format or a forced tool)"
        );
        for (i, id) in ids.iter().enumerate() {
            let ratings = ratings_of(&path, *id);
            for (k, c) in rubric.criteria.iter().enumerate() {
                let want = if provider == ProviderKind::Anthropic {
                    expected_binary(i as u64, k)
                } else {
                    expected_score(i as u64, k)
                };
                assert_eq!(
                    ratings.get(&c.id).copied(),
                    Some(want),
                    "{provider:?} item {i}, {}: the structured score is the rating",
                    c.id
                );
            }
        }
        let modes = judge::reply_modes(&store).unwrap();
        assert_eq!(
            (modes[0].mode, modes[0].answered, modes[0].unreadable),
            ("structured", 6, 0),
            "{provider:?}: the ledger counts the run's replies under its mode"
        );
    }
    // Free text with faults: the always-unreadable items are counted under their mode.
    let server = FakeJudge::start(Duration::ZERO, true, None);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.concord");
    let (mut store, _) = study_with_items(&path, &judge_server::mentalbench(), 10);
    let run = open_run(
        &mut store,
        &settings(&server, ProviderKind::OpenaiCompatible),
    )
    .unwrap()
    .run_id;
    run_to_end(&mut store, run, &quick(2));
    let modes = judge::reply_modes(&store).unwrap();
    let unreadable = (0..10).filter(|&i| always_fails(i)).count() as i64;
    assert_eq!(
        (modes[0].mode, modes[0].unreadable),
        ("free_text", unreadable),
        "free-text replies that could not be read are counted"
    );
}

#[test]
fn a_crash_and_resume_never_resends_finished_calls() {
    let server = FakeJudge::start(Duration::from_millis(10), false, None);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.concord");
    let rubric = judge_server::mentalbench();
    let (mut store, ids) = study_with_items(&path, &rubric, 150);
    let run = open_run(
        &mut store,
        &settings(&server, ProviderKind::OpenaiCompatible),
    )
    .unwrap()
    .run_id;
    // The writer thread dies in the middle of the run, as a killed process would: nothing after
    // the last commit is written and rows stay in flight.
    let crashed = std::thread::spawn(move || {
        let _ = execute_run(
            &mut store,
            run,
            &quick(8),
            None,
            &CancellationToken::new(),
            &mut |p| {
                if p.done >= 40 {
                    panic!("simulated crash");
                }
            },
        );
    })
    .join();
    assert!(crashed.is_err(), "the run must have died mid-way");
    let before = server.state.calls_snapshot();
    let c = Connection::open(&path).unwrap();
    let done_at_crash: HashSet<i64> = c
        .prepare("SELECT response_id FROM judge_call WHERE run_id = ?1 AND state = 'done'")
        .unwrap()
        .query_map([run], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let in_flight: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM judge_call WHERE run_id = ?1 AND state = 'in_flight'",
            [run],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        done_at_crash.len() >= 40,
        "40 calls were committed before the crash"
    );
    assert!(
        in_flight > 0,
        "the crash left rows in flight, as a real one would"
    );
    drop(c);

    let mut store = Store::open(
        &path,
        std::sync::Arc::new(concord_core::base::clock::SystemClock),
    )
    .unwrap();
    let again = open_run(
        &mut store,
        &settings(&server, ProviderKind::OpenaiCompatible),
    )
    .unwrap();
    assert!(
        again.resumed && again.run_id == run,
        "the same settings resume the same run"
    );
    let report = run_to_end(&mut store, run, &quick(8));
    assert_eq!(report.status.done, 150, "after resuming every call is done");
    assert!(
        report.requeued as i64 >= in_flight,
        "rows in flight at the crash were queued again"
    );
    let after = server.state.calls_snapshot();
    for (i, id) in ids.iter().enumerate() {
        let item = i as u64;
        if done_at_crash.contains(id) {
            assert_eq!(
                after.get(&item),
                before.get(&item),
                "item {item} was finished before the crash and must not be sent again"
            );
        }
        assert_eq!(
            ratings_of(&path, *id).len(),
            7,
            "item {item} has its seven ratings once"
        );
    }
}

#[test]
fn cancel_returns_unfinished_rows_and_changed_settings_make_a_new_run() {
    let server = FakeJudge::start(Duration::from_millis(10), false, None);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.concord");
    let (mut store, _) = study_with_items(&path, &judge_server::mentalbench(), 120);
    let s = settings(&server, ProviderKind::OpenaiCompatible);
    let run = open_run(&mut store, &s).unwrap().run_id;
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    let report = execute_run(&mut store, run, &quick(8), None, &cancel, &mut |p| {
        if p.done >= 30 {
            c2.cancel();
        }
    })
    .unwrap();
    assert!(report.cancelled, "the run reports that it was cancelled");
    let st = report.status;
    assert_eq!(st.in_flight, 0, "nothing stays in flight after a cancel");
    assert!(
        st.done >= 30 && st.done < 120,
        "the run stopped part-way ({} done)",
        st.done
    );
    assert_eq!(
        st.done + st.pending,
        120,
        "every unfinished row is pending again"
    );
    let before = server.state.calls_snapshot();
    let finished: usize = before.values().map(|&n| n as usize).sum();
    assert!(
        finished >= st.done as usize,
        "the server answered at least the done calls"
    );
    let report = run_to_end(&mut store, run, &quick(8));
    assert_eq!(report.status.done, 120, "resuming finishes the run");
    let total: u32 = server.state.calls_snapshot().values().sum();
    assert!(
        (total as i64) < 120 + 8 + 1,
        "only calls open at the cancel may be sent twice ({total} calls for 120 items)"
    );
    let mut warmer = s.clone();
    warmer.temperature = 0.0;
    let other = open_run(&mut store, &warmer).unwrap();
    assert!(
        !other.resumed && other.run_id != run,
        "a changed temperature is a new run"
    );
    let mut faster = quick(32);
    faster.requests_per_minute = Some(100_000);
    let same = open_run(&mut store, &s).unwrap();
    assert!(
        same.resumed,
        "operational settings do not change a run's identity"
    );
    let again = run_to_end(&mut store, same.run_id, &faster);
    assert_eq!(again.finished_now, 0, "a finished run sends nothing");
}

#[test]
fn repetitions_are_all_kept_and_the_first_is_the_rating_row() {
    let server = FakeJudge::start(Duration::ZERO, false, None);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.concord");
    let (mut store, ids) = study_with_items(&path, &judge_server::mentalbench(), 6);
    let mut s = settings(&server, ProviderKind::OpenaiCompatible);
    s.repetitions = 3;
    let run = open_run(&mut store, &s).unwrap().run_id;
    let report = run_to_end(&mut store, run, &quick(4));
    assert_eq!(report.status.total, 18, "3 repetitions of 6 responses");
    assert_eq!(report.status.done, 18, "all repetitions are done");
    let c = Connection::open(&path).unwrap();
    for id in ids {
        let reps: i64 = c
            .query_row("SELECT COUNT(*) FROM judge_call WHERE response_id = ?1 AND scores_json IS NOT NULL", [id], |r| r.get(0))
            .unwrap();
        assert_eq!(reps, 3, "every repetition keeps its own scores");
        let first: String = c
            .query_row(
                "SELECT scores_json FROM judge_call WHERE response_id = ?1 AND repetition = 1",
                [id],
                |r| r.get(0),
            )
            .unwrap();
        let first: HashMap<String, i64> = serde_json::from_str(&first).unwrap();
        assert_eq!(
            ratings_of(&path, id),
            first,
            "the rating is repetition 1's scores"
        );
        let n: i64 = c
            .query_row(
                "SELECT COUNT(*) FROM rating WHERE response_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            n, 7,
            "agreement sees one rating per rater × response × criterion"
        );
    }
}

#[test]
fn a_judges_score_is_the_chosen_aggregate_of_its_repetitions() {
    use concord_core::judge::scores::{set_study_aggregate, RepetitionAggregate};
    use concord_core::panel::agreement::AgreementData;
    let server = FakeJudge::start(Duration::ZERO, false, None);
    server
        .state
        .spread
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.concord");
    let (mut store, ids) = study_with_items(&path, &judge_server::mentalbench(), 6);
    let mut s = settings(&server, ProviderKind::OpenaiCompatible);
    s.repetitions = 3;
    let run = open_run(&mut store, &s).unwrap().run_id;
    assert_eq!(
        run_to_end(&mut store, run, &quick(4)).status.done,
        18,
        "every call answers"
    );
    let spread = |item: u64, k: usize| -> Vec<f64> {
        (1..=3)
            .map(|c| judge_server::spread_score(item, k, c) as f64)
            .collect()
    };
    for (aggregate, expect) in [
        (RepetitionAggregate::Median, None),
        (RepetitionAggregate::Mean, Some(RepetitionAggregate::Mean)),
        (RepetitionAggregate::Mode, Some(RepetitionAggregate::Mode)),
    ] {
        if expect.is_some() {
            set_study_aggregate(&mut store, aggregate).expect("the aggregate is chosen");
        }
        let data = AgreementData::load(&store, "mentalbench").expect("agreement data");
        let judge = data.judges()[0];
        for (item, id) in ids.iter().enumerate() {
            let at = data
                .responses
                .iter()
                .position(|r| r.id == *id)
                .expect("held");
            for k in 0..7 {
                let got = data.series(judge, k)[at];
                let want = match expect {
                    None => expected_score(item as u64, k) as f64,
                    Some(a) => a.of(&spread(item as u64, k)).unwrap(),
                };
                assert_eq!(
                    got,
                    want,
                    "item {item}, attribute {k}: agreement must read the {} of the three \
                     repetitions {:?}, not one of them",
                    aggregate.as_str(),
                    spread(item as u64, k)
                );
            }
        }
    }
    let c = Connection::open(&path).unwrap();
    let kept: String = c
        .query_row(
            "SELECT value FROM study_meta WHERE key = 'judge_repetition_aggregate'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept, "mode", "the study keeps the last aggregate chosen");
}

#[test]
fn the_api_key_never_reaches_the_study_file() {
    const KEY: &str = "sk-test-SECRET-5f1e9c0a7b";
    let server = FakeJudge::start(Duration::ZERO, true, Some(KEY));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.concord");
    let (mut store, _) = study_with_items(&path, &judge_server::mentalbench(), 20);
    std::env::set_var("TEST_JUDGE_API_KEY", KEY);
    let key = judge::key::resolve(&judge::KeySource {
        keyring_account: None,
        env_var: Some("TEST_JUDGE_API_KEY".into()),
    })
    .unwrap()
    .key;
    let run = open_run(
        &mut store,
        &settings(&server, ProviderKind::OpenaiCompatible),
    )
    .unwrap()
    .run_id;
    let report = execute_run(
        &mut store,
        run,
        &quick(4),
        key,
        &CancellationToken::new(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(
        report.status.done, 16,
        "the key was accepted: 16 of 20 items are readable"
    );
    assert_eq!(
        server
            .state
            .unauthorized
            .load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no request lacked the key"
    );
    let mut bytes = std::fs::read(&path).unwrap();
    let wal = dir.path().join("s.concord-wal");
    assert!(
        wal.exists(),
        "the WAL is checked while the study is still open"
    );
    bytes.extend(std::fs::read(&wal).unwrap());
    assert!(
        !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "the API key must never be written to the study or its WAL"
    );
    let status = serde_json::to_string(&judge::runs(&store).unwrap()).unwrap();
    assert!(
        !status.contains(KEY),
        "the key is not in what status reports"
    );

    // The same study encrypted: neither the API key nor the study's passphrase is in its bytes,
    // in its content once decrypted, or in anything printed about the open study.
    const PASSPHRASE: &str = "study passphrase 7c1d";
    drop(store);
    let pass = concord_core::store::Passphrase::new(PASSPHRASE).unwrap();
    concord_core::store::encrypt_study(&path, &pass).unwrap();
    let store = Store::open_with(
        &path,
        std::sync::Arc::new(concord_core::base::clock::SystemClock),
        Some(&pass),
    )
    .unwrap();
    let printed = format!("{store:?} {pass:?}");
    assert!(
        !printed.contains(PASSPHRASE),
        "a printed study or passphrase never shows the passphrase: {printed}"
    );
    let wrong = Store::open_with(
        &path,
        std::sync::Arc::new(concord_core::base::clock::SystemClock),
        Some(&concord_core::store::Passphrase::new("wrong 7c1d guess").unwrap()),
    )
    .unwrap_err()
    .to_string();
    assert!(
        !wrong.contains("7c1d"),
        "an error about a passphrase never repeats it: {wrong}"
    );
    let mut on_disk = std::fs::read(&path).unwrap();
    on_disk.extend(std::fs::read(&wal).unwrap_or_default());
    for secret in [KEY, PASSPHRASE] {
        assert!(
            !on_disk
                .windows(secret.len())
                .any(|w| w == secret.as_bytes()),
            "{secret:?} is not in the encrypted study or its WAL"
        );
    }
    drop(store);
    let copy = dir.path().join("copy.concord");
    std::fs::copy(&path, &copy).unwrap();
    concord_core::store::decrypt_study(&copy, &pass).unwrap();
    let content = std::fs::read(&copy).unwrap();
    for secret in [KEY, PASSPHRASE] {
        assert!(
            !content
                .windows(secret.len())
                .any(|w| w == secret.as_bytes()),
            "{secret:?} is not stored anywhere in the study's content"
        );
    }
}

#[test]
fn batch_mode_both_providers_submit_once_and_collect() {
    for provider in [ProviderKind::OpenaiCompatible, ProviderKind::Anthropic] {
        let server = FakeJudge::start(Duration::ZERO, true, Some("sk-batch"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.concord");
        let rubric = judge_server::mentalbench();
        let (mut store, ids) = study_with_items(&path, &rubric, 30);
        let mut s = settings(&server, provider);
        s.batch = true;
        let run = open_run(&mut store, &s).unwrap().run_id;
        let mut exec = quick(4);
        exec.batch_max_requests = 12;
        // Cancel once the first batches are submitted: they must be polled, not resubmitted.
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        let first = execute_run(
            &mut store,
            run,
            &exec,
            Some(judge::ApiKey::new("sk-batch")),
            &cancel,
            &mut |p| {
                if p.phase == RunPhase::WaitingForBatch {
                    c2.cancel();
                }
            },
        )
        .unwrap();
        assert!(
            first.cancelled,
            "{provider:?}: cancelled after a submission"
        );
        assert!(
            first.status.in_flight > 0,
            "{provider:?}: the submitted batch waits in flight"
        );
        let report = execute_run(
            &mut store,
            run,
            &exec,
            Some(judge::ApiKey::new("sk-batch")),
            &CancellationToken::new(),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(
            report.status.done + report.status.failed,
            30,
            "{provider:?}: every call has a result"
        );
        for (i, id) in ids.iter().enumerate() {
            let item = i as u64;
            assert_eq!(
                server.state.calls_of(item),
                1,
                "{provider:?}: item {item} was submitted exactly once"
            );
            let ratings = ratings_of(&path, *id);
            if always_fails(item) || judge_server::fault_of(item) == 4 {
                assert!(
                    ratings.is_empty(),
                    "{provider:?}: item {item} failed and has no rating"
                );
            } else {
                for (k, c) in rubric.criteria.iter().enumerate() {
                    assert_eq!(
                        ratings.get(&c.id).copied(),
                        Some(expected_score(item, k)),
                        "{provider:?}: item {item} {}",
                        c.id
                    );
                }
            }
        }
        let fails = judge::failures(&store, run).unwrap();
        assert_eq!(
            fails.len(),
            9,
            "{provider:?}: 3 errored lines and 6 unreadable replies are failures"
        );
        assert!(
            fails
                .iter()
                .filter(|f| f.kind.starts_with("batch_"))
                .count()
                == 3,
            "{provider:?}: errored batch lines are recorded as such"
        );
    }
}

#[test]
fn selections_preview_and_estimate_cost() {
    let server = FakeJudge::start(Duration::ZERO, false, None);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.concord");
    let (store, _) = study_with_items(&path, &judge_server::mentalbench(), 50);
    let mut s = settings(&server, ProviderKind::OpenaiCompatible);
    s.selection = ResponseSelection::Sample { n: 10 };
    s.repetitions = 2;
    s.prices = judge::Prices {
        input_per_million: 2.5,
        output_per_million: 10.0,
    };
    let p = judge::preview_run(&store, &s).unwrap();
    assert_eq!(
        (p.responses, p.calls),
        (10, 20),
        "a sample of 10 with 2 repetitions is 20 calls"
    );
    assert!(
        p.estimate.input_tokens > 20 * 300,
        "the rubric prompt alone is hundreds of tokens a call"
    );
    let expected =
        (p.estimate.input_tokens as f64 * 2.5 + p.estimate.output_tokens as f64 * 10.0) / 1e6;
    assert!(
        (p.estimate.cost_usd - expected).abs() < 1e-12,
        "cost follows the prices per million"
    );
    assert_eq!(p.existing_run, None, "nothing was run yet");
    s.selection = ResponseSelection::ExpertRated;
    assert_eq!(
        judge::preview_run(&store, &s).unwrap().responses,
        0,
        "no expert has rated anything yet"
    );
    assert_eq!(
        server
            .state
            .requests
            .load(std::sync::atomic::Ordering::SeqCst),
        0,
        "a preview sends nothing"
    );
}

/// (model, fingerprint, calls) of one answering model.
type Named = (Option<String>, Option<String>, i64);

/// A run's answering models, sorted to compare as a set, and whether its model changed.
fn answered_by(store: &Store, run: i64) -> (Vec<Named>, bool) {
    let status = judge::run_status(store, run).expect("the run's status");
    let a = judge::answering(store, &status).expect("the run's answering models");
    let mut models: Vec<_> = a
        .answering_models
        .into_iter()
        .map(|m| (m.model, m.system_fingerprint, m.calls))
        .collect();
    models.sort();
    (models, a.model_changed)
}

#[test]
fn a_model_switched_mid_run_is_counted_and_reported_as_a_change() {
    use judge_server::{AnswerAs, Answering};
    let server = FakeJudge::start(Duration::ZERO, false, None);
    // Replies 1–6 name a dated version of the asked model, 7–10 another model and backend.
    server.state.answer_as(Answering {
        first: Some(AnswerAs::new("judge-model-1-2025-01-01", Some("fp_one"))),
        then: Some((7, AnswerAs::new("judge-model-2", Some("fp_two")))),
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.concord");
    let (mut store, _) = study_with_items(&path, &judge_server::mentalbench(), 10);
    let settings = settings(&server, ProviderKind::OpenaiCompatible);
    let run = open_run(&mut store, &settings).unwrap().run_id;
    let report = run_to_end(&mut store, run, &quick(3));
    assert_eq!(
        report.status.done, 10,
        "without faults every call is answered once, so the server gave exactly 10 replies"
    );
    let (models, changed) = answered_by(&store, run);
    assert_eq!(
        models,
        vec![
            (
                Some("judge-model-1-2025-01-01".into()),
                Some("fp_one".into()),
                6
            ),
            (Some("judge-model-2".into()), Some("fp_two".into()), 4),
        ],
        "the server named the first model in its first 6 replies and the second in the other 4; \
         each call keeps the name its own reply gave, whatever order the calls finished in"
    );
    assert!(
        changed,
        "two models answered one run: its scores do not all come from the model asked for"
    );
    let c = Connection::open(&path).unwrap();
    let unnamed: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM judge_call WHERE run_id = ?1 AND answering_model IS NULL",
            [run],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        unnamed, 0,
        "every reply named its model, so every call row holds one"
    );
    assert_eq!(
        store.verify_audit_chain().unwrap().broken,
        None,
        "the answering models were written with the calls, inside the audit chain"
    );
    // Rewriting which model answered, outside Concord, is caught like any other change to a
    // sealed call row.
    c.execute(
        "UPDATE judge_call SET answering_model = 'judge-model-1' WHERE run_id = ?1
           AND answering_model = 'judge-model-2'",
        [run],
    )
    .unwrap();
    drop(c);
    assert!(
        store.verify_audit_chain().unwrap().broken.is_some(),
        "answering_model is part of the sealed row, so hiding the switch breaks the chain"
    );
}

#[test]
fn a_provider_that_names_nothing_or_the_asked_model_is_no_change() {
    use judge_server::{AnswerAs, Answering};
    let dir = tempfile::tempdir().unwrap();
    // A server that names no model (the test server's default, like many local servers).
    let silent = FakeJudge::start(Duration::ZERO, false, None);
    let (mut store, _) = study_with_items(
        &dir.path().join("a.concord"),
        &judge_server::mentalbench(),
        6,
    );
    let run = open_run(
        &mut store,
        &settings(&silent, ProviderKind::OpenaiCompatible),
    )
    .unwrap()
    .run_id;
    assert_eq!(
        run_to_end(&mut store, run, &quick(2)).status.done,
        6,
        "every call answered"
    );
    assert_eq!(
        answered_by(&store, run),
        (vec![], false),
        "replies that name nothing list no answering model and are no evidence of a change"
    );

    // An Anthropic judge asked for an alias answers as its dated snapshot, in every reply.
    let named = FakeJudge::start(Duration::ZERO, false, None);
    named.state.answer_as(Answering {
        first: Some(AnswerAs::new("claude-judge-20250101", Some("ignored"))),
        then: None,
    });
    let (mut store, _) =
        study_with_items(&dir.path().join("b.concord"), &judge_server::psycrisis(), 6);
    let mut s = settings(&named, ProviderKind::Anthropic);
    s.model = "claude-judge-latest".into();
    let run = open_run(&mut store, &s).unwrap().run_id;
    assert_eq!(
        run_to_end(&mut store, run, &quick(2)).status.done,
        6,
        "every call answered"
    );
    assert_eq!(
        answered_by(&store, run),
        (vec![(Some("claude-judge-20250101".into()), None, 6)], false),
        "an Anthropic message names its model (it has no fingerprint); the dated snapshot of the \
         asked alias is the model asked for, so nothing changed"
    );
}
