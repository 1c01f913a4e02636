//! The turn table: one row per turn, `conversation_id, turn, role, text` and optional `source,
//! category, language`, as CSV, XLSX or JSON Lines. Rows may come in any order, so the file is
//! read twice: the first reading checks every row and keeps, per conversation, only the shape of
//! its turns (turn number, role, source, row: a few bytes each, never the text), then checks each
//! conversation whole — turn numbers running 1, 2, 3 … with no gap or repeat, several `assistant`
//! rows at one turn (candidates) only at the last turn and after a user turn, one candidate per
//! source, one language and category; the second reading writes the rows. A file whose rows
//! come conversation by conversation, as most do, is first tried in one reading: each
//! conversation's rows are held until its last (text included, up to a bound), checked whole the
//! same way and written; at the first problem, or a conversation whose rows are not together,
//! that attempt is rolled back and the file read twice as above, so every problem is still found
//! and named the same way. CSV and JSON Lines are streamed; a workbook is read once, within the
//! read limits, as every workbook is. Every assistant row is a reply item of a reply rubric.

use super::super::long::{open_counted, required, stream_limits, RatingRow, RatingRows};
use super::{
    already_in_study, check_text, land_conversations, nothing_to_rate, role, source_of, tick,
    too_many_turns, InputFile, Landing, Message, Problems, TableFormat, MAX_TURNS, UNNAMED,
};
use crate::base::text::quoted;
use crate::files::bounds::ReadLimits;
use crate::files::table::{check_headers, read_file, read_table_within, FileFormat, RawTable};
use crate::files::{Issue, Location};
use crate::intake::{FileReport, ImportError, ImportOptions, ImportProgress};
use crate::rubric::{Rubric, Scope};
use crate::store::{Role, Store, StoreResult, StudyTx};
use std::cell::Cell as Shared;
use std::collections::HashMap;
use std::rc::Rc;

/// The columns of a turn table, required first.
const COLUMNS: [&str; 7] = [
    "conversation_id",
    "turn",
    "role",
    "text",
    "source",
    "category",
    "language",
];

/// Where the columns are: `conversation_id, turn, role, text`, then the optional three.
struct Columns {
    id: usize,
    turn: usize,
    role: usize,
    text: usize,
    source: Option<usize>,
    category: Option<usize>,
    language: Option<usize>,
}

/// A turn as the first reading keeps it.
#[derive(Debug, Clone, Copy)]
struct Shape {
    turn: u32,
    role: Role,
    /// The source's position in [`Plan::names`], `NO_SOURCE` when the row names none.
    source: u32,
    row: u32,
}

const NO_SOURCE: u32 = u32::MAX;

/// What the first reading knows of one conversation.
#[derive(Default)]
struct Planned {
    first_row: usize,
    language: Option<(Box<str>, usize)>,
    category: Option<(Box<str>, usize)>,
    turns: Vec<Shape>,
    /// The turn of its candidates, when it has some.
    candidates: Option<u32>,
    /// The source of its session item.
    session_source: Option<Box<str>>,
    /// Its id in the study once written.
    stored: Option<i64>,
}

impl Planned {
    /// Its id in the study, the conversation created there at the first call.
    fn stored_id(
        &mut self,
        tx: &mut StudyTx<'_>,
        landing: &mut Landing,
        id: &str,
    ) -> StoreResult<i64> {
        if let Some(stored) = self.stored {
            return Ok(stored);
        }
        let stored = landing.conversation(
            tx,
            id,
            self.language.as_ref().map(|(l, _)| &**l),
            self.category.as_ref().map(|(l, _)| &**l),
            self.session_source.as_deref().unwrap_or(UNNAMED),
        )?;
        self.stored = Some(stored);
        Ok(stored)
    }

    /// Write one of its turns (an assistant's is rated; at its candidates' turn, a candidate).
    #[allow(clippy::too_many_arguments)]
    fn land_turn(
        &self,
        tx: &mut StudyTx<'_>,
        landing: &mut Landing,
        conversation: i64,
        turn: u32,
        role: Role,
        text: &str,
        source: Option<&str>,
    ) -> StoreResult<()> {
        let assistant = role == Role::Assistant;
        landing.message(
            tx,
            conversation,
            &Message {
                position: turn as i64,
                role,
                text,
                source: assistant.then(|| source_of(source, None)),
                rated: assistant,
                candidate: Some(turn) == self.candidates,
            },
        )
    }
}

/// The first reading's result: every conversation by id, and the sources named (looked up once
/// per row each: a fast hash).
#[derive(Default)]
struct Plan {
    conversations: foldhash::HashMap<Box<str>, Planned>,
    names: Vec<Box<str>>,
    positions: foldhash::HashMap<Box<str>, u32>,
}

impl Plan {
    fn source(&mut self, name: Option<&str>) -> u32 {
        let Some(name) = name else { return NO_SOURCE };
        if let Some(&p) = self.positions.get(name) {
            return p;
        }
        let p = self.names.len() as u32;
        self.names.push(name.into());
        self.positions.insert(name.into(), p);
        p
    }
}

/// A row of the conversation being read in one reading, held until its last row.
struct Held {
    turn: u32,
    role: Role,
    text: String,
    source: Option<String>,
}

/// Bytes of text one conversation's held rows may hold in a reading at once; past it the file
/// is read twice, which holds no text.
const HELD_BYTES: usize = 8 << 20;

/// One row's fields, checked.
struct TurnRow<'r> {
    number: usize,
    id: std::borrow::Cow<'r, str>,
    turn: u32,
    role: Role,
    text: std::borrow::Cow<'r, str>,
    source: Option<std::borrow::Cow<'r, str>>,
    category: Option<std::borrow::Cow<'r, str>>,
    language: Option<std::borrow::Cow<'r, str>>,
}

/// Import a turn table; see the module documentation.
pub(super) fn import(
    store: &mut Store,
    file: &InputFile<'_>,
    format: TableFormat,
    rubric: &Rubric,
    options: &ImportOptions,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<FileReport, ImportError> {
    let limits = ReadLimits::from_env();
    let workbook = match format {
        TableFormat::Xlsx => {
            let bytes = read_file(file.path, &limits).map_err(ImportError::Rejected)?;
            Some(
                read_table_within(&file.name, &bytes, FileFormat::Xlsx, None, &limits)
                    .map_err(ImportError::Rejected)?,
            )
        }
        _ => None,
    };
    let named: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    let header = match (&workbook, format) {
        (Some(table), _) => header_of(table),
        (None, TableFormat::Csv) => {
            let reader = open_counted(file.path, &file.name, Default::default())?;
            let header = RawTable {
                file: file.name.clone(),
                sheet: None,
                headers: reader.headers().to_vec(),
                rows: Vec::new(),
            };
            check_headers(&header).map_err(ImportError::Rejected)?;
            header
        }
        (None, _) => RawTable {
            file: file.name.clone(),
            sheet: None,
            headers: named.clone(),
            rows: Vec::new(),
        },
    };
    let columns = columns(&header)?;
    let stream_limits = stream_limits();
    let open = |read: Rc<Shared<u64>>| -> Result<RatingRows<'_>, ImportError> {
        Ok(match (&workbook, format) {
            (Some(table), _) => RatingRows::Table { table, next: 0 },
            (None, TableFormat::Csv) => {
                RatingRows::Stream(Box::new(open_counted(file.path, &file.name, read)?))
            }
            (None, _) => RatingRows::Lines {
                lines: Box::new(file.json_lines(read)?),
                headers: &named,
                limits: stream_limits,
                records: 0,
            },
        })
    };
    let sized = workbook.as_ref().map(|t| t.rows.len() as u64);
    let total = 2 * sized.unwrap_or(file.size);
    let reading = Reading {
        header: &header,
        columns: &columns,
        rubric,
    };
    // One reading when the rows come conversation by conversation and all is well; else (a
    // conversation's rows scattered, any problem) that transaction is rolled back and the file
    // imported again in two readings, which find and name every problem.
    let scattered = Shared::new(false);
    let once = land_conversations(
        store,
        file,
        header.sheet.clone(),
        rubric,
        options,
        |tx, landing, _| {
            let read = Rc::new(Shared::new(0u64));
            let mut rows = open(read.clone())?;
            let written = reading.at_once(tx, landing, &mut rows, &mut |rows| {
                let done = sized.map_or(read.get(), |_| rows);
                tick(progress, rows, 2 * done, total);
            })?;
            if !written {
                scattered.set(true);
                return Err(ImportError::Rejected(Vec::new()));
            }
            Ok(())
        },
    );
    let report = match once {
        Err(_) if scattered.get() => {
            two_readings(store, file, &reading, open, sized, total, options, progress)?
        }
        done => done?,
    };
    progress(ImportProgress {
        done: total,
        total,
        rows: report
            .conversation_counts
            .as_ref()
            .map_or(0, |c| c.turns as u64),
    });
    Ok(report)
}

/// The import in two readings: the first checks every row and conversation, the second writes.
#[allow(clippy::too_many_arguments)]
fn two_readings<'f>(
    store: &mut Store,
    file: &InputFile<'_>,
    reading: &Reading<'_>,
    open: impl Fn(Rc<Shared<u64>>) -> Result<RatingRows<'f>, ImportError>,
    sized: Option<u64>,
    total: u64,
    options: &ImportOptions,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<FileReport, ImportError> {
    land_conversations(
        store,
        file,
        reading.header.sheet.clone(),
        reading.rubric,
        options,
        |tx, landing, _| {
            let read = Rc::new(Shared::new(0u64));
            let mut rows = open(read.clone())?;
            let mut counted = 0u64;
            let plan = reading.plan(landing, &mut rows, &mut |rows| {
                counted = rows;
                let done = sized.map_or(read.get(), |_| rows);
                tick(progress, rows, done, total);
            })?;
            let again = Rc::new(Shared::new(0u64));
            let mut rows = open(again.clone())?;
            let half = total / 2;
            reading.write(tx, landing, plan, &mut rows, &mut |rows| {
                let done = half + sized.map_or(again.get(), |_| rows);
                tick(progress, counted + rows, done, total);
            })
        },
    )
}

/// A table's file, sheet and columns without its rows.
fn header_of(table: &RawTable) -> RawTable {
    RawTable {
        file: table.file.clone(),
        sheet: table.sheet.clone(),
        headers: table.headers.clone(),
        rows: Vec::new(),
    }
}

/// The columns of `header`: the four required ones present, the optional ones where they are.
fn columns(header: &RawTable) -> Result<Columns, ImportError> {
    let names: Vec<(&str, &str)> = COLUMNS[..4].iter().map(|c| (*c, *c)).collect();
    let found = required(header, &names).map_err(ImportError::Rejected)?;
    Ok(Columns {
        id: found[0],
        turn: found[1],
        role: found[2],
        text: found[3],
        source: header.column("source"),
        category: header.column("category"),
        language: header.column("language"),
    })
}

/// Both readings of one file.
struct Reading<'a> {
    header: &'a RawTable,
    columns: &'a Columns,
    rubric: &'a Rubric,
}

impl Reading<'_> {
    fn at(&self, row: usize, column: usize) -> Location {
        self.header.at(row, Some(column))
    }

    /// One row read and checked: an id, a turn number within the limit, a known role, a text
    /// within the limit.
    fn row<'r>(&self, row: &'r dyn RatingRow) -> Result<TurnRow<'r>, Vec<Issue>> {
        let c = self.columns;
        let number = row.number();
        let mut problems = Vec::new();
        let id = row.text(c.id);
        if id.is_none() {
            problems.push(Issue::error(
                self.at(number, c.id),
                "missing_value",
                "the row has no conversation_id".to_string(),
            ));
        }
        let turn = match row.text(c.turn) {
            None => Err(Issue::error(
                self.at(number, c.turn),
                "missing_turn",
                "the row has no turn number".to_string(),
            )),
            Some(t) => self.turn(&t, number),
        };
        let role = match row.text(c.role) {
            None => Err(Issue::error(
                self.at(number, c.role),
                "unknown_role",
                "the row has no role; a turn's role is user, assistant or system".to_string(),
            )),
            Some(r) => role(&r, || self.at(number, c.role)),
        };
        let text = row.untrimmed(c.text);
        let checked = check_text(
            text.as_deref().unwrap_or_default(),
            *turn.as_ref().unwrap_or(&0) as usize,
            || self.at(number, c.text),
        );
        match (id, turn, role, text, checked) {
            (Some(id), Ok(turn), Ok(role), Some(text), Ok(())) if problems.is_empty() => {
                Ok(TurnRow {
                    number,
                    id,
                    turn,
                    role,
                    text,
                    source: c.source.and_then(|s| row.text(s)),
                    category: c.category.and_then(|s| row.text(s)),
                    language: c.language.and_then(|s| row.text(s)),
                })
            }
            (_, turn, role, _, checked) => {
                problems.extend(turn.err());
                problems.extend(role.err());
                problems.extend(checked.err());
                Err(problems)
            }
        }
    }

    /// A turn number as written: a whole number from 1 to [`MAX_TURNS`].
    fn turn(&self, written: &str, number: usize) -> Result<u32, Issue> {
        let at = || self.at(number, self.columns.turn);
        let n = written
            .parse::<u64>()
            .ok()
            .or_else(|| {
                written
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x < 1e15)
                    .map(|x| x as u64)
            })
            .filter(|&n| n >= 1)
            .ok_or_else(|| {
                Issue::error(
                    at(),
                    "bad_turn",
                    format!("{} is not a turn number (1, 2, 3 …)", quoted(&written)),
                )
            })?;
        if n > MAX_TURNS as u64 {
            return Err(Issue::error(
                at(),
                "too_many_turns",
                format!(
                    "turn {n} is past the limit: Concord imports at most {MAX_TURNS} turns per conversation (candidates included)"
                ),
            ));
        }
        Ok(n as u32)
    }

    /// The first reading: every row checked and its shape kept, then every conversation
    /// checked whole; every problem found, or the plan.
    fn plan(
        &self,
        landing: &Landing,
        rows: &mut RatingRows<'_>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Plan, ImportError> {
        let mut plan = Plan::default();
        let mut problems = Problems::default();
        let mut read_issues = Vec::new();
        let mut counted = 0u64;
        let rows_read = rows.each(&mut read_issues, |row, _| {
            counted += 1;
            progress(counted);
            match self.row(row) {
                Ok(r) => self.keep(&mut plan, &r, &mut problems),
                Err(found) => found.into_iter().for_each(|i| problems.push(i)),
            }
            Ok(())
        })?;
        if !read_issues.is_empty() {
            return Err(ImportError::Rejected(read_issues));
        }
        if rows_read == 0 && problems.is_empty() {
            problems.error(
                self.header.whole(),
                "empty_file",
                "the file has a header row but no data rows".to_string(),
            );
        }
        if problems.is_empty() {
            let names = plan.names.clone();
            for (id, c) in plan.conversations.iter_mut() {
                self.check(id, c, &names, landing, &mut problems);
                if problems.full() {
                    break;
                }
            }
        }
        problems.into_result()?;
        Ok(plan)
    }

    /// Keep a checked row's shape in its conversation (a language or category differing from the
    /// conversation's earlier rows is a problem).
    fn keep(&self, plan: &mut Plan, r: &TurnRow<'_>, problems: &mut Problems) {
        let source = plan.source(r.source.as_deref());
        if !plan.conversations.contains_key(r.id.as_ref()) {
            plan.conversations
                .insert(r.id.as_ref().into(), Planned::default());
        }
        let Some(c) = plan.conversations.get_mut(r.id.as_ref()) else {
            return;
        };
        if c.turns.is_empty() {
            c.first_row = r.number;
        }
        for (value, kept, column, what) in [
            (
                &r.language,
                &mut c.language,
                self.columns.language,
                "language",
            ),
            (
                &r.category,
                &mut c.category,
                self.columns.category,
                "category",
            ),
        ] {
            let (Some(value), Some(column)) = (value, column) else {
                continue;
            };
            match kept {
                Some((first, row)) if **first != **value => problems.error(
                    self.at(r.number, column),
                    "conflicting_conversation",
                    format!(
                        "conversation {} has {what} {} here and {} in row {row}; a conversation has one {what}",
                        quoted(&r.id),
                        quoted(value),
                        quoted(first)
                    ),
                ),
                Some(_) => {}
                None => *kept = Some((value.as_ref().into(), r.number)),
            }
        }
        c.turns.push(Shape {
            turn: r.turn,
            role: r.role,
            source,
            row: r.number as u32,
        });
    }

    /// Check one conversation whole (see the module documentation); on success note its
    /// candidates' turn and its session item's source.
    fn check(
        &self,
        id: &str,
        c: &mut Planned,
        names: &[Box<str>],
        landing: &Landing,
        problems: &mut Problems,
    ) {
        let cols = self.columns;
        let first = c.first_row;
        let name = |s: u32| names.get(s as usize).map(|n| &**n);
        if landing.in_study(id) {
            problems.push(already_in_study(id, self.at(first, cols.id)));
            return;
        }
        if c.turns.len() > MAX_TURNS {
            problems.push(too_many_turns(id, c.turns.len(), self.at(first, cols.id)));
            return;
        }
        c.turns.sort_by_key(|t| (t.turn, t.row));
        let last = c.turns.last().map_or(0, |t| t.turn);
        let mut expected = 1;
        let mut i = 0;
        let before = problems.len();
        while i < c.turns.len() {
            let t = c.turns[i].turn;
            let group: Vec<Shape> = c.turns[i..]
                .iter()
                .take_while(|s| s.turn == t)
                .copied()
                .collect();
            i += group.len();
            if t > expected {
                problems.error(
                    self.at(first, cols.turn),
                    "missing_turn",
                    format!(
                        "conversation {} has no turn {expected}{}; its turns must run 1, 2, 3 … up to {last} with no gap",
                        quoted(&id),
                        if t > expected + 1 { format!(" to {}", t - 1) } else { String::new() }
                    ),
                );
            }
            expected = t + 1;
            if group.len() == 1 {
                continue;
            }
            let second = group[1];
            if group.iter().any(|s| s.role != Role::Assistant) {
                problems.error(
                    self.at(second.row as usize, cols.turn),
                    "duplicate_turn",
                    format!(
                        "conversation {} has turn {t} again (first in row {}); only candidates — several assistant replies at the last turn — share a turn number",
                        quoted(&id),
                        group[0].row
                    ),
                );
                continue;
            }
            if t != last {
                problems.error(
                    self.at(second.row as usize, cols.turn),
                    "candidates_not_last",
                    format!(
                        "conversation {} has several assistant replies at turn {t} (rows {} and {}), which is not its last turn ({last}); candidates are allowed only at the last turn",
                        quoted(&id),
                        group[0].row,
                        second.row
                    ),
                );
                continue;
            }
            self.check_candidates(id, &c.turns, &group, names, problems);
            c.candidates = Some(t);
        }
        let assistants = c.turns.iter().filter(|s| s.role == Role::Assistant);
        if self.rubric.scope == Scope::Reply && assistants.clone().count() == 0 {
            problems.push(nothing_to_rate(
                id,
                &self.rubric.id,
                self.at(first, cols.role),
            ));
        }
        if problems.len() == before {
            let mut named = assistants
                .filter(|s| Some(s.turn) != c.candidates)
                .map(|s| name(s.source));
            c.session_source = Some(match named.next() {
                Some(Some(first)) if named.all(|s| s == Some(first)) => first.into(),
                _ => UNNAMED.into(),
            });
        }
    }

    /// The candidates of conversation `id` at its last turn (`group`, two or more assistant
    /// rows): after a user turn, one per source.
    fn check_candidates(
        &self,
        id: &str,
        turns: &[Shape],
        group: &[Shape],
        names: &[Box<str>],
        problems: &mut Problems,
    ) {
        let cols = self.columns;
        let t = group[0].turn;
        let name = |s: u32| names.get(s as usize).map(|n| &**n);
        let previous = turns.iter().rfind(|s| s.turn + 1 == t);
        if previous.is_none_or(|p| p.role != Role::User) {
            problems.error(
                self.at(group[0].row as usize, cols.turn),
                "candidates_not_last",
                format!(
                    "the candidates of conversation {} at turn {t} must follow a user turn",
                    quoted(&id)
                ),
            );
        }
        let mut seen: HashMap<&str, u32> = HashMap::new();
        for s in group {
            let source = source_of(name(s.source), None);
            if let Some(row) = seen.insert(source, s.row) {
                problems.error(
                    self.at(s.row as usize, cols.source.unwrap_or(cols.role)),
                    "duplicate_candidate",
                    format!(
                        "conversation {} has two candidates from {} at turn {t} (rows {row} and {}); the candidates at a turn are one per source",
                        quoted(&id),
                        quoted(&source),
                        s.row
                    ),
                );
            }
        }
    }

    /// The import in one reading, for a file whose rows come conversation by conversation:
    /// each conversation's rows are held (with their texts, up to [`HELD_BYTES`]) until its
    /// last, then checked whole as [`Reading::plan`] checks it and written as
    /// [`Reading::write`] writes it, so the study ends the same. `false` as soon as that cannot
    /// be done — a row or conversation with a problem, a conversation whose rows are not
    /// together, more text held than the bound, a reading problem, no rows — and the caller
    /// rolls back what was written and imports the file in two readings.
    fn at_once(
        &self,
        tx: &mut StudyTx<'_>,
        landing: &mut Landing,
        rows: &mut RatingRows<'_>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<bool, ImportError> {
        let mut plan = Plan::default();
        let mut held: Vec<Held> = Vec::new();
        let mut held_bytes = 0usize;
        let mut current: Option<Box<str>> = None;
        let mut done: foldhash::HashSet<Box<str>> = Default::default();
        let mut read_issues = Vec::new();
        let mut counted = 0u64;
        let mut together = true;
        let rows_read = rows.each(&mut read_issues, |row, _| {
            if !together {
                return Ok(());
            }
            counted += 1;
            progress(counted);
            let Ok(r) = self.row(row) else {
                together = false;
                return Ok(());
            };
            if current.as_deref() != Some(r.id.as_ref()) {
                if let Some(id) = current.take() {
                    if !self.land_held(tx, landing, &mut plan, &id, &mut held)? {
                        together = false;
                        return Ok(());
                    }
                    held_bytes = 0;
                    done.insert(id);
                }
                if done.contains(r.id.as_ref()) {
                    together = false;
                    return Ok(());
                }
                current = Some(r.id.as_ref().into());
            }
            let mut problems = Problems::default();
            self.keep(&mut plan, &r, &mut problems);
            held_bytes += r.text.len();
            if !problems.is_empty() || held_bytes > HELD_BYTES {
                together = false;
                return Ok(());
            }
            held.push(Held {
                turn: r.turn,
                role: r.role,
                text: r.text.into_owned(),
                source: r.source.map(|s| s.into_owned()),
            });
            Ok(())
        })?;
        if !together || !read_issues.is_empty() || rows_read == 0 {
            return Ok(false);
        }
        match current {
            Some(id) => self.land_held(tx, landing, &mut plan, &id, &mut held),
            None => Ok(false),
        }
    }

    /// Check conversation `id` (its shapes in `plan`, its rows in `held`) whole and write it;
    /// `false`, nothing written, when it has a problem.
    fn land_held(
        &self,
        tx: &mut StudyTx<'_>,
        landing: &mut Landing,
        plan: &mut Plan,
        id: &str,
        held: &mut Vec<Held>,
    ) -> Result<bool, ImportError> {
        let Some(mut c) = plan.conversations.remove(id) else {
            return Ok(false);
        };
        let mut problems = Problems::default();
        self.check(id, &mut c, &plan.names, landing, &mut problems);
        if !problems.is_empty() {
            return Ok(false);
        }
        let conversation = c.stored_id(tx, landing, id)?;
        for r in held.drain(..) {
            c.land_turn(
                tx,
                landing,
                conversation,
                r.turn,
                r.role,
                &r.text,
                r.source.as_deref(),
            )?;
        }
        Ok(true)
    }

    /// The second reading: every row written, its conversation created at its first row.
    fn write(
        &self,
        tx: &mut StudyTx<'_>,
        landing: &mut Landing,
        mut plan: Plan,
        rows: &mut RatingRows<'_>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), ImportError> {
        let mut read_issues = Vec::new();
        let mut counted = 0u64;
        rows.each(&mut read_issues, |row, _| {
            counted += 1;
            progress(counted);
            // Every row passed the first reading: one that reads differently now changed since.
            let r = self.row(row).map_err(ImportError::Rejected)?;
            let Some(c) = plan.conversations.get_mut(r.id.as_ref()) else {
                return Err(changed(self.header, r.number));
            };
            let conversation = c.stored_id(tx, landing, &r.id)?;
            c.land_turn(
                tx,
                landing,
                conversation,
                r.turn,
                r.role,
                &r.text,
                r.source.as_deref(),
            )?;
            Ok(())
        })?;
        if !read_issues.is_empty() {
            return Err(ImportError::Rejected(read_issues));
        }
        Ok(())
    }
}

/// The refusal of a file that changed between its two readings.
fn changed(header: &RawTable, row: usize) -> ImportError {
    ImportError::one(
        header.at(row, None),
        "file_changed",
        "the file changed while it was imported; import it again".to_string(),
    )
}
