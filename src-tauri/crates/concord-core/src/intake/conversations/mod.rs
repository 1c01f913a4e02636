//! Conversations of many turns, in either of the two input formats the conversations contract
//! names, told apart by their content (never by the file's name):
//! - **chat JSON Lines** (`chat`): one conversation per line, its `messages` in order, optional
//!   `candidates` (several assistant replies after the last message, which must then be a user
//!   turn) and `rate` (`"all"`, `"last"` or a list of turn numbers);
//! - **turn table** (`turn_table`) as CSV, XLSX or JSON Lines: one row per turn,
//!   `conversation_id, turn, role, text` and optional `source, category, language`, rows in any
//!   order, several `assistant` rows at a conversation's last turn being its candidates.
//!
//! Every conversation is stored as a transcript (`turn` rows; the rated replies are `response`
//! rows with their turn number) however short. With a reply rubric, the assistant turns `rate`
//! names (every one, in a turn table) are reply items and the other turns history; with a session
//! rubric, every message is history and each conversation gets one session item, whose source is
//! the conversation's `source`, else the one source all its assistant turns name, else
//! `unnamed`. A message's `source` wins over its conversation's; an assistant turn that names
//! none has the source `unnamed`.
//!
//! The import is all or nothing, in one transaction, and reads the file as a stream: memory grows
//! with the number of turns (a few bytes each: turn number, role, source, row), never with their
//! text. Every refusal names the file, the line or row, and the field: an unknown role, an empty
//! text, a duplicate or missing turn number, candidates before the last turn (or not after a user
//! turn), two candidates of one source, two conversations under one id with different turns (the
//! same conversation twice, identical, is imported once with a warning), a conversation id the
//! study already holds, a conversation with nothing to rate, and the limits: at most
//! [`MAX_TURNS`] turns per conversation (candidates included), [`MAX_TURN_CHARS`] characters per
//! turn (Unicode scalar values), [`MAX_LINE_BYTES`] bytes per line of JSON Lines.

mod chat;
mod turn_table;

use super::long::{find_rubric, sha256_file, source_spec};
use super::{land, FileReport, FileStatus, ImportError, ImportOptions, ImportProgress};
use super::{ImportReport, PROGRESS_EVERY_ROWS};
use crate::base::text::quoted;
use crate::files::bounds::ReadLimits;
use crate::files::json_lines::JsonLines;
use crate::files::table::display_name;
use crate::files::{Issue, Location};
use crate::rubric::{Rubric, Scope};
use crate::store::{
    NewConversation, NewSource, NewTurn, Role, SourceKind, Store, StoreResult, StudyTx,
    TranscriptImport,
};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// Turns one conversation may hold, candidates included.
pub const MAX_TURNS: usize = 1_000;
/// Characters (Unicode scalar values) one turn's text may hold.
pub const MAX_TURN_CHARS: usize = 50_000;
/// Bytes one line of a JSON Lines conversations file may hold (16 MiB).
pub const MAX_LINE_BYTES: u64 = 16 * 1024 * 1024;

/// Problems listed at most before an import is refused (reading stops there).
const MAX_PROBLEMS: usize = 200;

/// The format named in the file's report and import record.
pub const KIND: &str = "conversations";

/// What an import of conversations brought in, as `concord import conversations` prints it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ConversationCounts {
    pub conversations: usize,
    /// Messages, each candidate counted as one.
    pub turns: usize,
    pub reply_items: usize,
    pub session_items: usize,
    /// Distinct sources named (`unnamed` counted when an assistant turn names none).
    pub sources: usize,
    /// The sources' names, sorted.
    #[serde(skip)]
    pub source_names: Vec<String>,
}

/// Import a conversations file (either format) rated with rubric `rubric_key` (one stored in the
/// study or built in).
pub fn import_file(
    store: &mut Store,
    path: &Path,
    rubric_key: &str,
    options: &ImportOptions,
) -> Result<ImportReport, ImportError> {
    import_file_reporting(store, path, rubric_key, options, &mut |_| {})
}

/// [`import_file`], telling `progress` how far it has come (bytes of the file read; a turn
/// table is read twice, so `total` is twice its size).
pub fn import_file_reporting(
    store: &mut Store,
    path: &Path,
    rubric_key: &str,
    options: &ImportOptions,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<ImportReport, ImportError> {
    let name = display_name(path);
    let sha = sha256_file(path)?;
    if store.read().import_by_hash(&sha)?.is_some() {
        let mut done = FileReport::new(&name, None, KIND, &sha);
        done.status = FileStatus::AlreadyImported;
        done.conversation_counts = Some(Box::default());
        return Ok(ImportReport::single(options, done));
    }
    let rubric = find_rubric(store, rubric_key, &Location::whole_file(&name))?;
    let file = InputFile {
        path,
        name,
        sha,
        size: std::fs::metadata(path).map_or(0, |m| m.len()),
    };
    let report = match sniff(&file)? {
        Layout::Chat => chat::import(store, &file, &rubric, options, progress)?,
        Layout::Table(format) => {
            turn_table::import(store, &file, format, &rubric, options, progress)?
        }
    };
    Ok(ImportReport::single(options, report))
}

/// The file being imported.
pub(super) struct InputFile<'p> {
    path: &'p Path,
    /// The name shown in messages.
    name: String,
    sha: String,
    size: u64,
}

impl InputFile<'_> {
    /// The file opened anew, counting the bytes read into `read`.
    fn open(
        &self,
        read: std::rc::Rc<std::cell::Cell<u64>>,
    ) -> Result<super::long::Counted<std::fs::File>, ImportError> {
        let file = std::fs::File::open(self.path).map_err(|e| {
            ImportError::one(
                Location::whole_file(&self.name),
                "unreadable",
                format!("cannot read the file: {e}"),
            )
        })?;
        Ok(super::long::Counted::new(file, read))
    }

    /// A JSON Lines reader over the file, lines bounded by [`MAX_LINE_BYTES`].
    fn json_lines(
        &self,
        read: std::rc::Rc<std::cell::Cell<u64>>,
    ) -> Result<JsonLines<'static>, ImportError> {
        JsonLines::new(
            &self.name,
            self.open(read)?,
            &ReadLimits::from_env(),
            MAX_LINE_BYTES,
        )
        .map_err(ImportError::Rejected)
    }
}

/// Which of the formats a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Chat,
    Table(TableFormat),
}

/// The container of a turn table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TableFormat {
    Csv,
    Jsonl,
    Xlsx,
}

/// Tell the formats apart by content: a ZIP archive is a workbook (a turn table); text whose
/// first character is `{` is JSON Lines — chat when its first object has `messages`, a turn
/// table otherwise; any other text is a CSV turn table.
fn sniff(file: &InputFile<'_>) -> Result<Layout, ImportError> {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    file.open(Default::default())?
        .take(4096)
        .read_to_end(&mut head)
        .map_err(|e| {
            ImportError::one(
                Location::whole_file(&file.name),
                "unreadable",
                format!("cannot read the file: {e}"),
            )
        })?;
    if head.is_empty() {
        return Err(ImportError::one(
            Location::whole_file(&file.name),
            "empty_file",
            "the file is empty (0 bytes)".to_string(),
        ));
    }
    if head.starts_with(b"PK\x03\x04") {
        return Ok(Layout::Table(TableFormat::Xlsx));
    }
    let text = head
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(&head)
        .iter()
        .copied()
        // UTF-16 text: its NUL bytes are skipped to find the first character.
        .filter(|b| *b != 0 && *b != 0xFF && *b != 0xFE);
    let first = text.into_iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(b'{') {
        return Ok(Layout::Table(TableFormat::Csv));
    }
    let mut lines = file.json_lines(Default::default())?;
    match lines.next_object() {
        Some(Ok(line)) if line.object.contains_key("messages") => Ok(Layout::Chat),
        Some(Ok(_)) => Ok(Layout::Table(TableFormat::Jsonl)),
        Some(Err(issue)) => Err(ImportError::Rejected(vec![issue])),
        None => Err(ImportError::one(
            Location::whole_file(&file.name),
            "empty_file",
            "the file holds no JSON objects".to_string(),
        )),
    }
}

/// Problems found so far, listed up to [`MAX_PROBLEMS`].
#[derive(Default)]
pub(super) struct Problems {
    issues: Vec<Issue>,
}

impl Problems {
    fn push(&mut self, issue: Issue) {
        if self.issues.len() < MAX_PROBLEMS {
            self.issues.push(issue);
        }
    }

    fn error(&mut self, at: Location, code: &str, message: String) {
        self.push(Issue::error(at, code, message));
    }

    fn is_empty(&self) -> bool {
        self.issues.is_empty()
    }

    fn len(&self) -> usize {
        self.issues.len()
    }

    /// Whether enough are known to stop reading.
    fn full(&self) -> bool {
        self.issues.len() >= MAX_PROBLEMS
    }

    fn into_result(self) -> Result<(), ImportError> {
        if self.issues.is_empty() {
            Ok(())
        } else {
            Err(ImportError::Rejected(self.issues))
        }
    }
}

/// A role as written (surrounding whitespace and ASCII case ignored), or the refusal naming it.
fn role(written: &str, at: impl FnOnce() -> Location) -> Result<Role, Issue> {
    Role::parse(&written.trim().to_ascii_lowercase()).ok_or_else(|| {
        Issue::error(
            at(),
            "unknown_role",
            format!(
                "unknown role {}; a turn's role is user, assistant or system",
                quoted(&written)
            ),
        )
    })
}

/// A turn's text checked: not blank, at most [`MAX_TURN_CHARS`] characters.
fn check_text(text: &str, turn: usize, at: impl FnOnce() -> Location) -> Result<(), Issue> {
    if text.trim().is_empty() {
        return Err(Issue::error(
            at(),
            "empty_text",
            format!("turn {turn} has no text; every turn needs its words"),
        ));
    }
    // A text of no more bytes than the limit has no more characters either: counted only past it.
    let chars = match text.len() {
        n if n <= MAX_TURN_CHARS => n,
        _ => text.chars().count(),
    };
    if chars > MAX_TURN_CHARS {
        return Err(Issue::error(
            at(),
            "turn_too_long",
            format!(
                "turn {turn} holds {chars} characters; Concord imports at most {MAX_TURN_CHARS} characters per turn"
            ),
        ));
    }
    Ok(())
}

/// The refusal of a conversation of `turns` turns, over [`MAX_TURNS`].
fn too_many_turns(id: &str, turns: usize, at: Location) -> Issue {
    Issue::error(
        at,
        "too_many_turns",
        format!(
            "conversation {} holds {turns} turns; Concord imports at most {MAX_TURNS} turns per conversation (candidates included)",
            quoted(&id)
        ),
    )
}

/// The refusal of a conversation id the study already holds.
fn already_in_study(id: &str, at: Location) -> Issue {
    Issue::error(
        at,
        "conversation_exists",
        format!(
            "conversation {} is already in the study; give the new conversation its own id (importing the very same file again changes nothing)",
            quoted(&id)
        ),
    )
}

/// The refusal of a conversation with nothing a reply rubric can rate.
fn nothing_to_rate(id: &str, rubric: &str, at: Location) -> Issue {
    Issue::error(
        at,
        "no_items",
        format!(
            "conversation {} has no assistant turn to rate with rubric {}; add its replies, or rate it with a session rubric",
            quoted(&id),
            quoted(&rubric)
        ),
    )
}

/// The source named for an assistant turn: its own, else its conversation's, else `unnamed`.
pub(super) fn source_of<'a>(own: Option<&'a str>, conversation: Option<&'a str>) -> &'a str {
    own.or(conversation).unwrap_or(UNNAMED)
}

/// The source of a turn that names none.
pub const UNNAMED: &str = "unnamed";

/// A message as the writer is handed it.
pub(super) struct Message<'t> {
    pub position: i64,
    pub role: Role,
    pub text: &'t str,
    /// The resolved source of an assistant turn (see [`source_of`]); `None` for other roles.
    pub source: Option<&'t str>,
    /// A reply item (a reply rubric's rated assistant turn or candidate).
    pub rated: bool,
    /// One of several assistant replies at the last position.
    pub candidate: bool,
}

/// The writing of conversations inside the import's one transaction, counting what it wrote.
pub(super) struct Landing {
    rubric_id: i64,
    pub scope: Scope,
    /// Conversation external id → id, as the study held them before the import.
    existing: HashMap<String, i64>,
    sources: HashMap<String, i64>,
    counts: ConversationCounts,
    names: BTreeSet<String>,
    /// The rows being written (a few at a time).
    import: TranscriptImport,
}

impl Landing {
    /// Start writing: the rubric stored, the study's conversation ids read, the transaction set to
    /// write and digest the many rows in bulk.
    pub fn new(tx: &mut StudyTx<'_>, rubric: &Rubric) -> StoreResult<Landing> {
        let import = tx.begin_transcript_import()?;
        Ok(Landing {
            import,
            rubric_id: tx.add_rubric(rubric)?,
            scope: rubric.scope,
            existing: tx.conversation_ids()?,
            sources: HashMap::new(),
            counts: ConversationCounts::default(),
            names: BTreeSet::new(),
        })
    }

    /// Whether the study held conversation `id` before the import.
    pub fn in_study(&self, id: &str) -> bool {
        self.existing.contains_key(id)
    }

    /// A source by the name a file gives (`unnamed` for none), created on first use.
    fn source(&mut self, tx: &mut StudyTx<'_>, name: &str) -> StoreResult<i64> {
        if let Some(&id) = self.sources.get(name) {
            return Ok(id);
        }
        let mut spec = source_spec(name);
        if name == UNNAMED {
            spec.family = None;
            spec.kind = SourceKind::Llm;
        }
        let id = tx.upsert_source(&NewSource {
            key: &spec.key,
            name: &spec.name,
            family: spec.family.as_deref(),
            kind: spec.kind,
        })?;
        self.sources.insert(name.to_string(), id);
        self.names.insert(spec.key);
        Ok(id)
    }

    /// A new conversation (a transcript: its context empty); with a session rubric, its session
    /// item of source `session_source` too.
    pub fn conversation(
        &mut self,
        tx: &mut StudyTx<'_>,
        id: &str,
        language: Option<&str>,
        category: Option<&str>,
        session_source: &str,
    ) -> StoreResult<i64> {
        let conversation = tx.import_conversation(
            &mut self.import,
            &NewConversation {
                external_id: id,
                rubric_id: self.rubric_id,
                context: "",
                language,
                category,
            },
        )?;
        self.counts.conversations += 1;
        if self.scope == Scope::Session {
            let source = self.source(tx, session_source)?;
            tx.import_item(&mut self.import, conversation, source, None, None)?;
            self.counts.session_items += 1;
        }
        Ok(conversation)
    }

    /// One message of conversation `conversation`: a reply item when a reply rubric rates it,
    /// else a turn of its history.
    pub fn message(
        &mut self,
        tx: &mut StudyTx<'_>,
        conversation: i64,
        m: &Message<'_>,
    ) -> StoreResult<()> {
        let source = match m.source {
            Some(name) => Some(self.source(tx, name)?),
            None => None,
        };
        self.counts.turns += 1;
        match source {
            Some(source) if m.rated && self.scope == Scope::Reply => {
                tx.import_item(
                    &mut self.import,
                    conversation,
                    source,
                    Some(m.position),
                    Some(m.text),
                )?;
                self.counts.reply_items += 1;
            }
            _ => {
                tx.import_turn(
                    &mut self.import,
                    &NewTurn {
                        conversation_id: conversation,
                        position: m.position,
                        role: m.role,
                        text: m.text,
                        source_id: source,
                        candidate: m.candidate,
                    },
                )?;
            }
        }
        Ok(())
    }

    /// The rows still held written, and the counts written into `report`.
    pub fn finish(self, tx: &mut StudyTx<'_>, report: &mut FileReport) -> StoreResult<()> {
        tx.finish_transcript_import(self.import)?;
        let mut counts = self.counts;
        counts.sources = self.names.len();
        counts.source_names = self.names.into_iter().collect();
        report.conversations_added = counts.conversations;
        report.responses_added = counts.reply_items + counts.session_items;
        report.conversation_counts = Some(Box::new(counts));
        Ok(())
    }
}

/// The shared end of both formats: in one transaction (unless the same bytes were imported
/// meanwhile), `write` the file's conversations through a [`Landing`], then record the file.
pub(super) fn land_conversations(
    store: &mut Store,
    file: &InputFile<'_>,
    sheet: Option<String>,
    rubric: &Rubric,
    options: &ImportOptions,
    write: impl FnOnce(&mut StudyTx<'_>, &mut Landing, &mut FileReport) -> Result<(), ImportError>,
) -> Result<FileReport, ImportError> {
    let report = FileReport::new(&file.name, sheet, KIND, &file.sha);
    store.write(|tx| {
        land(tx, report, options, |tx, report| {
            let mut landing = Landing::new(tx, rubric)?;
            write(tx, &mut landing, report)?;
            landing.finish(tx, report)?;
            Ok(())
        })
    })
}

/// Tell `progress` how far the reading has come, every [`PROGRESS_EVERY_ROWS`] rows.
pub(super) fn tick(progress: &mut dyn FnMut(ImportProgress), rows: u64, done: u64, total: u64) {
    if rows.is_multiple_of(PROGRESS_EVERY_ROWS) {
        progress(ImportProgress {
            done: done.min(total.saturating_sub(1)),
            total,
            rows,
        });
    }
}
