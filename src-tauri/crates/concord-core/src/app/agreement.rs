//! The agreement panel's outputs: the table written beside the study in CSV, Markdown or LaTeX
//! (with the provenance of the numbers), a figure or table saved into the export folder, and how
//! many more targets a cell needs for its interval to be at most a given width; for `concord
//! agreement --format` the table with its REML bands, its provenance and its rendering.

use crate::app::open_study::OpenStudy;
use crate::base::error_code::{Coded, ErrorCode};
use crate::guard::provenance::Provenance;
use crate::panel::agreement::{AgreementOptions, AgreementReport, Comparison, Level};
use crate::panel::agreement_table::{
    plan_more as plan_cell, render, AgreementTable, IccChoice, MoreTargets, PlanError, TableFormat,
    TableView,
};
use crate::store::{StoreError, StoreResult};
use std::path::PathBuf;

impl Coded for PlanError {
    fn code(&self) -> ErrorCode {
        ErrorCode::Plan
    }
}

/// The level rubric `rubric`'s MentalAlign rows are read at: item level for a session rubric or
/// a reply rubric whose every item is a reply of a transcript (its items, not its one or few
/// sources, are the natural targets), else the paper's system level — an earlier release's
/// rubric, one mixing single-turn answers with transcripts, or an unknown key.
pub fn headline_level(study: &OpenStudy, rubric: &str) -> StoreResult<Level> {
    let store = study.store();
    let Some(stored) = store.rubrics()?.into_iter().find(|s| s.rubric.id == rubric) else {
        return Ok(Level::System);
    };
    let items = stored.rubric.scope == crate::rubric::Scope::Session
        || store.rubric_all_at_turns(stored.id)?;
    Ok(if items { Level::Item } else { Level::System })
}

/// The agreement panel's tables by `facet` (by category, by turn): the report of each value's
/// responses alone, computed with `options`, against `reference`. Against the experts it reads the
/// ratings the open study already holds for the rubric (a report of it in memory, whatever its
/// options: the ratings do not depend on them), so the table costs no second read of the study;
/// against another reference they are read afresh with it applied.
pub fn panel_by(
    study: &mut OpenStudy,
    options: &AgreementOptions,
    reference: crate::panel::adjudication::AgreementReference,
    facet: crate::panel::strata::Facet,
) -> Result<crate::panel::strata::StratifiedReport, crate::panel::adjudication::AdjudicationError> {
    use crate::panel::adjudication::{referenced_data, AgreementReference};
    use crate::panel::agreement::ReferencedData;
    let data = match reference {
        AgreementReference::Experts => ReferencedData::experts(study.rubric_data(options)?),
        other => referenced_data(study.store(), options, other)?.0,
    };
    Ok(crate::panel::strata::by_facet(
        study.store(),
        &data,
        facet,
        options,
    )?)
}

/// Write the table in `format` beside the study file; returns the path written.
pub fn export_agreement(
    study: &mut OpenStudy,
    options: &AgreementOptions,
    view: TableView,
    format: TableFormat,
) -> StoreResult<PathBuf> {
    let t = study.agreement_table(options, view)?;
    let icc = match view.icc {
        IccChoice::C1 => "icc-c1",
        IccChoice::A1 => "icc-a1",
        IccChoice::Icc1 => "icc-1-1",
        IccChoice::Icc1k => "icc-1-k",
        IccChoice::Ak => "icc-a-k",
        IccChoice::Ck => "icc-c-k",
    };
    let name = format!(
        "{}-agreement-{}-{}-{}.{}",
        options.rubric,
        view.level.as_str(),
        icc,
        comparison_slug(view.comparison),
        format.extension()
    );
    let provenance = crate::guard::provenance::Provenance::of(
        study.store(),
        serde_json::json!({ "agreement": options, "table": view }),
    )?;
    save_export(study, &name, render(&t, format, &provenance).as_bytes())
}

fn comparison_slug(c: Comparison) -> &'static str {
    match c {
        Comparison::JudgeVsExperts => "judge-vs-experts",
        Comparison::JudgeVsExpert => "judge-vs-each-expert",
        Comparison::ExpertVsExpert => "expert-vs-expert",
    }
}

/// Write bytes (a figure, a table) as `name` into the study's export folder
/// (`<study name>-exports` beside the study file), numbered when the name is taken (through
/// `files::output`: staged `0600` and renamed in); returns the path written.
pub fn save_export(study: &OpenStudy, name: &str, bytes: &[u8]) -> StoreResult<PathBuf> {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = clean.trim_start_matches('.').to_string();
    if clean.is_empty() {
        return Err(StoreError::Invalid("an export needs a file name".into()));
    }
    let dir = study.export_dir()?;
    crate::files::output::create_folder(&dir)?;
    // A name already taken gets a number: a saved figure never replaces another file.
    let path = crate::app::paths::unused_path(&dir, &crate::base::text::bounded_file_name(&clean));
    let dest = crate::files::output::Destination::new(&path).guarding(study.store().path());
    crate::files::output::write_bytes(&dest, bytes)?;
    Ok(path)
}

/// How many more targets the cell (criterion × rater × reference in `view`) needs for its CI to
/// be at most `width` wide.
pub fn plan_more(
    study: &mut OpenStudy,
    options: &AgreementOptions,
    view: TableView,
    cell: &PlannedCell<'_>,
    width: f64,
) -> Result<MoreTargets, PlanError> {
    let t = study
        .agreement_table(options, view)
        .map_err(|e| PlanError::Study(e.to_string()))?;
    let col = t
        .columns
        .iter()
        .position(|c| c.rater == cell.rater && c.reference == cell.reference);
    let found = t
        .rows
        .iter()
        .find(|r| r.criterion == cell.criterion)
        .and_then(|r| col.and_then(|i| r.cells.get(i).cloned().flatten()))
        .ok_or(PlanError::NoEstimate)?;
    plan_cell(&found, width)
}

/// The cell of the agreement table a plan is for.
#[derive(Debug, Clone, Copy)]
pub struct PlannedCell<'a> {
    pub criterion: &'a str,
    pub rater: &'a str,
    pub reference: &'a str,
}

/// For `concord agreement --format`: the table of `report` for `view`, its ICC bands from the
/// experts' REML baseline.
pub fn table_with_reml_bands(
    study: &OpenStudy,
    report: &AgreementReport,
    view: TableView,
) -> StoreResult<AgreementTable> {
    crate::panel::agreement_table::table_with_reml_bands(study.store(), report, view)
}

/// The reproducibility record a table carries: the chain head, the version and `options`.
pub fn provenance(study: &OpenStudy, options: serde_json::Value) -> StoreResult<Provenance> {
    Provenance::of(study.store(), options)
}

/// The table written out in `format` with its provenance.
pub fn render_table(
    table: &AgreementTable,
    format: TableFormat,
    provenance: &Provenance,
) -> String {
    render(table, format, provenance)
}
