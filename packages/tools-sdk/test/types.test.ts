// Type-level rules of the contract. Each `@ts-expect-error` line is checked by
// `tsc --noEmit -p .` (`pnpm typecheck`): without the rule it is an unused directive,
// which fails the typecheck. The runtime assertions show what the rule prevents.
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { defineTool, ToolError, type Tool, type ToolContext, type ToolOutput } from "../src/index.js";
import { runTool } from "../src/testing/index.js";

const descriptor = () => ({ name: "types.tool", description: "A tool.", version: "1", inputSchema: { type: "object", properties: { q: { type: "string" } } } });

describe("Tool.call takes (context, args), checked by the compiler (T1)", () => {
  it("T1 a hand-made Tool whose call swaps context and arguments is a compile error, and crashes at run time", async () => {
    // The partner's own shape: defineTool's order, with arguments typed `unknown` (or `any`,
    // or `object`) as a hand-made tool gets them. A method's parameters are checked both
    // ways round, so this type-checked when Tool.call was a method.
    const swapped = {
      descriptor,
      async call(args: unknown, context: ToolContext): Promise<ToolOutput> {
        context.progress.report({ message: `q=${(args as { q: string }).q}` });
        return { json: { q: (args as { q: string }).q } };
      },
    };
    // @ts-expect-error: Tool.call is (context, args); strictFunctionTypes refuses (args, context)
    const tool: Tool = swapped;
    const result = await runTool(tool, { q: "x" });
    expect(result.outcome).toBe("crashed");
  });

  it("T1 the contract's order type-checks in an object literal and in a class with method syntax", async () => {
    const literal: Tool = {
      descriptor,
      async call(context, args) {
        context.progress.report({ message: "ok" });
        return { json: { args: args as object } };
      },
    };
    class Ping implements Tool {
      descriptor = descriptor;
      async call(_context: ToolContext, _args: unknown): Promise<ToolOutput | ToolError> {
        return { json: "pong" };
      }
      turnFinished(_sessionId: string, _completed: boolean): void {}
    }
    expect((await runTool(literal, { q: "x" })).outcome).toBe("succeeded");
    expect((await runTool(new Ping(), { q: "x" })).output?.json).toBe("pong");
  });
});

describe("defineTool's result type keeps non-JSON out of json (T3, T6)", () => {
  const base = { name: "types.defined", description: "A tool.", version: "1", inputSchema: Type.Object({ q: Type.String() }) };

  it("T3 a forgotten await (json is a Promise) is a compile error, as are a function and a Map", async () => {
    const total = async () => 42;
    // @ts-expect-error: json is a Promise: the await was forgotten
    const unawaited = defineTool({ ...base, call: async () => ({ json: total() }) });
    // @ts-expect-error: a function has no JSON form
    defineTool({ ...base, call: () => ({ json: () => 1 }) });
    // @ts-expect-error: a Map has no JSON form either
    defineTool({ ...base, call: () => ({ json: new Map([["a", 1]]) }) });
    // What the compiler now prevents: a crash at run time.
    expect((await runTool(unawaited, { q: "x" })).error?.code).toBe("RESULT_NOT_JSON");
  });

  it("T6 JSON values, interface-typed results, ToolErrors and several return shapes still type-check", async () => {
    interface Found {
      readonly title: string;
      readonly score: number;
    }
    const found: Found = { title: "OpenWorker", score: 1 };
    const tool = defineTool({
      ...base,
      async call(args, context) {
        context.progress.report({ message: args.q });
        if (args.q === "none") return new ToolError("NOT_FOUND", "nothing");
        if (args.q === "list") return { json: [found] };
        if (args.q === "text") return { json: "plain" };
        return { json: found };
      },
    });
    defineTool({ ...base, call: (args) => ({ json: { q: args.q, n: null, ok: true } }) });
    expect((await runTool(tool, { q: "x" })).output?.json).toEqual(found);
    expect((await runTool(tool, { q: "none" })).error?.code).toBe("NOT_FOUND");
  });
});
