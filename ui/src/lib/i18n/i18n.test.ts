import { describe, expect, it } from "vitest";
import { en } from "./en";
import { zh } from "./zh";
import { i18n, local, t } from "./index.svelte";
import { asIpcError } from "../ipc";

describe("interface catalogues", () => {
  it("Chinese has every English key and no extra ones", () => {
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
  });

  it("every Chinese entry fills the same placeholders as its English one", () => {
    // `{name}` and `{name, plural, …}`, not the branches (`one {…}`) of a plural.
    const names = (text: string) =>
      [...new Set([...text.matchAll(/(?<!(?:=\d+|zero|one|two|few|many|other)\s*)\{(\w+)[,}]/g)].map((m) => m[1]))].sort();
    for (const key of Object.keys(en) as (keyof typeof en)[]) {
      expect(names(zh[key]), `${key}: a value the Chinese text would drop or leave as {…}`).toEqual(names(en[key]));
    }
  });

  it("the agreement panel and its verdict cards are Chinese in Chinese", () => {
    // Symbols, abbreviations and formats that read the same in both languages.
    const same = new Set(["ag.n", "ag.saveSvg", "ag.savePng", "ag.kappa", "ag.ac1", "ag.pabak", "ag.groupName", "ag.listSeparator"]);
    for (const key of Object.keys(zh) as (keyof typeof zh)[]) {
      if (!key.startsWith("ag.") || same.has(key)) continue;
      expect(/[\u4e00-\u9fff]/.test(zh[key]), `${key} is written in Chinese: ${zh[key]}`).toBe(true);
    }
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

describe("numbers and plurals", () => {
  it("groups thousands in counts but not in identifiers", () => {
    i18n.lang = "en";
    expect(t("setup.exports.written", { n: 378000, path: "x.csv" })).toBe("378,000 ratings written to x.csv");
    expect(t("judge.started", { run: 12345 })).toBe("Run 12345 started.");
    i18n.lang = "zh";
    expect(t("overview.criteria", { n: 12480 })).toBe("12,480 项标准");
    i18n.lang = "en";
  });

  it("chooses the singular for one and the plural otherwise, in English", () => {
    i18n.lang = "en";
    expect(t("setup.experts.chosen", { n: 1 })).toBe("1 expert chosen");
    expect(t("setup.experts.chosen", { n: 3 })).toBe("3 experts chosen");
    expect(t("setup.experts.chosen", { n: 0 })).toBe("0 experts chosen");
    expect(t("rate.missing", { n: 1 })).toBe("1 criterion still to rate on this item");
    expect(t("judge.withoutText", { n: 1 })).toBe("1 selected response has no text and is left out.");
    expect(t("setup.assign.assigned", { conversations: 1, responses: 1200, experts: 1, k: 2, calibration: 0 })).toBe(
      "Assigned 1 conversation (1,200 responses) to 1 expert, k = 2, 0 calibration items.",
    );
  });

  it("no English message still writes a plural as (s)", () => {
    for (const [k, v] of Object.entries(en)) expect(v.includes("(s)"), k).toBe(false);
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
