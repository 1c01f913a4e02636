//! Commands of the lead's setup wizard (rubric, import, experts, sample and assignment, progress,
//! packages, exports). Packages, rating exports and sheets pass the PHI gate: refused while
//! findings are open unless the lead types a reason to override. Each parses its typed paths and makes one call into the core's application layer (`concord_core::app`)
//! on the open study — the same jobs the `concord` CLI runs; seeds for new randomised state are
//! drawn here, at the edge. Imports, merged packages and filled sheets
//! change many ratings at once: they go through the core's `store_mut()` (which drops the cached
//! agreement reports) and are announced with the `ratings-changed` event so the agreement panel
//! reloads.

use crate::error::IpcResult;
use crate::events::{ratings_changed, RatingsChanged, IMPORT_PROGRESS};
use crate::state::AppState;
use concord_core::app::export::RatingsExport;
use concord_core::app::export::RatingsFormat;
use concord_core::app::export::WrittenFile;
use concord_core::app::import::ImportOutcome;
use concord_core::app::import::ImportRequest;
use concord_core::app::package::PackageWritten;
use concord_core::app::paths::desktop_actor;
use concord_core::app::paths::typed_output;
use concord_core::app::paths::typed_path;
use concord_core::app::sheet::SheetOutcome;
use concord_core::base::clock::fresh_seed;
use concord_core::guard::phi::review::PhiGate;
use concord_core::store::Passphrase;
use concord_core::workflow::assignment::AssignmentOptions;
use concord_core::workflow::assignment::AssignmentSummary;
use concord_core::workflow::assignment::AssignmentTable;
use concord_core::workflow::assignment::ExpertAdded;
use concord_core::workflow::assignment::RubricAdded;
use concord_core::workflow::package::MergeReport;
use concord_core::workflow::pairs::DesignMethod;
use concord_core::workflow::pairs::DesignReport;
use concord_core::workflow::pairs::PairAssignmentReport;
use concord_core::workflow::pairs::PairStatus;
use tauri::Emitter;

/// The folder default outputs are written to (`<study>-exports` beside the study).
#[tauri::command]
pub async fn setup_export_dir(state: tauri::State<'_, AppState>) -> IpcResult<String> {
    state
        .run(move |s| Ok(s.export_dir()?.display().to_string()))
        .await
}

#[tauri::command]
pub async fn setup_add_rubric(
    state: tauri::State<'_, AppState>,
    path: String,
) -> IpcResult<RubricAdded> {
    state
        .run(move |s| {
            Ok(concord_core::app::setup::add_rubric(
                s,
                &typed_path(&path)?,
            )?)
        })
        .await
}

#[tauri::command]
pub async fn setup_import(
    app: tauri::AppHandle,
    state: tauri::State<'_, AppState>,
    request: ImportRequest,
) -> IpcResult<ImportOutcome> {
    let seed = fresh_seed();
    let progress = app.clone();
    let outcome = state
        .run(move |s| {
            Ok(concord_core::app::import::import_request(
                s,
                &request,
                seed,
                &desktop_actor(),
                &mut |p| {
                    let _ = progress.emit(IMPORT_PROGRESS, p);
                },
            )?)
        })
        .await?;
    if outcome.report.is_some() {
        ratings_changed(&app, RatingsChanged::Import);
    }
    Ok(outcome)
}

/// Fill the open (empty) study with the demo study's content, as the empty overview offers.
#[tauri::command]
pub async fn setup_start_from_demo(state: tauri::State<'_, AppState>) -> IpcResult<()> {
    let seed = fresh_seed();
    state
        .run(move |s| Ok(concord_core::app::setup::start_from_demo(s, seed)?))
        .await
}

#[tauri::command]
pub async fn setup_add_expert(
    state: tauri::State<'_, AppState>,
    name: String,
) -> IpcResult<ExpertAdded> {
    let seed = fresh_seed();
    state
        .run(move |s| Ok(concord_core::app::setup::add_expert(s, &name, seed)?))
        .await
}

#[tauri::command]
pub async fn setup_preview_assignment(
    state: tauri::State<'_, AppState>,
    options: AssignmentOptions,
) -> IpcResult<AssignmentSummary> {
    state
        .run(move |s| Ok(concord_core::app::setup::preview_assignment(s, &options)?))
        .await
}

#[tauri::command]
pub async fn setup_assign(
    state: tauri::State<'_, AppState>,
    options: AssignmentOptions,
) -> IpcResult<AssignmentSummary> {
    state
        .run(move |s| Ok(concord_core::app::setup::assign(s, &options)?))
        .await
}

/// The pair design of the study's pairwise rubric with every rater's progress, or `None` while
/// no pairs are drawn.
#[tauri::command]
pub async fn setup_pairs_status(
    state: tauri::State<'_, AppState>,
) -> IpcResult<Option<PairStatus>> {
    state
        .run(move |s| Ok(concord_core::app::pairs::status_if_any(s)?))
        .await
}

/// Draw the pairs of the shipped pairwise form of the study's rubric (`concord pairs design`);
/// all or nothing.
#[tauri::command]
pub async fn setup_pairs_design(
    state: tauri::State<'_, AppState>,
    method: DesignMethod,
    seed: u64,
) -> IpcResult<DesignReport> {
    state
        .run(move |s| {
            Ok(concord_core::app::pairs::design(
                s, None, None, method, seed,
            )?)
        })
        .await
}

/// Give the drawn pairs to the study's experts, exactly `k` per pair (`concord pairs assign`).
#[tauri::command]
pub async fn setup_pairs_assign(
    state: tauri::State<'_, AppState>,
    k: usize,
    seed: u64,
) -> IpcResult<PairAssignmentReport> {
    state
        .run(move |s| Ok(concord_core::app::pairs::assign(s, None, k, seed)?))
        .await
}

#[tauri::command]
pub async fn setup_assignment_table(
    state: tauri::State<'_, AppState>,
) -> IpcResult<AssignmentTable> {
    state
        .run(move |s| Ok(concord_core::app::setup::assignment_table(s)?))
        .await
}

#[tauri::command]
pub async fn setup_export_package(
    state: tauri::State<'_, AppState>,
    expert: String,
    out: Option<String>,
    overwrite: bool,
    package_passphrase: String,
    override_phi: Option<String>,
) -> IpcResult<PackageWritten> {
    let seed = fresh_seed();
    let out = typed_output(out.as_deref())?;
    let passphrase = Passphrase::new(package_passphrase)?;
    state
        .run(move |s| {
            let actor = desktop_actor();
            let gate = PhiGate {
                actor: &actor,
                override_reason: override_phi.as_deref(),
            };
            Ok(concord_core::app::package::export_package(
                s,
                &expert,
                out.as_deref(),
                overwrite,
                seed,
                &passphrase,
                gate,
            )?)
        })
        .await
}

#[tauri::command]
pub async fn setup_merge_package(
    app: tauri::AppHandle,
    state: tauri::State<'_, AppState>,
    path: String,
    package_passphrase: String,
) -> IpcResult<MergeReport> {
    let path = typed_path(&path)?;
    let passphrase = Passphrase::new(package_passphrase)?;
    let report = state
        .run(move |s| {
            Ok(concord_core::app::package::merge_package(
                s,
                &path,
                &passphrase,
            )?)
        })
        .await?;
    if report.changed() {
        ratings_changed(&app, RatingsChanged::Merge);
    }
    Ok(report)
}

#[tauri::command]
pub async fn setup_export_ratings(
    state: tauri::State<'_, AppState>,
    format: RatingsFormat,
    out: Option<String>,
    overwrite: bool,
    excel: bool,
    override_phi: Option<String>,
) -> IpcResult<WrittenFile> {
    let out = typed_output(out.as_deref())?;
    let export = RatingsExport {
        excel,
        ..RatingsExport::new(format)
    };
    state
        .run(move |s| {
            let actor = desktop_actor();
            let gate = PhiGate {
                actor: &actor,
                override_reason: override_phi.as_deref(),
            };
            Ok(concord_core::app::export::export_ratings(
                s,
                &export,
                out.as_deref(),
                overwrite,
                gate,
            )?
            .into())
        })
        .await
}

#[tauri::command]
pub async fn setup_export_sheet(
    state: tauri::State<'_, AppState>,
    expert: String,
    out: Option<String>,
    overwrite: bool,
    override_phi: Option<String>,
) -> IpcResult<WrittenFile> {
    let out = typed_output(out.as_deref())?;
    state
        .run(move |s| {
            let actor = desktop_actor();
            let gate = PhiGate {
                actor: &actor,
                override_reason: override_phi.as_deref(),
            };
            Ok(concord_core::app::export::export_sheet(
                s,
                &expert,
                out.as_deref(),
                overwrite,
                gate,
            )?
            .into())
        })
        .await
}

#[tauri::command]
pub async fn setup_import_sheet(
    app: tauri::AppHandle,
    state: tauri::State<'_, AppState>,
    path: String,
) -> IpcResult<SheetOutcome> {
    let outcome = state
        .run(move |s| {
            let path = typed_path(&path)?;
            Ok(SheetOutcome::of(concord_core::app::sheet::import_sheet(
                s, &path,
            ))?)
        })
        .await?;
    if outcome.report.is_some() {
        ratings_changed(&app, RatingsChanged::Sheet);
    }
    Ok(outcome)
}
