//! The methods appendix of the demo study: the five files are written; the table is a well-formed
//! CSV (every row as many fields as the header, the ICC form quoted) with F-based intervals, so a
//! reader's pingouin reproduces it; the paragraph names the ICC form, the interval methods, the
//! software version and the options; the script is the one Concord ships. (`scripts/dev test`
//! runs the script itself on such an export with pingouin.)

use concord_core::app::open_study::OpenStudy;
use concord_core::base::clock::SystemClock;
use concord_core::guard::phi::review::PhiGate;
use concord_core::intake::demo::create_demo_at;
use concord_core::outputs::methods::RECOMPUTE_SCRIPT;
use concord_core::panel::agreement::AgreementOptions;
use std::sync::Arc;

#[test]
fn the_demo_study_exports_a_self_recomputing_appendix() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let store = create_demo_at(&tmp.path().join("demo.concord"), Arc::new(SystemClock), 7)
        .expect("the demo study is created");
    let mut study = OpenStudy::new(store);
    let dir = tmp.path().join("appendix");
    let options = AgreementOptions::mentalalign("mentalbench");
    let gate = PhiGate {
        actor: "lead",
        override_reason: None,
    };
    let written = concord_core::app::methods::write_methods_appendix(
        &mut study, &options, &dir, "9.9.9", false, gate,
    )
    .expect("written");
    let names: Vec<String> = written
        .files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "ratings.csv",
            "agreement.csv",
            "study.json",
            "methods.md",
            "recompute.py"
        ],
        "the appendix has its five files"
    );
    let table = std::fs::read_to_string(dir.join("agreement.csv")).unwrap();
    let mut reader = csv::ReaderBuilder::new().from_reader(table.as_bytes());
    let header = reader.headers().expect("a header").clone();
    let mut rows = 0;
    for record in reader.records() {
        let record = record.expect("every row has as many fields as the header");
        assert_eq!(record.len(), header.len(), "a well-formed row");
        assert_eq!(&record[7], "ICC(C,1)", "the ICC form survives quoting");
        assert_eq!(
            &record[11], "F",
            "deterministic F-based intervals, reproducible elsewhere"
        );
        assert!(
            record[8].parse::<f64>().is_ok(),
            "an ICC in every demo cell"
        );
        rows += 1;
    }
    assert!(
        rows >= 7,
        "one row per MentalBench attribute at least (got {rows})"
    );
    let paragraph = std::fs::read_to_string(dir.join("methods.md")).unwrap();
    for needle in [
        "ICC(C,1)",
        "McGraw & Wong",
        "bootstrap",
        "seed 42",
        "Concord 9.9.9",
        "REML",
        "self-family exclusion on",
    ] {
        assert!(
            paragraph.contains(needle),
            "the methods paragraph states {needle:?}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("recompute.py")).unwrap(),
        RECOMPUTE_SCRIPT,
        "the shipped script is written unchanged"
    );
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("study.json")).unwrap()).unwrap();
    assert_eq!(
        meta["rubric"], "mentalbench",
        "the rubric the table is about"
    );
    assert!(
        meta["raters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["kind"] == "judge"),
        "the raters with their kinds, so the script can tell judges from experts"
    );
}
