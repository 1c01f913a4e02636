//! Rater packages: a `.concord` file for one expert, itself a study written with the same
//! [`Store`] (so the app opens it as is), holding only that expert's assignment — the rubrics,
//! conversations and responses they need, their own first and retest ratings (with history)
//! and flags, their evidence spans on their items (see `spans`), and the pairs of answers given them to compare (with the pairwise rubric's design,
//! the side they see first, their verdicts with history, rationale, progress and flags). Nothing else leaves the study: no other rater's ratings, no judge, and no source names —
//! each source becomes an opaque code, shuffled per package, with the mapping kept in the main
//! study under the package's id.
//!
//! An item of a transcript is rated in the light of what came before it, so the package also
//! carries, per conversation, the turns before its latest item (the whole conversation for a
//! session item) and the earlier rated replies among them, as history only: never assigned, and
//! nobody's values of them travel (`ShownBefore`). The expert's screen then shows each item's
//! history in the package exactly as the study shows it; nothing after the latest item, no
//! candidate a history never shows and no turn's source goes with it. A package of single-turn
//! conversations is written exactly as before transcripts existed.
//!
//! A package is sealed ([`crate::store::seal`]): it is an encrypted study, under a passphrase the
//! lead chooses at export and passes to the expert separately (by phone, not in the e-mail that
//! carries the file), and it carries a seal that every write through Concord renews. The merge
//! refuses a package not issued by this study, one altered outside Concord after issue or after
//! the expert's last save, and an older return replayed after a newer one was merged — each with
//! its own error, before anything is written to the study.
//!
//! Where the lead's key is held (`store::lead_key`), it signs the issued package (the issuing
//! study's id, the package id, its items, its state at issue and its expert) and the study's
//! record of the package's returns: the package passphrase the expert holds cannot make either
//! signature, so a package from another study with its issuer rewritten, or a study whose
//! record of merged returns was set back outside Concord, is refused.
//!
//! [`merge_package`] brings a returned package back. It is idempotent (merging the same package
//! twice changes nothing) and never overwrites silently: for every rating it compares three
//! values — the base recorded when the package was written, the package's and the study's. A
//! rating changed only in the package is merged with its revision history; one changed in both
//! to different values is reported as a conflict and the study keeps its value. Before that,
//! every value in the package is validated as an import validates it, and every signature
//! against the expert's signing passphrase as the study holds it (`returned`): the seal proves
//! only that a Concord holding the package passphrase wrote the file, and the expert holds it.

mod merge;
mod returned;
mod spans;

pub use crate::store::{Occasion, PackageRecord};
pub use merge::{merge_package, MergeConflict, MergeReport, PairMergeConflict};
pub use returned::{MAX_CLOCK_SKEW_MS, MAX_FLAGS_PER_ITEM, MAX_ORIGIN_BYTES, MAX_TEXT_BYTES};
pub use spans::{base_key as span_base_key, SpanMergeConflict, SpanMergeCounts};

use crate::base::text::quoted;
use crate::files::output::{self, Destination, OutputError};
use crate::rubric::Scope;
use crate::store::{
    AssignmentRecord, BaseValue, ConversationRecord, CopiedRating, CriterionKey, FlagRecord,
    HistoryRow, KeyedCriterion, NewAssignment, NewConversation, NewPair, NewRater, NewSource,
    NewTurn, PairContent, PairDesignRecord, PairFlagRecord, PairHistoryRow, PairRecord,
    PairVerdictFull, PairWorkRecord, Passphrase, RaterKind, RaterRecord, ResponseRecord,
    SigningKey, SourceKind, SpanRecord, Store, StoreError, StoredRating, StoredRubric, StudyTx,
    TurnRecord,
};
pub use crate::store::{META_PACKAGE_ID, META_PACKAGE_RATER};
use rand::seq::SliceRandom;
use rand::Rng;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error("no rater named {q0} in this study", q0 = quoted(&.0))]
    UnknownRater(String),
    #[error("{q0} is an LLM judge; packages are for experts", q0 = quoted(&.0))]
    NotAnExpert(String),
    #[error("{q0} has no assigned items; run the assignment first", q0 = quoted(&.0))]
    NothingAssigned(String),
    #[error("{without} of the {items} items assigned to {q0} have no answer text in the study (it holds their ratings, not the answers, as the MentalAlign release does): the expert would get blank items. Import the MentalBench-100k file to fill them (concord import mentalbench FILE), or make the assignment again with a reason to go ahead without them (--without-text REASON), which is recorded", q0 = quoted(rater))]
    AnswersWithoutText {
        rater: String,
        without: usize,
        items: usize,
    },
    #[error("{file}: not a rater package (it has no package id)")]
    NotAPackage { file: String },
    #[error("{file}: package {id} was not written from this study")]
    UnknownPackage { file: String, id: String },
    #[error("{file}: not a sealed package (it is not encrypted or carries no seal: written by an earlier Concord or another program); nothing was merged. Export a new package for this expert")]
    NotSealed { file: String },
    #[error("{file}: this package was not issued by this study ({detail}); nothing was merged")]
    NotIssuedHere { file: String, detail: String },
    #[error("{file}: altered outside Concord after it was issued ({detail}); nothing was merged")]
    AlteredAfterIssue { file: String, detail: String },
    #[error("{file}: altered outside Concord after the expert's return (its content no longer matches the seal of return {seq}, the expert's last save in Concord); nothing was merged")]
    AlteredAfterReturn { file: String, seq: i64 },
    #[error("{file}: a replayed package: this is return {seq} of package {id}, but the newer return {merged} from {rater_q} was already merged; nothing was merged", rater_q = quoted(&.rater))]
    Replayed {
        file: String,
        id: String,
        rater: String,
        seq: i64,
        merged: i64,
    },
    #[error("{file}: this study's record of package {id} was changed outside Concord ({detail}); a record set back would let an older return merge, so nothing was merged")]
    RecordChanged {
        file: String,
        id: String,
        detail: String,
    },
    #[error("{file}: this study's packages are checked with its lead key, which is not on this machine (it is kept where the study was first written); merge on that machine. Nothing was merged")]
    LeadKeyNeeded { file: String },
    #[error("{file}: {reason}: the study's key records were changed outside Concord, so no package is merged into it. Nothing was merged")]
    KeyRecordsChanged { file: String, reason: String },
    #[error("{file}: the package is damaged ({detail}): a page is missing, changed or fails its authentication, so it cannot be merged safely. Ask the expert to send it again; nothing was merged")]
    Damaged { file: String, detail: String },
    #[error("{file}: return {seq} of package {id} differs from the return {seq} already merged (the package was copied and rated in two places); nothing was merged")]
    Forked { file: String, id: String, seq: i64 },
    #[error("{file}: package {id} belongs to {expected_q} but holds ratings of {found_q}", expected_q = quoted(&.expected), found_q = quoted(&.found))]
    WrongRater {
        file: String,
        id: String,
        expected: String,
        found: String,
    },
    #[error("{file}: {detail}")]
    Inconsistent { file: String, detail: String },
    #[error("{file}: table {table}, row {row}, column {column}: {detail}; nothing was merged")]
    InvalidValue {
        file: String,
        table: &'static str,
        row: i64,
        column: &'static str,
        detail: String,
    },
    #[error("{file}: signature {id} by {signer_q}: {detail}; nothing was merged", signer_q = quoted(&.signer))]
    UnverifiedSignature {
        file: String,
        id: i64,
        signer: String,
        detail: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What [`export_package`] wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PackageSummary {
    pub package_id: String,
    pub rater: String,
    pub file: String,
    pub conversations: usize,
    pub responses: usize,
    pub assignments: usize,
    pub ratings: usize,
    pub retest_ratings: usize,
    pub sources: usize,
    /// Pairs of answers to compare given to the expert.
    pub pairs: usize,
    /// The expert's verdicts on them already made.
    pub pair_verdicts: usize,
}

/// Every package written from the study, oldest first.
pub fn packages(store: &Store) -> Result<Vec<PackageRecord>, PackageError> {
    Ok(store.packages()?)
}

/// Find an expert by name.
pub(crate) fn expert(store: &Store, name: &str) -> Result<RaterRecord, PackageError> {
    let found = store
        .rater_named(name.trim())?
        .ok_or_else(|| PackageError::UnknownRater(name.to_string()))?;
    if !found.is_expert() {
        return Err(PackageError::NotAnExpert(found.name));
    }
    Ok(found)
}

/// The occasions of an expert's own ratings that a package carries.
const PACKAGED: [Occasion; 2] = [Occasion::First, Occasion::Retest];

/// Everything of the study that goes into one expert's package.
struct PackageContent {
    rater: RaterRecord,
    assigned: Vec<AssignmentRecord>,
    /// The items shown to the expert: assigned, or in a pair given them.
    responses: Vec<ResponseRecord>,
    /// What the items' histories show besides the items (see [`ShownBefore`]).
    before: ShownBefore,
    conversations: Vec<ConversationRecord>,
    rubrics: Vec<StoredRubric>,
    /// The expert's own ratings on assigned responses, first and retest.
    ratings: Vec<StoredRating>,
    /// Earlier versions by rating id.
    history: HashMap<i64, Vec<HistoryRow>>,
    flags: Vec<FlagRecord>,
    /// The expert's signing key as the study holds it, if they set one.
    signing_key: Option<SigningKey>,
    /// The pairs given to the expert, with their progress, and the pairs themselves.
    pair_work: Vec<PairWorkRecord>,
    pairs: HashMap<i64, PairRecord>,
    /// The designs of the pairwise rubrics those pairs belong to.
    pair_designs: Vec<PairDesignRecord>,
    /// The expert's verdicts on those pairs, their earlier versions by verdict id, and flags.
    pair_verdicts: Vec<PairVerdictFull>,
    pair_history: HashMap<i64, Vec<PairHistoryRow>>,
    pair_flags: Vec<PairFlagRecord>,
    /// The expert's located spans on the responses assigned to them.
    spans: Vec<SpanRecord>,
}

impl PackageContent {
    fn read(store: &Store, rater: RaterRecord) -> Result<PackageContent, PackageError> {
        let assigned = store.assignments_of_rater(rater.id)?;
        let pair_work = store.read().pair_work_of_rater(rater.id)?;
        if assigned.is_empty() && pair_work.is_empty() {
            return Err(PackageError::NothingAssigned(rater.name));
        }
        let mut pairs = HashMap::new();
        for w in &pair_work {
            let pair = store
                .read()
                .pair(w.pair_id)?
                .ok_or_else(|| StoreError::NotFound {
                    what: "pair",
                    key: w.pair_id.to_string(),
                })?;
            pairs.insert(pair.id, pair);
        }
        // The expert's single ratings and flags travel for the answers assigned to them alone;
        // a pair's answers are in the package to be compared, not rated one by one.
        let response_ids: BTreeSet<i64> = assigned.iter().map(|a| a.response_id).collect();
        let shown: BTreeSet<i64> = response_ids
            .iter()
            .copied()
            .chain(
                pairs
                    .values()
                    .flat_map(|p| [p.left_response_id, p.right_response_id]),
            )
            .collect();
        let responses = shown
            .iter()
            .map(|&id| store.response(id))
            .collect::<Result<Vec<_>, _>>()?;
        let before = ShownBefore::read(store, &responses)?;
        let conversation_ids: BTreeSet<i64> = responses.iter().map(|r| r.conversation_id).collect();
        let conversations = conversation_ids
            .iter()
            .map(|&id| store.conversation(id))
            .collect::<Result<Vec<_>, _>>()?;
        let pair_rubrics: BTreeSet<i64> = pairs.values().map(|p| p.rubric_id).collect();
        let rubric_ids: BTreeSet<i64> = conversations
            .iter()
            .map(|c| c.rubric_id)
            .chain(pair_rubrics.iter().copied())
            .collect();
        let pair_designs = pair_rubrics
            .iter()
            .map(|&id| {
                store
                    .read()
                    .pair_design(id)?
                    .ok_or_else(|| StoreError::NotFound {
                        what: "pair design",
                        key: id.to_string(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let pair_verdicts: Vec<PairVerdictFull> = store
            .read()
            .pair_verdicts_of_rater(rater.id)?
            .into_iter()
            .filter(|v| pairs.contains_key(&v.pair_id))
            .collect();
        let pair_history = store.read().pair_history_of_rater(rater.id)?;
        let pair_flags = store
            .read()
            .pair_flags_of_rater(rater.id)?
            .into_iter()
            .filter(|f| pairs.contains_key(&f.pair_id))
            .collect();
        let rubrics = store
            .rubrics()?
            .into_iter()
            .filter(|s| rubric_ids.contains(&s.id))
            .collect();
        let ratings: Vec<StoredRating> = store
            .ratings_of_rater(rater.id)?
            .into_iter()
            .filter(|r| response_ids.contains(&r.response_id) && PACKAGED.contains(&r.occasion))
            .collect();
        let history = store.history_of_rater(rater.id)?;
        let flags = store
            .flags_of_rater(rater.id)?
            .into_iter()
            .filter(|f| response_ids.contains(&f.response_id))
            .collect();
        let signing_key = store.signing_key(rater.id)?;
        let spans = store
            .spans_of_rater(rater.id)?
            .into_iter()
            .filter(|s| s.range.is_some() && response_ids.contains(&s.response_id))
            .collect();
        Ok(PackageContent {
            spans,
            rater,
            assigned,
            responses,
            before,
            conversations,
            rubrics,
            ratings,
            history,
            flags,
            signing_key,
            pair_work,
            pairs,
            pair_designs,
            pair_verdicts,
            pair_history,
            pair_flags,
        })
    }

    /// The items that stand for a whole conversation (a session rubric's, with no turn): they
    /// have no answer text of their own, and none is missing.
    fn session_items(&self) -> BTreeSet<i64> {
        let session_rubrics: BTreeSet<i64> = self
            .rubrics
            .iter()
            .filter(|s| s.rubric.scope == Scope::Session)
            .map(|s| s.id)
            .collect();
        let session_conversations: BTreeSet<i64> = self
            .conversations
            .iter()
            .filter(|c| session_rubrics.contains(&c.rubric_id))
            .map(|c| c.id)
            .collect();
        self.responses
            .iter()
            .filter(|r| r.turn.is_none() && session_conversations.contains(&r.conversation_id))
            .map(|r| r.id)
            .collect()
    }

    fn count(&self, occasion: Occasion) -> usize {
        self.ratings
            .iter()
            .filter(|r| r.occasion == occasion)
            .count()
    }
}

/// What the histories of a package's items show besides the items themselves, copied so the
/// expert sees each item's history in the package exactly as the study shows it
/// (`Store::history`): per conversation, everything before the latest item's turn — the whole
/// conversation for an item without a turn (a session item) — of which
/// - the earlier rated replies (`response` rows with a smaller turn), issued to this expert or
///   not: carried as history only, never assigned, and no one's ratings or flags of them travel;
/// - the turns that are not items, each without its source (the expert is never shown who wrote
///   a turn, and a code would only tell which turns one source wrote), and without the candidate
///   replies of a session rubric's conversation, which no history shows.
///
/// Nothing after the latest item travels (what the user said next is not part of any item's
/// history), and a single-turn conversation has nothing here: its history is its context.
struct ShownBefore {
    replies: Vec<ResponseRecord>,
    /// The turns, with the id of their conversation.
    turns: Vec<(i64, TurnRecord)>,
}

impl ShownBefore {
    fn read(store: &Store, items: &[ResponseRecord]) -> Result<ShownBefore, PackageError> {
        // Per conversation, the turn before which its items' histories lie (`None`: all of it).
        let mut bounds: BTreeMap<i64, Option<i64>> = BTreeMap::new();
        for r in items {
            let bound = bounds.entry(r.conversation_id).or_insert(r.turn);
            *bound = match (*bound, r.turn) {
                (Some(a), Some(b)) => Some(a.max(b)),
                _ => None,
            };
        }
        let issued: BTreeSet<i64> = items.iter().map(|r| r.id).collect();
        let mut replies = Vec::new();
        let mut turns = Vec::new();
        for (&conversation, &before) in &bounds {
            replies.extend(
                store
                    .replies_before(conversation, before)?
                    .into_iter()
                    .filter(|r| !issued.contains(&r.id)),
            );
            turns.extend(
                store
                    .turns_before(conversation, before)?
                    .into_iter()
                    .map(|t| (conversation, t)),
            );
        }
        Ok(ShownBefore { replies, turns })
    }
}

/// The package's identity: its id and the opaque code of every source (source id → code).
struct PackageIdentity {
    package_id: String,
    codes: BTreeMap<i64, String>,
    /// The issuing study's id named in the seal.
    study_id: String,
}

impl PackageIdentity {
    /// Shuffle the sources into codes and draw an id no package of the study has.
    fn draw(
        store: &Store,
        content: &PackageContent,
        title: &str,
        seed: u64,
    ) -> Result<Self, PackageError> {
        // The sources of the earlier replies a history shows are coded like the items'.
        let source_ids: BTreeSet<i64> = content
            .responses
            .iter()
            .chain(&content.before.replies)
            .map(|r| r.source_id)
            .collect();
        let mut rng = crate::workflow::assignment::seeded(seed, 0x7061_636b);
        let mut order: Vec<i64> = source_ids.into_iter().collect();
        order.shuffle(&mut rng);
        let codes = order
            .iter()
            .enumerate()
            .map(|(i, &s)| (s, format!("S{:02}", i + 1)))
            .collect();
        let study_tag = study_tag(content, title);
        let package_id = loop {
            let candidate = format!("{:016x}", rng.gen::<u64>() ^ study_tag);
            if !store.package_exists(&candidate)? {
                break candidate;
            }
        };
        // The study's own id names the issuer in the seal; a new one mixes the seed with the
        // study's path and the time, so two studies never share one.
        let study_id = match store.study_id()? {
            Some(id) => id,
            None => {
                let mut h = Sha256::new();
                h.update(rng.gen::<u64>().to_le_bytes());
                h.update(store.now_ms().to_le_bytes());
                h.update(store.path_string().as_bytes());
                h.finalize()[..16]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect()
            }
        };
        Ok(PackageIdentity {
            package_id,
            codes,
            study_id,
        })
    }
}

/// A digest of the study's content that goes into the package id: with the seed alone, two
/// studies exporting with the same seed would hand out the same id, and a package of one would be
/// merged into the other.
fn study_tag(content: &PackageContent, title: &str) -> u64 {
    let mut digest = Sha256::new();
    for part in [title, content.rater.name.as_str()] {
        digest.update(part.as_bytes());
        digest.update([0]);
    }
    for c in &content.conversations {
        digest.update(c.external_id.as_bytes());
        digest.update([0]);
        digest.update(c.context.as_bytes());
        digest.update([0]);
    }
    for r in &content.responses {
        digest.update(r.text.as_deref().unwrap_or_default().as_bytes());
        digest.update([0]);
    }
    let d = digest.finalize();
    u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

impl From<OutputError> for PackageError {
    fn from(e: OutputError) -> Self {
        PackageError::Store(StoreError::Output(e))
    }
}

/// Study ids → package ids of what was copied into the package.
struct CopiedIds {
    rubrics: HashMap<i64, i64>,
    conversations: HashMap<i64, i64>,
    responses: HashMap<i64, i64>,
    criteria: HashMap<i64, i64>,
    rater: i64,
}

/// Write the package of expert `rater` to `out` (which must not exist), encrypted with
/// `passphrase` and sealed. `seed` draws the package id and the shuffled source codes (passed in,
/// like all randomness).
pub fn export_package(
    store: &mut Store,
    rater: &str,
    out: &Path,
    seed: u64,
    passphrase: &Passphrase,
) -> Result<PackageSummary, PackageError> {
    export_package_to(store, rater, out, false, seed, passphrase)
}

/// [`export_package`], replacing a regular file at `out` when `overwrite` is set. The package is
/// written through `files::output`: never over the study or its log files, a folder, a FIFO or a
/// device; built in a temporary file created `0600` beside `out` and renamed into place once
/// sealed, so a failure leaves nothing behind.
pub fn export_package_to(
    store: &mut Store,
    rater: &str,
    out: &Path,
    overwrite: bool,
    seed: u64,
    passphrase: &Passphrase,
) -> Result<PackageSummary, PackageError> {
    passphrase.check_new()?;
    let content = PackageContent::read(store, expert(store, rater)?)?;
    let session_items = content.session_items();
    let without = content
        .responses
        .iter()
        .filter(|r| !session_items.contains(&r.id) && r.text.as_deref().is_none_or(str::is_empty))
        .count();
    if without > 0 && crate::workflow::assignment::without_text_reason(store)?.is_none() {
        return Err(PackageError::AnswersWithoutText {
            rater: content.rater.name.clone(),
            without,
            items: content.responses.len(),
        });
    }
    // The lead's key signs the issued package: made now if the study is to have one.
    store.ensure_lead_key()?;
    let title = store.title()?;
    let identity = PackageIdentity::draw(store, &content, &title, seed)?;
    let main_criteria = store.read().criterion_keys()?;

    let dest = Destination::new(out)
        .overwrite(overwrite)
        .guarding(store.path());
    let sealed = output::write_with(&dest, |staged| -> Result<_, PackageError> {
        let mut pkg = Store::create_in_empty_file(staged.path(), store.clock(), Some(passphrase))?;
        let written = pkg.write(|tx| -> Result<(), PackageError> {
            tx.set_meta("title", &format!("{title} — {}", content.rater.name))?;
            tx.set_meta(META_PACKAGE_ID, &identity.package_id)?;
            tx.set_meta(META_PACKAGE_RATER, &content.rater.name)?;
            let ids = copy_dataset(tx, &content, &identity, &main_criteria)?;
            copy_work(tx, &content, &ids)
        });
        let sealed = written.and_then(|()| {
            Ok(pkg.seal_package(&identity.study_id, &identity.package_id, store.lead_key())?)
        });
        drop(pkg);
        if sealed.is_err() {
            remove_package_file(staged.path());
        }
        sealed
    })?;

    let file_name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Err(e) = record_export(store, &content, &identity, &file_name, &sealed) {
        remove_package_file(out);
        return Err(e);
    }
    Ok(PackageSummary {
        package_id: identity.package_id,
        rater: content.rater.name.clone(),
        file: file_name,
        conversations: content.conversations.len(),
        responses: content.responses.len(),
        assignments: content.assigned.len(),
        ratings: content.count(Occasion::First),
        retest_ratings: content.count(Occasion::Retest),
        sources: identity.codes.len(),
        pairs: content.pair_work.len(),
        pair_verdicts: content
            .pair_verdicts
            .iter()
            .filter(|v| v.content.winner.is_some())
            .count(),
    })
}

/// Copy the rubrics, coded sources, conversations and responses into the package, and the
/// expert as its only rater.
fn copy_dataset(
    tx: &mut StudyTx<'_>,
    content: &PackageContent,
    identity: &PackageIdentity,
    main_criteria: &[KeyedCriterion],
) -> Result<CopiedIds, PackageError> {
    let mut rubric_map = HashMap::new();
    for stored in &content.rubrics {
        rubric_map.insert(stored.id, tx.add_rubric(&stored.rubric)?);
    }
    let mut source_map = HashMap::new();
    for (&sid, code) in &identity.codes {
        let id = tx.upsert_source(&NewSource {
            key: code,
            name: code,
            family: None,
            // Blind: a human answer must not be told apart from a model's.
            kind: SourceKind::Llm,
        })?;
        source_map.insert(sid, id);
    }
    let mut conv_map = HashMap::new();
    for c in &content.conversations {
        let new = tx.add_conversation(&NewConversation {
            external_id: &c.external_id,
            rubric_id: rubric_map[&c.rubric_id],
            context: &c.context,
            language: c.language.as_deref(),
            category: c.category.as_deref(),
        })?;
        conv_map.insert(c.id, new);
    }
    let mut responses = HashMap::new();
    for r in &content.responses {
        let new = tx.add_item(
            conv_map[&r.conversation_id],
            source_map[&r.source_id],
            r.turn,
            r.text.as_deref(),
        )?;
        responses.insert(r.id, new);
    }
    // After the items, so a package of single-turn conversations is written as before.
    for r in &content.before.replies {
        tx.add_item(
            conv_map[&r.conversation_id],
            source_map[&r.source_id],
            r.turn,
            r.text.as_deref(),
        )?;
    }
    for (conversation, t) in &content.before.turns {
        tx.add_turn(&NewTurn {
            conversation_id: conv_map[conversation],
            position: t.position,
            role: t.role,
            text: &t.text,
            source_id: None,
            candidate: false,
        })?;
    }
    let rater = tx.upsert_rater(&NewRater {
        kind: RaterKind::Expert,
        name: &content.rater.name,
        model_id: None,
        family: None,
        queue_seed: content.rater.queue_seed,
    })?;
    // Criterion ids map by (rubric, key).
    let by_key: HashMap<CriterionKey, i64> = tx
        .read()
        .criterion_keys()?
        .into_iter()
        .map(|c| (c.key, c.id))
        .collect();
    let criteria = main_criteria
        .iter()
        .filter_map(|c| by_key.get(&c.key).map(|new| (c.id, *new)))
        .collect();
    Ok(CopiedIds {
        rubrics: rubric_map,
        conversations: conv_map,
        responses,
        criteria,
        rater,
    })
}

/// Copy the expert's assignment, ratings (with history) and flags into the package.
fn copy_work(
    tx: &mut StudyTx<'_>,
    content: &PackageContent,
    ids: &CopiedIds,
) -> Result<(), PackageError> {
    let assignments: Vec<NewAssignment> = content
        .assigned
        .iter()
        .map(|a| NewAssignment {
            rater_id: ids.rater,
            response_id: ids.responses[&a.response_id],
            position: a.position,
            purpose: a.purpose,
            first_shown_at: a.first_shown_at,
            completed_at: a.completed_at,
            seconds_spent: a.seconds_spent,
        })
        .collect();
    tx.add_assignments(&assignments)?;
    for r in &content.ratings {
        let criterion = ids.criteria.get(&r.criterion_id).copied().ok_or_else(|| {
            PackageError::Store(StoreError::NotFound {
                what: "criterion",
                key: r.criterion_id.to_string(),
            })
        })?;
        let new_id = tx.copy_rating(&CopiedRating {
            rater_id: ids.rater,
            response_id: ids.responses[&r.response_id],
            criterion_id: criterion,
            occasion: r.occasion,
            content: &r.content(),
            origin: &r.origin,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })?;
        for h in content.history.get(&r.id).into_iter().flatten() {
            tx.add_history_row(new_id, h)?;
        }
    }
    // The expert signs in the package with the passphrase this study knows; the package holds
    // only its check value, so a signature's proof can be made there but verified only here.
    if let Some(key) = content
        .signing_key
        .as_ref()
        .and_then(crate::workflow::signoff::issued_key)
    {
        tx.set_signing_key(ids.rater, &key)?;
    }
    spans::copy_into_package(tx, &content.spans, &ids.responses, ids.rater)?;
    for f in &content.flags {
        tx.copy_flag(
            ids.rater,
            &FlagRecord {
                response_id: ids.responses[&f.response_id],
                ..f.clone()
            },
        )?;
    }
    copy_pair_work(tx, content, ids)
}

/// A pair as copied into a package: its id there, and whether its sides are named the other
/// way round (a pair's left answer is the one with the lower id, in each study's own ids).
#[derive(Debug, Clone, Copy)]
struct CopiedPair {
    id: i64,
    swapped: bool,
}

/// Copy the expert's pairs (with their rubrics' designs), their progress, verdicts with
/// history, and flags into the package.
fn copy_pair_work(
    tx: &mut StudyTx<'_>,
    content: &PackageContent,
    ids: &CopiedIds,
) -> Result<(), PackageError> {
    let mut copied: HashMap<i64, CopiedPair> = HashMap::new();
    for design in &content.pair_designs {
        let rubric = ids.rubrics[&design.rubric_id];
        let mut mine: Vec<&PairRecord> = content
            .pairs
            .values()
            .filter(|p| p.rubric_id == design.rubric_id)
            .collect();
        mine.sort_by_key(|p| p.position);
        let new_pairs: Vec<NewPair> = mine
            .iter()
            .map(|p| NewPair {
                conversation_id: ids.conversations[&p.conversation_id],
                left_response_id: ids.responses[&p.left_response_id],
                right_response_id: ids.responses[&p.right_response_id],
            })
            .collect();
        tx.add_pair_design(
            &PairDesignRecord {
                rubric_id: rubric,
                ..design.clone()
            },
            &new_pairs,
        )?;
        for (p, n) in mine.iter().zip(&new_pairs) {
            let id = tx
                .read()
                .pair_of_answers(rubric, n.left_response_id, n.right_response_id)?
                .ok_or_else(|| StoreError::NotFound {
                    what: "copied pair",
                    key: p.id.to_string(),
                })?;
            copied.insert(
                p.id,
                CopiedPair {
                    id,
                    swapped: n.left_response_id > n.right_response_id,
                },
            );
        }
    }
    for w in &content.pair_work {
        let c = copied[&w.pair_id];
        tx.copy_pair_work(&PairWorkRecord {
            rater_id: ids.rater,
            pair_id: c.id,
            left_first: w.left_first != c.swapped,
            ..w.clone()
        })?;
    }
    for v in &content.pair_verdicts {
        let c = copied[&v.pair_id];
        let criterion =
            ids.criteria
                .get(&v.criterion_id)
                .copied()
                .ok_or_else(|| StoreError::NotFound {
                    what: "criterion",
                    key: v.criterion_id.to_string(),
                })?;
        let new_id = tx.copy_pair_verdict(&PairVerdictFull {
            rater_id: ids.rater,
            pair_id: c.id,
            criterion_id: criterion,
            left_first: v.left_first != c.swapped,
            content: swap_content(&v.content, c.swapped),
            ..v.clone()
        })?;
        for h in content.pair_history.get(&v.id).into_iter().flatten() {
            tx.merge_pair_history_row(
                new_id,
                &PairHistoryRow {
                    content: swap_content(&h.content, c.swapped),
                    ..h.clone()
                },
            )?;
        }
    }
    for f in &content.pair_flags {
        tx.copy_pair_flag(
            ids.rater,
            &PairFlagRecord {
                pair_id: copied[&f.pair_id].id,
                ..f.clone()
            },
        )?;
    }
    Ok(())
}

/// A verdict with the pair's sides named the other way round when `swapped`.
pub(super) fn swap_content(c: &PairContent, swapped: bool) -> PairContent {
    PairContent {
        winner: c.winner.map(|w| if swapped { w.swapped() } else { w }),
        rationale: c.rationale.clone(),
    }
}

/// Record the package, its codes and the base values in the study.
fn record_export(
    store: &mut Store,
    content: &PackageContent,
    identity: &PackageIdentity,
    file_name: &str,
    sealed: &crate::store::seal::IssuedSeal,
) -> Result<(), PackageError> {
    let contents: Vec<_> = content.ratings.iter().map(|r| r.content()).collect();
    let base: Vec<BaseValue<'_>> = content
        .ratings
        .iter()
        .zip(&contents)
        .map(|(r, c)| BaseValue {
            occasion: r.occasion,
            response_id: r.response_id,
            criterion_id: r.criterion_id,
            content: c,
        })
        .collect();
    store.write(|tx| -> Result<(), PackageError> {
        tx.record_package(
            &identity.package_id,
            content.rater.id,
            file_name,
            &identity.codes,
            &base,
        )?;
        let pair_base: Vec<_> = content
            .pair_verdicts
            .iter()
            .map(|v| ((v.pair_id, v.criterion_id), v.content.clone()))
            .collect();
        tx.record_pair_base(&identity.package_id, &pair_base)?;
        // The expert's spans at issue, the base their merge compares with (none: nothing kept,
        // so a study without spans issues its packages as before).
        if !content.spans.is_empty() {
            let items: BTreeSet<i64> = content.spans.iter().map(|s| s.response_id).collect();
            spans::record_base(
                tx,
                &identity.package_id,
                &spans::spans_on(&content.spans, &items),
            )?;
        }
        tx.ensure_study_id(&identity.study_id)?;
        tx.record_package_seal(&identity.package_id, sealed)?;
        tx.audit(
            "lead",
            crate::store::seal::ISSUE_ACTION,
            &serde_json::json!({
                "package": identity.package_id,
                "rater": content.rater.name,
                "file": file_name,
                "issued_tables": sealed.issue_tables,
            }),
        )?;
        Ok(())
    })
}

fn remove_package_file(out: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = out.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(std::path::PathBuf::from(p));
    }
}
