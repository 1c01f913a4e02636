// Attribute and group names of the agreement panel in the interface language.
import { afterEach, describe, expect, it } from "vitest";
import type { RubricSummary } from "./bindings";
import { i18n } from "./i18n/index.svelte";
import { attributeName, attributeNames } from "./labels";

const rubric: RubricSummary = {
  key: "mentalbench",
  name: { en: "MentalBench", zh: "MentalBench 七项属性" },
  criteria: [
    { key: "guidance", label: { en: "Guidance", zh: "指导性" }, group: "CSS", scale: "likert" },
    { key: "custom", label: { en: "Only English" }, group: null, scale: "likert" },
  ],
  groups: [{ id: "CSS", label: { en: "Cognitive Support Score", zh: "认知支持分" } }],
  conversations: 1,
};

afterEach(() => {
  i18n.lang = "en";
});

describe("attribute names", () => {
  it("follow the interface language, groups with their short id", () => {
    i18n.lang = "zh";
    const names = attributeNames(rubric);
    expect(attributeName(names, "guidance", "Guidance"), "a criterion's Chinese label").toBe("指导性");
    expect(attributeName(names, "CSS", "CSS"), "a group's Chinese name and id").toBe("认知支持分（CSS）");
    expect(attributeName(names, "custom", "Only English"), "a label with no Chinese falls back to English").toBe("Only English");
    expect(attributeName(names, "unknown", "Report label"), "a key the rubric lacks keeps the report's label").toBe("Report label");
    i18n.lang = "en";
    expect(attributeName(attributeNames(rubric), "CSS", "CSS"), "in English too").toBe("Cognitive Support Score (CSS)");
  });
});
