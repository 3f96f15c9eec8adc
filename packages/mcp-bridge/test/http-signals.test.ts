import { getEventListeners } from "node:events";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { McpBridge } from "../src/index.js";
import { eventually } from "./helpers.js";
import { LocalService, TOKEN } from "./local-http-service.js";

/** One request `boundedFetch` made through Node's fetch, with the signal it gave fetch. */
interface SeenRequest {
  /** `POST tools/call echo`, `GET`, `DELETE`, … */
  readonly what: string;
  readonly signal: AbortSignal | undefined;
}

// What the SDK transport gave `boundedFetch`, and what `boundedFetch` gave Node's fetch.
const seen = vi.hoisted(() => ({
  /** The signals the SDK transport passed in, each with the most abort listeners it held when a request began. */
  transportSignals: new Map<AbortSignal, number>(),
  requests: [] as SeenRequest[],
}));

// The real boundedFetch over Node's real fetch, watched from both sides.
vi.mock("../src/connection/bounded-fetch.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/connection/bounded-fetch.js")>();
  const { EventEmitter } = await import("node:events");
  const describeRequest = (init: RequestInit | undefined): string => {
    if (typeof init?.body !== "string") return init?.method ?? "GET";
    const message = JSON.parse(init.body) as { method?: string; params?: { name?: string } };
    return [init.method, message.method, message.method === "tools/call" ? message.params?.name : undefined].filter(Boolean).join(" ");
  };
  const watchedFetch: FetchLike = (url, init) => {
    seen.requests.push({ what: describeRequest(init), signal: init?.signal ?? undefined });
    return fetch(url, init);
  };
  return {
    ...original,
    boundedFetch: (maxMessageBytes: number, observer: Parameters<typeof original.boundedFetch>[1]): FetchLike => {
      const bounded = original.boundedFetch(maxMessageBytes, observer, watchedFetch);
      return (url, init) => {
        const signal = init?.signal;
        if (signal) seen.transportSignals.set(signal, Math.max(seen.transportSignals.get(signal) ?? 0, EventEmitter.getEventListeners(signal, "abort").length));
        return bounded(url, init);
      };
    },
  };
});

const service = new LocalService();
const provider = { transport: "streamable_http" as const, namespace: "local", url: "", headers: { Authorization: `Bearer ${TOKEN}` } };

beforeAll(async () => {
  await service.start();
  provider.url = service.url;
});

afterAll(async () => {
  await service.stop();
});

beforeEach(() => {
  seen.transportSignals.clear();
  seen.requests.length = 0;
});

describe("the abort signal of streamable-HTTP requests", () => {
  it("M1 E1 200 calls leave the SDK transport's long-lived signal with one abort listener, not one per request, and print no MaxListenersExceededWarning", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === "MaxListenersExceededWarning") warnings.push(warning);
    };
    process.on("warning", onWarning);
    const bridge = new McpBridge([provider]);
    try {
      const session = bridge.openSession("many-calls");
      expect((await session.discover(["local"])).unavailable).toEqual([]);
      for (let index = 0; index < 200; index++) {
        expect((await session.callTool("local", "echo", { text: `call ${index}` }, {})).output?.text).toBe(`call ${index}`);
      }
      expect(seen.transportSignals.size).toBe(1);
      const [signal, most] = [...seen.transportSignals][0]!;
      // The peak is read as each request began, so a garbage collection cannot hide a leak.
      expect(most).toBeLessThanOrEqual(2);
      expect(getEventListeners(signal, "abort").length).toBeLessThanOrEqual(2);
      // Node's fetch listens on each request's own signal instead.
      expect(seen.requests.filter((request) => request.signal === signal)).toEqual([]);
      // A warning is emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
      await session.close();
      await session.joinCleanup();
    } finally {
      process.off("warning", onWarning);
      await bridge.dispose();
    }
  });

  it("M1 M4 closing the connection aborts the requests still streaming (a cancelled call's event stream, the standalone GET), and none that had settled", async () => {
    const bridge = new McpBridge([provider]);
    const session = bridge.openSession("cancelled-call");
    await session.discover(["local"]);
    for (let index = 0; index < 3; index++) expect((await session.callTool("local", "echo", { text: "settled" }, {})).outcome).toBe("succeeded");
    const caller = new AbortController();
    const call = session.callTool("local", "hang", {}, { signal: caller.signal });
    await eventually(() => (service.hang.started === 1 ? true : undefined));
    caller.abort();
    expect((await call).outcome).toBe("cancelled");
    // The service took the cancellation and still holds the call's event stream open.
    await eventually(() => (service.hang.cancelled === 1 ? true : undefined));
    const unfinishedBefore = service.unfinished.length;
    // The requests made before the close (not its own DELETE).
    const made = [...seen.requests];
    // The service keeps the session on a failed DELETE: only the client can end its streams.
    service.failDelete = true;
    try {
      await session.close();
      await session.joinCleanup().catch(() => {});
    } finally {
      service.failDelete = false;
      await bridge.dispose();
    }
    const aborted = made.filter((request) => request.signal?.aborted === true).map((request) => request.what);
    expect(aborted.sort()).toEqual(["GET", "POST tools/call hang"]);
    // And the service saw both connections go while it was still answering them.
    const unfinished = await eventually(() => (service.unfinished.length - unfinishedBefore >= 2 ? service.unfinished.slice(unfinishedBefore) : undefined));
    expect(unfinished.sort()).toEqual(["GET", "POST"]);
  });
});
