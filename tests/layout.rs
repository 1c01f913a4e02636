//! Architectural invariants checked on every test run: the core crates never depend on tauri,
//! the statistics crate does no IO, and only the store of `concord-core` speaks SQL — with one
//! store module writing each table, as ARCHITECTURE.md's table map says.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every package reachable from `root` through normal and build dependencies (not dev).
fn dependency_closure(root: &str) -> BTreeSet<String> {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let names: BTreeMap<String, String> = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap().to_string(),
                p["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let nodes = meta["resolve"]["nodes"].as_array().expect("resolve graph");
    let edges: BTreeMap<String, Vec<String>> = nodes
        .iter()
        .map(|n| {
            let deps = n["deps"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| {
                    d["dep_kinds"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|k| k["kind"].as_str() != Some("dev"))
                })
                .map(|d| d["pkg"].as_str().unwrap().to_string())
                .collect();
            (n["id"].as_str().unwrap().to_string(), deps)
        })
        .collect();
    let start = names
        .iter()
        .find(|(_, n)| n.as_str() == root)
        .map(|(id, _)| id.clone())
        .unwrap_or_else(|| panic!("{root} is a workspace package"));
    let mut seen = BTreeSet::new();
    let mut stack = vec![start];
    while let Some(id) = stack.pop() {
        if seen.insert(id.clone()) {
            stack.extend(edges.get(&id).cloned().unwrap_or_default());
        }
    }
    seen.into_iter().map(|id| names[&id].clone()).collect()
}

#[test]
fn core_crates_never_depend_on_tauri() {
    for krate in ["concord-core", "concord-stats"] {
        let deps = dependency_closure(krate);
        let gui: Vec<_> = deps
            .iter()
            .filter(|n| {
                n.starts_with("tauri")
                    || n.starts_with("wry")
                    || n.starts_with("webkit2gtk")
                    || n.starts_with("gtk")
            })
            .collect();
        assert!(
            gui.is_empty(),
            "{krate} must stay GUI-free, but depends on {gui:?}"
        );
    }
    assert!(
        dependency_closure("concord").contains("tauri"),
        "the check must be able to see tauri where it is (the desktop package)"
    );
}

#[test]
fn stats_crate_has_no_io_dependencies() {
    let deps = dependency_closure("concord-stats");
    for forbidden in ["rusqlite", "reqwest", "tokio", "calamine", "csv"] {
        assert!(
            !deps.contains(forbidden),
            "concord-stats must stay pure, but depends on {forbidden}"
        );
    }
}

/// A Rust source file split into what the compiler reads as code and its string literals.
/// Comments (line, block, doc) are dropped; every string literal (plain, byte, raw) is replaced
/// in the code by `""` (followed by the newlines it spans, so the code keeps the file's line
/// numbers) and kept with its line. Char literals and lifetimes are told apart by
/// their closing quote. This is enough to read code without being fooled by a comment or a
/// string that mentions a forbidden word.
struct Lexed {
    code: Vec<(usize, String)>,
    strings: Vec<(usize, String)>,
}

fn lex(text: &str) -> Lexed {
    let chars: Vec<char> = text.chars().collect();
    let mut code = String::new();
    let mut strings = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                        code.push('\n');
                    }
                    i += 1;
                }
            }
            continue;
        }
        let prev_ident = i > 0 && ident(chars[i - 1]);
        // Raw strings: r"…", r#"…"#, br#"…"# (the r not part of an identifier).
        let raw_start = if !prev_ident && c == 'r' {
            Some(i + 1)
        } else if !prev_ident && c == 'b' && next == Some('r') {
            Some(i + 2)
        } else {
            None
        };
        if let Some(mut j) = raw_start {
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) == Some(&'"') {
                let start_line = line;
                let mut body = String::new();
                j += 1;
                while j < chars.len() {
                    if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    if chars[j] == '\n' {
                        line += 1;
                    }
                    body.push(chars[j]);
                    j += 1;
                }
                code.push_str("\"\"");
                code.extend(body.chars().filter(|&ch| ch == '\n'));
                strings.push((start_line, body));
                i = j;
                continue;
            }
        }
        if c == '"' {
            let start_line = line;
            let mut body = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    body.push(chars[i]);
                    i += 1;
                }
                if let Some(&ch) = chars.get(i) {
                    if ch == '\n' {
                        line += 1;
                    }
                    body.push(ch);
                }
                i += 1;
            }
            i += 1;
            code.push_str("\"\"");
            code.extend(body.chars().filter(|&ch| ch == '\n'));
            strings.push((start_line, body));
            continue;
        }
        if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                code.push_str("' '");
                continue;
            }
            if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                code.push_str("' '");
                continue;
            }
        }
        if c == '\n' {
            line += 1;
        }
        code.push(c);
        i += 1;
    }
    Lexed {
        code: code
            .lines()
            .enumerate()
            .map(|(n, l)| (n + 1, l.to_string()))
            .collect(),
        strings,
    }
}

/// Upper-case words of a text (identifiers and keywords), in order.
fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether a string literal is (part of) an SQL statement. Decided on its words: `SELECT … FROM`,
/// `INSERT INTO`, `UPDATE <table> SET`, `DELETE FROM`, `CREATE`/`DROP`/`ALTER` followed by
/// `TABLE`, `INDEX`, `TRIGGER` or `VIEW`, `PRAGMA`, `ON CONFLICT`. SQL in this code base is
/// written with upper-case keywords; the data-definition and write forms are also caught in lower
/// case, where prose would not use them.
fn sql_statement(text: &str) -> Option<&'static str> {
    let w = words(text);
    let upper: Vec<String> = w.iter().map(|s| s.to_uppercase()).collect();
    let has = |a: &str, b: &str, exact: bool| {
        w.windows(2).zip(upper.windows(2)).any(|(pair, up)| {
            if exact {
                pair[0] == a && pair[1] == b
            } else {
                up[0] == a && up[1] == b
            }
        })
    };
    if let Some(s) = w.iter().position(|x| *x == "SELECT") {
        if w[s..].contains(&"FROM") {
            return Some("SELECT … FROM");
        }
    }
    // INSERT INTO, INSERT OR IGNORE/REPLACE INTO, REPLACE INTO.
    let into = upper.iter().enumerate().any(|(i, x)| {
        x == "INTO"
            && upper[i.saturating_sub(3)..i]
                .iter()
                .any(|y| y == "INSERT" || y == "REPLACE")
    });
    if into {
        return Some("INSERT INTO");
    }
    if has("DELETE", "FROM", false) {
        return Some("DELETE FROM");
    }
    if w.windows(3).any(|t| t[0] == "UPDATE" && t[2] == "SET") {
        return Some("UPDATE … SET");
    }
    for verb in ["CREATE", "DROP", "ALTER"] {
        for object in ["TABLE", "INDEX", "TRIGGER", "VIEW"] {
            if has(verb, object, false) {
                return Some("CREATE/DROP/ALTER");
            }
        }
    }
    if w.contains(&"PRAGMA") {
        return Some("PRAGMA");
    }
    if has("ON", "CONFLICT", true) {
        return Some("ON CONFLICT");
    }
    None
}

/// What in code (outside comments and strings) means using the database directly: the SQLite
/// crate itself, a connection or transaction, or the statement calls.
const DATABASE_CODE: [&str; 12] = [
    "rusqlite",
    "Connection",
    "Transaction",
    ".conn(",
    ".prepare(",
    ".prepare_cached(",
    ".execute(",
    ".execute_batch(",
    ".query(",
    ".query_row(",
    ".query_map(",
    "params!",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn core_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/crates/concord-core/src")
}

fn is_store(path: &Path) -> bool {
    let rel = path
        .strip_prefix(core_src())
        .expect("under the core sources");
    rel == Path::new("store.rs") || rel.starts_with("store")
}

/// Only `store.rs` and `store/` of concord-core may hold SQL or touch the connection: every other
/// core module goes through the store's typed functions. Every `.rs` file under the crate's
/// `src/` is read (comments dropped, strings kept apart, see [`lex`]); a string literal that
/// reads as an SQL statement ([`sql_statement`]) or code that names the SQLite crate, a
/// connection or transaction, or calls prepare/execute/query ([`DATABASE_CODE`]) outside the
/// store fails the test with its file and line; inside the store, a statement that takes its
/// table name from a variable (`FROM {…}`) fails it too. (The crate's own `tests/` and `benches/` may
/// open a study file directly to check what is on disk; they are not part of the crate.)
#[test]
fn only_the_store_speaks_sql() {
    let mut files = Vec::new();
    rust_files(&core_src(), &mut files);
    files.sort();
    assert!(
        files.iter().filter(|f| is_store(f)).count() >= 5,
        "the check must see the store's own modules (found {files:?})"
    );
    let mut found = Vec::new();
    let mut store_sql = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("a readable source file");
        let lexed = lex(&text);
        let rel = path.strip_prefix(core_src()).unwrap().display().to_string();
        if is_store(path) {
            for (line, s) in &lexed.strings {
                if sql_statement(s).is_some() {
                    store_sql += 1;
                }
                // A table is named in the statement, never filled in from a variable.
                for keyword in ["FROM {", "INTO {", "UPDATE {", "JOIN {"] {
                    if s.contains(keyword) {
                        found.push(format!("{rel}:{line}: table chosen at run time: {s:?}"));
                    }
                }
            }
            continue;
        }
        for (line, s) in &lexed.strings {
            if let Some(kind) = sql_statement(s) {
                found.push(format!("{rel}:{line}: SQL ({kind}) in a string: {s:?}"));
            }
        }
        for (line, l) in &lexed.code {
            for needle in DATABASE_CODE {
                if l.contains(needle) {
                    found.push(format!(
                        "{rel}:{line}: `{needle}` outside the store: {}",
                        l.trim()
                    ));
                }
            }
        }
    }
    assert!(
        store_sql > 100,
        "the SQL detector must recognise the store's own statements (it found {store_sql})"
    );
    assert!(
        found.is_empty(),
        "only store/ may run SQL or touch the connection; move these into a typed store function:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_sql_detector_reads_code_as_the_compiler_does() {
    let lexed = lex(
        "// SELECT x FROM y\nlet a = \"SELECT id FROM rating\"; /* conn.prepare(q) */\n\
         let b = r#\"DELETE FROM \"flag\"\"#; let c = '\"'; fn f<'a>(x: &'a str) {}\n\
         let d = \"Select a rater from the list\"; store.conn().execute(q);",
    );
    let kinds: Vec<Option<&str>> = lexed
        .strings
        .iter()
        .map(|(_, s)| sql_statement(s))
        .collect();
    assert_eq!(
        kinds,
        vec![Some("SELECT … FROM"), Some("DELETE FROM"), None],
        "statements in plain and raw strings are found, prose is not, comments are skipped"
    );
    let code: String = lexed.code.iter().map(|(_, l)| l.as_str()).collect();
    assert!(
        !code.contains("prepare") && code.contains(".conn().execute("),
        "comments are dropped from the code and calls outside them are kept: {code}"
    );
}

/// The tables a store module writes: the targets of INSERT (OR …) INTO, REPLACE INTO, UPDATE … SET
/// and DELETE FROM in its string literals.
fn written_tables(strings: &[(usize, String)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, s) in strings {
        let w = words(s);
        let inserts = w.contains(&"INSERT") || w.contains(&"REPLACE");
        for t in w.windows(3) {
            let table = match (t[0], t[1]) {
                ("INTO", table) if inserts => table,
                ("DELETE", "FROM") => t[2],
                ("UPDATE", table) if t[2] == "SET" => table,
                _ => continue,
            };
            out.insert(table.to_string());
        }
    }
    out
}

/// Every table is written by exactly one store module, and ARCHITECTURE.md's "where is table X
/// written" map says which: the test reads the map's `| `table` | `store/…` |` rows and compares.
#[test]
fn each_table_has_one_writing_store_module() {
    let mut files = Vec::new();
    rust_files(&core_src(), &mut files);
    let mut writers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // The store's unit tests (`store/tests.rs`) build old-schema fixtures with raw SQL; they are
    // not a writer of the study.
    for path in files
        .iter()
        .filter(|f| is_store(f) && !f.ends_with("store/tests.rs"))
    {
        let text = std::fs::read_to_string(path).expect("a readable source file");
        let rel = path.strip_prefix(core_src()).unwrap().display().to_string();
        for table in written_tables(&lex(&text).strings) {
            writers.entry(table).or_default().insert(rel.clone());
        }
    }
    let shared: Vec<_> = writers.iter().filter(|(_, m)| m.len() > 1).collect();
    assert!(
        shared.is_empty(),
        "each table must be written by one store module: {shared:?}"
    );
    assert!(
        writers.contains_key("rating") && writers.contains_key("judge_call"),
        "the check must see the store's writes (found {writers:?})"
    );
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .expect("ARCHITECTURE.md");
    let documented: BTreeMap<String, String> = doc
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let table = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let module = cells.get(2)?.strip_prefix("`store/")?.strip_suffix('`')?;
            Some((table.to_string(), format!("store/{module}")))
        })
        .collect();
    let actual: BTreeMap<String, String> = writers
        .into_iter()
        .map(|(t, m)| (t, m.into_iter().next().unwrap_or_default()))
        .collect();
    assert_eq!(
        documented, actual,
        "ARCHITECTURE.md's table map must name the store module that writes each table"
    );
}

/// Tests are one binary per crate: each crate's `tests/` holds only `it/` (a `main.rs` and one
/// module per capability) and fixture folders, so the helpers compile once, in the unpublished
/// `concord-testsupport` crate, instead of into each of forty binaries with `allow(dead_code)`;
/// no bench or example reaches into `tests/` with `#[path]`.
#[test]
fn each_crate_has_one_integration_test_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = root.join("src-tauri/crates");
    let mut seen = 0;
    for entry in std::fs::read_dir(&crates).expect("the crates folder") {
        let krate = entry.expect("a directory entry").path();
        let tests = krate.join("tests");
        if !tests.is_dir() {
            continue;
        }
        seen += 1;
        for entry in std::fs::read_dir(&tests).expect("a tests folder") {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                path.is_dir() && (name == "it" || !path.join("main.rs").exists()),
                "{}: a crate's tests/ holds only it/ and fixture folders, so it builds one test \
                 binary (found {name})",
                tests.display()
            );
            if path.is_dir() && name != "it" {
                let mut rs = Vec::new();
                rust_files(&path, &mut rs);
                assert!(
                    rs.is_empty(),
                    "{}: Rust code outside tests/it/ ({rs:?}); shared helpers go in concord-testsupport",
                    path.display()
                );
            }
        }
        assert!(
            tests.join("it/main.rs").is_file(),
            "{}: the crate's one test binary is tests/it/main.rs",
            tests.display()
        );
    }
    assert!(
        seen >= 3,
        "the check must see the crates' tests (found {seen})"
    );
    let mut sources = Vec::new();
    rust_files(&crates, &mut sources);
    rust_files(&root.join("tests"), &mut sources);
    for file in sources {
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        let code: String = lex(&text)
            .code
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        for banned in ["#[path", "allow(dead_code)"] {
            assert!(
                !code.contains(banned),
                "{}: `{banned}` — share code through concord-testsupport instead",
                file.display()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The core's layers: folders on rows, imports only downward, no circles.
//
// How it decides. Each `.rs` file is lexed ([`lex`]: comments dropped, strings blanked) and its
// test code removed (an item under `#[cfg(test)]`, and a file such an item declares). What is
// left is searched for module paths: `crate::…` and `super::…` (resolved against the file's own
// module path, inline `mod x { … }` blocks included), in `use` trees (`{…}` groups expanded) and
// in expressions alike; `self::…` and a bare child name stay inside the file's own folder. A path
// names the longest module that exists as a file, so `crate::store::Store::open` is an edge to
// `store/mod.rs` and `crate::files::table::Cell` one to `files/table.rs`.
// ---------------------------------------------------------------------------------------------

/// A crate's modules: module path (segments under the crate root) → source file.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|f| (module_path(src, &f), f))
        .collect()
}

fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("under the crate's sources");
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The code of a file without its test items: after `#[cfg(test)]` (and any further attributes)
/// the item up to its `;` or its matching `}` is dropped. Returns the code and the names of the
/// out-of-line modules it declares under `#[cfg(test)]` (`mod tests;`).
fn without_tests(code: &str) -> (String, Vec<String>) {
    let chars: Vec<char> = code.chars().collect();
    let marker: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut out = String::new();
    let mut test_mods = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i..].starts_with(&marker) {
            let mut j = i + marker.len();
            let start = j;
            while j < chars.len() && chars[j] != ';' && chars[j] != '{' {
                j += 1;
            }
            let head: String = chars[start..j.min(chars.len())].iter().collect();
            if chars.get(j) == Some(&';') {
                let words: Vec<&str> = head.split_whitespace().collect();
                if let Some(p) = words.iter().position(|w| *w == "mod") {
                    if let Some(name) = words.get(p + 1) {
                        test_mods.push(name.to_string());
                    }
                }
                i = j + 1;
                continue;
            }
            i = matching_brace(&chars, j) + 1;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    (out, test_mods)
}

/// The index of the `}` that closes the `{` at `open` (the end of `chars` when none does).
fn matching_brace(chars: &[char], open: usize) -> usize {
    let mut depth = 0;
    for (k, c) in chars.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    chars.len()
}

/// The inline `mod name {` blocks of `code`: (start, end, name), by brace matching.
fn inline_modules(code: &[char]) -> Vec<(usize, usize, String)> {
    let text: String = code.iter().collect();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("mod ") {
        let start = from + at;
        from = start + 4;
        let before = text[..start].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[start + 4..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let after = rest[name.len()..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue;
        }
        let open = text.len() - after.len();
        let (mut depth, mut end) = (0, open);
        for (k, c) in text[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        // Byte offsets → char offsets.
        let s = text[..start].chars().count();
        let e = text[..end].chars().count();
        found.push((s, e, name));
    }
    found
}

/// Expand the path that starts at `code[i]` (just after `crate::` or `super::…::`) into every
/// full path it names: `a::b::C`, or a `use` group `a::{b::C, d, self}`.
fn expand_path(code: &[char], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut prefix = Vec::new();
    loop {
        while i < code.len() && code[i].is_whitespace() {
            i += 1;
        }
        if code.get(i) == Some(&'{') {
            let mut all = Vec::new();
            i += 1;
            loop {
                while i < code.len() && (code[i].is_whitespace() || code[i] == ',') {
                    i += 1;
                }
                if i >= code.len() || code[i] == '}' {
                    return (all, i + 1);
                }
                let (subs, next) = expand_path(code, i);
                for s in subs {
                    let mut p = prefix.clone();
                    p.extend(s.into_iter().filter(|x| x != "self"));
                    all.push(p);
                }
                if next <= i {
                    return (all, i + 1);
                }
                i = next;
                // Skip `as name`.
                while i < code.len() && code[i] != ',' && code[i] != '}' {
                    i += 1;
                }
            }
        }
        let start = i;
        while i < code.len() && (ident(code[i]) || code[i] == '*') {
            i += 1;
        }
        if i == start {
            return (vec![prefix], i);
        }
        prefix.push(code[start..i].iter().collect());
        if code.get(i) == Some(&':') && code.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            return (vec![prefix], i);
        }
    }
}

/// Every module of `mods` that the non-test code of `file` (module path `me`) names.
fn imported_modules(
    file: &Path,
    me: &[String],
    mods: &BTreeMap<Vec<String>, PathBuf>,
) -> BTreeSet<Vec<String>> {
    let text = std::fs::read_to_string(file).expect("a readable source file");
    let lexed = lex(&text);
    let code: String = lexed
        .code
        .iter()
        .map(|(_, l)| l.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let (code, _) = without_tests(&code);
    let chars: Vec<char> = code.chars().collect();
    let blocks = inline_modules(&chars);
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < chars.len() {
        let boundary = i == 0 || !ident(chars[i - 1]);
        let word = |w: &str| {
            let w: Vec<char> = w.chars().collect();
            chars[i..].starts_with(&w)
        };
        if boundary && (word("crate::") || word("super::")) {
            // The module this position is in: the file's, plus enclosing inline modules.
            let mut here = me.to_vec();
            for (s, e, name) in &blocks {
                if *s <= i && i < *e {
                    here.push(name.clone());
                }
            }
            let mut base = Vec::new();
            let mut j = i;
            if word("crate::") {
                j += "crate::".len();
            } else {
                base = here;
                while chars[j..].starts_with(&['s', 'u', 'p', 'e', 'r', ':', ':']) {
                    base.pop();
                    j += "super::".len();
                }
            }
            let (paths, next) = expand_path(&chars, j);
            for p in paths {
                let mut full = base.clone();
                full.extend(p.into_iter().filter(|s| s != "*"));
                // The longest prefix that is a module file.
                while !full.is_empty() && !mods.contains_key(&full) {
                    full.pop();
                }
                if !full.is_empty() {
                    out.insert(full);
                }
            }
            i = next.max(i + 1);
            continue;
        }
        i += 1;
    }
    out.remove(me);
    out
}

/// A crate's module graph without test code: module → the modules it imports.
fn module_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mods = modules(src);
    let mut test_files = BTreeSet::new();
    for (me, file) in &mods {
        let text = std::fs::read_to_string(file).expect("a readable source file");
        let code: String = lex(&text)
            .code
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        for name in without_tests(&code).1 {
            let mut m = me.clone();
            m.push(name);
            test_files.insert(m);
        }
    }
    mods.iter()
        .filter(|(me, _)| !test_files.contains(*me))
        .map(|(me, file)| (me.clone(), imported_modules(file, me, &mods)))
        .collect()
}

/// The row each folder of concord-core declares in its `mod.rs`'s first line (`**Row N**`).
fn declared_rows() -> BTreeMap<String, u32> {
    let mut rows = BTreeMap::new();
    for entry in std::fs::read_dir(core_src()).expect("core sources") {
        let path = entry.expect("a directory entry").path();
        if !path.is_dir() {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let doc = std::fs::read_to_string(path.join("mod.rs"))
            .unwrap_or_else(|_| panic!("the folder {name}/ must have a mod.rs stating its row"));
        let first = doc.lines().next().unwrap_or_default();
        let row = first
            .strip_prefix("//! **Row ")
            .and_then(|r| r.split("**").next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| {
                panic!("{name}/mod.rs must open with `//! **Row N**` (its row), found {first:?}")
            });
        rows.insert(name, row);
    }
    rows
}

/// The upward or sideways imports of concord-core: (importing module, imported module), where
/// the imported one's folder is not the importer's own and is not on a lower row.
fn layer_violations(
    graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    rows: &BTreeMap<String, u32>,
) -> Vec<String> {
    let mut bad = Vec::new();
    for (from, tos) in graph {
        let Some(from_folder) = from.first() else {
            continue; // lib.rs declares the folders
        };
        for to in tos {
            let to_folder = &to[0];
            if to_folder == from_folder {
                continue;
            }
            let (a, b) = (rows[from_folder], rows[to_folder]);
            if b >= a {
                bad.push(format!(
                    "{} (row {a}) imports {} (row {b})",
                    from.join("::"),
                    to.join("::")
                ));
            }
        }
    }
    bad
}

/// The circles among a crate's files: strongly connected components of more than one module.
/// A folder's `mod.rs` is its front door (it declares and re-exports its children, which use
/// the types it holds), so edges between a `mod.rs` and the modules under it are not counted.
fn circles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    let is_under = |a: &Vec<String>, b: &Vec<String>| b.len() > a.len() && b.starts_with(a);
    let edges: BTreeMap<&Vec<String>, Vec<&Vec<String>>> = graph
        .iter()
        .map(|(a, tos)| {
            let next = tos
                .iter()
                .filter(|b| !is_under(a, b) && !is_under(b, a) && graph.contains_key(*b))
                .collect();
            (a, next)
        })
        .collect();
    // Kosaraju: order by finish time, then walk the reversed graph.
    let mut order = Vec::new();
    let mut seen = BTreeSet::new();
    for &start in edges.keys() {
        if seen.contains(start) {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        seen.insert(start);
        while let Some((v, k)) = stack.pop() {
            if let Some(&w) = edges[v].get(k) {
                stack.push((v, k + 1));
                if seen.insert(w) {
                    stack.push((w, 0));
                }
            } else {
                order.push(v);
            }
        }
    }
    let mut reversed: BTreeMap<&Vec<String>, Vec<&Vec<String>>> = BTreeMap::new();
    for (&a, tos) in &edges {
        for &b in tos {
            reversed.entry(b).or_default().push(a);
        }
    }
    let mut assigned = BTreeSet::new();
    let mut found = Vec::new();
    for &v in order.iter().rev() {
        if !assigned.insert(v) {
            continue;
        }
        let mut comp = vec![v.join("::")];
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            for &y in reversed.get(x).map(Vec::as_slice).unwrap_or_default() {
                if assigned.insert(y) {
                    comp.push(y.join("::"));
                    stack.push(y);
                }
            }
        }
        if comp.len() > 1 {
            comp.sort();
            found.push(comp);
        }
    }
    found
}

#[test]
fn core_files_import_only_their_folder_and_lower_rows() {
    let rows = declared_rows();
    assert!(
        rows.len() >= 8,
        "the check must see the core's folders (found {rows:?})"
    );
    let loose: Vec<_> = std::fs::read_dir(core_src())
        .expect("core sources")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "lib.rs"))
        .collect();
    assert!(
        loose.is_empty(),
        "every core module lives in a folder with a row; loose files: {loose:?}"
    );
    let graph = module_graph(&core_src());
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    assert!(
        edges > 300 && graph[&vec!["app".to_string(), "import".to_string()]].len() > 5,
        "the check must see the core's imports (found {edges} edges)"
    );
    let bad = layer_violations(&graph, &rows);
    assert!(
        bad.is_empty(),
        "a core file imports only its own folder and folders on lower rows (each folder's mod.rs \
         states its row):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_layer_check_sees_an_upward_import_and_test_code_apart() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path();
    for (file, text) in [
        ("lib.rs", "pub mod low;\npub mod high;\n"),
        ("low/mod.rs", "//! **Row 0**\npub mod a;\n"),
        (
            "low/a.rs",
            "use crate::{high::{b::B, self}};\n#[cfg(test)]\nmod tests { use crate::high::c; }\n",
        ),
        ("high/mod.rs", "//! **Row 1**\npub mod b;\n#[cfg(test)]\nmod c;\n"),
        ("high/b.rs", "// crate::low::nothing in a comment\nconst S: &str = \"crate::low::a\";\npub struct B(super::super::low::a::A);\n"),
        ("high/c.rs", "use crate::low::a;\n"),
    ] {
        let path = src.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let graph = module_graph(src);
    let m = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    assert_eq!(
        graph[&m("low::a")],
        [m("high"), m("high::b")].into_iter().collect(),
        "a grouped `use crate::{{…}}` names both modules; the test module's import is not counted"
    );
    assert_eq!(
        graph[&m("high::b")],
        [m("low::a")].into_iter().collect(),
        "`super::super::` resolves to the crate root; a comment or a string names nothing"
    );
    assert!(
        !graph.contains_key(&m("high::c")),
        "a file declared under #[cfg(test)] is test code"
    );
    let rows: BTreeMap<String, u32> = [("low".to_string(), 0), ("high".to_string(), 1)].into();
    let bad = layer_violations(&graph, &rows);
    assert_eq!(
        bad,
        [
            "low::a (row 0) imports high (row 1)",
            "low::a (row 0) imports high::b (row 1)"
        ],
        "an import from row 0 into row 1 is upward; row 1 into row 0 is allowed"
    );
    assert_eq!(
        circles(&graph),
        vec![vec!["high::b".to_string(), "low::a".to_string()]],
        "low::a and high::b import each other"
    );
}

#[test]
fn no_circles_among_the_files_of_core_shell_and_cli() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for src in [
        core_src(),
        root.join("src-tauri/src"),
        root.join("src-tauri/crates/concord-cli/src"),
        root.join("src-tauri/crates/concord-stats/src"),
        root.join("src-tauri/crates/concord-web/src"),
    ] {
        let graph = module_graph(&src);
        assert!(
            graph.values().any(|t| !t.is_empty()),
            "the check must see the imports of {}",
            src.display()
        );
        let found = circles(&graph);
        assert!(
            found.is_empty(),
            "files of {} import each other in circles (break each by moving what both need into \
             the lower one or a new file): {found:?}",
            src.display()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The window never waits for the study: every command that touches it is `async` and hands the
// work to the blocking pool.
//
// How it decides. Each file of `src-tauri/src/commands/` is lexed ([`lex`]) and split into
// tokens (identifiers; every other character alone). A function's body is its `{…}` after
// `fn NAME`; it is a command when `#[tauri::command…]` is among its attributes. A body *waits*
// for the study lock when it calls one of `AppState`'s waiting methods (`.with_study(`,
// `.opened(`, `.study_file(`, `.set_study(`, `.switch(`, `.close(`) or a function of the same
// file that waits; it *hands over* when it calls `.run(`, `.run_opened(` or `.run_with(`, whose
// closure runs on the blocking pool.
// ---------------------------------------------------------------------------------------------

const WAITS_FOR_STUDY: [&str; 6] = [
    "with_study",
    "opened",
    "study_file",
    "set_study",
    "switch",
    "close",
];
const HANDS_TO_POOL: [&str; 3] = ["run", "run_opened", "run_with"];

fn tokens(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in code.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        if !c.is_whitespace() {
            out.push(c.to_string());
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The index of the token closing the bracket opened at `open`.
fn closing(t: &[String], open: usize) -> usize {
    let (o, c) = if t[open] == "(" {
        ("(", ")")
    } else {
        ("{", "}")
    };
    let mut depth = 0;
    for (i, tok) in t.iter().enumerate().skip(open) {
        if tok == o {
            depth += 1;
        } else if tok == c {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        }
    }
    t.len() - 1
}

struct ShellFn {
    name: String,
    command: bool,
    is_async: bool,
    /// The tokens of the body.
    body: Vec<String>,
}

fn shell_fns(code: &str) -> Vec<ShellFn> {
    let t = tokens(code);
    let mut out = Vec::new();
    for i in 0..t.len().saturating_sub(1) {
        if t[i] != "fn" {
            continue;
        }
        // The item's head: back to the end of the previous item (or the start of a block).
        let start = t[..i]
            .iter()
            .rposition(|x| x == ";" || x == "}" || x == "{")
            .map_or(0, |p| p + 1);
        let head = &t[start..i];
        let command = head.windows(6).any(|w| w.join("") == "#[tauri::command");
        let Some(open) = (i..t.len()).find(|&j| t[j] == "{") else {
            continue;
        };
        out.push(ShellFn {
            name: t[i + 1].clone(),
            command,
            is_async: head.iter().any(|x| x == "async"),
            body: t[open..=closing(&t, open)].to_vec(),
        });
    }
    out
}

/// The calls in `body` that wait for the study lock: waiting methods and `helpers`.
fn waiting_calls(body: &[String], helpers: &BTreeSet<String>) -> Vec<String> {
    let mut found = Vec::new();
    for i in 1..body.len().saturating_sub(1) {
        let name = body[i].as_str();
        let called = body[i + 1] == "(";
        let method = body[i - 1] == ".";
        if called && method && WAITS_FOR_STUDY.contains(&name) {
            found.push(format!(".{name}("));
        } else if called && !method && body[i - 1] != "fn" && helpers.contains(name) {
            found.push(format!("{name}(…)"));
        }
    }
    found
}

/// `body` with the arguments of every `.run(…)`, `.run_opened(…)` and `.run_with(…)` left out.
fn outside_the_pool(body: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let hands = i > 0
            && body[i - 1] == "."
            && HANDS_TO_POOL.contains(&body[i].as_str())
            && body.get(i + 1).is_some_and(|x| x == "(");
        if hands {
            out.push(body[i].clone());
            i = closing(body, i + 1) + 1;
            continue;
        }
        out.push(body[i].clone());
        i += 1;
    }
    out
}

/// What is wrong with the commands of one file (its code lexed).
fn commands_that_hold_the_window(file: &str, code: &str) -> (usize, Vec<String>) {
    let fns = shell_fns(code);
    // The file's own functions that wait, directly or through one another.
    let mut helpers = BTreeSet::new();
    loop {
        let before = helpers.len();
        for f in fns.iter().filter(|f| !f.command) {
            if !waiting_calls(&f.body, &helpers).is_empty() {
                helpers.insert(f.name.clone());
            }
        }
        if helpers.len() == before {
            break;
        }
    }
    let mut problems = Vec::new();
    let commands: Vec<&ShellFn> = fns.iter().filter(|f| f.command).collect();
    for f in &commands {
        let waits = waiting_calls(&f.body, &helpers);
        let hands = f
            .body
            .windows(2)
            .any(|w| w[0] == "." && HANDS_TO_POOL.contains(&w[1].as_str()));
        if !f.is_async && (hands || !waits.is_empty()) {
            problems.push(format!(
                "{file}: `{}` touches the study but is not async, so it runs on the window's \
                 main thread (calls {waits:?}); make it async and hand the work to state.run",
                f.name
            ));
        }
        let here = waiting_calls(&outside_the_pool(&f.body), &helpers);
        if f.is_async && !here.is_empty() {
            problems.push(format!(
                "{file}: `{}` waits for the study on an async worker (calls {here:?}); call it \
                 inside state.run / run_opened / run_with, which run on the blocking pool",
                f.name
            ));
        }
    }
    (commands.len(), problems)
}

#[test]
fn no_command_waits_for_the_study_on_the_main_thread_or_an_async_worker() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("src-tauri/src/commands");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut seen = 0;
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a readable command file");
        let code = lex(&text)
            .code
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let name = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let (n, found) = commands_that_hold_the_window(&name, &code);
        assert_eq!(
            n,
            text.matches("#[tauri::command").count(),
            "{}: every #[tauri::command] is read as a function",
            file.display()
        );
        seen += n;
        problems.extend(found);
    }
    assert!(
        seen >= 60,
        "the check must see the shell's commands (found {seen})"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_window_check_catches_a_command_that_waits() {
    let sample = "
        fn helper(state: &AppState) -> IpcResult<()> { state.opened().map(|_| ()) }
        #[tauri::command]
        pub fn sync_direct(state: State<'_, AppState>) -> IpcResult<()> { state.with_study(|_| Ok(())) }
        #[tauri::command]
        pub fn sync_helper(state: State<'_, AppState>) -> IpcResult<()> { helper(&state) }
        #[tauri::command]
        pub async fn async_direct(state: State<'_, AppState>) -> IpcResult<()> {
            state.with_study(|_| Ok(()))
        }
        #[tauri::command]
        #[allow(clippy::too_many_arguments)]
        pub async fn good(state: State<'_, AppState>) -> IpcResult<()> {
            let x = state.session();
            state.run_with(move |st| { helper(st)?; st.with_study(|_| Ok(())) }).await?;
            state.run(move |s| Ok(s.touch(x))).await
        }
        #[tauri::command]
        pub fn no_study(x: u32) -> IpcResult<u32> { Ok(x) }
    ";
    let (n, problems) = commands_that_hold_the_window("sample.rs", sample);
    assert_eq!(n, 5, "five commands in the sample");
    let named: Vec<&str> = problems
        .iter()
        .map(|p| p.split('`').nth(1).unwrap_or(""))
        .collect();
    assert_eq!(
        named,
        ["sync_direct", "sync_helper", "async_direct"],
        "the sync commands that reach the lock and the async one that waits on its worker are \
         named; the command that hands over and the one without a study are not: {problems:?}"
    );
}

/// Where the code of a front end reaches past the application layer, as (line, what): (a) a
/// `use concord_core::X::…` path (braces expanded) whose last segment starts lower-case — a
/// module or a function, not a type or a constant — with `X` other than `app`, `base` or
/// `files::score_table` (the CSV readers of `concord stats`); (b) a `.store()`,
/// `.store_mut()` or `.store_keeping_reports()` call; (c) an inline path
/// `concord_core::X::…::m::f(` — a function `f` of a module `m`, both lower-case — with `X`
/// other than `app` or `base` (a type's own function, `Type::f(`, is the type's). The text is
/// lexed first, so comments and strings never count.
fn past_the_application_layer(text: &str) -> Vec<(usize, String)> {
    let lexed = lex(text);
    let mut found = Vec::new();
    let lower = |s: &str| s.chars().next().is_some_and(|c| c.is_lowercase());
    let allowed = |rest: &[String]| {
        rest.first().is_some_and(|x| x == "app" || x == "base")
            || (rest.len() >= 2 && rest[0] == "files" && rest[1] == "score_table")
    };
    let code: Vec<char> = lexed
        .code
        .iter()
        .map(|(_, l)| l.as_str())
        .collect::<Vec<_>>()
        .join("\n")
        .chars()
        .collect();
    let line_at = |i: usize| 1 + code[..i].iter().filter(|c| **c == '\n').count();
    let text: String = code.iter().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    for (byte, _) in text.match_indices("concord_core::") {
        let i = text[..byte].chars().count();
        if i > 0 && ident(code[i - 1]) {
            continue;
        }
        let before: String = code[..i].iter().collect();
        let in_use = before.trim_end().ends_with("use") || before.trim_end().ends_with("pub use");
        let (paths, end) = expand_path(&code, i);
        if in_use {
            for p in paths {
                let rest = &p[1..];
                let last = rest.last().map(String::as_str).unwrap_or("");
                if !allowed(rest) && lower(last) {
                    found.push((line_at(i), format!("use {}", p.join("::"))));
                }
            }
            continue;
        }
        let mut j = end;
        while j < code.len() && code[j].is_whitespace() {
            j += 1;
        }
        let Some(p) = paths.first() else { continue };
        let rest = &p[1..];
        let called = code.get(j) == Some(&'(');
        let module_fn =
            rest.len() >= 2 && lower(&rest[rest.len() - 1]) && lower(&rest[rest.len() - 2]);
        if called && module_fn && !allowed(rest) {
            found.push((line_at(i), format!("{}(", p.join("::"))));
        }
    }
    for call in [".store()", ".store_mut()", ".store_keeping_reports()"] {
        for (byte, _) in text.match_indices(call) {
            let i = text[..byte].chars().count();
            found.push((line_at(i), call.to_string()));
        }
    }
    found.sort();
    found
}

/// The shell, the CLI and the web server call only `concord_core::app` (and the pure helpers of `base` and the
/// score-table readers of `concord stats`): see [`past_the_application_layer`] for how a call
/// past it is recognised; each is named with its file and line.
#[test]
fn front_ends_call_only_the_application_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src-tauri/src"), &mut files);
    rust_files(&root.join("src-tauri/crates/concord-cli/src"), &mut files);
    rust_files(&root.join("src-tauri/crates/concord-web/src"), &mut files);
    assert!(
        files.iter().any(|f| f.ends_with("concord-web/src/api.rs")),
        "the web server's files are among the front ends checked"
    );
    assert!(files.len() > 20, "the front ends' files are found");
    let mut problems = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a readable front-end file");
        for (line, what) in past_the_application_layer(&text) {
            let shown = file.strip_prefix(root).unwrap_or(file).display();
            problems.push(format!("{shown}:{line}: {what}"));
        }
    }
    assert!(
        problems.is_empty(),
        "front ends reach past concord_core::app:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_layer_check_sees_a_front_end_reaching_past_the_application_layer() {
    let sample = "\
use concord_core::app::judge_runs;
use concord_core::judge::{self, RunSettings};
use concord_core::base::clock::fresh_seed;
use concord_core::files::score_table::read_long_csv;
use concord_core::store::{Passphrase, StoreError};
// concord_core::judge::runs(s.store()) in a comment
fn f(s: &OpenStudy) {
    let _ = \"s.store_mut()\";
    let _ = judge_runs::runs(s);
    let _ = concord_core::workflow::queue::profiles(s.store());
    let _ = concord_core::panel::agreement::AgreementOptions::mentalalign(r);
    let _ = concord_core::base::clock::fresh_seed();
}
";
    let found = past_the_application_layer(sample);
    assert_eq!(
        found,
        vec![
            (2, "use concord_core::judge".to_string()),
            (10, ".store()".to_string()),
            (10, "concord_core::workflow::queue::profiles(".to_string()),
        ],
        "the module import, the inline module call and the store call are seen; comments, \
         strings, types, app and base are not"
    );
}

// ---------------------------------------------------------------------------------------------
// No function runs past 120 lines: a long job is written along its phases.
//
// How it decides. Every `.rs` file under the crates' `src/` and the shell's `src-tauri/src/` is
// lexed ([`lex`], which keeps the file's line numbers) and its test items dropped
// ([`without_tests`], whose removals are whole items, so a function that stays keeps its
// lines); a file that is an out-of-line test module (`#[cfg(test)] mod tests;`) is test code
// and is not read. A function is the word `fn`, its name, and the signature up to the first `{` outside
// brackets (a `;` there first means a declaration without a body, as in a trait); its length
// runs from the line of `fn` to the line of its matching `}`, both counted. The unpublished test
// crate (`concord-testsupport`, whose loopback servers are test code) is not read; declarative
// lists are named in [`DECLARATIVE_LISTS`] with the reason they are one list.
// ---------------------------------------------------------------------------------------------

const LONGEST_FUNCTION: usize = 120;

/// Functions that are one declarative list and are read as one: (file, function, why).
const DECLARATIVE_LISTS: [(&str, &str, &str); 1] = [(
    "src-tauri/src/bindings.rs",
    "typescript",
    "one line per type sent to the window, in the order the bindings file declares them",
)];

/// The functions of `code` longer than [`LONGEST_FUNCTION`] lines: (name, first line, length).
fn long_functions(code: &str) -> Vec<(String, usize, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let line_at = |i: usize| chars[..i].iter().filter(|&&c| c == '\n').count() + 1;
    let mut found = Vec::new();
    let mut i = 0;
    while i + 2 < chars.len() {
        let is_fn = chars[i] == 'f'
            && chars[i + 1] == 'n'
            && chars[i + 2].is_whitespace()
            && (i == 0 || !ident(chars[i - 1]));
        if !is_fn {
            i += 1;
            continue;
        }
        let mut j = i + 2;
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        let name: String = chars[j..].iter().take_while(|&&c| ident(c)).collect();
        // The signature: up to the body's `{`, or a `;` when there is none.
        let mut depth = 0i32;
        while j < chars.len() {
            match chars[j] {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '{' | ';' if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        if chars.get(j) != Some(&'{') {
            i = j;
            continue;
        }
        let end = matching_brace(&chars, j);
        let (first, last) = (line_at(i), line_at(end.min(chars.len() - 1)));
        if last - first + 1 > LONGEST_FUNCTION {
            found.push((name, first, last - first + 1));
        }
        // Functions inside this one are read too.
        i = j + 1;
    }
    found
}

#[test]
fn no_function_runs_past_120_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src-tauri/src"), &mut files);
    for entry in std::fs::read_dir(root.join("src-tauri/crates")).expect("the crates folder") {
        let krate = entry.expect("a crate").path();
        if krate.ends_with("concord-testsupport") {
            continue;
        }
        rust_files(&krate.join("src"), &mut files);
    }
    assert!(
        files.len() > 100,
        "the walk must reach the sources of the shell and every crate, found {} files",
        files.len()
    );
    // Each file's code without its test items, and the files that are out-of-line test modules
    // (`#[cfg(test)] mod tests;` is `tests.rs` in the declaring module's folder).
    let mut code_of = BTreeMap::new();
    let mut test_files = BTreeSet::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a source file");
        let code: String = lex(&text)
            .code
            .iter()
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        let (code, test_mods) = without_tests(&code);
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let folder = match stem {
            "mod" | "lib" | "main" => file.parent().expect("a folder").to_path_buf(),
            _ => file.with_extension(""),
        };
        for m in test_mods {
            test_files.insert(folder.join(format!("{m}.rs")));
            test_files.insert(folder.join(&m).join("mod.rs"));
        }
        code_of.insert(file.clone(), code);
    }
    let mut long = Vec::new();
    for (file, code) in &code_of {
        if test_files.contains(file) {
            continue;
        }
        let rel = file
            .strip_prefix(root)
            .expect("under the workspace")
            .to_string_lossy()
            .replace('\\', "/");
        for (name, line, length) in long_functions(code) {
            if !DECLARATIVE_LISTS
                .iter()
                .any(|(f, n, _)| *f == rel && *n == name)
            {
                long.push(format!("{rel}:{line} fn {name}: {length} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "a function past {LONGEST_FUNCTION} lines is to be written along its phases (or, if it is \
         one declarative list, named in DECLARATIVE_LISTS with why): {long:#?}"
    );
}

#[test]
fn the_length_check_counts_a_function_from_fn_to_its_brace() {
    let body = |n: usize| "    let x = 1;\n".repeat(n);
    let code = format!(
        "fn short() {{\n{}}}\nfn long(a: [u8; 2]) -> u8 {{\n{}    a[0]\n}}\ntrait T {{ fn decl(&self); }}\n",
        body(10),
        body(118)
    );
    let found = long_functions(&code);
    assert_eq!(
        found,
        vec![("long".to_string(), 13, 121)],
        "the 121-line function (a `;` in its signature's brackets included) must be found at its \
         `fn` line and the short one and the trait's declaration passed over"
    );
    let (tested, _) = without_tests(&format!("#[cfg(test)]\nmod tests {{\n{code}}}\n"));
    assert!(
        long_functions(&tested).is_empty(),
        "a long function in a test module is test code and must not be counted"
    );
    let exact = format!("fn edge() {{\n{}}}\n", body(118));
    assert!(
        long_functions(&exact).is_empty(),
        "a function of exactly 120 lines is within the limit"
    );
}
