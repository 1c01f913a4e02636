//! A run as an OpenAI batch file and back: the exported request lines carry stable custom_ids,
//! an output file (answered here as `vllm run-batch` would, from the loopback judge's replies)
//! is matched by custom_id whatever its line order, missing lines leave their calls open for the
//! next export, and a file with an unknown or duplicate id is refused whole.

use concord_core::judge::batch_file::{export_batch_file, import_batch_file};
use concord_core::judge::{open_run, run_status, ProviderKind, RunSettings};
use concord_testsupport::judge_server::{
    self, expected_score, item_in, judge_text, study_with_items,
};
use serde_json::{json, Value};
use std::io::Cursor;

fn output_line(request: &Value) -> Value {
    let user = request["body"]["messages"][0]["content"]
        .as_str()
        .expect("a user message");
    let item = item_in(user).expect("the request names its item");
    json!({
        "id": format!("vllm-{item}"),
        "custom_id": request["custom_id"],
        "response": {"status_code": 200, "request_id": "r", "body": {
            "id": "c", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": judge_text(item, false, false)}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 40}}},
        "error": null,
    })
}

fn jsonl(lines: &[Value]) -> Vec<u8> {
    lines
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn a_batch_file_round_trip_matches_custom_ids_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, ids) = study_with_items(
        &dir.path().join("s.concord"),
        &judge_server::mentalbench(),
        8,
    );
    let mut s = RunSettings::new(
        ProviderKind::OpenaiCompatible,
        "http://127.0.0.1:9/v1",
        "local-vllm",
    );
    s.repetitions = 2;
    let run = open_run(&mut store, &s).unwrap().run_id;

    let mut file = Vec::new();
    let written = export_batch_file(&store, run, &mut file).expect("the export");
    assert_eq!(
        written.lines, 16,
        "one request line per call (8 responses × 2 repetitions)"
    );
    let requests: Vec<Value> = String::from_utf8(file.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    for r in &requests {
        assert_eq!(r["url"], "/v1/chat/completions", "the OpenAI batch format");
        assert!(
            r["custom_id"]
                .as_str()
                .unwrap()
                .starts_with(&format!("run-{run}-")),
            "custom_ids name the run"
        );
    }
    let mut again = Vec::new();
    export_batch_file(&store, run, &mut again).unwrap();
    assert_eq!(
        again, file,
        "exporting again writes the same lines: custom_ids are stable"
    );

    // The output, out of order, one line missing.
    let mut answered: Vec<Value> = requests.iter().map(output_line).collect();
    answered.reverse();
    let held_back = answered.remove(3);
    let out = jsonl(&answered);

    // A duplicate or an unknown id refuses the whole file.
    let mut dup = answered.clone();
    dup.push(answered[0].clone());
    let err = import_batch_file(&mut store, run, || Ok(Cursor::new(jsonl(&dup)))).unwrap_err();
    assert!(
        err.to_string().contains("1 duplicate"),
        "a duplicate id is named: {err}"
    );
    let mut unknown = answered.clone();
    unknown[0]["custom_id"] = json!("run-999-abcdef012345-call-1");
    let err = import_batch_file(&mut store, run, || Ok(Cursor::new(jsonl(&unknown)))).unwrap_err();
    assert!(
        err.to_string()
            .contains("1 line(s) with an unknown custom_id"),
        "{err}"
    );
    assert_eq!(
        run_status(&store, run).unwrap().done,
        0,
        "a refused file writes nothing"
    );

    let r =
        import_batch_file(&mut store, run, || Ok(Cursor::new(out.clone()))).expect("the import");
    assert_eq!(
        (r.lines, r.done, r.failed, r.missing),
        (15, 15, 0, 1),
        "every line but the held-back one is recorded"
    );
    let r = import_batch_file(&mut store, run, || Ok(Cursor::new(out.clone()))).unwrap();
    assert_eq!(
        (r.done, r.already_done),
        (0, 15),
        "importing again skips the calls already done"
    );

    let mut rest = Vec::new();
    assert_eq!(
        export_batch_file(&store, run, &mut rest).unwrap().lines,
        1,
        "only the open call is exported again"
    );
    let rest: Value = serde_json::from_slice(rest.trim_ascii_end()).unwrap();
    assert_eq!(
        rest["custom_id"], held_back["custom_id"],
        "with the custom_id it had"
    );
    let r = import_batch_file(&mut store, run, || {
        Ok(Cursor::new(jsonl(std::slice::from_ref(&held_back))))
    })
    .unwrap();
    assert_eq!((r.done, r.missing), (1, 0), "the last call is recorded");
    assert_eq!(
        run_status(&store, run).unwrap().done,
        16,
        "every call is done"
    );

    let rubric_id = store.rubrics().unwrap()[0].id;
    let criteria = store.criteria_in_order(rubric_id).unwrap();
    let data = concord_core::panel::agreement::AgreementData::load(&store, "mentalbench").unwrap();
    let judge = data.judges()[0];
    for (item, id) in ids.iter().enumerate() {
        let at = data.responses.iter().position(|r| r.id == *id).unwrap();
        for k in 0..criteria.len() {
            assert_eq!(
                data.series(judge, k)[at],
                expected_score(item as u64, k) as f64,
                "item {item}, attribute {k}: the imported reply is the judge's score"
            );
        }
    }
}

#[test]
fn an_imported_batch_file_records_the_model_each_line_names() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, _) = study_with_items(
        &dir.path().join("s.concord"),
        &judge_server::mentalbench(),
        6,
    );
    let s = RunSettings::new(
        ProviderKind::OpenaiCompatible,
        "http://127.0.0.1:9/v1",
        "local-vllm",
    );
    let run = open_run(&mut store, &s).unwrap().run_id;
    let mut file = Vec::new();
    export_batch_file(&store, run, &mut file).unwrap();
    // Lines 0–2 name the asked model with a fingerprint, 3–4 another model, 5 nothing.
    let answered: Vec<Value> = String::from_utf8(file)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut line = output_line(&serde_json::from_str(l).unwrap());
            match i {
                0..=2 => {
                    line["response"]["body"]["model"] = json!("local-vllm");
                    line["response"]["body"]["system_fingerprint"] = json!("fp_local");
                }
                3 | 4 => line["response"]["body"]["model"] = json!("served-instead"),
                _ => {}
            }
            line
        })
        .collect();
    let r = import_batch_file(&mut store, run, || Ok(Cursor::new(jsonl(&answered)))).unwrap();
    assert_eq!(r.done, 6, "every line is recorded");
    let status = run_status(&store, run).unwrap();
    let a = concord_core::judge::answering(&store, &status).unwrap();
    let counts: Vec<(Option<&str>, Option<&str>, i64)> = a
        .answering_models
        .iter()
        .map(|m| (m.model.as_deref(), m.system_fingerprint.as_deref(), m.calls))
        .collect();
    assert_eq!(
        counts,
        vec![
            (Some("local-vllm"), Some("fp_local"), 3),
            (Some("served-instead"), None, 2)
        ],
        "each output line's model is its call's, in call order; the line naming nothing is \
         not counted"
    );
    assert!(
        a.model_changed,
        "two calls were answered by a model the run did not ask for"
    );
}

/// Peak resident memory of this process so far, in MiB (Linux `VmHWM`).
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The figures in BENCHMARKS.md ("Batch files"): export and import of `CONCORD_BATCH_CALLS`
/// calls (default 20,000) through files on disk, with the time and the peak memory after each.
#[test]
#[ignore = "a measurement, run by hand: CONCORD_BATCH_CALLS=N cargo test … -- --ignored --nocapture"]
fn batch_file_scale() {
    use std::io::{BufRead, BufReader, BufWriter, Write};
    let n: u64 = std::env::var("CONCORD_BATCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let dir = tempfile::tempdir().unwrap();
    let t = std::time::Instant::now();
    let (mut store, _) = study_with_items(
        &dir.path().join("s.concord"),
        &judge_server::mentalbench(),
        n,
    );
    let s = RunSettings::new(
        ProviderKind::OpenaiCompatible,
        "http://127.0.0.1:9/v1",
        "local-vllm",
    );
    let run = open_run(&mut store, &s).unwrap().run_id;
    println!(
        "study of {n} responses and its run: {:.1?}, peak {:.0} MiB",
        t.elapsed(),
        peak_mib()
    );
    let requests = dir.path().join("requests.jsonl");
    let t = std::time::Instant::now();
    let mut w = BufWriter::new(std::fs::File::create(&requests).unwrap());
    let written = export_batch_file(&store, run, &mut w).unwrap();
    w.flush().unwrap();
    drop(w);
    let bytes = std::fs::metadata(&requests).unwrap().len();
    println!(
        "export: {} lines, {:.0} MiB, {:.1?}, peak {:.0} MiB",
        written.lines,
        bytes as f64 / 1048576.0,
        t.elapsed(),
        peak_mib()
    );
    let results = dir.path().join("results.jsonl");
    let mut w = BufWriter::new(std::fs::File::create(&results).unwrap());
    for line in BufReader::new(std::fs::File::open(&requests).unwrap()).lines() {
        let r: Value = serde_json::from_str(&line.unwrap()).unwrap();
        writeln!(w, "{}", output_line(&r)).unwrap();
    }
    w.flush().unwrap();
    drop(w);
    std::fs::remove_file(&requests).unwrap();
    let t = std::time::Instant::now();
    let r = import_batch_file(&mut store, run, || {
        std::fs::File::open(&results).map(BufReader::new)
    })
    .unwrap();
    println!(
        "import: {} lines, {} done, {:.1?}, peak {:.0} MiB",
        r.lines,
        r.done,
        t.elapsed(),
        peak_mib()
    );
    assert_eq!(r.done, n, "every call is recorded");
}
