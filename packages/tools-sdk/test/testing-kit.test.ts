import { describe, expect, it } from "vitest";
import { codeTool, type ToolContext, validateQualifiedName } from "../src/index.js";
import { captureError, captureRejection, createTestContext, runTool } from "../src/testing/index.js";
import { nativeTool } from "./execution-helpers.js";

describe("the call boundary (runTool applies the runtime's rules)", () => {
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
