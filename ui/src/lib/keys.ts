// The rating screen's keyboard map, kept pure so it can be unit-tested: a key press (and the scale
// of the focused criterion) becomes one action.
import type { Scale } from "./bindings";

export type KeyAction =
  | { kind: "set"; value: number }
  | { kind: "focus"; delta: number }
  | { kind: "next" }
  | { kind: "prev" }
  | { kind: "skip" }
  | { kind: "flag" }
  | { kind: "rationale" }
  | { kind: "help" }
  // The conversation before a reply: read the previous or next turn, or return to the reply.
  | { kind: "turn"; step: -1 | 1 }
  | { kind: "reply" }
  // Marking mode on the reply: evidence spans chosen by keyboard (its keys are lib/spans.ts').
  | { kind: "mark" };

export interface KeyPress {
  key: string;
  shiftKey?: boolean;
  ctrlKey?: boolean;
  metaKey?: boolean;
  altKey?: boolean;
}

/** What a key press means on the rating screen, or null when it means nothing there. */
export function keyAction(e: KeyPress, scale: Scale | undefined): KeyAction | null {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  const k = e.key;
  if (scale) {
    if (scale.kind === "binary") {
      if (k === "1" || k === "y" || k === "Y") return { kind: "set", value: 1 };
      if (k === "0" || k === "n" || k === "N") return { kind: "set", value: 0 };
    } else if (scale.kind === "likert" && /^[0-9]$/.test(k)) {
      const v = Number(k);
      if (v >= scale.min && v <= scale.max) return { kind: "set", value: v };
      return null;
    }
  }
  switch (k) {
    // Tab is the page's: it moves through every control (the criteria among them), never
    // between criteria only.
    case "ArrowDown":
      return { kind: "focus", delta: 1 };
    case "ArrowUp":
      return { kind: "focus", delta: -1 };
    case "Enter":
    case "ArrowRight":
      return { kind: "next" };
    case "Backspace":
    case "ArrowLeft":
      return { kind: "prev" };
    case "s":
    case "S":
      return { kind: "skip" };
    case "f":
    case "F":
      return { kind: "flag" };
    case "r":
    case "R":
      return { kind: "rationale" };
    case "?":
      return { kind: "help" };
    case "[":
    case "k":
    case "K":
      return { kind: "turn", step: -1 };
    case "]":
    case "j":
    case "J":
      return { kind: "turn", step: 1 };
    case "Escape":
      return { kind: "reply" };
    case "m":
    case "M":
      return { kind: "mark" };
    default:
      return null;
  }
}

/** The index of the first criterion without a value after `from` (wrapping), or -1 when none. */
export function nextMissing(values: (number | null)[], from: number): number {
  const n = values.length;
  for (let step = 1; step <= n; step++) {
    const i = (from + step) % n;
    if (values[i] === null || values[i] === undefined) return i;
  }
  return -1;
}
