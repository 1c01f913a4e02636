import { describe, expect, it } from "vitest";
import { pairKey } from "./pairKeys";

describe("pair screen keys", () => {
  it("choose A, B or equal with the digits and the arrows", () => {
    expect(pairKey("1"), "1 is the answer shown first").toEqual({ kind: "choose", choice: "A" });
    expect(pairKey("ArrowLeft"), "← points at the answer on the left").toEqual({ kind: "choose", choice: "A" });
    expect(pairKey("2"), "2 is the answer shown second").toEqual({ kind: "choose", choice: "B" });
    expect(pairKey("ArrowRight"), "→ points at the answer on the right").toEqual({ kind: "choose", choice: "B" });
    expect(pairKey("0"), "0 says neither").toEqual({ kind: "choose", choice: "Tie" });
    expect(pairKey("="), "= says equal").toEqual({ kind: "choose", choice: "Tie" });
  });
  it("move, go on, skip and go back", () => {
    expect(pairKey("ArrowDown"), "↓ moves to the next question").toEqual({ kind: "focus", delta: 1 });
    expect(pairKey("ArrowUp"), "↑ moves to the question before").toEqual({ kind: "focus", delta: -1 });
    expect(pairKey("Enter"), "Enter goes on").toEqual({ kind: "next" });
    expect(pairKey("s"), "S skips").toEqual({ kind: "skip" });
    expect(pairKey("Backspace"), "Backspace goes back").toEqual({ kind: "prev" });
    expect(pairKey("3"), "3 means nothing on a pair (there is no third answer)").toBeNull();
  });
  it("flag and write a rationale with the single-answer screen's keys", () => {
    expect(pairKey("f"), "F flags the pair, as it flags an item").toEqual({ kind: "flag" });
    expect(pairKey("R"), "R opens the rationale, as on an item").toEqual({ kind: "rationale" });
  });
});
