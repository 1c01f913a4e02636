//! The agreement table a researcher reads and publishes: one row per criterion (then per group),
//! one column per judge (or judge × expert, or expert pair), each cell an ICC with its 95% CI,
//! bias, MSE, n and precision status, and — when several experts rated the same responses — a
//! verdict placing the judge against the human ceiling. The same table drives the desktop panel,
//! `concord agreement --format csv|md|latex` and the exports, so what is on screen is what is
//! written.
//!
//! **Verdict rule.** The expert band of a criterion is, at item level for ICC(A,1) and ICC(C,1),
//! the 95% interval of the experts' REML ICC over all their ratings (exact for the incomplete
//! designs an assignment produces, see [`crate::panel::agreement::verdict`]; applied by
//! [`use_reml_bands`]); otherwise the span of the 95% CIs of its expert–expert cells (lowest
//! lower bound to highest upper bound) at the same level and ICC form. Each row says which.
//! A judge is *below* the band when its whole CI lies under the band, *above* when its whole CI
//! lies over it, and *inside* otherwise (the intervals overlap): the intervals decide, never the
//! point estimates alone. A band that cannot discriminate — 0.9 or more wide (a band of 0.00–1.00),
//! or resting on fewer than three responses rated by two or more experts — places no judge; the
//! row says so instead.

use crate::guard::provenance::Provenance;
pub use crate::panel::agreement::verdict::Verdict;
use crate::panel::agreement::verdict::{band_uninformative, placing_band, verdict};
use crate::panel::agreement::AgreementCell;
use crate::panel::agreement::AgreementReport;
use crate::panel::agreement::CiMethod;
use crate::panel::agreement::Comparison;
use crate::panel::agreement::Level;
use crate::panel::agreement::Precision;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Which ICC the table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum IccChoice {
    /// Consistency, single rater (= Shrout–Fleiss ICC(3,1)); the MentalAlign headline.
    C1,
    /// Absolute agreement, single rater (= ICC(2,1)).
    A1,
    /// One-way random effects, single rater (ICC(1,1)).
    Icc1,
    /// One-way random effects, mean of the raters (ICC(1,k)).
    Icc1k,
    /// Absolute agreement, mean of the raters (ICC(A,k) = ICC(2,k)).
    Ak,
    /// Consistency, mean of the raters (ICC(C,k) = ICC(3,k)).
    Ck,
}

impl IccChoice {
    /// The form's name in the report's `icc_forms` (pingouin's names).
    fn form(self) -> &'static str {
        match self {
            IccChoice::C1 => "ICC3",
            IccChoice::A1 => "ICC2",
            IccChoice::Icc1 => "ICC1",
            IccChoice::Icc1k => "ICC1k",
            IccChoice::Ak => "ICC2k",
            IccChoice::Ck => "ICC3k",
        }
    }
}

/// Which interval the table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum CiChoice {
    /// The cell's headline interval (percentile bootstrap at system level for ICC(C,1); at item
    /// level over transcripts, the conversation-cluster bootstrap).
    Bootstrap,
    /// McGraw & Wong's F-based interval.
    F,
}

/// What part of a report the table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TableView {
    pub level: Level,
    pub comparison: Comparison,
    pub icc: IccChoice,
    pub ci: CiChoice,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TableCell {
    pub icc: Option<f64>,
    pub ci95: [Option<f64>; 2],
    /// The interval shown is the F-based one (asked for, or the only one available).
    pub ci_is_f: bool,
    /// The interval shown is the conversation-cluster bootstrap (item level over transcripts).
    pub ci_is_cluster: bool,
    pub bias: Option<f64>,
    pub mse: Option<f64>,
    pub n_targets: usize,
    pub n_pairs: usize,
    pub status: Option<Precision>,
    pub verdict: Option<Verdict>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TableRow {
    pub criterion: String,
    pub attribute: String,
    pub group: Option<String>,
    pub is_group: bool,
    /// The experts' band for this criterion (see `band_method`).
    pub expert_band: Option<[f64; 2]>,
    /// How the band was found.
    pub band_method: Option<BandMethod>,
    /// The band cannot place a judge (`verdict::band_uninformative`: 0.9 or more wide, or resting on
    /// fewer than three responses rated by two or more experts): its cells carry no verdict and the
    /// panel warns instead.
    pub band_uninformative: bool,
    /// Responses rated by two or more experts, as the band was estimated from (the most any
    /// two experts share, for a band spanning their pairs' intervals).
    pub band_overlap: Option<usize>,
    pub cells: Vec<Option<TableCell>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TableColumn {
    /// The rater under study (judge model id, or expert name).
    pub rater: String,
    /// `experts` or the reference expert's name.
    pub reference: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AgreementTable {
    pub view: TableView,
    pub columns: Vec<TableColumn>,
    pub rows: Vec<TableRow>,
    /// The rule that decides each verdict, in words (shown on hover).
    pub verdict_rule: String,
}

pub const VERDICT_RULE: &str = "Expert band = at item level for ICC(A,1) and ICC(C,1), the 95% profile-likelihood CI of the experts' REML ICC over all their ratings (incomplete designs included); otherwise from the lowest lower bound to the highest upper bound of the expert–expert 95% CIs for this criterion. Below: the judge's whole 95% CI lies under the band. Above: it lies over the band. Inside: the intervals overlap. A band 0.9 or more wide, or resting on fewer than three responses rated by two or more experts, places no judge.";

/// Where a row's expert band comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum BandMethod {
    /// The 95% CI of the experts' REML ICC (all experts, all their ratings).
    Reml,
    /// The span of the expert–expert pairs' 95% CIs.
    ExpertPairs,
}

/// [`table`] with the bands of [`use_reml_bands`], reading the report's ratings from `store`
/// (what the command line prints; the window uses the ratings it holds in memory).
pub fn table_with_reml_bands(
    store: &crate::store::Store,
    report: &AgreementReport,
    view: TableView,
) -> crate::store::StoreResult<AgreementTable> {
    let mut t = table(report, view);
    if view.level == Level::Item && matches!(view.icc, IccChoice::A1 | IccChoice::C1) {
        let data =
            crate::panel::agreement::AgreementData::load_compared(store, &report.options.rubric)?;
        use_reml_bands(
            &mut t,
            &crate::panel::agreement::verdict::expert_baselines(&data),
        );
    }
    Ok(t)
}

/// At item level for ICC(A,1) or ICC(C,1), replace each attribute row's band by the 95% CI of the
/// experts' REML ICC of that form (when it has one) and place the judges against it again.
pub fn use_reml_bands(
    table: &mut AgreementTable,
    baselines: &[crate::panel::agreement::verdict::ExpertBaseline],
) {
    let form = match (table.view.level, table.view.icc) {
        (Level::Item, IccChoice::A1) => {
            |b: &crate::panel::agreement::verdict::ExpertBaseline| b.ci95_a1
        }
        (Level::Item, IccChoice::C1) => {
            |b: &crate::panel::agreement::verdict::ExpertBaseline| b.ci95_c1
        }
        _ => return,
    };
    let judges = table.view.comparison != Comparison::ExpertVsExpert;
    for row in table.rows.iter_mut().filter(|r| !r.is_group) {
        let Some([Some(lo), Some(hi)]) = baselines
            .iter()
            .find(|b| b.criterion == row.criterion)
            .map(form)
        else {
            continue;
        };
        row.expert_band = Some([lo, hi]);
        row.band_method = Some(BandMethod::Reml);
        row.band_overlap = baselines
            .iter()
            .find(|b| b.criterion == row.criterion)
            .map(|b| b.n_overlap);
        row.band_uninformative = band_uninformative([lo, hi], row.band_overlap);
        if judges {
            for cell in row.cells.iter_mut().flatten() {
                cell.verdict = verdict(cell.ci95, placing_band(row.expert_band, row.band_overlap));
            }
        }
    }
}

fn value(cell: &AgreementCell, icc: IccChoice) -> Option<f64> {
    match icc {
        IccChoice::C1 => cell.icc_c1,
        IccChoice::A1 => cell.icc_a1,
        other => cell
            .icc_forms
            .iter()
            .find(|f| f.form == other.form())
            .and_then(|f| f.value),
    }
}

fn interval(cell: &AgreementCell, view: &TableView) -> ([Option<f64>; 2], bool) {
    match (view.icc, view.ci) {
        (IccChoice::C1, CiChoice::Bootstrap)
            if matches!(cell.ci_method, CiMethod::Bootstrap | CiMethod::Cluster) =>
        {
            (cell.ci95, false)
        }
        (IccChoice::C1, _) => (cell.ci95_f_c1, true),
        (IccChoice::A1, _) => (cell.ci95_f_a1, true),
        (other, _) => (
            cell.icc_forms
                .iter()
                .find(|f| f.form == other.form())
                .map(|f| f.ci95)
                .unwrap_or([None, None]),
            true,
        ),
    }
}

/// The most responses any two experts both rated on `criterion` (the expert–expert cells' targets).
fn overlap_of(cells: &[&AgreementCell], view: &TableView, criterion: &str) -> Option<usize> {
    cells
        .iter()
        .filter(|c| {
            c.comparison == Comparison::ExpertVsExpert
                && c.level == view.level
                && c.criterion == criterion
        })
        .map(|c| c.n_targets)
        .max()
}

fn band_of(cells: &[&AgreementCell], view: &TableView, criterion: &str) -> Option<[f64; 2]> {
    let mut band: Option<[f64; 2]> = None;
    for c in cells.iter().filter(|c| {
        c.comparison == Comparison::ExpertVsExpert
            && c.level == view.level
            && c.criterion == criterion
    }) {
        if let ([Some(lo), Some(hi)], _) = interval(c, view) {
            band = Some(match band {
                None => [lo, hi],
                Some([a, b]) => [a.min(lo), b.max(hi)],
            });
        }
    }
    band
}

/// Shape a report into the table for `view`.
pub fn table(report: &AgreementReport, view: TableView) -> AgreementTable {
    let all: Vec<&AgreementCell> = report.cells.iter().collect();
    let shown: Vec<&AgreementCell> = all
        .iter()
        .copied()
        .filter(|c| c.comparison == view.comparison && c.level == view.level)
        .collect();
    let mut columns: Vec<TableColumn> = Vec::new();
    let mut rows: Vec<TableRow> = Vec::new();
    for c in &shown {
        if !columns
            .iter()
            .any(|k| k.rater == c.rater && k.reference == c.reference)
        {
            let label = if view.comparison == Comparison::JudgeVsExperts {
                c.rater.clone()
            } else {
                format!("{} vs {}", c.rater, c.reference)
            };
            columns.push(TableColumn {
                rater: c.rater.clone(),
                reference: c.reference.clone(),
                label,
            });
        }
        if !rows.iter().any(|r| r.criterion == c.criterion) {
            rows.push(TableRow {
                criterion: c.criterion.clone(),
                attribute: c.attribute.clone(),
                group: c.group.clone(),
                is_group: c.is_group,
                expert_band: band_of(&all, &view, &c.criterion),
                band_method: band_of(&all, &view, &c.criterion).map(|_| BandMethod::ExpertPairs),
                band_uninformative: band_of(&all, &view, &c.criterion)
                    .is_some_and(|b| band_uninformative(b, overlap_of(&all, &view, &c.criterion))),
                band_overlap: overlap_of(&all, &view, &c.criterion),
                cells: Vec::new(),
            });
        }
    }
    // Attributes first, then group rows, each in report order.
    rows.sort_by_key(|r| r.is_group);
    for row in &mut rows {
        row.cells = columns
            .iter()
            .map(|col| {
                shown
                    .iter()
                    .find(|c| {
                        c.criterion == row.criterion
                            && c.rater == col.rater
                            && c.reference == col.reference
                    })
                    .map(|c| {
                        let (ci95, ci_is_f) = interval(c, &view);
                        TableCell {
                            icc: value(c, view.icc),
                            ci95,
                            ci_is_f,
                            ci_is_cluster: !ci_is_f && c.ci_method == CiMethod::Cluster,
                            bias: c.bias,
                            mse: c.mse,
                            n_targets: c.n_targets,
                            n_pairs: c.n_pairs,
                            status: c.status,
                            verdict: if view.comparison == Comparison::ExpertVsExpert {
                                None
                            } else {
                                verdict(ci95, placing_band(row.expert_band, row.band_overlap))
                            },
                        }
                    })
            })
            .collect();
    }
    AgreementTable {
        view,
        columns,
        rows,
        verdict_rule: VERDICT_RULE.to_string(),
    }
}

/// Text formats of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum TableFormat {
    Csv,
    Md,
    Latex,
}

impl TableFormat {
    pub fn extension(self) -> &'static str {
        match self {
            TableFormat::Csv => "csv",
            TableFormat::Md => "md",
            TableFormat::Latex => "tex",
        }
    }
}

fn num(x: Option<f64>, digits: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.digits$}"),
        _ => String::new(),
    }
}

/// APA style: leading zero dropped for values bounded by 1 ("ICC [95% CI]" → ".88 [.80, .95]").
fn apa(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => {
            let s = format!("{v:.3}");
            s.replacen("0.", ".", 1)
        }
        _ => "—".to_string(),
    }
}

fn signed(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:+.3}"),
        _ => "—".to_string(),
    }
}

fn icc_name(view: &TableView) -> &'static str {
    match view.icc {
        IccChoice::C1 => "ICC(C,1)",
        IccChoice::A1 => "ICC(A,1)",
        IccChoice::Icc1 => "ICC(1,1)",
        IccChoice::Icc1k => "ICC(1,k)",
        IccChoice::Ak => "ICC(A,k)",
        IccChoice::Ck => "ICC(C,k)",
    }
}

fn csv_field(s: &str) -> String {
    // Neutralise spreadsheet formulas (the exports' one guard) and quote as RFC 4180 requires.
    let s = crate::base::cell::neutralise(s);
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.into_owned()
    }
}

/// A name in a Markdown table cell: HTML's `<`, `>`, `&` and quotes as entities (a viewer that
/// renders HTML shows them, never runs them), Markdown's own marks backslash-escaped, line breaks
/// as spaces, and control characters made visible.
fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in crate::base::text::visible(s).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '|' | '!' | '~' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// A name in LaTeX text: every special character as its text-mode command, each once.
fn tex_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in crate::base::text::visible(s).chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("\\textless{}"),
            '>' => out.push_str("\\textgreater{}"),
            _ => out.push(c),
        }
    }
    out
}

/// Render the table as CSV (one line per cell, machine-readable), Markdown or LaTeX (APA style
/// "ICC [95% CI]", one column per judge), with its reproducibility record: the CSV repeats it in
/// last columns (`audit_head`, `concord_version`, `options`, `lead_key`), Markdown ends with it, LaTeX
/// opens with it as comments.
pub fn render(t: &AgreementTable, format: TableFormat, provenance: &Provenance) -> String {
    let mut out = String::new();
    match format {
        TableFormat::Csv => render_csv(&mut out, t, provenance),
        TableFormat::Md => render_md(&mut out, t, provenance),
        TableFormat::Latex => render_latex(&mut out, t, provenance),
    }
    out
}

/// The CSV: a header line, then one line per cell (row by row, column by column), each ending
/// with the reproducibility record.
fn render_csv(out: &mut String, t: &AgreementTable, provenance: &Provenance) {
    let head = provenance.audit_head.clone().unwrap_or_default();
    let options = provenance.options.to_string();
    out.push_str("criterion,attribute,group,is_group,rater,reference,level,icc_form,icc,ci_low,ci_high,ci_method,bias,mse,n_targets,n_pairs,status,verdict,audit_head,concord_version,options,lead_key\n");
    for row in &t.rows {
        for (col, cell) in t.columns.iter().zip(&row.cells) {
            let Some(c) = cell else { continue };
            let fields = [
                csv_field(&row.criterion),
                csv_field(&row.attribute),
                csv_field(row.group.as_deref().unwrap_or("")),
                row.is_group.to_string(),
                csv_field(&col.rater),
                csv_field(&col.reference),
                t.view.level.as_str().to_string(),
                csv_field(icc_name(&t.view)),
                num(c.icc, 6),
                num(c.ci95[0], 6),
                num(c.ci95[1], 6),
                match (c.ci_is_f, c.ci_is_cluster) {
                    (true, _) => "F",
                    (false, true) => "cluster bootstrap",
                    (false, false) => "bootstrap",
                }
                .to_string(),
                num(c.bias, 6),
                num(c.mse, 6),
                c.n_targets.to_string(),
                c.n_pairs.to_string(),
                c.status.map(|s| s.as_str()).unwrap_or("").to_string(),
                c.verdict
                    .map(|v| format!("{v:?}").to_lowercase())
                    .unwrap_or_default(),
                head.clone(),
                csv_field(&provenance.concord_version),
                csv_field(&options),
                provenance.lead_key.clone().unwrap_or_default(),
            ];
            out.push_str(&fields.join(","));
            out.push('\n');
        }
    }
}

/// The Markdown table: a caption line, one column per judge, each cell "ICC [CI]; bias", and the
/// reproducibility record as a closing italic line.
fn render_md(out: &mut String, t: &AgreementTable, provenance: &Provenance) {
    let _ = writeln!(
        out,
        "{} [95% CI], {} level; bias = mean(rater − reference).\n",
        icc_name(&t.view),
        t.view.level.as_str()
    );
    out.push_str("| Attribute |");
    for col in &t.columns {
        let _ = write!(out, " {} |", md_text(&col.label));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(t.columns.len()));
    out.push('\n');
    for row in &t.rows {
        let name = if row.is_group {
            format!("**{}**", md_text(&row.attribute))
        } else {
            md_text(&row.attribute)
        };
        let _ = write!(out, "| {name} |");
        for cell in &row.cells {
            match cell {
                Some(c) => {
                    let _ = write!(
                        out,
                        " {} [{}, {}]; bias {} |",
                        apa(c.icc),
                        apa(c.ci95[0]),
                        apa(c.ci95[1]),
                        signed(c.bias)
                    );
                }
                None => out.push_str(" — |"),
            }
        }
        out.push('\n');
    }
    let _ = writeln!(out, "\n_{}_", provenance.line().replace('_', "\\_"));
}

/// The LaTeX table: the reproducibility record as comments, then a captioned tabular with one
/// column per judge, each cell "ICC [CI]".
fn render_latex(out: &mut String, t: &AgreementTable, provenance: &Provenance) {
    let esc = tex_text;
    for line in provenance.line().lines() {
        let _ = writeln!(out, "% {line}");
    }
    out.push_str("\\begin{table}[ht]\n\\centering\n");
    let _ = writeln!(
        out,
        "\\caption{{{} [95\\% CI] between LLM judges and experts ({} level)}}",
        icc_name(&t.view),
        t.view.level.as_str()
    );
    let _ = writeln!(
        out,
        "\\begin{{tabular}}{{l{}}}",
        "c".repeat(t.columns.len())
    );
    out.push_str("\\hline\nAttribute");
    for col in &t.columns {
        let _ = write!(out, " & {}", esc(&col.label));
    }
    out.push_str(" \\\\\n\\hline\n");
    for row in &t.rows {
        let name = if row.is_group {
            format!("\\textbf{{{}}}", esc(&row.attribute))
        } else {
            esc(&row.attribute)
        };
        out.push_str(&name);
        for cell in &row.cells {
            match cell {
                Some(c) => {
                    let _ = write!(
                        out,
                        " & {} [{}, {}]",
                        apa(c.icc),
                        apa(c.ci95[0]),
                        apa(c.ci95[1])
                    );
                }
                None => out.push_str(" & ---"),
            }
        }
        out.push_str(" \\\\\n");
    }
    out.push_str("\\hline\n\\end{tabular}\n\\end{table}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apa_drops_the_leading_zero_and_csv_neutralises_formulas() {
        assert_eq!(
            apa(Some(0.8812)),
            ".881",
            "APA style for bounded statistics"
        );
        assert_eq!(apa(Some(-0.25)), "-.250", "negative ICCs keep their sign");
        assert_eq!(
            csv_field("=HYPERLINK(\"x\")"),
            "\"'=HYPERLINK(\"\"x\"\")\"",
            "formula neutralised and quoted"
        );
        assert_eq!(csv_field("-0.5"), "-0.5", "numbers stay numbers");
        assert_eq!(
            csv_field("+1"),
            "'+1",
            "the exports' guard: a leading + is defused even when it reads as a number"
        );
        assert_eq!(
            csv_field("-inf"),
            "'-inf",
            "only plain decimal numbers escape the guard"
        );
    }

    #[test]
    fn markdown_and_latex_exports_escape_the_markup_in_names() {
        let t = AgreementTable {
            view: TableView {
                level: crate::panel::agreement::Level::System,
                comparison: crate::panel::agreement::Comparison::JudgeVsExperts,
                icc: IccChoice::C1,
                ci: CiChoice::Bootstrap,
            },
            columns: vec![TableColumn {
                rater: "j".into(),
                reference: "experts".into(),
                label: "<img src=x onerror=alert(1)> *b* a|b".into(),
            }],
            rows: vec![TableRow {
                criterion: "c".into(),
                attribute: "Risk_{1} & 100% \\x ~ ^".into(),
                group: None,
                is_group: false,
                expert_band: None,
                band_method: None,
                band_uninformative: false,
                band_overlap: None,
                cells: vec![None],
            }],
            verdict_rule: String::new(),
        };
        let provenance = Provenance {
            concord_version: "0".into(),
            audit_head: None,
            lead_key: None,
            options: serde_json::json!({}),
        };
        let md = render(&t, TableFormat::Md, &provenance);
        assert!(
            !md.contains("<img"),
            "a viewer that renders HTML must get no tag from a name: {md}"
        );
        assert!(
            md.contains("&lt;img src=x onerror=alert\\(1\\)&gt; \\*b\\* a\\|b"),
            "the name is shown as typed, escaped: {md}"
        );
        let tex = render(&t, TableFormat::Latex, &provenance);
        assert!(
            tex.contains("Risk\\_\\{1\\} \\& 100\\% \\textbackslash{}x \\textasciitilde{} \\textasciicircum{}"),
            "each LaTeX special is escaped once: {tex}"
        );
        assert!(
            tex.contains("\\textless{}img"),
            "angle brackets are text in LaTeX too: {tex}"
        );
    }
}

/// How many more targets (double-rated responses at item level) would bring a cell's 95% CI
/// under a desired width, planned from its current estimate with Bonett's (2002) formula for
/// two raters (see `concord_stats::planner`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MoreTargets {
    pub planning_icc: f64,
    pub current_targets: usize,
    pub current_width: Option<f64>,
    pub desired_width: f64,
    pub needed_targets: usize,
    pub more_targets: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("this cell has no ICC estimate to plan from yet")]
    NoEstimate,
    #[error(transparent)]
    Planner(#[from] concord_stats::planner::PlannerError),
    #[error("{0}")]
    Study(String),
}

/// Plan the targets still needed for `cell`'s interval to be at most `desired_width` wide.
pub fn plan_more(cell: &TableCell, desired_width: f64) -> Result<MoreTargets, PlanError> {
    let icc = cell
        .icc
        .filter(|v| v.is_finite())
        .ok_or(PlanError::NoEstimate)?;
    // Bonett's formula needs a planning value in [0, 1); a negative estimate plans as 0.
    let planning_icc = icc.clamp(0.0, 0.99);
    let plan = concord_stats::planner::targets_for_width(2, planning_icc, desired_width, 0.95)?;
    let current_width = match cell.ci95 {
        [Some(lo), Some(hi)] => Some(hi - lo),
        _ => None,
    };
    Ok(MoreTargets {
        planning_icc,
        current_targets: cell.n_targets,
        current_width,
        desired_width,
        needed_targets: plan.targets,
        more_targets: plan.targets.saturating_sub(cell.n_targets),
    })
}
