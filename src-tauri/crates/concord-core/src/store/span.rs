//! The `span` table: parts of a rated reply's text a rater marked with one of the rubric's codes,
//! `[start, end)` in Unicode scalar values, or a judge's quote that could not be located (offsets
//! NULL, the quote kept). Rows are sealed by the audit chain like ratings; the callers record what
//! each change was (an import, a judge's reply, a mark on the rating screen).

use super::{Store, StoreResult, StudyTx};
use rusqlite::{params, Connection, OptionalExtension};

/// How a span came into the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanOrigin {
    /// `concord import spans`.
    Import,
    /// A judge's reply.
    Judge,
    /// Marked on the rating screen of the desktop window.
    Screen,
    /// Marked from a browser.
    Web,
    /// Written in a fill-in rating sheet.
    Sheet,
    /// Marked in a rater package and brought back by its merge.
    Package,
}

impl SpanOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            SpanOrigin::Import => "import",
            SpanOrigin::Judge => "judge",
            SpanOrigin::Screen => "screen",
            SpanOrigin::Web => "web",
            SpanOrigin::Sheet => "sheet",
            SpanOrigin::Package => "package",
        }
    }
}

/// A span to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSpan {
    pub response_id: i64,
    pub rater_id: i64,
    /// The code's key as the rubric declares it.
    pub code: String,
    /// `[start, end)` in characters; `None` for an unlocated quote.
    pub range: Option<(i64, i64)>,
    pub severity: Option<String>,
    /// The words quoted (a judge's quote; required when `range` is `None`).
    pub quote: Option<String>,
    pub origin: SpanOrigin,
    /// The judge call whose reply gave the span.
    pub call_id: Option<i64>,
}

/// A stored span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanRecord {
    pub id: i64,
    pub response_id: i64,
    pub rater_id: i64,
    pub code: String,
    pub range: Option<(i64, i64)>,
    pub severity: Option<String>,
    pub quote: Option<String>,
    pub origin: String,
    pub call_id: Option<i64>,
}

/// A located span copied as it stands, with the origin it was recorded with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopiedSpan<'a> {
    pub response_id: i64,
    pub rater_id: i64,
    pub code: &'a str,
    pub range: (i64, i64),
    pub severity: Option<&'a str>,
    pub origin: &'a str,
}

/// A stored span with what names its item and rater in a file, and the reply's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanListed {
    pub span: SpanRecord,
    /// The conversation's external id.
    pub conversation: String,
    /// The reply's turn (`None`: an earlier release's single-turn answer, at turn 2).
    pub turn: Option<i64>,
    /// The reply's source key.
    pub source: String,
    pub rater: String,
    pub rater_kind: String,
    pub rubric: String,
    /// The reply's text.
    pub text: String,
}

/// A rated item of a rubric with what names it in a file and its text (`None`: a session item).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextItem {
    pub response_id: i64,
    pub conversation: String,
    /// `None`: an earlier release's single-turn answer (turn 2) or a session item.
    pub turn: Option<i64>,
    pub source: String,
    pub text: Option<String>,
}

const SPAN_COLUMNS: &str =
    "s.id, s.response_id, s.rater_id, s.code, s.char_start, s.char_end, s.severity, s.quote, s.origin, s.call_id";

fn span_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<SpanRecord> {
    let start: Option<i64> = r.get(4)?;
    let end: Option<i64> = r.get(5)?;
    Ok(SpanRecord {
        id: r.get(0)?,
        response_id: r.get(1)?,
        rater_id: r.get(2)?,
        code: r.get(3)?,
        range: start.zip(end),
        severity: r.get(6)?,
        quote: r.get(7)?,
        origin: r.get(8)?,
        call_id: r.get(9)?,
    })
}

fn insert(c: &Connection, span: &NewSpan) -> StoreResult<i64> {
    c.prepare_cached(
        "INSERT INTO span(response_id, rater_id, code, char_start, char_end, severity, quote,
             origin, call_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        span.response_id,
        span.rater_id,
        span.code,
        span.range.map(|r| r.0),
        span.range.map(|r| r.1),
        span.severity,
        span.quote,
        span.origin.as_str(),
        span.call_id,
    ])?;
    Ok(c.last_insert_rowid())
}

fn listed(
    c: &Connection,
    filter: &str,
    args: &[&dyn rusqlite::ToSql],
) -> StoreResult<Vec<SpanListed>> {
    let sql = format!(
        "SELECT {SPAN_COLUMNS}, c.external_id, p.turn, so.key, r.name, r.kind, b.key,
                COALESCE(p.text, '')
         FROM span s JOIN response p ON p.id = s.response_id
         JOIN conversation c ON c.id = p.conversation_id JOIN source so ON so.id = p.source_id
         JOIN rater r ON r.id = s.rater_id JOIN rubric b ON b.id = c.rubric_id
         {filter}
         ORDER BY c.external_id, IFNULL(p.turn, 2), so.key, r.name, s.char_start IS NULL,
                  s.char_start, s.char_end, s.code, s.id"
    );
    let mut stmt = c.prepare(&sql)?;
    let rows = stmt.query_map(args, |r| {
        Ok(SpanListed {
            span: span_record(r)?,
            conversation: r.get(10)?,
            turn: r.get(11)?,
            source: r.get(12)?,
            rater: r.get(13)?,
            rater_kind: r.get(14)?,
            rubric: r.get(15)?,
            text: r.get(16)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn spans_of_response(c: &Connection, response_id: i64) -> StoreResult<Vec<SpanRecord>> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {SPAN_COLUMNS} FROM span s WHERE s.response_id = ?1
         ORDER BY s.rater_id, s.char_start IS NULL, s.char_start, s.char_end, s.id"
    ))?;
    let rows = stmt.query_map([response_id], span_record)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn spans_of_rater(c: &Connection, rater_id: i64) -> StoreResult<Vec<SpanRecord>> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {SPAN_COLUMNS} FROM span s WHERE s.rater_id = ?1
         ORDER BY s.response_id, s.char_start IS NULL, s.char_start, s.char_end, s.code, s.id"
    ))?;
    let rows = stmt.query_map([rater_id], span_record)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn text_items(c: &Connection, rubric_id: i64) -> StoreResult<Vec<TextItem>> {
    let mut stmt = c.prepare(
        "SELECT p.id, c.external_id, p.turn, s.key, p.text FROM response p
         JOIN conversation c ON c.id = p.conversation_id JOIN source s ON s.id = p.source_id
         WHERE c.rubric_id = ?1 ORDER BY c.external_id, IFNULL(p.turn, 2), s.key, p.id",
    )?;
    let rows = stmt.query_map([rubric_id], |r| {
        Ok(TextItem {
            response_id: r.get(0)?,
            conversation: r.get(1)?,
            turn: r.get(2)?,
            source: r.get(3)?,
            text: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl Store {
    /// The items of rubric `rubric_id` with their texts, in the order of conversation id, turn
    /// and source (the order spans are laid end to end in for agreement).
    pub fn text_items(&self, rubric_id: i64) -> StoreResult<Vec<TextItem>> {
        text_items(self.conn(), rubric_id)
    }

    /// Response ids assigned to each rater with any assignment (regular, calibration or retest).
    pub fn assigned_responses(&self) -> StoreResult<Vec<(i64, i64)>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT DISTINCT rater_id, response_id FROM assignment ORDER BY 1, 2")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Whether any span is stored.
    pub fn has_spans(&self) -> StoreResult<bool> {
        Ok(self
            .conn()
            .query_row("SELECT 1 FROM span LIMIT 1", [], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Every span, by conversation id, turn, source, rater and position (unlocated last).
    pub fn spans_listed(&self) -> StoreResult<Vec<SpanListed>> {
        listed(self.conn(), "", &[])
    }

    /// The spans on the items of rubric `rubric_id`, in the same order.
    pub fn spans_of_rubric(&self, rubric_id: i64) -> StoreResult<Vec<SpanListed>> {
        listed(self.conn(), "WHERE c.rubric_id = ?1", &[&rubric_id])
    }

    /// The spans of one reply, every rater's, in order.
    pub fn spans_of_response(&self, response_id: i64) -> StoreResult<Vec<SpanRecord>> {
        spans_of_response(self.conn(), response_id)
    }

    /// The spans of one reply, every rater's, with what names the reply and the rater (the
    /// agreement panel's view of one reply).
    pub fn spans_of_reply(&self, response_id: i64) -> StoreResult<Vec<SpanListed>> {
        listed(self.conn(), "WHERE s.response_id = ?1", &[&response_id])
    }

    /// Every span of rater `rater_id`, by reply and position (unlocated last).
    pub fn spans_of_rater(&self, rater_id: i64) -> StoreResult<Vec<SpanRecord>> {
        spans_of_rater(self.conn(), rater_id)
    }

    /// The unlocated quotes of a judge run's calls, with what names their items.
    pub fn unlocated_spans_of_run(&self, run_id: i64) -> StoreResult<Vec<SpanListed>> {
        listed(
            self.conn(),
            "WHERE s.char_start IS NULL AND s.call_id IN (SELECT id FROM judge_call WHERE run_id = ?1)",
            &[&run_id],
        )
    }

    /// Each (rater, response) of rubric `rubric_id` where the rater gave a rating on some
    /// criterion: the replies a rater is known to have read.
    pub fn rated_items_of_rubric(&self, rubric_id: i64) -> StoreResult<Vec<(i64, i64)>> {
        let mut stmt = self.conn().prepare(
            "SELECT DISTINCT g.rater_id, g.response_id FROM rating g
             JOIN criterion k ON k.id = g.criterion_id WHERE k.rubric_id = ?1
             ORDER BY g.rater_id, g.response_id",
        )?;
        let rows = stmt.query_map([rubric_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl StudyTx<'_> {
    /// The items of rubric `rubric_id` with their texts (as [`Store::text_items`]).
    pub fn text_items(&self, rubric_id: i64) -> StoreResult<Vec<TextItem>> {
        text_items(self.conn(), rubric_id)
    }

    /// The spans of one reply, every rater's, in order (as [`Store::spans_of_response`]).
    pub fn spans_on(&self, response_id: i64) -> StoreResult<Vec<SpanRecord>> {
        spans_of_response(self.conn(), response_id)
    }

    /// The text of a reply (`None` for a session item or an answer without text).
    pub fn reply_text(&self, response_id: i64) -> StoreResult<Option<String>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT text FROM response WHERE id = ?1",
                [response_id],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()?
            .flatten())
    }

    /// Every span of rater `rater_id` (as [`Store::spans_of_rater`]).
    pub fn spans_of_rater(&self, rater_id: i64) -> StoreResult<Vec<SpanRecord>> {
        spans_of_rater(self.conn(), rater_id)
    }

    /// Store a copy of a located span with the origin it was recorded with (a package issued or
    /// merged carries the expert's spans as they stand); returns its id.
    pub fn copy_span(&mut self, span: &CopiedSpan<'_>) -> StoreResult<i64> {
        self.conn()
            .prepare_cached(
                "INSERT INTO span(response_id, rater_id, code, char_start, char_end, severity,
                     origin) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                span.response_id,
                span.rater_id,
                span.code,
                span.range.0,
                span.range.1,
                span.severity,
                span.origin,
            ])?;
        Ok(self.conn().last_insert_rowid())
    }

    /// Change the severity of a span (its code and bounds stay).
    pub fn set_span_severity(&mut self, id: i64, severity: Option<&str>) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE span SET severity = ?2 WHERE id = ?1",
            params![id, severity],
        )?;
        Ok(())
    }

    /// Store a span; returns its id.
    pub fn add_span(&mut self, span: &NewSpan) -> StoreResult<i64> {
        insert(self.conn(), span)
    }

    /// A stored span, if it exists.
    pub fn span(&self, id: i64) -> StoreResult<Option<SpanRecord>> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {SPAN_COLUMNS} FROM span s WHERE s.id = ?1"),
                [id],
                span_record,
            )
            .optional()?)
    }

    /// Change a span's code, bounds or severity.
    pub fn update_span(
        &mut self,
        id: i64,
        code: &str,
        range: (i64, i64),
        severity: Option<&str>,
    ) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE span SET code = ?2, char_start = ?3, char_end = ?4, severity = ?5 WHERE id = ?1",
            params![id, code, range.0, range.1, severity],
        )?;
        Ok(())
    }

    /// Remove a span.
    pub fn remove_span(&mut self, id: i64) -> StoreResult<()> {
        self.conn()
            .execute("DELETE FROM span WHERE id = ?1", [id])?;
        Ok(())
    }

    /// Replace what rater `rater_id` marked on reply `response_id` with `spans` (a judge's newest
    /// reply stands for the judge); returns how many were removed.
    pub fn replace_spans_of(
        &mut self,
        rater_id: i64,
        response_id: i64,
        spans: &[NewSpan],
    ) -> StoreResult<usize> {
        let removed = self.conn().execute(
            "DELETE FROM span WHERE rater_id = ?1 AND response_id = ?2",
            [rater_id, response_id],
        )?;
        for span in spans {
            insert(self.conn(), span)?;
        }
        Ok(removed)
    }
}
