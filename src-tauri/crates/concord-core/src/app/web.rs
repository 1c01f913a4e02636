//! Rating from a browser (`concord serve`): the lead's invitations, revocations and the list of
//! experts with web access; the expert's taking up of an invitation, logins and logouts; and the
//! one rating write whose origin says `web`. Every other step of a web rater session is the same
//! use case the window's rater session calls ([`rating`](crate::app::rating),
//! [`calibration`](crate::app::calibration), [`signoff`](crate::app::signoff)), with the expert
//! taken from the server's session, never from the request.
//!
//! Invitations, logins and sessions are sealed with the study's [`WebKey`], derived from its lead
//! key where this machine holds it ([`web_key`]); without it there is no web access.

use crate::app::open_study::OpenStudy;
use crate::base::error_code::{Coded, ErrorCode};
use crate::store::{NamedRater, StoreError};
use crate::workflow::queue::{ItemProgress, QueueError};
use crate::workflow::web_access::{
    self, DerivedPassphrase, Invitation, LoginAttempt, StudyWelcome, WebAccessError, WebIdentity,
    WebKey, WebRaterAccess,
};
use rand::RngCore;

pub use crate::store::{LogFold, LogFolder};
pub use crate::workflow::queue::RatingSave;
pub use crate::workflow::web_access::{
    wait_after, DEFAULT_INVITATION_DAYS, FIRST_WAIT_MS, ITERATIONS, LOCK_MS, MAX_FAILURES,
    MIN_PASSPHRASE_CHARS,
};

/// The study's web key, its lead key made first if it is to have one and has none yet (a lead's
/// study gets its key at its first write); [`WebAccessError::NoLeadKey`] where this machine
/// does not hold the study's lead key. `concord serve` calls it before it starts.
pub fn web_key(study: &mut OpenStudy) -> Result<WebKey, WebAccessError> {
    study.store_keeping_reports().ensure_lead_key()?;
    key_of(study)
}

/// The web key of a study whose lead key this machine holds.
fn key_of(study: &OpenStudy) -> Result<WebKey, WebAccessError> {
    study
        .store()
        .lead_key()
        .map(WebKey::of_lead)
        .ok_or(WebAccessError::NoLeadKey)
}

/// A one-time invitation for the expert named `rater`, standing for `days` days.
pub fn invite(
    study: &mut OpenStudy,
    rater: &str,
    days: u32,
    rng: &mut dyn RngCore,
) -> Result<Invitation, WebAccessError> {
    let key = web_key(study)?;
    web_access::invite(study.store_keeping_reports(), &key, rater, days, rng)
}

/// [`invite`], keeping the study lead's name and contact for the invitation and login pages
/// when given (later invitations keep showing them). Nothing is written when the invitation is
/// refused.
pub fn invite_from(
    study: &mut OpenStudy,
    rater: &str,
    days: u32,
    lead: Option<&str>,
    contact: Option<&str>,
    rng: &mut dyn RngCore,
) -> Result<Invitation, WebAccessError> {
    web_access::check_lead_contact(lead, contact)?;
    let invitation = invite(study, rater, days, rng)?;
    web_access::set_lead_contact(study.store_keeping_reports(), lead, contact)?;
    Ok(invitation)
}

/// What the invitation and login pages say of the study before a login: its title, the lead's
/// name and how to reach them.
pub fn welcome(study: &OpenStudy) -> Result<StudyWelcome, WebAccessError> {
    web_access::welcome(study.store())
}

/// The expert a valid invitation `token` is for.
pub fn invitation_for(study: &OpenStudy, token: &str) -> Result<NamedRater, WebAccessError> {
    web_access::invitation_for(study.store(), &key_of(study)?, token)
}

/// Take up invitation `token`, setting the expert's web passphrase; logs them in.
pub fn accept(
    study: &mut OpenStudy,
    token: &str,
    passphrase: &str,
    rng: &mut dyn RngCore,
    iterations: u32,
) -> Result<WebIdentity, WebAccessError> {
    let key = key_of(study)?;
    web_access::accept(
        study.store_keeping_reports(),
        &key,
        token,
        passphrase,
        rng,
        iterations,
    )
}

/// Derive a new web passphrase for storing, without the study (the slow PBKDF2).
pub fn derive_passphrase(
    passphrase: &str,
    rng: &mut dyn RngCore,
    iterations: u32,
) -> Result<DerivedPassphrase, WebAccessError> {
    web_access::derive_passphrase(passphrase, rng, iterations)
}

/// Take up invitation `token` with a derived passphrase; logs the expert in.
pub fn accept_derived(
    study: &mut OpenStudy,
    token: &str,
    derived: &DerivedPassphrase,
) -> Result<WebIdentity, WebAccessError> {
    let key = key_of(study)?;
    web_access::accept_derived(study.store_keeping_reports(), &key, token, derived)
}

/// Log in as the expert named `name`.
pub fn login(
    study: &mut OpenStudy,
    name: &str,
    passphrase: &str,
) -> Result<WebIdentity, WebAccessError> {
    let key = key_of(study)?;
    web_access::login(study.store_keeping_reports(), &key, name, passphrase)
}

/// Step 1 of a login: the stored login of the expert named `name` (one whose next guess must
/// wait is refused); a name without a login gets a stand-in derivation of
/// `stand_in_iterations` in step 2, the cost of the server's own new passphrases.
pub fn login_attempt(
    study: &OpenStudy,
    name: &str,
    stand_in_iterations: u32,
) -> Result<LoginAttempt, WebAccessError> {
    web_access::login_attempt(study.store(), name, stand_in_iterations)
}

/// Step 2, without the study (the slow PBKDF2): whether `passphrase` is the attempt's.
pub fn attempt_matches(attempt: &LoginAttempt, passphrase: &str) -> bool {
    web_access::attempt_matches(attempt, passphrase)
}

/// Step 3: record the outcome (a failure makes later guesses wait).
pub fn login_outcome(
    study: &mut OpenStudy,
    attempt: LoginAttempt,
    matched: bool,
) -> Result<WebIdentity, WebAccessError> {
    let key = key_of(study)?;
    web_access::login_outcome(study.store_keeping_reports(), &key, attempt, matched)
}

/// Whether a session opened under `identity` still stands (its login sealed, not revoked or
/// replaced).
pub fn stands(study: &OpenStudy, identity: &WebIdentity) -> Result<bool, WebAccessError> {
    web_access::stands(study.store(), &key_of(study)?, identity)
}

/// End session `token` (`idle`: by the idle timeout, else a logout).
pub fn logged_out(
    study: &mut OpenStudy,
    rater: &NamedRater,
    token: &str,
    idle: bool,
) -> Result<(), WebAccessError> {
    let key = key_of(study)?;
    web_access::logged_out(study.store_keeping_reports(), &key, rater, token, idle)
}

/// Keep session `token` in the study so a restarted server carries it on.
pub fn keep_session(
    study: &mut OpenStudy,
    identity: &WebIdentity,
    token: &str,
) -> Result<(), WebAccessError> {
    let key = key_of(study)?;
    web_access::keep_session(study.store_keeping_reports(), &key, identity, token)
}

/// The kept session `token` names, and when it was last seen.
pub fn kept_session(
    study: &OpenStudy,
    token: &str,
) -> Result<Option<(WebIdentity, crate::base::clock::Millis)>, WebAccessError> {
    web_access::kept_session(study.store(), &key_of(study)?, token)
}

/// End the web access of the expert named `rater`; whether they had any.
pub fn revoke(study: &mut OpenStudy, rater: &str) -> Result<bool, WebAccessError> {
    web_access::revoke(study.store_keeping_reports(), rater)
}

/// Every expert's web access and progress; connected means seen within the study's idle-lock
/// minutes. Where this machine holds the lead key, only sealed logins count as logins.
pub fn access(study: &OpenStudy) -> Result<Vec<WebRaterAccess>, WebAccessError> {
    let idle = crate::app::study_security::idle_lock_minutes_of(study)?;
    let key = key_of(study).ok();
    web_access::access(study.store(), key.as_ref(), i64::from(idle) * 60_000)
}

/// Note that session `token` of `rater` made a request now.
pub fn seen(study: &mut OpenStudy, rater: &NamedRater, token: &str) -> Result<(), WebAccessError> {
    let key = key_of(study)?;
    web_access::seen(study.store_keeping_reports(), &key, rater, token)
}

/// Enter a value from the browser: as the window's [`rate`](crate::app::rating::rate), recorded
/// with origin `web`.
pub fn rate(
    study: &mut OpenStudy,
    rater_id: i64,
    item: i64,
    criterion: &str,
    value: i64,
    reason: Option<&str>,
) -> Result<ItemProgress, QueueError> {
    study.rate_via("web", rater_id, item, criterion, value, reason)
}

/// One value from a browser for [`rate_each`]: the login of the session it came from, and the
/// value.
#[derive(Debug, Clone)]
pub struct WebSave {
    pub identity: WebIdentity,
    pub item: i64,
    pub criterion: String,
    pub value: i64,
    pub reason: Option<String>,
}

/// Why one value of a [`rate_each`] was not stored.
#[derive(Debug, thiserror::Error)]
pub enum WebSaveError {
    /// The session's login was revoked, replaced or locked since the session was opened.
    #[error("the login of this session no longer stands; log in again")]
    LoginEnded,
    #[error(transparent)]
    Access(#[from] WebAccessError),
    #[error(transparent)]
    Rating(#[from] QueueError),
}

impl Coded for WebSaveError {
    fn code(&self) -> ErrorCode {
        match self {
            WebSaveError::LoginEnded => ErrorCode::WebSession,
            WebSaveError::Access(e) => e.code(),
            WebSaveError::Rating(e) => e.code(),
        }
    }
}

/// Enter values from browsers that arrived together (several raters' saves) in ONE transaction,
/// each recorded with origin `web` and its own audit entry naming its rater. Each value's
/// session must still stand ([`stands`], checked here, so a save needs the study once); a value
/// that is refused — its login ended, off its scale, not in its rater's queue — has its own
/// error in its place and the others are kept. Every `Ok` is durable when this returns; `Err` is
/// the transaction's own failure (its commit), and then none of them is stored.
pub fn rate_each(
    study: &mut OpenStudy,
    saves: &[WebSave],
) -> Result<Vec<Result<ItemProgress, WebSaveError>>, StoreError> {
    let mut refused: Vec<Option<WebSaveError>> = Vec::with_capacity(saves.len());
    let mut standing = Vec::with_capacity(saves.len());
    let key = key_of(study);
    for save in saves {
        let stands = match &key {
            Ok(key) => web_access::stands(study.store(), key, &save.identity),
            Err(_) => Err(WebAccessError::NoLeadKey),
        };
        match stands {
            Ok(true) => {
                standing.push(RatingSave {
                    rater_id: save.identity.rater.id,
                    item: save.item,
                    criterion: save.criterion.clone(),
                    value: save.value,
                    reason: save.reason.clone(),
                });
                refused.push(None);
            }
            Ok(false) => refused.push(Some(WebSaveError::LoginEnded)),
            Err(e) => refused.push(Some(e.into())),
        }
    }
    let mut rated = study.rate_each_via("web", &standing)?.into_iter();
    Ok(refused
        .into_iter()
        .map(|refusal| match refusal {
            Some(e) => Err(e),
            // One answer per standing save, in order (`Store::write_each`).
            None => match rated.next() {
                Some(r) => r.map_err(WebSaveError::from),
                None => Err(WebSaveError::Rating(QueueError::Store(
                    StoreError::Invalid("a save of the group was not answered".into()),
                ))),
            },
        })
        .collect())
}

/// Pages the write-ahead log of a served study may reach before a commit folds it back itself:
/// a safety net; otherwise the server's fold thread ([`log_folder`]) folds it first.
pub const FOLD_INSIDE_A_COMMIT_AT_PAGES: u32 = 20_000;

/// Serve `study` with its write-ahead log folded back by the server's fold thread
/// ([`log_folder`]); a commit folds it only past [`FOLD_INSIDE_A_COMMIT_AT_PAGES`].
pub fn serve_with_log_folder(study: &mut OpenStudy) -> Result<(), StoreError> {
    study
        .store_keeping_reports()
        .fold_log_every(FOLD_INSIDE_A_COMMIT_AT_PAGES)
}

/// A second connection of the served study for folding its write-ahead log on a thread of its
/// own ([`LogFolder::fold`]), while the study's connection goes on committing saves.
pub fn log_folder(study: &OpenStudy) -> Result<LogFolder, StoreError> {
    study.store().log_folder()
}

/// The idle minutes after which a web session ends: the study's idle-lock setting.
pub fn idle_minutes(study: &OpenStudy) -> Result<u32, crate::store::StoreError> {
    crate::app::study_security::idle_lock_minutes_of(study)
}
