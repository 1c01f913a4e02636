//! The Concord desktop shell: a Tauri 2 window over `concord-core`. It owns the app state (the open
//! study), the thin `#[tauri::command]`s (one core call each: no SQL, no statistics here), the IPC
//! types and the single `{code, message}` error shape, and the TypeScript bindings generated from
//! the Rust types for the UI. Every call passes the session guard ([`session::permits`]) before its
//! command runs, on top of the Tauri capabilities the shell grants by session.

pub mod bindings;
pub mod commands;
pub mod error;
pub mod events;
pub mod judge_runs;
pub mod session;
pub mod state;

use state::AppState;
use tauri::Manager;

/// Command-line flag that opens a specific study file (`concord-app --study FILE`).
pub const STUDY_FLAG: &str = "--study";

/// Start the desktop app.
pub fn run() {
    let args: Vec<String> = std::env::args().collect();
    let state = AppState::open(state::study_arg(&args));
    let handler: Box<dyn Fn(tauri::ipc::Invoke) -> bool + Send + Sync> =
        Box::new(tauri::generate_handler![
            commands::study::study_overview,
            commands::study::study_status,
            commands::session::rater_session,
            commands::session::start_rater_session,
            commands::session::leave_rater_session,
            commands::security::study_security,
            commands::security::unlock_study,
            commands::security::lock_study,
            commands::security::encrypt_open_study,
            commands::security::change_passphrase,
            commands::security::set_idle_lock,
            commands::agreement::agreement_report,
            commands::agreement::agreement_table,
            commands::agreement::agreement_consensus,
            commands::agreement::judge_verdicts,
            commands::agreement::export_agreement,
            commands::agreement::save_figure,
            commands::agreement::plan_more,
            commands::rating::rater_profiles,
            commands::rating::create_rater_profile,
            commands::rating::open_queue,
            commands::rating::rating_item,
            commands::rating::rate,
            commands::rating::set_rationale,
            commands::rating::flag_item,
            commands::rating::leave_item,
            commands::signoff::signoff_state,
            commands::signoff::set_signing_passphrase,
            commands::signoff::sign_off,
            commands::setup::setup_export_dir,
            commands::setup::setup_add_rubric,
            commands::setup::setup_import,
            commands::setup::setup_add_expert,
            commands::setup::setup_preview_assignment,
            commands::setup::setup_assign,
            commands::setup::setup_assignment_table,
            commands::setup::setup_export_package,
            commands::setup::setup_merge_package,
            commands::setup::setup_export_ratings,
            commands::setup::setup_export_sheet,
            commands::setup::setup_import_sheet,
            commands::phi::phi_review,
            commands::phi::phi_decide,
            commands::judge::judge_default_prompt,
            commands::judge::judge_preview,
            commands::judge::judge_start,
            commands::judge::judge_cancel,
            commands::judge::judge_activity,
            commands::judge::judge_runs,
            commands::judge::judge_failures,
            commands::panel::adjudication_review,
            commands::panel::adjudication_resolve,
            commands::panel::rater_quality,
            commands::panel::calibration_status,
            commands::panel::calibration_item,
            commands::panel::calibration_answer,
        ]);
    tauri::Builder::default()
        .manage(state)
        .manage(judge_runs::JudgeRuns::default())
        .setup(|app| {
            session::grant_rater(app.handle())?;
            let current = app.state::<AppState>().session();
            session::grant_lead_if_lead(app.handle(), current);
            Ok(())
        })
        .invoke_handler(move |invoke| {
            let current = invoke.message.webview().state::<AppState>().session();
            if let Err(refused) = session::permits(current, invoke.message.command()) {
                invoke.resolver.reject(refused);
                return true;
            }
            handler(invoke)
        })
        .run(tauri::generate_context!())
        .unwrap_or_else(|e| {
            eprintln!("Concord could not start its window: {e}");
            std::process::exit(1);
        });
}
