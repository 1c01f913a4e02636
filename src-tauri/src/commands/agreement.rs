//! Commands of the researcher's agreement panel: the report and its table, the report by turn
//! (or another facet), the judge verdicts (from the open study's
//! in-memory reports, updated with each new rating), the judge reliability section, exports beside
//! the study, the methods appendix (behind the PHI gate, into a chosen or the default folder), the
//! precision planner, and the reviewer's questions: corrected prevalence, the label budget, the
//! G- and D-studies, agreement against the Dawid–Skene latent consensus and by category.

use crate::error::{ErrorCode, IpcError, IpcResult};
use crate::state::AppState;
use concord_core::app::adjudication::consensus_agreement;
use concord_core::app::methods::MethodsFiles;
use concord_core::app::paths::{desktop_actor, typed_output};
use concord_core::app::reviewer;
use concord_core::guard::phi::review::PhiGate;
use concord_core::panel::adjudication::{AgreementReference, ConsensusAgreement, LatentAgreement};
use concord_core::panel::agreement::verdict::VerdictOptions;
use concord_core::panel::agreement::verdict::VerdictReport;
use concord_core::panel::agreement::AgreementOptions;
use concord_core::panel::agreement::AgreementReport;
use concord_core::panel::agreement_table::AgreementTable;
use concord_core::panel::agreement_table::MoreTargets;
use concord_core::panel::agreement_table::TableFormat;
use concord_core::panel::agreement_table::TableView;
use concord_core::panel::gstudy::GStudySection;
use concord_core::panel::judge_reliability::{ReliabilityOptions, ReliabilitySection};
use concord_core::panel::label_budget::{LabelBudget, LabelBudgetQuestion};
use concord_core::panel::prevalence::PrevalenceRow;
use concord_core::panel::strata::{Facet, StratifiedReport};

#[tauri::command]
pub async fn agreement_report(
    state: tauri::State<'_, AppState>,
    options: AgreementOptions,
) -> IpcResult<AgreementReport> {
    state.run(move |s| Ok(s.agreement(&options)?.clone())).await
}

/// The report and table against the consensus after adjudication (computed afresh: decisions are
/// few and the panel asks for this view on demand).
#[tauri::command]
pub async fn agreement_consensus(
    state: tauri::State<'_, AppState>,
    options: AgreementOptions,
    view: TableView,
) -> IpcResult<ConsensusAgreement> {
    state
        .run(move |s| Ok(consensus_agreement(s, options, view)?))
        .await
}

/// Each judge's corrected prevalence of every binary criterion of `rubric` (95% intervals).
#[tauri::command]
pub async fn agreement_prevalence(
    state: tauri::State<'_, AppState>,
    rubric: String,
) -> IpcResult<Vec<PrevalenceRow>> {
    state
        .run(move |s| Ok(reviewer::prevalence(s, Some(&rubric), 0.95, None)?))
        .await
}

/// How many expert labels and judge-only answers the planner's question needs.
#[tauri::command]
pub async fn label_budget(
    state: tauri::State<'_, AppState>,
    options: AgreementOptions,
    question: LabelBudgetQuestion,
) -> IpcResult<LabelBudget> {
    state
        .run(move |s| Ok(reviewer::label_budget(s, &options, &question)?))
        .await
}

/// The study's G- and D-studies of `rubric`.
#[tauri::command]
pub async fn agreement_gstudy(
    state: tauri::State<'_, AppState>,
    rubric: String,
) -> IpcResult<GStudySection> {
    state.run(move |s| Ok(reviewer::gstudy(s, &rubric)?)).await
}

/// The report and table against the Dawid–Skene latent labels, with every fit (computed afresh,
/// as the consensus view is).
#[tauri::command]
pub async fn agreement_latent(
    state: tauri::State<'_, AppState>,
    options: AgreementOptions,
    view: TableView,
) -> IpcResult<LatentAgreement> {
    state
        .run(move |s| Ok(reviewer::latent_agreement(s, options, view)?))
        .await
}

/// The report against `reference`, computed on each value of `facet` alone (the panel's tables by
/// category and by turn), from the ratings the open study already holds when the reference is
/// the experts'.
#[tauri::command]
pub async fn agreement_by(
    state: tauri::State<'_, AppState>,
    options: AgreementOptions,
    reference: AgreementReference,
    facet: Facet,
) -> IpcResult<StratifiedReport> {
    state
        .run(move |s| {
            Ok(concord_core::app::agreement::panel_by(
                s, &options, reference, facet,
            )?)
        })
        .await
}

#[tauri::command]
pub async fn judge_verdicts(
    state: tauri::State<'_, AppState>,
    options: AgreementOptions,
    verdict: VerdictOptions,
) -> IpcResult<VerdictReport> {
    state
        .run(move |s| Ok(s.judge_verdicts(&options, &verdict)?))
        .await
}

/// The "Judge reliability" section: consistency across repetitions, repetitions needed,
/// calibration and the bias audit per judge × criterion, with what its plots draw.
#[tauri::command]
pub async fn judge_reliability(
    state: tauri::State<'_, AppState>,
    options: ReliabilityOptions,
) -> IpcResult<ReliabilitySection> {
    state
        .run(move |s| {
            Ok(concord_core::app::judge_runs::reliability_panel(
                s, &options,
            )?)
        })
        .await
}

#[tauri::command]
pub async fn agreement_table(
    state: tauri::State<'_, AppState>,
    options: AgreementOptions,
    view: TableView,
) -> IpcResult<AgreementTable> {
    state
        .run(move |s| Ok(s.agreement_table(&options, view)?))
        .await
}

#[tauri::command]
pub async fn export_agreement(
    state: tauri::State<'_, AppState>,
    options: AgreementOptions,
    view: TableView,
    format: TableFormat,
) -> IpcResult<String> {
    state
        .run(move |s| {
            Ok(
                concord_core::app::agreement::export_agreement(s, &options, view, format)?
                    .display()
                    .to_string(),
            )
        })
        .await
}

#[tauri::command]
pub async fn save_figure(
    state: tauri::State<'_, AppState>,
    name: String,
    bytes: Vec<u8>,
) -> IpcResult<String> {
    state
        .run(move |s| {
            Ok(concord_core::app::agreement::save_export(s, &name, &bytes)?
                .display()
                .to_string())
        })
        .await
}

/// The methods appendix of the panel's options, written into `out` (blank: `methods-<rubric>` in
/// the study's export folder); files already there are replaced only with `overwrite`.
#[tauri::command]
pub async fn export_methods(
    state: tauri::State<'_, AppState>,
    options: AgreementOptions,
    out: Option<String>,
    overwrite: bool,
    override_phi: Option<String>,
) -> IpcResult<MethodsFiles> {
    let out = typed_output(out.as_deref())?;
    state
        .run(move |s| {
            let actor = desktop_actor();
            let gate = PhiGate {
                actor: &actor,
                override_reason: override_phi.as_deref(),
            };
            Ok(concord_core::app::methods::export_methods_appendix(
                s,
                &options,
                out.as_deref(),
                env!("CARGO_PKG_VERSION"),
                overwrite,
                gate,
            )?
            .into())
        })
        .await
}

#[tauri::command]
#[allow(clippy::too_many_arguments)] // each argument is one field of the planner's question
pub async fn plan_more(
    state: tauri::State<'_, AppState>,
    options: AgreementOptions,
    view: TableView,
    criterion: String,
    rater: String,
    reference: String,
    width: f64,
) -> IpcResult<MoreTargets> {
    state
        .run(move |s| {
            let cell = concord_core::app::agreement::PlannedCell {
                criterion: &criterion,
                rater: &rater,
                reference: &reference,
            };
            concord_core::app::agreement::plan_more(s, &options, view, &cell, width)
                .map_err(|e| IpcError::new(ErrorCode::Plan, e.to_string()))
        })
        .await
}

/// The pairwise view of the panel: Bradley–Terry leaderboards with their intervals (experts
/// pooled and each judge), agreement on preferences and each judge's position figures; `None`
/// when the study has no pair design.
#[tauri::command]
pub async fn pairwise_agreement(
    state: tauri::State<'_, AppState>,
) -> IpcResult<Option<concord_core::panel::pairwise::PairwiseReport>> {
    state
        .run(move |s| Ok(concord_core::app::pairs::agreement_if_any(s)?))
        .await
}

// The span section of the panel: the span agreement of a rubric and one reply's spans.

/// The span section of `rubric`: its codes, the span agreement report (intervals from
/// `resamples` bootstrap draws seeded by `seed`), the judges' unlocated quotes and the replies
/// that carry spans.
#[tauri::command]
pub async fn span_agreement_panel(
    state: tauri::State<'_, AppState>,
    rubric: String,
    seed: u64,
    resamples: usize,
) -> IpcResult<concord_core::panel::span_view::SpanPanel> {
    state
        .run(move |s| {
            Ok(concord_core::app::span_panel::span_panel(
                s, &rubric, seed, resamples,
            )?)
        })
        .await
}

/// Reply `response` with every rater's spans, one row per rater, named.
#[tauri::command]
pub async fn span_reply(
    state: tauri::State<'_, AppState>,
    response: i64,
) -> IpcResult<concord_core::panel::span_view::SpanReplyView> {
    state
        .run(move |s| Ok(concord_core::app::span_panel::span_reply(s, response)?))
        .await
}
