import type { Tool, ToolDescriptor } from "@openworker/tools-sdk";
import { describe, expect, it } from "vitest";
import { ToolRegistry } from "../src/index.js";
import { nativeTool, thrown } from "./helpers.js";

const call = async () => ({ json: null });

/** A descriptor whose `field` is a getter answering `first` on the first read and `later` on every other. */
function flipping(field: string, first: unknown, later: unknown): { tool: Tool; reads: () => number } {
  let reads = 0;
  const descriptor: Record<string, unknown> = { name: "ok.flip", description: "Flips.", inputSchema: { type: "object" }, version: "1" };
  Object.defineProperty(descriptor, field, { enumerable: true, get: () => (reads++ === 0 ? first : later) });
  return { tool: { descriptor: () => descriptor as unknown as ToolDescriptor, call }, reads: () => reads };
}

function withSchema(inputSchema: unknown, name = "example.hostile"): Tool {
  return { descriptor: () => ({ name, description: "Hostile.", inputSchema, version: "1" }) as ToolDescriptor, call };
}

class Money {
  constructor(readonly amount: number) {}
}

describe("ToolRegistry: the descriptor is read once, and what is checked is what is stored", () => {
  it.each([
    ["name", "ok.flip", "openworker.shell", (registry: ToolRegistry) => registry.get("ok.flip")?.name],
    ["name", "ok.flip", `bad name with spaces.${"x".repeat(100)}`, (registry: ToolRegistry) => registry.natives()[0]?.name],
    ["inputSchema", { type: "object" }, { type: "array" }, (registry: ToolRegistry) => registry.get("ok.flip")?.descriptor.inputSchema],
    ["version", "1", "", (registry: ToolRegistry) => registry.get("ok.flip")?.descriptor.version],
    ["description", "Flips.", 42, (registry: ToolRegistry) => registry.get("ok.flip")?.descriptor.description],
    ["placement", "host", "sandbox", (registry: ToolRegistry) => registry.get("ok.flip")?.placement],
  ])("N1/N3/N4 T1 a %s getter is read once: the checked value %j is stored, never the later %j", (field, first, later, stored) => {
    const { tool, reads } = flipping(field, first, later);
    const registry = new ToolRegistry();
    registry.register(tool);
    expect(reads()).toBe(1);
    expect(stored(registry)).toEqual(field === "placement" ? "host" : first);
    expect(registry.namespaceOwner("openworker")).toBeUndefined();
    expect(registry.natives().map((entry) => entry.name)).toEqual(["ok.flip"]);
  });

  it("N3 a name getter answering a reserved name first is refused, whatever it would answer later", () => {
    const { tool } = flipping("name", "openworker.shell", "ok.flip");
    const registry = new ToolRegistry();
    expect(thrown(() => registry.register(tool)).code).toBe("NAMESPACE_RESERVED");
    expect(registry.count()).toBe(0);
  });

  it("T1 a schema getter deep inside is read once too", () => {
    let reads = 0;
    const properties = {};
    Object.defineProperty(properties, "text", { enumerable: true, get: () => (reads++ === 0 ? { type: "string" } : { type: "number" }) });
    const registry = new ToolRegistry();
    registry.register(withSchema({ type: "object", properties }));
    expect(reads).toBe(1);
    expect(registry.get("example.hostile")?.descriptor.inputSchema).toEqual({ type: "object", properties: { text: { type: "string" } } });
  });

  it("T1 a schema with toJSON is refused with DESCRIPTOR_INVALID naming the tool and field, not stored as what toJSON says", () => {
    const schema = { type: "object", toJSON: () => ({ type: "string" }) };
    const error = thrown(() => new ToolRegistry().register(withSchema(schema, "a.b")));
    expect(error.code).toBe("DESCRIPTOR_INVALID");
    expect(error.message).toContain('tool "a.b"');
    expect(error.message).toContain('field "inputSchema" has a toJSON method');
    expect(error.details).toMatchObject({ name: "a.b", field: "inputSchema" });
  });

  it.each([
    ["a Date (toJSON)", { type: "object", properties: { at: { default: new Date(0) } } }, "inputSchema.properties.at.default", "toJSON"],
    ["a class instance", { type: "object", default: new Money(1) }, "inputSchema.default", "a Money"],
    ["a Map", { type: "object", properties: new Map() }, "inputSchema.properties", "a Map"],
    ["a function", { type: "object", default: () => 1 }, "inputSchema.default", "a function"],
    ["NaN", { type: "object", minProperties: Number.NaN }, "inputSchema.minProperties", "NaN"],
    ["Infinity", { type: "object", maxProperties: Number.POSITIVE_INFINITY }, "inputSchema.maxProperties", "Infinity"],
    ["a bigint", { type: "object", maxProperties: 10n }, "inputSchema.maxProperties", "a bigint"],
    ["a symbol value", { type: "object", title: Symbol("t") }, "inputSchema.title", "a symbol"],
    ["an undefined array item", { type: "object", required: ["a", undefined] }, "inputSchema.required[1]", "undefined"],
    ["a hole in an array", { type: "object", required: ["a", , "b"] }, "inputSchema.required[1]", "undefined"], // eslint-disable-line no-sparse-arrays
  ])("T1 a schema holding %s is refused with DESCRIPTOR_INVALID naming the field", (_, schema, field, words) => {
    const error = thrown(() => new ToolRegistry().register(withSchema(schema)));
    expect(error.code).toBe("DESCRIPTOR_INVALID");
    expect(error.message).toContain('tool "example.hostile"');
    expect(error.message).toContain(`field ${JSON.stringify(field)}`);
    expect(error.message).toContain(words);
    expect(error.details).toMatchObject({ name: "example.hostile", field });
  });

  it("T1 a circular schema, one nested too deep and one that reuses an object at every level fail DESCRIPTOR_INVALID", () => {
    const circular: Record<string, unknown> = { type: "object" };
    circular.items = { anyOf: [circular] };
    expect(thrown(() => new ToolRegistry().register(withSchema(circular))).message).toContain('field "inputSchema.items.anyOf[0]" is circular');
    let deep: Record<string, unknown> = { type: "string" };
    for (let depth = 0; depth < 300; depth++) deep = { not: deep };
    const tooDeep = thrown(() => new ToolRegistry().register(withSchema({ type: "object", properties: { x: deep } })));
    expect(tooDeep.code).toBe("DESCRIPTOR_INVALID");
    expect(tooDeep.message).toContain("nests deeper than 256 levels");
    // 2^40 paths through 40 shared objects: JSON would try to write them all.
    let shared: Record<string, unknown> = { type: "string" };
    for (let depth = 0; depth < 40; depth++) shared = { anyOf: [shared, shared] };
    const huge = thrown(() => new ToolRegistry().register(withSchema({ type: "object", properties: { x: shared } })));
    expect(huge.code).toBe("DESCRIPTOR_INVALID");
    expect(huge.message).toContain("more than 1000000 values");
  });

  it("T1 a descriptor that is a throwing Proxy fails DESCRIPTOR_FAILED, not with its raw error", () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("proxy get");
        },
      },
    );
    const error = thrown(() => new ToolRegistry().register({ descriptor: () => hostile as ToolDescriptor, call }));
    expect(error.code).toBe("DESCRIPTOR_FAILED");
    expect(error.message).toContain('field "name"');
    expect(error.message).toContain("proxy get");
    expect((error.cause as Error).message).toBe("proxy get");
  });

  it.each([
    [
      "a throwing getter",
      (() => {
        const properties = {};
        Object.defineProperty(properties, "text", {
          enumerable: true,
          get: () => {
            throw new TypeError("getter says no");
          },
        });
        return { type: "object", properties };
      })(),
      "inputSchema.properties.text",
    ],
    [
      "a Proxy whose ownKeys trap throws",
      {
        type: "object",
        properties: new Proxy(
          {},
          {
            ownKeys() {
              throw new TypeError("ownKeys says no");
            },
          },
        ),
      },
      "inputSchema.properties",
    ],
    [
      "a Proxy whose getPrototypeOf trap throws",
      new Proxy(
        { type: "object" },
        {
          getPrototypeOf() {
            throw new TypeError("prototype says no");
          },
        },
      ),
      "inputSchema",
    ],
    [
      "a revoked Proxy",
      (() => {
        const { proxy, revoke } = Proxy.revocable({ type: "object" }, {});
        revoke();
        return { type: "object", properties: { x: proxy } };
      })(),
      "inputSchema.properties.x",
    ],
  ])("N1 T1 a schema with %s fails DESCRIPTOR_FAILED naming the tool and field", (_, schema, field) => {
    const registry = new ToolRegistry();
    const error = thrown(() => registry.register(withSchema(schema)));
    expect(error.code).toBe("DESCRIPTOR_FAILED");
    expect(error.message).toContain('tool "example.hostile"');
    expect(error.message).toContain(`field ${JSON.stringify(field)}`);
    expect(error.details).toMatchObject({ name: "example.hostile", field });
    expect(registry.count()).toBe(0);
  });

  it("T1 registerAll with one hostile descriptor registers none of them", () => {
    const registry = new ToolRegistry();
    const hostile = withSchema(
      new Proxy(
        {},
        {
          ownKeys() {
            throw new Error("no keys");
          },
        },
      ),
    );
    expect(thrown(() => registry.registerAll([nativeTool("example.fine"), hostile])).code).toBe("DESCRIPTOR_FAILED");
    expect(registry.count()).toBe(0);
  });

  it("T1 a tool object whose methods cannot be read fails TOOL_INVALID", () => {
    const tool = new Proxy(
      {},
      {
        get() {
          throw new Error("no methods");
        },
      },
    ) as Tool;
    expect(thrown(() => new ToolRegistry().register(tool)).code).toBe("TOOL_INVALID");
  });

  it("T1 still takes ordinary schemas: null-prototype objects, a quiet Proxy, a __proto__ property, TypeBox-style symbol keys", () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { type: "string" });
    const quiet = new Proxy({ type: "integer" }, {});
    const parsed = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}') as Record<string, unknown>;
    const schema = {
      type: "object",
      properties: { bare, quiet, nested: parsed, skipped: undefined },
      [Symbol.for("TypeBox.Kind")]: "Object",
    };
    const registry = new ToolRegistry();
    registry.register(withSchema(schema));
    const stored = registry.get("example.hostile")!.descriptor.inputSchema as Record<string, Record<string, unknown>>;
    expect(JSON.stringify(stored)).toBe(
      '{"type":"object","properties":{"bare":{"type":"string"},"quiet":{"type":"integer"},"nested":{"type":"object","properties":{"__proto__":{"type":"string"}}}}}',
    );
    const nested = stored.properties!.nested as { properties: object };
    expect(Object.keys(nested.properties)).toEqual(["__proto__"]);
    expect(Object.getOwnPropertySymbols(stored)).toEqual([]);
    expect(stored.properties!.quiet).not.toBe(quiet);
    expect(Object.isFrozen(stored.properties!.quiet)).toBe(true);
  });
});
