//! The destination rule's checks, each a pure function of what the person typed: an endpoint a
//! run may send to, a variable a key may be read from, a keyring account a key may come from.
//! [`super::destination()`] applies them to a run's settings and key choice; the key readers
//! ([`super::key`]) and the settings check ([`super::settings`]) call them where they act.
//!
//! - **Endpoint.** `https://`, or `http://` only when the host is this machine (`localhost`,
//!   127.0.0.0/8, `[::1]`), read the way the HTTP client reads it (so `http://127.0.0.1.evil.com`
//!   and `http://localhost.example` are remote hosts, and `http://0x7f.1` is 127.0.0.1). No user
//!   name or password, query or fragment. The client follows no redirect, and a batch result is
//!   fetched only from the endpoint's own origin.
//! - **Key variable.** A name the person typed that looks like an API-key variable: upper-case
//!   ASCII letters, digits and `_`, starting with a letter, at most 128 bytes, with `KEY`, `APIKEY`
//!   or `TOKEN` among its `_`-separated words (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `HF_TOKEN`);
//!   never Concord's own variables (`CONCORD_…`: passphrases and settings), and never a name with
//!   a word containing `PASS` or `SECRET`, or the word `PRIVATE` or `SESSION` (`DB_PASSWORD_KEY`,
//!   `AWS_SECRET_ACCESS_KEY`, `SSH_PRIVATE_KEY`, `AWS_SESSION_TOKEN`): those hold passwords or
//!   credentials of other systems, not a judge's key.
//! - **Keyring account.** Any account of Concord's keyring service except the `study:` accounts,
//!   where the window remembers study passphrases, and the `lead-key:` accounts, which hold the
//!   leads' private signing keys.
//!

use crate::base::error_code::ErrorCode;
use crate::base::text::quoted;
use reqwest::Url;

/// The keyring accounts that hold study passphrases (`study:<absolute path>`), never a judge key.
pub const STUDY_ACCOUNT_PREFIX: &str = "study:";

/// The longest key-variable name taken.
pub(crate) const MAX_VARIABLE_BYTES: usize = 128;

/// Why a key source or an endpoint is refused. The message names the variable, account or URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DestinationError {
    #[error("the judge key cannot be read from the environment variable {name_q}: {reason}", name_q = quoted(&.name))]
    KeyVariable { name: String, reason: &'static str },
    #[error("the keyring account {account_q} holds a study's passphrase or a lead's signing key, never a judge key; name another account", account_q = quoted(&.account))]
    KeyringAccount { account: String },
    #[error("the judge endpoint {url_q} is refused: {reason}", url_q = quoted(&.url))]
    Endpoint { url: String, reason: String },
}

impl crate::base::error_code::Coded for DestinationError {
    /// `judge_key_source` for a key variable or account, `judge_endpoint` for a URL.
    fn code(&self) -> ErrorCode {
        match self {
            DestinationError::KeyVariable { .. } | DestinationError::KeyringAccount { .. } => {
                ErrorCode::JudgeKeySource
            }
            DestinationError::Endpoint { .. } => ErrorCode::JudgeEndpoint,
        }
    }
}

/// Whether `name` may be read as a judge's key (see the module's rule).
pub fn check_key_variable(name: &str) -> Result<(), DestinationError> {
    let refuse = |reason: &'static str| {
        Err(DestinationError::KeyVariable {
            name: name.to_string(),
            reason,
        })
    };
    let mut chars = name.chars();
    let shaped = name.len() <= MAX_VARIABLE_BYTES
        && chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if !shaped {
        return refuse(
            "a key variable is named in upper-case letters, digits and _ (e.g. OPENAI_API_KEY)",
        );
    }
    if name == "CONCORD" || name.starts_with("CONCORD_") {
        return refuse("Concord's own variables hold passphrases and settings, never a judge key");
    }
    let words: Vec<&str> = name.split('_').filter(|w| !w.is_empty()).collect();
    let secretive =
        |w: &&str| w.contains("PASS") || w.contains("SECRET") || *w == "PRIVATE" || *w == "SESSION";
    if words.iter().any(secretive) {
        return refuse(
            "a name with PASS, SECRET, PRIVATE or SESSION holds a password or another system's credential, not an API key",
        );
    }
    if !words
        .iter()
        .any(|w| matches!(*w, "KEY" | "APIKEY" | "TOKEN"))
    {
        return refuse(
            "only a variable named like an API key may hold one: KEY, APIKEY or TOKEN as a word of its name (e.g. OPENAI_API_KEY, HF_TOKEN)",
        );
    }
    Ok(())
}

/// Whether the keyring `account` may hold a judge's key.
pub fn check_keyring_account(account: &str) -> Result<(), DestinationError> {
    // Neither a study's passphrase nor a lead's private signing key may be sent as a judge key.
    let account_trimmed = account.trim();
    if account_trimmed.starts_with(STUDY_ACCOUNT_PREFIX)
        || account_trimmed.starts_with(crate::store::lead_key::LEAD_KEY_ACCOUNT_PREFIX)
    {
        return Err(DestinationError::KeyringAccount {
            account: account.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod lead_key_accounts {
    #[test]
    fn a_lead_key_account_is_never_a_judge_key_source() {
        assert!(
            super::check_keyring_account("lead-key:00ff").is_err(),
            "a lead's private key must never be sent to a judge endpoint"
        );
        assert!(
            super::check_keyring_account("openai").is_ok(),
            "an ordinary account stays allowed"
        );
    }
}

/// A base URL that passed the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedUrl {
    /// As the HTTP client reads it (scheme and host lower-case, an international host in
    /// punycode, an IPv4 address in dotted form), without a trailing `/`.
    pub shown: String,
    /// The host is this machine.
    pub loopback: bool,
    url: Url,
}

impl CheckedUrl {
    /// Whether `other` is on this URL's origin (same scheme, host and port).
    pub fn same_origin(&self, other: &str) -> bool {
        Url::parse(other).is_ok_and(|o| o.origin() == self.url.origin())
    }
}

/// Whether the base URL `raw` may receive a judge's requests (see the module's rule).
pub fn check_base_url(raw: &str) -> Result<CheckedUrl, DestinationError> {
    let raw = raw.trim();
    let refuse = |reason: String| {
        Err(DestinationError::Endpoint {
            url: raw.to_string(),
            reason,
        })
    };
    let url = match Url::parse(raw) {
        Ok(u) => u,
        Err(e) => return refuse(format!("not a URL ({e})")),
    };
    let https = match url.scheme() {
        "https" => true,
        "http" => false,
        other => {
            return refuse(format!(
                "{} is not a web address; use https:// (or http:// to this machine)",
                quoted(&format!("{other}:"))
            ))
        }
    };
    if !url.username().is_empty() || url.password().is_some() {
        return refuse(
            "a user name or password in the URL is not allowed; give the key as the key source"
                .into(),
        );
    }
    if Url::query(&url).is_some() || url.fragment().is_some() {
        return refuse("a base URL has no query (?…) or fragment (#…)".into());
    }
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => return refuse("the URL names no host".into()),
    };
    if !https && !loopback {
        return refuse(
            "plain http:// is allowed only to this machine (localhost, 127.0.0.0/8, [::1]); use https://"
                .into(),
        );
    }
    Ok(CheckedUrl {
        shown: url.as_str().trim_end_matches('/').to_string(),
        loopback,
        url,
    })
}
