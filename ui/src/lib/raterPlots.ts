// Figures of the Raters view, drawn with Observable Plot as SVG: each expert's severity per
// criterion (mean offset from the other experts with its 95% interval, zero marked), and one
// expert's standardised CUSUM paths per criterion with the 1% critical band (±1.628).
import * as Plot from "@observablehq/plot";
import type { ExpertQuality, RaterQualityReport } from "./bindings";

export interface SeverityPoint {
  rater: string;
  criterion: string;
  mean: number;
  lo: number;
  hi: number;
}

/** One point per expert × criterion with an estimate and an interval. */
export function severityPoints(report: RaterQualityReport): SeverityPoint[] {
  const out: SeverityPoint[] = [];
  for (const e of report.experts) {
    for (const c of e.criteria) {
      const ci = c.severity.ci95;
      if (c.severity.mean === null || !ci) continue;
      out.push({ rater: e.rater, criterion: c.criterion, mean: c.severity.mean, lo: ci[0], hi: ci[1] });
    }
  }
  return out;
}

export function severityPlot(report: RaterQualityReport, title: string): SVGSVGElement | HTMLElement {
  const points = severityPoints(report);
  return Plot.plot({
    title,
    marginLeft: 130,
    height: Math.max(160, 26 * new Set(points.map((p) => p.criterion)).size + 60),
    x: { label: "offset from the other experts (scale points)", grid: true },
    y: { label: null },
    color: { legend: true },
    marks: [
      Plot.ruleX([0]),
      Plot.ruleY(points, { x1: "lo", x2: "hi", y: "criterion", stroke: "rater", dy: 0 }),
      Plot.dot(points, { x: "mean", y: "criterion", fill: "rater", r: 4 }),
    ],
  });
}

/** The CUSUM paths of one expert, one line per criterion, with the alarm band. */
export function cusumPlot(expert: ExpertQuality, title: string): SVGSVGElement | HTMLElement {
  const rows = expert.criteria.flatMap((c) => c.drift.path.map((s, i) => ({ criterion: c.criterion, i: i + 1, s })));
  const critical = 1.628;
  return Plot.plot({
    title,
    height: 240,
    x: { label: "ratings in the order entered" },
    y: { label: "standardised CUSUM", domain: [-Math.max(2, ...rows.map((r) => Math.abs(r.s))), Math.max(2, ...rows.map((r) => Math.abs(r.s)))] },
    color: { legend: true },
    marks: [
      Plot.ruleY([-critical, critical], { stroke: "#b4533a", strokeDasharray: "4,3" }),
      Plot.ruleY([0]),
      Plot.line(rows, { x: "i", y: "s", stroke: "criterion" }),
    ],
  });
}
