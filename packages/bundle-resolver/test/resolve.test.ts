import { ToolRegistry } from "@openworker/registry";
import { codeTool, type OpenWorkerError } from "@openworker/tools-sdk";
import { compiledSchemaCount } from "@openworker/tools-sdk/internal/validation";
import { describe, expect, it } from "vitest";
import { checkSelection, providersNeeded, resolveSelection, type BundleSelection } from "../src/index.js";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { catalog, catalogTool, registryWith, thrown } from "./helpers.js";

// A full collection on demand, for the test that checks what the caches let go.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

const v3 = (...tools: string[]): BundleSelection => ({ version: 3, tools });

describe("resolveSelection: v3", () => {
  const registry = registryWith(["example.web_search", "example.shout", "other.tool"], ["acer"]);
  const catalogs = [catalog("acer", ["acer_care_center_batterystatus_get", "acer_fan_set", "acer.dotted.name"])];

  it("B4 resolves a native name to the exact registered descriptor and an MCP name to its provider and remote name", () => {
    const resolved = resolveSelection(registry, v3("example.web_search", "acer.acer_care_center_batterystatus_get"), catalogs);
    const [native, mcp] = resolved.tools;
    expect(native).toMatchObject({ kind: "native", qualifiedName: "example.web_search", alias: "example__web_search" });
    expect(native?.descriptor).toBe(registry.get("example.web_search")?.descriptor);
    expect(native?.kind === "native" && native.tool).toBe(registry.get("example.web_search")?.tool);
    expect(mcp).toMatchObject({
      kind: "mcp",
      qualifiedName: "acer.acer_care_center_batterystatus_get",
      alias: "acer__acer_care_center_batterystatus_get",
      remoteName: "acer_care_center_batterystatus_get",
    });
    expect(mcp?.kind === "mcp" && mcp.provider).toBe(registry.provider("acer"));
  });

  it("B4 splits an MCP name at the first dot only", () => {
    const resolved = resolveSelection(registry, v3("acer.acer.dotted.name"), catalogs);
    expect(resolved.byName("acer.acer.dotted.name")).toMatchObject({ remoteName: "acer.dotted.name", alias: "acer__acer__dotted__name" });
  });

  it("B4 builds an MCP descriptor from the catalog entry, versioned by its fingerprint", () => {
    const [tool] = resolveSelection(registry, v3("acer.acer_fan_set"), catalogs).tools;
    const entry = catalogs[0]!.tools[1]!;
    expect(tool?.descriptor).toEqual({ name: "acer.acer_fan_set", description: entry.description, inputSchema: entry.inputSchema, version: entry.fingerprint });
    expect(tool?.kind === "mcp" && tool.catalogFingerprint).toBe(entry.fingerprint);
    expect(Object.isFrozen(tool?.descriptor.inputSchema)).toBe(true);
  });

  it("B2 returns exactly the selection, in bundle order, and nothing unselected", () => {
    const resolved = resolveSelection(registry, v3("acer.acer_fan_set", "example.shout"), catalogs);
    expect(resolved.tools.map((tool) => tool.qualifiedName)).toEqual(["acer.acer_fan_set", "example.shout"]);
    expect(resolved.byName("example.web_search")).toBeUndefined();
    expect(resolved.byAlias("acer__acer_care_center_batterystatus_get")).toBeUndefined();
    expect(resolved.byAlias("example__shout")?.qualifiedName).toBe("example.shout");
    expect(resolveSelection(registry, v3(), catalogs).tools).toEqual([]);
  });

  it("E5 gives each tool a compiled validator of its schema", () => {
    const resolved = resolveSelection(registry, v3("example.shout", "acer.acer_fan_set"), catalogs);
    for (const tool of resolved.tools) {
      expect(tool.validator.check({ text: "hi" })).toEqual({ ok: true });
      expect(tool.validator.check({ text: 1 }).ok).toBe(false);
      expect(tool.schemaFingerprint).toBe(tool.validator.fingerprint);
    }
  });

  it.each([
    ["example.Shout", "TOOL_NOT_REGISTERED", 'namespace "example" has: example.shout, example.web_search'],
    ["example.search", "TOOL_NOT_REGISTERED", "is not registered"],
    ["acer.acer_battery", "TOOL_NOT_PUBLISHED", 'is not published by MCP provider "acer" (published: acer_care_center_batterystatus_get'],
    ["acer.ACER_FAN_SET", "TOOL_NOT_PUBLISHED", "exact and case-sensitive"],
    ["web.web_search", "NAMESPACE_UNKNOWN", 'namespace "web" (registered namespaces: acer, example, other)'],
    ["Example.shout", "NAMESPACE_UNKNOWN", '"Example"'],
    ["example", "NAME_NOT_QUALIFIED", 'tools.json: field "tools[0]"'],
  ])("N7 %s fails with %s and no fallback search", (name, code, fragment) => {
    const error = thrown(() => resolveSelection(registry, v3(name), catalogs));
    expect(error.code).toBe(code);
    expect(error.message).toContain(fragment);
  });

  it("N8 refuses an unfrozen registry", () => {
    const open = registryWith(["example.a"], [], { frozen: false });
    expect(thrown(() => resolveSelection(open, v3("example.a"), [])).code).toBe("REGISTRY_NOT_FROZEN");
  });

  it("M2 needs the catalog of every selected MCP provider", () => {
    const error = thrown(() => resolveSelection(registry, v3("acer.acer_fan_set"), []));
    expect(error.code).toBe("CATALOG_MISSING");
    expect(error.message).toContain('"acer"');
  });

  it.each([
    [[catalog("acer", ["a"]), catalog("acer", ["b"])], "two catalogs"],
    [[{ namespace: "acer", tools: [catalogTool("a"), catalogTool("a")] }], "published twice"],
    [[{ namespace: "acer", tools: [{ name: "a", inputSchema: { type: "object" } }] }], "has no fingerprint"],
    [[{ namespace: "acer", tools: [{ name: "a", inputSchema: "x", fingerprint: "f" }] }], "has no inputSchema"],
    [[{ namespace: "acer", tools: [{ inputSchema: {}, fingerprint: "f" }] }], "has no name"],
  ])("M2 refuses a malformed catalog input (%#: %s)", (catalogs, fragment) => {
    const error = thrown(() => resolveSelection(registry, v3("acer.a"), catalogs as never));
    expect(error.code).toBe("CATALOG_INVALID");
    expect(error.message).toContain(fragment);
  });

  it.each([
    [null],
    [{ version: 3 }],
    [{ version: 3, tools: "example.shout" }],
    [{ version: 2, mcpServers: { acer: "acer_fan_set" } }],
    [{ version: 2, mcpServers: ["acer"] }],
    [{ version: 1, mcpServers: "acer" }],
    [{ version: 4, tools: [] }],
  ])("B6 refuses the hand-built selection %j without crashing", (selection) => {
    expect(thrown(() => resolveSelection(registry, selection as never, catalogs)).code).toBe("TOOLS_JSON_INVALID");
  });

  it("N6 refuses the same name selected twice in a hand-built selection", () => {
    const error = thrown(() => resolveSelection(registry, v3("example.shout", "example.shout"), catalogs));
    expect(error.code).toBe("SELECTION_DUPLICATE");
  });
});

describe("resolveSelection: alias collisions (N6)", () => {
  it("N6 rejects a derived-alias collision between a native and an MCP tool and names both", () => {
    const registry = registryWith(["a.b__c"], ["a__b"]);
    const error = thrown(() => resolveSelection(registry, v3("a.b__c", "a__b.c"), [catalog("a__b", ["c"])]));
    expect(error.code).toBe("ALIAS_COLLISION");
    expect(error.message).toContain('"a.b__c"');
    expect(error.message).toContain('"a__b.c"');
    expect(error.message).toContain('"a__b__c"');
  });

  it("N6 rejects two remote tools of one server whose aliases collide, also in v1", () => {
    const registry = registryWith([], ["x"]);
    const catalogs = [catalog("x", ["y.z", "y__z"])];
    expect(thrown(() => resolveSelection(registry, v3("x.y.z", "x.y__z"), catalogs)).code).toBe("ALIAS_COLLISION");
    expect(thrown(() => resolveSelection(registry, { version: 1, mcpServers: ["x"] }, catalogs)).code).toBe("ALIAS_COLLISION");
    expect(resolveSelection(registry, v3("x.y.z"), catalogs).tools).toHaveLength(1);
  });
});

describe("resolveSelection: v2 and v1 (B3)", () => {
  const registry = registryWith(["example.shout"], ["acer", "zeta"]);
  const catalogs = [catalog("zeta", ["z2", "z1"]), catalog("acer", ["acer_care_center_batterystatus_get", "acer_fan_set"])];

  it("B3 v2 selects the listed remote tools of each server", () => {
    const resolved = resolveSelection(registry, { version: 2, mcpServers: { acer: ["acer_fan_set"], zeta: ["z1"] } }, catalogs);
    expect(resolved.tools.map((tool) => tool.qualifiedName)).toEqual(["acer.acer_fan_set", "zeta.z1"]);
  });

  it("B3 v1 selects every published tool in provider order, then catalog order", () => {
    const resolved = resolveSelection(registry, { version: 1, mcpServers: ["zeta", "acer"] }, catalogs);
    expect(resolved.tools.map((tool) => tool.qualifiedName)).toEqual(["zeta.z2", "zeta.z1", "acer.acer_care_center_batterystatus_get", "acer.acer_fan_set"]);
  });

  it.each([["a/b"], ["with space"], ["ünïcode"]])("N1 v1 fails on an unselectable remote name %j and names it, never skipping or renaming", (remote) => {
    const error = thrown(() => resolveSelection(registry, { version: 1, mcpServers: ["acer"] }, [catalog("acer", ["acer_fan_set", remote]), catalogs[0]!]));
    expect(error.code).toBe("MCP_TOOL_NAME_INVALID");
    expect(error.message).toContain(JSON.stringify(remote));
  });

  it("N4 v1 fails on a remote name whose qualified name is too long", () => {
    const error = thrown(() => resolveSelection(registry, { version: 1, mcpServers: ["acer"] }, [catalog("acer", ["x".repeat(80)])]));
    expect(error.code).toBe("MCP_TOOL_NAME_INVALID");
  });

  it.each([
    [{ version: 2, mcpServers: { example: ["shout"] } }, "SELECTION_NOT_MCP"],
    [{ version: 1, mcpServers: ["example"] }, "SELECTION_NOT_MCP"],
    [{ version: 2, mcpServers: { nobody: ["x"] } }, "NAMESPACE_UNKNOWN"],
    [{ version: 1, mcpServers: ["nobody"] }, "NAMESPACE_UNKNOWN"],
    [{ version: 2, mcpServers: { acer: ["missing"] } }, "TOOL_NOT_PUBLISHED"],
    [{ version: 1, mcpServers: ["openworker"] }, "NAMESPACE_RESERVED"],
  ])("B3/N7 %j fails with %s", (selection, code) => {
    expect(thrown(() => resolveSelection(registry, selection as BundleSelection, catalogs)).code).toBe(code);
  });
});

describe("resolveSelection: schemas (B5)", () => {
  it("B5 an invalid native schema fails resolution and names the tool", () => {
    const registry = registryWith(["example.broken", "example.fine"], [], {
      schemas: { "example.broken": { type: "object", properties: { a: { type: "no-such-type" } } } },
    });
    const error = thrown(() => resolveSelection(registry, v3("example.fine", "example.broken"), []));
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain('"example.broken"');
    expect(resolveSelection(registry, v3("example.fine"), []).tools).toHaveLength(1);
  });

  it("B5 an unknown format in a native schema (the partner's own) fails resolution naming the tool; in an MCP schema it is tolerated", () => {
    const schema = { type: "object", properties: { phone: { type: "string", format: "phone" } } };
    const registry = registryWith(["example.call"], ["acer"], { schemas: { "example.call": schema } });
    const error = thrown(() => resolveSelection(registry, v3("example.call"), []));
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain('"example.call"');
    expect(error.message).toContain('"phone"');
    const catalogs = [{ namespace: "acer", tools: [catalogTool("dial", schema)] }];
    expect(resolveSelection(registry, v3("acer.dial"), catalogs).tools).toHaveLength(1);
  });

  it.each([
    [{ type: "object", properties: { a: { minimum: "ten" } } }],
    [{ type: "string" }],
    [{ $schema: "http://example.com/unknown-dialect", type: "object" }],
  ])("B5 an invalid MCP schema %j fails resolution and names the tool", (schema) => {
    const registry = registryWith([], ["acer"]);
    const error = thrown(() => resolveSelection(registry, v3("acer.bad"), [{ namespace: "acer", tools: [catalogTool("bad", schema)] }]));
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain('"acer.bad"');
  });

  it("B5 compiles a schema once per process, however many tools and resolutions share it", () => {
    const schema = { type: "object", properties: { [`unique_${Date.now()}_${Math.random()}`]: { type: "string", format: "date" } } };
    const registry = registryWith(["s.one", "s.two"], ["m"], { schemas: { "s.one": schema, "s.two": schema } });
    const catalogs = [{ namespace: "m", tools: [catalogTool("three", schema)] }];
    const before = compiledSchemaCount();
    const first = resolveSelection(registry, v3("s.one", "s.two", "m.three"), catalogs);
    resolveSelection(registry, v3("m.three", "s.one"), [{ namespace: "m", tools: [catalogTool("three", schema)] }]);
    expect(compiledSchemaCount() - before).toBe(1);
    expect(first.tools[0]?.validator).toBe(first.tools[2]?.validator);
    expect(first.tools[0]?.validator.check({ [Object.keys(schema.properties)[0]!]: "not a date" }).ok).toBe(false);
  });
});

describe("selection fingerprint (A2)", () => {
  const catalogs = [catalog("acer", ["a", "b"])];
  const fingerprintOf = (registry: ToolRegistry, selection: BundleSelection, given = catalogs) => resolveSelection(registry, selection, given).fingerprint;

  it("A2 is deterministic and identical for equal inputs in separate registries", () => {
    const one = fingerprintOf(registryWith(["example.x"], ["acer"]), v3("example.x", "acer.a"));
    const two = fingerprintOf(registryWith(["example.x"], ["acer"]), v3("example.x", "acer.a"), [catalog("acer", ["a", "b"])]);
    expect(one).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(two).toBe(one);
  });

  it("A2 changes with the selection, its order, a native version, a schema, a catalog entry or the provider", () => {
    const base = fingerprintOf(registryWith(["example.x"], ["acer"]), v3("example.x", "acer.a"));
    const changed = new Set([
      base,
      fingerprintOf(registryWith(["example.x"], ["acer"]), v3("acer.a", "example.x")),
      fingerprintOf(registryWith(["example.x"], ["acer"]), v3("example.x")),
      fingerprintOf(registryWith(["example.x"], ["acer"]), v3("example.x", "acer.a"), [{ namespace: "acer", tools: [catalogTool("a", { type: "object" })] }]),
      fingerprintOf(registryWith(["example.x"], ["acer"], { schemas: { "example.x": { type: "object" } } }), v3("example.x", "acer.a")),
      fingerprintOf(
        (() => {
          const registry = new ToolRegistry();
          registry.register(
            codeTool("example.x", "The example.x tool.", { type: "object", properties: { text: { type: "string" } } }, () => ({ ok: 1 }), { version: "2.0.0" }),
          );
          registry.registerMcp({ namespace: "acer", program: "/opt/acer/mcp" });
          registry.freeze();
          return registry;
        })(),
        v3("example.x", "acer.a"),
      ),
      fingerprintOf(
        (() => {
          const registry = registryWith(["example.x"], [], { frozen: false });
          registry.registerMcp({ namespace: "acer", program: "/opt/acer/other-mcp" });
          registry.freeze();
          return registry;
        })(),
        v3("example.x", "acer.a"),
      ),
    ]);
    expect(changed.size).toBe(7);
  });

  it("E6 ignores provider env values (they may be credentials)", () => {
    const withEnv = (value: string) => {
      const registry = registryWith(["example.x"], [], { frozen: false });
      registry.registerMcp({ namespace: "acer", program: "/opt/acer/mcp", env: { TOKEN: value } });
      registry.freeze();
      return registry;
    };
    expect(fingerprintOf(withEnv("one"), v3("acer.a"))).toBe(fingerprintOf(withEnv("two"), v3("acer.a")));
  });
});

describe("checkSelection and providersNeeded", () => {
  const registry = registryWith(["example.shout"], ["acer", "beta"]);

  it("B6 checkSelection lists every problem with the codes resolution uses", () => {
    const problems = checkSelection(registry, v3("example.nope", "acer.nope", "acer.fan", "gone.x", "beta.y"), [catalog("acer", ["fan"])]);
    expect(problems.map((problem: OpenWorkerError) => problem.code)).toEqual([
      "TOOL_NOT_REGISTERED",
      "TOOL_NOT_PUBLISHED",
      "NAMESPACE_UNKNOWN",
      "CATALOG_MISSING",
    ]);
    expect(checkSelection(registry, v3("example.shout", "acer.fan"), [catalog("acer", ["fan"])])).toEqual([]);
  });

  it("N8 checkSelection reports an unfrozen registry and still checks the rest", () => {
    const open = registryWith(["example.a"], [], { frozen: false });
    expect(checkSelection(open, v3("example.a", "example.b"), []).map((problem) => problem.code)).toEqual(["REGISTRY_NOT_FROZEN", "TOOL_NOT_REGISTERED"]);
  });

  it("M2 providersNeeded lists the MCP namespaces a selection needs, sorted", () => {
    expect(providersNeeded(registry, v3("example.shout", "beta.y", "acer.x", "acer.z", "gone.q"))).toEqual(["acer", "beta"]);
    expect(providersNeeded(registry, { version: 2, mcpServers: { beta: ["x"], example: ["y"] } })).toEqual(["beta"]);
    expect(providersNeeded(registry, { version: 1, mcpServers: ["beta", "acer", "nobody"] })).toEqual(["acer", "beta"]);
    expect(providersNeeded(registry, v3("example.shout"))).toEqual([]);
  });
});

describe("resolution caches (warm turns)", () => {
  const registry = registryWith(["example.x"], ["acer"]);
  const selection = v3("example.x", "acer.a");

  it("A2 gives the same result for the same inputs and for rediscovered equal catalogs", () => {
    const first = resolveSelection(registry, selection, [catalog("acer", ["a", "b"])]);
    const again = resolveSelection(registry, selection, [catalog("acer", ["a", "b"])]);
    expect(again.fingerprint).toBe(first.fingerprint);
    expect(again.tools[1]).toBe(first.tools[1]);
    expect(resolveSelection(registry, v3("example.x", "acer.a"), [catalog("acer", ["a"])]).fingerprint).toBe(first.fingerprint);
  });

  it("M3 a changed catalog entry is never served from the cache, even under a reused fingerprint", () => {
    const first = resolveSelection(registry, selection, [catalog("acer", ["a"])]);
    const changed = catalogTool("a", { type: "object", properties: { text: { type: "number" } } });
    const renewed = resolveSelection(registry, selection, [{ namespace: "acer", tools: [changed] }]);
    expect(renewed.fingerprint).not.toBe(first.fingerprint);
    const lying = { ...changed, fingerprint: catalogTool("a").fingerprint };
    const resolved = resolveSelection(registry, selection, [{ namespace: "acer", tools: [lying] }]);
    expect(resolved.byName("acer.a")?.descriptor.inputSchema).toEqual(changed.inputSchema);
    expect(resolved.byName("acer.a")?.validator.check({ text: 1 })).toEqual({ ok: true });
    const described = { ...catalogTool("a"), description: "Now does something else." };
    expect(resolveSelection(registry, selection, [{ namespace: "acer", tools: [described] }]).byName("acer.a")?.descriptor.description).toBe(
      "Now does something else.",
    );
  });

  it("M3 a provider whose tool changes at every listing keeps one resolution of it, not one per version", async () => {
    // A version that is neither the latest nor held by the caller must be collectable.
    const versions: WeakRef<object>[] = [];
    for (let version = 0; version < 5; version += 1) {
      const changed = catalogTool("a", { type: "object", properties: { [`field${version}`]: { type: "string" } } });
      const resolved = resolveSelection(registry, selection, [{ namespace: "acer", tools: [changed] }]).byName("acer.a");
      versions.push(new WeakRef(resolved!));
    }
    // The selection cache keeps the latest result; another selection replaces it.
    resolveSelection(registry, v3("example.x"), []);
    await new Promise((resolve) => setTimeout(resolve, 0));
    collectGarbage();
    expect(versions.slice(0, 4).filter((version) => version.deref() !== undefined)).toHaveLength(0);
  });

  it("N7 a cached selection still fails when a later catalog no longer publishes a tool", () => {
    resolveSelection(registry, selection, [catalog("acer", ["a"])]);
    expect(thrown(() => resolveSelection(registry, selection, [catalog("acer", ["b"])])).code).toBe("TOOL_NOT_PUBLISHED");
  });
});
