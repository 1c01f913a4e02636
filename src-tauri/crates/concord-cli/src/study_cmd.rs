//! Study-level commands: `concord demo` (create the demo study), `concord overview` (what the
//! desktop app's first screen shows, as text or JSON), `concord study encrypt|decrypt|rekey`, and
//! the shared way every command opens the study named by `--db`, `CONCORD_STUDY` or the default
//! location — an encrypted one with the passphrase in the environment variable named by
//! `--passphrase-env` (never an argument, so it stays out of shell histories and process lists).

use concord_core::app::backup;
use concord_core::app::open::{self, Opened, WhenMissing};
use concord_core::app::open_study::OpenStudy;
use concord_core::app::study_security;
use concord_core::base::clock::fresh_seed;
use concord_core::base::clock::SystemClock;
use concord_core::base::study_location;
use concord_core::base::study_location::StudyPath;
use concord_core::base::study_location::STUDY_ENV;
use concord_core::base::text::visible;
use concord_core::intake::demo::DemoError;
use concord_core::store::{Passphrase, StoreError, StudyOverview};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The environment variable that holds a study's passphrase unless `--passphrase-env` names another.
pub const PASSPHRASE_ENV: &str = "CONCORD_PASSPHRASE";
/// The environment variable that holds `rekey`'s new passphrase unless `--new-passphrase-env`
/// names another.
pub const NEW_PASSPHRASE_ENV: &str = "CONCORD_NEW_PASSPHRASE";

/// The variable named by `--passphrase-env`, set once by `main` before any study is opened.
static PASSPHRASE_VAR: OnceLock<String> = OnceLock::new();

/// Record the variable named by `--passphrase-env` (called once, at the start).
pub fn set_passphrase_env(var: &str) {
    let _ = PASSPHRASE_VAR.set(var.to_string());
}

fn passphrase_var() -> &'static str {
    PASSPHRASE_VAR
        .get()
        .map(String::as_str)
        .unwrap_or(PASSPHRASE_ENV)
}

/// The passphrase for the study, if its variable is set (a plain study needs none).
pub fn study_passphrase() -> Result<Option<Passphrase>, StudyCmdError> {
    match std::env::var(passphrase_var()) {
        Ok(v) if !v.is_empty() => Ok(Some(Passphrase::new(v)?)),
        _ => Ok(None),
    }
}

/// The passphrase in the variable `var`, which must be set.
pub fn required_passphrase(var: &str) -> Result<Passphrase, StudyCmdError> {
    Passphrase::from_env(var).map_err(|_| StudyCmdError::NoPassphrase {
        var: var.to_string(),
    })
}

/// Name the variable to set when an encrypted study was opened without a passphrase.
fn explain(e: StoreError) -> StudyCmdError {
    match e {
        StoreError::PassphraseNeeded { path } => StudyCmdError::PassphraseNeeded {
            path,
            var: passphrase_var().to_string(),
        },
        other => StudyCmdError::Store(other),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StudyCmdError {
    #[error("no study given and no default app-data folder on this system; pass --db FILE")]
    NoDefaultLocation,
    #[error("{path}: this study is encrypted: set its passphrase in the environment variable {var} (or name another variable with --passphrase-env). The file was not changed")]
    PassphraseNeeded { path: String, var: String },
    #[error("no passphrase: the environment variable {var} is not set (or empty)")]
    NoPassphrase { var: String },
    #[error("--lock needs the lead's passphrase: name the environment variable that holds it with --lead-passphrase-env VAR")]
    NoLeadPassphrase,
    #[error(transparent)]
    Session(#[from] concord_core::workflow::rater_session::SessionError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Demo(DemoError),
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The study path from `--db`, else `CONCORD_STUDY`, else the default in the app-data folder.
pub fn study_path(db: Option<&Path>) -> Result<StudyPath, StudyCmdError> {
    let env = std::env::var(STUDY_ENV).ok();
    study_location::resolve(db, env.as_deref()).ok_or(StudyCmdError::NoDefaultLocation)
}

/// Open the study a command works on (see [`open::open`]): the default study is created as
/// the demo on first use, exactly as the desktop app does; an explicit path that does not exist
/// follows `when_missing`.
pub fn open_as(db: Option<&Path>, when_missing: WhenMissing) -> Result<Opened, StudyCmdError> {
    let path = study_path(db)?;
    let key = study_passphrase()?;
    Ok(open::open(
        &path,
        when_missing,
        Arc::new(SystemClock),
        fresh_seed(),
        key.as_ref(),
    )?)
}

impl From<DemoError> for StudyCmdError {
    fn from(e: DemoError) -> Self {
        match e {
            DemoError::Store(s) => explain(s),
            other => StudyCmdError::Demo(other),
        }
    }
}

/// Open an existing study for a command that reads it; a missing explicit file is refused and
/// nothing is created.
pub fn open_study(db: Option<&Path>) -> Result<OpenStudy, StudyCmdError> {
    Ok(open_as(db, WhenMissing::Refuse)?.study)
}

/// Open an existing study for a command that only reads it (see [`open::open_to_read`]): the
/// file is opened read-only, so the command cannot change a byte of it.
pub fn open_study_to_read(db: Option<&Path>) -> Result<OpenStudy, StudyCmdError> {
    let path = study_path(db)?;
    let key = study_passphrase()?;
    Ok(open::open_to_read(
        &path,
        Arc::new(SystemClock),
        fresh_seed(),
        key.as_ref(),
    )?)
}

pub fn demo(db: Option<&Path>, json: bool) -> Result<String, StudyCmdError> {
    let Opened { study, created } = open_as(db, WhenMissing::CreateDemo)?;
    let overview = concord_core::app::overview::overview(&study)?;
    if json {
        let doc = serde_json::json!({ "created": created, "overview": overview });
        return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
    }
    let p = study_path(db)?;
    let p = p.path();
    let head = if created {
        format!("Created the demo study at {}\n", p.display())
    } else {
        format!(
            "{} is already a Concord study; left unchanged\n",
            p.display()
        )
    };
    Ok(head + &render_overview(&overview))
}

pub fn overview(db: Option<&Path>, json: bool) -> Result<String, StudyCmdError> {
    let study = open_study_to_read(db)?;
    let overview = concord_core::app::overview::overview(&study)?;
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&overview)?));
    }
    Ok(render_overview(&overview))
}

fn render_overview(o: &StudyOverview) -> String {
    let mut out = format!(
        "{}\n  file: {}\n  conversations: {}  responses: {}  ratings: {}\n",
        visible(&o.title),
        visible(&o.path),
        o.conversations,
        o.responses,
        o.ratings
    );
    if o.responses_without_text > 0 {
        out.push_str(&format!(
            "  answers without text: {} of {} (the study holds their ratings, not the answers; \
             `concord import mentalbench FILE` with the MentalBench-100k file fills them)\n",
            o.responses_without_text, o.responses
        ));
    }
    out.push_str("  rubrics:\n");
    for r in &o.rubrics {
        out.push_str(&format!(
            "    {} — {} criteria, {} conversations\n",
            visible(concord_core::app::overview::localized(&r.name, "en")),
            r.criteria.len(),
            r.conversations
        ));
    }
    out.push_str("  responses per source:\n");
    for s in &o.sources {
        out.push_str(&format!(
            "    {:<28} {:>7}\n",
            visible(&s.name),
            s.responses
        ));
    }
    out.push_str("  raters:\n");
    for r in &o.raters {
        out.push_str(&format!(
            "    {:<32} {:<6} {:>7} ratings\n",
            visible(&r.name),
            r.kind.as_str(),
            r.ratings
        ));
    }
    out
}

/// `concord profiles --lock|--unlock`: restrict the rating screen to the study's existing experts,
/// behind the lead passphrase read from the environment variable `lead_passphrase_env` names (it
/// opens lead mode from the window's rater sessions); `--unlock` drops the lock and the passphrase.
pub fn profiles(
    db: Option<&Path>,
    lock: Option<bool>,
    lead_passphrase_env: Option<&str>,
    json: bool,
) -> Result<String, StudyCmdError> {
    let mut study = match lock {
        Some(_) => open_study(db)?,
        None => open_study_to_read(db)?,
    };
    match lock {
        Some(true) => {
            let lead = lead_passphrase_env
                .ok_or(StudyCmdError::NoLeadPassphrase)
                .and_then(|var| match std::env::var(var) {
                    Ok(v) if !v.is_empty() => Ok(v),
                    _ => Err(StudyCmdError::NoPassphrase {
                        var: var.to_string(),
                    }),
                })?;
            concord_core::app::session::lock_profiles(&mut study, &lead, fresh_seed())?;
        }
        Some(false) => concord_core::app::session::unlock_profiles(&mut study)?,
        None => {}
    }
    let profiles = concord_core::app::rating::profiles(&study).map_err(|e| match e {
        concord_core::workflow::queue::QueueError::Store(s) => StudyCmdError::Store(s),
        other => StudyCmdError::Store(StoreError::Invalid(other.to_string())),
    })?;
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&profiles)?));
    }
    let mut out = format!(
        "rater profiles ({}):\n",
        if profiles.locked {
            "restricted to these"
        } else {
            "new profiles allowed"
        }
    );
    for p in &profiles.profiles {
        out.push_str(&format!(
            "  {:<32} {:>6} / {:<6} items done\n",
            visible(&p.name),
            p.completed,
            p.items
        ));
    }
    Ok(out)
}

/// `concord study encrypt|decrypt|rekey`.
#[derive(clap::Args, Debug)]
pub struct StudyArgs {
    #[command(subcommand)]
    pub command: StudyCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum StudyCommand {
    /// Encrypt the study with the passphrase in the --passphrase-env variable (at least 8
    /// characters, and hard to guess: a zxcvbn score of 3 of 4). The study is rewritten into a
    /// new file that replaces the old one.
    Encrypt,
    /// Decrypt the study (its passphrase in the --passphrase-env variable) into a plain file.
    Decrypt,
    /// Change the passphrase: the current one in the --passphrase-env variable, the new one in
    /// the --new-passphrase-env variable.
    Rekey {
        #[arg(long, value_name = "VAR", default_value = NEW_PASSPHRASE_ENV)]
        new_passphrase_env: String,
    },
}

pub fn study(args: &StudyArgs, db: Option<&Path>, json: bool) -> Result<String, StudyCmdError> {
    let path = study_path(db)?;
    let p = path.path();
    let current = || required_passphrase(passphrase_var());
    // The desktop app's backups of this study follow its passphrase: none stays plain.
    let secure = |old: Option<&Passphrase>, new: &Passphrase| -> Result<_, StudyCmdError> {
        match backup::desktop_root() {
            Some(root) => Ok(backup::secure_backups(&root, p, old, new)?),
            None => Ok(backup::BackupsSecured::default()),
        }
    };
    let (action, encrypted, backups) = match &args.command {
        StudyCommand::Encrypt => {
            let new = current()?;
            study_security::encrypt(p, &new)?;
            ("encrypted", true, secure(None, &new)?)
        }
        StudyCommand::Decrypt => {
            study_security::decrypt(p, &current()?)?;
            ("decrypted", false, backup::BackupsSecured::default())
        }
        StudyCommand::Rekey { new_passphrase_env } => {
            let new = required_passphrase(new_passphrase_env)?;
            let old = current()?;
            study_security::rekey(p, &old, &new)?;
            ("re-keyed", true, secure(Some(&old), &new)?)
        }
    };
    if json {
        let doc = serde_json::json!({
            "study": p.display().to_string(),
            "action": action,
            "encrypted": encrypted,
            "backups": backups,
        });
        return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
    }
    let mut out = format!("{} {action}\n", p.display());
    if let Some(note) = backups.note() {
        out.push_str(&format!("backups: {note}\n"));
    }
    Ok(out)
}
