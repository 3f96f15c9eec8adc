import type { JsonSchema, JsonValue } from "@openworker/tools-sdk";
import { canonicalJson, utf8Bytes } from "@openworker/tools-sdk";
import { sha256Hex } from "@openworker/tools-sdk/validation";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { redact } from "../redact.js";
import type { McpCatalog, McpCatalogTool } from "../types.js";

/**
 * The fingerprint approvals bind to (M3): everything the model or a reviewer relies on
 * when approving a tool. The title is display-only and stays out, as do `_meta`, icons
 * and execution hints.
 *
 * @example
 * ```ts
 * toolFingerprint({ name: "echo", inputSchema: { type: "object" } }); // "sha256:…"
 * ```
 */
export function toolFingerprint(tool: Pick<McpCatalogTool, "name" | "description" | "inputSchema" | "outputSchema" | "annotations">): string {
  return `sha256:${sha256Hex(fingerprinted(tool))}`;
}

/** The canonical JSON a tool's fingerprint is the hash of. */
function fingerprinted(tool: Pick<McpCatalogTool, "name" | "description" | "inputSchema" | "outputSchema" | "annotations">): string {
  return canonicalJson({
    name: tool.name,
    description: tool.description ?? null,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema ?? null,
    annotations: tool.annotations ?? null,
  });
}

/** A remote tool as the catalog keeps it. */
export function catalogTool(tool: Tool, secrets: readonly string[] = []): McpCatalogTool {
  return catalogEntry(tool, secrets).tool;
}

/**
 * A remote tool as the catalog keeps it, with about how many bytes it keeps: the UTF-8
 * size of its fingerprinted JSON and of its title, for the listing's byte bound (M2).
 * The JSON is serialized once, for both. Its title and description are redacted with the
 * provider's `secrets` (E6): a model, a CLI listing and `serve --mcp` clients read them.
 */
export function catalogEntry(tool: Tool, secrets: readonly string[] = []): { readonly tool: McpCatalogTool; readonly bytes: number } {
  const shaped = {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: typeof tool.title === "string" ? redact(tool.title, secrets) : tool.title }),
    ...(tool.description === undefined ? {} : { description: typeof tool.description === "string" ? redact(tool.description, secrets) : tool.description }),
    inputSchema: tool.inputSchema as JsonSchema,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema as JsonSchema }),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations as JsonValue }),
  };
  const canonical = fingerprinted(shaped);
  const bytes = utf8Bytes(canonical) + (typeof tool.title === "string" ? utf8Bytes(tool.title) : 0);
  return { tool: { ...shaped, fingerprint: `sha256:${sha256Hex(canonical)}` }, bytes };
}

/**
 * Builds a session's view of a listing: the catalog fingerprint and what changed since
 * the session's previous catalog of that namespace (M3).
 */
export function buildCatalog(
  namespace: string,
  tools: readonly McpCatalogTool[],
  previous: McpCatalog | undefined,
  fromCache: boolean,
): McpCatalog {
  const before = new Map((previous?.tools ?? []).map((tool) => [tool.name, tool.fingerprint]));
  const changedTools = tools.filter((tool) => before.get(tool.name) !== tool.fingerprint).map((tool) => tool.name);
  const now = new Set(tools.map((tool) => tool.name));
  const removedTools = [...before.keys()].filter((name) => !now.has(name));
  const fingerprint = `sha256:${sha256Hex(canonicalJson({ namespace, tools: tools.map((tool) => [tool.name, tool.fingerprint]) }))}`;
  return { namespace, tools, fingerprint, changedTools, removedTools, fromCache };
}
