import { describe, expect, it } from "vitest";
import {
  assignmentOptions,
  assignmentRows,
  isAbsolutePath,
  isBalanced,
  locationText,
  outOfScaleText,
  percentDone,
  qualityCounts,
  splitNames,
  type AssignmentForm,
} from "./setup";
import type { AssignmentTable, ExpertProgress, QualityReport } from "./bindings";

const form = (over: Partial<AssignmentForm> = {}): AssignmentForm => ({
  sample: "",
  k: "2",
  seed: "42",
  calibration: "",
  retest: "",
  gap: "10",
  stratify: true,
  rubric: "mentalbench",
  experts: ["Ana", "Ben", "Chen"],
  replace: false,
  ...over,
});

const expert = (name: string, assigned: number, completed = 0): ExpertProgress => ({
  name,
  assigned,
  completed,
  remaining: assigned - completed,
  regular: assigned,
  calibration: 0,
  retest: 0,
  ratings: 0,
});

describe("typed paths", () => {
  it("accepts absolute POSIX and Windows paths only", () => {
    expect(isAbsolutePath("/home/lead/data.csv")).toBe(true);
    expect(isAbsolutePath("  /tmp/x ")).toBe(true);
    expect(isAbsolutePath("C:\\Users\\lead\\data.xlsx")).toBe(true);
    expect(isAbsolutePath("\\\\server\\share\\f.csv")).toBe(true);
    expect(isAbsolutePath("data.csv")).toBe(false);
    expect(isAbsolutePath("./data.csv")).toBe(false);
    expect(isAbsolutePath("")).toBe(false);
  });
});

describe("expert names", () => {
  it("splits on commas, semicolons and lines, ASCII or full-width, without duplicates", () => {
    expect(splitNames("Ana, Ben\nChen;  Dr.  Li ")).toEqual(["Ana", "Ben", "Chen", "Dr. Li"]);
    expect(splitNames("王医生，李医生、王医生")).toEqual(["王医生", "李医生"]);
    expect(splitNames("ana, Ana ,,")).toEqual(["ana"]);
    expect(splitNames("  ")).toEqual([]);
  });
});

describe("assignment form", () => {
  it("builds the core's options with blanks as defaults", () => {
    const r = assignmentOptions(form({ sample: " 6 " }));
    expect(r).toEqual({
      options: {
        k: 2,
        seed: 42,
        sample: 6,
        rubric: "mentalbench",
        stratify: true,
        calibration: 0,
        retest: 0,
        retest_gap: 10,
        experts: ["Ana", "Ben", "Chen"],
        replace: false,
        without_text: null,
      },
    });
    const overridden = assignmentOptions(form({ withoutText: "  texts come later " }));
    expect("options" in overridden && overridden.options.without_text).toBe("texts come later");
    const all = assignmentOptions(form());
    expect("options" in all && all.options.sample).toBe(null);
  });

  it("names the first bad field", () => {
    expect(assignmentOptions(form({ sample: "0" }))).toEqual({ problem: "sample" });
    expect(assignmentOptions(form({ k: "0" }))).toEqual({ problem: "k" });
    expect(assignmentOptions(form({ k: "1.5" }))).toEqual({ problem: "k" });
    expect(assignmentOptions(form({ seed: "-1" }))).toEqual({ problem: "seed" });
    expect(assignmentOptions(form({ seed: "99999999999999999999" }))).toEqual({ problem: "seed" });
    expect(assignmentOptions(form({ calibration: "x" }))).toEqual({ problem: "calibration" });
    expect(assignmentOptions(form({ retest: "-2" }))).toEqual({ problem: "retest" });
    expect(assignmentOptions(form({ gap: "a" }))).toEqual({ problem: "gap" });
    expect(assignmentOptions(form({ experts: [] }))).toEqual({ problem: "experts" });
  });
});

describe("progress table", () => {
  it("balanced means at most one item apart", () => {
    expect(isBalanced([12, 12, 12])).toBe(true);
    expect(isBalanced([12, 11, 12])).toBe(true);
    expect(isBalanced([13, 11, 12])).toBe(false);
    expect(isBalanced([])).toBe(true);
  });

  it("shows the assignment's experts and sets the others apart", () => {
    const table: AssignmentTable = {
      options: {
        k: 2,
        seed: 1,
        sample: null,
        rubric: null,
        stratify: true,
        calibration: 0,
        retest: 0,
        retest_gap: 0,
        experts: ["Ana", "Ben"],
        replace: false,
        without_text: null,
      },
      sampled_conversations: 4,
      experts: [expert("Ana", 8, 2), expert("Ben", 8), expert("Demo expert A", 0)],
    };
    const { rows, others } = assignmentRows(table);
    expect(rows.map((e) => e.name)).toEqual(["Ana", "Ben"]);
    expect(others.map((e) => e.name)).toEqual(["Demo expert A"]);
    expect(assignmentRows({ ...table, options: null }).rows).toEqual([]);
    expect(
      assignmentRows({ ...table, options: { ...table.options!, experts: [] } }).rows.length,
    ).toBe(3);
    expect(percentDone(expert("Ana", 8, 2))).toBe(25);
    expect(percentDone(expert("Cy", 0))).toBe(null);
  });
});

describe("import report", () => {
  const quality: QualityReport = {
    out_of_scale: { "0": 231, "6": 8 },
    null_values: 10,
    empty_values: 0,
    empty_cells: 57,
    missing_attributes: 0,
    unparsed_replies: 0,
    total_mismatches: 0,
    missing_dimensions: 0,
    context_mismatches: 0,
    items: [],
  };

  it("lists only the findings that occurred", () => {
    expect(qualityCounts(quality)).toEqual([
      { kind: "null_values", n: 10 },
      { kind: "empty_cells", n: 57 },
    ]);
    expect(outOfScaleText(quality)).toBe("0 ×231, 6 ×8");
  });

  it("writes a location as one line", () => {
    expect(locationText({ file: "Human_judge.xlsx", sheet: "Sheet1", row: 12, column: "claude" })).toBe(
      'Human_judge.xlsx, sheet "Sheet1", row 12, column "claude"',
    );
    expect(locationText({ file: "a.csv", sheet: null, row: null, column: null })).toBe("a.csv");
  });
});
