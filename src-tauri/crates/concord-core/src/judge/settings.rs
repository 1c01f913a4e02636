//! What a judge run is (its identity: provider, model, rubric, prompt, sampling, which responses,
//! repetitions, how much of a conversation's history a judge sees) and how it is carried out (concurrency, rate limits, retries, timeouts). Only the
//! identity is hashed: rerunning with the same identity resumes the same run, whatever the
//! concurrency or limits, while a changed prompt or temperature is a new run.

use super::prompt::PromptTemplate;
use super::JudgeError;
use serde::{Deserialize, Serialize};

/// The wire protocol a judge speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    /// `POST {base}/chat/completions` (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio…); batch
    /// mode uses `{base}/files` and `{base}/batches`.
    OpenaiCompatible,
    /// `POST {base}/messages` (Anthropic Messages API); batch mode uses `{base}/messages/batches`.
    Anthropic,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenaiCompatible => "openai-compatible",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    pub fn parse(s: &str) -> Option<ProviderKind> {
        match s {
            "openai-compatible" | "openai" => Some(ProviderKind::OpenaiCompatible),
            "anthropic" => Some(ProviderKind::Anthropic),
            _ => None,
        }
    }
}

/// Which responses a run judges (always those of the run's rubric that have a text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ResponseSelection {
    All,
    /// Responses at least one expert has rated (to compare judge and experts).
    ExpertRated,
    /// `n` responses drawn with the run's seed.
    Sample {
        n: u32,
    },
}

impl ResponseSelection {
    /// `all`, `expert-rated` or `sample:N`.
    pub fn parse(s: &str) -> Option<ResponseSelection> {
        match s {
            "all" => Some(ResponseSelection::All),
            "expert-rated" => Some(ResponseSelection::ExpertRated),
            other => other
                .strip_prefix("sample:")
                .and_then(|n| n.trim().parse().ok())
                .filter(|n| *n > 0)
                .map(|n| ResponseSelection::Sample { n }),
        }
    }
}

/// How many turns before a reply a judge is shown: the last `n` (messages of any role; the
/// default 10) or all of them. A session item always shows the whole conversation. Written as a
/// number or `"all"` (`--history N|all`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(type = "number | \"all\""))]
pub enum HistoryDepth {
    Last(u32),
    All,
}

/// The turns a judge sees before a reply unless told otherwise.
pub const DEFAULT_HISTORY: u32 = 10;

impl Default for HistoryDepth {
    fn default() -> Self {
        HistoryDepth::Last(DEFAULT_HISTORY)
    }
}

impl HistoryDepth {
    /// `all`, or a whole number of turns (0 shows the reply alone).
    pub fn parse(s: &str) -> Option<HistoryDepth> {
        match s.trim() {
            "all" => Some(HistoryDepth::All),
            n => n.parse().ok().map(HistoryDepth::Last),
        }
    }

    /// The last turns of `history` this depth shows (all of them when there are fewer).
    pub fn shown<T>(self, history: &[T]) -> &[T] {
        match self {
            HistoryDepth::All => history,
            HistoryDepth::Last(n) => &history[history.len().saturating_sub(n as usize)..],
        }
    }

    /// `10`, `all`: as the option is written.
    pub fn as_value(self) -> serde_json::Value {
        match self {
            HistoryDepth::Last(n) => n.into(),
            HistoryDepth::All => "all".into(),
        }
    }
}

impl std::fmt::Display for HistoryDepth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HistoryDepth::Last(n) => write!(f, "{n}"),
            HistoryDepth::All => f.write_str("all"),
        }
    }
}

impl Serialize for HistoryDepth {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HistoryDepth::Last(n) => s.serialize_u32(*n),
            HistoryDepth::All => s.serialize_str("all"),
        }
    }
}

impl<'de> Deserialize<'de> for HistoryDepth {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) if s == "all" => Ok(HistoryDepth::All),
            serde_json::Value::Number(n) => n
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(HistoryDepth::Last)
                .ok_or_else(|| {
                    serde::de::Error::custom("history: a whole number of turns or \"all\"")
                }),
            _ => Err(serde::de::Error::custom(
                "history: a whole number of turns or \"all\"",
            )),
        }
    }
}

/// Prices in US dollars per million tokens (0 for a local model).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Prices {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

impl Prices {
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        (input_tokens as f64 * self.input_per_million
            + output_tokens as f64 * self.output_per_million)
            / 1e6
    }
}

/// A judge run's settings. Everything but `prices` is its identity (see `RunSettings::identity`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RunSettings {
    pub provider: ProviderKind,
    /// Up to and including the version segment, e.g. `https://api.openai.com/v1`,
    /// `http://localhost:11434/v1`, `https://api.anthropic.com/v1`.
    pub base_url: String,
    pub model: String,
    /// The judge rater's name in the study; the model id when not given.
    #[serde(default)]
    pub rater_name: Option<String>,
    /// The judge's model family; guessed from the model id when not given.
    #[serde(default)]
    pub family: Option<String>,
    /// Rubric id; the rubric of the study's conversations when not given.
    #[serde(default)]
    pub rubric: Option<String>,
    pub selection: ResponseSelection,
    /// Seed of the sample (and of nothing else that changes what is sent).
    pub seed: u64,
    pub repetitions: u32,
    pub temperature: f64,
    #[serde(default)]
    pub top_p: Option<f64>,
    /// The most tokens a reply may have (Anthropic requires it; sent to both).
    pub max_tokens: u32,
    /// The prompt; the rubric's default template when not given.
    #[serde(default)]
    pub prompt: Option<PromptTemplate>,
    /// Send through the provider's batch API instead of one request per call.
    #[serde(default)]
    pub batch: bool,
    #[serde(default)]
    pub prices: Prices,
    /// Ask an OpenAI-compatible provider for the reply tokens' log-probabilities (`logprobs`,
    /// `top_logprobs`), from which each criterion's expected score Σ p·s is stored beside the
    /// sampled one. Ignored by Anthropic, which does not return them.
    #[serde(default)]
    pub logprobs: bool,
    /// List the criteria in a seeded random order per call (recorded per call), so the bias audit
    /// can compare criteria asked early with those asked late. Needs the rubric's default prompt.
    #[serde(default)]
    pub shuffle_criteria: bool,
    /// Ask for a schema-constrained reply (`judge::structured`): an OpenAI-compatible
    /// `response_format` with a JSON schema (vLLM accepts it), an Anthropic forced tool.
    #[serde(default)]
    pub structured: bool,
    /// A pairwise run asks every pair twice, once each way round (the position-bias check);
    /// otherwise each pair once, the side shown first drawn per pair from the seed.
    #[serde(default)]
    pub both_orders: bool,
    /// How many turns before a reply the judge sees (the last 10 unless told; a run of an
    /// earlier release, whose items were single-turn, reads as the default).
    #[serde(default)]
    pub history: HistoryDepth,
    /// Ask the judge to quote the reply's words that show each of the rubric's span codes
    /// (`judge::spans`); needs a reply rubric that declares codes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub spans: bool,
}

impl RunSettings {
    /// Settings with both papers' sampling (temperature 0.7) and every response once.
    pub fn new(provider: ProviderKind, base_url: &str, model: &str) -> RunSettings {
        RunSettings {
            provider,
            base_url: base_url.to_string(),
            model: model.to_string(),
            rater_name: None,
            family: None,
            rubric: None,
            selection: ResponseSelection::All,
            seed: 1,
            repetitions: 1,
            temperature: 0.7,
            top_p: None,
            max_tokens: 1024,
            prompt: None,
            batch: false,
            prices: Prices::default(),
            logprobs: false,
            shuffle_criteria: false,
            structured: false,
            both_orders: false,
            history: HistoryDepth::default(),
            spans: false,
        }
    }

    pub fn rater_name(&self) -> &str {
        self.rater_name.as_deref().unwrap_or(&self.model)
    }

    pub(crate) fn normalized_base_url(&self) -> String {
        self.base_url.trim().trim_end_matches('/').to_string()
    }

    pub(crate) fn validate(&self) -> Result<(), JudgeError> {
        let bad = |m: String| Err(JudgeError::Settings(m));
        // https, or http to this machine only (the one endpoint rule).
        super::rule::check_base_url(&self.base_url)?;
        if self.model.trim().is_empty() {
            return bad("the model id is empty".into());
        }
        if self.rater_name().trim().is_empty() {
            return bad("the judge rater's name is empty".into());
        }
        if self.repetitions == 0 || self.repetitions > 100 {
            return bad(format!(
                "repetitions must be 1–100, not {}",
                self.repetitions
            ));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return bad(format!("temperature must be 0–2, not {}", self.temperature));
        }
        if let Some(p) = self.top_p {
            if !(p > 0.0 && p <= 1.0) {
                return bad(format!("top_p must be in (0, 1], not {p}"));
            }
        }
        if self.shuffle_criteria && self.prompt.is_some() {
            return bad(
                "shuffling the criteria order needs the rubric's default prompt: a custom prompt \
                 lists its criteria in its own order"
                    .into(),
            );
        }
        if self.max_tokens == 0 {
            return bad("max_tokens must be at least 1".into());
        }
        let p = self.prices;
        let fine = |x: f64| x.is_finite() && x >= 0.0;
        if !(fine(p.input_per_million) && fine(p.output_per_million)) {
            return bad("prices must be finite and not negative".into());
        }
        Ok(())
    }

    /// The identity of a run with its rubric and prompt resolved: the same identity resumes the
    /// same run. Operational settings ([`Execution`]) and prices are not part of it.
    pub(crate) fn identity(&self, rubric: &str, prompt: &PromptTemplate) -> serde_json::Value {
        let mut identity = serde_json::json!({
            "provider": self.provider.as_str(),
            "base_url": self.normalized_base_url(),
            "model": self.model,
            "rater": self.rater_name(),
            "rubric": rubric,
            "selection": self.selection,
            "seed": self.seed,
            "repetitions": self.repetitions,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "prompt": prompt,
            "batch": self.batch,
        });
        // Named only when on, so the runs made before these options keep their identity.
        if self.logprobs {
            identity["logprobs"] = true.into();
        }
        if self.shuffle_criteria {
            identity["shuffle_criteria"] = true.into();
        }
        if self.structured {
            identity["structured"] = true.into();
        }
        if self.both_orders {
            identity["both_orders"] = true.into();
        }
        if self.spans {
            identity["spans"] = true.into();
        }
        // The default depth is not named, so a run of an earlier release (single-turn items, which
        // every depth of one turn or more shows alike) keeps its identity and resumes.
        if self.history != HistoryDepth::default() {
            identity["history"] = self.history.as_value();
        }
        identity
    }
}

/// How a run is carried out; none of it changes what is asked, so none of it is hashed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Execution {
    /// Requests at the same time.
    pub concurrency: u32,
    /// Requests per minute (none = unlimited).
    pub requests_per_minute: Option<u32>,
    /// Tokens per minute, counting the estimated prompt plus `max_tokens` as providers do.
    pub tokens_per_minute: Option<u32>,
    /// Per-request timeout in milliseconds.
    pub timeout_ms: u64,
    /// Retries of a call after a rate limit, a server error, a timeout or a broken reply body.
    pub max_retries: u32,
    /// First backoff delay; doubled each retry, with jitter, up to `backoff_cap_ms`.
    pub backoff_base_ms: u64,
    pub backoff_cap_ms: u64,
    /// Seed of the backoff jitter (randomness is passed in).
    pub jitter_seed: u64,
    /// Also send again the calls that failed in an earlier session.
    pub retry_failed: bool,
    /// Batch mode: how often to poll a submitted batch, and the most requests in one batch.
    pub batch_poll_ms: u64,
    pub batch_max_requests: u32,
    /// The most results written in one transaction.
    pub write_batch: u32,
}

impl Default for Execution {
    fn default() -> Self {
        Execution {
            concurrency: 8,
            requests_per_minute: None,
            tokens_per_minute: None,
            timeout_ms: 120_000,
            max_retries: 5,
            backoff_base_ms: 500,
            backoff_cap_ms: 60_000,
            jitter_seed: 0x5EED,
            retry_failed: false,
            batch_poll_ms: 30_000,
            batch_max_requests: 10_000,
            write_batch: 1_000,
        }
    }
}

impl Execution {
    pub(crate) fn validate(&self) -> Result<(), JudgeError> {
        let bad = |m: &str| Err(JudgeError::Settings(m.to_string()));
        if self.concurrency == 0 || self.concurrency > 4096 {
            return bad("concurrency must be 1–4096");
        }
        if self.requests_per_minute == Some(0) || self.tokens_per_minute == Some(0) {
            return bad("a rate limit of 0 would never send anything; leave it out instead");
        }
        if self.timeout_ms == 0 {
            return bad("the request timeout must be positive");
        }
        if self.batch_max_requests == 0 || self.write_batch == 0 {
            return bad("batch sizes must be positive");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_parse() {
        assert_eq!(
            ResponseSelection::parse("all"),
            Some(ResponseSelection::All),
            "all"
        );
        assert_eq!(
            ResponseSelection::parse("sample:25"),
            Some(ResponseSelection::Sample { n: 25 }),
            "a sample names its size"
        );
        assert_eq!(
            ResponseSelection::parse("sample:0"),
            None,
            "an empty sample is refused"
        );
        assert_eq!(
            ResponseSelection::parse("some"),
            None,
            "unknown words are refused"
        );
    }

    #[test]
    fn the_history_depth_is_named_in_a_runs_identity_unless_it_is_the_default() {
        let s = RunSettings::new(ProviderKind::OpenaiCompatible, "http://127.0.0.1:1/v1", "m");
        let prompt = PromptTemplate::default_for(&crate::rubric::builtin::mentalbench());
        assert!(
            s.identity("mentalbench", &prompt).get("history").is_none(),
            "the default depth is not named: a run of an earlier release keeps its settings hash"
        );
        let mut deeper = s.clone();
        deeper.history = HistoryDepth::Last(3);
        assert_eq!(
            deeper.identity("mentalbench", &prompt)["history"],
            3,
            "another depth is named, so it is another run"
        );
        deeper.history = HistoryDepth::All;
        assert_eq!(
            deeper.identity("mentalbench", &prompt)["history"],
            "all",
            "all turns is named as all"
        );
        let mut old = serde_json::to_value(&s).unwrap();
        old.as_object_mut().unwrap().remove("history");
        let read: RunSettings = serde_json::from_value(old).expect("old settings read");
        assert_eq!(
            read.history,
            HistoryDepth::Last(DEFAULT_HISTORY),
            "settings stored before the option read as the default depth"
        );
        let json = serde_json::to_string(&deeper).unwrap();
        assert!(
            json.contains("\"history\":\"all\""),
            "all is stored as \"all\": {json}"
        );
        assert_eq!(
            serde_json::from_str::<RunSettings>(&json).unwrap().history,
            HistoryDepth::All,
            "and read back"
        );
        assert_eq!(
            HistoryDepth::parse("0"),
            Some(HistoryDepth::Last(0)),
            "0 turns"
        );
        assert_eq!(HistoryDepth::parse("all"), Some(HistoryDepth::All), "all");
        assert_eq!(HistoryDepth::parse("-1"), None, "no negative depth");
        assert_eq!(HistoryDepth::parse("ten"), None, "a number or all");
        assert_eq!(
            HistoryDepth::Last(2).shown(&[1, 2, 3]),
            &[2, 3],
            "the last turns are kept"
        );
        assert_eq!(
            HistoryDepth::Last(9).shown(&[1, 2]),
            &[1, 2],
            "all of a shorter history"
        );
    }

    #[test]
    fn settings_are_checked() {
        let mut s = RunSettings::new(ProviderKind::Anthropic, "ftp://x", "m");
        assert!(
            matches!(s.validate(), Err(JudgeError::Destination(_))),
            "only http(s) base URLs are allowed"
        );
        s.base_url = "http://judge.example/v1".into();
        assert!(
            matches!(s.validate(), Err(JudgeError::Destination(_))),
            "plain http only to this machine"
        );
        s.base_url = "http://127.0.0.1:1/v1/".into();
        assert!(s.validate().is_ok(), "a loopback URL is fine");
        assert_eq!(
            s.normalized_base_url(),
            "http://127.0.0.1:1/v1",
            "trailing / dropped"
        );
        s.temperature = 3.0;
        assert!(s.validate().is_err(), "temperature above 2 is refused");
    }
}
