//! The MentalAlign-70k release as published: when the release folder sits beside the repository
//! (`../shared/data/mentalalign-70k`), import it and check the data-quality report and the
//! paper's agreement table for Claude-3.7-Sonnet and GPT-4o. Without the folder the tests print a
//! note and return.

use concord_core::base::clock::SteppingClock;
use concord_core::intake::mentalalign::import_dir;
use concord_core::intake::mentalalign::EXPERT_NAME;
use concord_core::intake::FileStatus;
use concord_core::intake::ImportOptions;
use concord_core::intake::OutOfScale;
use concord_core::panel::agreement;
use concord_core::panel::agreement::AgreementOptions;
use concord_core::panel::agreement::Comparison;
use concord_core::panel::agreement::Level;
use concord_core::store::Store;
use std::path::PathBuf;
use std::sync::Arc;

fn release_dir() -> Option<PathBuf> {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/data/mentalalign-70k");
    if dir.join("Human_judge.xlsx").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "note: {} is absent; skipping the MentalAlign release test",
            dir.display()
        );
        None
    }
}

fn store() -> Store {
    Store::in_memory(Arc::new(SteppingClock::new(1_700_000_000_000, 1))).expect("in-memory study")
}

/// (judge, attribute, ICC(C,1), ICC(A,1), bias, MSE) from PRODUCT.md.
const PAPER: &[(&str, &str, f64, f64, f64, f64)] = &[
    (
        "claude-3-7-sonnet-20250219",
        "Guidance",
        0.881,
        0.837,
        0.248,
        0.923,
    ),
    (
        "claude-3-7-sonnet-20250219",
        "Informativeness",
        0.915,
        0.915,
        -0.101,
        0.829,
    ),
    (
        "claude-3-7-sonnet-20250219",
        "Relevance",
        0.730,
        0.743,
        0.054,
        0.999,
    ),
    (
        "claude-3-7-sonnet-20250219",
        "Safety",
        0.685,
        0.597,
        0.118,
        0.521,
    ),
    (
        "claude-3-7-sonnet-20250219",
        "Empathy",
        0.906,
        0.474,
        0.641,
        1.181,
    ),
    (
        "claude-3-7-sonnet-20250219",
        "Helpfulness",
        0.900,
        0.742,
        0.427,
        0.946,
    ),
    (
        "claude-3-7-sonnet-20250219",
        "Understanding",
        0.791,
        0.806,
        0.031,
        1.084,
    ),
    ("gpt-4o", "Guidance", 0.849, 0.475, 0.771, 1.513),
    ("gpt-4o", "Informativeness", 0.856, 0.681, 0.461, 0.958),
    ("gpt-4o", "Relevance", 0.532, 0.243, 0.389, 0.780),
    ("gpt-4o", "Safety", 0.480, 0.279, 0.218, 0.451),
    ("gpt-4o", "Empathy", 0.835, 0.288, 0.817, 1.391),
    ("gpt-4o", "Helpfulness", 0.800, 0.457, 0.669, 1.130),
    ("gpt-4o", "Understanding", 0.823, 0.485, 0.349, 0.769),
];

#[test]
fn release_reproduces_the_paper_table() {
    let Some(dir) = release_dir() else { return };
    let mut study = store();
    let report = import_dir(&mut study, &dir, &ImportOptions::default()).expect("release imports");
    let human = report
        .files
        .iter()
        .find(|f| f.rater.as_deref() == Some(EXPERT_NAME))
        .expect("the human file is recognised as the expert's");
    let q = &human.quality;
    assert_eq!(
        q.out_of_scale.get("0"),
        Some(&231),
        "the release has 231 zeros"
    );
    assert_eq!(q.out_of_scale.get("6"), Some(&8), "the release has 8 sixes");
    assert_eq!(q.empty_cells, 57, "the release has 57 empty rating cells");
    assert_eq!(q.null_values, 10, "the release has 10 null scores");
    assert_eq!(
        report.files.len(),
        3,
        "human file plus two judge files in the release folder"
    );

    let result = agreement::report(&study, AgreementOptions::mentalalign("mentalbench"))
        .expect("agreement over the imported release");
    for &(judge, attribute, c1, a1, bias, mse) in PAPER {
        let cell = result
            .cells
            .iter()
            .find(|c| {
                c.rater == judge
                    && c.attribute == attribute
                    && c.level == Level::System
                    && c.comparison == Comparison::JudgeVsExperts
            })
            .unwrap_or_else(|| panic!("no system-level cell for {judge} × {attribute}"));
        let close = |got: Option<f64>, want: f64, what: &str| {
            let got = got.unwrap_or_else(|| panic!("{judge} {attribute} {what} is undefined"));
            assert!(
                (got - want).abs() <= 0.005,
                "{judge} {attribute} {what}: {got:.4} is not within ±0.005 of the paper's {want}"
            );
        };
        close(cell.icc_c1, c1, "ICC(C,1)");
        close(cell.icc_a1, a1, "ICC(A,1)");
        close(cell.bias, bias, "bias");
        close(cell.mse, mse, "MSE");
        assert_eq!(
            cell.n_targets, 9,
            "self-family exclusion leaves nine sources for {judge}"
        );
        assert!(
            cell.ci95[0].is_some() && cell.ci95[1].is_some() && cell.status.is_some(),
            "the bootstrap interval and status exist for {judge} {attribute}"
        );
    }
}

#[test]
fn importing_the_release_twice_changes_nothing() {
    let Some(dir) = release_dir() else { return };
    let mut study = store();
    import_dir(&mut study, &dir, &ImportOptions::default()).expect("first import");
    let before = study.overview().expect("overview");
    let again = import_dir(&mut study, &dir, &ImportOptions::default()).expect("second import");
    assert!(
        again
            .files
            .iter()
            .all(|f| f.status == FileStatus::AlreadyImported),
        "every file is recognised by its content hash"
    );
    let after = study.overview().expect("overview");
    assert_eq!(before, after, "a repeated import must not change the study");
}

#[test]
fn treating_out_of_scale_as_missing_removes_those_values() {
    let Some(dir) = release_dir() else { return };
    let mut keep = store();
    let mut missing = store();
    import_dir(&mut keep, &dir, &ImportOptions::default()).expect("keep import");
    let options = ImportOptions {
        out_of_scale: OutOfScale::Missing,
        ..ImportOptions::default()
    };
    import_dir(&mut missing, &dir, &options).expect("missing import");
    let count = |s: &Store| s.overview().expect("overview").ratings;
    assert_eq!(
        count(&keep) - count(&missing),
        231 + 8,
        "the 239 out-of-scale values become missing under the 'missing' choice"
    );
    assert_eq!(
        missing
            .meta("import.out_of_scale")
            .expect("meta")
            .as_deref(),
        Some("missing"),
        "the choice is recorded in the study"
    );
}
