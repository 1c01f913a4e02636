//! Study-level commands: `concord demo` (create the demo study) and `concord overview` (what the
//! desktop app's first screen shows, as text or JSON), and the shared way every command opens the
//! study named by `--db`, `CONCORD_STUDY` or the default location.

use concord_core::clock::{fresh_seed, SystemClock};
use concord_core::demo::DemoError;
use concord_core::open_study::OpenStudy;
use concord_core::store::{StoreError, StudyOverview};
use concord_core::study_location::{self, StudyPath, STUDY_ENV};
use concord_core::usecase::{self, Opened, WhenMissing};
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum StudyCmdError {
    #[error("no study given and no default app-data folder on this system; pass --db FILE")]
    NoDefaultLocation,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Demo(#[from] DemoError),
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The study path from `--db`, else `CONCORD_STUDY`, else the default in the app-data folder.
pub fn study_path(db: Option<&Path>) -> Result<StudyPath, StudyCmdError> {
    let env = std::env::var(STUDY_ENV).ok();
    study_location::resolve(db, env.as_deref()).ok_or(StudyCmdError::NoDefaultLocation)
}

/// Open the study a command works on (see [`usecase::open`]): the default study is created as
/// the demo on first use, exactly as the desktop app does; an explicit path that does not exist
/// follows `when_missing`.
pub fn open_as(db: Option<&Path>, when_missing: WhenMissing) -> Result<Opened, StudyCmdError> {
    let path = study_path(db)?;
    Ok(usecase::open(
        &path,
        when_missing,
        Arc::new(SystemClock),
        fresh_seed(),
    )?)
}

/// Open an existing study for a command that reads it; a missing explicit file is refused and
/// nothing is created.
pub fn open_study(db: Option<&Path>) -> Result<OpenStudy, StudyCmdError> {
    Ok(open_as(db, WhenMissing::Refuse)?.study)
}

pub fn demo(db: Option<&Path>, json: bool) -> Result<String, StudyCmdError> {
    let Opened { study, created } = open_as(db, WhenMissing::CreateDemo)?;
    let overview = study.store().overview()?;
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
    let study = open_study(db)?;
    let overview = study.store().overview()?;
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&overview)?));
    }
    Ok(render_overview(&overview))
}

fn render_overview(o: &StudyOverview) -> String {
    let mut out = format!(
        "{}\n  file: {}\n  conversations: {}  responses: {}  ratings: {}\n",
        o.title, o.path, o.conversations, o.responses, o.ratings
    );
    out.push_str("  rubrics:\n");
    for r in &o.rubrics {
        out.push_str(&format!(
            "    {} — {} criteria, {} conversations\n",
            concord_core::rubric::localized(&r.name, "en"),
            r.criteria.len(),
            r.conversations
        ));
    }
    out.push_str("  responses per source:\n");
    for s in &o.sources {
        out.push_str(&format!("    {:<28} {:>7}\n", s.name, s.responses));
    }
    out.push_str("  raters:\n");
    for r in &o.raters {
        out.push_str(&format!(
            "    {:<32} {:<6} {:>7} ratings\n",
            r.name,
            r.kind.as_str(),
            r.ratings
        ));
    }
    out
}

/// `concord profiles --lock|--unlock`: restrict the rating screen to the study's existing experts.
pub fn profiles(
    db: Option<&Path>,
    lock: Option<bool>,
    json: bool,
) -> Result<String, StudyCmdError> {
    let mut study = open_study(db)?;
    if let Some(locked) = lock {
        concord_core::queue::set_profiles_locked(study.store_mut(), locked).map_err(
            |e| match e {
                concord_core::queue::QueueError::Store(s) => StudyCmdError::Store(s),
                other => StudyCmdError::Store(StoreError::Invalid(other.to_string())),
            },
        )?;
    }
    let profiles = concord_core::queue::profiles(study.store()).map_err(|e| match e {
        concord_core::queue::QueueError::Store(s) => StudyCmdError::Store(s),
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
            p.name, p.completed, p.items
        ));
    }
    Ok(out)
}
