//! `concord signoff …`: expert sign-off from the command line. `passphrase --rater NAME` sets the
//! expert's signing passphrase (read from an environment variable, never an argument);
//! `sign --rater NAME` signs their assignment after checking it; `list` shows every signature and
//! whether its ratings still match; `revise` changes a signed rating, which needs a reason.

use crate::study_cmd::{open_study, StudyCmdError};
use clap::{Args, Subcommand};
use concord_core::app::revise::{revise, ReviseError};
use concord_core::app::signoff;
use concord_core::base::clock::iso_utc;
use concord_core::base::text::quoted;
use concord_core::store::StoreError;
use concord_core::workflow::signoff::SignatureStatus;
use concord_core::workflow::signoff::SignoffError;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum SignoffCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Signoff(#[from] SignoffError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the signing passphrase is read from the environment variable {0}, which is not set")]
    MissingPassphrase(String),
    #[error("no response {q0} in this study", q0 = quoted(&.0))]
    UnknownItem(String),
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

#[derive(Args, Debug)]
pub struct SignoffArgs {
    #[command(subcommand)]
    command: SignoffCommand,
}

#[derive(Subcommand, Debug)]
enum SignoffCommand {
    /// Set the expert's signing passphrase (replacing one needs the current one).
    Passphrase {
        #[arg(long, value_name = "NAME")]
        rater: String,
        /// Environment variable holding the new passphrase.
        #[arg(long, default_value = "CONCORD_SIGNING_PASSPHRASE", value_name = "VAR")]
        passphrase_env: String,
        /// Environment variable holding the current passphrase (when replacing one).
        #[arg(long, value_name = "VAR")]
        current_passphrase_env: Option<String>,
    },
    /// Sign off the expert's assigned ratings ("these ratings are my own independent judgement").
    Sign {
        #[arg(long, value_name = "NAME")]
        rater: String,
        #[arg(long, default_value = "CONCORD_SIGNING_PASSPHRASE", value_name = "VAR")]
        passphrase_env: String,
    },
    /// Every signature: who signed what, when, and whether the ratings still match.
    List,
    /// Change a signed rating (recorded with the reason, shown as changed after signature).
    Revise {
        #[arg(long, value_name = "NAME")]
        rater: String,
        /// The response (its external id, or conversation/source).
        #[arg(long, value_name = "ID")]
        item: String,
        #[arg(long, value_name = "KEY")]
        criterion: String,
        #[arg(long)]
        value: i64,
        #[arg(long)]
        reason: String,
    },
}

fn secret(var: &str) -> Result<String, SignoffCmdError> {
    std::env::var(var).map_err(|_| SignoffCmdError::MissingPassphrase(var.to_string()))
}

fn render(list: &[SignatureStatus]) -> String {
    let mut out = String::new();
    for s in list {
        out.push_str(&format!(
            "#{} {} signed {} ratings ({}) at {}: \"{}\" — {}\n",
            s.signature.id,
            s.signature.signer,
            s.signature.ratings,
            s.signature.scope,
            iso_utc(s.signature.signed_at),
            s.signature.meaning,
            if s.matches {
                "matches".to_string()
            } else {
                format!(
                    "CHANGED after signature ({} ratings)",
                    s.changed_after_signature
                )
            }
        ));
    }
    if list.is_empty() {
        out.push_str("no signatures\n");
    }
    out
}

pub fn run(args: &SignoffArgs, db: Option<&Path>, json: bool) -> Result<String, SignoffCmdError> {
    let mut study = match &args.command {
        SignoffCommand::List => crate::study_cmd::open_study_to_read(db)?,
        _ => open_study(db)?,
    };
    match &args.command {
        SignoffCommand::Passphrase {
            rater,
            passphrase_env,
            current_passphrase_env,
        } => {
            let new = secret(passphrase_env)?;
            let current = current_passphrase_env.as_deref().map(secret).transpose()?;
            signoff::set_passphrase_of(
                &mut study,
                rater.as_str(),
                current.as_deref(),
                &new,
                concord_core::base::clock::fresh_seed(),
            )?;
            Ok(format!("Signing passphrase set for {rater}\n"))
        }
        SignoffCommand::Sign {
            rater,
            passphrase_env,
        } => {
            let status =
                signoff::sign_assignment_of(&mut study, rater.as_str(), &secret(passphrase_env)?)?;
            if json {
                return Ok(format!("{}\n", serde_json::to_string_pretty(&status)?));
            }
            Ok(render(std::slice::from_ref(&status)))
        }
        SignoffCommand::List => {
            let list = signoff::signatures(&study)?;
            if json {
                return Ok(format!(
                    "{}\n",
                    serde_json::to_string_pretty(&serde_json::json!({ "signatures": list }))?
                ));
            }
            Ok(render(&list))
        }
        SignoffCommand::Revise {
            rater,
            item,
            criterion,
            value,
            reason,
        } => {
            revise(&mut study, rater, item, criterion, *value, reason).map_err(|e| match e {
                ReviseError::Signoff(e) => SignoffCmdError::Signoff(e),
                ReviseError::Store(e) => SignoffCmdError::Store(e),
                ReviseError::UnknownItem(item) => SignoffCmdError::UnknownItem(item),
            })?;
            Ok(format!(
                "Changed {rater}'s {criterion} on {item} to {value}: {reason}\n"
            ))
        }
    }
}
