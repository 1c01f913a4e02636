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
