//! Evidence spans in rater packages: a package carries the rubric's codes and the expert's own
//! spans on their items (no one else's); the expert marks, changes and removes spans in the
//! package as on the study's screen (Chinese and an emoji counted in characters); the merge
//! brings them back with origin `package`, three ways like ratings — an addition, a removal, a
//! span the study already holds (not stored twice), a span changed in both (a conflict the study
//! wins) —, a second merge changes nothing, and a span edited in the package outside Concord
//! and sealed again is refused at merge, naming table, row and column.

use concord_core::store::{Passphrase, SpanOrigin, SpanRecord, Store};
use concord_core::workflow::package::{self, merge_package, PackageError};
use concord_core::workflow::spans::{add_span, change_span, remove_span, ShownSpan, SpanAt};
use concord_testsupport::lead_study::clock;
use concord_testsupport::span_study::{
    add_span_study, chars_at, SpanStudy, EXPERT, REPLY_EN, REPLY_ZH,
};
use std::path::PathBuf;

/// A stored span: its reply, code, bounds and origin.
type StoredSpan = (i64, String, Option<(i64, i64)>, String);

const PACKAGE_PASS: &str = "read to Dr Span over the phone";

fn pass() -> Passphrase {
    Passphrase::new(PACKAGE_PASS).expect("a passphrase")
}

/// The expert's laptop clock, a minute after the package was written.
fn later_clock() -> std::sync::Arc<concord_core::base::clock::SteppingClock> {
    std::sync::Arc::new(concord_core::base::clock::SteppingClock::new(
        1_700_000_060_000,
        1,
    ))
}

fn span(code: &str, (start, end): (i64, i64), severity: Option<&str>) -> ShownSpan {
    ShownSpan {
        code: code.into(),
        start,
        end,
        severity: severity.map(str::to_string),
    }
}

fn at(code: &str, (start, end): (i64, i64)) -> SpanAt {
    SpanAt {
        code: code.into(),
        start,
        end,
    }
}

struct Issued {
    _dir: tempfile::TempDir,
    store: Store,
    ids: SpanStudy,
    out: PathBuf,
}

/// The passages marked, by name.
fn cheer() -> (i64, i64) {
    chars_at(REPLY_EN, "You should just cheer up.")
}
fn hear() -> (i64, i64) {
    chars_at(REPLY_EN, "I hear how tired you are.")
}
fn crisis() -> (i64, i64) {
    chars_at(REPLY_EN, "Please call a crisis line tonight")
}
fn sad() -> (i64, i64) {
    chars_at(REPLY_ZH, "听起来你很难受 😢")
}

/// The study with two spans of the expert and one of the other expert, and the expert's package.
fn issued() -> Issued {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = Store::create(&dir.path().join("study.concord"), clock()).expect("a study");
    let ids = add_span_study(&mut store);
    for s in [
        span("judgemental_phrasing", cheer(), Some("minor")),
        span("validating_statement", hear(), None),
    ] {
        add_span(&mut store, SpanOrigin::Screen, ids.expert, 1, &s).expect("marked in the study");
    }
    add_span(
        &mut store,
        SpanOrigin::Screen,
        ids.other,
        1,
        &span("actionable_guidance", crisis(), None),
    )
    .expect("the other expert's span");
    let out = dir.path().join("dr-span.concord");
    package::export_package(&mut store, EXPERT, &out, 7, &pass()).expect("package written");
    Issued {
        _dir: dir,
        store,
        ids,
        out,
    }
}

fn package_rater(pkg: &Store) -> i64 {
    pkg.rater_named(EXPERT)
        .expect("read")
        .expect("the expert is in the package")
        .id
}

fn expert_spans(store: &Store, rater: i64) -> Vec<SpanRecord> {
    store.spans_of_rater(rater).expect("spans")
}

#[test]
fn a_package_carries_the_codes_and_the_experts_own_spans() {
    let t = issued();
    let pkg = Store::open_with(&t.out, later_clock(), Some(&pass())).expect("the package opens");
    let rubrics = pkg.rubrics().expect("rubrics");
    let mentalbench = rubrics
        .iter()
        .find(|r| r.rubric.id == "mentalbench")
        .expect("the replies' rubric travels");
    assert!(
        mentalbench
            .rubric
            .codes
            .iter()
            .any(|c| c.key == "judgemental_phrasing" && c.severity == ["minor", "major"]),
        "the rubric's codes and their severity levels travel: {:?}",
        mentalbench.rubric.codes
    );
    let rater = package_rater(&pkg);
    let carried = expert_spans(&pkg, rater);
    assert_eq!(
        carried
            .iter()
            .map(|s| (s.code.as_str(), s.range))
            .collect::<Vec<_>>(),
        [
            ("validating_statement", Some(hear())),
            ("judgemental_phrasing", Some(cheer()))
        ],
        "the expert's two spans travel, in reading order"
    );
    let everyone = pkg.spans_listed().expect("all spans");
    assert_eq!(
        everyone.len(),
        2,
        "no other expert's span is in the package: {everyone:?}"
    );
}

#[test]
fn spans_marked_in_a_package_come_back_with_the_merge() {
    let mut t = issued();
    let mut pkg =
        Store::open_with(&t.out, later_clock(), Some(&pass())).expect("the package opens");
    let rater = package_rater(&pkg);
    // In the package: change a severity, remove one, add one in Chinese, add one the study will
    // also get from a browser.
    change_span(
        &mut pkg,
        SpanOrigin::Screen,
        rater,
        1,
        &at("judgemental_phrasing", cheer()),
        &span("judgemental_phrasing", cheer(), Some("major")),
    )
    .expect("a severity changed in the package");
    remove_span(
        &mut pkg,
        SpanOrigin::Screen,
        rater,
        1,
        &at("validating_statement", hear()),
    )
    .expect("removed in the package");
    add_span(
        &mut pkg,
        SpanOrigin::Screen,
        rater,
        2,
        &span("validating_statement", sad(), None),
    )
    .expect("marked in Chinese in the package");
    add_span(
        &mut pkg,
        SpanOrigin::Screen,
        rater,
        1,
        &span("actionable_guidance", crisis(), None),
    )
    .expect("marked in the package");
    drop(pkg);

    // Meanwhile in the study: the same span from a browser, and the span whose severity the
    // package changed removed.
    let expert = t.ids.expert;
    add_span(
        &mut t.store,
        SpanOrigin::Web,
        expert,
        1,
        &span("actionable_guidance", crisis(), None),
    )
    .expect("the same span marked in the study");
    remove_span(
        &mut t.store,
        SpanOrigin::Web,
        expert,
        1,
        &at("judgemental_phrasing", cheer()),
    )
    .expect("removed in the study");

    let report = merge_package(&mut t.store, &t.out, &pass()).expect("merged");
    let s = &report.spans;
    assert_eq!(
        (s.added, s.changed, s.removed, s.already_present),
        (1, 0, 1, 1),
        "the Chinese span added, the removal merged, the browser's span not stored twice: {s:?}"
    );
    assert_eq!(s.conflicts.len(), 1, "one conflict: {:?}", s.conflicts);
    let c = &s.conflicts[0];
    assert_eq!(
        (
            c.code.as_str(),
            c.in_base,
            c.in_study,
            c.in_package,
            c.package_severity.as_deref()
        ),
        ("judgemental_phrasing", true, false, true, Some("major")),
        "changed in the package, removed in the study: reported, the study keeps its state"
    );
    let now: Vec<StoredSpan> = expert_spans(&t.store, expert)
        .into_iter()
        .map(|s| (s.response_id, s.code, s.range, s.origin))
        .collect();
    assert_eq!(
        now,
        [
            (
                t.ids.reply_en,
                "actionable_guidance".to_string(),
                Some(crisis()),
                "web".to_string()
            ),
            (
                t.ids.reply_zh,
                "validating_statement".to_string(),
                Some((0, 9)),
                "package".to_string()
            ),
        ],
        "the study holds the expert's spans as merged, the Chinese one at characters 0–9 from the package"
    );
    assert!(
        expert_spans(&t.store, t.ids.other).len() == 1,
        "the other expert's span is untouched"
    );
    let check = t.store.verify_audit_chain().expect("chain read");
    assert!(
        check.broken.is_none(),
        "the merge is sealed: {:?}",
        check.broken
    );

    let again = merge_package(&mut t.store, &t.out, &pass()).expect("merged again");
    assert_eq!(
        (again.spans.added, again.spans.changed, again.spans.removed),
        (0, 0, 0),
        "a second merge of the same return writes no span: {:?}",
        again.spans
    );
    assert_eq!(
        expert_spans(&t.store, expert).len(),
        2,
        "still the same two spans"
    );
}

#[test]
fn a_span_edited_in_a_package_outside_concord_is_refused_at_merge() {
    let mut t = issued();
    let conn = rusqlite::Connection::open(&t.out).expect("opens");
    conn.pragma_update(None, "key", PACKAGE_PASS)
        .expect("keyed");
    conn.execute(
        "UPDATE span SET char_end = 9999 WHERE code = 'validating_statement'",
        [],
    )
    .expect("an edit with the passphrase, below Concord");
    drop(conn);
    // Re-sealed by a write through Concord: the seal no longer catches it, the check of every
    // value does.
    let mut pkg =
        Store::open_with(&t.out, later_clock(), Some(&pass())).expect("the package opens");
    let rater = package_rater(&pkg);
    add_span(
        &mut pkg,
        SpanOrigin::Screen,
        rater,
        2,
        &span("validating_statement", sad(), None),
    )
    .expect("a save in the package renews the seal");
    drop(pkg);
    let before = expert_spans(&t.store, t.ids.expert);
    let err = merge_package(&mut t.store, &t.out, &pass()).expect_err("a span off the reply");
    assert!(
        matches!(
            &err,
            PackageError::InvalidValue {
                table: "span",
                column: "char_end",
                ..
            }
        ),
        "refused naming the span table and column: {err}"
    );
    assert_eq!(
        expert_spans(&t.store, t.ids.expert),
        before,
        "nothing was merged"
    );
}
