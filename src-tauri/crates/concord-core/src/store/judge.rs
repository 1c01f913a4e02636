//! The judge run ledger's tables: `judge_run` (a run's settings, prompt and hashes),
//! `judge_call` (one row per run × response × repetition moving pending → in_flight → done or
//! failed, with the raw output, scores, tokens and failure) and `judge_batch` (provider batches
//! submitted for a run, polled again on resume rather than resubmitted). A call's row also keeps
//! the model its reply says answered and the backend fingerprint, when the reply names them.

use super::{Store, StoreResult, StudyTx};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;

/// A call that failed, with what came back.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CallFailure {
    pub call_id: i64,
    pub response_id: i64,
    pub conversation: String,
    pub source: String,
    pub repetition: i64,
    pub attempts: i64,
    /// `rate_limited`, `server_error`, `timeout`, `missing_score`, `out_of_range`, …
    pub kind: String,
    pub reason: String,
    pub http_status: Option<i64>,
    pub raw_output: Option<String>,
}

/// A run to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewJudgeRun<'a> {
    pub rater_id: i64,
    pub rubric_id: i64,
    pub provider: &'a str,
    pub base_url: &'a str,
    pub model: &'a str,
    pub temperature: f64,
    pub repetitions: u32,
    pub settings_json: &'a str,
    pub settings_sha256: &'a str,
    pub system_prompt: Option<&'a str>,
    pub user_prompt: &'a str,
    pub prompt_sha256: &'a str,
}

/// A run's stored settings and who it rates as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeRunRecord {
    pub settings_json: String,
    pub rater_id: i64,
    pub rubric_id: i64,
}

/// A run with its call counts and tokens, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeRunCounts {
    pub id: i64,
    pub rater: String,
    pub provider: String,
    pub base_url: String,
    pub model: String,
    pub rubric: String,
    pub temperature: f64,
    pub repetitions: i64,
    pub settings_json: String,
    pub settings_sha256: String,
    pub prompt_sha256: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub total: i64,
    pub pending: i64,
    pub in_flight: i64,
    pub done: i64,
    pub failed: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// Failed calls whose reply could not be read as scores.
    pub unreadable: i64,
}

/// A claimed call with the texts it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedCall {
    pub call_id: i64,
    pub response_id: i64,
    pub repetition: i64,
    pub context: String,
    /// Whether the conversation is a transcript (its turns are read with `Store::history`); a
    /// single-turn conversation's history is `context` alone.
    pub transcript: bool,
    /// Empty when the response has no text.
    pub response: String,
    /// The pair a pairwise run's call compares (`response` is then the answer shown first).
    pub pair: Option<ClaimedPair>,
}

/// `SELECT` of the columns [`claimed_call`] reads, from `judge_call j` joined to its response
/// `r`, the response's conversation `c`, its pair `p` and the pair's other answer `s`, followed by
/// the literal rest of the statement (its extra columns, none here, and its `WHERE`); a macro so
/// that each statement stays one literal the layout check can read.
macro_rules! claimed_select {
    ($extra:literal, $rest:literal) => {
        concat!(
            "SELECT j.id, j.response_id, j.repetition, c.context, r.text, j.pair_id,
                j.left_first, s.text, EXISTS (SELECT 1 FROM turn t WHERE t.conversation_id = c.id)",
            $extra,
            " FROM judge_call j JOIN response r ON r.id = j.response_id
                JOIN conversation c ON c.id = r.conversation_id
                LEFT JOIN pair p ON p.id = j.pair_id
                LEFT JOIN response s ON s.id = CASE WHEN j.left_first = 1
                    THEN p.right_response_id ELSE p.left_response_id END ",
            $rest
        )
    };
}

/// A claimed call read from a row whose first columns are those of [`claimed_select!`].
fn claimed_call(r: &rusqlite::Row<'_>) -> rusqlite::Result<ClaimedCall> {
    let pair: Option<i64> = r.get(5)?;
    Ok(ClaimedCall {
        call_id: r.get(0)?,
        response_id: r.get(1)?,
        repetition: r.get(2)?,
        context: r.get(3)?,
        transcript: r.get(8)?,
        response: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
        pair: match pair {
            Some(pair_id) => Some(ClaimedPair {
                pair_id,
                left_first: r.get::<_, Option<i64>>(6)? == Some(1),
                second: r.get::<_, Option<String>>(7)?.unwrap_or_default(),
            }),
            None => None,
        },
    })
}

/// The pair of a claimed pairwise call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedPair {
    pub pair_id: i64,
    /// Whether the pair's left answer is the one shown first.
    pub left_first: bool,
    /// The text of the answer shown second.
    pub second: String,
}

/// One call of a run as the study keeps it: the texts it needs, where it stands and the hash of
/// the prompt recorded when it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCall {
    pub call: ClaimedCall,
    /// `pending`, `in_flight`, `done` or `failed`.
    pub state: String,
    /// SHA-256 of the messages sent (NULL until the call is sent).
    pub prompt_sha256: Option<String>,
}

/// One call of a pairwise run to add.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairCall {
    pub pair_id: i64,
    /// The answer shown first (A).
    pub shown_first: i64,
    pub left_first: bool,
}

/// A call of a run and whether it is done (what a batch file's import checks lines against).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallState {
    pub call_id: i64,
    pub response_id: i64,
    pub repetition: i64,
    pub done: bool,
}

/// A call of a provider batch that still waits for its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchCall {
    pub call_id: i64,
    pub response_id: i64,
    pub repetition: i64,
}

/// One done call's scores (`{criterion id: value}` JSON), as the repetition aggregate and the
/// judge reliability report read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoneCallScores {
    pub run_id: i64,
    pub rater_id: i64,
    pub response_id: i64,
    pub repetition: i64,
    pub scores_json: String,
    /// The criterion ids in the order the prompt listed them (JSON array), when shuffled.
    pub criteria_order: Option<String>,
    /// `{criterion id: expected score}` from token log-probabilities, when returned.
    pub expected_json: Option<String>,
}

fn done_call_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DoneCallScores> {
    Ok(DoneCallScores {
        run_id: r.get(0)?,
        rater_id: r.get(1)?,
        response_id: r.get(2)?,
        repetition: r.get(3)?,
        scores_json: r.get(4)?,
        criteria_order: r.get(5)?,
        expected_json: r.get(6)?,
    })
}

/// What a done call records beside its scores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallDetails<'a> {
    /// The criterion ids in the order the prompt listed them (JSON array), when shuffled.
    pub criteria_order: Option<&'a str>,
    /// `{criterion id: expected score}` from token log-probabilities, when returned.
    pub expected_json: Option<&'a str>,
}

/// What came back for a call that was sent.
#[derive(Debug, Clone, PartialEq)]
pub struct CallReply<'a> {
    pub attempts: u32,
    pub prompt_sha256: Option<&'a str>,
    pub raw_output: Option<&'a str>,
    pub http_status: Option<u16>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    /// The model the reply says answered, when it names one.
    pub answering_model: Option<&'a str>,
    /// The backend fingerprint the reply gives, when it gives one.
    pub system_fingerprint: Option<&'a str>,
}

const STATUS_SQL: &str = "SELECT r.id, t.name, r.provider, r.base_url, r.model, u.key,
        r.temperature, r.repetitions, r.settings_json, r.settings_sha256, r.prompt_sha256,
        r.created_at, r.updated_at,
        (SELECT COUNT(*) FROM judge_call j WHERE j.run_id = r.id),
        (SELECT COUNT(*) FROM judge_call j WHERE j.run_id = r.id AND j.state = 'pending'),
        (SELECT COUNT(*) FROM judge_call j WHERE j.run_id = r.id AND j.state = 'in_flight'),
        (SELECT COUNT(*) FROM judge_call j WHERE j.run_id = r.id AND j.state = 'done'),
        (SELECT COUNT(*) FROM judge_call j WHERE j.run_id = r.id AND j.state = 'failed'),
        (SELECT COALESCE(SUM(input_tokens), 0) FROM judge_call j WHERE j.run_id = r.id),
        (SELECT COALESCE(SUM(output_tokens), 0) FROM judge_call j WHERE j.run_id = r.id),
        (SELECT COUNT(*) FROM judge_call j WHERE j.run_id = r.id AND j.state = 'failed'
            AND j.failure_kind IN ('empty_reply', 'unreadable_reply', 'missing_score',
                                   'out_of_range', 'not_a_score'))
    FROM judge_run r JOIN rater t ON t.id = r.rater_id JOIN rubric u ON u.id = r.rubric_id";

fn counts_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<JudgeRunCounts> {
    Ok(JudgeRunCounts {
        id: row.get(0)?,
        rater: row.get(1)?,
        provider: row.get(2)?,
        base_url: row.get(3)?,
        model: row.get(4)?,
        rubric: row.get(5)?,
        temperature: row.get(6)?,
        repetitions: row.get(7)?,
        settings_json: row.get(8)?,
        settings_sha256: row.get(9)?,
        prompt_sha256: row.get(10)?,
        created_at: row.get(11)?,
        updated_at: row.get(12)?,
        total: row.get(13)?,
        pending: row.get(14)?,
        in_flight: row.get(15)?,
        done: row.get(16)?,
        failed: row.get(17)?,
        input_tokens: row.get(18)?,
        output_tokens: row.get(19)?,
        unreadable: row.get(20)?,
    })
}

/// How many answered calls (done or failed) of a run name one model and backend fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnsweringModel {
    /// The `model` the replies name (`None` when they name only a fingerprint).
    pub model: Option<String>,
    /// The `system_fingerprint` the replies give, when they give one.
    pub system_fingerprint: Option<String>,
    pub calls: i64,
}

/// A provider batch submitted and not yet collected: its row and the provider's id for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenBatch {
    pub id: i64,
    pub provider_id: String,
}

impl Store {
    /// The run created with these identity settings, if any.
    pub fn judge_run_by_settings(&self, settings_sha256: &str) -> StoreResult<Option<i64>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id FROM judge_run WHERE settings_sha256 = ?1",
                [settings_sha256],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// A run's stored settings and rater.
    pub fn judge_run(&self, run_id: i64) -> StoreResult<Option<JudgeRunRecord>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT settings_json, rater_id, rubric_id FROM judge_run WHERE id = ?1",
                [run_id],
                |r| {
                    Ok(JudgeRunRecord {
                        settings_json: r.get(0)?,
                        rater_id: r.get(1)?,
                        rubric_id: r.get(2)?,
                    })
                },
            )
            .optional()?)
    }

    /// Every run with its counts, oldest first.
    pub fn judge_run_counts(&self) -> StoreResult<Vec<JudgeRunCounts>> {
        let mut stmt = self
            .conn()
            .prepare(&format!("{STATUS_SQL} ORDER BY r.id"))?;
        let rows = stmt.query_map([], counts_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One run with its counts.
    pub fn judge_run_counts_of(&self, run_id: i64) -> StoreResult<Option<JudgeRunCounts>> {
        Ok(self
            .conn()
            .query_row(
                &format!("{STATUS_SQL} WHERE r.id = ?1"),
                [run_id],
                counts_row,
            )
            .optional()?)
    }

    /// The models (and fingerprints) the answered calls of a run name, each with its number of
    /// calls, in the order they first answered (by call id); calls whose reply named neither
    /// are not counted.
    pub fn answering_models(&self, run_id: i64) -> StoreResult<Vec<AnsweringModel>> {
        let mut stmt = self.conn().prepare(
            "SELECT answering_model, system_fingerprint, COUNT(*) FROM judge_call
             WHERE run_id = ?1 AND state IN ('done', 'failed')
               AND (answering_model IS NOT NULL OR system_fingerprint IS NOT NULL)
             GROUP BY answering_model, system_fingerprint ORDER BY MIN(id)",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            Ok(AnsweringModel {
                model: r.get(0)?,
                system_fingerprint: r.get(1)?,
                calls: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The failed calls of a run with their reasons and raw outputs.
    pub fn failed_calls(&self, run_id: i64) -> StoreResult<Vec<CallFailure>> {
        let mut stmt = self.conn().prepare(
            "SELECT j.id, j.response_id, c.external_id, s.key, j.repetition, j.attempts,
                    COALESCE(j.failure_kind, ''), COALESCE(j.failure, ''), j.http_status, j.raw_output
             FROM judge_call j JOIN response r ON r.id = j.response_id
             JOIN conversation c ON c.id = r.conversation_id JOIN source s ON s.id = r.source_id
             WHERE j.run_id = ?1 AND j.state = 'failed' ORDER BY j.id",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            Ok(CallFailure {
                call_id: r.get(0)?,
                response_id: r.get(1)?,
                conversation: r.get(2)?,
                source: r.get(3)?,
                repetition: r.get(4)?,
                attempts: r.get(5)?,
                kind: r.get(6)?,
                reason: r.get(7)?,
                http_status: r.get(8)?,
                raw_output: r.get(9)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Visit the done calls of the runs on `rubric_id` that asked at least `min_repetitions`
    /// times (only those of `response_id` when given), by run, response and repetition; the
    /// calls of a pairwise run (which compare two answers) are not among them.
    pub fn for_each_done_call(
        &self,
        rubric_id: i64,
        min_repetitions: i64,
        response_id: Option<i64>,
        mut f: impl FnMut(DoneCallScores),
    ) -> StoreResult<()> {
        const SELECT: &str = "SELECT r.id, r.rater_id, j.response_id, j.repetition, j.scores_json,
                    j.criteria_order, j.expected_json
             FROM judge_run r JOIN judge_call j ON j.run_id = r.id
             WHERE r.rubric_id = ?1 AND r.repetitions >= ?2 AND j.state = 'done'
               AND j.scores_json IS NOT NULL AND j.pair_id IS NULL";
        match response_id {
            Some(id) => {
                let mut stmt = self.conn().prepare_cached(&format!(
                    "{SELECT} AND j.response_id = ?3 ORDER BY r.id, j.repetition"
                ))?;
                let rows =
                    stmt.query_map(params![rubric_id, min_repetitions, id], done_call_row)?;
                for row in rows {
                    f(row?);
                }
            }
            None => {
                let mut stmt = self.conn().prepare(&format!(
                    "{SELECT} ORDER BY r.id, j.response_id, j.repetition"
                ))?;
                let rows = stmt.query_map(params![rubric_id, min_repetitions], done_call_row)?;
                for row in rows {
                    f(row?);
                }
            }
        }
        Ok(())
    }

    /// Every call of a run with whether it is done, in id order.
    pub fn judge_call_states(&self, run_id: i64) -> StoreResult<Vec<CallState>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, response_id, repetition, state = 'done' FROM judge_call
             WHERE run_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            Ok(CallState {
                call_id: r.get(0)?,
                response_id: r.get(1)?,
                repetition: r.get(2)?,
                done: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Up to `limit` calls of a run that are not done (pending or failed), with the texts they
    /// need, after call `after` in id order: a page of a batch file's export (nothing is marked).
    pub fn open_calls_after(
        &self,
        run_id: i64,
        after: i64,
        limit: usize,
    ) -> StoreResult<Vec<ClaimedCall>> {
        let mut stmt = self.conn().prepare_cached(claimed_select!(
            "",
            "WHERE j.run_id = ?1 AND j.state IN ('pending', 'failed') AND j.id > ?2
             ORDER BY j.id LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![run_id, after, limit as i64], claimed_call)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Call `call_id` of run `run_id` with its texts, state and recorded prompt hash (`None` when
    /// the run has no such call).
    pub fn judge_call(&self, run_id: i64, call_id: i64) -> StoreResult<Option<StoredCall>> {
        Ok(self
            .conn()
            .prepare_cached(claimed_select!(
                ", j.state, j.prompt_sha256",
                "WHERE j.run_id = ?1 AND j.id = ?2"
            ))?
            .query_row(params![run_id, call_id], |r| {
                Ok(StoredCall {
                    call: claimed_call(r)?,
                    state: r.get(9)?,
                    prompt_sha256: r.get(10)?,
                })
            })
            .optional()?)
    }

    /// The call of run `run_id` that judges response `response_id` in repetition `repetition`
    /// (a run that rates one answer at a time has one).
    pub fn judge_call_of(
        &self,
        run_id: i64,
        response_id: i64,
        repetition: i64,
    ) -> StoreResult<Option<i64>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id FROM judge_call WHERE run_id = ?1 AND response_id = ?2
                 AND repetition = ?3 AND pair_id IS NULL ORDER BY id LIMIT 1",
                params![run_id, response_id, repetition],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Provider batches of a run that were submitted and not yet collected.
    pub fn open_judge_batches(&self, run_id: i64) -> StoreResult<Vec<OpenBatch>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, provider_id FROM judge_batch WHERE run_id = ?1 AND state = 'submitted' ORDER BY id",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            Ok(OpenBatch {
                id: r.get(0)?,
                provider_id: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The calls of one provider batch that still wait for their result.
    pub fn judge_batch_calls(&self, run_id: i64, provider_id: &str) -> StoreResult<Vec<BatchCall>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, response_id, repetition FROM judge_call
             WHERE run_id = ?1 AND batch_id = ?2 AND state = 'in_flight' ORDER BY id",
        )?;
        let rows = stmt.query_map(params![run_id, provider_id], |r| {
            Ok(BatchCall {
                call_id: r.get(0)?,
                response_id: r.get(1)?,
                repetition: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl StudyTx<'_> {
    /// Create a run with a pending call per (response, repetition).
    pub fn add_judge_run(&mut self, run: &NewJudgeRun<'_>, responses: &[i64]) -> StoreResult<i64> {
        self.conn().execute(
            "INSERT INTO judge_run(rater_id, rubric_id, provider, base_url, model, temperature,
                 repetitions, settings_json, settings_sha256, system_prompt, user_prompt,
                 prompt_sha256, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13)",
            params![
                run.rater_id,
                run.rubric_id,
                run.provider,
                run.base_url,
                run.model,
                run.temperature,
                run.repetitions,
                run.settings_json,
                run.settings_sha256,
                run.system_prompt,
                run.user_prompt,
                run.prompt_sha256,
                self.now
            ],
        )?;
        let run_id = self.conn().last_insert_rowid();
        let mut insert = self.conn().prepare_cached(
            "INSERT INTO judge_call(run_id, response_id, repetition, updated_at)
             VALUES (?1, ?2, ?3, ?4)",
        )?;
        for id in responses {
            for rep in 1..=run.repetitions {
                insert.execute(params![run_id, id, rep, self.now])?;
            }
        }
        Ok(run_id)
    }

    /// Add the calls of a pairwise run: one per (pair, side shown first), `response_id` the
    /// answer shown first.
    pub fn add_pair_calls(&mut self, run_id: i64, calls: &[PairCall]) -> StoreResult<()> {
        let mut insert = self.conn().prepare_cached(
            "INSERT INTO judge_call(run_id, response_id, repetition, pair_id, left_first,
                 updated_at) VALUES (?1, ?2, 1, ?3, ?4, ?5)",
        )?;
        for c in calls {
            insert.execute(params![
                run_id,
                c.shown_first,
                c.pair_id,
                c.left_first as i64,
                self.now
            ])?;
        }
        Ok(())
    }

    /// Claim up to `limit` pending calls: mark them in flight and return them with their texts
    /// (a pair's call with the answer shown second beside the one shown first).
    pub fn claim_calls(&mut self, run_id: i64, limit: usize) -> StoreResult<Vec<ClaimedCall>> {
        let calls: Vec<ClaimedCall> = {
            let mut stmt = self.conn().prepare_cached(claimed_select!(
                "",
                "WHERE j.run_id = ?1 AND j.state = 'pending' ORDER BY j.id LIMIT ?2"
            ))?;
            let rows = stmt.query_map(params![run_id, limit as i64], claimed_call)?;
            rows.collect::<Result<_, _>>()?
        };
        let mut mark = self.conn().prepare_cached(
            "UPDATE judge_call SET state = 'in_flight', updated_at = ?2 WHERE id = ?1",
        )?;
        for c in &calls {
            mark.execute(params![c.call_id, self.now])?;
        }
        Ok(calls)
    }

    /// A call that was not sent or not finished goes back to pending.
    pub fn release_call(&mut self, call_id: i64, attempts: u32) -> StoreResult<()> {
        self.conn()
            .prepare_cached(
                "UPDATE judge_call SET state = 'pending', batch_id = NULL,
                     attempts = attempts + ?2, updated_at = ?3
                 WHERE id = ?1 AND state = 'in_flight'",
            )?
            .execute(params![call_id, attempts, self.now])?;
        Ok(())
    }

    /// A call failed: keep its reason and what came back.
    pub fn fail_call(
        &mut self,
        call_id: i64,
        reply: &CallReply<'_>,
        kind: &str,
        reason: &str,
    ) -> StoreResult<()> {
        self.conn()
            .prepare_cached(
                "UPDATE judge_call SET state = 'failed', batch_id = NULL,
                     attempts = attempts + ?2, prompt_sha256 = COALESCE(?3, prompt_sha256), raw_output = ?4,
                     scores_json = NULL, explanation = NULL, failure_kind = ?5,
                     failure = ?6, http_status = ?7, input_tokens = ?8,
                     output_tokens = ?9, updated_at = ?10, answering_model = ?11,
                     system_fingerprint = ?12
                 WHERE id = ?1",
            )?
            .execute(params![
                call_id,
                reply.attempts,
                reply.prompt_sha256,
                reply.raw_output,
                kind,
                reason,
                reply.http_status,
                reply.input_tokens,
                reply.output_tokens,
                self.now,
                reply.answering_model,
                reply.system_fingerprint
            ])?;
        Ok(())
    }

    /// A call succeeded: keep its scores (`{criterion: value}` JSON) and explanation.
    pub fn complete_call(
        &mut self,
        call_id: i64,
        reply: &CallReply<'_>,
        scores_json: &str,
        explanation: Option<&str>,
        details: &CallDetails<'_>,
    ) -> StoreResult<()> {
        self.conn()
            .prepare_cached(
                "UPDATE judge_call SET state = 'done', batch_id = NULL,
                     attempts = attempts + ?2, prompt_sha256 = COALESCE(?3, prompt_sha256), raw_output = ?4,
                     scores_json = ?5, explanation = ?6, failure_kind = NULL,
                     failure = NULL, http_status = ?7, input_tokens = ?8,
                     output_tokens = ?9, updated_at = ?10, criteria_order = ?11,
                     expected_json = ?12, answering_model = ?13, system_fingerprint = ?14
                 WHERE id = ?1",
            )?
            .execute(params![
                call_id,
                reply.attempts,
                reply.prompt_sha256,
                reply.raw_output,
                scores_json,
                explanation,
                reply.http_status,
                reply.input_tokens,
                reply.output_tokens,
                self.now,
                details.criteria_order,
                details.expected_json,
                reply.answering_model,
                reply.system_fingerprint
            ])?;
        Ok(())
    }

    /// The lowest repetition of a response that is done in a run (the one that becomes its
    /// rating).
    pub fn first_done_repetition(&self, run_id: i64, response_id: i64) -> StoreResult<Option<i64>> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT MIN(repetition) FROM judge_call
                 WHERE run_id = ?1 AND response_id = ?2 AND state = 'done'",
            )?
            .query_row(params![run_id, response_id], |row| row.get(0))?)
    }

    /// Stamp a run as changed now.
    pub fn touch_judge_run(&mut self, run_id: i64) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE judge_run SET updated_at = ?2 WHERE id = ?1",
            params![run_id, self.now],
        )?;
        Ok(())
    }

    /// Put calls left in flight outside a provider batch back to pending (and the failed ones
    /// too when asked); returns how many were reset.
    pub fn reset_calls(&mut self, run_id: i64, retry_failed: bool) -> StoreResult<u64> {
        let mut n = self.conn().execute(
            "UPDATE judge_call SET state = 'pending', updated_at = ?2
             WHERE run_id = ?1 AND state = 'in_flight' AND batch_id IS NULL",
            params![run_id, self.now],
        )?;
        if retry_failed {
            n += self.conn().execute(
                "UPDATE judge_call SET state = 'pending', updated_at = ?2
                 WHERE run_id = ?1 AND state = 'failed'",
                params![run_id, self.now],
            )?;
        }
        Ok(n as u64)
    }

    /// Record a submitted provider batch and tie its calls (id, prompt hash) to it.
    pub fn add_judge_batch(
        &mut self,
        run_id: i64,
        provider_id: &str,
        calls: &[(i64, String)],
    ) -> StoreResult<()> {
        self.conn().execute(
            "INSERT INTO judge_batch(run_id, provider_id, state, calls, created_at, updated_at)
             VALUES (?1, ?2, 'submitted', ?3, ?4, ?4)",
            params![run_id, provider_id, calls.len() as i64, self.now],
        )?;
        let mut stmt = self.conn().prepare_cached(
            "UPDATE judge_call SET batch_id = ?2, attempts = attempts + 1, prompt_sha256 = ?4,
                 updated_at = ?3 WHERE id = ?1",
        )?;
        for (id, sha) in calls {
            stmt.execute(params![id, provider_id, self.now, sha])?;
        }
        Ok(())
    }

    /// Mark a provider batch collected.
    pub fn close_judge_batch(&mut self, batch_row: i64) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE judge_batch SET state = 'collected', updated_at = ?2 WHERE id = ?1",
            params![batch_row, self.now],
        )?;
        Ok(())
    }
}
