// Names as the window shows them (rater, expert, judge, study, source and file names): a control
// character or one that changes the direction of the text around it is written out as `<U+202E>`
// — the same characters and spelling as the core's `text::visible` uses in messages and exports —
// so a right-to-left override in a name can neither reverse nor hide what follows it. In a
// sentence a name also goes between first-strong isolate marks (U+2068 … U+2069), which its own
// characters can no longer close; as an element it is a `<bdi>` (components/common/Name.svelte).

/** Whether `c` (one code point) is a control character or a direction mark or override. */
export function isHiddenControl(c: string): boolean {
  const n = c.codePointAt(0) ?? 0;
  return (
    n <= 0x1f ||
    (n >= 0x7f && n <= 0x9f) ||
    n === 0x061c ||
    n === 0x200e ||
    n === 0x200f ||
    (n >= 0x202a && n <= 0x202e) ||
    (n >= 0x2066 && n <= 0x2069)
  );
}

/** `name` with every hidden control character written as `<U+XXXX>`. */
export function visibleName(name: string): string {
  let out = "";
  for (const c of name) {
    out += isHiddenControl(c)
      ? `<U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}>`
      : c;
  }
  return out;
}

/** `name` made visible and isolated, for placing inside a sentence. */
export function isolatedName(name: string): string {
  return `\u2068${visibleName(name)}\u2069`;
}

/** Whether `path` is named as Concord names the rater packages it writes
 * (`<study>-package-<expert>.concord`): the unlock screen then speaks of a package, since an
 * encrypted file cannot say more of itself before it is opened. */
export function isPackagePath(path: string): boolean {
  const name = path.split(/[\\/]/).pop() ?? "";
  return /-package-.+\.concord$/i.test(name);
}
