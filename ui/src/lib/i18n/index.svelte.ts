// Interface language: English or Simplified Chinese, switchable at runtime and remembered; the
// page's `<html lang>` says which from the first frame (screen readers and CJK fonts follow it).
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

/** The language tag of `lang` as `<html lang>` carries it. */
export function htmlLang(lang: Lang): string {
  return lang === "zh" ? "zh-CN" : "en";
}

if (typeof document !== "undefined") document.documentElement.lang = htmlLang(i18n.lang);

export function setLang(lang: Lang) {
  i18n.lang = lang;
  try {
    localStorage.setItem("concord.lang", lang);
  } catch {
    // not remembered; still switched for this session
  }
  document.documentElement.lang = htmlLang(lang);
}

/** Placeholders that name something rather than count it: never grouped in thousands. */
const IDENTIFIERS = new Set(["seed", "run", "value", "key", "year", "id", "percent"]);

const locales: Record<Lang, string> = { en: "en-US", zh: "zh-CN" };

/** A count or amount as the interface language writes it: thousands grouped ("12,480"). */
export function formatNumber(n: number, lang: Lang = i18n.lang): string {
  if (!Number.isFinite(n)) return String(n);
  return new Intl.NumberFormat(locales[lang], { maximumFractionDigits: 20 }).format(n);
}

/** `{name, plural, one {…} other {…}}` chosen by the language's plural rules; `#` is the number. */
const PLURAL = /\{(\w+), plural,((?:\s*(?:=\d+|zero|one|two|few|many|other)\s*\{[^{}]*\})+)\s*\}/g;
const BRANCH = /(=\d+|zero|one|two|few|many|other)\s*\{([^{}]*)\}/g;

function plurals(text: string, vars: Record<string, string | number>, lang: Lang): string {
  return text.replace(PLURAL, (whole, name: string, body: string) => {
    const raw = vars[name];
    const n = typeof raw === "number" ? raw : Number(raw);
    if (raw === undefined || Number.isNaN(n)) return whole;
    const branches = new Map<string, string>();
    for (const m of body.matchAll(BRANCH)) branches.set(m[1] ?? "other", m[2] ?? "");
    const rule = new Intl.PluralRules(locales[lang]).select(n);
    const chosen = branches.get(`=${n}`) ?? branches.get(rule) ?? branches.get("other") ?? "";
    return chosen.replace(/#/g, formatNumber(n, lang));
  });
}

/** Translate `key`, filling `{name}` placeholders from `vars` (numbers grouped in thousands,
 *  except identifiers such as a seed or a run number) and choosing plural forms. */
export function t(key: MessageKey, vars: Record<string, string | number> = {}): string {
  const lang = i18n.lang;
  const text = plurals(catalogues[lang][key] ?? en[key], vars, lang);
  return text.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = vars[name];
    if (v === undefined) return `{${name}}`;
    return typeof v === "number" && !IDENTIFIERS.has(name) ? formatNumber(v, lang) : String(v);
  });
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
