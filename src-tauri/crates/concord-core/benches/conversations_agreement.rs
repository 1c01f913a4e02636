//! The agreement panel on conversations at scale: CONVERSATIONS transcripts of 20 turns — the
//! chatbot's replies at turns 2, 4, …, 18 and four candidate replies at turn 20, 13 rated items
//! each (130,000 at the default 10,000) — every item rated by two judges on MentalBench's seven
//! attributes, and two experts rating every item of a share of the conversations (EXPERT_SHARE,
//! default 0.1, as the MentalBench-scale benchmark). What is timed is what the panel asks for
//! when it opens on the rubric, each on the study opened afresh, serialised to JSON as the IPC
//! layer does: the report (both levels, groups, per-expert comparisons: item-level intervals are
//! the conversation-cluster bootstrap), its table at item level — the panel's first table drawn
//! — and then the table by turn the panel asks for below it (`app::agreement::panel_by`: item
//! level, judges against the experts' mean, from the ratings already held). Median of RUNS
//! (default 3); one JSON line per phase with the process's peak resident memory (VmHWM) after it.
//!
//! Run: `cargo bench -p concord-core --bench conversations_agreement [-- CONVERSATIONS
//! EXPERT_SHARE RUNS]`; with `CONCORD_BENCH_KEEP=FILE` the study is written to FILE, or read from
//! it when it exists (the phases then time the panel alone).

use concord_core::app::open_study::OpenStudy;
use concord_core::base::clock::SystemClock;
use concord_core::panel::adjudication::AgreementReference;
use concord_core::panel::agreement::{AgreementOptions, Comparison, Level};
use concord_core::panel::agreement_table::{CiChoice, IccChoice, TableView};
use concord_core::panel::strata::Facet;
use concord_core::store::Store;
use concord_testsupport::transcript_study::{write_transcripts, TranscriptDesign};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn line(phase: &str, seconds: f64, extra: serde_json::Value) {
    let mut out = serde_json::json!({
        "bench": "conversations_agreement",
        "phase": phase,
        "seconds": (seconds * 1000.0).round() / 1000.0,
        "peak_rss_mib": (peak_rss_mib() * 10.0).round() / 10.0,
    });
    if let (Some(o), Some(e)) = (out.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    println!("{out}");
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// The panel's opening on `path`: (report + table, by turn) seconds, JSON bytes, cells, turns.
fn open_panel(path: &Path) -> (f64, f64, usize, usize, usize) {
    let options = AgreementOptions::mentalalign("mentalbench");
    let view = TableView {
        level: Level::Item,
        comparison: Comparison::JudgeVsExperts,
        icc: IccChoice::C1,
        ci: CiChoice::Bootstrap,
    };
    let store = Store::open(path, Arc::new(SystemClock)).expect("the study opens");
    let mut study = OpenStudy::new(store);
    let t = Instant::now();
    let report = study.agreement(&options).expect("the report").clone();
    let table = study.agreement_table(&options, view).expect("the table");
    let bytes =
        serde_json::to_vec(&report).unwrap().len() + serde_json::to_vec(&table).unwrap().len();
    let opened = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let by_turn_options = AgreementOptions {
        levels: vec![Level::Item],
        per_expert: false,
        ..options.clone()
    };
    let split = concord_core::app::agreement::panel_by(
        &mut study,
        &by_turn_options,
        AgreementReference::Experts,
        Facet::Turn,
    )
    .expect("by turn");
    let turn_bytes = serde_json::to_vec(&split).unwrap().len();
    let by_turn = t.elapsed().as_secs_f64();
    (
        opened,
        by_turn,
        bytes + turn_bytes,
        report.cells.len(),
        split.strata.len(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let conversations: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let share: f64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0.1);
    let runs: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(3).max(1);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = match std::env::var_os("CONCORD_BENCH_KEEP") {
        Some(p) => std::path::PathBuf::from(p),
        None => dir.path().join("conversations.concord"),
    };

    let t = Instant::now();
    if !path.exists() {
        let mut store = Store::create(&path, Arc::new(SystemClock)).expect("the study");
        let design = TranscriptDesign {
            replies: 9,
            candidates: 4,
            judges: 2,
            expert_conversations: (conversations as f64 * share).round() as usize,
            keep_values: false,
            ..TranscriptDesign::correlated(conversations, 2026)
        };
        write_transcripts(&mut store, &design);
    }
    line(
        "study written",
        t.elapsed().as_secs_f64(),
        serde_json::json!({
            "conversations": conversations,
            "items": conversations * 13,
            "expert_share": share,
        }),
    );

    let mut opened = Vec::new();
    let mut by_turn = Vec::new();
    let mut shape = (0, 0, 0);
    for _ in 0..runs {
        let (o, b, bytes, cells, strata) = open_panel(&path);
        opened.push(o);
        by_turn.push(b);
        shape = (bytes, cells, strata);
    }
    let (o, b) = (median(opened), median(by_turn));
    line(
        "panel report + table",
        o,
        serde_json::json!({ "runs": runs, "cells": shape.1 }),
    );
    line(
        "panel table by turn",
        b,
        serde_json::json!({ "runs": runs, "turns": shape.2 }),
    );
    line(
        "panel opened (both)",
        o + b,
        serde_json::json!({ "json_bytes": shape.0, "goal_seconds": 2.0 }),
    );
}
