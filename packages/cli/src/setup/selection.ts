import type { Bundle, BundleSelection, ResolvedTool } from "@openworker/bundle-resolver";
import type { McpCatalog, McpCatalogTool, McpToolIcon, SandboxLauncher } from "@openworker/mcp-bridge";
import { providerSecrets, redact } from "@openworker/mcp-bridge/redact";
import { authorizeHint } from "./authorization.js";
import type { ToolRegistry } from "@openworker/registry";
import type { ModelProvider } from "@openworker/runtime";
import { modelAlias, OpenWorkerError, utf8Bytes, validateQualifiedName, type JsonObject, type JsonValue } from "@openworker/tools-sdk";
import type { Terminal } from "../cli/terminal.js";
import { indexesWithoutProviders, relabel, type EntryIndexes } from "./entry-indexes.js";
import { providerProgress } from "./provider-progress.js";

/** One selected tool as `tools list --bundle` and `tools check` show it. */
export interface SelectionRow {
  readonly qualifiedName: string;
  readonly alias: string;
  readonly kind: "native" | "mcp";
  /** Descriptor version (for MCP tools: the catalog fingerprint); null when not discovered. */
  readonly version: string | null;
  /** `sha256:` fingerprint of the input schema; null when not discovered. */
  readonly schemaFingerprint: string | null;
  /** The MCP provider's namespace. */
  readonly provider?: string;
  /** False for MCP tools of a provider that was not started (listing without `--discover`). */
  readonly discovered: boolean;
  /** A discovered MCP tool's display title, annotations, icons and `_meta`, as the bridge keeps them (bounded, redacted). */
  readonly title?: string;
  readonly annotations?: JsonValue;
  readonly icons?: readonly McpToolIcon[];
  readonly _meta?: JsonObject;
}

/** A tool a discovered provider publishes that a session does not offer (it requires MCP tasks). */
export interface NotOfferedTool {
  readonly qualifiedName: string;
  readonly provider: string;
  /** Why, as a clause. */
  readonly reason: string;
}

/** A problem of a bundle, as `tools check` lists it. */
export interface SelectionProblem {
  readonly code: string;
  readonly message: string;
}

/** How to inspect a bundle; with a `terminal`, a provider slow to start is announced on its stderr. */
interface InspectOptions {
  readonly discover: boolean;
  readonly signal: AbortSignal;
  readonly sandbox?: SandboxLauncher | undefined;
  readonly model?: ModelProvider | undefined;
  readonly fileIndexes?: EntryIndexes;
  readonly terminal?: Pick<Terminal, "note">;
  /** The OAuth token store of providers authorized with `auth login` (M8). */
  readonly tokenStore?: string;
  /** How the program is called, for the hint to authorize a provider. */
  readonly program?: string;
}

/** What inspecting a bundle found. */
export interface SelectionReport {
  readonly rows: readonly SelectionRow[];
  readonly problems: readonly SelectionProblem[];
  /** The resolved tools (when there is no problem), for serving them. */
  readonly tools: readonly ResolvedTool[];
  /** Tools of the discovered providers that are not offered, selected or not. */
  readonly notOffered: readonly NotOfferedTool[];
}

/**
 * Resolves a bundle's selection against the registry the way a turn does (B2, B4, B5,
 * N6, N7), but collecting every problem. With `discover`, the MCP providers the bundle
 * needs are started, discovered in parallel (M2) and closed again with verified cleanup
 * (M4); without it no process starts and MCP tools are listed as not discovered. With a
 * `model`, every selected alias longer than its `maxToolNameLength` is a problem too (N4),
 * as a turn with that model would refuse it. Problems name entries by their index in
 * tools.json, also for entries after ones left out (`fileIndexes`: where the entries of a
 * selection reduced by the parser stand in the file). Rows and problems are for printing:
 * the providers' secrets are masked in them (E6), as a server may publish a tool name
 * holding one; `tools` keeps the names as published, for calls.
 */
export async function inspectSelection(registry: ToolRegistry, bundle: Pick<Bundle, "selection">, options: InspectOptions): Promise<SelectionReport> {
  const report = await inspect(registry, bundle, options);
  const secrets = registry
    .providers()
    .flatMap((provider) => providerSecrets(provider))
    .sort((a, b) => b.length - a.length);
  return {
    rows: report.rows.map((row) => ({ ...row, qualifiedName: redact(row.qualifiedName, secrets), alias: redact(row.alias, secrets) })),
    problems: report.problems.map((problem) => ({ code: problem.code, message: redact(problem.message, secrets) })),
    tools: report.tools,
    notOffered: report.notOffered.map((tool) => ({ ...tool, qualifiedName: redact(tool.qualifiedName, secrets) })),
  };
}

async function inspect(registry: ToolRegistry, bundle: Pick<Bundle, "selection">, options: InspectOptions): Promise<SelectionReport> {
  const { BUNDLE_ERROR_CODES, BUNDLE_FILES, checkSelection, providersNeeded, resolveSelection, withoutProviders } = await import("@openworker/bundle-resolver");
  registry.freeze();
  const needed = providersNeeded(registry, bundle.selection);
  const problems: SelectionProblem[] = [];
  let catalogs: readonly McpCatalog[] = [];
  let skipped = new Set(needed);
  if (options.discover && needed.length > 0) {
    const discovery = await discoverCatalogs(registry, needed, options);
    // Stopped (Ctrl-C, SIGTERM): the providers are closed and verified; report the stop, not "cancelled" problems.
    if (options.signal.aborted) throw options.signal.reason;
    catalogs = discovery.catalogs;
    skipped = new Set(discovery.unavailable.map((provider) => provider.namespace));
    for (const provider of discovery.unavailable) problems.push({ code: provider.code, message: provider.message });
  }
  const reduced = withoutProviders(bundle.selection, skipped);
  const indexes = indexesWithoutProviders(bundle.selection, skipped, options.fileIndexes);
  const notOffered = catalogs.flatMap((catalog) =>
    catalog.withheldTools.map((tool) => ({ qualifiedName: `${catalog.namespace}.${tool.name}`, provider: catalog.namespace, reason: tool.reason })),
  );
  const withheld = new Map(notOffered.map((tool) => [tool.qualifiedName, tool.reason]));
  for (const problem of checkSelection(registry, reduced, catalogs)) {
    const { code, message } = describe(problem);
    // Selected and published, but not offered: say why rather than "not published".
    const notPublished = OpenWorkerError.isInstance(problem) && code === BUNDLE_ERROR_CODES.toolNotPublished ? problem.details : undefined;
    const reason = typeof notPublished?.name === "string" ? withheld.get(notPublished.name) : undefined;
    const said =
      reason === undefined
        ? message
        : `${BUNDLE_FILES.tools}: field ${JSON.stringify(notPublished!.field)}: tool ${JSON.stringify(notPublished!.name)} is published by MCP provider ` +
          `${JSON.stringify(notPublished!.namespace)} but not offered: ${reason}; deselect it`;
    problems.push({ code, message: relabel(said, indexes) });
  }
  const limit = options.model?.maxToolNameLength;
  if (problems.length > 0) {
    // Names the selection spells out are checked even so, so that one run lists every problem.
    if (limit !== undefined) problems.push(...(await aliasProblems(namedTools(bundle.selection), options.model!, limit)));
    return { rows: [], problems, tools: [], notOffered };
  }
  const resolved = resolveSelection(registry, reduced, catalogs);
  if (limit !== undefined) {
    const tooLong = await aliasProblems(
      resolved.tools.map((tool) => tool.qualifiedName),
      options.model!,
      limit,
    );
    if (tooLong.length > 0) return { rows: [], problems: tooLong, tools: [], notOffered };
  }
  const published = new Map(catalogs.map((catalog) => [catalog.namespace, new Map(catalog.tools.map((tool) => [tool.name, tool]))]));
  const rows = resolved.tools.map((tool) => row(tool, tool.kind === "mcp" ? published.get(tool.provider.namespace)?.get(tool.remoteName) : undefined));
  for (const name of skippedNames(bundle.selection, skipped)) {
    const namespace = name.slice(0, name.indexOf("."));
    rows.push({
      qualifiedName: name,
      alias: name.endsWith(".*") ? `${namespace}__*` : modelAlias(name),
      kind: "mcp",
      version: null,
      schemaFingerprint: null,
      provider: namespace,
      discovered: false,
    });
  }
  return { rows, problems, tools: resolved.tools, notOffered };
}

async function discoverCatalogs(registry: ToolRegistry, namespaces: readonly string[], { signal, sandbox, terminal, tokenStore, program }: InspectOptions) {
  const { FileTokenStore, McpBridge } = await import("@openworker/mcp-bridge");
  const onProviderStart = terminal ? providerProgress((text) => terminal.note(text)) : undefined;
  const bridge = new McpBridge(registry.providers(), {
    ...(sandbox ? { sandbox } : {}),
    ...(onProviderStart ? { onProviderStart } : {}),
    ...(tokenStore ? { authorization: { store: new FileTokenStore(tokenStore), ...(program ? { howToAuthorize: authorizeHint(program) } : {}) } } : {}),
  });
  try {
    return await bridge.openSession("openworker-cli-tools").discover(namespaces, { signal });
  } finally {
    await bridge.dispose();
    await bridge.joinCleanup();
  }
}

/** A resolved tool's row; an MCP tool's shows what a host UI shows of its catalog entry (M5, M7). */
function row(tool: ResolvedTool, entry: McpCatalogTool | undefined): SelectionRow {
  return {
    qualifiedName: tool.qualifiedName,
    alias: tool.alias,
    kind: tool.kind,
    version: tool.descriptor.version,
    schemaFingerprint: tool.schemaFingerprint,
    ...(tool.kind === "mcp" ? { provider: tool.provider.namespace } : {}),
    discovered: true,
    ...(entry?.title === undefined ? {} : { title: entry.title }),
    ...(entry?.annotations === undefined ? {} : { annotations: entry.annotations }),
    ...(entry?.icons === undefined ? {} : { icons: entry.icons }),
    ...(entry?._meta === undefined ? {} : { _meta: entry._meta }),
  };
}

function describe(problem: unknown): SelectionProblem {
  if (OpenWorkerError.isInstance(problem)) return { code: problem.code, message: problem.message };
  return { code: "INTERNAL", message: problem instanceof Error ? problem.message : String(problem) };
}

/**
 * `ALIAS_TOO_LONG_FOR_PROVIDER` for each well-formed name whose model alias is longer than
 * the model provider accepts: the check a turn makes before it asks the model (N4).
 */
async function aliasProblems(names: readonly string[], model: ModelProvider, limit: number): Promise<SelectionProblem[]> {
  const { RUNTIME_ERROR_CODES } = await import("@openworker/runtime");
  const problems: SelectionProblem[] = [];
  for (const name of new Set(names)) {
    if (!isQualifiedName(name)) continue;
    const alias = modelAlias(name);
    const bytes = utf8Bytes(alias);
    if (bytes <= limit) continue;
    problems.push({
      code: RUNTIME_ERROR_CODES.ALIAS_TOO_LONG_FOR_PROVIDER,
      message:
        `tool ${JSON.stringify(name)} has the model alias ${JSON.stringify(alias)} (${bytes} bytes), longer than the ${limit} bytes ` +
        `model provider ${JSON.stringify(model.id)} accepts (maxToolNameLength): every turn would fail; shorten the tool's qualified name or deselect it`,
    });
  }
  return problems;
}

/** True when a name passes the naming rules (a bad one is reported as such, not as too long for a model). */
function isQualifiedName(name: string): boolean {
  try {
    validateQualifiedName(name);
    return true;
  } catch {
    return false;
  }
}

/** The tools a selection names one by one (v3, v2); a v1 server's tools are known only once resolved. */
export function namedTools(selection: BundleSelection): string[] {
  switch (selection.version) {
    case 3:
      return [...selection.tools];
    case 2:
      return Object.entries(selection.mcpServers).flatMap(([server, tools]) => tools.map((tool) => `${server}.${tool}`));
    case 1:
      return [];
  }
}

/** Names of the skipped providers' tools, as the bundle selects them (`acer.*` for a v1 server). */
function skippedNames(selection: BundleSelection, skipped: ReadonlySet<string>): string[] {
  switch (selection.version) {
    case 3:
      return selection.tools.filter((name) => skipped.has(name.slice(0, name.indexOf("."))));
    case 2:
      return Object.entries(selection.mcpServers).flatMap(([server, tools]) => (skipped.has(server) ? tools.map((tool) => `${server}.${tool}`) : []));
    case 1:
      return selection.mcpServers.filter((server) => skipped.has(server)).map((server) => `${server}.*`);
  }
}
