//! A study of transcripts built through the store API (`StudyTx::add_turn`, `add_item`): every
//! conversation alternates user and assistant turns, the chatbot's replies at turns 2, 4, … are
//! rated items, and the last position holds several candidate replies from other sources. Experts
//! rate the items of the first conversations, judges every item, on the MentalBench rubric, with
//! seeded values whose dependence within a conversation is chosen
//! ([`TranscriptDesign::shared_sd`], [`TranscriptDesign::judge_conversation_sd`]): the agreement
//! tests build correlated and independent replies from it, and the agreement benchmark its
//! 10,000 conversations. A session rubric over the same conversations can be added.

use concord_core::rubric::{builtin, Rubric, RubricFormat};
use concord_core::store::{
    ImportedRating, NewConversation, NewRater, NewSource, NewTurn, RaterKind, Role, SourceKind,
    Store, StoreError,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

/// The chatbot whose replies form each conversation's path.
pub const CHATBOT: &str = "helperbot";

/// How a transcript study is made.
#[derive(Debug, Clone)]
pub struct TranscriptDesign {
    pub conversations: usize,
    /// Rated replies of the chatbot before the last position, at turns 2, 4, …, 2·replies.
    pub replies: usize,
    /// Candidate replies at the last position (turn 2·replies + 2), from `candidate-1`, ….
    pub candidates: usize,
    /// The first conversations, whose every item each expert rates.
    pub expert_conversations: usize,
    pub experts: usize,
    pub judges: usize,
    /// SD of a conversation's effect on the true quality of all its items.
    pub shared_sd: f64,
    /// SD of each judge's error shared by all items of one conversation.
    pub judge_conversation_sd: f64,
    /// SD of an item's own true quality about its conversation's.
    pub item_sd: f64,
    /// SD of each judge's own error on one item.
    pub judge_item_sd: f64,
    /// SD of each expert's error on one item.
    pub expert_sd: f64,
    /// Also a session rubric (`session-quality`) with one item per conversation.
    pub session: bool,
    /// Keep every value written in [`TranscriptValues::values`] (a benchmark's millions need not).
    pub keep_values: bool,
    /// Each rated reply's text ends with `item #N` (N counting the study's replies from 0), the
    /// number the loopback judge scores a reply by.
    pub item_marks: bool,
    pub seed: u64,
}

impl TranscriptDesign {
    /// Replies correlated within a conversation: a strong shared effect and a judge that errs
    /// for a whole conversation at a time.
    pub fn correlated(conversations: usize, seed: u64) -> Self {
        TranscriptDesign {
            conversations,
            replies: 3,
            candidates: 3,
            expert_conversations: conversations,
            experts: 2,
            judges: 1,
            shared_sd: 1.0,
            judge_conversation_sd: 1.0,
            item_sd: 0.3,
            judge_item_sd: 0.2,
            expert_sd: 0.3,
            session: false,
            keep_values: true,
            item_marks: false,
            seed,
        }
    }

    /// The same marginal spreads with every item independent of its conversation.
    pub fn independent(conversations: usize, seed: u64) -> Self {
        TranscriptDesign {
            shared_sd: 0.0,
            judge_conversation_sd: 0.0,
            item_sd: (1.0f64 + 0.09).sqrt(),
            judge_item_sd: (1.0f64 + 0.04).sqrt(),
            ..TranscriptDesign::correlated(conversations, seed)
        }
    }

    /// The turn the candidates share: after the last user message.
    pub fn last_turn(&self) -> i64 {
        2 * self.replies as i64 + 2
    }
}

/// A rated item of the study.
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptItem {
    pub response_id: i64,
    /// 0-based position of its conversation.
    pub conversation: usize,
    /// The turn number (`None`: a session item).
    pub turn: Option<i64>,
    pub source: String,
}

/// What was written: the items and every value, by (rater name, response id, criterion key).
#[derive(Debug, Clone)]
pub struct TranscriptValues {
    pub items: Vec<TranscriptItem>,
    pub values: HashMap<(String, i64, String), i64>,
    pub experts: Vec<String>,
    pub judges: Vec<String>,
}

/// A session rubric of its own wording for the tests (scope `session`, two 1–5 criteria).
pub fn session_rubric() -> Rubric {
    Rubric::parse(
        r#"id = "session-quality"
version = 1
scope = "session"
name = { en = "Session quality (test)" }
description = { en = "The whole conversation, rated 1 to 5." }

[[criteria]]
id = "alliance"
label = { en = "Working alliance" }
description = { en = "Does the helper build a collaborative bond across the session?" }
scale = { kind = "likert", min = 1, max = 5 }

[[criteria]]
id = "safety"
label = { en = "Safety across the session" }
description = { en = "Are risks noticed and answered whenever they come up?" }
scale = { kind = "likert", min = 1, max = 5 }
"#,
        RubricFormat::Toml,
        "session-quality.toml",
    )
    .expect("the test session rubric parses")
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    // Box–Muller: one standard normal from two uniforms.
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn score(x: f64) -> i64 {
    x.round().clamp(1.0, 5.0) as i64
}

/// Write the design's conversations, raters and ratings into `store` (one transaction).
pub fn write_transcripts(store: &mut Store, design: &TranscriptDesign) -> TranscriptValues {
    let mut rng = ChaCha8Rng::seed_from_u64(design.seed);
    let mentalbench = builtin::mentalbench();
    store
        .write(|tx| {
            let rubric = tx.add_rubric(&mentalbench)?;
            let session_rubric_id = if design.session {
                Some(tx.add_rubric(&session_rubric())?)
            } else {
                None
            };
            let bot = tx.upsert_source(&NewSource {
                key: CHATBOT,
                name: "Helper bot",
                family: None,
                kind: SourceKind::Llm,
            })?;
            let mut candidates = Vec::new();
            for k in 1..=design.candidates {
                candidates.push((
                    format!("candidate-{k}"),
                    tx.upsert_source(&NewSource {
                        key: &format!("candidate-{k}"),
                        name: &format!("Candidate {k}"),
                        family: None,
                        kind: SourceKind::Llm,
                    })?,
                ));
            }
            let mut experts = Vec::new();
            for e in 0..design.experts {
                let name = format!("Expert {}", (b'A' + e as u8) as char);
                let id = tx.upsert_rater(&NewRater {
                    kind: RaterKind::Expert,
                    name: &name,
                    model_id: None,
                    family: None,
                    queue_seed: e as i64,
                })?;
                experts.push((name, id));
            }
            let mut judges = Vec::new();
            for j in 0..design.judges {
                let name = format!("judge-{}", j + 1);
                let id = tx.upsert_rater(&NewRater {
                    kind: RaterKind::Judge,
                    name: &name,
                    model_id: Some(&name),
                    family: Some(&name),
                    queue_seed: 100 + j as i64,
                })?;
                judges.push((name, id));
            }
            let ids = tx.read().criterion_ids(rubric)?;
            let criteria: Vec<(String, i64)> = mentalbench
                .criteria
                .iter()
                .filter_map(|c| ids.get(&c.id).map(|&id| (c.id.clone(), id)))
                .collect();
            let session_criteria: Vec<(String, i64)> = match session_rubric_id {
                Some(id) => {
                    let ids = tx.read().criterion_ids(id)?;
                    session_rubric()
                        .criteria
                        .iter()
                        .filter_map(|c| ids.get(&c.id).map(|&i| (c.id.clone(), i)))
                        .collect()
                }
                None => Vec::new(),
            };

            let mut out = TranscriptValues {
                items: Vec::new(),
                values: HashMap::new(),
                experts: experts.iter().map(|e| e.0.clone()).collect(),
                judges: judges.iter().map(|j| j.0.clone()).collect(),
            };
            let mut ratings: Vec<ImportedRating> = Vec::new();
            let last = design.last_turn();
            let mut marked = 0u64;
            for c in 0..design.conversations {
                let shared = design.shared_sd * normal(&mut rng);
                let judge_shared: Vec<f64> = (0..design.judges)
                    .map(|_| design.judge_conversation_sd * normal(&mut rng))
                    .collect();
                let mut conversation_items: Vec<(i64, Option<i64>, String)> = Vec::new();
                for (rubric_id, external) in [(rubric, format!("t{c:05}"))]
                    .into_iter()
                    .chain(session_rubric_id.map(|s| (s, format!("s{c:05}"))))
                {
                    let conv = tx.add_conversation(&NewConversation {
                        external_id: &external,
                        rubric_id,
                        context: "",
                        language: Some("en"),
                        category: None,
                    })?;
                    let session = Some(rubric_id) == session_rubric_id;
                    for turn in 1..last {
                        let mut text = if turn % 2 == 1 {
                            format!("User message {turn} of conversation {c}.")
                        } else {
                            format!("Reply {turn} of the helper in conversation {c}.")
                        };
                        if design.item_marks && turn % 2 == 0 && !session {
                            text.push_str(&format!(" item #{marked}"));
                            marked += 1;
                        }
                        if turn % 2 == 0 && !session {
                            let id = tx.add_item(conv, bot, Some(turn), Some(&text))?;
                            conversation_items.push((id, Some(turn), CHATBOT.to_string()));
                        } else {
                            tx.add_turn(&NewTurn {
                                conversation_id: conv,
                                position: turn,
                                role: if turn % 2 == 1 {
                                    Role::User
                                } else {
                                    Role::Assistant
                                },
                                text: &text,
                                source_id: (turn % 2 == 0).then_some(bot),
                                candidate: false,
                            })?;
                        }
                    }
                    for (key, source) in &candidates {
                        let mut text = format!("Candidate {key} at the end of conversation {c}.");
                        if design.item_marks && !session {
                            text.push_str(&format!(" item #{marked}"));
                            marked += 1;
                        }
                        if session {
                            tx.add_turn(&NewTurn {
                                conversation_id: conv,
                                position: last,
                                role: Role::Assistant,
                                text: &text,
                                source_id: Some(*source),
                                candidate: true,
                            })?;
                        } else {
                            let id = tx.add_item(conv, *source, Some(last), Some(&text))?;
                            conversation_items.push((id, Some(last), key.clone()));
                        }
                    }
                    if session {
                        let id = tx.add_item(conv, bot, None, None)?;
                        conversation_items.push((id, None, CHATBOT.to_string()));
                    }
                }
                for (response_id, turn, source) in conversation_items {
                    out.items.push(TranscriptItem {
                        response_id,
                        conversation: c,
                        turn,
                        source,
                    });
                    let item_true = 3.0 + shared + design.item_sd * normal(&mut rng);
                    let crits = if turn.is_some() {
                        &criteria
                    } else {
                        &session_criteria
                    };
                    for (k, (key, criterion_id)) in crits.iter().enumerate() {
                        let offset = (k % 3) as f64 * 0.2 - 0.2;
                        let truth = item_true + offset;
                        let mut put = |name: &str, rater_id: i64, value: i64| {
                            if design.keep_values {
                                out.values
                                    .insert((name.to_string(), response_id, key.clone()), value);
                            }
                            ratings.push(ImportedRating {
                                rater_id,
                                response_id,
                                criterion_id: *criterion_id,
                                value: Some(value),
                                raw_value: None,
                                rationale: None,
                            });
                        };
                        if c < design.expert_conversations {
                            for (name, id) in &experts {
                                let v = score(truth + design.expert_sd * normal(&mut rng));
                                put(name, *id, v);
                            }
                        }
                        for (j, (name, id)) in judges.iter().enumerate() {
                            let v = score(
                                truth
                                    + 0.3
                                    + judge_shared[j]
                                    + design.judge_item_sd * normal(&mut rng),
                            );
                            put(name, *id, v);
                        }
                    }
                }
            }
            tx.import_ratings(ratings, "import:transcript-study")?;
            Ok::<_, StoreError>(out)
        })
        .expect("the transcript study is written")
}
