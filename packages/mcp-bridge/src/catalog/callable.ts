import { OutputContract } from "../call/validate.js";
import type { ProviderConnection } from "../connection/connection.js";
import type { McpCatalog, McpCatalogTool, McpWithheldTool } from "../types.js";

// A session's catalogs as calls meet them: which tools a call may reach, with what
// contract, and the words for a call that may not.

export interface CurrentCatalog {
  readonly catalog: McpCatalog;
  /** The callable tools by remote name, each with its catalog entry's fingerprint and `outputSchema` contract. */
  readonly tools: ReadonlyMap<string, CallableTool>;
  readonly connection: ProviderConnection;
  readonly discoveredAt: number;
  /** The connection's change count when this catalog's listing began (see `ProviderConnection.changeCount`). */
  readonly listedAt: number;
  /**
   * The server forgot the session, and the new one publishes another catalog: calls fail
   * unsent until the next discovery takes it (without listing again for each call).
   */
  readonly superseded?: boolean;
}

/**
 * The callable tools of a catalog, by name, each with its output contract: an unchanged
 * tool (same fingerprint) keeps the contract it had, compiled or not, so rediscovery
 * compiles nothing again.
 */
export function callableTools(tools: readonly McpCatalogTool[], before: ReadonlyMap<string, CallableTool> | undefined): Map<string, CallableTool> {
  const callable = new Map<string, CallableTool>();
  for (const tool of tools) {
    const known = before?.get(tool.name);
    const asTask = tool.execution?.taskSupport === "required" || tool.execution?.taskSupport === "optional";
    if (known && known.fingerprint === tool.fingerprint && known.asTask === asTask) callable.set(tool.name, known);
    else
      callable.set(tool.name, {
        fingerprint: tool.fingerprint,
        output: tool.outputSchema === undefined ? null : new OutputContract(tool.outputSchema, tool.fingerprint),
        asTask,
      });
  }
  return callable;
}

/** A tool of the session's current catalog: its entry's fingerprint (M3) and its `outputSchema` contract (null: none). */
export interface CallableTool {
  readonly fingerprint: string;
  readonly output: OutputContract | null;
  /** The tool asks for or allows MCP tasks (`execution.taskSupport`): it runs as one where the connection can (M10). */
  readonly asTask: boolean;
}

/** A catalog as discovery takes it, with the provider's change count when its listing began. */
export interface ListedCatalog {
  readonly catalog: McpCatalog;
  readonly listedAt: number;
}

export function notPublished(namespace: string, remoteName: string, entry: CurrentCatalog | undefined): string {
  if (!entry) {
    return `MCP tool "${namespace}.${remoteName}" was not called: provider "${namespace}" has no catalog in this session; discover it first`;
  }
  const names = [...entry.tools.keys()];
  const shown = names.slice(0, 10).join(", ") + (names.length > 10 ? `, … (${names.length} in all)` : "");
  return `MCP tool "${namespace}.${remoteName}" was not called: provider "${namespace}" does not publish "${remoteName}" in this session's catalog (published: ${shown || "none"})`;
}

export function changedMessage(namespace: string, remoteName: string): string {
  return (
    `MCP tool "${namespace}.${remoteName}" was not called: its provider's catalog changed what the tool says or takes since the call was ` +
    "approved; the next turn's preparation takes the new catalog, and asks for approval again"
  );
}

export function supersededMessage(namespace: string, remoteName: string): string {
  return (
    `MCP tool "${namespace}.${remoteName}" was not called: its provider's server forgot the MCP session, and the new session publishes ` +
    "a different catalog, which the call was not approved for; the session's next discovery takes it"
  );
}

/** Names shown in one diagnostic at most: a provider may withhold thousands. */
export const WITHHELD_SHOWN = 20;

/** The discovery diagnostic naming the tools a provider publishes and the session does not offer (M2, M7). */
export function withheldMessage(namespace: string, withheld: readonly McpWithheldTool[]): string {
  const byReason = new Map<string, string[]>();
  for (const tool of withheld) {
    const names = byReason.get(tool.reason);
    if (names) names.push(tool.name);
    else byReason.set(tool.reason, [tool.name]);
  }
  const parts = [...byReason].map(([reason, names]) => {
    const shown =
      names
        .slice(0, WITHHELD_SHOWN)
        .map((name) => JSON.stringify(name))
        .join(", ") + (names.length > WITHHELD_SHOWN ? `, … (${names.length} in all)` : "");
    return `${names.length === 1 ? "tool" : "tools"} ${shown}: ${reason}`;
  });
  return `MCP provider "${namespace}" publishes ${withheld.length === 1 ? "a tool" : `${withheld.length} tools`} not offered to the model or the bundle: ${parts.join("; ")}`;
}
