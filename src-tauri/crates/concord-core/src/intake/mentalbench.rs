//! The MentalBench-100k layout (CSV or XLSX): one row per conversation with `context`, `response`
//! (the dataset's original human answer) and one column per model (`Claude-3.5-Haiku`,
//! `deepseek-llama`, `deepseek-qwen`, `Gemini`, `gpt-4o`, `gpt-4omini`, `Llama-3.1`, `Qwen-2.5`,
//! `Qwen-3`) holding the answer texts. Columns are matched ignoring case and punctuation; each
//! maps to the same source key the MentalAlign release uses ([`super::catalog`]).
//!
//! **Matching rule.** The conversation of the n-th data row (1-based, header excluded, counting
//! records rather than physical lines, so answers with line breaks do not shift it) gets the
//! external id `mentalbench:n` — the id MentalAlign's `ConvID` n is imported under. A file with its
//! own `ConvID` column uses that instead. So ratings and texts meet whatever the import order:
//! texts imported after ratings fill the responses the ratings created without text; ratings
//! imported after texts attach to the responses the texts created. A response that already has a
//! text keeps it; a different context for an existing conversation is a data-quality finding.

use super::catalog::{source_by_mentalbench_column, SourceEntry};
use super::excerpt;
use super::index::{SourceSpec, StudyIndex};
use super::mentalalign::{conv_id, conversation_external_id};
use super::FileReport;
use super::ImportError;
use super::ImportOptions;
use super::ImportReport;
use super::QualityItem;
use super::QualityKind;
use super::{import_release, ReleaseLayout};
use crate::base::text::quoted;
use crate::files::table::display_name;
use crate::files::table::read_table;
use crate::files::table::FileFormat;
use crate::files::table::RawTable;
use crate::files::Issue;
use crate::rubric::builtin;
use crate::store::{NewConversation, Store, StudyTx};
use std::collections::HashMap;
use std::path::Path;

/// One validated row.
struct Row {
    conv: u64,
    number: usize,
    context: String,
    /// (source position, answer text).
    answers: Vec<(usize, String)>,
}

/// Import a MentalBench-100k file (CSV or XLSX, by extension).
pub fn import_file(
    store: &mut Store,
    path: &Path,
    sheet: Option<&str>,
    options: &ImportOptions,
) -> Result<ImportReport, ImportError> {
    import_release(store, path, sheet, &MentalBench, options)
}

/// The MentalBench-100k layout: its rows checked by [`validate`], written as conversations and
/// responses with their texts.
struct MentalBench;

impl ReleaseLayout for MentalBench {
    /// The sources of the answer columns, and the rows.
    type Checked = (Vec<&'static SourceEntry>, Vec<Row>);
    const KIND: &'static str = "mentalbench";
    const NOUN: &'static str = "MentalBench";

    /// Check the columns and rows ([`validate`]).
    fn check(
        &self,
        table: &RawTable,
        report: &mut FileReport,
    ) -> Result<Self::Checked, Vec<Issue>> {
        validate(table, report)
    }

    /// Write the sources, then per row its conversation (a differing context is a finding) and
    /// its answers, filling texts the study lacks.
    fn write(
        &self,
        tx: &mut StudyTx<'_>,
        table: &RawTable,
        (sources, rows): Self::Checked,
        report: &mut FileReport,
        _options: &ImportOptions,
    ) -> Result<(), ImportError> {
        let rubric = builtin::mentalbench();
        let rubric_id = tx.add_rubric(&rubric)?;
        let mut index = StudyIndex::load(tx)?;
        let mut source_ids = Vec::with_capacity(sources.len());
        for s in &sources {
            source_ids.push(index.source(tx, &SourceSpec::from(*s))?);
        }
        for row in &rows {
            let ext = conversation_external_id(row.conv);
            let c = index.conversation(
                tx,
                &NewConversation {
                    external_id: &ext,
                    rubric_id,
                    context: &row.context,
                    language: Some("en"),
                    category: None,
                },
            )?;
            if c.added {
                report.conversations_added += 1;
            }
            if c.context_differs {
                report.quality.push(QualityItem {
                    kind: QualityKind::ContextMismatch,
                    at: table.at(row.number, table.column("context")),
                    criterion: None,
                    value: Some(format!(
                        "conversation {}: {}",
                        row.conv,
                        excerpt(&row.context, 60)
                    )),
                    action: "reported".into(),
                });
            }
            for (source, text) in &row.answers {
                let (_, added, filled) =
                    index.response(tx, c.id, source_ids[*source], Some(text))?;
                if added {
                    report.responses_added += 1;
                }
                if filled {
                    report.texts_filled += 1;
                }
            }
        }
        Ok(())
    }
}

/// Read a MentalBench file's raw table (for previews).
pub fn read_file(path: &Path, sheet: Option<&str>) -> Result<RawTable, Vec<Issue>> {
    let name = display_name(path);
    let format = FileFormat::from_name(&name).unwrap_or(FileFormat::Csv);
    read_table(path, format, sheet)
}

/// Check a MentalBench table: its columns (context, the original answer and the models'),
/// then every row's id, context and answers.
fn validate(
    table: &RawTable,
    report: &mut FileReport,
) -> Result<(Vec<&'static SourceEntry>, Vec<Row>), Vec<Issue>> {
    let mut issues = Vec::new();
    let context_col = table.column("context");
    let id_col = table.column("ConvID");
    let mut sources: Vec<&'static SourceEntry> = Vec::new();
    let mut answer_cols = Vec::new();
    for (i, h) in table.headers.iter().enumerate() {
        if Some(i) == context_col || Some(i) == id_col {
            continue;
        }
        match source_by_mentalbench_column(h) {
            Some(s) if sources.contains(&s) => issues.push(Issue::error(
                table.at(1, Some(i)),
                "duplicate_column",
                format!("two columns hold the answers of {}", s.name),
            )),
            Some(s) => {
                sources.push(s);
                answer_cols.push((i, sources.len() - 1));
            }
            None => report.warnings.push(Issue::warning(
                table.at(1, Some(i)),
                "unknown_column",
                format!("column {} is not a MentalBench source; ignored", quoted(h)),
            )),
        }
    }
    let mut missing = Vec::new();
    if context_col.is_none() {
        missing.push("context".to_string());
    }
    if !sources.iter().any(|s| s.key == "original") {
        missing.push("response".to_string());
    }
    if !missing.is_empty() {
        issues.push(Issue::error(
            table.whole(),
            "missing_column",
            format!(
                "not a MentalBench-100k file: missing column(s) {}; expected context, response and one column per model",
                missing.join(", ")
            ),
        ));
        return Err(issues);
    }
    let context_col = context_col.unwrap_or(0);
    let mut rows = Vec::with_capacity(table.rows.len());
    let mut first_row: HashMap<u64, usize> = HashMap::new();
    for row in &table.rows {
        let conv = match id_col {
            Some(c) => match conv_id(table.cell(row, c)) {
                Ok(n) => n,
                Err(msg) => {
                    issues.push(Issue::error(table.at(row.number, Some(c)), "bad_id", msg));
                    continue;
                }
            },
            None => row.record as u64,
        };
        if let Some(first) = first_row.insert(conv, row.number) {
            issues.push(Issue::error(
                table.at(row.number, id_col),
                "duplicate_id",
                format!("conversation {conv} appears again (first in row {first})"),
            ));
            continue;
        }
        let Some(context) = table.cell(row, context_col).as_text() else {
            issues.push(Issue::error(
                table.at(row.number, Some(context_col)),
                "missing_value",
                "the context (the user's message) is empty".to_string(),
            ));
            continue;
        };
        let answers = answer_cols
            .iter()
            .filter_map(|&(col, source)| {
                table
                    .cell(row, col)
                    .as_text()
                    .filter(|t| !t.trim().is_empty())
                    .map(|t| (source, t))
            })
            .collect();
        rows.push(Row {
            conv,
            number: row.number,
            context,
            answers,
        });
        if issues.len() > 500 {
            break;
        }
    }
    if rows.is_empty() && issues.is_empty() {
        issues.push(Issue::error(
            table.whole(),
            "empty_file",
            "the file has a header row but no data rows".to_string(),
        ));
    }
    if issues.is_empty() {
        Ok((sources, rows))
    } else {
        Err(issues)
    }
}
