//! Expert sign-off from the rating screen: the expert's signing state (their own signatures
//! only), setting or replacing their signing passphrase, and signing their assigned ratings
//! after the passphrase is checked. Signing changes no value, so the cached reports stay valid.
//! For `concord signoff`: every signature with its standing, and the same passphrase and signing
//! steps for an expert named on the command line.

use crate::app::open_study::OpenStudy;
use crate::workflow::signoff::{self, SignatureStatus, SignoffError, SignoffState};

/// The expert's signing state.
pub fn signoff_state(study: &OpenStudy, rater_id: i64) -> Result<SignoffState, SignoffError> {
    signoff::state(study.store(), rater_id)
}

/// Set (or replace, given the current one) the expert's signing passphrase; `salt_seed` draws
/// its salt.
pub fn set_signing_passphrase(
    study: &mut OpenStudy,
    rater_id: i64,
    current: Option<&str>,
    passphrase: &str,
    salt_seed: u64,
) -> Result<SignoffState, SignoffError> {
    signoff::set_passphrase(
        study.store_keeping_reports(),
        rater_id,
        current,
        passphrase,
        salt_seed,
        signoff::ITERATIONS,
    )?;
    signoff::state(study.store(), rater_id)
}

/// Sign the expert's assigned ratings after checking the passphrase.
pub fn sign_off(
    study: &mut OpenStudy,
    rater_id: i64,
    passphrase: &str,
) -> Result<SignoffState, SignoffError> {
    signoff::sign_assignment(study.store_keeping_reports(), rater_id, passphrase)?;
    signoff::state(study.store(), rater_id)
}

/// Every signature in the study with its standing (whether the ratings it covers still match).
pub fn signatures(study: &OpenStudy) -> Result<Vec<SignatureStatus>, SignoffError> {
    signoff::signatures(study.store())
}

/// Set (or replace, given the current one) the signing passphrase of the expert named `rater`;
/// `salt_seed` draws its salt.
pub fn set_passphrase_of(
    study: &mut OpenStudy,
    rater: &str,
    current: Option<&str>,
    passphrase: &str,
    salt_seed: u64,
) -> Result<(), SignoffError> {
    signoff::set_passphrase(
        study.store_mut(),
        rater,
        current,
        passphrase,
        salt_seed,
        signoff::ITERATIONS,
    )
}

/// Sign the assigned ratings of the expert named `rater` after checking the passphrase.
pub fn sign_assignment_of(
    study: &mut OpenStudy,
    rater: &str,
    passphrase: &str,
) -> Result<SignatureStatus, SignoffError> {
    signoff::sign_assignment(study.store_mut(), rater, passphrase)
}
