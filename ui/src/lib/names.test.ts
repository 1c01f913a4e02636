import { describe, expect, it } from "vitest";
import { isolatedName, visibleName } from "./names";

describe("names as the window shows them", () => {
  it("spells out direction overrides, isolates and control characters", () => {
    expect(visibleName("Dr \u202Eevil\u202C")).toBe("Dr <U+202E>evil<U+202C>");
    expect(visibleName("a\u2066b\u2069c\u200Fd\u061Ce")).toBe("a<U+2066>b<U+2069>c<U+200F>d<U+061C>e");
    expect(visibleName("tab\tnew\nline\u0000\u007F\u0085")).toBe("tab<U+0009>new<U+000A>line<U+0000><U+007F><U+0085>");
  });

  it("leaves ordinary names of any script alone", () => {
    for (const n of ["Ana Souza", "李医生", "د. سارة", "Zoë O'Brien <b>x</b>"]) expect(visibleName(n)).toBe(n);
  });

  it("isolates a name in a sentence with marks its own characters cannot close", () => {
    const shown = isolatedName("x\u2069\u202Ey");
    expect(shown).toBe("\u2068x<U+2069><U+202E>y\u2069");
    expect([...shown].filter((c) => c === "\u2069").length).toBe(1);
  });
});

import { isPackagePath } from "./names";

describe("package file names", () => {
  it("knows the names Concord gives the packages it writes", () => {
    expect(isPackagePath("/home/ana/Exports/study-package-Ana.concord"), "a package in a folder").toBe(true);
    expect(isPackagePath("C:\\Users\\ana\\study-package-Ana-2.concord"), "a numbered package on Windows").toBe(true);
    expect(isPackagePath("/home/ana/study.concord"), "a study is not a package").toBe(false);
    expect(isPackagePath("/home/my-package-files/study.concord"), "a folder's name says nothing of the file").toBe(false);
  });
});
