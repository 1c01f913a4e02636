//! The reviewer's questions asked of a real study (imported from files with a category column,
//! `concord_testsupport::reviewer_study`): agreement by category equals the report of a study
//! that holds only that category's responses, a category with too few rated responses says why
//! instead of giving figures, and the items importer reads and checks the category column.

use concord_core::base::clock::SteppingClock;
use concord_core::intake::long::{import_items, ItemColumns};
use concord_core::intake::{ImportError, ImportOptions};
use concord_core::panel::adjudication::{referenced_data, AgreementReference};
use concord_core::panel::agreement::{self, AgreementOptions};
use concord_core::panel::strata::{by_facet, Facet, MIN_STRATUM_RESPONSES};
use concord_core::store::Store;
use concord_testsupport::reviewer_study::{
    import_files, reviewer_study, write_files, RubricFiles, RARE_CATEGORY,
};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

const SEED: u64 = 39;

fn options(rubric: &str) -> AgreementOptions {
    AgreementOptions {
        resamples: 200,
        ..AgreementOptions::mentalalign(rubric)
    }
}

/// The rows of `file` (a CSV with a header) whose first cell passes `keep`, written to `to`.
fn filtered(file: &Path, to: &Path, keep: impl Fn(&str, &str) -> bool) {
    let text = std::fs::read_to_string(file).expect("the fixture file");
    let mut lines = text.lines();
    let header = lines.next().expect("a header");
    let mut out = format!("{header}\n");
    for line in lines {
        let first = line.split(',').next().unwrap_or("");
        if keep(first, line) {
            out.push_str(line);
            out.push('\n');
        }
    }
    std::fs::write(to, out).expect("the filtered file is written");
}

/// A study holding only the responses of `category` of both rubrics' files in `dir` (the
/// fixture's cells hold no comma, so a row splits on them).
fn study_of_one_category(dir: &Path, category: &str, files: &[RubricFiles]) -> Store {
    let clock = Arc::new(SteppingClock::new(1_700_000_000_000, 1));
    let mut store =
        Store::create(&dir.join(format!("{category}.concord")), clock).expect("a new study file");
    let of_category = |line: &str| line.ends_with(&format!(",{category}"));
    for f in files {
        let part = |name: &str| dir.join(format!("{category}-{}-{name}.csv", f.rubric));
        let one = RubricFiles {
            rubric: f.rubric,
            items: part("items"),
            experts: part("experts"),
            judges: part("judges"),
        };
        filtered(&f.items, &one.items, |_, line| of_category(line));
        let kept: HashSet<String> = std::fs::read_to_string(&one.items)
            .expect("items")
            .lines()
            .skip(1)
            .filter_map(|l| l.split(',').nth(2).map(str::to_string))
            .collect();
        assert!(
            !kept.is_empty(),
            "the category has responses in the fixture"
        );
        filtered(&f.experts, &one.experts, |item, _| kept.contains(item));
        filtered(&f.judges, &one.judges, |item, _| kept.contains(item));
        import_files(&mut store, &one);
    }
    store
}

#[test]
fn a_category_agrees_as_a_study_of_its_responses_alone() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<RubricFiles> = ["psycrisis", "mentalbench"]
        .into_iter()
        .map(|r| write_files(dir.path(), r, SEED))
        .collect();
    let store = reviewer_study(&dir.path().join("whole.concord"), dir.path(), SEED);
    let alone = study_of_one_category(dir.path(), "self-harm", &files);
    for rubric in ["mentalbench", "psycrisis"] {
        let options = options(rubric);
        let data = referenced_data(&store, &options, AgreementReference::Experts).unwrap();
        let split = by_facet(&store, &data, Facet::Category, &options).unwrap();
        let stratum = split
            .strata
            .iter()
            .find(|s| s.value.as_deref() == Some("self-harm"))
            .expect("the self-harm category is a stratum");
        let by_category = stratum
            .report
            .as_ref()
            .expect("a common category has its report");
        let expected = agreement::report(&alone, options.clone()).unwrap();
        let figures = if rubric == "mentalbench" {
            expected.cells.iter().filter(|c| c.icc_c1.is_some()).count()
        } else {
            expected
                .binary
                .iter()
                .filter(|b| b.cohen_kappa.is_some())
                .count()
        };
        assert!(
            figures > 0,
            "{rubric}: the one-category study has figures to compare"
        );
        assert_eq!(
            by_category.cells, expected.cells,
            "{rubric}: every continuous cell of the category (ICC, intervals, bias) equals the study of its responses alone"
        );
        assert_eq!(
            by_category.binary, expected.binary,
            "{rubric}: every binary dimension of the category equals the study of its responses alone"
        );
        assert_eq!(
            by_category.totals, expected.totals,
            "{rubric}: the totals' correlations of the category equal the study of its responses alone"
        );
        let whole = agreement::report(&store, options.clone()).unwrap();
        let kappas = |r: &agreement::AgreementReport| {
            r.binary.iter().map(|b| b.cohen_kappa).collect::<Vec<_>>()
        };
        let iccs =
            |r: &agreement::AgreementReport| r.cells.iter().map(|c| c.icc_c1).collect::<Vec<_>>();
        assert!(
            iccs(by_category) != iccs(&whole) || kappas(by_category) != kappas(&whole),
            "{rubric}: the category's figures are its own, not the whole study's"
        );
    }
}

#[test]
fn a_category_with_too_few_rated_responses_says_why_and_gives_no_figure() {
    let dir = tempfile::tempdir().unwrap();
    let store = reviewer_study(&dir.path().join("whole.concord"), dir.path(), SEED);
    let options = options("psycrisis");
    let data = referenced_data(&store, &options, AgreementReference::Experts).unwrap();
    let split = by_facet(&store, &data, Facet::Category, &options).unwrap();
    let values: Vec<Option<&str>> = split.strata.iter().map(|s| s.value.as_deref()).collect();
    assert_eq!(
        values,
        vec![
            Some("eating"),
            Some("existential"),
            Some("self-harm"),
            Some("suicidal-ideation"),
            None
        ],
        "categories in order, the responses without one last"
    );
    let rare = &split.strata[0];
    assert_eq!(
        rare.value.as_deref(),
        Some(RARE_CATEGORY),
        "the rare category"
    );
    assert_eq!(
        rare.n_compared, 1,
        "its experts rated one response of the five"
    );
    assert_eq!(rare.n_responses, 5, "it has one response per source");
    assert!(
        rare.report.is_none(),
        "fewer than {MIN_STRATUM_RESPONSES} rated responses give no report at all, so no undefined figure"
    );
    let why = rare.not_computed.as_deref().unwrap_or("");
    assert!(
        why.contains("only 1 response") && why.contains("eating"),
        "the reason names the category and the count: {why}"
    );
    let json = serde_json::to_string(&split).unwrap();
    assert!(
        !json.contains("NaN"),
        "no figure of any stratum is written as NaN"
    );
    for s in &split.strata[1..] {
        assert!(
            s.report.is_some() && s.not_computed.is_none(),
            "{:?}: a category with enough rated responses has its report",
            s.value
        );
    }
}

#[test]
fn the_items_import_reads_the_category_and_refuses_two_for_one_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(SteppingClock::new(1_700_000_000_000, 1));
    let mut store = Store::create(&dir.path().join("s.concord"), clock).unwrap();
    let good = dir.path().join("good.csv");
    std::fs::write(
        &good,
        "conversation_id,context,response_id,source,text,category\n\
         c1,I am scared,r1,gpt-4o,I hear you,self-harm\n\
         c1,I am scared,r2,human,Tell me more,self-harm\n\
         c2,Nothing matters,r3,gpt-4o,That sounds heavy,\n",
    )
    .unwrap();
    import_items(
        &mut store,
        &good,
        "psycrisis",
        &ItemColumns::default(),
        None,
        &ImportOptions::default(),
    )
    .expect("a file with a category column imports");
    let categories: Vec<(String, Option<String>)> = store
        .conversations_of_rubric(Some("psycrisis"))
        .unwrap()
        .into_iter()
        .map(|c| (c.external_id, c.category))
        .collect();
    assert_eq!(
        categories,
        vec![
            ("c1".to_string(), Some("self-harm".to_string())),
            ("c2".to_string(), None)
        ],
        "the category is the conversation's; an empty cell is no category"
    );
    let bad = dir.path().join("bad.csv");
    std::fs::write(
        &bad,
        "conversation_id,context,response_id,source,text,category\n\
         c9,I am scared,r9,gpt-4o,I hear you,self-harm\n\
         c9,I am scared,r10,human,Tell me more,existential\n",
    )
    .unwrap();
    let err = import_items(
        &mut store,
        &bad,
        "psycrisis",
        &ItemColumns::default(),
        None,
        &ImportOptions::default(),
    )
    .expect_err("two categories for one conversation are refused");
    let ImportError::Rejected(issues) = err else {
        panic!("a refusal lists its issues, got {err}");
    };
    let issue = &issues[0];
    assert_eq!(
        issue.code, "category_conflict",
        "the issue's code says what is wrong"
    );
    assert_eq!(
        (issue.at.row, issue.at.column.as_deref()),
        (Some(3), Some("category")),
        "the issue names the row and the column"
    );
    assert!(
        store.response_id("c9", "gpt-4o").unwrap().is_none(),
        "nothing of the refused file is written"
    );
}
