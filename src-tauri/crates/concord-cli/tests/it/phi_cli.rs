//! `concord phi scan|redact|keep|list` and the export gate, run as a lead would: an items file with
//! a phone number, a date and an e-mail address is imported; the import reports the findings;
//! `phi scan --json` locates them by item, field and character offsets; exports are refused until
//! every finding is redacted or kept (or the lead overrides with a reason); redaction leaves a
//! typed placeholder in the stored text.

use std::process::Command;

fn concord(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .args(args)
        .env_remove("CONCORD_STUDY")
        .output()
        .expect("the concord binary runs")
}

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "command must succeed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

#[test]
fn findings_are_located_gate_exports_and_redact_to_placeholders() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.concord");
    let db = db.to_str().unwrap();
    let items = dir.path().join("items.csv");
    std::fs::write(
        &items,
        "conversation_id,context,response_id,source,text\n\
         c1,\"我的手机号是13812345678，3月5日那天我崩溃了\",r1,gpt4o,\"Please write to help@clinic.org today.\"\n",
    )
    .unwrap();
    let items = items.to_str().unwrap();
    let out = concord(&[
        "--db",
        db,
        "import",
        "long-items",
        items,
        "--rubric",
        "mentalbench",
        "--json",
    ]);
    let report = json(&out);
    assert_eq!(
        report["phi"]["found"], 3,
        "the import reports what the scan of its texts found"
    );

    let scan = json(&concord(&["--db", db, "phi", "scan", "--json"]));
    let findings = scan["findings"].as_array().expect("findings array");
    let located: Vec<(String, String, String, u64, u64)> = findings
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["item"].as_str().unwrap().to_string(),
                f["field"].as_str().unwrap().to_string(),
                f["start"].as_u64().unwrap(),
                f["end"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        located,
        vec![
            ("phone".into(), "c1".into(), "context".into(), 6, 17),
            ("date".into(), "c1".into(), "context".into(), 18, 22),
            ("email".into(), "r1".into(), "text".into(), 16, 31),
        ],
        "each finding names its class, item, field and character span"
    );

    let csv = dir.path().join("ratings.csv");
    let csv = csv.to_str().unwrap();
    let refused = concord(&["--db", db, "export", "ratings", "--out", csv]);
    assert!(!refused.status.success(), "an export waits for the review");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("not reviewed"),
        "and says why: {}",
        String::from_utf8_lossy(&refused.stderr)
    );

    let appendix = dir.path().join("appendix");
    let refused = concord(&[
        "--db",
        db,
        "export",
        "methods",
        "--out",
        appendix.to_str().unwrap(),
    ]);
    assert!(
        !refused.status.success() && !appendix.exists(),
        "the methods appendix carries the ratings too, so it also waits for the review"
    );
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("the methods appendix"),
        "and names what was refused: {}",
        String::from_utf8_lossy(&refused.stderr)
    );

    let redacted = json(&concord(&[
        "--db",
        db,
        "phi",
        "redact",
        "--kind",
        "phone,date",
        "--json",
    ]));
    assert_eq!(
        redacted["redacted"], 2,
        "both identifiers of the context are redacted"
    );
    let email_id = findings[2]["id"].as_i64().unwrap().to_string();
    let no_reason = concord(&[
        "--db",
        db,
        "phi",
        "keep",
        "--finding",
        &email_id,
        "--reason",
        " ",
    ]);
    assert!(
        !no_reason.status.success(),
        "keeping an original needs a reason"
    );
    let kept = json(&concord(&[
        "--db",
        db,
        "phi",
        "keep",
        "--finding",
        &email_id,
        "--reason",
        "the clinic's address",
        "--json",
    ]));
    assert_eq!(kept["open"], 0, "nothing is left to review");

    let out = concord(&["--db", db, "export", "ratings", "--out", csv, "--texts"]);
    assert!(
        out.status.success(),
        "once reviewed, exports go ahead: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(csv).unwrap_or_default();
    let conn = rusqlite::Connection::open(db).unwrap();
    let context: String = conn
        .query_row(
            "SELECT context FROM conversation WHERE external_id = 'c1'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        context, "我的手机号是[PHONE]，[DATE]那天我崩溃了",
        "the stored text carries typed placeholders where the identifiers were"
    );
    assert!(
        !written.contains("13812345678"),
        "the redacted number is in no export"
    );
    let listed = json(&concord(&[
        "--db", db, "phi", "list", "--status", "all", "--json",
    ]));
    let redacted_excerpts: Vec<&serde_json::Value> = listed["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "redacted")
        .map(|f| &f["excerpt"])
        .collect();
    assert_eq!(
        redacted_excerpts,
        vec![&serde_json::Value::Null, &serde_json::Value::Null],
        "a redacted finding keeps no copy of the identifier"
    );
}
