//! The Concord desktop shell: a Tauri 2 window over `concord-core`. It owns the app state (the open
//! study, which can be switched at runtime), the thin `#[tauri::command]`s (one core call each: no
//! SQL, no statistics here), the IPC types and the single `{code, message}` error shape, the native
//! menu, automatic backups, and the TypeScript bindings generated from the Rust types for the UI.
//! One Concord runs per user: a second launch hands its file to the running window and exits.
//! Every call passes the session guard ([`session::permits`]) before its command runs, on top of
//! the Tauri capabilities the shell grants by session.

pub mod backups;
pub mod bindings;
pub mod commands;
pub mod error;
pub mod events;
pub mod judge_runs;
pub mod launch;
pub mod menu;
pub mod session;
pub mod settings;
pub mod state;

use state::AppState;
use tauri::{Emitter, Manager};

pub use launch::STUDY_FLAG;

/// Every command of the window, as Tauri dispatches them (the session's allow-list is checked
/// before each; see `command_names.rs`).
fn commands_handler() -> Box<dyn Fn(tauri::ipc::Invoke) -> bool + Send + Sync> {
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
        commands::desktop::open_study,
        commands::desktop::new_study,
        commands::desktop::close_study,
        commands::desktop::recent_studies,
        commands::desktop::classify_file,
        commands::desktop::package_identity,
        commands::desktop::default_return_path,
        commands::desktop::return_ratings,
        commands::desktop::pick_file,
        commands::desktop::pick_folder,
        commands::desktop::pick_save,
        commands::desktop::reveal,
        commands::desktop::app_info,
        commands::desktop::list_backups,
        commands::desktop::backup_now,
        commands::desktop::restore_backup,
        commands::desktop::set_backup_folder,
        commands::desktop::set_zoom,
        commands::desktop::set_menu_language,
        commands::desktop::quit_app,
        commands::agreement::agreement_report,
        commands::agreement::pairwise_agreement,
        commands::agreement::agreement_table,
        commands::agreement::agreement_consensus,
        commands::agreement::agreement_prevalence,
        commands::agreement::label_budget,
        commands::agreement::agreement_gstudy,
        commands::agreement::agreement_latent,
        commands::agreement::agreement_by,
        commands::agreement::judge_verdicts,
        commands::agreement::judge_reliability,
        commands::agreement::export_agreement,
        commands::agreement::save_figure,
        commands::agreement::export_methods,
        commands::agreement::plan_more,
        // The panel's span section.
        commands::agreement::span_agreement_panel,
        commands::agreement::span_reply,
        commands::rating::rater_profiles,
        commands::rating::create_rater_profile,
        commands::rating::open_queue,
        commands::rating::rating_item,
        commands::rating::left_items,
        commands::rating::rate,
        commands::rating::set_rationale,
        commands::rating::flag_item,
        commands::rating::leave_item,
        commands::rating::pair_queue,
        commands::rating::pair_item,
        commands::rating::rate_pair,
        commands::rating::set_pair_rationale,
        commands::rating::flag_pair,
        commands::rating::leave_pair,
        // Evidence spans marked on the rating screen.
        commands::rating::item_spans,
        commands::rating::mark_span,
        commands::rating::change_span,
        commands::rating::remove_span,
        commands::signoff::signoff_state,
        commands::signoff::set_signing_passphrase,
        commands::signoff::sign_off,
        commands::setup::setup_export_dir,
        commands::setup::setup_add_rubric,
        commands::setup::setup_import,
        commands::setup::setup_add_expert,
        commands::setup::setup_start_from_demo,
        commands::setup::setup_preview_assignment,
        commands::setup::setup_assign,
        commands::setup::setup_assignment_table,
        commands::setup::setup_pairs_status,
        commands::setup::setup_pairs_design,
        commands::setup::setup_pairs_assign,
        commands::setup::setup_export_package,
        commands::setup::setup_merge_package,
        commands::setup::setup_export_ratings,
        commands::setup::setup_export_sheet,
        commands::setup::setup_import_sheet,
        commands::phi::phi_review,
        commands::phi::phi_decide,
        commands::judge::judge_default_prompt,
        commands::judge::judge_preview,
        commands::judge::judge_destination,
        commands::judge::judge_start,
        commands::judge::judge_cancel,
        commands::judge::judge_activity,
        commands::judge::judge_runs,
        commands::judge::judge_failures,
        commands::panel::adjudication_review,
        commands::panel::adjudication_resolve,
        commands::panel::rater_quality,
        commands::web::web_access,
        commands::web::web_invite,
        commands::web::web_revoke,
        commands::panel::calibration_status,
        commands::panel::calibration_item,
        commands::panel::calibration_answer,
    ])
}

/// Start the desktop app (or, for `--version`, print the version and build).
pub fn run() {
    let args: Vec<String> = std::env::args().collect();
    let launch = launch::parse(&args);
    if launch.version {
        println!("{}", launch::version_line());
        return;
    }
    // Lead keys live in the OS keyring (or a private file), or in the folder CONCORD_KEY_DIR names.
    concord_core::app::open_study::keep_lead_keys_on_this_machine();
    let context = tauri::generate_context!();
    let last = settings::last_study(&context.config().identifier);
    let state = AppState::open(launch.file, last);
    let handler = commands_handler();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, argv, cwd| {
            // A second launch (a double-click while Concord runs): its file goes to this window.
            if let Some(file) = launch::parse(&argv).file {
                let file = std::path::Path::new(&cwd).join(file);
                let _ = app.emit(events::OPEN_FILE, file.display().to_string());
            }
            if let Some(w) = app.get_webview_window("main") {
                let _ = w.unminimize();
                let _ = w.set_focus();
            }
        }))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_opener::init())
        .manage(state)
        .manage(judge_runs::JudgeRuns::default())
        .manage(backups::BackupWatch::default())
        .setup(|app| {
            session::grant_rater(app.handle())?;
            let current = app.state::<AppState>().session();
            session::grant_lead_if_lead(app.handle(), current);
            let handle = app.handle().clone();
            app.manage(settings::DesktopSettings::load(&handle));
            launch::settle(&handle);
            backups::start(handle);
            Ok(())
        })
        .on_menu_event(|app, event| menu::forward(app, event.id().as_ref()))
        .invoke_handler(move |invoke| {
            let current = invoke.message.webview().state::<AppState>().session();
            if let Err(refused) = session::permits(current, invoke.message.command()) {
                invoke.resolver.reject(refused);
                return true;
            }
            handler(invoke)
        })
        .build(context)
        .unwrap_or_else(|e| {
            eprintln!("Concord could not start its window: {e}");
            std::process::exit(1);
        });
    app.run(|handle, event| {
        if let tauri::RunEvent::Exit = event {
            // Quitting closes the study: back it up when it changed, then close it whole (the
            // process exits without running destructors, which would leave `-wal`/`-shm`).
            let state = handle.state::<AppState>();
            if let Ok(guard) = state.opened() {
                if let Ok(study) = guard.study.as_ref() {
                    backups::on_close(handle, study);
                }
            }
            state.close_for_exit();
        }
    });
}
