// Zoom levels of the window (Ctrl + / Ctrl − / Ctrl 0), the same steps browsers use.
export const ZOOM_STEPS: readonly number[] = [0.5, 0.67, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 1.75, 2, 2.5, 3];

/** The zoom after one step in (`1`), out (`-1`), or back to 100 % (`0`). */
export function nextZoom(current: number, step: -1 | 0 | 1): number {
  if (step === 0) return 1;
  // Nearest step to the current value, then one step further, within the range.
  let at = 0;
  let best = Infinity;
  ZOOM_STEPS.forEach((z, i) => {
    if (Math.abs(z - current) < best) {
      best = Math.abs(z - current);
      at = i;
    }
  });
  const next = Math.min(ZOOM_STEPS.length - 1, Math.max(0, at + step));
  return ZOOM_STEPS[next] ?? 1;
}
