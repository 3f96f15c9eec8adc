import { setMaxListeners } from "node:events";
import type { McpProviderDefinition } from "@openworker/registry";
import { OpenWorkerError, type ProgressReporter } from "@openworker/tools-sdk";
import { createBoundedProgress, onAbort, untilAborted, withProgressLimit } from "@openworker/tools-sdk/internal/execution";
import { callProvider } from "./call/call-tool.js";
import { failedCall, type SettledCall } from "./call/result.js";
import { buildCatalog, offeredTools } from "./catalog/catalog.js";
import { CleanupLedger } from "./cleanup.js";
import { MCP_ERROR_CODES } from "./codes.js";
import { ProviderConnection } from "./connection/connection.js";
import { waitForStart, type PendingStart } from "./connection/shared-start.js";
import {
  callableTools,
  changedMessage,
  notPublished,
  supersededMessage,
  withheldMessage,
  type CurrentCatalog,
  type ListedCatalog,
} from "./catalog/callable.js";
import { providerBounds, type ResolvedOptions } from "./options.js";
import type { StartGate } from "./process/start-gate.js";
import { redact } from "./redact.js";
import { announceStart } from "./start-events.js";
import type { McpSession, DiscoveryResult, McpCallOptions, McpCallResult, McpCatalog, ProviderDiagnostic, UnavailableProvider } from "./types.js";

/** What a session needs from its bridge. */
export interface SessionHost {
  readonly options: ResolvedOptions;
  readonly ledger: CleanupLedger;
  /** Stdio provider starts, taken in turns across the bridge's sessions. */
  readonly starts: StartGate;
  provider(namespace: string): McpProviderDefinition | undefined;
  secrets(namespace: string): readonly string[];
  registeredNamespaces(): readonly string[];
  sessionClosed(session: BridgeSession): void;
}

type Discovered =
  | { readonly ok: true; readonly catalog: McpCatalog; readonly diagnostics: readonly ProviderDiagnostic[] }
  | { readonly ok: false; readonly unavailable: UnavailableProvider };

/** The {@link McpSession} implementation. */
export class BridgeSession implements McpSession {
  readonly ledger: CleanupLedger;
  private readonly connections = new Map<string, ProviderConnection>();
  private readonly connecting = new Map<string, PendingStart>();
  private readonly current = new Map<string, CurrentCatalog>();
  // The last catalog discovered per namespace, kept across failures and reconnects so
  // that changedTools always compares with what the session last saw (M3).
  private readonly baseline = new Map<string, McpCatalog>();
  private readonly closer = new AbortController();
  private closing: Promise<void> | undefined;

  constructor(
    readonly sessionId: string,
    private readonly host: SessionHost,
  ) {
    this.ledger = new CleanupLedger(host.ledger);
    // Every concurrent discovery links its signal to this one.
    setMaxListeners(0, this.closer.signal);
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  async discover(namespaces: readonly string[], options: { readonly signal?: AbortSignal } = {}): Promise<DiscoveryResult> {
    this.assertOpen();
    const unique = [...new Set(namespaces)];
    const results = await Promise.all(unique.map((namespace) => this.discoverOne(namespace, options.signal)));
    const catalogs: McpCatalog[] = [];
    const unavailable: UnavailableProvider[] = [];
    const diagnostics: ProviderDiagnostic[] = [];
    for (const result of results) {
      if (result.ok) {
        catalogs.push(result.catalog);
        diagnostics.push(...result.diagnostics);
      } else unavailable.push(result.unavailable);
    }
    return { catalogs, unavailable, diagnostics };
  }

  private async discoverOne(namespace: string, callerSignal: AbortSignal | undefined): Promise<Discovered> {
    const definition = this.host.provider(namespace);
    if (!definition) {
      const registered = this.host.registeredNamespaces();
      return unavailable(
        namespace,
        MCP_ERROR_CODES.providerUnknown,
        `no MCP provider is registered for namespace "${namespace}" (registered: ${registered.length > 0 ? registered.join(", ") : "none"})`,
      );
    }
    // Cancelled before it began: nothing starts (M4).
    if (callerSignal?.aborted)
      return unavailable(namespace, MCP_ERROR_CODES.discoveryCancelled, `discovery of MCP provider "${namespace}" was cancelled before it began`);
    let connection: ProviderConnection | undefined;
    try {
      connection = await this.connection(definition, callerSignal);
      let listed: ListedCatalog;
      let renewed = false;
      try {
        listed = await this.catalogOf(namespace, connection, callerSignal);
      } catch (error) {
        // The server forgot the session (HTTP 404): the MCP transport spec asks for a new
        // one with a fresh initialize, and that costs no process: once, in this discovery.
        if (!connection.sessionLost || callerSignal?.aborted || this.closed) throw error;
        connection = await this.connection(definition, callerSignal);
        renewed = true;
        listed = await this.catalogOf(namespace, connection, callerSignal);
      }
      if (this.closed) return unavailable(namespace, MCP_ERROR_CODES.sessionClosed, `session "${this.sessionId}" closed during discovery`);
      const { catalog, listedAt } = listed;
      this.baseline.set(namespace, catalog);
      this.current.set(namespace, {
        catalog,
        tools: callableTools(catalog.tools, this.current.get(namespace)?.tools),
        connection,
        discoveredAt: Date.now(),
        listedAt,
      });
      const diagnostics = connection.diagnostics().map((message) => ({ namespace, message }));
      if (renewed)
        diagnostics.push({
          namespace,
          message: `the server no longer knew its MCP session (HTTP 404: the service restarted or expired it); a new session was started`,
        });
      if (catalog.withheldTools.length > 0)
        diagnostics.push({ namespace, message: redact(withheldMessage(namespace, catalog.withheldTools), this.host.secrets(namespace)) });
      return { ok: true, catalog, diagnostics };
    } catch (error) {
      const cancelled = () => unavailable(namespace, MCP_ERROR_CODES.discoveryCancelled, `discovery of MCP provider "${namespace}" was cancelled`);
      // The caller's own cancellation first: its reason may be any error of the caller's.
      // It says nothing of the provider, so the catalog the session's calls use stands:
      // dropping it failed the calls in flight with MCP_TOOL_NOT_PUBLISHED, unsent.
      if (callerSignal?.aborted) return cancelled();
      this.current.delete(namespace);
      const secrets = this.host.secrets(namespace);
      if (OpenWorkerError.isInstance(error)) return unavailable(namespace, error.code, redact(error.message, secrets));
      if (this.closed) return cancelled();
      const reason = connection ? connection.describe(error) : redact(String(error), secrets);
      return unavailable(
        namespace,
        MCP_ERROR_CODES.discoveryFailed,
        `MCP provider "${namespace}" failed tools/list: ${reason}; its tools are unavailable this turn`,
      );
    }
  }

  /**
   * The namespace's catalog on `connection`: the session's current listing when the
   * provider promises list_changed and sent none since (M3), a new listing otherwise.
   */
  private async catalogOf(namespace: string, connection: ProviderConnection, callerSignal: AbortSignal | undefined): Promise<ListedCatalog> {
    const previous = this.baseline.get(namespace);
    const reusable = this.current.get(namespace);
    // Compared with the session's own catalog, not with the connection's last listing: a
    // listing whose caller was cancelled was never applied, and the change it saw stands.
    if (reusable && reusable.connection === connection && reusable.listedAt === connection.changeCount && connection.announcesChanges) {
      return {
        catalog: buildCatalog(namespace, reusable.catalog.tools, previous, true, reusable.catalog.withheldTools, connection.protocolVersion),
        listedAt: reusable.listedAt,
      };
    }
    // The listing is shared by concurrent discoveries and runs under the session's
    // signal; a caller who cancels stops waiting for it at once.
    const { tools, changesAtStart } = await untilAborted(
      this.withDeadline(namespace, this.closer.signal, (listingSignal) =>
        connection.listTools(
          {
            maxPages: this.host.options.maxCatalogPages,
            maxTools: this.host.options.maxCatalogTools,
            maxBytes: this.host.options.maxCatalogBytes,
            timeoutMs: this.host.options.discoveryTimeoutMs,
          },
          listingSignal,
        ),
      ),
      callerSignal,
    );
    const offered = offeredTools(tools, connection.runsTasks);
    return { catalog: buildCatalog(namespace, offered.tools, previous, false, offered.withheld, connection.protocolVersion), listedAt: changesAtStart };
  }

  private async withDeadline<T>(namespace: string, signal: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const timeoutMs = this.host.options.discoveryTimeoutMs;
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new OpenWorkerError(
          MCP_ERROR_CODES.discoveryTimeout,
          `MCP provider "${namespace}" did not finish tools/list within ${timeoutMs} ms; its tools are unavailable this turn`,
          { details: { namespace, timeoutMs } },
        );
        controller.abort(error);
        reject(error);
      }, timeoutMs);
    });
    try {
      return await Promise.race([work(controller.signal), deadline]);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    }
  }

  /**
   * The session's connection to a provider, started once however many discoveries need it
   * at the same time. The start runs under its own signal, not a caller's: one caller
   * cancelling stops waiting at once and leaves the start to the others; it is abandoned
   * (its process ended) only when no caller waits for it any more, or the session closes.
   */
  private connection(definition: McpProviderDefinition, callerSignal: AbortSignal | undefined): Promise<ProviderConnection> {
    const namespace = definition.namespace;
    const existing = this.connections.get(namespace);
    if (existing?.live) return Promise.resolve(existing);
    let pending = this.connecting.get(namespace);
    // A start its last caller abandoned is ending: a new caller starts afresh, not on it.
    if (pending?.start.signal.aborted) pending = undefined;
    if (!pending) {
      const start = new AbortController();
      const stopOnClose = onAbort(this.closer.signal, (reason) => start.abort(reason));
      if (this.closer.signal.aborted) start.abort(this.closer.signal.reason);
      const ended = announceStart(definition, this.host.options, this.host.secrets(namespace));
      const open = () => ProviderConnection.open(definition, this.host.options, this.ledger, this.host.secrets(namespace), start.signal, this.sessionId);
      const promise = (definition.transport === "stdio" ? this.host.starts.run(start.signal, open) : open()).then(async (connection) => {
        if (this.closed) {
          await connection.close();
          throw new OpenWorkerError(MCP_ERROR_CODES.sessionClosed, `session "${this.sessionId}" closed while provider "${namespace}" was starting`);
        }
        if (start.signal.aborted) {
          // Abandoned by every caller as it finished: it must not replace a newer start's connection.
          await connection.close();
          throw new OpenWorkerError(MCP_ERROR_CODES.discoveryCancelled, `discovery of MCP provider "${namespace}" was cancelled`);
        }
        this.connections.set(namespace, connection);
        return connection;
      });
      const started: PendingStart = { promise, start, waiting: 0 };
      promise.then(
        () => ended("connected"),
        () => ended("failed"),
      );
      const cleared = () => {
        stopOnClose();
        if (this.connecting.get(namespace) === started) this.connecting.delete(namespace);
      };
      promise.then(cleared, cleared);
      this.connecting.set(namespace, started);
      pending = started;
    }
    return waitForStart(pending, callerSignal);
  }

  connected(namespace: string): boolean {
    return this.connections.get(namespace)?.live === true;
  }

  authorizedScopes(namespace: string): readonly string[] | undefined {
    return this.connections.get(namespace)?.authorizedScopes;
  }

  catalogChanged(namespace: string): boolean {
    const entry = this.current.get(namespace);
    return entry !== undefined && (entry.superseded === true || entry.connection.changeCount !== entry.listedAt);
  }

  async callTool(namespace: string, remoteName: string, args: unknown, options: McpCallOptions = {}): Promise<McpCallResult> {
    const started = performance.now();
    // Without a listener no progress token is requested, so nothing can be reported.
    const bounded = options.onProgress ? createBoundedProgress(options.onProgress) : undefined;
    const answered = await this.settleCall(namespace, remoteName, args, options, bounded?.reporter);
    bounded?.close();
    // Progress past its bounds ends the call as a limit breach, as for native tools (E2, E4).
    const settled = bounded ? withProgressLimit(answered, bounded.stats) : answered;
    const result: { -readonly [K in keyof McpCallResult]: McpCallResult[K] } = {
      outcome: settled.outcome,
      progress: bounded ? bounded.stats : { accepted: 0, dropped: 0, jsonBytes: 0, breaches: [] },
      durationMs: 0,
    };
    if (settled.output) result.output = settled.output;
    if (settled.breach) result.breach = settled.breach;
    if (settled.error) result.error = { ...settled.error, message: redact(settled.error.message, this.host.secrets(namespace)) };
    result.durationMs = performance.now() - started;
    return result;
  }

  private async settleCall(
    namespace: string,
    remoteName: string,
    args: unknown,
    options: McpCallOptions,
    progress: ProgressReporter | undefined,
  ): Promise<SettledCall> {
    if (this.closed)
      return failedCall(MCP_ERROR_CODES.sessionClosed, `session "${this.sessionId}" is closed; MCP tool "${namespace}.${remoteName}" was not called`);
    let entry = this.current.get(namespace);
    const callable = entry?.tools.get(remoteName);
    if (!entry || callable === undefined) return failedCall(MCP_ERROR_CODES.toolNotPublished, notPublished(namespace, remoteName, entry));
    if (options.toolFingerprint !== undefined && options.toolFingerprint !== callable.fingerprint) {
      return failedCall(MCP_ERROR_CODES.toolChanged, changedMessage(namespace, remoteName));
    }
    const { output } = callable;
    const asTask = callable.asTask && entry.connection.runsTasks;
    // M10: the provider's own bound (75 s unless it sets one); a caller's timeoutMs only lowers it.
    const definition = this.host.provider(namespace);
    const callBound = definition ? providerBounds(definition, this.host.options).callTimeoutMs : this.host.options.callTimeoutMs;
    let timeoutMs = options.timeoutMs;
    if (entry.superseded) return failedCall(MCP_ERROR_CODES.providerUnavailable, supersededMessage(namespace, remoteName));
    if (!entry.connection.live && entry.connection.sessionLost) {
      // The server forgot the session (HTTP 404): this call starts a new one; the time that
      // takes counts against the call's bound (E1), and a call with no time left is not sent.
      const bound = Math.min(options.timeoutMs ?? callBound, callBound);
      const started = performance.now();
      const renewed = await withinBound(this.renewSession(namespace, entry, remoteName, options.signal), bound);
      const left = bound - (performance.now() - started);
      if (renewed === undefined || left < MIN_CALL_TIME_MS) {
        return failedCall(
          MCP_ERROR_CODES.providerUnavailable,
          `MCP tool "${namespace}.${remoteName}" was not called: its provider's server forgot the MCP session, and a new one was not ready within the call's ${bound} ms bound`,
        );
      }
      if (!("connection" in renewed)) return renewed;
      entry = renewed;
      timeoutMs = Math.floor(left);
    }
    if (!entry.connection.live) {
      return failedCall(
        MCP_ERROR_CODES.providerUnavailable,
        `MCP provider "${namespace}" is not connected (${entry.connection.endReason ?? "its connection ended"}); ` +
          `tool "${remoteName}" was not called; the provider restarts at the session's next discovery`,
      );
    }
    if (options.signal?.aborted) {
      return { outcome: "cancelled", error: { code: "TOOL_CANCELLED", message: `MCP tool "${namespace}.${remoteName}" was cancelled before it started` } };
    }
    if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
      return failedCall(
        MCP_ERROR_CODES.argumentsInvalid,
        `arguments of MCP tool "${namespace}.${remoteName}" must be a JSON object, got ${Array.isArray(args) ? "an array" : typeof args}`,
      );
    }
    return callProvider({
      connection: entry.connection,
      remoteName,
      args: args as Record<string, unknown> | undefined,
      timeoutMs: Math.min(timeoutMs ?? callBound, callBound),
      signal: options.signal,
      progress,
      output,
      asTask,
      onElicitation: options.onElicitation,
      onElicitationAnswered: options.onElicitationAnswered,
    });
  }

  /**
   * A new MCP session for a call whose provider's server forgot the last one (HTTP 404):
   * no process starts, the catalog is listed again, and the call may go out only if it is
   * the catalog the session discovered, which its approval was for (M3). Otherwise the
   * call fails unsent and the session's next discovery takes the new catalog.
   */
  private async renewSession(
    namespace: string,
    entry: CurrentCatalog,
    remoteName: string,
    signal: AbortSignal | undefined,
  ): Promise<CurrentCatalog | SettledCall> {
    const definition = this.host.provider(namespace);
    const qualified = `MCP tool "${namespace}.${remoteName}"`;
    if (!definition)
      return failedCall(MCP_ERROR_CODES.providerUnknown, `${qualified} was not called: no MCP provider is registered for namespace "${namespace}"`);
    let connection: ProviderConnection | undefined;
    try {
      connection = await this.connection(definition, signal);
      const { catalog, listedAt } = await this.catalogOf(namespace, connection, signal);
      if (catalog.fingerprint !== entry.catalog.fingerprint) {
        // Kept on the dead connection, so the next discovery lists on the new one.
        if (this.current.get(namespace) === entry) this.current.set(namespace, { ...entry, superseded: true });
        return failedCall(MCP_ERROR_CODES.providerUnavailable, supersededMessage(namespace, remoteName));
      }
      const renewed: CurrentCatalog = { catalog: entry.catalog, tools: entry.tools, connection, discoveredAt: Date.now(), listedAt };
      if (this.current.get(namespace) === entry) this.current.set(namespace, renewed);
      return renewed;
    } catch (error) {
      if (signal?.aborted) return { outcome: "cancelled", error: { code: "TOOL_CANCELLED", message: `${qualified} was cancelled before it started` } };
      if (this.closed) return failedCall(MCP_ERROR_CODES.sessionClosed, `session "${this.sessionId}" is closed; ${qualified} was not called`);
      const secrets = this.host.secrets(namespace);
      const reason = OpenWorkerError.isInstance(error) ? error.message : connection ? connection.describe(error) : String(error);
      return failedCall(
        MCP_ERROR_CODES.providerUnavailable,
        redact(
          `${qualified} was not called: its provider's server forgot the MCP session, and a new one could not be started (${reason}); the provider reconnects at the session's next discovery`,
          secrets,
        ),
      );
    }
  }

  /** The catalogs of connections still live, for the inventory (M5). */
  liveCatalogs(): { readonly catalog: McpCatalog; readonly discoveredAt: number }[] {
    if (this.closed) return [];
    return [...this.current.values()].filter((entry) => entry.connection.live);
  }

  close(): Promise<void> {
    if (!this.closing) {
      this.closer.abort(new Error("session closed"));
      for (const connection of this.connections.values()) connection.calls.cancelAll("the session closed during the call");
      this.closing = (async () => {
        // Starts in progress. One abandoned and replaced by a newer start is not here: its
        // handshake was aborted and its process tree is ended and tracked by the ledger,
        // which `joinCleanup()` waits for.
        const starting = [...this.connecting.values()].map((pending) =>
          pending.promise.then(
            (connection) => connection.close(),
            () => undefined,
          ),
        );
        await Promise.all([...[...this.connections.values()].map((connection) => connection.close()), ...starting]);
        this.host.sessionClosed(this);
      })();
    }
    return this.closing;
  }

  joinCleanup(): Promise<void> {
    return this.ledger.join();
  }

  private assertOpen(): void {
    if (this.closed) {
      throw new OpenWorkerError(MCP_ERROR_CODES.sessionClosed, `MCP session "${this.sessionId}" is closed; open a new session to discover providers`, {
        details: { sessionId: this.sessionId },
      });
    }
  }
}

function unavailable(namespace: string, code: string, message: string): Discovered {
  return { ok: false, unavailable: { namespace, code, message } };
}

/** A renewal shorter than this leaves a call no time worth sending it with. */
const MIN_CALL_TIME_MS = 50;

/** The renewal's outcome, or `undefined` once `bound` ms passed (the renewal goes on for later calls). */
function withinBound<T>(work: Promise<T>, bound: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), bound)));
  return Promise.race([work, expiry]).finally(() => clearTimeout(timer));
}
