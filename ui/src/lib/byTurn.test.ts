// The table by turn: the cells it reads, and a turn's reason for having no figures in each
// language, from the counts alone.
import { afterEach, describe, expect, it } from "vitest";
import type { AgreementCell, Stratum, StratifiedReport } from "./bindings";
import { i18n } from "./i18n/index.svelte";
import { judgeCells, turnCriteria, turnJudges, turnReason } from "./byTurn";

function cell(rater: string, criterion: string, level: "item" | "system", comparison = "judge_vs_experts"): AgreementCell {
  return {
    comparison: comparison as AgreementCell["comparison"],
    rater,
    reference: "experts",
    criterion,
    attribute: criterion.toUpperCase(),
    group: null,
    is_group: false,
    level,
    excluded_sources: [],
    n_targets: 12,
    n_pairs: 12,
    icc_c1: 0.7,
    icc_a1: 0.65,
    ci95: [0.4, 0.85],
    ci_method: "cluster",
    ci_width: 0.45,
    status: "moderate",
    bootstrap_kept: 1000,
    ci95_f_c1: [0.5, 0.8],
    ci95_f_a1: [0.45, 0.8],
    bias: 0.2,
    mse: 0.5,
    bland_altman: { bias: 0.2, sd_diff: 0.5, loa95: [-0.8, 1.2] },
    lin_ccc: 0.6,
    icc_forms: [],
    points: [],
    n_clusters: 12,
  };
}

function stratum(value: string | null, n: number, conversations: number, cells: AgreementCell[] | null): Stratum {
  return {
    value,
    n_responses: n,
    n_compared: n,
    n_conversations: conversations,
    report: cells && {
      options: { rubric: "mentalbench", seed: 42, resamples: 1000, levels: ["item"], groups: false, per_expert: false, exclude_self_family: true },
      raters: [],
      cells,
      binary: [],
      totals: [],
    },
    not_computed: cells ? null : "the core's reason",
  };
}

afterEach(() => {
  i18n.lang = "en";
});

describe("agreement by turn", () => {
  const split: StratifiedReport = {
    facet: "turn",
    reference: "experts",
    strata: [
      stratum("2", 12, 12, [cell("judge-a", "guidance", "item"), cell("judge-a", "guidance", "system"), cell("Ana", "guidance", "item", "expert_vs_expert")]),
      stratum("4", 12, 12, [cell("judge-b", "empathy", "item")]),
      stratum("6", 1, 1, null),
    ],
  };

  it("reads only the judges' item-level cells, every attribute and judge once", () => {
    expect(judgeCells(split.strata[0]!).map((c) => c.rater)).toEqual(["judge-a"]);
    expect(turnCriteria(split)).toEqual([
      ["guidance", "GUIDANCE"],
      ["empathy", "EMPATHY"],
    ]);
    expect(turnJudges(split)).toEqual(["judge-a", "judge-b"]);
    expect(judgeCells(split.strata[2]!)).toEqual([]);
  });

  it("says why a turn has no figures, in English and Chinese", () => {
    expect(turnReason(stratum("6", 1, 1, null))).toContain("Only 1 expert-rated reply at turn 6");
    expect(turnReason(stratum("8", 3, 1, null))).toContain("come from 1 conversation");
    expect(turnReason(stratum(null, 30, 30, null))).toContain("session rubric");
    i18n.lang = "zh";
    expect(turnReason(stratum("6", 1, 1, null))).toContain("第 6 轮只有 1 条");
    expect(turnReason(stratum("8", 3, 1, null))).toContain("来自 1 个对话");
    expect(turnReason(stratum(null, 30, 30, null))).toContain("会话量表");
  });
});
