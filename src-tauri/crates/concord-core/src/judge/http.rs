//! The two wire protocols over HTTP: request bodies, reading a completion (text and token usage)
//! out of a reply, and classifying what went wrong so the runner knows whether to retry
//! (rate limits, server errors, timeouts, broken bodies) or record a failure (other 4xx). A reply
//! also says which model answered (`model`, and `system_fingerprint` where the provider gives
//! one); the runner records both with the call.
//! `Retry-After` is read in both forms, seconds and HTTP date (against the [`Clock`]).

use super::key::ApiKey;
use super::prompt::RenderedPrompt;
use super::rule::{check_base_url, CheckedUrl};
use super::settings::{ProviderKind, RunSettings};
use super::JudgeError;
use crate::base::clock::Clock;
use serde_json::{json, Value};
use std::time::Duration;

/// The Anthropic API version sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A judge's answer to one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub text: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// The reply's tokens with their most likely alternatives, when the provider returned
    /// log-probabilities (OpenAI-compatible `choices[0].logprobs.content`).
    pub logprobs: Option<Vec<TokenLogprob>>,
    /// The model the provider says answered, as the reply names it.
    pub answered_by: AnsweredBy,
}

/// Which model the provider says answered a call: the reply's `model` and, where the provider
/// gives one (OpenAI-compatible replies), its `system_fingerprint`. Either is `None` when the
/// reply names none (many local servers name nothing); a value longer than
/// [`ANSWERED_BY_MAX_CHARS`] is cut to that length.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnsweredBy {
    pub model: Option<String>,
    pub system_fingerprint: Option<String>,
}

/// The most characters of a reply's `model` or `system_fingerprint` a call records.
pub const ANSWERED_BY_MAX_CHARS: usize = 256;

impl AnsweredBy {
    /// What `body` (a chat completion or an Anthropic message) names: non-empty text only.
    pub fn of_reply(body: &Value) -> AnsweredBy {
        let text = |key: &str| {
            body.get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| s.chars().take(ANSWERED_BY_MAX_CHARS).collect())
        };
        AnsweredBy {
            model: text("model"),
            system_fingerprint: text("system_fingerprint"),
        }
    }
}

/// One generated token and its alternatives (token text, natural-log probability), the token
/// itself included.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenLogprob {
    pub token: String,
    pub logprob: f64,
    pub top: Vec<(String, f64)>,
}

fn read_logprobs(choice: &Value) -> Option<Vec<TokenLogprob>> {
    let content = choice.pointer("/logprobs/content")?.as_array()?;
    let pair = |v: &Value| -> Option<(String, f64)> {
        Some((
            v.get("token")?.as_str()?.to_string(),
            v.get("logprob")?.as_f64()?,
        ))
    };
    content
        .iter()
        .map(|t| {
            let (token, logprob) = pair(t)?;
            let top = t
                .get("top_logprobs")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(pair).collect())
                .unwrap_or_default();
            Some(TokenLogprob {
                token,
                logprob,
                top,
            })
        })
        .collect()
}

/// Why one HTTP call gave no completion.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    #[error("HTTP {status}: {body}")]
    Status {
        status: u16,
        retry_after: Option<Duration>,
        body: String,
    },
    #[error("no reply within the timeout")]
    Timeout,
    #[error("connection failed: {0}")]
    Transport(String),
    #[error("the reply body was cut off or unreadable: {0}")]
    Body(String),
    #[error("the reply is not a completion: {0}")]
    Shape(String),
}

impl CallError {
    /// Worth sending again: rate limits, server errors, timeouts, broken connections and bodies.
    pub fn is_retryable(&self) -> bool {
        match self {
            CallError::Status { status, .. } => {
                *status == 408 || *status == 409 || *status == 429 || *status >= 500
            }
            CallError::Timeout
            | CallError::Transport(_)
            | CallError::Body(_)
            | CallError::Shape(_) => true,
        }
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            CallError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    pub fn status(&self) -> Option<u16> {
        match self {
            CallError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// A stable code stored with a failure.
    pub fn code(&self) -> &'static str {
        match self {
            CallError::Status { status: 429, .. } => "rate_limited",
            CallError::Status { status, .. } if *status >= 500 => "server_error",
            CallError::Status { .. } => "http_error",
            CallError::Timeout => "timeout",
            CallError::Transport(_) => "transport",
            CallError::Body(_) => "broken_body",
            CallError::Shape(_) => "not_a_completion",
        }
    }
}

/// Read a `Retry-After` header: delay-seconds or an HTTP date (a date in the past means now).
pub fn parse_retry_after(value: &str, clock: &dyn Clock) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0)
            .then(|| Duration::from_secs_f64(secs.min(86_400.0)));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    let at_ms = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as i64;
    let wait = (at_ms - clock.now_ms()).clamp(0, 86_400_000);
    Some(Duration::from_millis(wait as u64))
}

/// The JSON body of one live request.
pub fn request_body(settings: &RunSettings, prompt: &RenderedPrompt) -> Value {
    match settings.provider {
        ProviderKind::OpenaiCompatible => {
            let mut messages = Vec::with_capacity(2);
            if let Some(s) = &prompt.system {
                messages.push(json!({"role": "system", "content": s}));
            }
            messages.push(json!({"role": "user", "content": prompt.user}));
            let mut body = json!({
                "model": settings.model,
                "messages": messages,
                "temperature": settings.temperature,
                "max_tokens": settings.max_tokens,
            });
            if let Some(p) = settings.top_p {
                body["top_p"] = json!(p);
            }
            if settings.logprobs {
                body["logprobs"] = json!(true);
                body["top_logprobs"] = json!(LOGPROB_ALTERNATIVES);
            }
            body
        }
        ProviderKind::Anthropic => {
            let mut body = json!({
                "model": settings.model,
                "max_tokens": settings.max_tokens,
                "temperature": settings.temperature,
                "messages": [{"role": "user", "content": prompt.user}],
            });
            if let Some(s) = &prompt.system {
                body["system"] = json!(s);
            }
            if let Some(p) = settings.top_p {
                body["top_p"] = json!(p);
            }
            body
        }
    }
}

/// Alternatives asked for per token when log-probabilities are on (enough for a 1–5 scale).
pub const LOGPROB_ALTERNATIVES: u32 = 5;

/// Read the completion out of a reply body (a chat completion or an Anthropic message).
pub fn read_completion(provider: ProviderKind, body: &Value) -> Result<Completion, CallError> {
    let tokens = |v: &Value| v.as_u64();
    match provider {
        ProviderKind::OpenaiCompatible => {
            let choice = body
                .get("choices")
                .and_then(|c| c.get(0))
                .ok_or_else(|| CallError::Shape("no choices[0]".into()))?;
            let text = choice
                .pointer("/message/content")
                .and_then(Value::as_str)
                .ok_or_else(|| CallError::Shape("choices[0].message.content is not text".into()))?;
            Ok(Completion {
                text: text.to_string(),
                input_tokens: body.pointer("/usage/prompt_tokens").and_then(tokens),
                output_tokens: body.pointer("/usage/completion_tokens").and_then(tokens),
                logprobs: read_logprobs(choice),
                answered_by: AnsweredBy::of_reply(body),
            })
        }
        ProviderKind::Anthropic => {
            let blocks = body
                .get("content")
                .and_then(Value::as_array)
                .ok_or_else(|| CallError::Shape("no content blocks".into()))?;
            let text: String = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("");
            if text.is_empty() && blocks.is_empty() {
                return Err(CallError::Shape("empty content".into()));
            }
            // A forced tool's reply (structured replies) is its input object.
            let text = if text.is_empty() {
                blocks
                    .iter()
                    .find(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                    .and_then(|b| b.get("input"))
                    .map_or(text, Value::to_string)
            } else {
                text
            };
            Ok(Completion {
                text,
                input_tokens: body.pointer("/usage/input_tokens").and_then(tokens),
                output_tokens: body.pointer("/usage/output_tokens").and_then(tokens),
                logprobs: None,
                answered_by: AnsweredBy::of_reply(body),
            })
        }
    }
}

/// An HTTP client bound to one provider, base URL and key.
#[derive(Clone)]
pub struct Endpoint {
    client: reqwest::Client,
    provider: ProviderKind,
    base_url: String,
    checked: CheckedUrl,
    key: Option<ApiKey>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("key", &self.key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl Endpoint {
    /// A client for `settings`' provider and base URL, which must pass the endpoint rule
    /// ([`check_base_url`]: https, or http to this machine) — a run stored by an older version
    /// with another URL is refused here, before its key is sent. It follows no redirect, so
    /// requests and the key go only where the person saw. A loopback base URL (a local model
    /// server) is reached directly, never through a proxy configured in the environment.
    pub fn new(
        settings: &RunSettings,
        key: Option<ApiKey>,
        pool: usize,
    ) -> Result<Endpoint, JudgeError> {
        let checked = check_base_url(&settings.base_url)?;
        let base_url = settings.normalized_base_url();
        let mut builder = reqwest::Client::builder()
            .pool_max_idle_per_host(pool.max(1))
            .tcp_nodelay(true)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("concord/", env!("CARGO_PKG_VERSION")));
        if checked.loopback {
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| JudgeError::Client(e.to_string()))?;
        Ok(Endpoint {
            client,
            provider: settings.provider,
            base_url,
            checked,
            key,
        })
    }

    pub fn provider(&self) -> ProviderKind {
        self.provider
    }

    /// Whether `url` is on the endpoint's origin (scheme, host and port): a URL a provider hands
    /// back (a batch's results) is fetched with the key only then.
    pub fn on_origin(&self, url: &str) -> bool {
        self.checked.same_origin(url)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url, path.trim_start_matches('/'))
    }

    /// A request with the provider's authentication headers.
    pub(crate) fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let mut rb = self.client.request(method, url);
        match self.provider {
            ProviderKind::OpenaiCompatible => {
                if let Some(k) = &self.key {
                    rb = rb.bearer_auth(k.expose());
                }
            }
            ProviderKind::Anthropic => {
                rb = rb.header("anthropic-version", ANTHROPIC_VERSION);
                if let Some(k) = &self.key {
                    rb = rb.header("x-api-key", k.expose());
                }
            }
        }
        rb
    }

    /// Send a request and read its whole body as JSON, mapping every failure to a [`CallError`].
    pub(crate) async fn send_json(
        &self,
        rb: reqwest::RequestBuilder,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<Value, CallError> {
        let text = self.send_text(rb, timeout, clock).await?;
        serde_json::from_str(&text).map_err(|e| CallError::Body(format!("not JSON: {e}")))
    }

    /// Send a request and read its whole body as text.
    pub(crate) async fn send_text(
        &self,
        rb: reqwest::RequestBuilder,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<String, CallError> {
        let response = rb.timeout(timeout).send().await.map_err(map_reqwest)?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, clock));
        let text = response.text().await.map_err(|e| {
            if e.is_timeout() {
                CallError::Timeout
            } else {
                CallError::Body(e.to_string())
            }
        })?;
        if !status.is_success() {
            return Err(CallError::Status {
                status: status.as_u16(),
                retry_after,
                body: text.chars().take(2_000).collect(),
            });
        }
        Ok(text)
    }

    /// One live call: the completion for `body`.
    pub async fn complete(
        &self,
        body: &Value,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<Completion, CallError> {
        let path = match self.provider {
            ProviderKind::OpenaiCompatible => "chat/completions",
            ProviderKind::Anthropic => "messages",
        };
        let rb = self
            .request(reqwest::Method::POST, &self.url(path))
            .json(body);
        let reply = self.send_json(rb, timeout, clock).await?;
        read_completion(self.provider, &reply)
    }
}

fn map_reqwest(e: reqwest::Error) -> CallError {
    if e.is_timeout() {
        CallError::Timeout
    } else if e.is_body() || e.is_decode() {
        CallError::Body(e.to_string())
    } else {
        CallError::Transport(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::SteppingClock;
    use crate::base::error_code::Coded as _;

    #[test]
    fn retry_after_in_seconds_and_as_a_date() {
        // 2015-10-21 07:28:00 UTC, the example date of RFC 9110.
        let clock = SteppingClock::new(1_445_412_480_000, 0);
        assert_eq!(
            parse_retry_after("3", &clock),
            Some(Duration::from_secs(3)),
            "seconds"
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:05 GMT", &clock),
            Some(Duration::from_secs(5)),
            "an HTTP date is a wait until that instant on the passed-in clock"
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", &clock),
            Some(Duration::ZERO),
            "a date already past means retry now"
        );
        assert_eq!(
            parse_retry_after("soon", &clock),
            None,
            "garbage is ignored"
        );
    }

    #[test]
    fn completions_of_both_protocols_are_read() {
        let openai = json!({"choices": [{"message": {"content": "hi"}}],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 2}});
        let c = read_completion(ProviderKind::OpenaiCompatible, &openai).unwrap();
        assert_eq!(
            (c.text.as_str(), c.input_tokens, c.output_tokens),
            ("hi", Some(10), Some(2)),
            "usage read"
        );
        let anthropic = json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                               "usage": {"input_tokens": 7, "output_tokens": 1}});
        let c = read_completion(ProviderKind::Anthropic, &anthropic).unwrap();
        assert_eq!(
            (c.text.as_str(), c.input_tokens),
            ("ab", Some(7)),
            "text blocks joined"
        );
        assert!(
            read_completion(ProviderKind::OpenaiCompatible, &json!({"error": "x"})).is_err(),
            "a body without choices is not a completion"
        );
    }

    #[test]
    fn the_answering_model_is_read_from_both_protocols() {
        let openai = json!({"model": "gpt-4o-2024-08-06", "system_fingerprint": "fp_44709d6fcb",
                            "choices": [{"message": {"content": "hi"}}]});
        let c = read_completion(ProviderKind::OpenaiCompatible, &openai).unwrap();
        assert_eq!(
            (
                c.answered_by.model.as_deref(),
                c.answered_by.system_fingerprint.as_deref()
            ),
            (Some("gpt-4o-2024-08-06"), Some("fp_44709d6fcb")),
            "a chat completion names its model and backend fingerprint beside the text"
        );
        let anthropic = json!({"model": "claude-x-20250101",
                               "content": [{"type": "text", "text": "a"}]});
        let c = read_completion(ProviderKind::Anthropic, &anthropic).unwrap();
        assert_eq!(
            c.answered_by,
            AnsweredBy {
                model: Some("claude-x-20250101".into()),
                system_fingerprint: None
            },
            "an Anthropic message names its model and has no fingerprint"
        );
        let silent = json!({"model": "", "system_fingerprint": null,
                            "choices": [{"message": {"content": "hi"}}]});
        let c = read_completion(ProviderKind::OpenaiCompatible, &silent).unwrap();
        assert_eq!(
            c.answered_by,
            AnsweredBy::default(),
            "an empty or null name is no name: a server that says nothing records nothing"
        );
        let long =
            json!({"model": "m".repeat(10_000), "choices": [{"message": {"content": "hi"}}]});
        let c = read_completion(ProviderKind::OpenaiCompatible, &long).unwrap();
        assert_eq!(
            c.answered_by.model.map(|m| m.len()),
            Some(ANSWERED_BY_MAX_CHARS),
            "a provider cannot make the study hold an unbounded name per call"
        );
    }

    #[test]
    fn a_client_is_built_only_for_an_allowed_endpoint() {
        let remote = RunSettings::new(
            ProviderKind::OpenaiCompatible,
            "http://judge.example/v1",
            "m",
        );
        let refused = Endpoint::new(&remote, Some(ApiKey::new("sk-x")), 1)
            .expect_err("a stored run with a remote http URL gets no client");
        assert_eq!(refused.code(), "judge_endpoint", "with the endpoint code");
        let local = RunSettings::new(ProviderKind::OpenaiCompatible, "http://127.0.0.1:9/v1", "m");
        let e = Endpoint::new(&local, None, 1).expect("a loopback endpoint");
        assert!(
            e.on_origin("http://127.0.0.1:9/v1/messages/batches/1/results"),
            "a URL on the endpoint's origin"
        );
        assert!(
            !e.on_origin("http://127.0.0.1:10/v1/x") && !e.on_origin("https://evil.example/x"),
            "another port or host is another origin"
        );
    }

    #[test]
    fn retryable_errors() {
        let s = |status| CallError::Status {
            status,
            retry_after: None,
            body: String::new(),
        };
        assert!(s(429).is_retryable(), "rate limits are retried");
        assert!(s(503).is_retryable(), "server errors are retried");
        assert!(!s(401).is_retryable(), "a bad key is not retried");
        assert!(CallError::Timeout.is_retryable(), "timeouts are retried");
    }
}
