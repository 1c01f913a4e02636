//! `concord import spans FILE`, `concord export spans --out FILE.csv` and `concord agreement
//! --spans [--rubric KEY] --json` as the contract states them: a refused file exits non-zero with
//! its file, row and column named and the study unchanged; the export re-imports into another
//! study of the same conversations to the same offsets (Chinese and an emoji included); the
//! agreement document has the contract's keys, per code and overall, with a judge against each
//! expert beside the expert–expert range.

use crate::{concord, ok, write};
use std::path::Path;

const REPLY_ZH: &str = "听起来你很难受 😢。你可以拨打心理援助热线 12356。你有没有想过伤害自己？";
const REPLY_EN: &str =
    "Everything will be fine.  You should just   cheer up. Try a walk outside today.";

/// A study of two conversations, one reply each.
fn study(dir: &Path, name: &str) -> std::path::PathBuf {
    let db = dir.join(name);
    let lines = [
        serde_json::json!({"conversation_id": "c1", "messages": [
            {"role": "user", "content": "我最近很难过"},
            {"role": "assistant", "source": "bot", "content": REPLY_ZH}]}),
        serde_json::json!({"conversation_id": "c2", "messages": [
            {"role": "user", "content": "I feel awful"},
            {"role": "assistant", "source": "bot", "content": REPLY_EN}]}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let file = write(dir, &format!("{name}.jsonl"), &text);
    ok(
        &concord(&db, &["import", "conversations", &file]),
        "importing the conversations",
    );
    db
}

fn row(conversation: &str, rater: &str, code: &str, text: &str, quote: &str) -> String {
    let byte = text.find(quote).expect("the quote is in the text");
    let start = text[..byte].chars().count();
    let end = start + quote.chars().count();
    format!("{conversation},2,bot,{rater},{code},{start},{end}")
}

const HEADER: &str = "conversation_id,turn,source,rater,code,start,end\n";

fn experts_file() -> String {
    let rows = [
        row(
            "c1",
            "ann",
            "validating_statement",
            REPLY_ZH,
            "听起来你很难受",
        ),
        row(
            "c1",
            "ann",
            "actionable_guidance",
            REPLY_ZH,
            "拨打心理援助热线 12356",
        ),
        row(
            "c2",
            "ann",
            "actionable_guidance",
            REPLY_EN,
            "Try a walk outside today.",
        ),
        row(
            "c1",
            "bob",
            "validating_statement",
            REPLY_ZH,
            "听起来你很难受 😢",
        ),
        row(
            "c1",
            "bob",
            "actionable_guidance",
            REPLY_ZH,
            "拨打心理援助热线 12356",
        ),
        row(
            "c2",
            "bob",
            "judgemental_phrasing",
            REPLY_EN,
            "You should just   cheer up.",
        ),
        row(
            "c2",
            "bob",
            "actionable_guidance",
            REPLY_EN,
            "Try a walk outside",
        ),
    ];
    format!("{HEADER}{}\n", rows.join("\n"))
}

fn judge_file() -> String {
    let rows = [
        row(
            "c1",
            "judge-x",
            "actionable_guidance",
            REPLY_ZH,
            "拨打心理援助热线 12356",
        ),
        row(
            "c2",
            "judge-x",
            "actionable_guidance",
            REPLY_EN,
            "Try a walk outside today.",
        ),
        row(
            "c2",
            "judge-x",
            "generic_reassurance",
            REPLY_EN,
            "Everything will be fine.",
        ),
    ];
    format!("{HEADER}{}\n", rows.join("\n"))
}

#[test]
fn a_bad_span_file_is_refused_naming_file_row_and_column() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let db = study(dir.path(), "s.concord");
    let before = std::fs::read(&db).expect("the study file");
    let good = row(
        "c1",
        "ann",
        "validating_statement",
        REPLY_ZH,
        "听起来你很难受",
    );
    let bad = write(
        dir.path(),
        "bad.csv",
        &format!("{HEADER}{good}\nc1,2,bot,ann,validating_statement,9,4\n"),
    );
    let out = concord(&db, &["import", "spans", &bad]);
    assert!(
        !out.status.success(),
        "a span ending before it starts is refused"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.csv, row 3, column “end”") && err.contains("nothing was imported"),
        "the refusal names the file, row and column: {err}"
    );
    assert_eq!(
        std::fs::read(&db).expect("the study file"),
        before,
        "the study is unchanged"
    );
}

#[test]
fn spans_round_trip_through_the_export_to_the_same_offsets() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let db = study(dir.path(), "first.concord");
    let file = write(dir.path(), "experts.csv", &experts_file());
    let printed = ok(
        &concord(&db, &["import", "spans", &file, "--json"]),
        "import spans",
    );
    let report: serde_json::Value = serde_json::from_str(&printed).expect("JSON");
    assert_eq!(report["added"], 7, "every row is a span: {printed}");
    let out = dir.path().join("spans.csv");
    let out_s = out.to_str().expect("utf-8 path");
    ok(
        &concord(&db, &["export", "spans", "--out", out_s]),
        "export spans",
    );
    let exported = std::fs::read_to_string(&out).expect("the export");
    assert!(
        exported.starts_with("conversation_id,turn,source,rater,code,start,end,severity,quote\n"),
        "the contract's columns first: {exported}"
    );
    assert!(
        exported.contains(",0,9,,听起来你很难受 😢\n"),
        "offsets in characters, the emoji one of them: {exported}"
    );

    let other = study(dir.path(), "second.concord");
    ok(
        &concord(&other, &["import", "spans", out_s]),
        "re-importing the export",
    );
    let again = dir.path().join("again.csv");
    let again_s = again.to_str().expect("utf-8 path");
    ok(
        &concord(&other, &["export", "spans", "--out", again_s]),
        "export again",
    );
    assert_eq!(
        std::fs::read_to_string(&again).expect("the second export"),
        exported,
        "the same spans at the same offsets"
    );
}

#[test]
fn agreement_on_spans_prints_the_contracts_document() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let db = study(dir.path(), "s.concord");
    let experts = write(dir.path(), "experts.csv", &experts_file());
    let judge = write(dir.path(), "judge.csv", &judge_file());
    ok(
        &concord(&db, &["import", "spans", &experts]),
        "the experts' spans",
    );
    ok(
        &concord(&db, &["import", "spans", &judge, "--kind", "judge"]),
        "the judge's spans",
    );
    let args = [
        "agreement",
        "--spans",
        "--rubric",
        "mentalbench",
        "--json",
        "--resamples",
        "200",
    ];
    let printed = ok(&concord(&db, &args), "agreement --spans");
    let doc: serde_json::Value = serde_json::from_str(&printed).expect("JSON");
    let codes = doc["codes"].as_array().expect("codes is a list");
    assert_eq!(codes.len(), 5, "one entry per code of the rubric");
    for code in codes {
        for key in ["code", "alpha_u", "pairs"] {
            assert!(code.get(key).is_some(), "each code has {key}: {code}");
        }
        let pairs = code["pairs"].as_array().expect("pairs is a list");
        assert_eq!(pairs.len(), 3, "ann–bob, ann–judge, bob–judge");
        for key in ["a", "b", "f1_exact", "f1_overlap"] {
            assert!(pairs[0].get(key).is_some(), "each pair has {key}");
        }
    }
    assert!(
        doc["overall"]["alpha_u"].is_number(),
        "overall alpha among the experts: {printed}"
    );
    let guidance = codes
        .iter()
        .find(|c| c["code"] == "actionable_guidance")
        .expect("actionable_guidance");
    let judged = &guidance["judges"][0];
    assert_eq!(judged["judge"], "judge-x", "the judge is compared");
    let against: Vec<(String, f64)> = judged["experts"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|p| {
            (
                p["b"].as_str().expect("expert").to_string(),
                p["f1_exact"].as_f64().expect("a figure"),
            )
        })
        .collect();
    assert_eq!(
        against,
        [("ann".to_string(), 1.0), ("bob".to_string(), 0.5)],
        "the judge marked ann's two spans exactly; bob cut one short"
    );
    assert_eq!(
        judged["expert_range_exact"]["min"], 0.5,
        "ann and bob match on one of two guidance spans"
    );
    let again = ok(&concord(&db, &args), "the same command again");
    assert_eq!(again, printed, "the seed reproduces the intervals");
}

#[test]
fn judge_status_lists_the_quotes_a_spans_run_could_not_locate() {
    use concord_testsupport::judge_server::{study_with_items, FakeJudge, UNFOUND_QUOTE};
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join("judged.concord");
    drop(study_with_items(
        &path,
        &concord_core::rubric::builtin::mentalbench(),
        2,
    ));
    let server = FakeJudge::start(std::time::Duration::ZERO, false, None);
    let base = server.base_url();
    let run = [
        "judge",
        "run",
        "--provider",
        "openai-compatible",
        "--base-url",
        &base,
        "--model",
        "span-judge",
        "--rubric",
        "mentalbench",
        "--spans",
        "--concurrency",
        "1",
        "--json",
    ];
    ok(&concord(&path, &run), "a judge run asking for spans");
    let status = ok(
        &concord(&path, &["judge", "status", "--json"]),
        "judge status",
    );
    let runs: serde_json::Value = serde_json::from_str(&status).expect("JSON");
    let quotes = runs[0]["unlocated_quotes"]
        .as_array()
        .expect("the run lists its unlocated quotes");
    assert_eq!(quotes.len(), 2, "one per reply: {status}");
    assert_eq!(quotes[0]["quote"], UNFOUND_QUOTE, "as the judge wrote it");
    assert_eq!(quotes[0]["conversation_id"], "c0", "naming its reply");
    let text = ok(
        &concord(&path, &["judge", "status"]),
        "judge status as text",
    );
    assert!(
        text.contains("2 quotes not found") && text.contains(UNFOUND_QUOTE),
        "the text lists them too: {text}"
    );
    let exported = dir.path().join("spans.csv");
    let out = exported.to_str().expect("utf-8 path");
    ok(
        &concord(&path, &["export", "spans", "--out", out]),
        "export spans",
    );
    let csv = std::fs::read_to_string(&exported).expect("the export");
    assert!(
        csv.contains(&format!(
            "c0,2,gpt4o,span-judge,actionable_guidance,,,,{UNFOUND_QUOTE}\n"
        )),
        "the export keeps it with empty offsets: {csv}"
    );
}
