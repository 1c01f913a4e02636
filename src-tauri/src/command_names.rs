// The names of the shell's commands by who may call them; read by the build script (which declares
// one Tauri permission per command) and by `session` (which decides, per call, whether the window's
// session may make it). Every command of `generate_handler!` is in exactly one list.

/// Callable in every session: the rating screen (the expert comes from the session), the expert's
/// own sign-off and calibration, the unlock screen and the session itself, and the window's own
/// commands: opening, creating and closing a study (each study opened decides its session afresh,
/// as relaunching on that file would), file dialogs, Show in folder, zoom, About, and the expert's
/// Return ratings.
pub const RATER_COMMANDS: &[&str] = &[
    "open_study",
    "new_study",
    "close_study",
    "recent_studies",
    "classify_file",
    "package_identity",
    "default_return_path",
    "return_ratings",
    "pick_file",
    "pick_folder",
    "pick_save",
    "reveal",
    "app_info",
    "set_zoom",
    "study_status",
    "study_security",
    "unlock_study",
    "lock_study",
    "rater_session",
    "leave_rater_session",
    "open_queue",
    "rating_item",
    "rate",
    "set_rationale",
    "flag_item",
    "leave_item",
    "signoff_state",
    "set_signing_passphrase",
    "sign_off",
    "calibration_status",
    "calibration_item",
    "calibration_answer",
];

/// Callable until an expert is picked: the rater picker.
pub const PICKER_COMMANDS: &[&str] = &[
    "rater_profiles",
    "create_rater_profile",
    "start_rater_session",
];

/// Callable in lead mode only.
pub const LEAD_COMMANDS: &[&str] = &[
    "study_overview",
    "encrypt_open_study",
    "change_passphrase",
    "set_idle_lock",
    "agreement_report",
    "agreement_table",
    "agreement_consensus",
    "judge_verdicts",
    "export_agreement",
    "save_figure",
    "plan_more",
    "setup_export_dir",
    "setup_add_rubric",
    "setup_import",
    "setup_add_expert",
    "setup_preview_assignment",
    "setup_assign",
    "setup_assignment_table",
    "setup_export_package",
    "setup_merge_package",
    "setup_export_ratings",
    "setup_export_sheet",
    "setup_import_sheet",
    "judge_default_prompt",
    "judge_preview",
    "judge_destination",
    "judge_start",
    "judge_cancel",
    "judge_activity",
    "judge_runs",
    "judge_failures",
    "adjudication_review",
    "adjudication_resolve",
    "rater_quality",
    "phi_review",
    "phi_decide",
    "list_backups",
    "backup_now",
    "restore_backup",
    "set_backup_folder",
];
