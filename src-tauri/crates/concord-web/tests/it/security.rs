//! The server's guards, each tested over HTTP against a real server: sessions, own queue only,
//! CSRF, static files, body size, hostile text, lock-out, revocation, idle timeout, invitations,
//! headers and the refusal to serve a network in the clear.

use crate::{serve, Browser, HOSTILE, PAGE_MARK};
use concord_testsupport::web::{STRONG, STRONG_B};
use concord_web::api::SESSION_ROUTES;
use concord_web::{ServeError, ServeOptions};
use std::io::{Read, Write};

fn send(web: &mut Browser, method: &str, path: &str) -> reqwest::blocking::Response {
    match method {
        "GET" => web.get(path),
        _ => web.post(path, serde_json::json!({})),
    }
}

#[test]
fn every_api_route_answers_401_without_a_session() {
    let (_served, _) = serve(1, &["Ada"], |_| {});
    let mut anonymous = Browser::new(&_served.base);
    let mut forged = Browser::new(&_served.base);
    forged.cookie = Some("00".repeat(32));
    forged.csrf = Some("00".repeat(32));
    for (method, path) in SESSION_ROUTES {
        for (who, web) in [
            ("no cookie", &mut anonymous),
            ("a made-up cookie", &mut forged),
        ] {
            let r = send(web, method, path);
            assert_eq!(r.status(), 401, "{method} {path} with {who} answers 401");
            let body: serde_json::Value = r.json().expect("a JSON error");
            assert_eq!(
                body["code"], "web_session",
                "{method} {path}: the error says why"
            );
        }
    }
}

#[test]
fn a_rater_reads_and_writes_only_their_own_queue_whatever_ids_a_request_names() {
    let (_served, tokens) = serve(2, &["Ada", "Zoltan"], |_| {});
    let mut ada = Browser::new(&_served.base);
    let mut ben = Browser::new(&_served.base);
    ada.accept(&tokens[0], STRONG);
    let ben_id = ben.accept(&tokens[1], STRONG_B)["rater_id"].clone();
    ada.json("/api/queue");
    ben.json("/api/queue");
    let ben_item = ben.json("/api/items/1");
    let key = ben_item["criteria"][0]["key"]
        .as_str()
        .expect("key")
        .to_string();
    let r = ben.post(
        "/api/items/1/rate",
        serde_json::json!({"criterion": key, "value": 5}),
    );
    assert_eq!(r.status(), 200, "Zoltan rates his first item");

    // Ada names Zoltan everywhere a request could.
    let r = ada.post(
        &format!("/api/items/1/rate?rater_id={ben_id}&rater=Zoltan"),
        serde_json::json!({"criterion": key, "value": 1, "rater_id": ben_id, "rater": "Zoltan"}),
    );
    assert_eq!(r.status(), 200, "the write is taken, as Ada's own");
    let ada_item = ada.json(&format!("/api/items/1?rater_id={ben_id}"));
    assert_eq!(
        ada_item["criteria"][0]["value"], 1,
        "the value landed on Ada's item"
    );
    let ben_item = ben.json("/api/items/1");
    assert_eq!(
        ben_item["criteria"][0]["value"], 5,
        "Zoltan's value is untouched"
    );
    let queue = ada.json(&format!("/api/queue?rater_id={ben_id}"));
    assert_eq!(
        queue["rater_name"], "Ada",
        "the queue is Ada's whatever the request names"
    );
    let beyond = ada.get(&format!(
        "/api/items/{}",
        queue["total"].as_i64().expect("total") + 1
    ));
    assert_eq!(
        beyond.status(),
        404,
        "no item beyond Ada's queue exists for her"
    );
}

#[test]
fn a_write_without_the_sessions_csrf_token_is_refused_and_changes_nothing() {
    let (_served, tokens) = serve(1, &["Ada"], |_| {});
    let mut ada = Browser::new(&_served.base);
    ada.accept(&tokens[0], STRONG);
    ada.json("/api/queue");
    let key = ada.json("/api/items/1")["criteria"][0]["key"]
        .as_str()
        .expect("key")
        .to_string();
    let csrf = ada.csrf.take();
    for (method, path) in SESSION_ROUTES.iter().filter(|(m, _)| *m == "POST") {
        let r = ada.post(path, serde_json::json!({"criterion": key, "value": 3}));
        assert_eq!(
            r.status(),
            403,
            "{method} {path} without the CSRF token is refused"
        );
    }
    ada.csrf = Some("ab".repeat(32));
    let r = ada.post(
        "/api/items/1/rate",
        serde_json::json!({"criterion": key, "value": 3}),
    );
    assert_eq!(r.status(), 403, "a wrong CSRF token is refused too");
    ada.csrf = csrf;
    let item = ada.json("/api/items/1");
    assert!(
        item["criteria"][0]["value"].is_null(),
        "no refused write reached the study"
    );
    let queue = ada.json("/api/queue");
    assert_eq!(
        queue["rater_name"], "Ada",
        "the session itself still stands (logout was refused)"
    );
}

/// A raw HTTP/1.1 GET, so the path reaches the server exactly as written (an HTTP client would
/// normalise `..` away).
fn raw_get(base: &str, path: &str) -> (u16, String) {
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read");
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, out)
}

#[test]
fn static_paths_cannot_leave_the_ui_build() {
    let (_served, _) = serve(1, &["Ada"], |_| {});
    let (status, page) = raw_get(&_served.base, "/assets/app.js");
    assert_eq!(status, 200, "a file of the build is served");
    assert!(page.contains("console.log"), "with its content");
    for path in [
        "/../secret.txt",
        "/assets/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/assets/%2e%2e%2f%2e%2e%2fsecret.txt",
        "/..%2fsecret.txt",
        "/assets/..\\..\\secret.txt",
        "//secret.txt",
        "/assets/app.js/../../../secret.txt",
        "/ui/../secret.txt",
    ] {
        let (status, answer) = raw_get(&_served.base, path);
        assert!(
            !answer.contains("the study's secret"),
            "{path} does not reach a file outside the build"
        );
        assert!(
            status == 404 || status == 400,
            "{path} is not found ({status})"
        );
    }
    let (status, page) = raw_get(&_served.base, "/login");
    assert_eq!(status, 200, "a page route gets the page");
    assert!(page.contains(PAGE_MARK), "the page is the UI's index");
}

#[test]
fn an_oversized_body_gets_413() {
    let (_served, tokens) = serve(1, &["Ada"], |_| {});
    let mut ada = Browser::new(&_served.base);
    ada.accept(&tokens[0], STRONG);
    ada.json("/api/queue");
    let big = "x".repeat(200 * 1024);
    let r = ada.post(
        "/api/items/1/rationale",
        serde_json::json!({"rationale": big}),
    );
    assert_eq!(r.status(), 413, "a 200 KiB body is larger than the limit");
    let r = ada.post(
        "/api/login",
        serde_json::json!({"name": "Ada", "passphrase": big}),
    );
    assert_eq!(r.status(), 413, "the limit holds before a session too");
    let item = ada.json("/api/items/1");
    assert!(
        item["rationale"].is_null(),
        "the oversized rationale was not saved"
    );
}

#[test]
fn hostile_text_from_a_dataset_is_served_as_a_json_string_never_as_html() {
    let (_served, tokens) = serve(1, &["Ada"], |_| {});
    let mut ada = Browser::new(&_served.base);
    ada.accept(&tokens[0], STRONG);
    let total = ada.json("/api/queue")["total"].as_i64().expect("total");
    let mut found = false;
    for n in 1..=total {
        let r = ada.get(&format!("/api/items/{n}"));
        let kind = r.headers()["content-type"]
            .to_str()
            .expect("type")
            .to_string();
        assert_eq!(kind, "application/json", "item {n} is JSON, never HTML");
        assert_eq!(
            r.headers()["x-content-type-options"],
            "nosniff",
            "and may not be sniffed as HTML"
        );
        let v: serde_json::Value = r.json().expect("JSON");
        if v["context"] == HOSTILE {
            assert_eq!(
                v["answer"], HOSTILE,
                "the markup arrives as the exact text, a JSON string"
            );
            found = true;
        }
    }
    assert!(found, "the hostile item is in Ada's queue");
}

#[test]
fn repeated_wrong_passphrases_lock_the_login_for_a_while() {
    let (served, tokens) = serve(1, &["Ada"], |_| {});
    Browser::new(&served.base).accept(&tokens[0], STRONG);
    let mut web = Browser::new(&served.base);
    for n in 1..concord_core::app::web::MAX_FAILURES {
        let r = web.post(
            "/api/login",
            serde_json::json!({"name": "Ada", "passphrase": "wrong wrong 123"}),
        );
        assert_eq!(r.status(), 401, "wrong passphrase {n} is refused");
    }
    let r = web.post(
        "/api/login",
        serde_json::json!({"name": "Ada", "passphrase": "wrong wrong 123"}),
    );
    assert_eq!(
        r.status(),
        429,
        "the fifth wrong passphrase locks the login"
    );
    let r = web.post(
        "/api/login",
        serde_json::json!({"name": "Ada", "passphrase": STRONG}),
    );
    assert_eq!(
        r.status(),
        429,
        "a locked login refuses even the right passphrase"
    );
    let r = web.post(
        "/api/login",
        serde_json::json!({"name": "Nobody", "passphrase": STRONG}),
    );
    assert_eq!(
        r.status(),
        401,
        "an unknown name is refused like a wrong passphrase"
    );
    served.clock.advance(concord_core::app::web::LOCK_MS + 1);
    web.login("Ada", STRONG);
    let study = served.open_again();
    let entries = concord_core::app::audit::log(&study, &Default::default()).expect("log");
    assert!(
        entries
            .iter()
            .any(|e| e.entry.action == "web.locked" && e.entry.actor == "Ada"),
        "the lock-out is in the audit trail"
    );
    assert_eq!(
        entries
            .iter()
            .filter(|e| e.entry.action == "web.login_failed")
            .count(),
        5,
        "each wrong passphrase is in the audit trail"
    );
}

#[test]
fn revoking_a_rater_ends_their_session_at_once_even_from_another_process() {
    let (served, tokens) = serve(1, &["Ada"], |_| {});
    let mut ada = Browser::new(&served.base);
    ada.accept(&tokens[0], STRONG);
    assert_eq!(ada.get("/api/queue").status(), 200, "Ada is in");
    let mut lead = served.open_again();
    assert!(
        concord_core::app::web::revoke(&mut lead, "Ada").expect("revoke"),
        "Ada had access"
    );
    drop(lead);
    assert_eq!(
        ada.get("/api/queue").status(),
        401,
        "her session ended with the revocation"
    );
    let r = Browser::new(&served.base).post(
        "/api/login",
        serde_json::json!({"name": "Ada", "passphrase": STRONG}),
    );
    assert_eq!(r.status(), 401, "and her passphrase no longer logs in");
    let study = served.open_again();
    let entries = concord_core::app::audit::log(&study, &Default::default()).expect("log");
    assert!(
        entries
            .iter()
            .any(|e| e.entry.action == "web.revoked" && e.entry.detail["rater"] == "Ada"),
        "the revocation is in the audit trail"
    );
}

#[test]
fn an_idle_session_ends_after_the_studys_idle_minutes() {
    let (served, tokens) = serve(1, &["Ada"], |_| {});
    let mut ada = Browser::new(&served.base);
    ada.accept(&tokens[0], STRONG);
    served.clock.advance(14 * 60_000);
    assert_eq!(
        ada.get("/api/queue").status(),
        200,
        "14 idle minutes keep the session"
    );
    served.clock.advance(14 * 60_000);
    assert_eq!(
        ada.get("/api/queue").status(),
        200,
        "each request resets the idle time"
    );
    let access = concord_core::app::web::access(&served.open_again()).expect("access");
    assert!(
        access[0].connected && access[0].last_seen.is_some(),
        "the lead's view shows Ada connected while her session is in use: {access:?}"
    );
    served.clock.advance(15 * 60_000 + 1);
    assert_eq!(
        ada.get("/api/queue").status(),
        401,
        "15 idle minutes end it"
    );
    let access = concord_core::app::web::access(&served.open_again()).expect("access");
    assert!(!access[0].connected, "and no longer once it has ended");
    let r = ada.post("/api/logout", serde_json::json!({}));
    assert_eq!(r.status(), 401, "an ended session cannot even log out");
}

#[test]
fn an_invitation_works_once_and_expires() {
    let (served, tokens) = serve(1, &["Ada", "Zoltan"], |_| {});
    let mut web = Browser::new(&served.base);
    let weak = web.post(
        "/api/invitation/accept",
        serde_json::json!({"token": tokens[0], "passphrase": "short"}),
    );
    assert_eq!(weak.status(), 422, "a weak passphrase is refused");
    let r = web.post("/api/invitation", serde_json::json!({"token": tokens[0]}));
    assert_eq!(
        r.json::<serde_json::Value>().expect("json")["rater_name"],
        "Ada",
        "the page can name whom it is for"
    );
    web.accept(&tokens[0], STRONG);
    let again = Browser::new(&served.base).post(
        "/api/invitation/accept",
        serde_json::json!({"token": tokens[0], "passphrase": STRONG_B}),
    );
    assert_eq!(again.status(), 404, "an invitation is used once");
    served.clock.advance(8 * 24 * 60 * 60_000);
    let late = Browser::new(&served.base).post(
        "/api/invitation/accept",
        serde_json::json!({"token": tokens[1], "passphrase": STRONG_B}),
    );
    assert_eq!(
        late.status(),
        404,
        "a seven-day invitation has expired after eight days"
    );
}

#[test]
fn answers_carry_the_csp_no_store_and_strict_http_only_cookies() {
    let (_served, tokens) = serve(1, &["Ada"], |_| {});
    let mut web = Browser::new(&_served.base);
    let r = web.post(
        "/api/invitation/accept",
        serde_json::json!({"token": tokens[0], "passphrase": STRONG}),
    );
    let cookie = r.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .to_string();
    assert!(
        cookie.contains("HttpOnly"),
        "the session cookie is out of scripts' reach: {cookie}"
    );
    assert!(
        cookie.contains("SameSite=Strict"),
        "and never sent from another site: {cookie}"
    );
    assert!(
        !cookie.contains("Secure"),
        "plain loopback HTTP cannot use a Secure cookie"
    );
    assert_eq!(
        r.headers()["cache-control"],
        "no-store",
        "API answers are never cached"
    );
    let page = web.get("/");
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .expect("csp");
    assert_eq!(csp, concord_web::headers::CSP, "the page carries the CSP");
    assert!(
        csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"),
        "as the desktop's"
    );
    assert!(
        page.headers().get("strict-transport-security").is_none(),
        "no HSTS without TLS"
    );

    let (_proxied, tokens) = serve(1, &["Ada"], |o| o.behind_proxy = true);
    let mut web = Browser::new(&_proxied.base);
    let r = web.post(
        "/api/invitation/accept",
        serde_json::json!({"token": tokens[0], "passphrase": STRONG}),
    );
    let cookie = r.headers()["set-cookie"].to_str().expect("cookie");
    assert!(
        cookie.contains("Secure"),
        "behind a TLS proxy the cookie is Secure"
    );
    assert!(
        r.headers().get("strict-transport-security").is_some(),
        "and HSTS is sent"
    );
}

#[test]
fn a_network_address_is_refused_without_tls_or_a_proxy() {
    let dir = tempfile::tempdir().expect("dir");
    let options = ServeOptions::new("0.0.0.0:0".parse().expect("addr"), dir.path().to_path_buf());
    assert!(
        matches!(options.check(), Err(ServeError::PlainOnNetwork(_))),
        "0.0.0.0 without TLS is refused"
    );
    let mut proxied = options.clone();
    proxied.behind_proxy = true;
    assert!(
        matches!(proxied.check(), Err(ServeError::ProxyOffLoopback(_))),
        "--behind-proxy on 0.0.0.0 is refused: anyone reaching the port past the proxy would talk to Concord in the clear"
    );
    let mut local_proxy = ServeOptions::new(
        "127.0.0.1:8420".parse().expect("addr"),
        dir.path().to_path_buf(),
    );
    local_proxy.behind_proxy = true;
    assert!(
        local_proxy.check().is_ok(),
        "behind a TLS proxy on the same machine, a loopback bind may start"
    );
    let lan = ServeOptions::new(
        "192.168.1.5:8420".parse().expect("addr"),
        dir.path().to_path_buf(),
    );
    assert!(lan.check().is_err(), "a LAN address is refused too");
    let local = ServeOptions::new("[::1]:0".parse().expect("addr"), dir.path().to_path_buf());
    assert!(local.check().is_ok(), "IPv6 loopback is loopback");
}

#[test]
fn logging_out_ends_the_session() {
    let (_served, tokens) = serve(1, &["Ada"], |_| {});
    let mut ada = Browser::new(&_served.base);
    ada.accept(&tokens[0], STRONG);
    let old = ada.cookie.clone();
    let r = ada.post("/api/logout", serde_json::json!({}));
    assert_eq!(r.status(), 200, "logout succeeds");
    assert!(ada.cookie.is_none(), "the cookie is cleared");
    ada.cookie = old;
    assert_eq!(
        ada.get("/api/queue").status(),
        401,
        "the old cookie no longer opens the session"
    );
}

#[test]
fn a_login_does_not_hold_up_other_raters_saves() {
    // The production PBKDF2 cost: seconds per derivation in a debug build.
    let (served, tokens) = serve(1, &["Ada", "Zoltan"], |o| {
        o.iterations = concord_core::app::web::ITERATIONS;
    });
    Browser::new(&served.base).accept(&tokens[0], STRONG);
    let mut zoltan = Browser::new(&served.base);
    zoltan.accept(&tokens[1], STRONG_B);
    zoltan.json("/api/queue");
    let key = zoltan.json("/api/items/1")["criteria"][0]["key"]
        .as_str()
        .expect("key")
        .to_string();
    let base = served.base.clone();
    let login = std::thread::spawn(move || {
        let started = std::time::Instant::now();
        Browser::new(&base).login("Ada", STRONG);
        started.elapsed()
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    let mut slowest = std::time::Duration::ZERO;
    for value in [1, 2, 3, 4, 5] {
        let started = std::time::Instant::now();
        let r = zoltan.post(
            "/api/items/1/rate",
            serde_json::json!({"criterion": key, "value": value}),
        );
        assert_eq!(r.status(), 200, "Zoltan's save is taken during Ada's login");
        slowest = slowest.max(started.elapsed());
    }
    let login_took = login.join().expect("login thread");
    assert!(
        slowest < login_took / 2,
        "no save waits for the login's key derivation (slowest save {slowest:?}, login {login_took:?})"
    );
}
