//! A run's record in the study: creating a run and its rows (or finding the run with the same
//! settings hash), claiming pending rows, writing results in batched transactions (a done call's
//! scores become ratings of the judge rater; a failure keeps its reason and raw output), and
//! reading back runs, counts, tokens, cost and failures. A row moves pending → in_flight → done
//! or failed; rows left in flight by a crash go back to pending when the run is executed again.

use super::http::AnsweredBy;
use super::prompt::{estimate_tokens, Frame, PromptTemplate, RenderedPrompt};
use super::settings::{HistoryDepth, ResponseSelection, RunSettings};
use super::verdict::Verdict;
use super::JudgeError;
use crate::base::text::quoted;
pub use crate::store::CallFailure;

use crate::rubric::{Rubric, Scope};
use crate::store::{
    CallDetails, CallReply, ClaimedCall, JudgeRunCounts, NewJudgeRun, NewJudgement, NewRater,
    Occasion, RaterKind, RatingInput, Store, StoreError, StoredRubric, TurnRecord,
};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::HashMap;

/// What a run would cost, estimated before it starts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CostEstimate {
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// How the tokens were estimated.
    pub method: String,
}

/// What a run with given settings would do, read without writing anything.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RunPreview {
    /// The earlier run these settings resume, if any.
    pub existing_run: Option<i64>,
    pub rubric: String,
    pub responses: u64,
    /// Selected responses that have no text and so cannot be judged (left out).
    pub responses_without_text: u64,
    pub calls: u64,
    pub settings_sha256: String,
    pub prompt_sha256: String,
    /// The estimate for the whole run (a resumed run sends only what is left).
    pub estimate: CostEstimate,
}

/// A run opened for execution.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RunPlan {
    pub run_id: i64,
    /// True when the settings matched an earlier run, which is continued.
    pub resumed: bool,
    pub status: RunStatus,
}

/// A run's settings and where it stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RunStatus {
    pub id: i64,
    pub rater: String,
    pub provider: String,
    pub base_url: String,
    pub model: String,
    pub rubric: String,
    pub temperature: f64,
    pub repetitions: i64,
    pub batch: bool,
    pub settings_sha256: String,
    pub prompt_sha256: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub total: i64,
    pub pending: i64,
    pub in_flight: i64,
    pub done: i64,
    pub failed: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_usd: f64,
}

/// How a run asks for its replies and how many could not be read as scores: the ledger's count
/// of unreadable replies per mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplyMode {
    pub run_id: i64,
    /// `structured` (a reply schema) or `free_text`.
    pub mode: &'static str,
    /// Calls that came back (done or failed).
    pub answered: i64,
    /// Failed calls whose reply could not be read as scores (empty, unreadable, a score missing,
    /// out of range or not a score).
    pub unreadable: i64,
}

/// A run loaded for execution.
#[derive(Debug, Clone)]
pub(crate) struct LoadedRun {
    pub id: i64,
    pub settings: RunSettings,
    pub rubric: Rubric,
    pub template: PromptTemplate,
    /// How the rubric's default prompt framed the run's items (what a shuffled call's own
    /// default prompt is worded as).
    pub frame: Frame,
    pub rater_id: i64,
    /// Criterion id (rubric key) → criterion row id.
    pub criteria: HashMap<String, i64>,
}

impl LoadedRun {
    /// The positions of the rubric's criteria in the order one call lists them: a shuffle seeded
    /// by the run's seed, the response and the repetition when the run shuffles the criteria
    /// order (so a call resumed or collected from a batch has the order it was sent with), `None`
    /// when the rubric's order is used.
    pub(crate) fn criteria_order(&self, response_id: i64, repetition: i64) -> Option<Vec<usize>> {
        if !self.settings.shuffle_criteria {
            return None;
        }
        let seed = self.settings.seed
            ^ (response_id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (repetition as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        let mut order: Vec<usize> = (0..self.rubric.criteria.len()).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        Some(order)
    }

    /// The criterion ids in the order a call listed them (JSON array), when shuffled.
    pub(crate) fn criteria_order_json(&self, response_id: i64, repetition: i64) -> Option<String> {
        let order = self.criteria_order(response_id, repetition)?;
        let ids: Vec<&str> = order
            .iter()
            .filter_map(|&i| self.rubric.criteria.get(i).map(|c| c.id.as_str()))
            .collect();
        serde_json::to_string(&ids).ok()
    }

    /// `{criterion id: expected score}` JSON from a completion's log-probabilities, when it has
    /// them and its reply was read as scores.
    pub(crate) fn expected(
        &self,
        completion: &super::http::Completion,
        outcome: &CallOutcome,
    ) -> Option<String> {
        let tokens = completion.logprobs.as_deref()?;
        if !matches!(outcome, CallOutcome::Scored(_)) {
            return None;
        }
        let e = super::logprobs::expected_scores(tokens, &self.rubric);
        (!e.is_empty())
            .then(|| serde_json::to_string(&e).ok())
            .flatten()
    }

    /// Turn a completion text into an outcome with the rubric's parser (a structured reply is
    /// a JSON object whatever the rubric's free-text format).
    pub(crate) fn judge(&self, text: &str) -> CallOutcome {
        let (text, format) = if self.settings.structured {
            (
                std::borrow::Cow::Owned(super::structured::flatten(text)),
                super::ReplyFormat::JsonScores,
            )
        } else {
            (std::borrow::Cow::Borrowed(text), self.template.format)
        };
        match super::verdict::read_reply(&text, format, &self.rubric) {
            Ok(v) => CallOutcome::Scored(v),
            Err(e) => CallOutcome::Failed {
                kind: e.code().to_string(),
                reason: e.to_string(),
            },
        }
    }

    /// The request body of one call: the provider's request for `prompt`, constrained by the
    /// reply schema when the run asks for structured replies.
    pub(crate) fn body_for(&self, prompt: &super::prompt::RenderedPrompt) -> serde_json::Value {
        let mut body = super::http::request_body(&self.settings, prompt);
        if self.settings.structured {
            super::structured::constrain(
                &mut body,
                self.settings.provider,
                &self.rubric,
                self.settings.spans,
            );
        }
        body
    }

    /// The messages one call sends: the run's template, or the rubric's default template in the
    /// call's shuffled order, filled with the turns the call shows and its reply (or replies).
    pub(crate) fn prompt_for(&self, job: &Job) -> RenderedPrompt {
        if let Some(pair) = &job.pair {
            return self
                .template
                .render_pair_turns(&job.history, &job.response, &pair.second);
        }
        let (mut rendered, format) = match self.criteria_order(job.response_id, job.repetition) {
            Some(order) => {
                let template = PromptTemplate::default_in_order(&self.rubric, &order, self.frame);
                (
                    template.render_turns(&job.history, &job.response),
                    template.format,
                )
            }
            None => (
                self.template.render_turns(&job.history, &job.response),
                self.template.format,
            ),
        };
        if self.settings.spans {
            rendered
                .user
                .push_str(&super::spans::request(&self.rubric, format));
        }
        rendered
    }

    /// A call read from the study with the turns its prompt shows (the run's history depth). A
    /// single-turn conversation's one turn came with the call; a transcript's are read.
    pub(crate) fn job(&self, store: &Store, call: ClaimedCall) -> Result<Job, JudgeError> {
        let turns = if call.transcript {
            store.history(call.response_id)?
        } else {
            vec![TurnRecord::opening(call.context)]
        };
        let history = shown(self.rubric.scope, self.settings.history, turns);
        Ok(Job {
            call_id: call.call_id,
            response_id: call.response_id,
            repetition: call.repetition,
            history,
            response: call.response,
            pair: call.pair,
        })
    }
}

/// The turns a judge is shown before item `response_id`: the last `depth` turns before a reply
/// (every role counted), the whole conversation for a session item.
pub(crate) fn shown_history(
    store: &Store,
    scope: Scope,
    depth: HistoryDepth,
    response_id: i64,
) -> Result<Vec<TurnRecord>, JudgeError> {
    Ok(shown(scope, depth, store.history(response_id)?))
}

/// The turns of an item's `history` its prompt shows (see [`shown_history`]).
fn shown(scope: Scope, depth: HistoryDepth, mut history: Vec<TurnRecord>) -> Vec<TurnRecord> {
    if scope == Scope::Reply {
        let hidden = history.len() - depth.shown(&history).len();
        history.drain(..hidden);
    }
    history
}

/// Call `call_id` of `run` as the study keeps it, with the prompt it sends (or sent) rendered
/// from the study: the same texts, turns and order as when it is sent, so the rendering's hash
/// is the one recorded while the texts are unchanged. `None` when the run has no such call.
pub(crate) fn rendered_call(
    store: &Store,
    run: &LoadedRun,
    call_id: i64,
) -> Result<Option<(crate::store::StoredCall, RenderedPrompt)>, JudgeError> {
    let Some(stored) = store.judge_call(run.id, call_id)? else {
        return Ok(None);
    };
    let job = run.job(store, stored.call.clone())?;
    let prompt = run.prompt_for(&job);
    Ok(Some((stored, prompt)))
}

/// One claimed call with the texts it needs.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub call_id: i64,
    pub response_id: i64,
    pub repetition: i64,
    /// The turns shown before the reply (cut to the run's depth), or a session item's whole
    /// conversation.
    pub history: Vec<TurnRecord>,
    /// The reply judged; empty for a session item.
    pub response: String,
    /// The pair a pairwise call compares (`response` is the answer shown first).
    pub pair: Option<crate::store::ClaimedPair>,
}

/// What became of one call.
#[derive(Debug, Clone)]
pub(crate) enum CallOutcome {
    Scored(Verdict),
    Failed {
        kind: String,
        reason: String,
    },
    /// Not sent or not finished (cancelled): back to pending.
    Released,
}

#[derive(Debug, Clone)]
pub(crate) struct CallResult {
    pub call_id: i64,
    pub response_id: i64,
    pub repetition: i64,
    pub attempts: u32,
    pub prompt_sha256: Option<String>,
    pub raw_output: Option<String>,
    pub http_status: Option<u16>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// `{criterion id: expected score}` JSON from the reply's log-probabilities, when returned.
    pub expected_json: Option<String>,
    /// The model (and backend fingerprint) the provider says answered, when a reply was read.
    pub answered_by: AnsweredBy,
    pub outcome: CallOutcome,
    /// The pair of a pairwise call: its id and whether its left answer was shown first.
    pub pair: Option<(i64, bool)>,
}

/// Counts a batch of results changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub done: u64,
    pub failed: u64,
    pub released: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

fn rubric_for(store: &Store, settings: &RunSettings) -> Result<StoredRubric, JudgeError> {
    let rubrics = store.rubrics()?;
    if let Some(key) = &settings.rubric {
        return rubrics
            .into_iter()
            .find(|s| &s.rubric.id == key)
            .ok_or_else(|| {
                JudgeError::Rubric(format!("the study has no rubric {}", quoted(&key)))
            });
    }
    let used = store.rubric_ids_in_use()?;
    match used.as_slice() {
        [] => Err(JudgeError::Rubric(
            "the study has no conversations to judge; import some first".into(),
        )),
        [one] => rubrics
            .into_iter()
            .find(|s| s.id == *one)
            .ok_or_else(|| JudgeError::Rubric("the conversations' rubric is missing".into())),
        many => {
            let names: Vec<String> = rubrics
                .iter()
                .filter(|s| many.contains(&s.id))
                .map(|s| s.rubric.id.clone())
                .collect();
            Err(JudgeError::Rubric(format!(
                "the study's conversations use several rubrics ({}); choose one",
                names.join(", ")
            )))
        }
    }
}

/// Responses the selection picks, in id order, and how many selected ones have no text. A
/// session rubric's items have no text of their own (each stands for its whole conversation), so
/// none of them is left out for it.
fn select_responses(
    store: &Store,
    rubric: (i64, Scope),
    selection: &ResponseSelection,
    seed: u64,
) -> Result<(Vec<i64>, u64), JudgeError> {
    let (rubric_id, scope) = rubric;
    let expert_only = matches!(selection, ResponseSelection::ExpertRated);
    let all: Vec<(i64, bool)> = store
        .judgeable_responses(rubric_id, expert_only)?
        .into_iter()
        .map(|r| (r.id, r.has_text || scope == Scope::Session))
        .collect();
    let without_text = all.iter().filter(|(_, has)| !has).count() as u64;
    let mut ids: Vec<i64> = all
        .into_iter()
        .filter(|(_, has)| *has)
        .map(|(id, _)| id)
        .collect();
    if let ResponseSelection::Sample { n } = selection {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        ids.shuffle(&mut rng);
        ids.truncate(*n as usize);
        ids.sort_unstable();
    }
    Ok((ids, without_text))
}

struct Resolved {
    rubric_id: i64,
    rubric: Rubric,
    template: PromptTemplate,
    settings: RunSettings,
    settings_sha256: String,
}

fn resolve(store: &Store, settings: &RunSettings) -> Result<Resolved, JudgeError> {
    settings.validate()?;
    let StoredRubric {
        id: rubric_id,
        rubric,
    } = rubric_for(store, settings)?;
    if rubric.is_pairwise() {
        check_pairwise_settings(settings)?;
    } else if settings.both_orders {
        return Err(JudgeError::Settings(format!(
            "--both-orders asks pairs both ways round; {} rates one answer at a time",
            quoted(&rubric.id)
        )));
    }
    let template = match &settings.prompt {
        Some(t) => t.clone(),
        None if rubric.is_pairwise() => pairwise_default(store, &rubric, rubric_id)?,
        None => PromptTemplate::framed(
            &rubric,
            Frame::of(&rubric, store.rubric_has_transcripts(rubric_id)?),
        ),
    };
    if rubric.is_pairwise() != (template.format == super::ReplyFormat::PairPreferences) {
        return Err(JudgeError::Settings(
            "a pairwise rubric needs a pairwise prompt ({{response_a}} and {{response_b}}) and a single-answer rubric a single-answer one".into(),
        ));
    }
    template.validate_for(rubric.scope)?;
    if settings.spans
        && (rubric.codes.is_empty() || !rubric.scope.is_reply() || rubric.is_pairwise())
    {
        return Err(JudgeError::Settings(format!(
            "--spans asks the judge to quote the evidence for the rubric's codes; {} declares none              for the replies it rates",
            quoted(&rubric.id)
        )));
    }
    let mut settings = settings.clone();
    settings.base_url = settings.normalized_base_url();
    settings.rubric = Some(rubric.id.clone());
    settings.prompt = Some(template.clone());
    let identity = settings.identity(&rubric.id, &template);
    let settings_sha256 = crate::base::digest::sha256_hex(identity.to_string().as_bytes());
    Ok(Resolved {
        rubric_id,
        rubric,
        template,
        settings,
        settings_sha256,
    })
}

/// What a pairwise run cannot do yet, refused before anything is written.
fn check_pairwise_settings(settings: &RunSettings) -> Result<(), JudgeError> {
    let refuse = |what: &str| {
        Err(JudgeError::Settings(format!(
            "{what} is for runs that rate one answer at a time; a pairwise run is sent live, each pair once per order"
        )))
    };
    if settings.batch {
        return refuse("--batch");
    }
    if settings.structured {
        return refuse("--structured");
    }
    if settings.logprobs {
        return refuse("--logprobs");
    }
    if settings.shuffle_criteria {
        return refuse("--shuffle-criteria");
    }
    if settings.repetitions != 1 {
        return refuse("--repetitions above 1");
    }
    Ok(())
}

/// The default prompt of a pairwise rubric: in the language of its pairs (`zh` when most of
/// their conversations are Chinese, `en` otherwise), framed as replies after a conversation when
/// any pair stands in a transcript.
fn pairwise_default(
    store: &Store,
    rubric: &Rubric,
    rubric_id: i64,
) -> Result<PromptTemplate, JudgeError> {
    let pairs = store.read().pairs(rubric_id)?;
    let mut zh = 0usize;
    let mut transcripts = false;
    let mut seen = std::collections::HashSet::new();
    for p in &pairs {
        if seen.insert(p.conversation_id) {
            let c = store.conversation(p.conversation_id)?;
            if c.language.as_deref().is_some_and(|l| l.starts_with("zh")) {
                zh += 1;
            }
            transcripts = transcripts || store.item_place(p.left_response_id)?.transcript;
        }
    }
    let lang = if zh * 2 > seen.len() { "zh" } else { "en" };
    Ok(PromptTemplate::pairwise_framed(
        rubric,
        lang,
        Frame::of(rubric, transcripts),
    ))
}

/// The calls of a pairwise run: every pair the selection picks, once each way round with
/// `both_orders`, else once with the side shown first drawn per pair from the seed.
fn pair_calls(
    store: &Store,
    rubric_id: i64,
    settings: &RunSettings,
) -> Result<Vec<crate::store::PairCall>, JudgeError> {
    use rand::Rng;
    let read = store.read();
    let mut pairs = read.pairs(rubric_id)?;
    if pairs.is_empty() {
        return Err(JudgeError::Settings(
            "the pairwise rubric has no pairs yet; draw them with `concord pairs design`".into(),
        ));
    }
    match &settings.selection {
        ResponseSelection::All => {}
        ResponseSelection::ExpertRated => {
            let assigned: std::collections::HashSet<i64> = read
                .pair_assignments(rubric_id)?
                .into_iter()
                .map(|a| a.pair_id)
                .collect();
            pairs.retain(|p| assigned.contains(&p.id));
        }
        ResponseSelection::Sample { n } => {
            let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
            pairs.shuffle(&mut rng);
            pairs.truncate(*n as usize);
            pairs.sort_by_key(|p| p.position);
        }
    }
    let mut calls = Vec::with_capacity(pairs.len() * 2);
    for p in pairs {
        let left = crate::store::PairCall {
            pair_id: p.id,
            shown_first: p.left_response_id,
            left_first: true,
        };
        let right = crate::store::PairCall {
            pair_id: p.id,
            shown_first: p.right_response_id,
            left_first: false,
        };
        if settings.both_orders {
            calls.push(left);
            calls.push(right);
        } else {
            let mut rng = ChaCha8Rng::seed_from_u64(
                settings.seed ^ (p.id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            );
            calls.push(if rng.gen_bool(0.5) { left } else { right });
        }
    }
    Ok(calls)
}

/// Expected reply length per call when estimating: the requested format's typical size, capped
/// by `max_tokens`.
fn expected_output_tokens(settings: &RunSettings, template: &PromptTemplate) -> u64 {
    let typical = match template.format {
        super::ReplyFormat::JsonScores => 150,
        super::ReplyFormat::ReasonsThenDict => 450,
        super::ReplyFormat::PairPreferences => 150,
    };
    typical.min(settings.max_tokens as u64)
}

/// What a run with `settings` would send and cost; writes nothing.
pub fn preview_run(store: &Store, settings: &RunSettings) -> Result<RunPreview, JudgeError> {
    let r = resolve(store, settings)?;
    if r.rubric.is_pairwise() {
        return preview_pairs(store, settings, r);
    }
    let (ids, without_text) = select_responses(
        store,
        (r.rubric_id, r.rubric.scope),
        &settings.selection,
        settings.seed,
    )?;
    let existing_run = store.judge_run_by_settings(&r.settings_sha256)?;
    let mut input_tokens = 0u64;
    for id in &ids {
        let texts = store.response_texts(*id)?;
        let turns = shown_history(store, r.rubric.scope, settings.history, *id)?;
        let p = r
            .template
            .render_turns(&turns, texts.text.as_deref().unwrap_or(""));
        input_tokens +=
            estimate_tokens(p.system.as_deref().unwrap_or("")) + estimate_tokens(&p.user);
    }
    let reps = settings.repetitions as u64;
    let calls = ids.len() as u64 * reps;
    input_tokens *= reps;
    let output_tokens = calls * expected_output_tokens(settings, &r.template);
    Ok(RunPreview {
        existing_run,
        rubric: r.rubric.id.clone(),
        responses: ids.len() as u64,
        responses_without_text: without_text,
        calls,
        settings_sha256: r.settings_sha256,
        prompt_sha256: r.template.sha256(),
        estimate: CostEstimate {
            calls,
            input_tokens,
            output_tokens,
            cost_usd: settings.prices.cost(input_tokens, output_tokens),
            method: "prompt: a token per 4 ASCII characters plus one per other character; reply: \
                     150 tokens (JSON scores) or 450 (reasons and dict), at most max_tokens"
                .into(),
        },
    })
}

fn preview_pairs(
    store: &Store,
    settings: &RunSettings,
    r: Resolved,
) -> Result<RunPreview, JudgeError> {
    let calls = pair_calls(store, r.rubric_id, settings)?;
    let existing_run = store.judge_run_by_settings(&r.settings_sha256)?;
    let mut input_tokens = 0u64;
    let mut pairs = std::collections::HashSet::new();
    let sides: HashMap<i64, (i64, i64)> = store
        .read()
        .pairs(r.rubric_id)?
        .into_iter()
        .map(|p| (p.id, (p.left_response_id, p.right_response_id)))
        .collect();
    for c in &calls {
        pairs.insert(c.pair_id);
        let first = store.response_texts(c.shown_first)?;
        let second_id =
            sides
                .get(&c.pair_id)
                .map_or(c.shown_first, |&(l, r)| if c.left_first { r } else { l });
        let second = store.response_texts(second_id)?;
        let turns = shown_history(store, r.rubric.scope, settings.history, c.shown_first)?;
        let p = r.template.render_pair_turns(
            &turns,
            first.text.as_deref().unwrap_or(""),
            second.text.as_deref().unwrap_or(""),
        );
        input_tokens +=
            estimate_tokens(p.system.as_deref().unwrap_or("")) + estimate_tokens(&p.user);
    }
    let n = calls.len() as u64;
    let output_tokens = n * expected_output_tokens(settings, &r.template);
    Ok(RunPreview {
        existing_run,
        rubric: r.rubric.id.clone(),
        responses: pairs.len() as u64,
        responses_without_text: 0,
        calls: n,
        settings_sha256: r.settings_sha256,
        prompt_sha256: r.template.sha256(),
        estimate: CostEstimate {
            calls: n,
            input_tokens,
            output_tokens,
            cost_usd: settings.prices.cost(input_tokens, output_tokens),
            method: "prompt: a token per 4 ASCII characters plus one per other character; reply: \
                     150 tokens (pair preferences), at most max_tokens"
                .into(),
        },
    })
}

/// The prompt template a run on `rubric` (the rubric of the study's conversations when `None`)
/// sends unless it is given its own: what a settings screen shows for editing before the rest of
/// the settings are filled in.
pub fn default_prompt(store: &Store, rubric: Option<&str>) -> Result<PromptTemplate, JudgeError> {
    let mut settings = RunSettings::new(super::ProviderKind::OpenaiCompatible, "", "");
    settings.rubric = rubric.map(str::to_string);
    let StoredRubric { id, rubric } = rubric_for(store, &settings)?;
    if rubric.is_pairwise() {
        return pairwise_default(store, &rubric, id);
    }
    Ok(PromptTemplate::framed(
        &rubric,
        Frame::of(&rubric, store.rubric_has_transcripts(id)?),
    ))
}

/// Create the run for `settings` with a row per (response, repetition), or find the earlier run
/// with the same settings hash and continue it.
pub fn open_run(store: &mut Store, settings: &RunSettings) -> Result<RunPlan, JudgeError> {
    let r = resolve(store, settings)?;
    let existing = store.judge_run_by_settings(&r.settings_sha256)?;
    if let Some(run_id) = existing {
        return Ok(RunPlan {
            run_id,
            resumed: true,
            status: run_status(store, run_id)?,
        });
    }
    let pair_calls = if r.rubric.is_pairwise() {
        Some(pair_calls(store, r.rubric_id, settings)?)
    } else {
        None
    };
    let (ids, _) = if pair_calls.is_some() {
        (Vec::new(), 0)
    } else {
        select_responses(
            store,
            (r.rubric_id, r.rubric.scope),
            &settings.selection,
            settings.seed,
        )?
    };
    if ids.is_empty() && pair_calls.as_ref().is_none_or(Vec::is_empty) {
        return Err(JudgeError::Settings(
            "no response with a text matches the selection; nothing to judge".into(),
        ));
    }
    let family = settings
        .family
        .clone()
        .or_else(|| super::family_of_model(&settings.model).map(str::to_string));
    let settings_json =
        serde_json::to_string(&r.settings).map_err(|e| JudgeError::Settings(e.to_string()))?;
    let run_id = store.write(|tx| -> Result<i64, JudgeError> {
        let rater_id = tx.upsert_rater(&NewRater {
            kind: RaterKind::Judge,
            name: settings.rater_name(),
            model_id: Some(&settings.model),
            family: family.as_deref(),
            queue_seed: settings.seed as i64,
        })?;
        let prompt_sha256 = r.template.sha256();
        let run_id = tx.add_judge_run(
            &NewJudgeRun {
                rater_id,
                rubric_id: r.rubric_id,
                provider: settings.provider.as_str(),
                base_url: &r.settings.base_url,
                model: &settings.model,
                temperature: settings.temperature,
                repetitions: settings.repetitions,
                settings_json: &settings_json,
                settings_sha256: &r.settings_sha256,
                system_prompt: r.template.system.as_deref(),
                user_prompt: &r.template.user,
                prompt_sha256: &prompt_sha256,
            },
            &ids,
        )?;
        if let Some(calls) = &pair_calls {
            tx.add_pair_calls(run_id, calls)?;
        }
        let calls = match &pair_calls {
            Some(c) => c.len() as u64,
            None => ids.len() as u64 * settings.repetitions as u64,
        };
        tx.audit(
            "judge",
            "judge_run_created",
            &serde_json::json!({"run": run_id, "model": settings.model,
                                "settings_sha256": r.settings_sha256, "calls": calls}),
        )?;
        Ok(run_id)
    })?;
    Ok(RunPlan {
        run_id,
        resumed: false,
        status: run_status(store, run_id)?,
    })
}

pub(crate) fn load_run(store: &Store, run_id: i64) -> Result<LoadedRun, JudgeError> {
    let record = store
        .judge_run(run_id)?
        .ok_or(JudgeError::NoSuchRun(run_id))?;
    let (settings_json, rater_id, rubric_id) =
        (record.settings_json, record.rater_id, record.rubric_id);
    let settings: RunSettings = serde_json::from_str(&settings_json)
        .map_err(|e| JudgeError::Settings(format!("stored settings of run {run_id}: {e}")))?;
    let rubric = store
        .rubrics()?
        .into_iter()
        .find(|s| s.id == rubric_id)
        .map(|s| s.rubric)
        .ok_or_else(|| JudgeError::Rubric(format!("the rubric of run {run_id} is missing")))?;
    let template = settings
        .prompt
        .clone()
        .unwrap_or_else(|| PromptTemplate::default_for(&rubric));
    // A run that shuffles the criteria sends the rubric's default prompt in one of its frames.
    let frame = Frame::ALL
        .into_iter()
        .find(|f| PromptTemplate::framed(&rubric, *f) == template)
        .unwrap_or(Frame::of(&rubric, false));
    let criteria = store.read().criterion_ids(rubric_id)?;
    Ok(LoadedRun {
        id: run_id,
        settings,
        rubric,
        template,
        frame,
        rater_id,
        criteria,
    })
}

/// Put rows a previous session left in flight (outside a provider batch) back to pending, and the
/// failed ones too when asked. Returns how many rows were reset.
pub(crate) fn reset_for_session(
    store: &mut Store,
    run_id: i64,
    retry_failed: bool,
) -> Result<u64, JudgeError> {
    store.write(|tx| -> Result<u64, JudgeError> { Ok(tx.reset_calls(run_id, retry_failed)?) })
}

/// Claim up to `limit` pending rows of `run`: mark them in flight and return them with their
/// texts and the turns each shows.
pub(crate) fn claim(
    store: &mut Store,
    run: &LoadedRun,
    limit: usize,
) -> Result<Vec<Job>, JudgeError> {
    let claimed = store.write(|tx| -> Result<Vec<ClaimedCall>, JudgeError> {
        Ok(tx.claim_calls(run.id, limit)?)
    })?;
    claimed.into_iter().map(|c| run.job(store, c)).collect()
}

/// Write a batch of results in one transaction.
pub(crate) fn record(
    store: &mut Store,
    run: &LoadedRun,
    results: &[CallResult],
) -> Result<Tally, JudgeError> {
    let origin = format!("judge:{}", run.id);
    store.write(|tx| -> Result<Tally, JudgeError> {
        let mut tally = Tally::default();
        for r in results {
            let reply = CallReply {
                attempts: r.attempts,
                prompt_sha256: r.prompt_sha256.as_deref(),
                raw_output: r.raw_output.as_deref(),
                http_status: r.http_status,
                input_tokens: r.input_tokens.map(|t| t as i64),
                output_tokens: r.output_tokens.map(|t| t as i64),
                answering_model: r.answered_by.model.as_deref(),
                system_fingerprint: r.answered_by.system_fingerprint.as_deref(),
            };
            match &r.outcome {
                CallOutcome::Released => {
                    tx.release_call(r.call_id, r.attempts)?;
                    tally.released += 1;
                }
                CallOutcome::Failed { kind, reason } => {
                    tx.fail_call(r.call_id, &reply, kind, reason)?;
                    tally.failed += 1;
                }
                CallOutcome::Scored(v) => {
                    let scores: serde_json::Map<String, serde_json::Value> = v
                        .scores
                        .iter()
                        .map(|(k, s)| (k.clone(), serde_json::Value::from(*s)))
                        .collect();
                    let order = run.criteria_order_json(r.response_id, r.repetition);
                    tx.complete_call(
                        r.call_id,
                        &reply,
                        &serde_json::Value::Object(scores).to_string(),
                        v.explanation.as_deref(),
                        &CallDetails {
                            criteria_order: order.as_deref(),
                            expected_json: r.expected_json.as_deref(),
                        },
                    )?;
                    tally.done += 1;
                    if let Some((pair_id, left_first)) = r.pair {
                        record_pair_verdict(tx, run, pair_id, left_first, v, &origin)?;
                    } else if tx.first_done_repetition(run.id, r.response_id)? == Some(r.repetition)
                    {
                        record_verdict(tx, run, r, v, &origin)?;
                        if run.settings.spans {
                            super::spans::record(
                                tx,
                                &run.rubric,
                                run.rater_id,
                                r.response_id,
                                r.call_id,
                                r.raw_output.as_deref().unwrap_or_default(),
                            )?;
                        }
                    }
                }
            }
            if !matches!(r.outcome, CallOutcome::Released) {
                tally.input_tokens += r.input_tokens.unwrap_or(0);
                tally.output_tokens += r.output_tokens.unwrap_or(0);
            }
        }
        tx.touch_judge_run(run.id)?;
        Ok(tally)
    })
}

/// A pairwise call's verdicts: each criterion's A, B or tie (the shown sides) in the pair's own
/// left/right terms, beside the order the call showed.
fn record_pair_verdict(
    tx: &mut crate::store::StudyTx<'_>,
    run: &LoadedRun,
    pair_id: i64,
    left_first: bool,
    v: &Verdict,
    origin: &str,
) -> Result<(), JudgeError> {
    use crate::rubric::{PREFER_LEFT, PREFER_RIGHT};
    use crate::store::{PairVerdictInput, Winner};
    for (key, value) in &v.scores {
        let criterion_id = *run.criteria.get(key).ok_or_else(|| StoreError::NotFound {
            what: "criterion",
            key: key.clone(),
        })?;
        // The reply names the shown sides: A (PREFER_LEFT) first, B (PREFER_RIGHT) second.
        let first_preferred = match *value {
            PREFER_LEFT => Some(true),
            PREFER_RIGHT => Some(false),
            _ => None,
        };
        let winner = Winner::from_shown(first_preferred, left_first);
        tx.set_pair_verdict(&PairVerdictInput {
            rater_id: run.rater_id,
            pair_id,
            criterion_id,
            left_first,
            winner: Some(winner),
            rationale: v.explanation.as_deref(),
            origin,
        })?;
    }
    Ok(())
}

/// The ratings and the judgement of the repetition that speaks for a response.
fn record_verdict(
    tx: &mut crate::store::StudyTx<'_>,
    run: &LoadedRun,
    r: &CallResult,
    v: &Verdict,
    origin: &str,
) -> Result<(), JudgeError> {
    for (key, value) in &v.scores {
        let criterion_id = *run.criteria.get(key).ok_or_else(|| StoreError::NotFound {
            what: "criterion",
            key: key.clone(),
        })?;
        tx.set_rating(&RatingInput {
            rater_id: run.rater_id,
            response_id: r.response_id,
            criterion_id,
            occasion: Occasion::First,
            value: Some(*value),
            raw_value: None,
            rationale: v.explanation.as_deref(),
            origin,
        })?;
    }
    let mut extra = v.extra.clone();
    extra.insert("repetition".into(), r.repetition.into());
    tx.set_judgement(&NewJudgement {
        rater_id: run.rater_id,
        response_id: r.response_id,
        rationale: v.explanation.as_deref(),
        extra: &serde_json::Value::Object(extra),
        raw_reply: None,
        origin,
    })?;
    Ok(())
}

fn run_status_of(c: JudgeRunCounts) -> RunStatus {
    let settings: Option<RunSettings> = serde_json::from_str(&c.settings_json).ok();
    let prices = settings.as_ref().map(|s| s.prices).unwrap_or_default();
    RunStatus {
        id: c.id,
        rater: c.rater,
        provider: c.provider,
        base_url: c.base_url,
        model: c.model,
        rubric: c.rubric,
        temperature: c.temperature,
        repetitions: c.repetitions,
        batch: settings.as_ref().is_some_and(|s| s.batch),
        settings_sha256: c.settings_sha256,
        prompt_sha256: c.prompt_sha256,
        created_at: c.created_at,
        updated_at: c.updated_at,
        total: c.total,
        pending: c.pending,
        in_flight: c.in_flight,
        done: c.done,
        failed: c.failed,
        input_tokens: c.input_tokens,
        output_tokens: c.output_tokens,
        cost_usd: prices.cost(c.input_tokens.max(0) as u64, c.output_tokens.max(0) as u64),
    }
}

/// Every judge run in the study, oldest first.
pub fn runs(store: &Store) -> Result<Vec<RunStatus>, JudgeError> {
    Ok(store
        .judge_run_counts()?
        .into_iter()
        .map(run_status_of)
        .collect())
}

/// Every run's reply mode and its unreadable replies, oldest first.
pub fn reply_modes(store: &Store) -> Result<Vec<ReplyMode>, JudgeError> {
    Ok(store
        .judge_run_counts()?
        .into_iter()
        .map(|c| {
            let structured =
                serde_json::from_str::<RunSettings>(&c.settings_json).is_ok_and(|s| s.structured);
            ReplyMode {
                run_id: c.id,
                mode: if structured {
                    "structured"
                } else {
                    "free_text"
                },
                answered: c.done + c.failed,
                unreadable: c.unreadable,
            }
        })
        .collect())
}

/// One run's settings and counts.
pub fn run_status(store: &Store, run_id: i64) -> Result<RunStatus, JudgeError> {
    store
        .judge_run_counts_of(run_id)?
        .map(run_status_of)
        .ok_or(JudgeError::NoSuchRun(run_id))
}

/// The failed calls of a run with their reasons and raw outputs.
pub fn failures(store: &Store, run_id: i64) -> Result<Vec<CallFailure>, JudgeError> {
    run_status(store, run_id)?;
    Ok(store.failed_calls(run_id)?)
}

/// Provider batches of a run that were submitted and not yet collected.
pub(crate) fn open_batches(
    store: &Store,
    run_id: i64,
) -> Result<Vec<crate::store::OpenBatch>, JudgeError> {
    Ok(store.open_judge_batches(run_id)?)
}

/// Record a submitted provider batch and tie its rows to it.
pub(crate) fn record_batch(
    store: &mut Store,
    run_id: i64,
    provider_id: &str,
    calls: &[(i64, String)],
) -> Result<(), JudgeError> {
    store.write(|tx| -> Result<(), JudgeError> {
        Ok(tx.add_judge_batch(run_id, provider_id, calls)?)
    })
}

/// The calls of one provider batch that still wait for their result: (call id, response id,
/// repetition).
pub(crate) fn batch_calls(
    store: &Store,
    run_id: i64,
    provider_id: &str,
) -> Result<Vec<(i64, i64, i64)>, JudgeError> {
    Ok(store
        .judge_batch_calls(run_id, provider_id)?
        .into_iter()
        .map(|c| (c.call_id, c.response_id, c.repetition))
        .collect())
}

pub(crate) fn close_batch(store: &mut Store, batch_row: i64) -> Result<(), JudgeError> {
    store.write(|tx| -> Result<(), JudgeError> { Ok(tx.close_judge_batch(batch_row)?) })
}

#[cfg(test)]
mod default_prompt_tests {
    use super::*;
    use crate::base::clock::SystemClock;
    use std::sync::Arc;

    #[test]
    fn each_rubric_has_its_own_default_prompt() {
        let mut store = Store::in_memory(Arc::new(SystemClock)).expect("an in-memory study");
        crate::intake::demo::populate_demo(&mut store, 7).expect("the demo study");
        let json = default_prompt(&store, Some("mentalbench")).expect("MentalBench's prompt");
        assert_eq!(
            json.format,
            super::super::ReplyFormat::JsonScores,
            "MentalBench replies as JSON scores"
        );
        assert!(
            json.user.contains("{{response}}"),
            "the default template has the response slot"
        );
        let dict = default_prompt(&store, Some("psycrisis")).expect("PsyCrisis's prompt");
        assert_eq!(
            dict.format,
            super::super::ReplyFormat::ReasonsThenDict,
            "PsyCrisis replies with reasons then a dict"
        );
        assert!(
            matches!(default_prompt(&store, None), Err(JudgeError::Rubric(_))),
            "the demo uses two rubrics, so one must be chosen"
        );
        assert!(
            matches!(
                default_prompt(&store, Some("nope")),
                Err(JudgeError::Rubric(_))
            ),
            "an unknown rubric is refused"
        );
    }
}
