//! API keys: read from the OS keyring (service `concord`, an account the user names) or from an
//! environment variable the user names, held in memory only, never printed (`Debug` shows
//! `<redacted>`) and never written to the study, its exports or logs. When no keyring is
//! available (a Linux box without a secret service, a container) and an environment variable was
//! also named, the variable is used and the reason is reported so the user knows why.

use std::fmt;

/// The keyring service under which Concord keeps judge keys.
pub const KEYRING_SERVICE: &str = "concord";

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
    #[error("no key stored in the keyring for account {account:?}")]
    NoEntry { account: String },
    #[error("the OS keyring is not available ({detail}); name an environment variable with --api-key-env instead")]
    NoKeyring { detail: String },
    #[error("the OS keyring refused: {0}")]
    Keyring(String),
}

/// A key found, and a note for the user when a fallback was taken.
#[derive(Debug, Clone)]
pub struct ResolvedKey {
    pub key: Option<ApiKey>,
    pub note: Option<String>,
}

fn read_env(var: &str) -> Result<ApiKey, KeyError> {
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
    let entry =
        keyring::Entry::new(KEYRING_SERVICE, account).map_err(|e| keyring_error(account, e))?;
    entry
        .get_password()
        .map(ApiKey::new)
        .map_err(|e| keyring_error(account, e))
}

/// Store a key in the OS keyring under `account`.
pub fn save_to_keyring(account: &str, key: &ApiKey) -> Result<(), KeyError> {
    let entry =
        keyring::Entry::new(KEYRING_SERVICE, account).map_err(|e| keyring_error(account, e))?;
    entry
        .set_password(key.expose())
        .map_err(|e| keyring_error(account, e))
}

/// Find the key: the keyring first when an account is named, then the environment variable.
/// No source named means no key (a local server that needs none).
pub fn resolve(source: &KeySource) -> Result<ResolvedKey, KeyError> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        std::env::set_var("CONCORD_TEST_KEY_SOURCE", "sk-abc");
        let r = resolve(&KeySource {
            keyring_account: None,
            env_var: Some("CONCORD_TEST_KEY_SOURCE".into()),
        })
        .unwrap();
        assert_eq!(
            r.key.unwrap().expose(),
            "sk-abc",
            "the variable's value is the key"
        );
        let missing = resolve(&KeySource {
            keyring_account: None,
            env_var: Some("CONCORD_TEST_KEY_UNSET_9".into()),
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
