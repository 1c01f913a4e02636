//! The application layer's jobs end to end on a study in a temporary folder: the wizard from
//! import to package and CSV, refused input as data, the PHI gate and its override, file names.

use super::export::{export_ratings, export_sheet, RatingsExport, RatingsFormat};
use super::import::{import_request, ImportFormat, ImportJobError, ImportRequest};
use super::open_study::OpenStudy;
use super::package::{export_package, merge_package};
use super::paths::{name_slug, typed_output, typed_path, unused_path, PathError};
use super::phi::{decide_phi, phi_review, PhiDecision};
use super::setup::{
    add_expert, add_rubric, assign, assignment_table, preview_assignment, SetupError,
};
use super::sheet::{import_sheet, SheetOutcome};
use crate::base::clock::SteppingClock;
use crate::base::error_code::{Coded, ErrorCode};
use crate::guard::phi::review::PhiGate;
use crate::intake::OutOfScale;
use crate::store::Passphrase;
use crate::store::Store;
use crate::workflow::assignment::{AssignmentError, AssignmentOptions};
use std::path::Path;
use std::sync::Arc;

/// A lead who never overrides the PHI gate.
const LEAD: PhiGate<'static> = PhiGate {
    actor: "test lead",
    override_reason: None,
};

fn study(dir: &Path) -> OpenStudy {
    let store = Store::create(
        &dir.join("lead.concord"),
        Arc::new(SteppingClock::new(1_700_000_000_000, 1000)),
    )
    .expect("a new study");
    OpenStudy::new(store)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("test input written");
    p.display().to_string()
}

const BENCH: &str = "context,response,Gemini,gpt-4o\n\
    I cannot sleep before exams,Try a wind-down routine,Breathe slowly,Talk to a tutor\n\
    My friend stopped talking to me,Ask them gently,Give it time,Write to them\n\
    I feel alone in a new city,Join a club,Call home,Volunteer locally\n\
    Work leaves me exhausted,Rest on weekends,Set limits,Speak to your manager\n";

#[test]
fn a_long_chinese_study_and_expert_name_still_export_under_255_bytes() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    // 56 characters of 3 bytes (168 bytes): the study file fits the limit; an export named
    // after it and a 60-character expert did not.
    let stem = "心理危机干预研究".repeat(7);
    let store = Store::create(
        &dir.path().join(format!("{stem}.concord")),
        Arc::new(SteppingClock::new(1_700_000_000_000, 1000)),
    )
    .expect("a study with a long Chinese name");
    let mut s = OpenStudy::new(store);
    crate::intake::demo::populate_demo(s.store_mut(), 3).expect("demo content");
    let expert = "王".repeat(60);
    add_expert(&mut s, &expert, 1).expect("an expert with a long name");
    let mut options = AssignmentOptions::new(1, 42);
    options.sample = Some(2);
    assign(&mut s, &options).expect("assigned");
    for format in [RatingsFormat::LongCsv, RatingsFormat::Xlsx] {
        let written = export_ratings(&mut s, &RatingsExport::new(format), None, false, LEAD)
            .expect("the export writes under a shortened name");
        let name = Path::new(&written.path)
            .file_name()
            .expect("a file name")
            .len();
        assert!(
            name <= 255,
            "the file name fits the file system: {name} bytes"
        );
    }
    let sheet = export_sheet(&mut s, &expert, None, false, LEAD)
        .expect("the expert's sheet writes under a shortened name");
    assert!(
        Path::new(&sheet.path)
            .file_name()
            .expect("a file name")
            .len()
            <= 255,
        "the sheet's name fits too"
    );
}

#[test]
fn typed_paths_must_be_absolute() {
    assert!(
        matches!(typed_path("data.csv"), Err(PathError::RelativePath(_))),
        "a relative path is refused with its own error"
    );
    assert!(
        matches!(typed_path("   "), Err(PathError::EmptyPath)),
        "a blank path is refused"
    );
    let abs = std::env::temp_dir().join("x.csv");
    assert_eq!(
        typed_path(&format!("  {}  ", abs.display())).expect("absolute path accepted"),
        abs,
        "surrounding blanks are trimmed"
    );
}

#[test]
fn slugs_and_unused_names() {
    assert_eq!(
        name_slug("Dr. Ana Li"),
        "dr-ana-li",
        "punctuation collapses to -"
    );
    assert_eq!(
        name_slug("王医生"),
        "王医生",
        "letters of any script are kept"
    );
    assert_eq!(
        name_slug("?!"),
        "expert",
        "a name without letters still gives a file name"
    );
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        unused_path(dir.path(), "a.concord"),
        dir.path().join("a.concord"),
        "a free name is used as is"
    );
    std::fs::write(dir.path().join("a.concord"), b"x").unwrap();
    std::fs::write(dir.path().join("a-2.concord"), b"x").unwrap();
    assert_eq!(
        unused_path(dir.path(), "a.concord"),
        dir.path().join("a-3.concord"),
        "taken names get the next free number"
    );
}

#[test]
fn the_wizard_runs_from_import_to_package_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = study(dir.path());
    let outcome = import_data(
        &mut s,
        &mentalbench_request(write(dir.path(), "bench.csv", BENCH)),
        7,
    )
    .expect("the import runs");
    let report = outcome.report.expect("a clean file is imported");
    assert_eq!(report.files[0].conversations_added, 4, "four conversations");
    assert_eq!(report.files[0].responses_added, 12, "three answers each");

    for name in ["Ana", "Ben", "Chen"] {
        add_expert(&mut s, name, 1).expect("expert added");
    }
    let mut options = AssignmentOptions::new(2, 42);
    options.sample = Some(4);
    let preview = preview_assignment(&s, &options).expect("preview");
    assert!(
        assignment_table(&s).unwrap().options.is_none(),
        "a preview writes nothing"
    );
    let summary = assign(&mut s, &options).expect("assigned");
    assert_eq!(preview, summary, "the preview is what gets assigned");
    let table = assignment_table(&s).expect("table");
    let loads: Vec<usize> = table.experts.iter().map(|e| e.assigned).collect();
    assert_eq!(loads, vec![8, 8, 8], "12 responses × k=2 over 3 experts");

    let pass = Passphrase::new("lead test passphrase").unwrap();
    let first =
        export_package(&mut s, "Ana", None, false, 9, &pass, LEAD).expect("package written");
    let second =
        export_package(&mut s, "Ana", None, false, 9, &pass, LEAD).expect("second package");
    assert!(
        first
            .path
            .ends_with("lead-exports/lead-package-ana.concord"),
        "default package path in the export folder: {}",
        first.path
    );
    assert_ne!(
        first.path, second.path,
        "an existing package is never overwritten"
    );
    assert!(
        Path::new(&second.path).exists(),
        "the second package exists"
    );
    let merged = merge_package(&mut s, Path::new(&first.path), &pass)
        .expect("merge of an untouched package");
    assert!(
        merged.conflicts.is_empty() && merged.inserted == 0,
        "nothing to merge from an untouched package"
    );

    let csv = export_ratings(
        &mut s,
        &RatingsExport {
            excel: true,
            ..RatingsExport::new(RatingsFormat::LongCsv)
        },
        None,
        false,
        LEAD,
    )
    .expect("csv written");
    let bytes = std::fs::read(&csv.path).expect("csv on disk");
    assert!(
        bytes.starts_with(b"\xEF\xBB\xBFconversation_id,"),
        "the Excel option adds a byte-order mark before the header"
    );
    let sheet = export_sheet(&mut s, "Ben", None, false, LEAD).expect("sheet written");
    assert_eq!(sheet.summary.rows, 8, "one sheet row per assigned item");
    let back = import_sheet_outcome(&mut s, &sheet.path.display().to_string())
        .expect("the untouched sheet reads back");
    let report = back.report.expect("an untouched sheet is accepted");
    assert_eq!(
        (report.rater.as_str(), report.inserted),
        ("Ben", 0),
        "an untouched sheet is Ben's and brings no values"
    );
    let bad = import_sheet_outcome(&mut s, &write(dir.path(), "notes.xlsx", "not a workbook"))
        .expect("a refused sheet is an outcome, not an error");
    assert!(
        bad.report.is_none() && !bad.errors.is_empty(),
        "a file that is not a workbook is refused with its problems listed"
    );
    let refused = typed_output(Some("relative.csv")).expect_err("relative output path refused");
    assert_eq!(refused.code(), "path", "path errors have their own code");
}

#[test]
fn rejected_input_comes_back_as_issues_and_bad_rubrics_as_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = study(dir.path());
    let outcome = import_data(
        &mut s,
        &mentalbench_request(write(dir.path(), "bad.csv", "prompt,answer\nx,y\n")),
        7,
    )
    .expect("a refused import is an outcome, not an error");
    assert!(outcome.report.is_none(), "nothing imported");
    assert!(
        outcome.issues.iter().any(|i| i.code == "missing_column"),
        "the missing columns are named: {:?}",
        outcome.issues
    );
    let psy = import_data(
        &mut s,
        &ImportRequest {
            format: ImportFormat::Psycrisis,
            path: write(dir.path(), "p.xlsx", "x"),
            out_of_scale: OutOfScale::Keep,
            rubric: None,
            source: Some("  ".into()),
            judge: None,
            expert: None,
            judges: false,
        },
        7,
    );
    assert!(
        matches!(psy, Err(ImportJobError::MissingSource)),
        "PsyCrisis needs its answering source"
    );
    let rubric = add_rubric_path(&mut s, &write(dir.path(), "r.toml", "id = 3"));
    assert!(
        matches!(
            rubric,
            Err(SetupError::Assignment(AssignmentError::Rubric(_)))
        ),
        "an invalid rubric file is refused by the core's validation"
    );
}

#[test]
fn phi_found_at_import_gates_exports_until_each_finding_is_decided() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = study(dir.path());
    let csv = "context,response,Gemini,gpt-4o\n\
        Call me on 415-555-0132 tonight,Ask them gently,Give it time,Write to them\n\
        My email is jo.doe@example.org,Join a club,Call home,Volunteer locally\n";
    let outcome = import_data(
        &mut s,
        &mentalbench_request(write(dir.path(), "phi.csv", csv)),
        7,
    )
    .expect("the import runs");
    let phi = outcome
        .phi
        .expect("an import that happened reports its PHI scan");
    assert_eq!(
        (phi.found, phi.open),
        (2, 2),
        "the phone number and the e-mail address are reported with the import"
    );
    add_expert(&mut s, "Ana", 1).unwrap();
    let mut options = AssignmentOptions::new(1, 42);
    options.sample = Some(2);
    assign(&mut s, &options).unwrap();
    let pass = Passphrase::new("lead test passphrase").unwrap();
    let refused = export_package(&mut s, "Ana", None, false, 9, &pass, LEAD);
    assert!(
        matches!(&refused, Err(e) if e.code() == ErrorCode::PhiUnreviewed),
        "a package is refused while findings are open: {refused:?}"
    );
    let refused = export_ratings(
        &mut s,
        &RatingsExport::new(RatingsFormat::LongCsv),
        None,
        false,
        LEAD,
    );
    assert!(
        matches!(&refused, Err(e) if e.code() == ErrorCode::PhiUnreviewed),
        "so is a rating export"
    );

    let queue = phi_review(&s).unwrap();
    let phone = queue
        .items
        .iter()
        .find(|i| i.finding.kind == crate::guard::phi::PhiKind::Phone)
        .expect("the phone number is in the queue");
    assert_eq!(
        (
            phone.before.as_str(),
            phone.matched.as_str(),
            phone.after.as_str()
        ),
        ("Call me on ", "415-555-0132", " tonight"),
        "an open finding is shown in its context"
    );
    let email = queue
        .items
        .iter()
        .find(|i| i.finding.kind == crate::guard::phi::PhiKind::Email)
        .expect("the e-mail address is in the queue")
        .finding
        .id;
    let after = decide_phi(
        &mut s,
        &[phone.finding.id],
        &PhiDecision::Redact,
        "test lead",
    )
    .unwrap();
    assert_eq!(
        (after.open, after.redacted),
        (1, 1),
        "one redacted, one open"
    );
    let kept = decide_phi(
        &mut s,
        &[email],
        &PhiDecision::Keep {
            reason: "  ".into(),
        },
        "test lead",
    );
    assert!(
        matches!(&kept, Err(e) if e.code() == ErrorCode::EmptyReason),
        "keeping an original needs a reason"
    );
    let after = decide_phi(
        &mut s,
        &[email],
        &PhiDecision::Keep {
            reason: "a made-up address in a role-play".into(),
        },
        "test lead",
    )
    .unwrap();
    assert_eq!((after.open, after.kept), (0, 1), "nothing is open any more");
    let texts = s.store().phi_texts().unwrap();
    assert!(
        texts.iter().any(|t| t.text == "Call me on [PHONE] tonight")
            && !texts.iter().any(|t| t.text.contains("415-555-0132")),
        "the redacted number is gone from the stored text, replaced by its placeholder"
    );
    export_package(&mut s, "Ana", None, false, 9, &pass, LEAD)
        .expect("with every finding decided the package is written");
}

#[test]
fn an_override_with_a_reason_writes_despite_open_findings_and_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = study(dir.path());
    let csv = "context,response,Gemini,gpt-4o\nCall me on 415-555-0132,a,b,c\n";
    import_data(
        &mut s,
        &mentalbench_request(write(dir.path(), "phi.csv", csv)),
        7,
    )
    .unwrap();
    let blank = PhiGate {
        actor: "test lead",
        override_reason: Some("   "),
    };
    assert!(
        export_ratings(
            &mut s,
            &RatingsExport::new(RatingsFormat::LongCsv),
            None,
            false,
            blank
        )
        .is_err(),
        "a blank override reason is no override"
    );
    let gate = PhiGate {
        actor: "test lead",
        override_reason: Some("internal copy for the ethics board"),
    };
    export_ratings(
        &mut s,
        &RatingsExport::new(RatingsFormat::LongCsv),
        None,
        false,
        gate,
    )
    .expect("an override with a reason writes the export");
    let log = crate::guard::audit::log(s.store(), &Default::default()).unwrap();
    let entry = log
        .iter()
        .find(|e| e.entry.action == "phi.override")
        .expect("the override is in the audit trail");
    assert_eq!(
        (
            entry.entry.actor.as_str(),
            entry.entry.detail["reason"].as_str()
        ),
        ("test lead", Some("internal copy for the ethics board")),
        "with who overrode and why"
    );
}

/// The wizard's import of `request`, as the window makes it.
fn import_data(
    s: &mut OpenStudy,
    request: &ImportRequest,
    seed: u64,
) -> Result<super::import::ImportOutcome, ImportJobError> {
    import_request(s, request, seed, "test lead", &mut |_| {})
}

/// A rubric at a typed path, as the window adds it.
fn add_rubric_path(
    s: &mut OpenStudy,
    path: &str,
) -> Result<crate::workflow::assignment::RubricAdded, SetupError> {
    add_rubric(s, &typed_path(path)?)
}

/// A filled sheet at a typed path, as the window imports it.
fn import_sheet_outcome(
    s: &mut OpenStudy,
    path: &str,
) -> Result<SheetOutcome, crate::outputs::export::sheet::SheetError> {
    SheetOutcome::of(import_sheet(
        s,
        &typed_path(path).expect("an absolute path"),
    ))
}

/// The wizard's request to import a MentalBench answer file at `path`, out-of-scale values kept.
fn mentalbench_request(path: String) -> ImportRequest {
    ImportRequest {
        format: ImportFormat::Mentalbench,
        path,
        out_of_scale: OutOfScale::Keep,
        rubric: None,
        source: None,
        judge: None,
        expert: None,
        judges: false,
    }
}
