// The keyboard help as it is shown, written once: the rating screen's keys (the map of keys.ts),
// shown in the rating screen's "?" overlay and in the window's Keyboard shortcuts dialog, and the
// window's own shortcuts (the native menu's accelerators, src-tauri/src/menu.rs).
import type { MessageKey } from "./i18n/en";

/** One line of keyboard help: the keys as printed, and the message saying what they do. */
export interface KeyHelpLine {
  keys: string;
  does: MessageKey;
}

export const RATING_KEYS: readonly KeyHelpLine[] = [
  { keys: "1 – 5", does: "help.digits" },
  { keys: "Y / N · 1 / 0", does: "help.binary" },
  { keys: "↑ ↓", does: "help.move" },
  { keys: "Enter · →", does: "help.next" },
  { keys: "Backspace · ←", does: "help.prev" },
  { keys: "S", does: "help.skip" },
  { keys: "F", does: "help.flag" },
  { keys: "R", does: "help.rationale" },
  { keys: "[ · K", does: "help.turnPrev" },
  { keys: "] · J", does: "help.turnNext" },
  { keys: "Esc", does: "help.turnReply" },
  { keys: "M", does: "help.mark" },
  { keys: "?", does: "help.help" },
  { keys: "Tab", does: "help.tab" },
];

/** Marking mode on the reply (after M): the keys of lib/spans.ts' map. */
export const MARKING_KEYS: readonly KeyHelpLine[] = [
  { keys: "← →", does: "help.markWord" },
  { keys: "↑ ↓", does: "help.markSentence" },
  { keys: "Shift", does: "help.markShift" },
  { keys: "C · Enter", does: "help.markPick" },
  { keys: "Esc · M", does: "help.markLeave" },
];

export const WINDOW_KEYS: readonly KeyHelpLine[] = [
  { keys: "Ctrl O", does: "shortcuts.open" },
  { keys: "Ctrl N", does: "shortcuts.new" },
  { keys: "Ctrl W", does: "shortcuts.close" },
  { keys: "Ctrl + · Ctrl − · Ctrl 0", does: "shortcuts.zoom" },
  { keys: "F1", does: "shortcuts.help" },
];
