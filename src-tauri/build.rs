//! Build script of the desktop shell: tauri-build reads `tauri.conf.json` at the root and embeds the
//! built UI (`ui/dist`), which must be rebuilt into the binary whenever it changes. It declares the
//! app's commands, so each gets a Tauri permission (`allow-<command>`) and a command no capability
//! grants is refused before it runs: the shell grants the rater commands to the window at start and
//! the lead commands only in lead mode (see `src-tauri/src/session.rs`). It also records the build —
//! the git commit the binary was built from — as `CONCORD_BUILD`, shown by `concord-app --version`
//! and the About dialog.

use std::path::PathBuf;
use std::process::Command;

include!("src/command_names.rs");

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-changed=ui/dist");
    println!("cargo:rerun-if-changed=src-tauri/src/command_names.rs");
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=CONCORD_BUILD={commit}");
    // A new commit changes HEAD or the branch it points to: rebuild the id then.
    if let Some(head) = git(&["rev-parse", "--git-path", "HEAD"]) {
        println!("cargo:rerun-if-changed={head}");
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(reference) = git(&["rev-parse", "--git-path", &branch]) {
            if PathBuf::from(&reference).exists() {
                println!("cargo:rerun-if-changed={reference}");
            }
        }
    }
    let all: Vec<&'static str> = RATER_COMMANDS
        .iter()
        .chain(PICKER_COMMANDS)
        .chain(LEAD_COMMANDS)
        .copied()
        .collect();
    let manifest = tauri_build::AppManifest::new().commands(Box::leak(all.into_boxed_slice()));
    if let Err(e) = tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest)) {
        eprintln!("tauri-build failed: {e:#}");
        std::process::exit(1);
    }
}
