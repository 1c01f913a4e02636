//! The seal of a rater package: how a lead's study can tell a package it issued, untouched since
//! Concord last wrote it, from anything else.
//!
//! A package is an encrypted study. Its content is digested (SHA-256 over every row of every
//! table, in a fixed order, non-null columns only, so a later migration that adds empty columns
//! or tables does not change a digest) in two parts: the *issued* part — rubrics, criteria,
//! sources, conversations, their turns, responses and the pairs of them to compare, which the lead sent and nothing in Concord changes — and
//! the *state* — ratings, history, flags, progress and everything else the expert's Concord
//! writes. The package keeps `seal.*` entries in its `study_meta`: the issuing study's id, the
//! package id, the issued digest, a return number, the state digest, and an HMAC-SHA256 over all
//! of them keyed from the package passphrase. Every write Concord makes to a package renews the
//! seal in the same transaction (return number + 1), so an edit made by any other program leaves
//! the state not matching its seal.
//!
//! The issuing study records, per package, the issued digest and the state at issue, and the
//! highest return number merged with its state digest: a package whose items differ from what was
//! issued, whose state does not match its seal, or whose return number is older than one already
//! merged is refused by the merge (see `package::merge`). The issuing study's audit entry of the
//! issue also records the digest of each issued table, so a merge that finds the items changed
//! names the tables whose rows differ (the digest of the whole decides; those only name).
//!
//! A migration can rewrite a package's rows without changing what they say (schema 12 moved
//! retest ratings into the rating table, with the audit chain's upgrade entry), so a package
//! sealed by an earlier Concord no longer digests to its seal once opened. When its rows were
//! still as sealed just before the migration, the upgrade records the sealed state, the state it
//! left and an HMAC over both with the return number under the seal key (`seal.upgraded_*`); the
//! check then accepts that state in place of the sealed one. Rows changed outside Concord before
//! the upgrade get no such record, and the merge refuses the package as altered.

use super::lead_key::LeadKey;
use super::meta::{get as meta, put as set_meta};
use super::{Passphrase, Store, StoreError, StoreResult, StudyTx};
use hmac::{Hmac, Mac};
use rusqlite::{types::ValueRef, Connection, OptionalExtension};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use zeroize::Zeroizing;

type HmacSha256 = Hmac<Sha256>;

/// The tables whose rows the lead issued (the package's items); every other table is state.
const ISSUED_TABLES: &[&str] = &[
    "conversation",
    "criterion",
    "pair",
    "pair_design",
    "response",
    "rubric",
    "source",
    "turn",
];

/// `study_meta` key of a study's own random id (the issuer named in its packages).
pub use super::lead_key::META_STUDY_ID;

const SEAL_STUDY: &str = "seal.study";
const SEAL_PACKAGE: &str = "seal.package";
const SEAL_ISSUE: &str = "seal.issue";
const SEAL_SEQ: &str = "seal.seq";
const SEAL_STATE: &str = "seal.state";
const SEAL_MAC: &str = "seal.mac";
/// The lead key's signature over the issued package (study, package, items, state at issue,
/// expert): made with a key the expert does not hold, so the issuer cannot be rewritten.
const SEAL_ISSUER: &str = "seal.issuer";

/// The audit action that records a merged return (what the replay record must agree with).
pub const RETURN_ACTION: &str = "package.return";
/// The audit action that records an issued package; its detail's `issued_tables` holds the
/// digest of each issued table ([`IssuedSeal::issue_tables`]).
pub const ISSUE_ACTION: &str = "package_exported";
/// What the lead signs over an issued package.
const ISSUE_DOMAIN: &str = "package.issue";
/// What the lead signs over the study's record of a package's returns.
const RECORD_DOMAIN: &str = "package.record";
/// A schema upgrade's record: the sealed state it started from, the state it left (the same rows
/// in the new layout) and an HMAC over both with the return number, keyed like the seal.
const SEAL_UPGRADED_FROM: &str = "seal.upgraded_from";
const SEAL_UPGRADED_TO: &str = "seal.upgraded_to";
const SEAL_UPGRADE_MAC: &str = "seal.upgrade_mac";

/// The key that signs one package's seal, derived from the package passphrase and package id.
pub struct SealKey {
    package: String,
    mac_key: Zeroizing<Vec<u8>>,
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SealKey")
            .field("package", &self.package)
            .finish_non_exhaustive()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl SealKey {
    pub(super) fn derive(key: &Passphrase, package: &str) -> SealKey {
        let mut mac = <HmacSha256 as Mac>::new_from_slice(key.expose().as_bytes())
            .expect("HMAC accepts a key of any length");
        mac.update(b"concord package seal v1\n");
        mac.update(package.as_bytes());
        SealKey {
            package: package.to_string(),
            mac_key: Zeroizing::new(mac.finalize().into_bytes().to_vec()),
        }
    }

    /// The seal key of an open package (a study that carries a seal), if it is one.
    pub(crate) fn for_store(store: &Store, key: &Passphrase) -> StoreResult<Option<SealKey>> {
        Ok(meta(store.conn(), SEAL_PACKAGE)?.map(|package| SealKey::derive(key, &package)))
    }

    pub(super) fn mac(&self, study: &str, issue: &str, seq: i64, state: &str) -> String {
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&self.mac_key)
            .expect("HMAC accepts a key of any length");
        mac.update(format!("{}\n{study}\n{issue}\n{seq}\n{state}", self.package).as_bytes());
        hex(&mac.finalize().into_bytes())
    }

    fn upgrade_mac(&self, seq: i64, from: &str, to: &str) -> String {
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&self.mac_key)
            .expect("HMAC accepts a key of any length");
        mac.update(format!("{}\nupgrade\n{seq}\n{from}\n{to}", self.package).as_bytes());
        hex(&mac.finalize().into_bytes())
    }

    /// The state a valid upgrade record vouches for in place of the sealed state `sealed`.
    fn upgraded_state(
        &self,
        c: &Connection,
        seq: i64,
        sealed: &str,
    ) -> StoreResult<Option<String>> {
        let (Some(from), Some(to), Some(mac)) = (
            meta(c, SEAL_UPGRADED_FROM)?,
            meta(c, SEAL_UPGRADED_TO)?,
            meta(c, SEAL_UPGRADE_MAC)?,
        ) else {
            return Ok(None);
        };
        Ok((from == sealed && mac == self.upgrade_mac(seq, &from, &to)).then_some(to))
    }

    /// Renew the seal after a write made through Concord (inside that write's transaction).
    pub(crate) fn renew(&self, tx: &StudyTx<'_>) -> StoreResult<()> {
        let c = tx.conn();
        let study = meta(c, SEAL_STUDY)?.unwrap_or_default();
        let issue = meta(c, SEAL_ISSUE)?.unwrap_or_default();
        let seq = meta(c, SEAL_SEQ)?
            .and_then(|s| s.parse::<i64>().ok())
            .unwrap_or(0)
            + 1;
        let state = digest(c, Part::State)?;
        let mac = self.mac(&study, &issue, seq, &state);
        set_meta(c, SEAL_SEQ, &seq.to_string())?;
        set_meta(c, SEAL_STATE, &state)?;
        set_meta(c, SEAL_MAC, &mac)?;
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    Issued,
    State,
}

/// A sealed package about to be migrated: its seal and the state it holds before the migration.
pub(crate) struct BeforeMigration {
    key: SealKey,
    seq: i64,
    sealed: String,
    /// Whether the rows were as the seal (or an earlier upgrade's record) vouches.
    intact: bool,
}

/// Before migrating an encrypted study opened with `key`: if it is a sealed package, note
/// whether its state is still the one its seal vouches for, in the layout the seal was made in.
pub(crate) fn before_migration(
    c: &Connection,
    key: Option<&Passphrase>,
) -> StoreResult<Option<BeforeMigration>> {
    let Some(key) = key else {
        return Ok(None);
    };
    let (Some(package), Some(seq), Some(sealed)) = (
        meta(c, SEAL_PACKAGE)?,
        meta(c, SEAL_SEQ)?,
        meta(c, SEAL_STATE)?,
    ) else {
        return Ok(None);
    };
    let key = SealKey::derive(key, &package);
    let seq = seq.parse::<i64>().unwrap_or(-1);
    let vouched = key
        .upgraded_state(c, seq, &sealed)?
        .unwrap_or_else(|| sealed.clone());
    let intact = digest(c, Part::State)? == vouched;
    Ok(Some(BeforeMigration {
        key,
        seq,
        sealed,
        intact,
    }))
}

/// After the migration: a migration that rewrote the package's rows (schema 12 moved its retest
/// ratings into the rating table) leaves a state its seal cannot vouch for. When the rows were
/// intact before it, record the upgrade — the sealed state, the state now, an HMAC over both —
/// so the merge still accepts the package; rows changed outside Concord before the upgrade get
/// no record and stay refused as altered.
pub(crate) fn after_migration(c: &Connection, before: BeforeMigration) -> StoreResult<()> {
    if !before.intact {
        return Ok(());
    }
    let now = digest(c, Part::State)?;
    if now == before.sealed {
        return Ok(());
    }
    let mac = before.key.upgrade_mac(before.seq, &before.sealed, &now);
    let tx = c.unchecked_transaction()?;
    set_meta(&tx, SEAL_UPGRADED_FROM, &before.sealed)?;
    set_meta(&tx, SEAL_UPGRADED_TO, &now)?;
    set_meta(&tx, SEAL_UPGRADE_MAC, &mac)?;
    tx.commit()?;
    Ok(())
}

/// SHA-256 (hex) of one part of a study's content.
pub(super) fn digest(c: &Connection, part: Part) -> StoreResult<String> {
    digest_into(c, part, None)
}

/// SHA-256 (hex) of one part of a study's content, and of each of its tables that holds rows
/// (over the same bytes that table adds to the whole), by table name. The whole is what the seal
/// holds; the tables' digests only say which table differs when the whole does.
fn digests(c: &Connection, part: Part) -> StoreResult<(String, BTreeMap<String, String>)> {
    let mut tables = BTreeMap::new();
    let whole = digest_into(c, part, Some(&mut tables))?;
    Ok((whole, tables))
}

/// [`digest`], and each table's own digest into `by_table` when given (the state's, renewed at
/// every write, is digested whole only).
fn digest_into(
    c: &Connection,
    part: Part,
    mut by_table: Option<&mut BTreeMap<String, String>>,
) -> StoreResult<String> {
    let tables: Vec<(String, bool)> = c
        .prepare(
            "SELECT name, wr FROM pragma_table_list
             WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? != 0)))?
        .collect::<Result<_, _>>()?;
    let mut hash = Sha256::new();
    for (table, without_rowid) in tables {
        if ISSUED_TABLES.contains(&table.as_str()) != (part == Part::Issued) {
            continue;
        }
        let columns: Vec<String> = c
            .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?
            .query_map([&table], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let order = if without_rowid {
            (1..=columns.len())
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            "rowid".to_string()
        };
        let filter = if table == "study_meta" {
            "WHERE key NOT LIKE 'seal.%'"
        } else {
            ""
        };
        let quoted = table.replace('"', "\"\"");
        let mut stmt = c.prepare(&format!(
            "SELECT * FROM \"{quoted}\" {filter} ORDER BY {order}"
        ))?;
        let mut rows = stmt.query([])?;
        // The whole and this table's own digest (when asked for) are fed the same bytes.
        let mut this = by_table.is_some().then(Sha256::new);
        let mut feed = |bytes: &[u8]| {
            hash.update(bytes);
            if let Some(this) = this.as_mut() {
                this.update(bytes);
            }
        };
        let mut first = true;
        while let Some(row) = rows.next()? {
            if first {
                feed(b"T");
                feed(table.as_bytes());
                feed(&[0]);
                first = false;
            }
            feed(b"R");
            for (i, name) in columns.iter().enumerate() {
                let tag_and_bytes: Option<(u8, Vec<u8>)> = match row.get_ref(i)? {
                    ValueRef::Null => None,
                    ValueRef::Integer(v) => Some((b'i', v.to_le_bytes().to_vec())),
                    ValueRef::Real(v) => Some((b'f', v.to_bits().to_le_bytes().to_vec())),
                    ValueRef::Text(t) => Some((b't', t.to_vec())),
                    ValueRef::Blob(b) => Some((b'b', b.to_vec())),
                };
                if let Some((tag, bytes)) = tag_and_bytes {
                    feed(name.as_bytes());
                    feed(&[0, tag]);
                    feed(&(bytes.len() as u64).to_le_bytes());
                    feed(&bytes);
                }
            }
        }
        if let (false, Some(by_table), Some(this)) = (first, by_table.as_mut(), this) {
            by_table.insert(table, hex(&this.finalize()));
        }
    }
    Ok(hex(&hash.finalize()))
}

/// The tables of two sets of tables' digests (see `digests`) whose rows differ: a table in one
/// and not the other, or digested differently.
pub fn differing_tables(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<String> {
    a.keys()
        .chain(b.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|t| a.get(*t) != b.get(*t))
        .cloned()
        .collect()
}

/// What the issuing study records of a package when it seals it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedSeal {
    /// Digest of the package's items.
    pub issue: String,
    /// Digest of each issued table that holds rows, by table name (what the issuing study
    /// records to name the table a merge finds changed).
    pub issue_tables: BTreeMap<String, String>,
    /// Digest of its state (ratings, progress, …) as issued.
    pub state: String,
    /// The lead key's signature over the issued package, when the lead's key signed it.
    pub issuer_signature: Option<String>,
}

/// A package's seal as found, checked against its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealState {
    /// The issuing study's id.
    pub study: String,
    pub package: String,
    /// The return number: 0 as issued, + 1 for every write Concord made since.
    pub seq: i64,
    /// The state digest the seal vouches for.
    pub state: String,
    /// Whether the seal's own MAC is right (the seal entries were not edited).
    pub mac_valid: bool,
    /// Whether the items still digest to what the seal says was issued.
    pub issue_matches: bool,
    /// The items' digest now.
    pub issue_now: String,
    /// The digest of each issued table that holds rows now, by table name.
    pub issue_tables_now: BTreeMap<String, String>,
    /// Whether the state still digests to what the seal vouches for.
    pub state_matches: bool,
    /// The lead's signature over the issued package, as the package carries it.
    pub issuer_signature: Option<String>,
    /// The expert the package names.
    pub rater: Option<String>,
}

/// The issuing study's record of one package's seal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageSealRecord {
    pub issue: Option<String>,
    pub issue_state: Option<String>,
    pub merged_seq: Option<i64>,
    pub merged_state: Option<String>,
    /// The lead's signature over the package as issued (also in the package).
    pub issuer_signature: Option<String>,
    /// The lead's signature over this record (issue, highest return merged, its state).
    pub replay_signature: Option<String>,
}

/// What the lead signs over an issued package: its id, items, state at issue and expert.
fn issue_parts<'a>(
    package: &'a str,
    issue: &'a str,
    state: &'a str,
    rater: &'a str,
) -> [&'a str; 4] {
    [package, issue, state, rater]
}

/// What the lead signs over the record of a package: everything the merge checks a return
/// against, so setting it back (the replay counter above all) breaks the signature.
fn record_parts(package: &str, r: &PackageSealRecord) -> Vec<String> {
    let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_string());
    vec![
        package.to_string(),
        or_dash(&r.issue),
        or_dash(&r.issue_state),
        r.merged_seq.map_or("-".to_string(), |s| s.to_string()),
        or_dash(&r.merged_state),
        or_dash(&r.issuer_signature),
    ]
}

/// The lead's signature over the record of package `package`.
pub(super) fn sign_record(key: &LeadKey, package: &str, record: &PackageSealRecord) -> String {
    let parts = record_parts(package, record);
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    key.sign(RECORD_DOMAIN, &parts)
}

/// How the lead's signatures over one returned package stand in the study it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeadSignatures {
    /// Whether the study has a lead public key (its packages and records are then signed).
    pub keyed: bool,
    /// Whether the package carries an issuer signature, and whether it verifies under the
    /// study's key for this study, this package id, its items as they are now, its state at
    /// issue and its expert.
    pub issuer: Option<bool>,
    /// Whether the study's record of the package carries a signature that verifies.
    pub record_signed: bool,
    /// The latest return of this package that the audit chain records as merged in an entry
    /// a signed checkpoint anchors (in a study without a key: in any entry).
    pub chain_seq: Option<i64>,
    /// In a keyed study, the first entry recording a return of this package that no signed
    /// checkpoint anchors (written outside Concord, or where the key was not available).
    pub unanchored_return: Option<i64>,
}

impl Store {
    /// Seal a package just written (return number 0) as issued by study `study` under id
    /// `package`; from now on every write through this store renews the seal. Needs the store to
    /// be encrypted: the seal key comes from its passphrase.
    /// With `issuer`, the lead key of study `study`, the issued package is signed too: the
    /// signature travels in the package, and the merge checks it with the study's public key.
    pub fn seal_package(
        &mut self,
        study: &str,
        package: &str,
        issuer: Option<&LeadKey>,
    ) -> StoreResult<IssuedSeal> {
        let key = self.key.clone().ok_or_else(|| {
            StoreError::Invalid("a package is sealed only when it is encrypted".to_string())
        })?;
        let seal = SealKey::derive(&key, package);
        let c = self.conn();
        let ((issue, issue_tables), state) = (digests(c, Part::Issued)?, digest(c, Part::State)?);
        let rater = meta(c, super::META_PACKAGE_RATER)?.unwrap_or_default();
        let issuer_signature = issuer
            .filter(|k| k.study_id() == study)
            .map(|k| k.sign(ISSUE_DOMAIN, &issue_parts(package, &issue, &state, &rater)));
        let issued = IssuedSeal {
            issue,
            issue_tables,
            state,
            issuer_signature,
        };
        let mac = seal.mac(study, &issued.issue, 0, &issued.state);
        self.seal = None;
        self.write(|tx| -> StoreResult<()> {
            let c = tx.conn();
            set_meta(c, SEAL_STUDY, study)?;
            set_meta(c, SEAL_PACKAGE, package)?;
            set_meta(c, SEAL_ISSUE, &issued.issue)?;
            set_meta(c, SEAL_SEQ, "0")?;
            set_meta(c, SEAL_STATE, &issued.state)?;
            set_meta(c, SEAL_MAC, &mac)?;
            if let Some(signature) = &issued.issuer_signature {
                set_meta(c, SEAL_ISSUER, signature)?;
            }
            Ok(())
        })?;
        self.seal = Some(seal);
        Ok(issued)
    }

    /// This package's seal checked against its content, or `None` when it carries no seal (or is
    /// not encrypted, so no seal key can be derived).
    pub fn package_seal(&self) -> StoreResult<Option<SealState>> {
        let (Some(key), c) = (self.key.as_ref(), self.conn()) else {
            return Ok(None);
        };
        let (Some(study), Some(package), Some(issue), Some(seq), Some(state), Some(mac)) = (
            meta(c, SEAL_STUDY)?,
            meta(c, SEAL_PACKAGE)?,
            meta(c, SEAL_ISSUE)?,
            meta(c, SEAL_SEQ)?,
            meta(c, SEAL_STATE)?,
            meta(c, SEAL_MAC)?,
        ) else {
            return Ok(None);
        };
        let seq_num = seq.parse::<i64>().unwrap_or(-1);
        let seal_key = SealKey::derive(key, &package);
        let expected = seal_key.mac(&study, &issue, seq_num, &state);
        let (issue_now, issue_tables_now) = digests(c, Part::Issued)?;
        let state_now = digest(c, Part::State)?;
        // After a schema upgrade that rewrote the rows, the upgrade's record vouches for them.
        let upgraded = seal_key.upgraded_state(c, seq_num, &state)?;
        Ok(Some(SealState {
            issuer_signature: meta(c, SEAL_ISSUER)?,
            rater: meta(c, super::META_PACKAGE_RATER)?,
            mac_valid: seq_num >= 0 && expected == mac,
            issue_matches: issue_now == issue,
            issue_now,
            issue_tables_now,
            state_matches: state_now == state || upgraded.as_deref() == Some(state_now.as_str()),
            study,
            package,
            seq: seq_num,
            state,
        }))
    }

    /// The digest of each table of package `package` as issued, by table name, as the audit
    /// entry of its issue records it (`None` for a package issued before entries held them).
    /// Only names the table a merge finds changed: the seal's digest of the whole decides.
    pub fn issued_tables(&self, package: &str) -> StoreResult<Option<BTreeMap<String, String>>> {
        let detail: Option<String> = self
            .conn()
            .query_row(
                "SELECT json_extract(detail_json, '$.issued_tables') FROM audit_log
                 WHERE action = ?1 AND json_valid(detail_json)
                   AND json_extract(detail_json, '$.package') = ?2
                 ORDER BY id DESC LIMIT 1",
                rusqlite::params![ISSUE_ACTION, package],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        Ok(detail.and_then(|d| serde_json::from_str(&d).ok()))
    }

    /// This study's own id, if it has issued a package yet.
    pub fn study_id(&self) -> StoreResult<Option<String>> {
        meta(self.conn(), META_STUDY_ID)
    }

    /// The seal recorded for package `package` when it was issued, and its last merged return.
    pub fn package_seal_record(&self, package: &str) -> StoreResult<Option<PackageSealRecord>> {
        self.read().package_seal_record(package)
    }

    /// The lead's signatures over a returned package (`seal`, as found in it) and over this
    /// study's record of it (`record`), checked with the study's lead public key, and the latest
    /// return of the package the audit chain records as merged.
    pub fn lead_signatures(
        &self,
        seal: &SealState,
        record: &PackageSealRecord,
    ) -> StoreResult<LeadSignatures> {
        let c = self.conn();
        let keyed = super::lead_key::recorded_public(c)?.is_some();
        // In a keyed study only anchored history counts: the replay floor comes from entries a
        // signed checkpoint covers, and an entry after them naming the package is reported.
        let anchored = if keyed {
            self.anchored_through()?.unwrap_or(0)
        } else {
            i64::MAX
        };
        let returns = "FROM audit_log WHERE action = ?1 AND json_valid(detail_json)
                         AND json_extract(detail_json, '$.package') = ?2";
        let chain_seq: Option<i64> = c
            .query_row(
                &format!(
                    "SELECT MAX(CAST(json_extract(detail_json, '$.seq') AS INTEGER)) {returns} AND id <= ?3"
                ),
                rusqlite::params![RETURN_ACTION, seal.package, anchored],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        let unanchored_return: Option<i64> = if keyed {
            c.query_row(
                &format!("SELECT MIN(id) {returns} AND id > ?3"),
                rusqlite::params![RETURN_ACTION, seal.package, anchored],
                |r| r.get(0),
            )
            .optional()?
            .flatten()
        } else {
            None
        };
        let Some(public) = super::lead_key::recorded_public(c)? else {
            return Ok(LeadSignatures {
                keyed: false,
                issuer: None,
                record_signed: false,
                chain_seq,
                unanchored_return,
            });
        };
        let study = meta(c, META_STUDY_ID)?.unwrap_or_default();
        let issuer = seal.issuer_signature.as_deref().map(|signature| {
            let (issue_state, rater) = (
                record.issue_state.as_deref().unwrap_or_default(),
                seal.rater.as_deref().unwrap_or_default(),
            );
            seal.study == study
                && super::lead_key::verify(
                    &public,
                    &study,
                    ISSUE_DOMAIN,
                    &issue_parts(&seal.package, &seal.issue_now, issue_state, rater),
                    signature,
                )
        });
        let parts = record_parts(&seal.package, record);
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        let record_signed = record.replay_signature.as_deref().is_some_and(|signature| {
            super::lead_key::verify(&public, &study, RECORD_DOMAIN, &parts, signature)
        });
        Ok(LeadSignatures {
            keyed: true,
            issuer,
            record_signed,
            chain_seq,
            unanchored_return,
        })
    }
}

impl super::StudyRead<'_> {
    /// The seal recorded for package `package` when it was issued, and its last merged return.
    pub fn package_seal_record(&self, package: &str) -> StoreResult<Option<PackageSealRecord>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT issue_digest, issue_state, merged_seq, merged_state, issuer_signature,
                        replay_signature
                 FROM package WHERE id = ?1",
                [package],
                |r| {
                    Ok(PackageSealRecord {
                        issue: r.get(0)?,
                        issue_state: r.get(1)?,
                        merged_seq: r.get(2)?,
                        merged_state: r.get(3)?,
                        issuer_signature: r.get(4)?,
                        replay_signature: r.get(5)?,
                    })
                },
            )
            .optional()?)
    }
}

impl StudyTx<'_> {
    /// This study's id, set to `candidate` if it has none yet.
    pub fn ensure_study_id(&mut self, candidate: &str) -> StoreResult<String> {
        if let Some(id) = meta(self.conn(), META_STUDY_ID)? {
            return Ok(id);
        }
        set_meta(self.conn(), META_STUDY_ID, candidate)?;
        Ok(candidate.to_string())
    }
}
