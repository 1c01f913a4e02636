// The idle lock's pure parts: when input has been absent long enough, and the screens' work that
// must be saved before the study is locked (a rationale still being typed). Screens register a
// flush; the window awaits every flush before it asks the shell to lock.

/** Whether the window has been idle for at least `seconds` (times in milliseconds). */
export function idleExpired(lastInputMs: number, nowMs: number, seconds: number): boolean {
  return seconds > 0 && nowMs - lastInputMs >= seconds * 1000;
}

/** Whole minutes to show for an idle lock of `seconds` (at least 1). */
export function idleMinutes(seconds: number): number {
  return Math.max(1, Math.round(seconds / 60));
}

const flushes = new Set<() => Promise<unknown>>();

/** Register work to save before a lock; returns the function that unregisters it. */
export function beforeLock(flush: () => Promise<unknown>): () => void {
  flushes.add(flush);
  return () => {
    flushes.delete(flush);
  };
}

/** Run every registered flush; one that fails does not stop the others. */
export async function flushBeforeLock(): Promise<void> {
  await Promise.all([...flushes].map((f) => f().catch(() => undefined)));
}
