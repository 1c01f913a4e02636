//! Rater sessions: the session a study opens in, what the window's session is, starting one when
//! an expert picks their profile, leaving it for lead mode (with the lead passphrase in a locked
//! study), and locking or unlocking a study's profiles behind that passphrase. The writes drop
//! the cached reports, as the front ends always did.

use crate::app::open_study::OpenStudy;
use crate::app::study_security::UnlockAttempts;
use crate::workflow::rater_session::{self, Session, SessionError, SessionInfo};

/// The session a study opens in (its recorded one, the picker, or lead mode).
pub fn at_open(study: &OpenStudy) -> Result<Session, SessionError> {
    rater_session::at_open(study.store())
}

/// What the window's `session` is, as the page shows it.
pub fn info(study: &OpenStudy, session: Session) -> Result<SessionInfo, SessionError> {
    rater_session::info(study.store(), session)
}

/// Start the session of expert `rater_id` from `current`.
pub fn start(
    study: &mut OpenStudy,
    current: Session,
    rater_id: i64,
) -> Result<Session, SessionError> {
    rater_session::start(study.store_mut(), current, rater_id)
}

/// Leave `current` for lead mode (the lead passphrase in a locked study). Wrong lead
/// passphrases back off as the unlock screen does (`attempts`, timed by the study's clock): after
/// three in a row the next one waits, and is not tried, until the wait is over.
pub fn leave(
    study: &mut OpenStudy,
    current: Session,
    passphrase: Option<&str>,
    attempts: &mut UnlockAttempts,
) -> Result<Session, SessionError> {
    let now = study.store().now_ms();
    if passphrase.is_some() {
        let seconds = attempts.seconds_to_wait(now);
        if seconds > 0 {
            return Err(SessionError::TryAgainLater {
                failures: attempts.failures(),
                seconds,
            });
        }
    }
    match rater_session::leave(study.store_mut(), current, passphrase) {
        Err(SessionError::WrongLeadPassphrase) => {
            attempts.failed(now);
            Err(SessionError::WrongLeadPassphrase)
        }
        Ok(session) => {
            if passphrase.is_some() {
                attempts.succeeded();
            }
            Ok(session)
        }
        Err(e) => Err(e),
    }
}

/// Restrict the rating screen to the existing experts behind the lead `passphrase`.
pub fn lock_profiles(
    study: &mut OpenStudy,
    passphrase: &str,
    salt_seed: u64,
) -> Result<(), SessionError> {
    rater_session::lock_profiles(
        study.store_mut(),
        passphrase,
        salt_seed,
        rater_session::ITERATIONS,
    )
}

/// Drop the profile lock and the lead passphrase.
pub fn unlock_profiles(study: &mut OpenStudy) -> Result<(), SessionError> {
    rater_session::unlock_profiles(study.store_mut())
}
