import { describe, expect, it } from "vitest";
import { routeFor } from "./files.svelte";

const identity = { package_id: "p1", rater: "Ana", rater_id: 2, items: 12, completed: 0 };

describe("routeFor", () => {
  it("opens studies and packages made for someone else, merges packages that came back", () => {
    expect(routeFor({ kind: "study" }), "a study opens").toEqual({ action: "open" });
    expect(routeFor({ kind: "package", identity, returned: false }), "an expert's package opens for rating").toEqual({
      action: "open",
    });
    expect(routeFor({ kind: "package", identity, returned: true }), "a returned package goes to the merge step").toEqual({
      action: "setup",
      step: "merge",
      format: null,
    });
  });

  it("merges an encrypted file handed to a lead's study and opens it anywhere else", () => {
    expect(routeFor({ kind: "encrypted", lead_study: true }), "a sealed package coming back to its lead").toEqual({
      action: "setup",
      step: "merge",
      format: null,
    });
    expect(routeFor({ kind: "encrypted", lead_study: false }), "an encrypted study or an expert's package").toEqual({
      action: "open",
    });
  });

  it("sends datasets, sheets and rubrics to their setup step and refuses the rest with the reason", () => {
    expect(routeFor({ kind: "dataset", format: "mentalalign" }), "a folder keeps its format").toEqual({
      action: "setup",
      step: "import",
      format: "mentalalign",
    });
    expect(routeFor({ kind: "filled_sheet" }), "a filled sheet goes to the sheet import").toEqual({
      action: "setup",
      step: "sheet",
      format: null,
    });
    expect(routeFor({ kind: "rubric" }), "a rubric goes to the rubric step").toEqual({
      action: "setup",
      step: "rubric",
      format: null,
    });
    expect(routeFor({ kind: "unknown", reason: "x: not a study" }), "the reason is shown").toEqual({
      action: "refuse",
      reason: "x: not a study",
    });
  });
});
