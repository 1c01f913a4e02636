//! Recall and precision of the PHI scanner on the committed synthetic evaluation corpus
//! (`fixtures/phi_eval`, written by its `generate.py`): 1,200 counselling messages in English and
//! Chinese with planted identifiers of every class and near misses (scale names, doses,
//! durations, ages up to 89, bare years). A finding counts as a hit when it overlaps a planted
//! identifier of the same class; any other finding is a false positive. The goals are recall ≥
//! 0.95 for every class and precision ≥ 0.9 overall; the per-class table is printed
//! (`cargo test -p concord-core --test it phi_eval -- --nocapture`).

use concord_core::guard::phi::parse_terms;
use concord_core::guard::phi::PhiKind;
use concord_core::guard::phi::Scanner;
use std::collections::BTreeMap;

#[derive(serde::Deserialize)]
struct Doc {
    id: String,
    text: String,
    spans: Vec<Planted>,
}

#[derive(serde::Deserialize)]
struct Planted {
    kind: String,
    start: usize,
    end: usize,
}

#[derive(Default)]
struct Tally {
    planted: usize,
    found: usize,
    hits: usize,
    false_positives: usize,
}

#[test]
fn recall_per_class_and_overall_precision_meet_the_goals() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/phi_eval");
    let corpus =
        std::fs::read_to_string(format!("{dir}/corpus.jsonl")).expect("corpus is committed");
    let terms =
        std::fs::read_to_string(format!("{dir}/terms.txt")).expect("term list is committed");
    let scanner = Scanner::new(&parse_terms(&terms));
    let mut tally: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut wrong = Vec::new();
    let mut docs = 0;
    for line in corpus.lines() {
        let doc: Doc = serde_json::from_str(line).expect("corpus line is JSON");
        docs += 1;
        let found = scanner.scan(&doc.text);
        let chars: Vec<char> = doc.text.chars().collect();
        let show = |s: usize, e: usize| chars[s..e].iter().collect::<String>();
        for p in &doc.spans {
            let kind = PhiKind::parse(&p.kind).expect("corpus kinds are scanner kinds");
            let t = tally.entry(kind.as_str()).or_default();
            t.planted += 1;
            if found
                .iter()
                .any(|f| f.kind == kind && f.start < p.end && p.start < f.end)
            {
                t.hits += 1;
            } else {
                misses.push(format!("{} {}: {:?}", doc.id, p.kind, show(p.start, p.end)));
            }
        }
        for f in &found {
            let t = tally.entry(f.kind.as_str()).or_default();
            t.found += 1;
            let ok = doc
                .spans
                .iter()
                .any(|p| p.kind == f.kind.as_str() && f.start < p.end && p.start < f.end);
            if !ok {
                t.false_positives += 1;
                wrong.push(format!("{} {}: {:?}", doc.id, f.kind, show(f.start, f.end)));
            }
        }
    }
    println!("{docs} documents");
    println!("| class | planted | found | recall | precision |");
    println!("|---|---|---|---|---|");
    let (mut found_all, mut fp_all) = (0, 0);
    for (kind, t) in &tally {
        found_all += t.found;
        fp_all += t.false_positives;
        println!(
            "| {kind} | {} | {} | {:.3} | {:.3} |",
            t.planted,
            t.found,
            t.hits as f64 / t.planted.max(1) as f64,
            (t.found - t.false_positives) as f64 / t.found.max(1) as f64
        );
    }
    let precision = (found_all - fp_all) as f64 / found_all.max(1) as f64;
    println!("overall precision {precision:.3} ({fp_all} false positives of {found_all} findings)");
    for m in misses.iter().take(40) {
        println!("missed {m}");
    }
    for w in wrong.iter().take(40) {
        println!("false positive {w}");
    }
    for kind in PhiKind::ALL {
        let t = tally
            .get(kind.as_str())
            .expect("the corpus plants every class");
        assert!(
            t.planted >= 100,
            "{kind}: at least 100 planted identifiers, so a recall of 0.95 means something"
        );
        let recall = t.hits as f64 / t.planted as f64;
        assert!(
            recall >= 0.95,
            "{kind}: recall {recall:.3} is below the goal of 0.95"
        );
    }
    assert!(
        precision >= 0.9,
        "overall precision {precision:.3} is below the goal of 0.9"
    );
}
