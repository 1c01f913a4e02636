//! The native menu bar: File (New study…, Open…, Open recent ▸, Close, Import…, Export…, Restore
//! from backup…, Quit), View (zoom) and Help (Keyboard shortcuts, About). Choosing an item sends
//! its id to the window as a `menu` event; the window carries it out (most items need a dialog or
//! a screen). A recent study's item id is `recent:` followed by its path. The menu is rebuilt
//! whenever the recent-studies list changes.

use crate::error::{ErrorCode, IpcError, IpcResult};
use crate::settings::DesktopSettings;
use tauri::menu::{Menu, MenuBuilder, MenuItemBuilder, SubmenuBuilder};
use tauri::{AppHandle, Emitter, Manager, Runtime};

/// Prefix of the ids of File → Open recent items.
pub const RECENT_PREFIX: &str = "recent:";

fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<Menu<R>> {
    let item = |id: &str, text: &str, keys: Option<&str>| {
        let b = MenuItemBuilder::with_id(id, text);
        match keys {
            Some(k) => b.accelerator(k).build(app),
            None => b.build(app),
        }
    };
    let recent = app
        .state::<DesktopSettings>()
        .recent()
        .map(|r| r.existing())
        .unwrap_or_default();
    let mut open_recent = SubmenuBuilder::new(app, "Open recent");
    if recent.is_empty() {
        open_recent = open_recent.item(
            &MenuItemBuilder::with_id("recent-none", "No recent studies")
                .enabled(false)
                .build(app)?,
        );
    }
    for r in &recent {
        let label = format!("{} — {}", r.title, r.path);
        open_recent = open_recent.item(&item(&format!("{RECENT_PREFIX}{}", r.path), &label, None)?);
    }
    let file = SubmenuBuilder::new(app, "File")
        .item(&item("new-study", "New study…", Some("CmdOrCtrl+N"))?)
        .item(&item("open", "Open…", Some("CmdOrCtrl+O"))?)
        .item(&open_recent.build()?)
        .item(&item("close", "Close", Some("CmdOrCtrl+W"))?)
        .separator()
        .item(&item("import", "Import…", None)?)
        .item(&item("export", "Export…", None)?)
        .separator()
        .item(&item("restore-backup", "Restore from backup…", None)?)
        .item(&item("backup-folder", "Backup folder…", None)?)
        .separator()
        .item(&item("quit", "Quit", Some("CmdOrCtrl+Q"))?)
        .build()?;
    let view = SubmenuBuilder::new(app, "View")
        .item(&item("zoom-in", "Zoom in (Ctrl +)", None)?)
        .item(&item("zoom-out", "Zoom out (Ctrl −)", None)?)
        .item(&item("zoom-reset", "Actual size (Ctrl 0)", None)?)
        .build()?;
    let help = SubmenuBuilder::new(app, "Help")
        .item(&item("shortcuts", "Keyboard shortcuts", Some("F1"))?)
        .item(&item("about", "About Concord", None)?)
        .build()?;
    MenuBuilder::new(app).items(&[&file, &view, &help]).build()
}

/// Build the menu (again) and put it on the app.
pub fn install<R: Runtime>(app: &AppHandle<R>) -> IpcResult<()> {
    let menu = build(app).map_err(|e| {
        IpcError::new(
            ErrorCode::Internal,
            format!("could not build the menu: {e}"),
        )
    })?;
    app.set_menu(menu)
        .map_err(|e| IpcError::new(ErrorCode::Internal, format!("could not show the menu: {e}")))?;
    Ok(())
}

/// Forward a chosen item to the window. Quit goes to the window too, which saves what is still
/// being saved and then quits; should the window not answer, the app quits after 5 s anyway.
pub fn forward<R: Runtime>(app: &AppHandle<R>, id: &str) {
    let _ = app.emit(crate::events::MENU, id);
    if id == "quit" {
        let app = app.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(5));
            app.exit(0);
        });
    }
}

/// Remember a study among the recent ones and refresh File → Open recent.
pub fn remember<R: Runtime>(app: &AppHandle<R>, path: &std::path::Path, title: &str) {
    if let Ok(mut recent) = app.state::<DesktopSettings>().recent() {
        if let Err(e) = recent.remember(
            path,
            title,
            concord_core::base::clock::Clock::now_ms(&concord_core::base::clock::SystemClock),
        ) {
            eprintln!("Concord: {e}");
        }
    }
    let _ = install(app);
}
