//! A study made by the release before conversations (schema 22) opens in this build and answers
//! exactly as it did. `tests/fixtures/upgrade-v22/` holds such a study — the demo, a
//! MentalAlign-shaped release import with its answer texts, PHI decisions, three judge runs
//! (one with repetitions, one pairwise), two rater packages issued, filled and merged, both
//! experts' sign-offs and an adjudication, every write under the lead key kept beside it — and
//! what that release's `concord` printed and wrote for the commands of [`STEPS`]. This build's
//! `concord` runs the same commands on a copy (the first opening upgrades it) and every output
//! must be the recorded one byte for byte; only an XLSX file's own creation time, which is the
//! time of writing, is set aside. Files a later release adds to a command's output are named on
//! its step (they must be written and listed; the rest of the stdout stays the recorded one), and
//! the two files it extends by design (the methods appendix's script and paragraph) are checked
//! against what they must then be. The commands then run a second time on the same copy: an
//! upgraded study opens without changing, its bytes included.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The committed fixture: the study, its lead key folder and the recorded outputs.
pub(crate) const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/upgrade-v22");

/// The schema the fixture's study was written with (the release that made it).
const FIXTURE_SCHEMA: u32 = 22;

/// One recorded command: its name (the recorded stdout is `expected/<name>.stdout`), its
/// arguments after `--db study.concord`, and the files it writes (recorded under
/// `expected/files/`, by their path relative to the study's folder; a folder is compared whole).
pub(crate) struct Step {
    pub name: &'static str,
    pub args: &'static [&'static str],
    pub writes: &'static [&'static str],
    /// Files a later release added to what the step writes (by name, within `writes`): each must
    /// be written and listed in the stdout, whose other lines stay the recorded ones.
    pub added: &'static [&'static str],
    /// Files whose content this build changes by design (by name, within `writes`), each with the
    /// check it must pass instead of being the recorded bytes (given this build's and the recorded
    /// bytes; the error says what differs).
    pub own: &'static [(&'static str, OwnCheck)],
}

const fn step(name: &'static str, args: &'static [&'static str]) -> Step {
    Step {
        name,
        args,
        writes: &[],
        added: &[],
        own: &[],
    }
}

/// How a file this build changes by design is checked: `(written now, recorded)`.
type OwnCheck = fn(&[u8], &[u8]) -> Result<(), String>;

/// The methods appendix's script is the one this build ships (without a by-turn part: the
/// fixture has no transcripts); it recomputes the tables added since the old release as well.
fn shipped_script(got: &[u8], _recorded: &[u8]) -> Result<(), String> {
    let shipped = concord_core::outputs::methods::recompute_script(false);
    (got == shipped.as_bytes())
        .then_some(())
        .ok_or_else(|| "recompute.py is not the script this build ships".to_string())
}

/// The methods paragraph is the recorded one with one section added, on the reviewer's tables:
/// without it, every other byte is what the old release wrote.
fn paragraph_with_reviewer_section(got: &[u8], recorded: &[u8]) -> Result<(), String> {
    const HEADING: &str = "## The reviewer's questions\n";
    let text = String::from_utf8_lossy(got);
    let start = text
        .find(HEADING)
        .ok_or("methods.md has no section on the reviewer's tables")?;
    let end = text[start + HEADING.len()..]
        .find("\n## ")
        .map_or(text.len(), |at| start + HEADING.len() + at + 1);
    let without = format!("{}{}", &text[..start], &text[end..]);
    (without.as_bytes() == recorded)
        .then_some(())
        .ok_or_else(|| format!("methods.md without its section on the reviewer's tables differs from the recorded one:\n{without}"))
}

/// The agreement table as CSV (a step's stdout, or the methods appendix's `agreement.csv`) is the
/// recorded one but where this build withholds a verdict by design: a judge is not placed against
/// an expert band that cannot discriminate (0.9 or more wide, or resting on fewer than three
/// targets rated by two or more experts), so a recorded `inside`, `below` or `above` may now be
/// empty. Every other byte, and every verdict given, is the recorded one.
fn table_with_verdicts_withheld(got: &[u8], recorded: &[u8]) -> Result<(), String> {
    let (got, recorded) = (
        String::from_utf8_lossy(got),
        String::from_utf8_lossy(recorded),
    );
    let (got_lines, recorded_lines): (Vec<&str>, Vec<&str>) =
        (got.split('\n').collect(), recorded.split('\n').collect());
    if got_lines.len() != recorded_lines.len() {
        return Err(format!(
            "{} lines, recorded {}",
            got_lines.len(),
            recorded_lines.len()
        ));
    }
    for (n, (g, r)) in got_lines.iter().zip(&recorded_lines).enumerate() {
        let withheld = ["inside", "below", "above"].iter().any(|v| {
            let field = format!(",{v},");
            r.matches(&field).count() == 1 && r.replacen(&field, ",,", 1) == *g
        });
        if g != r && !withheld {
            return Err(format!(
                "line {} differs other than by a withheld verdict:\n  now      {g}\n  recorded {r}",
                n + 1
            ));
        }
    }
    Ok(())
}

/// The step whose stdout is the agreement table as CSV (see [`table_with_verdicts_withheld`]).
const PRINTS_THE_TABLE: &str = "06-agreement-mentalbench-table-csv";

/// The one step whose output names the study's schema version (`overview --json`), which the
/// upgrade raises by design: its recorded line is expected with this build's version instead.
const NAMES_THE_SCHEMA: &str = "03-overview-json";

/// What must not change, in the order it runs (the audit chain is verified first and last, so
/// a command that appends an entry shows in the last).
pub(crate) const STEPS: &[Step] = &[
    step(
        "01-audit-verify-first",
        &["audit", "verify", "--require-signed"],
    ),
    step("02-overview", &["overview"]),
    step("03-overview-json", &["overview", "--json"]),
    step(
        "04-agreement-mentalbench",
        &["agreement", "--rubric", "mentalbench", "--json"],
    ),
    step(
        "05-agreement-mentalbench-consensus",
        &[
            "agreement",
            "--rubric",
            "mentalbench",
            "--reference",
            "consensus",
            "--json",
        ],
    ),
    step(
        "06-agreement-mentalbench-table-csv",
        &["agreement", "--rubric", "mentalbench", "--format", "csv"],
    ),
    step(
        "07-agreement-psycrisis",
        &["agreement", "--rubric", "psycrisis", "--json"],
    ),
    step(
        "08-agreement-psycrisis-full",
        &[
            "agreement",
            "--rubric",
            "psycrisis",
            "--method",
            "full",
            "--json",
        ],
    ),
    step(
        "09-agreement-pairwise",
        &[
            "agreement",
            "--pairwise",
            "--rubric",
            "mentalbench-pairs",
            "--json",
        ],
    ),
    Step {
        name: "10-export-ratings-csv",
        args: &[
            "export",
            "ratings",
            "--format",
            "csv",
            "--out",
            "exports/ratings-long.csv",
        ],
        writes: &["exports/ratings-long.csv"],
        added: &[],
        own: &[],
    },
    Step {
        name: "11-export-ratings-csv-all-repetitions",
        args: &[
            "export",
            "ratings",
            "--format",
            "csv",
            "--judge-repetitions",
            "all",
            "--excel",
            "--out",
            "exports/ratings-long-all.csv",
        ],
        writes: &["exports/ratings-long-all.csv"],
        added: &[],
        own: &[],
    },
    Step {
        name: "12-export-ratings-wide-csv-texts",
        args: &[
            "export",
            "ratings",
            "--format",
            "wide-csv",
            "--texts",
            "--out",
            "exports/ratings-wide.csv",
        ],
        writes: &["exports/ratings-wide.csv"],
        added: &[],
        own: &[],
    },
    Step {
        name: "13-export-ratings-xlsx",
        args: &[
            "export",
            "ratings",
            "--format",
            "xlsx",
            "--out",
            "exports/results.xlsx",
        ],
        writes: &["exports/results.xlsx"],
        added: &[],
        own: &[],
    },
    Step {
        name: "14-export-sheet",
        args: &[
            "export",
            "sheet",
            "--rater",
            "Dana Whitfield",
            "--out",
            "exports/sheet-dana.xlsx",
        ],
        writes: &["exports/sheet-dana.xlsx"],
        added: &[],
        own: &[],
    },
    Step {
        name: "15-export-methods",
        args: &[
            "export",
            "methods",
            "--rubric",
            "mentalbench",
            "--out",
            "exports/methods-mentalbench",
        ],
        writes: &["exports/methods-mentalbench"],
        // The reviewer's tables came after the release of the fixture.
        added: &[
            "prevalence.csv",
            "gstudy.csv",
            "dawid_skene.csv",
            "adjudicated.csv",
            "agreement_by_category.csv",
            "categories.csv",
        ],
        own: &[
            ("recompute.py", shipped_script),
            ("methods.md", paragraph_with_reviewer_section),
            ("agreement.csv", table_with_verdicts_withheld),
        ],
    },
    step("16-judge-status", &["judge", "status", "--json"]),
    step("17-signoff-list", &["signoff", "list", "--json"]),
    step("18-assignment", &["assignment", "--json"]),
    step("19-pairs-status", &["pairs", "status", "--json"]),
    step(
        "20-adjudication-discrepancies",
        &["adjudication", "discrepancies", "--all", "--json"],
    ),
    step(
        "21-adjudication-status",
        &["adjudication", "status", "--json"],
    ),
    step("22-raters-quality", &["raters", "quality", "--json"]),
    step("23-phi-list", &["phi", "list", "--status", "all", "--json"]),
    step("24-audit-log", &["audit", "log", "--json"]),
    step(
        "25-audit-verify-last",
        &["audit", "verify", "--require-signed"],
    ),
];

/// A copy of the fixture's study and lead keys in a fresh folder (the committed files are never
/// opened).
pub(crate) struct StudyCopy {
    /// The temporary folder, removed when the copy is dropped.
    _dir: tempfile::TempDir,
    pub root: PathBuf,
}

impl StudyCopy {
    pub fn study(&self) -> PathBuf {
        self.root.join("study.concord")
    }
    pub fn keys(&self) -> PathBuf {
        self.root.join("keys")
    }
}

pub(crate) fn copy_fixture(from: &Path) -> StudyCopy {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().to_path_buf();
    std::fs::copy(from.join("study.concord"), root.join("study.concord"))
        .expect("the fixture's study is copied");
    std::fs::create_dir(root.join("keys")).expect("a key folder");
    for entry in std::fs::read_dir(from.join("keys")).expect("the fixture's key folder") {
        let path = entry.expect("a key file").path();
        std::fs::copy(&path, root.join("keys").join(path.file_name().unwrap()))
            .expect("a key file is copied");
    }
    StudyCopy { _dir: dir, root }
}

/// Run one step with `concord` at `binary`, in the copy's folder (so every path it prints is the
/// relative one it was given), with the copy's lead keys.
pub(crate) fn run(binary: &Path, copy: &StudyCopy, step: &Step) -> Output {
    Command::new(binary)
        .current_dir(&copy.root)
        .env(crate::KEY_DIR_ENV, copy.keys())
        .env_remove("CONCORD_STUDY")
        .env_remove("CONCORD_PASSPHRASE")
        .args(["--db", "study.concord"])
        .args(step.args)
        .output()
        .expect("the concord binary runs")
}

/// The files under `path` (itself when it is a file), by their path relative to `root`, sorted.
pub(crate) fn files_under(root: &Path, path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        if !p.exists() {
            continue;
        }
        if p.is_dir() {
            for entry in std::fs::read_dir(&p).expect("a readable folder") {
                stack.push(entry.expect("an entry").path());
            }
        } else {
            out.push(p.strip_prefix(root).expect("under the root").to_path_buf());
        }
    }
    out.sort();
    out
}

/// The study's bytes as they stand on disk: the file and its write-ahead log (none counts as
/// empty), so a change left in the log is a change too.
fn study_bytes(copy: &StudyCopy) -> (Vec<u8>, Vec<u8>) {
    let main = std::fs::read(copy.study()).expect("the study is readable");
    let wal = std::fs::read(copy.root.join("study.concord-wal")).unwrap_or_default();
    (main, wal)
}

/// The schema version in a study file's header (SQLite's `user_version`, bytes 60–63), read
/// without opening the file as a database.
fn schema_of(study: &Path) -> u32 {
    let bytes = std::fs::read(study).expect("the study is readable");
    u32::from_be_bytes(bytes[60..64].try_into().expect("a 100-byte header"))
}

/// An XLSX file's `docProps/core.xml` with its creation and modification times (the time the
/// file was written, never a value of the study) replaced by a placeholder.
fn without_write_time(core: &str) -> String {
    let mut text = core.to_string();
    for tag in ["dcterms:created", "dcterms:modified"] {
        let open = format!("<{tag} ");
        let close = format!("</{tag}>");
        if let Some(start) = text.find(&open) {
            if let Some(gt) = text[start..].find('>') {
                let value_at = start + gt + 1;
                if let Some(end) = text[value_at..].find(&close) {
                    text.replace_range(value_at..value_at + end, "(time of writing)");
                }
            }
        }
    }
    text
}

/// The members of a ZIP archive (an XLSX file) by name, each as its bytes.
fn zip_members(bytes: &[u8], what: &Path) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .unwrap_or_else(|e| panic!("{} is a readable workbook: {e}", what.display()));
    let mut out = Vec::new();
    for i in 0..archive.len() {
        let mut member = archive.by_index(i).expect("a readable member");
        let name = member.name().expect("a member name").to_string();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut member, &mut data).expect("a member's bytes");
        out.push((name, data));
    }
    out
}

/// Compare a file written by this build with the recorded one: as bytes, an XLSX file member by
/// member with only its write time set aside.
fn assert_same_file(pass: &str, step: &str, rel: &Path, got: &[u8], want: &[u8]) {
    if rel.extension().is_some_and(|e| e == "xlsx") {
        let got = zip_members(got, rel);
        let want = zip_members(want, rel);
        assert_eq!(
            got.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            want.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            "{pass} {step}: {} holds the same parts, in the same order, as the old release wrote",
            rel.display()
        );
        for ((name, g), (_, w)) in got.iter().zip(&want) {
            if name == "docProps/core.xml" {
                assert_eq!(
                    without_write_time(&String::from_utf8_lossy(g)),
                    without_write_time(&String::from_utf8_lossy(w)),
                    "{pass} {step}: {}'s document properties are the old release's but for the \
                     creation and modification times, which are the time the file was written",
                    rel.display()
                );
            } else {
                assert!(
                    g == w,
                    "{pass} {step}: {} member {name} is byte for byte what the old release wrote \
                     (got {} bytes, recorded {})",
                    rel.display(),
                    g.len(),
                    w.len()
                );
            }
        }
    } else {
        assert!(
            got == want,
            "{pass} {step}: {} is byte for byte what the old release wrote (got {} bytes, \
             recorded {}); first difference at byte {:?}",
            rel.display(),
            got.len(),
            want.len(),
            got.iter().zip(want).position(|(a, b)| a != b)
        );
    }
}

/// An empty `exports/` folder in the copy for the steps' files (emptied before each pass, which
/// writes them again at the same paths).
pub(crate) fn fresh_exports(copy: &StudyCopy) {
    let exports = copy.root.join("exports");
    if exports.exists() {
        std::fs::remove_dir_all(&exports).expect("the last pass's exports are removed");
    }
    std::fs::create_dir(&exports).expect("an exports folder");
}

/// The recorded `overview --json` with the study's schema version as this build writes it: the
/// one value the upgrade is meant to change.
fn with_this_schema(recorded: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(recorded.to_vec()).expect("the recorded overview is UTF-8");
    let old = format!("\"schema_version\": {FIXTURE_SCHEMA},");
    assert_eq!(
        text.matches(&old).count(),
        1,
        "the recorded overview names the fixture's schema version once"
    );
    text.replacen(
        &old,
        &format!(
            "\"schema_version\": {},",
            concord_core::store::SCHEMA_VERSION
        ),
        1,
    )
    .into_bytes()
}

/// Run every step on `copy` and compare each stdout and each file written with the recorded ones.
fn run_and_compare(copy: &StudyCopy, expected: &Path, pass: &str) {
    let binary = Path::new(env!("CARGO_BIN_EXE_concord"));
    fresh_exports(copy);
    for step in STEPS {
        let out = run(binary, copy, step);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{pass} {}: `concord {}` succeeds on the old release's study as it did: {stderr}",
            step.name,
            step.args.join(" ")
        );
        let mut want = std::fs::read(expected.join(format!("{}.stdout", step.name)))
            .unwrap_or_else(|e| panic!("{}: the recorded stdout: {e}", step.name));
        if step.name == NAMES_THE_SCHEMA {
            want = with_this_schema(&want);
        }
        let note = if step.name == NAMES_THE_SCHEMA {
            " (but for the schema version, expected as this build's: the upgrade raises it)"
        } else {
            ""
        };
        let listed = |name: &str| {
            step.writes
                .iter()
                .map(move |w| format!("  {w}/{name}\n"))
                .collect::<Vec<_>>()
        };
        let mut stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        for name in step.added {
            let lines = listed(name);
            assert!(
                lines.iter().any(|l| stdout.contains(l.as_str())),
                "{pass} {}: the stdout lists {name}, which this build adds to the step's files",
                step.name
            );
            for line in lines {
                stdout = stdout.replacen(&line, "", 1);
            }
        }
        let out_stdout = if step.added.is_empty() {
            out.stdout.clone()
        } else {
            stdout.into_bytes()
        };
        if step.name == PRINTS_THE_TABLE {
            if let Err(why) = table_with_verdicts_withheld(&out_stdout, &want) {
                panic!(
                    "{pass} {}: `concord {}` prints what the old release printed but for the \
                     verdicts withheld against a band that cannot place a judge: {why}",
                    step.name,
                    step.args.join(" ")
                );
            }
            continue;
        }
        assert!(
            out_stdout == want,
            "{pass} {}: `concord {}` prints byte for byte what the old release printed{note}\n\
             --- now ---\n{}\n--- recorded ---\n{}\n--- stderr ---\n{stderr}",
            step.name,
            step.args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&want)
        );
        for written in step.writes {
            let got_files = files_under(&copy.root, &copy.root.join(written));
            let want_files = files_under(
                &expected.join("files"),
                &expected.join("files").join(written),
            );
            let name_of = |rel: &Path| {
                rel.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            let (added, old_files): (Vec<PathBuf>, Vec<PathBuf>) = got_files
                .iter()
                .cloned()
                .partition(|rel| step.added.contains(&name_of(rel).as_str()));
            assert_eq!(
                old_files, want_files,
                "{pass} {}: writes the same files as the old release (and those added since)",
                step.name
            );
            assert_eq!(
                added.len(),
                step.added.len(),
                "{pass} {}: writes every file added since the old release",
                step.name
            );
            for rel in &old_files {
                let got = std::fs::read(copy.root.join(rel)).expect("a written file");
                if let Some((_, own)) = step.own.iter().find(|(n, _)| *n == name_of(rel)) {
                    let want =
                        std::fs::read(expected.join("files").join(rel)).expect("a recorded file");
                    if let Err(why) = own(&got, &want) {
                        panic!(
                            "{pass} {}: {} changes only as designed: {why}",
                            step.name,
                            rel.display()
                        );
                    }
                    continue;
                }
                let want =
                    std::fs::read(expected.join("files").join(rel)).expect("a recorded file");
                assert_same_file(pass, step.name, rel, &got, &want);
            }
        }
    }
}

#[test]
fn a_study_of_the_release_before_conversations_opens_and_answers_as_it_did() {
    let fixture = Path::new(FIXTURE);
    let expected = fixture.join("expected");
    let copy = copy_fixture(fixture);
    let before = study_bytes(&copy);
    assert_eq!(
        schema_of(&copy.study()),
        FIXTURE_SCHEMA,
        "the fixture is a study of schema {FIXTURE_SCHEMA}, as its README says"
    );

    run_and_compare(&copy, &expected, "first opening:");
    let after_first = study_bytes(&copy);
    let schema = i64::from(schema_of(&copy.study()));
    assert_eq!(
        schema,
        concord_core::store::SCHEMA_VERSION,
        "the first opening brought the study to this build's schema"
    );
    if schema == i64::from(FIXTURE_SCHEMA) {
        assert!(
            after_first == before,
            "a study already at this build's schema is not changed by reading it"
        );
    } else {
        assert!(
            schema > i64::from(FIXTURE_SCHEMA),
            "the study was upgraded: its schema went up from {FIXTURE_SCHEMA} to {schema}"
        );
    }

    run_and_compare(&copy, &expected, "second opening:");
    let after_second = study_bytes(&copy);
    assert!(
        after_second == after_first,
        "opening the upgraded study again changes nothing in it: the upgrade happens once"
    );
}
