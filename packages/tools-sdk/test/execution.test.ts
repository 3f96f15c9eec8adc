import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { executeTool, gatherModelContext } from "../src/execution/index.js";
import {
  codeTool,
  defineTool,
  finishTurn,
  LIMITS,
  readToolDescriptor,
  ToolError,
  toolError,
  type Tool,
  type ToolContext,
  validateQualifiedName,
} from "../src/index.js";
import { captureError, captureRejection, createTestContext, runTool } from "../src/testing/index.js";

const schema = { type: "object", properties: {}, additionalProperties: true } as const;

function nativeTool(call: Tool["call"], extra: Partial<Tool> = {}): Tool {
  return {
    descriptor: () => ({ name: "test.tool", description: "test", inputSchema: schema, version: "1" }),
    call,
    ...extra,
  };
}

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

  it("T5 turnFinished defaults to revoke; a tool may keep access across a completed turn", () => {
    const revoked: string[] = [];
    const plain = nativeTool(async () => ({ json: null }), { revoke: (sessionId) => void revoked.push(sessionId) });
    finishTurn(plain, "s1", true);
    expect(revoked).toEqual(["s1"]);
    const finished: Array<[string, boolean]> = [];
    const keeps = nativeTool(async () => ({ json: null }), {
      revoke: (sessionId) => void revoked.push(sessionId),
      turnFinished: (sessionId, completed) => {
        finished.push([sessionId, completed]);
        if (!completed) revoked.push(sessionId);
      },
    });
    finishTurn(keeps, "s2", true);
    expect(finished).toEqual([["s2", true]]);
    expect(revoked).toEqual(["s1"]);
  });

  it("T5 L1 modelContext facts are capped per tool and must be synchronous", () => {
    const small = nativeTool(async () => ({ json: null }), { modelContext: () => ({ battery: 80 }) });
    expect(gatherModelContext(small, "s")).toEqual({ ok: true, facts: { battery: 80 }, bytes: 14 });
    const large = nativeTool(async () => ({ json: null }), { modelContext: () => "x".repeat(LIMITS.modelContextToolBytes) });
    expect(gatherModelContext(large, "s")).toMatchObject({ ok: false, reason: expect.stringContaining("limit") });
    const async = nativeTool(async () => ({ json: null }), { modelContext: (() => Promise.resolve(1)) as never });
    expect(gatherModelContext(async, "s")).toMatchObject({ ok: false, reason: expect.stringContaining("synchronous") });
    const throws = nativeTool(async () => ({ json: null }), {
      modelContext: () => {
        throw new Error("nope");
      },
    });
    expect(gatherModelContext(throws, "s")).toMatchObject({ ok: false, reason: "modelContext threw: nope" });
  });

  it("T6 codeTool mirrors agentd: { ok } succeeds, { err } is a failed call", async () => {
    const shout = codeTool(
      "example.shout",
      "Uppercase the input text.",
      { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      async (args) => {
        const text = (args as { text: string }).text;
        return text === "" ? { err: "nothing to shout" } : { ok: { text: text.toUpperCase() } };
      },
    );
    expect(shout.descriptor()).toMatchObject({ name: "example.shout", version: "1" });
    expect((await runTool(shout, { text: "hi" })).output?.json).toEqual({ text: "HI" });
    expect((await runTool(shout, { text: "" })).error).toEqual({ code: "CODE_TOOL_ERROR", message: "nothing to shout" });
    expect((await runTool(shout, {})).error?.code).toBe("ARGUMENTS_INVALID");
  });

  it("T6 defineTool infers argument types from the TypeBox schema and keeps its hooks", async () => {
    const revoked: string[] = [];
    const tool = defineTool({
      name: "example.add",
      description: "Add two numbers.",
      version: "2.0.0",
      inputSchema: Type.Object({ a: Type.Number(), b: Type.Number() }),
      call: (args) => ({ json: args.a + args.b }),
      revoke: (sessionId) => void revoked.push(sessionId),
    });
    expect((await runTool(tool, { a: 2, b: 3 })).output?.json).toBe(5);
    tool.revoke?.("s9");
    expect(revoked).toEqual(["s9"]);
    expect(tool.descriptor().inputSchema).toMatchObject({ type: "object", required: ["a", "b"] });
  });

  it("T6 defineTool takes an object schema only, at type level (tools take named arguments)", async () => {
    const definition = {
      name: "example.bad",
      description: "Not an object schema.",
      version: "1",
      inputSchema: Type.String(),
      call: () => ({ json: null }),
    };
    // @ts-expect-error: a string schema is refused by the type checker (checked by `pnpm typecheck`)…
    const tool = defineTool(definition);
    // …and, should it get past it, by the descriptor check at the call boundary.
    await expect(runTool(tool, {})).rejects.toMatchObject({ code: "DESCRIPTOR_INVALID" });
  });

  it("T7 createTestContext captures progress and can be aborted", async () => {
    const test = createTestContext({ sessionId: "s" });
    test.context.progress.report({ message: "one", progress: 1, total: 2 });
    expect(test.progress).toEqual([{ message: "one", progress: 1, total: 2 }]);
    expect(test.context.signal.aborted).toBe(false);
    test.abort("stop");
    expect(test.context.signal.aborted).toBe(true);
  });

  it("T7 late progress after the call settled is ignored", async () => {
    let late: ToolContext | undefined;
    const result = await runTool(
      nativeTool(async (context) => {
        late = context;
        return { json: null };
      }),
      {},
    );
    expect(late?.progress.report({ message: "after" })).toBe(false);
    expect(result.progressEvents).toEqual([]);
  });
});

describe("testing kit guards (T7)", () => {
  it("T7 runTool refuses a timeoutMs that is not a positive number with OPTIONS_INVALID, before calling the tool", async () => {
    let called = 0;
    const tool = codeTool("kit.count", "Counts.", { type: "object" }, () => (called++, { ok: called }));
    for (const timeoutMs of [0, -5, Number.NaN]) {
      const error = await captureRejection(runTool(tool, {}, { timeoutMs }));
      expect(error.code).toBe("OPTIONS_INVALID");
      expect(error.message).toContain("timeoutMs must be a positive number");
    }
    expect(called).toBe(0);
  });

  it("T7 E5 runTool hands the tool the arguments' JSON, not the test's object", async () => {
    let seen: unknown;
    const tool = codeTool("kit.seen", "Sees.", { type: "object" }, (args) => ((seen = args), { ok: true }));
    const args = { when: new Date(0), skip: undefined };
    await runTool(tool, args);
    expect(seen).toEqual({ when: "1970-01-01T00:00:00.000Z" });
    expect(seen).not.toBe(args);
  });

  it("captureError given an async action says to use captureRejection, and leaves no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      expect(() => captureError(async () => validateQualifiedName("openworker.x"))).toThrow(/use `await captureRejection\(promise\)`/);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});

describe("runTool checks a descriptor as the registry does (T7)", () => {
  const withSchema = (extra: Record<string, unknown>, placement?: string): Tool => ({
    descriptor: () =>
      ({
        name: "kit.schema",
        description: "A schema.",
        version: "1",
        inputSchema: { type: "object", properties: { n: { type: "number", ...extra } } },
        ...(placement ? { placement } : {}),
      }) as never,
    call: async () => ({ json: true }),
  });
  it.each([
    ["maximum: Infinity", withSchema({ maximum: Number.POSITIVE_INFINITY }), "DESCRIPTOR_INVALID"],
    ["a Date default", withSchema({ default: new Date(0) }), "DESCRIPTOR_INVALID"],
    ["an undefined array item", withSchema({ examples: [1, undefined] }), "DESCRIPTOR_INVALID"],
    ["a BigInt const", withSchema({ const: 1n }), "DESCRIPTOR_INVALID"],
    ["sandbox placement", withSchema({}, "sandbox"), "NATIVE_SANDBOX_PLACEMENT"],
  ])("refuses %s with the registry's code", async (_label, tool, code) => {
    expect((await captureRejection(runTool(tool, {}))).code).toBe(code);
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

describe("runTool reads a tool as the registry does (T1, T7)", () => {
  it("T1 T7 a descriptor() that throws is DESCRIPTOR_FAILED, a value that is not a tool TOOL_INVALID, never the raw error", async () => {
    const throwing = {
      descriptor: () => {
        throw new Error("config not loaded");
      },
      call: async () => ({ json: {} }),
    } as unknown as Tool;
    const failed = await captureRejection(runTool(throwing, {}));
    expect(failed.code).toBe("DESCRIPTOR_FAILED");
    expect(failed.message).toContain("config not loaded");
    expect((await captureRejection(runTool({ descriptor: 42, call: async () => ({ json: {} }) } as unknown as Tool, {}))).code).toBe("TOOL_INVALID");
    expect((await captureRejection(runTool(null as unknown as Tool, {}))).code).toBe("TOOL_INVALID");
    const unreadable = new Proxy(
      {},
      {
        get() {
          throw new TypeError("trap");
        },
      },
    ) as Tool;
    expect((await captureRejection(runTool(unreadable, {}))).code).toBe("TOOL_INVALID");
  });
});

describe("a descriptor holds only what a native tool can declare (T1)", () => {
  const withExtra = (extra: Record<string, unknown>): Tool => ({
    descriptor: () => ({ name: "kit.extra", description: "Extra keys.", version: "1", inputSchema: { type: "object" }, ...extra }) as never,
    call: async () => ({ json: { n: "not a number" } }),
  });

  it.each([
    ["outputSchema", { outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } }],
    ["annotations", { annotations: { readOnlyHint: true } }],
    ["classification", { classification: "read_only" }],
  ])("T1 a descriptor with %s is refused with TOOL_INVALID naming the key, the tool and the known keys, not silently dropped", async (key, extra) => {
    const error = await captureRejection(runTool(withExtra(extra), {}));
    expect(error.code).toBe("TOOL_INVALID");
    expect(error.message).toContain(`tool "kit.extra"`);
    expect(error.message).toContain(`the key "${key}"`);
    expect(error.message).toContain("known keys: name, description, inputSchema, version, placement");
    expect(error.message).toContain("do not declare output schemas");
    expect(error.details).toMatchObject({ name: "kit.extra", key });
    expect(captureError(() => readToolDescriptor(withExtra(extra), "register()")).code).toBe("TOOL_INVALID");
  });

  it("T1 the known keys still pass, placement included, and a descriptor whose keys cannot be read is DESCRIPTOR_FAILED", async () => {
    expect((await runTool(withExtra({ placement: "host" }), {})).outcome).toBe("succeeded");
    const keyless = new Proxy(
      { name: "kit.keys", description: "d", version: "1", inputSchema: { type: "object" } },
      {
        ownKeys() {
          throw new Error("no keys");
        },
      },
    );
    const tool = { descriptor: () => keyless, call: async () => ({ json: null }) } as unknown as Tool;
    expect((await captureRejection(runTool(tool, {}))).code).toBe("DESCRIPTOR_FAILED");
  });
});

describe("the testing kit's documented defaults (T7)", () => {
  it('T7 runTool and createTestContext use the session id "test-session" (and test-turn, test-call, the current directory) unless told otherwise', async () => {
    let seen: ToolContext | undefined;
    await runTool(
      nativeTool(async (context) => ((seen = context), { json: null })),
      {},
    );
    expect(seen).toMatchObject({ sessionId: "test-session", turnId: "test-turn", callId: "test-call", workspace: process.cwd() });
    const test = createTestContext();
    expect(Object.keys(test).sort()).toEqual(["abort", "context", "progress", "progressStats"]);
    expect(test.context).toMatchObject({ sessionId: "test-session", turnId: "test-turn", callId: "test-call" });
  });
});
