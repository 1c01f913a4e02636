//! `concord audit verify` recomputes the study's audit chain, checks its checkpoints signed by
//! the lead's key (and that the study's public key is the key this machine holds for it, when it
//! holds one) and the sealed state of its rating tables: `intact: N entries` with exit 0, then
//! how far back the chain is anchored, or a non-zero exit naming the first broken entry (or the
//! table changed outside Concord). `--expect-head HASH` checks that a head recorded elsewhere is
//! an entry of the chain. An encrypted study opens with the passphrase in `--passphrase-env`.
//! `concord audit log` lists entries, filtered by rater, item and time.

use crate::study_cmd::{study_passphrase, study_path, StudyCmdError};
use clap::{Args, Subcommand};
use concord_core::app::audit;
use concord_core::base::clock::iso_utc;
use concord_core::base::clock::SystemClock;
use concord_core::base::text::quoted;
use concord_core::guard::audit::LogFilter;
use concord_core::intake::demo::DemoError;
use concord_core::store::StoreError;
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum AuditCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("audit chain broken: {0}")]
    Broken(String),
    #[error("{q0} is not a time: use an ISO date or date-time (2026-11-30, 2026-11-30T14:05Z) or milliseconds since 1970", q0 = quoted(&.0))]
    BadTime(String),
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Signoff(#[from] concord_core::workflow::signoff::SignoffError),
}

#[derive(Args, Debug)]
pub struct AuditArgs {
    #[command(subcommand)]
    command: AuditCommand,
}

#[derive(Subcommand, Debug)]
enum AuditCommand {
    /// Recompute the chain and check its signed checkpoints; exit 0 when intact, non-zero naming
    /// the first broken entry.
    Verify {
        /// A head hash recorded elsewhere (an export's provenance, a note): it must be an entry
        /// of the chain, and the entry is named.
        #[arg(long, value_name = "HASH")]
        expect_head: Option<String>,
        /// Fail unless every entry was written under the lead's key (none after the last signed
        /// checkpoint, none written where the key was not available).
        #[arg(long)]
        require_signed: bool,
    },
    /// Give a study that never had a lead key one, kept on this machine: its writes are signed
    /// from here on, and the chain says how many entries before came unsigned. Refused for a
    /// study that names a key, or whose key records were changed outside Concord.
    AdoptKey,
    /// List audit entries (all, or filtered).
    Log {
        /// Entries by or about this rater.
        #[arg(long)]
        rater: Option<String>,
        /// Entries about this item (response id, or conversation/source).
        #[arg(long)]
        item: Option<String>,
        /// From this time on (ISO date/date-time or epoch milliseconds).
        #[arg(long)]
        since: Option<String>,
        /// Up to this time.
        #[arg(long)]
        until: Option<String>,
    },
}

/// How far back the chain is anchored, in lines after `intact` and `head`.
fn anchoring(check: &concord_core::store::ChainCheck) -> String {
    let mut out = String::new();
    match &check.lead_key {
        Some(fp) => out.push_str(&format!(
            "lead key: {fp} (made at entry {}){}\n",
            check.key_entry.unwrap_or(0),
            if check.key_held_here {
                "; this machine holds it"
            } else {
                "; not held on this machine"
            }
        )),
        None => out.push_str("lead key: none (no write by a Concord with a lead key yet)\n"),
    }
    match check.anchored_through {
        Some(through) => out.push_str(&format!(
            "anchored: entries 1-{through} by {} checkpoint{} signed with the lead key\n",
            check.checkpoints,
            if check.checkpoints == 1 { "" } else { "s" }
        )),
        None => out.push_str("anchored: no entry (no checkpoint signed with a lead key)\n"),
    }
    if check.not_anchored > 0 {
        out.push_str(&format!(
            "not anchored: {} entr{} after the last signed checkpoint (written where the lead key was not available, or added outside Concord)\n",
            check.not_anchored,
            if check.not_anchored == 1 { "y" } else { "ies" }
        ));
    }
    if let Some(first) = check.first_unsigned {
        out.push_str(&format!(
            "written without the lead key: {} entr{} from entry {first} on, inside the anchored part (written on another machine, or added outside Concord before the next signed write)\n",
            check.unsigned,
            if check.unsigned == 1 { "y" } else { "ies" }
        ));
    }
    if let Some(at) = check.expected_head_at {
        out.push_str(&format!("expected head: found at entry {at}\n"));
    }
    out
}

fn time(text: &Option<String>) -> Result<Option<i64>, AuditCmdError> {
    text.as_deref()
        .map(|t| audit::parse_time(t).ok_or_else(|| AuditCmdError::BadTime(t.to_string())))
        .transpose()
}

pub fn run(args: &AuditArgs, db: Option<&Path>, json: bool) -> Result<String, AuditCmdError> {
    // An existing study only: verifying must never create one.
    let path = study_path(db)?;
    let key = study_passphrase()?;
    if let AuditCommand::AdoptKey = &args.command {
        let (fingerprint, before) =
            audit::adopt_key(path.path(), Arc::new(SystemClock), key.as_ref())
                .map_err(|e| StudyCmdError::from(DemoError::Store(e)))?;
        return Ok(format!(
            "lead key {fingerprint} made and kept on this machine; writes are signed from here on\n\
             {before} earlier entries were written where no key signed them: they are only as sound as the file was when you took it\n"
        ));
    }
    let study = audit::open(path.path(), Arc::new(SystemClock), key.as_ref())
        .map_err(|e| StudyCmdError::from(DemoError::Store(e)))?;
    match &args.command {
        AuditCommand::Verify {
            expect_head,
            require_signed,
        } => {
            let check = audit::verify(&study, expect_head.as_deref(), *require_signed)?;
            if let Some(b) = &check.broken {
                if json {
                    // The JSON document still goes to stdout; the exit status says it is broken.
                    crate::terminal::write_stdout(&format!(
                        "{}\n",
                        serde_json::to_string_pretty(&check)?
                    ));
                }
                return Err(AuditCmdError::Broken(b.message.clone()));
            }
            // Verification also shows who signed what and whether it still matches.
            let signatures = concord_core::app::signoff::signatures(&study)?;
            if json {
                let mut doc = serde_json::to_value(&check)?;
                doc["signatures"] = serde_json::to_value(&signatures)?;
                return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
            }
            let mut out = format!("intact: {} entries\n", check.entries);
            if let Some(head) = &check.head {
                out.push_str(&format!("head: {head}\n"));
            }
            out.push_str(&anchoring(&check));
            if check.started_at_upgrade {
                out.push_str(&format!(
                    "the chain starts at entry {} (the upgrade of this study); {} earlier entries are not chained\n",
                    check.started_at.unwrap_or(0),
                    check.unchained
                ));
            }
            for s in &signatures {
                let r = &s.signature;
                out.push_str(&format!(
                    "signature {}: {} signed {} ratings on {} ({}): {}\n",
                    r.id,
                    r.signer,
                    r.ratings,
                    iso_utc(r.signed_at),
                    r.scope,
                    if s.matches {
                        "still matches".to_string()
                    } else {
                        format!("{} changed after signature", s.changed_after_signature)
                    }
                ));
            }
            Ok(out)
        }
        AuditCommand::Log {
            rater,
            item,
            since,
            until,
        } => {
            let filter = LogFilter {
                rater: rater.clone(),
                item: item.clone(),
                since: time(since)?,
                until: time(until)?,
            };
            let entries = audit::log(&study, &filter)?;
            if json {
                let doc: Vec<serde_json::Value> = entries
                    .iter()
                    .map(|e| {
                        let mut v = serde_json::to_value(e).unwrap_or_default();
                        v["time"] = serde_json::json!(iso_utc(e.entry.at));
                        v
                    })
                    .collect();
                return Ok(format!(
                    "{}\n",
                    serde_json::to_string_pretty(&serde_json::json!({ "entries": doc }))?
                ));
            }
            let mut out = String::new();
            for e in &entries {
                out.push_str(&format!(
                    "#{:<6} {} {:<20} {:<18} {}{}{}\n",
                    e.entry.id,
                    iso_utc(e.entry.at),
                    e.rater.as_deref().unwrap_or(&e.entry.actor),
                    e.entry.action,
                    e.item
                        .as_deref()
                        .map(|i| format!("{i} "))
                        .unwrap_or_default(),
                    e.criterion
                        .as_deref()
                        .map(|c| format!("{c} "))
                        .unwrap_or_default(),
                    e.entry.detail
                ));
            }
            Ok(out)
        }
        // Handled above, before the study is opened only to read it.
        AuditCommand::AdoptKey => Ok(String::new()),
    }
}
