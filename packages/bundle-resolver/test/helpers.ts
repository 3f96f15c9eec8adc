import { ToolRegistry } from "@openworker/registry";
import { codeTool, type JsonSchema } from "@openworker/tools-sdk";
import { schemaFingerprint } from "@openworker/tools-sdk/internal/validation";
import type { McpCatalogInput, McpCatalogTool } from "../src/index.js";

export const OBJECT_SCHEMA: JsonSchema = { type: "object", properties: { text: { type: "string" } } };

/** A registry with real code tools and providers, frozen unless asked otherwise. */
export function registryWith(
  natives: readonly string[],
  providers: readonly string[] = [],
  options: { frozen?: boolean; schemas?: Record<string, JsonSchema> } = {},
): ToolRegistry {
  const registry = new ToolRegistry();
  for (const name of natives) {
    registry.register(codeTool(name, `The ${name} tool.`, options.schemas?.[name] ?? OBJECT_SCHEMA, () => ({ ok: name }), { version: "1.0.0" }));
  }
  for (const namespace of providers) registry.registerMcp({ namespace, program: `/opt/${namespace}/mcp`, args: [] });
  if (options.frozen ?? true) registry.freeze();
  return registry;
}

/** A published catalog entry whose fingerprint covers its whole definition. */
export function catalogTool(name: string, inputSchema: JsonSchema = OBJECT_SCHEMA, description = `Remote ${name}.`): McpCatalogTool {
  return { name, description, inputSchema, fingerprint: schemaFingerprint({ name, description, inputSchema }) };
}

export function catalog(namespace: string, names: readonly string[]): McpCatalogInput {
  return { namespace, tools: names.map((name) => catalogTool(name)) };
}

/** Re-exported from the SDK's testing kit under the names these tests use. */
export { captureError as thrown, captureRejection as rejected } from "@openworker/tools-sdk/testing";
