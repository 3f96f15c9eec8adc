import type { ToolRegistry } from "@openworker/registry";
import { OpenWorkerError, validateNamespace, validateQualifiedName } from "@openworker/tools-sdk";
import { sha256Hex } from "@openworker/tools-sdk/internal/validation";
import { catalogsByNamespace, indexCatalog, type IndexedCatalog, type McpCatalogInput } from "./catalog.js";
import { BUNDLE_ERROR_CODES as CODES } from "./codes.js";
import { identityLine, resolveMcp, resolveNative, schemaFailure, type ResolvedTool } from "./resolved-tool.js";
import type { BundleSelection } from "./tools-json.js";

/**
 * The tools a bundle selected, resolved against a frozen registry and discovered catalogs.
 *
 * @example
 * ```ts
 * const tool = resolved.byAlias(call.name); // the model calls aliases
 * if (!tool) throw new Error(`unknown tool ${call.name}`);
 * ```
 */
export interface ResolvedSelection {
  /** In bundle order; v1: provider order, then each catalog's order. Nothing unselected (B2). */
  readonly tools: readonly ResolvedTool[];
  /**
   * `sha256:` digest over each tool's name, alias, kind, schema fingerprint, version or
   * catalog fingerprint and provider, in order: the selection's part of the execution
   * identity (A2).
   */
  readonly fingerprint: string;
  /** The tool the model calls by this alias (N2), if selected. */
  byAlias(alias: string): ResolvedTool | undefined;
  /** The selected tool with this exact qualified name, if any. */
  byName(name: string): ResolvedTool | undefined;
}

const FILE = "tools.json";

// Turn preparation resolves the same selection again and again. Inputs are values: a
// frozen registry never changes, and selections and catalogs are not mutated after they
// are handed over. So the same (registry, selection, catalog objects) gives the last
// result back at once; and when catalogs were rediscovered but every resolved tool is
// the very object of the last resolution (they are memoized per registered tool and
// catalog entry), the result, fingerprint included, is reused instead of rehashed.
interface LastResult {
  readonly registry: ToolRegistry;
  readonly catalogs: readonly McpCatalogInput[];
  readonly result: ResolvedSelection;
}
const lastResults = new WeakMap<BundleSelection, LastResult>();
const lastByRegistry = new WeakMap<ToolRegistry, ResolvedSelection>();
const FINGERPRINT_FORMAT = "openworker.selection/1";

/**
 * Resolves a bundle's selection (B2, B4, B5, N6, N7): each selected name to the exact
 * registered native tool or to its MCP provider's exact published remote tool, with a
 * compiled validator. Fails on the first problem; nothing is searched, renamed or skipped.
 * The registry must be frozen (N8).
 *
 * @example
 * ```ts
 * registry.freeze();
 * const resolved = resolveSelection(registry, bundle.selection, catalogs);
 * resolved.byAlias("example__web_search")?.kind; // "native"
 * ```
 */
export function resolveSelection(registry: ToolRegistry, selection: BundleSelection, catalogs: readonly McpCatalogInput[]): ResolvedSelection {
  return walk(registry, selection, catalogs, (problem) => {
    throw problem;
  });
}

/**
 * Like {@link resolveSelection}, but returns every problem (same codes) instead of
 * throwing the first: what `tools check` prints. An empty list means the selection resolves.
 *
 * @example
 * ```ts
 * for (const problem of checkSelection(registry, bundle.selection, catalogs)) console.error(problem.message);
 * ```
 */
export function checkSelection(registry: ToolRegistry, selection: BundleSelection, catalogs: readonly McpCatalogInput[]): readonly OpenWorkerError[] {
  const problems: OpenWorkerError[] = [];
  walk(registry, selection, catalogs, (problem) => problems.push(problem));
  return problems;
}

/**
 * The MCP namespaces whose catalogs resolution needs, sorted: discover these (M2), then
 * resolve. Namespaces the registry does not know are left to resolution to report.
 *
 * @example
 * ```ts
 * providersNeeded(registry, { version: 3, tools: ["example.web_search", "acer.battery"] }); // ["acer"]
 * ```
 */
export function providersNeeded(registry: ToolRegistry, selection: BundleSelection): string[] {
  const namespaces = new Set<string>();
  const consider = (namespace: string): void => {
    if (registry.namespaceOwner(namespace) === "mcp") namespaces.add(namespace);
  };
  if (selection.version === 3) {
    for (const name of selection.tools) consider(name.slice(0, Math.max(0, name.indexOf("."))));
  } else if (selection.version === 2) {
    for (const namespace of Object.keys(selection.mcpServers)) consider(namespace);
  } else {
    for (const namespace of selection.mcpServers) consider(namespace);
  }
  return [...namespaces].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

type Report = (problem: OpenWorkerError) => void;

function walk(registry: ToolRegistry, selection: BundleSelection, catalogs: readonly McpCatalogInput[], onProblem: Report): ResolvedSelection {
  const cached = lastResults.get(selection);
  if (cached && cached.registry === registry && sameItems(cached.catalogs, catalogs)) return cached.result;
  let problems = 0;
  const report: Report = (problem) => {
    problems++;
    onProblem(problem);
  };
  if (!registry.frozen) {
    report(
      new OpenWorkerError(CODES.registryNotFrozen, "resolution needs a frozen registry: call registry.freeze() once every tool and provider is registered"),
    );
  }
  const resolver = new Resolver(registry, catalogs, report);
  const shape = shapeProblem(selection);
  if (shape) report(new OpenWorkerError(CODES.toolsJsonInvalid, `${FILE}: ${shape}; parse it with parseToolsJson`));
  else if (selection.version === 3) {
    selection.tools.forEach((name, index) => resolver.select(name, `tools[${index}]`));
  } else if (selection.version === 2) {
    for (const [namespace, tools] of Object.entries(selection.mcpServers)) {
      if (!resolver.mcpServer(namespace, `mcpServers.${namespace}`)) continue;
      tools.forEach((tool, index) => resolver.select(`${namespace}.${tool}`, `mcpServers.${namespace}[${index}]`));
    }
  } else {
    selection.mcpServers.forEach((namespace, index) => resolver.everyToolOf(namespace, `mcpServers[${index}]`));
  }
  if (problems > 0) return resolver.finish();
  const previous = [cached?.registry === registry ? cached.result : undefined, lastByRegistry.get(registry)];
  const result = previous.find((earlier) => earlier && sameItems(earlier.tools, resolver.tools)) ?? resolver.finish();
  lastResults.set(selection, { registry, catalogs: [...catalogs], result });
  lastByRegistry.set(registry, result);
  return result;
}

class Resolver {
  readonly #tools: ResolvedTool[] = [];
  readonly #byName = new Map<string, ResolvedTool>();
  readonly #byAlias = new Map<string, ResolvedTool>();
  readonly #fields = new Map<string, string>();
  readonly #indexes = new Map<string, IndexedCatalog | null>();
  #catalogs: Map<string, McpCatalogInput> = new Map();

  constructor(
    private readonly registry: ToolRegistry,
    catalogs: readonly McpCatalogInput[],
    private readonly report: Report,
  ) {
    this.#attempt(() => {
      this.#catalogs = catalogsByNamespace(catalogs);
    });
  }

  /** One selected qualified name (v3, v2). */
  select(name: string, field: string): void {
    let parts: { namespace: string; tool: string };
    try {
      parts = validateQualifiedName(name);
    } catch (error) {
      this.report(prefixed(error, field));
      return;
    }
    const owner = this.registry.namespaceOwner(parts.namespace);
    if (owner === "native") {
      const registered = this.registry.get(name);
      if (!registered) {
        this.report(this.#notRegistered(name, parts.namespace, field));
        return;
      }
      this.#attempt(() => this.#add(resolveNative(registered), field), name);
    } else if (owner === "mcp") {
      const catalog = this.#catalog(parts.namespace, `tool ${JSON.stringify(name)}`, field);
      if (!catalog) return;
      const entry = catalog.byName.get(parts.tool);
      if (!entry) {
        this.report(notPublished(name, parts.namespace, parts.tool, catalog, field));
        return;
      }
      this.#attempt(() => this.#add(resolveMcp(this.registry.provider(parts.namespace)!, entry, name), field), name);
    } else {
      this.report(this.#unknownNamespace(parts.namespace, `tool ${JSON.stringify(name)}`, field));
    }
  }

  /** Checks that a v1/v2 server is a registered MCP provider. */
  mcpServer(namespace: string, field: string): boolean {
    try {
      validateNamespace(namespace);
    } catch (error) {
      this.report(prefixed(error, field));
      return false;
    }
    const owner = this.registry.namespaceOwner(namespace);
    if (owner === "mcp") return true;
    if (owner === "native") {
      this.report(
        new OpenWorkerError(
          CODES.notMcpNamespace,
          `${FILE}: field ${JSON.stringify(field)}: namespace ${JSON.stringify(namespace)} belongs to native tools, and ` +
            "version 1 and 2 bundles select MCP servers only; use version 3 to select native tools",
          { details: { field, namespace } },
        ),
      );
    } else {
      this.report(this.#unknownNamespace(namespace, `MCP server ${JSON.stringify(namespace)}`, field));
    }
    return false;
  }

  /** v1: every tool a server publishes, in catalog order; an unselectable remote name fails. */
  everyToolOf(namespace: string, field: string): void {
    if (!this.mcpServer(namespace, field)) return;
    const catalog = this.#catalog(namespace, `MCP server ${JSON.stringify(namespace)}`, field);
    if (!catalog) return;
    const provider = this.registry.provider(namespace)!;
    for (const entry of catalog.input.tools) {
      const name = `${namespace}.${entry.name}`;
      try {
        validateQualifiedName(name);
      } catch (cause) {
        this.report(
          new OpenWorkerError(
            CODES.remoteNameInvalid,
            `${FILE}: field ${JSON.stringify(field)}: MCP server ${JSON.stringify(namespace)} publishes tool ` +
              `${JSON.stringify(entry.name)}, which cannot be selected (${(cause as Error).message}); tools are never ` +
              "renamed or skipped, so fix the server's tool name or select its other tools with version 2 or 3",
            { cause, details: { field, namespace, tool: entry.name } },
          ),
        );
        continue;
      }
      this.#attempt(() => this.#add(resolveMcp(provider, entry, name), field), name);
    }
  }

  get tools(): readonly ResolvedTool[] {
    return this.#tools;
  }

  finish(): ResolvedSelection {
    const lines = this.#tools.map(identityLine);
    const fingerprint = `sha256:${sha256Hex(`${FINGERPRINT_FORMAT}\n${lines.join("\n")}`)}`;
    const byName = this.#byName;
    const byAlias = this.#byAlias;
    return Object.freeze({
      tools: Object.freeze(this.#tools),
      fingerprint,
      byAlias: (alias: string) => byAlias.get(alias),
      byName: (name: string) => byName.get(name),
    });
  }

  #add(tool: ResolvedTool, field: string): void {
    const earlier = this.#fields.get(tool.qualifiedName);
    if (earlier !== undefined) {
      this.report(
        new OpenWorkerError(
          CODES.selectionDuplicate,
          `${FILE}: field ${JSON.stringify(field)} selects ${JSON.stringify(tool.qualifiedName)} again (first at ${JSON.stringify(earlier)})`,
          { details: { field, name: tool.qualifiedName, earlier } },
        ),
      );
      return;
    }
    const clash = this.#byAlias.get(tool.alias);
    if (clash) {
      this.report(
        new OpenWorkerError(
          CODES.aliasCollision,
          `${FILE}: tools ${JSON.stringify(clash.qualifiedName)} and ${JSON.stringify(tool.qualifiedName)} both derive the ` +
            `model alias ${JSON.stringify(tool.alias)}; nothing is renamed: select only one of them or rename one`,
          { details: { field, name: tool.qualifiedName, other: clash.qualifiedName, alias: tool.alias } },
        ),
      );
      return;
    }
    this.#fields.set(tool.qualifiedName, field);
    this.#byName.set(tool.qualifiedName, tool);
    this.#byAlias.set(tool.alias, tool);
    this.#tools.push(tool);
  }

  #catalog(namespace: string, what: string, field: string): IndexedCatalog | undefined {
    const known = this.#indexes.get(namespace);
    if (known !== undefined) return known ?? undefined;
    const input = this.#catalogs.get(namespace);
    let indexed: IndexedCatalog | null = null;
    if (!input) {
      this.report(
        new OpenWorkerError(
          CODES.catalogMissing,
          `${FILE}: field ${JSON.stringify(field)}: ${what} needs the ` +
            `catalog of MCP provider ${JSON.stringify(namespace)}, and none was given; discover the providers providersNeeded() lists`,
          { details: { field, namespace } },
        ),
      );
    } else {
      this.#attempt(() => {
        indexed = indexCatalog(input);
      });
    }
    // A missing or broken catalog is reported once, not once per tool.
    this.#indexes.set(namespace, indexed);
    return indexed ?? undefined;
  }

  #notRegistered(name: string, namespace: string, field: string): OpenWorkerError {
    const names = this.registry.nativeNames(namespace);
    return new OpenWorkerError(
      CODES.toolNotRegistered,
      `${FILE}: field ${JSON.stringify(field)}: tool ${JSON.stringify(name)} is not registered by the host ` +
        `(namespace ${JSON.stringify(namespace)} has: ${preview(names)}); names are exact and case-sensitive: select one of those names or register the tool`,
      { details: { field, name, namespace } },
    );
  }

  #unknownNamespace(namespace: string, what: string, field: string): OpenWorkerError {
    const natives = new Set(this.registry.natives().map((tool) => tool.name.slice(0, tool.name.indexOf("."))));
    const known = [...natives, ...this.registry.providers().map((provider) => provider.namespace)].sort();
    return new OpenWorkerError(
      CODES.namespaceUnknown,
      `${FILE}: field ${JSON.stringify(field)}: ${what}: no native tool or MCP provider has namespace ` +
        `${JSON.stringify(namespace)} (registered namespaces: ${preview(known)}); register it or fix the name`,
      { details: { field, namespace } },
    );
  }

  #attempt(action: () => void, name?: string): void {
    try {
      action();
    } catch (error) {
      this.report(name === undefined && OpenWorkerError.isInstance(error) ? error : schemaFailure(name ?? "(catalogs)", error));
    }
  }
}

function notPublished(name: string, namespace: string, remote: string, catalog: IndexedCatalog, field: string): OpenWorkerError {
  return new OpenWorkerError(
    CODES.toolNotPublished,
    `${FILE}: field ${JSON.stringify(field)}: tool ${JSON.stringify(name)} is not published by MCP provider ` +
      `${JSON.stringify(namespace)} (published: ${preview([...catalog.byName.keys()])}); names are exact and case-sensitive: select one of the published names`,
    { details: { field, name, namespace, remoteName: remote } },
  );
}

/** Selections may be built by hand in JavaScript: refuse a wrong shape instead of throwing a TypeError. */
function shapeProblem(selection: BundleSelection): string | undefined {
  if (typeof selection !== "object" || selection === null) return "the selection must be an object";
  const { version } = selection as { version: unknown };
  if (selection.version === 3) return Array.isArray(selection.tools) ? undefined : 'selection field "tools" must be an array';
  if (selection.version === 1) return Array.isArray(selection.mcpServers) ? undefined : 'selection field "mcpServers" must be an array';
  if (selection.version === 2) {
    const servers: unknown = selection.mcpServers;
    if (typeof servers !== "object" || servers === null || Array.isArray(servers)) return 'selection field "mcpServers" must be an object';
    return Object.values(servers).every(Array.isArray) ? undefined : 'every server of selection field "mcpServers" must list tools in an array';
  }
  return `selection version ${JSON.stringify(version)} is not 1, 2 or 3`;
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  return Array.isArray(b) && a.length === b.length && a.every((item, index) => item === b[index]);
}

function prefixed(error: unknown, field: string): OpenWorkerError {
  if (!OpenWorkerError.isInstance(error)) throw error;
  return new OpenWorkerError(error.code, `${FILE}: field ${JSON.stringify(field)}: ${error.message}`, {
    cause: error,
    details: { ...error.details, field },
  });
}

function preview(names: readonly string[]): string {
  if (names.length === 0) return "nothing";
  const shown = names.slice(0, 8).join(", ");
  return names.length > 8 ? `${shown}, … ${names.length - 8} more` : shown;
}
