// The pair screen's keys: 1 or ← chooses A (the answer shown first), 2 or → chooses B, 0 or =
// says the two are equal, ↑/↓ (or k/j) move between questions, Enter goes on, S skips the pair,
// Backspace goes back, F flags the pair and R writes a rationale (as on the single-answer screen).
// Pure, so the mapping is unit-tested.
import type { ShownChoice } from "./bindings";

export type PairAction =
  | { kind: "choose"; choice: ShownChoice }
  | { kind: "focus"; delta: number }
  | { kind: "next" }
  | { kind: "skip" }
  | { kind: "prev" }
  | { kind: "flag" }
  | { kind: "rationale" };

export function pairKey(key: string): PairAction | null {
  switch (key) {
    case "1":
    case "ArrowLeft":
      return { kind: "choose", choice: "A" };
    case "2":
    case "ArrowRight":
      return { kind: "choose", choice: "B" };
    case "0":
    case "=":
      return { kind: "choose", choice: "Tie" };
    case "ArrowUp":
    case "k":
      return { kind: "focus", delta: -1 };
    case "ArrowDown":
    case "j":
      return { kind: "focus", delta: 1 };
    case "Enter":
      return { kind: "next" };
    case "s":
    case "S":
      return { kind: "skip" };
    case "Backspace":
      return { kind: "prev" };
    case "f":
    case "F":
      return { kind: "flag" };
    case "r":
    case "R":
      return { kind: "rationale" };
    default:
      return null;
  }
}
