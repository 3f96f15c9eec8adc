import { providersNeeded, resolveSelection, withoutProviders, type Bundle, type ResolvedSelection } from "@openworker/bundle-resolver";
import type { UnavailableProvider } from "@openworker/mcp-bridge";
import type { ToolRegistry } from "@openworker/registry";
import { modelAlias, OpenWorkerError, validateQualifiedName } from "@openworker/tools-sdk";
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
  /**
   * What the model is told of them, after the coworker's instructions (undefined when
   * every provider was reached): the selected tools it will not find this turn.
   */
  readonly unavailableNotice: string | undefined;
  /**
   * The selected tools of unreachable providers, by model alias (`tools`), and those
   * providers the bundle takes whole (v1, `whole`: any tool of theirs is selected): a call
   * to one is refused and journaled under the tool's name.
   */
  readonly unavailableTools: { readonly tools: ReadonlyMap<string, string>; readonly whole: ReadonlySet<string> };
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
  // Cancelled while discovering: the providers it could not wait for are not down, so no
  // selection without them may stand in for the session's latest (host calls use it).
  if (input.signal.aborted) throw input.signal.reason;
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
    // A description is text the model reads: redacted like a result (E6); the bridge masked its provider's secrets already.
    tools: selection.tools.map((tool) => ({
      name: tool.alias,
      description: input.environment.redactor.text(tool.descriptor.description),
      inputSchema: tool.descriptor.inputSchema,
    })),
    catalogFingerprints,
    unavailable: discovery.unavailable,
    unavailableNotice: unavailableNotice(bundle.selection, discovery.unavailable),
    unavailableTools: unavailableTools(bundle.selection, discovery.unavailable),
  };
}

/**
 * The selected tools of unreachable providers, as the model would have called them: the
 * tools are not in this turn's list, and the instructions may still name them, so the
 * model is told rather than left to call an alias that is not there (UNKNOWN_TOOL).
 */
function unavailableNotice(selection: Bundle["selection"], unavailable: readonly UnavailableProvider[]): string | undefined {
  const lines = unavailable.flatMap(({ namespace }) => {
    const named = selectedOf(selection, namespace);
    if (named === undefined) return [`- every tool of ${namespace} (${namespace}__*)`];
    return named.length === 0 ? [] : [`- ${named.map(modelAlias).join(", ")}`];
  });
  return lines.length === 0 ? undefined : `${UNAVAILABLE_HEADING}\n${lines.join("\n")}`;
}

/** See {@link PreparedTurn.unavailableTools}. */
function unavailableTools(selection: Bundle["selection"], unavailable: readonly UnavailableProvider[]): PreparedTurn["unavailableTools"] {
  const tools = new Map<string, string>();
  const whole = new Set<string>();
  for (const { namespace } of unavailable) {
    const named = selectedOf(selection, namespace);
    if (named === undefined) whole.add(namespace);
    else for (const name of named) tools.set(modelAlias(name), name);
  }
  return { tools, whole };
}

/**
 * The selected tool of a down provider that the host (`qualifiedName`) or the model
 * (`alias`) names, if it is one. For a provider the bundle takes whole, any name under it
 * is selected, so the name given is only trusted as far as the naming rules go: one that
 * is not a valid qualified name (too long, odd characters) is not named at all.
 */
function unavailableToolOf(prepared: PreparedTurn, tool: { qualifiedName: string } | { alias: string }, namespace: string): string | undefined {
  const alias = "qualifiedName" in tool ? modelAlias(tool.qualifiedName) : tool.alias;
  const named = prepared.unavailableTools.tools.get(alias);
  if (named !== undefined) return "qualifiedName" in tool && named !== tool.qualifiedName ? undefined : named;
  if (!prepared.unavailableTools.whole.has(namespace)) return undefined;
  // A provider the bundle takes whole: the model's alias is `<namespace>__<remote name>`,
  // the remote name's dots written `__` too, so an alias with another `__` could be either.
  const remote = alias.slice(namespace.length + 2);
  if (!("qualifiedName" in tool) && remote.includes("__")) return undefined;
  const name = "qualifiedName" in tool ? tool.qualifiedName : `${namespace}.${remote}`;
  try {
    validateQualifiedName(name);
    return name;
  } catch {
    return undefined;
  }
}

/**
 * The refusal of a call to a tool whose MCP provider was unavailable at `prepared`:
 * journaled as a failed call that never ran, with the provider's own reason. The tool is
 * named as the host names it (`qualifiedName`) or as the model does (`alias`); for an
 * alias, only one the selection does not hold, under the namespace of a provider that
 * is down (`acer__…`: a namespace is one provider's, N5).
 */
export function unavailableRefusal(
  prepared: PreparedTurn,
  tool: { qualifiedName: string } | { alias: string },
): { code: string; message: string; qualifiedName?: string } | undefined {
  if (prepared.unavailable.length === 0) return undefined;
  const down =
    "qualifiedName" in tool
      ? prepared.unavailable.find((provider) => tool.qualifiedName.startsWith(`${provider.namespace}.`))
      : prepared.selection.byAlias(tool.alias) === undefined
        ? prepared.unavailable.find((provider) => tool.alias.startsWith(`${provider.namespace}__`))
        : undefined;
  if (down === undefined) return undefined;
  const message = `MCP provider ${JSON.stringify(down.namespace)} is unavailable (${down.code}: ${down.message}); the call was not made, try it again later`;
  const qualifiedName = unavailableToolOf(prepared, tool, down.namespace);
  return { code: RUNTIME_ERROR_CODES.PROVIDER_UNAVAILABLE, message, ...(qualifiedName === undefined ? {} : { qualifiedName }) };
}

/** The heading of the notice of unreachable providers' tools, in the system prompt. */
export const UNAVAILABLE_HEADING = "Unavailable this turn (their provider could not be reached; do not call them, and tell the user if the task needs them):";

/** The qualified names a selection lists under `namespace`; undefined when it takes the provider whole. */
function selectedOf(selection: Bundle["selection"], namespace: string): string[] | undefined {
  if (selection.version === 3) return selection.tools.filter((name) => name.startsWith(`${namespace}.`));
  if (selection.version === 2)
    return (Object.hasOwn(selection.mcpServers, namespace) ? selection.mcpServers[namespace]! : []).map((tool) => `${namespace}.${tool}`);
  return undefined;
}
