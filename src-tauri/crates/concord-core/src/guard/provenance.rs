//! The reproducibility record every exported result carries: the study's audit-chain head hash
//! (which data the result came from — `concord audit verify` prints the same hash while the study
//! is unchanged), the fingerprint of the study's lead public key (whose signed checkpoints anchor
//! that chain; `audit verify` prints it too), the Concord version that computed it, and the
//! options used.

use crate::store::{Store, StoreError};
use serde::Serialize;

/// Where a result came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provenance {
    pub concord_version: String,
    /// Hash of the last audit entry when the result was computed.
    pub audit_head: Option<String>,
    /// The fingerprint of the study's lead public key, when it has one.
    pub lead_key: Option<String>,
    /// The options of the computation, as JSON.
    pub options: serde_json::Value,
}

impl Provenance {
    /// The record for a result computed now from `store` with `options`.
    pub fn of(store: &Store, options: serde_json::Value) -> Result<Provenance, StoreError> {
        Ok(Provenance {
            concord_version: env!("CARGO_PKG_VERSION").to_string(),
            audit_head: store.audit_head()?,
            lead_key: store.lead_fingerprint()?,
            options,
        })
    }

    /// One line: `Concord 0.1.0; audit chain head <hash>; lead key <fingerprint>; options {…}`.
    pub fn line(&self) -> String {
        format!(
            "Concord {}; audit chain head {}; lead key {}; options {}",
            self.concord_version,
            self.audit_head.as_deref().unwrap_or("none"),
            self.lead_key.as_deref().unwrap_or("none"),
            self.options
        )
    }
}
