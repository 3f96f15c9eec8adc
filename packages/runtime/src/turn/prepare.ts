import { providersNeeded, resolveSelection, withoutProviders, type Bundle, type ResolvedSelection } from "@openworker/bundle-resolver";
import type { UnavailableProvider } from "@openworker/mcp-bridge";
import type { ToolRegistry } from "@openworker/registry";
import { OpenWorkerError } from "@openworker/tools-sdk";
import type { CallEnvironment } from "../call/environment.js";
import { RUNTIME_ERROR_CODES } from "../errors.js";
import type { ModelToolDefinition } from "../model/types.js";

/** What a turn shows the model and routes calls through. */
export interface PreparedTurn {
  readonly selection: ResolvedSelection;
  readonly tools: readonly ModelToolDefinition[];
  readonly catalogFingerprints: Readonly<Record<string, string>>;
  /** Providers that could not be reached: their tools are not shown this turn. */
  readonly unavailable: readonly UnavailableProvider[];
}

/**
 * Turn preparation (M2): discover the catalogs of the providers the bundle needs, in
 * parallel, then resolve exactly the bundle's selection against them. A provider that
 * cannot be reached makes only its own tools unavailable (reported, not fatal). Every
 * alias must fit the model provider's name limit, checked here before any model call.
 * The selection and catalog fingerprints are journaled under `turnId`.
 */
export async function prepareTurn(input: {
  environment: CallEnvironment;
  registry: ToolRegistry;
  bundle: Bundle;
  /** The turn (or host preparation) the fingerprints are journaled under. */
  turnId: string;
  maxToolNameLength: number | undefined;
  signal: AbortSignal;
}): Promise<PreparedTurn> {
  const { registry, bundle } = input;
  const { mcp, journal, sessionId } = input.environment;
  const namespaces = providersNeeded(registry, bundle.selection);
  const discovery = namespaces.length > 0 ? await mcp.discover(namespaces, { signal: input.signal }) : { catalogs: [], unavailable: [], diagnostics: [] };
  const down = new Set(discovery.unavailable.map((provider) => provider.namespace));
  const selection = resolveSelection(registry, withoutProviders(bundle.selection, down), discovery.catalogs);
  const limit = input.maxToolNameLength;
  if (limit !== undefined) {
    const tooLong = selection.tools.find((tool) => tool.alias.length > limit);
    if (tooLong) {
      throw new OpenWorkerError(
        RUNTIME_ERROR_CODES.ALIAS_TOO_LONG_FOR_PROVIDER,
        `tool ${JSON.stringify(tooLong.qualifiedName)} has the model alias ${JSON.stringify(tooLong.alias)} (${tooLong.alias.length} bytes), ` +
          `longer than the ${limit} bytes this model provider accepts; select a tool with a shorter name or use another provider`,
        { details: { tool: tooLong.qualifiedName, alias: tooLong.alias, limit } },
      );
    }
  }
  const catalogFingerprints: Record<string, string> = {};
  for (const catalog of discovery.catalogs) catalogFingerprints[catalog.namespace] = catalog.fingerprint;
  journal.turnPrepared({ sessionId, turnId: input.turnId, selectionFingerprint: selection.fingerprint, catalogFingerprints });
  return {
    selection,
    tools: selection.tools.map((tool) => ({ name: tool.alias, description: tool.descriptor.description, inputSchema: tool.descriptor.inputSchema })),
    catalogFingerprints,
    unavailable: discovery.unavailable,
  };
}
