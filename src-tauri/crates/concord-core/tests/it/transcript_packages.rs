//! Rater packages of studies with transcripts: a package carries what its items' histories show
//! (the turns before the latest item, the earlier rated replies as history only, the whole
//! conversation of a session item) and nothing more — no other rater's values, no turn after the
//! item, no candidate a history never shows, no source name; the expert sees each item's history
//! in the package exactly as the lead's study shows it; a turn edited inside a package is refused
//! at merge with its table named; values rated in the package land on the right reply and session
//! item, both audit chains intact; and a package of single-turn conversations issues exactly what
//! it did before transcripts existed.

use concord_core::rubric::{builtin, Scope};
use concord_core::store::lead_key::KeyStore;
use concord_core::store::{
    ChainTrust, NewAssignment, NewConversation, NewSource, NewTurn, Occasion, Passphrase,
    RatingInput, Role, SourceKind, Store, StoreError, StudyTx,
};
use concord_core::workflow::assignment::{self, AssignmentOptions, Purpose};
use concord_core::workflow::package::{self, merge_package, PackageError};
use concord_core::workflow::queue;
use concord_testsupport::lead_study::*;
use std::path::{Path, PathBuf};

const PACKAGE_PASS: &str = "told to Ana by phone";
const SESSION_RUBRIC: &str = "session-check";

fn pass() -> Passphrase {
    Passphrase::new(PACKAGE_PASS).expect("a passphrase")
}

/// The expert's laptop clock: she works a minute after the package was written.
fn later_clock() -> std::sync::Arc<concord_core::base::clock::SteppingClock> {
    std::sync::Arc::new(concord_core::base::clock::SteppingClock::new(
        1_700_000_060_000,
        1,
    ))
}

/// The items of the lead's study, by what they are.
struct Items {
    /// Conversation t1's rated replies at turns 3, 5 and 7 (one chatbot answers all three).
    turn3: i64,
    turn5: i64,
    turn7: i64,
    /// Conversation t2's two candidates at its last turn, 4.
    candidate: i64,
    other_candidate: i64,
    /// Conversation s1's session item.
    session: i64,
    /// A single-turn conversation's answer.
    single: i64,
    /// Conversation t3's opening: a chatbot's greeting rated at turn 1, nothing before it.
    greeting: i64,
}

/// Texts that must never reach Ana's package: a later turn and reply, a candidate not given to
/// her, a session conversation's candidates, other raters' and the judge's words, source names.
const NEVER_IN_ANAS_PACKAGE: [&str; 12] = [
    "I lost my job.",
    "That is a heavy loss.",
    "Thank you, that helped.",
    "Rest when you can; I am here.",
    "the other candidate",
    "session candidate A",
    "session candidate B",
    "Boris' private note",
    "judge explanation",
    "helperbot",
    "otherbot",
    "Boris",
];

fn source(tx: &mut StudyTx<'_>, key: &str) -> Result<i64, StoreError> {
    tx.upsert_source(&NewSource {
        key,
        name: key,
        family: None,
        kind: SourceKind::Llm,
    })
}

fn conversation(tx: &mut StudyTx<'_>, id: &str, rubric: i64) -> Result<i64, StoreError> {
    tx.add_conversation(&NewConversation {
        external_id: id,
        rubric_id: rubric,
        context: "",
        language: Some("en"),
        category: Some("grief"),
    })
}

fn turn(
    tx: &mut StudyTx<'_>,
    conversation: i64,
    position: i64,
    role: Role,
    text: &str,
    source: Option<i64>,
    candidate: bool,
) -> Result<i64, StoreError> {
    tx.add_turn(&NewTurn {
        conversation_id: conversation,
        position,
        role,
        text,
        source_id: source,
        candidate,
    })
}

/// The transcripts, built through the store API: t1 (a system note, then a user and one
/// chatbot's replies, rated at turns 3, 5 and 7), t2 (an unrated assistant turn of another
/// chatbot, then two candidates at turn 4), s1 (a session rubric's conversation with two
/// candidate turns at its end, rated as one session item) and t3 (a chatbot's greeting rated at
/// turn 1, then a user turn and a reply at turn 3).
fn add_transcripts(tx: &mut StudyTx<'_>) -> Result<Items, StoreError> {
    let mut session_rubric = builtin::mentalbench();
    session_rubric.id = SESSION_RUBRIC.to_string();
    session_rubric.scope = Scope::Session;
    let session_rubric = tx.add_rubric(&session_rubric)?;
    let reply_rubric = 1; // the seeded study's MentalBench rubric
    let bot = source(tx, "helperbot")?;
    let other = source(tx, "otherbot")?;
    let claude = source(tx, "claude")?;
    let gpt = source(tx, "gpt4o")?;

    let t1 = conversation(tx, "t1", reply_rubric)?;
    turn(
        tx,
        t1,
        1,
        Role::System,
        "The user agreed to a research study.",
        None,
        false,
    )?;
    turn(tx, t1, 2, Role::User, "My dog died last week.", None, false)?;
    let turn3 = tx.add_item(t1, bot, Some(3), Some("I am sorry. How are you coping?"))?;
    turn(tx, t1, 4, Role::User, "Badly, I cannot sleep.", None, false)?;
    let turn5 = tx.add_item(t1, bot, Some(5), Some("Sleep often suffers in grief."))?;
    turn(
        tx,
        t1,
        6,
        Role::User,
        "Thank you, that helped.",
        None,
        false,
    )?;
    let turn7 = tx.add_item(t1, bot, Some(7), Some("Rest when you can; I am here."))?;

    let t2 = conversation(tx, "t2", reply_rubric)?;
    turn(tx, t2, 1, Role::User, "I keep failing exams.", None, false)?;
    turn(
        tx,
        t2,
        2,
        Role::Assistant,
        "That sounds hard.",
        Some(other),
        false,
    )?;
    turn(tx, t2, 3, Role::User, "What should I do?", None, false)?;
    let candidate = tx.add_item(t2, claude, Some(4), Some("Let us plan your week."))?;
    let other_candidate = tx.add_item(t2, gpt, Some(4), Some("the other candidate"))?;

    let s1 = conversation(tx, "s1", session_rubric)?;
    turn(tx, s1, 1, Role::User, "Hello", None, false)?;
    turn(
        tx,
        s1,
        2,
        Role::Assistant,
        "Hi, how can I help?",
        Some(bot),
        false,
    )?;
    turn(tx, s1, 3, Role::User, "I feel low", None, false)?;
    turn(
        tx,
        s1,
        4,
        Role::Assistant,
        "session candidate A",
        Some(claude),
        true,
    )?;
    turn(
        tx,
        s1,
        4,
        Role::Assistant,
        "session candidate B",
        Some(gpt),
        true,
    )?;
    let session = tx.add_item(s1, bot, None, None)?;

    let t3 = conversation(tx, "t3", reply_rubric)?;
    let greeting = tx.add_item(t3, bot, Some(1), Some("Welcome. What brings you here?"))?;
    turn(tx, t3, 2, Role::User, "I lost my job.", None, false)?;
    tx.add_item(t3, bot, Some(3), Some("That is a heavy loss."))?;

    let seeded = tx.conversation_ids()?["conv-0000"];
    let single = tx
        .response_ids()?
        .into_iter()
        .filter(|((c, _), _)| *c == seeded)
        .map(|(_, (id, _))| id)
        .min()
        .expect("the seeded single-turn conversation has answers");
    Ok(Items {
        turn3,
        turn5,
        turn7,
        candidate,
        other_candidate,
        session,
        single,
        greeting,
    })
}

/// A lead's study with transcripts and Ana's package beside it.
struct Issued {
    _dir: tempfile::TempDir,
    _keys: tempfile::TempDir,
    main: PathBuf,
    out: PathBuf,
    store: Store,
    items: Items,
}

/// Ana's queue, in order.
fn anas_items(items: &Items) -> [i64; 5] {
    [
        items.single,
        items.turn5,
        items.candidate,
        items.session,
        items.greeting,
    ]
}

/// Ana is given a single-turn answer, the reply at turn 5, one candidate, the session item and a
/// greeting at turn 1;
/// Boris the replies at turns 3 and 7 and the other candidate, and he and the judge rate the
/// reply at turn 3 (part of the history of Ana's reply at turn 5). Ana rated her reply at turn 5
/// before the package was issued. The lead's key is held (in a folder of the test's own), so the
/// package is issued signed and every write of the study signs its chain.
fn issued() -> Issued {
    issued_with(true)
}

/// [`issued`], with the lead's key held or (`lead_key` false) a study that has none.
fn issued_with(lead_key: bool) -> Issued {
    let dir = tempfile::tempdir().expect("temp dir");
    let keys = tempfile::tempdir().expect("key dir");
    let main = dir.path().join("main.concord");
    let mut store = file_study(&main, 2, &["Ana", "Boris"]);
    if lead_key {
        store
            .use_lead_keys(KeyStore::Folder(keys.path().to_path_buf()))
            .expect("the key store reads");
    }
    let items = store
        .write(add_transcripts)
        .expect("the transcripts are stored");
    let (ana, boris, judge) = (
        rater_id(&store, "Ana"),
        rater_id(&store, "Boris"),
        rater_id(&store, "gpt-4o-judge"),
    );
    let assigned: Vec<NewAssignment> = anas_items(&items)
        .iter()
        .enumerate()
        .map(|(i, &r)| NewAssignment::fresh(ana, r, i as i64 + 1, Purpose::Regular))
        .chain(
            [items.turn3, items.turn7, items.other_candidate]
                .iter()
                .enumerate()
                .map(|(i, &r)| NewAssignment::fresh(boris, r, i as i64 + 1, Purpose::Regular)),
        )
        .collect();
    store
        .write(|tx| tx.add_assignments(&assigned))
        .expect("assigned");
    rate_all(
        &mut store,
        boris,
        items.turn3,
        2,
        Some("Boris' private note"),
    );
    rate_all(&mut store, judge, items.turn3, 1, Some("judge explanation"));
    rate_all(&mut store, judge, items.turn5, 1, Some("judge explanation"));
    rate_all(&mut store, ana, items.turn5, 3, None);
    let out = dir.path().join("ana.concord");
    let summary =
        package::export_package(&mut store, "Ana", &out, 5, &pass()).expect("package written");
    assert_eq!(
        (summary.assignments, summary.responses),
        (5, 5),
        "the package gives Ana her five items, the history it carries besides is not counted as items"
    );
    assert_eq!(
        store.lead_key().is_some(),
        lead_key,
        "where the lead's key is held, issuing the package made it, and it signs the package"
    );
    Issued {
        _dir: dir,
        _keys: keys,
        main,
        out,
        store,
        items,
    }
}

/// A raw connection to the package, below Concord: what another program with the passphrase does.
fn raw(path: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).expect("opens");
    conn.pragma_update(None, "key", PACKAGE_PASS)
        .expect("keyed");
    conn
}

fn count(conn: &rusqlite::Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn strings(conn: &rusqlite::Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(sql).expect("prepare");
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .expect("query");
    rows.map(|r| r.expect("row")).collect()
}

/// Every value of every row of every table of the package, as text.
fn every_value(conn: &rusqlite::Connection) -> String {
    let mut out = String::new();
    for table in strings(
        conn,
        "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name",
    ) {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM \"{table}\""))
            .expect("select");
        let n = stmt.column_count();
        let mut rows = stmt.query([]).expect("rows");
        while let Some(row) = rows.next().expect("row") {
            for i in 0..n {
                out.push_str(&format!("{:?}|", row.get_ref(i).expect("value")));
            }
            out.push('\n');
        }
    }
    out
}

#[test]
fn a_package_carries_each_items_history_and_nothing_more() {
    let t = issued();
    let conn = raw(&t.out);
    assert_eq!(
        strings(
            &conn,
            "SELECT c.external_id || ':' || group_concat(t.position, ',') FROM turn t
             JOIN conversation c ON c.id = t.conversation_id GROUP BY c.id ORDER BY c.external_id"
        ),
        vec!["s1:1,2,3", "t1:1,2,4", "t2:1,2,3"],
        "the turns before each conversation's latest item travel (the whole of a session item's), not turn 6 after Ana's reply at turn 5"
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM turn WHERE candidate = 1 OR source_id IS NOT NULL"
        ),
        0,
        "no candidate a history never shows, and no turn names who wrote it"
    );
    assert_eq!(
        strings(
            &conn,
            "SELECT c.external_id || '@' || p.turn FROM response p
             JOIN conversation c ON c.id = p.conversation_id WHERE p.turn IS NOT NULL
             ORDER BY c.external_id, p.turn"
        ),
        vec!["t1@3", "t1@5", "t2@4", "t3@1"],
        "the earlier reply at turn 3 travels as history beside Ana's items; the replies at turns 7 (t1) and 3 (t3) and the other candidate do not"
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM assignment WHERE response_id IN (SELECT id FROM response WHERE turn = 3)"
        ),
        0,
        "the earlier reply is no item of Ana's: it is assigned to no one in the package"
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM rating WHERE response_id IN (SELECT id FROM response WHERE turn = 3)
             OR rater_id <> (SELECT id FROM rater WHERE name = 'Ana')"
        ),
        0,
        "no one's values of the earlier reply travel, and no other rater's values at all"
    );
    assert_eq!(
        count(&conn, "SELECT COUNT(*) FROM rater"),
        1,
        "Ana is the package's only rater"
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM source WHERE key NOT LIKE 'S__' OR name <> key OR family IS NOT NULL OR kind <> 'llm'"
        ),
        0,
        "every source, the earlier reply's included, is an opaque code"
    );
    let everything = every_value(&conn);
    for secret in NEVER_IN_ANAS_PACKAGE {
        assert!(
            !everything.contains(secret),
            "nothing in the package holds {secret:?}"
        );
    }
    drop(conn);

    let mut pkg =
        Store::open_with(&t.out, later_clock(), Some(&pass())).expect("the package opens");
    let ana = rater_id(&pkg, "Ana");
    let queue = queue::open_queue(&mut pkg, ana).expect("Ana's queue opens in the package");
    assert_eq!(
        queue.total, 5,
        "the queue holds Ana's five items and not the earlier reply carried as history"
    );
}

#[test]
fn an_item_shows_the_same_history_in_the_package_as_in_the_study() {
    let t = issued();
    let lead_ana = rater_id(&t.store, "Ana");
    let pkg = Store::open_with(&t.out, later_clock(), Some(&pass())).expect("the package opens");
    let ana = rater_id(&pkg, "Ana");
    for (n, &response) in anas_items(&t.items).iter().enumerate() {
        let item = n as i64 + 1;
        let study = queue::rating_item(&t.store, lead_ana, item).expect("the study's item");
        let package = queue::rating_item(&pkg, ana, item).expect("the package's item");
        assert_eq!(
            (
                &package.history,
                package.turn,
                package.scope,
                &package.answer,
                &package.context
            ),
            (
                &study.history,
                study.turn,
                study.scope,
                &study.answer,
                &study.context
            ),
            "item {item} (response {response}) shows the same history, turn, scope and answer in the package as in the study"
        );
    }
    let reply = queue::rating_item(&pkg, ana, 2).expect("the reply at turn 5");
    assert_eq!(
        (
            reply.turn,
            reply.history.iter().map(|h| h.turn).collect::<Vec<_>>()
        ),
        (Some(5), vec![1, 2, 3, 4]),
        "the reply at turn 5 is rated in the light of turns 1 to 4"
    );
    assert_eq!(
        (reply.history[0].role, reply.history[2].text.as_str()),
        (Role::System, "I am sorry. How are you coping?"),
        "its history keeps the system note's role and shows the earlier rated reply"
    );
    let session = queue::rating_item(&pkg, ana, 4).expect("the session item");
    assert_eq!(
        (
            session.turn,
            session.scope,
            session
                .history
                .iter()
                .map(|h| h.text.as_str())
                .collect::<Vec<_>>()
        ),
        (
            None,
            Scope::Session,
            vec!["Hello", "Hi, how can I help?", "I feel low"]
        ),
        "the session item shows the whole conversation but its candidates"
    );
    let greeting = queue::rating_item(&pkg, ana, 5).expect("the greeting");
    assert_eq!(
        (greeting.turn, greeting.history.len()),
        (Some(1), 0),
        "a reply at turn 1 has nothing before it in the package either, though its conversation's turns after it stay behind"
    );
}

#[test]
fn a_turn_edited_inside_a_package_is_refused_at_merge_naming_the_table() {
    // Without a lead key the items' digest refuses it; with one, the lead's signature over the
    // items breaks first. Either way the refusal names the table.
    for lead_key in [false, true] {
        an_edited_turn_is_refused(lead_key);
    }
}

/// A turn edited inside Ana's package with another program is refused at merge, naming the
/// table, whether or not Concord saved the package after the edit; an edited reply likewise.
fn an_edited_turn_is_refused(lead_key: bool) {
    let mut t = issued_with(lead_key);
    let refused_as_edited = |err: &PackageError, table: &str| {
        let named = err.to_string().contains(&format!(
            "the rows of table {table} differ from what was issued"
        ));
        named
            && if lead_key {
                matches!(err, PackageError::NotIssuedHere { .. })
            } else {
                matches!(err, PackageError::AlteredAfterIssue { .. })
            }
    };
    let pristine = t.main.with_file_name("pristine.concord");
    std::fs::copy(&t.out, &pristine).expect("copy");
    let resealed = t.main.with_file_name("resealed.concord");
    std::fs::copy(&t.out, &resealed).expect("copy");
    let before = every_value(&rusqlite::Connection::open(&t.main).expect("study opens"));
    let edit =
        "UPDATE turn SET text = 'My cat died last week.' WHERE text = 'My dog died last week.'";

    assert_eq!(
        raw(&t.out).execute(edit, []).expect("edited"),
        1,
        "one turn edited"
    );
    let err = merge_package(&mut t.store, &t.out, &pass()).expect_err("an edited turn");
    assert!(
        refused_as_edited(&err, "turn"),
        "a turn edited after issue is refused, naming the table (lead key: {lead_key}): {err}"
    );

    // Edited, then saved in Concord (which renews the seal over the state, never the items).
    assert_eq!(
        raw(&resealed).execute(edit, []).expect("edited"),
        1,
        "one turn edited"
    );
    Store::open_with(&resealed, later_clock(), Some(&pass()))
        .expect("opens")
        .write(|tx| tx.set_meta("note", "saved after the edit"))
        .expect("a save in Concord");
    let err = merge_package(&mut t.store, &resealed, &pass()).expect_err("edited and re-sealed");
    assert!(
        refused_as_edited(&err, "turn"),
        "re-sealing in Concord does not make an edited turn pass (lead key: {lead_key}): {err}"
    );

    // An edited response is refused alike, naming its own table.
    assert_eq!(
        raw(&pristine)
            .execute(
                "UPDATE response SET text = 'Sleep never suffers.' WHERE turn = 3",
                []
            )
            .expect("edited"),
        1,
        "the earlier reply edited"
    );
    let err = merge_package(&mut t.store, &pristine, &pass()).expect_err("an edited reply");
    assert!(
        refused_as_edited(&err, "response"),
        "an edited reply carried as history is refused like an edited item (lead key: {lead_key}): {err}"
    );
    drop(t.store);
    assert_eq!(
        every_value(&rusqlite::Connection::open(&t.main).expect("study opens")),
        before,
        "refused merges leave every row of the study as it was"
    );
}

#[test]
fn values_rated_in_the_package_land_on_the_right_items_of_the_study() {
    let mut t = issued();
    let mut pkg =
        Store::open_with(&t.out, later_clock(), Some(&pass())).expect("the package opens");
    let ana = rater_id(&pkg, "Ana");
    queue::open_queue(&mut pkg, ana).expect("queue opens");
    let keys: Vec<String> = builtin::mentalbench()
        .criteria
        .iter()
        .map(|c| c.id.clone())
        .collect();
    // The reply at turn 5 revised, the candidate and the session item rated.
    for (item, value) in [(2, 4), (3, 5), (4, 2)] {
        for key in &keys {
            queue::rate(&mut pkg, ana, item, key, value).expect("rated in the package");
        }
    }
    assert_eq!(
        concord_core::guard::audit::verify(&pkg)
            .expect("verify")
            .broken,
        None,
        "the package's own audit chain holds the transcript and the ratings intact"
    );
    drop(pkg);

    let report = merge_package(&mut t.store, &t.out, &pass()).expect("merged");
    assert_eq!(
        (report.updated, report.inserted, report.conflicts.len()),
        (7, 14, 0),
        "the reply at turn 5 revised, the candidate and the session item new, no conflict"
    );
    let lead_ana = rater_id(&t.store, "Ana");
    let value = |response: i64, rubric: &str| {
        let criterion = t.store.criterion_id(rubric, &keys[0]).expect("criterion");
        t.store
            .rating_value(lead_ana, response, criterion)
            .expect("value")
            .and_then(|(v, _)| v)
    };
    let i = &t.items;
    assert_eq!(
        [
            value(i.turn3, "mentalbench"),
            value(i.turn5, "mentalbench"),
            value(i.turn7, "mentalbench"),
            value(i.candidate, "mentalbench"),
            value(i.other_candidate, "mentalbench"),
            value(i.session, SESSION_RUBRIC),
        ],
        [None, Some(4), None, Some(5), None, Some(2)],
        "each value lands on its own item: the reply at turn 5, not the same chatbot's replies at turns 3 and 7; the candidate given, not the other; the session item"
    );
    assert_eq!(
        t.store
            .rating_versions(
                lead_ana,
                i.turn5,
                t.store
                    .criterion_id("mentalbench", &keys[0])
                    .expect("criterion")
            )
            .expect("versions")
            .iter()
            .map(|v| v.value)
            .collect::<Vec<_>>(),
        vec![Some(4), Some(3)],
        "the revision made in the package lands on top of the value at issue"
    );
    let check = concord_core::guard::audit::verify_with(
        &t.store,
        &ChainTrust {
            local_key: None,
            expect_head: None,
            require_signed: true,
        },
    )
    .expect("verify");
    assert_eq!(
        check.broken, None,
        "the study's audit chain verifies after the merge, every entry signed by the lead key"
    );
    let again = merge_package(&mut t.store, &t.out, &pass()).expect("merged again");
    assert!(
        !again.changed(),
        "a second merge changes nothing: {again:?}"
    );
}

#[test]
fn a_conflict_on_a_reply_of_a_transcript_names_its_turn() {
    let mut t = issued();
    let mut pkg =
        Store::open_with(&t.out, later_clock(), Some(&pass())).expect("the package opens");
    let ana = rater_id(&pkg, "Ana");
    queue::open_queue(&mut pkg, ana).expect("queue opens");
    let first_key = builtin::mentalbench().criteria[0].id.clone();
    // Item 2 of Ana's queue is the chatbot's reply at turn 5 of t1 (its value at issue: 3).
    queue::rate(&mut pkg, ana, 2, &first_key, 4).expect("revised in the package");
    drop(pkg);
    // Meanwhile the lead corrects the same value in the study.
    let lead_ana = rater_id(&t.store, "Ana");
    let criterion = t
        .store
        .criterion_id("mentalbench", &first_key)
        .expect("criterion");
    let turn5 = t.items.turn5;
    t.store
        .write(|tx| {
            tx.set_rating(&RatingInput {
                rater_id: lead_ana,
                response_id: turn5,
                criterion_id: criterion,
                occasion: Occasion::First,
                value: Some(2),
                raw_value: None,
                rationale: None,
                origin: "screen",
            })
        })
        .expect("the study's value changed after the export");

    let report = merge_package(&mut t.store, &t.out, &pass()).expect("merged");
    let conflicts: Vec<_> = report
        .conflicts
        .iter()
        .map(|c| {
            (
                c.conversation.as_str(),
                c.turn,
                c.criterion.as_str(),
                c.study,
                c.package,
            )
        })
        .collect();
    assert_eq!(
        conflicts,
        vec![("t1", Some(5), first_key.as_str(), Some(2), Some(4))],
        "one source answers t1 at turns 3, 5 and 7: the conflict names turn 5 so the lead can find the reply"
    );
    assert_eq!(
        t.store
            .rating_value(lead_ana, turn5, criterion)
            .expect("value")
            .and_then(|(v, _)| v),
        Some(2),
        "the study keeps its own value on a conflict"
    );
}

#[test]
fn a_rating_of_an_earlier_reply_carried_as_history_is_refused_at_merge() {
    let mut t = issued();
    let mut pkg =
        Store::open_with(&t.out, later_clock(), Some(&pass())).expect("the package opens");
    let ana = rater_id(&pkg, "Ana");
    let earlier = count(&raw(&t.out), "SELECT id FROM response WHERE turn = 3");
    let criterion = criteria(&pkg)[0];
    pkg.write(|tx| {
        tx.set_rating(&RatingInput {
            rater_id: ana,
            response_id: earlier,
            criterion_id: criterion,
            occasion: Occasion::First,
            value: Some(5),
            raw_value: None,
            rationale: None,
            origin: "screen",
        })
    })
    .expect("a value slipped in through the store");
    drop(pkg);
    let err = merge_package(&mut t.store, &t.out, &pass()).expect_err("not Ana's item");
    assert!(
        matches!(
            &err,
            PackageError::InvalidValue {
                table: "rating",
                column: "response_id",
                ..
            }
        ),
        "a value of a reply Ana was not given, carried only as history, is refused: {err}"
    );
    let lead_ana = rater_id(&t.store, "Ana");
    assert_eq!(
        t.store
            .rating_value(lead_ana, t.items.turn3, criteria(&t.store)[0])
            .expect("value"),
        None,
        "nothing of it reaches the study"
    );
}

/// The issued digest of Ana's package from a fixed seeded single-turn study (six conversations,
/// two experts, the assignment and package seeds below), as Concord computed it before packages
/// carried transcripts: a study of an earlier release issues exactly what it did.
const SINGLE_TURN_PACKAGE_ID: &str = "90ebaac96e966ff0";
const SINGLE_TURN_ISSUE_DIGEST: &str =
    "5e950e7b61c3d52f9d76d25ad7fa515a96846fe364efdd428be2fde5fb449fc2";

#[test]
fn a_single_turn_package_issues_exactly_what_it_did_before_transcripts() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The study as that release made it: its rubric stored without span codes.
    let mut store = concord_testsupport::lead_study::earlier_file_study(
        &dir.path().join("main.concord"),
        6,
        &["Ana Lindqvist", "Boris Petrov"],
    );
    assignment::assign(&mut store, &AssignmentOptions::new(2, 11)).expect("assigned");
    let out = dir.path().join("ana.concord");
    let summary = package::export_package(&mut store, "Ana Lindqvist", &out, 5, &pass())
        .expect("package written");
    let record = store
        .package_seal_record(&summary.package_id)
        .expect("record reads")
        .expect("the package is recorded");
    assert_eq!(
        (summary.package_id.as_str(), record.issue.as_deref()),
        (SINGLE_TURN_PACKAGE_ID, Some(SINGLE_TURN_ISSUE_DIGEST)),
        "the same study issues the same package id and items digest as before transcripts"
    );
    assert_eq!(
        count(&raw(&out), "SELECT COUNT(*) FROM turn"),
        0,
        "a single-turn study's package carries no turns"
    );
}
