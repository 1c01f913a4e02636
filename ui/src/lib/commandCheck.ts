// The check behind commands.test.ts, kept pure (texts in, problems out) so a test can feed it a
// renamed command and see it reported. It reads the shell's command lists (command_names.rs) and
// its `#[tauri::command]` functions (commands/*.rs), and compares them with the window's list
// (commands.ts) and with what ipc.ts actually invokes: each command name, and each argument key
// against the function's parameters as Tauri names them (camelCase unless `rename_all` says).
// Only what the tests need of Rust is understood: comments, strings, attributes and signatures.

/** One `#[tauri::command]` function: its name and the arguments the window must send. */
export interface ShellCommand {
  name: string;
  file: string;
  /** The arguments by the key the window sends (Tauri-injected parameters left out). */
  params: { rust: string; key: string; type: string; optional: boolean }[];
}

/** One call ipc.ts made: the command, the argument keys, and which function made it. */
export interface Invocation {
  command: string;
  keys: string[];
  via: string;
}

export interface CheckInput {
  /** The text of src-tauri/src/command_names.rs. */
  commandNames: string;
  /** The texts of src-tauri/src/commands/*.rs, each with its path for the messages. */
  commandSources: { file: string; text: string }[];
  /** The window's list (COMMANDS of commands.ts). */
  windowCommands: readonly string[];
  /** What ipc.ts invoked when each of its functions was called once. */
  invocations: Invocation[];
}

const NAMES_FILE = "src-tauri/src/command_names.rs";
const WINDOW_FILE = "ui/src/lib/commands.ts";

/**
 * Parameters Tauri fills itself rather than from the window's arguments. A `Channel` is not among
 * them: the window creates it and sends it under the parameter's key.
 */
const INJECTED = new Set(["State", "AppHandle", "Window", "Webview", "WebviewWindow", "CommandScope", "GlobalScope"]);

/**
 * Rust source read as code: comments become spaces (`code`), and in `bare` the contents of string
 * and char literals too, so neither a comment nor a string that mentions an attribute is taken
 * for one. Both keep every character's position (and line breaks), so an index found in `bare`
 * reads the same place in `code`.
 */
export function lex(text: string): { code: string; bare: string } {
  let code = "";
  let bare = "";
  const blank = (s: string) => s.replace(/[^\n]/g, " ");
  const keep = (s: string) => {
    code += s;
    bare += s;
  };
  const literal = (open: string, body: string, close: string) => {
    code += open + body + close;
    bare += open + blank(body) + close;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? text.length : end;
      code += blank(text.slice(i, stop));
      bare += blank(text.slice(i, stop));
      i = stop;
      continue;
    }
    if (c === "/" && next === "*") {
      let depth = 0;
      let j = i;
      while (j < text.length) {
        if (text[j] === "/" && text[j + 1] === "*") {
          depth++;
          j += 2;
        } else if (text[j] === "*" && text[j + 1] === "/") {
          depth--;
          j += 2;
          if (depth === 0) break;
        } else j++;
      }
      code += blank(text.slice(i, j));
      bare += blank(text.slice(i, j));
      i = j;
      continue;
    }
    const raw = /^b?r(#*)"/.exec(text.slice(i, i + 20));
    if (raw && !/\w/.test(text[i - 1] ?? "")) {
      const close = `"${raw[1]}`;
      const end = text.indexOf(close, i + raw[0].length);
      const stop = end === -1 ? text.length : end;
      literal(raw[0], text.slice(i + raw[0].length, stop), text.slice(stop, stop + close.length));
      i = stop + close.length;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      literal('"', text.slice(i + 1, j), text.slice(j, j + 1));
      i = j + 1;
      continue;
    }
    if (c === "'") {
      // A char literal ('x', '\n', '"'); otherwise a lifetime ('_, 'a), which has no closing quote.
      const m = /^'(\\.[^']*|[^\\'])'/.exec(text.slice(i, i + 12));
      if (m) {
        literal("'", m[0].slice(1, -1), "'");
        i += m[0].length;
        continue;
      }
    }
    keep(c);
    i++;
  }
  return { code, bare };
}

/** The command lists of command_names.rs (`const NAME: &[&str] = &[…]`), by list name. */
export function commandLists(text: string): Map<string, string[]> {
  const lists = new Map<string, string[]>();
  const { code } = lex(text);
  for (const m of code.matchAll(/const\s+(\w+)\s*:\s*&\s*\[\s*&\s*(?:'static\s+)?str\s*\]\s*=\s*&\s*\[([^\]]*)\]/g)) {
    lists.set(m[1]!, [...m[2]!.matchAll(/"([^"\\]*)"/g)].map((s) => s[1]!));
  }
  return lists;
}

/** Tauri's default argument key for a snake_case Rust parameter (heck's lowerCamelCase). */
export function camelCase(name: string): string {
  const words = name.split("_").filter((w) => w !== "");
  return words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0]!.toUpperCase() + w.slice(1).toLowerCase())).join("");
}

/** The text from `open` (an index of `(`, `[`, `<` or `{`) to its matching closer, without either. */
function balanced(code: string, open: number): { inner: string; end: number } {
  const pairs: Record<string, string> = { "(": ")", "[": "]", "<": ">", "{": "}" };
  const stack: string[] = [];
  for (let i = open; i < code.length; i++) {
    const c = code[i]!;
    if (c === '"') {
      i++;
      while (i < code.length && code[i] !== '"') i += code[i] === "\\" ? 2 : 1;
      continue;
    }
    if (c === ">" && code[i - 1] === "-") continue; // `->` inside a type: not a closer
    if (pairs[c]) stack.push(pairs[c]!);
    else if (c === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return { inner: code.slice(open + 1, i), end: i + 1 };
    }
  }
  return { inner: code.slice(open + 1), end: code.length };
}

/** Split at top-level commas (outside any brackets). */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "(" || c === "[" || c === "<" || c === "{") depth++;
    else if ((c === ")" || c === "]" || c === "}" || (c === ">" && text[i - 1] !== "-")) && depth > 0) depth--;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

/** The type's own name: `tauri::State<'_, AppState>` → `State`, `&AppHandle` → `AppHandle`. */
function baseName(type: string): string {
  const path = type.replace(/^&\s*('\w+\s+)?(mut\s+)?/, "").split("<")[0]!.trim();
  return path.split("::").pop()!.trim();
}

function injected(type: string): boolean {
  const path = type.replace(/^&\s*('\w+\s+)?(mut\s+)?/, "").split("<")[0]!.trim();
  return INJECTED.has(baseName(type)) || /(^|::)ipc::Request$/.test(path);
}

/** The `#[tauri::command]` functions of one Rust source file. */
export function tauriCommands(text: string, file: string): ShellCommand[] {
  // Searched in `bare` (no comments, no string contents); the attribute's arguments read from `code`.
  const { code: source, bare: code } = lex(text);
  const found: ShellCommand[] = [];
  const attribute = /#\s*\[\s*tauri\s*::\s*command\b/g;
  for (let m = attribute.exec(code); m; m = attribute.exec(code)) {
    const open = code.indexOf("[", m.index);
    const attr = balanced(code, open);
    const renameAll = /rename_all\s*=\s*"(\w+)"/.exec(source.slice(open, attr.end))?.[1] ?? "camelCase";
    let at = attr.end;
    // Further attributes (`#[allow(…)]`) may stand between the command attribute and the function.
    for (;;) {
      const rest = code.slice(at);
      const other = /^\s*#\s*\[/.exec(rest);
      if (!other) break;
      at = balanced(code, at + other[0].length - 1).end;
    }
    const sig = /^\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)\s*/.exec(code.slice(at));
    if (!sig) continue;
    const name = sig[1]!;
    at += sig[0].length;
    if (code[at] === "<") at = balanced(code, at).end;
    while (/\s/.test(code[at] ?? "")) at++;
    if (code[at] !== "(") continue;
    const params: ShellCommand["params"] = [];
    for (const part of splitTopLevel(balanced(code, at).inner)) {
      const colon = part.search(/(?<!:):(?!:)/);
      if (colon === -1) continue; // `self`: not a command parameter
      const rust = part.slice(0, colon).trim().replace(/^mut\s+/, "");
      const type = part.slice(colon + 1).trim();
      if (injected(type)) continue;
      params.push({
        rust,
        key: renameAll === "snake_case" ? rust : camelCase(rust),
        type,
        optional: /^((std|core)\s*::\s*option\s*::\s*)?Option\s*</.test(type),
      });
    }
    found.push({ name, file, params });
  }
  return found;
}

/** Every way the window's commands and the shell's can disagree, each said in one line. */
export function checkCommands(input: CheckInput): string[] {
  const problems: string[] = [];
  const lists = commandLists(input.commandNames);
  if (lists.size === 0) return [`no command lists (const NAME: &[&str] = &[…]) found in ${NAMES_FILE}`];
  const listOf = new Map<string, string>();
  for (const [list, names] of lists) for (const n of names) listOf.set(n, list);
  const listNames = [...lists.keys()].join(", ");
  const functions = new Map<string, ShellCommand>();
  for (const source of input.commandSources) {
    for (const c of tauriCommands(source.text, source.file)) functions.set(c.name, c);
  }
  const windowCommands = new Set(input.windowCommands);

  for (const [name, list] of listOf) {
    if (!windowCommands.has(name)) {
      problems.push(`"${name}" is a shell command (${list} in ${NAMES_FILE}) but is missing from COMMANDS in ${WINDOW_FILE}`);
    }
    if (!functions.has(name)) {
      problems.push(`"${name}" is in ${list} of ${NAMES_FILE} but no #[tauri::command] fn ${name} was found in src-tauri/src/commands/`);
    }
  }
  for (const name of windowCommands) {
    if (!listOf.has(name)) {
      problems.push(`"${name}" is in COMMANDS of ${WINDOW_FILE} but is not a shell command (not in ${listNames} of ${NAMES_FILE})`);
    }
  }

  for (const call of input.invocations) {
    if (!listOf.has(call.command)) {
      problems.push(`ipc.ts (${call.via}) invokes "${call.command}", which is not a shell command (not in ${listNames} of ${NAMES_FILE})`);
      continue;
    }
    const fn = functions.get(call.command);
    if (!fn) continue; // reported above
    const takes = fn.params.map((p) => p.key);
    const signature = `fn ${fn.name}(${fn.params.map((p) => p.rust).join(", ")}) in ${fn.file}`;
    for (const key of call.keys) {
      if (takes.includes(key)) continue;
      const snake = fn.params.find((p) => p.rust === key && p.key !== key);
      const why = snake
        ? `Tauri sends the Rust parameter "${key}" as "${snake.key}"`
        : takes.length === 0
          ? `it takes no arguments (${signature})`
          : `it takes ${takes.map((k) => `"${k}"`).join(", ")} (${signature})`;
      problems.push(`ipc.ts (${call.via}) passes the key "${key}" to "${call.command}", which is not one of its parameters: ${why}`);
    }
    for (const p of fn.params) {
      if (!p.optional && !call.keys.includes(p.key)) {
        problems.push(`ipc.ts (${call.via}) does not pass "${p.key}" to "${call.command}", which needs it (${p.rust}: ${p.type} in ${signature})`);
      }
    }
  }
  return problems;
}
