//! The methods appendix of the demo study: the seventeen files are written; the table is a
//! well-formed CSV (every row as many fields as the header, the ICC form quoted) with F-based
//! intervals, so a reader's pingouin reproduces it; the paragraph names the ICC form, the interval
//! methods, the software version and the options; the script is the one Concord ships.
//! (`scripts/dev test` runs the script itself on such an export with pingouin.) And the appendix of
//! a study judged three times per response by the loopback judge: its judge reliability table is
//! what `concord judge reliability` computes, its repetitions file holds every repetition read,
//! and — with the appendix's Python packages (`CONCORD_APPENDIX_PYTHON`, which `scripts/dev test`
//! points at its venv) — `recompute.py` reproduces the table and fails on any number changed in it.
//! And the appendix of a study imported from files with categories, two experts retesting and
//! an adjudicated pair: the reviewer's tables (prevalence, G-studies, Dawid–Skene fits, agreement
//! by category) are written, and `recompute.py` reproduces them with the prevalence paper's
//! formulas, a numpy/scipy REML, crowd-kit and pingouin, and fails on any of their numbers changed.

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
            "judge_reliability.csv",
            "judge_repetitions.csv",
            "pairwise.csv",
            "pairwise_position.csv",
            "pairwise_agreement.csv",
            "prevalence.csv",
            "gstudy.csv",
            "dawid_skene.csv",
            "adjudicated.csv",
            "agreement_by_category.csv",
            "categories.csv",
            "agreement.csv",
            "study.json",
            "methods.md",
            "recompute.py",
            "agreement_by_turn.csv"
        ],
        "the appendix has every appendix's sixteen files and, the demo's MentalBench rating \
         replies of transcripts too, its table by turn"
    );
    let reliability = std::fs::read_to_string(dir.join("judge_reliability.csv")).unwrap();
    assert_eq!(
        reliability.lines().count(),
        1,
        "the demo's judge has no repeated calls, so its reliability table is its header alone"
    );
    for name in [
        "pairwise.csv",
        "pairwise_position.csv",
        "pairwise_agreement.csv",
    ] {
        let table = std::fs::read_to_string(dir.join(name)).unwrap();
        assert_eq!(
            table.lines().count(),
            1,
            "the demo study has no pairs, so {name} is its header alone"
        );
    }
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
        "Krippendorff's α across repetitions",
        "Spearman–Brown",
        "krippendorff, statsmodels",
    ] {
        assert!(
            paragraph.contains(needle),
            "the methods paragraph states {needle:?}"
        );
    }
    assert!(
        std::fs::read_to_string(dir.join("recompute.py")).unwrap()
            == concord_core::outputs::methods::recompute_script(true),
        "the shipped script is written unchanged, with its part by turn (the demo's MentalBench \
         rates replies of transcripts too)"
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

/// The window's export of the appendix without a folder writes into `methods-<rubric>` in the
/// study's export folder, says which folder, and replaces files there only when told to.
#[test]
fn without_a_folder_the_appendix_goes_to_the_export_folder() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let store = create_demo_at(&tmp.path().join("demo.concord"), Arc::new(SystemClock), 7)
        .expect("the demo study is created");
    let mut study = OpenStudy::new(store);
    let options = AgreementOptions::mentalalign("mentalbench");
    let gate = || PhiGate {
        actor: "lead",
        override_reason: None,
    };
    let written = concord_core::app::methods::export_methods_appendix(
        &mut study,
        &options,
        None,
        "9.9.9",
        false,
        gate(),
    )
    .expect("written");
    let want = tmp.path().join("demo-exports").join("methods-mentalbench");
    assert_eq!(
        written.dir, want,
        "the default folder is methods-<rubric> in the study's export folder"
    );
    assert!(
        written
            .files
            .iter()
            .all(|f| f.parent() == Some(want.as_path())),
        "every file is in it: {:?}",
        written.files
    );
    let again = concord_core::app::methods::export_methods_appendix(
        &mut study,
        &options,
        None,
        "9.9.9",
        false,
        gate(),
    )
    .expect_err("the files are there now");
    assert_eq!(
        concord_core::base::error_code::Coded::code(&again),
        concord_core::base::error_code::ErrorCode::AlreadyExists,
        "a second export asks before replacing (the window offers to): {again}"
    );
    let shown = concord_core::app::methods::MethodsFiles::from(
        concord_core::app::methods::export_methods_appendix(
            &mut study,
            &options,
            None,
            "9.9.9",
            true,
            gate(),
        )
        .expect("replaced when told to"),
    );
    assert_eq!(
        shown.dir,
        want.display().to_string(),
        "the window is told the folder as text"
    );
    assert_eq!(
        shown.files.len(),
        17,
        "and each of the seventeen files (the demo's MentalBench has its table by turn)"
    );
}

/// The appendix's Python (`CONCORD_APPENDIX_PYTHON`), when the environment names one.
fn appendix_python() -> Option<std::path::PathBuf> {
    std::env::var_os("CONCORD_APPENDIX_PYTHON")
        .filter(|p| !p.is_empty())
        .map(std::path::PathBuf::from)
}

/// Run the appendix's `recompute.py` on `dir`: its exit code and what it printed.
fn recompute(python: &std::path::Path, dir: &std::path::Path) -> (Option<i32>, String) {
    let out = std::process::Command::new(python)
        .arg(dir.join("recompute.py"))
        .arg(dir)
        .output()
        .expect("the appendix's Python runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// A copy of the appendix `dir` at `to` whose `judge_reliability.csv` has `column` of its
/// `judge` × `criterion` line moved by `delta`.
fn tampered(
    dir: &std::path::Path,
    to: &std::path::Path,
    judge: &str,
    criterion: &str,
    column: &str,
    delta: f64,
) {
    tampered_in(
        dir,
        to,
        "judge_reliability.csv",
        &|row| row[1] == judge && row[2] == criterion,
        column,
        delta,
    );
}

/// Which line of a table a change is made on.
type LinePick<'a> = dyn Fn(&[String]) -> bool + 'a;

/// A copy of the appendix `dir` at `to` whose table `file` has `column` moved by `delta` on the
/// first line `select` picks.
fn tampered_in(
    dir: &std::path::Path,
    to: &std::path::Path,
    file: &str,
    select: &LinePick<'_>,
    column: &str,
    delta: f64,
) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
    let path = to.join(file);
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let header = reader.headers().unwrap().clone();
    let at = header
        .iter()
        .position(|h| h == column)
        .expect("a column of the table");
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut changed = false;
    for record in reader.records() {
        let mut row: Vec<String> = record.unwrap().iter().map(str::to_string).collect();
        if !changed && select(&row) {
            let v: f64 = row[at].parse().expect("the figure to change is defined");
            row[at] = (v + delta).to_string();
            changed = true;
        }
        rows.push(row);
    }
    assert!(changed, "{file} has the line to change");
    let mut w = csv::Writer::from_path(&path).unwrap();
    w.write_record(&header).unwrap();
    for row in rows {
        w.write_record(&row).unwrap();
    }
    w.flush().unwrap();
}

#[test]
fn a_judged_studys_appendix_recomputes_its_judge_reliability_table() {
    use crate::judge_reliability::run_judge;
    use concord_core::outputs::methods::{reliability_options, RELIABILITY_HEADER};
    use concord_core::panel::judge_reliability::{judge_reliability, repetition_records};
    use concord_testsupport::judge_server::{reliability_study, FakeJudge};
    use std::sync::atomic::Ordering;
    let server = FakeJudge::start(std::time::Duration::ZERO, false, None);
    server.state.spread.store(true, Ordering::SeqCst);
    server.state.binary_spread.store(true, Ordering::SeqCst);
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let mut store = reliability_study(&tmp.path().join("judged.concord"), 15);
    run_judge(&mut store, &server, "mentalbench", "thrice-judge", 3, false);
    run_judge(&mut store, &server, "psycrisis", "thrice-judge", 3, true);
    run_judge(&mut store, &server, "psycrisis", "once-judge", 1, false);
    let mut study = OpenStudy::new(store);
    let python = appendix_python();
    if python.is_none() {
        println!(
            "note: CONCORD_APPENDIX_PYTHON is not set, so recompute.py is not run here \
             (scripts/dev test runs it with its venv)"
        );
    }
    for (rubric, criteria) in [("mentalbench", 7), ("psycrisis", 5)] {
        let dir = tmp.path().join(rubric);
        let options = AgreementOptions::mentalalign(rubric);
        let gate = PhiGate {
            actor: "lead",
            override_reason: Some("synthetic test texts"),
        };
        concord_core::app::methods::write_methods_appendix(
            &mut study, &options, &dir, "9.9.9", false, gate,
        )
        .expect("written");

        // The table is the report, figure by figure.
        let figures = judge_reliability(study.store(), &reliability_options(rubric)).unwrap();
        let judges = if rubric == "psycrisis" { 2 } else { 1 };
        assert_eq!(
            figures.len(),
            judges * criteria,
            "{rubric}: one line per judge × criterion"
        );
        let mut reader = csv::Reader::from_path(dir.join("judge_reliability.csv")).unwrap();
        assert_eq!(
            reader.headers().unwrap().iter().collect::<Vec<_>>(),
            RELIABILITY_HEADER,
            "{rubric}: the table's documented columns"
        );
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(
            rows.len(),
            figures.len(),
            "{rubric}: every judge × criterion is a line"
        );
        let cell = |row: &csv::StringRecord, column: &str| -> Option<f64> {
            let at = RELIABILITY_HEADER
                .iter()
                .position(|h| *h == column)
                .unwrap();
            (!row[at].is_empty()).then(|| row[at].parse().unwrap())
        };
        for (row, f) in rows.iter().zip(&figures) {
            let what = format!("{rubric}: {} × {}", f.judge, f.criterion);
            assert_eq!(
                (&row[1], &row[2]),
                (f.judge.as_str(), f.criterion.as_str()),
                "{what}: in the report's order"
            );
            for (column, want) in [
                ("repetitions", Some(f.repetitions as f64)),
                ("alpha", f.consistency.alpha),
                ("alpha_ci_low", f.consistency.alpha_ci95[0]),
                ("alpha_ci_high", f.consistency.alpha_ci95[1]),
                (
                    "single_repetition_reliability",
                    f.repetitions_needed.single_repetition_reliability,
                ),
                (
                    "repetitions_for_target",
                    f.target.repetitions.map(|k| k as f64),
                ),
                ("ece", f.calibration.binary.as_ref().and_then(|b| b.ece)),
                ("brier", f.calibration.binary.as_ref().and_then(|b| b.brier)),
                ("length_slope", f.bias.length.estimate),
                ("length_ci_low", f.bias.length.ci95[0]),
                ("length_ci_high", f.bias.length.ci95[1]),
            ] {
                assert_eq!(
                    cell(row, column),
                    want,
                    "{what}: {column} is the report's, every digit"
                );
            }
        }
        let repetitions = std::fs::read_to_string(dir.join("judge_repetitions.csv")).unwrap();
        let records = repetition_records(study.store(), &reliability_options(rubric)).unwrap();
        assert_eq!(
            repetitions.lines().count(),
            records.len() + 1,
            "{rubric}: every repetition the table reads is a line"
        );
        let thrice = 15 * 3 * criteria;
        assert_eq!(
            records.iter().filter(|r| r.judge == "thrice-judge").count(),
            thrice,
            "{rubric}: 15 responses × 3 repetitions × {criteria} criteria of the repeated judge"
        );
        if rubric == "psycrisis" {
            assert!(
                records
                    .iter()
                    .filter(|r| r.judge == "thrice-judge")
                    .all(|r| r.expected.is_some()),
                "the judge asked for log-probabilities, so every repetition has its expected score"
            );
        }

        let Some(python) = &python else { continue };
        let (code, out) = recompute(python, &dir);
        assert_eq!(
            code,
            Some(0),
            "{rubric}: recompute.py reproduces every number of the appendix:\n{out}"
        );
        assert!(
            out.contains("of the judge reliability table"),
            "{rubric}: the script says it checked the reliability table: {out}"
        );
        let f = figures.iter().find(|f| f.judge == "thrice-judge").unwrap();
        // Each kind of number, changed a little, is caught (α's interval beyond its bootstrap
        // tolerance of 0.1).
        let changes: &[(&str, f64)] = if rubric == "psycrisis" {
            &[
                ("single_repetition_reliability", 0.01),
                ("ece", 0.001),
                ("brier", -0.001),
                ("length_ci_high", 0.001),
            ]
        } else {
            &[
                ("alpha", 0.01),
                ("alpha_ci_low", -0.2),
                ("repetitions_for_target", 1.0),
                ("length_slope", 0.001),
            ]
        };
        for &(column, delta) in changes {
            let to = tmp.path().join(format!("{rubric}-{column}"));
            tampered(&dir, &to, &f.judge, &f.criterion, column, delta);
            let (code, out) = recompute(python, &to);
            assert_eq!(
                code,
                Some(1),
                "{rubric}: recompute.py must fail when {column} is off by {delta}:\n{out}"
            );
            assert!(
                out.contains(&format!("{} / {} {column}", f.judge, f.criterion)),
                "{rubric}: the failure names the number changed ({column}):\n{out}"
            );
        }
    }
}

#[test]
fn a_pairwise_studys_appendix_recomputes_its_pairwise_tables() {
    use crate::pairs::{designed, experts_prefer_the_better, judge};
    use concord_core::outputs::methods::{
        appendix_pairwise, PAIRWISE_HEADER, POSITION_HEADER, PREFERENCE_HEADER,
    };
    use concord_core::workflow::pairs;
    use concord_testsupport::judge_server::{add_experts, FakeJudge};
    use std::sync::atomic::Ordering;
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let (mut store, rubric) = designed(&tmp.path().join("pairs.concord"));
    add_experts(&mut store, &["Ana", "Bo", "Cy"]);
    pairs::assign(&mut store, None, 2, 4).unwrap();
    experts_prefer_the_better(&mut store, rubric, 11);
    let server = FakeJudge::start(std::time::Duration::ZERO, false, None);
    judge(&mut store, &server, "fair-judge");
    server.state.position_bias.store(true, Ordering::SeqCst);
    judge(&mut store, &server, "biased-judge");
    let mut study = OpenStudy::new(store);
    let dir = tmp.path().join("appendix");
    let gate = PhiGate {
        actor: "lead",
        override_reason: Some("synthetic test texts"),
    };
    concord_core::app::methods::write_methods_appendix(
        &mut study,
        &AgreementOptions::mentalalign("mentalbench"),
        &dir,
        "9.9.9",
        false,
        gate,
    )
    .expect("a study with pairs and no 1–5 ratings still has an appendix");

    // Each table is the report, line for line and digit for digit.
    let report = appendix_pairwise(study.store(), "mentalbench")
        .unwrap()
        .expect("the MentalBench appendix reads the study's mentalbench-pairs verdicts");
    let read = |name: &str, header: &[&str]| -> Vec<csv::StringRecord> {
        let mut reader = csv::Reader::from_path(dir.join(name)).unwrap();
        assert_eq!(
            reader.headers().unwrap().iter().collect::<Vec<_>>(),
            header,
            "{name}: the documented columns"
        );
        reader.records().map(Result::unwrap).collect()
    };
    let strengths = read("pairwise.csv", &PAIRWISE_HEADER);
    let lines: usize = report
        .leaderboards
        .iter()
        .map(|l| l.sources.len().max(1))
        .sum();
    assert_eq!(
        strengths.len(),
        lines,
        "a line per group × criterion × source, one for a group without a fit"
    );
    assert!(
        report.leaderboards.iter().any(|l| l.sources.is_empty())
            && report.leaderboards.iter().any(|l| !l.sources.is_empty()),
        "the study has fits and groups without one, so both kinds of line are recomputed"
    );
    let experts = report
        .leaderboards
        .iter()
        .find(|l| l.rater == "experts" && l.criterion == "overall")
        .unwrap();
    let first = strengths
        .iter()
        .find(|r| &r[1] == "experts" && &r[3] == "overall")
        .unwrap();
    assert_eq!(
        (&first[8], first[9].parse::<f64>().unwrap()),
        (
            experts.sources[0].source.as_str(),
            experts.sources[0].strength.unwrap()
        ),
        "the experts' strongest source and its strength, every digit"
    );
    let position = read("pairwise_position.csv", &POSITION_HEADER);
    assert_eq!(
        position.len(),
        report.position.len(),
        "a line per judge × criterion"
    );
    assert_eq!(position.len(), 16, "two judges × eight criteria");
    let agreement = read("pairwise_agreement.csv", &PREFERENCE_HEADER);
    assert_eq!(
        agreement.len(),
        report
            .agreement
            .iter()
            .filter(|a| a.agreement.is_some())
            .count(),
        "a line per criterion × comparison with figures"
    );
    let methods = std::fs::read_to_string(dir.join("methods.md")).unwrap();
    assert!(
        methods.contains("## Pairwise preferences") && methods.contains("Davidson"),
        "the paragraph describes the pairwise tables and how ties were fitted"
    );
    let study_json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("study.json")).unwrap()).unwrap();
    assert_eq!(
        study_json["pairwise"]["resamples"],
        serde_json::json!(1000),
        "study.json carries the bootstrap the script repeats"
    );

    let Some(python) = appendix_python() else {
        println!("note: CONCORD_APPENDIX_PYTHON is not set, so recompute.py is not run here");
        return;
    };
    let (code, out) = recompute(&python, &dir);
    assert_eq!(
        code,
        Some(0),
        "recompute.py reproduces every number of the pairwise tables:\n{out}"
    );
    let checked: usize = out
        .split(" of the pairwise tables")
        .next()
        .and_then(|before| before.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the script counts the pairwise numbers it checked: {out}"));
    assert!(
        checked > strengths.len() * 5,
        "every line's figures are recomputed, not a sample: {checked} numbers"
    );
    println!("{out}");
    // Each kind of number, changed a little, is caught.
    let changes: [(&str, &LinePick<'_>, &str, f64, String); 5] = [
        (
            "pairwise.csv",
            &|r: &[String]| r[1] == "experts" && r[3] == "overall",
            "strength",
            0.001,
            format!("pairwise experts / overall / {} strength", &first[8]),
        ),
        (
            "pairwise.csv",
            &|r: &[String]| r[1] == "experts" && r[3] == "overall",
            "ci_low",
            -2.0,
            format!("pairwise experts / overall / {} ci_low", &first[8]),
        ),
        (
            "pairwise.csv",
            &|r: &[String]| r[1] == "experts" && r[3] == "overall",
            "win_rate",
            0.001,
            format!("pairwise experts / overall / {} win_rate", &first[8]),
        ),
        (
            "pairwise_position.csv",
            &|r: &[String]| r[1] == "biased-judge" && r[2] == "guidance",
            "p_first_ci_high",
            0.001,
            "position biased-judge / guidance p_first_ci_high".into(),
        ),
        (
            "pairwise_agreement.csv",
            &|r: &[String]| r[2] == "experts" && r[1] == "overall",
            "kappa_se",
            0.001,
            "agreement experts / overall kappa_se".into(),
        ),
    ];
    for (k, (file, select, column, delta, named)) in changes.iter().enumerate() {
        let to = tmp.path().join(format!("changed-{k}"));
        tampered_in(&dir, &to, file, *select, column, *delta);
        let (code, out) = recompute(&python, &to);
        assert_eq!(
            code,
            Some(1),
            "recompute.py must fail when {file}'s {column} is off by {delta}:\n{out}"
        );
        assert!(
            out.contains(named.as_str()),
            "the failure names the number changed ({named}):\n{out}"
        );
    }
}

#[test]
fn a_transcript_studys_appendix_recomputes_its_figures_by_turn() {
    use concord_core::outputs::methods::{recompute_script, BY_TURN_HEADER, RECOMPUTE_TURNS_PART};
    use concord_core::panel::agreement::{CiMethod, Comparison, Level};
    use concord_testsupport::transcript_study::{write_transcripts, TranscriptDesign};
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let mut store = concord_core::store::Store::create(
        &tmp.path().join("transcripts.concord"),
        concord_testsupport::lead_study::clock(),
    )
    .expect("a study file");
    // Twenty conversations, the experts on the first eighteen: each turn's replies come from
    // eighteen, so the lower ends of its intervals have the long tail of few conversations.
    write_transcripts(
        &mut store,
        &TranscriptDesign {
            expert_conversations: 18,
            ..TranscriptDesign::correlated(20, 23)
        },
    );
    let mut study = OpenStudy::new(store);
    let dir = tmp.path().join("appendix");
    let options = AgreementOptions::mentalalign("mentalbench");
    let gate = PhiGate {
        actor: "lead",
        override_reason: Some("synthetic test texts"),
    };
    let written = concord_core::app::methods::write_methods_appendix(
        &mut study, &options, &dir, "9.9.9", false, gate,
    )
    .expect("written");
    assert_eq!(
        written
            .files
            .last()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .as_deref(),
        Some("agreement_by_turn.csv"),
        "a reply rubric over transcripts has one more file, its figures by turn"
    );
    assert_eq!(
        written.files.len(),
        17,
        "the sixteen files of every appendix and the by-turn table"
    );
    let table = std::fs::read_to_string(dir.join("agreement.csv")).unwrap();
    assert!(
        table.lines().skip(1).all(|l| l.contains(",item,")),
        "a transcript's replies are the appendix table's targets (item level)"
    );
    let script = std::fs::read_to_string(dir.join("recompute.py")).unwrap();
    assert_eq!(
        script,
        recompute_script(true),
        "the script is the shipped one with its by-turn part"
    );
    assert!(
        script.ends_with(RECOMPUTE_TURNS_PART)
            && script
                .starts_with(&RECOMPUTE_SCRIPT[..RECOMPUTE_SCRIPT.find("\nif __name__").unwrap()]),
        "the by-turn part takes the place of the entry point only"
    );
    assert_eq!(
        recompute_script(false),
        RECOMPUTE_SCRIPT,
        "any other appendix's script is the shipped one, byte for byte"
    );

    let mut reader = csv::Reader::from_path(dir.join("agreement_by_turn.csv")).unwrap();
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        BY_TURN_HEADER,
        "the by-turn table's documented columns"
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let turns: Vec<&str> = {
        let mut t: Vec<&str> = rows.iter().map(|r| &r[1]).collect();
        t.dedup();
        t
    };
    assert_eq!(
        turns,
        ["", "2", "4", "6", "8"],
        "all turns first, then each turn in order"
    );
    let report = study.agreement(&options).expect("the report").clone();
    let overall = report
        .cells
        .iter()
        .find(|c| {
            c.comparison == Comparison::JudgeVsExperts
                && c.level == Level::Item
                && c.criterion == "guidance"
        })
        .expect("the item cell");
    let line = rows
        .iter()
        .find(|r| r[1].is_empty() && &r[3] == "guidance")
        .expect("the all-turns guidance line");
    assert_eq!(
        (
            line[8].parse::<f64>().ok(),
            line[12].parse::<f64>().ok(),
            &line[14],
            line[7].parse::<usize>().ok()
        ),
        (
            overall.icc_c1,
            overall.ci95[0],
            "cluster bootstrap",
            overall.n_clusters
        ),
        "the all-turns line is the panel's item cell, every digit, with its cluster interval"
    );
    assert_eq!(overall.ci_method, CiMethod::Cluster, "over transcripts");

    let Some(python) = appendix_python() else {
        println!("note: CONCORD_APPENDIX_PYTHON is not set, so recompute.py is not run here");
        return;
    };
    let (code, out) = recompute(&python, &dir);
    assert_eq!(
        code,
        Some(0),
        "recompute.py reproduces every number of the appendix and of the by-turn table:\n{out}"
    );
    assert!(
        out.contains("numbers of agreement_by_turn.csv recomputed"),
        "the script says it checked the by-turn table: {out}"
    );
    let changes: [(&str, f64, &str); 3] = [
        (
            "icc_c1",
            0.001,
            "by turn, turn 4: Guidance / judge-1 icc_c1",
        ),
        ("bias", 0.001, "by turn, turn 4: Guidance / judge-1 bias"),
        (
            "ci_high",
            0.3,
            "by turn, turn 4: Guidance / judge-1 ci_high",
        ),
    ];
    for (k, (column, delta, named)) in changes.iter().enumerate() {
        let to = tmp.path().join(format!("changed-{k}"));
        tampered_in(
            &dir,
            &to,
            "agreement_by_turn.csv",
            &|r: &[String]| r[1] == "4" && r[3] == "guidance",
            column,
            *delta,
        );
        let (code, out) = recompute(&python, &to);
        assert_eq!(
            code,
            Some(1),
            "recompute.py must fail when turn 4's {column} is off by {delta}:\n{out}"
        );
        assert!(
            out.contains(named),
            "the failure names the number changed ({named}):\n{out}"
        );
    }
}

#[test]
fn a_reviewer_studys_appendix_recomputes_the_reviewers_tables() {
    use concord_core::outputs::reviewer_tables::{
        DAWID_SKENE_HEADER, GSTUDY_HEADER, PREVALENCE_HEADER,
    };
    use concord_core::panel::adjudication::{resolve, Resolution, Ruling};
    use concord_testsupport::reviewer_study::reviewer_study;
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let mut store = reviewer_study(&tmp.path().join("reviewer.concord"), tmp.path(), 39);
    resolve(
        &mut store,
        &Resolution {
            item: "psycrisis-c001-gpt-4o".into(),
            criterion: "risk_assessment".into(),
            ruling: Ruling::Value { value: 1 },
            reason: "the answer asks about safety".into(),
            adjudicator: "Dr Lead".into(),
        },
    )
    .expect("a decision");
    let mut study = OpenStudy::new(store);
    let python = appendix_python();
    for rubric in ["psycrisis", "mentalbench"] {
        let dir = match std::env::var_os("CONCORD_KEEP_APPENDIX") {
            Some(keep) => std::path::PathBuf::from(keep).join(rubric),
            None => tmp.path().join(rubric),
        };
        let options = AgreementOptions {
            resamples: 200,
            ..AgreementOptions::mentalalign(rubric)
        };
        let gate = PhiGate {
            actor: "lead",
            override_reason: Some("synthetic test texts"),
        };
        let written = concord_core::app::methods::write_methods_appendix(
            &mut study, &options, &dir, "9.9.9", true, gate,
        )
        .expect("written");
        assert_eq!(written.files.len(), 16, "{rubric}: sixteen files");
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        for (name, header) in [
            ("prevalence.csv", &PREVALENCE_HEADER[..]),
            ("gstudy.csv", &GSTUDY_HEADER[..]),
            ("dawid_skene.csv", &DAWID_SKENE_HEADER[..]),
        ] {
            let text = read(name);
            assert_eq!(
                text.lines().next().unwrap(),
                header.join(","),
                "{rubric}: {name} has its documented columns"
            );
            assert!(!text.contains("NaN"), "{rubric}: {name} writes no NaN");
        }
        let prevalence = read("prevalence.csv").lines().count() - 1;
        assert_eq!(
            prevalence,
            if rubric == "psycrisis" { 15 } else { 0 },
            "{rubric}: one line per judge × binary criterion"
        );
        let by_category = read("agreement_by_category.csv");
        assert!(
            by_category.starts_with("category,"),
            "{rubric}: the table per category, its name first"
        );
        if rubric == "mentalbench" {
            assert!(
                by_category.starts_with("category,criterion,")
                    && by_category.contains("self-harm,"),
                "the 1–5 rubric's table per category"
            );
        }
        assert!(
            by_category.contains("eating,") && by_category.contains("only 1 response"),
            "{rubric}: the rare category's line carries its reason"
        );
        let Some(python) = &python else { continue };
        let (code, out) = recompute(python, &dir);
        assert_eq!(
            code,
            Some(0),
            "{rubric}: recompute.py reproduces every number of the appendix:\n{out}"
        );
        assert!(
            out.contains("of the reviewer's tables"),
            "{rubric}: the script says it checked the reviewer's tables: {out}"
        );
        // One number of each reviewer's table changed a little: each is caught by name.
        let to = tmp.path().join(format!("{rubric}-changed"));
        let mut changes: Vec<(&str, &str, &str)> = vec![
            ("gstudy.csv", "variance", "gstudy experts / "),
            ("dawid_skene.csv", "probability", "dawid-skene "),
        ];
        if rubric == "psycrisis" {
            changes.push(("prevalence.csv", "raw_rate", "prevalence "));
        } else {
            changes.push(("agreement_by_category.csv", "bias", "category "));
        }
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
        for (file, column, _) in &changes {
            change_in(&to.join(file), column, 0.01);
        }
        let (code, out) = recompute(python, &to);
        assert_eq!(
            code,
            Some(1),
            "{rubric}: a changed number fails the script:\n{out}"
        );
        for (file, _, label) in &changes {
            assert!(
                out.lines().any(|l| l.starts_with(label)),
                "{rubric}: the change in {file} is named ({label}…): {out}"
            );
        }
    }
}

/// `column` of the first line of the table at `path` that has a figure there, moved by `delta`.
fn change_in(path: &std::path::Path, column: &str, delta: f64) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    let at = header
        .iter()
        .position(|h| h == column)
        .expect("a column of the table");
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut changed = false;
    for record in reader.records() {
        let mut row: Vec<String> = record.unwrap().iter().map(str::to_string).collect();
        if !changed {
            if let Ok(v) = row[at].parse::<f64>() {
                row[at] = (v + delta).to_string();
                changed = true;
            }
        }
        rows.push(row);
    }
    assert!(changed, "{} has a figure to change", path.display());
    let mut w = csv::Writer::from_path(path).unwrap();
    w.write_record(&header).unwrap();
    for row in rows {
        w.write_record(&row).unwrap();
    }
    w.flush().unwrap();
}
