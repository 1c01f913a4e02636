//! The pure assignment plan: given the candidate conversations (with their responses) and the
//! experts, draw the sample, pick the calibration and test–retest items and give every expert an
//! ordered list. No database here, so the guarantees (exactly k experts per regular response,
//! loads within one of each other, nobody twice on one response, the retest gap, the same plan
//! for the same seed) are checked directly by property tests.
//!
//! Randomness is one ChaCha8 generator per concern, seeded with the study's seed and told apart
//! by its stream number, so e.g. changing the number of retest items does not change the sample.

use super::sample::{draw_sample, SampleCandidate};
use super::{AssignmentError, AssignmentOptions, Purpose};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const STREAM_SAMPLE: u64 = 1;
const STREAM_RESPONSES: u64 = 2;
const STREAM_CALIBRATION: u64 = 3;
const STREAM_EXPERTS: u64 = 4;
const STREAM_ORDER: u64 = 1_000;
const STREAM_RETEST: u64 = 2_000_000;

/// A generator for one concern of the plan.
pub(crate) fn stream(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

/// A conversation the plan may draw, with its responses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanConversation {
    pub id: i64,
    /// Stable identity used for ordering (the conversation's external id).
    pub external_id: String,
    pub category: Option<String>,
    pub responses: Vec<i64>,
}

/// One shown item of one expert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedItem {
    /// Index into the experts handed to [`plan`].
    pub expert: usize,
    pub response: i64,
    /// 0-based position in the expert's shown order.
    pub position: usize,
    pub purpose: Purpose,
}

/// The whole plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Drawn conversations in draw order, with the stratum each came from.
    pub sample: Vec<(i64, Option<String>)>,
    /// Every response of the drawn conversations.
    pub responses: Vec<i64>,
    pub calibration: Vec<i64>,
    /// Items of every expert, expert by expert, in shown order.
    pub items: Vec<PlannedItem>,
}

/// Check the options against the study's size before anything is drawn.
pub fn check(
    options: &AssignmentOptions,
    experts: usize,
    conversations: usize,
) -> Result<(), AssignmentError> {
    if experts == 0 {
        return Err(AssignmentError::NoExperts);
    }
    if options.k == 0 {
        return Err(AssignmentError::ZeroOverlap);
    }
    if options.k > experts {
        return Err(AssignmentError::TooFewExperts {
            k: options.k,
            experts,
        });
    }
    if options.sample == Some(0) {
        return Err(AssignmentError::EmptySample);
    }
    if conversations == 0 {
        return Err(AssignmentError::NothingToAssign);
    }
    Ok(())
}

/// Draw and assign. `experts` is the number of experts (indices `0..experts`, in the order the
/// caller fixed, e.g. by name).
pub fn plan(
    conversations: &[PlanConversation],
    experts: usize,
    options: &AssignmentOptions,
) -> Result<Plan, AssignmentError> {
    check(options, experts, conversations.len())?;
    let seed = options.seed;

    // 1. The sample: conversations in a stable order, then a stratified draw.
    let mut ordered: Vec<&PlanConversation> = conversations.iter().collect();
    ordered.sort_by(|a, b| a.external_id.cmp(&b.external_id).then(a.id.cmp(&b.id)));
    let candidates: Vec<SampleCandidate> = ordered
        .iter()
        .map(|c| SampleCandidate {
            id: c.id,
            stratum: if options.stratify {
                c.category.clone()
            } else {
                None
            },
        })
        .collect();
    let n = options.sample.unwrap_or(candidates.len());
    let drawn = draw_sample(&candidates, n, &mut stream(seed, STREAM_SAMPLE));
    let by_id: std::collections::HashMap<i64, &PlanConversation> =
        ordered.iter().map(|c| (c.id, *c)).collect();

    // 2. Every response of every drawn conversation, conversations and responses shuffled.
    let mut rng = stream(seed, STREAM_RESPONSES);
    let mut conv_order: Vec<i64> = drawn.iter().map(|(id, _)| *id).collect();
    conv_order.shuffle(&mut rng);
    let mut responses = Vec::new();
    for id in &conv_order {
        let mut rs = by_id[id].responses.clone();
        rs.sort_unstable();
        rs.shuffle(&mut rng);
        responses.extend(rs);
    }
    if responses.is_empty() {
        return Err(AssignmentError::NothingToAssign);
    }

    // 3. Calibration items, rated by everyone, drawn from the sampled responses.
    if options.calibration > responses.len() {
        return Err(AssignmentError::TooManyCalibration {
            calibration: options.calibration,
            responses: responses.len(),
        });
    }
    let mut calibration: Vec<i64> = responses
        .choose_multiple(&mut stream(seed, STREAM_CALIBRATION), options.calibration)
        .copied()
        .collect();
    calibration.sort_unstable();
    let regular: Vec<i64> = responses
        .iter()
        .copied()
        .filter(|r| calibration.binary_search(r).is_err())
        .collect();

    // 4. Exactly k experts per regular response: slot i = j·k + s goes to expert perm[i mod E].
    // k consecutive slots never repeat an expert (k ≤ E) and the slots spread evenly (±1).
    let mut perm: Vec<usize> = (0..experts).collect();
    perm.shuffle(&mut stream(seed, STREAM_EXPERTS));
    let mut lists: Vec<Vec<(i64, Purpose)>> = vec![Vec::new(); experts];
    for (j, &response) in regular.iter().enumerate() {
        for s in 0..options.k {
            let expert = perm[(j * options.k + s) % experts];
            lists[expert].push((response, Purpose::Regular));
        }
    }

    // 5. Each expert's shown order: calibration first (shuffled), then the regular items
    // (shuffled), then test–retest items inserted at least `retest_gap` items later.
    let mut items = Vec::new();
    for (e, regular_items) in lists.into_iter().enumerate() {
        let mut rng = stream(seed, STREAM_ORDER + e as u64);
        let mut cal: Vec<(i64, Purpose)> = calibration
            .iter()
            .map(|&r| (r, Purpose::Calibration))
            .collect();
        cal.shuffle(&mut rng);
        let mut reg = regular_items;
        reg.shuffle(&mut rng);
        cal.extend(reg);
        let order = with_retests(
            cal,
            options.retest,
            options.retest_gap,
            e,
            &mut stream(seed, STREAM_RETEST + e as u64),
        )?;
        items.extend(
            order
                .into_iter()
                .enumerate()
                .map(|(position, (response, purpose))| PlannedItem {
                    expert: e,
                    response,
                    position,
                    purpose,
                }),
        );
    }
    Ok(Plan {
        sample: drawn,
        responses,
        calibration,
        items,
    })
}

/// Insert `count` retest items into one expert's list: each repeats an item at index p and is
/// placed after the original item at index s, s drawn uniformly from p + gap ..= n − 1, so at
/// least `gap` items are shown in between.
fn with_retests(
    list: Vec<(i64, Purpose)>,
    count: usize,
    gap: usize,
    expert: usize,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<(i64, Purpose)>, AssignmentError> {
    if count == 0 {
        return Ok(list);
    }
    let n = list.len();
    let eligible: Vec<usize> = (0..n).filter(|&p| p + gap < n).collect();
    if count > eligible.len() {
        return Err(AssignmentError::RetestTooMany {
            retest: count,
            gap,
            expert_index: expert,
            items: n,
            eligible: eligible.len(),
        });
    }
    let mut after: Vec<Vec<i64>> = vec![Vec::new(); n];
    for &p in eligible.choose_multiple(rng, count) {
        let s = rng.gen_range(p + gap..n);
        after[s].push(list[p].0);
    }
    let mut out = Vec::with_capacity(n + count);
    for (i, item) in list.into_iter().enumerate() {
        out.push(item);
        after[i].shuffle(rng);
        out.extend(after[i].iter().map(|&r| (r, Purpose::Retest)));
    }
    Ok(out)
}
