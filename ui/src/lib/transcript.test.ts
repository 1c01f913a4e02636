import { describe, expect, it } from "vitest";
import type { Role, ShownTurn } from "./bindings";
import { FOLD_OVER, KEEP_OPEN, foldedCount, isFolded, shapeOf, stepTurn } from "./transcript";

function turns(...roles: Role[]): ShownTurn[] {
  return roles.map((role, i) => ({ turn: i + 1, role, text: `turn ${i + 1}` }));
}

describe("the shape of an item", () => {
  it("one user message before a reply is a single-turn item, shown as the screen always showed it", () => {
    expect(shapeOf({ scope: "reply", history: turns("user") })).toBe("single");
  });

  it("any other history before a reply is a conversation", () => {
    expect(shapeOf({ scope: "reply", history: turns("user", "assistant", "user") })).toBe("reply");
    expect(shapeOf({ scope: "reply", history: turns("system") })).toBe("reply");
    expect(shapeOf({ scope: "reply", history: [] })).toBe("reply");
  });

  it("a session item is the whole conversation, even one of a single message", () => {
    expect(shapeOf({ scope: "session", history: turns("user") })).toBe("session");
  });
});

describe("folding a long history", () => {
  it("a short history is shown whole", () => {
    expect(foldedCount("reply", FOLD_OVER)).toBe(0);
  });

  it("a long one shows its last turns and folds the rest", () => {
    expect(foldedCount("reply", 40)).toBe(40 - KEEP_OPEN);
    expect(foldedCount("reply", FOLD_OVER + 1)).toBe(FOLD_OVER + 1 - KEEP_OPEN);
  });

  it("a session is never folded: the whole conversation is what is rated", () => {
    expect(foldedCount("session", 40)).toBe(0);
  });

  it("reading a folded turn unfolds them", () => {
    expect(isFolded(0, 38)).toBe(true);
    expect(isFolded(37, 38)).toBe(true);
    expect(isFolded(38, 38)).toBe(false);
    expect(isFolded(null, 38)).toBe(false);
  });
});

describe("the turn keys", () => {
  it("step back from a reply through every turn before it, and hold at the first", () => {
    let at: number | null = null;
    const visited: (number | null)[] = [];
    for (let i = 0; i < 5; i++) {
      at = stepTurn("reply", at, -1, 3);
      visited.push(at);
    }
    expect(visited).toEqual([2, 1, 0, 0, 0]);
  });

  it("step forward past the last turn back onto the reply, and stay there", () => {
    expect(stepTurn("reply", 1, 1, 3)).toBe(2);
    expect(stepTurn("reply", 2, 1, 3)).toBeNull();
    expect(stepTurn("reply", null, 1, 3)).toBeNull();
  });

  it("on a session item start at either end and hold at both", () => {
    expect(stepTurn("session", null, 1, 4)).toBe(0);
    expect(stepTurn("session", null, -1, 4)).toBe(3);
    expect(stepTurn("session", 3, 1, 4)).toBe(3);
    expect(stepTurn("session", 0, -1, 4)).toBe(0);
  });

  it("do nothing without turns to step through", () => {
    expect(stepTurn("single", null, -1, 1)).toBeNull();
    expect(stepTurn("reply", null, -1, 0)).toBeNull();
    expect(stepTurn("session", null, 1, 0)).toBeNull();
  });
});
