//! How the window keeps an encrypted study: unlocking it with its passphrase (optionally
//! remembered in the OS keyring, under the study's path, only when the person asks), the idle lock
//! setting (minutes without input before the window hides the study again, kept in the study,
//! default 15), and encrypting or re-keying the study the window has open — the caller closes it,
//! the conversion runs, and the study is opened again: with the new passphrase when the
//! conversion worked, exactly as before when it did not.

use crate::app::open_study::OpenStudy;
use crate::base::clock::{Clock, Millis};
use crate::base::error_code::ErrorCode;
use crate::judge::key::KEYRING_SERVICE;
use crate::judge::rule::STUDY_ACCOUNT_PREFIX;
use crate::store::{encrypt_study, rekey_study, Passphrase, Store, StoreError, StoreResult};
use std::path::Path;
use std::sync::Arc;

/// `study_meta` key of the idle-lock minutes.
pub const IDLE_LOCK_META: &str = "idle_lock_minutes";
/// Minutes without input before an encrypted study is locked, unless the study says otherwise.
pub const DEFAULT_IDLE_LOCK_MINUTES: u32 = 15;
/// The longest idle lock a study may set (a working day).
pub const MAX_IDLE_LOCK_MINUTES: u32 = 480;

/// Wrong passphrases the unlock screen takes before it makes the next attempt wait.
pub const FREE_UNLOCK_ATTEMPTS: u32 = 3;
/// The longest wait between unlock attempts, in seconds.
pub const MAX_UNLOCK_WAIT_SECONDS: u64 = 300;

/// How long the unlock screen makes the next attempt wait after `failures` wrong passphrases in
/// a row: nothing for the first [`FREE_UNLOCK_ATTEMPTS`], then 2 s, doubling with every further
/// failure (2, 4, 8, … s) up to [`MAX_UNLOCK_WAIT_SECONDS`]. A person who mistypes waits seconds;
/// guessing through the window is held to about a dozen tries an hour.
pub fn unlock_wait_seconds(failures: u32) -> u64 {
    if failures < FREE_UNLOCK_ATTEMPTS {
        return 0;
    }
    let doublings = (failures - FREE_UNLOCK_ATTEMPTS).min(16);
    (2u64 << doublings).min(MAX_UNLOCK_WAIT_SECONDS)
}

/// The unlock screen's count of wrong passphrases in a row and when the last one was given; the
/// window keeps one for the life of the process (switching studies does not reset it), and
/// [`unlock`] consults it before trying a passphrase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnlockAttempts {
    failures: u32,
    last_failure_ms: Millis,
}

impl UnlockAttempts {
    /// Wrong passphrases in a row so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Whole seconds (rounded up) before the next attempt may be made at `now_ms`; 0 when it may
    /// be made now.
    pub fn seconds_to_wait(&self, now_ms: Millis) -> u64 {
        let wait_ms = unlock_wait_seconds(self.failures) as Millis * 1000;
        let ready = self.last_failure_ms.saturating_add(wait_ms);
        if now_ms >= ready {
            0
        } else {
            ((ready - now_ms) as u64).div_ceil(1000)
        }
    }

    /// A wrong passphrase was given at `now_ms`.
    pub fn failed(&mut self, now_ms: Millis) {
        self.failures = self.failures.saturating_add(1);
        self.last_failure_ms = now_ms;
    }

    /// The study opened: the count starts again.
    pub fn succeeded(&mut self) {
        *self = UnlockAttempts::default();
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SecurityError {
    #[error(
        "{failures} wrong passphrases in a row: try again in {seconds} s. The study was not opened"
    )]
    TryAgainLater { failures: u32, seconds: u64 },
    #[error("the idle lock must be between 1 and {MAX_IDLE_LOCK_MINUTES} minutes (got {0})")]
    IdleMinutes(u32),
    #[error("the passphrase was not remembered: the OS keyring is not available ({0}); type it each time")]
    Keyring(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl crate::base::error_code::Coded for SecurityError {
    fn code(&self) -> ErrorCode {
        match self {
            SecurityError::TryAgainLater { .. } => ErrorCode::WrongPassphrase,
            SecurityError::IdleMinutes(_) => ErrorCode::Invalid,
            SecurityError::Keyring(_) => ErrorCode::Keyring,
            SecurityError::Store(e) => e.code(),
        }
    }
}

/// Minutes without input before the window locks this study.
pub fn idle_lock_minutes(store: &Store) -> StoreResult<u32> {
    Ok(store
        .meta(IDLE_LOCK_META)?
        .and_then(|v| v.parse().ok())
        .filter(|m| (1..=MAX_IDLE_LOCK_MINUTES).contains(m))
        .unwrap_or(DEFAULT_IDLE_LOCK_MINUTES))
}

/// Set the idle-lock minutes of this study.
pub fn set_idle_lock_minutes(store: &mut Store, minutes: u32) -> Result<u32, SecurityError> {
    if !(1..=MAX_IDLE_LOCK_MINUTES).contains(&minutes) {
        return Err(SecurityError::IdleMinutes(minutes));
    }
    store.write(|tx| tx.set_meta(IDLE_LOCK_META, &minutes.to_string()))?;
    Ok(minutes)
}

/// The keyring account of a study: its absolute path.
fn account(path: &Path) -> String {
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    format!("{STUDY_ACCOUNT_PREFIX}{}", absolute.display())
}

/// The passphrase remembered in the keyring for the study at `path`, if any (a missing keyring
/// is the same as nothing remembered).
pub fn remembered_passphrase(path: &Path) -> Option<Passphrase> {
    let entry = keyring::Entry::new(KEYRING_SERVICE, &account(path)).ok()?;
    let text = entry.get_password().ok()?;
    Passphrase::new(text).ok()
}

/// Remember `passphrase` in the keyring for the study at `path`.
pub fn remember_passphrase(path: &Path, passphrase: &Passphrase) -> Result<(), SecurityError> {
    keyring::Entry::new(KEYRING_SERVICE, &account(path))
        .and_then(|e| e.set_password(passphrase.expose()))
        .map_err(|e| SecurityError::Keyring(e.to_string()))
}

/// Open the encrypted study at `path` with `passphrase`; when `remember` is set, keep the
/// passphrase in the keyring afterwards (a keyring that refuses is reported in the note, the
/// study still opens). After repeated wrong passphrases (`attempts`, timed by `clock`) the
/// attempt is refused without trying the passphrase until [`unlock_wait_seconds`] have passed.
pub fn unlock(
    path: &Path,
    clock: Arc<dyn Clock>,
    passphrase: &Passphrase,
    remember: bool,
    attempts: &mut UnlockAttempts,
) -> Result<(Store, Option<String>), SecurityError> {
    let now = clock.now_ms();
    let seconds = attempts.seconds_to_wait(now);
    if seconds > 0 {
        return Err(SecurityError::TryAgainLater {
            failures: attempts.failures(),
            seconds,
        });
    }
    let store = match Store::open_with(path, clock, Some(passphrase)) {
        Ok(store) => store,
        Err(e) => {
            if matches!(e, StoreError::WrongPassphrase { .. }) {
                attempts.failed(now);
            }
            return Err(e.into());
        }
    };
    attempts.succeeded();
    let note = if remember {
        remember_passphrase(path, passphrase)
            .err()
            .map(|e| e.to_string())
    } else {
        None
    };
    Ok((store, note))
}

/// What to do with the open study's encryption.
#[derive(Debug, Clone)]
pub enum Conversion {
    /// Encrypt a plain study with this passphrase.
    Encrypt { new: Passphrase },
    /// Change the passphrase of an encrypted study.
    Rekey {
        current: Passphrase,
        new: Passphrase,
    },
}

/// Convert the study at `path` (which the caller has closed; `before` is the passphrase it was
/// open with) and open it again. Returns the reopened study — with the new passphrase, or as
/// before when the conversion failed — and the conversion's outcome with a note (a keyring that
/// would not remember).
pub fn convert_and_reopen(
    path: &Path,
    clock: Arc<dyn Clock>,
    before: Option<&Passphrase>,
    conversion: &Conversion,
    remember: bool,
) -> (StoreResult<Store>, Result<Option<String>, SecurityError>) {
    let (converted, new) = match conversion {
        Conversion::Encrypt { new } => (encrypt_study(path, new), new),
        Conversion::Rekey { current, new } => (rekey_study(path, current, new), new),
    };
    if let Err(e) = converted {
        return (Store::open_with(path, clock, before), Err(e.into()));
    }
    let reopened = Store::open_with(path, clock, Some(new));
    // Without "remember", the keyring is not touched at all: a passphrase remembered earlier no
    // longer opens the study and the window then asks for the new one.
    let note = if remember {
        remember_passphrase(path, new).err().map(|e| e.to_string())
    } else {
        None
    };
    (reopened, Ok(note))
}

/// [`idle_lock_minutes`] of the open study.
pub fn idle_lock_minutes_of(study: &OpenStudy) -> StoreResult<u32> {
    idle_lock_minutes(study.store())
}

/// [`set_idle_lock_minutes`] on the open study.
pub fn set_idle_lock_minutes_of(study: &mut OpenStudy, minutes: u32) -> Result<u32, SecurityError> {
    set_idle_lock_minutes(study.store_mut(), minutes)
}

/// `concord encrypt`: encrypt the plain study at `path` with `passphrase`.
pub fn encrypt(path: &Path, passphrase: &Passphrase) -> StoreResult<()> {
    encrypt_study(path, passphrase)
}

/// `concord decrypt`: write the encrypted study at `path` back as a plain one.
pub fn decrypt(path: &Path, passphrase: &Passphrase) -> StoreResult<()> {
    crate::store::decrypt_study(path, passphrase)
}

/// `concord rekey`: re-encrypt the study at `path` under `new`.
pub fn rekey(path: &Path, current: &Passphrase, new: &Passphrase) -> StoreResult<()> {
    rekey_study(path, current, new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::SteppingClock;

    #[test]
    fn converting_the_open_study_reopens_it_with_the_new_passphrase_or_as_before() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s.concord");
        let clock = || -> Arc<dyn Clock> { Arc::new(SteppingClock::new(1_700_000_000_000, 1)) };
        let mut store = Store::create(&path, clock()).expect("created");
        assert_eq!(
            idle_lock_minutes(&store).unwrap(),
            DEFAULT_IDLE_LOCK_MINUTES,
            "a study locks after 15 idle minutes unless it says otherwise"
        );
        set_idle_lock_minutes(&mut store, 5).expect("set");
        assert!(
            matches!(
                set_idle_lock_minutes(&mut store, 0),
                Err(SecurityError::IdleMinutes(0))
            ),
            "zero minutes is refused"
        );
        drop(store);
        let new = Passphrase::new("first passphrase").unwrap();
        let (reopened, outcome) = convert_and_reopen(
            &path,
            clock(),
            None,
            &Conversion::Encrypt { new: new.clone() },
            false,
        );
        assert!(outcome.is_ok(), "encrypting worked: {outcome:?}");
        let store = reopened.expect("reopened with the new passphrase");
        assert!(
            store.is_encrypted(),
            "the open study is now the encrypted one"
        );
        assert_eq!(
            idle_lock_minutes(&store).unwrap(),
            5,
            "the setting travelled with the study"
        );
        drop(store);
        let (reopened, outcome) = convert_and_reopen(
            &path,
            clock(),
            Some(&new),
            &Conversion::Rekey {
                current: Passphrase::new("wrong passphrase").unwrap(),
                new: Passphrase::new("second passphrase").unwrap(),
            },
            false,
        );
        assert!(
            matches!(
                outcome,
                Err(SecurityError::Store(StoreError::WrongPassphrase { .. }))
            ),
            "a wrong current passphrase is refused: {outcome:?}"
        );
        assert!(
            reopened.expect("reopened as before").is_encrypted(),
            "after a refused change the study is open again with its old passphrase"
        );
        let (_store, note) = unlock(&path, clock(), &new, false, &mut UnlockAttempts::default())
            .expect("unlocks with the passphrase it has");
        assert_eq!(note, None, "nothing to report when not asked to remember");
    }
}
