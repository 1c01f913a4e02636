//! Timing of the reviewer's questions asked of a study, against their Python references on the
//! same files in the same run. The study is `concord_testsupport::reviewer_study`'s, scaled to
//! 1,000 conversations per category (3,004 conversations × 5 sources per rubric: 15,020
//! responses, 10,016 of them rated by three experts, all by three judges): corrected prevalence
//! of PsyCrisis's five dimensions per judge (the authors' `llm_judge_reporting`), the Dawid–Skene
//! reference of those five dimensions (`crowd-kit`), the experts' G-study of MentalBench's seven
//! attributes (numpy's ANOVA expected mean squares, equal to REML on these complete data) and
//! MentalBench agreement by category at system level (pingouin's ICC(C,1) with its F interval,
//! per category × judge × attribute). Each side's time includes reading its data: Concord's from
//! the study file, the peers' from the CSV files the study was imported from.
//!
//! `cargo bench -p concord-core --bench reviewer_study` imports the files into a temporary
//! study, times Concord (median of 3 runs), then runs `python3 benches/reviewer_study_peers.py
//! DIR` (another interpreter with `CONCORD_BENCH_PYTHON`; skipped with a note when absent),
//! checks that the numbers agree and prints one JSON object per method with the ratio.

use concord_core::base::clock::SteppingClock;
use concord_core::panel::adjudication::{referenced_data, AgreementReference};
use concord_core::panel::agreement::{AgreementData, AgreementOptions, Comparison, Level};
use concord_core::panel::gstudy::gstudy_section;
use concord_core::panel::prevalence::prevalence_rows;
use concord_core::panel::strata::{by_facet, Facet};
use concord_core::store::Store;
use concord_testsupport::reviewer_study::{import_files, write_files_scaled};
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

const PER_CATEGORY: usize = 1000;

fn time_it<T, F: FnMut() -> T>(reps: usize, mut f: F) -> (T, f64) {
    let mut out = f();
    let mut samples: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            out = black_box(f());
            t.elapsed().as_secs_f64()
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    (out, samples[samples.len() / 2])
}

fn peers(dir: &Path) -> Option<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/reviewer_study_peers.py");
    let program = std::env::var("CONCORD_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&program).arg(&script).arg(dir).output().ok()?;
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        eprintln!("note: the Python peers did not run ({program}); Concord's times only");
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

fn report(name: &str, concord_s: f64, peer: Option<(&serde_json::Value, &str)>) {
    let mut line = serde_json::json!({ "bench": name, "concord_s": concord_s });
    if let Some((s, who)) = peer {
        let s = s.as_f64().unwrap_or(f64::NAN);
        line[format!("{who}_s")] = serde_json::json!(s);
        line["ratio_reference_over_concord"] = serde_json::json!(s / concord_s);
    }
    println!("{line}");
}

fn near(a: f64, e: f64, tol: f64, what: &str) {
    assert!(
        (a - e).abs() <= tol * e.abs().max(1.0),
        "{what}: {a} vs {e}"
    );
}

fn main() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let clock = Arc::new(SteppingClock::new(1_700_000_000_000, 1));
    let mut store = Store::create(&dir.path().join("bench.concord"), clock).expect("a study");
    let t = Instant::now();
    for rubric in ["psycrisis", "mentalbench"] {
        import_files(
            &mut store,
            &write_files_scaled(dir.path(), rubric, 39, PER_CATEGORY),
        );
    }
    eprintln!("imported in {:.1} s", t.elapsed().as_secs_f64());
    let psycrisis = AgreementOptions {
        exclude_self_family: false,
        ..AgreementOptions::mentalalign("psycrisis")
    };
    let by_options = AgreementOptions {
        levels: vec![Level::System],
        groups: false,
        per_expert: false,
        resamples: 0,
        exclude_self_family: false,
        ..AgreementOptions::mentalalign("mentalbench")
    };
    let (prev, prev_s) = time_it(3, || {
        prevalence_rows(
            &AgreementData::load(&store, "psycrisis").expect("the rubric's ratings"),
            0.95,
            None,
        )
    });
    let (fits, ds_s) = time_it(3, || {
        referenced_data(&store, &psycrisis, AgreementReference::DawidSkene)
            .expect("the fits")
            .1
    });
    let (g, g_s) = time_it(3, || {
        gstudy_section(&store, "mentalbench").expect("G-studies")
    });
    let (split, by_s) = time_it(3, || {
        let (data, _) =
            referenced_data(&store, &by_options, AgreementReference::Experts).expect("the ratings");
        by_facet(&store, &data, Facet::Category, &by_options).expect("the strata")
    });
    let peer = peers(dir.path());
    let get = |k: &str| peer.as_ref().and_then(|p| p.get(k)).cloned();
    if let Some(p) = get("prevalence") {
        for r in &prev {
            let theirs = &p[format!("{}|{}", r.judge, r.criterion)];
            match r.corrected {
                Some(c) => {
                    near(c, theirs[0].as_f64().unwrap(), 1e-9, "corrected prevalence");
                    let ci = r.ci.unwrap();
                    near(ci[0], theirs[1].as_f64().unwrap(), 1e-9, "lower limit");
                    near(ci[1], theirs[2].as_f64().unwrap(), 1e-9, "upper limit");
                }
                None => assert!(
                    theirs.is_null(),
                    "no figure where the judge is uninformative"
                ),
            }
        }
    }
    if let Some(p) = get("consensus") {
        for f in &fits {
            let theirs = &p[&f.criterion];
            assert_eq!(
                f.iterations as u64,
                theirs["iterations"].as_u64().unwrap(),
                "crowd-kit's EM passes"
            );
            for (label, prior) in &f.priors {
                near(
                    *prior,
                    theirs["priors"][label].as_f64().unwrap(),
                    1e-6,
                    "prior",
                );
            }
        }
    }
    if let Some(p) = get("gstudy") {
        let mut compared = 0;
        for s in &g.studies {
            // Where an ANOVA estimate is negative REML differs by design; the peer says null.
            if p[&s.criterion].is_null() {
                continue;
            }
            for (name, v) in &s.components {
                near(*v, p[&s.criterion][name].as_f64().unwrap(), 1e-6, "σ²");
            }
            compared += 1;
        }
        assert!(compared > 0, "some attribute's components are compared");
    }
    if let Some(p) = get("by_category") {
        let mut compared = 0;
        for s in &split.strata {
            let Some(report) = &s.report else { continue };
            for c in report
                .cells
                .iter()
                .filter(|c| c.comparison == Comparison::JudgeVsExperts)
            {
                let key = format!(
                    "{}|{}|{}",
                    s.value.as_deref().unwrap_or(""),
                    c.rater,
                    c.criterion
                );
                if let (Some(icc), Some(theirs)) = (c.icc_c1, p[&key].as_f64()) {
                    near(icc, theirs, 1e-9, "ICC(C,1) of a category");
                    compared += 1;
                }
            }
        }
        assert!(compared > 50, "most cells compared ({compared})");
    }
    let secs = |k: &str| get(&format!("{k}_s"));
    report(
        "prevalence_study_15020_responses_x3_judges_x5_dimensions",
        prev_s,
        secs("prevalence")
            .as_ref()
            .map(|s| (s, "llm_judge_reporting")),
    );
    report(
        "dawid_skene_reference_10016_responses_x6_raters_x5_dimensions",
        ds_s,
        secs("consensus").as_ref().map(|s| (s, "crowd_kit")),
    );
    report(
        "gstudy_study_experts_10016_x3_x7_attributes",
        g_s,
        secs("gstudy").as_ref().map(|s| (s, "numpy_anova")),
    );
    report(
        "agreement_by_category_5_strata_x3_judges_x7_attributes",
        by_s,
        secs("by_category").as_ref().map(|s| (s, "pingouin")),
    );
}
