//! The reviewer's questions asked of a real study (imported from files with a category column,
//! `concord_testsupport::reviewer_study`): agreement by category equals the report of a study
//! that holds only that category's responses, a category with too few rated responses says why
//! instead of giving figures, and the items importer reads and checks the category column; the
//! Dawid–Skene reference holds adjudicated pairs at their decisions and compares only judges with
//! its labels; every judge × binary dimension has a corrected prevalence or the reason; the G-study
//! of a judge's repetitions is the ANOVA of its calls, and the experts' reads their retests as a
//! second occasion; the label budget is ppi_power on the study's judge–expert pairs.

use concord_core::base::clock::SteppingClock;
use concord_core::intake::long::{import_items, ItemColumns};
use concord_core::intake::{ImportError, ImportOptions};
use concord_core::panel::adjudication::{
    self, referenced_data, AgreementReference, Resolution, Ruling,
};
use concord_core::panel::agreement::{self, AgreementOptions};
use concord_core::panel::gstudy::{gstudy_section, GStudyKind};
use concord_core::panel::judge_reliability::{repetition_records, ReliabilityOptions};
use concord_core::panel::label_budget::{label_budget, BudgetGoal, LabelBudgetQuestion};
use concord_core::panel::prevalence::prevalence_rows;
use concord_core::panel::strata::{by_facet, Facet, MIN_STRATUM_RESPONSES};
use concord_core::rubric::builtin;
use concord_core::store::Store;
use concord_stats::gtheory::{g_study, GDesign, GScore};
use concord_stats::power::{ppi_mean_power, PowerGoal};
use concord_testsupport::reviewer_study::{
    import_files, retest_values, reviewer_study, write_files, RubricFiles, RARE_CATEGORY,
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
        let (data, _) = referenced_data(&store, &options, AgreementReference::Experts).unwrap();
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
    let (data, _) = referenced_data(&store, &options, AgreementReference::Experts).unwrap();
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

#[test]
fn the_latent_reference_holds_decisions_and_keeps_the_experts_among_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = reviewer_study(&dir.path().join("whole.concord"), dir.path(), SEED);
    let item = "psycrisis-c000-gpt-4o";
    let criterion = builtin::psycrisis().criteria[0].id.clone();
    let response = store
        .response_by_item(item)
        .unwrap()
        .expect("the response")
        .id;
    let criteria = store
        .read()
        .criterion_ids(
            store
                .rubrics()
                .unwrap()
                .iter()
                .find(|r| r.rubric.id == "psycrisis")
                .unwrap()
                .id,
        )
        .unwrap();
    let criterion_id = criteria[&criterion];
    let experts: Vec<i64> = store
        .rater_records()
        .unwrap()
        .into_iter()
        .filter(|r| r.kind == "expert")
        .map(|r| r.id)
        .collect();
    let ones = experts
        .iter()
        .filter(|&&e| {
            store.rating_value(e, response, criterion_id).unwrap() == Some((Some(1), None))
        })
        .count();
    // Decide against the experts' majority: a held label overrides every vote.
    let decided = i64::from(2 * ones < experts.len());
    adjudication::resolve(
        &mut store,
        &Resolution {
            item: item.to_string(),
            criterion: criterion.clone(),
            ruling: Ruling::Value { value: decided },
            reason: "the answer asks about risk in its last line".to_string(),
            adjudicator: "Dr Lead".to_string(),
        },
    )
    .expect("the decision is recorded");
    let options = options("psycrisis");
    let (data, fits) = referenced_data(&store, &options, AgreementReference::DawidSkene).unwrap();
    assert_eq!(fits.len(), 5, "one fit per binary dimension");
    let fit = fits.iter().find(|f| f.criterion == criterion).unwrap();
    assert_eq!(fit.n_gold, 1, "the decided pair is held at its decision");
    assert!(
        fit.converged && fit.not_computed.is_none(),
        "the fit converges: {fit:?}"
    );
    let labelled = data
        .labelled
        .as_ref()
        .expect("the latent labels replace the experts' values");
    let at = labelled
        .responses
        .iter()
        .position(|r| r.id == response)
        .unwrap();
    let c = labelled
        .criteria
        .iter()
        .position(|x| x.id == criterion_id)
        .unwrap();
    for e in labelled.experts() {
        assert_eq!(
            labelled.series(e, c)[at],
            decided as f64,
            "every expert value of the decided pair is the decision"
        );
    }
    let report = data.report(&options);
    let experts_report = agreement::report(&store, options.clone()).unwrap();
    assert!(
        report.binary.iter().filter(|b| !b.experts).count() == 15,
        "three judges × five dimensions against the latent label"
    );
    assert_eq!(
        report
            .binary
            .iter()
            .filter(|b| b.experts)
            .collect::<Vec<_>>(),
        experts_report
            .binary
            .iter()
            .filter(|b| b.experts)
            .collect::<Vec<_>>(),
        "the experts among themselves are compared as they rated, not with the latent label"
    );
    let good = |r: &agreement::AgreementReport| {
        r.binary
            .iter()
            .find(|b| b.judge == "judge-good" && b.criterion == criterion)
            .and_then(|b| b.cohen_kappa)
    };
    assert_ne!(
        good(&report),
        good(&experts_report),
        "the judge is compared with the latent label, not the experts' majority"
    );
}

#[test]
fn prevalence_rows_carry_a_figure_or_the_reason_never_nan() {
    let dir = tempfile::tempdir().unwrap();
    let store = reviewer_study(&dir.path().join("whole.concord"), dir.path(), SEED);
    let data = agreement::AgreementData::load(&store, "psycrisis").unwrap();
    let rows = prevalence_rows(&data, 0.95, Some(300));
    assert_eq!(rows.len(), 15, "three judges × five binary dimensions");
    for r in &rows {
        assert_eq!(
            r.n_items, 155,
            "{} on {}: every response of the rubric the judge labelled",
            r.judge, r.criterion
        );
        assert!(
            r.n_calibration < r.n_items && r.n_calibration > 0,
            "the calibration set is the expert-rated part"
        );
        match (r.corrected, &r.not_computed) {
            (Some(p), None) => {
                let [lo, hi] = r.ci.expect("an interval beside the estimate");
                assert!(
                    (0.0..=1.0).contains(&p) && 0.0 <= lo && lo <= hi && hi <= 1.0,
                    "{} on {}: the estimate and its interval lie in [0, 1]",
                    r.judge,
                    r.criterion
                );
                let a = r.allocation.expect("an allocation of the budget");
                assert_eq!(a.positive + a.negative, 300, "the whole budget is split");
            }
            (None, Some(why)) => assert!(
                r.judge == "judge-contrarian" && why.contains("no better than chance"),
                "only the contrarian judge is refused, with the reason: {} {why}",
                r.judge
            ),
            other => panic!("a figure or a reason, never both or neither: {other:?}"),
        }
    }
    let json = serde_json::to_string(&rows).unwrap();
    assert!(!json.contains("NaN"), "no figure is NaN");
}

/// The ANOVA estimates of a complete targets × raters table (Brennan's p × r design):
/// (σ²(p), σ²(r), σ²(residual)).
fn anova_two_facet(table: &[Vec<f64>]) -> (f64, f64, f64) {
    let (n, k) = (table.len() as f64, table[0].len() as f64);
    let grand = table.iter().flatten().sum::<f64>() / (n * k);
    let row: Vec<f64> = table.iter().map(|r| r.iter().sum::<f64>() / k).collect();
    let col: Vec<f64> = (0..table[0].len())
        .map(|j| table.iter().map(|r| r[j]).sum::<f64>() / n)
        .collect();
    let msp = k * row.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (n - 1.0);
    let msr = n * col.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (k - 1.0);
    let mut sse = 0.0;
    for (i, r) in table.iter().enumerate() {
        for (j, x) in r.iter().enumerate() {
            sse += (x - row[i] - col[j] + grand).powi(2);
        }
    }
    let mse = sse / ((n - 1.0) * (k - 1.0));
    ((msp - mse) / k, (msr - mse) / n, mse)
}

#[test]
fn a_judges_repetitions_make_a_g_study_equal_to_the_anova_of_its_calls() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = crate::judge_reliability::judged_study(&dir.path().join("judged.concord"), 3);
    let section = gstudy_section(&store, "mentalbench").unwrap();
    let records = repetition_records(
        &store,
        &ReliabilityOptions {
            rubric: Some("mentalbench".into()),
            ..ReliabilityOptions::default()
        },
    )
    .unwrap();
    let judge_studies: Vec<_> = section
        .studies
        .iter()
        .filter(|s| s.kind == GStudyKind::Judge)
        .collect();
    assert_eq!(
        judge_studies.len(),
        7,
        "one per attribute of the judge run three times"
    );
    let mut compared = 0;
    for s in judge_studies {
        assert_eq!(
            s.facets,
            ["repetition"],
            "a judge's facet is its repetitions"
        );
        let mut table: std::collections::BTreeMap<i64, Vec<(i64, f64)>> = Default::default();
        for r in records.iter().filter(|r| r.criterion == s.criterion) {
            table
                .entry(r.response_id)
                .or_default()
                .push((r.repetition, r.value));
        }
        let table: Vec<Vec<f64>> = table
            .into_values()
            .map(|mut v| {
                v.sort_by_key(|x| x.0);
                v.into_iter().map(|x| x.1).collect()
            })
            .collect();
        assert_eq!(
            (s.n_targets, s.n_raters),
            (12, 3),
            "12 responses × 3 repetitions"
        );
        let (p, r, e) = anova_two_facet(&table);
        let got = |k: &str| s.components.get(k).copied().unwrap_or(f64::NAN);
        if p >= 0.0 && r >= 0.0 {
            compared += 1;
            for (name, want) in [("target", p), ("repetition", r), ("residual", e)] {
                assert!(
                    (got(name) - want).abs() < 1e-6,
                    "{}: σ²({name}) {} is the ANOVA estimate {want} of the balanced calls",
                    s.criterion,
                    got(name)
                );
            }
        }
        let one = s.d_study.iter().find(|d| d.n_rater == 1).unwrap();
        let three = s.d_study.iter().find(|d| d.n_rater == 3).unwrap();
        assert!(
            three.relative >= one.relative,
            "{}: averaging three calls is no less reliable than one",
            s.criterion
        );
    }
    assert!(
        compared >= 4,
        "most attributes have no negative ANOVA estimate to compare ({compared})"
    );
}

#[test]
fn the_experts_g_study_reads_first_ratings_and_retests_as_two_occasions() {
    let dir = tempfile::tempdir().unwrap();
    let store = reviewer_study(&dir.path().join("whole.concord"), dir.path(), SEED);
    let section = gstudy_section(&store, "mentalbench").unwrap();
    assert_eq!(section.target_reliability, 0.8, "the D-study looks for 0.8");
    let experts: Vec<_> = section
        .studies
        .iter()
        .filter(|s| s.kind == GStudyKind::Experts)
        .collect();
    assert_eq!(experts.len(), 7, "one per MentalBench attribute");
    assert!(
        section
            .studies
            .iter()
            .all(|s| s.kind == GStudyKind::Experts),
        "imported judges never repeated themselves: no judge study"
    );
    // The same scores assembled here from what the fixture wrote: the experts' file and the
    // retests.
    let files = write_files(dir.path(), "mentalbench", SEED);
    let retests = retest_values(&store);
    let names: std::collections::HashMap<i64, String> = store
        .rater_records()
        .unwrap()
        .into_iter()
        .map(|r| (r.id, r.name))
        .collect();
    let ids = store
        .read()
        .criterion_ids(
            store
                .rubrics()
                .unwrap()
                .iter()
                .find(|r| r.rubric.id == "mentalbench")
                .unwrap()
                .id,
        )
        .unwrap();
    for s in experts {
        assert_eq!(s.facets, ["rater", "occasion"], "first ratings and retests");
        let mut keys: std::collections::HashMap<String, usize> = Default::default();
        let mut index = |k: String| {
            let next = keys.len();
            *keys.entry(k).or_insert(next)
        };
        let mut scores = Vec::new();
        for line in std::fs::read_to_string(&files.experts)
            .unwrap()
            .lines()
            .skip(1)
        {
            let f: Vec<&str> = line.split(',').collect();
            if f[2] == s.criterion {
                let (t, r) = (index(format!("t{}", f[0])), index(format!("r{}", f[1])));
                scores.push((t, r, 0, f[3].parse::<f64>().unwrap()));
            }
        }
        let criterion_id = ids[&s.criterion];
        for &(rater, response, criterion, value) in &retests {
            if criterion == criterion_id {
                let item = store
                    .response_labels()
                    .unwrap()
                    .into_iter()
                    .find(|l| l.id == response)
                    .unwrap()
                    .response;
                let (t, r) = (
                    index(format!("t{item}")),
                    index(format!("r{}", names[&rater])),
                );
                scores.push((t, r, 1, value as f64));
            }
        }
        let (n_t, n_r) = (
            keys.keys().filter(|k| k.starts_with('t')).count(),
            keys.keys().filter(|k| k.starts_with('r')).count(),
        );
        let mut t_map = std::collections::HashMap::new();
        let mut r_map = std::collections::HashMap::new();
        let g: Vec<GScore> = scores
            .iter()
            .map(|&(t, r, o, score)| {
                let nt = t_map.len();
                let nr = r_map.len();
                GScore {
                    target: *t_map.entry(t).or_insert(nt),
                    rater: *r_map.entry(r).or_insert(nr),
                    occasion: o,
                    score,
                }
            })
            .collect();
        let want = g_study(
            &g,
            &GDesign {
                n_targets: n_t,
                n_raters: n_r,
                n_occasions: Some(2),
            },
        )
        .unwrap();
        assert_eq!(
            s.n_scores,
            g.len(),
            "{}: every first rating and retest",
            s.criterion
        );
        let c = &want.components;
        for (name, v) in [
            ("target", c.target),
            ("rater", c.rater),
            ("occasion", c.occasion.unwrap()),
            ("target:rater", c.target_rater.unwrap()),
            ("target:occasion", c.target_occasion.unwrap()),
            ("rater:occasion", c.rater_occasion.unwrap()),
            ("residual", c.residual),
        ] {
            assert!(
                (s.components[name] - v).abs() < 1e-6 * v.abs().max(1.0),
                "{}: σ²({name}) {} equals the fit of the scores as written, {v}",
                s.criterion,
                s.components[name]
            );
        }
        if let Some(p) = &s.reaches_target {
            assert!(
                p.relative.unwrap() >= 0.8,
                "the design named reaches the target"
            );
        }
    }
    let psycrisis = gstudy_section(&store, "psycrisis").unwrap();
    assert!(
        psycrisis
            .studies
            .iter()
            .all(|s| s.not_computed.is_some() || s.g.is_some()),
        "every study has figures or the reason"
    );
}

#[test]
fn the_label_budget_is_ppi_power_on_the_studys_judge_expert_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let store = reviewer_study(&dir.path().join("whole.concord"), dir.path(), SEED);
    let data = agreement::AgreementData::load_compared(&store, "mentalbench").unwrap();
    let files = write_files(dir.path(), "mentalbench", SEED);
    // The pilot as the fixture's files give it: the judge's score beside the experts' mean.
    let mut experts: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for line in std::fs::read_to_string(&files.experts)
        .unwrap()
        .lines()
        .skip(1)
    {
        let f: Vec<&str> = line.split(',').collect();
        if f[2] == "empathy" {
            experts
                .entry(f[0].into())
                .or_default()
                .push(f[3].parse().unwrap());
        }
    }
    let (mut expert, mut judge) = (Vec::new(), Vec::new());
    let mut judged: Vec<(String, f64)> = std::fs::read_to_string(&files.judges)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1] == "judge-fair" && f[2] == "empathy")
                .then(|| (f[0].to_string(), f[3].parse().unwrap()))
        })
        .collect();
    judged.sort_by(|a, b| a.0.cmp(&b.0));
    for (item, v) in judged {
        if let Some(e) = experts.get(&item) {
            expert.push(e.iter().sum::<f64>() / e.len() as f64);
            judge.push(v);
        }
    }
    for goal in [BudgetGoal::StandardError(0.04), BudgetGoal::Budget(5000.0)] {
        let question = LabelBudgetQuestion {
            criterion: "empathy".into(),
            judge: "judge-fair".into(),
            cost_expert: 20.0,
            cost_judge: 0.05,
            goal,
        };
        let answer = label_budget(&data, &question);
        let want = ppi_mean_power(
            &expert,
            &judge,
            20.0,
            0.05,
            match goal {
                BudgetGoal::StandardError(s) => PowerGoal::StandardError(s),
                BudgetGoal::Budget(b) => PowerGoal::Budget(b),
            },
        )
        .unwrap();
        assert_eq!(
            answer.n_pilot,
            expert.len(),
            "every response both rated is a pilot pair"
        );
        let d = answer.design.expect("a design");
        assert_eq!(
            (d.n_expert, d.n_judge, d.expert_only.n_expert),
            (want.n_expert, want.n_judge, want.classical.n_expert),
            "{goal:?}: the study's design is ppi_mean_power's on the same pairs"
        );
        assert!(
            (d.rho - want.rho).abs() < 1e-12 && (d.se - want.se).abs() < 1e-12,
            "the same correlation and standard error"
        );
    }
    let none = label_budget(
        &data,
        &LabelBudgetQuestion {
            criterion: "empathy".into(),
            judge: "no-such-judge".into(),
            cost_expert: 20.0,
            cost_judge: 0.05,
            goal: BudgetGoal::StandardError(0.04),
        },
    );
    assert!(
        none.design.is_none()
            && none
                .not_computed
                .is_some_and(|w| w.contains("no-such-judge")),
        "a judge the study does not hold is named in the reason"
    );
}
