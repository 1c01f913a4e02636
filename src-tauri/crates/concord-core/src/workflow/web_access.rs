//! Experts who rate from a browser (`concord serve`): the lead's one-time invitations, the web
//! passphrase the expert sets from one (kept only as a salted PBKDF2-HMAC-SHA256 hash, as signing
//! passphrases are), logins with growing waits between guesses after [`MAX_FAILURES`] wrong
//! passphrases in a row, revocation, and whether a session opened under a login still stands.
//! Every invitation, login, failed login, wait, revocation and logout is an audit entry that
//! names the expert and says it came from the web (`"via": "web"`). Time comes from the store's
//! clock and randomness (tokens, salts) is handed in, so tests are reproducible; a server hands
//! in the OS generator.
//!
//! The study file cannot log anyone in: an invitation, a login and a session each count only
//! with the seal made at their audited creation — HMAC-SHA256 over what they state, keyed by a
//! [`WebKey`] derived from the study's lead key, which only the lead's machine holds — and the
//! tokens of invitations and sessions are kept as hashes under the same key. A row planted in
//! the file with sqlite3 (a session, a login, an invitation, or one of them moved to another
//! expert) has no valid seal and opens nothing. A wrong passphrase makes the next guess wait;
//! it never ends a live session.
//!
//! A name typed at the login is matched without regard to case or spaces
//! ([`same_login_name`](crate::base::text::same_login_name)), so [`invite`] refuses an expert
//! whose name is the same login as another's who has web access. A used or expired invitation
//! says so, for the page to lead its holder to the login; the study lead's name and contact
//! ([`set_lead_contact`]) are what the pages before a login show with the study's title
//! ([`welcome`]).

use crate::base::clock::Millis;
use crate::base::error_code::{Coded, ErrorCode};
use crate::base::text::{login_name_key, quoted};
use crate::store::lead_key::LeadKey;
use crate::store::{NamedRater, Store, StoreError, WebLogin};
use hmac::{Hmac, Mac};
use rand::RngCore;
use serde::Serialize;
use sha2::Sha256;

/// PBKDF2 iterations for new web passphrases.
pub const ITERATIONS: u32 = 210_000;
/// Wrong passphrases in a row that are free; each one after them makes the next guess wait.
pub const MAX_FAILURES: i64 = 5;
/// The wait after the [`MAX_FAILURES`]th wrong passphrase; it doubles with each further one.
pub const FIRST_WAIT_MS: Millis = 30 * 1000;
/// The longest wait between guesses.
pub const LOCK_MS: Millis = 15 * 60 * 1000;
/// The shortest web passphrase accepted.
pub const MIN_PASSPHRASE_CHARS: usize = 12;
/// How long an invitation stands when the lead names no other time.
pub const DEFAULT_INVITATION_DAYS: u32 = 7;
const DAY_MS: Millis = 24 * 60 * 60 * 1000;
/// `study_meta` key of the study lead's name as the invitation and login pages show it.
pub const LEAD_NAME_META: &str = "web.lead_name";
/// `study_meta` key of how an invited expert reaches the study lead (an e-mail address, a phone
/// number), shown beside the lead's name.
pub const LEAD_CONTACT_META: &str = "web.lead_contact";
/// The longest lead name or contact kept.
pub const MAX_CONTACT_CHARS: usize = 200;

#[derive(Debug, thiserror::Error)]
pub enum WebAccessError {
    #[error("no expert named {q0} in this study", q0 = quoted(&.0))]
    UnknownExpert(String),
    #[error("this invitation link is not valid (it may have been revoked, or the link was cut short when it was copied); ask the study lead for a new one")]
    Invitation,
    #[error("this invitation link has been used already: if you set your passphrase with it, log in with your name and that passphrase; if not, ask the study lead for a new link")]
    InvitationUsed,
    #[error("this invitation link expired on {day} (UTC): ask the study lead for a new one; if you set a passphrase with an earlier link, log in with it", day = &crate::base::clock::iso_utc(*.at)[..10])]
    InvitationExpired { at: Millis },
    #[error("cannot invite {q0}: logins match names without regard to case or spaces, and {q1}, whose name is the same login, already has web access; if they are one person, invite that expert again, or end their web access first; if not, add this expert under a name that tells the two apart (a middle initial, say)", q0 = quoted(&.name), q1 = quoted(&.other))]
    NameCollision { name: String, other: String },
    #[error("the name or the passphrase is not right")]
    Credentials,
    #[error("too many wrong passphrases: the next guess must wait; try again later or ask the study lead")]
    Locked { until: Millis },
    #[error("this web login was not made through an invitation of this study's lead (or was made by an older Concord), so it cannot be trusted; ask the study lead for a new invitation")]
    Unsealed,
    #[error("rating from a browser needs this study's lead key, and this computer does not hold it: serve and invite from the study lead's computer")]
    NoLeadKey,
    #[error("a web passphrase needs at least {MIN_PASSPHRASE_CHARS} characters and more than one kind of character")]
    Weak,
    #[error("an invitation lasts between 1 and 365 days, not {0}")]
    BadExpiry(u32),
    #[error("the study lead's {0} is at most {MAX_CONTACT_CHARS} characters")]
    ContactTooLong(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Coded for WebAccessError {
    fn code(&self) -> ErrorCode {
        match self {
            WebAccessError::UnknownExpert(_) => ErrorCode::UnknownExpert,
            WebAccessError::Invitation
            | WebAccessError::InvitationUsed
            | WebAccessError::InvitationExpired { .. } => ErrorCode::WebInvitation,
            WebAccessError::NameCollision { .. } => ErrorCode::Invalid,
            WebAccessError::Credentials | WebAccessError::Unsealed => ErrorCode::WebLogin,
            WebAccessError::Locked { .. } => ErrorCode::WebLocked,
            WebAccessError::NoLeadKey => ErrorCode::Keyring,
            WebAccessError::Weak => ErrorCode::WeakPassphrase,
            WebAccessError::BadExpiry(_) | WebAccessError::ContactTooLong(_) => ErrorCode::Invalid,
            WebAccessError::Store(e) => e.code(),
        }
    }
}

/// The secret web access is sealed with: derived from the study's lead key
/// ([`LeadKey::derived_secret`]), held in the server's memory, never written anywhere.
#[derive(Clone)]
pub struct WebKey([u8; 32]);

impl std::fmt::Debug for WebKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebKey(..)")
    }
}

impl WebKey {
    /// The web key of the study whose lead key is `lead`.
    pub fn of_lead(lead: &LeadKey) -> WebKey {
        WebKey(lead.derived_secret("web access v1"))
    }

    /// A web key from a secret of 32 bytes (tests; a server takes [`WebKey::of_lead`]).
    pub fn from_secret(secret: [u8; 32]) -> WebKey {
        WebKey(secret)
    }

    fn mac(&self, parts: &[&str]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0)
            .expect("HMAC accepts a key of any length");
        for part in parts {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part.as_bytes());
        }
        mac
    }

    /// The keyed hash a token of `kind` (`invitation`, `session`) is kept as.
    pub fn token_key(&self, kind: &str, token: &str) -> String {
        hex(&self.mac(&["token", kind, token]).finalize().into_bytes())
    }

    fn seal(&self, parts: &[&str]) -> String {
        hex(&self.mac(parts).finalize().into_bytes())
    }

    /// Whether `seal` is this key's seal over `parts` (compared in constant time).
    fn holds(&self, seal: Option<&str>, parts: &[&str]) -> bool {
        seal.and_then(unhex)
            .is_some_and(|bytes| self.mac(parts).verify_slice(&bytes).is_ok())
    }

    /// The seal of a login of expert `rater_id` with this passphrase hash, set at `set_at`.
    fn login_seal(&self, rater_id: i64, d: &DerivedPassphrase, set_at: Millis) -> String {
        self.seal(&[
            "login",
            &rater_id.to_string(),
            &d.salt,
            &d.hash,
            &d.iterations.to_string(),
            &set_at.to_string(),
        ])
    }

    /// Whether `login` is one this key sealed, as it stands.
    pub fn sealed_login(&self, login: &WebLogin) -> bool {
        self.holds(
            login.seal.as_deref(),
            &[
                "login",
                &login.rater_id.to_string(),
                &login.salt,
                &login.hash,
                &login.iterations.to_string(),
                &login.set_at.to_string(),
            ],
        )
    }
}

/// A new invitation: the token goes into the link and is shown once; the study keeps its keyed
/// hash.
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
    /// Until when a new guess at their passphrase must wait (their sessions go on).
    pub locked_until: Option<Millis>,
    /// Invitations neither used nor expired.
    pub open_invitations: i64,
    /// Their queue: items done of all.
    pub completed: i64,
    pub total: i64,
}

/// What the invitation and login pages say of the study before anyone logs in: its title, the
/// study lead's name and how to reach them (either may be unset).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StudyWelcome {
    pub study: String,
    pub lead: Option<String>,
    pub contact: Option<String>,
}

/// The study as the pages before a login name it.
pub fn welcome(store: &Store) -> Result<StudyWelcome, WebAccessError> {
    let kept = |key: &str| -> Result<Option<String>, WebAccessError> {
        Ok(store.meta(key)?.filter(|v| !v.trim().is_empty()))
    };
    Ok(StudyWelcome {
        study: store.title()?,
        lead: kept(LEAD_NAME_META)?,
        contact: kept(LEAD_CONTACT_META)?,
    })
}

/// Refuse a lead name or contact too long to keep ([`MAX_CONTACT_CHARS`]), before anything is
/// written.
pub fn check_lead_contact(lead: Option<&str>, contact: Option<&str>) -> Result<(), WebAccessError> {
    for (what, value) in [("name", lead), ("contact", contact)] {
        if value.is_some_and(|v| {
            crate::base::text::normalise_name(v).chars().count() > MAX_CONTACT_CHARS
        }) {
            return Err(WebAccessError::ContactTooLong(what));
        }
    }
    Ok(())
}

/// Keep the study lead's name and contact for the invitation and login pages (each only when
/// given; spacing normalised, at most [`MAX_CONTACT_CHARS`] characters), in one audited write.
pub fn set_lead_contact(
    store: &mut Store,
    lead: Option<&str>,
    contact: Option<&str>,
) -> Result<(), WebAccessError> {
    check_lead_contact(lead, contact)?;
    let lead = lead.map(crate::base::text::normalise_name);
    let contact = contact.map(crate::base::text::normalise_name);
    if lead.is_none() && contact.is_none() {
        return Ok(());
    }
    store.write(|tx| {
        if let Some(lead) = &lead {
            tx.set_meta(LEAD_NAME_META, lead)?;
        }
        if let Some(contact) = &contact {
            tx.set_meta(LEAD_CONTACT_META, contact)?;
        }
        tx.audit(
            "lead",
            "web.lead_contact",
            &serde_json::json!({"lead": lead, "contact": contact, "via": "web"}),
        )
    })?;
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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

/// The wait before the next guess after `failures` wrong passphrases in a row: none for the
/// first [`MAX_FAILURES`]` - 1`, then [`FIRST_WAIT_MS`] doubling with each one, at most
/// [`LOCK_MS`].
pub fn wait_after(failures: i64) -> Option<Millis> {
    let beyond = failures - MAX_FAILURES;
    (beyond >= 0).then(|| (FIRST_WAIT_MS << beyond.min(20)).min(LOCK_MS))
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

/// The experts whose names are the same login as `typed` ([`same_login_name`]: case and
/// spaces aside), by id.
fn same_login_experts(store: &Store, typed: &str) -> Result<Vec<NamedRater>, WebAccessError> {
    let key = login_name_key(typed);
    Ok(store
        .raters()?
        .into_iter()
        .filter(|r| r.kind == crate::store::RaterKind::Expert && login_name_key(&r.name) == key)
        .map(|r| NamedRater {
            id: r.id,
            name: r.name,
        })
        .collect())
}

/// The experts other than `rater` whose names are the same login as theirs and who have web
/// access (a web passphrase, or an invitation neither used nor expired), by name: a login could
/// not tell them from `rater`.
fn login_twins(store: &Store, rater: &NamedRater) -> Result<Vec<String>, WebAccessError> {
    let invited: std::collections::HashSet<i64> = store
        .open_web_invitations(store.now_ms())?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let mut twins = Vec::new();
    for other in same_login_experts(store, &rater.name)? {
        if other.id != rater.id
            && (invited.contains(&other.id) || store.web_login(other.id)?.is_some())
        {
            twins.push(other.name);
        }
    }
    twins.sort();
    Ok(twins)
}

/// The web login a name typed at the login names, with its expert: among the experts whose
/// names are the same login ([`same_login_name`]: case and spaces aside) and who have a web
/// passphrase, the one of exactly that name, else the only one. [`invite`] never lets two such
/// experts have web access at once; where an older study has two, only the exact name logs in.
fn login_of(store: &Store, typed: &str) -> Result<Option<(NamedRater, WebLogin)>, WebAccessError> {
    let mut with_login = Vec::new();
    for expert in same_login_experts(store, typed)? {
        if let Some(login) = store.web_login(expert.id)? {
            with_login.push((expert, login));
        }
    }
    let exact = crate::base::text::normalise_name(typed);
    if let Some(i) = with_login
        .iter()
        .position(|(e, _)| e.name == exact || e.name == typed.trim())
    {
        return Ok(Some(with_login.swap_remove(i)));
    }
    Ok(match with_login.len() {
        1 => with_login.pop(),
        _ => None,
    })
}

fn random_hex(rng: &mut dyn RngCore, bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    rng.fill_bytes(&mut b);
    hex(&b)
}

/// A one-time invitation for the expert named `name`, standing for `days` days, sealed with
/// `key`.
pub fn invite(
    store: &mut Store,
    key: &WebKey,
    name: &str,
    days: u32,
    rng: &mut dyn RngCore,
) -> Result<Invitation, WebAccessError> {
    if !(1..=365).contains(&days) {
        return Err(WebAccessError::BadExpiry(days));
    }
    let rater = expert(store, name)?;
    // The login matches names without regard to case or spaces: an expert it could not tell
    // from another who has web access is refused before being given a way in.
    if let Some(other) = login_twins(store, &rater)?.into_iter().next() {
        return Err(WebAccessError::NameCollision {
            name: rater.name,
            other,
        });
    }
    let token = random_hex(rng, 32);
    let expires_at = store.now_ms() + i64::from(days) * DAY_MS;
    let token_key = key.token_key("invitation", &token);
    store.write(|tx| {
        let seal = key.seal(&[
            "invitation",
            &token_key,
            &rater.id.to_string(),
            &tx.now().to_string(),
            &expires_at.to_string(),
        ]);
        tx.add_web_invitation(&token_key, rater.id, expires_at, &seal)?;
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

/// The expert an unused, unexpired invitation sealed with `key` is for (the set-passphrase page
/// names them). An invitation of this study that was used or has expired says so
/// ([`WebAccessError::InvitationUsed`], [`WebAccessError::InvitationExpired`]), so the page can
/// send its holder to the login with the reason; any other token is [`WebAccessError::Invitation`].
pub fn invitation_for(
    store: &Store,
    key: &WebKey,
    token: &str,
) -> Result<NamedRater, WebAccessError> {
    let token_key = key.token_key("invitation", token);
    let invitation = store
        .web_invitation(&token_key)?
        .filter(|i| {
            key.holds(
                i.seal.as_deref(),
                &[
                    "invitation",
                    &token_key,
                    &i.rater_id.to_string(),
                    &i.created_at.to_string(),
                    &i.expires_at.to_string(),
                ],
            )
        })
        .ok_or(WebAccessError::Invitation)?;
    if invitation.used_at.is_some() {
        return Err(WebAccessError::InvitationUsed);
    }
    if invitation.expires_at <= store.now_ms() {
        return Err(WebAccessError::InvitationExpired {
            at: invitation.expires_at,
        });
    }
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
/// web passphrase is set, sealed with `key`, and they are logged in. The invitation cannot be
/// used again.
pub fn accept_derived(
    store: &mut Store,
    key: &WebKey,
    token: &str,
    derived: &DerivedPassphrase,
) -> Result<WebIdentity, WebAccessError> {
    let rater = invitation_for(store, key, token)?;
    let token_key = key.token_key("invitation", token);
    let set_at = store.write(|tx| {
        if !tx.use_web_invitation(&token_key)? {
            return Err(WebAccessError::InvitationUsed);
        }
        let set_at = tx.now();
        let seal = key.login_seal(rater.id, derived, set_at);
        tx.set_web_login(
            rater.id,
            &derived.salt,
            &derived.hash,
            derived.iterations,
            &seal,
        )?;
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
        Ok::<_, WebAccessError>(set_at)
    })?;
    Ok(WebIdentity {
        rater,
        login: set_at,
    })
}

/// Take up an invitation: [`invitation_for`], [`derive_passphrase`] and [`accept_derived`] in a
/// row.
pub fn accept(
    store: &mut Store,
    key: &WebKey,
    token: &str,
    passphrase: &str,
    rng: &mut dyn RngCore,
    iterations: u32,
) -> Result<WebIdentity, WebAccessError> {
    invitation_for(store, key, token)?;
    let derived = derive_passphrase(passphrase, rng, iterations)?;
    accept_derived(store, key, token, &derived)
}

/// A login attempt between its steps: the stored login it is checked against (none for a name
/// without one), so the slow key derivation runs without holding the study; and the cost of the
/// stand-in derivation for a name without a login.
#[derive(Debug, Clone)]
pub struct LoginAttempt {
    found: Option<(NamedRater, WebLogin)>,
    stand_in_iterations: u32,
}

impl LoginAttempt {
    /// The PBKDF2 iterations step 2 runs: the stored login's, or the stand-in's for a name
    /// without one (equal when the stand-in is the server's cost of new passphrases).
    pub fn iterations(&self) -> u32 {
        match &self.found {
            Some((_, login)) => login.iterations,
            None => self.stand_in_iterations,
        }
    }
}

/// Step 1 of a login: the stored login of the expert named `name`; one whose next guess must
/// still wait is refused here. `stand_in_iterations` is the cost of the derivation step 2 does
/// for a name without a login: the server's cost of new passphrases, so an unknown name takes
/// as long as a known one.
pub fn login_attempt(
    store: &Store,
    name: &str,
    stand_in_iterations: u32,
) -> Result<LoginAttempt, WebAccessError> {
    let now = store.now_ms();
    let found = login_of(store, name)?;
    if let Some(until) = found
        .as_ref()
        .and_then(|(_, l)| l.locked_until)
        .filter(|u| *u > now)
    {
        return Err(WebAccessError::Locked { until });
    }
    Ok(LoginAttempt {
        found,
        stand_in_iterations,
    })
}

/// Step 2, touching no study: whether `passphrase` is the attempt's (the same work for a name
/// without a login, so timing does not tell which names exist).
pub fn attempt_matches(attempt: &LoginAttempt, passphrase: &str) -> bool {
    match &attempt.found {
        Some((_, login)) => matches(login, passphrase),
        None => {
            let _ = derive(passphrase, "no-such-login", attempt.stand_in_iterations);
            false
        }
    }
}

/// Step 3: record the outcome. A wrong passphrase is counted (in the study, so attempts in
/// parallel count too); from the [`MAX_FAILURES`]th in a row the next guess waits
/// ([`wait_after`]). A right passphrase logs in only to a login sealed with `key`.
pub fn login_outcome(
    store: &mut Store,
    key: &WebKey,
    attempt: LoginAttempt,
    matched: bool,
) -> Result<WebIdentity, WebAccessError> {
    let now = store.now_ms();
    let Some((rater, _)) = attempt.found else {
        return Err(WebAccessError::Credentials);
    };
    // The login as it stands now: it may have been replaced or revoked, or a guess may have to
    // wait, meanwhile.
    let Some(login) = store.web_login(rater.id)? else {
        return Err(WebAccessError::Credentials);
    };
    if let Some(until) = login.locked_until.filter(|u| *u > now) {
        return Err(WebAccessError::Locked { until });
    }
    if matched && !key.sealed_login(&login) {
        return Err(WebAccessError::Unsealed);
    }
    if !matched {
        let failures = login.failures + 1;
        let until = wait_after(failures).map(|wait| now + wait);
        store.write(|tx| {
            tx.web_login_failed(rater.id, until)?;
            tx.audit(
                &rater.name,
                "web.login_failed",
                &serde_json::json!({"rater_id": rater.id, "failures": failures, "via": "web"}),
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
/// wrong name and a wrong passphrase are refused alike; a guess that must wait refuses even the
/// right passphrase.
pub fn login(
    store: &mut Store,
    key: &WebKey,
    name: &str,
    passphrase: &str,
) -> Result<WebIdentity, WebAccessError> {
    let attempt = login_attempt(store, name, ITERATIONS)?;
    let matched = attempt_matches(&attempt, passphrase);
    login_outcome(store, key, attempt, matched)
}

/// Whether a session opened under `identity` still stands: its login exists, is sealed with
/// `key`, and was not replaced or revoked since. Wrong guesses at the passphrase since do not
/// end it.
pub fn stands(store: &Store, key: &WebKey, identity: &WebIdentity) -> Result<bool, WebAccessError> {
    Ok(store
        .web_login(identity.rater.id)?
        .is_some_and(|l| l.set_at == identity.login && key.sealed_login(&l)))
}

/// End session `token`: the expert logged out (or, `idle`, it was idle too long).
pub fn logged_out(
    store: &mut Store,
    key: &WebKey,
    rater: &NamedRater,
    token: &str,
    idle: bool,
) -> Result<(), WebAccessError> {
    store.write(|tx| {
        tx.remove_web_session(&key.token_key("session", token))?;
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
pub fn seen(
    store: &mut Store,
    key: &WebKey,
    rater: &NamedRater,
    token: &str,
) -> Result<(), WebAccessError> {
    store.write(|tx| tx.web_seen(rater.id, &key.token_key("session", token)))?;
    Ok(())
}

fn session_parts(token_key: &str, rater_id: i64, login: Millis, created_at: Millis) -> [String; 5] {
    [
        "session".into(),
        token_key.into(),
        rater_id.to_string(),
        login.to_string(),
        created_at.to_string(),
    ]
}

/// Keep session `token` of `identity` in the study (only its keyed hash, sealed with `key`), so a
/// restarted server carries it on.
pub fn keep_session(
    store: &mut Store,
    key: &WebKey,
    identity: &WebIdentity,
    token: &str,
) -> Result<(), WebAccessError> {
    let token_key = key.token_key("session", token);
    store.write(|tx| {
        let parts = session_parts(&token_key, identity.rater.id, identity.login, tx.now());
        let seal = key.seal(&parts.iter().map(String::as_str).collect::<Vec<_>>());
        tx.add_web_session(&token_key, identity.rater.id, identity.login, &seal)
    })?;
    Ok(())
}

/// The session `token` names in the study, and when it was last seen, if it is kept there with
/// `key`'s seal (a session row written by anything else names nobody).
pub fn kept_session(
    store: &Store,
    key: &WebKey,
    token: &str,
) -> Result<Option<(WebIdentity, Millis)>, WebAccessError> {
    let token_key = key.token_key("session", token);
    let Some(record) = store.web_session(&token_key)? else {
        return Ok(None);
    };
    let parts = session_parts(&token_key, record.rater_id, record.login, record.created_at);
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    if !key.holds(record.seal.as_deref(), &parts) {
        return Ok(None);
    }
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
/// `idle_ms`. Given the study's web key, a login without its seal (written into the file by
/// anything but the server, or from before seals) is not counted as one.
pub fn access(
    store: &Store,
    key: Option<&WebKey>,
    idle_ms: Millis,
) -> Result<Vec<WebRaterAccess>, WebAccessError> {
    let now = store.now_ms();
    let logins: std::collections::HashMap<i64, WebLogin> = store
        .web_logins()?
        .into_iter()
        .filter(|l| key.is_none_or(|k| k.sealed_login(l)))
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

    fn key() -> WebKey {
        WebKey::from_secret([7; 32])
    }

    #[test]
    fn the_study_keeps_only_hashes_of_tokens_and_passphrases() {
        let mut store = study();
        let invitation = invite(&mut store, &key(), "Dr Web", 7, &mut rng()).unwrap();
        assert!(
            store.web_invitation(&invitation.token).unwrap().is_none(),
            "the token itself is not a key of the table"
        );
        assert!(
            store
                .web_invitation(&key().token_key("invitation", &invitation.token))
                .unwrap()
                .is_some(),
            "its keyed hash is"
        );
        assert!(
            matches!(
                invitation_for(&store, &WebKey::from_secret([8; 32]), &invitation.token),
                Err(WebAccessError::Invitation)
            ),
            "under another study's key the invitation is nobody's"
        );
        let who = accept(
            &mut store,
            &key(),
            &invitation.token,
            STRONG,
            &mut rng(),
            1000,
        )
        .unwrap();
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
                accept(
                    &mut store,
                    &key(),
                    &invitation.token,
                    STRONG,
                    &mut rng(),
                    1000
                ),
                Err(WebAccessError::InvitationUsed)
            ),
            "the invitation is used up, and says so"
        );
    }

    #[test]
    fn the_fifth_wrong_passphrase_makes_the_next_guess_wait_without_ending_sessions() {
        let mut store = study();
        let invitation = invite(&mut store, &key(), "Dr Web", 7, &mut rng()).unwrap();
        accept(
            &mut store,
            &key(),
            &invitation.token,
            STRONG,
            &mut rng(),
            1000,
        )
        .unwrap();
        for n in 1..MAX_FAILURES {
            assert!(
                matches!(
                    login(&mut store, &key(), "Dr Web", "not the passphrase 1"),
                    Err(WebAccessError::Credentials)
                ),
                "wrong passphrase {n} is refused without a lock"
            );
        }
        assert!(
            matches!(
                login(&mut store, &key(), "Dr Web", "not the passphrase 1"),
                Err(WebAccessError::Locked { .. })
            ),
            "the fifth locks"
        );
        assert!(
            matches!(
                login(&mut store, &key(), "Dr Web", STRONG),
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
            stands(&store, &key(), &who).unwrap(),
            "wrong guesses by someone else do not end the expert's live session"
        );
        assert_eq!(
            (wait_after(4), wait_after(5), wait_after(6), wait_after(40)),
            (
                None,
                Some(FIRST_WAIT_MS),
                Some(2 * FIRST_WAIT_MS),
                Some(LOCK_MS)
            ),
            "the wait grows with each wrong guess past the free ones, up to the longest wait"
        );
    }

    #[test]
    fn an_unknown_name_gets_the_same_key_derivation_as_a_known_one() {
        let mut store = study();
        let invitation = invite(&mut store, &key(), "Dr Web", 7, &mut rng()).unwrap();
        accept(
            &mut store,
            &key(),
            &invitation.token,
            STRONG,
            &mut rng(),
            1000,
        )
        .unwrap();
        let known = login_attempt(&store, "Dr Web", 1000).unwrap();
        let unknown = login_attempt(&store, "Nobody At All", 1000).unwrap();
        assert_eq!(
            (known.iterations(), unknown.iterations()),
            (1000, 1000),
            "a name without a login costs the same derivation as one with it, so the time a wrong \
             guess takes does not tell which names have a login"
        );
        assert!(
            !attempt_matches(&unknown, STRONG),
            "the stand-in derivation matches no passphrase"
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
        let first = invite(&mut store, &key(), "Dr Web", 7, &mut rng()).unwrap();
        let who = accept(&mut store, &key(), &first.token, STRONG, &mut rng(), 1000).unwrap();
        assert!(
            stands(&store, &key(), &who).unwrap(),
            "a fresh login stands"
        );
        assert!(
            revoke(&mut store, "Dr Web").unwrap(),
            "there was access to revoke"
        );
        assert!(
            !stands(&store, &key(), &who).unwrap(),
            "after revocation the session does not"
        );
        assert!(
            matches!(
                login(&mut store, &key(), "Dr Web", STRONG),
                Err(WebAccessError::Credentials)
            ),
            "and the passphrase no longer logs in"
        );
        assert!(
            matches!(
                invite(&mut store, &key(), "Dr Web", 0, &mut rng()),
                Err(WebAccessError::BadExpiry(0))
            ),
            "an invitation lasts at least a day"
        );
    }
}
