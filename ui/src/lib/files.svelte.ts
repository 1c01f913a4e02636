// Where a file handed to the window goes (dropped, double-clicked, given to a second launch, or
// typed into the welcome screen): the decision is pure (`routeFor`), the hand-off to the setup
// wizard is shared state the wizard picks up (`handoff`).
import type { FileRole, ImportFormat } from "./bindings";

export type SetupStep = "rubric" | "import" | "merge" | "sheet";

export type Route =
  | { action: "open" }
  | { action: "setup"; step: SetupStep; format: ImportFormat | null }
  | { action: "refuse"; reason: string };

/** What to do with a file of this role. */
export function routeFor(role: FileRole): Route {
  switch (role.kind) {
    case "study":
      return { action: "open" };
    case "encrypted":
      // Sealed packages are encrypted, so an encrypted file handed to a lead's study (one that has
      // issued packages) is most likely one coming back: merge it. Otherwise open it behind the
      // unlock screen (an encrypted study, or an expert's package).
      return role.lead_study ? { action: "setup", step: "merge", format: null } : { action: "open" };
    case "package":
      // A package written from the open study has come back: merge it. Any other package is an
      // expert's work: open it for rating.
      return role.returned ? { action: "setup", step: "merge", format: null } : { action: "open" };
    case "dataset":
      return { action: "setup", step: "import", format: role.format };
    case "filled_sheet":
      return { action: "setup", step: "sheet", format: null };
    case "rubric":
      return { action: "setup", step: "rubric", format: null };
    case "unknown":
      return { action: "refuse", reason: role.reason };
  }
}

/** A file waiting for a setup step to take it (set by the window, cleared by the wizard). */
export const handoff = $state<{ step: SetupStep | null; path: string; format: ImportFormat | null }>({
  step: null,
  path: "",
  format: null,
});

export function handTo(step: SetupStep, path: string, format: ImportFormat | null) {
  handoff.step = step;
  handoff.path = path;
  handoff.format = format;
}
