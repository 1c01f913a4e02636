//! `concord import <format> …`: bring released datasets and generic long-form files into the study
//! (MentalAlign-70k folders, MentalBench-100k answer texts, PsyCrisis workbooks, long-form items and
//! ratings, conversations of many turns), then print what was imported and the data-quality
//! report (for conversations: conversations, turns, reply items, session items and sources;
//! `--json` exactly `{"conversations", "turns", "reply_items", "session_items", "sources"}`). Every import is
//! all-or-nothing; a refused import prints each problem with its file, sheet, row and column. An
//! import still running after a second shows a progress bar on stderr (hidden with `--json` and
//! when stderr is not a terminal).

use crate::study_cmd::{open_as, StudyCmdError};
use clap::{Args, Subcommand, ValueEnum};
use concord_core::app::import::{ImportJob, ImportJobError};
use concord_core::app::open::WhenMissing;
use concord_core::base::text::visible;
use concord_core::intake::long::ItemColumns;
use concord_core::intake::long::RatingColumns;
use concord_core::intake::psycrisis::CrisisFile;
use concord_core::intake::FileReport;
use concord_core::intake::FileStatus;
use concord_core::intake::ImportOptions;
use concord_core::intake::ImportProgress;
use concord_core::intake::ImportReport;
use concord_core::intake::OutOfScale;
use concord_core::intake::QualityKind;
use concord_core::rubric::reply::ReplyParsing;
use concord_core::store::{RaterKind, StoreError};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct ImportArgs {
    #[command(subcommand)]
    format: ImportFormat,
    /// Out-of-scale whole numbers (0 or 6 on 1–5): keep as written (the paper's choice) or store
    /// as missing. The raw value is kept either way.
    #[arg(long, value_enum, default_value = "keep", global = true)]
    out_of_scale: OutOfScaleArg,
    /// Judge replies: strict (one JSON object, optionally fenced; the paper's cleaning) or lenient
    /// (also an object inside prose, and scores salvaged from broken JSON).
    #[arg(long, value_enum, default_value = "strict", global = true)]
    replies: RepliesArg,
    /// Seed of the queue orders of raters the import creates.
    #[arg(long, default_value_t = 0x00C0_FFEE, global = true)]
    seed: u64,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum OutOfScaleArg {
    Keep,
    Missing,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum RepliesArg {
    Strict,
    Lenient,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum KindArg {
    Expert,
    Judge,
}

#[derive(Subcommand, Debug)]
enum ImportFormat {
    /// Every MentalAlign-70k .xlsx in DIR (the human file and any judge files).
    Mentalalign {
        dir: PathBuf,
        /// Judge model id for judge files whose sheet name is not one (e.g. "Sheet1").
        #[arg(long)]
        judge: Option<String>,
    },
    /// MentalBench-100k answer texts (CSV or XLSX; one row per conversation).
    Mentalbench {
        file: PathBuf,
        /// Workbook sheet (default: the first).
        #[arg(long)]
        sheet: Option<String>,
    },
    /// A PsyCrisis workbook: utterance, answer, optional category, and a judge's
    /// `evaluation_result` and/or expert dimension columns.
    Psycrisis {
        file: PathBuf,
        /// Key of the source that wrote the answers (e.g. "gpt4o").
        #[arg(long)]
        source: String,
        /// Display name of the source (default: the key).
        #[arg(long)]
        source_name: Option<String>,
        /// Model id of the judge whose `evaluation_result` the file holds.
        #[arg(long)]
        judge: Option<String>,
        /// Name of the expert whose dimension columns the file holds.
        #[arg(long)]
        expert: Option<String>,
        #[arg(long)]
        sheet: Option<String>,
    },
    /// Long-form items: conversation_id, context, response_id, source, text, and an optional
    /// category (the conversation's risk type) (CSV, JSONL, XLSX).
    LongItems {
        file: PathBuf,
        /// Rubric the conversations are rated with.
        #[arg(long, default_value = "mentalbench")]
        rubric: String,
        #[arg(long, default_value = "conversation_id")]
        conversation_col: String,
        #[arg(long, default_value = "context")]
        context_col: String,
        #[arg(long, default_value = "response_id")]
        response_col: String,
        #[arg(long, default_value = "source")]
        source_col: String,
        #[arg(long, default_value = "text")]
        text_col: String,
        /// The conversation's category, read when the file has this column.
        #[arg(long, default_value = "category")]
        category_col: String,
        #[arg(long)]
        sheet: Option<String>,
    },
    /// Long-form ratings: item, rater, criterion, score, optional rationale (CSV, JSONL, XLSX).
    LongRatings {
        file: PathBuf,
        #[arg(long, default_value = "mentalbench")]
        rubric: String,
        /// Item column (also accepted: `target`).
        #[arg(long, default_value = "item")]
        item_col: String,
        #[arg(long, default_value = "rater")]
        rater_col: String,
        #[arg(long, default_value = "criterion")]
        criterion_col: String,
        #[arg(long, default_value = "score")]
        score_col: String,
        #[arg(long, default_value = "rationale")]
        rationale_col: String,
        /// Kind of raters not yet in the study.
        #[arg(long, value_enum, default_value = "expert")]
        kind: KindArg,
        #[arg(long)]
        sheet: Option<String>,
    },
    /// Conversations of many turns: chat JSON Lines (one conversation per line, `messages`,
    /// optional `candidates` and `rate`) or a turn table (`conversation_id, turn, role, text`,
    /// optional `source, category, language`; CSV, XLSX or JSON Lines), told apart by content.
    Conversations {
        file: PathBuf,
        /// Rubric the conversations are rated with (a session rubric gives one session item per
        /// conversation).
        #[arg(long, default_value = "mentalbench")]
        rubric: String,
    },
    /// Evidence spans: conversation_id, turn, source, rater, code, start, end, optional severity
    /// and quote (CSV, JSONL, XLSX); offsets in Unicode characters of the reply's text.
    Spans {
        file: PathBuf,
        /// Kind of raters not yet in the study.
        #[arg(long, value_enum, default_value = "expert")]
        kind: KindArg,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum ImportCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Import(#[from] ImportJobError),
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Spans(#[from] concord_core::app::spans::SpanJobError),
}

pub fn run(args: &ImportArgs, db: Option<&Path>, json: bool) -> Result<String, ImportCmdError> {
    let options = ImportOptions {
        out_of_scale: match args.out_of_scale {
            OutOfScaleArg::Keep => OutOfScale::Keep,
            OutOfScaleArg::Missing => OutOfScale::Missing,
        },
        replies: match args.replies {
            RepliesArg::Strict => ReplyParsing::Strict,
            RepliesArg::Lenient => ReplyParsing::Lenient,
        },
        seed: args.seed,
    };
    // An import into a file that does not exist yet creates an empty study there.
    let mut study = open_as(db, WhenMissing::CreateEmpty)?.study;
    let Some(job) = job(&args.format) else {
        return import_spans(&mut study, &args.format, args.seed, json);
    };
    let started = Instant::now();
    let bar = ProgressBar::hidden();
    let mut shown = false;
    let mut on_progress = |p: ImportProgress| {
        if json || (!shown && started.elapsed() < Duration::from_secs(1)) {
            return;
        }
        if !shown {
            shown = true;
            bar.set_length(p.total);
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {percent:>3}% {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        bar.set_position(p.done);
        bar.set_message(format!("{} rows", p.rows));
    };
    // The PHI guard scans what the import brought in; the findings are reported with it.
    let imported = concord_core::app::import::import(
        &mut study,
        &job,
        &options,
        &crate::phi_cmd::actor(None),
        &mut on_progress,
    );
    bar.finish_and_clear();
    let concord_core::app::import::Imported {
        report,
        phi,
        answers_without_text,
    } = imported?;
    if let ImportFormat::Conversations { .. } = args.format {
        return render_conversations(&report, json, &phi);
    }
    if json {
        let mut doc = serde_json::to_value(&report)?;
        if let Some(obj) = doc.as_object_mut() {
            obj.insert("phi".into(), serde_json::to_value(&phi)?);
            obj.insert(
                "answers_without_text".into(),
                serde_json::to_value(answers_without_text)?,
            );
        }
        return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
    }
    Ok(render(&report)
        + &without_text_note(answers_without_text)
        + &crate::phi_cmd::render_summary(&phi))
}

/// What the report says when answers have no text: how many, and which import fills them.
fn without_text_note(n: i64) -> String {
    if n == 0 {
        return String::new();
    }
    format!(
        "{n} answers have ratings but no text in the study (the MentalAlign release holds no \
         answers); import the MentalBench-100k file to fill them: concord import mentalbench FILE\n"
    )
}

/// `concord import spans FILE`: what was added, or every problem with its file, row and column.
fn import_spans(
    study: &mut concord_core::app::open_study::OpenStudy,
    format: &ImportFormat,
    seed: u64,
    json: bool,
) -> Result<String, ImportCmdError> {
    let ImportFormat::Spans { file, kind } = format else {
        return Ok(String::new());
    };
    let kind = match kind {
        KindArg::Expert => RaterKind::Expert,
        KindArg::Judge => RaterKind::Judge,
    };
    let report = concord_core::app::spans::import_spans(
        study,
        file,
        kind,
        seed,
        &crate::phi_cmd::actor(None),
    )?;
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&report)?));
    }
    let mut out = format!(
        "{}: {} spans added ({} already in the study, {} unlocated quotes kept)\n",
        visible(&report.file),
        report.added,
        report.already_present,
        report.unlocated
    );
    if !report.raters_added.is_empty() {
        out.push_str(&format!(
            "raters added: {}\n",
            report
                .raters_added
                .iter()
                .map(|n| visible(n))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(out)
}

/// The import job of a format (`None`: spans, which are not an import of items or ratings).
fn job(format: &ImportFormat) -> Option<ImportJob> {
    Some(match format {
        ImportFormat::Mentalalign { dir, judge } => ImportJob::MentalAlign {
            dir: dir.clone(),
            judge: judge.clone(),
        },
        ImportFormat::Mentalbench { file, sheet } => ImportJob::MentalBench {
            file: file.clone(),
            sheet: sheet.clone(),
        },
        ImportFormat::Psycrisis {
            file,
            source,
            source_name,
            judge,
            expert,
            sheet,
        } => ImportJob::PsyCrisis {
            file: file.clone(),
            crisis: CrisisFile {
                source_key: source.clone(),
                source_name: source_name.clone(),
                judge: judge.clone(),
                expert: expert.clone(),
                sheet: sheet.clone(),
            },
        },
        ImportFormat::LongItems {
            file,
            rubric,
            conversation_col,
            context_col,
            response_col,
            source_col,
            text_col,
            category_col,
            sheet,
        } => ImportJob::LongItems {
            file: file.clone(),
            rubric: rubric.clone(),
            columns: ItemColumns {
                conversation: conversation_col.clone(),
                context: context_col.clone(),
                response: response_col.clone(),
                source: source_col.clone(),
                text: text_col.clone(),
                category: category_col.clone(),
            },
            sheet: sheet.clone(),
        },
        ImportFormat::LongRatings {
            file,
            rubric,
            item_col,
            rater_col,
            criterion_col,
            score_col,
            rationale_col,
            kind,
            sheet,
        } => ImportJob::LongRatings {
            file: file.clone(),
            rubric: rubric.clone(),
            columns: RatingColumns {
                item: item_col.clone(),
                rater: rater_col.clone(),
                criterion: criterion_col.clone(),
                score: score_col.clone(),
                rationale: rationale_col.clone(),
                new_rater_kind: match kind {
                    KindArg::Expert => RaterKind::Expert,
                    KindArg::Judge => RaterKind::Judge,
                },
            },
            sheet: sheet.clone(),
        },
        ImportFormat::Conversations { file, rubric } => ImportJob::Conversations {
            file: file.clone(),
            rubric: rubric.clone(),
        },
        ImportFormat::Spans { .. } => return None,
    })
}

/// What an import of conversations prints: the counts (`--json`: exactly the five of the
/// contract), the sources named, warnings, then the PHI scan of what it brought in.
fn render_conversations(
    report: &ImportReport,
    json: bool,
    phi: &concord_core::guard::phi::review::PhiScanSummary,
) -> Result<String, ImportCmdError> {
    let file = report.files.first();
    let counts = file
        .and_then(|f| f.conversation_counts.as_deref())
        .cloned()
        .unwrap_or_default();
    if json {
        return Ok(format!(
            "{}
",
            serde_json::to_string_pretty(&counts)?
        ));
    }
    let Some(f) = file else {
        return Ok(String::new());
    };
    if f.status == FileStatus::AlreadyImported {
        return Ok(format!(
            "{}: already imported (same content); nothing changed\n",
            visible(&f.file)
        ));
    }
    let mut out = format!(
        "{}: {} conversations, {} turns, {} reply items, {} session items, {} sources ({})\n",
        visible(&f.file),
        counts.conversations,
        counts.turns,
        counts.reply_items,
        counts.session_items,
        counts.sources,
        counts
            .source_names
            .iter()
            .map(|n| visible(n))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for w in &f.warnings {
        out.push_str(&format!("  warning: {w}\n"));
    }
    out.push_str(&crate::phi_cmd::render_summary(phi));
    Ok(out)
}

fn render(report: &ImportReport) -> String {
    let mut out = String::new();
    for f in &report.files {
        out.push_str(&render_file(f));
    }
    out.push_str(&format!(
        "options: out-of-scale values {}, judge replies {}\n",
        report.options.out_of_scale.as_str(),
        match report.options.replies {
            ReplyParsing::Strict => "strict",
            ReplyParsing::Lenient => "lenient",
        }
    ));
    out
}

fn render_file(f: &FileReport) -> String {
    let mut out = f.file.clone();
    if let Some(s) = &f.sheet {
        out.push_str(&format!(" [{s}]"));
    }
    if f.status == FileStatus::AlreadyImported {
        out.push_str(": already imported (same content); nothing changed\n");
        return out;
    }
    out.push_str(&format!(
        ": {}{} conversations added, {} responses added, {} texts filled, {} ratings written ({} updated)\n",
        f.rater
            .as_deref()
            .map(|r| format!("rater {}; ", visible(r)))
            .unwrap_or_default(),
        f.conversations_added,
        f.responses_added,
        f.texts_filled,
        f.ratings_inserted + f.ratings_updated,
        f.ratings_updated
    ));
    let q = &f.quality;
    let mut lines = Vec::new();
    if !q.out_of_scale.is_empty() {
        let values: Vec<String> = q
            .out_of_scale
            .iter()
            .map(|(v, n)| format!("{v} ×{n}"))
            .collect();
        lines.push(format!(
            "out-of-scale values ({}): {}",
            report_action(f),
            values.join(", ")
        ));
    }
    for (n, what) in [
        (q.null_values, "null scores (missing)"),
        (q.empty_values, "empty scores (missing)"),
        (q.empty_cells, "empty rating cells (missing)"),
        (
            q.missing_attributes,
            "attributes absent from a cell (missing)",
        ),
        (
            q.unparsed_replies,
            "judge replies without readable scores (kept verbatim)",
        ),
        (
            q.total_mismatches,
            "totals that differ from the sum of the dimensions",
        ),
        (q.missing_dimensions, "dimensions absent from a judge dict"),
        (
            q.context_mismatches,
            "conversations whose context differs from the stored one",
        ),
    ] {
        if n > 0 {
            lines.push(format!("{what}: {n}"));
        }
    }
    if lines.is_empty() {
        out.push_str("  data quality: no findings\n");
    } else {
        out.push_str("  data quality:\n");
        for l in lines {
            out.push_str(&format!("    {l}\n"));
        }
        out.push_str("  findings (first 10; --json lists all):\n");
        for item in q.items.iter().take(10) {
            out.push_str(&format!(
                "    {}{}: {} → {}\n",
                item.at,
                item.criterion
                    .as_deref()
                    .map(|c| format!(" [{c}]"))
                    .unwrap_or_default(),
                item.value.as_deref().unwrap_or("(empty)"),
                item.action
            ));
        }
    }
    for w in &f.warnings {
        out.push_str(&format!("  warning: {w}\n"));
    }
    out
}

fn report_action(f: &FileReport) -> &'static str {
    match f
        .quality
        .items
        .iter()
        .find(|i| i.kind == QualityKind::OutOfScale)
        .map(|i| i.action.as_str())
    {
        Some("kept") => "kept as written",
        _ => "stored as missing",
    }
}
