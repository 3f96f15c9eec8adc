import type { Tool } from "../src/index.js";

// Shared by the hostile-value tests (hostile-values, hostile-images, hostile-progress).

export const schema = { type: "object", properties: {}, additionalProperties: true } as const;
export const options = { sessionId: "s", turnId: "t", callId: "c", workspace: "/tmp", toolName: "hostile.tool" };
export const png = () => new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]);

/** A native tool "hostile.tool" whose call is `call`, with any hooks. */
export function hostileTool(call: () => unknown, extra: Partial<Tool> = {}): Tool {
  return {
    descriptor: () => ({ name: "hostile.tool", description: "test", inputSchema: schema, version: "1" }),
    call: call as Tool["call"],
    ...extra,
  };
}

/** A Proxy whose every trap throws; `then` may be left readable, or the Promise a tool resolves with rejects first. */
export function throwingProxy(target: object = {}, { thenable = true } = {}): object {
  const trap = () => {
    throw new Error("trap");
  };
  const get = (_target: object, key: string | symbol) => {
    if (key === "then" && !thenable) return undefined;
    return trap();
  };
  return new Proxy(target, { get, has: trap, ownKeys: trap, getPrototypeOf: trap, getOwnPropertyDescriptor: trap });
}
