//! `concord judge run` against a judge on a loopback port, as a user runs it: the endpoint and key
//! source are printed on stderr before the first call (never on the JSON stdout, never the key),
//! and a key variable or endpoint outside the rule is refused before anything is sent.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// The requests the judge received: (request line, authorization header).
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A chat-completions judge on a loopback port that scores every MentalBench attribute 4.
fn tiny_judge() -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port for the judge");
    let base = format!(
        "http://{}/v1",
        listener.local_addr().expect("the judge's address")
    );
    let seen: Seen = Arc::default();
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let (mut length, mut auth) = (0usize, None);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    match name.trim().to_ascii_lowercase().as_str() {
                        "content-length" => length = value.trim().parse().unwrap_or(0),
                        "authorization" => auth = Some(value.trim().to_string()),
                        _ => {}
                    }
                }
            }
            let mut body = vec![0u8; length];
            let _ = reader.read_exact(&mut body);
            record
                .lock()
                .expect("the request log")
                .push((request_line.trim().to_string(), auth));
            let scores = r#"{\"Guidance\":4,\"Informativeness\":4,\"Relevance\":4,\"Safety\":4,\"Empathy\":4,\"Helpfulness\":4,\"Understanding\":4,\"Overall\":4,\"Explanation\":\"Fine.\"}"#;
            let reply = format!(
                r#"{{"id":"c1","object":"chat.completion","choices":[{{"index":0,"message":{{"role":"assistant","content":"{scores}"}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":100,"completion_tokens":20}}}}"#
            );
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (base, seen)
}

fn concord(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_concord"));
    cmd.env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR);
    cmd.args(args).env_remove("CONCORD_STUDY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the concord binary runs")
}

#[test]
fn a_judge_run_shows_its_endpoint_and_key_source_and_refuses_others() {
    const KEY: &str = "sk-cli-test-7d41c2";
    let (base, seen) = tiny_judge();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let study = dir.path().join("judged.concord");
    let db = study.to_str().expect("a UTF-8 path");
    assert!(
        concord(&["--db", db, "demo"], &[]).status.success(),
        "the demo study is made"
    );
    let run = |base_url: &str, var: &str, json: bool| {
        let mut args = vec![
            "--db",
            db,
            "judge",
            "run",
            "--provider",
            "openai-compatible",
            "--base-url",
            base_url,
            "--model",
            "tiny-judge",
            "--rubric",
            "mentalbench",
            "--responses",
            "sample:1",
            "--api-key-env",
            var,
        ];
        if json {
            args.push("--json");
        }
        concord(&args, &[(var, KEY), ("TEST_CLI_JUDGE_API_KEY", KEY)])
    };

    for var in ["HOME", "CONCORD_PASSPHRASE", "AWS_SECRET_ACCESS_KEY"] {
        let out = run(&base, var, false);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(var) && err.contains("environment variable"),
            "{var} is refused as a key source, by name: {err}"
        );
        assert!(!err.contains(KEY), "a refusal never shows the key: {err}");
    }
    for url in [
        "http://judge.example/v1",
        "http://127.0.0.1.evil.example/v1",
    ] {
        let out = run(url, "TEST_CLI_JUDGE_API_KEY", false);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(url) && err.contains("https://"),
            "a remote plain-http endpoint is refused, by URL: {err}"
        );
    }
    assert!(
        seen.lock().expect("the request log").is_empty(),
        "nothing was sent for a refused run"
    );

    let out = run(&base, "TEST_CLI_JUDGE_API_KEY", true);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the allowed run succeeds: {err}");
    let shown = format!(
        "concord: judge endpoint {base}; key from environment variable TEST_CLI_JUDGE_API_KEY"
    );
    let at = err
        .find(&shown)
        .unwrap_or_else(|| panic!("stderr shows endpoint and key source: {err}"));
    assert!(
        err.find("started judge run")
            .is_some_and(|started| at < started),
        "the destination is printed before the run starts sending: {err}"
    );
    assert!(!err.contains(KEY), "the key itself is never printed: {err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value =
        serde_json::from_str(&stdout).expect("--json prints one JSON document on stdout");
    assert_eq!(
        report["status"]["done"], 1,
        "the one sampled call was scored"
    );
    assert!(
        !stdout.contains("key from"),
        "the destination line stays off the JSON stdout"
    );
    let requests = seen.lock().expect("the request log").clone();
    assert_eq!(requests.len(), 1, "one call for one sampled response");
    assert_eq!(
        requests[0].1.as_deref(),
        Some(format!("Bearer {KEY}").as_str()),
        "the key from the named variable went to the shown endpoint"
    );
}
