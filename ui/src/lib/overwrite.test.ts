import { describe, expect, it } from "vitest";
import { writeConfirmed } from "./overwrite";

const exists = { code: "already_exists", message: "/tmp/a.csv: exists; pass --force to replace it" };

describe("writeConfirmed", () => {
  it("writes a dialog-confirmed path with overwrite and asks nothing", async () => {
    const calls: boolean[] = [];
    const asked: string[] = [];
    const out = await writeConfirmed("/tmp/a.csv", new Set(["/tmp/a.csv"]), async (o) => (calls.push(o), "ok"), (m) => (asked.push(m), true));
    expect(out, "the write's result comes back").toBe("ok");
    expect(calls, "one write, with overwrite, for a path the save dialog confirmed").toEqual([true]);
    expect(asked, "the dialog already asked").toEqual([]);
  });

  it("asks before replacing a typed path and retries with overwrite on yes", async () => {
    const calls: boolean[] = [];
    const asked: string[] = [];
    const out = await writeConfirmed("/tmp/a.csv", new Set(), async (o) => {
      calls.push(o);
      if (!o) throw exists;
      return "replaced";
    }, (m) => (asked.push(m), true));
    expect(calls, "first without overwrite, then with it after the yes").toEqual([false, true]);
    expect(asked, "the shell's message is what the person is asked about").toEqual([exists.message]);
    expect(out, "the second write's result comes back").toBe("replaced");
  });

  it("writes nothing more when the person says no", async () => {
    const calls: boolean[] = [];
    const out = await writeConfirmed("/tmp/a.csv", new Set(), async (o) => {
      calls.push(o);
      throw exists;
    }, () => false);
    expect(calls, "no second write after a no").toEqual([false]);
    expect(out, "nothing was written").toBeUndefined();
  });

  it("passes other refusals through without asking", async () => {
    const fifo = { code: "path", message: "/tmp/p: is a FIFO (named pipe); choose a regular file" };
    let asked = false;
    await expect(
      writeConfirmed("/tmp/p", new Set(), async () => { throw fifo; }, () => (asked = true)),
      "a refused destination is never offered for replacing",
    ).rejects.toEqual(fifo);
    expect(asked, "nothing to confirm for a FIFO").toBe(false);
  });
});
