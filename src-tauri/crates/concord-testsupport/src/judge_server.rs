//! A judge server for tests and the throughput bench: an axum (hyper) HTTP server on a loopback
//! port (port 0, so the OS picks a free one) that speaks the OpenAI chat-completions and
//! Anthropic Messages protocols and both batch APIs, answers deterministically per item (the
//! response text carries `item #N`), injects faults on request, counts calls per item and tracks
//! the most requests it had open at once. Like many local servers it names no model in its
//! replies, unless told to answer as a chosen `model` (and `system_fingerprint`), switching to
//! another after a chosen number of replies ([`Answering`]). It also builds the studies the tests
//! judge.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use axum::Router;
use concord_core::base::clock::SteppingClock;
use concord_core::rubric::{builtin, Rubric};
use concord_core::store::{NewConversation, NewSource, NewTurn, Role, SourceKind, Store};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The fault an item meets, by `item % 10`, when faults are on: 0 → one 429 with Retry-After: 1,
/// 1 → one 500, 2 → one reply slower than the client's timeout, 3 → one truncated body, 4 → one
/// body that is not JSON, 5 → always a reply with wrong keys, 6 → always a score out of range,
/// 7 → fenced JSON, 8 → JSON inside prose, 9 → plain JSON.
pub fn fault_of(item: u64) -> u64 {
    item % 10
}

/// Items whose replies can never be read as scores when faults are on.
pub fn always_fails(item: u64) -> bool {
    matches!(fault_of(item), 5 | 6)
}

/// The MentalBench score the server gives `item` on attribute `k` (0-based, rubric order).
pub fn expected_score(item: u64, k: usize) -> i64 {
    1 + ((item + 3 * k as u64) % 5) as i64
}

/// The PsyCrisis value the server gives `item` on dimension `k`.
pub fn expected_binary(item: u64, k: usize) -> i64 {
    ((item >> k) & 1) as i64
}

/// The MentalBench score of the `call`-th live call (1-based) of `item` on attribute `k` when the
/// server spreads its repetitions ([`ServerState::spread`]): calls 1, 2, 3, 4, … are +1, 0, −1,
/// +1, … off [`expected_score`], clamped to 1–5. Any three consecutive calls have the median
/// [`expected_score`], whatever order they arrive in.
pub fn spread_score(item: u64, k: usize, call: u32) -> i64 {
    let offset = [1, 0, -1][(call.max(1) as usize - 1) % 3];
    (expected_score(item, k) + offset).clamp(1, 5)
}

/// The PsyCrisis value of the `call`-th live call (1-based) of `item` on dimension `k` when the
/// server spreads binary repetitions ([`ServerState::binary_spread`]): calls 2, 5, 8, … flip
/// [`expected_binary`] on the dimensions with (item + k) % 3 = 0. Any three consecutive calls hold
/// one flip at most, so their majority is [`expected_binary`].
pub fn spread_binary(item: u64, k: usize, call: u32) -> i64 {
    let v = expected_binary(item, k);
    if call % 3 == 2 && (item + k as u64).is_multiple_of(3) {
        1 - v
    } else {
        v
    }
}

/// The probabilities the server gives a score token's alternatives when asked for
/// log-probabilities: the sampled value `v` 0.7, `v + 1` 0.2, `v − 1` 0.1 (as tokens; values off a
/// criterion's scale are for the client to leave out).
pub fn logprob_alternatives(v: i64) -> Vec<(i64, f64)> {
    vec![(v, 0.7), (v + 1, 0.2), (v - 1, 0.1)]
}

/// The OpenAI `logprobs.content` of a reply `text`: every run of ASCII digits is its own token
/// with [`logprob_alternatives`] as its `top_logprobs`; the text between is one token each.
pub fn logprob_tokens(text: &str) -> Value {
    let mut tokens = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        let len = if digits > 0 {
            digits
        } else {
            rest.find(|c: char| c.is_ascii_digit())
                .unwrap_or(rest.len())
        };
        let (token, tail) = rest.split_at(len);
        rest = tail;
        let top: Vec<Value> = match token.parse::<i64>() {
            Ok(v) if digits > 0 => logprob_alternatives(v)
                .into_iter()
                .map(|(a, p)| json!({"token": a.to_string(), "logprob": p.ln(), "bytes": []}))
                .collect(),
            _ => vec![json!({"token": token, "logprob": 0.0, "bytes": []})],
        };
        let logprob = top[0]["logprob"].clone();
        tokens.push(json!({"token": token, "logprob": logprob, "bytes": [], "top_logprobs": top}));
    }
    Value::Array(tokens)
}

/// A model the server says answered: the `model` of its replies and, on the OpenAI protocol,
/// their `system_fingerprint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerAs {
    pub model: String,
    pub system_fingerprint: Option<String>,
}

impl AnswerAs {
    pub fn new(model: &str, system_fingerprint: Option<&str>) -> AnswerAs {
        AnswerAs {
            model: model.to_string(),
            system_fingerprint: system_fingerprint.map(str::to_string),
        }
    }
}

/// Which model the server's successful replies name: nothing by default; `first` from the first
/// reply, and `then`'s model from reply number `then.0` (1-based, counted over every completion
/// the server gives, live or in a batch's results) on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answering {
    pub first: Option<AnswerAs>,
    pub then: Option<(u64, AnswerAs)>,
}

#[derive(Debug, Default)]
pub struct Batch {
    lines: Vec<Value>,
    polls: u32,
}

#[derive(Debug)]
pub struct ServerState {
    pub latency: Duration,
    pub faults: bool,
    /// How long the "slow" fault waits.
    pub slow: Duration,
    pub expected_key: Option<String>,
    pub in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
    pub requests: AtomicU64,
    pub unauthorized: AtomicU64,
    /// item → times the server saw it in a completion request or a submitted batch line.
    pub calls: Mutex<HashMap<u64, u32>>,
    /// item → instants of its live calls.
    pub call_times: Mutex<HashMap<u64, Vec<Instant>>>,
    pub batches: Mutex<HashMap<String, Batch>>,
    pub files: Mutex<HashMap<String, String>>,
    next_id: AtomicU64,
    /// Base URL of this server (for Anthropic results URLs).
    pub base: Mutex<String>,
    /// Repetitions disagree: live MentalBench calls score [`spread_score`] (off by default).
    pub spread: std::sync::atomic::AtomicBool,
    /// Binary repetitions disagree: live PsyCrisis calls score [`spread_binary`] (off by default).
    pub binary_spread: std::sync::atomic::AtomicBool,
    /// Attributes a prompt lists in its first half score one more ([`asked_in_first_half`]).
    pub order_bias: std::sync::atomic::AtomicBool,
    /// Live requests that carried a reply schema (`response_format` or a forced tool).
    pub structured_requests: AtomicU64,
    /// Pairwise prompts: where the two answers are equally good the server says "A" (the
    /// answer shown first) instead of "tie" — a judge with a position bias.
    pub position_bias: std::sync::atomic::AtomicBool,
    /// Pairwise prompts answered.
    pub pair_requests: AtomicU64,
    /// The model its replies name ([`Answering`]; none by default).
    pub answering: Mutex<Answering>,
    /// Completions given so far (what [`Answering::then`] counts).
    pub completions: AtomicU64,
    /// Keep the body of every request the server is asked to complete ([`ServerState::bodies`]);
    /// off by default, so a bench of many calls keeps none.
    pub keep_bodies: std::sync::atomic::AtomicBool,
    /// The request bodies kept while [`ServerState::keep_bodies`] is on: each live completion's,
    /// and each line's of a submitted batch (OpenAI `body`, Anthropic `params`), in arrival order.
    pub bodies: Mutex<Vec<Value>>,
}

impl ServerState {
    pub fn calls_of(&self, item: u64) -> u32 {
        self.calls.lock().unwrap().get(&item).copied().unwrap_or(0)
    }
    pub fn calls_snapshot(&self) -> HashMap<u64, u32> {
        self.calls.lock().unwrap().clone()
    }

    /// Keep a request body when asked to (see [`ServerState::keep_bodies`]).
    fn keep(&self, body: &Value) {
        if self.keep_bodies.load(Ordering::SeqCst) {
            self.bodies.lock().unwrap().push(body.clone());
        }
    }

    /// The messages of every kept request: (system message, user message) each, in arrival order.
    pub fn kept_messages(&self) -> Vec<(Option<String>, String)> {
        self.bodies
            .lock()
            .unwrap()
            .iter()
            .map(|b| {
                let messages = b["messages"].as_array().cloned().unwrap_or_default();
                let text = |m: &Value| m["content"].as_str().unwrap_or("").to_string();
                // Anthropic carries the system message beside the messages.
                let system = b["system"]
                    .as_str()
                    .map(str::to_string)
                    .or_else(|| messages.iter().find(|m| m["role"] == "system").map(text));
                let user = messages
                    .iter()
                    .find(|m| m["role"] == "user")
                    .map(text)
                    .unwrap_or_default();
                (system, user)
            })
            .collect()
    }

    /// Answer as `answering` from now on.
    pub fn answer_as(&self, answering: Answering) {
        *self.answering.lock().unwrap() = answering;
        self.completions.store(0, Ordering::SeqCst);
    }

    /// Count one completion and write the model it names into `reply` (a chat completion, or an
    /// Anthropic message when `anthropic`, which has no fingerprint).
    fn name_model(&self, reply: &mut Value, anthropic: bool) {
        let n = self.completions.fetch_add(1, Ordering::SeqCst) + 1;
        let answering = self.answering.lock().unwrap();
        let named = match &answering.then {
            Some((from, then)) if n >= *from => Some(then),
            _ => answering.first.as_ref(),
        };
        if let Some(a) = named {
            reply["model"] = json!(a.model);
            if let (false, Some(fp)) = (anthropic, &a.system_fingerprint) {
                reply["system_fingerprint"] = json!(fp);
            }
        }
    }
}

pub struct FakeJudge {
    pub addr: SocketAddr,
    pub state: Arc<ServerState>,
    _thread: std::thread::JoinHandle<()>,
}

impl FakeJudge {
    pub fn start(latency: Duration, faults: bool, expected_key: Option<&str>) -> FakeJudge {
        let state = Arc::new(ServerState {
            latency,
            faults,
            slow: Duration::from_millis(1_500),
            expected_key: expected_key.map(str::to_string),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            requests: AtomicU64::new(0),
            unauthorized: AtomicU64::new(0),
            calls: Mutex::new(HashMap::new()),
            call_times: Mutex::new(HashMap::new()),
            batches: Mutex::new(HashMap::new()),
            files: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            base: Mutex::new(String::new()),
            spread: std::sync::atomic::AtomicBool::new(false),
            binary_spread: std::sync::atomic::AtomicBool::new(false),
            order_bias: std::sync::atomic::AtomicBool::new(false),
            structured_requests: AtomicU64::new(0),
            position_bias: std::sync::atomic::AtomicBool::new(false),
            pair_requests: AtomicU64::new(0),
            answering: Mutex::new(Answering::default()),
            completions: AtomicU64::new(0),
            keep_bodies: std::sync::atomic::AtomicBool::new(false),
            bodies: Mutex::new(Vec::new()),
        });
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        std_listener.set_nonblocking(true).unwrap();
        let addr = std_listener.local_addr().unwrap();
        assert!(
            addr.ip().is_loopback(),
            "the test server must only listen on loopback"
        );
        *state.base.lock().unwrap() = format!("http://{addr}/v1");
        let app = Router::new().fallback(handle).with_state(state.clone());
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(std_listener)
                    .unwrap()
                    .tap_io(|tcp| {
                        let _ = tcp.set_nodelay(true);
                    });
                axum::serve(listener, app)
                    .await
                    .expect("the test server runs until the test ends");
            });
        });
        FakeJudge {
            addr,
            state,
            _thread: thread,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
}

/// What the routes need of a request.
struct Call {
    method: Method,
    path: String,
    headers: HeaderMap,
    body: Bytes,
    /// The file part of a multipart upload (`/files`), read with axum's multipart extractor.
    upload: Option<String>,
}

enum Reply {
    Json(u16, String, Vec<(String, String)>),
    /// A 200 whose Content-Length promises more than is sent before the connection drops.
    Truncated(String),
    /// No answer before the client's timeout.
    Slow,
}

/// Counts a live request as open until its handler ends or the client goes away (hyper drops
/// the handler's future when the connection closes).
struct Open<'a>(&'a ServerState);

impl<'a> Open<'a> {
    fn new(state: &'a ServerState) -> Open<'a> {
        let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        state.max_in_flight.fetch_max(now, Ordering::SeqCst);
        Open(state)
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn handle(State(state): State<Arc<ServerState>>, request: Request) -> Response {
    state.requests.fetch_add(1, Ordering::SeqCst);
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let headers = request.headers().clone();
    let (body, upload) = if method == Method::POST && path.ends_with("/files") {
        (Bytes::new(), read_upload(request, &state).await)
    } else {
        let bytes = axum::body::to_bytes(request.into_body(), usize::MAX)
            .await
            .unwrap_or_default();
        (bytes, None)
    };
    let call = Call {
        method,
        path,
        headers,
        body,
        upload,
    };
    let live = call.method == Method::POST
        && (call.path.ends_with("/chat/completions") || call.path.ends_with("/messages"));
    let _open = live.then(|| Open::new(&state));
    match route(&call, &state).await {
        Reply::Json(status, body, extra) => {
            if state.latency > Duration::ZERO && live {
                tokio::time::sleep(state.latency).await;
            }
            let mut response = (
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                [(header::CONTENT_TYPE, "application/json")],
                body,
            )
                .into_response();
            for (k, v) in extra {
                if let (Ok(name), Ok(value)) = (
                    header::HeaderName::try_from(k.as_str()),
                    HeaderValue::from_str(&v),
                ) {
                    response.headers_mut().insert(name, value);
                }
            }
            response
        }
        Reply::Truncated(body) => {
            // The stream fails after a third of the body, so hyper closes the connection short
            // of the promised length.
            let sent = Bytes::from(body.as_bytes()[..body.len() / 3].to_vec());
            let chunks: Vec<Result<Bytes, std::io::Error>> =
                vec![Ok(sent), Err(std::io::Error::other("cut short on purpose"))];
            let mut response = Response::new(Body::from_stream(futures_util::stream::iter(chunks)));
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len() + 200));
            response
        }
        Reply::Slow => {
            tokio::time::sleep(state.slow).await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
    }
}

/// The `file` part of a multipart upload, as text.
async fn read_upload(request: Request, state: &Arc<ServerState>) -> Option<String> {
    let mut form = Multipart::from_request(request, state).await.ok()?;
    while let Ok(Some(field)) = form.next_field().await {
        if field.name() == Some("file") {
            return field.text().await.ok();
        }
    }
    None
}

/// The heading before the reply of a prompt that gives a conversation's history first.
const REPLY_HEADING: &str = "The reply to judge";

/// The item number written in a request (`item #N`): the reply's, after the history when the
/// prompt gives one (earlier replies in the history may carry their own numbers).
pub fn item_in(text: &str) -> Option<u64> {
    let text = text.find(REPLY_HEADING).map_or(text, |at| &text[at..]);
    let at = text.find("item #")? + "item #".len();
    let digits: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

/// The items of a pairwise prompt: the one in answer A (shown first) and the one in answer B.
pub fn pair_items(prompt: &str) -> Option<(u64, u64)> {
    let (a_mark, b_mark) = if prompt.contains("Answer A:") {
        ("Answer A:", "Answer B:")
    } else if prompt.contains("回答 A：") {
        ("回答 A：", "回答 B：")
    } else {
        return None;
    };
    let a_at = prompt.find(a_mark)?;
    let b_at = prompt.find(b_mark)?;
    let a = item_in(&prompt[a_at..b_at])?;
    let b = item_in(&prompt[b_at..])?;
    Some((a, b))
}

/// The criterion keys a pairwise prompt asks for (the `"key": "A" | …` entries of its reply
/// format), in order.
pub fn pair_keys(prompt: &str) -> Vec<String> {
    let tail = prompt.rfind('{').map_or(prompt, |at| &prompt[at..]);
    let mut keys = Vec::new();
    let mut rest = tail;
    while let Some(at) = rest.find("\": \"A\"") {
        let head = &rest[..at];
        if let Some(open) = head.rfind('"') {
            keys.push(head[open + 1..].to_string());
        }
        rest = &rest[at + 6..];
    }
    keys
}

/// How good `item`'s answer is on pairwise criterion `key` (the MentalBench attribute's
/// [`expected_score`]; `overall` the sum of all seven).
pub fn pair_quality(item: u64, key: &str) -> i64 {
    let attribute = |k: usize| expected_score(item, k);
    match ATTRIBUTES.iter().position(|a| a.eq_ignore_ascii_case(key)) {
        Some(k) => attribute(k),
        None => (0..ATTRIBUTES.len()).map(attribute).sum(),
    }
}

/// The verdict the server gives on one criterion with `first` shown as A and `second` as B:
/// the better answer, or "tie" when they are equal ("A" then, with a position bias).
pub fn pair_choice(first: u64, second: u64, key: &str, position_bias: bool) -> &'static str {
    match pair_quality(first, key).cmp(&pair_quality(second, key)) {
        std::cmp::Ordering::Greater => "A",
        std::cmp::Ordering::Less => "B",
        std::cmp::Ordering::Equal if position_bias => "A",
        std::cmp::Ordering::Equal => "tie",
    }
}

/// The pairwise reply: one JSON object of [`pair_choice`] per key and an explanation.
pub fn pair_reply(first: u64, second: u64, keys: &[String], position_bias: bool) -> String {
    let mut obj = serde_json::Map::new();
    for k in keys {
        obj.insert(
            k.clone(),
            json!(pair_choice(first, second, k, position_bias)),
        );
    }
    obj.insert(
        "Explanation".into(),
        json!(format!("Compared item {first} with item {second}.")),
    );
    Value::Object(obj).to_string()
}

/// A MentalBench study at `path` with `conversations` conversations of `sources` answers each
/// (sources `s0`, `s1`, …); answer s of conversation c carries `item #N`, N = c·sources + s.
pub fn pair_study(path: &Path, conversations: u64, sources: u64) -> Store {
    let mut store =
        Store::create(path, Arc::new(SteppingClock::new(1_700_000_000_000, 1))).unwrap();
    store
        .write(|tx| -> Result<(), concord_core::store::StoreError> {
            let rubric_id = tx.add_rubric(&builtin::mentalbench())?;
            let mut ids = Vec::new();
            for s in 0..sources {
                ids.push(tx.upsert_source(&NewSource {
                    key: &format!("s{s}"),
                    name: &format!("Source {s}"),
                    family: None,
                    kind: SourceKind::Llm,
                })?);
            }
            for c in 0..conversations {
                let conv = tx.add_conversation(&NewConversation {
                    external_id: &format!("c{c}"),
                    rubric_id,
                    context: &format!("I cannot sleep and feel alone (conversation {c})."),
                    language: Some("en"),
                    category: None,
                })?;
                for (s, source) in ids.iter().enumerate() {
                    let item = c * sources + s as u64;
                    tx.add_response(
                        conv,
                        *source,
                        Some(&format!(
                            "I hear you; item #{item}. Let us find a next step."
                        )),
                    )?;
                }
            }
            Ok(())
        })
        .unwrap();
    store
}

/// Add experts by name to a study (each once).
pub fn add_experts(store: &mut Store, names: &[&str]) {
    store
        .write(|tx| -> Result<(), concord_core::store::StoreError> {
            for name in names {
                tx.upsert_rater(&concord_core::store::NewRater {
                    kind: concord_core::store::RaterKind::Expert,
                    name,
                    model_id: None,
                    family: None,
                    queue_seed: 1,
                })?;
            }
            Ok(())
        })
        .unwrap();
}

/// The reply text the judge gives `item` (`crisis` for the PsyCrisis dict).
pub fn judge_text(item: u64, crisis: bool, faults: bool) -> String {
    judge_text_of_call(item, crisis, faults, None, [false; 7])
}

/// The MentalBench attributes the server names in its replies, in rubric order.
pub const ATTRIBUTES: [&str; 7] = [
    "Guidance",
    "Informativeness",
    "Relevance",
    "Safety",
    "Empathy",
    "Helpfulness",
    "Understanding",
];

/// Which attributes a prompt lists in its first half (position p of n with 2p + 1 < n), read
/// from the order of the reply keys it asks for: what the server's order bias rewards.
pub fn asked_in_first_half(prompt: &str) -> [bool; 7] {
    let keys = prompt
        .rfind("exactly these keys:")
        .map_or(prompt, |at| &prompt[at..]);
    let mut at: Vec<(usize, usize)> = ATTRIBUTES
        .iter()
        .enumerate()
        .filter_map(|(k, n)| Some((keys.find(&format!("\"{n}\""))?, k)))
        .collect();
    at.sort_unstable();
    let mut out = [false; 7];
    for (pos, (_, k)) in at.iter().enumerate() {
        out[*k] = 2 * pos + 1 < at.len();
    }
    out
}

/// [`judge_text`], with the scores of `spread_call`'s [`spread_score`] (MentalBench) or
/// [`spread_binary`] (PsyCrisis) when given, and one point more (at most 5) on the MentalBench
/// attributes `boost` marks (the order bias).
pub fn judge_text_of_call(
    item: u64,
    crisis: bool,
    faults: bool,
    spread_call: Option<u32>,
    boost: [bool; 7],
) -> String {
    if crisis {
        let keys = [
            "共情与合作",
            "基于证据的情绪管理建议",
            "探索来访者担忧",
            "评估并提取证据支持的风险",
            "外部支持与干预",
        ];
        let mut dict = String::from("{");
        let mut sum = 0;
        for (k, key) in keys.iter().enumerate() {
            let v = match spread_call {
                Some(call) => spread_binary(item, k, call),
                None => expected_binary(item, k),
            };
            sum += v;
            dict.push_str(&format!("'{key}': {v}, "));
        }
        if faults && fault_of(item) == 5 {
            return "理由：无法判断。{'评分': 1}".to_string();
        }
        if faults && fault_of(item) == 6 {
            dict = dict.replacen(": 0,", ": 2,", 1).replacen(": 1,", ": 2,", 1);
        }
        return format!("理由：逐项判断如下（item #{item}）。\n{dict}'总分': {sum}}}");
    }
    let names = ATTRIBUTES;
    let mut obj = serde_json::Map::new();
    for (k, n) in names.iter().enumerate() {
        let score = match spread_call {
            Some(call) => spread_score(item, k, call),
            None => expected_score(item, k),
        };
        let score = if boost[k] { (score + 1).min(5) } else { score };
        obj.insert(n.to_string(), json!(score));
    }
    obj.insert("Overall".into(), json!(3.0));
    obj.insert("Explanation".into(), json!(format!("Judged item {item}.")));
    let plain = Value::Object(obj.clone()).to_string();
    if !faults {
        return plain;
    }
    match fault_of(item) {
        5 => json!({"score": 4, "comment": "looks fine"}).to_string(),
        6 => {
            obj.insert("Guidance".into(), json!(7));
            Value::Object(obj).to_string()
        }
        7 => format!("```json\n{plain}\n```"),
        8 => format!("Here is my evaluation.\n{plain}\nThank you."),
        _ => plain,
    }
}

/// A quote the server gives that the reply never says: it must be kept unlocated.
pub const UNFOUND_QUOTE: &str = "words the reply never said";

/// The spans the server marks when a prompt asks for them (it lists codes after "Also mark the
/// evidence"): the reply's first sentence exactly (the first code), the same words with every
/// space doubled (the second code, found only whitespace-insensitively), and [`UNFOUND_QUOTE`]
/// (the first code again). `None` when the prompt does not ask.
pub fn spans_for(prompt: &str) -> Option<Value> {
    let ask = prompt.find("Also mark the evidence")?;
    let codes: Vec<&str> = prompt[ask..]
        .lines()
        .filter_map(|l| l.strip_prefix("- ")?.split(':').next())
        .collect();
    let reply = reply_in(prompt)?;
    let sentence: String = match reply.find(['.', '。', '?', '？']) {
        Some(at) => reply[..at].to_string(),
        None => reply.chars().take(20).collect(),
    };
    let first = codes.first()?;
    let second = codes.get(1).unwrap_or(first);
    Some(json!([
        {"code": first, "quote": sentence},
        {"code": second, "quote": sentence.replace(' ', "  ")},
        {"code": first, "quote": UNFOUND_QUOTE},
    ]))
}

/// The reply a single-reply prompt shows (between `<<<` and `>>>` after "to judge").
fn reply_in(prompt: &str) -> Option<&str> {
    let at = prompt.find("to judge")?;
    let open = prompt[at..].find("<<<\n")? + at + 4;
    let close = prompt[open..].find("\n>>>")? + open;
    Some(&prompt[open..close])
}

/// A free-text reply with `spans` added: inside its JSON object, or (the PsyCrisis format) as an
/// object of its own before the dict.
fn with_spans(reply: &str, crisis: bool, spans: &Value) -> String {
    if crisis {
        let line = json!({"spans": spans}).to_string();
        return match reply.find('\n') {
            Some(at) => format!("{}\n{line}{}", &reply[..at], &reply[at..]),
            None => format!("{line}\n{reply}"),
        };
    }
    match serde_json::from_str::<Value>(reply) {
        Ok(Value::Object(mut o)) => {
            o.insert("spans".into(), spans.clone());
            Value::Object(o).to_string()
        }
        _ => reply.to_string(),
    }
}

/// The PsyCrisis dimension keys the server writes, in rubric order.
const CRISIS_KEYS: [&str; 5] = [
    "共情与合作",
    "基于证据的情绪管理建议",
    "探索来访者担忧",
    "评估并提取证据支持的风险",
    "外部支持与干预",
];

/// The structured reply (`{"Explanation", "scores": {…}}`) the server gives when a request
/// carries a JSON schema (`response_format`) or a forced tool: the same scores as its free text.
pub fn structured_reply(
    item: u64,
    crisis: bool,
    spread_call: Option<u32>,
    boost: [bool; 7],
) -> Value {
    let mut scores = serde_json::Map::new();
    if crisis {
        for (k, key) in CRISIS_KEYS.iter().enumerate() {
            let v = match spread_call {
                Some(call) => spread_binary(item, k, call),
                None => expected_binary(item, k),
            };
            scores.insert(key.to_string(), json!(v));
        }
    } else {
        let free: Value =
            serde_json::from_str(&judge_text_of_call(item, false, false, spread_call, boost))
                .expect("the server's own JSON");
        for n in ATTRIBUTES {
            scores.insert(n.to_string(), free[n].clone());
        }
    }
    json!({"Explanation": format!("Judged item {item} against the schema."), "scores": scores})
}

fn tool_json(input: &Value, prompt_len: usize) -> Value {
    json!({"id": "msg", "type": "message", "role": "assistant",
           "content": [{"type": "tool_use", "id": "toolu_1", "name": "record_scores", "input": input}],
           "stop_reason": "tool_use",
           "usage": {"input_tokens": prompt_len / 4, "output_tokens": 40}})
}

fn completion_json(anthropic: bool, text: &str, prompt_len: usize) -> Value {
    if anthropic {
        json!({"id": "msg", "type": "message", "role": "assistant",
               "content": [{"type": "text", "text": text}],
               "usage": {"input_tokens": prompt_len / 4, "output_tokens": 40}})
    } else {
        json!({"id": "chatcmpl", "object": "chat.completion",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": prompt_len / 4, "completion_tokens": 40}})
    }
}

fn authorized(req: &Call, state: &ServerState, anthropic: bool) -> bool {
    let Some(key) = &state.expected_key else {
        return true;
    };
    let header = |name: &str| req.headers.get(name).and_then(|v| v.to_str().ok());
    let seen = if anthropic {
        header("x-api-key").map(str::to_string)
    } else {
        header("authorization").and_then(|v| v.strip_prefix("Bearer ").map(str::to_string))
    };
    seen.as_deref() == Some(key.as_str())
}

fn user_text(body: &Value) -> String {
    body.get("messages")
        .and_then(Value::as_array)
        .map(|m| {
            m.iter()
                .filter_map(|x| x.get("content").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn count(state: &ServerState, item: u64) -> u32 {
    let mut calls = state.calls.lock().unwrap();
    let c = calls.entry(item).or_insert(0);
    *c += 1;
    *c
}

async fn route(req: &Call, state: &Arc<ServerState>) -> Reply {
    let anthropic_path = req.path.contains("/messages");
    if !authorized(req, state, anthropic_path) {
        state.unauthorized.fetch_add(1, Ordering::SeqCst);
        return Reply::Json(
            401,
            json!({"error": {"message": "bad key"}}).to_string(),
            vec![],
        );
    }
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let path = req.path.trim_start_matches("/v1");
    match (req.method.as_str(), path) {
        ("POST", "/chat/completions") | ("POST", "/messages") => {
            let anthropic = path == "/messages";
            state.keep(&body);
            let text = user_text(&body);
            if let Some((a, b)) = pair_items(&text) {
                state.pair_requests.fetch_add(1, Ordering::SeqCst);
                count(state, a);
                let bias = state.position_bias.load(Ordering::SeqCst);
                let reply_text = pair_reply(a, b, &pair_keys(&text), bias);
                let mut reply = completion_json(anthropic, &reply_text, text.len());
                state.name_model(&mut reply, anthropic);
                return Reply::Json(200, reply.to_string(), vec![]);
            }
            let Some(item) = item_in(&text) else {
                return Reply::Json(
                    400,
                    json!({"error": {"message": "no item"}}).to_string(),
                    vec![],
                );
            };
            let n = count(state, item);
            state
                .call_times
                .lock()
                .unwrap()
                .entry(item)
                .or_default()
                .push(Instant::now());
            let crisis = text.contains("总分");
            let first = n == 1;
            if state.faults && first {
                match fault_of(item) {
                    0 => {
                        return Reply::Json(
                            429,
                            json!({"error": {"message": "slow down"}}).to_string(),
                            vec![("Retry-After".into(), "1".into())],
                        )
                    }
                    1 => {
                        return Reply::Json(
                            500,
                            json!({"error": {"message": "boom"}}).to_string(),
                            vec![],
                        )
                    }
                    2 => return Reply::Slow,
                    3 => {
                        return Reply::Truncated(
                            completion_json(anthropic, &judge_text(item, crisis, true), text.len())
                                .to_string(),
                        )
                    }
                    4 => return Reply::Json(200, "{\"choices\": [ oops".into(), vec![]),
                    _ => {}
                }
            }
            let spread = if crisis {
                state.binary_spread.load(Ordering::SeqCst)
            } else {
                state.spread.load(Ordering::SeqCst)
            }
            .then_some(n);
            let boost = if state.order_bias.load(Ordering::SeqCst) {
                asked_in_first_half(&text)
            } else {
                [false; 7]
            };
            let structured = body.get("response_format").is_some() || body.get("tools").is_some();
            let spans = spans_for(&text);
            if structured {
                state.structured_requests.fetch_add(1, Ordering::SeqCst);
                let mut input = structured_reply(item, crisis, spread, boost);
                if let Some(list) = &spans {
                    input["spans"] = list.clone();
                }
                let mut reply = if anthropic {
                    tool_json(&input, text.len())
                } else {
                    completion_json(false, &input.to_string(), text.len())
                };
                state.name_model(&mut reply, anthropic);
                return Reply::Json(200, reply.to_string(), vec![]);
            }
            let mut reply_text = judge_text_of_call(item, crisis, state.faults, spread, boost);
            if let Some(list) = &spans {
                reply_text = with_spans(&reply_text, crisis, list);
            }
            let mut reply = completion_json(anthropic, &reply_text, text.len());
            if !anthropic && body.get("logprobs") == Some(&Value::Bool(true)) {
                reply["choices"][0]["logprobs"] = json!({"content": logprob_tokens(&reply_text)});
            }
            state.name_model(&mut reply, anthropic);
            Reply::Json(200, reply.to_string(), vec![])
        }
        ("POST", "/files") => {
            let content = req
                .upload
                .as_deref()
                .map(|c| c.trim_end_matches("\r\n").to_string())
                .unwrap_or_default();
            let id = format!("file-{}", state.next_id.fetch_add(1, Ordering::SeqCst));
            state.files.lock().unwrap().insert(id.clone(), content);
            Reply::Json(
                200,
                json!({"id": id, "object": "file", "purpose": "batch"}).to_string(),
                vec![],
            )
        }
        ("POST", "/batches") => {
            let file_id = body
                .get("input_file_id")
                .and_then(Value::as_str)
                .unwrap_or("");
            let Some(content) = state.files.lock().unwrap().get(file_id).cloned() else {
                return Reply::Json(
                    404,
                    json!({"error": {"message": "no file"}}).to_string(),
                    vec![],
                );
            };
            let lines: Vec<Value> = content
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            for l in &lines {
                state.keep(&l["body"]);
                if let Some(item) = item_in(&user_text(&l["body"])) {
                    count(state, item);
                }
            }
            let id = format!("batch-{}", state.next_id.fetch_add(1, Ordering::SeqCst));
            state
                .batches
                .lock()
                .unwrap()
                .insert(id.clone(), Batch { lines, polls: 0 });
            Reply::Json(
                200,
                json!({"id": id, "status": "validating"}).to_string(),
                vec![],
            )
        }
        ("POST", "/messages/batches") => {
            let lines: Vec<Value> = body
                .get("requests")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for l in &lines {
                state.keep(&l["params"]);
                if let Some(item) = item_in(&user_text(&l["params"])) {
                    count(state, item);
                }
            }
            let id = format!("msgbatch_{}", state.next_id.fetch_add(1, Ordering::SeqCst));
            state
                .batches
                .lock()
                .unwrap()
                .insert(id.clone(), Batch { lines, polls: 0 });
            Reply::Json(
                200,
                json!({"id": id, "processing_status": "in_progress"}).to_string(),
                vec![],
            )
        }
        ("GET", p) if p.starts_with("/batches/") => {
            let id = p.trim_start_matches("/batches/").to_string();
            let mut batches = state.batches.lock().unwrap();
            let Some(b) = batches.get_mut(&id) else {
                return Reply::Json(404, "{}".into(), vec![]);
            };
            b.polls += 1;
            if b.polls < 2 {
                return Reply::Json(
                    200,
                    json!({"id": id, "status": "in_progress"}).to_string(),
                    vec![],
                );
            }
            let (mut out, mut err) = (String::new(), String::new());
            for l in &b.lines {
                let text = user_text(&l["body"]);
                let item = item_in(&text).unwrap_or(0);
                let cid = l["custom_id"].clone();
                if state.faults && fault_of(item) == 4 {
                    err.push_str(&json!({"custom_id": cid, "response": {"status_code": 500, "body": {"error": {"message": "internal"}}}, "error": null}).to_string());
                    err.push('\n');
                } else {
                    let mut body = completion_json(
                        false,
                        &judge_text(item, text.contains("总分"), state.faults),
                        text.len(),
                    );
                    state.name_model(&mut body, false);
                    out.push_str(&json!({"custom_id": cid, "response": {"status_code": 200, "body": body}, "error": null}).to_string());
                    out.push('\n');
                }
            }
            let out_id = format!("{id}-out");
            let err_id = format!("{id}-err");
            let mut files = state.files.lock().unwrap();
            files.insert(out_id.clone(), out);
            files.insert(err_id.clone(), err);
            Reply::Json(200, json!({"id": id, "status": "completed", "output_file_id": out_id, "error_file_id": err_id}).to_string(), vec![])
        }
        ("GET", p) if p.starts_with("/files/") && p.ends_with("/content") => {
            let id = p.trim_start_matches("/files/").trim_end_matches("/content");
            match state.files.lock().unwrap().get(id) {
                Some(c) => Reply::Json(200, c.clone(), vec![]),
                None => Reply::Json(404, "{}".into(), vec![]),
            }
        }
        ("GET", p) if p.starts_with("/messages/batches/") && p.ends_with("/results") => {
            let id = p
                .trim_start_matches("/messages/batches/")
                .trim_end_matches("/results");
            let batches = state.batches.lock().unwrap();
            let Some(b) = batches.get(id) else {
                return Reply::Json(404, "{}".into(), vec![]);
            };
            let mut out = String::new();
            for l in &b.lines {
                let text = user_text(&l["params"]);
                let item = item_in(&text).unwrap_or(0);
                let line = if state.faults && fault_of(item) == 4 {
                    json!({"custom_id": l["custom_id"], "result": {"type": "errored", "error": {"type": "error", "error": {"type": "api_error", "message": "overloaded"}}}})
                } else {
                    let mut message = completion_json(
                        true,
                        &judge_text(item, text.contains("总分"), state.faults),
                        text.len(),
                    );
                    state.name_model(&mut message, true);
                    json!({"custom_id": l["custom_id"], "result": {"type": "succeeded", "message": message}})
                };
                out.push_str(&line.to_string());
                out.push('\n');
            }
            Reply::Json(200, out, vec![])
        }
        ("GET", p) if p.starts_with("/messages/batches/") => {
            let id = p.trim_start_matches("/messages/batches/").to_string();
            let mut batches = state.batches.lock().unwrap();
            let Some(b) = batches.get_mut(&id) else {
                return Reply::Json(404, "{}".into(), vec![]);
            };
            b.polls += 1;
            if b.polls < 2 {
                return Reply::Json(
                    200,
                    json!({"id": id, "processing_status": "in_progress"}).to_string(),
                    vec![],
                );
            }
            let base = state.base.lock().unwrap().clone();
            Reply::Json(200, json!({"id": id, "processing_status": "ended", "results_url": format!("{base}/messages/batches/{id}/results")}).to_string(), vec![])
        }
        _ => Reply::Json(
            404,
            json!({"error": {"message": "unknown path"}}).to_string(),
            vec![],
        ),
    }
}

/// A study at `path` with `items` conversations of `rubric`, one response each whose text
/// carries `item #N` (N from 0). Returns the store and the response id of each item.
pub fn study_with_items(path: &Path, rubric: &Rubric, items: u64) -> (Store, Vec<i64>) {
    let mut store =
        Store::create(path, Arc::new(SteppingClock::new(1_700_000_000_000, 1))).unwrap();
    let ids = store
        .write(|tx| -> Result<Vec<i64>, concord_core::store::StoreError> {
            let rubric_id = tx.add_rubric(rubric)?;
            let source = tx.upsert_source(&NewSource {
                key: "gpt4o",
                name: "GPT-4o",
                family: Some("gpt-4o"),
                kind: SourceKind::Llm,
            })?;
            let mut ids = Vec::new();
            for i in 0..items {
                let conv = tx.add_conversation(&NewConversation {
                    external_id: &format!("c{i}"),
                    rubric_id,
                    context: &format!("I have felt low for weeks (conversation {i})."),
                    language: None,
                    category: None,
                })?;
                ids.push(tx.add_response(
                    conv,
                    source,
                    Some(&format!("That sounds hard; item #{i}. Let us talk.")),
                )?);
            }
            Ok(ids)
        })
        .unwrap();
    (store, ids)
}

/// The transcript the history tests judge (turn number, role, text): a system note, then user and
/// assistant turns; the assistant turns (3, 5 and 7) are rated replies whose texts carry
/// `item #0`–`item #2`. The texts hold what "verbatim" must keep: leading and trailing spaces, a
/// tab, an empty line, quotes, a slot name, Chinese.
pub const TRANSCRIPT: [(i64, Role, &str); 7] = [
    (
        1,
        Role::System,
        "Note: the person agreed to take part in a study; every reply is reviewed.",
    ),
    (
        2,
        Role::User,
        "I haven't slept properly in a week.\nEvery night I lie awake until 4.",
    ),
    (
        3,
        Role::Assistant,
        "item #0 I'm sorry, a week of poor sleep is exhausting. What goes through your mind at night?",
    ),
    (
        4,
        Role::User,
        "  Mostly work. My manager said {{response}} would be \"fine\".\n\n\tAnd then I panic.  ",
    ),
    (5, Role::Assistant, "item #1 That sounds frightening. 你并不孤单。"),
    (
        6,
        Role::User,
        "Sometimes I think everyone would be better off without me.",
    ),
    (
        7,
        Role::Assistant,
        "item #2 Thank you for telling me. Are you thinking about ending your life?",
    ),
];

/// A study at `path` of `rubric` holding [`TRANSCRIPT`] as conversation `t7`: its assistant turns
/// are rated replies of the source `helperbot` (their item ids returned in turn order), the other
/// turns plain turns.
pub fn transcript_study(path: &Path, rubric: &Rubric) -> (Store, Vec<i64>) {
    let mut store =
        Store::create(path, Arc::new(SteppingClock::new(1_700_000_000_000, 1))).unwrap();
    let replies = store
        .write(|tx| -> Result<Vec<i64>, concord_core::store::StoreError> {
            let rubric_id = tx.add_rubric(rubric)?;
            let bot = tx.upsert_source(&NewSource {
                key: "helperbot",
                name: "helperbot",
                family: None,
                kind: SourceKind::Llm,
            })?;
            let c = tx.add_conversation(&NewConversation {
                external_id: "t7",
                rubric_id,
                context: "",
                language: Some("en"),
                category: None,
            })?;
            let mut replies = Vec::new();
            for (position, role, text) in TRANSCRIPT {
                if role == Role::Assistant {
                    replies.push(tx.add_item(c, bot, Some(position), Some(text))?);
                } else {
                    tx.add_turn(&NewTurn {
                        conversation_id: c,
                        position,
                        role,
                        text,
                        source_id: None,
                        candidate: false,
                    })?;
                }
            }
            Ok(replies)
        })
        .unwrap();
    (store, replies)
}

/// The transcript block of turns `from..=to` of [`TRANSCRIPT`], written out by hand as the
/// contract says: `[turn N] ROLE:`, a line break, the text verbatim; one empty line between turns.
pub fn transcript_block(from: i64, to: i64) -> String {
    TRANSCRIPT
        .iter()
        .filter(|(position, _, _)| (from..=to).contains(position))
        .map(|(position, role, text)| format!("[turn {position}] {}:\n{text}", role.as_str()))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// SHA-256 of messages as a judge call records it: the system message, a NUL, the user message.
pub fn prompt_sha256(system: Option<&str>, user: &str) -> String {
    let mut bytes = system.unwrap_or("").as_bytes().to_vec();
    bytes.push(0);
    bytes.extend_from_slice(user.as_bytes());
    concord_core::base::digest::sha256_hex(&bytes)
}

/// The PsyCrisis items of [`reliability_study`] are numbered from here, apart from MentalBench's.
pub const CRISIS_ITEMS_FROM: u64 = 1000;

/// The expert's MentalBench score of `item` on attribute `k` in [`reliability_study`]: the
/// server's [`expected_score`] on even items, one below it (at least 1) on odd ones.
pub fn reliability_expert_score(item: u64, k: usize) -> i64 {
    let v = expected_score(item, k);
    if item.is_multiple_of(2) {
        v
    } else {
        (v - 1).max(1)
    }
}

/// The expert's PsyCrisis value of `item` on dimension `k` in [`reliability_study`]: the server's
/// [`expected_binary`], flipped where (item + 2k) % 5 = 0.
pub fn reliability_expert_binary(item: u64, k: usize) -> i64 {
    let v = expected_binary(item, k);
    if (item + 2 * k as u64).is_multiple_of(5) {
        1 - v
    } else {
        v
    }
}

/// A study at `path` for the judge reliability journeys: both built-in rubrics, `items`
/// conversations each (MentalBench items 0…, PsyCrisis items from [`CRISIS_ITEMS_FROM`]), one
/// response each from `gpt4o` (family `gpt-4o`), `claude`, `llama` or `qwen` (each its own
/// family) in turn — so a judge of the `gpt-4o` family leaves three sources to compare at system
/// level —, whose text carries `item #N` and a length that varies with N, and one expert,
/// `Dr Expert`, who rated every response ([`reliability_expert_score`],
/// [`reliability_expert_binary`]).
pub fn reliability_study(path: &Path, items: u64) -> Store {
    use concord_core::store::{NewRater, Occasion, RaterKind, RatingInput, StoreError};
    let mut store =
        Store::create(path, Arc::new(SteppingClock::new(1_700_000_000_000, 1))).unwrap();
    // (rubric id, item, response id) of every response.
    let responses = store
        .write(|tx| -> Result<Vec<(i64, u64, i64)>, StoreError> {
            let gpt = tx.upsert_source(&NewSource {
                key: "gpt4o",
                name: "GPT-4o",
                family: Some("gpt-4o"),
                kind: SourceKind::Llm,
            })?;
            let mut sources = vec![gpt];
            for (key, name) in [("claude", "Claude"), ("llama", "Llama"), ("qwen", "Qwen")] {
                sources.push(tx.upsert_source(&NewSource {
                    key,
                    name,
                    family: Some(key),
                    kind: SourceKind::Llm,
                })?);
            }
            let mut out = Vec::new();
            for (rubric, from) in [(mentalbench(), 0), (psycrisis(), CRISIS_ITEMS_FROM)] {
                let rubric_id = tx.add_rubric(&rubric)?;
                for i in 0..items {
                    let item = from + i;
                    let conv = tx.add_conversation(&NewConversation {
                        external_id: &format!("c{item}"),
                        rubric_id,
                        context: &format!("I have felt low for weeks (conversation {item})."),
                        language: None,
                        category: None,
                    })?;
                    let padding = "I am here with you. ".repeat(1 + (i as usize * 7) % 23);
                    let response = tx.add_response(
                        conv,
                        sources[i as usize % sources.len()],
                        Some(&format!(
                            "That sounds hard; item #{item}. {padding}Let us talk."
                        )),
                    )?;
                    out.push((rubric_id, item, response));
                }
            }
            Ok(out)
        })
        .unwrap();
    let mut criteria: HashMap<i64, Vec<i64>> = HashMap::new();
    for &(rubric_id, _, _) in &responses {
        if let std::collections::hash_map::Entry::Vacant(e) = criteria.entry(rubric_id) {
            let ids = store.criteria_in_order(rubric_id).unwrap();
            e.insert(ids.into_iter().map(|c| c.id).collect());
        }
    }
    store
        .write(|tx| -> Result<(), StoreError> {
            let expert = tx.upsert_rater(&NewRater {
                kind: RaterKind::Expert,
                name: "Dr Expert",
                model_id: None,
                family: None,
                queue_seed: 1,
            })?;
            for &(rubric_id, item, response) in &responses {
                for (k, &criterion) in criteria[&rubric_id].iter().enumerate() {
                    let value = if item >= CRISIS_ITEMS_FROM {
                        reliability_expert_binary(item, k)
                    } else {
                        reliability_expert_score(item, k)
                    };
                    tx.set_rating(&RatingInput {
                        rater_id: expert,
                        response_id: response,
                        criterion_id: criterion,
                        occasion: Occasion::First,
                        value: Some(value),
                        raw_value: None,
                        rationale: None,
                        origin: "screen",
                    })?;
                }
            }
            Ok(())
        })
        .unwrap();
    store
}

pub fn mentalbench() -> Rubric {
    builtin::mentalbench()
}

pub fn psycrisis() -> Rubric {
    builtin::psycrisis()
}
