// Pure logic of the lead's setup wizard: typed paths, expert names, the assignment form, the
// progress table and the import report's counts. No IPC and no DOM here, so it is unit-tested.
import type {
  AssignmentOptions,
  AssignmentTable,
  CellError,
  ExpertProgress,
  Location,
  QualityReport,
} from "./bindings";

/** A path the shell will accept: absolute on Linux/macOS (`/…`) or Windows (`C:\…`, `\\server\…`). */
export function isAbsolutePath(text: string): boolean {
  const p = text.trim();
  return p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith("\\\\");
}

/** Names typed into one box: split on commas, semicolons (also full-width) and line breaks. */
export function splitNames(text: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of text.split(/[,;\n，；、]/)) {
    const name = raw.trim().replace(/\s+/g, " ");
    if (name && !seen.has(name.toLowerCase())) {
      seen.add(name.toLowerCase());
      out.push(name);
    }
  }
  return out;
}

/** The assignment step's fields as typed (numbers are text until checked). */
export interface AssignmentForm {
  sample: string;
  k: string;
  seed: string;
  calibration: string;
  retest: string;
  gap: string;
  stratify: boolean;
  rubric: string | null;
  experts: string[];
  replace: boolean;
  /** A reason to assign answers the study holds no text for (blank: refuse them). */
  withoutText?: string;
}

/** Which field is wrong, as an i18n key suffix (`setup.bad.<field>`). */
export type FormProblem = "sample" | "k" | "seed" | "calibration" | "retest" | "gap" | "experts";

function whole(text: string, min: number): number | null {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return Number.isSafeInteger(n) && n >= min ? n : null;
}

/** Check the form and build the core's options, or name the first bad field. */
export function assignmentOptions(
  form: AssignmentForm,
): { options: AssignmentOptions } | { problem: FormProblem } {
  const sample = form.sample.trim() === "" ? null : whole(form.sample, 1);
  if (form.sample.trim() !== "" && sample === null) return { problem: "sample" };
  const k = whole(form.k, 1);
  if (k === null) return { problem: "k" };
  const seed = whole(form.seed, 0);
  if (seed === null) return { problem: "seed" };
  const calibration = whole(form.calibration || "0", 0);
  if (calibration === null) return { problem: "calibration" };
  const retest = whole(form.retest || "0", 0);
  if (retest === null) return { problem: "retest" };
  const gap = whole(form.gap || "0", 0);
  if (gap === null) return { problem: "gap" };
  if (form.experts.length === 0) return { problem: "experts" };
  return {
    options: {
      k,
      seed,
      sample,
      rubric: form.rubric,
      stratify: form.stratify,
      calibration,
      retest,
      retest_gap: gap,
      experts: [...form.experts],
      replace: form.replace,
      without_text: form.withoutText?.trim() ? form.withoutText.trim() : null,
    },
  };
}

/** Loads are balanced when no expert has more than one item more than another. */
export function isBalanced(loads: number[]): boolean {
  if (loads.length === 0) return true;
  return Math.max(...loads) - Math.min(...loads) <= 1;
}

/** The progress table split into the experts of the assignment and the study's other experts. */
export function assignmentRows(table: AssignmentTable): {
  rows: ExpertProgress[];
  others: ExpertProgress[];
} {
  const named = table.options?.experts ?? [];
  const inAssignment = (e: ExpertProgress) =>
    table.options !== null && (named.length === 0 ? true : named.includes(e.name) || e.assigned > 0);
  return {
    rows: table.experts.filter(inAssignment),
    others: table.experts.filter((e) => !inAssignment(e)),
  };
}

/** Percentage of an expert's items completed, or null when nothing is assigned. */
export function percentDone(e: ExpertProgress): number | null {
  return e.assigned === 0 ? null : Math.round((100 * e.completed) / e.assigned);
}

/** The data-quality counts worth showing, each with its i18n key suffix (`setup.q.<kind>`). */
export type QualityCountKind =
  | "null_values"
  | "empty_values"
  | "empty_cells"
  | "missing_attributes"
  | "unparsed_replies"
  | "total_mismatches"
  | "missing_dimensions"
  | "context_mismatches";

export function qualityCounts(q: QualityReport): { kind: QualityCountKind; n: number }[] {
  const kinds: QualityCountKind[] = [
    "null_values",
    "empty_values",
    "empty_cells",
    "missing_attributes",
    "unparsed_replies",
    "total_mismatches",
    "missing_dimensions",
    "context_mismatches",
  ];
  return kinds.map((kind) => ({ kind, n: q[kind] })).filter((c) => c.n > 0);
}

/** Out-of-scale values and how often each occurred, as text: `0 ×231, 6 ×8`. */
export function outOfScaleText(q: QualityReport): string {
  return Object.entries(q.out_of_scale)
    .map(([value, n]) => `${value} ×${n}`)
    .join(", ");
}

/** Where a problem is, as one line: `file, sheet "S", row 3, column "score"`. */
export function locationText(at: Location | CellError): string {
  let out = at.file;
  if (at.sheet) out += `, sheet "${at.sheet}"`;
  if (at.row !== null) out += `, row ${at.row}`;
  if (at.column) out += `, column "${at.column}"`;
  return out;
}

/** A seed for a new assignment, drawn in the window (the core only receives seeds). */
export function newSeed(): number {
  const words = new Uint32Array(1);
  crypto.getRandomValues(words);
  return words[0] ?? 0;
}
