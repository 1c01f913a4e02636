//! Pairwise preferences between the lead and the experts: drawing a pairwise rubric's pairs
//! ([`design`]), giving them to experts with exactly k experts per pair and the side each expert
//! sees first randomised and recorded ([`assign`]), where the work stands ([`status`]) and an
//! expert's verdicts ([`rate_pair`], in the terms the expert saw: A the answer shown first, B the
//! one shown second; stored in the pair's own left/right terms).
//!
//! Pairs are drawn within a conversation from its answers that have a text (an answer without
//! one cannot be compared), and in a transcript only between replies at the same turn (two
//! candidates after the same history; "per conversation" below is then per conversation and
//! turn). Three designs: every pair (`all`); a seeded sample of N pairs per
//! conversation (`per_conversation`); and `balanced`, N pairs per conversation chosen so that
//! every two sources meet as equally often as the conversations allow: conversations are taken
//! in a seeded order and each takes, among its own pairs, those whose two sources have met least
//! so far (ties broken by a seeded draw), so over conversations that hold every source the
//! counts of any two source pairs differ by at most one. The planning functions are pure and
//! seeded ([`plan_design`], [`plan_assignment`]); the same seed gives the same design and
//! assignment.

use crate::base::text::quoted;
use crate::rubric::builtin;
use crate::store::{
    NewPair, PairDesignRecord, PairVerdictInput, RaterKind, Store, StoreError, StoredRubric, Winner,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The longest rationale of a pair: the import's limit for one cell (1 MiB), which a returned
/// package is also held to.
pub const MAX_RATIONALE_BYTES: usize = 1 << 20;

const STREAM_DESIGN: u64 = 11;
const STREAM_EXPERTS: u64 = 12;
const STREAM_SIDES: u64 = 13;
const STREAM_ORDER: u64 = 10_000;

fn stream(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

#[derive(Debug, thiserror::Error)]
pub enum PairsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Invalid(String),
    #[error("the study has no pair design for {}; run `concord pairs design` first", quoted(.0))]
    NoDesign(String),
    #[error("the pairs of {} are already assigned to experts; an assignment is made once so that every verdict keeps its meaning", quoted(.0))]
    AlreadyAssigned(String),
}

/// How pairs are drawn within each conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "method",
    content = "per_conversation",
    rename_all = "snake_case"
)]
pub enum DesignMethod {
    All,
    PerConversation(usize),
    Balanced(usize),
}

impl DesignMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            DesignMethod::All => "all",
            DesignMethod::PerConversation(_) => "per_conversation",
            DesignMethod::Balanced(_) => "balanced",
        }
    }
    fn per_conversation(self) -> Option<usize> {
        match self {
            DesignMethod::All => None,
            DesignMethod::PerConversation(n) | DesignMethod::Balanced(n) => Some(n),
        }
    }
}

/// An answer a design may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DesignAnswer {
    pub response_id: i64,
    pub source_id: i64,
}

/// A conversation with its answers that have a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesignConversation {
    pub id: i64,
    pub answers: Vec<DesignAnswer>,
}

fn ordered(a: DesignAnswer, b: DesignAnswer) -> (DesignAnswer, DesignAnswer) {
    if a.response_id < b.response_id {
        (a, b)
    } else {
        (b, a)
    }
}

/// Draw the pairs (pure and seeded; see the module docs). Pairs come out conversation by
/// conversation in the order of `conversations`, left the lower response id.
pub fn plan_design(
    conversations: &[DesignConversation],
    method: DesignMethod,
    seed: u64,
) -> Vec<NewPair> {
    let mut rng = stream(seed, STREAM_DESIGN);
    let all_pairs = |c: &DesignConversation| -> Vec<(DesignAnswer, DesignAnswer)> {
        let mut answers = c.answers.clone();
        answers.sort_by_key(|a| a.response_id);
        answers.dedup_by_key(|a| a.response_id);
        let mut out = Vec::new();
        for i in 0..answers.len() {
            for j in i + 1..answers.len() {
                out.push(ordered(answers[i], answers[j]));
            }
        }
        out
    };
    let as_new = |c: &DesignConversation, (l, r): (DesignAnswer, DesignAnswer)| NewPair {
        conversation_id: c.id,
        left_response_id: l.response_id,
        right_response_id: r.response_id,
    };
    match method {
        DesignMethod::All => conversations
            .iter()
            .flat_map(|c| all_pairs(c).into_iter().map(move |p| as_new(c, p)))
            .collect(),
        DesignMethod::PerConversation(n) => {
            let mut out = Vec::new();
            for c in conversations {
                let mut pairs = all_pairs(c);
                pairs.shuffle(&mut rng);
                pairs.truncate(n);
                pairs.sort_by_key(|(l, r)| (l.response_id, r.response_id));
                out.extend(pairs.into_iter().map(|p| as_new(c, p)));
            }
            out
        }
        DesignMethod::Balanced(n) => {
            let mut met: HashMap<(i64, i64), usize> = HashMap::new();
            let mut seen: HashMap<i64, usize> = HashMap::new();
            let mut order: Vec<usize> = (0..conversations.len()).collect();
            order.shuffle(&mut rng);
            let mut chosen: Vec<Vec<(DesignAnswer, DesignAnswer)>> =
                vec![Vec::new(); conversations.len()];
            for &ci in &order {
                let c = &conversations[ci];
                let mut pairs: Vec<((DesignAnswer, DesignAnswer), u64)> =
                    all_pairs(c).into_iter().map(|p| (p, rng.gen())).collect();
                for _ in 0..n.min(pairs.len()) {
                    // The pair whose sources met least, then whose sources were seen least,
                    // then the seeded draw.
                    let key = |(l, r): &(DesignAnswer, DesignAnswer), tie: u64| {
                        let s = (l.source_id.min(r.source_id), l.source_id.max(r.source_id));
                        (
                            met.get(&s).copied().unwrap_or(0),
                            seen.get(&l.source_id).copied().unwrap_or(0)
                                + seen.get(&r.source_id).copied().unwrap_or(0),
                            tie,
                        )
                    };
                    let Some(best) = (0..pairs.len()).min_by_key(|&i| key(&pairs[i].0, pairs[i].1))
                    else {
                        break;
                    };
                    let ((l, r), _) = pairs.swap_remove(best);
                    *met.entry((l.source_id.min(r.source_id), l.source_id.max(r.source_id)))
                        .or_default() += 1;
                    *seen.entry(l.source_id).or_default() += 1;
                    *seen.entry(r.source_id).or_default() += 1;
                    chosen[ci].push((l, r));
                }
            }
            let mut out = Vec::new();
            for (c, mut pairs) in conversations.iter().zip(chosen) {
                pairs.sort_by_key(|(l, r)| (l.response_id, r.response_id));
                out.extend(pairs.into_iter().map(|p| as_new(c, p)));
            }
            out
        }
    }
}

/// One expert's share of an assignment: (pair id, left shown first) in the expert's order.
pub type ExpertPairs = Vec<(i64, bool)>;

/// Give every pair to exactly `k` of `experts` experts, loads within one of each other, each
/// expert's pairs in a seeded order and each (expert, pair) with a seeded side shown first.
pub fn plan_assignment(
    pairs: &[i64],
    experts: usize,
    k: usize,
    seed: u64,
) -> Result<Vec<ExpertPairs>, PairsError> {
    if experts == 0 {
        return Err(PairsError::Invalid(
            "the study has no experts; add them with `concord expert add NAME`".into(),
        ));
    }
    if k == 0 || k > experts {
        return Err(PairsError::Invalid(format!(
            "--k {k}: each pair goes to between 1 and the {experts} experts of the study"
        )));
    }
    if pairs.is_empty() {
        return Err(PairsError::Invalid(
            "the design has no pairs to assign".into(),
        ));
    }
    let mut shuffled = pairs.to_vec();
    let mut rng = stream(seed, STREAM_EXPERTS);
    shuffled.shuffle(&mut rng);
    let mut perm: Vec<usize> = (0..experts).collect();
    perm.shuffle(&mut rng);
    let mut sides = stream(seed, STREAM_SIDES);
    let mut lists: Vec<ExpertPairs> = vec![Vec::new(); experts];
    for (j, &pair) in shuffled.iter().enumerate() {
        for s in 0..k {
            let expert = perm[(j * k + s) % experts];
            lists[expert].push((pair, sides.gen_bool(0.5)));
        }
    }
    for (e, list) in lists.iter_mut().enumerate() {
        list.sort_by_key(|(p, _)| *p);
        list.shuffle(&mut stream(seed, STREAM_ORDER + e as u64));
    }
    Ok(lists)
}

/// The pairwise rubric of the study for `rubric` (its id, or a study rubric's key): the named one
/// when given, else the shipped pairwise form of the study's rubric. A shipped rubric the study
/// does not hold yet comes back with id 0 and is stored only with the design it is drawn for
/// ([`design`] writes both in one transaction, so a refused design leaves no rubric behind).
fn pairwise_rubric(store: &Store, rubric: Option<&str>) -> Result<StoredRubric, PairsError> {
    let stored = store.rubrics()?;
    if let Some(key) = rubric {
        if let Some(s) = stored.iter().find(|s| s.rubric.id == key) {
            return check_pairwise(s.clone());
        }
        let Some(r) = builtin::by_id(key) else {
            return Err(PairsError::Invalid(format!(
                "the study has no rubric {} and none is shipped under that id",
                quoted(&key)
            )));
        };
        return check_pairwise(StoredRubric { id: 0, rubric: r });
    }
    if let Some(s) = stored.iter().find(|s| s.rubric.is_pairwise()) {
        return Ok(s.clone());
    }
    let in_use = store.rubric_ids_in_use()?;
    let shipped = stored
        .iter()
        .filter(|s| in_use.contains(&s.id))
        .find_map(|s| builtin::pairwise_for(&s.rubric.id));
    match shipped {
        Some(r) => check_pairwise(StoredRubric { id: 0, rubric: r }),
        None => Err(PairsError::Invalid(
            "no pairwise rubric for this study's conversations; name one with --rubric (a pairwise rubric file added with `concord rubric add`)".into(),
        )),
    }
}

fn check_pairwise(s: StoredRubric) -> Result<StoredRubric, PairsError> {
    if s.rubric.is_pairwise() {
        Ok(s)
    } else {
        Err(PairsError::Invalid(format!(
            "rubric {} rates one answer at a time; pairs need a pairwise rubric (every criterion a preference)",
            quoted(&s.rubric.id)
        )))
    }
}

/// The pairwise rubric with a design, for the reads and assignment (`--rubric` or the only one).
pub fn designed_rubric(store: &Store, rubric: Option<&str>) -> Result<StoredRubric, PairsError> {
    let stored = store.rubrics()?;
    let candidates: Vec<StoredRubric> = stored
        .into_iter()
        .filter(|s| s.rubric.is_pairwise())
        .filter(|s| rubric.is_none_or(|k| s.rubric.id == k))
        .collect();
    for s in &candidates {
        if store.read().pair_design(s.id)?.is_some() {
            return Ok(s.clone());
        }
    }
    Err(PairsError::NoDesign(
        rubric
            .map(str::to_string)
            .or_else(|| candidates.first().map(|s| s.rubric.id.clone()))
            .unwrap_or_else(|| "a pairwise rubric".into()),
    ))
}

/// The rubric whose conversations a pairwise rubric compares answers of: `of` when given; else
/// the study's rubric the pairwise one is the shipped pairwise form of; else the study's only
/// rubric in use.
fn compared_rubric(
    store: &Store,
    pairwise: &StoredRubric,
    of: Option<&str>,
) -> Result<StoredRubric, PairsError> {
    let in_use = store.rubric_ids_in_use()?;
    let candidates: Vec<StoredRubric> = store
        .rubrics()?
        .into_iter()
        .filter(|s| in_use.contains(&s.id) && !s.rubric.is_pairwise())
        .collect();
    if let Some(key) = of {
        return candidates
            .into_iter()
            .find(|s| s.rubric.id == key)
            .ok_or_else(|| {
                PairsError::Invalid(format!(
                    "the study has no conversations rated with rubric {}",
                    quoted(&key)
                ))
            });
    }
    if let Some(s) = candidates
        .iter()
        .find(|s| builtin::pairwise_for(&s.rubric.id).is_some_and(|p| p.id == pairwise.rubric.id))
    {
        return Ok(s.clone());
    }
    match candidates.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(PairsError::Invalid(
            "the study has no conversations to draw pairs from; import a dataset first".into(),
        )),
        _ => Err(PairsError::Invalid(format!(
            "the study holds conversations of {} rubrics; say whose answers to compare with --of RUBRIC",
            candidates.len()
        ))),
    }
}

/// What [`design`] drew.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DesignReport {
    pub rubric: String,
    /// The rubric whose conversations' answers are compared.
    pub of: String,
    pub method: DesignMethod,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seed: u64,
    pub conversations: usize,
    pub pairs: usize,
    /// Answers left out because they have no text.
    pub answers_without_text: usize,
    /// How often each two sources meet, fewest and most (over source pairs that meet at all).
    pub source_pair_meetings: (usize, usize),
}

/// Draw and store the pairs of the study's pairwise rubric (see the module docs).
pub fn design(
    store: &mut Store,
    rubric: Option<&str>,
    of: Option<&str>,
    method: DesignMethod,
    seed: u64,
) -> Result<DesignReport, PairsError> {
    if method.per_conversation() == Some(0) {
        return Err(PairsError::Invalid(
            "--per-conversation 0 draws no pairs; give at least 1".into(),
        ));
    }
    let pairwise = pairwise_rubric(store, rubric)?;
    // A shipped rubric not stored yet (id 0) has no design; it is stored with its pairs below.
    let designed = if pairwise.id == 0 {
        None
    } else {
        store.read().pair_design(pairwise.id)?
    };
    if let Some(d) = designed {
        return Err(PairsError::Invalid(format!(
            "{} already has its pairs ({} design, seed {}); pairs are drawn once so that assignments and verdicts keep their meaning",
            quoted(&pairwise.rubric.id),
            d.method,
            d.seed
        )));
    }
    let base = compared_rubric(store, &pairwise, of)?;
    let without_text = store.responses_without_text()?;
    let mut conversations = Vec::new();
    let mut left_out = 0usize;
    // Two answers are compared only after the same history: in one conversation at one turn
    // (a single-turn conversation's answers all stand at turn 2).
    let conversation_of: HashMap<i64, (i64, Option<i64>)> = store
        .response_conversations()?
        .into_iter()
        .map(|r| (r.response_id, (r.conversation_id, r.turn)))
        .collect();
    {
        let rubric_id = base.id;
        let mut by_conversation: BTreeMap<(i64, Option<i64>), Vec<DesignAnswer>> = BTreeMap::new();
        for r in store.rubric_responses(rubric_id)? {
            if without_text.contains(&r.response_id) {
                left_out += 1;
                continue;
            }
            let Some(&conversation) = conversation_of.get(&r.response_id) else {
                continue;
            };
            by_conversation
                .entry(conversation)
                .or_default()
                .push(DesignAnswer {
                    response_id: r.response_id,
                    source_id: r.source_id,
                });
        }
        conversations.extend(
            by_conversation
                .into_iter()
                .map(|((id, _), answers)| DesignConversation { id, answers }),
        );
    }
    let pairs = plan_design(&conversations, method, seed);
    if pairs.is_empty() {
        return Err(PairsError::Invalid(
            "no conversation has two answers with a text to compare; import answers first".into(),
        ));
    }
    let sources: HashMap<i64, i64> = conversations
        .iter()
        .flat_map(|c| c.answers.iter().map(|a| (a.response_id, a.source_id)))
        .collect();
    let mut met: HashMap<(i64, i64), usize> = HashMap::new();
    for p in &pairs {
        let (a, b) = (sources[&p.left_response_id], sources[&p.right_response_id]);
        *met.entry((a.min(b), a.max(b))).or_default() += 1;
    }
    let meetings = (
        met.values().copied().min().unwrap_or(0),
        met.values().copied().max().unwrap_or(0),
    );
    let count = store.write(|tx| -> Result<usize, PairsError> {
        // The pairwise rubric (when the study does not hold it yet), the design and its pairs:
        // all of them or, when any part is refused, none.
        let rubric_id = match pairwise.id {
            0 => tx.add_rubric(&pairwise.rubric)?,
            id => id,
        };
        let record = PairDesignRecord {
            rubric_id,
            method: method.as_str().into(),
            per_conversation: method.per_conversation().map(|n| n as i64),
            seed: seed as i64,
            created_at: 0,
        };
        let n = tx.add_pair_design(&record, &pairs)?;
        tx.audit(
            "lead",
            "pairs_designed",
            &serde_json::json!({"rubric": pairwise.rubric.id, "method": method.as_str(),
                                "per_conversation": method.per_conversation(), "seed": seed,
                                "pairs": n}),
        )?;
        Ok(n)
    })?;
    Ok(DesignReport {
        rubric: pairwise.rubric.id,
        of: base.rubric.id,
        method,
        seed,
        conversations: conversations
            .iter()
            .filter(|c| c.answers.len() >= 2)
            .count(),
        pairs: count,
        answers_without_text: left_out,
        source_pair_meetings: meetings,
    })
}

/// What [`assign`] gave out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairAssignmentReport {
    pub rubric: String,
    pub k: usize,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seed: u64,
    pub pairs: usize,
    /// Expert name → pairs given, in name order.
    pub experts: Vec<(String, usize)>,
    /// Of all (expert, pair) items, how many show the left answer first.
    pub left_first: usize,
}

/// Give the design's pairs to the study's experts, exactly `k` experts per pair (see
/// [`plan_assignment`]); refused once the pairs are assigned.
pub fn assign(
    store: &mut Store,
    rubric: Option<&str>,
    k: usize,
    seed: u64,
) -> Result<PairAssignmentReport, PairsError> {
    let pairwise = designed_rubric(store, rubric)?;
    if !store.read().pair_assignments(pairwise.id)?.is_empty() {
        return Err(PairsError::AlreadyAssigned(pairwise.rubric.id));
    }
    let pairs: Vec<i64> = store
        .read()
        .pairs(pairwise.id)?
        .iter()
        .map(|p| p.id)
        .collect();
    let mut experts: Vec<(i64, String)> = store
        .rater_records()?
        .into_iter()
        .filter(|r| r.is_expert())
        .map(|r| (r.id, r.name))
        .collect();
    experts.sort_by(|a, b| a.1.cmp(&b.1));
    let lists = plan_assignment(&pairs, experts.len(), k, seed)?;
    let left_first = lists.iter().flatten().filter(|(_, l)| *l).count();
    let given = store.write(|tx| -> Result<Vec<(String, usize)>, PairsError> {
        let mut given = Vec::new();
        for ((id, name), list) in experts.iter().zip(&lists) {
            given.push((name.clone(), tx.add_pair_assignments(*id, list)?));
        }
        tx.audit(
            "lead",
            "pairs_assigned",
            &serde_json::json!({"rubric": pairwise.rubric.id, "k": k, "seed": seed,
                                "pairs": pairs.len()}),
        )?;
        Ok(given)
    })?;
    Ok(PairAssignmentReport {
        rubric: pairwise.rubric.id,
        k,
        seed,
        pairs: pairs.len(),
        experts: given,
        left_first,
    })
}

/// One rater's progress on the pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RaterPairProgress {
    pub rater: String,
    /// `expert` or `judge`.
    pub kind: String,
    /// Pairs assigned (experts) or asked (judges).
    pub pairs: usize,
    /// Pairs with a verdict on every criterion (in at least one order).
    pub done: usize,
    /// Verdicts given (a judge asked both orders gives two per pair and criterion).
    pub verdicts: usize,
}

/// Where a pairwise rubric's work stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairStatus {
    pub rubric: String,
    pub method: String,
    pub per_conversation: Option<i64>,
    pub seed: i64,
    pub conversations: usize,
    pub pairs: usize,
    pub criteria: Vec<String>,
    pub raters: Vec<RaterPairProgress>,
}

/// The design, and every rater's progress on it.
pub fn status(store: &Store, rubric: Option<&str>) -> Result<PairStatus, PairsError> {
    let pairwise = designed_rubric(store, rubric)?;
    let read = store.read();
    let design = read
        .pair_design(pairwise.id)?
        .ok_or_else(|| PairsError::NoDesign(pairwise.rubric.id.clone()))?;
    let pairs = read.pairs(pairwise.id)?;
    let criteria = pairwise.rubric.criteria.len();
    let mut assigned: BTreeMap<i64, usize> = BTreeMap::new();
    for a in read.pair_assignments(pairwise.id)? {
        *assigned.entry(a.rater_id).or_default() += 1;
    }
    let mut answered: BTreeMap<(i64, i64), HashSet<i64>> = BTreeMap::new();
    let mut verdicts: BTreeMap<i64, usize> = BTreeMap::new();
    for v in read.pair_verdicts(pairwise.id)? {
        answered
            .entry((v.rater_id, v.pair_id))
            .or_default()
            .insert(v.criterion_id);
        *verdicts.entry(v.rater_id).or_default() += 1;
    }
    let mut asked: BTreeMap<i64, HashSet<i64>> = BTreeMap::new();
    for (rater, pair) in answered.keys() {
        asked.entry(*rater).or_default().insert(*pair);
    }
    let mut raters = Vec::new();
    for r in store.rater_records()? {
        let n_assigned = assigned.get(&r.id).copied().unwrap_or(0);
        let n_verdicts = verdicts.get(&r.id).copied().unwrap_or(0);
        if n_assigned == 0 && n_verdicts == 0 {
            continue;
        }
        let done = answered
            .range((r.id, i64::MIN)..=(r.id, i64::MAX))
            .filter(|(_, c)| c.len() == criteria)
            .count();
        raters.push(RaterPairProgress {
            kind: r.kind.clone(),
            pairs: if r.kind == RaterKind::Judge.as_str() {
                asked.get(&r.id).map_or(0, HashSet::len)
            } else {
                n_assigned
            },
            rater: r.name,
            done,
            verdicts: n_verdicts,
        });
    }
    raters.sort_by(|a, b| a.kind.cmp(&b.kind).then(a.rater.cmp(&b.rater)));
    Ok(PairStatus {
        rubric: pairwise.rubric.id.clone(),
        method: design.method,
        per_conversation: design.per_conversation,
        seed: design.seed,
        conversations: pairs
            .iter()
            .map(|p| p.conversation_id)
            .collect::<HashSet<_>>()
            .len(),
        pairs: pairs.len(),
        criteria: pairwise
            .rubric
            .criteria
            .iter()
            .map(|c| c.id.clone())
            .collect(),
        raters,
    })
}

/// An expert's answer in the terms they saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ShownChoice {
    /// The answer shown first (left on a wide window, top on a narrow one).
    A,
    /// The answer shown second.
    B,
    Tie,
}

impl ShownChoice {
    /// The verdict in the pair's own terms, given which side was shown first.
    pub fn winner(self, left_first: bool) -> Winner {
        let first_preferred = match self {
            ShownChoice::A => Some(true),
            ShownChoice::B => Some(false),
            ShownChoice::Tie => None,
        };
        Winner::from_shown(first_preferred, left_first)
    }

    /// A stored verdict in the terms the rater saw.
    pub fn of(w: Winner, left_first: bool) -> ShownChoice {
        match w.shown(left_first) {
            Some(true) => ShownChoice::A,
            Some(false) => ShownChoice::B,
            None => ShownChoice::Tie,
        }
    }
}

/// Record an expert's verdict on one criterion of an assigned pair; `None` clears it. A tie on a
/// criterion that allows none, a pair not assigned to the rater and an unknown criterion are
/// refused. The pair is marked finished once every criterion has an answer.
pub fn rate_pair(
    store: &mut Store,
    rater_id: i64,
    pair_id: i64,
    criterion: &str,
    choice: Option<ShownChoice>,
    rationale: Option<&str>,
) -> Result<(), PairsError> {
    let pair = store
        .read()
        .pair(pair_id)?
        .ok_or_else(|| PairsError::Invalid(format!("there is no pair {pair_id}")))?;
    let rubric = store
        .rubrics()?
        .into_iter()
        .find(|s| s.id == pair.rubric_id)
        .ok_or_else(|| PairsError::Invalid(format!("pair {pair_id} has no rubric")))?;
    let assignment = store
        .read()
        .pair_assignments_of(rubric.id, rater_id)?
        .into_iter()
        .find(|a| a.pair_id == pair_id)
        .ok_or_else(|| {
            PairsError::Invalid(format!("pair {pair_id} is not assigned to this rater"))
        })?;
    let c = rubric.rubric.criterion(criterion).ok_or_else(|| {
        PairsError::Invalid(format!(
            "{} has no criterion {}",
            quoted(&rubric.rubric.id),
            quoted(&criterion)
        ))
    })?;
    if choice == Some(ShownChoice::Tie) && !c.scale.contains(crate::rubric::PREFER_TIE) {
        return Err(PairsError::Invalid(format!(
            "{} does not allow a tie: choose A or B",
            quoted(&c.id)
        )));
    }
    let ids = store.read().criterion_ids(rubric.id)?;
    let criterion_id = ids[&c.id];
    // A choice made after the rationale was written carries it, as the pair's other verdicts do.
    let held = match rationale {
        Some(_) => None,
        None => store
            .read()
            .pair_work(rater_id, pair_id)?
            .and_then(|w| w.rationale),
    };
    let rationale = rationale.or(held.as_deref());
    store.write(|tx| -> Result<(), PairsError> {
        tx.set_pair_verdict(&PairVerdictInput {
            rater_id,
            pair_id,
            criterion_id,
            left_first: assignment.left_first,
            winner: choice.map(|c| c.winner(assignment.left_first)),
            rationale,
            origin: "expert",
        })?;
        let answered: HashSet<i64> = tx
            .read()
            .pair_verdicts_on(rater_id, pair_id)?
            .into_iter()
            .map(|v| v.criterion_id)
            .collect();
        if ids.values().all(|c| answered.contains(c)) {
            tx.complete_pair_assignment(rater_id, pair_id)?;
        }
        Ok(())
    })?;
    Ok(())
}

/// One criterion of a pair as the rating screen shows it, with this rater's current choice.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairCriterion {
    pub key: String,
    pub label: crate::rubric::LocalText,
    pub description: crate::rubric::LocalText,
    pub group: Option<String>,
    /// Whether "neither" (a tie) is an answer.
    pub ties: bool,
    /// The rater's choice in the terms they see (A the answer shown first).
    pub choice: Option<ShownChoice>,
}

/// Everything the pair rating screen shows for one pair, blinded: the two answers in the order
/// this rater sees them, never their sources.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairItem {
    /// Its number in the rater's pair queue (1-based).
    pub item: i64,
    pub total: i64,
    pub completed: i64,
    pub pair_id: i64,
    pub context: String,
    /// The answer shown first (A).
    pub first: String,
    /// The answer shown second (B).
    pub second: String,
    pub language: Option<String>,
    pub rubric_name: crate::rubric::LocalText,
    pub groups: Vec<crate::rubric::Group>,
    pub criteria: Vec<PairCriterion>,
    /// The rater's rationale for their choices on this pair.
    pub rationale: Option<String>,
    /// The reason of the rater's latest flag on this pair, if they flagged it.
    pub flag_reason: Option<String>,
}

/// A rater's pair queue.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairQueue {
    pub rater_id: i64,
    pub rubric: String,
    pub total: i64,
    pub completed: i64,
    /// The first pair not yet finished (1-based); 0 when the queue is empty, `total` + 1 when
    /// every pair is finished.
    pub resume_item: i64,
}

/// Where a pair stands after a choice.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairProgress {
    pub item: i64,
    /// Criteria still without a choice.
    pub missing: i64,
    pub complete: bool,
    pub completed: i64,
    pub total: i64,
}

/// The rater's assignments on the study's pairwise rubric, in their order.
fn queue_of(
    store: &Store,
    rater_id: i64,
) -> Result<(StoredRubric, Vec<crate::store::PairAssignmentRecord>), PairsError> {
    let rubric = designed_rubric(store, None)?;
    let mine = store.read().pair_assignments_of(rubric.id, rater_id)?;
    Ok((rubric, mine))
}

/// The rater's pair queue and where to resume.
pub fn pair_queue(store: &Store, rater_id: i64) -> Result<PairQueue, PairsError> {
    let (rubric, mine) = queue_of(store, rater_id)?;
    let completed = mine.iter().filter(|a| a.completed_at.is_some()).count() as i64;
    let resume = mine
        .iter()
        .position(|a| a.completed_at.is_none())
        .map_or(mine.len() as i64 + i64::from(!mine.is_empty()), |i| {
            i as i64 + 1
        });
    Ok(PairQueue {
        rater_id,
        rubric: rubric.rubric.id,
        total: mine.len() as i64,
        completed,
        resume_item: if mine.is_empty() { 0 } else { resume },
    })
}

/// Pair number `item` (1-based) of the rater's queue, as the screen shows it.
pub fn pair_item(store: &Store, rater_id: i64, item: i64) -> Result<PairItem, PairsError> {
    let (rubric, mine) = queue_of(store, rater_id)?;
    let a = usize::try_from(item - 1)
        .ok()
        .and_then(|i| mine.get(i))
        .ok_or_else(|| {
            PairsError::Invalid(format!(
                "there is no pair {item} in this rater's queue of {}",
                mine.len()
            ))
        })?;
    let pair = store
        .read()
        .pair(a.pair_id)?
        .ok_or_else(|| PairsError::Invalid(format!("pair {} is missing", a.pair_id)))?;
    let (first_id, second_id) = if a.left_first {
        (pair.left_response_id, pair.right_response_id)
    } else {
        (pair.right_response_id, pair.left_response_id)
    };
    let first = store.item_text(first_id)?;
    let second = store.item_text(second_id)?;
    let rationale = store
        .read()
        .pair_work(rater_id, a.pair_id)?
        .and_then(|w| w.rationale);
    let flag_reason = store
        .read()
        .pair_flags_of_rater(rater_id)?
        .into_iter()
        .rev()
        .find(|f| f.pair_id == a.pair_id && f.resolved_at.is_none())
        .map(|f| f.reason);
    let ids = store.read().criterion_ids(rubric.id)?;
    let mine_verdicts = store.read().pair_verdicts_on(rater_id, a.pair_id)?;
    let criteria = rubric
        .rubric
        .criteria
        .iter()
        .map(|c| {
            let choice = ids.get(&c.id).and_then(|id| {
                mine_verdicts
                    .iter()
                    .find(|v| v.criterion_id == *id)
                    .map(|v| ShownChoice::of(v.winner, a.left_first))
            });
            PairCriterion {
                key: c.id.clone(),
                label: c.label.clone(),
                description: c.description.clone(),
                group: c.group.clone(),
                ties: c.scale.contains(crate::rubric::PREFER_TIE),
                choice,
            }
        })
        .collect();
    Ok(PairItem {
        item,
        total: mine.len() as i64,
        completed: mine.iter().filter(|a| a.completed_at.is_some()).count() as i64,
        pair_id: a.pair_id,
        context: first.context,
        first: first.answer.unwrap_or_default(),
        second: second.answer.unwrap_or_default(),
        language: first.language,
        rubric_name: rubric.rubric.name.clone(),
        groups: rubric.rubric.groups.clone(),
        criteria,
        rationale,
        flag_reason,
    })
}

/// The pair number `item` (1-based) of the rater's queue.
fn queued_pair(store: &Store, rater_id: i64, item: i64) -> Result<i64, PairsError> {
    let (_, mine) = queue_of(store, rater_id)?;
    usize::try_from(item - 1)
        .ok()
        .and_then(|i| mine.get(i))
        .map(|a| a.pair_id)
        .ok_or_else(|| PairsError::Invalid(format!("there is no pair {item} in this queue")))
}

/// Write the rater's rationale for pair number `item` of their queue (empty clears it): kept
/// with the pair and on each of its verdicts, committed before this returns.
pub fn set_pair_rationale(
    store: &mut Store,
    rater_id: i64,
    item: i64,
    rationale: &str,
) -> Result<(), PairsError> {
    let pair_id = queued_pair(store, rater_id, item)?;
    let text = Some(rationale.trim()).filter(|t| !t.is_empty());
    if text.is_some_and(|t| t.len() > MAX_RATIONALE_BYTES) {
        return Err(PairsError::Invalid(format!(
            "a rationale of more than {MAX_RATIONALE_BYTES} bytes"
        )));
    }
    store.write(|tx| -> Result<(), PairsError> {
        tx.set_pair_rationale(rater_id, pair_id, text, "expert")?;
        Ok(())
    })
}

/// Flag pair number `item` of the rater's queue for the lead's attention, with a reason (held to
/// the limits of every flag: [`crate::store::MAX_FLAGS_PER_ITEM`],
/// [`crate::store::MAX_FLAG_REASON_BYTES`]).
pub fn flag_pair(
    store: &mut Store,
    rater_id: i64,
    item: i64,
    reason: &str,
) -> Result<(), PairsError> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(PairsError::Invalid(
            "a flag needs a reason: say what the lead should look at".to_string(),
        ));
    }
    if reason.len() > crate::store::MAX_FLAG_REASON_BYTES {
        return Err(PairsError::Invalid(format!(
            "a flag's reason is at most {} bytes; this one has {}: say it more briefly",
            crate::store::MAX_FLAG_REASON_BYTES,
            reason.len()
        )));
    }
    let pair_id = queued_pair(store, rater_id, item)?;
    store.write(|tx| -> Result<(), PairsError> {
        if tx.pair_flag_count(rater_id, pair_id)? >= crate::store::MAX_FLAGS_PER_ITEM {
            return Err(PairsError::Invalid(format!(
                "this pair already carries {} flags of yours, the most one pair may; the lead will see them",
                crate::store::MAX_FLAGS_PER_ITEM
            )));
        }
        tx.add_pair_flag(rater_id, pair_id, reason)?;
        Ok(())
    })
}

/// Record that the rater left pair number `item` after `seconds` on it: time on task, bounded
/// as an item's is ([`crate::workflow::queue::countable_seconds`]: at most what passed since the
/// pair was first shown or the rater's time was last counted, which moves to now).
pub fn leave_pair(
    store: &mut Store,
    rater_id: i64,
    item: i64,
    seconds: f64,
) -> Result<(), PairsError> {
    let pair_id = queued_pair(store, rater_id, item)?;
    store.write(|tx| -> Result<(), PairsError> {
        let shown = tx
            .read()
            .pair_work(rater_id, pair_id)?
            .and_then(|w| w.first_shown_at);
        let counted = tx.read().time_counted_until(rater_id)?;
        let seconds = crate::workflow::queue::countable_seconds(seconds, tx.now(), shown, counted);
        tx.note_pair_shown(rater_id, pair_id, seconds)?;
        tx.count_time_until_now(rater_id, false)?;
        Ok(())
    })
}

/// Open the rater's pair queue ([`pair_queue`]): their time on task is counted from now if it
/// never was, so the first pair they leave has a moment to be measured from.
pub fn open_pair_queue(store: &mut Store, rater_id: i64) -> Result<PairQueue, PairsError> {
    let queue = pair_queue(store, rater_id)?;
    if store.read().time_counted_until(rater_id)?.is_none() {
        store.write(|tx| tx.count_time_until_now(rater_id, true))?;
    }
    Ok(queue)
}

/// Record the rater's choice on pair number `item` of their queue (committed before this
/// returns) and say where the pair stands.
pub fn rate_pair_item(
    store: &mut Store,
    rater_id: i64,
    item: i64,
    criterion: &str,
    choice: Option<ShownChoice>,
) -> Result<PairProgress, PairsError> {
    let (rubric, mine) = queue_of(store, rater_id)?;
    let a = usize::try_from(item - 1)
        .ok()
        .and_then(|i| mine.get(i))
        .ok_or_else(|| PairsError::Invalid(format!("there is no pair {item} in this queue")))?;
    rate_pair(store, rater_id, a.pair_id, criterion, choice, None)?;
    let item_view = pair_item(store, rater_id, item)?;
    let missing = item_view
        .criteria
        .iter()
        .filter(|c| c.choice.is_none())
        .count() as i64;
    let _ = rubric;
    Ok(PairProgress {
        item,
        missing,
        complete: missing == 0,
        completed: item_view.completed,
        total: item_view.total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conversations(n: usize, sources: i64) -> Vec<DesignConversation> {
        (0..n as i64)
            .map(|c| DesignConversation {
                id: c + 1,
                answers: (0..sources)
                    .map(|s| DesignAnswer {
                        response_id: c * 100 + s + 1,
                        source_id: s + 1,
                    })
                    .collect(),
            })
            .collect()
    }

    #[test]
    fn all_pairs_are_every_two_answers_of_a_conversation() {
        let pairs = plan_design(&conversations(3, 10), DesignMethod::All, 1);
        assert_eq!(
            pairs.len(),
            3 * 45,
            "ten answers make 45 pairs per conversation"
        );
        assert!(
            pairs
                .iter()
                .all(|p| p.left_response_id < p.right_response_id
                    && p.left_response_id / 100 == p.right_response_id / 100),
            "a pair is two answers of one conversation, left the lower id"
        );
    }

    #[test]
    fn a_sample_per_conversation_is_seeded() {
        let cs = conversations(20, 10);
        let a = plan_design(&cs, DesignMethod::PerConversation(4), 7);
        let b = plan_design(&cs, DesignMethod::PerConversation(4), 7);
        let c = plan_design(&cs, DesignMethod::PerConversation(4), 8);
        assert_eq!(a.len(), 80, "four pairs from each of 20 conversations");
        assert_eq!(a, b, "the same seed draws the same pairs");
        assert_ne!(a, c, "another seed draws other pairs");
    }

    #[test]
    fn the_balanced_design_meets_every_two_sources_equally_often() {
        let cs = conversations(90, 10);
        let pairs = plan_design(&cs, DesignMethod::Balanced(5), 3);
        assert_eq!(pairs.len(), 450, "five pairs from each of 90 conversations");
        let mut met: HashMap<(i64, i64), usize> = HashMap::new();
        for p in &pairs {
            let (a, b) = (p.left_response_id % 100, p.right_response_id % 100);
            *met.entry((a.min(b), a.max(b))).or_default() += 1;
        }
        assert_eq!(met.len(), 45, "every two of the ten sources meet");
        let (lo, hi) = (met.values().min().unwrap(), met.values().max().unwrap());
        assert!(
            hi - lo <= 1,
            "450 pairs over 45 source pairs is 10 each, at most one apart: {lo}..{hi}"
        );
    }

    #[test]
    fn each_pair_goes_to_exactly_k_experts_with_even_loads_and_random_sides() {
        let pairs: Vec<i64> = (1..=101).collect();
        let lists = plan_assignment(&pairs, 4, 2, 5).unwrap();
        let mut per_pair: HashMap<i64, usize> = HashMap::new();
        for list in &lists {
            let unique: HashSet<i64> = list.iter().map(|(p, _)| *p).collect();
            assert_eq!(unique.len(), list.len(), "no expert sees a pair twice");
            for (p, _) in list {
                *per_pair.entry(*p).or_default() += 1;
            }
        }
        assert!(
            per_pair.values().all(|&n| n == 2) && per_pair.len() == 101,
            "exactly k = 2 experts per pair"
        );
        let loads: Vec<usize> = lists.iter().map(Vec::len).collect();
        assert!(
            loads.iter().max().unwrap() - loads.iter().min().unwrap() <= 1,
            "loads within one: {loads:?}"
        );
        let left = lists.iter().flatten().filter(|(_, l)| *l).count();
        assert!(
            (70..=132).contains(&left),
            "sides are drawn at random, about half left first of 202: {left}"
        );
        assert_eq!(
            lists,
            plan_assignment(&pairs, 4, 2, 5).unwrap(),
            "the same seed gives the same assignment"
        );
        assert!(
            plan_assignment(&pairs, 2, 3, 5).is_err(),
            "k above the number of experts is refused"
        );
    }

    #[test]
    fn a_choice_is_stored_in_the_pairs_own_terms() {
        assert_eq!(
            ShownChoice::A.winner(true),
            Winner::Left,
            "A shown left is left"
        );
        assert_eq!(
            ShownChoice::A.winner(false),
            Winner::Right,
            "A shown first is the right answer when right was shown first"
        );
        assert_eq!(
            ShownChoice::B.winner(false),
            Winner::Left,
            "B is then the left answer"
        );
        assert_eq!(
            ShownChoice::Tie.winner(false),
            Winner::Tie,
            "a tie is a tie either way"
        );
    }
}
