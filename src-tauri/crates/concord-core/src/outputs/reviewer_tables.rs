//! The methods appendix's tables of the reviewer's questions, each recomputed by `recompute.py`
//! with public packages from PyPI:
//! - `prevalence.csv` — per judge × binary criterion the corrected prevalence (by the published
//!   formulas, written in the script with scipy), or the reason there is none;
//! - `gstudy.csv` — per G-study (experts × responses × occasions, each judge × responses ×
//!   repetitions) and criterion, one line per variance component with the G coefficients and the
//!   design that reaches 0.8 (statsmodels' REML mixed model, Brennan's formulas);
//! - `dawid_skene.csv` and `adjudicated.csv` — per criterion the Dawid–Skene priors and every
//!   rater's confusion matrix over the compared responses, adjudicated pairs held at the values
//!   in `adjudicated.csv` (crowd-kit's `DawidSkene`);
//! - `agreement_by_category.csv` and `categories.csv` — the appendix's agreement table computed
//!   on each conversation category's responses alone (pingouin), the categories of the
//!   conversations beside it.

use crate::base::cell::neutralise;
use crate::guard::provenance::Provenance;
use crate::panel::agreement_table::{render, table, TableFormat, TableView};
use crate::panel::gstudy::GStudySection;
use crate::panel::latent::LatentFit;
use crate::panel::prevalence::PrevalenceRow;
use crate::panel::strata::StratifiedReport;
use crate::store::{Store, StoreResult};
use std::collections::HashMap;

/// Header of `prevalence.csv`.
pub const PREVALENCE_HEADER: [&str; 15] = [
    "rubric",
    "judge",
    "criterion",
    "n_items",
    "n_calibration",
    "n_no_consensus",
    "raw_rate",
    "sensitivity",
    "specificity",
    "corrected",
    "ci_low",
    "ci_high",
    "level",
    "reason",
    "not_computed",
];

/// Header of `gstudy.csv`: one line per study × component (one line with an empty component
/// when a study has no figures).
pub const GSTUDY_HEADER: [&str; 15] = [
    "rubric",
    "kind",
    "raters",
    "criterion",
    "facets",
    "n_scores",
    "n_targets",
    "n_raters",
    "n_occasions",
    "component",
    "variance",
    "g_relative",
    "g_absolute",
    "reaches_n",
    "not_computed",
];

/// Header of `dawid_skene.csv`: per criterion a `fit` line (passes, convergence), a `prior`
/// line per label and a `confusion` line per rater × true label × given label.
pub const DAWID_SKENE_HEADER: [&str; 10] = [
    "rubric",
    "criterion",
    "part",
    "rater",
    "true_label",
    "given_label",
    "probability",
    "iterations",
    "converged",
    "not_computed",
];

/// Header of `adjudicated.csv`: the decided values the Dawid–Skene fits hold.
pub const ADJUDICATED_HEADER: [&str; 4] = ["conversation_id", "response_id", "criterion", "value"];

/// A figure as the tables write it: every digit, empty when undefined.
fn figure(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => v.to_string(),
        _ => String::new(),
    }
}

fn done(w: csv::Writer<Vec<u8>>) -> Result<Vec<u8>, csv::Error> {
    w.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// `prevalence.csv` of `rows`.
pub fn prevalence_table(rows: &[PrevalenceRow]) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(PREVALENCE_HEADER)?;
    for r in rows {
        let reason = r
            .reason
            .map(|k| serde_json::to_value(k).ok())
            .and_then(|v| v.and_then(|v| v.as_str().map(str::to_string)))
            .unwrap_or_default();
        w.write_record([
            neutralise(&r.rubric).into_owned(),
            neutralise(&r.judge).into_owned(),
            neutralise(&r.criterion).into_owned(),
            r.n_items.to_string(),
            r.n_calibration.to_string(),
            r.n_no_consensus.to_string(),
            figure(r.raw_rate),
            figure(r.sensitivity),
            figure(r.specificity),
            figure(r.corrected),
            figure(r.ci.map(|c| c[0])),
            figure(r.ci.map(|c| c[1])),
            figure(Some(r.level)),
            reason,
            r.not_computed.clone().unwrap_or_default(),
        ])?;
    }
    done(w)
}

/// `gstudy.csv` of `section`.
pub fn gstudy_table(section: &GStudySection) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(GSTUDY_HEADER)?;
    for s in &section.studies {
        let head = [
            neutralise(&section.rubric).into_owned(),
            serde_json::to_value(s.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            neutralise(&s.raters).into_owned(),
            neutralise(&s.criterion).into_owned(),
            s.facets.join(","),
            s.n_scores.to_string(),
            s.n_targets.to_string(),
            s.n_raters.to_string(),
            s.n_occasions.to_string(),
        ];
        let g = s.g.as_ref();
        let tail = |component: &str, variance: Option<f64>| {
            [
                component.to_string(),
                figure(variance),
                figure(g.and_then(|g| g.relative)),
                figure(g.and_then(|g| g.absolute)),
                s.reaches_target
                    .map(|p| format!("{}x{}", p.n_rater, p.n_occasion))
                    .unwrap_or_default(),
                s.not_computed.clone().unwrap_or_default(),
            ]
        };
        if s.components.is_empty() {
            w.write_record(head.iter().cloned().chain(tail("", None)))?;
        }
        for (name, v) in &s.components {
            w.write_record(head.iter().cloned().chain(tail(name, Some(*v))))?;
        }
    }
    done(w)
}

/// `dawid_skene.csv` of the `fits` of `rubric`.
pub fn dawid_skene_table(rubric: &str, fits: &[LatentFit]) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(DAWID_SKENE_HEADER)?;
    let rubric = neutralise(rubric).into_owned();
    for f in fits {
        let criterion = neutralise(&f.criterion).into_owned();
        let line = |part: &str, rater: &str, truth: &str, given: &str, p: Option<f64>| {
            [
                rubric.clone(),
                criterion.clone(),
                part.to_string(),
                neutralise(rater).into_owned(),
                truth.to_string(),
                given.to_string(),
                figure(p),
                f.iterations.to_string(),
                f.converged.to_string(),
                f.not_computed.clone().unwrap_or_default(),
            ]
        };
        w.write_record(line("fit", "", "", "", None))?;
        for (label, p) in &f.priors {
            w.write_record(line("prior", "", label, "", Some(*p)))?;
        }
        for r in &f.raters {
            for (truth, row) in &r.confusion {
                for (given, p) in row {
                    w.write_record(line("confusion", &r.rater, truth, given, Some(*p)))?;
                }
            }
        }
    }
    done(w)
}

/// `adjudicated.csv`: every pair of `rubric` decided with a value (`decided`: (response,
/// criterion) → value), named as `ratings.csv` names them.
pub fn adjudicated_table(
    store: &Store,
    decided: &HashMap<(i64, i64), Option<i64>>,
    criteria: &HashMap<i64, String>,
) -> StoreResult<Vec<u8>> {
    let labels: HashMap<i64, (String, String)> = store
        .response_labels()?
        .into_iter()
        .map(|l| (l.id, (l.conversation, l.response)))
        .collect();
    let mut lines: Vec<[String; 4]> = decided
        .iter()
        .filter_map(|(&(response, criterion), value)| {
            let (conversation, item) = labels.get(&response)?;
            Some([
                neutralise(conversation).into_owned(),
                neutralise(item).into_owned(),
                neutralise(criteria.get(&criterion)?).into_owned(),
                value.as_ref()?.to_string(),
            ])
        })
        .collect();
    lines.sort();
    let mut w = csv::Writer::from_writer(Vec::new());
    let result = (|| -> Result<Vec<u8>, csv::Error> {
        w.write_record(ADJUDICATED_HEADER)?;
        for l in &lines {
            w.write_record(l)?;
        }
        done(w)
    })();
    result.map_err(|e| crate::store::StoreError::Invalid(e.to_string()))
}

/// `agreement_by_category.csv`: the appendix table (`view`) of every category's report, a
/// `category` column first (empty for the conversations without one) and `not_computed` last
/// (a category without a report has one line with only its name and the reason).
pub fn by_category_table(
    split: &StratifiedReport,
    view: TableView,
    provenance: &Provenance,
) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header_written = false;
    let mut width = 0;
    for s in &split.strata {
        let category = neutralise(s.value.as_deref().unwrap_or("")).into_owned();
        let Some(report) = &s.report else {
            continue;
        };
        let text = render(&table(report, view), TableFormat::Csv, provenance);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        if !header_written {
            let header = reader.headers()?.clone();
            width = header.len();
            w.write_record(
                std::iter::once("category")
                    .chain(header.iter())
                    .chain(["not_computed"]),
            )?;
            header_written = true;
        }
        for record in reader.records() {
            let record = record?;
            w.write_record(
                std::iter::once(category.as_str())
                    .chain(record.iter())
                    .chain([""]),
            )?;
        }
    }
    if !header_written {
        w.write_record(["category", "not_computed"])?;
    }
    for s in split.strata.iter().filter(|s| s.report.is_none()) {
        let category = neutralise(s.value.as_deref().unwrap_or("")).into_owned();
        let mut line = vec![category];
        line.extend(std::iter::repeat_n(String::new(), width));
        line.push(s.not_computed.clone().unwrap_or_default());
        w.write_record(&line)?;
    }
    done(w)
}

/// `categories.csv`: every conversation of `rubric` with its category (empty without one).
pub fn categories_table(store: &Store, rubric: &str) -> StoreResult<Vec<u8>> {
    let conversations = store.conversations_of_rubric(Some(rubric))?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let result = (|| -> Result<Vec<u8>, csv::Error> {
        w.write_record(["conversation_id", "category"])?;
        for c in &conversations {
            w.write_record([
                neutralise(&c.external_id).into_owned(),
                neutralise(c.category.as_deref().unwrap_or("")).into_owned(),
            ])?;
        }
        done(w)
    })();
    result.map_err(|e| crate::store::StoreError::Invalid(e.to_string()))
}
