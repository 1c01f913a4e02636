// The reviewer's questions as the agreement panel shows them: pure functions that turn the core's
// figures (corrected prevalence, G- and D-studies, the Dawid–Skene fits, agreement by category)
// into what the cards, tables and the D-study curve draw. Nothing is estimated here; an undefined
// figure stays `null` and the components show its reason instead.
import * as Plot from "@observablehq/plot";
import type { AgreementReport, LatentFit, LatentRater, StratifiedReport, StudyGStudy } from "./bindings";

/** The order variance components are listed in (the contract's names, a judge's facet included). */
export const COMPONENT_ORDER = [
  "target",
  "rater",
  "repetition",
  "occasion",
  "target:rater",
  "target:repetition",
  "target:occasion",
  "rater:occasion",
  "residual",
];

/** Each component of a study with its share of the total variance, in the contract's order. */
export function componentShares(study: StudyGStudy): { name: string; variance: number; share: number | null }[] {
  const entries = Object.entries(study.components).filter((e): e is [string, number] => typeof e[1] === "number");
  const total = entries.reduce((a, [, v]) => a + v, 0);
  const rank = (name: string) => {
    const i = COMPONENT_ORDER.indexOf(name);
    return i < 0 ? COMPONENT_ORDER.length : i;
  };
  return entries
    .sort((a, b) => rank(a[0]) - rank(b[0]))
    .map(([name, variance]) => ({ name, variance, share: total > 0 ? variance / total : null }));
}

/** One line of the D-study curve: the relative coefficient for 1–10 of the first facet at a
 * number of occasions. */
export interface DStudyLine {
  occasions: number;
  points: { n: number; relative: number }[];
}

/** The D-study curve: one line per number of occasions drawn (1 and the number observed). */
export function dStudyLines(study: StudyGStudy): DStudyLine[] {
  const wanted = [...new Set([1, study.n_occasions])].filter((o) => study.d_study.some((p) => p.n_occasion === o));
  return wanted.map((occasions) => ({
    occasions,
    points: study.d_study
      .filter((p) => p.n_occasion === occasions && p.relative !== null)
      .map((p) => ({ n: p.n_rater, relative: p.relative as number })),
  }));
}

/** Axis and legend words of the D-study curve, in the window's language. */
export interface DStudyLabels {
  count: string;
  reliability: string;
  target: string;
  occasions: (n: number) => string;
}

/** The D-study curve: Eρ² against the number of raters (or a judge's calls), a line per number of
 * occasions, the target as a dashed rule. Each mark carries a `gd-…` class. */
export function dStudyPlot(study: StudyGStudy, target: number, labels: DStudyLabels, title: string): SVGSVGElement | HTMLElement {
  const lines = dStudyLines(study);
  const rows = lines.flatMap((l) => l.points.map((p) => ({ ...p, line: labels.occasions(l.occasions) })));
  const ymin = Math.min(0, ...rows.map((r) => r.relative));
  return Plot.plot({
    title,
    width: 520,
    height: 280,
    marginLeft: 50,
    grid: true,
    x: { domain: [1, 10], label: labels.count, ticks: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], tickFormat: "d" },
    y: { domain: [Math.floor(ymin * 10) / 10, 1], label: labels.reliability },
    color: { legend: lines.length > 1, domain: lines.map((l) => labels.occasions(l.occasions)) },
    marks: [
      Plot.ruleY([target], { y: (d: number) => d, stroke: "#888888", strokeDasharray: "4,3", className: "gd-target" }),
      Plot.line(rows, { x: "n", y: "relative", stroke: "line", strokeWidth: 2, className: "gd-line" }),
      Plot.dot(rows, { x: "n", y: "relative", fill: "line", r: 3, className: "gd-point", title: (p: { relative: number }) => p.relative.toFixed(3) }),
    ],
  });
}

/** A rater's mean probability of giving the right label (the mean of its confusion matrix's
 * diagonal over the fit's labels), or null when it has none. */
export function raterAccuracy(fit: LatentFit, rater: LatentRater): number | null {
  const diagonal = fit.labels
    .map((l) => rater.confusion[l]?.[l])
    .filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  return diagonal.length === 0 ? null : diagonal.reduce((a, v) => a + v, 0) / diagonal.length;
}

/** One row of the by-category table: a category's figure per judge for one criterion. */
export interface StratumRow {
  value: string | null;
  n_responses: number;
  n_compared: number;
  /** Judge → the figure and its interval (null when the stratum's report leaves it undefined). */
  cells: Map<string, { value: number | null; ci: [number | null, number | null] | null }>;
  reason: string | null;
}

/** The by-category table for `criterion`: ICC(C,1) of judges against the reference at `level`
 * for a 1–5 criterion, Cohen's κ for a binary one; judges in the order they first appear. */
export function stratumRows(
  split: StratifiedReport,
  criterion: string,
  level: "system" | "item",
): { judges: string[]; rows: StratumRow[] } {
  const judges: string[] = [];
  const see = (j: string) => {
    if (!judges.includes(j)) judges.push(j);
  };
  const rows = split.strata.map((s) => {
    const cells = new Map<string, { value: number | null; ci: [number | null, number | null] | null }>();
    const r: AgreementReport | null = s.report;
    for (const c of r?.cells ?? []) {
      if (c.comparison !== "judge_vs_experts" || c.criterion !== criterion || c.level !== level) continue;
      see(c.rater);
      cells.set(c.rater, { value: c.icc_c1, ci: [c.ci95[0], c.ci95[1]] });
    }
    for (const b of r?.binary ?? []) {
      if (b.experts || b.criterion !== criterion) continue;
      see(b.judge);
      cells.set(b.judge, { value: b.cohen_kappa, ci: null });
    }
    return { value: s.value, n_responses: s.n_responses, n_compared: s.n_compared, cells, reason: s.not_computed };
  });
  return { judges, rows };
}

/** A figure with `digits` decimals, or null when it is not a finite number (shown as its reason). */
export function figure(x: number | null | undefined, digits = 3): string | null {
  return x === null || x === undefined || !Number.isFinite(x) ? null : x.toFixed(digits);
}
