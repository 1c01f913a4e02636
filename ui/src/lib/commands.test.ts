// The window's command layer checked against the shell's sources: every function of ipc.ts is
// called once (with the IPC mocked) to see the command it invokes and the argument keys it sends,
// and those, with the list in commands.ts, are compared with src-tauri/src/command_names.rs and
// the #[tauri::command] functions of src-tauri/src/commands/. The checker is pure, so the cases
// at the end feed it altered copies of the real sources and see each change reported.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { afterEach, describe, expect, it } from "vitest";
import { COMMANDS } from "./commands";
import { checkCommands, commandLists, tauriCommands, type CheckInput, type Invocation } from "./commandCheck";
import { desktopIpc, ipc, setupIpc } from "./ipc";

/** A path relative to this file, so the test reads the same files from any clone. */
const here = (relative: string) => fileURLToPath(new URL(relative, import.meta.url).href);
const SHELL = "../../../src-tauri/src/";

/** Every `.rs` file under `dir`, with its path from src-tauri/ for the messages. */
function rustFiles(dir: string, shown: string): { file: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? rustFiles(`${dir}/${e.name}`, `${shown}/${e.name}`)
      : e.name.endsWith(".rs")
        ? [{ file: `${shown}/${e.name}`, text: readFileSync(`${dir}/${e.name}`, "utf8") }]
        : [],
  );
}

/** Read the shell's sources, saying which is missing if the shell's layout moved. */
function shellSources<T>(what: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    throw new Error(`cannot read ${what}, which this check compares the window's commands with: ${String(e)}`);
  }
}

const commandNames = shellSources("src-tauri/src/command_names.rs (the shell's command lists)", () =>
  readFileSync(here(`${SHELL}command_names.rs`), "utf8"),
);
const commandSources = shellSources("src-tauri/src/commands/ (the #[tauri::command] functions)", () =>
  rustFiles(here(`${SHELL}commands`), "src-tauri/src/commands"),
);

/** Call every function of ipc.ts once and record what each invokes. */
async function invocations(): Promise<Invocation[]> {
  const seen: Invocation[] = [];
  let via = "";
  mockIPC((command, args) => {
    seen.push({ command, keys: Object.keys(args ?? {}), via });
    return null;
  });
  const modules: Record<string, Record<string, (...args: never[]) => Promise<unknown>>> = {
    ipc,
    setupIpc,
    desktopIpc,
  };
  for (const [module, calls] of Object.entries(modules)) {
    for (const [name, fn] of Object.entries(calls)) {
      via = `${module}.${name}`;
      const before = seen.length;
      // Placeholder arguments: only the keys matter here, never the values.
      await fn(...(Array.from({ length: fn.length }, () => "x") as never[]));
      expect(seen.length, `${via} invokes exactly one command`).toBe(before + 1);
    }
  }
  return seen;
}

afterEach(() => clearMocks());

describe("the window's commands and the shell's", () => {
  it("agree: names, lists and argument keys", async () => {
    const problems = checkCommands({
      commandNames,
      commandSources,
      windowCommands: COMMANDS,
      invocations: await invocations(),
    });
    // One problem a line, so a failure reads as the list of what drifted.
    expect(problems.join("\n")).toBe("");
  });

  it("are read from the shell's sources, not from an empty page", async () => {
    const lists = commandLists(commandNames);
    expect(lists.size).toBeGreaterThanOrEqual(2);
    const functions = commandSources.flatMap((s) => tauriCommands(s.text, s.file));
    expect(functions.length).toBe([...lists.values()].flat().length);
    const calls = await invocations();
    expect(calls.length).toBeGreaterThan(50);
    expect(calls.find((c) => c.command === "unlock_study")?.keys).toEqual(["passphraseText", "remember"]);
  });

  it("only ipc.ts talks to the shell", () => {
    const sources = (dir: string): { file: string; text: string }[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory()
          ? sources(`${dir}/${e.name}`)
          : /\.(ts|svelte)$/.test(e.name) && !e.name.endsWith(".test.ts")
            ? [{ file: `${dir}/${e.name}`, text: readFileSync(`${dir}/${e.name}`, "utf8") }]
            : [],
      );
    const core = ["@tauri-apps", "api", "core"].join("/");
    const root = here("..").replace(/\/$/, "");
    const talking = sources(root).filter((s) => s.text.includes(`"${core}"`) || s.text.includes("__TAURI"));
    expect(talking.map((s) => s.file.slice(root.length + 1))).toEqual(["lib/ipc.ts"]);
  });
});

describe("the check reports", () => {
  const real = async (): Promise<CheckInput> => ({
    commandNames,
    commandSources,
    windowCommands: COMMANDS,
    invocations: await invocations(),
  });
  const edit = (sources: CheckInput["commandSources"], file: string, from: string | RegExp, to: string) =>
    sources.map((s) => {
      if (!s.file.endsWith(file)) return s;
      const text = s.text.replace(from, to);
      expect(text, `the edit of ${file} applies`).not.toBe(s.text);
      return { ...s, text };
    });

  it("a command renamed in the shell's list", async () => {
    const input = await real();
    const renamed = input.commandNames.replace('"rate",', '"rate_value",');
    expect(renamed).not.toBe(input.commandNames);
    const problems = checkCommands({ ...input, commandNames: renamed });
    expect(problems).toContain(
      'ipc.ts (ipc.rate) invokes "rate", which is not a shell command (not in RATER_COMMANDS, PICKER_COMMANDS, LEAD_COMMANDS of src-tauri/src/command_names.rs)',
    );
    expect(problems).toContain(
      '"rate_value" is a shell command (RATER_COMMANDS in src-tauri/src/command_names.rs) but is missing from COMMANDS in ui/src/lib/commands.ts',
    );
    expect(problems).toContain(
      '"rate" is in COMMANDS of ui/src/lib/commands.ts but is not a shell command (not in RATER_COMMANDS, PICKER_COMMANDS, LEAD_COMMANDS of src-tauri/src/command_names.rs)',
    );
  });

  it("a shell command the window's list lacks", async () => {
    const input = await real();
    const problems = checkCommands({ ...input, windowCommands: COMMANDS.filter((c) => c !== "judge_cancel") });
    expect(problems).toEqual([
      '"judge_cancel" is a shell command (LEAD_COMMANDS in src-tauri/src/command_names.rs) but is missing from COMMANDS in ui/src/lib/commands.ts',
    ]);
  });

  it("a command function renamed or gone", async () => {
    const input = await real();
    const sources = edit(input.commandSources, "/rating.rs", "pub async fn flag_item(", "pub async fn flag(");
    expect(checkCommands({ ...input, commandSources: sources })).toEqual([
      '"flag_item" is in RATER_COMMANDS of src-tauri/src/command_names.rs but no #[tauri::command] fn flag_item was found in src-tauri/src/commands/',
    ]);
  });

  it("a parameter renamed: the key sent is not taken, and the new one is not sent", async () => {
    const input = await real();
    const sources = edit(input.commandSources, "/rating.rs", "next_item: i64", "next_index: i64");
    expect(checkCommands({ ...input, commandSources: sources })).toEqual([
      'ipc.ts (ipc.leaveItem) passes the key "nextItem" to "leave_item", which is not one of its parameters: it takes "item", "seconds", "nextIndex" (fn leave_item(item, seconds, next_index) in src-tauri/src/commands/rating.rs)',
      'ipc.ts (ipc.leaveItem) does not pass "nextIndex" to "leave_item", which needs it (next_index: i64 in fn leave_item(item, seconds, next_index) in src-tauri/src/commands/rating.rs)',
    ]);
  });

  it("a snake_case key where Tauri expects camelCase, and rename_all honoured", async () => {
    const input = await real();
    const snake = input.invocations.map((c) =>
      c.command === "unlock_study" ? { ...c, keys: c.keys.map((k) => (k === "passphraseText" ? "passphrase_text" : k)) } : c,
    );
    expect(checkCommands({ ...input, invocations: snake })).toEqual([
      'ipc.ts (ipc.unlockStudy) passes the key "passphrase_text" to "unlock_study", which is not one of its parameters: Tauri sends the Rust parameter "passphrase_text" as "passphraseText"',
      'ipc.ts (ipc.unlockStudy) does not pass "passphraseText" to "unlock_study", which needs it (passphrase_text: String in fn unlock_study(passphrase_text, remember) in src-tauri/src/commands/security.rs)',
    ]);
    // With `rename_all = "snake_case"` the Rust name itself is the key.
    const sources = edit(
      input.commandSources,
      "/security.rs",
      /#\[tauri::command\]\s*pub async fn unlock_study/,
      '#[tauri::command(rename_all = "snake_case")]\npub async fn unlock_study',
    );
    expect(checkCommands({ ...input, invocations: snake, commandSources: sources })).toEqual([]);
  });

  it("an optional parameter may be left out; an unknown command's keys are not judged", async () => {
    const input = await real();
    const calls = input.invocations.map((c) => (c.command === "rate" ? { ...c, keys: c.keys.filter((k) => k !== "reason") } : c));
    expect(checkCommands({ ...input, invocations: calls })).toEqual([]);
  });
});

describe("the Rust reader", () => {
  it("skips comments and Tauri's own parameters, keeps a Channel, and reads generics and attributes", () => {
    const text = `
      // #[tauri::command] fn in_a_comment(x: u8) {}
      /* #[tauri::command]
         fn in_a_block(y: u8) {} */
      #[tauri::command]
      #[allow(clippy::too_many_arguments)] // a note
      pub async fn download<R: tauri::Runtime>(
          app: tauri::AppHandle<R>,
          state: tauri::State<'_, AppState>,
          window: tauri::WebviewWindow,
          mut file_url: String,
          on_event: Channel<Progress>,
          pairs: Vec<(String, i64)>,
          limit: Option<u32>,
      ) -> Result<(), String> { let s = "#[tauri::command] fn in_a_string() {}"; Ok(()) }
      #[tauri::command(rename_all = "snake_case")]
      fn plain(run_id: i64) {}
    `;
    expect(tauriCommands(text, "x.rs")).toEqual([
      {
        name: "download",
        file: "x.rs",
        params: [
          { rust: "file_url", key: "fileUrl", type: "String", optional: false },
          { rust: "on_event", key: "onEvent", type: "Channel<Progress>", optional: false },
          { rust: "pairs", key: "pairs", type: "Vec<(String, i64)>", optional: false },
          { rust: "limit", key: "limit", type: "Option<u32>", optional: true },
        ],
      },
      { name: "plain", file: "x.rs", params: [{ rust: "run_id", key: "run_id", type: "i64", optional: false }] },
    ]);
  });

  it("reads each list of command_names.rs, leaving comments out", () => {
    const lists = commandLists(`
      /// Listed: "not_a_command" in a doc comment.
      pub const A: &[&str] = &["one", "two"]; // "three"
      pub const B: &[&str] = &[
          "four", // "five"
      ];
    `);
    expect([...lists]).toEqual([
      ["A", ["one", "two"]],
      ["B", ["four"]],
    ]);
  });
});
