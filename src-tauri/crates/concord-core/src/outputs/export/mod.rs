//! Exports of a study's ratings for analysis elsewhere, and the Excel rating sheet an expert can
//! fill in instead of using the app: a long CSV (one row per rating), a wide CSV (one row per
//! response × rater, one column per criterion), an XLSX workbook (one sheet per expert, the
//! codebook, the agreement report) and the fill-in sheet with its import ([`sheet`]).
//!
//! Every text cell leaving Concord goes through [`neutralise`]: a text beginning with `=`, `+`,
//! `-`, `@`, a tab or a carriage return gets a leading single quote, so no spreadsheet runs a
//! dataset's text as a formula (CSV injection); XLSX cells are written as strings, never formulas.
//! A text that is a plain negative number (`-3`, `-0.5`) is left alone, and numeric values are
//! written as numbers. Timestamps are ISO-8601 UTC.
//!
//! An export of an encrypted study is a plain file: it comes with [`plain_copy_warning`] (the
//! CLI prints it, the window shows it before writing). Concord deliberately offers no encrypted
//! ZIP/XLSX instead: Excel, R and SPSS cannot open an AES ZIP, so the analyst would unpack it into
//! a plain file anyway, and a password-protected XLSX needs Office's own encryption format, which
//! no maintained Rust writer produces; the honest safeguard is to say what the file is.

pub mod csv;
mod order;

/// What to tell the person who exports from an encrypted study: the file written is not.
pub fn plain_copy_warning(file: &std::path::Path) -> String {
    format!(
        "{} is a plain, unencrypted file: the study is encrypted, this export is not. Keep it on an \
         encrypted disk, do not send it by e-mail, and delete it when the analysis is done",
        file.display()
    )
}

mod pair_sheet;
pub mod sheet;
pub mod span_sheet;
pub mod spans;
pub mod workbook;

pub use self::csv::{write_long_csv, write_wide_csv, CsvOptions, CsvSummary, JudgeRepetitions};
pub use sheet::{import_rating_sheet, write_rating_sheet, SheetImportReport, SheetSummary};
pub use workbook::{write_workbook, CellError, WorkbookOptions, WorkbookSummary};

use crate::base::cell::{neutralise, unneutralise};
use crate::base::clock::iso_utc;
use crate::base::clock::Millis;
use crate::base::text::quoted;
use crate::store::{
    CriterionRef, Occasion, RaterRecord, ResponseLabel, SignatureState, Store, StoreError,
};
use order::RawRating;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path}: cannot write: {detail}")]
    Io { path: String, detail: String },
    #[error("could not write the workbook: {0}")]
    Xlsx(#[from] rust_xlsxwriter::XlsxError),
    #[error("could not write CSV: {0}")]
    Csv(#[from] ::csv::Error),
    #[error("no rater named {q0} in this study", q0 = quoted(&.0))]
    UnknownRater(String),
    #[error("{q0} is an LLM judge; rating sheets are for experts", q0 = quoted(&.0))]
    NotAnExpert(String),
    #[error("{q0} has no assigned items; run the assignment first", q0 = quoted(&.0))]
    NothingAssigned(String),
    #[error("{without} of the {items} items assigned to {q0} have no answer text in the study (it holds their ratings, not the answers, as the MentalAlign release does): the expert would get blank items. Import the MentalBench-100k file to fill them (concord import mentalbench FILE), or make the assignment again with a reason to go ahead without them (--without-text REASON), which is recorded", q0 = quoted(rater))]
    AnswersWithoutText {
        rater: String,
        without: usize,
        items: usize,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<std::io::Error> for ExportError {
    fn from(e: std::io::Error) -> Self {
        ExportError::Io {
            path: String::new(),
            detail: e.to_string(),
        }
    }
}

/// A criterion as exports name it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CriterionColumn {
    pub id: i64,
    pub rubric: String,
    pub key: String,
    /// Header text: the key, or `rubric:key` when several rubrics use the key.
    pub header: String,
}

/// Every criterion of the study, rubric by rubric in rubric order.
pub(crate) fn criterion_columns(store: &Store) -> Result<Vec<CriterionColumn>, ExportError> {
    let rows: Vec<(i64, String, String)> = store
        .criterion_refs()?
        .into_iter()
        .map(|c| (c.id, c.rubric, c.key))
        .collect();
    let dup = |key: &str| rows.iter().filter(|r| r.2 == key).count() > 1;
    Ok(rows
        .iter()
        .map(|(id, rubric, key)| CriterionColumn {
            id: *id,
            rubric: rubric.clone(),
            key: key.clone(),
            header: if dup(key) {
                format!("{rubric}:{key}")
            } else {
                key.clone()
            },
        })
        .collect())
}

/// Whether the study's exports carry the columns of conversations (`turn`, `scope`): it holds
/// transcripts or a session rubric. A study of single-turn conversations alone exports without
/// them, byte for byte as before they existed (as pair columns appear only with pairs).
pub(crate) fn has_conversation_columns(store: &Store) -> Result<bool, ExportError> {
    if store.has_transcripts()? {
        return Ok(true);
    }
    // A session rubric counts once it has items: every new study lists the built-in rubrics.
    for r in store.rubrics()? {
        if r.rubric.scope == crate::rubric::Scope::Session
            && !store
                .conversations_of_rubric(Some(&r.rubric.id))?
                .is_empty()
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The turn an export writes for an item: its own for a transcript's reply, 2 for a single-turn
/// conversation's answer (after the user's message), none for a session item.
pub(crate) fn shown_turn(stored: Option<i64>, scope: crate::rubric::Scope) -> Option<i64> {
    match scope {
        crate::rubric::Scope::Session => None,
        crate::rubric::Scope::Reply => stored.or(Some(2)),
    }
}

/// One rating as exports read it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RatingRow {
    pub conversation: String,
    pub response: String,
    pub response_id: i64,
    pub source: String,
    /// The item's turn as exports write it ([`shown_turn`]).
    pub turn: Option<i64>,
    /// The scope of the rating's rubric.
    pub scope: crate::rubric::Scope,
    pub rater_id: i64,
    pub rater: String,
    pub rater_kind: String,
    pub rubric: String,
    pub criterion_id: i64,
    pub criterion: String,
    pub occasion: &'static str,
    pub value: Option<i64>,
    pub raw_value: Option<String>,
    pub rationale: Option<String>,
    pub created_at: Millis,
    pub updated_at: Millis,
    /// Signed, changed after signature, or neither.
    pub signature: SignatureState,
}

/// What ratings are exported with, each list in export order: the responses by (conversation
/// external id, turn, source key; an earlier release's items have no turn, so they keep the order
/// of conversation and source), the raters by (kind, name), the criteria by (rubric, position). A
/// [`order::RawRating`]'s rank holds positions in these lists.
pub(crate) struct Labels {
    pub responses: Vec<ResponseLabel>,
    /// Each response's turn as exports write it ([`shown_turn`]) and its rubric's scope, in the
    /// order of `responses`.
    pub places: Vec<(Option<i64>, crate::rubric::Scope)>,
    pub raters: Vec<RaterRecord>,
    pub criteria: Vec<CriterionRef>,
}

impl Labels {
    /// The study's responses, raters and criteria, put in export order.
    fn load(store: &Store) -> Result<Labels, ExportError> {
        let mut responses = store.response_labels()?;
        responses.sort_by(|a, b| {
            (&a.conversation, a.turn.unwrap_or(0), &a.source, a.id).cmp(&(
                &b.conversation,
                b.turn.unwrap_or(0),
                &b.source,
                b.id,
            ))
        });
        let scopes: std::collections::HashMap<i64, crate::rubric::Scope> = store
            .rubrics()?
            .into_iter()
            .map(|r| (r.id, r.rubric.scope))
            .collect();
        let places = responses
            .iter()
            .map(|r| {
                let scope = scopes.get(&r.rubric_id).copied().unwrap_or_default();
                (shown_turn(r.turn, scope), scope)
            })
            .collect();
        let mut raters = store.rater_records()?;
        raters.sort_by(|a, b| (&a.kind, &a.name).cmp(&(&b.kind, &b.name)));
        Ok(Labels {
            responses,
            places,
            raters,
            criteria: store.criterion_refs()?,
        })
    }

    /// A ranked rating with its names.
    fn row(&self, raw: RawRating) -> RatingRow {
        let (rr, ra, occasion, cr) = raw.rank;
        let response = &self.responses[rr as usize];
        let place = self.places[rr as usize];
        let rater = &self.raters[ra as usize];
        let criterion = &self.criteria[cr as usize];
        let (raw_value, rationale) = raw.texts.map_or((None, None), |t| *t);
        RatingRow {
            conversation: response.conversation.clone(),
            response: response.response.clone(),
            response_id: response.id,
            source: response.source.clone(),
            turn: place.0,
            scope: place.1,
            rater_id: rater.id,
            rater: rater.name.clone(),
            rater_kind: rater.kind.clone(),
            rubric: criterion.rubric.clone(),
            criterion_id: criterion.id,
            criterion: criterion.key.clone(),
            occasion: Occasion::ALL[usize::from(occasion)].as_str(),
            value: raw.value,
            raw_value,
            rationale,
            created_at: raw.created_at,
            updated_at: raw.updated_at,
            signature: raw.signature,
        }
    }
}

/// Visit every rating (optionally of one rater) in export order: conversation, source, rater
/// (experts first, by name), occasion, rubric, criterion. The rating table is scanned plainly
/// (one rater through its index) and names come from maps loaded once, which is much faster than
/// letting SQLite join and sort hundreds of thousands of rows; the rows are put in order in
/// bounded memory (sorted runs of `run_rows`, spilled and merged when there are more; an
/// encrypted study's runs are sealed on disk).
pub(crate) fn for_each_rating(
    store: &Store,
    rater: Option<&str>,
    run_rows: usize,
    mut f: impl FnMut(RatingRow) -> Result<(), ExportError>,
) -> Result<usize, ExportError> {
    for_each_ranked_rating(store, rater, run_rows, |labels, raw| f(labels.row(raw)))
}

/// [`for_each_rating`] handing each rating over as it was ranked, beside the names its rank
/// points to, so a writer can reuse what it made of a name for every rating that has it.
pub(crate) fn for_each_ranked_rating(
    store: &Store,
    rater: Option<&str>,
    run_rows: usize,
    mut f: impl FnMut(&Labels, RawRating) -> Result<(), ExportError>,
) -> Result<usize, ExportError> {
    let rater_id: Option<i64> = match rater {
        Some(name) => match store.rater_named(name)? {
            Some(r) => Some(r.id),
            None => return Ok(0),
        },
        None => None,
    };
    let labels = Labels::load(store)?;
    let response_at: foldhash::HashMap<i64, u32> = labels
        .responses
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id, i as u32))
        .collect();
    let rater_at: foldhash::HashMap<i64, u32> = labels
        .raters
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id, i as u32))
        .collect();
    let criterion_at: foldhash::HashMap<i64, u32> = labels
        .criteria
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id, i as u32))
        .collect();

    let mut rows = order::Ordering::new(run_rows, store.is_encrypted());
    let mut failed = None;
    let scanned = store.for_each_rating_signed(rater_id, |r| {
        let (Some(&rr), Some(&ra), Some(&cr)) = (
            response_at.get(&r.response_id),
            rater_at.get(&r.rater_id),
            criterion_at.get(&r.criterion_id),
        ) else {
            return Ok(());
        };
        let texts = (r.raw_value.is_some() || r.rationale.is_some())
            .then(|| Box::new((r.raw_value, r.rationale)));
        let pushed = rows.push(RawRating {
            // Occasions are declared in `Occasion::ALL` order, so the discriminant indexes it.
            rank: (rr, ra, r.occasion as u8, cr),
            value: r.value,
            texts,
            created_at: r.created_at,
            updated_at: r.updated_at,
            signature: SignatureState::of(r.signed_at, r.updated_at),
        });
        if let Err(e) = pushed {
            failed = Some(e);
            return Err(StoreError::Invalid("the export stopped".into()));
        }
        Ok(())
    });
    if let Some(e) = failed {
        return Err(e);
    }
    scanned?;
    rows.finish(|raw| f(&labels, raw))
}
