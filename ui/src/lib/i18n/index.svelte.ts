// Interface language: English or Simplified Chinese, switchable at runtime and remembered.
import { en, type MessageKey } from "./en";
import { zh } from "./zh";

export type Lang = "en" | "zh";
const catalogues: Record<Lang, Record<MessageKey, string>> = { en, zh };

function initialLang(): Lang {
  try {
    const saved = localStorage.getItem("concord.lang");
    if (saved === "en" || saved === "zh") return saved;
  } catch {
    // storage unavailable: fall through to the browser language
  }
  return typeof navigator !== "undefined" && navigator.language.startsWith("zh") ? "zh" : "en";
}

export const i18n = $state({ lang: initialLang() as Lang });

export function setLang(lang: Lang) {
  i18n.lang = lang;
  try {
    localStorage.setItem("concord.lang", lang);
  } catch {
    // not remembered; still switched for this session
  }
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
}

/** Translate `key`, filling `{name}` placeholders from `vars`. */
export function t(key: MessageKey, vars: Record<string, string | number> = {}): string {
  const text = catalogues[i18n.lang][key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (_, name: string) => String(vars[name] ?? `{${name}}`));
}

/** Pick a localized text from a `{en, zh, …}` map (rubric labels), falling back to English. */
export function local(text: { [k: string]: string | undefined } | undefined): string {
  if (!text) return "";
  return text[i18n.lang] ?? text["en"] ?? Object.values(text).find((v) => v !== undefined) ?? "";
}

/** The label of a PHI identifier class (`phone`, `email`, …); an unknown class shows as is. */
export function phiKindLabel(kind: string): string {
  const key = `phi.kind.${kind}`;
  return key in en ? t(key as MessageKey) : kind;
}
