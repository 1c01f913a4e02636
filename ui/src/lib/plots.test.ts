// The agreement panel's figures as they are saved: one self-contained SVG with the title and a
// legend naming each judge written on it, names kept as text.
import { describe, expect, it } from "vitest";
import type { AgreementTable, TableCell } from "./bindings";
import { accessibleFigure, forestPlot, heatmap, legendEntries, svgText } from "./plots";

function cell(icc: number): TableCell {
  return {
    icc,
    ci95: [icc - 0.1, icc + 0.05],
    ci_is_f: false,
    ci_is_cluster: false,
    bias: 0.1,
    mse: 0.5,
    n_targets: 9,
    n_pairs: 90,
    status: "good",
    verdict: null,
  };
}

const JUDGES = ["gpt-4o", "<b>claude</b>"];

function table(): AgreementTable {
  return {
    view: { level: "system", comparison: "judge_vs_experts", icc: "C1", ci: "bootstrap" },
    columns: JUDGES.map((j) => ({ rater: j, reference: "experts", label: j })),
    rows: ["Guidance", "Empathy"].map((a, i) => ({
      criterion: a.toLowerCase(),
      attribute: a,
      group: null,
      is_group: false,
      expert_band: null,
      band_method: null,
      band_uninformative: false,
      band_overlap: null,
      cells: [cell(0.8 - i * 0.1), cell(0.7 - i * 0.1)],
    })),
    verdict_rule: "",
  };
}

function parse(svg: string): Document {
  return new DOMParser().parseFromString(svg, "image/svg+xml");
}

describe("saved figures", () => {
  it("write the title and a legend entry per judge on the image", () => {
    const figure = accessibleFigure(forestPlot(table(), "Forest plot: ICC(C,1) with 95% CI"));
    expect(legendEntries(figure).map((e) => e.label), "Plot's legend names the judges").toEqual(JUDGES);
    const doc = parse(svgText(figure));
    expect(doc.querySelector("parsererror"), "the saved SVG is well-formed XML").toBeNull();
    expect(doc.querySelector(".concord-figure-title")?.textContent, "the title is drawn on the image").toBe(
      "Forest plot: ICC(C,1) with 95% CI",
    );
    const entries = [...doc.querySelectorAll(".concord-legend-entry")];
    expect(entries.map((e) => e.querySelector("text")?.textContent), "each judge is named in the saved legend").toEqual(JUDGES);
    for (const e of entries) {
      expect(e.querySelector("rect")?.getAttribute("fill"), "each entry has its judge's colour").toMatch(/^#|^rgb|^[a-z]/);
    }
    expect(doc.querySelector("b"), "a judge's name is text in the file, never markup").toBeNull();
  });

  it("stack title, legend and plot, so the image is taller than the plot alone", () => {
    const figure = accessibleFigure(forestPlot(table(), "Forest"));
    const plot = [...figure.querySelectorAll("svg")].pop() as SVGSVGElement;
    const doc = parse(svgText(figure));
    const root = doc.documentElement;
    const inner = root.querySelector(":scope > svg") as Element;
    expect(Number(inner.getAttribute("y")), "the plot sits below the title and legend").toBeGreaterThan(40);
    expect(Number(root.getAttribute("height")), "the page holds all three").toBe(
      Number(inner.getAttribute("y")) + Number(plot.getAttribute("height")) + 12,
    );
  });

  it("carry the colour ramp of a continuous scale", () => {
    // jsdom has no canvas; Plot paints the ramp's gradient on one, which only the image needs.
    const paint = { fillStyle: "", fillRect: () => undefined };
    HTMLCanvasElement.prototype.getContext = (() => paint) as unknown as HTMLCanvasElement["getContext"];
    HTMLCanvasElement.prototype.toDataURL = () => "data:image/png;base64,";
    const figure = accessibleFigure(heatmap(table(), "Heatmap: ICC(C,1)"));
    const doc = parse(svgText(figure));
    const legend = doc.querySelector(".concord-figure-legend");
    expect(legend?.querySelector("svg[class$=-ramp]"), "the heatmap's ICC ramp is in the saved legend").not.toBeNull();
  });

  it("are drawn on the page colours they are given", () => {
    const figure = accessibleFigure(forestPlot(table(), "Forest"));
    const doc = parse(svgText(figure, { background: "#151a1b", ink: "#e8e4dc" }));
    expect(doc.querySelector(".concord-figure-page")?.getAttribute("fill"), "the page is the given background").toBe("#151a1b");
    expect(doc.querySelector(".concord-figure-title")?.getAttribute("fill"), "the title is in the given ink").toBe("#e8e4dc");
  });
});
