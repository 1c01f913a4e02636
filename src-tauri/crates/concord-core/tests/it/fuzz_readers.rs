//! Structure-aware mutation testing of every reader of outside files, on stable Rust with a seeded
//! mutator: valid CSV, JSON Lines, XLSX (raw bytes and the XML inside the archive), conversations files
//! (chat JSON Lines and the turn table), rubric TOML and
//! JSON, fill-in rating sheets and SQLite rater packages are truncated, bit-flipped, duplicated,
//! spliced with each other, and shuffled row by row, then fed to the real importer. Every case
//! must end in a valid import or an error whose every issue names the file — never a panic, never
//! an abort (that would kill this test binary) — and a refused import must leave the study exactly
//! as it was (no partial write).
//!
//! CI runs a fixed number of cases per reader ([`CI_CASES`]); the ignored `soak` test runs
//! `CONCORD_SOAK_CASES` per reader (default 20,000) and prints cases and cases per second:
//! `cargo test -p concord-core --release --test it fuzz_readers -- --ignored --nocapture soak`.

use concord_testsupport::conversation_files;
use concord_testsupport::lead_study;
use concord_testsupport::release_files;

use concord_core::intake::conversations;
use concord_core::intake::long::import_items;
use concord_core::intake::long::import_ratings;
use concord_core::intake::long::ItemColumns;
use concord_core::intake::long::RatingColumns;
use concord_core::intake::ImportError;
use concord_core::intake::ImportOptions;
use concord_core::outputs::export::import_rating_sheet;
use concord_core::outputs::export::write_rating_sheet;
use concord_core::rubric::{builtin, Rubric, RubricFormat};
use concord_core::store::Store;
use concord_core::workflow::assignment;
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::package;
use concord_core::workflow::package::merge_package;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::io::{Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::Instant;

/// Cases per reader in an ordinary test run.
const CI_CASES: usize = 600;

/// Byte- and row-level mutations of a seed input; `others` are spliced in.
fn mutate(rng: &mut ChaCha8Rng, input: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    let mut out = input.to_vec();
    let rounds = rng.gen_range(1..=4);
    for _ in 0..rounds {
        let len = out.len().max(1);
        match rng.gen_range(0..10) {
            // Truncate.
            0 => out.truncate(rng.gen_range(0..len)),
            // Flip bits.
            1 => {
                for _ in 0..rng.gen_range(1..8) {
                    if !out.is_empty() {
                        let i = rng.gen_range(0..out.len());
                        out[i] ^= 1 << rng.gen_range(0..8);
                    }
                }
            }
            // Duplicate a range in place.
            2 if !out.is_empty() => {
                let a = rng.gen_range(0..out.len());
                let b = (a + rng.gen_range(1..256)).min(out.len());
                let piece = out[a..b].to_vec();
                let at = rng.gen_range(0..=out.len());
                out.splice(at..at, piece);
            }
            // Splice a range of another input.
            3 if !others.is_empty() => {
                let other = &others[rng.gen_range(0..others.len())];
                if !other.is_empty() {
                    let a = rng.gen_range(0..other.len());
                    let b = (a + rng.gen_range(1..512)).min(other.len());
                    let at = rng.gen_range(0..=out.len());
                    let end = (at + rng.gen_range(0..64)).min(out.len());
                    out.splice(at..end, other[a..b].iter().copied());
                }
            }
            // Insert a byte that matters to parsers.
            4 => {
                let special = [
                    b'"', b',', b'\n', b'\r', 0, b'{', b'}', b':', b'\'', 0xFF, 0xC3, b'<', b'>',
                ];
                let at = rng.gen_range(0..=out.len());
                out.insert(at, special[rng.gen_range(0..special.len())]);
            }
            // Rows: duplicate, drop or swap lines.
            5..=7 => {
                let mut lines: Vec<Vec<u8>> =
                    out.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
                if lines.len() > 1 {
                    let i = rng.gen_range(0..lines.len());
                    let j = rng.gen_range(0..lines.len());
                    match rng.gen_range(0..3) {
                        0 => {
                            let l = lines[i].clone();
                            lines.insert(j, l);
                        }
                        1 => {
                            lines.remove(i);
                        }
                        _ => lines.swap(i, j),
                    }
                    out = lines.join(&b'\n');
                }
            }
            // Replace a number with a huge or negative one.
            8 => {
                if let Some(i) = (0..out.len())
                    .map(|_| rng.gen_range(0..len))
                    .find(|&i| out.get(i).is_some_and(u8::is_ascii_digit))
                {
                    let huge: &[u8] = [&b"99999999999"[..], b"4294967296", b"-1", b"1e308", b"0"]
                        [rng.gen_range(0..5)];
                    out.splice(i..i + 1, huge.iter().copied());
                }
            }
            _ => {}
        }
    }
    out
}

/// The outcome of one case.
enum Outcome {
    Imported,
    Refused,
}

/// Tally of one reader's run.
struct Tally {
    reader: &'static str,
    cases: usize,
    imported: usize,
    refused: usize,
    failures: Vec<String>,
    seconds: f64,
}

impl Tally {
    fn line(&self) -> String {
        format!(
            "{:<14} {:>7} cases  {:>6} imported  {:>7} refused  {:>9.0} cases/s  {} failures",
            self.reader,
            self.cases,
            self.imported,
            self.refused,
            self.cases as f64 / self.seconds.max(1e-9),
            self.failures.len()
        )
    }
}

/// Run `cases` mutated cases of one reader; `case` imports one input and reports its outcome or a
/// failure (an unlocated issue, a partial write).
fn run(
    reader: &'static str,
    cases: usize,
    seed: u64,
    seeds: &[Vec<u8>],
    case: &dyn Fn(&[u8]) -> Result<Outcome, String>,
) -> Tally {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut tally = Tally {
        reader,
        cases,
        imported: 0,
        refused: 0,
        failures: Vec::new(),
        seconds: 0.0,
    };
    let started = Instant::now();
    for n in 0..cases {
        let base = &seeds[rng.gen_range(0..seeds.len())];
        let input = mutate(&mut rng, base, seeds);
        match catch_unwind(AssertUnwindSafe(|| case(&input))) {
            Ok(Ok(Outcome::Imported)) => tally.imported += 1,
            Ok(Ok(Outcome::Refused)) => tally.refused += 1,
            Ok(Err(why)) => tally.failures.push(format!("case {n}: {why}")),
            Err(panic) => tally.failures.push(format!(
                "case {n}: panic: {}",
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
        }
    }
    tally.seconds = started.elapsed().as_secs_f64();
    tally
}

/// Judge an import's result: every issue located in `file`, and on refusal the study unchanged.
fn judged(
    file: &str,
    before: &release_files::Fingerprint,
    study: &Store,
    result: Result<concord_core::intake::ImportReport, ImportError>,
) -> Result<Outcome, String> {
    match result {
        Ok(_) => Ok(Outcome::Imported),
        Err(ImportError::Rejected(issues)) => {
            if issues.is_empty() {
                return Err("refused without any issue".into());
            }
            if let Some(i) = issues.iter().find(|i| i.at.file != file) {
                return Err(format!("issue not located in {file}: {i}"));
            }
            if &release_files::fingerprint(study) != before {
                return Err("a refused import changed the study".into());
            }
            Ok(Outcome::Refused)
        }
        Err(other) => Err(format!("not a located error: {other}")),
    }
}

/// A study holding the items the ratings seeds refer to.
fn items_study(dir: &Path) -> Store {
    let mut study = release_files::memory_study();
    let path = dir.join("items.csv");
    std::fs::write(&path, ITEMS_CSV).expect("write items");
    import_items(
        &mut study,
        &path,
        "mentalbench",
        &ItemColumns::default(),
        None,
        &ImportOptions::default(),
    )
    .expect("seed items import");
    study
}

const ITEMS_CSV: &str = "conversation_id,context,response_id,source,text\nc1,\"I cannot sleep,\nat all\",c1-0,original,\"Try a \"\"routine\"\"\"\nc1,\"I cannot sleep,\nat all\",c1-1,claude,Breathe slowly\nc2,I feel alone,c2-0,original,You are not alone\n";
const RATINGS_CSV: &str = "item,rater,criterion,score,rationale\nc1-0,Ana,Guidance,4,clear steps\nc1-0,Ana,Safety,5,\nc1-1,Ana,Empathy,3,\"warm, brief\"\nc2-0,Boris,Guidance,0,\n";
const RATINGS_JSONL: &str = "{\"item\":\"c1-0\",\"rater\":\"Ana\",\"criterion\":\"Guidance\",\"score\":4}\n{\"item\":\"c1-1\",\"rater\":\"Ana\",\"criterion\":\"Safety\",\"score\":null,\"rationale\":\"unsure\"}\n{\"item\":\"c2-0\",\"rater\":\"Boris\",\"criterion\":\"Empathy\",\"score\":\"5\"}\n";

/// Import `bytes` as `name` into `study` (one study per reader, so accepted cases accumulate as
/// they would in use); a refusal must leave it exactly as it was.
fn csv_case(
    dir: &Path,
    study: &RefCell<Store>,
    name: &str,
    bytes: &[u8],
    items: bool,
) -> Result<Outcome, String> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
    let mut study = study.borrow_mut();
    let before = release_files::fingerprint(&study);
    let result = if items {
        import_items(
            &mut study,
            &path,
            "mentalbench",
            &ItemColumns::default(),
            None,
            &ImportOptions::default(),
        )
    } else {
        import_ratings(
            &mut study,
            &path,
            "mentalbench",
            &RatingColumns::default(),
            None,
            &ImportOptions::default(),
        )
    };
    judged(name, &before, &study, result)
}

fn csv_reader(cases: usize) -> Tally {
    let dir = release_files::temp_dir();
    let seeds = vec![
        ITEMS_CSV.as_bytes().to_vec(),
        RATINGS_CSV.as_bytes().to_vec(),
    ];
    let study = RefCell::new(items_study(dir.path()));
    run("csv", cases, 1, &seeds, &|bytes| {
        let items = bytes.starts_with(b"conversation_id");
        let name = if items { "items.csv" } else { "ratings.csv" };
        csv_case(dir.path(), &study, name, bytes, items)
    })
}

fn jsonl_reader(cases: usize) -> Tally {
    let dir = release_files::temp_dir();
    let seeds = vec![RATINGS_JSONL.as_bytes().to_vec()];
    let study = RefCell::new(items_study(dir.path()));
    run("jsonl", cases, 2, &seeds, &|bytes| {
        csv_case(dir.path(), &study, "ratings.jsonl", bytes, false)
    })
}

/// Conversations files in both formats (chat JSON Lines, the turn table as CSV and JSON Lines),
/// told apart by content whatever the mutation made of them; a refusal must leave the study's
/// fingerprint and every text the PHI guard reads (turns included) as they were.
fn conversations_reader(cases: usize) -> Tally {
    let dir = release_files::temp_dir();
    let sample = conversation_files::sample();
    let rows = conversation_files::shuffled_rows(&sample, 3);
    let seeds = vec![
        conversation_files::chat_jsonl(&sample).into_bytes(),
        conversation_files::table_csv(&rows).into_bytes(),
        conversation_files::table_jsonl(&rows).into_bytes(),
    ];
    let study = RefCell::new(release_files::memory_study());
    run("conversations", cases, 7, &seeds, &|bytes| {
        let path = dir.path().join("conversations.jsonl");
        std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
        let mut study = study.borrow_mut();
        let before = release_files::fingerprint(&study);
        let texts = study.phi_texts().map_err(|e| e.to_string())?;
        let result =
            conversations::import_file(&mut study, &path, "mentalbench", &ImportOptions::default());
        let outcome = judged("conversations.jsonl", &before, &study, result)?;
        match outcome {
            // A new study after each import, so a mutation keeping the seed's ids can import.
            Outcome::Imported => *study = release_files::memory_study(),
            Outcome::Refused => {
                if study.phi_texts().map_err(|e| e.to_string())? != texts {
                    return Err("a refused import changed the study's texts".into());
                }
            }
        }
        Ok(outcome)
    })
}

/// The parts of a workbook archive.
fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("seed workbook");
    (0..archive.len())
        .map(|i| {
            let mut f = archive.by_index(i).expect("part");
            let mut data = Vec::new();
            f.read_to_end(&mut data).expect("read part");
            (f.name().expect("name").to_string(), data)
        })
        .collect()
}

fn rezip(parts: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in parts {
        zip.start_file(name.as_str(), options).expect("part");
        zip.write_all(data).expect("write");
    }
    zip.finish().expect("zip").into_inner()
}

/// Mutate a workbook: mostly the XML inside (then re-zipped), sometimes the archive's bytes.
fn mutate_workbook(rng: &mut ChaCha8Rng, bytes: &[u8], seeds: &[Vec<u8>]) -> Vec<u8> {
    if rng.gen_range(0..4) == 0 {
        return mutate(rng, bytes, seeds);
    }
    let mut parts = unzip(bytes);
    let xml: Vec<usize> = (0..parts.len())
        .filter(|&i| parts[i].0.starts_with("xl/"))
        .collect();
    let i = xml[rng.gen_range(0..xml.len())];
    let others: Vec<Vec<u8>> = parts.iter().map(|p| p.1.clone()).collect();
    parts[i].1 = mutate(rng, &parts[i].1, &others);
    rezip(&parts)
}

fn ratings_workbook(path: &Path) {
    use release_files::{s, X};
    let mut rows = vec![vec![
        s("item"),
        s("rater"),
        s("criterion"),
        s("score"),
        s("rationale"),
    ]];
    for (item, rater, criterion, score) in [
        ("c1-0", "Ana", "Guidance", 4.0),
        ("c1-1", "Ana", "Safety", 5.0),
        ("c2-0", "Boris", "Empathy", 0.0),
    ] {
        rows.push(vec![
            s(item),
            s(rater),
            s(criterion),
            X::N(score),
            X::F("=\"why\"".into()),
        ]);
    }
    release_files::write_xlsx(path, "ratings", &rows);
}

fn xlsx_reader(cases: usize) -> Tally {
    let dir = release_files::temp_dir();
    let seed_path = dir.path().join("seed.xlsx");
    ratings_workbook(&seed_path);
    let seeds = vec![std::fs::read(&seed_path).expect("seed workbook")];
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let inputs: Vec<Vec<u8>> = (0..cases)
        .map(|_| mutate_workbook(&mut rng, &seeds[0], &seeds))
        .collect();
    let next = std::cell::Cell::new(0usize);
    let study = RefCell::new(items_study(dir.path()));
    // The inputs are prepared by the workbook mutator; `run` only picks them in order.
    let mut tally = run("xlsx", cases, 3, &[Vec::new()], &|_| {
        let bytes = &inputs[next.get()];
        next.set(next.get() + 1);
        csv_case(dir.path(), &study, "ratings.xlsx", bytes, false)
    });
    tally.reader = "xlsx";
    tally
}

fn rubric_reader(cases: usize) -> Tally {
    let json = serde_json::to_string_pretty(&builtin::psycrisis()).expect("rubric as JSON");
    let seeds = vec![
        builtin::MENTALBENCH_TOML.as_bytes().to_vec(),
        builtin::PSYCRISIS_TOML.as_bytes().to_vec(),
        json.into_bytes(),
    ];
    run("rubric", cases, 4, &seeds, &|bytes| {
        let text = String::from_utf8_lossy(bytes);
        let format = if text.trim_start().starts_with('{') {
            RubricFormat::Json
        } else {
            RubricFormat::Toml
        };
        match Rubric::parse(&text, format, "r.rubric") {
            Ok(_) => Ok(Outcome::Imported),
            Err(e) if e.to_string().starts_with("r.rubric") => Ok(Outcome::Refused),
            Err(e) => Err(format!("rubric error without the file: {e}")),
        }
    })
}

/// The passphrase the fuzzed packages are sealed with (mutations of an encrypted file mostly fail
/// its page authentication, which is one more refusal the merge must survive).
const PACKAGE_PASS: &str = "fuzzed package passphrase";

fn package_pass() -> concord_core::store::Passphrase {
    concord_core::store::Passphrase::new(PACKAGE_PASS).expect("passphrase")
}

/// A study file with an assignment; returns the study and a valid package and fill-in sheet.
fn lead_seeds(dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let mut store = lead_study::file_study(&dir.join("main.concord"), 4, &["Ana", "Boris"]);
    assignment::assign(&mut store, &AssignmentOptions::new(2, 11)).expect("assigned");
    let pkg = dir.join("ana.concord");
    package::export_package(&mut store, "Ana", &pkg, 5, &package_pass()).expect("exported");
    // Fold the package's WAL into its file so the bytes are the whole package.
    drop(rusqlite::Connection::open(&pkg).and_then(|c| {
        c.pragma_update(None, "key", PACKAGE_PASS)?;
        c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
    }));
    let sheet = dir.join("ana.xlsx");
    write_rating_sheet(&store, "Ana", &sheet).expect("sheet written");
    (
        std::fs::read(&pkg).expect("package bytes"),
        std::fs::read(&sheet).expect("sheet bytes"),
    )
}

fn sqlite_reader(cases: usize) -> Tally {
    let dir = release_files::temp_dir();
    let (pkg, _) = lead_seeds(dir.path());
    let main = dir.path().join("main.concord");
    let study = RefCell::new(Store::open(&main, lead_study::clock()).expect("the study opens"));
    let seeds = vec![pkg];
    run("sqlite", cases, 5, &seeds, &|bytes| {
        let mut rng = ChaCha8Rng::seed_from_u64(bytes.len() as u64);
        // Page-aware damage on top of the byte mutations: duplicate or zero a whole page.
        let mut bytes = bytes.to_vec();
        if bytes.len() > 8192 && rng.gen_bool(0.5) {
            let pages = bytes.len() / 4096;
            let (a, b) = (rng.gen_range(1..pages), rng.gen_range(1..pages));
            let page = bytes[a * 4096..(a + 1) * 4096].to_vec();
            bytes[b * 4096..(b + 1) * 4096].copy_from_slice(&page);
        }
        let path = dir.path().join("case.concord");
        let _ = std::fs::remove_file(dir.path().join("case.concord-wal"));
        let _ = std::fs::remove_file(dir.path().join("case.concord-shm"));
        std::fs::write(&path, &bytes).map_err(|e| e.to_string())?;
        let mut study = study.borrow_mut();
        let before = study.overview().map_err(|e| e.to_string())?;
        match merge_package(&mut study, &path, &package_pass()) {
            Ok(_) => Ok(Outcome::Imported),
            Err(_) if study.overview().map_err(|e| e.to_string())? == before => {
                Ok(Outcome::Refused)
            }
            Err(e) => Err(format!("a refused merge changed the study: {e}")),
        }
    })
}

fn sheet_reader(cases: usize) -> Tally {
    let dir = release_files::temp_dir();
    let (_, sheet) = lead_seeds(dir.path());
    let main = dir.path().join("main.concord");
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let inputs: Vec<Vec<u8>> = (0..cases)
        .map(|_| mutate_workbook(&mut rng, &sheet, std::slice::from_ref(&sheet)))
        .collect();
    let next = std::cell::Cell::new(0usize);
    let study = RefCell::new(Store::open(&main, lead_study::clock()).expect("the study opens"));
    run("sheet", cases, 6, &[Vec::new()], &|_| {
        let bytes = &inputs[next.get()];
        next.set(next.get() + 1);
        let path = dir.path().join("filled.xlsx");
        std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
        let mut study = study.borrow_mut();
        let before = study.overview().map_err(|e| e.to_string())?;
        match import_rating_sheet(&mut study, &path) {
            Ok(_) => Ok(Outcome::Imported),
            Err(e) => {
                if study.overview().map_err(|e| e.to_string())? != before {
                    return Err(format!("a refused sheet changed the study: {e}"));
                }
                if !e.to_string().contains("filled.xlsx") {
                    return Err(format!("sheet error without the file: {e}"));
                }
                Ok(Outcome::Refused)
            }
        }
    })
}

type Reader = fn(usize) -> Tally;

const READERS: [(&str, Reader, usize); 7] = [
    ("csv", csv_reader, 1),
    ("jsonl", jsonl_reader, 1),
    ("conversations", conversations_reader, 2),
    ("xlsx", xlsx_reader, 2),
    ("rubric", rubric_reader, 1),
    ("sqlite", sqlite_reader, 6),
    ("sheet", sheet_reader, 6),
];

fn check(tally: &Tally) {
    println!("{}", tally.line());
    assert!(
        tally.failures.is_empty(),
        "every mutated {} input must end in a located error or a valid import:\n{}",
        tally.reader,
        tally.failures.join("\n")
    );
    assert!(
        tally.refused > 0,
        "the {} mutator must produce broken inputs, or it tests nothing",
        tally.reader
    );
}

#[test]
fn csv_survives_mutation() {
    check(&csv_reader(CI_CASES));
}

#[test]
fn jsonl_survives_mutation() {
    check(&jsonl_reader(CI_CASES));
}

#[test]
fn conversations_survive_mutation() {
    check(&conversations_reader(CI_CASES / 2));
}

#[test]
fn xlsx_survives_mutation() {
    check(&xlsx_reader(CI_CASES / 2));
}

#[test]
fn rubric_survives_mutation() {
    check(&rubric_reader(CI_CASES));
}

#[test]
fn sqlite_packages_survive_mutation() {
    check(&sqlite_reader(CI_CASES / 6));
}

#[test]
fn fill_in_sheets_survive_mutation() {
    check(&sheet_reader(CI_CASES / 6));
}

/// The long run: `CONCORD_SOAK_CASES` cases per reader (the slower readers get a fraction).
#[test]
#[ignore = "long soak run; see the module documentation"]
fn soak() {
    let cases: usize = std::env::var("CONCORD_SOAK_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let mut total = 0usize;
    let started = Instant::now();
    let mut failures = Vec::new();
    for (_, reader, divisor) in READERS {
        let tally = reader(cases / divisor);
        println!("{}", tally.line());
        total += tally.cases;
        failures.extend(
            tally
                .failures
                .iter()
                .map(|f| format!("{}: {f}", tally.reader)),
        );
    }
    println!(
        "soak total: {total} cases in {:.1} s, {} failures",
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "soak failures:\n{}",
        failures.join("\n")
    );
}
