//! Store tests: opening and refusing files, migrations, durable ratings with history.

use super::*;
use crate::base::clock::SteppingClock;
use crate::base::error_code::Coded as _;
use crate::intake::demo::create_demo_at;
use crate::intake::demo::demo_study;
use crate::intake::demo::populate_demo;
use crate::rubric::builtin;

fn clock() -> Arc<dyn Clock> {
    Arc::new(SteppingClock::new(1_700_000_000_000, 1000))
}

#[test]
fn demo_study_counts_match_its_definition() {
    let mut store = Store::in_memory(clock()).unwrap();
    populate_demo(&mut store, 42).unwrap();
    let demo = demo_study().unwrap();
    let o = store.overview().unwrap();
    assert_eq!(
        o.conversations as usize,
        demo.conversations.len() + demo.transcripts.len(),
        "one row per demo conversation, single-turn or transcript"
    );
    let responses: usize = demo.conversations.iter().map(|c| c.responses.len()).sum();
    // A transcript's items: with a reply rubric its assistant turns and candidates, with a
    // session rubric one session item.
    let items: usize = demo
        .transcripts
        .iter()
        .map(|t| match t.rubric.as_str() {
            "session-care" => 1,
            _ => {
                t.messages
                    .iter()
                    .filter(|m| m.role == Role::Assistant)
                    .count()
                    + t.candidates.len()
            }
        })
        .sum();
    assert_eq!(
        o.responses as usize,
        responses + items,
        "one row per demo answer and per transcript item"
    );
    assert_eq!(o.raters.len(), demo.raters.len(), "every demo rater stored");
    let values: usize = demo.ratings.iter().map(|r| r.values.len()).sum::<usize>()
        + demo
            .transcripts
            .iter()
            .flat_map(|t| &t.ratings)
            .map(|r| r.values.len())
            .sum::<usize>();
    assert_eq!(o.ratings as usize, values, "one rating per demo value");
    assert_eq!(
        o.rubrics.len(),
        3,
        "demo uses the built-in reply rubrics and the session rubric"
    );
    assert_eq!(
        o.sources.iter().map(|s| s.responses).sum::<i64>(),
        o.responses,
        "responses per source add up to all responses"
    );
}

#[test]
fn ratings_keep_every_earlier_value() {
    let mut store = Store::in_memory(clock()).unwrap();
    populate_demo(&mut store, 1).unwrap();
    let crit = store.criterion_id("mentalbench", "empathy").unwrap();
    let rater = store.raters().unwrap()[0].id;
    let response: i64 = store
        .conn()
        .query_row("SELECT MIN(id) FROM response", [], |r| r.get(0))
        .unwrap();
    let set = |store: &mut Store, v: i64| {
        store
            .write(|tx| {
                tx.set_rating(&RatingInput {
                    rater_id: rater,
                    response_id: response,
                    criterion_id: crit,
                    occasion: Occasion::First,
                    value: Some(v),
                    raw_value: None,
                    rationale: None,
                    origin: "screen",
                })
            })
            .unwrap()
    };
    set(&mut store, 2);
    let out = set(&mut store, 5);
    assert!(
        matches!(out, RatingOutcome::Updated { previous: Some(2) }),
        "revision reports the old value: {out:?}"
    );
    assert_eq!(
        set(&mut store, 5),
        RatingOutcome::Unchanged,
        "same value writes nothing"
    );
    let versions = store.rating_versions(rater, response, crit).unwrap();
    let values: Vec<_> = versions.iter().map(|v| v.value).collect();
    assert_eq!(values[0], Some(5), "newest first");
    assert!(
        values.contains(&Some(2)),
        "the earlier value 2 must be kept: {values:?}"
    );
    let err = store
        .write(|tx| {
            tx.conn()
                .execute("UPDATE rating_history SET value = 9", [])
                .map_err(StoreError::from)
        })
        .unwrap_err();
    assert!(
        err.to_string().contains("append-only"),
        "history must refuse edits: {err}"
    );
}

#[test]
fn out_of_scale_screen_values_are_refused() {
    let mut store = Store::in_memory(clock()).unwrap();
    populate_demo(&mut store, 1).unwrap();
    let crit = store.criterion_id("mentalbench", "safety").unwrap();
    let rater = store.raters().unwrap()[0].id;
    let err = store
        .write(|tx| {
            tx.set_rating(&RatingInput {
                rater_id: rater,
                response_id: 1,
                criterion_id: crit,
                occasion: Occasion::First,
                value: Some(6),
                raw_value: None,
                rationale: None,
                origin: "screen",
            })
        })
        .unwrap_err();
    assert_eq!(err.code(), "invalid", "6 is not on a 1–5 scale: {err}");
}

#[test]
fn failed_write_leaves_study_unchanged() {
    let mut store = Store::in_memory(clock()).unwrap();
    let before = store.overview().unwrap();
    let result: Result<(), StoreError> = store.write(|tx| {
        tx.add_rubric(&builtin::mentalbench())?;
        Err(StoreError::Invalid("stop".into()))
    });
    assert!(result.is_err(), "the closure failed");
    assert_eq!(
        store.overview().unwrap(),
        before,
        "nothing of a failed transaction may remain"
    );
}

#[test]
fn files_that_are_not_studies_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.concord");
    std::fs::write(&text, b"just some text, not a database").unwrap();
    let err = Store::open(&text, clock()).unwrap_err();
    assert_eq!(err.code(), "not_sqlite", "{err}");
    assert_eq!(
        std::fs::read(&text).unwrap(),
        b"just some text, not a database",
        "file untouched"
    );

    let other = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    let before = std::fs::read(&other).unwrap();
    let err = Store::open(&other, clock()).unwrap_err();
    assert_eq!(err.code(), "not_a_study", "{err}");
    assert_eq!(
        std::fs::read(&other).unwrap(),
        before,
        "foreign database untouched"
    );
    assert!(
        create_demo_at(&other, clock(), 1).is_err(),
        "demo must refuse a foreign file"
    );
    assert_eq!(
        std::fs::read(&other).unwrap(),
        before,
        "still untouched after demo refused"
    );
}

#[test]
fn newer_schema_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.concord");
    drop(Store::create(&path, clock()).unwrap());
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(&format!("PRAGMA user_version = {}", SCHEMA_VERSION + 1))
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path, clock()).unwrap_err();
    assert_eq!(err.code(), "newer_schema", "{err}");
    assert!(
        err.to_string().contains("newer Concord"),
        "the message must say why: {err}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "a newer study must not be touched"
    );
}

#[test]
fn missing_folder_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-folder").join("s.concord");
    let err = Store::create(&path, clock()).unwrap_err();
    assert_eq!(err.code(), "folder_missing", "{err}");
    assert!(
        !dir.path().join("no-such-folder").exists(),
        "no folder may be created"
    );
}

#[test]
fn reopened_study_keeps_ratings_and_is_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.concord");
    let ratings = create_demo_at(&path, clock(), 3)
        .unwrap()
        .overview()
        .unwrap()
        .ratings;
    let store = Store::open(&path, clock()).unwrap();
    assert_eq!(
        store.overview().unwrap().ratings,
        ratings,
        "ratings survive reopening"
    );
    let mode: String = store
        .conn()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal", "studies use write-ahead logging");
    let fk: i64 = store
        .conn()
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1, "foreign keys must be enforced");
}

#[test]
fn a_log_folder_folds_the_log_on_its_own_thread_while_the_study_commits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.concord");
    let mut store = create_demo_at(&path, clock(), 3).unwrap();
    // The log grows until the folder folds it; the study's own commit never does here.
    store.fold_log_every(0).unwrap();
    let before = store.sources().unwrap().len();
    let folder = store
        .log_folder()
        .expect("a second connection of the study");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    let folds = std::thread::spawn(move || {
        let mut most = 0;
        while !stopping.load(std::sync::atomic::Ordering::SeqCst) {
            most = most.max(
                folder
                    .fold()
                    .expect("a passive fold never fails here")
                    .folded,
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        most = most.max(folder.fold().unwrap().folded);
        most
    });
    for k in 0..200 {
        store
            .write(|tx| {
                tx.upsert_source(&NewSource {
                    key: &format!("folded-{k}"),
                    name: "a source written while the log is folded",
                    family: None,
                    kind: SourceKind::Llm,
                })
            })
            .expect("the study commits while the other connection folds");
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let folded = folds.join().unwrap();
    assert!(
        folded > 0,
        "the folder moved committed frames back into the file while the study wrote"
    );
    assert_eq!(
        store.sources().unwrap().len(),
        before + 200,
        "every commit made during the folds is there"
    );
    drop(store);
    assert!(
        integrity_problems(&path, None).unwrap().is_empty(),
        "the file folded under a writer is whole"
    );
}

#[test]
fn every_connection_is_defensive_and_distrusts_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.concord");
    drop(create_demo_at(&path, clock(), 3).unwrap());
    let store = Store::open(&path, clock()).unwrap();
    let defensive = store
        .conn()
        .db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE)
        .unwrap();
    assert!(
        defensive,
        "defensive mode stops a file's schema from corrupting itself"
    );
    let trusted: i64 = store
        .conn()
        .query_row("PRAGMA trusted_schema", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        trusted, 0,
        "triggers and views of a file must not call functions with side effects"
    );
}

/// A study written before the audit chain: every migration before the chain's, a rating and an
/// unchained log entry. Opening it starts the chain at the upgrade, says so, and seals the rows
/// it found; later edits outside Concord are caught, and a later schema upgrade keeps them caught.
#[test]
fn an_older_study_gets_a_chain_that_starts_at_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.concord");
    let chain = MIGRATIONS
        .iter()
        .position(|m| m.contains("ADD COLUMN prev_hash"))
        .expect("the chain has a migration");
    {
        let conn = Connection::open(&path).unwrap();
        for (i, sql) in MIGRATIONS[..chain].iter().enumerate() {
            conn.execute_batch(sql).unwrap();
            conn.execute_batch(&format!(
                "PRAGMA user_version = {}; PRAGMA application_id = {APPLICATION_ID};",
                i + 1
            ))
            .unwrap();
        }
        conn.execute_batch(
            "INSERT INTO audit_log(at, actor, action, detail_json) VALUES (1, 'lead', 'import', '{}');
             INSERT INTO rubric(key, version, name_json, source_toml) VALUES ('r', 1, '{}', '');
             INSERT INTO criterion(rubric_id, key, position, scale_kind, scale_min, scale_max,
                 label_json, description_json, anchors_json) VALUES (1, 'c', 0, 'likert', 1, 5, '{}', '{}', '{}');
             INSERT INTO source(key, name, kind) VALUES ('s', 'S', 'llm');
             INSERT INTO conversation(external_id, rubric_id, context) VALUES ('c1', 1, 'hello');
             INSERT INTO response(conversation_id, source_id, text) VALUES (1, 1, 'hi');
             INSERT INTO rater(kind, name, queue_seed, created_at) VALUES ('expert', 'E', 1, 1);
             INSERT INTO rating(rater_id, response_id, criterion_id, value, origin, created_at, updated_at)
                 VALUES (1, 1, 1, 4, 'screen', 1, 1);",
        )
        .unwrap();
    }
    let store = Store::open(&path, clock()).unwrap();
    let check = store.verify_audit_chain().unwrap();
    assert_eq!(check.broken, None, "the upgraded study verifies");
    assert!(
        check.started_at_upgrade,
        "the chain says it starts at the upgrade"
    );
    assert_eq!(
        (check.unchained, check.started_at),
        (1, Some(2)),
        "the one earlier entry stays unchained; the chain starts right after it"
    );
    drop(store);
    let conn = Connection::open(&path).unwrap();
    conn.execute("UPDATE rating SET value = 1", []).unwrap();
    drop(conn);
    let store = Store::open(&path, clock()).unwrap();
    let broken = store.verify_audit_chain().unwrap().broken;
    assert_eq!(
        broken.as_ref().and_then(|b| b.table.as_deref()),
        Some("rating"),
        "a rating changed after the upgrade is caught: {broken:?}"
    );
}

/// A study written by the schema-5 Concord (first ratings in `rating` with history, test–retest
/// ratings in their own table), built with that version's migrations.
fn schema5_study(path: &std::path::Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    for sql in &MIGRATIONS[..5] {
        c.execute_batch(sql).unwrap();
    }
    c.execute_batch(&format!(
        "PRAGMA user_version = 5; PRAGMA application_id = {APPLICATION_ID};
         INSERT INTO rubric(id, key, version, name_json, source_toml) VALUES (1, 'r', 1, '{{}}', '');
         INSERT INTO criterion(id, rubric_id, key, position, scale_kind, scale_min, scale_max,
             label_json, description_json, anchors_json)
             VALUES (1, 1, 'a', 0, 'likert', 1, 5, '{{}}', '{{}}', '[]'),
                    (2, 1, 'b', 1, 'likert', 1, 5, '{{}}', '{{}}', '[]');
         INSERT INTO source(id, key, name, kind) VALUES (1, 's', 'S', 'llm');
         INSERT INTO conversation(id, external_id, rubric_id, context) VALUES (1, 'c1', 1, 'hi');
         INSERT INTO response(id, conversation_id, source_id, text) VALUES (1, 1, 1, 'answer');
         INSERT INTO rater(id, kind, name, queue_seed, created_at) VALUES (1, 'expert', 'Ana', 1, 0);
         INSERT INTO rating(id, rater_id, response_id, criterion_id, value, raw_value, rationale,
             origin, created_at, updated_at)
             VALUES (7, 1, 1, 1, 4, NULL, 'kind', 'screen', 10, 20),
                    (8, 1, 1, 2, NULL, 'n/a', NULL, 'import:x.csv', 10, 10);
         INSERT INTO rating_history(rating_id, value, raw_value, rationale, origin, valid_from,
             replaced_at) VALUES (7, 3, NULL, NULL, 'screen', 10, 20);
         INSERT INTO retest_rating(rater_id, response_id, criterion_id, value, rationale, origin,
             created_at, updated_at)
             VALUES (1, 1, 1, 2, 'again', 'screen', 30, 40),
                    (1, 1, 2, 5, NULL, 'sheet:ana.xlsx', 31, 41);"
    ))
    .unwrap();
}

#[test]
fn schema5_retest_ratings_move_into_the_rating_table_without_loss() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.concord");
    schema5_study(&path);
    assert_eq!(
        inspect(&path).unwrap(),
        FileKind::Study {
            schema: 5,
            encrypted: false
        },
        "the fixture is a schema-5 study"
    );
    let mut store = Store::open(&path, clock()).unwrap();
    assert_counts_kept(&store, "the upgrade counted the ratings it found");
    assert_eq!(
        store.overview().unwrap().schema_version,
        SCHEMA_VERSION,
        "opening upgrades the study to this version's schema"
    );
    let ratings = store.ratings_of_rater(1).unwrap();
    let row = |r: &StoredRating| {
        (
            r.id,
            r.occasion,
            r.criterion_id,
            r.value,
            r.raw_value.clone(),
            r.rationale.clone(),
            r.origin.clone(),
            r.created_at,
            r.updated_at,
        )
    };
    let got: Vec<_> = ratings.iter().map(row).collect();
    assert_eq!(
        got[..2],
        [
            (
                7,
                Occasion::First,
                1,
                Some(4),
                None,
                Some("kind".into()),
                "screen".into(),
                10,
                20
            ),
            (
                8,
                Occasion::First,
                2,
                None,
                Some("n/a".into()),
                None,
                "import:x.csv".into(),
                10,
                10
            ),
        ],
        "first ratings keep their ids, values, raw values, rationales, origins and times"
    );
    let retests: Vec<_> = got[2..]
        .iter()
        .map(|(_, o, c, v, raw, why, origin, created, updated)| {
            (
                *o,
                *c,
                *v,
                raw.clone(),
                why.clone(),
                origin.clone(),
                *created,
                *updated,
            )
        })
        .collect();
    assert_eq!(
        retests,
        [
            (
                Occasion::Retest,
                1,
                Some(2),
                None,
                Some("again".into()),
                "screen".into(),
                30,
                40
            ),
            (
                Occasion::Retest,
                2,
                Some(5),
                None,
                None,
                "sheet:ana.xlsx".into(),
                31,
                41
            ),
        ],
        "every retest rating becomes a retest-occasion rating with all it held"
    );
    assert_eq!(
        store.rating_versions(1, 1, 1).unwrap().len(),
        2,
        "the first rating's history survives the table rebuild (current + one earlier value)"
    );
    assert_eq!(
        store.overview().unwrap().ratings,
        1,
        "retests stay out of the study's rating count, as before"
    );
    let retest_id = ratings[2].id;
    store
        .write(|tx| {
            tx.set_rating(&RatingInput {
                rater_id: 1,
                response_id: 1,
                criterion_id: 1,
                occasion: Occasion::Retest,
                value: Some(3),
                raw_value: None,
                rationale: Some("again"),
                origin: "screen",
            })
        })
        .unwrap();
    let history = store.rating_history(retest_id).unwrap();
    assert_eq!(
        history
            .iter()
            .map(|h| (h.value, h.valid_from))
            .collect::<Vec<_>>(),
        [(Some(2), 40)],
        "a changed retest rating now keeps its previous value"
    );
    drop(store);
    let reopened = Store::open(&path, clock()).unwrap();
    assert_eq!(
        reopened.ratings_of_rater(1).unwrap().len(),
        4,
        "reopening an upgraded study changes nothing"
    );
}

#[test]
fn a_failed_write_leaves_no_entry_and_the_next_one_still_verifies() {
    let mut store = Store::in_memory(clock()).unwrap();
    populate_demo(&mut store, 3).unwrap();
    let before = store.audit_entries(None, None).unwrap().len();
    let crit = store.criterion_id("mentalbench", "empathy").unwrap();
    let failed: StoreResult<()> = store.write(|tx| {
        tx.set_rating(&RatingInput {
            rater_id: 1,
            response_id: 1,
            criterion_id: crit,
            occasion: crate::store::Occasion::First,
            value: Some(2),
            raw_value: None,
            rationale: None,
            origin: "screen",
        })?;
        Err(StoreError::Invalid("the caller gives up".into()))
    });
    assert!(failed.is_err(), "the write was refused");
    assert_eq!(
        store.audit_entries(None, None).unwrap().len(),
        before,
        "a rolled-back write seals nothing"
    );
    store
        .write(|tx| {
            // Two values, so at least one differs from what the demo holds.
            for value in [1, 5] {
                tx.set_rating(&RatingInput {
                    rater_id: 1,
                    response_id: 1,
                    criterion_id: crit,
                    occasion: crate::store::Occasion::First,
                    value: Some(value),
                    raw_value: None,
                    rationale: None,
                    origin: "screen",
                })?;
            }
            Ok::<_, StoreError>(())
        })
        .unwrap();
    let entries = store.audit_entries(None, None).unwrap();
    let last = entries.last().unwrap();
    assert!(
        last.action.starts_with("rating."),
        "screen ratings are entries of their own: {last:?}"
    );
    assert_eq!(
        store.verify_audit_chain().unwrap().broken,
        None,
        "the rows the rolled-back write touched were not counted into the seal"
    );
}

/// A study whose judge run holds two calls, written through Concord (so sealed), closed.
fn judged_study(path: &std::path::Path) {
    let mut store = create_demo_at(path, clock(), 1).unwrap();
    store
        .write(|tx| {
            let c = tx.conn();
            let (rater, rubric): (i64, i64) = c.query_row(
                "SELECT r.id, (SELECT id FROM rubric ORDER BY id LIMIT 1) FROM rater r ORDER BY r.id LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            c.execute(
                "INSERT INTO judge_run(rater_id, rubric_id, provider, base_url, model, temperature,
                     repetitions, settings_json, settings_sha256, user_prompt, prompt_sha256,
                     created_at, updated_at)
                 VALUES (?1, ?2, 'openai-compatible', 'http://127.0.0.1:1', 'm', 0.0, 1, '{}', 'x',
                     'rate this', 'y', 1, 1)",
                rusqlite::params![rater, rubric],
            )?;
            for response in [1, 2] {
                c.execute(
                    "INSERT INTO judge_call(run_id, response_id, repetition, state, raw_output,
                         scores_json, updated_at)
                     VALUES (1, ?1, 1, 'done', '{\"Empathy\": 4}', '{\"1\": 4}', 1)",
                    [response],
                )?;
            }
            Ok::<_, StoreError>(())
        })
        .unwrap();
    assert_eq!(
        store.verify_audit_chain().unwrap().broken,
        None,
        "judge results written through Concord are sealed"
    );
}

/// Judge results are sealed into the audit chain: a call's output or scores changed, a call
/// inserted or deleted, or the run's settings changed with plain SQL is caught and named.
#[test]
fn judge_results_changed_outside_concord_are_caught_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("judged.concord");
    judged_study(&original);
    for (name, sql, table) in [
        (
            "changed scores",
            "UPDATE judge_call SET scores_json = '{\"1\": 1}' WHERE id = 1",
            "judge_call",
        ),
        (
            "changed raw output",
            "UPDATE judge_call SET raw_output = 'forged' WHERE id = 2",
            "judge_call",
        ),
        (
            "deleted call",
            "DELETE FROM judge_call WHERE id = 2",
            "judge_call",
        ),
        (
            "inserted call",
            "INSERT INTO judge_call(run_id, response_id, repetition, state, scores_json, updated_at)
             VALUES (1, 3, 1, 'done', '{\"1\": 5}', 1)",
            "judge_call",
        ),
        (
            "changed run settings",
            "UPDATE judge_run SET temperature = 0.7",
            "judge_run",
        ),
    ] {
        let path = dir.path().join(format!("{}.concord", name.replace(' ', "-")));
        std::fs::copy(&original, &path).unwrap();
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(sql).unwrap();
        drop(conn);
        let store = Store::open(&path, clock()).unwrap();
        let broken = store.verify_audit_chain().unwrap().broken;
        assert_eq!(
            broken.as_ref().and_then(|b| b.table.as_deref()),
            Some(table),
            "{name} outside Concord is caught and its table named: {broken:?}"
        );
    }
}

/// A study chained before judge results were sealed (a schema-10 study: its chain's seal leaves
/// the judge tables out) seals the judge rows it holds when it is upgraded, says so in a
/// schema.upgrade entry, and verifies; a later edit is caught.
#[test]
fn an_older_chained_study_seals_its_judge_results_at_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("older.concord");
    let since = migration_version("judge results join the audit chain");
    assert!(
        since > 10,
        "the migration that starts sealing judge results comes after the schema-10 fixture"
    );
    chained_schema10_study(&path, false);
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "INSERT INTO judge_run(rater_id, rubric_id, provider, base_url, model, temperature,
                 repetitions, settings_json, settings_sha256, user_prompt, prompt_sha256,
                 created_at, updated_at)
             VALUES (1, 1, 'openai-compatible', 'http://127.0.0.1:1', 'm', 0.0, 1, '{}', 'x',
                 'rate this', 'y', 1, 1);
             INSERT INTO judge_call(run_id, response_id, repetition, state, raw_output,
                 scores_json, updated_at)
             VALUES (1, 1, 1, 'done', '{\"a\": 4}', '{\"1\": 4}', 1);",
        )
        .unwrap();
        // A schema-10 Concord sealed no judge rows: its chain's last entry leaves them out.
        audit::reseal_head_without(&conn, &["judge_run", "judge_call"]).unwrap();
    }
    let store = Store::open(&path, clock()).unwrap();
    let check = store.verify_audit_chain().unwrap();
    assert_eq!(check.broken, None, "the upgraded study verifies");
    let last = store.audit_entries(None, None).unwrap().pop().unwrap();
    assert_eq!(
        last.action, "schema.upgrade",
        "the upgrade's own entry seals the judge rows it found"
    );
    drop(store);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("UPDATE judge_call SET scores_json = '{}' WHERE id = 1")
        .unwrap();
    drop(conn);
    let store = Store::open(&path, clock()).unwrap();
    assert_eq!(
        store
            .verify_audit_chain()
            .unwrap()
            .broken
            .and_then(|b| b.table),
        Some("judge_call".to_string()),
        "after the upgrade a judge result changed outside Concord is caught"
    );
}

#[test]
fn every_changed_rating_keeps_its_previous_version_in_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.concord");
    schema5_study(&path);
    let store = Store::open(&path, clock()).unwrap();
    drop(store);
    // Any writer — not only `set_rating` — leaves the replaced version in the history.
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch(
        "UPDATE rating SET value = 1, updated_at = 99 WHERE id = 8;
         UPDATE rating SET origin = 'x' WHERE id = 8;",
    )
    .unwrap();
    let rows: Vec<(Option<i64>, Option<String>, i64, i64)> = c
        .prepare(
            "SELECT value, raw_value, valid_from, replaced_at FROM rating_history
             WHERE rating_id = 8",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        rows,
        [(None, Some("n/a".to_string()), 10, 99)],
        "the value change is kept once; an origin-only update is not a new version"
    );
}

/// A rater package sealed by the schema-10 Concord (before retest ratings moved into the rating
/// table), built with that version's migrations and sealed as that version sealed it. With
/// `tamper`, a retest value is changed outside Concord after the seal.
fn sealed_schema10_package(path: &std::path::Path, key: &Passphrase, tamper: bool) -> String {
    let c = rusqlite::Connection::open(path).unwrap();
    cipher::apply_key(&c, key).unwrap();
    for (i, sql) in MIGRATIONS[..10].iter().enumerate() {
        c.execute_batch(sql).unwrap();
        c.execute_batch(&format!(
            "PRAGMA user_version = {}; PRAGMA application_id = {APPLICATION_ID};",
            i + 1
        ))
        .unwrap();
    }
    c.execute_batch(
        "INSERT INTO rubric(id, key, version, name_json, source_toml) VALUES (1, 'r', 1, '{}', '');
         INSERT INTO criterion(id, rubric_id, key, position, scale_kind, scale_min, scale_max,
             label_json, description_json, anchors_json)
             VALUES (1, 1, 'a', 0, 'likert', 1, 5, '{}', '{}', '[]');
         INSERT INTO source(id, key, name, kind) VALUES (1, 'S01', 'S01', 'llm');
         INSERT INTO conversation(id, external_id, rubric_id, context) VALUES (1, 'c1', 1, 'hi');
         INSERT INTO response(id, conversation_id, source_id, text) VALUES (1, 1, 1, 'answer');
         INSERT INTO rater(id, kind, name, queue_seed, created_at) VALUES (1, 'expert', 'Ana', 1, 0);
         INSERT INTO rating(id, rater_id, response_id, criterion_id, value, origin, created_at,
             updated_at) VALUES (1, 1, 1, 1, 4, 'screen', 10, 20);
         INSERT INTO retest_rating(rater_id, response_id, criterion_id, value, rationale, origin,
             created_at, updated_at) VALUES (1, 1, 1, 2, 'again', 'screen', 30, 40);",
    )
    .unwrap();
    let state = seal::digest(&c, seal::Part::State).unwrap();
    let issue = seal::digest(&c, seal::Part::Issued).unwrap();
    let mac = seal::SealKey::derive(key, "pkg1").mac("study1", &issue, 3, &state);
    for (k, v) in [
        ("seal.study", "study1"),
        ("seal.package", "pkg1"),
        ("seal.issue", issue.as_str()),
        ("seal.seq", "3"),
        ("seal.state", state.as_str()),
        ("seal.mac", mac.as_str()),
    ] {
        c.execute("INSERT INTO study_meta(key, value) VALUES (?1, ?2)", [k, v])
            .unwrap();
    }
    if tamper {
        c.execute("UPDATE retest_rating SET value = 5", []).unwrap();
    }
    state
}

#[test]
fn a_sealed_package_from_before_the_occasion_migration_still_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let key = Passphrase::new("a long package passphrase").unwrap();
    let path = dir.path().join("old.concord");
    let sealed = sealed_schema10_package(&path, &key, false);
    let pkg = Store::open_with(&path, clock(), Some(&key)).unwrap();
    assert_eq!(
        pkg.ratings_of_rater(1).unwrap().len(),
        2,
        "the upgrade moved the retest rating into the rating table"
    );
    let seal = pkg
        .package_seal()
        .unwrap()
        .expect("the package keeps its seal");
    assert!(
        seal.mac_valid && seal.issue_matches && seal.state_matches,
        "an untouched package still verifies after its rows were moved: {seal:?}"
    );
    assert_eq!(
        (seal.seq, seal.state.as_str()),
        (3, sealed.as_str()),
        "the seal still names the return and state the issuing study recorded"
    );
    drop(pkg);
    let reopened = Store::open_with(&path, clock(), Some(&key)).unwrap();
    assert!(
        reopened.package_seal().unwrap().unwrap().state_matches,
        "reopening the upgraded package changes nothing"
    );

    let tampered = dir.path().join("tampered.concord");
    sealed_schema10_package(&tampered, &key, true);
    let pkg = Store::open_with(&tampered, clock(), Some(&key)).unwrap();
    let seal = pkg.package_seal().unwrap().unwrap();
    assert!(
        !seal.state_matches,
        "a retest changed outside Concord before the upgrade is still caught: {seal:?}"
    );
}

/// A schema-10 study with an audit chain and a retest rating in its own table.
fn chained_schema10_study(path: &std::path::Path, tamper: bool) {
    let c = rusqlite::Connection::open(path).unwrap();
    for (i, sql) in MIGRATIONS[..10].iter().enumerate() {
        c.execute_batch(sql).unwrap();
        c.execute_batch(&format!(
            "PRAGMA user_version = {}; PRAGMA application_id = {APPLICATION_ID};",
            i + 1
        ))
        .unwrap();
    }
    c.execute_batch(
        "INSERT INTO rubric(id, key, version, name_json, source_toml) VALUES (1, 'r', 1, '{}', '');
         INSERT INTO criterion(id, rubric_id, key, position, scale_kind, scale_min, scale_max,
             label_json, description_json, anchors_json)
             VALUES (1, 1, 'a', 0, 'likert', 1, 5, '{}', '{}', '[]');
         INSERT INTO source(id, key, name, kind) VALUES (1, 's', 'S', 'llm');
         INSERT INTO conversation(id, external_id, rubric_id, context) VALUES (1, 'c1', 1, 'hi');
         INSERT INTO response(id, conversation_id, source_id, text) VALUES (1, 1, 1, 'answer');
         INSERT INTO rater(id, kind, name, queue_seed, created_at) VALUES (1, 'expert', 'Ana', 1, 0);
         INSERT INTO rating(id, rater_id, response_id, criterion_id, value, origin, created_at,
             updated_at) VALUES (1, 1, 1, 1, 4, 'screen', 10, 20);
         INSERT INTO retest_rating(rater_id, response_id, criterion_id, value, rationale, origin,
             created_at, updated_at) VALUES (1, 1, 1, 2, 'again', 'screen', 30, 40);",
    )
    .unwrap();
    assert!(
        audit::ensure_chain(&c, 50, 10).unwrap(),
        "the fixture's chain starts here, sealing the retest table's row"
    );
    // A schema-10 Concord sealed none of the tables the chain took up later.
    audit::reseal_head_without(&c, &audit::tables_sealed_after(10)).unwrap();
    if tamper {
        c.execute("UPDATE retest_rating SET value = 5", []).unwrap();
    }
}

#[test]
fn an_audit_chain_from_before_the_occasion_migration_still_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chained.concord");
    chained_schema10_study(&path, false);
    let store = Store::open(&path, clock()).unwrap();
    let check = store.verify_audit_chain().unwrap();
    assert_eq!(
        check.broken, None,
        "the upgrade's entry carries the retest's move into the seal"
    );
    let last = store.audit_entries(None, None).unwrap();
    assert_eq!(
        last.last().map(|e| e.action.as_str()),
        Some("schema.upgrade"),
        "the move is recorded as an upgrade: {last:?}"
    );

    let tampered = dir.path().join("tampered.concord");
    chained_schema10_study(&tampered, true);
    let store = Store::open(&tampered, clock()).unwrap();
    let broken = store.verify_audit_chain().unwrap().broken;
    assert_eq!(
        broken.as_ref().and_then(|b| b.table.as_deref()),
        Some("retest_rating"),
        "a retest changed outside Concord before the upgrade is still caught, in the table it was changed in: {broken:?}"
    );
}

#[test]
fn the_bulk_import_digests_rating_rows_with_the_columns_the_trigger_hashes() {
    let store = Store::in_memory(clock()).unwrap();
    let cols = audit::audited_columns(store.conn(), "rating")
        .unwrap()
        .expect("the chain's insert trigger on rating is installed on Concord's connection");
    assert!(
        cols.iter()
            .map(String::as_str)
            .eq(rating::RATING_ROW_COLUMNS),
        "the bulk import hashes rating rows in this column order; a new column must be added \
         there too, else imports fall back to the slow per-row trigger: {cols:?}"
    );
}

/// The kept rating counts agree with a full recount (and say what they are, for the message).
fn assert_counts_kept(store: &Store, after: &str) {
    assert_eq!(
        store.kept_count_differences().unwrap(),
        Vec::new(),
        "after {after} the kept rating counts must equal a recount of the ratings"
    );
}

#[test]
fn kept_rating_counts_equal_a_recount_after_every_kind_of_rating_write() {
    let mut store = Store::in_memory(clock()).unwrap();
    populate_demo(&mut store, 2).unwrap();
    assert_counts_kept(&store, "the demo study");
    let (rater, judge) = {
        let raters = store.raters().unwrap();
        let expert = raters
            .iter()
            .find(|r| r.kind == RaterKind::Expert)
            .unwrap()
            .id;
        let judge = store
            .write(|tx| {
                tx.upsert_rater(&NewRater {
                    kind: RaterKind::Judge,
                    name: "judge-new",
                    model_id: Some("judge-new"),
                    family: None,
                    queue_seed: 1,
                })
            })
            .unwrap();
        (expert, judge)
    };
    let crits: Vec<i64> = ["empathy", "safety", "guidance"]
        .iter()
        .map(|k| store.criterion_id("mentalbench", k).unwrap())
        .collect();
    let responses: Vec<i64> = {
        let mut stmt = store
            .conn()
            .prepare("SELECT id FROM response ORDER BY id LIMIT 4")
            .unwrap();
        let rows = stmt.query_map([], |r| r.get(0)).unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    };
    let set = |store: &mut Store, rater_id, response_id, criterion_id, occasion, value| {
        store
            .write(|tx| {
                tx.set_rating(&RatingInput {
                    rater_id,
                    response_id,
                    criterion_id,
                    occasion,
                    value,
                    raw_value: None,
                    rationale: None,
                    origin: "screen",
                })
            })
            .unwrap();
    };
    // Single ratings: new with a value, new missing, a second criterion of the same response,
    // a value cleared and given again, a retest (not a first rating: not counted).
    set(
        &mut store,
        judge,
        responses[0],
        crits[0],
        Occasion::First,
        Some(3),
    );
    set(
        &mut store,
        judge,
        responses[1],
        crits[0],
        Occasion::First,
        None,
    );
    set(
        &mut store,
        judge,
        responses[0],
        crits[1],
        Occasion::First,
        Some(4),
    );
    assert_counts_kept(&store, "new single ratings");
    set(
        &mut store,
        judge,
        responses[0],
        crits[0],
        Occasion::First,
        None,
    );
    set(
        &mut store,
        judge,
        responses[1],
        crits[0],
        Occasion::First,
        Some(2),
    );
    set(
        &mut store,
        judge,
        responses[2],
        crits[0],
        Occasion::Retest,
        Some(2),
    );
    set(
        &mut store,
        rater,
        responses[3],
        crits[2],
        Occasion::First,
        Some(1),
    );
    assert_counts_kept(&store, "changed single ratings and a retest");
    // Bulk imports: a rater new to the import (counted from what it writes), a rater with
    // ratings already (recounted), a rating that exists (updated), one repeated in the import.
    let fresh = store
        .write(|tx| {
            tx.upsert_rater(&NewRater {
                kind: RaterKind::Judge,
                name: "judge-bulk",
                model_id: Some("judge-bulk"),
                family: None,
                queue_seed: 2,
            })
        })
        .unwrap();
    let rating = |rater_id, response_id, criterion_id, value| ImportedRating {
        rater_id,
        response_id,
        criterion_id,
        value,
        raw_value: None,
        rationale: None,
    };
    let mut bulk = Vec::new();
    for (i, &response) in responses.iter().enumerate() {
        for &crit in &crits {
            bulk.push(rating(fresh, response, crit, (i % 2 == 0).then_some(3)));
            bulk.push(rating(judge, response, crit, Some(5)));
        }
    }
    bulk.push(rating(fresh, responses[0], crits[0], None));
    store
        .write(|tx| tx.import_ratings(bulk, "import:counts"))
        .unwrap();
    assert_counts_kept(&store, "a bulk import");
    // A package's ratings copied with their own times, then revised.
    let other = store
        .criterion_id("mentalbench", "informativeness")
        .unwrap();
    let copied = RatingContent {
        value: Some(4),
        raw_value: None,
        rationale: None,
    };
    let id = store
        .write(|tx| {
            tx.copy_rating(&CopiedRating {
                rater_id: fresh,
                response_id: responses[2],
                criterion_id: other,
                occasion: Occasion::First,
                content: &copied,
                origin: "package:p",
                created_at: 5,
                updated_at: 5,
            })
        })
        .unwrap();
    assert_counts_kept(&store, "a copied rating");
    let current = store
        .read()
        .stored_rating(fresh, responses[2], other, Occasion::First)
        .unwrap()
        .unwrap();
    assert_eq!(current.id, id, "the copied rating is stored");
    store
        .write(|tx| {
            tx.revise_rating(
                &current,
                &RatingContent {
                    value: None,
                    ..copied.clone()
                },
                "package:p",
                6,
            )
        })
        .unwrap();
    assert_counts_kept(&store, "a revised rating");
    let o = store.overview().unwrap();
    let recounted: i64 = store
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM rating WHERE occasion = 0 AND value IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        o.ratings, recounted,
        "the overview's total is the recount's"
    );
}

#[test]
fn a_tampered_count_is_found_by_the_recount() {
    let mut store = Store::in_memory(clock()).unwrap();
    populate_demo(&mut store, 1).unwrap();
    store
        .conn()
        .execute("UPDATE rating_count SET ratings = ratings + 1 WHERE rowid = (SELECT MIN(rowid) FROM rating_count)", [])
        .unwrap();
    assert_eq!(
        store.kept_count_differences().unwrap().len(),
        1,
        "the check must be able to fail: a changed count is one difference"
    );
    let broken = store
        .verify_audit_chain()
        .unwrap()
        .broken
        .expect("a kept count changed outside Concord breaks the verification");
    assert_eq!(broken.table.as_deref(), Some("rating_count"), "{broken:?}");
}

#[test]
fn a_study_name_without_room_for_its_journal_is_refused_clearly() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    // 82 three-byte characters and ".concord": 254 bytes, which fits alone but not with "-journal".
    let long = dir.path().join(format!("{}.concord", "研".repeat(82)));
    let err = Store::create(&long, clock()).expect_err("no room for the journal's name");
    assert!(
        matches!(
            err,
            StoreError::NameTooLong {
                bytes: 254,
                max: 247,
                ..
            }
        ),
        "the refusal names the length and the limit, not SQLite's 'unable to open': {err}"
    );
    assert!(!long.exists(), "nothing is created for a refused name");
    let fits = dir.path().join(format!("{}.concord", "研".repeat(79)));
    Store::create(&fits, clock()).expect("a 245-byte name leaves room for the journal");
}
