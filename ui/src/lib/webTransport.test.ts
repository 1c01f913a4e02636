// The HTTP transport of ipc.ts (a browser served by `concord serve`): each rater-session call
// goes to its route, every write carries the CSRF token the login gave, a refusal keeps the
// `{code, message}` shape, and a lead's command is refused in the browser without a request.
import { afterEach, describe, expect, it, vi } from "vitest";
import { CONNECTION_EVENT, ipc, transport, webIpc } from "./ipc";

type Sent = { url: string; method: string; headers: Record<string, string>; body: unknown };

function serve(answer: (s: Sent) => [number, unknown]): Sent[] {
  const sent: Sent[] = [];
  vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
    const s: Sent = {
      url,
      method: init.method ?? "GET",
      headers: (init.headers ?? {}) as Record<string, string>,
      body: init.body ? JSON.parse(String(init.body)) : undefined,
    };
    sent.push(s);
    const [status, value] = answer(s);
    return new Response(value === null ? "" : JSON.stringify(value), { status });
  });
  return sent;
}

afterEach(() => vi.unstubAllGlobals());

describe("the HTTP transport", () => {
  it("is chosen where there is no Tauri IPC", () => {
    expect(transport(), "jsdom has no __TAURI_INTERNALS__").toBe("http");
  });

  it("sends a rater's calls to their routes with the session's CSRF token on writes", async () => {
    const sent = serve((s) =>
      s.url === "/api/login" ? [200, { rater_id: 3, rater_name: "Ada", csrf: "tok", idle_minutes: 15 }] : [200, null],
    );
    await webIpc.login("Ada", "correct horse battery staple 41");
    await ipc.ratingItem(4);
    await ipc.rate(4, "empathy", 5);
    await ipc.leaveItem(4, 2.5, 5);
    expect(sent.map((s) => `${s.method} ${s.url}`), "each call is its route").toEqual([
      "POST /api/login",
      "GET /api/items/4",
      "POST /api/items/4/rate",
      "POST /api/items/4/leave",
    ]);
    expect(sent[2]?.headers["x-csrf-token"], "a write carries the CSRF token").toBe("tok");
    expect(sent[1]?.headers["x-csrf-token"], "a read needs none").toBeUndefined();
    expect(sent[2]?.body, "the body holds no rater: the server's session says who").toEqual({
      criterion: "empathy",
      value: 5,
      reason: null,
    });
    expect(sent[3]?.body, "the next item goes as the server names it").toEqual({ seconds: 2.5, next_item: 5 });
  });

  it("keeps the server's {code, message} and refuses lead commands without a request", async () => {
    const sent = serve(() => [401, { code: "web_session", message: "log in again" }]);
    await expect(ipc.openQueue(), "the server's refusal arrives as it was sent").rejects.toEqual({
      code: "web_session",
      message: "log in again",
    });
    await expect(ipc.studyOverview(), "a lead's screen is not in the browser").rejects.toMatchObject({
      code: "rater_session",
    });
    expect(sent.length, "only the rater's call reached the server").toBe(1);
  });
});

describe("while the server is away", () => {
  it("sends the call again until it answers, saying it is reconnecting, and the value goes once", async () => {
    let attempts = 0;
    const landed: unknown[] = [];
    vi.stubGlobal("fetch", async (_url: string, init: RequestInit) => {
      attempts++;
      if (attempts === 1) throw new TypeError("connection refused");
      if (attempts === 2) return new Response("bad gateway", { status: 502 });
      landed.push(JSON.parse(String(init.body)));
      return new Response(JSON.stringify({ item: 1, missing: 6 }), { status: 200 });
    });
    const heard: string[] = [];
    const listen = (e: Event) => heard.push((e as CustomEvent<string>).detail);
    window.addEventListener(CONNECTION_EVENT, listen);
    const progress = await ipc.rate(1, "empathy", 4);
    window.removeEventListener(CONNECTION_EVENT, listen);
    expect(progress, "the answer of the attempt that got through").toEqual({ item: 1, missing: 6 });
    expect(attempts, "a refused connection and a proxy's 502 are tried again").toBe(3);
    expect(landed.length, "the value reached the server once").toBe(1);
    expect(heard, "the page hears it is reconnecting, then online").toEqual(["reconnecting", "online"]);
  });
});
