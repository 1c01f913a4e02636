//! The lead's signing key: one Ed25519 key per study, made when a lead's study is created by a
//! Concord that has a key store (see [`KeyStore`]), named by the study's random id (`study.id`
//! in `study_meta`). Its public half is kept in the study (`lead.public_key`; the chain's
//! `lead_key.created` entry records where it was made) and printed in every export's
//! provenance as a fingerprint; its private half never enters a study file or a package: it is
//! kept in the OS keyring (service `concord`, account `lead-key:<study id>`) or, where no keyring
//! answers, in a file readable by its owner only (mode 0600) in the user's data folder, one per
//! study id. `CONCORD_KEY_DIR` names a folder that replaces both (tests and CI use it, so they
//! never touch a real keyring).
//!
//! The key signs three things, each message tagged with what it is and the study's id so one
//! signature can never stand for another: checkpoints of the audit chain's head
//! (`store/checkpoint.rs`), the items of every package issued, and the study's record of each
//! package's returns merged (`store/seal.rs`). Anyone can check a signature with the public key;
//! only the holder of the private key can make one.
//!
//! A key belongs to one study. Beside each key the store keeps its *binding* (`<study id>.chain`
//! in the key folder, or in the data folder beside the keyring: not secret, owner-only): the
//! study id, the public half and the hash of the first entry of that study's audit chain. A key
//! is made only for a study whose chain has just started (its creation); a chain that already
//! holds entries never gets a new key silently. Opened where the binding of its chain is kept, a
//! study that names another id, or no key, or another key, is refused for writing with the reason:
//! its key records were changed outside Concord. The entry at which the key was made is read
//! from the chain itself (the `lead_key.created` entry naming the key's fingerprint), never from
//! an unsigned setting.

use super::{Lead, Store, StoreError, StoreResult, StudyTx};
use crate::base::error_code::{Coded, ErrorCode};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use rusqlite::OptionalExtension;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The environment variable naming a folder that holds lead keys instead of the OS keyring.
pub const KEY_DIR_ENV: &str = "CONCORD_KEY_DIR";
/// The keyring service under which Concord keeps its secrets.
pub const KEYRING_SERVICE: &str = "concord";
/// The keyring account of a study's lead key is this prefix and the study's id.
pub const LEAD_KEY_ACCOUNT_PREFIX: &str = "lead-key:";
/// `study_meta` key of a study's own random id (the issuer named in its packages, the name of its
/// lead key).
pub const META_STUDY_ID: &str = "study.id";
/// `study_meta` key of the study's lead public key (hex).
pub const META_LEAD_PUBLIC_KEY: &str = "lead.public_key";

/// Why a lead key could not be read or kept.
#[derive(Debug, thiserror::Error)]
pub enum LeadKeyError {
    #[error("the study id {0:?} is not one Concord makes (hexadecimal digits), so no lead key is looked up or kept for it")]
    BadStudyId(String),
    #[error("{path}: cannot keep the study's lead key here: {detail}")]
    Io { path: String, detail: String },
    #[error("{path}: not a lead key (damaged or edited); Concord keeps this file exactly as it wrote it")]
    Damaged { path: String },
    #[error(
        "{path}: a lead key for this study id is kept already; Concord never replaces a lead key"
    )]
    KeyExists { path: String },
}

impl Coded for LeadKeyError {
    fn code(&self) -> ErrorCode {
        match self {
            LeadKeyError::BadStudyId(_)
            | LeadKeyError::Damaged { .. }
            | LeadKeyError::KeyExists { .. } => ErrorCode::Invalid,
            LeadKeyError::Io { .. } => ErrorCode::Io,
        }
    }
}

/// A study's lead signing key (the private half; `Debug` shows only the study and fingerprint).
#[derive(Clone)]
pub struct LeadKey {
    study_id: String,
    key: SigningKey,
}

impl std::fmt::Debug for LeadKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeadKey")
            .field("study_id", &self.study_id)
            .field("fingerprint", &fingerprint(&self.public_hex()))
            .finish_non_exhaustive()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let text = text.trim();
    if text.len() != N * 2 || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&text[i * 2..i * 2 + 2], 16).ok()?;
    }
    Some(out)
}

/// Whether `id` is a study id as Concord makes them (hexadecimal, at most 64 digits): ids name
/// key files and keyring accounts, so anything else (a path, a separator) is never used as one.
pub fn is_study_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A new random study id (128 bits).
pub(crate) fn new_study_id() -> String {
    let mut bytes = [0u8; 16];
    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut bytes);
    hex(&bytes)
}

/// What a signature signs: a tag, the study's id and the parts, each length-prefixed.
fn message(study_id: &str, domain: &str, parts: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for part in ["concord lead signature v1", domain, study_id]
        .iter()
        .chain(parts)
    {
        out.extend_from_slice(&(part.len() as u64).to_le_bytes());
        out.extend_from_slice(part.as_bytes());
    }
    out
}

impl LeadKey {
    /// A new key for study `study_id`, from the operating system's randomness (a signing key
    /// must not be reproducible from anything a study or a seed holds).
    pub(crate) fn generate(study_id: &str) -> LeadKey {
        LeadKey {
            study_id: study_id.to_string(),
            key: SigningKey::generate(&mut rand::rngs::OsRng),
        }
    }

    /// The study this key signs for.
    pub fn study_id(&self) -> &str {
        &self.study_id
    }

    /// The public half, hex.
    pub fn public_hex(&self) -> String {
        hex(self.key.verifying_key().as_bytes())
    }

    /// A secret for `purpose`, derived from the private half (HMAC-SHA256 keyed by it, over the
    /// purpose and the study's id): only a machine holding the key can compute it, and it is
    /// never written anywhere (the web server seals its logins, invitations and sessions with
    /// one, so a row written into the study by anything else does not count).
    pub fn derived_secret(&self, purpose: &str) -> [u8; 32] {
        use hmac::Mac as _;
        let mut mac = <hmac::Hmac<Sha256> as hmac::Mac>::new_from_slice(&self.key.to_bytes())
            .expect("HMAC accepts a key of any length");
        mac.update(&message(&self.study_id, "derived secret", &[purpose]));
        mac.finalize().into_bytes().into()
    }

    /// Sign `parts` as a `domain` statement about this key's study (hex signature).
    pub(crate) fn sign(&self, domain: &str, parts: &[&str]) -> String {
        hex(&self
            .key
            .sign(&message(&self.study_id, domain, parts))
            .to_bytes())
    }
}

/// Whether `signature` (hex) is the signature of the key `public` (hex) over `parts` as a
/// `domain` statement about study `study_id`.
pub(crate) fn verify(
    public: &str,
    study_id: &str,
    domain: &str,
    parts: &[&str],
    signature: &str,
) -> bool {
    let (Some(public), Some(signature)) = (unhex::<32>(public), unhex::<64>(signature)) else {
        return false;
    };
    let Ok(key) = VerifyingKey::from_bytes(&public) else {
        return false;
    };
    key.verify(
        &message(study_id, domain, parts),
        &Signature::from_bytes(&signature),
    )
    .is_ok()
}

/// Whether `public` (hex) is a well-formed Ed25519 public key.
pub(crate) fn is_public_key(public: &str) -> bool {
    unhex::<32>(public).is_some_and(|b| VerifyingKey::from_bytes(&b).is_ok())
}

/// The fingerprint people compare: `ed25519:` and the first 16 bytes of the SHA-256 of the
/// public key, in hex groups of four.
pub fn fingerprint(public: &str) -> String {
    let digest = Sha256::digest(public.trim().as_bytes());
    let text = hex(&digest[..16]);
    let groups: Vec<&str> = (0..8).map(|i| &text[i * 4..i * 4 + 4]).collect();
    format!("ed25519:{}", groups.join(":"))
}

/// Where this machine keeps lead keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyStore {
    /// A folder of key files (`CONCORD_KEY_DIR`; tests and CI).
    Folder(PathBuf),
    /// The OS keyring, and a folder of key files when the keyring does not answer.
    Keyring { fallback: Option<PathBuf> },
}

impl KeyStore {
    /// The key store this process uses: the folder `CONCORD_KEY_DIR` names, else the OS keyring
    /// with the user's data folder (`…/concord/lead-keys`) where no keyring answers.
    pub fn from_env() -> KeyStore {
        match std::env::var_os(KEY_DIR_ENV).filter(|v| !v.is_empty()) {
            Some(dir) => KeyStore::Folder(PathBuf::from(dir)),
            None => KeyStore::Keyring {
                fallback: dirs::data_dir().map(|d| d.join("concord").join("lead-keys")),
            },
        }
    }

    fn folder(&self) -> Option<&Path> {
        match self {
            KeyStore::Folder(dir) => Some(dir),
            KeyStore::Keyring { fallback } => fallback.as_deref(),
        }
    }

    fn file(dir: &Path, study_id: &str) -> PathBuf {
        dir.join(format!("{study_id}.key"))
    }

    /// The lead key of study `study_id`, if this machine holds it.
    pub fn load(&self, study_id: &str) -> Result<Option<LeadKey>, LeadKeyError> {
        if !is_study_id(study_id) {
            return Err(LeadKeyError::BadStudyId(study_id.to_string()));
        }
        if let KeyStore::Keyring { .. } = self {
            let account = format!("{LEAD_KEY_ACCOUNT_PREFIX}{study_id}");
            if let Ok(secret) =
                keyring::Entry::new(KEYRING_SERVICE, &account).and_then(|e| e.get_password())
            {
                let key = unhex::<32>(&secret).ok_or_else(|| LeadKeyError::Damaged {
                    path: format!("keyring account {account}"),
                })?;
                return Ok(Some(LeadKey {
                    study_id: study_id.to_string(),
                    key: SigningKey::from_bytes(&key),
                }));
            }
        }
        let Some(dir) = self.folder() else {
            return Ok(None);
        };
        let path = KeyStore::file(dir, study_id);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let key = unhex::<32>(&text).ok_or_else(|| LeadKeyError::Damaged {
                    path: path.display().to_string(),
                })?;
                Ok(Some(LeadKey {
                    study_id: study_id.to_string(),
                    key: SigningKey::from_bytes(&key),
                }))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(LeadKeyError::Io {
                path: path.display().to_string(),
                detail: e.to_string(),
            }),
        }
    }

    /// Keep `key`: in the keyring, or in a new 0600 file of the folder (never replacing one).
    pub(crate) fn save(&self, key: &LeadKey) -> Result<(), LeadKeyError> {
        if !is_study_id(&key.study_id) {
            return Err(LeadKeyError::BadStudyId(key.study_id.clone()));
        }
        let secret = zeroize::Zeroizing::new(hex(key.key.as_bytes()));
        if let KeyStore::Keyring { .. } = self {
            let account = format!("{LEAD_KEY_ACCOUNT_PREFIX}{}", key.study_id);
            if keyring::Entry::new(KEYRING_SERVICE, &account)
                .and_then(|e| e.set_password(&secret))
                .is_ok()
            {
                return Ok(());
            }
        }
        let Some(dir) = self.folder() else {
            return Err(LeadKeyError::Io {
                path: "the user's data folder".to_string(),
                detail: "no keyring answers and this system names no data folder".to_string(),
            });
        };
        let io = |path: &Path, e: std::io::Error| LeadKeyError::Io {
            path: path.display().to_string(),
            detail: e.to_string(),
        };
        create_private_dir(dir).map_err(|e| io(dir, e))?;
        let path = KeyStore::file(dir, &key.study_id);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => LeadKeyError::KeyExists {
                path: path.display().to_string(),
            },
            _ => io(&path, e),
        })?;
        std::io::Write::write_all(&mut file, secret.as_bytes()).map_err(|e| io(&path, e))?;
        file.sync_all().map_err(|e| io(&path, e))?;
        Ok(())
    }

    /// Forget the key of `study_id` (a key made for a write that was then rolled back).
    pub(crate) fn forget(&self, study_id: &str) {
        if !is_study_id(study_id) {
            return;
        }
        if let KeyStore::Keyring { .. } = self {
            let account = format!("{LEAD_KEY_ACCOUNT_PREFIX}{study_id}");
            if let Ok(entry) = keyring::Entry::new(KEYRING_SERVICE, &account) {
                let _ = entry.delete_credential();
            }
        }
        if let Some(dir) = self.folder() {
            let _ = std::fs::remove_file(KeyStore::file(dir, study_id));
        }
        self.forget_binding(study_id);
    }
}

/// The hash of the chain's first entry: what names the chain wherever the study is copied or
/// renamed (a lead key's binding, see `lead_key`).
fn chain_start(conn: &rusqlite::Connection) -> StoreResult<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT hash FROM audit_log WHERE hash IS NOT NULL ORDER BY id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()?)
}

/// How many entries the chain holds.
fn chained_entries(conn: &rusqlite::Connection) -> StoreResult<i64> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM audit_log WHERE hash IS NOT NULL",
        [],
        |r| r.get(0),
    )?)
}

/// What the key store remembers of a key beside it: the study it signs for, its public half and
/// the hash of that study's first audit entry (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeyBinding {
    pub study_id: String,
    pub public: String,
    pub chain_start: String,
}

/// The most bindings read from a key folder, and the longest binding file read: a folder of
/// anything else is not read without bound.
const MAX_BINDINGS: usize = 100_000;
const MAX_BINDING_BYTES: u64 = 4_096;

impl KeyStore {
    fn binding_file(dir: &Path, study_id: &str) -> PathBuf {
        dir.join(format!("{study_id}.chain"))
    }

    /// Remember that the key of `binding.study_id` signs the chain that starts at
    /// `binding.chain_start` (kept beside the key; an existing binding is left as it is).
    pub(crate) fn bind(&self, binding: &KeyBinding) -> Result<(), LeadKeyError> {
        if !is_study_id(&binding.study_id) {
            return Err(LeadKeyError::BadStudyId(binding.study_id.clone()));
        }
        let Some(dir) = self.folder() else {
            return Ok(());
        };
        let io = |path: &Path, e: std::io::Error| LeadKeyError::Io {
            path: path.display().to_string(),
            detail: e.to_string(),
        };
        create_private_dir(dir).map_err(|e| io(dir, e))?;
        let path = KeyStore::binding_file(dir, &binding.study_id);
        let text = serde_json::to_string(binding).map_err(|e| LeadKeyError::Io {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = match options.open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
            Err(e) => return Err(io(&path, e)),
        };
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(|e| io(&path, e))?;
        file.sync_all().map_err(|e| io(&path, e))?;
        Ok(())
    }

    /// The binding of the key that signs the chain starting at `chain_start`, if this machine
    /// keeps one.
    pub fn binding_of_chain(&self, chain_start: &str) -> Option<KeyBinding> {
        let dir = self.folder()?;
        std::fs::read_dir(dir)
            .ok()?
            .take(MAX_BINDINGS)
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".chain"))
            .filter_map(|e| read_binding(&e.path()))
            .find(|b| b.chain_start == chain_start)
    }

    /// Forget the binding of `study_id` (with its key, when a write that made it failed).
    fn forget_binding(&self, study_id: &str) {
        if let (true, Some(dir)) = (is_study_id(study_id), self.folder()) {
            let _ = std::fs::remove_file(KeyStore::binding_file(dir, study_id));
        }
    }
}

fn read_binding(path: &Path) -> Option<KeyBinding> {
    let file = std::fs::File::open(path).ok()?;
    if file.metadata().ok()?.len() > MAX_BINDING_BYTES {
        return None;
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(file, MAX_BINDING_BYTES), &mut text)
        .ok()?;
    serde_json::from_str(&text).ok()
}

/// Create `dir` (and its parents) readable by its owner only.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

impl From<LeadKeyError> for StoreError {
    fn from(e: LeadKeyError) -> StoreError {
        StoreError::LeadKey(e)
    }
}

/// The public key recorded in a study, if any.
pub(super) fn recorded_public(c: &rusqlite::Connection) -> StoreResult<Option<String>> {
    super::meta::get(c, META_LEAD_PUBLIC_KEY)
}

/// What this machine's key store says about a study's lead key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalLeadKey {
    /// The study has no id yet, so no key can be kept for it.
    NoStudyId,
    /// The key store holds no key for the study's id.
    None,
    /// The public half of the key the store holds for the study's id.
    Held(String),
}

/// What a study's file and this machine's key store say about its lead key.
struct KeyFacts<'a> {
    id: Option<&'a str>,
    public: Option<&'a str>,
    held: Option<&'a LeadKey>,
    bound: Option<&'a KeyBinding>,
}

impl KeyFacts<'_> {
    /// Why the study's key records cannot be what Concord wrote, when they cannot.
    fn changed_outside(&self) -> Option<String> {
        let named =
            |id: Option<&str>| id.map_or("no study id".to_string(), |i| format!("study id {i}"));
        let key = |p: Option<&str>| {
            p.map_or("no lead key".to_string(), |p| {
                format!("lead key {}", fingerprint(p))
            })
        };
        if let Some(b) = self.bound {
            if self.id != Some(b.study_id.as_str()) || self.public != Some(b.public.as_str()) {
                return Some(format!(
                    "its audit chain began as study {}, whose lead key ({}) this machine holds, but the file now names {} and {}",
                    b.study_id,
                    fingerprint(&b.public),
                    named(self.id),
                    key(self.public)
                ));
            }
        }
        match (self.held, self.public) {
            (Some(k), None) => Some(format!(
                "this machine holds the lead key of study {} ({}), but the file records no lead key for it",
                k.study_id(),
                fingerprint(&k.public_hex())
            )),
            (Some(k), Some(p)) if k.public_hex() != p => Some(format!(
                "the file names {}, but the key this machine holds for study {} is {}",
                key(Some(p)),
                k.study_id(),
                fingerprint(&k.public_hex())
            )),
            _ => None,
        }
    }
}

impl Store {
    /// Use `keys` for this study's lead key: a lead's study whose key this machine holds signs a
    /// checkpoint at every write; a study created by this connection gets one at its next write
    /// (kept in `keys` with its binding, its public half recorded in the study). A rater
    /// package, an in-memory study and a study whose key is elsewhere are written without
    /// checkpoints; so is a study with a chain of entries and no key at all (a key is never made
    /// for history it did not see). A study whose key records contradict what `keys` holds for
    /// it — its chain bound to another id or key, its key removed or replaced — is refused for
    /// writing with the reason ([`StoreError::KeyRecordsChanged`]).
    pub fn use_lead_keys(&mut self, keys: KeyStore) -> StoreResult<()> {
        let c = self.conn();
        if self.path.is_none() || super::meta::get(c, super::META_PACKAGE_ID)?.is_some() {
            self.lead = Lead::Off;
            return Ok(());
        }
        let id = super::meta::get(c, META_STUDY_ID)?;
        let public = recorded_public(c)?;
        let start = chain_start(c)?;
        let new_chain = self.created || chained_entries(c)? <= 1;
        let bound = start.as_deref().and_then(|s| keys.binding_of_chain(s));
        let held = match id.as_deref().filter(|i| is_study_id(i)) {
            Some(i) => keys.load(i).ok().flatten(),
            None => None,
        };
        let facts = KeyFacts {
            id: id.as_deref(),
            public: public.as_deref(),
            held: held.as_ref(),
            bound: bound.as_ref(),
        };
        self.lead = match facts.changed_outside() {
            Some(reason) => Lead::Refused(reason),
            None => match (&held, &public) {
                (Some(key), Some(p)) if key.public_hex() == *p => {
                    if let (Some(start), None) = (&start, &bound) {
                        // A key made before bindings were kept is bound now, to the chain it signs.
                        let _ = keys.bind(&KeyBinding {
                            study_id: key.study_id().to_string(),
                            public: p.clone(),
                            chain_start: start.clone(),
                        });
                    }
                    Lead::Held(Arc::new(key.clone()))
                }
                (None, None) if new_chain => Lead::Make(keys),
                _ => Lead::Unavailable,
            },
        };
        Ok(())
    }

    /// Give a study that never had a lead key one now, at the lead's explicit request (a study
    /// made before lead keys, or on a machine with no key store): from here on its writes are
    /// signed, and the chain says from which entry (`lead_key.adopted`, with the number of
    /// entries before it that no key signed). Refused for a study that names a key (held here or
    /// elsewhere), one whose key records contradict this machine's key store, a package, and a
    /// study in memory. Returns the new key's fingerprint and the entries before it.
    pub fn adopt_lead_key(&mut self, keys: KeyStore) -> StoreResult<(String, i64)> {
        self.use_lead_keys(keys.clone())?;
        let path = self.path_string();
        let refuse = |why: &str| StoreError::Invalid(format!("{path}: {why}; no key was made"));
        match &self.lead {
            Lead::Off => {
                return Err(refuse(
                    "a rater package or a study in memory takes no lead key",
                ))
            }
            Lead::Held(_) => return Err(refuse("this machine holds the study's lead key already")),
            Lead::Refused(reason) => {
                return Err(StoreError::KeyRecordsChanged {
                    path,
                    reason: reason.clone(),
                })
            }
            Lead::Make(_) | Lead::Unavailable => {}
        }
        if let Some(public) = recorded_public(self.conn())? {
            return Err(refuse(&format!(
                "the study names lead key {}, kept where the study was first written; write there, or restore its key",
                fingerprint(&public)
            )));
        }
        let before = chained_entries(self.conn())?;
        self.lead = Lead::Make(keys);
        self.write(|tx| {
            tx.audit(
                "lead",
                "lead_key.adopted",
                &serde_json::json!({
                    "unsigned_before": before,
                    "note": "the lead gave this study a key it never had; the entries before this one were written where no key signed them, and are only as sound as the file was when it was taken",
                }),
            )
        })?;
        match (self.lead_key(), recorded_public(self.conn())?) {
            (Some(_), Some(public)) => Ok((fingerprint(&public), before)),
            _ => Err(refuse("this machine's key store could not keep a key")),
        }
    }

    /// Make the study's lead key now if it is to have one and has none yet (a package is signed
    /// at export with it). Whether this machine holds the study's key afterwards.
    pub fn ensure_lead_key(&mut self) -> StoreResult<bool> {
        if matches!(self.lead, Lead::Make(_)) {
            self.write(|_| -> StoreResult<()> { Ok(()) })?;
        }
        Ok(matches!(self.lead, Lead::Held(_)))
    }

    /// A new key for a study that is to get one at this write, kept in its key store already
    /// (forgotten again if the write fails). A key store that cannot keep it leaves the study
    /// without a key here, as on a machine without one: the write goes on unsigned.
    pub(super) fn make_lead_key(&mut self) -> Option<(Arc<LeadKey>, KeyStore)> {
        let Lead::Make(keys) = &self.lead else {
            return None;
        };
        let keys = keys.clone();
        let id = match super::meta::get(self.conn(), META_STUDY_ID) {
            Ok(Some(id)) => id,
            Ok(None) => new_study_id(),
            Err(_) => return None,
        };
        let key = LeadKey::generate(&id);
        let start = chain_start(self.conn()).ok().flatten();
        let saved = keys.save(&key).and_then(|()| match &start {
            Some(start) => keys.bind(&KeyBinding {
                study_id: id.clone(),
                public: key.public_hex(),
                chain_start: start.clone(),
            }),
            None => Ok(()),
        });
        match saved {
            Ok(()) => Some((Arc::new(key), keys)),
            Err(e) => {
                // A key kept without its binding is taken back (never one that was there before).
                if !matches!(e, LeadKeyError::KeyExists { .. }) {
                    keys.forget(&id);
                }
                self.lead = Lead::Unavailable;
                None
            }
        }
    }

    /// Why the study is refused for writing, when its key records contradict this machine's
    /// key store (see [`Store::use_lead_keys`]).
    pub fn key_records_refused(&self) -> Option<String> {
        match &self.lead {
            Lead::Refused(reason) => Some(reason.clone()),
            _ => None,
        }
    }

    /// The study's lead key, when this machine holds it.
    pub fn lead_key(&self) -> Option<&LeadKey> {
        match &self.lead {
            Lead::Held(key) => Some(key),
            _ => None,
        }
    }

    /// The lead public key recorded in the study (hex), if it has one.
    pub fn lead_public_key(&self) -> StoreResult<Option<String>> {
        recorded_public(self.conn())
    }

    /// The fingerprint of the study's lead public key, if it has one.
    pub fn lead_fingerprint(&self) -> StoreResult<Option<String>> {
        Ok(self.lead_public_key()?.map(|p| fingerprint(&p)))
    }

    /// What `keys` holds for this study: the key bound to its chain wherever the file says it
    /// belongs, else the key kept for the study's id.
    pub fn local_lead_key(&self, keys: &KeyStore) -> StoreResult<LocalLeadKey> {
        if let Some(b) = chain_start(self.conn())?.and_then(|start| keys.binding_of_chain(&start)) {
            if let Ok(Some(key)) = keys.load(&b.study_id) {
                if key.public_hex() == b.public {
                    return Ok(LocalLeadKey::Held(b.public));
                }
            }
        }
        let Some(id) = super::meta::get(self.conn(), META_STUDY_ID)? else {
            return Ok(LocalLeadKey::NoStudyId);
        };
        if !is_study_id(&id) {
            return Ok(LocalLeadKey::None);
        }
        Ok(match keys.load(&id)? {
            Some(key) => LocalLeadKey::Held(key.public_hex()),
            None => LocalLeadKey::None,
        })
    }
}

impl StudyTx<'_> {
    /// When this write made the study's lead key: record its public half (and the study's id,
    /// if it had none), an audit entry saying so, and sign the study's record of every package
    /// issued before it, so from now on that record too is checked.
    pub(super) fn record_new_lead_key(&mut self) -> StoreResult<()> {
        if !self.new_lead {
            return Ok(());
        }
        let Some(key) = self.lead.clone() else {
            return Ok(());
        };
        let c = self.conn();
        if super::meta::get(c, META_STUDY_ID)?.is_none() {
            super::meta::put(c, META_STUDY_ID, key.study_id())?;
        }
        super::meta::put(c, META_LEAD_PUBLIC_KEY, &key.public_hex())?;
        self.sign_package_records()?;
        self.audit(
            "lead",
            "lead_key.created",
            &serde_json::json!({
                "fingerprint": fingerprint(&key.public_hex()),
                "note": "from here on every write made where this key is available signs the chain's head",
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_only_for_its_study_domain_and_parts() {
        let key = LeadKey::generate("00ff");
        let sig = key.sign("audit.checkpoint", &["3", "abc"]);
        let public = key.public_hex();
        assert!(
            verify(&public, "00ff", "audit.checkpoint", &["3", "abc"], &sig),
            "the key's own signature verifies"
        );
        assert!(
            !verify(&public, "00fe", "audit.checkpoint", &["3", "abc"], &sig),
            "a signature about one study does not stand for another"
        );
        assert!(
            !verify(&public, "00ff", "package.issue", &["3", "abc"], &sig),
            "a checkpoint signature does not stand for a package signature"
        );
        assert!(
            !verify(&public, "00ff", "audit.checkpoint", &["3", "abd"], &sig),
            "a changed part breaks the signature"
        );
        let other = LeadKey::generate("00ff");
        assert!(
            !verify(
                &other.public_hex(),
                "00ff",
                "audit.checkpoint",
                &["3", "abc"],
                &sig
            ),
            "another key's public half does not verify it"
        );
    }

    #[test]
    fn a_folder_key_store_keeps_the_key_in_an_owner_only_file_and_refuses_odd_ids() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = KeyStore::Folder(dir.path().join("keys"));
        let key = LeadKey::generate("abc123");
        store.save(&key).expect("saved");
        let back = store.load("abc123").expect("read").expect("found");
        assert_eq!(
            back.public_hex(),
            key.public_hex(),
            "the key read back is the one saved"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("keys").join("abc123.key"))
                .expect("key file")
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "only its owner may read the key file");
        }
        assert!(
            store.save(&key).is_err(),
            "a key file is never replaced by another"
        );
        assert!(
            matches!(store.load("../x"), Err(LeadKeyError::BadStudyId(_))),
            "an id that could name another path is refused"
        );
        assert!(
            store.load("abcd").expect("read").is_none(),
            "no key for a study this machine never keyed"
        );
    }
}
