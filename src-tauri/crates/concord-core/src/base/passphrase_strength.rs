//! How hard a new passphrase is to guess. Every passphrase a person chooses — a study's
//! encryption and re-key, a rater package's, an expert's signing passphrase, the lead's
//! passphrase of a locked study — is measured with zxcvbn (Dropbox's estimator: dictionaries of
//! common passwords, names and words, keyboard patterns, repeats, sequences and dates, l33t
//! substitutions) and refused below [`MIN_SCORE`] of its 0–4 scale, or when shorter than
//! [`MIN_CHARS`]. Score 3 means about 10⁸ guesses or more ("safely unguessable" for an online
//! attack, and days of work offline against Concord's PBKDF2/SQLCipher key derivation); four or
//! five random words (diceware) or twelve random characters score 4. The refusal says why (the
//! estimator's warning) and what to do. Names the passphrase must not lean on (the expert's name,
//! the study's) are passed as `context` and count as known words.

/// The lowest zxcvbn score (0–4) a new passphrase may have.
pub const MIN_SCORE: u8 = 3;

/// The fewest characters a new passphrase may have, whatever its score.
pub const MIN_CHARS: usize = 8;

/// Words every guesser of a Concord passphrase would try first.
const APP_WORDS: [&str; 6] = [
    "concord",
    "study",
    "package",
    "expert",
    "lead",
    "passphrase",
];

/// Why a new passphrase was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.explain())]
pub struct WeakPassphrase {
    /// zxcvbn's score, 0–4 (0 also for a passphrase refused for its length).
    pub score: u8,
    /// Characters in the passphrase.
    pub chars: usize,
    /// The estimator's reason, if it gave one ("This is a top-10 common password").
    pub warning: Option<String>,
    /// How long an offline attacker at 10⁴ guesses per second would need, in words.
    pub offline: String,
}

impl WeakPassphrase {
    fn explain(&self) -> String {
        let why = if self.chars < MIN_CHARS {
            format!(
                "it has {} characters and a passphrase needs at least {MIN_CHARS}",
                self.chars
            )
        } else {
            format!(
                "it scores {} of 4 on the zxcvbn strength estimate and Concord needs at least {MIN_SCORE} (it could be guessed in {} offline)",
                self.score, self.offline
            )
        };
        // The estimator's warnings are sentences with their own full stop (or none): one stop.
        let warning = self
            .warning
            .as_deref()
            .map(|w| format!(" {}.", w.trim_end().trim_end_matches('.')))
            .unwrap_or_default();
        format!(
            "this passphrase is too easy to guess: {why}.{warning} Choose four or five random words (e.g. from a diceware list) or a long random string; avoid names, dates, repeats and keyboard runs"
        )
    }
}

/// Check a new passphrase: `Ok` when it is at least [`MIN_CHARS`] long and scores at least
/// [`MIN_SCORE`]; `context` holds names an attacker would try (the expert's, the study's).
pub fn check_new_passphrase(passphrase: &str, context: &[&str]) -> Result<(), WeakPassphrase> {
    let chars = passphrase.chars().count();
    let mut inputs: Vec<&str> = APP_WORDS.to_vec();
    inputs.extend(context.iter().copied().filter(|c| !c.is_empty()));
    let estimate = zxcvbn::zxcvbn(passphrase, &inputs);
    let score: u8 = estimate.score().into();
    if chars >= MIN_CHARS && score >= MIN_SCORE {
        return Ok(());
    }
    Err(WeakPassphrase {
        score,
        chars,
        warning: estimate
            .feedback()
            .and_then(|f| f.warning())
            .map(|w| w.to_string()),
        offline: estimate
            .crack_times()
            .offline_slow_hashing_1e4_per_second()
            .to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_repeated_and_short_passphrases_are_refused_with_a_reason() {
        for weak in [
            "aaaaaaaa",
            "password",
            "12345678",
            "qwertyuiop",
            "P@ssw0rd1",
            "short",
        ] {
            let refused = check_new_passphrase(weak, &[]).expect_err(weak);
            let message = refused.to_string();
            assert!(
                message.contains("passphrase") && message.contains("diceware"),
                "{weak:?} is refused with what to do instead: {message}"
            );
        }
        let short = check_new_passphrase("Xk#9q", &[]).expect_err("five characters");
        assert!(
            short.to_string().contains("at least 8"),
            "a short one is refused for its length: {short}"
        );
    }

    #[test]
    fn diceware_and_random_passphrases_are_accepted() {
        for strong in [
            "plinth orbit savvy gazebo tundra",
            "correct horse battery staple",
            "vR7#kq2Lm9!xTz",
            "8f3a9c1e7b2d4f60",
        ] {
            assert_eq!(
                check_new_passphrase(strong, &[]),
                Ok(()),
                "{strong:?} is strong enough"
            );
        }
    }

    #[test]
    fn a_passphrase_made_of_the_experts_name_is_refused() {
        assert!(
            check_new_passphrase("Wilhelmina Okonkwo", &[]).is_ok(),
            "an unusual name alone scores well without context"
        );
        assert!(
            check_new_passphrase("Wilhelmina Okonkwo", &["Wilhelmina Okonkwo"]).is_err(),
            "but not as the passphrase of Wilhelmina Okonkwo herself"
        );
    }
}
