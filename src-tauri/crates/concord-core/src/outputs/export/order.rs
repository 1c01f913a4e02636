//! Ratings put in export order in bounded memory: they arrive in table order, are gathered into
//! runs of at most [`RUN_ROWS`] rows, each run sorted by its rank; a study that fits in one run is
//! emitted from memory, a larger one spills its sorted runs to anonymous temporary files (removed
//! when closed) and merges them, so memory stays flat in the number of ratings while the output is
//! the same as one sort of every rating (ranks are unique, so the order is total).

use super::ExportError;
use crate::base::clock::Millis;
use crate::store::SignatureState;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

/// Rows per sorted run: 524,288 rows of 64 bytes (56 before the signature state's byte, which
/// rounds the row up to its 8-byte alignment), about 34 MB.
pub(crate) const RUN_ROWS: usize = 1 << 19;

/// (response, rater, occasion, criterion) positions in export order; unique per rating.
pub(crate) type Rank = (u32, u32, u8, u32);

/// A rating row as read from the rating table, before names are attached, kept small. Ids are
/// recovered from the rank; the rarely present texts live behind one pointer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawRating {
    pub rank: Rank,
    pub value: Option<i64>,
    pub texts: Option<Box<(Option<String>, Option<String>)>>,
    pub created_at: Millis,
    pub updated_at: Millis,
    pub signature: SignatureState,
}

/// Gathers ratings and hands them back in rank order.
pub(crate) struct Ordering {
    run_rows: usize,
    rows: Vec<RawRating>,
    runs: Vec<File>,
}

impl Ordering {
    pub fn new(run_rows: usize) -> Ordering {
        Ordering {
            run_rows: run_rows.max(1),
            rows: Vec::new(),
            runs: Vec::new(),
        }
    }

    pub fn push(&mut self, row: RawRating) -> Result<(), ExportError> {
        self.rows.push(row);
        if self.rows.len() >= self.run_rows {
            self.spill()?;
        }
        Ok(())
    }

    /// Sort the gathered rows and write them to a temporary file as one run.
    fn spill(&mut self) -> Result<(), ExportError> {
        self.rows.sort_unstable_by_key(|r| r.rank);
        let mut out = BufWriter::with_capacity(1 << 16, tempfile::tempfile()?);
        for row in self.rows.drain(..) {
            write_row(&mut out, &row)?;
        }
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        self.runs.push(file);
        Ok(())
    }

    /// Visit every row in rank order; returns how many there were.
    pub fn finish(
        mut self,
        mut f: impl FnMut(RawRating) -> Result<(), ExportError>,
    ) -> Result<usize, ExportError> {
        self.rows.sort_unstable_by_key(|r| r.rank);
        if self.runs.is_empty() {
            let n = self.rows.len();
            for row in self.rows {
                f(row)?;
            }
            return Ok(n);
        }
        // The last run stays in memory; the others are read back a row at a time.
        let mut readers: Vec<BufReader<File>> = self
            .runs
            .into_iter()
            .map(|file| BufReader::with_capacity(1 << 16, file))
            .collect();
        let mut memory = self.rows.into_iter();
        let mut heads: Vec<Option<RawRating>> = Vec::with_capacity(readers.len() + 1);
        let mut heap = BinaryHeap::new();
        for (i, reader) in readers.iter_mut().enumerate() {
            let head = read_row(reader)?;
            if let Some(row) = &head {
                heap.push(Reverse((row.rank, i)));
            }
            heads.push(head);
        }
        let memory_run = readers.len();
        let head = memory.next();
        if let Some(row) = &head {
            heap.push(Reverse((row.rank, memory_run)));
        }
        heads.push(head);
        let mut n = 0;
        while let Some(Reverse((_, i))) = heap.pop() {
            let next = if i == memory_run {
                memory.next()
            } else {
                read_row(&mut readers[i])?
            };
            if let Some(row) = &next {
                heap.push(Reverse((row.rank, i)));
            }
            if let Some(row) = std::mem::replace(&mut heads[i], next) {
                n += 1;
                f(row)?;
            }
        }
        Ok(n)
    }
}

fn write_text(out: &mut impl Write, text: &Option<String>) -> std::io::Result<()> {
    match text {
        None => out.write_all(&[0]),
        Some(t) => {
            out.write_all(&[1])?;
            out.write_all(&(t.len() as u64).to_le_bytes())?;
            out.write_all(t.as_bytes())
        }
    }
}

fn write_row(out: &mut impl Write, row: &RawRating) -> std::io::Result<()> {
    let (response, rater, occasion, criterion) = row.rank;
    out.write_all(&response.to_le_bytes())?;
    out.write_all(&rater.to_le_bytes())?;
    out.write_all(&[occasion])?;
    out.write_all(&criterion.to_le_bytes())?;
    match row.value {
        None => out.write_all(&[0])?,
        Some(v) => {
            out.write_all(&[1])?;
            out.write_all(&v.to_le_bytes())?;
        }
    }
    out.write_all(&row.created_at.to_le_bytes())?;
    out.write_all(&row.updated_at.to_le_bytes())?;
    out.write_all(&[match row.signature {
        SignatureState::Unsigned => 0,
        SignatureState::Signed => 1,
        SignatureState::ChangedAfterSignature => 2,
    }])?;
    match &row.texts {
        None => out.write_all(&[0]),
        Some(texts) => {
            out.write_all(&[1])?;
            write_text(out, &texts.0)?;
            write_text(out, &texts.1)
        }
    }
}

fn bytes<const N: usize>(input: &mut impl Read) -> std::io::Result<[u8; N]> {
    let mut b = [0u8; N];
    input.read_exact(&mut b)?;
    Ok(b)
}

fn read_text(input: &mut impl Read) -> std::io::Result<Option<String>> {
    if bytes::<1>(input)?[0] == 0 {
        return Ok(None);
    }
    let len = u64::from_le_bytes(bytes(input)?);
    let mut text = Vec::new();
    input.take(len).read_to_end(&mut text)?;
    String::from_utf8(text)
        .map(Some)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The next row of a run, `None` at its end.
fn read_row(input: &mut BufReader<File>) -> std::io::Result<Option<RawRating>> {
    if std::io::BufRead::fill_buf(input)?.is_empty() {
        return Ok(None);
    }
    let rank = (
        u32::from_le_bytes(bytes(input)?),
        u32::from_le_bytes(bytes(input)?),
        bytes::<1>(input)?[0],
        u32::from_le_bytes(bytes(input)?),
    );
    let value = match bytes::<1>(input)?[0] {
        0 => None,
        _ => Some(i64::from_le_bytes(bytes(input)?)),
    };
    let created_at = Millis::from_le_bytes(bytes(input)?);
    let updated_at = Millis::from_le_bytes(bytes(input)?);
    let signature = match bytes::<1>(input)?[0] {
        0 => SignatureState::Unsigned,
        1 => SignatureState::Signed,
        _ => SignatureState::ChangedAfterSignature,
    };
    let texts = match bytes::<1>(input)?[0] {
        0 => None,
        _ => Some(Box::new((read_text(input)?, read_text(input)?))),
    };
    Ok(Some(RawRating {
        rank,
        value,
        texts,
        created_at,
        updated_at,
        signature,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rank: Rank, texts: bool) -> RawRating {
        RawRating {
            rank,
            value: (!rank.3.is_multiple_of(3)).then_some(i64::from(rank.3) - 2),
            texts: texts.then(|| Box::new((Some("raw ✓".into()), None))),
            created_at: i64::from(rank.0) * 1000,
            updated_at: -7,
            // Every state crosses the spill and merge.
            signature: match rank.0 % 3 {
                0 => SignatureState::Unsigned,
                1 => SignatureState::Signed,
                _ => SignatureState::ChangedAfterSignature,
            },
        }
    }

    fn ordered(rows: &[RawRating], run_rows: usize) -> Vec<RawRating> {
        let mut o = Ordering::new(run_rows);
        for r in rows {
            o.push(r.clone()).expect("gathered");
        }
        let mut out = Vec::new();
        let n = o
            .finish(|r| {
                out.push(r);
                Ok(())
            })
            .expect("merged");
        assert_eq!(n, rows.len(), "every row comes back exactly once");
        out
    }

    #[test]
    fn spilled_runs_merge_into_the_order_of_one_sort() {
        // 97 rows in a scrambled order, some with texts, merged from runs of 1, 7 and 96 rows and
        // sorted in memory: all four orders must be the same.
        let rows: Vec<RawRating> = (0..97u32)
            .map(|i| {
                row(
                    ((i * 37) % 97, i % 4, (i % 2) as u8, i % 9),
                    i.is_multiple_of(5),
                )
            })
            .collect();
        let memory = ordered(&rows, usize::MAX);
        assert!(
            memory.windows(2).all(|w| w[0].rank < w[1].rank),
            "one in-memory sort yields strictly increasing ranks"
        );
        for run_rows in [1, 7, 96] {
            assert_eq!(
                ordered(&rows, run_rows),
                memory,
                "runs of {run_rows} rows spilled to disk merge into the in-memory order"
            );
        }
    }
}
