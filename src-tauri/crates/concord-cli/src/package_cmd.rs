//! `concord package export --rater NAME --out FILE.concord` writes one expert's blinded package,
//! sealed (encrypted and authenticated) under the package passphrase in the environment variable
//! named by `--package-passphrase-env` (default `CONCORD_PACKAGE_PASSPHRASE`), which the lead
//! gives the expert separately; `concord package merge FILE.concord` checks a returned package's
//! seal, brings it back and lists any conflicts.

use crate::study_cmd::{open_study, required_passphrase, StudyCmdError};
use concord_core::app::package::PackageJobError;
use concord_core::base::clock::fresh_seed;
use concord_core::guard::phi::review::PhiError;
use concord_core::guard::phi::review::PhiGate;
use concord_core::workflow::package::MergeReport;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum PackageCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Job(#[from] PackageJobError),
    #[error(transparent)]
    Phi(#[from] PhiError),
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

#[derive(clap::Args, Debug)]
pub struct PackageArgs {
    #[command(subcommand)]
    pub command: PackageCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum PackageCommand {
    /// Write one expert's package: their items and own ratings, sources anonymised.
    Export {
        #[arg(long, value_name = "NAME")]
        rater: String,
        /// Where to write it (default: `<study>-package-<name>.concord` in the study's export
        /// folder, `<study>-exports/` beside the study, numbered when taken).
        #[arg(long, value_name = "FILE.concord")]
        out: Option<PathBuf>,
        /// Replace a file already at the --out path (never the study, a folder, a FIFO or a device).
        #[arg(long)]
        force: bool,
        /// Seed of the package id and source codes (default: drawn from the clock).
        #[arg(long)]
        seed: Option<u64>,
        /// Write even though PHI findings are not reviewed yet; the reason goes to the audit trail.
        #[arg(long, value_name = "REASON")]
        override_phi: Option<String>,
        /// The environment variable holding the package's passphrase (at least 8 characters, and hard to guess: a zxcvbn score of 3 of 4).
        #[arg(long, value_name = "VAR", default_value = PACKAGE_PASSPHRASE_ENV)]
        package_passphrase_env: String,
    },
    /// Merge a returned package: its seal is checked, new ratings and revisions come in,
    /// conflicts are listed.
    Merge {
        file: PathBuf,
        /// The environment variable holding the package's passphrase.
        #[arg(long, value_name = "VAR", default_value = PACKAGE_PASSPHRASE_ENV)]
        package_passphrase_env: String,
    },
}

/// The environment variable that holds a package's passphrase unless another is named.
pub const PACKAGE_PASSPHRASE_ENV: &str = "CONCORD_PACKAGE_PASSPHRASE";

pub fn run(args: &PackageArgs, db: Option<&Path>, json: bool) -> Result<String, PackageCmdError> {
    let mut study = open_study(db)?;
    match &args.command {
        PackageCommand::Export {
            rater,
            out,
            force,
            seed,
            package_passphrase_env,
            override_phi,
        } => {
            let passphrase = required_passphrase(package_passphrase_env)?;
            let by = crate::phi_cmd::actor(None);
            let written = concord_core::app::package::export_package(
                &mut study,
                rater,
                out.as_deref(),
                *force,
                seed.unwrap_or_else(fresh_seed),
                &passphrase,
                PhiGate {
                    actor: &by,
                    override_reason: override_phi.as_deref(),
                },
            )?;
            let summary = &written.summary;
            if json {
                return Ok(format!("{}\n", serde_json::to_string_pretty(summary)?));
            }
            Ok(format!(
                "Wrote package {} for {} to {}: {} items ({} responses of {} conversations), {} of their ratings; sealed with the passphrase in {package_passphrase_env}: give it to the expert separately, not with the file\n",
                summary.package_id,
                summary.rater,
                written.path,
                summary.assignments,
                summary.responses,
                summary.conversations,
                summary.ratings + summary.retest_ratings
            ))
        }
        PackageCommand::Merge {
            file,
            package_passphrase_env,
        } => {
            let passphrase = required_passphrase(package_passphrase_env)?;
            let report = concord_core::app::package::merge_package(&mut study, file, &passphrase)?;
            if json {
                return Ok(format!("{}\n", serde_json::to_string_pretty(&report)?));
            }
            Ok(render(&report))
        }
    }
}

fn render(r: &MergeReport) -> String {
    let mut out = format!(
        "Package {} ({}): {} new, {} revised, {} unchanged ratings; {} history entries, {} retest values, {} progress updates, {} flags\n",
        r.package_id,
        r.rater,
        r.inserted,
        r.updated,
        r.unchanged,
        r.history_added,
        r.retest_inserted + r.retest_updated,
        r.progress_updated,
        r.flags_added
    );
    if r.revised_after_return + r.changed_back > 0 {
        out.push_str(&format!(
            "Of the revisions, {} revise values merged from an earlier return and {} change a rating back to its value at issue.\n",
            r.revised_after_return, r.changed_back
        ));
    }
    if !r.changed() && r.conflicts.is_empty() {
        out.push_str("Nothing new: the study already holds everything in this package.\n");
    }
    if !r.conflicts.is_empty() {
        out.push_str(&format!(
            "{} conflict(s): changed both in the package and in the study since the export; the study kept its values:\n",
            r.conflicts.len()
        ));
        let show = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
        for c in &r.conflicts {
            out.push_str(&format!(
                "  {} / {}{} / {} ({:?}): was {}, study {}, package {}\n",
                c.conversation,
                c.source,
                c.turn.map(|t| format!(" at turn {t}")).unwrap_or_default(),
                c.criterion,
                c.occasion,
                show(c.base),
                show(c.study),
                show(c.package)
            ));
        }
    }
    out
}
