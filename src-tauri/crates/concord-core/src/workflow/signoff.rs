//! Expert sign-off, an electronic signature in the manner of 21 CFR Part 11: an expert sets a
//! signing passphrase (stored only as a salted PBKDF2-HMAC-SHA256 hash); signing their assignment
//! asks for it again and records the manifestation — the signer's name, the time, the meaning
//! ([`MEANING`]) and the SHA-256 of the signed ratings — and locks those ratings: a later change
//! needs a reason, is recorded in the audit chain against the signature, and makes the signature
//! show as changed after signing. [`signatures`] lists who signed what and whether it still
//! matches. Signing inside a rater package works the same (a package is a study file).
//!
//! Each signature carries a proof: an Ed25519 signature over what it states (signer, meaning,
//! scope, time, count and hash of the signed ratings) by a key derived from the signing
//! passphrase (PBKDF2-HMAC-SHA256, salted). The study keeps only that key's public half, and a
//! package is issued with the same (`issued_key`): the expert's Concord checks the passphrase
//! against it and signs, and the lead's study verifies (`proof_verifies`), while neither file
//! holds anything a proof can be made with — that takes the passphrase, so not even the lead's
//! study and the package passphrase together can sign for an expert.
//!
//! Keys set before schema 21 held the PBKDF2 key itself (`hash`, a symmetric verifier: the
//! proof was an HMAC keyed by it) or, in a package, its check value. Such a key still checks its
//! passphrase; a signature made under it carries both proofs (the old HMAC, so a study still
//! holding the old key can verify it, and the Ed25519 one); and the study's own old key is
//! replaced by its public key the first time its expert gives the passphrase there, after which
//! the file no longer holds what could sign for her.

use crate::base::clock::Millis;
use crate::base::error_code::ErrorCode;
use crate::base::text::quoted;
use crate::store::{NamedRater, SignatureRecord, SignedValue, SigningKey, Store, StoreError};
use hmac::{Hmac, Mac};
use rand::{RngCore, SeedableRng};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// What a signature means.
pub const MEANING: &str = "These ratings are my own independent judgement.";

/// PBKDF2 iterations for new passphrases.
pub const ITERATIONS: u32 = 210_000;

#[derive(Debug, thiserror::Error)]
pub enum SignoffError {
    #[error("no expert named {q0} in this study", q0 = quoted(&.0))]
    UnknownExpert(String),
    #[error("{0} has no signing passphrase yet; set one on the profile first")]
    NoPassphrase(String),
    #[error("wrong signing passphrase for {0}")]
    WrongPassphrase(String),
    #[error("signing passphrase refused: {0}")]
    WeakPassphrase(#[from] crate::base::passphrase_strength::WeakPassphrase),
    #[error("{0} has no ratings on assigned items to sign")]
    NothingToSign(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl crate::base::error_code::Coded for SignoffError {
    fn code(&self) -> ErrorCode {
        match self {
            SignoffError::UnknownExpert(_) => ErrorCode::UnknownExpert,
            SignoffError::NoPassphrase(_) => ErrorCode::NoPassphrase,
            SignoffError::WrongPassphrase(_) => ErrorCode::WrongPassphrase,
            SignoffError::WeakPassphrase(_) => ErrorCode::WeakPassphrase,
            SignoffError::NothingToSign(_) => ErrorCode::NothingToSign,
            SignoffError::Store(e) => e.code(),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn derive(passphrase: &str, salt: &str, iterations: u32) -> String {
    let mut out = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(passphrase.as_bytes(), salt.as_bytes(), iterations, &mut out);
    hex(&out)
}

/// The Ed25519 signing key of `passphrase` under `salt` and `iterations`: PBKDF2 under a salt of
/// its own, so an older key's stored PBKDF2 value (same salt) says nothing about it.
fn signer_of(passphrase: &str, salt: &str, iterations: u32) -> ed25519_dalek::SigningKey {
    let mut seed = [0u8; 32];
    let salt = format!("concord signing ed25519 v2\n{salt}");
    pbkdf2::pbkdf2_hmac::<Sha256>(
        passphrase.as_bytes(),
        salt.as_bytes(),
        iterations,
        &mut seed,
    );
    ed25519_dalek::SigningKey::from_bytes(&seed)
}

/// The key stored for `signer`: its public half.
fn public_key(signer: &ed25519_dalek::SigningKey, salt: &str, iterations: u32) -> SigningKey {
    SigningKey {
        salt: salt.to_string(),
        hash: hex(signer.verifying_key().as_bytes()),
        iterations,
        check_only: false,
        public: true,
    }
}

/// What the passphrase unlocks: the Ed25519 signer, and for a key from before schema 21 the
/// PBKDF2 key its HMAC proofs are keyed by.
struct Unlocked {
    signer: ed25519_dalek::SigningKey,
    legacy: Option<String>,
}

/// What `passphrase` unlocks under `key`, when it is the passphrase `key` was set from.
fn unlock(key: &SigningKey, passphrase: &str) -> Option<Unlocked> {
    if key.public {
        let signer = signer_of(passphrase, &key.salt, key.iterations);
        let public = hex(signer.verifying_key().as_bytes());
        return same(&public, &key.hash).then_some(Unlocked {
            signer,
            legacy: None,
        });
    }
    let derived = derive(passphrase, &key.salt, key.iterations);
    let stored = if key.check_only {
        check_value(&derived)
    } else {
        derived.clone()
    };
    same(&stored, &key.hash).then(|| Unlocked {
        signer: signer_of(passphrase, &key.salt, key.iterations),
        legacy: Some(derived),
    })
}

/// Equal strings, compared in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The check value of a PBKDF2 key: what a package issued before schema 21 holds in its place.
fn check_value(derived: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"concord signing check v1\n");
    h.update(derived.as_bytes());
    hex(&h.finalize())
}

/// The key a package is issued with for its expert: a public key as it is (it cannot sign); an
/// older study key only as a check value. `None` for a key that is itself a check value (a
/// package re-issuing its own).
pub(crate) fn issued_key(key: &SigningKey) -> Option<SigningKey> {
    if key.public {
        return Some(key.clone());
    }
    (!key.check_only).then(|| SigningKey {
        salt: key.salt.clone(),
        hash: check_value(&key.hash),
        iterations: key.iterations,
        check_only: true,
        public: false,
    })
}

/// What a signature's proof covers.
pub(crate) struct SignedStatement<'a> {
    pub signer: &'a str,
    pub meaning: &'a str,
    pub scope: &'a str,
    pub signed_at: Millis,
    pub ratings: i64,
    pub ratings_sha256: &'a str,
}

impl<'a> From<&'a SignatureRecord> for SignedStatement<'a> {
    fn from(s: &'a SignatureRecord) -> Self {
        SignedStatement {
            signer: &s.signer,
            meaning: &s.meaning,
            scope: &s.scope,
            signed_at: s.signed_at,
            ratings: s.ratings,
            ratings_sha256: &s.ratings_sha256,
        }
    }
}

/// The text a proof of version `version` is over.
fn statement_text(version: &str, statement: &SignedStatement<'_>) -> String {
    serde_json::json!([
        version,
        statement.signer,
        statement.meaning,
        statement.scope,
        statement.signed_at,
        statement.ratings,
        statement.ratings_sha256
    ])
    .to_string()
}

fn proof_mac(derived: &str, statement: &SignedStatement<'_>) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(derived.as_bytes())
        .expect("HMAC accepts a key of any length");
    mac.update(statement_text("concord signature v1", statement).as_bytes());
    mac
}

/// The prefix of a proof's Ed25519 part.
const ED25519: &str = "ed25519:";

/// The proof of a signature by the holder of the passphrase: `ed25519:<signature>`, preceded by
/// the older HMAC (and a space) under a key from before schema 21.
fn prove(unlocked: &Unlocked, statement: &SignedStatement<'_>) -> String {
    use ed25519_dalek::Signer as _;
    let signed = unlocked
        .signer
        .sign(statement_text("concord signature v2", statement).as_bytes());
    let ed = format!("{ED25519}{}", hex(&signed.to_bytes()));
    match &unlocked.legacy {
        Some(derived) => format!(
            "{} {ed}",
            hex(&proof_mac(derived, statement).finalize().into_bytes())
        ),
        None => ed,
    }
}

/// Whether `proof` proves `statement` under `key`, a study's own signing key of the signer: the
/// Ed25519 part under a public key, the HMAC part under a key from before schema 21 (a check
/// value proves nothing: it is not the key).
pub(crate) fn proof_verifies(
    key: &SigningKey,
    statement: &SignedStatement<'_>,
    proof: &str,
) -> bool {
    if key.public {
        let Some(signature) = proof
            .split(' ')
            .find_map(|p| p.strip_prefix(ED25519))
            .and_then(unhex)
            .and_then(|b| <[u8; 64]>::try_from(b).ok())
        else {
            return false;
        };
        let Some(public) = unhex(&key.hash).and_then(|b| <[u8; 32]>::try_from(b).ok()) else {
            return false;
        };
        let Ok(public) = ed25519_dalek::VerifyingKey::from_bytes(&public) else {
            return false;
        };
        return public
            .verify_strict(
                statement_text("concord signature v2", statement).as_bytes(),
                &ed25519_dalek::Signature::from_bytes(&signature),
            )
            .is_ok();
    }
    if key.check_only {
        return false;
    }
    let Some(bytes) = proof
        .split(' ')
        .find(|p| !p.starts_with(ED25519))
        .and_then(unhex)
    else {
        return false;
    };
    proof_mac(&key.hash, statement).verify_slice(&bytes).is_ok()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// An expert by name or by id (the rating screen knows the id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expert<'a> {
    Named(&'a str),
    Id(i64),
}

impl<'a> From<&'a str> for Expert<'a> {
    fn from(name: &'a str) -> Self {
        Expert::Named(name)
    }
}

impl From<i64> for Expert<'_> {
    fn from(id: i64) -> Self {
        Expert::Id(id)
    }
}

fn expert<'a>(store: &Store, who: impl Into<Expert<'a>>) -> Result<NamedRater, SignoffError> {
    match who.into() {
        Expert::Named(name) => store
            .expert_by_name(name)?
            .ok_or_else(|| SignoffError::UnknownExpert(name.to_string())),
        Expert::Id(id) => store
            .expert_by_id(id)?
            .ok_or_else(|| SignoffError::UnknownExpert(id.to_string())),
    }
}

/// What the rating screen shows about signing: whether the expert has a passphrase, what a
/// signature means, and their own signatures with their standing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SignoffState {
    pub has_passphrase: bool,
    pub meaning: String,
    pub signatures: Vec<SignatureStatus>,
    /// The ratings signing now would cover: the expert's values on their assigned items.
    pub to_sign: i64,
    /// The expert's assigned items, and those not finished (their missing values stay unsigned;
    /// values added later need a new signature).
    pub items: i64,
    pub unfinished_items: i64,
}

/// The signing state of one expert (only their own signatures).
pub fn state<'a>(store: &Store, who: impl Into<Expert<'a>>) -> Result<SignoffState, SignoffError> {
    let id = expert(store, who)?.id;
    let counts = store.read().queue_counts(id)?;
    Ok(SignoffState {
        to_sign: store.assigned_values(id)?.len() as i64,
        items: counts.total,
        unfinished_items: counts.total - counts.completed,
        has_passphrase: store.signing_key(id)?.is_some(),
        meaning: MEANING.to_string(),
        signatures: signatures(store)?
            .into_iter()
            .filter(|s| s.signature.rater_id == id)
            .collect(),
    })
}

/// Set (or replace) an expert's signing passphrase. A replacement needs the current one.
/// `salt_seed` draws the salt (randomness passed in); `iterations` is [`ITERATIONS`] outside tests.
pub fn set_passphrase<'a>(
    store: &mut Store,
    name: impl Into<Expert<'a>>,
    current: Option<&str>,
    passphrase: &str,
    salt_seed: u64,
    iterations: u32,
) -> Result<(), SignoffError> {
    let NamedRater { id, name } = expert(store, name)?;
    crate::base::passphrase_strength::check_new_passphrase(passphrase, &[name.as_str()])?;
    if let Some(key) = store.signing_key(id)? {
        let ok = current.is_some_and(|c| unlock(&key, c).is_some());
        if !ok {
            return Err(SignoffError::WrongPassphrase(name));
        }
    }
    let mut salt = [0u8; 16];
    rand_chacha::ChaCha20Rng::seed_from_u64(salt_seed).fill_bytes(&mut salt);
    let salt = hex(&salt);
    let key = public_key(&signer_of(passphrase, &salt, iterations), &salt, iterations);
    store.write(|tx| {
        tx.set_signing_key(id, &key)?;
        tx.audit(
            &name,
            "signoff.passphrase",
            &serde_json::json!({"rater_id": id, "replaced": current.is_some()}),
        )
    })?;
    Ok(())
}

/// SHA-256 over the signed ratings in their canonical order (by response, then criterion).
pub(crate) fn values_sha256(values: &[SignedValue]) -> String {
    let mut h = Sha256::new();
    for v in values {
        let line = serde_json::json!([
            v.response_id,
            v.criterion_id,
            v.value,
            v.raw_value,
            v.rationale
        ]);
        h.update(line.to_string().as_bytes());
        h.update(b"\n");
    }
    hex(&h.finalize())
}

/// A signature with its current standing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SignatureStatus {
    #[serde(flatten)]
    pub signature: SignatureRecord,
    /// The signed ratings still hash to what was signed.
    pub matches: bool,
    /// Signed ratings changed (or removed) after signing.
    pub changed_after_signature: usize,
}

/// Sign off everything `name` rated on their assigned items, after checking the passphrase.
pub fn sign_assignment<'a>(
    store: &mut Store,
    name: impl Into<Expert<'a>>,
    passphrase: &str,
) -> Result<SignatureStatus, SignoffError> {
    let NamedRater { id, name } = expert(store, name)?;
    let key = store
        .signing_key(id)?
        .ok_or_else(|| SignoffError::NoPassphrase(name.clone()))?;
    let Some(unlocked) = unlock(&key, passphrase) else {
        store.write(|tx| {
            tx.audit(
                &name,
                "signoff.refused",
                &serde_json::json!({"rater_id": id, "why": "wrong passphrase"}),
            )
        })?;
        return Err(SignoffError::WrongPassphrase(name));
    };
    let values = store.assigned_values(id)?;
    if values.is_empty() {
        return Err(SignoffError::NothingToSign(name));
    }
    let sha = values_sha256(&values);
    let scope = "assignment";
    let sig = store.write(|tx| {
        let signed_at = tx.now();
        let ratings = values.len() as i64;
        let proof = prove(
            &unlocked,
            &SignedStatement {
                signer: &name,
                meaning: MEANING,
                scope,
                signed_at,
                ratings,
                ratings_sha256: &sha,
            },
        );
        let sig = tx.add_signature_at(
            id,
            &name,
            MEANING,
            scope,
            signed_at,
            ratings,
            &values,
            &sha,
            Some(&proof),
        )?;
        // The study's own key from before schema 21 holds what could sign for the expert: it
        // gives way to the public key now that the passphrase was given.
        if !key.public && !key.check_only {
            tx.set_signing_key(id, &public_key(&unlocked.signer, &key.salt, key.iterations))?;
            tx.audit(
                &name,
                "signoff.key_upgraded",
                &serde_json::json!({"rater_id": id}),
            )?;
        }
        tx.audit(
            &name,
            "signoff.sign",
            &serde_json::json!({
                "rater_id": id,
                "signature": sig,
                "meaning": MEANING,
                "scope": scope,
                "ratings": values.len(),
                "ratings_sha256": sha,
            }),
        )?;
        Ok::<_, StoreError>(sig)
    })?;
    signatures(store)?
        .into_iter()
        .find(|s| s.signature.id == sig)
        .ok_or(SignoffError::Store(StoreError::NotFound {
            what: "signature",
            key: sig.to_string(),
        }))
}

/// Every signature with whether its ratings still match what was signed.
pub fn signatures(store: &Store) -> Result<Vec<SignatureStatus>, SignoffError> {
    let mut out = Vec::new();
    for s in store.signatures()? {
        let now = store.signed_values(s.id)?;
        let matches = now.len() as i64 == s.ratings && values_sha256(&now) == s.ratings_sha256;
        let changed = if matches {
            0
        } else {
            store.signature_changes(s.id)?
        };
        out.push(SignatureStatus {
            signature: s,
            matches,
            changed_after_signature: changed,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::SteppingClock;
    use crate::base::error_code::Coded as _;
    use crate::store::RatingInput;
    use std::sync::Arc;

    fn study() -> (Store, i64, i64, i64) {
        let mut store =
            Store::in_memory(Arc::new(SteppingClock::new(1_700_000_000_000, 1000))).unwrap();
        crate::intake::demo::populate_demo(&mut store, 5).unwrap();
        let rater = crate::workflow::queue::create_profile(&mut store, "Dr Sign", 9)
            .unwrap()
            .id;
        crate::workflow::queue::open_queue(&mut store, rater).unwrap();
        let item = crate::workflow::queue::rating_item(&store, rater, 1).unwrap();
        for c in &item.criteria {
            crate::workflow::queue::rate(&mut store, rater, item.item, &c.key, c.scale.min())
                .unwrap();
        }
        let response = store.assigned_values(rater).unwrap()[0].response_id;
        let criterion = store.assigned_values(rater).unwrap()[0].criterion_id;
        (store, rater, response, criterion)
    }

    #[test]
    fn signing_needs_the_passphrase_locks_ratings_and_shows_later_changes() {
        let (mut store, rater, response, criterion) = study();
        assert!(
            matches!(
                sign_assignment(&mut store, "Dr Sign", "whatever1"),
                Err(SignoffError::NoPassphrase(_))
            ),
            "no signature before a passphrase is set"
        );
        set_passphrase(&mut store, "Dr Sign", None, "correct horse", 1, 1000).unwrap();
        let key = store.signing_key(rater).unwrap().unwrap();
        assert!(
            !key.hash.contains("correct") && key.salt.len() == 32,
            "only a salted hash is stored"
        );
        assert!(
            matches!(
                sign_assignment(&mut store, "Dr Sign", "wrong horse"),
                Err(SignoffError::WrongPassphrase(_))
            ),
            "a wrong passphrase signs nothing"
        );
        let signed = sign_assignment(&mut store, "Dr Sign", "correct horse").unwrap();
        assert!(signed.matches, "a fresh signature matches its ratings");
        assert_eq!(signed.signature.meaning, MEANING, "the meaning is recorded");
        let input = RatingInput {
            rater_id: rater,
            response_id: response,
            criterion_id: criterion,
            occasion: crate::store::Occasion::First,
            value: Some(3),
            raw_value: None,
            rationale: None,
            origin: "screen",
        };
        let refused = store.write(|tx| tx.set_rating(&input));
        assert!(
            refused.is_err(),
            "a signed rating cannot change without a reason"
        );
        store
            .write(|tx| tx.set_rating_with_reason(&input, "misread the anchor"))
            .unwrap();
        let status = signatures(&store).unwrap();
        assert_eq!(
            (status[0].matches, status[0].changed_after_signature),
            (false, 1),
            "the signature now shows one rating changed after signing"
        );
        let log = crate::guard::audit::log(&store, &Default::default()).unwrap();
        let change = log.last().unwrap();
        assert_eq!(
            (
                change.entry.detail["reason"].as_str(),
                change.entry.detail["after_signature"].as_i64()
            ),
            (Some("misread the anchor"), Some(signed.signature.id)),
            "the audit trail records the reason and the signature the change departs from"
        );
        assert_eq!(
            crate::guard::audit::verify(&store).unwrap().broken,
            None,
            "signing and the reasoned change are sealed into an intact chain"
        );
    }

    #[test]
    fn the_rating_screen_marks_signed_values_and_changes_them_only_with_a_reason() {
        let (mut store, rater, _, _) = study();
        set_passphrase(&mut store, "Dr Sign", None, "correct horse", 1, 1000).unwrap();
        sign_assignment(&mut store, "Dr Sign", "correct horse").unwrap();
        let item = crate::workflow::queue::rating_item(&store, rater, 1).unwrap();
        assert!(
            item.criteria
                .iter()
                .all(|c| c.signed && !c.changed_after_signature),
            "every signed value is marked signed and none changed yet"
        );
        let c = &item.criteria[0];
        let other = if c.value == Some(c.scale.min()) {
            c.scale.max()
        } else {
            c.scale.min()
        };
        let refused = crate::workflow::queue::rate(&mut store, rater, 1, &c.key, other);
        assert!(
            matches!(&refused, Err(e) if e.code() == ErrorCode::SignedRating),
            "without a reason the screen's change is refused with its own code: {refused:?}"
        );
        crate::workflow::queue::rate_and_locate(
            &mut store,
            rater,
            1,
            &c.key,
            other,
            Some("pressed the wrong key"),
        )
        .expect("with a reason the change is saved");
        let item = crate::workflow::queue::rating_item(&store, rater, 1).unwrap();
        assert_eq!(
            item.criteria
                .iter()
                .map(|c| c.changed_after_signature)
                .collect::<Vec<_>>(),
            std::iter::once(true)
                .chain(std::iter::repeat_n(false, item.criteria.len() - 1))
                .collect::<Vec<_>>(),
            "exactly the changed value is marked as changed after signature"
        );
        assert_eq!(
            item.criteria[0].value,
            Some(other),
            "and shows its new value"
        );
    }
}
