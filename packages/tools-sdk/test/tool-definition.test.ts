import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { gatherModelContext } from "../src/execution/index.js";
import { codeTool, defineTool, finishTurn, LIMITS, readToolDescriptor, type Tool } from "../src/index.js";
import { captureError, captureRejection, runTool } from "../src/testing/index.js";
import { nativeTool } from "./execution-helpers.js";

describe("the call boundary (runTool applies the runtime's rules)", () => {
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
