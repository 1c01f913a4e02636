//! Rater sessions: who the window works for. The window is either in lead mode or in a rater
//! session — an expert picked on the rating screen, or the expert of an opened rater package. In a
//! rater session the shell holds the expert's id and the rating commands take it from there, never
//! from the page; everything else is refused (the shell's allow-list decides which command is a
//! rating command). A study locked to its experts (`concord profiles --lock`) carries a lead
//! passphrase (PBKDF2-HMAC-SHA256, salted, only the derived hash stored); a rater session picked in
//! such a study is recorded in the study, so quitting and relaunching the app returns to the same
//! session, and leaving it for lead mode needs that passphrase. A package's session never becomes
//! lead mode (a package has no lead). An unlocked study lets the session go without a passphrase.

use crate::base::error_code::ErrorCode;
use crate::store::{Store, StoreError};
use crate::workflow::package::META_PACKAGE_RATER;
use crate::workflow::queue::PROFILES_LOCKED_KEY;
use rand::{RngCore, SeedableRng};
use serde::Serialize;
use sha2::Sha256;

/// `study_meta` key of the lead passphrase: `pbkdf2-sha256$ITERATIONS$SALT$HASH`.
pub const LEAD_PASSPHRASE_KEY: &str = "lead_passphrase";
/// `study_meta` key of the rater session that outlives a relaunch in a locked study (an id, or
/// empty when the study is in lead mode).
pub const ACTIVE_RATER_KEY: &str = "rater_session";
/// PBKDF2 iterations of a new lead passphrase.
pub const ITERATIONS: u32 = 210_000;

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("rater {0} is not an expert of this study")]
    NotAnExpert(i64),
    #[error("this window works for one expert: their own queue is all it opens")]
    RaterOnly,
    #[error("pick your expert profile first: rating works only in a rater session")]
    NoRaterSession,
    #[error("this study is locked to its experts: leaving the rating screen needs the lead's passphrase")]
    LeadPassphraseNeeded,
    #[error("that is not the lead's passphrase")]
    WrongLeadPassphrase,
    #[error("{failures} wrong lead passphrases in a row: try again in {seconds} s")]
    TryAgainLater { failures: u32, seconds: u64 },
    #[error("lead passphrase refused: {0}")]
    WeakPassphrase(#[from] crate::base::passphrase_strength::WeakPassphrase),
    #[error("this file is an expert's package: it opens only that expert's queue")]
    PackageSession,
    #[error("the package names its expert {0}, who is not in it")]
    PackageExpertMissing(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl crate::base::error_code::Coded for SessionError {
    fn code(&self) -> ErrorCode {
        match self {
            SessionError::NotAnExpert(_) => ErrorCode::NotAnExpert,
            SessionError::RaterOnly | SessionError::PackageSession => ErrorCode::RaterSession,
            SessionError::NoRaterSession => ErrorCode::NoRaterSession,
            SessionError::LeadPassphraseNeeded
            | SessionError::WrongLeadPassphrase
            | SessionError::TryAgainLater { .. } => ErrorCode::LeadPassphrase,
            SessionError::WeakPassphrase(_) => ErrorCode::WeakPassphrase,
            SessionError::PackageExpertMissing(_) => ErrorCode::Package,
            SessionError::Store(e) => e.code(),
        }
    }
}

/// How a rater session began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum SessionSource {
    /// The expert picked their profile on the rating screen.
    Picked,
    /// The open file is the expert's package.
    Package,
}

/// Whom the window works for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Session {
    Lead,
    /// A study locked behind a lead passphrase, before an expert has picked their profile: the
    /// picker, and nothing of lead mode.
    Picking,
    Rater {
        rater_id: i64,
        source: SessionSource,
    },
}

impl Session {
    /// The session's expert; a lead asking for one is refused (rating needs a session).
    pub fn rater_id(&self) -> Result<i64, SessionError> {
        match self {
            Session::Rater { rater_id, .. } => Ok(*rater_id),
            Session::Lead | Session::Picking => Err(SessionError::NoRaterSession),
        }
    }

    /// Lead mode, or the refusal a rater session gives to everything but rating.
    pub fn lead(&self) -> Result<(), SessionError> {
        match self {
            Session::Lead => Ok(()),
            Session::Rater { .. } | Session::Picking => Err(SessionError::RaterOnly),
        }
    }
}

/// What the window shows about its session.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SessionInfo {
    /// `None` in lead mode.
    pub rater_id: Option<i64>,
    pub rater_name: Option<String>,
    pub source: Option<SessionSource>,
    /// The study is locked to its experts (and its rater sessions outlive a relaunch).
    pub profiles_locked: bool,
    /// Leaving the session needs the lead passphrase.
    pub leave_needs_passphrase: bool,
    /// A package's session cannot be left.
    pub can_leave: bool,
    /// The picker of a locked study, before an expert is chosen.
    pub picking: bool,
}

fn profiles_locked(store: &Store) -> Result<bool, StoreError> {
    Ok(store.meta(PROFILES_LOCKED_KEY)?.as_deref() == Some("true"))
}

fn lead_hash(store: &Store) -> Result<Option<String>, StoreError> {
    Ok(store.meta(LEAD_PASSPHRASE_KEY)?.filter(|h| !h.is_empty()))
}

/// The session a freshly opened study starts in: its package's expert, the rater session recorded
/// in a locked study, or lead mode.
pub fn at_open(store: &Store) -> Result<Session, SessionError> {
    if let Some(name) = store.meta(META_PACKAGE_RATER)? {
        let rater_id = store
            .expert_by_name(&name)?
            .ok_or(SessionError::PackageExpertMissing(name))?
            .id;
        return Ok(Session::Rater {
            rater_id,
            source: SessionSource::Package,
        });
    }
    if profiles_locked(store)? {
        if let Some(id) = store
            .meta(ACTIVE_RATER_KEY)?
            .and_then(|v| v.trim().parse::<i64>().ok())
        {
            if store.expert_by_id(id)?.is_some() {
                return Ok(Session::Rater {
                    rater_id: id,
                    source: SessionSource::Picked,
                });
            }
        }
        if lead_hash(store)?.is_some() {
            return Ok(Session::Picking);
        }
    }
    Ok(Session::Lead)
}

/// Start a rater session for `rater_id` (an expert of the study); in a locked study it is recorded
/// so a relaunch returns to it. A session already running refuses a switch to another expert.
pub fn start(store: &mut Store, current: Session, rater_id: i64) -> Result<Session, SessionError> {
    if store.expert_by_id(rater_id)?.is_none() {
        return Err(SessionError::NotAnExpert(rater_id));
    }
    match current {
        Session::Rater { rater_id: held, .. } if held != rater_id => {
            return Err(SessionError::RaterOnly)
        }
        Session::Rater { .. } => return Ok(current),
        Session::Lead | Session::Picking => {}
    }
    if profiles_locked(store)? {
        store.write(|tx| {
            tx.set_meta(ACTIVE_RATER_KEY, &rater_id.to_string())?;
            tx.audit(
                "lead",
                "rater_session_started",
                &serde_json::json!({ "rater": rater_id }),
            )?;
            Ok::<_, StoreError>(())
        })?;
    }
    Ok(Session::Rater {
        rater_id,
        source: SessionSource::Picked,
    })
}

/// Leave a rater session (or a locked study's picker) for lead mode: free in an unlocked study,
/// with the lead passphrase in a locked one, never for a package.
pub fn leave(
    store: &mut Store,
    current: Session,
    passphrase: Option<&str>,
) -> Result<Session, SessionError> {
    let rater_id = match current {
        Session::Lead => return Ok(Session::Lead),
        Session::Rater {
            source: SessionSource::Package,
            ..
        } => return Err(SessionError::PackageSession),
        Session::Rater { rater_id, .. } => Some(rater_id),
        Session::Picking => None,
    };
    if profiles_locked(store)? {
        if let Some(stored) = lead_hash(store)? {
            let given = passphrase
                .filter(|p| !p.is_empty())
                .ok_or(SessionError::LeadPassphraseNeeded)?;
            if !matches(&stored, given) {
                return Err(SessionError::WrongLeadPassphrase);
            }
        }
        store.write(|tx| {
            tx.set_meta(ACTIVE_RATER_KEY, "")?;
            tx.audit(
                "lead",
                "rater_session_left",
                &serde_json::json!({ "rater": rater_id }),
            )?;
            Ok::<_, StoreError>(())
        })?;
    }
    Ok(Session::Lead)
}

/// What the window shows about `session`.
pub fn info(store: &Store, session: Session) -> Result<SessionInfo, SessionError> {
    let locked = profiles_locked(store)?;
    let needs = locked && lead_hash(store)?.is_some();
    Ok(match session {
        Session::Lead | Session::Picking => SessionInfo {
            rater_id: None,
            rater_name: None,
            source: None,
            profiles_locked: locked,
            leave_needs_passphrase: needs,
            can_leave: true,
            picking: session == Session::Picking,
        },
        Session::Rater { rater_id, source } => SessionInfo {
            rater_id: Some(rater_id),
            rater_name: store.expert_by_id(rater_id)?.map(|e| e.name),
            source: Some(source),
            profiles_locked: locked,
            leave_needs_passphrase: needs && source == SessionSource::Picked,
            can_leave: source == SessionSource::Picked,
            picking: false,
        },
    })
}

/// Lock the study to its existing experts behind a lead passphrase (`concord profiles --lock`).
/// `salt_seed` draws the salt (randomness passed in); `iterations` is [`ITERATIONS`] outside tests.
pub fn lock_profiles(
    store: &mut Store,
    passphrase: &str,
    salt_seed: u64,
    iterations: u32,
) -> Result<(), SessionError> {
    crate::base::passphrase_strength::check_new_passphrase(passphrase, &[])?;
    let mut salt = [0u8; 16];
    rand_chacha::ChaCha20Rng::seed_from_u64(salt_seed).fill_bytes(&mut salt);
    let salt = hex(&salt);
    let stored = format!(
        "pbkdf2-sha256${iterations}${salt}${}",
        derive(passphrase, &salt, iterations)
    );
    store.write(|tx| {
        tx.set_meta(PROFILES_LOCKED_KEY, "true")?;
        tx.set_meta(LEAD_PASSPHRASE_KEY, &stored)?;
        tx.audit(
            "lead",
            "profiles_locked",
            &serde_json::json!({ "locked": true, "lead_passphrase": true }),
        )?;
        Ok::<_, StoreError>(())
    })?;
    Ok(())
}

/// Reopen the study's profiles (`concord profiles --unlock`): the lead passphrase and any recorded
/// rater session go with the lock.
pub fn unlock_profiles(store: &mut Store) -> Result<(), SessionError> {
    store.write(|tx| {
        tx.set_meta(PROFILES_LOCKED_KEY, "false")?;
        tx.set_meta(LEAD_PASSPHRASE_KEY, "")?;
        tx.set_meta(ACTIVE_RATER_KEY, "")?;
        tx.audit(
            "lead",
            "profiles_locked",
            &serde_json::json!({ "locked": false }),
        )?;
        Ok::<_, StoreError>(())
    })?;
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn derive(passphrase: &str, salt: &str, iterations: u32) -> String {
    let mut out = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(passphrase.as_bytes(), salt.as_bytes(), iterations, &mut out);
    hex(&out)
}

/// Whether `given` derives to the stored `pbkdf2-sha256$N$SALT$HASH` (compared in constant time).
fn matches(stored: &str, given: &str) -> bool {
    let mut parts = stored.split('$');
    let (Some("pbkdf2-sha256"), Some(n), Some(salt), Some(hash), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return false;
    };
    let Ok(iterations) = n.parse::<u32>() else {
        return false;
    };
    let derived = derive(given, salt, iterations);
    derived.len() == hash.len()
        && derived
            .bytes()
            .zip(hash.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::SteppingClock;
    use std::sync::Arc;

    fn study_with_experts() -> (Store, i64, i64) {
        let mut store = Store::in_memory(Arc::new(SteppingClock::new(1_700_000_000_000, 1000)))
            .expect("an in-memory study");
        let a = crate::workflow::queue::create_profile(&mut store, "Dr A", 1)
            .expect("expert A")
            .id;
        let b = crate::workflow::queue::create_profile(&mut store, "Dr B", 2)
            .expect("expert B")
            .id;
        (store, a, b)
    }

    #[test]
    fn a_rater_session_in_a_locked_study_outlives_a_relaunch_and_leaves_only_with_the_lead_passphrase(
    ) {
        let (mut store, a, b) = study_with_experts();
        lock_profiles(&mut store, "lead ferry lantern 82", 7, 1_000)
            .expect("the lead locks the study");
        let session = start(&mut store, Session::Lead, a).expect("expert A picks their profile");
        assert_eq!(
            at_open(&store).expect("the study reopens"),
            session,
            "a relaunch must return to the rater session, not to lead mode"
        );
        assert!(
            matches!(start(&mut store, session, b), Err(SessionError::RaterOnly)),
            "a session must not switch itself to another expert"
        );
        assert!(
            matches!(
                leave(&mut store, session, None),
                Err(SessionError::LeadPassphraseNeeded)
            ),
            "leaving without the lead passphrase must be refused"
        );
        assert!(
            matches!(
                leave(&mut store, session, Some("guess guess")),
                Err(SessionError::WrongLeadPassphrase)
            ),
            "a wrong lead passphrase must be refused"
        );
        assert_eq!(
            leave(&mut store, session, Some("lead ferry lantern 82"))
                .expect("the lead's passphrase"),
            Session::Lead,
            "the lead passphrase returns the window to lead mode"
        );
        assert_eq!(
            at_open(&store).expect("the study reopens"),
            Session::Picking,
            "a locked study reopens on its picker, not in lead mode"
        );
        assert!(
            matches!(
                leave(&mut store, Session::Picking, None),
                Err(SessionError::LeadPassphraseNeeded)
            ),
            "the picker of a locked study opens lead mode only with the lead passphrase"
        );
    }

    #[test]
    fn an_unlocked_study_lets_a_session_go_and_does_not_record_it() {
        let (mut store, a, _) = study_with_experts();
        let session = start(&mut store, Session::Lead, a).expect("expert A picks their profile");
        assert_eq!(
            at_open(&store).expect("the study reopens"),
            Session::Lead,
            "an unlocked study behaves as before: a relaunch is in lead mode"
        );
        assert_eq!(
            leave(&mut store, session, None).expect("no passphrase is needed"),
            Session::Lead,
            "leaving an unlocked study's session needs nothing"
        );
        assert!(
            matches!(
                start(&mut store, Session::Lead, 999),
                Err(SessionError::NotAnExpert(999))
            ),
            "a session is only for an expert of the study"
        );
        assert!(
            matches!(
                lock_profiles(&mut store, "short", 1, 1_000),
                Err(SessionError::WeakPassphrase(_))
            ),
            "a short lead passphrase must be refused"
        );
    }
}
