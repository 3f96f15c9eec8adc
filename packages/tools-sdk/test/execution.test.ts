import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { executeTool } from "../src/execution/index.js";
import { defineTool, LIMITS, ToolError, toolError, type Tool, type ToolContext } from "../src/index.js";
import { runTool } from "../src/testing/index.js";
import { nativeTool, schema } from "./execution-helpers.js";

describe("the call boundary (runTool applies the runtime's rules)", () => {
  it("T2 hands the tool harness-owned ids, workspace, an AbortSignal and a progress reporter", async () => {
    let seen: ToolContext | undefined;
    const result = await runTool(
      nativeTool(async (context) => {
        seen = context;
        return { json: null };
      }),
      {},
      { sessionId: "s1", turnId: "t1", callId: "c1", workspace: "/work" },
    );
    expect(result.outcome).toBe("succeeded");
    expect(seen).toMatchObject({ sessionId: "s1", turnId: "t1", callId: "c1", workspace: "/work" });
    expect(seen?.signal).toBeInstanceOf(AbortSignal);
    expect(typeof seen?.progress.report).toBe("function");
  });

  it("T2 the context behaves as a plain object: spread and keys keep its signal, and report works detached", async () => {
    let copied: ToolContext | undefined;
    let keys: string[] = [];
    const events: unknown[] = [];
    const controller = new AbortController();
    const pending = runTool(
      nativeTool(async (context) => {
        keys = Object.keys(context);
        // A wrapper a partner might write: a copy of the context with its own progress.
        copied = { ...context, progress: { report: (event) => (events.push(event), true) } };
        const { report } = context.progress;
        report({ message: "detached" });
        return new Promise(() => undefined);
      }),
      {},
      { signal: controller.signal },
    );
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new Error("stop"));
    const result = await pending;
    expect(result.outcome).toBe("cancelled");
    expect(result.progress.accepted).toBe(1);
    expect(keys.sort()).toEqual(["callId", "progress", "sessionId", "signal", "turnId", "workspace"]);
    expect(copied?.signal.aborted).toBe(true);
  });

  it("T3 derives the model text from structured JSON; a string result is its own text", async () => {
    const json = await runTool(
      nativeTool(async () => ({ json: { b: [1, 2], a: "x" } })),
      {},
    );
    expect(json.output?.text).toBe('{"b":[1,2],"a":"x"}');
    const text = await runTool(
      nativeTool(async () => ({ json: "plain words" })),
      {},
    );
    expect(text.output?.text).toBe("plain words");
  });

  it("T1 a returned and a thrown ToolError are the same failed outcome", async () => {
    const returned = await runTool(
      nativeTool(async () => toolError("NOPE", "said no")),
      {},
    );
    const thrown = await runTool(
      nativeTool(async () => {
        throw new ToolError("NOPE", "said no");
      }),
      {},
    );
    expect(returned.outcome).toBe("failed");
    expect(returned.error).toEqual({ code: "NOPE", message: "said no" });
    expect(thrown.outcome).toBe("failed");
    expect(thrown.error).toEqual(returned.error);
  });

  it("E4 any other exception is a crash, not a tool error", async () => {
    const result = await runTool(
      nativeTool(async () => {
        throw new RangeError("boom");
      }),
      {},
    );
    expect(result.outcome).toBe("crashed");
    expect(result.error?.code).toBe("TOOL_CRASHED");
    expect(result.error?.message).toContain("RangeError: boom");
  });

  it("E5 validates arguments before the tool runs", async () => {
    let called = false;
    const tool = defineTool({
      name: "test.typed",
      description: "typed",
      version: "1",
      inputSchema: Type.Object({ count: Type.Integer({ minimum: 1 }) }),
      call: () => {
        called = true;
        return { json: null };
      },
    });
    const result = await runTool(tool, { count: "three" });
    expect(result.outcome).toBe("failed");
    expect(result.error?.code).toBe("ARGUMENTS_INVALID");
    expect(result.error?.message).toContain("/count");
    expect(called).toBe(false);
  });

  it("E1 a tool that never returns and ignores abort is abandoned at its time bound", async () => {
    let aborted = false;
    const result = await runTool(
      nativeTool((context) => {
        context.signal.addEventListener("abort", () => (aborted = true));
        return new Promise(() => undefined);
      }),
      {},
      { timeoutMs: 50 },
    );
    expect(result.outcome).toBe("timed_out");
    expect(result.error?.code).toBe("TOOL_TIMEOUT");
    expect(aborted).toBe(true);
  });

  it("E1 a tool that reads its signal only after the bound finds it already aborted, with the timeout as reason", async () => {
    let late: AbortSignal | undefined;
    let readLate!: () => void;
    const result = await runTool(
      nativeTool((context) => {
        readLate = () => (late = context.signal);
        return new Promise(() => undefined);
      }),
      {},
      { timeoutMs: 20 },
    );
    expect(result.outcome).toBe("timed_out");
    readLate();
    expect(late?.aborted).toBe(true);
    expect((late!.reason as { code?: string }).code).toBe("TOOL_TIMEOUT");
  });

  it("E1 the time bound can be lowered but never raised above 75 s", async () => {
    const result = await runTool(
      nativeTool(() => new Promise(() => undefined)),
      {},
      { timeoutMs: 20 },
    );
    expect(result.outcome).toBe("timed_out");
    expect(result.error?.message).toContain("20 ms");
    expect(LIMITS.callTimeoutMs).toBe(75_000);
  });

  it("T7 cancellation settles the call at once, even when the tool ignores it", async () => {
    const controller = new AbortController();
    const pending = runTool(
      nativeTool(() => new Promise(() => undefined)),
      {},
      { signal: controller.signal },
    );
    controller.abort();
    const result = await pending;
    expect(result.outcome).toBe("cancelled");
  });

  it("T7 a cancellation that comes while the call starts (before its bound is armed) still settles it at once", async () => {
    const controller = new AbortController();
    const result = await runTool(
      nativeTool(() => {
        controller.abort(); // the host cancels in the same tick the tool starts
        return new Promise(() => undefined);
      }),
      {},
      { signal: controller.signal },
    );
    expect(result.outcome).toBe("cancelled");
  });

  it("E2 E4 drops progress past 64 events and counts it; the call then ends as a limit breach, its result kept", async () => {
    const result = await runTool(
      nativeTool(async (context) => {
        for (let index = 0; index < 100; index++) context.progress.report({ message: `step ${index}` });
        return { json: "done" };
      }),
      {},
    );
    expect(result.outcome).toBe("limit_exceeded");
    expect(result.breach).toMatchObject({ limit: "progressEvents", max: LIMITS.progressEvents });
    expect(result.error).toEqual({
      code: "LIMIT_EXCEEDED",
      message: `progress past its bounds: too many progress events (${100 - LIMITS.progressEvents} updates dropped)`,
    });
    expect(result.output?.json).toBe("done");
    expect(result.progressEvents).toHaveLength(LIMITS.progressEvents);
    expect(result.progress.dropped).toBe(100 - LIMITS.progressEvents);
    expect(result.progress.breaches.map((breach) => breach.limit)).toEqual(["progressEvents"]);
  });

  it("E2 drops a progress message over 4 KB and stops at 16 KB of progress JSON", async () => {
    const accepted: boolean[] = [];
    const result = await runTool(
      nativeTool(async (context) => {
        accepted.push(context.progress.report({ message: "x".repeat(LIMITS.progressMessageBytes + 1) }));
        for (let index = 0; index < 10; index++) {
          accepted.push(context.progress.report({ message: "y".repeat(3000) }));
        }
        return { json: null };
      }),
      {},
    );
    expect(accepted[0]).toBe(false);
    expect(result).toMatchObject({ outcome: "limit_exceeded", breach: { limit: "progressMessageBytes" } });
    expect(result.progress.jsonBytes).toBeLessThanOrEqual(LIMITS.progressJsonBytes);
    expect(result.progressEvents.length).toBe(5);
    expect(result.progress.breaches.map((breach) => breach.limit)).toEqual(["progressMessageBytes", "progressJsonBytes"]);
  });

  it("E2 E4 a ToolError after a progress breach: the breach wins (the turn stops), the tool's answer is quoted; a call within bounds is untouched", async () => {
    const flooded = await runTool(
      nativeTool(async (context) => {
        for (let index = 0; index <= LIMITS.progressEvents; index++) context.progress.report({ message: "tick" });
        return toolError("NOT_FOUND", "no such note");
      }),
      {},
    );
    expect(flooded).toMatchObject({ outcome: "limit_exceeded", breach: { limit: "progressEvents" }, error: { code: "LIMIT_EXCEEDED" } });
    expect(flooded.error?.message).toContain("the tool then answered NOT_FOUND: no such note");
    const within = await runTool(
      nativeTool(async (context) => {
        for (let index = 0; index < LIMITS.progressEvents; index++) context.progress.report({ message: "tick" });
        return { json: "done" };
      }),
      {},
    );
    expect(within.outcome).toBe("succeeded");
  });

  it("E3 a result over 256 KB is a limit breach, not a truncation", async () => {
    const result = await runTool(
      nativeTool(async () => ({ json: { blob: "z".repeat(300 * 1024) } })),
      {},
    );
    expect(result.outcome).toBe("limit_exceeded");
    expect(result.breach?.limit).toBe("resultBytes");
    expect(result.output).toBeUndefined();
  });

  it("E3 cyclic and BigInt results are refused as not JSON", async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const cycle = await runTool(
      nativeTool(async () => ({ json: cyclic as never })),
      {},
    );
    expect(cycle.outcome).toBe("crashed");
    expect(cycle.error).toMatchObject({ code: "RESULT_NOT_JSON" });
    expect(cycle.error?.message).toContain("/self");
    const deep: Record<string, unknown> = { a: { b: [{}] } };
    ((deep.a as { b: unknown[] }).b[0] as Record<string, unknown>).back = deep.a;
    const deeper = await runTool(
      nativeTool(async () => ({ json: deep as never })),
      {},
    );
    expect(deeper.error?.message).toContain("at /a/b/0/back is a cycle");
    // The same object twice, side by side, is no cycle: it serializes twice.
    const shared = { x: 1 };
    const twice = await runTool(
      nativeTool(async () => ({ json: { left: shared, right: [shared, shared] } })),
      {},
    );
    expect(twice.outcome).toBe("succeeded");
    expect(twice.output?.text).toBe('{"left":{"x":1},"right":[{"x":1},{"x":1}]}');
    const big = await runTool(
      nativeTool(async () => ({ json: { n: 1n } as never })),
      {},
    );
    expect(big.error?.message).toContain("bigint");
    const shape = await runTool(
      nativeTool(async () => ({ text: "no json field" }) as never),
      {},
    );
    expect(shape.error?.code).toBe("RESULT_INVALID");
  });

  it("T4 images travel as bytes, bounded in count, size and type", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    const ok = await runTool(
      nativeTool(async () => ({ json: "shot", images: [{ mimeType: "image/png", data: png }] })),
      {},
    );
    expect(ok.output?.images).toHaveLength(1);
    expect(ok.output?.text).toBe("shot");
    const many = Array.from({ length: LIMITS.imagesPerCall + 1 }, () => ({ mimeType: "image/png", data: png }));
    expect(
      (
        await runTool(
          nativeTool(async () => ({ json: null, images: many })),
          {},
        )
      ).breach?.limit,
    ).toBe("imagesPerCall");
    const svg = [{ mimeType: "image/svg+xml", data: png }];
    expect(
      (
        await runTool(
          nativeTool(async () => ({ json: null, images: svg })),
          {},
        )
      ).breach?.limit,
    ).toBe("imageMimeType");
    const base64 = [{ mimeType: "image/png", data: "iVBORw0KGgo=" as never }];
    expect(
      (
        await runTool(
          nativeTool(async () => ({ json: null, images: base64 })),
          {},
        )
      ).error?.code,
    ).toBe("RESULT_INVALID");
  });
});

describe("what a tool can reach (E2, T1)", () => {
  it("E2 E4 the progress reporter a tool gets holds only report: the call's counters are out of its reach", async () => {
    let delivered = 0;
    let seen: unknown;
    const chatty = nativeTool(async (context) => {
      seen = {
        keys: Object.keys(context.progress),
        frozen: Object.isFrozen(context.progress),
        stats: (context.progress as unknown as { stats?: unknown }).stats,
      };
      for (let index = 0; index < 1_000; index++) {
        context.progress.report({ message: "x".repeat(1_000), data: { index } });
        // What a tool handed the bookkeeping object could do: reset the bounds.
        const exposed = (context.progress as unknown as { stats?: { accepted: number; jsonBytes: number } }).stats;
        if (exposed) {
          exposed.accepted = 0;
          exposed.jsonBytes = 0;
        }
      }
      return { json: { done: true } };
    });
    const result = await executeTool(chatty, {}, { sessionId: "s", turnId: "t", callId: "c", workspace: "/tmp", onProgress: () => delivered++ });
    expect(seen).toEqual({ keys: ["report"], frozen: true, stats: undefined });
    expect(delivered).toBeLessThanOrEqual(LIMITS.progressEvents);
    expect(result.outcome).toBe("limit_exceeded");
    expect(result.progress.accepted).toBe(delivered);
  });

  it("T1 A2 a crash is labelled with the name the tool was registered under, never by asking descriptor() again", async () => {
    let descriptorCalls = 0;
    const shifty: Tool = {
      descriptor() {
        descriptorCalls++;
        return { name: descriptorCalls === 1 ? "example.lookup" : "openworker.shell", description: "d", version: "1", inputSchema: schema };
      },
      async call() {
        throw new Error("boom");
      },
    };
    const registered = shifty.descriptor().name;
    const options = { sessionId: "s", turnId: "t", callId: "c", workspace: "/tmp" };
    const named = await executeTool(shifty, {}, { ...options, toolName: registered });
    expect(named.error).toEqual({ code: "TOOL_CRASHED", message: 'tool "example.lookup" threw Error: boom' });
    const unnamed = await executeTool(shifty, {}, options);
    expect(unnamed.error).toEqual({ code: "TOOL_CRASHED", message: "the tool threw Error: boom" });
    expect(descriptorCalls).toBe(1);
    // runTool names the tool from the one descriptor it read.
    descriptorCalls = 0;
    const viaKit = await runTool(shifty, {});
    expect(viaKit.error?.message).toBe('tool "example.lookup" threw Error: boom');
    expect(descriptorCalls).toBe(1);
  });
});
