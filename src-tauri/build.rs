//! Build script of the desktop shell: tauri-build reads `tauri.conf.json` at the root and embeds the
//! built UI (`ui/dist`), which must be rebuilt into the binary whenever it changes.

fn main() {
    println!("cargo:rerun-if-changed=ui/dist");
    tauri_build::build();
}
