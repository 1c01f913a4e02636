import { describe, expect, it } from "vitest";
import { MARKING_KEYS } from "./keyHelp";
import { drawPieces, markAction, moveSelection, ordered, scalarIndex, scalars, sentences, slice, unitIndex, words } from "./spans";

const ZH = "听起来你很难受 😢。你可以拨打心理援助热线 12356。你有没有想过伤害自己？";
const EN = "I hear how tired you are. You should just cheer up. Please call a crisis line tonight.";

describe("offsets in characters", () => {
  it("counts an emoji as one character and converts both ways", () => {
    const emoji = ZH.indexOf("😢");
    expect(emoji, "the emoji's UTF-16 index").toBe(8);
    expect(scalarIndex(ZH, emoji), "its character index").toBe(8);
    expect(scalarIndex(ZH, emoji + 2), "the character after it is 9, not 10").toBe(9);
    expect(scalarIndex(ZH, emoji + 1), "a unit inside the pair stands for the emoji").toBe(8);
    expect(unitIndex(ZH, 9), "character 9 starts after both units").toBe(emoji + 2);
    expect(slice(ZH, 0, 9), "characters 0–9").toBe("听起来你很难受 😢");
    expect(scalars(ZH).length, "the reply's length in characters").toBe(ZH.length - 1);
    for (let i = 0; i <= scalars(ZH).length; i++) {
      expect(scalarIndex(ZH, unitIndex(ZH, i)), `character ${i} round-trips`).toBe(i);
    }
  });
});

describe("the caret in marking mode", () => {
  it("moves by word and extends a selection to whole words", () => {
    const ws = words(EN, "en");
    expect(ws[0], "the first word").toEqual({ start: 0, end: 1 });
    let sel = { anchor: 0, caret: 0 };
    sel = moveSelection(sel, { unit: "word", forward: true, extend: false }, EN, "en");
    expect(sel, "a plain move goes to the next word's start").toEqual({ anchor: 2, caret: 2 });
    sel = moveSelection(sel, { unit: "word", forward: true, extend: true }, EN, "en");
    sel = moveSelection(sel, { unit: "word", forward: true, extend: true }, EN, "en");
    const r = ordered(sel);
    expect(slice(EN, r.start, r.end), "two words taken in whole").toBe("hear how");
    sel = moveSelection(sel, { unit: "word", forward: false, extend: true }, EN, "en");
    expect(slice(EN, ordered(sel).start, ordered(sel).end), "back one word").toBe("hear ");
  });

  it("moves by sentence, in English and in Chinese", () => {
    const en = sentences(EN, "en");
    expect(en.map((s) => slice(EN, s.start, s.end)), "three sentences, no trailing space").toEqual([
      "I hear how tired you are.",
      "You should just cheer up.",
      "Please call a crisis line tonight.",
    ]);
    let sel = { anchor: 0, caret: 0 };
    sel = moveSelection(sel, { unit: "sentence", forward: true, extend: false }, EN, "en");
    sel = moveSelection(sel, { unit: "sentence", forward: true, extend: true }, EN, "en");
    expect(slice(EN, ordered(sel).start, ordered(sel).end), "the second sentence").toBe("You should just cheer up.");
    const zh = sentences(ZH, "zh");
    expect(slice(ZH, zh[0]!.start, zh[0]!.end), "the first Chinese sentence, emoji whole").toBe("听起来你很难受 😢。");
  });

  it("maps keys without clashing with the rating keys' meaning", () => {
    expect(markAction({ key: "ArrowRight", shiftKey: true }), "Shift+→ extends by word").toEqual({
      kind: "move",
      step: { unit: "word", forward: true, extend: true },
    });
    expect(markAction({ key: "ArrowDown" })?.kind, "↓ moves by sentence").toBe("move");
    expect(markAction({ key: "c" }), "C opens the picker").toEqual({ kind: "pick" });
    expect(markAction({ key: "Escape" }), "Esc leaves marking mode").toEqual({ kind: "leave" });
    expect(markAction({ key: "3" }), "a digit does nothing while marking").toBeNull();
    expect(markAction({ key: "ArrowRight", ctrlKey: true }), "the window's chords pass").toBeNull();
  });
});

describe("the reply as drawn", () => {
  it("cuts the text at every span and the selection, with labels where spans start", () => {
    const spans = [
      { code: "a", start: 0, end: 9, severity: null },
      { code: "b", start: 4, end: 12, severity: null },
    ];
    const pieces = drawPieces(ZH, spans, { start: 8, end: 10 });
    expect(pieces.map((p) => p.text).join(""), "nothing is lost or doubled").toBe(ZH);
    const emoji = pieces.find((p) => p.text === "😢");
    expect(emoji, "the emoji is a piece of its own").toMatchObject({ start: 8, end: 9, spans: [0, 1], selected: true });
    expect(pieces.find((p) => p.start === 4)?.labels, "the second span's label stands at 4").toEqual([1]);
  });
});

describe("marking mode's key help", () => {
  const pressed: Record<string, string> = { "↑": "ArrowUp", "↓": "ArrowDown", "→": "ArrowRight", "←": "ArrowLeft", Esc: "Escape" };
  it("names only keys marking mode acts on, each once", () => {
    const seen = new Set<string>();
    for (const line of MARKING_KEYS) {
      for (const printed of line.keys.split(/ · | /)) {
        const key = pressed[printed] ?? printed;
        expect(seen.has(key), `${key} is listed once`).toBe(false);
        seen.add(key);
        if (key === "Shift") {
          expect(markAction({ key: "ArrowRight", shiftKey: true }), "Shift extends a move").toMatchObject({ step: { extend: true } });
          continue;
        }
        expect(markAction({ key }), `${key} (${line.does}) means something in marking mode`).not.toBeNull();
      }
    }
  });
});
