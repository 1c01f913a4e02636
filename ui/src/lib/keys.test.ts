import { describe, expect, it } from "vitest";
import { keyAction, nextMissing } from "./keys";
import { RATING_KEYS } from "./keyHelp";

const likert = { kind: "likert", min: 1, max: 5 } as const;
const binary = { kind: "binary" } as const;

describe("rating keys", () => {
  it("digits on the scale set the value; digits off it do nothing", () => {
    expect(keyAction({ key: "4" }, likert)).toEqual({ kind: "set", value: 4 });
    expect(keyAction({ key: "6" }, likert)).toBeNull();
    expect(keyAction({ key: "0" }, likert)).toBeNull();
  });

  it("binary dimensions take Y/N and 1/0", () => {
    expect(keyAction({ key: "y" }, binary)).toEqual({ kind: "set", value: 1 });
    expect(keyAction({ key: "N" }, binary)).toEqual({ kind: "set", value: 0 });
    expect(keyAction({ key: "1" }, binary)).toEqual({ kind: "set", value: 1 });
    expect(keyAction({ key: "0" }, binary)).toEqual({ kind: "set", value: 0 });
    expect(keyAction({ key: "3" }, binary)).toBeNull();
  });

  it("navigation keys move between criteria and items", () => {
    expect(keyAction({ key: "ArrowDown" }, likert)).toEqual({ kind: "focus", delta: 1 });
    expect(keyAction({ key: "ArrowUp" }, likert)).toEqual({ kind: "focus", delta: -1 });
    expect(keyAction({ key: "Enter" }, likert)).toEqual({ kind: "next" });
    expect(keyAction({ key: "Backspace" }, likert)).toEqual({ kind: "prev" });
    expect(keyAction({ key: "ArrowLeft" }, likert)).toEqual({ kind: "prev" });
    expect(keyAction({ key: "?" }, likert)).toEqual({ kind: "help" });
  });

  it("turn keys step through a conversation and Esc returns to the reply, on every scale", () => {
    for (const scale of [likert, binary]) {
      for (const key of ["[", "k", "K"]) expect(keyAction({ key }, scale)).toEqual({ kind: "turn", step: -1 });
      for (const key of ["]", "j", "J"]) expect(keyAction({ key }, scale)).toEqual({ kind: "turn", step: 1 });
      expect(keyAction({ key: "Escape" }, scale)).toEqual({ kind: "reply" });
    }
  });

  it("Tab and Shift+Tab belong to the page, which moves through every control with them", () => {
    for (const scale of [likert, binary, undefined]) {
      expect(keyAction({ key: "Tab" }, scale)).toBeNull();
      expect(keyAction({ key: "Tab", shiftKey: true }, scale)).toBeNull();
    }
  });

  it("modified keys belong to the system, not the screen", () => {
    expect(keyAction({ key: "4", ctrlKey: true }, likert)).toBeNull();
  });

  it("finds the next missing criterion, wrapping around", () => {
    expect(nextMissing([1, null, 3, null], 0)).toBe(1);
    expect(nextMissing([1, null, 3, null], 1)).toBe(3);
    expect(nextMissing([null, 2, 3, 4], 3)).toBe(0);
    expect(nextMissing([1, 2], 0)).toBe(-1);
  });
});

describe("rating key help", () => {
  // How the help prints a key, as the key name a press carries.
  const pressed: Record<string, string> = { "↑": "ArrowUp", "↓": "ArrowDown", "→": "ArrowRight", "←": "ArrowLeft", Esc: "Escape" };
  const keysOf = (printed: string) => (printed === "1 – 5" ? ["1", "2", "3", "4", "5"] : printed.split(/ · | \/ | /));

  it("names only keys the rating screen acts on (and Tab, which the page moves focus with)", () => {
    for (const line of RATING_KEYS) {
      if (line.keys === "Tab") continue;
      for (const key of keysOf(line.keys).map((k) => pressed[k] ?? k)) {
        const action = keyAction({ key }, likert) ?? keyAction({ key }, binary);
        expect(action, `${key} (${line.does})`).not.toBeNull();
      }
    }
  });

  it("lists every key the screen acts on once, so no two lines claim the same key", () => {
    const seen = new Map<string, string>();
    for (const line of RATING_KEYS) {
      for (const key of keysOf(line.keys)) {
        // The digits of a binary scale (1 / 0) are the Likert digits' own keys on another scale.
        if (line.does === "help.binary" && /^[0-9]$/.test(key)) continue;
        expect(seen.get(key.toLowerCase()), `${key} is listed for ${line.does}`).toBeUndefined();
        seen.set(key.toLowerCase(), line.does);
      }
    }
    for (const key of ["[", "]", "k", "j", "esc"]) expect(seen.has(key), `${key} is in the help`).toBe(true);
  });
});
