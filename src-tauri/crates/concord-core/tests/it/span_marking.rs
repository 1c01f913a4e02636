//! Evidence spans an expert marks while rating (`app::rating::{item_spans, mark_span,
//! change_span, remove_span}`): offsets in characters with Chinese and an emoji, a change of
//! code, severity and extent, a removal; every change durable when it returns, in the audit
//! trail and sealed (the chain verifies after each, and a span changed or deleted with another
//! tool is caught and named); the typed refusals (a session item, an item outside the queue,
//! bounds outside the text or empty, an unknown code or severity, a duplicate, a span that is not
//! the expert's), each storing nothing; and blinding (an expert sees only their own spans and no
//! source).

use concord_core::app::open_study::OpenStudy;
use concord_core::app::rating::{change_span, item_spans, mark_span, remove_span, SpanOrigin};
use concord_core::base::error_code::{Coded, ErrorCode};
use concord_core::store::Store;
use concord_core::workflow::queue::QueueError;
use concord_core::workflow::spans::{ShownSpan, SpanAt, SpanError};
use concord_testsupport::conversations::CHATBOT;
use concord_testsupport::lead_study::clock;
use concord_testsupport::span_study::{add_span_study, chars_at, SpanStudy, REPLY_EN, REPLY_ZH};
use std::path::PathBuf;

struct Marking {
    _dir: tempfile::TempDir,
    path: PathBuf,
    study: OpenStudy,
    ids: SpanStudy,
}

fn marking() -> Marking {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("study.concord");
    let mut store = Store::create(&path, clock()).expect("a study");
    let ids = add_span_study(&mut store);
    Marking {
        _dir: dir,
        path,
        study: OpenStudy::new(store),
        ids,
    }
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

/// The chain verifies: every change so far is sealed.
fn sealed(study: &OpenStudy, after: &str) {
    let check = study
        .store()
        .verify_audit_chain()
        .expect("the chain is read");
    assert!(
        check.broken.is_none(),
        "the chain holds after {after}: {:?}",
        check.broken
    );
}

/// The audit entries of `action`, their details.
fn entries(study: &OpenStudy, action: &str) -> Vec<serde_json::Value> {
    study
        .store()
        .audit_entries(None, None)
        .expect("the audit trail is read")
        .into_iter()
        .filter(|e| e.action == action)
        .map(|e| e.detail)
        .collect()
}

#[test]
fn an_expert_marks_changes_and_removes_spans_each_sealed() {
    let mut m = marking();
    let expert = m.ids.expert;
    let shown = item_spans(&m.study, expert, 2).expect("the Chinese reply's spans");
    assert!(
        shown.codes.iter().any(|c| c.key == "validating_statement"),
        "the rubric's codes come with the item: {:?}",
        shown.codes
    );
    assert!(shown.spans.is_empty(), "nothing is marked yet");

    // The Chinese reply: the emoji is one character.
    let sad = chars_at(REPLY_ZH, "听起来你很难受 😢");
    assert_eq!(sad, (0, 9), "seven Han characters, a space and the emoji");
    let line = chars_at(REPLY_ZH, "心理援助热线 12356");
    let after = mark_span(
        &mut m.study,
        SpanOrigin::Screen,
        expert,
        2,
        &span("validating_statement", sad, None),
    )
    .expect("a span is marked");
    assert_eq!(
        after.spans,
        [span("validating_statement", sad, None)],
        "the span as marked"
    );
    sealed(&m.study, "a span added");
    mark_span(
        &mut m.study,
        SpanOrigin::Screen,
        expert,
        2,
        &span("actionable_guidance", line, None),
    )
    .expect("a second span");
    let added = entries(&m.study, "span.add");
    assert_eq!(
        added.len(),
        2,
        "each span added is an audit entry: {added:?}"
    );
    assert_eq!(
        (added[0]["start"].as_i64(), added[0]["end"].as_i64()),
        (Some(0), Some(9)),
        "the entry names the characters: {:?}",
        added[0]
    );

    // Change the code, then the severity and the extent.
    let changed = change_span(
        &mut m.study,
        SpanOrigin::Screen,
        expert,
        2,
        &at("validating_statement", sad),
        &span("generic_reassurance", sad, None),
    )
    .expect("the code changes");
    assert!(
        changed
            .spans
            .contains(&span("generic_reassurance", sad, None)),
        "the span carries its new code: {:?}",
        changed.spans
    );
    sealed(&m.study, "a code changed");
    let shorter = (0, 7);
    change_span(
        &mut m.study,
        SpanOrigin::Screen,
        expert,
        2,
        &at("generic_reassurance", sad),
        &span("judgemental_phrasing", shorter, Some("MAJOR")),
    )
    .expect("code, extent and severity change together");
    let change = entries(&m.study, "span.change");
    assert_eq!(change.len(), 2, "each change is an entry: {change:?}");
    assert_eq!(
        change[1]["from"]["code"], "generic_reassurance",
        "the entry says what the span was: {:?}",
        change[1]
    );
    assert_eq!(
        change[1]["severity"], "major",
        "the severity in its declared spelling: {:?}",
        change[1]
    );
    sealed(&m.study, "an extent and severity changed");

    // Remove one; the removal is recorded with what was removed.
    let left = remove_span(
        &mut m.study,
        SpanOrigin::Screen,
        expert,
        2,
        &at("actionable_guidance", line),
    )
    .expect("a span is removed");
    assert_eq!(
        left.spans,
        [span("judgemental_phrasing", shorter, Some("major"))],
        "one span is left"
    );
    let removed = entries(&m.study, "span.remove");
    assert_eq!(
        (removed.len(), removed[0]["code"].as_str()),
        (1, Some("actionable_guidance")),
        "the removal names the span removed: {removed:?}"
    );
    sealed(&m.study, "a span removed");

    // Durable: the study reopened holds exactly that span, with the window's origin.
    let path = m.path.clone();
    drop(m.study);
    let store = Store::open(&path, clock()).expect("the study reopens");
    let stored = store.spans_of_response(m.ids.reply_zh).expect("spans");
    assert_eq!(stored.len(), 1, "one span stored: {stored:?}");
    assert_eq!(
        (
            stored[0].range,
            stored[0].origin.as_str(),
            stored[0].rater_id
        ),
        (Some(shorter), "screen", expert),
        "its offsets, origin and expert"
    );
}

#[test]
fn an_expert_sees_only_their_own_spans_and_no_source() {
    let mut m = marking();
    let cheer = chars_at(REPLY_EN, "You should just cheer up.");
    mark_span(
        &mut m.study,
        SpanOrigin::Web,
        m.ids.other,
        1,
        &span("generic_reassurance", cheer, None),
    )
    .expect("the other expert marks from a browser");
    let mine = item_spans(&m.study, m.ids.expert, 1).expect("the expert's view");
    assert!(
        mine.spans.is_empty(),
        "another expert's span is not shown: {:?}",
        mine.spans
    );
    mark_span(
        &mut m.study,
        SpanOrigin::Screen,
        m.ids.expert,
        1,
        &span("generic_reassurance", cheer, None),
    )
    .expect("the same span by this expert is their own, not a duplicate");
    let json = serde_json::to_string(&item_spans(&m.study, m.ids.expert, 1).expect("view"))
        .expect("serialises");
    for hidden in [CHATBOT.0, CHATBOT.1, "Dr Other", "web", "origin", "rater"] {
        assert!(
            !json.contains(hidden),
            "the screen's payload never names {hidden}: {json}"
        );
    }
    let theirs = item_spans(&m.study, m.ids.other, 1).expect("the other's view");
    assert_eq!(theirs.spans.len(), 1, "each expert sees their one span");
}

/// `result` is refused as `expected` says, with the code the window matches on, and the study
/// holds `spans` spans afterwards.
fn refused<T: std::fmt::Debug>(
    m: &Marking,
    result: Result<T, SpanError>,
    expected: impl Fn(&SpanError) -> bool,
    code: ErrorCode,
    why: &str,
) {
    let e = result.expect_err(why);
    assert!(expected(&e), "{why}: refused as {e:?}");
    assert_eq!(e.code(), code, "{why}: the window's code for {e}");
    let stored: usize = [m.ids.reply_en, m.ids.reply_zh]
        .iter()
        .map(|&r| m.study.store().spans_of_response(r).expect("spans").len())
        .sum();
    assert_eq!(stored, 1, "{why}: nothing more is stored");
}

#[test]
fn marks_the_screen_may_not_make_are_refused_with_their_reason() {
    let mut m = marking();
    let e = m.ids.expert;
    let zh_len = REPLY_ZH.chars().count() as i64;
    // The last character is markable (the end is the length, counted in characters).
    mark_span(
        &mut m.study,
        SpanOrigin::Screen,
        e,
        2,
        &span("validating_statement", (zh_len - 1, zh_len), None),
    )
    .expect("the reply's last character is inside it");
    let mut try_mark =
        |item: i64, s: ShownSpan| mark_span(&mut m.study, SpanOrigin::Screen, e, item, &s);
    let results = [
        try_mark(3, span("validating_statement", (0, 1), None)),
        try_mark(9, span("validating_statement", (0, 1), None)),
        try_mark(2, span("validating_statement", (4, 4), None)),
        try_mark(
            2,
            span("validating_statement", (zh_len - 1, zh_len + 1), None),
        ),
        try_mark(2, span("validating_statement", (-1, 2), None)),
        try_mark(2, span("not_a_code", (0, 2), None)),
        try_mark(2, span("validating_statement", (0, 2), Some("major"))),
        try_mark(2, span("factual_error", (0, 2), Some("catastrophic"))),
        try_mark(2, span("validating_statement", (zh_len - 1, zh_len), None)),
    ];
    let [session, outside_queue, empty, past_end, negative, unknown, no_levels, bad_level, twice] =
        results;
    refused(
        &m,
        session,
        |e| matches!(e, SpanError::SessionItem { item: 3 }),
        ErrorCode::Span,
        "a session item has no reply to mark",
    );
    refused(
        &m,
        outside_queue,
        |e| matches!(e, SpanError::Queue(QueueError::NoSuchItem { .. })),
        ErrorCode::NoSuchItem,
        "an item outside the expert's queue",
    );
    refused(
        &m,
        empty,
        |e| matches!(e, SpanError::EmptyRange { .. }),
        ErrorCode::Span,
        "a span must end after it starts",
    );
    refused(
        &m,
        past_end,
        |e| matches!(e, SpanError::OutsideText { length, .. } if *length == zh_len),
        ErrorCode::Span,
        "one character past the end, counted in characters",
    );
    refused(
        &m,
        negative,
        |e| matches!(e, SpanError::OutsideText { .. }),
        ErrorCode::Span,
        "a negative start",
    );
    refused(
        &m,
        unknown,
        |e| matches!(e, SpanError::UnknownCode(c) if c == "not_a_code"),
        ErrorCode::Span,
        "a code the rubric does not declare",
    );
    refused(
        &m,
        no_levels,
        |e| matches!(e, SpanError::NoSeverity(_)),
        ErrorCode::Span,
        "a severity on a code without levels",
    );
    refused(
        &m,
        bad_level,
        |e| matches!(e, SpanError::UnknownSeverity { .. }),
        ErrorCode::Span,
        "a level the code does not declare",
    );
    refused(
        &m,
        twice,
        |e| matches!(e, SpanError::AlreadyMarked { .. }),
        ErrorCode::Span,
        "the same span twice",
    );

    let last = (zh_len - 1, zh_len);
    let other = m.ids.other;
    let r = remove_span(
        &mut m.study,
        SpanOrigin::Screen,
        other,
        2,
        &at("validating_statement", last),
    );
    refused(
        &m,
        r,
        |e| matches!(e, SpanError::NoSuchSpan { .. }),
        ErrorCode::Span,
        "another expert's span cannot be removed",
    );
    let r = change_span(
        &mut m.study,
        SpanOrigin::Screen,
        e,
        2,
        &at("validating_statement", last),
        &span("bogus", last, None),
    );
    refused(
        &m,
        r,
        |e| matches!(e, SpanError::UnknownCode(_)),
        ErrorCode::Span,
        "a change to an unknown code",
    );
    let r = mark_span(
        &mut m.study,
        SpanOrigin::Screen,
        9_999,
        1,
        &span("validating_statement", (0, 1), None),
    );
    refused(
        &m,
        r,
        |e| matches!(e, SpanError::Queue(QueueError::NotAnExpert(_))),
        ErrorCode::NotAnExpert,
        "someone who is not an expert of the study marks nothing",
    );
    let session = item_spans(&m.study, e, 3).expect("a session item lists nothing to mark");
    assert!(
        session.codes.is_empty() && session.spans.is_empty(),
        "a session item offers no codes: {session:?}"
    );
}

#[test]
fn a_span_changed_or_removed_outside_concord_is_caught() {
    for edit in [
        "UPDATE span SET char_start = char_start + 1",
        "DELETE FROM span",
        "UPDATE span SET code = 'actionable_guidance'",
    ] {
        let mut m = marking();
        mark_span(
            &mut m.study,
            SpanOrigin::Screen,
            m.ids.expert,
            1,
            &span(
                "generic_reassurance",
                chars_at(REPLY_EN, "just cheer up"),
                None,
            ),
        )
        .expect("a span is marked");
        sealed(&m.study, "the mark");
        let path = m.path.clone();
        drop(m.study);
        let raw = rusqlite::Connection::open(&path).expect("another tool opens the file");
        raw.execute(edit, []).expect("an edit outside Concord");
        drop(raw);
        let store = Store::open(&path, clock()).expect("the study opens");
        let check = store.verify_audit_chain().expect("chain read");
        let broken = check
            .broken
            .unwrap_or_else(|| panic!("`{edit}` outside Concord breaks the seal"));
        assert_eq!(
            broken.table.as_deref(),
            Some("span"),
            "`{edit}`: the broken table is named: {broken:?}"
        );
    }
}
