//! Rating CSVs. The long form has one row per rating (conversation, response, source, rater,
//! rater kind, rubric, criterion, occasion — `first` or the blind `retest` — value, raw value,
//! rationale, created and updated times in ISO-8601 UTC), followed by the adjudicators' consensus
//! decisions (occasion `consensus`, rater kind `adjudicator`, the reason as rationale); the wide form one row per response ×
//! rater × occasion with one column per criterion. Both are UTF-8; the Excel-friendly option adds
//! a byte-order mark and CRLF line ends. Text cells are neutralised against formula injection.
//!
//! A judge's repetitions ([`JudgeRepetitions`]): by default (`aggregate`) a judge's value of a
//! multi-repetition run is the study's aggregate of its repetitions (`judge::scores`: median
//! unless chosen otherwise, so it may be a half or a fraction), as every report reads it, and
//! the columns are those above — a study without multi-repetition runs exports byte for byte as
//! before. With `all` the long CSV gains a last `repetition` column (before the text columns):
//! a judge's rating from a run becomes one row per repetition of that run with the repetition's
//! value and number; an expert's row, and a judge's without run calls, leave it empty. `all`
//! holds the judges' repetitions in memory while it writes. The wide CSV always writes the
//! aggregate (one value per cell).
//!
//! Conversations: a study holding transcripts or a session rubric adds [`CONVERSATION_HEADER`] —
//! the item's `turn` (a transcript reply's turn number, 2 for a single-turn answer, empty for a
//! session item and a pair verdict) and its rubric's `scope` (`reply` or `session`) — to the
//! long CSV after its fourteen columns (before `repetition`), and to the wide CSV after
//! `source`; rows come in the order conversation, turn, source. A study without either exports
//! without them, byte for byte as before.

use super::{
    criterion_columns, for_each_ranked_rating, for_each_rating, has_conversation_columns, iso_utc,
    neutralise, shown_turn, ExportError, Labels, RatingRow,
};
use crate::base::clock::Millis;
use crate::store::{Occasion, SignatureState, Store};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;

/// CSV flavour.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CsvOptions {
    /// Byte-order mark and CRLF line ends, so Excel opens UTF-8 text correctly.
    pub excel: bool,
    /// Add the conversation's context and the response's text as the last two columns.
    #[serde(default)]
    pub texts: bool,
    /// A judge's repetitions: their aggregate (default) or one row each (long CSV).
    #[serde(default)]
    pub judge_repetitions: JudgeRepetitions,
}

/// Which of a judge's repetitions a rating export writes (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum JudgeRepetitions {
    /// The study's aggregate of a judge's repetitions, in the value column.
    #[default]
    Aggregate,
    /// One row per repetition with a `repetition` column.
    All,
}

/// Judge values that replace a rating's: (rater id, response id, criterion id) → (repetition or
/// none, value) rows.
type JudgeValues = HashMap<(i64, i64, i64), Vec<(Option<i64>, f64)>>;

fn judge_values(store: &Store, mode: JudgeRepetitions) -> Result<JudgeValues, ExportError> {
    use crate::judge::scores::{aggregated_scores, repetition_values, study_aggregate};
    let names: HashMap<i64, String> = store
        .rater_records()?
        .into_iter()
        .map(|r| (r.id, r.name))
        .collect();
    let mut out = JudgeValues::new();
    for rubric in store.rubrics()? {
        match mode {
            JudgeRepetitions::Aggregate => {
                let aggregate = study_aggregate(store)?;
                for s in aggregated_scores(store, rubric.id, None, aggregate)? {
                    if names.contains_key(&s.rater_id) {
                        out.insert(
                            (s.rater_id, s.response_id, s.criterion_id),
                            vec![(None, s.value)],
                        );
                    }
                }
            }
            JudgeRepetitions::All => {
                for ((rater, response, criterion), mut v) in
                    repetition_values(store, rubric.id, 1, None)?
                {
                    if names.contains_key(&rater) {
                        v.sort_by_key(|(rep, _)| *rep);
                        out.insert(
                            (rater, response, criterion),
                            v.into_iter().map(|(rep, x)| (Some(rep), x)).collect(),
                        );
                    }
                }
            }
        }
    }
    Ok(out)
}

/// What a CSV export wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CsvSummary {
    /// Data rows (header excluded).
    pub rows: usize,
    pub ratings: usize,
}

/// Header of the long CSV.
pub const LONG_HEADER: [&str; 14] = [
    "conversation_id",
    "response_id",
    "source",
    "rater",
    "rater_kind",
    "rubric",
    "criterion",
    "occasion",
    "value",
    "raw_value",
    "rationale",
    "created_at",
    "updated_at",
    "signature",
];

/// Columns a study with pairwise verdicts adds to the long CSV (after `repetition`, before the
/// texts): a pair verdict's row has the pair's `left` and `right` answers (their source keys),
/// the `winner` (`left`, `right` or `tie`) and `position_left`, the position the left answer was
/// shown in (1 first, 2 second); a rating's row leaves them empty, and a study without pairs
/// exports without them.
pub const PAIR_HEADER: [&str; 4] = ["left", "right", "winner", "position_left"];

/// Columns a study of conversations (transcripts or a session rubric) adds to the long and wide
/// CSV (see the module docs).
pub const CONVERSATION_HEADER: [&str; 2] = ["turn", "scope"];

/// Extra columns of [`CsvOptions::texts`].
pub const TEXT_HEADER: [&str; 2] = ["context", "response_text"];

/// Context and answer text per response, read on demand (rows come grouped by response).
struct Texts<'s> {
    store: Option<&'s Store>,
    last: Option<(i64, String, String)>,
}

impl<'s> Texts<'s> {
    fn new(store: &'s Store, enabled: bool) -> Self {
        Texts {
            store: enabled.then_some(store),
            last: None,
        }
    }

    fn get(&mut self, response: i64) -> Result<(String, String), ExportError> {
        let Some(store) = self.store else {
            return Ok((String::new(), String::new()));
        };
        if let Some((id, c, t)) = &self.last {
            if *id == response {
                return Ok((c.clone(), t.clone()));
            }
        }
        let texts = store.response_texts(response)?;
        let (c, t) = (texts.context, texts.text.unwrap_or_default());
        self.last = Some((response, c.clone(), t.clone()));
        Ok((c, t))
    }
}

fn writer<W: Write>(mut out: W, options: CsvOptions) -> Result<::csv::Writer<W>, ExportError> {
    if options.excel {
        out.write_all(b"\xEF\xBB\xBF")?;
    }
    Ok(::csv::WriterBuilder::new()
        .terminator(if options.excel {
            ::csv::Terminator::CRLF
        } else {
            ::csv::Terminator::Any(b'\n')
        })
        .from_writer(out))
}

/// The signature state of a wide row (or an expert sheet's row): `changed_after_signature` when
/// any of its values changed after its signature, else `signed` when any is signed, else empty.
pub(crate) fn row_signature(row: SignatureState, value: SignatureState) -> SignatureState {
    use SignatureState::*;
    match (row, value) {
        (ChangedAfterSignature, _) | (_, ChangedAfterSignature) => ChangedAfterSignature,
        (Signed, _) | (_, Signed) => Signed,
        _ => Unsigned,
    }
}

fn opt(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// Write the long CSV of every rating in the study. Memory stays flat in the number of ratings:
/// they are ordered in sorted runs of about 34 MB, spilled to temporary files and merged.
pub fn write_long_csv<W: Write>(
    store: &Store,
    out: W,
    options: CsvOptions,
) -> Result<CsvSummary, ExportError> {
    write_long_csv_in_runs(store, out, options, super::order::RUN_ROWS)
}

/// [`write_long_csv`] with the ratings ordered in sorted runs of `run_rows` rows (the output is
/// the same for every run size; a small one makes a small study spill and merge).
pub fn write_long_csv_in_runs<W: Write>(
    store: &Store,
    out: W,
    options: CsvOptions,
    run_rows: usize,
) -> Result<CsvSummary, ExportError> {
    let mut w = LongOut::new(out, options);
    let columns = LongColumns {
        conversations: has_conversation_columns(store)?,
        repetition: options.judge_repetitions == JudgeRepetitions::All,
        pairs: store.read().has_pair_verdicts()?,
        texts: options.texts,
    };
    w.record(columns.header())?;
    let judges = judge_values(store, options.judge_repetitions)?;
    let mut texts = Texts::new(store, options.texts);
    let ratings = RatingRuns {
        store,
        columns,
        judges: &judges,
        run_rows,
    };
    let (n, extra_rows) = write_long_rating_rows(&mut w, ratings, &mut texts)?;
    let consensus = write_long_consensus_rows(&mut w, store, columns, &mut texts)?;
    let pair_rows = write_long_pair_rows(&mut w, store, columns)?;
    w.finish()?;
    Ok(CsvSummary {
        rows: n + extra_rows + consensus + pair_rows,
        ratings: n,
    })
}

/// Which optional columns the long CSV has: `turn` and `scope`, `repetition`, the pair columns
/// and the texts.
#[derive(Clone, Copy)]
struct LongColumns {
    conversations: bool,
    repetition: bool,
    pairs: bool,
    texts: bool,
}

/// The cells a long CSV row may add after its fourteen: its turn and scope, its repetition, its
/// pair's cells (a pair verdict's row only) and its context and response text.
struct LongTail<'a> {
    place: [Cow<'a, str>; 2],
    repetition: Cow<'a, str>,
    pair: Option<[Cow<'a, str>; 4]>,
    texts: (&'a str, &'a str),
}

impl LongColumns {
    /// The long CSV's header row.
    fn header(self) -> Vec<&'static str> {
        let mut header: Vec<&str> = LONG_HEADER.to_vec();
        if self.conversations {
            header.extend(CONVERSATION_HEADER);
        }
        if self.repetition {
            header.push("repetition");
        }
        if self.pairs {
            header.extend(PAIR_HEADER);
        }
        if self.texts {
            header.extend(TEXT_HEADER);
        }
        header
    }

    /// Write a row: its fourteen cells, then those of `tail` the CSV has columns for.
    fn write<'a, W: Write>(
        self,
        w: &mut LongOut<W>,
        mut record: Vec<Cow<'a, str>>,
        tail: LongTail<'a>,
    ) -> Result<(), ExportError> {
        if self.conversations {
            record.extend(tail.place);
        }
        if self.repetition {
            record.push(tail.repetition);
        }
        // A pair verdict's pair cells always; another row's empty ones when the study has pairs.
        match tail.pair {
            Some(cells) => record.extend(cells),
            None if self.pairs => record.extend(std::iter::repeat_n(Cow::Borrowed(""), 4)),
            None => {}
        }
        if self.texts {
            record.push(neutralise(tail.texts.0));
            record.push(neutralise(tail.texts.1));
        }
        w.record(record.iter().map(|c| c.as_ref()))
    }
}

/// What the long CSV's rating rows are written from: the study, the columns, the judges' values
/// that replace theirs and the size of the sorted runs.
struct RatingRuns<'a> {
    store: &'a Store,
    columns: LongColumns,
    judges: &'a JudgeValues,
    run_rows: usize,
}

/// Write the rating rows (a judge's once per value); returns ratings and rows beyond one each.
/// The cells of a rating's response, rater and criterion are neutralised and quoted once for
/// all the ratings that share them, and its times once per distinct time.
fn write_long_rating_rows<W: Write>(
    w: &mut LongOut<W>,
    ratings: RatingRuns<'_>,
    texts: &mut Texts<'_>,
) -> Result<(usize, usize), ExportError> {
    let columns = ratings.columns;
    let mut extra_rows = 0usize;
    let mut names: Option<RatingNames> = None;
    // The response of the rows being written (they come grouped by response): its position,
    // its three cells and, with the texts, its two text cells.
    let mut response: Option<(u32, Vec<u8>, Vec<u8>)> = None;
    let (mut created, mut updated) = (IsoTimes::default(), IsoTimes::default());
    let n = for_each_ranked_rating(ratings.store, None, ratings.run_rows, |labels, raw| {
        let names = names.get_or_insert_with(|| RatingNames::new(labels));
        let (rr, ra, occasion, cr) = raw.rank;
        let label = &labels.responses[rr as usize];
        if response.as_ref().is_none_or(|(at, _, _)| *at != rr) {
            let mut cells = Vec::new();
            push_cells(
                &mut cells,
                [&label.conversation, &label.response, &label.source].map(|t| neutralise(t)),
            );
            let mut text_cells = Vec::new();
            if columns.texts {
                let (context, text) = texts.get(label.id)?;
                push_cells(&mut text_cells, [neutralise(&context), neutralise(&text)]);
            }
            response = Some((rr, cells, text_cells));
        }
        let Some((_, cells, text_cells)) = response.as_ref() else {
            return Ok(());
        };
        let rater = &labels.raters[ra as usize];
        let replaced = (names.judge[ra as usize] && !ratings.judges.is_empty())
            .then(|| {
                ratings
                    .judges
                    .get(&(rater.id, label.id, labels.criteria[cr as usize].id))
            })
            .flatten();
        let one = [(None, f64::NAN)];
        let values: &[(Option<i64>, f64)] = match replaced {
            Some(v) => v,
            None => &one,
        };
        extra_rows += values.len() - 1;
        let (raw_value, rationale) = match &raw.texts {
            Some(t) => (t.0.as_deref().unwrap_or(""), t.1.as_deref().unwrap_or("")),
            None => ("", ""),
        };
        for &(repetition, value) in values {
            let line = w.line();
            line.extend_from_slice(cells);
            line.push(b',');
            line.extend_from_slice(&names.raters[ra as usize]);
            line.push(b',');
            line.extend_from_slice(&names.criteria[cr as usize]);
            line.push(b',');
            push_field(
                line,
                Occasion::ALL[usize::from(occasion)].as_str().as_bytes(),
            );
            line.push(b',');
            // Numbers are written as `to_string` writes them; they never need quotes.
            if replaced.is_some() {
                push_field(line, value.to_string().as_bytes());
            } else if let Some(v) = raw.value {
                push_int(line, v);
            }
            line.push(b',');
            push_field(line, neutralise(raw_value).as_bytes());
            line.push(b',');
            push_field(line, neutralise(rationale).as_bytes());
            line.push(b',');
            push_field(line, created.text(raw.created_at).as_bytes());
            line.push(b',');
            push_field(line, updated.text(raw.updated_at).as_bytes());
            line.push(b',');
            push_field(line, raw.signature.as_str().as_bytes());
            if columns.conversations {
                let (turn, scope) = labels.places[rr as usize];
                line.push(b',');
                if let Some(turn) = turn {
                    push_int(line, turn);
                }
                line.push(b',');
                push_field(line, scope.as_str().as_bytes());
            }
            if columns.repetition {
                line.push(b',');
                if let Some(rep) = repetition {
                    push_int(line, rep);
                }
            }
            if columns.pairs {
                line.extend_from_slice(b",,,,");
            }
            if columns.texts {
                line.push(b',');
                line.extend_from_slice(text_cells);
            }
            w.end_line()?;
        }
        Ok(())
    })?;
    Ok((n, extra_rows))
}

/// Every item's turn and scope as exports write them, by response id.
fn item_places(
    store: &Store,
) -> Result<HashMap<i64, (Option<i64>, crate::rubric::Scope)>, ExportError> {
    let scopes: HashMap<i64, crate::rubric::Scope> = store
        .rubrics()?
        .into_iter()
        .map(|r| (r.id, r.rubric.scope))
        .collect();
    Ok(store
        .response_labels()?
        .into_iter()
        .map(|l| {
            let scope = scopes.get(&l.rubric_id).copied().unwrap_or_default();
            (l.id, (shown_turn(l.turn, scope), scope))
        })
        .collect())
}

/// What each rater and criterion of a long CSV's rating rows is written as: the rater's name
/// and kind cells, the criterion's rubric and key cells, and whether the rater is a judge.
struct RatingNames {
    raters: Vec<Vec<u8>>,
    criteria: Vec<Vec<u8>>,
    judge: Vec<bool>,
}

impl RatingNames {
    fn new(labels: &Labels) -> RatingNames {
        let cells = |texts: [Cow<'_, str>; 2]| {
            let mut out = Vec::new();
            push_cells(&mut out, texts);
            out
        };
        RatingNames {
            raters: labels
                .raters
                .iter()
                .map(|r| cells([neutralise(&r.name), Cow::Borrowed(r.kind.as_str())]))
                .collect(),
            criteria: labels
                .criteria
                .iter()
                .map(|c| cells([neutralise(&c.rubric), neutralise(&c.key)]))
                .collect(),
            judge: labels.raters.iter().map(|r| r.kind == "judge").collect(),
        }
    }
}

/// The ISO text of the last time asked for (a study's ratings share few distinct times).
#[derive(Default)]
struct IsoTimes {
    last: Option<(Millis, String)>,
}

impl IsoTimes {
    fn text(&mut self, at: Millis) -> &str {
        if self.last.as_ref().is_none_or(|(t, _)| *t != at) {
            self.last = Some((at, iso_utc(at)));
        }
        self.last.as_ref().map_or("", |(_, text)| text.as_str())
    }
}

/// The long CSV's output: each line written as the `csv` crate writes a record with its default
/// settings — a field in quotes when it holds a comma, a quote, a CR or an LF (a quote inside
/// written twice), the fields separated by commas — and the lines gathered in a buffer written
/// out in large pieces. The Excel flavour starts with a byte-order mark and ends lines with
/// CRLF. (The rating rows are assembled here from cells made once, instead of field by field
/// through the `csv` writer.)
struct LongOut<W: Write> {
    out: W,
    buf: Vec<u8>,
    /// Where the line being assembled starts in `buf`.
    line_start: usize,
    terminator: &'static [u8],
}

/// The buffer is written out once it holds this many bytes.
const LONG_OUT_BYTES: usize = 1 << 16;

impl<W: Write> LongOut<W> {
    fn new(out: W, options: CsvOptions) -> LongOut<W> {
        let mut buf = Vec::with_capacity(LONG_OUT_BYTES + 4096);
        if options.excel {
            buf.extend_from_slice(b"\xEF\xBB\xBF");
        }
        let line_start = buf.len();
        LongOut {
            out,
            buf,
            line_start,
            terminator: if options.excel { b"\r\n" } else { b"\n" },
        }
    }

    /// The line being assembled, to append cells to.
    fn line(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// End the line: its terminator, and the buffer written out when full.
    fn end_line(&mut self) -> Result<(), ExportError> {
        // Only a record of one empty field has no bytes; the csv crate writes it as `""`.
        if self.buf.len() == self.line_start {
            self.buf.extend_from_slice(b"\"\"");
        }
        self.buf.extend_from_slice(self.terminator);
        if self.buf.len() >= LONG_OUT_BYTES {
            self.out.write_all(&self.buf).map_err(csv_io)?;
            self.buf.clear();
        }
        self.line_start = self.buf.len();
        Ok(())
    }

    /// One whole record.
    fn record<'a>(&mut self, fields: impl IntoIterator<Item = &'a str>) -> Result<(), ExportError> {
        for (i, field) in fields.into_iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            push_field(&mut self.buf, field.as_bytes());
        }
        self.end_line()
    }

    /// Write out what is buffered and flush the output.
    fn finish(mut self) -> Result<(), ExportError> {
        self.out.write_all(&self.buf).map_err(csv_io)?;
        self.out.flush().map_err(csv_io)
    }
}

/// A write error reported as the `csv` writer reported it.
fn csv_io(e: std::io::Error) -> ExportError {
    ExportError::Csv(e.into())
}

/// Append `text` as one CSV field: in quotes, a quote doubled, when it holds a comma, a quote, a
/// CR or an LF; as it is otherwise.
fn push_field(out: &mut Vec<u8>, text: &[u8]) {
    if text
        .iter()
        .any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
    {
        out.push(b'"');
        for &b in text {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(text);
    }
}

/// Append `v` in decimal, as its `to_string` writes it.
fn push_int(out: &mut Vec<u8>, v: i64) {
    let mut digits = [0u8; 20];
    let mut rest = v.unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[at..]);
}

/// Append `texts` as consecutive CSV fields, separated by commas.
fn push_cells<'a, const N: usize>(out: &mut Vec<u8>, texts: [Cow<'a, str>; N]) {
    for (i, text) in texts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_field(out, text.as_bytes());
    }
}

/// Write the consensus decisions that follow the ratings; returns the rows written.
fn write_long_consensus_rows<W: Write>(
    w: &mut LongOut<W>,
    store: &Store,
    columns: LongColumns,
    texts: &mut Texts<'_>,
) -> Result<usize, ExportError> {
    // With their provenance: occasion `consensus`, the adjudicator as rater (kind `adjudicator`),
    // the reason as rationale; an unratable pair has no value and the raw value `unratable`.
    let consensus = store.consensus_rows()?;
    let places = if columns.conversations && !consensus.is_empty() {
        item_places(store)?
    } else {
        HashMap::new()
    };
    for c in &consensus {
        let (context, text) = texts.get(c.decision.response_id)?;
        let record = vec![
            neutralise(&c.conversation),
            neutralise(&c.response),
            neutralise(&c.source),
            neutralise(&c.decision.adjudicator),
            Cow::Borrowed("adjudicator"),
            neutralise(&c.rubric),
            neutralise(&c.criterion),
            Cow::Borrowed("consensus"),
            Cow::Owned(opt(c.decision.value)),
            Cow::Borrowed(if c.decision.value.is_none() {
                "unratable"
            } else {
                ""
            }),
            neutralise(&c.decision.reason),
            iso_utc(c.decision.decided_at).into(),
            iso_utc(c.decision.decided_at).into(),
            Cow::Borrowed(""),
        ];
        let (turn, scope) = places
            .get(&c.decision.response_id)
            .copied()
            .unwrap_or((None, crate::rubric::Scope::Reply));
        let tail = LongTail {
            place: [Cow::Owned(opt(turn)), Cow::Borrowed(scope.as_str())],
            repetition: Cow::Borrowed(""),
            pair: None,
            texts: (&context, &text),
        };
        columns.write(w, record, tail)?;
    }
    Ok(consensus.len())
}

/// Write the pair verdicts that come last; returns the rows written.
fn write_long_pair_rows<W: Write>(
    w: &mut LongOut<W>,
    store: &Store,
    columns: LongColumns,
) -> Result<usize, ExportError> {
    // No single response, value or signature; the pair's answers by source, the winner in the
    // pair's terms and the side shown first.
    store
        .read()
        .for_each_pair_verdict_row(|p| -> Result<(), ExportError> {
            let record = vec![
                neutralise(&p.conversation),
                Cow::Borrowed(""),
                Cow::Borrowed(""),
                neutralise(&p.rater),
                Cow::Borrowed(p.rater_kind.as_str()),
                neutralise(&p.rubric),
                neutralise(&p.criterion),
                Cow::Borrowed("first"),
                Cow::Borrowed(""),
                Cow::Borrowed(""),
                neutralise(p.rationale.as_deref().unwrap_or("")),
                iso_utc(p.created_at).into(),
                iso_utc(p.updated_at).into(),
                Cow::Borrowed(""),
            ];
            let pair = [
                neutralise(&p.left),
                neutralise(&p.right),
                Cow::Borrowed(p.winner.as_str()),
                Cow::Borrowed(if p.left_first { "1" } else { "2" }),
            ];
            let tail = LongTail {
                // A pair is two candidate replies of one conversation: a reply rubric's.
                place: [Cow::Borrowed(""), Cow::Borrowed("reply")],
                repetition: Cow::Borrowed(""),
                pair: Some(pair),
                texts: ("", ""),
            };
            columns.write(w, record, tail)
        })
}

/// Write the wide CSV: one row per response × rater × occasion, one column per criterion.
pub fn write_wide_csv<W: Write>(
    store: &Store,
    out: W,
    options: CsvOptions,
) -> Result<CsvSummary, ExportError> {
    let columns = criterion_columns(store)?;
    let index: HashMap<i64, usize> = columns.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
    let mut w = writer(out, options)?;
    let conversations = has_conversation_columns(store)?;
    let mut header: Vec<String> = ["conversation_id", "response_id", "source"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if conversations {
        header.extend(CONVERSATION_HEADER.iter().map(|s| s.to_string()));
    }
    header.extend(
        ["rater", "rater_kind", "occasion"]
            .iter()
            .map(|s| s.to_string()),
    );
    header.extend(columns.iter().map(|c| neutralise(&c.header).into_owned()));
    header.push("signature".to_string());
    if options.texts {
        header.extend(TEXT_HEADER.iter().map(|s| s.to_string()));
    }
    w.write_record(&header)?;
    let mut texts = Texts::new(store, options.texts);
    // The wide form has one value per cell: a judge's is always the aggregate of its repetitions.
    let judges = judge_values(store, JudgeRepetitions::Aggregate)?;

    let mut rows = 0usize;
    let mut current: Option<(RatingRow, Vec<String>, SignatureState)> = None;
    let mut flush = |w: &mut ::csv::Writer<W>,
                     row: (RatingRow, Vec<String>, SignatureState)|
     -> Result<(), ExportError> {
        let (r, values, signature) = row;
        let mut record = vec![
            neutralise(&r.conversation).into_owned(),
            neutralise(&r.response).into_owned(),
            neutralise(&r.source).into_owned(),
        ];
        if conversations {
            record.push(opt(r.turn));
            record.push(r.scope.as_str().to_string());
        }
        record.extend([
            neutralise(&r.rater).into_owned(),
            r.rater_kind.clone(),
            r.occasion.to_string(),
        ]);
        record.extend(values);
        record.push(signature.as_str().to_string());
        if options.texts {
            let (context, text) = texts.get(r.response_id)?;
            record.push(neutralise(&context).into_owned());
            record.push(neutralise(&text).into_owned());
        }
        w.write_record(&record)?;
        rows += 1;
        Ok(())
    };
    let n = for_each_rating(store, None, super::order::RUN_ROWS, |r: RatingRow| {
        let same = current.as_ref().is_some_and(|(c, _, _)| {
            c.response_id == r.response_id && c.rater == r.rater && c.occasion == r.occasion
        });
        if !same {
            if let Some(done) = current.take() {
                flush(&mut w, done)?;
            }
            current = Some((
                r.clone(),
                vec![String::new(); columns.len()],
                SignatureState::Unsigned,
            ));
        }
        if let Some((_, _, signature)) = current.as_mut() {
            *signature = row_signature(*signature, r.signature);
        }
        if let (Some((_, values, _)), Some(&i)) = (current.as_mut(), index.get(&r.criterion_id)) {
            let aggregated = (r.rater_kind == "judge")
                .then(|| judges.get(&(r.rater_id, r.response_id, r.criterion_id)))
                .flatten()
                .and_then(|v| v.first());
            values[i] = match (r.value, &r.raw_value) {
                (Some(_), _) if aggregated.is_some() => {
                    aggregated.map(|(_, x)| x.to_string()).unwrap_or_default()
                }
                (Some(v), _) => v.to_string(),
                (None, Some(raw)) => neutralise(raw).into_owned(),
                (None, None) => String::new(),
            };
        }
        Ok(())
    })?;
    if let Some(done) = current.take() {
        flush(&mut w, done)?;
    }
    w.flush()?;
    Ok(CsvSummary { rows, ratings: n })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fields that need quotes, doubled quotes or nothing at all, as the `csv` crate decides.
    const FIELDS: [&str; 16] = [
        "",
        "plain",
        "a,b",
        "say \"hi\"",
        "\"",
        ",",
        "line\nbreak",
        "cr\rhere",
        "crlf\r\nhere",
        " leading and trailing ",
        "#hash",
        "'=quoted formula",
        "tab\there",
        "ünïcödé, with a comma",
        "-3",
        "2026-12-05T02:45:18.948Z",
    ];

    fn through_long_out(records: &[Vec<&str>], excel: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let options = CsvOptions {
            excel,
            ..CsvOptions::default()
        };
        let mut w = LongOut::new(&mut out, options);
        for r in records {
            w.record(r.iter().copied()).expect("written to memory");
        }
        w.finish().expect("flushed to memory");
        out
    }

    fn through_csv_crate(records: &[Vec<&str>], excel: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let options = CsvOptions {
            excel,
            ..CsvOptions::default()
        };
        let mut w = writer(&mut out, options).expect("written to memory");
        for r in records {
            w.write_record(r).expect("written to memory");
        }
        w.flush().expect("flushed to memory");
        drop(w);
        out
    }

    #[test]
    fn the_long_csv_writes_its_lines_as_the_csv_crate_does() {
        // Every field alone and beside every other, in both flavours: the long CSV's own writer
        // must give the bytes the `csv` writer gave before it, or earlier exports would change.
        for excel in [false, true] {
            let records: Vec<Vec<&str>> = FIELDS
                .iter()
                .flat_map(|a| FIELDS.iter().map(move |b| vec![*a, "x", *b]))
                .collect();
            assert_eq!(
                through_long_out(&records, excel),
                through_csv_crate(&records, excel),
                "three-field records (excel: {excel}) are written byte for byte as the csv crate \
                 writes them"
            );
            let all = vec![FIELDS.to_vec(), FIELDS.iter().rev().copied().collect()];
            assert_eq!(
                through_long_out(&all, excel),
                through_csv_crate(&all, excel),
                "records of every field (excel: {excel}) are written as the csv crate writes them"
            );
            for field in FIELDS {
                // A record of one field (an empty one is the csv crate's special case: `""`).
                let one = vec![vec![field]];
                assert_eq!(
                    through_long_out(&one, excel),
                    through_csv_crate(&one, excel),
                    "the one-field record {field:?} (excel: {excel}) is written as the csv crate \
                     writes it"
                );
            }
        }
    }

    #[test]
    fn integers_are_written_as_to_string_writes_them() {
        for v in [
            0,
            1,
            5,
            -1,
            -5,
            10,
            99,
            100,
            1_234_567_890,
            i64::MAX,
            i64::MIN,
        ] {
            let mut out = Vec::new();
            push_int(&mut out, v);
            assert_eq!(
                String::from_utf8(out).expect("ASCII digits"),
                v.to_string(),
                "{v} is written with the digits to_string gives"
            );
        }
    }
}
