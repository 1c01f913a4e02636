//! Commands of the unlock screen and the study's security actions: whether the open study is
//! encrypted or locked and its idle lock; unlock (with "remember in the system keyring" as an
//! explicit choice), lock (the study and its passphrase leave memory), "Encrypt this study…",
//! "Change passphrase…" and the idle-lock minutes. Passphrases arrive as arguments of these
//! calls only and are never returned, logged or stored in the study.

use crate::backups;
use crate::error::{IpcError, IpcResult};
use crate::settings::DesktopSettings;
use crate::state::{locked_error, AppState, Opened};
use concord_core::app::backup;
use concord_core::app::open_study::OpenStudy;
use concord_core::app::study_security;
use concord_core::app::study_security::Conversion;
use concord_core::app::study_security::DEFAULT_IDLE_LOCK_MINUTES;
use concord_core::base::clock::SystemClock;
use concord_core::base::error_code::ErrorCode;
use concord_core::store::Passphrase;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use tauri::{AppHandle, Manager};

/// What the window needs to know to guard the open study.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct StudySecurity {
    pub encrypted: bool,
    /// The study waits behind the unlock screen.
    pub locked: bool,
    pub idle_lock_minutes: u32,
    /// Seconds without input before the window locks (the minutes, unless overridden).
    pub idle_lock_seconds: u32,
}

/// The outcome of an unlock or a conversion: a note when the keyring would not remember, and
/// after a conversion what became of the backups taken before it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct SecurityOutcome {
    pub note: Option<String>,
}

fn study_file(opened: &Opened) -> IpcResult<PathBuf> {
    opened
        .file()
        .ok_or_else(|| IpcError::new(ErrorCode::NoStudy, "no study file is open"))
}

fn passphrase(text: String) -> IpcResult<Passphrase> {
    Ok(Passphrase::new(text)?)
}

#[tauri::command]
pub async fn study_security(state: tauri::State<'_, AppState>) -> IpcResult<StudySecurity> {
    let idle_override = state.idle_override;
    state
        .run_opened(move |opened| {
            let (encrypted, locked, minutes) = match opened.study.as_ref() {
                Ok(s) => (
                    s.is_encrypted(),
                    false,
                    study_security::idle_lock_minutes_of(s)?,
                ),
                Err(e) if e.code == ErrorCode::PassphraseNeeded => {
                    (true, true, DEFAULT_IDLE_LOCK_MINUTES)
                }
                Err(e) => return Err(e.clone()),
            };
            Ok(StudySecurity {
                encrypted,
                locked,
                idle_lock_minutes: minutes,
                idle_lock_seconds: idle_override.unwrap_or(minutes * 60),
            })
        })
        .await
}

#[tauri::command]
pub async fn unlock_study(
    app: AppHandle,
    state: tauri::State<'_, AppState>,
    passphrase_text: String,
    remember: bool,
) -> IpcResult<SecurityOutcome> {
    state
        .run_with(move |state| {
            let path = study_file(&*state.opened()?)?;
            let key = passphrase(passphrase_text)?;
            // After repeated wrong passphrases the core refuses the attempt with "try again in
            // N s", which the unlock screen shows.
            let (store, note) = study_security::unlock(
                &path,
                Arc::new(SystemClock),
                &key,
                remember,
                &mut *state.unlock_attempts()?,
            )?;
            let study = OpenStudy::new(store);
            backups::rebase(&app, &study);
            // A study opened locked went into the recent list under its file name: now its
            // title is known.
            if let Ok(title) = concord_core::app::overview::title(&study) {
                crate::menu::remember(&app, &path, &title);
            }
            state.set_study(Ok(study))?;
            crate::session::grant_lead_if_lead(&app, state.session());
            Ok(SecurityOutcome { note })
        })
        .await
}

/// Lock an encrypted study (a plain one has no passphrase to unlock it with: false); like closing
/// it, locking first backs it up when it changed.
#[tauri::command]
pub async fn lock_study(app: AppHandle, state: tauri::State<'_, AppState>) -> IpcResult<bool> {
    state
        .run_opened(move |opened| {
            let path = study_file(opened)?;
            let encrypted = matches!(opened.study.as_ref(), Ok(s) if s.is_encrypted());
            if encrypted {
                if let Ok(s) = opened.study.as_ref() {
                    backups::on_close(&app, s);
                }
                opened.study = Err(locked_error(&path));
            }
            Ok(encrypted)
        })
        .await
}

/// Close the open study, convert it, and open it again (as before when the conversion failed).
fn convert(
    app: &AppHandle,
    opened: &mut Opened,
    conversion: Conversion,
    remember: bool,
) -> IpcResult<SecurityOutcome> {
    let path = study_file(opened)?;
    let before = match opened.study.as_ref() {
        Ok(s) => s.passphrase().cloned(),
        Err(e) => return Err(e.clone()),
    };
    // Dropping the open study closes its connection, so the file can be replaced.
    opened.study = Err(IpcError::new(
        ErrorCode::Converting,
        "the study is being converted",
    ));
    let (reopened, outcome) = study_security::convert_and_reopen(
        &path,
        Arc::new(SystemClock),
        before.as_ref(),
        &conversion,
        remember,
    );
    let converted = outcome.is_ok();
    opened.study = reopened.map(OpenStudy::new).map_err(IpcError::from);
    if let Ok(s) = opened.study.as_ref() {
        backups::rebase(app, s);
    }
    let mut note = outcome?;
    if converted {
        // The backups taken before follow the study's new passphrase: none stays plain.
        let (old, new) = match &conversion {
            Conversion::Encrypt { new } => (None, new),
            Conversion::Rekey { current, new } => (Some(current), new),
        };
        let root = app.state::<DesktopSettings>().backup_folder();
        let secured = backup::secure_backups(&root, &path, old, new)?;
        if let Some(told) = secured.note() {
            note = Some(match note {
                Some(n) => format!("{n}; {told}"),
                None => told,
            });
        }
    }
    Ok(SecurityOutcome { note })
}

/// "Encrypt this study…": encrypt the open plain study with a new passphrase.
#[tauri::command]
pub async fn encrypt_open_study(
    app: AppHandle,
    state: tauri::State<'_, AppState>,
    new_passphrase: String,
    remember: bool,
) -> IpcResult<SecurityOutcome> {
    let new = passphrase(new_passphrase)?;
    state
        .run_opened(move |opened| convert(&app, opened, Conversion::Encrypt { new }, remember))
        .await
}

/// "Change passphrase…": re-key the open encrypted study.
#[tauri::command]
pub async fn change_passphrase(
    app: AppHandle,
    state: tauri::State<'_, AppState>,
    current_passphrase: String,
    new_passphrase: String,
    remember: bool,
) -> IpcResult<SecurityOutcome> {
    let current = passphrase(current_passphrase)?;
    let new = passphrase(new_passphrase)?;
    state
        .run_opened(move |opened| {
            convert(&app, opened, Conversion::Rekey { current, new }, remember)
        })
        .await
}

#[tauri::command]
pub async fn set_idle_lock(state: tauri::State<'_, AppState>, minutes: u32) -> IpcResult<u32> {
    state
        .run(move |s| Ok(study_security::set_idle_lock_minutes_of(s, minutes)?))
        .await
}
