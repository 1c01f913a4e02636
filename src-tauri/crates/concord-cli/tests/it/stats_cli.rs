//! `concord stats icc|agreement|compare` run as a user would: the binary on small CSV files,
//! checking the JSON contract and the error messages.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

pub(crate) fn write_csv(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("temp file is writable");
    path
}

pub(crate) fn concord(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_concord"))
        .env(crate::KEY_DIR_ENV, crate::LEAD_KEY_DIR)
        .args(args)
        .output()
        .expect("the concord binary runs")
}

pub(crate) fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "command must succeed; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("--json prints one JSON document")
}

/// Shrout & Fleiss (1979), six targets × four judges, in long form.
fn shrout_fleiss_csv() -> String {
    let m = [
        [9, 2, 5, 8],
        [6, 1, 3, 2],
        [8, 4, 6, 8],
        [7, 1, 2, 6],
        [10, 5, 6, 9],
        [6, 2, 4, 7],
    ];
    let mut s = String::from("target,rater,score\n");
    for (t, row) in m.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            s.push_str(&format!("t{t},judge{j},{v}\n"));
        }
    }
    s
}

#[test]
fn icc_json_has_the_contract_shape_and_published_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_csv(&dir, "sf.csv", &shrout_fleiss_csv());
    let v = json_of(&concord(&[
        "stats",
        "icc",
        path.to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(v["n_targets"], 6, "six targets in the file");
    assert_eq!(v["n_raters"], 4, "four judges in the file");
    assert_eq!(v["n_targets_used"], 6, "no missing data, every target used");
    let rows = v["icc"].as_array().expect("icc is an array");
    let types: Vec<&str> = rows.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"],
        "six rows in the contract's order"
    );
    let published = [0.17, 0.29, 0.71, 0.44, 0.62, 0.91];
    for (row, p) in rows.iter().zip(published) {
        let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
        assert_eq!(
            keys.len(),
            7,
            "each row has exactly type, icc, f, df1, df2, p, ci95: {keys:?}"
        );
        let icc = row["icc"].as_f64().unwrap();
        assert!(
            (icc - p).abs() <= 0.005,
            "{} must round to Shrout & Fleiss's {p}, got {icc}",
            row["type"]
        );
        let ci = row["ci95"].as_array().unwrap();
        assert!(
            ci[0].as_f64().unwrap() <= icc && icc <= ci[1].as_f64().unwrap(),
            "the CI must contain the estimate"
        );
    }
    assert_eq!(rows[1]["df2"], 15.0, "two-way df2 = (n-1)(k-1) = 15");
}

#[test]
fn icc_drops_targets_with_missing_scores_and_reads_custom_columns() {
    let dir = tempfile::tempdir().unwrap();
    let text = "\u{feff}item,who,value\r\na,x,1\r\na,y,2\r\nb,x,3\r\nb,y,\r\nc,x,4\r\nc,y,5\r\nd,x,2\r\nd,y,2\r\ne,x,5\r\ne,y,4\r\n";
    let path = write_csv(&dir, "custom.csv", text);
    let out = concord(&[
        "stats",
        "icc",
        path.to_str().unwrap(),
        "--target",
        "item",
        "--rater",
        "who",
        "--score",
        "value",
        "--json",
    ]);
    let v = json_of(&out);
    assert_eq!(
        v["n_targets"], 5,
        "five targets in the file (BOM and CRLF must not disturb reading)"
    );
    assert_eq!(
        v["n_targets_used"], 4,
        "target b has an empty score and is dropped"
    );
}

#[test]
fn icc_without_json_prints_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_csv(&dir, "sf.csv", &shrout_fleiss_csv());
    let out = concord(&["stats", "icc", path.to_str().unwrap()]);
    assert!(out.status.success(), "text mode succeeds");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("ICC(C,1)") && text.contains("95% CI") && text.contains("0.715"),
        "text table names forms and values:\n{text}"
    );
}

#[test]
fn perfect_consistency_prints_infinite_f_as_null() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_csv(
        &dir,
        "parallel.csv",
        "target,rater,score\n1,a,1\n1,b,2\n2,a,2\n2,b,3\n3,a,4\n3,b,5\n",
    );
    let v = json_of(&concord(&[
        "stats",
        "icc",
        path.to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(
        v["icc"][2]["icc"], 1.0,
        "raters one point apart are perfectly consistent"
    );
    assert!(v["icc"][2]["f"].is_null(), "an infinite F prints as null");
}

#[test]
fn agreement_json_keys_and_fleiss_example() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("target,rater,score\n");
    let labels = [
        (1, 1),
        (1, 1),
        (0, 0),
        (1, 0),
        (0, 0),
        (1, 1),
        (0, 1),
        (1, 1),
        (0, 0),
        (1, 1),
    ];
    for (i, (a, b)) in labels.iter().enumerate() {
        text.push_str(&format!("{i},r1,{a}\n{i},r2,{b}\n"));
    }
    let path = write_csv(&dir, "binary.csv", &text);
    let v = json_of(&concord(&[
        "stats",
        "agreement",
        path.to_str().unwrap(),
        "--categories",
        "0,1",
        "--json",
    ]));
    for key in [
        "percent_agreement",
        "cohen_kappa",
        "fleiss_kappa",
        "gwet_ac1",
        "krippendorff_alpha",
        "n_items",
        "n_raters",
    ] {
        assert!(v.get(key).is_some(), "agreement output has key {key}");
    }
    assert_eq!(
        v["percent_agreement"], 0.8,
        "8 of 10 items labelled identically"
    );
    // 2×2 table [[3,1],[1,5]]: p_o = 0.8, p_e = 0.4·0.4 + 0.6·0.6 = 0.52, κ = 0.28/0.48.
    let k = v["cohen_kappa"].as_f64().unwrap();
    assert!(
        (k - 0.28 / 0.48).abs() < 1e-12,
        "Cohen's kappa from the 2×2 table, got {k}"
    );
    for metric in ["nominal", "ordinal", "interval"] {
        assert!(
            v["krippendorff_alpha"][metric].is_number(),
            "alpha {metric} is reported"
        );
    }
    assert_eq!(v["n_items"], 10, "ten items");
}

#[test]
fn agreement_with_three_raters_has_no_cohen_kappa() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("target,rater,score\n");
    for (i, row) in [
        ["a", "a", "b"],
        ["b", "b", "b"],
        ["a", "a", "a"],
        ["c", "b", "c"],
    ]
    .iter()
    .enumerate()
    {
        for (j, l) in row.iter().enumerate() {
            text.push_str(&format!("{i},r{j},{l}\n"));
        }
    }
    let path = write_csv(&dir, "three.csv", &text);
    let v = json_of(&concord(&[
        "stats",
        "agreement",
        path.to_str().unwrap(),
        "--json",
    ]));
    assert!(
        v["cohen_kappa"].is_null(),
        "Cohen's kappa needs exactly two raters"
    );
    assert!(
        v["fleiss_kappa"].is_number(),
        "Fleiss' kappa works for three raters"
    );
    assert!(
        v["krippendorff_alpha"]["interval"].is_null(),
        "text labels have no interval metric"
    );
    let pa = v["percent_agreement"].as_f64().unwrap();
    assert!(
        (pa - (1.0 / 3.0 + 1.0 + 1.0 + 1.0 / 3.0) / 4.0).abs() < 1e-12,
        "Fleiss' P-bar over items, got {pa}"
    );
}

#[test]
fn agreement_refuses_labels_outside_declared_categories() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_csv(
        &dir,
        "bad.csv",
        "target,rater,score\n1,a,0\n1,b,1\n2,a,2\n2,b,1\n",
    );
    let out = concord(&[
        "stats",
        "agreement",
        path.to_str().unwrap(),
        "--categories",
        "0,1",
        "--json",
    ]);
    assert!(!out.status.success(), "an undeclared label is an error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.csv") && err.contains("line 4") && err.contains("`2`"),
        "error names file, line and label: {err}"
    );
}

#[test]
fn compare_json_has_the_contract_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("target,rater,score\n");
    let pairs = [(4.0, 3.0), (5.0, 5.0), (3.0, 2.0), (2.0, 2.0), (4.0, 4.5)];
    for (i, (j, e)) in pairs.iter().enumerate() {
        text.push_str(&format!("{i},judge,{j}\n{i},expert,{e}\n"));
    }
    text.push_str("9,judge,3\n");
    let path = write_csv(&dir, "pairs.csv", &text);
    let v = json_of(&concord(&[
        "stats",
        "compare",
        path.to_str().unwrap(),
        "--a",
        "judge",
        "--b",
        "expert",
        "--json",
    ]));
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected = [
        "n",
        "bias",
        "sd_diff",
        "loa95",
        "mse",
        "rmse",
        "mae",
        "pearson",
        "spearman",
        "kendall_tau_b",
        "lin_ccc",
    ];
    expected.sort_unstable();
    let mut got = keys.clone();
    got.sort_unstable();
    assert_eq!(got, expected, "exactly the contract's keys");
    assert_eq!(v["n"], 5, "target 9 has no expert score and is left out");
    assert!(
        (v["bias"].as_f64().unwrap() - 0.3).abs() < 1e-12,
        "mean of judge − expert = (1+0+1+0−0.5)/5"
    );
    assert!(
        (v["mse"].as_f64().unwrap() - 0.45).abs() < 1e-12,
        "mean squared difference = 2.25/5"
    );
}

#[test]
fn errors_name_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let dup = write_csv(&dir, "dup.csv", "target,rater,score\n1,a,3\n1,b,4\n1,a,5\n");
    let out = concord(&["stats", "icc", dup.to_str().unwrap(), "--json"]);
    assert!(!out.status.success(), "duplicate ratings must fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("dup.csv")
            && err.contains("line 4")
            && err.contains("line 2")
            && err.contains("refused"),
        "duplicate error names both lines: {err}"
    );
    assert!(
        out.stdout.is_empty(),
        "nothing is printed on stdout after an error"
    );

    let bad = write_csv(&dir, "bad.csv", "target,rater,score\n1,a,3\n1,b,three\n");
    let err = String::from_utf8_lossy(&concord(&["stats", "icc", bad.to_str().unwrap()]).stderr)
        .to_string();
    assert!(
        err.contains("line 3") && err.contains("`score`") && err.contains("three"),
        "non-numeric score located: {err}"
    );

    let cols = write_csv(&dir, "cols.csv", "item,rater,score\n1,a,3\n");
    let err = String::from_utf8_lossy(&concord(&["stats", "icc", cols.to_str().unwrap()]).stderr)
        .to_string();
    assert!(
        err.contains("no column named `target`") && err.contains("item"),
        "unknown column error lists the header: {err}"
    );

    let ragged = write_csv(&dir, "ragged.csv", "target,rater,score\n1,a,3\n1,b\n");
    let err = String::from_utf8_lossy(&concord(&["stats", "icc", ragged.to_str().unwrap()]).stderr)
        .to_string();
    assert!(
        err.contains("ragged.csv") && err.contains("line 3"),
        "an unparsable row is located: {err}"
    );

    let out = concord(&[
        "stats",
        "compare",
        cols.to_str().unwrap(),
        "--target",
        "item",
        "--a",
        "a",
        "--b",
        "zed",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("zed"),
        "an unknown rater is named: {err}"
    );

    let out = concord(&[
        "stats",
        "icc",
        dir.path().join("absent.csv").to_str().unwrap(),
    ]);
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("absent.csv"),
        "a missing file is named"
    );
}

/// One design of the lme4 reference file, written as a long-form CSV.
fn lme4_case_csv(name: &str) -> (String, Value) {
    let doc: Value = serde_json::from_str(include_str!(
        "../../../concord-stats/tests/vectors/reml_lme4.json"
    ))
    .expect("the lme4 vectors are valid JSON");
    let case = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("the lme4 vectors hold the {name} design"))
        .clone();
    let mut s = String::from("target,rater,score\n");
    for r in case["ratings"].as_array().unwrap() {
        s.push_str(&format!("item{},expert{},{}\n", r[0], r[1], r[2]));
    }
    (s, case)
}

#[test]
fn icc_reml_json_has_the_contract_shape_and_lme4_values() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, case) = lme4_case_csv("incomplete_k2_of_6");
    let path = write_csv(&dir, "incomplete.csv", &csv);
    let v = json_of(&concord(&[
        "stats",
        "icc",
        path.to_str().unwrap(),
        "--method",
        "reml",
        "--json",
    ]));
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        ["icc", "n_raters", "n_ratings", "n_targets", "variance"],
        "the REML output has exactly the contract's keys"
    );
    assert_eq!(v["n_targets"], 60, "60 targets in the file");
    assert_eq!(v["n_raters"], 6, "6 raters in the file");
    assert_eq!(v["n_ratings"], 120, "every one of the 120 ratings is used");
    for comp in ["target", "rater", "residual"] {
        let (a, e) = (
            v["variance"][comp].as_f64().unwrap(),
            case["variance"][comp].as_f64().unwrap(),
        );
        assert!((a - e).abs() < 1e-4, "σ² {comp}: {a} vs lme4 {e}");
    }
    let rows = v["icc"].as_array().unwrap();
    let types: Vec<&str> = rows.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["ICC1", "ICC2", "ICC3"], "three REML forms in order");
    for r in rows {
        let t = r["type"].as_str().unwrap();
        let (a, e) = (r["icc"].as_f64().unwrap(), case["icc"][t].as_f64().unwrap());
        assert!((a - e).abs() < 1e-4, "{t}: {a} vs lme4 {e}");
        let ci = r["ci95"].as_array().unwrap();
        assert!(
            ci[0].as_f64().unwrap() < a && a < ci[1].as_f64().unwrap(),
            "{t}: the interval contains the estimate"
        );
    }
}

#[test]
fn icc_reml_says_when_a_component_is_on_the_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, _) = lme4_case_csv("boundary_rater");
    let path = write_csv(&dir, "boundary.csv", &csv);
    let out = concord(&["stats", "icc", path.to_str().unwrap(), "--method", "reml"]);
    assert!(
        out.status.success(),
        "a boundary fit is a result, not an error"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("boundary fit") && text.contains("rater variance"),
        "the text output names the component estimated at 0: {text}"
    );
}

#[test]
fn icc_reml_refuses_a_single_rater_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_csv(&dir, "one.csv", "target,rater,score\na,r1,1\nb,r1,2\n");
    let out = concord(&[
        "stats",
        "icc",
        path.to_str().unwrap(),
        "--method",
        "reml",
        "--json",
    ]);
    assert!(
        !out.status.success(),
        "one rater cannot give rater variance"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2 raters"),
        "the error says what is needed: {err}"
    );
}

fn reference_vectors() -> Value {
    serde_json::from_str(include_str!(
        "../../../concord-stats/tests/vectors/alttest_ppi.json"
    ))
    .expect("the alt-test/PPI vectors are valid JSON")
}

/// An alt-test case as a long CSV: annotators `h0…`, the judge `llm`.
fn alttest_csv(case: &Value) -> String {
    let mut s = String::from("target,rater,score\n");
    let label = |v: &Value| format!("{}", v.as_f64().unwrap());
    for (i, row) in case["humans"].as_array().unwrap().iter().enumerate() {
        for (h, v) in row.as_array().unwrap().iter().enumerate() {
            if !v.is_null() {
                s.push_str(&format!("item{i},h{h},{}\n", label(v)));
            }
        }
        let j = &case["judge"][i];
        if !j.is_null() {
            s.push_str(&format!("item{i},llm,{}\n", label(j)));
        }
    }
    s
}

#[test]
fn alttest_json_has_the_contract_shape_and_reference_values() {
    let dir = tempfile::tempdir().unwrap();
    let doc = reference_vectors();
    for name in [
        "likert_complete_neg_rmse",
        "binary_3_of_5_good_judge",
        "skipped_annotator",
    ] {
        let case = doc["alttest"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .expect("the case exists");
        let path = write_csv(&dir, &format!("{name}.csv"), &alttest_csv(case));
        let eps = case["epsilon"].to_string();
        let alpha = case["alpha"].to_string();
        let v = json_of(&concord(&[
            "stats",
            "alttest",
            path.to_str().unwrap(),
            "--judge",
            "llm",
            "--epsilon",
            &eps,
            "--alpha",
            &alpha,
            "--metric",
            case["metric"].as_str().unwrap(),
            "--json",
        ]));
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "advantage_probability",
                "alpha",
                "annotators",
                "epsilon",
                "passed",
                "winning_rate"
            ],
            "{name}: exactly the contract's keys"
        );
        for key in ["winning_rate", "advantage_probability", "epsilon", "alpha"] {
            let (a, e) = (v[key].as_f64().unwrap(), case[key].as_f64().unwrap());
            assert!((a - e).abs() < 1e-9, "{name} {key}: {a} vs reference {e}");
        }
        assert_eq!(v["passed"], case["passed"], "{name}: the verdict");
        let got = v["annotators"].as_array().unwrap();
        let want = case["annotators"].as_array().unwrap();
        assert_eq!(
            got.len(),
            want.len(),
            "{name}: the same annotators are tested"
        );
        for g in got {
            // The file lists raters in order of first appearance, not by index.
            let w = want
                .iter()
                .find(|w| format!("h{}", w["rater"]) == g["rater"].as_str().unwrap())
                .expect("every tested annotator is one of the reference's, named as in the file");
            let keys: Vec<&str> = g.as_object().unwrap().keys().map(|k| k.as_str()).collect();
            assert_eq!(
                keys,
                ["p_value", "rater", "rho_human", "rho_judge", "won"],
                "annotator keys"
            );
            assert_eq!(g["won"], w["won"], "{name}: who the judge wins against");
            let (a, e) = (
                g["p_value"].as_f64().unwrap(),
                w["p_value"].as_f64().unwrap(),
            );
            assert!((a - e).abs() < 1e-9, "{name}: p {a} vs {e}");
        }
    }
}

#[test]
fn alttest_refuses_too_few_annotators_and_unknown_judges() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("target,rater,score\n");
    for i in 0..40 {
        for r in ["a", "b", "llm"] {
            csv.push_str(&format!("t{i},{r},{}\n", i % 2));
        }
    }
    let path = write_csv(&dir, "two.csv", &csv);
    let out = concord(&[
        "stats",
        "alttest",
        path.to_str().unwrap(),
        "--judge",
        "llm",
        "--json",
    ]);
    assert!(!out.status.success(), "two annotators are refused");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("at least 3 human annotators"),
        "the error says why: {err}"
    );
    let out = concord(&[
        "stats",
        "alttest",
        path.to_str().unwrap(),
        "--judge",
        "gpt",
        "--json",
    ]);
    assert!(!out.status.success(), "an unknown judge is refused");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no rater named `gpt`") && err.contains("llm"),
        "the error lists the raters: {err}"
    );
}

#[test]
fn ppi_json_has_the_contract_shape_and_ppi_python_values() {
    let dir = tempfile::tempdir().unwrap();
    let doc = reference_vectors();
    let cases = doc["ppi"].as_array().unwrap();
    let mut csv = String::from("group,judge,expert\n");
    for case in cases {
        let g = case["name"].as_str().unwrap();
        for (e, j) in case["expert"]
            .as_array()
            .unwrap()
            .iter()
            .zip(case["judge_labeled"].as_array().unwrap())
        {
            csv.push_str(&format!(
                "{g},{},{}\n",
                j.as_f64().unwrap(),
                e.as_f64().unwrap()
            ));
        }
        for j in case["judge_unlabeled"].as_array().unwrap() {
            csv.push_str(&format!("{g},{},\n", j.as_f64().unwrap()));
        }
    }
    let path = write_csv(&dir, "ppi.csv", &csv);
    let v = json_of(&concord(&[
        "stats",
        "ppi",
        path.to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(v["alpha"], 0.05, "95% intervals by default");
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), cases.len(), "one result per group");
    for (g, case) in groups.iter().zip(cases) {
        let keys: Vec<&str> = g.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "ci95",
                "classical_ci95",
                "classical_estimate",
                "estimate",
                "group",
                "lambda",
                "n_labeled",
                "n_unlabeled"
            ],
            "exactly the contract's keys per group"
        );
        assert_eq!(g["group"], case["name"], "groups in file order");
        let pairs = [
            (&g["estimate"], &case["estimate"]),
            (&g["lambda"], &case["lambda"]),
            (&g["ci95"][0], &case["ci"][0]),
            (&g["ci95"][1], &case["ci"][1]),
            (&g["classical_estimate"], &case["classical_estimate"]),
            (&g["classical_ci95"][0], &case["classical_ci"][0]),
            (&g["classical_ci95"][1], &case["classical_ci"][1]),
        ];
        for (a, e) in pairs {
            let (a, e) = (a.as_f64().unwrap(), e.as_f64().unwrap());
            assert!(
                (a - e).abs() <= 1e-9 * e.abs().max(1.0),
                "{}: {a} vs ppi-python {e}",
                case["name"]
            );
        }
    }
}

#[test]
fn ppi_names_the_line_of_a_bad_score() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_csv(&dir, "bad.csv", "group,judge,expert\nm1,3,4\nm1,x,\n");
    let out = concord(&["stats", "ppi", path.to_str().unwrap(), "--json"]);
    assert!(
        !out.status.success(),
        "a non-numeric judge score is refused"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 3") && err.contains("`judge`"),
        "file, line and column named: {err}"
    );
}

#[test]
fn agreement_adds_specific_agreement_and_intervals_for_two_categories() {
    let doc: Value = serde_json::from_str(include_str!(
        "../../../concord-stats/tests/vectors/agreement_ci.json"
    ))
    .expect("valid JSON");
    let case = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "binary_four_raters_missing")
        .expect("the case exists")
        .clone();
    let mut csv = String::from("target,rater,score\n");
    for (i, row) in case["matrix"].as_array().unwrap().iter().enumerate() {
        for (r, v) in row.as_array().unwrap().iter().enumerate() {
            if let Some(v) = v.as_f64() {
                csv.push_str(&format!("t{i},r{r},{}\n", v as i64));
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write_csv(&dir, "binary.csv", &csv);
    let run = || {
        json_of(&concord(&[
            "stats",
            "agreement",
            path.to_str().unwrap(),
            "--categories",
            "0,1",
            "--json",
        ]))
    };
    let v = run();
    for key in [
        "percent_agreement",
        "cohen_kappa",
        "fleiss_kappa",
        "gwet_ac1",
        "krippendorff_alpha",
        "n_items",
        "n_raters",
    ] {
        assert!(v.get(key).is_some(), "the existing key {key} is kept");
    }
    let sa = &v["specific_agreement"];
    let keys: Vec<&str> = sa.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        ["negative", "positive"],
        "specific agreement has the contract's keys"
    );
    for side in ["positive", "negative"] {
        let (a, e) = (
            sa[side].as_f64().unwrap(),
            case["specific"][side].as_f64().unwrap(),
        );
        assert!((a - e).abs() < 1e-9, "{side} specific agreement {a} vs {e}");
    }
    for (i, e) in case["gwet"]["identity"]["ci"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let a = v["gwet_ac1_ci95"][i].as_f64().unwrap();
        assert!(
            (a - e.as_f64().unwrap()).abs() < 1e-9,
            "AC1 bound {i}: {a} vs irrCAC {e}"
        );
    }
    let ci = &v["krippendorff_alpha_ci95"]["nominal"];
    let alpha = v["krippendorff_alpha"]["nominal"].as_f64().unwrap();
    assert!(
        ci[0].as_f64().unwrap() < alpha && alpha < ci[1].as_f64().unwrap(),
        "the bootstrap interval brackets α"
    );
    assert_eq!(run(), v, "the seeded bootstrap gives the same output twice");
}
