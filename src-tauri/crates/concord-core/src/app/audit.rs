//! `concord audit`: the audit chain as users read it — the study opened for reading only as it
//! is (verifying never creates or upgrades one), the chain recomputed, the entries listed with
//! names — and the times people type for a filter and see in the listing.

use crate::app::open_study::OpenStudy;
use crate::base::clock::{Clock, Millis};
use crate::guard::audit::{self, LogFilter, LoggedEntry};
use crate::store::{ChainCheck, Store, StoreError};
use std::path::Path;
use std::sync::Arc;

/// Open the existing study at `path` to check it, read-only: checking never changes the file.
pub fn open(path: &Path, clock: Arc<dyn Clock>) -> Result<OpenStudy, StoreError> {
    Ok(OpenStudy::new(Store::open_read_only(path, clock, None)?))
}

/// Recompute the chain's links, hashes and digest.
pub fn verify(study: &OpenStudy) -> Result<ChainCheck, StoreError> {
    audit::verify(study.store())
}

/// The entries `filter` selects, with names.
pub fn log(study: &OpenStudy, filter: &LogFilter) -> Result<Vec<LoggedEntry>, StoreError> {
    audit::log(study.store(), filter)
}

/// A time as typed (ISO date or date-time, or epoch milliseconds).
pub fn parse_time(text: &str) -> Option<Millis> {
    audit::parse_time(text)
}
