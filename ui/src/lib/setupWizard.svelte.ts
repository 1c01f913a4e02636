// What the setup wizard's steps share while it is open: the current step, the study as the wizard
// last read it (overview, assignment table, export folder), the one error line and busy flag, the
// rubric chosen in step 1, the team chosen in the experts step, and the PHI gate over packages and
// exports. One `SetupWizard` lives as long as the Setup screen; each step keeps its own fields.
import { desktopIpc, ipc, setupIpc, type FormError, type IpcError } from "./ipc";
import type { AssignmentTable, StudyOverview } from "./bindings";
import { t } from "./i18n/index.svelte";
import { assignmentRows, isAbsolutePath } from "./setup";
import { writeConfirmed } from "./overwrite";

export const STEPS = ["rubric", "import", "privacy", "experts", "assign", "progress", "packages", "exports"] as const;
export type Step = (typeof STEPS)[number];

/** The rubrics the core ships with, offered before any is loaded from a file. */
export const BUILTIN_RUBRICS = ["mentalbench", "psycrisis", "session-care"];

export class SetupWizard {
  step = $state<Step>("rubric");
  overview = $state<StudyOverview | null>(null);
  table = $state<AssignmentTable | null>(null);
  exportDir = $state("");
  error = $state<IpcError | FormError | null>(null);
  busy = $state(false);
  /** The rubric chosen in step 1; imports and the assignment use it. */
  rubric = $state("mentalbench");
  /** The experts chosen for the team (null: everyone in the study takes part). */
  chosen = $state<string[] | null>(null);
  // The PHI gate: set when a package or export was refused because findings are open; the lead
  // then reviews them, or types a reason to write anyway (recorded in the audit trail).
  phiBlocked = $state(false);
  phiOverride = $state("");

  experts = $derived(this.overview?.raters.filter((r) => r.kind === "expert").map((r) => r.name) ?? []);
  /** The team until the lead chooses one: every expert except those an import brought in with
   *  their ratings and nobody assigned work to (the release's pooled expert rates nothing here). */
  defaultTeam = $derived(
    this.overview?.raters
      .filter((r) => r.kind === "expert" && !(r.ratings > 0 && r.assigned === 0))
      .map((r) => r.name) ?? [],
  );
  team = $derived(this.chosen ?? this.defaultTeam);
  rows = $derived(this.table ? assignmentRows(this.table) : null);
  assignedExperts = $derived(this.rows?.rows.map((e) => e.name) ?? []);

  /** Run `work` with the error line cleared and the wizard busy; a failure lands in the error line. */
  guard = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
    this.error = null;
    this.busy = true;
    try {
      return await work();
    } catch (e) {
      this.error = e as IpcError;
      if (this.error.code === "phi_unreviewed") this.phiBlocked = true;
      return undefined;
    } finally {
      this.busy = false;
    }
  };

  refresh = async () => {
    this.overview = await ipc.studyOverview();
    this.table = await setupIpc.assignmentTable();
  };

  go = (s: Step) => {
    this.error = null;
    this.step = s;
  };

  /** Whether `path` is absolute; if not, the error line says a full path is needed. */
  needAbsolute = (path: string): boolean => {
    if (isAbsolutePath(path)) return true;
    this.error = { code: "path", message: t("setup.needAbsolute") };
    return false;
  };

  /** A native dialog for an input file; the typed field stays as the fallback. */
  chooseFile = async (purpose: "rubric" | "dataset" | "package" | "sheet", set: (p: string) => void) => {
    const picked = await desktopIpc.pickFile(purpose).catch(() => null);
    if (picked) set(picked);
  };

  /** A native dialog for an input folder (a dataset laid out as a folder). */
  chooseFolder = async (set: (p: string) => void) => {
    const picked = await desktopIpc.pickFolder(t("setup.chooseFolder")).catch(() => null);
    if (picked) set(picked);
  };

  /** Paths the native save dialog returned: it asked before replacing a file there. */
  confirmed = new Set<string>();

  /** A native save dialog for an output path, starting in the export folder. */
  chooseSave = async (suggested: string, set: (p: string) => void) => {
    const picked = await desktopIpc.pickSave(t("setup.chooseSave"), suggested).catch(() => null);
    if (picked) {
      this.confirmed.add(picked.trim());
      set(picked);
    }
  };

  /** Write an output at `out` (see `writeConfirmed`): a file there is replaced only after a yes. */
  write = <T>(out: string, work: (overwrite: boolean) => Promise<T>): Promise<T | undefined> =>
    this.guard(() => writeConfirmed(out, this.confirmed, work, (m) => window.confirm(t("files.replaceConfirm", { message: m }))));
}
