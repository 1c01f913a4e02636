// Pure helpers of the judge-run screen: turning the form into the run settings the core expects
// (with the reason when a field is not usable), the words for where a run's key comes from (the
// confirmation before Start), and formatting progress, rates, ETAs and costs.
import type { MessageKey } from "./i18n/en";
import type {
  HistoryDepth,
  KeyOrigin,
  Progress,
  PromptTemplate,
  ProviderKind,
  ResponseSelection,
  RunSettings,
} from "./bindings";

/** A local Ollama server speaks the OpenAI protocol here. */
export const OLLAMA_URL = "http://localhost:11434/v1";
export const ANTHROPIC_URL = "https://api.anthropic.com/v1";

export function defaultBaseUrl(provider: ProviderKind): string {
  return provider === "anthropic" ? ANTHROPIC_URL : OLLAMA_URL;
}

export type SelectionKind = "all" | "expert-rated" | "sample";

/** The judge-run form as the screen holds it (numbers as the inputs give them). */
export interface JudgeForm {
  provider: ProviderKind;
  baseUrl: string;
  model: string;
  raterName: string;
  family: string;
  rubric: string;
  selection: SelectionKind;
  sampleN: number;
  seed: number;
  repetitions: number;
  /** The turns before a reply the judge sees: `historyN`, or every turn when `historyAll`. */
  historyN: number;
  historyAll: boolean;
  temperature: number;
  maxTokens: number;
  priceIn: number;
  priceOut: number;
  /** The prompt as edited; compared with the rubric's default to send `null` when unchanged. */
  prompt: PromptTemplate | null;
  defaultPrompt: PromptTemplate | null;
}

export type Built = { ok: true; settings: RunSettings } | { ok: false; error: MessageKey };

const isInt = (x: number, min: number, max: number) => Number.isInteger(x) && x >= min && x <= max;
const isNum = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);
const blankToNull = (s: string | null | undefined) => (s && s.trim() ? s.trim() : null);

function samePrompt(a: PromptTemplate | null, b: PromptTemplate | null): boolean {
  if (!a || !b) return a === b;
  return a.format === b.format && (a.system ?? "") === (b.system ?? "") && a.user === b.user;
}

/** The run settings for the form, or the message key of the first field that cannot be used. */
export function buildSettings(f: JudgeForm): Built {
  const url = f.baseUrl.trim();
  // The shell applies the full endpoint rule (https, or http to this machine); this only catches typos.
  if (!/^https?:\/\/\S+$/i.test(url)) return { ok: false, error: "judge.err.url" };
  if (!f.model.trim()) return { ok: false, error: "judge.err.model" };
  if (!f.rubric) return { ok: false, error: "judge.err.rubric" };
  let selection: ResponseSelection;
  if (f.selection === "sample") {
    if (!isNum(f.sampleN) || !isInt(f.sampleN, 1, 4_294_967_295)) return { ok: false, error: "judge.err.sample" };
    selection = { kind: "sample", n: f.sampleN };
  } else {
    selection = { kind: f.selection };
  }
  if (!isNum(f.repetitions) || !isInt(f.repetitions, 1, 100)) return { ok: false, error: "judge.err.repetitions" };
  if (!isNum(f.temperature) || f.temperature < 0 || f.temperature > 2) return { ok: false, error: "judge.err.temperature" };
  if (!isNum(f.maxTokens) || !isInt(f.maxTokens, 1, 1_000_000)) return { ok: false, error: "judge.err.maxTokens" };
  if (!isNum(f.seed) || !isInt(f.seed, 0, Number.MAX_SAFE_INTEGER)) return { ok: false, error: "judge.err.seed" };
  for (const p of [f.priceIn, f.priceOut]) {
    if (!isNum(p) || p < 0) return { ok: false, error: "judge.err.price" };
  }
  if (!f.historyAll && (!isNum(f.historyN) || !isInt(f.historyN, 0, 4_294_967_295))) {
    return { ok: false, error: "judge.err.history" };
  }
  if (f.prompt) {
    // The slots the rubric's default prompt has must stay: the reply (none for a session rubric,
    // two for a pairwise one) and what came before it ({{history}} or {{context}}).
    const slots = replySlots(f.defaultPrompt ?? f.prompt);
    if (slots.some((s) => !f.prompt!.user.includes(s))) return { ok: false, error: "judge.err.promptResponse" };
    const before = (s: string) => f.prompt!.user.includes(s) || (f.prompt!.system ?? "").includes(s);
    if (!before("{{history}}") && !before("{{context}}")) return { ok: false, error: "judge.err.promptContext" };
  }
  const history: HistoryDepth = f.historyAll ? "all" : f.historyN;
  const prompt =
    f.prompt && !samePrompt(f.prompt, f.defaultPrompt)
      ? { format: f.prompt.format, system: blankToNull(f.prompt.system), user: f.prompt.user }
      : null;
  return {
    ok: true,
    settings: {
      provider: f.provider,
      base_url: url,
      model: f.model.trim(),
      rater_name: blankToNull(f.raterName),
      family: blankToNull(f.family),
      rubric: f.rubric,
      selection,
      seed: f.seed,
      repetitions: f.repetitions,
      temperature: f.temperature,
      top_p: null,
      max_tokens: f.maxTokens,
      prompt,
      batch: false,
      prices: { input_per_million: f.priceIn, output_per_million: f.priceOut },
      logprobs: false,
      shuffle_criteria: false,
      structured: false,
      both_orders: false,
      history,
      spans: false,
    },
  };
}

/** The reply slots a prompt like `p` must keep: A and B for a pairwise prompt, `{{response}}`
 * when it shows one reply, none for a session rubric's (the whole conversation is judged). */
export function replySlots(p: PromptTemplate): string[] {
  if (p.format === "pair-preferences") return ["{{response_a}}", "{{response_b}}"];
  return p.user.includes("{{response}}") ? ["{{response}}"] : [];
}

/** A duration as h:mm:ss or m:ss; "—" when unknown. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return "—";
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/** US dollars: four decimals below a dollar (local and cheap models), two above. */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return "—";
  return usd < 1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** Calls per second with one decimal (two below 1/s, so a slow judge does not read as 0). */
export function formatRate(perSecond: number | null | undefined): string {
  if (perSecond === null || perSecond === undefined || !Number.isFinite(perSecond)) return "—";
  return perSecond < 1 ? perSecond.toFixed(2) : perSecond.toFixed(1);
}

/** Share of the run's calls that are finished (done or failed), 0–100. */
export function percentFinished(p: Pick<Progress, "done" | "failed" | "total">): number {
  if (p.total <= 0) return 0;
  return Math.min(100, Math.max(0, ((p.done + p.failed) / p.total) * 100));
}

/** Thousands separators for token counts. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** The message (key and values) saying where a run's key comes from — never the key itself. */
export function keyOriginMessage(o: KeyOrigin): { key: MessageKey; vars: Record<string, string> } {
  switch (o.kind) {
    case "none":
      return { key: "judge.keyFrom.none", vars: {} };
    case "typed":
      return o.save_to_keyring !== null
        ? { key: "judge.keyFrom.typedSaved", vars: { account: o.save_to_keyring } }
        : { key: "judge.keyFrom.typed", vars: {} };
    case "keyring":
      return o.fallback_env !== null
        ? { key: "judge.keyFrom.keyringOrEnv", vars: { account: o.account, var: o.fallback_env } }
        : { key: "judge.keyFrom.keyring", vars: { account: o.account } };
    case "env":
      return { key: "judge.keyFrom.env", vars: { var: o.var } };
  }
}
