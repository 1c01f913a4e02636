//! API keys: read from the OS keyring (service `concord`, an account the user names) or from an
//! environment variable the user names — only names the rule of [`mod@super::destination`] allows (a
//! variable named like an API key, never Concord's own or a password's; never a study's
//! passphrase account), checked here, where the only reads happen — held in memory only, never printed (`Debug` shows
//! `<redacted>`) and never written to the study, its exports or logs. When no keyring is
//! available (a Linux box without a secret service, a container) and an environment variable was
//! also named, the variable is used and the reason is reported so the user knows why.

use super::rule::{check_key_variable, check_keyring_account, DestinationError};
use crate::base::error_code::ErrorCode;
use crate::base::text::quoted;
use std::fmt;

/// The keyring service under which Concord keeps judge keys (and study passphrases and lead keys).
pub use crate::store::lead_key::KEYRING_SERVICE;

/// A secret key. Its text is only reachable through [`ApiKey::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(secret: impl Into<String>) -> ApiKey {
        ApiKey(secret.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Where to find a key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeySource {
    /// A keyring account under [`KEYRING_SERVICE`].
    pub keyring_account: Option<String>,
    /// An environment variable holding the key.
    pub env_var: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("the environment variable {0} is not set (or empty)")]
    EnvMissing(String),
    #[error("no key stored in the keyring for account {account_q}", account_q = quoted(&.account))]
    NoEntry { account: String },
    #[error("the OS keyring is not available ({detail}); name an environment variable with --api-key-env instead")]
    NoKeyring { detail: String },
    #[error("the OS keyring refused: {0}")]
    Keyring(String),
    #[error(transparent)]
    Refused(#[from] DestinationError),
}

impl crate::base::error_code::Coded for KeyError {
    /// `judge_key_source` when the rule refuses the source, else `judge_key`.
    fn code(&self) -> ErrorCode {
        match self {
            KeyError::Refused(e) => e.code(),
            _ => ErrorCode::JudgeKey,
        }
    }
}

/// A key found, and a note for the user when a fallback was taken.
#[derive(Debug, Clone)]
pub struct ResolvedKey {
    pub key: Option<ApiKey>,
    pub note: Option<String>,
}

fn read_env(var: &str) -> Result<ApiKey, KeyError> {
    check_key_variable(var)?;
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Ok(ApiKey::new(v.trim())),
        _ => Err(KeyError::EnvMissing(var.to_string())),
    }
}

fn keyring_error(account: &str, e: keyring::Error) -> KeyError {
    match e {
        keyring::Error::NoEntry => KeyError::NoEntry {
            account: account.to_string(),
        },
        keyring::Error::PlatformFailure(d) | keyring::Error::NoStorageAccess(d) => {
            KeyError::NoKeyring {
                detail: d.to_string(),
            }
        }
        other => KeyError::Keyring(other.to_string()),
    }
}

fn read_keyring(account: &str) -> Result<ApiKey, KeyError> {
    check_keyring_account(account)?;
    let entry =
        keyring::Entry::new(KEYRING_SERVICE, account).map_err(|e| keyring_error(account, e))?;
    entry
        .get_password()
        .map(ApiKey::new)
        .map_err(|e| keyring_error(account, e))
}

/// Store a key in the OS keyring under `account`.
pub fn save_to_keyring(account: &str, key: &ApiKey) -> Result<(), KeyError> {
    check_keyring_account(account)?;
    let entry =
        keyring::Entry::new(KEYRING_SERVICE, account).map_err(|e| keyring_error(account, e))?;
    entry
        .set_password(key.expose())
        .map_err(|e| keyring_error(account, e))
}

/// Find the key: the keyring first when an account is named, then the environment variable.
/// No source named means no key (a local server that needs none). Both names are checked before
/// either is read.
pub fn resolve(source: &KeySource) -> Result<ResolvedKey, KeyError> {
    if let Some(account) = &source.keyring_account {
        check_keyring_account(account)?;
    }
    if let Some(var) = &source.env_var {
        check_key_variable(var)?;
    }
    if let Some(account) = &source.keyring_account {
        match read_keyring(account) {
            Ok(key) => {
                return Ok(ResolvedKey {
                    key: Some(key),
                    note: None,
                })
            }
            Err(e) => {
                let Some(var) = &source.env_var else {
                    return Err(e);
                };
                let key = read_env(var)?;
                return Ok(ResolvedKey {
                    key: Some(key),
                    note: Some(format!("{e}; using the key in ${var} instead")),
                });
            }
        }
    }
    match &source.env_var {
        Some(var) => Ok(ResolvedKey {
            key: Some(read_env(var)?),
            note: None,
        }),
        None => Ok(ResolvedKey {
            key: None,
            note: None,
        }),
    }
}

/// Where a run's key comes from, as the window and the CLI name it: a key typed in (used for
/// this run only and, when asked and a keyring account is named, saved to the OS keyring), else
/// the keyring account or the environment variable named; blank names count as none. No
/// `Debug`: a typed key must not reach a log.
#[derive(Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KeyChoice {
    pub env_var: Option<String>,
    pub keyring_account: Option<String>,
    pub api_key: Option<String>,
    pub save_to_keyring: bool,
}

/// The key for a run from a [`KeyChoice`]: a typed key first (saved to the keyring when asked;
/// a keyring that refuses becomes a note), else [`resolve`]; none when nothing is named (a
/// local model). The rule ([`KeyChoice::origin`]) is applied to every name first.
pub fn resolve_choice(choice: &KeyChoice) -> Result<ResolvedKey, KeyError> {
    choice.origin()?;
    let named = |s: &Option<String>| {
        s.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let account = named(&choice.keyring_account);
    if let Some(typed) = named(&choice.api_key) {
        let key = ApiKey::new(typed);
        let note = match (&account, choice.save_to_keyring) {
            (Some(account), true) => match save_to_keyring(account, &key) {
                Ok(()) => None,
                Err(e) => Some(format!("the key was used for this run but not saved: {e}")),
            },
            (None, true) => {
                Some("name a keyring account to save the key; it was used for this run only".into())
            }
            _ => None,
        };
        return Ok(ResolvedKey {
            key: Some(key),
            note,
        });
    }
    resolve(&KeySource {
        keyring_account: account,
        env_var: named(&choice.env_var),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::error_code::Coded as _;

    #[test]
    fn a_typed_key_wins_and_nothing_named_means_no_key() {
        let typed = resolve_choice(&KeyChoice {
            api_key: Some("  sk-typed ".into()),
            env_var: Some("JUDGE_TEST_UNSET_KEY".into()),
            ..KeyChoice::default()
        })
        .expect("a typed key needs no other source");
        assert_eq!(
            typed.key.map(|k| k.expose().to_string()).as_deref(),
            Some("sk-typed"),
            "the typed key, trimmed, is the run's key"
        );
        assert!(typed.note.is_none(), "nothing to report: {:?}", typed.note);
        let blank = resolve_choice(&KeyChoice {
            env_var: Some("   ".into()),
            ..KeyChoice::default()
        })
        .expect("a blank source is no source");
        assert!(blank.key.is_none(), "a local model needs no key");
        let missing = resolve_choice(&KeyChoice {
            env_var: Some("JUDGE_TEST_UNSET_KEY".into()),
            ..KeyChoice::default()
        });
        assert!(
            matches!(missing, Err(KeyError::EnvMissing(ref v)) if v == "JUDGE_TEST_UNSET_KEY"),
            "an unset variable is a key error naming it"
        );
        let unsaved = resolve_choice(&KeyChoice {
            api_key: Some("sk-typed".into()),
            save_to_keyring: true,
            ..KeyChoice::default()
        })
        .expect("saving without an account still runs");
        assert!(
            unsaved.note.is_some_and(|n| n.contains("keyring account")),
            "asking to save without an account is explained"
        );
    }

    #[test]
    fn the_readers_themselves_refuse_sources_outside_the_rule() {
        // HOME is set in every test environment: the refusal is the rule's, not a missing value.
        assert!(std::env::var("HOME").is_ok(), "the test needs HOME set");
        let home = resolve(&KeySource {
            keyring_account: None,
            env_var: Some("HOME".into()),
        })
        .expect_err("HOME is never read as a key");
        assert_eq!(
            home.code(),
            "judge_key_source",
            "refused by the rule: {home}"
        );
        let fallback = resolve(&KeySource {
            keyring_account: Some("openai".into()),
            env_var: Some("CONCORD_PASSPHRASE".into()),
        })
        .expect_err("a refused fallback is refused before the keyring is asked");
        assert_eq!(fallback.code(), "judge_key_source", "{fallback}");
        for account in ["study:/home/ana/trial.concord", " study:x"] {
            let read = resolve(&KeySource {
                keyring_account: Some(account.into()),
                env_var: None,
            })
            .expect_err("a study's passphrase account is never read as a key");
            assert_eq!(read.code(), "judge_key_source", "{read}");
            let saved = save_to_keyring(account, &ApiKey::new("sk-x"))
                .expect_err("nor overwritten with one");
            assert_eq!(saved.code(), "judge_key_source", "{saved}");
        }
    }

    #[test]
    fn debug_never_shows_the_key() {
        let k = ApiKey::new("sk-very-secret");
        assert!(
            !format!("{k:?}").contains("very-secret"),
            "a key printed in a log must be redacted"
        );
    }

    #[test]
    fn env_source_and_missing_variable() {
        std::env::set_var("JUDGE_TEST_SOURCE_KEY", "sk-abc");
        let r = resolve(&KeySource {
            keyring_account: None,
            env_var: Some("JUDGE_TEST_SOURCE_KEY".into()),
        })
        .unwrap();
        assert_eq!(
            r.key.unwrap().expose(),
            "sk-abc",
            "the variable's value is the key"
        );
        let missing = resolve(&KeySource {
            keyring_account: None,
            env_var: Some("JUDGE_TEST_UNSET_9_KEY".into()),
        });
        assert!(
            matches!(missing, Err(KeyError::EnvMissing(_))),
            "an unset variable is an error naming it"
        );
        assert!(
            resolve(&KeySource::default()).unwrap().key.is_none(),
            "no source means no key"
        );
    }
}
