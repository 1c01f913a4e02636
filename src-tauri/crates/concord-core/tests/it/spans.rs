//! Evidence spans: span codes in rubric files (the built-in code sets in English and Chinese, the
//! checks on a lab's codes, a study stored before codes taking them up); `import spans` (all or
//! nothing, each refusal naming file, row and column: offsets outside the text, end not after
//! start, an unknown code, an unknown item, a reply its expert was not assigned; a file imported
//! twice adds nothing); the export re-importing to the same offsets with Chinese and emoji; the
//! audit chain sealing spans like ratings; and the span agreement report's figures.

use concord_core::intake::conversations::import_file;
use concord_core::intake::spans::import_spans;
use concord_core::intake::{ImportError, ImportOptions};
use concord_core::outputs::export::spans::write_spans_csv;
use concord_core::panel::span_agreement::{span_agreement, SpanAgreementOptions};
use concord_core::rubric::quote::{char_slice, locate, Located};
use concord_core::rubric::{builtin, Rubric, RubricFormat};
use concord_core::store::{NewAssignment, Purpose, RaterKind, Store};
use concord_testsupport::lead_study::clock;
use std::path::{Path, PathBuf};

/// A reply in Chinese with an emoji (outside the Basic Multilingual Plane: two UTF-16 units,
/// four bytes, one character) and one in English with runs of spaces.
const REPLY_ZH: &str = "听起来你很难受 😢。你可以拨打心理援助热线 12356。你有没有想过伤害自己？";
const REPLY_EN: &str =
    "Everything will be fine.  You should just   cheer up. Try a walk outside today.";

struct Study {
    dir: tempfile::TempDir,
    store: Store,
}

impl Study {
    /// Two transcripts rated with MentalBench, one reply each (turn 2, source `bot`).
    fn new() -> Study {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut store = Store::create(&dir.path().join("study.concord"), clock()).expect("a study");
        let lines = [
            serde_json::json!({"conversation_id": "c1", "messages": [
                {"role": "user", "content": "我最近很难过"},
                {"role": "assistant", "source": "bot", "content": REPLY_ZH}]}),
            serde_json::json!({"conversation_id": "c2", "messages": [
                {"role": "user", "content": "I feel awful"},
                {"role": "assistant", "source": "bot", "content": REPLY_EN}]}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let path = dir.path().join("conversations.jsonl");
        std::fs::write(&path, text).expect("write conversations");
        import_file(&mut store, &path, "mentalbench", &ImportOptions::default())
            .expect("the conversations import");
        Study { dir, store }
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).expect("write the input");
        p
    }

    fn import(
        &mut self,
        path: &Path,
    ) -> Result<concord_core::intake::spans::SpansImported, ImportError> {
        import_spans(&mut self.store, path, RaterKind::Expert, 7, "lead")
    }

    fn span_count(&self) -> usize {
        self.store.spans_listed().expect("spans read").len()
    }

    fn export(&self) -> String {
        let mut out = Vec::new();
        write_spans_csv(&self.store, &mut out).expect("the export writes");
        String::from_utf8(out).expect("UTF-8")
    }
}

/// `[start, end)` of `quote` in `text`, in characters.
fn at(text: &str, quote: &str) -> (usize, usize) {
    let byte = text.find(quote).expect("the quote is in the text");
    let start = text[..byte].chars().count();
    (start, start + quote.chars().count())
}

fn row(conversation: &str, rater: &str, code: &str, text: &str, quote: &str) -> String {
    let (s, e) = at(text, quote);
    format!("{conversation},2,bot,{rater},{code},{s},{e}")
}

const HEADER: &str = "conversation_id,turn,source,rater,code,start,end\n";

fn two_experts() -> String {
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
            "generic_reassurance",
            REPLY_EN,
            "Everything will be fine.",
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
            "Try a walk outside today.",
        ),
    ];
    format!("{HEADER}{}\n", rows.join("\n"))
}

#[test]
fn built_in_rubrics_declare_codes_in_english_and_chinese() {
    for (rubric, keys) in [
        (
            builtin::psycrisis(),
            [
                "risk_dismissed",
                "unsafe_advice",
                "referral_offered",
                "risk_explored",
            ],
        ),
        (
            builtin::mentalbench(),
            [
                "actionable_guidance",
                "factual_error",
                "validating_statement",
                "judgemental_phrasing",
            ],
        ),
    ] {
        for key in keys {
            assert!(
                rubric.code(key).is_some(),
                "{} declares the code {key}",
                rubric.id
            );
        }
        for code in &rubric.codes {
            for text in [&code.label, &code.description] {
                assert!(
                    text.get("en").is_some_and(|t| !t.is_empty())
                        && text.get("zh").is_some_and(|t| !t.is_empty()),
                    "{} code {}: label and description in English and Chinese",
                    rubric.id,
                    code.key
                );
            }
        }
        let again = Rubric::parse(&rubric.to_toml(), RubricFormat::Toml, "again.toml")
            .expect("a rubric's own TOML reads back");
        assert_eq!(again, rubric, "codes survive the TOML a study stores");
    }
    assert!(
        builtin::mentalbench()
            .code("factual_error")
            .is_some_and(|c| c.severity == ["minor", "major"]),
        "a code's severity levels are read in order"
    );
    assert!(
        builtin::session_care().codes.is_empty(),
        "a session rubric marks no reply"
    );
}

#[test]
fn a_labs_codes_are_checked() {
    let base = "id = \"lab\"\nname = { en = \"Lab\" }\n[[criteria]]\nid = \"q\"\nlabel = { en = \"Q\" }\nscale = { kind = \"binary\" }\n";
    let refused = |codes: &str, why: &str| {
        let err = Rubric::parse(&format!("{base}{codes}"), RubricFormat::Toml, "lab.toml")
            .expect_err(why)
            .to_string();
        assert!(
            err.starts_with("lab.toml"),
            "the refusal names the file: {err}"
        );
        err
    };
    let dup = refused(
        "[[codes]]\nkey = \"x\"\nlabel = { en = \"X\" }\n[[codes]]\nkey = \"X\"\nlabel = { en = \"X2\" }\n",
        "two codes under one key",
    );
    assert!(
        dup.contains("code 2") && dup.contains("duplicate"),
        "names the second code: {dup}"
    );
    let no_en = refused(
        "[[codes]]\nkey = \"x\"\nlabel = { zh = \"甲\" }\n",
        "no English label",
    );
    assert!(no_en.contains("English"), "says what is missing: {no_en}");
    refused(
        "[[codes]]\nkey = \"a b\"\nlabel = { en = \"X\" }\n",
        "a key with a space",
    );
    let levels = refused(
        "[[codes]]\nkey = \"x\"\nlabel = { en = \"X\" }\nseverity = [\"low\", \"LOW\"]\n",
        "a severity level twice",
    );
    assert!(
        levels.contains("twice"),
        "names the repeated level: {levels}"
    );
    let ok = Rubric::parse(
        &format!("{base}[[codes]]\nkey = \"x\"\nlabel = {{ en = \"X\" }}\nseverity = [\"low\", \"high\"]\n"),
        RubricFormat::Toml,
        "lab.toml",
    )
    .expect("a well-formed code set reads");
    assert_eq!(
        ok.code(" X ").map(|c| c.key.as_str()),
        Some("x"),
        "codes answer to their key"
    );
}

#[test]
fn a_study_stored_before_codes_takes_them_up_sealed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = Store::create(&dir.path().join("s.concord"), clock()).expect("a study");
    let old = builtin::mentalbench().without_codes();
    let first = store
        .write(|tx| tx.add_rubric(&old))
        .expect("the earlier release's rubric");
    let again = store
        .write(|tx| tx.add_rubric(&builtin::mentalbench()))
        .expect("the same rubric with codes is the same rubric");
    assert_eq!(first, again, "no second rubric is made");
    let stored = store.rubrics().expect("rubrics").remove(0).rubric;
    assert_eq!(
        stored.codes,
        builtin::mentalbench().codes,
        "the codes are taken up"
    );
    store
        .write(|tx| tx.add_rubric(&old))
        .expect("the rubric without codes is still the same rubric");
    assert_eq!(
        store
            .rubrics()
            .expect("rubrics")
            .remove(0)
            .rubric
            .codes
            .len(),
        builtin::mentalbench().codes.len(),
        "adding it without codes keeps the stored codes"
    );
    let check = store.verify_audit_chain().expect("the chain is read");
    assert!(
        check.broken.is_none(),
        "the change is sealed: {:?}",
        check.broken
    );
}

#[test]
fn spans_import_and_export_round_trip_with_chinese_and_emoji() {
    let mut study = Study::new();
    let file = study.file("spans.csv", &two_experts());
    let report = study.import(&file).expect("the spans import");
    assert_eq!(report.added, 8, "every row is a span");
    assert_eq!(
        report.raters_added,
        ["ann", "bob"],
        "unknown raters are added as experts"
    );
    let exported = study.export();
    let (s, e) = at(REPLY_ZH, "听起来你很难受 😢");
    assert!(
        exported.contains(&format!(
            "c1,2,bot,bob,validating_statement,{s},{e},,听起来你很难受 😢\n"
        )),
        "offsets count characters, the emoji as one: {exported}"
    );
    assert_eq!(e - s, 9, "seven Han characters, a space and the emoji");
    assert!(
        exported.contains("You should just   cheer up."),
        "the quote keeps the reply's own spacing: {exported}"
    );

    // A fresh study of the same conversations reads the export back to the same offsets.
    let mut other = Study::new();
    let back = other.file("exported.csv", &exported);
    let report = other.import(&back).expect("the export re-imports");
    assert_eq!(report.added, 8, "every exported span comes back");
    assert_eq!(
        other.export(),
        exported,
        "the same spans at the same offsets"
    );
    let again = other.import(&back).expect("a second import is fine");
    assert_eq!(
        (again.added, again.already_present),
        (0, 8),
        "nothing is stored twice"
    );
    let check = other.store.verify_audit_chain().expect("chain read");
    assert!(
        check.broken.is_none(),
        "span imports are sealed: {:?}",
        check.broken
    );
}

#[test]
fn spans_outside_the_chain_are_found() {
    let mut study = Study::new();
    let file = study.file("spans.csv", &two_experts());
    study.import(&file).expect("the spans import");
    let path = study.dir.path().join("study.concord");
    drop(study.store);
    let raw = rusqlite::Connection::open(&path).expect("open the file with another tool");
    raw.execute("UPDATE span SET char_end = char_end + 1 WHERE id = 1", [])
        .expect("an edit outside Concord");
    drop(raw);
    let store = Store::open(&path, clock()).expect("the study opens");
    let check = store.verify_audit_chain().expect("chain read");
    let broken = check
        .broken
        .expect("a span changed outside Concord breaks the seal");
    assert_eq!(
        broken.table.as_deref(),
        Some("span"),
        "the broken table is named: {broken:?}"
    );
}

/// Import `rows` under the header and expect one refusal at `column` with `words` in it, and
/// nothing stored.
fn refused(study: &mut Study, rows: &str, column: &str, words: &str) {
    let file = study.file("bad.csv", &format!("{HEADER}{rows}\n"));
    let before = study.span_count();
    let err = study.import(&file).expect_err("the file is refused");
    let issues = err.issues();
    let issue = issues
        .iter()
        .find(|i| i.at.column.as_deref() == Some(column))
        .unwrap_or_else(|| panic!("a refusal at column {column}: {err}"));
    assert_eq!(issue.at.file, "bad.csv", "the file is named");
    assert_eq!(
        issue.at.row,
        Some(3),
        "the row as a spreadsheet shows it (header is row 1)"
    );
    assert!(
        issue.message.contains(words),
        "says why ({words}): {}",
        issue.message
    );
    assert_eq!(study.span_count(), before, "nothing is imported");
}

#[test]
fn bad_span_rows_are_refused_with_file_row_and_column() {
    let mut study = Study::new();
    let good = row(
        "c1",
        "ann",
        "validating_statement",
        REPLY_ZH,
        "听起来你很难受",
    );
    let len = REPLY_ZH.chars().count();
    refused(
        &mut study,
        &format!("{good}\nc1,2,bot,ann,validating_statement,3,{}", len + 1),
        "end",
        "outside the reply",
    );
    refused(
        &mut study,
        &format!("{good}\nc1,2,bot,ann,validating_statement,5,2"),
        "end",
        "not after start",
    );
    refused(
        &mut study,
        &format!("{good}\nc1,2,bot,ann,no_such_code,0,2"),
        "code",
        "not one of rubric",
    );
    refused(
        &mut study,
        &format!("{good}\nc9,2,bot,ann,validating_statement,0,2"),
        "conversation_id",
        "no reply",
    );
    refused(
        &mut study,
        &format!("{good}\nc1,2,bot,ann,validating_statement,x,2"),
        "start",
        "not a character offset",
    );
}

#[test]
fn a_span_on_a_reply_the_expert_was_not_given_is_refused() {
    let mut study = Study::new();
    let ids: Vec<i64> = study
        .store
        .text_items(
            study
                .store
                .read()
                .rubric_id("mentalbench")
                .expect("read")
                .expect("the rubric is stored"),
        )
        .expect("items")
        .iter()
        .map(|i| i.response_id)
        .collect();
    study
        .store
        .write(|tx| {
            let ann = tx.upsert_rater(&concord_core::store::NewRater {
                kind: RaterKind::Expert,
                name: "ann",
                model_id: None,
                family: None,
                queue_seed: 1,
            })?;
            tx.add_assignments(&[NewAssignment::fresh(ann, ids[0], 0, Purpose::Regular)])
        })
        .expect("ann is assigned c1 only");
    refused(
        &mut study,
        &format!(
            "{}\n{}",
            row(
                "c1",
                "ann",
                "validating_statement",
                REPLY_ZH,
                "听起来你很难受"
            ),
            row(
                "c2",
                "ann",
                "actionable_guidance",
                REPLY_EN,
                "Try a walk outside today."
            )
        ),
        "rater",
        "was not assigned",
    );
}

#[test]
fn quotes_are_located_exactly_then_loosely_and_never_guessed() {
    assert_eq!(
        locate(REPLY_ZH, "心理援助热线"),
        Some(Located::Exact { start: 15, end: 21 }),
        "an exact match counts characters"
    );
    let loose = locate(REPLY_EN, "You should just cheer up.").expect("found ignoring spacing");
    assert!(
        matches!(loose, Located::Whitespace { .. }),
        "found by the second rule"
    );
    let (s, e) = loose.range();
    assert_eq!(
        char_slice(REPLY_EN, s, e),
        Some("You should just   cheer up."),
        "the span covers the reply's own spacing"
    );
    assert_eq!(
        locate(REPLY_EN, "cheer down"),
        None,
        "no match: not located"
    );
    assert_eq!(
        locate("a b a b", "a b"),
        Some(Located::Exact { start: 0, end: 3 }),
        "several matches: the first"
    );
}

#[test]
fn span_agreement_reports_alpha_and_f1_per_code_and_overall() {
    let mut study = Study::new();
    let file = study.file("spans.csv", &two_experts());
    study.import(&file).expect("the spans import");
    let options = SpanAgreementOptions {
        resamples: 200,
        seed: 11,
    };
    let report = span_agreement(&study.store, Some("mentalbench"), options).expect("a report");
    let code = |k: &str| report.codes.iter().find(|c| c.code == k).expect("a code");
    let guidance = code("actionable_guidance");
    assert_eq!(
        guidance.alpha_u,
        Some(1.0),
        "identical spans: full agreement"
    );
    let pair = &guidance.pairs[0];
    assert_eq!(
        (pair.f1_exact, pair.f1_overlap),
        (Some(1.0), Some(1.0)),
        "both marked the same"
    );
    let validating = &code("validating_statement").pairs[0];
    assert_eq!(
        (validating.f1_exact, validating.f1_overlap),
        (Some(0.0), Some(1.0)),
        "one span longer than the other: overlap but no exact match"
    );
    assert_eq!(
        code("factual_error").alpha_u,
        None,
        "a code nobody used has no alpha"
    );
    let all = &report.overall.pairs[0];
    assert_eq!(
        all.f1_exact,
        Some(0.5),
        "two of four spans each match exactly"
    );
    assert_eq!(
        all.f1_overlap,
        Some(0.75),
        "three of four overlap one of the other's"
    );
    assert!(report.overall.alpha_u.is_some(), "alpha over all codes");
    assert_eq!(
        span_agreement(&study.store, Some("mentalbench"), options).expect("again"),
        report,
        "the seed reproduces every interval"
    );
    let json = serde_json::to_value(&report).expect("JSON");
    for key in ["code", "alpha_u", "pairs"] {
        assert!(json["codes"][0].get(key).is_some(), "each code has {key}");
    }
    for key in ["a", "b", "f1_exact", "f1_overlap"] {
        assert!(
            json["codes"][0]["pairs"][0].get(key).is_some(),
            "each pair has {key}"
        );
    }
    assert!(
        json["overall"].get("alpha_u").is_some(),
        "overall has alpha_u"
    );
}

/// The appendix's Python (`CONCORD_APPENDIX_PYTHON`), when the environment names one.
fn appendix_python() -> Option<std::path::PathBuf> {
    std::env::var_os("CONCORD_APPENDIX_PYTHON")
        .filter(|p| !p.is_empty())
        .map(std::path::PathBuf::from)
}

fn write_appendix(study: Study, dir: &Path) -> Vec<String> {
    let mut open = concord_core::app::open_study::OpenStudy::new(study.store);
    let options = concord_core::panel::agreement::AgreementOptions::mentalalign("mentalbench");
    let gate = concord_core::guard::phi::review::PhiGate {
        actor: "lead",
        override_reason: None,
    };
    concord_core::app::methods::write_methods_appendix(
        &mut open, &options, dir, "9.9.9", false, gate,
    )
    .expect("the appendix is written")
    .files
    .iter()
    .map(|p| {
        p.file_name()
            .expect("a file")
            .to_string_lossy()
            .into_owned()
    })
    .collect()
}

#[test]
fn an_appendix_with_spans_recomputes_its_span_tables() {
    use concord_core::outputs::methods::{recompute_script, recompute_script_with_spans};
    let out = tempfile::tempdir().expect("a folder for the appendices");
    let plain = Study::new();
    let plain_dir = out.path().join("plain-appendix");
    let names = write_appendix(plain, &plain_dir);
    assert_eq!(
        names.len(),
        16,
        "a study without spans writes the sixteen files it always did"
    );
    assert_eq!(
        std::fs::read_to_string(plain_dir.join("recompute.py")).expect("script"),
        recompute_script(false),
        "and the script it always did"
    );

    let mut study = Study::new();
    let experts = study.file("spans.csv", &two_experts());
    study.import(&experts).expect("the experts' spans");
    let judge = study.file(
        "judge.csv",
        &format!(
            "{HEADER}{}\n{}\n",
            row(
                "c1",
                "judge-x",
                "actionable_guidance",
                REPLY_ZH,
                "拨打心理援助热线 12356"
            ),
            row(
                "c2",
                "judge-x",
                "generic_reassurance",
                REPLY_EN,
                "Everything will be fine."
            )
        ),
    );
    import_spans(&mut study.store, &judge, RaterKind::Judge, 7, "lead").expect("the judge's spans");
    let dir = out.path().join("appendix");
    let tmp = out.path().to_path_buf();
    let names = write_appendix(study, &dir);
    assert_eq!(
        names[16..],
        ["spans.csv", "span_replies.csv", "span_agreement.csv"],
        "the span tables follow the files every appendix has"
    );
    let script = std::fs::read_to_string(dir.join("recompute.py")).expect("script");
    assert_eq!(
        script,
        recompute_script_with_spans(false),
        "the script checks the spans too"
    );
    let table = std::fs::read_to_string(dir.join("span_agreement.csv")).expect("table");
    assert!(
        table.contains("mentalbench,all,f1_exact,ann,bob,0.5,"),
        "the overall exact F1 of the two experts: {table}"
    );
    assert!(
        table.contains(",judge-x,"),
        "the judge's pairs are listed: {table}"
    );
    let paragraph = std::fs::read_to_string(dir.join("methods.md")).expect("methods");
    assert!(
        paragraph.contains("## Evidence spans"),
        "the paragraph says how the figures were made"
    );

    let Some(python) = appendix_python() else {
        println!("note: CONCORD_APPENDIX_PYTHON is not set, so recompute.py is not run here");
        return;
    };
    let run = |at: &Path| {
        let out = std::process::Command::new(&python)
            .arg(at.join("recompute.py"))
            .arg(at)
            .output()
            .expect("the appendix's Python runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = run(&dir);
    assert_eq!(
        code,
        Some(0),
        "recompute.py reproduces every span figure:\n{out}"
    );
    assert!(
        out.contains("span figures recomputed"),
        "the span check ran:\n{out}"
    );
    let changed = tmp.join("changed");
    std::fs::create_dir_all(&changed).expect("folder");
    for entry in std::fs::read_dir(&dir).expect("appendix") {
        let entry = entry.expect("file");
        std::fs::copy(entry.path(), changed.join(entry.file_name())).expect("copy");
    }
    std::fs::write(
        changed.join("span_agreement.csv"),
        table.replacen(
            "mentalbench,all,f1_exact,ann,bob,0.5,",
            "mentalbench,all,f1_exact,ann,bob,0.51,",
            1,
        ),
    )
    .expect("tamper");
    let (code, out) = run(&changed);
    assert_eq!(code, Some(1), "a figure changed by 0.01 is caught:\n{out}");
}
