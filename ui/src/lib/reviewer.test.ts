// The reviewer's cards, tables and curve are drawn from the core's figures as they are: shares
// of the variance in the contract's order, the D-study lines, a rater's accuracy, the by-category
// table (a stratum's reason kept, never a number in its place), and no NaN ever formatted.
import { describe, expect, it } from "vitest";
import type { AgreementReport, LatentFit, StratifiedReport, StudyGStudy } from "./bindings";
import { componentShares, dStudyLines, dStudyPlot, figure, raterAccuracy, stratumRows } from "./reviewer";

function study(): StudyGStudy {
  const d_study = [];
  for (let r = 1; r <= 10; r++) {
    for (let o = 1; o <= 10; o++) {
      const delta = 1 / r + 0.5 / o + 1 / (r * o);
      d_study.push({ n_rater: r, n_occasion: o, relative: 2 / (2 + delta), absolute: 2 / (2.5 + delta) });
    }
  }
  return {
    kind: "experts",
    raters: "experts",
    criterion: "empathy",
    attribute: "Empathy",
    facets: ["rater", "occasion"],
    n_scores: 300,
    n_targets: 60,
    n_raters: 3,
    n_occasions: 2,
    components: { residual: 1, "target:rater": 1, target: 2, rater: 0.5, occasion: 0, "target:occasion": 0.5, "rater:occasion": 0 },
    g: { relative: 0.8, absolute: 0.75 },
    d_study,
    reaches_target: { n_rater: 2, n_occasion: 2, relative: 0.8, absolute: 0.7 },
    boundary: ["occasion"],
    not_computed: null,
  };
}

describe("G- and D-study", () => {
  it("lists components in the contract's order with their shares of the total", () => {
    const shares = componentShares(study());
    expect(shares.map((s) => s.name)).toEqual([
      "target",
      "rater",
      "occasion",
      "target:rater",
      "target:occasion",
      "rater:occasion",
      "residual",
    ]);
    expect(shares[0]?.share).toBeCloseTo(2 / 5, 12);
    expect(shares.reduce((a, s) => a + (s.share ?? 0), 0)).toBeCloseTo(1, 12);
  });

  it("a study whose components are all zero has no share to give", () => {
    const s = { ...study(), components: { target: 0, rater: 0, residual: 0 } };
    expect(componentShares(s).every((c) => c.share === null)).toBe(true);
  });

  it("draws one line per number of occasions (one and the number observed), ten points each", () => {
    const lines = dStudyLines(study());
    expect(lines.map((l) => l.occasions)).toEqual([1, 2]);
    expect(lines.every((l) => l.points.length === 10)).toBe(true);
    const el = dStudyPlot(
      study(),
      0.8,
      { count: "experts", reliability: "Eρ²", target: "target", occasions: (n) => `${n} occasions` },
      "D-study",
    );
    expect(el.querySelectorAll("g.gd-point circle").length).toBe(20);
    expect(el.querySelectorAll("g.gd-line path").length).toBe(2);
    expect(el.querySelectorAll("g.gd-target line").length).toBe(1);
  });

  it("leaves undefined coefficients out of the curve", () => {
    const s = study();
    s.d_study = s.d_study.map((p) => (p.n_rater === 3 ? { ...p, relative: null } : p));
    expect(dStudyLines(s)[0]?.points.map((p) => p.n)).toEqual([1, 2, 4, 5, 6, 7, 8, 9, 10]);
  });
});

describe("Dawid–Skene fits", () => {
  it("a rater's accuracy is the mean of its confusion matrix's diagonal", () => {
    const fit = {
      labels: ["0", "1"],
      raters: [],
    } as unknown as LatentFit;
    const rater = { rater: "j", kind: "judge" as const, confusion: { "0": { "0": 0.9, "1": 0.1 }, "1": { "0": 0.3, "1": 0.7 } } };
    expect(raterAccuracy(fit, rater)).toBeCloseTo(0.8, 12);
    expect(raterAccuracy(fit, { ...rater, confusion: {} })).toBeNull();
  });
});

describe("agreement by category", () => {
  const cell = (rater: string, criterion: string, level: "system" | "item", icc: number | null) => ({
    comparison: "judge_vs_experts",
    rater,
    reference: "experts",
    criterion,
    level,
    icc_c1: icc,
    ci95: [icc === null ? null : icc - 0.1, icc === null ? null : icc + 0.1],
  });
  const report = (cells: unknown[]) => ({ cells, binary: [] }) as unknown as AgreementReport;
  const split: StratifiedReport = {
    facet: "category",
    reference: "experts",
    strata: [
      { value: "eating", n_responses: 5, n_compared: 1, report: null, not_computed: "only 1 response of category «eating» has an expert value" },
      {
        value: "self-harm",
        n_responses: 45,
        n_compared: 30,
        report: report([cell("j1", "empathy", "system", 0.7), cell("j2", "empathy", "system", null), cell("j1", "empathy", "item", 0.4)]),
        not_computed: null,
      },
      { value: null, n_responses: 15, n_compared: 10, report: report([cell("j1", "empathy", "system", 0.6)]), not_computed: null },
    ],
  };

  it("takes each judge's figure at the chosen level and keeps a stratum's reason", () => {
    const { judges, rows } = stratumRows(split, "empathy", "system");
    expect(judges).toEqual(["j1", "j2"]);
    expect(rows[0]?.reason).toContain("only 1 response");
    expect(rows[0]?.cells.size).toBe(0);
    expect(rows[1]?.cells.get("j1")?.value).toBe(0.7);
    expect(rows[1]?.cells.get("j2")?.value).toBeNull();
    expect(rows[2]?.value).toBeNull();
    expect(stratumRows(split, "empathy", "item").rows[1]?.cells.get("j1")?.value).toBe(0.4);
  });

  it("formats no NaN or infinity as a number", () => {
    expect(figure(Number.NaN)).toBeNull();
    expect(figure(Number.POSITIVE_INFINITY)).toBeNull();
    expect(figure(null)).toBeNull();
    expect(figure(0.12345)).toBe("0.123");
  });
});
