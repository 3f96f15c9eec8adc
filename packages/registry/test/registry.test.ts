import { LIMITS, type Tool } from "@openworker/tools-sdk";
import { describe, expect, it } from "vitest";
import { ToolRegistry } from "../src/index.js";
import { nativeTool, OBJECT_SCHEMA, thrown } from "./helpers.js";

describe("ToolRegistry: native tools", () => {
  it("T1 calls descriptor() once and keeps a frozen snapshot the tool cannot change later", () => {
    let calls = 0;
    const schema = { type: "object", properties: { text: { type: "string" } } } as Record<string, unknown>;
    const tool: Tool = {
      descriptor: () => {
        calls++;
        return { name: "example.shout", description: "Shout.", inputSchema: schema, version: "1" };
      },
      call: async () => ({ json: null }),
    };
    const registry = new ToolRegistry();
    registry.register(tool);
    schema.type = "string";
    const entry = registry.get("example.shout");
    expect(calls).toBe(1);
    expect(entry?.descriptor.inputSchema.type).toBe("object");
    expect(Object.isFrozen(entry?.descriptor.inputSchema)).toBe(true);
    expect(entry?.alias).toBe("example__shout");
    expect(entry?.tool).toBe(tool);
    expect(entry?.placement).toBe("host");
  });

  it("agentd parity: count, exact lookup, sorted listing, unregister before freeze", () => {
    const registry = new ToolRegistry();
    expect(registry.count()).toBe(0);
    registry.register(nativeTool("example.zeta"));
    registry.register(nativeTool("example.alpha"));
    registry.register(nativeTool("Example.alpha"));
    expect(registry.count()).toBe(3);
    expect(registry.natives().map((tool) => tool.name)).toEqual(["Example.alpha", "example.alpha", "example.zeta"]);
    expect(registry.nativeNames("example")).toEqual(["example.alpha", "example.zeta"]);
    expect(registry.unregister("example.zeta")).toBe(true);
    expect(registry.unregister("example.zeta")).toBe(false);
    expect(registry.count()).toBe(2);
    expect(registry.get("example.zeta")).toBeUndefined();
  });

  it("N1 lookup is exact and case-sensitive", () => {
    const registry = new ToolRegistry();
    registry.register(nativeTool("example.Shout"));
    expect(registry.get("example.Shout")).toBeDefined();
    expect(registry.get("example.shout")).toBeUndefined();
    expect(registry.get("example__Shout")).toBeUndefined();
  });

  it.each([
    ["example.web search", "NAME_INVALID_CHARACTER"],
    ["example/web", "NAME_INVALID_CHARACTER"],
    ["web_search", "NAME_NOT_QUALIFIED"],
    ["", "NAME_EMPTY"],
    ["openworker.shell", "NAMESPACE_RESERVED"],
    ["OpenWorker.shell", "NAMESPACE_RESERVED"],
    [`n.${"x".repeat(79)}`, "NAME_TOO_LONG"],
    [`n.${"a.".repeat(38)}b`, "ALIAS_TOO_LONG"],
  ])("N1/N3/N4 register refuses %j with %s", (name, code) => {
    const error = thrown(() => new ToolRegistry().register(nativeTool(name)));
    expect(error.code).toBe(code);
  });

  it("N4 accepts a name whose alias is exactly 80 bytes", () => {
    const registry = new ToolRegistry();
    const name = `n.${"x".repeat(LIMITS.nameBytes - 3)}`;
    registry.register(nativeTool(name));
    expect(registry.get(name)?.alias.length).toBe(LIMITS.nameBytes);
    expect(registry.get(name)).toBeDefined();
  });

  it("T1 refuses a descriptor with a missing version", () => {
    const tool: Tool = {
      descriptor: () => ({ name: "example.x", description: "x", inputSchema: OBJECT_SCHEMA }) as never,
      call: async () => ({ json: null }),
    };
    expect(thrown(() => new ToolRegistry().register(tool)).code).toBe("DESCRIPTOR_INVALID");
  });

  it("T1 refuses something that is not a Tool", () => {
    expect(thrown(() => new ToolRegistry().register({ descriptor: () => ({}) } as never)).code).toBe("TOOL_INVALID");
    expect(thrown(() => new ToolRegistry().register(null as never)).code).toBe("TOOL_INVALID");
  });

  it("T1 reports a descriptor() that throws instead of crashing", () => {
    const tool: Tool = {
      descriptor: () => {
        throw new Error("boom");
      },
      call: async () => ({ json: null }),
    };
    const error = thrown(() => new ToolRegistry().register(tool));
    expect(error.code).toBe("DESCRIPTOR_FAILED");
    expect(error.message).toContain("boom");
  });

  it("T1 refuses a schema that is not JSON", () => {
    const tool: Tool = {
      descriptor: () => ({ name: "example.x", description: "x", inputSchema: { type: "object", n: 1n }, version: "1" }),
      call: async () => ({ json: null }),
    };
    expect(thrown(() => new ToolRegistry().register(tool)).code).toBe("DESCRIPTOR_INVALID");
  });

  it("N6 rejects a duplicate name and names both registrations", () => {
    const registry = new ToolRegistry();
    registry.register(nativeTool("example.shout", "1.0.0"));
    const error = thrown(() => registry.register(nativeTool("example.shout", "2.0.0")));
    expect(error.code).toBe("DUPLICATE_TOOL");
    expect(error.message).toContain('"1.0.0"');
    expect(error.message).toContain('"2.0.0"');
    expect(registry.get("example.shout")?.descriptor.version).toBe("1.0.0");
  });

  it.each([
    ["a.b__c", "a.b.c"],
    ["a.b.c", "a.b__c"],
    ["x.y__z__w", "x.y.z.w"],
  ])("N6 rejects a derived-alias collision (%s then %s) and names both tools", (first, second) => {
    const registry = new ToolRegistry();
    registry.register(nativeTool(first));
    const error = thrown(() => registry.register(nativeTool(second)));
    expect(error.code).toBe("ALIAS_COLLISION");
    expect(error.message).toContain(JSON.stringify(first));
    expect(error.message).toContain(JSON.stringify(second));
    expect(registry.count()).toBe(1);
  });

  it("N6 frees the alias again after unregister", () => {
    const registry = new ToolRegistry();
    registry.register(nativeTool("a.b__c"));
    registry.unregister("a.b__c");
    registry.register(nativeTool("a.b.c"));
    expect(registry.get("a.b.c")).toBeDefined();
  });

  it("N5 refuses a native tool in an MCP provider's namespace and names both", () => {
    const registry = new ToolRegistry();
    registry.registerMcp({ namespace: "acer", program: "bin/acer-mcp-launcher" });
    const error = thrown(() => registry.register(nativeTool("acer.battery")));
    expect(error.code).toBe("NAMESPACE_CONFLICT");
    expect(error.message).toContain('"acer.battery"');
    expect(error.message).toContain("bin/acer-mcp-launcher");
  });

  it("N5 refuses an MCP provider on a native namespace and names both", () => {
    const registry = new ToolRegistry();
    registry.register(nativeTool("acer.battery"));
    const error = thrown(() => registry.registerMcp({ namespace: "acer", program: "bin/acer-mcp-launcher" }));
    expect(error.code).toBe("NAMESPACE_CONFLICT");
    expect(error.message).toContain('"acer.battery"');
    expect(error.message).toContain("bin/acer-mcp-launcher");
    expect(registry.namespaceOwner("acer")).toBe("native");
  });

  it("N5 frees a native namespace when its last tool is unregistered", () => {
    const registry = new ToolRegistry();
    registry.register(nativeTool("acer.battery"));
    registry.unregister("acer.battery");
    registry.registerMcp({ namespace: "acer", program: "acer" });
    expect(registry.namespaceOwner("acer")).toBe("mcp");
  });

  it("A4 refuses sandbox placement for a native tool, asked in options or in the descriptor", () => {
    const registry = new ToolRegistry();
    // Typed "host" only; from JavaScript (or through a cast) "sandbox" still reaches the check.
    expect(thrown(() => registry.register(nativeTool("example.a"), { placement: "sandbox" } as never)).code).toBe("NATIVE_SANDBOX_PLACEMENT");
    const sandboxed: Tool = {
      descriptor: () => ({ ...nativeTool("example.b").descriptor(), placement: "sandbox" }) as never,
      call: async () => ({ json: null }),
    };
    expect(thrown(() => registry.register(sandboxed)).code).toBe("NATIVE_SANDBOX_PLACEMENT");
    expect(thrown(() => registry.register(nativeTool("example.c"), { placement: "moon" as never })).code).toBe("PLACEMENT_INVALID");
    expect(registry.count()).toBe(0);
  });

  it("A4 classification changes nothing about placement", () => {
    const registry = new ToolRegistry();
    registry.register(nativeTool("example.a"), { classification: "sandboxed", placement: "host" });
    expect(registry.get("example.a")).toMatchObject({ placement: "host", classification: "sandboxed" });
    expect(thrown(() => registry.register(nativeTool("example.b"), { classification: "" })).code).toBe("CLASSIFICATION_INVALID");
  });

  it("N8 refuses every registration and unregister after freeze", async () => {
    const registry = new ToolRegistry();
    registry.register(nativeTool("example.a"));
    registry.freeze();
    registry.freeze();
    expect(registry.frozen).toBe(true);
    const attempts: (() => unknown)[] = [
      () => registry.register(nativeTool("example.b")),
      () => registry.registerAll([nativeTool("example.c")]),
      () => registry.registerMcp({ namespace: "acer", program: "acer" }),
      () => registry.registerMcpHttp({ namespace: "local", url: "http://127.0.0.1:1/mcp" }),
      () => registry.registerProvider({ transport: "stdio", namespace: "p", program: "p", args: [] }),
      () => registry.unregister("example.a"),
    ];
    for (const attempt of attempts) expect(thrown(attempt).code).toBe("REGISTRY_FROZEN");
    await expect(registry.loadServersFile("/nonexistent/servers.json")).rejects.toMatchObject({
      code: "REGISTRY_FROZEN",
    });
    expect(registry.count()).toBe(1);
    expect(registry.providers()).toEqual([]);
  });

  it("registerAll registers all tools or none", () => {
    const registry = new ToolRegistry();
    registry.register(nativeTool("example.a"));
    const error = thrown(() => registry.registerAll([nativeTool("example.b"), nativeTool("example.c"), nativeTool("example.a")]));
    expect(error.code).toBe("DUPLICATE_TOOL");
    expect(registry.count()).toBe(1);
    const collision = thrown(() => registry.registerAll([nativeTool("x.b__c"), nativeTool("x.b.c")]));
    expect(collision.code).toBe("ALIAS_COLLISION");
    expect(registry.count()).toBe(1);
    registry.registerAll([nativeTool("example.b"), nativeTool("example.c")]);
    expect(registry.natives().map((tool) => tool.name)).toEqual(["example.a", "example.b", "example.c"]);
  });
});
