// Writing an output the person may have to confirm: a path the native save dialog returned was
// already confirmed there (the dialog asks before replacing a file), so it is written with
// overwrite; any other path is written without, and when the shell refuses it because a file is
// there (`already_exists`) the person is asked once, and a yes writes it again with overwrite.

/** The shell's `{code, message}` error, as far as this module reads it. */
type CodedError = { code: string; message: string };

function isCoded(e: unknown): e is CodedError {
  return typeof e === "object" && e !== null && "code" in e && "message" in e;
}

/**
 * Run `write` for the output at `path`: with overwrite when the save dialog confirmed the path
 * (`confirmed` holds what it returned), else without; an `already_exists` refusal asks `ask` with
 * the shell's message and, on yes, writes again with overwrite. Other errors are thrown as they are.
 */
export async function writeConfirmed<T>(
  path: string,
  confirmed: ReadonlySet<string>,
  write: (overwrite: boolean) => Promise<T>,
  ask: (message: string) => boolean,
): Promise<T | undefined> {
  const fromDialog = path.trim() !== "" && confirmed.has(path.trim());
  try {
    return await write(fromDialog);
  } catch (e) {
    if (fromDialog || !isCoded(e) || e.code !== "already_exists") throw e;
    if (!ask(e.message)) return undefined;
    return await write(true);
  }
}
