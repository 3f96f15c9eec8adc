import type { JsonSchema, JsonValue } from "@openworker/tools-sdk";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { BUNDLE_ERROR_CODES as CODES } from "./codes.js";

/**
 * One tool an MCP provider published, as discovery reported it.
 *
 * @example
 * ```ts
 * const tool: McpCatalogTool = { name: "acer_fan_set", inputSchema: { type: "object" }, fingerprint: "sha256:…" };
 * ```
 */
export interface McpCatalogTool {
  /** The exact remote tool name. */
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
  /** What the provider publishes beside the schema, kept for serving the tool as published (M11). */
  readonly title?: string;
  readonly outputSchema?: JsonSchema;
  readonly annotations?: JsonValue;
  readonly icons?: readonly PublishedIcon[];
  /**
   * Digest of this published definition (name, description, input schema, …), computed
   * by discovery. It becomes the MCP tool's descriptor version: a changed catalog entry
   * gets a new fingerprint and cannot inherit an earlier approval (M3).
   */
  readonly fingerprint: string;
}

/** An icon a provider publishes for a tool (MCP `Icon`): an `https:` URL or a `data:image/` URI. */
export interface PublishedIcon {
  readonly src: string;
  readonly mimeType?: string;
  readonly sizes?: readonly string[];
  readonly theme?: string;
}

/**
 * The catalog discovery produced for one MCP provider (M2): a plain input, so resolution
 * is testable without processes.
 *
 * @example
 * ```ts
 * const catalog: McpCatalogInput = {
 *   namespace: "acer",
 *   tools: [{ name: "acer_care_center_batterystatus_get", inputSchema: { type: "object" }, fingerprint: "sha256:…" }],
 * };
 * ```
 */
export interface McpCatalogInput {
  readonly namespace: string;
  readonly tools: readonly McpCatalogTool[];
}

/** A catalog checked once and indexed by remote name. */
export interface IndexedCatalog {
  readonly input: McpCatalogInput;
  readonly byName: ReadonlyMap<string, McpCatalogTool>;
}

// Discovery hands the same catalog objects to every turn until a catalog changes, so the
// index (and its duplicate check) is built once per catalog object.
const indexes = new WeakMap<McpCatalogInput, IndexedCatalog>();

/** Groups catalogs by namespace; a namespace given twice is an error. */
export function catalogsByNamespace(catalogs: readonly McpCatalogInput[]): Map<string, McpCatalogInput> {
  if (!Array.isArray(catalogs)) throw catalogError(`catalogs must be an array, got ${typeof catalogs}`, {});
  const byNamespace = new Map<string, McpCatalogInput>();
  for (const catalog of catalogs) {
    const namespace = (catalog as McpCatalogInput | null)?.namespace;
    if (typeof namespace !== "string" || !Array.isArray((catalog as McpCatalogInput).tools)) {
      throw catalogError('every catalog needs a string "namespace" and a "tools" array', {});
    }
    if (byNamespace.has(namespace)) {
      throw catalogError(`two catalogs were given for MCP provider ${JSON.stringify(namespace)}; pass one per provider`, {
        namespace,
      });
    }
    byNamespace.set(namespace, catalog);
  }
  return byNamespace;
}

/** The index of one catalog: every entry checked for shape, no remote name published twice. */
export function indexCatalog(catalog: McpCatalogInput): IndexedCatalog {
  const known = indexes.get(catalog);
  if (known) return known;
  const byName = new Map<string, McpCatalogTool>();
  const provider = JSON.stringify(catalog.namespace);
  catalog.tools.forEach((tool, index) => {
    const name = (tool as McpCatalogTool | null)?.name;
    if (typeof name !== "string" || name.length === 0) {
      throw catalogError(`MCP provider ${provider}: catalog tool #${index} has no name`, { namespace: catalog.namespace });
    }
    const label = (): string => `MCP provider ${provider}: catalog tool ${JSON.stringify(name)}`;
    if (typeof tool.inputSchema !== "object" || tool.inputSchema === null || Array.isArray(tool.inputSchema)) {
      throw catalogError(`${label()} has no inputSchema object`, { namespace: catalog.namespace, tool: name });
    }
    if (typeof tool.fingerprint !== "string" || tool.fingerprint.length === 0) {
      throw catalogError(`${label()} has no fingerprint`, { namespace: catalog.namespace, tool: name });
    }
    if (tool.description !== undefined && typeof tool.description !== "string") {
      throw catalogError(`${label()} has a description that is not a string`, { namespace: catalog.namespace, tool: name });
    }
    if (byName.has(name)) {
      throw catalogError(`${label()} is published twice; the server's catalog is ambiguous`, {
        namespace: catalog.namespace,
        tool: name,
      });
    }
    byName.set(name, tool);
  });
  const indexed = Object.freeze({ input: catalog, byName });
  indexes.set(catalog, indexed);
  return indexed;
}

function catalogError(message: string, details: Record<string, unknown>): OpenWorkerError {
  return new OpenWorkerError(CODES.catalogInvalid, message, { details });
}
