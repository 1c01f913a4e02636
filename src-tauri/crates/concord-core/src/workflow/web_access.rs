//! Experts who rate from a browser (`concord serve`): the lead's one-time invitations, the web
//! passphrase the expert sets from one (kept only as a salted PBKDF2-HMAC-SHA256 hash, as signing
//! passphrases are), logins with a lock-out after [`MAX_FAILURES`] wrong passphrases in a row,
//! revocation, and whether a session opened under a login still stands. Every invitation, login,
//! failed login, lock-out, revocation and logout is an audit entry that names the expert and
//! says it came from the web (`"via": "web"`). Time comes from the store's clock and randomness
//! (tokens, salts) is handed in, so tests are reproducible; a server hands in the OS generator.

use crate::base::clock::Millis;
use crate::base::error_code::{Coded, ErrorCode};
use crate::base::text::quoted;
use crate::store::{NamedRater, Store, StoreError, WebLogin};
use rand::RngCore;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// PBKDF2 iterations for new web passphrases.
pub const ITERATIONS: u32 = 210_000;
/// Wrong passphrases in a row that lock a login.
pub const MAX_FAILURES: i64 = 5;
/// How long a lock-out lasts.
pub const LOCK_MS: Millis = 15 * 60 * 1000;
/// The shortest web passphrase accepted.
pub const MIN_PASSPHRASE_CHARS: usize = 12;
/// How long an invitation stands when the lead names no other time.
pub const DEFAULT_INVITATION_DAYS: u32 = 7;
const DAY_MS: Millis = 24 * 60 * 60 * 1000;

#[derive(Debug, thiserror::Error)]
pub enum WebAccessError {
    #[error("no expert named {q0} in this study", q0 = quoted(&.0))]
    UnknownExpert(String),
    #[error("this invitation link is not valid: it was used already, has expired or was revoked; ask the study lead for a new one")]
    Invitation,
    #[error("the name or the passphrase is not right")]
    Credentials,
    #[error("too many wrong passphrases: this login is locked for a while; try again later or ask the study lead")]
    Locked { until: Millis },
    #[error("a web passphrase needs at least {MIN_PASSPHRASE_CHARS} characters and more than one kind of character")]
    Weak,
    #[error("an invitation lasts between 1 and 365 days, not {0}")]
    BadExpiry(u32),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Coded for WebAccessError {
    fn code(&self) -> ErrorCode {
        match self {
            WebAccessError::UnknownExpert(_) => ErrorCode::UnknownExpert,
            WebAccessError::Invitation => ErrorCode::WebInvitation,
            WebAccessError::Credentials => ErrorCode::WebLogin,
            WebAccessError::Locked { .. } => ErrorCode::WebLocked,
            WebAccessError::Weak => ErrorCode::WeakPassphrase,
            WebAccessError::BadExpiry(_) => ErrorCode::Invalid,
            WebAccessError::Store(e) => e.code(),
        }
    }
}

/// A new invitation: the token goes into the link and is shown once; the study keeps its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    pub rater: NamedRater,
    pub token: String,
    pub expires_at: Millis,
}

/// Who a web session is for, and the login it was opened under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebIdentity {
    pub rater: NamedRater,
    /// The login's `set_at`: the session stands only while the login does.
    pub login: Millis,
}

/// An expert's web access as the lead sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WebRaterAccess {
    pub rater_id: i64,
    pub name: String,
    /// Whether the expert has set a web passphrase (and so can log in).
    pub has_login: bool,
    pub last_login: Option<Millis>,
    /// When a session of theirs last made a request (noted at most once a minute).
    pub last_seen: Option<Millis>,
    /// Whether a session of theirs made a request within the idle time (they are connected).
    pub connected: bool,
    pub locked_until: Option<Millis>,
    /// Invitations neither used nor expired.
    pub open_invitations: i64,
    /// Their queue: items done of all.
    pub completed: i64,
    pub total: i64,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of a token, as the study keeps it.
pub fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

fn derive(passphrase: &str, salt: &str, iterations: u32) -> [u8; 32] {
    let mut out = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(passphrase.as_bytes(), salt.as_bytes(), iterations, &mut out);
    out
}

fn matches(login: &WebLogin, passphrase: &str) -> bool {
    let given = hex(&derive(passphrase, &login.salt, login.iterations));
    // Constant-time comparison of the two hex digests.
    given.len() == login.hash.len()
        && given
            .bytes()
            .zip(login.hash.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Whether `passphrase` is strong enough for the web: long, and not one kind of character only.
pub fn strong_enough(passphrase: &str) -> bool {
    let kinds = [
        passphrase.chars().any(char::is_alphabetic),
        passphrase.chars().any(|c| c.is_numeric()),
        passphrase.chars().any(|c| !c.is_alphanumeric()),
    ];
    let distinct: std::collections::BTreeSet<char> = passphrase.chars().collect();
    passphrase.chars().count() >= MIN_PASSPHRASE_CHARS
        && kinds.iter().filter(|k| **k).count() >= 2
        && distinct.len() >= 6
}

fn expert(store: &Store, name: &str) -> Result<NamedRater, WebAccessError> {
    store
        .expert_by_name(name)?
        .ok_or_else(|| WebAccessError::UnknownExpert(name.to_string()))
}

fn random_hex(rng: &mut dyn RngCore, bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    rng.fill_bytes(&mut b);
    hex(&b)
}

/// A one-time invitation for the expert named `name`, standing for `days` days.
pub fn invite(
    store: &mut Store,
    name: &str,
    days: u32,
    rng: &mut dyn RngCore,
) -> Result<Invitation, WebAccessError> {
    if !(1..=365).contains(&days) {
        return Err(WebAccessError::BadExpiry(days));
    }
    let rater = expert(store, name)?;
    let token = random_hex(rng, 32);
    let expires_at = store.now_ms() + i64::from(days) * DAY_MS;
    store.write(|tx| {
        tx.add_web_invitation(&token_hash(&token), rater.id, expires_at)?;
        tx.audit(
            "lead",
            "web.invited",
            &serde_json::json!({"rater_id": rater.id, "rater": rater.name, "expires_at": expires_at, "via": "web"}),
        )
    })?;
    Ok(Invitation {
        rater,
        token,
        expires_at,
    })
}

/// The expert an unused, unexpired invitation is for (the set-passphrase page names them).
pub fn invitation_for(store: &Store, token: &str) -> Result<NamedRater, WebAccessError> {
    let invitation = store
        .web_invitation(&token_hash(token))?
        .filter(|i| i.used_at.is_none() && i.expires_at > store.now_ms())
        .ok_or(WebAccessError::Invitation)?;
    store
        .expert_by_id(invitation.rater_id)?
        .ok_or(WebAccessError::Invitation)
}

/// A web passphrase derived for storing: its salt, hash and iterations (made without the study).
#[derive(Debug, Clone)]
pub struct DerivedPassphrase {
    salt: String,
    hash: String,
    iterations: u32,
}

/// Derive `passphrase` for storing (the slow PBKDF2; touches no study). Refuses a weak one.
pub fn derive_passphrase(
    passphrase: &str,
    rng: &mut dyn RngCore,
    iterations: u32,
) -> Result<DerivedPassphrase, WebAccessError> {
    if !strong_enough(passphrase) {
        return Err(WebAccessError::Weak);
    }
    let salt = random_hex(rng, 16);
    let hash = hex(&derive(passphrase, &salt, iterations));
    Ok(DerivedPassphrase {
        salt,
        hash,
        iterations,
    })
}

/// Take up invitation `token` with a passphrase derived by [`derive_passphrase`]: the expert's
/// web passphrase is set and they are logged in. The invitation cannot be used again.
pub fn accept_derived(
    store: &mut Store,
    token: &str,
    derived: &DerivedPassphrase,
) -> Result<WebIdentity, WebAccessError> {
    let rater = invitation_for(store, token)?;
    let hashed = token_hash(token);
    store.write(|tx| {
        if !tx.use_web_invitation(&hashed)? {
            return Err(WebAccessError::Invitation);
        }
        tx.set_web_login(rater.id, &derived.salt, &derived.hash, derived.iterations)?;
        tx.web_login_succeeded(rater.id)?;
        tx.audit(
            &rater.name,
            "web.passphrase_set",
            &serde_json::json!({"rater_id": rater.id, "via": "web"}),
        )?;
        tx.audit(
            &rater.name,
            "web.login",
            &serde_json::json!({"rater_id": rater.id, "via": "web"}),
        )?;
        Ok::<_, WebAccessError>(())
    })?;
    let login = store
        .web_login(rater.id)?
        .ok_or(WebAccessError::Invitation)?;
    Ok(WebIdentity {
        rater,
        login: login.set_at,
    })
}

/// Take up an invitation: [`invitation_for`], [`derive_passphrase`] and [`accept_derived`] in a
/// row.
pub fn accept(
    store: &mut Store,
    token: &str,
    passphrase: &str,
    rng: &mut dyn RngCore,
    iterations: u32,
) -> Result<WebIdentity, WebAccessError> {
    invitation_for(store, token)?;
    let derived = derive_passphrase(passphrase, rng, iterations)?;
    accept_derived(store, token, &derived)
}

/// A login attempt between its steps: the stored login it is checked against (none for a name
/// without one), so the slow key derivation runs without holding the study.
#[derive(Debug, Clone)]
pub struct LoginAttempt {
    found: Option<(NamedRater, WebLogin)>,
}

/// Step 1 of a login: the stored login of the expert named `name`; a locked one is refused here.
pub fn login_attempt(store: &Store, name: &str) -> Result<LoginAttempt, WebAccessError> {
    let now = store.now_ms();
    let found = match store.expert_by_name(name)? {
        Some(rater) => store.web_login(rater.id)?.map(|l| (rater, l)),
        None => None,
    };
    if let Some(until) = found
        .as_ref()
        .and_then(|(_, l)| l.locked_until)
        .filter(|u| *u > now)
    {
        return Err(WebAccessError::Locked { until });
    }
    Ok(LoginAttempt { found })
}

/// Step 2, touching no study: whether `passphrase` is the attempt's (the same work for a name
/// without a login, so timing does not tell which names exist).
pub fn attempt_matches(attempt: &LoginAttempt, passphrase: &str) -> bool {
    match &attempt.found {
        Some((_, login)) => matches(login, passphrase),
        None => {
            let _ = derive(passphrase, "no-such-login", ITERATIONS.min(10_000));
            false
        }
    }
}

/// Step 3: record the outcome. The [`MAX_FAILURES`]th wrong passphrase in a row (counted in the
/// study, so attempts in parallel count too) locks the login for [`LOCK_MS`].
pub fn login_outcome(
    store: &mut Store,
    attempt: LoginAttempt,
    matched: bool,
) -> Result<WebIdentity, WebAccessError> {
    let now = store.now_ms();
    let Some((rater, _)) = attempt.found else {
        return Err(WebAccessError::Credentials);
    };
    // The login as it stands now: it may have been locked, replaced or revoked meanwhile.
    let Some(login) = store.web_login(rater.id)? else {
        return Err(WebAccessError::Credentials);
    };
    if let Some(until) = login.locked_until.filter(|u| *u > now) {
        return Err(WebAccessError::Locked { until });
    }
    if !matched {
        let locks = login.failures + 1 >= MAX_FAILURES;
        let until = locks.then_some(now + LOCK_MS);
        store.write(|tx| {
            tx.web_login_failed(rater.id, until)?;
            tx.audit(
                &rater.name,
                "web.login_failed",
                &serde_json::json!({"rater_id": rater.id, "failures": login.failures + 1, "via": "web"}),
            )?;
            if let Some(until) = until {
                tx.audit(
                    &rater.name,
                    "web.locked",
                    &serde_json::json!({"rater_id": rater.id, "until": until, "via": "web"}),
                )?;
            }
            Ok::<_, StoreError>(())
        })?;
        return Err(match until {
            Some(until) => WebAccessError::Locked { until },
            None => WebAccessError::Credentials,
        });
    }
    store.write(|tx| {
        tx.web_login_succeeded(rater.id)?;
        tx.audit(
            &rater.name,
            "web.login",
            &serde_json::json!({"rater_id": rater.id, "via": "web"}),
        )
    })?;
    Ok(WebIdentity {
        rater,
        login: login.set_at,
    })
}

/// Log in as the expert named `name` with their web passphrase: the three steps in a row. A
/// wrong name and a wrong passphrase are refused alike; a locked login refuses even the right
/// passphrase.
pub fn login(
    store: &mut Store,
    name: &str,
    passphrase: &str,
) -> Result<WebIdentity, WebAccessError> {
    let attempt = login_attempt(store, name)?;
    let matched = attempt_matches(&attempt, passphrase);
    login_outcome(store, attempt, matched)
}

/// Whether a session opened under `identity` still stands: the login exists, was not replaced
/// or revoked since, and is not locked.
pub fn stands(store: &Store, identity: &WebIdentity) -> Result<bool, WebAccessError> {
    let now = store.now_ms();
    Ok(store
        .web_login(identity.rater.id)?
        .is_some_and(|l| l.set_at == identity.login && l.locked_until.is_none_or(|u| u <= now)))
}

/// End session `token`: the expert logged out (or, `idle`, it was idle too long).
pub fn logged_out(
    store: &mut Store,
    rater: &NamedRater,
    token: &str,
    idle: bool,
) -> Result<(), WebAccessError> {
    store.write(|tx| {
        tx.remove_web_session(&token_hash(token))?;
        tx.audit(
            &rater.name,
            if idle {
                "web.session_expired"
            } else {
                "web.logout"
            },
            &serde_json::json!({"rater_id": rater.id, "via": "web"}),
        )
    })?;
    Ok(())
}

/// End the web access of the expert named `name`: their passphrase and open invitations go, so
/// every session of theirs ends at its next request. Returns whether they had any access.
pub fn revoke(store: &mut Store, name: &str) -> Result<bool, WebAccessError> {
    let rater = expert(store, name)?;
    Ok(store.write(|tx| {
        let had = tx.revoke_web_access(rater.id)?;
        tx.audit(
            "lead",
            "web.revoked",
            &serde_json::json!({"rater_id": rater.id, "rater": rater.name, "had_access": had, "via": "web"}),
        )?;
        Ok::<_, StoreError>(had)
    })?)
}

/// Note that session `token` of `rater` made a request now (for who is connected, and the idle
/// time a restarted server resumes it with).
pub fn seen(store: &mut Store, rater: &NamedRater, token: &str) -> Result<(), WebAccessError> {
    store.write(|tx| tx.web_seen(rater.id, &token_hash(token)))?;
    Ok(())
}

/// Keep session `token` of `identity` in the study (only the token's SHA-256), so a restarted
/// server carries it on.
pub fn keep_session(
    store: &mut Store,
    identity: &WebIdentity,
    token: &str,
) -> Result<(), WebAccessError> {
    store.write(|tx| tx.add_web_session(&token_hash(token), identity.rater.id, identity.login))?;
    Ok(())
}

/// The session `token` names in the study, and when it was last seen, if it is kept.
pub fn kept_session(
    store: &Store,
    token: &str,
) -> Result<Option<(WebIdentity, Millis)>, WebAccessError> {
    let Some(record) = store.web_session(&token_hash(token))? else {
        return Ok(None);
    };
    let Some(rater) = store.expert_by_id(record.rater_id)? else {
        return Ok(None);
    };
    Ok(Some((
        WebIdentity {
            rater,
            login: record.login,
        },
        record.last_seen,
    )))
}

/// Every expert's web access, by name, with their progress; connected means seen within
/// `idle_ms`.
pub fn access(store: &Store, idle_ms: Millis) -> Result<Vec<WebRaterAccess>, WebAccessError> {
    let now = store.now_ms();
    let logins: std::collections::HashMap<i64, WebLogin> = store
        .web_logins()?
        .into_iter()
        .map(|l| (l.rater_id, l))
        .collect();
    let invitations: std::collections::HashMap<i64, i64> =
        store.open_web_invitations(now)?.into_iter().collect();
    let mut out: Vec<WebRaterAccess> = store
        .raters()?
        .into_iter()
        .filter(|r| r.kind == crate::store::RaterKind::Expert)
        .map(|r| {
            let login = logins.get(&r.id);
            let last_seen = login.and_then(|l| l.last_seen);
            let counts = store.read().queue_counts(r.id)?;
            Ok(WebRaterAccess {
                rater_id: r.id,
                has_login: login.is_some(),
                last_login: login.and_then(|l| l.last_login),
                last_seen,
                connected: last_seen.is_some_and(|s| now - s <= idle_ms),
                locked_until: login.and_then(|l| l.locked_until).filter(|u| *u > now),
                open_invitations: invitations.get(&r.id).copied().unwrap_or(0),
                completed: counts.completed,
                total: counts.total,
                name: r.name,
            })
        })
        .collect::<Result<_, WebAccessError>>()?;
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::SteppingClock;
    use rand::SeedableRng;
    use std::sync::Arc;

    const STRONG: &str = "correct horse battery staple 41";

    fn study() -> Store {
        let mut store =
            Store::in_memory(Arc::new(SteppingClock::new(1_700_000_000_000, 1000))).unwrap();
        crate::intake::demo::populate_demo(&mut store, 2).unwrap();
        crate::workflow::queue::create_profile(&mut store, "Dr Web", 9).unwrap();
        store
    }

    fn rng() -> rand_chacha::ChaCha20Rng {
        rand_chacha::ChaCha20Rng::seed_from_u64(5)
    }

    #[test]
    fn the_study_keeps_only_hashes_of_tokens_and_passphrases() {
        let mut store = study();
        let invitation = invite(&mut store, "Dr Web", 7, &mut rng()).unwrap();
        assert!(
            store.web_invitation(&invitation.token).unwrap().is_none(),
            "the token itself is not a key of the table"
        );
        assert!(
            store
                .web_invitation(&token_hash(&invitation.token))
                .unwrap()
                .is_some(),
            "its SHA-256 is"
        );
        let who = accept(&mut store, &invitation.token, STRONG, &mut rng(), 1000).unwrap();
        let login = store.web_login(who.rater.id).unwrap().unwrap();
        assert!(
            !login.hash.contains("horse") && !login.salt.contains("horse"),
            "the passphrase is stored only as a salted hash"
        );
        assert_eq!(
            login.iterations, 1000,
            "with the iterations it was derived with"
        );
        assert!(
            matches!(
                accept(&mut store, &invitation.token, STRONG, &mut rng(), 1000),
                Err(WebAccessError::Invitation)
            ),
            "the invitation is used up"
        );
    }

    #[test]
    fn the_fifth_wrong_passphrase_locks_and_the_lock_ends_in_time() {
        let mut store = study();
        let invitation = invite(&mut store, "Dr Web", 7, &mut rng()).unwrap();
        accept(&mut store, &invitation.token, STRONG, &mut rng(), 1000).unwrap();
        for n in 1..MAX_FAILURES {
            assert!(
                matches!(
                    login(&mut store, "Dr Web", "not the passphrase 1"),
                    Err(WebAccessError::Credentials)
                ),
                "wrong passphrase {n} is refused without a lock"
            );
        }
        assert!(
            matches!(
                login(&mut store, "Dr Web", "not the passphrase 1"),
                Err(WebAccessError::Locked { .. })
            ),
            "the fifth locks"
        );
        assert!(
            matches!(
                login(&mut store, "Dr Web", STRONG),
                Err(WebAccessError::Locked { .. })
            ),
            "a locked login refuses the right passphrase"
        );
        let who = WebIdentity {
            rater: store.expert_by_name("Dr Web").unwrap().unwrap(),
            login: store
                .web_login(store.expert_by_name("Dr Web").unwrap().unwrap().id)
                .unwrap()
                .unwrap()
                .set_at,
        };
        assert!(
            !stands(&store, &who).unwrap(),
            "a locked login's sessions do not stand"
        );
    }

    #[test]
    fn weak_passphrases_are_refused() {
        for weak in [
            "short",
            "aaaaaaaaaaaaaaaa",
            "abcdefghijklmnop",
            "111111111111111",
        ] {
            assert!(!strong_enough(weak), "{weak:?} is too weak for the web");
        }
        assert!(
            strong_enough(STRONG),
            "a long passphrase of words and a number is strong"
        );
    }

    #[test]
    fn revoking_ends_the_login_and_an_invitation_expires() {
        let mut store = study();
        let first = invite(&mut store, "Dr Web", 7, &mut rng()).unwrap();
        let who = accept(&mut store, &first.token, STRONG, &mut rng(), 1000).unwrap();
        assert!(stands(&store, &who).unwrap(), "a fresh login stands");
        assert!(
            revoke(&mut store, "Dr Web").unwrap(),
            "there was access to revoke"
        );
        assert!(
            !stands(&store, &who).unwrap(),
            "after revocation the session does not"
        );
        assert!(
            matches!(
                login(&mut store, "Dr Web", STRONG),
                Err(WebAccessError::Credentials)
            ),
            "and the passphrase no longer logs in"
        );
        assert!(
            matches!(
                invite(&mut store, "Dr Web", 0, &mut rng()),
                Err(WebAccessError::BadExpiry(0))
            ),
            "an invitation lasts at least a day"
        );
    }
}
