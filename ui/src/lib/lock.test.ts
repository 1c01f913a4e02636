import { describe, expect, it } from "vitest";
import { beforeLock, flushBeforeLock, idleExpired, idleMinutes } from "./lock";

describe("idle lock", () => {
  it("expires exactly when the idle time reaches the setting", () => {
    expect(idleExpired(1_000, 15_999, 15)).toBe(false);
    expect(idleExpired(1_000, 16_000, 15)).toBe(true);
    expect(idleExpired(1_000, 9_999_999, 0)).toBe(false);
  });

  it("shows whole minutes, at least one", () => {
    expect(idleMinutes(900)).toBe(15);
    expect(idleMinutes(5)).toBe(1);
  });

  it("awaits every registered flush, even after one fails, and forgets unregistered ones", async () => {
    const saved: string[] = [];
    const off = beforeLock(async () => saved.push("rationale"));
    const offFailing = beforeLock(async () => {
      throw new Error("disk full");
    });
    const offLate = beforeLock(
      () => new Promise((resolve) => setTimeout(() => resolve(saved.push("late")), 5)),
    );
    await flushBeforeLock();
    expect(saved.sort()).toEqual(["late", "rationale"]);
    off();
    offFailing();
    offLate();
    await flushBeforeLock();
    expect(saved.length).toBe(2);
  });
});
