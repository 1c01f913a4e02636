//! Peak memory and time of reading hostile and oversized inputs: the small workbook bombs and
//! 50 MB inputs of every reader, each read in a fresh child process so its peak resident memory
//! (`VmHWM`) is its own. The goal: any input up to 50 MB imports or is refused within 300 MB.
//!
//! `cargo bench -p concord-core --bench hostile_files` (add a case name to run only that case).

use concord_core::files::bounds::ReadLimits;
use concord_core::files::table::read_table_within;
use concord_core::files::table::FileFormat;
use std::io::Write;
use std::time::Instant;

const MB: usize = 1 << 20;

fn zip_parts(parts: &[(&str, Vec<u8>)], method: zip::CompressionMethod) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(method)
        .large_file(true);
    for (name, data) in parts {
        zip.start_file(*name, options).expect("part");
        zip.write_all(data).expect("write");
    }
    zip.finish().expect("zip").into_inner()
}

fn workbook(sheet: Vec<u8>, strings: Option<Vec<u8>>, method: zip::CompressionMethod) -> Vec<u8> {
    let mut parts = vec![
        ("[Content_Types].xml", br#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>"#.to_vec()),
        ("_rels/.rels", br#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.to_vec()),
        ("xl/workbook.xml", br#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#.to_vec()),
        ("xl/_rels/workbook.xml.rels", br#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>"#.to_vec()),
        ("xl/worksheets/sheet1.xml", sheet),
    ];
    if let Some(s) = strings {
        parts.push(("xl/sharedStrings.xml", s));
    }
    zip_parts(&parts, method)
}

const HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>"#;
const TAIL: &str = "</sheetData></worksheet>";
const HEADER_ROW: &str = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>item</t></is></c><c r="B1" t="inlineStr"><is><t>rater</t></is></c></row>"#;

/// A sheet of `rows` rows × 10 numeric cells.
fn big_sheet(target_bytes: usize) -> Vec<u8> {
    let mut out = String::with_capacity(target_bytes + 1024);
    out.push_str(HEAD);
    out.push_str(HEADER_ROW);
    let mut r = 2usize;
    while out.len() < target_bytes {
        out.push_str(&format!("<row r=\"{r}\">"));
        for c in 0..10u8 {
            out.push_str(&format!(
                "<c r=\"{}{r}\"><v>{}</v></c>",
                (b'A' + c) as char,
                r % 5
            ));
        }
        out.push_str("</row>");
        r += 1;
    }
    out.push_str(TAIL);
    out.into_bytes()
}

/// One case: its name, the file name it is read as, and how to build its bytes.
type Case = (&'static str, &'static str, fn() -> Vec<u8>);

/// Every case.
fn cases() -> Vec<Case> {
    vec![
        ("bomb-shared-strings", "s.xlsx", || {
            workbook(
                format!("{HEAD}{HEADER_ROW}{TAIL}").into_bytes(),
                Some(br#"<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="4000000000" uniqueCount="4000000000"><si><t>a</t></si></sst>"#.to_vec()),
                zip::CompressionMethod::Deflated,
            )
        }),
        ("bomb-far-cell", "f.xlsx", || {
            workbook(
                format!(r#"{HEAD}{HEADER_ROW}<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>{TAIL}"#).into_bytes(),
                None,
                zip::CompressionMethod::Deflated,
            )
        }),
        ("bomb-dimension", "d.xlsx", || {
            workbook(
                format!(r#"<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:XFD1048576"/><sheetData>{HEADER_ROW}{TAIL}"#).into_bytes(),
                None,
                zip::CompressionMethod::Deflated,
            )
        }),
        ("deflate-bomb-1GB", "z.xlsx", || {
            // 1 GiB of whitespace inside the sheet, about a megabyte on disk, written in pieces.
            let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .large_file(true);
            let small = workbook(Vec::new(), None, zip::CompressionMethod::Deflated);
            let mut archive = zip::ZipArchive::new(std::io::Cursor::new(small)).expect("parts");
            for i in 0..archive.len() {
                let file = archive.by_index(i).expect("part");
                let name = file.name().expect("name").to_string();
                if name.ends_with("sheet1.xml") {
                    continue;
                }
                zip.raw_copy_file(file).expect("copy part");
            }
            zip.start_file("xl/worksheets/sheet1.xml", options)
                .expect("sheet");
            zip.write_all(format!("{HEAD}{HEADER_ROW}").as_bytes())
                .expect("head");
            let spaces = vec![b' '; MB];
            for _ in 0..1024 {
                zip.write_all(&spaces).expect("spaces");
            }
            zip.write_all(TAIL.as_bytes()).expect("tail");
            zip.finish().expect("zip").into_inner()
        }),
        ("xlsx-50MB-stored-cells", "big.xlsx", || {
            workbook(big_sheet(50 * MB), None, zip::CompressionMethod::Stored)
        }),
        ("csv-50MB-tiny-cells", "big.csv", || {
            let mut out = b"a,b,c,d,e,f,g,h,i,j\n".to_vec();
            while out.len() < 50 * MB {
                out.extend_from_slice(b"1,2,3,4,5,6,7,8,9,0\n");
            }
            out
        }),
        ("csv-50MB-one-cell", "cell.csv", || {
            let mut out = b"a\n\"".to_vec();
            out.resize(50 * MB, b'x');
            out.extend_from_slice(b"\"\n");
            out
        }),
        ("csv-50MB-text", "text.csv", || {
            // Long answers, as the MentalBench layout holds: 50 MB imports.
            let mut out = b"context,response\n".to_vec();
            let answer =
                "I hear how heavy this has been for you, and it makes sense to feel worn out. "
                    .repeat(12);
            while out.len() < 50 * MB {
                out.extend_from_slice(format!("\"I cannot sleep\",\"{answer}\"\n").as_bytes());
            }
            out
        }),
        ("jsonl-50MB-keys", "k.jsonl", || {
            let mut out = Vec::new();
            let mut n = 0usize;
            while out.len() < 50 * MB {
                out.extend_from_slice(format!("{{\"key{n}\": 1, \"other{n}\": 2}}\n").as_bytes());
                n += 1;
            }
            out
        }),
    ]
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Read one case's file in this process and print one result line.
fn child(name: &str, file: &str, path: &std::path::Path) {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let format = FileFormat::from_name(file).expect("format");
    let limits = ReadLimits::default();
    let started = Instant::now();
    let bytes = concord_core::files::table::read_file(path, &limits)
        .map_err(|i| format!("{}: {}", i[0].code, i[0].message));
    let outcome = bytes.and_then(|b| {
        read_table_within(file, &b, format, None, &limits)
            .map(|t| format!("read {} rows", t.rows.len()))
            .map_err(|i| format!("{}: {}", i[0].code, i[0].message))
    });
    let elapsed = started.elapsed();
    let text = match outcome {
        Ok(t) => t,
        Err(e) => format!("refused ({})", e.chars().take(100).collect::<String>()),
    };
    println!(
        "| {name} | {:.1} MB | {:.0} ms | {} MB | {} |",
        size as f64 / MB as f64,
        elapsed.as_secs_f64() * 1000.0,
        peak_rss_kb() / 1024,
        text.replace('|', "/")
    );
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if let Some(pos) = argv.iter().position(|a| a == "--case") {
        child(
            &argv[pos + 1],
            &argv[pos + 2],
            std::path::Path::new(&argv[pos + 3]),
        );
        return;
    }
    let wanted: Vec<&String> = argv
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    println!("| case | file size | time | peak RSS | outcome |");
    println!("|---|---|---|---|---|");
    let me = std::env::current_exe().expect("own path");
    let dir = std::env::temp_dir().join(format!("concord-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp folder");
    for (name, file, build) in cases() {
        if !wanted.is_empty() && !wanted.iter().any(|a| a.as_str() == name) {
            continue;
        }
        let path = dir.join(file);
        std::fs::write(&path, build()).expect("write the case");
        let out = std::process::Command::new(&me)
            .args(["--case", name, file, &path.display().to_string()])
            .output()
            .expect("run the case");
        let _ = std::fs::remove_file(&path);
        if out.status.success() {
            print!("{}", String::from_utf8_lossy(&out.stdout));
        } else {
            println!("| {name} | — | — | — | the process died: {} |", out.status);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
