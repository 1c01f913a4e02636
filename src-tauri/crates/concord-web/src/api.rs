//! The routes. `/api/…` is JSON: what the pages before a login say of the study (`welcome`), the
//! invitation, login and logout routes, and a rater session's calls, each one core use case of
//! `concord_core::app` with the expert taken from the session. Every API route but the welcome,
//! the invitation check, its acceptance and the login answers 401 without a live session; every write (POST) of a session carries its CSRF token; bodies are JSON (a form
//! from another site cannot post one) and at most the configured size (larger gets 413). A saved
//! value goes to the writer ([`crate::writer`]), which checks its session's login with the value
//! and acknowledges it once the transaction holding it has committed. Any other GET is a file of
//! the UI build ([`Assets`]).

use crate::assets::Assets;
use crate::error::WebError;
use crate::listen::Peer;
use crate::session::{same, Lookup, Session, COOKIE, CSRF_HEADER};
use crate::Shared;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Extension;
use axum::{Json, Router};
use concord_core::app;
use concord_core::app::rating::SpanOrigin;
use concord_core::app::web::WebSave;
use concord_core::workflow::calibration::{CalibrationItem, CalibrationStatus};
use concord_core::workflow::queue::{ItemProgress, LeftItem, QueueSummary, RatingItem};
use concord_core::workflow::signoff::SignoffState;
use concord_core::workflow::spans::{ItemSpans, ShownSpan, SpanAt};
use concord_core::workflow::web_access::WebAccessError;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Clone)]
struct AppState {
    shared: Arc<Shared>,
    assets: Arc<Assets>,
}

/// The router of one server.
pub fn router(shared: Arc<Shared>, assets: Assets, body_limit: usize, hsts: bool) -> Router {
    let state = AppState {
        shared,
        assets: Arc::new(assets),
    };
    let session_routes = Router::new()
        .route("/api/session", get(session_info))
        .route("/api/logout", post(logout))
        .route("/api/queue", get(queue))
        .route("/api/items/{item}", get(item))
        .route("/api/left", get(left_items))
        .route("/api/items/{item}/rationale", post(rationale))
        .route("/api/items/{item}/flag", post(flag))
        .route("/api/items/{item}/leave", post(leave))
        .route("/api/calibration", get(calibration_status))
        .route(
            "/api/calibration/{item}",
            get(calibration_item).post(calibration_answer),
        )
        .route("/api/signoff", get(signoff_state).post(sign_off))
        .route("/api/signoff/passphrase", post(signing_passphrase))
        .route("/api/pairs", get(pair_queue))
        .route("/api/pairs/{item}", get(pair_item))
        .route("/api/pairs/{item}/choose", post(rate_pair))
        .route("/api/pairs/{item}/rationale", post(pair_rationale))
        .route("/api/pairs/{item}/flag", post(pair_flag))
        .route("/api/pairs/{item}/leave", post(pair_leave))
        // Evidence spans the expert marks in the reply they rate.
        .route("/api/items/{item}/spans", get(item_spans).post(mark_span))
        .route("/api/items/{item}/spans/change", post(change_span))
        .route("/api/items/{item}/spans/remove", post(remove_span))
        // Runs before any extractor reads the request: no session, no parsing.
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_session,
        ));
    // A save's login is checked by the writer with the value ([`crate::writer`]): its route
    // layer checks the session and CSRF token without the study.
    let save_route = Router::new()
        .route("/api/items/{item}/rate", post(rate))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_session_for_a_save,
        ));
    Router::new()
        .route("/api/welcome", get(welcome))
        .route("/api/invitation", post(invitation))
        .route("/api/invitation/accept", post(accept))
        .route("/api/login", post(login))
        .merge(session_routes)
        .merge(save_route)
        .route("/api/{*rest}", axum::routing::any(no_such_route))
        .fallback(static_file)
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(axum::middleware::from_fn(move |r, n| {
            crate::headers::add(hsts, r, n)
        }))
        .with_state(state)
}

/// The routes a test walks: every session route of the API with its method and a sample path.
pub const SESSION_ROUTES: &[(&str, &str)] = &[
    ("GET", "/api/session"),
    ("POST", "/api/logout"),
    ("GET", "/api/queue"),
    ("GET", "/api/items/1"),
    ("POST", "/api/items/1/rate"),
    ("POST", "/api/items/1/rationale"),
    ("POST", "/api/items/1/flag"),
    ("POST", "/api/items/1/leave"),
    ("GET", "/api/calibration"),
    ("GET", "/api/calibration/1"),
    ("POST", "/api/calibration/1"),
    ("GET", "/api/signoff"),
    ("POST", "/api/signoff"),
    ("POST", "/api/signoff/passphrase"),
    ("GET", "/api/pairs"),
    ("GET", "/api/pairs/1"),
    ("POST", "/api/pairs/1/choose"),
    ("POST", "/api/pairs/1/rationale"),
    ("POST", "/api/pairs/1/flag"),
    ("POST", "/api/pairs/1/leave"),
    ("GET", "/api/items/1/spans"),
    ("POST", "/api/items/1/spans"),
    ("POST", "/api/items/1/spans/change"),
    ("POST", "/api/items/1/spans/remove"),
];

async fn no_such_route() -> Response {
    let message = crate::messages::Said::NoRoute.text(crate::messages::current());
    (
        StatusCode::NOT_FOUND,
        Json(serde_json::json!({"code": "not_found", "message": message})),
    )
        .into_response()
}

async fn static_file(State(state): State<AppState>, method: Method, uri: Uri) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    state.assets.answer(uri.path())
}

fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.to_string())
}

/// The live session of a request (or 401): known, not idle, its login still standing. With
/// `standing` [`Standing::WithTheSave`] the login is checked by the writer with the value
/// instead, and the study is read here only when the session's presence is due to be noted.
async fn session(
    state: &AppState,
    headers: &HeaderMap,
    standing: Standing,
) -> Result<(String, Session), WebError> {
    let token = cookie_token(headers).ok_or(WebError::Unauthorized)?;
    let (session, due) = match state.shared.sessions.touch(&token) {
        Lookup::Found(s, due) => (s, due),
        Lookup::Expired(identity) => {
            let rater = identity.rater.clone();
            let t = token.clone();
            let _ = state
                .shared
                .with_study(move |s| app::web::logged_out(s, &rater, &t, true))
                .await;
            return Err(WebError::Unauthorized);
        }
        Lookup::Unknown => {
            // A session the study kept, from before this server started.
            let t = token.clone();
            let kept = state
                .shared
                .with_study(move |s| app::web::kept_session(s, &t))
                .await?
                .ok_or(WebError::Unauthorized)?;
            let (identity, last_seen) = kept;
            match state
                .shared
                .sessions
                .restore(&token, identity.clone(), last_seen)
            {
                Some(s) => (s, false),
                None => {
                    let t = token.clone();
                    let _ = state
                        .shared
                        .with_study(move |s| app::web::logged_out(s, &identity.rater, &t, true))
                        .await;
                    return Err(WebError::Unauthorized);
                }
            }
        }
    };
    if standing == Standing::WithTheSave && !due {
        return Ok((token, session));
    }
    let identity = session.identity.clone();
    let noted = token.clone();
    let stands = state
        .shared
        .with_study(move |s| {
            let stands = app::web::stands(s, &identity)?;
            if stands && due {
                app::web::seen(s, &identity.rater, &noted)?;
            }
            Ok::<_, concord_core::workflow::web_access::WebAccessError>(stands)
        })
        .await?;
    if !stands {
        state
            .shared
            .sessions
            .close_all_of(session.identity.rater.id);
        return Err(WebError::Unauthorized);
    }
    Ok((token, session))
}

/// Where a request's login is checked to still stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// Here, before the handler.
    Here,
    /// By the writer, in the same hold of the study as the value it saves.
    WithTheSave,
}

/// [`session`] for a write: the CSRF token must be the session's.
async fn writing(
    state: &AppState,
    headers: &HeaderMap,
    standing: Standing,
) -> Result<Session, WebError> {
    let (_, s) = session(state, headers, standing).await?;
    let given = headers
        .get(CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !same(given, &s.csrf) {
        return Err(WebError::Csrf);
    }
    Ok(s)
}

/// The guard of every session route: a live session (401 otherwise) and, for a write, its CSRF
/// token (403 otherwise); the session goes to the handler, which takes the expert from it.
async fn require_session(
    State(state): State<AppState>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let guarded = if request.method() == Method::GET || request.method() == Method::HEAD {
        session(&state, request.headers(), Standing::Here)
            .await
            .map(|(_, s)| s)
    } else {
        writing(&state, request.headers(), Standing::Here).await
    };
    match guarded {
        Ok(s) => {
            request.extensions_mut().insert(s);
            next.run(request).await
        }
        Err(e) => e.into_response(),
    }
}

/// [`require_session`] for the save route: the session and its CSRF token (401 / 403), its
/// login's standing left to the writer, which checks it with the value.
async fn require_session_for_a_save(
    State(state): State<AppState>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    match writing(&state, request.headers(), Standing::WithTheSave).await {
        Ok(s) => {
            request.extensions_mut().insert(s);
            next.run(request).await
        }
        Err(e) => e.into_response(),
    }
}

/// What the page learns of its session.
#[derive(Debug, Serialize)]
struct SessionView {
    rater_id: i64,
    rater_name: String,
    csrf: String,
    /// Minutes without a request after which the session ends.
    idle_minutes: u64,
}

fn view(state: &AppState, s: &Session) -> SessionView {
    SessionView {
        rater_id: s.identity.rater.id,
        rater_name: s.identity.rater.name.clone(),
        csrf: s.csrf.clone(),
        idle_minutes: state.shared.sessions.idle_ms() / 60_000,
    }
}

fn set_cookie(state: &AppState, token: &str) -> HeaderValue {
    let secure = if state.shared.secure_cookies {
        "; Secure"
    } else {
        ""
    };
    HeaderValue::from_str(&format!(
        "{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict{secure}"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static(""))
}

fn cleared_cookie(state: &AppState) -> HeaderValue {
    let secure = if state.shared.secure_cookies {
        "; Secure"
    } else {
        ""
    };
    HeaderValue::from_str(&format!(
        "{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{secure}"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// Open a session for `identity`, kept in the study too, and answer with its cookie.
async fn logged_in(
    state: &AppState,
    identity: concord_core::workflow::web_access::WebIdentity,
) -> Result<Response, WebError> {
    let (token, session) = state.shared.sessions.open(identity.clone());
    let t = token.clone();
    state
        .shared
        .with_study(move |s| app::web::keep_session(s, &identity, &t))
        .await?;
    Ok((
        [(header::SET_COOKIE, set_cookie(state, &token))],
        Json(view(state, &session)),
    )
        .into_response())
}

async fn session_info(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
) -> Json<SessionView> {
    Json(view(&state, &s))
}

/// What the invitation and login pages say of the study before anyone logs in: its title, the
/// study lead's name and how to reach them (`concord serve invite --lead … --contact …`).
async fn welcome(
    State(state): State<AppState>,
) -> Result<Json<concord_core::workflow::web_access::StudyWelcome>, WebError> {
    Ok(Json(
        state
            .shared
            .with_study(move |s| app::web::welcome(s).map_err(WebError::access))
            .await?,
    ))
}

#[derive(Deserialize)]
struct TokenBody {
    token: String,
}

#[derive(Serialize)]
struct InvitationView {
    rater_name: String,
}

async fn invitation(
    State(state): State<AppState>,
    Json(body): Json<TokenBody>,
) -> Result<Json<InvitationView>, WebError> {
    let rater = state
        .shared
        .with_study(move |s| app::web::invitation_for(s, &body.token).map_err(WebError::access))
        .await?;
    Ok(Json(InvitationView {
        rater_name: rater.name,
    }))
}

#[derive(Deserialize)]
struct AcceptBody {
    token: String,
    passphrase: String,
}

async fn accept(
    State(state): State<AppState>,
    Json(body): Json<AcceptBody>,
) -> Result<Response, WebError> {
    let token = body.token.clone();
    state
        .shared
        .with_study(move |s| app::web::invitation_for(s, &token).map_err(WebError::access))
        .await?;
    // The slow key derivation runs without holding the study, so other raters' saves go on.
    let mut rng = state.shared.sessions.rng();
    let iterations = state.shared.iterations;
    let passphrase = body.passphrase;
    let derived = tokio::task::spawn_blocking(move || {
        app::web::derive_passphrase(&passphrase, &mut rng, iterations)
    })
    .await
    .map_err(|_| WebError::Internal)?
    .map_err(WebError::access)?;
    let token = body.token;
    let identity = state
        .shared
        .with_study(move |s| {
            app::web::accept_derived(s, &token, &derived).map_err(WebError::access)
        })
        .await?;
    // A passphrase set anew ends the sessions opened under the old one.
    state.shared.sessions.close_all_of(identity.rater.id);
    logged_in(&state, identity).await
}

#[derive(Deserialize)]
struct LoginBody {
    name: String,
    passphrase: String,
}

/// A login: refused at once while its client or its name must wait after wrong passphrases
/// (429 with `Retry-After`; the guess is not tried), else the slow key derivation without the
/// study, then the outcome; a failure counts against the client and the name, and a name
/// without a login costs the same derivation as one with.
async fn login(
    State(state): State<AppState>,
    Extension(peer): Extension<Peer>,
    headers: HeaderMap,
    Json(body): Json<LoginBody>,
) -> Result<Response, WebError> {
    let shared = Arc::clone(&state.shared);
    let client = crate::throttle::client(peer.0.ip(), &headers, shared.behind_proxy);
    if let Err(until) = shared.throttle.check(client) {
        return Err(WebError::Wait {
            seconds: seconds_until(until, &*shared.clock),
        });
    }
    let name = body.name;
    let iterations = shared.iterations;
    let clock = Arc::clone(&shared.clock);
    let attempt = shared
        .with_study(move |s| {
            app::web::login_attempt(s, &name, iterations).map_err(|e| name_wait(e, &*clock))
        })
        .await?;
    // The slow key derivation runs without holding the study, so other raters' saves go on.
    let passphrase = body.passphrase;
    let (attempt, matched) = tokio::task::spawn_blocking(move || {
        let matched = app::web::attempt_matches(&attempt, &passphrase);
        (attempt, matched)
    })
    .await
    .map_err(|_| WebError::Internal)?;
    let clock = Arc::clone(&shared.clock);
    let outcome = shared
        .with_study(move |s| {
            app::web::login_outcome(s, attempt, matched).map_err(|e| name_wait(e, &*clock))
        })
        .await;
    match outcome {
        Ok(identity) => {
            shared.throttle.succeeded(client);
            logged_in(&state, identity).await
        }
        Err(e) => {
            // A wrong passphrase counts against the client too; the longer wait is answered.
            let client_until = if matched {
                None
            } else {
                shared.throttle.failed(client)
            };
            Err(match (e, client_until) {
                (e, None) => e,
                (WebError::Wait { seconds }, Some(until)) => WebError::Wait {
                    seconds: seconds.max(seconds_until(until, &*shared.clock)),
                },
                (_, Some(until)) => WebError::Wait {
                    seconds: seconds_until(until, &*shared.clock),
                },
            })
        }
    }
}

/// Whole seconds (at least one) from now until `until`.
fn seconds_until(until: i64, clock: &dyn concord_core::base::clock::Clock) -> u64 {
    ((until - clock.now_ms()).max(1) as u64).div_ceil(1000)
}

/// A core refusal of a login, a name's wait as [`WebError::Wait`].
fn name_wait(e: WebAccessError, clock: &dyn concord_core::base::clock::Clock) -> WebError {
    match e {
        WebAccessError::Locked { until } => WebError::Wait {
            seconds: seconds_until(until, clock),
        },
        other => WebError::access(other),
    }
}

async fn logout(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    headers: HeaderMap,
) -> Result<Response, WebError> {
    let token = cookie_token(&headers).unwrap_or_default();
    state.shared.sessions.close(&token);
    let rater = s.identity.rater.clone();
    state
        .shared
        .with_study(move |st| app::web::logged_out(st, &rater, &token, false))
        .await?;
    Ok((
        [(header::SET_COOKIE, cleared_cookie(&state))],
        Json(serde_json::Value::Null),
    )
        .into_response())
}

async fn queue(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
) -> Result<Json<QueueSummary>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::rating::open_queue(st, id))
            .await?,
    ))
}

/// The items of the session's queue still to look at (unfinished or flagged), for the end of it.
async fn left_items(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
) -> Result<Json<Vec<LeftItem>>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::rating::left_items(st, id))
            .await?,
    ))
}

/// The session's pair queue (pairwise preferences) and where to resume.
async fn pair_queue(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
) -> Result<Json<concord_core::workflow::pairs::PairQueue>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::pairs::pair_queue(st, id))
            .await?,
    ))
}

/// Pair number `item` of the session's queue, blinded, in the order this rater sees it.
async fn pair_item(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
) -> Result<Json<concord_core::workflow::pairs::PairItem>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::pairs::pair_item(st, id, item))
            .await?,
    ))
}

#[derive(Deserialize)]
struct ChooseBody {
    criterion: String,
    choice: Option<concord_core::workflow::pairs::ShownChoice>,
}

/// A choice on one question of a pair, committed before the answer.
async fn rate_pair(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
    Json(body): Json<ChooseBody>,
) -> Result<Json<concord_core::workflow::pairs::PairProgress>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| {
                app::pairs::rate_pair_item(st, id, item, &body.criterion, body.choice)
            })
            .await?,
    ))
}

/// The rater's rationale for a pair, committed before the answer.
async fn pair_rationale(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
    Json(body): Json<RationaleBody>,
) -> Result<Json<serde_json::Value>, WebError> {
    let id = s.identity.rater.id;
    state
        .shared
        .with_study(move |st| app::pairs::set_pair_rationale(st, id, item, &body.rationale))
        .await?;
    Ok(Json(serde_json::Value::Null))
}

/// A flag on a pair for the lead.
async fn pair_flag(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
    Json(body): Json<FlagBody>,
) -> Result<Json<serde_json::Value>, WebError> {
    let id = s.identity.rater.id;
    state
        .shared
        .with_study(move |st| app::pairs::flag_pair(st, id, item, &body.reason))
        .await?;
    Ok(Json(serde_json::Value::Null))
}

#[derive(Deserialize)]
struct PairLeaveBody {
    seconds: f64,
}

/// Time on a pair, recorded as the rater leaves it.
async fn pair_leave(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
    Json(body): Json<PairLeaveBody>,
) -> Result<Json<serde_json::Value>, WebError> {
    let id = s.identity.rater.id;
    state
        .shared
        .with_study(move |st| app::pairs::leave_pair(st, id, item, body.seconds))
        .await?;
    Ok(Json(serde_json::Value::Null))
}

async fn item(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
) -> Result<Json<RatingItem>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::rating::rating_item(st, id, item))
            .await?,
    ))
}

#[derive(Deserialize)]
struct RateBody {
    criterion: String,
    value: i64,
    reason: Option<String>,
}

/// A value from the rating screen, acknowledged once the transaction holding it — shared with the
/// values other raters saved at the same moment ([`crate::writer`]) — has committed.
async fn rate(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
    Json(body): Json<RateBody>,
) -> Result<Json<ItemProgress>, WebError> {
    let save = WebSave {
        identity: s.identity,
        item,
        criterion: body.criterion,
        value: body.value,
        reason: body.reason,
    };
    Ok(Json(state.shared.saves.save(save).await?))
}

#[derive(Deserialize)]
struct RationaleBody {
    rationale: String,
}

async fn rationale(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
    Json(body): Json<RationaleBody>,
) -> Result<Json<serde_json::Value>, WebError> {
    let id = s.identity.rater.id;
    state
        .shared
        .with_study(move |st| app::rating::set_rationale(st, id, item, &body.rationale))
        .await?;
    Ok(Json(serde_json::Value::Null))
}

#[derive(Deserialize)]
struct FlagBody {
    reason: String,
}

async fn flag(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
    Json(body): Json<FlagBody>,
) -> Result<Json<serde_json::Value>, WebError> {
    let id = s.identity.rater.id;
    state
        .shared
        .with_study(move |st| app::rating::flag_item(st, id, item, &body.reason))
        .await?;
    Ok(Json(serde_json::Value::Null))
}

#[derive(Deserialize)]
struct LeaveBody {
    seconds: f64,
    next_item: i64,
}

async fn leave(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
    Json(body): Json<LeaveBody>,
) -> Result<Json<serde_json::Value>, WebError> {
    let id = s.identity.rater.id;
    state
        .shared
        .with_study(move |st| app::rating::leave_item(st, id, item, body.seconds, body.next_item))
        .await?;
    Ok(Json(serde_json::Value::Null))
}

async fn calibration_status(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
) -> Result<Json<CalibrationStatus>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::calibration::status_for(st, id))
            .await?,
    ))
}

async fn calibration_item(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<usize>,
) -> Result<Json<CalibrationItem>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::calibration::item_for(st, id, item))
            .await?,
    ))
}

#[derive(Deserialize)]
struct AnswerBody {
    values: Vec<(String, i64)>,
}

async fn calibration_answer(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<usize>,
    Json(body): Json<AnswerBody>,
) -> Result<Json<CalibrationItem>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::calibration::answer_for(st, id, item, &body.values))
            .await?,
    ))
}

async fn signoff_state(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
) -> Result<Json<SignoffState>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::signoff::signoff_state(st, id))
            .await?,
    ))
}

#[derive(Deserialize)]
struct SigningPassphraseBody {
    current: Option<String>,
    passphrase: String,
}

async fn signing_passphrase(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Json(body): Json<SigningPassphraseBody>,
) -> Result<Json<SignoffState>, WebError> {
    let id = s.identity.rater.id;
    let seed = state.shared.sessions.seed();
    Ok(Json(
        state
            .shared
            .with_study(move |st| {
                app::signoff::set_signing_passphrase(
                    st,
                    id,
                    body.current.as_deref(),
                    &body.passphrase,
                    seed,
                )
            })
            .await?,
    ))
}

#[derive(Deserialize)]
struct SignBody {
    passphrase: String,
}

async fn sign_off(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Json(body): Json<SignBody>,
) -> Result<Json<SignoffState>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::signoff::sign_off(st, id, &body.passphrase))
            .await?,
    ))
}

// ---- Evidence spans: the expert of the session marks, changes and removes spans in the reply
// of an item of their queue (origin `web`); each answer is the item's codes and their own spans.

async fn item_spans(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
) -> Result<Json<ItemSpans>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::rating::item_spans(st, id, item))
            .await?,
    ))
}

#[derive(Deserialize)]
struct MarkBody {
    span: ShownSpan,
}

/// A span marked, committed before the answer.
async fn mark_span(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
    Json(body): Json<MarkBody>,
) -> Result<Json<ItemSpans>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::rating::mark_span(st, SpanOrigin::Web, id, item, &body.span))
            .await?,
    ))
}

#[derive(Deserialize)]
struct ChangeSpanBody {
    at: SpanAt,
    span: ShownSpan,
}

/// A span's code, severity or extent changed, committed before the answer.
async fn change_span(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
    Json(body): Json<ChangeSpanBody>,
) -> Result<Json<ItemSpans>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| {
                app::rating::change_span(st, SpanOrigin::Web, id, item, &body.at, &body.span)
            })
            .await?,
    ))
}

#[derive(Deserialize)]
struct RemoveSpanBody {
    at: SpanAt,
}

/// A span removed, committed before the answer.
async fn remove_span(
    State(state): State<AppState>,
    Extension(s): Extension<Session>,
    Path(item): Path<i64>,
    Json(body): Json<RemoveSpanBody>,
) -> Result<Json<ItemSpans>, WebError> {
    let id = s.identity.rater.id;
    Ok(Json(
        state
            .shared
            .with_study(move |st| app::rating::remove_span(st, SpanOrigin::Web, id, item, &body.at))
            .await?,
    ))
}
