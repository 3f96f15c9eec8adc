import type { McpProviderDefinition, RegisteredTool } from "@openworker/registry";
import { canonicalJson, modelAlias, OpenWorkerError, type JsonSchema, type JsonValue, type Tool, type ToolDescriptor } from "@openworker/tools-sdk";
import { compileInputSchema, sha256Hex, type ArgumentValidator } from "@openworker/tools-sdk/internal/validation";
import type { McpCatalogTool, PublishedIcon } from "./catalog.js";

interface ResolvedToolCommon {
  /** `namespace.tool` as the bundle selects it. */
  readonly qualifiedName: string;
  /** The model alias (N2). */
  readonly alias: string;
  readonly descriptor: ToolDescriptor;
  /** `sha256:` fingerprint of the input schema; approvals are bound to it (M3). */
  readonly schemaFingerprint: string;
  /** The compiled input schema (B5, E5). */
  readonly validator: ArgumentValidator;
}

/**
 * A selected native tool (B4): the exact registered descriptor.
 *
 * @example
 * ```ts
 * if (tool.kind === "native") await tool.tool.call(context, args);
 * ```
 */
export interface NativeResolvedTool extends ResolvedToolCommon {
  readonly kind: "native";
  readonly tool: Tool;
}

/**
 * A selected MCP tool (B4): its provider and the exact remote name after the first dot.
 *
 * @example
 * ```ts
 * if (tool.kind === "mcp") await bridge.openSession(sessionId).callTool(tool.provider.namespace, tool.remoteName, args, {});
 * ```
 */
export interface McpResolvedTool extends ResolvedToolCommon {
  readonly kind: "mcp";
  readonly provider: McpProviderDefinition;
  readonly remoteName: string;
  /** The catalog entry's fingerprint; also the descriptor's `version`. */
  readonly catalogFingerprint: string;
  /** The title, output schema, annotations and icons the provider publishes, as discovery kept them (frozen copies). */
  readonly published: PublishedMetadata;
}

/**
 * What an MCP provider publishes of a tool beside its name, description and input schema:
 * what a host serving the tool again shows its own clients (M11).
 *
 * @example
 * ```ts
 * if (tool.kind === "mcp" && tool.published.outputSchema) console.log("structured results");
 * ```
 */
export interface PublishedMetadata {
  readonly title?: string;
  readonly outputSchema?: JsonSchema;
  readonly annotations?: JsonValue;
  readonly icons?: readonly PublishedIcon[];
}

/**
 * One selected tool, native or MCP.
 *
 * @example
 * ```ts
 * const check = (tool: ResolvedTool, args: unknown) => tool.validator.check(args); // E5, before approval
 * ```
 */
export type ResolvedTool = NativeResolvedTool | McpResolvedTool;

// Resolution runs at every turn preparation; a tool's resolved form (its compiled
// validator and its identity line) is built once per registered tool / catalog entry.
const natives = new WeakMap<RegisteredTool, NativeResolvedTool>();
const mcpTools = new WeakMap<McpCatalogTool, McpResolvedTool>();
// Discovery may rebuild equal catalog objects every turn: find the earlier resolution of
// the provider's tool by name, and reuse it only when its fingerprint, description and
// schema are really equal. One entry per tool name, the latest: a provider whose tools
// change at every listing (`list_changed`) replaced its entry, where a map keyed by name
// and fingerprint kept every version (up to 50,000) for the registry's life.
const mcpLatest = new WeakMap<McpProviderDefinition, Map<string, McpResolvedTool>>();
const identityLines = new WeakMap<ResolvedTool, string>();
const providerKeys = new WeakMap<McpProviderDefinition, string>();

/** The resolved form of a registered native tool; throws `SCHEMA_INVALID` naming it (B5). */
export function resolveNative(registered: RegisteredTool): NativeResolvedTool {
  const known = natives.get(registered);
  if (known) return known;
  // A native schema is the partner's own: an unknown format is a mistake to report (B5),
  // not a third-party server's extension to tolerate as MCP schemas are.
  const validator = compileInputSchema(registered.descriptor.inputSchema, registered.name, { strictFormats: true });
  const resolved: NativeResolvedTool = Object.freeze({
    kind: "native",
    qualifiedName: registered.name,
    alias: registered.alias,
    descriptor: registered.descriptor,
    schemaFingerprint: validator.fingerprint,
    validator,
    tool: registered.tool,
  });
  natives.set(registered, resolved);
  return resolved;
}

/**
 * The resolved form of a published MCP tool. Its descriptor is built from the catalog
 * entry (a frozen JSON copy of the schema), with the catalog fingerprint as version.
 */
export function resolveMcp(provider: McpProviderDefinition, entry: McpCatalogTool, qualifiedName: string): McpResolvedTool {
  const known = mcpTools.get(entry);
  if (known && known.provider === provider && known.qualifiedName === qualifiedName) return known;
  let latest = mcpLatest.get(provider);
  if (!latest) mcpLatest.set(provider, (latest = new Map()));
  const earlier = latest.get(entry.name);
  if (
    earlier &&
    earlier.catalogFingerprint === entry.fingerprint &&
    earlier.qualifiedName === qualifiedName &&
    earlier.descriptor.description === (entry.description ?? "") &&
    jsonEqual(earlier.descriptor.inputSchema, entry.inputSchema) &&
    // The title and icons are outside the fingerprint: a new one is a new resolution too.
    jsonEqual(earlier.published, publishedOf(entry))
  ) {
    mcpTools.set(entry, earlier);
    return earlier;
  }
  const inputSchema = deepFreeze(JSON.parse(JSON.stringify(entry.inputSchema)) as JsonSchema);
  const validator = compileInputSchema(inputSchema, qualifiedName);
  const descriptor: ToolDescriptor = Object.freeze({
    name: qualifiedName,
    description: entry.description ?? "",
    inputSchema,
    version: entry.fingerprint,
  });
  const resolved: McpResolvedTool = Object.freeze({
    kind: "mcp",
    qualifiedName,
    alias: modelAlias(qualifiedName),
    descriptor,
    schemaFingerprint: validator.fingerprint,
    validator,
    provider,
    remoteName: entry.name,
    catalogFingerprint: entry.fingerprint,
    published: deepFreeze(JSON.parse(JSON.stringify(publishedOf(entry))) as PublishedMetadata),
  });
  mcpTools.set(entry, resolved);
  latest.set(entry.name, resolved);
  return resolved;
}

/** The entry's published metadata, only the fields it has (JSON values, as discovery gives them). */
function publishedOf(entry: McpCatalogTool): PublishedMetadata {
  const published: { -readonly [K in keyof PublishedMetadata]: PublishedMetadata[K] } = {};
  if (typeof entry.title === "string") published.title = entry.title;
  if (entry.outputSchema !== undefined) published.outputSchema = entry.outputSchema;
  if (entry.annotations !== undefined) published.annotations = entry.annotations;
  if (entry.icons !== undefined) published.icons = entry.icons;
  return published;
}

/** Equality as JSON sees it (key order ignored, `undefined` members absent), without serializing. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, index) => jsonEqual(item, other[index]));
  }
  const left = Object.entries(a).filter(([, value]) => value !== undefined);
  const right = b as Record<string, unknown>;
  if (left.length !== Object.values(right).filter((value) => value !== undefined).length) return false;
  return left.every(([key, value]) => Object.hasOwn(right, key) && jsonEqual(value, right[key]));
}

/**
 * The line a tool contributes to the selection fingerprint: name, alias, kind, schema
 * fingerprint, descriptor version (or catalog fingerprint) and the provider's launch
 * identity. Provider `env` and `headers` are left out: they may hold credentials (E6),
 * and they configure, rather than identify, the implementation.
 */
export function identityLine(tool: ResolvedTool): string {
  let line = identityLines.get(tool);
  if (line === undefined) {
    line =
      tool.kind === "native"
        ? canonicalJson([tool.qualifiedName, tool.alias, "native", tool.schemaFingerprint, tool.descriptor.version, null])
        : canonicalJson([tool.qualifiedName, tool.alias, "mcp", tool.schemaFingerprint, tool.catalogFingerprint, providerKey(tool.provider)]);
    identityLines.set(tool, line);
  }
  return line;
}

const providerFingerprints = new WeakMap<McpProviderDefinition, string>();

/**
 * A digest of how an MCP provider is started or reached: transport, namespace, program,
 * args, cwd and placement (or URL), never the values of `env` or `headers`, which may
 * be credentials. The runtime binds remembered approvals of a provider's tools to it, so
 * that a provider started from another program with the same catalog asks again (A2);
 * the selection fingerprint holds the same fields.
 *
 * @example
 * ```ts
 * providerFingerprint(registry.provider("acer")!); // "sha256:…"
 * ```
 */
export function providerFingerprint(provider: McpProviderDefinition): string {
  let fingerprint = providerFingerprints.get(provider);
  if (fingerprint === undefined) {
    fingerprint = `sha256:${sha256Hex(providerKey(provider))}`;
    providerFingerprints.set(provider, fingerprint);
  }
  return fingerprint;
}

function providerKey(provider: McpProviderDefinition): string {
  let key = providerKeys.get(provider);
  if (key === undefined) {
    key = canonicalJson(
      provider.transport === "stdio"
        ? {
            namespace: provider.namespace,
            transport: provider.transport,
            program: provider.program,
            args: provider.args,
            cwd: provider.cwd ?? null,
            placement: provider.placement ?? "host",
          }
        : { namespace: provider.namespace, transport: provider.transport, url: provider.url, placement: provider.placement ?? "host" },
    );
    providerKeys.set(provider, key);
  }
  return key;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** Wraps a non-OpenWorker failure of schema handling so nothing escapes uncoded. */
export function schemaFailure(name: string, cause: unknown): OpenWorkerError {
  if (OpenWorkerError.isInstance(cause)) return cause;
  return new OpenWorkerError("SCHEMA_INVALID", `input schema of tool ${JSON.stringify(name)} cannot be used: ${String(cause)}`, {
    cause,
    details: { tool: name },
  });
}
