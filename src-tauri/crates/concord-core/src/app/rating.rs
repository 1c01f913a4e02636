//! The expert's rating screen: open the queue (resume where they left), enter a value (durable
//! when this returns; the cached agreement reports take it in place), a rationale, a flag, the
//! evidence spans marked in the reply (added, changed, removed; each durable and audited), the
//! time spent on an item as they leave it, and a new profile from the rater picker. Only the
//! value changes what agreement sees; the rest keeps the cached reports.

use crate::app::open_study::OpenStudy;
pub use crate::store::SpanOrigin;
use crate::workflow::queue::{
    self, ItemProgress, LeftItem, QueueError, QueueSummary, RaterProfile, RaterProfiles, RatingItem,
};
use crate::workflow::spans::{self, ItemSpans, ShownSpan, SpanAt, SpanError};

/// The rater's queue, positioned where they left it.
pub fn open_queue(study: &mut OpenStudy, rater_id: i64) -> Result<QueueSummary, QueueError> {
    queue::open_queue(study.store_keeping_reports(), rater_id)
}

/// The items of the rater's queue still to look at: unfinished or flagged, in queue order.
pub fn left_items(study: &OpenStudy, rater_id: i64) -> Result<Vec<LeftItem>, QueueError> {
    queue::left_items(study.store(), rater_id)
}

/// Enter `value` for `criterion` of the rater's `item`; a value the rater signed off changes
/// only with `reason`.
pub fn rate(
    study: &mut OpenStudy,
    rater_id: i64,
    item: i64,
    criterion: &str,
    value: i64,
    reason: Option<&str>,
) -> Result<ItemProgress, QueueError> {
    study.rate(rater_id, item, criterion, value, reason)
}

/// A new expert profile from the rater picker; `queue_seed` orders their queue.
pub fn create_profile(
    study: &mut OpenStudy,
    name: &str,
    queue_seed: u64,
) -> Result<RaterProfile, QueueError> {
    queue::create_profile(study.store_keeping_reports(), name, queue_seed)
}

/// The rater's rationale for `item`.
pub fn set_rationale(
    study: &mut OpenStudy,
    rater_id: i64,
    item: i64,
    text: &str,
) -> Result<(), QueueError> {
    queue::set_rationale(study.store_keeping_reports(), rater_id, item, text)
}

/// Flag `item` for the lead with a reason.
pub fn flag_item(
    study: &mut OpenStudy,
    rater_id: i64,
    item: i64,
    reason: &str,
) -> Result<(), QueueError> {
    queue::flag_item(study.store_keeping_reports(), rater_id, item, reason)
}

/// Leave `item` after `seconds` on it, for `next_item`.
pub fn leave_item(
    study: &mut OpenStudy,
    rater_id: i64,
    item: i64,
    seconds: f64,
    next_item: i64,
) -> Result<(), QueueError> {
    queue::leave_item(
        study.store_keeping_reports(),
        rater_id,
        item,
        seconds,
        next_item,
    )
}

/// The study's expert profiles for the picker (and whether new ones are allowed).
pub fn profiles(study: &OpenStudy) -> Result<RaterProfiles, QueueError> {
    queue::profiles(study.store())
}

/// Item `item` of the expert `rater_id`'s queue, blinded.
pub fn rating_item(study: &OpenStudy, rater_id: i64, item: i64) -> Result<RatingItem, QueueError> {
    queue::rating_item(study.store(), rater_id, item)
}

/// What item `item` of the expert's queue may be marked with, and their spans on it.
pub fn item_spans(study: &OpenStudy, rater_id: i64, item: i64) -> Result<ItemSpans, SpanError> {
    spans::item_spans(study.store(), rater_id, item)
}

/// Mark a span on the reply of item `item`, from the surface `origin` names; durable and audited
/// when this returns. Spans do not change the ratings' agreement: the cached reports stay.
pub fn mark_span(
    study: &mut OpenStudy,
    origin: SpanOrigin,
    rater_id: i64,
    item: i64,
    span: &ShownSpan,
) -> Result<ItemSpans, SpanError> {
    spans::add_span(study.store_keeping_reports(), origin, rater_id, item, span)
}

/// Change the expert's span `at` on item `item` to `to` (code, severity, extent).
pub fn change_span(
    study: &mut OpenStudy,
    origin: SpanOrigin,
    rater_id: i64,
    item: i64,
    at: &SpanAt,
    to: &ShownSpan,
) -> Result<ItemSpans, SpanError> {
    spans::change_span(
        study.store_keeping_reports(),
        origin,
        rater_id,
        item,
        at,
        to,
    )
}

/// Remove the expert's span `at` from item `item`.
pub fn remove_span(
    study: &mut OpenStudy,
    origin: SpanOrigin,
    rater_id: i64,
    item: i64,
    at: &SpanAt,
) -> Result<ItemSpans, SpanError> {
    spans::remove_span(study.store_keeping_reports(), origin, rater_id, item, at)
}
