//! Scale of `concord import conversations` (a plain binary, `harness = false`), beside a lean
//! Python peer in the same run:
//!
//! `cargo bench -p concord-cli --bench conversations_scale -- [--conversations N] [--turns T]
//! [--candidates K] [--concord PATH] [--keep DIR]`
//!
//! 1. Writes (seeded) a turn table as CSV: N conversations (default 10,000) of T turns (default
//!    20) — user and assistant turns alternating, the chatbot `bot` answering — whose last turn is
//!    answered by K candidates (default 4): T − 1 + K rows each (230,000 rows by default).
//! 2. Times `concord import conversations FILE --json` into a new study, as its own process (the
//!    `concord` built with this bench's profile, a release build, unless `--concord` names one),
//!    with its wall and CPU time and peak resident memory (GNU time), and checks the counts it
//!    prints. The import includes everything a user's import does: the checks, the audit chain's
//!    digests, the import record and the PHI scan of every turn.
//! 3. Times the peer on the same file: Python's `csv` and `sqlite3` loading every row into a
//!    `turn` table keyed by conversation (conversations and sources interned), with the pragmas
//!    Concord uses (WAL, synchronous FULL, foreign keys on, one transaction), no checks.
//!
//! Prints one Markdown table and the ratios import / peer (goals: peak RSS ≤ 300 MB, wall ≤ 1.0×).
//! Needs `python3` and `/usr/bin/time` (GNU time); the data is synthetic, nothing is fetched.

use concord_testsupport::conversation_files::generated_table_csv;
use std::path::{Path, PathBuf};
use std::process::Command;

const PEER: &str = r#"
import csv, sqlite3, sys
db, path = sys.argv[1:3]
con = sqlite3.connect(db, isolation_level=None)
con.execute("PRAGMA journal_mode = WAL")
con.executescript("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY;")
con.executescript("""
CREATE TABLE source(id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
CREATE TABLE conversation(id INTEGER PRIMARY KEY, external_id TEXT NOT NULL UNIQUE,
  category TEXT, language TEXT);
CREATE TABLE turn(id INTEGER PRIMARY KEY,
  conversation_id INTEGER NOT NULL REFERENCES conversation(id),
  position INTEGER NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL,
  source_id INTEGER REFERENCES source(id));
CREATE INDEX turn_by_conversation ON turn(conversation_id, position);
""")
con.execute("BEGIN")
conversations, sources = {}, {}
def conversation(r):
    key = r["conversation_id"]
    if key not in conversations:
        conversations[key] = con.execute(
            "INSERT INTO conversation(external_id, category, language) VALUES (?, ?, ?)",
            (key, r["category"], r["language"])).lastrowid
    return conversations[key]
def source(name):
    if not name:
        return None
    if name not in sources:
        sources[name] = con.execute("INSERT INTO source(key) VALUES (?)", (name,)).lastrowid
    return sources[name]
with open(path, newline="", encoding="utf-8") as f:
    con.executemany(
        "INSERT INTO turn(conversation_id, position, role, text, source_id) VALUES (?, ?, ?, ?, ?)",
        ((conversation(r), int(r["turn"]), r["role"], r["text"], source(r["source"]))
         for r in csv.DictReader(f)))
con.execute("COMMIT")
"#;

struct Options {
    conversations: usize,
    turns: usize,
    candidates: usize,
    concord: PathBuf,
    keep: Option<PathBuf>,
}

fn options() -> Options {
    let mut o = Options {
        conversations: 10_000,
        turns: 20,
        candidates: 4,
        concord: PathBuf::from(env!("CARGO_BIN_EXE_concord")),
        keep: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        let number = || value.parse::<usize>().expect("a whole number");
        match args[i].as_str() {
            "--conversations" => o.conversations = number(),
            "--turns" => o.turns = number(),
            "--candidates" => o.candidates = number(),
            "--concord" => o.concord = PathBuf::from(&value),
            "--keep" => o.keep = Some(PathBuf::from(&value)),
            // `cargo bench` passes `--bench`; anything else unknown is ignored too.
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    assert!(
        o.turns >= 2,
        "a conversation needs a user turn before its candidates"
    );
    o
}

/// Wall seconds, CPU seconds and peak RSS (MB) of one process, via GNU time; its stdout.
fn timed(program: &Path, args: &[&str]) -> ((f64, f64, f64), String) {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%e %U %S %M"])
        .arg(program)
        .args(args)
        .output()
        .expect("GNU time runs (/usr/bin/time)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{} {args:?} failed:\n{}",
        program.display(),
        &stderr[stderr.len().saturating_sub(2000)..]
    );
    let last = stderr.lines().last().unwrap_or_default();
    let f: Vec<f64> = last
        .split_whitespace()
        .map(|x| x.parse().expect("GNU time's figures"))
        .collect();
    (
        (f[0], f[1] + f[2], f[3] / 1024.0),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn main() {
    let o = options();
    let temp = tempfile::tempdir().expect("a temporary folder");
    let dir = o.keep.clone().unwrap_or_else(|| temp.path().to_path_buf());
    std::fs::create_dir_all(&dir).expect("the folder");
    let table = dir.join("conversations.csv");
    let rows = generated_table_csv(&table, o.conversations, o.turns, o.candidates, 20261205);
    let size = std::fs::metadata(&table).map_or(0, |m| m.len());
    let study = dir.join("conversations.concord");
    let peer_db = dir.join("peer.sqlite");
    for path in [&study, &peer_db] {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(p));
        }
    }
    let peer = dir.join("peer_load.py");
    std::fs::write(&peer, PEER).expect("the peer script");
    let s = |p: &Path| p.to_str().expect("a UTF-8 path").to_string();
    let (import, printed) = timed(
        &o.concord,
        &[
            "--db",
            &s(&study),
            "import",
            "conversations",
            &s(&table),
            "--json",
        ],
    );
    let counts: serde_json::Value = serde_json::from_str(&printed).expect("the counts as JSON");
    let rated_before = (o.turns - 1) / 2;
    let expected = serde_json::json!({
        "conversations": o.conversations,
        "turns": rows,
        "reply_items": o.conversations * (rated_before + o.candidates),
        "session_items": 0,
        "sources": 1 + o.candidates,
    });
    assert_eq!(counts, expected, "the import brought in every row");
    let (peer_run, _) = timed(Path::new("python3"), &[&s(&peer), &s(&peer_db), &s(&table)]);
    report(&o, rows, size, &study, import, peer_run);
}

fn report(
    o: &Options,
    rows: usize,
    size: u64,
    study: &Path,
    import: (f64, f64, f64),
    peer: (f64, f64, f64),
) {
    let study_mb: u64 = ["", "-wal"]
        .iter()
        .map(|suffix| {
            let mut p = study.as_os_str().to_owned();
            p.push(suffix);
            std::fs::metadata(PathBuf::from(p)).map_or(0, |m| m.len())
        })
        .sum();
    println!(
        "{} conversations × {} turns, {} candidates at the last: {rows} rows, {:.1} MB of CSV; study file {:.0} MB",
        o.conversations,
        o.turns,
        o.candidates,
        size as f64 / 1e6,
        study_mb as f64 / 1e6
    );
    println!("| operation | wall | CPU | peak RSS |");
    println!("|---|---|---|---|");
    for (name, (wall, cpu, rss)) in [
        ("`concord import conversations` (release)", import),
        ("peer: Python csv + sqlite3, same rows", peer),
    ] {
        println!("| {name} | {wall:.2} s | {cpu:.2} s | {rss:.0} MB |");
    }
    println!(
        "import / peer: wall {:.2} (goal ≤ 1.0), CPU {:.2}; import peak RSS {:.0} MB (goal ≤ 300 MB)",
        import.0 / peer.0,
        import.1 / peer.1,
        import.2
    );
}
