//! Where a judge run sends its requests and where its key comes from: one rule for both front ends
//! (`concord judge run` and the window's judge commands), checked where it is acted on — the only
//! reader of a key variable and of the keyring ([`super::key`]), the settings check every new run
//! passes, and the only builder of an HTTP client ([`super::http::Endpoint::new`]) — so a page
//! cannot send the app's environment, or a key, anywhere the person did not choose and see.
//!
//! The rule itself — endpoint, key variable, keyring account — is [`super::rule`].
//!
//! [`destination`] applies the rule to a run's settings and key choice and says, for the person
//! to confirm before anything is sent, where the requests go and where the key comes from (never
//! the key itself).

use super::key::KeyChoice;
use super::rule::{check_base_url, check_key_variable, check_keyring_account, DestinationError};
use super::settings::RunSettings;
use super::JudgeError;
use crate::base::text::quoted;
use serde::Serialize;
use std::fmt;

/// Where a run's key comes from, as the confirmation shows it (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum KeyOrigin {
    /// No key is sent (a local server that needs none).
    None,
    /// The key typed on the judge screen, for this run; saved to the keyring account when asked.
    Typed { save_to_keyring: Option<String> },
    /// The OS keyring account; the environment variable when the keyring has no key.
    Keyring {
        account: String,
        fallback_env: Option<String>,
    },
    /// The environment variable the person named.
    Env { var: String },
}

impl fmt::Display for KeyOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyOrigin::None => f.write_str("no key"),
            KeyOrigin::Typed { save_to_keyring } => {
                f.write_str("the key typed in")?;
                if let Some(account) = save_to_keyring {
                    write!(f, ", saved to the OS keyring as {}", quoted(account))?;
                }
                Ok(())
            }
            KeyOrigin::Keyring {
                account,
                fallback_env,
            } => {
                write!(f, "key from the OS keyring (account {})", quoted(account))?;
                if let Some(var) = fallback_env {
                    write!(f, ", else from environment variable {var}")?;
                }
                Ok(())
            }
            KeyOrigin::Env { var } => write!(f, "key from environment variable {var}"),
        }
    }
}

impl KeyChoice {
    /// Where this choice takes the key from, with the rule applied to every source it names:
    /// a typed key first, else the keyring account (falling back to the variable), else the
    /// variable; blank names count as none.
    pub fn origin(&self) -> Result<KeyOrigin, DestinationError> {
        let named = |s: &Option<String>| {
            s.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let account = named(&self.keyring_account);
        let var = named(&self.env_var);
        if let Some(account) = &account {
            check_keyring_account(account)?;
        }
        if named(&self.api_key).is_some() {
            return Ok(KeyOrigin::Typed {
                save_to_keyring: account.filter(|_| self.save_to_keyring),
            });
        }
        if let Some(var) = &var {
            check_key_variable(var)?;
        }
        Ok(match (account, var) {
            (Some(account), fallback_env) => KeyOrigin::Keyring {
                account,
                fallback_env,
            },
            (None, Some(var)) => KeyOrigin::Env { var },
            (None, None) => KeyOrigin::None,
        })
    }
}

/// Where a run sends its requests and where its key comes from, shown before it starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Destination {
    /// The base URL, as the HTTP client reads it.
    pub endpoint: String,
    /// The endpoint is this machine.
    pub loopback: bool,
    pub key: KeyOrigin,
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "endpoint {}; {}", self.endpoint, self.key)
    }
}

/// The destination of a run with `settings` and `key`, or why the rule refuses it (the settings
/// are checked whole, as a new run checks them).
pub fn destination(settings: &RunSettings, key: &KeyChoice) -> Result<Destination, JudgeError> {
    settings.validate()?;
    let url = check_base_url(&settings.base_url)?;
    Ok(Destination {
        endpoint: url.shown,
        loopback: url.loopback,
        key: key.origin()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::error_code::Coded as _;
    use crate::judge::rule::*;

    #[test]
    fn key_like_variables_pass() {
        for name in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "HF_TOKEN",
            "HUGGING_FACE_HUB_TOKEN",
            "GEMINI_API_KEY",
            "OPENROUTER_APIKEY",
            "MY_JUDGE_KEY_2",
            "KEY",
        ] {
            assert_eq!(
                check_key_variable(name),
                Ok(()),
                "{name} is named like an API key and may hold one"
            );
        }
    }

    #[test]
    fn other_variables_are_refused_with_their_name() {
        for name in [
            "HOME",
            "PATH",
            "USER",
            "DISPLAY",
            "CONCORD_PASSPHRASE",
            "CONCORD_PACKAGE_PASSPHRASE",
            "CONCORD_SIGNING_PASSPHRASE",
            "CONCORD_LEAD_PASSPHRASE",
            "CONCORD_API_KEY",
            "CONCORD_STUDY",
            "AWS_SECRET_ACCESS_KEY",
            "CLIENT_SECRET_KEY",
            "SSH_PRIVATE_KEY",
            "AWS_SESSION_TOKEN",
            "DB_PASSWORD_KEY",
            "LEAD_PASSPHRASE_KEY",
            "openai_api_key",
            "OPENAI-API-KEY",
            "OPENAI_API_KEY ",
            "_API_KEY",
            "1_API_KEY",
            "KEYBOARD_LAYOUT",
            "MONKEY",
            "API_KEY\u{202E}",
            "",
        ] {
            let refused = check_key_variable(name)
                .expect_err("a variable not named like an API key must not be read as one");
            assert_eq!(
                refused.code(),
                "judge_key_source",
                "the refusal of {name:?} has the key-source code"
            );
            assert!(
                refused
                    .to_string()
                    .contains(&crate::base::text::visible(name)),
                "the message names the variable: {refused}"
            );
        }
        let long = format!("{}_KEY", "A".repeat(MAX_VARIABLE_BYTES));
        assert!(
            check_key_variable(&long).is_err(),
            "a name over {MAX_VARIABLE_BYTES} bytes is refused"
        );
    }

    #[test]
    fn study_passphrase_accounts_are_not_key_accounts() {
        assert_eq!(
            check_keyring_account("openai"),
            Ok(()),
            "an account of the person's choosing"
        );
        let refused = check_keyring_account("study:/home/ana/trial.concord")
            .expect_err("a study's passphrase account is no key source");
        assert_eq!(
            refused.code(),
            "judge_key_source",
            "with the key-source code"
        );
        assert!(
            refused
                .to_string()
                .contains("study:/home/ana/trial.concord"),
            "the message names the account: {refused}"
        );
        assert!(
            check_keyring_account("  study:x").is_err(),
            "blanks before the prefix change nothing"
        );
    }

    #[test]
    fn endpoints_are_https_or_this_machine() {
        for (url, shown, loopback) in [
            (
                "https://api.openai.com/v1",
                "https://api.openai.com/v1",
                false,
            ),
            (
                "HTTPS://API.Anthropic.com/v1/",
                "https://api.anthropic.com/v1",
                false,
            ),
            ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1", true),
            ("http://127.1.2.3/v1", "http://127.1.2.3/v1", true),
            (
                "HTTP://LOCALHOST:11434/v1",
                "http://localhost:11434/v1",
                true,
            ),
            ("http://[::1]:8000/v1", "http://[::1]:8000/v1", true),
            ("http://0x7f.1/v1", "http://127.0.0.1/v1", true),
            (
                "https://127.0.0.1.evil.com/v1",
                "https://127.0.0.1.evil.com/v1",
                false,
            ),
        ] {
            let checked = check_base_url(url)
                .unwrap_or_else(|e| panic!("{url} must be allowed (https or loopback): {e}"));
            assert_eq!(
                checked.shown, shown,
                "the endpoint is shown as the client reads it"
            );
            assert_eq!(checked.loopback, loopback, "{url}: loopback or not");
        }
    }

    #[test]
    fn remote_plain_http_and_disguised_hosts_are_refused() {
        for url in [
            "http://api.openai.com/v1",
            "http://127.0.0.1.evil.com/v1",
            "http://localhost.example/v1",
            "http://localhost.evil.com:11434/v1",
            "http://10.0.0.5:8000/v1",
            "http://[::ffff:8.8.8.8]/v1",
            "http://0.0.0.0:8080/v1",
            "https://user@api.openai.com/v1",
            "https://api.openai.com:pw@evil.com/v1",
            "http://user:pw@127.0.0.1/v1",
            "https://api.openai.com/v1?redirect=http://evil",
            "https://api.openai.com/v1#x",
            "ftp://127.0.0.1/v1",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "api.openai.com/v1",
            "",
        ] {
            let refused = check_base_url(url).expect_err("this URL must not receive a key");
            assert_eq!(
                refused.code(),
                "judge_endpoint",
                "the refusal of {url:?} has the endpoint code"
            );
            assert!(
                refused.to_string().contains(url.trim()),
                "the message names the URL: {refused}"
            );
        }
    }

    #[test]
    fn a_choice_names_its_origin_and_is_checked_whole() {
        let choice = |env: Option<&str>, account: Option<&str>, typed: Option<&str>| KeyChoice {
            env_var: env.map(str::to_string),
            keyring_account: account.map(str::to_string),
            api_key: typed.map(str::to_string),
            save_to_keyring: true,
        };
        assert_eq!(
            choice(Some(" OPENAI_API_KEY "), None, None).origin(),
            Ok(KeyOrigin::Env {
                var: "OPENAI_API_KEY".into()
            }),
            "a trimmed variable name"
        );
        assert_eq!(
            choice(Some(""), Some(" "), None).origin(),
            Ok(KeyOrigin::None),
            "blank names are no source"
        );
        assert_eq!(
            choice(Some("HF_TOKEN"), Some("hf"), None).origin(),
            Ok(KeyOrigin::Keyring {
                account: "hf".into(),
                fallback_env: Some("HF_TOKEN".into())
            }),
            "the keyring first, the variable as its fallback"
        );
        assert!(
            choice(Some("HOME"), Some("hf"), None).origin().is_err(),
            "a refused fallback variable refuses the choice, whatever the keyring holds"
        );
        assert_eq!(
            choice(Some("HOME"), Some("hf"), Some("sk-typed")).origin(),
            Ok(KeyOrigin::Typed {
                save_to_keyring: Some("hf".into())
            }),
            "a typed key reads no variable, so the variable's name does not matter"
        );
        assert!(
            choice(None, Some("study:/x.concord"), Some("sk-typed"))
                .origin()
                .is_err(),
            "a typed key is never saved over a study's passphrase"
        );
        let text = KeyOrigin::Env {
            var: "OPENAI_API_KEY".into(),
        }
        .to_string();
        assert_eq!(
            text, "key from environment variable OPENAI_API_KEY",
            "the CLI's wording"
        );
    }

    #[test]
    fn a_destination_checks_the_settings_too() {
        use super::super::settings::ProviderKind;
        let settings = RunSettings::new(
            ProviderKind::OpenaiCompatible,
            "http://127.0.0.1:9/v1/",
            "m",
        );
        let dest = destination(
            &settings,
            &KeyChoice {
                env_var: Some("OPENAI_API_KEY".into()),
                ..KeyChoice::default()
            },
        )
        .expect("a loopback endpoint with a key variable");
        assert_eq!(
            dest.to_string(),
            "endpoint http://127.0.0.1:9/v1; key from environment variable OPENAI_API_KEY",
            "what the CLI prints before the first call"
        );
        let remote = RunSettings::new(
            ProviderKind::OpenaiCompatible,
            "http://judge.example/v1",
            "m",
        );
        let refused = destination(&remote, &KeyChoice::default())
            .expect_err("plain http to another host is refused");
        assert_eq!(refused.code(), "judge_endpoint", "with the endpoint code");
    }
}
