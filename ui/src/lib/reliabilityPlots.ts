// Figures of the agreement panel's "Judge reliability" section, drawn with Observable Plot as SVG
// from the core's figures (nothing is estimated here): the repetitions-needed curve (the
// Spearman–Brown reliability of a k-repetition aggregate, the observed single-repetition
// reliability ρ₁ and the target line, with the judge–expert ICC(A,1) observed at each k beside its
// prediction), the reliability diagram of a binary criterion (each non-empty bin's mean predicted
// probability against the observed rate, the diagonal of perfect calibration), and the length
// scatter (judge − expert against ln length, the fitted line with its 95% band). The pure
// functions below turn a row into what each figure draws; the plot functions only draw it.
import * as Plot from "@observablehq/plot";
import type { ReliabilityRow } from "./bindings";

/** Axis and legend words of the three figures, in the window's language. */
export interface ReliabilityLabels {
  repetitions: string;
  reliability: string;
  predicted: string;
  observed: string;
  iccObserved: string;
  iccPredicted: string;
  target: string;
  predictedProbability: string;
  observedRate: string;
  logLength: string;
  difference: string;
}

export interface CurveSeries {
  /** Spearman–Brown ρₖ, k = 1 … the curve's end. */
  predicted: { k: number; value: number }[];
  /** The observed single-repetition reliability ρ₁ (at k = 1), when defined. */
  observed: { k: number; value: number }[];
  /** Judge–expert ICC(A,1) of the k-aggregate, observed, with its 95% interval. */
  iccObserved: { k: number; value: number; lo: number | null; hi: number | null }[];
  /** Its Spearman–Brown prediction. */
  iccPredicted: { k: number; value: number }[];
  target: number;
  /** The x domain: 1 … the last k drawn. */
  kDomain: [number, number];
}

/** What the repetitions-needed curve draws for one judge × criterion. */
export function curveSeries(row: ReliabilityRow, target: number): CurveSeries {
  const f = row.figures;
  const predicted = row.curve.map((p) => ({ k: p.k, value: p.reliability }));
  const rho1 = f.repetitions_needed.single_repetition_reliability;
  const observed = rho1 === null ? [] : [{ k: 1, value: rho1 }];
  const iccObserved = f.repetitions_needed.rows
    .filter((r) => r.icc_a1 !== null)
    .map((r) => ({ k: r.k, value: r.icc_a1 as number, lo: r.icc_a1_ci95[0], hi: r.icc_a1_ci95[1] }));
  const iccPredicted = f.repetitions_needed.rows
    .filter((r) => r.predicted_icc_a1 !== null)
    .map((r) => ({ k: r.k, value: r.predicted_icc_a1 as number }));
  const last = Math.max(2, f.repetitions, ...predicted.map((p) => p.k));
  return { predicted, observed, iccObserved, iccPredicted, target, kDomain: [1, last] };
}

export interface DiagramSeries {
  /** Non-empty bins: mean predicted probability against the observed rate, with their counts. */
  bins: { predicted: number; observed: number; n: number }[];
  /** The diagonal of perfect calibration. */
  diagonal: { x: number; y: number }[];
  ece: number | null;
  brier: number | null;
}

/** What the reliability diagram draws, or `null` for a criterion that is not binary. */
export function diagramSeries(row: ReliabilityRow): DiagramSeries | null {
  const b = row.figures.calibration.binary;
  if (!b) return null;
  const bins = b.bins
    .filter((bin) => bin.n > 0 && bin.mean_predicted !== null && bin.observed_rate !== null)
    .map((bin) => ({ predicted: bin.mean_predicted as number, observed: bin.observed_rate as number, n: bin.n }));
  return {
    bins,
    diagonal: [
      { x: 0, y: 0 },
      { x: 1, y: 1 },
    ],
    ece: b.ece,
    brier: b.brier,
  };
}

export interface LengthSeries {
  points: { x: number; y: number }[];
  /** The fitted line at the ends of the observed range, when there is one. */
  line: { x: number; y: number }[];
  /** Its 95% confidence band, one entry per band point. */
  band: { x: number; lower: number; upper: number }[];
  slope: number | null;
}

/** What the length scatter draws. */
export function lengthSeries(row: ReliabilityRow): LengthSeries {
  const points = row.length.points.map((p) => ({ x: p.log_length, y: p.difference }));
  const fit = row.length.line;
  const first = fit?.band[0];
  const last = fit?.band[fit.band.length - 1];
  if (!fit || !first || !last) return { points, line: [], band: [], slope: null };
  return {
    points,
    line: [
      { x: first.x, y: fit.intercept + fit.slope * first.x },
      { x: last.x, y: fit.intercept + fit.slope * last.x },
    ],
    band: fit.band.map((b) => ({ x: b.x, lower: b.lower, upper: b.upper })),
    slope: fit.slope,
  };
}

/** Whole-number ticks 1 … `last`, every second or fifth one when there are many. */
export function kTicks(last: number): number[] {
  const step = last <= 10 ? 1 : last <= 20 ? 2 : 5;
  const ticks: number[] = [];
  for (let k = 1; k <= last; k += step) ticks.push(k);
  if (ticks[ticks.length - 1] !== last) ticks.push(last);
  return ticks;
}

const PREDICTED = "#2f6f73";
const OBSERVED = "#b4533a";
const ICC = "#5b5ea6";
const ICC_PREDICTED = "#9a9cd0";
// Each mark carries a class (`rel-…`), so a test or a stylesheet can find its elements.

export function repetitionsPlot(
  row: ReliabilityRow,
  target: number,
  labels: ReliabilityLabels,
  title: string,
): SVGSVGElement | HTMLElement {
  const s = curveSeries(row, target);
  const values = [
    ...s.predicted.map((p) => p.value),
    ...s.observed.map((p) => p.value),
    ...s.iccObserved.flatMap((p) => [p.value, p.lo ?? p.value, p.hi ?? p.value]),
    ...s.iccPredicted.map((p) => p.value),
    target,
  ];
  const ymin = Math.min(0, ...values);
  const legend = [labels.predicted, labels.observed, labels.iccObserved, labels.iccPredicted, labels.target];
  return Plot.plot({
    title,
    width: 520,
    height: 300,
    marginLeft: 50,
    grid: true,
    x: { domain: s.kDomain, label: labels.repetitions, ticks: kTicks(s.kDomain[1]), tickFormat: "d" },
    y: { domain: [Math.floor(ymin * 10) / 10, 1], label: labels.reliability },
    color: { legend: true, domain: legend, range: [PREDICTED, OBSERVED, ICC, ICC_PREDICTED, "#888888"] },
    marks: [
      Plot.ruleY([target], { y: (d: number) => d, stroke: () => labels.target, strokeDasharray: "4,3", className: "rel-target" }),
      Plot.line(s.predicted, { x: "k", y: "value", stroke: () => labels.predicted, strokeWidth: 2, className: "rel-predicted" }),
      Plot.line(s.iccPredicted, { x: "k", y: "value", stroke: () => labels.iccPredicted, strokeDasharray: "5,3", className: "rel-icc-predicted" }),
      Plot.ruleX(
        s.iccObserved.filter((p) => p.lo !== null && p.hi !== null),
        { x: "k", y1: "lo", y2: "hi", stroke: () => labels.iccObserved, strokeOpacity: 0.6 },
      ),
      Plot.dot(s.iccObserved, { x: "k", y: "value", fill: () => labels.iccObserved, r: 3.5, className: "rel-icc-observed", title: (p: { value: number }) => p.value.toFixed(3) }),
      Plot.dot(s.observed, { x: "k", y: "value", fill: () => labels.observed, r: 5, className: "rel-rho1", title: (p: { value: number }) => `ρ₁ ${p.value.toFixed(3)}` }),
    ],
  });
}

export function reliabilityDiagram(row: ReliabilityRow, labels: ReliabilityLabels, title: string): SVGSVGElement | HTMLElement {
  const s = diagramSeries(row);
  const bins = s?.bins ?? [];
  const most = Math.max(1, ...bins.map((b) => b.n));
  return Plot.plot({
    title,
    width: 360,
    height: 340,
    marginLeft: 50,
    grid: true,
    x: { domain: [0, 1], label: labels.predictedProbability },
    y: { domain: [0, 1], label: labels.observedRate },
    r: { domain: [0, most], range: [3, 9] },
    marks: [
      Plot.line(s?.diagonal ?? [], { x: "x", y: "y", stroke: "#888888", strokeDasharray: "4,3", className: "rel-diagonal" }),
      Plot.line(bins, { x: "predicted", y: "observed", stroke: PREDICTED }),
      Plot.dot(bins, { x: "predicted", y: "observed", r: "n", fill: PREDICTED, className: "rel-bin", title: (b: { n: number }) => `n = ${b.n}` }),
    ],
  });
}

export function lengthPlot(row: ReliabilityRow, labels: ReliabilityLabels, title: string): SVGSVGElement | HTMLElement {
  const s = lengthSeries(row);
  return Plot.plot({
    title,
    width: 520,
    height: 300,
    marginLeft: 50,
    grid: true,
    x: { label: labels.logLength },
    y: { label: labels.difference },
    marks: [
      Plot.ruleY([0], { stroke: "#888888" }),
      Plot.areaY(s.band, { x: "x", y1: "lower", y2: "upper", fill: PREDICTED, fillOpacity: 0.15, className: "rel-band" }),
      Plot.dot(s.points, { x: "x", y: "y", fill: OBSERVED, fillOpacity: 0.7, r: 3, className: "rel-length-point" }),
      Plot.line(s.line, { x: "x", y: "y", stroke: PREDICTED, strokeWidth: 2, className: "rel-fit" }),
    ],
  });
}
