//! `concord stats consensus --method dawid-skene`: the latent consensus label of items rated by
//! experts and judges (Dawid–Skene as crowd-kit fits it), adjudicated items held at their gold
//! labels, each rater's confusion matrix, and how correlated the named judges' errors are.

use crate::stats_error::{to_json, StatsError};
use clap::Args;
use concord_core::files::score_table::{read_gold_labels, read_label_rows, GoldLabel, LabelRows};
use concord_stats::dawid_skene::{
    dawid_skene, error_correlation, DawidSkeneFit, DawidSkeneOptions, LabelRating,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// `concord stats consensus`
#[derive(Args, Debug)]
pub struct ConsensusArgs {
    /// Long CSV: one row per item × rater with the label given (empty = not rated).
    pub file: PathBuf,
    /// The latent-class model.
    #[arg(long, value_enum, default_value = "dawid-skene")]
    pub method: ConsensusMethod,
    /// CSV `item,label` of adjudicated items, held at these labels.
    #[arg(long, value_name = "FILE")]
    pub gold: Option<PathBuf>,
    /// Largest number of EM passes.
    #[arg(long = "max-iter", default_value_t = 100, value_name = "N")]
    pub max_iter: usize,
    /// Stop when the lower bound per rating rises by less than this.
    #[arg(long, default_value_t = 1e-5, value_name = "T")]
    pub tol: f64,
    /// The raters that are judges: the φ correlation of each pair's errors is reported.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub judges: Option<Vec<String>>,
    /// Column holding the item id (in FILE and in the gold file).
    #[arg(long = "item-column", default_value = "item", value_name = "COL")]
    pub item: String,
    /// Column holding the rater id.
    #[arg(long = "rater-column", default_value = "rater", value_name = "COL")]
    pub rater: String,
    /// Column holding the label (in FILE and in the gold file).
    #[arg(long = "label-column", default_value = "label", value_name = "COL")]
    pub label: String,
}

/// The latent-class models `concord stats consensus` fits.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsensusMethod {
    /// Dawid & Skene (1979), one confusion matrix per rater.
    DawidSkene,
}

#[derive(Serialize)]
struct ItemOutput<'a> {
    item: &'a str,
    label: &'a str,
    posterior: BTreeMap<&'a str, f64>,
}

#[derive(Serialize)]
struct RaterOutput<'a> {
    rater: &'a str,
    confusion: BTreeMap<&'a str, BTreeMap<&'a str, f64>>,
}

#[derive(Serialize)]
struct PairOutput<'a> {
    a: &'a str,
    b: &'a str,
    phi: Option<f64>,
}

#[derive(Serialize)]
struct ConsensusOutput<'a> {
    items: Vec<ItemOutput<'a>>,
    raters: Vec<RaterOutput<'a>>,
    priors: BTreeMap<&'a str, f64>,
    iterations: usize,
    converged: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    judge_error_correlation: Option<Vec<PairOutput<'a>>>,
}

/// The labels raters gave, sorted (as numbers when every one is a number), then labels found
/// only among the gold labels, in gold-file order.
fn label_order(rows: &LabelRows, gold: &[GoldLabel]) -> Vec<String> {
    let mut labels: Vec<String> = rows.ratings.iter().map(|r| r.2.clone()).collect();
    labels.sort();
    labels.dedup();
    let numbers: Option<Vec<f64>> = labels.iter().map(|l| l.parse::<f64>().ok()).collect();
    if let Some(values) = numbers {
        let mut paired: Vec<(f64, String)> = values.into_iter().zip(labels).collect();
        paired.sort_by(|a, b| a.0.total_cmp(&b.0));
        labels = paired.into_iter().map(|p| p.1).collect();
    }
    for g in gold {
        if !labels.contains(&g.label) {
            labels.push(g.label.clone());
        }
    }
    labels
}

/// The indices of the judges named, refused when one is not a rater or fewer than two are named.
fn judge_indices(rows: &LabelRows, names: &[String]) -> Result<Vec<usize>, StatsError> {
    if names.len() < 2 {
        return Err(StatsError::BadOption(
            "--judges needs at least two names: φ is reported for pairs of judges".to_string(),
        ));
    }
    names
        .iter()
        .map(|name| {
            rows.raters
                .iter()
                .position(|r| r == name.trim())
                .ok_or_else(|| StatsError::UnknownJudge {
                    file: rows.file.clone(),
                    judge: name.clone(),
                    available: rows.raters.join(", "),
                })
        })
        .collect()
}

/// Run `concord stats consensus` and return what to print.
pub fn run(args: &ConsensusArgs, json: bool) -> Result<String, StatsError> {
    let ConsensusMethod::DawidSkene = args.method;
    let rows = read_label_rows(
        &args.file,
        [args.item.as_str(), args.rater.as_str(), args.label.as_str()],
    )?;
    let gold = match &args.gold {
        Some(path) => read_gold_labels(path, [args.item.as_str(), args.label.as_str()])?.1,
        None => Vec::new(),
    };
    let judges = match &args.judges {
        Some(names) => Some(judge_indices(&rows, names)?),
        None => None,
    };
    let labels = label_order(&rows, &gold);
    let label_index = |l: &str| labels.iter().position(|x| x == l).unwrap_or(0);
    let item_index: std::collections::HashMap<&str, usize> = rows
        .items
        .iter()
        .enumerate()
        .map(|(i, name)| (name.as_str(), i))
        .collect();
    let ratings: Vec<LabelRating> = rows
        .ratings
        .iter()
        .map(|(i, r, l)| LabelRating {
            item: *i as usize,
            rater: *r as usize,
            label: label_index(l),
        })
        .collect();
    let unknown_gold = gold
        .iter()
        .filter(|g| !item_index.contains_key(g.item.as_str()))
        .count();
    let gold_pairs: Vec<(usize, usize)> = gold
        .iter()
        .filter_map(|g| {
            item_index
                .get(g.item.as_str())
                .map(|&i| (i, label_index(&g.label)))
        })
        .collect();
    let options = DawidSkeneOptions {
        max_iter: args.max_iter,
        tol: args.tol,
    };
    let fit = dawid_skene(
        &ratings,
        rows.items.len(),
        rows.raters.len(),
        labels.len(),
        &gold_pairs,
        &options,
    )
    .map_err(|source| StatsError::Consensus {
        file: rows.file.clone(),
        source,
    })?;
    let mut notes = Vec::new();
    if unknown_gold > 0 {
        notes.push(format!(
            "{unknown_gold} gold item(s) have no rating in {} and are left out",
            rows.file
        ));
    }
    for &c in &fit.gold_only_labels {
        notes.push(format!(
            "label `{}` is given by no rater, only by the gold file: its confusion columns are learnt from the gold items",
            labels[c]
        ));
    }
    if !fit.converged {
        notes.push(format!(
            "not converged after {} passes (the lower bound still rose by {} or more)",
            fit.iterations, args.tol
        ));
    }
    let pairs = judges.map(|j| judge_pairs(&rows, &ratings, &fit, &j));
    render(&rows, &labels, &fit, pairs, &notes, json)
}

/// Two judges (rater indices), the items both rated and the φ of their errors.
type JudgePair = (usize, usize, usize, Option<f64>);

/// (a, b, items both rated, φ) for each pair of judges, in the order named.
fn judge_pairs(
    rows: &LabelRows,
    ratings: &[LabelRating],
    fit: &DawidSkeneFit,
    judges: &[usize],
) -> Vec<JudgePair> {
    let given = |rater: usize| {
        let mut out = vec![None; rows.items.len()];
        for r in ratings.iter().filter(|r| r.rater == rater) {
            out[r.item] = Some(r.label);
        }
        out
    };
    let mut out = Vec::new();
    for (x, &a) in judges.iter().enumerate() {
        for &b in &judges[x + 1..] {
            let (n, phi) = error_correlation(&given(a), &given(b), &fit.labels);
            out.push((a, b, n, phi));
        }
    }
    out
}

fn render(
    rows: &LabelRows,
    labels: &[String],
    fit: &DawidSkeneFit,
    pairs: Option<Vec<JudgePair>>,
    notes: &[String],
    json: bool,
) -> Result<String, StatsError> {
    let k = labels.len();
    let items: Vec<ItemOutput<'_>> = (0..rows.items.len())
        .filter_map(|i| {
            fit.labels[i].map(|best| ItemOutput {
                item: &rows.items[i],
                label: &labels[best],
                posterior: (0..k)
                    .map(|c| (labels[c].as_str(), fit.posteriors[i * k + c]))
                    .collect(),
            })
        })
        .collect();
    let raters: Vec<RaterOutput<'_>> = (0..rows.raters.len())
        .map(|r| RaterOutput {
            rater: &rows.raters[r],
            confusion: (0..k)
                .map(|c| {
                    let row = (0..k)
                        .map(|g| (labels[g].as_str(), fit.confusion_of(r, g, c)))
                        .collect();
                    (labels[c].as_str(), row)
                })
                .collect(),
        })
        .collect();
    let output = ConsensusOutput {
        items,
        raters,
        priors: (0..k)
            .map(|c| (labels[c].as_str(), fit.priors[c]))
            .collect(),
        iterations: fit.iterations,
        converged: fit.converged,
        judge_error_correlation: pairs.as_ref().map(|p| {
            p.iter()
                .map(|&(a, b, _, phi)| PairOutput {
                    a: &rows.raters[a],
                    b: &rows.raters[b],
                    phi,
                })
                .collect()
        }),
    };
    if json {
        for note in notes {
            crate::terminal::say(&format!("note: {note}"));
        }
        return to_json(&output);
    }
    let mut out = String::new();
    let _ =
        writeln!(
        out,
        "{}: {} ratings of {} items by {} raters; Dawid–Skene consensus after {} EM passes ({})",
        rows.file,
        rows.ratings.len(),
        output.items.len(),
        rows.raters.len(),
        fit.iterations,
        if fit.converged { "converged" } else { "not converged" }
    );
    for note in notes {
        let _ = writeln!(out, "note: {note}");
    }
    let priors: Vec<String> = output
        .priors
        .iter()
        .map(|(l, p)| format!("{l} {p:.3}"))
        .collect();
    let _ = writeln!(out, "priors: {}", priors.join(", "));
    let _ = writeln!(out, "rater accuracy P(gives the true label | true label):");
    for (r, rater) in rows.raters.iter().enumerate() {
        let diag: Vec<String> = (0..k)
            .map(|c| format!("{} {:.3}", labels[c], fit.confusion_of(r, c, c)))
            .collect();
        let _ = writeln!(out, "  {rater:<20} {}", diag.join(", "));
    }
    if let Some(pairs) = &pairs {
        let _ = writeln!(
            out,
            "φ of judges' errors against the consensus (independence assumed by the model):"
        );
        for &(a, b, n, phi) in pairs {
            let shown = phi.map_or(
                "— (a judge never or always errs on these items)".to_string(),
                |v| format!("{v:.3}"),
            );
            let _ = writeln!(
                out,
                "  {} × {} over {n} items: {shown}",
                rows.raters[a], rows.raters[b]
            );
        }
    }
    let _ = writeln!(out, "consensus labels (item: label, posterior):");
    for item in &output.items {
        let p = item.posterior.get(item.label).copied().unwrap_or(0.0);
        let _ = writeln!(out, "  {}: {} ({p:.3})", item.item, item.label);
    }
    Ok(out)
}
