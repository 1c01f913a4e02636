// The verdict cards' words: in English they are the core's own sentences (so the window and the
// core say the same), in Chinese they are Chinese, from the same figures.
import { afterEach, describe, expect, it } from "vitest";
import type { ExpertBaseline, FindingFacts } from "./bindings";
import { i18n } from "./i18n/index.svelte";
import { baselineMethod, findingRule, findingSummary, ppiMissingText } from "./verdicts";

const tooFew: FindingFacts = {
  kind: "alt_test",
  epsilon: 0.2,
  alpha: 0.05,
  metric: "neg_rmse",
  result: null,
  not_computed: { reason: "too_few_experts", experts: 2 },
};
const passed: FindingFacts = {
  ...tooFew,
  result: { winning_rate: 0.8, advantage_probability: 0.91, passed: true, n_experts: 5, metric: "neg_rmse" },
  not_computed: null,
};
const icc: FindingFacts = { kind: "icc_band", icc: 0.71, ci95: [0.6, 0.8], pairs: 120, band: [0.82, 0.9], verdict: "below", band_uninformative: false, overlap: 60 };
const wide: FindingFacts = { kind: "icc_band", icc: 0.82, ci95: [-0.08, 0.99], pairs: 4, band: [0, 0.9995], verdict: null, band_uninformative: true, overlap: 2 };
const ppi: FindingFacts = {
  kind: "ppi_bias",
  judge_mean: 3.9,
  ppi_mean: 3.2,
  ci95: [3.0, 3.4],
  lambda: 0.8,
  n_labeled: 40,
  n_unlabeled: 60,
  bias: 0.7,
  detected: true,
};
const baseline: ExpertBaseline = {
  criterion: "guidance",
  attribute: "Guidance",
  method: "",
  n_responses: 12,
  n_experts: 2,
  n_ratings: 24,
  n_overlap: 12,
  icc_a1: 0.8,
  ci95_a1: [0.6, 0.9],
  icc_c1: 0.82,
  ci95_c1: [0.6, 0.9],
  complete_design: true,
  boundary: ["expert"],
  note: null,
};

const chinese = (s: string) => /[\u4e00-\u9fff]/.test(s);
/** English words of three letters or more left in a text (names of methods excepted). */
const englishWords = (s: string) =>
  (s.match(/[A-Za-z]{3,}/g) ?? []).filter((w) => !["REML", "RMSE", "ICC", "PPI", "McGraw", "Wong", "Benjamini", "Yekutieli", "score", "response", "expert"].includes(w));

afterEach(() => {
  i18n.lang = "en";
});

describe("verdict cards in English", () => {
  it("say what the core says", () => {
    i18n.lang = "en";
    expect(findingSummary(tooFew), "the reason the alt-test could not run").toBe(
      "not computed: the alt-test needs at least 3 human annotators labelling the same items besides the judge (got 2)",
    );
    expect(findingSummary(passed), "the alt-test's result").toBe("ω = 0.80, ρ = 0.91 over 5 experts: passed");
    expect(findingRule(passed), "the alt-test's rule with its settings").toBe(
      "Leave each expert out; the judge wins against that expert when a one-sided t-test rejects ρ_expert − ρ_judge ≥ ε = 0.2 after Benjamini–Yekutieli correction at q = 0.05; passes when it wins against at least half the experts (ω ≥ 0.5). Alignment: negative RMSE.",
    );
    expect(findingSummary(icc), "the ICC against the band").toBe(
      "ICC(A,1) = 0.71 [0.60, 0.80] over 120 pairs; expert band [0.82, 0.90]: below",
    );
    expect(findingSummary(wide), "a band too wide places no judge, as the core says").toBe(
      "ICC(A,1) = 0.82 [-0.08, 0.99] over 4 pairs; the expert band [0.00, 1.00] cannot place the judge (only 2 responses rated by two or more experts)",
    );
    expect(ppiMissingText("no_judge_only"), "why a PPI++ cell is empty").toContain("no judge-only responses");
    expect(ppiMissingText(null), "a PPI++ mean needs no reason").toBeNull();
    expect(findingSummary(ppi), "the PPI++ bias").toBe(
      "judge-only mean 3.90 vs PPI++ 3.20 [3.00, 3.40] (λ = 0.80, 40 expert-rated, 60 judge-only): bias +0.70, detected",
    );
    expect(baselineMethod(baseline), "the baseline's method").toBe(
      "REML variance components of score ~ 1 + (1|response) + (1|expert) over all 24 expert ratings of 12 responses by 2 experts (complete design); profile-likelihood 95% CI; boundary fit: expert variance at 0",
    );
  });
});

describe("verdict cards in Chinese", () => {
  it("are Chinese, with the same figures", () => {
    i18n.lang = "zh";
    for (const facts of [tooFew, passed, icc, wide, ppi]) {
      for (const said of [findingSummary(facts), findingRule(facts)]) {
        expect(chinese(said), `${facts.kind}: ${said}`).toBe(true);
        expect(englishWords(said), `${facts.kind}: no English words left in ${said}`).toEqual([]);
      }
    }
    expect(findingSummary(tooFew), "the number of experts is kept").toContain("2 位");
    expect(findingSummary(icc), "the figures are kept").toContain("0.71 [0.60, 0.80]");
    for (const m of ["no_expert_rated", "no_judge_only"] as const) {
      const why = ppiMissingText(m) ?? "";
      expect(chinese(why) && englishWords(why).length === 0, why).toBe(true);
    }
    const method = baselineMethod(baseline);
    expect(chinese(method) && method.includes("24") && method.includes("专家间方差为 0"), method).toBe(true);
  });
});
