//! Ratings put in export order in bounded memory: they arrive in table order, are gathered into
//! runs of at most [`RUN_ROWS`] rows, each run sorted by its rank; a study that fits in one run is
//! emitted from memory, a larger one spills its sorted runs to anonymous temporary files (removed
//! when closed) and merges them, so memory stays flat in the number of ratings while the output is
//! the same as one sort of every rating (ranks are unique, so the order is total).
//!
//! A spilled run holds rating values and rationales. Runs are written in chunks of
//! [`CHUNK_BYTES`]; for an encrypted study each chunk is sealed (ChaCha20-Poly1305 under a key
//! drawn from the operating system for each export and held only in memory, a nonce of run and
//! chunk number), so its ratings leave no readable trace in the temporary folder, and a chunk
//! altered, moved or dropped on disk fails its tag or the row count rather than being read as
//! ratings. A plain study's runs are plain chunks (its file is plain already; sealing would only
//! slow its exports). The key is the one randomness not passed in: a seeded key could be
//! recomputed, and it changes no output.

use super::ExportError;
use crate::base::clock::Millis;
use crate::store::SignatureState;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufRead, Read, Seek, SeekFrom, Write};

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

/// Plain bytes per sealed chunk of a spilled run (each chunk carries a 4-byte length and a
/// 16-byte tag on disk).
pub(crate) const CHUNK_BYTES: usize = 1 << 16;

/// Gathers ratings and hands them back in rank order.
pub(crate) struct Ordering {
    run_rows: usize,
    rows: Vec<RawRating>,
    /// Each spilled run and the rows it holds.
    runs: Vec<(File, usize)>,
    /// Seals the spilled runs (an encrypted study's); its key lives only here.
    cipher: Option<ChaCha20Poly1305>,
}

impl Ordering {
    /// Runs of `run_rows` rows, sealed on disk when `sealed` (the study is encrypted).
    pub fn new(run_rows: usize, sealed: bool) -> Ordering {
        let cipher = sealed.then(|| {
            let mut key = zeroize::Zeroizing::new([0u8; 32]);
            rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, key.as_mut());
            ChaCha20Poly1305::new(Key::from_slice(key.as_ref()))
        });
        Ordering {
            run_rows: run_rows.max(1),
            rows: Vec::new(),
            runs: Vec::new(),
            cipher,
        }
    }

    pub fn push(&mut self, row: RawRating) -> Result<(), ExportError> {
        self.rows.push(row);
        if self.rows.len() >= self.run_rows {
            self.spill()?;
        }
        Ok(())
    }

    /// Sort the gathered rows and write them, sealed, to a temporary file as one run.
    fn spill(&mut self) -> Result<(), ExportError> {
        self.rows.sort_unstable_by_key(|r| r.rank);
        let run = u32::try_from(self.runs.len()).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::OutOfMemory, "too many sorted runs")
        })?;
        let mut out = SealedWriter::new(tempfile::tempfile()?, self.cipher.as_ref(), run);
        let n = self.rows.len();
        for row in self.rows.drain(..) {
            write_row(&mut out, &row)?;
        }
        let mut file = out.finish()?;
        file.seek(SeekFrom::Start(0))?;
        self.runs.push((file, n));
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
        let expected = self.rows.len() + self.runs.iter().map(|(_, n)| n).sum::<usize>();
        let cipher = self.cipher.as_ref();
        let mut readers: Vec<SealedReader<'_>> = self
            .runs
            .into_iter()
            .enumerate()
            .map(|(run, (file, _))| SealedReader::new(file, cipher, run as u32))
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
        if n != expected {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("the export's sorted runs gave back {n} of {expected} ratings"),
            )
            .into());
        }
        Ok(n)
    }
}

/// The nonce of chunk `chunk` of run `run`: unique under one export's key.
fn nonce(run: u32, chunk: u64) -> Nonce {
    let mut n = [0u8; 12];
    n[..4].copy_from_slice(&run.to_le_bytes());
    n[4..].copy_from_slice(&chunk.to_le_bytes());
    *Nonce::from_slice(&n)
}

fn sealing_failed() -> std::io::Error {
    std::io::Error::other("a sorted run could not be sealed")
}

/// Writes a run as chunks: `u32` length, then the ciphertext and tag (plain bytes without a
/// cipher).
struct SealedWriter<'a> {
    file: std::io::BufWriter<File>,
    cipher: Option<&'a ChaCha20Poly1305>,
    run: u32,
    chunk: u64,
    plain: zeroize::Zeroizing<Vec<u8>>,
}

impl<'a> SealedWriter<'a> {
    fn new(file: File, cipher: Option<&'a ChaCha20Poly1305>, run: u32) -> SealedWriter<'a> {
        SealedWriter {
            file: std::io::BufWriter::with_capacity(CHUNK_BYTES + 64, file),
            cipher,
            run,
            chunk: 0,
            plain: zeroize::Zeroizing::new(Vec::with_capacity(CHUNK_BYTES)),
        }
    }

    fn seal(&mut self) -> std::io::Result<()> {
        if self.plain.is_empty() {
            return Ok(());
        }
        let Some(cipher) = self.cipher else {
            self.file
                .write_all(&(self.plain.len() as u32).to_le_bytes())?;
            self.file.write_all(&self.plain)?;
            self.plain.clear();
            return Ok(());
        };
        let sealed = cipher
            .encrypt(&nonce(self.run, self.chunk), self.plain.as_slice())
            .map_err(|_| sealing_failed())?;
        self.chunk += 1;
        self.plain.clear();
        self.file.write_all(&(sealed.len() as u32).to_le_bytes())?;
        self.file.write_all(&sealed)
    }

    /// Seal what is left and hand back the file.
    fn finish(mut self) -> std::io::Result<File> {
        self.seal()?;
        self.file.into_inner().map_err(|e| e.into_error())
    }
}

impl Write for SealedWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = CHUNK_BYTES - self.plain.len();
        let n = buf.len().min(room);
        self.plain.extend_from_slice(&buf[..n]);
        if self.plain.len() == CHUNK_BYTES {
            self.seal()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Reads a run written by [`SealedWriter`], opening one chunk at a time.
struct SealedReader<'a> {
    file: std::io::BufReader<File>,
    cipher: Option<&'a ChaCha20Poly1305>,
    run: u32,
    chunk: u64,
    plain: zeroize::Zeroizing<Vec<u8>>,
    at: usize,
}

impl<'a> SealedReader<'a> {
    fn new(file: File, cipher: Option<&'a ChaCha20Poly1305>, run: u32) -> SealedReader<'a> {
        SealedReader {
            file: std::io::BufReader::with_capacity(CHUNK_BYTES + 64, file),
            cipher,
            run,
            chunk: 0,
            plain: zeroize::Zeroizing::new(Vec::new()),
            at: 0,
        }
    }
}

impl Read for SealedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for SealedReader<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.at == self.plain.len() {
            if self.file.fill_buf()?.is_empty() {
                return Ok(&[]);
            }
            let len = u32::from_le_bytes(bytes(&mut self.file)?) as usize;
            if len > CHUNK_BYTES + 16 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "a sorted run's chunk is longer than any written",
                ));
            }
            let mut sealed = vec![0u8; len];
            self.file.read_exact(&mut sealed)?;
            let Some(cipher) = self.cipher else {
                self.plain = zeroize::Zeroizing::new(sealed);
                self.at = 0;
                return Ok(&self.plain[self.at..]);
            };
            let plain = cipher
                .decrypt(&nonce(self.run, self.chunk), sealed.as_slice())
                .map_err(|_| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "a sorted run was altered on disk (a chunk fails its authentication)",
                    )
                })?;
            self.chunk += 1;
            self.plain = zeroize::Zeroizing::new(plain);
            self.at = 0;
        }
        Ok(&self.plain[self.at..])
    }

    fn consume(&mut self, amount: usize) {
        self.at = (self.at + amount).min(self.plain.len());
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

/// Bytes of a row before its texts: the rank (13), the value's flag (1) and the value (8, when
/// there is one), the two times (16), the signature state (1) and the texts' flag (1).
fn fixed_len(has_value: bool) -> usize {
    13 + 1 + if has_value { 8 } else { 0 } + 16 + 1 + 1
}

/// The most bytes a row has before its texts.
const MAX_FIXED: usize = 13 + 1 + 8 + 16 + 1 + 1;

fn write_row(out: &mut impl Write, row: &RawRating) -> std::io::Result<()> {
    // The part before the texts goes out in one piece.
    let mut fixed = [0u8; MAX_FIXED];
    let mut at = 0;
    let (response, rater, occasion, criterion) = row.rank;
    let value = row.value.map(i64::to_le_bytes);
    let parts: [&[u8]; 9] = [
        &response.to_le_bytes(),
        &rater.to_le_bytes(),
        &[occasion],
        &criterion.to_le_bytes(),
        &[u8::from(value.is_some())],
        value.as_ref().map_or(&[], |v| v.as_slice()),
        &row.created_at.to_le_bytes(),
        &row.updated_at.to_le_bytes(),
        &[match row.signature {
            SignatureState::Unsigned => 0,
            SignatureState::Signed => 1,
            SignatureState::ChangedAfterSignature => 2,
        }],
    ];
    for part in parts {
        fixed[at..at + part.len()].copy_from_slice(part);
        at += part.len();
    }
    fixed[at] = u8::from(row.texts.is_some());
    out.write_all(&fixed[..=at])?;
    if let Some(texts) = &row.texts {
        write_text(out, &texts.0)?;
        write_text(out, &texts.1)?;
    }
    Ok(())
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

/// `N` bytes of `fixed` from `at` on, moving `at` past them.
fn take<const N: usize>(fixed: &[u8], at: &mut usize) -> [u8; N] {
    let mut b = [0u8; N];
    b.copy_from_slice(&fixed[*at..*at + N]);
    *at += N;
    b
}

/// The next row of a run, `None` at its end.
fn read_row(input: &mut impl BufRead) -> std::io::Result<Option<RawRating>> {
    let available = input.fill_buf()?;
    if available.is_empty() {
        return Ok(None);
    }
    // The part before the texts: taken from the buffer when it is all there (most rows), else
    // read in two steps across the buffer's end.
    let mut fixed = [0u8; MAX_FIXED];
    let len;
    if available.len() >= MAX_FIXED {
        len = fixed_len(available[13] != 0);
        fixed[..len].copy_from_slice(&available[..len]);
        input.consume(len);
    } else {
        input.read_exact(&mut fixed[..14])?;
        len = fixed_len(fixed[13] != 0);
        input.read_exact(&mut fixed[14..len])?;
    }
    let mut at = 0;
    let rank = (
        u32::from_le_bytes(take(&fixed, &mut at)),
        u32::from_le_bytes(take(&fixed, &mut at)),
        take::<1>(&fixed, &mut at)[0],
        u32::from_le_bytes(take(&fixed, &mut at)),
    );
    let value = match take::<1>(&fixed, &mut at)[0] {
        0 => None,
        _ => Some(i64::from_le_bytes(take(&fixed, &mut at))),
    };
    let created_at = Millis::from_le_bytes(take(&fixed, &mut at));
    let updated_at = Millis::from_le_bytes(take(&fixed, &mut at));
    let signature = match take::<1>(&fixed, &mut at)[0] {
        0 => SignatureState::Unsigned,
        1 => SignatureState::Signed,
        _ => SignatureState::ChangedAfterSignature,
    };
    let texts = match take::<1>(&fixed, &mut at)[0] {
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

    fn ordered(rows: &[RawRating], run_rows: usize, sealed: bool) -> Vec<RawRating> {
        let mut o = Ordering::new(run_rows, sealed);
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
        let memory = ordered(&rows, usize::MAX, false);
        assert!(
            memory.windows(2).all(|w| w[0].rank < w[1].rank),
            "one in-memory sort yields strictly increasing ranks"
        );
        for run_rows in [1, 7, 96] {
            for sealed in [false, true] {
                assert_eq!(
                    ordered(&rows, run_rows, sealed),
                    memory,
                    "runs of {run_rows} rows spilled to disk (sealed: {sealed}) merge into the \
                     in-memory order"
                );
            }
        }
    }

    #[test]
    fn rows_cut_by_a_chunk_boundary_read_back_whole() {
        // 10,000 rows in runs of 4,000 (about 160 KB each): every run spans several chunks of
        // CHUNK_BYTES, so rows are cut where one chunk ends and the next begins, some with and
        // some without a value or texts, and must come back as they went in.
        let rows: Vec<RawRating> = (0..10_000u32)
            .map(|i| {
                let mut r = row(((i * 7919) % 10_007, i % 5, (i % 2) as u8, i % 7), false);
                if i % 13 == 0 {
                    r.texts = Some(Box::new((None, Some(format!("rationale {i}")))));
                }
                r
            })
            .collect();
        let memory = ordered(&rows, usize::MAX, false);
        for sealed in [false, true] {
            assert_eq!(
                ordered(&rows, 4_000, sealed),
                memory,
                "runs spanning several chunks (sealed: {sealed}) merge into the in-memory order"
            );
        }
    }

    /// The cost of spilling: 1,048,576 rows (one in six with a rationale) in the export's real
    /// runs of [`RUN_ROWS`] rows, so two runs are written, read back and merged. Ignored: a
    /// measurement, run with `--ignored --nocapture`.
    #[test]
    #[ignore]
    fn spill_timing() {
        let rows: Vec<RawRating> = (0..(2 * RUN_ROWS) as u32)
            .map(|i| {
                let rank = (u64::from(i) * 7919 % (1 << 21)) as u32;
                let mut r = row((rank, i % 13, 0, i % 7), false);
                if i % 6 == 0 {
                    r.texts = Some(Box::new((
                        None,
                        Some(format!("rationale {i} of the judge")),
                    )));
                }
                r
            })
            .collect();
        for sealed in [false, true] {
            let mut best = f64::MAX;
            for _ in 0..3 {
                let start = std::time::Instant::now();
                let mut o = Ordering::new(RUN_ROWS, sealed);
                for r in &rows {
                    o.push(r.clone()).expect("gathered");
                }
                let n = o.finish(|_| Ok(())).expect("merged");
                assert_eq!(n, rows.len(), "every row comes back");
                best = best.min(start.elapsed().as_secs_f64());
            }
            println!(
                "spill of {} rows in runs of {RUN_ROWS}, sealed {sealed}: best of 3 {best:.3} s",
                rows.len()
            );
        }
    }
}
