//! A new passphrase refused as too easy to guess is told why in sentences a person reads once:
//! the estimator's own warning (which ends with a full stop) is not followed by a second one, and
//! the advice that follows starts a sentence of its own ("…easy to guess. Choose…", never
//! "…easy to guess.. Choose…").

use concord_core::base::passphrase_strength::check_new_passphrase;

#[test]
fn a_refusal_with_the_estimators_warning_has_no_doubled_full_stop() {
    let mut with_warning = 0;
    for weak in [
        "qwertyuiop",
        "password1",
        "abcdefghij",
        "aaaaaaaaaa",
        "1234567890",
        "iloveyou22",
        "P@ssw0rd1",
    ] {
        let refused = check_new_passphrase(weak, &[]).expect_err(weak);
        let message = refused.to_string();
        assert!(
            !message.contains(".."),
            "{weak:?}: no doubled full stop in the refusal: {message}"
        );
        assert!(
            message.contains(". Choose four or five random words"),
            "{weak:?}: the advice starts its own sentence: {message}"
        );
        if refused.warning.is_some() {
            with_warning += 1;
        }
    }
    assert!(
        with_warning > 0,
        "some of these passphrases draw the estimator's warning, so the case is exercised"
    );
}
