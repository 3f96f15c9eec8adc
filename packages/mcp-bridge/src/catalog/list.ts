import { setMaxListeners } from "node:events";
import { METHOD_NOT_FOUND, type Client } from "@modelcontextprotocol/client";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { onAbort } from "@openworker/tools-sdk/internal/execution";
import { MCP_ERROR_CODES } from "../codes.js";
import type { McpCatalogTool } from "../types.js";
import { catalogEntry } from "./catalog.js";

/** Bounds of one paginated listing (M2). */
export interface ListingBounds {
  readonly maxPages: number;
  readonly maxTools: number;
  /** Bytes of tool definitions (their fingerprinted JSON) the listing keeps at most. */
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/**
 * Lists every tool of a provider, page by page (M2): a repeated cursor, too many pages,
 * tools or bytes of tool definitions, or one name published twice is an error naming the provider; nothing of a
 * catalog that broke a rule is used. A provider whose `initialize` result declares no
 * `tools` capability is listed all the same, as the SDK's `Client` does (some servers
 * serve tools without declaring them), and its "method not found" (-32601) answer is an
 * empty catalog, not a provider that is down. Titles and descriptions are redacted with
 * the provider's `secrets` (E6).
 */
export async function listAllTools(client: Client, namespace: string, bounds: ListingBounds, secrets: readonly string[] = []): Promise<McpCatalogTool[]> {
  // The SDK adds an abort listener to a request's signal for each page and never removes
  // it: past 10 pages Node printed a MaxListenersExceededWarning on the host's stderr.
  // The listing requests pages under a signal of its own, allowed one listener per page
  // it may request (and one to spare), and dropped with the listing.
  const listing = new AbortController();
  setMaxListeners(bounds.maxPages + 1, listing.signal);
  // An aborted signal fires no more events: its reason is passed on at once.
  if (bounds.signal.aborted) listing.abort(bounds.signal.reason);
  const stopRelay = bounds.signal.aborted ? () => {} : onAbort(bounds.signal, (reason) => listing.abort(reason));
  try {
    return await listPages(client, namespace, { ...bounds, signal: listing.signal }, secrets);
  } catch (error) {
    if (client.getServerCapabilities()?.tools === undefined && (error as { code?: unknown }).code === METHOD_NOT_FOUND) return [];
    throw error;
  } finally {
    stopRelay();
  }
}

async function listPages(client: Client, namespace: string, bounds: ListingBounds, secrets: readonly string[]): Promise<McpCatalogTool[]> {
  const tools: McpCatalogTool[] = [];
  const names = new Set<string>();
  const cursors = new Set<string>();
  let bytes = 0;
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
      const entry = catalogEntry(tool, secrets);
      bytes += entry.bytes;
      tools.push(entry.tool);
    }
    // Pages and tools alone let one provider keep hundreds of MB per session: each page may
    // be a 32 MiB line, and a tool's description as long as that.
    if (bytes > bounds.maxBytes) {
      throw new OpenWorkerError(
        MCP_ERROR_CODES.catalogTooLarge,
        `MCP provider "${namespace}" publishes more than ${bounds.maxBytes} bytes of tool definitions (over ${bytes} in its first ${page + 1} page(s)); ` +
          "raise maxCatalogBytes or shorten the provider's descriptions and schemas",
        { details: { namespace, maxBytes: bounds.maxBytes } },
      );
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
