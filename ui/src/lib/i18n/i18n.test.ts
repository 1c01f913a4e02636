import { describe, expect, it } from "vitest";
import { en } from "./en";
import { zh } from "./zh";
import { i18n, local, t } from "./index.svelte";
import { asIpcError } from "../ipc";

describe("interface catalogues", () => {
  it("Chinese has every English key and no extra ones", () => {
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
  });

  it("no catalogue entry is empty", () => {
    for (const [k, v] of [...Object.entries(en), ...Object.entries(zh)]) {
      expect(v.trim(), k).not.toBe("");
    }
  });

  it("fills placeholders and follows the chosen language", () => {
    i18n.lang = "en";
    expect(t("overview.criteria", { n: 7 })).toBe("7 criteria");
    i18n.lang = "zh";
    expect(t("overview.criteria", { n: 5 })).toBe("5 项标准");
    expect(local({ en: "Risk assessment", zh: "风险评估" })).toBe("风险评估");
    expect(local({ en: "Guidance" })).toBe("Guidance");
    i18n.lang = "en";
  });
});

describe("IPC errors", () => {
  it("keeps the shell's {code, message} shape and wraps anything else", () => {
    expect(asIpcError({ code: "not_a_study", message: "x: not a study" })).toEqual({
      code: "not_a_study",
      message: "x: not a study",
    });
    expect(asIpcError("boom")).toEqual({ code: "internal", message: "boom" });
  });
});
