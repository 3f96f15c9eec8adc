import type { Tool } from "../src/index.js";

// Shared by execution.test.ts, tool-definition.test.ts and testing-kit.test.ts.

export const schema = { type: "object", properties: {}, additionalProperties: true } as const;

/** A native tool "test.tool" with an open object schema, from a call and any hooks. */
export function nativeTool(call: Tool["call"], extra: Partial<Tool> = {}): Tool {
  return {
    descriptor: () => ({ name: "test.tool", description: "test", inputSchema: schema, version: "1" }),
    call,
    ...extra,
  };
}
