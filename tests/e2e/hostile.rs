//! Journey of a hostile file in the real window: the lead imports a 2 KB workbook whose one far-away
//! cell (`XFD1048576`) would make the spreadsheet reader ask for half a terabyte. The import is
//! refused with a message naming the file, the limit and how to raise it; the window stays alive
//! and usable — the next import of a valid file succeeds and the overview opens.

use super::setup::{click, fill, wait_text, write_bench_csv};
use super::App;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A minimal workbook: a header, one row, and one cell at Excel's last row and column.
fn write_far_cell_bomb(dir: &Path) -> PathBuf {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let parts = [
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#,
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
        ),
        (
            "xl/workbook.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#,
        ),
        (
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#,
        ),
        (
            "xl/worksheets/sheet1.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>context</t></is></c><c r="B1" t="inlineStr"><is><t>response</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>hello</t></is></c><c r="B2" t="inlineStr"><is><t>hi</t></is></c></row><row r="1048576"><c r="XFD1048576"><v>1</v></c></row></sheetData></worksheet>"#,
        ),
    ];
    for (name, text) in parts {
        zip.start_file(name, options).expect("zip part");
        zip.write_all(text.as_bytes()).expect("zip write");
    }
    let bytes = zip.finish().expect("zip finished").into_inner();
    let path = dir.join("bench-bomb.xlsx");
    std::fs::write(&path, bytes).expect("the bomb is written");
    path
}

#[test]
fn a_workbook_bomb_is_refused_and_the_window_stays_usable() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("hostile.concord");
    let bomb = write_far_cell_bomb(tmp.path());
    let csv = write_bench_csv(tmp.path());
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    click(&app, "[data-testid=nav-setup]");
    click(&app, "[data-testid=step-import]");
    click(&app, "[data-testid=format-mentalbench]");
    fill(
        &app,
        "[data-testid=import-path]",
        &bomb.display().to_string(),
    );
    click(&app, "[data-testid=import-run]");
    let refusal = wait_text(&app, "[data-testid=import-rejected]", "the refusal", |t| {
        t.contains("CONCORD_MAX_CELLS")
    });
    assert!(
        refusal.contains("bench-bomb.xlsx") && refusal.contains("1048576"),
        "the refusal names the file and the far-away cell: {refusal:?}"
    );
    let refused_shot = app.screenshot("hostile-workbook-refused");
    let rss = app.app_rss_kb();
    assert!(
        rss.is_some(),
        "the app process is still alive after the bomb"
    );

    // The same window imports a valid file next.
    fill(
        &app,
        "[data-testid=import-path]",
        &csv.display().to_string(),
    );
    click(&app, "[data-testid=import-run]");
    let counts = wait_text(&app, "[data-testid=import-counts]", "import counts", |t| {
        t.contains("conversations added")
    });
    assert!(
        counts.starts_with("6 conversations added"),
        "after the refusal, a valid file imports: {counts:?}"
    );
    click(&app, "[data-testid=nav-overview]");
    app.wait_for("[data-testid=overview]", Duration::from_secs(10));
    let shot = app.screenshot("hostile-workbook");
    println!(
        "hostile workbook refused in the window; app RSS {} KB; screenshots {} and {}",
        rss.unwrap_or_default(),
        refused_shot.display(),
        shot.display()
    );
}
