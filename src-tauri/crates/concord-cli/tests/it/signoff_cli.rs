//! `concord signoff passphrase|sign|list|revise` as an expert and a lead would use them: the demo
//! study's experts are assigned, one sets a signing passphrase and signs; a wrong passphrase
//! signs nothing; the signature lists as matching; a signed rating changes only with a reason and
//! the signature then shows as changed after signing; the audit chain stays intact.

use std::process::Command;

fn concord(args: &[&str], passphrase: Option<&str>) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_concord"));
    cmd.env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR);
    cmd.args(args).env_remove("CONCORD_STUDY");
    match passphrase {
        Some(p) => cmd.env("CONCORD_SIGNING_PASSPHRASE", p),
        None => cmd.env_remove("CONCORD_SIGNING_PASSPHRASE"),
    };
    cmd.output().expect("the concord binary runs")
}

fn ok(out: std::process::Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn an_expert_signs_and_a_later_change_needs_a_reason_and_shows() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.concord");
    let d = db.to_str().unwrap();
    ok(concord(&["--db", d, "demo"], None), "demo");
    ok(
        concord(&["--db", d, "assign", "--k", "2", "--seed", "3"], None),
        "assign",
    );
    let expert = "Demo expert A";
    ok(
        concord(
            &["--db", d, "signoff", "passphrase", "--rater", expert],
            Some("quiet river 42"),
        ),
        "passphrase",
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    let stored: String = conn
        .query_row("SELECT hash || salt FROM signing_key", [], |r| r.get(0))
        .unwrap();
    assert!(
        !stored.contains("quiet river"),
        "the passphrase itself is never stored"
    );
    let wrong = concord(
        &["--db", d, "signoff", "sign", "--rater", expert],
        Some("loud river 42"),
    );
    assert!(!wrong.status.success(), "a wrong passphrase signs nothing");
    let signed: serde_json::Value = serde_json::from_str(&ok(
        concord(
            &["--db", d, "signoff", "sign", "--rater", expert, "--json"],
            Some("quiet river 42"),
        ),
        "sign",
    ))
    .unwrap();
    assert_eq!(signed["matches"], true, "a fresh signature matches");
    assert_eq!(signed["signer"], expert, "the signer's name is recorded");
    assert!(
        signed["ratings"].as_i64().unwrap() > 0
            && signed["ratings_sha256"].as_str().unwrap().len() == 64,
        "with the number and hash of the signed ratings: {signed}"
    );
    let (item, criterion, value): (String, String, i64) = conn
        .query_row(
            "SELECT c.external_id || '/' || s.key, k.key, g.value FROM signed_rating l
             JOIN rating g ON g.id = l.rating_id JOIN response p ON p.id = g.response_id
             JOIN conversation c ON c.id = p.conversation_id JOIN source s ON s.id = p.source_id
             JOIN criterion k ON k.id = g.criterion_id WHERE p.external_id IS NULL LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let new_value = if value == 1 { "2" } else { "1" };
    ok(
        concord(
            &[
                "--db",
                d,
                "signoff",
                "revise",
                "--rater",
                expert,
                "--item",
                &item,
                "--criterion",
                &criterion,
                "--value",
                new_value,
                "--reason",
                "entered on the wrong row",
            ],
            None,
        ),
        "revise with a reason",
    );
    let list: serde_json::Value = serde_json::from_str(&ok(
        concord(&["--db", d, "signoff", "list", "--json"], None),
        "list",
    ))
    .unwrap();
    let sig = &list["signatures"][0];
    assert_eq!(
        (
            sig["matches"].as_bool(),
            sig["changed_after_signature"].as_i64()
        ),
        (Some(false), Some(1)),
        "the signature shows one rating changed after signing: {sig}"
    );
    let text = ok(concord(&["--db", d, "audit", "verify"], None), "verify");
    assert!(
        text.starts_with("intact: "),
        "signing and the change keep the chain intact: {text}"
    );
    assert!(
        text.contains(&format!("{expert} signed ")) && text.contains("1 changed after signature"),
        "verification shows who signed what and that it no longer matches: {text}"
    );
    let doc: serde_json::Value = serde_json::from_str(&ok(
        concord(&["--db", d, "audit", "verify", "--json"], None),
        "verify --json",
    ))
    .unwrap();
    assert_eq!(
        (
            doc["signatures"][0]["signer"].as_str(),
            doc["signatures"][0]["matches"].as_bool()
        ),
        (Some(expert), Some(false)),
        "and so does its JSON: {doc}"
    );
}
