//! Writes to a study, always inside one [`StudyTx`] transaction handed out by `Store::write`.
//! Ratings are upserts that first copy the value being replaced into the append-only
//! `rating_history`, so no earlier value is ever lost.

use super::{StoreError, StoreResult};
use crate::clock::Millis;
use crate::rubric::Rubric;
use rusqlite::{params, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};

/// Is a rater a clinical expert or an LLM judge?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum RaterKind {
    Expert,
    Judge,
}

impl RaterKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RaterKind::Expert => "expert",
            RaterKind::Judge => "judge",
        }
    }
    pub fn parse(s: &str) -> Option<RaterKind> {
        match s {
            "expert" => Some(RaterKind::Expert),
            "judge" => Some(RaterKind::Judge),
            _ => None,
        }
    }
}

/// Who wrote a response: a person (the dataset's original answer) or a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Human,
    Llm,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Human => "human",
            SourceKind::Llm => "llm",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSource<'a> {
    pub key: &'a str,
    pub name: &'a str,
    pub family: Option<&'a str>,
    pub kind: SourceKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewConversation<'a> {
    pub external_id: &'a str,
    pub rubric_id: i64,
    pub context: &'a str,
    pub language: Option<&'a str>,
    pub category: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRater<'a> {
    pub kind: RaterKind,
    pub name: &'a str,
    pub model_id: Option<&'a str>,
    pub family: Option<&'a str>,
    /// Seed of this rater's randomised queue order (passed in so studies are reproducible).
    pub queue_seed: i64,
}

/// One value entered for rater × response × criterion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RatingInput<'a> {
    pub rater_id: i64,
    pub response_id: i64,
    pub criterion_id: i64,
    /// `None` records "missing" explicitly (e.g. an out-of-scale value treated as missing).
    pub value: Option<i64>,
    /// The value as it appeared in a source file when it differs from `value`.
    pub raw_value: Option<&'a str>,
    pub rationale: Option<&'a str>,
    /// Where the value came from: `screen`, `import:<file>`, `judge:<run>`, `package:<id>`…
    pub origin: &'a str,
}

/// What a rating write did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum RatingOutcome {
    Inserted,
    Updated { previous: Option<i64> },
    Unchanged,
}

/// A rating row as stored, before it is replaced.
struct StoredRating {
    id: i64,
    value: Option<i64>,
    raw: Option<String>,
    rationale: Option<String>,
    origin: String,
    updated_at: Millis,
}

/// One write transaction on a study.
pub struct StudyTx<'c> {
    pub(crate) tx: Transaction<'c>,
    pub(crate) now: Millis,
    /// Events to seal into the audit chain when the transaction commits.
    pub(crate) events: Vec<super::audit::Event>,
    pub(crate) pending: super::audit::PendingCell,
    /// The reason given for the rating change being written (needed for signed ratings).
    pub(crate) change_reason: Option<String>,
}

impl StudyTx<'_> {
    /// The time stamped on everything written in this transaction.
    pub fn now(&self) -> Millis {
        self.now
    }

    pub(crate) fn conn(&self) -> &rusqlite::Connection {
        &self.tx
    }

    pub fn set_meta(&mut self, key: &str, value: &str) -> StoreResult<()> {
        self.tx.execute(
            "INSERT INTO study_meta(key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        Ok(())
    }

    /// Record an event for the study's audit chain (who, what, details such as from → to and a
    /// reason); it is sealed into the chain when the transaction commits.
    pub fn audit(
        &mut self,
        actor: &str,
        action: &str,
        detail: &serde_json::Value,
    ) -> StoreResult<()> {
        self.events.push(super::audit::Event::Described {
            actor: actor.to_string(),
            action: action.to_string(),
            detail: detail.clone(),
        });
        Ok(())
    }

    /// Store a rubric and its criteria; returns the existing id when a rubric with the same id and
    /// identical definition is already present, and refuses a different definition under that id.
    pub fn add_rubric(&mut self, rubric: &Rubric) -> StoreResult<i64> {
        let text = rubric.to_toml();
        let existing: Option<(i64, String)> = self
            .tx
            .query_row(
                "SELECT id, source_toml FROM rubric WHERE key = ?1",
                [&rubric.id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        if let Some((id, stored)) = existing {
            if stored == text {
                return Ok(id);
            }
            return Err(StoreError::Invalid(format!(
                "the study already has a different rubric with id {:?}; give the new rubric another id",
                rubric.id
            )));
        }
        self.tx.execute(
            "INSERT INTO rubric(key, version, name_json, source_toml) VALUES (?1, ?2, ?3, ?4)",
            params![
                rubric.id,
                rubric.version,
                serde_json::to_string(&rubric.name).unwrap_or_default(),
                text
            ],
        )?;
        let rubric_id = self.tx.last_insert_rowid();
        let mut stmt = self.tx.prepare(
            "INSERT INTO criterion(rubric_id, key, position, group_key, scale_kind, scale_min,
                 scale_max, label_json, description_json, anchors_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        for (pos, c) in rubric.criteria.iter().enumerate() {
            stmt.execute(params![
                rubric_id,
                c.id,
                pos as i64,
                c.group,
                c.scale.kind_name(),
                c.scale.min(),
                c.scale.max(),
                serde_json::to_string(&c.label).unwrap_or_default(),
                serde_json::to_string(&c.description).unwrap_or_default(),
                serde_json::to_string(&c.anchors).unwrap_or_default(),
            ])?;
        }
        Ok(rubric_id)
    }

    /// Insert a source, or return the id of the source already stored under `key`.
    pub fn upsert_source(&mut self, s: &NewSource<'_>) -> StoreResult<i64> {
        if let Some(id) = self
            .tx
            .query_row("SELECT id FROM source WHERE key = ?1", [s.key], |r| {
                r.get(0)
            })
            .optional()?
        {
            return Ok(id);
        }
        self.tx.execute(
            "INSERT INTO source(key, name, family, kind) VALUES (?1, ?2, ?3, ?4)",
            params![s.key, s.name, s.family, s.kind.as_str()],
        )?;
        Ok(self.tx.last_insert_rowid())
    }

    pub fn add_conversation(&mut self, c: &NewConversation<'_>) -> StoreResult<i64> {
        self.tx
            .execute(
                "INSERT INTO conversation(external_id, rubric_id, context, language, category)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    c.external_id,
                    c.rubric_id,
                    c.context,
                    c.language,
                    c.category
                ],
            )
            .map_err(|e| {
                unique_violation(e, || {
                    format!("conversation {:?} already exists", c.external_id)
                })
            })?;
        Ok(self.tx.last_insert_rowid())
    }

    pub fn add_response(
        &mut self,
        conversation_id: i64,
        source_id: i64,
        text: Option<&str>,
    ) -> StoreResult<i64> {
        self.tx
            .execute(
                "INSERT INTO response(conversation_id, source_id, text) VALUES (?1, ?2, ?3)",
                params![conversation_id, source_id, text],
            )
            .map_err(|e| {
                unique_violation(e, || {
                    format!("conversation {conversation_id} already has a response from source {source_id}")
                })
            })?;
        Ok(self.tx.last_insert_rowid())
    }

    /// Insert a rater, or return the id of the rater already stored under the same name and kind.
    pub fn upsert_rater(&mut self, r: &NewRater<'_>) -> StoreResult<i64> {
        let existing: Option<(i64, String)> = self
            .tx
            .query_row(
                "SELECT id, kind FROM rater WHERE name = ?1",
                [r.name],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        if let Some((id, kind)) = existing {
            if kind != r.kind.as_str() {
                return Err(StoreError::Invalid(format!(
                    "a rater named {:?} already exists as {kind}",
                    r.name
                )));
            }
            return Ok(id);
        }
        self.tx.execute(
            "INSERT INTO rater(kind, name, model_id, family, queue_seed, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                r.kind.as_str(),
                r.name,
                r.model_id,
                r.family,
                r.queue_seed,
                self.now
            ],
        )?;
        Ok(self.tx.last_insert_rowid())
    }

    /// Enter a rating value. A different earlier value (or rationale) is copied into the history
    /// before it is replaced; an identical value changes nothing.
    pub fn set_rating(&mut self, input: &RatingInput<'_>) -> StoreResult<RatingOutcome> {
        self.check_scale(input)?;
        let existing: Option<StoredRating> = self
            .tx
            .prepare_cached(
                "SELECT id, value, raw_value, rationale, origin, updated_at FROM rating
                 WHERE rater_id = ?1 AND response_id = ?2 AND criterion_id = ?3",
            )?
            .query_row(
                params![input.rater_id, input.response_id, input.criterion_id],
                |r| {
                    Ok(StoredRating {
                        id: r.get(0)?,
                        value: r.get(1)?,
                        raw: r.get(2)?,
                        rationale: r.get(3)?,
                        origin: r.get(4)?,
                        updated_at: r.get(5)?,
                    })
                },
            )
            .optional()?;
        match existing {
            None => {
                self.tx
                    .prepare_cached(
                        "INSERT INTO rating(rater_id, response_id, criterion_id, value, raw_value,
                             rationale, origin, created_at, updated_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
                    )?
                    .execute(params![
                        input.rater_id,
                        input.response_id,
                        input.criterion_id,
                        input.value,
                        input.raw_value,
                        input.rationale,
                        input.origin,
                        self.now
                    ])?;
                self.record_rating_event(super::audit::Event::Rating {
                    rater_id: input.rater_id,
                    response_id: input.response_id,
                    criterion_id: input.criterion_id,
                    from: None,
                    to: input.value,
                    origin: input.origin.to_string(),
                    reason: self.change_reason.clone(),
                    after_signature: None,
                });
                Ok(RatingOutcome::Inserted)
            }
            Some(StoredRating {
                id,
                value,
                raw,
                rationale,
                origin,
                updated_at,
            }) => {
                if value == input.value
                    && raw.as_deref() == input.raw_value
                    && rationale.as_deref() == input.rationale
                {
                    return Ok(RatingOutcome::Unchanged);
                }
                let signed = self.rating_lock(id)?;
                if let (Some((signature, signer)), None) = (&signed, &self.change_reason) {
                    return Err(StoreError::SignedRating {
                        signer: signer.clone(),
                        signature: *signature,
                    });
                }
                self.tx
                    .prepare_cached(
                        "INSERT INTO rating_history(rating_id, value, raw_value, rationale, origin,
                             valid_from, replaced_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    )?
                    .execute(params![
                        id, value, raw, rationale, origin, updated_at, self.now
                    ])?;
                self.tx
                    .prepare_cached(
                        "UPDATE rating SET value = ?2, raw_value = ?3, rationale = ?4, origin = ?5,
                             updated_at = ?6 WHERE id = ?1",
                    )?
                    .execute(params![
                        id,
                        input.value,
                        input.raw_value,
                        input.rationale,
                        input.origin,
                        self.now
                    ])?;
                self.record_rating_event(super::audit::Event::Rating {
                    rater_id: input.rater_id,
                    response_id: input.response_id,
                    criterion_id: input.criterion_id,
                    from: Some(value),
                    to: input.value,
                    origin: input.origin.to_string(),
                    reason: self.change_reason.clone(),
                    after_signature: signed.map(|(s, _)| s),
                });
                Ok(RatingOutcome::Updated { previous: value })
            }
        }
    }

    /// Change a rating with a reason — the only way to change one an expert has signed off. The
    /// reason and the signature it departs from are recorded in the audit chain.
    pub fn set_rating_with_reason(
        &mut self,
        input: &RatingInput<'_>,
        reason: &str,
    ) -> StoreResult<RatingOutcome> {
        if reason.trim().is_empty() {
            return Err(StoreError::Invalid(
                "a change to a signed rating needs a reason".into(),
            ));
        }
        self.change_reason = Some(reason.trim().to_string());
        let out = self.set_rating(input);
        self.change_reason = None;
        out
    }

    /// Values from the screen must lie on the criterion's scale; imported raw values that do not
    /// (kept as-is by the user's choice) carry their `raw_value` and origin and are allowed.
    fn check_scale(&self, input: &RatingInput<'_>) -> StoreResult<()> {
        let Some(value) = input.value else {
            return Ok(());
        };
        let (min, max, key): (i64, i64, String) = self
            .tx
            .prepare_cached("SELECT scale_min, scale_max, key FROM criterion WHERE id = ?1")?
            .query_row([input.criterion_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()?
            .ok_or(StoreError::NotFound {
                what: "criterion",
                key: input.criterion_id.to_string(),
            })?;
        if (min..=max).contains(&value) || input.raw_value.is_some() {
            Ok(())
        } else {
            Err(StoreError::Invalid(format!(
                "{value} is outside the scale {min}–{max} of criterion {key}"
            )))
        }
    }

    /// Record a flag a rater raised on a response.
    pub fn add_flag(&mut self, rater_id: i64, response_id: i64, reason: &str) -> StoreResult<i64> {
        self.tx.execute(
            "INSERT INTO flag(rater_id, response_id, reason, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![rater_id, response_id, reason, self.now],
        )?;
        Ok(self.tx.last_insert_rowid())
    }
}

fn unique_violation(e: rusqlite::Error, message: impl FnOnce() -> String) -> StoreError {
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) {
        StoreError::Invalid(message())
    } else {
        StoreError::Sqlite(e)
    }
}
