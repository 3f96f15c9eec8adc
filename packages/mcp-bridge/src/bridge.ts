import type { McpProviderDefinition } from "@openworker/registry";
import { OpenWorkerError, validateNamespace } from "@openworker/tools-sdk";
import { CleanupLedger } from "./cleanup.js";
import { MCP_ERROR_CODES } from "./codes.js";
import { buildInventory, type McpInventoryRequest, type McpToolInventory } from "./inventory.js";
import { resolveOptions, type McpBridgeOptions, type ResolvedOptions } from "./options.js";
import { StartGate } from "./process/start-gate.js";
import { describeLaunch } from "./launch-description.js";
import { providerSecrets } from "./redact.js";
import { BridgeSession, type SessionHost } from "./session.js";
import type { McpSession } from "./types.js";
import type { McpCatalog } from "./types.js";

/**
 * The runtime's only door to MCP servers (M1–M5): it holds the registered provider
 * definitions, opens per-session connections on discovery, and owns the verified
 * cleanup of every process it started. Constructing it starts nothing.
 *
 * @example
 * ```ts
 * const bridge = new McpBridge([{ transport: "stdio", namespace: "acer", program: "bin/acer-mcp-launcher", args: [] }]);
 * const session = bridge.openSession("session-1");
 * const { catalogs } = await session.discover(["acer"]);
 * await bridge.dispose();
 * await bridge.joinCleanup(); // rejects if any process could not be confirmed gone
 * ```
 */
export class McpBridge {
  private readonly providers = new Map<string, McpProviderDefinition>();
  private readonly secretsByNamespace = new Map<string, readonly string[]>();
  private readonly sessions = new Map<string, BridgeSession>();
  private readonly options: ResolvedOptions;
  private readonly ledger = new CleanupLedger();
  private readonly host: SessionHost;
  private disposing: Promise<void> | undefined;

  /** Throws `MCP_PROVIDER_DUPLICATE` when two definitions share a namespace (N5). */
  constructor(providers: readonly McpProviderDefinition[], options: McpBridgeOptions = {}) {
    this.options = resolveOptions(options);
    for (const provider of providers) {
      validateNamespace(provider.namespace);
      if (this.providers.has(provider.namespace)) {
        throw new OpenWorkerError(
          MCP_ERROR_CODES.providerDuplicate,
          `MCP provider namespace "${provider.namespace}" is registered twice (${describeLaunch(this.providers.get(provider.namespace) as McpProviderDefinition)} and ${describeLaunch(provider)}); each provider needs its own namespace`,
          { details: { namespace: provider.namespace } },
        );
      }
      this.providers.set(provider.namespace, provider);
      this.secretsByNamespace.set(provider.namespace, providerSecrets(provider));
    }
    this.host = {
      options: this.options,
      ledger: this.ledger,
      starts: new StartGate(this.options.maxConcurrentStarts, this.options.maxStartTurnMs),
      provider: (namespace) => this.providers.get(namespace),
      secrets: (namespace) => this.secretsByNamespace.get(namespace) ?? [],
      registeredNamespaces: () => [...this.providers.keys()].sort(),
      sessionClosed: (session) => {
        if (this.sessions.get(session.sessionId) === session) this.sessions.delete(session.sessionId);
      },
    };
  }

  /**
   * Opens (or returns the open) MCP session `sessionId`. Nothing starts until its
   * first `discover()`. Throws `MCP_BRIDGE_DISPOSED` after `dispose()`.
   */
  openSession(sessionId: string): McpSession {
    if (this.disposing) {
      throw new OpenWorkerError(MCP_ERROR_CODES.bridgeDisposed, `the MCP bridge was disposed; session "${sessionId}" cannot open`, { details: { sessionId } });
    }
    const open = this.sessions.get(sessionId);
    if (open && !open.closed) return open;
    const session = new BridgeSession(sessionId, this.host);
    this.sessions.set(sessionId, session);
    return session;
  }

  /**
   * The read-only MCP tool inventory (M5, I2): only connections already bound and
   * live; it never starts a process. `undefined` when there is no live catalog.
   */
  inventory(request: McpInventoryRequest = {}): McpToolInventory | undefined {
    const latest = new Map<string, { catalog: McpCatalog; discoveredAt: number }>();
    const sessions = request.sessionId === undefined ? [...this.sessions.values()] : [this.sessions.get(request.sessionId)].filter((s) => s !== undefined);
    for (const session of sessions) {
      for (const entry of session.liveCatalogs()) {
        const known = latest.get(entry.catalog.namespace);
        if (!known || known.discoveredAt <= entry.discoveredAt) latest.set(entry.catalog.namespace, entry);
      }
    }
    const catalogs = new Map([...latest].map(([namespace, entry]) => [namespace, entry.catalog]));
    return buildInventory(catalogs, (namespace) => describeLaunch(this.providers.get(namespace) as McpProviderDefinition), request);
  }

  /** Closes every session (whole process trees). Idempotent; failures surface through `joinCleanup()`. */
  dispose(): Promise<void> {
    if (!this.disposing) {
      this.disposing = Promise.all([...this.sessions.values()].map((session) => session.close())).then(() => undefined);
    }
    return this.disposing;
  }

  /**
   * Waits for every cleanup already requested by any session; rejects with
   * `MCP_CLEANUP_UNCONFIRMED` if any failed or could not be confirmed, and keeps
   * rejecting for later callers (M4).
   */
  joinCleanup(): Promise<void> {
    return this.ledger.join();
  }
}
