import { randomBytes } from "node:crypto";
import path from "node:path";
import { loadBundle, type Bundle } from "@openworker/bundle-resolver";
import { hostExecutableDigest, Journal, type Durability, type SessionJournal } from "@openworker/journal";
import { McpBridge, type McpBridgeOptions, type McpInventoryRequest, type McpProviderLog, type McpToolInventory } from "@openworker/mcp-bridge";
import type { ToolRegistry } from "@openworker/registry";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { RUNTIME_ERROR_CODES } from "./errors.js";
import { EventHub } from "./events.js";
import type { ModelCatalogRow, ModelProvider, ModelReadiness } from "./model/types.js";
import { checkApprovalPolicy, policyForIdentity, type ApprovalPolicy, type Approver } from "./policy.js";
import type { Elicitor } from "./call/elicitation.js";
import { Redactor } from "./secrets.js";
import { sessionIdentity } from "./session/identity.js";
import { Session } from "./session/session.js";
import { MODEL_CONTEXT_BUDGET_MS } from "./turn/facts.js";

/** How a runtime is opened. Every field has a default. `J`: the journal's type, when an open one is handed over. */
export interface RuntimeOptions<J extends SessionJournal = Journal> {
  /** Default workspace of sessions. Default: `process.cwd()`. */
  readonly workspace?: string;
  /**
   * An open journal (the SQLite `Journal`, or another store's, such as a fleet's
   * `PostgresJournal`), or where to open a SQLite one. Default:
   * `<workspace>/.openworker/journal.db`, grouped durability (see the journal's README).
   * A journal handed over is the host's to close.
   */
  readonly journal?: J | { readonly path: string; readonly durability?: Durability };
  /** Model providers; the first is the default. */
  readonly models?: readonly ModelProvider[];
  /** Asks a person. Without one, tools whose policy says `ask` are denied (fail closed). */
  readonly approver?: Approver;
  /**
   * How long the approver may take before the call is denied. Default 5 minutes; at most
   * 2³¹ − 1 ms (about 24.8 days, a Node.js timer's longest), else `OPTIONS_INVALID`.
   */
  readonly approvalTimeoutMs?: number;
  /**
   * Answers what MCP providers ask the user during their calls (M9: a form to fill in, a
   * URL to open). Set, the bridge tells providers they may ask; an error, a timeout
   * (`mcp.elicitationTimeoutMs`, default 10 minutes), the call's end or a malformed answer
   * declines. Without one, providers are told they may not ask.
   */
  readonly elicitor?: Elicitor;
  /** Keep accepted elicitation values in the journal (redacted), not only their digest. Default false. */
  readonly journalElicitedContent?: boolean;
  /** The bundled host entry file whose bytes enter the execution identity (A2). Default: `process.argv[1]`. */
  readonly hostEntry?: string;
  /** Options of the MCP bridge (connect timeouts, grace periods, base environment); one it refuses is `OPTIONS_INVALID` naming `mcp.<field>`. */
  readonly mcp?: McpBridgeOptions;
  /** More values to keep out of everything the runtime writes (E6). */
  readonly secrets?: readonly string[];
  /** Model attempts per turn before it stops. Default 24. */
  readonly maxAttemptsPerTurn?: number;
  /** Tool calls run per model answer; the rest are refused with `TOO_MANY_CALLS` (journaled, never run). Default 32. */
  readonly maxCallsPerAttempt?: number;
  /**
   * How long one tool's `modelContext` hook may take before it counts as slow, contributes
   * nothing and is skipped for the rest of the session (L1). Default 5 ms: hooks must be
   * synchronous and do no I/O. Raise it only for hosts whose event loop stalls often.
   */
  readonly modelContextBudgetMs?: number;
}

/** How a session is opened. */
export interface SessionOptions {
  /** The bundle folder (holding `manifest.md` and `tools.json`, or a `coworker/` folder that does), or a loaded bundle. */
  readonly bundle: string | Bundle;
  readonly workspace?: string;
  /** The session's approval policy, fixed for its lifetime (A2). Default: every tool External, ask a person. */
  readonly policy?: ApprovalPolicy;
  /** Which provider and model to use. Default: the first provider's default model. */
  readonly model?: { readonly provider?: string; readonly model?: string };
  readonly sessionId?: string;
  /** Lowers the 75 s call bound for this session (never raises it). */
  readonly callTimeoutMs?: number;
}

/**
 * A row of the model catalog (I1, seed 004's `loadModelCatalog`): the provider and model,
 * owned by this harness (`nativeRuntime`). No readiness: seed 004 says never to serialize
 * it on catalog rows; ask {@link Runtime.readModelCatalogReadiness} at the moment of use.
 */
export interface ModelCatalogEntry extends ModelCatalogRow {
  /** The harness that owns the row's model selection: always `"openworker"`. */
  readonly nativeRuntime: "openworker";
}

/**
 * The OpenWorker runtime for direct embedding: it owns sessions, the journal, the MCP
 * bridge and every limit. Open it with {@link Runtime.openWithRegistry}; the stock CLI's
 * `mainWithRegistry(registry)` stands on it.
 *
 * @example
 * ```ts
 * const registry = new ToolRegistry();
 * exampleTools.register(registry);
 * const runtime = await Runtime.openWithRegistry(registry, { models: [provider], approver });
 * const session = await runtime.openSession({ bundle: "examples/coworker" });
 * const turn = await session.runTurn("What is the battery status?");
 * await runtime.close();
 * ```
 */
export class Runtime<J extends SessionJournal = Journal> {
  readonly registry: ToolRegistry;
  /** The journal sessions are written to: the SQLite `Journal` the runtime opened, or the one handed over (its type). */
  readonly journal: J;
  readonly #options: RuntimeOptions<J>;
  readonly #ownsJournal: boolean;
  readonly #bridge: McpBridge;
  readonly #redactor: Redactor;
  readonly #sessions = new Set<Session>();
  /** Each open session's events, by id: where its providers' log messages go. */
  readonly #hubs: Map<string, EventHub>;
  #host: Promise<{ executableBytesDigest: string; nodeVersion: string }> | undefined;
  #closing: Promise<void> | undefined;

  private constructor(
    registry: ToolRegistry,
    journal: J,
    ownsJournal: boolean,
    options: RuntimeOptions<J>,
    bridge: McpBridge,
    redactor: Redactor,
    hubs: Map<string, EventHub>,
  ) {
    this.#hubs = hubs;
    this.registry = registry;
    this.journal = journal;
    this.#ownsJournal = ownsJournal;
    this.#options = options;
    this.#bridge = bridge;
    this.#redactor = redactor;
  }

  /**
   * Opens a runtime on a registry. The registry is frozen from now on (N8): a later
   * registration fails. Opens (and recovers) the journal (A3), or writes to the open one
   * handed over (`runtime.journal` then has its type).
   */
  static async openWithRegistry<J extends SessionJournal>(registry: ToolRegistry, options: RuntimeOptions<J> & { readonly journal: J }): Promise<Runtime<J>>;
  static async openWithRegistry(registry: ToolRegistry, options?: RuntimeOptions): Promise<Runtime>;
  static async openWithRegistry<J extends SessionJournal>(registry: ToolRegistry, options: RuntimeOptions<J> = {}): Promise<Runtime<J>> {
    const workspace = path.resolve(options.workspace ?? process.cwd());
    // Everything that can refuse the options is checked and built before the journal opens
    // and the registry freezes: a refused option leaves no journal locked and no registry
    // frozen, so the host fixes it and opens again. Nothing here starts a process.
    const approvalTimeoutMs = checkedApprovalTimeout(options.approvalTimeoutMs);
    for (const option of ["approver", "elicitor"] as const) {
      const given = options[option];
      if (given !== undefined && typeof given !== "function") throw optionInvalid(option, `must be a function (leave it out for none), got ${typeof given}`);
    }
    // A provider whose credentials cannot be listed leaves nothing open.
    const secrets = [...(options.secrets ?? []), ...modelSecrets(options.models ?? [])];
    // Providers' log messages become their session's diagnostics (bounded by the bridge).
    const hubs = new Map<string, EventHub>();
    const hostLog = options.mcp?.onProviderLog;
    let redactor: Redactor | undefined;
    const onProviderLog = (event: McpProviderLog) => {
      hostLog?.(event);
      const message = `${event.namespace} ${event.level}: ${event.message}${event.dropped ? ` (${event.dropped} earlier messages dropped)` : ""}`;
      hubs.get(event.sessionId)?.emit({
        type: "diagnostic",
        sessionId: event.sessionId,
        code: RUNTIME_ERROR_CODES.PROVIDER_LOG,
        message: redactor?.text(message) ?? message,
        provider: event.namespace,
      });
    };
    // M9: providers may ask the user only when the host has someone to ask.
    const bridge = openBridge(registry, { elicitation: options.elicitor !== undefined, ...options.mcp, onProviderLog });
    redactor = Redactor.fromSources(registry.providers(), process.env, secrets);
    const given = options.journal;
    // Opened before the registry freezes: a journal that cannot open (locked, unreadable)
    // leaves the host's registry as it was, to fix and try again.
    const open = isOpenJournal(given);
    // Without a journal handed over, J is its default, the SQLite Journal opened here.
    const journal = open
      ? given
      : (Journal.open({
          path: given?.path ?? path.join(workspace, ".openworker", "journal.db"),
          durability: given?.durability ?? "grouped",
        }) as unknown as J);
    registry.freeze();
    return new Runtime(registry, journal, !open, { ...options, workspace, approvalTimeoutMs }, bridge, redactor, hubs);
  }

  /** Opens a session on a bundle: loads it, computes and journals its execution identity (A2). */
  async openSession(options: SessionOptions): Promise<Session> {
    this.#assertOpen();
    const sessionId = checkedSessionId(options.sessionId);
    const callTimeoutMs = checkedCallTimeout(options.callTimeoutMs);
    const bundle = typeof options.bundle === "string" ? await loadBundle(options.bundle) : options.bundle;
    // The host's policy first (its own fields, by name), then with the registry's
    // classifications merged in: a misspelt class given at registration must not fall to
    // "ask", which bypass approves, any more than one written in the policy.
    const policy = checkApprovalPolicy(withRegistryClassifications(checkApprovalPolicy(options.policy ?? {}), this.registry, bundle), {
      source: "policy (with the classifications given at registration)",
    });
    const host = await this.#hostDigest();
    // The runtime may have begun closing while the bundle loaded.
    this.#assertOpen();
    const { identity, inputs } = sessionIdentity(this.registry, bundle, policyForIdentity(policy), host);
    const { provider, model } = this.#pickModel(options.model);
    const workspace = path.resolve(options.workspace ?? this.#options.workspace!);
    const events = new EventHub();
    this.journal.sessionOpened({ sessionId, executionIdentity: identity.identity, identityInputs: inputs, workspace, bundleDir: bundle.dir });
    this.#hubs.set(sessionId, events);
    const session = new Session({
      environment: {
        sessionId,
        workspace,
        executionIdentity: identity.identity,
        policy,
        approver: this.#options.approver,
        approvalTimeoutMs: this.#options.approvalTimeoutMs!,
        elicitor: this.#options.elicitor,
        journalElicitedContent: this.#options.journalElicitedContent === true,
        callTimeoutMs,
        journal: this.journal,
        mcp: this.#bridge.openSession(sessionId),
        redactor: this.#redactor,
        events,
        verdicts: new WeakMap(),
      },
      registry: this.registry,
      bundle,
      provider,
      model,
      maxAttempts: this.#options.maxAttemptsPerTurn ?? 24,
      maxCallsPerAttempt: this.#options.maxCallsPerAttempt ?? 32,
      modelContextBudgetMs: this.#options.modelContextBudgetMs ?? MODEL_CONTEXT_BUDGET_MS,
      onClosed: (closed) => {
        this.#sessions.delete(closed);
        if (this.#hubs.get(sessionId) === events) this.#hubs.delete(sessionId);
      },
    });
    this.#sessions.add(session);
    return session;
  }

  /** Open sessions. */
  get sessions(): readonly Session[] {
    return [...this.#sessions];
  }

  /**
   * The model catalog (I1, seed 004's `loadModelCatalog`): the configured providers'
   * models, one row each, without readiness (ask {@link readModelCatalogReadiness}).
   * A provider whose `listModels` throws contributes no rows; the others still do.
   */
  loadModelCatalog(): ModelCatalogEntry[] {
    return (this.#options.models ?? []).flatMap((provider) => {
      let rows: readonly ModelCatalogRow[];
      try {
        rows = provider.listModels();
      } catch {
        return [];
      }
      return rows.map((row) => ({ provider: row.provider, model: row.model, nativeRuntime: "openworker" as const }));
    });
  }

  /**
   * The current readiness observation of one model (I1, seed 004's
   * `readModelCatalogReadiness`): `{ accountType }`, read synchronously with no I/O from
   * the provider that owns it, or `undefined` when there is none: an unknown provider or
   * model, an observation that fails, or a runtime closing or closed (a disposed
   * observation). Never execution authorization: every run-time check still applies.
   */
  readModelCatalogReadiness(params: { readonly provider: string; readonly model: string }): ModelReadiness | undefined {
    if (this.#closing) return undefined;
    const provider = (this.#options.models ?? []).find((candidate) => candidate.id === params?.provider);
    return provider === undefined ? undefined : observeReadiness(provider, params.model);
  }

  /** The read-only MCP tool inventory (I2, M5): live connections only; never starts a process. */
  mcpInventory(request?: McpInventoryRequest): McpToolInventory | undefined {
    return this.#bridge.inventory(request);
  }

  /**
   * Closes every session (revoking tools and ending MCP processes), verifies cleanup,
   * and closes the journal it opened. Rejects when cleanup could not be confirmed (M4).
   * Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const results = await Promise.allSettled([...this.#sessions].map((session) => session.close()));
    try {
      await this.#bridge.dispose();
      await this.#bridge.joinCleanup();
    } finally {
      await this.#closeJournal();
    }
    const failed = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
    if (failed) throw failed.reason;
  }

  /**
   * Commits what is queued, then closes the journal it opened. A failing commit (a file
   * gone or made read-only, a full disk) still closes it, and the flush's error is what
   * the host sees: left open, its connection and writer lock would outlive the runtime,
   * and a new runtime in this process could not open the file again (`JOURNAL_LOCKED`).
   */
  async #closeJournal(): Promise<void> {
    try {
      await this.journal.flush();
    } catch (error) {
      if (this.#ownsJournal) {
        try {
          await this.journal.close();
        } catch {
          // The same failure, met again by close's own commit: the flush's error stands.
        }
      }
      throw error;
    }
    if (this.#ownsJournal) await this.journal.close();
  }

  #assertOpen(): void {
    if (this.#closing) throw new OpenWorkerError(RUNTIME_ERROR_CODES.RUNTIME_CLOSED, "the runtime is closed; open a new one");
  }

  #hostDigest(): Promise<{ executableBytesDigest: string; nodeVersion: string }> {
    this.#host ??= hostExecutableDigest(this.#options.hostEntry ?? process.argv[1] ?? process.execPath);
    return this.#host;
  }

  #pickModel(choice: SessionOptions["model"]): { provider: ModelProvider | undefined; model: string | undefined } {
    const providers = this.#options.models ?? [];
    if (!choice?.provider) {
      const provider = providers[0];
      return { provider, model: choice?.model ?? provider?.defaultModel };
    }
    const provider = providers.find((candidate) => candidate.id === choice.provider);
    if (!provider) {
      throw new OpenWorkerError(
        RUNTIME_ERROR_CODES.MODEL_PROVIDER_UNKNOWN,
        `no model provider ${JSON.stringify(choice.provider)} is configured (configured: ${providers.map((candidate) => candidate.id).join(", ") || "none"})`,
      );
    }
    return { provider, model: choice.model ?? provider.defaultModel };
  }
}

/** A failing observation reads as no current observation (I1: readiness is never a gate). */
function observeReadiness(provider: ModelProvider, model: string): ModelReadiness | undefined {
  try {
    // Only `{ accountType }`, read once (seed 004): nothing else a provider adds travels on.
    const accountType = provider.readModelReadiness?.(model)?.accountType;
    return typeof accountType === "string" ? { accountType } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Session ids are journaled, shown and used in every turn and call id: 1–128 characters,
 * letters, digits and `._:-`, starting with a letter or digit (`ses_…`, UUIDs and ULIDs fit).
 */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * Whether `value` is a session id `openSession` accepts: 1–128 letters, digits and
 * `._:-`, starting with a letter or digit (it is journaled, and part of every turn and call
 * id). A front end checks its own input with it before a runtime opens.
 */
export function isSessionId(value: unknown): boolean {
  return typeof value === "string" && SESSION_ID.test(value);
}

/**
 * A random session id: `ses_` and 96 random bits in base64url (16 characters, 20 in all).
 * The id is written into every journal record and begins every turn and call id, so it
 * appears about nine times in a governed call's four records: `ses_` and a UUID (40
 * characters) made them about 180 bytes longer, and journaling costs per byte (hashing,
 * SQLite's pages): 32 sessions did about 6 % more calls a second with this id. 96 bits
 * keep a collision out of reach (about one in 10^17 for a million sessions), and the
 * journal refuses a repeated id rather than mix two sessions.
 */
function randomSessionId(): string {
  return `ses_${randomBytes(12).toString("base64url")}`;
}

function checkedSessionId(sessionId: string | undefined): string {
  if (sessionId === undefined) return randomSessionId();
  if (typeof sessionId !== "string" || !isSessionId(sessionId)) {
    const shown = typeof sessionId === "string" ? JSON.stringify(sessionId.length > 60 ? `${sessionId.slice(0, 60)}…` : sessionId) : typeof sessionId;
    throw optionInvalid(
      "sessionId",
      `${shown} is not a session id: use 1–128 letters, digits and . _ : - (starting with a letter or digit), or leave it out for a random one`,
    );
  }
  return sessionId;
}

function checkedCallTimeout(callTimeoutMs: number | undefined): number | undefined {
  if (callTimeoutMs === undefined) return undefined;
  if (typeof callTimeoutMs !== "number" || !Number.isFinite(callTimeoutMs) || callTimeoutMs <= 0) {
    throw optionInvalid("callTimeoutMs", `must be a positive number of milliseconds (it lowers the 75 s bound), got ${String(callTimeoutMs)}`);
  }
  return callTimeoutMs;
}

/** The approver's default time to answer (5 minutes). */
const APPROVAL_TIMEOUT_MS = 300_000;
/** The longest delay a Node.js timer keeps (2³¹ − 1 ms, about 24.8 days): a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The approver's time to answer, checked at open: a timer given `Infinity`, `NaN`, a
 * negative or anything past 2³¹ − 1 ms fires after 1 ms, and "no timeout" would deny every
 * asked call at once, saying no decision came in time.
 */
function checkedApprovalTimeout(approvalTimeoutMs: number | undefined): number {
  if (approvalTimeoutMs === undefined) return APPROVAL_TIMEOUT_MS;
  if (typeof approvalTimeoutMs !== "number" || !Number.isFinite(approvalTimeoutMs) || approvalTimeoutMs <= 0 || approvalTimeoutMs > MAX_TIMER_MS) {
    throw optionInvalid(
      "approvalTimeoutMs",
      `must be a positive number of milliseconds up to ${MAX_TIMER_MS} (about 24.8 days; leave it out for 5 minutes), got ${String(approvalTimeoutMs)}`,
    );
  }
  return approvalTimeoutMs;
}

/**
 * The MCP bridge for the registry's providers. The bridge refuses an option it cannot
 * use with a `RangeError` or `TypeError` naming `McpBridgeOptions.<field>`; the host gets
 * the runtime's `OPTIONS_INVALID` naming `mcp.<field>`, the option it passed. The bridge's
 * own coded errors pass as they are.
 */
function openBridge(registry: ToolRegistry, options: McpBridgeOptions | undefined): McpBridge {
  try {
    return new McpBridge(registry.providers(), options);
  } catch (error) {
    if (OpenWorkerError.isInstance(error) || !(error instanceof RangeError || error instanceof TypeError)) throw error;
    const field = /McpBridgeOptions\.(\w+)/.exec(error.message)?.[1];
    const option = field === undefined ? "mcp" : `mcp.${field}`;
    const problem = field === undefined ? error.message : error.message.replace(`McpBridgeOptions.${field}`, option);
    throw new OpenWorkerError(RUNTIME_ERROR_CODES.OPTIONS_INVALID, `runtime option ${problem}`, { details: { option }, cause: error });
  }
}

/**
 * The policy a session runs under: the host's, with the classification each native tool
 * the bundle selects was registered with (`register(tool, { classification })`) for the
 * tools the policy does not classify itself. It enters the execution identity as it is
 * applied (A2). Only selected tools' classifications join it: a tool the bundle does not
 * select (and every native tool, for a v1/v2 MCP-only bundle) cannot change the
 * session's identity, so registering or reclassifying it keeps remembered approvals.
 */
function withRegistryClassifications(policy: ApprovalPolicy, registry: ToolRegistry, bundle: Bundle): ApprovalPolicy {
  const { selection } = bundle;
  if (selection.version !== 3) return policy;
  const selected = new Set(selection.tools);
  let fromRegistry: Record<string, string> | undefined;
  for (const tool of registry.natives()) {
    if (tool.classification === undefined || !selected.has(tool.name) || policy.classifications?.[tool.name] !== undefined) continue;
    (fromRegistry ??= {})[tool.name] = tool.classification;
  }
  return fromRegistry === undefined ? policy : { ...policy, classifications: { ...fromRegistry, ...policy.classifications } };
}

/** The credentials the model providers were handed (E6: redacted like every other secret). */
function modelSecrets(providers: readonly ModelProvider[]): string[] {
  const secrets: string[] = [];
  for (const provider of providers) {
    let listed: readonly string[];
    try {
      listed = provider.secrets?.() ?? [];
    } catch (cause) {
      // Fail closed: a runtime that cannot know a provider's credentials cannot keep them out of what it writes.
      throw new OpenWorkerError(
        RUNTIME_ERROR_CODES.OPTIONS_INVALID,
        `model provider ${JSON.stringify(provider.id)}: secrets() failed, so its credentials could not be kept out of what the runtime writes; make secrets() return its credentials`,
        { cause },
      );
    }
    for (const secret of listed) if (typeof secret === "string" && secret !== "") secrets.push(secret);
  }
  return secrets;
}

/** An open journal (any store's) rather than where to open a SQLite one: it has the record methods. */
function isOpenJournal<J extends SessionJournal>(given: RuntimeOptions<J>["journal"]): given is J {
  return given instanceof Journal || (typeof given === "object" && given !== null && typeof (given as { callStarted?: unknown }).callStarted === "function");
}

/** `OPTIONS_INVALID` naming the option (`details.option`) and what is wrong with it. */
function optionInvalid(option: string, problem: string): OpenWorkerError {
  return new OpenWorkerError(RUNTIME_ERROR_CODES.OPTIONS_INVALID, `${option} ${problem}`, { details: { option } });
}
