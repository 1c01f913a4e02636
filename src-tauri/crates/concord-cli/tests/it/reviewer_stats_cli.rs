//! `concord stats prevalence|ppi-power|gstudy|consensus` run as a user would: the binary on CSV
//! files written from the statistics crate's reference vectors (the authors' package for
//! prevalence, ppi-python, numpy/statsmodels REML, crowd-kit), checking the contract's JSON keys,
//! the reference numbers and the refusals that name file, line and column.

use crate::stats_cli::{concord, json_of, write_csv};
use serde_json::Value;

fn vectors(name: &str) -> Value {
    let path = format!(
        "{}/../concord-stats/tests/vectors/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).expect("the vectors are committed"))
        .expect("vectors are JSON")
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    k.sort_unstable();
    k
}

fn near(actual: &Value, expected: &Value, tol: f64, what: &str) {
    let (a, e) = (actual.as_f64(), expected.as_f64());
    let (Some(a), Some(e)) = (a, e) else {
        panic!("{what}: both are numbers ({actual} vs {expected})");
    };
    assert!(
        (a - e).abs() <= tol * e.abs().max(1.0),
        "{what}: the command printed {a}, the reference has {e}"
    );
}

/// One row per item: `judged_positive` ones among all items; the calibration rows first. `None`
/// for the synthetic cases whose counts no table can hold (more judged positives among the
/// calibration rows than in all).
fn prevalence_csv(case: &Value) -> Option<String> {
    let n = |k: &str| case[k].as_u64().unwrap();
    let mut rows: Vec<(u8, Option<u8>)> = Vec::new();
    for (count, judge, expert) in [
        (n("true_positive"), 1, 1),
        (n("false_negative"), 0, 1),
        (n("true_negative"), 0, 0),
        (n("false_positive"), 1, 0),
    ] {
        rows.extend((0..count).map(|_| (judge, Some(expert))));
    }
    let judged_on_calibration = rows.iter().filter(|r| r.0 == 1).count() as u64;
    let more_positive = n("judged_positive").checked_sub(judged_on_calibration)?;
    let rest = n("n_items").checked_sub(rows.len() as u64)?;
    if more_positive > rest {
        return None;
    }
    rows.extend((0..rest).map(|i| (u8::from(i < more_positive), None)));
    let mut s = String::from("item,judge,expert\n");
    for (i, (j, e)) in rows.iter().enumerate() {
        let e = e.map_or(String::new(), |e| e.to_string());
        s.push_str(&format!("item{i},{j},{e}\n"));
    }
    Some(s)
}

#[test]
fn prevalence_prints_the_contract_keys_and_the_authors_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let doc = vectors("prevalence.json");
    let mut checked = 0;
    for case in doc["prevalence"].as_array().unwrap() {
        if case.get("error").is_some() || case["n_items"].as_u64().unwrap() > 20_000 {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        let Some(csv) = prevalence_csv(case) else {
            continue;
        };
        let path = write_csv(&dir, &format!("{name}.csv"), &csv);
        let level = case["level"].as_f64().unwrap().to_string();
        let mut args = vec![
            "stats",
            "prevalence",
            path.to_str().unwrap(),
            "--level",
            &level,
            "--json",
        ];
        let budget = case["allocate"].as_u64().map(|b| b.to_string());
        if let Some(b) = &budget {
            args.extend(["--allocate", b]);
        }
        let v = json_of(&concord(&args));
        let mut want = vec![
            "ci",
            "corrected",
            "level",
            "n_calibration",
            "n_items",
            "raw_rate",
            "sensitivity",
            "specificity",
        ];
        if budget.is_some() {
            want.insert(0, "allocation");
        }
        assert_eq!(keys(&v), want, "{name}: exactly the contract's keys");
        for k in ["raw_rate", "sensitivity", "specificity", "corrected"] {
            near(&v[k], &case[k], 1e-9, &format!("{name} {k}"));
        }
        near(
            &v["ci"][0],
            &case["ci"][0],
            1e-9,
            &format!("{name} lower limit"),
        );
        near(
            &v["ci"][1],
            &case["ci"][1],
            1e-9,
            &format!("{name} upper limit"),
        );
        if budget.is_some() {
            assert_eq!(
                v["allocation"], case["allocation"],
                "{name}: the authors' split"
            );
        }
        checked += 1;
    }
    assert!(checked >= 6, "most reference cases run through the binary");
}

#[test]
fn prevalence_refuses_degenerate_data_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let doc = vectors("prevalence.json");
    let case = doc["prevalence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "no_expert_positive")
        .expect("the vectors hold a calibration set without positives");
    let csv = prevalence_csv(case).expect("a table can hold these counts");
    let path = write_csv(&dir, "none.csv", &csv);
    let out = concord(&["stats", "prevalence", path.to_str().unwrap(), "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "no expert positive: no sensitivity, no number"
    );
    assert!(
        err.contains("none.csv") && err.contains("sensitivity"),
        "the refusal names the file and the missing rate: {err}"
    );
    assert!(out.stdout.is_empty(), "nothing is printed as a result");
    let bad = write_csv(&dir, "bad.csv", "item,judge,expert\na,1,\nb,yes,0\n");
    let out = concord(&["stats", "prevalence", bad.to_str().unwrap(), "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("bad.csv")
            && err.contains("line 3")
            && err.contains("`judge`"),
        "a label that is not 0/1 is refused with file, line and column: {err}"
    );
}

#[test]
fn ppi_power_matches_ppi_python_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let doc = vectors("ppi_power.json");
    for case in doc["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let mut csv = String::from("judge,expert\n");
        for (j, e) in case["judge"]
            .as_array()
            .unwrap()
            .iter()
            .zip(case["expert"].as_array().unwrap())
        {
            csv.push_str(&format!(
                "{},{}\n",
                j.as_f64().unwrap(),
                e.as_f64().unwrap()
            ));
        }
        let path = write_csv(&dir, &format!("{name}.csv"), &csv);
        let (ce, cj) = (
            case["cost_expert"].to_string(),
            case["cost_judge"].to_string(),
        );
        let (flag, goal) = match case["se"].as_f64() {
            Some(se) => ("--se", se.to_string()),
            None => ("--budget", case["budget"].to_string()),
        };
        let v = json_of(&concord(&[
            "stats",
            "ppi-power",
            path.to_str().unwrap(),
            "--cost-expert",
            &ce,
            "--cost-judge",
            &cj,
            flag,
            &goal,
            "--json",
        ]));
        assert_eq!(
            keys(&v),
            ["classical", "cost", "n_expert", "n_judge", "rho", "se"],
            "{name}: the contract's keys"
        );
        assert_eq!(
            keys(&v["classical"]),
            ["cost", "n_expert", "se"],
            "{name}: the expert-only design's keys"
        );
        assert_eq!(
            v["n_expert"], case["n"],
            "{name}: n as ppi-python rounds it"
        );
        assert_eq!(v["n_judge"], case["N"], "{name}: N as ppi-python rounds it");
        assert_eq!(
            v["classical"]["n_expert"], case["classical"]["n"],
            "{name}: expert-only n"
        );
        near(&v["cost"], &case["cost"], 1e-9, &format!("{name} cost"));
        near(&v["rho"], &case["ppi_corr"], 1e-9, &format!("{name} ρ"));
        near(&v["se"], &case["design_se"], 1e-9, &format!("{name} SE"));
    }
}

#[test]
fn gstudy_matches_the_references_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let doc = vectors("gtheory.json");
    for case in doc["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let facets = case["facets"].as_str().unwrap();
        let mut csv = String::from(if facets == "rater" {
            "target,rater,score\n"
        } else {
            "target,rater,occasion,score\n"
        });
        for row in case["scores"].as_array().unwrap() {
            let cells: Vec<String> = row
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_string))
                .collect();
            csv.push_str(&cells.join(","));
            csv.push('\n');
        }
        let path = write_csv(&dir, &format!("{name}.csv"), &csv);
        let v = json_of(&concord(&[
            "stats",
            "gstudy",
            path.to_str().unwrap(),
            "--facets",
            facets,
            "--json",
        ]));
        assert_eq!(
            keys(&v),
            ["components", "d_study", "g"],
            "{name}: the contract's keys"
        );
        let mut want: Vec<&str> = case["components"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        want.sort_unstable();
        assert_eq!(
            keys(&v["components"]),
            want,
            "{name}: the design's components, absent facets omitted"
        );
        for k in want {
            near(
                &v["components"][k],
                &case["components"][k],
                1e-4,
                &format!("{name} σ²({k})"),
            );
        }
        near(
            &v["g"]["relative"],
            &case["g"]["relative"],
            1e-4,
            &format!("{name} Eρ²"),
        );
        near(
            &v["g"]["absolute"],
            &case["g"]["absolute"],
            1e-4,
            &format!("{name} Φ"),
        );
        let rows = v["d_study"].as_array().unwrap();
        assert_eq!(
            rows.len(),
            case["d_study"].as_array().unwrap().len(),
            "{name}: every D-study design"
        );
        assert_eq!(
            keys(&rows[0]),
            ["absolute", "n_occasion", "n_rater", "relative"],
            "{name}: D-study keys"
        );
    }
    let one = write_csv(
        &dir,
        "one.csv",
        "target,rater,occasion,score\nt1,a,o1,1\nt1,b,o1,2\nt2,a,o1,3\nt2,b,o1,5\n",
    );
    let out = concord(&[
        "stats",
        "gstudy",
        one.to_str().unwrap(),
        "--facets",
        "rater,occasion",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("occasion") && err.contains("one level"),
        "a facet with one level is refused by name: {err}"
    );
}

#[test]
fn consensus_matches_crowd_kit_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let doc = vectors("dawid_skene.json");
    for case in doc["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let mut csv = String::from("item,rater,label\n");
        for r in case["ratings"].as_array().unwrap() {
            csv.push_str(&format!(
                "{},{},{}\n",
                r[0].as_str().unwrap(),
                r[1].as_str().unwrap(),
                r[2].as_str().unwrap()
            ));
        }
        let path = write_csv(&dir, &format!("{name}.csv"), &csv);
        let (max_iter, tol) = (case["max_iter"].to_string(), case["tol"].to_string());
        let mut args = vec![
            "stats",
            "consensus",
            path.to_str().unwrap(),
            "--method",
            "dawid-skene",
            "--max-iter",
            &max_iter,
            "--tol",
            &tol,
            "--json",
        ];
        let gold_path;
        if let Some(gold) = case["gold"].as_array() {
            let mut g = String::from("item,label\n");
            for p in gold {
                g.push_str(&format!(
                    "{},{}\n",
                    p[0].as_str().unwrap(),
                    p[1].as_str().unwrap()
                ));
            }
            gold_path = write_csv(&dir, &format!("{name}-gold.csv"), &g);
            args.extend(["--gold", gold_path.to_str().unwrap()]);
        }
        let judges = case["judges"].as_array().map(|j| {
            j.iter()
                .map(|x| x.as_str().unwrap())
                .collect::<Vec<_>>()
                .join(",")
        });
        if let Some(j) = &judges {
            args.extend(["--judges", j]);
        }
        let v = json_of(&concord(&args));
        let mut want = vec!["converged", "items", "iterations", "priors", "raters"];
        if judges.is_some() {
            want.push("judge_error_correlation");
            want.sort_unstable();
        }
        assert_eq!(keys(&v), want, "{name}: the contract's keys");
        assert_eq!(
            v["iterations"], case["iterations"],
            "{name}: crowd-kit's number of EM passes"
        );
        assert_eq!(
            v["converged"], case["converged"],
            "{name}: its stopping rule"
        );
        for item in v["items"].as_array().unwrap() {
            let id = item["item"].as_str().unwrap();
            for (label, p) in item["posterior"].as_object().unwrap() {
                near(
                    p,
                    &case["posteriors"][id][label],
                    1e-4,
                    &format!("{name} P({id} = {label})"),
                );
            }
        }
        for (label, p) in v["priors"].as_object().unwrap() {
            near(
                p,
                &case["priors"][label],
                1e-4,
                &format!("{name} prior {label}"),
            );
        }
        for rater in v["raters"].as_array().unwrap() {
            let id = rater["rater"].as_str().unwrap();
            for (truth, row) in rater["confusion"].as_object().unwrap() {
                for (given, p) in row.as_object().unwrap() {
                    let expected = case["confusion"][id][truth]
                        .get(given)
                        .cloned()
                        .unwrap_or(Value::from(0.0));
                    near(
                        p,
                        &expected,
                        1e-4,
                        &format!("{name} {id} says {given} | {truth}"),
                    );
                }
            }
        }
        if let Some(pairs) = case["judge_error_correlation"].as_array() {
            for (got, want) in v["judge_error_correlation"]
                .as_array()
                .unwrap()
                .iter()
                .zip(pairs)
            {
                assert_eq!(
                    (&got["a"], &got["b"]),
                    (&want["a"], &want["b"]),
                    "{name}: pairs in the order named"
                );
                if want["phi"].is_null() {
                    assert!(got["phi"].is_null(), "{name}: undefined φ is null");
                } else {
                    near(&got["phi"], &want["phi"], 1e-9, &format!("{name} φ"));
                }
                assert_eq!(keys(got), ["a", "b", "phi"], "{name}: the pair's keys");
            }
        }
    }
}

#[test]
fn consensus_refuses_a_judge_that_is_not_a_rater() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_csv(
        &dir,
        "l.csv",
        "item,rater,label\n1,a,x\n1,b,y\n2,a,x\n2,b,x\n",
    );
    let out = concord(&[
        "stats",
        "consensus",
        path.to_str().unwrap(),
        "--judges",
        "a,zed",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("zed") && err.contains("l.csv"),
        "an unknown judge is named with the file: {err}"
    );
    let dup = write_csv(&dir, "d.csv", "item,rater,label\n1,a,x\n1,a,y\n");
    let out = concord(&["stats", "consensus", dup.to_str().unwrap(), "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("line 3") && err.contains("line 2"),
        "a rater labelling an item twice is refused with both lines: {err}"
    );
}
