//! `concord phi …`: the PHI guard from the command line — `scan` (texts written since the last
//! scan, or `--all`; prints the open findings as `{"findings": [{"kind", "item", "field", "start",
//! "end"}, …]}` with character offsets), `redact` by class or finding (each identifier becomes a
//! typed placeholder such as `[PHONE]`), `keep` (the original stays, with a reason), `terms` (the
//! lead's list of names and places) and `list`. Every decision is written to the audit trail under
//! the name given with `--by` (default: the login name).

use crate::study_cmd::{open_study, StudyCmdError};
use clap::{Args, Subcommand, ValueEnum};
use concord_core::app::phi;
use concord_core::base::text::quoted;
use concord_core::guard::phi::review::PhiError;
use concord_core::guard::phi::review::PhiScanSummary;
use concord_core::guard::phi::review::Selection;
use concord_core::guard::phi::PhiKind;
use concord_core::store::{PhiFinding, PhiStatus};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum PhiCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Phi(#[from] PhiError),
    #[error("{path}: cannot read the term list: {detail}")]
    Terms { path: String, detail: String },
    #[error("unknown identifier class {q0}; one of email, url, ip_address, ssn, phone, date, zip, age, record_id, name, place", q0 = quoted(&.0))]
    UnknownKind(String),
    #[error("say what to {0}: --kind CLASS[,CLASS] or --finding ID[,ID]")]
    NothingSelected(&'static str),
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

#[derive(Args, Debug)]
pub struct PhiArgs {
    #[command(subcommand)]
    command: PhiCommand,
    /// Who takes the decision (recorded in the audit trail); default: the login name.
    #[arg(long, global = true, value_name = "NAME")]
    by: Option<String>,
}

#[derive(Args, Debug)]
struct Select {
    /// Identifier classes (comma-separated): email, url, ip_address, ssn, phone, date, zip, age,
    /// record_id, name, place.
    #[arg(long, value_delimiter = ',', value_name = "CLASS")]
    kind: Vec<String>,
    /// Finding ids (comma-separated), as `concord phi list` shows them.
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    finding: Vec<i64>,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum StatusArg {
    Open,
    Kept,
    Redacted,
    All,
}

#[derive(Subcommand, Debug)]
enum PhiCommand {
    /// Scan the texts written since the last scan (every text with --all) and list open findings.
    Scan {
        #[arg(long)]
        all: bool,
        /// Replace the study's list of names and places with FILE first (one per line;
        /// `place: TEXT` for places), then rescan every text.
        #[arg(long, value_name = "FILE")]
        terms: Option<PathBuf>,
    },
    /// Replace the selected identifiers by typed placeholders (`[PHONE]`, `[EMAIL]`, …) in the texts.
    Redact {
        #[command(flatten)]
        select: Select,
    },
    /// Keep the selected identifiers as written (the lead's explicit choice; needs a reason).
    Keep {
        #[command(flatten)]
        select: Select,
        #[arg(long)]
        reason: String,
    },
    /// List findings (open by default).
    List {
        #[arg(long, value_enum, default_value = "open")]
        status: StatusArg,
    },
}

/// Who acts: `--by`, else the login name, else "cli".
pub fn actor(by: Option<&str>) -> String {
    by.map(str::to_string)
        .or_else(|| std::env::var("USER").ok())
        .or_else(|| std::env::var("USERNAME").ok())
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "cli".to_string())
}

fn selection(select: &Select, verb: &'static str) -> Result<Selection, PhiCmdError> {
    if !select.finding.is_empty() {
        return Ok(Selection::Ids(select.finding.clone()));
    }
    if select.kind.is_empty() {
        return Err(PhiCmdError::NothingSelected(verb));
    }
    let kinds = select
        .kind
        .iter()
        .map(|k| PhiKind::parse(k.trim()).ok_or_else(|| PhiCmdError::UnknownKind(k.clone())))
        .collect::<Result<_, _>>()?;
    Ok(Selection::Kinds(kinds))
}

fn finding_json(f: &PhiFinding) -> serde_json::Value {
    serde_json::json!({
        "id": f.id,
        "kind": f.kind.as_str(),
        "item": f.item,
        "field": f.field.as_str(),
        "start": f.start,
        "end": f.end,
        "status": f.status.as_str(),
        "excerpt": f.excerpt,
        "reason": f.reason,
    })
}

fn render_findings(findings: &[PhiFinding]) -> String {
    let mut out = String::new();
    for f in findings {
        out.push_str(&format!(
            "  #{:<6} {:<10} {} {} [{}..{}] {}{}\n",
            f.id,
            f.kind.as_str(),
            f.item,
            f.field.as_str(),
            f.start,
            f.end,
            f.excerpt
                .as_deref()
                .map(|e| quoted(&e).to_string())
                .unwrap_or_default(),
            f.reason
                .as_deref()
                .map(|r| format!(" ({}: {r})", f.status.as_str()))
                .unwrap_or_default()
        ));
    }
    out
}

/// One line for an import's report: what the scan of the imported texts found.
pub fn render_summary(s: &PhiScanSummary) -> String {
    if s.open == 0 {
        return format!("PHI scan: {} texts, no possible identifiers\n", s.texts);
    }
    let classes: Vec<String> = s.by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!(
        "PHI scan: {} texts, {} possible identifiers found; {} open in the study ({}) — review with `concord phi list`, then `phi redact` or `phi keep`\n",
        s.texts,
        s.found,
        s.open,
        classes.join(", ")
    )
}

pub fn run(args: &PhiArgs, db: Option<&Path>, json: bool) -> Result<String, PhiCmdError> {
    let mut study = open_study(db)?;
    let by = actor(args.by.as_deref());
    match &args.command {
        PhiCommand::Scan { all, terms } => {
            let summary = match terms {
                Some(path) => {
                    let list = std::fs::read_to_string(path).map_err(|e| PhiCmdError::Terms {
                        path: path.display().to_string(),
                        detail: e.to_string(),
                    })?;
                    phi::set_terms(&mut study, &list, &by)?
                }
                None => phi::scan_texts(&mut study, *all, &by)?,
            };
            let open = phi::findings(&study, Some(PhiStatus::Open))?;
            if json {
                let doc = serde_json::json!({
                    "findings": open.iter().map(finding_json).collect::<Vec<_>>(),
                    "scanned_texts": summary.texts,
                    "open": summary.open,
                    "by_kind": summary.by_kind,
                });
                return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
            }
            Ok(render_summary(&summary) + &render_findings(&open))
        }
        PhiCommand::Redact { select } => {
            let n = phi::redact(&mut study, &selection(select, "redact")?, &by)?;
            let open = phi::open_findings(&study)?;
            if json {
                let doc = serde_json::json!({"redacted": n, "open": open});
                return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
            }
            Ok(format!(
                "Redacted {n} identifiers; {open} findings still open\n"
            ))
        }
        PhiCommand::Keep { select, reason } => {
            let n = phi::keep(&mut study, &selection(select, "keep")?, reason, &by)?;
            let open = phi::open_findings(&study)?;
            if json {
                let doc = serde_json::json!({"kept": n, "open": open});
                return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
            }
            Ok(format!("Kept {n} originals; {open} findings still open\n"))
        }
        PhiCommand::List { status } => {
            let status = match status {
                StatusArg::Open => Some(PhiStatus::Open),
                StatusArg::Kept => Some(PhiStatus::Kept),
                StatusArg::Redacted => Some(PhiStatus::Redacted),
                StatusArg::All => None,
            };
            let list = phi::findings(&study, status)?;
            if json {
                let doc = serde_json::json!({
                    "findings": list.iter().map(finding_json).collect::<Vec<_>>(),
                });
                return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
            }
            Ok(format!("{} findings\n", list.len()) + &render_findings(&list))
        }
    }
}
