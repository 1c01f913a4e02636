//! The expert's evidence spans in a rater package: issued with the package (their located spans
//! on the items assigned to them, with the rubric's codes the package's rubrics carry), marked
//! in the package window like on the study's screen, and brought back by the merge with origin
//! `package`.
//!
//! A span is known by its item, code and bounds; what can change under that name is its
//! severity, or whether it is there at all (a change of code or extent is the old span gone and
//! a new one there). Each is merged three ways, as a rating is: the base is what the study and
//! the package last agreed on — the spans at issue, then what an earlier return merged —, kept
//! in the study's `study_meta` under [`base_key`] (sealed by the audit chain with the rest of
//! it):
//!
//! | package vs base | study vs base | outcome |
//! |---|---|---|
//! | same | any | nothing to merge |
//! | changed | same | merged: added, its severity changed, or removed |
//! | changed | changed the same way | already merged: nothing to do (no span is stored twice) |
//! | changed | changed another way | conflict: reported, the study keeps its span |
//!
//! Every span of the package is checked before anything is written: its item issued to the
//! expert, a located reply with text, its bounds inside that text in characters, its code one of
//! the item's rubric's and its severity one of the code's levels.

use super::returned::{PackageOrigin, StudyResponse};
use super::PackageError;
use crate::base::text::quoted;
use crate::rubric::Code;
use crate::store::{CopiedSpan, SpanOrigin, SpanRecord, Store, StoreError, StudyTx};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// `study_meta` key of a package's span base (see the module documentation).
pub fn base_key(package_id: &str) -> String {
    format!("package.span_base.{package_id}")
}

/// A span's name in a merge: (study response id, code, start, end).
pub(super) type SpanKey = (i64, String, i64, i64);

/// A package's spans by their name, each with its severity.
pub(super) type SpanSet = BTreeMap<SpanKey, Option<String>>;

/// One span of a base as it is kept in `study_meta`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct BaseSpan {
    response: i64,
    code: String,
    start: i64,
    end: i64,
    severity: Option<String>,
}

/// The located spans of rater `rater_id` on `responses`, by name.
pub(super) fn spans_on(records: &[SpanRecord], responses: &BTreeSet<i64>) -> SpanSet {
    records
        .iter()
        .filter(|s| responses.contains(&s.response_id))
        .filter_map(|s| {
            let (start, end) = s.range?;
            Some((
                (s.response_id, s.code.clone(), start, end),
                s.severity.clone(),
            ))
        })
        .collect()
}

/// Write `set` as the span base of package `package_id`.
pub(super) fn record_base(
    tx: &mut StudyTx<'_>,
    package_id: &str,
    set: &SpanSet,
) -> Result<(), StoreError> {
    let rows: Vec<BaseSpan> = set
        .iter()
        .map(|((response, code, start, end), severity)| BaseSpan {
            response: *response,
            code: code.clone(),
            start: *start,
            end: *end,
            severity: severity.clone(),
        })
        .collect();
    let json = serde_json::to_string(&rows)
        .map_err(|e| StoreError::Invalid(format!("the span base cannot be written: {e}")))?;
    tx.set_meta(&base_key(package_id), &json)
}

/// The span base of package `package_id` (empty for a package issued before spans travelled).
fn read_base(tx: &StudyTx<'_>, package_id: &str) -> Result<SpanSet, StoreError> {
    let Some(json) = tx.meta(&base_key(package_id))? else {
        return Ok(SpanSet::new());
    };
    let rows: Vec<BaseSpan> = serde_json::from_str(&json).map_err(|e| {
        StoreError::Invalid(format!(
            "the study's record of package {package_id}'s spans cannot be read: {e}"
        ))
    })?;
    Ok(rows
        .into_iter()
        .map(|b| ((b.response, b.code, b.start, b.end), b.severity))
        .collect())
}

/// Copy the expert's spans of `set` into a package, each onto its copied response.
pub(super) fn copy_into_package(
    tx: &mut StudyTx<'_>,
    records: &[SpanRecord],
    responses: &HashMap<i64, i64>,
    rater: i64,
) -> Result<(), StoreError> {
    for s in records {
        let (Some(range), Some(&response_id)) = (s.range, responses.get(&s.response_id)) else {
            continue;
        };
        tx.copy_span(&CopiedSpan {
            response_id,
            rater_id: rater,
            code: &s.code,
            range,
            severity: s.severity.as_deref(),
            origin: &s.origin,
        })?;
    }
    Ok(())
}

/// A span changed both in the package and in the study since they last agreed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SpanMergeConflict {
    /// The conversation's external id.
    pub conversation: String,
    /// The reply's source key (the study's name).
    pub source: String,
    pub code: String,
    pub start: i64,
    pub end: i64,
    /// Whether the span was there at the base, in the study and in the package.
    pub in_base: bool,
    pub in_study: bool,
    pub in_package: bool,
    /// Its severity in each (`None` where it is absent or carries none).
    pub base_severity: Option<String>,
    pub study_severity: Option<String>,
    pub package_severity: Option<String>,
}

/// What the merge did with the expert's spans.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SpanMergeCounts {
    pub added: usize,
    pub changed: usize,
    pub removed: usize,
    /// Spans the package changed as the study already had them (not stored twice).
    pub already_present: usize,
    pub conflicts: Vec<SpanMergeConflict>,
}

impl SpanMergeCounts {
    pub fn wrote(&self) -> bool {
        self.added + self.changed + self.removed > 0
    }
}

/// The expert's spans in a returned package, checked and named in the study's terms.
pub(super) struct PackageSpans {
    set: SpanSet,
}

impl PackageSpans {
    /// Read the package expert's spans and check each against the study (see the module
    /// documentation); the first at fault refuses the return.
    pub(super) fn read(
        store: &Store,
        pkg: &Store,
        pkg_rater: i64,
        origin: &PackageOrigin,
        responses: &HashMap<i64, StudyResponse>,
    ) -> Result<PackageSpans, PackageError> {
        let assigned: BTreeSet<i64> = store
            .assignments_of_rater(origin.rater_id)?
            .iter()
            .map(|a| a.response_id)
            .collect();
        let mut set = SpanSet::new();
        let mut texts: HashMap<i64, (i64, Vec<Code>)> = HashMap::new();
        for s in pkg.spans_of_rater(pkg_rater)? {
            let refuse = |column, detail| origin.refuse("span", s.id, column, detail);
            let Some(study) = responses.get(&s.response_id) else {
                return Err(refuse(
                    "response_id",
                    format!(
                        "reply {} is not one the package was issued with",
                        s.response_id
                    ),
                ));
            };
            if !assigned.contains(&study.id) {
                return Err(refuse(
                    "response_id",
                    format!(
                        "the reply of {} in conversation {} was not given to {}",
                        study.source,
                        quoted(&study.conversation),
                        quoted(&origin.rater_name)
                    ),
                ));
            }
            let Some((start, end)) = s.range else {
                return Err(refuse(
                    "char_start",
                    "an expert's span must be located in the reply".into(),
                ));
            };
            let (length, codes) = match texts.entry(study.id) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let length = store
                        .item_text(study.id)?
                        .answer
                        .map_or(0, |t| t.chars().count() as i64);
                    let codes = store.response_rubric(study.id)?.rubric.codes;
                    e.insert((length, codes))
                }
            };
            if start < 0 || end <= start || end > *length {
                return Err(refuse(
                    "char_end",
                    format!(
                        "characters {start}–{end} are not a part of the reply, which has {length}"
                    ),
                ));
            }
            let Some(code) = codes.iter().find(|c| c.key == s.code) else {
                return Err(refuse(
                    "code",
                    format!("{} is not one of the rubric's span codes", quoted(&s.code)),
                ));
            };
            if let Some(level) = &s.severity {
                if !code.severity.iter().any(|l| l == level) {
                    return Err(refuse(
                        "severity",
                        format!(
                            "{} is not a severity level of code {}",
                            quoted(level),
                            quoted(&code.key)
                        ),
                    ));
                }
            }
            if s.quote.is_some() || s.call_id.is_some() {
                return Err(refuse(
                    "quote",
                    "an expert's span carries no judge's quote or call".into(),
                ));
            }
            let key = (study.id, s.code.clone(), start, end);
            if set.insert(key, s.severity.clone()).is_some() {
                return Err(refuse(
                    "code",
                    "the same span is marked twice in the package".into(),
                ));
            }
        }
        Ok(PackageSpans { set })
    }

    /// Merge the spans three ways (see the module documentation) in transaction `tx`.
    pub(super) fn merge(
        &self,
        tx: &mut StudyTx<'_>,
        origin: &PackageOrigin,
        responses: &HashMap<i64, StudyResponse>,
    ) -> Result<SpanMergeCounts, PackageError> {
        let items: BTreeSet<i64> = responses.values().map(|r| r.id).collect();
        let by_id: HashMap<i64, &StudyResponse> = responses.values().map(|r| (r.id, r)).collect();
        let base = read_base(tx, &origin.package_id)?;
        let study_rows: Vec<SpanRecord> = tx
            .spans_of_rater(origin.rater_id)?
            .into_iter()
            .filter(|s| items.contains(&s.response_id) && s.range.is_some())
            .collect();
        let study = spans_on(&study_rows, &items);
        let row_of: HashMap<SpanKey, i64> = study_rows
            .iter()
            .filter_map(|s| {
                let (a, b) = s.range?;
                Some(((s.response_id, s.code.clone(), a, b), s.id))
            })
            .collect();
        let mut counts = SpanMergeCounts::default();
        let mut agreed = base.clone();
        let names: BTreeSet<&SpanKey> = base.keys().chain(self.set.keys()).collect();
        for key in names {
            let (b, p, s) = (base.get(key), self.set.get(key), study.get(key));
            if p == b {
                continue;
            }
            if s == p {
                counts.already_present += 1;
            } else if s == b {
                match (p, s) {
                    (None, _) => {
                        tx.remove_span(row_of[key])?;
                        counts.removed += 1;
                    }
                    (Some(severity), None) => {
                        tx.copy_span(&CopiedSpan {
                            response_id: key.0,
                            rater_id: origin.rater_id,
                            code: &key.1,
                            range: (key.2, key.3),
                            severity: severity.as_deref(),
                            origin: SpanOrigin::Package.as_str(),
                        })?;
                        counts.added += 1;
                    }
                    (Some(severity), Some(_)) => {
                        tx.set_span_severity(row_of[key], severity.as_deref())?;
                        counts.changed += 1;
                    }
                }
            } else {
                let response = by_id[&key.0];
                counts.conflicts.push(SpanMergeConflict {
                    conversation: response.conversation.clone(),
                    source: response.source.clone(),
                    code: key.1.clone(),
                    start: key.2,
                    end: key.3,
                    in_base: b.is_some(),
                    in_study: s.is_some(),
                    in_package: p.is_some(),
                    base_severity: b.cloned().flatten(),
                    study_severity: s.cloned().flatten(),
                    package_severity: p.cloned().flatten(),
                });
                continue;
            }
            match p {
                Some(severity) => agreed.insert(key.clone(), severity.clone()),
                None => agreed.remove(key),
            };
        }
        if agreed != base {
            record_base(tx, &origin.package_id, &agreed)?;
        }
        Ok(counts)
    }
}
