// How the rating screen shows what came before a reply, kept pure so it can be unit-tested: which
// of three shapes an item has, how much of a long history is folded away at first, and where the
// turn keys ([ and ], Esc) lead.
import type { RatingItem } from "./bindings";

/**
 * `single`: one user message and the answer to it (a study of single-turn conversations), shown as
 * the screen always showed it; `reply`: one reply in the light of the turns before it; `session`:
 * the whole conversation is what is rated.
 */
export type Shape = "single" | "reply" | "session";

export function shapeOf(item: Pick<RatingItem, "scope" | "history">): Shape {
  if (item.scope === "session") return "session";
  if (item.history.length === 1 && item.history[0]?.role === "user") return "single";
  return "reply";
}

/** A reply's history longer than this opens with only its last `KEEP_OPEN` turns shown. */
export const FOLD_OVER = 4;
export const KEEP_OPEN = 2;

/** How many turns come onto the page with a new item (the rest follow in the next frame). */
export const FIRST_TURNS = 12;

/** How many of a history's first turns are folded behind the "earlier turns" control. */
export function foldedCount(shape: Shape, length: number): number {
  return shape === "reply" && length > FOLD_OVER ? length - KEEP_OPEN : 0;
}

/**
 * Where a turn key leads. `at` is the index of the turn being read in the history, or null: the
 * reply itself (a reply item) or no turn yet (a session item, whose whole conversation is rated).
 * Stepping back from the reply reads the last turn before it; stepping on past the last turn
 * returns to the reply. A session item's first key reads its first or last turn; its ends hold.
 * A single-turn item has no turns to step through.
 */
export function stepTurn(shape: Shape, at: number | null, step: -1 | 1, length: number): number | null {
  if (shape === "single" || length === 0) return null;
  if (at === null) {
    if (shape === "reply") return step < 0 ? length - 1 : null;
    return step < 0 ? length - 1 : 0;
  }
  const next = at + step;
  if (next < 0) return 0;
  if (next >= length) return shape === "reply" ? null : length - 1;
  return next;
}

/** Whether the turn at `at` is among the folded ones, so reading it must unfold them. */
export function isFolded(at: number | null, folded: number): boolean {
  return at !== null && at < folded;
}
