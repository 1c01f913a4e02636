// Figures of the agreement panel, drawn with Observable Plot as SVG: a forest plot (ICC ± 95% CI
// per criterion, one mark per judge, Koo & Li bands), Bland–Altman limits per criterion, and a
// criterion × judge heatmap. Each can be saved as SVG or PNG, with its title and colour legend
// written on the saved image (`svgText`). Figures are drawn in the window's theme (`currentTheme`:
// the figure palette of app.css, light or dark), on screen and in the files saved from it.
import * as Plot from "@observablehq/plot";
import type { AgreementCell, AgreementTable } from "./bindings";

/**
 * Make a drawn figure readable by assistive technology: the SVG is one image named by the figure's
 * title, and the labels Observable Plot puts on its mark groups (`aria-label` on a `g` without a
 * role, which ARIA does not permit) are dropped.
 */
export function accessibleFigure(el: Element): Element {
  const title = el.querySelector("h2")?.textContent ?? el.getAttribute("aria-label") ?? "";
  el.querySelectorAll("g[aria-label]").forEach((g) => g.removeAttribute("aria-label"));
  el.querySelectorAll("svg").forEach((svg) => {
    if (svg.closest("[class$=swatches], [class*=swatches]")) return;
    svg.setAttribute("role", "img");
    if (title) svg.setAttribute("aria-label", title);
  });
  return el;
}

export interface ForestPoint {
  attribute: string;
  rater: string;
  icc: number;
  lo: number | null;
  hi: number | null;
}

/** Points of the forest plot from the table (one per criterion × column with an estimate). */
export function forestPoints(table: AgreementTable): ForestPoint[] {
  const out: ForestPoint[] = [];
  for (const row of table.rows) {
    row.cells.forEach((cell, i) => {
      const col = table.columns[i];
      if (!cell || !col || cell.icc === null) return;
      out.push({ attribute: row.attribute, rater: col.label, icc: cell.icc, lo: cell.ci95[0], hi: cell.ci95[1] });
    });
  }
  return out;
}

/** The colours a figure is drawn in: its page and ink, the Koo & Li bands behind the forest
 *  plot (poor, moderate, good, excellent) and the grey of reference lines. */
export interface FigureTheme extends FigurePage {
  bands: [string, string, string, string];
  rule: string;
}

/** The light theme's figure colours (also what is used where no stylesheet is loaded). */
export const LIGHT_THEME: FigureTheme = {
  background: "#ffffff",
  ink: "#1f2a2c",
  bands: ["#f3e1da", "#f5eedb", "#e3eee0", "#d3e6dc"],
  rule: "#888888",
};

/** The figure colours of the theme the window shows now, from app.css (`--figure-*`). */
export function currentTheme(): FigureTheme {
  if (typeof document === "undefined" || typeof getComputedStyle !== "function") return LIGHT_THEME;
  const css = getComputedStyle(document.documentElement);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const [poor, moderate, good, excellent] = LIGHT_THEME.bands;
  return {
    background: v("--figure-page", LIGHT_THEME.background),
    ink: v("--figure-ink", LIGHT_THEME.ink),
    bands: [v("--figure-band-poor", poor), v("--figure-band-moderate", moderate), v("--figure-band-good", good), v("--figure-band-excellent", excellent)],
    rule: v("--figure-rule", LIGHT_THEME.rule),
  };
}

/** Call `redraw` whenever the system switches between light and dark; returns the unsubscribe. */
export function onThemeChange(redraw: () => void): () => void {
  if (typeof matchMedia !== "function") return () => undefined;
  const query = matchMedia("(prefers-color-scheme: dark)");
  query.addEventListener("change", redraw);
  return () => query.removeEventListener("change", redraw);
}

/** Put a drawn figure on its theme's page: background and ink on the figure and each of its SVGs. */
export function themedFigure(el: Element, theme: FigurePage = currentTheme()): Element {
  const paint = (e: Element) => {
    const style = (e as HTMLElement | SVGElement).style;
    style.setProperty("background", theme.background);
    style.setProperty("color", theme.ink);
    style.setProperty("--plot-background", theme.background);
  };
  paint(el);
  el.querySelectorAll("svg").forEach(paint);
  return el;
}

/** Axis words of the agreement figures, in the window's language. */
export interface AgreementAxes {
  icc: string;
  meanOfBoth: string;
  difference: string;
  limits: string;
}

const ENGLISH_AXES: AgreementAxes = {
  icc: "ICC with 95% CI",
  meanOfBoth: "mean of judge and expert",
  difference: "judge − expert",
  limits: "difference (judge − expert): bias and 95% limits of agreement",
};

/** A left margin wide enough for the longest of `labels` at Plot's 10 px font. */
function labelMargin(labels: string[]): number {
  const widest = Math.max(0, ...labels.map((l) => textWidth(l, 10)));
  return Math.min(280, Math.max(130, Math.ceil(widest) + 16));
}

function kooLi(theme: FigureTheme) {
  const [poor, moderate, good, excellent] = theme.bands;
  return [
    { from: -1, to: 0.5, label: "poor", fill: poor },
    { from: 0.5, to: 0.75, label: "moderate", fill: moderate },
    { from: 0.75, to: 0.9, label: "good", fill: good },
    { from: 0.9, to: 1, label: "excellent", fill: excellent },
  ];
}

export function forestPlot(
  table: AgreementTable,
  title: string,
  axes: AgreementAxes = ENGLISH_AXES,
  theme: FigureTheme = LIGHT_THEME,
): SVGSVGElement | HTMLElement {
  const points = forestPoints(table);
  const attributes = table.rows.map((r) => r.attribute);
  const xmin = Math.min(0, ...points.map((p) => p.lo ?? p.icc));
  const raters = [...new Set(points.map((p) => p.rater))];
  const bands = kooLi(theme).filter((b) => b.to > xmin);
  return Plot.plot({
    title,
    width: 760,
    height: 60 + attributes.length * (10 + 12 * raters.length),
    marginLeft: labelMargin(attributes),
    x: { domain: [Math.max(-1, Math.floor(xmin * 10) / 10), 1], label: axes.icc, grid: true },
    fy: { domain: attributes, label: null },
    y: { domain: raters, axis: null },
    color: { legend: true, domain: raters },
    marks: [
      Plot.rectX(bands, { x1: (d) => Math.max(d.from, xmin), x2: "to", fill: "fill", fillOpacity: 0.8 }),
      Plot.ruleY(points.filter((p) => p.lo !== null && p.hi !== null), {
        fy: "attribute", y: "rater", x1: "lo", x2: "hi", stroke: "rater", strokeWidth: 2,
      }),
      Plot.dot(points, { fy: "attribute", y: "rater", x: "icc", fill: "rater", r: 3.5, title: (p: ForestPoint) => `${p.rater}: ${p.icc.toFixed(3)}` }),
    ],
  });
}

export function heatmap(table: AgreementTable, title: string): SVGSVGElement | HTMLElement {
  const cells: { attribute: string; rater: string; icc: number }[] = [];
  for (const row of table.rows) {
    row.cells.forEach((cell, i) => {
      const col = table.columns[i];
      if (cell && col && cell.icc !== null) cells.push({ attribute: row.attribute, rater: col.label, icc: cell.icc });
    });
  }
  return Plot.plot({
    title,
    width: 760,
    height: 80 + 34 * table.rows.length,
    marginLeft: labelMargin(table.rows.map((r) => r.attribute)),
    marginBottom: 60,
    padding: 0.05,
    x: { label: null, tickRotate: -15 },
    y: { domain: table.rows.map((r) => r.attribute), label: null },
    color: { type: "linear", domain: [0, 1], scheme: "greens", legend: true, label: "ICC" },
    marks: [
      Plot.cell(cells, { x: "rater", y: "attribute", fill: "icc", inset: 0.5 }),
      Plot.text(cells, { x: "rater", y: "attribute", text: (d) => d.icc.toFixed(2), fill: (d) => (d.icc > 0.6 ? "white" : "black") }),
    ],
  });
}

export interface BlandAltmanRow {
  attribute: string;
  rater: string;
  bias: number;
  lo: number | null;
  hi: number | null;
}

/** Bland–Altman bias and 95% limits of agreement (rater − reference) per criterion and rater. */
export function blandAltmanRows(cells: AgreementCell[]): BlandAltmanRow[] {
  return cells
    .filter((c) => c.bland_altman.bias !== null)
    .map((c) => ({
      attribute: c.attribute,
      rater: c.rater,
      bias: c.bland_altman.bias as number,
      lo: c.bland_altman.loa95[0],
      hi: c.bland_altman.loa95[1],
    }));
}

export interface BlandAltmanPoint {
  attribute: string;
  rater: string;
  source: string;
  mean: number;
  diff: number;
}

/** Per-target (source) points of system-level cells: mean of the two sides against rater − reference. */
export function blandAltmanPoints(cells: AgreementCell[]): BlandAltmanPoint[] {
  return cells.flatMap((c) =>
    c.points.map((p) => ({
      attribute: c.attribute,
      rater: c.rater,
      source: p.source,
      mean: (p.reference + p.rater) / 2,
      diff: p.rater - p.reference,
    })),
  );
}

export function blandAltmanPlot(
  cells: AgreementCell[],
  title: string,
  axes: AgreementAxes = ENGLISH_AXES,
  theme: FigureTheme = LIGHT_THEME,
): SVGSVGElement | HTMLElement {
  const points = blandAltmanPoints(cells);
  if (points.length > 0) return blandAltmanScatter(cells, points, title, axes, theme);
  return blandAltmanLimits(cells, title, axes, theme);
}

/** The classic Bland–Altman plot per criterion: each source's mean against its difference, with
 * the bias and the 95% limits of agreement as horizontal lines, one colour per judge. */
function blandAltmanScatter(
  cells: AgreementCell[],
  points: BlandAltmanPoint[],
  title: string,
  axes: AgreementAxes,
  theme: FigureTheme,
): SVGSVGElement | HTMLElement {
  const rows = blandAltmanRows(cells);
  const attributes = [...new Set(points.map((p) => p.attribute))];
  const raters = [...new Set(points.map((p) => p.rater))];
  const lines = rows.flatMap((r) => [
    { attribute: r.attribute, rater: r.rater, y: r.bias, kind: "bias" },
    ...(r.lo !== null ? [{ attribute: r.attribute, rater: r.rater, y: r.lo, kind: "limit" }] : []),
    ...(r.hi !== null ? [{ attribute: r.attribute, rater: r.rater, y: r.hi, kind: "limit" }] : []),
  ]);
  const fx = (a: string) => attributes.indexOf(a) % 3;
  const fy = (a: string) => Math.floor(attributes.indexOf(a) / 3);
  const bias = lines.filter((l) => l.kind === "bias");
  const limits = lines.filter((l) => l.kind === "limit");
  return Plot.plot({
    title,
    width: 760,
    height: 150 * Math.ceil(attributes.length / 3) + 60,
    marginLeft: 50,
    grid: true,
    fx: { axis: null },
    fy: { axis: null },
    x: { label: axes.meanOfBoth },
    y: { label: axes.difference },
    color: { legend: true, domain: raters },
    marks: [
      Plot.ruleY(attributes, { y: 0, stroke: theme.rule, fx: (a: string) => fx(a), fy: (a: string) => fy(a) }),
      Plot.ruleY(bias, { y: "y", stroke: "rater", fx: (d) => fx(d.attribute), fy: (d) => fy(d.attribute) }),
      Plot.ruleY(limits, { y: "y", stroke: "rater", strokeDasharray: "4,3", fx: (d) => fx(d.attribute), fy: (d) => fy(d.attribute) }),
      Plot.dot(points, { x: "mean", y: "diff", fill: "rater", r: 3, fx: (d: BlandAltmanPoint) => fx(d.attribute), fy: (d: BlandAltmanPoint) => fy(d.attribute), title: (d: BlandAltmanPoint) => `${d.rater} · ${d.source}` }),
      Plot.text(attributes, { text: (d: string) => d, frameAnchor: "top-left", dx: 4, dy: 4, fontWeight: "bold", fx: (a: string) => fx(a), fy: (a: string) => fy(a) }),
    ],
  });
}

function blandAltmanLimits(cells: AgreementCell[], title: string, axes: AgreementAxes, theme: FigureTheme): SVGSVGElement | HTMLElement {
  const rows = blandAltmanRows(cells);
  const attributes = [...new Set(rows.map((r) => r.attribute))];
  const raters = [...new Set(rows.map((r) => r.rater))];
  return Plot.plot({
    title,
    width: 760,
    height: 60 + attributes.length * (10 + 12 * raters.length),
    marginLeft: labelMargin(attributes),
    x: { label: axes.limits, grid: true },
    fy: { domain: attributes, label: null },
    y: { domain: raters, axis: null },
    color: { legend: true, domain: raters },
    marks: [
      Plot.ruleX([0], { stroke: theme.rule }),
      Plot.ruleY(rows.filter((r) => r.lo !== null && r.hi !== null), { fy: "attribute", y: "rater", x1: "lo", x2: "hi", stroke: "rater", strokeOpacity: 0.5, strokeWidth: 5 }),
      Plot.tickX(rows, { fy: "attribute", y: "rater", x: "bias", stroke: "rater", strokeWidth: 2 }),
    ],
  });
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** The page colours a saved figure is drawn on. */
export interface FigurePage {
  background: string;
  ink: string;
}

/** A white page with dark ink, as figures are printed. */
export const LIGHT_PAGE: FigurePage = { background: LIGHT_THEME.background, ink: LIGHT_THEME.ink };

/** One entry of a figure's colour legend: a judge (or series) and its colour. */
export interface LegendEntry {
  label: string;
  color: string;
}

/** The entries of the colour legend Plot drew beside a figure (its swatches), in order. */
export function legendEntries(figure: Element): LegendEntry[] {
  const out: LegendEntry[] = [];
  figure.querySelectorAll("[class$=-swatch]").forEach((swatch) => {
    const svg = swatch.querySelector("svg");
    const color = svg?.getAttribute("fill") ?? svg?.querySelector("[fill]")?.getAttribute("fill") ?? "";
    const label = swatch.textContent?.trim() ?? "";
    if (label) out.push({ label, color });
  });
  return out;
}

/** A rough width of `text` at `size` px (CJK characters are about square, Latin about half). */
function textWidth(text: string, size: number): number {
  let w = 0;
  for (const ch of text) w += /[\u2e80-\u9fff\uff00-\uffef]/.test(ch) ? size : size * 0.6;
  return w;
}

function svgNode<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/**
 * The SVG markup of a figure as it is saved: one self-contained SVG on the figure's page colours,
 * with the title written on it, the colour legend Plot drew beside it (each judge named with its
 * colour, or the ramp of a continuous scale), and the plot below them. Names reach the file as
 * text nodes, never as markup.
 */
export function svgText(figure: Element, page: FigurePage = LIGHT_PAGE): string {
  const svgs = figure.tagName.toLowerCase() === "svg" ? [figure] : Array.from(figure.querySelectorAll("svg"));
  const main = svgs[svgs.length - 1] as SVGSVGElement | undefined;
  if (!main) return "";
  const pad = 12;
  const width = Number(main.getAttribute("width")) || 760;
  const height = Number(main.getAttribute("height")) || 400;
  const title = figure.querySelector("h2")?.textContent?.trim() ?? "";
  const out = svgNode("svg", { "font-family": "system-ui, sans-serif" });
  if (title) {
    const t = svgNode("title", {});
    t.textContent = title;
    out.appendChild(t);
  }
  const background = svgNode("rect", { class: "concord-figure-page", x: 0, y: 0, width: "100%", height: "100%", fill: page.background });
  out.appendChild(background);
  let y = pad;
  if (title) {
    const t = svgNode("text", { class: "concord-figure-title", x: pad, y: y + 15, "font-size": 15, "font-weight": 600, fill: page.ink });
    t.textContent = title;
    out.appendChild(t);
    y += 26;
  }
  const entries = legendEntries(figure);
  const ramp = svgs.find((s) => s !== main && (s.getAttribute("class") ?? "").includes("-ramp"));
  if (entries.length > 0 || ramp) {
    const legend = svgNode("g", { class: "concord-figure-legend", transform: `translate(${pad}, ${y})` });
    let x = 0;
    let row = 0;
    for (const e of entries) {
      const w = 18 + textWidth(e.label, 11) + 14;
      if (x > 0 && x + w > width) {
        x = 0;
        row += 1;
      }
      const item = svgNode("g", { class: "concord-legend-entry", transform: `translate(${x}, ${row * 18})` });
      item.appendChild(svgNode("rect", { width: 12, height: 12, y: 0, fill: e.color }));
      const label = svgNode("text", { x: 17, y: 10, "font-size": 11, fill: page.ink });
      label.textContent = e.label;
      item.appendChild(label);
      legend.appendChild(item);
      x += w;
    }
    let legendHeight = entries.length > 0 ? (row + 1) * 18 : 0;
    if (ramp) {
      const copy = ramp.cloneNode(true) as SVGSVGElement;
      copy.setAttribute("x", "0");
      copy.setAttribute("y", String(legendHeight));
      copy.setAttribute("color", page.ink);
      copy.style.removeProperty("max-width");
      legend.appendChild(copy);
      legendHeight += Number(ramp.getAttribute("height")) || 50;
    }
    out.appendChild(legend);
    y += legendHeight + 6;
  }
  const plot = main.cloneNode(true) as SVGSVGElement;
  plot.removeAttribute("xmlns");
  plot.setAttribute("x", String(pad));
  plot.setAttribute("y", String(y));
  plot.setAttribute("color", page.ink);
  plot.style.setProperty("color", page.ink);
  plot.style.setProperty("background", "none");
  out.appendChild(plot);
  const total = y + height + pad;
  out.setAttribute("width", String(width + 2 * pad));
  out.setAttribute("height", String(total));
  out.setAttribute("viewBox", `0 0 ${width + 2 * pad} ${total}`);
  return new XMLSerializer().serializeToString(out);
}

/** Rasterise SVG markup to PNG bytes at `scale`× (for slides and manuscripts). */
export async function pngBytes(svg: string, scale = 2, page: FigurePage = LIGHT_PAGE): Promise<Uint8Array> {
  const img = new Image();
  const url = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
  try {
    await new Promise<void>((resolve, reject) => {
      img.onload = () => resolve();
      img.onerror = () => reject(new Error("the figure could not be rasterised"));
      img.src = url;
    });
    const canvas = document.createElement("canvas");
    canvas.width = Math.ceil(img.width * scale);
    canvas.height = Math.ceil(img.height * scale);
    const ctx = canvas.getContext("2d");
    if (!ctx) throw new Error("no 2D canvas");
    ctx.fillStyle = page.background;
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    const blob: Blob = await new Promise((resolve, reject) =>
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("PNG encoding failed"))), "image/png"),
    );
    return new Uint8Array(await blob.arrayBuffer());
  } finally {
    URL.revokeObjectURL(url);
  }
}
