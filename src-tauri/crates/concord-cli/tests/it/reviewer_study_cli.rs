//! The reviewer's questions of a study at the command line, run as a user would: the fixture's
//! files (`concord_testsupport::reviewer_study`, items with a category column) imported with
//! `concord import long-items|long-ratings`, then `concord agreement --by category`, checked
//! against the same command on a study imported from one category's rows alone;
//! `--prevalence` and `--reference dawid-skene`, checked against `concord stats prevalence` and
//! `concord stats consensus` on the same labels written as CSV.

use concord_testsupport::reviewer_study::{write_files, RubricFiles};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::{Command, Output};

const SEED: u64 = 39;

pub(crate) fn concord(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("the concord binary runs")
}

pub(crate) fn json(db: &Path, args: &[&str]) -> Value {
    let out = concord(db, args);
    assert!(
        out.status.success(),
        "concord {args:?} succeeds: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("--json prints one JSON document")
}

/// Import a rubric's three files into `db` with the command line.
pub(crate) fn import(db: &Path, files: &RubricFiles) {
    let path = |p: &Path| p.to_str().expect("a UTF-8 path").to_string();
    for args in [
        vec![
            "import",
            "long-items",
            &path(&files.items),
            "--rubric",
            files.rubric,
        ],
        vec![
            "import",
            "long-ratings",
            &path(&files.experts),
            "--rubric",
            files.rubric,
        ],
        vec![
            "import",
            "long-ratings",
            &path(&files.judges),
            "--rubric",
            files.rubric,
            "--kind",
            "judge",
        ],
    ] {
        let out = concord(db, &args);
        assert!(
            out.status.success(),
            "concord {args:?} succeeds: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A study of the fixture's two rubrics in `dir`, imported with the command line.
pub(crate) fn study(dir: &Path) -> (std::path::PathBuf, Vec<RubricFiles>) {
    let db = dir.join("study.concord");
    let files: Vec<RubricFiles> = ["psycrisis", "mentalbench"]
        .into_iter()
        .map(|r| write_files(dir, r, SEED))
        .collect();
    for f in &files {
        import(&db, f);
    }
    (db, files)
}

/// The rows of `from` whose first cell (or whole line) passes `keep`, into `to`.
fn filtered(from: &Path, to: &Path, keep: impl Fn(&str) -> bool) {
    let text = std::fs::read_to_string(from).expect("a fixture file");
    let mut lines = text.lines();
    let mut out = format!("{}\n", lines.next().expect("a header"));
    for line in lines.filter(|l| keep(l)) {
        out.push_str(line);
        out.push('\n');
    }
    std::fs::write(to, out).expect("the part is written");
}

#[test]
fn agreement_by_category_equals_each_category_imported_alone() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (db, files) = study(dir.path());
    let alone = dir.path().join("existential.concord");
    for f in &files {
        let part = |name: &str| {
            dir.path()
                .join(format!("existential-{}-{name}.csv", f.rubric))
        };
        let one = RubricFiles {
            rubric: f.rubric,
            items: part("items"),
            experts: part("experts"),
            judges: part("judges"),
        };
        filtered(&f.items, &one.items, |l| l.ends_with(",existential"));
        let kept: HashSet<String> = std::fs::read_to_string(&one.items)
            .expect("the part")
            .lines()
            .skip(1)
            .filter_map(|l| l.split(',').nth(2).map(str::to_string))
            .collect();
        let first = |l: &str| l.split(',').next().unwrap_or("").to_string();
        filtered(&f.experts, &one.experts, |l| kept.contains(&first(l)));
        filtered(&f.judges, &one.judges, |l| kept.contains(&first(l)));
        import(&alone, &one);
    }
    for (rubric, method) in [("mentalbench", "mentalalign"), ("psycrisis", "full")] {
        let args = [
            "agreement",
            "--rubric",
            rubric,
            "--method",
            method,
            "--resamples",
            "200",
            "--json",
        ];
        let mut by = args.to_vec();
        by.extend(["--by", "category"]);
        let split = json(&db, &by);
        assert_eq!(split["by"], "category", "the output names its facet");
        assert_eq!(split["reference"], "experts", "and its reference");
        let strata = split["strata"].as_array().expect("a list of strata");
        let names: Vec<Value> = strata.iter().map(|s| s["category"].clone()).collect();
        let expected: Vec<Value> = ["eating", "existential", "self-harm", "suicidal-ideation"]
            .into_iter()
            .map(Value::from)
            .chain([Value::Null])
            .collect();
        assert_eq!(
            names, expected,
            "each category under its facet's name, the responses without one last as null"
        );
        let rare = &strata[0];
        assert!(
            rare["not_computed"]
                .as_str()
                .is_some_and(|w| w.contains("only 1 response")),
            "the rare category says why it has no figures: {rare}"
        );
        assert!(
            rare.get("rows").is_none() && rare.get("report").is_none(),
            "and gives none"
        );
        let existential = &strata[1];
        let whole = json(&alone, &args);
        let key = if method == "full" { "report" } else { "rows" };
        assert_eq!(
            existential[key], whole,
            "{rubric}: the category's {key} are those of a study of its responses alone"
        );
        assert!(
            !String::from_utf8_lossy(&concord(&db, &by).stdout).contains("NaN"),
            "no figure prints as NaN"
        );
    }
}

/// The rows of a ratings file: (item, rater, criterion, value).
fn rows_of(path: &Path) -> Vec<(String, String, String, String)> {
    std::fs::read_to_string(path)
        .expect("a fixture file")
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].into(), f[1].into(), f[2].into(), f[3].into())
        })
        .collect()
}

/// The experts' strict majority of every item on `criterion` (three experts: never a tie on
/// a binary criterion).
fn expert_majority(files: &RubricFiles, criterion: &str) -> BTreeMap<String, u8> {
    let mut votes: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for (item, _, c, v) in rows_of(&files.experts) {
        if c == criterion {
            let e = votes.entry(item).or_default();
            if v == "1" {
                e.0 += 1
            } else {
                e.1 += 1
            }
        }
    }
    votes
        .into_iter()
        .map(|(item, (ones, zeros))| (item, u8::from(ones > zeros)))
        .collect()
}

#[test]
fn prevalence_in_a_study_equals_the_csv_command_on_the_same_labels() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (db, files) = study(dir.path());
    let psycrisis = &files[0];
    let rows = json(
        &db,
        &["agreement", "--prevalence", "--allocate", "400", "--json"],
    );
    let rows = rows
        .as_array()
        .expect("one row per judge × binary criterion");
    assert_eq!(
        rows.len(),
        3 * 5,
        "three judges × PsyCrisis's five binary dimensions (MentalBench has none)"
    );
    let judges = rows_of(&psycrisis.judges);
    let mut checked = 0;
    for row in rows {
        let (judge, criterion) = (
            row["judge"].as_str().expect("a judge"),
            row["criterion"].as_str().expect("a criterion"),
        );
        assert_eq!(row["rubric"], "psycrisis", "the rubric is named");
        let majority = expert_majority(psycrisis, criterion);
        let mut csv = String::from("item,judge,expert\n");
        for (item, rater, c, v) in &judges {
            if rater == judge && c == criterion {
                let e = majority.get(item).map_or(String::new(), |e| e.to_string());
                csv.push_str(&format!("{item},{v},{e}\n"));
            }
        }
        let file = dir.path().join(format!("{judge}-{criterion}.csv"));
        std::fs::write(&file, csv).expect("the CSV is written");
        let out = concord(
            &db,
            &[
                "stats",
                "prevalence",
                file.to_str().expect("UTF-8"),
                "--allocate",
                "400",
                "--json",
            ],
        );
        if row["corrected"].is_null() {
            let why = row["not_computed"]
                .as_str()
                .expect("a reason instead of a figure");
            assert!(
                !out.status.success(),
                "{judge} on {criterion}: the CSV command refuses what the study gives no figure for"
            );
            assert!(
                String::from_utf8_lossy(&out.stderr).contains(why.split(':').next().unwrap_or(why)),
                "{judge} on {criterion}: both say the same reason: {why}"
            );
            assert!(row["ci"].is_null(), "no interval beside the reason");
            continue;
        }
        let csv: Value = serde_json::from_slice(&out.stdout).expect("the CSV command's JSON");
        for key in [
            "n_items",
            "n_calibration",
            "raw_rate",
            "sensitivity",
            "specificity",
            "corrected",
            "ci",
            "level",
            "allocation",
        ] {
            assert_eq!(
                row[key], csv[key],
                "{judge} on {criterion}: {key} in the study equals the CSV command on the same labels"
            );
        }
        checked += 1;
    }
    assert!(
        checked >= 5,
        "the good and fair judges have corrected figures: {checked}"
    );
    let contrarian: Vec<&Value> = rows
        .iter()
        .filter(|r| r["judge"] == "judge-contrarian")
        .collect();
    assert!(
        contrarian.iter().any(|r| r["not_computed"]
            .as_str()
            .is_some_and(|w| w.contains("no better than chance"))),
        "the contrarian judge is refused with the reason: {contrarian:?}"
    );
}

#[test]
fn dawid_skene_reference_fits_as_the_csv_command_and_compares_judges_with_it() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (db, files) = study(dir.path());
    let psycrisis = &files[0];
    let report = json(
        &db,
        &[
            "agreement",
            "--rubric",
            "psycrisis",
            "--method",
            "full",
            "--reference",
            "dawid-skene",
            "--resamples",
            "100",
            "--json",
        ],
    );
    let fits = report["dawid_skene"]
        .as_array()
        .expect("the fits beside the report");
    assert_eq!(fits.len(), 5, "one fit per binary dimension");
    let fit = &fits[0];
    let criterion = fit["criterion"].as_str().expect("a criterion");
    // The same values as an item,rater,label file: the study's compared responses are those
    // some expert rated.
    let rated: HashSet<String> = rows_of(&psycrisis.experts)
        .into_iter()
        .map(|r| r.0)
        .collect();
    let mut csv = String::from("item,rater,label\n");
    for (item, rater, c, v) in rows_of(&psycrisis.experts)
        .into_iter()
        .chain(rows_of(&psycrisis.judges))
    {
        if c == criterion && rated.contains(&item) {
            csv.push_str(&format!("{item},{rater},{v}\n"));
        }
    }
    let file = dir.path().join("labels.csv");
    std::fs::write(&file, csv).expect("the CSV is written");
    let alone = json(
        &db,
        &[
            "stats",
            "consensus",
            file.to_str().expect("UTF-8"),
            "--judges",
            "judge-good,judge-fair,judge-contrarian",
            "--json",
        ],
    );
    assert_eq!(fit["iterations"], alone["iterations"], "the same EM passes");
    assert_eq!(
        fit["converged"], alone["converged"],
        "and the same stopping"
    );
    for label in ["0", "1"] {
        let (a, b) = (&fit["priors"][label], &alone["priors"][label]);
        assert!(
            (a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-9,
            "prior of {label}: {a} in the study, {b} from the CSV"
        );
    }
    for rater in alone["raters"].as_array().expect("raters") {
        let name = rater["rater"].as_str().expect("a name");
        let ours = fit["raters"]
            .as_array()
            .and_then(|r| r.iter().find(|x| x["rater"] == name))
            .unwrap_or_else(|| panic!("{name} is in the study's fit"));
        for truth in ["0", "1"] {
            for given in ["0", "1"] {
                let (a, b) = (
                    ours["confusion"][truth][given].as_f64().unwrap(),
                    rater["confusion"][truth][given].as_f64().unwrap(),
                );
                assert!(
                    (a - b).abs() < 1e-9,
                    "{name} P({given} | {truth}): {a} in the study, {b} from the CSV"
                );
            }
        }
    }
    let pairs = fit["judge_error_correlation"].as_array().expect("pairs");
    let csv_pairs = alone["judge_error_correlation"].as_array().expect("pairs");
    assert_eq!(pairs.len(), 3, "three judges make three pairs");
    for p in pairs {
        let same = csv_pairs
            .iter()
            .find(|q| {
                (q["a"] == p["a"] && q["b"] == p["b"]) || (q["a"] == p["b"] && q["b"] == p["a"])
            })
            .expect("the same pair from the CSV");
        assert!(
            (p["phi"].as_f64().unwrap() - same["phi"].as_f64().unwrap()).abs() < 1e-9,
            "φ of {} and {}",
            p["a"],
            p["b"]
        );
    }
    let binary = report["binary"].as_array().expect("binary rows");
    assert!(
        binary.iter().any(|b| b["experts"] == false),
        "judges are compared on every dimension"
    );
    let text = concord(
        &db,
        &[
            "agreement",
            "--rubric",
            "psycrisis",
            "--reference",
            "dawid-skene",
            "--resamples",
            "100",
        ],
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Dawid–Skene latent consensus")
            && text.contains("errors of judge-fair and judge-good"),
        "the text output prints the fits: {text}"
    );
}

#[test]
fn the_experts_g_study_equals_the_csv_command_on_their_ratings() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (db, files) = study(dir.path());
    let section = json(&db, &["agreement", "--gstudy", "--json"]);
    assert_eq!(section["rubric"], "mentalbench", "MentalBench by default");
    assert_eq!(section["target_reliability"], 0.8, "the D-study's target");
    let studies = section["studies"].as_array().expect("studies");
    assert_eq!(
        studies.len(),
        7,
        "the experts per attribute; imported judges never repeated themselves"
    );
    for s in studies {
        assert_eq!(s["kind"], "experts", "the experts' study");
        assert_eq!(
            s["facets"],
            serde_json::json!(["rater"]),
            "without retests the design is experts × responses"
        );
        let criterion = s["criterion"].as_str().expect("a criterion");
        let mut csv = String::from("target,rater,score\n");
        for (item, rater, c, v) in rows_of(&files[1].experts) {
            if c == criterion {
                csv.push_str(&format!("{item},{rater},{v}\n"));
            }
        }
        let file = dir.path().join(format!("g-{criterion}.csv"));
        std::fs::write(&file, csv).expect("the CSV is written");
        let alone = json(
            &db,
            &[
                "stats",
                "gstudy",
                file.to_str().expect("UTF-8"),
                "--facets",
                "rater",
                "--json",
            ],
        );
        for key in ["target", "rater", "residual"] {
            let (a, b) = (
                s["components"][key].as_f64().expect("a component"),
                alone["components"][key].as_f64().expect("a component"),
            );
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                "{criterion}: σ²({key}) {a} in the study, {b} from the CSV"
            );
        }
        assert_eq!(s["g"], alone["g"], "{criterion}: the same G coefficients");
        let d: Vec<&Value> = alone["d_study"].as_array().expect("rows").iter().collect();
        assert_eq!(
            s["d_study"].as_array().expect("rows").len(),
            d.len(),
            "{criterion}: the same D-study"
        );
    }
    let text = concord(&db, &["agreement", "--gstudy"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("experts · Guidance (responses × rater)") && text.contains("G: relative"),
        "the text output names each study and its coefficients: {text}"
    );
}
