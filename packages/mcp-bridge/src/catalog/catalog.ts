import type { JsonObject, JsonSchema, JsonValue } from "@openworker/tools-sdk";
import { canonicalJson, utf8Bytes } from "@openworker/tools-sdk";
import { sha256Hex } from "@openworker/tools-sdk/internal/validation";
import type { Tool } from "@modelcontextprotocol/client";
import { redact } from "../redact.js";
import type { McpCatalog, McpCatalogTool, McpToolIcon, McpWithheldTool } from "../types.js";

/**
 * The fingerprint approvals bind to (M3): everything the model or a reviewer relies on
 * when approving a tool. What the MCP spec calls display-only (the title, icons, `_meta`)
 * stays out, as do execution hints.
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
 * size of its fingerprinted JSON, its title, icons and `_meta`, for the listing's byte
 * bound (M2). The JSON is serialized once, for both. Its title, description and the
 * strings of its annotations, icon sources and `_meta` are redacted with the provider's
 * `secrets` (E6): a model, a CLI listing, an inventory and `serve --mcp` clients read them.
 * Icons and `_meta` are bounded (see {@link MAX_ICONS}, {@link MAX_META_BYTES}).
 */
export function catalogEntry(tool: Tool, secrets: readonly string[] = []): { readonly tool: McpCatalogTool; readonly bytes: number } {
  const icons = keptIcons((tool as { icons?: unknown }).icons, secrets);
  const meta = keptMeta((tool as { _meta?: unknown })._meta, secrets);
  const taskSupport = (tool as { execution?: { taskSupport?: unknown } }).execution?.taskSupport;
  const shaped = {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: typeof tool.title === "string" ? redact(tool.title, secrets) : tool.title }),
    ...(tool.description === undefined ? {} : { description: typeof tool.description === "string" ? redact(tool.description, secrets) : tool.description }),
    inputSchema: tool.inputSchema as JsonSchema,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema as JsonSchema }),
    ...(tool.annotations === undefined ? {} : { annotations: redactStrings(tool.annotations as JsonValue, secrets, 0) }),
  };
  const canonical = fingerprinted(shaped);
  const shown = icons === undefined && meta === undefined ? 0 : utf8Bytes(JSON.stringify([icons ?? null, meta ?? null]));
  const bytes = utf8Bytes(canonical) + (typeof tool.title === "string" ? utf8Bytes(tool.title) : 0) + shown;
  const entry: McpCatalogTool = {
    ...shaped,
    ...(icons === undefined ? {} : { icons }),
    ...(meta === undefined ? {} : { _meta: meta }),
    ...(taskSupport === "forbidden" || taskSupport === "optional" || taskSupport === "required" ? { execution: { taskSupport } } : {}),
    fingerprint: `sha256:${sha256Hex(canonical)}`,
  };
  return { tool: entry, bytes };
}

/** Icons kept per tool: a host shows one or two, in a few sizes and themes. */
export const MAX_ICONS = 8;
/** Characters of one icon's `src` at most: a small `data:` image fits, a photo does not. */
export const MAX_ICON_SOURCE_LENGTH = 16 * 1024;
/** Bytes of a tool's `_meta` JSON at most; a larger `_meta` is left out whole. */
export const MAX_META_BYTES = 4 * 1024;
// The MCP spec asks consumers to refuse unsafe schemes (javascript:, file:, ws:, …) for icons.
const ICON_SOURCE = /^(?:https:\/\/|data:image\/)/i;
const THEMES = new Set(["light", "dark"]);
/** Deeper than this, `_meta` is left out: a host UI reads a few keys, not a tree. */
const META_DEPTH = 16;

/**
 * The first {@link MAX_ICONS} usable icons: an `https:` or `data:image/` source of at most
 * {@link MAX_ICON_SOURCE_LENGTH} characters, with its MIME type, sizes and theme when they
 * are well formed; `undefined` when none is.
 */
function keptIcons(icons: unknown, secrets: readonly string[]): McpToolIcon[] | undefined {
  if (!Array.isArray(icons)) return undefined;
  const kept: McpToolIcon[] = [];
  for (const icon of icons) {
    if (kept.length === MAX_ICONS) break;
    const { src, mimeType, sizes, theme } = (icon ?? {}) as { src?: unknown; mimeType?: unknown; sizes?: unknown; theme?: unknown };
    if (typeof src !== "string" || src.length > MAX_ICON_SOURCE_LENGTH || !ICON_SOURCE.test(src)) continue;
    const shownSizes = Array.isArray(sizes) ? sizes.filter((size): size is string => typeof size === "string" && size.length <= 32).slice(0, MAX_ICONS) : [];
    kept.push({
      src: redact(src, secrets),
      ...(typeof mimeType === "string" && mimeType.length <= 128 ? { mimeType } : {}),
      ...(shownSizes.length > 0 ? { sizes: shownSizes } : {}),
      ...(typeof theme === "string" && THEMES.has(theme) ? { theme: theme as "light" | "dark" } : {}),
    });
  }
  return kept.length > 0 ? kept : undefined;
}

/** A tool's `_meta` with its strings redacted, or `undefined` when absent, not an object, deeper than {@link META_DEPTH} or over {@link MAX_META_BYTES}. */
function keptMeta(meta: unknown, secrets: readonly string[]): JsonObject | undefined {
  if (meta === null || typeof meta !== "object" || Array.isArray(meta)) return undefined;
  // Measured before the walk, so a large `_meta` costs one serialization and no copy.
  if (utf8Bytes(JSON.stringify(meta)) > MAX_META_BYTES || depthOver(meta, META_DEPTH)) return undefined;
  const redacted = redactStrings(meta as JsonObject, secrets, 0) as JsonObject;
  // A mask can be longer than the secret it hides.
  return utf8Bytes(JSON.stringify(redacted)) > MAX_META_BYTES ? undefined : redacted;
}

function depthOver(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== "object") return false;
  if (depth === 0) return true;
  return Object.values(value).some((item) => depthOver(item, depth - 1));
}

/** `value` with every string in it redacted (E6); the same value when nothing changed. */
function redactStrings(value: JsonValue, secrets: readonly string[], depth: number): JsonValue {
  if (typeof value === "string") return redact(value, secrets);
  if (value === null || typeof value !== "object" || depth > META_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, secrets, depth + 1));
  const copy: JsonObject = {};
  for (const [key, item] of Object.entries(value)) copy[key] = redactStrings(item, secrets, depth + 1);
  return copy;
}

/**
 * Why a published tool is not offered, as a clause, or `undefined` when it is offered: a
 * tool that requires MCP tasks fails every plain `tools/call`, and the bridge does not run
 * calls as tasks (M7, M10).
 */
export function withheldReason(tool: McpCatalogTool, runsTasks = false): string | undefined {
  if (tool.execution?.taskSupport === "required" && !runsTasks) {
    return 'it requires running as an MCP task (execution.taskSupport "required"), and the provider declares no tasks for tools/call on this connection (tasks run on the 2025-11-25 revision), so every call would fail';
  }
  return undefined;
}

/** A listing split into the tools a session offers and those it withholds (M2, M7). */
export function offeredTools(
  listed: readonly McpCatalogTool[],
  runsTasks = false,
): { readonly tools: readonly McpCatalogTool[]; readonly withheld: readonly McpWithheldTool[] } {
  let withheld: McpWithheldTool[] | undefined;
  let tools: McpCatalogTool[] | undefined;
  for (let index = 0; index < listed.length; index++) {
    const tool = listed[index]!;
    const reason = withheldReason(tool, runsTasks);
    if (reason === undefined) {
      tools?.push(tool);
      continue;
    }
    tools ??= listed.slice(0, index);
    (withheld ??= []).push({ name: tool.name, reason });
  }
  return { tools: tools ?? listed, withheld: withheld ?? [] };
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
  withheldTools: readonly McpWithheldTool[] = [],
  protocolVersion?: string,
): McpCatalog {
  const before = new Map((previous?.tools ?? []).map((tool) => [tool.name, tool.fingerprint]));
  const changedTools = tools.filter((tool) => before.get(tool.name) !== tool.fingerprint).map((tool) => tool.name);
  const now = new Set(tools.map((tool) => tool.name));
  const removedTools = [...before.keys()].filter((name) => !now.has(name));
  const fingerprint = `sha256:${sha256Hex(canonicalJson({ namespace, tools: tools.map((tool) => [tool.name, tool.fingerprint]) }))}`;
  return { namespace, tools, withheldTools, fingerprint, changedTools, removedTools, fromCache, ...(protocolVersion === undefined ? {} : { protocolVersion }) };
}
