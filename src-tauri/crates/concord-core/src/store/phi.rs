//! The PHI guard's tables: the lead's term list, findings with their review status, and the texts
//! waiting to be scanned (marked by triggers whenever a context, response or turn text is
//! written).

use super::{Store, StoreResult, StudyTx};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// An identifier class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum PhiKind {
    Email,
    Url,
    IpAddress,
    Ssn,
    Phone,
    Date,
    Zip,
    Age,
    RecordId,
    Name,
    Place,
}

impl PhiKind {
    /// Every class, in the order that breaks ties between equal spans.
    pub const ALL: [PhiKind; 11] = [
        PhiKind::Email,
        PhiKind::Url,
        PhiKind::IpAddress,
        PhiKind::Ssn,
        PhiKind::Phone,
        PhiKind::Date,
        PhiKind::Zip,
        PhiKind::Age,
        PhiKind::RecordId,
        PhiKind::Name,
        PhiKind::Place,
    ];

    pub(crate) fn priority(self) -> usize {
        self as usize
    }

    /// The name used in JSON, on the command line and in the study.
    pub fn as_str(self) -> &'static str {
        match self {
            PhiKind::Email => "email",
            PhiKind::Url => "url",
            PhiKind::IpAddress => "ip_address",
            PhiKind::Ssn => "ssn",
            PhiKind::Phone => "phone",
            PhiKind::Date => "date",
            PhiKind::Zip => "zip",
            PhiKind::Age => "age",
            PhiKind::RecordId => "record_id",
            PhiKind::Name => "name",
            PhiKind::Place => "place",
        }
    }

    pub fn parse(s: &str) -> Option<PhiKind> {
        PhiKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The typed placeholder a redacted identifier of this class becomes.
    pub fn placeholder(self) -> &'static str {
        match self {
            PhiKind::Email => "[EMAIL]",
            PhiKind::Url => "[URL]",
            PhiKind::IpAddress => "[IP]",
            PhiKind::Ssn => "[SSN]",
            PhiKind::Phone => "[PHONE]",
            PhiKind::Date => "[DATE]",
            PhiKind::Zip => "[ZIP]",
            PhiKind::Age => "[AGE]",
            PhiKind::RecordId => "[ID]",
            PhiKind::Name => "[NAME]",
            PhiKind::Place => "[PLACE]",
        }
    }
}

impl std::fmt::Display for PhiKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One identifier found in a text: its class and character span `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PhiSpan {
    pub kind: PhiKind,
    pub start: usize,
    pub end: usize,
}

/// One entry of the lead's list: a name or a place to find wherever it occurs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhiTerm {
    pub kind: PhiKind,
    pub text: String,
}

/// Which text of an item a finding is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum PhiField {
    /// The conversation's user message.
    Context,
    /// A response's text.
    Text,
    /// A turn of a transcript that is not itself rated.
    Turn,
}

impl PhiField {
    pub fn as_str(self) -> &'static str {
        match self {
            PhiField::Context => "context",
            PhiField::Text => "text",
            PhiField::Turn => "turn",
        }
    }
}

/// Which text of the study: a conversation's context (neither id), a response's text, or a
/// turn's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PhiTextId {
    pub conversation_id: i64,
    pub response_id: Option<i64>,
    pub turn_id: Option<i64>,
}

impl PhiTextId {
    pub fn field(&self) -> PhiField {
        match (self.response_id, self.turn_id) {
            (Some(_), _) => PhiField::Text,
            (None, Some(_)) => PhiField::Turn,
            (None, None) => PhiField::Context,
        }
    }
}

/// One text of the study, named as findings name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhiText {
    pub conversation_id: i64,
    /// `None` for the conversation's context and for a turn.
    pub response_id: Option<i64>,
    /// The turn, for a transcript's turn that is not itself rated.
    pub turn_id: Option<i64>,
    /// The conversation's external id (context), the response's external id, else
    /// `<conversation>/<source key>` (and `/turn N` for a transcript's reply), or
    /// `<conversation>/turn N` for a turn.
    pub item: String,
    pub text: String,
}

impl PhiText {
    pub fn id(&self) -> PhiTextId {
        PhiTextId {
            conversation_id: self.conversation_id,
            response_id: self.response_id,
            turn_id: self.turn_id,
        }
    }

    pub fn field(&self) -> PhiField {
        self.id().field()
    }
}

/// Review status of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum PhiStatus {
    Open,
    Kept,
    Redacted,
}

impl PhiStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PhiStatus::Open => "open",
            PhiStatus::Kept => "kept",
            PhiStatus::Redacted => "redacted",
        }
    }
    fn parse(s: &str) -> PhiStatus {
        match s {
            "kept" => PhiStatus::Kept,
            "redacted" => PhiStatus::Redacted,
            _ => PhiStatus::Open,
        }
    }
}

/// A stored finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PhiFinding {
    pub id: i64,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub kind: PhiKind,
    pub item: String,
    pub field: PhiField,
    /// Character offsets into the text as it was when the finding was made.
    pub start: usize,
    pub end: usize,
    pub status: PhiStatus,
    /// The matched text; gone once redacted.
    pub excerpt: Option<String>,
    pub reason: Option<String>,
    pub resolved_by: Option<String>,
    #[serde(skip)]
    pub conversation_id: i64,
    #[serde(skip)]
    pub response_id: Option<i64>,
    #[serde(skip)]
    pub turn_id: Option<i64>,
}

impl PhiFinding {
    /// The text the finding is in.
    pub fn text_id(&self) -> PhiTextId {
        PhiTextId {
            conversation_id: self.conversation_id,
            response_id: self.response_id,
            turn_id: self.turn_id,
        }
    }
}

const TEXTS: &str = "SELECT c.id, NULL, c.external_id, c.context, NULL FROM conversation c";
/// A response's name: its external id, else its conversation and source (and turn, for a
/// transcript's reply).
const RESPONSE_NAME: &str = "COALESCE(p.external_id, c.external_id || '/' || s.key
        || CASE WHEN p.turn IS NULL THEN '' ELSE '/turn ' || p.turn END)";
const TURN_TEXTS: &str = "SELECT t.conversation_id, NULL,
        c.external_id || '/turn ' || t.position, t.text, t.id
     FROM turn t JOIN conversation c ON c.id = t.conversation_id";

fn response_texts() -> String {
    format!(
        "SELECT p.conversation_id, p.id, {RESPONSE_NAME}, p.text, NULL
         FROM response p JOIN conversation c ON c.id = p.conversation_id
         JOIN source s ON s.id = p.source_id WHERE p.text IS NOT NULL"
    )
}

fn finding_columns() -> String {
    format!(
        "SELECT f.id, f.kind, f.start, f.\"end\", f.status, f.excerpt, f.reason,
            f.resolved_by, f.conversation_id, f.response_id,
            CASE WHEN f.response_id IS NOT NULL THEN {RESPONSE_NAME}
                 WHEN f.turn_id IS NOT NULL THEN c.external_id || '/turn ' || t.position
                 ELSE c.external_id END,
            f.turn_id
         FROM phi_finding f JOIN conversation c ON c.id = f.conversation_id
         LEFT JOIN response p ON p.id = f.response_id LEFT JOIN source s ON s.id = p.source_id
         LEFT JOIN turn t ON t.id = f.turn_id"
    )
}

fn text_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PhiText> {
    Ok(PhiText {
        conversation_id: r.get(0)?,
        response_id: r.get(1)?,
        item: r.get(2)?,
        text: r.get(3)?,
        turn_id: r.get(4)?,
    })
}

fn finding_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PhiFinding> {
    let kind: String = r.get(1)?;
    let status: String = r.get(4)?;
    let response_id: Option<i64> = r.get(9)?;
    let turn_id: Option<i64> = r.get(11)?;
    let text = PhiTextId {
        conversation_id: r.get(8)?,
        response_id,
        turn_id,
    };
    Ok(PhiFinding {
        id: r.get(0)?,
        kind: PhiKind::parse(&kind).unwrap_or(PhiKind::RecordId),
        start: r.get::<_, i64>(2)? as usize,
        end: r.get::<_, i64>(3)? as usize,
        status: PhiStatus::parse(&status),
        excerpt: r.get(5)?,
        reason: r.get(6)?,
        resolved_by: r.get(7)?,
        conversation_id: text.conversation_id,
        response_id,
        turn_id,
        item: r.get(10)?,
        field: text.field(),
    })
}

fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn read_texts(conn: &rusqlite::Connection) -> StoreResult<Vec<PhiText>> {
    let mut out = Vec::new();
    for sql in [TEXTS.to_string(), response_texts(), TURN_TEXTS.to_string()] {
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map([], text_row)?;
        for row in rows {
            out.push(row?);
        }
    }
    Ok(out)
}

fn read_findings(
    conn: &rusqlite::Connection,
    status: Option<PhiStatus>,
) -> StoreResult<Vec<PhiFinding>> {
    let sql = format!(
        "{} WHERE (?1 IS NULL OR f.status = ?1) ORDER BY f.id",
        finding_columns()
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([status.map(PhiStatus::as_str)], finding_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl Store {
    /// The lead's names and places.
    pub fn phi_terms(&self) -> StoreResult<Vec<PhiTerm>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT kind, text FROM phi_term ORDER BY id")?;
        let rows = stmt.query_map([], |r| {
            let kind: String = r.get(0)?;
            Ok(PhiTerm {
                kind: if kind == "place" {
                    PhiKind::Place
                } else {
                    PhiKind::Name
                },
                text: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Findings, all or those with one status, oldest first.
    pub fn phi_findings(&self, status: Option<PhiStatus>) -> StoreResult<Vec<PhiFinding>> {
        read_findings(self.conn(), status)
    }

    /// How many findings still wait for a decision.
    pub fn open_phi_findings(&self) -> StoreResult<usize> {
        let n: i64 = self.conn().query_row(
            "SELECT COUNT(*) FROM phi_finding WHERE status = 'open'",
            [],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }

    /// Every context, response and turn text of the study.
    pub fn phi_texts(&self) -> StoreResult<Vec<PhiText>> {
        read_texts(self.conn())
    }

    /// One text as it is now (the review queue shows findings in it).
    pub fn phi_text_of(&self, text: PhiTextId) -> StoreResult<Option<PhiText>> {
        read_text(self.conn(), text)
    }
}

fn read_text(conn: &rusqlite::Connection, text: PhiTextId) -> StoreResult<Option<PhiText>> {
    let (sql, id) = match (text.response_id, text.turn_id) {
        (Some(r), _) => (format!("{} AND p.id = ?1", response_texts()), r),
        (None, Some(t)) => (format!("{TURN_TEXTS} WHERE t.id = ?1"), t),
        (None, None) => (format!("{TEXTS} WHERE c.id = ?1"), text.conversation_id),
    };
    Ok(conn.query_row(&sql, [id], text_row).optional()?)
}

/// The PHI guard's insert triggers, exactly as the migrations create them: each marks a new
/// text for the next scan. A bulk import of conversations sets them aside and marks its texts in
/// one statement per table instead ([`StudyTx::set_phi_marks_aside`]).
const PHI_INSERT_TRIGGERS: [(&str, &str); 3] = [
    (
        "phi_pending_conversation",
        "CREATE TRIGGER phi_pending_conversation AFTER INSERT ON conversation
BEGIN INSERT OR IGNORE INTO phi_pending VALUES (NEW.id, 0); END",
    ),
    (
        "phi_pending_response",
        "CREATE TRIGGER phi_pending_response AFTER INSERT ON response WHEN NEW.text IS NOT NULL
BEGIN INSERT OR IGNORE INTO phi_pending VALUES (NEW.conversation_id, NEW.id); END",
    ),
    (
        "phi_pending_turn_insert",
        "CREATE TRIGGER phi_pending_turn_insert AFTER INSERT ON turn
BEGIN INSERT OR IGNORE INTO phi_pending_turn VALUES (NEW.id); END",
    ),
];

/// Where a bulk import's rows begin (the first id it gives in each table) while the PHI
/// guard's insert triggers are set aside.
#[derive(Debug)]
pub(crate) struct PhiMarksAside {
    conversation: i64,
    response: i64,
    turn: i64,
}

/// `sql` with every run of whitespace made one space.
fn collapsed(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl StudyTx<'_> {
    /// Set the PHI guard's insert triggers on `conversation`, `response` and `turn` aside for a
    /// bulk import whose new rows have ids from `conversation`, `response` and `turn` on: every
    /// row a trigger runs for costs SQLite a sub-program (about a quarter of the insert). Only
    /// when the study's three triggers are exactly Concord's (else they stay, and mark each row
    /// as before). [`StudyTx::put_phi_marks_back`] marks the new texts in one statement per
    /// table and makes the triggers again, as they were; the seal calls it if the import did
    /// not, and a rollback restores them with the rest of the schema.
    pub(crate) fn set_phi_marks_aside(
        &mut self,
        conversation: i64,
        response: i64,
        turn: i64,
    ) -> StoreResult<()> {
        if self.phi_marks.is_some() {
            return Ok(());
        }
        let stored: HashMap<String, String> = self
            .tx
            .prepare(
                "SELECT name, sql FROM main.sqlite_schema WHERE type = 'trigger' AND name IN
                 ('phi_pending_conversation', 'phi_pending_response', 'phi_pending_turn_insert')",
            )?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let ours = PHI_INSERT_TRIGGERS
            .iter()
            .all(|(name, sql)| stored.get(*name).map(|s| collapsed(s)) == Some(collapsed(sql)));
        if !ours || stored.len() != PHI_INSERT_TRIGGERS.len() {
            return Ok(());
        }
        self.tx.execute_batch(
            "DROP TRIGGER main.phi_pending_conversation;
             DROP TRIGGER main.phi_pending_response;
             DROP TRIGGER main.phi_pending_turn_insert;",
        )?;
        self.phi_marks = Some(PhiMarksAside {
            conversation,
            response,
            turn,
        });
        Ok(())
    }

    /// Mark the texts a bulk import added for the next scan (what the triggers would have
    /// marked, row for row) and make the PHI guard's insert triggers again; nothing when they
    /// were not set aside.
    pub(crate) fn put_phi_marks_back(&mut self) -> StoreResult<()> {
        let Some(from) = self.phi_marks.take() else {
            return Ok(());
        };
        self.tx.execute(
            "INSERT OR IGNORE INTO phi_pending SELECT id, 0 FROM conversation WHERE id >= ?1",
            [from.conversation],
        )?;
        self.tx.execute(
            "INSERT OR IGNORE INTO phi_pending SELECT conversation_id, id FROM response
             WHERE id >= ?1 AND text IS NOT NULL",
            [from.response],
        )?;
        self.tx.execute(
            "INSERT OR IGNORE INTO phi_pending_turn SELECT id FROM turn WHERE id >= ?1",
            [from.turn],
        )?;
        for (_, sql) in PHI_INSERT_TRIGGERS {
            self.tx.execute_batch(sql)?;
        }
        Ok(())
    }
}

impl StudyTx<'_> {
    /// Replace the lead's term list.
    pub fn set_phi_terms(&mut self, terms: &[PhiTerm]) -> StoreResult<()> {
        self.tx.execute("DELETE FROM phi_term", [])?;
        let mut stmt = self
            .tx
            .prepare("INSERT OR IGNORE INTO phi_term(kind, text) VALUES (?1, ?2)")?;
        for t in terms {
            let kind = if t.kind == PhiKind::Place {
                "place"
            } else {
                "name"
            };
            stmt.execute(params![kind, t.text])?;
        }
        Ok(())
    }

    /// The texts to scan — every text when `all`, else those written since the last scan — and
    /// clear the marks. Each text is shown to `keep` as it is read (its id and words, borrowed
    /// from the file) and only those it keeps are returned whole, with the number of texts read:
    /// a scan after an import of 200,000 turns holds the few texts with findings, not every text.
    pub fn take_phi_pending(
        &mut self,
        all: bool,
        mut keep: impl FnMut(PhiTextId, &str) -> bool,
    ) -> StoreResult<(usize, Vec<PhiText>)> {
        // Ids and words only: a kept text's name (which needs its conversation and source) is
        // read for it alone.
        let sql = [
            "SELECT c.id, NULL, NULL, c.context FROM conversation c",
            "SELECT p.conversation_id, p.id, NULL, p.text FROM response p WHERE p.text IS NOT NULL",
            "SELECT t.conversation_id, NULL, t.id, t.text FROM turn t",
        ];
        let pending = [
            " WHERE c.id IN (SELECT conversation_id FROM phi_pending WHERE response_id = 0)",
            " AND p.id IN (SELECT response_id FROM phi_pending WHERE response_id <> 0)",
            " WHERE t.id IN (SELECT turn_id FROM phi_pending_turn)",
        ];
        let mut read = 0;
        let mut kept = Vec::new();
        for (sql, pending) in sql.into_iter().zip(pending) {
            let sql = if all {
                sql.to_string()
            } else {
                format!("{sql}{pending}")
            };
            let mut stmt = self.tx.prepare(&sql)?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                read += 1;
                let id = PhiTextId {
                    conversation_id: r.get(0)?,
                    response_id: r.get(1)?,
                    turn_id: r.get(2)?,
                };
                let text = r.get_ref(3)?.as_str().map_err(rusqlite::Error::from)?;
                if keep(id, text) {
                    kept.extend(read_text(&self.tx, id)?);
                }
            }
        }
        self.tx.execute("DELETE FROM phi_pending", [])?;
        self.tx.execute("DELETE FROM phi_pending_turn", [])?;
        Ok((read, kept))
    }

    /// One text with the current content (after a redaction).
    pub fn phi_text(&self, text: PhiTextId) -> StoreResult<Option<PhiText>> {
        read_text(&self.tx, text)
    }

    /// Replace the open findings of one text by `spans` (from a fresh scan of `text`), except
    /// spans whose class and matched text a reviewer already decided to keep in this text. An
    /// open finding that is found again keeps its id (its offsets follow the text). Returns how
    /// many open findings the text now has.
    pub fn replace_phi_findings(
        &mut self,
        text: &PhiText,
        spans: &[PhiSpan],
    ) -> StoreResult<usize> {
        let response = text.response_id.unwrap_or(0);
        let turn = text.turn_id.unwrap_or(0);
        let earlier: Vec<(i64, String, String, String)> = {
            let mut stmt = self.tx.prepare_cached(
                "SELECT id, kind, excerpt_sha256, status FROM phi_finding WHERE conversation_id = ?1
                   AND COALESCE(response_id, 0) = ?2 AND COALESCE(turn_id, 0) = ?3
                   AND status IN ('open', 'kept') ORDER BY id",
            )?;
            let rows = stmt.query_map(params![text.conversation_id, response, turn], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?;
            rows.collect::<Result<_, _>>()?
        };
        if spans.is_empty() && earlier.is_empty() {
            return Ok(0);
        }
        let mut reused = vec![false; earlier.len()];
        let chars: Vec<char> = text.text.chars().collect();
        let mut open = 0;
        for s in spans {
            let excerpt: String = chars[s.start.min(chars.len())..s.end.min(chars.len())]
                .iter()
                .collect();
            let sha = sha256_hex(&excerpt);
            let kind = s.kind.as_str();
            if earlier
                .iter()
                .any(|(_, k, h, status)| status == "kept" && k == kind && *h == sha)
            {
                continue;
            }
            open += 1;
            let same = earlier
                .iter()
                .enumerate()
                .position(|(i, (_, k, h, status))| {
                    !reused[i] && status == "open" && k == kind && *h == sha
                });
            if let Some(i) = same {
                reused[i] = true;
                self.tx
                    .prepare_cached(
                        "UPDATE phi_finding SET start = ?2, \"end\" = ?3 WHERE id = ?1",
                    )?
                    .execute(params![earlier[i].0, s.start as i64, s.end as i64])?;
                continue;
            }
            self.tx
                .prepare_cached(
                    "INSERT INTO phi_finding(conversation_id, response_id, kind, start, \"end\",
                         excerpt, excerpt_sha256, found_at, turn_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )?
                .execute(params![
                    text.conversation_id,
                    text.response_id,
                    kind,
                    s.start as i64,
                    s.end as i64,
                    excerpt,
                    sha,
                    self.now,
                    text.turn_id
                ])?;
        }
        for (i, (id, _, _, status)) in earlier.iter().enumerate() {
            if !reused[i] && status == "open" {
                self.tx
                    .prepare_cached("DELETE FROM phi_finding WHERE id = ?1")?
                    .execute([id])?;
            }
        }
        Ok(open)
    }

    /// The texts that have open or kept findings: a fresh scan that finds nothing in any other
    /// text has nothing to replace there.
    pub fn phi_texts_with_findings(&self) -> StoreResult<std::collections::HashSet<PhiTextId>> {
        let mut stmt = self.tx.prepare(
            "SELECT DISTINCT conversation_id, response_id, turn_id FROM phi_finding
             WHERE status IN ('open', 'kept')",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(PhiTextId {
                conversation_id: r.get(0)?,
                response_id: r.get(1)?,
                turn_id: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Findings by id (only those that exist).
    pub fn phi_findings_by_id(&self, ids: &[i64]) -> StoreResult<Vec<PhiFinding>> {
        let mut out = Vec::with_capacity(ids.len());
        let sql = format!("{} WHERE f.id = ?1", finding_columns());
        let mut stmt = self.tx.prepare_cached(&sql)?;
        for id in ids {
            if let Some(f) = stmt.query_row([id], finding_row).optional()? {
                out.push(f);
            }
        }
        Ok(out)
    }

    /// Open findings (all, for the selection by class).
    pub fn open_phi_findings_in_tx(&self) -> StoreResult<Vec<PhiFinding>> {
        read_findings(&self.tx, Some(PhiStatus::Open))
    }

    /// Record a reviewer's decision on a finding; a redacted finding forgets its matched text.
    pub fn resolve_phi_finding(
        &mut self,
        id: i64,
        status: PhiStatus,
        reason: Option<&str>,
        by: &str,
    ) -> StoreResult<()> {
        self.tx
            .prepare_cached(
                "UPDATE phi_finding SET status = ?2, reason = ?3, resolved_by = ?4, resolved_at = ?5,
                     excerpt = CASE WHEN ?2 = 'redacted' THEN NULL ELSE excerpt END
                 WHERE id = ?1",
            )?
            .execute(params![id, status.as_str(), reason, by, self.now])?;
        Ok(())
    }

    /// Unmark one text as waiting for a scan.
    pub fn clear_phi_pending(&mut self, text: PhiTextId) -> StoreResult<()> {
        match (text.response_id, text.turn_id) {
            (None, Some(turn)) => self
                .tx
                .execute("DELETE FROM phi_pending_turn WHERE turn_id = ?1", [turn])?,
            (response, _) => self.tx.execute(
                "DELETE FROM phi_pending WHERE conversation_id = ?1 AND response_id = ?2",
                params![text.conversation_id, response.unwrap_or(0)],
            )?,
        };
        Ok(())
    }

    /// Overwrite one text (a redaction); the scan marks it pending again through the triggers.
    pub fn set_phi_text(&mut self, text: PhiTextId, to: &str) -> StoreResult<()> {
        super::dataset::replace_text(&self.tx, text, to)
    }
}

/// SHA-256 (hex) of a text, as findings and the audit trail record redacted originals.
pub fn text_sha256(text: &str) -> String {
    sha256_hex(text)
}
