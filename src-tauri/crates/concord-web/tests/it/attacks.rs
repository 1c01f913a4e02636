//! The attacks on `concord serve` that the server must defeat, each performed as an attacker
//! would: over HTTP against a real server, and, for an insider who can write the study file,
//! rows written into it below Concord while the server runs (as sqlite3 would write them).
//! Each test passes because the defence holds.

use crate::{serve, Browser, Served};
use concord_testsupport::web::{STRONG, STRONG_B};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};

fn sha256_hex(text: &str) -> String {
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

/// The study file opened below Concord, as an insider's sqlite3 would open it.
fn below_concord(served: &Served) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(&served.study).expect("the study file opens in sqlite");
    conn.busy_timeout(std::time::Duration::from_secs(30))
        .expect("busy timeout");
    conn
}

fn rater_id(conn: &rusqlite::Connection, name: &str) -> i64 {
    conn.query_row("SELECT id FROM rater WHERE name = ?1", [name], |r| r.get(0))
        .expect("the expert is in the study")
}

/// The criterion keys of item `n` of the browser's queue.
fn keys(web: &mut Browser, n: i64) -> Vec<String> {
    web.json(&format!("/api/items/{n}"))["criteria"]
        .as_array()
        .expect("criteria")
        .iter()
        .map(|c| c["key"].as_str().expect("key").to_string())
        .collect()
}

#[test]
fn a_session_login_or_invitation_planted_in_the_study_file_opens_nothing() {
    let (served, tokens) = serve(1, &["Ada", "Zoltan"], |_| {});
    let mut ada = Browser::new(&served.base);
    ada.accept(&tokens[0], STRONG);
    let conn = below_concord(&served);
    let ada_id = rater_id(&conn, "Ada");
    let zoltan_id = rater_id(&conn, "Zoltan");
    let now: i64 = conn
        .query_row("SELECT MAX(created_at) FROM web_session", [], |r| r.get(0))
        .expect("Ada's session is kept");

    // Zoltan, never logged in, gets Ada's login row copied under his id (its seal with it), a
    // session under it, a session under Ada's own login, and an invitation of his own.
    conn.execute_batch(&format!(
        "INSERT INTO web_login(rater_id, salt, hash, iterations, set_at, failures, seal)
           SELECT {zoltan_id}, salt, hash, iterations, set_at, 0, seal
           FROM web_login WHERE rater_id = {ada_id};
         INSERT INTO web_session(token_sha256, rater_id, login, created_at, last_seen, seal)
           SELECT '{zs}', {zoltan_id}, set_at, {now}, {now}, seal
           FROM web_login WHERE rater_id = {ada_id};
         INSERT INTO web_session(token_sha256, rater_id, login, created_at, last_seen)
           SELECT '{as_}', {ada_id}, set_at, {now}, {now} FROM web_login WHERE rater_id = {ada_id};
         INSERT INTO web_invitation(token_sha256, rater_id, created_at, expires_at)
           VALUES ('{inv}', {zoltan_id}, {now}, {later});",
        zs = sha256_hex(&"5a".repeat(32)),
        as_ = sha256_hex(&"ad".repeat(32)),
        inv = sha256_hex(&"11".repeat(32)),
        later = now + 86_400_000,
    ))
    .expect("the insider's rows are written");

    for (who, token) in [("Zoltan", "5a".repeat(32)), ("Ada", "ad".repeat(32))] {
        let mut planted = Browser::new(&served.base);
        planted.cookie = Some(token);
        assert_eq!(
            planted.get("/api/queue").status(),
            401,
            "a session row written into the file for {who} must not log anyone in: the file cannot hold what makes a session"
        );
    }
    let r = Browser::new(&served.base).post(
        "/api/invitation/accept",
        serde_json::json!({"token": "11".repeat(32), "passphrase": STRONG_B}),
    );
    assert_eq!(
        r.status(),
        404,
        "an invitation written into the file must not let anyone set a passphrase"
    );
    let r = Browser::new(&served.base).post(
        "/api/login",
        serde_json::json!({"name": "Zoltan", "passphrase": STRONG}),
    );
    assert_eq!(
        r.status(),
        401,
        "Ada's passphrase under a login copied to Zoltan must not log in as Zoltan: the seal names whose login it is"
    );
    assert_eq!(
        ada.get("/api/queue").status(),
        200,
        "Ada's own session goes on: the planted rows changed nothing of hers"
    );
    let access = concord_core::app::web::access(&served.open_again()).expect("the lead's view");
    let zoltan = access
        .iter()
        .find(|a| a.name == "Zoltan")
        .expect("Zoltan is listed");
    assert!(
        !zoltan.has_login,
        "the lead's view must not show the planted login as access Zoltan has"
    );
    let by_zoltan: i64 = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM rating WHERE rater_id = ?1)
                  + (SELECT COUNT(*) FROM audit_log WHERE actor = 'Zoltan')",
            [zoltan_id],
            |r| r.get(0),
        )
        .expect("counted");
    assert_eq!(
        by_zoltan, 0,
        "nothing was rated, signed or recorded as Zoltan, so the lead's server has nothing of his to anchor"
    );
}

#[test]
fn ten_departures_in_a_tenth_of_a_second_add_no_more_time_than_passed() {
    let (served, tokens) = serve(1, &["Ada"], |_| {});
    let mut ada = Browser::new(&served.base);
    ada.accept(&tokens[0], STRONG);
    ada.json("/api/queue");
    for _ in 0..10 {
        served.clock.advance(10);
        let r = ada.post(
            "/api/items/1/leave",
            serde_json::json!({"seconds": 86_400.0, "next_item": 1}),
        );
        assert_eq!(r.status(), 200, "each departure is taken");
    }
    let conn = below_concord(&served);
    let spent: f64 = conn
        .query_row(
            "SELECT seconds_spent FROM assignment
             WHERE rater_id = (SELECT id FROM rater WHERE name = 'Ada') ORDER BY position LIMIT 1",
            [],
            |r| r.get(0),
        )
        .expect("item 1's time");
    assert!(
        spent <= 0.1 + 1e-9,
        "a tenth of a second passed on the server's clock, so at most that is time on task, not {spent} s"
    );
    served.clock.advance(90_000);
    ada.post(
        "/api/items/1/leave",
        serde_json::json!({"seconds": 60.0, "next_item": 2}),
    );
    let spent: f64 = conn
        .query_row(
            "SELECT seconds_spent FROM assignment
             WHERE rater_id = (SELECT id FROM rater WHERE name = 'Ada') ORDER BY position LIMIT 1",
            [],
            |r| r.get(0),
        )
        .expect("item 1's time");
    assert!(
        (spent - 60.1).abs() < 1e-6,
        "an honest minute within the 90 s that passed is recorded whole, or time on task would be lost: {spent}"
    );
}

/// `name` guesses `passphrase` from a new browser; the status and `Retry-After` seconds.
fn guess(served: &Served, name: &str, passphrase: &str) -> (u16, Option<u64>) {
    let r = Browser::new(&served.base).post(
        "/api/login",
        serde_json::json!({"name": name, "passphrase": passphrase}),
    );
    let retry = r
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    (r.status().as_u16(), retry)
}

#[test]
fn wrong_passphrases_by_anyone_never_end_a_live_session_and_make_guessing_slow() {
    use concord_core::app::web::{FIRST_WAIT_MS, MAX_FAILURES};
    let (served, tokens) = serve(1, &["Ada"], |_| {});
    let mut ada = Browser::new(&served.base);
    ada.accept(&tokens[0], STRONG);
    ada.json("/api/queue");
    let key = keys(&mut ada, 1)[0].clone();
    for n in 1..MAX_FAILURES {
        assert_eq!(
            guess(&served, "Ada", "wrong wrong 123").0,
            401,
            "wrong guess {n} is refused, and the next one may follow"
        );
    }
    let (status, retry) = guess(&served, "Ada", "wrong wrong 123");
    assert_eq!(status, 429, "the fifth wrong guess makes the next one wait");
    assert_eq!(
        retry,
        Some((FIRST_WAIT_MS / 1000) as u64),
        "and says how long"
    );
    assert_eq!(
        ada.get("/api/queue").status(),
        200,
        "Ada's live session must go on: someone who only knows her name cannot end it"
    );
    let r = ada.post(
        "/api/items/1/rate",
        serde_json::json!({"criterion": key, "value": 4}),
    );
    assert_eq!(r.status(), 200, "and she goes on saving values");
    for _ in 0..20 {
        assert_eq!(
            guess(&served, "Ada", "another wrong 45").0,
            429,
            "a guess during the wait must be refused without being tried"
        );
    }
    served.clock.advance(FIRST_WAIT_MS + 1);
    let (status, retry) = guess(&served, "Ada", "wrong again 678");
    assert_eq!(status, 429, "after the wait one more wrong guess is tried");
    assert_eq!(
        retry,
        Some((2 * FIRST_WAIT_MS / 1000) as u64),
        "and the wait doubles, so guessing gets slower and slower"
    );
    let study = served.open_again();
    let failed = concord_core::app::audit::log(&study, &Default::default())
        .expect("log")
        .iter()
        .filter(|e| e.entry.action == "web.login_failed")
        .count();
    assert_eq!(
        failed,
        MAX_FAILURES as usize + 1,
        "only the guesses made after each wait were tried and counted, none of those made during it"
    );
    drop(study);
    served.clock.advance(2 * FIRST_WAIT_MS + 1);
    Browser::new(&served.base).login("Ada", STRONG);
    assert_eq!(
        ada.get("/api/queue").status(),
        200,
        "after the wait Ada logs in again, and her first session still stands"
    );
}

#[test]
fn one_client_guessing_at_many_names_is_slowed_down() {
    use concord_web::throttle::{FIRST_WAIT_MS, FREE_FAILURES};
    let (served, tokens) = serve(1, &["Ada"], |_| {});
    Browser::new(&served.base).accept(&tokens[0], STRONG);
    for n in 1..FREE_FAILURES {
        assert_eq!(
            guess(&served, &format!("Nobody {n}"), "wrong wrong 123").0,
            401,
            "failed guess {n} from this client is answered"
        );
    }
    assert_eq!(
        guess(&served, "Nobody else", "wrong wrong 123"),
        (429, Some((FIRST_WAIT_MS / 1000) as u64)),
        "the client's last free failure makes its next guess wait: names it does not know cost it as much as names it does"
    );
    assert_eq!(
        guess(&served, "Ada", STRONG).0,
        429,
        "during the wait no guess from the client is tried, not even a right one"
    );
    served.clock.advance(FIRST_WAIT_MS + 1);
    Browser::new(&served.base).login("Ada", STRONG);
}

#[test]
fn an_unknown_name_is_answered_as_a_known_one() {
    // The work is the same by construction (`LoginAttempt::iterations`, checked in concord-core:
    // `an_unknown_name_gets_the_same_key_derivation_as_a_known_one`); here the answers must not
    // tell the names apart either. Time is not asserted: on a loaded machine it says nothing.
    let (served, tokens) = serve(1, &["Ada"], |o| o.iterations = 60_000);
    Browser::new(&served.base).accept(&tokens[0], STRONG);
    let answer = |name: &str| {
        let r = Browser::new(&served.base).post(
            "/api/login",
            serde_json::json!({"name": name, "passphrase": "wrong wrong 123"}),
        );
        (r.status().as_u16(), r.text().unwrap_or_default())
    };
    let (known, unknown) = (answer("Ada"), answer("Nobody At All"));
    assert_eq!(known.0, 401, "a wrong guess for a known name is refused");
    assert_eq!(
        known, unknown,
        "a wrong guess for an unknown name gets the very answer a known name gets"
    );
}

#[test]
fn a_rationale_typed_in_the_browser_keeps_the_values_web_origin() {
    let (served, tokens) = serve(1, &["Ada"], |_| {});
    let mut ada = Browser::new(&served.base);
    ada.accept(&tokens[0], STRONG);
    ada.json("/api/queue");
    for key in keys(&mut ada, 1) {
        let r = ada.post(
            "/api/items/1/rate",
            serde_json::json!({"criterion": key, "value": 3}),
        );
        assert_eq!(r.status(), 200, "a value is saved from the browser");
    }
    let r = ada.post(
        "/api/items/1/rationale",
        serde_json::json!({"rationale": "typed after the values"}),
    );
    assert_eq!(r.status(), 200, "the rationale is saved");
    let conn = below_concord(&served);
    let origins: Vec<(String, Option<String>)> = conn
        .prepare(
            "SELECT origin, rationale FROM rating
             WHERE rater_id = (SELECT id FROM rater WHERE name = 'Ada')",
        )
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<Vec<_>, _>>()
        })
        .expect("Ada's ratings");
    assert!(!origins.is_empty(), "Ada's values are in the study");
    for (origin, rationale) in origins {
        assert_eq!(
            rationale.as_deref(),
            Some("typed after the values"),
            "the rationale reached each value"
        );
        assert_eq!(
            origin, "web",
            "a value entered in a browser must stay `web` when its rationale changes, or the record says where it came from wrongly"
        );
    }
}

#[test]
fn flags_from_the_browser_are_limited_in_number_and_size() {
    use concord_core::store::{MAX_FLAGS_PER_ITEM, MAX_FLAG_REASON_BYTES};
    let (served, tokens) = serve(1, &["Ada"], |_| {});
    let mut ada = Browser::new(&served.base);
    ada.accept(&tokens[0], STRONG);
    ada.json("/api/queue");
    let long = "x".repeat(MAX_FLAG_REASON_BYTES + 1);
    let r = ada.post("/api/items/1/flag", serde_json::json!({"reason": long}));
    assert_eq!(
        r.status(),
        422,
        "a flag reason over the limit must be refused, or a browser can fill the study"
    );
    for n in 0..MAX_FLAGS_PER_ITEM {
        let r = ada.post(
            "/api/items/1/flag",
            serde_json::json!({"reason": format!("look at this, note {n}")}),
        );
        assert_eq!(r.status(), 200, "flag {n} within the limit is saved");
    }
    let r = ada.post(
        "/api/items/1/flag",
        serde_json::json!({"reason": "one more than may be"}),
    );
    assert_eq!(
        r.status(),
        422,
        "a flag past the most one item may carry must be refused"
    );
    let conn = below_concord(&served);
    let kept: i64 = conn
        .query_row("SELECT COUNT(*) FROM flag", [], |r| r.get(0))
        .expect("flags");
    assert_eq!(
        kept, MAX_FLAGS_PER_ITEM as i64,
        "the study holds exactly the flags within the limit"
    );
}

/// A raw request to `base` with `Host: host`; the status.
fn with_host(base: &str, host: &str, request: &str) -> u16 {
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .expect("timeout");
    write!(s, "{request}Host: {host}\r\nConnection: close\r\n\r\n").expect("send");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_page_whose_name_points_at_the_server_cannot_talk_to_it() {
    let (served, tokens) = serve(1, &["Ada"], |_| {});
    Browser::new(&served.base).accept(&tokens[0], STRONG);
    let port = served.base.rsplit(':').next().expect("port").to_string();
    let body = r#"{"name":"Ada","passphrase":"wrong wrong 123"}"#;
    let login = format!(
        "POST /api/login HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for _ in 0..10 {
        let addr = served.base.trim_start_matches("http://");
        let mut s = std::net::TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
            .expect("timeout");
        write!(
            s,
            "{login}Host: attacker.example:{port}\r\nConnection: close\r\n\r\n{body}"
        )
        .expect("send");
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        assert!(
            out.starts_with("HTTP/1.1 421"),
            "a login posted by a page at another name (DNS rebinding) must be refused before it is tried: {out}"
        );
    }
    assert_eq!(
        with_host(
            &served.base,
            &format!("attacker.example:{port}"),
            "GET / HTTP/1.1\r\n"
        ),
        421,
        "the page itself is not served under another name either"
    );
    assert_eq!(
        with_host(
            &served.base,
            &format!("localhost:{port}"),
            "GET / HTTP/1.1\r\n"
        ),
        200,
        "localhost names a loopback server"
    );
    Browser::new(&served.base).login("Ada", STRONG);
}

#[test]
fn a_client_that_sends_its_request_slowly_is_cut_off() {
    let (served, _) = serve(1, &["Ada"], |o| {
        o.header_read_timeout = std::time::Duration::from_secs(1);
        o.request_timeout = std::time::Duration::from_secs(2);
    });
    let addr = served.base.trim_start_matches("http://").to_string();
    let started = std::time::Instant::now();
    let mut slow = std::net::TcpStream::connect(&addr).expect("connect");
    slow.set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .expect("timeout");
    slow.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .expect("half the headers");
    let mut out = Vec::new();
    let read = slow.read_to_end(&mut out);
    assert!(
        read.is_ok() && started.elapsed() < std::time::Duration::from_secs(100),
        "a connection whose headers never end must be closed by the server, not held open ({:?} after {:?})",
        read,
        started.elapsed()
    );

    let mut slow = std::net::TcpStream::connect(&addr).expect("connect");
    slow.set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .expect("timeout");
    slow.write_all(
        b"POST /api/login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\"",
    )
    .expect("the headers and a little of the body");
    let mut out = String::new();
    let _ = slow.read_to_string(&mut out);
    assert!(
        out.starts_with("HTTP/1.1 408"),
        "a body that never arrives must end the request with 408, not hold it open: {out:?}"
    );
}

#[test]
fn behind_proxy_serves_loopback_only() {
    let dir = tempfile::tempdir().expect("dir");
    let (study, clock) = crate::make_study(dir.path(), 1, &["Ada"]);
    let mut options = concord_web::ServeOptions::new(
        "0.0.0.0:0".parse().expect("addr"),
        crate::stand_in_ui(dir.path()),
    );
    options.behind_proxy = true;
    let started = concord_web::start(
        crate::open_study(&study, clock.clone()),
        options,
        clock,
        Box::new(<rand_chacha::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(1)),
    );
    assert!(
        matches!(
            started,
            Err(concord_web::ServeError::ProxyOffLoopback(_))
        ),
        "a server for a proxy must not listen on every address: past the proxy it would take passphrases in the clear"
    );
}

#[test]
fn a_server_without_the_lead_key_does_not_start() {
    let dir = tempfile::tempdir().expect("dir");
    let (study, clock) = crate::make_study(dir.path(), 1, &["Ada"]);
    let mut lead = crate::open_study(&study, clock.clone());
    concord_core::app::web::web_key(&mut lead).expect("the lead's machine makes the study's key");
    drop(lead);
    let id: String = rusqlite::Connection::open(&study)
        .and_then(|c| {
            c.query_row(
                "SELECT value FROM study_meta WHERE key = 'study.id'",
                [],
                |r| r.get(0),
            )
        })
        .expect("the study's id");
    // This machine no longer holds the key (as on another computer than the lead's).
    std::fs::remove_file(
        std::path::Path::new(concat!(env!("CARGO_TARGET_TMPDIR"), "/web-lead-keys"))
            .join(format!("{id}.key")),
    )
    .expect("the key file is removed");
    let options = concord_web::ServeOptions::new(
        "127.0.0.1:0".parse().expect("addr"),
        crate::stand_in_ui(dir.path()),
    );
    let started = concord_web::start(
        crate::open_study(&study, clock.clone()),
        options,
        clock,
        Box::new(<rand_chacha::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(1)),
    );
    match started {
        Err(concord_web::ServeError::Access(why)) => assert!(
            why.contains("lead key"),
            "the refusal says the lead key is needed: {why}"
        ),
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!(
            "a server that cannot seal web access must not start: it could tell a planted login from a real one only with the lead key"
        ),
    }
}
