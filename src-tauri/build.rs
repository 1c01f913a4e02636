//! Build script of the desktop shell: tauri-build reads `tauri.conf.json` at the root and embeds the
//! built UI (`ui/dist`), which must be rebuilt into the binary whenever it changes. It declares the
//! app's commands, so each gets a Tauri permission (`allow-<command>`) and a command no capability
//! grants is refused before it runs: the shell grants the rater commands to the window at start and
//! the lead commands only in lead mode (see `src-tauri/src/session.rs`).

include!("src/command_names.rs");

fn main() {
    println!("cargo:rerun-if-changed=ui/dist");
    println!("cargo:rerun-if-changed=src-tauri/src/command_names.rs");
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
