// The agreement panel's table by turn: which cells it reads from each turn's report, the
// attributes and judges it lists, and why a turn has no figures, worded in the interface language
// from the counts the turn carries (the core's own reason is English).
import type { AgreementCell, Stratum, StratifiedReport } from "./bindings";
import { t } from "./i18n/index.svelte";

/** A turn's judge-versus-reference cells at item level (none without a report). */
export function judgeCells(s: Stratum): AgreementCell[] {
  return s.report?.cells.filter((c) => c.comparison === "judge_vs_experts" && c.level === "item") ?? [];
}

/** Every attribute some turn has a cell for, (key, name as the report gives it), in order. */
export function turnCriteria(split: StratifiedReport): [string, string][] {
  const seen = new Map<string, string>();
  for (const stratum of split.strata) for (const c of judgeCells(stratum)) seen.set(c.criterion, c.attribute);
  return [...seen.entries()];
}

/** Every judge some turn has a cell for, in order. */
export function turnJudges(split: StratifiedReport): string[] {
  return [...new Set(split.strata.flatMap((s) => judgeCells(s).map((c) => c.rater)))];
}

/** Why a turn has no figures: a session rubric's items stand at no turn; else too few replies,
 * or replies from one conversation only (the interval resamples conversations). */
export function turnReason(s: Stratum): string {
  if (s.value === null) return t("ag.byTurn.why.session");
  if (s.n_compared < 2) return t("ag.byTurn.why.items", { turn: s.value, n: s.n_compared });
  return t("ag.byTurn.why.conversations", {
    turn: s.value,
    n: s.n_compared,
    conversations: s.n_conversations ?? 0,
  });
}
