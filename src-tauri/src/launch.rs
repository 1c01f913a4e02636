//! The desktop app's command line: `concord-app [FILE]`, `concord-app --study FILE` (the older
//! spelling, kept), `concord-app --version`. FILE is a study or a rater package — what the desktop
//! passes on a double-click, and what a second launch forwards to the window already running. Also
//! what follows once the window exists ([`settle`]): the launch study among the recent ones and as
//! the base of its first backup.

use std::path::PathBuf;

/// Command-line flag that opens a specific study file (`concord-app --study FILE`).
pub const STUDY_FLAG: &str = "--study";

/// What the command line asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    /// The study or package to open.
    pub file: Option<PathBuf>,
    /// `--version` / `-V`: print the version and build, start no window.
    pub version: bool,
}

/// Read the arguments after the program name. Unknown flags (a desktop or a test driver may pass
/// its own) are ignored; the last file named wins.
pub fn parse(args: &[String]) -> Launch {
    let mut launch = Launch::default();
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        if a == STUDY_FLAG {
            if let Some(v) = it.next() {
                launch.file = Some(PathBuf::from(v));
            }
        } else if let Some(v) = a.strip_prefix("--study=") {
            launch.file = Some(PathBuf::from(v));
        } else if a == "--version" || a == "-V" {
            launch.version = true;
        } else if let Some(uri) = a.strip_prefix("file://") {
            launch.file = Some(PathBuf::from(percent_decode(uri)));
        } else if !a.starts_with('-') && !a.is_empty() {
            launch.file = Some(PathBuf::from(a));
        }
    }
    launch
}

/// Undo the %XX escapes of a `file://` URI some desktops pass instead of a path.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The version and build the binary reports (`--version`, the About dialog).
pub fn version_line() -> String {
    format!(
        "Concord {} (build {})",
        env!("CARGO_PKG_VERSION"),
        env!("CONCORD_BUILD")
    )
}

/// Once the window exists: remember the study opened at launch among the recent ones (which also
/// builds the native menu), and take it as the base of its first backup.
pub fn settle(app: &tauri::AppHandle) {
    use tauri::Manager;
    let state = app.state::<crate::state::AppState>();
    let opened = state.with_study(|s| {
        Ok((
            s.path().map(|p| p.to_path_buf()),
            concord_core::app::overview::title(s)?,
        ))
    });
    if let Ok((Some(path), title)) = opened {
        crate::menu::remember(app, &path, &title);
        let _ = state.with_study(|s| {
            crate::backups::rebase(app, s);
            Ok(())
        });
    } else {
        let _ = crate::menu::install(app);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        std::iter::once("concord-app")
            .chain(list.iter().copied())
            .map(String::from)
            .collect()
    }

    #[test]
    fn files_come_positional_flagged_or_as_uris() {
        assert_eq!(
            parse(&args(&["/tmp/a.concord"])).file,
            Some(PathBuf::from("/tmp/a.concord")),
            "a double-click passes the file as the only argument"
        );
        assert_eq!(
            parse(&args(&["--study", "b.concord"])).file,
            Some(PathBuf::from("b.concord")),
            "the older --study FILE still works"
        );
        assert_eq!(
            parse(&args(&["--study=c.concord"])).file,
            Some(PathBuf::from("c.concord")),
            "--study=FILE is the same"
        );
        assert_eq!(
            parse(&args(&["file:///tmp/my%20study.concord"])).file,
            Some(PathBuf::from("/tmp/my study.concord")),
            "a file URI is decoded to its path"
        );
        let v = parse(&args(&["--version"]));
        assert!(v.version && v.file.is_none(), "--version names no file");
        assert_eq!(
            parse(&args(&["--some-driver-flag"])),
            Launch::default(),
            "unknown flags are ignored"
        );
    }
}
