//! The native menu bar: File (New study…, Open…, Open recent ▸, Close, Import…, Export…, Restore
//! from backup…, Quit), View (zoom) and Help (Keyboard shortcuts, About). Choosing an item sends
//! its id to the window as a `menu` event; the window carries it out (most items need a dialog or
//! a screen). A recent study's item id is `recent:` followed by its path. The menu is rebuilt
//! whenever the recent-studies list changes, and in the window's interface language whenever the
//! window switches it (`MenuText`: every label in English and in Chinese; the language is kept in
//! the settings, so the next launch starts in it).

use crate::error::{ErrorCode, IpcError, IpcResult};
use crate::settings::{DesktopSettings, MenuLanguage};
use tauri::menu::{Menu, MenuBuilder, MenuItemBuilder, SubmenuBuilder};
use tauri::{AppHandle, Emitter, Manager, Runtime};

/// Prefix of the ids of File → Open recent items.
pub const RECENT_PREFIX: &str = "recent:";

/// Every label of the menu, in one language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MenuText {
    pub file: &'static str,
    pub new_study: &'static str,
    pub open: &'static str,
    pub open_recent: &'static str,
    pub no_recent: &'static str,
    pub close: &'static str,
    pub import: &'static str,
    pub export: &'static str,
    pub restore_backup: &'static str,
    pub backup_folder: &'static str,
    pub quit: &'static str,
    pub view: &'static str,
    pub zoom_in: &'static str,
    pub zoom_out: &'static str,
    pub zoom_reset: &'static str,
    pub help: &'static str,
    pub shortcuts: &'static str,
    pub about: &'static str,
}

const ENGLISH: MenuText = MenuText {
    file: "File",
    new_study: "New study…",
    open: "Open…",
    open_recent: "Open recent",
    no_recent: "No recent studies",
    close: "Close",
    import: "Import…",
    export: "Export…",
    restore_backup: "Restore from backup…",
    backup_folder: "Backup folder…",
    quit: "Quit",
    view: "View",
    zoom_in: "Zoom in (Ctrl +)",
    zoom_out: "Zoom out (Ctrl −)",
    zoom_reset: "Actual size (Ctrl 0)",
    help: "Help",
    shortcuts: "Keyboard shortcuts",
    about: "About Concord",
};

const CHINESE: MenuText = MenuText {
    file: "文件",
    new_study: "新建研究…",
    open: "打开…",
    open_recent: "最近打开",
    no_recent: "没有最近的研究",
    close: "关闭",
    import: "导入…",
    export: "导出…",
    restore_backup: "从备份恢复…",
    backup_folder: "备份文件夹…",
    quit: "退出",
    view: "视图",
    zoom_in: "放大（Ctrl +）",
    zoom_out: "缩小（Ctrl −）",
    zoom_reset: "实际大小（Ctrl 0）",
    help: "帮助",
    shortcuts: "键盘快捷键",
    about: "关于 Concord",
};

impl MenuText {
    /// The labels in `language`.
    pub fn of(language: MenuLanguage) -> &'static MenuText {
        match language {
            MenuLanguage::En => &ENGLISH,
            MenuLanguage::Zh => &CHINESE,
        }
    }

    /// Every label, in menu order.
    pub fn all(&self) -> [&'static str; 18] {
        [
            self.file,
            self.new_study,
            self.open,
            self.open_recent,
            self.no_recent,
            self.close,
            self.import,
            self.export,
            self.restore_backup,
            self.backup_folder,
            self.quit,
            self.view,
            self.zoom_in,
            self.zoom_out,
            self.zoom_reset,
            self.help,
            self.shortcuts,
            self.about,
        ]
    }
}

fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<Menu<R>> {
    let text = MenuText::of(app.state::<DesktopSettings>().language());
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
    let mut open_recent = SubmenuBuilder::new(app, text.open_recent);
    if recent.is_empty() {
        open_recent = open_recent.item(
            &MenuItemBuilder::with_id("recent-none", text.no_recent)
                .enabled(false)
                .build(app)?,
        );
    }
    for r in &recent {
        let label = format!("{} — {}", r.title, r.path);
        open_recent = open_recent.item(&item(&format!("{RECENT_PREFIX}{}", r.path), &label, None)?);
    }
    let file = SubmenuBuilder::new(app, text.file)
        .item(&item("new-study", text.new_study, Some("CmdOrCtrl+N"))?)
        .item(&item("open", text.open, Some("CmdOrCtrl+O"))?)
        .item(&open_recent.build()?)
        .item(&item("close", text.close, Some("CmdOrCtrl+W"))?)
        .separator()
        .item(&item("import", text.import, None)?)
        .item(&item("export", text.export, None)?)
        .separator()
        .item(&item("restore-backup", text.restore_backup, None)?)
        .item(&item("backup-folder", text.backup_folder, None)?)
        .separator()
        .item(&item("quit", text.quit, Some("CmdOrCtrl+Q"))?)
        .build()?;
    let view = SubmenuBuilder::new(app, text.view)
        .item(&item("zoom-in", text.zoom_in, None)?)
        .item(&item("zoom-out", text.zoom_out, None)?)
        .item(&item("zoom-reset", text.zoom_reset, None)?)
        .build()?;
    let help = SubmenuBuilder::new(app, text.help)
        .item(&item("shortcuts", text.shortcuts, Some("F1"))?)
        .item(&item("about", text.about, None)?)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn chinese(label: &str) -> bool {
        label
            .chars()
            .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
    }

    #[test]
    fn every_label_of_the_chinese_menu_is_chinese() {
        let en = MenuText::of(MenuLanguage::En).all();
        for (zh, en) in MenuText::of(MenuLanguage::Zh).all().into_iter().zip(en) {
            assert!(
                chinese(zh),
                "the Chinese menu says {en:?} in Chinese, not {zh:?}"
            );
            assert_ne!(zh, en, "{en:?} is translated in the Chinese menu");
        }
    }

    #[test]
    fn the_english_menu_is_english_and_the_default() {
        assert_eq!(
            MenuLanguage::default(),
            MenuLanguage::En,
            "a first launch, before the window says its language, builds the English menu"
        );
        for label in MenuText::of(MenuLanguage::En).all() {
            assert!(!chinese(label), "{label:?} is an English label");
        }
    }

    #[test]
    fn the_window_names_the_language_as_its_catalogues_do() {
        assert_eq!(
            serde_json::from_str::<MenuLanguage>("\"zh\"").ok(),
            Some(MenuLanguage::Zh),
            "the window sends its language as `zh`"
        );
        assert_eq!(
            serde_json::from_str::<MenuLanguage>("\"en\"").ok(),
            Some(MenuLanguage::En),
            "and English as `en`"
        );
    }
}
