//! The Concord desktop app's entry point; everything lives in the `concord_app` library.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    concord_app::run()
}
