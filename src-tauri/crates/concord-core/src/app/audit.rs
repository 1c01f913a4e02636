//! `concord audit`: the audit chain as users read it — the existing study opened (never created;
//! an encrypted one with its passphrase), the chain recomputed and checked against the lead key
//! this machine holds for it and a head recorded elsewhere, the entries listed with names — and
//! the times people type for a filter and see in the listing.

use crate::app::open_study::{lead_keys, OpenStudy};
use crate::base::clock::{Clock, Millis};
use crate::guard::audit::{self, LogFilter, LoggedEntry};
use crate::store::lead_key::LocalLeadKey;
use crate::store::{ChainCheck, ChainTrust, Passphrase, Store, StoreError};
use std::path::Path;
use std::sync::Arc;

/// Open the existing study at `path` to check it, read-only (checking never changes the file), an
/// encrypted one with `key`.
pub fn open(
    path: &Path,
    clock: Arc<dyn Clock>,
    key: Option<&Passphrase>,
) -> Result<OpenStudy, StoreError> {
    Ok(OpenStudy::new(Store::open_read_only(path, clock, key)?))
}

/// Recompute the chain's links, hashes, signed checkpoints and digest. When this machine's key
/// store holds a lead key for the study's id, the study's public key must be that key's;
/// `expect_head`, a head hash recorded elsewhere, must be an entry of the chain; with
/// `require_signed` every entry must have been written under the lead's key.
pub fn verify(
    study: &OpenStudy,
    expect_head: Option<&str>,
    require_signed: bool,
) -> Result<ChainCheck, StoreError> {
    let local_key = match lead_keys() {
        Some(keys) => match study.store().local_lead_key(keys)? {
            LocalLeadKey::Held(public) => Some(public),
            LocalLeadKey::None | LocalLeadKey::NoStudyId => None,
        },
        None => None,
    };
    audit::verify_with(
        study.store(),
        &ChainTrust {
            local_key,
            expect_head: expect_head.map(str::to_string),
            require_signed,
        },
    )
}

/// Give the existing study at `path` (an encrypted one with `key`) a lead key kept on this
/// machine, when it never had one ([`Store::adopt_lead_key`]): the new key's fingerprint and the
/// number of entries before it that no key signed.
pub fn adopt_key(
    path: &Path,
    clock: Arc<dyn Clock>,
    key: Option<&Passphrase>,
) -> Result<(String, i64), StoreError> {
    let keys = lead_keys().cloned().ok_or_else(|| {
        StoreError::Invalid(
            "no key store was named for this process, so no lead key can be kept".into(),
        )
    })?;
    let mut store = Store::open_with(path, clock, key)?;
    store.adopt_lead_key(keys)
}

/// The entries `filter` selects, with names.
pub fn log(study: &OpenStudy, filter: &LogFilter) -> Result<Vec<LoggedEntry>, StoreError> {
    audit::log(study.store(), filter)
}

/// A time as typed (ISO date or date-time, or epoch milliseconds).
pub fn parse_time(text: &str) -> Option<Millis> {
    audit::parse_time(text)
}
