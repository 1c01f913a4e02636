//! Hostile names and paths, one test per attack: a cell that never ends, control and direction
//! characters in names that reach a terminal or a workbook, experts whose names make the same
//! file name, a FIFO, device or folder given as a study, and read-only jobs on a study that is
//! not in WAL mode. Each test performs the attack and checks that the defence holds.

use concord_core::files::bounds::ReadLimits;
use concord_core::files::csv_rows::CsvRows;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// An endless stream (`/dev/zero` or a pipe that never closes): one header line, then an
/// unquoted cell of `x` that never ends. It counts every byte it hands out.
struct Endless {
    header: &'static [u8],
    served: Arc<AtomicU64>,
}

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = if self.header.is_empty() {
            buf.fill(b'x');
            buf.len()
        } else {
            let n = self.header.len().min(buf.len());
            buf[..n].copy_from_slice(&self.header[..n]);
            self.header = &self.header[n..];
            n
        };
        self.served.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[test]
fn an_endless_csv_cell_stops_at_the_limit() {
    let limit = 256 * 1024;
    let limits = ReadLimits {
        cell_bytes: limit,
        ..ReadLimits::default()
    };
    for (what, header) in [
        ("unquoted", b"a,b\n1,".as_slice()),
        ("quoted", b"a,b\n1,\"".as_slice()),
    ] {
        let served = Arc::new(AtomicU64::new(0));
        let source = Endless {
            header,
            served: served.clone(),
        };
        let mut rows = CsvRows::new("endless.csv", source, &limits).expect("the header is fine");
        let issues = rows
            .next_row()
            .expect("the endless row is a result, not the end")
            .err()
            .expect("an endless cell must be refused");
        let read = served.load(Ordering::Relaxed);
        // The parser reads in 64 KiB chunks: past the limit, at most the chunk that crossed it.
        let bound = limit + 64 * 1024 + 1024;
        assert!(
            read <= bound,
            "the {what} cell is read only to the limit plus one buffer: {read} bytes read, bound {bound}"
        );
        let issue = &issues[0];
        assert_eq!(
            issue.code, "cell_too_large",
            "the {what} cell is refused by the cell limit: {issue}"
        );
        assert_eq!(
            (
                issue.at.file.as_str(),
                issue.at.row,
                issue.at.column.as_deref()
            ),
            ("endless.csv", Some(2), Some("b")),
            "the refusal names file, row and column of the {what} cell: {issue}"
        );
        assert!(
            issue.message.contains("reading stopped"),
            "the message says reading stopped at the limit: {issue}"
        );
        if what == "quoted" {
            assert!(
                issue.message.contains("quoted cell opening on line 2"),
                "a quoted cell says where its quote opened: {issue}"
            );
        }
        assert!(rows.next_row().is_none(), "the refusal ends the reading");
    }
}
