import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ToolRegistry, type McpProviderDefinition } from "@openworker/registry";
import { codeTool, type JsonSchema } from "@openworker/tools-sdk";
import { sha256Hex } from "@openworker/tools-sdk/internal/validation";
import { describe, expect, it } from "vitest";
import { loadBundle, resolveSelection, type McpCatalogInput } from "../src/index.js";

// Frozen fixtures (persisted formats): bundles of every tools.json version and the
// identity they resolve to. Never regenerate expected.json: a difference means the
// resolution or the execution identity of existing bundles changed (B3, A2).
const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");

interface World {
  natives: { name: string; description: string; version: string; inputSchema: JsonSchema }[];
  providers: McpProviderDefinition[];
  catalogs: McpCatalogInput[];
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(path.join(FIXTURES, file), "utf8")) as T;
}

function worldRegistry(world: World): ToolRegistry {
  const registry = new ToolRegistry();
  for (const native of world.natives) {
    registry.register(codeTool(native.name, native.description, native.inputSchema, () => ({ ok: null }), { version: native.version }));
  }
  for (const provider of world.providers) registry.registerProvider(provider);
  registry.freeze();
  return registry;
}

describe("frozen fixture bundles", () => {
  const world = readJson<World>("world.json");

  it.each([
    ["v3", "v3"],
    ["v2", "v2"],
    ["v1", "v1/coworker"],
  ])("B1/B3/A2 the %s bundle loads and resolves to its frozen identity", async (name, dir) => {
    const expected = readJson<Record<string, unknown>>(`${name}/expected.json`);
    const bundle = await loadBundle(path.join(FIXTURES, dir));
    const resolved = resolveSelection(worldRegistry(world), bundle.selection, world.catalogs);
    const actual = {
      manifest: { name: bundle.manifest.name, description: bundle.manifest.description ?? null, skills: bundle.manifest.skills.map((skill) => skill.name) },
      selection: bundle.selection,
      manifestSha256: sha256Hex(bundle.manifestBytes),
      toolsJsonSha256: sha256Hex(bundle.toolsJsonBytes),
      tools: resolved.tools.map((tool) => ({
        qualifiedName: tool.qualifiedName,
        alias: tool.alias,
        kind: tool.kind,
        remoteName: tool.kind === "mcp" ? tool.remoteName : null,
        provider: tool.kind === "mcp" ? tool.provider.namespace : null,
        schemaFingerprint: tool.schemaFingerprint,
        version: tool.descriptor.version,
      })),
      fingerprint: resolved.fingerprint,
    };
    expect(bundle.dir).toBe(path.join(FIXTURES, name, "coworker"));
    expect(actual).toEqual(expected);
  });
});
