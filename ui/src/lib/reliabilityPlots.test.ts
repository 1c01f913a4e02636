import { describe, expect, it } from "vitest";
import type { IntervalEstimate, ReliabilityRow } from "./bindings";
import {
  curveSeries,
  diagramSeries,
  lengthPlot,
  lengthSeries,
  kTicks,
  reliabilityDiagram,
  repetitionsPlot,
  type ReliabilityLabels,
} from "./reliabilityPlots";

const none: IntervalEstimate = { estimate: null, ci95: [null, null], n: 0, rule: "test" };

const labels: ReliabilityLabels = {
  repetitions: "k",
  reliability: "reliability",
  predicted: "SB",
  observed: "rho1",
  iccObserved: "icc observed",
  iccPredicted: "icc predicted",
  target: "target",
  predictedProbability: "p",
  observedRate: "rate",
  logLength: "ln length",
  difference: "d",
};

/** A three-repetition binary judge × criterion: ρ₁ = 0.5, so ρₖ = k/(k + 1) and 0.8 needs k = 4. */
function row(): ReliabilityRow {
  const bins = Array.from({ length: 10 }, (_, b) => ({
    lower: b / 10,
    upper: (b + 1) / 10,
    n: b === 0 ? 6 : b === 3 ? 3 : b === 6 ? 2 : b === 9 ? 5 : 0,
    mean_predicted: b === 0 ? 0 : b === 3 ? 1 / 3 : b === 6 ? 2 / 3 : b === 9 ? 1 : null,
    observed_rate: b === 0 ? 0 : b === 3 ? 1 / 3 : b === 6 ? 0.5 : b === 9 ? 0.8 : null,
  }));
  return {
    figures: {
      judge: "judge-1",
      model: "judge-1",
      family: null,
      criterion: "risk",
      scale: "binary",
      repetitions: 3,
      aggregate: "mode",
      n_responses: 16,
      n_compared: 16,
      consistency: { n_responses: 16, alpha_metric: "nominal", alpha: 0.6, alpha_ci95: [0.4, 0.8], exact_agreement: 0.8, mean_within_sd: 0.2 },
      repetitions_needed: {
        single_repetition_reliability: 0.5,
        rows: [
          { k: 1, n_responses: 16, icc_a1: 0.4, icc_a1_ci95: [0.1, 0.7], predicted_reliability: 0.5, predicted_icc_a1: 0.4 },
          { k: 2, n_responses: 16, icc_a1: 0.45, icc_a1_ci95: [0.15, 0.72], predicted_reliability: 2 / 3, predicted_icc_a1: 0.46 },
          { k: 3, n_responses: 16, icc_a1: null, icc_a1_ci95: [null, null], predicted_reliability: 0.75, predicted_icc_a1: null },
        ],
      },
      target: { reliability: 0.8, repetitions: 4 },
      calibration: { source: "repetitions", binary: { n: 16, bins, ece: 0.06, brier: 0.12 }, icc_a1_expected: null, icc_a1_sampled: null, n_responses: 16 },
      bias: { overall: none, length: none, self_preference: none, order: none, bands: [] },
    },
    curve: [1, 2, 3, 4].map((k) => ({ k, reliability: k / (k + 1) })),
    length: {
      points: [
        { log_length: 3, difference: 0 },
        { log_length: 4, difference: 1 },
        { log_length: 5, difference: 0 },
      ],
      line: {
        intercept: -1,
        slope: 0.25,
        n: 3,
        band: [
          { x: 3, fitted: -0.25, lower: -1, upper: 0.5 },
          { x: 4, fitted: 0, lower: -0.5, upper: 0.5 },
          { x: 5, fitted: 0.25, lower: -0.5, upper: 1 },
        ],
      },
    },
  };
}

describe("the repetitions-needed curve", () => {
  it("draws the Spearman–Brown curve, the observed ρ₁ and the ICC the core computed", () => {
    const s = curveSeries(row(), 0.8);
    expect(s.predicted.map((p) => p.k)).toEqual([1, 2, 3, 4]);
    expect(s.predicted[3]?.value).toBeCloseTo(0.8, 12);
    expect(s.observed).toEqual([{ k: 1, value: 0.5 }]);
    // The k = 3 ICC is undefined: no point is invented for it.
    expect(s.iccObserved.map((p) => p.k)).toEqual([1, 2]);
    expect(s.iccObserved[0]).toEqual({ k: 1, value: 0.4, lo: 0.1, hi: 0.7 });
    expect(s.iccPredicted.map((p) => p.value)).toEqual([0.4, 0.46]);
    expect(s.target).toBe(0.8);
    expect(s.kDomain).toEqual([1, 4]);
  });

  it("has no curve and no observed point when ρ₁ is undefined, but still spans K", () => {
    const r = row();
    r.figures.repetitions_needed.single_repetition_reliability = null;
    r.curve = [];
    const s = curveSeries(r, 0.8);
    expect(s.predicted).toEqual([]);
    expect(s.observed).toEqual([]);
    expect(s.kDomain).toEqual([1, 3]);
  });

  it("ticks whole numbers of repetitions only, ending at the last k", () => {
    expect(kTicks(3)).toEqual([1, 2, 3]);
    expect(kTicks(10)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(kTicks(14)).toEqual([1, 3, 5, 7, 9, 11, 13, 14]);
    expect(kTicks(20)).toEqual([1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 20]);
  });

  it("renders one SVG mark per observed point", () => {
    const el = repetitionsPlot(row(), 0.8, labels, "curve");
    expect(el.querySelectorAll("g.rel-icc-observed circle").length).toBe(2);
    expect(el.querySelectorAll("g.rel-rho1 circle").length).toBe(1);
    expect(el.querySelectorAll("g.rel-predicted path").length).toBe(1);
  });
});

describe("the reliability diagram", () => {
  it("keeps the non-empty bins with their counts and the diagonal", () => {
    const s = diagramSeries(row());
    expect(s).not.toBeNull();
    expect(s?.bins.map((b) => b.n)).toEqual([6, 3, 2, 5]);
    expect(s?.bins[2]).toEqual({ predicted: 2 / 3, observed: 0.5, n: 2 });
    expect(s?.diagonal).toEqual([
      { x: 0, y: 0 },
      { x: 1, y: 1 },
    ]);
    expect([s?.ece, s?.brier]).toEqual([0.06, 0.12]);
  });

  it("is not drawn for a 1–5 criterion", () => {
    const r = row();
    r.figures.calibration.binary = null;
    expect(diagramSeries(r)).toBeNull();
  });

  it("renders one dot per non-empty bin", () => {
    const el = reliabilityDiagram(row(), labels, "diagram");
    expect(el.querySelectorAll("g.rel-bin circle").length).toBe(4);
    expect(el.querySelectorAll("g.rel-diagonal path").length).toBe(1);
  });
});

describe("the length scatter", () => {
  it("draws every response and the fitted line across the observed range", () => {
    const s = lengthSeries(row());
    expect(s.points).toEqual([
      { x: 3, y: 0 },
      { x: 4, y: 1 },
      { x: 5, y: 0 },
    ]);
    // y = −1 + 0.25·x at the ends of the band.
    expect(s.line).toEqual([
      { x: 3, y: -0.25 },
      { x: 5, y: 0.25 },
    ]);
    expect(s.band.map((b) => [b.lower, b.upper])).toEqual([
      [-1, 0.5],
      [-0.5, 0.5],
      [-0.5, 1],
    ]);
    expect(s.slope).toBe(0.25);
  });

  it("has points but no line when the core fitted none", () => {
    const r = row();
    r.length.line = null;
    const s = lengthSeries(r);
    expect(s.points.length).toBe(3);
    expect([s.line, s.band, s.slope]).toEqual([[], [], null]);
  });

  it("renders one dot per response, the line and its band", () => {
    const el = lengthPlot(row(), labels, "length");
    expect(el.querySelectorAll("g.rel-length-point circle").length).toBe(3);
    expect(el.querySelectorAll("g.rel-fit path").length).toBe(1);
    expect(el.querySelectorAll("g.rel-band path").length).toBe(1);
  });
});
