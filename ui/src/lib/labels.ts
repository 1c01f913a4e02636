// The names of a rubric's criteria and groups in the interface language: reports name an
// attribute by its key and its English label; the window shows the rubric's own label in the
// language chosen (a group as its name and its short id, "Cognitive Support Score (CSS)").
import type { RubricSummary } from "./bindings";
import { local, t } from "./i18n/index.svelte";

/** The interface-language name of each criterion and group of `rubric`, by key. */
export function attributeNames(rubric: RubricSummary | undefined): Map<string, string> {
  const names = new Map<string, string>();
  for (const c of rubric?.criteria ?? []) {
    const label = local(c.label);
    if (label) names.set(c.key, label);
  }
  for (const g of rubric?.groups ?? []) {
    const label = local(g.label);
    names.set(g.id, label && label !== g.id ? t("ag.groupName", { name: label, id: g.id }) : g.id);
  }
  return names;
}

/** The name of the attribute `key`, or `fallback` (the report's own label) when the rubric has none. */
export function attributeName(names: Map<string, string>, key: string, fallback: string): string {
  return names.get(key) ?? fallback;
}
