//! A returned package as the merge reads it — the expert's ratings, history, progress, flags and
//! signatures mapped onto the study's ids — and the check every one of its values passes before
//! the merge writes anything. The seal only says the package was last written by a Concord that
//! held the package passphrase, and the expert holds it: so nothing in the package is trusted,
//! and each value is held to what the study itself knows, as an import is.
//!
//! [`PackageWork::validate`] refuses the whole return, naming the file, the table, the row and
//! the column at fault, when:
//! - a rater other than the package's expert is in it, or a rating, flag, progress row or
//!   signature is not the expert's;
//! - a rating is not of the first or retest occasion, or is of a response or criterion the
//!   package was not issued with, or of an item the study did not assign to the expert (a retest
//!   value needs a retest showing), or of a criterion of another rubric than its item's;
//! - a value (current or earlier) is outside its criterion's scale;
//! - a time is later than the study's clock plus [`MAX_CLOCK_SKEW_MS`], a value that differs
//!   from the one issued (or a history entry, flag or signature the study does not hold) is
//!   dated before the package was issued, or a rating's times are out of order (created after
//!   its last change, an earlier version valid after it was replaced or replaced after the
//!   current value was set, a flag resolved before it was raised);
//! - time on an item is negative, not a number or more than [`MAX_SECONDS_ON_ITEM`], or the time
//!   the package adds across all items is more than the time since it was issued;
//! - a rationale or raw value is longer than the import's limit of one cell ([`MAX_TEXT_BYTES`];
//!   origins [`MAX_ORIGIN_BYTES`]), a flag reason is empty or longer than every flag's limit
//!   ([`crate::store::MAX_FLAG_REASON_BYTES`]), or an item holds more than
//!   [`MAX_FLAGS_PER_ITEM`] flags (the window and a browser are held to the same);
//! - a signature is not by the package's expert, or its proof does not verify against the
//!   expert's signing passphrase as this study holds it (one set only in the package, or none
//!   at all, cannot be verified here);
//! - a pair verdict is of a pair the study did not give the expert, of a criterion that is not
//!   a comparison of that pair's rubric, a tie where the criterion allows none, or says the
//!   answers were shown in another order than the study recorded for the expert; its texts and
//!   times are held to the rules above, as are the pairs' progress and flags.

use super::{PackageError, META_PACKAGE_ID, META_PACKAGE_RATER};
use crate::base::clock::{iso_utc, Millis};
use crate::base::text::quoted;
use crate::rubric::Scale;
use crate::store::{
    AssignmentRecord, BaseKey, CriterionKey, FlagRecord, HistoryRow, KeyedCriterion, NamedRater,
    Occasion, PairBaseKey, PairContent, PairFlagRecord, PairHistoryRow, PairVerdictFull,
    PairWorkRecord, Purpose, RatingContent, SignedValue, Store, StoredRating, Winner,
};
use crate::workflow::queue::MAX_SECONDS_ON_ITEM;
use crate::workflow::signoff::{proof_verifies, SignatureStatus, SignedStatement};
use std::collections::{HashMap, HashSet};

/// How far ahead of the study's clock a time in a package may be: the expert's computer keeps
/// its own time, and ten minutes covers a clock that is not synchronised without letting a
/// return claim work it has not yet done.
pub const MAX_CLOCK_SKEW_MS: Millis = 10 * 60 * 1000;

/// The longest rationale or raw value a package may carry: the import's limit for
/// one cell (`files::bounds::ReadLimits`, 1 MiB).
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// The longest origin of a rating (`screen`, `import:…`, `sheet:…`).
pub const MAX_ORIGIN_BYTES: usize = 256;

/// The most flags one item may carry in a package: the limit of every flag.
pub use crate::store::MAX_FLAGS_PER_ITEM;

/// Which package a file is, and whose: checked against the study before anything is read.
pub(super) struct PackageOrigin {
    pub file: String,
    pub package_id: String,
    pub rater_id: i64,
    pub rater_name: String,
}

/// A response of the package as the study knows it.
pub(super) struct StudyResponse {
    pub id: i64,
    pub conversation: String,
    pub source: String,
    /// The reply's turn in its conversation (`None`: a single-turn answer or a session item).
    pub turn: Option<i64>,
}

/// A criterion of the package as the study knows it.
pub(super) struct StudyCriterion {
    pub id: i64,
    pub key: String,
}

/// A pair of the package as the study knows it.
pub(super) struct StudyPair {
    pub id: i64,
    /// Whether the package names the pair's sides the other way round from the study.
    pub swapped: bool,
    pub rubric_id: i64,
    pub conversation: String,
    /// The study's source keys of its left and right answers.
    pub left: String,
    pub right: String,
}

/// One of the package's signatures: its standing there, the ratings it covers (package ids) and
/// its proof.
pub(super) struct PackageSignature {
    pub status: SignatureStatus,
    pub values: Vec<SignedValue>,
    pub proof: Option<String>,
}

/// What the package's expert did, read from the package and mapped onto the study's ids.
pub(super) struct PackageWork {
    /// The expert's id in the package.
    pub(super) pkg_rater: i64,
    /// Every other rater in the package (id, name): a package has none.
    other_raters: Vec<(i64, String)>,
    /// Package response id → the study's response.
    pub responses: HashMap<i64, StudyResponse>,
    /// Package criterion id → the study's criterion.
    pub criteria: HashMap<i64, StudyCriterion>,
    /// The expert's ratings in the package, by package id.
    pub ratings: Vec<StoredRating>,
    /// Earlier versions of the package's ratings, by package rating id.
    pub history: HashMap<i64, Vec<HistoryRow>>,
    pub assignments: Vec<AssignmentRecord>,
    pub flags: Vec<FlagRecord>,
    /// Every signature in the package, whoever it names.
    pub signatures: Vec<PackageSignature>,
    /// Package pair id → the study's pair.
    pub pairs: HashMap<i64, StudyPair>,
    /// The expert's pairs in the package with their progress, verdicts (with earlier versions
    /// by verdict id) and flags — package ids.
    pub pair_work: Vec<PairWorkRecord>,
    pub pair_verdicts: Vec<PairVerdictFull>,
    pub pair_history: HashMap<i64, Vec<PairHistoryRow>>,
    pub pair_flags: Vec<PairFlagRecord>,
}

impl PackageOrigin {
    pub(super) fn check(
        store: &Store,
        pkg: &Store,
        file: String,
    ) -> Result<PackageOrigin, PackageError> {
        let package_id = pkg
            .meta(META_PACKAGE_ID)?
            .ok_or_else(|| PackageError::NotAPackage { file: file.clone() })?;
        let NamedRater {
            id: rater_id,
            name: rater_name,
        } = store
            .package_rater(&package_id)?
            .ok_or_else(|| PackageError::UnknownPackage {
                file: file.clone(),
                id: package_id.clone(),
            })?;
        let pkg_rater_name = pkg.meta(META_PACKAGE_RATER)?.unwrap_or_default();
        if pkg_rater_name != rater_name {
            return Err(PackageError::WrongRater {
                file,
                id: package_id,
                expected: rater_name,
                found: pkg_rater_name,
            });
        }
        Ok(PackageOrigin {
            file,
            package_id,
            rater_id,
            rater_name,
        })
    }

    pub(super) fn inconsistent(&self, detail: String) -> PackageError {
        PackageError::Inconsistent {
            file: self.file.clone(),
            detail,
        }
    }

    pub(super) fn refuse(
        &self,
        table: &'static str,
        row: i64,
        column: &'static str,
        detail: String,
    ) -> PackageError {
        PackageError::InvalidValue {
            file: self.file.clone(),
            table,
            row,
            column,
            detail,
        }
    }
}

impl PackageWork {
    pub(super) fn read(
        store: &Store,
        pkg: &Store,
        origin: &PackageOrigin,
    ) -> Result<Self, PackageError> {
        let pkg_rater = pkg
            .rater_named(&origin.rater_name)?
            .filter(|r| r.is_expert())
            .ok_or_else(|| {
                origin.inconsistent(format!(
                    "the package has no expert {}",
                    quoted(&origin.rater_name)
                ))
            })?
            .id;
        let other_raters = pkg
            .raters()?
            .into_iter()
            .filter(|r| r.id != pkg_rater)
            .map(|r| (r.id, r.name))
            .collect();
        let responses = map_responses(store, pkg, origin)?;
        let criteria = map_criteria(store, pkg, origin)?;
        let pairs = map_pairs(store, pkg, origin, &responses)?;
        let signatures = crate::workflow::signoff::signatures(pkg)
            .map_err(|e| origin.inconsistent(format!("its signatures cannot be read: {e}")))?
            .into_iter()
            .map(|status| {
                Ok(PackageSignature {
                    values: pkg.signed_values(status.signature.id)?,
                    proof: pkg.signature_proof(status.signature.id)?,
                    status,
                })
            })
            .collect::<Result<_, crate::store::StoreError>>()?;
        Ok(PackageWork {
            pkg_rater,
            other_raters,
            responses,
            criteria,
            ratings: pkg.ratings_of_rater(pkg_rater)?,
            history: pkg.history_of_rater(pkg_rater)?,
            assignments: pkg.assignments_of_rater(pkg_rater)?,
            flags: pkg.flags_of_rater(pkg_rater)?,
            signatures,
            pairs,
            pair_work: pkg.read().pair_work_of_rater(pkg_rater)?,
            pair_verdicts: pkg.read().pair_verdicts_of_rater(pkg_rater)?,
            pair_history: pkg.read().pair_history_of_rater(pkg_rater)?,
            pair_flags: pkg.read().pair_flags_of_rater(pkg_rater)?,
        })
    }

    /// A package pair verdict's key and content in the study's terms.
    pub(super) fn study_verdict(&self, v: &PairVerdictFull) -> Option<(PairBaseKey, PairContent)> {
        let pair = self.pairs.get(&v.pair_id)?;
        let criterion = self.criteria.get(&v.criterion_id)?;
        Some((
            (pair.id, criterion.id),
            super::swap_content(&v.content, pair.swapped),
        ))
    }

    /// Check every value of the package against what the study knows (see the module
    /// documentation); the first value at fault refuses the return.
    pub(super) fn validate(
        &self,
        store: &Store,
        origin: &PackageOrigin,
    ) -> Result<(), PackageError> {
        let known = StudyKnowledge::read(store, origin, self)?;
        if let Some((id, name)) = self.other_raters.first() {
            return Err(origin.refuse(
                "rater",
                *id,
                "name",
                format!(
                    "{} is not the package's expert {}",
                    quoted(name),
                    quoted(&origin.rater_name)
                ),
            ));
        }
        for r in &self.ratings {
            self.validate_rating(origin, &known, r)?;
        }
        for v in &self.pair_verdicts {
            self.validate_pair_verdict(origin, &known, v)?;
        }
        let pair_seconds = self.validate_pair_progress(origin, &known)?;
        self.validate_progress(origin, &known, pair_seconds)?;
        self.validate_flags(origin, &known)?;
        self.validate_pair_flags(origin, &known)?;
        self.validate_signatures(store, origin, &known)
    }

    /// A pair verdict of the package and its earlier versions (see the module documentation).
    fn validate_pair_verdict(
        &self,
        origin: &PackageOrigin,
        known: &StudyKnowledge,
        v: &PairVerdictFull,
    ) -> Result<(), PackageError> {
        let item = self
            .check_pair_verdict(origin, known, v)
            .map_err(|(column, detail)| origin.refuse("pair_judgement", v.id, column, detail))?;
        self.check_verdict_history(known, v, &item)
            .map_err(|(column, detail)| {
                origin.refuse("pair_judgement_history", v.id, column, detail)
            })
    }

    /// Check a verdict's current value (pair, winner, texts, times); returns its pair.
    fn check_pair_verdict<'a>(
        &'a self,
        origin: &PackageOrigin,
        known: &'a StudyKnowledge,
        v: &PairVerdictFull,
    ) -> Result<JudgedPair<'a>, Fault> {
        let item = self.judged_pair(origin, known, v)?;
        check_verdict_content(&item, &v.content, &v.origin)?;
        let content = super::swap_content(&v.content, item.pair.swapped);
        let at_issue = known.pair_base.get(&item.key);
        let times = CurrentTimes::of(v.created_at, v.updated_at, at_issue, &content);
        check_current_times(known, times)?;
        Ok(item)
    }

    /// The study's pair and comparison of a verdict, given to the expert and shown as recorded.
    fn judged_pair<'a>(
        &'a self,
        origin: &PackageOrigin,
        known: &'a StudyKnowledge,
        v: &PairVerdictFull,
    ) -> Result<JudgedPair<'a>, Fault> {
        let Some(pair) = self.pairs.get(&v.pair_id) else {
            return Err((
                "pair_id",
                format!("pair {} is not one the package was issued with", v.pair_id),
            ));
        };
        let Some(work) = known.pair_work.get(&pair.id) else {
            return Err((
                "pair_id",
                format!(
                    "the pair of answers {} and {} to conversation {} was not given to {}",
                    pair.left,
                    pair.right,
                    quoted(&pair.conversation),
                    quoted(&origin.rater_name)
                ),
            ));
        };
        let criterion = self.package_criterion(v.criterion_id)?;
        let study_criterion = known
            .criteria
            .get(&criterion.id)
            .filter(|c| c.rubric_id == pair.rubric_id && c.scale.is_preference());
        let Some(study_criterion) = study_criterion else {
            return Err((
                "criterion_id",
                format!(
                    "criterion {} is not a comparison of this pair's rubric",
                    criterion.key
                ),
            ));
        };
        if (v.left_first != pair.swapped) != work.left_first {
            return Err((
                "left_first",
                format!(
                    "says the answers were shown the other way round from the order this study gave {}",
                    quoted(&origin.rater_name)
                ),
            ));
        }
        Ok(JudgedPair {
            pair,
            key: (pair.id, criterion.id),
            criterion: &criterion.key,
            scale: &study_criterion.scale,
        })
    }

    /// Check a verdict's earlier versions: winner, texts, times in order and after issue.
    fn check_verdict_history(
        &self,
        known: &StudyKnowledge,
        v: &PairVerdictFull,
        item: &JudgedPair<'_>,
    ) -> Result<(), Fault> {
        let held = known.pair_history.get(&item.key);
        for h in self.pair_history.get(&v.id).into_iter().flatten() {
            check_verdict_content(item, &h.content, &h.origin)?;
            if h.valid_from > h.replaced_at || h.replaced_at > v.updated_at {
                return Err((
                    "replaced_at",
                    format!(
                        "an earlier version valid from {} and replaced at {}, out of order with the current verdict set at {}",
                        iso_utc(h.valid_from),
                        iso_utc(h.replaced_at),
                        iso_utc(v.updated_at)
                    ),
                ));
            }
            let h_study = PairHistoryRow {
                content: super::swap_content(&h.content, item.pair.swapped),
                ..h.clone()
            };
            let is_held = held.is_some_and(|rows| rows.contains(&h_study));
            check_replaced_after_issue(known, h.replaced_at, is_held)?;
        }
        Ok(())
    }

    /// The pairs' progress; returns the time on task the package adds to them.
    fn validate_pair_progress(
        &self,
        origin: &PackageOrigin,
        known: &StudyKnowledge,
    ) -> Result<f64, PackageError> {
        let mut added = 0.0;
        for w in &self.pair_work {
            let refuse = |column, detail| origin.refuse("pair_assignment", w.id, column, detail);
            let study = self
                .pairs
                .get(&w.pair_id)
                .and_then(|p| known.pair_work.get(&p.id));
            let Some(study) = study else {
                return Err(refuse(
                    "pair_id",
                    format!(
                        "pair {} was not given to {}",
                        w.pair_id,
                        quoted(&origin.rater_name)
                    ),
                ));
            };
            if !w.seconds_spent.is_finite()
                || w.seconds_spent < 0.0
                || w.seconds_spent > MAX_SECONDS_ON_ITEM
            {
                return Err(refuse(
                    "seconds_spent",
                    format!(
                        "{} s on one pair is not a time on task Concord records (0 to {MAX_SECONDS_ON_ITEM} s)",
                        w.seconds_spent
                    ),
                ));
            }
            check_text(w.rationale.as_deref(), MAX_TEXT_BYTES)
                .map_or(Ok(()), |detail| Err(refuse("rationale", detail)))?;
            added += (w.seconds_spent - study.seconds_spent).max(0.0);
            for (column, at, held) in [
                ("first_shown_at", w.first_shown_at, study.first_shown_at),
                ("completed_at", w.completed_at, study.completed_at),
            ] {
                let Some(at) = at else { continue };
                known
                    .check_not_future(at)
                    .map_or(Ok(()), |detail| Err(refuse(column, detail)))?;
                if held != Some(at) {
                    known
                        .check_after_issue(at)
                        .map_or(Ok(()), |detail| Err(refuse(column, detail)))?;
                }
            }
        }
        Ok(added)
    }

    fn validate_pair_flags(
        &self,
        origin: &PackageOrigin,
        known: &StudyKnowledge,
    ) -> Result<(), PackageError> {
        let mut per_pair: HashMap<i64, usize> = HashMap::new();
        for (i, f) in self.pair_flags.iter().enumerate() {
            let refuse =
                |column, detail| Err(origin.refuse("pair_flag", i as i64 + 1, column, detail));
            let Some(pair) = self
                .pairs
                .get(&f.pair_id)
                .filter(|p| known.pair_work.contains_key(&p.id))
            else {
                return refuse(
                    "pair_id",
                    format!(
                        "pair {} was not given to {}",
                        f.pair_id,
                        quoted(&origin.rater_name)
                    ),
                );
            };
            let n = per_pair.entry(pair.id).or_default();
            *n += 1;
            let flag = PairFlagRecord {
                pair_id: pair.id,
                ..f.clone()
            };
            let times = FlagTimes {
                created_at: f.created_at,
                resolved_at: f.resolved_at,
                held: known.pair_flags.contains(&flag),
            };
            if let Some((column, detail)) = check_flag(known, *n, "pair", &f.reason, times) {
                return refuse(column, detail);
            }
        }
        Ok(())
    }

    /// A rating of the package and its earlier versions (see the module documentation).
    fn validate_rating(
        &self,
        origin: &PackageOrigin,
        known: &StudyKnowledge,
        r: &StoredRating,
    ) -> Result<(), PackageError> {
        let item = self
            .check_rating(origin, known, r)
            .map_err(|(column, detail)| origin.refuse("rating", r.id, column, detail))?;
        self.check_rating_history(known, r, &item)
            .map_err(|(column, detail)| origin.refuse("rating_history", r.id, column, detail))
    }

    /// Check a rating's current value (item, scale, texts, times); returns its item.
    fn check_rating<'a>(
        &'a self,
        origin: &PackageOrigin,
        known: &'a StudyKnowledge,
        r: &StoredRating,
    ) -> Result<RatedItem<'a>, Fault> {
        let item = self.rated_item(origin, known, r)?;
        let texts = RatingTexts {
            raw_value: r.raw_value.as_deref(),
            rationale: r.rationale.as_deref(),
            origin: &r.origin,
        };
        check_rating_content(&item, r.value, texts)?;
        let content = r.content();
        let at_issue = known.base.get(&item.key);
        let times = CurrentTimes::of(r.created_at, r.updated_at, at_issue, &content);
        check_current_times(known, times)?;
        Ok(item)
    }

    /// The study's item of a first or retest rating, assigned to the expert for that occasion.
    fn rated_item<'a>(
        &'a self,
        origin: &PackageOrigin,
        known: &'a StudyKnowledge,
        r: &StoredRating,
    ) -> Result<RatedItem<'a>, Fault> {
        if !matches!(r.occasion, Occasion::First | Occasion::Retest) {
            return Err((
                "occasion",
                format!(
                    "a {} value; a package returns only its expert's first and retest ratings",
                    r.occasion.as_str()
                ),
            ));
        }
        let Some(response) = self.responses.get(&r.response_id) else {
            return Err((
                "response_id",
                format!(
                    "response {} is not one the package was issued with",
                    r.response_id
                ),
            ));
        };
        let criterion = self.package_criterion(r.criterion_id)?;
        let purposes = known.assigned_purposes(response.id);
        let issued = match r.occasion {
            Occasion::Retest => purposes.contains(&Purpose::Retest),
            _ => purposes.iter().any(|p| *p != Purpose::Retest),
        };
        if !issued {
            return Err((
                "response_id",
                format!(
                    "conversation {} (source {}) was not issued to {} for a {} rating",
                    quoted(&response.conversation),
                    response.source,
                    quoted(&origin.rater_name),
                    r.occasion.as_str()
                ),
            ));
        }
        let Some(study_criterion) = known.criteria.get(&criterion.id) else {
            return Err((
                "criterion_id",
                format!("criterion {} is not in this study's rubric", criterion.key),
            ));
        };
        if known.response_rubric.get(&response.id) != Some(&study_criterion.rubric_id) {
            return Err((
                "criterion_id",
                format!(
                    "criterion {} is not in the rubric of conversation {}",
                    criterion.key,
                    quoted(&response.conversation)
                ),
            ));
        }
        Ok(RatedItem {
            key: (r.occasion, response.id, criterion.id),
            criterion: &criterion.key,
            scale: &study_criterion.scale,
        })
    }

    /// Check a rating's earlier versions: scale, texts, times in order and after issue.
    fn check_rating_history(
        &self,
        known: &StudyKnowledge,
        r: &StoredRating,
        item: &RatedItem<'_>,
    ) -> Result<(), Fault> {
        let held = known.history.get(&item.key);
        for h in self.history.get(&r.id).into_iter().flatten() {
            let texts = RatingTexts {
                raw_value: h.raw_value.as_deref(),
                rationale: h.rationale.as_deref(),
                origin: &h.origin,
            };
            check_rating_content(item, h.value, texts)?;
            if h.valid_from > h.replaced_at {
                return Err((
                    "valid_from",
                    format!(
                        "an earlier version valid from {}, after it was replaced at {}",
                        iso_utc(h.valid_from),
                        iso_utc(h.replaced_at)
                    ),
                ));
            }
            if h.replaced_at > r.updated_at {
                return Err((
                    "replaced_at",
                    format!(
                        "an earlier version replaced at {}, after the current value was set at {}",
                        iso_utc(h.replaced_at),
                        iso_utc(r.updated_at)
                    ),
                ));
            }
            let is_held = held.is_some_and(|rows| rows.contains(h));
            check_replaced_after_issue(known, h.replaced_at, is_held)?;
        }
        Ok(())
    }

    /// The study's criterion of a package criterion id the package was issued with.
    fn package_criterion(&self, id: i64) -> Result<&StudyCriterion, Fault> {
        self.criteria.get(&id).ok_or_else(|| {
            (
                "criterion_id",
                format!("criterion {id} is not one the package was issued with"),
            )
        })
    }

    /// The items' progress; `pair_seconds` is the time the package adds on its pairs, which
    /// counts toward the time since issue as well.
    fn validate_progress(
        &self,
        origin: &PackageOrigin,
        known: &StudyKnowledge,
        pair_seconds: f64,
    ) -> Result<(), PackageError> {
        let mut added = pair_seconds;
        for a in &self.assignments {
            let refuse = |column, detail| Err(origin.refuse("assignment", a.id, column, detail));
            let study = self
                .responses
                .get(&a.response_id)
                .and_then(|r| known.assignments.get(&(r.id, a.purpose)));
            let Some(study) = study else {
                return refuse(
                    "response_id",
                    format!(
                        "a {} showing of response {} that was not issued to {}",
                        a.purpose.as_str(),
                        a.response_id,
                        quoted(&origin.rater_name)
                    ),
                );
            };
            if !a.seconds_spent.is_finite() || a.seconds_spent < 0.0 {
                return refuse(
                    "seconds_spent",
                    format!("{} is not a time on task", a.seconds_spent),
                );
            }
            if a.seconds_spent > MAX_SECONDS_ON_ITEM {
                return refuse(
                    "seconds_spent",
                    format!(
                        "{} s on one item, more than the {MAX_SECONDS_ON_ITEM} s Concord records for an item",
                        a.seconds_spent
                    ),
                );
            }
            added += (a.seconds_spent - study.seconds_spent).max(0.0);
            for (column, at, held) in [
                ("first_shown_at", a.first_shown_at, study.first_shown_at),
                ("completed_at", a.completed_at, study.completed_at),
            ] {
                let Some(at) = at else { continue };
                known
                    .check_not_future(at)
                    .map_or(Ok(()), |detail| refuse(column, detail))?;
                if held != Some(at) {
                    known
                        .check_after_issue(at)
                        .map_or(Ok(()), |detail| refuse(column, detail))?;
                }
            }
        }
        let elapsed = (known.now - known.issued_at + MAX_CLOCK_SKEW_MS).max(0) as f64 / 1000.0;
        if added > elapsed {
            let busiest = self
                .assignments
                .iter()
                .max_by(|a, b| a.seconds_spent.total_cmp(&b.seconds_spent))
                .map_or(0, |a| a.id);
            return Err(origin.refuse(
                "assignment",
                busiest,
                "seconds_spent",
                format!(
                    "the package adds {added:.0} s of time on task across its items, more than the {elapsed:.0} s since it was issued"
                ),
            ));
        }
        Ok(())
    }

    fn validate_flags(
        &self,
        origin: &PackageOrigin,
        known: &StudyKnowledge,
    ) -> Result<(), PackageError> {
        let mut per_item: HashMap<i64, usize> = HashMap::new();
        for f in &self.flags {
            let refuse = |column, detail| Err(origin.refuse("flag", f.response_id, column, detail));
            let Some(response) = self.responses.get(&f.response_id) else {
                return refuse(
                    "response_id",
                    format!(
                        "response {} is not one the package was issued with",
                        f.response_id
                    ),
                );
            };
            if known.assigned_purposes(response.id).is_empty() {
                return refuse(
                    "response_id",
                    format!(
                        "conversation {} was not issued to {}",
                        quoted(&response.conversation),
                        quoted(&origin.rater_name)
                    ),
                );
            }
            let n = per_item.entry(response.id).or_default();
            *n += 1;
            let flag = FlagRecord {
                response_id: response.id,
                ..f.clone()
            };
            let times = FlagTimes {
                created_at: f.created_at,
                resolved_at: f.resolved_at,
                held: known.flags.contains(&flag),
            };
            if let Some((column, detail)) = check_flag(known, *n, "item", &f.reason, times) {
                return refuse(column, detail);
            }
        }
        Ok(())
    }

    fn validate_signatures(
        &self,
        store: &Store,
        origin: &PackageOrigin,
        known: &StudyKnowledge,
    ) -> Result<(), PackageError> {
        let key = store.signing_key(origin.rater_id)?;
        for sig in &self.signatures {
            let s = &sig.status.signature;
            let refuse = |detail: String| {
                Err(PackageError::UnverifiedSignature {
                    file: origin.file.clone(),
                    id: s.id,
                    signer: s.signer.clone(),
                    detail,
                })
            };
            if s.rater_id != self.pkg_rater || s.signer != origin.rater_name {
                return refuse(format!(
                    "it is not by the package's expert {}",
                    quoted(&origin.rater_name)
                ));
            }
            if let Some(detail) = known.check_not_future(s.signed_at) {
                return refuse(detail);
            }
            let scope = merged_scope(&origin.package_id, &s.scope);
            if !known.signatures.contains(&(s.signed_at, scope)) {
                if let Some(detail) = known.check_after_issue(s.signed_at) {
                    return refuse(detail);
                }
            }
            let Some(key) = key.as_ref() else {
                return refuse(format!(
                    "this study holds no signing passphrase of {} to verify it with (set it in the study, then issue a new package)",
                    quoted(&origin.rater_name)
                ));
            };
            let verified = sig
                .proof
                .as_deref()
                .is_some_and(|p| proof_verifies(key, &SignedStatement::from(s), p));
            if !verified {
                return refuse(format!(
                    "its proof does not verify against the signing passphrase of {} this study holds",
                    quoted(&origin.rater_name)
                ));
            }
            if let Some(v) = sig
                .values
                .iter()
                .find(|v| !self.responses.contains_key(&v.response_id))
            {
                return refuse(format!(
                    "it covers response {}, which the package was not issued with",
                    v.response_id
                ));
            }
        }
        Ok(())
    }
}

/// The scope a package's signature is recorded under in the study.
pub(super) fn merged_scope(package_id: &str, scope: &str) -> String {
    format!("package {package_id}: {scope}")
}

/// When a flag was raised and resolved, and whether the study already holds it.
struct FlagTimes {
    created_at: Millis,
    resolved_at: Option<Millis>,
    held: bool,
}

/// The checks every flag of a package passes, an item's or a pair's: `nth` flag on its `what`,
/// a reason that is there and within the text limit, raised not in the future and (unless the
/// study holds it) not before issue, resolved not before it was raised nor in the future.
/// `None` when it passes, else the column at fault and what is wrong.
fn check_flag(
    known: &StudyKnowledge,
    nth: usize,
    what: &str,
    reason: &str,
    t: FlagTimes,
) -> Option<(&'static str, String)> {
    if nth > MAX_FLAGS_PER_ITEM {
        return Some((
            "reason",
            format!("more than {MAX_FLAGS_PER_ITEM} flags on one {what}"),
        ));
    }
    if reason.trim().is_empty() {
        return Some(("reason", "an empty flag reason".to_string()));
    }
    if let Some(d) = check_text(Some(reason), crate::store::MAX_FLAG_REASON_BYTES) {
        return Some(("reason", d));
    }
    if let Some(d) = known.check_not_future(t.created_at) {
        return Some(("created_at", d));
    }
    if !t.held {
        if let Some(d) = known.check_after_issue(t.created_at) {
            return Some(("created_at", d));
        }
    }
    let resolved = t.resolved_at?;
    if resolved < t.created_at {
        return Some((
            "resolved_at",
            format!(
                "resolved at {}, before it was raised at {}",
                iso_utc(resolved),
                iso_utc(t.created_at)
            ),
        ));
    }
    known.check_not_future(resolved).map(|d| ("resolved_at", d))
}

/// `None` when `value` is on `scale`, else what is wrong.
fn check_value(value: Option<i64>, scale: &Scale, criterion: &str) -> Option<String> {
    let v = value?;
    (!scale.contains(v)).then(|| {
        format!(
            "{v} is outside the scale {}–{} of criterion {criterion}",
            scale.min(),
            scale.max()
        )
    })
}

/// `None` when `text` is at most `limit` bytes, else what is wrong.
fn check_text(text: Option<&str>, limit: usize) -> Option<String> {
    let t = text?;
    (t.len() > limit).then(|| format!("{} bytes of text, more than the limit of {limit}", t.len()))
}

/// What is wrong with one value of a package: the column at fault and why.
type Fault = (&'static str, String);

/// `Err` naming `column` when a check found something wrong (`detail`), else `Ok`.
fn fault_at(column: &'static str, detail: Option<String>) -> Result<(), Fault> {
    detail.map_or(Ok(()), |detail| Err((column, detail)))
}

/// A package rating's item in the study's terms: its key, its criterion's key and scale.
struct RatedItem<'a> {
    key: BaseKey,
    criterion: &'a str,
    scale: &'a Scale,
}

/// A package verdict's pair and comparison in the study's terms: the pair, the verdict's key,
/// its criterion's key and scale.
struct JudgedPair<'a> {
    pair: &'a StudyPair,
    key: PairBaseKey,
    criterion: &'a str,
    scale: &'a Scale,
}

/// The texts of a rating, current or earlier.
struct RatingTexts<'a> {
    raw_value: Option<&'a str>,
    rationale: Option<&'a str>,
    origin: &'a str,
}

/// When a current value was created and last changed, whether it differs from the value at
/// issue, and whether there was one.
struct CurrentTimes {
    created_at: Millis,
    updated_at: Millis,
    changed: bool,
    issued: bool,
}

impl CurrentTimes {
    /// The times of a current value whose content at issue was `at_issue` (`None`: not issued).
    fn of<T: PartialEq>(
        created_at: Millis,
        updated_at: Millis,
        at_issue: Option<&T>,
        content: &T,
    ) -> Self {
        CurrentTimes {
            created_at,
            updated_at,
            changed: at_issue != Some(content),
            issued: at_issue.is_some(),
        }
    }
}

/// Check a rating's value (current or earlier) is on its scale and its texts within their limits.
fn check_rating_content(
    item: &RatedItem<'_>,
    value: Option<i64>,
    texts: RatingTexts<'_>,
) -> Result<(), Fault> {
    fault_at("value", check_value(value, item.scale, item.criterion))?;
    fault_at("raw_value", check_text(texts.raw_value, MAX_TEXT_BYTES))?;
    fault_at("rationale", check_text(texts.rationale, MAX_TEXT_BYTES))?;
    fault_at("origin", check_text(Some(texts.origin), MAX_ORIGIN_BYTES))
}

/// Check a verdict (current or earlier): a winner its criterion allows, texts within limits.
fn check_verdict_content(
    item: &JudgedPair<'_>,
    content: &PairContent,
    origin: &str,
) -> Result<(), Fault> {
    if content.winner == Some(Winner::Tie) && !item.scale.contains(crate::rubric::PREFER_TIE) {
        return Err((
            "winner",
            format!("a tie, which criterion {} does not allow", item.criterion),
        ));
    }
    fault_at(
        "rationale",
        check_text(content.rationale.as_deref(), MAX_TEXT_BYTES),
    )?;
    fault_at("origin", check_text(Some(origin), MAX_ORIGIN_BYTES))
}

/// Check a current value's times: in order, not in the future, not before issue where it is new.
fn check_current_times(known: &StudyKnowledge, t: CurrentTimes) -> Result<(), Fault> {
    if t.created_at > t.updated_at {
        return Err((
            "created_at",
            format!(
                "created at {}, after its last change at {}",
                iso_utc(t.created_at),
                iso_utc(t.updated_at)
            ),
        ));
    }
    fault_at("updated_at", known.check_not_future(t.updated_at))?;
    if t.changed {
        fault_at("updated_at", known.check_after_issue(t.updated_at))?;
    }
    if !t.issued {
        fault_at("created_at", known.check_after_issue(t.created_at))?;
    }
    Ok(())
}

/// Check an earlier version was not replaced before issue, unless the study already holds it.
fn check_replaced_after_issue(
    known: &StudyKnowledge,
    replaced_at: Millis,
    held: bool,
) -> Result<(), Fault> {
    if held {
        return Ok(());
    }
    fault_at("replaced_at", known.check_after_issue(replaced_at))
}

/// A criterion of the study with its rubric and scale.
struct KnownCriterion {
    rubric_id: i64,
    scale: Scale,
}

/// What the study knows of the package and its expert, read once before the values are checked.
struct StudyKnowledge {
    now: Millis,
    issued_at: Millis,
    /// Study criterion id → its rubric and scale.
    criteria: HashMap<i64, KnownCriterion>,
    /// Study response id of each package response → its conversation's rubric.
    response_rubric: HashMap<i64, i64>,
    /// The expert's assignment in the study, by (response, purpose).
    assignments: HashMap<(i64, Purpose), AssignmentRecord>,
    /// The values recorded at issue.
    base: HashMap<BaseKey, RatingContent>,
    /// The study's history of the expert's ratings, by key.
    history: HashMap<BaseKey, Vec<HistoryRow>>,
    flags: HashSet<FlagRecord>,
    /// The expert's signatures the study holds, as (time, scope).
    signatures: HashSet<(Millis, String)>,
    /// The expert's pairs in the study, by pair id.
    pair_work: HashMap<i64, PairWorkRecord>,
    /// The package's pair verdicts at issue, the study's history of the expert's verdicts by
    /// (pair, criterion), and the expert's pair flags in the study.
    pair_base: HashMap<PairBaseKey, PairContent>,
    pair_history: HashMap<PairBaseKey, Vec<PairHistoryRow>>,
    pair_flags: HashSet<PairFlagRecord>,
}

impl StudyKnowledge {
    fn read(
        store: &Store,
        origin: &PackageOrigin,
        work: &PackageWork,
    ) -> Result<Self, PackageError> {
        let issued_at = store
            .package_record(&origin.package_id)?
            .ok_or_else(|| PackageError::UnknownPackage {
                file: origin.file.clone(),
                id: origin.package_id.clone(),
            })?
            .exported_at;
        let scales: HashMap<(String, String), (i64, Scale)> = store
            .rubrics()?
            .into_iter()
            .flat_map(|s| {
                let id = s.id;
                let key = s.rubric.id.clone();
                s.rubric
                    .criteria
                    .into_iter()
                    .map(move |c| ((key.clone(), c.id), (id, c.scale)))
            })
            .collect();
        let criteria = store
            .read()
            .criterion_keys()?
            .into_iter()
            .filter_map(|KeyedCriterion { id, key }| {
                let (rubric_id, scale) = scales.get(&(key.rubric, key.criterion))?.clone();
                Some((id, KnownCriterion { rubric_id, scale }))
            })
            .collect();
        let mut response_rubric = HashMap::new();
        for r in work.responses.values() {
            let conversation = store.response(r.id)?.conversation_id;
            response_rubric.insert(r.id, store.conversation(conversation)?.rubric_id);
        }
        let assignments = store
            .assignments_of_rater(origin.rater_id)?
            .into_iter()
            .map(|a| ((a.response_id, a.purpose), a))
            .collect();
        let ratings = store.ratings_of_rater(origin.rater_id)?;
        let mut study_history = store.history_of_rater(origin.rater_id)?;
        let history = ratings
            .iter()
            .map(|r| {
                (
                    (r.occasion, r.response_id, r.criterion_id),
                    study_history.remove(&r.id).unwrap_or_default(),
                )
            })
            .collect();
        let signatures = store
            .signatures()?
            .into_iter()
            .filter(|s| s.rater_id == origin.rater_id)
            .map(|s| (s.signed_at, s.scope))
            .collect();
        let read = store.read();
        let mut study_pair_history = read.pair_history_of_rater(origin.rater_id)?;
        let pair_history = read
            .pair_verdicts_of_rater(origin.rater_id)?
            .into_iter()
            .map(|v| {
                (
                    (v.pair_id, v.criterion_id),
                    study_pair_history.remove(&v.id).unwrap_or_default(),
                )
            })
            .collect();
        let pair_work = read
            .pair_work_of_rater(origin.rater_id)?
            .into_iter()
            .map(|w| (w.pair_id, w))
            .collect();
        Ok(StudyKnowledge {
            pair_work,
            pair_base: read.package_pair_base(&origin.package_id)?,
            pair_history,
            pair_flags: read
                .pair_flags_of_rater(origin.rater_id)?
                .into_iter()
                .collect(),
            now: store.now_ms(),
            issued_at,
            criteria,
            response_rubric,
            assignments,
            base: store.read().package_base(&origin.package_id)?,
            history,
            flags: store.flags_of_rater(origin.rater_id)?.into_iter().collect(),
            signatures,
        })
    }

    fn assigned_purposes(&self, response: i64) -> Vec<Purpose> {
        [Purpose::Regular, Purpose::Calibration, Purpose::Retest]
            .into_iter()
            .filter(|p| self.assignments.contains_key(&(response, *p)))
            .collect()
    }

    /// `None` when `at` is not ahead of the study's clock by more than the allowed skew.
    fn check_not_future(&self, at: Millis) -> Option<String> {
        (at > self.now.saturating_add(MAX_CLOCK_SKEW_MS)).then(|| {
            format!(
                "dated {}, later than now ({}) by more than the {} minutes a clock may be off",
                iso_utc(at),
                iso_utc(self.now),
                MAX_CLOCK_SKEW_MS / 60_000
            )
        })
    }

    /// `None` when `at` is not before the package was issued.
    fn check_after_issue(&self, at: Millis) -> Option<String> {
        (at < self.issued_at).then(|| {
            format!(
                "dated {}, before the package was issued at {}",
                iso_utc(at),
                iso_utc(self.issued_at)
            )
        })
    }
}

/// Package response id → study response, through conversation external ids, source codes and
/// turn numbers (one source answers at several turns of a transcript).
fn map_responses(
    store: &Store,
    pkg: &Store,
    origin: &PackageOrigin,
) -> Result<HashMap<i64, StudyResponse>, PackageError> {
    let codes = store.package_sources(&origin.package_id)?;
    let mut out = HashMap::new();
    for label in pkg.response_labels()? {
        let code = label.source;
        let (source_id, source_key) = codes
            .get(&code)
            .cloned()
            .ok_or_else(|| origin.inconsistent(format!("unknown source code {}", quoted(&code))))?;
        let id = store
            .response_of_source(&label.conversation, source_id, label.turn)?
            .ok_or_else(|| {
                origin.inconsistent(format!(
                    "conversation {} (source {code}{}) is not in this study",
                    quoted(&label.conversation),
                    label
                        .turn
                        .map(|t| format!(", turn {t}"))
                        .unwrap_or_default()
                ))
            })?;
        out.insert(
            label.id,
            StudyResponse {
                id,
                conversation: label.conversation,
                source: source_key,
                turn: label.turn,
            },
        );
    }
    Ok(out)
}

/// Package pair id → study pair, through the pair's two answers and its rubric's key. A pair
/// the study's design does not hold is refused as inconsistent (the seal also covers the pairs
/// as issued).
fn map_pairs(
    store: &Store,
    pkg: &Store,
    origin: &PackageOrigin,
    responses: &HashMap<i64, StudyResponse>,
) -> Result<HashMap<i64, StudyPair>, PackageError> {
    let study_rubrics: HashMap<String, i64> = store
        .rubrics()?
        .into_iter()
        .map(|s| (s.rubric.id, s.id))
        .collect();
    let pkg_rubrics: HashMap<i64, String> = pkg
        .rubrics()?
        .into_iter()
        .map(|s| (s.id, s.rubric.id))
        .collect();
    let mut out = HashMap::new();
    for rubric in pkg.read().designed_pair_rubrics()? {
        let key = pkg_rubrics.get(&rubric).cloned().unwrap_or_default();
        let study_rubric = *study_rubrics.get(&key).ok_or_else(|| {
            origin.inconsistent(format!(
                "pairwise rubric {} is not in this study",
                quoted(&key)
            ))
        })?;
        for p in pkg.read().pairs(rubric)? {
            let answer = |id: i64| {
                responses.get(&id).ok_or_else(|| {
                    origin.inconsistent(format!("pair {} names an unknown answer {id}", p.id))
                })
            };
            let (left, right) = (answer(p.left_response_id)?, answer(p.right_response_id)?);
            let id = store
                .read()
                .pair_of_answers(study_rubric, left.id, right.id)?
                .ok_or_else(|| {
                    origin.inconsistent(format!(
                        "the pair of answers {} and {} to conversation {} is not in this study's pair design",
                        left.source,
                        right.source,
                        quoted(&left.conversation)
                    ))
                })?;
            let swapped = left.id > right.id;
            let (l, r) = if swapped {
                (right, left)
            } else {
                (left, right)
            };
            out.insert(
                p.id,
                StudyPair {
                    id,
                    swapped,
                    rubric_id: study_rubric,
                    conversation: left.conversation.clone(),
                    left: l.source.clone(),
                    right: r.source.clone(),
                },
            );
        }
    }
    Ok(out)
}

/// Package criterion id → study criterion, by (rubric key, criterion key).
fn map_criteria(
    store: &Store,
    pkg: &Store,
    origin: &PackageOrigin,
) -> Result<HashMap<i64, StudyCriterion>, PackageError> {
    let main: HashMap<CriterionKey, i64> = store
        .read()
        .criterion_keys()?
        .into_iter()
        .map(|c| (c.key, c.id))
        .collect();
    let mut out = HashMap::new();
    for KeyedCriterion { id, key } in pkg.read().criterion_keys()? {
        let main_id = *main.get(&key).ok_or_else(|| {
            origin.inconsistent(format!(
                "criterion {}/{} is not in this study",
                key.rubric, key.criterion
            ))
        })?;
        out.insert(
            id,
            StudyCriterion {
                id: main_id,
                key: key.criterion,
            },
        );
    }
    Ok(out)
}
