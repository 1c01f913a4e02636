//! The methods appendix's span tables, written only when raters marked evidence on the
//! appendix rubric's replies (every other appendix is as it was):
//! - `spans.csv` — every located span the figures read (conversation, turn, source, rater, kind,
//!   code, `[start, end)` in characters);
//! - `span_replies.csv` — each compared reply's length and each rater who covers it (rated it on
//!   some criterion or marked it), in the order the replies are laid end to end;
//! - `span_agreement.csv` — per code and over all codes, unitized α among the experts and each
//!   pair's exact and overlap F1, with the bootstrap intervals over replies.
//!
//! `recompute.py` recomputes every α and F1 from the first two with its own transcription of
//! Krippendorff's unitized α (as DKPro Statistics computes it, in exact fractions) to 1e-6; the
//! intervals depend on Concord's random stream and are not redrawn.

use crate::base::cell::neutralise;
use crate::panel::span_agreement::{
    CodeAgreement, SpanAgreementOptions, SpanAgreementReport, SpanInputs,
};
use std::fmt::Write as _;

/// The files an appendix with spans adds, in the order written (after every other file).
pub const SPAN_FILES: [&str; 3] = ["spans.csv", "span_replies.csv", "span_agreement.csv"];

/// Header of `spans.csv`.
pub const SPANS_HEADER: [&str; 8] = [
    "conversation_id",
    "turn",
    "source",
    "rater",
    "rater_kind",
    "code",
    "start",
    "end",
];

/// Header of `span_replies.csv`.
pub const REPLIES_HEADER: [&str; 5] = ["conversation_id", "turn", "source", "length", "rater"];

/// Header of `span_agreement.csv`: one line per code (then `all`) for α, and per code and pair
/// of raters for each F1.
pub const SPAN_AGREEMENT_HEADER: [&str; 10] = [
    "rubric",
    "code",
    "figure",
    "a",
    "b",
    "value",
    "ci_low",
    "ci_high",
    "resamples",
    "seed",
];

/// What the appendix's span figures are computed with: the report's defaults (1,000 resamples of
/// replies, its seed).
pub fn span_options() -> SpanAgreementOptions {
    SpanAgreementOptions::default()
}

fn figure(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => v.to_string(),
        _ => String::new(),
    }
}

/// `spans.csv`, `span_replies.csv` and `span_agreement.csv`.
pub fn span_tables(
    report: &SpanAgreementReport,
    inputs: &SpanInputs,
) -> Result<[Vec<u8>; 3], csv::Error> {
    let text = |s: &str| neutralise(s).into_owned();
    let mut spans = csv::Writer::from_writer(Vec::new());
    spans.write_record(SPANS_HEADER)?;
    for s in &inputs.spans {
        spans.write_record([
            text(&s.conversation),
            s.turn.to_string(),
            text(&s.source),
            text(&s.rater),
            s.kind.clone(),
            text(&s.code),
            s.start.to_string(),
            s.end.to_string(),
        ])?;
    }
    let mut replies = csv::Writer::from_writer(Vec::new());
    replies.write_record(REPLIES_HEADER)?;
    for c in &inputs.coverage {
        replies.write_record([
            text(&c.conversation),
            c.turn.to_string(),
            text(&c.source),
            c.length.to_string(),
            text(&c.rater),
        ])?;
    }
    let mut agreement = csv::Writer::from_writer(Vec::new());
    agreement.write_record(SPAN_AGREEMENT_HEADER)?;
    let rubric = text(&report.rubric);
    let (resamples, seed) = (report.resamples.to_string(), report.seed.to_string());
    let mut code_rows = |c: &CodeAgreement| -> Result<(), csv::Error> {
        let ci = |i: &Option<crate::panel::span_agreement::Interval>| {
            (
                figure(i.and_then(|i| i.lower)),
                figure(i.and_then(|i| i.upper)),
            )
        };
        let (lo, hi) = ci(&c.alpha_u_ci);
        agreement.write_record([
            rubric.clone(),
            text(&c.code),
            "alpha_u".into(),
            String::new(),
            String::new(),
            figure(c.alpha_u),
            lo,
            hi,
            resamples.clone(),
            seed.clone(),
        ])?;
        for p in &c.pairs {
            for (name, value, interval) in [
                ("f1_exact", p.f1_exact, &p.f1_exact_ci),
                ("f1_overlap", p.f1_overlap, &p.f1_overlap_ci),
            ] {
                let (lo, hi) = ci(interval);
                agreement.write_record([
                    rubric.clone(),
                    text(&c.code),
                    name.into(),
                    text(&p.a),
                    text(&p.b),
                    figure(value),
                    lo,
                    hi,
                    resamples.clone(),
                    seed.clone(),
                ])?;
            }
        }
        Ok(())
    };
    for c in report.codes.iter().chain(std::iter::once(&report.overall)) {
        code_rows(c)?;
    }
    let done =
        |w: csv::Writer<Vec<u8>>| w.into_inner().map_err(|e| csv::Error::from(e.into_error()));
    Ok([done(spans)?, done(replies)?, done(agreement)?])
}

/// The methods of the span tables, appended to the paragraph.
pub fn span_paragraph(s: &mut String, report: &SpanAgreementReport) {
    let experts = report.raters.iter().filter(|r| r.kind == "expert").count();
    let judges = report.raters.len() - experts;
    let _ = writeln!(
        s,
        "\n## Evidence spans\n\n\
{experts} experts and {judges} judges marked spans of the `{rubric}` rubric's replies with its codes ({marked} replies marked); offsets count Unicode characters of the reply's text. \
A rater takes part when it marked at least one span; it *covers* a reply it rated on some criterion or marked. \
`span_agreement.csv` gives, per code and over all codes (`all`), Krippendorff's unitized α (Krippendorff 1995, 2004, as DKPro Statistics computes it) among the experts, on a continuum of the replies at least one expert marked among those every expert covers ({continuum} replies, {characters} characters), laid end to end in the order of conversation id, turn and source, one expert's overlapping spans of one code merged; and for every two raters span F1 on the replies both cover: exact (a span matches one of the other rater's with the same code and the same start and end, one to one; F1 = 2·matches / (spans of both)) and overlap (a span matches when one of the other's with the same code shares a character; F1 from the shares of each rater's spans matched). \
A judge's quote that could not be found in its reply has no offsets and is left out. \
Each figure has a 95% percentile bootstrap interval over the marked replies ({resamples} resamples, seed {seed}, ChaCha8 generator; each figure keeps the replicates where it is defined). \
`spans.csv` and `span_replies.csv` hold what the figures read; `recompute.py` recomputes every α and F1 from them to 1e-6, α with its own transcription of Krippendorff's formulas in exact fractions; the intervals depend on the random stream and are not redrawn.",
        rubric = report.rubric,
        marked = report.replies_marked,
        continuum = report.continuum_replies,
        characters = report.continuum_characters,
        resamples = report.resamples,
        seed = report.seed,
    );
}
