import { describe, expect, it } from "vitest";
import { createBoundedProgress, executeTool } from "../src/execution/index.js";
import { LIMITS, type JsonValue, type ProgressEvent, type Tool } from "../src/index.js";
import { options, schema, throwingProxy } from "./hostile-helpers.js";

// Progress events a tool reports that misbehave when read (throwing getters, getters that
// answer differently the second time, Proxies), and a host sink that throws. Each is dropped
// and counted, or kept from the tool; none makes report or executeTool throw.

describe("hostile progress events (E2)", () => {
  it("E2 a message whose toString throws, a throwing getter or a Proxy is dropped and counted, never thrown into the tool", () => {
    const accepted: ProgressEvent[] = [];
    const progress = createBoundedProgress((event) => accepted.push(event));
    const hostile = [
      {
        message: {
          toString() {
            throw new Error("toString");
          },
        },
      },
      {
        get progress() {
          throw new Error("getter");
        },
      },
      throwingProxy(),
      undefined,
    ] as unknown as ProgressEvent[];
    for (const event of hostile) expect(progress.reporter.report(event)).toBe(false);
    expect(progress.reporter.report({ message: "fine" })).toBe(true);
    expect(progress.stats).toMatchObject({ accepted: 1, dropped: hostile.length });
    expect(progress.stats.breaches).toEqual([
      { limit: "progressJsonBytes", actual: 0, max: LIMITS.progressJsonBytes, message: "progress event could not be read" },
    ]);
    expect(accepted).toEqual([{ message: "fine" }]);
  });

  it("E2 progress data nested deeper than a journal can carry is dropped and counted, not accepted and lost downstream", () => {
    const accepted: ProgressEvent[] = [];
    const progress = createBoundedProgress((event) => accepted.push(event));
    const nested = (levels: number): JsonValue => (levels === 0 ? "leaf" : { inner: nested(levels - 1) });
    expect(progress.reporter.report({ message: "deep", data: nested(300) })).toBe(false);
    expect(progress.reporter.report({ message: "at the bound", data: nested(127) })).toBe(true);
    expect(progress.stats).toMatchObject({ accepted: 1, dropped: 1 });
    expect(progress.stats.breaches).toEqual([
      { limit: "progressJsonBytes", actual: expect.any(Number), max: LIMITS.progressJsonBytes, message: "progress data nests deeper than 128 levels" },
    ]);
    expect(accepted.map((event) => event.message)).toEqual(["at the bound"]);
  });

  it("E2 each field of an event is read once: a message getter cannot pass the size check and deliver more", () => {
    const accepted: ProgressEvent[] = [];
    const progress = createBoundedProgress((event) => accepted.push(event));
    let reads = 0;
    const event = {
      get message() {
        return reads++ === 0 ? "short" : "x".repeat(LIMITS.progressMessageBytes + 1);
      },
    };
    expect(progress.reporter.report(event)).toBe(true);
    expect(reads).toBe(1);
    expect(accepted).toEqual([{ message: "short" }]);
  });
});

describe("a host whose progress sink throws (E2)", () => {
  it("E2 the tool never sees the host's exception: the event counts as accepted and the call goes on", async () => {
    let sawReport: unknown;
    let sinkCalls = 0;
    const tool: Tool = {
      descriptor: () => ({ name: "hostile.tool", description: "test", inputSchema: schema, version: "1" }),
      call: async (context) => {
        sawReport = context.progress.report({ message: "half way" });
        return { json: { done: true } };
      },
    };
    const result = await executeTool(
      tool,
      {},
      {
        ...options,
        onProgress: () => {
          sinkCalls++;
          throw new Error("JOURNAL_WRITE_FAILED: the journal file was deleted");
        },
      },
    );
    expect(sinkCalls).toBe(1);
    expect(sawReport).toBe(true);
    expect(result.outcome).toBe("succeeded");
    expect(result.output?.json).toEqual({ done: true });
    expect(result.progress).toMatchObject({ accepted: 1, dropped: 0 });
  });
});
