import { SdkError, SdkErrorCode, type Client, type McpSubscription, type PriorDiscovery, type ProtocolEra, type Transport } from "@modelcontextprotocol/client";
import type { McpProviderDefinition } from "@openworker/registry";
import { OpenWorkerError } from "@openworker/tools-sdk";
import type { CleanupFailure, CleanupLedger } from "../cleanup.js";
import { MCP_ERROR_CODES } from "../codes.js";
import { CallChannel, type CallPath } from "../call/call-channel.js";
import { ClientCalls } from "../call/client-calls.js";
import type { CallsInFlight } from "../call/elicitation.js";
import { answerElicitations, BridgeClient } from "../call/elicitation-routing.js";
import { listAllTools, type ListingBounds } from "../catalog/list.js";
import { providerBounds, type ResolvedOptions } from "../options.js";
import { ChildProcessTransport } from "../process/stdio-transport.js";
import { redact, redactUrl } from "../redact.js";
import type { McpCatalogTool } from "../types.js";
import { AuthorizationNeeded, type StoredAuthorization } from "./authorization.js";
import { authorizeOnce, type ConnectAttempt } from "./authorize-once.js";
import { networkFailure } from "./network-failure.js";
import { ScopeStepUp } from "./step-up.js";
import { ProviderLog } from "./provider-log.js";
import { httpStatus, httpTransport, stdioTransport, unknownTransport } from "./transports.js";

/**
 * Stdio providers found to speak only the 2025 era (`initialize`): their later
 * connections skip the `server/discover` probe. A probe such a server does not answer
 * costs its bound, and one that exits on it costs a start; the program stays the same
 * for the bridge's life, so its verdict does too.
 */
const legacyPrograms = new WeakMap<McpProviderDefinition, true>();

/**
 * One live MCP connection of one session to one provider: its SDK client, its
 * transport (a process tree it owns, or a remote HTTP session), the protocol era it
 * negotiated (M6), the change counter fed by `notifications/tools/list_changed` (M3),
 * and its verified cleanup (M4).
 */
export class ProviderConnection {
  /** False once the transport closed (crash, exit, close): the session reconnects on its next discovery. */
  live = true;
  /** Why the connection ended, for messages. */
  endReason: string | undefined;
  /**
   * True once the streamable-HTTP server answered 404 to this connection's session: it
   * forgot the session (restart, expiry). The connection has ended; the MCP transport
   * spec asks for a new session with a fresh `initialize`, which costs no process.
   */
  sessionLost = false;
  private changes = 0;
  private listing: Promise<Listing> | undefined;
  private closing: Promise<void> | undefined;
  /** A streamable-HTTP provider's URL as messages show it (redacted, E6); undefined for stdio. */
  private url: string | undefined;
  /**
   * Where `tools/call` requests go: on the 2025 era the bridge's own channel on the
   * transport (the SDK client keeps the handshake, listings and notifications), on
   * 2026-07-28 the SDK client itself (see `ClientCalls`).
   */
  calls: CallPath;
  /** Whether the host listens to the provider's log messages (`onProviderLog`). */
  private logging = false;
  /** On 2026-07-28: the `subscriptions/listen` stream that carries list changes, while it is open. */
  private subscription: McpSubscription | undefined;
  /** With `elicitation` on: the calls in flight a provider's `elicitation/create` may belong to (M9). */
  elicitation: CallsInFlight | undefined;
  /** A streamable-HTTP provider's OAuth, when the host configured it (M8). */
  private authorization: StoredAuthorization | undefined;
  /** With OAuth: the step-up of a call refused for insufficient scope (M8). */
  stepUp: ScopeStepUp | undefined;

  private constructor(
    readonly namespace: string,
    readonly client: Client,
    private readonly transport: Transport,
    private readonly secrets: readonly string[],
    private readonly ledger: CleanupLedger,
    private readonly closeRemote: () => Promise<CleanupFailure | undefined>,
  ) {
    this.calls = new CallChannel(transport);
  }

  /** The OAuth scopes of the token the connection last sent; undefined when it runs no OAuth or sent no token yet (M8). */
  get authorizedScopes(): readonly string[] | undefined {
    return this.authorization?.scopesInUse;
  }

  /** The protocol era the connection negotiated: `modern` (2026-07-28) or `legacy` (2025-11-25 and older). */
  get era(): ProtocolEra {
    return this.client.getProtocolEra() ?? "legacy";
  }

  /** The protocol revision the connection negotiated, e.g. `2026-07-28` or `2025-06-18`. */
  get protocolVersion(): string | undefined {
    return this.client.getNegotiatedProtocolVersion();
  }

  /**
   * Starts (stdio) or reaches (HTTP) the provider and completes `initialize` within
   * `connectTimeoutMs`. On any failure the half-started process tree is ended (and
   * tracked by `ledger`) and an `OpenWorkerError` naming the provider is thrown.
   */
  static async open(
    definition: McpProviderDefinition,
    options: ResolvedOptions,
    ledger: CleanupLedger,
    secrets: readonly string[],
    signal: AbortSignal | undefined,
    sessionId = "",
  ): Promise<ProviderConnection> {
    const attempt: ConnectAttempt = { sessionId };
    try {
      return await ProviderConnection.connect(definition, options, ledger, secrets, signal, attempt);
    } catch (error) {
      if (attempt.authorization?.pendingAuthorization !== undefined || hasCause(error, AuthorizationNeeded)) {
        // M8: the server wants a user's authorization and the bridge has no token for it.
        await authorizeOnce(definition.namespace, attempt, options, secrets, signal);
        return ProviderConnection.connect(definition, options, ledger, secrets, signal, { sessionId });
      }
      // A stdio server that exits on the era probe (some do, on any request before
      // `initialize`) is a 2025-era server: it is started once more, for `initialize` only.
      if (definition.transport !== "stdio" || legacyPrograms.has(definition) || !(error instanceof OpenWorkerError) || !error.details?.["probeEnded"])
        throw error;
      legacyPrograms.set(definition, true);
      return ProviderConnection.connect(definition, options, ledger, secrets, signal, { sessionId });
    }
  }

  private static async connect(
    definition: McpProviderDefinition,
    options: ResolvedOptions,
    ledger: CleanupLedger,
    secrets: readonly string[],
    signal: AbortSignal | undefined,
    attempt: ConnectAttempt,
  ): Promise<ProviderConnection> {
    const namespace = definition.namespace;
    const { connectTimeoutMs } = providerBounds(definition, options);
    // M6: the era is negotiated with `server/discover`, and a server that does not know it
    // gets the 2025 `initialize`. On stdio a server that does not answer the probe at all is
    // a 2025 one: half the connect bound (at most 10 s) is left for its `initialize`.
    const client = new BridgeClient(
      { ...options.clientInfo },
      {
        capabilities: options.elicitation ? { elicitation: { form: { applyDefaults: true }, url: {} } } : {},
        versionNegotiation: {
          mode: "auto",
          probe: { timeoutMs: definition.transport === "stdio" ? Math.min(Math.ceil(connectTimeoutMs / 2), 10_000) : connectTimeoutMs },
        },
      },
    );
    const prior: PriorDiscovery | undefined = legacyPrograms.has(definition) ? { kind: "legacy" } : undefined;
    // The connection, once built: the HTTP transport's observer reports to it.
    let owner: ProviderConnection | undefined;
    // Whether the last GET's connection was refused (HTTP only).
    let getRefused = false;
    // Protocol-level oddities (unknown notifications, skipped lines) must not reach the host's
    // console. One is acted on: the SDK gave up reconnecting an event stream and its last
    // attempt was refused: the service is down, so no call in flight can be answered, and
    // waiting for their 75 s bounds would tell nobody anything. A service that is up and
    // refuses a GET otherwise (409, 405, a 5xx) is left alone: its calls' streams may be fine.
    client.onerror = (error) => {
      if (getRefused && RESUME_GAVE_UP.test(error.message))
        owner?.fail(`the provider's event stream could not be resumed (${error.message}: the connection was refused); the service is unreachable`);
    };
    const { transport, closeRemote } =
      definition.transport === "stdio"
        ? stdioTransport(definition, options, ledger)
        : definition.transport === "streamable_http"
          ? await httpTransport(definition, options, secrets, attempt, {
              owner: () => owner,
              getRefused: (refused: boolean) => {
                getRefused = refused;
              },
            })
          : unknownTransport(definition);

    const connection = new ProviderConnection(namespace, client, transport, secrets, ledger, closeRemote);
    owner = connection;
    connection.authorization = attempt.authorization;
    if (attempt.authorization !== undefined && attempt.transport !== undefined)
      connection.stepUp = new ScopeStepUp(namespace, attempt.authorization, attempt.transport, options, secrets);
    // One handler for both eras: 2025 servers send the notification unsolicited, 2026-07-28
    // ones on the `subscriptions/listen` stream the connection opens.
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      connection.changes++;
    });
    if (options.onProviderLog !== undefined) {
      connection.logging = true;
      const log = new ProviderLog(namespace, attempt.sessionId, secrets, options.onProviderLog);
      client.setNotificationHandler("notifications/message", (notification) => log.receive(notification.params));
    }
    if (options.elicitation) connection.elicitation = answerElicitations(client, namespace, secrets, options.elicitationTimeoutMs);
    client.onclose = () => connection.ended("the connection closed");
    if (definition.transport === "streamable_http") connection.url = redactUrl(definition.url);
    await connection.handshake(connectTimeoutMs, signal, prior);
    if (definition.transport === "stdio" && connection.era === "legacy") legacyPrograms.set(definition, true);
    return connection;
  }

  private async handshake(timeoutMs: number, signal: AbortSignal | undefined, prior: PriorDiscovery | undefined): Promise<void> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(new Error("discovery was cancelled"));
    // A listener added to a signal that already aborted never fires.
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new Error("connect timeout"));
        resolve("timeout");
      }, timeoutMs);
    });
    try {
      const connected = this.client
        .connect(this.transport, { signal: controller.signal, timeout: timeoutMs, ...(prior === undefined ? {} : { prior }) })
        .then(() => (this.client.getProtocolEra() === "modern" ? this.listenForChanges(controller.signal, timeoutMs) : undefined));
      const outcome = await Promise.race([connected, timedOut]);
      if (outcome === "timeout") {
        throw this.connectError(
          MCP_ERROR_CODES.connectTimeout,
          `did not finish initialize within ${timeoutMs} ms (its connect bound: for a provider that starts slowly, raise connectTimeoutMs in its servers.json entry or registerMcp definition)`,
        );
      }
      if (!this.live) throw this.connectError(MCP_ERROR_CODES.connectFailed, this.endReason ?? "the connection closed during initialize");
      const wantsLogs = this.logging;
      if (this.era === "modern") this.calls = new ClientCalls(this.client, wantsLogs);
      else {
        (this.calls as CallChannel).attach();
        // The 2025 era sets one level for the session, where the server declares logging.
        if (wantsLogs && this.client.getServerCapabilities()?.logging !== undefined) {
          await this.client.setLoggingLevel("info", { signal: controller.signal, timeout: timeoutMs }).catch(() => undefined);
        }
      }
      this.noteDescendants();
    } catch (error) {
      void this.close();
      throw await this.withStderr(this.startError(error, signal));
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /**
   * On 2026-07-28 list changes come only on a `subscriptions/listen` stream the client
   * opens (M3). A stream that ends other than by the bridge's close may have missed a
   * change: it counts as one, and the provider no longer announces changes, so every
   * later discovery lists it again.
   */
  private async listenForChanges(signal: AbortSignal, timeoutMs: number): Promise<void> {
    if (this.client.getServerCapabilities()?.tools?.listChanged !== true) return;
    const subscription = await this.client.listen({ toolsListChanged: true }, { signal, timeout: timeoutMs });
    if (subscription.honoredFilter.toolsListChanged !== true) {
      void subscription.close();
      return;
    }
    this.subscription = subscription;
    void subscription.closed.then((how) => {
      if (this.subscription !== subscription) return;
      this.subscription = undefined;
      if (how !== "local") this.changes++;
    });
  }

  private startError(error: unknown, signal: AbortSignal | undefined): OpenWorkerError {
    if (OpenWorkerError.isInstance(error)) return error;
    if (signal?.aborted) return this.connectError(MCP_ERROR_CODES.discoveryCancelled, "discovery was cancelled while connecting");
    if (SdkError.isInstance(error) && error.code === SdkErrorCode.EraNegotiationFailed && !this.live && this.transport instanceof ChildProcessTransport) {
      // The process ended on the era probe: `open` starts it once more, for `initialize`.
      return new OpenWorkerError(
        MCP_ERROR_CODES.connectFailed,
        this.connectError(MCP_ERROR_CODES.connectFailed, `ended on the protocol probe (${this.describe(error)})`).message,
        {
          cause: error,
          details: { namespace: this.namespace, probeEnded: true },
        },
      );
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EACCES" || code === "ENOTDIR") {
      const where = this.transport instanceof ChildProcessTransport ? ` ${this.transport.describeStart()}` : "";
      return this.connectError(
        MCP_ERROR_CODES.spawnFailed,
        `could not start its program${where} (${code}); check the provider's program path, cwd and permissions`,
        error,
      );
    }
    const network = this.url === undefined ? undefined : networkFailure(error);
    if (network !== undefined) return this.connectError(MCP_ERROR_CODES.providerUnreachable, `at ${this.url} is unreachable: ${network}`, error);
    return this.connectError(MCP_ERROR_CODES.connectFailed, `initialize failed: ${this.describe(error)}`, error);
  }

  /**
   * A stdio provider that exited while starting usually said why on its stderr, which the
   * host may not watch (onStderr): the failure carries its last lines, redacted (E6).
   */
  private async withStderr(failure: OpenWorkerError): Promise<OpenWorkerError> {
    const stdio = this.transport instanceof ChildProcessTransport ? this.transport : undefined;
    const said = stdio?.exit === undefined ? undefined : await stdio.lastStderrLines();
    if (said === undefined) return failure;
    // Redacted before quoting: quoting escapes a secret's quotes and backslashes.
    const quoted = JSON.stringify(redact(said, this.secrets));
    return new OpenWorkerError(failure.code, redact(`${failure.message}; its last stderr lines: ${quoted}`, this.secrets), {
      ...(failure.cause === undefined ? {} : { cause: failure.cause }),
      details: failure.details,
    });
  }

  private connectError(code: string, problem: string, cause?: unknown): OpenWorkerError {
    return new OpenWorkerError(code, redact(`MCP provider "${this.namespace}" ${problem}; its tools are unavailable this turn`, this.secrets), {
      ...(cause === undefined ? {} : { cause }),
      details: { namespace: this.namespace },
    });
  }

  /** A message for an error from this connection, with configured secrets removed (E6). */
  describe(error: unknown): string {
    let text = error instanceof Error ? error.message : String(error);
    // fetch says only "fetch failed"; its cause says why (refused, DNS, TLS, reset).
    const network = this.url === undefined ? undefined : networkFailure(error);
    if (network !== undefined) text = `${this.url} is unreachable: ${network}`;
    const status = httpStatus(error);
    if (status !== undefined && !text.includes(String(status))) text += ` (HTTP ${status})`;
    const exit = this.transport instanceof ChildProcessTransport ? this.transport.exit : undefined;
    const exitNote = exit && !/exited/.test(text) ? ` (process exited with ${exit.signal ?? `code ${exit.code}`})` : "";
    return redact(`${text}${exitNote}`, this.secrets);
  }

  /** Non-fatal observations to report with a discovery. */
  diagnostics(): string[] {
    if (this.transport instanceof ChildProcessTransport && this.transport.skippedLines > 0) {
      return [`skipped ${this.transport.skippedLines} stdout line(s) that were not JSON-RPC messages`];
    }
    return [];
  }

  /**
   * How many changes to its tools (`notifications/tools/list_changed`) the provider has
   * announced on this connection. A listing carries the count it began at (see
   * {@link Listing}): a catalog is stale once the count moved past the one of its listing.
   */
  get changeCount(): number {
    return this.changes;
  }

  /**
   * Whether the provider announces changes to its tools: on the 2025 era it promised to
   * (`tools.listChanged`), on 2026-07-28 its `subscriptions/listen` stream is open. Only
   * then can a listing be reused.
   */
  get announcesChanges(): boolean {
    if (this.era === "modern") return this.subscription !== undefined;
    return this.client.getServerCapabilities()?.tools?.listChanged === true;
  }

  /** Lists the provider's tools (one listing at a time; concurrent callers share it). */
  listTools(bounds: Omit<ListingBounds, "signal">, signal: AbortSignal): Promise<Listing> {
    if (!this.listing) {
      const changesAtStart = this.changes;
      this.listing = listAllTools(this.client, this.namespace, { ...bounds, signal }, this.secrets)
        .then((tools) => {
          this.noteDescendants();
          return { tools, changesAtStart };
        })
        .finally(() => {
          this.listing = undefined;
        });
    }
    return this.listing;
  }

  /** Notes a stdio provider's process tree as it is now, so that closing ends all of it (M4). */
  private noteDescendants(): void {
    if (this.transport instanceof ChildProcessTransport) this.transport.noteDescendants();
  }

  /**
   * Whether the connection runs MCP tasks (M10): a 2025-11-25 server that declares
   * `tasks.requests.tools.call`. The SDK offers tasks on that revision only.
   */
  get runsTasks(): boolean {
    if (this.era !== "legacy") return false;
    const tasks = (this.client.getServerCapabilities() as { tasks?: { requests?: { tools?: { call?: unknown } } } } | undefined)?.tasks;
    return tasks?.requests?.tools?.call !== undefined;
  }

  /** True for a stdio provider (a process this host started), false for a streamable-HTTP service. */
  get runsProcess(): boolean {
    return this.transport instanceof ChildProcessTransport;
  }

  /** The server forgot the session (HTTP 404): the connection ends, and closing it sends no DELETE. */
  remoteSessionLost(): void {
    if (!this.live) return;
    this.sessionLost = true;
    this.ended("the server no longer knows its MCP session (HTTP 404: the service restarted or expired the session)");
  }

  /** Marks the connection broken (an unreachable HTTP provider) and ends it. */
  fail(reason: string): void {
    this.ended(reason);
  }

  private ended(reason: string): void {
    if (!this.live) return;
    this.live = false;
    const stdio = this.transport instanceof ChildProcessTransport ? this.transport : undefined;
    // A child the transport gave up on is killed after this: its exit status says nothing.
    const exit = stdio?.exit;
    this.endReason = stdio?.broken ?? (exit ? `the process exited with ${exit.signal ?? `code ${exit.code}`}` : reason);
    // A stream that ends with its connection says nothing of the provider's tools.
    this.subscription = undefined;
    this.calls.endAll();
    // A crashed server may leave its wrapper's other children behind: end the tree now.
    void this.close();
  }

  /** Ends the connection and its process tree or remote session; tracked by the ledger. Idempotent. */
  close(): Promise<void> {
    if (!this.closing) {
      const remote = this.closeRemote();
      this.ledger.track(remote);
      this.closing = remote.then(
        () => undefined,
        () => undefined,
      );
      this.ended("the session closed it");
    }
    return this.closing;
  }
}

/** Whether `error` or one of its causes is an instance of `type`. */
function hasCause(error: unknown, type: abstract new (...args: never[]) => Error): boolean {
  for (let cause = error, depth = 0; cause !== undefined && cause !== null && depth < 8; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (cause instanceof type) return true;
  }
  return false;
}

/** The SDK's words when it stops retrying to reconnect an event stream (the streamable-HTTP client transport's reconnection). */
const RESUME_GAVE_UP = /^Maximum reconnection attempts \(\d+\) exceeded/;

/**
 * A provider's tools as one listing found them, with the provider's change count when the
 * listing began: a change announced during the listing may not be in it, so it counts.
 */
export interface Listing {
  readonly tools: McpCatalogTool[];
  readonly changesAtStart: number;
}
