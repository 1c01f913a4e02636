//! The ratings of one rubric held in memory for agreement: per criterion and rater one dense
//! column over the responses (`NaN` = no value), plus the sources, raters and groups they refer
//! to. It is loaded from the study once; after that a single new or changed rating is applied with
//! [`AgreementData::apply`] in O(1), so the desktop panel can recompute its report without going
//! back to SQLite.
//!
//! Two loads: [`AgreementData::load`] holds every response of the rubric (the judge verdicts
//! need the judges' scores of responses no expert rated); [`AgreementData::load_compared`] only
//! the responses with an expert value — every agreement cell compares against experts, so those
//! are all a report reads. It reads the experts' values through the (criterion, rater) index and
//! then the values of just those responses through the response index: on a study of 2.8 million
//! judge ratings with experts on a tenth of the responses, about 15% of the rows, in a tenth of
//! the columns' length. A response that gets its first expert value later is read in by
//! [`AgreementData::take_response`], in id order, so the data stay what a fresh load gives.

use crate::judge::scores::{aggregated_scores, study_aggregate, RepetitionAggregate};
use crate::rubric::{localized, Rubric, Scale, Scope};
use crate::store::{RaterKind, Store, StoreError, StoreResult};
use std::collections::HashMap;

/// A criterion as agreement sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct CriterionInfo {
    pub id: i64,
    pub key: String,
    /// English display name ("Guidance").
    pub label: String,
    pub group: Option<String>,
    pub scale: Scale,
}

/// A group of criteria (CSS, ARS): its members by position in [`AgreementData::criteria`].
#[derive(Debug, Clone, PartialEq)]
pub struct GroupInfo {
    pub id: String,
    pub label: String,
    pub members: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SourceInfo {
    pub id: i64,
    pub key: String,
    pub name: String,
    pub family: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RaterInfo {
    pub id: i64,
    pub name: String,
    pub kind: RaterKind,
    pub model_id: Option<String>,
    pub family: Option<String>,
}

/// Where a rated item stands in its conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ItemAt {
    /// The answer of a single-turn conversation (an earlier release's design): turn 2, after the
    /// user's message.
    Answer,
    /// A reply of a transcript at this turn number (candidates share theirs).
    Reply(i64),
    /// A session item: the whole conversation, no turn of its own.
    Session,
}

impl ItemAt {
    /// Where an item with the stored turn `turn` stands under a rubric of `scope`.
    pub fn of(turn: Option<i64>, scope: Scope) -> ItemAt {
        match (scope, turn) {
            (Scope::Session, _) => ItemAt::Session,
            (Scope::Reply, Some(t)) => ItemAt::Reply(t),
            (Scope::Reply, None) => ItemAt::Answer,
        }
    }

    /// The item's turn number (2 for a single-turn answer; none for a session item).
    pub fn turn(self) -> Option<i64> {
        match self {
            ItemAt::Answer => Some(2),
            ItemAt::Reply(t) => Some(t),
            ItemAt::Session => None,
        }
    }
}

/// One response: its source (position in [`AgreementData::sources`]), its conversation (the
/// study's row id: the unit a conversation-cluster bootstrap resamples) and where it stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResponseInfo {
    pub id: i64,
    pub source: usize,
    pub conversation: i64,
    pub at: ItemAt,
}

impl ResponseInfo {
    /// A single-turn answer of source `source`, its own conversation (data built from parts).
    pub fn answer(id: i64, source: usize) -> ResponseInfo {
        ResponseInfo {
            id,
            source,
            conversation: id,
            at: ItemAt::Answer,
        }
    }
}

/// What [`AgreementData::apply`] changed, so only the affected report cells are recomputed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Touched {
    pub rater: usize,
    pub criterion: usize,
}

/// Why a rating could not be applied in memory (the caller reloads from the study instead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error("rater {0} is not in the loaded data")]
    UnknownRater(i64),
    #[error("response {0} is not in the loaded data")]
    UnknownResponse(i64),
    #[error("criterion {0} is not in the loaded rubric")]
    UnknownCriterion(i64),
}

/// A rubric's ratings in memory.
#[derive(Debug, Clone)]
pub struct AgreementData {
    pub rubric_key: String,
    /// Whether the rubric rates replies (the default) or whole sessions.
    pub scope: Scope,
    pub criteria: Vec<CriterionInfo>,
    pub groups: Vec<GroupInfo>,
    pub sources: Vec<SourceInfo>,
    pub raters: Vec<RaterInfo>,
    pub responses: Vec<ResponseInfo>,
    // foldhash: a full load looks up every one of millions of ratings.
    rater_index: foldhash::HashMap<i64, usize>,
    response_index: foldhash::HashMap<i64, usize>,
    criterion_index: foldhash::HashMap<i64, usize>,
    /// `values[criterion][rater][response]`, NaN when absent.
    values: Vec<Vec<Vec<f64>>>,
    /// Only the responses with an expert value are held ([`AgreementData::load_compared`]).
    compared_only: bool,
    /// Every item of the rubric, by id, with its source position, conversation and turn (kept by
    /// `load_compared`, so a response taken in later needs no other read).
    rubric_items: foldhash::HashMap<i64, ResponseInfo>,
    /// The rubric's row id (0 for data built from parts) and the study's aggregate of a judge's
    /// repetitions, which replace a multi-repetition run's ratings as they are read.
    rubric_id: i64,
    aggregate: RepetitionAggregate,
}

impl AgreementData {
    /// Build from parts (tests and synthetic benchmarks); every value starts absent.
    pub fn new(
        rubric: &Rubric,
        sources: Vec<SourceInfo>,
        raters: Vec<RaterInfo>,
        responses: Vec<ResponseInfo>,
    ) -> AgreementData {
        let criteria: Vec<CriterionInfo> = rubric
            .criteria
            .iter()
            .enumerate()
            .map(|(i, c)| CriterionInfo {
                id: i as i64 + 1,
                key: c.id.clone(),
                label: localized(&c.label, "en").to_string(),
                group: c.group.clone(),
                scale: c.scale.clone(),
            })
            .collect();
        AgreementData::assemble(rubric, criteria, sources, raters, responses)
    }

    fn assemble(
        rubric: &Rubric,
        criteria: Vec<CriterionInfo>,
        sources: Vec<SourceInfo>,
        raters: Vec<RaterInfo>,
        responses: Vec<ResponseInfo>,
    ) -> AgreementData {
        let groups = rubric
            .groups
            .iter()
            .map(|g| GroupInfo {
                id: g.id.clone(),
                label: g.id.clone(),
                members: criteria
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.group.as_deref() == Some(g.id.as_str()))
                    .map(|(i, _)| i)
                    .collect(),
            })
            .filter(|g| !g.members.is_empty())
            .collect();
        AgreementData {
            rubric_key: rubric.id.clone(),
            scope: rubric.scope,
            values: vec![vec![vec![f64::NAN; responses.len()]; raters.len()]; criteria.len()],
            compared_only: false,
            rubric_items: Default::default(),
            rubric_id: 0,
            aggregate: RepetitionAggregate::default(),
            rater_index: raters.iter().enumerate().map(|(i, r)| (r.id, i)).collect(),
            response_index: responses
                .iter()
                .enumerate()
                .map(|(i, r)| (r.id, i))
                .collect(),
            criterion_index: criteria
                .iter()
                .enumerate()
                .map(|(i, c)| (c.id, i))
                .collect(),
            criteria,
            groups,
            sources,
            raters,
            responses,
        }
    }

    /// The rubric, its criteria, the study's sources and raters, and every response of the rubric
    /// with its source position.
    #[allow(clippy::type_complexity)] // the parts a load assembles, used once each
    fn parts(
        store: &Store,
        rubric_key: &str,
    ) -> StoreResult<(
        i64,
        Rubric,
        Vec<CriterionInfo>,
        Vec<SourceInfo>,
        Vec<RaterInfo>,
        Vec<ResponseInfo>,
    )> {
        let crate::store::StoredRubric {
            id: rubric_id,
            rubric,
        } = store
            .rubrics()?
            .into_iter()
            .find(|s| s.rubric.id == rubric_key)
            .ok_or_else(|| StoreError::NotFound {
                what: "rubric",
                key: rubric_key.to_string(),
            })?;
        let mut criteria = Vec::new();
        for crate::store::StoredCriterion { id, key } in store.criteria_in_order(rubric_id)? {
            let c = rubric
                .criterion(&key)
                .ok_or_else(|| StoreError::Invalid(format!("criterion {key} not in rubric")))?;
            criteria.push(CriterionInfo {
                id,
                key,
                label: localized(&c.label, "en").to_string(),
                group: c.group.clone(),
                scale: c.scale.clone(),
            });
        }
        let sources: Vec<SourceInfo> = store
            .sources()?
            .into_iter()
            .map(|s| SourceInfo {
                id: s.id,
                key: s.key,
                name: s.name,
                family: s.family,
            })
            .collect();
        let source_pos: HashMap<i64, usize> =
            sources.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
        // Raters by kind, then name (as stored: `expert` before `judge`).
        let mut records = store.rater_records()?;
        records.sort_by(|a, b| a.kind.cmp(&b.kind));
        let raters: Vec<RaterInfo> = records
            .into_iter()
            .map(|r| RaterInfo {
                id: r.id,
                kind: RaterKind::parse(&r.kind).unwrap_or(RaterKind::Expert),
                name: r.name,
                model_id: r.model_id,
                family: r.family,
            })
            .collect();
        let mut responses = Vec::new();
        for item in store.rubric_items(rubric_id)? {
            let source = *source_pos
                .get(&item.source_id)
                .ok_or_else(|| StoreError::Invalid(format!("unknown source {}", item.source_id)))?;
            responses.push(ResponseInfo {
                id: item.response_id,
                source,
                conversation: item.conversation_id,
                at: ItemAt::of(item.turn, rubric.scope),
            });
        }
        Ok((rubric_id, rubric, criteria, sources, raters, responses))
    }

    /// Load every rating of rubric `rubric_key` from the study.
    pub fn load(store: &Store, rubric_key: &str) -> StoreResult<AgreementData> {
        let (rubric_id, rubric, criteria, sources, raters, responses) =
            Self::parts(store, rubric_key)?;
        let mut data = AgreementData::assemble(&rubric, criteria, sources, raters, responses);
        data.rubric_id = rubric_id;
        data.aggregate = study_aggregate(store)?;
        store.for_each_rubric_value(rubric_id, |rater, response, criterion, value| {
            // Ratings of responses outside this rubric's conversations cannot occur (the
            // criterion belongs to the rubric), so a failed lookup is skipped, never a panic.
            let _ = data.apply(rater, response, criterion, Some(value as f64));
        })?;
        data.read_aggregates(store, None)?;
        Ok(data)
    }

    /// Load the ratings of rubric `rubric_key` on the responses some expert rated: the experts'
    /// values by criterion and expert, then every value of just those responses (see the module
    /// documentation).
    pub fn load_compared(store: &Store, rubric_key: &str) -> StoreResult<AgreementData> {
        let (rubric_id, rubric, criteria, sources, raters, all) = Self::parts(store, rubric_key)?;
        let criterion_ids: Vec<i64> = criteria.iter().map(|c| c.id).collect();
        let expert_ids: Vec<i64> = raters
            .iter()
            .filter(|r| r.kind == RaterKind::Expert)
            .map(|r| r.id)
            .collect();
        let rubric_items: foldhash::HashMap<i64, ResponseInfo> =
            all.iter().map(|r| (r.id, *r)).collect();
        let mut rated = Vec::new();
        store.for_each_value_of_raters(&criterion_ids, &expert_ids, |_, response, _, _| {
            if rubric_items.contains_key(&response) {
                rated.push(response);
            }
        })?;
        rated.sort_unstable();
        rated.dedup();
        let responses = rated.iter().map(|id| rubric_items[id]).collect();
        let mut data = AgreementData::assemble(&rubric, criteria, sources, raters, responses);
        data.compared_only = true;
        data.rubric_items = rubric_items;
        data.rubric_id = rubric_id;
        data.aggregate = study_aggregate(store)?;
        for id in rated {
            data.read_values(store, id)?;
        }
        // The judges' aggregates of every held response in one read (one per response read the
        // study's rubrics and repetitions again for each: most of the panel's load time).
        data.read_aggregates(store, None)?;
        Ok(data)
    }

    /// Read every value of one held response from the study, with its judges' aggregates.
    fn read_response(&mut self, store: &Store, response_id: i64) -> StoreResult<()> {
        self.read_values(store, response_id)?;
        self.read_aggregates(store, Some(response_id))
    }

    /// Read every stored value of one held response (a multi-repetition judge's first
    /// repetition until [`Self::read_aggregates`] puts the aggregate in its place).
    fn read_values(&mut self, store: &Store, response_id: i64) -> StoreResult<()> {
        store.for_each_value_of_response(response_id, |rater, criterion, value| {
            // A criterion of another rubric or a rater created since loading is not held.
            let _ = self.apply(rater, response_id, criterion, Some(value as f64));
        })
    }

    /// Put the aggregate of each multi-repetition judge score (of one response, or of all) in
    /// place of the rating written from its first repetition (`judge::scores`).
    fn read_aggregates(&mut self, store: &Store, response_id: Option<i64>) -> StoreResult<()> {
        if self.rubric_id == 0 {
            return Ok(());
        }
        for s in aggregated_scores(store, self.rubric_id, response_id, self.aggregate)? {
            // A response this data does not hold (load_compared) is skipped.
            let _ = self.apply(s.rater_id, s.response_id, s.criterion_id, Some(s.value));
        }
        Ok(())
    }

    /// Make sure `response_id` is held: data from [`AgreementData::load_compared`] take in a
    /// response when it gets its first expert value, with every value the study holds for it,
    /// at its place in id order. Returns whether it was taken in now.
    pub fn take_response(&mut self, store: &Store, response_id: i64) -> StoreResult<bool> {
        if !self.compared_only || self.response_index.contains_key(&response_id) {
            return Ok(false);
        }
        let Some(&item) = self.rubric_items.get(&response_id) else {
            return Ok(false);
        };
        let at = self.responses.partition_point(|r| r.id < response_id);
        self.responses.insert(at, item);
        for per_rater in &mut self.values {
            for column in per_rater {
                column.insert(at, f64::NAN);
            }
        }
        for (i, r) in self.responses.iter().enumerate().skip(at) {
            self.response_index.insert(r.id, i);
        }
        self.read_response(store, response_id)?;
        Ok(true)
    }

    /// The same raters, criteria and sources over only the responses `keep` accepts (in their
    /// order here), with every value they hold: what the study would load if it held only those
    /// responses. The copy never takes in more responses ([`Self::take_response`] leaves it as
    /// it is).
    pub fn restricted_to(&self, keep: impl Fn(&ResponseInfo) -> bool) -> AgreementData {
        let kept: Vec<usize> = (0..self.responses.len())
            .filter(|&i| keep(&self.responses[i]))
            .collect();
        let responses: Vec<ResponseInfo> = kept.iter().map(|&i| self.responses[i]).collect();
        AgreementData {
            rubric_key: self.rubric_key.clone(),
            scope: self.scope,
            criteria: self.criteria.clone(),
            groups: self.groups.clone(),
            sources: self.sources.clone(),
            raters: self.raters.clone(),
            rater_index: self.rater_index.clone(),
            response_index: responses
                .iter()
                .enumerate()
                .map(|(i, r)| (r.id, i))
                .collect(),
            criterion_index: self.criterion_index.clone(),
            values: self
                .values
                .iter()
                .map(|per_rater| {
                    per_rater
                        .iter()
                        .map(|column| kept.iter().map(|&i| column[i]).collect())
                        .collect()
                })
                .collect(),
            responses,
            compared_only: false,
            rubric_items: Default::default(),
            rubric_id: self.rubric_id,
            aggregate: self.aggregate,
        }
    }

    /// Set (or clear, with `None`) one value in memory.
    pub fn apply(
        &mut self,
        rater_id: i64,
        response_id: i64,
        criterion_id: i64,
        value: Option<f64>,
    ) -> Result<Touched, ApplyError> {
        let rater = *self
            .rater_index
            .get(&rater_id)
            .ok_or(ApplyError::UnknownRater(rater_id))?;
        let response = *self
            .response_index
            .get(&response_id)
            .ok_or(ApplyError::UnknownResponse(response_id))?;
        let criterion = *self
            .criterion_index
            .get(&criterion_id)
            .ok_or(ApplyError::UnknownCriterion(criterion_id))?;
        self.values[criterion][rater][response] = value.unwrap_or(f64::NAN);
        Ok(Touched { rater, criterion })
    }

    /// The values of `rater` on `criterion`, one per response (NaN when absent).
    pub fn series(&self, rater: usize, criterion: usize) -> &[f64] {
        &self.values[criterion][rater]
    }

    /// Positions of the expert raters.
    pub fn experts(&self) -> Vec<usize> {
        (0..self.raters.len())
            .filter(|&i| self.raters[i].kind == RaterKind::Expert)
            .collect()
    }

    /// Positions of the judge raters.
    pub fn judges(&self) -> Vec<usize> {
        (0..self.raters.len())
            .filter(|&i| self.raters[i].kind == RaterKind::Judge)
            .collect()
    }

    /// Number of values present for `rater` on any criterion.
    pub fn count(&self, rater: usize) -> usize {
        (0..self.criteria.len())
            .map(|c| self.series(rater, c).iter().filter(|v| !v.is_nan()).count())
            .sum()
    }

    /// Whether the held items are replies of transcripts (conversations of many turns), whose
    /// replies share a history and so are not independent targets.
    pub fn over_transcripts(&self) -> bool {
        self.responses
            .iter()
            .any(|r| matches!(r.at, ItemAt::Reply(_)))
    }

    /// Whether the rubric is one the conversations model added: a session rubric, or a reply
    /// rubric with replies of transcripts.
    pub fn over_conversations(&self) -> bool {
        self.scope == Scope::Session || self.over_transcripts()
    }

    /// The level the rubric's figures are read at first: item level for a session rubric or
    /// when every held item is a reply of a transcript (its items, not its one or few sources,
    /// are the natural targets), else the paper's system level.
    pub fn headline_level(&self) -> super::Level {
        let items = self.scope == Scope::Session
            || (!self.responses.is_empty()
                && self
                    .responses
                    .iter()
                    .all(|r| matches!(r.at, ItemAt::Reply(_))));
        if items {
            super::Level::Item
        } else {
            super::Level::System
        }
    }

    /// The rubric's row id in the study (0 for data built from parts).
    pub fn rubric_id(&self) -> i64 {
        self.rubric_id
    }

    /// Position of a rater by id.
    pub fn rater_position(&self, rater_id: i64) -> Option<usize> {
        self.rater_index.get(&rater_id).copied()
    }
}
