import { ToolRegistry } from "@openworker/registry";
import { codeTool, modelAlias, OpenWorkerError } from "@openworker/tools-sdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkSelection, resolveSelection, type McpCatalogInput } from "../src/index.js";
import { catalogTool, OBJECT_SCHEMA } from "./helpers.js";

// Names built from a tiny pool of segments joined by "." or "__" make alias collisions
// ("a.b__a" vs "a.b.a", "a.b__a" vs "a__b.a") frequent, alongside plain valid names.
// 24 pooled names in 8 alias classes ("a.b.a", "a.b__a", "a__b.a" all give "a__b__a").
const segment = fc.constantFrom("a", "b");
const separator = fc.constantFrom(".", "__");
const pooledName = fc
  .tuple(segment, separator, segment, separator, segment)
  .map((parts) => parts.join(""))
  .filter((name) => name.includes("."));
const freeName = fc
  .tuple(fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/), fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/))
  .filter(([ns]) => ns.toLowerCase() !== "openworker")
  .map(([ns, tool]) => `${ns}.${tool}`);
const qualifiedName = fc.oneof({ arbitrary: pooledName, weight: 3 }, { arbitrary: freeName, weight: 1 });
const ALIAS = /^[A-Za-z0-9_-]{1,80}$/;

interface World {
  readonly registry: ToolRegistry;
  readonly catalogs: McpCatalogInput[];
  readonly selected: string[];
}

/** Namespaces with "_" or starting with "b" are MCP providers, the others native; natives the registry refuses are not selected. */
function build(names: readonly string[]): World {
  const registry = new ToolRegistry();
  const remote = new Map<string, string[]>();
  const selected: string[] = [];
  for (const name of names) {
    const ns = name.slice(0, name.indexOf("."));
    if (ns.startsWith("b") || ns.includes("_")) {
      remote.set(ns, [...(remote.get(ns) ?? []), name.slice(ns.length + 1)]);
      selected.push(name);
      continue;
    }
    try {
      registry.register(codeTool(name, "t", OBJECT_SCHEMA, () => ({ ok: null })));
      selected.push(name);
    } catch (error) {
      // N6 at registration: the only refusal these names can meet.
      expect(OpenWorkerError.hasCode(error, "ALIAS_COLLISION")).toBe(true);
    }
  }
  for (const ns of remote.keys()) registry.registerMcp({ namespace: ns, program: `/opt/${ns}` });
  registry.freeze();
  const catalogs = [...remote].map(([ns, tools]) => ({ namespace: ns, tools: tools.map((tool) => catalogTool(tool)) }));
  return { registry, catalogs, selected };
}

describe("aliases (properties)", () => {
  it("N2 alias derivation is deterministic and every produced alias matches [A-Za-z0-9_-]{1,80}", () => {
    fc.assert(
      fc.property(fc.uniqueArray(qualifiedName, { maxLength: 10 }), (names) => {
        const { registry, catalogs, selected } = build(names);
        const collides = new Set(selected.map(modelAlias)).size !== selected.length;
        if (collides) return;
        const first = resolveSelection(registry, { version: 3, tools: selected }, catalogs);
        const again = resolveSelection(build(names).registry, { version: 3, tools: selected }, catalogs);
        expect(again.fingerprint).toBe(first.fingerprint);
        for (const tool of first.tools) {
          expect(tool.alias).toMatch(ALIAS);
          expect(tool.alias).toBe(modelAlias(tool.qualifiedName));
          expect(first.byAlias(tool.alias)).toBe(tool);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("N6 any two distinct selected names get distinct aliases, or the resolver refuses the selection", () => {
    let refused = 0;
    fc.assert(
      fc.property(fc.uniqueArray(qualifiedName, { minLength: 2, maxLength: 10 }), (names) => {
        const { registry, catalogs, selected } = build(names);
        const selection = { version: 3 as const, tools: selected };
        let aliases: string[];
        try {
          aliases = resolveSelection(registry, selection, catalogs).tools.map((tool) => tool.alias);
        } catch (error) {
          refused++;
          expect(OpenWorkerError.hasCode(error, "ALIAS_COLLISION")).toBe(true);
          expect(new Set(selected.map(modelAlias)).size).toBeLessThan(selected.length);
          expect(checkSelection(registry, selection, catalogs).length).toBeGreaterThan(0);
          return;
        }
        expect(aliases).toHaveLength(selected.length);
        expect(new Set(aliases).size).toBe(aliases.length);
      }),
      { numRuns: 300 },
    );
    // The generator must actually exercise refusals, or the property proves little.
    expect(refused).toBeGreaterThan(0);
  });
});
