//! `concord audit verify` against a study edited outside Concord: a copy of one study per case,
//! each changed with plain SQL (rusqlite) — a rating changed, inserted or deleted; a history row
//! changed, inserted or deleted; an audit entry changed, inserted or deleted (in the middle and at
//! the end). The untouched study verifies with exit 0 and `intact: N entries`; every edited one
//! exits non-zero and the message names the broken entry or table.

use std::path::Path;
use std::process::Command;

fn concord(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .args(args)
        .env_remove("CONCORD_STUDY")
        .output()
        .expect("the concord binary runs")
}

fn verify(db: &Path) -> (bool, String) {
    let out = concord(&["--db", db.to_str().unwrap(), "audit", "verify"]);
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// A study with ratings, revisions (history rows) and audited events: the demo, an items file,
/// and two rating files where the second revises the first.
fn build(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("base.concord");
    let d = db.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = concord(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&["--db", d, "demo"]);
    run(&["--db", d, "expert", "add", "Dr Tamper"]);
    let items = dir.join("items.csv");
    std::fs::write(
        &items,
        "conversation_id,context,response_id,source,text\nc1,I feel low,r1,gpt4o,That sounds hard.\nc2,I cannot sleep,r2,gpt4o,Try a routine.\n",
    )
    .unwrap();
    run(&[
        "--db",
        d,
        "import",
        "long-items",
        items.to_str().unwrap(),
        "--rubric",
        "mentalbench",
    ]);
    for (n, score) in [(1, 3), (2, 4)] {
        let ratings = dir.join(format!("ratings{n}.csv"));
        std::fs::write(
            &ratings,
            format!("item,rater,criterion,score\nr1,Dr Tamper,guidance,{score}\nr2,Dr Tamper,empathy,{score}\n"),
        )
        .unwrap();
        run(&[
            "--db",
            d,
            "import",
            "long-ratings",
            ratings.to_str().unwrap(),
            "--rubric",
            "mentalbench",
        ]);
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let history: i64 = conn
        .query_row("SELECT COUNT(*) FROM rating_history", [], |r| r.get(0))
        .unwrap();
    assert!(
        history >= 2,
        "the second rating file revised the first, so history rows exist"
    );
    db
}

fn tamper(base: &Path, dir: &Path, name: &str, sql: &str) -> std::path::PathBuf {
    let copy = dir.join(format!("{name}.concord"));
    std::fs::copy(base, &copy).unwrap();
    let conn = rusqlite::Connection::open(&copy).unwrap();
    conn.execute_batch(sql)
        .unwrap_or_else(|e| panic!("{name}: the plain SQL edit itself must work: {e}"));
    copy
}

#[test]
fn every_edit_outside_concord_is_caught_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let base = build(dir.path());
    let (ok, text) = verify(&base);
    assert!(ok, "an untouched study verifies: {text}");
    assert!(text.starts_with("intact: "), "and says so: {text}");
    let conn = rusqlite::Connection::open(&base).unwrap();
    let entries: i64 = conn
        .query_row("SELECT COUNT(*) FROM audit_log", [], |r| r.get(0))
        .unwrap();
    assert!(
        text.starts_with(&format!("intact: {entries} entries")),
        "every entry of a study made by this version is chained: {text}"
    );
    drop(conn);

    let cases: &[(&str, &str, &str)] = &[
        ("rating-changed", "UPDATE rating SET value = CASE WHEN value = 1 THEN 2 ELSE 1 END WHERE id = (SELECT MIN(id) FROM rating)", "rating table"),
        ("rating-inserted", "INSERT INTO rating(rater_id, response_id, criterion_id, value, origin, created_at, updated_at) SELECT (SELECT id FROM rater WHERE name = 'Dr Tamper'), response_id, criterion_id, 3, 'screen', 1, 1 FROM rating LIMIT 1", "rating table"),
        ("rating-deleted", "DELETE FROM rating WHERE id = (SELECT MAX(id) FROM rating WHERE id NOT IN (SELECT rating_id FROM rating_history))", "rating table"),
        // The append-only triggers are dropped for the edit and put back as they were, so the
        // file's schema is Concord's again and only the chain can tell.
        ("history-changed", "DROP TRIGGER rating_history_no_update; UPDATE rating_history SET value = 99; CREATE TRIGGER rating_history_no_update BEFORE UPDATE ON rating_history BEGIN SELECT RAISE(ABORT, 'rating history is append-only'); END;", "rating_history table"),
        ("history-inserted", "INSERT INTO rating_history(rating_id, value, origin, valid_from, replaced_at) SELECT MIN(id), 4, 'screen', 1, 2 FROM rating", "rating_history table"),
        ("history-deleted", "DROP TRIGGER rating_history_no_delete; DELETE FROM rating_history; CREATE TRIGGER rating_history_no_delete BEFORE DELETE ON rating_history WHEN (SELECT COUNT(*) FROM rating WHERE id = OLD.rating_id) > 0 BEGIN SELECT RAISE(ABORT, 'rating history is append-only'); END;", "rating_history table"),
        ("entry-changed", "UPDATE audit_log SET actor = 'someone else' WHERE id = 2", "entry 2"),
        ("entry-inserted", "INSERT INTO audit_log(id, at, actor, action, detail_json, prev_hash, hash, state) SELECT id + 1000, at, actor, action, detail_json, prev_hash, hash, state FROM audit_log WHERE id = (SELECT MAX(id) FROM audit_log)", "entr"),
        ("entry-inserted-unchained", "INSERT INTO audit_log(at, actor, action, detail_json) VALUES (1, 'x', 'rating.enter', '{}')", "entr"),
        ("entry-deleted", "DELETE FROM audit_log WHERE id = 3", "entry 4"),
        ("last-entry-deleted", "DELETE FROM audit_log WHERE id = (SELECT MAX(id) FROM audit_log)", "entr"),
    ];
    for (name, sql, named) in cases {
        let copy = tamper(&base, dir.path(), name, sql);
        let (ok, text) = verify(&copy);
        assert!(
            !ok,
            "{name}: an edit outside Concord must fail verification, got: {text}"
        );
        assert!(
            text.contains("audit chain broken") && text.contains(named),
            "{name}: the message names what broke ({named:?}): {text}"
        );
    }
}

#[test]
fn agreement_tables_carry_the_chain_head_version_and_options() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.concord");
    let d = db.to_str().unwrap();
    assert!(concord(&["--db", d, "demo"]).status.success(), "demo study");
    let (ok, text) = verify(&db);
    assert!(ok, "the demo verifies: {text}");
    let head = text
        .lines()
        .find_map(|l| l.strip_prefix("head: "))
        .expect("verify prints the head")
        .to_string();
    for format in ["csv", "md", "latex"] {
        let out = concord(&["--db", d, "agreement", "--format", format]);
        assert!(out.status.success(), "{format} table");
        let table = String::from_utf8_lossy(&out.stdout);
        assert!(
            table.contains(&head),
            "the {format} table names the audit head {head} of the data it came from"
        );
        assert!(
            table.contains(env!("CARGO_PKG_VERSION")) && table.contains("resamples"),
            "and the Concord version and the options: {table}"
        );
    }
}

#[test]
fn the_log_lists_who_changed_what_filtered_by_rater_item_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let base = build(dir.path());
    let d = base.to_str().unwrap();
    let log = |extra: &[&str]| -> Vec<serde_json::Value> {
        let mut args = vec!["--db", d, "audit", "log", "--json"];
        args.extend_from_slice(extra);
        let out = concord(&args);
        assert!(
            out.status.success(),
            "audit log {extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        doc["entries"].as_array().expect("entries").clone()
    };
    let all = log(&[]);
    assert_eq!(
        all[0]["action"], "chain.start",
        "the log opens with the chain's start"
    );
    let mine = log(&["--rater", "Dr Tamper"]);
    let revisions: Vec<&serde_json::Value> = mine
        .iter()
        .filter(|e| e["action"] == "rating.revise")
        .collect();
    assert_eq!(
        revisions.len(),
        2,
        "the second rating file revised both of Dr Tamper's ratings, one entry each: {mine:?}"
    );
    assert!(
        mine.iter()
            .all(|e| e["rater"] == "Dr Tamper" || e["actor"] == "Dr Tamper"),
        "only entries by or about the rater"
    );
    assert_eq!(
        (
            revisions[0]["detail"]["from"].as_i64(),
            revisions[0]["detail"]["to"].as_i64()
        ),
        (Some(3), Some(4)),
        "each revision records from → to"
    );
    let item = log(&["--item", "r1"]);
    assert!(
        !item.is_empty() && item.iter().all(|e| e["item"] == "r1"),
        "the item filter keeps entries about r1 only: {item:?}"
    );
    assert!(
        log(&["--since", "2100-01-01"]).is_empty(),
        "nothing is logged in the future"
    );
    assert_eq!(
        log(&["--until", "2100-01-01"]).len(),
        all.len(),
        "everything is logged before then"
    );
}

/// `concord` with extra environment variables (set after the test key folder, so they win).
fn concord_env(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_concord"));
    cmd.env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .env_remove("CONCORD_STUDY")
        .env_remove("CONCORD_PASSPHRASE")
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the concord binary runs")
}

fn printed(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The chain's links and hashes recomputed as Concord computes them, from the first entry on.
fn rehash(conn: &rusqlite::Connection) {
    use sha2::{Digest, Sha256};
    let rows: Vec<(i64, i64, String, String, String, String)> = conn
        .prepare("SELECT id, at, actor, action, detail_json, state FROM audit_log WHERE hash IS NOT NULL ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut prev = "0".repeat(64);
    let mut last = 0;
    for (id, at, actor, action, detail, state) in rows {
        let mut h = Sha256::new();
        for part in [
            &prev,
            &id.to_string(),
            &at.to_string(),
            &actor,
            &action,
            &detail,
            &state,
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        let hash: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        conn.execute(
            "UPDATE audit_log SET prev_hash = ?2, hash = ?3 WHERE id = ?1",
            rusqlite::params![id, prev, hash],
        )
        .unwrap();
        prev = hash;
        last = id;
    }
    conn.execute(
        "UPDATE study_meta SET value = ?1 WHERE key = 'audit.head'",
        [format!("{last}:{prev}")],
    )
    .unwrap();
}

#[test]
fn verify_reports_the_anchoring_and_a_rewrite_fails_against_the_key_and_a_recorded_head() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path());
    let d = db.to_str().unwrap();
    let out = concord(&["--db", d, "audit", "verify"]);
    let text = printed(&out);
    assert!(out.status.success(), "the built study verifies: {text}");
    assert!(
        text.starts_with("intact: ")
            && text.contains("lead key: ed25519:")
            && text.contains("anchored: entries 1-"),
        "verify keeps its first line and says how far back the chain is anchored: {text}"
    );
    assert!(
        !text.contains("not anchored"),
        "every write of the CLI here was signed: {text}"
    );
    let head = text
        .lines()
        .find_map(|l| l.strip_prefix("head: "))
        .expect("verify prints the head")
        .to_string();
    let found = concord(&["--db", d, "audit", "verify", "--expect-head", &head]);
    assert!(
        found.status.success() && printed(&found).contains("expected head: found at entry"),
        "the recorded head is found and its entry named: {}",
        printed(&found)
    );

    // An earlier entry rewritten, the chain re-hashed, the checkpoints and the key stripped.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE audit_log SET detail_json = '{\"note\":\"nothing happened\"}' WHERE id = 3",
        [],
    )
    .unwrap();
    rehash(&conn);
    conn.execute_batch(
        "DELETE FROM audit_checkpoint; DELETE FROM study_meta WHERE key LIKE 'lead.%';",
    )
    .unwrap();
    drop(conn);
    let here = concord(&["--db", d, "audit", "verify"]);
    assert!(
        !here.status.success() && printed(&here).contains("removed outside Concord"),
        "on the lead's machine the stripped study fails: {}",
        printed(&here)
    );
    let other_keys = dir.path().join("other-machine-keys");
    let other = other_keys.to_str().unwrap();
    let elsewhere = concord_env(
        &["--db", d, "audit", "verify"],
        &[("CONCORD_KEY_DIR", other)],
    );
    // The key's records are among the settings the chain seals: removed without re-sealing the
    // state, the strip shows on any machine.
    assert!(
        !elsewhere.status.success() && printed(&elsewhere).contains("study_meta"),
        "elsewhere the stripped key records break the sealed settings: {}",
        printed(&elsewhere)
    );
    let against = concord_env(
        &["--db", d, "audit", "verify", "--expect-head", &head],
        &[("CONCORD_KEY_DIR", other)],
    );
    assert!(
        !against.status.success() && printed(&against).contains(&head),
        "the head recorded before the rewrite is not in the rewritten chain, and verify says so: {}",
        printed(&against)
    );
}

#[test]
fn an_encrypted_study_verifies_with_its_passphrase() {
    const PASS: &str = "correct horse battery staple 41";
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path());
    let d = db.to_str().unwrap();
    let enc = concord_env(
        &["--db", d, "study", "encrypt"],
        &[("CONCORD_PASSPHRASE", PASS)],
    );
    assert!(enc.status.success(), "encrypted: {}", printed(&enc));
    let locked = concord_env(&["--db", d, "audit", "verify"], &[]);
    assert!(
        !locked.status.success() && printed(&locked).contains("CONCORD_PASSPHRASE"),
        "without the passphrase verify names the variable to set: {}",
        printed(&locked)
    );
    let out = concord_env(
        &["--db", d, "audit", "verify"],
        &[("CONCORD_PASSPHRASE", PASS)],
    );
    assert!(
        out.status.success() && printed(&out).starts_with("intact: "),
        "the encrypted study verifies with its passphrase: {}",
        printed(&out)
    );
    let named = concord_env(
        &[
            "--db",
            d,
            "--passphrase-env",
            "MY_STUDY_PASS",
            "audit",
            "verify",
        ],
        &[("MY_STUDY_PASS", PASS)],
    );
    assert!(
        named.status.success() && printed(&named).contains("anchored: entries 1-"),
        "and with the variable --passphrase-env names, anchored as before: {}",
        printed(&named)
    );
}
