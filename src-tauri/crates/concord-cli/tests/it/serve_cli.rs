//! `concord serve`: the first stdout line, the refusal to serve a network in the clear, and the
//! lead's invite, revoke and status commands against a running server.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn concord(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .env_remove("CONCORD_STUDY")
        .args(args)
        .output()
        .expect("the concord binary runs")
}

fn ok(out: std::process::Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} succeeds: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A stand-in browser build of the UI.
fn ui(dir: &std::path::Path) -> std::path::PathBuf {
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
struct Serving(std::process::Child);

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
