//! The invited expert's first minute over HTTP: the name typed at the login matched without
//! regard to case or spaces (and names that login could not tell apart refused at invite), an
//! invitation link that was used or has expired answered with its reason, what the pages before
//! a login learn of the study (its title, the lead, whom to ask), and every message of the server
//! in English or Chinese as the request's `Accept-Language` asks.

use crate::{serve, serve_study, Browser};
use concord_testsupport::web::{STRONG, STRONG_B};
use rand::SeedableRng;
use reqwest::blocking::Response;

const ZH: &str = "zh-CN";
const EN: &str = "en";
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// A request from `web`'s browser (its cookie and CSRF token) asking for answers in `lang`.
fn ask(
    web: &Browser,
    lang: &str,
    method: &str,
    path: &str,
    body: Option<serde_json::Value>,
) -> Response {
    let url = format!("{}{path}", web.base);
    let mut req = match method {
        "GET" => web.client.get(url),
        _ => web.client.post(url),
    }
    .header("accept-language", lang);
    if let Some(body) = body {
        req = req.json(&body);
    }
    if let Some(c) = &web.cookie {
        req = req.header("cookie", format!("concord_session={c}"));
    }
    if let Some(t) = &web.csrf {
        req = req.header("x-csrf-token", t);
    }
    req.send().expect("the server answers")
}

/// Whether `text` holds a Han character.
fn has_han(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// The status, code, reason and message of a refusal.
fn refusal(r: Response) -> (u16, String, Option<String>, String) {
    let status = r.status().as_u16();
    let body: serde_json::Value = r.json().expect("a refusal is JSON");
    (
        status,
        body["code"].as_str().unwrap_or_default().to_string(),
        body["reason"].as_str().map(str::to_string),
        body["message"].as_str().unwrap_or_default().to_string(),
    )
}

#[test]
fn a_login_name_matches_without_regard_to_case_or_spaces() {
    let (served, tokens) = serve(1, &["Dr. Amira Haddad"], |_| {});
    Browser::new(&served.base).accept(&tokens[0], STRONG);
    for typed in [
        "Dr. Amira Haddad",
        "dr. amira haddad",
        "  DR.  AMIRA\tHaddad  ",
    ] {
        let who = Browser::new(&served.base).login(typed, STRONG);
        assert_eq!(
            who["rater_name"], "Dr. Amira Haddad",
            "{typed:?} logs in as the expert the lead invited: case and spaces do not count"
        );
    }
    let mut web = Browser::new(&served.base);
    let r = web.post(
        "/api/login",
        serde_json::json!({"name": "Dr. Amira Hadad", "passphrase": STRONG}),
    );
    assert_eq!(
        r.status(),
        401,
        "a name spelled otherwise is another name, refused as any wrong name is"
    );
    let r = web.post(
        "/api/login",
        serde_json::json!({"name": "dr. amira haddad", "passphrase": STRONG_B}),
    );
    assert_eq!(
        r.status(),
        401,
        "the name in another case still needs the expert's own passphrase"
    );
}

#[test]
fn names_the_login_could_not_tell_apart_are_refused_at_invite() {
    use concord_core::app::web::{access, invite, revoke};
    let invited = std::cell::RefCell::new(String::new());
    let (served, _) = serve_study(
        1,
        &["Ada"],
        |study| {
            for (name, seed) in [("Amira Haddad", 1), ("AMIRA haddad", 2)] {
                concord_core::app::setup::add_expert(study, name, seed)
                    .expect("the lead adds the expert");
            }
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
            invite(study, "Amira Haddad", 7, &mut rng)
                .expect("the first of two names that are one login is invited");
            let refused = invite(study, "AMIRA haddad", 7, &mut rng)
                .expect_err("a name the login could not tell from an invited expert's is refused");
            let message = refused.to_string();
            assert!(
                message.contains("cannot invite “AMIRA haddad”")
                    && message.contains("“Amira Haddad”")
                    && message.contains("without regard to case or spaces"),
                "the refusal names both experts and why the login could not tell them apart: {message}"
            );
            assert_eq!(
                concord_core::base::error_code::Coded::code(&refused),
                "invalid",
                "a refusal of what the lead asked, not a failure"
            );
            let open = |study: &concord_core::app::open_study::OpenStudy, name: &str| {
                access(study)
                    .expect("access")
                    .into_iter()
                    .find(|a| a.name == name)
                    .map(|a| a.open_invitations)
            };
            assert_eq!(
                open(study, "AMIRA haddad"),
                Some(0),
                "a refused invitation leaves nothing behind"
            );
            // Once the other's web access has ended, this one may be invited; and back.
            revoke(study, "Amira Haddad").expect("revoke");
            invite(study, "AMIRA haddad", 7, &mut rng)
                .expect("with the other's access ended, the name is one login again");
            assert!(
                invite(study, "Amira Haddad", 7, &mut rng).is_err(),
                "and now the first is refused in turn"
            );
            revoke(study, "AMIRA haddad").expect("revoke");
            *invited.borrow_mut() = invite(study, "Amira Haddad", 7, &mut rng)
                .expect("the first is invited again")
                .token;
        },
        |_| {},
    );
    Browser::new(&served.base).accept(&invited.borrow(), STRONG);
    let who = Browser::new(&served.base).login("amira  HADDAD", STRONG);
    assert_eq!(
        who["rater_name"], "Amira Haddad",
        "the name typed in another case logs in the one expert of that login who has web access"
    );
}

#[test]
fn a_used_or_expired_invitation_link_says_why_in_the_expert_s_language() {
    let (served, tokens) = serve(1, &["Ada", "Zoltan"], |_| {});
    Browser::new(&served.base).accept(&tokens[0], STRONG);
    let web = Browser::new(&served.base);
    let check = |token: &str, lang: &str| {
        refusal(ask(
            &web,
            lang,
            "POST",
            "/api/invitation",
            Some(serde_json::json!({ "token": token })),
        ))
    };

    let (status, code, reason, message) = check(&tokens[0], EN);
    assert_eq!(
        (status, code.as_str(), reason.as_deref()),
        (404, "web_invitation", Some("used")),
        "a used link says it was used, so the page leads to the login: {message}"
    );
    assert!(
        message.starts_with("This invitation link has been used already")
            && message.contains("log in with your name"),
        "and says what to do instead, as an English sentence: {message}"
    );
    let (_, _, reason, message) = check(&tokens[0], ZH);
    assert_eq!(reason.as_deref(), Some("used"), "the reason is a code");
    assert!(
        message.contains("已被使用") && message.contains("登录"),
        "in Chinese when the page is in Chinese: {message}"
    );
    let (_, _, reason, _) = refusal(ask(
        &web,
        EN,
        "POST",
        "/api/invitation/accept",
        Some(serde_json::json!({"token": tokens[0], "passphrase": STRONG_B})),
    ));
    assert_eq!(
        reason.as_deref(),
        Some("used"),
        "taking up a used link again gives the same reason"
    );

    served.clock.advance(8 * DAY_MS);
    let (status, code, reason, message) = check(&tokens[1], EN);
    assert_eq!(
        (status, code.as_str(), reason.as_deref()),
        (404, "web_invitation", Some("expired")),
        "a seven-day link after eight days says it expired: {message}"
    );
    assert!(
        message.starts_with("This invitation link expired on 2023-11-2"),
        "with the day it expired: {message}"
    );
    let (_, _, _, message) = check(&tokens[1], ZH);
    assert!(message.contains("过期"), "in Chinese when asked: {message}");

    let (status, _, reason, message) = check("not-a-token-of-this-study", EN);
    assert_eq!(
        (status, reason.as_deref()),
        (404, Some("invalid")),
        "a token the study never issued is not valid: {message}"
    );
}

#[test]
fn the_pages_before_a_login_name_the_study_its_lead_and_whom_to_ask() {
    let invited = std::cell::RefCell::new(None);
    let (served, _) = serve_study(
        1,
        &["Ada", "Zoltan"],
        |study| {
            let long = "x".repeat(201);
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
            assert!(
                concord_core::app::web::invite_from(
                    study,
                    "Zoltan",
                    7,
                    Some("Dr. Lee"),
                    Some(&long),
                    &mut rng
                )
                .is_err(),
                "a contact longer than 200 characters is refused"
            );
            assert_eq!(
                concord_core::app::web::welcome(study)
                    .expect("welcome")
                    .lead,
                None,
                "and nothing of it was kept"
            );
            let invitation = concord_core::app::web::invite_from(
                study,
                "Zoltan",
                7,
                Some("  Dr.  Mei Lee "),
                Some("mei.lee@example.org"),
                &mut rng,
            )
            .expect("the lead invites with their name and contact");
            *invited.borrow_mut() = Some(invitation.token);
        },
        |_| {},
    );
    let web = Browser::new(&served.base);
    let r = ask(&web, EN, "GET", "/api/welcome", None);
    assert_eq!(r.status(), 200, "the welcome needs no session");
    let welcome: serde_json::Value = r.json().expect("JSON");
    assert_eq!(
        welcome,
        serde_json::json!({
            "study": "study",
            "lead": "Dr. Mei Lee",
            "contact": "mei.lee@example.org",
        }),
        "the study's title (its file name when it has none), the lead as written and how to reach them"
    );
    assert!(
        invited.borrow().is_some(),
        "the invitation with the lead's contact was made"
    );
}

/// A request with `host` as its `Host`, asking for `lang`.
fn with_host(base: &str, host: &str, lang: &str) -> Response {
    reqwest::blocking::Client::new()
        .get(format!("{base}/api/welcome"))
        .header("host", host)
        .header("accept-language", lang)
        .send()
        .expect("answer")
}

#[test]
fn every_server_message_is_in_english_or_chinese_as_the_page_asks() {
    let (served, tokens) = serve(1, &["Ada", "Zoltan"], |_| {});
    let mut ada = Browser::new(&served.base);
    ada.accept(&tokens[0], STRONG);
    let criterion = ada.json("/api/items/1")["criteria"][0]["key"]
        .as_str()
        .expect("a criterion")
        .to_string();
    let stranger = Browser::new(&served.base);
    let mut no_csrf = Browser::new(&served.base);
    no_csrf.cookie = ada.cookie.clone();

    // Each refusal a browser can meet, asked in both languages.
    let answers = |lang: &str| -> Vec<(&'static str, u16, String)> {
        let r = |what: &'static str, r: Response| {
            let status = r.status().as_u16();
            let language = r
                .headers()
                .get("content-language")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let text = r.text().expect("a body");
            let message = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v["message"].as_str().map(str::to_string))
                .unwrap_or(text);
            (what, status, format!("{language}|{message}"))
        };
        vec![
            r(
                "no session",
                ask(&stranger, lang, "GET", "/api/queue", None),
            ),
            r(
                "no CSRF token",
                ask(
                    &no_csrf,
                    lang,
                    "POST",
                    "/api/logout",
                    Some(serde_json::json!({})),
                ),
            ),
            r(
                "wrong passphrase",
                ask(
                    &stranger,
                    lang,
                    "POST",
                    "/api/login",
                    Some(serde_json::json!({"name": "Zoltan", "passphrase": "not it at all 1"})),
                ),
            ),
            r(
                "weak passphrase",
                ask(
                    &stranger,
                    lang,
                    "POST",
                    "/api/invitation/accept",
                    Some(serde_json::json!({"token": tokens[1], "passphrase": "short"})),
                ),
            ),
            r(
                "off the scale",
                ask(
                    &ada,
                    lang,
                    "POST",
                    "/api/items/1/rate",
                    Some(serde_json::json!({"criterion": criterion, "value": 99})),
                ),
            ),
            r(
                "empty flag",
                ask(
                    &ada,
                    lang,
                    "POST",
                    "/api/items/1/flag",
                    Some(serde_json::json!({"reason": "  "})),
                ),
            ),
            r(
                "no route",
                ask(&stranger, lang, "GET", "/api/nothing", None),
            ),
            r(
                "no file",
                ask(&stranger, lang, "GET", "/assets/none.js", None),
            ),
            r(
                "too large",
                ask(
                    &stranger,
                    lang,
                    "POST",
                    "/api/login",
                    Some(serde_json::json!({"name": "Ada", "passphrase": "x".repeat(200 * 1024)})),
                ),
            ),
            r(
                "another host",
                with_host(&served.base, "attacker.example", lang),
            ),
        ]
    };
    let english = answers(EN);
    let chinese = answers(ZH);
    for ((what, status, en), (_, zh_status, zh)) in english.iter().zip(&chinese) {
        assert!(
            *status >= 400 && status == zh_status,
            "{what}: refused alike in both languages ({status}, {zh_status})"
        );
        let (en_lang, en_text) = en.split_once('|').expect("language|message");
        let (zh_lang, zh_text) = zh.split_once('|').expect("language|message");
        assert!(
            !en_text.starts_with(char::is_lowercase) && en_text.ends_with('.') && !has_han(en_text),
            "{what}: in English, a sentence with a capital and a full stop: {en_text:?}"
        );
        assert!(
            has_han(zh_text) && zh_text.ends_with('。'),
            "{what}: in Chinese when the page is in Chinese: {zh_text:?}"
        );
        assert_eq!(
            (en_lang, zh_lang),
            ("en", "zh-CN"),
            "{what}: a refusal names its language"
        );
    }

    // A guess that must wait says how long, in both languages.
    for _ in 0..5 {
        ask(
            &stranger,
            EN,
            "POST",
            "/api/login",
            Some(serde_json::json!({"name": "Ada", "passphrase": "still not it 12"})),
        );
    }
    let (status, code, _, en) = refusal(ask(
        &stranger,
        EN,
        "POST",
        "/api/login",
        Some(serde_json::json!({"name": "Ada", "passphrase": STRONG})),
    ));
    let (_, _, _, zh) = refusal(ask(
        &stranger,
        ZH,
        "POST",
        "/api/login",
        Some(serde_json::json!({"name": "ada", "passphrase": STRONG})),
    ));
    assert_eq!(
        (status, code.as_str()),
        (429, "web_locked"),
        "after five wrong passphrases the next guess waits"
    );
    assert!(
        en.starts_with("Too many wrong passphrases. Try again in 30 seconds"),
        "the wait in English: {en}"
    );
    assert!(
        zh.contains("30 秒"),
        "and in Chinese (the name typed in another case is the same login, with the same wait): {zh}"
    );
}
