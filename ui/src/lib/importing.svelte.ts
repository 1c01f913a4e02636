// The dataset import the window has under way, if any, for every screen to see: the Setup screen
// starts it, and the Study screen shows it in progress (its counts wait for the study while the
// import holds it) instead of calling the study empty. The shell's `import-progress` events are
// heard for as long as the import runs, whichever screen is shown.
import { onEvent } from "./ipc";
import type { ImportProgress } from "./bindings";

class ImportUnderWay {
  /** Whether an import runs now. */
  running = $state(false);
  /** The file (or folder) being imported. */
  path = $state("");
  /** How far it has come (bytes read of the file's size), once the shell has said. */
  progress = $state<ImportProgress | null>(null);
}

export const importing = new ImportUnderWay();

/** The share of the file read so far, in whole percent (0 until the shell has said). */
export function importPercent(p: ImportProgress | null): number {
  if (!p || p.total <= 0) return 0;
  return Math.min(100, Math.floor((100 * p.done) / p.total));
}

/** Run `work` (the import of `path`) as the window's import under way. */
export async function whileImporting<T>(path: string, work: () => Promise<T>): Promise<T> {
  importing.running = true;
  importing.path = path;
  importing.progress = null;
  const stop = await onEvent("import-progress", (p) => (importing.progress = p)).catch(() => null);
  try {
    return await work();
  } finally {
    importing.running = false;
    importing.progress = null;
    importing.path = "";
    stop?.();
  }
}
