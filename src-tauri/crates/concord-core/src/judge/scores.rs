//! A judge's score when it was asked more than once. Every repetition's scores are kept in the
//! run's `judge_call` rows; the judge's score of a response on a criterion — what agreement,
//! verdicts and exports read — is the study's chosen aggregate of the repetitions that parsed
//! (`concord_stats::repetitions::RepetitionAggregate`: median by default, mean or mode), never one
//! repetition picked out. The choice is the study's (`study_meta` key [`AGGREGATE_KEY`]), so every
//! report of a study reads the same scores, and changing it is an audited write.
//!
//! A binary criterion's repetitions always become their majority (an even split: absent), since
//! a median of two or a mean is not a category of a present/absent dimension ([`for_scale`]).
//!
//! Which repetitions: those of the newest run of the judge rater that judged the response with
//! more than one repetition. A run with one repetition stores its score as the judge's rating
//! and is read as it is (the aggregate of one value is that value), so single-repetition studies
//! read exactly what they always did, without this module reading their calls.

use crate::store::{Store, StoreError, StoreResult};
pub use concord_stats::repetitions::RepetitionAggregate;
use std::collections::HashMap;

/// The `study_meta` key holding the study's aggregate (`median`, `mean` or `mode`).
pub const AGGREGATE_KEY: &str = "judge_repetition_aggregate";

/// The study's aggregate of a judge's repetitions (median when never chosen).
pub fn study_aggregate(store: &Store) -> StoreResult<RepetitionAggregate> {
    Ok(store
        .meta(AGGREGATE_KEY)?
        .as_deref()
        .and_then(RepetitionAggregate::parse)
        .unwrap_or_default())
}

/// Choose the study's aggregate of a judge's repetitions (an audited write).
pub fn set_study_aggregate(store: &mut Store, aggregate: RepetitionAggregate) -> StoreResult<()> {
    let before = study_aggregate(store)?;
    store.write(|tx| -> StoreResult<()> {
        tx.set_meta(AGGREGATE_KEY, aggregate.as_str())?;
        tx.audit(
            "lead",
            "judge_aggregate_set",
            &serde_json::json!({"from": before.as_str(), "to": aggregate.as_str()}),
        )
    })
}

/// The aggregate a criterion's repetitions get: `aggregate` on a 1–5 scale; on a binary one the
/// majority (the mode, an even split going to 0, absent), since a half or a share is not a
/// category of a present/absent dimension.
pub fn for_scale(aggregate: RepetitionAggregate, binary: bool) -> RepetitionAggregate {
    if binary {
        RepetitionAggregate::Mode
    } else {
        aggregate
    }
}

/// The row ids of the rubric's binary criteria.
fn binary_criteria(store: &Store, rubric_id: i64) -> StoreResult<Vec<i64>> {
    let Some(stored) = store.rubrics()?.into_iter().find(|r| r.id == rubric_id) else {
        return Ok(Vec::new());
    };
    let ids = store.read().criterion_ids(rubric_id)?;
    Ok(stored
        .rubric
        .criteria
        .iter()
        .filter(|c| c.scale == crate::rubric::Scale::Binary)
        .filter_map(|c| ids.get(&c.id).copied())
        .collect())
}

/// One judge score that is the aggregate of several repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregatedScore {
    pub rater_id: i64,
    pub response_id: i64,
    pub criterion_id: i64,
    pub value: f64,
}

/// (rater id, response id, criterion id) → every (repetition, value) of the newest run of that
/// rater that judged the response.
pub type RepetitionValues = HashMap<(i64, i64, i64), Vec<(i64, f64)>>;

/// The repetitions of the runs on `rubric_id` that asked at least `min_repetitions` times (only
/// `response_id`'s when given), the newest run per rater × response (see the module docs).
pub fn repetition_values(
    store: &Store,
    rubric_id: i64,
    min_repetitions: i64,
    response_id: Option<i64>,
) -> StoreResult<RepetitionValues> {
    let criteria = store.read().criterion_ids(rubric_id)?;
    // (rater, response) → (run, criterion → repetitions); runs come in id order, so a newer run
    // replaces an older one.
    type Calls = (i64, HashMap<i64, Vec<(i64, f64)>>);
    let mut newest: HashMap<(i64, i64), Calls> = HashMap::new();
    let mut bad = None;
    store.for_each_done_call(rubric_id, min_repetitions, response_id, |c| {
        let scores: serde_json::Map<String, serde_json::Value> =
            match serde_json::from_str(&c.scores_json) {
                Ok(m) => m,
                Err(e) => {
                    bad.get_or_insert(format!("judge call scores: {e}"));
                    return;
                }
            };
        let slot = newest
            .entry((c.rater_id, c.response_id))
            .or_insert_with(|| (c.run_id, HashMap::new()));
        if slot.0 != c.run_id {
            *slot = (c.run_id, HashMap::new());
        }
        for (key, v) in scores {
            if let (Some(&id), Some(v)) = (criteria.get(&key), v.as_f64()) {
                slot.1.entry(id).or_default().push((c.repetition, v));
            }
        }
    })?;
    if let Some(e) = bad {
        return Err(StoreError::Invalid(e));
    }
    Ok(newest
        .into_iter()
        .flat_map(|((rater, response), (_, by_criterion))| {
            by_criterion
                .into_iter()
                .map(move |(criterion, v)| ((rater, response, criterion), v))
        })
        .collect())
}

/// The scores of multi-repetition runs on `rubric_id` (only `response_id`'s when given), each the
/// `aggregate` of its repetitions (see the module docs).
pub fn aggregated_scores(
    store: &Store,
    rubric_id: i64,
    response_id: Option<i64>,
    aggregate: RepetitionAggregate,
) -> StoreResult<Vec<AggregatedScore>> {
    let binary = binary_criteria(store, rubric_id)?;
    let mut out: Vec<AggregatedScore> = repetition_values(store, rubric_id, 2, response_id)?
        .into_iter()
        .filter_map(|((rater_id, response_id, criterion_id), v)| {
            let values: Vec<f64> = v.iter().map(|(_, x)| *x).collect();
            Some(AggregatedScore {
                rater_id,
                response_id,
                criterion_id,
                value: for_scale(aggregate, binary.contains(&criterion_id)).of(&values)?,
            })
        })
        .collect();
    out.sort_by_key(|s| (s.rater_id, s.response_id, s.criterion_id));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_criterion_takes_the_majority_of_its_repetitions() {
        for a in RepetitionAggregate::ALL {
            assert_eq!(
                for_scale(a, true).of(&[0.0, 1.0]),
                Some(0.0),
                "{a:?}: an even split of present/absent is absent, never a half"
            );
            assert_eq!(
                for_scale(a, true).of(&[1.0, 0.0, 1.0]),
                Some(1.0),
                "{a:?}: two of three present is present"
            );
        }
        assert_eq!(
            for_scale(RepetitionAggregate::Median, false).of(&[2.0, 5.0]),
            Some(3.5),
            "a 1–5 criterion keeps the chosen aggregate"
        );
    }
}
