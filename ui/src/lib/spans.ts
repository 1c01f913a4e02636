// Evidence spans on the rating screen, kept pure so they can be unit-tested: offsets between the
// page's UTF-16 and the study's Unicode scalar values (an emoji is one character to the study and
// two units to JavaScript), the caret's steps by word and by sentence, the keys of marking mode,
// and the pieces the reply is drawn in (each marked span, the selection, the code labels).
import type { ShownSpan } from "./bindings";
import type { KeyPress } from "./keys";

/** The reply's characters (Unicode scalar values), as the study counts them. */
export function scalars(text: string): string[] {
  return Array.from(text);
}

/** The character index of UTF-16 index `unit` (a unit inside a surrogate pair counts as its character's). */
export function scalarIndex(text: string, unit: number): number {
  let n = 0;
  let i = 0;
  const end = Math.max(0, Math.min(unit, text.length));
  while (i < end) {
    const c = text.codePointAt(i) ?? 0;
    i += c > 0xffff ? 2 : 1;
    n++;
  }
  // A unit inside a surrogate pair stands for the character it belongs to (counted above).
  return i > end ? n - 1 : n;
}

/** The UTF-16 index of character `index` of `text`. */
export function unitIndex(text: string, index: number): number {
  let i = 0;
  for (let n = 0; n < index && i < text.length; n++) {
    const c = text.codePointAt(i) ?? 0;
    i += c > 0xffff ? 2 : 1;
  }
  return i;
}

/** Characters `[start, end)` of `text`. */
export function slice(text: string, start: number, end: number): string {
  return text.slice(unitIndex(text, start), unitIndex(text, end));
}

/** A range of characters `[start, end)`; the caret is `end` when the selection grew rightwards. */
export interface Selection {
  anchor: number;
  caret: number;
}

export function ordered(s: Selection): { start: number; end: number } {
  return { start: Math.min(s.anchor, s.caret), end: Math.max(s.anchor, s.caret) };
}

/** The pieces of `text` Intl.Segmenter finds at `granularity`, in characters. */
type Piece = { start: number; end: number; wordLike: boolean };

function pieces(text: string, granularity: "word" | "sentence", lang: string | undefined): Piece[] {
  const out: Piece[] = [];
  const Seg = (Intl as unknown as { Segmenter?: typeof Intl.Segmenter }).Segmenter;
  if (Seg) {
    const seg = new Seg(lang, { granularity });
    for (const s of seg.segment(text)) {
      const start = scalarIndex(text, s.index);
      const end = scalarIndex(text, s.index + s.segment.length);
      const wordLike = granularity === "sentence" ? s.segment.trim() !== "" : !!s.isWordLike;
      out.push({ start, end, wordLike });
    }
    return out;
  }
  // Without a segmenter: words are runs of letters and digits, sentences end at . ! ? 。！？
  const chars = scalars(text);
  const at = (i: number) => chars[i] ?? "";
  const isWord = (c: string) => /[\p{L}\p{N}]/u.test(c);
  const ends = (c: string) => /[.!?。！？]/u.test(c);
  let start = 0;
  for (let i = 1; i <= chars.length; i++) {
    const cut =
      granularity === "word"
        ? i === chars.length || isWord(at(i)) !== isWord(at(i - 1)) || /\p{Script=Han}/u.test(at(i - 1))
        : i === chars.length || (ends(at(i - 1)) && !ends(at(i)) && (/\s/u.test(at(i)) || /[。！？]/u.test(at(i - 1))));
    if (cut) {
      const piece = chars.slice(start, i).join("");
      out.push({ start, end: i, wordLike: granularity === "word" ? isWord(at(start)) : piece.trim() !== "" });
      start = i;
    }
  }
  return out;
}

/** The words of `text` (their starts and ends in characters), punctuation and spaces left out. */
export function words(text: string, lang?: string): { start: number; end: number }[] {
  return pieces(text, "word", lang)
    .filter((p) => p.wordLike)
    .map(({ start, end }) => ({ start, end }));
}

/** The sentences of `text` without their trailing spaces, in characters. */
export function sentences(text: string, lang?: string): { start: number; end: number }[] {
  const chars = scalars(text);
  return pieces(text, "sentence", lang)
    .filter((p) => p.wordLike)
    .map((p) => {
      let end = p.end;
      while (end > p.start && /\s/u.test(chars[end - 1] ?? "")) end--;
      let start = p.start;
      while (start < end && /\s/u.test(chars[start] ?? "")) start++;
      return { start, end };
    });
}

/** How a key moves in marking mode: to a unit's start or end, forwards or back. */
export type Step = { unit: "word" | "sentence" | "all"; forward: boolean; extend: boolean };

/** Where the caret goes from `at` by `step` among `units` (text `length` characters long). */
export function stepCaret(units: { start: number; end: number }[], at: number, step: Step, length: number): number {
  if (step.unit === "all") return step.forward ? length : 0;
  if (step.forward) {
    if (step.extend) {
      // Extending rightwards takes in the next unit whole: to its end.
      const u = units.find((w) => w.end > at);
      return u ? u.end : length;
    }
    const u = units.find((w) => w.start > at);
    return u ? u.start : length;
  }
  // Back: to the start of the unit before the caret (or of the one it is inside).
  for (let i = units.length - 1; i >= 0; i--) {
    const u = units[i];
    if (u && u.start < at) return u.start;
  }
  return 0;
}

/** What a key does in marking mode, or null when it does nothing there. */
export type MarkAction = { kind: "move"; step: Step } | { kind: "pick" } | { kind: "leave" };

export function markAction(e: KeyPress): MarkAction | null {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  const extend = !!e.shiftKey;
  switch (e.key) {
    case "ArrowRight":
      return { kind: "move", step: { unit: "word", forward: true, extend } };
    case "ArrowLeft":
      return { kind: "move", step: { unit: "word", forward: false, extend } };
    case "ArrowDown":
      return { kind: "move", step: { unit: "sentence", forward: true, extend } };
    case "ArrowUp":
      return { kind: "move", step: { unit: "sentence", forward: false, extend } };
    case "Home":
      return { kind: "move", step: { unit: "all", forward: false, extend } };
    case "End":
      return { kind: "move", step: { unit: "all", forward: true, extend } };
    case "c":
    case "C":
    case "Enter":
      return { kind: "pick" };
    case "Escape":
    case "m":
    case "M":
      return { kind: "leave" };
    default:
      return null;
  }
}

/** Apply a move to a selection: a plain move carries the caret alone, an extending one keeps the anchor. */
export function moveSelection(
  sel: Selection,
  step: Step,
  text: string,
  lang?: string,
): Selection {
  const length = scalars(text).length;
  const units = step.unit === "sentence" ? sentences(text, lang) : words(text, lang);
  const caret = stepCaret(units, sel.caret, step, length);
  return step.extend ? { anchor: sel.anchor, caret } : { anchor: caret, caret };
}

/** One piece of the reply as it is drawn: its characters, the spans over it, whether it is selected. */
export interface DrawnPiece {
  start: number;
  end: number;
  text: string;
  /** Indexes (into the spans given) of the spans that cover it. */
  spans: number[];
  selected: boolean;
  /** Indexes of the spans that start here: their labels stand before it. */
  labels: number[];
}

/** The reply cut at every span's and the selection's bounds. */
export function drawPieces(text: string, spans: ShownSpan[], selection: { start: number; end: number } | null): DrawnPiece[] {
  const length = scalars(text).length;
  const cuts = new Set<number>([0, length]);
  for (const s of spans) {
    cuts.add(Math.max(0, Math.min(s.start, length)));
    cuts.add(Math.max(0, Math.min(s.end, length)));
  }
  if (selection && selection.end > selection.start) {
    cuts.add(selection.start);
    cuts.add(selection.end);
  }
  const at = [...cuts].sort((a, b) => a - b);
  const out: DrawnPiece[] = [];
  for (let i = 0; i + 1 < at.length; i++) {
    const start = at[i] ?? 0;
    const end = at[i + 1] ?? start;
    if (end <= start) continue;
    out.push({
      start,
      end,
      text: slice(text, start, end),
      spans: spans.flatMap((s, k) => (s.start <= start && s.end >= end ? [k] : [])),
      selected: !!selection && selection.start <= start && selection.end >= end,
      labels: spans.flatMap((s, k) => (s.start === start ? [k] : [])),
    });
  }
  return out;
}
