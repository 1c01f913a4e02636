//! The agreement panel on a large study, timed through the code the window runs: open the study,
//! then what the Agreement screen asks for when it opens (`OpenStudy::agreement` and
//! `OpenStudy::agreement_table` with the screen's default options and view, both serialised to
//! JSON as the IPC layer does) — "open"; then one expert's value from the rating screen
//! (`OpenStudy::rate`: the durable save and the in-memory update of the cached report) followed by
//! the screen's refresh (report and table again, serialised) — "update"; then the judge verdict
//! cards the screen asks for below the table, and the in-memory update alone.
//!
//! Run: `cargo run --release -p concord-core --example panel_open -- STUDY [RUNS]`
//!
//! STUDY needs expert ratings and an expert with an assigned queue (the scale generator,
//! `concord-cli/benches/scale.py`, makes both: `expert0` gets a small assignment). Each "open"
//! run opens the study afresh (nothing cached); the update runs rate the last item of `expert0`'s queue,
//! cycling the value, so the study file changes by those ratings. Prints medians (and every run).

use concord_core::app::open_study::OpenStudy;
use concord_core::base::clock::SystemClock;
use concord_core::panel::agreement::verdict::VerdictOptions;
use concord_core::panel::agreement::AgreementEngine;
use concord_core::panel::agreement::AgreementOptions;
use concord_core::panel::agreement::Comparison;
use concord_core::panel::agreement::Level;
use concord_core::panel::agreement_table::CiChoice;
use concord_core::panel::agreement_table::IccChoice;
use concord_core::panel::agreement_table::TableView;
use concord_core::store::Store;
use concord_core::workflow::queue;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

fn median(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

fn list(ms: &[f64]) -> String {
    ms.iter()
        .map(|m| format!("{m:.1}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Agreement screen's first request: the report and the table, serialised for the window.
fn panel(study: &mut OpenStudy, options: &AgreementOptions, view: TableView) -> usize {
    let report = serde_json::to_string(study.agreement(options).expect("report")).expect("json");
    let table =
        serde_json::to_string(&study.agreement_table(options, view).expect("table")).expect("json");
    report.len() + table.len()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().expect("usage: panel_open STUDY [RUNS]"));
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    // The screen's defaults (AgreementPanel.svelte).
    let options = AgreementOptions {
        rubric: "mentalbench".into(),
        seed: 42,
        resamples: 1000,
        levels: vec![Level::System, Level::Item],
        groups: true,
        per_expert: true,
        exclude_self_family: true,
    };
    let view = TableView {
        level: Level::System,
        comparison: Comparison::JudgeVsExperts,
        icc: IccChoice::C1,
        ci: CiChoice::Bootstrap,
    };

    let mut open = Vec::new();
    let mut bytes = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let store = Store::open(&path, Arc::new(SystemClock)).expect("study opens");
        let mut study = OpenStudy::new(store);
        bytes = panel(&mut study, &options, view);
        open.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "open (first table drawn, {bytes} bytes of JSON): median {:.1} ms over {runs} runs [{}]",
        median(open.clone()),
        list(&open)
    );

    let store = Store::open(&path, Arc::new(SystemClock)).expect("study opens");
    let mut study = OpenStudy::new(store);
    panel(&mut study, &options, view);
    let rater = study
        .store()
        .rater_named("expert0")
        .expect("raters")
        .expect("the study has expert0 (scale.py makes one)")
        .id;
    // The last item of the queue, so the window's latency journey (items from the first on) finds
    // its items unrated.
    let item = queue::open_queue(study.store_mut(), rater)
        .expect("expert0 has a queue")
        .total;
    // `store_mut` dropped the cache: load it again before timing updates.
    panel(&mut study, &options, view);
    let (mut save, mut refresh, mut total) = (Vec::new(), Vec::new(), Vec::new());
    for n in 0..runs.max(5) * 4 {
        let value = 1 + (n as i64 % 5);
        let t = Instant::now();
        study
            .rate(rater, item, "guidance", value, None)
            .expect("durable save");
        let saved = t.elapsed().as_secs_f64() * 1e3;
        panel(&mut study, &options, view);
        let all = t.elapsed().as_secs_f64() * 1e3;
        save.push(saved);
        refresh.push(all - saved);
        total.push(all);
    }
    println!(
        "update (one expert rating -> panel refreshed): median {:.1} ms = rate {:.1} ms (durable save + in-memory update) + refresh {:.1} ms, over {} runs [{}]",
        median(total.clone()),
        median(save),
        median(refresh),
        total.len(),
        list(&total)
    );

    // The verdict cards below the table: asked for once the table is drawn, and again after
    // each rating (they read every response of the rubric, loaded on the first request).
    let verdict = VerdictOptions::default();
    let t = Instant::now();
    let cards = serde_json::to_string(&study.judge_verdicts(&options, &verdict).expect("verdicts"))
        .expect("json")
        .len();
    let first = t.elapsed().as_secs_f64() * 1e3;
    let mut again = Vec::new();
    for n in 0..runs {
        study
            .rate(rater, item, "guidance", 1 + (n as i64 % 5), None)
            .expect("durable save");
        let t = Instant::now();
        serde_json::to_string(&study.judge_verdicts(&options, &verdict).expect("verdicts"))
            .expect("json");
        again.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "judge verdicts ({cards} bytes of JSON): first request {first:.1} ms (loads every response), after a rating median {:.1} ms [{}]",
        median(again.clone()),
        list(&again)
    );

    // The in-memory part alone: the engine the open study holds, given the same kind of value
    // (an expert's, on a response experts rated) without the save.
    let mut engine = AgreementEngine::load(study.store(), options.clone()).expect("engine");
    let data = engine.data();
    let expert = data.experts()[0];
    let (expert_id, criterion_id) = (data.raters[expert].id, data.criteria[0].id);
    let responses: Vec<i64> = data.responses.iter().map(|r| r.id).take(40).collect();
    let mut apply = Vec::new();
    for (n, &response) in responses.iter().enumerate() {
        let t = Instant::now();
        let cells = engine
            .apply(
                expert_id,
                response,
                criterion_id,
                Some(1.0 + (n % 5) as f64),
            )
            .expect("applied");
        apply.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(cells > 0, "an expert value changes some cells");
    }
    println!(
        "in-memory update alone (AgreementEngine::apply, {} expert values): median {:.1} ms [{}]",
        apply.len(),
        median(apply.clone()),
        list(&apply)
    );
}
