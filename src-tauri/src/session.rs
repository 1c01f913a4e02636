//! The shell's two guards on rater sessions. Tauri's capabilities: the window starts with the
//! rater and picker commands only (capability `rater-window`); the lead commands are granted
//! (capability `lead-window`) when the shell first enters lead mode — never while a locked study's
//! recorded rater session or a package is open. Tauri cannot withdraw a capability at run time, so
//! once granted it stays for the process; the second guard, [`permits`], runs before every command
//! and refuses by the session the shell holds (not by anything the page sends), with code
//! `rater_session`. The rating commands take the expert from the session too.

use crate::error::{IpcError, IpcResult};
use concord_core::workflow::rater_session::Session;
use concord_core::workflow::rater_session::SessionError;
use tauri::ipc::CapabilityBuilder;
use tauri::Manager;

include!("command_names.rs");

/// The window every capability applies to.
pub const WINDOW: &str = "main";

/// Whether `session` may call `command` (unknown commands are refused).
pub fn permits(session: Session, command: &str) -> IpcResult<()> {
    let refused = || IpcError::from(SessionError::RaterOnly);
    if RATER_COMMANDS.contains(&command) {
        return Ok(());
    }
    let picker = PICKER_COMMANDS.contains(&command);
    let lead = LEAD_COMMANDS.contains(&command);
    match session {
        Session::Lead if picker || lead => Ok(()),
        Session::Picking if picker => Ok(()),
        _ => Err(refused()),
    }
}

fn capability(identifier: &str, commands: &[&[&str]]) -> CapabilityBuilder {
    commands.iter().flat_map(|c| c.iter()).fold(
        CapabilityBuilder::new(identifier).window(WINDOW),
        |cap, command| cap.permission(format!("allow-{}", command.replace('_', "-"))),
    )
}

/// The capability every session has: rating, the expert's sign-off and calibration, unlocking,
/// and the picker.
pub fn grant_rater(app: &tauri::AppHandle) -> tauri::Result<()> {
    app.add_capability(capability(
        "rater-window",
        &[RATER_COMMANDS, PICKER_COMMANDS],
    ))
}

/// Grant the lead commands once the shell is in lead mode.
pub fn grant_lead_if_lead(app: &tauri::AppHandle, session: Session) {
    let state = app.state::<crate::state::AppState>();
    if session != Session::Lead || state.lead_granted() {
        return;
    }
    match app.add_capability(capability("lead-window", &[LEAD_COMMANDS])) {
        Ok(()) => state.mark_lead_granted(),
        Err(e) => eprintln!("Concord could not grant the lead commands: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use concord_core::workflow::rater_session::SessionSource;

    #[test]
    fn a_rater_session_may_call_only_the_rating_commands() {
        let rater = Session::Rater {
            rater_id: 1,
            source: SessionSource::Picked,
        };
        for c in LEAD_COMMANDS.iter().chain(PICKER_COMMANDS) {
            let e = permits(rater, c).expect_err("a rater session must not reach lead commands");
            assert_eq!(
                e.code, "rater_session",
                "the refusal has its own code ({c})"
            );
        }
        for c in RATER_COMMANDS {
            assert!(
                permits(rater, c).is_ok(),
                "rating stays open to the session ({c})"
            );
        }
        assert!(
            permits(Session::Picking, "agreement_report").is_err(),
            "the picker of a locked study is not lead mode"
        );
        assert!(
            permits(Session::Picking, "rater_profiles").is_ok(),
            "the picker lists the study's experts"
        );
        assert!(
            permits(Session::Lead, "no_such_command").is_err(),
            "a command in no list is refused"
        );
    }

    #[test]
    fn every_command_is_in_exactly_one_list() {
        let all: Vec<&str> = RATER_COMMANDS
            .iter()
            .chain(PICKER_COMMANDS)
            .chain(LEAD_COMMANDS)
            .copied()
            .collect();
        let mut unique = all.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(
            unique.len(),
            all.len(),
            "a command listed twice would be granted by two roles"
        );
        let lib = include_str!("lib.rs");
        let handled = lib.matches("commands::").count();
        assert_eq!(
            handled,
            all.len(),
            "every command the shell handles must be declared to Tauri and guarded"
        );
        for name in &all {
            assert!(
                lib.contains(&format!("::{name},")),
                "{name} is listed but not handled"
            );
        }
    }
}
