//! Span files (CSV, JSON Lines or XLSX): `conversation_id, turn, source, rater, code, start, end`,
//! optional `severity` and `quote` — one row per span a rater marked in a reply, `[start, end)` in
//! Unicode scalar values of the reply's text. `source` may be empty where the turn has a single
//! reply; an earlier release's single-turn answer is turn 2. A row with empty offsets and a quote
//! is located in the reply as a judge's quote is (exactly, then whitespace-insensitively; first
//! match), and kept unlocated when neither finds it; a row with offsets and a quote must quote the
//! characters the offsets cover (whitespace runs aside).
//!
//! All or nothing: every row is checked before anything is written, and every problem is
//! reported with its file, row and column — offsets outside the reply or end not after start, an
//! unknown code or severity, an item the study does not have, a span on a reply an expert was not
//! assigned (when the study has assignments). A rater the study does not know is added with the
//! kind the caller chose. A span already stored (same reply, rater, code, offsets and severity)
//! is not stored twice, so importing a file again adds nothing.

use super::catalog::judge_family;
use super::long::source_key;
use super::{rater_seed, ImportError};
use crate::base::digest::sha256_hex;
use crate::base::text::quoted;
use crate::files::table::{self, Cell, FileFormat, RawRow, RawTable};
use crate::files::Issue;
use crate::rubric::quote::{char_len, char_slice, locate, same_words};
use crate::rubric::{Rubric, Scope};
use crate::store::{NewRater, NewSpan, RaterKind, SpanOrigin, Store, StudyTx, TextItem};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// What an import of spans did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SpansImported {
    pub file: String,
    /// Rows read.
    pub rows: usize,
    /// Spans written.
    pub added: usize,
    /// Rows naming a span the study already holds.
    pub already_present: usize,
    /// Spans kept as unlocated quotes.
    pub unlocated: usize,
    /// Raters the import added.
    pub raters_added: Vec<String>,
}

/// The columns of a span file.
struct Columns {
    conversation: usize,
    turn: usize,
    source: Option<usize>,
    rater: usize,
    code: usize,
    start: usize,
    end: usize,
    severity: Option<usize>,
    quote: Option<usize>,
}

impl Columns {
    fn of(table: &RawTable) -> Result<Columns, ImportError> {
        let need = |name: &str| table.column(name);
        let required = ["conversation_id", "turn", "rater", "code", "start", "end"];
        let missing: Vec<&str> = required
            .iter()
            .copied()
            .filter(|c| need(c).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(ImportError::one(
                table.whole(),
                "missing_column",
                format!(
                    "a span file needs the columns conversation_id, turn, source, rater, code, start, end (optional severity, quote); missing: {}",
                    missing.join(", ")
                ),
            ));
        }
        let at = |name: &str| need(name).unwrap_or_default();
        Ok(Columns {
            conversation: at("conversation_id"),
            turn: at("turn"),
            source: need("source"),
            rater: at("rater"),
            code: at("code"),
            start: at("start"),
            end: at("end"),
            severity: need("severity"),
            quote: need("quote"),
        })
    }
}

/// A reply a span may be marked on: its id, its rubric and its text.
struct Reply<'a> {
    response_id: i64,
    rubric: &'a Rubric,
    text: &'a str,
    length: usize,
}

/// The study's replies by `(conversation, turn, source)` and by `(conversation, turn)` where the
/// turn has one reply.
struct Replies<'a> {
    by_key: HashMap<ReplyKey, Reply<'a>>,
    by_turn: HashMap<(String, i64), Option<ReplyKey>>,
}

/// A reply as a file names it: conversation, turn, source key.
type ReplyKey = (String, i64, String);

fn replies<'a>(items: &'a [(Rubric, Vec<TextItem>)]) -> Replies<'a> {
    let mut by_key = HashMap::new();
    let mut by_turn: HashMap<(String, i64), Option<ReplyKey>> = HashMap::new();
    for (rubric, list) in items {
        if rubric.scope != Scope::Reply {
            continue;
        }
        for item in list {
            let Some(text) = item.text.as_deref() else {
                continue;
            };
            let turn = item.turn.unwrap_or(2);
            let key = (item.conversation.clone(), turn, item.source.clone());
            by_turn
                .entry((item.conversation.clone(), turn))
                .and_modify(|only| *only = None)
                .or_insert_with(|| Some(key.clone()));
            by_key.insert(
                key,
                Reply {
                    response_id: item.response_id,
                    rubric,
                    text,
                    length: char_len(text),
                },
            );
        }
    }
    Replies { by_key, by_turn }
}

/// A checked row, ready to write.
struct Checked {
    rater: String,
    span: NewSpan,
}

fn text_of(table: &RawTable, row: &RawRow, column: usize) -> Option<String> {
    match table.cell(row, column) {
        Cell::Text(s) => {
            let s = crate::base::cell::unneutralise(s.trim());
            (!s.is_empty()).then(|| s.to_string())
        }
        other => other.as_text(),
    }
}

/// A whole number ≥ 0 in a cell (XLSX numbers included); `Err` with what was written.
fn offset_of(table: &RawTable, row: &RawRow, column: usize) -> Result<Option<i64>, String> {
    let Some(text) = text_of(table, row, column) else {
        return Ok(None);
    };
    let value = text
        .parse::<i64>()
        .ok()
        .or_else(|| {
            text.parse::<f64>()
                .ok()
                .filter(|x| x.fract() == 0.0 && x.abs() < 1e15)
                .map(|x| x as i64)
        })
        .filter(|v| *v >= 0);
    value.map(Some).ok_or(text)
}

struct Reader<'t, 'r> {
    table: &'t RawTable,
    replies: &'r Replies<'r>,
    /// (rater name → expert?), for the assignment check.
    kinds: HashMap<String, bool>,
    /// Each expert's assigned replies, when the study has assignments.
    assigned: Option<HashSet<(String, i64)>>,
    issues: Vec<Issue>,
}

impl<'r> Reader<'_, 'r> {
    fn refuse(&mut self, row: &RawRow, column: usize, code: &str, message: String) {
        self.issues.push(Issue::error(
            self.table.at(row.number, Some(column)),
            code,
            message,
        ));
    }

    /// One row checked, or `None` with its problems noted.
    fn row(&mut self, columns: &Columns, row: &RawRow, new_kind: RaterKind) -> Option<Checked> {
        let table = self.table;
        let conversation = text_of(table, row, columns.conversation);
        let turn_text = text_of(table, row, columns.turn);
        let rater = text_of(table, row, columns.rater);
        let code = text_of(table, row, columns.code);
        let (Some(conversation), Some(turn_text), Some(rater), Some(code)) =
            (conversation, turn_text, rater, code)
        else {
            let (column, name) = [
                (columns.conversation, "conversation_id"),
                (columns.turn, "turn"),
                (columns.rater, "rater"),
                (columns.code, "code"),
            ]
            .into_iter()
            .find(|(c, _)| text_of(table, row, *c).is_none())
            .unwrap_or((columns.conversation, "conversation_id"));
            self.refuse(row, column, "empty_cell", format!("{name} is empty"));
            return None;
        };
        let Some(turn) = turn_text
            .parse::<i64>()
            .ok()
            .or_else(|| {
                turn_text
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.fract() == 0.0 && *x >= 1.0 && *x < 1e15)
                    .map(|x| x as i64)
            })
            .filter(|t| *t >= 1)
        else {
            self.refuse(
                row,
                columns.turn,
                "bad_turn",
                format!(
                    "turn {} is not a turn number (1, 2, 3, …)",
                    quoted(&turn_text)
                ),
            );
            return None;
        };
        let (reply, key) = self.reply(columns, row, &conversation, turn)?;
        let (declared, severity) = self.code(columns, row, reply.rubric, &code)?;
        let quote = columns.quote.and_then(|c| text_of(table, row, c));
        let range = self.range(columns, row, reply, quote.as_deref())?;
        if let Some(assigned) = &self.assigned {
            let is_expert = self
                .kinds
                .get(&rater)
                .copied()
                .unwrap_or(new_kind == RaterKind::Expert);
            if is_expert && !assigned.contains(&(rater.clone(), reply.response_id)) {
                self.refuse(
                    row,
                    columns.rater,
                    "not_assigned",
                    format!(
                        "{} was not assigned conversation {}, turn {turn}, {}; a span marks a reply its rater was given",
                        quoted(&rater),
                        quoted(&conversation),
                        key.2
                    ),
                );
                return None;
            }
        }
        Some(Checked {
            rater,
            span: NewSpan {
                response_id: reply.response_id,
                rater_id: 0,
                code: declared.key.clone(),
                range,
                severity,
                quote: if range.is_none() { quote } else { None },
                origin: SpanOrigin::Import,
                call_id: None,
            },
        })
    }

    /// The reply a row names, with its key; `None` with the refusal noted.
    fn reply(
        &mut self,
        columns: &Columns,
        row: &RawRow,
        conversation: &str,
        turn: i64,
    ) -> Option<(&'r Reply<'r>, ReplyKey)> {
        let table = self.table;
        let replies = self.replies;
        let source = columns
            .source
            .and_then(|c| text_of(table, row, c))
            .map(|s| source_key(&s));
        let key = match &source {
            Some(s) => Some((conversation.to_string(), turn, s.clone())),
            None => replies
                .by_turn
                .get(&(conversation.to_string(), turn))
                .cloned()
                .flatten(),
        };
        let Some(reply) = key.as_ref().and_then(|k| replies.by_key.get(k)) else {
            let several = source.is_none()
                && replies
                    .by_turn
                    .get(&(conversation.to_string(), turn))
                    .is_some_and(Option::is_none);
            let message = if several {
                format!(
                    "conversation {} has several replies at turn {turn} (candidates); name the source",
                    quoted(&conversation)
                )
            } else {
                format!(
                    "conversation {} has no reply at turn {turn}{} to mark; import the conversations first",
                    quoted(&conversation),
                    key.as_ref()
                        .map(|k| format!(" from {}", quoted(&k.2)))
                        .unwrap_or_default()
                )
            };
            self.refuse(row, columns.conversation, "unknown_item", message);
            return None;
        };
        Some((reply, key.unwrap_or_default()))
    }

    /// The declared code a row names and its severity level; `None` with the refusal noted.
    fn code(
        &mut self,
        columns: &Columns,
        row: &RawRow,
        rubric: &'r Rubric,
        code: &str,
    ) -> Option<(&'r crate::rubric::Code, Option<String>)> {
        let table = self.table;
        let Some(declared) = rubric.code(code) else {
            let known: Vec<&str> = rubric.codes.iter().map(|c| c.key.as_str()).collect();
            self.refuse(
                row,
                columns.code,
                "unknown_code",
                format!(
                    "code {} is not one of rubric {}'s codes ({})",
                    quoted(&code),
                    quoted(&rubric.id),
                    if known.is_empty() {
                        "it declares none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            );
            return None;
        };
        let severity = match columns.severity.and_then(|c| text_of(table, row, c)) {
            None => None,
            Some(level) => match declared.severity_level(&level) {
                Some(l) => Some(l.to_string()),
                None => {
                    let column = columns.severity.unwrap_or(columns.code);
                    self.refuse(
                        row,
                        column,
                        "unknown_severity",
                        if declared.severity.is_empty() {
                            format!("code {} has no severity levels", quoted(&declared.key))
                        } else {
                            format!(
                                "severity {} is not one of code {}'s levels ({})",
                                quoted(&level),
                                quoted(&declared.key),
                                declared.severity.join(", ")
                            )
                        },
                    );
                    return None;
                }
            },
        };
        Some((declared, severity))
    }

    /// The row's offsets checked against the reply (or its quote located); `None` on a problem.
    fn range(
        &mut self,
        columns: &Columns,
        row: &RawRow,
        reply: &Reply<'_>,
        quote: Option<&str>,
    ) -> Option<Option<(i64, i64)>> {
        let start = offset_of(self.table, row, columns.start);
        let end = offset_of(self.table, row, columns.end);
        let (start, end) = match (start, end) {
            (Err(written), _) => {
                self.refuse(
                    row,
                    columns.start,
                    "bad_offset",
                    format!(
                        "start {} is not a character offset (0, 1, 2, …)",
                        quoted(&written)
                    ),
                );
                return None;
            }
            (_, Err(written)) => {
                self.refuse(
                    row,
                    columns.end,
                    "bad_offset",
                    format!(
                        "end {} is not a character offset (0, 1, 2, …)",
                        quoted(&written)
                    ),
                );
                return None;
            }
            (Ok(s), Ok(e)) => (s, e),
        };
        match (start, end) {
            (None, None) => {
                let Some(quote) = quote else {
                    self.refuse(
                        row,
                        columns.start,
                        "empty_cell",
                        "start and end are empty and no quote says where the span is".into(),
                    );
                    return None;
                };
                Some(locate(reply.text, quote).map(|l| {
                    let (s, e) = l.range();
                    (s as i64, e as i64)
                }))
            }
            (None, Some(_)) | (Some(_), None) => {
                let column = if start.is_none() {
                    columns.start
                } else {
                    columns.end
                };
                self.refuse(
                    row,
                    column,
                    "empty_cell",
                    "give both start and end, or neither (with a quote)".into(),
                );
                None
            }
            (Some(s), Some(e)) => {
                if e <= s {
                    self.refuse(
                        row,
                        columns.end,
                        "end_before_start",
                        format!(
                            "end {e} is not after start {s}: a span covers at least one character"
                        ),
                    );
                    return None;
                }
                if e as usize > reply.length {
                    self.refuse(
                        row,
                        columns.end,
                        "outside_text",
                        format!(
                            "offsets {s}–{e} reach outside the reply, which has {} characters",
                            reply.length
                        ),
                    );
                    return None;
                }
                if let Some(q) = quote {
                    let marked = char_slice(reply.text, s as usize, e as usize).unwrap_or("");
                    if !same_words(q, marked) {
                        let column = columns.quote.unwrap_or(columns.start);
                        self.refuse(
                            row,
                            column,
                            "quote_mismatch",
                            format!(
                                "the quote is not the text at {s}–{e}, which reads {}",
                                quoted(&crate::intake::excerpt(marked, 60))
                            ),
                        );
                        return None;
                    }
                }
                Some(Some((s, e)))
            }
        }
    }
}

/// Import the spans of `path`. `new_kind` is the kind of raters the study does not know yet;
/// `seed` seeds their queue orders; `actor` is named in the audit entry.
pub fn import_spans(
    store: &mut Store,
    path: &Path,
    new_kind: RaterKind,
    seed: u64,
    actor: &str,
) -> Result<SpansImported, ImportError> {
    let file = table::display_name(path);
    let format = FileFormat::from_name(&file).unwrap_or(FileFormat::Csv);
    let table = table::read_table(path, format, None).map_err(ImportError::Rejected)?;
    let columns = Columns::of(&table)?;
    let bytes = table::read_file(path, &crate::files::bounds::ReadLimits::from_env())
        .map_err(ImportError::Rejected)?;
    let digest = sha256_hex(&bytes);
    let mut items = Vec::new();
    for stored in store.rubrics()? {
        let list = store.text_items(stored.id)?;
        items.push((stored.rubric, list));
    }
    let records = store.rater_records()?;
    let assignments = store.assigned_responses()?;
    let study = Known {
        replies: replies(&items),
        records,
        assignments,
    };
    store.write(|tx| land(tx, &table, &columns, &study, new_kind, seed, actor, &digest))
}

/// What the study holds that a span file is checked against.
struct Known<'a> {
    replies: Replies<'a>,
    records: Vec<crate::store::RaterRecord>,
    assignments: Vec<(i64, i64)>,
}

#[allow(clippy::too_many_arguments)] // one import's whole context, named
fn land(
    tx: &mut StudyTx<'_>,
    table: &RawTable,
    columns: &Columns,
    study: &Known<'_>,
    new_kind: RaterKind,
    seed: u64,
    actor: &str,
    digest: &str,
) -> Result<SpansImported, ImportError> {
    let records = &study.records;
    let kinds: HashMap<String, bool> = records
        .iter()
        .map(|r| (r.name.clone(), r.is_expert()))
        .collect();
    let ids: HashMap<i64, String> = records.iter().map(|r| (r.id, r.name.clone())).collect();
    let assigned = (!study.assignments.is_empty()).then(|| {
        study
            .assignments
            .iter()
            .filter_map(|(rater, response)| Some((ids.get(rater)?.clone(), *response)))
            .collect::<HashSet<_>>()
    });
    let mut reader = Reader {
        table,
        replies: &study.replies,
        kinds,
        assigned,
        issues: Vec::new(),
    };
    let checked: Vec<Checked> = table
        .rows
        .iter()
        .filter(|row| !row.cells.iter().all(Cell::is_blank))
        .filter_map(|row| reader.row(columns, row, new_kind))
        .collect();
    if !reader.issues.is_empty() {
        return Err(ImportError::Rejected(reader.issues));
    }
    let mut report = SpansImported {
        file: table.file.clone(),
        rows: checked.len(),
        added: 0,
        already_present: 0,
        unlocated: 0,
        raters_added: Vec::new(),
    };
    let mut rater_ids: HashMap<String, i64> =
        records.iter().map(|r| (r.name.clone(), r.id)).collect();
    let mut present: HashMap<i64, HashSet<SpanKey>> = HashMap::new();
    for Checked { rater, mut span } in checked {
        let rater_id = match rater_ids.get(&rater) {
            Some(id) => *id,
            None => {
                let family = (new_kind == RaterKind::Judge).then(|| judge_family(&rater));
                let id = tx.upsert_rater(&NewRater {
                    kind: new_kind,
                    name: &rater,
                    model_id: (new_kind == RaterKind::Judge).then_some(rater.as_str()),
                    family: family.as_deref(),
                    queue_seed: rater_seed(seed, &rater),
                })?;
                rater_ids.insert(rater.clone(), id);
                report.raters_added.push(rater);
                id
            }
        };
        span.rater_id = rater_id;
        let stored = match present.entry(span.response_id) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(
                tx.spans_on(span.response_id)?
                    .into_iter()
                    .map(|s| {
                        SpanKey::of(
                            s.rater_id,
                            &s.code,
                            s.range,
                            s.severity.as_deref(),
                            s.quote.as_deref(),
                        )
                    })
                    .collect(),
            ),
        };
        let key = SpanKey::of(
            rater_id,
            &span.code,
            span.range,
            span.severity.as_deref(),
            span.quote.as_deref(),
        );
        if !stored.insert(key) {
            report.already_present += 1;
            continue;
        }
        if span.range.is_none() {
            report.unlocated += 1;
        }
        tx.add_span(&span)?;
        report.added += 1;
    }
    if report.added > 0 || !report.raters_added.is_empty() {
        tx.audit(
            actor,
            "spans.import",
            &serde_json::json!({
                "file": report.file,
                "sha256": digest,
                "added": report.added,
                "already_present": report.already_present,
                "unlocated": report.unlocated,
                "raters_added": report.raters_added,
            }),
        )?;
    }
    Ok(report)
}

/// What makes two spans the same for an import.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SpanKey(
    i64,
    String,
    Option<(i64, i64)>,
    Option<String>,
    Option<String>,
);

impl SpanKey {
    fn of(
        rater: i64,
        code: &str,
        range: Option<(i64, i64)>,
        severity: Option<&str>,
        quote: Option<&str>,
    ) -> SpanKey {
        SpanKey(
            rater,
            code.to_string(),
            range,
            severity.map(str::to_string),
            // A located span is the same whatever quote came with it.
            if range.is_some() {
                None
            } else {
                quote.map(str::to_string)
            },
        )
    }
}
