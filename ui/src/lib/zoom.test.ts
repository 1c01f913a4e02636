import { describe, expect, it } from "vitest";
import { nextZoom } from "./zoom";

describe("nextZoom", () => {
  it("steps in and out from 100 % and stops at the ends", () => {
    expect(nextZoom(1, 1), "one step in").toBe(1.1);
    expect(nextZoom(1, -1), "one step out").toBe(0.9);
    expect(nextZoom(3, 1), "no further than 300 %").toBe(3);
    expect(nextZoom(0.5, -1), "no smaller than 50 %").toBe(0.5);
    expect(nextZoom(1.75, 0), "Ctrl 0 is back to 100 %").toBe(1);
    expect(nextZoom(1.3, 1), "an odd value snaps to its nearest step first").toBe(1.5);
  });
});
