import type { JsonObject, JsonSchema, JsonValue } from "@openworker/tools-sdk";
import type { McpCatalog, McpToolIcon } from "./types.js";

/** One server of the inventory. */
export interface McpInventoryServer {
  /** The raw namespace, as registered. */
  readonly serverName: string;
  /** A display name unique within the inventory (see {@link assignSafeServerNames}). */
  readonly safeServerName: string;
  /** How it runs, without arguments, environment or credentials: `stdio: acer-mcp-launcher`. */
  readonly launchSummary: string;
  /** Tools published plus tools denied for the session. */
  readonly toolCount: number;
  /** The MCP revision its connection negotiated (M6). */
  readonly protocolVersion?: string;
}

/** One tool row of the inventory, raw names preserved. */
export interface McpInventoryTool {
  readonly serverName: string;
  readonly safeServerName: string;
  /** The exact remote tool name. */
  readonly toolName: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
  /** The tool's MCP annotations (`readOnlyHint`, `destructiveHint`, `title`, …) as published, strings redacted. */
  readonly annotations?: JsonValue;
  /** Its icons, bounded as the catalog keeps them (`McpCatalogTool.icons`). */
  readonly icons?: readonly McpToolIcon[];
  /** Its `_meta`, bounded and redacted as the catalog keeps it (`McpCatalogTool._meta`). */
  readonly _meta?: JsonObject;
  /** What to show when there is no description: the tool name. */
  readonly fallbackDescription: string;
  /** Set on rows of `sessionDeniedTools`. */
  readonly deniedBySession?: true;
}

/**
 * The read-only MCP tool inventory for control surfaces (M5, I2), shaped like
 * OpenClaw's `McpToolCatalog`: built only from connections already bound.
 */
export interface McpToolInventory {
  readonly version: 1;
  readonly generatedAt: number;
  /** Keyed by raw server name. */
  readonly servers: Readonly<Record<string, McpInventoryServer>>;
  /** Visible tools, sorted by server then tool name. */
  readonly tools: readonly McpInventoryTool[];
  /** Tools hidden only by a session denial, kept apart (including denied names the server no longer publishes). */
  readonly sessionDeniedTools?: readonly McpInventoryTool[];
}

/** What to build an inventory for. */
export interface McpInventoryRequest {
  /** Only this session's bound connections; otherwise the most recent live catalog of each server across sessions. */
  readonly sessionId?: string;
  /** Only these servers (the bounded set a control surface may represent). */
  readonly serverNames?: readonly string[];
  /** Per server, remote tool names the session denied. */
  readonly sessionDeniedTools?: Readonly<Record<string, readonly string[]>>;
}

const SAFE_NAME_BYTES = 32;

/**
 * Gives each server a display name that is safe wherever the name is embedded
 * (`server__tool` aliases, UI keys): lower-case `[a-z0-9_]`, no `__`, no `_` first or
 * last, at most 32 characters, and unique: names that would collide (`Acer` and `acer`, `my-app` and
 * `my_app`) get `_2`, `_3`, … in sorted order of their raw names. Raw names are never
 * changed; this is a display mapping only.
 *
 * @example
 * ```ts
 * assignSafeServerNames(["acer", "Acer"]); // Map { "Acer" => "acer", "acer" => "acer_2" }
 * ```
 */
export function assignSafeServerNames(serverNames: readonly string[]): Map<string, string> {
  const assigned = new Map<string, string>();
  const taken = new Set<string>();
  for (const raw of [...new Set(serverNames)].sort()) {
    const base =
      raw
        .toLowerCase()
        .replace(/[^a-z0-9_]+/g, "_")
        .replace(/_{2,}/g, "_")
        .replace(/^_+/, "")
        .slice(0, SAFE_NAME_BYTES)
        .replace(/_+$/, "") || "server";
    let candidate = base;
    // A cut can end on "_", which the suffix's own "_" would double into "__".
    for (let suffix = 2; taken.has(candidate); suffix++)
      candidate = `${base.slice(0, SAFE_NAME_BYTES - String(suffix).length - 1).replace(/_+$/, "")}_${suffix}`;
    taken.add(candidate);
    assigned.set(raw, candidate);
  }
  return assigned;
}

/** Builds the inventory from live catalogs; `undefined` when none of the requested servers has one. */
export function buildInventory(
  catalogs: ReadonlyMap<string, McpCatalog>,
  launchSummary: (serverName: string) => string,
  request: McpInventoryRequest,
): McpToolInventory | undefined {
  const wanted = request.serverNames ? new Set(request.serverNames) : undefined;
  const live = [...catalogs.values()].filter((catalog) => !wanted || wanted.has(catalog.namespace));
  if (live.length === 0) return undefined;
  live.sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0));
  const safeNames = assignSafeServerNames(live.map((catalog) => catalog.namespace));
  const servers: Record<string, McpInventoryServer> = {};
  const tools: McpInventoryTool[] = [];
  const denied: McpInventoryTool[] = [];
  for (const catalog of live) {
    const serverName = catalog.namespace;
    const safeServerName = safeNames.get(serverName) ?? serverName;
    const deniedList = request.sessionDeniedTools && Object.hasOwn(request.sessionDeniedTools, serverName) ? request.sessionDeniedTools[serverName] : undefined;
    const deniedNames = new Set(deniedList ?? []);
    const published = new Set<string>();
    for (const tool of [...catalog.tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      published.add(tool.name);
      const row: McpInventoryTool = {
        serverName,
        safeServerName,
        toolName: tool.name,
        ...(tool.title === undefined ? {} : { title: tool.title }),
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: tool.inputSchema,
        ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
        ...(tool.icons === undefined ? {} : { icons: tool.icons }),
        ...(tool._meta === undefined ? {} : { _meta: tool._meta }),
        fallbackDescription: tool.description || tool.name,
        ...(deniedNames.has(tool.name) ? { deniedBySession: true as const } : {}),
      };
      (deniedNames.has(tool.name) ? denied : tools).push(row);
    }
    const unpublishedDenials = [...deniedNames].filter((name) => !published.has(name)).sort();
    for (const toolName of unpublishedDenials) {
      denied.push({ serverName, safeServerName, toolName, inputSchema: { type: "object" }, fallbackDescription: toolName, deniedBySession: true });
    }
    servers[serverName] = {
      serverName,
      safeServerName,
      launchSummary: launchSummary(serverName),
      toolCount: published.size + unpublishedDenials.length,
      ...(catalog.protocolVersion === undefined ? {} : { protocolVersion: catalog.protocolVersion }),
    };
  }
  return { version: 1, generatedAt: Date.now(), servers, tools, ...(denied.length > 0 ? { sessionDeniedTools: denied } : {}) };
}
