//! Chat JSON Lines: one conversation per line,
//! `{"conversation_id", "messages": [{"role", "content", "source"?}], "candidates"?: [{"source"?,
//! "content"}], "rate"?, "language"?, "category"?, "source"?}`. Turn numbers are positions in
//! `messages` (1-based, `system` messages counted); candidates share `len(messages) + 1`. Each line
//! is read, checked whole and written before the next is read, so memory holds one line (at most
//! [`MAX_LINE_BYTES`](super::MAX_LINE_BYTES)) and the ids seen so far with a digest of each conversation. Keys other than
//! these are ignored; a field is named in a refusal by its JSON path (`messages[2].role`: the
//! third message, turn 3).

use super::{
    already_in_study, check_text, land_conversations, nothing_to_rate, role, source_of, tick,
    too_many_turns, InputFile, Landing, Message, Problems, MAX_TURNS, UNNAMED,
};
use crate::base::text::quoted;
use crate::files::bounds::ReadLimits;
use crate::files::table::clean_text;
use crate::files::{Issue, Location};
use crate::intake::{FileReport, ImportError, ImportOptions, ImportProgress};
use crate::rubric::{Rubric, Scope};
use crate::store::{Role, Store, StudyTx};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};

/// Which assistant turns become reply items.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Rate {
    /// Every assistant turn and every candidate (the default).
    All,
    /// The candidates, else the final assistant turn.
    Last,
    /// These turn numbers.
    Turns(BTreeSet<usize>),
}

/// One message or candidate as read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Said {
    role: Role,
    text: String,
    source: Option<String>,
}

/// One line's conversation, read and checked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Conversation {
    id: String,
    language: Option<String>,
    category: Option<String>,
    source: Option<String>,
    messages: Vec<Said>,
    candidates: Vec<Said>,
    rate: Rate,
}

/// A conversation id first seen in the file: where, and a digest of what it holds.
struct Seen {
    line: usize,
    digest: [u8; 32],
}

/// Import a chat JSON Lines file; see the module documentation.
pub(super) fn import(
    store: &mut Store,
    file: &InputFile<'_>,
    rubric: &Rubric,
    options: &ImportOptions,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<FileReport, ImportError> {
    let read = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let mut lines = file.json_lines(read.clone())?;
    let limits = ReadLimits::from_env();
    let report = land_conversations(store, file, None, rubric, options, |tx, landing, report| {
        let mut problems = Problems::default();
        let mut seen: HashMap<Box<str>, Seen> = HashMap::new();
        let mut rows = 0u64;
        while let Some(next) = lines.next_object() {
            rows += 1;
            tick(progress, rows, read.get(), file.size);
            match next {
                Ok(line) => {
                    let number = line.line;
                    let reading = Reading {
                        file: &file.name,
                        line: number,
                        limits: &limits,
                    };
                    match reading.conversation(line.object, rubric) {
                        Ok(c) => take(tx, landing, report, &mut problems, &mut seen, number, c)?,
                        Err(found) => found.into_iter().for_each(|i| problems.push(i)),
                    }
                }
                Err(issue) => problems.push(issue),
            }
            if problems.full() {
                break;
            }
        }
        if rows == 0 && problems.is_empty() {
            problems.error(
                Location::whole_file(&file.name),
                "empty_file",
                "the file holds no conversations".to_string(),
            );
        }
        problems.into_result()
    })?;
    progress(ImportProgress {
        done: file.size,
        total: file.size,
        rows: report
            .conversation_counts
            .as_ref()
            .map_or(0, |c| c.conversations as u64),
    });
    Ok(report)
}

/// A conversation read on line `line`: refused when its id is already in the study or names a
/// different conversation earlier in the file, skipped (with a warning) when it repeats an earlier
/// one exactly, else written while the file holds no problem.
fn take(
    tx: &mut StudyTx<'_>,
    landing: &mut Landing,
    report: &mut FileReport,
    problems: &mut Problems,
    seen: &mut HashMap<Box<str>, Seen>,
    line: usize,
    c: Conversation,
) -> Result<(), ImportError> {
    let at = || Location {
        column: Some("conversation_id".into()),
        ..Location::file_row(&report.file, line)
    };
    let digest: [u8; 32] = Sha256::digest(format!("{c:?}").as_bytes()).into();
    if let Some(first) = seen.get(c.id.as_str()) {
        if first.digest == digest {
            report.warnings.push(Issue::warning(
                at(),
                "repeated_conversation",
                format!(
                    "conversation {} repeats line {} exactly; it is imported once",
                    quoted(&c.id),
                    first.line
                ),
            ));
        } else {
            problems.error(
                at(),
                "conflicting_conversation",
                format!(
                    "conversation {} appears again with different turns (first on line {}); two conversations cannot share one id",
                    quoted(&c.id),
                    first.line
                ),
            );
        }
        return Ok(());
    }
    seen.insert(c.id.as_str().into(), Seen { line, digest });
    if landing.in_study(&c.id) {
        problems.push(already_in_study(&c.id, at()));
        return Ok(());
    }
    if problems.is_empty() {
        write(tx, landing, &c)?;
    }
    Ok(())
}

/// Write one checked conversation: the conversation (and its session item), then every message
/// and candidate as a reply item or a turn of history.
fn write(tx: &mut StudyTx<'_>, landing: &mut Landing, c: &Conversation) -> Result<(), ImportError> {
    let conversation = landing.conversation(
        tx,
        &c.id,
        c.language.as_deref(),
        c.category.as_deref(),
        &session_source(c),
    )?;
    let last_assistant = c.messages.iter().rposition(|m| m.role == Role::Assistant);
    for (i, m) in c.messages.iter().enumerate() {
        let position = i + 1;
        let assistant = m.role == Role::Assistant;
        let rated = assistant
            && match &c.rate {
                Rate::All => true,
                Rate::Last => c.candidates.is_empty() && Some(i) == last_assistant,
                Rate::Turns(turns) => turns.contains(&position),
            };
        landing.message(
            tx,
            conversation,
            &Message {
                position: position as i64,
                role: m.role,
                text: &m.text,
                source: assistant.then(|| source_of(m.source.as_deref(), c.source.as_deref())),
                rated,
                candidate: false,
            },
        )?;
    }
    let position = c.messages.len() + 1;
    let rated = match &c.rate {
        Rate::All | Rate::Last => true,
        Rate::Turns(turns) => turns.contains(&position),
    };
    for m in &c.candidates {
        landing.message(
            tx,
            conversation,
            &Message {
                position: position as i64,
                role: Role::Assistant,
                text: &m.text,
                source: Some(source_of(m.source.as_deref(), c.source.as_deref())),
                rated,
                candidate: true,
            },
        )?;
    }
    Ok(())
}

/// The source of a conversation's session item: its own `source`, else the one source all its
/// assistant messages name, else `unnamed`.
fn session_source(c: &Conversation) -> String {
    if let Some(s) = &c.source {
        return s.clone();
    }
    let mut named = c
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| m.source.as_deref());
    match named.next() {
        Some(Some(first)) if named.all(|s| s == Some(first)) => first.to_string(),
        _ => UNNAMED.to_string(),
    }
}

/// The reading of one line.
struct Reading<'a> {
    file: &'a str,
    line: usize,
    limits: &'a ReadLimits,
}

impl Reading<'_> {
    /// Field `field` of this line as a location.
    fn at(&self, field: &str) -> Location {
        Location {
            column: Some(field.to_string()),
            ..Location::file_row(self.file, self.line)
        }
    }

    /// The line's object read as a conversation and checked whole; every problem found.
    fn conversation(
        &self,
        mut object: Map<String, Value>,
        rubric: &Rubric,
    ) -> Result<Conversation, Vec<Issue>> {
        let mut problems = Vec::new();
        let mut text = |key: &str, problems: &mut Vec<Issue>| {
            self.optional_text(&mut object, key)
                .unwrap_or_else(|issue| {
                    problems.push(issue);
                    None
                })
        };
        let id = text("conversation_id", &mut problems);
        let language = text("language", &mut problems);
        let category = text("category", &mut problems);
        let source = text("source", &mut problems);
        let rate = self.rate(object.remove("rate")).unwrap_or_else(|issue| {
            problems.push(issue);
            Rate::All
        });
        let messages = self.list(object.remove("messages"), "messages", true);
        let candidates = self.list(object.remove("candidates"), "candidates", false);
        let (messages, candidates) = match (messages, candidates) {
            (Ok(m), Ok(c)) => (m, c),
            (m, c) => {
                problems.extend(m.err());
                problems.extend(c.err());
                return Err(problems);
            }
        };
        let Some(id) = id else {
            if problems.is_empty() {
                problems.push(Issue::error(
                    self.at("conversation_id"),
                    "missing_value",
                    "the line has no conversation_id".to_string(),
                ));
            }
            return Err(problems);
        };
        let turns = messages.len() + candidates.len();
        if turns > MAX_TURNS {
            problems.push(too_many_turns(&id, turns, self.at("messages")));
            return Err(problems);
        }
        let messages = self.said_list(messages, "messages", 0, &mut problems);
        let candidates = self.said_list(candidates, "candidates", messages.len(), &mut problems);
        if !problems.is_empty() {
            return Err(problems);
        }
        let c = Conversation {
            id,
            language,
            category,
            source,
            messages,
            candidates,
            rate,
        };
        self.check(&c, rubric)?;
        Ok(c)
    }

    /// `key` as text: a string (blank is none) or a whole number (an id written as one); absent
    /// or `null` is none.
    fn optional_text(
        &self,
        object: &mut Map<String, Value>,
        key: &str,
    ) -> Result<Option<String>, Issue> {
        match object.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => {
                let s = clean_text(s, self.limits, || self.at(key))?;
                Ok(Some(s.trim().to_string()).filter(|s| !s.is_empty()))
            }
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(Some(n.to_string())),
            Some(_) => Err(Issue::error(
                self.at(key),
                "not_text",
                format!("{key} must be a string"),
            )),
        }
    }

    /// The `messages` or `candidates` array (required or not), its entries as objects.
    fn list(
        &self,
        value: Option<Value>,
        key: &str,
        required: bool,
    ) -> Result<Vec<Map<String, Value>>, Issue> {
        let entries = match value {
            None | Some(Value::Null) if !required => return Ok(Vec::new()),
            Some(Value::Array(entries)) if !(required && entries.is_empty()) => entries,
            None | Some(Value::Null) | Some(Value::Array(_)) => {
                return Err(Issue::error(
                    self.at(key),
                    "missing_value",
                    "the conversation has no messages; messages is a list of {\"role\", \"content\"} objects".to_string(),
                ))
            }
            Some(_) => {
                return Err(Issue::error(
                    self.at(key),
                    "not_a_list",
                    format!("{key} must be a list of objects"),
                ))
            }
        };
        entries
            .into_iter()
            .enumerate()
            .map(|(i, entry)| match entry {
                Value::Object(o) => Ok(o),
                _ => Err(Issue::error(
                    self.at(&format!("{key}[{i}]")),
                    "not_an_object",
                    format!("each entry of {key} must be an object"),
                )),
            })
            .collect()
    }

    /// The messages (or candidates, `first` turns after the start) read: role (a candidate's is
    /// `assistant` whatever it says), text and source, every problem in `problems`.
    fn said_list(
        &self,
        entries: Vec<Map<String, Value>>,
        key: &str,
        first: usize,
        problems: &mut Vec<Issue>,
    ) -> Vec<Said> {
        let candidates = key == "candidates";
        let mut out = Vec::with_capacity(entries.len());
        for (i, mut entry) in entries.into_iter().enumerate() {
            let turn = first + if candidates { 1 } else { i + 1 };
            let field = |name: &str| format!("{key}[{i}].{name}");
            let role = if candidates {
                Ok(Role::Assistant)
            } else {
                match self.optional_text(&mut entry, "role") {
                    Ok(Some(written)) => role(&written, || self.at(&field("role"))),
                    Ok(None) => Err(Issue::error(
                        self.at(&field("role")),
                        "unknown_role",
                        format!(
                            "turn {turn} has no role; a turn's role is user, assistant or system"
                        ),
                    )),
                    Err(issue) => Err(issue),
                }
            };
            let text = self.content(&mut entry, turn, &field("content"));
            let source = self
                .optional_text(&mut entry, "source")
                .map_err(|mut issue| {
                    issue.at.column = Some(field("source"));
                    issue
                });
            match (role, text, source) {
                (Ok(role), Ok(text), Ok(source)) => out.push(Said { role, text, source }),
                (role, text, source) => {
                    problems.extend(role.err());
                    problems.extend(text.err());
                    problems.extend(source.err());
                }
            }
        }
        out
    }

    /// A message's `content`: a string, checked ([`check_text`]), kept as written.
    fn content(
        &self,
        entry: &mut Map<String, Value>,
        turn: usize,
        field: &str,
    ) -> Result<String, Issue> {
        match entry.remove("content") {
            Some(Value::String(s)) => {
                let s = clean_text(s, self.limits, || self.at(field))?;
                check_text(&s, turn, || self.at(field))?;
                Ok(s)
            }
            None | Some(Value::Null) => Err(Issue::error(
                self.at(field),
                "empty_text",
                format!("turn {turn} has no text; every turn needs its words"),
            )),
            Some(_) => Err(Issue::error(
                self.at(field),
                "not_text",
                format!("the content of turn {turn} must be a string"),
            )),
        }
    }

    /// `rate`: absent or `"all"`, `"last"`, or a list of turn numbers.
    fn rate(&self, value: Option<Value>) -> Result<Rate, Issue> {
        let wrong = || {
            Issue::error(
                self.at("rate"),
                "bad_rate",
                "rate must be \"all\", \"last\" or a list of turn numbers".to_string(),
            )
        };
        match value {
            None | Some(Value::Null) => Ok(Rate::All),
            Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                "all" => Ok(Rate::All),
                "last" => Ok(Rate::Last),
                _ => Err(wrong()),
            },
            Some(Value::Array(turns)) => turns
                .iter()
                .map(|t| {
                    t.as_u64()
                        .filter(|&n| n >= 1 && n <= MAX_TURNS as u64 + 1)
                        .map(|n| n as usize)
                        .ok_or_else(wrong)
                })
                .collect::<Result<BTreeSet<_>, _>>()
                .map(Rate::Turns),
            Some(_) => Err(wrong()),
        }
    }

    /// The checks of a conversation read whole: candidates after a user turn and one per
    /// source, `rate` naming assistant turns, and something a reply rubric can rate.
    fn check(&self, c: &Conversation, rubric: &Rubric) -> Result<(), Vec<Issue>> {
        let mut problems = Vec::new();
        let after = c.messages.len() + 1;
        if !c.candidates.is_empty() {
            if let Some(last) = c.messages.last().filter(|m| m.role != Role::User) {
                problems.push(Issue::error(
                    self.at("candidates"),
                    "candidates_not_last",
                    format!(
                        "candidates follow the last message, which must be a user turn; turn {} is a{} {} turn",
                        c.messages.len(),
                        if last.role == Role::Assistant { "n" } else { "" },
                        last.role.as_str()
                    ),
                ));
            }
            let mut sources: HashMap<&str, usize> = HashMap::new();
            for (i, m) in c.candidates.iter().enumerate() {
                let s = source_of(m.source.as_deref(), c.source.as_deref());
                if let Some(first) = sources.insert(s, i) {
                    problems.push(Issue::error(
                        self.at(&format!("candidates[{i}].source")),
                        "duplicate_candidate",
                        format!(
                            "candidates[{first}] and candidates[{i}] both come from {}; the candidates at a turn are one per source",
                            quoted(&s)
                        ),
                    ));
                }
            }
        }
        if let Rate::Turns(turns) = &c.rate {
            for &t in turns {
                let fits = match c.messages.get(t.wrapping_sub(1)) {
                    Some(m) => m.role == Role::Assistant,
                    None => t == after && !c.candidates.is_empty(),
                };
                if !fits {
                    let what = match c.messages.get(t.wrapping_sub(1)) {
                        Some(m) => format!("a {} turn", m.role.as_str()),
                        None => "past the conversation's last turn".to_string(),
                    };
                    problems.push(Issue::error(
                        self.at("rate"),
                        "bad_rate",
                        format!("rate names turn {t}, which is {what}; only assistant turns and candidates are rated"),
                    ));
                }
            }
        }
        let items = match &c.rate {
            _ if rubric.scope == Scope::Session => 1,
            Rate::All | Rate::Last => {
                c.candidates.len()
                    + c.messages
                        .iter()
                        .filter(|m| m.role == Role::Assistant)
                        .count()
            }
            Rate::Turns(turns) => turns.len(),
        };
        if problems.is_empty() && items == 0 {
            problems.push(nothing_to_rate(&c.id, &rubric.id, self.at("messages")));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}
