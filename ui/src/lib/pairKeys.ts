// The pair screen's keys: 1 or ← chooses A (the answer shown first), 2 or → chooses B, 0 or =
// says the two are equal, ↑/↓ (or k/j) move between questions, Enter goes on, S skips the pair,
// Backspace goes back. Pure, so the mapping is unit-tested.
import type { ShownChoice } from "./bindings";

export type PairAction =
  | { kind: "choose"; choice: ShownChoice }
  | { kind: "focus"; delta: number }
  | { kind: "next" }
  | { kind: "skip" }
  | { kind: "prev" };

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
    default:
      return null;
  }
}
