//! The tamper-evident audit trail. Every write transaction that changes result data appends
//! entries to `audit_log` whose SHA-256 `hash` covers the previous entry's hash, the entry's own
//! fields and `state`: a digest of every row of the tracked tables (ratings of every occasion,
//! retests included, their history, flags, assignments, signatures, adjudications, judge runs and
//! their calls — each call's raw output and scores) after the transaction. Schema 12 moved retest
//! ratings from their own table into `rating`; the upgrade's `schema.upgrade` entry carries that
//! move into the sealed state (see [`seal_migration`]), so a chain from before it still verifies.
//! The digest is a multiset hash — the
//! lane-wise wrapping sum of the SHA-256 of each row's canonical encoding — so a write updates it
//! in O(1) per changed row: temporary triggers, created on Concord's own connection only, feed
//! every inserted, deleted and updated row to `concord_audit_row`, which adds or subtracts its
//! hash. A bulk rating import sets the insert trigger on `rating` aside for each batch it writes
//! and adds each new row's hash itself, computed from the values it binds in the table's column
//! order — the hash the trigger computes — because a statement with a trigger keeps a statement
//! journal, most of a large import's time. A change made with any other tool fires no trigger, so the tables stop matching the
//! sealed state; an edited, inserted or deleted entry breaks the hash links. [`Store::verify_audit_chain`] checks
//! both and names the first broken entry or the table that no longer matches.
//!
//! One entry per event when a transaction records up to [`EVENTS_PER_ENTRY_LIMIT`] rating events
//! (and always in a [`Store::write_each`], whose items are separate people's saves);
//! bulk writes (imports, judge results, merges) record one entry with the count and a SHA-256 of
//! their events, and the state digest covers every row they wrote. A study from before the chain
//! gets a `chain.start` entry at the upgrade that says so and seals the state it found.

use super::{Store, StoreResult, StudyTx};
use crate::base::clock::Millis;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use sha2::{Digest as _, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// The tables whose rows the chain seals (those that exist in this study).
pub const TRACKED_TABLES: &[&str] = &[
    "rating",
    "rating_history",
    // Test–retest ratings had their own table until schema 12 moved them into `rating`; a
    // study not yet upgraded still has it.
    "retest_rating",
    "flag",
    "assignment",
    "signature",
    "signed_rating",
    "adjudication",
    "judge_run",
    "judge_call",
    "pair",
    "pair_assignment",
    "pair_judgement",
    "pair_judgement_history",
    "pair_flag",
    // What gives a value its meaning (schema 20 on): who the raters are, which model each
    // source is, the rubric and its criteria, the conversations and the texts rated, the
    // packages issued, who may log in from a browser and sign, and the study's own settings.
    "rater",
    "source",
    "rubric",
    "criterion",
    "conversation",
    "response",
    "pair_design",
    "package",
    "package_source",
    "web_login",
    "web_invitation",
    "web_session",
    "signing_key",
    "study_meta",
    // The turns of a conversation imported as a transcript (schema 23 on).
    "turn",
    // Evidence spans marked in replies (schema 24 on).
    "span",
];

/// The marker of the migration from which on the chain seals what gives a value its meaning.
const MEANING_MARKER: &str = "what gives a value its meaning joins the audit chain";

/// Columns left out of a tracked table's digest: what changes with use, not with meaning
/// (a failed login's count and lock-out, when a login or session was last seen). Concord writes
/// them without an audit entry; changed outside it, they change no value's meaning.
pub const VOLATILE_COLUMNS: &[(&str, &[&str])] = &[
    (
        "web_login",
        &["failures", "locked_until", "last_login", "last_seen"],
    ),
    ("web_session", &["last_seen"]),
];

/// `study_meta` keys outside the seal: the chain's own head (written as each entry is sealed),
/// the entry a lead key was made at (a setting earlier versions wrote; the entry is read from the
/// chain itself), a rater package's seal (which
/// carries its own MAC, renewed after the chain's seal) and who is at the window now.
pub const UNSEALED_META: &[&str] = &["audit.head", "lead.key_entry", "rater_session"];
pub const UNSEALED_META_PREFIX: &str = "seal.";

/// ` WHERE …` keeping only the sealed rows of `table` (named `alias`), or nothing when all are.
fn where_sealed(table: &str, alias: &str) -> String {
    sealed_rows(table, alias).map_or(String::new(), |c| format!(" WHERE {c}"))
}

/// The SQL condition that a row of `table` (named `alias` in the statement) is sealed; `None`
/// when every row is.
pub fn sealed_rows(table: &str, alias: &str) -> Option<String> {
    (table == "study_meta").then(|| {
        let keys = UNSEALED_META
            .iter()
            .map(|k| format!("'{k}'"))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "{alias}.\"key\" NOT IN ({keys}) AND substr({alias}.\"key\", 1, {n}) <> '{UNSEALED_META_PREFIX}'",
            n = UNSEALED_META_PREFIX.len()
        )
    })
}

/// Tables the chain began to seal after it started, with the text that marks the migration
/// from which on it does: a study chained before that version holds their rows outside its
/// sealed state, so its upgrade seals them (see [`before_migration`]).
const TRACKED_SINCE_MARKER: &[(&str, &str)] = &[
    ("judge_run", "judge results join the audit chain"),
    ("judge_call", "judge results join the audit chain"),
    ("rater", MEANING_MARKER),
    ("source", MEANING_MARKER),
    ("rubric", MEANING_MARKER),
    ("criterion", MEANING_MARKER),
    ("conversation", MEANING_MARKER),
    ("response", MEANING_MARKER),
    ("pair_design", MEANING_MARKER),
    ("package", MEANING_MARKER),
    ("package_source", MEANING_MARKER),
    ("web_login", MEANING_MARKER),
    ("web_invitation", MEANING_MARKER),
    ("web_session", MEANING_MARKER),
    ("signing_key", MEANING_MARKER),
    ("study_meta", MEANING_MARKER),
    ("turn", TURNS_MARKER),
];

/// The marker of the migration that brought conversations of many turns.
const TURNS_MARKER: &str = "conversations of many turns";

/// Columns a migration added to a table the chain already sealed, hashed only when set: a row
/// from before the migration (the column NULL) hashes exactly as it did, so the upgrade changes
/// no sealed digest. Each entry names the table and the position (0-based, among the columns its
/// digest covers) of the first such column; they are always its last columns. A table that does
/// not have them yet (a study being upgraded) hashes all its columns, as before.
pub const LATE_COLUMNS: &[(&str, usize)] = &[
    // `response.turn` (schema 23), after id, conversation_id, source_id, text, external_id.
    ("response", 5),
];

/// More rating events than this in one transaction are sealed as one batch entry.
pub const EVENTS_PER_ENTRY_LIMIT: usize = 64;

const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A multiset digest: the lane-wise wrapping sum of row hashes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowDigest([u64; 4]);

impl RowDigest {
    fn lanes(hash: &[u8]) -> [u64; 4] {
        let mut out = [0u64; 4];
        for (i, lane) in out.iter_mut().enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(&hash[i * 8..i * 8 + 8]);
            *lane = u64::from_le_bytes(b);
        }
        out
    }
    fn add_hash(&mut self, hash: &[u8]) {
        for (a, b) in self.0.iter_mut().zip(Self::lanes(hash)) {
            *a = a.wrapping_add(b);
        }
    }
    fn sub_hash(&mut self, hash: &[u8]) {
        for (a, b) in self.0.iter_mut().zip(Self::lanes(hash)) {
            *a = a.wrapping_sub(b);
        }
    }
    fn add(&mut self, other: &RowDigest) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a = a.wrapping_add(b);
        }
    }
    fn is_zero(&self) -> bool {
        self.0 == [0; 4]
    }
    fn to_hex(self) -> String {
        self.0.iter().map(|l| format!("{l:016x}")).collect()
    }
    fn from_hex(s: &str) -> Option<RowDigest> {
        if s.len() != 64 {
            return None;
        }
        let mut out = [0u64; 4];
        for (i, lane) in out.iter_mut().enumerate() {
            *lane = u64::from_str_radix(&s[i * 16..i * 16 + 16], 16).ok()?;
        }
        Some(RowDigest(out))
    }
}

/// Digests per table, serialised as `table=hex;…` in table order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct State(BTreeMap<String, RowDigest>);

impl State {
    fn encode(&self) -> String {
        self.0
            .iter()
            .filter(|(_, d)| !d.is_zero())
            .map(|(t, d)| format!("{t}={}", d.to_hex()))
            .collect::<Vec<_>>()
            .join(";")
    }
    fn decode(s: &str) -> Option<State> {
        let mut map = BTreeMap::new();
        for part in s.split(';').filter(|p| !p.is_empty()) {
            let (t, h) = part.split_once('=')?;
            map.insert(t.to_string(), RowDigest::from_hex(h)?);
        }
        Some(State(map))
    }
    /// `self + (after - before)`, table by table.
    fn moved_by(&self, before: &State, after: &State) -> State {
        let mut out = self.clone();
        for (t, d) in &after.0 {
            out.0.entry(t.clone()).or_default().add(d);
        }
        for (t, d) in &before.0 {
            let e = out.0.entry(t.clone()).or_default();
            for (a, b) in e.0.iter_mut().zip(d.0) {
                *a = a.wrapping_sub(b);
            }
        }
        out
    }
    fn get(&self, table: &str) -> RowDigest {
        self.0.get(table).copied().unwrap_or_default()
    }
}

/// Tables whose rows the chain also remembers one by one (`sealed_row`: each row's hash under
/// its first column), so that `verify` can name the row changed outside Concord, not only the
/// table. Only small tables: the digest alone still detects every change.
const ROW_NAMED_TABLES: &[&str] = &[
    "rater",
    "source",
    "rubric",
    "criterion",
    "pair_design",
    "package",
    "package_source",
    "web_login",
    "web_invitation",
    "web_session",
    "signing_key",
    "study_meta",
];

/// Row changes seen by the triggers of one connection since the last seal.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pending {
    delta: BTreeMap<String, RowDigest>,
    rows: BTreeMap<String, (u64, u64)>,
    /// The last hash seen for each row of a [`ROW_NAMED_TABLES`] table (none: deleted).
    named: BTreeMap<(String, String), Option<[u8; 32]>>,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

pub(crate) type PendingCell = Arc<Mutex<Pending>>;

/// A value as the row digest encodes it: a type byte, then the integer or float's 8 bytes, or a
/// text or blob's length (8 bytes) and bytes; nothing more for a null.
fn encode_value(out: &mut Vec<u8>, v: ValueRef<'_>) {
    match v {
        ValueRef::Null => out.push(0),
        ValueRef::Integer(i) => {
            out.push(1);
            out.extend_from_slice(&i.to_le_bytes());
        }
        ValueRef::Real(f) => {
            out.push(2);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        ValueRef::Text(t) => {
            out.push(3);
            out.extend_from_slice(&(t.len() as u64).to_le_bytes());
            out.extend_from_slice(t);
        }
        ValueRef::Blob(b) => {
            out.push(4);
            out.extend_from_slice(&(b.len() as u64).to_le_bytes());
            out.extend_from_slice(b);
        }
    }
}

fn row_hash<'a>(table: &str, values: impl Iterator<Item = ValueRef<'a>>) -> [u8; 32] {
    row_hash_with(&mut Vec::new(), table, values)
}

/// [`row_hash`], the row's bytes gathered in `scratch` (cleared first) and hashed at once: a
/// bulk insert hashing millions of rows reuses one buffer.
fn row_hash_with<'a>(
    scratch: &mut Vec<u8>,
    table: &str,
    values: impl Iterator<Item = ValueRef<'a>>,
) -> [u8; 32] {
    scratch.clear();
    scratch.extend_from_slice(&(table.len() as u64).to_le_bytes());
    scratch.extend_from_slice(table.as_bytes());
    // A late column counts only when set (see LATE_COLUMNS).
    let first_late = LATE_COLUMNS
        .iter()
        .find(|(t, _)| *t == table)
        .map_or(usize::MAX, |(_, at)| *at);
    for (i, v) in values.enumerate() {
        if i >= first_late && matches!(v, ValueRef::Null) {
            continue;
        }
        encode_value(scratch, v);
    }
    Sha256::digest(scratch.as_slice()).into()
}

/// How a row is named in `sealed_row` and in `verify`'s message: its first column as text.
fn row_key(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Null => "null".to_string(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Blob(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
    }
}

fn hex32(hash: &[u8; 32]) -> String {
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

/// Keep the rows' hashes the seal remembers one by one (see [`ROW_NAMED_TABLES`]).
fn remember_rows(
    conn: &Connection,
    named: &BTreeMap<(String, String), Option<[u8; 32]>>,
) -> StoreResult<()> {
    if named.is_empty() || !has_row_index(conn)? {
        return Ok(());
    }
    let mut put = conn.prepare_cached(
        "INSERT OR REPLACE INTO sealed_row(tbl, row_key, hash) VALUES (?1, ?2, ?3)",
    )?;
    let mut remove =
        conn.prepare_cached("DELETE FROM sealed_row WHERE tbl = ?1 AND row_key = ?2")?;
    for ((table, key), hash) in named {
        match hash {
            Some(h) => put.execute(params![table, key, hex32(h)])?,
            None => remove.execute(params![table, key])?,
        };
    }
    Ok(())
}

fn has_row_index(conn: &Connection) -> StoreResult<bool> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM main.sqlite_schema WHERE type = 'table' AND name = 'sealed_row')",
        [],
        |r| r.get(0),
    )?)
}

/// Each current row of `table` (a [`ROW_NAMED_TABLES`] table, its digested columns `cols`) by
/// its key, with its hash.
fn current_rows(
    conn: &Connection,
    table: &str,
    cols: &[String],
) -> StoreResult<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    each_sealed_row(conn, table, cols, |key, hash| {
        out.insert(row_key(key), hex32(&hash));
    })?;
    Ok(out)
}

/// Hand every sealed row of `table` (over its digested columns `cols`) to `f`: its first column
/// and its hash, the one the chain's triggers compute.
fn each_sealed_row(
    conn: &Connection,
    table: &str,
    cols: &[String],
    mut f: impl FnMut(ValueRef<'_>, [u8; 32]),
) -> StoreResult<()> {
    let only = where_sealed(table, "t");
    let mut stmt = conn.prepare(&format!(
        "SELECT {} FROM main.{table} AS t{only}",
        column_list(None, cols)
    ))?;
    let n = cols.len();
    let mut rows = stmt.query([])?;
    let mut scratch = Vec::new();
    while let Some(row) = rows.next()? {
        let hash = row_hash_with(
            &mut scratch,
            table,
            (0..n).map(|i| row.get_ref(i).unwrap_or(ValueRef::Null)),
        );
        f(row.get_ref(0).unwrap_or(ValueRef::Null), hash);
    }
    Ok(())
}

/// Remember every row of the row-named tables as it is now (a new chain, an upgrade that seals
/// them for the first time, or an index found empty beside rows).
fn remember_all_rows(conn: &Connection) -> StoreResult<()> {
    if !has_row_index(conn)? {
        return Ok(());
    }
    for (table, cols) in existing_tables(conn)? {
        if !ROW_NAMED_TABLES.contains(&table.as_str()) {
            continue;
        }
        conn.execute("DELETE FROM sealed_row WHERE tbl = ?1", [&table])?;
        let mut put =
            conn.prepare_cached("INSERT INTO sealed_row(tbl, row_key, hash) VALUES (?1, ?2, ?3)")?;
        for (key, hash) in current_rows(conn, &table, &cols)? {
            put.execute(params![table, key, hash])?;
        }
    }
    Ok(())
}

/// The rows of `table` that differ from what the seal remembers, named for `verify`'s message
/// (at most three; empty when the table is not row-named or nothing tells which rows).
fn rows_changed(conn: &Connection, table: &str) -> StoreResult<Vec<String>> {
    if !ROW_NAMED_TABLES.contains(&table) || !has_row_index(conn)? {
        return Ok(Vec::new());
    }
    let Some((_, cols)) = existing_tables(conn)?.into_iter().find(|(t, _)| t == table) else {
        return Ok(Vec::new());
    };
    let now = current_rows(conn, table, &cols)?;
    let mut stmt = conn.prepare("SELECT row_key, hash FROM sealed_row WHERE tbl = ?1")?;
    let sealed: BTreeMap<String, String> = stmt
        .query_map([table], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for (key, hash) in &now {
        match sealed.get(key) {
            Some(h) if h == hash => {}
            Some(_) => out.push(format!("row {key} changed")),
            None => out.push(format!("row {key} added")),
        }
    }
    for key in sealed.keys().filter(|k| !now.contains_key(*k)) {
        out.push(format!("row {key} deleted"));
    }
    out.truncate(3);
    Ok(out)
}

fn lock(cell: &PendingCell) -> std::sync::MutexGuard<'_, Pending> {
    // A panic while holding the lock cannot leave the digest half-updated (each update is a
    // plain value replacement), so a poisoned lock is still usable.
    cell.lock().unwrap_or_else(|p| p.into_inner())
}

/// The tracked tables this study has, each with the columns its digest covers (in the table's
/// order, volatile ones left out).
fn existing_tables(conn: &Connection) -> StoreResult<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    for table in TRACKED_TABLES {
        let mut stmt = conn.prepare(&format!("PRAGMA main.table_info({table})"))?;
        let volatile = VOLATILE_COLUMNS
            .iter()
            .find(|(t, _)| t == table)
            .map_or(&[][..], |(_, cols)| *cols);
        let cols: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(1))?
            .filter(|c| c.as_ref().map_or(true, |c| !volatile.contains(&c.as_str())))
            .collect::<Result<_, _>>()?;
        if !cols.is_empty() {
            out.push((table.to_string(), cols));
        }
    }
    Ok(out)
}

/// Register `concord_audit_row` and create the temporary triggers on this connection. Called
/// after every migration, so the triggers follow the current columns.
pub(crate) fn install(conn: &Connection, cell: &PendingCell) -> StoreResult<()> {
    let sink = cell.clone();
    conn.create_scalar_function(
        "concord_audit_row",
        -1,
        FunctionFlags::SQLITE_UTF8,
        move |ctx| {
            let sign: i64 = ctx.get(0)?;
            let table: String = ctx.get(1)?;
            let hash = row_hash(&table, (2..ctx.len()).map(|i| ctx.get_raw(i)));
            let mut p = lock(&sink);
            if ROW_NAMED_TABLES.contains(&table.as_str()) && ctx.len() > 2 {
                let key = row_key(ctx.get_raw(2));
                p.named
                    .insert((table.clone(), key), (sign > 0).then_some(hash));
            }
            let d = p.delta.entry(table.clone()).or_default();
            if sign > 0 {
                d.add_hash(&hash);
            } else {
                d.sub_hash(&hash);
            }
            let rows = p.rows.entry(table).or_default();
            if sign > 0 {
                rows.0 += 1;
            } else {
                rows.1 += 1;
            }
            Ok(rusqlite::types::Null)
        },
    )?;
    let mut sql = String::new();
    for (table, cols) in existing_tables(conn)? {
        let (new, old) = (
            column_list(Some("NEW"), &cols),
            column_list(Some("OLD"), &cols),
        );
        let only = |alias: &str| where_sealed(&table, alias);
        // Only an update of a sealed column changes a row's digest.
        let sealed_cols = column_list(None, &cols);
        sql.push_str(&format!(
            "DROP TRIGGER IF EXISTS temp.concord_audit_{table}_ins;
             DROP TRIGGER IF EXISTS temp.concord_audit_{table}_del;
             DROP TRIGGER IF EXISTS temp.concord_audit_{table}_upd;
             {insert}
             CREATE TEMP TRIGGER concord_audit_{table}_del AFTER DELETE ON main.{table}
             BEGIN SELECT concord_audit_row(-1, '{table}', {old}){old_only}; END;
             CREATE TEMP TRIGGER concord_audit_{table}_upd AFTER UPDATE OF {sealed_cols} ON main.{table}
             BEGIN SELECT concord_audit_row(-1, '{table}', {old}){old_only};
                   SELECT concord_audit_row(1, '{table}', {new}){new_only}; END;",
            insert = insert_trigger(&table, &cols),
            old_only = only("OLD"),
            new_only = only("NEW"),
        ));
    }
    conn.execute_batch(&sql)?;
    Ok(())
}

/// `"column", …` quoted for SQL, each after `prefix.` when given (a trigger's `NEW`/`OLD`).
fn column_list(prefix: Option<&str>, cols: &[String]) -> String {
    cols.iter()
        .map(|c| match prefix {
            Some(p) => format!("{p}.\"{c}\""),
            None => format!("\"{c}\""),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The trigger that hands every (sealed) row inserted into `table` to the chain's digest.
fn insert_trigger(table: &str, cols: &[String]) -> String {
    format!(
        "CREATE TEMP TRIGGER concord_audit_{table}_ins AFTER INSERT ON main.{table}
         BEGIN SELECT concord_audit_row(1, '{table}', {}){}; END;",
        column_list(Some("NEW"), cols),
        where_sealed(table, "NEW")
    )
}

/// Rows a bulk insert digests itself while its table's insert trigger is set aside
/// ([`set_insert_trigger_aside`]): each row's hash is the one the trigger would have computed
/// from the same values in the table's column order, so the sealed state is the same.
#[derive(Debug)]
pub(crate) struct DirectInserts {
    table: String,
    /// The digested columns, in the table's order.
    columns: Vec<String>,
    trigger: String,
    /// Reads an inserted row's digested columns back by rowid ([`DirectInserts::add_stored`]).
    select: String,
    delta: RowDigest,
    added: u64,
    /// The bytes of the row being hashed (one buffer for every row).
    scratch: Vec<u8>,
}

impl DirectInserts {
    /// The table whose rows these are.
    pub(crate) fn table(&self) -> &str {
        &self.table
    }

    /// The columns a row's hash covers, in the table's order (what [`DirectInserts::add`]
    /// takes).
    pub(crate) fn columns(&self) -> &[String] {
        &self.columns
    }

    /// One inserted row, read back from the table by its rowid: the hash the trigger would
    /// have computed, whatever columns the table has.
    pub(crate) fn add_stored(&mut self, conn: &Connection, rowid: i64) -> StoreResult<()> {
        let table = self.table.as_str();
        let hash = conn.prepare_cached(&self.select)?.query_row([rowid], |r| {
            let n = r.as_ref().column_count();
            Ok(row_hash(
                table,
                (0..n).map(|i| r.get_ref(i).unwrap_or(ValueRef::Null)),
            ))
        })?;
        self.delta.add_hash(&hash);
        self.added += 1;
        Ok(())
    }

    /// One inserted row, its values in the table's column order.
    pub(crate) fn add<'a>(&mut self, values: impl Iterator<Item = ValueRef<'a>>) {
        self.delta
            .add_hash(&row_hash_with(&mut self.scratch, &self.table, values));
        self.added += 1;
    }
}

/// The columns of `table` in order, when the chain's insert trigger on it is in place on this
/// connection (`None` when the chain is off, as in the rating-save benchmark's comparison).
pub(crate) fn audited_columns(conn: &Connection, table: &str) -> StoreResult<Option<Vec<String>>> {
    let installed: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_temp_schema WHERE type = 'trigger' AND name = ?1)",
        [format!("concord_audit_{table}_ins")],
        |r| r.get(0),
    )?;
    if !installed {
        return Ok(None);
    }
    Ok(existing_tables(conn)?
        .into_iter()
        .find(|(t, _)| t == table)
        .map(|(_, cols)| cols))
}

/// Drop the chain's insert trigger on `table` (whose columns are `cols`, from
/// [`audited_columns`]) for a bulk insert that digests its rows itself; every path out must
/// pass through [`put_insert_trigger_back`], or roll the transaction back (which restores the
/// trigger with the rest of the temporary schema).
pub(crate) fn set_insert_trigger_aside(
    conn: &Connection,
    table: &str,
    cols: &[String],
) -> StoreResult<DirectInserts> {
    conn.execute_batch(&format!("DROP TRIGGER temp.concord_audit_{table}_ins"))?;
    Ok(DirectInserts {
        table: table.to_string(),
        columns: cols.to_vec(),
        trigger: insert_trigger(table, cols),
        select: format!(
            "SELECT {} FROM main.{table} WHERE rowid = ?1",
            column_list(None, cols)
        ),
        delta: RowDigest::default(),
        added: 0,
        scratch: Vec::new(),
    })
}

/// Put the insert trigger back and add the rows digested meanwhile to what the transaction
/// seals.
pub(crate) fn put_insert_trigger_back(
    conn: &Connection,
    cell: &PendingCell,
    direct: DirectInserts,
) -> StoreResult<()> {
    conn.execute_batch(&direct.trigger)?;
    if direct.added > 0 {
        let mut p = lock(cell);
        p.delta
            .entry(direct.table.clone())
            .or_default()
            .add(&direct.delta);
        p.rows.entry(direct.table).or_default().0 += direct.added;
    }
    Ok(())
}

/// Drop this connection's audit triggers (the benchmark's comparison study only).
pub(crate) fn uninstall(conn: &Connection) -> StoreResult<()> {
    let mut sql = String::new();
    for table in TRACKED_TABLES {
        for suffix in ["ins", "del", "upd"] {
            sql.push_str(&format!(
                "DROP TRIGGER IF EXISTS temp.concord_audit_{table}_{suffix};"
            ));
        }
    }
    conn.execute_batch(&sql)?;
    Ok(())
}

/// The digest of every row of the tracked tables, read from the file.
fn full_state(conn: &Connection) -> StoreResult<State> {
    let mut state = State::default();
    for (table, cols) in existing_tables(conn)? {
        let digest = current_digest(conn, &table, &cols)?;
        state.0.insert(table, digest);
    }
    Ok(state)
}

/// The digest of every (sealed) row of `table` as the file holds it, over its columns `cols`.
fn current_digest(conn: &Connection, table: &str, cols: &[String]) -> StoreResult<RowDigest> {
    let mut digest = RowDigest::default();
    each_sealed_row(conn, table, cols, |_, hash| digest.add_hash(&hash))?;
    Ok(digest)
}

fn entry_hash(
    prev: &str,
    id: i64,
    at: Millis,
    actor: &str,
    action: &str,
    detail: &str,
    state: &str,
) -> String {
    let mut h = Sha256::new();
    for part in [
        prev,
        &id.to_string(),
        &at.to_string(),
        actor,
        action,
        detail,
        state,
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// One event a transaction records, sealed into the chain when it commits.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event {
    /// A described event: who, what, and the details (from → to, reason…).
    Described {
        actor: String,
        action: String,
        detail: serde_json::Value,
    },
    /// A rating value written through `set_rating`.
    Rating {
        rater_id: i64,
        response_id: i64,
        criterion_id: i64,
        /// Which rating of the item (first, retest, …); only a non-first one is named in the
        /// entry, so first ratings are recorded as before occasions existed.
        occasion: super::Occasion,
        from: Option<Option<i64>>,
        to: Option<i64>,
        origin: String,
        reason: Option<String>,
        /// The signature the changed rating was locked by.
        after_signature: Option<i64>,
    },
}

impl Event {
    fn parts(&self) -> (String, String, serde_json::Value) {
        match self {
            Event::Described {
                actor,
                action,
                detail,
            } => (actor.clone(), action.clone(), detail.clone()),
            Event::Rating {
                rater_id,
                response_id,
                criterion_id,
                occasion,
                from,
                to,
                origin,
                reason,
                after_signature,
            } => {
                let mut detail = serde_json::json!({
                    "rater_id": rater_id,
                    "response_id": response_id,
                    "criterion_id": criterion_id,
                    "to": to,
                    "origin": origin,
                });
                if *occasion != super::Occasion::First {
                    detail["occasion"] = serde_json::json!(occasion.as_str());
                }
                if let Some(prev) = from {
                    detail["from"] = serde_json::json!(prev);
                }
                if let Some(r) = reason {
                    detail["reason"] = serde_json::json!(r);
                }
                if let Some(s) = after_signature {
                    detail["after_signature"] = serde_json::json!(s);
                }
                let action = match (from, to) {
                    (None, _) => "rating.enter",
                    (Some(_), None) => "rating.clear",
                    (Some(_), Some(_)) => "rating.revise",
                };
                (format!("rater:{rater_id}"), action.to_string(), detail)
            }
        }
    }
}

/// The last chained entry: id, hash, state.
fn head(conn: &Connection) -> StoreResult<Option<(i64, String, State)>> {
    let row: Option<(i64, String, String)> = conn
        .query_row(
            "SELECT id, hash, state FROM audit_log WHERE hash IS NOT NULL ORDER BY id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    Ok(row.map(|(id, hash, state)| (id, hash, State::decode(&state).unwrap_or_default())))
}

fn next_id(conn: &Connection) -> StoreResult<i64> {
    Ok(
        conn.query_row("SELECT COALESCE(MAX(id), 0) + 1 FROM audit_log", [], |r| {
            r.get(0)
        })?,
    )
}

fn insert_entry(
    conn: &Connection,
    prev: &str,
    at: Millis,
    actor: &str,
    action: &str,
    detail: &str,
    state: &str,
) -> StoreResult<(i64, String)> {
    let id = next_id(conn)?;
    let hash = entry_hash(prev, id, at, actor, action, detail, state);
    conn.prepare_cached(
        "INSERT INTO audit_log(id, at, actor, action, detail_json, prev_hash, hash, state)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![id, at, actor, action, detail, prev, hash, state])?;
    super::meta::put(conn, "audit.head", &format!("{id}:{hash}"))?;
    Ok((id, hash))
}

/// Start the chain if this study has none (a new study, or one from before the chain), sealing
/// the rows it holds now. Returns whether a chain was started.
pub(crate) fn ensure_chain(conn: &Connection, now: Millis, schema: i64) -> StoreResult<bool> {
    if head(conn)?.is_some() {
        return Ok(false);
    }
    let earlier: i64 = conn.query_row("SELECT COUNT(*) FROM audit_log", [], |r| r.get(0))?;
    let state = full_state(conn)?;
    let rows: i64 = {
        let mut n = 0;
        for table in existing_tables(conn)? {
            n += conn.query_row(&format!("SELECT COUNT(*) FROM main.{}", table.0), [], |r| {
                r.get::<_, i64>(0)
            })?;
        }
        n
    };
    let detail = if earlier == 0 && rows == 0 {
        // 128 random bits make this chain's first entry its own, so that a lead key's binding
        // to the chain (see `lead_key`) names no other study made at the same moment.
        serde_json::json!({
            "note": "audit chain starts with the study",
            "schema": schema,
            "chain": super::lead_key::new_study_id(),
        })
    } else {
        serde_json::json!({
            "note": "audit chain starts here, at the upgrade to a Concord with an audit chain; \
                     earlier log entries are not chained and the rows found now are sealed as they were",
            "schema": schema,
            "earlier_entries": earlier,
            "rows_sealed": rows,
        })
    };
    let tx = conn.unchecked_transaction()?;
    insert_entry(
        &tx,
        GENESIS,
        now,
        "concord",
        "chain.start",
        &detail.to_string(),
        &state.encode(),
    )?;
    remember_all_rows(&tx)?;
    tx.commit()?;
    Ok(true)
}

/// The entry at which the lead key `public` was made: the last `lead_key.created` entry of the
/// chain that names its fingerprint. Read from the chain, whose entries the key's checkpoints
/// sign, never from a setting anyone could move.
pub(crate) fn key_entry_in_chain(conn: &Connection, public: &str) -> StoreResult<Option<i64>> {
    let fingerprint = super::lead_key::fingerprint(public);
    let mut stmt = conn.prepare(
        "SELECT id, detail_json FROM audit_log
         WHERE hash IS NOT NULL AND action = 'lead_key.created' ORDER BY id DESC",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let detail: String = row.get(1)?;
        let named = serde_json::from_str::<serde_json::Value>(&detail)
            .ok()
            .and_then(|d| d["fingerprint"].as_str().map(|f| f == fingerprint))
            .unwrap_or(false);
        if named {
            return Ok(Some(row.get(0)?));
        }
    }
    Ok(None)
}

/// Whether this file already carries a chain (checked before migrating it).
pub(crate) fn has_chain(conn: &Connection) -> StoreResult<bool> {
    let mut stmt = conn.prepare("PRAGMA main.table_info(audit_log)")?;
    let cols: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(1))?
        .collect::<Result<_, _>>()?;
    if !cols.iter().any(|c| c == "hash") {
        return Ok(false);
    }
    Ok(head(conn)?.is_some())
}

/// The sealed rows as they are before a migration of a chained study.
pub(crate) struct BeforeMigration(State);

pub(crate) fn before_migration(conn: &Connection, from: i64) -> StoreResult<BeforeMigration> {
    let mut state = full_state(conn)?;
    // Tables the study's chain did not seal yet count as empty before the upgrade, so the
    // upgrade's entry seals the rows they hold.
    for (table, marker) in TRACKED_SINCE_MARKER {
        if from < super::migration_version(marker) {
            state.0.remove(*table);
        }
    }
    Ok(BeforeMigration(state))
}

/// After migrating a chained study: one entry that carries the rows the migration changed into
/// the sealed state (changes made outside Concord before the upgrade stay visible to `verify`).
pub(crate) fn seal_migration(
    conn: &Connection,
    before: BeforeMigration,
    now: Millis,
    from: i64,
    to: i64,
) -> StoreResult<()> {
    let Some((_, prev, sealed)) = head(conn)? else {
        return Ok(());
    };
    let after = full_state(conn)?;
    // A table the migration created empty changes nothing sealed.
    if after.encode() == before.0.encode() {
        return Ok(());
    }
    let state = sealed.moved_by(&before.0, &after);
    let tx = conn.unchecked_transaction()?;
    insert_entry(
        &tx,
        &prev,
        now,
        "concord",
        "schema.upgrade",
        &serde_json::json!({"from": from, "to": to}).to_string(),
        &state.encode(),
    )?;
    if from < super::migration_version(MEANING_MARKER) {
        remember_all_rows(&tx)?;
    }
    tx.commit()?;
    Ok(())
}

/// Rewrite the chain's last entry as a Concord that did not seal `tables` would have written it
/// (tests of upgrades from such a version).
impl StudyTx<'_> {
    /// Record an event for the study's audit chain (who, what, details such as from → to and a
    /// reason); it is sealed into the chain when the transaction commits.
    pub fn audit(
        &mut self,
        actor: &str,
        action: &str,
        detail: &serde_json::Value,
    ) -> StoreResult<()> {
        self.events.push(Event::Described {
            actor: actor.to_string(),
            action: action.to_string(),
            detail: detail.clone(),
        });
        Ok(())
    }
}

/// The tables a chain begun at schema `version` did not seal yet (tests of upgrades).
#[cfg(test)]
pub(crate) fn tables_sealed_after(version: i64) -> Vec<&'static str> {
    TRACKED_SINCE_MARKER
        .iter()
        .filter(|(_, marker)| version < super::migration_version(marker))
        .map(|(table, _)| *table)
        .collect()
}

#[cfg(test)]
pub(crate) fn reseal_head_without(conn: &Connection, tables: &[&str]) -> StoreResult<()> {
    let (id, at, actor, action, detail, prev, state): (
        i64,
        Millis,
        String,
        String,
        String,
        String,
        String,
    ) = conn.query_row(
        "SELECT id, at, actor, action, detail_json, prev_hash, state FROM audit_log
         WHERE hash IS NOT NULL ORDER BY id DESC LIMIT 1",
        [],
        |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        },
    )?;
    let mut sealed = State::decode(&state).unwrap_or_default();
    for t in tables {
        sealed.0.remove(*t);
    }
    let state = sealed.encode();
    let hash = entry_hash(&prev, id, at, &actor, &action, &detail, &state);
    conn.execute(
        "UPDATE audit_log SET state = ?2, hash = ?3 WHERE id = ?1",
        params![id, state, hash],
    )?;
    super::meta::put(conn, "audit.head", &format!("{id}:{hash}"))?;
    Ok(())
}

/// Discard what the triggers saw (a rolled-back transaction), restoring an earlier snapshot.
pub(crate) fn restore(cell: &PendingCell, snapshot: Pending) {
    *lock(cell) = snapshot;
}

pub(crate) fn snapshot(cell: &PendingCell) -> Pending {
    lock(cell).clone()
}

impl StudyTx<'_> {
    /// Seal this transaction's events and row changes into the chain (called by `Store::write`
    /// just before it commits).
    pub(crate) fn seal(&mut self) -> StoreResult<()> {
        // The PHI guard's triggers set aside by a bulk import are back before anything is sealed.
        self.put_phi_marks_back()?;
        // Rows digested here while their insert trigger was set aside join the rest first.
        for direct in std::mem::take(&mut self.direct) {
            put_insert_trigger_back(&self.tx, &self.pending, direct)?;
        }
        let pending = std::mem::take(&mut *lock(&self.pending));
        let events = std::mem::take(&mut self.events);
        if events.is_empty() && pending.is_empty() {
            return Ok(());
        }
        remember_rows(&self.tx, &pending.named)?;
        let (mut prev, mut state) = match head(&self.tx)? {
            Some((_, hash, state)) => (hash, state),
            None => (GENESIS.to_string(), State::default()),
        };
        for (table, d) in &pending.delta {
            state.0.entry(table.clone()).or_default().add(d);
        }
        let state = state.encode();
        let ratings = events
            .iter()
            .filter(|e| matches!(e, Event::Rating { .. }))
            .count();
        let mut entries: Vec<(String, String, serde_json::Value)> = Vec::new();
        if ratings > EVENTS_PER_ENTRY_LIMIT && !self.entry_per_event {
            let mut digest = Sha256::new();
            let mut raters = std::collections::BTreeSet::new();
            for e in &events {
                if let Event::Rating { rater_id, .. } = e {
                    raters.insert(*rater_id);
                    digest.update(e.parts().2.to_string().as_bytes());
                }
            }
            let digest: String = digest
                .finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            entries.push((
                "concord".into(),
                "rating.batch".into(),
                serde_json::json!({"ratings": ratings, "rater_ids": raters, "events_sha256": digest}),
            ));
            entries.extend(
                events
                    .iter()
                    .filter(|e| !matches!(e, Event::Rating { .. }))
                    .map(Event::parts),
            );
        } else {
            entries.extend(events.iter().map(Event::parts));
        }
        if entries.is_empty() {
            let rows: BTreeMap<&String, serde_json::Value> = pending
                .rows
                .iter()
                .map(|(t, (ins, del))| (t, serde_json::json!({"added": ins, "removed": del})))
                .collect();
            entries.push((
                "concord".into(),
                "write".into(),
                serde_json::json!({ "rows": rows }),
            ));
        }
        let mut appended: Option<(i64, i64)> = None;
        for (actor, action, detail) in entries {
            let (id, hash) = insert_entry(
                &self.tx,
                &prev,
                self.now,
                &actor,
                &action,
                &detail.to_string(),
                &state,
            )?;
            appended = Some((appended.map_or(id, |(first, _)| first), id));
            prev = hash;
        }
        // The lead's key, where it is held, signs the new head (and with it every entry before).
        if let (Some(key), Some((first, last))) = (&self.lead, appended) {
            super::checkpoint::write(&self.tx, key, first, last, &prev, self.now)?;
        }
        Ok(())
    }

    /// Digest the rows this transaction inserts into `tables` here, reading each back by its
    /// rowid, instead of through the chain's insert triggers: an import of tens of thousands of
    /// conversations and responses, where a statement with a trigger would keep a statement
    /// journal. The triggers are put back when the transaction is sealed (a rollback restores
    /// them with the rest of the temporary schema). Not for [`Store::write_each`], whose items
    /// roll back one by one.
    pub(crate) fn digest_inserts_here(&mut self, tables: &[&str]) -> StoreResult<()> {
        for table in tables {
            if self.direct.iter().any(|d| d.table() == *table) {
                continue;
            }
            if let Some(cols) = audited_columns(&self.tx, table)? {
                let direct = set_insert_trigger_aside(&self.tx, table, &cols)?;
                self.direct.push(direct);
            }
        }
        Ok(())
    }

    /// A row just inserted into `table`: digested here when its trigger is set aside.
    pub(crate) fn digest_inserted(&mut self, table: &str, rowid: i64) -> StoreResult<()> {
        if let Some(direct) = self.direct.iter_mut().find(|d| d.table() == table) {
            direct.add_stored(&self.tx, rowid)?;
        }
        Ok(())
    }

    /// Record a rating event (sealed at commit).
    pub(crate) fn record_rating_event(&mut self, event: Event) {
        self.events.push(event);
    }
}

/// One entry of the audit trail.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AuditEntry {
    pub id: i64,
    pub at: Millis,
    pub actor: String,
    pub action: String,
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
    pub detail: serde_json::Value,
    /// `None` for entries written before the chain started.
    pub hash: Option<String>,
}

/// What [`Store::verify_audit_chain`] found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ChainCheck {
    /// Chained entries checked.
    pub entries: usize,
    /// Entries from before the chain started (not covered by it).
    pub unchained: usize,
    /// The hash of the last entry.
    pub head: Option<String>,
    /// The id of the `chain.start` entry and whether it started at an upgrade of an older study.
    pub started_at: Option<i64>,
    pub started_at_upgrade: bool,
    /// The fingerprint of the study's lead public key, if it has one.
    pub lead_key: Option<String>,
    /// The entry that recorded the lead key's creation (the chain is signed from there on).
    pub key_entry: Option<i64>,
    /// Whether this machine's key store holds the study's lead key (and it is the study's).
    pub key_held_here: bool,
    /// Signed checkpoints checked.
    pub checkpoints: usize,
    /// The last entry a checkpoint signed by the lead's key covers: it and every entry before it
    /// are anchored.
    pub anchored_through: Option<i64>,
    /// Entries after the last signed checkpoint (not anchored).
    pub not_anchored: usize,
    /// Entries after the key was made, before the last checkpoint, that no signed write
    /// appended (written where the key was not available, or added outside Concord).
    pub unsigned: usize,
    pub first_unsigned: Option<i64>,
    /// The entry whose hash is the head given to check (`--expect-head`).
    pub expected_head_at: Option<i64>,
    /// The first problem, if any.
    pub broken: Option<ChainBreak>,
}

impl ChainCheck {
    /// The check of a file whose pages are damaged: nothing read from it, the damage named.
    fn damaged(message: String) -> ChainCheck {
        ChainCheck {
            entries: 0,
            unchained: 0,
            head: None,
            started_at: None,
            started_at_upgrade: false,
            lead_key: None,
            key_entry: None,
            key_held_here: false,
            checkpoints: 0,
            anchored_through: None,
            not_anchored: 0,
            unsigned: 0,
            first_unsigned: None,
            expected_head_at: None,
            broken: Some(ChainBreak {
                entry: None,
                table: None,
                message,
            }),
        }
    }
}

/// What `verify` is to check besides the file: the lead key this machine holds for the study
/// (the study's public key must be its) and a head hash recorded elsewhere (it must be an entry
/// of the chain).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChainTrust {
    /// The public half (hex) of the lead key this machine's key store holds for the study's id.
    pub local_key: Option<String>,
    /// A head recorded elsewhere (an export's provenance, a note) that must be in the chain.
    pub expect_head: Option<String>,
    /// Whether every entry must be covered by a write signed with the lead key (no entry after
    /// the last checkpoint, none written without the key): for a study only ever written where
    /// its key is, an entry added outside Concord at the end then fails too.
    pub require_signed: bool,
}

/// The first place where the file no longer matches its chain.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ChainBreak {
    /// The first entry that fails (for table mismatches: the last entry, whose seal the tables no
    /// longer match).
    pub entry: Option<i64>,
    /// The table whose rows differ from the sealed state.
    pub table: Option<String>,
    pub message: String,
}

struct Row {
    id: i64,
    at: Millis,
    actor: String,
    action: String,
    detail: String,
    prev: Option<String>,
    hash: Option<String>,
    state: Option<String>,
}

/// The last entry of a chain that holds together: its id, hash and sealed state.
struct ChainEnd {
    id: i64,
    hash: String,
    state: String,
}

/// A break at entry `entry`.
fn broken_at(entry: i64, message: String) -> ChainBreak {
    ChainBreak {
        entry: Some(entry),
        table: None,
        message,
    }
}

/// Every audit entry, in order.
fn audit_rows(conn: &Connection) -> StoreResult<Vec<Row>> {
    let mut stmt = conn.prepare(
        "SELECT id, at, actor, action, detail_json, prev_hash, hash, state FROM audit_log ORDER BY id",
    )?;
    let rows: Vec<Row> = stmt
        .query_map([], |r| {
            Ok(Row {
                id: r.get(0)?,
                at: r.get(1)?,
                actor: r.get(2)?,
                action: r.get(3)?,
                detail: r.get(4)?,
                prev: r.get(5)?,
                hash: r.get(6)?,
                state: r.get(7)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// Walk the entries: unchained ones before the chain counted, then every chained entry checked
/// to start the chain or follow the one before it, and to match its hash (counted in `check`).
/// The chain's last entry, or the first break (also when there is no chain).
fn walk_chain(rows: &[Row], check: &mut ChainCheck) -> Result<ChainEnd, ChainBreak> {
    let mut last: Option<ChainEnd> = None;
    for row in rows {
        let Some(hash) = &row.hash else {
            if last.is_some() {
                return Err(broken_at(
                    row.id,
                    format!(
                        "entry {} has no hash: it was inserted outside Concord",
                        row.id
                    ),
                ));
            }
            check.unchained += 1;
            continue;
        };
        let prev = row.prev.clone().unwrap_or_default();
        let state = row.state.clone().unwrap_or_default();
        match &last {
            None => {
                if row.action != "chain.start" || prev != GENESIS {
                    return Err(broken_at(
                        row.id,
                        format!(
                            "entry {} is the first chained entry but not the chain's start: entries before it were deleted or it was inserted outside Concord",
                            row.id
                        ),
                    ));
                }
                check.started_at = Some(row.id);
                check.started_at_upgrade = row.detail.contains("earlier_entries");
            }
            Some(end) => follows(row, end, &prev)?,
        }
        let recomputed = entry_hash(
            &prev,
            row.id,
            row.at,
            &row.actor,
            &row.action,
            &row.detail,
            &state,
        );
        if recomputed != *hash {
            return Err(broken_at(
                row.id,
                format!(
                    "entry {} ({}) does not match its hash: it was changed outside Concord",
                    row.id, row.action
                ),
            ));
        }
        check.entries += 1;
        last = Some(ChainEnd {
            id: row.id,
            hash: hash.clone(),
            state,
        });
    }
    last.ok_or_else(|| ChainBreak {
        entry: None,
        table: None,
        message: "the study has no audit chain (its entries were deleted outside Concord)".into(),
    })
}

/// Whether `row` (whose previous hash is `prev`) directly follows `last` and links to it.
fn follows(row: &Row, last: &ChainEnd, prev: &str) -> Result<(), ChainBreak> {
    let last_id = last.id;
    if row.id != last_id + 1 {
        return Err(broken_at(
            row.id,
            format!(
                "entry {} follows entry {last_id}: {} entr{} between them {} deleted outside Concord",
                row.id,
                row.id - last_id - 1,
                if row.id - last_id - 1 == 1 { "y" } else { "ies" },
                if row.id - last_id - 1 == 1 { "was" } else { "were" }
            ),
        ));
    }
    if prev != last.hash {
        return Err(broken_at(
            row.id,
            format!(
                "entry {} does not link to entry {last_id}: one of them was changed or inserted outside Concord",
                row.id
            ),
        ));
    }
    Ok(())
}

/// Whether the head the study records is the chain's last entry (a break when it is not).
fn recorded_head_break(conn: &Connection, end: &ChainEnd) -> StoreResult<Option<ChainBreak>> {
    let (last_id, last_hash) = (end.id, &end.hash);
    let recorded: Option<String> = conn
        .query_row(
            "SELECT value FROM study_meta WHERE key = 'audit.head'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if recorded.as_deref() == Some(format!("{last_id}:{last_hash}").as_str()) {
        return Ok(None);
    }
    let said = recorded
        .as_deref()
        .and_then(|r| r.split_once(':'))
        .map(|(id, _)| format!("entry {id}"))
        .unwrap_or_else(|| "no entry".to_string());
    Ok(Some(ChainBreak {
        entry: Some(last_id),
        table: None,
        message: format!(
            "the chain ends at entry {last_id} but the study records {said} as its last: entries after {last_id} were deleted, or its head was changed, outside Concord"
        ),
    }))
}

/// The first tracked table whose rows differ from the state `last_state` the last entry,
/// `last_id`, sealed.
fn sealed_table_break(
    conn: &Connection,
    last_id: i64,
    last_state: &str,
) -> StoreResult<Option<ChainBreak>> {
    let sealed = State::decode(last_state).unwrap_or_default();
    let actual = full_state(conn)?;
    // A table the seal covers but the study no longer has (`retest_rating`, whose rows moved
    // into `rating` at schema 12) must be empty in the seal too: the upgrade's entry moved
    // what it held, so anything left there was changed before the upgrade.
    let mut tables: Vec<String> = existing_tables(conn)?.into_iter().map(|(t, _)| t).collect();
    for table in sealed.0.keys() {
        if !tables.contains(table) {
            tables.push(table.clone());
        }
    }
    for table in tables {
        if sealed.get(&table) != actual.get(&table) {
            let rows = rows_changed(conn, &table)?;
            let named = if rows.is_empty() {
                String::new()
            } else {
                format!(" ({})", rows.join(", "))
            };
            return Ok(Some(ChainBreak {
                entry: Some(last_id),
                table: Some(table.clone()),
                message: format!(
                    "the {table} table does not match the state sealed by entry {last_id}, the last one: a row was changed, inserted or deleted outside Concord{named}"
                ),
            }));
        }
    }
    Ok(None)
}

/// The hashes of the chained entries `wanted`, read as the chain is walked with its links and
/// every entry's hash checked; `None` when the chain does not hold together. Streams the entries,
/// so memory holds only the hashes asked for.
fn linked_hashes(
    conn: &Connection,
    wanted: &std::collections::HashSet<i64>,
) -> StoreResult<Option<HashMap<i64, String>>> {
    let mut stmt = conn.prepare(
        "SELECT id, at, actor, action, detail_json, prev_hash, hash, state FROM audit_log
         WHERE hash IS NOT NULL ORDER BY id",
    )?;
    let mut rows = stmt.query([])?;
    let mut last: Option<(i64, String)> = None;
    let mut out = HashMap::new();
    while let Some(r) = rows.next()? {
        let (id, hash): (i64, String) = (r.get(0)?, r.get(6)?);
        let prev: Option<String> = r.get(5)?;
        let prev = prev.unwrap_or_default();
        let linked = match &last {
            None => prev == GENESIS,
            Some((last_id, last_hash)) => id == last_id + 1 && prev == *last_hash,
        };
        let state: Option<String> = r.get(7)?;
        let recomputed = entry_hash(
            &prev,
            id,
            r.get(1)?,
            &r.get::<_, String>(2)?,
            &r.get::<_, String>(3)?,
            &r.get::<_, String>(4)?,
            &state.unwrap_or_default(),
        );
        if !linked || recomputed != hash {
            return Ok(None);
        }
        if wanted.contains(&id) {
            out.insert(id, hash.clone());
        }
        last = Some((id, hash));
    }
    Ok(Some(out))
}

impl Store {
    /// Whether the rows of `table` (a tracked table) are as the chain's last entry sealed them:
    /// what a job that trusts one table's records checks first, without verifying the whole
    /// chain (a merge reads the study's record of its packages). `true` when the study has no
    /// chain, or `table` is not tracked here.
    pub fn table_matches_seal(&self, table: &str) -> StoreResult<bool> {
        let conn = self.conn();
        let _snapshot = super::untrusted::Snapshot::take(conn);
        let Some((_, _, sealed)) = head(conn)? else {
            return Ok(true);
        };
        let Some((_, cols)) = existing_tables(conn)?.into_iter().find(|(t, _)| t == table) else {
            return Ok(true);
        };
        let now = current_digest(conn, table, &cols)?;
        Ok(sealed.get(table) == now)
    }

    /// The last entry of the chain that a checkpoint signed by the study's lead key anchors (the
    /// chain's links and hashes holding up to it), or `None` when none does: no key, no valid
    /// checkpoint, or a chain that does not hold together. What a merge trusts as history.
    pub fn anchored_through(&self) -> StoreResult<Option<i64>> {
        let conn = self.conn();
        let Some(public) = super::lead_key::recorded_public(conn)? else {
            return Ok(None);
        };
        let study_id = super::meta::get(conn, super::seal::META_STUDY_ID)?.unwrap_or_default();
        let wanted = super::checkpoint::entries(conn)?;
        let Some(hashes) = linked_hashes(conn, &wanted)? else {
            return Ok(None);
        };
        super::checkpoint::last_valid(conn, &study_id, &public, &hashes)
    }

    /// The lead key and the checkpoints against the chain (whose links and hashes hold), and
    /// the head recorded elsewhere: the first break, with what was found noted in `check`.
    fn anchoring_break(
        &self,
        rows: &[Row],
        public: Option<&str>,
        trust: &ChainTrust,
        check: &mut ChainCheck,
    ) -> StoreResult<Option<ChainBreak>> {
        let conn = self.conn();
        let study_id = super::meta::get(conn, super::seal::META_STUDY_ID)?.unwrap_or_default();
        let unkeyed = |message: String| ChainBreak {
            entry: None,
            table: None,
            message,
        };
        if let Some(local) = &trust.local_key {
            match public {
                None => {
                    return Ok(Some(unkeyed(format!(
                        "the study carries no lead public key, but this machine holds the lead key of study {study_id}: the study's key and checkpoints were removed outside Concord"
                    ))))
                }
                Some(p) if p != local => {
                    return Ok(Some(unkeyed(format!(
                        "the study's lead public key ({}) is not the lead key this machine holds for study {study_id} ({}): the study's key was replaced outside Concord, and its chain re-signed with another key",
                        super::lead_key::fingerprint(p),
                        super::lead_key::fingerprint(local)
                    ))))
                }
                Some(_) => check.key_held_here = true,
            }
        }
        if let Some(problem) = public.and_then(super::checkpoint::public_key_problem) {
            return Ok(Some(unkeyed(problem)));
        }
        let chained: Vec<&Row> = rows.iter().filter(|r| r.hash.is_some()).collect();
        let ids: Vec<i64> = chained.iter().map(|r| r.id).collect();
        let hashes: HashMap<i64, String> = chained
            .iter()
            .filter_map(|r| r.hash.clone().map(|h| (r.id, h)))
            .collect();
        let key_entry = check.key_entry.filter(|_| public.is_some());
        if public.is_some() && key_entry.is_none() {
            return Ok(Some(unkeyed(
                "the study has a lead public key but no record of the entry at which it was made: it was added or changed outside Concord".to_string(),
            )));
        }
        match super::checkpoint::check(conn, &study_id, public, key_entry, &ids, &hashes)? {
            Err(m) => return Ok(Some(broken_at(m.entry, m.message))),
            Ok(a) => {
                check.checkpoints = a.checkpoints;
                check.anchored_through = a.anchored_through;
                check.unsigned = a.unsigned;
                check.first_unsigned = a.first_unsigned;
                check.not_anchored = ids
                    .iter()
                    .filter(|&&id| a.anchored_through.is_none_or(|t| id > t))
                    .count();
            }
        }
        if trust.require_signed {
            let first_loose = check.first_unsigned.or_else(|| {
                ids.iter()
                    .copied()
                    .find(|&id| check.anchored_through.is_none_or(|t| id > t))
            });
            if let Some(entry) = first_loose {
                return Ok(Some(broken_at(
                    entry,
                    format!(
                        "entry {entry} was not written under the lead's key (no signed checkpoint's write appended it): it was written where the key was not available, or added outside Concord"
                    ),
                )));
            }
        }
        if let Some(expected) = &trust.expect_head {
            let want = expected.trim().to_ascii_lowercase();
            match chained.iter().find(|r| r.hash.as_deref() == Some(want.as_str())) {
                Some(r) => check.expected_head_at = Some(r.id),
                None => {
                    return Ok(Some(unkeyed(format!(
                        "the head {want} recorded elsewhere is not an entry of this chain: the chain was rewritten, or cut back, after it was recorded"
                    ))))
                }
            }
        }
        Ok(None)
    }

    /// Recompute the chain and the state of the tracked tables: the entries walked and their
    /// hashes recomputed, the recorded head compared with the chain's end, the tables with the
    /// last seal, and the kept rating counts with the ratings. The first problem is reported.
    pub fn verify_audit_chain(&self) -> StoreResult<ChainCheck> {
        self.verify_audit_chain_with(&ChainTrust::default())
    }

    /// [`Store::verify_audit_chain`], and the chain's signed checkpoints under the study's lead
    /// public key, which must be the key this machine holds for the study when it holds one
    /// (`trust.local_key`), and the head recorded elsewhere (`trust.expect_head`), which must be
    /// an entry of the chain. The first problem is reported.
    pub fn verify_audit_chain_with(&self, trust: &ChainTrust) -> StoreResult<ChainCheck> {
        // Every page is checked first (its HMAC in an encrypted study): no digest of rows read
        // from a damaged page can be trusted.
        if let Some(problem) = self.page_problems()?.into_iter().next() {
            return Ok(ChainCheck::damaged(format!(
                "the file is damaged ({problem}): a page was changed outside Concord or the file was corrupted"
            )));
        }
        let conn = self.conn();
        // One snapshot for every read: another process writing the study meanwhile (the server,
        // the window) must not make the entries and the recorded head disagree.
        let _snapshot = super::untrusted::Snapshot::take(conn);
        let rows = audit_rows(conn)?;
        let public = super::lead_key::recorded_public(conn)?;
        let key_entry = match &public {
            Some(p) => key_entry_in_chain(conn, p)?,
            None => None,
        };
        let mut check = ChainCheck {
            entries: 0,
            unchained: 0,
            head: None,
            started_at: None,
            started_at_upgrade: false,
            lead_key: public.as_deref().map(super::lead_key::fingerprint),
            key_entry,
            key_held_here: false,
            checkpoints: 0,
            anchored_through: None,
            not_anchored: 0,
            unsigned: 0,
            first_unsigned: None,
            expected_head_at: None,
            broken: None,
        };
        let end = match walk_chain(&rows, &mut check) {
            Ok(end) => end,
            Err(broken) => {
                check.broken = Some(broken);
                return Ok(check);
            }
        };
        if let Some(broken) = self.anchoring_break(&rows, public.as_deref(), trust, &mut check)? {
            check.broken = Some(broken);
            return Ok(check);
        }
        if let Some(broken) = recorded_head_break(conn, &end)? {
            check.broken = Some(broken);
            return Ok(check);
        }
        let ChainEnd { id, hash, state } = end;
        check.head = Some(hash);
        if let Some(broken) = sealed_table_break(conn, id, &state)? {
            check.broken = Some(broken);
            return Ok(check);
        }
        // The kept rating counts are derived from the sealed ratings, not sealed themselves;
        // they must still agree with them.
        if let Some(d) = self.kept_count_differences()?.first() {
            check.broken = Some(ChainBreak {
                entry: None,
                table: Some("rating_count".into()),
                message: format!(
                    "the rating_count table does not match the ratings (rater {}: {} ratings and {} responses kept, {} and {} counted): it was changed outside Concord",
                    d.rater_id, d.kept.ratings, d.kept.responses, d.recounted.ratings, d.recounted.responses
                ),
            });
        }
        Ok(check)
    }

    /// Rater names by id (to show audit entries).
    pub fn rater_names(&self) -> StoreResult<BTreeMap<i64, String>> {
        let mut stmt = self.conn().prepare("SELECT id, name FROM rater")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Item names of responses by id: the response's external id, else
    /// `<conversation>/<source key>` (to show audit entries).
    pub fn response_item_names(&self) -> StoreResult<BTreeMap<i64, String>> {
        let mut stmt = self.conn().prepare(
            "SELECT p.id, COALESCE(p.external_id, c.external_id || '/' || s.key)
             FROM response p JOIN conversation c ON c.id = p.conversation_id
             JOIN source s ON s.id = p.source_id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Criterion keys by id (to show audit entries).
    pub fn criterion_names(&self) -> StoreResult<BTreeMap<i64, String>> {
        let mut stmt = self.conn().prepare("SELECT id, key FROM criterion")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The hash of the chain's last entry (what exports cite).
    pub fn audit_head(&self) -> StoreResult<Option<String>> {
        Ok(head(self.conn())?.map(|(_, h, _)| h))
    }

    /// Audit entries between two instants (inclusive), oldest first.
    pub fn audit_entries(
        &self,
        since: Option<Millis>,
        until: Option<Millis>,
    ) -> StoreResult<Vec<AuditEntry>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, at, actor, action, detail_json, hash FROM audit_log
             WHERE (?1 IS NULL OR at >= ?1) AND (?2 IS NULL OR at <= ?2) ORDER BY id",
        )?;
        let rows = stmt.query_map(params![since, until], |r| {
            let detail: String = r.get(4)?;
            Ok(AuditEntry {
                id: r.get(0)?,
                at: r.get(1)?,
                actor: r.get(2)?,
                action: r.get(3)?,
                detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::String(detail)),
                hash: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
