// The evidence spans of the item on the rating screen and the expert's marking of them, shared
// by the reply (ReplyText: the spans drawn, a mouse selection), the span list and code picker
// (EvidenceSpans) and the screen's keys (RatingScreen: M enters marking mode, whose keys come
// here). Every change goes to the core at once and the list shown is the one it answers with.
import type { ItemSpans, ShownSpan } from "./bindings";
import { ipc, type IpcError } from "./ipc";
import { markAction, moveSelection, ordered, scalars, type Selection } from "./spans";
import type { KeyPress } from "./keys";

/** The code picker: attaching a new span, or changing the code of span `index`. */
export type Picker = { mode: "add" } | { mode: "change"; index: number };

export class Marking {
  /** The item's codes and this expert's spans (null: not loaded, or nothing to mark). */
  data = $state<ItemSpans | null>(null);
  /** Marking mode: the keyboard's caret and selection in the reply. */
  marking = $state(false);
  sel = $state<Selection>({ anchor: 0, caret: 0 });
  /** A selection made with the mouse, waiting for its code. */
  picked = $state<{ start: number; end: number } | null>(null);
  picker = $state<Picker | null>(null);
  error = $state<IpcError | null>(null);
  /** What a screen reader is told of the selection and of each change. */
  said = $state("");
  text = "";
  lang: string | undefined = undefined;
  private item = 0;
  /** Calls to the core run one after another, after the screen's own (given by the screen). */
  private run: <T>(task: () => Promise<T>) => Promise<T>;

  constructor(run: <T>(task: () => Promise<T>) => Promise<T>) {
    this.run = run;
  }

  /** Whether the item can be marked: a reply with text under a rubric with codes. */
  get available(): boolean {
    return !!this.data && this.data.codes.length > 0 && this.text !== "";
  }

  /** The range the picker would attach: the mouse's, else the keyboard's. */
  get range(): { start: number; end: number } | null {
    if (this.picked) return this.picked;
    if (!this.marking) return null;
    const r = ordered(this.sel);
    return r.end > r.start ? r : null;
  }

  /** A new item: its spans are read, marking starts afresh. */
  async load(item: number, text: string | null, lang: string | undefined) {
    this.item = item;
    this.text = text ?? "";
    this.lang = lang;
    this.marking = false;
    this.picker = null;
    this.picked = null;
    this.error = null;
    this.sel = { anchor: 0, caret: 0 };
    this.data = null;
    if (text === null) return;
    try {
      const data = await this.run(() => ipc.itemSpans(item));
      if (this.item === item) this.data = data;
    } catch (e) {
      this.error = e as IpcError;
    }
  }

  enter() {
    if (!this.available) return;
    this.marking = true;
    this.picked = null;
    const r = ordered(this.sel);
    if (r.end > scalars(this.text).length) this.sel = { anchor: 0, caret: 0 };
  }

  leave() {
    this.marking = false;
    this.picker = null;
  }

  /** A selection made with the mouse (or set by a script) in the reply. */
  select(start: number, end: number) {
    if (!this.available) return;
    this.picked = { start, end };
    if (this.marking) this.sel = { anchor: start, caret: end };
    if (!this.picker) this.picker = { mode: "add" };
  }

  /** A key in marking mode; true when it meant something there. */
  key(press: KeyPress, describe: (r: { start: number; end: number }, text: string) => string, empty: string): boolean {
    const action = markAction(press);
    if (!action) return false;
    if (action.kind === "leave") this.leave();
    else if (action.kind === "pick") {
      if (this.range) this.picker = { mode: "add" };
      else this.said = empty;
    } else {
      this.sel = moveSelection(this.sel, action.step, this.text, this.lang);
      const r = ordered(this.sel);
      this.said = describe(r, scalars(this.text).slice(r.start, r.end).join(""));
    }
    return true;
  }

  closePicker() {
    this.picker = null;
    this.forgetMouse();
  }

  /** A mouse selection is done with: the page's own selection goes too. */
  private forgetMouse() {
    if (this.picked) globalThis.getSelection?.()?.removeAllRanges();
    this.picked = null;
  }

  private async apply(task: () => Promise<ItemSpans>, said: string) {
    const item = this.item;
    try {
      const data = await this.run(task);
      if (this.item !== item) return;
      this.data = data;
      this.error = null;
      this.said = said;
    } catch (e) {
      this.error = e as IpcError;
    }
  }

  /** Attach code `code` (with `severity`) to the picked range, or change span `index`'s code. */
  async attach(code: string, severity: string | null, said: string) {
    const picker = this.picker;
    const data = this.data;
    if (!picker || !data) return;
    const item = this.item;
    if (picker.mode === "change") {
      const old = data.spans[picker.index];
      if (!old) return;
      const span: ShownSpan = { code, start: old.start, end: old.end, severity };
      this.picker = null;
      await this.apply(() => ipc.changeSpan(item, { code: old.code, start: old.start, end: old.end }, span), said);
      return;
    }
    const r = this.range;
    if (!r) return;
    this.picker = null;
    this.forgetMouse();
    this.sel = { anchor: r.end, caret: r.end };
    await this.apply(() => ipc.markSpan(item, { code, start: r.start, end: r.end, severity }), said);
  }

  async remove(index: number, said: string) {
    const old = this.data?.spans[index];
    if (!old) return;
    const item = this.item;
    await this.apply(() => ipc.removeSpan(item, { code: old.code, start: old.start, end: old.end }), said);
  }
}
