//! The agreement panel's span section, as the window reads it: a rubric without codes says so; a
//! rubric with codes but no spans has no report (the window then says how to get spans); with
//! experts' spans and a judge's (one quote unlocated) the report is the one `agreement --spans`
//! computes with the same seed and resamples, the unlocated quote is listed with its reply and
//! judge, the replies that carry spans are listed in conversation order, and one reply's view
//! stacks each rater's spans on a row (experts first, then the judge), each row's stretches
//! being the whole reply in characters and each span's text the characters it covers.

use concord_core::intake::conversations::import_file;
use concord_core::intake::spans::import_spans;
use concord_core::intake::ImportOptions;
use concord_core::panel::span_agreement::{span_agreement, SpanAgreementOptions};
use concord_core::panel::span_view::{span_panel, span_reply};
use concord_core::store::{NewRater, NewSpan, RaterKind, SpanOrigin, Store};
use concord_testsupport::lead_study::clock;

const REPLY_ZH: &str = "听起来你很难受 😢。你可以拨打心理援助热线 12356。";
const REPLY_EN: &str = "Everything will be fine.  You should just   cheer up.";
const OPTIONS: SpanAgreementOptions = SpanAgreementOptions {
    resamples: 200,
    seed: 42,
};

fn at(text: &str, quote: &str) -> (usize, usize) {
    let byte = text.find(quote).expect("the quote is in the text");
    let start = text[..byte].chars().count();
    (start, start + quote.chars().count())
}

fn row(conversation: &str, rater: &str, code: &str, text: &str, quote: &str) -> String {
    let (s, e) = at(text, quote);
    format!("{conversation},2,bot,{rater},{code},{s},{e}\n")
}

#[test]
fn the_span_section_gives_the_report_the_unlocated_quotes_and_each_raters_row() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = Store::create(&dir.path().join("s.concord"), clock()).expect("a study");
    let lines = [
        serde_json::json!({"conversation_id": "c1", "messages": [
            {"role": "user", "content": "我最近很难过"},
            {"role": "assistant", "source": "bot", "content": REPLY_ZH}]}),
        serde_json::json!({"conversation_id": "c2", "messages": [
            {"role": "user", "content": "I feel awful"},
            {"role": "assistant", "source": "bot", "content": REPLY_EN}]}),
    ];
    let path = dir.path().join("c.jsonl");
    std::fs::write(
        &path,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .expect("written");
    import_file(&mut store, &path, "mentalbench", &ImportOptions::default()).expect("imported");

    let empty = span_panel(&store, "mentalbench", OPTIONS).expect("the section reads");
    assert!(
        empty.has_codes && empty.report.is_none() && empty.replies.is_empty(),
        "codes but no spans: no report, nothing to step through"
    );
    assert_eq!(
        empty.codes.len(),
        concord_core::rubric::builtin::mentalbench().codes.len(),
        "the codes come with their labels for the window"
    );

    let csv = format!(
        "conversation_id,turn,source,rater,code,start,end\n{}{}{}{}",
        row(
            "c1",
            "ann",
            "validating_statement",
            REPLY_ZH,
            "听起来你很难受 😢"
        ),
        row("c1", "bob", "validating_statement", REPLY_ZH, "你很难受"),
        row(
            "c1",
            "ann",
            "actionable_guidance",
            REPLY_ZH,
            "拨打心理援助热线 12356"
        ),
        row(
            "c2",
            "bob",
            "judgemental_phrasing",
            REPLY_EN,
            "You should just   cheer up."
        ),
    );
    let file = dir.path().join("spans.csv");
    std::fs::write(&file, csv).expect("written");
    import_spans(&mut store, &file, RaterKind::Expert, 7, "lead").expect("spans imported");
    let c1 = store.text_items(1).expect("items")[0].response_id;
    store
        .write(|tx| {
            let judge = tx.upsert_rater(&NewRater {
                kind: RaterKind::Judge,
                name: "judge-x",
                model_id: Some("judge-x"),
                family: None,
                queue_seed: 1,
            })?;
            let (s, e) = at(REPLY_ZH, "拨打心理援助热线");
            for (range, quote) in [
                (Some((s as i64, e as i64)), "拨打心理援助热线"),
                (None, "words the reply never said"),
            ] {
                tx.add_span(&NewSpan {
                    response_id: c1,
                    rater_id: judge,
                    code: "actionable_guidance".into(),
                    range,
                    severity: None,
                    quote: Some(quote.into()),
                    origin: SpanOrigin::Judge,
                    call_id: None,
                })?;
            }
            Ok::<_, concord_core::store::StoreError>(())
        })
        .expect("the judge's spans");

    let panel = span_panel(&store, "mentalbench", OPTIONS).expect("the section reads");
    let report = panel.report.expect("located spans give a report");
    assert_eq!(
        report,
        span_agreement(&store, Some("mentalbench"), OPTIONS).expect("the report"),
        "the panel's figures are `agreement --spans`'s with the same seed and resamples"
    );
    assert_eq!(
        panel.unlocated.len(),
        1,
        "the judge's unfound quote is listed"
    );
    let q = &panel.unlocated[0];
    assert_eq!(
        (
            q.conversation_id.as_str(),
            q.turn,
            q.rater.as_str(),
            q.quote.as_str()
        ),
        ("c1", 2, "judge-x", "words the reply never said"),
        "with its reply, its judge and its words as written"
    );
    let order: Vec<(&str, usize, usize, usize)> = panel
        .replies
        .iter()
        .map(|r| (r.conversation_id.as_str(), r.located, r.unlocated, r.raters))
        .collect();
    assert_eq!(
        order,
        [("c1", 4, 1, 3), ("c2", 1, 0, 1)],
        "the replies with spans, in conversation order, with their counts"
    );

    let view = span_reply(&store, c1).expect("the reply's view");
    assert_eq!(view.text, REPLY_ZH, "the reply's text as stored");
    let raters: Vec<(&str, &str)> = view
        .raters
        .iter()
        .map(|r| (r.rater.as_str(), r.kind.as_str()))
        .collect();
    assert_eq!(
        raters,
        [("ann", "expert"), ("bob", "expert"), ("judge-x", "judge")],
        "one row per rater: experts first, then judges, each by name"
    );
    for track in &view.raters {
        let whole: String = track.segments.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(whole, REPLY_ZH, "{}'s row is the whole reply", track.rater);
        for (i, span) in track.spans.iter().enumerate() {
            let covered: String = track
                .segments
                .iter()
                .filter(|s| s.spans.contains(&i))
                .map(|s| s.text.as_str())
                .collect();
            assert_eq!(
                covered, span.text,
                "{}'s span {i} covers exactly its characters",
                track.rater
            );
        }
    }
    let ann: Vec<&str> = view.raters[0]
        .spans
        .iter()
        .map(|s| s.text.as_str())
        .collect();
    assert_eq!(
        ann,
        ["听起来你很难受 😢", "拨打心理援助热线 12356"],
        "the expert's spans in order, the emoji one character"
    );
    assert_eq!(
        view.raters[2].unlocated.len(),
        1,
        "the judge's row carries its unfound quote"
    );

    let err =
        span_panel(&store, "no-such-rubric", OPTIONS).expect_err("an unknown rubric is refused");
    assert!(
        err.to_string().contains("no-such-rubric"),
        "the refusal names the rubric: {err}"
    );
}
