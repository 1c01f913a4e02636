//! `concord serve`: the first stdout line, the refusal to serve a network in the clear, and the
//! lead's invite (with the lead's name and contact, and the refusal of a name that is another
//! invited expert's login), revoke and status commands against a running server.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

pub(crate) fn concord(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .env_remove("CONCORD_STUDY")
        .args(args)
        .output()
        .expect("the concord binary runs")
}

pub(crate) fn ok(out: std::process::Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} succeeds: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A stand-in browser build of the UI.
pub(crate) fn ui(dir: &std::path::Path) -> std::path::PathBuf {
    let ui = dir.join("ui");
    std::fs::create_dir_all(&ui).expect("ui folder");
    std::fs::write(
        ui.join("index.html"),
        "<!doctype html><title>stand-in</title>",
    )
    .expect("index");
    ui
}

/// A server process that is killed when the test ends.
pub(crate) struct Serving(pub(crate) std::process::Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serve_prints_its_address_first_and_the_lead_invites_revokes_and_lists() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("s.concord");
    let d = db.to_str().expect("path");
    ok(concord(&["--db", d, "demo"]), "demo");
    let ui = ui(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .args(["--db", d, "serve", "--bind", "127.0.0.1:0", "--ui"])
        .arg(&ui)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let serving = Serving(child);
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("a first line");
    let base = first
        .trim()
        .strip_prefix("serving on ")
        .unwrap_or_else(|| panic!("the first line says where it serves: {first:?}"))
        .to_string();
    assert!(
        base.starts_with("http://127.0.0.1:"),
        "a loopback HTTP address: {base}"
    );
    let page = reqwest::blocking::get(format!("{base}/")).expect("the page");
    assert_eq!(page.status(), 200, "the page is served");

    let out = ok(
        concord(&[
            "--db",
            d,
            "serve",
            "invite",
            "--rater",
            "Demo expert A",
            "--base-url",
            &base,
        ]),
        "invite",
    );
    let link = out.lines().next().expect("the link line");
    let token = link
        .strip_prefix(&format!("{base}/invite#"))
        .unwrap_or_else(|| panic!("the link opens the invitation page: {link}"));
    assert_eq!(token.len(), 64, "the token is 32 random bytes in hex");
    let client = reqwest::blocking::Client::new();
    let r = client
        .post(format!("{base}/api/invitation"))
        .json(&serde_json::json!({"token": token}))
        .send()
        .expect("answer");
    assert_eq!(
        r.status(),
        200,
        "the running server knows the new invitation"
    );
    let status = ok(concord(&["--db", d, "serve", "status"]), "status");
    assert!(
        status
            .lines()
            .any(|l| l.contains("Demo expert A") && l.ends_with("\t1")),
        "status lists the open invitation: {status}"
    );
    ok(
        concord(&["--db", d, "serve", "revoke", "--rater", "Demo expert A"]),
        "revoke",
    );
    let r = client
        .post(format!("{base}/api/invitation"))
        .json(&serde_json::json!({"token": token}))
        .send()
        .expect("answer");
    assert_eq!(
        r.status(),
        404,
        "a revoked expert's invitation no longer opens"
    );
    let unknown = concord(&["--db", d, "serve", "invite", "--rater", "Nobody"]);
    assert!(
        !unknown.status.success(),
        "an invitation names an expert of the study"
    );

    // The lead's name and contact go to the pages before a login; a name the login could not
    // tell from an invited expert's is refused.
    ok(
        concord(&["--db", d, "expert", "add", "demo EXPERT a"]),
        "expert add",
    );
    ok(
        concord(&[
            "--db",
            d,
            "serve",
            "invite",
            "--rater",
            "Demo expert A",
            "--lead",
            "Dr Mei Lee",
            "--contact",
            "mei.lee@example.org",
        ]),
        "invite with the lead's name and contact",
    );
    let twin = concord(&["--db", d, "serve", "invite", "--rater", "demo EXPERT a"]);
    let said = String::from_utf8_lossy(&twin.stderr);
    assert!(
        !twin.status.success()
            && said.contains("“demo EXPERT a”")
            && said.contains("“Demo expert A”")
            && said.contains("same login"),
        "a name that is the same login as an invited expert's is refused, naming both: {said}"
    );
    let welcome: serde_json::Value = client
        .get(format!("{base}/api/welcome"))
        .send()
        .and_then(|r| r.json())
        .expect("the welcome");
    assert_eq!(
        (&welcome["lead"], &welcome["contact"]),
        (
            &serde_json::json!("Dr Mei Lee"),
            &serde_json::json!("mei.lee@example.org")
        ),
        "the running server shows the lead and contact the invite kept: {welcome}"
    );
    drop(serving);
}

#[test]
fn serve_refuses_a_network_address_without_tls_or_a_proxy() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("s.concord");
    let d = db.to_str().expect("path");
    ok(concord(&["--db", d, "demo"]), "demo");
    let out = concord(&["--db", d, "serve", "--bind", "0.0.0.0:0"]);
    assert!(!out.status.success(), "0.0.0.0 in the clear is refused");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--tls-cert") && err.contains("--behind-proxy"),
        "the refusal says what to give: {err}"
    );
    assert!(out.stdout.is_empty(), "nothing says it is serving");
}

/// Start `concord serve` on `d` at `bind`; returns the process and its base URL.
pub(crate) fn start_serving(d: &str, bind: &str, ui: &std::path::Path) -> (Serving, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .args(["--db", d, "serve", "--bind", bind, "--ui"])
        .arg(ui)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("a first line");
    let base = first
        .trim()
        .strip_prefix("serving on ")
        .unwrap_or_else(|| panic!("the first line says where it serves: {first:?}"))
        .to_string();
    (Serving(child), base)
}

/// Invite `rater` on the running server at `base` and accept the invitation: their session.
pub(crate) fn invited(d: &str, base: &str, rater: &str, passphrase: &str) -> Web {
    let out = ok(
        concord(&[
            "--db",
            d,
            "serve",
            "invite",
            "--rater",
            rater,
            "--base-url",
            base,
        ]),
        "invite",
    );
    let token = out
        .lines()
        .next()
        .and_then(|l| l.split('#').nth(1))
        .expect("the invitation link carries a token")
        .to_string();
    Web::enter(
        base,
        "/api/invitation/accept",
        serde_json::json!({"token": token, "passphrase": passphrase}),
    )
}

/// A logged-in web session: its cookie and CSRF token.
pub(crate) struct Web {
    client: reqwest::blocking::Client,
    base: String,
    cookie: String,
    csrf: String,
}

impl Web {
    pub(crate) fn enter(base: &str, path: &str, body: serde_json::Value) -> Web {
        let client = reqwest::blocking::Client::builder()
            .timeout(std::time::Duration::from_secs(60))
            .build()
            .expect("client");
        let r = client
            .post(format!("{base}{path}"))
            .json(&body)
            .send()
            .expect("answer");
        assert_eq!(r.status(), 200, "{path} logs the expert in");
        let cookie = r.headers()["set-cookie"]
            .to_str()
            .expect("cookie")
            .split(';')
            .next()
            .expect("pair")
            .to_string();
        let v: serde_json::Value = r.json().expect("session");
        Web {
            client,
            base: base.to_string(),
            cookie,
            csrf: v["csrf"].as_str().expect("csrf").to_string(),
        }
    }

    pub(crate) fn get(&self, path: &str) -> serde_json::Value {
        self.client
            .get(format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .send()
            .and_then(|r| r.json())
            .expect("GET")
    }

    /// Save a value; whether the server acknowledged it.
    pub(crate) fn rate(&self, item: i64, criterion: &str, value: i64) -> bool {
        self.client
            .post(format!("{}/api/items/{item}/rate", self.base))
            .header("cookie", &self.cookie)
            .header("x-csrf-token", &self.csrf)
            .json(&serde_json::json!({"criterion": criterion, "value": value}))
            .send()
            .is_ok_and(|r| r.status().is_success() && r.bytes().is_ok())
    }
}

#[test]
fn every_acknowledged_value_survives_kill_9_of_the_server_in_a_burst() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("s.concord");
    let d = db.to_str().expect("path");
    ok(concord(&["--db", d, "demo"]), "demo");
    let ui = ui(dir.path());
    let (serving, base) = start_serving(d, "127.0.0.1:0", &ui);
    let web = invited(d, &base, "Demo expert A", "correct horse battery staple 41");
    let total = web.get("/api/queue")["total"].as_i64().expect("total");
    let criteria: Vec<(i64, Vec<(String, i64)>)> = (1..=total)
        .map(|n| {
            let item = web.get(&format!("/api/items/{n}"));
            // Two values each criterion's scale holds: 0/1 on a binary one, 1/2 on 1–5.
            let keys = item["criteria"]
                .as_array()
                .expect("criteria")
                .iter()
                .map(|c| {
                    let binary = c["scale"].to_string().to_lowercase().contains("binary");
                    (
                        c["key"].as_str().expect("key").to_string(),
                        if binary { 0 } else { 2 },
                    )
                })
                .collect();
            (n, keys)
        })
        .collect();
    let web = std::sync::Arc::new(web);
    // Four writers in a burst; the server is killed under them.
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let web = web.clone();
            let cells: Vec<(i64, String, i64)> = criteria
                .iter()
                .flat_map(|(n, keys)| keys.iter().map(move |(k, other)| (*n, k.clone(), *other)))
                .skip(w)
                .step_by(4)
                .collect();
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                let mut saves = 0usize;
                // The save the kill cut off: committed or not, it was never acknowledged.
                let mut in_flight = None;
                for (round, (item, key, other)) in cells.iter().cycle().enumerate().take(4000) {
                    let value = if round % 2 == 0 { 1 } else { *other };
                    if web.rate(*item, key, value) {
                        acked.retain(|(i, k, _): &(i64, String, i64)| !(i == item && k == key));
                        acked.push((*item, key.clone(), value));
                        saves += 1;
                    } else {
                        in_flight = Some((*item, key.clone(), value));
                        break;
                    }
                }
                (acked, saves, in_flight)
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let pid = serving.0.id();
    let killed = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success(), "the server is killed with SIGKILL");
    let results: Vec<_> = writers
        .into_iter()
        .map(|h| h.join().expect("a writer"))
        .collect();
    let saves: usize = results.iter().map(|(_, n, _)| n).sum();
    let in_flight: Vec<(i64, String, i64)> =
        results.iter().filter_map(|(_, _, f)| f.clone()).collect();
    let acked: Vec<(i64, String, i64)> = results.into_iter().flat_map(|(a, _, _)| a).collect();
    drop(serving);
    assert!(
        saves > 20,
        "the burst was under way when the server died ({saves} saves acknowledged)"
    );
    assert!(
        saves < 16_000,
        "the server died before the burst ended ({saves} saves acknowledged)"
    );

    // Back up: the page's session carries on (its cookie and CSRF token) and finds every
    // acknowledged value.
    let (_again, base) = start_serving(d, "127.0.0.1:0", &ui);
    let web = Web {
        client: web.client.clone(),
        base,
        cookie: web.cookie.clone(),
        csrf: web.csrf.clone(),
    };
    web.get("/api/queue");
    let mut missing = Vec::new();
    for (item, key, value) in &acked {
        let shown = web.get(&format!("/api/items/{item}"));
        let stored = shown["criteria"]
            .as_array()
            .expect("criteria")
            .iter()
            .find(|c| c["key"] == key.as_str())
            .and_then(|c| c["value"].as_i64());
        // A later save of the same value cut off by the kill may have been committed before its
        // answer was lost: the value it wrote is as good as the one acknowledged before it.
        let superseded = in_flight
            .iter()
            .any(|(i, k, v)| i == item && k == key && stored == Some(*v));
        if stored != Some(*value) && !superseded {
            missing.push((item, key, value, stored));
        }
    }
    assert!(
        missing.is_empty(),
        "every value acknowledged before kill -9 is in the study ({} of {} missing, first: {:?})",
        missing.len(),
        acked.len(),
        &missing[..missing.len().min(5)]
    );
    println!(
        "figure: {saves} saves acknowledged in the burst before kill -9; {} distinct last values checked after restart, {} missing",
        acked.len(),
        missing.len()
    );
    let (item, key, _) = acked.last().expect("a value").clone();
    assert!(
        web.rate(item, &key, 1),
        "the same session writes again after the restart"
    );
    let verify = concord(&["--db", d, "audit", "verify"]);
    assert!(
        verify.status.success(),
        "the audit chain verifies after the crash: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
}

#[test]
fn an_encrypted_study_is_served_with_the_passphrase_from_the_cli_variable() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("s.concord");
    let d = db.to_str().expect("path");
    ok(concord(&["--db", d, "demo"]), "demo");
    let passphrase = "a long study passphrase 2026";
    let encrypt = Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .env("CONCORD_PASSPHRASE", passphrase)
        .args(["--db", d, "study", "encrypt"])
        .output()
        .expect("encrypt runs");
    ok(encrypt, "encrypt");
    let ui = ui(dir.path());
    let without = Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .env_remove("CONCORD_PASSPHRASE")
        .args(["--db", d, "serve", "--bind", "127.0.0.1:0", "--ui"])
        .arg(&ui)
        .output()
        .expect("serve runs");
    assert!(
        !without.status.success(),
        "an encrypted study is not served without its passphrase"
    );
    assert!(
        String::from_utf8_lossy(&without.stderr).contains("CONCORD_PASSPHRASE"),
        "the refusal names the variable to set"
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .env("CONCORD_PASSPHRASE", passphrase)
        .args(["--db", d, "serve", "--bind", "127.0.0.1:0", "--ui"])
        .arg(&ui)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let _serving = Serving(child);
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("a first line");
    let base = first
        .trim()
        .strip_prefix("serving on ")
        .expect("serving")
        .to_string();
    let invite = Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .env("CONCORD_PASSPHRASE", passphrase)
        .args([
            "--db",
            d,
            "serve",
            "invite",
            "--rater",
            "Demo expert A",
            "--base-url",
            &base,
        ])
        .output()
        .expect("invite runs");
    let out = ok(invite, "invite into the served encrypted study");
    let token = out
        .lines()
        .next()
        .and_then(|l| l.split('#').nth(1))
        .expect("token");
    let r = reqwest::blocking::Client::new()
        .post(format!("{base}/api/invitation"))
        .json(&serde_json::json!({"token": token}))
        .send()
        .expect("answer");
    assert_eq!(
        r.status(),
        200,
        "the served encrypted study knows the invitation made beside it"
    );
}
