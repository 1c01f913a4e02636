// The verdict cards' words in the interface language: each finding's result and rule, and the
// expert baseline's method, written from the figures and reasons the core sends with them
// (`facts`), so a card reads the same in English and in Chinese.
import type { ExpertBaseline, Finding, FindingFacts, NotComputed, PpiMissing, Verdict } from "./bindings";
import { t } from "./i18n/index.svelte";

function num(x: number | null | undefined, digits = 2): string {
  return x === null || x === undefined || !Number.isFinite(x) ? "—" : x.toFixed(digits);
}

function signed(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? "—" : (x >= 0 ? "+" : "") + x.toFixed(2);
}

function placement(v: Verdict): string {
  return t(`ag.place.${v}`);
}

function reason(r: NotComputed): string {
  switch (r.reason) {
    case "too_few_experts":
      return t("ag.reason.tooFewExperts", { n: r.experts });
    case "too_few_items":
      return t("ag.reason.tooFewItems", { min: r.min, most: r.most });
    case "other":
      return r.message;
  }
}

/** The rule a finding applies. */
export function findingRule(facts: FindingFacts): string {
  switch (facts.kind) {
    case "alt_test":
      return t("ag.rule.altTest", {
        epsilon: String(facts.epsilon),
        alpha: String(facts.alpha),
        metric: t(facts.metric === "accuracy" ? "ag.metric.accuracy" : "ag.metric.negRmse"),
      });
    case "icc_band":
      return t("ag.rule.iccBand");
    case "ppi_bias":
      return t("ag.rule.ppiBias");
  }
}

/** What a finding found, or why it could not be computed. */
export function findingSummary(facts: FindingFacts): string {
  switch (facts.kind) {
    case "alt_test": {
      const r = facts.result;
      if (r) {
        return t("ag.summary.altTest", {
          omega: num(r.winning_rate),
          rho: num(r.advantage_probability),
          n: r.n_experts,
          outcome: t(r.passed ? "ag.outcome.passed" : "ag.outcome.failed"),
        });
      }
      return t("ag.summary.notComputed", { reason: facts.not_computed ? reason(facts.not_computed) : "—" });
    }
    case "icc_band": {
      if (facts.icc === null) return t("ag.summary.iccNone", { pairs: facts.pairs });
      if (facts.band && facts.band_uninformative) {
        return t("ag.summary.iccBandUninformative", {
          icc: num(facts.icc),
          lo: num(facts.ci95[0]),
          hi: num(facts.ci95[1]),
          pairs: facts.pairs,
          bandLo: num(facts.band[0]),
          bandHi: num(facts.band[1]),
          overlap: facts.overlap,
        });
      }
      if (facts.band && facts.verdict) {
        return t("ag.summary.iccBand", {
          icc: num(facts.icc),
          lo: num(facts.ci95[0]),
          hi: num(facts.ci95[1]),
          pairs: facts.pairs,
          bandLo: num(facts.band[0]),
          bandHi: num(facts.band[1]),
          placement: placement(facts.verdict),
        });
      }
      return t("ag.summary.iccNoBand", { icc: num(facts.icc), pairs: facts.pairs });
    }
    case "ppi_bias": {
      const [lo, hi] = facts.ci95;
      if (facts.detected === null) {
        return t("ag.summary.ppiNone", { labeled: facts.n_labeled, unlabeled: facts.n_unlabeled });
      }
      return t("ag.summary.ppi", {
        judge: num(facts.judge_mean),
        ppi: num(facts.ppi_mean),
        lo: num(lo),
        hi: num(hi),
        lambda: num(facts.lambda),
        labeled: facts.n_labeled,
        unlabeled: facts.n_unlabeled,
        bias: signed(facts.bias),
        outcome: t(facts.detected ? "ag.outcome.detected" : "ag.outcome.notDetected"),
      });
    }
  }
}

/** Why a leaderboard row has no PPI++ mean, or null when it has one. */
export function ppiMissingText(missing: PpiMissing | null): string | null {
  if (missing === null) return null;
  return t(missing === "no_expert_rated" ? "ag.ppiMissing.no_expert_rated" : "ag.ppiMissing.no_judge_only");
}

/** A finding's result and rule in the interface language. */
export function findingText(f: Finding): { summary: string; rule: string } {
  return { summary: findingSummary(f.facts), rule: findingRule(f.facts) };
}

/** How the experts' baseline was computed, and which variance components sit at zero. */
export function baselineMethod(b: ExpertBaseline): string {
  if (b.complete_design === null) return t("ag.baseline.none");
  const method = t("ag.baseline.method", {
    ratings: b.n_ratings,
    responses: b.n_responses,
    experts: b.n_experts,
    design: t(b.complete_design ? "ag.design.complete" : "ag.design.incomplete"),
  });
  if (b.boundary.length === 0) return method;
  return t("ag.baseline.boundary", {
    method,
    parts: b.boundary.map((z) => t(z === "response" ? "ag.zero.response" : "ag.zero.expert")).join(t("ag.listSeparator")),
  });
}
