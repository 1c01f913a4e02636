import { describe, expect, it } from "vitest";
import {
  buildSettings,
  defaultBaseUrl,
  formatCost,
  formatDuration,
  formatRate,
  keyOriginMessage,
  percentFinished,
  type JudgeForm,
} from "./judge";

const prompt = { format: "json-scores", system: "You rate answers.", user: "{{context}}\n---\n{{response}}" } as const;

function form(over: Partial<JudgeForm> = {}): JudgeForm {
  return {
    provider: "openai-compatible",
    baseUrl: defaultBaseUrl("openai-compatible"),
    model: "llama3.1:8b",
    raterName: "",
    family: "",
    rubric: "mentalbench",
    selection: "all",
    sampleN: 20,
    seed: 1,
    repetitions: 1,
    historyN: 10,
    historyAll: false,
    temperature: 0.7,
    maxTokens: 1024,
    priceIn: 0,
    priceOut: 0,
    prompt: { ...prompt },
    defaultPrompt: { ...prompt },
    ...over,
  };
}

describe("judge settings from the form", () => {
  it("defaults to a local Ollama server and the papers' temperature, sending no prompt when unchanged", () => {
    const built = buildSettings(form());
    expect(built.ok, "a complete form builds").toBe(true);
    if (!built.ok) return;
    expect(built.settings.base_url).toBe("http://localhost:11434/v1");
    expect(built.settings.temperature).toBe(0.7);
    expect(built.settings.selection).toEqual({ kind: "all" });
    expect(built.settings.prompt, "the rubric's default prompt is the core's to fill in").toBeNull();
    expect(built.settings.rater_name, "an empty name means the model id").toBeNull();
  });

  it("sends an edited prompt, a sample and trimmed names", () => {
    const built = buildSettings(
      form({
        selection: "sample",
        sampleN: 5,
        raterName: "  Local judge ",
        temperature: 0,
        prompt: { format: "json-scores", system: "  ", user: "Context: {{context}} Answer: {{response}}" },
      }),
    );
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.settings.selection).toEqual({ kind: "sample", n: 5 });
    expect(built.settings.rater_name).toBe("Local judge");
    expect(built.settings.temperature, "temperature 0 is offered").toBe(0);
    expect(built.settings.prompt).toEqual({
      format: "json-scores",
      system: null,
      user: "Context: {{context}} Answer: {{response}}",
    });
  });

  it("names the first unusable field", () => {
    const error = (over: Partial<JudgeForm>) => {
      const b = buildSettings(form(over));
      return b.ok ? null : b.error;
    };
    expect(error({ baseUrl: "localhost:11434" })).toBe("judge.err.url");
    expect(error({ baseUrl: "HTTPS://API.OPENAI.COM/v1" })).toBeNull();
    expect(error({ model: "  " })).toBe("judge.err.model");
    expect(error({ selection: "sample", sampleN: 0 })).toBe("judge.err.sample");
    expect(error({ repetitions: 1.5 })).toBe("judge.err.repetitions");
    expect(error({ temperature: 2.5 })).toBe("judge.err.temperature");
    expect(error({ priceOut: -1 })).toBe("judge.err.price");
    expect(error({ prompt: { format: "json-scores", system: null, user: "{{context}} only" } })).toBe(
      "judge.err.promptResponse",
    );
    expect(error({ prompt: { format: "json-scores", system: "", user: "{{response}} only" } })).toBe(
      "judge.err.promptContext",
    );
  });

  it("sends the history depth: a number of turns, or all", () => {
    const depth = (over: Partial<JudgeForm>) => {
      const b = buildSettings(form(over));
      return b.ok ? b.settings.history : b.error;
    };
    expect(depth({}), "ten turns unless told").toBe(10);
    expect(depth({ historyN: 3 })).toBe(3);
    expect(depth({ historyN: 0 }), "0 shows the reply alone").toBe(0);
    expect(depth({ historyAll: true, historyN: Number.NaN }), "all turns, whatever the number says").toBe("all");
    expect(depth({ historyN: -1 })).toBe("judge.err.history");
    expect(depth({ historyN: 2.5 })).toBe("judge.err.history");
  });

  it("asks of an edited prompt the slots its rubric's default has", () => {
    const error = (p: { format: "json-scores" | "pair-preferences"; user: string }, def: string) => {
      const b = buildSettings(
        form({
          prompt: { format: p.format, system: null, user: p.user },
          defaultPrompt: { format: p.format, system: null, user: def },
        }),
      );
      return b.ok ? null : b.error;
    };
    expect(error({ format: "json-scores", user: "{{history}}\n{{response}}" }, "{{context}} {{response}}"), "{{history}} shows what came before").toBeNull();
    expect(
      error({ format: "json-scores", user: "The whole conversation: {{history}}" }, "{{history}}"),
      "a session rubric's prompt has no reply",
    ).toBeNull();
    expect(error({ format: "pair-preferences", user: "{{history}} A {{response_a}} B {{response_b}}" }, "{{context}} {{response_a}} {{response_b}}")).toBeNull();
    expect(error({ format: "pair-preferences", user: "{{history}} A {{response_a}}" }, "{{context}} {{response_a}} {{response_b}}")).toBe(
      "judge.err.promptResponse",
    );
    expect(error({ format: "json-scores", user: "{{response}}" }, "{{history}} {{response}}")).toBe("judge.err.promptContext");
  });

  it("Anthropic has its own default address", () => {
    expect(defaultBaseUrl("anthropic")).toBe("https://api.anthropic.com/v1");
  });
});

describe("progress formatting", () => {
  it("formats ETAs as m:ss or h:mm:ss and unknown as a dash", () => {
    expect(formatDuration(null)).toBe("—");
    expect(formatDuration(0)).toBe("0:00");
    expect(formatDuration(45_400)).toBe("0:45");
    expect(formatDuration(125_000)).toBe("2:05");
    expect(formatDuration(3_725_000)).toBe("1:02:05");
    expect(formatDuration(-5)).toBe("—");
  });

  it("formats costs, rates and the finished share", () => {
    expect(formatCost(0)).toBe("$0.0000");
    expect(formatCost(0.01234)).toBe("$0.0123");
    expect(formatCost(12.345)).toBe("$12.35");
    expect(formatRate(0.25)).toBe("0.25");
    expect(formatRate(12.34)).toBe("12.3");
    expect(percentFinished({ done: 18, failed: 2, total: 40 })).toBe(50);
    expect(percentFinished({ done: 0, failed: 0, total: 0 }), "an empty run is 0%, not NaN").toBe(0);
  });
});

describe("where the key comes from", () => {
  it("names the variable or account, never a key", () => {
    expect(keyOriginMessage({ kind: "env", var: "OPENAI_API_KEY" })).toEqual({
      key: "judge.keyFrom.env",
      vars: { var: "OPENAI_API_KEY" },
    });
    expect(keyOriginMessage({ kind: "keyring", account: "openai", fallback_env: "OPENAI_API_KEY" })).toEqual({
      key: "judge.keyFrom.keyringOrEnv",
      vars: { account: "openai", var: "OPENAI_API_KEY" },
    });
    expect(keyOriginMessage({ kind: "keyring", account: "openai", fallback_env: null }).key).toBe("judge.keyFrom.keyring");
    expect(keyOriginMessage({ kind: "typed", save_to_keyring: null }).key).toBe("judge.keyFrom.typed");
    expect(keyOriginMessage({ kind: "typed", save_to_keyring: "openai" }).vars).toEqual({ account: "openai" });
    expect(keyOriginMessage({ kind: "none" }).key).toBe("judge.keyFrom.none");
  });
});
