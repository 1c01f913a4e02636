//! Shared helpers of the import and agreement tests: a fresh in-memory or on-disk study on a
//! fixed clock, workbook writing (rust_xlsxwriter) for synthetic release-shaped files, and a
//! fingerprint of everything an import can change, to prove a failed import changed nothing.

use concord_core::base::clock::SteppingClock;
use concord_core::store::Store;
use rust_xlsxwriter::{Formula, Workbook};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const ATTRIBUTES: [&str; 7] = [
    "Guidance",
    "Informativeness",
    "Relevance",
    "Safety",
    "Empathy",
    "Helpfulness",
    "Understanding",
];

pub const SOURCE_KEYS: [&str; 10] = [
    "original",
    "claude",
    "ds_llama",
    "ds_qwen",
    "gemini",
    "gpt4o",
    "gpt4omini",
    "llama_3",
    "qwen_2",
    "qwen_3",
];

pub fn clock() -> Arc<SteppingClock> {
    Arc::new(SteppingClock::new(1_700_000_000_000, 1))
}

pub fn memory_study() -> Store {
    Store::in_memory(clock()).expect("an in-memory study opens")
}

/// A cell of a synthetic workbook.
#[derive(Debug, Clone)]
pub enum X {
    S(String),
    N(f64),
    F(String),
    E,
}

pub fn s(text: &str) -> X {
    X::S(text.to_string())
}

/// Write one sheet named `sheet` with `rows` (the first row is the header).
pub fn write_xlsx(path: &Path, sheet: &str, rows: &[Vec<X>]) {
    let mut wb = Workbook::new();
    let ws = wb.add_worksheet();
    ws.set_name(sheet).expect("valid sheet name");
    for (r, row) in rows.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            let (r, c) = (r as u32, c as u16);
            match cell {
                X::S(t) => {
                    ws.write_string(r, c, t).expect("string cell");
                }
                X::N(x) => {
                    ws.write_number(r, c, *x).expect("number cell");
                }
                X::F(f) => {
                    ws.write_formula(r, c, Formula::new(f))
                        .expect("formula cell");
                }
                X::E => {}
            }
        }
    }
    wb.save(path).expect("workbook saved");
}

/// A score object for a cell: the seven attributes with `values`, and for judges `Overall` and
/// `Explanation`, optionally inside a ```json fence.
pub fn score_json(values: [i64; 7], judge: bool, fence: bool) -> String {
    let mut parts: Vec<String> = ATTRIBUTES
        .iter()
        .zip(values)
        .map(|(a, v)| format!("\"{a}\": {v}"))
        .collect();
    if judge {
        let mean = values.iter().sum::<i64>() as f64 / 7.0;
        parts.push(format!("\"Overall\": {mean:.1}"));
        parts.push("\"Explanation\": \"Clear and warm.\"".to_string());
    }
    let body = format!("{{{}}}", parts.join(", "));
    if fence {
        format!("```json\n{body}\n```")
    } else {
        body
    }
}

/// Write a MentalAlign-shaped file: `ConvID`, `context`, then one column per source key with
/// `prefix` (`human_response_` or `judge_response_`); `value(conv, source, attribute)` gives scores.
pub fn mentalalign_file(
    path: &Path,
    sheet: &str,
    prefix: &str,
    conversations: usize,
    value: impl Fn(usize, usize, usize) -> i64,
) {
    let judge = prefix.starts_with("judge");
    let mut rows = vec![{
        let mut h = vec![s("ConvID"), s("context")];
        for (i, k) in SOURCE_KEYS.iter().enumerate() {
            // Some release headers carry a leading space.
            let lead = if i % 3 == 1 { " " } else { "" };
            h.push(X::S(format!("{lead}{prefix}{k}")));
        }
        h
    }];
    for conv in 1..=conversations {
        let mut row = vec![
            X::N(conv as f64),
            X::S(format!("\"I feel alone ({conv}).\"")),
        ];
        for src in 0..SOURCE_KEYS.len() {
            let values: [i64; 7] = std::array::from_fn(|a| value(conv, src, a));
            row.push(X::S(score_json(
                values,
                judge,
                judge && (conv + src).is_multiple_of(2),
            )));
        }
        rows.push(row);
    }
    write_xlsx(path, sheet, &rows);
}

/// Everything an import can change, read back for comparison.
#[derive(Debug, PartialEq)]
pub struct Fingerprint {
    pub overview: concord_core::store::StudyOverview,
    pub imports: Vec<concord_core::store::ImportRecord>,
    pub out_of_scale: Option<String>,
}

pub fn fingerprint(store: &Store) -> Fingerprint {
    Fingerprint {
        overview: store.overview().expect("overview"),
        imports: store.imports().expect("imports"),
        out_of_scale: store.meta("import.out_of_scale").expect("meta"),
    }
}

/// A temporary folder for fixture files.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary folder")
}

/// The committed fixture folder of a scenario.
pub fn fixture(scenario: &str) -> PathBuf {
    // The scenario folders live beside concord-core's tests, which use them.
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../concord-core/tests/fixtures")
        .join(scenario)
}
