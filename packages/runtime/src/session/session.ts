import { setMaxListeners } from "node:events";
import type { Bundle, ResolvedSelection } from "@openworker/bundle-resolver";
import { modelAlias, OpenWorkerError, type JsonValue, type Tool } from "@openworker/tools-sdk";
import type { ToolRegistry } from "@openworker/registry";
import { untilAborted } from "@openworker/tools-sdk/internal/execution";
import type { CallEnvironment } from "../call/environment.js";
import { releaseEach, type PendingImage, type ReleasedImage } from "../call/images.js";
import { runGovernedCall, type CallReport, type CallRequest } from "../call/pipeline.js";
import { RUNTIME_ERROR_CODES } from "../errors.js";
import type { RuntimeEventListener } from "../events.js";
import type { ModelMessage, ModelProvider } from "../model/types.js";
import type { SlowHooks } from "../turn/facts.js";
import { prepareTurn, unavailableRefusal, type PreparedTurn } from "../turn/prepare.js";
import { runTurn, settleTools, type SettledTool, type TurnResult } from "../turn/run-turn.js";
import { linkSignals } from "./linked-signal.js";

/** What a session is built from (made by `Runtime.openSession`). */
export interface SessionParts {
  readonly environment: CallEnvironment;
  readonly registry: ToolRegistry;
  readonly bundle: Bundle;
  readonly provider: ModelProvider | undefined;
  readonly model: string | undefined;
  readonly maxAttempts: number;
  readonly maxCallsPerAttempt: number;
  readonly modelContextBudgetMs: number;
  readonly onClosed: (session: Session) => void;
}

/**
 * One coworker session: a bundle, a policy and an execution identity fixed at open
 * (A2), a conversation, and the MCP processes it owns. Turns run one at a time; many
 * sessions run concurrently in one runtime without sharing mutable state.
 */
export class Session {
  readonly id: string;
  /** The execution identity approvals are bound to (A2). */
  readonly executionIdentity: string;
  readonly bundle: Bundle;
  readonly #parts: SessionParts;
  readonly #messages: ModelMessage[] = [];
  readonly #slowFacts: SlowHooks = { turn: new Set(), slowTurns: new Map() };
  #prepared: PreparedTurn | undefined;
  /** The host-driven preparation running now, if any: calls that need one share it. */
  #preparing: Promise<PreparedTurn> | undefined;
  #turn: AbortController | undefined;
  /**
   * Native tools whose settlement waits (T5), by qualified name: host calls that reached
   * the tool are still running, or a model turn is, and how the calls and turns that
   * ended meanwhile ended. Settled once nothing is using the tool.
   */
  readonly #hostCalls = new Map<string, HostCallsOfTool>();
  /** The id of the running turn, beside its controller. */
  #turnId: string | undefined;
  /**
   * Work running now (turns, calls, a prepare), and who waits for none to run: a count, not
   * a set of promises (adding to and deleting from a `Set` per call was a visible line of
   * the call path's profile).
   */
  #running = 0;
  #whenIdle: (() => void)[] = [];
  /** Aborted by close: ends host-driven calls still running. */
  readonly #closeSignal = new AbortController();
  #turns = 0;
  #calls = 0;
  #closing: Promise<void> | undefined;

  /** @internal Sessions are opened with `runtime.openSession()`; the parts are the runtime's own. */
  constructor(parts: SessionParts) {
    // Every concurrent host-driven call listens on this signal until it settles; many at
    // once are normal here, not a leak.
    setMaxListeners(0, this.#closeSignal.signal);
    this.#parts = parts;
    this.id = parts.environment.sessionId;
    this.executionIdentity = parts.environment.executionIdentity;
    this.bundle = parts.bundle;
  }

  /** Subscribes to this session's events; returns the unsubscribe function. */
  subscribe(listener: RuntimeEventListener): () => void {
    return this.#parts.environment.events.subscribe(listener);
  }

  /** The conversation so far (tool images are never kept here after delivery). */
  get messages(): readonly ModelMessage[] {
    return this.#messages;
  }

  /** The selection of the latest prepared turn, if any. */
  get selection(): ResolvedSelection | undefined {
    return this.#prepared?.selection;
  }

  /**
   * Runs one turn: the user's message, then model attempts and governed calls until the
   * model answers or the turn stops. Cancel it with `options.signal` or {@link cancel}.
   */
  async runTurn(input: string, options: { signal?: AbortSignal } = {}): Promise<TurnResult> {
    this.#assertOpen();
    if (this.#turn) throw new OpenWorkerError(RUNTIME_ERROR_CODES.TURN_IN_PROGRESS, `session ${this.id} is already running a turn; wait for it or cancel it`);
    const { provider, model } = this.#parts;
    if (!provider || !model) {
      throw new OpenWorkerError(RUNTIME_ERROR_CODES.MODEL_PROVIDER_UNKNOWN, "no model provider is configured for this session; pass `models` to the runtime");
    }
    const controller = new AbortController();
    const forward = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", forward, { once: true });
    if (options.signal?.aborted) controller.abort(options.signal.reason);
    this.#turn = controller;
    const turnId = `${this.id}.t${++this.#turns}`;
    this.#turnId = turnId;
    try {
      return await this.#track(
        runTurn(
          {
            environment: this.#parts.environment,
            registry: this.#parts.registry,
            bundle: this.bundle,
            provider,
            model,
            instructions: instructionsOf(this.bundle),
            maxAttempts: this.#parts.maxAttempts,
            maxCallsPerAttempt: this.#parts.maxCallsPerAttempt,
            modelContextBudgetMs: this.#parts.modelContextBudgetMs,
            messages: this.#messages,
            slowFacts: this.#slowFacts,
            nextCallId: () => this.#nextCallId(),
            selectedNatives: () => this.#selectedNatives(),
            onPrepared: (prepared) => void (this.#prepared = prepared),
            onEnded: () => {
              if (this.#turn === controller) this.#turn = undefined;
            },
            settle: (tools, reason, completed) => this.#settleAtTurnEnd(tools, reason, completed),
          },
          turnId,
          input,
          controller.signal,
        ),
      );
    } finally {
      options.signal?.removeEventListener("abort", forward);
      // A listener of `turn_finished` may have started the next turn already.
      if (this.#turn === controller) this.#turn = undefined;
    }
  }

  /**
   * Calls one selected tool directly, for host-driven calls (agentd's workflow tool
   * nodes), through the same pipeline as the model's calls: validation, approval,
   * journal and limits. Prepares the selection first when no turn has. `args` is read as
   * its JSON text (an interface-typed object, a `Date` as its ISO text); left out, `{}`.
   * `options.onProgress` is told each progress event the call's bounded reporter accepted
   * (E2), redacted as journaled: what a host forwards to its own client. `onElicitation`
   * answers what an MCP provider asks the user during this call (M9) in place of the
   * runtime's `elicitor`, which must be set for providers to be told they may ask.
   */
  callTool(
    qualifiedName: string,
    args?: JsonValue | object,
    options: { signal?: AbortSignal } & Pick<CallRequest, "onProgress" | "onElicitation"> = {},
  ): Promise<CallReport> {
    try {
      this.#assertOpen();
      if (typeof qualifiedName !== "string" || qualifiedName === "") {
        throw new OpenWorkerError(
          RUNTIME_ERROR_CODES.UNKNOWN_TOOL,
          `callTool needs a qualified tool name (namespace.tool), got ${typeof qualifiedName === "string" ? '""' : typeof qualifiedName}`,
        );
      }
    } catch (error) {
      return Promise.reject(error);
    }
    const { signal, release } = options.signal
      ? linkSignals(options.signal, this.#closeSignal.signal)
      : { signal: this.#closeSignal.signal, release: undefined };
    // Not `async`: a call is a hot path, and each async layer that returns a promise
    // costs its caller extra turns of the microtask queue.
    const prepared = this.#prepared;
    const alias = modelAlias(qualifiedName);
    // A tool whose provider could not be reached when the selection was prepared (a slow
    // start), or is not connected now (its process exited), is looked for again: the
    // latest preparation is not a verdict forever.
    const call =
      prepared !== undefined && this.#reachable(prepared, alias, qualifiedName)
        ? this.#callTool(prepared.selection, qualifiedName, alias, args, signal, undefined, options)
        : // The shared preparation runs on for the others; a caller who cancels stops waiting at once.
          untilAborted(this.#prepareShared(), signal).then((fresh) =>
            signal.aborted
              ? Promise.reject(signal.reason)
              : this.#callTool(fresh.selection, qualifiedName, alias, args, signal, unavailableRefusal(fresh, { qualifiedName }), options),
          );
    return this.#track(release === undefined ? call : call.finally(release));
  }

  /**
   * A call's images (`report.images`) for a host that delivers them elsewhere than to the
   * model (`serve --mcp`, to its client), each after its consent recheck right before
   * delivery (T4), as model delivery does: in order, each delivered or withheld with the
   * note that says why (also announced as an `IMAGE_WITHHELD` diagnostic).
   */
  async releaseImages(images: readonly PendingImage[], options: { signal?: AbortSignal } = {}): Promise<ReleasedImage[]> {
    if (images.length === 0) return [];
    const { signal, release } = options.signal
      ? linkSignals(options.signal, this.#closeSignal.signal)
      : { signal: this.#closeSignal.signal, release: undefined };
    try {
      const released = await releaseEach(images, signal);
      const { events, sessionId } = this.#parts.environment;
      for (const item of released)
        if ("withheld" in item) events.emit({ type: "diagnostic", sessionId, code: RUNTIME_ERROR_CODES.IMAGE_WITHHELD, message: item.withheld });
      return released;
    } finally {
      release?.();
    }
  }

  /**
   * Whether an MCP provider of the latest prepared selection announced a change to its
   * tools since it was listed (M3): the next call or {@link prepare} discovers it again,
   * and a changed tool is approved again. False before the first preparation.
   */
  catalogChanged(): boolean {
    const prepared = this.#prepared;
    if (prepared === undefined) return false;
    const { mcp } = this.#parts.environment;
    for (const tool of prepared.selection.tools) if (tool.kind === "mcp" && mcp.catalogChanged(tool.provider.namespace)) return true;
    return false;
  }

  /**
   * False when the tool's MCP provider was unavailable at `prepared`, is not connected now
   * (its process exited), or announced a change to its tools since `prepared` listed them:
   * a changed tool is discovered again, and so approved again (M3), before it is called.
   */
  #reachable(prepared: PreparedTurn, alias: string, qualifiedName: string): boolean {
    const tool = prepared.selection.byAlias(alias);
    if (tool === undefined) return unavailableRefusal(prepared, { qualifiedName }) === undefined;
    if (tool.kind !== "mcp") return true;
    const { mcp } = this.#parts.environment;
    const namespace = tool.provider.namespace;
    return mcp.connected(namespace) && !mcp.catalogChanged(namespace);
  }

  #callTool(
    selection: ResolvedSelection,
    qualifiedName: string,
    alias: string,
    args: JsonValue | object | undefined,
    signal: AbortSignal,
    refusal: CallRequest["refusal"],
    hooks: Pick<CallRequest, "onProgress" | "onElicitation">,
  ): Promise<CallReport> {
    const turnId = `${this.id}.h${++this.#turns}`;
    // A host call is a turn of its own (T5): when it ends, the tool it called is settled
    // as at a turn's end (`turnFinished`, by default revoke), and revoked directly when it
    // was cancelled. Only that tool: the others took no part in it.
    const resolved = selection.byAlias(alias);
    const settled = resolved?.kind === "native" && resolved.qualifiedName === qualifiedName && hasSettleHooks(resolved.tool) ? resolved.tool : undefined;
    const request: { -readonly [K in keyof CallRequest]: CallRequest[K] } = {
      turnId,
      callId: this.#nextCallId(),
      alias,
      qualifiedName,
      args: { json: args },
      signal,
    };
    if (refusal !== undefined) request.refusal = refusal;
    for (const hook of ["onProgress", "onElicitation"] as const) if (hooks[hook] !== undefined) request[hook] = hooks[hook] as never;
    if (settled === undefined) return runGovernedCall(this.#parts.environment, selection, request);
    // Counted from its approval: a call refused, denied or still waiting for a person has
    // not reached the tool, and must not hold back the settlement of calls that did.
    let reached = false;
    const onApproved = () => {
      reached = true;
      this.#hostCallReached(qualifiedName);
    };
    const call = runGovernedCall(this.#parts.environment, selection, { ...request, onApproved });
    return call.then(
      (report) => {
        if (reached) this.#hostCallEnded(settled, qualifiedName, { cancelled: report.outcome === "cancelled", completed: report.outcome === "succeeded" });
        return report;
      },
      (error: unknown) => {
        // The journal failed under the call: what it did is unknown, so it ends incomplete.
        if (reached) this.#hostCallEnded(settled, qualifiedName, { cancelled: false, completed: false });
        throw error;
      },
    );
  }

  #hostCallReached(qualifiedName: string): void {
    const waiting = this.#hostCalls.get(qualifiedName);
    if (waiting) waiting.running += 1;
    else this.#hostCalls.set(qualifiedName, { running: 1, ended: undefined });
  }

  /**
   * A host call that reached a native tool ended. The tool is settled once no other such
   * call runs and no model turn does (a turn's end settles it then, see
   * {@link #settleAtTurnEnd}), as the calls and turns together ended: revoked directly if
   * one was cancelled, `turnFinished(…, true)` only if all completed. A tool is never
   * revoked under a call still using it.
   */
  #hostCallEnded(tool: Tool, qualifiedName: string, ending: HostCallEnding): void {
    const waiting = this.#hostCalls.get(qualifiedName);
    if (waiting === undefined) return;
    waiting.running -= 1;
    waiting.ended = joinEndings(waiting.ended, ending);
    if (waiting.running > 0 || this.#turn !== undefined) return;
    this.#hostCalls.delete(qualifiedName);
    const { environment } = this.#parts;
    settleTools({ environment }, [{ qualifiedName, tool }], waiting.ended.cancelled ? "cancel" : "turn", waiting.ended.completed);
  }

  /**
   * A model turn's end settles its tools (T5), except those host calls still use: their
   * last call's end settles them, the turn's ending joined to theirs. A tool whose host
   * calls ended while the turn ran is settled now, their endings joined to the turn's.
   */
  #settleAtTurnEnd(tools: readonly SettledTool[], reason: "turn" | "cancel", completed: boolean): void {
    const { environment } = this.#parts;
    const turn: HostCallEnding = { cancelled: reason === "cancel", completed };
    // One tool at a time, looked up just before it is settled: a hook of one tool may start
    // a host call of the next (approved at once by a standing rule), which it must not revoke.
    for (const tool of tools) {
      const waiting = this.#hostCalls.get(tool.qualifiedName);
      if (waiting === undefined) {
        settleTools({ environment }, [tool], reason, completed);
        continue;
      }
      waiting.ended = joinEndings(waiting.ended, turn);
      if (waiting.running > 0) continue;
      this.#hostCalls.delete(tool.qualifiedName);
      settleTools({ environment }, [tool], waiting.ended.cancelled ? "cancel" : "turn", waiting.ended.completed);
    }
  }

  /**
   * One preparation for every host-driven call that needs it now (32 concurrent first
   * calls discover once, not 32 times). It runs under the session's signal, not a
   * caller's: one caller cancelling does not fail the others' preparation.
   */
  #prepareShared(): Promise<PreparedTurn> {
    if (this.#preparing === undefined) {
      // Tracked on its own: a caller who cancels stops waiting for it, and close must still
      // wait for it, or a preparation landing after close would leave its tools unrevoked (T5).
      this.#preparing = this.#track(
        this.#prepareTurn(this.#closeSignal.signal).finally(() => {
          this.#preparing = undefined;
        }),
      );
    }
    return this.#preparing;
  }

  /**
   * Prepares the session's selection now, as a turn would (M2): discovers the needed MCP
   * catalogs and resolves exactly the bundle's tools. Hosts use it to list or serve the
   * tools before any turn; host-driven calls use the latest preparation. Throws the first
   * resolution problem (a missing tool, an invalid schema, an alias collision).
   */
  prepare(options: { signal?: AbortSignal } = {}): Promise<ResolvedSelection> {
    try {
      this.#assertOpen();
    } catch (error) {
      return Promise.reject(error);
    }
    if (!options.signal) return this.#track(this.#prepareTurn(this.#closeSignal.signal).then((prepared) => prepared.selection));
    const { signal, release } = linkSignals(options.signal, this.#closeSignal.signal);
    return this.#track(
      this.#prepareTurn(signal)
        .then((prepared) => prepared.selection)
        .finally(release),
    );
  }

  async #prepareTurn(signal: AbortSignal): Promise<PreparedTurn> {
    const turnId = `${this.id}.p${++this.#turns}`;
    const { environment, registry } = this.#parts;
    this.#prepared = await prepareTurn({ environment, registry, bundle: this.bundle, turnId, maxToolNameLength: undefined, signal });
    return this.#prepared;
  }

  /**
   * The bundle's native tools, by exact name (N7): revoking needs no validator, so no
   * schema is compiled at close, and one tool that would not resolve cannot keep the
   * others from being revoked.
   */
  #selectedNatives(): SettledTool[] {
    const { selection } = this.bundle;
    if (selection.version !== 3) return [];
    const { registry } = this.#parts;
    return selection.tools.flatMap((qualifiedName) => {
      const registered = registry.get(qualifiedName);
      return registered ? [{ qualifiedName, tool: registered.tool }] : [];
    });
  }

  /**
   * Cancels the running turn, if any: its call is abandoned, tools are revoked (T5).
   * With `options.turnId` (from `turn_started`, or a `TurnResult`), only that turn: a
   * stop pressed as one turn ends cannot cancel the next one. Returns whether a turn was
   * cancelled.
   */
  cancel(reason = "cancelled by the host", options: { turnId?: string } = {}): boolean {
    const turn = this.#turn;
    if (turn === undefined || turn.signal.aborted) return false;
    if (options.turnId !== undefined && options.turnId !== this.#turnId) return false;
    turn.abort(new OpenWorkerError("TURN_CANCELLED", reason));
    return true;
  }

  /**
   * Closes the session: cancels a running turn, revokes every selected native tool (T5),
   * ends the MCP processes it owns and verifies they are gone (M4), and journals the
   * close. Rejects when process cleanup could not be confirmed. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.cancel("the session is closing");
    this.#closeSignal.abort(new OpenWorkerError(RUNTIME_ERROR_CODES.SESSION_CLOSED, "the session is closing"));
    // Cancelled work settles at once (abandoned calls are not awaited): wait for its terminal records.
    if (this.#running > 0) await new Promise<void>((resolve) => this.#whenIdle.push(resolve));
    const { environment } = this.#parts;
    // T5: close revokes every selected native tool, prepared or not (a preparation the
    // close cancelled never landed, and a tool's access may predate this process's turns).
    settleTools({ environment }, this.#selectedNatives(), "close", false);
    try {
      await environment.mcp.close();
      await environment.mcp.joinCleanup();
    } finally {
      try {
        environment.journal.sessionClosed({ sessionId: this.id });
        await environment.journal.flush();
      } finally {
        // Even when the journal refuses the close, the runtime forgets the session: its close is not retried forever.
        this.#parts.onClosed(this);
      }
    }
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#running += 1;
    work.then(this.#untracked, this.#untracked);
    return work;
  }

  // Made once per session, not per call.
  readonly #untracked = (): void => this.#untrack();

  #untrack(): void {
    this.#running -= 1;
    if (this.#running === 0 && this.#whenIdle.length > 0) for (const resolve of this.#whenIdle.splice(0)) resolve();
  }

  #nextCallId(): string {
    return `${this.id}.c${++this.#calls}`;
  }

  #assertOpen(): void {
    if (this.#closing) throw new OpenWorkerError(RUNTIME_ERROR_CODES.SESSION_CLOSED, `session ${this.id} is closed; open a new session`);
  }
}

function instructionsOf(bundle: Bundle): string {
  const { manifest } = bundle;
  const parts = [manifest.instructions.trim()];
  for (const skill of manifest.skills) parts.push(`## Skill: ${skill.name}\n\n${skill.instructions.trim()}`);
  return parts.filter(Boolean).join("\n\n");
}

/** Whether a tool has a hook a turn's end calls (a getter that throws counts as one: `settleTools` reports it). */
function hasSettleHooks(tool: Tool): boolean {
  try {
    return typeof tool.turnFinished === "function" || typeof tool.revoke === "function";
  } catch {
    return true;
  }
}

/** How a host call that reached its tool ended. */
interface HostCallEnding {
  readonly cancelled: boolean;
  readonly completed: boolean;
}

/** The host calls of one native tool that reached it and are running, and how the calls (and turns) that ended meanwhile ended. */
interface HostCallsOfTool {
  running: number;
  ended: HostCallEnding | undefined;
}

/** Two endings as one: cancelled if either was, completed only if both were. */
function joinEndings(before: HostCallEnding | undefined, ending: HostCallEnding): HostCallEnding {
  return before === undefined ? ending : { cancelled: before.cancelled || ending.cancelled, completed: before.completed && ending.completed };
}
