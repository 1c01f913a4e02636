//! The reviewer's questions of a study at the command line, run as a user would: the fixture's
//! files (`concord_testsupport::reviewer_study`, items with a category column) imported with
//! `concord import long-items|long-ratings`, then `concord agreement --by category`, checked
//! against the same command on a study imported from one category's rows alone.

use concord_testsupport::reviewer_study::{write_files, RubricFiles};
use serde_json::Value;
use std::collections::HashSet;
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
