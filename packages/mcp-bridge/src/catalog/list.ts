import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { MCP_ERROR_CODES } from "../codes.js";
import type { McpCatalogTool } from "../types.js";
import { catalogTool } from "./catalog.js";

/** Bounds of one paginated listing (M2). */
export interface ListingBounds {
  readonly maxPages: number;
  readonly maxTools: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/**
 * Lists every tool of a provider, page by page (M2): a repeated cursor, too many pages
 * or tools, or one name published twice is an error naming the provider; nothing of a
 * catalog that broke a rule is used. A provider whose `initialize` result declares no
 * `tools` capability is listed all the same, as the SDK's `Client` does (some servers
 * serve tools without declaring them), and its "method not found" (-32601) answer is an
 * empty catalog, not a provider that is down.
 */
export async function listAllTools(client: Client, namespace: string, bounds: ListingBounds): Promise<McpCatalogTool[]> {
  try {
    return await listPages(client, namespace, bounds);
  } catch (error) {
    if (client.getServerCapabilities()?.tools === undefined && (error as { code?: unknown }).code === ErrorCode.MethodNotFound) return [];
    throw error;
  }
}

async function listPages(client: Client, namespace: string, bounds: ListingBounds): Promise<McpCatalogTool[]> {
  const tools: McpCatalogTool[] = [];
  const names = new Set<string>();
  const cursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page >= bounds.maxPages) {
      throw new OpenWorkerError(
        MCP_ERROR_CODES.catalogTooLarge,
        `MCP provider "${namespace}" has more than ${bounds.maxPages} pages of tools; raise maxCatalogPages or fix the provider's pagination`,
        { details: { namespace, maxPages: bounds.maxPages } },
      );
    }
    const result = await client.request(
      { method: "tools/list", params: cursor === undefined ? {} : { cursor } },
      ListToolsResultSchema,
      { signal: bounds.signal, timeout: bounds.timeoutMs },
    );
    for (const tool of result.tools) {
      if (names.has(tool.name)) {
        throw new OpenWorkerError(
          MCP_ERROR_CODES.catalogDuplicateTool,
          `MCP provider "${namespace}" publishes tool "${tool.name}" twice; a catalog must name each tool once`,
          { details: { namespace, tool: tool.name } },
        );
      }
      names.add(tool.name);
      tools.push(catalogTool(tool));
    }
    if (tools.length > bounds.maxTools) {
      throw new OpenWorkerError(
        MCP_ERROR_CODES.catalogTooLarge,
        `MCP provider "${namespace}" publishes more than ${bounds.maxTools} tools; raise maxCatalogTools or split the provider`,
        { details: { namespace, maxTools: bounds.maxTools } },
      );
    }
    const next = result.nextCursor;
    if (next === undefined || next === "") return tools;
    if (cursors.has(next)) {
      throw new OpenWorkerError(
        MCP_ERROR_CODES.cursorRepeated,
        `MCP provider "${namespace}" repeated the pagination cursor ${JSON.stringify(next.slice(0, 64))} on page ${page + 2}; ` +
          "its tools/list pagination loops, so its catalog is unavailable",
        { details: { namespace, page: page + 2 } },
      );
    }
    cursors.add(next);
    cursor = next;
  }
}
