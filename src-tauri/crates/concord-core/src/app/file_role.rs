//! What a file handed to the app is for, so a file dropped on the window or given by the desktop
//! goes to the right place: a study opens; a rater package opens for rating — unless it was
//! written from the open study, in which case it is a returned package to merge; a dataset goes
//! to the import step; a filled-in rating sheet (an XLSX with Concord's `concord` sheet) to the
//! sheet import; a rubric (TOML) to the rubric step. An encrypted file (an encrypted study or a
//! sealed package) cannot be told apart before its passphrase opens it: handed to a lead's study
//! (one that has issued packages) it goes to the merge step, otherwise it opens behind the unlock
//! screen. Nothing is written to the file.

use crate::app::import::ImportFormat;
use crate::app::open_study::OpenStudy;
use crate::files::bounds::ReadLimits;
use crate::files::table::{read_file, sheet_names};
use crate::outputs::export::sheet::META_SHEET;
use crate::store::{inspect, peek_package, FileKind, PackageIdentity, Store, StoreError};
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FileRole {
    /// A Concord study: open it.
    Study,
    /// A rater package. `returned` when it was written from the open study (merge it); otherwise
    /// it is an expert's package to open for rating.
    Package {
        identity: PackageIdentity,
        returned: bool,
    },
    /// A dataset for the import step; `format` when the file itself says which (a folder is the
    /// MentalAlign-70k layout).
    Dataset { format: Option<ImportFormat> },
    /// An encrypted study or a sealed rater package: which one shows only once its passphrase
    /// opens it. `lead_study` when the open study has issued packages: the file is most likely one
    /// coming back (merge it, with the package passphrase); otherwise it opens behind the unlock
    /// screen.
    Encrypted { lead_study: bool },
    /// A fill-in rating sheet exported by Concord and filled in.
    FilledSheet,
    /// A rubric file.
    Rubric,
    /// Nothing Concord can use; `reason` says why.
    Unknown { reason: String },
}

fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Decide what the file at `path` is for; `open` is the study open in the window, if any.
pub fn classify(path: &Path, open: Option<&Store>) -> FileRole {
    let shown = path.display().to_string();
    if path.is_dir() {
        return FileRole::Dataset {
            format: Some(ImportFormat::Mentalalign),
        };
    }
    if !path.exists() {
        return FileRole::Unknown {
            reason: format!("{shown}: no such file"),
        };
    }
    // A FIFO or device handed to the window would make any reader below wait or read forever.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return FileRole::Unknown {
            reason: format!(
                "{shown}: not a regular file (a named pipe, device or socket); Concord opens only files"
            ),
        };
    }
    match extension(path).as_str() {
        "csv" | "tsv" | "json" | "jsonl" => return FileRole::Dataset { format: None },
        "toml" => return FileRole::Rubric,
        "xlsx" => {
            // Through the workbook guard: a workbook bomb double-clicked is no sheet, and never
            // reaches the spreadsheet reader unchecked.
            let limits = ReadLimits::from_env();
            let is_sheet = read_file(path, &limits)
                .and_then(|bytes| sheet_names(&shown, &bytes))
                .map(|names| names.iter().any(|n| n == META_SHEET))
                .unwrap_or(false);
            return if is_sheet {
                FileRole::FilledSheet
            } else {
                FileRole::Dataset { format: None }
            };
        }
        _ => {}
    }
    match inspect(path) {
        Ok(FileKind::Study { .. }) => match peek_package(path) {
            Ok(Some(identity)) => {
                let returned = open
                    .map(|s| s.wrote_package(&identity.package_id).unwrap_or(false))
                    .unwrap_or(false);
                FileRole::Package { identity, returned }
            }
            Ok(None) => FileRole::Study,
            Err(e) => FileRole::Unknown {
                reason: e.to_string(),
            },
        },
        Err(StoreError::PassphraseNeeded { .. }) => FileRole::Encrypted {
            lead_study: open
                .map(|s| s.issued_packages().unwrap_or(false))
                .unwrap_or(false),
        },
        Ok(FileKind::Absent) => FileRole::Unknown {
            reason: format!("{shown}: no such file"),
        },
        Err(StoreError::NotSqlite { .. }) => FileRole::Unknown {
            reason: format!(
                "{shown}: not a study, package, dataset, rating sheet or rubric Concord knows"
            ),
        },
        Err(e) => FileRole::Unknown {
            reason: e.to_string(),
        },
    }
}

/// [`classify`] against the open study, when there is one.
pub fn classify_for(path: &Path, open: Option<&OpenStudy>) -> FileRole {
    classify(path, open.map(OpenStudy::store))
}
