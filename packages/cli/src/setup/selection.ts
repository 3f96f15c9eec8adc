import type { Bundle, BundleSelection, ResolvedTool } from "@openworker/bundle-resolver";
import type { SandboxLauncher } from "@openworker/mcp-bridge";
import type { ToolRegistry } from "@openworker/registry";
import { modelAlias, OpenWorkerError } from "@openworker/tools-sdk";

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
}

/** A problem of a bundle, as `tools check` lists it. */
export interface SelectionProblem {
  readonly code: string;
  readonly message: string;
}

/** What inspecting a bundle found. */
export interface SelectionReport {
  readonly rows: readonly SelectionRow[];
  readonly problems: readonly SelectionProblem[];
  /** The resolved tools (when there is no problem), for serving them. */
  readonly tools: readonly ResolvedTool[];
}

/**
 * Resolves a bundle's selection against the registry the way a turn does (B2, B4, B5,
 * N6, N7), but collecting every problem. With `discover`, the MCP providers the bundle
 * needs are started, discovered in parallel (M2) and closed again with verified cleanup
 * (M4); without it no process starts and MCP tools are listed as not discovered.
 */
export async function inspectSelection(
  registry: ToolRegistry,
  bundle: Pick<Bundle, "selection">,
  options: { discover: boolean; signal: AbortSignal; sandbox?: SandboxLauncher | undefined },
): Promise<SelectionReport> {
  const { checkSelection, providersNeeded, resolveSelection, withoutProviders } = await import("@openworker/bundle-resolver");
  registry.freeze();
  const needed = providersNeeded(registry, bundle.selection);
  const problems: SelectionProblem[] = [];
  let catalogs: readonly import("@openworker/bundle-resolver").McpCatalogInput[] = [];
  let skipped = new Set(needed);
  if (options.discover && needed.length > 0) {
    const discovery = await discoverCatalogs(registry, needed, options.signal, options.sandbox);
    // Stopped (Ctrl-C, SIGTERM): the providers are closed and verified; report the stop, not "cancelled" problems.
    if (options.signal.aborted) throw options.signal.reason;
    catalogs = discovery.catalogs;
    skipped = new Set(discovery.unavailable.map((provider) => provider.namespace));
    for (const provider of discovery.unavailable) problems.push({ code: provider.code, message: provider.message });
  }
  const reduced = withoutProviders(bundle.selection, skipped);
  for (const problem of checkSelection(registry, reduced, catalogs)) problems.push(describe(problem));
  if (problems.length > 0) return { rows: [], problems, tools: [] };
  const resolved = resolveSelection(registry, reduced, catalogs);
  const rows = resolved.tools.map(row);
  for (const name of skippedNames(bundle.selection, skipped)) {
    const namespace = name.slice(0, name.indexOf("."));
    rows.push({ qualifiedName: name, alias: name.endsWith(".*") ? `${namespace}__*` : modelAlias(name), kind: "mcp", version: null, schemaFingerprint: null, provider: namespace, discovered: false });
  }
  return { rows, problems, tools: resolved.tools };
}

async function discoverCatalogs(registry: ToolRegistry, namespaces: readonly string[], signal: AbortSignal, sandbox: SandboxLauncher | undefined) {
  const { McpBridge } = await import("@openworker/mcp-bridge");
  const bridge = new McpBridge(registry.providers(), sandbox ? { sandbox } : {});
  try {
    return await bridge.openSession("openworker-cli-tools").discover(namespaces, { signal });
  } finally {
    await bridge.dispose();
    await bridge.joinCleanup();
  }
}

function row(tool: ResolvedTool): SelectionRow {
  return {
    qualifiedName: tool.qualifiedName,
    alias: tool.alias,
    kind: tool.kind,
    version: tool.descriptor.version,
    schemaFingerprint: tool.schemaFingerprint,
    ...(tool.kind === "mcp" ? { provider: tool.provider.namespace } : {}),
    discovered: true,
  };
}

function describe(problem: unknown): SelectionProblem {
  if (OpenWorkerError.isInstance(problem)) return { code: problem.code, message: problem.message };
  return { code: "INTERNAL", message: problem instanceof Error ? problem.message : String(problem) };
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
