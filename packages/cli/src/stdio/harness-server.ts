import type { ApprovalAnswer, ApprovalPolicy, ApprovalRequest, CallReport, Runtime, Session, TurnResult } from "@openworker/runtime";
import type { JsonValue } from "@openworker/tools-sdk";
import { isObject } from "../setup/files.js";
import { parsePolicy } from "../setup/policy.js";
import { JSON_RPC_ERRORS, JsonRpcPeer, rpcError } from "./json-rpc.js";

/**
 * The methods `serve --stdio` answers (see the README for params and results).
 *
 * @example
 * ```ts
 * HARNESS_METHODS.includes("turn.run"); // true
 * ```
 */
export const HARNESS_METHODS = Object.freeze([
  "session.open",
  "turn.run",
  "turn.cancel",
  "call",
  "session.close",
  "inventory.mcp",
  "models.list",
  "models.readiness",
  "shutdown",
] as const);

/**
 * The harness side of `serve --stdio`: one runtime, any number of sessions, driven by a
 * host application over JSON-RPC. Runtime events go to the host as `event`
 * notifications; approvals the policy leaves to a person go to the host as
 * `approval.request` requests, and anything but `{approved: true}` denies (fail closed).
 *
 * It ends when stdin closes, on `shutdown`, or when `signal` aborts (SIGTERM, Ctrl-C).
 * Requests already received are answered first (a stop by signal cancels running turns
 * first); requests that arrive after that are refused with `HARNESS_SHUTTING_DOWN`.
 * Only then does the runtime close.
 */
export class HarnessServer {
  readonly #sessions = new Map<string, Session>();
  readonly #peer: JsonRpcPeer;
  readonly #runtime: Promise<Runtime>;
  readonly #inFlight = new Set<Promise<unknown>>();
  #stopping = false;
  #stop: () => void = () => undefined;
  /** Settles once the harness stopped, every request it took was answered, and the runtime closed: sessions, MCP processes, journal. */
  readonly finished: Promise<void>;

  constructor(
    input: NodeJS.ReadableStream,
    output: NodeJS.WritableStream,
    openRuntime: (approve: (request: ApprovalRequest) => Promise<ApprovalAnswer>) => Promise<Runtime>,
    signal?: AbortSignal,
  ) {
    const stopped = new Promise<void>((resolve) => (this.#stop = resolve));
    signal?.addEventListener("abort", () => this.#stop(), { once: true });
    if (signal?.aborted) this.#stop();
    const peer = new JsonRpcPeer(input, output, {
      request: (method, params) => this.#accept(method, params),
      notification: () => undefined,
    });
    this.#peer = peer;
    const opening = openRuntime((request) => this.#askHost(request));
    this.#runtime = opening;
    this.finished = (async () => {
      const runtime = await opening;
      await Promise.race([peer.closed, stopped]);
      this.#stopping = true;
      if (signal?.aborted) {
        const why = (signal.reason as Error | undefined)?.message ?? "the harness is stopping";
        for (const session of this.#sessions.values()) session.cancel(why);
      }
      while (this.#inFlight.size > 0) await Promise.allSettled(this.#inFlight);
      await runtime.close();
    })();
  }

  #accept(method: string, params: unknown): Promise<unknown> {
    if (this.#stopping) {
      return Promise.reject(rpcError(JSON_RPC_ERRORS.SERVER_ERROR, "HARNESS_SHUTTING_DOWN", `the harness is shutting down and takes no new requests (${method} refused)`));
    }
    // Requests after a `shutdown` (even on the same read) are refused, not raced against the close.
    if (method === "shutdown") this.#stopping = true;
    const work = this.#handle(method, params);
    this.#inFlight.add(work);
    const done = () => void this.#inFlight.delete(work);
    work.then(done, done);
    return work;
  }

  async #handle(method: string, params: unknown): Promise<unknown> {
    const runtime = await this.#runtime;
    const input = isObject(params) ? params : {};
    switch (method) {
      case "session.open":
        return this.#openSession(runtime, input);
      case "turn.run": {
        const session = this.#session(input);
        return turnJson(await session.runTurn(text(input, "text")));
      }
      case "turn.cancel": {
        const reason = typeof input.reason === "string" ? input.reason : "cancelled by the host";
        const turnId = input.turnId === undefined ? undefined : text(input, "turnId");
        return { cancelled: this.#session(input).cancel(reason, turnId === undefined ? {} : { turnId }) };
      }
      case "call": {
        const session = this.#session(input);
        return callJson(await session.callTool(text(input, "name"), (input.arguments ?? {}) as JsonValue));
      }
      case "session.close": {
        const session = this.#session(input);
        this.#sessions.delete(session.id);
        await session.close();
        return { closed: true };
      }
      case "inventory.mcp":
        return runtime.mcpInventory(typeof input.sessionId === "string" ? { sessionId: input.sessionId } : {}) ?? null;
      case "models.list":
        return runtime.loadModelCatalog();
      case "models.readiness": {
        if (typeof input.provider !== "string" || typeof input.model !== "string") {
          throw rpcError(JSON_RPC_ERRORS.INVALID_PARAMS, "PARAMS_INVALID", "models.readiness needs params {provider: string, model: string}");
        }
        return runtime.readModelCatalogReadiness({ provider: input.provider, model: input.model }) ?? null;
      }
      case "shutdown":
        setImmediate(() => this.#stop());
        return { shuttingDown: true };
      default:
        throw rpcError(JSON_RPC_ERRORS.METHOD_NOT_FOUND, "METHOD_NOT_FOUND", `unknown method ${JSON.stringify(method)}; methods: ${HARNESS_METHODS.join(", ")}`);
    }
  }

  async #openSession(runtime: Runtime, input: Record<string, unknown>): Promise<unknown> {
    const policy: ApprovalPolicy = input.policy === undefined ? {} : parsePolicy(input.policy, "session.open params.policy");
    const model = isObject(input.model) ? (input.model as { provider?: string; model?: string }) : undefined;
    const session = await runtime.openSession({
      bundle: text(input, "bundle"),
      policy,
      ...(model ? { model } : {}),
      ...(typeof input.sessionId === "string" ? { sessionId: input.sessionId } : {}),
      ...(typeof input.workspace === "string" ? { workspace: input.workspace } : {}),
    });
    this.#sessions.set(session.id, session);
    session.subscribe((event) => this.#peer.notify("event", { event }));
    return { sessionId: session.id, executionIdentity: session.executionIdentity, coworker: session.bundle.manifest.name, bundleDir: session.bundle.dir };
  }

  #session(input: Record<string, unknown>): Session {
    const sessionId = text(input, "sessionId");
    const session = this.#sessions.get(sessionId);
    if (!session) throw rpcError(JSON_RPC_ERRORS.INVALID_PARAMS, "SESSION_UNKNOWN", `no open session ${JSON.stringify(sessionId)}; open one with session.open`);
    return session;
  }

  async #askHost(request: ApprovalRequest): Promise<ApprovalAnswer> {
    const { signal, ...question } = request;
    const answer = await this.#peer.request("approval.request", question, signal);
    if (!isObject(answer) || answer.approved !== true) {
      const reason = isObject(answer) && typeof answer.reason === "string" ? answer.reason : "the host did not approve";
      return { approved: false, reason, ...(isObject(answer) && typeof answer.who === "string" ? { who: answer.who } : {}) };
    }
    return {
      approved: true,
      scope: answer.scope === "session" ? "session" : "once",
      ...(typeof answer.who === "string" ? { who: answer.who } : { who: "host" }),
    };
  }
}

function text(input: Record<string, unknown>, field: string): string {
  const value = input[field];
  if (typeof value !== "string" || value === "") throw rpcError(JSON_RPC_ERRORS.INVALID_PARAMS, "PARAMS_INVALID", `params.${field} must be a non-empty string`);
  return value;
}

/** A call report as JSON: images stay in the harness (T4: they go only to the model). */
function callJson(report: CallReport): Omit<CallReport, "images"> & { images: number } {
  const { images, ...rest } = report;
  return { ...rest, images: images.length };
}

function turnJson(result: TurnResult): unknown {
  return { ...result, calls: result.calls.map(callJson) };
}
