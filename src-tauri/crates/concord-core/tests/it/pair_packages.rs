//! Pairs in rater packages: a lead draws every pair of four conversations' four answers, gives
//! them to two experts with the side each sees first recorded, and writes Ana's package; Ana
//! compares pairs in the package (choices, a rationale, a flag, time on task) as the window
//! would; the merge brings her verdicts back in the lead study's own left/right terms, once,
//! reports a verdict changed on both sides as a conflict, and refuses forged returns naming the
//! table and column.

use concord_core::base::clock::{Millis, SteppingClock};
use concord_core::store::{Passphrase, Store};
use concord_core::workflow::package::{self, merge_package, MergeReport, PackageError};
use concord_core::workflow::pairs::{self, DesignMethod, ShownChoice};
use concord_testsupport::judge_server::{add_experts, pair_study};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const PACKAGE_PASS: &str = "correct horse battery staple 41";
const ISSUE: Millis = 1_700_000_000_000;
const MINUTE: Millis = 60_000;
/// The shipped pairwise MentalBench rubric: seven attributes and an overall preference.
const CRITERIA: usize = 8;

fn pass() -> Passphrase {
    Passphrase::new(PACKAGE_PASS).expect("passphrase")
}

fn clock_at(ms: Millis) -> Arc<SteppingClock> {
    Arc::new(SteppingClock::new(ms, 1))
}

fn rater(store: &Store, name: &str) -> i64 {
    store.rater_named(name).unwrap().expect("rater").id
}

/// The lead's study: 4 conversations × 4 answers, every pair (24), each to both experts; Ana
/// chose "equal" overall on her first pair before the package was written.
fn issued(dir: &Path) -> (PathBuf, PathBuf) {
    let main = dir.join("main.concord");
    let mut store = pair_study(&main, 4, 4);
    add_experts(&mut store, &["Ana", "Boris"]);
    pairs::design(&mut store, None, None, DesignMethod::All, 3).expect("designed");
    pairs::assign(&mut store, None, 2, 5).expect("assigned");
    let ana = rater(&store, "Ana");
    pairs::rate_pair_item(&mut store, ana, 1, "overall", Some(ShownChoice::Tie))
        .expect("rated before issue");
    let pkg = dir.join("ana-package.concord");
    let summary = package::export_package(&mut store, "Ana", &pkg, 7, &pass()).expect("exported");
    assert_eq!(summary.pairs, 24, "Ana's package carries her 24 pairs");
    assert_eq!(
        summary.pair_verdicts, 1,
        "and the one verdict she made before issue"
    );
    (main, pkg)
}

/// Ana in the package, `minutes` after issue: every question of pairs 1–3 answered A (the
/// answer she sees first), a rationale on pair 2, a flag on pair 3, time on pair 1.
fn compare_at_home(pkg: &Path, minutes: Millis) {
    let clock = clock_at(ISSUE + minutes * MINUTE);
    let mut p = Store::open_with(pkg, clock.clone(), Some(&pass())).expect("opens");
    let ana = rater(&p, "Ana");
    let queue = pairs::open_pair_queue(&mut p, ana).expect("the package's pair queue");
    assert_eq!(
        (queue.total, queue.resume_item),
        (24, 1),
        "the package opens on Ana's first unfinished pair of 24"
    );
    let item = pairs::pair_item(&p, ana, 1).expect("pair 1");
    assert_eq!(
        item.criteria
            .iter()
            .find(|c| c.key == "overall")
            .and_then(|c| c.choice),
        Some(ShownChoice::Tie),
        "the verdict made before issue travels in the package, in the terms Ana saw"
    );
    for n in 1..=3 {
        for c in &item.criteria {
            pairs::rate_pair_item(&mut p, ana, n, &c.key, Some(ShownChoice::A)).expect("chosen");
        }
    }
    pairs::set_pair_rationale(&mut p, ana, 2, "A names the feeling and offers a step")
        .expect("rationale");
    pairs::flag_pair(&mut p, ana, 3, "both answers miss the risk").expect("flagged");
    // 42 s pass on pair 1 before Ana leaves it (time on task is never more than passed).
    clock.advance(42_000);
    pairs::leave_pair(&mut p, ana, 1, 42.0).expect("time on task");
    let after = pairs::pair_queue(&p, ana).expect("queue");
    assert_eq!(
        (after.completed, after.resume_item),
        (3, 4),
        "three pairs done; the package resumes at the fourth"
    );
}

fn merge_at(main: &Path, pkg: &Path, minutes: Millis) -> Result<MergeReport, PackageError> {
    let mut store = Store::open(main, clock_at(ISSUE + minutes * MINUTE)).expect("study opens");
    merge_package(&mut store, pkg, &pass())
}

#[test]
fn pairs_compared_in_a_package_merge_back_in_the_studys_terms_once() {
    let dir = tempfile::tempdir().unwrap();
    let (main, pkg) = issued(dir.path());
    {
        let conn = rusqlite::Connection::open(&pkg).unwrap();
        conn.pragma_update(None, "key", PACKAGE_PASS).unwrap();
        let names: Vec<String> = conn
            .prepare("SELECT key || name FROM source")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            names
                .iter()
                .all(|n| n.starts_with('S') && !n.contains("Source")),
            "the package's pairs are blind: only opaque source codes ({names:?})"
        );
        let pairs_held: i64 = conn
            .query_row("SELECT COUNT(*) FROM pair", [], |r| r.get(0))
            .unwrap();
        assert_eq!(pairs_held, 24, "the package holds Ana's pairs and no other");
    }
    compare_at_home(&pkg, 10);
    let report = merge_at(&main, &pkg, 60).expect("merged");
    assert_eq!(
        (report.pairs_inserted, report.pairs_updated),
        (3 * CRITERIA - 1, 1),
        "23 new verdicts and the overall one changed from equal to A"
    );
    assert!(
        report.pair_conflicts.is_empty(),
        "nothing changed in the study meanwhile"
    );
    assert_eq!(report.pair_flags_added, 1, "Ana's flag comes back");
    assert!(
        report.pair_progress_updated >= 3,
        "the finished pairs' progress comes back"
    );

    let store = Store::open(&main, clock_at(ISSUE + 61 * MINUTE)).unwrap();
    let ana = rater(&store, "Ana");
    let rubric = pairs::designed_rubric(&store, None).unwrap().id;
    let mine = store.read().pair_assignments_of(rubric, ana).unwrap();
    for a in &mine[..3] {
        let verdicts = store.read().pair_verdicts_on(ana, a.pair_id).unwrap();
        assert_eq!(
            verdicts.len(),
            CRITERIA,
            "every question of the pair came back"
        );
        assert!(
            verdicts
                .iter()
                .all(|v| v.winner == ShownChoice::A.winner(a.left_first)
                    && v.left_first == a.left_first),
            "A — the answer Ana saw first — is the study's left or right answer as her recorded side says"
        );
    }
    let second = store.read().pair_verdicts_on(ana, mine[1].pair_id).unwrap();
    assert!(
        second
            .iter()
            .all(|v| v.rationale.as_deref() == Some("A names the feeling and offers a step")),
        "the rationale written on pair 2 is on each of its verdicts"
    );
    let flags = store.read().pair_flags_of_rater(ana).unwrap();
    assert_eq!(
        flags
            .iter()
            .map(|f| (f.pair_id, f.reason.as_str()))
            .collect::<Vec<_>>(),
        vec![(mine[2].pair_id, "both answers miss the risk")],
        "the flag is on the study's pair 3"
    );
    let work = store
        .read()
        .pair_work(ana, mine[0].pair_id)
        .unwrap()
        .unwrap();
    assert!(
        (work.seconds_spent - 42.0).abs() < 1e-9,
        "time on the first pair came back: {}",
        work.seconds_spent
    );
    drop(store);

    let again = merge_at(&main, &pkg, 62).expect("merged again");
    assert!(
        !again.changed(),
        "merging the same return twice changes nothing: {again:?}"
    );
}

#[test]
fn a_pair_verdict_changed_on_both_sides_is_a_conflict_and_the_study_keeps_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let (main, pkg) = issued(dir.path());
    compare_at_home(&pkg, 10);
    {
        let mut store = Store::open(&main, clock_at(ISSUE + 30 * MINUTE)).unwrap();
        let ana = rater(&store, "Ana");
        pairs::rate_pair_item(&mut store, ana, 1, "overall", Some(ShownChoice::B))
            .expect("changed in the study meanwhile");
    }
    let report = merge_at(&main, &pkg, 60).expect("merge runs");
    assert_eq!(
        report.pair_conflicts.len(),
        1,
        "the overall verdict on pair 1 changed on both sides: {:?}",
        report.pair_conflicts
    );
    let c = &report.pair_conflicts[0];
    assert_eq!(c.criterion, "overall", "the conflict names its question");
    assert_eq!(
        c.base,
        Some(concord_core::store::Winner::Tie),
        "the base is the verdict at issue"
    );
    assert_ne!(c.study, c.package, "the two sides differ");
    let store = Store::open(&main, clock_at(ISSUE + 61 * MINUTE)).unwrap();
    let ana = rater(&store, "Ana");
    let item = pairs::pair_item(&store, ana, 1).unwrap();
    assert_eq!(
        item.criteria
            .iter()
            .find(|c| c.key == "overall")
            .and_then(|c| c.choice),
        Some(ShownChoice::B),
        "the study keeps its own verdict"
    );
}

/// Ana's worked package forged with `sql` below Concord and re-sealed by a write through it:
/// the merge refuses it, naming `table` and `column`, and the study is unchanged.
fn refused(sql: &str, table: &str, column: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (main, pkg) = issued(dir.path());
    compare_at_home(&pkg, 10);
    let conn = rusqlite::Connection::open(&pkg).unwrap();
    conn.pragma_update(None, "key", PACKAGE_PASS).unwrap();
    let before = conn.total_changes();
    conn.execute_batch(sql).expect("the forgery is written");
    assert!(conn.total_changes() > before, "the forgery changed rows");
    drop(conn);
    let mut p = Store::open_with(&pkg, clock_at(ISSUE + 20 * MINUTE), Some(&pass())).unwrap();
    p.write(|tx| tx.set_meta("forged", "re-sealed"))
        .expect("re-sealed through Concord");
    drop(p);
    let count = |path: &Path| -> i64 {
        rusqlite::Connection::open(path)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM pair_judgement", [], |r| r.get(0))
            .unwrap()
    };
    let held = count(&main);
    let err = merge_at(&main, &pkg, 60).expect_err("a forged return is refused");
    let text = err.to_string();
    assert!(
        matches!(&err, PackageError::InvalidValue { table: t, column: c, .. } if *t == table && *c == column),
        "the refusal names table {table} and column {column}: {text}"
    );
    assert!(
        text.contains("ana-package.concord") && text.contains("nothing was merged"),
        "the refusal names the file and says nothing was merged: {text}"
    );
    assert_eq!(
        count(&main),
        held,
        "no verdict of the forged return reached the study"
    );
}

#[test]
fn a_verdict_claiming_the_other_presentation_order_is_refused() {
    refused(
        "UPDATE pair_judgement SET left_first = 1 - left_first
         WHERE id = (SELECT MIN(id) FROM pair_judgement)",
        "pair_judgement",
        "left_first",
    );
}

#[test]
fn time_on_a_pair_past_its_bound_is_refused() {
    refused(
        "UPDATE pair_assignment SET seconds_spent = 1e9 WHERE position = 0",
        "pair_assignment",
        "seconds_spent",
    );
}

#[test]
fn a_pair_flag_dated_before_the_package_was_issued_is_refused() {
    refused(
        "INSERT INTO pair_flag(rater_id, pair_id, reason, created_at)
         SELECT rater_id, pair_id, 'backdated', 1000 FROM pair_assignment WHERE position = 5",
        "pair_flag",
        "created_at",
    );
}

#[test]
fn an_expert_with_only_pairs_gets_a_package() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = pair_study(&dir.path().join("only-pairs.concord"), 2, 3);
    add_experts(&mut store, &["Chen"]);
    pairs::design(&mut store, None, None, DesignMethod::All, 3).expect("designed");
    pairs::assign(&mut store, None, 1, 5).expect("assigned");
    let chen_pkg = dir.path().join("chen.concord");
    let summary = package::export_package(&mut store, "Chen", &chen_pkg, 1, &pass())
        .expect("an expert given only pairs still gets a package");
    assert_eq!(
        (summary.assignments, summary.pairs),
        (0, 6),
        "no single answers to rate, six pairs to compare"
    );
    // The window opens the single-answer queue beside the pairs: in a package of pairs only it
    // stays empty (it is not the unassigned demo study, where a rater gets every answer), so
    // the return merges.
    {
        let mut p = Store::open_with(&chen_pkg, clock_at(ISSUE + 10 * MINUTE), Some(&pass()))
            .expect("the package opens");
        let chen = rater(&p, "Chen");
        let single = concord_core::workflow::queue::open_queue(&mut p, chen).expect("queue");
        assert_eq!(
            single.total, 0,
            "an expert given only pairs has no single answers to rate"
        );
        pairs::rate_pair_item(&mut p, chen, 1, "overall", Some(ShownChoice::B)).expect("chosen");
    }
    drop(store);
    let report = merge_at(&dir.path().join("only-pairs.concord"), &chen_pkg, 60)
        .expect("the pairs-only return merges");
    assert_eq!(report.pairs_inserted, 1, "the one choice comes back");
}

#[test]
fn a_rating_sheet_carries_the_experts_pairs_and_reads_their_choices_back() {
    use calamine::Data;
    use concord_core::outputs::export::{import_rating_sheet, write_rating_sheet};
    let dir = tempfile::tempdir().unwrap();
    let (main, _) = issued(dir.path());
    let mut store = Store::open(&main, clock_at(ISSUE + 5 * MINUTE)).unwrap();
    let blank = dir.path().join("ana-pairs.xlsx");
    let summary = write_rating_sheet(&store, "Ana", &blank).expect("sheet written");
    assert!(
        summary.sheets.iter().any(|s| s == "mentalbench-pairs"),
        "the expert's pairs get a sheet of their own: {:?}",
        summary.sheets
    );
    assert_eq!(summary.rows, 24, "one row per pair");
    let text = {
        use calamine::Reader;
        let mut wb: calamine::Xlsx<_> = calamine::open_workbook(&blank).unwrap();
        let range = wb.worksheet_range("mentalbench-pairs").unwrap();
        assert_eq!(
            range.get((1, 5 + 7)),
            Some(&Data::String("tie".into())),
            "the choice made before the sheet was written is pre-filled in the terms Ana saw"
        );
        range
            .rows()
            .flat_map(|r| r.iter().map(|c| c.to_string()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        !text.contains("Source ") && !text.contains("s0|") && text.contains("item #"),
        "the pair sheet shows both answers and never their sources"
    );

    // Ana answers B on every question of the first two pairs; a third row says "maybe".
    let filled = dir.path().join("ana-pairs-filled.xlsx");
    super::lead_export::filled_copy(&blank, &filled, |sheet, r, c, _| {
        (sheet == "mentalbench-pairs" && (1..=2).contains(&r) && (5..13).contains(&c))
            .then(|| Data::String("b".into()))
    });
    let report = import_rating_sheet(&mut store, &filled).expect("imported");
    assert_eq!(
        (report.pairs_inserted, report.pairs_updated),
        (2 * CRITERIA - 1, 1),
        "15 new choices and the overall one changed from tie to B"
    );
    let ana = rater(&store, "Ana");
    let rubric = pairs::designed_rubric(&store, None).unwrap().id;
    let mine = store.read().pair_assignments_of(rubric, ana).unwrap();
    let verdicts = store.read().pair_verdicts_on(ana, mine[1].pair_id).unwrap();
    assert!(
        verdicts.len() == CRITERIA
            && verdicts
                .iter()
                .all(|v| v.winner == ShownChoice::B.winner(mine[1].left_first)),
        "B — the answer Ana saw second — is stored in the pair's own terms"
    );
    assert_eq!(
        pairs::pair_queue(&store, ana).unwrap().completed,
        2,
        "the two pairs answered in the sheet are finished"
    );

    let bad = dir.path().join("ana-pairs-bad.xlsx");
    super::lead_export::filled_copy(&blank, &bad, |sheet, r, c, _| {
        (sheet == "mentalbench-pairs" && r == 3 && c == 5).then(|| Data::String("maybe".into()))
    });
    let err = import_rating_sheet(&mut store, &bad).expect_err("a cell that is not A, B or tie");
    let text = err.to_string();
    assert!(
        text.contains("row 4") && text.contains("maybe") && text.contains("nothing was imported"),
        "the refusal names the row and value, and nothing is imported: {text}"
    );
}
