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
    criterion_columns, for_each_rating, has_conversation_columns, iso_utc, neutralise, shown_turn,
    ExportError, RatingRow,
};
use crate::store::{SignatureState, Store};
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

/// Judge values that replace a rating's: (rater name, response id, criterion id) → (repetition
/// or none, value) rows.
type JudgeValues = HashMap<(String, i64, i64), Vec<(Option<i64>, f64)>>;

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
                    if let Some(name) = names.get(&s.rater_id) {
                        out.insert(
                            (name.clone(), s.response_id, s.criterion_id),
                            vec![(None, s.value)],
                        );
                    }
                }
            }
            JudgeRepetitions::All => {
                for ((rater, response, criterion), mut v) in
                    repetition_values(store, rubric.id, 1, None)?
                {
                    if let Some(name) = names.get(&rater) {
                        v.sort_by_key(|(rep, _)| *rep);
                        out.insert(
                            (name.clone(), response, criterion),
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
    let mut w = writer(out, options)?;
    let columns = LongColumns {
        conversations: has_conversation_columns(store)?,
        repetition: options.judge_repetitions == JudgeRepetitions::All,
        pairs: store.read().has_pair_verdicts()?,
        texts: options.texts,
    };
    w.write_record(columns.header())?;
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
    w.flush()?;
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
        w: &mut ::csv::Writer<W>,
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
        w.write_record(record.iter().map(|c| c.as_ref()))?;
        Ok(())
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
fn write_long_rating_rows<W: Write>(
    w: &mut ::csv::Writer<W>,
    ratings: RatingRuns<'_>,
    texts: &mut Texts<'_>,
) -> Result<(usize, usize), ExportError> {
    let mut extra_rows = 0usize;
    let n = for_each_rating(ratings.store, None, ratings.run_rows, |r: RatingRow| {
        let (context, text) = texts.get(r.response_id)?;
        let replaced = (r.rater_kind == "judge")
            .then(|| {
                ratings
                    .judges
                    .get(&(r.rater.clone(), r.response_id, r.criterion_id))
            })
            .flatten();
        let one = [(None, f64::NAN)];
        let values: &[(Option<i64>, f64)] = match replaced {
            Some(v) => v,
            None => &one,
        };
        extra_rows += values.len() - 1;
        for &(repetition, value) in values {
            let record = vec![
                neutralise(&r.conversation),
                neutralise(&r.response),
                neutralise(&r.source),
                neutralise(&r.rater),
                Cow::Borrowed(r.rater_kind.as_str()),
                neutralise(&r.rubric),
                neutralise(&r.criterion),
                Cow::Borrowed(r.occasion),
                Cow::Owned(if replaced.is_some() {
                    value.to_string()
                } else {
                    opt(r.value)
                }),
                neutralise(r.raw_value.as_deref().unwrap_or("")),
                neutralise(r.rationale.as_deref().unwrap_or("")),
                iso_utc(r.created_at).into(),
                iso_utc(r.updated_at).into(),
                Cow::Borrowed(r.signature.as_str()),
            ];
            let tail = LongTail {
                place: [Cow::Owned(opt(r.turn)), Cow::Borrowed(r.scope.as_str())],
                repetition: Cow::Owned(opt(repetition)),
                pair: None,
                texts: (&context, &text),
            };
            ratings.columns.write(w, record, tail)?;
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

/// Write the consensus decisions that follow the ratings; returns the rows written.
fn write_long_consensus_rows<W: Write>(
    w: &mut ::csv::Writer<W>,
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
    w: &mut ::csv::Writer<W>,
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
                .then(|| judges.get(&(r.rater.clone(), r.response_id, r.criterion_id)))
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
